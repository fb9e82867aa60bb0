"""Routing verdicts held for the mutation campaign over the routing checkers not campaigned
before (campaign mutD), one behaviour each, on the small hand-written data of each task's
own test module: commuting first, travel itinerary and logistics delivery after it.

Commuting (checkers/routing/commuting.py): four stops, Bus 1 Mill Road -> Elm Street and
Tram 2 Elm Street -> Old Town (tests/test_routing_commuting_planning.py); here also Bus 3
Station Square -> Old Town, for a trip that rides, walks and rides again.

Travel itinerary (checkers/routing/itinerary.py): two days from Hotel Aurora, the Cathedral
(closes 12:00), the Zoo (closed on Friday) and the Art Gallery (booked for Friday 11:00),
and a rest at the hotel on Thursday between 12:00 and 13:00
(tests/test_routing_travel_itinerary_planning.py).

Logistics delivery (checkers/routing/delivery.py): a depot and three stops on a line, 5
minutes apart, two vans of capacity 5, one reload allowed
(tests/test_routing_logistics_delivery_planning.py). A plan keeps its simulation, so every
test makes its plans itself.

Each test judges one plan with one rule (or reads one answer, or replays one trip) and
asserts the verdict the rule's wording gives. The survivors argued equivalent are in
scripts/mutation_equivalents.toml.
"""

from __future__ import annotations

from typing import Any

import pytest

from pbsolve.checkers.routing import commuting as cm
from pbsolve.checkers.routing import delivery as dl
from pbsolve.checkers.routing import itinerary as it
from pbsolve.models.routing.commuting import cm_replace
from pbsolve.schema import ObjectiveTerm, Rule
from tests.test_routing_commuting_planning import (
    ANA_WALKS,
    BEN_LATE_TRAM,
    BEN_WALKS,
    BUS_TRAM,
    BUS_WALK,
    DATA,
    GOOD,
    OT,
    PARKED,
    E,
    M,
    S,
    plan,
    trip,
    verdict,
)
from tests.test_routing_logistics_delivery_planning import small_data
from tests.test_routing_travel_itinerary_planning import DATA as TRIP
from tests.test_routing_travel_itinerary_planning import GOOD as TRIP_GOOD
from tests.test_routing_travel_itinerary_planning import LIGHT as TRIP_LIGHT
from tests.test_routing_travel_itinerary_planning import H
from tests.test_routing_travel_itinerary_planning import plan as days
from tests.test_routing_travel_itinerary_planning import verdict as trip_verdict

# == Commuting ===================================================================================
# Bus 3: Station Square -> Old Town in 8 minutes, leaving at 07:20.
BUS3 = cm_replace(
    DATA, lines=(*DATA.lines, cm.Line(id="Bus 3", mode="bus", origin=S, dest=OT, minutes=8, fare=2, seats=1,
                                      departures=(440,))),
)  # fmt: skip
# Ana: Bus 1 at 07:05 to Elm Street (07:10), walks to Station Square (07:18), Bus 3 at 07:20 (07:28).
RIDE_WALK_RIDE = trip("Ana", ("ride", "Bus 1", "425"), ("walk", S), ("ride", "Bus 3", "440"), data=BUS3)


def test_a_clock_time_needs_an_hour_below_24_and_a_minute_below_60() -> None:
    assert cm.read_clock("23:59") == 1439
    assert cm.read_clock("24:00") is None and cm.read_clock("07:60") is None


def test_a_trip_key_joins_the_words_of_each_leg_with_spaces_and_the_legs_with_semicolons() -> None:
    assert cm.trip_key((("walk", S), ("ride", "Bus 1", "425"))) == "walk Station Square;ride Bus 1 425"


def test_every_trip_lists_each_commuters_trips_of_at_most_max_legs_in_search_order() -> None:
    found = {c.id: [(t.legs, t.arrival) for t in cm.every_trip(DATA, c)] for c in DATA.commuters}
    assert found["Ana"] == [
        ((("walk", E), ("walk", OT)), 451),
        ((("walk", E), ("ride", "Tram 2", "445")), 448),
        ((("walk", S), ("walk", E), ("walk", OT)), 444),
        ((("walk", S), ("walk", E), ("ride", "Tram 2", "445")), 448),
        ((("ride", "Bus 1", "425"), ("walk", OT)), 436),
        ((("ride", "Bus 1", "425"), ("ride", "Tram 2", "432")), 435),
        ((("ride", "Bus 1", "425"), ("ride", "Tram 2", "445")), 448),
        ((("ride", "Bus 1", "435"), ("walk", OT)), 446),
        ((("ride", "Bus 1", "435"), ("ride", "Tram 2", "445")), 448),
    ]
    assert found["Ben"] == [
        ((("walk", E), ("walk", OT)), 434),
        ((("walk", E), ("ride", "Tram 2", "432")), 435),
        ((("walk", E), ("ride", "Tram 2", "445")), 448),
        ((("walk", M), ("walk", E), ("walk", OT)), 461),
        ((("walk", M), ("ride", "Bus 1", "435"), ("walk", OT)), 446),
        ((("walk", M), ("ride", "Bus 1", "435"), ("ride", "Tram 2", "445")), 448),
    ]


