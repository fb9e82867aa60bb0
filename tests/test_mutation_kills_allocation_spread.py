"""Allocation verdicts the mutation campaign mutG found unguarded, one behaviour each.

Educational Resource Planning's load_balance hands its loads to the kit's spread_verdict
with its own words ("teaches", "lessons"); the reason a person reads is built from them,
so the tests hold the whole reason. Each test judges a hand-built timetable small enough
to read, through the registered rule check.
"""

from __future__ import annotations

from pbsolve.checkers.allocation import education as ed
from pbsolve.checkers.allocation import rule_params as rp


# == Educational Resource Planning ============================================================
def _school() -> ed.EducationData:
    """One day of two slots, two maths teachers, one room, two lessons."""
    return ed.EducationData.model_validate({
        "slots": [{"id": "Mon 1", "day": 0}, {"id": "Mon 2", "day": 0}],
        "teachers": [{"id": "Ada", "subjects": {"maths": 0}}, {"id": "Ben", "subjects": {"maths": 0}}],
        "rooms": [{"id": "R1", "seats": 30, "cost": 0}],
        "lessons": [
            {"id": "L1", "name": "Algebra", "subject": "maths", "group": "7A", "size": 20, "slot": "Mon 1"},
            {"id": "L2", "name": "Geometry", "subject": "maths", "group": "7A", "size": 20, "slot": "Mon 2"},
        ],
    })  # fmt: skip


def test_the_load_balance_reason_names_the_busiest_and_least_busy_teacher_with_their_lessons() -> None:
    plan = ed.Plan({"L1": ("Ada", "R1"), "L2": ("Ada", "R1")})
    assert ed.CHECKS["load_balance"](_school(), plan, rp.LoadBalance(max=1)) == (
        False,
        "Ada teaches 2 lessons and Ben 0: more than 1 apart",
    )
