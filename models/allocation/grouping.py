"""Student Grouping: split a class into a fixed number of unlabelled groups.

Decision: x[s,g] = 1 when student s is in group g. The answer is a set partition, and
group labels are interchangeable: the model declares that symmetry to the certifier
(:class:`pbsolve.family.Symmetry`: the canonical labelling numbers groups by their
first-listed student) and breaks it itself (student 1 is in group 1; a student can open
group g only if group g-1 already holds an earlier student), so every partition has
exactly one labelling, a no-good cut on x excludes exactly one partition, and the
certifier checks every plan it finds is canonical. ``build(draft, break_symmetry=False)``
leaves the labels free and lets the certifier cut every relabelling instead (the same
certificates; tests hold the two equal).

The last objective term, the grouping code (each student's group number, in list order,
read as one decimal number), is not a label tie-break but a tie-break between distinct
partitions: without it, 10 of 30 small and 13 of 30 default-size drafts have several
optimal partitions (measured with label symmetry broken). It is injective over
partitions, so every optimum is unique and the stated tie-break says which one: the
earliest grouping in list order.
"""

from __future__ import annotations

import random
from itertools import combinations, permutations
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt, model_validator

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.allocation import rule_params as rp
from pbsolve.checkers.allocation.data import GroupingData, Student
from pbsolve.family import Draft, SolverModel, Symmetry
from pbsolve.kit import KindRegistry, Settings, SizeTable, Uncertain, insert_position, sampled_kinds, witness_rules
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
    id="student_grouping",
    name="Student Grouping",
    family="allocation",
    summary="split a class into balanced groups under size, compatibility and diversity rules",
    subtasks=(
        SubtaskSpec("project_teams", "Project teams", "semester project teams mixing study tracks"),
        SubtaskSpec("lab_partners", "Lab partners", "small lab groups with a safety lead in each"),
        SubtaskSpec("study_groups", "Study groups", "peer study groups that honour friendship wishes"),
        SubtaskSpec("sports_teams", "Sports teams", "balanced teams for a school tournament"),
        SubtaskSpec(
            "hackathon_teams", "Hackathon teams", "hackathon teams in which every team has a student in each role"
        ),
    ),
    pool=(
        ConstraintSpec("group_size", "basic", "every group has between a lower and an upper number of students"),
        ConstraintSpec("apart", "basic", "named pairs of students are in different groups"),
        ConstraintSpec("together", "basic", "named pairs of students are in the same group"),
        ConstraintSpec("leader_floor", "basic", "every group has a student with enough leadership"),
        ConstraintSpec("track_cap", "basic", "at most so many students of one track in a group"),
        ConstraintSpec("skill_floor", "basic", "every group's skill total reaches a floor"),
        ConstraintSpec("skill_balance", "medium", "fairness: group skill totals within a stated gap"),
        ConstraintSpec("diversity", "medium", "every group mixes at least so many tracks"),
        ConstraintSpec("no_isolation", "medium", "no student is the only one of their track in their group"),
        ConstraintSpec(
            "wish_guarantee", "medium", "minimum guarantee: named students get at least one of their wishes"
        ),
        ConstraintSpec("mentor", "medium", "every newcomer shares a group with an experienced mentor"),
        *mechanism_pool(
            "every group keeps a leader if any one student drops out", incompleteness_requires=("leader_floor",)
        ),
    ),
    base_rules=("group_size",),
)

NAMES = (
    "Ada", "Bo", "Cyd", "Dev", "Eva", "Finn", "Gia", "Hugo", "Ines", "Jon", "Kai", "Lea", "Milo", "Nia", "Otto",
    "Pam", "Raj", "Sol", "Tia", "Ugo", "Vera", "Wes", "Xena", "Yuri", "Zoe", "Abe", "Bea", "Cal", "Dot", "Eli",
)  # fmt: skip
TRACKS = {
    "project_teams": ("Design", "Engineering", "Business"),
    "lab_partners": ("Biology", "Chemistry", "Physics"),
    "study_groups": ("Maths", "History", "Languages"),
    "sports_teams": ("Defence", "Midfield", "Attack"),
    "hackathon_teams": ("Designer", "Developer", "Presenter", "Tester"),  # roles
}
# tracks are roles: every witness group has one student of each role, and the diversity
# rule (always drawn) asks every group for all of them
ROLES = "hackathon_teams"