def test_every_trip_of_a_car_owner_starts_with_the_drives_to_park_and_ride() -> None:
    ana = PARKED.commuters[0]
    drives = [(t.legs, t.arrival) for t in cm.every_trip(PARKED, ana) if t.legs[0][0] == "drive"]
    assert drives == [
        ((("drive", E), ("walk", OT)), 431),
        ((("drive", E), ("ride", "Tram 2", "432")), 435),
        ((("drive", E), ("ride", "Tram 2", "445")), 448),
    ]


def test_every_trip_keeps_within_max_legs() -> None:
    two = cm_replace(DATA, max_legs=2)
    assert all(len(t.legs) <= 2 for t in cm.every_trip(two, two.commuters[1]))
    assert len(cm.every_trip(two, two.commuters[1])) == 3


def test_a_day_pass_caps_a_commuters_fares() -> None:
    assert cm.fare_of(cm_replace(DATA, day_pass=2), BUS_TRAM) == 2


# -- replaying a trip ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("legs", "why"),
    [
        ((("walk", S), ("walk", OT)), "Ana's leg 2: no walk link from Station Square to Old Town"),
        ((("walk", S), ("ride", "Bus 1", "425")), "Ana's leg 2: Bus 1 leaves from Mill Road, not from Station Square"),
        ((("ride", "Bus 1", "425"), ("ride", "Tram 2", "440")), "Ana's leg 2: Tram 2 has no departure at 07:20"),
        (
            (("ride", "Bus 1", "435"), ("ride", "Tram 2", "432")),
            "Ana's leg 2: Tram 2 at 07:12 has left when Ana is there at 07:20",
        ),
        ((("drive", E), ("walk", OT)), "Ana's leg 1: Ana cannot drive to Elm Street there"),
    ],
    ids=["no_walk_link", "line_elsewhere", "no_such_departure", "departed", "no_car"],
)
def test_a_leg_that_cannot_be_travelled_is_refused_with_its_number_from_one(legs: Any, why: str) -> None:
    assert cm.trip_of(DATA, DATA.commuters[0], legs) == (None, why)


def test_a_drive_is_only_ever_the_first_leg() -> None:
    ana = PARKED.commuters[0]
    assert cm.trip_of(PARKED, ana, (("walk", S), ("drive", E))) == (
        None,
        "Ana's leg 2: Ana cannot drive to Elm Street there",
    )


# -- rule checks ----------------------------------------------------------------------------------
def test_a_late_ride_with_less_than_the_transfer_time_before_the_next_ride_misses_it() -> None:
    """Bus 1 one minute late reaches Elm Street at 07:11; Tram 2 leaves at 07:12 and a change takes 2."""
    assert verdict("delay_robust", plan(BUS_TRAM, BEN_WALKS), cm.Delay(minutes=1)) == (
        False,
        "Ana would miss Tram 2 at 07:12 if Bus 1 ran 1 minutes late",
    )


def test_a_late_ride_followed_by_a_walk_needs_no_transfer_time_to_catch_the_next_ride() -> None:
    """Bus 1 two minutes late: Elm Street at 07:12, a walk of 8 to Station Square at 07:20,
    just as Bus 3 leaves; Bus 3 two minutes late still arrives at 07:30, the deadline."""
    late = cm.Plan({"Ana": RIDE_WALK_RIDE, "Ben": trip("Ben", ("walk", E), ("walk", OT), data=BUS3)})
    assert verdict("delay_robust", late, cm.Delay(minutes=2), data=BUS3) == (True, "holds")


def test_a_late_last_ride_that_brings_the_commuter_past_the_deadline_fails() -> None:
    assert verdict("delay_robust", plan(BUS_WALK, BEN_WALKS), cm.Delay(minutes=15)) == (
        False,
        "Ana would arrive at 07:31, after the deadline, if Bus 1 ran 15 minutes late",
    )


def test_the_transfer_time_reason_names_the_minutes_between_the_rides() -> None:
    assert verdict("transfer_time", GOOD, data=cm_replace(DATA, transfer=3)) == (
        False,
        "Ana changes rides in 2 minutes at 07:10 (at least 3)",
    )


def test_a_buffer_counts_back_from_the_deadline() -> None:
    """Ben's deadline is 07:40: a buffer of 20 minutes means arriving by 07:20; he arrives at 07:28."""
    assert verdict("buffer", plan(BUS_TRAM, BEN_LATE_TRAM), cm.Buffer(commuters=["Ben"], minutes=20)) == (
        False,
        "Ben arrives at 07:28, later than 07:20",
    )


def test_the_travel_balance_reason_names_the_longest_and_the_shortest_travel() -> None:
    assert verdict("travel_balance", plan(BUS_TRAM, BEN_LATE_TRAM), cm.Balance(max=1)) == (
        False,
        "Ben travels 28 minutes and Ana 15: more than 1 apart",
    )


