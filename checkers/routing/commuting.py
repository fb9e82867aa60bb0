"""Checks for Commuting Planning answers: every commuter's door-to-door trip as an ordered
list of legs (a walk along one listed walk link, a ride on one listed departure of a
timetabled line, or, in park-and-ride, a drive to a park-and-ride stop as the first leg).

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. A trip's times are recomputed here from its legs (walks and drives start as soon
as the commuter is there, a ride leaves at its timetabled departure), in plain Python
integers.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import OK, PlanChecker, lookup, spread_verdict
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.network_kit import RoadNetwork
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse, self_paired
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "commuting_planning"
LINE_WEIGHT = 20  # the route score weighs a ride's line number by 20 (plus its departure number)
DAY_MINUTES = 24 * 60


# -- times -----------------------------------------------------------------------------
def clock(minutes: int) -> str:
    """Minutes after midnight as 'HH:MM' (24-hour)."""
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


_CLOCK = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*$")


# Every 'HH:MM' of the day as :func:`clock` writes it -> its minutes: the usual answer's
# times, read without the pattern (any other text is matched against it).
_CLOCKS = {clock(m): m for m in range(DAY_MINUTES)}


def read_clock(text: str) -> int | None:
    """'HH:MM' (or 'H:MM') as minutes after midnight; None for anything else."""
    known = _CLOCKS.get(text)
    if known is not None:
        return known
    hit = _CLOCK.match(text)
    if hit is None:
        return None
    h, m = int(hit.group(1)), int(hit.group(2))
    return h * 60 + m if h < 24 and m < 60 else None


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Line(_Frozen):
    """A timetabled service from ``origin`` to ``dest`` without stops between (a direct
    bus, tram or train), leaving ``origin`` at each listed departure."""

    id: str = Field(description="the line's name, e.g. 'Bus 12'")
    mode: Literal["bus", "tram", "train"]
    origin: str
    dest: str
    minutes: PositiveInt = Field(description="ride minutes from origin to dest")
    fare: NonNegativeInt = Field(description="fare of one ride")
    seats: PositiveInt = Field(description="spare places on each departure for the commuters of this plan")
    departures: tuple[NonNegativeInt, ...] = Field(description="departure times, minutes after midnight, increasing")


class Drive(_Frozen):
    """A car drive from a commuter's origin to a park-and-ride stop."""

    stop: str
    minutes: PositiveInt


class Commuter(_Frozen):
    """A person travelling from ``origin`` (leaving at ``ready``) to ``dest`` by ``deadline``."""

    id: str
    origin: str
    dest: str
    ready: NonNegativeInt = Field(description="minutes after midnight the commuter leaves the origin")
    deadline: NonNegativeInt = Field(description="minutes after midnight the commuter must arrive by")
    child: bool = False
    drives: tuple[Drive, ...] = Field(default=(), description="drives to park-and-ride stops (car owners)")


class ParkRide(_Frozen):
    """A park-and-ride car park at a stop, with its spaces and parking fee."""

    stop: str
    spaces: PositiveInt
    fee: NonNegativeInt


