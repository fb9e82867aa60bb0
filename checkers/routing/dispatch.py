"""Checks for Transportation Dispatch Planning answers: every job of a shift goes to one
vehicle, and each vehicle does its jobs in the order the answer lists them.

A vehicle leaves the depot at minute 0 of the shift and drives empty (deadhead) to the
pickup place of its first job; it starts a job as soon as it is there and the job is
released (it waits at the pickup only for the release), drives loaded to the job's
drop-off place, spends the job's handling minutes, and goes on to the next pickup; after
its last job it drives back to the depot. All travel takes the quickest way over the
instance's road network (:class:`pbsolve.network_kit.RoadNetwork`, shortest minutes by
networkx). Times are therefore fixed by the routes alone, and every figure is
recomputed from them here in plain Python integers.

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. Vehicles of one type are interchangeable (no rule or figure tells them apart:
rules speak of types, and replanning counts a job as changed when the stop before it
changes, whichever vehicle drives), so an answer may use any of them; the certificate's
uniqueness is judged up to that relabelling (see the model).
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import OK, PerData, PlanChecker, lookup, owner_rows
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.network_kit import RoadNetwork
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "transportation_dispatch_planning"


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Vehicle(_Frozen):
    """One vehicle of the fleet; it starts and ends the shift at the depot."""

    id: str
    type: str = Field(description="the vehicle type (jobs need one)")
    battery: PositiveInt | None = Field(
        default=None, description="electric vehicles: minutes of driving a full charge allows (None: not electric)"
    )


class Job(_Frozen):
    """One transport job: pick up at ``origin``, drive loaded to ``dest``, handle there."""

    id: str
    name: str
    needs: str = Field(description="the vehicle type the job needs")
    origin: str = Field(description="pickup place (a place of the network)")
    dest: str = Field(description="drop-off place (a place of the network)")
    handling: PositiveInt = Field(description="minutes of loading and unloading, spent at the drop-off")
    release: NonNegativeInt = Field(description="earliest minute the job may start at its pickup")
    due: PositiveInt = Field(description="minute by which the job should be finished; later counts as late")
    weight: PositiveInt = Field(description="lateness weight per minute late")
    points: PositiveInt = Field(description="priority points: the pickup score weighs the job's arrival minute by them")
    load: PositiveInt = Field(description="units carried (passengers, tonnes, patients)")


class DispatchData(_Frozen):
    network: RoadNetwork
    depot: str = Field(description="the place every vehicle starts and ends the shift at")
    shift: PositiveInt = Field(description="minutes in the shift (minute 0 is its start)")
    units: str = Field(description="what a job's load counts")
    vehicles: tuple[Vehicle, ...]
    jobs: tuple[Job, ...]
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> DispatchData:
        places = set(self.network.places)
        if self.depot not in places:
            raise ValueError(f"the depot {self.depot} is not a place of the network")
        for name, ids in (("vehicle", [v.id for v in self.vehicles]), ("job", [j.id for j in self.jobs])):
            if len(set(ids)) != len(ids):
                raise ValueError(f"{name} ids must be distinct")
        if not self.vehicles or not self.jobs:
            raise ValueError("an instance needs at least one vehicle and one job")
        types = {v.type for v in self.vehicles}
        for j in self.jobs:
            for where in (j.origin, j.dest):
                if where not in places:
                    raise ValueError(f"job {j.id}'s place {where} is not a place of the network")
            if j.origin == j.dest:
                raise ValueError(f"job {j.id} starts and ends at the same place")
            if j.needs not in types:
                raise ValueError(f"job {j.id} needs vehicle type {j.needs!r}, which no vehicle has")
        return self

    @cached_property
    def minutes(self) -> dict[str, dict[str, int]]:
        """Shortest travel minutes between every two places."""
        return self.network.minutes

    @cached_property
    def job_by_id(self) -> dict[str, Job]:
        return {j.id: j for j in self.jobs}

    @cached_property
    def vehicle_by_id(self) -> dict[str, Vehicle]:
        return {v.id: v for v in self.vehicles}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        if what == "vehicle type":
            return {v.type for v in self.vehicles}
        names: dict[str, Container[str]] = {"job": self.job_by_id, "vehicle": self.vehicle_by_id}
        return names[what]

    def loaded(self, j: Job) -> int:
        """Minutes of the loaded drive from the job's pickup to its drop-off."""
        return self.minutes[j.origin][j.dest]

    def duration(self, j: Job) -> int:
        """Minutes from the job's start to its finish: the loaded drive and the handling."""
        return self.loaded(j) + j.handling

    @cached_property
    def job_moves(self) -> dict[str, tuple[str, str, int, int]]:
        """Job id -> (pickup, drop-off, release, duration): what a timeline reads of a job."""
        return {j.id: (j.origin, j.dest, j.release, self.duration(j)) for j in self.jobs}


