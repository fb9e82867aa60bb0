"""``min_change_replanning`` (hard): the certified plan is disrupted (a family rule the
old plan breaks); the answer must change the certified minimum number of assignments.
The changes count becomes the first objective term (``changes``), so the family renders
the current plan beside its data and the objective lists the term; this mechanism adds
the item that holds the answer to the certified minimum."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pbsolve.mechanisms.base import CheckContext, Item, Mechanism, Verdict
from pbsolve.schema import Instance

if TYPE_CHECKING:  # the solver side is imported lazily: grading loads this module without OR-Tools
    import random

    from pbsolve.certify import SolverLimits
    from pbsolve.family import Draft, Family

TERM = "changes"
RULE = f"objective:{TERM}"


class MinChangeReplanning(Mechanism):
    id = "min_change_replanning"
    kind = "hard"
    tier = "hard"
    certify_order = 2
    position = 1
    prompt_position = 0
    summary = "a disrupted plan is repaired with the certified minimum number of changes"
    items = (Item(RULE, "hard", "The plan changes exactly the certified minimum number of assignments ({changes})."),)

    def checklist(self, certified_objective: dict[str, int] | None) -> list[Item]:
        changes = (certified_objective or {}).get(TERM)
        return [Item(it.rule, it.tier, it.text.format(changes=changes)) for it in self.items]

    def verdicts(self, ctx: CheckContext) -> dict[str, Verdict]:
        want = (ctx.instance.certificate.objective or {}).get(TERM)
        got = ctx.values.get(TERM)
        return {RULE: (got == want, f"plan gives {TERM}={got}; certified {want}")}

    def items_valid(self, instance: Instance) -> bool:
        return any(t.id == TERM for t in instance.objective)

    def prepare(self, fam: Family, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft:
        """The family disrupts the draft's own certified plan."""
        from pbsolve.mechanisms import certification as solver

        before = solver.certify_feasible(fam, draft, limits, count_plans=False)
        assert before.plan is not None  # certify_feasible returns only with the optimal plan
        return solver.need(fam.make_disruption(draft, before.plan, rng, limits), "no_disruption")


MECHANISM = MinChangeReplanning()
