"""Answer-content integrity: every field the prompt requires is checked, the prompt's own
placeholders earn nothing, and "all rules" is never a right conflict set.

Covers both families: the stated recovery figures (``recovery:validation``), the format
item on rule ids that are not the instance's, the re-sampling of instances whose only
conflict set is every rule, and the task-aware wording of the format item and template.
"""

from __future__ import annotations

import copy
import json
import random
import re

import pytest

from pbsolve.mechanisms import certification as mechanisms  # the solver side: certify_spec and the certifiers it calls
from pbsolve.certify import Rejected, SolverLimits
from pbsolve.family import checker, family
from pbsolve.generate import GenerateOptions, RunSummary, build_instance
from pbsolve.grading import grade
from pbsolve.sampler import sample_spec
from pbsolve.schema import Instance
from tests import allocation_helpers as AH
from tests import helpers as SH

SCHEDULING = ("meeting_planning", "course_timetabling", "exam_scheduling")
ALLOCATION = ("procurement_planning", "material_allocation", "educational_resource_planning", "student_grouping")
TASKS = SCHEDULING + ALLOCATION


def with_mechanism(kind: str, task: str) -> Instance:
    """A certified instance of the task carrying this mechanism (small size)."""
    if task in SCHEDULING:
        for index in range(40):
            inst = SH.instance_at(task, 11, index, "small", False, (kind,))
            if inst is not None and kind in inst.mechanisms:
                return inst
    else:
        for seed in (11, 12):
            inst = AH.find(task, seed, "small", (kind,), "optimal", tries=20)
            if inst is not None:
                return inst
    pytest.skip(f"no {kind} instance for {task}")


def infeasible(task: str) -> Instance:
    for index in range(40):
        inst = (SH if task in SCHEDULING else AH).instance_at(task, 11, index, "small", True)
        if inst is not None and inst.certificate.status == "infeasible":
            return inst
    pytest.skip(f"no infeasible instance for {task}")


def failed_rules(inst: Instance, answer: dict) -> set[str]:
    g = grade(inst, json.dumps(answer))
    rule = {it.id: it.rule for it in inst.checklist}
    return {rule[i.id] for i in g.items if not i.passed}


# -- exception recovery: the stated figures are checked ------------------------------------
@pytest.mark.parametrize("task", TASKS)
def test_recovery_instances_carry_a_stated_figures_item_the_reference_passes(task):
    inst = with_mechanism("exception_recovery", task)
    assert "recovery:validation" in {it.rule for it in inst.checklist}
    assert failed_rules(inst, inst.reference) == set()


@pytest.mark.parametrize("task", TASKS)
def test_deleting_the_stated_recovery_figures_fails_the_recovery_validation_item(task):
    inst = with_mechanism("exception_recovery", task)
    answer = copy.deepcopy(inst.reference)
    del answer["recovery"]["objective"]
    assert failed_rules(inst, answer) == {"recovery:validation"}


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("nonsense", ["n/a", None, [], {}])
def test_nonsense_stated_recovery_figures_fail_the_recovery_validation_item(task, nonsense):
    inst = with_mechanism("exception_recovery", task)
    answer = copy.deepcopy(inst.reference)
    answer["recovery"]["objective"] = nonsense
    assert failed_rules(inst, answer) == {"recovery:validation"}


@pytest.mark.parametrize("task", TASKS)
def test_a_wrong_stated_recovery_change_count_fails_only_the_recovery_validation_item(task):
    inst = with_mechanism("exception_recovery", task)
    answer = copy.deepcopy(inst.reference)
    answer["recovery"]["objective"]["changes"] = 99
    assert failed_rules(inst, answer) == {"recovery:validation"}


# -- the prompt's own template earns nothing -----------------------------------------------
def _infeasible_template(prompt: str) -> dict:
    tail = prompt.split("If no plan can satisfy every rule, answer instead:", 1)[1]
    return json.loads(re.search(r"```json\n(.*?)\n```", tail, re.S).group(1))


@pytest.mark.parametrize("task", TASKS)
def test_the_prompts_infeasible_template_copied_verbatim_earns_nothing(task):
    inst = infeasible(task)
    template = _infeasible_template(inst.prompt)
    assert template == {"feasible": False, "conflict": ["R?", "R?"]}  # the placeholder the prompt shows
    g = grade(inst, json.dumps(template), mode="avg_pass")
    assert g.avg_pass < 0.5
    assert "format" in failed_rules(inst, template)


