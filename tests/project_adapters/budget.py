"""The registry suite's knowledge of Financial Budgeting: its answer variables (one amount
per item and period), single moves (one amount changed within its item's cap) and every
plan of a tiny instance (every amount of every item in every period)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.project.budget import TASK_ID, BudgetData, Plan, neighbours
from pbsolve.schema import Instance, Rule
from tests.project_adapters import TaskAdapter


class FinancialBudgetingAdapter(TaskAdapter):
    task = TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> BudgetData:
        return BudgetData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        return {f"x[{i},{t}]": a for i, xs in plan.amounts.items() for t, a in enumerate(xs, 1) if a}

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        return neighbours(self._data(inst), plan)

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self._data(inst, data)
        rows = [list(itertools.product(range(i.cap + 1), repeat=d.periods)) for i in d.items]
        ids = [i.id for i in d.items]
        for combo in itertools.product(*rows):
            yield Plan(dict(zip(ids, combo)))

    def enumerable(self, inst: Instance) -> bool:
        d = self._data(inst)
        count = 1
        for i in d.items:
            count *= (i.cap + 1) ** d.periods
        return count <= 20_000

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"item": i, "amounts": list(xs)} for i, xs in existing.items()]

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        return Plan({i: tuple(xs) for i, xs in existing.items()})


ADAPTER = FinancialBudgetingAdapter()
