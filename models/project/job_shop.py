"""Resource Scheduling: jobs on shared equipment (a job shop).

Every job runs its operations in a stated machine order; each operation needs one given
machine for a stated number of minutes. Decision: the start minute s[o] of every
operation o (the answer's integers). The model is built on interval variables, as
PyJobShop builds its CP-SAT model: machines are ``add_no_overlap`` over the operations'
intervals, shared tools, operators and work in progress are ``add_cumulative``, and gaps
between the operations of one machine (changeovers, cleaning buffers, cool-downs) are one
order Boolean per pair. Every rule sits behind its enforcement literal: a no-overlap or
cumulative rule uses optional intervals whose presence literal is the rule's literal.

The objective is lexicographic: the subtask's primary figure (makespan or weighted
tardiness), then the stated start score (each operation's start minute × its job's
priority points; the points are distinct), which pins every operation that the primary
figure leaves free to move, so optima are unique (no interchangeable entities exist: each
operation has its own machine).

Published job-shop files (``pbsolve generate --from FILE``) are read as the plain machine
shop (makespan), see :func:`read_source`.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible, make_solver
from pbsolve.checkers.project import job_shop as js
from pbsolve.checkers.project.job_shop import Changeover, Job, Machine, Op, ShopData, Tool
from pbsolve.family import Draft, NoDraft, SolverModel
from pbsolve.kit import (
    IntRange,
    KindRegistry,
    PositiveRange,
    Settings,
    SizeTable,
    Uncertain,
    insert_position,
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
from pbsolve.sources import Imported, SourceError, SourceFile
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=js.TASK_ID,
    name="Resource Scheduling",
    family="project",
    summary="start every job's operations on shared machines and tools: machine order, changeovers, "
    "release and due dates; makespan or weighted tardiness",
    subtasks=(
        SubtaskSpec("machine_shop", "Machine shop", "the plain job shop: machine order per job, minimise the makespan"),
        SubtaskSpec("print_shop", "Print shop", "changeovers between ink families on each press; weighted tardiness"),
        SubtaskSpec(
            "lab_instruments", "Lab instruments", "shared tools across instruments and incubation lags; makespan"
        ),
        SubtaskSpec(
            "bakery_ovens", "Bakery ovens", "dough waits at most so long between steps; ovens cool down; makespan"
        ),
        SubtaskSpec(
            "repair_workshop", "Repair workshop", "vehicles arrive at release minutes and are due; weighted tardiness"
        ),
    ),
    pool=(
        ConstraintSpec("machine_order", "basic", "each job's operations run in its machine order"),
        ConstraintSpec("machine_exclusive", "basic", "a machine runs one operation at a time"),
        ConstraintSpec("release", "basic", "no operation of a job before the job's release minute"),
        ConstraintSpec("deadline", "basic", "named jobs are finished by a stated minute"),
        ConstraintSpec("machine_downtime", "basic", "a machine is down for maintenance in a stated window"),
        ConstraintSpec("tool_limit", "basic", "shared tools: at most so many operations hold one tool kind at once"),
        ConstraintSpec("changeover", "basic", "sequence-dependent changeovers between job families on a machine"),
        ConstraintSpec("min_lag", "medium", "a time lag (cooling, incubation) before the job's next operation"),
        ConstraintSpec("max_wait", "medium", "named jobs wait at most so long between operations"),
        ConstraintSpec("job_after", "medium", "dependencies: a job starts after another is finished"),
        ConstraintSpec("machine_buffer", "medium", "a cleaning buffer between any two operations of a machine"),
        ConstraintSpec("operator_limit", "medium", "at most so many operations run at once (operators)"),
        ConstraintSpec("wip_limit", "stateful", "work in progress: at most so many jobs started and not finished"),
        ConstraintSpec("cooldown", "stateful", "a machine rests after a long (hot) operation"),
        ConstraintSpec(
            "tool_wear", "stateful", "a machine's worn tool allows so many running minutes until its replacement"
        ),
        *mechanism_pool(
            "every job step leaves room for any single operation overrunning by a stated number of minutes",
            replan="repair a schedule after a machine breakdown or a late material with the fewest moved operations",
        ),
    ),
    base_rules=("machine_order", "machine_exclusive"),
)

MACHINES = {
    "machine_shop": ("Lathe", "Mill", "Drill", "Grinder", "Saw", "Press"),
    "print_shop": ("Offset press", "Digital press", "Cutter", "Folder", "Binder", "Laminator"),
    "lab_instruments": ("Centrifuge", "PCR cycler", "Sequencer", "Spectrometer", "Incubator", "Microscope"),
    "bakery_ovens": ("Mixer", "Proofer", "Deck oven", "Rack oven", "Cooler", "Packer"),
    "repair_workshop": ("Diagnostics bay", "Lift", "Paint booth", "Welding bay", "Tyre bench", "Wash bay"),
}
JOBS = {
    "machine_shop": ("Shaft", "Gear", "Bracket", "Flange", "Housing", "Bushing", "Valve", "Spindle"),
    "print_shop": ("Flyers", "Posters", "Brochures", "Menus", "Catalogues", "Labels", "Cards", "Calendars"),
    "lab_instruments": (
        "Blood panel", "Soil assay", "DNA prep", "Water test", "Tissue scan", "Protein run", "Enzyme assay",
        "Cell count",
    ),
    "bakery_ovens": ("Sourdough", "Baguettes", "Croissants", "Rye loaves", "Brioche", "Ciabatta", "Pretzels", "Focaccia"),
    "repair_workshop": ("Delivery van", "Taxi", "Pickup", "Minibus", "Tractor", "Ambulance", "Forklift", "Hatchback"),
}  # fmt: skip
FAMILIES = {
    "machine_shop": ("steel", "aluminium", "brass"),
    "print_shop": ("light inks", "dark inks", "metallic inks"),
    "lab_instruments": ("blood", "soil", "water"),
    "bakery_ovens": ("wheat", "rye", "gluten-free"),
    "repair_workshop": ("cars", "vans", "trucks"),
}
TOOLS = {
    "machine_shop": ("torque wrench", "gauge set"),
    "print_shop": ("plate set", "ink pump"),
    "lab_instruments": ("pipetting robot", "sample rack"),
    "bakery_ovens": ("tray set", "proofing baskets"),
    "repair_workshop": ("diagnostic scanner", "jack"),
}
OBJECTIVES = {
    "machine_shop": ("makespan", "start_score"),
    "print_shop": ("weighted_tardiness", "start_score"),
    "lab_instruments": ("makespan", "start_score"),
    "bakery_ovens": ("makespan", "start_score"),
    "repair_workshop": ("weighted_tardiness", "start_score"),
}
FORCED = {
    "machine_shop": (),
    "print_shop": ("changeover",),
    "lab_instruments": ("tool_limit", "min_lag"),
    "bakery_ovens": ("max_wait", "cooldown"),
    "repair_workshop": ("release",),
}
TARDY = ("print_shop", "repair_workshop")


class ShopSizes(Settings):
    """How big a job-shop instance is."""

    machines: PositiveInt = Field(ge=2, le=6)
    jobs: PositiveInt = Field(ge=2, le=8)
    steps: PositiveRange = Field(description="operations per job (each on a different machine)")
    minutes: PositiveRange = Field(description="minutes of one operation")
    release: IntRange = Field(description="release minutes of jobs (when releases are stated)")
    setup: PositiveRange = Field(description="changeover minutes per step between families")


SIZES = SizeTable[ShopSizes](
    tiny=ShopSizes(
        machines=2, jobs=2, steps=PositiveRange(lo=2, hi=2), minutes=PositiveRange(lo=1, hi=2),
        release=IntRange(lo=0, hi=1), setup=PositiveRange(lo=1, hi=1),
    ),
    small=ShopSizes(
        machines=3, jobs=3, steps=PositiveRange(lo=2, hi=3), minutes=PositiveRange(lo=1, hi=5),
        release=IntRange(lo=0, hi=4), setup=PositiveRange(lo=1, hi=2),
    ),
    default=ShopSizes(
        machines=4, jobs=4, steps=PositiveRange(lo=2, hi=3), minutes=PositiveRange(lo=2, hi=9),
        release=IntRange(lo=0, hi=8), setup=PositiveRange(lo=1, hi=3),
    ),
    large=ShopSizes(
        machines=5, jobs=8, steps=PositiveRange(lo=3, hi=5), minutes=PositiveRange(lo=2, hi=12),
        release=IntRange(lo=0, hi=15), setup=PositiveRange(lo=1, hi=4),
    ),
)  # fmt: skip
# the LP relaxation does not help disjunctive machines: on la01 (10 x 5) the makespan proved in
# 0.07 s at linearization level 0 against 7.8 s at the certifier's level 2 (presolve off)
PARAMETERS = {"linearization_level": 0}
# the uniqueness re-optimisation without the probing CP-SAT runs before its search even with
# presolve off: uniq/first CPU 1.47 -> 1.21 on 72 default drafts (deterministic time 2.31 ->
# 1.70), the same certificates and plans; probing off in the first solve too gained nothing
UNIQUENESS_PARAMETERS = {"cp_model_presolve": False, "cp_model_probing_level": 0}
PROBE_TIME = 2.0  # deterministic seconds per hard-tier feasibility probe
IMPORT_PLAN_TIME = 5.0  # deterministic seconds for the base plan that imported data's sampled rules follow


# -- the CP-SAT model ------------------------------------------------------------------
class ShopModel(ModelBase):
    def __init__(self, data: ShopData) -> None:
        super().__init__()
        self.data = d = data
        self.s: dict[str, cp_model.IntVar] = {
            o.id: self.m.new_int_var(0, d.horizon - o.duration, f"s[{o.id}]") for o in d.ops
        }
        self._job_end: dict[str, cp_model.IntVar] = {}
        self._job_start: dict[str, cp_model.IntVar] = {}

    def end(self, o: Op) -> cp_model.LinearExpr:
        return self.s[o.id] + o.duration

    def intervals(self, ops: list[Op], lit: cp_model.IntVar, tag: str) -> list[cp_model.IntervalVar]:
        """Optional fixed-size intervals of ``ops``, present exactly when the rule's literal is on."""
        return [
            self.m.new_optional_fixed_size_interval_var(self.s[o.id], o.duration, lit, f"{tag}[{o.id}]") for o in ops
        ]

    def gaps(self, machines: list[str], gap: Callable[[Op, Op], int], lit: cp_model.IntVar) -> None:
        """For every pair of operations on each machine, one runs first and the other starts
        at least ``gap(first, second)`` after it ends (one order Boolean per pair)."""
        for m in machines:
            for a, b in self.data.pairs(m):
                first = self.m.new_bool_var("")
                self.m.add(self.s[b.id] >= self.end(a) + gap(a, b)).only_enforce_if([lit, first])
                self.m.add(self.s[a.id] >= self.end(b) + gap(b, a)).only_enforce_if([lit, ~first])

    def job_end(self, j: Job) -> cp_model.IntVar:
        """The minute the job's last-ending operation ends (exact: a max equality)."""
        if j.id not in self._job_end:
            v = self.m.new_int_var(0, self.data.horizon, f"C[{j.id}]")
            self.m.add_max_equality(v, [self.end(o) for o in j.ops])
            self._job_end[j.id] = v
        return self._job_end[j.id]

    def job_start(self, j: Job) -> cp_model.IntVar:
        if j.id not in self._job_start:
            v = self.m.new_int_var(0, self.data.horizon, f"S[{j.id}]")
            self.m.add_min_equality(v, [self.s[o.id] for o in j.ops])
            self._job_start[j.id] = v
        return self._job_start[j.id]


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("machine_order")
def _machine_order(tm: ShopModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for _, a, b in tm.data.consecutive():
        tm.post(tm.s[b.id] >= tm.end(a), lit)


@encoder("machine_exclusive")
def _machine_exclusive(tm: ShopModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for m in tm.data.machines:
        ops = list(tm.data.on_machine[m.id])
        if len(ops) > 1:
            tm.m.add_no_overlap(tm.intervals(ops, lit, f"mach{m.id}"))


@encoder("release")
def _release(tm: ShopModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for j in tm.data.jobs:
        if j.release:
            for o in j.ops:
                tm.post(tm.s[o.id] >= j.release, lit)


@encoder("changeover")
def _changeover(tm: ShopModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    tm.gaps([m.id for m in d.machines], d.setup, lit)


@encoder("tool_limit")
def _tool_limit(tm: ShopModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    for t in d.tools:
        ops = [o for o in d.ops if o.tool == t.id]
        if len(ops) > t.count:
            tm.m.add_cumulative(tm.intervals(ops, lit, f"tool{t.id}"), [1] * len(ops), t.count)


@encoder("deadline")
def _deadline(tm: ShopModel, p: js.Deadline, lit: cp_model.IntVar) -> None:
    for jid in p.jobs:
        for o in tm.data.job_by_id[jid].ops:
            tm.post(tm.end(o) <= p.by, lit)


@encoder("machine_downtime")
def _machine_downtime(tm: ShopModel, p: js.Downtime, lit: cp_model.IntVar) -> None:
    for o in tm.data.on_machine[p.machine]:
        before = tm.m.new_bool_var("")
        tm.m.add(tm.end(o) <= p.start).only_enforce_if([lit, before])
        tm.m.add(tm.s[o.id] >= p.end).only_enforce_if([lit, ~before])


@encoder("not_before")
def _not_before(tm: ShopModel, p: js.NotBefore, lit: cp_model.IntVar) -> None:
    tm.post(tm.s[p.op] >= p.at, lit)


@encoder("min_lag")
def _min_lag(tm: ShopModel, p: js.MinLag, lit: cp_model.IntVar) -> None:
    named = set(p.ops)
    for _, a, b in tm.data.consecutive():
        if a.id in named:
            tm.post(tm.s[b.id] >= tm.end(a) + p.minutes, lit)


@encoder("max_wait")
def _max_wait(tm: ShopModel, p: js.MaxWait, lit: cp_model.IntVar) -> None:
    named = set(p.jobs)
    for j, a, b in tm.data.consecutive():
        if j.id in named:
            tm.post(tm.s[b.id] - tm.end(a) <= p.minutes, lit)


@encoder("job_after")
def _job_after(tm: ShopModel, p: js.JobAfter, lit: cp_model.IntVar) -> None:
    d = tm.data
    for a, b in p.pairs:
        for x in d.job_by_id[a].ops:
            for y in d.job_by_id[b].ops:
                tm.post(tm.s[y.id] >= tm.end(x), lit)


@encoder("machine_buffer")
def _machine_buffer(tm: ShopModel, p: js.MachineBuffer, lit: cp_model.IntVar) -> None:
    tm.gaps([p.machine], lambda a, b: p.minutes, lit)


@encoder("operator_limit")
def _operator_limit(tm: ShopModel, p: js.OperatorLimit, lit: cp_model.IntVar) -> None:
    ops = list(tm.data.ops)
    tm.m.add_cumulative(tm.intervals(ops, lit, "oper"), [1] * len(ops), p.max)


@encoder("wip_limit")
def _wip_limit(tm: ShopModel, p: js.WipLimit, lit: cp_model.IntVar) -> None:
    """Each job's span (first start to last end, exact min/max equalities) as an optional
    interval; at most ``max`` spans cover any minute."""
    spans = []
    for j in tm.data.jobs:
        start, stop = tm.job_start(j), tm.job_end(j)
        size = tm.m.new_int_var(0, tm.data.horizon, "")
        spans.append(tm.m.new_optional_interval_var(start, size, stop, lit, f"wip[{j.id}]"))
    tm.m.add_cumulative(spans, [1] * len(spans), p.max)


@encoder("cooldown")
def _cooldown(tm: ShopModel, p: js.Cooldown, lit: cp_model.IntVar) -> None:
    tm.gaps([p.machine], lambda a, b: p.minutes if a.duration > p.longer_than else 0, lit)


@encoder("tool_wear")
def _tool_wear(tm: ShopModel, p: js.ToolWear, lit: cp_model.IntVar) -> None:
    """Each operation's minutes before ``until``: min(end, until) - min(start, until), both
    exact min equalities; their sum is capped."""
    parts = []
    for o in tm.data.on_machine[p.machine]:
        upto_end = tm.m.new_int_var(0, p.until, "")
        tm.m.add_min_equality(upto_end, [tm.end(o), p.until])
        upto_start = tm.m.new_int_var(0, p.until, "")
        tm.m.add_min_equality(upto_start, [tm.s[o.id], p.until])
        parts.append(upto_end - upto_start)
    tm.post(sum(parts) <= p.minutes, lit)


@encoder("overrun_buffer")
def _overrun_buffer(tm: ShopModel, p: js.OverrunBuffer, lit: cp_model.IntVar) -> None:
    for _, a, b in tm.data.consecutive():
        tm.post(tm.s[b.id] >= tm.end(a) + p.minutes, lit)
    tm.gaps([m.id for m in tm.data.machines], lambda a, b: p.minutes, lit)


def _objective(tm: ShopModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    if term.kind == "makespan":
        cmax = tm.m.new_int_var(0, d.horizon, "Cmax")
        tm.m.add_max_equality(cmax, [tm.end(o) for o in d.ops])
        return cmax, d.horizon
    if term.kind == "weighted_tardiness":
        parts, weights = [], []
        for j in d.jobs:
            late = tm.m.new_int_var(0, d.horizon, f"T[{j.id}]")
            tm.m.add_max_equality(late, [0, tm.job_end(j) - j.due])
            parts.append(late)
            weights.append(j.weight)
        return cp_model.LinearExpr.weighted_sum(parts, weights), sum(weights) * d.horizon
    if term.kind == "start_score":
        pts = [d.job_of[o.id].priority for o in d.ops]
        expr = cp_model.LinearExpr.weighted_sum([tm.s[o.id] for o in d.ops], pts)
        return expr, sum(p * (d.horizon - o.duration) for p, o in zip(pts, d.ops))
    if term.kind == "changes":
        old = js.current_plan(term)
        return sum(tm.differs(tm.s[o.id], old[o.id], f"moved[{o.id}]") for o in d.ops), len(d.ops)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = ShopData.model_validate(draft.data)
    tm = ShopModel(data)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        return {"schedule": [{"operation": o.id, "start": int(solver.value(tm.s[o.id]))} for o in data.ops]}

    starts = [tm.s[o.id] for o in data.ops]
    return solver_model(
        tm, draft, ENCODERS, js.RULE_PARAMS, _objective, decode, [], starts,
        parameters=PARAMETERS, uniqueness_parameters=UNIQUENESS_PARAMETERS,
    )  # fmt: skip


# -- sampling --------------------------------------------------------------------------
@dataclass
class Witness:
    """A planted plan (operation -> start) and the parameters of the rules it was built to keep."""

    plan: dict[str, int]
    planted: dict[str, Params] = field(default_factory=dict)


@dataclass
class Plant:
    """What the greedy witness schedule must respect besides the job order and machines."""

    lag: dict[str, int] = field(default_factory=dict)  # op -> minutes before its job's next op
    gap: dict[str, Callable[[Op, Op], int]] = field(default_factory=dict)  # machine -> extra pair gap
    after: tuple[str, str] | None = None  # job b starts after job a
    wip: int = 0  # jobs in progress at most (0: no limit)


def _names(spec: GenerationSpec, s: ShopSizes) -> tuple[list[Machine], list[str]]:
    machines = [Machine(id=f"M{k}", name=n) for k, n in enumerate(MACHINES[spec.subtask][: s.machines], 1)]
    return machines, list(JOBS[spec.subtask][: s.jobs])


def _entities(spec: GenerationSpec, sampled: list[str], rng: random.Random) -> ShopData:
    """Jobs with random machine routes and minutes, and the data the sampled structural
    kinds state (families and changeovers, tools, releases); horizon unset (1)."""
    s = SIZES.of(spec.size)
    machines, names = _names(spec, s)
    families = FAMILIES[spec.subtask]
    n_fam = min(len(families), max(2, s.jobs // 2))
    points = rng.sample(range(1, 3 * s.jobs + 1), s.jobs)
    tools: list[Tool] = []
    if "tool_limit" in sampled:
        tools = [
            Tool(id=f"T{k}", name=n, count=1 if s.jobs <= 3 else rng.randint(1, 2))
            for k, n in enumerate(TOOLS[spec.subtask][: 1 if s.jobs <= 3 else 2], 1)
        ]
    fams = [families[k % n_fam] for k in range(s.jobs)]  # every family of the first n_fam has a job
    rng.shuffle(fams)
    jobs = []
    for k, name in enumerate(names, 1):
        route = rng.sample(machines, min(len(machines), s.steps.draw(rng)))
        ops = []
        for i, m in enumerate(route, 1):
            tool = rng.choice(tools).id if tools and rng.random() < 0.5 else None
            ops.append(Op(id=f"J{k}.{i}", machine=m.id, duration=s.minutes.draw(rng), tool=tool))
        jobs.append(
            Job(
                id=f"J{k}", name=name, ops=tuple(ops),
                family=fams[k - 1] if "changeover" in sampled else "",
                release=s.release.draw(rng) if "release" in sampled else 0,
                weight=rng.randint(1, 3), priority=points[k - 1],
            )
        )  # fmt: skip
    changeovers: list[Changeover] = []
    if "changeover" in sampled:
        used = [f for f in families if any(j.family == f for j in jobs)]
        unit = s.setup.draw(rng)
        # minutes |i - j| x unit between the i-th and j-th family: a metric, so a changeover
        # between neighbours never undercuts one across an operation of a third family
        changeovers = [
            Changeover(a=a, b=b, minutes=unit * abs(families.index(a) - families.index(b)))
            for i, a in enumerate(used)
            for b in used[i + 1 :]
        ]
    return ShopData(
        machines=tuple(machines), jobs=tuple(jobs), horizon=1, tools=tuple(tools), changeovers=tuple(changeovers)
    )


def _fits(d: ShopData, plan: dict[str, int], o: Op, t: int) -> bool:
    """Does the tool of ``o`` have a free unit over [t, t + duration) among the placed operations?"""
    if o.tool is None:
        return True
    cap = d.tool_by_id[o.tool].count
    spans = [(plan[x.id], plan[x.id] + x.duration) for x in d.ops if x.id in plan and x.tool == o.tool]
    spans.append((t, t + o.duration))
    return js.peak(spans)[0] <= cap


def _greedy(d: ShopData, plant: Plant, rng: random.Random) -> dict[str, int]:
    """A random serial schedule: jobs picked at random among the open ones, each operation
    appended after its machine's placed operations (with every pair gap) at the first
    minute its job, release, lag and tool allow. At most ``plant.wip`` jobs are open at a
    time (a job takes the slot of one finished before it)."""
    plan: dict[str, int] = {}
    slots = [0] * (plant.wip or len(d.jobs))
    waiting = [j for j in d.jobs]
    rng.shuffle(waiting)
    if plant.after is not None:  # job b waits for job a: a goes first in the queue
        a, b = plant.after
        order = [j for j in waiting if j.id != b]
        at = next(i for i, j in enumerate(order) if j.id == a)
        later = rng.randint(at + 1, len(order))
        waiting = [*order[:later], d.job_by_id[b], *order[later:]]
    open_: list[tuple[Job, int, int]] = []  # (job, next step, slot)
    ready: dict[str, int] = {}
    done: dict[str, int] = {}
    while waiting or open_:
        while waiting and len(open_) < len(slots):
            j = waiting.pop(0)
            used = {x[2] for x in open_}
            slot = min((k for k in range(len(slots)) if k not in used), key=lambda k: (slots[k], k))
            start = max(j.release, slots[slot])
            if plant.after is not None and j.id == plant.after[1]:
                a = plant.after[0]
                if a not in done:  # job a is still open: b waits in the queue
                    waiting.insert(0, j)
                    break
                start = max(start, done[a])
            ready[j.id] = start
            open_.append((j, 0, slot))
        k = rng.randrange(len(open_))
        j, step, slot = open_[k]
        o = j.ops[step]
        t = ready[j.id]
        for x in d.on_machine[o.machine]:
            if x.id in plan:
                extra = plant.gap[o.machine](x, o) if o.machine in plant.gap else 0
                t = max(t, plan[x.id] + x.duration + d.setup(x, o) + extra)
        while not _fits(d, plan, o, t):
            t += 1
        plan[o.id] = t
        ready[j.id] = t + o.duration + plant.lag.get(o.id, 0)
        if step + 1 == len(j.ops):
            open_.pop(k)
            done[j.id] = t + o.duration
            slots[slot] = max(slots[slot], done[j.id])
        else:
            open_[k] = (j, step + 1, slot)
    return plan


def _plant(d: ShopData, sampled: list[str], rng: random.Random) -> tuple[Plant, dict[str, Params]]:
    """Parameters of the kinds the witness is built to keep, drawn before it."""
    plant, planted = Plant(), dict[str, Params]()
    s_max = max(o.duration for o in d.ops)
    if "min_lag" in sampled:
        steps = [a.id for _, a, _ in d.consecutive()]
        ops = sorted(rng.sample(steps, min(len(steps), rng.randint(1, 3))), key=steps.index)
        minutes = rng.randint(1, max(1, s_max // 2))
        plant.lag = dict.fromkeys(ops, minutes)
        planted["min_lag"] = js.MinLag(ops=ops, minutes=minutes)
    busy = [m.id for m in d.machines if len(d.on_machine[m.id]) >= 2]
    if "machine_buffer" in sampled and busy:
        m, minutes = rng.choice(busy), rng.randint(1, 2)
        plant.gap[m] = lambda a, b: minutes
        planted["machine_buffer"] = js.MachineBuffer(machine=m, minutes=minutes)
    if "cooldown" in sampled and busy:
        m = rng.choice([x for x in busy if x not in plant.gap] or busy)
        lengths = sorted({o.duration for o in d.on_machine[m]})
        longer = lengths[len(lengths) // 2] - 1 if len(lengths) > 1 else lengths[0] - 1
        minutes = rng.randint(1, max(1, s_max // 2))
        prev = plant.gap.get(m)
        plant.gap[m] = lambda a, b: max(minutes if a.duration > longer else 0, prev(a, b) if prev else 0)
        planted["cooldown"] = js.Cooldown(machine=m, longer_than=longer, minutes=minutes)
    if "job_after" in sampled and len(d.jobs) >= 2:
        a, b = rng.sample([j.id for j in d.jobs], 2)
        plant.after = (a, b)
        planted["job_after"] = js.JobAfter(pairs=[(a, b)])
    if "wip_limit" in sampled and len(d.jobs) >= 3:
        plant.wip = rng.randint(2, len(d.jobs) - 1)
        planted["wip_limit"] = js.WipLimit(max=plant.wip)
    return plant, planted


def _b_deadline(d: ShopData, w: Witness, rng: random.Random) -> js.Deadline | None:
    jobs = sorted(rng.sample([j.id for j in d.jobs], min(len(d.jobs), rng.randint(1, 2))), key=lambda x: int(x[1:]))
    by = max(js.job_end(d, w.plan, d.job_by_id[j]) for j in jobs)
    return js.Deadline(jobs=jobs, by=by)


def _b_machine_downtime(d: ShopData, w: Witness, rng: random.Random) -> js.Downtime | None:
    """A window inside an idle stretch of a machine in the witness (before its first
    operation or between two), so the witness keeps it."""
    options: list[tuple[str, int, int]] = []
    for m in d.machines:
        times = sorted((w.plan[o.id], w.plan[o.id] + o.duration) for o in d.on_machine[m.id])
        free = 0
        for s, e in times:
            if s - free >= 1:
                options.append((m.id, free, s))
            free = max(free, e)
    if not options:
        return None
    mid, lo, hi = rng.choice(options)
    start = rng.randint(lo, hi - 1)
    return js.Downtime(machine=mid, start=start, end=rng.randint(start + 1, hi))


def _b_min_lag(d: ShopData, w: Witness, rng: random.Random) -> js.MinLag | None:
    steps = [(a.id, w.plan[b.id] - w.plan[a.id] - a.duration) for _, a, b in d.consecutive()]
    options = [(a, g) for a, g in steps if g >= 1]
    if not options:
        return None
    chosen = rng.sample(options, min(len(options), rng.randint(1, 2)))
    order = [a for a, _ in steps]
    return js.MinLag(ops=sorted((a for a, _ in chosen), key=order.index), minutes=min(g for _, g in chosen))


def _b_max_wait(d: ShopData, w: Witness, rng: random.Random) -> js.MaxWait | None:
    multi = [j.id for j in d.jobs if len(j.ops) >= 2]
    if not multi:
        return None
    jobs = sorted(rng.sample(multi, min(len(multi), rng.randint(1, 2))), key=lambda x: int(x[1:]))
    waits = [w.plan[b.id] - w.plan[a.id] - a.duration for j, a, b in d.consecutive() if j.id in jobs]
    return js.MaxWait(jobs=jobs, minutes=max(0, *waits))


def _b_job_after(d: ShopData, w: Witness, rng: random.Random) -> js.JobAfter | None:
    pairs = [
        (a.id, b.id)
        for a in d.jobs
        for b in d.jobs
        if a.id != b.id and js.job_end(d, w.plan, a) <= js.job_start(d, w.plan, b)
    ]
    return js.JobAfter(pairs=[rng.choice(pairs)]) if pairs else None


def _b_machine_buffer(d: ShopData, w: Witness, rng: random.Random) -> js.MachineBuffer | None:
    options = []
    for m in d.machines:
        times = sorted((w.plan[o.id], w.plan[o.id] + o.duration) for o in d.on_machine[m.id])
        if len(times) >= 2:
            gap = min(b[0] - a[1] for a, b in itertools.pairwise(times))
            if gap >= 1:
                options.append((m.id, gap))
    if not options:
        return None
    mid, gap = rng.choice(options)
    return js.MachineBuffer(machine=mid, minutes=gap)


def _b_operator_limit(d: ShopData, w: Witness, rng: random.Random) -> js.OperatorLimit | None:
    most, _ = js.peak([(w.plan[o.id], w.plan[o.id] + o.duration) for o in d.ops])
    return js.OperatorLimit(max=most)


def _b_wip_limit(d: ShopData, w: Witness, rng: random.Random) -> js.WipLimit | None:
    most, _ = js.peak([(js.job_start(d, w.plan, j), js.job_end(d, w.plan, j)) for j in d.jobs])
    return js.WipLimit(max=most) if most < len(d.jobs) else None


def _b_cooldown(d: ShopData, w: Witness, rng: random.Random) -> js.Cooldown | None:
    options = []
    for m in d.machines:
        times = sorted(((w.plan[o.id], o) for o in d.on_machine[m.id]), key=lambda x: (x[0], x[1].id))
        for (s, a), (t, _) in itertools.pairwise(times):
            if t - s - a.duration >= 1:
                longer = a.duration - 1
                after = [u - r - x.duration for (r, x), (u, _) in itertools.pairwise(times) if x.duration > longer]
                options.append((m.id, longer, min(after)))
    usable = [o for o in options if o[2] >= 1]
    if not usable:
        return None
    mid, longer, gap = rng.choice(usable)
    return js.Cooldown(machine=mid, longer_than=longer, minutes=gap)


def _b_tool_wear(d: ShopData, w: Witness, rng: random.Random) -> js.ToolWear | None:
    """A replacement minute inside the witness's span on a busy machine, capped at the
    minutes the witness runs there before it."""
    busy = [m.id for m in d.machines if d.on_machine[m.id]]
    if not busy:
        return None
    mid = rng.choice(busy)
    span = max(w.plan[o.id] + o.duration for o in d.on_machine[mid])
    until = rng.randint(1, max(1, span))
    return js.ToolWear(
        machine=mid, until=until, minutes=js.worn(d, w.plan, js.ToolWear(machine=mid, until=until, minutes=0))
    )


BUILDERS: dict[str, Callable[[ShopData, Witness, random.Random], Params | None]] = {
    "deadline": _b_deadline,
    "machine_downtime": _b_machine_downtime,
    "min_lag": _b_min_lag,
    "max_wait": _b_max_wait,
    "job_after": _b_job_after,
    "machine_buffer": _b_machine_buffer,
    "operator_limit": _b_operator_limit,
    "wip_limit": _b_wip_limit,
    "cooldown": _b_cooldown,
    "tool_wear": _b_tool_wear,
}
STRUCTURAL = ("release", "changeover", "tool_limit")


def _builders(planted: dict[str, Params]) -> dict[str, Callable[[ShopData, Witness, random.Random], Params | None]]:
    """The builders, with the planted kinds answering their planted parameters."""
    out = dict(BUILDERS)
    for kind, p in planted.items():
        out[kind] = lambda d, w, rng, p=p: p  # type: ignore[misc]
    return out


def objective_terms(subtask: str) -> list[ObjectiveTerm]:
    """The subtask's primary figure, then the start score."""
    return [ObjectiveTerm(id=k, kind=k) for k in OBJECTIVES[subtask]]


def _with_horizon(d: ShopData, plan: dict[str, int], rng: random.Random, tiny: bool) -> ShopData:
    """The horizon: the witness's makespan plus room for repairs and overrun buffers (two
    minutes on tiny instances, which the brute-force tests enumerate minute by minute)."""
    span = js.makespan(d, plan)
    return js.replaced(d, horizon=span + (2 if tiny else max(3, span // 3)))


def _with_dues(d: ShopData, plan: dict[str, int], rng: random.Random) -> ShopData:
    """Due minutes around the witness completions (some are late in it)."""
    jobs = []
    for j in d.jobs:
        done = js.job_end(d, plan, j)
        work = sum(o.duration for o in j.ops) + j.release
        due = max(work, done + rng.randint(-max(2, done // 4), 2))
        jobs.append(j.model_copy(update={"due": due}))
    return js.replaced(d, jobs=tuple(jobs))


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    sampled = sampled_kinds(spec, TASK.base_rules, FORCED[spec.subtask])
    data = _entities(spec, sampled, rng)
    plant, planted = _plant(data, sampled, rng)
    plan = _greedy(data, plant, rng)
    data = _with_horizon(data, plan, rng, spec.size == "tiny")
    if spec.subtask in TARDY:
        data = _with_dues(data, plan, rng)
    return _drafted(spec, data, sampled, Witness(plan, planted), rng)


def _drafted(spec: GenerationSpec, data: ShopData, sampled: list[str], w: Witness, rng: random.Random) -> Draft:
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, _builders(w.planted), data, w, rng, structural=STRUCTURAL)
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective_terms(spec.subtask))


# -- published data: job-shop files ----------------------------------------------------
SOURCE_FORMAT = (
    "a job-shop file: a line 'n m' (jobs, machines), then one line per job of 'machine minutes' pairs "
    "(machines numbered from 0); '#' lines are comments"
)


def read_source(source: SourceFile) -> Imported:
    """The file's jobs as the plain machine shop (makespan); a :class:`SourceError` names
    the file and the line at fault. Every job visits its machines in the listed order; the
    horizon is the sum of all minutes (one job after another always fits)."""
    lines = [
        (n, line.split()) for n, line in enumerate(source.text.splitlines(), 1) if line.strip() and not line.lstrip().startswith("#")
    ]  # fmt: skip
    if not lines:
        raise SourceError(f"{source.name}: no data lines; a job-shop file starts with a line 'n m'")
    n_line, head = lines[0]
    if len(head) != 2 or not all(w.isdigit() for w in head):
        raise SourceError(f"{source.name} line {n_line}: expected 'n m' (jobs and machines as whole numbers)")
    n, m = int(head[0]), int(head[1])
    if n < 1 or m < 1:
        raise SourceError(f"{source.name} line {n_line}: at least one job and one machine are needed")
    rows = lines[1:]
    if len(rows) != n:
        where = rows[n][0] if len(rows) > n else (rows[-1][0] if rows else n_line)
        raise SourceError(
            f"{source.name} line {where}: the header announces {n} jobs, the file has {len(rows)} job lines"
        )
    jobs = []
    total = 0
    for k, (line_no, words) in enumerate(rows, 1):
        if not words or len(words) % 2:
            raise SourceError(f"{source.name} line {line_no}: a job line is 'machine minutes' pairs")
        if not all(w.isdigit() for w in words):
            bad = next(w for w in words if not w.isdigit())
            raise SourceError(f"{source.name} line {line_no}: {bad[:20]!r} is not a whole number")
        ops = []
        for i in range(0, len(words), 2):
            machine, minutes = int(words[i]), int(words[i + 1])
            if machine >= m:
                raise SourceError(f"{source.name} line {line_no}: machine {machine} is outside 0..{m - 1}")
            if minutes < 1:
                raise SourceError(f"{source.name} line {line_no}: operation minutes must be at least 1")
            ops.append({"id": f"J{k}.{i // 2 + 1}", "machine": f"M{machine}", "duration": minutes})
            total += minutes
        jobs.append({"id": f"J{k}", "name": f"job {k}", "ops": ops, "priority": k})
    machines = [{"id": f"M{i}", "name": f"machine {i}"} for i in range(m)]
    return Imported(subtask="machine_shop", data={"machines": machines, "jobs": jobs, "horizon": total})


def _base_plan(spec: GenerationSpec, d: ShopData) -> dict[str, int]:
    """A feasible plan of the file's problem (machine order and machines only, the
    makespan's first solution under a short limit): sampled rules are drawn from it."""
    base = Draft(spec=spec, data=d.model_dump(mode="json"), rules=[], objective=[])
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base.rules = witness_rules(
        [(k, tiers[k], NoParams()) for k in TASK.base_rules], [], tiers, {}, d, None, random.Random(0)
    )
    sm = build(base)
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = make_solver(SolverLimits(deterministic_time=IMPORT_PLAN_TIME))
    solver.parameters.stop_after_first_solution = True
    status = solver.solve(sm.model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise NoDraft("imported_base_plan")
    return {r["operation"]: r["start"] for r in sm.decode(solver)["schedule"]}


def draft_from(spec: GenerationSpec, data: dict[str, Any], rng: random.Random) -> Draft:
    """The file's problem with the structural rules; sampled rules (none with ``--rules
    none``) are drawn from a feasible plan of it. Structural kinds that would need data
    the file does not have (tools, families, releases) are left out.

    With no sampled rules the objective is the makespan alone: a start-score term on top
    (as sampled machine shops have) took minutes to prove on la01 (10 x 5), while the
    makespan alone proves in a fraction of a second; published instances have many optimal
    schedules, so those certificates are value-determinate (the optimal plans counted up to
    the cap). With sampled rules the machine shop's objective (makespan, then the start
    score) keeps the optimum unique, as the generator's re-sampling asks; on the 10 x 5
    files that proof can exceed the time limit (the instance is then rejected, counted)."""
    d = ShopData.model_validate(data)
    sampled = [k for k in sampled_kinds(spec, TASK.base_rules) if k not in STRUCTURAL]
    w = Witness(_base_plan(spec, d) if sampled else {})
    found = _drafted(spec, d, sampled, w, rng)
    if not sampled:
        found.objective = [ObjectiveTerm(id="makespan", kind="makespan")]
    return found


# -- hard-tier hooks -------------------------------------------------------------------
def _plan(plan: dict[str, Any]) -> dict[str, int]:
    return {r["operation"]: int(r["start"]) for r in plan["schedule"]}


def _deadline_trial(draft_: Draft, jobs: list[str], position: int) -> Callable[[int], Draft]:
    """The infeasibility variant with a deadline at a given minute on ``jobs``."""
    return lambda by: with_conflict_rule(draft_, "deadline", js.Deadline(jobs=jobs, by=by), position)


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A deadline on one or two jobs, at the loosest minute no plan meets (bisection over
    the minutes from the horizon down), where the deadline alone is still satisfiable: the
    conflict runs through the job order, the machines and the other rules."""
    d = ShopData.model_validate(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731
    ids = [j.id for j in d.jobs]
    for _ in range(3):
        jobs = sorted(rng.sample(ids, min(len(ids), rng.randint(1, 2))), key=lambda x: int(x[1:]))
        values = list(range(d.horizon, -1, -1))
        found = first_infeasible(values, _deadline_trial(draft_, jobs, position), feasible)
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A machine breakdown over the minutes an operation runs, or a late material that
    postpones an operation's earliest start."""
    d = ShopData.model_validate(draft_.data)
    starts = _plan(plan)
    out = []
    for o in d.ops:
        s = starts[o.id]
        options = [
            make_rule(
                "machine_downtime", "hard", js.Downtime(machine=o.machine, start=s, end=s + rng.randint(1, o.duration))
            ),
            make_rule("not_before", "hard", js.NotBefore(op=o.id, at=s + rng.randint(1, 3))),
        ]
        out.append(rng.choice(options))
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, int]:
    return _plan(plan)


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    return make_rule("overrun_buffer", "hard", js.OverrunBuffer(minutes=1)), []


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Operation minutes (worst: high) and, where releases are a rule, release minutes
    (worst: high). Minutes are left out under a maximum wait: a shorter operation there
    lengthens the wait after it, so no single value would be the worst case."""
    d = ShopData.model_validate(draft_.data)
    kinds = {r.kind for r in draft_.rules}
    out: list[Uncertain] = []
    if "max_wait" not in kinds:
        ops = rng.sample(list(d.ops), min(3, len(d.ops)))
        out += [
            Uncertain(id="", kind="duration", target=o.id, low=o.duration, high=o.duration + rng.randint(1, 2))
            for o in ops
        ]
    if "release" in kinds:
        jobs = rng.sample(list(d.jobs), min(2, len(d.jobs)))
        out += [
            Uncertain(id="", kind="release", target=j.id, low=j.release, high=j.release + rng.randint(1, 3))
            for j in jobs
        ]
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = ShopData.model_validate(data)
    jobs = []
    for j in d.jobs:
        if u.kind == "release" and j.id == u.target:
            j = j.model_copy(update={"release": value})
        if u.kind == "duration":
            j = j.model_copy(
                update={
                    "ops": tuple(o.model_copy(update={"duration": value}) if o.id == u.target else o for o in j.ops)
                }
            )
        jobs.append(j)
    return {**data, "jobs": [j.model_dump(mode="json") for j in jobs]}


def worst_is_low(u: Uncertain) -> bool:
    return False


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    """The verification figures, from the decoded plan (computed here, not by the checker)."""
    d = ShopData.model_validate(draft_.data)
    starts = _plan(plan)
    job_end = {j.id: max(starts[o.id] + o.duration for o in j.ops) for j in d.jobs}
    last = {m.id: max((starts[o.id] + o.duration for o in d.on_machine[m.id]), default=0) for m in d.machines}
    return {"job_end": job_end, "machine_last": last}


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
