"""IT System Maintenance Planning: patches, upgrades, migrations and reboots on IT services
over the hours of a maintenance night.

Decision: the start hour s[t] of every maintenance task t (the answer's integers);
window and freeze rules are domain constraints on the starts, and the hours a task runs
come from order literals (s[t] <= h) where downtime needs them. Time rules are built on interval variables, as PyJobShop builds its CP-SAT
model: the engineers on call are ``add_cumulative`` over the tasks' intervals (demand:
the engineers a task needs), a cluster's tasks are ``add_no_overlap``, and the change
board's limit is one more cumulative; every interval of a rule is optional with the
rule's enforcement literal as its presence, so every numbered rule can be switched off.

Downtime follows the service dependencies: a service is down in an hour when a task on
it or on any service it depends on runs (an exact max equality per service and hour),
so the primary objective -- user-hours of downtime, each service's users times its down
hours -- rewards stacking the tasks of dependent services into the same hours. The
second stated term is the exposure (each task's end hour times its risk points; the
points are distinct), which pins every task the first term leaves free, so optima are
unique: no two tasks are interchangeable (each has its own service, duration and
points), so there is no symmetry to canonicalise.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.project import maintenance as mc
from pbsolve.checkers.project.maintenance import MaintData, MTask, Plan, Service, Window
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
from pbsolve.params import NoParams, Params, make_rule
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=mc.TASK_ID,
    name="IT System Maintenance Planning",
    family="project",
    summary="start hours for patches, upgrades and reboots on dependent IT services: maintenance windows, "
    "engineers on call, rollback hours, freezes; user-hours of downtime",
    subtasks=(
        SubtaskSpec(
            "web_patch_night",
            "Web stack patch night",
            "monthly patches on load balancers, web and app servers in clusters that allow one change at a time",
        ),
        SubtaskSpec(
            "db_migration",
            "Database migration weekend",
            "schema and data migrations ordered before the application upgrades, with business hours kept up",
        ),
        SubtaskSpec(
            "rack_move",
            "Data-centre rack move",
            "servers moved between racks under the change board's limit; finish the move as early as possible",
        ),
        SubtaskSpec(
            "k8s_upgrade",
            "Kubernetes cluster upgrade",
            "rolling node drains, one node per cluster at a time, with an on-call team that must rest",
        ),
        SubtaskSpec(
            "bank_freeze",
            "Core-banking change freeze",
            "a change freeze around the batch run and rollback hours kept free after risky changes",
        ),
    ),
    pool=(
        ConstraintSpec("windows", "basic", "each task runs inside an allowed maintenance window of its service"),
        ConstraintSpec("engineer_capacity", "basic", "the engineers the running tasks need never exceed those on call"),
        ConstraintSpec("cluster_exclusive", "basic", "tasks in the same cluster or rack never run at the same hour"),
        ConstraintSpec("precedence", "basic", "named tasks finish before others start (database before application)"),
        ConstraintSpec("deadline", "basic", "named tasks (security patches) end by a stated hour"),
        ConstraintSpec("change_freeze", "basic", "no task runs during a change freeze"),
        ConstraintSpec("rollback_slot", "medium", "rollback hours kept free on the service after a risky change"),
        ConstraintSpec("not_together", "medium", "named pairs of tasks never run in the same hour"),
        ConstraintSpec("max_parallel", "medium", "the change board allows at most so many tasks at once"),
        ConstraintSpec("specialists", "medium", "tasks needing a skill (DBA, network) never outnumber its specialists"),
        ConstraintSpec(
            "service_uptime", "medium", "a service stays up in its business hours, counting its providers' tasks"
        ),
        ConstraintSpec(
            "downtime_budget", "stateful", "a service's cumulative down hours (its providers' included) stay in budget"
        ),
        ConstraintSpec("busy_run", "stateful", "the on-call team works at most so many hours in a row (fatigue)"),
        *mechanism_pool(
            "every task could overrun by a stated number of hours and still keep windows, engineers and clusters",
            replan="repair a maintenance plan after a late vendor patch or an incident freeze with the fewest moved tasks",
        ),
    ),
    base_rules=("windows", "engineer_capacity"),
)

SKILLS = ("database administration", "networking")
SERVICES = {
    "web_patch_night": ("Load balancer", "Web server A", "Web server B", "App server", "Cache", "Auth service",
                        "Search", "CDN edge"),
    "db_migration": ("Primary database", "Replica database", "Order service", "Billing service", "Reporting",
                     "Web shop", "Message queue", "Admin portal"),
    "rack_move": ("Storage array", "File server", "Mail server", "Backup server", "Build server", "Wiki",
                  "Ticketing", "VPN gateway"),
    "k8s_upgrade": ("Control plane", "Node pool A1", "Node pool A2", "Node pool B1", "Node pool B2", "Ingress",
                    "Monitoring", "Registry"),
    "bank_freeze": ("Core ledger", "Payments gateway", "Card switch", "Online banking", "Mobile API", "ATM network",
                    "Fraud engine", "Statements"),
}  # fmt: skip
CLUSTERS = {
    "web_patch_night": ("web cluster", "app cluster"),
    "db_migration": ("database cluster", "service cluster"),
    "rack_move": ("rack 12", "rack 14"),
    "k8s_upgrade": ("cluster east", "cluster west"),
    "bank_freeze": ("mainframe", "distributed tier"),
}
VERBS = {
    "web_patch_night": ("patch", "reboot", "upgrade"),
    "db_migration": ("migrate", "upgrade", "reindex"),
    "rack_move": ("move", "recable", "reboot"),
    "k8s_upgrade": ("drain and upgrade", "upgrade", "restart"),
    "bank_freeze": ("patch", "upgrade", "reboot"),
}
OBJECTIVES = {
    "web_patch_night": ("downtime", "exposure"),
    "db_migration": ("downtime", "exposure"),
    "rack_move": ("finish", "exposure"),
    "k8s_upgrade": ("downtime", "exposure"),
    "bank_freeze": ("downtime", "exposure"),
}
FORCED = {
    "web_patch_night": ("cluster_exclusive",),
    "db_migration": ("precedence", "service_uptime"),
    "rack_move": ("max_parallel",),
    "k8s_upgrade": ("cluster_exclusive", "busy_run"),
    "bank_freeze": ("change_freeze", "rollback_slot"),
}


class MaintSizes(Settings):
    """How big a maintenance instance is."""

    services: PositiveInt = Field(ge=2, le=8)
    tasks: PositiveInt = Field(ge=2, le=14)
    hours: PositiveRange = Field(description="hours of one task")
    engineers: PositiveInt = Field(ge=1, le=6, description="engineers on call")
    slack: PositiveInt = Field(description="hours after the witness's last task up to the horizon")


SIZES = SizeTable[MaintSizes](
    tiny=MaintSizes(services=2, tasks=3, hours=PositiveRange(lo=1, hi=2), engineers=2, slack=1),
    small=MaintSizes(services=3, tasks=4, hours=PositiveRange(lo=1, hi=3), engineers=2, slack=2),
    default=MaintSizes(services=4, tasks=5, hours=PositiveRange(lo=1, hi=3), engineers=3, slack=2),
    large=MaintSizes(services=8, tasks=12, hours=PositiveRange(lo=1, hi=4), engineers=4, slack=4),
)
PARAMETERS: dict[str, Any] = {"linearization_level": 0}  # the LP relaxation slows these small models 2-4x (measured)
UNIQUENESS_PARAMETERS: dict[str, Any] = {"cp_model_presolve": False}
PROBE_TIME = 2.0  # deterministic seconds per hard-tier feasibility probe


# -- the CP-SAT model ------------------------------------------------------------------
class MaintModel(ModelBase):
    def __init__(self, data: MaintData) -> None:
        super().__init__()
        self.data = d = data
        self.s: dict[str, cp_model.IntVar] = {
            t.id: self.m.new_int_var(0, d.horizon - t.duration, f"s[{t.id}]") for t in d.tasks
        }
        self._le: dict[tuple[str, int], cp_model.IntVar] = {}
        self._down: dict[tuple[str, int], cp_model.IntVar] = {}
        self._busy: dict[int, cp_model.IntVar] = {}

    def end(self, t: MTask) -> cp_model.LinearExpr:
        return self.s[t.id] + t.duration

    def intervals(self, tasks: list[MTask], lit: cp_model.IntVar, tag: str, extra: int = 0) -> list[Any]:
        """Optional fixed-size intervals of ``tasks`` (lengthened by ``extra``), present exactly when the rule's literal is on."""
        return [
            self.m.new_optional_fixed_size_interval_var(self.s[t.id], t.duration + extra, lit, f"{tag}[{t.id}]")
            for t in tasks
        ]

    def forbid_starts(self, t: MTask, bad: Callable[[int], bool], lit: cp_model.IntVar) -> None:
        """Under the rule's literal, no start k of ``t`` with ``bad(k)`` (a domain constraint)."""
        ok = [k for k in range(self.data.horizon - t.duration + 1) if not bad(k)]
        if len(ok) <= self.data.horizon - t.duration:
            domain = cp_model.Domain.from_values(ok) if ok else cp_model.Domain(1, 0)
            self.m.add_linear_expression_in_domain(self.s[t.id], domain).only_enforce_if(lit)

    def started_by(self, t: MTask, h: int) -> cp_model.IntVar | int:
        """1 exactly when ``t`` starts at hour ``h`` or earlier (constant outside its start range)."""
        if h < 0:
            return 0
        if h >= self.data.horizon - t.duration:
            return 1
        key = (t.id, h)
        if key not in self._le:
            v = self.m.new_bool_var(f"le[{t.id},{h}]")
            self.m.add(self.s[t.id] <= h).only_enforce_if(v)
            self.m.add(self.s[t.id] >= h + 1).only_enforce_if(~v)
            self._le[key] = v
        return self._le[key]

    def apart(self, a: MTask, b: MTask, lit: cp_model.IntVar, gap_ab: int = 0) -> None:
        """Under ``lit``, b runs wholly before a starts, or b starts at least ``gap_ab``
        hours after a ends (one order Boolean)."""
        first = self.m.new_bool_var("")
        self.m.add(self.s[b.id] >= self.end(a) + gap_ab).only_enforce_if([lit, first])
        self.m.add(self.end(b) <= self.s[a.id]).only_enforce_if([lit, ~first])

    def running(self, t: MTask, h: int) -> Any:
        """1 exactly when ``t`` runs in hour ``h`` (started by h, not by h - duration): a 0/1
        linear expression of two order literals."""
        return self.started_by(t, h) - self.started_by(t, h - t.duration)

    def _any(self, tasks: tuple[MTask, ...], name: str, h: int) -> cp_model.IntVar:
        """A Boolean equal to 1 exactly when one of ``tasks`` runs in hour ``h``."""
        v = self.m.new_bool_var(name)
        runs = [self.running(t, h) for t in tasks]
        for r in runs:
            self.m.add(v >= r)
        self.m.add(v <= sum(runs))
        return v

    def down(self, service: str, h: int) -> Any:
        """1 exactly when the service is down in hour ``h`` (a task on it or a provider runs)."""
        tasks = self.data.affecting[service]
        if not tasks:
            return 0
        if len(tasks) == 1:
            return self.running(tasks[0], h)
        key = (service, h)
        if key not in self._down:
            self._down[key] = self._any(tasks, f"down[{service},{h}]", h)
        return self._down[key]

    def busy(self, h: int) -> cp_model.IntVar:
        """1 exactly when some task runs in hour ``h``."""
        if h not in self._busy:
            self._busy[h] = self._any(self.data.tasks, f"busy[{h}]", h)
        return self._busy[h]


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


