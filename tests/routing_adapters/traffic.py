"""The registry suite's knowledge of Urban Traffic Planning: its answer variables (the
vehicles of every route but each flow's last, which the demand fixes, and the backup
literals), single moves (a vehicle, or all of a route's vehicles, moved to a sibling
route; a backup changed) and every plan of a tiny instance."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.routing.traffic import TASK_ID, Plan, TrafficData, neighbours
from pbsolve.schema import Instance, Rule
from tests.routing_adapters import TaskAdapter


class UrbanTrafficAdapter(TaskAdapter):
    task = TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> TrafficData:
        return TrafficData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        out = {f"x[{r},{p}]": v for (r, p), v in plan.vehicles.items() if v}
        return out | {f"y[{f},{r}]": 1 for f, r in (plan.backup or {}).items()}

    def fixes(self, name: str, plan: Any) -> bool:
        return plan.backup is not None or not name.startswith("y[")

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        return neighbours(self._data(inst), plan)

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self._data(inst, data)
        backups = any(r.kind == "incident_backup" for r in rules)
        per_cell: list[list[dict[tuple[str, str], int]]] = []
        for f in d.flows:
            rs = [r.id for r in d.routes_of[f.id]]
            for i, p in enumerate(d.periods):
                splits = []
                for counts in itertools.product(range(f.demand[i] + 1), repeat=len(rs) - 1):
                    if sum(counts) <= f.demand[i]:
                        last = f.demand[i] - sum(counts)
                        splits.append({(r, p): v for r, v in zip(rs, [*counts, last])})
                per_cell.append(splits)
        for combo in itertools.product(*per_cell):
            vehicles = {k: v for part in combo for k, v in part.items()}
            if not backups:
                yield Plan(vehicles)
                continue
            for bs in itertools.product(*[[r.id for r in d.routes_of[f.id]] for f in d.flows]):
                yield Plan(vehicles, dict(zip([f.id for f in d.flows], bs)))

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        d = self._data(inst)
        cells = {(r, p): v for r, p, v in existing}
        return self.tc().plan_json(d, Plan({(r.id, p): cells.get((r.id, p), 0) for r in d.routes for p in d.periods}))

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        d = self._data(inst)
        cells = {(r, p): v for r, p, v in existing}
        return Plan({(r.id, p): cells.get((r.id, p), 0) for r in d.routes for p in d.periods})

    def robust_reference_ok(self, inst: Instance) -> bool:
        flows = inst.reference.get("flows", {}) if isinstance(inst.reference, dict) else {}
        return bool(flows) and all("backup" in split for split in flows.values())


ADAPTER = UrbanTrafficAdapter()