def test_a_trips_first_walk_is_never_limited_by_walk_fatigue() -> None:
    """Ana walks 6 minutes after Bus 1 and Ben 8 before Tram 2, neither having walked before."""
    assert verdict("walk_fatigue", plan(BUS_WALK, BEN_LATE_TRAM), cm.WalkFatigue(after=0, longest=5)) == (
        True,
        "holds",
    )


def test_walk_fatigue_adds_up_every_walk_before_the_leg() -> None:
    """Ana walks 10, 8, then 6 minutes: 18 walked before the last leg, over 12."""
    assert verdict("walk_fatigue", plan(ANA_WALKS, BUS_TRAM), cm.WalkFatigue(after=12, longest=5)) == (
        False,
        "Ana walks 6 minutes after 18 minutes walked (at most 5)",
    )


def test_riding_a_cancelled_departure_fails_naming_it() -> None:
    assert verdict("cancelled", GOOD, cm.Cancelled(line="Tram 2", departure=432)) == (
        False,
        "Ana rides the cancelled Tram 2 at 07:12",
    )


def test_passing_a_closed_stop_fails_naming_it() -> None:
    assert verdict("closed_stop", plan(ANA_WALKS, BEN_WALKS), cm.ClosedStop(stop=S)) == (
        False,
        "Ana passes the closed stop Station Square",
    )


def test_a_closed_stop_counts_a_trips_origin_as_passed() -> None:
    assert verdict("closed_stop", GOOD, cm.ClosedStop(stop=M)) == (False, "Ana passes the closed stop Mill Road")


def test_a_closed_stop_no_trip_passes_holds() -> None:
    assert verdict("closed_stop", plan(BUS_TRAM, BEN_WALKS), cm.ClosedStop(stop="Nowhere")) == (True, "holds")


def test_ride_rest_fails_a_ride_boarded_too_soon_after_enough_minutes_on_board() -> None:
    """Bus 1 (5 minutes on board, over 4), then Tram 2 boarded 2 minutes after reaching Elm Street."""
    assert verdict("ride_rest", GOOD, cm.RideRest(after=4, rest=3)) == (
        False,
        "Ana boards Tram 2 at 07:12 2 minutes after reaching the stop, after 5 minutes on board (at least 3)",
    )


def test_ride_rest_holds_with_exactly_after_minutes_on_board() -> None:
    assert verdict("ride_rest", GOOD, cm.RideRest(after=5, rest=3)) == (True, "holds")


def test_ride_rest_holds_with_exactly_rest_minutes_before_boarding() -> None:
    assert verdict("ride_rest", GOOD, cm.RideRest(after=4, rest=2)) == (True, "holds")


def test_ride_rest_counts_the_wait_from_the_end_of_the_walk_before_the_ride() -> None:
    """Ana reaches Station Square on foot at 07:18 and boards Bus 3 at 07:20."""
    p = cm.Plan({"Ana": RIDE_WALK_RIDE, "Ben": trip("Ben", ("walk", E), ("walk", OT), data=BUS3)})
    assert verdict("ride_rest", p, cm.RideRest(after=4, rest=3), data=BUS3) == (
        False,
        "Ana boards Bus 3 at 07:20 2 minutes after reaching the stop, after 5 minutes on board (at least 3)",
    )


def test_ride_rest_adds_up_the_minutes_on_board_over_every_earlier_ride() -> None:
    """Bus 1 (5 minutes), Tram 4 (4 minutes): 9 on board, over 6, before Bus 3, boarded 4
    minutes after reaching Station Square; neither earlier ride alone is over 6."""
    data = cm_replace(
        BUS3, lines=(*BUS3.lines, cm.Line(id="Tram 4", mode="tram", origin=E, dest=S, minutes=4, fare=1, seats=1,
                                          departures=(432,))),
    )  # fmt: skip
    rides = trip("Ana", ("ride", "Bus 1", "425"), ("ride", "Tram 4", "432"), ("ride", "Bus 3", "440"), data=data)
    p = cm.Plan({"Ana": rides, "Ben": trip("Ben", ("walk", E), ("walk", OT), data=data)})
    assert verdict("ride_rest", p, cm.RideRest(after=6, rest=5), data=data) == (
        False,
        "Ana boards Bus 3 at 07:20 4 minutes after reaching the stop, after 9 minutes on board (at least 5)",
    )


# -- reading the trips ----------------------------------------------------------------------------
ANA_ROW = {
    "commuter": "Ana",
    "legs": [
        {"mode": "ride", "line": "Bus 1", "departs": "07:05"},
        {"mode": "ride", "line": "Tram 2", "departs": "07:12"},
    ],
    "arrival": "07:15",
}
BEN_ROW = {"commuter": "Ben", "legs": [{"mode": "walk", "to": E}, {"mode": "walk", "to": OT}], "arrival": "07:14"}
LONG = "Z" * 50  # a name longer than the 40 characters a reason quotes


def read_trips(rows: Any) -> tuple[Any, str]:
    return cm.TASK.read_plan(DATA, {"trips": rows}, cm.TASK.lookups(DATA), [])


