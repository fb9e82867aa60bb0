"""What the mutation-kill tests of every family share: reading one rule of an instance,
changing its parameters, and the verdict of one checklist item (tests/test_mutation_kills_*)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from pbsolve.schema import Instance

CheckAnswer = Callable[[Instance, Any], dict[str, tuple[bool, str]]]
DATA = Path(__file__).parent / "data"


@cache
def stored_lines(family: str) -> tuple[str, ...]:
    """The lines of the family's stored verdict sample, tests/data/mutation_moves_<family>.jsonl
    (written by scripts/mutation_fixture.py): an instance and its single-move answers, each
    with the CP-SAT model's verdict on every rule."""
    text = (DATA / f"mutation_moves_{family}.jsonl").read_text()
    return tuple(line for line in text.splitlines() if line.strip())


def stored_records(family: str, task: str) -> list[dict[str, Any]]:
    return [rec for rec in map(json.loads, stored_lines(family)) if rec["instance"]["task"] == task]


def stored_cases(family: str, task: str) -> list[tuple[Instance, dict[str, Any], dict[str, bool]]]:
    """(instance, answer, model verdict per rule id) of the task's stored answers; fresh
    instances each call: no validation or parsed data carried over between tests."""
    return [
        (Instance.model_validate(rec["instance"]), a["answer"], a["model_verdicts"])
        for rec in stored_records(family, task)
        for a in rec["answers"]
    ]


def only_rule(inst: Instance, kind: str) -> Any:
    """The instance's one rule of ``kind`` (a test that needs it asserts there is one)."""
    (rule,) = [r for r in inst.rules if r.kind == kind]
    return rule


def rule_params(inst: Instance, kind: str) -> dict[str, Any]:
    return dict(only_rule(inst, kind).params)


def with_params(inst: Instance, kind: str, **params: Any) -> Instance:
    """The instance with the rule of ``kind`` holding these parameter values."""
    rules = [r.model_copy(update={"params": {**r.params, **params}}) if r.kind == kind else r for r in inst.rules]
    return inst.model_copy(update={"rules": rules})


def item_passes(check_answer: CheckAnswer, inst: Instance, answer: dict[str, Any], rule: str) -> bool:
    """The family checker's verdict on the checklist item of ``rule``: a rule kind (the
    instance's only rule of that kind) or an item such as 'format' or 'recovery:rules'."""
    rule_id = rule if rule in {it.rule for it in inst.checklist} else only_rule(inst, rule).id
    (item,) = [it.id for it in inst.checklist if it.rule == rule_id]
    return check_answer(inst.model_copy(), answer)[item][0]


def reference(inst: Instance) -> dict[str, Any]:
    """A copy of the certified answer, to change one thing in."""
    return copy.deepcopy(inst.reference)


def by_id(inst: Instance, group: str) -> dict[str, dict[str, Any]]:
    return {x["id"]: x for x in inst.data[group]}
