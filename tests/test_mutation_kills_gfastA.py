"""Grading behaviours held for the mutation campaign over the workforce and emergency
checkers made faster in round 2 of issue 18 (per-data tables, per-plan counts and
timings, plain loops), one behaviour each. Plans and data are built inside each test:
mutmut forks from a process that already ran the tests, so nothing built at module
level may keep a cache of the unmutated code.

The survivors argued equivalent are in scripts/mutation_equivalents.toml (section gfastA).
"""

from __future__ import annotations

from pbsolve.checkers.emergency import response as rp
from pbsolve.checkers.workforce import recruitment as rc
from pbsolve.checkers.workforce import shift_duty as sd
from pbsolve.checkers.workforce import volunteer as vs
from pbsolve.params import NoParams
from tests.test_emergency_emergency_planning import DATA as RESPONSE
from tests.test_emergency_emergency_planning import GOOD as RESPONSE_GOOD


def _one_gate() -> vs.VolunteerData:
    """One shift, one post needing one volunteer, one listed volunteer."""
    return vs.VolunteerData.model_validate({
        "shifts": [{"id": "S1", "day": 0}],
        "posts": [{"id": "Gate", "need": 1}],
        "volunteers": [{"id": "Ana", "prefs": {"Gate": 0}}],
    })  # fmt: skip


def test_a_roster_row_of_a_volunteer_the_data_does_not_list_covers_no_post() -> None:
    plan = vs.Plan({("Zed", "S1"): "Gate"})
    assert vs.CHECKS["coverage"](_one_gate(), plan, NoParams()) == (False, "Gate has 0 volunteers in S1; it needs 1")


def test_a_roster_row_in_a_shift_the_data_does_not_list_covers_no_post() -> None:
    plan = vs.Plan({("Ana", "S9"): "Gate"})
    assert vs.CHECKS["coverage"](_one_gate(), plan, NoParams()) == (False, "Gate has 0 volunteers in S1; it needs 1")


def _city() -> rp.ResponseData:
    """The emergency test city, as a new data object (no lookup cached by an earlier test)."""
    return rp.replaced(RESPONSE)


def _good_dispatch() -> rp.Plan:
    """The valid dispatch of the emergency test city, as a new plan (nothing cached with it)."""
    return rp.Plan(dict(RESPONSE_GOOD.teams), {k: dict(v) for k, v in RESPONSE_GOOD.supply.items()})


def test_no_team_is_sent_in_a_wave_without_incidents() -> None:
    city = _city()
    assert rp.sent_in(city, _good_dispatch(), 3) == dict.fromkeys(["ENG-N1", "ENG-N2", "ENG-H1", "MED-H1", "MED-N1"], 0)


def test_a_team_sent_to_two_incidents_of_one_wave_counts_twice_for_its_base() -> None:
    twice = rp.Plan({"I1": ("ENG-N1", "MED-N1"), "I2": ("ENG-N1",), "I3": ("ENG-N2", "MED-H1")}, {})
    assert rp.sent_in(_city(), twice, 1)["ENG-N1"] == 2


def _dispatch_rows() -> list[dict[str, object]]:
    """The valid dispatch of the emergency test city, as answer rows."""
    return [
        {"incident": "I1", "teams": ["ENG-N1", "MED-N1"], "materials": [{"material": "foam", "depot": "East Depot", "quantity": 5}]},
        {"incident": "I2", "teams": ["ENG-H1"], "materials": [{"material": "foam", "depot": "Quarry Depot", "quantity": 4}]},
        {"incident": "I3", "teams": ["ENG-N2", "MED-H1"], "materials": []},
    ]  # fmt: skip


def _read_dispatch(rows: list[dict[str, object]]) -> tuple[rp.Plan | None, str]:
    city = _city()
    return rp.TASK.read_plan(city, {"dispatch": rows}, rp.TASK.lookups(city), [])


