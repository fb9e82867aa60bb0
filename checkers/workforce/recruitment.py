"""Checks for Recruitment Planning answers: for every candidate and every stage of the
hiring process (screen, interviews, panel, ...) a slot and the staff who run it.

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of every rule and objective kind (read alike by the
solver model, this checker and the prompt), and judges a plan in plain Python. Nothing
here imports the solver models.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt

from pbsolve.checker_kit import OK, Names, PlanChecker, lookup, spread_verdict
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import Names as DataNames
from pbsolve.params import NoParams, Params, as_model
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "recruitment_planning"


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Slot(_Frozen):
    id: str
    day: int = Field(ge=0, description="day index (0 = first day)")


class Stage(_Frozen):
    id: str
    staff: PositiveInt = Field(description="how many staff members run the stage together")


class Role(_Frozen):
    id: str
    urgency: PositiveInt = Field(description="weight of each slot a candidate for the role waits to finish")


class Staff(_Frozen):
    id: str
    stages: tuple[str, ...] = Field(description="the stages this person may run")
    senior: bool = False
    teams: tuple[str, ...] = Field(default=(), description="roles whose hiring team this person is on")
    fee: NonNegativeInt = Field(default=0, description="paid per stage they run (external assessors)")
    unavailable: tuple[str, ...] = Field(default=(), description="slot ids")


class Candidate(_Frozen):
    id: str
    role: str
    unavailable: tuple[str, ...] = Field(default=(), description="slot ids")


class RecruitmentData(BaseModel):
    """Every candidate goes through every stage, in the listed order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    slots: tuple[Slot, ...]
    stages: tuple[Stage, ...]
    roles: tuple[Role, ...]
    staff: tuple[Staff, ...]
    candidates: tuple[Candidate, ...]
    uncertain: tuple[Uncertain, ...] = ()

    @cached_property
    def slot_index(self) -> dict[str, int]:
        return {s.id: i for i, s in enumerate(self.slots)}

    @cached_property
    def staff_by_id(self) -> dict[str, Staff]:
        return {p.id: p for p in self.staff}

    @cached_property
    def stage_by_id(self) -> dict[str, Stage]:
        return {s.id: s for s in self.stages}

    @cached_property
    def role_by_id(self) -> dict[str, Role]:
        return {r.id: r for r in self.roles}

    @cached_property
    def candidate_by_id(self) -> dict[str, Candidate]:
        return {c.id: c for c in self.candidates}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {
            "slot": self.slot_index,
            "stage": self.stage_by_id,
            "staff member": self.staff_by_id,
            "candidate": self.candidate_by_id,
        }
        return names[what]

    @cached_property
    def fees(self) -> dict[str, int]:
        """Staff id -> the fee paid per stage they run."""
        return {p.id: p.fee for p in self.staff}

    @cached_property
    def staff_number(self) -> dict[str, int]:
        """Staff id -> its position in the staff list, from 1."""
        return {p.id: k for k, p in enumerate(self.staff, 1)}

    @cached_property
    def steps(self) -> tuple[tuple[str, str], ...]:
        """(candidate, stage) in prompt order: candidates as listed, each's stages in order."""
        return tuple((c.id, s.id) for c in self.candidates for s in self.stages)

    @property
    def last_stage(self) -> str:
        return self.stages[-1].id

    def day_of(self, slot: str) -> int:
        return self.slots[self.slot_index[slot]].day

    def days(self) -> list[int]:
        return sorted({s.day for s in self.slots})


# -- parameters ------------------------------------------------------------------------
SlotName = Annotated[str, DataNames("slot")]
StageName = Annotated[str, DataNames("stage")]
StaffName = Annotated[str, DataNames("staff member")]
CandidateName = Annotated[str, DataNames("candidate")]


class StaffCap(Params):
    """Each named staff member runs at most ``max`` stages (in total, or per day)."""

    staff: list[StaffName]
    max: NonNegativeInt


class FeeBudget(Params):
    """The fees of all stages together are at most ``max``."""

    max: NonNegativeInt


class Deadline(Params):
    """Each named candidate's final stage is held no later than ``slot``."""

    candidates: list[CandidateName]
    slot: SlotName


class MinGap(Params):
    """Every candidate's ``second`` stage is at least ``days`` days after their ``first``."""

    first: StageName
    second: StageName
    days: PositiveInt


class StageRule(Params):
    """A rule about the staff of one stage (a panel's composition, a cool-down)."""

    stage: StageName


