"""Routing & Travel: commuting trips, urban traffic flows, travel itineraries, delivery
routes and vehicle dispatch, each over a network generated per instance.

Each task type is one module with its TaskSpec, its witness-based sampler, its CP-SAT
model (one encoder per rule kind, behind the rule's enforcement literal) and the
task-specific parts of the hard-tier hooks; the kit (:mod:`pbsolve.model_kit`) dispatches
the family's hooks to them, and :func:`pbsolve.kit.task_modules` finds them, so a task
type is added by adding its files. Networks are the core's (:mod:`pbsolve.network_kit`),
shared with emergency response.
"""

from __future__ import annotations

from types import ModuleType

from pbsolve.kit import task_modules
from pbsolve.model_kit import TaskModulesFamily
from pbsolve.taxonomy import FamilySpec

TASK_MODULES: dict[str, ModuleType] = {m.TASK.id: m for m in task_modules(__name__, "TASK")}


class RoutingFamily(TaskModulesFamily):
    spec = FamilySpec(
        id="routing",
        name="Routing & Travel",
        summary="route choice, spatio-temporal coordination, multi-leg transfers",
        tasks=tuple(m.TASK for m in TASK_MODULES.values()),
    )
    TASK_MODULES = TASK_MODULES


FAMILY = RoutingFamily()

__all__ = ["FAMILY", "TASK_MODULES", "RoutingFamily"]