def with_ana(**changes: Any) -> list[dict[str, Any]]:
    return [{**ANA_ROW, **changes}, BEN_ROW]


@pytest.mark.parametrize(
    ("rows", "why"),
    [
        ([ANA_ROW, "Ben"], "trip 2 needs an object with a string 'commuter'"),
        ([ANA_ROW, {**BEN_ROW, "commuter": 5}], "trip 2 needs an object with a string 'commuter'"),
        ([ANA_ROW, {**BEN_ROW, "commuter": LONG}], f"trip 2 names unknown commuter {LONG[:40]!r}"),
        ([ANA_ROW], "commuters missing from the trips: Ben"),
        (with_ana(legs=None), "Ana's 'legs' is missing, not a list or far too long"),
        (with_ana(legs=[{"mode": "walk", "to": S}] * 9), "Ana's 'legs' is missing, not a list or far too long"),
        (with_ana(legs=[{"mode": "walk", "to": S}] * 8), "Ana's trip has 8 legs (at most 3)"),
    ],
    ids=["not_an_object", "commuter_not_a_string", "unknown_commuter", "missing", "no_legs", "9_legs", "8_legs"],
)
def test_unreadable_trips_are_refused_with_the_reason(rows: Any, why: str) -> None:
    assert read_trips(rows) == (None, why)


@pytest.mark.parametrize(
    ("leg", "why"),
    [
        ("walk", "needs an object with a string 'mode' (walk, ride or drive)"),
        ({"mode": 5, "to": S}, "needs an object with a string 'mode' (walk, ride or drive)"),
        ({"mode": "walk", "to": 5}, "walk names no listed stop under 'to' ('5')"),
        ({"mode": "walk", "to": LONG}, f"walk names no listed stop under 'to' ({LONG[:40]!r})"),
        ({"mode": "ride", "line": 5, "departs": "07:05"}, "ride names no listed line ('5')"),
        ({"mode": "ride", "line": LONG, "departs": "07:05"}, f"ride names no listed line ({LONG[:40]!r})"),
        ({"mode": "ride", "line": "Bus 1", "departs": 425}, "ride on Bus 1 needs 'departs' as HH:MM ('425')"),
        ({"mode": "ride", "line": "Bus 1", "departs": LONG}, f"ride on Bus 1 needs 'departs' as HH:MM ({LONG[:20]!r})"),
        ({"mode": LONG}, f"unknown mode {LONG.lower()[:20]!r}"),
    ],
    ids=["not_an_object", "mode_not_a_string", "to_not_a_string", "unknown_stop", "line_not_a_string",
         "unknown_line", "departs_not_a_string", "departs_not_a_time", "unknown_mode"],
)  # fmt: skip
def test_an_unreadable_leg_is_refused_with_its_number_from_one(leg: Any, why: str) -> None:
    assert read_trips(with_ana(legs=[ANA_ROW["legs"][0], leg])) == (None, f"Ana's leg 2 {why}")


@pytest.mark.parametrize(
    ("stated", "shown"),
    [(None, "'None'"), ("07:16", "'07:16'"), ("07:15 or a bit later, say", "'07:15 or a bit later'")],
    ids=["missing", "wrong", "long"],
)
def test_a_stated_arrival_must_be_the_one_the_legs_give(stated: Any, shown: str) -> None:
    assert read_trips(with_ana(arrival=stated)) == (
        None,
        f"Ana's stated arrival {shown} is not the 07:15 its legs give",
    )


# == Travel itinerary ============================================================================
def good() -> it.Plan:
    """A fresh copy of the module's GOOD plan (a plan keeps the schedules worked out for it)."""
    return days(TRIP_GOOD.days["Thu"], TRIP_GOOD.days["Fri"])


def light() -> it.Plan:
    return days(TRIP_LIGHT.days["Thu"], TRIP_LIGHT.days["Fri"])


def with_day(day: str, **changes: Any) -> it.TripData:
    """TRIP with one day's fields changed."""
    return it.replaced(TRIP, days=tuple(x.model_copy(update=changes) if x.id == day else x for x in TRIP.days))


def test_replaced_trip_data_changes_the_named_fields_and_keeps_the_others() -> None:
    new = it.replaced(TRIP, city="Bruges")
    assert new.city == "Bruges" and new.model_dump(exclude={"city"}) == TRIP.model_dump(exclude={"city"})


def test_a_days_schedule_without_a_margin_adds_nothing_to_any_leg() -> None:
    thu = it.schedule(TRIP, "Thu", TRIP_GOOD.days["Thu"])
    assert [(v.arrive, v.start, v.end) for v in thu.visits] == [(550, 550, 610), (620, 720, 780), (795, 795, 915)]
    assert (thu.back, thu.travel) == (930, 50)


def test_the_current_plan_a_recovery_counts_changes_against_is_each_days_stops() -> None:
    assert it.TASK.existing(TRIP, good()) == {"Thu": ["Cathedral", "Rest (Thu)", "Zoo"], "Fri": ["Art Gallery"]}


