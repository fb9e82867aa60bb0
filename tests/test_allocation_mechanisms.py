"""Allocation family, hard tier: only what the registry suite (tests/test_registry_mechanisms.py)
cannot say generically -- backup teachers in the answer rows, label-free groups."""

from __future__ import annotations

import copy
import json
import random

from pbsolve.grading import grade
from pbsolve.schema import Instance
from tests.allocation_helpers import find


def failed_rules(inst: Instance, answer: dict) -> set[str]:
    g = grade(inst, json.dumps(answer))
    rule = {it.id: it.rule for it in inst.checklist}
    return {rule[i.id] for i in g.items if not i.passed}


def rule_id(inst: Instance, kind: str) -> str:
    return next(r.id for r in inst.rules if r.kind == kind)


def test_a_backup_teacher_equal_to_the_lessons_own_teacher_fails_the_backup_rule():
    inst = find("educational_resource_planning", 11, "small", ("robustness_design",), tries=20)
    assert inst is not None
    answer = copy.deepcopy(inst.reference)
    answer["assignments"][0]["backup"] = answer["assignments"][0]["teacher"]
    assert rule_id(inst, "teacher_backup") in failed_rules(inst, answer)
    for row in answer["assignments"]:
        row.pop("backup")
    assert "format" in failed_rules(inst, answer)


def test_grouping_answers_are_label_free():
    inst = find("student_grouping", 13, "small")
    assert inst is not None
    rnd = random.Random(0)
    groups = [list(g) for g in inst.reference["groups"]]
    for _ in range(5):
        shuffled = [rnd.sample(g, len(g)) for g in groups]
        rnd.shuffle(shuffled)
        answer = {**inst.reference, "groups": shuffled}
        assert grade(inst, json.dumps(answer)).all_pass == 1
