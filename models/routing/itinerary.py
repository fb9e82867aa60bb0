"""Travel Itinerary Planning: which sights to visit on which day of a trip, and in what
order (orienteering with time windows over a road network).

Decision: per day, one circuit (``AddCircuit``) over the day's nodes -- its start hotel,
its end hotel (the same place on most days; a different one on a moving day), every
sight and the day's fixed stops. The arc end -> start is always on, so the circuit is the
day's route start -> stops -> end; a sight's self-loop means it is skipped that day, and
every sight is visited on at most one day. Arc literals are the answer variables. Times
propagate along the arcs (a stop starts no earlier than the previous one's end plus the
fastest travel between them, and no earlier than its own earliest start); they are
lower bounds only, and every time rule is an upper bound, so a route is feasible in the
model exactly when the checker's earliest-start schedule of it is.

The objective is lexicographic: the value of the sights missed, then travel minutes,
then a stated order score (a sight's distinct priority points x (20 x day number + its
place in the day)), which separates routes that tie on value and travel -- a day's route
and its reverse, two days' swapped contents -- as stated data, not hidden tie-breaks.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.routing import itinerary as it
from pbsolve.checkers.routing.itinerary import Day, Sight, Stop, TripData
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
from pbsolve.model_kit import (
    Encoder,
    HardHooks,
    ModelBase,
    added_rule,
    alone_infeasible,
    first_infeasible,
    solver_model,
    with_conflict_rule,
)
from pbsolve.network_kit import SHAPES, sample_network
from pbsolve.params import NoParams, Params, make_rule
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=it.TASK_ID,
    name="Travel Itinerary Planning",
    family="routing",
    summary="choose and order a multi-day trip's sights under opening hours, bookings, budgets and return times",
    subtasks=(
        SubtaskSpec("city_break", "City break", "a few days from one hotel with must-see sights"),
        SubtaskSpec("family_trip", "Family trip", "a rest break back at the hotel inside a midday window every day"),
        SubtaskSpec("museum_pass", "Museum pass", "museums covered by a pass; other tickets within one trip budget"),
        SubtaskSpec("multi_city", "Multi-city trip", "the hotel changes mid-trip: the moving day ends elsewhere"),
        SubtaskSpec("business_trip", "Business trip", "fixed-time meetings at client sites, sights fitted around"),
    ),
    pool=(
        ConstraintSpec("opening_hours", "basic", "every visit ends by the sight's closing time"),
        ConstraintSpec("return_by", "basic", "back at the evening hotel by the day's return time"),
        ConstraintSpec("closing_days", "basic", "sights closed on some days"),
        ConstraintSpec("reservations", "basic", "booked sights only at their booked day and time"),
        ConstraintSpec("fixed_stops", "basic", "each day's rest break or meeting, started within its window"),
        ConstraintSpec("daily_budget", "basic", "ticket spending per day capped"),
        ConstraintSpec("daily_travel", "basic", "travel minutes per day capped"),
        ConstraintSpec("must_see", "basic", "named sights are visited"),
        ConstraintSpec("max_visits", "basic", "at most so many sights a day"),
        ConstraintSpec("precedence", "medium", "a sight only after another one"),
        ConstraintSpec("same_day", "medium", "a combined ticket: two sights on one day or neither"),
        ConstraintSpec("category_cap", "medium", "variety: at most so many sights of a category a day"),
        ConstraintSpec("balance", "medium", "balance: sights per day within a stated gap"),
        ConstraintSpec("trip_budget", "medium", "ticket spending over the whole trip capped"),
        ConstraintSpec("carry_budget", "stateful", "a daily allowance whose unspent part carries over"),
        ConstraintSpec("tiring_day", "stateful", "a long sightseeing day is followed by a light one"),
        ConstraintSpec("stamina", "stateful", "a stamina level along the route: visits use it, a rest restores it"),
        *mechanism_pool("every time limit still holds if every leg of travel took a stated margin longer"),
    ),
    base_rules=("opening_hours", "return_by"),
)

CITIES = ("Lisbon", "Prague", "Vienna", "Seville", "Krakow", "Porto", "Ghent", "Bologna")
SIGHTS = (
    ("Cathedral", "landmark"), ("Old Town Hall", "landmark"), ("Castle Hill", "landmark"),
    ("Royal Palace", "landmark"), ("Opera House", "landmark"), ("Harbour Tower", "landmark"),
    ("Maritime Museum", "museum"), ("Art Gallery", "museum"), ("Science Museum", "museum"),
    ("History Museum", "museum"), ("Modern Art Museum", "museum"), ("Toy Museum", "museum"),
    ("Botanical Garden", "park"), ("City Park", "park"), ("Riverside Promenade", "park"),
    ("Zoo", "park"), ("Market Hall", "market"), ("Flea Market", "market"), ("Aquarium", "attraction"),
    ("Observatory", "attraction"),
)  # fmt: skip
HOTELS = ("Hotel Aurora", "Lakeside Lodge", "Grand Hotel Central", "Harbour Inn")
VENUES = ("Acme offices", "Convention Centre", "Birch Ltd headquarters", "Delta Bank tower")
DAYS = ("Thu", "Fri", "Sat", "Sun", "Mon")
FORCED: dict[str, tuple[str, ...]] = {
    "city_break": ("must_see",),
    "family_trip": ("fixed_stops",),
    "museum_pass": ("trip_budget",),
    "multi_city": (),
    "business_trip": ("fixed_stops",),
}
START = "@start"  # node names of a day's hotels (never a sight's or stop's name)
END = "@end"
PROBE_TIME = 2.0
# measured on 20 default drafts (hard tier off, 1 worker): solves without the LP relaxation took 0.58 s
# against 1.6 s with it (the circuits' LP cuts do not pay at this size), and the uniqueness re-optimisation
# without presolve 0.59 s against 1.06 s with it (first solves 0.58 s), the same certificates
# Default size: 5 sights over 2 days with a witness of 1-2 sights a day and 30-120 minutes to spare before
# each return time (the optimum visits about 3.6 sights, all 5 in 1 draft in 10; with 2-3 a day, 7 optimal
# plans in 10 visited every sight and the value term said nothing): about 22 certified instances per CPU
# second against 17 with 6 sights.
PARAMETERS = {"linearization_level": 0}
UNIQUENESS_PARAMETERS = {"cp_model_presolve": False}


class TripSizes(Settings):
    """How big an itinerary instance is."""

    days: PositiveInt = Field(ge=1, le=len(DAYS))
    sights: PositiveInt = Field(ge=2, le=len(SIGHTS))
    per_day: PositiveRange = Field(description="sights the witness visits on one day")
    road: PositiveRange = Field(description="minutes of one road")
    visit: PositiveRange = Field(description="visit minutes, in quarter hours")


SIZES = SizeTable[TripSizes](
    tiny=TripSizes(
        days=2, sights=3, per_day=PositiveRange(lo=1, hi=1), road=PositiveRange(lo=5, hi=15),
        visit=PositiveRange(lo=4, hi=8),
    ),
    small=TripSizes(
        days=2, sights=4, per_day=PositiveRange(lo=1, hi=2), road=PositiveRange(lo=5, hi=20),
        visit=PositiveRange(lo=4, hi=8),
    ),
    default=TripSizes(
        days=2, sights=5, per_day=PositiveRange(lo=1, hi=2), road=PositiveRange(lo=5, hi=20),
        visit=PositiveRange(lo=4, hi=10),
    ),
    large=TripSizes(
        days=4, sights=14, per_day=PositiveRange(lo=2, hi=3), road=PositiveRange(lo=5, hi=25),
        visit=PositiveRange(lo=4, hi=10),
    ),
)  # fmt: skip


def arc_name(day: str, a: str, b: str) -> str:
    """The answer variable of the arc a -> b on ``day`` (a self-loop: the node is skipped)."""
    return f"a[{day}|{a}|{b}]"


# -- the CP-SAT model ------------------------------------------------------------------
class TripModel(ModelBase):
    """Per-day circuits, visits, positions and times (see the module docstring)."""

    def __init__(self, data: TripData) -> None:
        super().__init__()
        self.data = d = data
        self.arcs: dict[tuple[str, str, str], cp_model.IntVar] = {}  # (day, a, b) -> literal (answer variables)
        self.vis: dict[tuple[str, str], cp_model.IntVar] = {}  # (day, stop) -> visited that day
        self.pos: dict[tuple[str, str], cp_model.IntVar] = {}  # (day, stop) -> place in the day (0: skipped)
        self.nodes: dict[str, list[str]] = {}
        self.horizon = self._horizon()
        on = self.m.new_constant(1)
        for x in d.days:
            stops = [s.id for s in d.sights] + [t.id for t in d.stops_of(x.id)]
            self.nodes[x.id] = stops
            n = len(stops)
            arcs: list[tuple[int, int, cp_model.IntVar]] = [(1, 0, on)]
            idx = {START: 0, END: 1, **{s: k + 2 for k, s in enumerate(stops)}}
            pairs = [(START, END)] + [(START, s) for s in stops] + [(s, END) for s in stops]
            pairs += [(a, b) for a in stops for b in stops]
            for a, b in pairs:
                lit = self.m.new_bool_var(arc_name(x.id, a, b))
                self.arcs[x.id, a, b] = lit
                arcs.append((idx[a], idx[b], lit))
            self.m.add_circuit(arcs)
            for s in stops:
                v = self.m.new_bool_var(f"vis[{x.id}|{s}]")
                self.m.add(v + self.arcs[x.id, s, s] == 1)
                self.vis[x.id, s] = v
                self.pos[x.id, s] = self.m.new_int_var(0, n, f"pos[{x.id}|{s}]")
            for s in stops:  # the place in the day follows the arcs (0 when skipped)
                p = self.pos[x.id, s]
                self.m.add(p == 0).only_enforce_if(self.arcs[x.id, s, s])
                self.m.add(p == 1).only_enforce_if(self.arcs[x.id, START, s])
                for b in stops:
                    if b != s:
                        self.m.add(self.pos[x.id, b] == p + 1).only_enforce_if(self.arcs[x.id, s, b])
        self.seen: dict[str, cp_model.IntVar] = {}
        for one in d.sights:
            v = self.m.new_bool_var(f"seen[{one.id}]")
            self.m.add(v == cp_model.LinearExpr.sum([self.vis[x.id, one.id] for x in d.days]))
            self.seen[one.id] = v
        self.t, self.back = self.times(0, None)

    def _horizon(self) -> int:
        """An upper bound on any time of any route (every stop, every leg, every wait)."""
        d = self.data
        longest = max(max(row.values()) for row in d.minutes.values())
        stops = len(d.sights) + len(d.stops)
        waits = max([s.earliest for s in d.sights] + [t.earliest for t in d.stops] + [x.start for x in d.days])
        durations = sum(s.minutes for s in d.sights) + sum(t.minutes for t in d.stops)
        return waits + durations + (stops + 2) * (longest + 60)

    def times(
        self, delay: int, lit: cp_model.IntVar | None
    ) -> tuple[dict[tuple[str, str], cp_model.IntVar], dict[str, cp_model.IntVar]]:
        """Start times per (day, stop) and return times per day, with ``delay`` minutes on
        every leg; the propagation is enforced by each arc (and ``lit`` when given)."""
        d, mins = self.data, self.data.minutes
        t: dict[tuple[str, str], cp_model.IntVar] = {}
        back: dict[str, cp_model.IntVar] = {}
        extra = [] if lit is None else [lit]

        def leg(a: str, b: str) -> int:  # the margin applies to legs between two different places
            return mins[a][b] + (delay if mins[a][b] else 0)

        for x in d.days:
            for s in self.nodes[x.id]:
                t[x.id, s] = self.m.new_int_var(d.earliest(s), self.horizon, f"t{delay}[{x.id}|{s}]")
            back[x.id] = self.m.new_int_var(0, self.horizon, f"back{delay}[{x.id}]")
            here, there = x.start_place, x.end_place
            self.m.add(back[x.id] >= x.start + leg(here, there)).only_enforce_if([self.arcs[x.id, START, END], *extra])
            for s in self.nodes[x.id]:
                ps = d.place(s)
                self.m.add(t[x.id, s] >= x.start + leg(here, ps)).only_enforce_if([self.arcs[x.id, START, s], *extra])
                done = t[x.id, s] + d.duration(s)
                self.m.add(back[x.id] >= done + leg(ps, there)).only_enforce_if([self.arcs[x.id, s, END], *extra])
                for b in self.nodes[x.id]:
                    if b != s:
                        self.m.add(t[x.id, b] >= done + leg(ps, d.place(b))).only_enforce_if(
                            [self.arcs[x.id, s, b], *extra]
                        )
        return t, back

    def travel(self, day: str) -> cp_model.LinearExpr:
        d, mins = self.data, self.data.minutes
        x = d.day_by_id[day]
        cells = []
        for (dd, a, b), v in self.arcs.items():
            if dd != day or a == b:
                continue
            pa = x.start_place if a == START else d.place(a)
            pb = x.end_place if b == END else d.place(b)
            if mins[pa][pb]:
                cells.append((v, mins[pa][pb]))
        return cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells])

    def spend(self, day: str) -> cp_model.LinearExpr:
        sights = [s for s in self.data.sights if s.price]
        return cp_model.LinearExpr.weighted_sum([self.vis[day, s.id] for s in sights], [s.price for s in sights])

    def count(self, day: str, sights: list[Sight] | None = None) -> cp_model.LinearExpr:
        chosen = self.data.sights if sights is None else sights
        return cp_model.LinearExpr.sum([self.vis[day, s.id] for s in chosen])

    def sightseeing(self, day: str) -> cp_model.LinearExpr:
        sights = self.data.sights
        return cp_model.LinearExpr.weighted_sum([self.vis[day, s.id] for s in sights], [s.minutes for s in sights])

    def order(self, sight: str) -> cp_model.LinearExpr:
        """(day number, place in the day) as one integer (day number x 1000 + place) when visited."""
        d = self.data
        parts = [(self.vis[x.id, sight], 1000 * d.day_number[x.id]) for x in d.days]
        parts += [(self.pos[x.id, sight], 1) for x in d.days]
        return cp_model.LinearExpr.weighted_sum([v for v, _ in parts], [c for _, c in parts])


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


def _close_times(tm: TripModel, t: dict[tuple[str, str], cp_model.IntVar], lit: cp_model.IntVar) -> None:
    d = tm.data
    for x in d.days:
        for s in d.sights:
            tm.m.add(t[x.id, s.id] + s.minutes <= s.closes).only_enforce_if([tm.vis[x.id, s.id], lit])


@encoder("opening_hours")
def _opening_hours(tm: TripModel, p: NoParams, lit: cp_model.IntVar) -> None:
    _close_times(tm, tm.t, lit)


@encoder("return_by")
def _return_by(tm: TripModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for x in tm.data.days:
        tm.post(tm.back[x.id] <= x.end, lit)


@encoder("closing_days")
def _closing_days(tm: TripModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for s in tm.data.sights:
        for day in s.closed_on:
            tm.post(tm.vis[day, s.id] == 0, lit)


def _booked_times(tm: TripModel, t: dict[tuple[str, str], cp_model.IntVar], lit: cp_model.IntVar) -> None:
    for s in tm.data.sights:
        if s.booked_day is not None and s.booked_at is not None:
            tm.m.add(t[s.booked_day, s.id] <= s.booked_at).only_enforce_if([tm.vis[s.booked_day, s.id], lit])


@encoder("reservations")
def _reservations(tm: TripModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for s in tm.data.sights:
        if s.booked_day is None:
            continue
        for x in tm.data.days:
            if x.id != s.booked_day:
                tm.post(tm.vis[x.id, s.id] == 0, lit)
    _booked_times(tm, tm.t, lit)


def _stop_times(tm: TripModel, t: dict[tuple[str, str], cp_model.IntVar], lit: cp_model.IntVar) -> None:
    for s in tm.data.stops:
        tm.m.add(t[s.day, s.id] <= s.latest).only_enforce_if([tm.vis[s.day, s.id], lit])


@encoder("fixed_stops")
def _fixed_stops(tm: TripModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for s in tm.data.stops:
        tm.post(tm.vis[s.day, s.id] == 1, lit)
    _stop_times(tm, tm.t, lit)


@encoder("daily_budget")
def _daily_budget(tm: TripModel, p: it.DailyBudget, lit: cp_model.IntVar) -> None:
    for x in tm.data.days:
        tm.post(tm.spend(x.id) <= p.max, lit)


@encoder("daily_travel")
def _daily_travel(tm: TripModel, p: it.DailyTravel, lit: cp_model.IntVar) -> None:
    for x in tm.data.days:
        tm.post(tm.travel(x.id) <= p.max, lit)


@encoder("must_see")
def _must_see(tm: TripModel, p: it.MustSee, lit: cp_model.IntVar) -> None:
    for s in p.sights:
        tm.post(tm.seen[s] == 1, lit)


@encoder("max_visits")
def _max_visits(tm: TripModel, p: it.MaxVisits, lit: cp_model.IntVar) -> None:
    for x in tm.data.days:
        tm.post(tm.count(x.id) <= p.max, lit)


@encoder("precedence")
def _precedence(tm: TripModel, p: it.Precedence, lit: cp_model.IntVar) -> None:
    for a, b in p.pairs:
        tm.post(tm.seen[a] >= tm.seen[b], lit)
        tm.m.add(tm.order(a) + 1 <= tm.order(b)).only_enforce_if([tm.seen[b], lit])


@encoder("same_day")
def _same_day(tm: TripModel, p: it.SameDay, lit: cp_model.IntVar) -> None:
    a, b = p.sights
    for x in tm.data.days:
        tm.post(tm.vis[x.id, a] == tm.vis[x.id, b], lit)


@encoder("category_cap")
def _category_cap(tm: TripModel, p: it.CategoryCap, lit: cp_model.IntVar) -> None:
    chosen = [s for s in tm.data.sights if s.category == p.category]
    for x in tm.data.days:
        tm.post(tm.count(x.id, chosen) <= p.max, lit)


@encoder("balance")
def _balance(tm: TripModel, p: it.Balance, lit: cp_model.IntVar) -> None:
    for a, b in itertools.permutations(tm.data.days, 2):
        tm.post(tm.count(a.id) - tm.count(b.id) <= p.max, lit)


@encoder("trip_budget")
def _trip_budget(tm: TripModel, p: it.TripBudget, lit: cp_model.IntVar) -> None:
    tm.post(sum(tm.spend(x.id) for x in tm.data.days) <= p.max, lit)


@encoder("carry_budget")
def _carry_budget(tm: TripModel, p: it.CarryBudget, lit: cp_model.IntVar) -> None:
    days = tm.data.days
    for j in range(1, len(days) + 1):
        tm.post(sum(tm.spend(x.id) for x in days[:j]) <= j * p.allowance, lit)


@encoder("tiring_day")
def _tiring_day(tm: TripModel, p: it.TiringDay, lit: cp_model.IntVar) -> None:
    """Per pair of consecutive days a free Boolean 'tiring': either the first day stays
    within the threshold, or the next is light (both halves linear, big-M all visit minutes)."""
    big = sum(s.minutes for s in tm.data.sights)
    for x, y in itertools.pairwise(tm.data.days):
        over = tm.m.new_bool_var("")
        tm.post(tm.sightseeing(x.id) <= p.minutes + big * over, lit)
        tm.post(tm.sightseeing(y.id) <= p.light + big * (1 - over), lit)


@encoder("stamina")
def _stamina(tm: TripModel, p: it.Stamina, lit: cp_model.IntVar) -> None:
    """The level after each stop follows the arcs like the times do: a sight adds its
    minutes to the level after the previous stop (0 after the hotel or a rest stop), a
    rest stop resets it, a meeting keeps it; it never exceeds the cap."""
    d = tm.data
    top = sum(s.minutes for s in d.sights)
    for x in d.days:
        nodes = tm.nodes[x.id]
        level = {s: tm.m.new_int_var(0, top, "") for s in nodes}

        def after(prev: cp_model.LinearExprT, b: str) -> cp_model.LinearExprT:
            fixed = d.stop_by_id.get(b)
            if fixed is None:
                return prev + d.sight_by_id[b].minutes
            return 0 if fixed.kind == "rest" else prev

        for b in nodes:
            tm.m.add(level[b] == after(0, b)).only_enforce_if([tm.arcs[x.id, START, b], lit])
            for a in nodes:
                if a != b:
                    tm.m.add(level[b] == after(level[a], b)).only_enforce_if([tm.arcs[x.id, a, b], lit])
            tm.post(level[b] <= p.minutes, lit)


@encoder("sight_closure")
def _sight_closure(tm: TripModel, p: it.SightClosure, lit: cp_model.IntVar) -> None:
    for day in p.days:
        tm.post(tm.vis[day, p.sight] == 0, lit)


@encoder("travel_margin")
def _travel_margin(tm: TripModel, p: it.TravelMargin, lit: cp_model.IntVar) -> None:
    """A second schedule with the margin on every leg; every time limit holds on it."""
    t, back = tm.times(p.minutes, lit)
    _close_times(tm, t, lit)
    _booked_times(tm, t, lit)
    _stop_times(tm, t, lit)
    for x in tm.data.days:
        tm.post(back[x.id] <= x.end, lit)


def _objective(tm: TripModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    if term.kind == "value_missed":
        total = sum(s.value for s in d.sights)
        return total - cp_model.LinearExpr.weighted_sum(
            [tm.seen[s.id] for s in d.sights], [s.value for s in d.sights]
        ), total
    if term.kind == "travel_minutes":
        longest = max(max(row.values()) for row in d.minutes.values())
        ub = sum((len(tm.nodes[x.id]) + 1) * longest for x in d.days)
        return sum(tm.travel(x.id) for x in d.days), ub
    if term.kind == "order_score":
        cells = []
        for s in d.sights:
            for x in d.days:
                cells.append((tm.vis[x.id, s.id], s.priority * it.DAY_WEIGHT * d.day_number[x.id]))
                cells.append((tm.pos[x.id, s.id], s.priority))
        n = max(len(v) for v in tm.nodes.values())
        ub = sum(s.priority * (it.DAY_WEIGHT * len(d.days) + n) for s in d.sights)
        return cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells]), ub
    if term.kind == "changes":
        old = it.day_of(it.Plan({k: tuple(v) for k, v in it.current_plan(term).items()}))
        kept = [tm.vis[old[s.id], s.id] if s.id in old else 1 - tm.seen[s.id] for s in d.sights]
        return len(d.sights) - sum(kept), len(d.sights)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = parsed(TripData, draft.data)
    tm = TripModel(data)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        rows = []
        for x in data.days:
            route, here = [], START
            while True:
                here = next(b for b in [END, *tm.nodes[x.id]] if b != here and solver.value(tm.arcs[x.id, here, b]))
                if here == END:
                    break
                route.append(here)
            rows.append({"day": x.id, "stops": route})
        return {"itinerary": rows}

    return solver_model(
        tm, draft, ENCODERS, it.RULE_PARAMS, _objective, decode, list(tm.arcs.values()), [],
        parameters=PARAMETERS, uniqueness_parameters=UNIQUENESS_PARAMETERS,
    )  # fmt: skip


# -- sampling --------------------------------------------------------------------------
Witness = dict[str, list[str]]  # day -> stops in order


def _round_up(minutes: int, step: int) -> int:
    return -(-minutes // step) * step


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[TripData, Witness]:
    """Sights, hotels, stops and a road network; then a random witness route per day whose
    earliest-start times decide the opening hours, bookings, stop windows and return times
    around it (so the witness keeps the base rules)."""
    s = SIZES.of(spec.size)
    sub = spec.subtask
    picked = rng.sample(SIGHTS, s.sights)
    hotels = rng.sample(HOTELS, 2 if sub == "multi_city" and s.days > 1 else 1)
    venues = rng.sample(VENUES, min(s.days, len(VENUES))) if sub == "business_trip" else []
    places = [h for h in hotels] + [name for name, _ in picked] + venues
    network = sample_network(rng, places, rng.choice(SHAPES), (s.road.lo, s.road.hi))
    mins = network.minutes
    day_ids = DAYS[: s.days]
    move = rng.randint(1, s.days - 1) if len(hotels) == 2 else s.days  # index of the moving day
    days: list[Day] = []
    for k, day in enumerate(day_ids):
        start_place = hotels[0] if k <= move or len(hotels) == 1 else hotels[1]
        end_place = hotels[0] if k < move or len(hotels) == 1 else hotels[1]
        start = rng.choice((510, 540, 570))
        days.append(Day(id=day, start_place=start_place, end_place=end_place, start=start, end=start + 60))
    stops: list[Stop] = []
    for k, x in enumerate(days):
        if sub == "family_trip":
            stops.append(
                Stop(id=f"Rest ({x.id})", kind="rest", day=x.id, place=x.start_place, minutes=rng.choice((60, 75, 90)),
                     earliest=0, latest=0)
            )  # fmt: skip
        elif sub == "business_trip":
            stops.append(
                Stop(id=f"Meeting at {venues[k % len(venues)]} ({x.id})", kind="meeting", day=x.id,
                     place=venues[k % len(venues)], minutes=rng.choice((60, 90, 120)), earliest=0, latest=0)
            )  # fmt: skip
    booking = "reservations" in spec.basic + spec.medium + spec.stateful
    order = list(range(s.sights))
    rng.shuffle(order)
    witness: Witness = {}
    times: dict[str, tuple[int, int]] = {}  # stop -> (start, end) in the witness
    booked: dict[str, tuple[str, int]] = {}
    stop_windows: dict[str, tuple[int, int]] = {}
    ends: dict[str, int] = {}
    durations = {name: 15 * s.visit.draw(rng) for name, _ in picked}
    for x in days:
        take = min(len(order), s.per_day.draw(rng))
        route = [picked[i][0] for i in order[:take]]
        order = order[take:]
        fixed = [t for t in stops if t.day == x.id]
        for f in fixed:
            route.insert(
                rng.randint(len(route) // 2, len(route)) if f.kind == "rest" else rng.randint(0, len(route)), f.id
            )
        here, now = x.start_place, x.start
        for name in route:
            t = next((f for f in fixed if f.id == name), None)
            place = t.place if t is not None else name
            arrive = now + mins[here][place]
            if t is not None and t.kind == "meeting":
                start = _round_up(arrive, 15) + rng.choice((0, 15, 30))
                stop_windows[name] = (start, start)
            elif t is not None:
                start = max(arrive, 720)
                stop_windows[name] = (min(720, start), _round_up(start, 15) + rng.choice((0, 30, 60)))
            elif booking and rng.random() < 0.35:
                start = _round_up(arrive, 15) + rng.choice((0, 15))
                booked[name] = (x.id, start)
            else:
                start = arrive
            dur = t.minutes if t is not None else durations[name]
            times[name] = (start, start + dur)
            now = start + dur
            here = place
        ends[x.id] = _round_up(now + mins[here][x.end_place], 30) + rng.choice((30, 60, 90, 120))
        witness[x.id] = route
    sights = []
    for name, category in picked:
        if name in times:
            start, end = times[name]
            opens = max(420, (start // 30) * 30 - 30 * rng.randint(0, 4))
            closes = max(_round_up(end, 30), min(1200, _round_up(end, 30) + 30 * rng.randint(1, 8)))
        else:
            opens, closes = rng.choice((540, 570, 600)), rng.choice((960, 1020, 1080, 1140))
        price = 0 if sub == "museum_pass" and category == "museum" else rng.randint(0, 6) * 3
        bday, bat = booked.get(name, (None, None))
        sights.append(
            Sight(id=name, category=category, value=rng.randint(1, 9), priority=1, minutes=durations[name],
                  price=price, opens=opens, closes=closes, booked_day=bday, booked_at=bat)
        )  # fmt: skip
    points = rng.sample(range(1, 61), len(sights))
    sights = [x.model_copy(update={"priority": p}) for x, p in zip(sights, points)]
    days = [x.model_copy(update={"end": max(ends[x.id], x.start + 60)}) for x in days]
    stops = [t.model_copy(update={"earliest": stop_windows[t.id][0], "latest": stop_windows[t.id][1]}) for t in stops]
    data = TripData(
        city=rng.choice(CITIES), network=network, days=tuple(days), sights=tuple(sights), stops=tuple(stops)
    )
    if not any(witness.values()):
        raise NoDraft("witness")
    return data, witness


def _with_closing_days(d: TripData, w: Witness, rng: random.Random) -> TripData:
    """Sights, with probability 0.5, get a closing day other than their witness day."""
    on = {s: day for day, stops in w.items() for s in stops}
    sights = []
    for s in d.sights:
        other = [x.id for x in d.days if x.id != on.get(s.id)]
        closed = (rng.choice(other),) if other and rng.random() < 0.5 else ()
        sights.append(s.model_copy(update={"closed_on": closed}))
    return it.replaced(d, sights=tuple(sights))


def _plan(w: Witness) -> it.Plan:
    return it.Plan({day: tuple(stops) for day, stops in w.items()})


def _b_daily_budget(d: TripData, w: Witness, rng: random.Random) -> it.DailyBudget | None:
    top = max(it.spend(d, _plan(w)).values())
    return it.DailyBudget(max=top + rng.randint(0, 4)) if top else None


def _b_daily_travel(d: TripData, w: Witness, rng: random.Random) -> it.DailyTravel | None:
    return it.DailyTravel(max=max(it.travel(d, _plan(w)).values()) + rng.randint(0, 5))


def _witness_sights(d: TripData, w: Witness) -> list[str]:
    return [s for stops in w.values() for s in stops if s in d.sight_by_id]


def _b_must_see(d: TripData, w: Witness, rng: random.Random) -> it.MustSee | None:
    seen = _witness_sights(d, w)
    if not seen:
        return None
    chosen = set(rng.sample(seen, min(len(seen), rng.randint(1, 2))))
    return it.MustSee(sights=[s.id for s in d.sights if s.id in chosen])


def _b_max_visits(d: TripData, w: Witness, rng: random.Random) -> it.MaxVisits | None:
    top = max(len(it.visited(d, _plan(w), x.id)) for x in d.days)
    return it.MaxVisits(max=top) if top else None


def _b_precedence(d: TripData, w: Witness, rng: random.Random) -> it.Precedence | None:
    seen = _witness_sights(d, w)
    pairs = list(itertools.combinations(seen, 2))  # witness order: the first before the second
    if not pairs:
        return None
    return it.Precedence(pairs=rng.sample(pairs, min(len(pairs), rng.randint(1, 2))))


def _b_same_day(d: TripData, w: Witness, rng: random.Random) -> it.SameDay | None:
    options = [p for stops in w.values() for p in itertools.combinations([s for s in stops if s in d.sight_by_id], 2)]
    if not options:
        return None
    a, b = rng.choice(options)
    return it.SameDay(sights=(a, b))


def _b_category_cap(d: TripData, w: Witness, rng: random.Random) -> it.CategoryCap | None:
    plan = _plan(w)
    counts: dict[str, int] = {}
    for x in d.days:
        for cat in {s.category for s in d.sights}:
            n = sum(1 for s in it.visited(d, plan, x.id) if s.category == cat)
            counts[cat] = max(counts.get(cat, 0), n)
    cats = sorted(c for c, n in counts.items() if n >= 1 and sum(s.category == c for s in d.sights) > n)
    if not cats:
        return None
    cat = rng.choice(cats)
    return it.CategoryCap(category=cat, max=counts[cat])


def _b_balance(d: TripData, w: Witness, rng: random.Random) -> it.Balance | None:
    counts = [len(it.visited(d, _plan(w), x.id)) for x in d.days]
    return it.Balance(max=max(counts) - min(counts) + rng.randint(0, 1)) if len(counts) > 1 else None


def _b_trip_budget(d: TripData, w: Witness, rng: random.Random) -> it.TripBudget | None:
    return it.TripBudget(max=sum(it.spend(d, _plan(w)).values()) + rng.randint(0, 6))


def _b_carry_budget(d: TripData, w: Witness, rng: random.Random) -> it.CarryBudget | None:
    running, need = 0, 0
    for j, euros in enumerate(it.spend(d, _plan(w)).values(), 1):
        running += euros
        need = max(need, -(-running // j))
    return it.CarryBudget(allowance=need + rng.randint(0, 1)) if need and len(d.days) > 1 else None


def _b_tiring_day(d: TripData, w: Witness, rng: random.Random) -> it.TiringDay | None:
    """A threshold just above the witness's longest day (before the last), so the witness
    never trips it, and a light day below the witness's lightest following day: two long
    days in a row are then out of reach for every plan."""
    minutes = list(it.sightseeing(d, _plan(w)).values())
    if len(minutes) < 2:
        return None
    threshold = max(minutes[:-1]) + 15 * rng.randint(0, 1)
    light = min(minutes[1:]) - 15 * rng.randint(1, 2)
    return it.TiringDay(minutes=threshold, light=light) if light >= 0 else None


def _b_stamina(d: TripData, w: Witness, rng: random.Random) -> it.Stamina | None:
    top = max((lvl for stops in w.values() for lvl in it.tiredness(d, tuple(stops))), default=0)
    return it.Stamina(minutes=top + 15 * rng.randint(0, 1)) if top else None


BUILDERS = {
    "stamina": _b_stamina,
    "daily_budget": _b_daily_budget,
    "daily_travel": _b_daily_travel,
    "must_see": _b_must_see,
    "max_visits": _b_max_visits,
    "precedence": _b_precedence,
    "same_day": _b_same_day,
    "category_cap": _b_category_cap,
    "balance": _b_balance,
    "trip_budget": _b_trip_budget,
    "carry_budget": _b_carry_budget,
    "tiring_day": _b_tiring_day,
}
STRUCTURAL = ("closing_days", "reservations", "fixed_stops")
OBJECTIVE = ("value_missed", "travel_minutes", "order_score")


def objective_terms() -> list[ObjectiveTerm]:
    return [ObjectiveTerm(id=k, kind=k) for k in OBJECTIVE]


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    data, witness = _entities(spec, rng)
    sampled = sampled_kinds(spec, TASK.base_rules, FORCED[spec.subtask])
    if not data.stops:
        sampled = [k for k in sampled if k != "fixed_stops"]
    if "reservations" in sampled and not any(s.booked_day for s in data.sights):
        sampled.remove("reservations")
    if "closing_days" in sampled:
        data = _with_closing_days(data, witness, rng)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng, structural=STRUCTURAL)
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective_terms())


# -- hard-tier hooks -------------------------------------------------------------------
def _read(plan: dict[str, Any]) -> Witness:
    return {r["day"]: list(r["stops"]) for r in plan["itinerary"]}


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A must-see list of sights that cannot all be fitted: the shortest infeasible prefix
    of a shuffled sight list, by bisection (more must-see sights only lose feasibility)."""
    d = parsed(TripData, draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    names = [s.id for s in d.sights]
    rng.shuffle(names)

    def trial(k: int) -> Draft:
        chosen = set(names[:k])
        p = it.MustSee(sights=[s.id for s in d.sights if s.id in chosen])
        return with_conflict_rule(draft_, "must_see", p, position)

    found = first_infeasible(list(range(2, len(names) + 1)), trial, lambda t: is_feasible(build(t), probe))
    if found is None or alone_infeasible(build, found, added_rule(found, position), probe):
        return None
    return found


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A planned sight closed on its day (or for the whole trip)."""
    d = parsed(TripData, draft_.data)
    out = []
    for day, stops in _read(plan).items():
        for s in stops:
            if s in d.sight_by_id:
                days = [day] if rng.random() < 0.6 else [x.id for x in d.days]
                out.append(make_rule("sight_closure", "hard", it.SightClosure(sight=s, days=days)))
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, list[str]]:
    return _read(plan)


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    return make_rule("travel_margin", "hard", it.TravelMargin(minutes=rng.choice((5, 10, 15)))), []


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Visit durations (worst: long) and, where a budget rule reads them, ticket prices
    (worst: high); a range on a sight the optimum skips usually costs nothing."""
    d = parsed(TripData, draft_.data)
    out = [
        Uncertain(id="", kind="duration", target=s.id, low=s.minutes, high=s.minutes + 15 * rng.randint(1, 2))
        for s in d.sights
    ]
    out = rng.sample(out, min(4, len(out)))
    if any(r.kind in ("daily_budget", "trip_budget", "carry_budget") for r in draft_.rules):
        priced = [s for s in d.sights if s.price]
        out += [
            Uncertain(id="", kind="price", target=s.id, low=s.price, high=s.price + 3 * rng.randint(1, 2))
            for s in rng.sample(priced, min(2, len(priced)))
        ]
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = parsed(TripData, data)
    field = "minutes" if u.kind == "duration" else "price"
    sights = tuple(s.model_copy(update={field: value}) if s.id == u.target else s for s in d.sights)
    return {**data, "sights": [s.model_dump(mode="json") for s in sights]}


def worst_is_low(u: Uncertain) -> bool:
    return False


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = parsed(TripData, draft_.data)
    return it.verification(d, _plan(_read(plan)))


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