def replaced(d: DispatchData, **changes: Any) -> DispatchData:
    """``d`` with fields replaced, as a new object (``model_copy`` would keep cached lookups)."""
    return DispatchData.model_validate({**{f: getattr(d, f) for f in DispatchData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
JobName = Annotated[str, Names("job")]
VehicleType = Annotated[str, Names("vehicle type")]


class HardDeadline(Params):
    """The named jobs finish no later than their due minute."""

    jobs: list[JobName]


class MaxJobs(Params):
    """No vehicle does more than ``max`` jobs."""

    max: PositiveInt


class MaxDeadhead(Params):
    """No vehicle drives more than ``max`` minutes empty (depot legs included)."""

    max: NonNegativeInt


class MaxVehicles(Params):
    """At most ``max`` vehicles do any job."""

    max: PositiveInt


class SameVehicle(Params):
    """The named jobs are all done by one vehicle."""

    jobs: list[JobName]


class DifferentVehicle(Params):
    """For each pair, the two jobs are done by different vehicles."""

    pairs: list[tuple[JobName, JobName]]


class MaxWait(Params):
    """No vehicle waits more than ``max`` minutes at a pickup for the job's release."""

    max: NonNegativeInt


class DirectStart(Params):
    """Each named job is the first job of its vehicle (driven to straight from the depot)."""

    jobs: list[JobName]


class Battery(Params):
    """An electric vehicle's charge (minutes of driving left) never falls below ``reserve``."""

    reserve: NonNegativeInt


class CumulativeLoad(Params):
    """A vehicle's running total of loads carried over the shift never exceeds ``max``."""

    max: PositiveInt


class FleetCap(Params):
    """At most ``max`` vehicles of the type go out (some have broken down: a disruption)."""

    type: VehicleType
    max: NonNegativeInt


class SpareVehicle(Params):
    """For each named type, at least one vehicle of that type does no job (a spare)."""

    types: list[VehicleType]


class CurrentRoutes(Params):
    """The current plan a ``changes`` term counts against: vehicle -> its jobs in order."""

    existing: dict[Annotated[str, Names("vehicle")], list[JobName]]


RULE_PARAMS: ParamsTable = {
    "vehicle_type": NoParams,
    "shift_end": NoParams,
    "hard_deadline": HardDeadline,
    "max_jobs": MaxJobs,
    "max_deadhead": MaxDeadhead,
    "max_vehicles": MaxVehicles,
    "same_vehicle": SameVehicle,
    "different_vehicle": DifferentVehicle,
    "max_wait": MaxWait,
    "direct_start": DirectStart,
    "battery": Battery,
    "cumulative_load": CumulativeLoad,
    "fleet_cap": FleetCap,
    "spare_vehicle": SpareVehicle,
}
TERM_PARAMS: ParamsTable = {
    "lateness": NoParams,
    "deadhead": NoParams,
    "vehicles_used": NoParams,
    "pickup_score": NoParams,
    "changes": CurrentRoutes,
}


def current_plan(changes: ObjectiveTerm) -> dict[str, list[str]]:
    """The current routes of a ``changes`` term (vehicle -> jobs in order)."""
    return as_model(parse(TERM_PARAMS, changes), CurrentRoutes).existing


def predecessors(routes: dict[str, list[str]] | dict[str, tuple[str, ...]]) -> dict[str, str]:
    """Job -> the stop before it on its vehicle: the job done just before, or "depot"."""
    out = {}
    for jobs in routes.values():
        for before, jid in zip(["depot", *jobs], jobs):
            out[jid] = before
    return out


# -- the plan and its timeline -----------------------------------------------------------
class Leg(NamedTuple):
    """One job as a vehicle does it: when it arrives at the pickup, starts and finishes
    (a named tuple: a plan's timelines make one per job, for every answer)."""

    job: str
    arrive: int
    start: int
    finish: int
    deadhead: int  # empty minutes driven to reach this pickup


class Timeline(NamedTuple):
    """A vehicle's whole shift: its legs, the empty drive home and when it is back."""

    legs: tuple[Leg, ...]
    home: int  # empty minutes from the last drop-off back to the depot (0 when unused)
    back: int  # minute the vehicle is back at the depot (0 when unused)

    @property
    def deadhead(self) -> int:
        return sum(leg.deadhead for leg in self.legs) + self.home


@dataclass(frozen=True)
class Plan:
    """Vehicle -> its jobs in order (every vehicle present; an unused one has none)."""

    routes: dict[str, tuple[str, ...]]
    _timelines: PerData[dict[str, Timeline]] = field(default_factory=PerData, compare=False, repr=False)

    def vehicle_of(self) -> dict[str, str]:
        return {j: v for v, jobs in self.routes.items() for j in jobs}


def timeline(d: DispatchData, plan: Plan) -> dict[str, Timeline]:
    """Each vehicle's timeline under the task's rules of motion (see the module docstring);
    computed once per plan and data."""
    return plan._timelines.get(d, lambda: _run_timelines(d, plan))


def _run_timelines(d: DispatchData, plan: Plan) -> dict[str, Timeline]:
    out: dict[str, Timeline] = {}
    minutes, moves = d.minutes, d.job_moves
    for v in d.vehicles:
        t, at, legs = 0, d.depot, []
        for jid in plan.routes.get(v.id, ()):
            origin, dest, release, duration = moves[jid]
            empty = minutes[at][origin]
            arrive = t + empty
            start = max(arrive, release)
            t = start + duration
            legs.append(Leg(jid, arrive, start, t, empty))
            at = dest
        home = minutes[at][d.depot] if legs else 0
        out[v.id] = Timeline(tuple(legs), home, t + home if legs else 0)
    return out


def finishes(d: DispatchData, plan: Plan) -> dict[str, int]:
    """Job -> the minute it finishes."""
    return {leg.job: leg.finish for tl in timeline(d, plan).values() for leg in tl.legs}


def lateness(d: DispatchData, j: Job, finish: int) -> int:
    return j.weight * max(0, finish - j.due)


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
@check("vehicle_type")
def _vehicle_type(d: DispatchData, plan: Plan, p: NoParams) -> Verdict:
    for v, jobs in plan.routes.items():
        kind = d.vehicle_by_id[v].type
        for jid in jobs:
            if d.job_by_id[jid].needs != kind:
                return False, f"{jid} needs a {d.job_by_id[jid].needs} but {v} is a {kind}"
    return OK


@check("shift_end")
def _shift_end(d: DispatchData, plan: Plan, p: NoParams) -> Verdict:
    for v, tl in timeline(d, plan).items():
        if tl.back > d.shift:
            return False, f"{v} is back at the depot at minute {tl.back}, after the shift ends at minute {d.shift}"
    return OK


@check("hard_deadline")
def _hard_deadline(d: DispatchData, plan: Plan, p: HardDeadline) -> Verdict:
    done = finishes(d, plan)
    for jid in p.jobs:
        if done[jid] > d.job_by_id[jid].due:
            return False, f"{jid} finishes at minute {done[jid]}, after its deadline {d.job_by_id[jid].due}"
    return OK


@check("max_jobs")
def _max_jobs(d: DispatchData, plan: Plan, p: MaxJobs) -> Verdict:
    for v, jobs in plan.routes.items():
        if len(jobs) > p.max:
            return False, f"{v} does {len(jobs)} jobs (at most {p.max})"
    return OK


@check("max_deadhead")
def _max_deadhead(d: DispatchData, plan: Plan, p: MaxDeadhead) -> Verdict:
    for v, tl in timeline(d, plan).items():
        if tl.deadhead > p.max:
            return False, f"{v} drives {tl.deadhead} minutes empty (at most {p.max})"
    return OK


@check("max_vehicles")
def _max_vehicles(d: DispatchData, plan: Plan, p: MaxVehicles) -> Verdict:
    used = [v for v, jobs in plan.routes.items() if jobs]
    if len(used) > p.max:
        return False, f"{len(used)} vehicles do jobs (at most {p.max})"
    return OK


@check("same_vehicle")
def _same_vehicle(d: DispatchData, plan: Plan, p: SameVehicle) -> Verdict:
    of = plan.vehicle_of()
    who = sorted({of[j] for j in p.jobs})
    return OK if len(who) == 1 else (False, f"{', '.join(p.jobs)} are done by {', '.join(who)}")


@check("different_vehicle")
def _different_vehicle(d: DispatchData, plan: Plan, p: DifferentVehicle) -> Verdict:
    of = plan.vehicle_of()
    for a, b in p.pairs:
        if of[a] == of[b]:
            return False, f"{a} and {b} are both done by {of[a]}"
    return OK


@check("max_wait")
def _max_wait(d: DispatchData, plan: Plan, p: MaxWait) -> Verdict:
    for v, tl in timeline(d, plan).items():
        for leg in tl.legs:
            if leg.start - leg.arrive > p.max:
                return False, f"{v} waits {leg.start - leg.arrive} minutes for {leg.job} (at most {p.max})"
    return OK


@check("direct_start")
def _direct_start(d: DispatchData, plan: Plan, p: DirectStart) -> Verdict:
    of = plan.vehicle_of()
    for jid in p.jobs:
        route = plan.routes[of[jid]]
        if route[0] != jid:
            return False, f"{jid} is not the first job of {of[jid]} ({route[0]} is)"
    return OK


@check("battery")
def _battery(d: DispatchData, plan: Plan, p: Battery) -> Verdict:
    """Walks each electric vehicle's route leg by leg: the charge falls by one minute of
    range per minute driven, empty or loaded, the drive home included."""
    for v in d.vehicles:
        if v.battery is None:
            continue
        charge, at = v.battery, d.depot
        for jid in plan.routes.get(v.id, ()):
            j = d.job_by_id[jid]
            charge -= d.minutes[at][j.origin] + d.loaded(j)
            at = j.dest
            if charge < p.reserve:
                return False, f"{v.id}'s charge falls to {charge} minutes after {jid} (reserve {p.reserve})"
        charge -= d.minutes[at][d.depot]
        if charge < p.reserve:
            return False, f"{v.id}'s charge falls to {charge} minutes on the way home (reserve {p.reserve})"
    return OK


@check("cumulative_load")
def _cumulative_load(d: DispatchData, plan: Plan, p: CumulativeLoad) -> Verdict:
    for v, jobs in plan.routes.items():
        total = 0
        for jid in jobs:
            total += d.job_by_id[jid].load
            if total > p.max:
                return False, f"{v} has carried {total} {d.units} by {jid} (at most {p.max})"
    return OK


@check("fleet_cap")
def _fleet_cap(d: DispatchData, plan: Plan, p: FleetCap) -> Verdict:
    out = [v.id for v in d.vehicles if v.type == p.type and plan.routes.get(v.id)]
    if len(out) > p.max:
        return False, f"{len(out)} vehicles of type {p.type} go out ({', '.join(out)}; at most {p.max})"
    return OK


@check("spare_vehicle")
def _spare_vehicle(d: DispatchData, plan: Plan, p: SpareVehicle) -> Verdict:
    for kind in p.types:
        idle = [v.id for v in d.vehicles if v.type == kind and not plan.routes.get(v.id)]
        if not idle:
            return False, f"every {kind} does a job: none is left as a spare"
    return OK


# -- objective -------------------------------------------------------------------------
def objective_value(d: DispatchData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "lateness":
        done = finishes(d, plan)
        return sum(lateness(d, j, done[j.id]) for j in d.jobs)
    if kind == "deadhead":
        return sum(tl.deadhead for tl in timeline(d, plan).values())
    if kind == "vehicles_used":
        return sum(1 for jobs in plan.routes.values() if jobs)
    if kind == "pickup_score":
        arrive = {leg.job: leg.arrive for tl in timeline(d, plan).values() for leg in tl.legs}
        return sum(j.points * arrive[j.id] for j in d.jobs)
    if kind == "changes":
        was = predecessors(as_model(tp, CurrentRoutes).existing)
        now = predecessors(plan.routes)
        return sum(1 for j in d.jobs if now[j.id] != was.get(j.id))
    raise ValueError(f"unknown objective kind {term.kind!r}")


def neighbours(d: DispatchData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one job moved to another place in any route (its own
    or another vehicle's), or two jobs swapped."""
    routes = {v.id: list(plan.routes.get(v.id, ())) for v in d.vehicles}
    for v, jobs in routes.items():
        for k, jid in enumerate(jobs):
            rest = jobs[:k] + jobs[k + 1 :]
            for w, other in routes.items():
                base = rest if w == v else other
                for pos in range(len(base) + 1):
                    if w == v and pos == k:
                        continue
                    new = {**{x: tuple(y) for x, y in routes.items()}, v: tuple(rest)}
                    new[w] = (*base[:pos], jid, *base[pos:])
                    yield Plan(new)
    where = [(v, k) for v, jobs in routes.items() for k in range(len(jobs))]
    for (va, ka), (vb, kb) in itertools.combinations(where, 2):
        new_routes = {x: list(y) for x, y in routes.items()}
        new_routes[va][ka], new_routes[vb][kb] = routes[vb][kb], routes[va][ka]
        yield Plan({x: tuple(y) for x, y in new_routes.items()})


class Dispatch(PlanChecker):
    family = "routing"
    task = TASK_ID
    plan_key = "routes"
    plan_text = (
        "a list of routes, each naming a listed vehicle (at most once) and its jobs in the order it does them, with "
        "every job in exactly one route (a vehicle not listed does no job)"
    )
    data_type = DispatchData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: DispatchData) -> dict[str, Any]:
        return {"vehicle": lookup([v.id for v in d.vehicles]), "job": lookup([j.id for j in d.jobs])}

    def read_plan(
        self, d: DispatchData, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Plan | None, str]:
        rows, why = owner_rows(section, "routes", "vehicle", "jobs", lk["vehicle"], "route")
        if rows is None:
            return None, why
        routes: dict[str, tuple[str, ...]] = {}
        seen: set[str] = set()
        names = lk["job"]
        for k, v, jobs in rows:
            order: list[str] = []
            for text in jobs:
                jid = names.find(text) if isinstance(text, str) else None
                if jid is None:
                    return None, f"route {k + 1} names unknown job {str(text)[:40]!r}"
                if jid in seen:
                    return None, f"job {jid} appears more than once"
                seen.add(jid)
                order.append(jid)
            routes[v] = tuple(order)
        if len(seen) < len(d.jobs):  # every job read is one of the data's, each once
            missing = [j.id for j in d.jobs if j.id not in seen]
            return None, f"jobs missing from the routes: {', '.join(missing)}"
        return Plan({v.id: routes.get(v.id, ()) for v in d.vehicles}), "complete plan"

    def objective_value(self, d: DispatchData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: DispatchData, plan: Plan) -> dict[str, dict[str, int]]:
        tl = timeline(d, plan)
        return {"finish": finishes(d, plan), "deadhead": {v: t.deadhead for v, t in tl.items()}}

    def existing(self, d: DispatchData, plan: Plan) -> dict[str, list[str]]:
        return {v.id: list(plan.routes[v.id]) for v in d.vehicles if plan.routes[v.id]}

    def plan_schema(self, d: DispatchData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        row = {
            "type": "object",
            "properties": {
                "vehicle": {"enum": [v.id for v in d.vehicles]},
                "jobs": {"type": "array", "items": {"enum": [j.id for j in d.jobs]}, "description": "in order"},
            },
            "required": ["vehicle", "jobs"],
        }
        return {"type": "array", "items": row, "description": "each vehicle at most once; every job exactly once"}

    def verification_schema(self, d: DispatchData) -> dict[str, Any]:
        return figures_schema({
            "finish": ([j.id for j in d.jobs], "for each job, the minute it finishes"),
            "deadhead": ([v.id for v in d.vehicles], "for each vehicle, the minutes it drives empty"),
        })  # fmt: skip

    def plan_json(self, d: DispatchData, plan: Plan) -> list[dict[str, Any]]:
        return [{"vehicle": v.id, "jobs": list(plan.routes[v.id])} for v in d.vehicles if plan.routes[v.id]]

    def neighbours(self, data: DispatchData, plan: Plan) -> Iterator[Plan]:
        """One move from ``plan`` (see :func:`neighbours`), for the kit's near misses."""
        return neighbours(data, plan)

    def baseline_plan(self, d: DispatchData, instance: Instance) -> Plan:
        """Jobs by release minute: each to the vehicle of its type that can start it
        earliest, appended to its route. Greedy and blind to deadhead, lateness weights
        and every rule but the vehicle type."""
        routes: dict[str, list[str]] = {v.id: [] for v in d.vehicles}
        free = {v.id: (0, d.depot) for v in d.vehicles}
        for j in sorted(d.jobs, key=lambda j: (j.release, j.id)):
            options = [v for v in d.vehicles if v.type == j.needs] or list(d.vehicles)

            def start(v: Vehicle, j: Job = j) -> int:
                t, at = free[v.id]
                return max(t + d.minutes[at][j.origin], j.release)

            best = min(options, key=start)
            free[best.id] = (start(best) + d.duration(j), j.dest)
            routes[best.id].append(j.id)
        return Plan({v: tuple(jobs) for v, jobs in routes.items()})


TASK = Dispatch()
