"""Checks for Student Grouping answers: a partition of the class into unlabelled groups.

Groups have no names, so an answer is read as a set partition: the order of the groups
and of the names inside a group never matters. Where a figure needs group numbers (the
grouping code), groups are numbered in the order of their first-listed student.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from pbsolve.checker_kit import OK, lookup
from pbsolve.checkers.allocation import rule_params as rp
from pbsolve.checkers.allocation.common import TaskChecker
from pbsolve.checkers.allocation.data import GroupingData
from pbsolve.checking import Check, figures_schema, norm
from pbsolve.kit import KindRegistry
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import NoParams, Params, as_model
from pbsolve.schema import Instance, ObjectiveTerm, Rule

Plan = tuple[tuple[str, ...], ...]  # canonical: members in list order, groups by first member
CHECKS: KindRegistry[Check] = KindRegistry("check")


check = CHECKS.register


def canonical(d: GroupingData, groups: list[list[str]] | tuple[tuple[str, ...], ...]) -> Plan:
    pos = d.position
    inner = [tuple(sorted(g, key=pos.__getitem__)) for g in groups]
    return tuple(sorted(inner, key=lambda g: pos[g[0]] if g else len(pos)))


def group_of(plan: Plan) -> dict[str, int]:
    return {s: k for k, g in enumerate(plan) for s in g}


def skill_totals(d: GroupingData, plan: Plan) -> list[int]:
    skill = d.skill_of.__getitem__
    return [sum(map(skill, g)) for g in plan]


# -- rule checks -----------------------------------------------------------------------
@check("group_size")
def _group_size(d: GroupingData, plan: Plan, p: rp.GroupSize) -> Verdict:
    for g in plan:
        if not p.min <= len(g) <= p.max:
            return False, f"the group of {g[0]} has {len(g)} students"
    return OK


@check("apart")
def _apart(d: GroupingData, plan: Plan, p: rp.Apart) -> Verdict:
    where = group_of(plan)
    for a, b in p.pairs:
        if where[a] == where[b]:
            return False, f"{a} and {b} are in the same group"
    return OK


@check("together")
def _together(d: GroupingData, plan: Plan, p: rp.Together) -> Verdict:
    where = group_of(plan)
    for a, b in p.pairs:
        if where[a] != where[b]:
            return False, f"{a} and {b} are in different groups"
    return OK


@check("leader_floor")
def _leader_floor(d: GroupingData, plan: Plan, p: rp.LeaderFloor) -> Verdict:
    for g in plan:
        if not any(d.student_by_id[s].leadership >= p.level for s in g):
            return False, f"the group of {g[0]} has nobody with leadership {p.level} or more"
    return OK


@check("track_cap")
def _track_cap(d: GroupingData, plan: Plan, p: rp.TrackCap) -> Verdict:
    track_of = d.track_of
    for g in plan:
        counts: dict[str, int] = {}
        for s in g:
            counts[track_of[s]] = counts.get(track_of[s], 0) + 1
        for track in d.tracks:
            n = counts.get(track, 0)
            if n > p.max:
                return False, f"the group of {g[0]} has {n} {track} students (at most {p.max})"
    return OK


@check("skill_floor")
def _skill_floor(d: GroupingData, plan: Plan, p: rp.SkillFloor) -> Verdict:
    for g, total in zip(plan, skill_totals(d, plan)):
        if total < p.min:
            return False, f"the group of {g[0]} has skill total {total} (at least {p.min})"
    return OK


@check("skill_balance")
def _skill_balance(d: GroupingData, plan: Plan, p: rp.SkillBalance) -> Verdict:
    totals = skill_totals(d, plan)
    if max(totals) - min(totals) > p.max:
        return False, f"group skill totals range from {min(totals)} to {max(totals)}, more than {p.max} apart"
    return OK


@check("diversity")
def _diversity(d: GroupingData, plan: Plan, p: rp.Diversity) -> Verdict:
    for g in plan:
        n = len({d.student_by_id[s].track for s in g})
        if n < p.min:
            return False, f"the group of {g[0]} mixes {n} tracks (at least {p.min})"
    return OK


@check("no_isolation")
def _no_isolation(d: GroupingData, plan: Plan, p: NoParams) -> Verdict:
    for g in plan:
        for s in g:
            track = d.student_by_id[s].track
            if sum(1 for o in g if d.student_by_id[o].track == track) == 1:
                return False, f"{s} is the only {track} student in their group"
    return OK


@check("wish_guarantee")
def _wish_guarantee(d: GroupingData, plan: Plan, p: rp.WishGuarantee) -> Verdict:
    where = group_of(plan)
    for s in p.students:
        if not any(where[w] == where[s] for w in d.student_by_id[s].wishes):
            return False, f"{s} gets none of their wishes"
    return OK


@check("mentor")
def _mentor(d: GroupingData, plan: Plan, p: rp.Mentor) -> Verdict:
    for g in plan:
        mentors = [s for s in g if not d.student_by_id[s].newcomer and d.student_by_id[s].leadership >= p.level]
        for s in g:
            if d.student_by_id[s].newcomer and not mentors:
                return False, f"newcomer {s} has no mentor in their group"
    return OK


@check("dropout_robust")
def _dropout_robust(d: GroupingData, plan: Plan, p: rp.DropoutRobust) -> Verdict:
    """Simulates each student dropping out on their own: every group must still have a
    student with leadership at the level."""
    for gone in d.students:
        for g in plan:
            if not any(d.student_by_id[s].leadership >= p.level for s in g if s != gone.id):
                return False, f"if {gone.id} dropped out, the group of {g[0]} would have no leader"
    return OK


# -- objective -------------------------------------------------------------------------
def together_pairs(d: GroupingData, plan: Plan) -> set[tuple[str, str]]:
    pos = d.position
    return {(a, b) if pos[a] < pos[b] else (b, a) for g in plan for a, b in combinations(g, 2)}


def objective_value(d: GroupingData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind  # read once: the chain below tests it several times
    if kind == "unmet_wishes":
        where = group_of(plan)
        return sum(1 for a, b in d.wish_pairs if where[a] != where[b])
    if kind == "skill_spread":
        totals = skill_totals(d, plan)
        return max(totals) - min(totals)
    if kind == "grouping_code":
        where = group_of(plan)
        return int("".join(str(where[s.id] + 1) for s in d.students))
    if kind == "changes":
        old = together_pairs(d, canonical(d, as_model(tp, rp.CurrentGroups).existing))
        return len(old ^ together_pairs(d, plan))
    raise ValueError(f"unknown objective kind {term.kind!r}")


class StudentGrouping(TaskChecker):
    task = "student_grouping"
    plan_key = "groups"
    plan_text = "a list of exactly the stated number of groups, each a list of student names, every student in exactly one group"
    data_type = GroupingData
    checks = CHECKS
    rule_params = rp.RULE_PARAMS["student_grouping"]
    term_params = rp.TERM_PARAMS["student_grouping"]

    def lookups(self, d: GroupingData) -> dict[str, str]:
        return lookup([s.id for s in d.students])

    def read_plan(
        self, d: GroupingData, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Plan | None, str]:
        groups = section.get("groups") if isinstance(section, dict) else None
        if not isinstance(groups, list):
            return None, "'groups' is missing or not a list"
        if len(groups) != d.groups:
            return None, f"there must be exactly {d.groups} groups, not {len(groups)}"
        seen: set[str] = set()
        out: list[list[str]] = []
        exact = lk.exact
        for k, g in enumerate(groups):
            if not isinstance(g, list) or not g or not all(isinstance(s, str) for s in g):
                return None, f"group {k + 1} must be a non-empty list of student names"
            members = []
            for name in g:
                s = exact.get(name)
                if s is None:
                    s = lk.get(norm(name))
                if s is None:
                    return None, f"group {k + 1} names unknown student {name[:40]!r}"
                if s in seen:
                    return None, f"{s} appears more than once"
                seen.add(s)
                members.append(s)
            out.append(members)
        missing = [s.id for s in d.students if s.id not in seen]
        if missing:
            return None, f"students in no group: {', '.join(missing)}"
        return canonical(d, out), "complete grouping"

    def objective_value(self, d: GroupingData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: GroupingData, plan: Plan) -> dict[str, dict[str, int]]:
        where, totals = group_of(plan), skill_totals(d, plan)
        return {
            "group_skill": {s.id: totals[where[s.id]] for s in d.students},
            "wishes_met": {s.id: sum(1 for w in s.wishes if where[w] == where[s.id]) for s in d.students},
        }

    def existing(self, d: GroupingData, plan: Plan) -> list[list[str]]:
        return [list(g) for g in plan]

    def plan_schema(self, d: GroupingData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        return {
            "type": "array",
            "items": {"type": "array", "items": {"enum": [s.id for s in d.students], "title": "student"}},
            "description": f"exactly {d.groups} groups, each a list of student names; every student in exactly one "
            "group (groups have no names: their order and the order inside a group do not matter)",
        }

    def verification_schema(self, d: GroupingData) -> dict[str, Any]:
        names = [s.id for s in d.students]
        return figures_schema({
            "group_skill": (names, "for each student, the skill total of their group"),
            "wishes_met": (names, "for each student, how many of their wishes your grouping grants"),
        })  # fmt: skip

    def plan_json(self, d: GroupingData, plan: Plan) -> list[list[str]]:
        return [list(g) for g in plan]

    def baseline_plan(self, d: GroupingData, instance: Instance) -> Plan:
        """Deal students out in list order, round robin."""
        groups: list[list[str]] = [[] for _ in range(d.groups)]
        for k, s in enumerate(d.students):
            groups[k % d.groups].append(s.id)
        return canonical(d, groups)


TASK = StudentGrouping()
