"""Helpers for the Allocation & Matching tests: generating instances, reading and writing
plans, enumerating every plan of tiny instances, single moves, and fixing a plan into
the CP-SAT model (the allocation counterpart of tests/helpers.py)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from ortools.sat.python import cp_model

from pbsolve.checkers.allocation import TASKS as CHECKERS
from pbsolve.checkers.allocation.common import TaskChecker
from pbsolve.checkers.allocation.education import Plan as EduPlan
from pbsolve.checkers.allocation.grouping import canonical
from pbsolve.family import Draft, family
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASKS = ("procurement_planning", "material_allocation", "educational_resource_planning", "student_grouping")
MILP_TASKS = ("procurement_planning", "material_allocation")


@cache
def instance_at(
    task: str, seed: int, index: int, size: str = "small", hard: bool = False, include: tuple[str, ...] = ()
) -> Instance | None:
    opts = GenerateOptions(task=task, size=size, force_tiers=["hard"] if hard else [], include=list(include))
    return build_instance(seed, index, opts).instance


def find(task: str, seed: int, size: str = "small", include: tuple[str, ...] = (), status: str = "optimal", tries: int = 12) -> Instance | None:
    """The first instance of this status (and carrying every included mechanism) at this seed."""
    for index in range(tries):
        inst = instance_at(task, seed, index, size, False, include)
        if inst is None or inst.certificate.status != status:
            continue
        if all(k in inst.mechanisms or k == "infeasibility_detection" for k in include):
            return inst
    return None


def draft_of(inst: Instance, data: dict | None = None, rules: list[Rule] | None = None, objective: list[ObjectiveTerm] | None = None) -> Draft:
    return Draft(
        spec=inst.spec,
        data=inst.data if data is None else data,
        rules=list(inst.rules) if rules is None else rules,
        objective=list(inst.objective) if objective is None else objective,
    )


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


def model_verdict(inst: Instance, plan: Any, rule_ids: list[str], data: dict | None = None,
                  rules: list[Rule] | None = None, objective: list[ObjectiveTerm] | None = None) -> tuple[bool, dict[str, int]]:  # fmt: skip
    """Does the solver model accept this plan with only these rules on? Also its figures."""
    sm = family("allocation").build_model(draft_of(inst, data, rules, objective))
    values = assignment(inst, plan)
    for var in [*sm.answer_literals, *sm.answer_ints]:
        sm.model.add(var == values.get(var.name, 0))
    for rid, lit in sm.rule_literals.items():
        sm.model.add(lit == (1 if rid in rule_ids else 0))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.solve(sm.model)
    assert status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE), solver.status_name(status)
    if status == cp_model.INFEASIBLE:
        return False, {}
    return True, {tid: int(solver.value(expr)) for tid, expr, _ in sm.objective_terms}


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


@dataclass(frozen=True)
class Outcome:
    """One complete plan, judged by the checker alone."""

    key: str
    plan: Any
    satisfied: frozenset[str]
    values: tuple[int, ...]


def plan_key(inst: Instance, plan: Any) -> str:
    return repr(sorted(assignment(inst, plan).items()))


def enumerate_outcomes(inst: Instance, rules: list[Rule] | None = None, objective: list[ObjectiveTerm] | None = None, data: dict | None = None) -> list[Outcome]:
    rules = list(inst.rules) if rules is None else rules
    objective = list(inst.objective) if objective is None else objective
    tc = tc_of(inst.task)
    d = data_of(inst, data)
    out = []
    for plan in all_plans(inst, data, rules):
        verdicts, values = tc.evaluate(d, rules, objective, plan)
        ok = frozenset(r for r, (passed, _) in verdicts.items() if passed)
        out.append(Outcome(plan_key(inst, plan), plan, ok, tuple(values[t.id] for t in objective)))
    return out
