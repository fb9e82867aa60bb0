"""The registry suite's knowledge of Resource Scheduling (a job shop): its answer
variables (one start minute per operation), single moves (one start shifted by a minute
or two) and every plan of a tiny instance (every start from 0 to horizon - minutes)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.project.job_shop import TASK_ID, ShopData
from pbsolve.schema import Instance, Rule
from tests.project_adapters import TaskAdapter


class JobShopAdapter(TaskAdapter):
    task = TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> ShopData:
        return ShopData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        return {f"s[{op}]": start for op, start in plan.items() if start}

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        d = self._data(inst)
        for o in d.ops:
            for step in (-2, -1, 1, 2):
                s = plan[o.id] + step
                if 0 <= s <= d.horizon - o.duration:
                    yield {**plan, o.id: s}

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self._data(inst, data)
        ids = [o.id for o in d.ops]
        for combo in itertools.product(*[range(d.horizon - o.duration + 1) for o in d.ops]):
            yield dict(zip(ids, combo))

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"operation": op, "start": s} for op, s in existing.items()]

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        return dict(existing)


ADAPTER = JobShopAdapter()
