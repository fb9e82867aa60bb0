"""The registry suite's knowledge of Medical Resource Planning: its answer variables
(x, y, b Booleans and the start slots), single moves (a stage's doctor, room, start or
backup changed) and every plan of a tiny instance."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.emergency.medical import TASK_ID, MedicalData, Plan
from pbsolve.schema import Instance, Rule
from tests.emergency_adapters import TaskAdapter


class MedicalAdapter(TaskAdapter):
    task = TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> MedicalData:
        return MedicalData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        out: dict[str, int] = {}
        for s, (doc, room, start) in plan.assign.items():
            out[f"x[{s},{doc}]"] = 1
            out[f"y[{s},{room}]"] = 1
            out[f"start[{s}]"] = start
        return out | {f"b[{s},{doc}]": 1 for s, doc in (plan.backup or {}).items()}

    def fixes(self, name: str, plan: Any) -> bool:
        return plan.backup is not None or not name.startswith("b[")

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        d = self._data(inst)
        for s in d.stages:
            doc, room, start = plan.assign[s.id]
            for x in d.doctors:
                if x.id != doc:
                    yield Plan({**plan.assign, s.id: (x.id, room, start)}, plan.backup)
            for r in d.rooms:
                if r.id != room:
                    yield Plan({**plan.assign, s.id: (doc, r.id, start)}, plan.backup)
            for t in range(d.slots - s.duration + 1):
                if t != start:
                    yield Plan({**plan.assign, s.id: (doc, room, t)}, plan.backup)
            if plan.backup is not None:
                for x in d.doctors:
                    if x.id != plan.backup[s.id]:
                        yield Plan(plan.assign, {**plan.backup, s.id: x.id})

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self._data(inst, data)
        ids = [s.id for s in d.stages]
        options = [
            [(x.id, r.id, t) for x in d.doctors for r in d.rooms for t in range(d.slots - s.duration + 1)]
            for s in d.stages
        ]
        backups = any(r.kind == "backup_doctor" for r in rules)
        for combo in itertools.product(*options):
            assign = dict(zip(ids, combo))
            if not backups:
                yield Plan(assign)
                continue
            for bs in itertools.product([x.id for x in d.doctors], repeat=len(ids)):
                yield Plan(assign, dict(zip(ids, bs)))

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"stage": s, "doctor": doc, "room": room, "start": t} for s, (doc, room, t) in existing.items()]

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        return Plan({s: (doc, room, t) for s, (doc, room, t) in existing.items()})

    def robust_reference_ok(self, inst: Instance) -> bool:
        rows = inst.reference.get("schedule", []) if isinstance(inst.reference, dict) else []
        return all("backup" in r for r in rows)


ADAPTER = MedicalAdapter()
