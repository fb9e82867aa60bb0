"""Checks for Emergency Planning answers: response teams and materials sent to concurrent
incidents in two alert waves over a road network.

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. Travel minutes are the shortest minutes of the instance's own road network
(:class:`pbsolve.network_kit.RoadNetwork`, closed roads removed), computed here with
networkx; every figure is recomputed from the plan in plain Python integers.

Teams of one role at one base are interchangeable: no rule or figure tells them apart,
so an answer may name any of them (the certificate's uniqueness is judged up to that
relabelling, see the model).
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve import params
from pbsolve.checker_kit import OK, PerData, PlanChecker, lookup, spread_verdict
from pbsolve.checking import Check, figures_schema, norm
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.network_kit import RoadNetwork
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "emergency_planning"
WAVES = (1, 2)


# -- data ------------------------------------------------------------------------------
IncidentName = Annotated[str, Names("incident")]
BaseName = Annotated[str, Names("base")]
RoleName = Annotated[str, Names("role")]
PlaceName = Annotated[str, Names("place")]
SeverityName = Annotated[str, Names("severity")]
TeamName = Annotated[str, Names("team")]
DepotName = Annotated[str, Names("depot")]
MaterialName = Annotated[str, Names("material")]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Team(_Frozen):
    """One response team; teams of one role at one base are interchangeable."""

    id: str
    role: str
    base: str = Field(description="the place the team leaves from (in every wave)")
    cost: PositiveInt = Field(description="running cost per minute of travel (the same for its role at its base)")


class Depot(_Frozen):
    id: str = Field(description="a place of the network")
    stock: dict[str, NonNegativeInt] = Field(description="units held of each material (over both waves)")
    price: dict[str, NonNegativeInt] = Field(description="price per unit of each material it holds")
    haul: PositiveInt = Field(description="haulage cost per unit per minute from this depot")


class Severity(_Frozen):
    id: str
    deadline: PositiveInt = Field(description="minutes from the alert by which the response should be complete")
    weight: PositiveInt = Field(description="lateness weight per minute late")


class Incident(_Frozen):
    id: str
    name: str
    site: PlaceName = Field(description="a place of the network")
    wave: int = Field(ge=1, le=2)
    severity: SeverityName
    needs: dict[RoleName, PositiveInt] = Field(description="role -> number of teams of that role")
    materials: dict[MaterialName, PositiveInt] = Field(default_factory=dict, description="material -> units needed")
    duration: PositiveInt = Field(description="minutes the teams work on scene")
    casualties: dict[str, NonNegativeInt] = Field(default_factory=dict, description="triage class -> casualties")


class ResponseData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    network: RoadNetwork
    closed: tuple[tuple[str, str], ...] = Field(default=(), description="roads closed (exclusion zone)")
    alerts: tuple[NonNegativeInt, NonNegativeInt] = Field(description="clock minute of each wave's alert")
    severities: tuple[Severity, ...]
    teams: tuple[Team, ...]
    depots: tuple[Depot, ...]
    incidents: tuple[Incident, ...]
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> ResponseData:
        places = set(self.network.places)
        sev = {s.id for s in self.severities}
        if self.alerts[0] >= self.alerts[1]:
            raise ValueError("the second wave's alert must come after the first")
        for t in self.teams:
            if t.base not in places:
                raise ValueError(f"team {t.id}'s base {t.base} is not a place of the network")
        roles = {t.role for t in self.teams}
        for a in self.teams:
            for b in self.teams:
                if (a.role, a.base) == (b.role, b.base) and a.cost != b.cost:
                    raise ValueError(f"teams {a.id} and {b.id} (one role at one base) must have one running cost")
        for dp in self.depots:
            if dp.id not in places:
                raise ValueError(f"depot {dp.id} is not a place of the network")
            if set(dp.stock) != set(dp.price):
                raise ValueError(f"depot {dp.id} must price exactly the materials it stocks")
        for i in self.incidents:
            if i.site not in places:
                raise ValueError(f"incident {i.id}'s site {i.site} is not a place of the network")
            if i.severity not in sev:
                raise ValueError(f"incident {i.id} has unknown severity {i.severity}")
            if not set(i.needs) <= roles:
                raise ValueError(f"incident {i.id} needs a role no team has")
        for ra, rb in self.closed:
            if self.network.road(ra, rb) is None:
                raise ValueError(f"closed road {ra}-{rb} is not a road of the network")
        if self.open_network is None:
            raise ValueError("closing the listed roads cuts the network")
        ids = [t.id for t in self.teams] + [i.id for i in self.incidents]
        if len(set(ids)) != len(ids) or len({x.id for x in self.depots}) != len(self.depots):
            raise ValueError("team, incident and depot ids must be distinct")
        return self

    @cached_property
    def open_network(self) -> RoadNetwork | None:
        """The network without its closed roads (None when closing them cuts it)."""
        if not self.closed:
            return self.network
        return self.network.without(frozenset(r) for r in self.closed)

    @cached_property
    def minutes(self) -> dict[str, dict[str, int]]:
        """Shortest travel minutes over the open roads."""
        net = self.open_network
        assert net is not None
        return net.minutes

    @cached_property
    def team_minutes(self) -> dict[str, dict[str, int]]:
        """Team id -> place -> its travel minutes there from its base (what :meth:`travel` reads)."""
        minutes = self.minutes
        return {t.id: minutes[t.base] for t in self.teams}

    @cached_property
    def severity_by_id(self) -> dict[str, Severity]:
        return {s.id: s for s in self.severities}

    @cached_property
    def team_by_id(self) -> dict[str, Team]:
        return {t.id: t for t in self.teams}

    @cached_property
    def depot_by_id(self) -> dict[str, Depot]:
        return {d.id: d for d in self.depots}

    @cached_property
    def team_position(self) -> dict[str, int]:
        """Team id -> its place in the team list (plans list teams in this order)."""
        return {t.id: k for k, t in enumerate(self.teams)}

    def teams_order(self, team: str) -> int:
        return self.team_position[team]

    @cached_property
    def bases(self) -> tuple[str, ...]:
        """Bases in the order their first team is listed."""
        return tuple(dict.fromkeys(t.base for t in self.teams))

    @cached_property
    def roles(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.role for t in self.teams))

    @cached_property
    def materials(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m for d in self.depots for m in d.stock))

    @cached_property
    def incident_by_id(self) -> dict[str, Incident]:
        return {i.id: i for i in self.incidents}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``).
        Incidents are the data's; the grader adds those of the ``new_incident`` rules read
        beside a rule (``Params.adds``: the recovery scenario's are known to its rules)."""
        names: dict[str, Container[str]] = {
            "incident": self.incident_by_id,
            "base": frozenset(self.bases),
            "role": frozenset(self.roles),
            "severity": self.severity_by_id,
            "team": self.team_by_id,
            "depot": self.depot_by_id,
            "material": frozenset(self.materials),
            "place": frozenset(self.network.places),
        }
        return names[what]

    def deadline(self, i: Incident) -> int:
        return self.severity_by_id[i.severity].deadline

    def travel(self, team: str, i: Incident) -> int:
        return self.team_minutes[team][i.site]


