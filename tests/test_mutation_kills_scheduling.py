"""Timetabling rule checks judged against the solver model on stored answers (mutation
campaign, issue 19): the scheduling counterpart of tests/test_mutation_kills_checkers.py.

tests/data/mutation_moves_scheduling.jsonl holds sample timetabling instances and answers
one move (one event's start or room) away from the certified plan, each with the CP-SAT
model's verdict on every rule (written by ``scripts/mutation_fixture.py scheduling``,
which solved once and refused any answer on which checker and model disagree). Grading
them takes milliseconds, so it runs per mutant: a rule check made too lax or too strict
disagrees with the model on some stored answer.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from pbsolve.grading import grade
from pbsolve.schema import Instance

DATA = Path(__file__).parent / "data" / "mutation_moves_scheduling.jsonl"


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
def test_every_rule_item_of_a_stored_single_move_timetable_gets_the_solver_models_verdict(task: str) -> None:
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
def test_a_stored_timetable_that_breaks_a_rule_gets_no_all_pass_reward(task: str) -> None:
    for inst, answer, model in _cases():
        if inst.task == task and not all(model.values()):
            assert grade(inst, json.dumps(answer)).reward == 0.0, inst.id


def test_the_stored_timetables_break_rules_of_every_task_and_some_break_none() -> None:
    """A too-lax check is caught by answers breaking rules, a too-strict one by answers
    breaking nothing; every timetabling task has both."""
    broken: Counter[str] = Counter()
    clean: Counter[str] = Counter()
    kinds: set[str] = set()
    for inst, _, model in _cases():
        (clean if all(model.values()) else broken)[inst.task] += 1
        kinds |= {r.kind for r in inst.rules if not model[r.id]}
    assert set(broken) == set(TASKS) == set(clean) == {"course_timetabling", "exam_scheduling", "meeting_planning"}
    assert {"person_buffer", "room_backup", "person_absent", "priority_order"} <= kinds
