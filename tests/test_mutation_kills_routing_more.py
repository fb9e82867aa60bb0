"""Routing verdicts held for the mutation campaign over the routing checkers not campaigned
before (campaign mutD), one behaviour each, on the small hand-written data of each task's
own test module: commuting first.

Commuting (checkers/routing/commuting.py): four stops, Bus 1 Mill Road -> Elm Street and
Tram 2 Elm Street -> Old Town (tests/test_routing_commuting_planning.py); here also Bus 3
Station Square -> Old Town, for a trip that rides, walks and rides again.

Each test judges one plan with one rule (or reads one answer, or replays one trip) and
asserts the verdict the rule's wording gives. The survivors argued equivalent are in
scripts/mutation_equivalents.toml.
"""

from __future__ import annotations

from typing import Any

import pytest

from pbsolve.checkers.routing import commuting as cm
from pbsolve.models.routing.commuting import cm_replace
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
