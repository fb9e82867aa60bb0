"""``infeasibility_detection`` (hard): a sampled rule makes the draft infeasible; the
answer must declare infeasibility and name one of the certified minimal conflicting rule
sets (``Certificate.conflict_sets``; any one passes, a superset does not). Drafts whose
only conflict set is every rule are re-sampled, so "all rules" never passes.

Its answer form (the declaration) is offered on every instance, feasible or not: the
format never gives away which kind an instance is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pbsolve.answer_checks import conflict_verdict
from pbsolve.mechanisms.base import CheckContext, Item, Mechanism, Recovery, SchemaContext, Verdict

if TYPE_CHECKING:  # the solver side is imported lazily: grading loads this module without OR-Tools
    import random

    from pbsolve.certify import SolverLimits
    from pbsolve.family import Draft, Family
    from pbsolve.mechanisms.certification import Certified


class InfeasibilityDetection(Mechanism):
    id = "infeasibility_detection"
    kind = "hard"
    tier = "hard"
    certify_order = 1
    position = 0
    prompt_position = 0
    summary = "no plan exists; the answer says so and names a minimal conflicting rule set"
    infeasible = True
    items = (
        Item("infeasibility", "hard", "The answer declares that no plan satisfies every rule.", needs_plan=False),
        Item(
            "conflict",
            "hard",
            "The answer names a minimal set of rules that cannot all hold together.",
            needs_plan=False,
        ),
    )
    certificate_fields = ("conflict_sets",)
    answer_keys = ("conflict",)

    def present(self, mechanisms: list[str], recovery: Recovery | None) -> bool:
        """Every answer schema offers the declaration (see the module docstring)."""
        return True

    def answer_form(self, ctx: SchemaContext) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "feasible": {"const": False},
                "conflict": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                             "description": "the ids of a minimal set of rules that cannot all hold together "
                                            "(dropping any one of them would leave rules that can all hold)"},
            },
            "required": ["feasible", "conflict"],
        }  # fmt: skip

    def verdicts(self, ctx: CheckContext) -> dict[str, Verdict]:
        declared = not ctx.feasible
        return {
            "infeasibility": (declared, "declares infeasibility" if declared else "claims a plan exists"),
            "conflict": conflict_verdict(ctx.instance, ctx.answer) if declared else (False, "names no conflict"),
        }

    def certify_alone(self, fam: Family, draft: Draft, rng: random.Random, limits: SolverLimits) -> Certified:
        """The family's infeasible variant and its certified minimal conflict sets."""
        from pbsolve.mechanisms import certification as solver

        variant = solver.need(fam.make_infeasible(draft, rng, limits), "no_infeasible_variant")
        result = solver.certify_infeasible(fam, variant, limits)
        if any(len(s) == len(variant.rules) for s in result.certificate.conflict_sets or []):
            # every rule is needed for the conflict (then it is the only minimal set):
            # "all rules" would be right without any reasoning, so re-sample
            raise solver.Rejected("infeasibility_all_rules", f"the only conflict set is all {len(variant.rules)} rules")
        return solver.Certified(variant, result)


MECHANISM = InfeasibilityDetection()
