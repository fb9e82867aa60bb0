"""The registry suite's knowledge of Production Planning: its answer variables (the lots
q[line,product,period] of every run), single moves (one line-period set idle or to
another product and lot count) and every plan of a tiny instance (every line-period
idle or making any product in 1..max_lots lots)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.project.production import TASK_ID, Plan, ProductionData, neighbours
from pbsolve.schema import Instance, Rule
from tests.project_adapters import TaskAdapter


class ProductionPlanningAdapter(TaskAdapter):
    task = TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> ProductionData:
        return ProductionData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        return {f"q[{line},{p},{t}]": q for (line, t), (p, q) in plan.runs.items()}

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        return neighbours(self._data(inst), plan)

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self._data(inst, data)
        cells = [(x.id, t) for x in d.lines for t in range(1, d.periods + 1)]
        options: list[tuple[str, int] | None] = [None]
        options += [(p.id, q) for p in d.products for q in range(1, d.max_lots + 1)]
        for combo in itertools.product(options, repeat=len(cells)):
            yield Plan({c: o for c, o in zip(cells, combo) if o is not None})

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"line": line, "period": t, "product": p, "lots": q} for line, t, p, q in existing]

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        return Plan({(line, t): (p, q) for line, t, p, q in existing})

    def enumerable(self, inst: Instance) -> bool:
        d = self._data(inst)
        return (1 + len(d.products) * d.max_lots) ** (len(d.lines) * d.periods) <= 20000


ADAPTER = ProductionPlanningAdapter()
