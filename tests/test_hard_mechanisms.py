"""Scheduling only, hard tier: what the registry suite (tests/test_registry_mechanisms.py)
cannot say generically -- backup rooms are part of a timetable answer's rows."""

from __future__ import annotations

import copy
import json

import pytest

from pbsolve.grading import grade
from pbsolve.schema import Instance
from tests.helpers import TASKS
from tests.instances import find


def need_robust(task: str) -> Instance:
    inst = find(task, 11, "small", ("robustness_design",), tries=40)
    if inst is None:
        pytest.skip(f"no robustness_design instance for {task}")
    return inst


def failed_rules(inst: Instance, answer: dict) -> set[str]:
    g = grade(inst, json.dumps(answer))
    rule = {it.id: it.rule for it in inst.checklist}
    return {rule[i.id] for i in g.items if not i.passed}


@pytest.mark.parametrize("task", TASKS)
def test_robustness_backup_equal_to_the_own_room_fails_the_backup_rule(task):
    inst = need_robust(task)
    answer = copy.deepcopy(inst.reference)
    answer["schedule"][0]["backup"] = answer["schedule"][0]["room"]
    assert next(r.id for r in inst.rules if r.kind == "room_backup") in failed_rules(inst, answer)


@pytest.mark.parametrize("task", TASKS)
def test_robustness_answer_without_backups_fails_the_format(task):
    inst = need_robust(task)
    answer = copy.deepcopy(inst.reference)
    for row in answer["schedule"]:
        row.pop("backup")
    assert "format" in failed_rules(inst, answer)
