"""Verdicts of the generic checking flow (pbsolve.checking), the answer checks
(pbsolve.answer_checks), the mechanisms (pbsolve.mechanisms) and the parser, each pinned
because mutation testing (issue 19) found it unguarded: an answer that must pass or fail
an item, and why. Graded through ``pbsolve.grading.grade`` where an instance can carry
the case; the family's ``check_answer`` or the helper itself where the grader would
refuse the instance first (items the generator never writes)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from pbsolve.answer_checks import conflict_verdict, format_verdict, id_set_verdict, validation_verdict
from pbsolve.checking import figures_verdict
from pbsolve.family import checker
from pbsolve.grading import InvalidGroundTruth, grade
from pbsolve.parsing import parse_response
from pbsolve.schema import Instance
from tests import helpers as sched


@pytest.fixture(scope="module")
def recovering() -> Instance:
    """A small timetable with an exception-recovery scenario (meeting M1 is unmoved in it)."""
    inst = sched.instance_at("meeting_planning", 0, 0)
    assert inst is not None and inst.recovery is not None
    return inst


@pytest.fixture(scope="module")
def infeasible() -> Instance:
    for index in range(40):
        inst = sched.instance_at("meeting_planning", 11, index, "small", False, ("infeasibility_detection",))
        if inst is not None and inst.certificate.status == "infeasible":
            return inst
    pytest.skip("no infeasible instance")


def verdicts(inst: Instance, answer: Any) -> dict[str, tuple[bool, str]]:
    """Item rule -> (passed, reason) of a graded answer."""
    g = grade(inst, json.dumps(answer))
    rule = {it.id: it.rule for it in inst.checklist}
    return {rule[i.id]: (i.passed, i.reason) for i in g.items}


def direct(inst: Instance, answer: Any) -> dict[str, tuple[bool, str]]:
    """Item rule -> verdict from the family checker itself (no ground-truth validation)."""
    out = checker(inst.family).check_answer(inst, answer)
    return {it.rule: out[it.id] for it in inst.checklist}


def with_items(inst: Instance, *rules: str) -> Instance:
    extra = [inst.checklist[-1].model_copy(update={"id": f"X{n}", "rule": r}) for n, r in enumerate(rules)]
    return inst.model_copy(update={"checklist": [*inst.checklist, *extra]})


RECOVERY = ("recovery:format", "recovery:rules", "recovery:objective", "recovery:validation")


# -- exception recovery ------------------------------------------------------------------------


def test_a_missing_recovery_section_fails_every_recovery_item_saying_so(recovering):
    answer = copy.deepcopy(recovering.reference)
    del answer["recovery"]
    got = verdicts(recovering, answer)
    assert all(got[r] == (False, "'recovery' section is missing") for r in RECOVERY)
    assert got["format"][0]


def test_without_a_main_plan_every_recovery_item_fails_with_the_main_plans_reason(recovering):
    """Changes are counted from the main plan, so none of the recovery can be judged."""
    answer = copy.deepcopy(recovering.reference)
    answer["schedule"] = "none"
    got = verdicts(recovering, answer)
    reason = got["format"][1]
    assert not got["format"][0]
    assert all(got[r] == (False, reason) for r in RECOVERY)


def test_a_recovery_plan_that_does_not_read_fails_every_recovery_item_with_the_reason(recovering):
    answer = copy.deepcopy(recovering.reference)
    answer["recovery"]["schedule"] = "none"
    got = verdicts(recovering, answer)
    reason = got["recovery:format"][1]
    assert not got["recovery:format"][0] and reason
    assert all(got[r] == (False, reason) for r in RECOVERY[1:])
    assert got["format"][0]


def test_the_certified_recovery_passes_every_recovery_item(recovering):
    got = verdicts(recovering, recovering.reference)
    assert got["recovery:rules"] == (True, "every rule and the scenario hold")
    assert all(got[r][0] for r in RECOVERY)


def test_recovery_changes_are_counted_from_the_answers_own_main_plan(recovering):
    """M1 keeps its slot in the certified recovery; moving it in the main plan makes the
    same recovery plan change one meeting more than it states, and more than the optimum."""
    answer = copy.deepcopy(recovering.reference)
    main = next(r for r in answer["schedule"] if r["event"] == "M1")
    kept = next(r for r in answer["recovery"]["schedule"] if r["event"] == "M1")
    assert (main["start"], main["room"]) == (kept["start"], kept["room"])
    main["start"] = "10:00" if main["start"] != "10:00" else "11:00"
    got = verdicts(recovering, answer)
    stated = answer["recovery"]["objective"]["changes"]
    assert got["recovery:validation"] == (
        False,
        f"'recovery.objective' states changes={stated}; the plan gives {stated + 1}",
    )
    assert not got["recovery:objective"][0]


def test_broken_recovery_rules_are_listed_in_300_characters(recovering):
    answer = copy.deepcopy(recovering.reference)
    for row in answer["recovery"]["schedule"]:
        row["start"] = answer["recovery"]["schedule"][0]["start"]  # every meeting at once
    passed, reason = verdicts(recovering, answer)["recovery:rules"]
    assert not passed and 0 < len(reason) <= 300 and ": " in reason


def test_recovery_validation_names_the_recovery_section(recovering):
    answer = copy.deepcopy(recovering.reference)
    del answer["recovery"]["objective"]
    assert verdicts(recovering, answer)["recovery:validation"] == (False, "'recovery.objective' figures are missing")


# -- infeasibility -----------------------------------------------------------------------------


def test_a_plan_on_an_infeasible_instance_fails_format_even_naming_the_right_conflict(infeasible):
    answer = {"feasible": True, "schedule": [], "conflict": infeasible.certificate.conflict_sets[0]}
    got = verdicts(infeasible, answer)
    assert got["format"] == (False, "gives a plan, but none exists")
    assert got["infeasibility"] == (False, "claims a plan exists")
    assert got["conflict"] == (False, "names no conflict")


def test_the_certified_declaration_passes_every_item(infeasible):
    got = verdicts(infeasible, infeasible.reference)
    assert got == {
        "format": (True, "declaration with a rule list"),
        "infeasibility": (True, "declares infeasibility"),
        "conflict": (True, "names a minimal conflicting set"),
    }


def test_a_declaration_naming_ids_that_are_no_rules_fails_format_listing_five(infeasible):
    names = [*infeasible.certificate.conflict_sets[0], "R91", "R92", "R93", "R94", "R95", "R96"]
    got = verdicts(infeasible, {"feasible": False, "conflict": names})
    assert got["format"] == (
        False,
        "'conflict' names ids that are not rules of this instance: ['R91', 'R92', 'R93', 'R94', 'R95']",
    )
    assert got["conflict"] == (False, "unknown rule ids ['R91', 'R92', 'R93', 'R94', 'R95']")


def test_declaring_infeasibility_when_a_plan_exists_fails_format_saying_so(recovering):
    got = verdicts(recovering, {"feasible": False, "conflict": [recovering.rules[0].id]})
    assert got["format"] == (False, "declares infeasibility, but a plan exists")
    assert got[recovering.rules[0].id] == (False, "no plan to check")


def test_items_of_a_plan_that_does_not_read_fail_with_the_reading_reason(recovering):
    answer = copy.deepcopy(recovering.reference)
    answer["schedule"] = "none"
    got = verdicts(recovering, answer)
    reason = got["format"][1]
    assert not got["format"][0] and reason != "no plan to check"
    assert got[recovering.rules[0].id] == (False, reason)


def test_a_superset_of_a_conflict_set_is_not_minimal():
    from types import SimpleNamespace

    inst = SimpleNamespace(
        rules=[SimpleNamespace(id=f"R{i}") for i in range(1, 5)],
        certificate=SimpleNamespace(conflict_sets=[["R1", "R2"]]),
    )
    assert conflict_verdict(inst, {"conflict": ["r1", " R2 "]}) == (True, "names a minimal conflicting set")  # type: ignore[arg-type]
    assert conflict_verdict(inst, {"conflict": ["R1", "R2", "R3"]}) == (
        False,
        "the named rules conflict, but the set is not minimal",
    )  # type: ignore[arg-type]
    assert conflict_verdict(inst, {"conflict": ["R1", "R3"]}) == (False, "the named rules can all hold together")  # type: ignore[arg-type]


# -- items the generator does not write, judged by the flow itself -----------------------------


def test_an_objective_term_item_passes_at_the_certified_figure_and_fails_off_it(recovering):
    inst = with_items(recovering, "objective:weighted_finish")
    want = recovering.certificate.objective["weighted_finish"]
    assert direct(inst, inst.reference)["objective:weighted_finish"] == (
        True,
        f"plan gives weighted_finish={want}; certified {want}",
    )
    cert = recovering.certificate.model_copy(
        update={"objective": {**recovering.certificate.objective, "weighted_finish": want + 1}}
    )
    off = inst.model_copy(update={"certificate": cert})
    assert direct(off, off.reference)["objective:weighted_finish"] == (
        False,
        f"plan gives weighted_finish={want}; certified {want + 1}",
    )


def test_an_objective_term_item_names_the_term_after_the_first_colon(recovering):
    term = recovering.objective[0]
    renamed = term.model_copy(update={"id": f"a:{term.id}"})
    cert = recovering.certificate.model_copy(
        update={"objective": {f"a:{term.id}": recovering.certificate.objective[term.id]}}
    )
    inst = with_items(recovering, f"objective:a:{term.id}").model_copy(
        update={"objective": [renamed, *recovering.objective[1:]], "certificate": cert}
    )
    want = recovering.certificate.objective[term.id]
    assert direct(inst, inst.reference)[f"objective:a:{term.id}"] == (
        True,
        f"plan gives a:{term.id}={want}; certified {want}",
    )


def test_an_item_naming_no_rule_fails_as_an_unknown_rule(recovering):
    assert direct(with_items(recovering, "R99"), recovering.reference)["R99"] == (False, "unknown rule R99")


def test_a_min_change_item_without_a_changes_term_is_refused(recovering):
    from pbsolve.mechanisms.min_change_replanning import RULE

    with pytest.raises(InvalidGroundTruth, match="which is no rule or item"):
        grade(with_items(recovering, RULE), json.dumps(recovering.reference))


# -- the answer-check helpers ------------------------------------------------------------------


def test_an_id_list_naming_unknown_ids_fails_listing_five():
    known = ["A", "B"]
    named = ["a", "X1", "X2", "X3", "X4", "X5", "X6"]
    assert id_set_verdict(named, ["A"], known, "binding") == (
        False,
        "'binding' names unknown ids ['X1', 'X2', 'X3', 'X4', 'X5']",
    )
    assert id_set_verdict(["a "], ["A"], known, "binding") == (True, "'binding' is exactly right")


def test_validation_names_the_objective_section_by_default():
    assert validation_verdict({}, {"cost": 1}) == (False, "'objective' figures are missing")


def test_a_missing_figures_section_fails():
    assert figures_verdict(None, {"load": {"T1": 3}}, "verification") == (False, "'verification' section is missing")


def test_unknown_figure_names_are_quoted_three_by_their_first_20_characters():
    long = ["N" * 30 + str(i) for i in range(5)]
    stated = {"load": {"T1": 3, **{n: 1 for n in long}}}
    passed, reason = figures_verdict(stated, {"load": {"T1": 3}}, "verification")
    assert not passed
    assert reason == f"'verification.load' names unknown {[n[:20] for n in long[:3]]}"


def test_a_wrong_figure_is_quoted_as_stated():
    passed, reason = figures_verdict({"load": {"t1": 4}}, {"load": {"T1": 3}}, "verification", lambda s: s.upper())
    assert (passed, reason) == (False, "'verification.load.T1' is 4; the plan gives 3")


def test_a_format_verdict_without_a_rule_list_fails():
    from types import SimpleNamespace

    inst = SimpleNamespace(certificate=SimpleNamespace(status="infeasible"), rules=[])
    assert format_verdict(inst, {"feasible": False}, False, "") == (
        False,
        "'conflict' must be a non-empty list of rule ids",
    )  # type: ignore[arg-type]


def test_a_nan_in_the_answer_is_not_json_and_says_which_constant():
    parsed = parse_response('{"feasible": NaN}')
    assert parsed.error is not None and "NaN is not valid JSON" in parsed.error


# -- the reporting mechanisms name their own section ---------------------------------------------


def instance_with(kind: str) -> Instance:
    for task in ("meeting_planning", "course_timetabling", "exam_scheduling"):
        for index in range(40):
            inst = sched.instance_at(task, 11, index, "small", False, (kind,))
            if inst is not None and kind in inst.mechanisms:
                return inst
    pytest.skip(f"no {kind} instance")


@pytest.mark.parametrize(
    "kind, item, reason",
    [
        ("explainability", "binding", "'binding' must be a list of ids"),
        ("local_incompleteness", "conservative", "'conservative' must be a list of ids"),
        ("conflict_validation", "verification", "'verification' section is missing"),
    ],
)
def test_a_missing_report_section_fails_its_item_naming_the_section(kind, item, reason):
    inst = instance_with(kind)
    answer = copy.deepcopy(inst.reference)
    del answer[item]
    assert verdicts(inst, answer)[item] == (False, reason)


def test_recovery_items_without_a_recovery_scenario_fail_and_the_instance_is_refused(recovering):
    """With no scenario there is no recovery plan to check: the family fails the items
    (even for the certified reference) and the grader refuses such an instance."""
    bare = recovering.model_copy(update={"recovery": None})
    got = direct(bare, recovering.reference)
    assert all(got[r] == (False, "no recovery plan to check") for r in RECOVERY)
    with pytest.raises(InvalidGroundTruth, match="which is no rule or item"):
        grade(bare, json.dumps(recovering.reference))


def test_verification_figures_match_names_as_the_plan_does_a_time_like_room_without_its_zero():
    """The timetable family reads '09:00' and '9:00' alike everywhere in an answer (a room
    of that name included); the stated verification figures must be matched the same way."""
    inst = next(
        i for i in (sched.instance_at("meeting_planning", 0, n, "small", False, ("conflict_validation",)) for n in range(12))
        if i is not None and "conflict_validation" in i.mechanisms and i.certificate.status == "optimal"
    )  # fmt: skip
    room = next(r for r, held in inst.reference["verification"]["rooms"].items() if held > 0)
    renamed = Instance.model_validate_json(inst.model_dump_json().replace(f'"{room}"', '"09:00"'))
    answer = copy.deepcopy(renamed.reference)
    rooms = answer["verification"]["rooms"]
    rooms["9:00"] = rooms.pop("09:00")
    got = verdicts(renamed, answer)
    assert got["verification"] == (True, "figures match the plan")
    assert all(passed for passed, _ in got.values())
