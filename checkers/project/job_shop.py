"""Checks for Resource Scheduling answers (a job shop): every operation of every job gets
an integer start minute on its own machine.

This module is the grader's second implementation of every rule: it holds the task's data
model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. An operation of duration d started at minute s occupies the minutes s .. s+d-1
(the half-open interval [s, s+d)); every figure is recomputed from the plan in plain
Python integers.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Container, Iterator
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import OK, PlanChecker, lookup, start_rows
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse, problem
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "resource_scheduling"


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Machine(_Frozen):
    id: str
    name: str


class Tool(_Frozen):
    """A shared tool kind (a cumulative resource across machines): ``count`` units exist."""

    id: str
    name: str
    count: PositiveInt


class Changeover(_Frozen):
    """Minutes a machine needs between operations of jobs of families ``a`` and ``b`` (either order)."""

    a: str
    b: str
    minutes: PositiveInt


class Op(_Frozen):
    id: str
    machine: str
    duration: PositiveInt = Field(description="minutes")
    tool: str | None = Field(default=None, description="the shared tool the operation holds while it runs")


class Job(_Frozen):
    id: str
    name: str
    ops: tuple[Op, ...] = Field(min_length=1, description="in the job's machine order")
    family: str = Field(default="", description="product family (changeovers are between families)")
    release: NonNegativeInt = Field(default=0, description="first minute any operation of the job may start")
    due: NonNegativeInt = Field(default=0, description="minute the job is due (tardiness objectives)")
    weight: PositiveInt = Field(default=1, description="tardiness weight per minute late")
    priority: PositiveInt = Field(
        default=1, description="priority points: the start score weighs start minutes by them"
    )


class ShopData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    machines: tuple[Machine, ...] = Field(min_length=1)
    jobs: tuple[Job, ...] = Field(min_length=1)
    horizon: PositiveInt = Field(description="every operation ends by this minute")
    tools: tuple[Tool, ...] = ()
    changeovers: tuple[Changeover, ...] = ()
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> ShopData:
        """Malformed data is refused with the entity at fault named (never half-read)."""
        machines = {m.id for m in self.machines}
        tools = {t.id for t in self.tools}
        families = {j.family for j in self.jobs}
        for what, ids in (
            ("machine", [m.id for m in self.machines]),
            ("tool", [t.id for t in self.tools]),
            ("job", [j.id for j in self.jobs]),
            ("operation", [o.id for j in self.jobs for o in j.ops]),
        ):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            if dup:
                raise ValueError(f"{what} ids are not unique: {', '.join(dup)}")
        for j in self.jobs:
            for o in j.ops:
                if o.machine not in machines:
                    raise ValueError(f"operation {o.id} of job {j.id} names unknown machine {o.machine!r}")
                if o.tool is not None and o.tool not in tools:
                    raise ValueError(f"operation {o.id} of job {j.id} names unknown tool {o.tool!r}")
        for c in self.changeovers:
            if c.a == c.b or c.a not in families or c.b not in families:
                raise ValueError(f"changeover {c.a}-{c.b} must name two different families of the jobs")
        return self

    @cached_property
    def ops(self) -> tuple[Op, ...]:
        """Every operation, job by job in machine order."""
        return tuple(o for j in self.jobs for o in j.ops)

    @cached_property
    def op_by_id(self) -> dict[str, Op]:
        return {o.id: o for o in self.ops}

    @cached_property
    def op_duration(self) -> dict[str, int]:
        """Duration by id, in the data's order (what a schedule must cover)."""
        return {o.id: o.duration for o in self.ops}

    @cached_property
    def job_by_id(self) -> dict[str, Job]:
        return {j.id: j for j in self.jobs}

    @cached_property
    def job_of(self) -> dict[str, Job]:
        """Operation id -> its job."""
        return {o.id: j for j in self.jobs for o in j.ops}

    @cached_property
    def on_machine(self) -> dict[str, tuple[Op, ...]]:
        """Machine id -> its operations, in the order of :attr:`ops`."""
        return {m.id: tuple(o for o in self.ops if o.machine == m.id) for m in self.machines}

    @cached_property
    def tool_by_id(self) -> dict[str, Tool]:
        return {t.id: t for t in self.tools}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {
            "job": self.job_by_id,
            "operation": self.op_by_id,
            "machine": self.on_machine,
        }
        return names[what]

    @cached_property
    def _setups(self) -> dict[tuple[str, str], int]:
        out: dict[tuple[str, str], int] = {}
        for c in self.changeovers:
            out[c.a, c.b] = out[c.b, c.a] = c.minutes
        return out

    def setup(self, a: Op, b: Op) -> int:
        """Changeover minutes between two operations (0 within a family)."""
        return self._setups.get((self.job_of[a.id].family, self.job_of[b.id].family), 0)

    def pairs(self, machine: str) -> Iterator[tuple[Op, Op]]:
        """Every unordered pair of operations on ``machine``, in a fixed order."""
        ops = self.on_machine[machine]
        for i, a in enumerate(ops):
            for b in ops[i + 1 :]:
                yield a, b

    def consecutive(self) -> Iterator[tuple[Job, Op, Op]]:
        """(job, operation, the job's next operation) for every step of every job."""
        for j in self.jobs:
            for a, b in zip(j.ops, j.ops[1:]):
                yield j, a, b


