"""Checks for Work Assignment Scheduling answers: every task gets one worker and one day
of the week (and, for robustness, a backup worker).

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. Every figure is recomputed from the plan in plain Python integers.
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt

from pbsolve.checker_kit import OK, PlanChecker, lookup, row_names, spread_verdict
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "work_assignment_scheduling"
DAY_WEIGHT = 10  # the order score weighs a task's day number by 10 and its worker's number by 1


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Worker(_Frozen):
    id: str
    skills: tuple[str, ...]
    rate: NonNegativeInt = Field(description="cost per hour worked")
    max_day: PositiveInt = Field(description="hours this worker can work on one day")
    days_off: tuple[str, ...] = Field(default=(), description="days this worker does not work")


class Job(_Frozen):
    id: str
    name: str
    skill: str
    hours: PositiveInt
    release: str = Field(description="first day the task may be done")
    due: str = Field(description="day the task is due; later days count as late")
    weight: PositiveInt = Field(description="lateness weight per day late")
    priority: PositiveInt = Field(
        description="priority points: the order score weighs the task's day and worker by them"
    )


class Chain(_Frozen):
    """Tasks done in this order that pay ``cost`` whenever two consecutive ones change worker."""

    id: str
    tasks: tuple[str, ...]
    cost: PositiveInt


class WorkData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    days: tuple[str, ...]
    workers: tuple[Worker, ...]
    tasks: tuple[Job, ...]
    chains: tuple[Chain, ...] = ()
    uncertain: tuple[Uncertain, ...] = ()

    @cached_property
    def day_index(self) -> dict[str, int]:
        return {d: i for i, d in enumerate(self.days)}

    @cached_property
    def worker_by_id(self) -> dict[str, Worker]:
        return {w.id: w for w in self.workers}

    @cached_property
    def task_by_id(self) -> dict[str, Job]:
        return {t.id: t for t in self.tasks}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {"day": self.day_index, "worker": self.worker_by_id, "task": self.task_by_id}
        return names[what]

    @cached_property
    def worker_number(self) -> dict[str, int]:
        """Worker id -> its position in the list, from 1 (the order score reads it)."""
        return {w.id: k for k, w in enumerate(self.workers, 1)}


def replaced(d: WorkData, **changes: Any) -> WorkData:
    """``d`` with fields replaced, as a new object: ``model_copy`` would carry over the
    cached lookups (``worker_by_id`` ...) of the old data."""
    return WorkData.model_validate({**{f: getattr(d, f) for f in WorkData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
DayName = Annotated[str, Names("day")]
WorkerName = Annotated[str, Names("worker")]
TaskName = Annotated[str, Names("task")]


class HardDeadline(Params):
    """The named tasks are done no later than their due day."""

    tasks: list[TaskName]


class WeeklyHours(Params):
    """Each named worker works at most ``max`` hours over the whole week."""

    workers: list[WorkerName]
    max: NonNegativeInt


class WorkerAbsent(Params):
    """The worker does no task on the named days."""

    worker: WorkerName
    days: list[DayName]


class NotBefore(Params):
    """The task is done on ``day`` or later (a postponed task)."""

    task: TaskName
    day: DayName


class Precedence(Params):
    """For each pair, the second task is done on a later day than the first."""

    pairs: list[tuple[TaskName, TaskName]]


class LoadBalance(Params):
    """Weekly hours of any two workers differ by at most ``max``."""

    max: NonNegativeInt


class DifferentWorker(Params):
    """For each pair, the two tasks are done by different workers (reviewer is not the author)."""

    pairs: list[tuple[TaskName, TaskName]]


class SameWorker(Params):
    """The named tasks are all done by one worker."""

    tasks: list[TaskName]


class MinHours(Params):
    """Each named worker works at least ``min`` hours over the week."""

    workers: list[WorkerName]
    min: NonNegativeInt


class CumulativeRest(Params):
    """A worker with more than ``hours`` hours from the first day through ``day`` works at
    most ``light`` hours on the day after ``day``."""

    day: DayName
    hours: NonNegativeInt
    light: NonNegativeInt

    def data_problems(self, data: Any) -> list[str]:
        found = super().data_problems(data)
        if not found and data.day_index[self.day] == len(data.days) - 1:
            found.append(f"the checkpoint {self.day!r} is the last day: there is no next day to keep light")
        return found


class ConsecutiveDays(Params):
    """No worker works on more than ``max`` consecutive days."""

    max: PositiveInt


class CurrentTasks(Params):
    """The current plan a ``changes`` term counts against: task -> (worker, day)."""

    existing: dict[TaskName, tuple[WorkerName, DayName]]


RULE_PARAMS: ParamsTable = {
    "skill": NoParams,
    "daily_hours": NoParams,
    "availability": NoParams,
    "release": NoParams,
    "hard_deadline": HardDeadline,
    "weekly_hours": WeeklyHours,
    "worker_absent": WorkerAbsent,
    "not_before": NotBefore,
    "precedence": Precedence,
    "load_balance": LoadBalance,
    "different_worker": DifferentWorker,
    "same_worker": SameWorker,
    "min_hours": MinHours,
    "cumulative_rest": CumulativeRest,
    "consecutive_days": ConsecutiveDays,
    "worker_backup": NoParams,
}
TERM_PARAMS: ParamsTable = {
    "labour_cost": NoParams,
    "lateness": NoParams,
    "handovers": NoParams,
    "order_score": NoParams,
    "backup_score": NoParams,
    "changes": CurrentTasks,
}


def current_plan(changes: ObjectiveTerm) -> dict[str, tuple[str, str]]:
    """The current plan of a ``changes`` term (task -> (worker, day))."""
    return as_model(parse(TERM_PARAMS, changes), CurrentTasks).existing


# -- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    assign: dict[str, tuple[str, str]]  # task -> (worker, day)
    backup: dict[str, str] | None = None  # task -> backup worker (robustness only)


def worker_of(plan: Plan, task: str) -> str:
    return plan.assign[task][0]


def day_hours(d: WorkData, plan: Plan) -> dict[tuple[str, str], int]:
    """(worker, day) -> hours worked, for every worker and day."""
    out = {(w.id, day): 0 for w in d.workers for day in d.days}
    for t in d.tasks:
        out[plan.assign[t.id]] += t.hours
    return out


def week_hours(d: WorkData, plan: Plan) -> dict[str, int]:
    out = {w.id: 0 for w in d.workers}
    for t in d.tasks:
        out[worker_of(plan, t.id)] += t.hours
    return out


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
@check("skill")
def _skill(d: WorkData, plan: Plan, p: NoParams) -> Verdict:
    for t in d.tasks:
        w = worker_of(plan, t.id)
        if t.skill not in d.worker_by_id[w].skills:
            return False, f"{w} lacks the skill {t.skill} that {t.id} needs"
    return OK


@check("daily_hours")
def _daily_hours(d: WorkData, plan: Plan, p: NoParams) -> Verdict:
    for (w, day), h in day_hours(d, plan).items():
        if h > d.worker_by_id[w].max_day:
            return False, f"{w} works {h} hours on {day} (at most {d.worker_by_id[w].max_day})"
    return OK


@check("availability")
def _availability(d: WorkData, plan: Plan, p: NoParams) -> Verdict:
    for t in d.tasks:
        w, day = plan.assign[t.id]
        if day in d.worker_by_id[w].days_off:
            return False, f"{w} has {day} off but does {t.id}"
    return OK


@check("release")
def _release(d: WorkData, plan: Plan, p: NoParams) -> Verdict:
    idx = d.day_index
    for t in d.tasks:
        day = plan.assign[t.id][1]
        if idx[day] < idx[t.release]:
            return False, f"{t.id} is done on {day}, before its release day {t.release}"
    return OK


@check("hard_deadline")
def _hard_deadline(d: WorkData, plan: Plan, p: HardDeadline) -> Verdict:
    idx = d.day_index
    for tid in p.tasks:
        day, due = plan.assign[tid][1], d.task_by_id[tid].due
        if idx[day] > idx[due]:
            return False, f"{tid} is done on {day}, after its deadline {due}"
    return OK


@check("weekly_hours")
def _weekly_hours(d: WorkData, plan: Plan, p: WeeklyHours) -> Verdict:
    hours = week_hours(d, plan)
    for w in p.workers:
        if hours[w] > p.max:
            return False, f"{w} works {hours[w]} hours in the week (at most {p.max})"
    return OK


@check("worker_absent")
def _worker_absent(d: WorkData, plan: Plan, p: WorkerAbsent) -> Verdict:
    for t in d.tasks:
        w, day = plan.assign[t.id]
        if w == p.worker and day in p.days:
            return False, f"{w} is absent on {day} but does {t.id}"
    return OK


@check("not_before")
def _not_before(d: WorkData, plan: Plan, p: NotBefore) -> Verdict:
    day = plan.assign[p.task][1]
    if d.day_index[day] < d.day_index[p.day]:
        return False, f"{p.task} is done on {day}, before {p.day}"
    return OK


@check("precedence")
def _precedence(d: WorkData, plan: Plan, p: Precedence) -> Verdict:
    idx = d.day_index
    for a, b in p.pairs:
        da, db = plan.assign[a][1], plan.assign[b][1]
        if idx[db] <= idx[da]:
            return False, f"{b} ({db}) is not on a later day than {a} ({da})"
    return OK


@check("load_balance")
def _load_balance(d: WorkData, plan: Plan, p: LoadBalance) -> Verdict:
    hours = week_hours(d, plan)
    return spread_verdict(hours, p.max, "works", "hours")


@check("different_worker")
def _different_worker(d: WorkData, plan: Plan, p: DifferentWorker) -> Verdict:
    for a, b in p.pairs:
        if worker_of(plan, a) == worker_of(plan, b):
            return False, f"{a} and {b} are both done by {worker_of(plan, a)}"
    return OK


@check("same_worker")
def _same_worker(d: WorkData, plan: Plan, p: SameWorker) -> Verdict:
    who = sorted({worker_of(plan, t) for t in p.tasks})
    return OK if len(who) == 1 else (False, f"{', '.join(p.tasks)} are done by {', '.join(who)}")


@check("min_hours")
def _min_hours(d: WorkData, plan: Plan, p: MinHours) -> Verdict:
    hours = week_hours(d, plan)
    for w in p.workers:
        if hours[w] < p.min:
            return False, f"{w} works {hours[w]} hours in the week (at least {p.min})"
    return OK


@check("cumulative_rest")
def _cumulative_rest(d: WorkData, plan: Plan, p: CumulativeRest) -> Verdict:
    """Walks each worker's running total day by day; past the checkpoint the next day is capped."""
    hours = day_hours(d, plan)
    stop = d.day_index[p.day]
    after = d.days[stop + 1]
    for w in d.workers:
        running = 0
        for day in d.days[: stop + 1]:
            running += hours[w.id, day]
        if running > p.hours and hours[w.id, after] > p.light:
            return False, (
                f"{w.id} works {running} hours through {p.day} (over {p.hours}) and {hours[w.id, after]} on "
                f"{after} (at most {p.light})"
            )
    return OK


