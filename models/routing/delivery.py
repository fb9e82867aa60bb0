"""Logistics Delivery Planning: multi-stop routes for a delivery fleet from one depot
(a capacitated vehicle routing problem with time windows, pickups and reloads).

Decision: per vehicle k one ``AddCircuit`` over the depot (node 0), the stops (1..N) and
k's own reload visits to the depot (N+1..N+R, multi-trip rounds only); x[k,i,j] = 1 when
k drives from i to j, a stop's self-loop says k does not serve it, the depot's self-loop
that k stays home. Every stop is served by exactly one vehicle. Times propagate exactly
along the arcs (a vehicle leaves at minute 0; service starts at the later of arrival and
the window's opening), and so do the load on board and the minutes driven since the last
depot visit, so every figure the checker recomputes is a function of the arcs. The
objective is lexicographic: total travel minutes, then (generated rounds) the sum of the
minutes at which service starts, a real customer-facing figure that also tells a round's
two directions apart.

Vehicles of one type and capacity that no rule names are interchangeable: the model
orders their routes by their lowest-numbered stop (unused vehicles last), and
:class:`pbsolve.family.Symmetry` tells the certifier that canonical form. For an imported
TSPLIB tour (one vehicle, a symmetric matrix, tour length alone) a tour and its reverse
are one answer: the Symmetry hook lists both, so plan counts count tours.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible, make_solver
from pbsolve.checkers.routing import delivery as dl
from pbsolve.checkers.routing.delivery import RELOAD, DeliveryData, Stop, Vehicle
from pbsolve.family import Draft, NoDraft, SolverModel, Symmetry
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
    variant,
    with_conflict_rule,
)
from pbsolve.network_kit import SHAPES, sample_network
from pbsolve.params import NoParams, make_rule, make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.sources import Imported, SourceError, SourceFile
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=dl.TASK_ID,
    name="Logistics Delivery Planning",
    family="routing",
    summary="multi-stop delivery routes from a depot under vehicle capacity, customer windows and driver hours",
    subtasks=(
        SubtaskSpec(
            "round_trip", "Single-vehicle round trip", "one vehicle visits every stop and returns (TSPLIB tours)"
        ),
        SubtaskSpec("parcel_rounds", "Parcel rounds", "identical vans with a capacity and a shift end, wide windows"),
        SubtaskSpec(
            "grocery_home_delivery",
            "Grocery home delivery",
            "a mixed fleet (van, cargo bikes) and tight delivery slots",
        ),
        SubtaskSpec(
            "pickup_and_delivery", "Pickup and delivery", "goods picked up at shops and delivered to customers"
        ),
        SubtaskSpec("multi_trip", "Multi-trip with reloads", "vans return to the depot to reload between trips"),
    ),
    pool=(
        ConstraintSpec("capacity", "basic", "the load on board never exceeds the vehicle's capacity"),
        ConstraintSpec("time_windows", "basic", "service starts within the customer's window"),
        ConstraintSpec("shift_end", "basic", "driver hours: every vehicle is back by the end of the shift"),
        ConstraintSpec("stop_deadline", "basic", "named stops are served by a stated minute"),
        ConstraintSpec("max_stops", "basic", "no vehicle serves more than so many stops"),
        ConstraintSpec("first_stop", "basic", "an urgent stop is the first of its route"),
        ConstraintSpec("precedence", "medium", "named stops are served before others"),
        ConstraintSpec("same_vehicle", "medium", "named stops share a vehicle"),
        ConstraintSpec("different_vehicle", "medium", "named stops are on different vehicles"),
        ConstraintSpec("route_balance", "medium", "stop counts of the vehicles within a stated gap"),
        ConstraintSpec("battery_range", "stateful", "minutes driven per trip within the battery range"),
        ConstraintSpec("load_limit", "stateful", "the load on board on reaching a named stop is capped"),
        *mechanism_pool("every service keeps a delay buffer before its window closes and the shift ends"),
    ),
    base_rules=(),
)

STREETS = (
    "Elm Street", "Mill Lane", "Harbour Road", "Church Street", "Station Road", "Park Avenue", "Bridge Street",
    "Kings Road", "Orchard Way", "Market Street", "Victoria Road", "Canal Walk", "High Street", "Chapel Lane",
    "Meadow Close", "Quarry Hill", "Riverside", "Castle Street", "Willow Drive", "North Parade",
)  # fmt: skip
SHOPS = ("Bakery", "Pharmacy", "Florist", "Bookshop", "Deli", "Hardware store", "Tailor", "Print shop")
DEPOTS = ("Northgate depot", "Riverside hub", "Eastfield depot", "Canal Street hub")
FORCED = {
    "round_trip": (),
    "parcel_rounds": ("capacity", "shift_end", "time_windows"),
    "grocery_home_delivery": ("capacity", "time_windows"),
    "pickup_and_delivery": ("pickup_delivery", "capacity"),
    "multi_trip": ("capacity", "shift_end", "time_windows"),
}
WINDOW = {"grocery_home_delivery": 8, "parcel_rounds": 25}  # half-width of a window around the witness time


class DeliverySizes(Settings):
    """How big a delivery instance is."""

    stops: PositiveInt = Field(ge=2, le=len(STREETS))
    vehicles: PositiveInt = Field(le=4, description="fleet size (round trips have one vehicle)")
    minutes: PositiveRange = Field(description="minutes of one street")
    service: PositiveRange = Field(description="service minutes at a stop")
    load: PositiveRange = Field(description="units delivered at a stop")
    reloads: int = Field(ge=0, le=3, description="reloads per vehicle in multi-trip rounds")


SIZES = SizeTable[DeliverySizes](
    tiny=DeliverySizes(
        stops=3, vehicles=2, minutes=PositiveRange(lo=2, hi=9), service=PositiveRange(lo=1, hi=5),
        load=PositiveRange(lo=1, hi=4), reloads=1,
    ),
    small=DeliverySizes(
        stops=5, vehicles=2, minutes=PositiveRange(lo=2, hi=9), service=PositiveRange(lo=1, hi=6),
        load=PositiveRange(lo=1, hi=5), reloads=1,
    ),
    default=DeliverySizes(
        stops=5, vehicles=2, minutes=PositiveRange(lo=2, hi=12), service=PositiveRange(lo=2, hi=8),
        load=PositiveRange(lo=1, hi=6), reloads=1,
    ),
    large=DeliverySizes(
        stops=11, vehicles=3, minutes=PositiveRange(lo=2, hi=12), service=PositiveRange(lo=2, hi=8),
        load=PositiveRange(lo=1, hi=6), reloads=2,
    ),
)  # fmt: skip
PROBE_TIME = 2.0
UNIQUENESS_PARAMETERS: dict[str, object] = {"cp_model_presolve": False}


# -- the CP-SAT model ------------------------------------------------------------------
class DeliveryModel(ModelBase):
    """Arcs, visits, exact times, loads and driven minutes (see the module docstring)."""

    def __init__(self, d: DeliveryData, kinds: set[str], classes: list[list[str]], timed: bool = True) -> None:
        super().__init__()
        m = self.m
        self.d = d
        n, r = len(d.stops), d.reloads
        self.n, self.r = n, r
        T = d.minutes
        self.nodes = list(range(n + r + 1))
        self.vehicles = [v.id for v in d.vehicles]
        top_t = max(max(row) for row in T)
        self.horizon = h = (
            max(s.open for s in d.stops) + sum(s.service for s in d.stops) + r * d.reload_minutes + (n + r + 1) * top_t
        )
        self.x: dict[tuple[str, int, int], cp_model.IntVar] = {}
        self.visit: dict[tuple[str, int], cp_model.IntVar] = {}
        self.unused: dict[str, cp_model.IntVar] = {}
        self.start = {k: m.new_int_var(0, h, f"start[{s.id}]") for k, s in enumerate(d.stops, 1)}
        self.reload_at: dict[tuple[str, int], cp_model.IntVar] = {}
        self.end: dict[str, cp_model.IntVar] = {}
        for k, s in enumerate(d.stops, 1):
            m.add(self.start[k] >= max(s.open, T[0][k]))  # redundant (direct drive): a tighter relaxation
        for v in self.vehicles:
            self._vehicle(v, h)
        for k in range(1, n + 1):
            m.add_exactly_one([self.visit[v, k] for v in self.vehicles])
        self.wait = {k: m.new_bool_var(f"wait[{k}]") for k, s in enumerate(d.stops, 1) if s.open > 0}
        for k, w in self.wait.items():
            m.add(self.start[k] == d.stops[k - 1].open).only_enforce_if(w)
        if timed:  # a bare tour (imported, length alone) needs no clock
            for (v, i, j), lit in self.x.items():
                self._propagate_time(v, i, j, lit)
        self.onboard: dict[int, cp_model.IntVar] = {}
        if kinds & {"capacity", "load_limit"}:
            self._loads()
        self.driven: dict[int, cp_model.IntVar] = {}
        if "battery_range" in kinds:
            for k in range(1, n + 1):
                self.driven[k] = m.new_int_var(0, (n + 1) * top_t, f"driven[{k}]")
            for (_v, i, j), lit in self.x.items():
                if 1 <= j <= n:
                    before = self.driven[i] if 1 <= i <= n else 0
                    m.add(self.driven[j] == before + T[self.place(i)][j]).only_enforce_if(lit)
        self._break_symmetry(classes)

    def place(self, node: int) -> int:
        """The matrix row of a node (reload visits are the depot)."""
        return node if node <= self.n else 0

    def is_depot(self, node: int) -> bool:
        return node == 0 or node > self.n

    def _vehicle(self, v: str, h: int) -> None:
        m, n = self.m, self.n
        arcs: list[tuple[int, int, cp_model.LiteralT]] = []
        self.unused[v] = stay = m.new_bool_var(f"unused[{v}]")
        arcs.append((0, 0, stay))
        for i in self.nodes:
            for j in self.nodes:
                if i == j or (self.is_depot(i) and self.is_depot(j)):
                    continue
                lit = m.new_bool_var(f"x[{v},{i},{j}]")
                self.x[v, i, j] = lit
                arcs.append((i, j, lit))
        for i in self.nodes[1:]:
            self.visit[v, i] = vis = m.new_bool_var(f"visit[{v},{i}]")
            arcs.append((i, i, ~vis))
            m.add_implication(vis, ~stay)
        m.add_circuit(arcs)
        for q in range(self.r):
            node = n + 1 + q
            self.reload_at[v, node] = m.new_int_var(0, h, f"reload[{v},{q + 1}]")
            m.add(self.reload_at[v, node] == 0).only_enforce_if(~self.visit[v, node])
            if q:
                m.add_implication(self.visit[v, node], self.visit[v, node - 1])
                m.add(self.reload_at[v, node] >= self.reload_at[v, node - 1] + 1).only_enforce_if(self.visit[v, node])
        self.end[v] = m.new_int_var(0, h, f"end[{v}]")
        m.add(self.end[v] == 0).only_enforce_if(stay)

    def departure(self, v: str, i: int) -> cp_model.LinearExprT:
        """The minute vehicle ``v`` leaves node ``i``."""
        if i == 0:
            return 0
        if i > self.n:
            return self.reload_at[v, i] + self.d.reload_minutes
        return self.start[i] + self.d.stops[i - 1].service

    def _propagate_time(self, v: str, i: int, j: int, lit: cp_model.IntVar) -> None:
        """On arc i -> j: j's time = i's departure + the drive (a start may wait for its
        window: then it is the later of that and the opening). Written as weighted sums of
        two variables (building expressions by operators dominated model building)."""
        m, d = self.m, self.d
        drive = d.minutes[self.place(i)][self.place(j)]
        if i == 0:
            dep: cp_model.IntVar | None = None
        elif i > self.n:
            dep, drive = self.reload_at[v, i], drive + d.reload_minutes
        else:
            dep, drive = self.start[i], drive + d.stops[i - 1].service
        if j == 0:
            target = self.end[v]
        elif j > self.n:
            target = self.reload_at[v, j]
        else:
            target = self.start[j]
        gap = target if dep is None else cp_model.LinearExpr.weighted_sum([target, dep], [1, -1])
        if j in self.wait:
            m.add_linear_constraint(gap, drive, cp_model.INT_MAX).only_enforce_if(lit)
            m.add_linear_constraint(gap, cp_model.INT_MIN, drive).only_enforce_if([lit, ~self.wait[j]])
        else:
            m.add_linear_constraint(gap, drive, drive).only_enforce_if(lit)

    def _loads(self) -> None:
        """Without pickups: on board on arrival = this stop's load and the rest of the trip's
        (propagated backwards); with pickups: the loads picked up so far (forwards)."""
        d, m, n = self.d, self.m, self.n
        total = sum(abs(s.load) for s in d.stops)
        lo = -total if d.pickups else 0
        for k in range(1, n + 1):
            self.onboard[k] = m.new_int_var(lo, total, f"onboard[{k}]")
        for (_v, i, j), lit in self.x.items():
            if d.pickups:
                if 1 <= j <= n:
                    before = self.onboard[i] + d.stops[i - 1].load if 1 <= i <= n else 0
                    m.add(self.onboard[j] == before).only_enforce_if(lit)
            elif 1 <= i <= n:
                after = self.onboard[j] if 1 <= j <= n else 0
                m.add(self.onboard[i] == d.stops[i - 1].load + after).only_enforce_if(lit)

    def _break_symmetry(self, classes: list[list[str]]) -> None:
        """Within a class of interchangeable vehicles, the lowest-numbered stop served never
        decreases along the fleet list (unused vehicles count N+1, so they come last)."""
        self.classes = classes
        n = self.n
        for members in classes:
            keys = []
            for v in members:
                key = self.m.new_int_var(1, n + 1, f"first[{v}]")
                self.m.add_min_equality(key, [n + 1 - (n + 1 - k) * self.visit[v, k] for k in range(1, n + 1)])
                keys.append(key)
            for a, b in itertools.pairwise(keys):
                self.m.add(a <= b)

    def count(self, v: str) -> cp_model.LinearExpr:
        return cp_model.LinearExpr.sum([self.visit[v, k] for k in range(1, self.n + 1)])

    def post_all(self, ct: Any, lits: list[cp_model.LiteralT]) -> None:
        """``ct`` enforced by the conjunction of ``lits``."""
        self.m.add(ct).only_enforce_if(lits)


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("capacity")
def _capacity(tm: DeliveryModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.d
    for k, s in enumerate(d.stops, 1):
        for veh in d.vehicles:
            if veh.capacity is None:
                continue
            tm.post_all(tm.onboard[k] <= veh.capacity, [lit, tm.visit[veh.id, k]])
            if d.pickups and s.load > 0:
                tm.post_all(tm.onboard[k] + s.load <= veh.capacity, [lit, tm.visit[veh.id, k]])


@encoder("time_windows")
def _time_windows(tm: DeliveryModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """Each window's close bounds its start; redundantly, an arc i -> j that cannot reach
    j before its window closes even from i's earliest start is off (a tighter search)."""
    d, T = tm.d, tm.d.minutes
    for k, s in enumerate(d.stops, 1):
        if s.close is not None:
            tm.post(tm.start[k] <= s.close, lit)
    for (_v, i, j), arc in tm.x.items():
        if 1 <= i <= tm.n and 1 <= j <= tm.n:
            a, b = d.stops[i - 1], d.stops[j - 1]
            if b.close is not None and max(a.open, T[0][i]) + a.service + T[i][j] > b.close:
                tm.m.add_implication(lit, ~arc)