class GroupingSizes(Settings):
    """How big a student-grouping instance is (students = groups x per group)."""

    groups: int = Field(ge=2, description="groups to form")
    per_group: PositiveInt = Field(description="students in each group")

    @model_validator(mode="after")
    def _enough_names(self) -> GroupingSizes:
        if (self.groups + 1) * self.per_group > len(NAMES):  # + 1: see GROUPS_OF
            raise ValueError(f"{self.groups} + 1 groups of {self.per_group} need more than {len(NAMES)} names")
        return self


SIZES = SizeTable[GroupingSizes](
    tiny=GroupingSizes(groups=2, per_group=3),
    small=GroupingSizes(groups=3, per_group=3),
    default=GroupingSizes(groups=3, per_group=4),
    large=GroupingSizes(groups=4, per_group=4),
)
GROUPS_OF = {"lab_partners": 3}  # lab groups stay small: more of them (one more group at default size)
PROBE_TIME = 2.0
# Every solve without the LP relaxation: the model is pure 0-1 propagation (exactly-one
# rows, small cardinalities) and the grouping code's coefficients (up to 10^11) only make
# the LP slow. The uniqueness re-optimisation also without presolve. Measured on 79
# certified drafts (default seeds 0-2 and small seed 0): 2.2 against 5.5 CPU s for both
# optimisations, the same certificates (every optimum is unique: the code is injective).
PARAMETERS = {"linearization_level": 0}
UNIQUENESS_PARAMETERS = {"cp_model_presolve": False}


# -- the CP-SAT model ------------------------------------------------------------------
class GroupingModel(ModelBase):
    def __init__(self, data: GroupingData, break_symmetry: bool = True) -> None:
        super().__init__()
        self.data = d = data
        n, k = len(d.students), d.groups
        self.x = [[self.m.new_bool_var(f"x[{s.id},{g}]") for g in range(k)] for s in d.students]
        for i in range(n):
            self.m.add_exactly_one(self.x[i])
        for g in range(k):
            self.m.add(sum(self.x[i][g] for i in range(n)) >= 1)  # no empty group
        if break_symmetry:  # canonical labelling: groups numbered by their first-listed student
            self.m.add(self.x[0][0] == 1)
            for g in range(1, k):
                for i in range(n):
                    if g > i:
                        self.m.add(self.x[i][g] == 0)
                    else:
                        self.m.add(self.x[i][g] <= sum(self.x[j][g - 1] for j in range(i)))
        self._same: dict[tuple[int, int], cp_model.LinearExpr | int] = {}
        self.pos = d.position

    def members(self, g: int, who: list[int] | None = None) -> cp_model.LinearExprT:
        idx = range(len(self.data.students)) if who is None else who
        return sum(self.x[i][g] for i in idx)

    def total(self, g: int) -> cp_model.LinearExpr | int:
        return sum(s.skill * self.x[i][g] for i, s in enumerate(self.data.students))

    def same(self, a: str, b: str) -> cp_model.LinearExpr | int:
        """1 exactly when a and b share a group."""
        i, j = sorted((self.pos[a], self.pos[b]))
        if (i, j) not in self._same:
            self._same[i, j] = sum(
                self.both(self.x[i][g], self.x[j][g], f"z[{i},{j},{g}]") for g in range(self.data.groups)
            )
        return self._same[i, j]

    def indices(self, pred: Any) -> list[int]:
        return [i for i, s in enumerate(self.data.students) if pred(s)]


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("group_size")
def _group_size(tm: GroupingModel, p: rp.GroupSize, lit: cp_model.IntVar) -> None:
    for g in range(tm.data.groups):
        tm.post(tm.members(g) >= p.min, lit)
        tm.post(tm.members(g) <= p.max, lit)


@encoder("apart")
def _apart(tm: GroupingModel, p: rp.Apart, lit: cp_model.IntVar) -> None:
    for a, b in p.pairs:
        for g in range(tm.data.groups):
            tm.post(tm.x[tm.pos[a]][g] + tm.x[tm.pos[b]][g] <= 1, lit)


@encoder("together")
def _together(tm: GroupingModel, p: rp.Together, lit: cp_model.IntVar) -> None:
    for a, b in p.pairs:
        for g in range(tm.data.groups):
            tm.post(tm.x[tm.pos[a]][g] == tm.x[tm.pos[b]][g], lit)


