"""Allocation & Matching checkers: procurement, material allocation, educational
resources and student grouping. One :class:`TaskChecker` per task type; the grading
flow and the answer contract are the core's (:mod:`pbsolve.checking`)."""

from __future__ import annotations

from typing import Any

from pbsolve import checking
from pbsolve.checkers.allocation import common
from pbsolve.checkers.allocation.common import TaskChecker, Verdict
from pbsolve.checkers.allocation.education import TASK as EDUCATION
from pbsolve.checkers.allocation.grouping import TASK as GROUPING
from pbsolve.checkers.allocation.material import TASK as MATERIAL
from pbsolve.checkers.allocation.procurement import TASK as PROCUREMENT
from pbsolve.params import ParamsTable
from pbsolve.schema import Instance, ObjectiveTerm, Recovery, Rule

TASKS: dict[str, TaskChecker] = {tc.task: tc for tc in (PROCUREMENT, MATERIAL, EDUCATION, GROUPING)}


def task_checker(task: str) -> TaskChecker:
    return TASKS[task]


def check_answer(instance: Instance, answer: Any) -> dict[str, Verdict]:
    return checking.check_answer(TASKS[instance.task], instance, answer)


def answer_schema(
    task: str,
    data: dict[str, Any],
    objective: list[ObjectiveTerm],
    mechanisms: list[str] | None = None,
    recovery: Recovery | None = None,
    rules: list[Rule] | None = None,
) -> dict[str, Any]:
    """The answer schema of an instance of ``task`` (a KeyError for a task this family does not have)."""
    tc = TASKS[task]
    return checking.answer_schema(tc, tc.data_type.model_validate(data), objective, mechanisms, recovery, rules)


def format_text(task: str) -> str:
    """What a complete plan of this task type is, in the words of the format item."""
    return TASKS[task].plan_text


def known_kinds(task: str) -> tuple[ParamsTable, ParamsTable]:
    """The rule kinds and objective kinds the task type's checker can judge, each with its
    parameter model; KeyError for a task this family does not have. The grader refuses
    instances that use other kinds or whose parameters do not fit."""
    return TASKS[task].known_kinds()


def read_data(instance: Instance) -> Any:
    """The instance's data as its task type's checker reads it; raises if the data is not
    that task type's (an unknown task is a KeyError)."""
    return TASKS[instance.task].data_type.model_validate(instance.data)


def baseline_answer(instance: Instance) -> str:
    return common.baseline_answer(TASKS[instance.task], instance)


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