def _window_starts(tm: MaintModel, lit: cp_model.IntVar, extra: int) -> None:
    for t in tm.data.tasks:
        ok = set(tm.data.starts(t, extra))
        tm.forbid_starts(t, lambda k, ok=ok: k not in ok, lit)  # type: ignore[misc]


def _capacity(tm: MaintModel, lit: cp_model.IntVar) -> None:
    d = tm.data
    tasks = list(d.tasks)
    if sum(t.staff for t in tasks) > d.engineers:
        tm.m.add_cumulative(tm.intervals(tasks, lit, "eng"), [t.staff for t in tasks], d.engineers)


def _clusters(tm: MaintModel, lit: cp_model.IntVar, extra: int) -> None:
    for c in tm.data.clusters:
        tasks = list(tm.data.in_cluster(c))
        if len(tasks) > 1:
            tm.m.add_no_overlap(tm.intervals(tasks, lit, f"cl{c}{extra}", extra))


@encoder("windows")
def _windows(tm: MaintModel, p: NoParams, lit: cp_model.IntVar) -> None:
    _window_starts(tm, lit, 0)


@encoder("engineer_capacity")
def _engineer_capacity(tm: MaintModel, p: NoParams, lit: cp_model.IntVar) -> None:
    _capacity(tm, lit)


