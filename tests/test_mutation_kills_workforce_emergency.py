"""Grading behaviours held for the mutation campaign over the workforce and emergency
checkers rewritten for speed (inline reads of rows spelled as the instance spells them,
per-plan caches, checks bound once), one behaviour each.

Each test judges a small hand-written data model directly through the checker's own
tables (its rule checks, its plan reader), so it runs in milliseconds for every mutant.
The survivors argued equivalent are in scripts/mutation_equivalents.toml.
"""

from __future__ import annotations

from typing import Any

import pytest

from pbsolve.checkers.workforce import shift_duty as sd
from pbsolve.checkers.workforce import volunteer as vs
from pbsolve.params import NoParams


# == Shift & Duty Scheduling ==================================================================
def _ward() -> sd.ShiftDutyData:
    """Two days, two shifts, three staff; Ada and Cleo hold the triage skill."""
    return sd.ShiftDutyData.model_validate({
        "days": [{"id": "Fri"}, {"id": "Sat", "weekend": True}],
        "shifts": [{"id": "Early", "start": 6, "hours": 8}, {"id": "Night", "start": 22, "hours": 8}],
        "staff": [{"id": "Ada", "wage": 10, "skills": ["triage"]}, {"id": "Bram", "wage": 12},
                  {"id": "Cleo", "wage": 15, "skills": ["triage"]}],
        "cover": [{"day": "Fri", "shift": "Early", "need": 1}, {"day": "Sat", "shift": "Night", "need": 1}],
    })  # fmt: skip


def test_the_coverage_reason_names_the_short_shift_by_its_day_and_shift() -> None:
    plan = sd.Plan({"Ada": {"Fri": "Early"}})
    assert sd.CHECKS["coverage"](_ward(), plan, NoParams()) == (False, "Sat Night has 0 staff; it needs 1")


def test_the_skill_cover_reason_names_the_short_shift_by_its_day_and_shift() -> None:
    plan = sd.Plan({"Bram": {"Sat": "Night"}, "Ada": {"Fri": "Early"}})
    p = sd.SkillCover(skill="triage", min=1, slots=[("Fri", "Early"), ("Sat", "Night")])
    assert sd.CHECKS["skill_cover"](_ward(), plan, p) == (
        False,
        "Sat Night has 0 staff with skill triage; it needs 1",
    )


def test_the_absence_cover_reason_names_the_shift_left_short_by_its_day_and_shift() -> None:
    plan = sd.Plan({"Ada": {"Fri": "Early"}, "Bram": {"Fri": "Early", "Sat": "Night"}, "Cleo": {"Sat": "Night"}})
    assert sd.CHECKS["absence_cover"](_ward(), plan, NoParams()) == (True, "holds")
    alone = sd.Plan({"Ada": {"Fri": "Early"}, "Bram": {"Fri": "Early", "Sat": "Night"}})
    assert sd.CHECKS["absence_cover"](_ward(), alone, NoParams()) == (
        False,
        "if Bram were absent, Sat Night would have 0 of 1",
    )


# Other spellings of an entry's own field names: upper case, capitalised, and marked.
DECOY_FIELDS = ["PERSON", "Person", "XXpersonXX", "DAY", "Day", "XXdayXX", "SHIFT", "Shift", "XXshiftXX"]


@pytest.mark.parametrize("decoy", DECOY_FIELDS)
def test_a_roster_entry_is_read_from_its_own_field_names_and_a_look_alike_field_is_ignored(decoy: str) -> None:
    """The look-alike field names another listed person, day or shift than the entry's
    own field: the entry reads exactly as without it."""
    ward = _ward()
    lk = sd.TASK.lookups(ward)
    own: dict[str, Any] = {"person": "Ada", "day": "Fri", "shift": "Early"}
    other = {"person": "Bram", "day": "Sat", "shift": "Night"}[decoy.strip("X").lower()]
    plan, why = sd.TASK.read_plan(ward, {"roster": [{**own, decoy: other}]}, lk, [])
    assert why == "complete plan"
    assert plan == sd.Plan({"Ada": {"Fri": "Early"}})


# == Volunteer Scheduling =====================================================================
def _event() -> vs.VolunteerData:
    """Two shifts of one day, two posts, two volunteers."""
    return vs.VolunteerData.model_validate({
        "shifts": [{"id": "S1", "day": 0}, {"id": "S2", "day": 0}],
        "posts": [{"id": "Gate", "need": 1}, {"id": "First Aid", "need": 0}],
        "volunteers": [{"id": "Ana", "prefs": {"Gate": 0, "First Aid": 1}},
                       {"id": "Ben", "prefs": {"Gate": 1, "First Aid": 0}}],
    })  # fmt: skip


def _read_roster(rows: list[Any]) -> tuple[vs.Plan | None, str]:
    event = _event()
    return vs.TASK.read_plan(event, {"roster": rows}, vs.TASK.lookups(event), [])


VOLUNTEER_DECOYS = [
    "VOLUNTEER",
    "Volunteer",
    "XXvolunteerXX",
    "SHIFT",
    "Shift",
    "XXshiftXX",
    "POST",
    "Post",
    "XXpostXX",
]


@pytest.mark.parametrize("decoy", VOLUNTEER_DECOYS)
def test_a_roster_row_is_read_from_its_own_field_names_and_a_look_alike_field_is_ignored(decoy: str) -> None:
    """The look-alike field names another listed volunteer, shift or post than the row's
    own field: the row reads exactly as without it."""
    own: dict[str, Any] = {"volunteer": "Ana", "shift": "S1", "post": "Gate"}
    other = {"volunteer": "Ben", "shift": "S2", "post": "First Aid"}[decoy.strip("X").lower()]
    assert _read_roster([{**own, decoy: other}]) == (vs.Plan({("Ana", "S1"): "Gate"}), "complete roster")


def test_roster_rows_in_another_spelling_read_as_the_instances_own() -> None:
    own = [
        {"volunteer": "Ana", "shift": "S1", "post": "Gate"},
        {"volunteer": "Ben", "shift": "S2", "post": "First Aid"},
    ]
    odd = [
        {"volunteer": " ana", "shift": "s1", "post": "GATE"},
        {"volunteer": "BEN ", "shift": "S2", "post": "first  aid"},
    ]
    assert (
        _read_roster(odd)
        == _read_roster(own)
        == (
            vs.Plan({("Ana", "S1"): "Gate", ("Ben", "S2"): "First Aid"}),
            "complete roster",
        )
    )


def test_a_roster_row_naming_an_unknown_post_is_named_by_its_place() -> None:
    rows = [{"volunteer": "Ana", "shift": "S1", "post": "Gate"}, {"volunteer": "Ben", "shift": "S1", "post": "Bar"}]
    assert _read_roster(rows) == (None, "roster row 2 names unknown post 'Bar'")


def test_a_standby_row_where_no_rule_asks_for_one_is_refused_naming_its_place() -> None:
    rows = [{"volunteer": "Ana", "shift": "S1", "post": "Gate"}, {"volunteer": "Ben", "shift": "S1", "post": "standby"}]
    assert _read_roster(rows) == (None, "roster row 2 names a standby, but no rule asks for one")