def test_a_visit_ending_exactly_at_closing_time_keeps_the_opening_hours() -> None:
    """Leaving at 10:50, the Cathedral's hour runs 11:00 to 12:00, when it closes."""
    late_start = with_day("Thu", start=650)
    assert trip_verdict("opening_hours", days(("Cathedral", "Rest (Thu)"), ()), data=late_start) == (True, "holds")


def test_a_return_exactly_at_the_days_end_time_holds() -> None:
    """The rest at the hotel ends at 13:00: no leg back, home at 13:00."""
    assert trip_verdict("return_by", light(), data=with_day("Thu", end=780)) == (True, "holds")


def test_a_meeting_at_the_hotel_at_the_days_start_time_is_reached_on_time() -> None:
    """No leg from the hotel to a stop at the hotel: the meeting starts at 09:00 sharp."""
    meeting = it.Stop(id="Briefing", kind="meeting", day="Thu", place=H, minutes=30, earliest=540, latest=540)
    data = it.replaced(TRIP, stops=(meeting,))
    assert trip_verdict("fixed_stops", days(("Briefing", "Cathedral"), ()), data=data) == (True, "holds")


def test_a_booked_sight_visited_on_another_day_breaks_its_reservation() -> None:
    assert trip_verdict("reservations", days(("Art Gallery", "Rest (Thu)"), ())) == (
        False,
        "Art Gallery is booked for Fri but visited on Thu",
    )


def test_a_fixed_stop_left_out_of_its_day_breaks_the_fixed_stops_rule() -> None:
    assert trip_verdict("fixed_stops", days(("Cathedral", "Zoo"), ("Art Gallery",))) == (
        False,
        "Rest (Thu) is missing from Thu",
    )


def test_a_day_spending_exactly_the_daily_budget_keeps_it() -> None:
    assert trip_verdict("daily_budget", good(), it.DailyBudget(max=17)) == (True, "holds")


def test_a_trip_spending_exactly_the_trip_budget_keeps_it() -> None:
    assert trip_verdict("trip_budget", good(), it.TripBudget(max=25)) == (True, "holds")


def test_a_sight_that_must_come_before_itself_breaks_precedence_when_visited() -> None:
    ok, _ = trip_verdict("precedence", good(), it.Precedence(pairs=[("Zoo", "Zoo")]))
    assert not ok


def test_the_same_day_reason_marks_the_second_sight_not_visited() -> None:
    assert trip_verdict("same_day", light(), it.SameDay(sights=("Cathedral", "Zoo"))) == (
        False,
        "Cathedral (Thu) and Zoo (not visited) are not on one day",
    )


def test_the_same_day_reason_marks_the_first_sight_not_visited() -> None:
    assert trip_verdict("same_day", light(), it.SameDay(sights=("Zoo", "Cathedral"))) == (
        False,
        "Zoo (not visited) and Cathedral (Thu) are not on one day",
    )


def test_the_balance_reason_names_the_fullest_and_the_emptiest_day() -> None:
    assert trip_verdict("balance", good(), it.Balance(max=0)) == (
        False,
        "Thu has 2 sights and Fri 1: more than 0 apart",
    )


def test_a_carried_budget_counts_every_day_spent_so_far() -> None:
    """12 euros on Thursday, 13 on Friday: 25 through Friday against 2 x 12."""
    assert trip_verdict("carry_budget", days(("Zoo",), ("Art Gallery", "Cathedral")), it.CarryBudget(allowance=12)) == (
        False,
        "through Fri tickets cost 25 euros (allowance so far 24)",
    )


def test_a_day_of_exactly_the_tiring_minutes_is_not_tiring() -> None:
    """Thursday: 180 minutes of sights; Friday 90."""
    assert trip_verdict("tiring_day", good(), it.TiringDay(minutes=180, light=0)) == (True, "holds")


def test_a_day_after_a_tiring_one_may_hold_exactly_the_light_minutes() -> None:
    assert trip_verdict("tiring_day", good(), it.TiringDay(minutes=100, light=90)) == (True, "holds")


def test_a_rest_stop_restores_stamina() -> None:
    """The Cathedral's hour before the rest no longer counts at the Zoo."""
    assert trip_verdict("stamina", good(), it.Stamina(minutes=100)) == (
        False,
        "on Thu Zoo brings 120 minutes of sightseeing since the last rest (at most 100)",
    )


GOOD_DAYS = (TRIP_GOOD.days["Thu"], TRIP_GOOD.days["Fri"])