class CommuteData(BaseModel):
    """The network (stops joined by walk links, minutes walking), the lines, the commuters
    and the park-and-ride car parks. Validation names what is malformed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    network: RoadNetwork
    lines: tuple[Line, ...]
    commuters: tuple[Commuter, ...]
    transfer: NonNegativeInt = Field(description="minimum minutes between arriving on one ride and leaving on the next")
    max_legs: PositiveInt
    day_pass: PositiveInt | None = Field(default=None, description="a commuter's fares are capped at this price")
    parkings: tuple[ParkRide, ...] = ()
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _well_formed(self) -> CommuteData:
        stops = set(self.network.places)
        ids = [x.id for x in self.lines]
        if len(set(ids)) != len(ids):
            raise ValueError("line names must be distinct")
        for x in self.lines:
            if x.origin not in stops or x.dest not in stops or x.origin == x.dest:
                raise ValueError(f"line {x.id} must join two different stops of the network")
            if not x.departures or list(x.departures) != sorted(set(x.departures)):
                raise ValueError(f"line {x.id} needs distinct departures in increasing order")
            if x.departures[-1] + x.minutes >= DAY_MINUTES:
                raise ValueError(f"line {x.id} runs past midnight")
        people = [c.id for c in self.commuters]
        if not people or len(set(people)) != len(people):
            raise ValueError("commuter names must be distinct (and at least one)")
        parks = {p.stop for p in self.parkings}
        for c in self.commuters:
            if c.origin not in stops or c.dest not in stops or c.origin == c.dest:
                raise ValueError(f"commuter {c.id} needs an origin and a different destination among the stops")
            if any(dr.stop not in parks for dr in c.drives):
                raise ValueError(f"commuter {c.id} drives to a stop without a park-and-ride")
        if any(p.stop not in stops for p in self.parkings):
            raise ValueError("a park-and-ride is not at a stop of the network")
        return self

    @cached_property
    def line_by_id(self) -> dict[str, Line]:
        return {x.id: x for x in self.lines}

    @cached_property
    def commuter_by_id(self) -> dict[str, Commuter]:
        return {c.id: c for c in self.commuters}

    @cached_property
    def stop_number(self) -> dict[str, int]:
        """Stop -> its listed number, from 1 (the route score reads it)."""
        return {s: k for k, s in enumerate(self.network.places, 1)}

    @cached_property
    def line_number(self) -> dict[str, int]:
        return {x.id: k for k, x in enumerate(self.lines, 1)}

    @cached_property
    def parking_by_stop(self) -> dict[str, ParkRide]:
        return {p.stop: p for p in self.parkings}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {
            "commuter": self.commuter_by_id,
            "stop": self.stop_number,
            "line": self.line_by_id,
            "park-and-ride stop": self.parking_by_stop,
        }
        return names[what]

    @cached_property
    def walks(self) -> dict[tuple[str, str], int]:
        """(stop, stop) -> walk minutes, both ways, for every walk link."""
        out: dict[tuple[str, str], int] = {}
        for r in self.network.roads:
            out[r.a, r.b] = out[r.b, r.a] = r.minutes
        return out

    def walk_minutes(self, a: str, b: str) -> int | None:
        return self.walks.get((a, b))


# -- parameters ------------------------------------------------------------------------
CommuterName = Annotated[str, Names("commuter")]
StopName = Annotated[str, Names("stop")]


class Commuters(Params):
    """Named commuters and a bound."""

    commuters: list[CommuterName]
    max: NonNegativeInt


class Buffer(Params):
    """Each named commuter arrives at least ``minutes`` before their deadline."""

    commuters: list[CommuterName]
    minutes: NonNegativeInt


class ArrivalOrder(Params):
    """For each pair, the first arrives at least ``gap`` minutes before the second."""

    pairs: list[tuple[CommuterName, CommuterName]]
    gap: NonNegativeInt

    def data_problems(self, data: Any) -> list[str]:
        """Also: two different commuters per pair (one arrives 0 minutes from themselves)."""
        found = super().data_problems(data)
        return found + self_paired(self.pairs, "commuters")


class Balance(Params):
    """Travel minutes of any two commuters differ by at most ``max``."""

    max: NonNegativeInt


class Pair(Params):
    """Two named commuters."""

    first: CommuterName
    second: CommuterName

    def data_problems(self, data: Any) -> list[str]:
        """Also: two different commuters (anyone who rides shares each ride with themselves)."""
        found = super().data_problems(data)
        return found + self_paired([(self.first, self.second)], "commuters")


class Escorts(Params):
    """For each (child, escort) pair, every ride of the child is also a ride of the escort."""

    pairs: list[tuple[CommuterName, CommuterName]]

    def data_problems(self, data: Any) -> list[str]:
        """Also: two different commuters per pair (every ride of a child is a ride of the child)."""
        found = super().data_problems(data)
        return found + self_paired(self.pairs, "commuters")


class ViaStop(Params):
    """The commuter's trip passes through ``stop`` (a pick-up)."""

    commuter: CommuterName
    stop: StopName


class WalkFatigue(Params):
    """After a commuter has walked more than ``after`` minutes in total, none of their
    later walk legs takes more than ``longest`` minutes."""

    after: NonNegativeInt
    longest: NonNegativeInt


