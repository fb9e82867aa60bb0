"""Allocation & Matching family: assigning limited resources to demanders under
compatibility and capacity -- procurement, material allocation, educational resources
and student grouping.

Each task type is one module with its TaskSpec, its witness-based sampler, its CP-SAT
model (one encoder per rule kind, behind the rule's enforcement literal) and the
task-specific parts of the hard-tier hooks. ``milp.py`` holds PuLP formulations of the
quantity tasks (procurement, material allocation), the second back-end that tests and
benchmarks hold against CP-SAT; it is imported only on demand, so PuLP stays optional.
"""

from __future__ import annotations

import random
from types import ModuleType

from pbsolve.certify import SolverLimits
from pbsolve.family import Draft, Family, SolverModel
from pbsolve.models.allocation import common, education, grouping, material, procurement
from pbsolve.schema import GenerationSpec
from pbsolve.taxonomy import FamilySpec

TASK_MODULES: dict[str, ModuleType] = {m.TASK.id: m for m in (procurement, material, education, grouping)}


class AllocationFamily(Family):
    spec = FamilySpec(
        id="allocation",
        name="Allocation & Matching",
        summary="assigning limited resources to demanders under compatibility and capacity",
        tasks=tuple(m.TASK for m in TASK_MODULES.values()),
    )

    @staticmethod
    def _module(draft_or_spec: Draft | GenerationSpec) -> ModuleType:
        spec = draft_or_spec.spec if isinstance(draft_or_spec, Draft) else draft_or_spec
        return TASK_MODULES[spec.task]

    def draft(self, spec: GenerationSpec, rng: random.Random) -> Draft:
        return self._module(spec).draft(spec, rng)

    def build_model(self, draft: Draft) -> SolverModel:
        return self._module(draft).build(draft)

    def encoder_kinds(self, task: str) -> frozenset[str]:
        return TASK_MODULES[task].ENCODERS.kinds()

    # -- hard-tier hooks (see pbsolve.mechanisms) ------------------------------------
    def make_infeasible(self, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
        return self._module(draft).make_infeasible(draft, rng, limits)

    def make_disruption(
        self, draft: Draft, plan: dict, rng: random.Random, limits: SolverLimits, scenario: bool = False
    ) -> Draft | None:
        return common.make_disruption(self._module(draft).HOOKS, draft, plan, rng, limits, scenario)

    def make_robust(self, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
        return common.make_robust(self._module(draft).HOOKS, draft, rng, limits)

    def make_uncertain(self, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
        return common.make_uncertain(self._module(draft).HOOKS, draft, rng, limits)

    def optimistic(self, draft: Draft, uid: str) -> Draft:
        return common.optimistic(self._module(draft).HOOKS, draft, uid)

    def uncertain_ids(self, draft: Draft) -> list[str]:
        return common.uncertain_ids(draft)

    def report(self, draft: Draft, plan: dict) -> dict:
        return self._module(draft).report(draft, plan)


FAMILY = AllocationFamily()
