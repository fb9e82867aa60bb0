"""Solver side: one package per family, each exposing ``FAMILY`` (see pbsolve.family)."""
