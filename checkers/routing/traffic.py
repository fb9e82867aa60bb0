"""Checks for Urban Traffic Planning answers: each vehicle flow (an origin-destination pair
with a demand per period) is split over its listed candidate routes in whole vehicles,
period by period.

Each period is planned on its own (a static assignment per period): a vehicle of a flow
counts once against every road of its route in the period it is routed in, both
directions of a road together. A road carrying more vehicles in a period than its
free-flow level delays each vehicle beyond that level by the road's stated delay
minutes; the network minutes (route minutes of every vehicle plus those delays) are the
figure the subtasks minimise first or second.

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. Every figure is recomputed from the plan in plain Python integers over the
:class:`~pbsolve.network_kit.RoadNetwork` the model was built from.
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import MAX_QUANTITY, OK, PerData, PlanChecker, lookup
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.network_kit import RoadNetwork
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse, unknown
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "urban_traffic_planning"
Ends = frozenset[str]
Cell = tuple[str, str]  # (route id, period label)


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Flow(_Frozen):
    """Vehicles of one kind travelling from ``origin`` to ``destination``: ``demand[i]``
    of them in the i-th period, every one routed."""

    id: str
    name: str
    vehicle: str = Field(description="cars, buses, ambulances, lorries, coaches ...")
    origin: str
    destination: str
    demand: tuple[NonNegativeInt, ...] = Field(description="vehicles per period, in period order")
    points: PositiveInt = Field(description="order-score points (distinct per flow)")
    priority: bool = Field(default=False, description="a priority flow (buses, ambulances)")


class Route(_Frozen):
    """A listed candidate path of one flow, as its places from origin to destination."""

    id: str
    flow: str
    places: tuple[str, ...]


class Level(_Frozen):
    """The congestion of road ``a``-``b``: each vehicle beyond ``free`` in a period is
    delayed by ``delay`` minutes."""

    a: str
    b: str
    free: NonNegativeInt = Field(description="vehicles per period the road carries without delay")
    delay: PositiveInt = Field(description="minutes of delay per vehicle beyond the free-flow level")


class TrafficData(BaseModel):
    """Validated on creation: every route runs along roads of the network from its flow's
    origin to its destination without revisiting a place, every demand has one entry
    per period, every road has one congestion level."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    network: RoadNetwork
    periods: tuple[str, ...] = Field(description="period labels (start times), in order")
    period_minutes: PositiveInt
    flows: tuple[Flow, ...]
    routes: tuple[Route, ...]
    levels: tuple[Level, ...]
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _well_formed(self) -> TrafficData:
        if not self.periods or len(set(self.periods)) != len(self.periods):
            raise ValueError("periods must be distinct and at least one")
        places = set(self.network.places)
        flows = {f.id: f for f in self.flows}
        if len(flows) != len(self.flows):
            raise ValueError("flow ids must be distinct")
        for f in self.flows:
            if len(f.demand) != len(self.periods):
                raise ValueError(f"flow {f.id} has {len(f.demand)} demands for {len(self.periods)} periods")
            if f.origin not in places or f.destination not in places or f.origin == f.destination:
                raise ValueError(f"flow {f.id} needs two distinct places of the network")
        if len({r.id for r in self.routes}) != len(self.routes):
            raise ValueError("route ids must be distinct")
        for r in self.routes:
            owner = flows.get(r.flow)
            if owner is None:
                raise ValueError(f"route {r.id} belongs to unknown flow {r.flow}")
            if r.places[0] != owner.origin or r.places[-1] != owner.destination or len(set(r.places)) != len(r.places):
                raise ValueError(
                    f"route {r.id} must run from {owner.origin} to {owner.destination} without repeating a place"
                )
            self.network.path_minutes(r.places)  # raises on a missing road
        for f in self.flows:
            if not any(r.flow == f.id for r in self.routes):
                raise ValueError(f"flow {f.id} has no route")
        ends = [frozenset((v.a, v.b)) for v in self.levels]
        if sorted(map(sorted, ends)) != sorted(sorted(r.ends) for r in self.network.roads):
            raise ValueError("every road needs exactly one congestion level")
        if any(r.capacity is None for r in self.network.roads):
            raise ValueError("every road needs a capacity (vehicles per period)")
        return self

    @cached_property
    def flow_by_id(self) -> dict[str, Flow]:
        return {f.id: f for f in self.flows}

    @cached_property
    def route_by_id(self) -> dict[str, Route]:
        return {r.id: r for r in self.routes}

    @cached_property
    def routes_of(self) -> dict[str, tuple[Route, ...]]:
        return {f.id: tuple(r for r in self.routes if r.flow == f.id) for f in self.flows}

    @cached_property
    def route_number(self) -> dict[str, int]:
        """Route id -> its position among its flow's routes, from 1 (route 1 is the main route)."""
        return {r.id: k for rs in self.routes_of.values() for k, r in enumerate(rs, 1)}

    @cached_property
    def route_flow(self) -> dict[str, str]:
        """Route id -> the id of its flow."""
        return {r.id: r.flow for r in self.routes}

    @cached_property
    def detour_of(self) -> dict[str, int]:
        """Route id -> minutes beyond its flow's quickest listed route (see :func:`detour`)."""
        quickest = {f: min(self.route_minutes[r.id] for r in rs) for f, rs in self.routes_of.items()}
        return {r.id: self.route_minutes[r.id] - quickest[r.flow] for r in self.routes}

    @cached_property
    def cell_loads(self) -> dict[Cell, tuple[tuple[Ends, str], ...]]:
        """(route, period) -> the (road, period) keys of :func:`loads` its vehicles count in."""
        return {(r.id, p): tuple((e, p) for e in self.route_roads[r.id]) for r in self.routes for p in self.periods}

    @cached_property
    def priority_minutes_of(self) -> dict[str, int]:
        """Route id -> the priority minutes of each vehicle on it (its minutes on a priority flow's route, else 0)."""
        return {r.id: self.route_minutes[r.id] if self.flow_by_id[r.flow].priority else 0 for r in self.routes}

    @cached_property
    def diverted_of(self) -> dict[str, int]:
        """Route id -> 1 when a vehicle on it is diverted (off its flow's main route), else 0."""
        return {r.id: int(self.route_number[r.id] != 1) for r in self.routes}

    @cached_property
    def order_points_of(self) -> dict[str, int]:
        """Route id -> the order score of each vehicle on it: its flow's points times the route's number."""
        return {r.id: self.flow_by_id[r.flow].points * self.route_number[r.id] for r in self.routes}

    @cached_property
    def route_cells(self) -> dict[str, tuple[Cell, ...]]:
        """Route id -> its (route, period) cells, in period order."""
        return {r.id: tuple((r.id, p) for p in self.periods) for r in self.routes}

    @cached_property
    def load_keys(self) -> tuple[tuple[Ends, str], ...]:
        """Every (used road, period) key of :func:`loads`, road by road in network order."""
        return tuple((e, p) for e in self.used_roads for p in self.periods)

    @cached_property
    def load_levels(self) -> tuple[tuple[tuple[Ends, str], int, int], ...]:
        """Every (used road, period) key of :func:`loads`, in its order, with the road's
        free-flow level and delay per vehicle beyond it."""
        return tuple((key, self.level_of[key[0]].free, self.level_of[key[0]].delay) for key in self.load_keys)

    @cached_property
    def route_roads(self) -> dict[str, tuple[Ends, ...]]:
        return {r.id: tuple(frozenset(p) for p in itertools.pairwise(r.places)) for r in self.routes}

    @cached_property
    def route_minutes(self) -> dict[str, int]:
        return {r.id: self.network.path_minutes(r.places) for r in self.routes}

    @cached_property
    def level_of(self) -> dict[Ends, Level]:
        return {frozenset((v.a, v.b)): v for v in self.levels}

    @cached_property
    def capacity_of(self) -> dict[Ends, int]:
        return {r.ends: int(r.capacity or 0) for r in self.network.roads}

    @cached_property
    def period_index(self) -> dict[str, int]:
        return {p: i for i, p in enumerate(self.periods)}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {
            "place": self.network.places,
            "flow": self.flow_by_id,
            "route": self.route_by_id,
            "period": self.period_index,
        }
        return names[what]

    @cached_property
    def used_roads(self) -> tuple[Ends, ...]:
        """Roads some listed route runs along, in network order."""
        on = {e for roads in self.route_roads.values() for e in roads}
        return tuple(r.ends for r in self.network.roads if r.ends in on)

    @cached_property
    def routes_on(self) -> dict[Ends, tuple[str, ...]]:
        """Road -> the ids of the routes along it."""
        return {e: tuple(r.id for r in self.routes if e in self.route_roads[r.id]) for e in self.used_roads}

    @cached_property
    def most_load(self) -> dict[tuple[Ends, str], int]:
        """(used road, period) -> the most vehicles it can carry then (every route along it full)."""
        return {
            (e, p): sum(self.flow_by_id[self.route_by_id[rid].flow].demand[i] for rid in self.routes_on[e])
            for e in self.used_roads
            for i, p in enumerate(self.periods)
        }

    @cached_property
    def cell_demand(self) -> dict[Cell, int]:
        """(route, period) -> its flow's demand then (the most vehicles the route can carry)."""
        return {(r.id, p): self.flow_by_id[r.flow].demand[i] for r in self.routes for i, p in enumerate(self.periods)}

    def demand(self, flow: str, period: str) -> int:
        return self.flow_by_id[flow].demand[self.period_index[period]]


