"""Workforce verdicts held for the mutation campaign (pbsolve issue 12), one behaviour each.

No test of the campaign's selection graded a workforce answer before this file (mutmut's
forced-fail self-test could not even start on the four checker files), so the file has
two parts:

- the stored verdict sample, tests/data/mutation_moves_workforce.jsonl (written by
  ``scripts/mutation_fixture.py workforce``, which solved once and refused any answer on
  which checker and CP-SAT model disagree): every rule item of every stored single-move
  answer gets the model's verdict, the certified reference of every stored instance
  passes every item (its objective item against CP-SAT's proven optimum), and every
  stored answer's own objective figures (the model's, checked when the sample was
  written) are what the checker computes;
- behaviour tests for what the sample cannot reach, each grading an answer built from a
  generated instance's certified reference with one change and asserting the verdict of
  one checklist item, after asserting the instance has the needed shape.

The survivors argued equivalent are in scripts/mutation_equivalents.toml.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pbsolve.checkers.workforce import check_answer
from pbsolve.grading import grade
from pbsolve.schema import Instance

DATA = Path(__file__).parent / "data"
TASKS = (
    "recruitment_planning",
    "shift_duty_scheduling",
    "volunteer_scheduling",
    "work_assignment_scheduling",
)


# -- the stored verdict sample --------------------------------------------------------------
@cache
def _lines() -> tuple[str, ...]:
    text = (DATA / "mutation_moves_workforce.jsonl").read_text()
    return tuple(line for line in text.splitlines() if line.strip())


def _records(task: str) -> list[dict[str, Any]]:
    return [rec for rec in map(json.loads, _lines()) if rec["instance"]["task"] == task]


def _cases(task: str) -> list[tuple[Instance, dict[str, Any], dict[str, bool]]]:
    """Fresh instances each call: no validation or parsed data carried over between tests."""
    return [
        (Instance.model_validate(rec["instance"]), a["answer"], a["model_verdicts"])
        for rec in _records(task)
        for a in rec["answers"]
    ]


def _graded(inst: Instance, answer: dict[str, Any]) -> dict[str, bool]:
    """Checklist rule (or item name) -> passed, through the family's public check_answer."""
    verdicts = check_answer(inst, answer)
    return {it.rule: verdicts[it.id][0] for it in inst.checklist}


@pytest.mark.parametrize("task", TASKS)
def test_every_rule_item_of_a_stored_single_move_answer_gets_the_solver_models_verdict(task: str) -> None:
    """Each rule's item passes exactly when the CP-SAT model accepts the plan with that rule on."""
    wrong = []
    for inst, answer, model in _cases(task):
        passed = _graded(inst, answer)
        wrong += [(inst.id, rid, passed[rid]) for rid in model if passed[rid] != model[rid]]
    assert not wrong


@pytest.mark.parametrize("task", TASKS)
def test_a_stored_answer_that_breaks_a_rule_gets_no_all_pass_reward(task: str) -> None:
    for inst, answer, model in _cases(task):
        if not all(model.values()):
            assert grade(inst, json.dumps(answer)).reward == 0.0, inst.id


@pytest.mark.parametrize("task", TASKS)
def test_a_stored_answer_states_its_plans_own_objective_figures(task: str) -> None:
    """The sample's answers state the figures the solver model gives their plans (checked
    when the sample was written), so the validation item passes on every one of them."""
    for inst, answer, _ in _cases(task):
        assert _graded(inst, answer)["validation"], inst.id


@pytest.mark.parametrize("task", TASKS)
def test_the_certified_reference_of_every_stored_instance_passes_every_item(task: str) -> None:
    """Every rule kept, the objective equal to CP-SAT's proven optimum, the figures its own."""
    for rec in _records(task):
        inst = Instance.model_validate(rec["instance"])
        failed = [rule for rule, ok in _graded(inst, copy.deepcopy(inst.reference)).items() if not ok]
        assert not failed, inst.id


def test_the_stored_sample_breaks_rules_of_every_task_and_some_answers_break_none() -> None:
    """The sample is only as strong as its reach: every task has answers breaking rules (a
    too-lax check is caught) and answers breaking nothing (a too-strict one is caught)."""
    broken: Counter[str] = Counter()
    clean: Counter[str] = Counter()
    for task in TASKS:
        for _, _, model in _cases(task):
            (clean if all(model.values()) else broken)[task] += 1
    assert set(broken) == set(clean) == set(TASKS)
