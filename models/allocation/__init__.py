"""Allocation & Matching family: assigning limited resources to demanders under
compatibility and capacity -- procurement, material allocation, educational resources
and student grouping.

Each task type is one module with its TaskSpec, its witness-based sampler, its CP-SAT
model (one encoder per rule kind, behind the rule's enforcement literal) and the
task-specific parts of the hard-tier hooks; the kit (:mod:`pbsolve.model_kit`) dispatches
the family's hooks to them. ``milp.py`` holds PuLP formulations of the quantity tasks
(procurement, material allocation), the second back-end that tests and benchmarks hold
against CP-SAT; it is imported only on demand, so PuLP stays optional.
"""

from __future__ import annotations

from types import ModuleType

from pbsolve.model_kit import TaskModulesFamily
from pbsolve.models.allocation import education, grouping, material, procurement
from pbsolve.taxonomy import FamilySpec

TASK_MODULES: dict[str, ModuleType] = {m.TASK.id: m for m in (procurement, material, education, grouping)}


class AllocationFamily(TaskModulesFamily):
    spec = FamilySpec(
        id="allocation",
        name="Allocation & Matching",
        summary="assigning limited resources to demanders under compatibility and capacity",
        tasks=tuple(m.TASK for m in TASK_MODULES.values()),
    )
    TASK_MODULES = TASK_MODULES


FAMILY = AllocationFamily()