@pytest.mark.parametrize(
    ("thu_fri", "margin", "why"),
    [
        ((("Cathedral",), ()), 120, "Cathedral on Thu ends at 12:10, after it closes at 12:00"),
        (((), ("Art Gallery",)), 110, "Art Gallery is reached at 11:10, after its booked time 11:00"),
        ((("Cathedral", "Rest (Thu)"), ()), 100, "Rest (Thu) starts at 13:40, after 13:00"),
        (GOOD_DAYS, 60, "on Thu the return to Hotel Aurora is at 17:50, after 17:00"),
    ],
    ids=["closing", "booking", "fixed_stop", "return"],
)
def test_a_travel_margin_fails_the_first_time_limit_missed_with_the_margin_on_every_leg(
    thu_fri: tuple[tuple[str, ...], tuple[str, ...]], margin: int, why: str
) -> None:
    """Each plan is made here: a plan keeps its schedules, so one shared between tests
    (or made before mutmut forks) would carry schedules worked out by other code."""
    assert trip_verdict("travel_margin", days(*thu_fri), it.TravelMargin(minutes=margin)) == (
        False,
        f"{why} with {margin} more minutes on every leg",
    )


@pytest.mark.parametrize(
    ("thu_fri", "margin"),
    [
        ((("Cathedral",), ()), 110),  # the Cathedral ends at 12:00 sharp
        (((), ("Art Gallery",)), 100),  # the Art Gallery reached at 11:00 sharp
        ((("Cathedral", "Rest (Thu)"), ()), 80),  # the rest starts at 13:00 sharp
        (GOOD_DAYS, 45),  # back at 17:00 sharp
    ],
    ids=["closing", "booking", "fixed_stop", "return"],
)
def test_a_travel_margin_holds_when_every_time_limit_is_met_exactly(
    thu_fri: tuple[tuple[str, ...], tuple[str, ...]], margin: int
) -> None:
    assert trip_verdict("travel_margin", days(*thu_fri), it.TravelMargin(minutes=margin)) == (True, "holds")


def test_a_travel_margin_holds_a_booked_sight_to_its_time_only_on_its_booked_day() -> None:
    """The Art Gallery on Thursday (the reservations rule's business) starts late, closes at 16:00."""
    assert trip_verdict("travel_margin", days(("Art Gallery",), ()), it.TravelMargin(minutes=110)) == (True, "holds")


def test_a_travel_margin_adds_nothing_to_a_leg_of_no_distance() -> None:
    """The rest at the hotel first thing and the day's end at the hotel: no leg, no margin."""
    assert trip_verdict("travel_margin", days(("Rest (Thu)",), ()), it.TravelMargin(minutes=250)) == (True, "holds")


# -- reading the itinerary ------------------------------------------------------------------------
THU_ROW = {"day": "Thu", "stops": ["Cathedral", "Rest (Thu)", "Zoo"]}


def read_days(rows: Any) -> tuple[Any, str]:
    return it.TASK.read_plan(TRIP, {"itinerary": rows}, it.TASK.lookups(TRIP), [])


@pytest.mark.parametrize(
    ("rows", "why"),
    [
        ([THU_ROW, "Fri"], "day entry 2 is not an object"),
        ([THU_ROW, {"day": "Fri"}], "day entry 2 needs a string 'day' and a list 'stops'"),
        ([THU_ROW, {"day": 5, "stops": []}], "day entry 2 needs a string 'day' and a list 'stops'"),
        ([THU_ROW, {"day": LONG, "stops": []}], f"day entry 2 names unknown day {LONG[:40]!r}"),
        ([THU_ROW, {"day": "Fri", "stops": [5]}], "Fri names unknown stop '5'"),
        ([THU_ROW, {"day": "Fri", "stops": [LONG]}], f"Fri names unknown stop {LONG[:40]!r}"),
        ([{"day": "Thu", "stops": []}, {"day": "Fri", "stops": ["Rest (Thu)"]}], "Rest (Thu) belongs to Thu, not Fri"),
        ([THU_ROW, {"day": "Fri", "stops": ["Cathedral"]}], "Cathedral appears more than once"),
        ([THU_ROW], "days missing from the itinerary: Fri"),
    ],
    ids=["not_an_object", "no_stops", "day_not_a_string", "unknown_day", "stop_not_a_string", "unknown_stop",
         "another_days_stop", "sight_twice", "missing_day"],
)  # fmt: skip
def test_an_unreadable_itinerary_is_refused_with_the_reason(rows: Any, why: str) -> None:
    assert read_days(rows) == (None, why)


# == Logistics delivery ==========================================================================
R = dl.RELOAD
ALL_ON_VAN_1 = ("S1", "S2", "S3")  # S1 at 5, S2 reached at 11 waits for 20, S3 at 26; back at 42


def routes(van1: tuple[str, ...] = ALL_ON_VAN_1, van2: tuple[str, ...] = ()) -> dl.Plan:
    return dl.Plan({"Van 1": van1, "Van 2": van2})


def deliver_verdict(kind: str, p: dl.Plan, data: dl.DeliveryData | None = None, **params: Any) -> Any:
    return dl.CHECKS[kind](data or small_data(), p, dl.RULE_PARAMS[kind](**params))


def test_replaced_delivery_data_changes_the_named_fields_and_keeps_the_others() -> None:
    d = small_data()
    new = dl.replaced(d, shift=100)
    assert new.shift == 100 and new.model_dump(exclude={"shift"}) == d.model_dump(exclude={"shift"})


