"""The registry suite's knowledge of Warehouse Planning: its answer variables (one
Boolean per item and slot), single moves (one item moved or two swapped) and every plan
of a tiny instance (every slot for every item, shared slots included: exclusivity is a
rule, not the format)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.project.warehouse import TASK_ID, Plan, WarehouseData, neighbours
from pbsolve.schema import Instance, Rule
from tests.project_adapters import TaskAdapter


class WarehousePlanningAdapter(TaskAdapter):
    task = TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> WarehouseData:
        return WarehouseData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        return {f"x[{i},{s}]": 1 for i, s in plan.slot.items()}

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        return neighbours(self._data(inst), plan)

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self._data(inst, data)
        ids = [i.id for i in d.items]
        for combo in itertools.product([s.id for s in d.slots], repeat=len(ids)):
            yield Plan(dict(zip(ids, combo)))

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"item": i, "slot": s} for i, s in existing.items()]

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        return Plan(dict(existing))


ADAPTER = WarehousePlanningAdapter()
