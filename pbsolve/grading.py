"""Grading runtime: response text -> Grade, under one of three reward modes.

Any response text yields a Grade: a malformed answer fails every item with a reason,
and nothing in a response is ever executed. What never becomes a grade is a failure of
the grader itself -- a checker that raises, a checker module that cannot be imported, a
family that does not exist -- or a ground truth that is not a valid instance (an empty
checklist, unknown rule or objective kinds, checklist items naming rules the instance
does not have, data that is not the task's, a certified reference answer the checker
fails). Those raise :class:`GradingError` (:class:`InvalidGroundTruth` for the instance
problems), so a trainer can always tell "the grader failed" from "the answer is wrong".
``grade(..., on_error="zero")`` turns them into a grade with reward 0 and
``Grade.grader_error`` set instead, for callers that must keep going and count them.

An instance is validated once: the verdict is kept in ``Instance.memo``.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import is_
from types import ModuleType
from typing import Any, Literal

from pbsolve import interrupts, params
from pbsolve.family import checker
from pbsolve.mechanisms import ITEM_OWNERS, MECHANISMS
from pbsolve.parsing import parse_response
from pbsolve.schema import Grade, Instance, ItemResult, RewardMode

REWARD_MODES: tuple[RewardMode, ...] = ("all_pass", "avg_pass", "feasible")
OnError = Literal["raise", "zero"]
ON_ERROR_MODES: tuple[OnError, ...] = ("raise", "zero")
# Items that speak of the plan's quality rather than its validity (on a plain instance).
QUALITY_ITEMS = frozenset({"objective", "validation"})
# The core's checklist items that are not numbered rules ("objective:<term id>" is one per
# objective term); every other such item belongs to a mechanism (pbsolve.mechanisms).
CORE_ITEMS = frozenset({"format", "objective", "validation"})
MECHANISM_ITEMS = frozenset(ITEM_OWNERS)
SPECIAL_ITEMS = CORE_ITEMS | MECHANISM_ITEMS
# Items the `feasible` reward mode keeps besides the rules: the format, and the mechanisms'
# items that speak of validity (a recovery plan's form and rules).
VALIDITY_ITEMS = frozenset({"format"} | {it.rule for m in MECHANISMS for it in m.items if it.validity})
# What a family's checker package must expose for the grader to use it.
CHECKER_HOOKS = ("check_answer", "known_kinds", "read_data")
REASON_CHARS = 300
_VALIDATION_KEY = "pbsolve.grading.validation"


class GradingError(RuntimeError):
    """The grader could not grade: a checker raised, a checker module is unimportable, or
    the family is unknown. Never the answer's fault, so never a reward."""

    def __init__(self, message: str, instance_id: str | None = None) -> None:
        super().__init__(message)
        self.instance_id = instance_id


class InvalidGroundTruth(GradingError, ValueError):
    """The instance is not a valid ground truth: nothing graded against it means anything."""


def is_validity_item(instance: Instance, rule: str) -> bool:
    """Items the `feasible` reward mode keeps: the form of the answer and every rule.

    Optimality (objective figures, minimum changes, recovery optimum) and reports
    (validation, verification, binding rules, conservative inputs) are left out.
    """
    return rule in VALIDITY_ITEMS or any(r.id == rule for r in instance.rules)


class _Checklist:
    """What grading one more answer needs of a validated instance, computed once: the
    checklist's item ids in order and, per item, whether the `feasible` mode counts it
    (:func:`is_validity_item`; on an infeasible instance every item counts, since the
    declaration and its conflict set are the whole answer)."""

    __slots__ = ("feasible_counts", "ids")

    def __init__(self, instance: Instance) -> None:
        self.ids: tuple[str, ...] = tuple(it.id for it in instance.checklist)
        infeasible = instance.certificate.status == "infeasible"
        self.feasible_counts: tuple[bool, ...] = tuple(
            infeasible or is_validity_item(instance, it.rule) for it in instance.checklist
        )

    def reward(self, passed: list[bool], mode: RewardMode) -> float:
        if mode == "all_pass":
            return float(all(passed))
        if mode == "avg_pass":
            return sum(passed) / len(passed)
        return float(all(p for p, counts in zip(passed, self.feasible_counts) if counts))


