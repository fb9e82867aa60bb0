"""Checks for Project Planning answers (RCPSP): every activity of a project gets an integer
start day; finish-to-start and start-to-start links with lags, renewable resources
(crews, cranes) per day, deadlines, windows and budgets must hold.

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. Every figure is recomputed from the plan in plain Python integers: an activity
with start s and duration d runs on days s, s+1, ..., s+d-1 and finishes at s+d.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import OK, PlanChecker, lookup, start_rows
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse, problem, self_paired
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "project_planning"


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Resource(_Frozen):
    """A renewable resource: ``capacity`` units are available on every day (crew members,
    cranes); an activity holds its demand on every day it runs."""

    id: str
    name: str
    capacity: NonNegativeInt


class Activity(_Frozen):
    id: str
    name: str
    duration: NonNegativeInt = Field(description="working days; 0 for a zero-length event")
    demand: dict[str, NonNegativeInt] = Field(default_factory=dict, description="resource id -> units per day")
    release: NonNegativeInt = Field(default=0, description="earliest start day")
    cost: NonNegativeInt = Field(default=0, description="cost per day while it runs (daily budget)")
    weight: PositiveInt = Field(default=1, description="weight of its start day in the start score")


class Link(_Frozen):
    """``FS``: ``after`` starts at least ``lag`` days after ``before`` finishes;
    ``SS``: ``after`` starts at least ``lag`` days after ``before`` starts."""

    before: str
    after: str
    type: Literal["FS", "SS"] = "FS"
    lag: NonNegativeInt = 0


class Milestone(_Frozen):
    """Reached when all its activities have finished; each day past ``due`` costs ``weight``."""

    id: str
    name: str
    activities: tuple[str, ...]
    due: NonNegativeInt
    weight: PositiveInt = 1


class ProjectData(BaseModel):
    """One project: every number a rule or the objective reads is here. ``horizon``: every
    activity runs within days 0..horizon-1 (an answer's start is 0..horizon-duration)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    horizon: PositiveInt
    resources: tuple[Resource, ...]
    activities: tuple[Activity, ...]
    links: tuple[Link, ...] = ()
    milestones: tuple[Milestone, ...] = ()
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> ProjectData:
        """Malformed data is a clear error: unknown or repeated ids, an activity longer than
        the horizon, a link to itself or a cycle of links."""
        acts = [a.id for a in self.activities]
        res = [r.id for r in self.resources]
        for what, ids in (("activity", acts), ("resource", res), ("milestone", [m.id for m in self.milestones])):
            if len(set(ids)) != len(ids):
                raise ValueError(f"repeated {what} id")
        known, rknown = set(acts), set(res)
        if not acts:
            raise ValueError("a project needs at least one activity")
        for a in self.activities:
            if a.duration + a.release > self.horizon:
                raise ValueError(f"activity {a.id} cannot finish within the horizon {self.horizon}")
            bad = [r for r in a.demand if r not in rknown]
            if bad:
                raise ValueError(f"activity {a.id} demands unknown resource {bad[0]}")
        for link in self.links:
            if link.before not in known or link.after not in known:
                raise ValueError(f"link {link.before}->{link.after} names an unknown activity")
            if link.before == link.after:
                raise ValueError(f"link {link.before}->{link.after} links an activity to itself")
        for m in self.milestones:
            if not m.activities or any(x not in known for x in m.activities):
                raise ValueError(f"milestone {m.id} names no or an unknown activity")
        succ: dict[str, list[str]] = {a: [] for a in acts}
        for link in self.links:
            succ[link.before].append(link.after)
        state: dict[str, int] = {}
        for root in acts:  # iterative depth-first search for a cycle
            if root in state:
                continue
            stack = [(root, iter(succ[root]))]
            state[root] = 1
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    state[node] = 2
                    stack.pop()
                elif state.get(nxt) == 1:
                    raise ValueError(f"the links form a cycle through {nxt}")
                elif nxt not in state:
                    state[nxt] = 1
                    stack.append((nxt, iter(succ[nxt])))
        return self

    @cached_property
    def activity_by_id(self) -> dict[str, Activity]:
        return {a.id: a for a in self.activities}

    @cached_property
    def activity_duration(self) -> dict[str, int]:
        """Duration by id, in the data's order (what a schedule must cover)."""
        return {a.id: a.duration for a in self.activities}

    @cached_property
    def resource_by_id(self) -> dict[str, Resource]:
        return {r.id: r for r in self.resources}

    @cached_property
    def milestone_by_id(self) -> dict[str, Milestone]:
        return {m.id: m for m in self.milestones}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {"activity": self.activity_by_id, "resource": self.resource_by_id}
        return names[what]


def replaced(d: ProjectData, **changes: Any) -> ProjectData:
    """``d`` with fields replaced, as a new validated object (``model_copy`` would carry the
    cached lookups of the old data over)."""
    return ProjectData.model_validate({**{f: getattr(d, f) for f in ProjectData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
ActivityName = Annotated[str, Names("activity")]
ResourceName = Annotated[str, Names("resource")]


class Deadline(Params):
    """Each named activity finishes (start + duration) no later than ``day``."""

    activities: list[ActivityName]
    day: NonNegativeInt


class TimeWindow(Params):
    """The activity starts on a day from ``earliest`` to ``latest`` (both included)."""

    activity: ActivityName
    earliest: NonNegativeInt
    latest: NonNegativeInt


class ResourceOutage(Params):
    """On days ``first``..``last`` (both included) ``units`` of the resource are out of service."""

    resource: ResourceName
    first: NonNegativeInt
    last: NonNegativeInt
    units: PositiveInt


class DailyBudget(Params):
    """On every day, the daily costs of the activities running that day sum to at most ``max``."""

    max: NonNegativeInt


class MaxLag(Params):
    """``after`` starts at most ``lag`` days after ``before`` finishes."""

    before: ActivityName
    after: ActivityName
    lag: NonNegativeInt

    def data_problems(self, data: Any) -> list[str]:
        """Also: two different activities (an activity's start always lies within ``lag`` of its own finish)."""
        found = super().data_problems(data)
        return found + self_paired([(self.before, self.after)], "activities")


class NoOverlap(Params):
    """The two activities of each pair never run on the same day (a shared work area)."""

    pairs: list[tuple[ActivityName, ActivityName]]


class SynchronisedStart(Params):
    """The two activities start at most ``max_gap`` days apart (in either order)."""

    activities: tuple[ActivityName, ActivityName]
    max_gap: NonNegativeInt

    def data_problems(self, data: Any) -> list[str]:
        """Also: two different activities (one activity always starts 0 days from itself)."""
        found = super().data_problems(data)
        return found + self_paired([(self.activities[0], self.activities[1])], "activities")


class MaxParallel(Params):
    """At most ``max`` activities run on any one day (span of control)."""

    max: PositiveInt


class WorkToDate(Params):
    """Unit-days of ``resource`` used on days 0..day-1 (units x days, summed) are at most ``max``."""

    resource: ResourceName
    day: PositiveInt
    max: NonNegativeInt


class ProgressBy(Params):
    """Activity-days done on days 0..day-1 (for each activity, its days run before ``day``) are at least ``min``."""

    day: PositiveInt
    min: NonNegativeInt


class SpareUnit(Params):
    """Robustness: each named resource keeps one unit spare on every day (usage at most capacity - 1),
    so the plan survives any single unit breaking down."""

    resources: list[ResourceName]


class NotBefore(Params):
    """The activity starts on ``day`` or later (a delayed activity)."""

    activity: ActivityName
    day: NonNegativeInt


class CurrentStarts(Params):
    """The current plan a ``changes`` term counts against: activity -> start day."""

    existing: dict[ActivityName, int]

    def data_problems(self, data: Any) -> list[str]:
        """Also: the plan covers every activity (the ``changes`` figure compares each activity's start day)."""
        found = super().data_problems(data)
        missing = [x for x in data.activity_by_id if x not in self.existing]
        return found + problem("the current plan has no start day for activity", missing)


RULE_PARAMS: ParamsTable = {
    "precedence": NoParams,
    "resource_capacity": NoParams,
    "release": NoParams,
    "deadline": Deadline,
    "time_window": TimeWindow,
    "resource_outage": ResourceOutage,
    "daily_budget": DailyBudget,
    "max_lag": MaxLag,
    "no_overlap": NoOverlap,
    "max_parallel": MaxParallel,
    "synchronised_start": SynchronisedStart,
    "work_to_date": WorkToDate,
    "progress_by": ProgressBy,
    "spare_unit": SpareUnit,
    "not_before": NotBefore,
}
TERM_PARAMS: ParamsTable = {
    "makespan": NoParams,
    "milestone_lateness": NoParams,
    "start_score": NoParams,
    "changes": CurrentStarts,
}


def current_plan(changes: ObjectiveTerm) -> dict[str, int]:
    """The current plan of a ``changes`` term (activity -> start day)."""
    return as_model(parse(TERM_PARAMS, changes), CurrentStarts).existing


# -- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    start: dict[str, int]  # activity -> start day


def finish(d: ProjectData, plan: Plan, aid: str) -> int:
    return plan.start[aid] + d.activity_by_id[aid].duration


def days_before(start: int, duration: int, day: int) -> int:
    """Days an activity (start, duration) runs before ``day``: min(duration, max(0, day - start))."""
    return min(duration, max(0, day - start))


def usage(d: ProjectData, plan: Plan, weight: dict[str, int]) -> list[int]:
    """Per day 0..horizon-1, the sum of ``weight[a]`` over activities a running that day."""
    out = [0] * d.horizon
    for a in d.activities:
        w = weight.get(a.id, 0)
        if w:
            s = plan.start[a.id]
            for t in range(s, min(s + a.duration, d.horizon)):
                out[t] += w
    return out


def demands(d: ProjectData, resource: str) -> dict[str, int]:
    return {a.id: a.demand.get(resource, 0) for a in d.activities}


def first_over(profile: list[int], limit: int, days: range | None = None) -> int | None:
    """The first day (within ``days``) whose figure exceeds ``limit``, or None."""
    if days is None and (not profile or max(profile) <= limit):  # no day over: the usual plan, at C speed
        return None
    for t in days if days is not None else range(len(profile)):
        if 0 <= t < len(profile) and profile[t] > limit:
            return t
    return None


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
@check("precedence")
def _precedence(d: ProjectData, plan: Plan, p: NoParams) -> Verdict:
    for link in d.links:
        sb, sa = plan.start[link.before], plan.start[link.after]
        if link.type == "FS":
            need = sb + d.activity_by_id[link.before].duration + link.lag
            if sa < need:
                return (
                    False,
                    f"{link.after} starts on day {sa}, before day {need} ({link.before} finishes + {link.lag})",
                )
        elif sa < sb + link.lag:
            return (
                False,
                f"{link.after} starts on day {sa}, before day {sb + link.lag} ({link.before} starts + {link.lag})",
            )
    return OK


@check("resource_capacity")
def _resource_capacity(d: ProjectData, plan: Plan, p: NoParams) -> Verdict:
    for r in d.resources:
        profile = usage(d, plan, demands(d, r.id))
        t = first_over(profile, r.capacity)
        if t is not None:
            return False, f"{r.id} is used {profile[t]} units on day {t} (capacity {r.capacity})"
    return OK


@check("release")
def _release(d: ProjectData, plan: Plan, p: NoParams) -> Verdict:
    for a in d.activities:
        if plan.start[a.id] < a.release:
            return False, f"{a.id} starts on day {plan.start[a.id]}, before its release day {a.release}"
    return OK


@check("deadline")
def _deadline(d: ProjectData, plan: Plan, p: Deadline) -> Verdict:
    for aid in p.activities:
        f = finish(d, plan, aid)
        if f > p.day:
            return False, f"{aid} finishes at day {f}, after its deadline {p.day}"
    return OK


@check("time_window")
def _time_window(d: ProjectData, plan: Plan, p: TimeWindow) -> Verdict:
    s = plan.start[p.activity]
    if not p.earliest <= s <= p.latest:
        return False, f"{p.activity} starts on day {s}, outside days {p.earliest}-{p.latest}"
    return OK


@check("resource_outage")
def _resource_outage(d: ProjectData, plan: Plan, p: ResourceOutage) -> Verdict:
    cap = d.resource_by_id[p.resource].capacity - p.units
    profile = usage(d, plan, demands(d, p.resource))
    t = first_over(profile, cap, range(p.first, p.last + 1))
    if t is not None:
        return False, f"{p.resource} is used {profile[t]} units on day {t} of its outage (at most {cap})"
    return OK


@check("daily_budget")
def _daily_budget(d: ProjectData, plan: Plan, p: DailyBudget) -> Verdict:
    profile = usage(d, plan, {a.id: a.cost for a in d.activities})
    t = first_over(profile, p.max)
    if t is not None:
        return False, f"the activities running on day {t} cost {profile[t]} (budget {p.max} per day)"
    return OK


@check("max_lag")
def _max_lag(d: ProjectData, plan: Plan, p: MaxLag) -> Verdict:
    latest = finish(d, plan, p.before) + p.lag
    if plan.start[p.after] > latest:
        return (
            False,
            f"{p.after} starts on day {plan.start[p.after]}, after day {latest} ({p.before} finishes + {p.lag})",
        )
    return OK


@check("no_overlap")
def _no_overlap(d: ProjectData, plan: Plan, p: NoOverlap) -> Verdict:
    for a, b in p.pairs:
        sa, sb = plan.start[a], plan.start[b]
        fa, fb = finish(d, plan, a), finish(d, plan, b)
        if sa < fa and sb < fb and sa < fb and sb < fa:  # two days-long runs with a common day
            return False, f"{a} (days {sa}-{fa - 1}) and {b} (days {sb}-{fb - 1}) run on a common day"
    return OK


@check("max_parallel")
def _max_parallel(d: ProjectData, plan: Plan, p: MaxParallel) -> Verdict:
    profile = usage(d, plan, {a.id: 1 for a in d.activities})
    t = first_over(profile, p.max)
    if t is not None:
        return False, f"{profile[t]} activities run on day {t} (at most {p.max})"
    return OK


@check("synchronised_start")
def _synchronised_start(d: ProjectData, plan: Plan, p: SynchronisedStart) -> Verdict:
    a, b = p.activities
    gap = abs(plan.start[a] - plan.start[b])
    if gap > p.max_gap:
        return (
            False,
            f"{a} starts on day {plan.start[a]} and {b} on day {plan.start[b]}: {gap} days apart (at most {p.max_gap})",
        )
    return OK


@check("work_to_date")
def _work_to_date(d: ProjectData, plan: Plan, p: WorkToDate) -> Verdict:
    """Walks each activity's days before the checkpoint and sums units x days."""
    total = 0
    for a in d.activities:
        total += a.demand.get(p.resource, 0) * days_before(plan.start[a.id], a.duration, p.day)
    if total > p.max:
        return False, f"{p.resource} is used {total} unit-days before day {p.day} (at most {p.max})"
    return OK


@check("progress_by")
def _progress_by(d: ProjectData, plan: Plan, p: ProgressBy) -> Verdict:
    done = sum(days_before(plan.start[a.id], a.duration, p.day) for a in d.activities)
    if done < p.min:
        return False, f"{done} activity-days are done before day {p.day} (at least {p.min})"
    return OK


@check("spare_unit")
def _spare_unit(d: ProjectData, plan: Plan, p: SpareUnit) -> Verdict:
    """Simulates one unit of each named resource breaking down on any day."""
    for rid in p.resources:
        cap = d.resource_by_id[rid].capacity - 1
        profile = usage(d, plan, demands(d, rid))
        t = first_over(profile, cap)
        if t is not None:
            return (
                False,
                f"if one unit of {rid} broke down on day {t}, its {profile[t]} units in use would exceed {cap}",
            )
    return OK


@check("not_before")
def _not_before(d: ProjectData, plan: Plan, p: NotBefore) -> Verdict:
    s = plan.start[p.activity]
    if s < p.day:
        return False, f"{p.activity} starts on day {s}, before day {p.day}"
    return OK


# -- objective -------------------------------------------------------------------------
def makespan(d: ProjectData, plan: Plan) -> int:
    return max(finish(d, plan, a.id) for a in d.activities)


def milestone_finish(d: ProjectData, plan: Plan, m: Milestone) -> int:
    return max(finish(d, plan, a) for a in m.activities)


def objective_value(d: ProjectData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "makespan":
        return makespan(d, plan)
    if kind == "milestone_lateness":
        return sum(m.weight * max(0, milestone_finish(d, plan, m) - m.due) for m in d.milestones)
    if kind == "start_score":
        return sum(a.weight * plan.start[a.id] for a in d.activities)
    if kind == "changes":
        old = as_model(tp, CurrentStarts).existing
        return sum(1 for a in d.activities if plan.start[a.id] != old[a.id])
    raise ValueError(f"unknown objective kind {term.kind!r}")


def peaks(d: ProjectData, plan: Plan) -> dict[str, int]:
    """Resource id -> its highest daily usage in the plan."""
    return {r.id: max(usage(d, plan, demands(d, r.id)), default=0) for r in d.resources}


def neighbours(d: ProjectData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one activity's start changed to another day it fits in."""
    for a in d.activities:
        for s in range(0, d.horizon - a.duration + 1):
            if s != plan.start[a.id]:
                yield Plan({**plan.start, a.id: s})


# -- the task checker ------------------------------------------------------------------
class ProjectPlanning(PlanChecker):
    family = "project"
    task = TASK_ID
    plan_key = "schedule"
    plan_text = (
        "a list naming every activity exactly once with an integer start day from 0 to the horizon minus the "
        "activity's duration"
    )
    data_type = ProjectData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: ProjectData) -> dict[str, Any]:
        return {"activity": lookup([a.id for a in d.activities])}

    def read_plan(self, d: ProjectData, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Plan | None, str]:
        start, why = start_rows(
            section, "activity", "activities", lk["activity"], d.activity_duration, d.horizon, "day"
        )
        return (None, why) if start is None else (Plan(start), why)

    def objective_value(self, d: ProjectData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: ProjectData, plan: Plan) -> dict[str, dict[str, int]]:
        return {"finish": {a.id: finish(d, plan, a.id) for a in d.activities}, "peak": peaks(d, plan)}

    def existing(self, d: ProjectData, plan: Plan) -> dict[str, int]:
        return dict(plan.start)

    def plan_schema(self, d: ProjectData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        row = {
            "type": "object",
            "properties": {
                "activity": {"enum": [a.id for a in d.activities]},
                "start": {"type": "integer", "minimum": 0, "description": "start day (days from project start)"},
            },
            "required": ["activity", "start"],
        }
        return {"type": "array", "items": row, "description": "every activity exactly once"}

    def verification_schema(self, d: ProjectData) -> dict[str, Any]:
        return figures_schema({
            "finish": ([a.id for a in d.activities], "for each activity, its finish day (start + duration)"),
            "peak": ([r.id for r in d.resources], "for each resource, its highest number of units in use on one day"),
        })  # fmt: skip

    def plan_json(self, d: ProjectData, plan: Plan) -> list[dict[str, Any]]:
        return [{"activity": a.id, "start": plan.start[a.id]} for a in d.activities]

    def neighbours(self, data: ProjectData, plan: Plan) -> Iterator[Plan]:
        """One move from ``plan`` (see :func:`neighbours`), for the kit's near misses."""
        return neighbours(data, plan)

    def baseline_plan(self, d: ProjectData, instance: Instance) -> Plan:
        """A serial schedule in listed order: each activity at the earliest day from its
        release that its links to already placed activities and the resource capacities
        allow. Blind to deadlines, windows, budgets and the secondary objectives."""
        start: dict[str, int] = {}
        used = {r.id: [0] * d.horizon for r in d.resources}
        incoming: dict[str, list[Link]] = {a.id: [] for a in d.activities}
        for link in d.links:
            incoming[link.after].append(link)
        pending = [a.id for a in d.activities]
        while pending:  # listed order, each activity once its predecessors are placed
            aid = next((x for x in pending if all(lk.before in start for lk in incoming[x])), pending[0])
            pending.remove(aid)
            a = d.activity_by_id[aid]
            earliest = a.release
            for link in incoming[aid]:
                if link.before in start:
                    b = d.activity_by_id[link.before]
                    base = start[link.before] + (b.duration if link.type == "FS" else 0)
                    earliest = max(earliest, base + link.lag)
            top = d.horizon - a.duration
            s = min(earliest, top)
            while s < top and any(
                used[r][t] + u > d.resource_by_id[r].capacity
                for r, u in a.demand.items()
                for t in range(s, s + a.duration)
            ):
                s += 1
            start[aid] = s
            for r, u in a.demand.items():
                for t in range(s, s + a.duration):
                    used[r][t] += u
        return Plan(start)


TASK = ProjectPlanning()
