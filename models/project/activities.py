"""Project Planning (RCPSP): every activity of a project gets a start day.

Decision: one integer start s[a] per activity and its fixed-size interval (the way
PyJobShop builds its CP-SAT model); finish-to-start and start-to-start links with lags
are linear inequalities, and every day-profile rule (renewable resource capacity, an
outage, the daily budget, the span of control, a spare unit) is one ``AddCumulative``
whose blocking interval is present exactly when the rule's enforcement literal is on, so
every numbered rule can be switched off for conflict sets. The objective is
lexicographic: the makespan, then milestone lateness where the subtask has milestones,
then the start score (each activity's start day times its stated weight: "start work as
early as possible", with distinct weights so that the optimum is unique; activities are
never interchangeable, so no symmetry is broken by it). Imported PSPLIB files state
weight 1 for every activity (the total start time).
"""

from __future__ import annotations

import random
import re
from typing import Any, Literal

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible, lexicographic_weights, make_solver
from pbsolve.checkers.project import activities as pj
from pbsolve.checkers.project.activities import Activity, Link, Milestone, Plan, ProjectData, Resource
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
from pbsolve.params import NoParams, Params, make_rule, make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.sources import Imported, SourceError, SourceFile
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=pj.TASK_ID,
    name="Project Planning",
    family="project",
    summary="start days for a project's activities under links with lags, renewable resources, deadlines and budgets",
    subtasks=(
        SubtaskSpec(
            "construction",
            "Construction site",
            "building works with curing lags, a tower crane, delivery windows and milestone due days",
        ),
        SubtaskSpec(
            "software_release",
            "Software release",
            "development and test work with start-to-start links, shared test environments and release milestones",
        ),
        SubtaskSpec(
            "event_buildup",
            "Event build-up",
            "rigging and fit-out of a venue with shared halls that allow one job at a time and hard deadlines",
        ),
        SubtaskSpec(
            "plant_shutdown",
            "Plant turnaround",
            "maintenance jobs released as units cool down, under a daily spending budget",
        ),
        SubtaskSpec(
            "plain_rcpsp",
            "Plain RCPSP",
            "activities, finish-to-start links and renewable resources only (the PSPLIB form; `--from` imports .sm files)",
        ),
    ),
    pool=(
        ConstraintSpec("precedence", "basic", "finish-to-start links with minimum lags and start-to-start links"),
        ConstraintSpec("resource_capacity", "basic", "renewable resources: daily usage within capacity"),
        ConstraintSpec("release", "basic", "no activity starts before its release day"),
        ConstraintSpec("deadline", "basic", "named activities finish by a stated day"),
        ConstraintSpec("time_window", "basic", "an activity starts within a stated window (a delivery slot)"),
        ConstraintSpec("resource_outage", "basic", "some units of a resource are out of service for some days"),
        ConstraintSpec("daily_budget", "basic", "the daily costs of running activities stay within a budget"),
        ConstraintSpec("max_lag", "medium", "an activity starts at most so many days after another finishes"),
        ConstraintSpec("no_overlap", "medium", "activities sharing a work area never run on a common day"),
        ConstraintSpec("max_parallel", "medium", "span of control: at most so many activities at once"),
        ConstraintSpec("synchronised_start", "medium", "two activities start within a stated number of days"),
        ConstraintSpec(
            "work_to_date", "stateful", "cumulative unit-days of a resource by a checkpoint stay within a cap"
        ),
        ConstraintSpec("progress_by", "stateful", "cumulative activity-days done by a checkpoint reach a target"),
        *mechanism_pool(
            "named resources keep one unit spare on every day, so any single unit breaking down is covered",
            replan="repair a disrupted schedule moving the fewest activities",
        ),
    ),
    base_rules=("precedence", "resource_capacity"),
)

# subtask -> (resources (name, capacity range)), activity names
RESOURCES: dict[str, tuple[tuple[str, int, int], ...]] = {
    "construction": (("carpenters", 3, 6), ("tower crane", 1, 2), ("concrete crew", 2, 4)),
    "software_release": (("backend developers", 2, 5), ("test environments", 1, 2), ("QA engineers", 2, 3)),
    "event_buildup": (("riggers", 3, 6), ("forklifts", 1, 3), ("electricians", 2, 4)),
    "plant_shutdown": (("fitters", 3, 6), ("scaffolders", 2, 4), ("mobile crane", 1, 2)),
    "plain_rcpsp": (("resource R1", 3, 6), ("resource R2", 2, 5), ("resource R3", 2, 4)),
}
NAMES: dict[str, tuple[str, ...]] = {
    "construction": (
        "Excavation", "Foundations", "Ground slab", "Steel frame", "Roof", "Brickwork", "Windows", "Plumbing",
        "Wiring", "Plastering", "Flooring", "Painting", "Landscaping", "Drainage", "Façade", "Inspection",
    ),
    "software_release": (
        "API design", "Database schema", "Backend build", "Frontend build", "Integration", "Load test",
        "Security review", "Docs", "Beta rollout", "Migration", "Regression tests", "UI polish", "Release notes",
        "Monitoring", "Data import", "Sign-off",
    ),
    "event_buildup": (
        "Truss rigging", "Stage build", "Lighting", "Sound system", "Booth frames", "Carpeting", "Signage",
        "Catering setup", "Power distribution", "Seating", "LED walls", "Registration desk", "Dressing",
        "Network", "Safety check", "Rehearsal",
    ),
    "plant_shutdown": (
        "Isolation", "Draining", "Heat exchanger", "Pump overhaul", "Valve change", "Vessel inspection",
        "Scaffolding", "Catalyst change", "Pipe repair", "Instrument calibration", "Insulation", "Flange test",
        "Cleaning", "Leak test", "Restart prep", "Boiler check",
    ),
    "plain_rcpsp": tuple(f"Activity {k}" for k in range(1, 17)),
}  # fmt: skip
MILESTONES = {
    "construction": ("Structure complete", "Weather-tight", "Handover"),
    "software_release": ("Feature freeze", "Release candidate", "Go-live"),
}
LAGGED = ("construction", "plant_shutdown")  # finish-to-start links carry minimum lags (curing, cooling)
START_LINKS = ("software_release", "event_buildup")  # some links are start-to-start
RELEASED = ("plant_shutdown",)
FORCED = {
    "construction": ("time_window",),
    "software_release": ("synchronised_start",),
    "event_buildup": ("deadline", "no_overlap"),
    "plant_shutdown": ("release", "daily_budget"),
    "plain_rcpsp": (),
}
OBJECTIVES = {
    "construction": ("makespan", "milestone_lateness", "start_score"),
    "software_release": ("makespan", "milestone_lateness", "start_score"),
    "event_buildup": ("makespan", "start_score"),
    "plant_shutdown": ("makespan", "start_score"),
    "plain_rcpsp": ("makespan", "start_score"),
}