@encoder("shift_end")
def _shift_end(tm: DeliveryModel, p: NoParams, lit: cp_model.IntVar) -> None:
    if tm.d.shift is not None:
        for v in tm.vehicles:
            tm.post(tm.end[v] <= tm.d.shift, lit)


@encoder("stop_deadline")
def _stop_deadline(tm: DeliveryModel, p: dl.StopDeadline, lit: cp_model.IntVar) -> None:
    for s in p.stops:
        tm.post(tm.start[tm.d.index[s]] <= p.by, lit)


@encoder("max_stops")
def _max_stops(tm: DeliveryModel, p: dl.MaxStops, lit: cp_model.IntVar) -> None:
    for v in tm.vehicles:
        tm.post(tm.count(v) <= p.max, lit)


@encoder("first_stop")
def _first_stop(tm: DeliveryModel, p: dl.FirstStop, lit: cp_model.IntVar) -> None:
    k = tm.d.index[p.stop]
    tm.post(cp_model.LinearExpr.sum([tm.x[v, 0, k] for v in tm.vehicles]) == 1, lit)


@encoder("pickup_delivery")
def _pickup_delivery(tm: DeliveryModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """Same vehicle, and the delivery starts no earlier than the pickup's end plus the
    direct drive (travel minutes obey the triangle inequality and service takes at least
    a minute, so this holds exactly when the delivery comes later on the route)."""
    d = tm.d
    for a, b in d.pairs:
        ia, ib = d.index[a], d.index[b]
        for v in tm.vehicles:
            tm.post(tm.visit[v, ia] == tm.visit[v, ib], lit)
        tm.post(tm.start[ib] >= tm.start[ia] + d.stops[ia - 1].service + d.minutes[ia][ib], lit)


@encoder("precedence")
def _precedence(tm: DeliveryModel, p: dl.Precedence, lit: cp_model.IntVar) -> None:
    for a, b in p.pairs:
        tm.post(tm.start[tm.d.index[b]] >= tm.start[tm.d.index[a]] + 1, lit)


@encoder("same_vehicle")
def _same_vehicle(tm: DeliveryModel, p: dl.SameVehicle, lit: cp_model.IntVar) -> None:
    idx = tm.d.index
    for a, b in zip(p.stops, p.stops[1:]):
        for v in tm.vehicles:
            tm.post(tm.visit[v, idx[a]] == tm.visit[v, idx[b]], lit)


@encoder("different_vehicle")
def _different_vehicle(tm: DeliveryModel, p: dl.DifferentVehicle, lit: cp_model.IntVar) -> None:
    idx = tm.d.index
    for a, b in p.pairs:
        for v in tm.vehicles:
            tm.post(tm.visit[v, idx[a]] + tm.visit[v, idx[b]] <= 1, lit)


@encoder("route_balance")
def _route_balance(tm: DeliveryModel, p: dl.RouteBalance, lit: cp_model.IntVar) -> None:
    for a in tm.vehicles:
        for b in tm.vehicles:
            if a != b:
                tm.post(tm.count(a) - tm.count(b) <= p.max, lit)


@encoder("battery_range")
def _battery_range(tm: DeliveryModel, p: dl.BatteryRange, lit: cp_model.IntVar) -> None:
    T = tm.d.minutes
    for (_v, i, j), arc in tm.x.items():
        if 1 <= i <= tm.n and tm.is_depot(j):
            tm.post_all(tm.driven[i] + T[i][0] <= p.max, [lit, arc])


@encoder("load_limit")
def _load_limit(tm: DeliveryModel, p: dl.LoadLimit, lit: cp_model.IntVar) -> None:
    tm.post(tm.onboard[tm.d.index[p.stop]] <= p.max, lit)


@encoder("vehicle_off")
def _vehicle_off(tm: DeliveryModel, p: dl.VehicleOff, lit: cp_model.IntVar) -> None:
    tm.post(tm.count(p.vehicle) == 0, lit)


@encoder("delay_buffer")
def _delay_buffer(tm: DeliveryModel, p: dl.DelayBuffer, lit: cp_model.IntVar) -> None:
    d = tm.d
    for k, s in enumerate(d.stops, 1):
        if s.close is not None:
            tm.post(tm.start[k] <= s.close - p.minutes, lit)
    if d.shift is not None:
        for v in tm.vehicles:
            tm.post_all(tm.end[v] <= d.shift - p.minutes, [lit, ~tm.unused[v]])


def _objective(tm: DeliveryModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d, T = tm.d, tm.d.minutes
    if term.kind == "travel":
        arcs = list(tm.x.items())
        expr = cp_model.LinearExpr.weighted_sum(
            [lit for _, lit in arcs], [T[tm.place(i)][tm.place(j)] for (_, i, j), _ in arcs]
        )
        top = max(max(row) for row in T)
        return expr, (tm.n + (tm.r + 1) * len(tm.vehicles)) * top
    if term.kind == "arrival_sum":
        return cp_model.LinearExpr.sum(list(tm.start.values())), tm.n * tm.horizon
    if term.kind == "changes":
        old = dl.current_routes(term)
        kept = []
        for s in d.stops:
            v, before = old[s.id]
            k = d.index[s.id]
            if before == d.depot:
                kept += [tm.x[v, i, k] for i in [0, *range(tm.n + 1, tm.n + tm.r + 1)]]
            else:
                kept.append(tm.x[v, d.index[before], k])
        return tm.n - cp_model.LinearExpr.sum(kept), tm.n
    raise ValueError(f"unknown objective kind {term.kind!r}")


def _pure_tour(d: DeliveryData, draft: Draft) -> bool:
    """One vehicle, no reloads, a symmetric matrix, no rule and tour length alone: a tour
    and its reverse are the same answer."""
    return (
        len(d.vehicles) == 1
        and d.reloads == 0
        and d.symmetric
        and not draft.rules
        and [t.kind for t in draft.objective] == ["travel"]
    )


def symmetry(tm: DeliveryModel, arcs: list[tuple[str, int, int]], pure_tour: bool) -> Symmetry | None:
    """The canonical labelling of interchangeable vehicles (in the model), or a tour's
    reverse (not in the model: both directions are listed as images)."""
    pos = {a: k for k, a in enumerate(arcs)}
    n = tm.n
    if pure_tour:
        reverse = [pos[(v, j, i)] for (v, i, j) in arcs]

        def images(values: list[int]) -> list[list[int]]:
            back = [values[reverse[k]] for k in range(len(values))]
            return [values] if back == values else [values, back]

        return Symmetry(canonical=lambda values: min(images(values)), images=images, in_model=False)
    if not tm.classes:
        return None
    block = len(arcs) // len(tm.vehicles)
    start = {v: k * block for k, v in enumerate(tm.vehicles)}
    heads = [j for (_, _, j) in arcs[:block]]

    def key(values: list[int], v: str) -> int:
        chunk = values[start[v] : start[v] + block]
        served = [heads[k] for k, x in enumerate(chunk) if x and 1 <= heads[k] <= n]
        return min(served, default=n + 1)

    def canonical(values: list[int]) -> list[int]:
        out = list(values)
        for members in tm.classes:
            chunks = sorted((key(values, v), values[start[v] : start[v] + block]) for v in members)
            for v, (_, chunk) in zip(members, chunks):
                out[start[v] : start[v] + block] = chunk
        return out

    return Symmetry(canonical=canonical, images=lambda values: [canonical(values)], in_model=True)


TIMED_KINDS = {"time_windows", "shift_end", "stop_deadline", "precedence", "pickup_delivery", "delay_buffer"}


def build(draft: Draft) -> SolverModel:
    d = parsed(DeliveryData, draft.data)
    kinds = {r.kind for r in draft.rules}
    classes = dl.vehicle_classes(d, draft.rules, draft.objective)
    timed = bool(kinds & TIMED_KINDS) or any(t.kind != "travel" for t in draft.objective)
    tm = DeliveryModel(d, kinds, classes, timed)
    arcs = list(tm.x)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        rows = []
        for v in tm.vehicles:
            route: list[str] = []
            at = 0
            while not solver.value(tm.unused[v]):
                at = next(j for j in tm.nodes if (v, at, j) in tm.x and solver.value(tm.x[v, at, j]))
                if at == 0:
                    break
                route.append(d.stops[at - 1].id if at <= tm.n else RELOAD)
            if route:
                rows.append({"vehicle": v, "stops": route})
        return {"routes": rows}

    answer = [tm.x[a] for a in arcs]
    sm = solver_model(
        tm, draft, ENCODERS, dl.RULE_PARAMS, _objective, decode, answer, [], uniqueness_parameters=UNIQUENESS_PARAMETERS
    )
    sm.symmetry = symmetry(tm, arcs, _pure_tour(d, draft))
    return sm


# -- sampling --------------------------------------------------------------------------
def _fleet(spec: GenerationSpec, s: DeliverySizes, rng: random.Random) -> list[Vehicle]:
    if spec.subtask == "round_trip":
        return [Vehicle(id="Van", kind="van")]
    if spec.subtask == "multi_trip":
        count = 1 if s.stops <= 3 else s.vehicles
        return [Vehicle(id=f"Van {k}", kind="van") for k in range(1, count + 1)]
    if spec.subtask == "grocery_home_delivery":
        bikes = max(1, s.vehicles - 1)
        return [
            Vehicle(id="Van", kind="van"),
            *(Vehicle(id=f"Bike {k}", kind="cargo bike") for k in range(1, bikes + 1)),
        ]
    return [Vehicle(id=f"Van {k}", kind="van") for k in range(1, s.vehicles + 1)]


def _stops(spec: GenerationSpec, s: DeliverySizes, rng: random.Random) -> list[Stop]:
    streets = rng.sample(STREETS, s.stops)
    if spec.subtask != "pickup_and_delivery":
        return [
            Stop(id=f"S{k}", name=f"{rng.randint(1, 99)} {st}", load=s.load.draw(rng), service=s.service.draw(rng))
            for k, st in enumerate(streets, 1)
        ]
    pairs = max(1, s.stops // 2)
    shops = rng.sample(SHOPS, pairs)
    out: list[Stop] = []
    for k in range(pairs):
        q = s.load.draw(rng)
        out.append(
            Stop(
                id=f"P{k + 1}", name=f"{shops[k]}, {streets[2 * k]}", load=q, service=s.service.draw(rng),
                delivery=f"D{k + 1}",
            )
        )  # fmt: skip
        out.append(
            Stop(
                id=f"D{k + 1}", name=f"{rng.randint(1, 99)} {streets[2 * k + 1]}", load=-q, service=s.service.draw(rng)
            )
        )
    return out


Witness = dl.Plan


def _witness(spec: GenerationSpec, d: DeliveryData, rng: random.Random) -> Witness:
    """Random routes: stops shared round robin among the vehicles in random order (a pickup
    before its delivery on one vehicle); multi-trip routes get reloads in random gaps."""
    vehicles = [v.id for v in d.vehicles]
    routes: dict[str, list[str]] = {v: [] for v in vehicles}
    if d.pickups:
        for a, b in d.pairs:
            route = routes[rng.choice(vehicles)]
            i = rng.randint(0, len(route))
            route.insert(i, a)
            route.insert(rng.randint(i + 1, len(route)), b)
    else:
        ids = [s.id for s in d.stops]
        rng.shuffle(ids)
        for k, sid in enumerate(ids):  # round robin: the vehicles' stop counts differ by at most one
            routes[vehicles[k % len(vehicles)]].append(sid)
    if d.reloads:
        for v in vehicles:
            gaps = list(range(1, len(routes[v])))
            for g in sorted(rng.sample(gaps, min(len(gaps), rng.randint(1, d.reloads))), reverse=True):
                routes[v].insert(g, RELOAD)
    return dl.Plan({v: tuple(routes[v]) for v in vehicles})


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[DeliveryData, Witness]:
    s = SIZES.of(spec.size)
    stops = _stops(spec, s, rng)
    vehicles = _fleet(spec, s, rng)
    depot = rng.choice(DEPOTS)
    network = sample_network(rng, [depot, *(x.name for x in stops)], rng.choice(SHAPES), (s.minutes.lo, s.minutes.hi))
    names = [depot, *(x.name for x in stops)]
    table = network.minutes
    minutes = tuple(tuple(table[a][b] for b in names) for a in names)
    multi = spec.subtask == "multi_trip"
    d = DeliveryData(
        depot=depot, stops=tuple(stops), vehicles=tuple(vehicles), minutes=minutes,
        reloads=s.reloads if multi else 0, reload_minutes=rng.randint(5, 10) if multi else 0,
        pickups=spec.subtask == "pickup_and_delivery", network=network,
    )  # fmt: skip
    return d, _witness(spec, d, rng)


def _with_windows(spec: GenerationSpec, d: DeliveryData, w: Witness, rng: random.Random) -> DeliveryData:
    """Windows around the witness's service times (which never wait: each opens by then)."""
    sim = dl.simulate(d, w)
    half = WINDOW.get(spec.subtask, 15)
    stops = []
    for x in d.stops:
        t = sim.start[x.id]
        stops.append(x.model_copy(update={"open": max(0, t - rng.randint(0, half)), "close": t + rng.randint(0, half)}))
    return dl.replaced(d, stops=tuple(stops))


def _with_capacity(d: DeliveryData, w: Witness, rng: random.Random) -> DeliveryData:
    """Each vehicle type holds the witness's peak load on its vehicles, and 0-2 units more."""
    sim = dl.simulate(d, w)
    peak: dict[str, int] = {}
    for x in d.stops:
        kind = d.vehicle_by_id[sim.vehicle[x.id]].kind
        peak[kind] = max(peak.get(kind, 1), sim.peak[x.id])
    caps = {kind: p + rng.randint(0, 2) for kind, p in sorted(peak.items())}
    small = min(caps.values())
    vehicles = tuple(v.model_copy(update={"capacity": caps.get(v.kind, small)}) for v in d.vehicles)
    return dl.replaced(d, vehicles=vehicles)


def _with_shift(d: DeliveryData, w: Witness, rng: random.Random) -> DeliveryData:
    back = max(dl.simulate(d, w).back.values())
    return dl.replaced(d, shift=back + rng.randint(0, 8))


def _pick(rng: random.Random, options: list[str], most: int) -> list[str]:
    chosen = set(rng.sample(options, min(len(options), rng.randint(1, most))))
    return [o for o in options if o in chosen]


def _b_capacity(d: DeliveryData, w: Witness, rng: random.Random) -> NoParams | None:
    # one vehicle with one trip carries everything whatever its order: nothing to break
    return NoParams() if len(d.vehicles) > 1 or d.reloads or d.pickups else None


def _b_time_windows(d: DeliveryData, w: Witness, rng: random.Random) -> NoParams | None:
    return NoParams()


def _b_shift_end(d: DeliveryData, w: Witness, rng: random.Random) -> NoParams | None:
    return NoParams()


def _b_stop_deadline(d: DeliveryData, w: Witness, rng: random.Random) -> dl.StopDeadline | None:
    sim = dl.simulate(d, w)
    chosen = _pick(rng, [s.id for s in d.stops], 2)
    return dl.StopDeadline(stops=chosen, by=max(sim.start[s] for s in chosen) + rng.randint(0, 3))


def _b_max_stops(d: DeliveryData, w: Witness, rng: random.Random) -> dl.MaxStops | None:
    if len(d.vehicles) < 2:
        return None
    most = max(dl.simulate(d, w).count.values())
    return dl.MaxStops(max=most) if most < len(d.stops) else None  # a cap of every stop caps nothing


def _b_precedence(d: DeliveryData, w: Witness, rng: random.Random) -> dl.Precedence | None:
    start = dl.simulate(d, w).start
    pairs = [(a.id, b.id) for a in d.stops for b in d.stops if start[a.id] < start[b.id] and a.delivery != b.id]
    return dl.Precedence(pairs=rng.sample(pairs, min(len(pairs), rng.randint(1, 2)))) if pairs else None


def _b_same_vehicle(d: DeliveryData, w: Witness, rng: random.Random) -> dl.SameVehicle | None:
    if len(d.vehicles) < 2:
        return None
    sim = dl.simulate(d, w)
    options = [
        [a.id, b.id] for a in d.stops for b in d.stops
        if d.index[a.id] < d.index[b.id] and sim.vehicle[a.id] == sim.vehicle[b.id] and a.delivery != b.id
    ]  # fmt: skip
    return dl.SameVehicle(stops=rng.choice(options)) if options else None


def _b_different_vehicle(d: DeliveryData, w: Witness, rng: random.Random) -> dl.DifferentVehicle | None:
    if len(d.vehicles) < 2:
        return None
    sim = dl.simulate(d, w)
    options = [
        (a.id, b.id) for a in d.stops for b in d.stops
        if d.index[a.id] < d.index[b.id] and sim.vehicle[a.id] != sim.vehicle[b.id]
    ]  # fmt: skip
    return dl.DifferentVehicle(pairs=rng.sample(options, min(len(options), rng.randint(1, 2)))) if options else None


def _b_route_balance(d: DeliveryData, w: Witness, rng: random.Random) -> dl.RouteBalance | None:
    if len(d.vehicles) < 2:
        return None
    count = dl.simulate(d, w).count.values()
    return dl.RouteBalance(max=max(count) - min(count) + rng.randint(0, 1))


def _b_battery_range(d: DeliveryData, w: Witness, rng: random.Random) -> dl.BatteryRange | None:
    return dl.BatteryRange(max=max(m for _, m in dl.simulate(d, w).trips) + rng.randint(0, 3))


def _b_load_limit(d: DeliveryData, w: Witness, rng: random.Random) -> dl.LoadLimit | None:
    sim = dl.simulate(d, w)
    s = rng.choice(d.stops)
    return dl.LoadLimit(stop=s.id, max=sim.onboard[s.id] + rng.randint(0, 1))


def _b_first_stop(d: DeliveryData, w: Witness, rng: random.Random) -> dl.FirstStop | None:
    firsts = [r[0] for r in w.routes.values() if r]
    return dl.FirstStop(stop=rng.choice(firsts))


BUILDERS = {
    "first_stop": _b_first_stop,
    "capacity": _b_capacity,
    "time_windows": _b_time_windows,
    "shift_end": _b_shift_end,
    "stop_deadline": _b_stop_deadline,
    "max_stops": _b_max_stops,
    "pickup_delivery": lambda d, w, rng: NoParams(),
    "precedence": _b_precedence,
    "same_vehicle": _b_same_vehicle,
    "different_vehicle": _b_different_vehicle,
    "route_balance": _b_route_balance,
    "battery_range": _b_battery_range,
    "load_limit": _b_load_limit,
}
TIERS: dict[str, Tier] = {**{c.id: c.tier for c in TASK.pool}, "pickup_delivery": "basic"}


def objective_terms(subtask: str, imported: bool = False) -> list[ObjectiveTerm]:
    """Travel minutes, then (generated rounds) the sum of service start minutes."""
    if imported:
        return [make_term("travel", "travel")]
    return [make_term("travel", "travel"), make_term("arrival_sum", "arrival_sum")]


def _rules(
    spec: GenerationSpec, d: DeliveryData, witness: Witness, rng: random.Random
) -> tuple[DeliveryData, list[Rule]]:
    sampled = [k for k in FORCED[spec.subtask]]
    sampled += [k for k in sampled_kinds(spec, TASK.base_rules) if k not in sampled]
    if "time_windows" in sampled:
        d = _with_windows(spec, d, witness, rng)
    if "capacity" in sampled:
        d = _with_capacity(d, witness, rng)
    if "shift_end" in sampled:
        d = _with_shift(d, witness, rng)
    rules = witness_rules([], sampled, TIERS, BUILDERS, d, witness, rng)
    return d, rules


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    d, witness = _entities(spec, rng)
    d, rules = _rules(spec, d, witness, rng)
    return Draft(spec=spec, data=d.model_dump(mode="json"), rules=rules, objective=objective_terms(spec.subtask))


# -- published data (TSPLIB) -----------------------------------------------------------
SOURCE_FORMAT = (
    "TSPLIB TSP with EDGE_WEIGHT_TYPE EXPLICIT (FULL_MATRIX, LOWER_DIAG_ROW, UPPER_ROW, LOWER_ROW, UPPER_DIAG_ROW)"
)
MATRIX_FORMATS = ("FULL_MATRIX", "LOWER_DIAG_ROW", "UPPER_DIAG_ROW", "LOWER_ROW", "UPPER_ROW")
MAX_IMPORT_NODES = 60  # one vehicle's circuit over more nodes is beyond a quick certificate


def _cells(fmt: str, n: int) -> list[tuple[int, int]]:
    """The (row, column) each number of the EDGE_WEIGHT_SECTION fills, in file order."""
    if fmt == "FULL_MATRIX":
        return [(i, j) for i in range(n) for j in range(n)]
    if fmt == "LOWER_DIAG_ROW":
        return [(i, j) for i in range(n) for j in range(i + 1)]
    if fmt == "UPPER_DIAG_ROW":
        return [(i, j) for i in range(n) for j in range(i, n)]
    if fmt == "LOWER_ROW":
        return [(i, j) for i in range(n) for j in range(i)]
    return [(i, j) for i in range(n) for j in range(i + 1, n)]  # UPPER_ROW


def read_source(source: SourceFile) -> Imported:
    """A TSPLIB file's explicit distance matrix as a one-vehicle round trip from node 1;
    a :class:`SourceError` names the file and the line at fault."""
    name = source.name
    header: dict[str, tuple[int, str]] = {}
    numbers: list[tuple[int, str]] = []
    section = False
    lines = source.text.splitlines()
    for ln, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        if line == "EOF":
            break
        if section:
            if line[0].isalpha():
                if line.startswith("DISPLAY_DATA_SECTION"):
                    break
                raise SourceError(f"{name} line {ln}: unexpected section {line.split()[0]!r} in the edge weights")
            numbers += [(ln, w) for w in line.split()]
            continue
        if line.startswith("EDGE_WEIGHT_SECTION"):
            section = True
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise SourceError(f"{name} line {ln}: expected 'KEY : value', got {line[:40]!r}")
        header[key.strip().upper()] = (ln, value.strip())
    for key in ("TYPE", "DIMENSION", "EDGE_WEIGHT_TYPE"):
        if key not in header:
            raise SourceError(f"{name}: the header has no {key}")
    ln, kind = header["TYPE"]
    if kind.upper() not in ("TSP", "ATSP"):
        raise SourceError(f"{name} line {ln}: TYPE {kind} is not a TSP (this task reads TSP and ATSP files)")
    ln, ewt = header["EDGE_WEIGHT_TYPE"]
    if ewt.upper() != "EXPLICIT":
        raise SourceError(f"{name} line {ln}: EDGE_WEIGHT_TYPE {ewt} is not read (only EXPLICIT matrices)")
    ln, fmt = header.get("EDGE_WEIGHT_FORMAT", (0, ""))
    if fmt.upper() not in MATRIX_FORMATS:
        raise SourceError(
            f"{name} line {ln}: EDGE_WEIGHT_FORMAT {fmt or '(missing)'} is not one of {', '.join(MATRIX_FORMATS)}"
        )
    ln, dim = header["DIMENSION"]
    if not dim.isdigit() or not 3 <= int(dim) <= MAX_IMPORT_NODES:
        raise SourceError(f"{name} line {ln}: DIMENSION {dim!r} is not a whole number from 3 to {MAX_IMPORT_NODES}")
    n = int(dim)
    if not section:
        raise SourceError(f"{name}: no EDGE_WEIGHT_SECTION")
    cells = _cells(fmt.upper(), n)
    if len(numbers) != len(cells):
        last = numbers[-1][0] if numbers else len(lines)
        raise SourceError(
            f"{name} line {last}: the {fmt} section of a {n}-node file has {len(cells)} numbers, found {len(numbers)}"
        )
    matrix = [[0] * n for _ in range(n)]
    for (i, j), (ln, word) in zip(cells, numbers, strict=True):
        if not word.isdigit():
            raise SourceError(f"{name} line {ln}: {word!r} is not a non-negative whole number")
        matrix[i][j] = int(word)
        if fmt.upper() != "FULL_MATRIX":
            matrix[j][i] = int(word)
    if any(matrix[i][i] for i in range(n)):
        raise SourceError(f"{name}: the diagonal of the matrix is not zero")
    data = {
        "depot": "1",
        "stops": [{"id": str(k), "name": f"node {k}"} for k in range(2, n + 1)],
        "vehicles": [{"id": "Vehicle", "kind": "vehicle"}],
        "minutes": matrix,
    }
    try:
        DeliveryData.model_validate(data)
    except ValueError as exc:
        raise SourceError(f"{name}: {exc}") from None
    return Imported(subtask="round_trip", data=data)


FIRST_PLAN_TIME = 2.0


def draft_from(spec: GenerationSpec, data: dict[str, Any], rng: random.Random) -> Draft:
    """The file's tour under its length; sampled rules (if any) are drawn from a first
    feasible tour (the first CP-SAT solution), so they are satisfiable."""
    d = parsed(DeliveryData, data)
    base = Draft(spec=spec, data=d.model_dump(mode="json"), rules=[], objective=objective_terms("round_trip", True))
    if not sampled_kinds(spec, TASK.base_rules):
        return base
    sm = build(base)
    solver = make_solver(SolverLimits(deterministic_time=FIRST_PLAN_TIME))
    solver.parameters.stop_after_first_solution = True
    if solver.solve(sm.model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise NoDraft("no first tour")
    witness = dl.Plan({"Vehicle": tuple(sm.decode(solver)["routes"][0]["stops"])})
    d2, rules = _rules(spec, d, witness, rng)
    return variant(base, data=d2.model_dump(mode="json"), rules=rules)


# -- hard-tier hooks -------------------------------------------------------------------
def _plan(d: DeliveryData, plan: dict[str, Any]) -> dl.Plan:
    routes = {r["vehicle"]: tuple(r["stops"]) for r in plan["routes"]}
    return dl.Plan({v.id: routes.get(v.id, ()) for v in d.vehicles})


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """The loosest infeasible rule of a kind feasible rounds carry, by bisection over
    values each of which the rule alone could meet, so the conflict runs through the
    instance's rules: with a fleet, a cap on stops per vehicle from N down to the even
    share ceil(N/K) (capacity, windows and shifts then cannot absorb it); else (or when
    no cap conflicts) a deadline on one stop from the shift down to the earliest minute
    it could be reached straight from the depot."""
    d = parsed(DeliveryData, draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731

    def checked(found: Draft | None) -> Draft | None:
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
        return None

    n, k = len(d.stops), len(d.vehicles)
    if k > 1 and not any(r.kind == "max_stops" for r in draft_.rules):
        caps = list(range(n, -(-n // k) - 1, -1))

        def cap(m: int) -> Draft:
            return with_conflict_rule(draft_, "max_stops", dl.MaxStops(max=m), position)

        found = checked(first_infeasible(caps, cap, feasible))
        if found is not None:
            return found
    stops = list(d.stops)
    rng.shuffle(stops)
    for s in stops[:2]:
        lo = max(s.open, d.minutes[0][d.index[s.id]])
        hi = s.close if s.close is not None else (d.shift or lo + sum(max(r) for r in d.minutes))
        values = list(range(hi, lo - 1, -1))
        if not values:
            continue

        def trial(by: int, sid: str = s.id) -> Draft:
            return with_conflict_rule(draft_, "stop_deadline", dl.StopDeadline(stops=[sid], by=by), position)

        found = checked(first_infeasible(values, trial, feasible))
        if found is not None:
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A stop that must now be served earlier than planned, or a used vehicle (one without
    an interchangeable twin) breaking down."""
    d = parsed(DeliveryData, draft_.data)
    p = _plan(d, plan)
    sim = dl.simulate(d, p)
    out = []
    for s in d.stops:
        by = sim.start[s.id] - 1
        if by >= max(s.open, d.minutes[0][d.index[s.id]]):
            out.append(make_rule("stop_deadline", "hard", dl.StopDeadline(stops=[s.id], by=by)))
    # an interchangeable vehicle never breaks down: a recovery counts changes from the
    # answer's own plan, which may have swapped it with its twin (another answer to the same problem)
    twins = {v for members in dl.vehicle_classes(d, draft_.rules, draft_.objective) for v in members}
    if len(d.vehicles) > 1:
        out += [
            make_rule("vehicle_off", "hard", dl.VehicleOff(vehicle=v))
            for v, n in sim.count.items()
            if n and v not in twins
        ]
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, list[str]]:
    d = parsed(DeliveryData, draft_.data)
    return dl.TASK.existing(d, _plan(d, plan))


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    d = parsed(DeliveryData, draft_.data)
    if d.shift is None and all(s.close is None for s in d.stops):
        return None
    return make_rule("delay_buffer", "hard", dl.DelayBuffer(minutes=rng.randint(2, 6))), []


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Service minutes (worst: long) and, without pickups, delivered units (worst: many).

    Longer service only delays later services, which no rule but an order between two
    stops can welcome (a shorter one may bring the later stop forward past the earlier):
    with an order rule, service minutes are never uncertain, so the data's values stay
    the worst case for every rule."""
    d = parsed(DeliveryData, draft_.data)
    ordered = any(r.kind == "precedence" for r in draft_.rules)
    service = [
        Uncertain(id="", kind="service", target=s.id, low=s.service, high=s.service + rng.randint(1, 4))
        for s in d.stops
        if not ordered
    ]
    load = [] if d.pickups else [
        Uncertain(id="", kind="load", target=s.id, low=s.load, high=s.load + rng.randint(1, 2)) for s in d.stops
    ]  # fmt: skip
    out = rng.sample(service, min(2, len(service))) + rng.sample(load, min(2, len(load)))
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = parsed(DeliveryData, data)
    stops = tuple(s.model_copy(update={u.kind: value}) if s.id == u.target else s for s in d.stops)
    return {**data, "stops": [s.model_dump(mode="json") for s in stops]}


def worst_is_low(u: Uncertain) -> bool:
    return False


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Travel minutes and return minute per vehicle, walked along the decoded routes here
    (not through the checker's simulation)."""
    d = parsed(DeliveryData, draft_.data)
    idx, T = d.index, d.minutes
    routes = {r["vehicle"]: r["stops"] for r in plan["routes"]}
    travel: dict[str, int] = {}
    back: dict[str, int] = {}
    for v in d.vehicles:
        route = routes.get(v.id, [])
        at = clock = total = 0
        for x in route:
            if x == RELOAD:
                clock += T[at][0] + d.reload_minutes
                total += T[at][0]
                at = 0
                continue
            stop = d.stop_by_id[x]
            clock = max(clock + T[at][idx[x]], stop.open) + stop.service
            total += T[at][idx[x]]
            at = idx[x]
        if route:
            clock += T[at][0]
            total += T[at][0]
        travel[v.id], back[v.id] = total, clock if route else 0
    return {"travel": travel, "back": back}


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
