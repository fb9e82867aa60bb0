"""The registry suite's knowledge of Shift & Duty Scheduling: the CP-SAT variables of a
roster, single moves (one person-day changed) and every roster of a tiny instance."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.workforce.shift_duty import OFF, Plan, with_shift
from pbsolve.schema import Instance, Rule
from tests.workforce_adapters import TaskAdapter


class ShiftDutyAdapter(TaskAdapter):
    task = "shift_duty_scheduling"

    def assignment(self, inst: Instance, plan: Plan) -> dict[str, int]:
        d = self.tc().data_type.model_validate(inst.data)
        return {f"x[{q},{x},{s}]": 1 for q, x, s in plan.rows(d)}  # type: ignore[attr-defined]

    def single_moves(self, inst: Instance, plan: Plan) -> Iterator[Plan]:
        """Every roster that differs from ``plan`` on one person-day (another shift, or off)."""
        d: Any = self.tc().data_type.model_validate(inst.data)
        for q in d.staff:
            for x in d.days:
                now = plan.of(q.id, x.id)
                for s in [OFF, *[s.id for s in d.shifts]]:
                    if s != now:
                        yield with_shift(plan, q.id, x.id, s)

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Plan]:
        d: Any = self.tc().data_type.model_validate(inst.data if data is None else data)
        cells = [(q.id, x.id) for q in d.staff for x in d.days]
        options = [OFF, *[s.id for s in d.shifts]]
        for combo in itertools.product(options, repeat=len(cells)):
            shifts: dict[str, dict[str, str]] = {}
            for (q, x), s in zip(cells, combo):
                if s != OFF:
                    shifts.setdefault(q, {})[x] = s
            yield Plan(shifts)

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"person": q, "day": x, "shift": s} for q, x, s in existing]


ADAPTER = ShiftDutyAdapter()