@encoder("leader_floor")
def _leader_floor(tm: GroupingModel, p: rp.LeaderFloor, lit: cp_model.IntVar) -> None:
    leaders = tm.indices(lambda s: s.leadership >= p.level)
    for g in range(tm.data.groups):
        tm.post(tm.members(g, leaders) >= 1, lit)


@encoder("track_cap")
def _track_cap(tm: GroupingModel, p: rp.TrackCap, lit: cp_model.IntVar) -> None:
    for track in tm.data.tracks:
        who = tm.indices(lambda s: s.track == track)  # noqa: B023 - called within this iteration
        if len(who) > p.max:
            for g in range(tm.data.groups):
                tm.post(tm.members(g, who) <= p.max, lit)


@encoder("skill_floor")
def _skill_floor(tm: GroupingModel, p: rp.SkillFloor, lit: cp_model.IntVar) -> None:
    for g in range(tm.data.groups):
        tm.post(tm.total(g) >= p.min, lit)


@encoder("skill_balance")
def _skill_balance(tm: GroupingModel, p: rp.SkillBalance, lit: cp_model.IntVar) -> None:
    for g in range(tm.data.groups):
        for h in range(tm.data.groups):
            if g != h:
                tm.post(tm.total(g) - tm.total(h) <= p.max, lit)


@encoder("diversity")
def _diversity(tm: GroupingModel, p: rp.Diversity, lit: cp_model.IntVar) -> None:
    for g in range(tm.data.groups):
        flags = []
        for track in tm.data.tracks:
            has = tm.m.new_bool_var(f"has[{g},{track}]")
            tm.m.add(has <= tm.members(g, tm.indices(lambda s, t=track: s.track == t)))
            flags.append(has)
        tm.post(sum(flags) >= p.min, lit)