class RideRest(Params):
    """Once a commuter has been on board more than ``after`` minutes in total, each of
    their later rides is boarded at least ``rest`` minutes after they reach its stop."""

    after: NonNegativeInt
    rest: PositiveInt


class Delay(Params):
    """Every plan survives any one ride running ``minutes`` late."""

    minutes: PositiveInt


class Cancelled(Params):
    """Nobody rides the ``departure`` (minutes after midnight) of ``line``."""

    line: Annotated[str, Names("line")]
    departure: NonNegativeInt

    def data_problems(self, data: Any) -> list[str]:
        """Also: the line has that departure (else nobody could ride it and the rule is about nothing)."""
        found = super().data_problems(data)
        if not found and self.departure not in data.line_by_id[self.line].departures:
            found.append(f"{self.line} has no departure at {clock(self.departure)}")
        return found


class ClosedStop(Params):
    """No trip passes through ``stop``."""

    stop: StopName


class Parking(Params):
    """Park-and-ride car parks named by their stops (their spaces are in the data)."""

    stops: list[Annotated[str, Names("park-and-ride stop")]]


class CurrentTrips(Params):
    """The current plan a ``changes`` term counts against: commuter -> legs (each a list
    of strings: ['walk', stop], ['ride', line, 'HH:MM'] or ['drive', stop])."""

    existing: dict[CommuterName, list[list[str]]]


RULE_PARAMS: ParamsTable = {
    "deadline": NoParams,
    "seat_capacity": NoParams,
    "transfer_time": NoParams,
    "walk_limit": Commuters,
    "fare_cap": Commuters,
    "max_transfers": Commuters,
    "parking_spaces": Parking,
    "buffer": Buffer,
    "arrival_order": ArrivalOrder,
    "travel_balance": Balance,
    "shared_ride": Pair,
    "escort": Escorts,
    "via_stop": ViaStop,
    "walk_fatigue": WalkFatigue,
    "ride_rest": RideRest,
    "delay_robust": Delay,
    "cancelled": Cancelled,
    "closed_stop": ClosedStop,
}
TERM_PARAMS: ParamsTable = {
    "travel_minutes": NoParams,
    "fares": NoParams,
    "walking": NoParams,
    "route_score": NoParams,
    "changes": CurrentTrips,
}


def current_plan(changes: ObjectiveTerm) -> dict[str, list[list[str]]]:
    """The current plan of a ``changes`` term (commuter -> legs)."""
    return as_model(parse(TERM_PARAMS, changes), CurrentTrips).existing


# -- trips -----------------------------------------------------------------------------
Leg = tuple[str, ...]  # ("walk", stop) | ("ride", line, departure minutes as str) | ("drive", stop)


def leg_words(leg: Leg) -> list[str]:
    """A leg as the strings of a ``changes`` term (rides with their 'HH:MM' departure)."""
    return [leg[0], leg[1], clock(int(leg[2]))] if leg[0] == "ride" else list(leg)


def trip_key(legs: tuple[Leg, ...]) -> str:
    """A trip as one string (the solver names its trip variables by it; ride departures
    in minutes after midnight)."""
    return ";".join(" ".join(leg) for leg in legs)


class Trip(NamedTuple):
    """A commuter's trip with every time recomputed from its legs (a named tuple: every
    answer makes one per commuter, and a frozen dataclass of eight fields is slow to build)."""

    legs: tuple[Leg, ...]
    stops: tuple[str, ...]  # every stop reached, the origin first
    ends: tuple[int, ...]  # the time each leg ends (arrival at its stop)
    starts: tuple[int, ...]  # the time each leg starts (a ride: its departure)
    arrival: int
    walking: int
    ride_fares: int
    parking_fee: int

    @property
    def rides(self) -> list[tuple[str, int]]:
        return [(leg[1], int(leg[2])) for leg in self.legs if leg[0] == "ride"]

    def walk_legs(self) -> list[int]:
        """Minutes of each walk leg, in order."""
        return [self.ends[i] - self.starts[i] for i, leg in enumerate(self.legs) if leg[0] == "walk"]