class ProjectSizes(Settings):
    """How big a project is."""

    activities: PositiveInt = Field(le=16)
    resources: PositiveInt = Field(le=3)
    duration: PositiveRange = Field(description="working days of one activity")
    slack: PositiveRange = Field(description="days of horizon beyond the planted plan's finish")
    milestones: int = Field(ge=0, le=3)


SIZES = SizeTable[ProjectSizes](
    tiny=ProjectSizes(
        activities=3, resources=1, duration=PositiveRange(lo=1, hi=2), slack=PositiveRange(lo=1, hi=2), milestones=1
    ),
    small=ProjectSizes(
        activities=5, resources=2, duration=PositiveRange(lo=1, hi=3), slack=PositiveRange(lo=1, hi=3), milestones=1
    ),
    default=ProjectSizes(
        activities=8, resources=2, duration=PositiveRange(lo=1, hi=4), slack=PositiveRange(lo=1, hi=3), milestones=2
    ),
    large=ProjectSizes(
        activities=14, resources=3, duration=PositiveRange(lo=1, hi=5), slack=PositiveRange(lo=2, hi=4), milestones=3
    ),
)
PROBE_TIME = 2.0
WITNESS_TIME = 5.0  # deterministic seconds for the feasible plan that sampled rules on imported data follow
# PSPLIB j30 files are certified with this deterministic time per solve (`--time-limit`), above the
# generator's default of 20: j3013_2's makespan alone took 9 deterministic seconds in one solve, and
# a value-determinate certificate runs four optimisations (tuned and default search, each with a
# uniqueness re-optimisation) plus the plan count
IMPORT_TIME = 60.0
# Every solve searches without the LP relaxation (the certifier's optimisations default to its
# full level 2): on PSPLIB j3013_1 the makespan alone took 0.66 deterministic seconds at level 0,
# 10 at level 1 and over 60 at level 2; the sampled default projects certified 2.5-3x faster
# (8.5 against 24 instances/s in benchmarks/generate.py, the same certificates).
PARAMETERS: dict[str, Any] = {"linearization_level": 0}
# the uniqueness re-optimisation without presolve (measured on 60 default instances: uniqueness /
# first solve 1.1-1.5 against 6-8 with presolve on). Its LP level stays the models' 0: level 1 there
# timed the uniqueness proof of PSPLIB j3013_2 out (60 deterministic seconds). Without CP-SAT's
# pre-search probing too (it runs even with presolve off): 1.29 against 1.43-1.49 on 60 default
# instances of seeds 0 and 1, as for job shop.
UNIQUENESS_PARAMETERS: dict[str, Any] = {"cp_model_presolve": False, "cp_model_probing_level": 0}


