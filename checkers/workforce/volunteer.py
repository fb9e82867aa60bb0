"""Checks for Volunteer Scheduling answers: volunteers to posts over the shifts of an event.

This module is the grader's second implementation of every rule: its data model and the
parameter models of its rule and objective kinds are read by the solver model and the
prompt text too, but every check and figure here is computed from the plan alone, in
plain Python integers. Nothing here imports the solver models.

A plan is a roster: for each (volunteer, shift) at most one post, and -- where the
robustness rule asks for it -- one standby volunteer per shift (a roster row whose post
is ``standby``).
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt

from pbsolve.checker_kit import OK, Names, PerData, PlanChecker, lookup, row_names, spread_verdict
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import Names as DataNames
from pbsolve.params import NoParams, Params, as_model
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "volunteer_scheduling"
STANDBY = "standby"  # the post name of a standby row
ORDER_CODE = 10  # order score of volunteer k at post j in shift t: t * (10 * k + j) ** 2 (posts <= 9)


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Shift(_Frozen):
    id: str
    day: int = Field(ge=0)
    peak: bool = Field(default=False, description="a peak shift (posts need their peak staffing)")
    late: bool = Field(default=False, description="a late shift (no minors; cool-down after it)")


class Post(_Frozen):
    id: str
    skill: str | None = Field(default=None, description="the skill every volunteer at this post needs")
    training: str | None = Field(default=None, description="the completed training this post needs")
    need: NonNegativeInt = Field(description="volunteers needed in every shift")
    peak_need: NonNegativeInt | None = Field(default=None, description="volunteers needed in peak shifts")


class Volunteer(_Frozen):
    id: str
    skills: tuple[str, ...] = ()
    trained: tuple[str, ...] = ()
    minor: bool = Field(default=False, description="under 18")
    leader: bool = Field(default=False, description="a team leader")
    max_shifts: PositiveInt | None = Field(default=None, description="the most shifts this volunteer works")
    unavailable: tuple[str, ...] = Field(default=(), description="shift ids")
    prefs: dict[str, NonNegativeInt] = Field(description="post -> preference penalty (0 = favourite)")


class VolunteerData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    shifts: tuple[Shift, ...]
    posts: tuple[Post, ...]
    volunteers: tuple[Volunteer, ...]
    uncertain: tuple[Uncertain, ...] = ()

    @cached_property
    def shift_index(self) -> dict[str, int]:
        return {s.id: i for i, s in enumerate(self.shifts)}

    @cached_property
    def post_by_id(self) -> dict[str, Post]:
        return {p.id: p for p in self.posts}

    @cached_property
    def volunteer_by_id(self) -> dict[str, Volunteer]:
        return {v.id: v for v in self.volunteers}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {
            "volunteer": self.volunteer_by_id,
            "post": self.post_by_id,
            "shift": self.shift_index,
        }
        return names[what]

    @cached_property
    def numbers(self) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
        """Volunteer, post and shift id -> its position in its list, from 1 (the order score's k, j, t)."""
        return (
            {v.id: n for n, v in enumerate(self.volunteers, 1)},
            {p.id: n for n, p in enumerate(self.posts, 1)},
            {s.id: n for n, s in enumerate(self.shifts, 1)},
        )

    @cached_property
    def order_scores(self) -> dict[tuple[str, str], dict[str, int]]:
        """(volunteer, shift) -> post -> the order score of that roster row: t * (10 * k + j) ** 2."""
        kn, jn, tn = self.numbers
        return {
            (v, s): {post: t * (ORDER_CODE * k + j) ** 2 for post, j in jn.items()}
            for v, k in kn.items()
            for s, t in tn.items()
        }

    @cached_property
    def next_pairs(self) -> tuple[tuple[str, str], ...]:
        """(shift, the shift after it on the same day): consecutive shifts of one day."""
        return tuple((a.id, b.id) for a, b in itertools.pairwise(self.shifts) if a.day == b.day)

    @cached_property
    def no_staff(self) -> dict[tuple[str, str], int]:
        """(post, shift) -> 0 for every post and shift: the table a plan's staffing counts start from."""
        return {(p.id, s.id): 0 for p in self.posts for s in self.shifts}

    @cached_property
    def needs(self) -> tuple[tuple[tuple[str, str], str, str, int], ...]:
        """((post, shift), post, shift, need) shift by shift, posts in list order, where
        the post needs anyone: the places the coverage rule can fail, in its order."""
        return tuple(((p.id, s.id), p.id, s.id, p.need) for s in self.shifts for p in self.posts if p.need > 0)

    @cached_property
    def peak_needs(self) -> tuple[tuple[tuple[str, str], str, str, int], ...]:
        """As :attr:`needs`, the peak need of each post with one, in the peak shifts."""
        return tuple(
            ((p.id, s.id), p.id, s.id, p.peak_need)
            for s in self.shifts
            if s.peak
            for p in self.posts
            if p.peak_need is not None and p.peak_need > 0
        )

    @cached_property
    def leaders(self) -> tuple[str, ...]:
        """The team leaders' ids, in list order."""
        return tuple(v.id for v in self.volunteers if v.leader)

    def required(self, post: Post, shift: Shift, peak_rule: bool) -> int:
        """Volunteers the post needs in the shift: its need, or its peak need in a peak
        shift when the peak rule applies (whichever is larger)."""
        if peak_rule and shift.peak and post.peak_need is not None:
            return max(post.need, post.peak_need)
        return post.need


def can_work(v: Volunteer, p: Post) -> bool:
    """Has the volunteer the post's skill and training (data without training has none)?"""
    return (p.skill is None or p.skill in v.skills) and (p.training is None or p.training in v.trained)


# -- parameters ------------------------------------------------------------------------
VolunteerName = Annotated[str, DataNames("volunteer")]
PostName = Annotated[str, DataNames("post")]
ShiftName = Annotated[str, DataNames("shift")]


class MinorHours(Params):
    """Minors work at most ``max_per_day`` shifts a day and no late shift."""

    max_per_day: PositiveInt


class LoadCap(Params):
    """Each named volunteer works at most ``max`` shifts."""

    volunteers: list[VolunteerName]
    max: NonNegativeInt


class VolunteerAbsent(Params):
    """The volunteer works no post in the named shifts."""

    volunteer: VolunteerName
    shifts: list[ShiftName]


class LoadBalance(Params):
    """The loads (shifts worked) of any two volunteers differ by at most ``max``."""

    max: NonNegativeInt


class MinShifts(Params):
    """Each named volunteer works at least ``min`` shifts."""

    volunteers: list[VolunteerName]
    min: NonNegativeInt


class Buffer(Params):
    """Each named volunteer never works two consecutive shifts of one day."""

    volunteers: list[VolunteerName]


class RestAfterRun(Params):
    """After ``run`` shifts in a row (consecutive in the shift list) a volunteer is off the next shift."""

    run: PositiveInt


class CurrentRoster(Params):
    """The current roster a ``changes`` term counts against: (volunteer, post, shift) rows."""

    existing: list[tuple[VolunteerName, PostName, ShiftName]]


RULE_PARAMS: dict[str, type[Params]] = {
    "skill": NoParams,
    "coverage": NoParams,
    "availability": NoParams,
    "training": NoParams,
    "shift_cap": NoParams,
    "peak_cover": NoParams,
    "minors": MinorHours,
    "leader_on_site": NoParams,
    "load_cap": LoadCap,
    "volunteer_absent": VolunteerAbsent,
    "load_balance": LoadBalance,
    "rotation": NoParams,
    "min_shifts": MinShifts,
    "buffer": Buffer,
    "rest_after_run": RestAfterRun,
    "late_cooldown": NoParams,
    "standby": NoParams,
}
TERM_PARAMS: dict[str, type[Params]] = {
    "volunteer_shifts": NoParams,
    "preference": NoParams,
    "order_score": NoParams,
    "standby_score": NoParams,
    "changes": CurrentRoster,
}


# -- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    assign: dict[tuple[str, str], str]  # (volunteer, shift) -> post; absent: off that shift
    standby: dict[str, str] | None = None  # shift -> standby volunteer (robustness only)
    # what the rules read of the plan, computed once: shifts per volunteer, and the
    # staffing per data it was computed for (see _staffing)
    _loads: dict[str, int] = field(default_factory=dict, compare=False, repr=False)
    _staff: PerData[dict[tuple[str, str], list[str]]] = field(default_factory=PerData, compare=False, repr=False)
    _counts: PerData[dict[tuple[str, str], int]] = field(default_factory=PerData, compare=False, repr=False)


def load(plan: Plan, volunteer: str) -> int:
    loads = plan._loads
    if not loads and plan.assign:
        for v, _ in plan.assign:
            loads[v] = loads.get(v, 0) + 1
    return loads.get(volunteer, 0)


def works(plan: Plan, volunteer: str, shift: str) -> bool:
    return (volunteer, shift) in plan.assign


def has_peak_rule(plan_rules: list[Rule]) -> bool:
    return any(r.kind == "peak_cover" for r in plan_rules)


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


def _staffing(d: VolunteerData, plan: Plan) -> dict[tuple[str, str], list[str]]:
    """(post, shift) -> the volunteers working there, in roster-list order (computed once
    per plan and data; not to be changed)."""
    return plan._staff.get(d, lambda: _staffed(d, plan))


def _staff_counts(d: VolunteerData, plan: Plan) -> dict[tuple[str, str], int]:
    """(post, shift) -> how many of the data's volunteers work there: the lengths of
    :func:`_staffing`'s lists, counted from the roster rows (computed once per plan and data)."""
    return plan._counts.get(d, lambda: _counted(d, plan))


def _counted(d: VolunteerData, plan: Plan) -> dict[tuple[str, str], int]:
    out = dict(d.no_staff)
    vols, shifts = d.volunteer_by_id, d.shift_index
    for (v, s), post in plan.assign.items():
        if v in vols and s in shifts:
            out[post, s] += 1
    return out


def _staffed(d: VolunteerData, plan: Plan) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {(p.id, s.id): [] for p in d.posts for s in d.shifts}
    for v in d.volunteers:
        for s in d.shifts:
            post = plan.assign.get((v.id, s.id))
            if post is not None:
                out[post, s.id].append(v.id)
    return out


# -- rule checks -----------------------------------------------------------------------
@check("skill")
def _skill(d: VolunteerData, plan: Plan, p: NoParams) -> Verdict:
    posts, vols = d.post_by_id, d.volunteer_by_id
    for (v, s), post in plan.assign.items():
        need = posts[post].skill
        if need is not None and need not in vols[v].skills:
            return False, f"{v} works {post} in {s} without the skill {need}"
    return OK


@check("training")
def _training(d: VolunteerData, plan: Plan, p: NoParams) -> Verdict:
    posts, vols = d.post_by_id, d.volunteer_by_id
    for (v, s), post in plan.assign.items():
        need = posts[post].training
        if need is not None and need not in vols[v].trained:
            return False, f"{v} works {post} in {s} without the {need} training"
    return OK


@check("coverage")
def _coverage(d: VolunteerData, plan: Plan, p: NoParams) -> Verdict:
    counts = _staff_counts(d, plan)
    for key, post, s, need in d.needs:
        have = counts[key]
        if have < need:
            return False, f"{post} has {have} volunteers in {s}; it needs {need}"
    return OK


@check("peak_cover")
def _peak_cover(d: VolunteerData, plan: Plan, p: NoParams) -> Verdict:
    counts = _staff_counts(d, plan)
    for key, post, s, need in d.peak_needs:
        have = counts[key]
        if have < need:
            return False, f"{post} has {have} volunteers in the peak shift {s}; it needs {need}"
    return OK


@check("availability")
def _availability(d: VolunteerData, plan: Plan, p: NoParams) -> Verdict:
    vols = d.volunteer_by_id
    for (v, s), post in plan.assign.items():
        if s in vols[v].unavailable:
            return False, f"{v} is unavailable in {s} but works {post}"
    return OK


@check("shift_cap")
def _shift_cap(d: VolunteerData, plan: Plan, p: NoParams) -> Verdict:
    for v in d.volunteers:
        n = load(plan, v.id)
        if v.max_shifts is not None and n > v.max_shifts:
            return False, f"{v.id} works {n} shifts (at most {v.max_shifts})"
    return OK


def _per_day(d: VolunteerData, plan: Plan, volunteer: str) -> dict[int, int]:
    counts: dict[int, int] = {}
    for s in d.shifts:
        if works(plan, volunteer, s.id):
            counts[s.day] = counts.get(s.day, 0) + 1
    return counts


@check("minors")
def _minors(d: VolunteerData, plan: Plan, p: MinorHours) -> Verdict:
    for v in d.volunteers:
        if not v.minor:
            continue
        for s in d.shifts:
            if s.late and works(plan, v.id, s.id):
                return False, f"{v.id} is a minor and works the late shift {s.id}"
        counts = _per_day(d, plan, v.id)
        if counts and max(counts.values()) > p.max_per_day:
            return (
                False,
                f"{v.id} is a minor and works {max(counts.values())} shifts in one day (at most {p.max_per_day})",
            )
    return OK


@check("leader_on_site")
def _leader_on_site(d: VolunteerData, plan: Plan, p: NoParams) -> Verdict:
    assign, leaders = plan.assign, d.leaders
    for s in d.shifts:
        for v in leaders:
            if (v, s.id) in assign:
                break
        else:
            return False, f"no team leader works in {s.id}"
    return OK


@check("load_cap")
def _load_cap(d: VolunteerData, plan: Plan, p: LoadCap) -> Verdict:
    for v in p.volunteers:
        n = load(plan, v)
        if n > p.max:
            return False, f"{v} works {n} shifts (at most {p.max})"
    return OK


@check("volunteer_absent")
def _volunteer_absent(d: VolunteerData, plan: Plan, p: VolunteerAbsent) -> Verdict:
    for s in p.shifts:
        post = plan.assign.get((p.volunteer, s))
        if post is not None:
            return False, f"{p.volunteer} is absent in {s} but works {post}"
    return OK


@check("load_balance")
def _load_balance(d: VolunteerData, plan: Plan, p: LoadBalance) -> Verdict:
    loads = {v.id: load(plan, v.id) for v in d.volunteers}
    return spread_verdict(loads, p.max, "works", "shifts")


@check("rotation")
def _rotation(d: VolunteerData, plan: Plan, p: NoParams) -> Verdict:
    assign = plan.assign
    for a, b in d.next_pairs:
        for v in d.volunteers:
            post = assign.get((v.id, a))
            if post is not None and assign.get((v.id, b)) == post:
                return False, f"{v.id} works {post} in both {a} and {b}"
    return OK


@check("min_shifts")
def _min_shifts(d: VolunteerData, plan: Plan, p: MinShifts) -> Verdict:
    for v in p.volunteers:
        n = load(plan, v)
        if n < p.min:
            return False, f"{v} works {n} shifts (at least {p.min})"
    return OK


@check("buffer")
def _buffer(d: VolunteerData, plan: Plan, p: Buffer) -> Verdict:
    for v in p.volunteers:
        for a, b in d.next_pairs:
            if works(plan, v, a) and works(plan, v, b):
                return False, f"{v} works the consecutive shifts {a} and {b}"
    return OK


@check("rest_after_run")
def _rest_after_run(d: VolunteerData, plan: Plan, p: RestAfterRun) -> Verdict:
    """Walks each volunteer's shifts in list order, counting the current run of shifts worked."""
    assign = plan.assign
    for v in d.volunteers:
        run = 0
        for s in d.shifts:
            if (v.id, s.id) in assign:
                if run >= p.run:
                    return False, f"{v.id} works {s.id} right after {run} shifts in a row (rest after {p.run})"
                run += 1
            else:
                run = 0
    return OK


@check("late_cooldown")
def _late_cooldown(d: VolunteerData, plan: Plan, p: NoParams) -> Verdict:
    for a, b in itertools.pairwise(d.shifts):
        if not a.late:
            continue
        for v in d.volunteers:
            if works(plan, v.id, a.id) and works(plan, v.id, b.id):
                return False, f"{v.id} works {b.id} right after the late shift {a.id}"
    return OK


@check("standby")
def _standby(d: VolunteerData, plan: Plan, p: NoParams) -> Verdict:
    """Each shift's standby could step in for any one volunteer of the shift: off in
    that shift, available, able to work every post staffed then, and not a minor in a
    late shift."""
    standby = plan.standby or {}
    counts = _staff_counts(d, plan)
    for s in d.shifts:
        b = standby.get(s.id)
        if b is None:
            return False, f"{s.id} names no standby volunteer"
        v = d.volunteer_by_id[b]
        if works(plan, b, s.id):
            return False, f"{s.id}'s standby {b} already works {plan.assign[b, s.id]} then"
        if s.id in v.unavailable:
            return False, f"{s.id}'s standby {b} is unavailable then"
        if s.late and v.minor:
            return False, f"{s.id}'s standby {b} is a minor and {s.id} is a late shift"
        for post in d.posts:
            if counts[post.id, s.id] and not can_work(v, post):
                return False, f"{s.id}'s standby {b} could not step in at {post.id}"
    return OK


# -- objective -------------------------------------------------------------------------
def objective_value(d: VolunteerData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "volunteer_shifts":
        return len(plan.assign)
    if kind == "preference":
        vols, total = d.volunteer_by_id, 0
        for (v, _), post in plan.assign.items():
            total += vols[v].prefs[post]
        return total
    if kind == "order_score":
        scores, total = d.order_scores, 0
        for key, post in plan.assign.items():
            total += scores[key][post]
        return total
    if kind == "standby_score":
        kn = d.numbers[0]
        return sum(kn[v] for v in (plan.standby or {}).values())
    if kind == "changes":
        old = {(v, s): post for v, post, s in as_model(tp, CurrentRoster).existing}
        return sum(1 for v in d.volunteers for s in d.shifts if plan.assign.get((v.id, s.id)) != old.get((v.id, s.id)))
    raise ValueError(f"unknown objective kind {term.kind!r}")


# -- the task checker ------------------------------------------------------------------
class VolunteerScheduling(PlanChecker):
    family = "workforce"
    task = TASK_ID
    plan_key = "roster"
    plan_text = (
        "a roster: rows naming a listed volunteer, a listed shift and a listed post, no volunteer twice in one "
        "shift (and exactly one standby row per shift where the rules ask for standbys)"
    )
    data_type = VolunteerData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: VolunteerData) -> dict[str, Names]:
        return {
            "volunteer": lookup([v.id for v in d.volunteers]),
            "shift": lookup([s.id for s in d.shifts]),
            "post": lookup([p.id for p in d.posts] + [STANDBY]),
        }

    def read_plan(
        self, d: VolunteerData, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Plan | None, str]:
        rows = section.get("roster") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'roster' is missing or not a list"
        need_standby = any(r.kind == "standby" for r in rules)
        fields = {"volunteer": lk["volunteer"], "shift": lk["shift"], "post": lk["post"]}
        assign: dict[tuple[str, str], str] = {}
        standby: dict[str, str] = {}
        vx, sx, px = fields["volunteer"].exact, fields["shift"].exact, fields["post"].exact
        for k, row in enumerate(rows):
            try:  # the usual row, each name as the instance spells it: row_names' answer, read inline
                if type(row) is not dict:
                    raise TypeError
                v, s, post = vx[row["volunteer"]], sx[row["shift"]], px[row["post"]]
            except (KeyError, TypeError):
                names, why = row_names(row, k, "roster row", fields)
                if names is None:
                    return None, why
                v, s, post = names
            if post == STANDBY:
                if not need_standby:
                    return None, f"roster row {k + 1} names a standby, but no rule asks for one"
                if s in standby:
                    return None, f"{s} names more than one standby"
                standby[s] = v
                continue
            if (v, s) in assign:
                return None, f"{v} appears more than once in {s}"
            assign[v, s] = post
        if need_standby:
            missing = [s.id for s in d.shifts if s.id not in standby]
            if missing:
                return None, f"shifts without a standby row: {', '.join(missing)}"
        return Plan(assign, standby if need_standby else None), "complete roster"

    def objective_value(self, d: VolunteerData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: VolunteerData, plan: Plan) -> dict[str, dict[str, int]]:
        staffed = {p.id: 0 for p in d.posts}
        for post in plan.assign.values():
            if post in staffed:
                staffed[post] += 1
        return {"shifts": {v.id: load(plan, v.id) for v in d.volunteers}, "staffed": staffed}

    def existing(self, d: VolunteerData, plan: Plan) -> list[list[str]]:
        """Rows in the roster's order: shift by shift, volunteers in list order."""
        return [
            [v.id, plan.assign[v.id, s.id], s.id] for s in d.shifts for v in d.volunteers if (v.id, s.id) in plan.assign
        ]

    def plan_schema(self, d: VolunteerData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        posts = [p.id for p in d.posts]
        if any(r.kind == "standby" for r in rules):
            posts.append(STANDBY)
        row = {
            "type": "object",
            "properties": {
                "volunteer": {"enum": [v.id for v in d.volunteers]},
                "shift": {"enum": [s.id for s in d.shifts]},
                "post": {"enum": posts},
            },
            "required": ["volunteer", "shift", "post"],
        }
        return {
            "type": "array",
            "items": row,
            "description": "one row per volunteer working a shift (a volunteer not listed in a shift is off)",
        }

    def verification_schema(self, d: VolunteerData) -> dict[str, Any]:
        return figures_schema({
            "shifts": ([v.id for v in d.volunteers], "for each volunteer, the number of shifts they work"),
            "staffed": ([p.id for p in d.posts], "for each post, the number of volunteer-shifts worked at it"),
        })  # fmt: skip

    def plan_json(self, d: VolunteerData, plan: Plan) -> list[dict[str, str]]:
        rows = []
        for s in d.shifts:
            for v in d.volunteers:
                post = plan.assign.get((v.id, s.id))
                if post is not None:
                    rows.append({"volunteer": v.id, "shift": s.id, "post": post})
            if plan.standby is not None and s.id in plan.standby:
                rows.append({"volunteer": plan.standby[s.id], "shift": s.id, "post": STANDBY})
        return rows

    def neighbours(self, d: VolunteerData, plan: Plan) -> Iterator[Plan]:
        """Every roster one volunteer-shift away (another post, off, or on when off), one
        volunteer replaced at their post by another who was off, and every other standby
        of one shift."""
        posts: list[str | None] = [None, *(p.id for p in d.posts)]
        for v in d.volunteers:
            for s in d.shifts:
                now = plan.assign.get((v.id, s.id))
                for post in posts:
                    if post != now:
                        assign = {k: x for k, x in plan.assign.items() if k != (v.id, s.id)}
                        if post is not None:
                            assign[v.id, s.id] = post
                        yield Plan(assign, plan.standby)
        for (v_id, s_id), post in plan.assign.items():  # one volunteer replaced by another who was off
            for u in d.volunteers:
                if (u.id, s_id) not in plan.assign:
                    assign = {k: x for k, x in plan.assign.items() if k != (v_id, s_id)}
                    assign[u.id, s_id] = post
                    yield Plan(assign, plan.standby)
        if plan.standby is not None:
            for s in d.shifts:
                for v in d.volunteers:
                    if v.id != plan.standby.get(s.id):
                        yield Plan(plan.assign, {**plan.standby, s.id: v.id})

    def baseline_plan(self, d: VolunteerData, instance: Instance) -> Plan:
        """Shift by shift, post by post: the first listed volunteers able to work the post
        (skill and training), available and still free, up to the post's need (its peak
        need in peak shifts); standbys: the first free volunteer."""
        peak = has_peak_rule(list(instance.rules))
        assign: dict[tuple[str, str], str] = {}
        for s in d.shifts:
            for post in d.posts:
                want = d.required(post, s, peak)
                for v in d.volunteers:
                    if want <= 0:
                        break
                    if (v.id, s.id) not in assign and s.id not in v.unavailable and can_work(v, post):
                        assign[v.id, s.id] = post.id
                        want -= 1
        standby = None
        if any(r.kind == "standby" for r in instance.rules):
            standby = {
                s.id: next((v.id for v in d.volunteers if (v.id, s.id) not in assign), d.volunteers[0].id)
                for s in d.shifts
            }
        return Plan(assign, standby)


TASK = VolunteerScheduling()
