"""Checks for Travel Itinerary Planning answers: for every day of a trip, the ordered
stops (sights, and where the trip has them rest breaks or meetings) between the morning
departure from the day's hotel and the evening return.

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. Times follow one stated convention, so an order of stops fixes every time: the
traveller leaves the start hotel at the day's start time, travels every leg by the
fastest route of the road network, starts each stop on arrival or at the stop's earliest
start (opening time, booked time, window start), whichever is later, and leaves when it
ends. Every figure is recomputed here in plain Python integers.
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import OK, PlanChecker, lookup, spread_verdict
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.network_kit import RoadNetwork
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse, self_paired
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "travel_itinerary_planning"
DAY_WEIGHT = 20  # the order score weighs a stop's day number by 20 and its place in the day by 1
MINUTES_PER_DAY = 24 * 60


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Sight(_Frozen):
    """An optional sight: its own place in the network, worth ``value`` points when visited."""

    id: str = Field(description="the sight's name, also its place in the network")
    category: str = Field(description="museum, landmark, park, ... (category caps read it)")
    value: PositiveInt = Field(description="points a visit earns; the objective counts those missed")
    priority: PositiveInt = Field(description="priority points weighing the order score (distinct)")
    minutes: PositiveInt = Field(description="visit duration in minutes")
    price: NonNegativeInt = Field(description="ticket price in euros")
    opens: NonNegativeInt = Field(description="opening time, minutes after midnight")
    closes: PositiveInt = Field(description="closing time, minutes after midnight; the visit ends by then")
    closed_on: tuple[str, ...] = Field(default=(), description="days the sight is closed")
    booked_day: str | None = Field(default=None, description="day of a booked entry time")
    booked_at: NonNegativeInt | None = Field(default=None, description="booked entry time, minutes after midnight")

    @model_validator(mode="after")
    def _consistent(self) -> Sight:
        if self.opens >= self.closes:
            raise ValueError(f"sight {self.id}: opens at or after it closes")
        if (self.booked_day is None) != (self.booked_at is None):
            raise ValueError(f"sight {self.id}: a booking needs both a day and a time")
        return self

    @property
    def earliest(self) -> int:
        """The earliest start of a visit: the booked time of a booked sight, else opening."""
        return self.booked_at if self.booked_at is not None else self.opens


class Stop(_Frozen):
    """A fixed stop of one day (a rest break at the hotel, a business meeting): its
    visit starts no earlier than ``earliest`` and, under the fixed-stops rule, no later
    than ``latest`` (a meeting has both equal)."""

    id: str
    kind: str = Field(description="'rest' or 'meeting'")
    day: str
    place: str
    minutes: PositiveInt
    earliest: NonNegativeInt = Field(description="minutes after midnight")
    latest: NonNegativeInt = Field(description="minutes after midnight")

    @model_validator(mode="after")
    def _window(self) -> Stop:
        if self.earliest > self.latest:
            raise ValueError(f"stop {self.id}: window starts after it ends")
        return self


class Day(_Frozen):
    id: str
    start_place: str = Field(description="the hotel left in the morning")
    end_place: str = Field(description="the hotel returned to in the evening")
    start: NonNegativeInt = Field(description="departure time, minutes after midnight")
    end: PositiveInt = Field(description="latest return time, minutes after midnight")


class TripData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    city: str
    network: RoadNetwork
    days: tuple[Day, ...]
    sights: tuple[Sight, ...]
    stops: tuple[Stop, ...] = ()
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _known(self) -> TripData:
        places = set(self.network.places)
        ids = [d.id for d in self.days]
        names = [s.id for s in self.sights] + [s.id for s in self.stops]
        if not ids or len(set(ids)) != len(ids):
            raise ValueError("days must be listed, each once")
        if len(set(names)) != len(names):
            raise ValueError("sight and stop names must be distinct")
        for d in self.days:
            if d.start_place not in places or d.end_place not in places:
                raise ValueError(f"day {d.id}: its hotels must be places of the network")
            if d.start >= d.end:
                raise ValueError(f"day {d.id}: starts at or after its return time")
        for s in self.sights:
            if s.id not in places:
                raise ValueError(f"sight {s.id} is not a place of the network")
            if s.booked_day is not None and s.booked_day not in ids:
                raise ValueError(f"sight {s.id} is booked on unknown day {s.booked_day}")
            if any(x not in ids for x in s.closed_on):
                raise ValueError(f"sight {s.id} is closed on an unknown day")
        for t in self.stops:
            if t.day not in ids or t.place not in places:
                raise ValueError(f"stop {t.id} names an unknown day or place")
        return self

    @cached_property
    def day_by_id(self) -> dict[str, Day]:
        return {d.id: d for d in self.days}

    @cached_property
    def day_number(self) -> dict[str, int]:
        """Day id -> its number from 1."""
        return {d.id: k for k, d in enumerate(self.days, 1)}

    @cached_property
    def sight_by_id(self) -> dict[str, Sight]:
        return {s.id: s for s in self.sights}

    @cached_property
    def stop_by_id(self) -> dict[str, Stop]:
        return {s.id: s for s in self.stops}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``);
        a category is one some sight has (a cap on another would hold of nothing)."""
        if what == "category":
            return {s.category for s in self.sights}
        if what == "sight or stop":
            return {*self.sight_by_id, *self.stop_by_id}
        names: dict[str, Container[str]] = {"day": self.day_by_id, "sight": self.sight_by_id}
        return names[what]

    @cached_property
    def minutes(self) -> dict[str, dict[str, int]]:
        """Fastest travel minutes between places (the network's shortest paths)."""
        return self.network.minutes

    def stops_of(self, day: str) -> list[Stop]:
        return [s for s in self.stops if s.day == day]

    def place(self, stop: str) -> str:
        """The place of a sight or a fixed stop."""
        fixed = self.stop_by_id.get(stop)
        return fixed.place if fixed is not None else stop

    def duration(self, stop: str) -> int:
        fixed = self.stop_by_id.get(stop)
        return fixed.minutes if fixed is not None else self.sight_by_id[stop].minutes

    def earliest(self, stop: str) -> int:
        fixed = self.stop_by_id.get(stop)
        return fixed.earliest if fixed is not None else self.sight_by_id[stop].earliest


