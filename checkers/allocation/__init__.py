"""Allocation & Matching checkers: procurement, material allocation, educational
resources and student grouping. One :class:`TaskChecker` per task type; the grading
flow and the answer contract are the core's (:mod:`pbsolve.checking`)."""

from __future__ import annotations

from pbsolve.checker_kit import FamilyChecker
from pbsolve.checkers.allocation.common import TaskChecker
from pbsolve.checkers.allocation.education import TASK as EDUCATION
from pbsolve.checkers.allocation.grouping import TASK as GROUPING
from pbsolve.checkers.allocation.material import TASK as MATERIAL
from pbsolve.checkers.allocation.procurement import TASK as PROCUREMENT

TASKS: dict[str, TaskChecker] = {tc.task: tc for tc in (PROCUREMENT, MATERIAL, EDUCATION, GROUPING)}


FAMILY_CHECKER = FamilyChecker(TASKS)
task_checker = FAMILY_CHECKER.task_checker
check_answer = FAMILY_CHECKER.check_answer
answer_schema = FAMILY_CHECKER.answer_schema
format_text = FAMILY_CHECKER.format_text
known_kinds = FAMILY_CHECKER.known_kinds
read_data = FAMILY_CHECKER.read_data
baseline_answer = FAMILY_CHECKER.baseline_answer

__all__ = [
    "TASKS",
    "answer_schema",
    "baseline_answer",
    "check_answer",
    "format_text",
    "known_kinds",
    "read_data",
    "task_checker",
]
