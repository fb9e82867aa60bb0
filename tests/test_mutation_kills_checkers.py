"""Rule checks judged against the solver model on stored answers (mutation campaign, issue 19).

tests/data/mutation_moves_allocation.jsonl holds sample allocation instances and answers
one move away from the certified plan, each with the CP-SAT model's verdict on every rule
(written by scripts/mutation_fixture.py, which solved once). Grading them is fast enough to
run per mutant, and kills the rule-check mutants that the fast suites let through: a check
made too lax (a violated rule passed) or too strict (a kept rule failed) disagrees with
the model on some stored answer.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from pbsolve.grading import grade
from pbsolve.schema import Instance

DATA = Path(__file__).parent / "data" / "mutation_moves_allocation.jsonl"


@cache
def _lines() -> tuple[str, ...]:
    return tuple(line for line in DATA.read_text().splitlines() if line.strip())


def _cases() -> list[tuple[Instance, dict, dict[str, bool]]]:
    """Fresh instances each call: no validation or parsed data carried over between tests."""
    out = []
    for line in _lines():
        rec = json.loads(line)
        for a in rec["answers"]:
            out.append((Instance.model_validate(rec["instance"]), a["answer"], a["model_verdicts"]))
    return out


TASKS = sorted({json.loads(line)["instance"]["task"] for line in _lines()})


@pytest.mark.parametrize("task", TASKS)
def test_every_rule_item_of_a_stored_single_move_answer_gets_the_solver_models_verdict(task: str) -> None:
    """Each rule's item passes exactly when the CP-SAT model accepts the plan with that rule on."""
    wrong = []
    for inst, answer, model in _cases():
        if inst.task != task:
            continue
        g = grade(inst, json.dumps(answer))
        passed = {i.id: i.passed for i in g.items}
        for it in inst.checklist:
            if it.rule in model and passed[it.id] != model[it.rule]:
                wrong.append((inst.id, it.rule, next(r.kind for r in inst.rules if r.id == it.rule), passed[it.id]))
    assert not wrong


@pytest.mark.parametrize("task", TASKS)
def test_a_stored_answer_that_breaks_a_rule_gets_no_all_pass_reward(task: str) -> None:
    """A plan the model rejects under some rule must never earn the all_pass reward."""
    for inst, answer, model in _cases():
        if inst.task == task and not all(model.values()):
            assert grade(inst, json.dumps(answer)).reward == 0.0, inst.id


def test_the_stored_sample_breaks_many_rule_kinds_of_every_task() -> None:
    """The sample is only as strong as its reach: every task has answers breaking rules, and
    answers breaking nothing (so a too-strict check is caught too)."""
    broken: Counter[str] = Counter()
    clean: Counter[str] = Counter()
    for inst, _, model in _cases():
        (clean if all(model.values()) else broken)[inst.task] += 1
    assert set(broken) == set(TASKS) == set(clean)
    assert len(TASKS) == 4
