"""Scheduling & Timetabling checkers."""

from pbsolve.checkers.scheduling import (
    calendar_checks,  # noqa: F401  (registers the calendar checks)
    content,  # noqa: F401  (registers the embargo)
    day_spacing,  # noqa: F401  (registers the day-spacing kinds)
    places,  # noqa: F401  (registers the place checks)
    stateful,  # noqa: F401  (registers the stateful checks)
)
from pbsolve.checkers.scheduling.checks import (
    TIMETABLE,
    answer_schema,
    baseline_answer,
    check_answer,
    format_text,
)
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.checkers.scheduling.near_miss import near_misses  # noqa: F401  (the `pbsolve perturb` hook)
from pbsolve.params import ParamsTable
from pbsolve.schema import Instance


def known_kinds(task: str) -> tuple[ParamsTable, ParamsTable]:
    """The rule kinds and objective kinds this checker can judge, each with its parameter
    model (every timetabling task shares them); the grader refuses instances that use
    other kinds or whose parameters do not fit."""
    return TIMETABLE.known_kinds()


def read_data(instance: Instance) -> TimetableData:
    """The instance's data as the checker reads it; raises if it is not timetable data."""
    return TimetableData.model_validate(instance.data)


__all__ = ["answer_schema", "baseline_answer", "check_answer", "format_text", "known_kinds", "read_data"]