def replaced(d: TripData, **changes: Any) -> TripData:
    """``d`` with fields replaced, as a new object (``model_copy`` would keep cached lookups)."""
    return TripData.model_validate({**{f: getattr(d, f) for f in TripData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
DayName = Annotated[str, Names("day")]
SightName = Annotated[str, Names("sight")]


class DailyBudget(Params):
    """Each day's ticket spending is at most ``max`` euros."""

    max: NonNegativeInt


class DailyTravel(Params):
    """Each day's travel is at most ``max`` minutes."""

    max: NonNegativeInt


class MustSee(Params):
    """The named sights are visited."""

    sights: list[SightName]


class MaxVisits(Params):
    """At most ``max`` sights a day."""

    max: NonNegativeInt


class Precedence(Params):
    """For each pair (a, b): if b is visited, a is visited earlier in the trip."""

    pairs: list[tuple[SightName, SightName]]


class SameDay(Params):
    """The two sights are visited on the same day, or neither is (a combined ticket)."""

    sights: tuple[SightName, SightName]

    def data_problems(self, data: Any) -> list[str]:
        """Also: two different sights (a sight is always on its own day)."""
        found = super().data_problems(data)
        return found + self_paired([(self.sights[0], self.sights[1])], "sights")


class CategoryCap(Params):
    """At most ``max`` sights of ``category`` on any one day."""

    category: Annotated[str, Names("category")]
    max: NonNegativeInt


class Balance(Params):
    """The numbers of sights of any two days differ by at most ``max``."""

    max: NonNegativeInt


class TripBudget(Params):
    """Ticket spending over the whole trip is at most ``max`` euros."""

    max: NonNegativeInt


class CarryBudget(Params):
    """An allowance of ``allowance`` euros a day; unspent money carries over: spending
    through day j is at most j x allowance."""

    allowance: NonNegativeInt


class TiringDay(Params):
    """A day with more than ``minutes`` minutes of sightseeing (visit durations) is
    followed by a day with at most ``light`` minutes."""

    minutes: NonNegativeInt
    light: NonNegativeInt


class Stamina(Params):
    """The sightseeing minutes (visit durations) since the day's start or the last rest
    stop never exceed ``minutes``: a level that visits use up and a rest restores."""

    minutes: PositiveInt


class SightClosure(Params):
    """The sight cannot be visited on the named days (a disruption)."""

    sight: SightName
    days: list[DayName]


class TravelMargin(Params):
    """Robustness: every time limit still holds if every leg took ``minutes`` longer."""

    minutes: PositiveInt


class CurrentTrip(Params):
    """The current plan a ``changes`` term counts against: day -> its stops in order."""

    existing: dict[DayName, list[Annotated[str, Names("sight or stop")]]]


RULE_PARAMS: ParamsTable = {
    "opening_hours": NoParams,
    "return_by": NoParams,
    "closing_days": NoParams,
    "reservations": NoParams,
    "fixed_stops": NoParams,
    "daily_budget": DailyBudget,
    "daily_travel": DailyTravel,
    "must_see": MustSee,
    "max_visits": MaxVisits,
    "precedence": Precedence,
    "same_day": SameDay,
    "category_cap": CategoryCap,
    "balance": Balance,
    "trip_budget": TripBudget,
    "carry_budget": CarryBudget,
    "tiring_day": TiringDay,
    "stamina": Stamina,
    "sight_closure": SightClosure,
    "travel_margin": TravelMargin,
}
TERM_PARAMS: ParamsTable = {
    "value_missed": NoParams,
    "travel_minutes": NoParams,
    "order_score": NoParams,
    "changes": CurrentTrip,
}


def current_plan(changes: ObjectiveTerm) -> dict[str, list[str]]:
    """The current plan of a ``changes`` term (day -> stops in order)."""
    return as_model(parse(TERM_PARAMS, changes), CurrentTrip).existing


# -- the plan and its schedule ---------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    days: dict[str, tuple[str, ...]]  # day -> its stops (sights and fixed stops) in order
    _cache: dict[tuple[int, str, int], tuple[TripData, DaySchedule]] = field(
        default_factory=dict, compare=False, repr=False
    )


@dataclass(frozen=True)
class Visit:
    stop: str
    arrive: int
    start: int
    end: int


@dataclass(frozen=True)
class DaySchedule:
    visits: tuple[Visit, ...]
    back: int  # arrival at the end hotel
    travel: int  # travel minutes of the day (listed times, no margin)


def day_schedule(d: TripData, plan: Plan, day: str, delay: int = 0) -> DaySchedule:
    """:func:`schedule` of the plan's day, computed once per plan, data, day and delay
    (several rules and figures read it; treat it as read-only)."""
    key = (id(d), day, delay)
    hit = plan._cache.get(key)
    if hit is not None and hit[0] is d:
        return hit[1]
    out = schedule(d, day, plan.days[day], delay)
    plan._cache[key] = (d, out)
    return out


def schedule(d: TripData, day: str, stops: tuple[str, ...], delay: int = 0) -> DaySchedule:
    """The day's times under the stated convention; ``delay`` minutes are added to every
    leg between two different places (the robustness margin), the legs from and to the
    hotels included."""
    dd = d.day_by_id[day]
    here, now, travel, visits = dd.start_place, dd.start, 0, []
    for stop in stops:
        place = d.place(stop)
        leg = d.minutes[here][place]
        travel += leg
        arrive = now + leg + (delay if leg else 0)
        start = max(arrive, d.earliest(stop))
        now = start + d.duration(stop)
        visits.append(Visit(stop, arrive, start, now))
        here = place
    leg = d.minutes[here][dd.end_place]
    return DaySchedule(tuple(visits), now + leg + (delay if leg else 0), travel + leg)


def day_of(plan: Plan) -> dict[str, str]:
    """Stop -> the day it is on."""
    return {s: day for day, stops in plan.days.items() for s in stops}


def visited(d: TripData, plan: Plan, day: str) -> list[Sight]:
    return [d.sight_by_id[s] for s in plan.days[day] if s in d.sight_by_id]


def spend(d: TripData, plan: Plan) -> dict[str, int]:
    return {x.id: sum(s.price for s in visited(d, plan, x.id)) for x in d.days}


def travel(d: TripData, plan: Plan) -> dict[str, int]:
    return {x.id: day_schedule(d, plan, x.id).travel for x in d.days}


def sightseeing(d: TripData, plan: Plan) -> dict[str, int]:
    """Minutes of sight visits per day (fixed stops excluded)."""
    return {x.id: sum(s.minutes for s in visited(d, plan, x.id)) for x in d.days}


def time_problem(d: TripData, plan: Plan, delay: int) -> str | None:
    """The first time limit the plan misses with ``delay`` minutes on every leg (closing
    times, booked times, fixed stops' latest starts, return times), or None."""
    extra = f" with {delay} more minutes on every leg" if delay else ""
    for x in d.days:
        sch = day_schedule(d, plan, x.id, delay)
        for v in sch.visits:
            s = d.sight_by_id.get(v.stop)
            if s is not None and v.end > s.closes:
                return f"{s.id} on {x.id} ends at {hhmm(v.end)}, after it closes at {hhmm(s.closes)}{extra}"
            if s is not None and s.booked_at is not None and v.start != s.booked_at and x.id == s.booked_day:
                return f"{s.id} is reached at {hhmm(v.arrive)}, after its booked time {hhmm(s.booked_at)}{extra}"
            t = d.stop_by_id.get(v.stop)
            if t is not None and v.start > t.latest:
                return f"{t.id} starts at {hhmm(v.start)}, after {hhmm(t.latest)}{extra}"
        if sch.back > x.end:
            return f"on {x.id} the return to {x.end_place} is at {hhmm(sch.back)}, after {hhmm(x.end)}{extra}"
    return None


def hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
@check("opening_hours")
def _opening_hours(d: TripData, plan: Plan, p: NoParams) -> Verdict:
    for x in d.days:
        for v in day_schedule(d, plan, x.id).visits:
            s = d.sight_by_id.get(v.stop)
            if s is not None and v.end > s.closes:
                return False, f"{s.id} on {x.id} ends at {hhmm(v.end)}, after it closes at {hhmm(s.closes)}"
    return OK


@check("return_by")
def _return_by(d: TripData, plan: Plan, p: NoParams) -> Verdict:
    for x in d.days:
        back = day_schedule(d, plan, x.id).back
        if back > x.end:
            return False, f"on {x.id} the return to {x.end_place} is at {hhmm(back)}, after {hhmm(x.end)}"
    return OK


@check("closing_days")
def _closing_days(d: TripData, plan: Plan, p: NoParams) -> Verdict:
    for x in d.days:
        for s in visited(d, plan, x.id):
            if x.id in s.closed_on:
                return False, f"{s.id} is closed on {x.id} but is visited then"
    return OK


@check("reservations")
def _reservations(d: TripData, plan: Plan, p: NoParams) -> Verdict:
    """A booked sight is visited only on its booked day, entering at the booked time
    (so the traveller arrives by then)."""
    for x in d.days:
        for v in day_schedule(d, plan, x.id).visits:
            s = d.sight_by_id.get(v.stop)
            if s is None or s.booked_at is None:
                continue
            if x.id != s.booked_day:
                return False, f"{s.id} is booked for {s.booked_day} but visited on {x.id}"
            if v.start != s.booked_at:
                return False, f"{s.id} is reached at {hhmm(v.arrive)}, after its booked time {hhmm(s.booked_at)}"
    return OK


@check("fixed_stops")
def _fixed_stops(d: TripData, plan: Plan, p: NoParams) -> Verdict:
    for x in d.days:
        sch = day_schedule(d, plan, x.id)
        starts = {v.stop: v.start for v in sch.visits}
        for t in d.stops_of(x.id):
            if t.id not in starts:
                return False, f"{t.id} is missing from {x.id}"
            if starts[t.id] > t.latest:
                return False, f"{t.id} starts at {hhmm(starts[t.id])}, after {hhmm(t.latest)}"
    return OK


@check("daily_budget")
def _daily_budget(d: TripData, plan: Plan, p: DailyBudget) -> Verdict:
    for day, euros in spend(d, plan).items():
        if euros > p.max:
            return False, f"{day}'s tickets cost {euros} euros (at most {p.max})"
    return OK


@check("daily_travel")
def _daily_travel(d: TripData, plan: Plan, p: DailyTravel) -> Verdict:
    for day, minutes in travel(d, plan).items():
        if minutes > p.max:
            return False, f"{day} has {minutes} minutes of travel (at most {p.max})"
    return OK


@check("must_see")
def _must_see(d: TripData, plan: Plan, p: MustSee) -> Verdict:
    on = day_of(plan)
    missing = [s for s in p.sights if s not in on]
    return OK if not missing else (False, f"must-see {', '.join(missing)} not visited")


@check("max_visits")
def _max_visits(d: TripData, plan: Plan, p: MaxVisits) -> Verdict:
    for x in d.days:
        n = len(visited(d, plan, x.id))
        if n > p.max:
            return False, f"{x.id} has {n} sights (at most {p.max})"
    return OK


def trip_order(d: TripData, plan: Plan) -> dict[str, tuple[int, int]]:
    """Visited sight -> (day number, place in its day's list from 1)."""
    return {s: (d.day_number[day], k) for day, stops in plan.days.items() for k, s in enumerate(stops, 1)}


@check("precedence")
def _precedence(d: TripData, plan: Plan, p: Precedence) -> Verdict:
    order = trip_order(d, plan)
    for a, b in p.pairs:
        if b in order and (a not in order or order[a] >= order[b]):
            return False, f"{b} is visited but not after {a}"
    return OK


@check("same_day")
def _same_day(d: TripData, plan: Plan, p: SameDay) -> Verdict:
    on = day_of(plan)
    a, b = p.sights
    if on.get(a) != on.get(b):
        return False, f"{a} ({on.get(a, 'not visited')}) and {b} ({on.get(b, 'not visited')}) are not on one day"
    return OK


@check("category_cap")
def _category_cap(d: TripData, plan: Plan, p: CategoryCap) -> Verdict:
    for x in d.days:
        n = sum(1 for s in visited(d, plan, x.id) if s.category == p.category)
        if n > p.max:
            return False, f"{x.id} has {n} sights of category {p.category} (at most {p.max})"
    return OK


@check("balance")
def _balance(d: TripData, plan: Plan, p: Balance) -> Verdict:
    counts = {x.id: len(visited(d, plan, x.id)) for x in d.days}
    return spread_verdict(counts, p.max, "has", "sights")


@check("trip_budget")
def _trip_budget(d: TripData, plan: Plan, p: TripBudget) -> Verdict:
    total = sum(spend(d, plan).values())
    return OK if total <= p.max else (False, f"tickets cost {total} euros over the trip (at most {p.max})")


@check("carry_budget")
def _carry_budget(d: TripData, plan: Plan, p: CarryBudget) -> Verdict:
    """Walks the wallet day by day: the running spend stays within the running allowance."""
    running = 0
    for j, (day, euros) in enumerate(spend(d, plan).items(), 1):
        running += euros
        if running > j * p.allowance:
            return False, f"through {day} tickets cost {running} euros (allowance so far {j * p.allowance})"
    return OK


@check("tiring_day")
def _tiring_day(d: TripData, plan: Plan, p: TiringDay) -> Verdict:
    minutes = list(sightseeing(d, plan).items())
    for (day, m), (nxt, m2) in itertools.pairwise(minutes):
        if m > p.minutes and m2 > p.light:
            return False, f"{day} has {m} minutes of sightseeing (over {p.minutes}) and {nxt} {m2} (at most {p.light})"
    return OK


def tiredness(d: TripData, stops: tuple[str, ...]) -> list[int]:
    """After each stop of a day, the sightseeing minutes since the start or the last rest."""
    level, out = 0, []
    for stop in stops:
        fixed = d.stop_by_id.get(stop)
        if fixed is None:
            level += d.sight_by_id[stop].minutes
        elif fixed.kind == "rest":
            level = 0
        out.append(level)
    return out


@check("stamina")
def _stamina(d: TripData, plan: Plan, p: Stamina) -> Verdict:
    for x in d.days:
        for stop, level in zip(plan.days[x.id], tiredness(d, plan.days[x.id]), strict=True):
            if level > p.minutes:
                return (
                    False,
                    f"on {x.id} {stop} brings {level} minutes of sightseeing since the last rest (at most {p.minutes})",
                )
    return OK


@check("sight_closure")
def _sight_closure(d: TripData, plan: Plan, p: SightClosure) -> Verdict:
    on = day_of(plan).get(p.sight)
    return OK if on not in p.days else (False, f"{p.sight} cannot be visited on {on}")


@check("travel_margin")
def _travel_margin(d: TripData, plan: Plan, p: TravelMargin) -> Verdict:
    why = time_problem(d, plan, p.minutes)
    return OK if why is None else (False, why)


# -- objective -------------------------------------------------------------------------
def objective_value(d: TripData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "value_missed":
        on = day_of(plan)
        return sum(s.value for s in d.sights if s.id not in on)
    if kind == "travel_minutes":
        return sum(travel(d, plan).values())
    if kind == "order_score":
        order = trip_order(d, plan)
        return sum(s.priority * (DAY_WEIGHT * order[s.id][0] + order[s.id][1]) for s in d.sights if s.id in order)
    if kind == "changes":
        old = day_of(Plan({k: tuple(v) for k, v in as_model(tp, CurrentTrip).existing.items()}))
        now = day_of(plan)
        return sum(1 for s in d.sights if old.get(s.id) != now.get(s.id))
    raise ValueError(f"unknown objective kind {term.kind!r}")


def verification(d: TripData, plan: Plan) -> dict[str, dict[str, int]]:
    return {"travel": travel(d, plan), "spend": spend(d, plan)}


def neighbours(d: TripData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: a sight dropped, a missing sight inserted anywhere,
    a sight moved to another place or day, two neighbouring stops swapped, or two sights
    of different days exchanged (each takes the other's place)."""
    on = day_of(plan)
    for x in d.days:
        stops = plan.days[x.id]
        for k, s in enumerate(stops):
            rest = stops[:k] + stops[k + 1 :]
            if s in d.sight_by_id:
                yield Plan({**plan.days, x.id: rest})
                for y in d.days:
                    base = rest if y.id == x.id else plan.days[y.id]
                    for at in range(len(base) + 1):
                        if y.id != x.id or at != k:
                            yield Plan({**plan.days, x.id: rest, y.id: (*base[:at], s, *base[at:])})
            if k + 1 < len(stops):
                yield Plan({**plan.days, x.id: (*stops[:k], stops[k + 1], s, *stops[k + 2 :])})
    placed = [(day, k, s) for day, stops in plan.days.items() for k, s in enumerate(stops) if s in d.sight_by_id]
    for (da, ka, a), (db, kb, b) in itertools.combinations(placed, 2):
        if da != db:
            ra, rb = list(plan.days[da]), list(plan.days[db])
            ra[ka], rb[kb] = b, a
            yield Plan({**plan.days, da: tuple(ra), db: tuple(rb)})
    for missing in d.sights:
        if missing.id not in on:
            for y in d.days:
                base = plan.days[y.id]
                for at in range(len(base) + 1):
                    yield Plan({**plan.days, y.id: (*base[:at], missing.id, *base[at:])})


class Itinerary(PlanChecker):
    family = "routing"
    task = TASK_ID
    plan_key = "itinerary"
    plan_text = (
        "a list naming every day exactly once, each with its ordered list of stops: listed sights (each at most "
        "once in the whole trip) and that day's own fixed stops"
    )
    data_type = TripData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: TripData) -> dict[str, Any]:
        return {
            "day": lookup([x.id for x in d.days]),
            "stop": lookup([s.id for s in d.sights] + [s.id for s in d.stops]),
        }

    def read_plan(self, d: TripData, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Plan | None, str]:
        rows = section.get(self.plan_key) if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, f"'{self.plan_key}' is missing or not a list"
        days: dict[str, tuple[str, ...]] = {}
        seen: set[str] = set()
        for k, row in enumerate(rows):
            if not isinstance(row, dict):
                return None, f"day entry {k + 1} is not an object"
            name, stops = row.get("day"), row.get("stops")
            if not isinstance(name, str) or not isinstance(stops, list):
                return None, f"day entry {k + 1} needs a string 'day' and a list 'stops'"
            day = lk["day"].find(name)
            if day is None:
                return None, f"day entry {k + 1} names unknown day {name[:40]!r}"
            if day in days:
                return None, f"day {day} appears more than once"
            found: list[str] = []
            for text in stops:
                hit = lk["stop"].find(text) if isinstance(text, str) else None
                if hit is None:
                    return None, f"{day} names unknown stop {str(text)[:40]!r}"
                fixed = d.stop_by_id.get(hit)
                if fixed is not None and fixed.day != day:
                    return None, f"{hit} belongs to {fixed.day}, not {day}"
                if hit in seen:
                    return None, f"{hit} appears more than once"
                seen.add(hit)
                found.append(hit)
            days[day] = tuple(found)
        missing = [x.id for x in d.days if x.id not in days]
        if missing:
            return None, f"days missing from the itinerary: {', '.join(missing)}"
        return Plan({x.id: days[x.id] for x in d.days}), "complete plan"

    def objective_value(self, d: TripData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: TripData, plan: Plan) -> dict[str, dict[str, int]]:
        return verification(d, plan)

    def existing(self, d: TripData, plan: Plan) -> dict[str, list[str]]:
        return {day: list(stops) for day, stops in plan.days.items()}

    def plan_schema(self, d: TripData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        row = {
            "type": "object",
            "properties": {
                "day": {"enum": [x.id for x in d.days]},
                "stops": {
                    "type": "array",
                    "items": {"enum": [s.id for s in d.sights] + [s.id for s in d.stops]},
                    "description": "the day's stops in visiting order (hotels are not listed)",
                },
            },
            "required": ["day", "stops"],
        }
        return {"type": "array", "items": row, "description": "every day exactly once"}

    def verification_schema(self, d: TripData) -> dict[str, Any]:
        days = [x.id for x in d.days]
        return figures_schema({
            "travel": (days, "for each day, its travel minutes (every leg, hotel to hotel)"),
            "spend": (days, "for each day, the euros spent on tickets"),
        })  # fmt: skip

    def plan_json(self, d: TripData, plan: Plan) -> list[dict[str, Any]]:
        return [{"day": x.id, "stops": list(plan.days[x.id])} for x in d.days]

    def neighbours(self, data: TripData, plan: Plan) -> Iterator[Plan]:
        """One move from ``plan`` (see :func:`neighbours`), for the kit's near misses."""
        return neighbours(data, plan)

    def baseline_plan(self, d: TripData, instance: Instance) -> Plan:
        """Day by day: the day's fixed stops in time order, then the most valuable sights
        not yet seen, each appended while the day still ends by its return time and the
        sight by its closing time. Greedy: blind to budgets, order and travel."""
        days: dict[str, tuple[str, ...]] = {}
        used: set[str] = set()
        ranked = sorted(d.sights, key=lambda s: (-s.value, s.id))
        for x in d.days:
            stops = tuple(t.id for t in sorted(d.stops_of(x.id), key=lambda t: t.earliest))
            for s in ranked:
                if s.id in used or x.id in s.closed_on or (s.booked_day not in (None, x.id)):
                    continue
                trial = (*stops, s.id)
                sch = schedule(d, x.id, trial)
                if sch.back <= x.end and sch.visits[-1].end <= s.closes:
                    stops = trial
                    used.add(s.id)
            days[x.id] = stops
        return Plan(days)


TASK = Itinerary()
