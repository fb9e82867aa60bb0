"""Checks for Disaster Evacuation Planning answers: every group of people (a unit, never
split) takes one of its listed routes to a shelter, leaving in one period.

Time runs in periods of ``period_minutes`` minutes, numbered 1, 2, ... A group that
departs in period p is on its route from the start of p; an event c minutes after its
departure falls in period p + floor(c / period_minutes). So it enters the k-th road of
its route in period p + floor(minutes driven before that road / period_minutes) and
arrives in period p + floor(route minutes / period_minutes); a group sheltering in place
(a route of one place, no road) arrives in the period it departs. Per road and period,
the people entering the road (both directions together) must not exceed its capacity.

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. Every figure is recomputed from the plan in plain Python integers, over the
:class:`~pbsolve.network_kit.RoadNetwork` the model was built from.
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import OK, PlanChecker, lookup, spread_verdict
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.network_kit import RoadNetwork
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, listed, parse
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "disaster_evacuation_planning"
DEPART_WEIGHT = 10  # the order score weighs a group's departure period by 10 and its route number by 1


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Group(_Frozen):
    """People who evacuate together from one place (never split)."""

    id: str
    name: str
    kind: str = Field(description="residents, care home, school, hospital ward, stand ...")
    place: str
    people: PositiveInt
    due: PositiveInt = Field(description="period by which the group should have arrived; later counts as late")
    weight: PositiveInt = Field(description="lateness weight per period late")
    priority: PositiveInt = Field(description="priority points: the order score weighs the group's choice by them")
    wheelchair: bool = Field(default=False, description="needs an accessible shelter")
    escort: bool = Field(default=False, description="travels only with an escort team")


class Shelter(_Frozen):
    id: str
    name: str
    place: str
    capacity: PositiveInt = Field(description="people it can hold")
    accessible: bool = False
    in_place: bool = Field(default=False, description="a sealed room at a group's own building (shelter in place)")


class Route(_Frozen):
    """A path of places from a group's place to a shelter's place (one place: stay)."""

    id: str
    group: str
    shelter: str
    places: tuple[str, ...]


class Exit(_Frozen):
    """A departure point whose exits let at most ``capacity`` people leave per period."""

    place: str
    capacity: PositiveInt


Ends = frozenset[str]


@dataclass(frozen=True)
class Leg:
    ends: Ends
    offset: int  # periods after departure at which the road is entered


def road_name(ends: Ends | tuple[str, str] | list[str], network: RoadNetwork | None = None) -> str:
    """'A–B' in the network's place order (either order without a network)."""
    a, b = sorted(ends, key=(network.places.index if network is not None else str))
    return f"{a}–{b}"