# -- validating a ground truth ------------------------------------------------------------------
def _family_checker(instance: Instance) -> ModuleType:
    """The family's checker package; an unknown family is an invalid ground truth, a
    package that exists but fails to import (or lacks a hook) is a grader failure."""
    fid = instance.family
    if not fid.isidentifier():
        raise InvalidGroundTruth(f"instance {instance.id}: family {fid[:80]!r} is not a family id", instance.id)
    try:
        module = checker(fid)
    except ModuleNotFoundError as exc:
        if exc.name == f"pbsolve.checkers.{fid}":
            raise InvalidGroundTruth(
                f"instance {instance.id}: unknown family {fid!r} (no checker for it)", instance.id
            ) from exc
        raise GradingError(f"the checker of family {fid!r} cannot be imported: {exc}", instance.id) from exc
    except Exception as exc:
        interrupts.reraise_if_stopping(exc)
        raise GradingError(
            f"the checker of family {fid!r} cannot be imported: {type(exc).__name__}: {exc}", instance.id
        ) from exc
    missing = [h for h in CHECKER_HOOKS if not callable(getattr(module, h, None))]
    if missing:
        raise GradingError(f"the checker of family {fid!r} lacks {', '.join(missing)}", instance.id)
    return module


def _problems(instance: Instance, module: ModuleType) -> list[str]:
    """What makes the instance unusable as a ground truth, cheapest checks first."""
    if not instance.checklist:
        return ["the checklist is empty (every answer would pass it)"]
    found: list[str] = []
    item_ids = [it.id for it in instance.checklist]
    if len(set(item_ids)) != len(item_ids):
        found.append(f"duplicate checklist item ids {sorted({i for i in item_ids if item_ids.count(i) > 1})}")
    rule_ids = [r.id for r in instance.rules]
    if len(set(rule_ids)) != len(rule_ids):
        found.append(f"duplicate rule ids {sorted({i for i in rule_ids if rule_ids.count(i) > 1})}")
    try:
        rule_kinds, objective_kinds = module.known_kinds(instance.task)
    except KeyError:
        return [*found, f"family {instance.family!r} has no task {instance.task!r}"]
    scenario = instance.recovery.scenario if instance.recovery else []
    rec_terms = instance.recovery.objective if instance.recovery else []
    bad_rules = sorted({f"{r.id}: {r.kind}" for r in [*instance.rules, *scenario] if r.kind not in rule_kinds})
    if bad_rules:
        found.append(f"rule kinds the {instance.family} checker does not know: {', '.join(bad_rules)}")
    bad_terms = sorted(
        {f"{t.id}: {t.kind}" for t in [*instance.objective, *rec_terms] if t.kind not in objective_kinds}
    )
    if bad_terms:
        found.append(f"objective kinds the {instance.family} checker does not know: {', '.join(bad_terms)}")
    read = params.parsed(instance)  # each item parsed once, here and at its first grade
    found += params.problems(rule_kinds, [*instance.rules, *scenario], read)
    found += params.problems(objective_kinds, [*instance.objective, *rec_terms], read)
    term_ids = {t.id for t in instance.objective}
    known_rules = set(rule_ids)
    for it in instance.checklist:
        rule = it.rule
        ok = (
            rule in known_rules
            or rule in CORE_ITEMS
            or (rule in ITEM_OWNERS and ITEM_OWNERS[rule].items_valid(instance))
            or (rule.startswith("objective:") and rule.split(":", 1)[1] in term_ids)
        )
        if not ok:
            found.append(f"checklist item {it.id} names {rule[:80]!r}, which is no rule or item of this instance")
    if found:
        return found
    try:
        data = module.read_data(instance)
    except Exception as exc:
        interrupts.reraise_if_stopping(exc)
        return [f"data does not match task {instance.task!r}: {type(exc).__name__}: {str(exc)[:300]}"]
    try:  # the plan is read under the instance's rules, the recovery plan under its scenario too
        main = params.seen_beside(data, rule_kinds, instance.rules, read)
        rec = params.seen_beside(data, rule_kinds, [*instance.rules, *scenario], read)
        found += params.added_twice(params.additions(rule_kinds, [*instance.rules, *scenario], read))
        found += params.data_problems(rule_kinds, instance.rules, main, read)
        found += params.data_problems(rule_kinds, scenario, rec, read)
        found += params.data_problems(objective_kinds, instance.objective, main, read)
        found += params.data_problems(objective_kinds, rec_terms, rec, read)
    except Exception as exc:  # a family without names() for what its parameters name: its bug
        interrupts.reraise_if_stopping(exc)
        raise GradingError(
            f"the {instance.family} checker cannot check what instance {instance.id}'s rules name: "
            f"{type(exc).__name__}: {str(exc)[:300]}",
            instance.id,
        ) from exc
    return found


