"""Checks for IT System Maintenance Planning answers: every maintenance task (a patch, an
upgrade, a migration, a reboot) on an IT service gets a whole-number start hour.

This module is the grader's second implementation of every rule: it holds the task's data
model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. A task of duration d started at hour s runs in the hours s .. s+d-1 (the
half-open interval [s, s+d)). A service is down in every hour in which a task on it, or a
task on any service it depends on (directly or through other services), runs: that is
how dependency-induced downtime is counted. Every figure is recomputed from the plan in
plain Python integers.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import OK, PlanChecker, lookup, start_rows
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse, problem
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "it_system_maintenance_planning"


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Window(_Frozen):
    """Hours ``start`` .. ``end`` - 1 in which maintenance on a service is allowed."""

    start: NonNegativeInt
    end: PositiveInt

    @model_validator(mode="after")
    def _ordered(self) -> Window:
        if self.end <= self.start:
            raise ValueError(f"window {self.start}-{self.end} is empty")
        return self


class Service(_Frozen):
    id: str
    name: str
    users: PositiveInt = Field(description="users affected per hour the service is down")
    depends_on: tuple[str, ...] = Field(default=(), description="services it needs (down when they are down)")
    cluster: str = Field(default="", description="cluster or rack it runs in (tasks in one cluster never overlap)")
    windows: tuple[Window, ...] = Field(min_length=1, description="allowed maintenance windows, in hour order")


class MTask(_Frozen):
    id: str
    name: str
    service: str
    duration: PositiveInt = Field(description="hours")
    staff: PositiveInt = Field(default=1, description="engineers the task needs while it runs")
    risk: PositiveInt = Field(default=1, description="risk points: exposure weighs the end hour by them")
    skill: str = Field(default="", description="the specialist skill the task needs (one specialist while it runs)")


class MaintData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    services: tuple[Service, ...] = Field(min_length=1)
    tasks: tuple[MTask, ...] = Field(min_length=1)
    horizon: PositiveInt = Field(description="every task ends by this hour")
    engineers: PositiveInt = Field(description="engineers on call in every hour")
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> MaintData:
        """Malformed data is refused with the entity at fault named (never half-read)."""
        for what, ids in (("service", [s.id for s in self.services]), ("task", [t.id for t in self.tasks])):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            if dup:
                raise ValueError(f"{what} ids are not unique: {', '.join(dup)}")
        known = {s.id for s in self.services}
        for s in self.services:
            for p in s.depends_on:
                if p not in known or p == s.id:
                    raise ValueError(f"service {s.id} depends on unknown service {p!r}")
            for w in s.windows:
                if w.end > self.horizon:
                    raise ValueError(f"service {s.id} has a window ending at {w.end}, after the horizon {self.horizon}")
        for t in self.tasks:
            if t.service not in known:
                raise ValueError(f"task {t.id} names unknown service {t.service!r}")
            if t.staff > self.engineers:
                raise ValueError(f"task {t.id} needs {t.staff} engineers, only {self.engineers} are on call")
        seen: set[str] = set()
        for s in self.services:  # providers are listed before their dependents: no cycle
            if any(p not in seen for p in s.depends_on):
                raise ValueError(f"service {s.id} depends on a service listed after it (dependencies form a cycle?)")
            seen.add(s.id)
        return self

    @cached_property
    def service_by_id(self) -> dict[str, Service]:
        return {s.id: s for s in self.services}

    @cached_property
    def task_by_id(self) -> dict[str, MTask]:
        return {t.id: t for t in self.tasks}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``);
        a skill is one some task needs (a rule about another would hold of nobody)."""
        if what == "skill":
            return {t.skill for t in self.tasks if t.skill}
        names: dict[str, Container[str]] = {"task": self.task_by_id, "service": self.service_by_id}
        return names[what]

    @cached_property
    def task_duration(self) -> dict[str, int]:
        """Duration by id, in the data's order (what a schedule must cover)."""
        return {t.id: t.duration for t in self.tasks}

    @cached_property
    def on_service(self) -> dict[str, tuple[MTask, ...]]:
        return {s.id: tuple(t for t in self.tasks if t.service == s.id) for s in self.services}

    @cached_property
    def providers(self) -> dict[str, tuple[str, ...]]:
        """Service -> itself and every service it depends on, directly or not (in listed order)."""
        out: dict[str, tuple[str, ...]] = {}
        for s in self.services:
            found = {s.id}
            for p in s.depends_on:
                found |= set(out[p])
            out[s.id] = tuple(x.id for x in self.services if x.id in found)
        return out

    @cached_property
    def affecting(self) -> dict[str, tuple[MTask, ...]]:
        """Service -> the tasks whose hours take it down (its own and its providers')."""
        return {s.id: tuple(t for t in self.tasks if t.service in self.providers[s.id]) for s in self.services}

    @cached_property
    def clusters(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.cluster for s in self.services if s.cluster))

    def in_cluster(self, cluster: str) -> tuple[MTask, ...]:
        found = self.tasks_by_cluster.get(cluster)
        return found if found is not None else ()

    @cached_property
    def tasks_by_cluster(self) -> dict[str, tuple[MTask, ...]]:
        """Cluster -> its services' tasks, in task order (what in_cluster answers, worked out once)."""
        out: dict[str, list[MTask]] = {}
        for t in self.tasks:
            out.setdefault(self.service_by_id[t.service].cluster, []).append(t)
        return {c: tuple(ts) for c, ts in out.items()}

    def starts(self, t: MTask, extra: int = 0) -> list[int]:
        """The start hours at which ``t`` (lengthened by ``extra`` hours) fits one of its service's windows."""
        out: list[int] = []
        for w in self.service_by_id[t.service].windows:
            out += [s for s in range(w.start, w.end - t.duration - extra + 1) if s not in out]
        return sorted(out)


