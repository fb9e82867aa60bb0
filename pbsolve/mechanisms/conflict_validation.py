"""``conflict_validation`` (medium, reporting): besides its plan, the answer reports
verification figures computed from that plan (the family says which: busy slots per
person, stock per depot, ...); they must equal those of its own plan."""

from __future__ import annotations

from typing import Any

from pbsolve.mechanisms.base import (
    CheckContext,
    Item,
    Mechanism,
    PromptContext,
    ReferenceContext,
    SchemaContext,
    Verdict,
)


class ConflictValidation(Mechanism):
    id = "conflict_validation"
    kind = "reporting"
    tier = "medium"
    certify_order = 100
    position = 2
    prompt_position = 4
    summary = "the answer reports figures of its own plan (the family's verification figures)"
    items = (
        Item("verification", "medium", "The verification figures the answer reports equal those of its own plan."),
    )
    answer_keys = ("verification",)

    def schema(self, ctx: SchemaContext) -> dict[str, Any]:
        return {"verification": ctx.checker.verification_schema(ctx.data)}

    def prompt(self, ctx: PromptContext) -> list[str]:
        return ["", "**Verification:** " + ctx.verification()]

    def reference(self, ctx: ReferenceContext) -> dict[str, Any]:
        return {"verification": ctx.report()}

    def verdicts(self, ctx: CheckContext) -> dict[str, Verdict]:
        from pbsolve.checking import figures_verdict

        true = ctx.checker.verification(ctx.data, ctx.plan)
        return {"verification": figures_verdict(ctx.answer.get("verification"), true, "verification", ctx.checker.norm)}


MECHANISM = ConflictValidation()