def _check_reference(instance: Instance, module: ModuleType) -> None:
    """The certified reference answer must pass every item: otherwise certificate and
    checker disagree, and no reward from this instance can be trusted."""
    verdicts = _run_checker(instance, module, instance.reference)
    failed = [f"{it.id} ({it.rule}): {verdicts[it.id][1]}"[:200] for it in instance.checklist if not verdicts[it.id][0]]
    if failed:
        raise InvalidGroundTruth(
            f"instance {instance.id}: the certified reference answer fails {len(failed)} item(s): "
            + "; ".join(failed[:5]),
            instance.id,
        )


def _validate(instance: Instance) -> tuple[ModuleType, GradingError | None]:
    module = _family_checker(instance)  # import failures are not kept: they may be transient
    problems = _problems(instance, module)
    if problems:
        return module, InvalidGroundTruth(
            f"instance {instance.id} is not a valid ground truth: " + "; ".join(problems), instance.id
        )
    try:
        _check_reference(instance, module)
    except GradingError as exc:
        return module, exc
    return module, None


def validate_instance(instance: Instance) -> ModuleType:
    """Raise ``InvalidGroundTruth`` / ``GradingError`` unless ``instance`` can be graded;
    return its family's checker. The verdict is computed once per instance (cached in
    ``Instance.memo``, and recomputed if a copy of the instance has other contents); only
    the instance's own verdicts are kept, never a checker crash or an import failure."""
    return _validated(instance)[0]


def _validated(instance: Instance) -> tuple[ModuleType, _Checklist]:
    """:func:`validate_instance`, and the instance's :class:`_Checklist`.

    Both are kept with the parts they were computed from, compared by identity on every
    call: an instance whose parts were replaced since is validated again, and everything
    else cached for it (parsed data, lookups, parameters) is dropped with the verdict, so
    no cache can answer for contents the instance no longer has."""
    parts = (instance.family, instance.task, instance.data, instance.rules, instance.objective,
             instance.checklist, instance.certificate, instance.recovery, instance.reference)  # fmt: skip
    memo = instance.memo(_VALIDATION_KEY, dict)
    kept = memo.get("parts")
    if kept is None or len(kept) != len(parts) or not all(map(is_, kept, parts)):
        if kept is not None:  # the contents changed: nothing derived from the old ones may be used
            instance.memo_clear()
            memo = instance.memo(_VALIDATION_KEY, dict)
        module, error = _validate(instance)
        if error is not None and not isinstance(error, InvalidGroundTruth):
            raise error  # a checker that raised is not kept: the failure is the grader's, not the instance's
        memo.update(parts=parts, module=module, error=error, checklist=None if error else _Checklist(instance))
    error = memo["error"]
    if error is not None:
        raise type(error)(str(error), error.instance_id)
    return memo["module"], memo["checklist"]


# -- grading one response ------------------------------------------------------------------------
def _run_checker(instance: Instance, module: ModuleType, answer: Any) -> dict[str, tuple[bool, str]]:
    """The family checker's verdict per checklist item; any exception, or a verdict
    missing or malformed, is the grader's failure."""
    ids = [it.id for it in instance.checklist]
    return dict(zip(ids, _verdicts(instance, module, answer, ids)))


