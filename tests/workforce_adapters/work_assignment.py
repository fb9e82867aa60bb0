"""The registry suite's knowledge of Work Assignment Scheduling: its answer variables,
single moves (a task's worker, day or backup changed) and every plan of a tiny instance."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.workforce.work_assignment import TASK_ID, Plan, WorkData
from pbsolve.schema import Instance, Rule
from tests.workforce_adapters import TaskAdapter


class WorkAssignmentAdapter(TaskAdapter):
    task = TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> WorkData:
        return WorkData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        out = {f"x[{t},{w},{day}]": 1 for t, (w, day) in plan.assign.items()}
        return out | {f"b[{t},{w}]": 1 for t, w in (plan.backup or {}).items()}

    def fixes(self, name: str, plan: Any) -> bool:
        return plan.backup is not None or not name.startswith("b[")

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        d = self._data(inst)
        for t in d.tasks:
            w, day = plan.assign[t.id]
            for w2 in d.workers:
                if w2.id != w:
                    yield Plan({**plan.assign, t.id: (w2.id, day)}, plan.backup)
            for day2 in d.days:
                if day2 != day:
                    yield Plan({**plan.assign, t.id: (w, day2)}, plan.backup)
            if plan.backup is not None:
                for b in d.workers:
                    if b.id != plan.backup[t.id]:
                        yield Plan(plan.assign, {**plan.backup, t.id: b.id})

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self._data(inst, data)
        cells = [(w.id, day) for w in d.workers for day in d.days]
        ids = [t.id for t in d.tasks]
        backups = any(r.kind == "worker_backup" for r in rules)
        for combo in itertools.product(cells, repeat=len(ids)):
            assign = dict(zip(ids, combo))
            if not backups:
                yield Plan(assign)
                continue
            for bs in itertools.product([w.id for w in d.workers], repeat=len(ids)):
                yield Plan(assign, dict(zip(ids, bs)))

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"task": t, "worker": w, "day": day} for t, (w, day) in existing.items()]

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        return Plan({t: (w, day) for t, (w, day) in existing.items()})

    def robust_reference_ok(self, inst: Instance) -> bool:
        rows = inst.reference.get("assignments", []) if isinstance(inst.reference, dict) else []
        return all("backup" in r for r in rows)


ADAPTER = WorkAssignmentAdapter()
