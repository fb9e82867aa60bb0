"""``robustness_design`` (hard): the plan must survive each listed single failure through
named backups. The backups are part of the family's plan (its plan schema adds the backup
field when the instance carries this mechanism) and the survival condition is a family
rule, certified jointly with the plan and judged as any rule: this mechanism adds no
item, certificate field, answer key or prompt section of its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pbsolve.mechanisms.base import Mechanism

if TYPE_CHECKING:  # the solver side is imported lazily: grading loads this module without OR-Tools
    import random

    from pbsolve.certify import SolverLimits
    from pbsolve.family import Draft, Family


class RobustnessDesign(Mechanism):
    id = "robustness_design"
    kind = "hard"
    tier = "hard"
    certify_order = 3
    position = 6
    prompt_position = 0
    summary = "the plan names backups that survive every listed single failure (a family rule)"

    def prepare(self, fam: Family, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft:
        """The family's rule asking for backups joins the draft."""
        from pbsolve.mechanisms import certification as solver

        return solver.need(fam.make_robust(draft, rng, limits), "no_robust_variant")


MECHANISM = RobustnessDesign()