class LoadBalance(Params):
    """Stage counts of any two staff members differ by at most ``max``."""

    max: NonNegativeInt


class MaxSpan(Params):
    """A candidate's first and last stages are at most ``days`` days apart."""

    days: NonNegativeInt


class BudgetRelease(Params):
    """Fee budget released day by day: by the end of day d at most the sum of the first d
    releases has been spent (unspent money carries over)."""

    releases: list[NonNegativeInt]


class StaffAbsent(Params):
    """The staff member runs no stage in the named slots."""

    staff: StaffName
    slots: list[SlotName]


class CandidateBlocked(Params):
    """The candidate attends no stage in the named slots."""

    candidate: CandidateName
    slots: list[SlotName]


class CurrentSchedule(Params):
    """The current plan a ``changes`` term counts against: rows (candidate, stage, slot, staff)."""

    existing: list[tuple[CandidateName, StageName, SlotName, list[StaffName]]]


RULE_PARAMS: dict[str, type[Params]] = {
    "qualified": NoParams,
    "stage_order": NoParams,
    "staff_no_clash": NoParams,
    "staff_availability": NoParams,
    "candidate_availability": NoParams,
    "daily_cap": StaffCap,
    "staff_load": StaffCap,
    "fee_budget": FeeBudget,
    "final_deadline": Deadline,
    "min_gap": MinGap,
    "panel_senior": StageRule,
    "panel_team": StageRule,
    "fresh_eyes": NoParams,
    "load_balance": LoadBalance,
    "max_span": MaxSpan,
    "panel_cooldown": StageRule,
    "budget_release": BudgetRelease,
    "staff_absent": StaffAbsent,
    "candidate_blocked": CandidateBlocked,
    "backup_staff": NoParams,
}
TERM_PARAMS: dict[str, type[Params]] = {
    "urgency": NoParams,
    "fees": NoParams,
    "order_score": NoParams,
    "backup_score": NoParams,
    "changes": CurrentSchedule,
}


# -- plans -----------------------------------------------------------------------------
Step = tuple[str, str]  # (candidate, stage)


@dataclass(frozen=True)
class Plan:
    slot: dict[Step, str]  # step -> slot id
    staff: dict[Step, tuple[str, ...]]  # step -> staff ids in staff-list order
    backup: dict[Step, str] | None = None  # step -> backup staff member (robustness only)


def fee_of(d: RecruitmentData, plan: Plan, step: Step) -> int:
    fees, total = d.fees, 0
    for p in plan.staff[step]:
        total += fees[p]
    return total


def total_fees(d: RecruitmentData, plan: Plan) -> int:
    """The fees of every step of the plan together."""
    fees, staff, total = d.fees, plan.staff, 0
    for step in d.steps:
        for p in staff[step]:
            total += fees[p]
    return total


def load(plan: Plan, person: str) -> int:
    n = 0
    for team in plan.staff.values():
        if person in team:
            n += 1
    return n


def final_slot(d: RecruitmentData, plan: Plan, candidate: str) -> int:
    """Slot number (from 1) of the candidate's final stage."""
    return d.slot_index[plan.slot[candidate, d.last_stage]] + 1


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


def _no_clash(d: RecruitmentData, plan: Plan, staff_of: Callable[[Step], tuple[str, ...]], what: str) -> Verdict:
    seen: dict[tuple[str, str], Step] = {}
    for step in d.steps:
        for p in staff_of(step):
            key = (p, plan.slot[step])
            if key in seen:
                a = seen[key]
                return False, f"{what}{p} runs {a[0]}'s {a[1]} and {step[0]}'s {step[1]} in {key[1]}"
            seen[key] = step
    return OK


# -- rule checks -----------------------------------------------------------------------
@check("qualified")
def _qualified(d: RecruitmentData, plan: Plan, p: NoParams) -> Verdict:
    staff, by_id = plan.staff, d.staff_by_id
    for step in d.steps:
        for person in staff[step]:
            if step[1] not in by_id[person].stages:
                return False, f"{person} may not run the {step[1]} ({step[0]})"
    return OK


@check("stage_order")
def _stage_order(d: RecruitmentData, plan: Plan, p: NoParams) -> Verdict:
    idx = d.slot_index
    for c in d.candidates:
        for a, b in itertools.pairwise(d.stages):
            if idx[plan.slot[c.id, b.id]] <= idx[plan.slot[c.id, a.id]]:
                return False, f"{c.id}'s {b.id} ({plan.slot[c.id, b.id]}) is not after the {a.id}"
    return OK