def replaced(d: ResponseData, **changes: Any) -> ResponseData:
    """``d`` with fields replaced, as a new object (``model_copy`` would keep cached lookups)."""
    return ResponseData.model_validate({**{f: getattr(d, f) for f in ResponseData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
class Deadline(Params):
    """The named incidents' responses are complete within their severity deadlines."""

    incidents: list[IncidentName]


class DepotRange(Params):
    """No material comes from a depot more than ``minutes`` from the incident's site."""

    minutes: PositiveInt


class MaxTravel(Params):
    """No team travels more than ``minutes`` to the incident it is sent to."""

    minutes: PositiveInt


class StationCover(Params):
    """``base`` keeps at least ``keep`` of its teams of ``role`` unsent in wave ``wave``."""

    base: BaseName
    role: RoleName
    keep: PositiveInt
    wave: int = Field(ge=1, le=2)


class DispatchCap(Params):
    """No base sends more than ``max`` teams in one wave."""

    max: NonNegativeInt


class ArrivesFirst(Params):
    """At ``incident`` every ``first`` team arrives no later than every ``then`` team."""

    incident: IncidentName
    first: RoleName
    then: RoleName

    def data_problems(self, data: Any) -> list[str]:
        """A role the incident does not need sends it no team: the rule would hold for every plan
        (the incident is the data's, or the one a ``new_incident`` rule beside this one adds)."""
        found = super().data_problems(data)
        incident = data.incident_by_id.get(self.incident)
        if incident is None:
            adder = params.adder(data, "incident", self.incident)
            incident = adder.incident if isinstance(adder, NewIncident) else None
        if not found and incident is not None:
            needs = incident.needs
            lacking = [r for r in dict.fromkeys((self.first, self.then)) if r not in needs]
            if lacking:
                found.append(f"incident {self.incident!r} needs no {', '.join(map(repr, lacking))} team")
        return found


class SeverityPriority(Params):
    """``first``'s response is complete no later than ``then``'s (same wave)."""

    first: IncidentName
    then: IncidentName


class SameBase(Params):
    """All teams sent to ``incident`` come from one base."""

    incident: IncidentName


class DispatchBalance(Params):
    """In each wave, the numbers of teams any two bases send differ by at most ``max``."""

    max: NonNegativeInt


class RestAfterLong(Params):
    """A team that works a first-wave incident lasting ``minutes`` or more is not sent in the second wave."""

    minutes: PositiveInt


class CumulativeDuty(Params):
    """A team whose first-wave duty (travel there and back plus time on scene) exceeds
    ``minutes`` is sent in the second wave only to incidents lasting at most ``light`` minutes."""

    minutes: NonNegativeInt
    light: NonNegativeInt


class NewIncident(Params):
    """An incident reported after the plan was made; it must get every team it needs."""

    incident: Incident

    def data_problems(self, data: Any) -> list[str]:
        """The new incident's id is new (its site, severity, roles and materials are the
        data's by their ``Names``: the checker and the model look all of them up)."""
        i = self.incident
        found = [f"incident {i.id!r} is already an incident of the data"] if i.id in data.incident_by_id else []
        return found + super().data_problems(data)

    def adds(self) -> dict[str, list[str]]:
        """The new incident: the rules read beside this one may name it."""
        return {"incident": [self.incident.id]}


class UnitOut(Params):
    """``count`` of ``base``'s teams of ``role`` are out of service in both waves."""

    base: BaseName
    role: RoleName
    count: PositiveInt


class SpareCover(Params):
    """For every incident of severity ``severity`` and every role it needs, some team of
    that role is sent to no incident of that wave and could reach the site within
    ``minutes``: a spare for any single team that breaks down."""

    minutes: PositiveInt
    severity: SeverityName


class Dispatch(_Frozen):
    """A plan as a ``changes`` term keeps it: incident -> teams, incident -> material -> depot."""

    teams: dict[IncidentName, list[TeamName]]
    materials: dict[IncidentName, dict[MaterialName, DepotName]]


class CurrentDispatch(Params):
    """The current plan a ``changes`` term counts against."""

    existing: Dispatch


RULE_PARAMS: ParamsTable = {
    "stock": NoParams,
    "depot_range": DepotRange,
    "deadline": Deadline,
    "max_travel": MaxTravel,
    "station_cover": StationCover,
    "dispatch_cap": DispatchCap,
    "arrives_first": ArrivesFirst,
    "severity_priority": SeverityPriority,
    "same_base": SameBase,
    "dispatch_balance": DispatchBalance,
    "rest_after_long": RestAfterLong,
    "cumulative_duty": CumulativeDuty,
    "turnaround": NoParams,
    "new_incident": NewIncident,
    "unit_out": UnitOut,
    "spare_cover": SpareCover,
}
TERM_PARAMS: ParamsTable = {
    "lateness": NoParams,
    "travel": NoParams,
    "material_cost": NoParams,
    "fatigue": NoParams,
    "running_cost": NoParams,
    "changes": CurrentDispatch,
}


def current_plan(changes: ObjectiveTerm) -> Dispatch:
    return as_model(parse(TERM_PARAMS, changes), CurrentDispatch).existing


def new_incidents(rules: list[Rule]) -> tuple[Incident, ...]:
    """The incidents that rules add (reported after the plan was made), in rule order."""
    return tuple(Incident.model_validate(r.params["incident"]) for r in rules if r.kind == "new_incident")


# -- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """Teams and material depots per incident. ``extra`` are incidents added by rules
    (a new incident may be left without teams; a rule asks for them)."""

    teams: dict[str, tuple[str, ...]]  # incident -> teams sent, in team-list order
    supply: dict[str, dict[str, str]]  # incident -> material -> depot
    extra: tuple[Incident, ...] = ()
    # what many rules and figures read of the plan, worked out once per data it is read
    # against: each incident (by id) with its completion minutes, and each wave's sent_in
    _done: PerData[tuple[dict[str, Incident], dict[str, int]]] = field(
        default_factory=PerData, compare=False, repr=False
    )
    _sent: PerData[dict[int, dict[str, int]]] = field(default_factory=PerData, compare=False, repr=False)


def incidents_of(d: ResponseData, plan: Plan) -> tuple[Incident, ...]:
    return (*d.incidents, *plan.extra)


def sent_in(d: ResponseData, plan: Plan, wave: int) -> dict[str, int]:
    """Team -> number of incidents of ``wave`` it is sent to (not to be changed: kept
    with the plan for every wave of the data, see :func:`_sent_waves`)."""
    waves = plan._sent.get(d, lambda: _sent_waves(d, plan))
    found = waves.get(wave)
    return found if found is not None else {t.id: 0 for t in d.teams}


def _sent_waves(d: ResponseData, plan: Plan) -> dict[int, dict[str, int]]:
    """Wave -> team -> number of incidents of that wave it is sent to, for both waves."""
    out = {wave: {t.id: 0 for t in d.teams} for wave in WAVES}
    teams = plan.teams
    for i in incidents_of(d, plan):
        counts = out[i.wave]
        for t in teams.get(i.id, ()):
            counts[t] += 1
    return out


def completion(d: ResponseData, plan: Plan, i: Incident) -> int:
    """Minutes from the alert until the last team or material sent to ``i`` arrives (0 when nothing is sent)."""
    done, site, minutes, team_minutes = 0, i.site, d.minutes, d.team_minutes
    for t in plan.teams.get(i.id, ()):
        done = max(done, team_minutes[t][site])
    for dp in plan.supply.get(i.id, {}).values():
        done = max(done, minutes[dp][site])
    return done


def timing(d: ResponseData, plan: Plan) -> tuple[dict[str, Incident], dict[str, int]]:
    """(incident id -> incident, incident id -> :func:`completion`) over the plan's
    incidents: worked out once per plan and data (not to be changed)."""
    return plan._done.get(d, lambda: _timing(d, plan))


def _timing(d: ResponseData, plan: Plan) -> tuple[dict[str, Incident], dict[str, int]]:
    by_id = {i.id: i for i in incidents_of(d, plan)}
    return by_id, {iid: completion(d, plan, i) for iid, i in by_id.items()}


def base_counts(d: ResponseData, plan: Plan, wave: int) -> dict[str, int]:
    """Base -> teams sent in ``wave`` (a team sent twice counts twice)."""
    out = dict.fromkeys(d.bases, 0)
    teams = d.team_by_id
    for t, n in sent_in(d, plan, wave).items():
        out[teams[t].base] += n
    return out


def wave_one_duty(d: ResponseData, plan: Plan) -> dict[str, int]:
    """Team -> first-wave duty minutes: travel there and back plus time on scene, summed."""
    out = {t.id: 0 for t in d.teams}
    for i in incidents_of(d, plan):
        if i.wave == 1:
            for t in plan.teams.get(i.id, ()):
                out[t] += 2 * d.travel(t, i) + i.duration
    return out


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
@check("depot_range")
def _depot_range(d: ResponseData, plan: Plan, p: DepotRange) -> Verdict:
    for i in incidents_of(d, plan):
        for m, dp in plan.supply.get(i.id, {}).items():
            if d.minutes[dp][i.site] > p.minutes:
                return (
                    False,
                    f"{m} for {i.id} comes from {dp}, {d.minutes[dp][i.site]} minutes away (at most {p.minutes})",
                )
    return OK


@check("stock")
def _stock(d: ResponseData, plan: Plan, p: NoParams) -> Verdict:
    used: dict[tuple[str, str], int] = {}
    for i in incidents_of(d, plan):
        for m, dp in plan.supply.get(i.id, {}).items():
            used[dp, m] = used.get((dp, m), 0) + i.materials[m]
    for (dp, m), n in used.items():
        have = d.depot_by_id[dp].stock.get(m, 0)
        if n > have:
            return False, f"{dp} ships {n} units of {m} (it holds {have})"
    return OK


@check("deadline")
def _deadline(d: ResponseData, plan: Plan, p: Deadline) -> Verdict:
    by_id, done_by_id = timing(d, plan)
    for iid in p.incidents:
        i = by_id[iid]
        done = done_by_id[iid]
        if done > d.deadline(i):
            return False, f"{iid}'s response is complete after {done} minutes (deadline {d.deadline(i)})"
    return OK


@check("max_travel")
def _max_travel(d: ResponseData, plan: Plan, p: MaxTravel) -> Verdict:
    team_minutes = d.team_minutes
    for i in incidents_of(d, plan):
        for t in plan.teams.get(i.id, ()):
            if team_minutes[t][i.site] > p.minutes:
                return False, f"{t} travels {d.travel(t, i)} minutes to {i.id} (at most {p.minutes})"
    return OK


def _class_sent(d: ResponseData, plan: Plan, base: str, role: str, wave: int) -> tuple[int, int]:
    """(teams of the class, of them sent in ``wave``) for the class (base, role)."""
    members = [t.id for t in d.teams if t.base == base and t.role == role]
    sent = sent_in(d, plan, wave)
    return len(members), sum(1 for t in members if sent[t])


@check("station_cover")
def _station_cover(d: ResponseData, plan: Plan, p: StationCover) -> Verdict:
    n, sent = _class_sent(d, plan, p.base, p.role, p.wave)
    if n - sent < p.keep:
        return False, f"{p.base} keeps {n - sent} {p.role} teams in wave {p.wave} (at least {p.keep})"
    return OK


@check("dispatch_cap")
def _dispatch_cap(d: ResponseData, plan: Plan, p: DispatchCap) -> Verdict:
    for wave in WAVES:
        for base, n in base_counts(d, plan, wave).items():
            if n > p.max:
                return False, f"{base} sends {n} teams in wave {wave} (at most {p.max})"
    return OK


@check("arrives_first")
def _arrives_first(d: ResponseData, plan: Plan, p: ArrivesFirst) -> Verdict:
    i = next(x for x in incidents_of(d, plan) if x.id == p.incident)
    teams = plan.teams.get(i.id, ())
    firsts = [d.travel(t, i) for t in teams if d.team_by_id[t].role == p.first]
    thens = [d.travel(t, i) for t in teams if d.team_by_id[t].role == p.then]
    if firsts and thens and max(firsts) > min(thens):
        return False, f"at {i.id} a {p.first} arrives after {max(firsts)} minutes, a {p.then} after {min(thens)}"
    return OK


@check("severity_priority")
def _severity_priority(d: ResponseData, plan: Plan, p: SeverityPriority) -> Verdict:
    done = timing(d, plan)[1]
    a, b = done[p.first], done[p.then]
    if a > b:
        return False, f"{p.first} is complete after {a} minutes, later than {p.then} ({b} minutes)"
    return OK


@check("same_base")
def _same_base(d: ResponseData, plan: Plan, p: SameBase) -> Verdict:
    bases = sorted({d.team_by_id[t].base for t in plan.teams.get(p.incident, ())})
    return OK if len(bases) <= 1 else (False, f"{p.incident} gets teams from {', '.join(bases)}")


@check("dispatch_balance")
def _dispatch_balance(d: ResponseData, plan: Plan, p: DispatchBalance) -> Verdict:
    for wave in WAVES:
        verdict = spread_verdict(base_counts(d, plan, wave), p.max, "sends", "teams", f"in wave {wave} ")
        if not verdict[0]:
            return verdict
    return OK


@check("rest_after_long")
def _rest_after_long(d: ResponseData, plan: Plan, p: RestAfterLong) -> Verdict:
    later = sent_in(d, plan, 2)
    for i in incidents_of(d, plan):
        if i.wave == 1 and i.duration >= p.minutes:
            for t in plan.teams.get(i.id, ()):
                if later[t]:
                    return False, f"{t} works {i.id} ({i.duration} minutes on scene) and is sent again in wave 2"
    return OK


@check("cumulative_duty")
def _cumulative_duty(d: ResponseData, plan: Plan, p: CumulativeDuty) -> Verdict:
    duty = wave_one_duty(d, plan)
    for i in incidents_of(d, plan):
        if i.wave == 2 and i.duration > p.light:
            for t in plan.teams.get(i.id, ()):
                if duty[t] > p.minutes:
                    return False, (
                        f"{t} has {duty[t]} duty minutes in wave 1 (over {p.minutes}) and is sent to {i.id}, "
                        f"which lasts {i.duration} minutes (at most {p.light})"
                    )
    return OK


@check("turnaround")
def _turnaround(d: ResponseData, plan: Plan, p: NoParams) -> Verdict:
    later = sent_in(d, plan, 2)
    for i in incidents_of(d, plan):
        if i.wave == 1:
            for t in plan.teams.get(i.id, ()):
                back = d.alerts[0] + 2 * d.travel(t, i) + i.duration
                if later[t] and back > d.alerts[1]:
                    return False, f"{t} is back from {i.id} at minute {back}, after the wave-2 alert ({d.alerts[1]})"
    return OK


@check("new_incident")
def _new_incident(d: ResponseData, plan: Plan, p: NewIncident) -> Verdict:
    i = p.incident
    teams = plan.teams.get(i.id, ())
    for role, n in i.needs.items():
        got = sum(1 for t in teams if d.team_by_id[t].role == role)
        if got != n:
            return False, f"the new incident {i.id} gets {got} {role} teams (it needs {n})"
    return OK


@check("unit_out")
def _unit_out(d: ResponseData, plan: Plan, p: UnitOut) -> Verdict:
    for wave in WAVES:
        n, sent = _class_sent(d, plan, p.base, p.role, wave)
        if sent > n - p.count:
            return False, f"{p.base} sends {sent} {p.role} teams in wave {wave} with {p.count} of {n} out of service"
    return OK


@check("spare_cover")
def _spare_cover(d: ResponseData, plan: Plan, p: SpareCover) -> Verdict:
    sent = {wave: sent_in(d, plan, wave) for wave in WAVES}
    for i in incidents_of(d, plan):
        if i.severity != p.severity:
            continue
        for role in i.needs:
            spares = [
                t.id for t in d.teams if t.role == role and not sent[i.wave][t.id] and d.travel(t.id, i) <= p.minutes
            ]
            if not spares:
                return False, f"no spare {role} team is left within {p.minutes} minutes of {i.id}"
    return OK


# -- objective -------------------------------------------------------------------------
def fatigue_units(first: Incident, second: Incident) -> int:
    """A team sent to ``first`` (wave 1) and ``second`` (wave 2): the product of their
    minutes on scene, each in units of 5 minutes."""
    return (first.duration // 5) * (second.duration // 5)


def material_cost(d: ResponseData, i: Incident, material: str, depot: str) -> int:
    """Units × (the depot's price per unit + its haulage per unit per minute × minutes to the site)."""
    dp = d.depot_by_id[depot]
    return i.materials[material] * (dp.price[material] + dp.haul * d.minutes[depot][i.site])


def class_key(d: ResponseData, team: str) -> str:
    t = d.team_by_id[team]
    return f"{t.role} @ {t.base}"


def changes(d: ResponseData, plan: Plan, old: Dispatch) -> int:
    """Per incident and class (role, base): |teams sent now - teams sent before|, summed;
    plus each material of a listed incident now from another depot."""
    total = 0
    for i in incidents_of(d, plan):
        now: dict[str, int] = {}
        for t in plan.teams.get(i.id, ()):
            now[class_key(d, t)] = now.get(class_key(d, t), 0) + 1
        before: dict[str, int] = {}
        for t in old.teams.get(i.id, []):
            before[class_key(d, t)] = before.get(class_key(d, t), 0) + 1
        total += sum(abs(now.get(k, 0) - before.get(k, 0)) for k in set(now) | set(before))
        was = old.materials.get(i.id, {})
        total += sum(1 for m, dp in plan.supply.get(i.id, {}).items() if m in was and was[m] != dp)
    return total


def objective_value(d: ResponseData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    total = 0
    if kind == "lateness":
        done, severities = timing(d, plan)[1], d.severity_by_id
        for i in incidents_of(d, plan):
            sev = severities[i.severity]
            total += sev.weight * max(0, done[i.id] - sev.deadline)
        return total
    if kind == "travel":
        team_minutes = d.team_minutes
        for i in incidents_of(d, plan):
            for t in plan.teams.get(i.id, ()):
                total += team_minutes[t][i.site]
        return total
    if kind == "material_cost":
        for i in incidents_of(d, plan):
            for m, dp in plan.supply.get(i.id, {}).items():
                total += material_cost(d, i, m, dp)
        return total
    if kind == "fatigue":
        where: dict[tuple[str, int], Incident] = {}
        for i in incidents_of(d, plan):
            for t in plan.teams.get(i.id, ()):
                where[t, i.wave] = i
        return sum(
            fatigue_units(where[t.id, 1], where[t.id, 2]) for t in d.teams if (t.id, 1) in where and (t.id, 2) in where
        )
    if kind == "running_cost":
        team_minutes, teams = d.team_minutes, d.team_by_id
        for i in incidents_of(d, plan):
            for t in plan.teams.get(i.id, ()):
                total += teams[t].cost * team_minutes[t][i.site]
        return total
    if kind == "changes":
        return changes(d, plan, as_model(tp, CurrentDispatch).existing)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def neighbours(d: ResponseData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``, each still a complete plan: one team replaced by a
    team of its role that is idle in that wave, two teams of one role swapped between two
    incidents of one wave, or one material taken from another depot that holds it."""
    incidents = incidents_of(d, plan)
    for i in incidents:
        teams = plan.teams.get(i.id, ())
        busy = {t for j in incidents if j.wave == i.wave for t in plan.teams.get(j.id, ())}
        for k, t in enumerate(teams):
            role = d.team_by_id[t].role
            for other in d.teams:
                if other.role == role and other.id not in busy:
                    new = sorted((*teams[:k], other.id, *teams[k + 1 :]), key=d.teams_order)
                    yield Plan({**plan.teams, i.id: tuple(new)}, plan.supply, plan.extra)
        if i in plan.extra:  # a new incident may lack teams: leave one out
            for k in range(len(teams)):
                yield Plan({**plan.teams, i.id: (*teams[:k], *teams[k + 1 :])}, plan.supply, plan.extra)
        for m, dp in plan.supply.get(i.id, {}).items():
            for dep in d.depots:
                if dep.id != dp and m in dep.stock:
                    yield Plan(plan.teams, {**plan.supply, i.id: {**plan.supply[i.id], m: dep.id}}, plan.extra)
    for i, j in itertools.combinations(incidents, 2):
        if i.wave != j.wave:
            continue
        for a in plan.teams.get(i.id, ()):
            for b in plan.teams.get(j.id, ()):
                if d.team_by_id[a].role == d.team_by_id[b].role and class_key(d, a) != class_key(d, b):
                    ti = sorted((b if t == a else t for t in plan.teams[i.id]), key=d.teams_order)
                    tj = sorted((a if t == b else t for t in plan.teams[j.id]), key=d.teams_order)
                    yield Plan({**plan.teams, i.id: tuple(ti), j.id: tuple(tj)}, plan.supply, plan.extra)


class EmergencyPlanning(PlanChecker):
    family = "emergency"
    task = TASK_ID
    plan_key = "dispatch"
    plan_text = (
        "a list naming every incident exactly once with the teams sent to it (exactly the number of teams of each "
        "role it needs, listed team ids, no team at two incidents of one wave) and, for each material it needs, one "
        "depot sending the needed quantity"
    )
    data_type = ResponseData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: ResponseData) -> dict[str, Any]:
        return {
            "incident": lookup([i.id for i in d.incidents]),
            "team": lookup([t.id for t in d.teams]),
            "depot": lookup([x.id for x in d.depots]),
            "material": lookup(list(d.materials)),
        }

    def read_plan(
        self, d: ResponseData, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Plan | None, str]:
        return self._read(d, section, lk, new_incidents(rules))

    def read_section(
        self, instance: Instance, d: ResponseData, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Plan | None, str]:
        """:meth:`read_plan`, with the new incidents taken from the instance's parsed
        parameters (parsed once, not for every answer)."""
        typed = self.typed(instance)
        extra = tuple(as_model(typed.rule(r), NewIncident).incident for r in rules if r.kind == "new_incident")
        return self._read(d, section, lk, extra)

    def _read(
        self, d: ResponseData, section: dict[str, Any], lk: Any, extra: tuple[Incident, ...]
    ) -> tuple[Plan | None, str]:
        rows = section.get("dispatch") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'dispatch' is missing or not a list"
        incidents = {i.id: i for i in (*d.incidents, *extra)}
        inc_names = lk["incident"] if not extra else lookup(list(incidents))
        inc_exact = inc_names.exact
        added = {i.id for i in extra}  # read by id: a new incident replaces a listed one of its id
        teams: dict[str, tuple[str, ...]] = {}
        supply: dict[str, dict[str, str]] = {}
        for k, row in enumerate(rows):
            if not isinstance(row, dict):
                return None, f"dispatch row {k + 1} is not an object"
            name = row.get("incident")
            if not isinstance(name, str):
                return None, f"dispatch row {k + 1} needs a string field 'incident'"
            iid = inc_exact.get(name)  # Names.find, inlined: the instance's own spelling first
            if iid is None:
                iid = inc_names.get(norm(name))
                if iid is None:
                    return None, f"dispatch row {k + 1} names unknown incident {name[:40]!r}"
            if iid in teams:
                return None, f"incident {iid} appears more than once"
            i, optional = incidents[iid], iid in added
            sent, why = self._teams(d, row.get("teams"), i, lk, optional=optional)
            if sent is None:
                return None, why
            got, why = self._materials(d, row.get("materials", []), i, lk, optional=optional)
            if got is None:
                return None, why
            teams[iid], supply[iid] = sent, got
        missing = [i.id for i in d.incidents if i.id not in teams]
        if missing:
            return None, f"incidents missing from the dispatch: {', '.join(missing)}"
        seen: dict[tuple[str, int], str] = {}
        for iid, sent in teams.items():
            for t in sent:
                other = seen.setdefault((t, incidents[iid].wave), iid)
                if other != iid:
                    return None, f"team {t} is sent to both {other} and {iid}, incidents of the same wave"
        for i in extra:
            teams.setdefault(i.id, ())
            supply.setdefault(i.id, {})
        return Plan(teams, supply, extra), "complete plan"

    def _teams(
        self, d: ResponseData, given: Any, i: Incident, lk: Any, optional: bool
    ) -> tuple[tuple[str, ...] | None, str]:
        """The teams of one row: known ids, no repeats, of roles the incident needs, in
        the needed numbers (a new incident: at most the needed numbers)."""
        if not isinstance(given, list):
            return None, f"incident {i.id} needs 'teams', a list of team ids"
        for text in given:
            if not isinstance(text, str):
                return None, f"incident {i.id} needs 'teams', a list of team ids"
        names = lk["team"]
        exact, team_by_id, needs = names.exact, d.team_by_id, i.needs
        found: list[str] = []
        counts: dict[str, int] = {}  # role -> teams of it found
        for text in given:
            t = exact.get(text)  # names.find, inlined: the instance's own spelling first
            if t is None:
                t = names.get(norm(text))
                if t is None:
                    return None, f"incident {i.id} names unknown team {text[:40]!r}"
            if t in found:
                return None, f"incident {i.id} names team {t} twice"
            role = team_by_id[t].role
            if role not in needs:
                return None, f"incident {i.id} needs no {role} team but gets {t}"
            found.append(t)
            counts[role] = counts.get(role, 0) + 1
        for role, n in needs.items():
            got = counts.get(role, 0)
            if got != n and not (optional and got < n):
                return None, f"incident {i.id} needs {n} {role} teams, the answer sends {got}"
        return tuple(sorted(found, key=d.team_position.__getitem__)), ""

    def _materials(
        self, d: ResponseData, given: Any, i: Incident, lk: Any, optional: bool
    ) -> tuple[dict[str, str] | None, str]:
        """One depot per needed material, with the needed quantity, each material once."""
        if not isinstance(given, list):
            return None, f"incident {i.id}'s 'materials' must be a list"
        out: dict[str, str] = {}
        materials, depots = lk["material"], lk["depot"]
        for row in given:
            if not isinstance(row, dict):
                return None, f"incident {i.id}: each material row needs string fields 'material' and 'depot'"
            mt, dt = row.get("material"), row.get("depot")
            if not isinstance(mt, str) or not isinstance(dt, str):
                return None, f"incident {i.id}: each material row needs string fields 'material' and 'depot'"
            m = materials.exact.get(mt)  # Names.find, inlined: the instance's own spelling first
            if m is None:
                m = materials.get(norm(mt))
            dp = depots.exact.get(dt)
            if dp is None:
                dp = depots.get(norm(dt))
            if m is None or m not in i.materials:
                return None, f"incident {i.id} needs no material {str(row['material'])[:40]!r}"
            if dp is None:
                return None, f"incident {i.id} names unknown depot {str(row['depot'])[:40]!r}"
            if m not in d.depot_by_id[dp].stock:
                return None, f"depot {dp} holds no {m}"
            qty = row.get("quantity")
            if type(qty) is not int or qty != i.materials[m]:
                return None, f"incident {i.id} needs 'quantity' {i.materials[m]} of {m} from one depot"
            if m in out:
                return None, f"incident {i.id} lists {m} twice (one depot sends all of it)"
            out[m] = dp
        if len(out) < len(i.materials) and not optional:  # every material read is one the incident needs
            missing = [m for m in i.materials if m not in out]
            return None, f"incident {i.id} gets no depot for {', '.join(missing)}"
        return out, ""

    def objective_value(self, d: ResponseData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: ResponseData, plan: Plan) -> dict[str, dict[str, int]]:
        done = timing(d, plan)[1]
        per_wave = [base_counts(d, plan, w) for w in WAVES]
        return {
            "completion": {i.id: done[i.id] for i in d.incidents},
            "teams_sent": {b: sum(counts[b] for counts in per_wave) for b in d.bases},
        }

    def existing(self, d: ResponseData, plan: Plan) -> dict[str, Any]:
        return Dispatch(
            teams={i.id: list(plan.teams[i.id]) for i in d.incidents},
            materials={i.id: dict(plan.supply[i.id]) for i in d.incidents if plan.supply[i.id]},
        ).model_dump(mode="json")

    def plan_schema(self, d: ResponseData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        ids = [i.id for i in (*d.incidents, *new_incidents(rules))]
        material = {
            "type": "object",
            "properties": {
                "material": {"type": "string", "description": f"one of {', '.join(d.materials)}"},
                "depot": {"enum": [x.id for x in d.depots]},
                "quantity": {"type": "integer", "description": "units: exactly what the incident needs"},
            },
            "required": ["material", "depot", "quantity"],
        }
        row = {
            "type": "object",
            "properties": {
                "incident": {"enum": ids},
                "teams": {"type": "array", "items": {"enum": [t.id for t in d.teams]}},
                "materials": {
                    "type": "array",
                    "items": material,
                    "description": "one row per material the incident needs (an empty list when it needs none)",
                },
            },
            "required": ["incident", "teams", "materials"],
        }
        return {"type": "array", "items": row, "description": "every incident exactly once"}

    def verification_schema(self, d: ResponseData) -> dict[str, Any]:
        return figures_schema({
            "completion": (
                [i.id for i in d.incidents],
                "for each incident, minutes from its alert until the last team or material arrives",
            ),
            "teams_sent": (list(d.bases), "for each base, the teams it sends over both waves"),
        })  # fmt: skip

    def plan_json(self, d: ResponseData, plan: Plan) -> list[dict[str, Any]]:
        rows = []
        for i in incidents_of(d, plan):
            if i in plan.extra and not plan.teams.get(i.id) and not plan.supply.get(i.id):
                continue
            mats = [
                {"material": m, "depot": dp, "quantity": i.materials[m]} for m, dp in plan.supply.get(i.id, {}).items()
            ]
            rows.append({"incident": i.id, "teams": list(plan.teams.get(i.id, ())), "materials": mats})
        return rows

    def neighbours(self, data: ResponseData, plan: Plan) -> Iterator[Plan]:
        return neighbours(data, plan)

    def baseline_plan(self, d: ResponseData, instance: Instance) -> Plan:
        """Incident by incident in listed order, each role from the first listed free
        team of that role (free in the incident's wave, else any); each material from the
        first depot that holds it. Blind to travel, deadlines, stocks and fatigue."""
        extra = new_incidents(list(instance.rules))
        busy: dict[int, set[str]] = {w: set() for w in WAVES}
        teams: dict[str, tuple[str, ...]] = {}
        supply: dict[str, dict[str, str]] = {}
        for i in (*d.incidents, *extra):
            chosen: list[str] = []
            for role, n in i.needs.items():
                pool = [t.id for t in d.teams if t.role == role]
                free = [t for t in pool if t not in busy[i.wave]]
                chosen += (free + [t for t in pool if t not in free])[:n]
            busy[i.wave] |= set(chosen)
            teams[i.id] = tuple(sorted(chosen, key=d.teams_order))
            supply[i.id] = {m: next(x.id for x in d.depots if m in x.stock) for m in i.materials}
        return Plan(teams, supply, extra)


def combos(d: ResponseData, i: Incident, optional: bool = False) -> Iterator[tuple[str, ...]]:
    """Every team set one incident may get (exactly the needed numbers; fewer for a new incident)."""
    per_role = []
    for role, n in i.needs.items():
        pool = [t.id for t in d.teams if t.role == role]
        sizes = range(0, n + 1) if optional else [n]
        per_role.append([c for k in sizes for c in itertools.combinations(pool, k)])
    for parts in itertools.product(*per_role):
        yield tuple(sorted((t for part in parts for t in part), key=d.teams_order))


TASK = EmergencyPlanning()
