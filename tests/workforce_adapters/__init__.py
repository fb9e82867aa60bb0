"""The registry suite's knowledge of each workforce task type: one module per task type,
each exposing ``ADAPTER`` (a :class:`TaskAdapter`), found by
:func:`pbsolve.kit.task_modules` (tests/family_adapters.py's ``Workforce`` dispatches to
them by task)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from pbsolve.checker_kit import PlanChecker
from pbsolve.kit import task_modules
from pbsolve.schema import Instance, Rule


class TaskAdapter:
    """One workforce task type's test-side knowledge (see tests/family_adapters.Adapter,
    whose methods of the same names these implement for one task)."""

    task: str
    rarely_sampled: frozenset[str] = frozenset()  # pool kinds its small instances almost never admit

    def tc(self) -> PlanChecker:
        from pbsolve.checkers.workforce import TASKS

        return TASKS[self.task]

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        """Variable name -> value of every non-zero answer variable of the CP-SAT model."""
        raise NotImplementedError

    def fixes(self, name: str, plan: Any) -> bool:
        return True

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        raise NotImplementedError

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        raise NotImplementedError

    def answer_rows(self, inst: Instance, plan: Any) -> Any:
        tc = self.tc()
        return tc.plan_json(tc.data_type.model_validate(inst.data), plan)

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        raise NotImplementedError

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        """The checker plan of a `changes` term's `existing` parameter; None: read the
        existing rows as an answer (the family adapter's default)."""
        return None

    def robust_reference_ok(self, inst: Instance) -> bool:
        return True


@cache
def adapters() -> dict[str, TaskAdapter]:
    return {m.ADAPTER.task: m.ADAPTER for m in task_modules(__name__, "ADAPTER")}
