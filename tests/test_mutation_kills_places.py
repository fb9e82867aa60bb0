"""Behaviours of the place and venue checks (travel times with a home base, opening hours,
the shared coach) and of the frequency cap that the mutation campaign (issue 19) found no
test pinning down. Each test is an answer that must pass or fail, and why."""

from __future__ import annotations

from pbsolve.checkers.scheduling import calendar_params as cp
from pbsolve.checkers.scheduling import places as pp
from pbsolve.checkers.scheduling.checks import CHECKS
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, TimetableData
from pbsolve.models.scheduling.common import hour_slots, period_slots
from tests.helpers import hour_periods

# two days of four one-hour periods, 09:00-13:00
SLOTS = hour_periods()
AGENDA = TimetableData(
    time_unit="period",
    days=("Mon", "Tue"),
    slots=SLOTS,
    rooms=(Room(id="Home", seats=2, cost=0), Room(id="Office", seats=2, cost=1), Room(id="Gym", seats=2, cost=2)),
    people=(Person(id="Sam", role="you"),),
    events=(
        Event(id="A1", name="Report", duration=1, people=("Sam",), size=1),
        Event(id="A2", name="Slides", duration=1, people=("Sam",), size=1),
    ),
)
# Office is two periods from Home; the Gym is not listed against the Office
COMMUTE = pp.TravelTime(
    people=["Sam"],
    home="Home",
    legs=[pp.TravelLeg(a="Home", b="Office", slots=2), pp.TravelLeg(a="Home", b="Gym", slots=0)],
)


def holds(kind: str, data: TimetableData, plan: dict, params: object) -> bool:
    return CHECKS[kind](data, plan, params)[0]


# -- travel time ------------------------------------------------------------------------------
def test_places_whose_trip_is_not_listed_are_zero_apart() -> None:
    """Office and Gym have no leg: back to back at the two is allowed."""
    rule = pp.TravelTime(people=["Sam"], legs=[pp.TravelLeg(a="Home", b="Office", slots=2)])
    assert rule.between("Office", "Gym") == 0
    assert holds("travel_time", AGENDA, {"A1": (1, "Office"), "A2": (2, "Gym")}, rule)


def test_a_home_base_day_cannot_start_at_a_far_place_before_the_trip_from_home() -> None:
    """Tue 10:00 at the Office is one period after the day starts; the trip from Home takes two."""
    assert not holds("travel_time", AGENDA, {"A1": (5, "Office"), "A2": (0, "Home")}, COMMUTE)


def test_a_home_base_day_must_end_early_enough_to_get_home() -> None:
    """Mon 11:00-12:00 at the Office leaves one period before 13:00; the trip home takes two."""
    assert not holds("travel_time", AGENDA, {"A1": (2, "Office"), "A2": (4, "Home")}, COMMUTE)


def test_a_home_base_day_allows_a_far_place_with_time_for_both_trips() -> None:
    """With the Office one period from Home: Tue 10:00-11:00 (out by 10:00, back by 13:00) and
    Mon 11:00-12:00 (out by 11:00, back by 13:00) both fit."""
    near = COMMUTE.model_copy(update={"legs": [pp.TravelLeg(a="Home", b="Office", slots=1)]})
    assert holds("travel_time", AGENDA, {"A1": (5, "Office"), "A2": (0, "Home")}, near)
    assert holds("travel_time", AGENDA, {"A1": (2, "Office"), "A2": (4, "Home")}, near)


# -- opening hours ------------------------------------------------------------------------------
def test_opening_hours_judge_every_event_in_the_room_after_events_elsewhere() -> None:
    """A1 (listed first) is at Home; A2 at the Gym while it is closed must still fail."""
    hours = pp.OpeningHours(room="Gym", open=["Mon 09:00"])
    assert not holds("opening_hours", AGENDA, {"A1": (0, "Home"), "A2": (2, "Gym")}, hours)


# -- the shared coach -----------------------------------------------------------------------------
DAY = TimetableData(
    time_unit="hour",
    days=("the day",),
    slots=tuple(hour_slots(9, 16)),  # 09:00..16:00 starts, the day ends 17:00
    rooms=(Room(id="Elm", seats=30, cost=2), Room(id="Fjord", seats=30, cost=5), Room(id="Grove", seats=30, cost=3)),
    people=(Person(id="Sales", role="team of 8"), Person(id="Design", role="team of 6")),
    events=(
        Event(id="S1", name="Kayaking", duration=2, people=("Sales",), size=8),
        Event(id="S2", name="Escape room", duration=1, people=("Design",), size=6),
    ),
)
COACH = pp.CoachTransfer(rooms=["Fjord", "Grove"], lead=1)


def test_a_coach_trip_that_ends_with_the_day_fits() -> None:
    """S2 at Grove 15:00-16:00: the coach from 14:00 to 17:00, the day's end."""
    assert holds("coach_transfer", DAY, {"S1": (0, "Elm"), "S2": (6, "Grove")}, COACH)


def test_a_coach_trip_that_runs_past_the_day_breaks_the_rule() -> None:
    """S2 at Grove 16:00-17:00 needs the coach until 18:00."""
    assert not holds("coach_transfer", DAY, {"S1": (0, "Elm"), "S2": (7, "Grove")}, COACH)
    lead2 = COACH.model_copy(update={"lead": 2})
    assert not holds("coach_transfer", DAY, {"S1": (0, "Elm"), "S2": (6, "Grove")}, lead2)  # 13:00-18:00


def test_coach_trips_that_touch_without_sharing_an_hour_are_allowed() -> None:
    """S1 at Fjord 10:00-12:00 holds the coach 09:00-13:00; S2 at Grove 14:00 holds it 13:00-16:00."""
    assert holds("coach_transfer", DAY, {"S1": (1, "Fjord"), "S2": (5, "Grove")}, COACH)


def test_coach_trips_sharing_their_last_hour_break_the_rule() -> None:
    """S1 at Fjord 10:00-12:00 holds the coach 09:00-13:00; S2 at Grove 13:00 needs it from 12:00."""
    assert not holds("coach_transfer", DAY, {"S1": (1, "Fjord"), "S2": (4, "Grove")}, COACH)


def test_the_coach_rule_judges_remote_events_listed_after_a_local_one() -> None:
    """S1 (listed first) is on site at Elm; S2 at Grove at 16:00 runs past the day and must fail."""
    assert not holds("coach_transfer", DAY, {"S1": (0, "Elm"), "S2": (7, "Grove")}, COACH)


# -- frequency cap ----------------------------------------------------------------------------------
def test_two_messages_on_one_day_break_a_cap_of_one_a_day() -> None:
    days = ["Mon", "Tue"]
    data = TimetableData(
        time_unit="period",
        days=tuple(days),
        slots=tuple(period_slots(days, 2)),
        rooms=(Room(id="Pool", seats=50, cost=1),),
        people=(Person(id="Berlin", role="UTC+1, 10 thousand recipients"),),
        events=tuple(Event(id=f"M{i}", name=f"M{i}", duration=1, people=("Berlin",), size=10) for i in (1, 2)),
    )
    cap = cp.FrequencyCap(segment="Berlin", max=1, days=1)
    assert not holds("frequency_cap", data, {"M1": (0, "Pool"), "M2": (1, "Pool")}, cap)  # Mon P1, Mon P2
    assert holds("frequency_cap", data, {"M1": (0, "Pool"), "M2": (2, "Pool")}, cap)  # Mon, Tue
