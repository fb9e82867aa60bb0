"""The solver side of the mechanisms: how a draft becomes the harder, certified question.

:func:`certify_spec` iterates over the hard mechanisms an instance asks for, in their
``certify_order``: each one's :meth:`~pbsolve.mechanisms.base.Mechanism.prepare` step turns
the draft into its question, the draft is certified, then each one's
:meth:`~pbsolve.mechanisms.base.Mechanism.after` step (reverse order) certifies what it adds.
A mechanism with no plan (``infeasible``) certifies the instance alone. The steps live on
the mechanism objects (each in its own module) and call the helpers here; adding a
mechanism needs no edit of this flow.

A family supports them through its hooks ``make_infeasible``, ``make_disruption``,
``make_robust``, ``make_uncertain`` (with ``optimistic`` and ``uncertain_ids``) and ``report``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from pbsolve.certify import (
    CertResult,
    Rejected,
    SolverLimits,
    binding_rules,
    certify_feasible,
    certify_infeasible,
    optimum,
)
from pbsolve.family import Draft, Family
from pbsolve.mechanisms import HARD_MECHANISMS, REPORTING_KINDS
from pbsolve.schema import Recovery

__all__ = ["Certified", "Rejected", "binding_rules", "certify_feasible", "certify_infeasible", "certify_spec",
           "conservative_inputs", "need"]  # fmt: skip


@dataclass
class Certified:
    draft: Draft
    result: CertResult
    recovery: Recovery | None = None
    recovery_plan: dict | None = None


def need(value: Draft | None, reason: str) -> Draft:
    """The family's variant, or Rejected(reason) when it has none."""
    if value is None:
        raise Rejected(reason)
    return value


def certify_spec(fam: Family, draft: Draft, rng: random.Random, limits: SolverLimits, count_plans: bool) -> Certified:
    hard = [m for m in HARD_MECHANISMS if m.id in draft.spec.hard]
    draft.mechanisms = [k for k in REPORTING_KINDS if k in draft.spec.medium]
    alone = next((m for m in hard if m.infeasible), None)
    if alone is not None:
        return alone.certify_alone(fam, draft, rng, limits)
    for m in hard:
        draft = m.prepare(fam, draft, rng, limits)
    out = Certified(draft, certify_feasible(fam, draft, limits, count_plans))
    for m in reversed(hard):
        m.after(fam, out, rng, limits)
    return out


def conservative_inputs(
    fam: Family, draft: Draft, limits: SolverLimits, best: tuple[int, ...] | None = None
) -> list[str]:
    """Uncertain inputs whose best case alone would allow a better plan; ``best`` is the
    draft's optimum when already certified (solved for otherwise)."""
    best = best if best is not None else optimum(fam, draft, limits)
    assert best is not None, "conservative inputs of an infeasible draft"
    return [uid for uid in fam.uncertain_ids(draft) if _better(optimum(fam, fam.optimistic(draft, uid), limits), best)]


def _better(value: tuple[int, ...] | None, best: tuple[int, ...]) -> bool:
    return value is not None and value < best
