"""The registry suite's per-task-type adapters, for families built on the kit: each task
type's test-side knowledge is one :class:`TaskAdapter` (a module's ``ADAPTER``) in the
family's adapters package (tests/<family>_adapters/), and :class:`PerTaskFamily` in
tests/family_adapters.py dispatches to them by task. A new family adds its package and a
two-line subclass, not a copy of the dispatch."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from pbsolve.checker_kit import PlanChecker
from pbsolve.family import checker, find_task
from pbsolve.kit import task_modules
from pbsolve.schema import Instance, Rule


class TaskAdapter:
    """One task type's test-side knowledge (see tests/family_adapters.Adapter, whose
    methods of the same names these implement for one task)."""

    task: str
    rarely_sampled: frozenset[str] = frozenset()  # pool kinds its small instances almost never admit

    def tc(self) -> PlanChecker:
        return checker(find_task(self.task).family).task_checker(self.task)

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

    def enumerable(self, inst: Instance) -> bool:
        """Are the instance's plans few enough for the brute-force suite? (see
        tests/family_adapters.Adapter.enumerable)"""
        return True


@cache
def adapters_in(package: str) -> dict[str, TaskAdapter]:
    """Task id -> adapter, from every module of ``package`` that defines ``ADAPTER``."""
    return {m.ADAPTER.task: m.ADAPTER for m in task_modules(package, "ADAPTER")}
