"""The mechanism registry: every mechanism is one discovered object that declares all its
parts, and an instance carrying a mechanism shows each part (checklist items, answer
schema keys, prompt section, reference keys, certificate fields)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from pathlib import Path

import pytest

import pbsolve.mechanisms as mechanisms_pkg
from pbsolve.grading import SPECIAL_ITEMS, VALIDITY_ITEMS, grade
from pbsolve.mechanisms import HARD_KINDS, IN_PROMPT_ORDER, ITEM_OWNERS, MECHANISMS, REPORTING_KINDS, Mechanism
from pbsolve.mechanisms.base import PromptContext, ReferenceContext
from pbsolve.schema import TIERS, Certificate, Instance
from tests.instances import find as find_instance

EXPECTED = {
    "conflict_validation", "infeasibility_detection", "min_change_replanning", "robustness_design",
    "exception_recovery", "local_incompleteness", "explainability",
}  # fmt: skip
# One task per family: the registry parts are the core's, the data-dependent parts the family's.
FAMILY_TASKS = ("meeting_planning", "procurement_planning")


def test_every_mechanism_module_is_discovered_once():
    modules = {m.name for m in pkgutil.iter_modules(mechanisms_pkg.__path__)} - {"base", "certification"}
    assert {m.id for m in MECHANISMS} == modules == EXPECTED
    assert len(MECHANISMS) == len(EXPECTED)


def test_hard_and_reporting_kinds_come_from_the_registry_in_certification_order():
    assert HARD_KINDS == (
        "infeasibility_detection", "min_change_replanning", "robustness_design",
        "exception_recovery", "local_incompleteness", "explainability",
    )  # fmt: skip
    assert REPORTING_KINDS == ("conflict_validation",)


@pytest.mark.parametrize("mech", MECHANISMS, ids=lambda m: m.id)
def test_a_mechanism_declares_every_part(mech: Mechanism):
    assert mech.kind in ("hard", "reporting") and mech.tier in TIERS
    assert mech.summary.strip()
    assert all(isinstance(getattr(mech, a), int) for a in ("certify_order", "position", "prompt_position"))
    assert set(mech.certificate_fields) <= set(Certificate.model_fields)
    for item in mech.items:
        assert item.rule and item.tier in TIERS and item.text.strip()
        assert ITEM_OWNERS[item.rule] is mech
    for part in ("present", "checklist", "schema", "answer_form", "prompt", "reference", "verdicts", "items_valid"):
        assert callable(getattr(mech, part))


def test_positions_are_distinct_so_the_order_of_parts_is_fixed():
    assert len({m.position for m in MECHANISMS}) == len(MECHANISMS)
    sectioned = [m.prompt_position for m in IN_PROMPT_ORDER if m.prompt_position]
    assert len(set(sectioned)) == len(sectioned)


def test_the_grader_knows_every_mechanism_item_and_keeps_the_validity_ones():
    for m in MECHANISMS:
        for it in m.items:
            assert it.rule in SPECIAL_ITEMS
            assert (it.rule in VALIDITY_ITEMS) == it.validity


def test_a_new_mechanism_module_is_discovered_without_any_other_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "toy_mechanism.py").write_text(
        "from pbsolve.mechanisms.base import Item, Mechanism\n"
        "class Toy(Mechanism):\n"
        "    id = 'toy_mechanism'; kind = 'hard'; tier = 'hard'; certify_order = 99; position = 99\n"
        "    prompt_position = 99; summary = 'a toy'\n"
        "    items = (Item('toy', 'hard', 'The answer is a toy.'),)\n"
        "MECHANISM = Toy()\n"
    )
    monkeypatch.setattr(mechanisms_pkg, "__path__", [*mechanisms_pkg.__path__, str(tmp_path)])
    try:
        found = mechanisms_pkg._discover()
    finally:
        sys.modules.pop("pbsolve.mechanisms.toy_mechanism", None)
    assert [m.id for m in found][-1] == "toy_mechanism"


def test_a_mechanism_module_without_a_mechanism_object_fails_discovery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "broken_mechanism.py").write_text("X = 1\n")
    monkeypatch.setattr(mechanisms_pkg, "__path__", [*mechanisms_pkg.__path__, str(tmp_path)])
    try:
        with pytest.raises(TypeError, match="broken_mechanism exposes no MECHANISM"):
            mechanisms_pkg._discover()
    finally:
        sys.modules.pop("pbsolve.mechanisms.broken_mechanism", None)


# -- an instance carrying a mechanism shows its parts ----------------------------------------
def _prompt_lines(mech: Mechanism, inst: Instance) -> list[str]:
    """The lines of the mechanism's own frame (family-rendered parts left empty)."""
    ctx = PromptContext(recovery=inst.recovery, objective_lines=lambda terms, baseline: [], verification=lambda: "")
    return [line for line in mech.prompt(ctx) if line]


CASES = [(m, task) for m in MECHANISMS for task in FAMILY_TASKS]


def find(kind: str, task: str) -> Instance:
    """The first small instance at seed 11 carrying the mechanism (its status as certified)."""
    status = "infeasible" if kind == "infeasibility_detection" else "optimal"
    inst = find_instance(task, 11, "small", (kind,), status, tries=40, hard=False)
    if inst is None:
        pytest.skip(f"no {kind} instance for {task}")
    return inst


@pytest.mark.parametrize(("mech", "task"), CASES, ids=[f"{m.id}-{t}" for m, t in CASES])
def test_an_instance_carrying_a_mechanism_contains_its_parts(mech: Mechanism, task: str):
    inst = find(mech.id, task)  # an instance carrying it
    feasible = inst.certificate.status == "optimal"
    assert feasible != mech.infeasible
    # checklist: its items, with their tiers and sentences
    items = [(it.rule, it.tier, it.text) for it in inst.checklist]
    for it in mech.checklist(inst.certificate.objective):
        assert (it.rule, it.tier, it.text) in items
    # certificate: the fields it fills
    for name in mech.certificate_fields:
        assert getattr(inst.certificate, name), name
    # answer schema: its keys, in the plan form or in a form of its own
    keys = {k for form in inst.answer_schema["oneOf"] for k in form["properties"]}
    assert set(mech.answer_keys) <= keys
    # prompt: its section, framed by the core
    for line in _prompt_lines(mech, inst):
        assert line in inst.prompt
    # reference: its keys
    if feasible:
        ctx = ReferenceContext(certificate=inst.certificate, recovery=inst.recovery, recovery_plan=None, report=lambda: None)
        assert set(mech.reference(ctx)) <= set(inst.reference)
    # verdicts: the reference passes each of its items
    g = grade(inst, json.dumps(inst.reference))
    by_rule = {it.rule: r.passed for it, r in zip(inst.checklist, g.items)}
    assert all(by_rule[it.rule] for it in mech.checklist(inst.certificate.objective))


def test_every_mechanism_module_imports_without_the_solver():
    """The registry is part of grading-only processes: its modules never load OR-Tools."""
    code = (
        "import sys, pbsolve.mechanisms, pbsolve.checking;"
        "print(any(m.startswith(('ortools', 'pbsolve.models')) for m in sys.modules))"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert importlib.import_module("pbsolve.mechanisms.certification").certify_spec  # the solver side stays apart
