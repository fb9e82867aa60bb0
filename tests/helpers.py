"""Shared test helpers: generating instances, enumerating plans, fixing plans into models."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from ortools.sat.python import cp_model

from pbsolve.checkers.scheduling.checks import Plan, evaluate
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.family import Draft, family
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASKS = ("meeting_planning", "course_timetabling", "exam_scheduling")


@cache
def instance_at(task: str, seed: int, index: int, size: str = "small", hard: bool = False, include: tuple[str, ...] = ()) -> Instance | None:
    opts = GenerateOptions(task=task, size=size, force_tiers=["hard"] if hard else [], include=list(include))
    return build_instance(seed, index, opts).instance


def draft_of(inst: Instance) -> Draft:
    return Draft(spec=inst.spec, data=inst.data, rules=list(inst.rules), objective=list(inst.objective))


def plan_of(inst: Instance, answer: dict) -> Plan:
    d = TimetableData.model_validate(inst.data)
    return {row["event"]: (d.slot_index[row["start"]], row["room"]) for row in answer["schedule"]}


def backups_of(answer: dict) -> dict[str, str] | None:
    rows = answer["schedule"]
    return {row["event"]: row["backup"] for row in rows} if rows and "backup" in rows[0] else None


def answer_of(inst: Instance, plan: Plan, objective: dict | None = None, backups: dict[str, str] | None = None) -> dict:
    d = TimetableData.model_validate(inst.data)
    rows = [{"event": e.id, "start": d.slots[plan[e.id][0]].id, "room": plan[e.id][1]} for e in d.events]
    if backups is not None:
        for row in rows:
            row["backup"] = backups[row["event"]]
    if objective is None:
        objective = evaluate(d, inst.rules, inst.objective, plan, backups)[1]
    return {"feasible": True, "schedule": rows, "objective": objective}


@dataclass(frozen=True)
class Outcome:
    """One complete assignment of the answer variables, judged by the checker alone."""

    plan: Plan
    backups: dict[str, str] | None
    satisfied: frozenset[str]
    values: tuple[int, ...]


def enumerate_outcomes(data: dict, rules: list[Rule], objective: list[ObjectiveTerm]) -> Iterator[Outcome]:
    d = TimetableData.model_validate(data)
    options = [[(s, r.id) for s in d.starts(e) for r in d.rooms] for e in d.events]
    with_backups = any(r.kind == "room_backup" for r in rules)
    backup_options = itertools.product(*[[r.id for r in d.rooms]] * len(d.events)) if with_backups else [None]
    backup_options = list(backup_options)
    for combo in itertools.product(*options):
        plan = {e.id: c for e, c in zip(d.events, combo)}
        for bs in backup_options:
            backups = dict(zip([e.id for e in d.events], bs)) if bs is not None else None
            verdicts, values = evaluate(d, rules, objective, plan, backups)
            ok = frozenset(r for r, (passed, _) in verdicts.items() if passed)
            yield Outcome(plan, backups, ok, tuple(values.values()))


def all_plans(inst: Instance) -> Iterator[Plan]:
    d = TimetableData.model_validate(inst.data)
    options = [[(s, r.id) for s in d.starts(e) for r in d.rooms] for e in d.events]
    for combo in itertools.product(*options):
        yield {e.id: c for e, c in zip(d.events, combo)}


def single_moves(inst: Instance, plan: Plan) -> Iterator[Plan]:
    """Every plan that differs from ``plan`` in one event's start or room."""
    d = TimetableData.model_validate(inst.data)
    for e in d.events:
        for s in d.starts(e):
            for r in d.rooms:
                if (s, r.id) != plan[e.id]:
                    yield {**plan, e.id: (s, r.id)}


def model_verdict(
    inst: Instance, plan: Plan, rule_ids: list[str], backups: dict[str, str] | None = None
) -> tuple[bool, dict[str, int]]:
    """Does the solver model accept this plan with only these rules on? Also its objective figures."""
    sm = family(inst.family).build_model(draft_of(inst))
    chosen = {f"x[{eid},{s},{room}]" for eid, (s, room) in plan.items()}
    chosen |= {f"b[{eid},{room}]" for eid, room in (backups or {}).items()}
    for lit in sm.answer_literals:
        if lit.name.startswith("b[") and backups is None:
            continue
        sm.model.add(lit == (1 if lit.name in chosen else 0))
    for rid, lit in sm.rule_literals.items():
        sm.model.add(lit == (1 if rid in rule_ids else 0))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.solve(sm.model)
    assert status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE)
    if status == cp_model.INFEASIBLE:
        return False, {}
    return True, {tid: int(solver.value(expr)) for tid, expr, _ in sm.objective_terms}
