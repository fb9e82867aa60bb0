"""Checks for Logistics Delivery Planning answers: one route per vehicle from the depot,
through its stops in order (a reload at the depot written ``Depot`` where the fleet does
several trips), back to the depot.

This module is the grader's second implementation of every rule: it holds the task's
data model (an explicit integer travel-minute matrix between the depot and the stops,
the stops' loads, service minutes and windows, the fleet), the parameter model of each
rule and objective kind, and a plain-Python simulation of a plan (every vehicle leaves the
depot at minute 0; a vehicle reaching a stop before its window opens waits for it), and
never imports the solver models.
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import OK, PlanChecker, lookup, owner_rows, spread_verdict
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.network_kit import RoadNetwork
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse, problem
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "logistics_delivery_planning"
RELOAD = "Depot"  # how a route names a return to the depot to reload between two trips


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Stop(_Frozen):
    id: str
    name: str
    load: int = Field(
        default=0,
        description="units: delivered here (>= 0); with pickups, + picked up here, - delivered here",
    )
    service: NonNegativeInt = Field(default=0, description="minutes spent at the stop")
    open: NonNegativeInt = Field(default=0, description="minute the window opens (a vehicle arriving earlier waits)")
    close: NonNegativeInt | None = Field(default=None, description="latest minute service may start")
    delivery: str | None = Field(default=None, description="pickup stops: the stop its goods are delivered to")


class Vehicle(_Frozen):
    id: str
    kind: str = Field(description="vehicle type (vehicles of one type and capacity are interchangeable)")
    capacity: PositiveInt | None = None


class DeliveryData(_Frozen):
    """The depot is node 0 of ``minutes``; stop k (1-based, in list order) is node k."""

    depot: str
    stops: tuple[Stop, ...]
    vehicles: tuple[Vehicle, ...]
    minutes: tuple[tuple[NonNegativeInt, ...], ...] = Field(description="travel minutes, [from][to], depot first")
    shift: PositiveInt | None = Field(default=None, description="end of the drivers' shift, minutes after departure")
    reloads: NonNegativeInt = Field(default=0, description="reload visits to the depot allowed per vehicle")
    reload_minutes: NonNegativeInt = 0
    pickups: bool = Field(default=False, description="goods are picked up at stops (load carried forward)")
    network: RoadNetwork | None = Field(default=None, description="the streets the minutes were computed from")
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _well_formed(self) -> DeliveryData:
        n = len(self.stops) + 1
        if not self.stops or not self.vehicles:
            raise ValueError("a delivery instance needs at least one stop and one vehicle")
        ids = [s.id for s in self.stops]
        if len(set(ids)) != len(ids) or RELOAD in ids or self.depot in ids:
            raise ValueError("stop ids must be distinct and differ from the depot")
        if len({v.id for v in self.vehicles}) != len(self.vehicles):
            raise ValueError("vehicle ids must be distinct")
        if len(self.minutes) != n or any(len(row) != n for row in self.minutes):
            raise ValueError(f"the travel matrix must be {n} x {n} (the depot and {n - 1} stops)")
        if any(self.minutes[i][i] for i in range(n)):
            raise ValueError("the travel matrix must have zeros on its diagonal")
        for s in self.stops:
            if s.close is not None and s.close < s.open:
                raise ValueError(f"stop {s.id}'s window closes before it opens")
            if s.delivery is not None and s.delivery not in ids:
                raise ValueError(f"pickup {s.id} names an unknown delivery stop {s.delivery}")
        if self.pickups and any(s.service < 1 for s in self.stops):
            raise ValueError("with pickups every stop takes at least one minute of service")
        if self.pickups:  # the pickup-before-delivery encoding reads the direct drive as the shortest
            for i, j, k in itertools.permutations(range(n), 3):
                if self.minutes[i][k] > self.minutes[i][j] + self.minutes[j][k]:
                    raise ValueError("with pickups the travel minutes must obey the triangle inequality")
        if self.network is not None:
            names = [self.depot, *(s.name for s in self.stops)]
            table = self.network.minutes
            for i, a in enumerate(names):
                for j, b in enumerate(names):
                    if table[a][b] != self.minutes[i][j]:
                        raise ValueError(f"travel minutes {a} -> {b} differ from the street network's")
        return self

    @cached_property
    def index(self) -> dict[str, int]:
        """Stop id -> its node number (1-based; the depot is 0)."""
        return {s.id: k for k, s in enumerate(self.stops, 1)}

    @cached_property
    def stop_by_id(self) -> dict[str, Stop]:
        return {s.id: s for s in self.stops}

    @cached_property
    def vehicle_by_id(self) -> dict[str, Vehicle]:
        return {v.id: v for v in self.vehicles}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``);
        the node served before a stop is a stop, the depot or a reload there."""
        if what == "stop or depot":
            return {self.depot, RELOAD, *self.stop_by_id}
        names: dict[str, Container[str]] = {"stop": self.stop_by_id, "vehicle": self.vehicle_by_id}
        return names[what]

    @cached_property
    def pairs(self) -> list[tuple[str, str]]:
        """(pickup, delivery) pairs."""
        return [(s.id, s.delivery) for s in self.stops if s.delivery is not None]

    @cached_property
    def symmetric(self) -> bool:
        n = len(self.minutes)
        return all(self.minutes[i][j] == self.minutes[j][i] for i in range(n) for j in range(i))


