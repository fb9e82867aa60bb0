"""Every task type of every registered family, per hard mechanism its pool offers: the
reference passes, a targeted mutation fails the matching item, and answers writable
without solving (all rules, no rules, the answer template, copied lists, hedged claims)
never pass it; the labels `pbsolve perturb` gives its near misses hold."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator

import pytest

from pbsolve.audit.perturb import perturb_instance
from pbsolve.family import find_task
from pbsolve.grading import grade
from pbsolve.schema import Instance
from tests.family_adapters import adapter, find, instance_at, registry_tasks, toy_family_registered

TASKS = registry_tasks()


@pytest.fixture(autouse=True)
def _registry() -> Iterator[None]:
    with toy_family_registered():
        yield


def _offering(mech: str) -> list[str]:
    """The task types whose pool offers the mechanism."""
    with toy_family_registered():
        return [t for t in TASKS if mech in {c.id for c in find_task(t).pool}]


def need(kind: str, task: str, status: str = "optimal") -> Instance:
    for seed in (11, 12):
        inst = find(task, seed, "small", (kind,), status, tries=40)
        if inst is not None:
            return inst
    pytest.skip(f"no {kind} instance for {task}")


def plain(task: str, status: str) -> Instance:
    """The first plain feasible (no mechanism) or infeasible instance at seed 0."""
    infeasible = status == "infeasible"
    for index in range(12):
        inst = instance_at(task, 0, index, "small", infeasible, ("infeasibility_detection",) if infeasible else ())
        if inst is not None and inst.certificate.status == status and (status == "infeasible" or not inst.mechanisms):
            return inst
    pytest.skip(f"no {status} {task} instance in the small set")


def failed_rules(inst: Instance, answer: dict | str) -> set[str]:
    g = grade(inst, answer if isinstance(answer, str) else json.dumps(answer))
    rule = {it.id: it.rule for it in inst.checklist}
    return {rule[i.id] for i in g.items if not i.passed}


def rule_id(inst: Instance, kind: str) -> str:
    return next(r.id for r in inst.rules if r.kind == kind)


# -- min-change replanning ---------------------------------------------------------------
@pytest.mark.parametrize("task", _offering("min_change_replanning"))
def test_replanning_reference_passes_and_keeping_the_current_plan_fails_the_disruption(task):
    inst = need("min_change_replanning", task)
    ad = adapter(task)
    assert failed_rules(inst, inst.reference) == set()
    rows = ad.existing_rows(inst, inst.objective[0].params["existing"])
    kept = {**copy.deepcopy(inst.reference), ad.tc(task).plan_key: rows}
    disruption = [r.id for r in inst.rules if r.tier == "hard"]
    assert disruption and set(disruption) & failed_rules(inst, kept)
    assert "**Current" in inst.prompt


@pytest.mark.parametrize("task", _offering("min_change_replanning"))
def test_replanning_checklist_has_a_hard_minimum_change_item(task):
    inst = need("min_change_replanning", task)
    item = next(it for it in inst.checklist if it.rule == "objective:changes")
    assert item.tier == "hard" and str(inst.certificate.objective["changes"]) in item.text


# -- explainability ------------------------------------------------------------------------
@pytest.mark.parametrize("task", _offering("explainability"))
def test_explainability_needs_exactly_the_binding_rules(task):
    inst = need("explainability", task)
    binding = inst.certificate.binding_rules
    assert 0 < len(binding) < len(inst.rules)
    assert "binding" in failed_rules(inst, {**inst.reference, "binding": [r.id for r in inst.rules]})  # all rules
    assert "binding" in failed_rules(inst, {**inst.reference, "binding": []})  # no rules
    assert failed_rules(inst, {**inst.reference, "binding": [b.lower() for b in reversed(binding)]}) == set()


@pytest.mark.parametrize("task", _offering("explainability"))
def test_feasible_mode_ignores_optimality_and_report_items(task):
    inst = need("explainability", task)
    answer = {**inst.reference, "binding": [], "objective": {k: 0 for k in inst.reference["objective"]}}
    assert grade(inst, json.dumps(answer), "feasible").reward == 1.0
    assert grade(inst, json.dumps(answer), "all_pass").reward == 0.0


# -- local incompleteness -------------------------------------------------------------------
@pytest.mark.parametrize("task", _offering("local_incompleteness"))
def test_incompleteness_needs_exactly_the_conservative_inputs(task):
    inst = need("local_incompleteness", task)
    ids = [u["id"] for u in inst.data["uncertain"]]
    assert 0 < len(inst.certificate.conservative_inputs) < len(ids)
    assert "conservative" in failed_rules(inst, {**inst.reference, "conservative": ids})  # the copied input list
    assert "conservative" in failed_rules(inst, {**inst.reference, "conservative": []})
    for u in inst.data["uncertain"]:
        stated = f"{u['low']}–{u['high']} " if adapter(task).uncertain_range_in_prompt else ""
        assert f"{stated}(uncertain input {u['id']})" in inst.prompt


# -- exception recovery ---------------------------------------------------------------------
@pytest.mark.parametrize("task", _offering("exception_recovery"))
def test_recovery_that_ignores_the_scenario_fails_only_recovery_items(task):
    inst = need("exception_recovery", task)
    key = adapter(task).tc(task).plan_key
    answer = copy.deepcopy(inst.reference)
    answer["recovery"][key] = answer[key]  # "no change": the scenario breaks it
    failed = failed_rules(inst, answer)
    assert "recovery:rules" in failed
    assert failed <= {"recovery:rules", "recovery:objective", "recovery:validation"}


@pytest.mark.parametrize("task", _offering("exception_recovery"))
def test_a_missing_recovery_section_fails_every_recovery_item(task):
    inst = need("exception_recovery", task)
    answer = {k: v for k, v in inst.reference.items() if k != "recovery"}
    assert failed_rules(inst, answer) == {"recovery:format", "recovery:rules", "recovery:objective", "recovery:validation"}


# -- robustness -----------------------------------------------------------------------------
@pytest.mark.parametrize("task", _offering("robustness_design"))
def test_a_plan_that_is_valid_but_not_robust_fails_the_robustness_rule(task):
    inst = need("robustness_design", task)
    ad = adapter(task)
    robust = [r.id for r in inst.rules if r.tier == "hard"]
    assert robust
    found = False
    for plan in ad.single_moves(inst, ad.plan_of(inst, inst.reference)):
        verdicts, _ = ad.evaluate(inst, plan)
        broken = {r for r in robust if not verdicts[r][0]}
        if broken:
            found = True
            assert broken <= failed_rules(inst, ad.answer_of(inst, plan, base=inst.reference))
    assert found, "no single move breaks the robustness rule"


# -- conflict validation (stated figures) ---------------------------------------------------
@pytest.mark.parametrize("task", _offering("conflict_validation"))
def test_verification_with_one_wrong_or_unknown_figure_fails_only_verification(task):
    inst = need("conflict_validation", task)
    answer = copy.deepcopy(inst.reference)
    group = next(iter(answer["verification"]))
    name = next(iter(answer["verification"][group]))
    answer["verification"][group][name] += 1
    assert failed_rules(inst, answer) == {"verification"}
    answer["verification"][group][name] -= 1
    answer["verification"][group]["nobody"] = 0
    assert failed_rules(inst, answer) == {"verification"}


# -- infeasibility detection ----------------------------------------------------------------
@pytest.mark.parametrize("task", _offering("infeasibility_detection"))
def test_infeasible_instances_need_a_certified_minimal_conflict(task):
    inst = need("infeasibility_detection", task, "infeasible")
    sets = inst.certificate.conflict_sets
    assert sets
    if adapter(task).conflicts_run_through_rules:
        assert all(len(s) >= 2 for s in sets)
    for s in sets:
        assert grade(inst, json.dumps({"feasible": False, "conflict": s})).all_pass == 1
    every = [r.id for r in inst.rules]
    if not any(set(s) == set(every) for s in sets):
        assert "conflict" in failed_rules(inst, {"feasible": False, "conflict": every})  # all rules
    assert "conflict" in failed_rules(inst, {"feasible": False, "conflict": []})  # no rules
    if len(sets[0]) < len(every):
        superset = [*sets[0], next(r for r in every if r not in sets[0])]
        assert "conflict" in failed_rules(inst, {"feasible": False, "conflict": superset})
    # the added rule hides among the sampled ones: its kind also occurs in feasible instances
    kind = next(r.kind for r in inst.rules if r.tier == "hard")
    assert kind in {c.id for c in find_task(task).pool}


@pytest.mark.parametrize("task", TASKS)
def test_every_forced_hard_instance_carries_a_hard_item(task):
    built = [instance_at(task, 3, index, "small", True) for index in range(12)]
    assert any(built)
    for inst in filter(None, built):
        assert any(it.tier == "hard" for it in inst.checklist), inst.mechanisms


# -- answers writable without solving -------------------------------------------------------
def _template(inst: Instance) -> str:
    """The example answer of the prompt's answer-format section, copied as it stands."""
    section = inst.prompt[inst.prompt.index("## Answer format") :]
    return re.search(r"```json\n(.*?)```", section, re.S).group(1)


