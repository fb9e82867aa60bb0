"""Urban Traffic Planning: vehicle flows split over listed candidate routes, period by period.

Decision: x[r,p] = the whole number of vehicles of route r's flow that take r in period p
(a multi-commodity flow over the listed paths: each flow's x in a period sum to its
demand then) and, for robustness, y[f,r] = 1 when r is flow f's backup route. Per road
and period the load is the sum of the x of the routes along it (both directions
together); vehicles beyond a road's free-flow level are delayed by its delay minutes
(excess = max(load - free, 0), exact). The objective is lexicographic: the subtask's
primary figure (network minutes = route minutes of every vehicle plus delays, or the
priority flows' minutes first), diverted vehicles where the subtask counts them, and a
stated order score last (flow points x route number x vehicles; the points are distinct
per flow). Flows differ by origin, destination and demand, so no symmetry is broken by
the order score; it only separates plans of equal cost.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import networkx as nx
from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.routing import traffic as tr
from pbsolve.checkers.routing.traffic import Ends, Flow, Level, Plan, Route, TrafficData
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
from pbsolve.network_kit import Road, RoadNetwork, Shape, sample_network
from pbsolve.params import NoParams, Params, make_rule
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=tr.TASK_ID,
    name="Urban Traffic Planning",
    family="routing",
    summary="split vehicle flows over candidate routes period by period under road capacities, closures and priorities",
    subtasks=(
        SubtaskSpec(
            "peak_hour_diversion", "Peak-hour diversion", "morning commuter flows diverted off congested main roads"
        ),
        SubtaskSpec(
            "road_works_closure",
            "Road-works closure",
            "roads closed in stated periods; diverted vehicles counted after network minutes",
        ),
        SubtaskSpec(
            "event_traffic", "Event traffic", "flows converging on one venue, each signed over at most so many routes"
        ),
        SubtaskSpec(
            "priority_corridor",
            "Priority corridor",
            "buses and ambulances within a time bound; their minutes minimised before everyone's",
        ),
        SubtaskSpec(
            "evening_ramp_down",
            "Evening ramp-down",
            "falling demand with route splits that change only gradually between periods",
        ),
    ),
    pool=(
        ConstraintSpec("road_capacity", "basic", "vehicles on a road per period within its capacity"),
        ConstraintSpec("road_closure", "basic", "named roads carry no traffic in named periods (road works)"),
        ConstraintSpec("priority_bound", "basic", "priority vehicles take routes within a time bound"),
        ConstraintSpec("zone_limit", "basic", "a school zone or old town sees at most so many vehicles per period"),
        ConstraintSpec("route_ban", "basic", "named flows (lorries) banned from named streets"),
        ConstraintSpec(
            "detour_limit", "basic", "no vehicle's route over so many minutes longer than its flow's quickest"
        ),
        ConstraintSpec("split_limit", "medium", "each flow signed over at most so many routes per period"),
        ConstraintSpec("main_route_share", "medium", "named flows keep a stated share on their main route"),
        ConstraintSpec("corridor_balance", "medium", "two parallel roads' loads within a stated gap"),
        ConstraintSpec("route_stability", "medium", "a route's vehicles change by at most so many between periods"),
        ConstraintSpec("exposure_budget", "stateful", "cumulative vehicles on residential roads over the periods"),
        ConstraintSpec("congestion_recovery", "stateful", "no road over its free-flow level two periods running"),
        *mechanism_pool(
            "every flow names a backup route that avoids the listed incident-prone roads: any one of them may fail",
            replan="repair a plan after a road closure, moving as few vehicles as possible",
        ),
    ),
    base_rules=("road_capacity",),
)

JUNCTIONS = (
    "Market Square", "Station Road", "Church Lane", "Mill Bridge", "Park Gate", "High Street", "Castle Hill",
    "Riverside", "Canal Wharf", "Queens Circus", "Elm Grove", "Harbour Way", "Tannery Row", "Abbey Fields",
    "Victoria Cross", "North Ring", "Foundry Yard", "College Green", "Orchard Rise", "Dock Road", "Kings Cross",
    "Bell Corner",
)  # fmt: skip
VENUE = "Arena Plaza"
SHAPE: dict[str, Shape] = {
    "peak_hour_diversion": "grid",
    "road_works_closure": "grid",
    "event_traffic": "geometric",
    "priority_corridor": "ring",
    "evening_ramp_down": "ring",
}
START = {  # first period's start, minutes after midnight
    "peak_hour_diversion": 7 * 60 + 30,
    "road_works_closure": 9 * 60,
    "event_traffic": 18 * 60,
    "priority_corridor": 8 * 60,
    "evening_ramp_down": 17 * 60 + 30,
}
PROFILE = {  # demand factor (percent) per period, stretched over the periods
    "peak_hour_diversion": (80, 100, 90),
    "road_works_closure": (100, 100, 100),
    "event_traffic": (60, 90, 100),
    "priority_corridor": (90, 100, 90),
    "evening_ramp_down": (100, 75, 50),
}
OBJECTIVES = {
    "peak_hour_diversion": ("network_minutes", "order_score"),
    "road_works_closure": ("network_minutes", "diverted", "order_score"),
    "event_traffic": ("network_minutes", "order_score"),
    "priority_corridor": ("priority_minutes", "network_minutes", "order_score"),
    "evening_ramp_down": ("network_minutes", "diverted", "order_score"),
}
FORCED = {
    "peak_hour_diversion": (),
    "road_works_closure": ("road_closure",),
    "event_traffic": ("split_limit",),
    "priority_corridor": ("priority_bound",),
    "evening_ramp_down": ("route_stability",),
}
VEHICLES = (("cars", "commuters"), ("cars", "through traffic"), ("lorries", "freight"), ("vans", "deliveries"))
PRIORITY = (("buses", "bus line"), ("ambulances", "ambulance runs"))
PERIOD_MINUTES = 15


class TrafficSizes(Settings):
    """How big an urban-traffic instance is."""

    places: PositiveInt = Field(ge=4, le=len(JUNCTIONS))
    flows: PositiveInt = Field(ge=2, le=9)
    routes: PositiveInt = Field(ge=2, le=3, description="candidate routes listed per flow")
    periods: PositiveInt = Field(le=4)
    demand: PositiveRange = Field(description="vehicles of a flow in one period (before the subtask's profile)")
    capacity: PositiveRange = Field(description="vehicles a road carries per period (raised to the witness load)")
    minutes: PositiveRange = Field(description="minutes to drive a road")


SIZES = SizeTable[TrafficSizes](
    tiny=TrafficSizes(places=6, flows=2, routes=2, periods=2, demand=PositiveRange(lo=1, hi=4),
                      capacity=PositiveRange(lo=2, hi=5), minutes=PositiveRange(lo=2, hi=9)),
    small=TrafficSizes(places=9, flows=3, routes=2, periods=2, demand=PositiveRange(lo=5, hi=20),
                       capacity=PositiveRange(lo=10, hi=30), minutes=PositiveRange(lo=2, hi=9)),
    default=TrafficSizes(places=10, flows=4, routes=2, periods=2, demand=PositiveRange(lo=10, hi=40),
                         capacity=PositiveRange(lo=20, hi=60), minutes=PositiveRange(lo=2, hi=9)),
    large=TrafficSizes(places=20, flows=7, routes=3, periods=4, demand=PositiveRange(lo=10, hi=50),
                       capacity=PositiveRange(lo=30, hi=90), minutes=PositiveRange(lo=2, hi=9)),
)  # fmt: skip
PROBE_TIME = 2.0
POINTS_TOP = 60  # flows' order-score points are distinct, drawn from 1..60
# measured on 30 default drafts: the uniqueness re-optimisations took 1.55 s with presolve
# and probing off, 1.61 s with presolve off and 2.32 s with both on (first solves 0.8 s).
# (LP level 1 made the first solves, whose rules are assumptions, 100x slower.)
UNIQUENESS_PARAMETERS: dict[str, Any] = {"cp_model_presolve": False, "cp_model_probing_level": 0}


# -- the CP-SAT model ------------------------------------------------------------------
class TrafficModel(ModelBase):
    def __init__(self, data: TrafficData, with_backups: bool = False) -> None:
        super().__init__()
        self.data = d = data
        self.x: dict[tr.Cell, cp_model.IntVar] = {}
        self.y: dict[tuple[str, str], cp_model.IntVar] = {}
        self._loads: dict[tuple[Ends, str], cp_model.LinearExpr] = {}
        for f in d.flows:
            for i, p in enumerate(d.periods):
                row = [self.m.new_int_var(0, f.demand[i], f"x[{r.id},{p}]") for r in d.routes_of[f.id]]
                self.x.update({(r.id, p): v for r, v in zip(d.routes_of[f.id], row)})
                self.m.add(cp_model.LinearExpr.sum(row) == f.demand[i])
            if with_backups:
                brow = [self.m.new_bool_var(f"y[{f.id},{r.id}]") for r in d.routes_of[f.id]]
                self.y.update({(f.id, r.id): v for r, v in zip(d.routes_of[f.id], brow)})
                self.m.add_exactly_one(brow)

    def load(self, e: Ends, period: str) -> cp_model.LinearExpr:
        """Vehicles on road ``e`` in ``period`` (built once per model)."""
        found = self._loads.get((e, period))
        if found is None:
            found = cp_model.LinearExpr.sum([self.x[rid, period] for rid in self.data.routes_on.get(e, ())])
            self._loads[e, period] = found
        return found

    def most(self, e: Ends, period: str) -> int:
        """The largest load road ``e`` can have in ``period`` (every route along it full)."""
        return self.data.most_load.get((e, period), 0)


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("road_capacity")
def _road_capacity(tm: TrafficModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    for e in d.used_roads:
        for period in d.periods:
            if tm.most(e, period) > d.capacity_of[e]:
                tm.post(tm.load(e, period) <= d.capacity_of[e], lit)


@encoder("road_closure")
def _road_closure(tm: TrafficModel, p: tr.RoadClosure, lit: cp_model.IntVar) -> None:
    d = tm.data
    shut = {frozenset(r) for r in p.roads}
    for period in p.periods:
        cells = [tm.x[r.id, period] for r in d.routes if shut & set(d.route_roads[r.id])]
        if cells:
            tm.post(cp_model.LinearExpr.sum(cells) == 0, lit)


@encoder("priority_bound")
def _priority_bound(tm: TrafficModel, p: tr.PriorityBound, lit: cp_model.IntVar) -> None:
    d = tm.data
    cells = [
        v for (rid, _), v in tm.x.items() if d.route_by_id[rid].flow in p.flows and d.route_minutes[rid] > p.minutes
    ]
    if cells:
        tm.post(cp_model.LinearExpr.sum(cells) == 0, lit)


@encoder("zone_limit")
def _zone_limit(tm: TrafficModel, p: tr.ZoneLimit, lit: cp_model.IntVar) -> None:
    d = tm.data
    for period in d.periods:
        cells = [tm.x[r.id, period] for r in d.routes if p.place in r.places]
        tm.post(cp_model.LinearExpr.sum(cells) <= p.max, lit)


@encoder("route_ban")
def _route_ban(tm: TrafficModel, p: tr.RouteBan, lit: cp_model.IntVar) -> None:
    d = tm.data
    banned = {frozenset(r) for r in p.roads}
    cells = [
        v for (rid, _), v in tm.x.items() if d.route_by_id[rid].flow in p.flows and banned & set(d.route_roads[rid])
    ]
    if cells:
        tm.post(cp_model.LinearExpr.sum(cells) == 0, lit)


@encoder("detour_limit")
def _detour_limit(tm: TrafficModel, p: tr.DetourLimit, lit: cp_model.IntVar) -> None:
    d = tm.data
    cells = [v for (rid, _), v in tm.x.items() if tr.detour(d, rid) > p.minutes]
    if cells:
        tm.post(cp_model.LinearExpr.sum(cells) == 0, lit)


@encoder("split_limit")
def _split_limit(tm: TrafficModel, p: tr.SplitLimit, lit: cp_model.IntVar) -> None:
    """used[r,p] may be 1 freely; 0 forces x[r,p] to 0 (a definition, not a rule)."""
    d = tm.data
    for f in d.flows:
        if len(d.routes_of[f.id]) <= p.max:
            continue
        for i, period in enumerate(d.periods):
            used = []
            for r in d.routes_of[f.id]:
                u = tm.m.new_bool_var("")
                tm.m.add(tm.x[r.id, period] <= f.demand[i] * u)
                used.append(u)
            tm.post(cp_model.LinearExpr.sum(used) <= p.max, lit)


@encoder("main_route_share")
def _main_route_share(tm: TrafficModel, p: tr.MainRouteShare, lit: cp_model.IntVar) -> None:
    d = tm.data
    for fid in p.flows:
        main = d.routes_of[fid][0].id
        for period in d.periods:
            tm.post(100 * tm.x[main, period] >= p.percent * d.demand(fid, period), lit)


@encoder("corridor_balance")
def _corridor_balance(tm: TrafficModel, p: tr.CorridorBalance, lit: cp_model.IntVar) -> None:
    a, b = frozenset(p.first), frozenset(p.second)
    for period in tm.data.periods:
        tm.post(tm.load(a, period) - tm.load(b, period) <= p.max, lit)
        tm.post(tm.load(b, period) - tm.load(a, period) <= p.max, lit)


@encoder("route_stability")
def _route_stability(tm: TrafficModel, p: tr.RouteStability, lit: cp_model.IntVar) -> None:
    d = tm.data
    for r in d.routes:
        for before, after in itertools.pairwise(d.periods):
            tm.post(tm.x[r.id, after] - tm.x[r.id, before] <= p.max, lit)
            tm.post(tm.x[r.id, before] - tm.x[r.id, after] <= p.max, lit)


@encoder("exposure_budget")
def _exposure_budget(tm: TrafficModel, p: tr.ExposureBudget, lit: cp_model.IntVar) -> None:
    for road in p.roads:
        e = frozenset(road)
        tm.post(cp_model.LinearExpr.sum([tm.load(e, period) for period in tm.data.periods]) <= p.max, lit)


@encoder("congestion_recovery")
def _congestion_recovery(tm: TrafficModel, p: tr.CongestionRecovery, lit: cp_model.IntVar) -> None:
    """over[e,p] may be 1 freely; 0 keeps the load within the free-flow level; the rule
    forbids two 1s running (a road over its level in a period must have over = 1)."""
    d = tm.data
    for e in d.used_roads:
        free = d.level_of[e].free
        over: list[cp_model.IntVar | None] = []
        for period in d.periods:
            big = tm.most(e, period) - free
            if big <= 0:
                over.append(None)
                continue
            o = tm.m.new_bool_var("")
            tm.m.add(tm.load(e, period) <= free + big * o)
            over.append(o)
        for a, b in itertools.pairwise(over):
            if a is not None and b is not None:
                tm.post(a + b <= 1, lit)


@encoder("incident_backup")
def _incident_backup(tm: TrafficModel, p: tr.IncidentBackup, lit: cp_model.IntVar) -> None:
    """Backups avoid the listed roads. When road e fails in period p, flow f's vehicles
    along e move to its backup b: w[f,b,e,p] >= (f's vehicles along e) - M (1 - y[f,b])
    (a lower bound is enough: the capacity rows only push it down), and every road's
    load, less the vehicles that left it, plus the vehicles moved onto it, stays within
    its capacity."""
    d = tm.data
    failing = [frozenset(r) for r in p.roads]
    for (_, rid), yv in tm.y.items():
        if set(d.route_roads[rid]) & set(failing):
            tm.post(yv == 0, lit)
    for e in failing:
        for i, period in enumerate(d.periods):
            onto: dict[Ends, list[cp_model.IntVar]] = {}
            for f in d.flows:
                along = [tm.x[r.id, period] for r in d.routes_of[f.id] if e in d.route_roads[r.id]]
                if not along or not f.demand[i]:
                    continue
                for b in d.routes_of[f.id]:
                    if set(d.route_roads[b.id]) & set(failing):
                        continue
                    w = tm.m.new_int_var(0, f.demand[i], "")
                    tm.m.add(w >= cp_model.LinearExpr.sum(along) - f.demand[i] * (1 - tm.y[f.id, b.id]))
                    for q in d.route_roads[b.id]:
                        onto.setdefault(q, []).append(w)
            for q in d.used_roads:
                left = [tm.x[rid, period] for rid in d.routes_on[q] if e in d.route_roads[rid]]
                moved = onto.get(q, [])
                if not moved and not left and tm.most(q, period) <= d.capacity_of[q]:
                    continue
                expr = tm.load(q, period) - cp_model.LinearExpr.sum(left) + cp_model.LinearExpr.sum(moved)
                tm.post(expr <= d.capacity_of[q], lit)


def _excess(tm: TrafficModel, e: Ends, period: str) -> tuple[cp_model.IntVar, int] | None:
    """max(load - free, 0) of road e in period, with its largest value; None when it is
    always 0. The lower bounds are the LP's (minimising keeps them tight); the Boolean
    'over' makes the value exact whatever is optimised (measured on 30 default drafts:
    0.9 s of first solves against 1.4 s with AddMaxEquality)."""
    free = tm.data.level_of[e].free
    top = tm.most(e, period) - free
    if top <= 0:
        return None
    v = tm.m.new_int_var(0, top, "")
    load = tm.load(e, period)
    tm.m.add(v >= load - free)
    over = tm.m.new_bool_var("")
    tm.m.add(v <= load - free).only_enforce_if(over)
    tm.m.add(v == 0).only_enforce_if(~over)
    return v, top


def _objective(tm: TrafficModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    demand_of = d.cell_demand
    if term.kind == "network_minutes":
        cells = [(v, d.route_minutes[rid]) for (rid, _), v in tm.x.items()]
        ub = sum(demand_of[c] * d.route_minutes[c[0]] for c in tm.x)
        for e in d.used_roads:
            for period in d.periods:
                found = _excess(tm, e, period)
                if found is not None:
                    cells.append((found[0], d.level_of[e].delay))
                    ub += found[1] * d.level_of[e].delay
        return cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells]), ub
    if term.kind == "priority_minutes":
        fast = [c for c in tm.x if d.flow_by_id[d.route_by_id[c[0]].flow].priority]
        ub = sum(demand_of[c] * d.route_minutes[c[0]] for c in fast)
        return cp_model.LinearExpr.weighted_sum([tm.x[c] for c in fast], [d.route_minutes[c[0]] for c in fast]), ub
    if term.kind == "diverted":
        side = [(v, c) for c, v in tm.x.items() if d.route_number[c[0]] != 1]
        return cp_model.LinearExpr.sum([v for v, _ in side]), sum(demand_of[c] for _, c in side)
    if term.kind == "order_score":
        coef = {c: d.flow_by_id[d.route_by_id[c[0]].flow].points * d.route_number[c[0]] for c in tm.x}
        expr = cp_model.LinearExpr.weighted_sum(list(tm.x.values()), [coef[c] for c in tm.x])
        return expr, sum(coef[c] * demand_of[c] for c in tm.x)
    if term.kind == "backup_score":
        pts = {f.id: f.points for f in d.flows}
        keys = list(tm.y)
        expr = cp_model.LinearExpr.weighted_sum([tm.y[k] for k in keys], [pts[f] * d.route_number[r] for f, r in keys])
        return expr, sum(f.points * len(d.routes_of[f.id]) for f in d.flows)
    if term.kind == "changes":
        old = tr.current_flows(term)
        parts = []
        for c, v in tm.x.items():
            if old.get(c, 0) > 0:
                m = tm.m.new_int_var(0, old[c], "")
                tm.m.add_max_equality(m, [old[c] - v, 0])
                parts.append(m)
        return cp_model.LinearExpr.sum(parts), sum(old.values())
    raise ValueError(f"unknown objective kind {term.kind!r}")


def decode_plan(data: TrafficData, vehicles: dict[tr.Cell, int], backup: dict[str, str] | None) -> dict[str, Any]:
    """The answer section of a plan (the checker's JSON form)."""
    return {"flows": tr.TASK.plan_json(data, Plan(vehicles, backup))}


def build(draft: Draft) -> SolverModel:
    data = parsed(TrafficData, draft.data)
    tm = TrafficModel(data, with_backups=any(r.kind == "incident_backup" for r in draft.rules))

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        vehicles = {c: int(solver.value(v)) for c, v in tm.x.items()}
        backup = None
        if tm.y:
            backup = {f: r for (f, r), v in tm.y.items() if solver.value(v)}
        return decode_plan(data, vehicles, backup)

    # the last route of a flow in a period is fixed by the others (the demand): the
    # uniqueness cut needs only the others, which halves its size on two-route flows
    free = [tm.x[r.id, p] for f in data.flows for p in data.periods for r in data.routes_of[f.id][:-1]]
    return solver_model(
        tm, draft, ENCODERS, tr.RULE_PARAMS, _objective, decode, list(tm.y.values()), free,
        uniqueness_parameters=UNIQUENESS_PARAMETERS,
    )  # fmt: skip


# -- sampling --------------------------------------------------------------------------
Witness = dict[tr.Cell, int]  # (route, period) -> vehicles


def _label(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def _routes(net: RoadNetwork, origin: str, destination: str, k: int, fid: str) -> list[Route]:
    """Up to k shortest simple paths with distinct minutes (fewest minutes first)."""
    out: list[Route] = []
    minutes: set[int] = set()
    for path in itertools.islice(nx.shortest_simple_paths(net.graph, origin, destination, weight="minutes"), 8):
        m = net.path_minutes(path)
        if m in minutes:
            continue
        minutes.add(m)
        out.append(Route(id=f"{fid}-{len(out) + 1}", flow=fid, places=tuple(path)))
        if len(out) == k:
            break
    return out


def _entities(spec: GenerationSpec, rng: random.Random, kinds: list[str]) -> tuple[TrafficData, Witness]:
    """The network, flows (with their listed routes) and a planted plan, the witness. When
    the draft asks for priority rules, a third of the flows are priority flows; when it
    asks for a closure, the witness keeps off one main-route road in some periods."""
    s = SIZES.of(spec.size)
    names = rng.sample(JUNCTIONS, s.places)
    event = spec.subtask == "event_traffic"
    if event:
        names[0] = VENUE
    net = sample_network(rng, names, SHAPE[spec.subtask], (s.minutes.lo, s.minutes.hi), (1, 1))
    profile = PROFILE[spec.subtask]
    factors = [profile[min(len(profile) - 1, i * len(profile) // s.periods)] for i in range(s.periods)]
    if s.periods == 1:
        factors = [100]
    points = rng.sample(range(1, POINTS_TOP + 1), s.flows)
    flows: list[Flow] = []
    routes: list[Route] = []
    used_od: set[tuple[str, str]] = set()
    tries = 0
    while len(flows) < s.flows and tries < 60:
        tries += 1
        fid = f"F{len(flows) + 1}"
        dest = VENUE if event else rng.choice(names)
        origin = rng.choice([n for n in names if n != dest])
        if (origin, dest) in used_od or (net.graph.has_edge(origin, dest) and rng.random() < 0.7):
            continue
        rs = _routes(net, origin, dest, s.routes, fid)
        if len(rs) < 2:
            continue
        wanted = spec.subtask == "priority_corridor" or "priority_bound" in kinds
        priority = wanted and len(flows) < max(1, s.flows // 3)
        vehicle, kind = rng.choice(PRIORITY) if priority else rng.choice(VEHICLES)
        base = s.demand.draw(rng)
        if priority:
            base = max(1, base // 3)
        demand = tuple(max(1 if s.demand.lo else 0, base * k // 100 + rng.randint(-1, 1)) for k in factors)
        used_od.add((origin, dest))
        flows.append(
            Flow(
                id=fid, name=f"{kind} {origin} → {dest}", vehicle=vehicle, origin=origin, destination=dest,
                demand=demand, points=points[len(flows)], priority=priority,
            )
        )  # fmt: skip
        routes.extend(rs)
    if len(flows) < s.flows:
        raise NoDraft("flows")
    periods = tuple(_label(START[spec.subtask] + PERIOD_MINUTES * i) for i in range(s.periods))
    closed, shut_periods = _closure(routes, flows, periods, rng) if "road_closure" in kinds else (None, ())
    witness: Witness = {}
    for f in flows:
        rs = [r for r in routes if r.flow == f.id]
        for i, p in enumerate(periods):
            open_ = [r for r in rs if not (p in shut_periods and closed in _route_ends(r))]
            chosen = rng.sample(open_, rng.randint(1, min(2, len(open_))))
            if "main_route_share" in kinds and rs[0] in open_ and rs[0] not in chosen:
                chosen[0] = rs[0]  # the main route carries a share the builder can state
            cut = sorted(rng.randint(0, f.demand[i]) for _ in range(len(chosen) - 1))
            parts = [b - a for a, b in zip([0, *cut], [*cut, f.demand[i]])]
            for r in rs:
                witness[r.id, p] = 0
            for r, v in zip(chosen, parts):
                witness[r.id, p] = v
    # capacities: drawn, then raised to the witness's busiest period on the road
    probe = TrafficData.model_construct(
        network=net, periods=periods, period_minutes=PERIOD_MINUTES, flows=tuple(flows), routes=tuple(routes),
        levels=(), uncertain=(),
    )  # fmt: skip
    wl = _loads(probe, witness)
    roads, levels = [], []
    for road in net.roads:
        peak = max((wl.get((road.ends, p), 0) for p in periods), default=0)
        cap = max(s.capacity.draw(rng), peak)
        roads.append(Road(a=road.a, b=road.b, minutes=road.minutes, capacity=cap))
        levels.append(Level(a=road.a, b=road.b, free=cap * rng.randint(50, 80) // 100, delay=rng.randint(1, 3)))
    data = TrafficData(
        network=RoadNetwork(places=net.places, roads=tuple(roads)), periods=periods, period_minutes=PERIOD_MINUTES,
        flows=tuple(flows), routes=tuple(routes), levels=tuple(levels),
    )  # fmt: skip
    return data, witness


def _route_ends(r: Route) -> set[Ends]:
    return {frozenset(p) for p in itertools.pairwise(r.places)}


def _closure(
    routes: list[Route], flows: list[Flow], periods: tuple[str, ...], rng: random.Random
) -> tuple[Ends | None, tuple[str, ...]]:
    """A road of some main route that every flow can avoid, and the periods the witness
    keeps off it (the closure builder then finds it empty there)."""
    mains = sorted({e for r in routes if r.id.endswith("-1") for e in _route_ends(r)}, key=sorted)
    rng.shuffle(mains)
    for e in mains:
        if all(any(e not in _route_ends(r) for r in routes if r.flow == f.id) for f in flows):
            k = rng.randint(1, len(periods))
            start = rng.randint(0, len(periods) - k)
            return e, periods[start : start + k]
    return None, ()


def _loads(d: TrafficData, w: Witness) -> dict[tuple[Ends, str], int]:
    out: dict[tuple[Ends, str], int] = {}
    by_id = {r.id: r for r in d.routes}
    for (rid, p), v in w.items():
        if v:
            for a, b in itertools.pairwise(by_id[rid].places):
                key = (frozenset((a, b)), p)
                out[key] = out.get(key, 0) + v
    return out


def _pair(e: Ends, d: TrafficData) -> tuple[str, str]:
    a, b = sorted(e, key=d.network.places.index)
    return (a, b)


def _b_road_closure(d: TrafficData, w: Witness, rng: random.Random) -> tr.RoadClosure | None:
    """A road some main route uses, closed in the periods the witness leaves it empty."""
    load = _loads(d, w)
    mains = [e for e in d.used_roads if any(d.route_number[rid] == 1 for rid in d.routes_on[e])]
    options = [(e, [p for p in d.periods if not load.get((e, p), 0)]) for e in mains]
    options = [(e, ps) for e, ps in options if ps]
    if not options:
        return None
    most = max(len(ps) for _, ps in options)
    e, ps = rng.choice([o for o in options if len(o[1]) == most])
    return tr.RoadClosure(roads=[_pair(e, d)], periods=ps)


def _b_priority_bound(d: TrafficData, w: Witness, rng: random.Random) -> tr.PriorityBound | None:
    flows = [f.id for f in d.flows if f.priority]
    if not flows:
        return None
    used = [d.route_minutes[rid] for (rid, _), v in w.items() if v and d.route_by_id[rid].flow in flows]
    return tr.PriorityBound(flows=flows, minutes=max(used)) if used else None


def _b_zone_limit(d: TrafficData, w: Witness, rng: random.Random) -> tr.ZoneLimit | None:
    ends = {f.origin for f in d.flows} | {f.destination for f in d.flows}
    places = [x for x in d.network.places if x not in ends and any(x in r.places for r in d.routes)]
    if not places:
        return None
    place = rng.choice(places)
    top = max(sum(v for (rid, p2), v in w.items() if p2 == p and place in d.route_by_id[rid].places) for p in d.periods)
    return tr.ZoneLimit(place=place, max=top + rng.randint(0, 2))


def _b_route_ban(d: TrafficData, w: Witness, rng: random.Random) -> tr.RouteBan | None:
    options = []
    for f in d.flows:
        on = {e for (rid, _), v in w.items() if v and d.route_by_id[rid].flow == f.id for e in d.route_roads[rid]}
        every = set.intersection(*(set(d.route_roads[r.id]) for r in d.routes_of[f.id]))
        free = {e for r in d.routes_of[f.id] for e in d.route_roads[r.id]} - on - every
        options += [(f.id, e) for e in sorted(free, key=lambda e: _pair(e, d))]
    if not options:
        return None
    fid, e = rng.choice(options)
    return tr.RouteBan(flows=[fid], roads=[_pair(e, d)])


def _b_detour_limit(d: TrafficData, w: Witness, rng: random.Random) -> tr.DetourLimit | None:
    used = [tr.detour(d, rid) for (rid, _), v in w.items() if v]
    return tr.DetourLimit(minutes=max(used) + rng.randint(0, 1))


def _b_split_limit(d: TrafficData, w: Witness, rng: random.Random) -> tr.SplitLimit | None:
    most = max(sum(1 for r in d.routes_of[f.id] if w[r.id, p]) for f in d.flows for p in d.periods)
    return tr.SplitLimit(max=max(1, most))


def _b_main_route_share(d: TrafficData, w: Witness, rng: random.Random) -> tr.MainRouteShare | None:
    options = []
    for f in d.flows:
        main = d.routes_of[f.id][0].id
        shares = [100 * w[main, p] // d.demand(f.id, p) for p in d.periods if d.demand(f.id, p)]
        low = min(90, min(shares, default=0) // 10 * 10)  # "at least 100%" would just ban the other routes
        if low >= 10:
            options.append((f.id, low))
    if not options:
        return None
    chosen = rng.sample(options, min(len(options), rng.randint(1, 2)))
    return tr.MainRouteShare(flows=sorted(f for f, _ in chosen), percent=min(p for _, p in chosen))


def _b_corridor_balance(d: TrafficData, w: Witness, rng: random.Random) -> tr.CorridorBalance | None:
    if len(d.used_roads) < 2:
        return None
    a, b = rng.sample(list(d.used_roads), 2)
    load = _loads(d, w)
    gap = max(abs(load.get((a, p), 0) - load.get((b, p), 0)) for p in d.periods)
    return tr.CorridorBalance(first=_pair(a, d), second=_pair(b, d), max=gap + rng.randint(0, 2))


def _b_route_stability(d: TrafficData, w: Witness, rng: random.Random) -> tr.RouteStability | None:
    if len(d.periods) < 2:
        return None
    top = max(abs(w[r.id, b] - w[r.id, a]) for r in d.routes for a, b in itertools.pairwise(d.periods))
    return tr.RouteStability(max=top + rng.randint(0, 2))


def _b_exposure_budget(d: TrafficData, w: Witness, rng: random.Random) -> tr.ExposureBudget | None:
    load = _loads(d, w)
    roads = rng.sample(list(d.used_roads), min(len(d.used_roads), rng.randint(1, 2)))
    top = max(sum(load.get((e, p), 0) for p in d.periods) for e in roads)
    return tr.ExposureBudget(roads=sorted(_pair(e, d) for e in roads), max=top + rng.randint(0, 3))


def _b_congestion_recovery(d: TrafficData, w: Witness, rng: random.Random) -> tr.CongestionRecovery | None:
    load = _loads(d, w)
    for e in d.used_roads:
        free = d.level_of[e].free
        for a, b in itertools.pairwise(d.periods):
            if load.get((e, a), 0) > free and load.get((e, b), 0) > free:
                return None
    return tr.CongestionRecovery()


BUILDERS = {
    "road_closure": _b_road_closure,
    "priority_bound": _b_priority_bound,
    "zone_limit": _b_zone_limit,
    "route_ban": _b_route_ban,
    "detour_limit": _b_detour_limit,
    "split_limit": _b_split_limit,
    "main_route_share": _b_main_route_share,
    "corridor_balance": _b_corridor_balance,
    "route_stability": _b_route_stability,
    "exposure_budget": _b_exposure_budget,
    "congestion_recovery": _b_congestion_recovery,
}


def objective_terms(subtask: str) -> list[ObjectiveTerm]:
    """The subtask's lexicographic objective (see OBJECTIVES), the order score last."""
    return [ObjectiveTerm(id=k, kind=k) for k in OBJECTIVES[subtask]]


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    sampled = sampled_kinds(spec, TASK.base_rules, FORCED[spec.subtask])
    data, witness = _entities(spec, rng, sampled)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng)
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective_terms(spec.subtask))


# -- hard-tier hooks -------------------------------------------------------------------
def _plan_cells(d: TrafficData, plan: dict[str, Any]) -> dict[tr.Cell, int]:
    out = {(r.id, p): 0 for r in d.routes for p in d.periods}
    for split in plan["flows"].values():
        for rid, counts in split.items():
            if rid != "backup":
                for p, v in zip(d.periods, counts, strict=True):
                    out[rid, p] = v
    return out


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A zone limit on a place no flow must pass (every flow has a route around it), at
    the loosest infeasible value by bisection from the most vehicles that could pass it
    in a period down to 0: only the other rules (capacities, closures, bans ...) can
    force vehicles through it, so the conflict runs through the instance's rules."""
    d = parsed(TrafficData, draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731
    places = [
        x for x in d.network.places
        if any(x in r.places for r in d.routes)
        and all(any(x not in r.places for r in d.routes_of[f.id]) for f in d.flows)
    ]  # fmt: skip
    rng.shuffle(places)
    for place in places[:3]:
        top = max(
            sum(d.demand(f.id, p) for f in d.flows if any(place in r.places for r in d.routes_of[f.id]))
            for p in d.periods
        )
        values = list(range(top, -1, -1))
        found = first_infeasible(
            values,
            lambda k: with_conflict_rule(draft_, "zone_limit", tr.ZoneLimit(place=place, max=k), position),  # noqa: B023
            feasible,
        )
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A road the plan uses, closed in one period it carries vehicles (an incident); only
    roads every flow has a route around (a closure no plan can meet is no disruption),
    lightest first: the fewer vehicles a closure moves, the likelier the others' roads
    can take them."""
    d = parsed(TrafficData, draft_.data)
    cells = _plan_cells(d, plan)
    found = []
    for e in d.used_roads:
        if not all(any(e not in d.route_roads[r.id] for r in d.routes_of[f.id]) for f in d.flows):
            continue
        for p in d.periods:
            load = sum(cells[rid, p] for rid in d.routes_on[e])
            if load:
                found.append(
                    (
                        load,
                        rng.random(),
                        make_rule("road_closure", "hard", tr.RoadClosure(roads=[_pair(e, d)], periods=[p])),
                    )
                )
    found.sort(key=lambda t: (t[0], t[1]))
    return [rule for _, _, rule in found]


def existing(draft_: Draft, plan: dict[str, Any]) -> list[list[Any]]:
    d = parsed(TrafficData, draft_.data)
    return [[rid, p, v] for (rid, p), v in _plan_cells(d, plan).items() if v]


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    """One incident-prone road on some main route that every flow can avoid (so each has
    a possible backup): of those, one the fewest vehicles could need to leave (its most
    load summed over periods), ties at random."""
    d = parsed(TrafficData, draft_.data)
    mains = [e for e in d.used_roads if any(d.route_number[rid] == 1 for rid in d.routes_on[e])]
    options = [
        (sum(d.most_load[e, p] for p in d.periods), rng.random(), e)
        for e in mains
        if all(any(e not in d.route_roads[r.id] for r in d.routes_of[f.id]) for f in d.flows)
    ]
    if not options:
        return None
    _, _, e = min(options, key=lambda t: (t[0], t[1]))
    rule = make_rule("incident_backup", "hard", tr.IncidentBackup(roads=[_pair(e, d)]))
    return rule, [ObjectiveTerm(id="backup_score", kind="backup_score")]


UNCERTAIN_EACH = 2  # candidates of each kind probed (each costs two optimisations)


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Road capacities (worst: low) and road minutes (worst: high) of roads routes use."""
    d = parsed(TrafficData, draft_.data)
    cap, mins = [], []
    for e in d.used_roads:
        road = d.network.road(*_pair(e, d))
        assert road is not None and road.capacity is not None
        name = tr.label(e, d)
        if road.capacity > 3:
            cap.append(
                Uncertain(
                    id="", kind="capacity", target=name, low=road.capacity - rng.randint(2, 3), high=road.capacity
                )
            )
        mins.append(
            Uncertain(id="", kind="minutes", target=name, low=road.minutes, high=road.minutes + rng.randint(1, 3))
        )
    out = rng.sample(cap, min(UNCERTAIN_EACH, len(cap))) + rng.sample(mins, min(UNCERTAIN_EACH, len(mins)))
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = parsed(TrafficData, data)
    field = "capacity" if u.kind == "capacity" else "minutes"
    roads = tuple(
        r.model_copy(update={field: value}) if tr.label(r.ends, d) == u.target else r for r in d.network.roads
    )
    network = RoadNetwork(places=d.network.places, roads=roads)
    return {**data, "network": network.model_dump(mode="json")}


def worst_is_low(u: Uncertain) -> bool:
    return u.kind == "capacity"


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = parsed(TrafficData, draft_.data)
    return tr.TASK.verification(d, Plan(_plan_cells(d, plan)))


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