def replaced(d: DeliveryData, **changes: Any) -> DeliveryData:
    """``d`` with fields replaced, as a new object (cached lookups are not carried over)."""
    return DeliveryData.model_validate({**{f: getattr(d, f) for f in DeliveryData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
StopName = Annotated[str, Names("stop")]
VehicleName = Annotated[str, Names("vehicle")]


class StopDeadline(Params):
    """Service at each named stop starts no later than minute ``by``."""

    stops: list[StopName]
    by: NonNegativeInt


class FirstStop(Params):
    """``stop`` is the first stop of its vehicle's route (urgent: served on leaving the depot)."""

    stop: StopName


class MaxStops(Params):
    """No vehicle serves more than ``max`` stops."""

    max: PositiveInt


class Precedence(Params):
    """For each pair, service at the first stop starts strictly before service at the second."""

    pairs: list[tuple[StopName, StopName]]


class SameVehicle(Params):
    """The named stops are all served by one vehicle."""

    stops: list[StopName]


class DifferentVehicle(Params):
    """For each pair, the two stops are served by different vehicles."""

    pairs: list[tuple[StopName, StopName]]


class RouteBalance(Params):
    """The numbers of stops of any two vehicles (unused ones count 0) differ by at most ``max``."""

    max: NonNegativeInt


class BatteryRange(Params):
    """Each trip (from leaving the depot to the next arrival there) drives at most ``max`` minutes."""

    max: PositiveInt


class LoadLimit(Params):
    """The load on board on arriving at ``stop`` is at most ``max`` units."""

    stop: StopName
    max: NonNegativeInt


class VehicleOff(Params):
    """The vehicle is unavailable: it serves no stop."""

    vehicle: VehicleName


class DelayBuffer(Params):
    """Every service starts at least ``minutes`` before its window closes and every vehicle
    is back at least ``minutes`` before the end of the shift."""

    minutes: PositiveInt


class CurrentRoutes(Params):
    """The current plan a ``changes`` term counts against: stop -> [vehicle, the node served just before it]."""

    existing: dict[StopName, tuple[VehicleName, Annotated[str, Names("stop or depot")]]]

    def data_problems(self, data: Any) -> list[str]:
        """Also: the plan covers every stop (the ``changes`` figure compares each stop's vehicle and predecessor)."""
        found = super().data_problems(data)
        missing = [x for x in data.stop_by_id if x not in self.existing]
        return found + problem("the current plan has no vehicle and predecessor for stop", missing)


RULE_PARAMS: ParamsTable = {
    "capacity": NoParams,
    "time_windows": NoParams,
    "shift_end": NoParams,
    "stop_deadline": StopDeadline,
    "max_stops": MaxStops,
    "first_stop": FirstStop,
    "pickup_delivery": NoParams,
    "precedence": Precedence,
    "same_vehicle": SameVehicle,
    "different_vehicle": DifferentVehicle,
    "route_balance": RouteBalance,
    "battery_range": BatteryRange,
    "load_limit": LoadLimit,
    "vehicle_off": VehicleOff,
    "delay_buffer": DelayBuffer,
}
TERM_PARAMS: ParamsTable = {
    "travel": NoParams,
    "arrival_sum": NoParams,
    "changes": CurrentRoutes,
}


def current_routes(changes: ObjectiveTerm) -> dict[str, tuple[str, str]]:
    """The current plan of a ``changes`` term (stop -> (vehicle, predecessor node))."""
    return as_model(parse(TERM_PARAMS, changes), CurrentRoutes).existing


def vehicle_classes(d: DeliveryData, rules: Sequence[Rule], objective: Sequence[ObjectiveTerm]) -> list[list[str]]:
    """Vehicles that are interchangeable in this instance (two or more of one type and
    capacity that no rule or objective term names), each class in fleet order. A plan and
    the plan with two such vehicles' routes swapped state the same answer; the canonical
    labelling orders a class's routes by their lowest-numbered stop (unused vehicles last)."""
    if any(t.kind == "changes" for t in objective):
        return []
    named = {str(r.params.get("vehicle")) for r in rules if "vehicle" in r.params}
    by: dict[tuple[str, int | None], list[str]] = {}
    for v in d.vehicles:
        if v.id not in named:
            by.setdefault((v.kind, v.capacity), []).append(v.id)
    return [ids for ids in by.values() if len(ids) > 1]


# -- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    routes: dict[str, tuple[str, ...]]  # vehicle -> stop ids in order (RELOAD between trips); every vehicle listed
    _cache: dict[int, tuple[DeliveryData, Sim]] = field(default_factory=dict, compare=False, repr=False)


@dataclass
class Sim:
    """A plan's schedule, loads and figures, computed from the data."""

    vehicle: dict[str, str] = field(default_factory=dict)  # stop -> vehicle
    start: dict[str, int] = field(default_factory=dict)  # stop -> minute service starts
    onboard: dict[str, int] = field(default_factory=dict)  # stop -> load on board on arrival
    peak: dict[str, int] = field(default_factory=dict)  # stop -> load on board while at the stop (the larger)
    before: dict[str, str] = field(default_factory=dict)  # stop -> node served just before (a stop or the depot)
    back: dict[str, int] = field(default_factory=dict)  # vehicle -> minute back at the depot (0 unused)
    travel: dict[str, int] = field(default_factory=dict)  # vehicle -> travel minutes
    count: dict[str, int] = field(default_factory=dict)  # vehicle -> stops served
    trips: list[tuple[str, int]] = field(default_factory=list)  # (vehicle, driving minutes) per trip


def trips_of(route: Sequence[str]) -> list[list[str]]:
    """The route split at its reloads."""
    out: list[list[str]] = [[]]
    for x in route:
        if x == RELOAD:
            out.append([])
        else:
            out[-1].append(x)
    return out


def simulate(d: DeliveryData, plan: Plan) -> Sim:
    """Each vehicle leaves the depot at minute 0; travel follows the matrix; service at a
    stop starts at the later of arrival and the window's opening and lasts its service
    minutes; a reload takes ``reload_minutes`` at the depot. Loads: without pickups, a
    vehicle leaves the depot with everything its trip delivers (on board on arrival at a
    stop: its own load and the later stops' of the trip); with pickups, it leaves empty
    and each stop changes the load by its ``load``. Computed once per plan and data (every
    rule and figure reads the same simulation; treat it as read-only)."""
    hit = plan._cache.get(id(d))
    if hit is not None and hit[0] is d:
        return hit[1]
    sim = Sim()
    T, idx = d.minutes, d.index
    for v in d.vehicles:
        route = plan.routes.get(v.id, ())
        sim.count[v.id] = sum(1 for x in route if x != RELOAD)
        time = travel = 0
        prev, prev_name = 0, d.depot
        for t, trip in enumerate(trips_of(route) if route else []):
            if t:
                time += d.reload_minutes
            remaining = sum(d.stop_by_id[s].load for s in trip)
            carried = driven = 0
            for s in trip:
                k = idx[s]
                stop = d.stop_by_id[s]
                time += T[prev][k]
                travel += T[prev][k]
                driven += T[prev][k]
                sim.vehicle[s] = v.id
                sim.before[s] = prev_name
                sim.start[s] = start = max(time, stop.open)
                if d.pickups:
                    sim.onboard[s] = carried
                    carried += stop.load
                    sim.peak[s] = max(sim.onboard[s], carried)
                else:
                    sim.onboard[s] = sim.peak[s] = remaining
                    remaining -= stop.load
                time = start + stop.service
                prev, prev_name = k, s
            time += T[prev][0]
            travel += T[prev][0]
            driven += T[prev][0]
            sim.trips.append((v.id, driven))
            prev, prev_name = 0, d.depot
        sim.back[v.id] = time
        sim.travel[v.id] = travel
    plan._cache[id(d)] = (d, sim)
    return sim


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
@check("capacity")
def _capacity(d: DeliveryData, plan: Plan, p: NoParams) -> Verdict:
    sim = simulate(d, plan)
    for s in d.stops:
        cap = d.vehicle_by_id[sim.vehicle[s.id]].capacity
        if cap is not None and sim.peak[s.id] > cap:
            v = sim.vehicle[s.id]
            return False, f"{v} carries {sim.peak[s.id]} units at {s.id} (capacity {cap})"
    return OK


@check("time_windows")
def _time_windows(d: DeliveryData, plan: Plan, p: NoParams) -> Verdict:
    sim = simulate(d, plan)
    for s in d.stops:
        if s.close is not None and sim.start[s.id] > s.close:
            return False, f"service at {s.id} starts at minute {sim.start[s.id]}, after its window closes ({s.close})"
    return OK


@check("shift_end")
def _shift_end(d: DeliveryData, plan: Plan, p: NoParams) -> Verdict:
    sim = simulate(d, plan)
    for v in d.vehicles:
        if d.shift is not None and sim.back[v.id] > d.shift:
            return False, f"{v.id} is back at minute {sim.back[v.id]}, after the shift ends ({d.shift})"
    return OK


@check("stop_deadline")
def _stop_deadline(d: DeliveryData, plan: Plan, p: StopDeadline) -> Verdict:
    sim = simulate(d, plan)
    for s in p.stops:
        if sim.start[s] > p.by:
            return False, f"service at {s} starts at minute {sim.start[s]} (at the latest {p.by})"
    return OK


@check("max_stops")
def _max_stops(d: DeliveryData, plan: Plan, p: MaxStops) -> Verdict:
    sim = simulate(d, plan)
    for v in d.vehicles:
        if sim.count[v.id] > p.max:
            return False, f"{v.id} serves {sim.count[v.id]} stops (at most {p.max})"
    return OK


@check("first_stop")
def _first_stop(d: DeliveryData, plan: Plan, p: FirstStop) -> Verdict:
    v = simulate(d, plan).vehicle[p.stop]
    first = plan.routes[v][0]
    return OK if first == p.stop else (False, f"{v} serves {first} before {p.stop}, which must come first")


@check("pickup_delivery")
def _pickup_delivery(d: DeliveryData, plan: Plan, p: NoParams) -> Verdict:
    sim = simulate(d, plan)
    for a, b in d.pairs:
        if sim.vehicle[a] != sim.vehicle[b]:
            return False, f"pickup {a} is on {sim.vehicle[a]} but its delivery {b} on {sim.vehicle[b]}"
        route = plan.routes[sim.vehicle[a]]
        if route.index(a) > route.index(b):
            return False, f"delivery {b} comes before its pickup {a}"
    return OK


@check("precedence")
def _precedence(d: DeliveryData, plan: Plan, p: Precedence) -> Verdict:
    sim = simulate(d, plan)
    for a, b in p.pairs:
        if sim.start[b] <= sim.start[a]:
            return False, f"service at {b} (minute {sim.start[b]}) does not start after {a} (minute {sim.start[a]})"
    return OK


@check("same_vehicle")
def _same_vehicle(d: DeliveryData, plan: Plan, p: SameVehicle) -> Verdict:
    sim = simulate(d, plan)
    who = sorted({sim.vehicle[s] for s in p.stops})
    return OK if len(who) == 1 else (False, f"{', '.join(p.stops)} are served by {', '.join(who)}")


@check("different_vehicle")
def _different_vehicle(d: DeliveryData, plan: Plan, p: DifferentVehicle) -> Verdict:
    sim = simulate(d, plan)
    for a, b in p.pairs:
        if sim.vehicle[a] == sim.vehicle[b]:
            return False, f"{a} and {b} are both served by {sim.vehicle[a]}"
    return OK


@check("route_balance")
def _route_balance(d: DeliveryData, plan: Plan, p: RouteBalance) -> Verdict:
    count = simulate(d, plan).count
    return spread_verdict(count, p.max, "serves", "stops")


@check("battery_range")
def _battery_range(d: DeliveryData, plan: Plan, p: BatteryRange) -> Verdict:
    for v, driven in simulate(d, plan).trips:
        if driven > p.max:
            return False, f"a trip of {v} drives {driven} minutes (the battery allows {p.max})"
    return OK


@check("load_limit")
def _load_limit(d: DeliveryData, plan: Plan, p: LoadLimit) -> Verdict:
    sim = simulate(d, plan)
    if sim.onboard[p.stop] > p.max:
        return False, f"{sim.vehicle[p.stop]} arrives at {p.stop} with {sim.onboard[p.stop]} units (at most {p.max})"
    return OK


@check("vehicle_off")
def _vehicle_off(d: DeliveryData, plan: Plan, p: VehicleOff) -> Verdict:
    n = simulate(d, plan).count[p.vehicle]
    return OK if n == 0 else (False, f"{p.vehicle} is unavailable but serves {n} stops")


@check("delay_buffer")
def _delay_buffer(d: DeliveryData, plan: Plan, p: DelayBuffer) -> Verdict:
    sim = simulate(d, plan)
    for s in d.stops:
        if s.close is not None and sim.start[s.id] > s.close - p.minutes:
            return (
                False,
                f"service at {s.id} starts at minute {sim.start[s.id]}, less than {p.minutes} before {s.close}",
            )
    for v in d.vehicles:
        if d.shift is not None and sim.count[v.id] and sim.back[v.id] > d.shift - p.minutes:
            return False, f"{v.id} is back at minute {sim.back[v.id]}, less than {p.minutes} before the shift ends"
    return OK


# -- objective -------------------------------------------------------------------------
def objective_value(d: DeliveryData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    sim = simulate(d, plan)
    if term.kind == "travel":
        return sum(sim.travel.values())
    if term.kind == "arrival_sum":
        return sum(sim.start.values())
    if term.kind == "changes":
        old = as_model(tp, CurrentRoutes).existing
        return sum(1 for s in d.stops if (sim.vehicle[s.id], sim.before[s.id]) != tuple(old[s.id]))
    raise ValueError(f"unknown objective kind {term.kind!r}")


def valid_route(route: Sequence[str], reloads: int) -> bool:
    """Reloads sit between two stops, at most ``reloads`` of them."""
    marks = [k for k, x in enumerate(route) if x == RELOAD]
    if len(marks) > reloads:
        return False
    return all(0 < k < len(route) - 1 and route[k + 1] != RELOAD for k in marks)


def neighbours(d: DeliveryData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one stop (or reload) moved to another place of any
    route (a reload within its own route), or two stops swapped."""
    vehicles = [v.id for v in d.vehicles]
    for v in vehicles:
        route = plan.routes[v]
        for k, x in enumerate(route):
            rest = route[:k] + route[k + 1 :]
            targets = [v] if x == RELOAD else vehicles
            for w in targets:
                base = rest if w == v else plan.routes[w]
                for pos in range(len(base) + 1):
                    new = (*base[:pos], x, *base[pos:])
                    if w == v and new == route:
                        continue
                    routes = {**plan.routes, w: new} if w != v else {**plan.routes, v: new}
                    if w != v:
                        routes[v] = rest
                    if all(valid_route(routes[u], d.reloads) for u in (v, w)):
                        yield Plan(routes)
    where = {x: (v, k) for v in vehicles for k, x in enumerate(plan.routes[v]) if x != RELOAD}
    for a, b in itertools.combinations([s.id for s in d.stops], 2):
        (va, ka), (vb, kb) = where[a], where[b]
        routes = {**plan.routes}
        ra = list(routes[va])
        ra[ka] = b
        routes[va] = tuple(ra)
        rb = list(routes[vb])
        rb[kb] = a
        routes[vb] = tuple(rb)
        yield Plan(routes)


def route_json(route: Sequence[str]) -> list[str]:
    return list(route)


class Delivery(PlanChecker):
    family = "routing"
    task = TASK_ID
    plan_key = "routes"
    plan_text = (
        "a list of routes, each naming a listed vehicle at most once with the stops it serves in order (every stop "
        "exactly once over all routes; 'Depot' between two stops for a reload where reloads are allowed)"
    )
    data_type = DeliveryData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: DeliveryData) -> dict[str, Any]:
        return {"stop": lookup([s.id for s in d.stops]), "vehicle": lookup([v.id for v in d.vehicles])}

    def read_plan(
        self, d: DeliveryData, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Plan | None, str]:
        rows, why = owner_rows(section, "routes", "vehicle", "stops", lk["vehicle"], "route")
        if rows is None:
            return None, why
        routes: dict[str, tuple[str, ...]] = {}
        seen: set[str] = set()
        for k, v, stops in rows:
            route: list[str] = []
            for x in stops:
                if not isinstance(x, str):
                    return None, f"route {k + 1} has a stop that is not a string"
                if x.strip().lower() == RELOAD.lower():
                    route.append(RELOAD)
                    continue
                s = lk["stop"].find(x)
                if s is None:
                    return None, f"route {k + 1} names unknown stop {x[:40]!r}"
                if s in seen:
                    return None, f"stop {s} is served more than once"
                seen.add(s)
                route.append(s)
            if not valid_route(route, d.reloads):
                if d.reloads == 0:
                    return None, f"route {k + 1} names 'Depot' but no reloads are allowed"
                return None, (
                    f"route {k + 1}: a reload ('Depot') must sit between two stops, at most {d.reloads} per vehicle"
                )
            routes[v] = tuple(route)
        missing = [s.id for s in d.stops if s.id not in seen]
        if missing:
            return None, f"stops missing from the routes: {', '.join(missing)}"
        return Plan({v.id: routes.get(v.id, ()) for v in d.vehicles}), "complete plan"

    def objective_value(self, d: DeliveryData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: DeliveryData, plan: Plan) -> dict[str, dict[str, int]]:
        sim = simulate(d, plan)
        return {"travel": dict(sim.travel), "back": dict(sim.back)}

    def existing(self, d: DeliveryData, plan: Plan) -> dict[str, list[str]]:
        sim = simulate(d, plan)
        return {s.id: [sim.vehicle[s.id], sim.before[s.id]] for s in d.stops}

    def plan_schema(self, d: DeliveryData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        names = [s.id for s in d.stops] + ([RELOAD] if d.reloads else [])
        row = {
            "type": "object",
            "properties": {
                "vehicle": {"enum": [v.id for v in d.vehicles]},
                "stops": {"type": "array", "items": {"enum": names}, "description": "in the order served"},
            },
            "required": ["vehicle", "stops"],
        }
        return {"type": "array", "items": row, "description": "one route per vehicle used; every stop exactly once"}

    def verification_schema(self, d: DeliveryData) -> dict[str, Any]:
        vehicles = [v.id for v in d.vehicles]
        return figures_schema({
            "travel": (vehicles, "for each vehicle, its travel minutes (0 if unused)"),
            "back": (vehicles, "for each vehicle, the minute it is back at the depot for good (0 if unused)"),
        })  # fmt: skip

    def plan_json(self, d: DeliveryData, plan: Plan) -> list[dict[str, Any]]:
        return [{"vehicle": v.id, "stops": route_json(plan.routes[v.id])} for v in d.vehicles if plan.routes[v.id]]

    def neighbours(self, data: DeliveryData, plan: Plan) -> Iterator[Plan]:
        return neighbours(data, plan)

    def baseline_plan(self, d: DeliveryData, instance: Instance) -> Plan:
        """Nearest neighbour: each vehicle in turn drives to the nearest unserved stop that
        still fits its capacity, until none fits; leftover stops go to the last vehicle.
        Blind to windows, shifts and the other rules."""
        left = [s.id for s in d.stops]
        routes: dict[str, tuple[str, ...]] = {v.id: () for v in d.vehicles}
        share = -(-len(left) // len(d.vehicles))
        for v in d.vehicles:
            at, load = 0, 0
            route: list[str] = []
            while left and len(route) < share:
                fits = [s for s in left if v.capacity is None or d.pickups or load + d.stop_by_id[s].load <= v.capacity]
                if not fits:
                    break
                nxt = min(fits, key=lambda s: (d.minutes[at][d.index[s]], d.index[s]))
                route.append(nxt)
                left.remove(nxt)
                load += d.stop_by_id[nxt].load
                at = d.index[nxt]
            routes[v.id] = tuple(route)
        last = d.vehicles[-1].id
        routes[last] = routes[last] + tuple(left)
        return Plan(routes)


TASK = Delivery()
