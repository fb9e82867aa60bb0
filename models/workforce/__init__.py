"""Shift & Workforce Scheduling: volunteer scheduling, recruitment planning, shift & duty
rosters and work assignment.

Each task type is one module with its TaskSpec, its witness-based sampler, its CP-SAT
model (one encoder per rule kind, behind the rule's enforcement literal) and the
task-specific parts of the hard-tier hooks; the kit (:mod:`pbsolve.model_kit`) dispatches
the family's hooks to them, and :func:`pbsolve.kit.task_modules` finds them, so a task
type is added by adding its files. ``milp.py`` holds the PuLP twin of the shift roster,
imported only on demand.
"""

from __future__ import annotations

from types import ModuleType

from pbsolve.kit import task_modules
from pbsolve.model_kit import TaskModulesFamily
from pbsolve.taxonomy import FamilySpec

TASK_MODULES: dict[str, ModuleType] = {m.TASK.id: m for m in task_modules(__name__, "TASK")}


class WorkforceFamily(TaskModulesFamily):
    spec = FamilySpec(
        id="workforce",
        name="Shift & Workforce Scheduling",
        summary="coverage, rotation fairness, availability and rest rules",
        tasks=tuple(m.TASK for m in TASK_MODULES.values()),
    )
    TASK_MODULES = TASK_MODULES


FAMILY = WorkforceFamily()

__all__ = ["FAMILY", "TASK_MODULES", "WorkforceFamily"]
