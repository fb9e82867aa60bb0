"""Commuting Planning: door-to-door trips of several commuters on a multimodal network.

Stops are joined by walk links (a network from :mod:`pbsolve.network_kit`, minutes
walking); timetabled lines (bus, tram, train) run direct from one stop to another at
listed departure times, each departure with a few spare places for this group; in
park-and-ride, car owners may first drive to a car park with few spaces. A trip is a
sequence of at most ``max_legs`` legs from origin to destination reaching no stop twice.

Decision: y[c,k] = 1 when commuter c takes trip k of c's trips, enumerated here
(depth-first, in a fixed order, pruned only by whether the destination can still be
reached in the legs left). Every trip an answer can state is among them, so the model is
exact; every rule is a linear constraint over the y's behind the rule's enforcement
literal. Commuters interact through seats on shared departures, car-park spaces, escorts,
shared rides, arrival orders and travel-time fairness. The objective is lexicographic:
the subtask's primary figure (travel minutes or fares), its secondary ones, then a
stated route score (each leg scores the number of its stop, or 20 × its line's number +
its departure's number), which separates trips that tie on every figure. Commuters are
never interchangeable (each has their own origin, destination and times), so no
symmetry is broken by it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible, lexicographic_weights, make_solver
from pbsolve.checkers.routing import commuting as cm
from pbsolve.checkers.routing.commuting import CommuteData, Commuter, Drive, Line, ParkRide
from pbsolve.family import Draft, NoDraft, SolverModel
from pbsolve.kit import (
    KindRegistry,
    PositiveRange,
    Settings,
    SizeTable,
    Uncertain,
    insert_position,
    parsed,
    sampled_kinds,
    witness_rules,
)
from pbsolve.lru import LockedLRU
from pbsolve.model_kit import (
    Encoder,
    HardHooks,
    ModelBase,
    added_rule,
    alone_infeasible,
    first_infeasible,
    solver_model,
    variant,
    with_conflict_rule,
)
from pbsolve.network_kit import SHAPES, sample_network
from pbsolve.params import NoParams, Params, make_rule
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=cm.TASK_ID,
    name="Commuting Planning",
    family="routing",
    summary="door-to-door trips of several commuters over walk links and timetabled lines under deadlines, seats and fares",
    subtasks=(
        SubtaskSpec(
            "morning_commute", "Morning commute", "office workers to fixed start times; seats on shared departures"
        ),
        SubtaskSpec("evening_return", "Evening return", "home after work with a pick-up stop on the way"),
        SubtaskSpec("park_and_ride", "Park and ride", "car owners may drive to a car park with few spaces, then ride"),
        SubtaskSpec("school_run", "School run", "children ride only with their escorting adult"),
        SubtaskSpec("night_shift", "Night shift", "sparse night timetables, a day-pass fare cap and walking limits"),
    ),
    pool=(
        ConstraintSpec("deadline", "basic", "every commuter arrives by their deadline"),
        ConstraintSpec("seat_capacity", "basic", "no departure carries more commuters than its spare places"),
        ConstraintSpec("transfer_time", "basic", "a change between two rides leaves the minimum transfer time"),
        ConstraintSpec("walk_limit", "basic", "named commuters walk at most so many minutes"),
        ConstraintSpec("fare_cap", "basic", "named commuters pay at most so much"),
        ConstraintSpec("max_transfers", "basic", "named commuters change vehicle at most so many times"),
        # a car waits at the park-and-ride in the evening, so cars are driven there only on outward trips
        ConstraintSpec(
            "parking_spaces",
            "basic",
            "no park-and-ride holds more cars than its spaces",
            subtasks=("morning_commute", "park_and_ride", "school_run", "night_shift"),
        ),
        ConstraintSpec("buffer", "medium", "named commuters arrive so many minutes before their deadline"),
        ConstraintSpec("arrival_order", "medium", "precedence: one commuter arrives a gap before another"),
        ConstraintSpec("travel_balance", "medium", "fairness: travel minutes within a stated gap"),
        ConstraintSpec("shared_ride", "medium", "car-pool: two commuters share at least one departure"),
        ConstraintSpec(  # children ride on school runs only
            "escort", "medium", "a child rides only departures their escort rides too", subtasks=("school_run",)
        ),
        ConstraintSpec("via_stop", "medium", "a pick-up: a commuter's trip passes a named stop"),
        ConstraintSpec("walk_fatigue", "stateful", "after so many minutes walked, no long walk leg"),
        ConstraintSpec("ride_rest", "stateful", "after so many minutes on board, a rest at the stop before each ride"),
        *mechanism_pool("every trip survives any one of its rides running a few minutes late"),
    ),
    base_rules=("deadline", "seat_capacity"),
)

STOPS = (
    "Mill Road", "Station Square", "Harbour Gate", "Elm Street", "Market Hall", "Park Lane", "Castle Hill",
    "Riverside", "Old Town", "Tech Park", "University", "Hospital", "Bridge End", "North Cross", "Canal Wharf",
)  # fmt: skip
PEOPLE = ("Ana", "Ben", "Chen", "Dara", "Eli", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kemi", "Lars")
CHILDREN = ("Mia", "Noah", "Ola", "Pip", "Rafa", "Sol")
MODES: dict[str, tuple[Literal["bus", "tram", "train"], ...]] = {
    "morning_commute": ("bus", "tram", "train"),
    "evening_return": ("bus", "tram", "train"),
    "park_and_ride": ("train", "tram"),
    "school_run": ("bus", "tram"),
    "night_shift": ("bus",),
}
START = {"morning_commute": 7 * 60, "evening_return": 17 * 60, "park_and_ride": 7 * 60, "school_run": 7 * 60 + 30,
         "night_shift": 22 * 60}  # fmt: skip
OBJECTIVES = {
    "morning_commute": ("travel_minutes", "fares", "route_score"),
    "evening_return": ("travel_minutes", "walking", "route_score"),
    "park_and_ride": ("fares", "travel_minutes", "route_score"),
    "school_run": ("travel_minutes", "fares", "route_score"),
    "night_shift": ("fares", "walking", "travel_minutes", "route_score"),
}
FORCED = {
    "morning_commute": ("transfer_time",),
    "evening_return": ("via_stop",),
    "park_and_ride": ("parking_spaces",),
    "school_run": ("escort",),
    "night_shift": ("walk_limit",),
}


class CommuteSizes(Settings):
    """How big a commuting instance is."""

    stops: PositiveInt = Field(ge=4, le=len(STOPS))
    lines: PositiveInt = Field(ge=2)
    departures: PositiveRange = Field(description="departures per line")
    commuters: PositiveInt = Field(ge=2, le=len(PEOPLE))
    max_legs: PositiveInt = Field(ge=2, le=6)


SIZES = SizeTable[CommuteSizes](
    tiny=CommuteSizes(stops=5, lines=3, departures=PositiveRange(lo=2, hi=2), commuters=2, max_legs=3),
    small=CommuteSizes(stops=6, lines=4, departures=PositiveRange(lo=2, hi=3), commuters=3, max_legs=3),
    default=CommuteSizes(stops=8, lines=5, departures=PositiveRange(lo=2, hi=3), commuters=4, max_legs=4),
    large=CommuteSizes(stops=11, lines=8, departures=PositiveRange(lo=3, hi=4), commuters=6, max_legs=4),
)
PROBE_TIME = 2.0
# the models are small (a few ms a solve): presolve and linear relaxations of the
# uniqueness re-solve cost more than they save (measured over 60 default instances, twice:
# re-solve / first solve 1.26 and 1.51 with both, 1.08 and 0.68 without presolve, 0.84 and
# 0.76 without either)
UNIQUENESS_PARAMETERS = {"cp_model_presolve": False, "linearization_level": 0}
WALK_MINUTES = (6, 15)  # one walk link; rides are about four times faster than walking


# -- trips (the model's own enumeration; the checker replays answers independently) ----
@dataclass(frozen=True)
class Option:
    """One trip a commuter can take, with every figure the rules and objective read
    (computed once, when the trip is enumerated)."""

    legs: tuple[cm.Leg, ...]
    stops: tuple[str, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    walking: int
    ride_fares: int
    fee: int
    arrival: int = 0
    rides: tuple[tuple[str, int], ...] = ()
    key: str = ""
    score: int = 0


def _option(d: CommuteData, legs: tuple[cm.Leg, ...], stops: tuple[str, ...], starts: tuple[int, ...],
            ends: tuple[int, ...], walking: int, fares: int, fee: int) -> Option:  # fmt: skip
    rides = tuple((leg[1], int(leg[2])) for leg in legs if leg[0] == "ride")
    return Option(legs, stops, starts, ends, walking, fares, fee, ends[-1], rides, cm.trip_key(legs), _score(d, legs))


def _score(d: CommuteData, legs: tuple[cm.Leg, ...]) -> int:
    """The route score of a trip (see the objective's sentence)."""
    total = 0
    for leg in legs:
        if leg[0] == "ride":
            line = d.line_by_id[leg[1]]
            total += cm.LINE_WEIGHT * d.line_number[line.id] + line.departures.index(int(leg[2])) + 1
        else:
            total += d.stop_number[leg[1]]
    return total


Adjacency = dict[str, list[tuple[str, int]]]  # stop -> (neighbouring stop, walk minutes), in stop order


def _adjacency(d: CommuteData) -> Adjacency:
    out: Adjacency = {s: [] for s in d.network.places}
    for r in d.network.roads:
        out[r.a].append((r.b, r.minutes))
        out[r.b].append((r.a, r.minutes))
    return {s: sorted(v) for s, v in out.items()}


def _reach(d: CommuteData, walks: Adjacency, dest: str) -> list[set[str]]:
    """reach[k]: the stops from which ``dest`` can be reached in at most k legs (walk
    links and lines, times ignored): a branch that cannot get there is cut."""
    nbrs: dict[str, set[str]] = {s: {t for t, _ in walks[s]} for s in d.network.places}
    for x in d.lines:
        nbrs[x.origin].add(x.dest)
    reach = [{dest}]
    for _ in range(d.max_legs):
        prev = reach[-1]
        reach.append(prev | {s for s in d.network.places if nbrs[s] & prev})
    return reach


def enumerate_trips(d: CommuteData, c: Commuter, walks: Adjacency | None = None) -> list[Option]:
    """Every trip of ``c`` (see the module docstring), in a fixed order."""
    walks = _adjacency(d) if walks is None else walks
    reach = _reach(d, walks, c.dest)
    out: list[Option] = []
    from_stop: dict[str, list[Line]] = {}
    for x in d.lines:
        from_stop.setdefault(x.origin, []).append(x)
    fee_at = {p.stop: p.fee for p in d.parkings}

    def grow(at: str, now: int, legs: list[cm.Leg], stops: list[str], starts: list[int], ends: list[int],
             walking: int, fares: int, fee: int) -> None:  # fmt: skip
        if at == c.dest:
            out.append(_option(d, tuple(legs), tuple(stops), tuple(starts), tuple(ends), walking, fares, fee))
            return
        left = d.max_legs - len(legs)
        if left == 0:
            return
        ahead = reach[left - 1]
        steps: list[tuple[cm.Leg, str, int, int, int, int, int]] = []  # leg, stop, start, end, +walk, +fare, +fee
        if not legs:
            steps += [(("drive", dr.stop), dr.stop, now, now + dr.minutes, 0, 0, fee_at[dr.stop]) for dr in c.drives]
        for s, m in walks[at]:
            steps.append((("walk", s), s, now, now + m, m, 0, 0))
        for x in from_stop.get(at, []):
            for dep in x.departures:
                if dep >= now:
                    steps.append((("ride", x.id, str(dep)), x.dest, dep, dep + x.minutes, 0, x.fare, 0))
        for leg, s, start, end, w, f, e in steps:
            if s in stops or s not in ahead:
                continue
            grow(s, end, [*legs, leg], [*stops, s], [*starts, start], [*ends, end], walking + w, fares + f, fee + e)

    grow(c.origin, c.ready, [], [c.origin], [], [], 0, 0, 0)
    return out


TRIPS_KEPT = 256
_TRIPS: LockedLRU[Any, dict[str, list[Option]]] = LockedLRU(TRIPS_KEPT)


def _content(d: CommuteData) -> Any:
    """What the trips depend on (not deadlines, seats, spaces, the transfer time or the
    day pass, which only rules and figures read): the cache key of :func:`trips`."""
    return (
        d.network.places,
        tuple((r.a, r.b, r.minutes) for r in d.network.roads),
        tuple((x.id, x.origin, x.dest, x.minutes, x.fare, x.departures) for x in d.lines),
        tuple((c.id, c.origin, c.dest, c.ready, tuple((x.stop, x.minutes) for x in c.drives)) for c in d.commuters),
        tuple((p.stop, p.fee) for p in d.parkings),
        d.max_legs,
    )


def trips(d: CommuteData) -> dict[str, list[Option]]:
    """Commuter -> their trips, enumerated once per distinct content (one instance's
    builds, probes and hard-tier variants share them)."""
    key = _content(d)
    hit = _TRIPS.get(key)
    if hit is not None:
        return hit
    walks = _adjacency(d)
    made = {c.id: enumerate_trips(d, c, walks) for c in d.commuters}
    _TRIPS.put(key, made)
    return made


def fare(d: CommuteData, o: Option) -> int:
    """Ride fares (capped at the day pass, where there is one) plus parking fees: the model's own figure."""
    rides = o.ride_fares if d.day_pass is None else min(o.ride_fares, d.day_pass)
    return rides + o.fee


def direct_waits(o: Option) -> list[int]:
    """Minutes between arriving on a ride and leaving on the ride right after it."""
    legs = o.legs
    return [o.starts[i + 1] - o.ends[i] for i in range(len(legs) - 1) if legs[i][0] == legs[i + 1][0] == "ride"]


def late_ok(d: CommuteData, c: Commuter, o: Option, delay: int) -> bool:
    """Does the trip still work when any one of its rides arrives ``delay`` minutes late?"""
    legs = o.legs
    for i, leg in enumerate(legs):
        if leg[0] != "ride":
            continue
        now = o.ends[i] + delay
        nxt = next((j for j in range(i + 1, len(legs)) if legs[j][0] == "ride"), None)
        for j in range(i + 1, len(legs) if nxt is None else nxt):
            now += o.ends[j] - o.starts[j]
        if nxt is None:
            if now > c.deadline:
                return False
        elif now + (d.transfer if nxt == i + 1 else 0) > o.starts[nxt]:
            return False
    return True


def walk_tired(o: Option, after: int, longest: int) -> bool:
    """Does the trip walk a leg longer than ``longest`` after more than ``after`` minutes walked?"""
    walked = 0
    for i, leg in enumerate(o.legs):
        if leg[0] == "walk":
            m = o.ends[i] - o.starts[i]
            if walked > after and m > longest:
                return True
            walked += m
    return False


# -- the CP-SAT model ------------------------------------------------------------------
class CommuteModel(ModelBase):
    """The trip-choice model: one Boolean per commuter and trip, exactly one per commuter, and the riders of every departure (seats, escorts and shared rides read them)."""

    def __init__(self, data: CommuteData) -> None:
        super().__init__()
        self.data = d = data
        self.trips = trips(d)
        self.y: dict[str, list[cp_model.IntVar]] = {}
        for c in d.commuters:
            row = [self.m.new_bool_var(f"y[{c.id},{o.key}]") for o in self.trips[c.id]]
            self.y[c.id] = row
            self.m.add_exactly_one(row)
        self.riders: dict[tuple[str, int], dict[str, list[cp_model.IntVar]]] = {}
        for c in d.commuters:
            for o, v in zip(self.trips[c.id], self.y[c.id]):
                for ride in o.rides:
                    self.riders.setdefault(ride, {}).setdefault(c.id, []).append(v)

    def pick(self, cid: str, value: Callable[[Option], int]) -> cp_model.LinearExpr:
        """Sum of value(trip) over c's trips, weighted by their y (the chosen trip's value)."""
        cells = [(v, k) for o, v in zip(self.trips[cid], self.y[cid]) if (k := value(o))]
        return cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [k for _, k in cells])

    def forbid(self, cid: str, bad: Callable[[Option], bool], lit: cp_model.IntVar) -> None:
        """No trip of ``cid`` for which ``bad`` holds (while ``lit``)."""
        banned = [v for o, v in zip(self.trips[cid], self.y[cid]) if bad(o)]
        if banned:
            self.post(cp_model.LinearExpr.sum(banned) == 0, lit)

    def uses(self, cid: str, ride: tuple[str, int]) -> cp_model.LinearExpr:
        """1 when ``cid``'s chosen trip rides this departure."""
        return cp_model.LinearExpr.sum(self.riders.get(ride, {}).get(cid, []))


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("deadline")
def _deadline(tm: CommuteModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for c in tm.data.commuters:
        deadline = c.deadline
        tm.forbid(c.id, lambda o: o.arrival > deadline, lit)  # noqa: B023 - called at once


@encoder("seat_capacity")
def _seat_capacity(tm: CommuteModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for (line, _), by in tm.riders.items():
        seats = tm.data.line_by_id[line].seats
        if len(by) > seats:
            tm.post(cp_model.LinearExpr.sum([v for vs in by.values() for v in vs]) <= seats, lit)


@encoder("transfer_time")
def _transfer_time(tm: CommuteModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for c in tm.data.commuters:
        tm.forbid(c.id, lambda o: any(w < tm.data.transfer for w in direct_waits(o)), lit)


@encoder("walk_limit")
def _walk_limit(tm: CommuteModel, p: cm.Commuters, lit: cp_model.IntVar) -> None:
    for cid in p.commuters:
        tm.forbid(cid, lambda o: o.walking > p.max, lit)


@encoder("fare_cap")
def _fare_cap(tm: CommuteModel, p: cm.Commuters, lit: cp_model.IntVar) -> None:
    for cid in p.commuters:
        tm.forbid(cid, lambda o: fare(tm.data, o) > p.max, lit)


@encoder("max_transfers")
def _max_transfers(tm: CommuteModel, p: cm.Commuters, lit: cp_model.IntVar) -> None:
    for cid in p.commuters:
        tm.forbid(cid, lambda o: len(o.rides) - 1 > p.max, lit)


@encoder("parking_spaces")
def _parking_spaces(tm: CommuteModel, p: cm.Parking, lit: cp_model.IntVar) -> None:
    d = tm.data
    for stop in p.stops:
        cars = [v for c in d.commuters for o, v in zip(tm.trips[c.id], tm.y[c.id]) if o.legs[0] == ("drive", stop)]
        if len(cars) > d.parking_by_stop[stop].spaces:
            tm.post(cp_model.LinearExpr.sum(cars) <= d.parking_by_stop[stop].spaces, lit)


@encoder("buffer")
def _buffer(tm: CommuteModel, p: cm.Buffer, lit: cp_model.IntVar) -> None:
    for cid in p.commuters:
        latest = tm.data.commuter_by_id[cid].deadline - p.minutes
        tm.forbid(cid, lambda o: o.arrival > latest, lit)  # noqa: B023 - called at once


@encoder("arrival_order")
def _arrival_order(tm: CommuteModel, p: cm.ArrivalOrder, lit: cp_model.IntVar) -> None:
    for a, b in p.pairs:
        tm.post(tm.pick(b, lambda o: o.arrival) - tm.pick(a, lambda o: o.arrival) >= p.gap, lit)


@encoder("travel_balance")
def _travel_balance(tm: CommuteModel, p: cm.Balance, lit: cp_model.IntVar) -> None:
    d = tm.data
    times = {c.id: tm.pick(c.id, _since(c.ready)) for c in d.commuters}
    for a in d.commuters:
        for b in d.commuters:
            if a.id != b.id:
                tm.post(times[a.id] - times[b.id] <= p.max, lit)


@encoder("shared_ride")
def _shared_ride(tm: CommuteModel, p: cm.Pair, lit: cp_model.IntVar) -> None:
    both = []
    for ride, by in tm.riders.items():
        if p.first in by and p.second in by:
            z = tm.m.new_bool_var("")
            tm.m.add(z <= tm.uses(p.first, ride))
            tm.m.add(z <= tm.uses(p.second, ride))
            both.append(z)
    tm.post(cp_model.LinearExpr.sum(both) >= 1 if both else False, lit)


@encoder("escort")
def _escort(tm: CommuteModel, p: cm.Escorts, lit: cp_model.IntVar) -> None:
    for child, adult in p.pairs:
        for o, v in zip(tm.trips[child], tm.y[child]):
            for ride in o.rides:
                tm.post(v <= tm.uses(adult, ride), lit)


@encoder("via_stop")
def _via_stop(tm: CommuteModel, p: cm.ViaStop, lit: cp_model.IntVar) -> None:
    tm.forbid(p.commuter, lambda o: p.stop not in o.stops, lit)


@encoder("walk_fatigue")
def _walk_fatigue(tm: CommuteModel, p: cm.WalkFatigue, lit: cp_model.IntVar) -> None:
    for c in tm.data.commuters:
        tm.forbid(c.id, lambda o: walk_tired(o, p.after, p.longest), lit)


def rest_short(o: Option, ready: int, after: int, rest: int) -> bool:
    """Does the trip board a ride less than ``rest`` minutes after reaching its stop once
    more than ``after`` minutes were spent on board?"""
    on_board = 0
    for i, leg in enumerate(o.legs):
        if leg[0] == "ride":
            arrived = o.ends[i - 1] if i else ready
            if on_board > after and o.starts[i] - arrived < rest:
                return True
            on_board += o.ends[i] - o.starts[i]
    return False


@encoder("ride_rest")
def _ride_rest(tm: CommuteModel, p: cm.RideRest, lit: cp_model.IntVar) -> None:
    for c in tm.data.commuters:
        ready = c.ready
        tm.forbid(c.id, lambda o: rest_short(o, ready, p.after, p.rest), lit)  # noqa: B023 - called at once


@encoder("delay_robust")
def _delay_robust(tm: CommuteModel, p: cm.Delay, lit: cp_model.IntVar) -> None:
    for c in tm.data.commuters:
        tm.forbid(c.id, lambda o: not late_ok(tm.data, c, o, p.minutes), lit)  # noqa: B023 - called at once


@encoder("cancelled")
def _cancelled(tm: CommuteModel, p: cm.Cancelled, lit: cp_model.IntVar) -> None:
    for c in tm.data.commuters:
        tm.forbid(c.id, lambda o: (p.line, p.departure) in o.rides, lit)


@encoder("closed_stop")
def _closed_stop(tm: CommuteModel, p: cm.ClosedStop, lit: cp_model.IntVar) -> None:
    for c in tm.data.commuters:
        tm.forbid(c.id, lambda o: p.stop in o.stops, lit)


def _since(ready: int) -> Callable[[Option], int]:
    """A trip's travel minutes from ``ready``."""
    return lambda o: o.arrival - ready


def _for(f: Callable[[Commuter, Option], int], c: Commuter) -> Callable[[Option], int]:
    return lambda o: f(c, o)


def _leg_words(leg: cm.Leg) -> list[str]:
    return [leg[0], leg[1], cm.clock(int(leg[2]))] if leg[0] == "ride" else list(leg)


def _objective(tm: CommuteModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    figure: dict[str, Callable[[Commuter, Option], int]] = {
        "travel_minutes": lambda c, o: o.arrival - c.ready,
        "fares": lambda c, o: fare(d, o),
        "walking": lambda c, o: o.walking,
        "route_score": lambda c, o: o.score,
    }
    if term.kind in figure:
        f = figure[term.kind]
        expr = cp_model.LinearExpr.sum([tm.pick(c.id, _for(f, c)) for c in d.commuters])
        ub = sum(max((f(c, o) for o in tm.trips[c.id]), default=0) for c in d.commuters)
        return expr, ub
    if term.kind == "changes":
        old = cm.current_plan(term)
        kept = [
            v
            for c in d.commuters
            for o, v in zip(tm.trips[c.id], tm.y[c.id])
            if [_leg_words(leg) for leg in o.legs] == old.get(c.id)
        ]
        return len(d.commuters) - cp_model.LinearExpr.sum(kept), len(d.commuters)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def _rows(d: CommuteData, chosen: dict[str, Option]) -> list[dict[str, Any]]:
    rows = []
    for c in d.commuters:
        o = chosen[c.id]
        legs: list[dict[str, str]] = []
        for leg in o.legs:
            if leg[0] == "ride":
                legs.append({"mode": "ride", "line": leg[1], "departs": cm.clock(int(leg[2]))})
            else:
                legs.append({"mode": leg[0], "to": leg[1]})
        rows.append({"commuter": c.id, "legs": legs, "arrival": cm.clock(o.arrival)})
    return rows


def build(draft: Draft) -> SolverModel:
    """The draft's CP-SAT model: every rule behind its literal; the answer is the trip Booleans."""
    data = parsed(CommuteData, draft.data)
    tm = CommuteModel(data)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        chosen = {c.id: next(o for o, v in zip(tm.trips[c.id], tm.y[c.id]) if solver.value(v)) for c in data.commuters}
        return {"trips": _rows(data, chosen)}

    answer = [v for c in data.commuters for v in tm.y[c.id]]
    return solver_model(
        tm, draft, ENCODERS, cm.RULE_PARAMS, _objective, decode, answer, [], uniqueness_parameters=UNIQUENESS_PARAMETERS
    )


# -- sampling --------------------------------------------------------------------------
Witness = dict[str, Option]


def _lines(spec: GenerationSpec, s: CommuteSizes, d_minutes: dict[str, dict[str, int]], stops: tuple[str, ...],
           hops: dict[str, dict[str, int]], hubs: list[str], rng: random.Random) -> list[Line]:  # fmt: skip
    """Direct lines between stops at least two walk links apart where possible (most
    into the workplaces ``hubs``, out of them in the evening; the others often starting
    where another ends), faster than walking, with a few departures each."""
    far = [(a, b) for a in stops for b in stops if a != b and hops[a][b] >= 2]
    near = [(a, b) for a in stops for b in stops if a != b and hops[a][b] == 1]
    hub_end = 0 if spec.subtask == "evening_return" else 1
    pairs: list[tuple[str, str]] = []
    for _ in range(s.lines):
        ends = {b for _, b in pairs}
        served = [p for p in far if p[hub_end] in hubs and p not in pairs]
        # the other lines often start where another ends: changes between rides exist
        onward = [p for p in far if p[0] in ends and p not in pairs]
        if served and rng.random() < 0.6:
            options = served
        else:
            options = onward if onward and rng.random() < 0.5 else [p for p in far if p not in pairs]
        options = options or [p for p in near if p not in pairs]
        pairs.append(rng.choice(options))
    start = START[spec.subtask]
    sparse = spec.subtask == "night_shift"
    numbers = rng.sample(range(1, 40), s.lines)
    out: list[Line] = []
    for (a, b), n in zip(pairs, numbers):
        mode = rng.choice(MODES[spec.subtask])
        first = start + rng.randint(0, 12)
        gap = (25, 40) if sparse else (6, 15)
        count = 1 + (s.departures.draw(rng) - 1) // (2 if sparse else 1)
        deps = [first]
        for _ in range(count - 1):
            deps.append(deps[-1] + rng.randint(*gap))
        name = {"bus": f"Bus {n}", "tram": f"Tram {n % 9 + 1}", "train": f"Train S{n % 9 + 1}"}[mode]
        taken = {x.id for x in out}
        name = next(
            f"{name}{tail}" for tail in ("", "a", "b", "c", "d", "e", "f", "g", "h") if f"{name}{tail}" not in taken
        )
        ride = max(2, d_minutes[a][b] // (5 if mode == "train" else 4) + rng.randint(0, 2))
        price = rng.randint(3, 5) if mode == "train" else rng.randint(1, 3)
        out.append(Line(id=name, mode=mode, origin=a, dest=b, minutes=ride, fare=price, seats=9,
                        departures=tuple(deps)))  # fmt: skip
    return out


def _entities(spec: GenerationSpec, rng: random.Random, parking: bool) -> tuple[CommuteData, Witness]:
    """The network, lines and commuters (car parks and car owners when ``parking``), and a
    witness trip per commuter, with deadlines, places and spaces fitted to it."""
    s = SIZES.of(spec.size)
    stops = tuple(rng.sample(STOPS, s.stops))
    network = sample_network(rng, stops, rng.choice(SHAPES), WALK_MINUTES)
    walk = network.minutes
    import networkx as nx

    hops = {a: dict(h) for a, h in nx.all_pairs_shortest_path_length(network.graph)}
    n_adults = s.commuters - (s.commuters // 2 if spec.subtask == "school_run" else 0)
    # colleagues share workplaces (the evening return starts there), so their trips
    # converge on the same lines and compete for their spare places
    hubs = rng.sample(stops, 2 if n_adults > 2 else 1)
    lines = _lines(spec, s, walk, stops, hops, hubs, rng)
    start = START[spec.subtask]
    parkings: tuple[ParkRide, ...] = ()
    if parking:
        at = sorted({x.origin for x in lines}, key=stops.index)
        chosen = rng.sample(at, min(len(at), 2 if s.stops > 5 else 1))
        parkings = tuple(ParkRide(stop=p, spaces=9, fee=rng.randint(2, 6)) for p in sorted(chosen, key=stops.index))
    names = rng.sample(PEOPLE, n_adults)
    commuters = []
    evening = spec.subtask == "evening_return"
    for n in names:
        a, b = rng.sample(stops, 2)
        for _ in range(10):
            if rng.random() < 0.8:  # home near a line to a workplace
                x = rng.choice(lines)
                b, line_end = (x.origin, x.dest) if evening else (x.dest, x.origin)
                near_home = sorted(network.graph.neighbors(line_end))  # a car owner drives to the line
                near_home = near_home if parking else [line_end, *near_home]
                a = rng.choice([y for y in near_home if y != b] or [y for y in stops if y != b])
            if hops[a][b] >= 2:
                break
            a, b = rng.sample(stops, 2)
        if evening:
            a, b = b, a
        drives: tuple[Drive, ...] = ()
        if parkings and rng.random() < 0.8:
            drives = tuple(
                Drive(stop=p.stop, minutes=max(2, walk[a][p.stop] // 4 + rng.randint(0, 2)))
                for p in parkings
                if p.stop not in (a, b)
            )
        commuters.append(Commuter(id=n, origin=a, dest=b, ready=start + rng.randint(0, 10), deadline=start + 23 * 60,
                                  drives=drives))  # fmt: skip
    day_pass = None
    if spec.subtask == "night_shift":
        day_pass = max(x.fare for x in lines) + rng.randint(1, 3)
    base = CommuteData(network=network, lines=tuple(lines), commuters=tuple(commuters), transfer=0,
                       max_legs=s.max_legs, day_pass=day_pass, parkings=parkings)  # fmt: skip
    options = trips(base)
    if not all(options[c.id] for c in base.commuters):
        raise NoDraft("witness")
    cap = _contested(spec, base, options)
    witness: Witness = {}
    load: dict[tuple[str, int], int] = {}
    for c in base.commuters:
        riding = [o for o in options[c.id] if o.rides] or options[c.id]
        fits = [o for o in riding if all(load.get(r, 0) < cap.get(r[0], len(base.commuters)) for r in o.rides)]
        best = sorted(fits, key=lambda o: (o.arrival, fare(base, o), o.walking))[:3]
        if not best:
            raise NoDraft("witness")
        witness[c.id] = rng.choice(best)
        for r in witness[c.id].rides:
            load[r] = load.get(r, 0) + 1
    if spec.subtask == "school_run":
        adults = [c for c in base.commuters if witness[c.id].rides and witness[c.id].legs[0][0] != "drive"]
        if not adults:
            raise NoDraft("escorts")
        kids = rng.sample(CHILDREN, min(len(adults), s.commuters - n_adults))  # one child per riding adult at most
        escorted: dict[str, str] = {}
        for kid, adult in zip(kids, rng.sample(adults, len(kids))):
            w = witness[adult.id]
            after = [i for i, leg in enumerate(w.legs) if leg[0] == "ride"]
            cut = rng.choice([i for i in range(after[0], len(w.legs)) if i + 1 < len(w.legs)] or [len(w.legs) - 1])
            child = Commuter(id=kid, origin=adult.origin, dest=w.stops[cut + 1], ready=adult.ready, child=True,
                             deadline=start + 23 * 60)  # fmt: skip
            commuters.append(child)
            escorted[kid] = adult.id
        base = cm_replace(base, commuters=tuple(commuters))
        options = trips(base)
        for c in base.commuters[n_adults:]:
            w = witness[escorted[c.id]]
            prefix = w.legs[: w.stops.index(c.dest)]  # the escort's trip up to the school
            witness[c.id] = next(o for o in options[c.id] if o.legs == prefix)
    return _finish(spec, base, witness, rng, cap)


def _contested(spec: GenerationSpec, d: CommuteData, options: dict[str, list[Option]]) -> dict[str, int]:
    """Line -> spare places one fewer than the commuters whose own best trip (by the
    subtask's objective, alone) rides one of its departures, where two or more do: the
    seats then make the commuters' plans interact (someone gives way)."""
    figure: dict[str, Callable[[Option], int]] = {
        "travel_minutes": lambda o: o.arrival,
        "fares": lambda o: fare(d, o),
        "walking": lambda o: o.walking,
        "route_score": lambda o: o.score,
    }
    order = [figure[k] for k in OBJECTIVES[spec.subtask]]
    demand: dict[tuple[str, int], int] = {}
    for c in d.commuters:
        own = min(options[c.id], key=lambda o: tuple(f(o) for f in order))
        for r in own.rides:
            demand[r] = demand.get(r, 0) + 1
    cap: dict[str, int] = {}
    for (line, _), k in demand.items():
        if k >= 2:
            cap[line] = min(cap.get(line, k - 1), k - 1)
    return cap


def cm_replace(d: CommuteData, **changes: Any) -> CommuteData:
    """``d`` with fields replaced, as a new (validated) object."""
    return CommuteData.model_validate({**{f: getattr(d, f) for f in CommuteData.model_fields}, **changes})


def _finish(
    spec: GenerationSpec, d: CommuteData, w: Witness, rng: random.Random, cap: dict[str, int]
) -> tuple[CommuteData, Witness]:
    """Deadlines a few minutes after the witness arrivals, spare places at the contested
    lines' caps (see :func:`_contested`) and elsewhere at or just above the witness loads,
    car-park spaces at the witness's cars, and the minimum transfer time at most the
    witness's shortest change."""
    people = tuple(c.model_copy(update={"deadline": w[c.id].arrival + rng.randint(0, 8)}) for c in d.commuters)
    loads: dict[str, int] = {}
    counts: dict[tuple[str, int], int] = {}
    for o in w.values():
        for ride in o.rides:
            counts[ride] = counts.get(ride, 0) + 1
    for (line, _), k in counts.items():
        loads[line] = max(loads.get(line, 0), k)
    lines = tuple(
        x.model_copy(
            update={
                "seats": max(cap[x.id], loads.get(x.id, 1))
                if x.id in cap
                else max(1, loads.get(x.id, 1)) + (1 if rng.random() < 0.3 else 0)
            }
        )
        for x in d.lines
    )
    parked = {p.stop: sum(1 for o in w.values() if o.legs[0] == ("drive", p.stop)) for p in d.parkings}
    parkings = tuple(p.model_copy(update={"spaces": max(1, parked[p.stop])}) for p in d.parkings)
    waits = [x for o in w.values() for x in direct_waits(o)]
    transfer = min([rng.randint(2, 5), *waits])
    d = cm_replace(d, commuters=people, lines=lines, parkings=parkings, transfer=transfer)
    options = trips(d)
    return d, {c.id: next(o for o in options[c.id] if o.legs == w[c.id].legs) for c in d.commuters}


def _pick(rng: random.Random, options: list[str], most: int) -> list[str]:
    chosen = set(rng.sample(options, min(len(options), rng.randint(1, most))))
    return [o for o in options if o in chosen]


def _adults(d: CommuteData) -> list[str]:
    return [c.id for c in d.commuters if not c.child]


def _b_walk_limit(d: CommuteData, w: Witness, rng: random.Random) -> cm.Commuters | None:
    options = [c.id for c in d.commuters if any(o.walking > w[c.id].walking for o in trips(d)[c.id])]
    if not options:
        return None
    chosen = _pick(rng, options, 2)
    return cm.Commuters(commuters=chosen, max=max(w[x].walking for x in chosen))


def _b_fare_cap(d: CommuteData, w: Witness, rng: random.Random) -> cm.Commuters | None:
    options = [c.id for c in d.commuters if any(fare(d, o) > fare(d, w[c.id]) for o in trips(d)[c.id])]
    if not options:
        return None
    chosen = _pick(rng, options, 2)
    return cm.Commuters(commuters=chosen, max=max(fare(d, w[x]) for x in chosen))


def _b_max_transfers(d: CommuteData, w: Witness, rng: random.Random) -> cm.Commuters | None:
    def changes(o: Option) -> int:
        return max(0, len(o.rides) - 1)

    options = [c.id for c in d.commuters if any(changes(o) > changes(w[c.id]) for o in trips(d)[c.id])]
    if not options:
        return None
    chosen = _pick(rng, options, 2)
    return cm.Commuters(commuters=chosen, max=max(changes(w[x]) for x in chosen))


def _b_parking_spaces(d: CommuteData, w: Witness, rng: random.Random) -> cm.Parking | None:
    return cm.Parking(stops=[p.stop for p in d.parkings]) if d.parkings else None


def _b_buffer(d: CommuteData, w: Witness, rng: random.Random) -> cm.Buffer | None:
    slack = {c.id: c.deadline - w[c.id].arrival for c in d.commuters}
    options = [cid for cid, k in slack.items() if k >= 1]
    if not options:
        return None
    chosen = _pick(rng, options, 2)
    return cm.Buffer(commuters=chosen, minutes=rng.randint(1, min(slack[x] for x in chosen)))


def _b_arrival_order(d: CommuteData, w: Witness, rng: random.Random) -> cm.ArrivalOrder | None:
    pairs = [
        (a.id, b.id) for a in d.commuters for b in d.commuters if a.id != b.id and w[a.id].arrival <= w[b.id].arrival
    ]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    return cm.ArrivalOrder(pairs=[(a, b)], gap=rng.randint(0, w[b].arrival - w[a].arrival))


def _b_travel_balance(d: CommuteData, w: Witness, rng: random.Random) -> cm.Balance | None:
    times = [w[c.id].arrival - c.ready for c in d.commuters]
    return cm.Balance(max=max(times) - min(times) + rng.randint(0, 3))


def _b_shared_ride(d: CommuteData, w: Witness, rng: random.Random) -> cm.Pair | None:
    pairs = [
        (a.id, b.id)
        for i, a in enumerate(d.commuters)
        for b in d.commuters[i + 1 :]
        if set(w[a.id].rides) & set(w[b.id].rides)
    ]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    return cm.Pair(first=a, second=b)


def _b_escort(d: CommuteData, w: Witness, rng: random.Random) -> cm.Escorts | None:
    pairs = []
    for c in d.commuters:
        if c.child:
            adult = next(
                (a.id for a in d.commuters if not a.child and set(w[c.id].rides) <= set(w[a.id].rides)
                 and a.origin == c.origin),
                None,
            )  # fmt: skip
            if adult is None:
                return None
            pairs.append((c.id, adult))
    return cm.Escorts(pairs=pairs) if pairs else None


def _b_via_stop(d: CommuteData, w: Witness, rng: random.Random) -> cm.ViaStop | None:
    options = [(c.id, s) for c in d.commuters for s in w[c.id].stops[1:-1]]
    if not options:
        return None
    cid, stop = rng.choice(options)
    return cm.ViaStop(commuter=cid, stop=stop)


def _b_walk_fatigue(d: CommuteData, w: Witness, rng: random.Random) -> cm.WalkFatigue | None:
    longest_link = max(r.minutes for r in d.network.roads)
    for _ in range(6):
        after = rng.randint(0, 15)
        later = [
            o.ends[i] - o.starts[i]
            for o in w.values()
            for i, leg in enumerate(o.legs)
            if leg[0] == "walk" and sum(o.ends[j] - o.starts[j] for j in range(i) if o.legs[j][0] == "walk") > after
        ]
        longest = max(later, default=rng.randint(4, 8))
        if longest < longest_link:
            return cm.WalkFatigue(after=after, longest=longest)
    return None


def _b_ride_rest(d: CommuteData, w: Witness, rng: random.Random) -> cm.RideRest | None:
    """A threshold some witness trip crosses before a later ride, and the shortest rest
    the witness keeps after it; None unless some trip of some commuter rests less."""
    for _ in range(6):
        after = rng.randint(0, 15)
        waits = []
        for c in d.commuters:
            o, on_board = w[c.id], 0
            for i, leg in enumerate(o.legs):
                if leg[0] == "ride":
                    if on_board > after:
                        waits.append(o.starts[i] - (o.ends[i - 1] if i else c.ready))
                    on_board += o.ends[i] - o.starts[i]
        rest = min(waits, default=0)
        if rest >= 1 and any(rest_short(o, c.ready, after, rest) for c in d.commuters for o in trips(d)[c.id]):
            return cm.RideRest(after=after, rest=rest)
    return None


BUILDERS: dict[str, Callable[[Any, Any, random.Random], Params | None]] = {
    "walk_limit": _b_walk_limit,
    "fare_cap": _b_fare_cap,
    "max_transfers": _b_max_transfers,
    "parking_spaces": _b_parking_spaces,
    "buffer": _b_buffer,
    "arrival_order": _b_arrival_order,
    "travel_balance": _b_travel_balance,
    "shared_ride": _b_shared_ride,
    "escort": _b_escort,
    "via_stop": _b_via_stop,
    "walk_fatigue": _b_walk_fatigue,
    "ride_rest": _b_ride_rest,
}
STRUCTURAL = ("transfer_time",)


def objective_terms(subtask: str) -> list[ObjectiveTerm]:
    """The subtask's lexicographic objective (see OBJECTIVES), the route score last."""
    return [ObjectiveTerm(id=k, kind=k) for k in OBJECTIVES[subtask]]


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    """Entities and witness trips first, then one rule per sampled kind that the witness satisfies."""
    sampled = sampled_kinds(spec, TASK.base_rules)  # the sampler draws only kinds the subtask admits
    data, witness = _entities(spec, rng, spec.subtask == "park_and_ride" or "parking_spaces" in sampled)
    for kind in FORCED[spec.subtask]:
        if kind not in sampled:
            sampled.append(kind)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng, structural=STRUCTURAL)
    found = Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective_terms(spec.subtask))
    return _crowded(found, data, witness)


SEAT_PROBE_TIME = 1.0  # deterministic seconds for the seat probe of a draft


def _crowded(found: Draft, data: CommuteData, witness: Witness) -> Draft:
    """Spare places that make the commuters interact: the best plan under every rule but
    the seats is found, and each line one of whose departures it crowds beyond the
    witness's load keeps only the witness's load (at least one place), so that plan is
    no longer allowed and someone must give way. The witness still fits."""
    loose = variant(found, rules=[r for r in found.rules if r.kind != "seat_capacity"])
    sm = build(loose)
    weights = lexicographic_weights([ub for _, _, ub in sm.objective_terms])
    sm.model.minimize(cp_model.LinearExpr.weighted_sum([e for _, e, _ in sm.objective_terms], weights))
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = make_solver(SolverLimits(deterministic_time=SEAT_PROBE_TIME), optimise=True)
    if solver.solve(sm.model) != cp_model.OPTIMAL:
        return found
    chosen = _chosen(data, sm.decode(solver))
    crowd: dict[tuple[str, int], int] = {}
    for o in chosen.values():
        for r in o.rides:
            crowd[r] = crowd.get(r, 0) + 1
    kept: dict[tuple[str, int], int] = {}
    for o in witness.values():
        for r in o.rides:
            kept[r] = kept.get(r, 0) + 1
    lines = []
    for x in data.lines:
        own = max([1, *(k for (line, _), k in kept.items() if line == x.id)])
        over = any(k > x.seats or (k > own and line == x.id) for (line, _), k in crowd.items() if line == x.id)
        lines.append(x.model_copy(update={"seats": own}) if over and own < x.seats else x)
    if all(a is b for a, b in zip(lines, data.lines)):
        return found
    tight = cm_replace(data, lines=tuple(lines))
    return variant(found, data=tight.model_dump(mode="json"))


# -- hard-tier hooks -------------------------------------------------------------------
def _legs(row: dict[str, Any]) -> list[list[str]]:
    return [["ride", x["line"], x["departs"]] if x["mode"] == "ride" else [x["mode"], x["to"]] for x in row["legs"]]


def _chosen(d: CommuteData, plan: dict[str, Any]) -> dict[str, Option]:
    """The model's trips a decoded plan names."""
    by_key = {c.id: {tuple(tuple(w) for w in map(_leg_words, o.legs)): o for o in trips(d)[c.id]} for c in d.commuters}
    return {r["commuter"]: by_key[r["commuter"]][tuple(tuple(x) for x in _legs(r))] for r in plan["trips"]}


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A buffer on one commuter, the loosest that no plan meets with the other rules, by
    bisection over buffers the commuter's fastest trip alone still meets (so the conflict
    always runs through other rules: seats taken by others, fares, walking ...)."""
    d = parsed(CommuteData, draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731
    people = list(d.commuters)
    rng.shuffle(people)
    for c in people[:4]:
        arrivals = sorted({o.arrival for o in trips(d)[c.id]})
        # feasibility only changes where the latest allowed arrival passes a trip's arrival
        values = [c.deadline - a + 1 for a in reversed(arrivals) if arrivals[0] < a <= c.deadline]
        if not values:
            continue

        def trial(m: int, c: Commuter = c) -> Draft:
            return with_conflict_rule(draft_, "buffer", cm.Buffer(commuters=[c.id], minutes=m), position)

        if feasible(trial(values[-1])):
            continue  # even the tightest buffer the fastest trip meets is feasible
        found = first_infeasible(values, trial, feasible)
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A cancelled departure someone rides, or a closed stop someone passes on the way."""
    d = parsed(CommuteData, draft_.data)
    out = []
    for o in _chosen(d, plan).values():
        for line, dep in o.rides:
            out.append(make_rule("cancelled", "hard", cm.Cancelled(line=line, departure=dep)))
        for s in o.stops[1:-1]:
            if all(s not in (c.origin, c.dest) for c in d.commuters):
                out.append(make_rule("closed_stop", "hard", cm.ClosedStop(stop=s)))
    unique = list({r.model_dump_json(): r for r in out}.values())
    rng.shuffle(unique)
    return unique


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, list[list[str]]]:
    """The current plan of a ``changes`` term: commuter -> legs as strings."""
    return {r["commuter"]: _legs(r) for r in plan["trips"]}


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    """Robustness: every trip survives any one of its rides running 2-4 minutes late."""
    return make_rule("delay_robust", "hard", cm.Delay(minutes=rng.randint(2, 4))), []


UNCERTAIN_EACH = 3


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Spare places (worst: low), fares (worst: high) and ride minutes (worst: high) of
    lines. Places and ride minutes keep the drawn value at their worst end. Ride
    minutes only where no rule rewards a later arrival (an arrival order or a fairness
    gap could be broken by a ride that turns out shorter)."""
    d = parsed(CommuteData, draft_.data)
    seats = [
        Uncertain(id="", kind="seats", target=x.id, low=x.seats, high=x.seats + rng.randint(1, 2)) for x in d.lines
    ]
    fares = [Uncertain(id="", kind="fare", target=x.id, low=x.fare, high=x.fare + rng.randint(1, 2)) for x in d.lines]
    out = rng.sample(seats, min(UNCERTAIN_EACH, len(seats))) + rng.sample(fares, min(UNCERTAIN_EACH, len(fares)))
    if not any(r.kind in ("arrival_order", "travel_balance") for r in draft_.rules):
        rides = [
            Uncertain(id="", kind="ride", target=x.id, low=max(1, x.minutes - rng.randint(1, 3)), high=x.minutes)
            for x in d.lines
        ]
        out += rng.sample(rides, min(UNCERTAIN_EACH, len(rides)))
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    """The data with one line's places, fare or ride minutes set to ``value``."""
    d = parsed(CommuteData, data)
    field = {"seats": "seats", "fare": "fare", "ride": "minutes"}[u.kind]
    lines = [x.model_copy(update={field: value}) if x.id == u.target else x for x in d.lines]
    return {**data, "lines": [x.model_dump(mode="json") for x in lines]}


def worst_is_low(u: Uncertain) -> bool:
    """Fewer places is worse; higher fares and longer rides are worse."""
    return u.kind == "seats"


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    """The verification figures of a decoded plan, from the model's own trips."""
    d = parsed(CommuteData, draft_.data)
    chosen = _chosen(d, plan)
    return {
        "travel": {c.id: chosen[c.id].arrival - c.ready for c in d.commuters},
        "fare": {c.id: fare(d, chosen[c.id]) for c in d.commuters},
    }


HOOKS = HardHooks(
    base=TASK.base_rules,
    build=build,
    disruptions=disruptions,
    existing=existing,
    robust=robust,
    uncertain=uncertain,
    with_value=with_value,
    worst_is_low=worst_is_low,
)


def all_trip_keys(d: CommuteData) -> Iterator[tuple[str, str]]:
    """(commuter, trip key) of every trip variable, in model order (for tests)."""
    for c in d.commuters:
        for o in trips(d)[c.id]:
            yield c.id, o.key