@encoder("cluster_exclusive")
def _cluster_exclusive(tm: MaintModel, p: NoParams, lit: cp_model.IntVar) -> None:
    _clusters(tm, lit, 0)


@encoder("precedence")
def _precedence(tm: MaintModel, p: mc.Precedence, lit: cp_model.IntVar) -> None:
    d = tm.data
    for a, b in p.pairs:
        tm.post(tm.s[b] >= tm.end(d.task_by_id[a]), lit)


@encoder("deadline")
def _deadline(tm: MaintModel, p: mc.Deadline, lit: cp_model.IntVar) -> None:
    for tid in p.tasks:
        tm.post(tm.end(tm.data.task_by_id[tid]) <= p.by, lit)


@encoder("change_freeze")
def _change_freeze(tm: MaintModel, p: mc.Freeze, lit: cp_model.IntVar) -> None:
    for t in tm.data.tasks:
        tm.forbid_starts(t, lambda k, t=t: k < p.end and k + t.duration > p.start, lit)  # type: ignore[misc]


@encoder("not_before")
def _not_before(tm: MaintModel, p: mc.NotBefore, lit: cp_model.IntVar) -> None:
    tm.post(tm.s[p.task] >= p.at, lit)


@encoder("rollback_slot")
def _rollback_slot(tm: MaintModel, p: mc.Rollback, lit: cp_model.IntVar) -> None:
    """The risky task's run plus its rollback hours, [s, e + hours), is kept clear of the
    service's other tasks (each runs wholly before it or starts after it) and ends by the horizon."""
    d = tm.data
    for tid in p.tasks:
        t = d.task_by_id[tid]
        tm.post(tm.end(t) + p.hours <= d.horizon, lit)
        for o in d.on_service[t.service]:
            if o.id != tid:
                tm.apart(t, o, lit, gap_ab=p.hours)


