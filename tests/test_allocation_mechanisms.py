"""Allocation family, hard tier: for each mechanism and task type, the reference passes, a
targeted mutation fails the matching item, and answers writable without solving (list
everything, copy the input, ignore the scenario) never pass it."""

from __future__ import annotations

import copy
import json
import random

import pytest

from pbsolve.grading import grade
from pbsolve.schema import Instance
from tests.allocation_helpers import TASKS, answer_of, evaluate, find, plan_of, single_moves, tc_of

ROBUST_KIND = {
    "procurement_planning": "delay_robust",
    "material_allocation": "depot_failure",
    "educational_resource_planning": "teacher_backup",
    "student_grouping": "dropout_robust",
}
DISRUPTION_KINDS = {"supplier_closed", "route_closed", "teacher_absent", "room_closed", "apart", "together"}


def need(kind: str, task: str, status: str = "optimal") -> Instance:
    for seed in (11, 12):
        inst = find(task, seed, "small", (kind,), status, tries=20)
        if inst is not None:
            return inst
    pytest.skip(f"no {kind} instance for {task}")


def failed_rules(inst: Instance, answer: dict) -> set[str]:
    g = grade(inst, json.dumps(answer))
    rule = {it.id: it.rule for it in inst.checklist}
    return {rule[i.id] for i in g.items if not i.passed}


def rule_id(inst: Instance, kind: str) -> str:
    return next(r.id for r in inst.rules if r.kind == kind)


def _old_answer(inst: Instance) -> dict:
    existing = inst.objective[0].params["existing"]
    task = inst.task
    if task == "procurement_planning":
        rows = [{"quantity": q, "supplier": s, "item": i, "week": w} for s, i, w, q in existing]
    elif task == "material_allocation":
        rows = [{"units": q, "depot": x, "site": s, "material": m} for x, s, m, q in existing]
    elif task == "educational_resource_planning":
        rows = [{"lesson": x, "teacher": t, "room": r} for x, (t, r) in existing.items()]
    else:
        rows = existing
    return {**copy.deepcopy(inst.reference), tc_of(task).plan_key: rows}


@pytest.mark.parametrize("task", TASKS)
def test_replanning_reference_passes_and_keeping_the_current_plan_fails_the_disruption(task):
    inst = need("min_change_replanning", task)
    assert failed_rules(inst, inst.reference) == set()
    disruption = [r.id for r in inst.rules if r.tier == "hard" and r.kind in DISRUPTION_KINDS]
    assert disruption and set(disruption) & failed_rules(inst, _old_answer(inst))
    item = next(it for it in inst.checklist if it.rule == "objective:changes")
    assert item.tier == "hard" and str(inst.certificate.objective["changes"]) in item.text
    assert "**Current" in inst.prompt


@pytest.mark.parametrize("task", TASKS)
def test_explainability_needs_exactly_the_binding_rules(task):
    inst = need("explainability", task)
    binding = inst.certificate.binding_rules
    assert 0 < len(binding) < len(inst.rules)
    assert "binding" in failed_rules(inst, {**inst.reference, "binding": [r.id for r in inst.rules]})
    assert "binding" in failed_rules(inst, {**inst.reference, "binding": []})
    assert failed_rules(inst, {**inst.reference, "binding": [b.lower() for b in reversed(binding)]}) == set()


@pytest.mark.parametrize("task", TASKS)
def test_incompleteness_needs_exactly_the_conservative_inputs(task):
    inst = need("local_incompleteness", task)
    ids = [u["id"] for u in inst.data["uncertain"]]
    assert 0 < len(inst.certificate.conservative_inputs) < len(ids)
    assert "conservative" in failed_rules(inst, {**inst.reference, "conservative": ids})
    assert "conservative" in failed_rules(inst, {**inst.reference, "conservative": []})
    for u in inst.data["uncertain"]:
        assert f"{u['low']}–{u['high']} (uncertain input {u['id']})" in inst.prompt


