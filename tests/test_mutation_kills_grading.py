"""The grader's own verdicts on what it is given (pbsolve.grading), each pinned by a test
because mutation testing (issue 19) found it unguarded: which ground truths are refused
and with what message, which checker failures are the grader's (never a reward), that a
grader error names its instance, and what ``on_error="zero"`` returns.

Most tests stand a *stand-in checker* in for the family's (``pbsolve.grading.checker``
patched): a module exposing the three hooks the grader needs, which accepts every rule
and objective kind of the instance, reads no data and passes every item. That isolates
the grader from the family checkers, so each test changes exactly one thing the grader
has to notice."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import ConfigDict

import pbsolve.grading as grading
from pbsolve.grading import GradingError, InvalidGroundTruth, grade, validate_instance
from pbsolve.params import Params
from pbsolve.schema import Instance, ObjectiveTerm, Recovery
from tests import helpers as sched


@pytest.fixture
def inst() -> Instance:
    """A fresh copy (own memo) of a small certified timetable."""
    found = sched.instance_at("meeting_planning", 0, 0)
    assert found is not None
    return found.model_copy()


def all_pass(instance: Instance, answer: Any) -> dict[str, tuple[bool, str]]:
    return {it.id: (True, "ok") for it in instance.checklist}


class AnyParams(Params):
    """Parameters the stand-in accepts whatever they are (it judges nothing)."""

    model_config = ConfigDict(extra="allow")


def stand_in(instance: Instance, **hooks: Callable[..., Any]) -> SimpleNamespace:
    """A checker module that knows every kind of ``instance`` and passes every item,
    with ``hooks`` replacing any of its three hooks."""
    scenario, recovery_terms = (
        (instance.recovery.scenario, instance.recovery.objective) if instance.recovery else ([], [])
    )
    rules = dict.fromkeys((r.kind for r in [*instance.rules, *scenario]), AnyParams)
    terms = dict.fromkeys((t.kind for t in [*instance.objective, *recovery_terms]), AnyParams)
    module: dict[str, Any] = {
        "known_kinds": lambda task: (rules, terms),
        "read_data": lambda i: None,
        "check_answer": all_pass,
    }
    module.update(hooks)
    return SimpleNamespace(**module)


def use_checker(monkeypatch: pytest.MonkeyPatch, module: Any) -> None:
    monkeypatch.setattr(grading, "checker", lambda fid: module)


def refusal(instance: Instance, kind: type[GradingError] = InvalidGroundTruth) -> GradingError:
    """The error grading ``instance`` raises; it must name the instance."""
    with pytest.raises(kind) as caught:
        grade(instance, json.dumps(instance.reference))
    assert caught.value.instance_id == instance.id
    return caught.value


def with_items(instance: Instance, *rules: str) -> Instance:
    extra = [instance.checklist[-1].model_copy(update={"id": f"X{n}", "rule": rule}) for n, rule in enumerate(rules)]
    return instance.model_copy(update={"checklist": [*instance.checklist, *extra]})


# -- families that are not there, or not usable ----------------------------------------------


def test_a_family_that_is_not_an_identifier_is_refused_by_its_first_80_characters(inst):
    fid = "no such family " + "x" * 200
    err = refusal(inst.model_copy(update={"family": fid}))
    assert f"family {fid[:80]!r} is not a family id" in str(err)


def test_an_unknown_family_is_an_invalid_ground_truth_naming_the_instance(inst):
    err = refusal(inst.model_copy(update={"family": "nosuchfamily"}))
    assert "unknown family 'nosuchfamily'" in str(err)


def test_a_checker_that_imports_a_missing_module_is_a_grader_failure_not_an_unknown_family(inst, monkeypatch):
    def broken(fid: str) -> Any:
        raise ModuleNotFoundError("No module named 'somedep'", name="somedep")

    monkeypatch.setattr(grading, "checker", broken)
    err = refusal(inst, GradingError)
    assert not isinstance(err, InvalidGroundTruth)
    assert "cannot be imported" in str(err)


def test_a_checker_that_fails_to_import_is_a_grader_failure_saying_how(inst, monkeypatch):
    def broken(fid: str) -> Any:
        raise RuntimeError("boom at import")

    monkeypatch.setattr(grading, "checker", broken)
    err = refusal(inst, GradingError)
    assert not isinstance(err, InvalidGroundTruth)
    assert str(err) == "the checker of family 'scheduling' cannot be imported: RuntimeError: boom at import"


def test_a_checker_lacking_hooks_is_a_grader_failure_listing_them(inst, monkeypatch):
    module = stand_in(inst)
    del module.known_kinds, module.read_data
    use_checker(monkeypatch, module)
    err = refusal(inst, GradingError)
    assert str(err).endswith("lacks known_kinds, read_data")


# -- ground truths that are refused ----------------------------------------------------------


def test_an_empty_checklist_is_refused_because_every_answer_would_pass(inst, monkeypatch):
    use_checker(monkeypatch, stand_in(inst))
    err = refusal(inst.model_copy(update={"checklist": []}))
    assert str(err).endswith("is not a valid ground truth: the checklist is empty (every answer would pass it)")


def test_duplicate_checklist_and_rule_ids_are_refused_naming_only_the_duplicates(inst, monkeypatch):
    use_checker(monkeypatch, stand_in(inst))
    bad = inst.model_copy(
        update={"checklist": [*inst.checklist, inst.checklist[1]], "rules": [*inst.rules, inst.rules[0]]}
    )
    err = str(refusal(bad))
    assert f"duplicate checklist item ids {[inst.checklist[1].id]}" in err
    assert f"duplicate rule ids {[inst.rules[0].id]}" in err


def test_unknown_rule_and_objective_kinds_are_refused_and_listed(inst, monkeypatch):
    use_checker(monkeypatch, stand_in(inst))
    r1, r2 = (r.model_copy(update={"kind": "bogus"}) for r in inst.rules[:2])
    t1, t2 = (t.model_copy(update={"kind": "nope"}) for t in inst.objective[:2])
    bad = inst.model_copy(update={"rules": [r1, r2, *inst.rules[2:]], "objective": [t1, t2, *inst.objective[2:]]})
    err = str(refusal(bad))
    assert (
        "rule kinds the scheduling checker does not know: " + ", ".join(sorted(f"{r.id}: bogus" for r in (r1, r2)))
        in err
    )
    assert (
        "objective kinds the scheduling checker does not know: " + ", ".join(sorted(f"{t.id}: nope" for t in (t1, t2)))
        in err
    )


def test_unknown_kinds_in_the_recovery_scenario_and_objective_are_refused(inst, monkeypatch):
    """The scenario's rules and the recovery objective are checked by the same checker,
    so their kinds must be known too."""
    use_checker(monkeypatch, stand_in(inst))
    recovery = Recovery(
        scenario=[inst.rules[0].model_copy(update={"id": "S1", "kind": "bogus"})],
        objective=[ObjectiveTerm(id="changes", kind="nope")],
        certificate=inst.certificate,
    )
    err = str(refusal(inst.model_copy(update={"recovery": recovery})))
    assert "S1: bogus" in err
    assert "changes: nope" in err


def test_an_item_for_an_objective_term_of_the_instance_is_accepted(inst, monkeypatch):
    use_checker(monkeypatch, stand_in(inst))
    ok = with_items(inst, f"objective:{inst.objective[0].id}")
    assert grade(ok, json.dumps(ok.reference)).reward == 1.0


def test_an_item_for_an_objective_term_the_instance_lacks_is_refused(inst, monkeypatch):
    use_checker(monkeypatch, stand_in(inst))
    err = str(refusal(with_items(inst, "objective:no_such_term")))
    assert "names 'objective:no_such_term', which is no rule or item of this instance" in err


def test_an_item_naming_no_rule_is_refused_by_its_first_80_characters(inst, monkeypatch):
    use_checker(monkeypatch, stand_in(inst))
    rule = "R" + "9" * 200
    err = str(refusal(with_items(inst, rule)))
    assert f"names {rule[:80]!r}, which" in err


def test_data_the_checker_cannot_read_is_refused_with_the_first_300_characters_of_why(inst, monkeypatch):
    def read_data(instance: Instance) -> None:
        raise ValueError("m" * 400)

    use_checker(monkeypatch, stand_in(inst, read_data=read_data))
    err = str(refusal(inst))
    assert f"data does not match task 'meeting_planning': ValueError: {'m' * 300}" in err
    assert "m" * 301 not in err


def test_a_reference_the_checker_fails_is_refused_listing_five_failures_of_200_characters(inst, monkeypatch):
    def fail_all(instance: Instance, answer: Any) -> dict[str, tuple[bool, str]]:
        return {it.id: (False, "r" * 300) for it in instance.checklist}

    use_checker(monkeypatch, stand_in(inst, check_answer=fail_all))
    err = str(refusal(inst))
    n = len(inst.checklist)
    listed = [f"{it.id} ({it.rule}): {'r' * 300}"[:200] for it in inst.checklist[:5]]
    assert err.endswith(f"fails {n} item(s): " + "; ".join(listed))


# -- checkers that fail while grading --------------------------------------------------------


def test_a_checker_that_raises_is_a_grader_failure_with_500_characters_of_the_error(inst, monkeypatch):
    def crash(instance: Instance, answer: Any) -> Any:
        raise KeyError("k" * 700)

    use_checker(monkeypatch, stand_in(inst, check_answer=crash))
    err = str(refusal(inst, GradingError))
    assert f"the scheduling checker raised on instance {inst.id}: KeyError: " in err
    assert err.endswith(str(KeyError("k" * 700))[:500])


@pytest.mark.parametrize(
    "verdicts",
    [[("C1", (True, "ok"))], "all good"],
    ids=["a list", "a string"],
)
def test_verdicts_that_are_not_a_mapping_are_a_grader_failure(inst, monkeypatch, verdicts):
    use_checker(monkeypatch, stand_in(inst, check_answer=lambda i, a: verdicts))
    refusal(inst, GradingError)


@pytest.mark.parametrize(
    "verdict",
    [(1, "a number is not a verdict"), [True, "ok", "extra"], (True,), None, "True"],
    ids=["non-bool passed", "three elements", "one element", "missing", "a string"],
)
def test_a_malformed_item_verdict_is_a_grader_failure_quoting_it(inst, monkeypatch, verdict):
    def check(instance: Instance, answer: Any) -> dict[str, Any]:
        out: dict[str, Any] = dict(all_pass(instance, answer))
        out[instance.checklist[-1].id] = verdict
        return out

    use_checker(monkeypatch, stand_in(inst, check_answer=check))
    err = str(refusal(inst, GradingError))
    assert (
        f"no verdict (passed, reason) for item {inst.checklist[-1].id} of instance {inst.id} (got {str(verdict)[:80]})"
        in err
    )


def test_a_malformed_verdict_is_quoted_by_its_first_80_characters(inst, monkeypatch):
    verdict = (1, "v" * 200)

    def check(instance: Instance, answer: Any) -> dict[str, Any]:
        return {it.id: verdict for it in instance.checklist}

    use_checker(monkeypatch, stand_in(inst, check_answer=check))
    assert f"(got {str(verdict)[:80]})" in str(refusal(inst, GradingError))


# -- the validation verdict is kept, but only the instance's own -----------------------------


def test_a_refused_instance_is_refused_again_with_its_id_from_the_kept_verdict(inst, monkeypatch):
    use_checker(monkeypatch, stand_in(inst))
    bad = inst.model_copy(update={"checklist": []})
    first, second = refusal(bad), refusal(bad)
    assert type(first) is type(second) and str(first) == str(second)


def test_a_checker_crash_while_validating_is_not_kept(inst, monkeypatch):
    """A crash is the grader's (it may be transient), so the next grade validates again."""
    calls = []

    def flaky(instance: Instance, answer: Any) -> dict[str, tuple[bool, str]]:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("transient")
        return all_pass(instance, answer)

    use_checker(monkeypatch, stand_in(inst, check_answer=flaky))
    refusal(inst, GradingError)
    assert grade(inst, json.dumps(inst.reference)).reward == 1.0