def trip_of(d: CommuteData, c: Commuter, legs: tuple[Leg, ...]) -> tuple[Trip | None, str]:
    """The trip of ``legs`` for ``c``, or None and why it is no trip: legs must start at the
    origin, follow listed walk links and departures that have not yet left, visit no stop
    twice, end at the destination and number at most the data's ``max_legs``; a drive
    only as the first leg to a park-and-ride the commuter drives to."""
    if not legs:
        return None, f"{c.id}'s trip has no legs"
    if len(legs) > d.max_legs:
        return None, f"{c.id}'s trip has {len(legs)} legs (at most {d.max_legs})"
    at, now = c.origin, c.ready
    stops, ends, starts = [at], [], []
    walking = fares = fee = 0
    for k, leg in enumerate(legs):
        if leg[0] == "walk":
            minutes = d.walk_minutes(at, leg[1])
            if minutes is None:
                return None, f"{c.id}'s leg {k + 1}: no walk link from {at} to {leg[1]}"
            start, at = now, leg[1]
            now += minutes
            walking += minutes
        elif leg[0] == "ride":
            line, dep = d.line_by_id[leg[1]], int(leg[2])
            if line.origin != at:
                return None, f"{c.id}'s leg {k + 1}: {line.id} leaves from {line.origin}, not from {at}"
            if dep not in line.departures:
                return None, f"{c.id}'s leg {k + 1}: {line.id} has no departure at {clock(dep)}"
            if dep < now:
                return (
                    None,
                    f"{c.id}'s leg {k + 1}: {line.id} at {clock(dep)} has left when {c.id} is there at {clock(now)}",
                )
            start, at = dep, line.dest
            now = dep + line.minutes
            fares += line.fare
        else:
            drive = next((dr for dr in c.drives if dr.stop == leg[1]), None)
            if k or drive is None:
                return None, f"{c.id}'s leg {k + 1}: {c.id} cannot drive to {leg[1]} there"
            start, at = now, drive.stop
            now += drive.minutes
            fee += d.parking_by_stop[drive.stop].fee
        if at in stops:
            return None, f"{c.id}'s trip reaches {at} twice"
        stops.append(at)
        starts.append(start)
        ends.append(now)
    if at != c.dest:
        return None, f"{c.id}'s trip ends at {at}, not at {c.dest}"
    trip = Trip(tuple(legs), tuple(stops), tuple(ends), tuple(starts), now, walking, fares, fee)
    return trip, "complete trip"


def fare_of(d: CommuteData, t: Trip) -> int:
    """Ride fares (capped at the day-pass price where there is one) plus parking fees."""
    rides = t.ride_fares if d.day_pass is None else min(t.ride_fares, d.day_pass)
    return rides + t.parking_fee


def transfers(t: Trip) -> list[tuple[int, int]]:
    """(arrival, next departure) of every change from one ride directly to another."""
    return [
        (t.ends[i], t.starts[i + 1])
        for i in range(len(t.legs) - 1)
        if t.legs[i][0] == "ride" and t.legs[i + 1][0] == "ride"
    ]


def survives_delay(d: CommuteData, c: Commuter, t: Trip, delay: int) -> tuple[bool, str]:
    """Replays the trip with one ride at a time arriving ``delay`` minutes late: the next
    ride must still be caught (with the minimum transfer time when boarded straight from
    the late ride), and after the last ride the commuter must still arrive by the deadline."""
    for i, leg in enumerate(t.legs):
        if leg[0] != "ride":
            continue
        now = t.ends[i] + delay
        for j in range(i + 1, len(t.legs)):
            if t.legs[j][0] == "ride":
                need = d.transfer if j == i + 1 else 0
                if now + need > t.starts[j]:
                    return (
                        False,
                        f"{c.id} would miss {t.legs[j][1]} at {clock(t.starts[j])} if {leg[1]} ran {delay} minutes late",
                    )
                break
            now += t.ends[j] - t.starts[j]
        else:
            if now > c.deadline:
                return (
                    False,
                    f"{c.id} would arrive at {clock(now)}, after the deadline, if {leg[1]} ran {delay} minutes late",
                )
    return True, "holds"


# -- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """Every commuter's trip, replayed."""

    trips: dict[str, Trip]  # commuter -> trip