@pytest.mark.parametrize("task", TASKS)
def test_a_declaration_naming_an_id_that_is_not_a_rule_fails_the_format_item(task):
    inst = infeasible(task)
    answer = {"feasible": False, "conflict": [inst.rules[0].id, "R99"]}
    assert "format" in failed_rules(inst, answer)


@pytest.mark.parametrize("task", TASKS)
def test_a_declaration_naming_real_rules_keeps_the_format_item(task):
    """The format item judges the form only: real ids that are no conflict set still pass
    it (and fail the conflict item)."""
    inst = infeasible(task)
    answer = {"feasible": False, "conflict": [inst.rules[0].id]}
    failed = failed_rules(inst, answer)
    assert "format" not in failed and "conflict" in failed


# -- "all rules" is never a right conflict set ---------------------------------------------
@pytest.mark.parametrize("task", TASKS)
def test_answering_all_rules_fails_the_conflict_item(task):
    inst = infeasible(task)
    assert all(len(s) < len(inst.rules) for s in inst.certificate.conflict_sets or [])
    answer = {"feasible": False, "conflict": [r.id for r in inst.rules]}
    assert "conflict" in failed_rules(inst, answer)


def _all_rules_conflict(monkeypatch: pytest.MonkeyPatch) -> None:
    """Certify infeasibility as usual, then report every rule as the only conflict set."""
    real = mechanisms.certify_infeasible

    def every_rule(fam, variant, limits):
        result = real(fam, variant, limits)
        result.certificate.conflict_sets = [[r.id for r in variant.rules]]
        return result

    monkeypatch.setattr(mechanisms, "certify_infeasible", every_rule)


def _infeasibility_draft(task: str):
    for index in range(40):
        spec = sample_spec(3, index, 0, None, task, "small", include=["infeasibility_detection"])
        fam = family(spec.family)
        rng = random.Random(spec.seed)
        try:
            return fam, fam.draft(spec, rng), rng
        except Exception:  # NoDraft: try the next index
            continue
    pytest.skip(f"no draft for {task}")


@pytest.mark.parametrize("task", ["meeting_planning", "procurement_planning"])
def test_an_infeasible_draft_whose_only_conflict_set_is_every_rule_is_rejected(task, monkeypatch):
    fam, draft, rng = _infeasibility_draft(task)
    _all_rules_conflict(monkeypatch)
    with pytest.raises(Rejected) as info:
        mechanisms.certify_spec(fam, draft, rng, SolverLimits(), count_plans=False)
    assert info.value.reason == "infeasibility_all_rules"


def test_the_generation_summary_counts_all_rules_rejections(monkeypatch):
    _all_rules_conflict(monkeypatch)
    opts = GenerateOptions(task="meeting_planning", size="small", include=["infeasibility_detection"], max_attempts=2)
    summary = RunSummary()
    summary.add(build_instance(3, 0, opts))
    rejected = summary.as_dict()["hard_kinds"]["infeasibility_detection"]["rejected"]
    assert rejected.get("infeasibility_all_rules", 0) >= 1


# -- the format item and the template speak of the task's own answer -----------------------
@pytest.mark.parametrize("task", TASKS)
def test_the_format_item_describes_the_tasks_own_plan(task):
    inst = infeasible(task) if task == "meeting_planning" else with_mechanism("exception_recovery", task)
    c1 = next(it for it in inst.checklist if it.rule == "format")
    assert checker(inst.family).format_text(task) in c1.text
    assert "every item exactly once" not in c1.text
    assert "names only this instance's rule ids" in c1.text


def test_the_procurement_format_item_speaks_of_order_lines_not_every_item():
    assert "a list of order lines" in checker("allocation").format_text("procurement_planning")
    assert "exactly once" not in checker("allocation").format_text("procurement_planning")


def test_the_grouping_template_shows_student_placeholders():
    inst = with_mechanism("exception_recovery", "student_grouping")
    assert '"groups": [["<student>", "..."], "..."]' in inst.prompt
    assert "<groups>" not in inst.prompt