@check("consecutive_days")
def _consecutive_days(d: WorkData, plan: Plan, p: ConsecutiveDays) -> Verdict:
    hours = day_hours(d, plan)
    for w in d.workers:
        run = 0
        for day in d.days:
            run = run + 1 if hours[w.id, day] > 0 else 0
            if run > p.max:
                return False, f"{w.id} works {run} days in a row up to {day} (at most {p.max})"
    return OK


@check("worker_backup")
def _worker_backup(d: WorkData, plan: Plan, p: NoParams) -> Verdict:
    """Simulates each worker falling ill for the week on their own: their tasks move to the
    backups (on the same days), which must have the skill and not be off that day, and no
    worker may then exceed their daily hours."""
    backup = plan.backup or {}
    for t in d.tasks:
        b, (w, day) = backup.get(t.id), plan.assign[t.id]
        if b is None:
            return False, f"{t.id} names no backup worker"
        if b == w:
            return False, f"{t.id}'s backup is its own worker"
        if t.skill not in d.worker_by_id[b].skills:
            return False, f"{t.id}'s backup {b} lacks the skill {t.skill}"
        if day in d.worker_by_id[b].days_off:
            return False, f"{t.id}'s backup {b} has {day} off"
    for ill in d.workers:
        moved = {
            t.id: ((backup[t.id], plan.assign[t.id][1]) if worker_of(plan, t.id) == ill.id else plan.assign[t.id])
            for t in d.tasks
        }
        for (w, day), h in day_hours(d, Plan(moved)).items():
            if h > d.worker_by_id[w].max_day:
                return (
                    False,
                    f"if {ill.id} fell ill, {w} would work {h} hours on {day} (at most {d.worker_by_id[w].max_day})",
                )
    return OK


