"""``robustness_design`` (hard): the plan must survive each listed single failure through
named backups. The backups are part of the family's plan (its plan schema adds the backup
field when the instance carries this mechanism) and the survival condition is a family
rule, certified jointly with the plan and judged as any rule: this mechanism adds no
item, certificate field, answer key or prompt section of its own."""

from __future__ import annotations

from pbsolve.mechanisms.base import Mechanism


class RobustnessDesign(Mechanism):
    id = "robustness_design"
    kind = "hard"
    tier = "hard"
    certify_order = 3
    position = 6
    prompt_position = 0
    summary = "the plan names backups that survive every listed single failure (a family rule)"


MECHANISM = RobustnessDesign()