def _verdicts(instance: Instance, module: ModuleType, answer: Any, ids: Sequence[str]) -> list[tuple[bool, str]]:
    """:func:`_run_checker`'s verdicts, in the order of ``ids`` (the checklist's item ids)."""
    try:
        verdicts = module.check_answer(instance, answer)
    except Exception as exc:
        interrupts.reraise_if_stopping(exc)
        raise GradingError(
            f"the {instance.family} checker raised on instance {instance.id}: {type(exc).__name__}: {str(exc)[:500]}",
            instance.id,
        ) from exc
    out: list[tuple[bool, str]] = []
    got = verdicts.get if isinstance(verdicts, dict) else None
    for item_id in ids:
        v = got(item_id) if got is not None else None
        if type(v) is tuple and len(v) == 2 and type(v[0]) is bool and type(v[1]) is str:
            out.append(v)  # the usual verdict, kept as it is
            continue
        if not (isinstance(v, (tuple, list)) and len(v) == 2 and isinstance(v[0], bool)):
            raise GradingError(
                f"the {instance.family} checker gave no verdict (passed, reason) for item {item_id} of instance "
                f"{instance.id} (got {str(v)[:80]})",
                instance.id,
            )
        out.append((v[0], str(v[1])))
    return out


def error_grade(instance: Instance, mode: RewardMode, response_id: str | None, error: BaseException) -> Grade:
    """The grade ``on_error="zero"`` gives when the grader failed: every item failed,
    reward 0, and ``grader_error`` saying why (so it is never mistaken for a wrong answer)."""
    why = f"{type(error).__name__}: {error}"
    items = [
        ItemResult(id=it.id, passed=False, reason=f"grader error: {why}"[:REASON_CHARS]) for it in instance.checklist
    ]
    return Grade(
        id=instance.id, response_id=response_id, all_pass=0, avg_pass=0.0, reward=0.0, reward_mode=mode,
        items=items, parse_error=None, grader_error=why[:2000],
    )  # fmt: skip


def grade(
    instance: Instance,
    response: Any,
    mode: RewardMode = "all_pass",
    response_id: str | None = None,
    on_error: OnError = "raise",
) -> Grade:
    """Grade one response. Raises ``GradingError`` (or ``InvalidGroundTruth``) when the
    grader fails or the instance is not a valid ground truth, unless ``on_error="zero"``."""
    if mode not in REWARD_MODES:
        raise ValueError(f"unknown reward mode {mode!r}; choose one of {', '.join(REWARD_MODES)}")
    if on_error not in ON_ERROR_MODES:
        raise ValueError(f"unknown on_error {on_error!r}; choose one of {', '.join(ON_ERROR_MODES)}")
    try:
        module, checklist = _validated(instance)
        parsed = parse_response(response)
        if parsed.error is not None:  # the answer's fault: an ordinary failed grade
            verdicts = [(False, parsed.error)] * len(checklist.ids)
        else:
            verdicts = _verdicts(instance, module, parsed.value, checklist.ids)
    except GradingError as exc:
        if on_error == "raise":
            raise
        return error_grade(instance, mode, response_id, exc)
    passed = [ok for ok, _ in verdicts]
    # one validation of the whole grade (its items included): the same Grade as building
    # each ItemResult and then the Grade, at a fraction of the cost; by the model's own
    # validator, which is all Grade.model_validate calls (without its argument checks)
    return Grade.__pydantic_validator__.validate_python({
        "id": instance.id,
        "response_id": response_id,
        "all_pass": int(all(passed)),
        "avg_pass": sum(passed) / len(passed),
        "reward": checklist.reward(passed, mode),
        "reward_mode": mode,
        "items": [
            {"id": item_id, "passed": ok, "reason": reason[:REASON_CHARS]}
            for item_id, (ok, reason) in zip(checklist.ids, verdicts)
        ],
        "parse_error": parsed.error,
    })  # fmt: skip