@pytest.mark.parametrize("task", TASKS)
def test_recovery_that_ignores_the_scenario_fails_only_recovery_items(task):
    inst = need("exception_recovery", task)
    key = tc_of(task).plan_key
    answer = copy.deepcopy(inst.reference)
    answer["recovery"][key] = answer[key]  # "no change": the scenario breaks it
    failed = failed_rules(inst, answer)
    assert "recovery:rules" in failed
    assert failed <= {"recovery:rules", "recovery:objective", "recovery:validation"}


@pytest.mark.parametrize("task", TASKS)
def test_a_missing_recovery_section_fails_every_recovery_item(task):
    inst = need("exception_recovery", task)
    answer = {k: v for k, v in inst.reference.items() if k != "recovery"}
    assert failed_rules(inst, answer) == {"recovery:format", "recovery:rules", "recovery:objective", "recovery:validation"}


@pytest.mark.parametrize("task", TASKS)
def test_a_plan_that_is_valid_but_not_robust_fails_the_robustness_rule(task):
    inst = need("robustness_design", task)
    robust = rule_id(inst, ROBUST_KIND[task])
    found = False
    for plan in single_moves(inst, plan_of(inst, inst.reference)):
        verdicts, _ = evaluate(inst, plan)
        if not verdicts[robust][0]:
            found = True
            assert robust in failed_rules(inst, answer_of(inst, plan, base=inst.reference))
    assert found, "no single move breaks the robustness rule"


def test_a_backup_teacher_equal_to_the_lessons_own_teacher_fails_the_backup_rule():
    inst = need("robustness_design", "educational_resource_planning")
    answer = copy.deepcopy(inst.reference)
    answer["assignments"][0]["backup"] = answer["assignments"][0]["teacher"]
    assert rule_id(inst, "teacher_backup") in failed_rules(inst, answer)
    for row in answer["assignments"]:
        row.pop("backup")
    assert "format" in failed_rules(inst, answer)


@pytest.mark.parametrize("task", TASKS)
def test_verification_with_one_wrong_figure_fails_only_verification(task):
    inst = need("conflict_validation", task)
    answer = copy.deepcopy(inst.reference)
    group = next(iter(answer["verification"]))
    name = next(iter(answer["verification"][group]))
    answer["verification"][group][name] += 1
    assert failed_rules(inst, answer) == {"verification"}
    answer["verification"][group][name] -= 1
    answer["verification"][group]["nobody"] = 0
    assert failed_rules(inst, answer) == {"verification"}


@pytest.mark.parametrize("task", TASKS)
def test_infeasible_instances_need_a_certified_minimal_conflict(task):
    inst = need("infeasibility_detection", task, "infeasible")
    sets = inst.certificate.conflict_sets
    assert sets and all(len(s) >= 2 for s in sets)
    for s in sets:
        assert grade(inst, json.dumps({"feasible": False, "conflict": s})).all_pass == 1
    every = [r.id for r in inst.rules]
    if not any(set(s) == set(every) for s in sets):
        assert "conflict" in failed_rules(inst, {"feasible": False, "conflict": every})
    superset = list(sets[0]) + [next(r for r in every if r not in sets[0])] if len(sets[0]) < len(every) else None
    if superset:
        assert "conflict" in failed_rules(inst, {"feasible": False, "conflict": superset})
    # the added rule hides among the sampled ones: its kind also occurs in feasible instances
    kind = next(r.kind for r in inst.rules if r.tier == "hard")
    from pbsolve.family import find_task

    assert kind in {c.id for c in find_task(task).pool}


def test_grouping_answers_are_label_free():
    inst = find("student_grouping", 13, "small")
    assert inst is not None
    rnd = random.Random(0)
    groups = [list(g) for g in inst.reference["groups"]]
    for _ in range(5):
        shuffled = [rnd.sample(g, len(g)) for g in groups]
        rnd.shuffle(shuffled)
        answer = {**inst.reference, "groups": shuffled}
        assert grade(inst, json.dumps(answer)).all_pass == 1


def test_feasible_mode_ignores_optimality_and_report_items():
    inst = need("explainability", "material_allocation")
    answer = {**inst.reference, "binding": [], "objective": {k: 0 for k in inst.reference["objective"]}}
    assert grade(inst, json.dumps(answer), "feasible").reward == 1.0
    assert grade(inst, json.dumps(answer), "all_pass").reward == 0.0
