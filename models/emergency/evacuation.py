"""Disaster Evacuation Planning: groups of people to shelters over a road network, period
by period.

Decision: x[g,r,p] = 1 when group g (a unit, never split) takes route r (one of the few
shortest paths the prompt lists for it; the route fixes the shelter) departing in period
p; exactly one per group. A route's roads are entered at stated period offsets after the
departure (minutes driven so far // period length) and it arrives floor(minutes / period
length) periods after it, so the network is time-expanded only along the listed routes:
per road and period the people entering it are a linear sum of the x. For robustness,
y[g,r] = 1 when r is g's backup route. The objective is lexicographic: weighted lateness
(vulnerable groups weigh more) where groups have due periods, then the evacuation time
(people x arrival period), then travel (people x route minutes), then a stated order
score (priority points x (10 x departure period + route number)); groups differ in their
people counts, so no symmetry is broken by it and the optimum is unique.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible, lexicographic_weights, make_solver
from pbsolve.checkers.emergency import evacuation as ev
from pbsolve.checkers.emergency.evacuation import EvacData, Exit, Group, Route, Shelter
from pbsolve.family import Draft, SolverModel
from pbsolve.kit import (
    KindRegistry,
    PositiveRange,
    Settings,
    SizeTable,
    Uncertain,
    insert_position,
    sampled_kinds,
    witness_rules,
)
from pbsolve.kit import (
    parsed as parse_once,
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
from pbsolve.network_kit import SHAPES, Road, RoadNetwork, Shape, sample_network
from pbsolve.params import NoParams, Params, make_rule
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=ev.TASK_ID,
    name="Disaster Evacuation Planning",
    family="emergency",
    summary="move groups of people to shelters over a road network, period by period, under road and shelter capacities",
    subtasks=(
        SubtaskSpec("river_flood", "River flood", "low roads close as the water rises; staged departures"),
        SubtaskSpec(
            "wildfire", "Wildfire", "the fire front closes roads at stated periods; everyone out by a deadline"
        ),
        SubtaskSpec(
            "hurricane", "Hurricane", "a long horizon, accessible shelters for wheelchair users and escort teams"
        ),
        SubtaskSpec("chemical_plume", "Chemical plume", "a short deadline with sealed rooms for sheltering in place"),
        SubtaskSpec("stadium_event", "Stadium event", "one venue emptied through gates and exits of limited capacity"),
    ),
    pool=(
        ConstraintSpec("road_capacity", "basic", "people entering a road per period within its capacity"),
        ConstraintSpec("shelter_capacity", "basic", "people in a shelter within its capacity"),
        ConstraintSpec("accessible_shelter", "basic", "wheelchair users go to accessible shelters"),
        ConstraintSpec("exit_capacity", "basic", "people leaving a place per period within its exits' capacity"),
        ConstraintSpec("deadline", "basic", "named groups arrive by a stated period"),
        ConstraintSpec("road_closure", "basic", "a road closes from a stated period (flood, fire front)"),
        ConstraintSpec("vulnerable_first", "medium", "vulnerable groups depart no later than any other group"),
        ConstraintSpec("same_shelter", "medium", "named groups (a school and its families) share one shelter"),
        ConstraintSpec("shelter_balance", "medium", "fairness: shelters' people within a stated gap"),
        ConstraintSpec("max_travel", "medium", "frail groups ride at most so many minutes"),
        ConstraintSpec("escort_teams", "stateful", "escort teams busy out and back before their next trip"),
        ConstraintSpec("staged_opening", "stateful", "a shelter's beds open in stages: early arrivals capped"),
        *mechanism_pool("every group names a backup route sharing no road with its route: any one road may fail"),
    ),
    base_rules=("road_capacity", "shelter_capacity"),
)

PERIOD_MINUTES = 10
JUNCTIONS = (
    "Market Cross", "Station Square", "Church Corner", "Bridge Junction", "Tower Roundabout", "Park Junction",
    "Hill Crossroads", "Mill Roundabout",
)  # fmt: skip
SOURCES = {
    "river_flood": ("Riverside", "Mill Quarter", "Low Meadows", "Weir End", "Ferry Row", "Marsh Lane"),
    "wildfire": ("Pine Ridge", "Cedar Hollow", "Oak Flats", "Canyon Rim", "Aspen Way", "Fern Gully"),
    "hurricane": ("Harbour", "Beachfront", "Dune Park", "Bayside", "Pier Row", "Lagoon Estate"),
    "chemical_plume": ("Plant Gate", "Elm Estate", "Rail Yard", "Canal Side", "Foundry Row", "Kiln Street"),
    "stadium_event": ("Stadium",),
}
GATES = ("North Gate", "South Gate", "East Gate", "West Gate")
SHELTER_PLACES = (
    ("Northfield", "Northfield High School"),
    ("Hillcrest", "Hillcrest Sports Hall"),
    ("Uplands", "Uplands Community Centre"),
    ("Castle Mount", "Castle Mount Church Hall"),
    ("Greenway", "Greenway Leisure Centre"),
)
KINDS = {
    "river_flood": ("residents", "care home", "school", "caravan park"),
    "wildfire": ("residents", "campsite", "care home", "school"),
    "hurricane": ("residents", "care home", "hospital ward", "tourists"),
    "chemical_plume": ("school", "residents", "factory shift", "care home"),
    "stadium_event": ("stand block",),
}
VULNERABLE = ("care home", "school", "hospital ward")
SHAPE: dict[str, Shape] = {
    "river_flood": "ring",
    "wildfire": "geometric",
    "hurricane": "grid",
    "chemical_plume": "grid",
}
OBJECTIVES = {
    "river_flood": ("lateness", "evacuation_time", "travel_minutes", "order_score"),
    "wildfire": ("lateness", "evacuation_time", "travel_minutes", "order_score"),
    "hurricane": ("lateness", "travel_minutes", "evacuation_time", "order_score"),
    "chemical_plume": ("lateness", "evacuation_time", "order_score"),
    "stadium_event": ("evacuation_time", "travel_minutes", "order_score"),
}
FORCED = {
    "river_flood": ("road_closure",),
    "wildfire": ("road_closure", "deadline"),
    "hurricane": ("accessible_shelter", "escort_teams"),
    "chemical_plume": ("deadline",),
    "stadium_event": ("exit_capacity",),
}
LONG_HORIZON = 2  # hurricane: extra departure periods


class EvacSizes(Settings):
    """How big an evacuation instance is."""

    groups: PositiveInt = Field(ge=2, le=12)
    sources: PositiveInt = Field(description="distinct places groups leave from")
    shelters: PositiveInt = Field(ge=2, le=len(SHELTER_PLACES))
    routes: PositiveInt = Field(le=3, description="routes listed per group and shelter (the shortest paths)")
    periods: PositiveInt = Field(description="departure periods")
    junctions: int = Field(ge=1, le=len(JUNCTIONS))
    people: PositiveRange = Field(description="people in a group (distinct per group)")
    road_capacity: PositiveRange = Field(description="people entering a road per period")
    minutes: PositiveRange = Field(description="minutes to drive a road")


SIZES = SizeTable[EvacSizes](
    tiny=EvacSizes(groups=2, sources=2, shelters=2, routes=1, periods=2, junctions=1,
                   people=PositiveRange(lo=20, hi=60), road_capacity=PositiveRange(lo=50, hi=100),
                   minutes=PositiveRange(lo=3, hi=12)),
    small=EvacSizes(groups=3, sources=2, shelters=2, routes=2, periods=3, junctions=2,
                    people=PositiveRange(lo=20, hi=80), road_capacity=PositiveRange(lo=60, hi=140),
                    minutes=PositiveRange(lo=3, hi=12)),
    default=EvacSizes(groups=5, sources=3, shelters=3, routes=2, periods=4, junctions=3,
                      people=PositiveRange(lo=20, hi=90), road_capacity=PositiveRange(lo=60, hi=160),
                      minutes=PositiveRange(lo=3, hi=12)),
    large=EvacSizes(groups=9, sources=5, shelters=4, routes=2, periods=6, junctions=5,
                    people=PositiveRange(lo=20, hi=90), road_capacity=PositiveRange(lo=60, hi=180),
                    minutes=PositiveRange(lo=3, hi=12)),
)  # fmt: skip
PROBE_TIME = 2.0
# measured on 60 default drafts: the uniqueness re-optimisations took 1.65 s with presolve on
# and 0.94 s with it off (first solves 0.56-0.73 s), the same certificates; on 240 more,
# probing off as well: 3.21 s against 3.47 s (first solves 2.87-2.89 s)
UNIQUENESS_PARAMETERS = {"cp_model_presolve": False, "cp_model_probing_level": 0}


# -- the CP-SAT model ------------------------------------------------------------------
class EvacModel(ModelBase):
    def __init__(self, data: EvacData, with_backups: bool = False) -> None:
        super().__init__()
        self.data = d = data
        self.x: dict[tuple[str, str, int], cp_model.IntVar] = {}
        self.y: dict[tuple[str, str], cp_model.IntVar] = {}
        periods = range(1, d.periods + 1)
        for g in d.groups:
            row = []
            for r in d.routes_of[g.id]:
                for p in periods:
                    v = self.m.new_bool_var(f"x[{g.id},{r.id},{p}]")
                    self.x[g.id, r.id, p] = v
                    row.append(v)
            self.m.add_exactly_one(row)
            if with_backups:
                brow = [self.m.new_bool_var(f"y[{g.id},{r.id}]") for r in d.routes_of[g.id]]
                self.y.update({(g.id, r.id): v for r, v in zip(d.routes_of[g.id], brow)})
                self.m.add_exactly_one(brow)
        # (road, period) -> [(var, people)]: who enters the road then
        self.entering: dict[tuple[ev.Ends, int], list[tuple[cp_model.IntVar, int]]] = {}
        for (gid, rid, p), v in self.x.items():
            people = d.group_by_id[gid].people
            for leg in d.legs[rid]:
                self.entering.setdefault((leg.ends, p + leg.offset), []).append((v, people))

        self._cache: dict[tuple[str, str], cp_model.LinearExpr] = {}

    # Expressions are built once each with LinearExpr.sum / weighted_sum (not Python's sum
    # over overloaded +), and kept: several rules read the same loads and departures.
    def _kept(self, key: tuple[str, str], make: Any) -> cp_model.LinearExpr:
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = make()
        return found

    def on_route(self, g: str, r: str) -> cp_model.LinearExpr:
        return cp_model.LinearExpr.sum([self.x[g, r, p] for p in range(1, self.data.periods + 1)])

    def _cells(self, g: str) -> list[tuple[str, int, cp_model.IntVar]]:
        return [(r.id, p, self.x[g, r.id, p]) for r in self.data.routes_of[g] for p in range(1, self.data.periods + 1)]

    def depart(self, g: str) -> cp_model.LinearExpr:
        def make() -> cp_model.LinearExpr:
            cells = self._cells(g)
            return cp_model.LinearExpr.weighted_sum([v for _, _, v in cells], [p for _, p, _ in cells])

        return self._kept(("depart", g), make)

    def arrival(self, g: str) -> cp_model.LinearExpr:
        tr = self.data.travel

        def make() -> cp_model.LinearExpr:
            cells = self._cells(g)
            return cp_model.LinearExpr.weighted_sum([v for _, _, v in cells], [p + tr[r] for r, p, _ in cells])

        return self._kept(("arrival", g), make)

    def to_shelter(self, g: str, s: str) -> cp_model.LinearExpr:
        d = self.data
        return cp_model.LinearExpr.sum(
            [self.x[g, r.id, p] for r in d.routes_of[g] if r.shelter == s for p in range(1, d.periods + 1)]
        )

    def load(self, s: str) -> cp_model.LinearExpr:
        d = self.data

        def make() -> cp_model.LinearExpr:
            cells = [(v, d.group_by_id[g].people) for (g, r, _), v in self.x.items() if d.route_by_id[r].shelter == s]
            return cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells])

        return self._kept(("load", s), make)


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("road_capacity")
def _road_capacity(tm: EvacModel, p: NoParams, lit: cp_model.IntVar) -> None:
    cap = tm.data.capacity
    for (ends, _), cells in tm.entering.items():
        if sum(c for _, c in cells) > cap[ends]:
            expr = cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells])
            tm.post(expr <= cap[ends], lit)


@encoder("shelter_capacity")
def _shelter_capacity(tm: EvacModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    for s in d.shelters:
        if sum(g.people for g in d.groups) > s.capacity:
            tm.post(tm.load(s.id) <= s.capacity, lit)


@encoder("accessible_shelter")
def _accessible_shelter(tm: EvacModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    for g in d.groups:
        if g.wheelchair:
            banned = [
                v
                for (gg, r, _), v in tm.x.items()
                if gg == g.id and not d.shelter_by_id[d.route_by_id[r].shelter].accessible
            ]
            if banned:
                tm.post(sum(banned) == 0, lit)


@encoder("exit_capacity")
def _exit_capacity(tm: EvacModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    for place, cap in d.exit_capacity.items():
        here = [g for g in d.groups if g.place == place]
        if sum(g.people for g in here) <= cap:
            continue
        for t in range(1, d.periods + 1):
            cells = [(tm.x[g.id, r.id, t], g.people) for g in here for r in d.routes_of[g.id]]
            tm.post(cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells]) <= cap, lit)


@encoder("deadline")
def _deadline(tm: EvacModel, p: ev.Deadline, lit: cp_model.IntVar) -> None:
    for g in p.groups:
        tm.post(tm.arrival(g) <= p.period, lit)


@encoder("road_closure")
def _road_closure(tm: EvacModel, p: ev.RoadClosure, lit: cp_model.IntVar) -> None:
    closed = frozenset(p.road)
    banned = [v for (ends, t), cells in tm.entering.items() if ends == closed and t >= p.period for v, _ in cells]
    if banned:
        tm.post(sum(banned) == 0, lit)


@encoder("not_before")
def _not_before(tm: EvacModel, p: ev.NotBefore, lit: cp_model.IntVar) -> None:
    tm.post(tm.depart(p.group) >= p.period, lit)


@encoder("vulnerable_first")
def _vulnerable_first(tm: EvacModel, p: ev.VulnerableFirst, lit: cp_model.IntVar) -> None:
    others = [g.id for g in tm.data.groups if g.id not in p.groups]
    for a in p.groups:
        for b in others:
            tm.post(tm.depart(a) <= tm.depart(b), lit)


@encoder("same_shelter")
def _same_shelter(tm: EvacModel, p: ev.SameShelter, lit: cp_model.IntVar) -> None:
    for a, b in itertools.pairwise(p.groups):
        for s in tm.data.shelters:
            tm.post(tm.to_shelter(a, s.id) == tm.to_shelter(b, s.id), lit)


@encoder("shelter_balance")
def _shelter_balance(tm: EvacModel, p: ev.ShelterBalance, lit: cp_model.IntVar) -> None:
    shelters = tm.data.shelters
    for a in shelters:
        for b in shelters:
            if a.id != b.id:
                tm.post(tm.load(a.id) - tm.load(b.id) <= p.max, lit)


@encoder("max_travel")
def _max_travel(tm: EvacModel, p: ev.MaxTravel, lit: cp_model.IntVar) -> None:
    d = tm.data
    for g in p.groups:
        banned = [v for (gg, r, _), v in tm.x.items() if gg == g and d.minutes[r] > p.minutes]
        if banned:
            tm.post(sum(banned) == 0, lit)


@encoder("escort_teams")
def _escort_teams(tm: EvacModel, p: ev.EscortTeams, lit: cp_model.IntVar) -> None:
    """Per period, the escorted groups whose out-and-back window covers it."""
    d = tm.data
    out: dict[int, list[cp_model.IntVar]] = {}
    who: dict[int, set[str]] = {}
    for (g, r, dep), v in tm.x.items():
        if d.group_by_id[g].escort:
            for t in ev.busy(d, r, dep):
                out.setdefault(t, []).append(v)
                who.setdefault(t, set()).add(g)
    for t in sorted(out):
        if len(who[t]) > p.teams:
            tm.post(cp_model.LinearExpr.sum(out[t]) <= p.teams, lit)


@encoder("staged_opening")
def _staged_opening(tm: EvacModel, p: ev.StagedOpening, lit: cp_model.IntVar) -> None:
    d = tm.data
    cells = [
        (v, d.group_by_id[g].people)
        for (g, r, dep), v in tm.x.items()
        if d.route_by_id[r].shelter == p.shelter and dep + d.travel[r] < p.period
    ]
    if sum(c for _, c in cells) > p.beds:
        tm.post(cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells]) <= p.beds, lit)


@encoder("backup_route")
def _backup_route(tm: EvacModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """Backup y[g,B]: never the route itself nor one sharing a road with it; accessible
    for wheelchair users. When road f fails, the groups on it move to their backups:
    moved[g,f,s] >= on_f[g] + y_to_s[g] - 1 (a lower bound is enough: the capacity row
    only pushes it down), and each shelter's people, those staying plus those moved,
    stay within its capacity."""
    d = tm.data
    for g in d.groups:
        for b in d.routes_of[g.id]:
            y = tm.y[g.id, b.id]
            if g.wheelchair and not d.shelter_by_id[b.shelter].accessible:
                tm.post(y == 0, lit)
            for r in d.routes_of[g.id]:
                if r.id == b.id or ev.shares_road(d, r.id, b.id):
                    tm.post(y + tm.on_route(g.id, r.id) <= 1, lit)
    total = sum(g.people for g in d.groups)
    for s in d.shelters:  # no road failed
        if total > s.capacity:
            tm.post(tm.load(s.id) <= s.capacity, lit)
    used = sorted({leg.ends for r in d.routes for leg in d.legs[r.id]}, key=lambda e: sorted(e))
    for f in used:
        for s in d.shelters:
            if total <= s.capacity:
                continue
            cells: list[tuple[cp_model.IntVar, int]] = []
            for g in d.groups:
                via = [r for r in d.routes_of[g.id] if any(leg.ends == f for leg in d.legs[r.id])]
                for r in d.routes_of[g.id]:
                    if r.shelter == s.id and r not in via:
                        cells += [(tm.x[g.id, r.id, t], g.people) for t in range(1, d.periods + 1)]
                to_s = [tm.y[g.id, r.id] for r in d.routes_of[g.id] if r.shelter == s.id]
                if via and to_s:
                    v = tm.m.new_bool_var("")
                    tm.m.add(v >= sum(tm.on_route(g.id, r.id) for r in via) + sum(to_s) - 1)
                    cells.append((v, g.people))
            tm.post(cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells]) <= s.capacity, lit)


def _objective(tm: EvacModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    """Each term is a sum over the x (or y) with integer coefficients; as every group takes
    exactly one option, its upper bound is the sum over groups of their largest
    coefficient (tight bounds keep the certifier's lexicographic weights small)."""
    d = tm.data
    people = {g.id: g.people for g in d.groups}
    prio = {g.id: g.priority for g in d.groups}

    def weighted(coef: dict[Any, int], xs: dict[Any, cp_model.IntVar]) -> tuple[cp_model.LinearExpr, int]:
        cells = [(v, c) for k, v in xs.items() if (c := coef[k])]
        top: dict[str, int] = {}
        for k, c in coef.items():
            top[k[0]] = max(top.get(k[0], 0), c)
        return cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells]), sum(top.values())

    if term.kind == "lateness":
        coef = {k: ev.lateness(d, d.group_by_id[k[0]], k[2] + d.travel[k[1]]) for k in tm.x}
        return weighted(coef, tm.x)
    if term.kind == "evacuation_time":
        coef = {k: people[k[0]] * (k[2] + d.travel[k[1]]) for k in tm.x}
        return weighted(coef, tm.x)
    if term.kind == "travel_minutes":
        coef = {k: people[k[0]] * d.minutes[k[1]] for k in tm.x}
        return weighted(coef, tm.x)
    if term.kind == "order_score":
        coef = {k: prio[k[0]] * (ev.DEPART_WEIGHT * k[2] + d.route_number[k[1]]) for k in tm.x}
        return weighted(coef, tm.x)
    if term.kind == "backup_score":
        return weighted({k: prio[k[0]] * d.route_number[k[1]] for k in tm.y}, tm.y)
    if term.kind == "changes":
        old = ev.current_plan(term)
        kept = [tm.x[g.id, old[g.id][0], old[g.id][1]] for g in d.groups]
        return len(d.groups) - cp_model.LinearExpr.sum(kept), len(d.groups)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def parsed(data: dict[str, Any]) -> EvacData:
    """The data of a draft, validated once per content (the kit's cache): one draft is
    built many times (first solve, uniqueness, probes), and validation (the network's
    connectivity, the routes' roads) cost as much as building the model."""
    return parse_once(EvacData, data)


