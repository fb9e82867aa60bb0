"""The registry suite's knowledge of Power Dispatch Planning: its answer variables (one
output per unit and hour, one battery flow per hour), single moves (one figure changed)
and every plan of a tiny instance (every output of every unit in every hour, every
battery flow sequence that keeps the charge within capacity)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.project import power as pw
from pbsolve.checkers.project.power import TASK_ID, Plan, PowerData
from pbsolve.schema import Instance, Rule
from tests.project_adapters import TaskAdapter

MAX_PLANS = 30_000  # plans the brute-force suite judges per instance at most


class PowerDispatchAdapter(TaskAdapter):
    task = TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> PowerData:
        return PowerData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        out = {f"p[{u},{h}]": x for u, xs in plan.output.items() for h, x in enumerate(xs)}
        if inst.data.get("battery") is not None:
            out |= {f"b[{h}]": x for h, x in enumerate(plan.battery)}
        return out

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        return pw.neighbours(self._data(inst), plan)

    def _flows(self, d: PowerData) -> list[tuple[int, ...]]:
        if d.battery is None:
            return [(0,) * d.hours]
        b = d.battery
        options = itertools.product(range(-b.charge, b.discharge + 1), repeat=d.hours)
        return [f for f in options if not pw.battery_ok(d, f)]

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self._data(inst, data)
        ids = [u.id for u in d.units]
        rows = [list(itertools.product(range(u.pmax + 1), repeat=d.hours)) for u in d.units]
        flows = self._flows(d)
        for combo in itertools.product(*rows):
            output = dict(zip(ids, combo))
            for f in flows:
                yield Plan(output, f)

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        d = self._data(inst)
        return pw.TASK.plan_json(d, self.existing_plan(inst, existing))

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        d = self._data(inst)
        flows = tuple(existing.get(pw.BATTERY, [0] * d.hours))
        return Plan({u.id: tuple(existing[u.id]) for u in d.units}, flows)

    def enumerable(self, inst: Instance) -> bool:
        d = self._data(inst)
        plans = math.prod((u.pmax + 1) ** d.hours for u in d.units) * len(self._flows(d))
        return plans <= MAX_PLANS


ADAPTER = PowerDispatchAdapter()