def load(plan: Plan) -> dict[tuple[str, int], list[str]]:
    """(line, departure) -> the commuters riding it, in commuter order."""
    out: dict[tuple[str, int], list[str]] = {}
    for cid, t in plan.trips.items():
        for ride in t.rides:
            out.setdefault(ride, []).append(cid)
    return out


def travel(d: CommuteData, plan: Plan, cid: str) -> int:
    """Minutes from the commuter's leaving time to their arrival."""
    return plan.trips[cid].arrival - d.commuter_by_id[cid].ready


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
@check("deadline")
def _deadline(d: CommuteData, plan: Plan, p: NoParams) -> Verdict:
    for c in d.commuters:
        t = plan.trips[c.id]
        if t.arrival > c.deadline:
            return False, f"{c.id} arrives at {clock(t.arrival)}, after the deadline {clock(c.deadline)}"
    return OK


@check("seat_capacity")
def _seat_capacity(d: CommuteData, plan: Plan, p: NoParams) -> Verdict:
    for (line, dep), who in load(plan).items():
        if len(who) > d.line_by_id[line].seats:
            return False, f"{len(who)} commuters ride {line} at {clock(dep)} (spare places {d.line_by_id[line].seats})"
    return OK


@check("transfer_time")
def _transfer_time(d: CommuteData, plan: Plan, p: NoParams) -> Verdict:
    for cid, t in plan.trips.items():
        for arrive, leave in transfers(t):
            if leave - arrive < d.transfer:
                return (
                    False,
                    f"{cid} changes rides in {leave - arrive} minutes at {clock(arrive)} (at least {d.transfer})",
                )
    return OK


@check("walk_limit")
def _walk_limit(d: CommuteData, plan: Plan, p: Commuters) -> Verdict:
    for cid in p.commuters:
        if plan.trips[cid].walking > p.max:
            return False, f"{cid} walks {plan.trips[cid].walking} minutes (at most {p.max})"
    return OK


@check("fare_cap")
def _fare_cap(d: CommuteData, plan: Plan, p: Commuters) -> Verdict:
    for cid in p.commuters:
        fare = fare_of(d, plan.trips[cid])
        if fare > p.max:
            return False, f"{cid} pays {fare} (at most {p.max})"
    return OK


@check("max_transfers")
def _max_transfers(d: CommuteData, plan: Plan, p: Commuters) -> Verdict:
    for cid in p.commuters:
        changes = max(0, len(plan.trips[cid].rides) - 1)
        if changes > p.max:
            return False, f"{cid} changes vehicle {changes} times (at most {p.max})"
    return OK


@check("parking_spaces")
def _parking_spaces(d: CommuteData, plan: Plan, p: Parking) -> Verdict:
    for stop in p.stops:
        who = [cid for cid, t in plan.trips.items() if t.legs[0] == ("drive", stop)]
        if len(who) > d.parking_by_stop[stop].spaces:
            return False, f"{len(who)} cars park at {stop} (spaces {d.parking_by_stop[stop].spaces})"
    return OK


@check("buffer")
def _buffer(d: CommuteData, plan: Plan, p: Buffer) -> Verdict:
    for cid in p.commuters:
        latest = d.commuter_by_id[cid].deadline - p.minutes
        if plan.trips[cid].arrival > latest:
            return False, f"{cid} arrives at {clock(plan.trips[cid].arrival)}, later than {clock(latest)}"
    return OK


@check("arrival_order")
def _arrival_order(d: CommuteData, plan: Plan, p: ArrivalOrder) -> Verdict:
    for a, b in p.pairs:
        ta, tb = plan.trips[a].arrival, plan.trips[b].arrival
        if tb - ta < p.gap:
            return False, f"{a} arrives at {clock(ta)} and {b} at {clock(tb)}: not {p.gap} minutes apart in that order"
    return OK


@check("travel_balance")
def _travel_balance(d: CommuteData, plan: Plan, p: Balance) -> Verdict:
    times = {c.id: travel(d, plan, c.id) for c in d.commuters}
    return spread_verdict(times, p.max, "travels", "minutes")


@check("shared_ride")
def _shared_ride(d: CommuteData, plan: Plan, p: Pair) -> Verdict:
    if set(plan.trips[p.first].rides) & set(plan.trips[p.second].rides):
        return OK
    return False, f"{p.first} and {p.second} share no departure"