def replaced(d: ShopData, **changes: Any) -> ShopData:
    """``d`` with fields replaced, as a new object (``model_copy`` would keep the old cached lookups)."""
    return ShopData.model_validate({**{f: getattr(d, f) for f in ShopData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
JobName = Annotated[str, Names("job")]
OpName = Annotated[str, Names("operation")]
MachineName = Annotated[str, Names("machine")]


class Deadline(Params):
    """Every operation of the named jobs ends by minute ``by``."""

    jobs: list[JobName]
    by: NonNegativeInt


class Downtime(Params):
    """The machine runs nothing during the minutes ``start`` .. ``end`` - 1 (maintenance)."""

    machine: MachineName
    start: NonNegativeInt
    end: PositiveInt


class NotBefore(Params):
    """The operation starts at minute ``at`` or later (a late delivery of its material)."""

    op: OpName
    at: NonNegativeInt


class MinLag(Params):
    """After each named operation, the next operation of its job starts at least ``minutes`` after it ends."""

    ops: list[OpName]
    minutes: PositiveInt

    def data_problems(self, data: Any) -> list[str]:
        """Also: a named operation has a next operation in its job (else the lag is about nothing)."""
        found = super().data_problems(data)
        last = [o for o in self.ops if not found and data.job_of[o].ops[-1].id == o]
        if last:
            found.append(f"operation {', '.join(map(repr, last))} is the last of its job: there is no next operation")
        return found


class MaxWait(Params):
    """In each named job, every operation starts at most ``minutes`` after the previous one ends."""

    jobs: list[JobName]
    minutes: NonNegativeInt

    def data_problems(self, data: Any) -> list[str]:
        """Also: a named job has two operations or more (else there is no wait to bound)."""
        found = super().data_problems(data)
        single = [j for j in self.jobs if not found and len(data.job_by_id[j].ops) < 2]
        if single:
            found.append(f"job {', '.join(map(repr, single))} has one operation: there is no wait between operations")
        return found


class JobAfter(Params):
    """For each pair (a, b), no operation of job b starts before every operation of job a has ended."""

    pairs: list[tuple[JobName, JobName]]


class MachineBuffer(Params):
    """Any two operations on the machine are at least ``minutes`` apart (cleaning between them)."""

    machine: MachineName
    minutes: PositiveInt


class OperatorLimit(Params):
    """At most ``max`` operations run at any minute, over all machines (one operator each)."""

    max: PositiveInt


class WipLimit(Params):
    """At most ``max`` jobs are in progress (first operation started, last one not yet ended) at any minute."""

    max: PositiveInt


class Cooldown(Params):
    """On the machine, operations do not overlap, and one that follows an operation longer than
    ``longer_than`` minutes starts at least ``minutes`` after that operation ends."""

    machine: MachineName
    longer_than: NonNegativeInt
    minutes: PositiveInt


class ToolWear(Params):
    """The machine's cutting tool is replaced at minute ``until``; before then the machine runs
    at most ``minutes`` minutes of operations (an operation running across ``until`` counts
    its minutes before it)."""

    machine: MachineName
    until: PositiveInt
    minutes: NonNegativeInt


class OverrunBuffer(Params):
    """Robustness: after every operation, the next operation of its job and every later operation
    on its machine start at least ``minutes`` after it ends (room for any single overrun)."""

    minutes: PositiveInt


class CurrentStarts(Params):
    """The current plan a ``changes`` term counts against: operation -> start minute."""

    existing: dict[OpName, int]

    def data_problems(self, data: Any) -> list[str]:
        """Also: the plan covers every operation (the ``changes`` figure compares each operation's start minute)."""
        found = super().data_problems(data)
        missing = [x for x in data.op_by_id if x not in self.existing]
        return found + problem("the current plan has no start minute for operation", missing)


RULE_PARAMS: ParamsTable = {
    "machine_order": NoParams,
    "machine_exclusive": NoParams,
    "release": NoParams,
    "changeover": NoParams,
    "tool_limit": NoParams,
    "deadline": Deadline,
    "machine_downtime": Downtime,
    "not_before": NotBefore,
    "min_lag": MinLag,
    "max_wait": MaxWait,
    "job_after": JobAfter,
    "machine_buffer": MachineBuffer,
    "operator_limit": OperatorLimit,
    "wip_limit": WipLimit,
    "cooldown": Cooldown,
    "tool_wear": ToolWear,
    "overrun_buffer": OverrunBuffer,
}
TERM_PARAMS: ParamsTable = {
    "makespan": NoParams,
    "weighted_tardiness": NoParams,
    "start_score": NoParams,
    "changes": CurrentStarts,
}


def current_plan(changes: ObjectiveTerm) -> dict[str, int]:
    """The current plan of a ``changes`` term (operation -> start minute)."""
    return as_model(parse(TERM_PARAMS, changes), CurrentStarts).existing


# -- the plan --------------------------------------------------------------------------
Plan = dict[str, int]  # operation id -> start minute


def end(d: ShopData, plan: Plan, op: Op) -> int:
    return plan[op.id] + op.duration


def job_start(d: ShopData, plan: Plan, j: Job) -> int:
    return min(plan[o.id] for o in j.ops)


def job_end(d: ShopData, plan: Plan, j: Job) -> int:
    """The minute the job's last-ending operation ends (its completion)."""
    return max(plan[o.id] + o.duration for o in j.ops)


def peak(intervals: list[tuple[int, int]]) -> tuple[int, int]:
    """(the largest number of half-open intervals [s, e) covering one minute, the first such minute)."""
    events = sorted([(s, 1) for s, e in intervals if e > s] + [(e, -1) for s, e in intervals if e > s])
    best, at, level = 0, 0, 0
    for t, step in events:  # ends (-1) sort before starts (+1) at the same minute: [s, e) is half-open
        level += step
        if level > best:
            best, at = level, t
    return best, at


def apart(plan: Plan, a: Op, b: Op, gap_ab: int, gap_ba: int) -> bool:
    """Do a and b run in some order with the stated gap between them (b after a, or a after b)?"""
    return plan[b.id] >= plan[a.id] + a.duration + gap_ab or plan[a.id] >= plan[b.id] + b.duration + gap_ba


def machine_gaps(d: ShopData, plan: Plan, machines: list[str], gap: Callable[[Op, Op], int]) -> Verdict:
    """Every pair of operations on each of ``machines`` is apart by ``gap(first, second)``
    (the pairs of :meth:`ShopData.pairs`, and :func:`apart`, read inline: this runs for
    every pair of every machine of every answer)."""
    for m in machines:
        for a, b in itertools.combinations(d.on_machine[m], 2):
            sa, sb = plan[a.id], plan[b.id]
            if sb >= sa + a.duration + gap(a, b) or sa >= sb + b.duration + gap(b, a):
                continue
            first, second = (a, b) if (sa, a.id) <= (sb, b.id) else (b, a)
            need = gap(first, second)
            return False, (
                f"on {m}, {second.id} starts at {plan[second.id]} but {first.id} ends at "
                f"{end(d, plan, first)}" + (f" (needs {need} minutes between them)" if need else " (they overlap)")
            )
    return OK


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
@check("machine_order")
def _machine_order(d: ShopData, plan: Plan, p: NoParams) -> Verdict:
    for j, a, b in d.consecutive():
        if plan[b.id] < end(d, plan, a):
            return False, f"{b.id} starts at {plan[b.id]}, before {a.id} of {j.id} ends at {end(d, plan, a)}"
    return OK


@check("machine_exclusive")
def _machine_exclusive(d: ShopData, plan: Plan, p: NoParams) -> Verdict:
    return machine_gaps(d, plan, [m.id for m in d.machines], lambda a, b: 0)


@check("release")
def _release(d: ShopData, plan: Plan, p: NoParams) -> Verdict:
    for j in d.jobs:
        for o in j.ops:
            if plan[o.id] < j.release:
                return False, f"{o.id} starts at {plan[o.id]}, before {j.id} is released at {j.release}"
    return OK


@check("changeover")
def _changeover(d: ShopData, plan: Plan, p: NoParams) -> Verdict:
    return machine_gaps(d, plan, [m.id for m in d.machines], d.setup)


@check("tool_limit")
def _tool_limit(d: ShopData, plan: Plan, p: NoParams) -> Verdict:
    for t in d.tools:
        spans = [(plan[o.id], end(d, plan, o)) for o in d.ops if o.tool == t.id]
        most, at = peak(spans)
        if most > t.count:
            return False, f"{most} operations hold {t.id} at minute {at} (only {t.count} exist)"
    return OK


@check("deadline")
def _deadline(d: ShopData, plan: Plan, p: Deadline) -> Verdict:
    for jid in p.jobs:
        done = job_end(d, plan, d.job_by_id[jid])
        if done > p.by:
            return False, f"{jid} ends at {done}, after its deadline {p.by}"
    return OK


@check("machine_downtime")
def _machine_downtime(d: ShopData, plan: Plan, p: Downtime) -> Verdict:
    for o in d.on_machine[p.machine]:
        if plan[o.id] < p.end and end(d, plan, o) > p.start:
            return False, f"{o.id} runs on {p.machine} during its downtime {p.start}-{p.end}"
    return OK


@check("not_before")
def _not_before(d: ShopData, plan: Plan, p: NotBefore) -> Verdict:
    if plan[p.op] < p.at:
        return False, f"{p.op} starts at {plan[p.op]}, before {p.at}"
    return OK


@check("min_lag")
def _min_lag(d: ShopData, plan: Plan, p: MinLag) -> Verdict:
    named = set(p.ops)
    for _, a, b in d.consecutive():
        if a.id in named and plan[b.id] < end(d, plan, a) + p.minutes:
            return False, f"{b.id} starts at {plan[b.id]}, less than {p.minutes} minutes after {a.id} ends"
    return OK


@check("max_wait")
def _max_wait(d: ShopData, plan: Plan, p: MaxWait) -> Verdict:
    named = set(p.jobs)
    for j, a, b in d.consecutive():
        if j.id in named and plan[b.id] - end(d, plan, a) > p.minutes:
            return False, f"{b.id} waits {plan[b.id] - end(d, plan, a)} minutes after {a.id} (at most {p.minutes})"
    return OK


@check("job_after")
def _job_after(d: ShopData, plan: Plan, p: JobAfter) -> Verdict:
    for a, b in p.pairs:
        done, begun = job_end(d, plan, d.job_by_id[a]), job_start(d, plan, d.job_by_id[b])
        if begun < done:
            return False, f"{b} starts at {begun}, before {a} is finished at {done}"
    return OK


@check("machine_buffer")
def _machine_buffer(d: ShopData, plan: Plan, p: MachineBuffer) -> Verdict:
    return machine_gaps(d, plan, [p.machine], lambda a, b: p.minutes)


@check("operator_limit")
def _operator_limit(d: ShopData, plan: Plan, p: OperatorLimit) -> Verdict:
    most, at = peak([(plan[o.id], end(d, plan, o)) for o in d.ops])
    if most > p.max:
        return False, f"{most} operations run at minute {at} (at most {p.max})"
    return OK


@check("wip_limit")
def _wip_limit(d: ShopData, plan: Plan, p: WipLimit) -> Verdict:
    most, at = peak([(job_start(d, plan, j), job_end(d, plan, j)) for j in d.jobs])
    if most > p.max:
        return False, f"{most} jobs are in progress at minute {at} (at most {p.max})"
    return OK


@check("cooldown")
def _cooldown(d: ShopData, plan: Plan, p: Cooldown) -> Verdict:
    return machine_gaps(d, plan, [p.machine], lambda a, b: p.minutes if a.duration > p.longer_than else 0)


def worn(d: ShopData, plan: Plan, p: ToolWear) -> int:
    """Minutes the machine runs before minute ``p.until`` (the tool's wear)."""
    return sum(min(end(d, plan, o), p.until) - min(plan[o.id], p.until) for o in d.on_machine[p.machine])


@check("tool_wear")
def _tool_wear(d: ShopData, plan: Plan, p: ToolWear) -> Verdict:
    used = worn(d, plan, p)
    if used > p.minutes:
        return False, f"{p.machine} runs {used} minutes before minute {p.until} (its tool allows {p.minutes})"
    return OK


@check("overrun_buffer")
def _overrun_buffer(d: ShopData, plan: Plan, p: OverrunBuffer) -> Verdict:
    for _, a, b in d.consecutive():
        if plan[b.id] < end(d, plan, a) + p.minutes:
            return False, f"{b.id} starts less than {p.minutes} minutes after {a.id} ends"
    return machine_gaps(d, plan, [m.id for m in d.machines], lambda a, b: p.minutes)


# -- objective -------------------------------------------------------------------------
def makespan(d: ShopData, plan: Plan) -> int:
    return max(end(d, plan, o) for o in d.ops)


def tardiness(d: ShopData, plan: Plan) -> int:
    return sum(j.weight * max(0, job_end(d, plan, j) - j.due) for j in d.jobs)


def start_score(d: ShopData, plan: Plan) -> int:
    return sum(d.job_of[o.id].priority * plan[o.id] for o in d.ops)


def objective_value(d: ShopData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "makespan":
        return makespan(d, plan)
    if kind == "weighted_tardiness":
        return tardiness(d, plan)
    if kind == "start_score":
        return start_score(d, plan)
    if kind == "changes":
        old = as_model(tp, CurrentStarts).existing
        return sum(1 for o in d.ops if plan[o.id] != old[o.id])
    raise ValueError(f"unknown objective kind {term.kind!r}")


def verification(d: ShopData, plan: Plan) -> dict[str, dict[str, int]]:
    """The stated figures: each job's completion and the minute each machine's last operation
    ends (0 for a machine without operations)."""
    last = {m.id: max((end(d, plan, o) for o in d.on_machine[m.id]), default=0) for m in d.machines}
    return {"job_end": {j.id: job_end(d, plan, j) for j in d.jobs}, "machine_last": last}


def neighbours(d: ShopData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one operation moved to any other start minute of the
    horizon (a one-rule break often needs a long move: past a deadline, into a downtime,
    next to another family's operation), or two operations on one machine swapped in
    place (each starting where the other started)."""
    for o in d.ops:
        for s in range(d.horizon - o.duration + 1):
            if s != plan[o.id]:
                yield {**plan, o.id: s}
    for m in d.machines:
        for a, b in d.pairs(m.id):
            sa, sb = plan[b.id], plan[a.id]
            if sa + a.duration <= d.horizon and sb + b.duration <= d.horizon:
                yield {**plan, a.id: sa, b.id: sb}


class ResourceScheduling(PlanChecker):
    family = "project"
    task = TASK_ID
    plan_key = "schedule"
    plan_text = (
        "a schedule naming every operation exactly once with a listed operation id and a whole-number start "
        "minute from 0, each operation ending by the horizon"
    )
    data_type = ShopData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: ShopData) -> dict[str, Any]:
        return {"op": lookup([o.id for o in d.ops])}

    def read_plan(self, d: ShopData, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Plan | None, str]:
        return start_rows(section, "operation", "operations", lk["op"], d.op_duration, d.horizon, "minute")

    def objective_value(self, d: ShopData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: ShopData, plan: Plan) -> dict[str, dict[str, int]]:
        return verification(d, plan)

    def existing(self, d: ShopData, plan: Plan) -> dict[str, int]:
        return {o.id: plan[o.id] for o in d.ops}

    def plan_schema(self, d: ShopData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        row = {
            "type": "object",
            "properties": {
                "operation": {"enum": [o.id for o in d.ops]},
                "start": {"type": "integer", "minimum": 0, "description": "start minute"},
            },
            "required": ["operation", "start"],
        }
        return {"type": "array", "items": row, "description": "every operation exactly once"}

    def verification_schema(self, d: ShopData) -> dict[str, Any]:
        return figures_schema({
            "job_end": ([j.id for j in d.jobs], "for each job, the minute its last operation ends"),
            "machine_last": ([m.id for m in d.machines], "for each machine, the minute its last operation ends"),
        })  # fmt: skip

    def plan_json(self, d: ShopData, plan: Plan) -> list[dict[str, Any]]:
        return [{"operation": o.id, "start": plan[o.id]} for o in d.ops]

    def neighbours(self, data: ShopData, plan: Plan) -> Iterator[Plan]:
        """One move from ``plan`` (see :func:`neighbours`), for the kit's near misses."""
        return neighbours(data, plan)

    def baseline_plan(self, d: ShopData, instance: Instance) -> Plan:
        """Job by job in listed order, each operation as early as its job's previous operation,
        its release and its machine (appended after the machine's last operation) allow:
        valid for the job order and the machines, blind to tools, changeovers, downtime and
        the objective."""
        free = {m.id: 0 for m in d.machines}
        plan: Plan = {}
        for j in d.jobs:
            ready = j.release
            for o in j.ops:
                s = max(ready, free[o.machine])
                plan[o.id] = s
                ready = free[o.machine] = s + o.duration
        return plan


TASK = ResourceScheduling()