# -- objective -------------------------------------------------------------------------
def lateness(d: WorkData, t: Job, day: str) -> int:
    return t.weight * max(0, d.day_index[day] - d.day_index[t.due])


def handovers(d: WorkData, plan: Plan) -> int:
    total = 0
    for c in d.chains:
        for a, b in zip(c.tasks, c.tasks[1:]):
            if worker_of(plan, a) != worker_of(plan, b):
                total += c.cost
    return total


def objective_value(d: WorkData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "labour_cost":
        return sum(d.worker_by_id[worker_of(plan, t.id)].rate * t.hours for t in d.tasks)
    if kind == "lateness":
        return sum(lateness(d, t, plan.assign[t.id][1]) for t in d.tasks)
    if kind == "handovers":
        return handovers(d, plan)
    if kind == "order_score":
        num, idx = d.worker_number, d.day_index
        total = 0
        for t in d.tasks:
            w, day = plan.assign[t.id]
            total += t.priority * (DAY_WEIGHT * (idx[day] + 1) + num[w])
        return total
    if kind == "backup_score":
        num = d.worker_number
        return sum(num[(plan.backup or {})[t.id]] for t in d.tasks)
    if kind == "changes":
        old = as_model(tp, CurrentTasks).existing
        return sum(1 for t in d.tasks if tuple(plan.assign[t.id]) != tuple(old[t.id]))
    raise ValueError(f"unknown objective kind {term.kind!r}")


def neighbours(d: WorkData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one task's worker or day changed, one backup changed,
    or two tasks' (worker, day) swapped."""
    for t in d.tasks:
        w, day = plan.assign[t.id]
        for other in d.workers:
            if other.id != w:
                yield Plan({**plan.assign, t.id: (other.id, day)}, plan.backup)
        for when in d.days:
            if when != day:
                yield Plan({**plan.assign, t.id: (w, when)}, plan.backup)
        if plan.backup is not None:
            for other in d.workers:
                if other.id != plan.backup[t.id]:
                    yield Plan(plan.assign, {**plan.backup, t.id: other.id})
    for a, b in itertools.combinations([t.id for t in d.tasks], 2):
        if plan.assign[a] != plan.assign[b]:
            yield Plan({**plan.assign, a: plan.assign[b], b: plan.assign[a]}, plan.backup)


class WorkAssignment(PlanChecker):
    family = "workforce"
    task = TASK_ID
    plan_key = "assignments"
    plan_text = (
        "a list of assignments naming every task exactly once with a listed worker and a listed day (and a backup "
        "worker where the rules ask for one)"
    )
    data_type = WorkData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: WorkData) -> dict[str, Any]:
        return {
            "task": lookup([t.id for t in d.tasks]),
            "worker": lookup([w.id for w in d.workers]),
            "day": lookup(list(d.days)),
        }

    def read_plan(self, d: WorkData, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Plan | None, str]:
        rows = section.get("assignments") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'assignments' is missing or not a list"
        need_backup = any(r.kind == "worker_backup" for r in rules)
        assign: dict[str, tuple[str, str]] = {}
        backup: dict[str, str] = {}
        fields = {"task": lk["task"], "worker": lk["worker"], "day": lk["day"]}
        tx, wx, dx = lk["task"].exact, lk["worker"].exact, lk["day"].exact
        for k, row in enumerate(rows):
            try:  # the usual row, each name as the instance spells it: row_names' answer, read inline
                if type(row) is not dict:
                    raise TypeError
                tid, w, day = tx[row["task"]], wx[row["worker"]], dx[row["day"]]
            except (KeyError, TypeError):
                found, why = row_names(row, k, "assignment", fields)
                if found is None:
                    return None, why
                tid, w, day = found
            if tid in assign:
                return None, f"task {tid} appears more than once"
            assign[tid] = (w, day)
            if need_backup:
                b = row.get("backup")
                b_id = lk["worker"].find(b) if isinstance(b, str) else None
                if b_id is None:
                    return None, f"task {tid} needs a 'backup' worker from the worker list"
                backup[tid] = b_id
        missing = [t.id for t in d.tasks if t.id not in assign]
        if missing:
            return None, f"tasks missing from the assignments: {', '.join(missing)}"
        return Plan(assign, backup if need_backup else None), "complete plan"

    def objective_value(self, d: WorkData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: WorkData, plan: Plan) -> dict[str, dict[str, int]]:
        per_day = {day: 0 for day in d.days}
        for t in d.tasks:
            per_day[plan.assign[t.id][1]] += t.hours
        return {"hours": week_hours(d, plan), "day_hours": per_day}

    def existing(self, d: WorkData, plan: Plan) -> dict[str, list[str]]:
        return {t.id: list(plan.assign[t.id]) for t in d.tasks}

    def plan_schema(self, d: WorkData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        workers = [w.id for w in d.workers]
        props: dict[str, Any] = {
            "task": {"enum": [t.id for t in d.tasks]},
            "worker": {"enum": workers},
            "day": {"enum": list(d.days)},
        }
        if any(r.kind == "worker_backup" for r in rules):
            props["backup"] = {"enum": workers, "description": "backup worker if the task's worker falls ill"}
        row = {"type": "object", "properties": props, "required": list(props)}
        return {"type": "array", "items": row, "description": "every task exactly once"}

    def verification_schema(self, d: WorkData) -> dict[str, Any]:
        return figures_schema({
            "hours": ([w.id for w in d.workers], "for each worker, the hours they work over the week"),
            "day_hours": (list(d.days), "for each day, the hours of all tasks done that day"),
        })  # fmt: skip

    def plan_json(self, d: WorkData, plan: Plan) -> list[dict[str, Any]]:
        rows = []
        for t in d.tasks:
            w, day = plan.assign[t.id]
            row = {"task": t.id, "worker": w, "day": day}
            if plan.backup is not None:
                row["backup"] = plan.backup[t.id]
            rows.append(row)
        return rows

    def neighbours(self, data: WorkData, plan: Plan) -> Iterator[Plan]:
        """One move from ``plan`` (see :func:`neighbours`), for the kit's near misses."""
        return neighbours(data, plan)

    def baseline_plan(self, d: WorkData, instance: Instance) -> Plan:
        """Task by task in listed order: the first skilled worker, not off, on the earliest
        day from the release day with room left in their day; backups: the first other
        skilled worker. Greedy and blind to costs, dependencies and caps."""
        used: dict[tuple[str, str], int] = {}
        assign: dict[str, tuple[str, str]] = {}
        idx = d.day_index
        for t in d.tasks:
            options = [
                (w.id, day)
                for day in d.days[idx[t.release] :]
                for w in d.workers
                if t.skill in w.skills and day not in w.days_off and used.get((w.id, day), 0) + t.hours <= w.max_day
            ]
            choice = options[0] if options else (d.workers[0].id, d.days[0])
            used[choice] = used.get(choice, 0) + t.hours
            assign[t.id] = choice
        backup = None
        if any(r.kind == "worker_backup" for r in instance.rules):
            backup = {
                t.id: next(
                    (w.id for w in d.workers if w.id != assign[t.id][0] and t.skill in w.skills), d.workers[0].id
                )
                for t in d.tasks
            }
        return Plan(assign, backup)


TASK = WorkAssignment()