@check("staff_no_clash")
def _staff_no_clash(d: RecruitmentData, plan: Plan, p: NoParams) -> Verdict:
    return _no_clash(d, plan, plan.staff.__getitem__, "")


@check("staff_availability")
def _staff_availability(d: RecruitmentData, plan: Plan, p: NoParams) -> Verdict:
    for step in d.steps:
        for person in plan.staff[step]:
            if plan.slot[step] in d.staff_by_id[person].unavailable:
                return False, f"{person} is unavailable in {plan.slot[step]} but runs {step[0]}'s {step[1]}"
    return OK


@check("candidate_availability")
def _candidate_availability(d: RecruitmentData, plan: Plan, p: NoParams) -> Verdict:
    for c, s in d.steps:
        if plan.slot[c, s] in d.candidate_by_id[c].unavailable:
            return False, f"{c} is unavailable in {plan.slot[c, s]} but has the {s} then"
    return OK


@check("daily_cap")
def _daily_cap(d: RecruitmentData, plan: Plan, p: StaffCap) -> Verdict:
    for person in p.staff:
        per_day: dict[int, int] = {}
        for step in d.steps:
            if person in plan.staff[step]:
                day = d.day_of(plan.slot[step])
                per_day[day] = per_day.get(day, 0) + 1
        for day, n in sorted(per_day.items()):
            if n > p.max:
                return False, f"{person} runs {n} stages on {_day_name(d, day)} (at most {p.max})"
    return OK


def _day_name(d: RecruitmentData, day: int) -> str:
    return next(s.id for s in d.slots if s.day == day).split()[0]


@check("staff_load")
def _staff_load(d: RecruitmentData, plan: Plan, p: StaffCap) -> Verdict:
    for person in p.staff:
        n = load(plan, person)
        if n > p.max:
            return False, f"{person} runs {n} stages (at most {p.max})"
    return OK


@check("fee_budget")
def _fee_budget(d: RecruitmentData, plan: Plan, p: FeeBudget) -> Verdict:
    total = total_fees(d, plan)
    return OK if total <= p.max else (False, f"fees total {total} (budget {p.max})")


@check("final_deadline")
def _final_deadline(d: RecruitmentData, plan: Plan, p: Deadline) -> Verdict:
    limit = d.slot_index[p.slot]
    for c in p.candidates:
        got = plan.slot[c, d.last_stage]
        if d.slot_index[got] > limit:
            return False, f"{c}'s {d.last_stage} is in {got}, after {p.slot}"
    return OK


@check("min_gap")
def _min_gap(d: RecruitmentData, plan: Plan, p: MinGap) -> Verdict:
    for c in d.candidates:
        a, b = d.day_of(plan.slot[c.id, p.first]), d.day_of(plan.slot[c.id, p.second])
        if b - a < p.days:
            return False, f"{c.id}'s {p.second} is {b - a} days after the {p.first} (at least {p.days})"
    return OK


@check("panel_senior")
def _panel_senior(d: RecruitmentData, plan: Plan, p: StageRule) -> Verdict:
    for c in d.candidates:
        if not any(d.staff_by_id[x].senior for x in plan.staff[c.id, p.stage]):
            return False, f"{c.id}'s {p.stage} has no senior member"
    return OK


@check("panel_team")
def _panel_team(d: RecruitmentData, plan: Plan, p: StageRule) -> Verdict:
    for c in d.candidates:
        if not any(c.role in d.staff_by_id[x].teams for x in plan.staff[c.id, p.stage]):
            return False, f"{c.id}'s {p.stage} has nobody from the {c.role} hiring team"
    return OK


@check("fresh_eyes")
def _fresh_eyes(d: RecruitmentData, plan: Plan, p: NoParams) -> Verdict:
    for c in d.candidates:
        met: dict[str, str] = {}
        for s in d.stages:
            for person in plan.staff[c.id, s.id]:
                if person in met:
                    return False, f"{c.id} meets {person} at the {met[person]} and the {s.id}"
                met[person] = s.id
    return OK


@check("load_balance")
def _load_balance(d: RecruitmentData, plan: Plan, p: LoadBalance) -> Verdict:
    loads = {x.id: load(plan, x.id) for x in d.staff}
    return spread_verdict(loads, p.max, "runs", "stages")


