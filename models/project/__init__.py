"""Project & Production Operations: project activities under renewable resources, jobs on
shared equipment, and the other operations task types, on interval-variable models.

Each task type is one module with its TaskSpec, its witness-based sampler, its CP-SAT
model (one encoder per rule kind, behind the rule's enforcement literal) and the
task-specific parts of the hard-tier hooks; the kit (:mod:`pbsolve.model_kit`) dispatches
the family's hooks to them, and :func:`pbsolve.kit.task_modules` finds them, so a task
type is added by adding its files.
"""

from __future__ import annotations

from types import ModuleType

from pbsolve.kit import task_modules
from pbsolve.model_kit import TaskModulesFamily
from pbsolve.taxonomy import FamilySpec

TASK_MODULES: dict[str, ModuleType] = {m.TASK.id: m for m in task_modules(__name__, "TASK")}


class ProjectFamily(TaskModulesFamily):
    spec = FamilySpec(
        id="project",
        name="Project & Production Operations",
        summary="precedence, renewable resources, capacity over time",
        tasks=tuple(m.TASK for m in TASK_MODULES.values()),
    )
    TASK_MODULES = TASK_MODULES


FAMILY = ProjectFamily()

__all__ = ["FAMILY", "TASK_MODULES", "ProjectFamily"]
