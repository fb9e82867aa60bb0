"""Work Assignment Scheduling: every task of a week gets one worker and one day.

Decision: x[t,w,d] = 1 when worker w does task t on day d (exactly one per task) and,
for robustness, b[t,w] = 1 when w is task t's backup worker. Tasks need a skill, take
stated hours, have release and due days, may depend on each other, and run in chains
whose change of worker pays a stated handover cost. The objective is lexicographic: the
subtask's primary figure (weighted lateness or labour cost), then handovers where chains
exist, then a stated order score (task number x (10 x day number + worker number)), which
makes the optimum unique: workers differ by skills, rates, hours and days off, so no
symmetry is broken by it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.workforce import work_assignment as wa
from pbsolve.checkers.workforce.work_assignment import Chain, Job, WorkData, Worker
from pbsolve.family import Draft, NoDraft, SolverModel
from pbsolve.kit import (
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
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=wa.TASK_ID,
    name="Work Assignment Scheduling",
    family="workforce",
    summary="assign a week's tasks to skilled workers and days under deadlines, dependencies and hour caps",
    subtasks=(
        SubtaskSpec(
            "maintenance_crew", "Maintenance crew", "repair jobs with skills, dependencies and equipment chains"
        ),
        SubtaskSpec(
            "consulting_team", "Consulting team", "billable consultants at hourly rates under client deadlines"
        ),
        SubtaskSpec("software_sprint", "Software sprint", "story work and reviews: a reviewer is never the author"),
        SubtaskSpec(
            "cleaning_services", "Cleaning services", "site rounds whose change of cleaner pays a travel handover"
        ),
        SubtaskSpec(
            "translation_agency",
            "Translation agency",
            "language-pair jobs with deadlines, rates and a second-reviewer rule",
        ),
    ),
    pool=(
        ConstraintSpec("skill", "basic", "a task's worker has the skill it needs"),
        ConstraintSpec("daily_hours", "basic", "no worker works more than their daily hours"),
        ConstraintSpec("availability", "basic", "workers' days off"),
        ConstraintSpec("release", "basic", "no task before its release day"),
        ConstraintSpec("hard_deadline", "basic", "named tasks are done by their due day"),
        ConstraintSpec("weekly_hours", "basic", "named workers work at most so many hours in the week"),
        ConstraintSpec("precedence", "medium", "dependencies: a task after another is finished"),
        ConstraintSpec("load_balance", "medium", "fairness: weekly hours within a stated gap"),
        ConstraintSpec("different_worker", "medium", "four eyes: a reviewer is not the author"),
        ConstraintSpec("same_worker", "medium", "continuity: named tasks keep one worker"),
        ConstraintSpec("min_hours", "medium", "minimum guarantee: named workers work at least so many hours"),
        ConstraintSpec("cumulative_rest", "stateful", "a worker over a running-hours threshold has a light next day"),
        ConstraintSpec("consecutive_days", "stateful", "no worker works more than so many days in a row"),
        *mechanism_pool("every task names a backup worker so any single worker falling ill is covered"),
    ),
    base_rules=("skill", "daily_hours"),
)

PEOPLE = (
    "Ana", "Ben", "Chen", "Dara", "Eli", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kemi", "Lars",
    "Mira", "Nico", "Omar", "Pia",
)  # fmt: skip
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")
SKILLS = {
    "maintenance_crew": ("electrical", "plumbing", "welding", "hvac"),
    "consulting_team": ("strategy", "finance", "data", "legal"),
    "software_sprint": ("backend", "frontend", "database", "testing"),
    "cleaning_services": ("floors", "windows", "kitchens", "deep clean"),
    "translation_agency": ("EN-DE", "EN-FR", "FR-DE", "EN-JA"),
}
WORK = {
    "maintenance_crew": ("Pump", "Boiler", "Lift", "Chiller", "Gate", "Press"),
    "consulting_team": ("Acme", "Birch Ltd", "Corvo", "Delta Bank", "Elm Co"),
    "software_sprint": ("Login", "Search", "Billing", "Export", "Profile", "Alerts"),
    "cleaning_services": ("Site North", "Site Harbour", "Site Mill", "Site Station"),
    "translation_agency": ("Manual", "Contract", "Brochure", "Website", "Patent"),
}
LATENESS_FIRST = ("maintenance_crew", "software_sprint", "translation_agency")
OBJECTIVES = {
    "maintenance_crew": ("lateness", "handovers", "labour_cost", "order_score"),
    "consulting_team": ("labour_cost", "lateness", "order_score"),
    "software_sprint": ("lateness", "order_score"),
    "cleaning_services": ("labour_cost", "handovers", "order_score"),
    "translation_agency": ("lateness", "labour_cost", "order_score"),
}
CHAINED = ("maintenance_crew", "cleaning_services")
REVIEWED = ("software_sprint", "translation_agency")
FORCED = {
    "maintenance_crew": ("precedence",),
    "consulting_team": ("hard_deadline",),
    "software_sprint": ("precedence", "different_worker"),
    "cleaning_services": (),
    "translation_agency": ("different_worker",),
}


class WorkSizes(Settings):
    """How big a work-assignment instance is."""

    days: PositiveInt = Field(ge=2, le=len(DAYS))
    workers: PositiveInt = Field(ge=2, le=len(PEOPLE))
    tasks: int = Field(ge=2, description="tasks aimed at (a draft with fewer is re-sampled)")
    hours: PositiveRange = Field(description="hours of one task")
    max_day: PositiveRange = Field(description="a worker's hours per day")


SIZES = SizeTable[WorkSizes](
    tiny=WorkSizes(days=2, workers=2, tasks=3, hours=PositiveRange(lo=1, hi=3), max_day=PositiveRange(lo=3, hi=4)),
    small=WorkSizes(days=3, workers=3, tasks=5, hours=PositiveRange(lo=1, hi=4), max_day=PositiveRange(lo=4, hi=6)),
    default=WorkSizes(days=5, workers=4, tasks=10, hours=PositiveRange(lo=1, hi=5), max_day=PositiveRange(lo=5, hi=8)),
    large=WorkSizes(days=5, workers=7, tasks=20, hours=PositiveRange(lo=1, hi=5), max_day=PositiveRange(lo=5, hi=8)),
)
PROBE_TIME = 2.0
FEW_TASKS = 6  # up to this many tasks, partition-like infeasibility proofs are instant
PRIORITY_TOP = 60  # tasks' priority points are distinct, drawn from 1..60
# measured on 40 default drafts (hard tier off): the uniqueness re-optimisations took 1.59 s with presolve
# on and 1.16 s with it off (first solves 0.94 and 1.09 s), the same certificates
UNIQUENESS_PARAMETERS = {"cp_model_presolve": False}


# -- the CP-SAT model ------------------------------------------------------------------
class WorkModel(ModelBase):
    def __init__(self, data: WorkData, with_backups: bool = False) -> None:
        super().__init__()
        self.data = d = data
        self.x: dict[tuple[str, str, str], cp_model.IntVar] = {}
        self.b: dict[tuple[str, str], cp_model.IntVar] = {}
        for t in d.tasks:
            row = [self.m.new_bool_var(f"x[{t.id},{w.id},{day}]") for w in d.workers for day in d.days]
            keys = [(t.id, w.id, day) for w in d.workers for day in d.days]
            self.x.update(zip(keys, row))
            self.m.add_exactly_one(row)
            if with_backups:
                brow = [self.m.new_bool_var(f"b[{t.id},{w.id}]") for w in d.workers]
                self.b.update({(t.id, w.id): v for w, v in zip(d.workers, brow)})
                self.m.add_exactly_one(brow)

    # Expressions are built with LinearExpr.sum / weighted_sum (one call each, not Python's
    # sum over overloaded +): building dominated generation time before.
    def by(self, task: str, worker: str) -> cp_model.LinearExpr:
        """1 when ``worker`` does ``task`` (on any day)."""
        return cp_model.LinearExpr.sum([self.x[task, worker, day] for day in self.data.days])

    def on(self, task: str, day: str) -> cp_model.LinearExpr:
        """1 when ``task`` is done on ``day`` (by anyone)."""
        return cp_model.LinearExpr.sum([self.x[task, w.id, day] for w in self.data.workers])

    def day_of(self, task: str) -> cp_model.LinearExpr:
        """The 0-based index of ``task``'s day."""
        d = self.data
        cells = [(self.x[task, w.id, day], i) for i, day in enumerate(d.days) for w in d.workers if i]
        return cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [i for _, i in cells])

    def hours(self, worker: str, day: str) -> cp_model.LinearExpr:
        tasks = self.data.tasks
        return cp_model.LinearExpr.weighted_sum([self.x[t.id, worker, day] for t in tasks], [t.hours for t in tasks])

    def week(self, worker: str) -> cp_model.LinearExpr:
        d = self.data
        cells = [(self.x[t.id, worker, day], t.hours) for t in d.tasks for day in d.days]
        return cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [h for _, h in cells])

    def weighted(self, coef: Callable[[str, str, str], int]) -> cp_model.LinearExpr:
        """Sum of coef(task, worker, day) x[task, worker, day] over the non-zero coefficients."""
        cells = [(v, c) for k, v in self.x.items() if (c := coef(*k))]
        return cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells])

    def together(
        self, a: cp_model.LinearExpr | cp_model.IntVar, b: cp_model.LinearExpr | cp_model.IntVar, name: str
    ) -> cp_model.IntVar:
        """A Boolean equal to a AND b (a, b 0/1 expressions): exact whatever is optimised."""
        z = self.m.new_bool_var(name)
        self.m.add(z <= a)
        self.m.add(z <= b)
        self.m.add(z >= a + b - 1)
        return z


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("skill")
def _skill(tm: WorkModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    for t in d.tasks:
        banned = [tm.x[t.id, w.id, day] for w in d.workers if t.skill not in w.skills for day in d.days]
        if banned:
            tm.post(sum(banned) == 0, lit)


@encoder("daily_hours")
def _daily_hours(tm: WorkModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    for w in d.workers:
        if sum(t.hours for t in d.tasks) > w.max_day:
            for day in d.days:
                tm.post(tm.hours(w.id, day) <= w.max_day, lit)


@encoder("availability")
def _availability(tm: WorkModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    for w in d.workers:
        banned = [tm.x[t.id, w.id, day] for t in d.tasks for day in w.days_off]
        if banned:
            tm.post(sum(banned) == 0, lit)


@encoder("release")
def _release(tm: WorkModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    for t in d.tasks:
        early = d.days[: d.day_index[t.release]]
        if early:
            tm.post(sum(tm.on(t.id, day) for day in early) == 0, lit)


@encoder("hard_deadline")
def _hard_deadline(tm: WorkModel, p: wa.HardDeadline, lit: cp_model.IntVar) -> None:
    d = tm.data
    for tid in p.tasks:
        tm.post(tm.day_of(tid) <= d.day_index[d.task_by_id[tid].due], lit)


@encoder("weekly_hours")
def _weekly_hours(tm: WorkModel, p: wa.WeeklyHours, lit: cp_model.IntVar) -> None:
    for w in p.workers:
        tm.post(tm.week(w) <= p.max, lit)


@encoder("worker_absent")
def _worker_absent(tm: WorkModel, p: wa.WorkerAbsent, lit: cp_model.IntVar) -> None:
    tm.post(sum(tm.x[t.id, p.worker, day] for t in tm.data.tasks for day in p.days) == 0, lit)


@encoder("not_before")
def _not_before(tm: WorkModel, p: wa.NotBefore, lit: cp_model.IntVar) -> None:
    tm.post(tm.day_of(p.task) >= tm.data.day_index[p.day], lit)


@encoder("precedence")
def _precedence(tm: WorkModel, p: wa.Precedence, lit: cp_model.IntVar) -> None:
    for a, b in p.pairs:
        tm.post(tm.day_of(b) >= tm.day_of(a) + 1, lit)


@encoder("load_balance")
def _load_balance(tm: WorkModel, p: wa.LoadBalance, lit: cp_model.IntVar) -> None:
    workers = tm.data.workers
    for a in workers:
        for b in workers:
            if a.id != b.id:
                tm.post(tm.week(a.id) - tm.week(b.id) <= p.max, lit)


@encoder("different_worker")
def _different_worker(tm: WorkModel, p: wa.DifferentWorker, lit: cp_model.IntVar) -> None:
    for a, b in p.pairs:
        for w in tm.data.workers:
            tm.post(tm.by(a, w.id) + tm.by(b, w.id) <= 1, lit)


@encoder("same_worker")
def _same_worker(tm: WorkModel, p: wa.SameWorker, lit: cp_model.IntVar) -> None:
    for a, b in zip(p.tasks, p.tasks[1:]):
        for w in tm.data.workers:
            tm.post(tm.by(a, w.id) == tm.by(b, w.id), lit)


@encoder("min_hours")
def _min_hours(tm: WorkModel, p: wa.MinHours, lit: cp_model.IntVar) -> None:
    for w in p.workers:
        tm.post(tm.week(w) >= p.min, lit)


@encoder("cumulative_rest")
def _cumulative_rest(tm: WorkModel, p: wa.CumulativeRest, lit: cp_model.IntVar) -> None:
    """Per worker a free Boolean 'over': either the running total through the checkpoint
    stays within the threshold, or the next day is light (a disjunction, both halves
    linear, big-M the week's total hours)."""
    d = tm.data
    stop = d.day_index[p.day]
    big = sum(t.hours for t in d.tasks)
    for w in d.workers:
        over = tm.m.new_bool_var("")
        running = sum(tm.hours(w.id, day) for day in d.days[: stop + 1])
        tm.post(running <= p.hours + big * over, lit)
        tm.post(tm.hours(w.id, d.days[stop + 1]) <= p.light + big * (1 - over), lit)


@encoder("consecutive_days")
def _consecutive_days(tm: WorkModel, p: wa.ConsecutiveDays, lit: cp_model.IntVar) -> None:
    d = tm.data
    for w in d.workers:
        works = []
        for day in d.days:
            v = tm.m.new_bool_var("")
            for t in d.tasks:
                tm.m.add(v >= tm.x[t.id, w.id, day])
            works.append(v)
        for k in range(len(d.days) - p.max):
            tm.post(sum(works[k : k + p.max + 1]) <= p.max, lit)


@encoder("worker_backup")
def _worker_backup(tm: WorkModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """Backup b[t,B]; when F falls ill, F's task t on day d moves to its backup B:
    moved[t,F,B,d] >= x[t,F,d] + b[t,B] - 1 (a lower bound is enough: the load row only
    pushes it down), and B's hours on d, own plus moved, stay within B's daily hours."""
    d = tm.data
    for t in d.tasks:
        for w in d.workers:
            b = tm.b[t.id, w.id]
            if t.skill not in w.skills:
                tm.post(b == 0, lit)
            tm.post(b + tm.by(t.id, w.id) <= 1, lit)
            for day in w.days_off:
                tm.post(b + tm.on(t.id, day) <= 1, lit)
    for f in d.workers:
        for w in d.workers:
            if f.id == w.id:
                continue
            # only tasks w may back up on that day: this same rule keeps the others' b[t,w] at 0
            can = [t for t in d.tasks if t.skill in w.skills]
            for day in d.days:
                today = [] if day in w.days_off else can  # (w's own hours still count on a day off)
                moved = []
                for t in today:
                    v = tm.m.new_bool_var("")
                    tm.m.add(v >= tm.x[t.id, f.id, day] + tm.b[t.id, w.id] - 1)
                    moved.append(v)
                hours = [t.hours for t in today]
                tm.post(tm.hours(w.id, day) + cp_model.LinearExpr.weighted_sum(moved, hours) <= w.max_day, lit)


def _objective(tm: WorkModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    if term.kind == "labour_cost":
        rate, hours = {w.id: w.rate for w in d.workers}, {t.id: t.hours for t in d.tasks}
        expr = tm.weighted(lambda t, w, day: rate[w] * hours[t])
        return expr, sum(t.hours for t in d.tasks) * max(w.rate for w in d.workers)
    if term.kind == "lateness":
        late = {(t.id, day): wa.lateness(d, t, day) for t in d.tasks for day in d.days}
        return tm.weighted(lambda t, w, day: late[t, day]), sum(wa.lateness(d, t, d.days[-1]) for t in d.tasks)
    if term.kind == "handovers":
        parts = []
        for c in d.chains:
            for a, b in zip(c.tasks, c.tasks[1:]):
                kept = sum(tm.together(tm.by(a, w.id), tm.by(b, w.id), "") for w in d.workers)
                parts.append(c.cost * (1 - kept))
        return sum(parts), sum(c.cost * (len(c.tasks) - 1) for c in d.chains)
    if term.kind == "order_score":
        num, idx = d.worker_number, d.day_index
        n_of = {t.id: t.priority for t in d.tasks}
        expr = tm.weighted(lambda t, w, day: n_of[t] * (wa.DAY_WEIGHT * (idx[day] + 1) + num[w]))
        ub = sum(t.priority * (wa.DAY_WEIGHT * len(d.days) + len(d.workers)) for t in d.tasks)
        return expr, ub
    if term.kind == "backup_score":
        num = d.worker_number
        return sum(num[w] * v for (_, w), v in tm.b.items()), len(d.workers) * len(d.tasks)
    if term.kind == "changes":
        old = wa.current_plan(term)
        return len(d.tasks) - sum(tm.x[t.id, old[t.id][0], old[t.id][1]] for t in d.tasks), len(d.tasks)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = WorkData.model_validate(draft.data)
    tm = WorkModel(data, with_backups=any(r.kind == "worker_backup" for r in draft.rules))

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        rows = []
        for t in data.tasks:
            w, day = next((w.id, day) for w in data.workers for day in data.days if solver.value(tm.x[t.id, w.id, day]))
            row = {"task": t.id, "worker": w, "day": day}
            if tm.b:
                row["backup"] = next(w.id for w in data.workers if solver.value(tm.b[t.id, w.id]))
            rows.append(row)
        return {"assignments": rows}

    answer = [*tm.x.values(), *tm.b.values()]
    return solver_model(
        tm, draft, ENCODERS, wa.RULE_PARAMS, _objective, decode, answer, [], uniqueness_parameters=UNIQUENESS_PARAMETERS
    )


# -- sampling --------------------------------------------------------------------------
Witness = dict[str, tuple[str, str]]  # task -> (worker, day)


def _workers(spec: GenerationSpec, s: WorkSizes, skills: tuple[str, ...], rng: random.Random) -> list[Worker]:
    """Workers with one to four skills each (every skill held by at least two), distinct
    hourly rates and their own daily hours."""
    names = rng.sample(PEOPLE, s.workers)
    held: dict[str, set[str]] = {n: set() for n in names}
    for skill in skills:
        for n in rng.sample(names, 2):
            held[n].add(skill)
    for n in names:
        if not held[n] or rng.random() < 0.3:
            held[n].add(rng.choice(skills))
    rates = rng.sample(range(20, 80, 5), s.workers)
    return [
        Worker(id=n, skills=tuple(k for k in skills if k in held[n]), rate=r, max_day=s.max_day.draw(rng))
        for n, r in zip(names, rates)
    ]


def _place(
    workers: list[Worker], days: tuple[str, ...], skill: str, hours: int, used: dict[tuple[str, str], int],
    rng: random.Random, after: int = -1, not_worker: str = "",
) -> tuple[str, str] | None:  # fmt: skip
    """A random (worker, day) with the skill and room left that day, on a day after
    index ``after`` and not by ``not_worker``; None when there is none."""
    options = [
        (w.id, day)
        for w in workers
        for i, day in enumerate(days)
        if skill in w.skills and i > after and w.id != not_worker and used.get((w.id, day), 0) + hours <= w.max_day
    ]
    return rng.choice(options) if options else None


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[WorkData, Witness]:
    s = SIZES.of(spec.size)
    days = DAYS[: s.days]
    skills = SKILLS[spec.subtask][: max(2, min(4, s.workers))]
    workers = _workers(spec, s, skills, rng)
    work = WORK[spec.subtask]
    used: dict[tuple[str, str], int] = {}
    tasks: list[Job] = []
    witness: Witness = {}
    reviewed = spec.subtask in REVIEWED
    tries = 0
    while len(tasks) < s.tasks and tries < 200:
        tries += 1
        skill, hours = rng.choice(skills), s.hours.draw(rng)
        spot = _place(workers, days, skill, hours, used, rng)
        if spot is None:
            continue
        subject = rng.choice(work)
        pair: list[tuple[str, int, tuple[str, str]]] = [(f"{subject} {_verb(spec.subtask, False)}", hours, spot)]
        if reviewed and len(tasks) + 2 <= s.tasks and (not tasks or rng.random() < 0.7):
            rh = max(1, hours // 2)
            used[spot] = used.get(spot, 0) + hours
            second = _place(workers, days, skill, rh, used, rng, after=days.index(spot[1]), not_worker=spot[0])
            used[spot] -= hours
            if second is not None:
                pair.append((f"{subject} {_verb(spec.subtask, True)}", rh, second))
            elif not tasks:
                continue  # a reviewed week opens with a reviewed task: every draft has a review pair
        for name, h, (w, day) in pair:
            used[w, day] = used.get((w, day), 0) + h
            tid = f"T{len(tasks) + 1}"
            due = _due(spec, days, days.index(day), rng)
            job = Job(
                id=tid, name=name, skill=skill, hours=h, release=days[0], due=due, weight=rng.randint(1, 3), priority=1
            )
            tasks.append(job)
            witness[tid] = (w, day)
    if len(tasks) < s.tasks:
        raise NoDraft("witness")
    points = rng.sample(range(1, PRIORITY_TOP + 1), len(tasks))
    tasks = [t.model_copy(update={"priority": p}) for t, p in zip(tasks, points)]
    data = WorkData(days=days, workers=tuple(workers), tasks=tuple(tasks), chains=_chains(spec, tasks, witness, rng))
    return data, witness


def _verb(subtask: str, review: bool) -> str:
    if subtask == "software_sprint":
        return "code review" if review else "story"
    if subtask == "translation_agency":
        return "second review" if review else "translation"
    return {"maintenance_crew": "job", "consulting_team": "workstream", "cleaning_services": "round"}[subtask]


def _due(spec: GenerationSpec, days: tuple[str, ...], at: int, rng: random.Random) -> str:
    """Lateness subtasks: due around the witness day (it may be late); others: on or after it."""
    if spec.subtask in LATENESS_FIRST:
        return days[max(0, min(len(days) - 1, at + rng.randint(-1, 1)))]
    return days[min(len(days) - 1, at + rng.randint(0, 1))]


def _chains(spec: GenerationSpec, tasks: list[Job], w: Witness, rng: random.Random) -> tuple[Chain, ...]:
    """Chained subtasks: the tasks split into runs of two or three (in task order) that
    pay a handover cost of 2-6 whenever consecutive tasks change worker."""
    if spec.subtask not in CHAINED:
        return ()
    ids = [t.id for t in tasks]
    rng.shuffle(ids)
    chains: list[Chain] = []
    k = 0
    while len(ids) - k >= 2 and len(chains) < max(1, len(tasks) // 3):
        size = 3 if len(ids) - k >= 3 and rng.random() < 0.5 else 2
        part = sorted(ids[k : k + size], key=lambda t: int(t[1:]))
        chains.append(Chain(id=f"C{len(chains) + 1}", tasks=tuple(part), cost=rng.randint(2, 6)))
        k += size
    return tuple(chains)


def _with_availability(d: WorkData, w: Witness, rng: random.Random) -> WorkData:
    """Each worker, with probability 0.7, gets a day off among the days they do not work."""
    workers = []
    for x in d.workers:
        mine = {day for ww, day in w.values() if ww == x.id}
        free = [day for day in d.days if day not in mine]
        off = (rng.choice(free),) if free and rng.random() < 0.7 else ()
        workers.append(x.model_copy(update={"days_off": off}))
    return wa.replaced(d, workers=tuple(workers))


def _with_release(d: WorkData, w: Witness, rng: random.Random) -> WorkData:
    """Each task, with probability 0.6, released on a day up to its witness day (and never after its due day)."""
    tasks = []
    for t in d.tasks:
        at = min(d.day_index[w[t.id][1]], d.day_index[t.due])  # released by its witness day and its due day
        rel = d.days[rng.randint(0, at)] if rng.random() < 0.6 else d.days[0]
        tasks.append(t.model_copy(update={"release": rel}))
    return wa.replaced(d, tasks=tuple(tasks))


def _week(d: WorkData, w: Witness) -> dict[str, int]:
    out = {x.id: 0 for x in d.workers}
    for t in d.tasks:
        out[w[t.id][0]] += t.hours
    return out


def _day_hours(d: WorkData, w: Witness) -> dict[tuple[str, str], int]:
    out = {(x.id, day): 0 for x in d.workers for day in d.days}
    for t in d.tasks:
        out[w[t.id]] += t.hours
    return out


def _pick(rng: random.Random, options: list[str], most: int) -> list[str]:
    """1..most of ``options``, kept in their given order."""
    chosen = set(rng.sample(options, min(len(options), rng.randint(1, most))))
    return [o for o in options if o in chosen]


def _b_hard_deadline(d: WorkData, w: Witness, rng: random.Random) -> wa.HardDeadline | None:
    idx = d.day_index
    options = [t.id for t in d.tasks if idx[w[t.id][1]] <= idx[t.due] < len(d.days) - 1]
    return wa.HardDeadline(tasks=_pick(rng, options, 3)) if options else None


def _b_weekly_hours(d: WorkData, w: Witness, rng: random.Random) -> wa.WeeklyHours | None:
    week = _week(d, w)
    options = [x.id for x in d.workers if week[x.id] >= 1]
    if not options:
        return None
    chosen = _pick(rng, options, 2)
    return wa.WeeklyHours(workers=chosen, max=max(week[x] for x in chosen))


def _b_precedence(d: WorkData, w: Witness, rng: random.Random) -> wa.Precedence | None:
    idx = d.day_index
    later = [(a.id, b.id) for a in d.tasks for b in d.tasks if idx[w[a.id][1]] < idx[w[b.id][1]]]
    reviews = [(a.id, b.id) for a, b in zip(d.tasks, d.tasks[1:]) if _is_review(b) and (a.id, b.id) in later]
    if not later:
        return None
    pairs = reviews or rng.sample(later, min(len(later), rng.randint(1, 3)))
    if reviews and rng.random() < 0.5:
        extra = [p for p in later if p not in reviews]
        pairs = pairs + ([rng.choice(extra)] if extra else [])
    return wa.Precedence(pairs=pairs)


def _is_review(t: Job) -> bool:
    return t.name.endswith("review")


def _b_load_balance(d: WorkData, w: Witness, rng: random.Random) -> wa.LoadBalance | None:
    week = _week(d, w).values()
    return wa.LoadBalance(max=max(week) - min(week) + rng.randint(0, 1))


def _b_different_worker(d: WorkData, w: Witness, rng: random.Random) -> wa.DifferentWorker | None:
    reviews = [(a.id, b.id) for a, b in zip(d.tasks, d.tasks[1:]) if _is_review(b)]
    if not reviews:
        reviews = [
            (a.id, b.id) for a in d.tasks for b in d.tasks
            if int(a.id[1:]) < int(b.id[1:]) and w[a.id][0] != w[b.id][0]
        ]  # fmt: skip
        same = [(a, b) for a, b in reviews if d.task_by_id[a].skill == d.task_by_id[b].skill]
        reviews = same or reviews
        reviews = rng.sample(reviews, min(len(reviews), rng.randint(1, 2)))
    return wa.DifferentWorker(pairs=reviews) if reviews else None


def _b_same_worker(d: WorkData, w: Witness, rng: random.Random) -> wa.SameWorker | None:
    by: dict[str, list[str]] = {}
    for t in d.tasks:
        by.setdefault(w[t.id][0], []).append(t.id)
    options = [ids for ids in by.values() if len(ids) >= 2]
    if not options:
        return None
    ids = rng.choice(options)
    return wa.SameWorker(tasks=sorted(rng.sample(ids, 2), key=lambda t: int(t[1:])))


def _b_min_hours(d: WorkData, w: Witness, rng: random.Random) -> wa.MinHours | None:
    week = _week(d, w)
    options = [x.id for x in d.workers if week[x.id] >= 1]
    if not options:
        return None
    chosen = _pick(rng, options, 2)
    return wa.MinHours(workers=chosen, min=min(week[x] for x in chosen))


def _b_cumulative_rest(d: WorkData, w: Witness, rng: random.Random) -> wa.CumulativeRest | None:
    hours = _day_hours(d, w)
    stop = rng.randint(0, len(d.days) - 2)
    running = {x.id: sum(hours[x.id, day] for day in d.days[: stop + 1]) for x in d.workers}
    top = max(running.values())
    if top < 1:
        return None
    threshold = rng.randint(max(0, top - 4), top - 1)
    nxt = d.days[stop + 1]
    light = max(hours[x.id, nxt] for x in d.workers if running[x.id] > threshold)
    if light >= max(x.max_day for x in d.workers):
        return None
    return wa.CumulativeRest(day=d.days[stop], hours=threshold, light=light)


def _b_consecutive_days(d: WorkData, w: Witness, rng: random.Random) -> wa.ConsecutiveDays | None:
    hours = _day_hours(d, w)
    longest = 0
    for x in d.workers:
        run = 0
        for day in d.days:
            run = run + 1 if hours[x.id, day] else 0
            longest = max(longest, run)
    return wa.ConsecutiveDays(max=longest) if 1 <= longest < len(d.days) else None


BUILDERS = {
    "hard_deadline": _b_hard_deadline,
    "weekly_hours": _b_weekly_hours,
    "precedence": _b_precedence,
    "load_balance": _b_load_balance,
    "different_worker": _b_different_worker,
    "same_worker": _b_same_worker,
    "min_hours": _b_min_hours,
    "cumulative_rest": _b_cumulative_rest,
    "consecutive_days": _b_consecutive_days,
}
STRUCTURAL = ("availability", "release")


def objective_terms(subtask: str) -> list[ObjectiveTerm]:
    """The subtask's lexicographic objective (see OBJECTIVES): its primary figure, handovers
    where tasks run in chains, the other figure, and the order score last."""
    return [ObjectiveTerm(id=k, kind=k) for k in OBJECTIVES[subtask]]


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    data, witness = _entities(spec, rng)
    sampled = sampled_kinds(spec, TASK.base_rules, FORCED[spec.subtask])
    if "availability" in sampled:
        data = _with_availability(data, witness, rng)
    if "release" in sampled:
        data = _with_release(data, witness, rng)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng, structural=STRUCTURAL)
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective_terms(spec.subtask))


# -- hard-tier hooks -------------------------------------------------------------------
def _plan(plan: dict[str, Any]) -> Witness:
    return {r["task"]: (r["worker"], r["day"]) for r in plan["assignments"]}


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A weekly-hours cap on two workers who alone hold some skills, just around their share
    of the hours those skills force on them (forced / 2, rounded up): the loosest
    infeasible of (share, share - 1). Caps this close to a counting bound keep the
    infeasibility proofs short (a cap found by bisection over the whole week could sit
    where only bin packing of the daily hours proves it, and such proofs time out)."""
    d = WorkData.model_validate(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731

    def with_cap(workers: list[str], most: int) -> Draft:
        return with_conflict_rule(draft_, "weekly_hours", wa.WeeklyHours(workers=workers, max=most), position)

    small = len(d.tasks) <= FEW_TASKS
    if any(r.kind == "load_balance" for r in draft_.rules) and not small:
        return None  # caps on some bound every worker's week: see below
    capped = {w for r in draft_.rules if r.kind == "weekly_hours" for w in r.params["workers"]}
    names = [w.id for w in d.workers]
    options = [[a, b] for i, a in enumerate(names) for b in names[i + 1 :]]
    rng.shuffle(options)
    tried = 0
    for workers in options:
        if capped | set(workers) == set(names) and not small:
            # every week bounded makes some rule subsets number-partition problems whose
            # infeasibility CP-SAT cannot prove in time (measured: 10 s per subset at the
            # default size; instant on a handful of tasks)
            continue
        forced = sum(t.hours for t in d.tasks if {w.id for w in d.workers if t.skill in w.skills} <= set(workers))
        if forced < 1:
            continue
        each = -(-forced // len(workers))  # the cap is per worker: below this share they cannot cover the skills
        caps = [k for k in (each, each - 1) if k >= 0]
        found = first_infeasible(caps, lambda k: with_cap(workers, k), feasible)  # noqa: B023 - called within this iteration
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
        tried += 1
        if tried == 4:
            break
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A worker absent on the day of a task they do, or a task postponed past its day."""
    d = WorkData.model_validate(draft_.data)
    out = []
    for t in d.tasks:
        w, day = _plan(plan)[t.id]
        options = [make_rule("worker_absent", "hard", wa.WorkerAbsent(worker=w, days=[day]))]
        at = d.day_index[day]
        if at + 1 < len(d.days):
            options.append(make_rule("not_before", "hard", wa.NotBefore(task=t.id, day=d.days[at + 1])))
        out.append(rng.choice(options))
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, list[str]]:
    return {r["task"]: [r["worker"], r["day"]] for r in plan["assignments"]}


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    return make_rule("worker_backup", "hard", NoParams()), [ObjectiveTerm(id="backup_score", kind="backup_score")]


UNCERTAIN_EACH = 2  # candidates of each kind probed (each costs two optimisations)


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Task hours (worst: high) and workers' daily hours (worst: low), at most three of
    each: under a labour-cost objective longer hours always cost more, so the daily
    hours are the inputs whose worst case may cost nothing."""
    d = WorkData.model_validate(draft_.data)
    hours = [
        Uncertain(id="", kind="hours", target=t.id, low=t.hours, high=t.hours + rng.randint(1, 2)) for t in d.tasks
    ]
    capacity = [
        Uncertain(id="", kind="capacity", target=w.id, low=w.max_day - rng.randint(1, 2), high=w.max_day)
        for w in d.workers
        if w.max_day > 2
    ]
    out = rng.sample(hours, min(UNCERTAIN_EACH, len(hours))) + rng.sample(capacity, min(UNCERTAIN_EACH, len(capacity)))
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = WorkData.model_validate(data)
    if u.kind == "capacity":
        workers = tuple(w.model_copy(update={"max_day": value}) if w.id == u.target else w for w in d.workers)
        return {**data, "workers": [w.model_dump(mode="json") for w in workers]}
    tasks = tuple(t.model_copy(update={"hours": value}) if t.id == u.target else t for t in d.tasks)
    return {**data, "tasks": [t.model_dump(mode="json") for t in tasks]}


def worst_is_low(u: Uncertain) -> bool:
    return u.kind == "capacity"


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = WorkData.model_validate(draft_.data)
    w = _plan(plan)
    per_day = {day: 0 for day in d.days}
    for t in d.tasks:
        per_day[w[t.id][1]] += t.hours
    return {"hours": _week(d, w), "day_hours": per_day}


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