def build(draft: Draft) -> SolverModel:
    data = parsed(draft.data)
    tm = EvacModel(data, with_backups=any(r.kind == "backup_route" for r in draft.rules))

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        chosen = {g: (r, p) for (g, r, p), v in tm.x.items() if solver.value(v)}
        rows = []
        for g in data.groups:
            route, depart = chosen[g.id]
            row: dict[str, Any] = {"group": g.id, "route": route, "depart": depart}
            if tm.y:
                row["backup"] = next(r.id for r in data.routes_of[g.id] if solver.value(tm.y[g.id, r.id]))
            rows.append(row)
        return {"evacuation": rows}

    answer = [*tm.x.values(), *tm.y.values()]
    return solver_model(
        tm, draft, ENCODERS, ev.RULE_PARAMS, _objective, decode, answer, [], uniqueness_parameters=UNIQUENESS_PARAMETERS
    )


# -- sampling --------------------------------------------------------------------------
Witness = dict[str, tuple[str, int]]  # group -> (route, departure period)


def _network(
    spec: GenerationSpec, s: EvacSizes, rng: random.Random
) -> tuple[RoadNetwork, list[str], list[tuple[str, str]]]:
    """The road network, the places groups leave from and the (place, name) of each shelter."""
    shelters = rng.sample(SHELTER_PLACES, s.shelters)
    junctions = rng.sample(JUNCTIONS, s.junctions)
    minutes = (s.minutes.lo, s.minutes.hi)
    capacity = (s.road_capacity.lo, s.road_capacity.hi)
    if spec.subtask == "stadium_event":
        gates = list(GATES[: max(2, min(4, s.sources))])
        streets = [*gates, *junctions, *(p for p, _ in shelters)]
        city = sample_network(rng, streets, "geometric", minutes, capacity)
        venue = SOURCES["stadium_event"][0]
        doors = tuple(
            Road(a=venue, b=gate, minutes=rng.randint(2, 5), capacity=rng.randint(capacity[0] // 2, capacity[0]))
            for gate in gates
        )
        net = RoadNetwork(places=(venue, *city.places), roads=(*doors, *city.roads))
        return net, [venue], shelters
    sources = rng.sample(SOURCES[spec.subtask], min(s.sources, len(SOURCES[spec.subtask])))
    places = [*sources, *junctions, *(p for p, _ in shelters)]
    order = list(places)
    rng.shuffle(order)
    shape = SHAPE.get(spec.subtask, rng.choice(SHAPES))
    net = sample_network(rng, order, shape, minutes, capacity)
    return net, sources, shelters


PATH_ROADS = 5  # routes have at most this many roads


def _paths_from(net: RoadNetwork, a: str, targets: set[str], k: int) -> dict[str, list[tuple[str, ...]]]:
    """For each target place, the ``k`` shortest simple paths from a (fewest minutes, then
    by their place names), among those of at most PATH_ROADS roads: one depth-first walk
    over the small network lists them all, faster than Yen's algorithm per pair, and the
    order is fully stated. A target equal to a gets the one-place path (stay)."""
    adjacent: dict[str, list[tuple[str, int]]] = {p: [] for p in net.places}
    for r in net.roads:
        adjacent[r.a].append((r.b, r.minutes))
        adjacent[r.b].append((r.a, r.minutes))
    found: dict[str, list[tuple[int, tuple[str, ...]]]] = {t: [] for t in targets}
    if a in found:
        found[a].append((0, (a,)))
    path, seen = [a], {a}

    def walk(at: str, minutes: int) -> None:
        for nxt, m in adjacent[at]:
            if nxt in seen:
                continue
            path.append(nxt)
            if nxt in found:
                found[nxt].append((minutes + m, tuple(path)))
            if len(path) <= PATH_ROADS:
                seen.add(nxt)
                walk(nxt, minutes + m)
                seen.discard(nxt)
            path.pop()

    walk(a, 0)
    return {t: [p for _, p in sorted(options)[:k]] for t, options in found.items()}


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[EvacData, Witness]:
    s = SIZES.of(spec.size)
    net, sources, shelter_places = _network(spec, s, rng)
    periods = s.periods + (LONG_HORIZON if spec.subtask == "hurricane" else 0)
    if spec.subtask == "chemical_plume":  # a short window: one departure period fewer
        periods = max(2, periods - 1)
    kinds = KINDS[spec.subtask]
    people = rng.sample(range(s.people.lo, s.people.hi + 1), s.groups)
    groups: list[Group] = []
    count: dict[str, int] = {}
    for k in range(s.groups):
        place = sources[k % len(sources)] if k < len(sources) else rng.choice(sources)
        kind = kinds[0] if spec.subtask == "stadium_event" else rng.choice(kinds)
        count[place] = count.get(place, 0) + 1
        name = (
            f"{rng.choice(('North', 'South', 'East', 'West'))} Stand block {chr(64 + k + 1)}"
            if spec.subtask == "stadium_event"
            else f"{place} {kind} {count[place]}"
        )
        groups.append(
            Group(id=f"G{k + 1}", name=name, kind=kind, place=place, people=people[k], due=1, weight=1, priority=1)
        )
    shelters = [
        Shelter(id=f"S{k + 1}", name=name, place=place, capacity=1) for k, (place, name) in enumerate(shelter_places)
    ]
    if spec.subtask == "chemical_plume":  # sealed rooms at one or two of the source buildings
        for place in rng.sample(sources, min(2, len(sources))):
            shelters.append(
                Shelter(id=f"S{len(shelters) + 1}", name=f"{place} sealed room", place=place, capacity=1, in_place=True)
            )
    routes: list[Route] = []
    targets = {sh.place for sh in shelters}
    paths = {place: _paths_from(net, place, targets, s.routes) for place in dict.fromkeys(g.place for g in groups)}
    for g in groups:
        k = 0
        for sh in shelters:
            if sh.in_place and sh.place != g.place:
                continue
            for path in paths[g.place][sh.place] if sh.place != g.place or sh.in_place else []:
                k += 1
                routes.append(Route(id=f"{g.id}-{k}", group=g.id, shelter=sh.id, places=path))
    data = EvacData(
        network=net, period_minutes=PERIOD_MINUTES, periods=periods, groups=tuple(groups), shelters=tuple(shelters),
        routes=tuple(routes),
    )  # fmt: skip
    # the witness: early departures; mostly a route to the least filled shelter so far
    # (shelter loads stay close, so capacities and the fairness gap drawn from it bind)
    witness: Witness = {}
    load = {sh.id: 0 for sh in shelters}
    for g in groups:
        options = list(data.routes_of[g.id])
        if rng.random() < 0.7:
            least = min(load[r.shelter] for r in options)
            options = [r for r in options if load[r.shelter] == least]
        route = rng.choice(options)
        load[route.shelter] += g.people
        witness[g.id] = (route.id, rng.choice([1, 1, 2, *range(1, periods + 1)]))
    data = _capacities(spec, data, witness, rng)
    return data, witness


def _capacities(spec: GenerationSpec, d: EvacData, w: Witness, rng: random.Random) -> EvacData:
    """Road and shelter capacities the witness respects, drawn so they often bind; due
    periods around the witness's arrivals; weights (vulnerable groups weigh more) and
    distinct priority points."""
    entries = ev.road_entries(d, w)
    peak = {e: max((v for (ee, _), v in entries.items() if ee == e), default=0) for e in d.capacity}
    roads = tuple(r.model_copy(update={"capacity": max(int(r.capacity or 1), peak[r.ends])}) for r in d.network.roads)
    net = RoadNetwork(places=d.network.places, roads=roads)
    loads = ev.shelter_people(d, w)
    total = sum(g.people for g in d.groups)
    share = max(1, total // max(1, len([s for s in d.shelters if not s.in_place])))
    shelters = []
    for sh in d.shelters:
        if sh.in_place:
            cap = max(loads[sh.id], rng.randint(10, 40))
        else:
            cap = max(loads[sh.id], 10 * (rng.randint(share, share * 2) // 10), 10)
        shelters.append(sh.model_copy(update={"capacity": cap}))
    points = rng.sample(range(1, 61), len(d.groups))
    groups = []
    for g, pts in zip(d.groups, points):
        route, dep = w[g.id]
        arrives = dep + d.travel[route]
        due = max(1, arrives + rng.randint(-1, 1))
        weight = rng.randint(1, 3) * (2 if g.kind in VULNERABLE else 1)
        groups.append(g.model_copy(update={"due": due, "weight": weight, "priority": pts}))
    return ev.replaced(d, network=net, shelters=tuple(shelters), groups=tuple(groups))


def _with_accessibility(d: EvacData, w: Witness, rng: random.Random) -> EvacData:
    """One or two groups include wheelchair users; their witness shelters are accessible,
    other shelters are with probability 0.4."""
    flagged = set(rng.sample([g.id for g in d.groups], min(len(d.groups), rng.randint(1, 2))))
    need = {d.route_by_id[w[g][0]].shelter for g in flagged}
    shelters = tuple(
        s.model_copy(update={"accessible": s.id in need or (not s.in_place and rng.random() < 0.4)}) for s in d.shelters
    )
    groups = tuple(g.model_copy(update={"wheelchair": g.id in flagged}) for g in d.groups)
    return ev.replaced(d, shelters=shelters, groups=groups)


def _with_exits(d: EvacData, w: Witness, rng: random.Random) -> EvacData:
    """Places two or more groups leave from get an exit capacity per period the witness
    respects, below their total unless the witness sends them all out at once."""
    exits = []
    for place in dict.fromkeys(g.place for g in d.groups):
        here = [g for g in d.groups if g.place == place]
        if len(here) < 2:
            continue
        per: dict[int, int] = {}
        for g in here:
            per[w[g.id][1]] = per.get(w[g.id][1], 0) + g.people
        top = max(per.values())
        binding = sum(g.people for g in here) - min(g.people for g in here)  # all leaving at once is too many
        exits.append(Exit(place=place, capacity=max(top, rng.randint(top // 2, max(top // 2, binding)))))
    return ev.replaced(d, exits=tuple(exits))


def _with_escorts(d: EvacData, w: Witness, rng: random.Random) -> EvacData:
    """Vulnerable groups (at least two groups) travel with escort teams."""
    ids = [g.id for g in d.groups if g.kind in VULNERABLE]
    if len(ids) < 2:
        ids = sorted(set(ids) | set(rng.sample([g.id for g in d.groups], 2)), key=lambda x: int(x[1:]))
    groups = tuple(g.model_copy(update={"escort": g.id in ids}) for g in d.groups)
    return ev.replaced(d, groups=groups)


def _pick(rng: random.Random, options: list[str], most: int) -> list[str]:
    """1..most of ``options``, kept in their given order."""
    chosen = set(rng.sample(options, min(len(options), rng.randint(1, most))))
    return [o for o in options if o in chosen]


def _arrival(d: EvacData, w: Witness, g: str) -> int:
    return w[g][1] + d.travel[w[g][0]]


def _b_deadline(d: EvacData, w: Witness, rng: random.Random) -> ev.Deadline | None:
    everyone = [g.id for g in d.groups]
    chosen = _pick(rng, [g.id for g in d.groups if g.kind in VULNERABLE] or everyone, 3)
    if rng.random() < 0.4:
        chosen = everyone
    return ev.Deadline(groups=chosen, period=max(_arrival(d, w, g) for g in chosen))


def _b_road_closure(d: EvacData, w: Witness, rng: random.Random) -> ev.RoadClosure | None:
    """A road some listed route uses closes after the witness's last entry on it."""
    used = sorted({leg.ends for r in d.routes for leg in d.legs[r.id]}, key=lambda e: sorted(e))
    if not used:
        return None
    taken = sorted({leg.ends for r, _ in w.values() for leg in d.legs[r]}, key=lambda e: sorted(e))
    ends = rng.choice(taken if taken and rng.random() < 0.7 else used)
    last = max((dep + leg.offset for g, (r, dep) in w.items() for leg in d.legs[r] if leg.ends == ends), default=0)
    a, b = sorted(ends, key=d.network.places.index)
    return ev.RoadClosure(road=(a, b), period=last + 1)


def _b_vulnerable_first(d: EvacData, w: Witness, rng: random.Random) -> ev.VulnerableFirst | None:
    """The vulnerable groups (care homes, schools, wards) when the witness already moves
    them first; else the groups departing up to a cut period of the witness."""
    weak = [g.id for g in d.groups if g.kind in VULNERABLE]
    rest = [g.id for g in d.groups if g.kind not in VULNERABLE]
    if weak and rest and max(w[g][1] for g in weak) <= min(w[g][1] for g in rest):
        return ev.VulnerableFirst(groups=weak)
    deps = sorted({dep for _, dep in w.values()})
    if len(deps) < 2:
        return None
    cut = rng.choice(deps[:-1])
    return ev.VulnerableFirst(groups=[g.id for g in d.groups if w[g.id][1] <= cut])


def _b_same_shelter(d: EvacData, w: Witness, rng: random.Random) -> ev.SameShelter | None:
    by: dict[str, list[str]] = {}
    for g in d.groups:
        by.setdefault(d.route_by_id[w[g.id][0]].shelter, []).append(g.id)
    options = [ids for ids in by.values() if len(ids) >= 2]
    if not options:
        return None
    ids = rng.choice(options)
    return ev.SameShelter(groups=sorted(rng.sample(ids, 2), key=lambda x: int(x[1:])))


def _b_shelter_balance(d: EvacData, w: Witness, rng: random.Random) -> ev.ShelterBalance | None:
    loads = ev.shelter_people(d, w).values()
    return ev.ShelterBalance(max=max(loads) - min(loads) + rng.randint(0, 10))


def _b_max_travel(d: EvacData, w: Witness, rng: random.Random) -> ev.MaxTravel | None:
    options = [g.id for g in d.groups if any(d.minutes[r.id] > d.minutes[w[g.id][0]] for r in d.routes_of[g.id])]
    if not options:
        return None
    chosen = _pick(rng, options, 2)
    return ev.MaxTravel(groups=chosen, minutes=max(1, max(d.minutes[w[g][0]] for g in chosen)))


def _b_escort_teams(d: EvacData, w: Witness, rng: random.Random) -> ev.EscortTeams | None:
    out: dict[int, int] = {}
    for g in d.groups:
        if g.escort:
            for t in ev.busy(d, *w[g.id]):
                out[t] = out.get(t, 0) + 1
    return ev.EscortTeams(teams=max(out.values())) if out else None


def _b_staged_opening(d: EvacData, w: Witness, rng: random.Random) -> ev.StagedOpening | None:
    options = [s.id for s in d.shelters if any(d.route_by_id[w[g][0]].shelter == s.id for g in w)]
    if not options:
        return None
    sid = rng.choice(options)
    arrivals = sorted({_arrival(d, w, g) for g in w if d.route_by_id[w[g][0]].shelter == sid})
    period = rng.choice(arrivals) + rng.randint(0, 1)
    if period < 2:
        period = 2
    beds = sum(g.people for g in d.groups if d.route_by_id[w[g.id][0]].shelter == sid and _arrival(d, w, g.id) < period)
    return ev.StagedOpening(shelter=sid, period=period, beds=beds)


BUILDERS = {
    "deadline": _b_deadline,
    "road_closure": _b_road_closure,
    "vulnerable_first": _b_vulnerable_first,
    "same_shelter": _b_same_shelter,
    "shelter_balance": _b_shelter_balance,
    "max_travel": _b_max_travel,
    "escort_teams": _b_escort_teams,
    "staged_opening": _b_staged_opening,
}
STRUCTURAL = ("accessible_shelter", "exit_capacity")


def objective_terms(subtask: str) -> list[ObjectiveTerm]:
    return [ObjectiveTerm(id=k, kind=k) for k in OBJECTIVES[subtask]]


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    data, witness = _entities(spec, rng)
    sampled = sampled_kinds(spec, TASK.base_rules, FORCED[spec.subtask])
    if "accessible_shelter" in sampled:
        data = _with_accessibility(data, witness, rng)
    if "exit_capacity" in sampled:
        data = _with_exits(data, witness, rng)
        if not data.exits:
            sampled.remove("exit_capacity")
    if "escort_teams" in sampled:
        data = _with_escorts(data, witness, rng)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng, structural=STRUCTURAL)
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective_terms(spec.subtask))


# -- hard-tier hooks -------------------------------------------------------------------
def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """An arrival deadline on some groups (all of them, or two or three), at the loosest
    period that is infeasible with the instance's rules, found by bisection over the
    periods; passed over when the deadline alone is impossible (no conflict with the rules)."""
    d = parsed(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731
    top = d.periods + max(d.travel.values())
    ids = [g.id for g in d.groups]
    subsets = [ids] + [sorted(rng.sample(ids, min(len(ids), k)), key=lambda x: int(x[1:])) for k in (2, 3, 2)]
    for chosen in subsets:
        values = list(range(top, 0, -1))

        def trial(t: int, chosen: list[str] = chosen) -> Draft:
            return with_conflict_rule(draft_, "deadline", ev.Deadline(groups=chosen, period=t), position)

        found = first_infeasible(values, trial, feasible)
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A road of a group's route closing from the period the group would enter it, or the
    group delayed past its departure period."""
    d = parsed(draft_.data)
    out = []
    for row in plan["evacuation"]:
        route, dep = row["route"], row["depart"]
        options = []
        legs = d.legs[route]
        if legs:
            leg = rng.choice(legs)
            a, b = sorted(leg.ends, key=d.network.places.index)
            options.append(make_rule("road_closure", "hard", ev.RoadClosure(road=(a, b), period=dep + leg.offset)))
        if dep < d.periods:
            options.append(make_rule("not_before", "hard", ev.NotBefore(group=row["group"], period=dep + 1)))
        if options:
            out.append(rng.choice(options))
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, list[Any]]:
    return {r["group"]: [r["route"], r["depart"]] for r in plan["evacuation"]}


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    """Backup routes, or None at once when some group has no two routes sharing no road
    (a place with one road out): no plan could name a backup for it."""
    d = parsed(draft_.data)
    for g in d.groups:
        rs = d.routes_of[g.id]
        if not any(not ev.shares_road(d, a.id, b.id) for a, b in itertools.combinations(rs, 2)):
            return None
    return make_rule("backup_route", "hard", NoParams()), [ObjectiveTerm(id="backup_score", kind="backup_score")]


def _optimal_plan(draft_: Draft) -> Witness | None:
    """The draft's optimal plan (one weighted solve), or None when it has none in time."""
    sm = build(draft_)
    weights = lexicographic_weights([ub for _, _, ub in sm.objective_terms])
    sm.model.minimize(sum(w * expr for w, (_, expr, _) in zip(weights, sm.objective_terms)))
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = make_solver(SolverLimits(deterministic_time=PROBE_TIME), presolve=False, optimise=True)
    if solver.solve(sm.model) != cp_model.OPTIMAL:
        return None
    return {r["group"]: (r["route"], r["depart"]) for r in sm.decode(solver)["evacuation"]}


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Road and shelter capacities (worst: low). Candidates alternate between inputs the
    optimal plan leans on (a road or shelter it fills to within the range, whose worst case
    likely costs) and inputs it leaves slack (likely idle), so the kit's probes find both
    sorts quickly; each range runs 10-40 people below the stated capacity."""
    d = parsed(draft_.data)
    plan = _optimal_plan(draft_)
    if plan is None:
        return []
    entries = ev.road_entries(d, plan)
    peak = {r.ends: max((v for (e, _), v in entries.items() if e == r.ends), default=0) for r in d.network.roads}
    loads = ev.shelter_people(d, plan)
    used = {leg.ends for r in d.routes for leg in d.legs[r.id]}
    tight: list[Uncertain] = []
    slack: list[Uncertain] = []
    for r in d.network.roads:
        cap = int(r.capacity or 1)
        if r.ends not in used or cap <= 10:
            continue
        low = max(1, cap - rng.randint(10, 40))
        u = Uncertain(id="", kind="road", target=ev.road_name(r.ends, d.network), low=low, high=cap)
        (tight if peak[r.ends] > low else slack).append(u)
    for sh in d.shelters:
        if sh.capacity <= 10:
            continue
        low = max(1, sh.capacity - rng.randint(10, 30))
        u = Uncertain(id="", kind="shelter", target=sh.id, low=low, high=sh.capacity)
        (tight if loads[sh.id] > low else slack).append(u)
    rng.shuffle(tight)
    rng.shuffle(slack)
    out: list[Uncertain] = []
    for a, b in itertools.zip_longest(tight[:3], slack[:3]):
        out += [u for u in (a, b) if u is not None]
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = EvacData.model_validate(data)
    if u.kind == "shelter":
        shelters = tuple(s.model_copy(update={"capacity": value}) if s.id == u.target else s for s in d.shelters)
        return {**data, "shelters": [s.model_dump(mode="json") for s in shelters]}
    ends = d.road_lookup[u.target]
    roads = tuple(r.model_copy(update={"capacity": value}) if r.ends == ends else r for r in d.network.roads)
    net = RoadNetwork(places=d.network.places, roads=roads)
    return {**data, "network": net.model_dump(mode="json")}


def worst_is_low(u: Uncertain) -> bool:
    return True


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = parsed(draft_.data)
    p = ev.Plan({r["group"]: (r["route"], r["depart"]) for r in plan["evacuation"]})
    return ev.TASK.verification(d, p)


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
