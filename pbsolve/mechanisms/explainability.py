"""``explainability`` (hard): the answer names the rules that bind the optimum -- those
whose removal alone would allow a better plan (``Certificate.binding_rules``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pbsolve.answer_checks import id_set_verdict, ids_schema
from pbsolve.mechanisms.base import (
    CheckContext,
    Item,
    Mechanism,
    PromptContext,
    ReferenceContext,
    SchemaContext,
    Verdict,
)

if TYPE_CHECKING:  # the solver side is imported lazily: grading loads this module without OR-Tools
    import random

    from pbsolve.certify import SolverLimits
    from pbsolve.family import Family
    from pbsolve.mechanisms.certification import Certified


class Explainability(Mechanism):
    id = "explainability"
    kind = "hard"
    tier = "hard"
    certify_order = 6
    position = 3
    prompt_position = 2
    summary = "the answer names exactly the rules whose removal alone would allow a better plan"
    items = (
        Item("binding", "hard", "The answer names exactly the rules whose removal alone would allow a better plan."),
    )
    certificate_fields = ("binding_rules",)
    answer_keys = ("binding",)

    def schema(self, ctx: SchemaContext) -> dict[str, Any]:
        ids = [r.id for r in ctx.rules]
        return {
            "binding": ids_schema(
                ids, "ids of exactly the rules whose removal alone would allow a better plan", "rule id"
            )
        }

    def prompt(self, ctx: PromptContext) -> list[str]:
        return [
            "",
            "**Explain the optimum:** under `binding`, name exactly the rules whose removal on its own (all other "
            "rules kept) would allow a better plan in the objective order above.",
        ]

    def reference(self, ctx: ReferenceContext) -> dict[str, Any]:
        return {"binding": ctx.certificate.binding_rules}

    def verdicts(self, ctx: CheckContext) -> dict[str, Verdict]:
        inst = ctx.instance
        expected = inst.certificate.binding_rules or []
        return {"binding": id_set_verdict(ctx.answer.get("binding"), expected, [r.id for r in inst.rules], "binding")}

    def after(self, fam: Family, certified: Certified, rng: random.Random, limits: SolverLimits) -> None:
        """The binding rules; all or none of them binding would need no reasoning."""
        from pbsolve.mechanisms import certification as solver

        draft = certified.draft
        found = solver.binding_rules(fam, draft, limits)
        certified.result.certificate.binding_rules = found
        if not 0 < len(found) < len(draft.rules):
            raise solver.Rejected("explainability_degenerate", f"{len(found)} of {len(draft.rules)} rules bind")
        draft.mechanisms.append(self.id)


MECHANISM = Explainability()
