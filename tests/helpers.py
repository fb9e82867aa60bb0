"""Helpers for the scheduling tests: reading and writing timetable plans and their single
moves (reached by the registry suite through tests/family_adapters.py)."""

from __future__ import annotations

from collections.abc import Iterator

from pbsolve.checkers.scheduling.checks import Plan, evaluate
from pbsolve.checkers.scheduling.instance_data import Slot, TimetableData
from pbsolve.family import family
from pbsolve.schema import Instance
from tests.instances import draft_of, instance_at  # noqa: F401 (re-exported)

TASKS = tuple(t.id for t in family("scheduling").spec.tasks)


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


def single_moves(inst: Instance, plan: Plan) -> Iterator[Plan]:
    """Every plan that differs from ``plan`` in one event's start or room."""
    d = TimetableData.model_validate(inst.data)
    for e in d.events:
        for s in d.starts(e):
            for r in d.rooms:
                if (s, r.id) != plan[e.id]:
                    yield {**plan, e.id: (s, r.id)}


def encoder_accepts(data: TimetableData, kind: str, params: object, plan: Plan) -> bool:
    """Whether the CP-SAT encoding of one rule (its literal on) admits this plan: the
    solver-side verdict a rule's check is held against."""
    from ortools.sat.python import cp_model

    from pbsolve.models.scheduling.timetable_model import ENCODERS, TimetableModel

    tm = TimetableModel(data)
    lit = tm.m.new_bool_var("rule")
    tm.m.add(lit == 1)
    ENCODERS[kind](tm, params, lit)
    for eid, (start, room) in plan.items():
        tm.m.add(tm.x[eid, start, room] == 1)
    return cp_model.CpSolver().solve(tm.m) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def hour_periods(days: tuple[str, ...] = ("Mon", "Tue"), first: int = 9, last: int = 12) -> tuple[Slot, ...]:
    """One-hour periods labelled by their start ("Mon 09:00"), numbered through the days:
    the agenda slots the place-rule tests build their small timetables on."""
    per_day = last - first + 1
    return tuple(
        Slot(id=f"{day} {h:02d}:00", day=d, value=d * per_day + h - first + 1, end_label=f"{day} {h + 1:02d}:00")
        for d, day in enumerate(days)
        for h in range(first, last + 1)
    )
