"""Helpers for the Allocation & Matching tests: reading and writing plans, the CP-SAT
variables of a plan, single moves and every plan of tiny instances (reached by the
registry suite through tests/family_adapters.py)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.allocation import TASKS as CHECKERS
from pbsolve.checkers.allocation.common import TaskChecker
from pbsolve.checkers.allocation.education import Plan as EduPlan
from pbsolve.checkers.allocation.grouping import canonical
from pbsolve.schema import Instance, ObjectiveTerm, Rule
from tests import instances
from tests.instances import draft_of, instance_at  # noqa: F401 (re-exported)

TASKS = ("procurement_planning", "material_allocation", "educational_resource_planning", "student_grouping")
MILP_TASKS = ("procurement_planning", "material_allocation")


def find(task: str, seed: int, size: str = "small", include: tuple[str, ...] = (), status: str = "optimal", tries: int = 12) -> Instance | None:
    """The first instance of this status (and carrying every included mechanism) at this seed."""
    return instances.find(task, seed, size, include, status, tries, hard=False, unlisted=("infeasibility_detection",))


def tc_of(task: str) -> TaskChecker:
    return CHECKERS[task]


def data_of(inst: Instance, data: dict | None = None) -> Any:
    tc = tc_of(inst.task)
    return tc.data_type.model_validate(inst.data if data is None else data)


def plan_of(inst: Instance, answer: dict, rules: list[Rule] | None = None) -> Any:
    tc = tc_of(inst.task)
    d = data_of(inst)
    plan, why = tc.read_plan(d, answer, tc.lookups(d), list(inst.rules) if rules is None else rules)
    assert plan is not None, why
    return plan


def evaluate(inst: Instance, plan: Any, rules: list[Rule] | None = None, objective: list[ObjectiveTerm] | None = None, data: dict | None = None) -> tuple[dict, dict]:
    tc = tc_of(inst.task)
    return tc.evaluate(data_of(inst, data), list(inst.rules) if rules is None else rules, list(inst.objective) if objective is None else objective, plan)


def answer_of(inst: Instance, plan: Any, base: dict | None = None) -> dict:
    """An answer stating this plan and its own figures (other sections copied from ``base``)."""
    tc = tc_of(inst.task)
    d = data_of(inst)
    _, values = tc.evaluate(d, list(inst.rules), list(inst.objective), plan)
    return {**(base or {}), "feasible": True, tc.plan_key: tc.plan_json(d, plan), "objective": values}


# -- the answer variables of a plan ---------------------------------------------------
def assignment(inst: Instance, plan: Any, data: dict | None = None) -> dict[str, int]:
    """Variable name -> value of every non-zero answer variable of the CP-SAT model."""
    task = inst.task
    if task in ("procurement_planning", "material_allocation"):
        letter = "q" if task == "procurement_planning" else "x"
        return {f"{letter}[{','.join(str(p) for p in cell)}]": q for cell, q in plan.items()}
    if task == "educational_resource_planning":
        out = {}
        for lesson, (t, r) in plan.assign.items():
            out[f"t[{lesson},{t}]"] = 1
            out[f"r[{lesson},{r}]"] = 1
        for lesson, b in (plan.backup or {}).items():
            out[f"b[{lesson},{b}]"] = 1
        return out
    return {f"x[{s},{g}]": 1 for g, grp in enumerate(plan) for s in grp}


# -- single moves ----------------------------------------------------------------------
def single_moves(inst: Instance, plan: Any) -> Iterator[Any]:
    """Plans one small step from ``plan``: a quantity up or down, units moved to another
    cell, a lesson's teacher, room or backup changed, two students swapped or one moved."""
    d = data_of(inst)
    task = inst.task
    if task in ("procurement_planning", "material_allocation"):
        if task == "procurement_planning":
            cells, top = d.cells, {c: d.supplier_by_id[c[0]].capacity for c in d.cells}
        else:
            cells, top = d.cells, {c: d.depot_by_id[c[0]].stock[c[2]] for c in d.cells}
        for c in cells:
            for delta in (-5, -1, 1, 5):
                q = plan.get(c, 0) + delta
                if 0 <= q <= top[c]:
                    yield {**{k: v for k, v in plan.items() if k != c}, **({c: q} if q else {})}
        for a in cells:
            if plan.get(a, 0) == 0:
                continue
            same_kind = [b for b in cells if b != a and (b[1] == a[1] if task == "procurement_planning" else b[2] == a[2])]
            for b in same_kind:
                for share in (plan[a], (plan[a] + 1) // 2):  # all of it, or split it
                    moved = min(share, top[b] - plan.get(b, 0))
                    if moved > 0:
                        new = dict(plan)
                        new[a] -= moved
                        new[b] = new.get(b, 0) + moved
                        yield {k: v for k, v in new.items() if v}
        return
    if task == "educational_resource_planning":
        for x in d.lessons:
            t, r = plan.assign[x.id]
            for t2 in d.teachers:
                if t2.id != t:
                    yield EduPlan({**plan.assign, x.id: (t2.id, r)}, plan.backup)
            for r2 in d.rooms:
                if r2.id != r:
                    yield EduPlan({**plan.assign, x.id: (t, r2.id)}, plan.backup)
            if plan.backup is not None:
                for b in d.teachers:
                    if b.id != plan.backup[x.id]:
                        yield EduPlan(plan.assign, {**plan.backup, x.id: b.id})
        return
    groups = [list(g) for g in plan]
    for i, gi in enumerate(groups):
        for j, gj in enumerate(groups):
            if i >= j:
                continue
            for a in gi:
                for b in gj:
                    new = [list(g) for g in groups]
                    new[i][new[i].index(a)] = b
                    new[j][new[j].index(b)] = a
                    yield canonical(d, new)
    for i, gi in enumerate(groups):
        if len(gi) < 2:
            continue
        for a in gi:
            for j in range(len(groups)):
                if j != i:
                    new = [list(g) for g in groups]
                    new[i].remove(a)
                    new[j].append(a)
                    yield canonical(d, new)


# -- exhaustive enumeration of tiny instances -----------------------------------------
def all_plans(inst: Instance, data: dict | None = None, rules: list[Rule] | None = None) -> Iterator[Any]:
    """Every assignment of the answer variables (the model's domains), as checker plans."""
    d = data_of(inst, data)
    task = inst.task
    rules = list(inst.rules) if rules is None else rules
    if task in ("procurement_planning", "material_allocation"):
        cells = list(d.cells)
        if task == "procurement_planning":
            tops = [d.supplier_by_id[c[0]].capacity for c in cells]
        else:
            tops = [d.depot_by_id[c[0]].stock[c[2]] for c in cells]
        for combo in itertools.product(*[range(t + 1) for t in tops]):
            yield {c: q for c, q in zip(cells, combo) if q}
        return
    if task == "educational_resource_planning":
        pairs = [(t.id, r.id) for t in d.teachers for r in d.rooms]
        backups = any(r.kind == "teacher_backup" for r in rules)
        ids = [x.id for x in d.lessons]
        for combo in itertools.product(pairs, repeat=len(ids)):
            assign = dict(zip(ids, combo))
            if not backups:
                yield EduPlan(assign)
                continue
            for bs in itertools.product([t.id for t in d.teachers], repeat=len(ids)):
                yield EduPlan(assign, dict(zip(ids, bs)))
        return
    n, k = len(d.students), d.groups
    for rgs in _restricted_growth(n, k):
        groups: list[list[str]] = [[] for _ in range(k)]
        for s, g in zip(d.students, rgs):
            groups[g].append(s.id)
        yield canonical(d, groups)


def _restricted_growth(n: int, k: int) -> Iterator[tuple[int, ...]]:
    """Set partitions of n items into exactly k non-empty blocks, as canonical labels."""

    def grow(prefix: list[int], top: int) -> Iterator[tuple[int, ...]]:
        if len(prefix) == n:
            if top == k - 1:
                yield tuple(prefix)
            return
        for g in range(min(top + 2, k)):
            yield from grow([*prefix, g], max(top, g))

    yield from grow([0], 0)
