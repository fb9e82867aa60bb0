"""Grading side: one package per family with executable checks; never imports pbsolve.models."""