@encoder("no_isolation")
def _no_isolation(tm: GroupingModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for track in tm.data.tracks:
        who = tm.indices(lambda s, t=track: s.track == t)
        for g in range(tm.data.groups):
            for i in who:
                tm.post(tm.members(g, who) >= 2 * tm.x[i][g], lit)


@encoder("wish_guarantee")
def _wish_guarantee(tm: GroupingModel, p: rp.WishGuarantee, lit: cp_model.IntVar) -> None:
    for s in p.students:
        tm.post(sum(tm.same(s, w) for w in tm.data.student_by_id[s].wishes) >= 1, lit)


@encoder("mentor")
def _mentor(tm: GroupingModel, p: rp.Mentor, lit: cp_model.IntVar) -> None:
    mentors = tm.indices(lambda s: not s.newcomer and s.leadership >= p.level)
    for i in tm.indices(lambda s: s.newcomer):
        for g in range(tm.data.groups):
            tm.post(tm.x[i][g] <= tm.members(g, mentors), lit)


@encoder("dropout_robust")
def _dropout_robust(tm: GroupingModel, p: rp.DropoutRobust, lit: cp_model.IntVar) -> None:
    leaders = tm.indices(lambda s: s.leadership >= p.level)
    for g in range(tm.data.groups):
        tm.post(tm.members(g, leaders) >= 2, lit)


def code_weights(d: GroupingData) -> list[int]:
    n = len(d.students)
    return [10 ** (n - 1 - i) for i in range(n)]


def _objective(tm: GroupingModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    n, k = len(d.students), d.groups
    if term.kind == "unmet_wishes":
        return len(d.wish_pairs) - sum(tm.same(a, b) for a, b in d.wish_pairs), len(d.wish_pairs)
    if term.kind == "skill_spread":
        top = sum(s.skill for s in d.students)
        hi, lo = tm.m.new_int_var(0, top, "hi"), tm.m.new_int_var(0, top, "lo")
        tm.m.add_max_equality(hi, [tm.total(g) for g in range(k)])
        tm.m.add_min_equality(lo, [tm.total(g) for g in range(k)])
        return hi - lo, top
    if term.kind == "grouping_code":
        w = code_weights(d)
        expr = sum(w[i] * (g + 1) * tm.x[i][g] for i in range(n) for g in range(k))
        return expr, sum(w[i] * min(i + 1, k) for i in range(n))
    if term.kind == "changes":
        old = {}
        for grp in rp.current_plan(TASK.id, term):
            for s in grp:
                old[s] = tuple(grp)
        changes: cp_model.LinearExpr | int = 0
        for a, b in combinations([s.id for s in d.students], 2):
            together = b in old[a]
            changes = changes + ((1 - tm.same(a, b)) if together else tm.same(a, b))
        return changes, n * (n - 1) // 2
    raise ValueError(f"unknown objective kind {term.kind!r}")


def relabel(values: list[int], k: int, order: list[int] | None = None) -> list[int]:
    """The x values (row-major, k groups a student) with group labels renamed: by
    ``order`` (old label -> new label), or by default canonically, each group numbered
    by its first-listed student."""
    rows = [values[i : i + k] for i in range(0, len(values), k)]
    labels = [row.index(1) for row in rows]
    if order is None:
        first = list(dict.fromkeys(labels))
        order = [first.index(g) if g in first else g for g in range(k)]
    return [int(order[g] == h) for g in labels for h in range(k)]


def symmetry(k: int, in_model: bool) -> Symmetry:
    """Group labels are interchangeable: all k! relabellings state one partition."""
    return Symmetry(
        canonical=lambda v: relabel(v, k),
        images=lambda v: [relabel(v, k, list(p)) for p in permutations(range(k))],
        in_model=in_model,
    )


def build(draft: Draft, break_symmetry: bool = True) -> SolverModel:
    data = GroupingData.model_validate(draft.data)
    tm = GroupingModel(data, break_symmetry)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        groups = [[s.id for i, s in enumerate(data.students) if solver.value(tm.x[i][g])] for g in range(data.groups)]
        return {"groups": sorted(groups, key=lambda grp: data.position[grp[0]])}  # canonical order

    answer = [v for row in tm.x for v in row]
    sm = solver_model(
        tm,
        draft,
        ENCODERS,
        rp.RULE_PARAMS[TASK.id],
        _objective,
        decode,
        answer,
        [],
        PARAMETERS,
        UNIQUENESS_PARAMETERS,
    )
    sm.symmetry = symmetry(data.groups, in_model=break_symmetry)
    return sm


# -- sampling --------------------------------------------------------------------------
Witness = list[list[str]]


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[GroupingData, Witness]:
    settings = SIZES.of(spec.size)
    k, per = settings.groups, settings.per_group
    if spec.subtask in GROUPS_OF and spec.size == "default":
        k, per = k + 1, GROUPS_OF[spec.subtask]
    n = k * per
    names = rng.sample(NAMES, n)
    tracks = TRACKS[spec.subtask]
    # the witness partition comes first; attributes are drawn around it
    order = list(range(n))
    rng.shuffle(order)
    witness_idx = [order[g * per : (g + 1) * per] for g in range(k)]
    track_of: dict[int, str] = {}
    if spec.subtask == ROLES:  # every witness group has each role once (and extra members any role)
        roles = rng.sample(tracks, min(per, len(tracks)))
        for grp in witness_idx:
            for i, t in zip(grp, [*roles, *(rng.choice(roles) for _ in range(per - len(roles)))]):
                track_of[i] = t
    else:
        paired = rng.random() < 0.6
        for grp in witness_idx:
            if paired and per >= 2:  # tracks come in pairs inside a witness group
                pool = list(grp)
                while pool:
                    t = rng.choice(tracks)
                    take = pool[:2] if len(pool) != 3 else pool
                    for i in take:
                        track_of[i] = t
                    pool = pool[len(take) :]
            else:
                for i in grp:
                    track_of[i] = rng.choice(tracks)
    students = []
    group_of = {i: g for g, grp in enumerate(witness_idx) for i in grp}
    for i in range(n):
        mates = [j for j in witness_idx[group_of[i]] if j != i]
        others = [j for j in range(n) if j != i and j not in mates]
        wishes: list[int] = []
        for _ in range(rng.choice((0, 1, 1, 2))):
            pool = mates if (mates and rng.random() < 0.5) else others
            pool = [j for j in pool if j not in wishes]
            if pool:
                wishes.append(rng.choice(pool))
        students.append(
            Student(
                id=names[i], skill=rng.randint(1, 5), track=track_of[i], leadership=rng.choice((0, 0, 1, 1, 2, 3)),
                newcomer=rng.random() < 0.2, wishes=tuple(names[j] for j in sorted(wishes)),
            )
        )  # fmt: skip
    # every witness group has an experienced student (a mentor and a leader for it)
    for grp in witness_idx:
        if not any(not students[i].newcomer and students[i].leadership >= 2 for i in grp):
            i = rng.choice(grp)
            students[i] = students[i].model_copy(update={"newcomer": False, "leadership": rng.randint(2, 3)})
    data = GroupingData(students=tuple(students), groups=k)
    return data, [[names[i] for i in sorted(grp)] for grp in witness_idx]


def _totals(d: GroupingData, w: Witness) -> list[int]:
    return [sum(d.student_by_id[s].skill for s in grp) for grp in w]


def _b_apart(d: GroupingData, w: Witness, rng: random.Random) -> rp.Apart | None:
    where = {s: g for g, grp in enumerate(w) for s in grp}
    pairs = [(a.id, b.id) for a, b in combinations(d.students, 2) if where[a.id] != where[b.id]]
    chosen = sorted(
        rng.sample(pairs, min(len(pairs), rng.randint(1, 2))), key=lambda p: (d.position[p[0]], d.position[p[1]])
    )
    return rp.Apart(pairs=chosen) if chosen else None


def _b_together(d: GroupingData, w: Witness, rng: random.Random) -> rp.Together | None:
    """One or two pairs of witness group-mates, or a star: one student and up to all
    their witness group-mates (so long pair lists occur in feasible instances too)."""
    where = {s: g for g, grp in enumerate(w) for s in grp}
    pairs = [(a.id, b.id) for a, b in combinations(d.students, 2) if where[a.id] == where[b.id]]
    if not pairs:
        return None
    if rng.random() < 0.5:
        chosen = rng.sample(pairs, min(len(pairs), rng.randint(1, 2)))
    else:
        grp = rng.choice([g for g in w if len(g) >= 2])
        a = rng.choice(grp)
        mates = rng.sample([b for b in grp if b != a], rng.randint(1, len(grp) - 1))
        chosen = [(a, b) if d.position[a] <= d.position[b] else (b, a) for b in mates]  # each pair in roster order
    chosen = sorted(chosen, key=lambda p: (d.position[p[0]], d.position[p[1]]))
    return rp.Together(pairs=chosen)


def _b_leader_floor(d: GroupingData, w: Witness, rng: random.Random) -> rp.LeaderFloor | None:
    level = min(max(d.student_by_id[s].leadership for s in grp) for grp in w)
    return rp.LeaderFloor(level=level) if level >= 1 else None


def _b_track_cap(d: GroupingData, w: Witness, rng: random.Random) -> rp.TrackCap | None:
    most = max(sum(1 for s in grp if d.student_by_id[s].track == t) for grp in w for t in d.tracks)
    return rp.TrackCap(max=most) if most < len(w[0]) else None


def _b_skill_floor(d: GroupingData, w: Witness, rng: random.Random) -> rp.SkillFloor | None:
    return rp.SkillFloor(min=max(1, min(_totals(d, w)) - rng.randint(0, 2)))


def _b_skill_balance(d: GroupingData, w: Witness, rng: random.Random) -> rp.SkillBalance | None:
    t = _totals(d, w)
    return rp.SkillBalance(max=max(t) - min(t) + rng.randint(0, 2))


def _b_diversity(d: GroupingData, w: Witness, rng: random.Random) -> rp.Diversity | None:
    least = min(len({d.student_by_id[s].track for s in grp}) for grp in w)
    return rp.Diversity(min=least) if least >= 2 else None


def _b_no_isolation(d: GroupingData, w: Witness, rng: random.Random) -> NoParams | None:
    for grp in w:
        tracks = [d.student_by_id[s].track for s in grp]
        if any(tracks.count(t) == 1 for t in tracks):
            return None
    return NoParams()


def _b_wish_guarantee(d: GroupingData, w: Witness, rng: random.Random) -> rp.WishGuarantee | None:
    where = {s: g for g, grp in enumerate(w) for s in grp}
    granted = [s.id for s in d.students if any(where[x] == where[s.id] for x in s.wishes)]
    if not granted:
        return None
    chosen = rng.sample(granted, min(len(granted), rng.randint(1, 3)))
    return rp.WishGuarantee(students=sorted(chosen, key=d.position.__getitem__))


def _b_mentor(d: GroupingData, w: Witness, rng: random.Random) -> rp.Mentor | None:
    if not any(s.newcomer for s in d.students):
        return None
    levels = []
    for grp in w:
        if any(d.student_by_id[s].newcomer for s in grp):
            levels.append(
                max((d.student_by_id[s].leadership for s in grp if not d.student_by_id[s].newcomer), default=0)
            )
    level = min(levels)
    return rp.Mentor(level=rng.randint(1, level)) if level >= 1 else None


BUILDERS = {
    "apart": _b_apart,
    "together": _b_together,
    "leader_floor": _b_leader_floor,
    "track_cap": _b_track_cap,
    "skill_floor": _b_skill_floor,
    "skill_balance": _b_skill_balance,
    "diversity": _b_diversity,
    "no_isolation": _b_no_isolation,
    "wish_guarantee": _b_wish_guarantee,
    "mentor": _b_mentor,
}


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    data, witness = _entities(spec, rng)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    per = len(witness[0])
    base: list[tuple[str, Tier, Params]] = [("group_size", tiers["group_size"], rp.GroupSize(min=per, max=per))]
    sampled = sampled_kinds(spec, TASK.base_rules)
    if spec.subtask == ROLES and "diversity" not in sampled:
        sampled.insert(0, "diversity")  # every role in every group
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng)
    first, second = (
        ("skill_spread", "unmet_wishes") if spec.subtask == "sports_teams" else ("unmet_wishes", "skill_spread")
    )
    objective = [
        ObjectiveTerm(id=first, kind=first),
        ObjectiveTerm(id=second, kind=second),
        ObjectiveTerm(id="grouping_code", kind="grouping_code"),
    ]
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective)


