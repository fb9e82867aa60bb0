"""Fitness planning: the day-spacing kinds it brings (recovery days, progression, weekly
goal, injury rest), encoder against checker on every plan of tiny timetables, and the
structure each subtask promises."""

from __future__ import annotations

import pytest

from pbsolve.checkers.scheduling.checks import CHECKS, Plan
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, TimetableData
from pbsolve.checkers.scheduling.rule_params import RULE_PARAMS
from pbsolve.models.scheduling.common import period_slots
from tests.instances import subtask_instances
from tests.test_stateful import assert_model_and_checker_agree_on_every_plan

FIVE = ["D0", "D1", "D2", "D3", "D4"]


def _ev(eid: str, intensity: int = 1) -> Event:
    return Event(id=eid, name=eid, duration=1, people=("Eli",), size=1, priority=intensity, series=eid[:3])


def _data(
    days: list[str] = FIVE, per_day: int = 1, events: tuple[str, ...] = ("LEG1", "LEG2", "LEG3")
) -> TimetableData:
    return TimetableData(
        time_unit="period",
        days=tuple(days),
        slots=tuple(period_slots(days, per_day)),
        rooms=(Room(id="Gym", seats=4, cost=0),),
        people=(Person(id="Eli", role="athlete"),),
        events=tuple(_ev(e, 3 if e == "LEG1" else 1) for e in events),
    )


def _check(kind: str, d: TimetableData, plan: Plan, params: dict) -> tuple[bool, str]:
    return CHECKS[kind](d, plan, RULE_PARAMS[kind].model_validate(params))


def _on_days(*days: int, ids: tuple[str, ...] = ("LEG1", "LEG2", "LEG3")) -> Plan:
    return {eid: (day, "Gym") for eid, day in zip(ids, days)}


D = _data()
RECOVERY = {"group": "Legs", "intense": ["LEG1"], "trains": ["LEG1", "LEG2", "LEG3"], "days": 2}


# -- recovery_days -----------------------------------------------------------------------
def test_recovery_accepts_the_next_session_right_after_the_recovery_days():
    assert _check("recovery_days", D, _on_days(0, 3, 4), RECOVERY)[0]


def test_recovery_rejects_a_session_inside_the_recovery_days():
    ok, why = _check("recovery_days", D, _on_days(0, 2, 4), RECOVERY)
    assert not ok and "LEG2" in why and "2 day(s) later" in why


def test_recovery_rejects_a_light_session_earlier_on_the_same_day():
    d = _data(per_day=2)
    ok, why = _check("recovery_days", d, {"LEG2": (0, "Gym"), "LEG1": (1, "Gym"), "LEG3": (9, "Gym")}, RECOVERY)
    assert not ok and "same day" in why


def test_recovery_leaves_sessions_before_the_intense_day_alone():
    assert _check("recovery_days", D, {"LEG2": (0, "Gym"), "LEG3": (1, "Gym"), "LEG1": (2, "Gym")}, RECOVERY)[0]


# -- progression -------------------------------------------------------------------------
PROGRESS = {"events": ["LEG1", "LEG2", "LEG3"], "min_days": 1, "max_days": 2}


def test_progression_accepts_gaps_at_both_ends_of_the_window():
    assert _check("progression", D, _on_days(0, 1, 3), PROGRESS)[0]


def test_progression_rejects_a_gap_too_long():
    ok, why = _check("progression", D, _on_days(0, 1, 4), PROGRESS)
    assert not ok and "3 day(s)" in why


def test_progression_rejects_two_sessions_on_one_day_and_the_wrong_order():
    assert not _check(
        "progression", _data(per_day=2), {"LEG1": (0, "Gym"), "LEG2": (1, "Gym"), "LEG3": (3, "Gym")}, PROGRESS
    )[0]
    assert not _check("progression", D, _on_days(2, 1, 3), PROGRESS)[0]


# -- weekly_quota ------------------------------------------------------------------------
WEEKS = _data(days=[f"W{w} {d}" for w in (1, 2) for d in ("Mon", "Wed", "Fri")], events=("RUN1", "RUN2", "RUN3"))
QUOTA = {"events": ["RUN1", "RUN2", "RUN3"], "min": 1, "days_per_week": 3}