class EvacData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    network: RoadNetwork
    period_minutes: PositiveInt
    periods: PositiveInt = Field(description="departure periods 1..periods")
    groups: tuple[Group, ...]
    shelters: tuple[Shelter, ...]
    routes: tuple[Route, ...]
    exits: tuple[Exit, ...] = ()
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _well_formed(self) -> EvacData:
        """Malformed instance data is a clear error: unknown names, duplicate ids, a route
        that does not start at its group's place, end at its shelter's or follow roads."""
        places = set(self.network.places)
        for what, ids in (
            ("group", [g.id for g in self.groups]),
            ("shelter", [s.id for s in self.shelters]),
            ("route", [r.id for r in self.routes]),
        ):
            if len(set(ids)) != len(ids):
                raise ValueError(f"{what} ids must be distinct")
        groups = {g.id: g for g in self.groups}
        shelters = {s.id: s for s in self.shelters}
        for place in [
            *(g.place for g in self.groups),
            *(s.place for s in self.shelters),
            *(e.place for e in self.exits),
        ]:
            if place not in places:
                raise ValueError(f"{place!r} is not a place of the network")
        for road in self.network.roads:
            if road.capacity is None:
                raise ValueError(f"road {road.a}-{road.b} has no capacity (people per period)")
        roads = {frozenset((r.a, r.b)) for r in self.network.roads}
        for r in self.routes:
            if r.group not in groups or r.shelter not in shelters:
                raise ValueError(f"route {r.id} names an unknown group or shelter")
            if not r.places or r.places[0] != groups[r.group].place or r.places[-1] != shelters[r.shelter].place:
                raise ValueError(f"route {r.id} must run from its group's place to its shelter's place")
            for a, b in itertools.pairwise(r.places):
                if frozenset((a, b)) not in roads:
                    raise ValueError(f"route {r.id}: there is no road from {a} to {b}")
        routed = {r.group for r in self.routes}
        for g in self.groups:
            if g.id not in routed:
                raise ValueError(f"group {g.id} has no route")
        return self

    @cached_property
    def group_by_id(self) -> dict[str, Group]:
        return {g.id: g for g in self.groups}

    @cached_property
    def shelter_by_id(self) -> dict[str, Shelter]:
        return {s.id: s for s in self.shelters}

    @cached_property
    def route_by_id(self) -> dict[str, Route]:
        return {r.id: r for r in self.routes}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {
            "group": self.group_by_id,
            "shelter": self.shelter_by_id,
            "route": self.route_by_id,
            "place": self.network.places,
        }
        return names[what]

    @cached_property
    def routes_of(self) -> dict[str, tuple[Route, ...]]:
        return {g.id: tuple(r for r in self.routes if r.group == g.id) for g in self.groups}

    @cached_property
    def route_number(self) -> dict[str, int]:
        """Route id -> its position in its group's list, from 1 (the order score reads it)."""
        return {r.id: k for rs in self.routes_of.values() for k, r in enumerate(rs, 1)}

    @cached_property
    def minutes(self) -> dict[str, int]:
        """Route id -> its travel minutes (the network's :meth:`~pbsolve.network_kit.RoadNetwork.path_minutes`)."""
        return {r.id: self.network.path_minutes(r.places) for r in self.routes}

    @cached_property
    def legs(self) -> dict[str, tuple[Leg, ...]]:
        """Route id -> its roads in order, each with the period offset at which it is entered."""
        road_minutes = {frozenset((r.a, r.b)): r.minutes for r in self.network.roads}
        out = {}
        for r in self.routes:
            legs, driven = [], 0
            for a, b in itertools.pairwise(r.places):
                ends = frozenset((a, b))
                legs.append(Leg(ends, driven // self.period_minutes))
                driven += road_minutes[ends]
            out[r.id] = tuple(legs)
        return out

    @cached_property
    def travel(self) -> dict[str, int]:
        """Route id -> periods from departure to arrival (floor of minutes / period length)."""
        return {rid: m // self.period_minutes for rid, m in self.minutes.items()}

    @cached_property
    def capacity(self) -> dict[Ends, int]:
        return {r.ends: int(r.capacity or 0) for r in self.network.roads}

    @cached_property
    def exit_capacity(self) -> dict[str, int]:
        return {e.place: e.capacity for e in self.exits}

    @cached_property
    def road_lookup(self) -> dict[str, Ends]:
        return {road_name(r.ends, self.network): r.ends for r in self.network.roads}


def replaced(d: EvacData, **changes: Any) -> EvacData:
    """``d`` with fields replaced, as a new object (``model_copy`` would keep cached lookups)."""
    return EvacData.model_validate({**{f: getattr(d, f) for f in EvacData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
GroupName = Annotated[str, Names("group")]
ShelterName = Annotated[str, Names("shelter")]
RouteName = Annotated[str, Names("route")]
PlaceName = Annotated[str, Names("place")]


class Deadline(Params):
    """Each named group arrives at its shelter in period ``period`` or earlier."""

    groups: list[GroupName]
    period: PositiveInt


class RoadClosure(Params):
    """No group enters the road (its two ends) in period ``period`` or later."""

    road: tuple[PlaceName, PlaceName]
    period: PositiveInt

    def data_problems(self, data: Any) -> list[str]:
        """Two known places with no road between them close nothing: the rule would hold
        for every plan."""
        found = super().data_problems(data)
        if not found and frozenset(self.road) not in data.capacity:
            found.append(f"there is no road between {self.road[0]!r} and {self.road[1]!r}")
        return found


class NotBefore(Params):
    """The group departs in period ``period`` or later (a delayed group)."""

    group: GroupName
    period: PositiveInt


class VulnerableFirst(Params):
    """No group outside ``groups`` departs in an earlier period than any group in ``groups``."""

    groups: list[GroupName]


class SameShelter(Params):
    """The named groups all go to one shelter."""

    groups: list[GroupName]


class ShelterBalance(Params):
    """The people in any two shelters (empty ones count) differ by at most ``max``."""

    max: NonNegativeInt


class MaxTravel(Params):
    """Each named group's route takes at most ``minutes`` minutes."""

    groups: list[GroupName]
    minutes: PositiveInt


class EscortTeams(Params):
    """At most ``teams`` escort teams: each escorted group departing in period p on a route
    of a travel periods keeps one team busy in periods p .. p + 2a (out and back)."""

    teams: PositiveInt


class StagedOpening(Params):
    """The shelter holds at most ``beds`` people who arrive before period ``period``."""

    shelter: ShelterName
    period: PositiveInt
    beds: NonNegativeInt


class CurrentPlan(Params):
    """The current plan a ``changes`` term counts against: group -> (route, departure period)."""

    existing: dict[GroupName, tuple[RouteName, int]]

    def data_problems(self, data: Any) -> list[str]:
        """The checker compares every group with its current route and departure, and the
        model reads the current choice among the group's own routes and periods."""
        found = super().data_problems(data)
        if found:
            return found
        missing = [g.id for g in data.groups if g.id not in self.existing]
        if missing:
            found += [f"the current plan gives no route and departure for group {listed(missing)}"]
        foreign = [g for g, (r, _) in self.existing.items() if data.route_by_id[r].group != g]
        if foreign:
            found += [f"the current plan gives group {listed(foreign)} a route of another group"]
        late = [g for g, (_, t) in self.existing.items() if not 1 <= t <= data.periods]
        if late:
            found += [f"the current plan departs group {listed(late)} outside periods 1..{data.periods}"]
        return found


RULE_PARAMS: ParamsTable = {
    "road_capacity": NoParams,
    "shelter_capacity": NoParams,
    "accessible_shelter": NoParams,
    "exit_capacity": NoParams,
    "deadline": Deadline,
    "road_closure": RoadClosure,
    "not_before": NotBefore,
    "vulnerable_first": VulnerableFirst,
    "same_shelter": SameShelter,
    "shelter_balance": ShelterBalance,
    "max_travel": MaxTravel,
    "escort_teams": EscortTeams,
    "staged_opening": StagedOpening,
    "backup_route": NoParams,
}
TERM_PARAMS: ParamsTable = {
    "lateness": NoParams,
    "evacuation_time": NoParams,
    "travel_minutes": NoParams,
    "order_score": NoParams,
    "backup_score": NoParams,
    "changes": CurrentPlan,
}


def current_plan(changes: ObjectiveTerm) -> dict[str, tuple[str, int]]:
    """The current plan of a ``changes`` term (group -> (route, departure period))."""
    return as_model(parse(TERM_PARAMS, changes), CurrentPlan).existing


# -- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    assign: dict[str, tuple[str, int]]  # group -> (route, departure period)
    backup: dict[str, str] | None = None  # group -> backup route (robustness only)


def shelter_of(d: EvacData, plan: Plan, g: str) -> str:
    return d.route_by_id[plan.assign[g][0]].shelter


def arrival(d: EvacData, plan: Plan, g: str) -> int:
    route, depart = plan.assign[g]
    return depart + d.travel[route]


def shelter_people(d: EvacData, assign: dict[str, tuple[str, int]]) -> dict[str, int]:
    """Shelter id -> people it receives, for every shelter."""
    out = {s.id: 0 for s in d.shelters}
    for g in d.groups:
        out[d.route_by_id[assign[g.id][0]].shelter] += g.people
    return out


def road_entries(d: EvacData, assign: dict[str, tuple[str, int]]) -> dict[tuple[Ends, int], int]:
    """(road, period) -> people entering it then, for every road and period someone enters."""
    out: dict[tuple[Ends, int], int] = {}
    people = d.group_by_id
    for gid, (route, depart) in assign.items():
        for leg in d.legs[route]:
            key = (leg.ends, depart + leg.offset)
            out[key] = out.get(key, 0) + people[gid].people
    return out


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
def _roads_within(d: EvacData, assign: dict[str, tuple[str, int]]) -> Verdict:
    for (ends, t), people in sorted(road_entries(d, assign).items(), key=lambda kv: (kv[0][1], sorted(kv[0][0]))):
        if people > d.capacity[ends]:
            return False, (
                f"{people} people enter road {road_name(ends, d.network)} in period {t} (capacity {d.capacity[ends]})"
            )
    return OK


@check("road_capacity")
def _road_capacity(d: EvacData, plan: Plan, p: NoParams) -> Verdict:
    return _roads_within(d, plan.assign)


@check("shelter_capacity")
def _shelter_capacity(d: EvacData, plan: Plan, p: NoParams) -> Verdict:
    for sid, people in shelter_people(d, plan.assign).items():
        if people > d.shelter_by_id[sid].capacity:
            return False, f"{people} people go to {sid} (capacity {d.shelter_by_id[sid].capacity})"
    return OK


@check("accessible_shelter")
def _accessible_shelter(d: EvacData, plan: Plan, p: NoParams) -> Verdict:
    for g in d.groups:
        s = shelter_of(d, plan, g.id)
        if g.wheelchair and not d.shelter_by_id[s].accessible:
            return False, f"{g.id} includes wheelchair users but goes to {s}, which is not accessible"
    return OK


@check("exit_capacity")
def _exit_capacity(d: EvacData, plan: Plan, p: NoParams) -> Verdict:
    leaving: dict[tuple[str, int], int] = {}
    for g in d.groups:
        key = (g.place, plan.assign[g.id][1])
        leaving[key] = leaving.get(key, 0) + g.people
    for (place, t), people in sorted(leaving.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        cap = d.exit_capacity.get(place)
        if cap is not None and people > cap:
            return False, f"{people} people leave {place} in period {t} (its exits let {cap} out per period)"
    return OK


@check("deadline")
def _deadline(d: EvacData, plan: Plan, p: Deadline) -> Verdict:
    for g in p.groups:
        if arrival(d, plan, g) > p.period:
            return False, f"{g} arrives in period {arrival(d, plan, g)}, after period {p.period}"
    return OK


@check("road_closure")
def _road_closure(d: EvacData, plan: Plan, p: RoadClosure) -> Verdict:
    closed = frozenset(p.road)
    for g in d.groups:
        route, depart = plan.assign[g.id]
        for leg in d.legs[route]:
            if leg.ends == closed and depart + leg.offset >= p.period:
                return False, (
                    f"{g.id} enters the closed road {road_name(closed, d.network)} in period {depart + leg.offset}"
                )
    return OK


@check("not_before")
def _not_before(d: EvacData, plan: Plan, p: NotBefore) -> Verdict:
    depart = plan.assign[p.group][1]
    return OK if depart >= p.period else (False, f"{p.group} departs in period {depart}, before period {p.period}")


@check("vulnerable_first")
def _vulnerable_first(d: EvacData, plan: Plan, p: VulnerableFirst) -> Verdict:
    named = set(p.groups)
    for a in p.groups:
        for b in d.groups:
            if b.id not in named and plan.assign[b.id][1] < plan.assign[a][1]:
                return False, (
                    f"{b.id} departs in period {plan.assign[b.id][1]}, before {a} (period {plan.assign[a][1]})"
                )
    return OK


@check("same_shelter")
def _same_shelter(d: EvacData, plan: Plan, p: SameShelter) -> Verdict:
    where = sorted({shelter_of(d, plan, g) for g in p.groups})
    return OK if len(where) == 1 else (False, f"{', '.join(p.groups)} go to {', '.join(where)}")


@check("shelter_balance")
def _shelter_balance(d: EvacData, plan: Plan, p: ShelterBalance) -> Verdict:
    people = shelter_people(d, plan.assign)
    return spread_verdict(people, p.max, "receives", "people")


@check("max_travel")
def _max_travel(d: EvacData, plan: Plan, p: MaxTravel) -> Verdict:
    for g in p.groups:
        route = plan.assign[g][0]
        if d.minutes[route] > p.minutes:
            return False, f"{g}'s route {route} takes {d.minutes[route]} minutes (at most {p.minutes})"
    return OK


def busy(d: EvacData, route: str, depart: int) -> range:
    """Periods an escort team is busy with a group: out and back."""
    return range(depart, depart + 2 * d.travel[route] + 1)


@check("escort_teams")
def _escort_teams(d: EvacData, plan: Plan, p: EscortTeams) -> Verdict:
    """Walks the periods counting the teams out with escorted groups."""
    out: dict[int, list[str]] = {}
    for g in d.groups:
        if g.escort:
            for t in busy(d, *plan.assign[g.id]):
                out.setdefault(t, []).append(g.id)
    for t in sorted(out):
        if len(out[t]) > p.teams:
            return False, f"in period {t} {len(out[t])} escort teams are needed ({', '.join(out[t])}); {p.teams} exist"
    return OK


@check("staged_opening")
def _staged_opening(d: EvacData, plan: Plan, p: StagedOpening) -> Verdict:
    early = sum(
        g.people for g in d.groups if shelter_of(d, plan, g.id) == p.shelter and arrival(d, plan, g.id) < p.period
    )
    if early > p.beds:
        return False, f"{early} people arrive at {p.shelter} before period {p.period} (only {p.beds} beds open)"
    return OK


def shares_road(d: EvacData, a: str, b: str) -> bool:
    return bool({leg.ends for leg in d.legs[a]} & {leg.ends for leg in d.legs[b]})


@check("backup_route")
def _backup_route(d: EvacData, plan: Plan, p: NoParams) -> Verdict:
    """Simulates no road failing and each road failing on its own: the groups whose route
    uses the failed road take their backups (same departure period), and every shelter's
    capacity must hold in each case."""
    backup = plan.backup or {}
    for g in d.groups:
        b, (route, _) = backup.get(g.id), plan.assign[g.id]
        if b is None:
            return False, f"{g.id} names no backup route"
        if d.route_by_id[b].group != g.id:
            return False, f"{g.id}'s backup {b} is not one of its routes"
        if b == route or shares_road(d, b, route):
            return False, f"{g.id}'s backup {b} shares a road with its route {route}"
        if g.wheelchair and not d.shelter_by_id[d.route_by_id[b].shelter].accessible:
            return False, f"{g.id}'s backup {b} leads to a shelter that is not accessible"
    for sid, people in shelter_people(d, plan.assign).items():  # no road failed (as when an unused one fails)
        if people > d.shelter_by_id[sid].capacity:
            return (
                False,
                f"with no road failed, {sid} would receive {people} people (capacity {d.shelter_by_id[sid].capacity})",
            )
    for r in d.network.roads:
        hit = [g.id for g in d.groups if any(leg.ends == r.ends for leg in d.legs[plan.assign[g.id][0]])]
        if not hit:
            continue
        moved = {g: ((backup[g], dep) if g in hit else (rt, dep)) for g, (rt, dep) in plan.assign.items()}
        for sid, people in shelter_people(d, moved).items():
            if people > d.shelter_by_id[sid].capacity:
                return False, (
                    f"if road {road_name(r.ends, d.network)} failed, {sid} would receive {people} people "
                    f"(capacity {d.shelter_by_id[sid].capacity})"
                )
    return OK


# -- objective -------------------------------------------------------------------------
def lateness(d: EvacData, g: Group, arrives: int) -> int:
    return g.weight * max(0, arrives - g.due)


def objective_value(d: EvacData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "lateness":
        return sum(lateness(d, g, arrival(d, plan, g.id)) for g in d.groups)
    if kind == "evacuation_time":
        return sum(g.people * arrival(d, plan, g.id) for g in d.groups)
    if kind == "travel_minutes":
        return sum(g.people * d.minutes[plan.assign[g.id][0]] for g in d.groups)
    if kind == "order_score":
        total = 0
        for g in d.groups:
            route, depart = plan.assign[g.id]
            total += g.priority * (DEPART_WEIGHT * depart + d.route_number[route])
        return total
    if kind == "backup_score":
        return sum(g.priority * d.route_number[(plan.backup or {})[g.id]] for g in d.groups)
    if kind == "changes":
        old = as_model(tp, CurrentPlan).existing
        return sum(1 for g in d.groups if tuple(plan.assign[g.id]) != tuple(old[g.id]))
    raise ValueError(f"unknown objective kind {term.kind!r}")


def neighbours(d: EvacData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one group's route or departure changed, one backup
    changed, or two groups' departures swapped."""
    for g in d.groups:
        route, depart = plan.assign[g.id]
        for r in d.routes_of[g.id]:
            if r.id != route:
                yield Plan({**plan.assign, g.id: (r.id, depart)}, plan.backup)
        for t in range(1, d.periods + 1):
            if t != depart:
                yield Plan({**plan.assign, g.id: (route, t)}, plan.backup)
        if plan.backup is not None:
            for r in d.routes_of[g.id]:
                if r.id != plan.backup[g.id]:
                    yield Plan(plan.assign, {**plan.backup, g.id: r.id})
    for a, b in itertools.combinations([g.id for g in d.groups], 2):
        (ra, ta), (rb, tb) = plan.assign[a], plan.assign[b]
        if ta != tb:
            yield Plan({**plan.assign, a: (ra, tb), b: (rb, ta)}, plan.backup)


def _period(value: Any, d: EvacData) -> int | None:
    """A departure period from an answer: an integer (or integral float) in 1..periods."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    t = int(value)
    return t if 1 <= t <= d.periods else None


class Evacuation(PlanChecker):
    family = "emergency"
    task = TASK_ID
    plan_key = "evacuation"
    plan_text = (
        "a list naming every group exactly once with one of its listed routes and a departure period "
        "(and a backup route where the rules ask for one)"
    )
    data_type = EvacData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: EvacData) -> dict[str, Any]:
        return {"group": lookup([g.id for g in d.groups]), "route": lookup([r.id for r in d.routes])}

    def read_plan(self, d: EvacData, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Plan | None, str]:
        rows = section.get("evacuation") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'evacuation' is missing or not a list"
        need_backup = any(r.kind == "backup_route" for r in rules)
        assign: dict[str, tuple[str, int]] = {}
        backup: dict[str, str] = {}
        for k, row in enumerate(rows):
            if not isinstance(row, dict):
                return None, f"row {k + 1} is not an object"
            gname, rname = row.get("group"), row.get("route")
            if not isinstance(gname, str) or not isinstance(rname, str):
                return None, f"row {k + 1} needs string fields 'group' and 'route'"
            g = lk["group"].find(gname)
            if g is None:
                return None, f"row {k + 1} names unknown group {gname[:40]!r}"
            route = lk["route"].find(rname)
            if route is None:
                return None, f"row {k + 1} names unknown route {rname[:40]!r}"
            if d.route_by_id[route].group != g:
                return None, f"route {route} is not one of {g}'s routes"
            depart = _period(row.get("depart"), d)
            if depart is None:
                return None, f"row {k + 1} ({g}) needs 'depart', a period from 1 to {d.periods}"
            if g in assign:
                return None, f"group {g} appears more than once"
            assign[g] = (route, depart)
            if need_backup:
                b = row.get("backup")
                b_id = lk["route"].find(b) if isinstance(b, str) else None
                if b_id is None or d.route_by_id[b_id].group != g:
                    return None, f"group {g} needs a 'backup' route from its own route list"
                backup[g] = b_id
        missing = [g.id for g in d.groups if g.id not in assign]
        if missing:
            return None, f"groups missing from the plan: {', '.join(missing)}"
        return Plan(assign, backup if need_backup else None), "complete plan"

    def objective_value(self, d: EvacData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: EvacData, plan: Plan) -> dict[str, dict[str, int]]:
        return {
            "shelter_people": shelter_people(d, plan.assign),
            "arrival": {g.id: arrival(d, plan, g.id) for g in d.groups},
        }

    def existing(self, d: EvacData, plan: Plan) -> dict[str, list[Any]]:
        return {g.id: list(plan.assign[g.id]) for g in d.groups}

    def plan_schema(self, d: EvacData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        routes = [r.id for r in d.routes]
        props: dict[str, Any] = {
            "group": {"enum": [g.id for g in d.groups]},
            "route": {"enum": routes, "description": "one of the group's own routes"},
            "depart": {"type": "integer", "minimum": 1, "maximum": d.periods, "description": "departure period"},
        }
        if any(r.kind == "backup_route" for r in rules):
            props["backup"] = {"enum": routes, "description": "the group's backup route if a road of its route fails"}
        row = {"type": "object", "properties": props, "required": list(props)}
        return {"type": "array", "items": row, "description": "every group exactly once"}

    def verification_schema(self, d: EvacData) -> dict[str, Any]:
        return figures_schema({
            "shelter_people": ([s.id for s in d.shelters], "for each shelter, the people it receives"),
            "arrival": ([g.id for g in d.groups], "for each group, its arrival period"),
        })  # fmt: skip

    def plan_json(self, d: EvacData, plan: Plan) -> list[dict[str, Any]]:
        rows = []
        for g in d.groups:
            route, depart = plan.assign[g.id]
            row: dict[str, Any] = {"group": g.id, "route": route, "depart": depart}
            if plan.backup is not None:
                row["backup"] = plan.backup[g.id]
            rows.append(row)
        return rows

    def neighbours(self, data: EvacData, plan: Plan) -> Iterator[Plan]:
        """One move from ``plan`` (see :func:`neighbours`), for the kit's near misses."""
        return neighbours(data, plan)

    def baseline_plan(self, d: EvacData, instance: Instance) -> Plan:
        """Group by group in listed order: its fastest route to a shelter with room left,
        departing in the first period whose roads still have room; backups: the first
        other route sharing no road. Greedy and blind to deadlines, teams and the order
        of the objective."""
        assign: dict[str, tuple[str, int]] = {}
        room = {s.id: s.capacity for s in d.shelters}
        for g in d.groups:
            options = sorted(d.routes_of[g.id], key=lambda r: (d.minutes[r.id], d.route_number[r.id]))
            choice = None
            for r in options:
                if room[r.shelter] < g.people:
                    continue
                for t in range(1, d.periods + 1):
                    trial = {**assign, g.id: (r.id, t)}
                    entries = road_entries(d, trial)
                    if all(v <= d.capacity[e] for (e, _), v in entries.items()):
                        choice = (r.id, t)
                        break
                if choice:
                    break
            choice = choice or (options[0].id, 1)
            room[d.route_by_id[choice[0]].shelter] -= g.people
            assign[g.id] = choice
        backup = None
        if any(r.kind == "backup_route" for r in instance.rules):
            backup = {
                g.id: next(
                    (
                        r.id
                        for r in d.routes_of[g.id]
                        if r.id != assign[g.id][0] and not shares_road(d, r.id, assign[g.id][0])
                    ),
                    d.routes_of[g.id][0].id,
                )
                for g in d.groups
            }
        return Plan(assign, backup)


TASK = Evacuation()