@check("max_span")
def _max_span(d: RecruitmentData, plan: Plan, p: MaxSpan) -> Verdict:
    for c in d.candidates:
        days = [d.day_of(plan.slot[c.id, s.id]) for s in d.stages]
        if max(days) - min(days) > p.days:
            return False, f"{c.id}'s stages span {max(days) - min(days)} days (at most {p.days})"
    return OK


@check("panel_cooldown")
def _panel_cooldown(d: RecruitmentData, plan: Plan, p: StageRule) -> Verdict:
    """State: sitting on the stage in slot t makes a person unavailable in slot t+1 of that day."""
    busy: dict[tuple[str, int], Step] = {}
    for step in d.steps:
        for person in plan.staff[step]:
            busy[person, d.slot_index[plan.slot[step]]] = step
    for (c, s), slot in plan.slot.items():
        if s != p.stage:
            continue
        t = d.slot_index[slot]
        if t + 1 >= len(d.slots) or d.slots[t + 1].day != d.slots[t].day:
            continue
        for person in plan.staff[c, s]:
            after = busy.get((person, t + 1))
            if after is not None:
                return False, f"{person} runs {after[0]}'s {after[1]} right after {c}'s {s}"
    return OK


@check("budget_release")
def _budget_release(d: RecruitmentData, plan: Plan, p: BudgetRelease) -> Verdict:
    """State: the money spent so far, day by day, against the money released so far."""
    spent = released = 0
    for day in d.days():
        released += p.releases[day] if day < len(p.releases) else 0
        spent += sum(fee_of(d, plan, step) for step in d.steps if d.day_of(plan.slot[step]) == day)
        if spent > released:
            return False, f"by the end of {_day_name(d, day)} fees of {spent} are spent; {released} released"
    return OK


@check("staff_absent")
def _staff_absent(d: RecruitmentData, plan: Plan, p: StaffAbsent) -> Verdict:
    for step in d.steps:
        if p.staff in plan.staff[step] and plan.slot[step] in p.slots:
            return False, f"{p.staff} is absent in {plan.slot[step]} but runs {step[0]}'s {step[1]}"
    return OK


@check("candidate_blocked")
def _candidate_blocked(d: RecruitmentData, plan: Plan, p: CandidateBlocked) -> Verdict:
    for s in d.stages:
        if plan.slot[p.candidate, s.id] in p.slots:
            return False, f"{p.candidate} cannot come in {plan.slot[p.candidate, s.id]} but has the {s.id} then"
    return OK


@check("backup_staff")
def _backup_staff(d: RecruitmentData, plan: Plan, p: NoParams) -> Verdict:
    """Simulates each staff member dropping out on their own: each stage they run is run
    by its backup in their place, who must be qualified and available; nobody may then be
    in two stages in one slot."""
    backup = plan.backup or {}
    for step in d.steps:
        b = backup.get(step)
        if b is None:
            return False, f"{step[0]}'s {step[1]} names no backup"
        if b in plan.staff[step]:
            return False, f"{step[0]}'s {step[1]}: backup {b} already runs it"
        if step[1] not in d.staff_by_id[b].stages:
            return False, f"{step[0]}'s {step[1]}: backup {b} may not run the {step[1]}"
        if plan.slot[step] in d.staff_by_id[b].unavailable:
            return False, f"{step[0]}'s {step[1]}: backup {b} is unavailable in {plan.slot[step]}"
    for out in d.staff:

        def after(step: Step, gone: str = out.id) -> tuple[str, ...]:
            return tuple(backup[step] if x == gone else x for x in plan.staff[step])

        verdict = _no_clash(d, plan, after, f"if {out.id} dropped out, ")
        if not verdict[0]:
            return verdict
    return OK


# -- objective -------------------------------------------------------------------------
def order_score(d: RecruitmentData, plan: Plan) -> int:
    """Step n (prompt order) in slot number j with staff numbers k: n × (10 × j + Σ k)."""
    num, idx, total = d.staff_number, d.slot_index, 0
    for n, step in enumerate(d.steps, 1):
        score = 10 * (idx[plan.slot[step]] + 1)
        for x in plan.staff[step]:
            score += num[x]
        total += n * score
    return total


