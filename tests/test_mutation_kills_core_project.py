"""Behaviours the mutation campaign over last session's faster grading code found untested
(pbsolve/parsing.py, pbsolve/checking.py, pbsolve/checker_kit.py and the project and
scheduling checkers): one behaviour per test, each a grade or a parse an answer gets."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from pbsolve.checker_kit import lookup, start_rows
from pbsolve.grading import grade
from pbsolve.parsing import MAX_BARE_DEPTH, Parsed, parse_response
from pbsolve.schema import Instance

# Single-move answers of power dispatch and job shop instances, each with the CP-SAT model's
# verdict on every rule: scripts/mutation_fixture.py's sample (seed 7, 24 indices and the
# pool kinds no move broke) restricted to these two task types, written from commit 6a8e0fe.
MOVES = Path(__file__).parent / "data" / "mutation_moves_power_and_job_shop.jsonl"
MOVE_TASKS = ("power_dispatch_planning", "resource_scheduling")


def _nested(depth: int) -> dict:
    """An object ``depth`` objects deep."""
    value: dict = {"v": 1}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


# -- pbsolve/parsing.py: the whole-object shortcut -------------------------------------------
def test_an_object_nested_past_the_bare_depth_through_an_array_is_read_to_its_deepest_bare_object():
    # arrays do not count towards the depth (an array inside a nested object keeps its
    # level), so the outer object is one level too deep to be a bare answer: the last bare
    # object is the one inside it
    inner = {"b": [_nested(MAX_BARE_DEPTH - 1)]}
    text = json.dumps({"a": inner})
    assert parse_response(text) == Parsed(value=inner, source="object")


# -- pbsolve/checker_kit.py ----------------------------------------------------------------
def test_a_schedule_missing_many_entities_names_the_first_eight_in_data_order():
    names = [f"T{n}" for n in range(1, 11)]
    got = start_rows({"schedule": []}, "task", "tasks", lookup(names), dict.fromkeys(names, 1), 10, "hour")
    assert got == (None, "tasks missing from the schedule: T1, T2, T3, T4, T5, T6, T7, T8")


# -- checkers/project/power.py and checkers/project/job_shop.py: rule checks vs the model ----
@cache
def _move_lines() -> tuple[str, ...]:
    return tuple(line for line in MOVES.read_text().splitlines() if line.strip())


def _moves(task: str) -> list[tuple[Instance, dict, dict[str, bool]]]:
    """Fresh instances each call: no parsed data or cache carried over between tests."""
    out = []
    for line in _move_lines():
        rec = json.loads(line)
        if rec["instance"]["task"] == task:
            inst = Instance.model_validate(rec["instance"])
            out += [(inst, a["answer"], a["model_verdicts"]) for a in rec["answers"]]
    return out


@pytest.mark.parametrize("task", MOVE_TASKS)
def test_every_rule_item_of_a_stored_single_move_answer_gets_the_solver_models_verdict(task):
    wrong = []
    for inst, answer, model in _moves(task):
        passed = {i.id: i.passed for i in grade(inst, json.dumps(answer)).items}
        wrong += [(inst.id, it.rule) for it in inst.checklist if it.rule in model and passed[it.id] != model[it.rule]]
    assert not wrong


@pytest.mark.parametrize("task", MOVE_TASKS)
def test_the_stored_moves_break_every_rule_kind_of_the_task_and_some_break_none(task):
    broken: set[str] = set()
    clean = 0
    for inst, _, model in _moves(task):
        broken |= {r.kind for r in inst.rules if not model[r.id]}
        clean += all(model.values())
    assert clean and len(broken) >= 15
