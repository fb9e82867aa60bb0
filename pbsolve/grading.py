"""Grading runtime: response text -> Grade, under one of three reward modes.

Grading never raises: any text yields a Grade with a reason per item, and nothing in
a response is ever executed.
"""

from __future__ import annotations

from typing import Any

from pbsolve.family import checker
from pbsolve.parsing import parse_response
from pbsolve.schema import Grade, Instance, ItemResult, RewardMode

REWARD_MODES: tuple[RewardMode, ...] = ("all_pass", "avg_pass", "feasible")
# Items that speak of the plan's quality rather than its validity (on a plain instance).
QUALITY_ITEMS = frozenset({"objective", "validation"})
VALIDITY_ITEMS = frozenset({"format", "recovery:format", "recovery:rules"})


def is_validity_item(instance: Instance, rule: str) -> bool:
    """Items the `feasible` reward mode keeps: the form of the answer and every rule.

    Optimality (objective figures, minimum changes, recovery optimum) and reports
    (validation, verification, binding rules, conservative inputs) are left out.
    """
    return rule in VALIDITY_ITEMS or any(r.id == rule for r in instance.rules)


def _reward(instance: Instance, items: list[ItemResult], mode: RewardMode) -> float:
    passed = [r.passed for r in items]
    if mode == "all_pass":
        return float(all(passed))
    if mode == "avg_pass":
        return sum(passed) / len(passed)
    if instance.certificate.status == "infeasible":
        return float(all(passed))
    rules = {it.id: it.rule for it in instance.checklist}
    return float(all(r.passed for r in items if is_validity_item(instance, rules[r.id])))


def grade(instance: Instance, response: Any, mode: RewardMode = "all_pass", response_id: str | None = None) -> Grade:
    if mode not in REWARD_MODES:
        raise ValueError(f"unknown reward mode {mode!r}; choose one of {', '.join(REWARD_MODES)}")
    parsed = parse_response(response)
    if parsed.error is not None:
        verdicts = {it.id: (False, parsed.error) for it in instance.checklist}
    else:
        try:
            verdicts = checker(instance.family).check_answer(instance, parsed.value)
        except Exception as exc:  # a checker bug must not take a training run down
            verdicts = {it.id: (False, f"checker error: {type(exc).__name__}: {exc}"[:300]) for it in instance.checklist}
    items = [
        ItemResult(id=it.id, passed=bool(verdicts.get(it.id, (False, ""))[0]), reason=str(verdicts.get(it.id, (False, "not checked"))[1])[:300])
        for it in instance.checklist
    ]
    all_pass = int(all(r.passed for r in items))
    avg = sum(r.passed for r in items) / len(items) if items else 0.0
    return Grade(
        id=instance.id,
        response_id=response_id,
        all_pass=all_pass,
        avg_pass=avg,
        reward=_reward(instance, items, mode),
        reward_mode=mode,
        items=items,
        parse_error=parsed.error,
    )