# -- hard-tier hooks -------------------------------------------------------------------
def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A skill-balance gap just below the smallest any valid grouping reaches, found by
    bisection (a smaller gap only removes groupings); failing that (perfect balance is
    possible), a pair that must be together, added to a student's 'together' star until
    the group size no longer allows it."""
    d = GroupingData.model_validate(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731

    def with_rule(kind: str, params: Params) -> Draft:
        return with_conflict_rule(draft_, kind, params, position)

    def ok(found: Draft | None) -> Draft | None:
        return (
            found
            if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe)
            else None
        )

    top = sum(s.skill for s in d.students)
    found = ok(
        first_infeasible(range(top, -1, -1), lambda g: with_rule("skill_balance", rp.SkillBalance(max=g)), feasible)
    )
    if found is not None:
        return found
    a = rng.choice(d.students).id
    others = [s.id for s in d.students if s.id != a]
    rng.shuffle(others)
    pairs = [(a, b) if d.position[a] <= d.position[b] else (b, a) for b in others]  # each pair in roster order

    def star(m: int) -> Draft:
        return with_rule(
            "together", rp.Together(pairs=sorted(pairs[:m], key=lambda p: (d.position[p[0]], d.position[p[1]])))
        )

    return ok(first_infeasible(range(1, len(pairs) + 1), star, feasible))


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """Two students of one group who must now be apart, or two of different groups who
    must now be together."""
    d = GroupingData.model_validate(draft_.data)
    where = {s: g for g, grp in enumerate(plan["groups"]) for s in grp}
    out = []
    for a, b in combinations([s.id for s in d.students], 2):
        kind = "apart" if where[a] == where[b] else "together"
        out.append(
            make_rule(kind, "hard", rp.Apart(pairs=[(a, b)]) if kind == "apart" else rp.Together(pairs=[(a, b)]))
        )
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> list[list[str]]:
    return [list(g) for g in plan["groups"]]


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    d = GroupingData.model_validate(draft_.data)
    levels = [lv for lv in (3, 2, 1) if sum(1 for s in d.students if s.leadership >= lv) >= 2 * d.groups]
    if not levels:
        return None
    return make_rule("dropout_robust", "hard", rp.DropoutRobust(level=rng.choice(levels))), []


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Leadership levels (worst: low), which only the leader and mentor rules read."""
    d = GroupingData.model_validate(draft_.data)
    out = [
        Uncertain(
            id="", kind="leadership", target=s.id, low=s.leadership - rng.randint(1, s.leadership), high=s.leadership
        )
        for s in d.students
        if s.leadership >= 1
    ]
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = GroupingData.model_validate(data)
    students = tuple(s.model_copy(update={"leadership": value}) if s.id == u.target else s for s in d.students)
    return {**data, "students": [s.model_dump(mode="json") for s in students]}


def worst_is_low(u: Uncertain) -> bool:
    return True


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = GroupingData.model_validate(draft_.data)
    totals = {s: sum(d.student_by_id[x].skill for x in grp) for grp in plan["groups"] for s in grp}
    mates = {s: set(grp) for grp in plan["groups"] for s in grp}
    return {
        "group_skill": {s.id: totals[s.id] for s in d.students},
        "wishes_met": {s.id: sum(1 for x in s.wishes if x in mates[s.id]) for s in d.students},
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