@pytest.mark.parametrize("task", TASKS)
def test_the_answer_template_copied_from_the_prompt_passes_nothing(task):
    inst = plain(task, "optimal")
    g = grade(inst, _template(inst))
    assert not any(i.passed for i in g.items), [i.id for i in g.items if i.passed]


@pytest.mark.parametrize("task", TASKS)
def test_declaring_a_feasible_instance_infeasible_fails_every_item(task):
    inst = plain(task, "optimal")
    for conflict in ([r.id for r in inst.rules], [], [inst.rules[0].id]):
        g = grade(inst, json.dumps({"feasible": False, "conflict": conflict}))
        assert g.all_pass == 0 and not any(i.passed for i in g.items), conflict


@pytest.mark.parametrize("task", TASKS)
def test_a_hedged_answer_is_graded_by_its_last_claim(task):
    """Two answers in one reply (a plan, then 'infeasible' with every rule): the grade is the
    last one's, so hedging never earns the plan's items."""
    inst = plain(task, "optimal")
    hedge = {"feasible": False, "conflict": [r.id for r in inst.rules]}
    text = f"```json\n{json.dumps(inst.reference)}\n```\nOr perhaps:\n```json\n{json.dumps(hedge)}\n```"
    assert grade(inst, text).all_pass == 0
    assert failed_rules(inst, text) == failed_rules(inst, hedge)


@pytest.mark.parametrize("task", TASKS)
def test_claiming_a_plan_for_an_infeasible_instance_fails_it(task):
    inst = plain(task, "infeasible")
    g = grade(inst, adapter(task).baseline(inst))
    assert g.all_pass == 0


# -- near-miss labels -----------------------------------------------------------------------
@pytest.mark.parametrize("status", ["optimal", "infeasible"])
@pytest.mark.parametrize("task", TASKS)
def test_near_miss_labels_hold_each_labelled_broken_rule_fails_its_item(task, status):
    inst = plain(task, status)
    kind_of = {r.id: r.kind for r in inst.rules}
    rule_of = {it.id: it.rule for it in inst.checklist}
    lines = perturb_instance(inst, seed=0)
    assert lines
    for p in lines:
        g = grade(inst, p.response)
        fails = tuple(i.id for i in g.items if not i.passed)
        assert fails == p.fails, p.kind
        if p.kind == "correct":
            assert not fails
        if p.kind.startswith("break_rule:"):
            kind = p.kind.split(":", 1)[1]
            assert any(kind_of.get(rule_of[i]) == kind for i in fails), (p.kind, [rule_of[i] for i in fails])
            assert g.all_pass == 0
