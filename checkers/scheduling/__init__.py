"""Scheduling & Timetabling checkers."""

from pbsolve.checkers.scheduling import stateful  # noqa: F401  (registers the stateful checks)
from pbsolve.checkers.scheduling.checks import answer_schema, baseline_answer, check_answer

__all__ = ["answer_schema", "baseline_answer", "check_answer"]
