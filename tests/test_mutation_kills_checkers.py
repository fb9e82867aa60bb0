"""Rule checks judged against the solver model on stored answers (mutation campaign, issue 19).

tests/data/mutation_moves_<family>.jsonl hold sample instances and answers one move away
from the certified plan (for timetables: one event's start or room), each with the CP-SAT
model's verdict on every rule (written by ``scripts/mutation_fixture.py <family>``, which
solved once and refused any answer on which checker and model disagree). Grading them is
fast enough to run per mutant, and kills the rule-check mutants that the fast suites let
through: a check made too lax (a violated rule passed) or too strict (a kept rule failed)
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

DATA = Path(__file__).parent / "data"
FAMILIES = ("allocation", "scheduling", "emergency", "routing", "project")  # workforce: test_mutation_kills_workforce.py
# Rule kinds each stored sample must break somewhere (its reach, beyond every task type).
MUST_BREAK = {
    "allocation": set(),
    "scheduling": {"person_buffer", "room_backup", "person_absent", "priority_order"},
    # the kinds rarely drawn at small size, reached by the fixture's include pass
    "emergency": {"arrives_first", "new_incident", "cumulative_duty", "staged_opening", "fatigue_break"},
    "routing": {"cumulative_load", "congestion_recovery", "stamina", "battery"},
    "project": {"trip_reserve", "fuel_limit", "storage_cap", "zone_pick_cap"},
}


@cache
def _lines(family: str) -> tuple[str, ...]:
    text = (DATA / f"mutation_moves_{family}.jsonl").read_text()
    return tuple(line for line in text.splitlines() if line.strip())


def _cases(family: str) -> list[tuple[Instance, dict, dict[str, bool]]]:
    """Fresh instances each call: no validation or parsed data carried over between tests."""
    out = []
    for line in _lines(family):
        rec = json.loads(line)
        for a in rec["answers"]:
            out.append((Instance.model_validate(rec["instance"]), a["answer"], a["model_verdicts"]))
    return out


def _tasks(family: str) -> list[str]:
    return sorted({json.loads(line)["instance"]["task"] for line in _lines(family)})


FAMILY_TASKS = [(f, t) for f in FAMILIES for t in _tasks(f)]


@pytest.mark.parametrize(("family", "task"), FAMILY_TASKS)
def test_every_rule_item_of_a_stored_single_move_answer_gets_the_solver_models_verdict(family: str, task: str) -> None:
    """Each rule's item passes exactly when the CP-SAT model accepts the plan with that rule on."""
    wrong = []
    for inst, answer, model in _cases(family):
        if inst.task != task:
            continue
        g = grade(inst, json.dumps(answer))
        passed = {i.id: i.passed for i in g.items}
        for it in inst.checklist:
            if it.rule in model and passed[it.id] != model[it.rule]:
                wrong.append((inst.id, it.rule, next(r.kind for r in inst.rules if r.id == it.rule), passed[it.id]))
    assert not wrong


@pytest.mark.parametrize(("family", "task"), FAMILY_TASKS)
def test_a_stored_answer_that_breaks_a_rule_gets_no_all_pass_reward(family: str, task: str) -> None:
    """A plan the model rejects under some rule must never earn the all_pass reward."""
    for inst, answer, model in _cases(family):
        if inst.task == task and not all(model.values()):
            assert grade(inst, json.dumps(answer)).reward == 0.0, inst.id


@pytest.mark.parametrize("family", FAMILIES)
def test_the_stored_sample_breaks_rules_of_every_task_and_some_answers_break_none(family: str) -> None:
    """The sample is only as strong as its reach: every task has answers breaking rules (a
    too-lax check is caught) and answers breaking nothing (a too-strict one is caught)."""
    broken: Counter[str] = Counter()
    clean: Counter[str] = Counter()
    kinds: set[str] = set()
    for inst, _, model in _cases(family):
        (clean if all(model.values()) else broken)[inst.task] += 1
        kinds |= {r.kind for r in inst.rules if not model[r.id]}
    from pbsolve.family import families

    assert set(broken) == set(clean) == {t.id for t in families()[family].spec.tasks}
    assert MUST_BREAK[family] <= kinds
