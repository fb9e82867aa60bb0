"""Emergency Response & Public Service: response teams to concurrent incidents, medical
resources for a patient flow, and evacuation of groups to shelters over a road network.

Each task type is one module with its TaskSpec, its witness-based sampler, its CP-SAT
model (one encoder per rule kind, behind the rule's enforcement literal) and the
task-specific parts of the hard-tier hooks; the kit (:mod:`pbsolve.model_kit`) dispatches
the family's hooks to them, and :func:`pbsolve.kit.task_modules` finds them, so a task
type is added by adding its files. Road networks are the core's
(:mod:`pbsolve.network_kit`), shared with routing.
"""

from __future__ import annotations

from types import ModuleType

from pbsolve.kit import task_modules
from pbsolve.model_kit import TaskModulesFamily
from pbsolve.taxonomy import FamilySpec

TASK_MODULES: dict[str, ModuleType] = {m.TASK.id: m for m in task_modules(__name__, "TASK")}


class EmergencyFamily(TaskModulesFamily):
    spec = FamilySpec(
        id="emergency",
        name="Emergency Response & Public Service",
        summary="timeliness, priority allocation, restructuring under disruption",
        tasks=tuple(m.TASK for m in TASK_MODULES.values()),
    )
    TASK_MODULES = TASK_MODULES


FAMILY = EmergencyFamily()

__all__ = ["FAMILY", "TASK_MODULES", "EmergencyFamily"]