def test_the_current_routes_of_a_changes_term_map_each_stop_to_its_vehicle_and_predecessor() -> None:
    existing = {"S1": ["Van 1", "Hub"], "S2": ["Van 1", "S1"], "S3": ["Van 2", "Hub"]}
    term = ObjectiveTerm(id="O1", kind="changes", params={"existing": existing})
    assert dl.current_routes(term) == {"S1": ("Van 1", "Hub"), "S2": ("Van 1", "S1"), "S3": ("Van 2", "Hub")}


def _fleet(*vehicles: tuple[str, str, int]) -> dl.DeliveryData:
    return small_data(vehicles=[{"id": i, "kind": k, "capacity": c} for i, k, c in vehicles])


TRAVEL = [ObjectiveTerm(id="O1", kind="travel")]


def test_interchangeable_vehicles_share_a_type_and_a_capacity() -> None:
    d = _fleet(("Van 1", "van", 5), ("Van 2", "van", 5), ("Truck", "truck", 9))
    assert dl.vehicle_classes(d, [], TRAVEL) == [["Van 1", "Van 2"]]


def test_a_vehicle_a_rule_names_is_interchangeable_with_no_other() -> None:
    d = _fleet(("Van 1", "van", 5), ("Van 2", "van", 5), ("Van 3", "van", 5))
    off = Rule(id="R1", kind="vehicle_off", tier="basic", params={"vehicle": "Van 1"})
    assert dl.vehicle_classes(d, [off], TRAVEL) == [["Van 2", "Van 3"]]


def test_no_vehicles_are_interchangeable_under_a_changes_term() -> None:
    changes = ObjectiveTerm(id="O2", kind="changes", params={"existing": {}})
    assert dl.vehicle_classes(small_data(), [], [*TRAVEL, changes]) == []


def test_a_route_splits_into_trips_at_its_reloads() -> None:
    assert dl.trips_of(("S1", R, "S3", "S2")) == [["S1"], ["S3", "S2"]]


def test_a_reload_takes_its_minutes_at_the_depot_and_the_next_trip_starts_there() -> None:
    sim = dl.simulate(small_data(), routes(("S1", R, "S3", "S2")))
    assert sim.start["S3"] == 6 + 5 + 4 + 15 and [m for _, m in sim.trips] == [10, 30]


def test_with_pickups_the_load_on_board_adds_up_every_stop_served_before() -> None:
    d = small_data(
        stops=[
            {"id": "P1", "name": "Bakery", "load": 4, "service": 1, "delivery": "D1"},
            {"id": "D1", "name": "1 Mill Lane", "load": -4, "service": 1},
            {"id": "S3", "name": "3 Elm Street", "load": 0, "service": 1},
        ],
        pickups=True,
        reloads=0,
    )
    sim = dl.simulate(d, routes(("P1", "S3", "D1")))
    assert sim.onboard == {"P1": 0, "S3": 4, "D1": 4} and sim.peak == {"P1": 4, "S3": 4, "D1": 4}


def test_the_current_plan_a_recovery_counts_changes_against_is_each_stops_vehicle_and_predecessor() -> None:
    assert dl.TASK.existing(small_data(), routes(("S1", "S2"), ("S3",))) == {
        "S1": ["Van 1", "Hub"],
        "S2": ["Van 1", "S1"],
        "S3": ["Van 2", "Hub"],
    }


def test_a_plan_written_as_an_answer_lists_the_vehicles_used_with_their_reloads() -> None:
    assert dl.TASK.plan_json(small_data(), routes(("S1", R, "S3"), ())) == [
        {"vehicle": "Van 1", "stops": ["S1", "Depot", "S3"]}
    ]


def test_the_capacity_reason_names_the_overloaded_vehicle() -> None:
    assert deliver_verdict("capacity", routes()) == (False, "Van 1 carries 6 units at S1 (capacity 5)")


@pytest.mark.parametrize(
    ("kind", "data", "params"),
    [
        ("shift_end", {"shift": 42}, {}),  # back at 42
        ("stop_deadline", {}, {"stops": ["S2"], "by": 20}),  # S2 starts at 20
        ("battery_range", {}, {"max": 30}),  # one trip of 30 minutes
        ("load_limit", {}, {"stop": "S1", "max": 6}),  # 6 units on board at S1
        ("delay_buffer", {}, {"minutes": 10}),  # S2 starts at 20, 10 before its window closes at 30
        ("delay_buffer", {"shift": 50}, {"minutes": 8}),  # back at 42, 8 before the shift ends
    ],
    ids=["shift_end", "stop_deadline", "battery_range", "load_limit", "delay_buffer_window", "delay_buffer_shift"],
)
def test_a_limit_met_exactly_holds(kind: str, data: dict[str, Any], params: dict[str, Any]) -> None:
    assert deliver_verdict(kind, routes(), small_data(**data), **params) == (True, "holds")


