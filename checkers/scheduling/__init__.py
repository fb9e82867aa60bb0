"""Scheduling & Timetabling checkers."""

from pbsolve.checkers.scheduling import stateful  # noqa: F401  (registers the stateful checks)
from pbsolve.checkers.scheduling.checks import answer_schema, baseline_answer, check_answer
from pbsolve.checkers.scheduling.near_miss import near_misses  # noqa: F401  (the `pbsolve perturb` hook)

__all__ = ["answer_schema", "baseline_answer", "check_answer"]
