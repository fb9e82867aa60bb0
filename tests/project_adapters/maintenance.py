"""The registry suite's knowledge of IT System Maintenance Planning: its answer variables
(one start hour per task), single moves (one task moved to any other start hour) and every plan of a
tiny instance (every start hour of every task within the horizon)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.project.maintenance import TASK_ID, MaintData
from pbsolve.schema import Instance, Rule
from tests.project_adapters import TaskAdapter


class MaintenanceAdapter(TaskAdapter):
    task = TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> MaintData:
        return MaintData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        return {f"s[{t}]": start for t, start in plan.items() if start}

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        d = self._data(inst)
        for t in d.tasks:
            for s in range(d.horizon - t.duration + 1):  # any hour: a freeze or a rest hour may be far
                if s != plan[t.id]:
                    yield {**plan, t.id: s}

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self._data(inst, data)
        ids = [t.id for t in d.tasks]
        for combo in itertools.product(*[range(d.horizon - t.duration + 1) for t in d.tasks]):
            yield dict(zip(ids, combo))

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"task": t, "start": s} for t, s in existing.items()]

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        return dict(existing)

    def enumerable(self, inst: Instance) -> bool:
        d = self._data(inst)
        n = 1
        for t in d.tasks:
            n *= d.horizon - t.duration + 1
        return n <= 20000


ADAPTER = MaintenanceAdapter()