def test_a_pickup_and_its_delivery_on_different_vehicles_fail() -> None:
    d = small_data(stops=[{"id": "S1", "name": "a", "load": 1, "service": 1, "delivery": "S3"},
                          {"id": "S2", "name": "b", "service": 1}, {"id": "S3", "name": "c", "load": -1, "service": 1}],
                   pickups=True)  # fmt: skip
    assert deliver_verdict("pickup_delivery", routes(("S1", "S2"), ("S3",)), d) == (
        False,
        "pickup S1 is on Van 1 but its delivery S3 on Van 2",
    )


def test_a_stop_delivering_its_own_pickup_keeps_pickup_before_delivery() -> None:
    d = small_data(stops=[{"id": "S1", "name": "a", "load": 0, "service": 1, "delivery": "S1"},
                          {"id": "S2", "name": "b", "service": 1}, {"id": "S3", "name": "c", "service": 1}],
                   pickups=True)  # fmt: skip
    assert deliver_verdict("pickup_delivery", routes(), d) == (True, "holds")


def test_two_services_starting_at_the_same_minute_break_precedence() -> None:
    """S3 moved to 5 minutes from the depot: both vans start service at minute 5."""
    d = small_data(minutes=[[0, 5, 10, 5], [5, 0, 5, 10], [10, 5, 0, 5], [5, 10, 5, 0]])
    assert deliver_verdict("precedence", routes(("S1", "S2"), ("S3",)), d, pairs=[("S1", "S3")]) == (
        False,
        "service at S3 (minute 5) does not start after S1 (minute 5)",
    )


def test_the_route_balance_reason_names_the_busiest_and_the_idlest_vehicle() -> None:
    assert deliver_verdict("route_balance", routes(), max=1) == (
        False,
        "Van 1 serves 3 stops and Van 2 0: more than 1 apart",
    )


def test_a_delay_buffer_fails_a_service_starting_too_close_to_its_window_closing() -> None:
    assert deliver_verdict("delay_buffer", routes(), minutes=15) == (
        False,
        "service at S2 starts at minute 20, less than 15 before 30",
    )


def test_a_delay_buffer_fails_a_vehicle_back_too_close_to_the_shift_end() -> None:
    assert deliver_verdict("delay_buffer", routes(), small_data(shift=50), minutes=9) == (
        False,
        "Van 1 is back at minute 42, less than 9 before the shift ends",
    )


def test_an_unavailable_vehicle_serving_stops_fails() -> None:
    assert deliver_verdict("vehicle_off", routes(("S1", "S2"), ("S3",)), vehicle="Van 2") == (
        False,
        "Van 2 is unavailable but serves 1 stops",
    )


def test_an_unavailable_vehicle_left_unused_holds() -> None:
    assert deliver_verdict("vehicle_off", routes(), vehicle="Van 2") == (True, "holds")


# -- reading the routes ---------------------------------------------------------------------------
def read_routes(rows: Any, data: dl.DeliveryData | None = None) -> tuple[Any, str]:
    d = data or small_data()
    return dl.TASK.read_plan(d, {"routes": rows}, dl.TASK.lookups(d), [])


VAN_2 = {"vehicle": "Van 2", "stops": ["S2"]}


def test_a_reload_between_two_stops_reads_in_any_case() -> None:
    plan_, why = read_routes([{"vehicle": "Van 1", "stops": ["S1", " depot ", "S3"]}, VAN_2])
    assert why == "complete plan" and plan_.routes == {"Van 1": ("S1", R, "S3"), "Van 2": ("S2",)}


@pytest.mark.parametrize(
    ("van_1", "why"),
    [
        (["Depot", "S1", "S3"], "route 2: a reload ('Depot') must sit between two stops, at most 1 per vehicle"),
        (["S1", "S3", "Depot"], "route 2: a reload ('Depot') must sit between two stops, at most 1 per vehicle"),
        (["S1", "Depot", "Depot", "S3"], "route 2: a reload ('Depot') must sit between two stops, at most 1 per vehicle"),
        (["S1", "Depot", "S3", "Depot"], "route 2: a reload ('Depot') must sit between two stops, at most 1 per vehicle"),
        (["S1", 5, "S3"], "route 2 has a stop that is not a string"),
        (["S1", LONG], f"route 2 names unknown stop {LONG[:40]!r}"),
        (["S1"], "stops missing from the routes: S3"),
    ],
    ids=["reload_first", "reload_last", "two_reloads_together", "two_reloads", "stop_not_a_string", "unknown_stop",
         "missing"],
)  # fmt: skip
def test_an_unreadable_route_is_refused_with_its_number_from_one(van_1: list[Any], why: str) -> None:
    assert read_routes([VAN_2, {"vehicle": "Van 1", "stops": van_1}]) == (None, why)


def test_a_reload_is_refused_where_no_reloads_are_allowed() -> None:
    assert read_routes([VAN_2, {"vehicle": "Van 1", "stops": ["S1", R, "S3"]}], small_data(reloads=0)) == (
        None,
        "route 2 names 'Depot' but no reloads are allowed",
    )


def test_a_route_that_is_no_object_is_refused_by_its_number() -> None:
    assert read_routes([VAN_2, "Van 1"]) == (None, "route 2 is not an object")