@check("escort")
def _escort(d: CommuteData, plan: Plan, p: Escorts) -> Verdict:
    for child, adult in p.pairs:
        theirs = set(plan.trips[adult].rides)
        for line, dep in plan.trips[child].rides:
            if (line, dep) not in theirs:
                return False, f"{child} rides {line} at {clock(dep)} without {adult}"
    return OK


@check("via_stop")
def _via_stop(d: CommuteData, plan: Plan, p: ViaStop) -> Verdict:
    return OK if p.stop in plan.trips[p.commuter].stops else (False, f"{p.commuter} does not pass {p.stop}")


@check("walk_fatigue")
def _walk_fatigue(d: CommuteData, plan: Plan, p: WalkFatigue) -> Verdict:
    """Walks each trip leg by leg, carrying the minutes walked so far."""
    for cid, t in plan.trips.items():
        walked = 0
        for minutes in t.walk_legs():
            if walked > p.after and minutes > p.longest:
                return False, f"{cid} walks {minutes} minutes after {walked} minutes walked (at most {p.longest})"
            walked += minutes
    return OK


@check("ride_rest")
def _ride_rest(d: CommuteData, plan: Plan, p: RideRest) -> Verdict:
    """Walks each trip leg by leg, carrying the minutes spent on board so far."""
    for cid, t in plan.trips.items():
        on_board = 0
        for i, leg in enumerate(t.legs):
            if leg[0] != "ride":
                continue
            there = t.ends[i - 1] if i else d.commuter_by_id[cid].ready
            if on_board > p.after and t.starts[i] - there < p.rest:
                return False, (
                    f"{cid} boards {leg[1]} at {clock(t.starts[i])} {t.starts[i] - there} minutes after reaching the "
                    f"stop, after {on_board} minutes on board (at least {p.rest})"
                )
            on_board += t.ends[i] - t.starts[i]
    return OK


@check("delay_robust")
def _delay_robust(d: CommuteData, plan: Plan, p: Delay) -> Verdict:
    for c in d.commuters:
        ok, why = survives_delay(d, c, plan.trips[c.id], p.minutes)
        if not ok:
            return False, why
    return OK


@check("cancelled")
def _cancelled(d: CommuteData, plan: Plan, p: Cancelled) -> Verdict:
    for cid, t in plan.trips.items():
        if (p.line, p.departure) in t.rides:
            return False, f"{cid} rides the cancelled {p.line} at {clock(p.departure)}"
    return OK


@check("closed_stop")
def _closed_stop(d: CommuteData, plan: Plan, p: ClosedStop) -> Verdict:
    for cid, t in plan.trips.items():
        if p.stop in t.stops:
            return False, f"{cid} passes the closed stop {p.stop}"
    return OK


# -- objective -------------------------------------------------------------------------
def route_score(d: CommuteData, t: Trip) -> int:
    """Each walk or drive scores the listed number of the stop it ends at; each ride
    scores 20 × its line's number + the number of its departure in the line's list."""
    total = 0
    for leg in t.legs:
        if leg[0] == "ride":
            line = d.line_by_id[leg[1]]
            total += LINE_WEIGHT * d.line_number[line.id] + line.departures.index(int(leg[2])) + 1
        else:
            total += d.stop_number[leg[1]]
    return total


