"""The registry suite's knowledge of Disaster Evacuation Planning: its answer variables
(x[group,route,period], y[group,route] for backups), single moves (a group's route,
departure period or backup changed) and every plan of a tiny instance."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.emergency.evacuation import TASK_ID, EvacData, Plan
from pbsolve.schema import Instance, Rule
from tests.emergency_adapters import TaskAdapter


class EvacuationAdapter(TaskAdapter):
    task = TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> EvacData:
        return EvacData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        out = {f"x[{g},{r},{p}]": 1 for g, (r, p) in plan.assign.items()}
        return out | {f"y[{g},{r}]": 1 for g, r in (plan.backup or {}).items()}

    def fixes(self, name: str, plan: Any) -> bool:
        return plan.backup is not None or not name.startswith("y[")

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        d = self._data(inst)
        for g in d.groups:
            route, depart = plan.assign[g.id]
            for r in d.routes_of[g.id]:
                if r.id != route:
                    yield Plan({**plan.assign, g.id: (r.id, depart)}, plan.backup)
            for t in range(1, d.periods + 1):
                if t != depart:
                    yield Plan({**plan.assign, g.id: (route, t)}, plan.backup)
            if plan.backup is not None:
                for r in d.routes_of[g.id]:
                    if r.id != plan.backup[g.id]:
                        yield Plan(plan.assign, {**plan.backup, g.id: r.id})

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self._data(inst, data)
        ids = [g.id for g in d.groups]
        options = [[(r.id, t) for r in d.routes_of[g] for t in range(1, d.periods + 1)] for g in ids]
        backups = any(r.kind == "backup_route" for r in rules)
        for combo in itertools.product(*options):
            assign = dict(zip(ids, combo))
            if not backups:
                yield Plan(assign)
                continue
            for bs in itertools.product(*[[r.id for r in d.routes_of[g]] for g in ids]):
                yield Plan(assign, dict(zip(ids, bs)))

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"group": g, "route": r, "depart": t} for g, (r, t) in existing.items()]

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        return Plan({g: (r, int(t)) for g, (r, t) in existing.items()})

    def robust_reference_ok(self, inst: Instance) -> bool:
        rows = inst.reference.get("evacuation", []) if isinstance(inst.reference, dict) else []
        return all("backup" in r for r in rows)


ADAPTER = EvacuationAdapter()