# -- the CP-SAT model ------------------------------------------------------------------
class ProjectModel(ModelBase):
    def __init__(self, data: ProjectData) -> None:
        super().__init__()
        self.data = d = data
        self.s: dict[str, cp_model.IntVar] = {}
        self.iv: dict[str, cp_model.IntervalVar] = {}
        for a in d.activities:
            s = self.m.new_int_var(0, d.horizon - a.duration, f"s[{a.id}]")
            self.s[a.id] = s
            self.iv[a.id] = self.m.new_fixed_size_interval_var(s, a.duration, f"iv[{a.id}]")
        self._before: dict[tuple[str, int], cp_model.IntVar] = {}

    def end(self, aid: str) -> cp_model.LinearExprT:
        return self.s[aid] + self.data.activity_by_id[aid].duration

    def limit(self, weights: dict[str, int], cap: int, lit: cp_model.IntVar, days: range | None = None) -> None:
        """Daily sum of ``weights`` of the running activities at most ``cap`` on ``days``
        (every day when None), enforced by ``lit``: one cumulative of capacity ``total``
        (the sum of all weights, never exceeded) with a block of ``total - cap`` on those
        days, present exactly when ``lit`` is on."""
        d = self.data
        acts = [a for a in d.activities if weights.get(a.id, 0) > 0 and a.duration > 0]
        total = sum(weights[a.id] for a in acts)
        if total <= cap:
            return  # cannot be exceeded
        days = days if days is not None else range(d.horizon)
        first, last = max(0, days.start), min(d.horizon, days.stop)
        if first >= last:
            return
        block = self.m.new_optional_fixed_size_interval_var(first, last - first, lit, "")
        self.m.add_cumulative(
            [self.iv[a.id] for a in acts] + [block], [weights[a.id] for a in acts] + [total - cap], total
        )

    def days_before(self, aid: str, day: int) -> cp_model.IntVar:
        """Days activity ``aid`` runs before ``day``: min(duration, max(0, day - start))."""
        key = (aid, day)
        if key not in self._before:
            dur = self.data.activity_by_id[aid].duration
            x = self.m.new_int_var(0, max(0, day), "")
            self.m.add_max_equality(x, [0, day - self.s[aid]])
            v = self.m.new_int_var(0, dur, "")
            self.m.add_min_equality(v, [dur, x])
            self._before[key] = v
        return self._before[key]


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("precedence")
def _precedence(tm: ProjectModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for link in tm.data.links:
        base = tm.end(link.before) if link.type == "FS" else tm.s[link.before]
        tm.post(tm.s[link.after] >= base + link.lag, lit)


@encoder("resource_capacity")
def _resource_capacity(tm: ProjectModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for r in tm.data.resources:
        tm.limit(pj.demands(tm.data, r.id), r.capacity, lit)


@encoder("release")
def _release(tm: ProjectModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for a in tm.data.activities:
        if a.release:
            tm.post(tm.s[a.id] >= a.release, lit)


@encoder("deadline")
def _deadline(tm: ProjectModel, p: pj.Deadline, lit: cp_model.IntVar) -> None:
    for aid in p.activities:
        tm.post(tm.end(aid) <= p.day, lit)


@encoder("time_window")
def _time_window(tm: ProjectModel, p: pj.TimeWindow, lit: cp_model.IntVar) -> None:
    tm.post(tm.s[p.activity] >= p.earliest, lit)
    tm.post(tm.s[p.activity] <= p.latest, lit)


@encoder("resource_outage")
def _resource_outage(tm: ProjectModel, p: pj.ResourceOutage, lit: cp_model.IntVar) -> None:
    cap = tm.data.resource_by_id[p.resource].capacity - p.units
    tm.limit(pj.demands(tm.data, p.resource), cap, lit, range(p.first, p.last + 1))


@encoder("daily_budget")
def _daily_budget(tm: ProjectModel, p: pj.DailyBudget, lit: cp_model.IntVar) -> None:
    tm.limit({a.id: a.cost for a in tm.data.activities}, p.max, lit)


@encoder("max_lag")
def _max_lag(tm: ProjectModel, p: pj.MaxLag, lit: cp_model.IntVar) -> None:
    tm.post(tm.s[p.after] <= tm.end(p.before) + p.lag, lit)


@encoder("no_overlap")
def _no_overlap(tm: ProjectModel, p: pj.NoOverlap, lit: cp_model.IntVar) -> None:
    """Per pair of days-long activities, a free Boolean picks which one goes first."""
    d = tm.data
    for a, b in p.pairs:
        if not (d.activity_by_id[a].duration and d.activity_by_id[b].duration):
            continue
        first = tm.m.new_bool_var("")
        tm.m.add(tm.s[b] >= tm.end(a)).only_enforce_if([lit, first])
        tm.m.add(tm.s[a] >= tm.end(b)).only_enforce_if([lit, ~first])


@encoder("max_parallel")
def _max_parallel(tm: ProjectModel, p: pj.MaxParallel, lit: cp_model.IntVar) -> None:
    tm.limit({a.id: 1 for a in tm.data.activities}, p.max, lit)


@encoder("synchronised_start")
def _synchronised_start(tm: ProjectModel, p: pj.SynchronisedStart, lit: cp_model.IntVar) -> None:
    a, b = p.activities
    tm.post(tm.s[a] - tm.s[b] <= p.max_gap, lit)
    tm.post(tm.s[b] - tm.s[a] <= p.max_gap, lit)


@encoder("work_to_date")
def _work_to_date(tm: ProjectModel, p: pj.WorkToDate, lit: cp_model.IntVar) -> None:
    cells = [(tm.days_before(a.id, p.day), a.demand.get(p.resource, 0)) for a in tm.data.activities]
    cells = [(v, u) for v, u in cells if u]
    expr = cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [u for _, u in cells])
    tm.post(expr <= p.max, lit)


@encoder("progress_by")
def _progress_by(tm: ProjectModel, p: pj.ProgressBy, lit: cp_model.IntVar) -> None:
    expr = cp_model.LinearExpr.sum([tm.days_before(a.id, p.day) for a in tm.data.activities])
    tm.post(expr >= p.min, lit)


@encoder("spare_unit")
def _spare_unit(tm: ProjectModel, p: pj.SpareUnit, lit: cp_model.IntVar) -> None:
    for rid in p.resources:
        tm.limit(pj.demands(tm.data, rid), tm.data.resource_by_id[rid].capacity - 1, lit)


@encoder("not_before")
def _not_before(tm: ProjectModel, p: pj.NotBefore, lit: cp_model.IntVar) -> None:
    tm.post(tm.s[p.activity] >= p.day, lit)


def _objective(tm: ProjectModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    if term.kind == "makespan":
        ms = tm.m.new_int_var(0, d.horizon, "makespan")
        tm.m.add_max_equality(ms, [tm.end(a.id) for a in d.activities])
        return ms, d.horizon
    if term.kind == "milestone_lateness":
        parts, weights = [], []
        for m in d.milestones:
            reached = tm.m.new_int_var(0, d.horizon, "")
            tm.m.add_max_equality(reached, [tm.end(a) for a in m.activities])
            late = tm.m.new_int_var(0, d.horizon, "")
            tm.m.add_max_equality(late, [0, reached - m.due])
            parts.append(late)
            weights.append(m.weight)
        return cp_model.LinearExpr.weighted_sum(parts, weights), sum(weights) * d.horizon
    if term.kind == "start_score":
        acts = d.activities
        expr = cp_model.LinearExpr.weighted_sum([tm.s[a.id] for a in acts], [a.weight for a in acts])
        return expr, sum(a.weight * (d.horizon - a.duration) for a in acts)
    if term.kind == "changes":
        old = pj.current_plan(term)
        moved = [tm.differs(tm.s[a.id], old[a.id], "") for a in d.activities]
        return cp_model.LinearExpr.sum(moved), len(moved)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = parsed(ProjectData, draft.data)
    tm = ProjectModel(data)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        return {"schedule": [{"activity": a.id, "start": int(solver.value(tm.s[a.id]))} for a in data.activities]}

    parameters = dict(PARAMETERS)
    return solver_model(
        tm, draft, ENCODERS, pj.RULE_PARAMS, _objective, decode, [], list(tm.s.values()),
        parameters=parameters, uniqueness_parameters=UNIQUENESS_PARAMETERS,
    )  # fmt: skip


# -- sampling --------------------------------------------------------------------------
Witness = dict[str, int]  # activity -> start day


def _serial(d: ProjectData, order: list[str], rng: random.Random, delay: float) -> Witness:
    """A serial schedule: in ``order`` (predecessors first), each activity at its earliest
    day after its links and releases with room on every resource (sometimes a day later)."""
    start: Witness = {}
    used = {r.id: [0] * (d.horizon + 64) for r in d.resources}
    incoming: dict[str, list[Link]] = {a.id: [] for a in d.activities}
    for link in d.links:
        incoming[link.after].append(link)
    for aid in order:
        a = d.activity_by_id[aid]
        s = a.release
        for link in incoming[aid]:
            b = d.activity_by_id[link.before]
            s = max(s, start[link.before] + (b.duration if link.type == "FS" else 0) + link.lag)
        if rng.random() < delay:
            s += 1
        while any(
            used[r][t] + u > d.resource_by_id[r].capacity for r, u in a.demand.items() for t in range(s, s + a.duration)
        ):
            s += 1
        start[aid] = s
        for r, u in a.demand.items():
            for t in range(s, s + a.duration):
                used[r][t] += u
    return start


def _most(r: Resource) -> int:
    """The most units one activity holds: all of a small resource (a crane), at most all but
    one of a crew of three or more (so a unit can be kept spare, or be uncertain)."""
    return r.capacity if r.capacity <= 2 else r.capacity - 1


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[ProjectData, Witness]:
    s = SIZES.of(spec.size)
    sub = spec.subtask
    pool = RESOURCES[sub][: s.resources]
    resources = [
        Resource(id=f"K{k}", name=name, capacity=rng.randint(lo, hi)) for k, (name, lo, hi) in enumerate(pool, 1)
    ]
    names = rng.sample(NAMES[sub], s.activities)
    weights = rng.sample(range(1, 4 * s.activities + 1), s.activities)
    acts: list[Activity] = []
    for k, (name, w) in enumerate(zip(names, weights), 1):
        demand = {}
        for r in resources:
            if rng.random() < 0.6:
                demand[r.id] = rng.randint(1, _most(r))
        if not demand:
            r = rng.choice(resources)
            demand[r.id] = rng.randint(1, _most(r))
        cost = rng.randint(1, 9) * 10
        acts.append(Activity(id=f"A{k}", name=name, duration=s.duration.draw(rng), demand=demand, cost=cost, weight=w))
    links: list[Link] = []
    for j in range(1, len(acts)):
        options = list(range(j))
        for i in sorted(rng.sample(options, min(len(options), rng.choice((0, 1, 1, 2))))):
            kind: Literal["FS", "SS"] = "SS" if sub in START_LINKS and rng.random() < 0.4 else "FS"
            lag = rng.randint(1, 2) if (kind == "SS" or (sub in LAGGED and rng.random() < 0.4)) else 0
            links.append(Link(before=acts[i].id, after=acts[j].id, type=kind, lag=lag))
    big = sum(a.duration for a in acts) + sum(lk.lag for lk in links) + 8
    draft_data = ProjectData(horizon=big, resources=tuple(resources), activities=tuple(acts), links=tuple(links))
    witness = _serial(draft_data, [a.id for a in acts], rng, 0.15)
    end = max(witness[a.id] + a.duration for a in acts)
    horizon = end + s.slack.draw(rng)
    milestones: list[Milestone] = []
    if sub in MILESTONES and s.milestones:
        ids = [a.id for a in acts]
        for k in range(min(s.milestones, len(MILESTONES[sub]))):
            group = sorted(rng.sample(ids, min(len(ids), rng.randint(1, 3))), key=lambda x: int(x[1:]))
            reached = max(witness[x] + draft_data.activity_by_id[x].duration for x in group)
            due = max(1, reached - rng.randint(0, 2))
            milestones.append(
                Milestone(
                    id=f"M{k + 1}", name=MILESTONES[sub][k], activities=tuple(group), due=due, weight=rng.randint(1, 5)
                )
            )
    data = pj.replaced(draft_data, horizon=horizon, milestones=tuple(milestones))
    return data, witness


def _with_release(d: ProjectData, w: Witness, rng: random.Random) -> ProjectData:
    """Each activity, with probability 0.6, released on a day up to its witness start."""
    acts = tuple(
        a.model_copy(update={"release": rng.randint(0, w[a.id]) if rng.random() < 0.6 else 0}) for a in d.activities
    )
    return pj.replaced(d, activities=acts)


def _finish(d: ProjectData, w: Witness, aid: str) -> int:
    return w[aid] + d.activity_by_id[aid].duration


def _profile(d: ProjectData, w: Witness, weights: dict[str, int]) -> list[int]:
    return pj.usage(d, Plan(w), weights)


def _b_deadline(d: ProjectData, w: Witness, rng: random.Random) -> pj.Deadline | None:
    ids = [a.id for a in d.activities if a.duration]
    chosen = sorted(rng.sample(ids, min(len(ids), rng.randint(1, 2))), key=lambda x: int(x[1:]))
    day = max(_finish(d, w, x) for x in chosen) + rng.randint(0, 1)
    return pj.Deadline(activities=chosen, day=min(day, d.horizon))


def _b_time_window(d: ProjectData, w: Witness, rng: random.Random) -> pj.TimeWindow | None:
    a = rng.choice(d.activities)
    top = d.horizon - a.duration
    lo, hi = max(0, w[a.id] - rng.randint(0, 2)), min(top, w[a.id] + rng.randint(0, 2))
    return pj.TimeWindow(activity=a.id, earliest=lo, latest=hi)


def _b_resource_outage(d: ProjectData, w: Witness, rng: random.Random) -> pj.ResourceOutage | None:
    options = []
    for r in d.resources:
        profile = _profile(d, w, pj.demands(d, r.id))
        for first in range(d.horizon):
            for length in (1, 2, 3):
                last = first + length - 1
                if last >= d.horizon:
                    continue
                spare = r.capacity - max(profile[first : last + 1])
                if spare >= 1:
                    options.append((r.id, first, last, spare))
    if not options:
        return None
    rid, first, last, spare = rng.choice(options)
    return pj.ResourceOutage(resource=rid, first=first, last=last, units=rng.randint(1, spare))


def _b_daily_budget(d: ProjectData, w: Witness, rng: random.Random) -> pj.DailyBudget | None:
    costs = {a.id: a.cost for a in d.activities}
    if not any(costs.values()):
        return None
    return pj.DailyBudget(max=max(_profile(d, w, costs)) + rng.choice((0, 0, 10)))


def _b_max_lag(d: ProjectData, w: Witness, rng: random.Random) -> pj.MaxLag | None:
    linked = [(lk.before, lk.after) for lk in d.links if w[lk.after] >= _finish(d, w, lk.before)]
    pairs = linked or [
        (a.id, b.id) for a in d.activities for b in d.activities if a.id != b.id and w[b.id] >= _finish(d, w, a.id)
    ]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    return pj.MaxLag(before=a, after=b, lag=w[b] - _finish(d, w, a) + rng.randint(0, 1))


def _b_no_overlap(d: ProjectData, w: Witness, rng: random.Random) -> pj.NoOverlap | None:
    linked = {(lk.before, lk.after) for lk in d.links} | {(lk.after, lk.before) for lk in d.links}
    acts = d.activities
    pairs = [
        (a.id, b.id)
        for i, a in enumerate(acts)
        for b in acts[i + 1 :]
        if (a.id, b.id) not in linked
        and a.duration
        and b.duration
        and (w[a.id] >= _finish(d, w, b.id) or w[b.id] >= _finish(d, w, a.id))
    ]
    if not pairs:
        return None
    return pj.NoOverlap(pairs=sorted(rng.sample(pairs, min(len(pairs), rng.randint(1, 2)))))


def _b_max_parallel(d: ProjectData, w: Witness, rng: random.Random) -> pj.MaxParallel | None:
    peak = max(_profile(d, w, {a.id: 1 for a in d.activities}))
    return pj.MaxParallel(max=peak) if 1 <= peak < len(d.activities) else None


def _b_synchronised_start(d: ProjectData, w: Witness, rng: random.Random) -> pj.SynchronisedStart | None:
    a, b = sorted(rng.sample([x.id for x in d.activities], 2), key=lambda x: int(x[1:]))
    return pj.SynchronisedStart(activities=(a, b), max_gap=abs(w[a] - w[b]) + rng.randint(0, 1))


def _b_work_to_date(d: ProjectData, w: Witness, rng: random.Random) -> pj.WorkToDate | None:
    r = rng.choice(d.resources)
    day = rng.randint(1, max(1, d.horizon - 1))
    done = sum(a.demand.get(r.id, 0) * pj.days_before(w[a.id], a.duration, day) for a in d.activities)
    if done < 1:
        return None
    return pj.WorkToDate(resource=r.id, day=day, max=done + rng.randint(0, 1))


def _b_progress_by(d: ProjectData, w: Witness, rng: random.Random) -> pj.ProgressBy | None:
    day = rng.randint(1, max(1, d.horizon - 1))
    done = sum(pj.days_before(w[a.id], a.duration, day) for a in d.activities)
    if done < 1:
        return None
    return pj.ProgressBy(day=day, min=max(1, done - rng.randint(0, 1)))


BUILDERS = {
    "deadline": _b_deadline,
    "time_window": _b_time_window,
    "resource_outage": _b_resource_outage,
    "daily_budget": _b_daily_budget,
    "max_lag": _b_max_lag,
    "no_overlap": _b_no_overlap,
    "max_parallel": _b_max_parallel,
    "synchronised_start": _b_synchronised_start,
    "work_to_date": _b_work_to_date,
    "progress_by": _b_progress_by,
}
STRUCTURAL = ("release",)


def objective_terms(subtask: str, milestones: bool = True) -> list[ObjectiveTerm]:
    """The subtask's lexicographic objective (see OBJECTIVES); milestone lateness only
    where the data has milestones."""
    kinds = [k for k in OBJECTIVES[subtask] if milestones or k != "milestone_lateness"]
    return [make_term(k, k) for k in kinds]


def _rules(
    spec: GenerationSpec, data: ProjectData, witness: Witness, rng: random.Random, forced: bool
) -> tuple[ProjectData, list[Rule]]:
    sampled = sampled_kinds(spec, TASK.base_rules)
    if forced:
        for kind in FORCED[spec.subtask]:
            if kind not in sampled:
                sampled.append(kind)
    if "release" in sampled:
        data = _with_release(data, witness, rng)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    return data, witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng, structural=STRUCTURAL)


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    data, witness = _entities(spec, rng)
    data, rules = _rules(spec, data, witness, rng, forced=True)
    objective = objective_terms(spec.subtask, bool(data.milestones))
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective)


# -- published data: PSPLIB single-mode files -----------------------------------------
SOURCE_FORMAT = (
    "a PSPLIB single-mode RCPSP file (.sm: jobs with successors, durations, renewable demands and availabilities)"
)
_NUMBER = re.compile(r"-?\d+")


def _ints(source: SourceFile, n: int, line: str, what: str) -> list[int]:
    words = line.split()
    if not words or not all(_NUMBER.fullmatch(w) for w in words):
        raise SourceError(f"{source.name} line {n}: {what}: whole numbers expected, got {line.strip()[:60]!r}")
    return [int(w) for w in words]


def _field(source: SourceFile, lines: list[str], label: str) -> tuple[int, int]:
    """The whole number after ``label ... :`` and its line number."""
    for n, line in enumerate(lines, 1):
        if line.strip().lower().startswith(label):
            value = line.split(":", 1)[1].split() if ":" in line else []
            if not value or not _NUMBER.fullmatch(value[0]):
                raise SourceError(f"{source.name} line {n}: {label!r} needs a whole number")
            return int(value[0]), n
    raise SourceError(f"{source.name}: no {label!r} line: not a PSPLIB .sm file (or truncated)")


def _section(source: SourceFile, lines: list[str], title: str) -> int:
    """The line index just after the section heading ``title``."""
    for k, line in enumerate(lines):
        if line.strip().upper().startswith(title):
            return k + 1
    raise SourceError(f"{source.name}: no {title!r} section (truncated, or not a PSPLIB .sm file)")


def _rows(source: SourceFile, lines: list[str], start: int, count: int, what: str) -> list[tuple[int, list[int]]]:
    """``count`` numeric rows from ``start`` (skipping header and dash lines), with their line numbers."""
    out: list[tuple[int, list[int]]] = []
    k = start
    while len(out) < count:
        if k >= len(lines) or lines[k].startswith("*"):
            raise SourceError(
                f"{source.name} line {k + 1}: {what}: {count} rows expected, found {len(out)} (truncated?)"
            )
        line = lines[k]
        k += 1
        words = line.split()
        if not words or line.lstrip().startswith("-") or not _NUMBER.fullmatch(words[0]):
            if out:
                raise SourceError(
                    f"{source.name} line {k}: {what}: a row of whole numbers expected, got {line.strip()[:60]!r}"
                )
            continue  # column headings before the first row
        out.append((k, _ints(source, k, line, what)))
    return out


def read_source(source: SourceFile) -> Imported:
    """A PSPLIB ``.sm`` file as a plain RCPSP: jobs 2..n+1 become activities J2..J(n+1)
    (the dummy source 1 and sink n+2, of duration 0, are dropped: the makespan is the
    latest finish), successors become finish-to-start links with lag 0, and the
    renewable availabilities the resources' capacities. A SourceError names the file and
    the line at fault (a multi-mode file, non-renewable resources, wrong counts,
    non-numbers, truncation)."""
    lines = source.text.splitlines()
    jobs, _ = _field(source, lines, "jobs (incl. supersource/sink )")
    horizon, hline = _field(source, lines, "horizon")
    renewable, _ = _field(source, lines, "- renewable")
    for label in ("- nonrenewable", "- doubly constrained"):
        count, n = _field(source, lines, label)
        if count:
            raise SourceError(
                f"{source.name} line {n}: {count} {label[2:]} resources: only renewable resources are read"
            )
    if jobs < 3 or renewable < 1 or horizon < 1:
        raise SourceError(
            f"{source.name}: {jobs} jobs, {renewable} renewable resources, horizon {horizon}: nothing to plan"
        )
    prec = _rows(source, lines, _section(source, lines, "PRECEDENCE RELATIONS"), jobs, "precedence relations")
    succ: dict[int, list[int]] = {}
    for n, row in prec:
        if len(row) < 3:
            raise SourceError(f"{source.name} line {n}: a job, its modes and its successor count expected")
        job, modes, count, rest = row[0], row[1], row[2], row[3:]
        if modes != 1:
            raise SourceError(
                f"{source.name} line {n}: job {job} has {modes} modes: only single-mode (.sm) files are read"
            )
        if count != len(rest):
            raise SourceError(f"{source.name} line {n}: job {job} announces {count} successors and lists {len(rest)}")
        if job in succ or not 1 <= job <= jobs or any(not 1 <= x <= jobs for x in rest):
            raise SourceError(f"{source.name} line {n}: job numbers are 1..{jobs}, each listed once")
        succ[job] = rest
    req = _rows(source, lines, _section(source, lines, "REQUESTS/DURATIONS"), jobs, "requests/durations")
    dur: dict[int, int] = {}
    use: dict[int, list[int]] = {}
    for n, row in req:
        if len(row) != 3 + renewable:
            raise SourceError(
                f"{source.name} line {n}: job, mode, duration and {renewable} demands expected, got {len(row)} numbers"
            )
        job = row[0]
        if job in dur or not 1 <= job <= jobs or any(x < 0 for x in row[2:]):
            raise SourceError(
                f"{source.name} line {n}: job numbers are 1..{jobs}, each once; durations and demands are not negative"
            )
        dur[job], use[job] = row[2], row[3:]
    avail = _rows(source, lines, _section(source, lines, "RESOURCEAVAILABILITIES"), 1, "resource availabilities")
    n, caps = avail[0]
    if len(caps) != renewable or any(c < 0 for c in caps):
        raise SourceError(f"{source.name} line {n}: {renewable} availabilities expected, got {len(caps)}")
    for dummy in (1, jobs):
        if dur[dummy] or any(use[dummy]):
            raise SourceError(
                f"{source.name}: job {dummy} is the dummy source/sink and must take 0 days and no resources"
            )
    real = range(2, jobs)
    if sum(dur[j] for j in real) > horizon:
        raise SourceError(f"{source.name} line {hline}: the horizon {horizon} is shorter than the jobs' total duration")
    resources = [{"id": f"K{k}", "name": f"renewable resource {k}", "capacity": c} for k, c in enumerate(caps, 1)]
    acts = [
        {
            "id": f"J{j}",
            "name": f"job {j}",
            "duration": dur[j],
            "demand": {f"K{k}": u for k, u in enumerate(use[j], 1) if u},
        }
        for j in real
    ]
    links = [{"before": f"J{j}", "after": f"J{x}"} for j in real for x in succ[j] if x in real]
    try:
        data = ProjectData.model_validate(
            {"horizon": horizon, "resources": resources, "activities": acts, "links": links}
        )
    except ValueError as exc:
        raise SourceError(f"{source.name}: not a valid project: {exc}") from None
    return Imported(subtask="plain_rcpsp", data=data.model_dump(mode="json"))


def _base_plan(data: ProjectData, spec: GenerationSpec) -> Witness:
    """A feasible plan of the file's own problem (links and capacities), the first CP-SAT
    finds; the sampled rules are drawn from it, so they are satisfiable together."""
    base = Draft(
        spec=spec,
        data=data.model_dump(mode="json"),
        rules=[make_rule(k, "basic", NoParams(), f"R{i}") for i, k in enumerate(TASK.base_rules, 1)],
        objective=[],
    )
    sm = build(base)
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = make_solver(SolverLimits(deterministic_time=WITNESS_TIME), presolve=True)
    solver.parameters.stop_after_first_solution = True
    if solver.solve(sm.model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise NoDraft("no feasible plan of the imported project in time")
    return {r["activity"]: r["start"] for r in sm.decode(solver)["schedule"]}


def draft_from(spec: GenerationSpec, data: dict[str, Any], rng: random.Random) -> Draft:
    """A draft on imported data: the base rules (links, capacities) and the spec's sampled
    rules, drawn from a feasible plan of the file's problem (none with ``--rules none``:
    then the draft is the file's problem exactly); objective: the makespan alone, as
    published. A stated secondary term (the total start time) would make most optima
    unique, but proving it took 33 deterministic seconds on j3013_1 against 0.66 for the
    makespan alone; so imported instances are value-determinate (the certificate counts
    their optimal plans up to the cap) and any plan of optimal makespan is a right answer."""
    d = ProjectData.model_validate(data)
    sampled = sampled_kinds(spec, TASK.base_rules)
    witness = _base_plan(d, spec) if sampled else {}
    d, rules = _rules(spec, d, witness, rng, forced=False)
    return Draft(spec=spec, data=d.model_dump(mode="json"), rules=rules, objective=[make_term("makespan", "makespan")])


# -- hard-tier hooks -------------------------------------------------------------------
def _plan(plan: dict[str, Any]) -> Witness:
    return {r["activity"]: r["start"] for r in plan["schedule"]}


def _optimal_plan(draft_: Draft, limits: SolverLimits) -> Witness | None:
    sm = build(draft_)
    weights = lexicographic_weights([ub for _, _, ub in sm.objective_terms])
    sm.model.minimize(sum(w * expr for w, (_, expr, _) in zip(weights, sm.objective_terms)))
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = make_solver(limits, presolve=False, optimise=True)
    if solver.solve(sm.model) != cp_model.OPTIMAL:
        return None
    return _plan(sm.decode(solver))


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A deadline on one activity just below what the rules allow: bisection over the days
    from its earliest possible finish (alone) to its finish in the optimal plan finds the
    loosest infeasible deadline; a deadline infeasible on its own is passed over (the
    conflict must run through the instance's rules)."""
    d = ProjectData.model_validate(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731
    best = _optimal_plan(draft_, probe)
    if best is None:
        return None
    acts = [a for a in d.activities if a.duration]
    rng.shuffle(acts)
    for a in acts[:4]:
        days = list(range(best[a.id] + a.duration, a.duration - 1, -1))  # loosest first

        def with_deadline(day: int, aid: str = a.id) -> Draft:
            return with_conflict_rule(draft_, "deadline", pj.Deadline(activities=[aid], day=day), position)

        found = first_infeasible(days, with_deadline, feasible)
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """An activity delayed past its planned start, or units of a resource out of service
    on a day the plan uses them."""
    d = ProjectData.model_validate(draft_.data)
    w = _plan(plan)
    out: list[Rule] = []
    for a in d.activities:
        top = d.horizon - a.duration
        if w[a.id] + 1 <= top:
            day = min(top, w[a.id] + rng.randint(1, 2))
            out.append(make_rule("not_before", "hard", pj.NotBefore(activity=a.id, day=day)))
    for r in d.resources:
        profile = _profile(d, w, pj.demands(d, r.id))
        busy = [t for t, u in enumerate(profile) if u >= 1]
        if busy:
            t = rng.choice(busy)
            units = rng.randint(max(1, r.capacity - profile[t] + 1), r.capacity)  # breaks the plan on day t
            out.append(
                make_rule("resource_outage", "hard", pj.ResourceOutage(resource=r.id, first=t, last=t, units=units))
            )
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, int]:
    return _plan(plan)


def _spare_able(d: ProjectData) -> list[str]:
    """Resources that can keep a unit spare: capacity 2 or more, used, and no activity
    alone needs every unit."""
    return [
        r.id
        for r in d.resources
        if r.capacity >= 2
        and any(a.demand.get(r.id, 0) for a in d.activities)
        and all(a.demand.get(r.id, 0) <= r.capacity - 1 for a in d.activities)
    ]


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    """One spare unit of one resource that can keep it (see :func:`_spare_able`), the first
    in random order whose schedule still fits the horizon (the kit probes it again)."""
    named = _spare_able(ProjectData.model_validate(draft_.data))
    rng.shuffle(named)
    probe = SolverLimits(deterministic_time=PROBE_TIME)
    for rid in named:
        rule = make_rule("spare_unit", "hard", pj.SpareUnit(resources=[rid]), f"R{len(draft_.rules) + 1}")
        if is_feasible(build(Draft(draft_.spec, draft_.data, [*draft_.rules, rule], draft_.objective)), probe):
            return rule, []
    return None


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Activity durations (worst: long) and resource capacities (worst: low). A shorter
    activity never breaks a rule a longer one keeps, except a maximum lag after it (it
    finishes sooner) and a progress target (fewer days done): durations are offered only
    without those kinds."""
    d = ProjectData.model_validate(draft_.data)
    kinds = {r.kind for r in draft_.rules}
    out: list[Uncertain] = []
    if not kinds & {"progress_by", "max_lag"}:
        longer = [
            Uncertain(id="", kind="duration", target=a.id, low=a.duration, high=a.duration + 1)
            for a in d.activities
            if a.duration and a.duration + 1 + a.release <= d.horizon
        ]
        out += rng.sample(longer, min(3, len(longer)))
    fewer = [
        Uncertain(
            id="",
            kind="capacity",
            target=rid,
            low=d.resource_by_id[rid].capacity - 1,
            high=d.resource_by_id[rid].capacity,
        )
        for rid in _spare_able(d)
    ]
    out += rng.sample(fewer, min(2, len(fewer)))
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = ProjectData.model_validate(data)
    if u.kind == "capacity":
        res = tuple(r.model_copy(update={"capacity": value}) if r.id == u.target else r for r in d.resources)
        return {**data, "resources": [r.model_dump(mode="json") for r in res]}
    acts = tuple(a.model_copy(update={"duration": value}) if a.id == u.target else a for a in d.activities)
    return {**data, "activities": [a.model_dump(mode="json") for a in acts]}


def worst_is_low(u: Uncertain) -> bool:
    return u.kind == "capacity"


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = ProjectData.model_validate(draft_.data)
    w = _plan(plan)
    fin = {a.id: w[a.id] + a.duration for a in d.activities}
    peak = {r.id: max(_profile(d, w, pj.demands(d, r.id)), default=0) for r in d.resources}
    return {"finish": fin, "peak": peak}


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
