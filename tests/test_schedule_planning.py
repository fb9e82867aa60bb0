"""Schedule planning and the place rules it introduces (travel times, opening hours,
fixed commitments, focus windows): each check keeps a plan that keeps the rule and
rejects one that breaks it; the CP-SAT encoding agrees with the check on every plan of
a small timetable."""

from __future__ import annotations

import itertools
import random

from pbsolve.checkers.scheduling import places as pp
from pbsolve.checkers.scheduling.checks import CHECKS
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, TimetableData
from pbsolve.models.scheduling import schedule_planning
from pbsolve.schema import GenerationSpec
from tests.helpers import encoder_accepts, hour_periods

SLOTS = hour_periods()
DATA = TimetableData(
    time_unit="period",
    days=("Mon", "Tue"),
    slots=SLOTS,
    rooms=(Room(id="Home", seats=2, cost=0), Room(id="Office", seats=2, cost=1), Room(id="Gym", seats=2, cost=2)),
    people=(Person(id="Sam", role="you"),),
    events=(
        Event(id="A1", name="Report", duration=1, people=("Sam",), size=1),
        Event(id="A2", name="Workout", duration=2, people=("Sam",), size=1),
    ),
)
TRAVEL = pp.TravelTime(
    people=["Sam"],
    legs=[pp.TravelLeg(a="Home", b="Office", slots=2), pp.TravelLeg(a="Home", b="Gym", slots=1),
          pp.TravelLeg(a="Office", b="Gym", slots=1)],
)  # fmt: skip


def ok(kind: str, plan: dict, params) -> bool:  # type: ignore[no-untyped-def]
    return CHECKS[kind](DATA, plan, params)[0]


def test_travel_time_keeps_a_plan_with_the_trip_and_rejects_one_without() -> None:
    assert ok("travel_time", {"A1": (0, "Home"), "A2": (2, "Gym")}, TRAVEL)  # 1 period free, trip 1
    assert not ok("travel_time", {"A1": (0, "Home"), "A2": (1, "Gym")}, TRAVEL)  # back to back, trip 1
    assert not ok("travel_time", {"A1": (0, "Office"), "A2": (2, "Home")}, TRAVEL)  # 1 free, trip 2


def test_travel_time_ignores_the_same_place_and_other_days() -> None:
    assert ok("travel_time", {"A1": (0, "Home"), "A2": (1, "Home")}, TRAVEL)
    assert ok("travel_time", {"A1": (3, "Office"), "A2": (4, "Home")}, TRAVEL)  # Mon 12:00, then Tue 09:00


def test_travel_time_with_home_needs_the_trip_from_and_back_home() -> None:
    home = TRAVEL.model_copy(update={"home": "Home"})
    assert not ok("travel_time", {"A1": (0, "Office"), "A2": (4, "Home")}, home)  # Office at 09:00: 2 away
    assert ok("travel_time", {"A1": (2, "Gym"), "A2": (4, "Home")}, home)  # Gym 11:00-12:00, 1 back by 13:00
    assert not ok("travel_time", {"A1": (3, "Gym"), "A2": (4, "Home")}, home)  # Gym until 13:00, no time back


def test_opening_hours_fixed_commitment_and_focus_windows() -> None:
    hours = pp.OpeningHours(room="Gym", open=["Mon 10:00", "Mon 11:00"])
    assert ok("opening_hours", {"A1": (0, "Home"), "A2": (1, "Gym")}, hours)
    assert not ok("opening_hours", {"A1": (0, "Home"), "A2": (2, "Gym")}, hours)
    fixed = pp.FixedCommitment(event="A1", start="Tue 10:00", room="Office")
    assert ok("fixed_commitment", {"A1": (5, "Office"), "A2": (0, "Gym")}, fixed)
    assert not ok("fixed_commitment", {"A1": (5, "Home"), "A2": (0, "Gym")}, fixed)
    focus = pp.FocusWindows(events=["A2"], slots=["Mon 09:00", "Mon 10:00"])
    assert ok("focus_windows", {"A1": (3, "Home"), "A2": (0, "Gym")}, focus)
    assert not ok("focus_windows", {"A1": (3, "Home"), "A2": (1, "Gym")}, focus)


def test_encoders_agree_with_checks_on_every_plan() -> None:
    rules = [
        ("travel_time", TRAVEL),
        ("travel_time", TRAVEL.model_copy(update={"home": "Home"})),
        ("opening_hours", pp.OpeningHours(room="Gym", open=["Mon 10:00", "Mon 11:00", "Tue 12:00"])),
        ("fixed_commitment", pp.FixedCommitment(event="A1", start="Tue 10:00", room="Office")),
        ("focus_windows", pp.FocusWindows(events=["A1", "A2"], slots=["Mon 09:00", "Mon 10:00", "Tue 11:00"])),
    ]
    places = [r.id for r in DATA.rooms]
    plans = [
        {"A1": (s1, r1), "A2": (s2, r2)}
        for s1 in DATA.starts(DATA.events[0])
        for s2 in DATA.starts(DATA.events[1])
        for r1, r2 in itertools.product(places, places)
    ]
    for kind, params in rules:
        for plan in random.Random(1).sample(plans, 60):
            assert encoder_accepts(DATA, kind, params, plan) == ok(kind, plan, params), (kind, plan)


def test_every_subtask_has_travel_and_its_own_structure() -> None:
    seen = {}
    for sub in [s.id for s in schedule_planning.TASK.subtasks]:
        spec = GenerationSpec(family="scheduling", task="schedule_planning", subtask=sub, basic=[], medium=[],
                              hard=[], stateful=[], seed=3, size="small")  # fmt: skip
        for seed in range(20):
            try:
                draft = schedule_planning.recipe(spec).draft(spec, random.Random(seed), {})
            except Exception:
                continue
            seen[sub] = {r.kind for r in draft.rules}, [t.kind for t in draft.objective]
            break
    assert all("travel_time" in kinds for kinds, _ in seen.values())
    assert "opening_hours" in seen["errand_week"][0]
    assert "availability" in seen["family_week"][0]
    assert seen["focus_and_energy"][1][0] == "slot_penalty"
    assert seen["commuter_week"][1][0] == "room_cost"
