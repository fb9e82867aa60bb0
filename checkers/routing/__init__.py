"""Checkers of the Routing & Travel family: one :class:`~pbsolve.checker_kit.PlanChecker`
per task type (each module's ``TASK``), found by :func:`pbsolve.kit.task_modules`; the
grading flow and the answer contract are the core's (:mod:`pbsolve.checking`). Nothing
here imports the solver models."""

from __future__ import annotations

from pbsolve.checker_kit import FamilyChecker, PlanChecker
from pbsolve.kit import task_modules

TASKS: dict[str, PlanChecker] = {m.TASK.task: m.TASK for m in task_modules(__name__, "TASK")}

FAMILY_CHECKER = FamilyChecker(TASKS)
task_checker = FAMILY_CHECKER.task_checker
check_answer = FAMILY_CHECKER.check_answer
answer_schema = FAMILY_CHECKER.answer_schema
format_text = FAMILY_CHECKER.format_text
known_kinds = FAMILY_CHECKER.known_kinds
read_data = FAMILY_CHECKER.read_data
baseline_answer = FAMILY_CHECKER.baseline_answer
near_misses = FAMILY_CHECKER.near_misses  # the `pbsolve perturb` hook (task checkers' single moves)

__all__ = [
    "TASKS",
    "answer_schema",
    "baseline_answer",
    "check_answer",
    "format_text",
    "known_kinds",
    "near_misses",
    "read_data",
    "task_checker",
]
