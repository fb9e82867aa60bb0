"""What the allocation task modules' prompt text shares beyond the kit
(:mod:`pbsolve.render_kit`): the header of a replanning prompt and the wording of summed
quantities."""

from __future__ import annotations

from pbsolve.render_kit import and_list
from pbsolve.schema import Rule

ROBUST_KINDS = frozenset({"teacher_backup", "dropout_robust", "depot_failure", "delay_robust"})


def disrupted(rules: list[Rule]) -> str:
    """'the disruption in R6' -- the hard-tier rule that is not a robustness rule is the
    disruption of a minimum-change replanning instance; the header names it."""
    ids = [r.id for r in rules if r.tier == "hard" and r.kind not in ROBUST_KINDS]
    return (
        f"the disruption in {and_list(ids)}, which it breaks"
        if ids
        else "the disruption among the rules, which it breaks"
    )


def counting(units: list[str], what: str) -> str:
    """Limits over several items add their quantities; say how, so that 'units' of
    kg, litres and reels are one stated measure."""
    kinds = sorted(set(units))
    if len(kinds) == 1:
        return f"Wherever a limit counts units of several {what} together, it adds their quantities in {kinds[0]}."
    return (
        f"The {what} come in different units ({and_list(kinds)}); wherever a limit counts units of several {what} "
        f"together, every unit counts as 1 whatever it measures (for example 3 {kinds[0]} and 2 {kinds[1]} are "
        f"5 units)."
    )
