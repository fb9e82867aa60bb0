"""Volunteer Scheduling: volunteers to posts over the shifts of an event.

Decision: x[v,p,s] = 1 when volunteer v works post p in shift s (at most one post per
volunteer and shift: the roster's form) and, for robustness, y[v,s] = 1 when v is shift
s's standby (exactly one per shift). Coverage asks for at least a post's need, so the
objective's first figure, the number of volunteer-shifts, keeps rosters lean; the
volunteers' stated post preferences come second and the stated order score last, which
makes the optimum unique in practice (volunteers differ in skills, availability and
preferences, so they are not interchangeable and no symmetry hook is needed).
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.workforce import volunteer as vc
from pbsolve.checkers.workforce.volunteer import Post, Shift, Volunteer, VolunteerData, can_work
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
    id=vc.TASK_ID,
    name="Volunteer Scheduling",
    family="workforce",
    summary="roster volunteers to an event's posts over its shifts: skills, training, peaks, rotation, minors",
    subtasks=(
        SubtaskSpec("music_festival", "Music festival", "gates, bars and first aid with peak evenings and late shifts"),
        SubtaskSpec("marathon", "City marathon", "water stations along the route with start and finish peaks"),
        SubtaskSpec("food_bank_shifts", "Food bank", "sorting, packing and driving with a licence; teenage volunteers"),
        SubtaskSpec("conference", "Conference", "registration desk and session rooms needing AV skills; team leaders"),
        SubtaskSpec(
            "relief_hub", "Disaster relief hub", "round-the-clock intake, kitchen and medical posts; rest rules"
        ),
    ),
    pool=(
        ConstraintSpec("skill", "basic", "a post's volunteers have its skill"),
        ConstraintSpec("coverage", "basic", "every post has at least its need of volunteers in every shift"),
        ConstraintSpec("availability", "basic", "volunteers' unavailable shifts (time windows)"),
        ConstraintSpec("training", "basic", "posts needing a completed training"),
        ConstraintSpec("shift_cap", "basic", "each volunteer works at most their stated number of shifts (capacity)"),
        ConstraintSpec("peak_cover", "basic", "peak shifts need more volunteers at some posts"),
        ConstraintSpec("minors", "basic", "volunteers under 18: at most so many shifts a day and no late shifts"),
        ConstraintSpec("leader_on_site", "basic", "every shift has a team leader working"),
        ConstraintSpec("load_cap", "basic", "named volunteers work at most so many shifts"),
        ConstraintSpec("load_balance", "medium", "fairness: shift loads within a stated gap"),
        ConstraintSpec("rotation", "medium", "no volunteer at the same post in two consecutive shifts of a day"),
        ConstraintSpec("min_shifts", "medium", "minimum guarantee: named volunteers work at least so many shifts"),
        ConstraintSpec("buffer", "medium", "buffer: named volunteers never work two consecutive shifts of a day"),
        ConstraintSpec("rest_after_run", "stateful", "after a stated number of shifts in a row, one shift of rest"),
        ConstraintSpec(
            "late_cooldown", "stateful", "cool-down: a volunteer who works a late shift is off the next shift"
        ),
        *mechanism_pool(
            "every shift names a standby volunteer who could step in for any one volunteer of that shift",
            replan="repair a roster after a volunteer drops out, with the fewest changed volunteer-shifts",
        ),
    ),
    base_rules=("skill", "coverage"),
)

PEOPLE = (
    "Ana", "Ben", "Chen", "Dara", "Eli", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kemi", "Lars",
    "Mira", "Nico", "Omar", "Pia", "Quinn", "Rosa", "Sami", "Tove", "Uma", "Viktor",
)  # fmt: skip


@dataclass(frozen=True)
class Context:
    """One subtask's world: its days, its shifts of a day (name, peak, late), its posts
    (name, skill, training) and the rule kinds its structure always carries."""

    days: tuple[str, ...]
    shifts: tuple[tuple[str, bool, bool], ...]
    posts: tuple[tuple[str, str | None, str | None], ...]
    forced: tuple[str, ...]


CONTEXTS = {
    "music_festival": Context(
        days=("Fri", "Sat", "Sun"),
        shifts=(("afternoon", False, False), ("evening", True, False), ("late", False, True)),
        posts=(
            ("Main gate", None, None),
            ("Bar", "bar licence", None),
            ("First aid tent", "first aid", "safeguarding"),
            ("Info point", None, None),
            ("Campsite", None, "safeguarding"),
            ("Stage door", "radio", None),
        ),
        forced=("peak_cover",),
    ),
    "marathon": Context(
        days=("Expo day", "Race day", "Kids' race day"),
        shifts=(("start", True, False), ("course", False, False), ("finish", True, False), ("clear-up", False, True)),
        posts=(
            ("Start pen", None, None),
            ("Water km 5", None, None),
            ("Water km 21", None, None),
            ("Finish line", "first aid", None),
            ("Baggage", None, None),
            ("Timing", "timing kit", "chip timing"),
        ),
        forced=("peak_cover", "rotation"),
    ),
    "food_bank_shifts": Context(
        days=("Mon", "Tue", "Wed"),
        shifts=(("morning", False, False), ("afternoon", True, False), ("evening", False, True)),
        posts=(
            ("Sorting", None, None),
            ("Packing", None, None),
            ("Driving", "driving licence", None),
            ("Reception", None, "data protection"),
            ("Warehouse", "forklift", "manual handling"),
        ),
        forced=("minors",),
    ),
    "conference": Context(
        days=("Day 1", "Day 2", "Day 3"),
        shifts=(("morning", True, False), ("afternoon", False, False), ("evening", False, True)),
        posts=(
            ("Registration", None, None),
            ("Room A", "AV", None),
            ("Room B", "AV", None),
            ("Cloakroom", None, None),
            ("Speaker lounge", None, "hosting"),
            ("Livestream", "AV", "streaming"),
        ),
        forced=("leader_on_site",),
    ),
    "relief_hub": Context(
        days=("Day 1", "Day 2", "Day 3"),
        shifts=(("day", True, False), ("evening", False, False), ("night", False, True)),
        posts=(
            ("Intake", None, None),
            ("Kitchen", None, "food hygiene"),
            ("Medical", "nursing", "triage"),
            ("Warehouse", None, None),
            ("Logistics", "driving licence", None),
        ),
        forced=("rest_after_run",),
    ),
}
MAX_PREFERENCE = 5


class VolunteerSizes(Settings):
    """How big a volunteer-scheduling instance is."""

    days: PositiveInt = Field(le=3)
    shifts_per_day: PositiveInt = Field(le=3, description="shifts of a day, taken from the subtask's list")
    posts: int = Field(ge=2, le=5)
    volunteers: PositiveInt = Field(le=len(PEOPLE))
    need: PositiveRange = Field(description="volunteers a post needs per shift")


SIZES = SizeTable[VolunteerSizes](
    tiny=VolunteerSizes(days=1, shifts_per_day=2, posts=2, volunteers=3, need=PositiveRange(lo=1, hi=1)),
    small=VolunteerSizes(days=1, shifts_per_day=3, posts=3, volunteers=5, need=PositiveRange(lo=1, hi=1)),
    default=VolunteerSizes(days=2, shifts_per_day=3, posts=4, volunteers=10, need=PositiveRange(lo=1, hi=2)),
    large=VolunteerSizes(days=3, shifts_per_day=3, posts=5, volunteers=18, need=PositiveRange(lo=1, hi=2)),
)
PROBE_TIME = 2.0
# the uniqueness re-optimisation without presolve: measured on 30 drafts at default size,
# 1.25 against 1.65 s in all, the same certificates
# Every solve with the full LP relaxation, feasibility probes included (optimisations
# have it already): the hard tier's feasibility questions on these rosters are counting
# arguments the LP settles at once (measured on 3 infeasibility instances, probes in
# all: 19.1 s without, 0.72 s with; benchmarks/generate.py --n 30: 10.7 s against 17.7 s,
# the slowest instance 1.05 s against 7.83 s). Measured no faster on recruitment and work
# assignment, whose probes are cheap on most seeds.
PARAMETERS = {"linearization_level": 2}
# Not steadily faster on stored default certifications (seeds 0-7): every linear
# constraint in the LP from the start (173 drafts, the same deterministic time), no
# probing; nor, on 45 drafts, without MIR, CG, zero-half or clique cuts or with symmetry
# level 0; linearization level 1 far slower. Measured again on 196 stored drafts (seeds
# 0-7), deterministic time of the proof 1.19 s: no steady gain from lazy LP constraints
# off, zero-half and clique cuts off (23 drafts of seed 0 -20 %, seeds 4-7 +26 %), the
# objective lower-bound search (+17 % on seeds 4-7), core-based or LB-tree search (x1.5,
# x1.8 on seed 0), LP polishing or binary search; nor as speed_parameters. The proof's
# second-best plans (seed 0) swap one post or shift between two volunteers who differ in
# skills or preferences elsewhere (2-12 cells): no interchangeable volunteers to break.
UNIQUENESS_PARAMETERS = {"cp_model_presolve": False}
# The proof starts from the first solve's last plan before the optimum
# (SolverModel.uniqueness_hint): CPU s of the proof, the same certificates, on the drafts of
# 30 default indices per seed: seeds 0-1 0.62 against 0.54, seeds 0-9 5.59-5.66 against
# 5.44-5.52 (seeds 2-5 alone 1.95 against 1.99).
# The proof first searches the plans that drop or move one of the reference's assignments
# (SolverModel.uniqueness_lean_cut; the first term counts assignments, so a plan that only
# adds some is worse there): the second bests found so far all keep the count and differ
# in order_score alone, and the single cut's other half of the search is never needed.
# CPU s of the proof over the first solve, the same instances byte for byte, 60 default
# indices: seed 0 1.35 against 1.45, seed 3 0.95 against 2.20; none widened to the single cut.
UNIQUENESS_LEAN_CUT = True
UNCERTAIN_PROBES = 7  # candidates offered to make_uncertain (each probe costs two optimisations)


# -- the CP-SAT model ------------------------------------------------------------------
_BOOL = cp_model.Domain(0, 1)


class VolunteerModel(ModelBase):
    """The roster's variables. Built for every solve of a draft (certification, hard-tier
    probes, explanations), so cheaply: each Boolean straight from OR-Tools' ``IntVar`` with
    one shared 0-1 domain (``new_bool_var`` builds a domain per variable), and the
    expressions ``on`` and ``load`` only when a rule asks for them. The model proto is the
    same, variable for variable and constraint for constraint."""

    def __init__(self, data: VolunteerData, with_standby: bool = False) -> None:
        super().__init__()
        self.data = d = data
        self.x: dict[tuple[str, str, str], cp_model.IntVar] = {}
        self.y: dict[tuple[str, str], cp_model.IntVar] = {}
        self._rows: dict[tuple[str, str], list[cp_model.IntVar]] = {}
        self._on: dict[tuple[str, str], Any] = {}
        self._load: dict[str, Any] = {}
        proto, x, rows, at_most_one = self.m.model_proto, self.x, self._rows, self.m.add_at_most_one
        posts = [p.id for p in d.posts]
        for v in d.volunteers:
            for s in d.shifts:
                row = [cp_model.IntVar(proto).with_name(f"x[{v.id},{p},{s.id}]").with_domain(_BOOL) for p in posts]
                for p, b in zip(posts, row):
                    x[v.id, p, s.id] = b
                at_most_one(row)
                rows[v.id, s.id] = row
        if with_standby:
            for s in d.shifts:
                row = [cp_model.IntVar(proto).with_name(f"y[{v.id},{s.id}]").with_domain(_BOOL) for v in d.volunteers]
                self.y.update({(v.id, s.id): b for v, b in zip(d.volunteers, row)})
                self.m.add_exactly_one(row)

    def on(self, v: str, s: str) -> Any:
        """1 when v works some post in shift s."""
        key = (v, s)
        found = self._on.get(key)
        if found is None:
            found = self._on[key] = cp_model.LinearExpr.sum(self._rows[key])
        return found

    def load(self, v: str) -> Any:
        found = self._load.get(v)
        if found is None:
            found = self._load[v] = cp_model.LinearExpr.sum([b for s in self.data.shifts for b in self._rows[v, s.id]])
        return found

    def staff(self, p: str, s: str) -> Any:
        return cp_model.LinearExpr.sum([self.x[v.id, p, s] for v in self.data.volunteers])


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


def _forbid(tm: VolunteerModel, cells: list[cp_model.IntVar], lit: cp_model.IntVar) -> None:
    """None of ``cells`` is 1 (one enforced constraint for the lot)."""
    if cells:
        tm.post(cp_model.LinearExpr.sum(cells) == 0, lit)


@encoder("skill")
def _skill(tm: VolunteerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    cells = [
        tm.x[v.id, post.id, s.id]
        for v in d.volunteers
        for post in d.posts
        if post.skill is not None and post.skill not in v.skills
        for s in d.shifts
    ]
    _forbid(tm, cells, lit)


@encoder("training")
def _training(tm: VolunteerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    cells = [
        tm.x[v.id, post.id, s.id]
        for v in d.volunteers
        for post in d.posts
        if post.training is not None and post.training not in v.trained
        for s in d.shifts
    ]
    _forbid(tm, cells, lit)


@encoder("coverage")
def _coverage(tm: VolunteerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for s in tm.data.shifts:
        for post in tm.data.posts:
            if post.need > 0:
                tm.post(tm.staff(post.id, s.id) >= post.need, lit)


@encoder("peak_cover")
def _peak_cover(tm: VolunteerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for s in tm.data.shifts:
        if s.peak:
            for post in tm.data.posts:
                if post.peak_need is not None and post.peak_need > 0:
                    tm.post(tm.staff(post.id, s.id) >= post.peak_need, lit)


@encoder("availability")
def _availability(tm: VolunteerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    _forbid(tm, [tm.x[v.id, post.id, s] for v in d.volunteers for s in v.unavailable for post in d.posts], lit)


@encoder("shift_cap")
def _shift_cap(tm: VolunteerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for v in tm.data.volunteers:
        if v.max_shifts is not None and v.max_shifts < len(tm.data.shifts):
            tm.post(tm.load(v.id) <= v.max_shifts, lit)


@encoder("minors")
def _minors(tm: VolunteerModel, p: vc.MinorHours, lit: cp_model.IntVar) -> None:
    d = tm.data
    for v in d.volunteers:
        if not v.minor:
            continue
        for s in d.shifts:
            if s.late:
                tm.post(tm.on(v.id, s.id) == 0, lit)
        for day in sorted({s.day for s in d.shifts}):
            mine = [s.id for s in d.shifts if s.day == day]
            if len(mine) > p.max_per_day:
                tm.post(sum(tm.on(v.id, s) for s in mine) <= p.max_per_day, lit)


@encoder("leader_on_site")
def _leader_on_site(tm: VolunteerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    leaders = [v.id for v in tm.data.volunteers if v.leader]
    for s in tm.data.shifts:
        tm.post(sum(tm.on(v, s.id) for v in leaders) >= 1, lit)


@encoder("load_cap")
def _load_cap(tm: VolunteerModel, p: vc.LoadCap, lit: cp_model.IntVar) -> None:
    for v in p.volunteers:
        tm.post(tm.load(v) <= p.max, lit)


@encoder("volunteer_absent")
def _volunteer_absent(tm: VolunteerModel, p: vc.VolunteerAbsent, lit: cp_model.IntVar) -> None:
    for s in p.shifts:
        tm.post(tm.on(p.volunteer, s) == 0, lit)


@encoder("load_balance")
def _load_balance(tm: VolunteerModel, p: vc.LoadBalance, lit: cp_model.IntVar) -> None:
    """Every load within [top - max, top] for one free integer top: such a top exists (the
    largest load) exactly when the largest and smallest loads differ by at most max.
    Both bounds of every load sit behind the rule's literal (the former encoding, a free
    maximum and minimum with only their gap behind the literal, searched far longer).
    Measured in CPU s per pass, first solve + uniqueness proof, the same certificates: 41
    stored default drafts with this rule (seeds 0-7) 1.7 + 2.3 against 10.8 + 5.8; all 173
    stored drafts of seeds 0-7 3.9 + 5.3 against 12.5 + 8.2."""
    n = len(tm.data.shifts)
    top = tm.m.new_int_var(0, n, "load_top")
    for v in tm.data.volunteers:
        tm.post(tm.load(v.id) <= top, lit)
        tm.post(tm.load(v.id) >= top - p.max, lit)


@encoder("rotation")
def _rotation(tm: VolunteerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    x, add = tm.x, tm.m.add  # tm.post's own path for a sum of two literals, without its two calls
    posts = [post.id for post in tm.data.posts]
    for a, b in tm.data.next_pairs:
        for v in tm.data.volunteers:
            for post in posts:
                add(x[v.id, post, a] + x[v.id, post, b] <= 1).only_enforce_if(lit)


@encoder("min_shifts")
def _min_shifts(tm: VolunteerModel, p: vc.MinShifts, lit: cp_model.IntVar) -> None:
    for v in p.volunteers:
        tm.post(tm.load(v) >= p.min, lit)


@encoder("buffer")
def _buffer(tm: VolunteerModel, p: vc.Buffer, lit: cp_model.IntVar) -> None:
    for v in p.volunteers:
        for a, b in tm.data.next_pairs:
            tm.post(tm.on(v, a) + tm.on(v, b) <= 1, lit)


@encoder("rest_after_run")
def _rest_after_run(tm: VolunteerModel, p: vc.RestAfterRun, lit: cp_model.IntVar) -> None:
    """No run + 1 shifts in a row: every window of run + 1 consecutive shifts has one off."""
    ids = [s.id for s in tm.data.shifts]
    for v in tm.data.volunteers:
        for k in range(len(ids) - p.run):
            tm.post(sum(tm.on(v.id, s) for s in ids[k : k + p.run + 1]) <= p.run, lit)


@encoder("late_cooldown")
def _late_cooldown(tm: VolunteerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    shifts = tm.data.shifts
    for a, b in itertools.pairwise(shifts):
        if a.late:
            for v in tm.data.volunteers:
                tm.post(tm.on(v.id, a.id) + tm.on(v.id, b.id) <= 1, lit)


@encoder("standby")
def _standby(tm: VolunteerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """y[b,s]: b is off in s, available, not a minor in a late shift, and able to work
    every post staffed in s (x[u,p,s] + y[b,s] <= 1 for each post b cannot work)."""
    d = tm.data
    for s in d.shifts:
        for b in d.volunteers:
            y = tm.y[b.id, s.id]
            if s.id in b.unavailable or (s.late and b.minor):
                tm.post(y == 0, lit)
            tm.post(y + tm.on(b.id, s.id) <= 1, lit)
            for post in d.posts:
                if not can_work(b, post):
                    for u in d.volunteers:
                        tm.post(y + tm.x[u.id, post.id, s.id] <= 1, lit)


def _objective(tm: VolunteerModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    cells = len(d.volunteers) * len(d.shifts)
    xs = list(tm.x.values())
    if term.kind == "volunteer_shifts":
        return cp_model.LinearExpr.sum(xs), cells
    if term.kind == "preference":
        prefs = {v.id: v.prefs for v in d.volunteers}
        return cp_model.LinearExpr.weighted_sum(xs, [prefs[v][p] for v, p, _ in tm.x]), cells * MAX_PREFERENCE
    if term.kind == "order_score":
        # t * (10 k + j)^2: not a sum of a volunteer-shift part and a volunteer-post part,
        # so swapping posts between two volunteers across shifts changes it
        kn, jn, tn = d.numbers
        c = vc.ORDER_CODE
        expr = cp_model.LinearExpr.weighted_sum(xs, [tn[s] * (c * kn[v] + jn[p]) ** 2 for v, p, s in tm.x])
        ub = sum(tn[s.id] * (c * kn[v.id] + len(d.posts)) ** 2 for v in d.volunteers for s in d.shifts)
        return expr, ub
    if term.kind == "standby_score":
        kn = d.numbers[0]
        ys = list(tm.y.values())
        return cp_model.LinearExpr.weighted_sum(ys, [kn[v] for v, _ in tm.y]), len(d.volunteers) * len(d.shifts)
    if term.kind == "changes":
        old = {(v, s): p for v, p, s in vc.CurrentRoster.model_validate(term.params).existing}
        kept = []
        for v in d.volunteers:
            for s in d.shifts:
                post = old.get((v.id, s.id))
                kept.append(tm.x[v.id, post, s.id] if post is not None else 1 - tm.on(v.id, s.id))
        return cells - sum(kept), cells
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = VolunteerData.model_validate(draft.data)
    tm = VolunteerModel(data, with_standby=any(r.kind == "standby" for r in draft.rules))

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        rows = []
        for s in data.shifts:
            for v in data.volunteers:
                for p in data.posts:
                    if solver.value(tm.x[v.id, p.id, s.id]):
                        rows.append({"volunteer": v.id, "shift": s.id, "post": p.id})
            if tm.y:
                b = next(v.id for v in data.volunteers if solver.value(tm.y[v.id, s.id]))
                rows.append({"volunteer": b, "shift": s.id, "post": vc.STANDBY})
        return {"roster": rows}

    answer = [*tm.x.values(), *tm.y.values()]
    sm = solver_model(
        tm, draft, ENCODERS, vc.RULE_PARAMS, _objective, decode, answer, [],
        parameters=PARAMETERS, uniqueness_parameters=UNIQUENESS_PARAMETERS,
    )  # fmt: skip
    sm.uniqueness_hint = True  # see UNIQUENESS_PARAMETERS
    sm.uniqueness_lean_cut = UNIQUENESS_LEAN_CUT
    return sm


# -- sampling --------------------------------------------------------------------------
Witness = dict[tuple[str, str], str]  # (volunteer, shift) -> post


def _shifts(ctx: Context, st: VolunteerSizes, rng: random.Random) -> list[Shift]:
    days = ctx.days[: st.days]
    n = min(st.shifts_per_day, len(ctx.shifts))
    picked = sorted(rng.sample(range(len(ctx.shifts)), n))
    return [
        Shift(id=f"{day} {ctx.shifts[k][0]}", day=i, peak=ctx.shifts[k][1], late=ctx.shifts[k][2])
        for i, day in enumerate(days)
        for k in picked
    ]


def _posts(ctx: Context, st: VolunteerSizes, rng: random.Random, kinds: set[str]) -> list[Post]:
    """The first post (no skill) and a random rest; peak needs one more at some posts."""
    chosen = [0, *sorted(rng.sample(range(1, len(ctx.posts)), min(st.posts, len(ctx.posts)) - 1))]
    out = []
    for k in chosen:
        name, skill, training = ctx.posts[k]
        need = st.need.draw(rng)
        peak = need + (1 if rng.random() < 0.6 else 0) if "peak_cover" in kinds else None
        out.append(
            Post(id=name, skill=skill, training=training if "training" in kinds else None, need=need, peak_need=peak)
        )
    return out


def _volunteers(names: list[str], posts: list[Post], rng: random.Random) -> list[Volunteer]:
    """Each skill and training held by at least two volunteers (a third of them at most
    when there are many), others at random; preferences 0-3 per post."""
    skills = sorted({p.skill for p in posts if p.skill is not None})
    trainings = sorted({p.training for p in posts if p.training is not None})
    has: dict[str, set[str]] = {n: set() for n in names}
    done: dict[str, set[str]] = {n: set() for n in names}
    for table, items in ((has, skills), (done, trainings)):
        for item in items:
            for n in rng.sample(names, min(len(names), max(3, len(names) // 3 + 1))):
                table[n].add(item)
            for n in names:
                if rng.random() < 0.15:
                    table[n].add(item)
    return [
        Volunteer(
            id=n,
            skills=tuple(x for x in skills if x in has[n]),
            trained=tuple(x for x in trainings if x in done[n]),
            prefs={p.id: rng.randint(0, MAX_PREFERENCE) for p in posts},
        )
        for n in names
    ]


def _witness(d: VolunteerData, kinds: set[str], rng: random.Random) -> Witness:
    """A roster staffing every post exactly to its need (its peak need in peak shifts),
    preferring volunteers that keep rotation, cool-down, rest and balance."""
    plan: Witness = {}
    loads = {v.id: 0 for v in d.volunteers}
    peak = "peak_cover" in kinds
    capable = {p.id: sum(1 for v in d.volunteers if can_work(v, p)) for p in d.posts}
    scarce = {
        v.id: sum(1 for p in d.posts if can_work(v, p) and capable[p.id] < len(d.volunteers)) for v in d.volunteers
    }
    for i, s in enumerate(d.shifts):
        prev = d.shifts[i - 1] if i else None
        posts = list(d.posts)
        rng.shuffle(posts)
        posts.sort(key=lambda p: capable[p.id])  # the posts fewest can work first
        for post in posts:
            for _ in range(d.required(post, s, peak)):
                free = [v for v in d.volunteers if (v.id, s.id) not in plan and can_work(v, post)]
                if not free:
                    raise NoDraft("witness")

                def cost(
                    v: Volunteer, post: Post = post, prev: Shift | None = prev, s: Shift = s, i: int = i
                ) -> tuple[int, float]:
                    same = prev is not None and prev.day == s.day and plan.get((v.id, prev.id)) == post.id
                    after_late = prev is not None and prev.late and (v.id, prev.id) in plan
                    run = _run_before(d, plan, v.id, i)
                    spare = scarce[v.id] if capable[post.id] == len(d.volunteers) else 0
                    return (20 * same + 20 * after_late + 4 * (run >= 2) + 2 * loads[v.id] + spare, rng.random())

                best = min(free, key=cost)
                plan[best.id, s.id] = post.id
                loads[best.id] += 1
    return plan


def _run_before(d: VolunteerData, plan: Witness, v: str, i: int) -> int:
    run = 0
    for s in reversed(d.shifts[:i]):
        if (v, s.id) not in plan:
            break
        run += 1
    return run


def _shape(d: VolunteerData, w: Witness, kinds: set[str], rng: random.Random) -> VolunteerData:
    """The data the structural rules read, drawn so the witness keeps them: unavailable
    shifts, shift caps, minors and team leaders (each only when its rule is sampled)."""
    vols = list(d.volunteers)
    shifts_of = {v.id: [s for s in d.shifts if (v.id, s.id) in w] for v in vols}
    if "availability" in kinds:
        for k, v in enumerate(vols):
            free = [s.id for s in d.shifts if s not in shifts_of[v.id]]
            off = sorted(rng.sample(free, min(len(free), rng.randint(0, 2))), key=d.shift_index.__getitem__)
            vols[k] = v.model_copy(update={"unavailable": tuple(off)})
    if "shift_cap" in kinds:
        for k, v in enumerate(vols):
            vols[k] = v.model_copy(update={"max_shifts": max(1, len(shifts_of[v.id]) + rng.randint(0, 1))})
    if "minors" in kinds:
        options = [k for k, v in enumerate(vols) if not any(s.late for s in shifts_of[v.id])]
        if not options:
            raise NoDraft("minors")
        for k in rng.sample(options, min(len(options), rng.randint(1, 2))):
            vols[k] = vols[k].model_copy(update={"minor": True})
    if "leader_on_site" in kinds:
        leaders: set[str] = set()
        for s in d.shifts:
            on = [v.id for v in vols if (v.id, s.id) in w]
            if not on:
                raise NoDraft("leader_on_site")
            if not leaders & set(on):
                leaders.add(rng.choice(on))
        vols = [v.model_copy(update={"leader": v.id in leaders}) for v in vols]
    return d.model_copy(update={"volunteers": tuple(vols)})


def _entities(spec: GenerationSpec, kinds: set[str], rng: random.Random) -> tuple[VolunteerData, Witness]:
    st = SIZES.of(spec.size)
    ctx = CONTEXTS[spec.subtask]
    shifts = _shifts(ctx, st, rng)
    posts = _posts(ctx, st, rng, kinds)
    names = rng.sample(PEOPLE, st.volunteers)
    data = VolunteerData(shifts=tuple(shifts), posts=tuple(posts), volunteers=tuple(_volunteers(names, posts, rng)))
    witness = _witness(data, kinds, rng)
    return _shape(data, witness, kinds, rng), witness


def _loads(d: VolunteerData, w: Witness) -> dict[str, int]:
    return {v.id: sum(1 for vv, _ in w if vv == v.id) for v in d.volunteers}


def _pick(options: list[str], d: VolunteerData, rng: random.Random) -> list[str]:
    order = [v.id for v in d.volunteers]
    return sorted(rng.sample(options, min(len(options), rng.randint(1, 2))), key=order.index)


def _b_minors(d: VolunteerData, w: Witness, rng: random.Random) -> vc.MinorHours | None:
    per_day = [
        sum(1 for s in d.shifts if s.day == day and (v.id, s.id) in w)
        for v in d.volunteers
        if v.minor
        for day in {s.day for s in d.shifts}
    ]
    return vc.MinorHours(max_per_day=max(1, *per_day)) if per_day else None


def _b_load_cap(d: VolunteerData, w: Witness, rng: random.Random) -> vc.LoadCap | None:
    loads = _loads(d, w)
    options = [v for v, n in loads.items() if 1 <= n < len(d.shifts)]
    if not options:
        return None
    chosen = _pick(options, d, rng)
    return vc.LoadCap(volunteers=chosen, max=max(loads[v] for v in chosen))


def _b_load_balance(d: VolunteerData, w: Witness, rng: random.Random) -> vc.LoadBalance | None:
    loads = _loads(d, w).values()
    return vc.LoadBalance(max=max(loads) - min(loads) + rng.randint(0, 1))


def _b_min_shifts(d: VolunteerData, w: Witness, rng: random.Random) -> vc.MinShifts | None:
    loads = _loads(d, w)
    options = [v for v, n in loads.items() if n >= 1]
    if not options:
        return None
    chosen = _pick(options, d, rng)
    return vc.MinShifts(volunteers=chosen, min=min(loads[v] for v in chosen))


def _b_buffer(d: VolunteerData, w: Witness, rng: random.Random) -> vc.Buffer | None:
    options = [
        v.id
        for v in d.volunteers
        if any((v.id, s.id) in w for s in d.shifts)
        and not any((v.id, a) in w and (v.id, b) in w for a, b in d.next_pairs)
    ]
    return vc.Buffer(volunteers=_pick(options, d, rng)) if options and d.next_pairs else None


def _b_rotation(d: VolunteerData, w: Witness, rng: random.Random) -> NoParams | None:
    broken = any(w.get((v.id, a)) is not None and w.get((v.id, a)) == w.get((v.id, b)) for v in d.volunteers for a, b in d.next_pairs)  # fmt: skip
    return None if broken or not d.next_pairs else NoParams()


def _b_rest_after_run(d: VolunteerData, w: Witness, rng: random.Random) -> vc.RestAfterRun | None:
    longest = max(_run_before(d, w, v.id, i) for v in d.volunteers for i in range(len(d.shifts) + 1))
    return vc.RestAfterRun(run=longest) if 1 <= longest < len(d.shifts) else None


def _b_late_cooldown(d: VolunteerData, w: Witness, rng: random.Random) -> NoParams | None:
    pairs = [(a.id, b.id) for a, b in zip(d.shifts, d.shifts[1:]) if a.late]
    if not pairs or any((v.id, a) in w and (v.id, b) in w for v in d.volunteers for a, b in pairs):
        return None
    return NoParams()


def _b_training(d: VolunteerData, w: Witness, rng: random.Random) -> NoParams | None:
    """Only when some post needs a training (else the rule would say nothing)."""
    return NoParams() if any(p.training is not None for p in d.posts) else None


def _b_peak_cover(d: VolunteerData, w: Witness, rng: random.Random) -> NoParams | None:
    """Only when a peak shift asks some post for more than its usual need."""
    more = any(p.peak_need is not None and p.peak_need > p.need for p in d.posts)
    return NoParams() if more and any(s.peak for s in d.shifts) else None


BUILDERS = {
    "training": _b_training,
    "peak_cover": _b_peak_cover,
    "minors": _b_minors,
    "load_cap": _b_load_cap,
    "load_balance": _b_load_balance,
    "min_shifts": _b_min_shifts,
    "buffer": _b_buffer,
    "rotation": _b_rotation,
    "rest_after_run": _b_rest_after_run,
    "late_cooldown": _b_late_cooldown,
}
STRUCTURAL = ("availability", "shift_cap", "leader_on_site")


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    sampled = sampled_kinds(spec, TASK.base_rules)
    for kind in CONTEXTS[spec.subtask].forced:
        if kind not in sampled:
            sampled.insert(0, kind)  # the subtask's structure carries it
    data, witness = _entities(spec, set(sampled), rng)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng, structural=STRUCTURAL)
    objective = [
        ObjectiveTerm(id="volunteer_shifts", kind="volunteer_shifts"),
        ObjectiveTerm(id="preference", kind="preference"),
        ObjectiveTerm(id="order_score", kind="order_score"),
    ]
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective)


# -- hard-tier hooks -------------------------------------------------------------------
def _rows(plan: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(volunteer, post, shift) of every working row of a decoded plan (standbys left out)."""
    return [(r["volunteer"], r["post"], r["shift"]) for r in plan["roster"] if r["post"] != vc.STANDBY]


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A shift cap on one or two volunteers (preferably sharing a skill) just below the
    least they must work, found by bisection (a lower cap only removes rosters)."""
    d = VolunteerData.model_validate(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731

    def with_cap(volunteers: list[str], most: int) -> Draft:
        return with_conflict_rule(draft_, "load_cap", vc.LoadCap(volunteers=volunteers, max=most), position)

    names = [v.id for v in d.volunteers]
    pairs = [
        [a.id, b.id] for i, a in enumerate(d.volunteers) for b in d.volunteers[i + 1 :] if set(a.skills) & set(b.skills)
    ]
    rng.shuffle(pairs)
    singles = [[n] for n in names]
    rng.shuffle(singles)
    for volunteers in (pairs[:3] + singles)[:5]:
        found = first_infeasible(range(len(d.shifts), -1, -1), lambda k: with_cap(volunteers, k), feasible)  # noqa: B023 - called within this iteration
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A volunteer drops out of one shift they work."""
    out = [
        make_rule("volunteer_absent", "hard", vc.VolunteerAbsent(volunteer=v, shifts=[s])) for v, _, s in _rows(plan)
    ]
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> list[list[str]]:
    return [[v, p, s] for v, p, s in _rows(plan)]


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    return make_rule("standby", "hard", NoParams()), [ObjectiveTerm(id="standby_score", kind="standby_score")]


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Posts' needs (worst: high) and, under a shift cap, volunteers' caps (worst: low)."""
    d = VolunteerData.model_validate(draft_.data)
    out = [Uncertain(id="", kind="need", target=p.id, low=p.need, high=p.need + rng.randint(1, 2)) for p in d.posts]
    if any(r.kind == "shift_cap" for r in draft_.rules):
        for v in d.volunteers:
            if v.max_shifts is not None and v.max_shifts > 1:
                out.append(
                    Uncertain(
                        id="", kind="max_shifts", target=v.id, low=max(1, v.max_shifts - rng.randint(1, 2)),
                        high=v.max_shifts,
                    )
                )  # fmt: skip
    rng.shuffle(out)
    return out[:UNCERTAIN_PROBES]


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = VolunteerData.model_validate(data)
    if u.kind == "max_shifts":
        vols = tuple(v.model_copy(update={"max_shifts": value}) if v.id == u.target else v for v in d.volunteers)
        return {**data, "volunteers": [v.model_dump(mode="json") for v in vols]}
    posts = tuple(p.model_copy(update={"need": value}) if p.id == u.target else p for p in d.posts)
    return {**data, "posts": [p.model_dump(mode="json") for p in posts]}


def worst_is_low(u: Uncertain) -> bool:
    return u.kind == "max_shifts"


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = VolunteerData.model_validate(draft_.data)
    rows = _rows(plan)
    return {
        "shifts": {v.id: sum(1 for vv, _, _ in rows if vv == v.id) for v in d.volunteers},
        "staffed": {p.id: sum(1 for _, pp, _ in rows if pp == p.id) for p in d.posts},
    }


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
