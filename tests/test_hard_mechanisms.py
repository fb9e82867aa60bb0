"""Each hard mechanism: the reference passes, a targeted mutation fails the matching item,
and answers writable without solving (list everything, copy the input) never pass it."""

from __future__ import annotations

import copy
import json

import pytest

from pbsolve.grading import grade
from pbsolve.schema import Instance
from tests.helpers import TASKS, instance_at


def find(kind: str, task: str) -> Instance:
    for index in range(40):
        inst = instance_at(task, 11, index, "small", False, (kind,))
        if inst is not None and kind in inst.mechanisms:
            return inst
    pytest.skip(f"no {kind} instance for {task}")


def failed_rules(inst: Instance, answer: dict) -> set[str]:
    g = grade(inst, json.dumps(answer))
    rule = {it.id: it.rule for it in inst.checklist}
    return {rule[i.id] for i in g.items if not i.passed}


def rule_id(inst: Instance, kind: str) -> str:
    return next(r.id for r in inst.rules if r.kind == kind)


@pytest.mark.parametrize("task", TASKS)
def test_replanning_reference_passes_and_keeping_the_old_schedule_fails_the_disruption(task):
    inst = find("min_change_replanning", task)
    assert failed_rules(inst, inst.reference) == set()
    changes = next(t for t in inst.objective if t.kind == "changes")
    old = [{"event": e, "start": s, "room": r} for e, (s, r) in changes.params["existing"].items()]
    answer = {**copy.deepcopy(inst.reference), "schedule": old}
    disruption = next(r.id for r in inst.rules if r.kind in ("person_absent", "room_closed"))
    assert disruption in failed_rules(inst, answer)


@pytest.mark.parametrize("task", TASKS)
def test_replanning_checklist_has_a_hard_minimum_change_item(task):
    inst = find("min_change_replanning", task)
    item = next(it for it in inst.checklist if it.rule == "objective:changes")
    assert item.tier == "hard" and str(inst.certificate.objective["changes"]) in item.text


@pytest.mark.parametrize("task", TASKS)
def test_explainability_needs_exactly_the_binding_rules(task):
    inst = find("explainability", task)
    binding = inst.certificate.binding_rules
    assert 0 < len(binding) < len(inst.rules)
    everything = {**inst.reference, "binding": [r.id for r in inst.rules]}
    assert "binding" in failed_rules(inst, everything)
    nothing = {**inst.reference, "binding": []}
    assert "binding" in failed_rules(inst, nothing)
    shuffled = {**inst.reference, "binding": [b.lower() for b in reversed(binding)]}
    assert failed_rules(inst, shuffled) == set()


@pytest.mark.parametrize("task", TASKS)
def test_incompleteness_needs_exactly_the_conservative_inputs(task):
    inst = find("local_incompleteness", task)
    ids = [u["id"] for u in inst.data["uncertain"]]
    assert 0 < len(inst.certificate.conservative_inputs) < len(ids)
    assert "conservative" in failed_rules(inst, {**inst.reference, "conservative": ids})
    assert "conservative" in failed_rules(inst, {**inst.reference, "conservative": []})
    for u in inst.data["uncertain"]:
        assert f"uncertain input {u['id']}" in inst.prompt


@pytest.mark.parametrize("task", TASKS)
def test_recovery_that_ignores_the_scenario_fails_only_recovery_items(task):
    inst = find("exception_recovery", task)
    answer = copy.deepcopy(inst.reference)
    answer["recovery"]["schedule"] = answer["schedule"]  # "no change": the scenario breaks it
    failed = failed_rules(inst, answer)
    assert "recovery:rules" in failed
    assert failed <= {"recovery:rules", "recovery:objective", "recovery:validation"}


@pytest.mark.parametrize("task", TASKS)
def test_a_missing_recovery_section_fails_every_recovery_item(task):
    inst = find("exception_recovery", task)
    answer = {k: v for k, v in inst.reference.items() if k != "recovery"}
    assert failed_rules(inst, answer) == {"recovery:format", "recovery:rules", "recovery:objective", "recovery:validation"}


@pytest.mark.parametrize("task", TASKS)
def test_robustness_backup_equal_to_the_own_room_fails_the_backup_rule(task):
    inst = find("robustness_design", task)
    answer = copy.deepcopy(inst.reference)
    answer["schedule"][0]["backup"] = answer["schedule"][0]["room"]
    assert rule_id(inst, "room_backup") in failed_rules(inst, answer)


@pytest.mark.parametrize("task", TASKS)
def test_robustness_answer_without_backups_fails_the_format(task):
    inst = find("robustness_design", task)
    answer = copy.deepcopy(inst.reference)
    for row in answer["schedule"]:
        row.pop("backup")
    assert "format" in failed_rules(inst, answer)


@pytest.mark.parametrize("task", TASKS)
def test_verification_with_one_wrong_figure_fails_only_verification(task):
    inst = find("conflict_validation", task)
    answer = copy.deepcopy(inst.reference)
    person = next(iter(answer["verification"]["busy"]))
    answer["verification"]["busy"][person] += 1
    assert failed_rules(inst, answer) == {"verification"}


def test_feasible_mode_ignores_optimality_and_report_items():
    inst = find("explainability", "meeting_planning")
    answer = {**inst.reference, "binding": [], "objective": {k: 0 for k in inst.reference["objective"]}}
    assert grade(inst, json.dumps(answer), "feasible").reward == 1.0
    assert grade(inst, json.dumps(answer), "all_pass").reward == 0.0


def test_every_forced_hard_instance_carries_a_hard_item():
    for index in range(12):
        inst = instance_at("exam_scheduling", 3, index, "small", True)
        if inst is not None:
            assert any(it.tier == "hard" for it in inst.checklist), inst.mechanisms
