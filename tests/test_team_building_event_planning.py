"""Team-building event planning and its venue rules (booking budget, the shared coach):
each check keeps a plan that keeps the rule and rejects one that breaks it; the CP-SAT
encoding agrees with the check on every plan of a small day; every instance carries its
budget and catered-lunch window."""

from __future__ import annotations

import itertools

from pbsolve.checkers.scheduling import places as pp
from pbsolve.checkers.scheduling.checks import CHECKS
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, TimetableData
from pbsolve.models.scheduling import team_building_event_planning as tb
from pbsolve.models.scheduling.common import hour_slots
from pbsolve.schema import GenerationSpec
from tests.helpers import encoder_accepts

DATA = TimetableData(
    time_unit="hour",
    days=("the day",),
    slots=tuple(hour_slots(9, 14)),
    rooms=(Room(id="Elm", seats=30, cost=2), Room(id="Fjord", seats=30, cost=5), Room(id="Grove", seats=30, cost=3)),
    people=(Person(id="Sales", role="team of 8"), Person(id="Design", role="team of 6")),
    events=(
        Event(id="S1", name="Kayaking", duration=2, people=("Sales",), size=8),
        Event(id="S2", name="Escape room", duration=1, people=("Design",), size=6),
    ),
)
COACH = pp.CoachTransfer(rooms=["Fjord", "Grove"], lead=1)


def ok(kind: str, plan: dict, params) -> bool:  # type: ignore[no-untyped-def]
    return CHECKS[kind](DATA, plan, params)[0]


def test_budget_counts_each_sessions_venue_cost_per_person() -> None:
    assert ok("budget", {"S1": (0, "Elm"), "S2": (0, "Grove")}, pp.Budget(max=34))  # 2 x 8 + 3 x 6
    assert not ok("budget", {"S1": (0, "Elm"), "S2": (0, "Grove")}, pp.Budget(max=33))
    assert not ok("budget", {"S1": (0, "Fjord"), "S2": (0, "Elm")}, pp.Budget(max=51))  # 5 x 8 + 2 x 6 = 52


def test_coach_spans_stay_in_the_day_and_apart() -> None:
    assert ok("coach_transfer", {"S1": (1, "Fjord"), "S2": (5, "Elm")}, COACH)
    assert not ok("coach_transfer", {"S1": (0, "Fjord"), "S2": (5, "Elm")}, COACH)  # no hour before 09:00
    assert not ok("coach_transfer", {"S1": (1, "Fjord"), "S2": (4, "Grove")}, COACH)  # spans 10-13 and 12-14
    assert ok("coach_transfer", {"S1": (1, "Fjord"), "S2": (5, "Grove")}, COACH) is False  # 14:00 ends the day
    assert ok("coach_transfer", {"S1": (1, "Fjord"), "S2": (3, "Elm")}, COACH)  # Elm is on site


def test_encoders_agree_with_checks_on_every_plan() -> None:
    venues = [r.id for r in DATA.rooms]
    plans = [
        {"S1": (s1, r1), "S2": (s2, r2)}
        for s1 in DATA.starts(DATA.events[0])
        for s2 in DATA.starts(DATA.events[1])
        for r1, r2 in itertools.product(venues, venues)
    ]
    for kind, params in [("budget", pp.Budget(max=40)), ("coach_transfer", COACH)]:
        for plan in plans:
            assert encoder_accepts(DATA, kind, params, plan) == ok(kind, plan, params), (kind, plan)


def test_every_instance_has_a_budget_and_a_lunch_window() -> None:
    import random

    for sub in [s.id for s in tb.TASK.subtasks]:
        spec = GenerationSpec(family="scheduling", task=tb.TASK.id, subtask=sub, basic=[], medium=[], hard=[],
                              stateful=[], seed=1, size="small")  # fmt: skip
        draft = next(d for d in (_try(spec, s) for s in range(20)) if d is not None)
        kinds = [r.kind for r in draft.rules]
        assert "budget" in kinds and "window" in kinds
        if sub == "remote_adventure":
            assert "coach_transfer" in kinds
        if sub == "accessible_outing":
            assert "availability" in kinds
    del random


def _try(spec: GenerationSpec, seed: int):  # type: ignore[no-untyped-def]
    import random

    try:
        return tb.recipe(spec).draft(spec, random.Random(seed), {})
    except Exception:
        return None