def test_a_dispatch_row_naming_its_incident_in_another_case_is_read() -> None:
    rows = _dispatch_rows()
    rows[1]["incident"] = " i2 "
    plan, why = _read_dispatch(rows)
    assert plan is not None and plan.teams["I2"] == ("ENG-H1",), why


def test_a_dispatch_row_sending_no_team_of_a_needed_role_fails_the_format() -> None:
    rows = _dispatch_rows()
    rows[1]["teams"] = []
    assert _read_dispatch(rows) == (None, "incident I2 needs 1 fire engine teams, the answer sends 0")


def test_a_material_named_in_another_case_is_read() -> None:
    rows = _dispatch_rows()
    rows[0]["materials"] = [{"material": "FOAM", "depot": "East Depot", "quantity": 5}]
    plan, why = _read_dispatch(rows)
    assert plan is not None and plan.supply["I1"] == {"foam": "East Depot"}, why


def test_a_depot_named_in_another_case_is_read() -> None:
    rows = _dispatch_rows()
    rows[0]["materials"] = [{"material": "foam", "depot": "east  depot", "quantity": 5}]
    plan, why = _read_dispatch(rows)
    assert plan is not None and plan.supply["I1"] == {"foam": "East Depot"}, why


def _panel_day() -> rc.RecruitmentData:
    """One slot, one stage run by two paid assessors, one candidate."""
    return rc.RecruitmentData.model_validate({
        "slots": [{"id": "Mon AM", "day": 0}],
        "stages": [{"id": "Panel", "staff": 2}],
        "roles": [{"id": "Nurse", "urgency": 1}],
        "staff": [{"id": "Ana", "stages": ["Panel"], "fee": 3}, {"id": "Ben", "stages": ["Panel"], "fee": 5}],
        "candidates": [{"id": "Cat", "role": "Nurse"}],
    })  # fmt: skip


def test_a_stages_fee_is_the_fees_of_all_its_staff_together() -> None:
    plan = rc.Plan({("Cat", "Panel"): "Mon AM"}, {("Cat", "Panel"): ("Ana", "Ben")})
    assert rc.fee_of(_panel_day(), plan, ("Cat", "Panel")) == 8


def test_a_schedule_row_whose_staff_list_holds_a_number_is_named_in_the_reason() -> None:
    data = _panel_day()
    rows = [{"candidate": "Cat", "stage": "Panel", "slot": "Mon AM", "staff": ["Ana", 7]}]
    assert rc.TASK.read_plan(data, {"schedule": rows}, rc.TASK.lookups(data), []) == (
        None,
        "row 1 needs 'staff', a list of staff names",
    )


def _early_ward(cover: list[dict[str, object]]) -> sd.ShiftDutyData:
    """One day, one Early shift, three staff (Ada and Bram trained for triage), the given cover."""
    return sd.ShiftDutyData.model_validate({
        "days": [{"id": "Fri"}],
        "shifts": [{"id": "Early", "start": 6, "hours": 8}],
        "staff": [{"id": "Ada", "wage": 10, "skills": ["triage"]}, {"id": "Bram", "wage": 12, "skills": ["triage"]},
                  {"id": "Cleo", "wage": 15}],
        "cover": cover,
    })  # fmt: skip


def test_a_cover_entry_on_the_off_shift_counts_the_people_off_that_day() -> None:
    ward = _early_ward([{"day": "Fri", "shift": sd.OFF, "need": 3}])
    plan = sd.Plan({"Ada": {"Fri": "Early"}})
    assert sd.CHECKS["coverage"](ward, plan, NoParams()) == (False, "Fri off has 2 staff; it needs 3")


def test_two_skilled_people_on_a_shift_meet_a_skill_cover_of_two() -> None:
    ward = _early_ward([{"day": "Fri", "shift": "Early", "need": 2}])
    plan = sd.Plan({"Ada": {"Fri": "Early"}, "Bram": {"Fri": "Early"}})
    rule = sd.SkillCover(skill="triage", min=2, slots=[("Fri", "Early")])
    assert sd.CHECKS["skill_cover"](ward, plan, rule) == (True, "holds")
