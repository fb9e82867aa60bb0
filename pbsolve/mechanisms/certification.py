"""How each mechanism turns a draft into a harder question and certifies it (the solver side).

* ``infeasibility_detection`` -- a sampled rule makes the draft infeasible; every minimal
  conflicting rule set is certified. Drafts whose only conflict set is every rule are
  re-sampled, so "all rules" never passes.
* ``min_change_replanning`` -- the certified plan is disrupted; changes become the first
  objective term.
* ``robustness_design`` -- a family rule asking for backups, certified jointly with the plan.
* ``exception_recovery`` -- a recovery scenario whose best plan (fewest changes from the main
  plan first) is certified too.
* ``local_incompleteness`` -- some inputs become ranges (the data keeps the worst case); the
  inputs whose best case alone would allow a better plan are certified.
* ``explainability`` -- the rules whose removal alone would allow a better plan are certified.

A family supports them through its hooks ``make_infeasible``, ``make_disruption``,
``make_robust``, ``make_uncertain`` (with ``optimistic`` and ``uncertain_ids``) and ``report``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from pbsolve.certify import CertResult, Rejected, SolverLimits, certify_feasible, certify_infeasible, optimum
from pbsolve.family import Draft, Family
from pbsolve.mechanisms import HARD_KINDS, REPORTING_KINDS
from pbsolve.schema import Recovery


@dataclass
class Certified:
    draft: Draft
    result: CertResult
    recovery: Recovery | None = None
    recovery_plan: dict | None = None


def _need(value: Draft | None, reason: str) -> Draft:
    if value is None:
        raise Rejected(reason)
    return value


def certify_spec(
    fam: Family, draft: Draft, rng: random.Random, limits: SolverLimits, count_plans: bool
) -> Certified:
    hard = [k for k in HARD_KINDS if k in draft.spec.hard]
    draft.mechanisms = [k for k in REPORTING_KINDS if k in draft.spec.medium]
    if "infeasibility_detection" in hard:
        variant = _need(fam.make_infeasible(draft, rng, limits), "no_infeasible_variant")
        result = certify_infeasible(fam, variant, limits)
        if any(len(s) == len(variant.rules) for s in result.certificate.conflict_sets or []):
            # every rule is needed for the conflict (then it is the only minimal set):
            # "all rules" would be right without any reasoning, so re-sample
            raise Rejected("infeasibility_all_rules", f"the only conflict set is all {len(variant.rules)} rules")
        return Certified(variant, result)
    if "min_change_replanning" in hard:
        before = certify_feasible(fam, draft, limits, count_plans=False)
        draft = _need(fam.make_disruption(draft, before.plan, rng, limits), "no_disruption")
    if "robustness_design" in hard:
        draft = _need(fam.make_robust(draft, rng, limits), "no_robust_variant")
    if "local_incompleteness" in hard:
        draft = _need(fam.make_uncertain(draft, rng, limits), "no_uncertain_inputs")
    result = certify_feasible(fam, draft, limits, count_plans)
    cert = result.certificate
    if "explainability" in hard:
        cert.binding_rules = binding_rules(fam, draft, limits)
        if not 0 < len(cert.binding_rules) < len(draft.rules):
            raise Rejected("explainability_degenerate", f"{len(cert.binding_rules)} of {len(draft.rules)} rules bind")
        draft.mechanisms.append("explainability")
    if "local_incompleteness" in hard:
        cert.conservative_inputs = conservative_inputs(fam, draft, limits)
        if not 0 < len(cert.conservative_inputs) < len(fam.uncertain_ids(draft)):
            raise Rejected("incompleteness_degenerate", f"{len(cert.conservative_inputs)} inputs bind")
    out = Certified(draft, result)
    if "exception_recovery" in hard:
        scenario = _need(fam.make_disruption(draft, result.plan, rng, limits, scenario=True), "no_recovery_scenario")
        rec = certify_feasible(fam, scenario, limits, count_plans=False)
        extra = [r for r in scenario.rules if r.id not in {x.id for x in draft.rules}]
        out.recovery = Recovery(scenario=extra, objective=scenario.objective, certificate=rec.certificate)
        out.recovery_plan = rec.plan
        draft.mechanisms.append("exception_recovery")
    return out


def binding_rules(fam: Family, draft: Draft, limits: SolverLimits) -> list[str]:
    """Rules whose removal alone allows a better plan (lexicographic objective)."""
    best = optimum(fam, draft, limits)
    assert best is not None, "binding rules of an infeasible draft"
    return [r.id for r in draft.rules if _better(optimum(fam, draft, limits, without=r.id), best)]


def conservative_inputs(fam: Family, draft: Draft, limits: SolverLimits) -> list[str]:
    """Uncertain inputs whose best case alone would allow a better plan."""
    best = optimum(fam, draft, limits)
    assert best is not None, "conservative inputs of an infeasible draft"
    return [uid for uid in fam.uncertain_ids(draft) if _better(optimum(fam, fam.optimistic(draft, uid), limits), best)]


def _better(value: tuple[int, ...] | None, best: tuple[int, ...]) -> bool:
    return value is not None and value < best