@encoder("not_together")
def _not_together(tm: MaintModel, p: mc.NotTogether, lit: cp_model.IntVar) -> None:
    d = tm.data
    for a, b in p.pairs:
        tm.m.add_no_overlap(tm.intervals([d.task_by_id[a], d.task_by_id[b]], lit, "apart"))


@encoder("max_parallel")
def _max_parallel(tm: MaintModel, p: mc.MaxParallel, lit: cp_model.IntVar) -> None:
    tasks = list(tm.data.tasks)
    tm.m.add_cumulative(tm.intervals(tasks, lit, "board"), [1] * len(tasks), p.max)


@encoder("specialists")
def _specialists(tm: MaintModel, p: mc.Specialists, lit: cp_model.IntVar) -> None:
    tasks = [t for t in tm.data.tasks if t.skill == p.skill]
    if len(tasks) > p.max:
        tm.m.add_cumulative(tm.intervals(tasks, lit, f"skill{p.skill}"), [1] * len(tasks), p.max)


@encoder("service_uptime")
def _service_uptime(tm: MaintModel, p: mc.Uptime, lit: cp_model.IntVar) -> None:
    for t in tm.data.affecting[p.service]:
        tm.forbid_starts(t, lambda k, t=t: k < p.end and k + t.duration > p.start, lit)  # type: ignore[misc]


@encoder("downtime_budget")
def _downtime_budget(tm: MaintModel, p: mc.DowntimeBudget, lit: cp_model.IntVar) -> None:
    tm.post(sum(tm.down(p.service, h) for h in range(tm.data.horizon)) <= p.hours, lit)


@encoder("busy_run")
def _busy_run(tm: MaintModel, p: mc.BusyRun, lit: cp_model.IntVar) -> None:
    """Every run of hours + 1 consecutive hours has an hour without a task."""
    horizon = tm.data.horizon
    for h in range(horizon - p.hours):
        tm.post(sum(tm.busy(k) for k in range(h, h + p.hours + 1)) <= p.hours, lit)


@encoder("overrun_buffer")
def _overrun_buffer(tm: MaintModel, p: mc.OverrunBuffer, lit: cp_model.IntVar) -> None:
    _window_starts(tm, lit, p.hours)
    if p.clusters:
        _clusters(tm, lit, p.hours)