def test_weekly_goal_accepts_a_session_in_each_week():
    assert _check("weekly_quota", WEEKS, _on_days(0, 1, 3, ids=("RUN1", "RUN2", "RUN3")), QUOTA)[0]


def test_weekly_goal_rejects_a_week_without_enough_sessions():
    ok, why = _check("weekly_quota", WEEKS, _on_days(0, 1, 2, ids=("RUN1", "RUN2", "RUN3")), QUOTA)
    assert not ok and "week 2 has 0" in why


def test_weekly_goal_counts_a_short_last_week_as_a_week():
    d = _data(days=FIVE, events=("RUN1", "RUN2", "RUN3"))
    assert not _check("weekly_quota", d, _on_days(0, 1, 2, ids=("RUN1", "RUN2", "RUN3")), QUOTA)[0]


# -- injury_rest -------------------------------------------------------------------------
INJURY = {"part": "Knee", "events": ["LEG2", "LEG3"], "from_day": "D1", "to_day": "D2"}


def test_injury_rest_accepts_sessions_outside_the_rest_days():
    assert _check("injury_rest", D, _on_days(1, 3, 4), INJURY)[0]  # LEG1 is not listed


def test_injury_rest_rejects_a_listed_session_on_either_end_of_the_rest():
    assert not _check("injury_rest", D, _on_days(0, 1, 4), INJURY)[0]
    ok, why = _check("injury_rest", D, _on_days(0, 3, 2), INJURY)
    assert not ok and "LEG3" in why


# -- encoder against checker, every plan of tiny timetables -------------------------------------
EXHAUSTIVE = [
    ("recovery_days", _data(), RECOVERY),
    ("recovery_days", _data(days=FIVE[:4], per_day=2), {**RECOVERY, "intense": ["LEG1", "LEG3"], "days": 1}),
    ("progression", _data(), PROGRESS),
    ("progression", _data(days=FIVE[:3], per_day=2), {**PROGRESS, "min_days": 1, "max_days": 1}),
    ("weekly_quota", WEEKS, QUOTA),
    ("weekly_quota", _data(days=FIVE[:4], events=("RUN1", "RUN2", "RUN3")), {**QUOTA, "min": 1, "days_per_week": 2}),
    ("injury_rest", _data(), INJURY),
]


@pytest.mark.parametrize("kind,d,params", EXHAUSTIVE, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(EXHAUSTIVE)])
def test_model_accepts_exactly_the_plans_the_checker_accepts(kind, d, params):
    assert_model_and_checker_agree_on_every_plan(kind, d, params)


# -- generated instances: planted rules and subtask structure ---------------------------------
def _kinds(inst) -> list[str]:
    return [r.kind for r in inst.rules]


def test_a_strength_split_always_has_recovery_days_after_an_intense_session():
    for inst in subtask_instances("fitness_planning", "strength_split", 3, "small"):
        rule = next(r for r in inst.rules if r.kind == "recovery_days")
        intense = {e["id"] for e in inst.data["events"] if e["priority"] == 3}
        assert set(rule.params["intense"]) <= intense


def test_an_endurance_build_always_has_a_progression():
    for inst in subtask_instances("fitness_planning", "endurance_build", 3, "small"):
        assert "progression" in _kinds(inst)


def test_an_injury_comeback_always_rests_a_body_part():
    for inst in subtask_instances("fitness_planning", "injury_comeback", 3, "small"):
        assert "injury_rest" in _kinds(inst)
        assert "Injury rest: because of an injury" in inst.prompt


def test_small_group_training_has_a_coach_in_every_session_with_clients():
    for inst in subtask_instances("fitness_planning", "small_group_training", 3, "small"):
        coach = next(p["id"] for p in inst.data["people"] if p["role"] == "coach")
        assert all(e["people"][0] == coach and len(e["people"]) >= 2 for e in inst.data["events"])


def test_a_triathlon_block_swims_in_the_pool():
    for inst in subtask_instances("fitness_planning", "triathlon_block", 3, "small"):
        swims = [e for e in inst.data["events"] if e["series"] == "SWM"]
        assert swims and all("pool" in e["needs"] for e in swims)
        assert any(r["id"] == "Pool lane" for r in inst.data["rooms"])
