"""The registry suite's knowledge of Project Planning: its answer variables (one start day
per activity), single moves (one activity's start changed) and every plan of a tiny
instance (every start day of every activity within the horizon)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.project.activities import TASK_ID, Plan, ProjectData
from pbsolve.schema import Instance, Rule
from tests.project_adapters import TaskAdapter


class ProjectPlanningAdapter(TaskAdapter):
    task = TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> ProjectData:
        return ProjectData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        return {f"s[{a}]": s for a, s in plan.start.items()}

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        d = self._data(inst)
        for a in d.activities:
            for s in range(d.horizon - a.duration + 1):
                if s != plan.start[a.id]:
                    yield Plan({**plan.start, a.id: s})

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self._data(inst, data)
        ids = [a.id for a in d.activities]
        ranges = [range(d.horizon - a.duration + 1) for a in d.activities]
        for combo in itertools.product(*ranges):
            yield Plan(dict(zip(ids, combo)))

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"activity": a, "start": s} for a, s in existing.items()]

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        return Plan(dict(existing))


ADAPTER = ProjectPlanningAdapter()