def _objective(tm: MaintModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    if term.kind == "downtime":
        parts, weights = [], []
        fixed = 0  # a service only one task takes down is down for exactly that task's hours
        for sv in d.services:
            if len(d.affecting[sv.id]) <= 1:
                fixed += sv.users * sum(t.duration for t in d.affecting[sv.id])
                continue
            for h in range(d.horizon):
                parts.append(tm.down(sv.id, h))
                weights.append(sv.users)
        return cp_model.LinearExpr.weighted_sum(parts, weights) + fixed, sum(sv.users for sv in d.services) * d.horizon
    if term.kind == "finish":
        last = tm.m.new_int_var(0, d.horizon, "finish")
        tm.m.add_max_equality(last, [tm.end(t) for t in d.tasks])
        return last, d.horizon
    if term.kind == "exposure":
        expr = cp_model.LinearExpr.weighted_sum([tm.s[t.id] for t in d.tasks], [t.risk for t in d.tasks])
        return expr + sum(t.risk * t.duration for t in d.tasks), sum(t.risk for t in d.tasks) * d.horizon
    if term.kind == "changes":
        old = mc.current_plan(term)
        return sum(tm.differs(tm.s[t.id], old[t.id], f"moved[{t.id}]") for t in d.tasks), len(d.tasks)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = parsed(MaintData, draft.data)
    tm = MaintModel(data)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        return {"schedule": [{"task": t.id, "start": int(solver.value(tm.s[t.id]))} for t in data.tasks]}

    starts = [tm.s[t.id] for t in data.tasks]
    return solver_model(
        tm, draft, ENCODERS, mc.RULE_PARAMS, _objective, decode, [], starts,
        parameters=PARAMETERS, uniqueness_parameters=UNIQUENESS_PARAMETERS,
    )  # fmt: skip


# -- sampling --------------------------------------------------------------------------
@dataclass
class Witness:
    """A planted plan (task -> start) and the parameters of the rules it was built to keep."""

    plan: Plan
    planted: dict[str, Params] = field(default_factory=dict)


@dataclass
class Plant:
    """What the greedy witness must respect besides engineers and clusters."""

    blocked: set[int] = field(default_factory=set)  # hours no task runs in (a freeze, a planted rest hour)


def _entities(spec: GenerationSpec, sampled: list[str], rng: random.Random) -> MaintData:
    """Services with users, dependencies (on earlier services) and clusters (when the
    cluster rule is sampled), tasks on them; windows and horizon unset (placeholders)."""
    s = SIZES.of(spec.size)
    names = SERVICES[spec.subtask][: s.services]
    clusters = CLUSTERS[spec.subtask]
    users = rng.sample(range(1, 40), s.services)
    services = []
    for k, name in enumerate(names, 1):
        deps: tuple[str, ...] = ()
        if k > 1 and rng.random() < 0.6:
            deps = tuple(sorted(rng.sample([f"S{i}" for i in range(1, k)], 1 if k < 4 else rng.randint(1, 2))))
        cluster = rng.choice(clusters) if "cluster_exclusive" in sampled else ""
        services.append(
            Service(id=f"S{k}", name=name, users=users[k - 1] * 10, depends_on=deps, cluster=cluster,
                    windows=(Window(start=0, end=1),))
        )  # fmt: skip
    points = rng.sample(range(1, 3 * s.tasks + 1), s.tasks)
    verbs = VERBS[spec.subtask]
    tasks = []
    for k in range(1, s.tasks + 1):
        sv = services[(k - 1) % len(services)] if k <= len(services) else rng.choice(services)
        tasks.append(
            MTask(id=f"T{k}", name=f"{rng.choice(verbs)} {sv.name}", service=sv.id, duration=s.hours.draw(rng),
                  staff=rng.randint(1, min(2, s.engineers)), risk=points[k - 1],
                  skill=rng.choice(SKILLS) if "specialists" in sampled else "")
        )  # fmt: skip
    return MaintData(services=tuple(services), tasks=tuple(tasks), horizon=100, engineers=s.engineers)


def _greedy(d: MaintData, plant: Plant, rng: random.Random) -> Plan:
    """A random serial schedule: tasks in random order, each at the first hour (from a
    random 0-1 hour offset) where the engineers suffice, its cluster is free and no
    blocked hour is touched."""
    order = list(d.tasks)
    rng.shuffle(order)
    plan: Plan = {}
    for t in order:
        h = rng.randint(0, 1)
        while not _fits(d, plan, t, h, plant):
            h += 1
        plan[t.id] = h
    return {t.id: plan[t.id] for t in d.tasks}


def _fits(d: MaintData, plan: Plan, t: MTask, h: int, plant: Plant) -> bool:
    if any(k in plant.blocked for k in range(h, h + t.duration)):
        return False
    trial = {**plan, t.id: h}
    cluster = d.service_by_id[t.service].cluster
    for o in d.tasks:
        if o.id in plan and cluster and d.service_by_id[o.service].cluster == cluster and mc.overlap(trial, t, o):
            return False
    for k in range(h, h + t.duration):
        busy = sum(o.staff for o in d.tasks if o.id in trial and trial[o.id] <= k < mc.end(trial, o))
        if busy > d.engineers:
            return False
    return True


def _plant(d: MaintData, sampled: list[str], rng: random.Random) -> tuple[Plant, dict[str, Params]]:
    plant, planted = Plant(), dict[str, Params]()
    if "change_freeze" in sampled:
        start = rng.randint(1, 3)
        freeze = (start, start + rng.randint(1, 2))
        plant.blocked.update(range(*freeze))
        planted["change_freeze"] = mc.Freeze(start=freeze[0], end=freeze[1])
    if "busy_run" in sampled:  # a rest hour early in the night, so the witness's longest run is short
        plant.blocked.add(rng.randint(2, 4))
    return plant, planted


def _with_windows(d: MaintData, plan: Plan, rng: random.Random, slack: int) -> MaintData:
    """The horizon (the witness's last end plus slack) and each service's windows: one
    around its tasks in the witness (widened at random), and sometimes an earlier one."""
    horizon = mc.finish(d, plan) + slack
    services = []
    for sv in d.services:
        tasks = d.on_service[sv.id]
        if tasks:
            lo = max(0, min(plan[t.id] for t in tasks) - rng.randint(0, 2))
            hi = min(horizon, max(mc.end(plan, t) for t in tasks) + rng.randint(1, 2))
        else:
            lo = rng.randint(0, horizon - 1)
            hi = rng.randint(lo + 1, horizon)
        windows = [Window(start=lo, end=hi)]
        if lo >= 3 and rng.random() < 0.5:
            first = rng.randint(0, lo - 3)
            windows.insert(0, Window(start=first, end=rng.randint(first + 1, lo - 1)))
        services.append(sv.model_copy(update={"windows": tuple(windows)}))
    return mc.replaced(d, services=tuple(services), horizon=horizon)


def _b_precedence(d: MaintData, w: Witness, rng: random.Random) -> mc.Precedence | None:
    """A pair in witness order that could otherwise run together (see :func:`_could_meet`),
    a task on a provider before one on its dependent where there is such a pair (the
    database before the application)."""
    pairs = [
        (a, b)
        for a in d.tasks
        for b in d.tasks
        if a.id != b.id and mc.end(w.plan, a) <= w.plan[b.id] and _could_meet(d, a, b)
    ]
    upstream = [(a, b) for a, b in pairs if a.service != b.service and a.service in d.providers[b.service]]
    if not pairs:
        return None
    a, b = rng.choice(upstream or pairs)
    return mc.Precedence(pairs=[(a.id, b.id)])


def _b_deadline(d: MaintData, w: Witness, rng: random.Random) -> mc.Deadline | None:
    ids = [t.id for t in d.tasks]
    tasks = sorted(rng.sample(ids, min(len(ids), rng.randint(1, 2))), key=ids.index)
    return mc.Deadline(tasks=tasks, by=max(mc.end(w.plan, d.task_by_id[t]) for t in tasks))


def _b_change_freeze(d: MaintData, w: Witness, rng: random.Random) -> mc.Freeze | None:
    idle = [h for h in range(d.horizon) if not any(w.plan[t.id] <= h < mc.end(w.plan, t) for t in d.tasks)]
    if not idle:
        return None
    h = rng.choice(idle)
    return mc.Freeze(start=h, end=h + 1)


def _b_rollback_slot(d: MaintData, w: Witness, rng: random.Random) -> mc.Rollback | None:
    options = []
    for t in d.tasks:
        room = d.horizon - mc.end(w.plan, t)
        for o in d.on_service[t.service]:
            if o.id != t.id:
                if mc.overlap(w.plan, t, o):
                    room = 0
                elif w.plan[o.id] >= mc.end(w.plan, t):
                    room = min(room, w.plan[o.id] - mc.end(w.plan, t))
        if room >= 1:
            options.append((t.id, room))
    if not options:
        return None
    chosen = rng.sample(options, min(len(options), rng.randint(1, 2)))
    ids = [t.id for t in d.tasks]
    return mc.Rollback(tasks=sorted((t for t, _ in chosen), key=ids.index), hours=min(2, *(r for _, r in chosen)))


def _could_meet(d: MaintData, a: MTask, b: MTask) -> bool:
    """Could two tasks run in the same hour as far as the data goes: not one cluster,
    engineers enough for both, windows that meet? (A rule keeping apart tasks that can
    never meet would be no rule.)"""
    ca, cb = d.service_by_id[a.service].cluster, d.service_by_id[b.service].cluster
    wa, wb = d.service_by_id[a.service].windows, d.service_by_id[b.service].windows
    return (
        not (ca and ca == cb)
        and a.staff + b.staff <= d.engineers
        and any(x.start < y.end and y.start < x.end for x in wa for y in wb)
    )


def _b_not_together(d: MaintData, w: Witness, rng: random.Random) -> mc.NotTogether | None:
    """Pairs apart in the witness that nothing else keeps apart (see :func:`_could_meet`)."""
    could_meet = lambda a, b: _could_meet(d, a, b)  # noqa: E731
    pairs = [
        (a.id, b.id)
        for i, a in enumerate(d.tasks)
        for b in d.tasks[i + 1 :]
        if not mc.overlap(w.plan, a, b) and could_meet(a, b)
    ]
    return mc.NotTogether(pairs=sorted(rng.sample(pairs, min(len(pairs), 2)))) if pairs else None


def _b_max_parallel(d: MaintData, w: Witness, rng: random.Random) -> mc.MaxParallel | None:
    most = max(n for n, _ in mc.load(d, w.plan).values())
    return mc.MaxParallel(max=most) if most < len(d.tasks) else None


def _b_specialists(d: MaintData, w: Witness, rng: random.Random) -> mc.Specialists | None:
    """A skill with two tasks that could meet, capped at the most of its tasks running
    together in the witness."""
    options = []
    for skill in SKILLS:
        tasks = [t for t in d.tasks if t.skill == skill]
        hours = [h for t in tasks for h in mc.hours_of(w.plan, t)]
        most = max((hours.count(h) for h in hours), default=0)
        meet = any(_could_meet(d, a, b) for i, a in enumerate(tasks) for b in tasks[i + 1 :])
        if meet and 1 <= most < len(tasks):
            options.append((skill, most))
    if not options:
        return None
    skill, most = rng.choice(options)
    return mc.Specialists(skill=skill, max=most)


def _b_service_uptime(d: MaintData, w: Witness, rng: random.Random) -> mc.Uptime | None:
    options = []
    for sv in d.services:
        down = mc.down_hours(d, w.plan, sv.id)
        if not down:
            continue
        up = [h for h in range(d.horizon) if h not in down]
        for h in up:
            k = h
            while k + 1 < d.horizon and k + 1 not in down:
                k += 1
            options.append((sv.id, h, k + 1))
    if not options:
        return None
    sid, lo, hi = rng.choice(options)
    return mc.Uptime(service=sid, start=lo, end=rng.randint(lo + 1, hi))


def _b_downtime_budget(d: MaintData, w: Witness, rng: random.Random) -> mc.DowntimeBudget | None:
    """A service whose down hours in the witness are fewer than its tasks' and providers'
    hours added up (some of them overlap), capped at the witness's: a budget no plan
    could break would be no rule."""
    options = []
    for sv in d.services:
        used = len(mc.down_hours(d, w.plan, sv.id))
        if used < sum(t.duration for t in d.affecting[sv.id]):
            options.append((sv.id, used))
    if not options:
        return None
    sid, used = rng.choice(options)
    return mc.DowntimeBudget(service=sid, hours=used)


def _b_busy_run(d: MaintData, w: Witness, rng: random.Random) -> mc.BusyRun | None:
    run, _ = mc.longest_run(set(mc.load(d, w.plan)))
    return mc.BusyRun(hours=run) if run else None


BUILDERS: dict[str, Callable[[MaintData, Witness, random.Random], Params | None]] = {
    "precedence": _b_precedence,
    "deadline": _b_deadline,
    "change_freeze": _b_change_freeze,
    "rollback_slot": _b_rollback_slot,
    "not_together": _b_not_together,
    "max_parallel": _b_max_parallel,
    "specialists": _b_specialists,
    "service_uptime": _b_service_uptime,
    "downtime_budget": _b_downtime_budget,
    "busy_run": _b_busy_run,
}
STRUCTURAL = ("cluster_exclusive",)


def _builders(planted: dict[str, Params]) -> dict[str, Callable[[MaintData, Witness, random.Random], Params | None]]:
    out = dict(BUILDERS)
    for kind, p in planted.items():
        out[kind] = lambda d, w, rng, p=p: p  # type: ignore[misc]
    return out


def objective_terms(subtask: str) -> list[ObjectiveTerm]:
    return [ObjectiveTerm(id=k, kind=k) for k in OBJECTIVES[subtask]]


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    sampled = sampled_kinds(spec, TASK.base_rules, FORCED[spec.subtask])
    data = _entities(spec, sampled, rng)
    plant, planted = _plant(data, sampled, rng)
    plan = _greedy(data, plant, rng)
    data = _with_windows(data, plan, rng, SIZES.of(spec.size).slack)
    w = Witness(plan, planted)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, _builders(planted), data, w, rng, structural=STRUCTURAL)
    if not mc.CHECKS["windows"](data, plan, NoParams())[0]:  # the witness keeps its own windows
        raise NoDraft("windows")
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective_terms(spec.subtask))