def replaced(d: MaintData, **changes: Any) -> MaintData:
    """``d`` with fields replaced, as a new object (``model_copy`` would keep the old cached lookups)."""
    return MaintData.model_validate({**{f: getattr(d, f) for f in MaintData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
TaskName = Annotated[str, Names("task")]
ServiceName = Annotated[str, Names("service")]
SkillName = Annotated[str, Names("skill")]


class Precedence(Params):
    """For each pair (a, b), task b starts no earlier than the hour task a ends."""

    pairs: list[tuple[TaskName, TaskName]]


class Deadline(Params):
    """Each named task ends by hour ``by``."""

    tasks: list[TaskName]
    by: NonNegativeInt


class Freeze(Params):
    """No task runs during hours ``start`` .. ``end`` - 1 (a change freeze)."""

    start: NonNegativeInt
    end: PositiveInt


class NotBefore(Params):
    """The task starts at hour ``at`` or later (its vendor patch arrives late)."""

    task: TaskName
    at: NonNegativeInt


class Rollback(Params):
    """After each named (risky) task, ``hours`` rollback hours are kept: no other task on its
    service runs from its start until ``hours`` after its end, and that end plus ``hours`` is
    within the horizon."""

    tasks: list[TaskName]
    hours: PositiveInt


class NotTogether(Params):
    """For each pair, the two tasks never run in the same hour."""

    pairs: list[tuple[TaskName, TaskName]]


class MaxParallel(Params):
    """At most ``max`` tasks run in any hour (the change board's limit)."""

    max: PositiveInt


class Uptime(Params):
    """The service is up (no task on it or on any service it depends on runs) in hours
    ``start`` .. ``end`` - 1 (its business hours)."""

    service: ServiceName
    start: NonNegativeInt
    end: PositiveInt


class DowntimeBudget(Params):
    """The service is down (counting its providers' tasks) for at most ``hours`` hours in all."""

    service: ServiceName
    hours: NonNegativeInt


class Specialists(Params):
    """At most ``max`` tasks needing the ``skill`` run in any hour (so many specialists on call)."""

    skill: SkillName
    max: PositiveInt


class BusyRun(Params):
    """The on-call team works at most ``hours`` hours in a row: no ``hours`` + 1 consecutive
    hours each have a task running."""

    hours: PositiveInt


class OverrunBuffer(Params):
    """Robustness: every task could overrun by ``hours`` hours and still end inside its
    maintenance window, and (with ``clusters``) two tasks of one cluster stay apart even
    so (each task counted ``hours`` longer)."""

    hours: PositiveInt
    clusters: bool = True


class CurrentStarts(Params):
    """The current plan a ``changes`` term counts against: task -> start hour."""

    existing: dict[TaskName, int]

    def data_problems(self, data: Any) -> list[str]:
        """Also: the plan covers every task (the ``changes`` figure compares each task's start hour)."""
        found = super().data_problems(data)
        missing = [x for x in data.task_by_id if x not in self.existing]
        return found + problem("the current plan has no start hour for task", missing)


RULE_PARAMS: ParamsTable = {
    "windows": NoParams,
    "engineer_capacity": NoParams,
    "cluster_exclusive": NoParams,
    "precedence": Precedence,
    "deadline": Deadline,
    "change_freeze": Freeze,
    "not_before": NotBefore,
    "rollback_slot": Rollback,
    "not_together": NotTogether,
    "max_parallel": MaxParallel,
    "service_uptime": Uptime,
    "downtime_budget": DowntimeBudget,
    "specialists": Specialists,
    "busy_run": BusyRun,
    "overrun_buffer": OverrunBuffer,
}
TERM_PARAMS: ParamsTable = {
    "downtime": NoParams,
    "finish": NoParams,
    "exposure": NoParams,
    "changes": CurrentStarts,
}


def current_plan(changes: ObjectiveTerm) -> dict[str, int]:
    """The current plan of a ``changes`` term (task -> start hour)."""
    return as_model(parse(TERM_PARAMS, changes), CurrentStarts).existing


# -- the plan --------------------------------------------------------------------------
Plan = dict[str, int]  # task id -> start hour


def end(plan: Plan, t: MTask, extra: int = 0) -> int:
    return plan[t.id] + t.duration + extra


def hours_of(plan: Plan, t: MTask, extra: int = 0) -> range:
    return range(plan[t.id], end(plan, t, extra))


def overlap(plan: Plan, a: MTask, b: MTask, extra: int = 0) -> bool:
    return plan[a.id] < end(plan, b, extra) and plan[b.id] < end(plan, a, extra)


def down_hours(d: MaintData, plan: Plan, service: str) -> set[int]:
    """The hours the service is down: some task on it or on a service it depends on runs."""
    return {h for t in d.affecting[service] for h in hours_of(plan, t)}


def load(d: MaintData, plan: Plan, extra: int = 0) -> dict[int, tuple[int, int]]:
    """Hour -> (tasks running, engineers busy)."""
    out: dict[int, tuple[int, int]] = {}
    for t in d.tasks:
        for h in hours_of(plan, t, extra):
            n, e = out.get(h, (0, 0))
            out[h] = (n + 1, e + t.staff)
    return out


def longest_run(hours: set[int]) -> tuple[int, int]:
    """(the longest run of consecutive hours in the set, the hour that run starts)."""
    best, at = 0, 0
    for h in sorted(hours):
        if h - 1 not in hours:
            k = h
            while k in hours:
                k += 1
            if k - h > best:
                best, at = k - h, h
    return best, at


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
def _windows_hold(d: MaintData, plan: Plan, extra: int) -> Verdict:
    for t in d.tasks:
        s, e = plan[t.id], end(plan, t, extra)
        if not any(w.start <= s and e <= w.end for w in d.service_by_id[t.service].windows):
            return False, f"{t.id} runs {s}-{e}, outside every maintenance window of {t.service}"
    return OK


def _capacity_holds(d: MaintData, plan: Plan) -> Verdict:
    for h, (_, busy) in sorted(load(d, plan).items()):
        if busy > d.engineers:
            return False, f"{busy} engineers are needed in hour {h} (only {d.engineers} on call)"
    return OK


def _clusters_hold(d: MaintData, plan: Plan, extra: int) -> Verdict:
    for c in d.clusters:
        ts = d.in_cluster(c)
        for i, a in enumerate(ts):
            for b in ts[i + 1 :]:
                if overlap(plan, a, b, extra):
                    return False, f"{a.id} and {b.id} both run in cluster {c} at the same hour"
    return OK


@check("windows")
def _windows(d: MaintData, plan: Plan, p: NoParams) -> Verdict:
    return _windows_hold(d, plan, 0)


@check("engineer_capacity")
def _engineer_capacity(d: MaintData, plan: Plan, p: NoParams) -> Verdict:
    return _capacity_holds(d, plan)


@check("cluster_exclusive")
def _cluster_exclusive(d: MaintData, plan: Plan, p: NoParams) -> Verdict:
    return _clusters_hold(d, plan, 0)


@check("precedence")
def _precedence(d: MaintData, plan: Plan, p: Precedence) -> Verdict:
    for a, b in p.pairs:
        done = end(plan, d.task_by_id[a])
        if plan[b] < done:
            return False, f"{b} starts at {plan[b]}, before {a} ends at {done}"
    return OK


@check("deadline")
def _deadline(d: MaintData, plan: Plan, p: Deadline) -> Verdict:
    for tid in p.tasks:
        done = end(plan, d.task_by_id[tid])
        if done > p.by:
            return False, f"{tid} ends at {done}, after its deadline {p.by}"
    return OK


@check("change_freeze")
def _change_freeze(d: MaintData, plan: Plan, p: Freeze) -> Verdict:
    for t in d.tasks:
        if plan[t.id] < p.end and end(plan, t) > p.start:
            return False, f"{t.id} runs during the change freeze {p.start}-{p.end}"
    return OK


@check("not_before")
def _not_before(d: MaintData, plan: Plan, p: NotBefore) -> Verdict:
    if plan[p.task] < p.at:
        return False, f"{p.task} starts at {plan[p.task]}, before {p.at}"
    return OK


@check("rollback_slot")
def _rollback_slot(d: MaintData, plan: Plan, p: Rollback) -> Verdict:
    for tid in p.tasks:
        t = d.task_by_id[tid]
        kept = end(plan, t, p.hours)
        if kept > d.horizon:
            return False, f"{tid}'s rollback hours run to {kept}, past the horizon {d.horizon}"
        for o in d.on_service[t.service]:
            if o.id != tid and plan[o.id] < kept and end(plan, o) > plan[tid]:
                return False, f"{o.id} runs on {t.service} during {tid} or its rollback hours ({plan[tid]}-{kept})"
    return OK


@check("not_together")
def _not_together(d: MaintData, plan: Plan, p: NotTogether) -> Verdict:
    for a, b in p.pairs:
        if overlap(plan, d.task_by_id[a], d.task_by_id[b]):
            return False, f"{a} and {b} run in the same hour"
    return OK


@check("max_parallel")
def _max_parallel(d: MaintData, plan: Plan, p: MaxParallel) -> Verdict:
    for h, (n, _) in sorted(load(d, plan).items()):
        if n > p.max:
            return False, f"{n} tasks run in hour {h} (at most {p.max})"
    return OK


@check("specialists")
def _specialists(d: MaintData, plan: Plan, p: Specialists) -> Verdict:
    count: dict[int, int] = {}
    for t in d.tasks:
        if t.skill == p.skill:
            for h in hours_of(plan, t):
                count[h] = count.get(h, 0) + 1
    for h, n in sorted(count.items()):
        if n > p.max:
            return False, f"{n} tasks needing {p.skill} run in hour {h} (only {p.max} on call)"
    return OK


@check("service_uptime")
def _service_uptime(d: MaintData, plan: Plan, p: Uptime) -> Verdict:
    hit = sorted(h for h in down_hours(d, plan, p.service) if p.start <= h < p.end)
    if hit:
        return False, f"{p.service} is down in hour {hit[0]}, inside its business hours {p.start}-{p.end}"
    return OK


@check("downtime_budget")
def _downtime_budget(d: MaintData, plan: Plan, p: DowntimeBudget) -> Verdict:
    used = len(down_hours(d, plan, p.service))
    if used > p.hours:
        return False, f"{p.service} is down {used} hours (its budget is {p.hours})"
    return OK


@check("busy_run")
def _busy_run(d: MaintData, plan: Plan, p: BusyRun) -> Verdict:
    run, at = longest_run(set(load(d, plan)))
    if run > p.hours:
        return False, f"tasks run {run} hours in a row from hour {at} (at most {p.hours})"
    return OK


@check("overrun_buffer")
def _overrun_buffer(d: MaintData, plan: Plan, p: OverrunBuffer) -> Verdict:
    for verdict in (_windows_hold(d, plan, p.hours), _clusters_hold(d, plan, p.hours) if p.clusters else OK):
        if not verdict[0]:
            return False, f"with a {p.hours}-hour overrun: {verdict[1]}"
    return OK


# -- objective -------------------------------------------------------------------------
def downtime(d: MaintData, plan: Plan) -> int:
    """User-hours of downtime: each service's users × the hours it is down, summed."""
    return sum(s.users * len(down_hours(d, plan, s.id)) for s in d.services)


def finish(d: MaintData, plan: Plan) -> int:
    return max(end(plan, t) for t in d.tasks)


def exposure(d: MaintData, plan: Plan) -> int:
    return sum(t.risk * end(plan, t) for t in d.tasks)


def objective_value(d: MaintData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "downtime":
        return downtime(d, plan)
    if kind == "finish":
        return finish(d, plan)
    if kind == "exposure":
        return exposure(d, plan)
    if kind == "changes":
        old = as_model(tp, CurrentStarts).existing
        return sum(1 for t in d.tasks if plan[t.id] != old[t.id])
    raise ValueError(f"unknown objective kind {term.kind!r}")


def verification(d: MaintData, plan: Plan) -> dict[str, dict[str, int]]:
    """The stated figures: each task's end hour and each service's down hours."""
    return {
        "task_end": {t.id: end(plan, t) for t in d.tasks},
        "service_down": {s.id: len(down_hours(d, plan, s.id)) for s in d.services},
    }


def neighbours(d: MaintData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one task moved to any other start hour of the
    horizon, or two tasks swapped (each starting where the other started)."""
    for t in d.tasks:
        for s in range(d.horizon - t.duration + 1):
            if s != plan[t.id]:
                yield {**plan, t.id: s}
    for i, a in enumerate(d.tasks):
        for b in d.tasks[i + 1 :]:
            sa, sb = plan[b.id], plan[a.id]
            if sa != sb and sa + a.duration <= d.horizon and sb + b.duration <= d.horizon:
                yield {**plan, a.id: sa, b.id: sb}


class MaintenancePlanning(PlanChecker):
    family = "project"
    task = TASK_ID
    plan_key = "schedule"
    plan_text = (
        "a schedule naming every maintenance task exactly once with a listed task id and a whole-number start "
        "hour from 0, each task ending by the horizon"
    )
    data_type = MaintData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: MaintData) -> dict[str, Any]:
        return {"task": lookup([t.id for t in d.tasks])}

    def read_plan(self, d: MaintData, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Plan | None, str]:
        return start_rows(section, "task", "tasks", lk["task"], d.task_duration, d.horizon, "hour")

    def objective_value(self, d: MaintData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: MaintData, plan: Plan) -> dict[str, dict[str, int]]:
        return verification(d, plan)

    def existing(self, d: MaintData, plan: Plan) -> dict[str, int]:
        return {t.id: plan[t.id] for t in d.tasks}

    def plan_schema(self, d: MaintData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        row = {
            "type": "object",
            "properties": {
                "task": {"enum": [t.id for t in d.tasks]},
                "start": {"type": "integer", "minimum": 0, "description": "start hour"},
            },
            "required": ["task", "start"],
        }
        return {"type": "array", "items": row, "description": "every maintenance task exactly once"}

    def verification_schema(self, d: MaintData) -> dict[str, Any]:
        return figures_schema({
            "task_end": ([t.id for t in d.tasks], "for each task, the hour it ends"),
            "service_down": ([s.id for s in d.services], "for each service, the hours it is down (own and providers' tasks)"),
        })  # fmt: skip

    def plan_json(self, d: MaintData, plan: Plan) -> list[dict[str, Any]]:
        return [{"task": t.id, "start": plan[t.id]} for t in d.tasks]

    def neighbours(self, data: MaintData, plan: Plan) -> Iterator[Plan]:
        """One move from ``plan`` (see :func:`neighbours`), for the kit's near misses."""
        return neighbours(data, plan)

    def baseline_plan(self, d: MaintData, instance: Instance) -> Plan:
        """Tasks in listed order, each at the first start hour in its service's windows
        where the engineers on call suffice and its cluster is free (else at its first window
        start): valid for the base rules mostly, blind to dependencies, freezes and the
        objective."""
        plan: Plan = {}
        for t in d.tasks:
            options = d.starts(t) or [0]
            chosen = options[0]
            for s in options:
                trial = {**plan, t.id: s}
                placed = [x for x in d.tasks if x.id in trial]
                sub = replaced(d, tasks=tuple(placed))
                if _capacity_holds(sub, trial)[0] and _clusters_hold(sub, trial, 0)[0]:
                    chosen = s
                    break
            plan[t.id] = chosen
        return plan


TASK = MaintenancePlanning()
