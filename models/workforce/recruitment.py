"""Recruitment Planning: candidates through a multi-stage hiring process over the slots of a week.

Decision: x[c,s,t] = 1 when candidate c's stage s is held in slot t (exactly one slot per
stage), y[c,s,p] = 1 when staff member p runs it (exactly the stage's number of staff)
and, for robustness, b[c,s,p] = 1 when p is its backup. The products z[c,s,p,t] (p runs
c's stage s in slot t) carry the clash, daily and cool-down rules. Every candidate goes
through every stage in the listed order; what is decided is when and by whom.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.workforce import recruitment as rc
from pbsolve.checkers.workforce.recruitment import (
    Candidate,
    RecruitmentData,
    Role,
    Slot,
    Staff,
    Stage,
    Step,
)
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
    id="recruitment_planning",
    name="Recruitment Planning",
    family="workforce",
    summary="schedule candidates through a multi-stage hiring process with qualified, available interviewers",
    subtasks=(
        SubtaskSpec(
            "graduate_intake",
            "Graduate intake",
            "many graduates through screen, assessment centre and interview; external assessors charge fees",
        ),
        SubtaskSpec(
            "executive_hire", "Senior executive hire", "few candidates; the board panel always includes a senior member"
        ),
        SubtaskSpec(
            "engineering_hiring",
            "Engineering hiring",
            "phone screen, coding test review, technical interview and a two-person panel",
        ),
        SubtaskSpec(
            "seasonal_retail", "Seasonal retail hiring", "high-volume screens and trial shifts for urgent store roles"
        ),
        SubtaskSpec(
            "faculty_search",
            "Academic faculty search",
            "seminar talk, a department panel that includes the hiring committee, and the dean",
        ),
    ),
    pool=(
        ConstraintSpec("qualified", "basic", "every stage is run by staff who may run it"),
        ConstraintSpec("stage_order", "basic", "a candidate's stages in order, each in a later slot"),
        ConstraintSpec("staff_no_clash", "basic", "no staff member in two stages at once"),
        ConstraintSpec("staff_availability", "basic", "staff members' unavailable slots"),
        ConstraintSpec("candidate_availability", "basic", "candidates' unavailable slots"),
        ConstraintSpec("daily_cap", "basic", "named staff run at most so many stages a day"),
        ConstraintSpec("staff_load", "basic", "named staff run at most so many stages in all"),
        ConstraintSpec("fee_budget", "basic", "budget for paid stages (external assessors' fees)"),
        ConstraintSpec("final_deadline", "basic", "named candidates finish by a stated slot"),
        ConstraintSpec("min_gap", "medium", "buffer: at least so many days between two stages"),
        ConstraintSpec("panel_senior", "medium", "panel composition: a senior member on every panel"),
        ConstraintSpec("panel_team", "medium", "panel composition: the role's hiring team on every panel"),
        ConstraintSpec("fresh_eyes", "medium", "a candidate meets each staff member at most once"),
        ConstraintSpec("load_balance", "medium", "fairness: stage counts within a stated gap"),
        ConstraintSpec("max_span", "medium", "candidate experience: the process spans at most so many days"),
        ConstraintSpec("panel_cooldown", "stateful", "cool-down: after a panel, its members rest for the next slot"),
        ConstraintSpec("budget_release", "stateful", "fee budget released day by day; spending never runs ahead"),
        *mechanism_pool(
            "every stage names a backup staff member so any single staff member dropping out is covered",
            replan="repair the schedule with the fewest changes after a staff member or candidate drops out",
        ),
    ),
    base_rules=("qualified", "stage_order", "staff_no_clash"),
)

STAFF = (
    "Ana", "Ben", "Chen", "Dara", "Eli", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kemi", "Lars",
)  # fmt: skip
CANDIDATES = (
    "Avery", "Blake", "Casey", "Devon", "Emery", "Finley", "Harper", "Jordan", "Kai", "Logan",
    "Morgan", "Nova", "Parker", "Quinn", "Reese", "Sage", "Taylor", "Rowan",
)  # fmt: skip
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Mon2", "Tue2", "Wed2", "Thu2", "Fri2")
HALVES = {1: ("AM",), 2: ("AM", "PM"), 3: ("AM", "Noon", "PM")}


class Context:
    """What a subtask's hiring process looks like: stages (name, staff per stage), roles,
    and which stages external (paid) assessors and seniors typically run."""

    def __init__(self, stages: tuple[tuple[str, int], ...], roles: tuple[str, ...], paid: tuple[str, ...],
                 forced: tuple[str, ...] = ()) -> None:  # fmt: skip
        self.stages, self.roles, self.paid, self.forced = stages, roles, paid, forced


CONTEXT = {
    "graduate_intake": Context(
        (("Screen", 1), ("Assessment centre", 1), ("Interview", 1)),
        ("Graduate analyst", "Graduate engineer"), ("Assessment centre",), ("fee_budget",),
    ),
    "executive_hire": Context(
        (("Screen", 1), ("Interview", 1), ("Board panel", 2)), ("Chief Financial Officer",), ("Screen",),
        ("panel_senior",),
    ),
    "engineering_hiring": Context(
        (("Phone screen", 1), ("Coding review", 1), ("Technical interview", 1), ("Panel", 2)),
        ("Backend engineer", "Data engineer"), ("Coding review",),
    ),
    "seasonal_retail": Context(
        (("Screen", 1), ("Trial shift", 1)), ("Cashier", "Stock assistant", "Floor lead"), ("Screen",),
        ("final_deadline",),
    ),
    "faculty_search": Context(
        (("Seminar", 1), ("Department panel", 2), ("Dean meeting", 1)), ("Lecturer", "Professor"), ("Seminar",),
        ("panel_team",),
    ),
}  # fmt: skip


class RecruitmentSizes(Settings):
    """How big a recruitment instance is."""

    days: PositiveInt = Field(le=len(DAYS))
    slots_per_day: PositiveInt = Field(le=3)
    candidates: PositiveInt = Field(le=len(CANDIDATES))
    staff: int = Field(ge=2, le=len(STAFF))
    max_stages: int = Field(ge=2, le=4, description="the process keeps its first stages and its last one")
    cross_trained: int = Field(ge=0, le=100, description="% chance a staff member may run a stage beyond the minimum")
    fee: PositiveRange = Field(description="fee per stage of an external assessor")


SIZES = SizeTable[RecruitmentSizes](
    tiny=RecruitmentSizes(days=2, slots_per_day=2, candidates=2, staff=2, max_stages=2, cross_trained=45, fee=PositiveRange(lo=1, hi=4)),
    small=RecruitmentSizes(days=3, slots_per_day=2, candidates=3, staff=4, max_stages=3, cross_trained=45, fee=PositiveRange(lo=1, hi=5)),
    default=RecruitmentSizes(
        days=3, slots_per_day=2, candidates=4, staff=4, max_stages=3, cross_trained=25, fee=PositiveRange(lo=2, hi=9)
    ),
    large=RecruitmentSizes(days=5, slots_per_day=3, candidates=8, staff=7, max_stages=4, cross_trained=30, fee=PositiveRange(lo=2, hi=9)),
)  # fmt: skip
PROBE_TIME = 2.0
# the uniqueness re-optimisation without presolve: with the time-indexed stage order, on the
# 99 top-level certifications of seeds 0-3 x 20 at default size, 1.33 against 1.78 CPU s in
# all (first solves 1.1 s), the same certificates
UNIQUENESS_PARAMETERS = {"cp_model_presolve": False}


# -- the CP-SAT model ------------------------------------------------------------------
class RecruitmentModel(ModelBase):
    """One Boolean w[c,s,t,team] per step, slot and possible staff team (every team of the
    stage's size): exactly one per step. The slot and staff views (x, y, at) are sums of
    them, so 'no staff member twice in a slot' is a set packing with a tight relaxation."""

    def __init__(self, data: RecruitmentData, with_backups: bool = False) -> None:
        super().__init__()
        self.data = d = data
        self.w: dict[tuple[str, str, int, tuple[str, ...]], cp_model.IntVar] = {}
        self.x: dict[tuple[str, str, int], Any] = {}  # linear expressions (sums of w)
        self.y: dict[tuple[str, str, str], Any] = {}
        self.b: dict[tuple[str, str, str], cp_model.IntVar] = {}
        self.slot_no: dict[Step, Any] = {}
        self._at: dict[tuple[str, str, str, int], list[cp_model.IntVar]] = {}
        self._fee: list[int] = []  # fee of each w, in the order of self.w
        self._day: list[int] = []  # day of each w's slot
        names = [p.id for p in d.staff]
        fee, number = {p.id: p.fee for p in d.staff}, d.staff_number
        teams = {s.id: list(itertools.combinations(names, s.staff)) for s in d.stages}
        self._teams = {s: len(ts) for s, ts in teams.items()}  # teams per slot, per stage
        self._rows: dict[Step, list[cp_model.IntVar]] = {}  # a step's w, slot by slot
        self._runs: dict[tuple[str, int], list[cp_model.IntVar]] = {
            (p, t): [] for p in names for t in range(len(d.slots))
        }
        self._order: list[int] = []  # each w's coefficient in the order score (see _objective)
        team_fee = {s: [sum(fee[p] for p in team) for team in ts] for s, ts in teams.items()}
        team_number = {s: [sum(number[p] for p in team) for team in ts] for s, ts in teams.items()}
        proto, boolean = self.m.model_proto, cp_model.Domain(0, 1)  # new_bool_var without a Domain per variable

        def new_bool_var(name: str) -> cp_model.IntVar:
            return cp_model.IntVar(proto).with_name(name).with_domain(boolean)

        at, lsum = self._at, cp_model.LinearExpr.sum
        for c, s in d.steps:
            row = []
            weights = []
            by_person: dict[str, list[cp_model.IntVar]] = {p: [] for p in names}
            for t, slot in enumerate(d.slots):
                here = []
                for team in teams[s]:
                    v = new_bool_var(f"w[{c},{s},{slot.id},{'+'.join(team)}]")
                    self.w[c, s, t, team] = v
                    here.append(v)
                    for p in team:
                        at.setdefault((c, s, p, t), []).append(v)
                        by_person[p].append(v)
                        self._runs[p, t].append(v)
                self.x[c, s, t] = lsum(here)
                row += here
                weights += [t + 1] * len(here)
                self._fee += team_fee[s]
                self._order += [10 * (t + 1) + k for k in team_number[s]]
                self._day += [slot.day] * len(here)
            self.m.add_exactly_one(row)
            self._rows[c, s] = row
            self.slot_no[c, s] = cp_model.LinearExpr.weighted_sum(row, weights)
            for p in names:
                self.y[c, s, p] = lsum(by_person[p])
            if with_backups:
                brow = [new_bool_var(f"b[{c},{s},{p}]") for p in names]
                self.b.update({(c, s, p): v for p, v in zip(names, brow)})
                self.m.add_exactly_one(brow)

    def by_slot(self, c: str, s: str, t: int) -> Any:
        """1 when c's stage s is held before slot t (a sum of w)."""
        return cp_model.LinearExpr.sum(self._rows[c, s][: t * self._teams[s]])

    def at(self, c: str, s: str, p: str, t: int) -> Any:
        """1 when p runs c's stage s in slot t (a sum of w)."""
        return cp_model.LinearExpr.sum(self._at.get((c, s, p, t), []))

    def runs_in(self, p: str, t: int) -> list[cp_model.IntVar]:
        """Every w in which p runs a stage in slot t, step by step."""
        return self._runs[p, t]

    def load(self, p: str) -> Any:
        return cp_model.LinearExpr.sum([self.y[c, s, p] for c, s in self.data.steps])

    def fees(self, day: int | None = None) -> Any:
        """Fees paid (on one day, or in all)."""
        if day is None:
            return cp_model.LinearExpr.weighted_sum(list(self.w.values()), self._fee)
        pairs = [(v, f) for v, f, dd in zip(self.w.values(), self._fee, self._day) if dd == day]
        return cp_model.LinearExpr.weighted_sum([v for v, _ in pairs], [f for _, f in pairs])


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("qualified")
def _qualified(tm: RecruitmentModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for c, s in tm.data.steps:
        for person in tm.data.staff:
            if s not in person.stages:
                tm.post(tm.y[c, s, person.id] == 0, lit)


@encoder("stage_order")
def _stage_order(tm: RecruitmentModel, p: NoParams, lit: cp_model.IntVar) -> None:
    n = len(tm.data.slots)
    for c in tm.data.candidates:
        for a, b in itertools.pairwise(tm.data.stages):
            # b held by slot t needs a held before t: the time-indexed form of
            # slot_no[b] >= slot_no[a] + 1 (the same plans, a far tighter relaxation)
            for t in range(n):
                tm.post(tm.by_slot(c.id, b.id, t + 1) <= tm.by_slot(c.id, a.id, t), lit)


@encoder("staff_no_clash")
def _staff_no_clash(tm: RecruitmentModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for person in tm.data.staff:
        for t in range(len(tm.data.slots)):
            tm.post(cp_model.LinearExpr.sum(tm.runs_in(person.id, t)) <= 1, lit)


@encoder("staff_availability")
def _staff_availability(tm: RecruitmentModel, p: NoParams, lit: cp_model.IntVar) -> None:
    idx = tm.data.slot_index
    for person in tm.data.staff:
        for slot in person.unavailable:
            for c, s in tm.data.steps:
                tm.post(tm.at(c, s, person.id, idx[slot]) == 0, lit)


@encoder("candidate_availability")
def _candidate_availability(tm: RecruitmentModel, p: NoParams, lit: cp_model.IntVar) -> None:
    idx = tm.data.slot_index
    for c in tm.data.candidates:
        for slot in c.unavailable:
            for s in tm.data.stages:
                tm.post(tm.x[c.id, s.id, idx[slot]] == 0, lit)


@encoder("daily_cap")
def _daily_cap(tm: RecruitmentModel, p: rc.StaffCap, lit: cp_model.IntVar) -> None:
    d = tm.data
    for person in p.staff:
        for day in d.days():
            mine = [v for t, slot in enumerate(d.slots) if slot.day == day for v in tm.runs_in(person, t)]
            tm.post(sum(mine) <= p.max, lit)


@encoder("staff_load")
def _staff_load(tm: RecruitmentModel, p: rc.StaffCap, lit: cp_model.IntVar) -> None:
    for person in p.staff:
        tm.post(tm.load(person) <= p.max, lit)


@encoder("fee_budget")
def _fee_budget(tm: RecruitmentModel, p: rc.FeeBudget, lit: cp_model.IntVar) -> None:
    tm.post(tm.fees() <= p.max, lit)


@encoder("final_deadline")
def _final_deadline(tm: RecruitmentModel, p: rc.Deadline, lit: cp_model.IntVar) -> None:
    limit = tm.data.slot_index[p.slot] + 1
    for c in p.candidates:
        tm.post(tm.slot_no[c, tm.data.last_stage] <= limit, lit)


def _day_no(tm: RecruitmentModel, c: str, s: str) -> Any:
    return sum(slot.day * tm.x[c, s, t] for t, slot in enumerate(tm.data.slots))


@encoder("min_gap")
def _min_gap(tm: RecruitmentModel, p: rc.MinGap, lit: cp_model.IntVar) -> None:
    for c in tm.data.candidates:
        tm.post(_day_no(tm, c.id, p.second) - _day_no(tm, c.id, p.first) >= p.days, lit)


@encoder("panel_senior")
def _panel_senior(tm: RecruitmentModel, p: rc.StageRule, lit: cp_model.IntVar) -> None:
    seniors = [x.id for x in tm.data.staff if x.senior]
    for c in tm.data.candidates:
        tm.post(sum(tm.y[c.id, p.stage, x] for x in seniors) >= 1, lit)


@encoder("panel_team")
def _panel_team(tm: RecruitmentModel, p: rc.StageRule, lit: cp_model.IntVar) -> None:
    for c in tm.data.candidates:
        team = [x.id for x in tm.data.staff if c.role in x.teams]
        tm.post(sum(tm.y[c.id, p.stage, x] for x in team) >= 1, lit)


@encoder("fresh_eyes")
def _fresh_eyes(tm: RecruitmentModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for c in tm.data.candidates:
        for person in tm.data.staff:
            tm.post(sum(tm.y[c.id, s.id, person.id] for s in tm.data.stages) <= 1, lit)


@encoder("load_balance")
def _load_balance(tm: RecruitmentModel, p: rc.LoadBalance, lit: cp_model.IntVar) -> None:
    for a in tm.data.staff:
        for b in tm.data.staff:
            if a.id != b.id:
                tm.post(tm.load(a.id) - tm.load(b.id) <= p.max, lit)


@encoder("max_span")
def _max_span(tm: RecruitmentModel, p: rc.MaxSpan, lit: cp_model.IntVar) -> None:
    for c in tm.data.candidates:
        for a in tm.data.stages:
            for b in tm.data.stages:
                if a.id != b.id:
                    tm.post(_day_no(tm, c.id, b.id) - _day_no(tm, c.id, a.id) <= p.days, lit)


@encoder("panel_cooldown")
def _panel_cooldown(tm: RecruitmentModel, p: rc.StageRule, lit: cp_model.IntVar) -> None:
    d = tm.data
    for person in d.staff:
        for t in range(len(d.slots) - 1):
            if d.slots[t + 1].day != d.slots[t].day:
                continue
            after = tm.runs_in(person.id, t + 1)
            for c in d.candidates:
                tm.post(tm.at(c.id, p.stage, person.id, t) + sum(after) <= 1, lit)


@encoder("budget_release")
def _budget_release(tm: RecruitmentModel, p: rc.BudgetRelease, lit: cp_model.IntVar) -> None:
    spent: list[Any] = []
    released = 0
    for day in tm.data.days():
        released += p.releases[day] if day < len(p.releases) else 0
        spent.append(tm.fees(day))
        tm.post(sum(spent) <= released, lit)


@encoder("staff_absent")
def _staff_absent(tm: RecruitmentModel, p: rc.StaffAbsent, lit: cp_model.IntVar) -> None:
    idx = tm.data.slot_index
    for slot in p.slots:
        for c, s in tm.data.steps:
            tm.post(tm.at(c, s, p.staff, idx[slot]) == 0, lit)


@encoder("candidate_blocked")
def _candidate_blocked(tm: RecruitmentModel, p: rc.CandidateBlocked, lit: cp_model.IntVar) -> None:
    idx = tm.data.slot_index
    for slot in p.slots:
        for s in tm.data.stages:
            tm.post(tm.x[p.candidate, s.id, idx[slot]] == 0, lit)


@encoder("backup_staff")
def _backup_staff(tm: RecruitmentModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """Backup b[c,s,B]; if F drops out, B takes F's place in every stage F runs whose backup
    is B: moved[c,s,F,B] >= y[c,s,F] + b[c,s,B] - 1, and in no slot does anyone then run two stages."""
    d = tm.data
    idx = d.slot_index
    for c, s in d.steps:
        for person in d.staff:
            b = tm.b[c, s, person.id]
            if s not in person.stages:
                tm.post(b == 0, lit)
            tm.post(b + tm.y[c, s, person.id] <= 1, lit)
            for slot in person.unavailable:
                tm.post(tm.x[c, s, idx[slot]] + b <= 1, lit)
    for f in d.staff:
        for q in d.staff:
            if f.id == q.id:
                continue
            for t in range(len(d.slots)):
                moved = []
                for c, s in d.steps:
                    v = tm.m.new_bool_var(f"moved[{c},{s},{f.id},{q.id},{t}]")
                    tm.m.add(v >= tm.at(c, s, f.id, t) + tm.b[c, s, q.id] - 1)
                    moved.append(v)
                tm.post(sum(tm.runs_in(q.id, t)) + sum(moved) <= 1, lit)


def _objective(tm: RecruitmentModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    n_slots = len(d.slots)
    if term.kind == "urgency":
        expr = sum(d.role_by_id[c.role].urgency * tm.slot_no[c.id, d.last_stage] for c in d.candidates)
        return expr, sum(d.role_by_id[c.role].urgency * n_slots for c in d.candidates)
    if term.kind == "fees":
        fees = sorted((p.fee for p in d.staff), reverse=True)
        return tm.fees(), len(d.candidates) * sum(sum(fees[: s.staff]) for s in d.stages)
    if term.kind == "order_score":
        # n * (10 * slot_no[c, s] + the staff numbers of its team) for the n-th step (c, s),
        # one coefficient per w (tm._order, in the order of tm.w)
        num = d.staff_number
        step = [n for n, cs in enumerate(d.steps, 1) for _ in tm._rows[cs]]
        expr = cp_model.LinearExpr.weighted_sum(list(tm.w.values()), [n * k for n, k in zip(step, tm._order)])
        top = sorted(num.values(), reverse=True)
        per = {s.id: 10 * n_slots + sum(top[: s.staff]) for s in d.stages}
        return expr, sum(n * per[s] for n, (_, s) in enumerate(d.steps, 1))
    if term.kind == "backup_score":
        num = d.staff_number
        return sum(num[p] * v for (_, _, p), v in tm.b.items()), len(d.staff) * len(d.steps)
    if term.kind == "changes":
        old = rc.CurrentSchedule.model_validate(term.params).existing
        num = d.staff_number
        kept = [tm.w[c, s, d.slot_index[slot], tuple(sorted(staff, key=num.__getitem__))] for c, s, slot, staff in old]
        return len(old) - sum(kept), len(old)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = RecruitmentData.model_validate(draft.data)
    tm = RecruitmentModel(data, with_backups=any(r.kind == "backup_staff" for r in draft.rules))

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        rows = []
        for c, s in data.steps:
            t, team = next((t, team) for (cc, ss, t, team), v in tm.w.items() if (cc, ss) == (c, s) and solver.value(v))
            row: dict[str, Any] = {"candidate": c, "stage": s, "slot": data.slots[t].id, "staff": list(team)}
            if tm.b:
                row["backup"] = next(p.id for p in data.staff if solver.value(tm.b[c, s, p.id]))
            rows.append(row)
        return {"schedule": rows}

    answer = [*tm.w.values(), *tm.b.values()]
    return solver_model(
        tm, draft, ENCODERS, rc.RULE_PARAMS, _objective, decode, answer, [], uniqueness_parameters=UNIQUENESS_PARAMETERS
    )


# -- sampling --------------------------------------------------------------------------
Witness = dict[Step, tuple[int, tuple[str, ...]]]  # step -> (slot index, staff in list order)


def _stages(ctx: Context, most: int) -> list[Stage]:
    kept = list(ctx.stages) if len(ctx.stages) <= most else [*ctx.stages[: most - 1], ctx.stages[-1]]
    return [Stage(id=name, staff=n) for name, n in kept]


def _staff(ctx: Context, stages: list[Stage], roles: list[Role], size: RecruitmentSizes,
           rng: random.Random) -> list[Staff]:  # fmt: skip
    """Staff with random qualifications: every stage gets at least as many qualified
    people as it needs, others with a chance; paid stages get external assessors."""
    n, fee = size.staff, size.fee
    names = rng.sample(STAFF, n)
    can: dict[str, set[str]] = {p: set() for p in names}
    for s in stages:
        for p in rng.sample(names, min(n, s.staff)):
            can[p].add(s.id)
    for p in names:
        for s in stages:
            if rng.random() * 100 < size.cross_trained:
                can[p].add(s.id)
    paid = {s.id for s in stages if s.id in ctx.paid}
    can_paid = [p for p in names if can[p] & paid]
    external = set(rng.sample(can_paid, min(len(can_paid), max(1, n // 3))))
    seniors = set(rng.sample(names, max(1, n // 2)))
    out = []
    for k, p in enumerate(names):
        teams = tuple(r.id for r in roles if rng.random() < 0.4 or roles.index(r) == k % len(roles))
        out.append(
            Staff(
                id=p, stages=tuple(s.id for s in stages if s.id in can[p]), senior=p in seniors, teams=teams,
                fee=fee.draw(rng) if p in external else 0,
            )
        )  # fmt: skip
    return out


def _witness(d: RecruitmentData, rng: random.Random) -> Witness | None:
    """A schedule the drafted rules are built around: candidates in random order, each
    stage in a random slot leaving room for the later ones, run by random qualified staff
    free then (preferring seniors and hiring-team members on the last stage, and people
    the candidate has not met)."""
    n_slots, n_stages = len(d.slots), len(d.stages)
    busy: set[tuple[str, int]] = set()
    w: Witness = {}
    order = list(d.candidates)
    rng.shuffle(order)
    for c in order:
        t0, met = 0, set()
        for k, s in enumerate(d.stages):
            # mostly soon after the previous stage: compact processes leave room for spans and deadlines
            choices = sorted(range(t0, n_slots - (n_stages - 1 - k)), key=lambda t: t - t0 + 4 * rng.random())
            found = None
            for t in choices[:4]:
                free = [p for p in d.staff if s.id in p.stages and (p.id, t) not in busy]
                if len(free) < s.staff:
                    continue
                fresh = [p for p in free if p.id not in met]
                pool = fresh if len(fresh) >= s.staff else free
                team = _pick_team(d, c, s, pool, rng, last=k == n_stages - 1)
                found = (t, team)
                break
            if found is None:
                return None
            t, team = found
            w[c.id, s.id] = (t, tuple(sorted(team, key=d.staff_number.__getitem__)))
            busy |= {(p, t) for p in team}
            met |= set(team)
            t0 = t + 1
    return w


def _pick_team(d: RecruitmentData, c: Candidate, s: Stage, pool: list[Staff], rng: random.Random,
               last: bool) -> list[str]:  # fmt: skip
    team = rng.sample(pool, s.staff)
    if last:
        for want in (lambda p: p.senior, lambda p: c.role in p.teams):
            if not any(want(p) for p in team):
                extra = [p for p in pool if want(p) and p not in team]
                if extra:
                    team[rng.randrange(len(team))] = rng.choice(extra)
    return [p.id for p in team]


def _entities(spec: GenerationSpec, rng: random.Random, fresh: bool) -> tuple[RecruitmentData, Witness]:
    """The instance's entities and a witness schedule (``fresh``: one in which no
    candidate meets a staff member twice, for the fresh-eyes rule)."""
    settings = SIZES.of(spec.size)
    ctx = CONTEXT[spec.subtask]
    slots = [
        Slot(id=f"{DAYS[day]} {h}", day=day) for day in range(settings.days) for h in HALVES[settings.slots_per_day]
    ]
    stages = _stages(ctx, settings.max_stages)
    roles_all = list(ctx.roles)
    roles = [Role(id=r, urgency=rng.randint(1, 5)) for r in rng.sample(roles_all, min(len(roles_all), 2 + (settings.candidates > 4)))]  # fmt: skip
    for _ in range(20):
        staff = _staff(ctx, stages, roles, settings, rng)
        names = rng.sample(CANDIDATES, settings.candidates)
        candidates = [Candidate(id=n, role=roles[k % len(roles)].id) for k, n in enumerate(names)]
        data = RecruitmentData(
            slots=tuple(slots), stages=tuple(stages), roles=tuple(roles), staff=tuple(staff),
            candidates=tuple(candidates),
        )  # fmt: skip
        w = _witness(data, rng)
        if w is not None and (not fresh or _b_fresh_eyes(data, w, rng) is not None):
            return data, w
    raise NoDraft("witness")


def _with_availability(d: RecruitmentData, w: Witness, rng: random.Random, who: str) -> RecruitmentData:
    """Unavailable slots (up to two each) that the witness leaves free."""
    if who == "staff":
        staff = []
        for p in d.staff:
            mine = {t for step, (t, team) in w.items() if p.id in team}
            staff.append(p.model_copy(update={"unavailable": _off(d, mine, rng)}))
        return d.model_copy(update={"staff": tuple(staff)})
    candidates = []
    for c in d.candidates:
        mine = {w[c.id, s.id][0] for s in d.stages}
        candidates.append(c.model_copy(update={"unavailable": _off(d, mine, rng)}))
    return d.model_copy(update={"candidates": tuple(candidates)})


def _off(d: RecruitmentData, used: set[int], rng: random.Random) -> tuple[str, ...]:
    free = [t for t in range(len(d.slots)) if t not in used]
    if not free or rng.random() < 0.25:
        return ()
    return tuple(d.slots[t].id for t in sorted(rng.sample(free, min(len(free), rng.randint(1, 2)))))


def _loads(d: RecruitmentData, w: Witness) -> dict[str, int]:
    return {p.id: sum(1 for _, team in w.values() if p.id in team) for p in d.staff}


def _pick(names: list[str], rng: random.Random, order: list[str]) -> list[str]:
    return sorted(rng.sample(names, min(len(names), rng.randint(1, 2))), key=order.index)


def _b_daily_cap(d: RecruitmentData, w: Witness, rng: random.Random) -> rc.StaffCap | None:
    per: dict[tuple[str, int], int] = {}
    for t, team in w.values():
        for p in team:
            per[p, d.slots[t].day] = per.get((p, d.slots[t].day), 0) + 1
    most = {p.id: max((n for (q, _), n in per.items() if q == p.id), default=0) for p in d.staff}
    options = [p for p, n in most.items() if n >= 1]
    if not options:
        return None
    chosen = _pick(options, rng, [p.id for p in d.staff])
    return rc.StaffCap(staff=chosen, max=max(most[p] for p in chosen))


def _b_staff_load(d: RecruitmentData, w: Witness, rng: random.Random) -> rc.StaffCap | None:
    loads = _loads(d, w)
    options = [p for p, n in loads.items() if n >= 1]
    if not options:
        return None
    chosen = _pick(options, rng, [p.id for p in d.staff])
    return rc.StaffCap(staff=chosen, max=max(loads[p] for p in chosen))


def _witness_fees(d: RecruitmentData, w: Witness, day: int | None = None) -> int:
    return sum(d.staff_by_id[p].fee for (t, team) in w.values() for p in team if day is None or d.slots[t].day == day)


def _b_fee_budget(d: RecruitmentData, w: Witness, rng: random.Random) -> rc.FeeBudget | None:
    if not any(p.fee for p in d.staff):
        return None
    return rc.FeeBudget(max=_witness_fees(d, w) + rng.randint(0, 2))


def _b_final_deadline(d: RecruitmentData, w: Witness, rng: random.Random) -> rc.Deadline | None:
    last = d.last_stage
    options = [c.id for c in d.candidates if w[c.id, last][0] < len(d.slots) - 1]
    if not options:
        return None
    chosen = _pick(options, rng, [c.id for c in d.candidates])
    return rc.Deadline(candidates=chosen, slot=d.slots[max(w[c, last][0] for c in chosen)].id)


def _b_min_gap(d: RecruitmentData, w: Witness, rng: random.Random) -> rc.MinGap | None:
    options = []
    for a, b in itertools.combinations(d.stages, 2):
        gap = min(d.slots[w[c.id, b.id][0]].day - d.slots[w[c.id, a.id][0]].day for c in d.candidates)
        if gap >= 1:
            options.append(rc.MinGap(first=a.id, second=b.id, days=gap))
    return rng.choice(options) if options else None


def _b_panel(want: str) -> Any:
    def build_(d: RecruitmentData, w: Witness, rng: random.Random) -> rc.StageRule | None:
        def ok(c: Candidate, p: str) -> bool:
            return d.staff_by_id[p].senior if want == "senior" else c.role in d.staff_by_id[p].teams

        options = [s.id for s in d.stages if all(any(ok(c, p) for p in w[c.id, s.id][1]) for c in d.candidates)]
        panels = [s for s in options if d.stage_by_id[s].staff > 1 or s == d.last_stage]
        return rc.StageRule(stage=rng.choice(panels or options)) if options else None

    return build_


def _b_fresh_eyes(d: RecruitmentData, w: Witness, rng: random.Random) -> NoParams | None:
    for c in d.candidates:
        met = [p for s in d.stages for p in w[c.id, s.id][1]]
        if len(met) != len(set(met)):
            return None
    return NoParams()


def _b_load_balance(d: RecruitmentData, w: Witness, rng: random.Random) -> rc.LoadBalance | None:
    loads = _loads(d, w).values()
    return rc.LoadBalance(max=max(loads) - min(loads) + rng.randint(0, 1))


def _b_max_span(d: RecruitmentData, w: Witness, rng: random.Random) -> rc.MaxSpan | None:
    span = max(
        max(d.slots[w[c.id, s.id][0]].day for s in d.stages) - min(d.slots[w[c.id, s.id][0]].day for s in d.stages)
        for c in d.candidates
    )
    days = min(span + rng.randint(0, 1), len(d.days()) - 2)
    return rc.MaxSpan(days=days) if span <= days else None


def _b_panel_cooldown(d: RecruitmentData, w: Witness, rng: random.Random) -> rc.StageRule | None:
    runs = {(p, t) for (t, team) in w.values() for p in team}
    options = []
    for s in d.stages:
        ok = True
        for c in d.candidates:
            t, team = w[c.id, s.id]
            if t + 1 < len(d.slots) and d.slots[t + 1].day == d.slots[t].day:
                ok = ok and not any((p, t + 1) in runs for p in team)
        if ok:
            options.append(s.id)
    return rc.StageRule(stage=rng.choice(options)) if options else None


def _b_budget_release(d: RecruitmentData, w: Witness, rng: random.Random) -> rc.BudgetRelease | None:
    if not _witness_fees(d, w):
        return None
    return rc.BudgetRelease(releases=[_witness_fees(d, w, day) for day in d.days()])


BUILDERS = {
    "daily_cap": _b_daily_cap,
    "staff_load": _b_staff_load,
    "fee_budget": _b_fee_budget,
    "final_deadline": _b_final_deadline,
    "min_gap": _b_min_gap,
    "panel_senior": _b_panel("senior"),
    "panel_team": _b_panel("team"),
    "fresh_eyes": _b_fresh_eyes,
    "load_balance": _b_load_balance,
    "max_span": _b_max_span,
    "panel_cooldown": _b_panel_cooldown,
    "budget_release": _b_budget_release,
}
STRUCTURAL = ("staff_availability", "candidate_availability", "fresh_eyes")
OBJECTIVE = (
    ObjectiveTerm(id="urgency", kind="urgency"),
    ObjectiveTerm(id="fees", kind="fees"),
    ObjectiveTerm(id="order_score", kind="order_score"),
)


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    sampled = sampled_kinds(spec, TASK.base_rules)
    data, witness = _entities(spec, rng, "fresh_eyes" in sampled)
    for kind in CONTEXT[spec.subtask].forced:  # the subtask's own structure
        if kind not in sampled:
            sampled.insert(0, kind)
    if "staff_availability" in sampled:
        data = _with_availability(data, witness, rng, "staff")
    if "candidate_availability" in sampled:
        data = _with_availability(data, witness, rng, "candidates")
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng, structural=STRUCTURAL)
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=list(OBJECTIVE))


# -- hard-tier hooks -------------------------------------------------------------------
def _plan(plan: dict[str, Any]) -> dict[Step, tuple[str, list[str]]]:
    return {(r["candidate"], r["stage"]): (r["slot"], list(r["staff"])) for r in plan["schedule"]}


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A cap on the stages one or two staff members run, just below the least they must
    run, found by bisection (a lower cap only removes plans)."""
    d = RecruitmentData.model_validate(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))

    def feasible(t: Draft) -> bool:
        return is_feasible(build(t), probe)

    def with_cap(staff: list[str], most: int) -> Draft:
        return with_conflict_rule(draft_, "staff_load", rc.StaffCap(staff=staff, max=most), position)

    names = [p.id for p in d.staff]
    options = [[a, b] for i, a in enumerate(names) for b in names[i + 1 :]] + [[a] for a in names]
    rng.shuffle(options)
    for staff in options[:4]:
        found = first_infeasible(range(len(d.steps), -1, -1), lambda k: with_cap(staff, k), feasible)  # noqa: B023 - called within this iteration
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A staff member drops out from the slot of a stage they run to the end of the
    period, or a candidate cannot come on the day of one of their stages."""
    d = RecruitmentData.model_validate(draft_.data)
    p = _plan(plan)
    out = []
    for c, s in d.steps:
        slot, staff = p[c, s]
        t = d.slot_index[slot]
        if rng.random() < 0.5:
            person = rng.choice(staff)
            gone = [x.id for x in d.slots[t:]]
            out.append(make_rule("staff_absent", "hard", rc.StaffAbsent(staff=person, slots=gone)))
        else:
            day = [x.id for x in d.slots if x.day == d.slots[t].day]
            out.append(make_rule("candidate_blocked", "hard", rc.CandidateBlocked(candidate=c, slots=day)))
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> list[tuple[str, str, str, list[str]]]:
    return [(r["candidate"], r["stage"], r["slot"], list(r["staff"])) for r in plan["schedule"]]


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    return make_rule("backup_staff", "hard", NoParams()), [ObjectiveTerm(id="backup_score", kind="backup_score")]


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Staff fees (worst: high): an external assessor's fee may come in lower, and a staff
    member without a fee may yet charge one (a freelancer whose terms are not settled)."""
    d = RecruitmentData.model_validate(draft_.data)
    out = []
    for p in d.staff:
        if p.fee:
            out.append(Uncertain(id="", kind="fee", target=p.id, low=max(0, p.fee - rng.randint(1, 3)), high=p.fee))
        else:
            out.append(Uncertain(id="", kind="fee", target=p.id, low=0, high=rng.randint(1, 3)))
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = RecruitmentData.model_validate(data)
    staff = tuple(p.model_copy(update={"fee": value}) if p.id == u.target else p for p in d.staff)
    return {**data, "staff": [p.model_dump(mode="json") for p in staff]}


def worst_is_low(u: Uncertain) -> bool:
    return False


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = RecruitmentData.model_validate(draft_.data)
    p = _plan(plan)
    last = d.last_stage
    return {
        "load": {x.id: sum(1 for _, staff in p.values() if x.id in staff) for x in d.staff},
        "finish": {c.id: d.slot_index[p[c.id, last][0]] + 1 for c in d.candidates},
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