# -- hard-tier hooks -------------------------------------------------------------------
def _plan(plan: dict[str, Any]) -> Plan:
    return {r["task"]: int(r["start"]) for r in plan["schedule"]}


def _deadline_trial(draft_: Draft, tasks: list[str], position: int) -> Callable[[int], Draft]:
    return lambda by: with_conflict_rule(draft_, "deadline", mc.Deadline(tasks=tasks, by=by), position)


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A deadline on one or two tasks at the loosest hour no plan meets (bisection over the
    hours from the horizon down), where the deadline alone is still satisfiable: the
    conflict runs through the windows, the engineers and the other rules."""
    d = MaintData.model_validate(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731
    ids = [t.id for t in d.tasks]
    for _ in range(3):
        tasks = sorted(rng.sample(ids, min(len(ids), rng.randint(1, 2))), key=ids.index)
        values = list(range(d.horizon, -1, -1))
        found = first_infeasible(values, _deadline_trial(draft_, tasks, position), feasible)
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A vendor patch that arrives late (a task's earliest start postponed) or an incident
    freeze over an hour a task runs."""
    d = MaintData.model_validate(draft_.data)
    starts = _plan(plan)
    out = []
    for t in d.tasks:
        s = starts[t.id]
        options = [
            make_rule("not_before", "hard", mc.NotBefore(task=t.id, at=s + rng.randint(1, 2))),
            make_rule("change_freeze", "hard", mc.Freeze(start=s, end=s + 1)),
        ]
        out.append(rng.choice(options))
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> Plan:
    return _plan(plan)


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    """Room for a one-hour overrun of any task inside its window and, where the instance has
    clusters and that still leaves a plan, between the tasks of a cluster too."""
    d = MaintData.model_validate(draft_.data)
    if d.clusters and any(r.kind == "cluster_exclusive" for r in draft_.rules):
        rule = make_rule("overrun_buffer", "hard", mc.OverrunBuffer(hours=1, clusters=True))
        trial = Draft(spec=draft_.spec, data=draft_.data, rules=[*draft_.rules, rule], objective=draft_.objective)
        if is_feasible(build(trial), SolverLimits(deterministic_time=PROBE_TIME)):
            return rule, []
    return make_rule("overrun_buffer", "hard", mc.OverrunBuffer(hours=1, clusters=False)), []


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Task hours and the engineers a task needs (worst: high for both; every rule only
    gets harder as a task grows or needs more engineers). Longer tasks almost always cost
    downtime, extra engineers only where the engineers on call are short, so both sorts
    of input (one whose best case helps, one whose does not) are usually found."""
    d = MaintData.model_validate(draft_.data)
    out = [
        Uncertain(id="", kind="duration", target=t.id, low=t.duration, high=t.duration + 1)
        for t in rng.sample(list(d.tasks), min(2, len(d.tasks)))
    ]
    out += [
        Uncertain(id="", kind="staff", target=t.id, low=t.staff, high=t.staff + 1)
        for t in rng.sample(list(d.tasks), min(3, len(d.tasks)))
        if t.staff < d.engineers
    ]
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    field_ = {"duration": "duration", "staff": "staff"}[u.kind]
    tasks = [dict(t, **{field_: value}) if t["id"] == u.target else t for t in data["tasks"]]
    return {**data, "tasks": tasks}


def worst_is_low(u: Uncertain) -> bool:
    return False


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    """The verification figures, from the decoded plan (computed here, not by the checker)."""
    d = MaintData.model_validate(draft_.data)
    starts = _plan(plan)
    ends = {t.id: starts[t.id] + t.duration for t in d.tasks}
    down: dict[str, int] = {}
    for sv in d.services:
        hours: set[int] = set()
        for t in d.tasks:
            if t.service in d.providers[sv.id]:
                hours.update(range(starts[t.id], ends[t.id]))
        down[sv.id] = len(hours)
    return {"task_end": ends, "service_down": down}


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