def objective_value(d: CommuteData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    """The plan's figure for one objective term, recomputed from its trips."""
    kind = term.kind
    if kind == "travel_minutes":
        return sum(travel(d, plan, c.id) for c in d.commuters)
    if kind == "fares":
        return sum(fare_of(d, plan.trips[c.id]) for c in d.commuters)
    if kind == "walking":
        return sum(plan.trips[c.id].walking for c in d.commuters)
    if kind == "route_score":
        return sum(route_score(d, plan.trips[c.id]) for c in d.commuters)
    if kind == "changes":
        old = as_model(tp, CurrentTrips).existing
        return sum(1 for c in d.commuters if [leg_words(leg) for leg in plan.trips[c.id].legs] != old.get(c.id))
    raise ValueError(f"unknown objective kind {term.kind!r}")


# -- reading ---------------------------------------------------------------------------
_MODES = frozenset(("walk", "ride", "drive"))


def _leg_of(row: Any, lk: dict[str, Any]) -> tuple[Leg | None, str]:
    if not isinstance(row, dict) or not isinstance(row.get("mode"), str):
        return None, "needs an object with a string 'mode' (walk, ride or drive)"
    mode = row["mode"]
    if mode not in _MODES:  # the usual spellings stand for themselves
        mode = mode.strip().lower()
    if mode in ("walk", "drive"):
        to = row.get("to")
        stop = lk["stop"].find(to) if isinstance(to, str) else None
        if stop is None:
            return None, f"{mode} names no listed stop under 'to' ({str(to)[:40]!r})"
        return (mode, stop), ""
    if mode == "ride":
        name, when = row.get("line"), row.get("departs")
        line = lk["line"].find(name) if isinstance(name, str) else None
        if line is None:
            return None, f"ride names no listed line ({str(name)[:40]!r})"
        minutes = read_clock(when) if isinstance(when, str) else None
        if minutes is None:
            return None, f"ride on {line} needs 'departs' as HH:MM ({str(when)[:20]!r})"
        return ("ride", line, str(minutes)), ""
    return None, f"unknown mode {mode[:20]!r}"


def every_trip(d: CommuteData, c: Commuter) -> list[Trip]:
    """Every trip of ``c``, found by extending legs one at a time from the origin (each
    prefix replayed by :func:`trip_of` semantics, at most ``max_legs`` legs): the
    checker's own search, for near-miss moves and the baseline; grading never calls it."""
    found: list[Trip] = []

    def grow(legs: tuple[Leg, ...], at: str, now: int, seen: frozenset[str]) -> None:
        if at == c.dest:
            t, _ = trip_of(d, c, legs)
            if t is not None:
                found.append(t)
            return
        if len(legs) == d.max_legs:
            return
        if not legs:
            for dr in c.drives:
                if dr.stop not in seen:
                    grow((("drive", dr.stop),), dr.stop, now + dr.minutes, seen | {dr.stop})
        for s in sorted(d.network.graph.neighbors(at)):
            if s not in seen:
                grow((*legs, ("walk", s)), s, now + (d.walk_minutes(at, s) or 0), seen | {s})
        for x in d.lines:
            if x.origin == at and x.dest not in seen:
                for dep in x.departures:
                    if dep >= now:
                        grow((*legs, ("ride", x.id, str(dep))), x.dest, dep + x.minutes, seen | {x.dest})

    grow((), c.origin, c.ready, frozenset({c.origin}))
    return found


def neighbours(d: CommuteData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one commuter's trip exchanged for another of theirs."""
    for c in d.commuters:
        for t in every_trip(d, c):
            if t.legs != plan.trips[c.id].legs:
                yield Plan({**plan.trips, c.id: t})


class Commuting(PlanChecker):
    """The grading side of Commuting Planning."""

    family = "routing"
    task = TASK_ID
    plan_key = "trips"
    plan_text = (
        "a list of trips naming every commuter exactly once, each with its ordered legs (walk to a stop along a "
        "walk link, ride a listed line at one of its departure times, or drive to a park-and-ride as the first leg) "
        "from the commuter's origin to their destination, no stop reached twice, at most the stated number of legs, "
        "and the arrival time those legs give"
    )
    data_type = CommuteData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: CommuteData) -> dict[str, Any]:
        return {
            "commuter": lookup([c.id for c in d.commuters]),
            "stop": lookup(list(d.network.places)),
            "line": lookup([x.id for x in d.lines]),
        }

    def read_plan(self, d: CommuteData, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Plan | None, str]:
        rows = section.get("trips") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'trips' is missing or not a list"
        trips: dict[str, Trip] = {}
        for k, row in enumerate(rows):
            if not isinstance(row, dict) or not isinstance(row.get("commuter"), str):
                return None, f"trip {k + 1} needs an object with a string 'commuter'"
            cid = lk["commuter"].find(row["commuter"])
            if cid is None:
                return None, f"trip {k + 1} names unknown commuter {row['commuter'][:40]!r}"
            if cid in trips:
                return None, f"commuter {cid} appears more than once"
            legs_in = row.get("legs")
            if not isinstance(legs_in, list) or len(legs_in) > 2 * d.max_legs + 2:
                return None, f"{cid}'s 'legs' is missing, not a list or far too long"
            legs: list[Leg] = []
            for j, leg_row in enumerate(legs_in):
                leg, why = _leg_of(leg_row, lk)
                if leg is None:
                    return None, f"{cid}'s leg {j + 1} {why}"
                legs.append(leg)
            trip, why = trip_of(d, d.commuter_by_id[cid], tuple(legs))
            if trip is None:
                return None, why
            stated = row.get("arrival")
            if not isinstance(stated, str) or read_clock(stated) != trip.arrival:
                return (
                    None,
                    f"{cid}'s stated arrival {str(stated)[:20]!r} is not the {clock(trip.arrival)} its legs give",
                )
            trips[cid] = trip
        missing = [c.id for c in d.commuters if c.id not in trips]
        if missing:
            return None, f"commuters missing from the trips: {', '.join(missing)}"
        return Plan({c.id: trips[c.id] for c in d.commuters}), "complete plan"

    def objective_value(self, d: CommuteData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: CommuteData, plan: Plan) -> dict[str, dict[str, int]]:
        return {
            "travel": {c.id: travel(d, plan, c.id) for c in d.commuters},
            "fare": {c.id: fare_of(d, plan.trips[c.id]) for c in d.commuters},
        }

    def existing(self, d: CommuteData, plan: Plan) -> dict[str, list[list[str]]]:
        return {c.id: [leg_words(leg) for leg in plan.trips[c.id].legs] for c in d.commuters}

    def plan_schema(self, d: CommuteData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        modes = ["walk", "ride", "drive"] if d.parkings else ["walk", "ride"]
        leg = {
            "type": "object",
            "properties": {
                "mode": {"enum": modes},
                "to": {"enum": list(d.network.places), "description": "walk or drive: the stop the leg ends at"},
                "line": {"enum": [x.id for x in d.lines], "description": "ride: the line"},
                "departs": {"type": "string", "description": "ride: the departure time, HH:MM"},
            },
            "required": ["mode"],
        }
        row = {
            "type": "object",
            "properties": {
                "commuter": {"enum": [c.id for c in d.commuters]},
                "legs": {"type": "array", "items": leg, "description": "in travel order"},
                "arrival": {"type": "string", "description": "arrival time at the destination, HH:MM"},
            },
            "required": ["commuter", "legs", "arrival"],
        }
        return {"type": "array", "items": row, "description": "every commuter exactly once"}

    def verification_schema(self, d: CommuteData) -> dict[str, Any]:
        names = [c.id for c in d.commuters]
        return figures_schema({
            "travel": (names, "for each commuter, minutes from leaving the origin to arriving"),
            "fare": (names, "for each commuter, the fares (and parking fee) they pay"),
        })  # fmt: skip

    def plan_json(self, d: CommuteData, plan: Plan) -> list[dict[str, Any]]:
        rows = []
        for c in d.commuters:
            t = plan.trips[c.id]
            legs: list[dict[str, str]] = []
            for leg in t.legs:
                if leg[0] == "ride":
                    legs.append({"mode": "ride", "line": leg[1], "departs": clock(int(leg[2]))})
                else:
                    legs.append({"mode": leg[0], "to": leg[1]})
            rows.append({"commuter": c.id, "legs": legs, "arrival": clock(t.arrival)})
        return rows

    def neighbours(self, data: CommuteData, plan: Plan) -> Iterator[Plan]:
        return neighbours(data, plan)

    def baseline_plan(self, d: CommuteData, instance: Instance) -> Plan:
        """Each commuter alone: among their trips of fewest legs, the one arriving
        earliest (the first found on a tie), blind to seats, deadlines, fares and every
        other rule and to the other commuters."""
        trips: dict[str, Trip] = {}
        for c in d.commuters:
            options = every_trip(d, c)
            if not options:  # no trip at all: an answer that fails the format item
                options = [Trip((("walk", c.dest),), (c.origin, c.dest), (c.ready,), (c.ready,), c.ready, 0, 0, 0)]
            trips[c.id] = min(options, key=lambda t: (len(t.legs), t.arrival))
        return Plan(trips)


TASK = Commuting()
