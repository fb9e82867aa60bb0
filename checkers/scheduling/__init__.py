"""Scheduling & Timetabling checkers."""

from pbsolve.checkers.scheduling.checks import answer_schema, baseline_answer, check_answer

__all__ = ["answer_schema", "baseline_answer", "check_answer"]