def label(e: Ends | tuple[str, str], d: TrafficData) -> str:
    """'A–B' in the network's place order (the spelling of tables, figures and rules)."""
    a, b = sorted(e, key=d.network.places.index)
    return f"{a}–{b}"


def replaced(d: TrafficData, **changes: Any) -> TrafficData:
    """``d`` with fields replaced, as a new object (``model_copy`` would keep cached lookups)."""
    return TrafficData.model_validate({**{f: getattr(d, f) for f in TrafficData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
PlaceName = Annotated[str, Names("place")]
FlowName = Annotated[str, Names("flow")]
PeriodName = Annotated[str, Names("period")]
Pair = tuple[PlaceName, PlaceName]  # a road, by the places it joins


def no_road(d: Any, roads: Iterable[tuple[str, str]]) -> list[str]:
    """The pairs of (known) places that no road of the network joins: a rule about such a
    road would hold of nothing, and its figures could not be labelled."""
    return unknown("road", [f"{a}–{b}" for a, b in roads if d.network.road(a, b) is None], ())


class RoadClosure(Params):
    """The named roads carry no vehicle in the named periods (road works, an incident)."""

    roads: list[Pair]
    periods: list[PeriodName]

    def data_problems(self, data: Any) -> list[str]:
        found = super().data_problems(data)
        return found or no_road(data, self.roads)


class PriorityBound(Params):
    """Vehicles of the named flows use only routes of at most ``minutes`` route minutes."""

    flows: list[FlowName]
    minutes: PositiveInt


class ZoneLimit(Params):
    """At most ``max`` vehicles per period on routes that pass through ``place``."""

    place: PlaceName
    max: NonNegativeInt


class RouteBan(Params):
    """Vehicles of the named flows use none of the named roads (e.g. no lorries on a residential street)."""

    flows: list[FlowName]
    roads: list[Pair]

    def data_problems(self, data: Any) -> list[str]:
        found = super().data_problems(data)
        return found or no_road(data, self.roads)


class DetourLimit(Params):
    """No vehicle takes a route more than ``minutes`` longer than its flow's quickest listed route."""

    minutes: NonNegativeInt


class SplitLimit(Params):
    """In each period every flow uses at most ``max`` of its routes (signage)."""

    max: PositiveInt


class MainRouteShare(Params):
    """In each period at least ``percent`` % of each named flow's vehicles take its main route (route 1)."""

    flows: list[FlowName]
    percent: PositiveInt = Field(le=100)


class CorridorBalance(Params):
    """In each period the vehicles on roads ``first`` and ``second`` differ by at most ``max``."""

    first: Pair
    second: Pair
    max: NonNegativeInt

    def data_problems(self, data: Any) -> list[str]:
        found = super().data_problems(data) or no_road(data, [self.first, self.second])
        if not found and frozenset(self.first) == frozenset(self.second):
            found.append(
                f"the road {self.first[0]}–{self.first[1]} is paired with itself: the rule needs two different roads"
            )
        return found


class RouteStability(Params):
    """Between consecutive periods the vehicles of any route change by at most ``max``."""

    max: NonNegativeInt


class ExposureBudget(Params):
    """Each named road carries at most ``max`` vehicles over all periods together (noise, emissions)."""

    roads: list[Pair]
    max: NonNegativeInt

    def data_problems(self, data: Any) -> list[str]:
        found = super().data_problems(data)
        return found or no_road(data, self.roads)


class CongestionRecovery(Params):
    """No road carries more than its free-flow level in two consecutive periods."""


class IncidentBackup(Params):
    """Every flow names a backup route using none of ``roads``; if any one of them fails in
    a period, every vehicle of a route along it takes its flow's backup route in that
    period, and every road stays within its capacity."""

    roads: list[Pair]

    def data_problems(self, data: Any) -> list[str]:
        found = super().data_problems(data)
        return found or no_road(data, self.roads)


class CurrentFlows(Params):
    """The current plan a ``changes`` term counts against: [route, period, vehicles] rows."""

    existing: list[tuple[Annotated[str, Names("route")], PeriodName, NonNegativeInt]]


RULE_PARAMS: ParamsTable = {
    "road_capacity": NoParams,
    "road_closure": RoadClosure,
    "priority_bound": PriorityBound,
    "zone_limit": ZoneLimit,
    "route_ban": RouteBan,
    "detour_limit": DetourLimit,
    "split_limit": SplitLimit,
    "main_route_share": MainRouteShare,
    "corridor_balance": CorridorBalance,
    "route_stability": RouteStability,
    "exposure_budget": ExposureBudget,
    "congestion_recovery": CongestionRecovery,
    "incident_backup": IncidentBackup,
}
TERM_PARAMS: ParamsTable = {
    "network_minutes": NoParams,
    "priority_minutes": NoParams,
    "diverted": NoParams,
    "order_score": NoParams,
    "backup_score": NoParams,
    "changes": CurrentFlows,
}


def current_flows(changes: ObjectiveTerm) -> dict[Cell, int]:
    """The current plan of a ``changes`` term: (route, period) -> vehicles (absent: 0)."""
    rows = as_model(parse(TERM_PARAMS, changes), CurrentFlows).existing
    return {(r, p): v for r, p, v in rows}


# -- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    vehicles: dict[Cell, int]  # every (route, period) of the data
    backup: dict[str, str] | None = None  # flow -> backup route (robustness only)
    # the loads per data they were computed for (see loads)
    _loads: PerData[dict[tuple[Ends, str], int]] = field(default_factory=PerData, compare=False, repr=False)


def loads(d: TrafficData, plan: Plan) -> dict[tuple[Ends, str], int]:
    """(road, period) -> vehicles on it, for every used road and period (computed once per
    plan and data: capacity, delays, balance and the figures read it; not to be changed)."""
    return plan._loads.get(d, lambda: _loaded(d, plan))


def _loaded(d: TrafficData, plan: Plan) -> dict[tuple[Ends, str], int]:
    out = dict.fromkeys(d.load_keys, 0)
    keys_of = d.cell_loads
    for cell, v in plan.vehicles.items():
        if v:
            for key in keys_of[cell]:
                out[key] += v
    return out


def network_minutes(d: TrafficData, plan: Plan) -> int:
    minutes = d.route_minutes
    travel = 0
    for (rid, _), v in plan.vehicles.items():
        travel += v * minutes[rid]
    load = loads(d, plan)
    delay = 0
    for key, free, late in d.load_levels:
        over = load[key] - free
        if over > 0:
            delay += late * over
    return travel + delay


def through(d: TrafficData, plan: Plan, place: str, period: str) -> int:
    return sum(plan.vehicles[r.id, period] for r in d.routes if place in r.places)


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
@check("road_capacity")
def _road_capacity(d: TrafficData, plan: Plan, p: NoParams) -> Verdict:
    cap = d.capacity_of
    for (e, period), load in loads(d, plan).items():
        if load > cap[e]:
            return False, f"{label(e, d)} carries {load} vehicles in {period} (capacity {cap[e]})"
    return OK


@check("road_closure")
def _road_closure(d: TrafficData, plan: Plan, p: RoadClosure) -> Verdict:
    shut = {frozenset(r) for r in p.roads}
    periods = set(p.periods)
    closed: dict[str, Ends | None] = {}  # route -> the first closed road along it (None: none)
    for rid, roads in d.route_roads.items():
        first: Ends | None = None
        for e in roads:
            if e in shut:
                first = e
                break
        closed[rid] = first
    for (rid, period), v in plan.vehicles.items():
        if v and period in periods:
            hit = closed[rid]
            if hit is not None:
                return False, f"{v} vehicles take {rid} along closed {label(hit, d)} in {period}"
    return OK


@check("priority_bound")
def _priority_bound(d: TrafficData, plan: Plan, p: PriorityBound) -> Verdict:
    flows, flow_of, minutes = set(p.flows), d.route_flow, d.route_minutes
    for (rid, period), v in plan.vehicles.items():
        if v and flow_of[rid] in flows and minutes[rid] > p.minutes:
            return False, f"{v} vehicles take {rid} ({minutes[rid]} minutes, over {p.minutes}) in {period}"
    return OK


@check("zone_limit")
def _zone_limit(d: TrafficData, plan: Plan, p: ZoneLimit) -> Verdict:
    for period in d.periods:
        n = through(d, plan, p.place, period)
        if n > p.max:
            return False, f"{n} vehicles pass through {p.place} in {period} (at most {p.max})"
    return OK


@check("route_ban")
def _route_ban(d: TrafficData, plan: Plan, p: RouteBan) -> Verdict:
    banned = {frozenset(r) for r in p.roads}
    flows, flow_of = set(p.flows), d.route_flow
    for (rid, period), v in plan.vehicles.items():
        if v and flow_of[rid] in flows:
            hit = [e for e in d.route_roads[rid] if e in banned]
            if hit:
                return False, f"{v} vehicles of {flow_of[rid]} use banned {label(hit[0], d)} in {period}"
    return OK


def detour(d: TrafficData, rid: str) -> int:
    """Minutes route ``rid`` takes beyond its flow's quickest listed route."""
    return d.detour_of[rid]


@check("detour_limit")
def _detour_limit(d: TrafficData, plan: Plan, p: DetourLimit) -> Verdict:
    extra = d.detour_of
    for (rid, period), v in plan.vehicles.items():
        if v and extra[rid] > p.minutes:
            return False, f"{v} vehicles take {rid} in {period}, {extra[rid]} minutes longer than the quickest route"
    return OK


@check("split_limit")
def _split_limit(d: TrafficData, plan: Plan, p: SplitLimit) -> Verdict:
    vehicles = plan.vehicles
    for f in d.flows:
        rs = d.routes_of[f.id]
        for period in d.periods:
            used = 0
            for r in rs:
                if vehicles[r.id, period] > 0:
                    used += 1
            if used > p.max:
                return False, f"{f.id} uses {used} routes in {period} (at most {p.max})"
    return OK


@check("main_route_share")
def _main_route_share(d: TrafficData, plan: Plan, p: MainRouteShare) -> Verdict:
    for fid in p.flows:
        main, demand = d.routes_of[fid][0].id, d.flow_by_id[fid].demand
        for i, period in enumerate(d.periods):
            on, total = plan.vehicles[main, period], demand[i]
            if 100 * on < p.percent * total:
                return False, f"{fid} sends {on} of {total} vehicles by its main route {main} in {period}"
    return OK


@check("corridor_balance")
def _corridor_balance(d: TrafficData, plan: Plan, p: CorridorBalance) -> Verdict:
    load = loads(d, plan)
    a, b = frozenset(p.first), frozenset(p.second)
    for period in d.periods:
        la, lb = load.get((a, period), 0), load.get((b, period), 0)
        if abs(la - lb) > p.max:
            return False, f"{label(a, d)} carries {la} and {label(b, d)} {lb} vehicles in {period}"
    return OK


@check("route_stability")
def _route_stability(d: TrafficData, plan: Plan, p: RouteStability) -> Verdict:
    for r in d.routes:
        for before, after in itertools.pairwise(d.periods):
            x, y = plan.vehicles[r.id, before], plan.vehicles[r.id, after]
            if abs(y - x) > p.max:
                return False, f"{r.id} goes from {x} vehicles in {before} to {y} in {after}"
    return OK


@check("exposure_budget")
def _exposure_budget(d: TrafficData, plan: Plan, p: ExposureBudget) -> Verdict:
    """Runs each road's total over the periods, in order."""
    load = loads(d, plan)
    for road in p.roads:
        e, running = frozenset(road), 0
        for period in d.periods:
            running += load.get((e, period), 0)
            if running > p.max:
                return False, f"{label(e, d)} has carried {running} vehicles by the end of {period} (at most {p.max})"
    return OK


@check("congestion_recovery")
def _congestion_recovery(d: TrafficData, plan: Plan, p: CongestionRecovery) -> Verdict:
    load = loads(d, plan)
    for e in d.used_roads:
        free = d.level_of[e].free
        for before, after in itertools.pairwise(d.periods):
            if load[e, before] > free and load[e, after] > free:
                return False, f"{label(e, d)} is over its free-flow level {free} in both {before} and {after}"
    return OK


def rerouted(d: TrafficData, plan: Plan, failed: Ends, period: str) -> dict[Ends, int]:
    """Road -> vehicles in ``period`` once every route along ``failed`` sends its vehicles
    to its flow's backup route (the plan's backups)."""
    backup = plan.backup or {}
    moved = {
        rid: (backup[d.route_by_id[rid].flow] if failed in d.route_roads[rid] else rid)
        for rid in (r.id for r in d.routes)
    }
    out: dict[Ends, int] = {}
    for rid in (r.id for r in d.routes):
        v = plan.vehicles[rid, period]
        for e in d.route_roads[moved[rid]]:
            out[e] = out.get(e, 0) + v
    return out


@check("incident_backup")
def _incident_backup(d: TrafficData, plan: Plan, p: IncidentBackup) -> Verdict:
    """Simulates each listed road failing in each period on its own."""
    backup = plan.backup or {}
    failing = [frozenset(r) for r in p.roads]
    for f in d.flows:
        b = backup.get(f.id)
        if b is None:
            return False, f"{f.id} names no backup route"
        if d.route_by_id[b].flow != f.id:
            return False, f"{f.id}'s backup {b} is not one of its routes"
        hit = [e for e in d.route_roads[b] if e in failing]
        if hit:
            return False, f"{f.id}'s backup {b} uses {label(hit[0], d)}, which may fail"
    for e in failing:
        for period in d.periods:
            for road, load in rerouted(d, plan, e, period).items():
                if load > d.capacity_of[road]:
                    return False, (
                        f"if {label(e, d)} failed in {period}, {label(road, d)} would carry {load} vehicles "
                        f"(capacity {d.capacity_of[road]})"
                    )
    return OK


# -- objective -------------------------------------------------------------------------
def per_vehicle(plan: Plan, figure: dict[str, int]) -> int:
    """``figure`` (route id -> a figure per vehicle on it) summed over every vehicle of the plan."""
    total = 0
    for (rid, _), v in plan.vehicles.items():
        total += v * figure[rid]
    return total


def objective_value(d: TrafficData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "network_minutes":
        return network_minutes(d, plan)
    if kind == "priority_minutes":
        return per_vehicle(plan, d.priority_minutes_of)
    if kind == "diverted":
        return per_vehicle(plan, d.diverted_of)
    if kind == "order_score":
        return per_vehicle(plan, d.order_points_of)
    if kind == "backup_score":
        return sum(f.points * d.route_number[(plan.backup or {})[f.id]] for f in d.flows)
    if kind == "changes":
        old = {(r, p): v for r, p, v in as_model(tp, CurrentFlows).existing}
        return sum(max(0, old.get(c, 0) - v) for c, v in plan.vehicles.items())
    raise ValueError(f"unknown objective kind {term.kind!r}")


def neighbours(d: TrafficData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one vehicle (or every vehicle) of a flow in a period
    moved from one of its routes to another, or one backup changed."""
    for f in d.flows:
        rs = d.routes_of[f.id]
        for period in d.periods:
            for a in rs:
                have = plan.vehicles[a.id, period]
                if not have:
                    continue
                for b in rs:
                    if b.id != a.id:
                        for n in sorted({1, have}):
                            moved = {**plan.vehicles, (a.id, period): have - n}
                            moved[b.id, period] = plan.vehicles[b.id, period] + n
                            yield Plan(moved, plan.backup)
        if plan.backup is not None:
            for r in rs:
                if r.id != plan.backup[f.id]:
                    yield Plan(plan.vehicles, {**plan.backup, f.id: r.id})


def _counts_wanted(rid: str, fid: str, n: int) -> str:
    """Why a route's counts cannot be read: not a list of ``n`` whole vehicle counts."""
    return f"route {rid} of {fid} needs a list of {n} whole vehicle counts (one per period)"


class UrbanTraffic(PlanChecker):
    family = "routing"
    task = TASK_ID
    plan_key = "flows"
    plan_text = (
        "an object naming every flow once, each splitting its demand in every period over its own listed routes "
        "in whole vehicles (for each route used, a list of vehicles per period; the counts of a period add up to "
        "the flow's demand), with a backup route where the rules ask for one"
    )
    data_type = TrafficData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: TrafficData) -> dict[str, Any]:
        return {"flow": lookup([f.id for f in d.flows]), "route": lookup([r.id for r in d.routes])}

    def read_plan(self, d: TrafficData, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Plan | None, str]:
        table = section.get("flows") if isinstance(section, dict) else None
        if not isinstance(table, dict):
            return None, "'flows' is missing or not an object (flow -> its routes' vehicles)"
        need_backup = any(r.kind == "incident_backup" for r in rules)
        vehicles: dict[Cell, int] = dict.fromkeys(d.cell_demand, 0)  # every (route, period), route by route
        backup: dict[str, str] = {}
        seen: set[str] = set()
        named: set[str] = set()
        n = len(d.periods)
        flows, routes, flow_of, cells_of = lk["flow"], lk["route"], d.route_flow, d.route_cells
        for text, split in table.items():
            fid = flows.find(str(text))
            if fid is None:
                return None, f"'flows' names unknown flow {str(text)[:40]!r}"
            if fid in seen:
                return None, f"flow {fid} appears more than once"
            seen.add(fid)
            if not isinstance(split, dict):
                return None, f"flow {fid} needs an object (route -> vehicles per period)"
            routed = [0] * n  # vehicles per period over the flow's routes (each named once, by this flow only)
            for rtext, counts in split.items():
                if rtext == "backup":
                    continue
                rid = routes.find(str(rtext))
                if rid is None:
                    return None, f"flow {fid} names unknown route {str(rtext)[:40]!r}"
                if flow_of[rid] != fid:
                    return None, f"route {rid} is not a route of {fid}"
                if not isinstance(counts, list) or len(counts) != n:
                    return None, _counts_wanted(rid, fid, n)
                for v in counts:
                    if not (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_QUANTITY):
                        return None, _counts_wanted(rid, fid, n)
                if rid in named:
                    return None, f"route {rid} appears more than once"
                named.add(rid)
                cells = cells_of[rid]
                for i in range(n):
                    v = counts[i]
                    vehicles[cells[i]] = v
                    routed[i] += v
            demand = d.flow_by_id[fid].demand
            for i, p in enumerate(d.periods):
                if routed[i] != demand[i]:
                    return None, f"{fid} routes {routed[i]} vehicles in {p}, its demand is {demand[i]}"
            if need_backup:
                b = split.get("backup")
                bid = routes.find(b) if isinstance(b, str) else None
                if bid is None or flow_of[bid] != fid:
                    return None, f"flow {fid} needs a 'backup' route from its own routes"
                backup[fid] = bid
        missing = [f.id for f in d.flows if f.id not in seen]
        if missing:
            return None, f"flows missing from the plan: {', '.join(missing)}"
        return Plan(vehicles, backup if need_backup else None), "complete plan"

    def objective_value(self, d: TrafficData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: TrafficData, plan: Plan) -> dict[str, dict[str, int]]:
        per_flow = {f.id: 0 for f in d.flows}
        for (rid, _), v in plan.vehicles.items():
            per_flow[d.route_by_id[rid].flow] += v * d.route_minutes[rid]
        peak = {label(e, d): 0 for e in d.used_roads}
        for (e, _), load in loads(d, plan).items():
            peak[label(e, d)] = max(peak[label(e, d)], load)
        return {"flow_minutes": per_flow, "peak_load": peak}

    def existing(self, d: TrafficData, plan: Plan) -> list[list[Any]]:
        return [[rid, p, v] for (rid, p), v in plan.vehicles.items() if v]

    def plan_schema(self, d: TrafficData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        n = len(d.periods)
        counts = {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": n, "maxItems": n}
        robust = any(r.kind == "incident_backup" for r in rules)
        flows: dict[str, Any] = {}
        for f in d.flows:
            props: dict[str, Any] = {r.id: counts for r in d.routes_of[f.id]}
            if robust:
                props["backup"] = {"enum": [r.id for r in d.routes_of[f.id]], "description": "the flow's backup route"}
            flows[f.id] = {
                "type": "object",
                "properties": props,
                "required": ["backup"] if robust else [],
                "additionalProperties": False,
            }
        return {
            "type": "object",
            "properties": flows,
            "required": [f.id for f in d.flows],
            "additionalProperties": False,
            "description": (
                "every flow once, each an object from its own route ids to the route's vehicles in each period, "
                "in period order (a route left out carries none)"
            ),
        }

    def verification_schema(self, d: TrafficData) -> dict[str, Any]:
        return figures_schema({
            "flow_minutes": ([f.id for f in d.flows], "for each flow, its vehicles × route minutes summed over periods"),
            "peak_load": ([label(e, d) for e in d.used_roads], "for each road any route uses, its highest vehicles in one period"),
        })  # fmt: skip

    def plan_json(self, d: TrafficData, plan: Plan) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for f in d.flows:
            split: dict[str, Any] = {
                r.id: [plan.vehicles[r.id, p] for p in d.periods]
                for r in d.routes_of[f.id]
                if any(plan.vehicles[r.id, p] for p in d.periods)
            }
            if plan.backup is not None:
                split["backup"] = plan.backup[f.id]
            out[f.id] = split
        return out

    def neighbours(self, data: TrafficData, plan: Plan) -> Iterator[Plan]:
        """One move from ``plan`` (see :func:`neighbours`), for the kit's near misses."""
        return neighbours(data, plan)

    def baseline_plan(self, d: TrafficData, instance: Instance) -> Plan:
        """Every vehicle on its flow's quickest listed route (fewest minutes, then listed
        order), blind to capacities, closures and congestion; backups: the flow's last route."""
        vehicles: dict[Cell, int] = {(r.id, p): 0 for r in d.routes for p in d.periods}
        for f in d.flows:
            best = min(d.routes_of[f.id], key=lambda r: d.route_minutes[r.id])
            for i, p in enumerate(d.periods):
                vehicles[best.id, p] = f.demand[i]
        backup = None
        if any(r.kind == "incident_backup" for r in instance.rules):
            backup = {f.id: d.routes_of[f.id][-1].id for f in d.flows}
        return Plan(vehicles, backup)


TASK = UrbanTraffic()
