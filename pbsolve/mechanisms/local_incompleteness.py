"""``local_incompleteness`` (hard): some inputs are ranges; the plan must hold for every
value (the data keeps the worst case) and the answer names the inputs whose worst case
costs something -- their best case alone would allow a better plan
(``Certificate.conservative_inputs``). The family marks the ranges in its data and its
prompt; this mechanism owns the question about them."""

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
    from pbsolve.family import Draft, Family
    from pbsolve.mechanisms.certification import Certified


class LocalIncompleteness(Mechanism):
    id = "local_incompleteness"
    kind = "hard"
    tier = "hard"
    certify_order = 5
    position = 4
    prompt_position = 3
    summary = "the plan holds for every value of ranged inputs; the answer names the inputs whose worst case costs"
    items = (
        Item(
            "conservative",
            "hard",
            "The answer names exactly the uncertain inputs whose best case would allow a better plan.",
        ),
    )
    certificate_fields = ("conservative_inputs",)
    answer_keys = ("conservative",)

    def schema(self, ctx: SchemaContext) -> dict[str, Any]:
        what = "ids of exactly the uncertain inputs whose best case alone would allow a better plan"
        return {"conservative": ids_schema(ctx.checker.uncertain_ids(ctx.data), what, "input id")}

    def prompt(self, ctx: PromptContext) -> list[str]:
        return [
            "",
            "**Flag what the uncertainty costs:** under `conservative`, name exactly the uncertain inputs whose "
            "most favourable value on its own (the others at their least favourable) would allow a better plan.",
        ]

    def reference(self, ctx: ReferenceContext) -> dict[str, Any]:
        return {"conservative": ctx.certificate.conservative_inputs}

    def verdicts(self, ctx: CheckContext) -> dict[str, Verdict]:
        expected = ctx.instance.certificate.conservative_inputs or []
        known = ctx.checker.uncertain_ids(ctx.data)
        return {"conservative": id_set_verdict(ctx.answer.get("conservative"), expected, known, "conservative")}

    def prepare(self, fam: Family, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft:
        """The family turns some inputs into ranges (the data keeps the worst case)."""
        from pbsolve.mechanisms import certification as solver

        return solver.need(fam.make_uncertain(draft, rng, limits), "no_uncertain_inputs")

    def after(self, fam: Family, certified: Certified, rng: random.Random, limits: SolverLimits) -> None:
        """The conservative inputs; all or none of them binding would need no reasoning."""
        from pbsolve.mechanisms import certification as solver

        draft = certified.draft
        objective = certified.result.certificate.objective
        assert objective is not None, "conservative inputs of an infeasible draft"
        best = tuple(objective[term.id] for term in draft.objective)  # certified just now
        found = solver.conservative_inputs(fam, draft, limits, best)
        certified.result.certificate.conservative_inputs = found
        if not 0 < len(found) < len(fam.uncertain_ids(draft)):
            raise solver.Rejected("incompleteness_degenerate", f"{len(found)} inputs bind")


MECHANISM = LocalIncompleteness()
