"""Allocation family: the structural promises of the family interface (pools, one encoding,
check, sentence and sampler per rule kind, the stateful layer). Reproducibility is held
for every family by tests/test_registry_determinism.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbsolve.checkers.allocation import TASKS as CHECKERS
from pbsolve.family import families, find_task
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.mechanisms import HARD_KINDS, REPORTING_KINDS
from pbsolve.models.allocation import TASK_MODULES
from pbsolve.renderers import allocation as rend
from tests.allocation_helpers import TASKS

ROOT = Path(__file__).resolve().parents[1]
# rule kinds that only the hard-tier hooks add (disruptions, robustness)
HOOK_KINDS = {
    "procurement_planning": {"delay_robust"},
    "material_allocation": {"depot_failure"},
    "educational_resource_planning": {"teacher_backup", "teacher_absent"},
    "student_grouping": {"dropout_robust"},
}


def test_the_family_is_discovered_with_its_four_task_types():
    assert "allocation" in families()
    assert [t.id for t in families()["allocation"].spec.tasks] == list(TASKS)


@pytest.mark.parametrize("task", TASKS)
def test_each_task_has_four_subtasks_and_the_pool_minimums(task):
    spec = find_task(task)
    assert len(spec.subtasks) >= 4
    assert len(spec.pool_of("basic")) >= 6
    assert len(spec.pool_of("medium")) >= 5
    assert len(spec.pool_of("hard")) >= 4 and spec.pool_of("hard")[0].id == "infeasibility_detection"


def test_procurement_carries_stateful_rules():
    spec = find_task("procurement_planning")
    stateful = {c.id for c in spec.pool_of("stateful")}
    assert {"inventory_balance", "shelf_life"} <= stateful
    assert "inventory_balance" in spec.base_rules
    inst = build_instance(0, 0, GenerateOptions(task="procurement_planning", size="small")).instance
    assert inst is not None and "stateful" in inst.tiers


@pytest.mark.parametrize("task", TASKS)
def test_every_rule_kind_has_an_encoding_a_check_a_sentence_and_a_sampler(task):
    module = TASK_MODULES[task]
    spec = find_task(task)
    kinds = {c.id for c in spec.pool} - set(HARD_KINDS) - set(REPORTING_KINDS)
    for kind in kinds | HOOK_KINDS[task]:
        assert kind in module.ENCODERS, kind
        assert kind in CHECKERS[task].checks, kind
        assert kind in rend.SENTENCES[task], kind
    for kind in kinds - set(spec.base_rules):
        assert kind in module.BUILDERS or kind == "availability", kind
    assert set(module.ENCODERS) == set(CHECKERS[task].checks)


@pytest.mark.parametrize("task", TASKS)
def test_the_answer_format_is_the_same_for_feasible_and_infeasible_instances(task):
    feasible = infeasible = None
    for index in range(12):
        inst = build_instance(17, index, GenerateOptions(task=task, size="small", include=["infeasibility_detection"] if index % 2 else [])).instance
        if inst is None:
            continue
        if inst.certificate.status == "infeasible":
            infeasible = infeasible or inst
        elif not inst.mechanisms:
            feasible = feasible or inst
    assert feasible is not None and infeasible is not None
    section = lambda i: i.prompt[i.prompt.index("## Answer format") :]  # noqa: E731
    strip = lambda text: [ln for ln in text.splitlines() if "one of" not in ln and "{" not in ln]  # noqa: E731
    assert strip(section(feasible)) == strip(section(infeasible))


def test_the_milp_module_is_the_only_pulp_import_of_the_family():
    for folder in ("models/allocation", "checkers/allocation", "renderers"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name != "milp.py":
                assert "import pulp" not in path.read_text(), path
