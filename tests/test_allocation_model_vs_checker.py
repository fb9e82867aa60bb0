"""Allocation family: the solver model and the checker are independent implementations of
the same rules; these properties hold them against each other on random instances of
every task type, hard mechanisms included."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbsolve.family import find_task
from pbsolve.grading import grade
from tests.allocation_helpers import TASKS, answer_of, evaluate, instance_at, model_verdict, plan_of, single_moves, tc_of

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
instances = st.builds(
    instance_at,
    st.sampled_from(TASKS),
    st.integers(0, 10_000),
    st.integers(0, 30),
    st.just("small"),
    st.booleans(),
)


def _feasible(inst):
    return inst is not None and inst.certificate.status == "optimal"


@SETTINGS
@given(instances)
def test_reference_answer_passes_every_checklist_item(inst):
    if inst is None:
        return
    g = grade(inst, json.dumps(inst.reference))
    assert g.all_pass == 1, [i for i in g.items if not i.passed]


@SETTINGS
@given(instances)
def test_reference_plan_is_accepted_by_the_model_with_the_certified_objective(inst):
    if not _feasible(inst):
        return
    plan = plan_of(inst, inst.reference)
    ok, values = model_verdict(inst, plan, [r.id for r in inst.rules])
    assert ok
    assert values == inst.certificate.objective


@SETTINGS
@given(instances, st.randoms(use_true_random=False))
def test_each_single_move_is_judged_alike_by_model_and_checker_rule_by_rule(inst, rnd):
    if not _feasible(inst):
        return
    moves = list(single_moves(inst, plan_of(inst, inst.reference)))
    for plan in rnd.sample(moves, min(5, len(moves))):
        verdicts, values = evaluate(inst, plan)
        for rule in inst.rules:
            accepted, _ = model_verdict(inst, plan, [rule.id])
            assert accepted == verdicts[rule.id][0], (rule.kind, rule.params, verdicts[rule.id])
        accepted, model_values = model_verdict(inst, plan, [])
        assert accepted and model_values == values


@SETTINGS
@given(instances)
def test_a_move_that_breaks_a_rule_fails_that_rules_item_and_the_model(inst):
    if not _feasible(inst):
        return
    item_of = {it.rule: it.id for it in inst.checklist}
    seen: set[str] = set()
    for plan in single_moves(inst, plan_of(inst, inst.reference)):
        verdicts, _ = evaluate(inst, plan)
        broken = {rid for rid, (ok, _) in verdicts.items() if not ok}
        if not broken or broken <= seen:
            continue
        seen |= broken
        g = grade(inst, json.dumps(answer_of(inst, plan, base=inst.reference)))
        failed = {i.id for i in g.items if not i.passed}
        assert {item_of[r] for r in broken} <= failed
        assert g.all_pass == 0
        assert not model_verdict(inst, plan, [r.id for r in inst.rules])[0]


@SETTINGS
@given(instances)
def test_no_single_move_beats_the_certified_optimum(inst):
    if not _feasible(inst):
        return
    best = tuple(inst.certificate.objective[t.id] for t in inst.objective)
    for plan in single_moves(inst, plan_of(inst, inst.reference)):
        verdicts, values = evaluate(inst, plan)
        if all(ok for ok, _ in verdicts.values()):
            value = tuple(values[t.id] for t in inst.objective)
            assert value >= best
            if inst.certificate.determinacy == "unique":
                assert value > best


@pytest.mark.parametrize("task", TASKS)
def test_single_moves_break_every_rule_kind_in_a_fixed_sample(task):
    """The mutation properties are only as good as their reach: over a fixed sample, every
    rule kind of the task's pool is seen, and each one seen is broken by some single move."""
    seen, broken = set(), set()
    for index in range(50):
        inst = instance_at(task, 7, index, "small", index % 2 == 1)  # every other one with a hard rule
        if not _feasible(inst):
            continue
        kinds = {r.kind for r in inst.rules}
        seen |= kinds
        if kinds <= broken:
            continue
        for plan in single_moves(inst, plan_of(inst, inst.reference)):
            verdicts, _ = evaluate(inst, plan)
            broken |= {r.kind for r in inst.rules if not verdicts[r.id][0]}
            if kinds <= broken:
                break
    pool = {c.id for c in find_task(task).pool} & set(tc_of(task).checks)
    assert pool <= seen, sorted(pool - seen)
    assert seen == broken, sorted(seen - broken)
