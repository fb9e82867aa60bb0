"""``exception_recovery`` (hard): besides the plan, a recovery plan for a named scenario
(``Instance.recovery``: scenario rules on top of the instance's, and a recovery objective
with changes from the main plan first), itself certified optimal. The answer's recovery
plan is read and judged by the family exactly as its main plan, with changes counted
from the answer's own main plan."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pbsolve.answer_checks import validation_verdict
from pbsolve.mechanisms.base import (
    CheckContext,
    Item,
    Mechanism,
    PromptContext,
    Recovery,
    ReferenceContext,
    SchemaContext,
    Verdict,
)
from pbsolve.schema import Instance, Rule

if TYPE_CHECKING:  # the solver side is imported lazily: grading loads this module without OR-Tools
    import random

    from pbsolve.certify import SolverLimits
    from pbsolve.family import Family
    from pbsolve.mechanisms.certification import Certified


class ExceptionRecovery(Mechanism):
    id = "exception_recovery"
    kind = "hard"
    tier = "hard"
    certify_order = 4
    position = 5
    prompt_position = 1
    summary = "a second, certified-optimal plan for a named scenario, changing the answer's own plan least"
    items = (
        Item("recovery:format", "hard", "The answer gives a complete recovery plan for the scenario.", validity=True),
        Item("recovery:rules", "hard", "The recovery plan satisfies every rule and the scenario.", validity=True),
        Item("recovery:objective", "hard",
             "The recovery plan's figures (changes from the main plan first) equal the certified optimum."),
        Item("recovery:validation", "hard",
             "The figures the answer states for its recovery plan equal those recomputed from that plan."),
    )  # fmt: skip
    answer_keys = ("recovery",)

    def present(self, mechanisms: list[str], recovery: Recovery | None) -> bool:
        """The recovery section (the scenario and its objective) is what carries it."""
        return recovery is not None

    def schema(self, ctx: SchemaContext) -> dict[str, Any]:
        from pbsolve.answer_checks import objective_schema

        assert ctx.recovery is not None
        key = ctx.checker.plan_key
        return {
            "recovery": {
                "type": "object",
                "properties": {
                    key: ctx.plan_schema,
                    "objective": objective_schema(ctx.recovery.objective, "the recovery plan's own figures"),
                },
                "required": [key, "objective"],
                "description": "the best plan for the scenario",
            }
        }

    def prompt(self, ctx: PromptContext) -> list[str]:
        assert ctx.recovery is not None
        out = ["", "**Exception recovery:** besides your plan, prepare a recovery plan for this scenario:"]
        out += [f"- {r.id}: {r.text}" for r in ctx.recovery.scenario]
        out.append(
            "Under `recovery`, give the best plan for the scenario: it must satisfy every rule above and the "
            "scenario, with this objective:"
        )
        return out + ctx.objective_lines(ctx.recovery.objective, "your main plan")

    def reference(self, ctx: ReferenceContext) -> dict[str, Any]:
        assert ctx.recovery is not None
        return {"recovery": {**(ctx.recovery_plan or {}), "objective": ctx.recovery.certificate.objective}}

    def items_valid(self, instance: Instance) -> bool:
        return instance.recovery is not None

    def verdicts(self, ctx: CheckContext) -> dict[str, Verdict]:
        """The recovery plan: complete, valid under every rule plus the scenario, and optimal,
        with changes counted against the answer's own main plan."""
        rec = ctx.instance.recovery
        if rec is None:
            return {it.rule: (False, "no recovery plan to check") for it in self.items}
        section = ctx.answer.get("recovery")
        if not isinstance(section, dict):
            return self._unchecked(False, "'recovery' section is missing", "'recovery' section is missing")
        tc = ctx.checker
        rules = [*ctx.instance.rules, *rec.scenario]
        plan, why = tc.read_section(ctx.instance, ctx.data, section, ctx.lookups, rules)
        if plan is None or ctx.plan is None:
            return self._unchecked(plan is not None, why, why if plan is None else "no main plan to recover from")
        existing = tc.existing(ctx.data, ctx.plan)
        terms = [
            t.model_copy(update={"params": {"existing": existing}}) if t.kind == "changes" else t for t in rec.objective
        ]
        typed = tc.typed(ctx.instance)
        verdicts, _ = _rules_judge(tc, ctx.instance, rec.scenario, rules, typed)(ctx.data, plan)
        _, values = tc.evaluate(ctx.data, [], terms, plan, typed)  # `changes` is the answer's own: built per answer
        best = rec.certificate.objective or {}
        broken = [f"{rid}: {reason}" for rid, (ok, reason) in verdicts.items() if not ok]
        return {
            "recovery:format": (True, "complete recovery plan"),
            "recovery:rules": (not broken, "; ".join(broken)[:300] or "every rule and the scenario hold"),
            "recovery:objective": (values == best, f"recovery scores {values}; certified optimum {best}"),
            # the stated figures are held to the recovery plan as the main plan's are to it
            "recovery:validation": validation_verdict(section, values, "recovery.objective"),
        }

    def _unchecked(self, plan_read: bool, why: str, reason: str) -> dict[str, Verdict]:
        """No recovery plan to judge (or no main plan to count its changes from): only the
        format item can pass, and only if the recovery plan read."""
        return {it.rule: ((plan_read, why) if it.rule == "recovery:format" else (False, reason)) for it in self.items}

    def after(self, fam: Family, certified: Certified, rng: random.Random, limits: SolverLimits) -> None:
        """The family's scenario on top of the certified plan, and its certified best plan."""
        from pbsolve.mechanisms import certification as solver

        draft = certified.draft
        assert certified.result.plan is not None  # a certified draft carries its optimal plan
        scenario = solver.need(
            fam.make_disruption(draft, certified.result.plan, rng, limits, scenario=True), "no_recovery_scenario"
        )
        rec = solver.certify_feasible(fam, scenario, limits, count_plans=False)
        extra = [r for r in scenario.rules if r.id not in {x.id for x in draft.rules}]
        certified.recovery = Recovery(scenario=extra, objective=scenario.objective, certificate=rec.certificate)
        certified.recovery_plan = rec.plan
        draft.mechanisms.append(self.id)


_JUDGES_KEY = "pbsolve.exception_recovery.judges"


def _rules_judge(tc: Any, instance: Instance, scenario: list[Rule], rules: list[Rule], typed: Any) -> Any:
    """``tc``'s evaluator of the recovery plan under the instance's rules and its scenario
    (no objective terms: the `changes` term differs per answer), bound once per instance
    and task checker as the main plan's is (:meth:`pbsolve.checking.TaskChecker.evaluator`:
    the same verdicts as ``tc.evaluate``, each rule's check and parameters looked up once),
    and again when the instance's rules or its ``scenario`` are replaced."""
    judges: dict[Any, tuple[list[Rule], list[Rule], Any]] = instance.memo(_JUDGES_KEY, dict)
    kept = judges.get(tc)
    if kept is None or kept[0] is not instance.rules or kept[1] is not scenario:
        kept = judges[tc] = (instance.rules, scenario, tc.evaluator(rules, [], typed))
    return kept[2]


MECHANISM = ExceptionRecovery()