def test_an_instance_whose_contents_change_is_validated_again(inst, monkeypatch):
    use_checker(monkeypatch, stand_in(inst))
    validate_instance(inst)
    inst.rules = [*inst.rules, inst.rules[0]]  # same number of parts, one of them replaced
    with pytest.raises(InvalidGroundTruth, match="duplicate rule ids"):
        validate_instance(inst)


# -- on_error="zero" and the argument checks --------------------------------------------------


def test_a_zero_grade_for_a_grader_failure_keeps_the_response_id_and_says_why(inst, monkeypatch):
    def broken(fid: str) -> Any:
        raise RuntimeError("x" * 3000)

    monkeypatch.setattr(grading, "checker", broken)
    g = grade(inst, json.dumps(inst.reference), mode="avg_pass", response_id="resp-7", on_error="zero")
    assert (g.response_id, g.reward, g.avg_pass, g.all_pass, g.parse_error) == ("resp-7", 0.0, 0.0, 0, None)
    assert g.grader_error is not None and g.grader_error.startswith(
        "GradingError: the checker of family 'scheduling' cannot be imported: RuntimeError: xxx"
    )
    assert len(g.grader_error) == 2000
    assert all(not r.passed and r.reason.startswith("grader error: GradingError: ") for r in g.items)


def test_an_unknown_reward_mode_is_refused_listing_the_modes(inst):
    with pytest.raises(
        ValueError, match=re.escape("unknown reward mode 'best'; choose one of all_pass, avg_pass, feasible")
    ):
        grade(inst, "{}", mode="best")  # type: ignore[arg-type]


def test_an_unknown_on_error_is_refused_listing_the_choices(inst):
    with pytest.raises(ValueError, match=re.escape("unknown on_error 'ignore'; choose one of raise, zero")):
        grade(inst, "{}", on_error="ignore")  # type: ignore[arg-type]


def test_an_objective_item_splits_the_term_id_at_its_first_colon_only(inst, monkeypatch):
    """Item 'objective:a:b' names the term 'a:b' (the rule is 'objective:' + term id)."""
    use_checker(monkeypatch, stand_in(inst))
    term = inst.objective[0].model_copy(update={"id": "a:b"})
    ok = with_items(inst.model_copy(update={"objective": [term, *inst.objective[1:]]}), "objective:a:b")
    assert grade(ok, json.dumps(ok.reference)).reward == 1.0