def objective_value(d: RecruitmentData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "urgency":
        roles, idx, last, total = d.role_by_id, d.slot_index, d.last_stage, 0
        for c in d.candidates:
            total += roles[c.role].urgency * (idx[plan.slot[c.id, last]] + 1)
        return total
    if kind == "fees":
        return total_fees(d, plan)
    if kind == "order_score":
        return order_score(d, plan)
    if kind == "backup_score":
        return sum(d.staff_number[(plan.backup or {})[step]] for step in d.steps)
    if kind == "changes":
        old = as_model(tp, CurrentSchedule).existing
        return sum(1 for c, s, slot, staff in old if plan.slot[c, s] != slot or set(plan.staff[c, s]) != set(staff))
    raise ValueError(f"unknown objective kind {term.kind!r}")


# -- the task checker ------------------------------------------------------------------
class Recruitment(PlanChecker):
    family = "workforce"
    task = TASK_ID
    plan_key = "schedule"
    plan_text = (
        "a list of rows naming every candidate and stage exactly once, each with a listed slot and exactly the "
        "stage's number of different listed staff members (and a backup staff member where the rules ask for one)"
    )
    data_type = RecruitmentData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: RecruitmentData) -> dict[str, Names]:
        return {
            "candidate": lookup([c.id for c in d.candidates]),
            "stage": lookup([s.id for s in d.stages]),
            "slot": lookup([s.id for s in d.slots]),
            "staff": lookup([p.id for p in d.staff]),
        }

    def read_plan(
        self, d: RecruitmentData, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Plan | None, str]:
        rows = section.get(self.plan_key) if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, f"'{self.plan_key}' is missing or not a list"
        need_backup = any(r.kind == "backup_staff" for r in rules)
        slots: dict[Step, str] = {}
        staff: dict[Step, tuple[str, ...]] = {}
        backup: dict[Step, str] = {}
        for k, row in enumerate(rows):
            found, why = self._row(d, row, k, lk, need_backup)
            if found is None:
                return None, why
            step, slot, team, b = found
            if step in slots:
                return None, f"{step[0]}'s {step[1]} appears more than once"
            slots[step], staff[step] = slot, team
            if b is not None:
                backup[step] = b
        missing = [f"{c}'s {s}" for c, s in d.steps if (c, s) not in slots]
        if missing:
            return None, "stages missing from the schedule: " + ", ".join(missing[:6])
        return Plan(slots, staff, backup if need_backup else None), "complete plan"

    def _row(
        self, d: RecruitmentData, row: Any, k: int, lk: dict[str, Names], need_backup: bool
    ) -> tuple[tuple[Step, str, tuple[str, ...], str | None] | None, str]:
        """One schedule row read: (step, slot, staff in list order, backup) or None and why."""
        if not isinstance(row, dict):
            return None, f"row {k + 1} is not an object"
        try:  # the usual row: each name as the instance spells it, read at once
            names = [lk["candidate"].exact[row["candidate"]], lk["stage"].exact[row["stage"]],
                     lk["slot"].exact[row["slot"]]]  # fmt: skip
        except (KeyError, TypeError):  # a name missing, not a string or spelled otherwise
            names = []
            for field in ("candidate", "stage", "slot"):
                text = row.get(field)
                if not isinstance(text, str):
                    return None, f"row {k + 1} needs a string field '{field}'"
                hit = lk[field].find(text)
                if hit is None:
                    return None, f"row {k + 1} names unknown {field} {text[:40]!r}"
                names.append(hit)
        c, s, slot = names
        given = row.get("staff")
        if not isinstance(given, list):
            return None, f"row {k + 1} needs 'staff', a list of staff names"
        for text in given:
            if not isinstance(text, str):
                return None, f"row {k + 1} needs 'staff', a list of staff names"
        staff_names = lk["staff"]
        exact = staff_names.exact
        team: list[str] = []
        for text in given:
            hit = exact.get(text)
            if hit is None:
                hit = staff_names.find(text)
            if hit is None:
                return None, f"row {k + 1} names unknown staff member {text[:40]!r}"
            if hit in team:
                return None, f"row {k + 1} names {hit} twice"
            team.append(hit)
        size = d.stage_by_id[s].staff
        if len(team) != size:
            return None, f"row {k + 1}: the {s} is run by {size} staff members, not {len(team)}"
        b = None
        if need_backup:
            text = row.get("backup")
            b = lk["staff"].find(text) if isinstance(text, str) else None
            if b is None:
                return None, f"row {k + 1} needs a 'backup' staff member from the staff list"
        ordered = tuple(sorted(team, key=d.staff_number.__getitem__))
        return ((c, s), slot, ordered, b), ""

    def objective_value(self, d: RecruitmentData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: RecruitmentData, plan: Plan) -> dict[str, dict[str, int]]:
        return {
            "load": {p.id: load(plan, p.id) for p in d.staff},
            "finish": {c.id: final_slot(d, plan, c.id) for c in d.candidates},
        }

    def existing(self, d: RecruitmentData, plan: Plan) -> list[tuple[str, str, str, list[str]]]:
        return [(c, s, plan.slot[c, s], list(plan.staff[c, s])) for c, s in d.steps]

    def plan_schema(self, d: RecruitmentData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        staff = [p.id for p in d.staff]
        props: dict[str, Any] = {
            "candidate": {"enum": [c.id for c in d.candidates]},
            "stage": {"enum": [s.id for s in d.stages]},
            "slot": {"enum": [s.id for s in d.slots]},
            "staff": {
                "type": "array",
                "items": {"enum": staff},
                "description": "the different staff members who run the stage, as many as the stage needs",
            },
        }
        if any(r.kind == "backup_staff" for r in rules):
            props["backup"] = {"enum": staff, "description": "who takes over if one of the stage's staff drops out"}
        row = {"type": "object", "properties": props, "required": list(props)}
        return {"type": "array", "items": row, "description": "every candidate's every stage exactly once"}

    def verification_schema(self, d: RecruitmentData) -> dict[str, Any]:
        return figures_schema({
            "load": ([p.id for p in d.staff], "for each staff member, the number of stages they run"),
            "finish": ([c.id for c in d.candidates], "for each candidate, the slot number of their final stage"),
        })  # fmt: skip

    def plan_json(self, d: RecruitmentData, plan: Plan) -> list[dict[str, Any]]:
        rows = []
        for step in d.steps:
            row: dict[str, Any] = {
                "candidate": step[0],
                "stage": step[1],
                "slot": plan.slot[step],
                "staff": list(plan.staff[step]),
            }
            if plan.backup is not None:
                row["backup"] = plan.backup[step]
            rows.append(row)
        return rows

    def neighbours(self, data: RecruitmentData, plan: Plan) -> Iterator[Plan]:
        """One move from ``plan`` (:func:`_moves`), for the kit's near misses."""
        return iter(_moves(data, plan))

    def baseline_plan(self, d: RecruitmentData, instance: Instance) -> Plan:
        """Candidate by candidate in listed order, each stage in the earliest slot after
        the previous one where enough qualified, available staff are free (the first ones
        listed); it ignores urgency, fees, gaps and panel composition."""
        busy: set[tuple[str, int]] = set()
        slots: dict[Step, str] = {}
        staff: dict[Step, tuple[str, ...]] = {}
        for c in d.candidates:
            t0 = 0
            for s in d.stages:
                t, team = self._first_fit(d, c, s, t0, busy)
                slots[c.id, s.id], staff[c.id, s.id] = d.slots[t].id, team
                busy |= {(x, t) for x in team}
                t0 = min(t + 1, len(d.slots) - 1)
        backup = None
        if any(r.kind == "backup_staff" for r in instance.rules):
            backup = {
                step: next((p.id for p in d.staff if p.id not in staff[step] and step[1] in p.stages), d.staff[0].id)
                for step in d.steps
            }
        return Plan(slots, staff, backup)

    @staticmethod
    def _first_fit(
        d: RecruitmentData, c: Candidate, s: Stage, t0: int, busy: set[tuple[str, int]]
    ) -> tuple[int, tuple[str, ...]]:
        for t in range(t0, len(d.slots)):
            if d.slots[t].id in c.unavailable:
                continue
            free = [
                p.id
                for p in d.staff
                if s.id in p.stages and d.slots[t].id not in p.unavailable and (p.id, t) not in busy
            ]
            if len(free) >= s.staff:
                return t, tuple(free[: s.staff])
        return t0, tuple(p.id for p in d.staff[: s.staff])


TASK = Recruitment()


# -- near misses (the `pbsolve perturb` hook's candidates) -----------------------------
def _moves(d: RecruitmentData, plan: Plan) -> list[Plan]:
    """Plans one move from ``plan``: one step in another slot, or one staff member of a
    step replaced by someone not on it."""
    num, out = d.staff_number, []
    for step in d.steps:
        out += [Plan({**plan.slot, step: s.id}, plan.staff, plan.backup) for s in d.slots if s.id != plan.slot[step]]
        team = plan.staff[step]
        for gone in team:
            for p in d.staff:
                if p.id not in team:
                    new = tuple(sorted([*(x for x in team if x != gone), p.id], key=num.__getitem__))
                    out.append(Plan(plan.slot, {**plan.staff, step: new}, plan.backup))
    return out
