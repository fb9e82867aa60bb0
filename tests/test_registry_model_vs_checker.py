"""Every task type of every registered family (the toy family included): the solver model
and the checker are independent implementations of the same rules; these properties hold
them against each other on random instances, hard mechanisms included."""

from __future__ import annotations

from functools import cache

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbsolve.family import family, find_task
from pbsolve.grading import grade
from pbsolve.taxonomy import MECHANISM_IDS
from tests.family_adapters import ADAPTERS, adapter, instance_at, registry_tasks, toy_family_registered

TASKS = registry_tasks()
SETTINGS = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
draws = st.tuples(st.integers(0, 10_000), st.integers(0, 40), st.booleans())


@pytest.fixture(autouse=True)
def _registry() -> Iterator[None]:
    with toy_family_registered():
        yield


def _instance(task, draw):
    seed, index, hard = draw
    return instance_at(task, seed, index, "small", hard)


def _feasible(inst):
    return inst is not None and inst.certificate.status == "optimal"


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(draw=draws)
def test_reference_answer_passes_every_checklist_item(task, draw):
    inst = _instance(task, draw)
    if inst is None:
        return
    g = grade(inst, json.dumps(inst.reference))
    assert g.all_pass == 1, [i for i in g.items if not i.passed]


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(draw=draws)
def test_reference_plan_is_accepted_by_the_model_with_the_certified_objective(task, draw):
    inst = _instance(task, draw)
    if not _feasible(inst):
        return
    ad = adapter(task)
    ok, values = ad.model_verdict(inst, ad.plan_of(inst, inst.reference), [r.id for r in inst.rules])
    assert ok
    assert values == inst.certificate.objective


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(draw=draws, rnd=st.randoms(use_true_random=False))
def test_each_single_move_is_judged_alike_by_model_and_checker_rule_by_rule(task, draw, rnd):
    inst = _instance(task, draw)
    if not _feasible(inst):
        return
    ad = adapter(task)
    moves = list(ad.single_moves(inst, ad.plan_of(inst, inst.reference)))
    for plan in rnd.sample(moves, min(ad.moves_sampled, len(moves))):
        verdicts, values = ad.evaluate(inst, plan)
        for rule in inst.rules:
            accepted, _ = ad.model_verdict(inst, plan, [rule.id])
            assert accepted == verdicts[rule.id][0], (rule.kind, rule.params, plan, verdicts[rule.id])
        accepted, model_values = ad.model_verdict(inst, plan, [])
        assert accepted and model_values == values


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(draw=draws)
def test_a_move_that_breaks_a_rule_fails_that_rules_item_and_the_model(task, draw):
    inst = _instance(task, draw)
    if not _feasible(inst):
        return
    ad = adapter(task)
    item_of = {it.rule: it.id for it in inst.checklist}
    seen: set[str] = set()
    for plan in ad.single_moves(inst, ad.plan_of(inst, inst.reference)):
        verdicts, _ = ad.evaluate(inst, plan)
        broken = {rid for rid, (ok, _) in verdicts.items() if not ok}
        if not broken or broken <= seen:
            continue
        seen |= broken
        g = grade(inst, json.dumps(ad.answer_of(inst, plan, base=inst.reference)))
        failed = {i.id for i in g.items if not i.passed}
        assert {item_of[r] for r in broken} <= failed
        assert g.all_pass == 0
        assert not ad.model_verdict(inst, plan, [r.id for r in inst.rules])[0]


@pytest.mark.parametrize("task", TASKS)
@SETTINGS
@given(draw=draws)
def test_no_single_move_beats_the_certified_optimum(task, draw):
    inst = _instance(task, draw)
    if not _feasible(inst):
        return
    ad = adapter(task)
    best = tuple(inst.certificate.objective[t.id] for t in inst.objective)
    for plan in ad.single_moves(inst, ad.plan_of(inst, inst.reference)):
        verdicts, values = ad.evaluate(inst, plan)
        if all(ok for ok, _ in verdicts.values()):
            value = tuple(values[t.id] for t in inst.objective)
            assert value >= best
            if inst.certificate.determinacy == "unique":
                assert value > best


@cache
def sample_kinds(task: str, seed: int = 7, count: int = 50) -> tuple[set[str], set[str]]:
    """(rule kinds seen, rule kinds some single move breaks) over a fixed sample of feasible
    instances of the task, every other one with a hard mechanism forced."""
    ad = adapter(task)
    seen, broken = set(), set()
    for index in range(count):
        inst = instance_at(task, seed, index, "small", index % 2 == 1)
        if not _feasible(inst):
            continue
        kinds = {r.kind for r in inst.rules}
        seen |= kinds
        if kinds <= broken:
            continue
        for plan in ad.single_moves(inst, ad.plan_of(inst, inst.reference)):
            verdicts, _ = ad.evaluate(inst, plan)
            broken |= {r.kind for r in inst.rules if not verdicts[r.id][0]}
            if kinds <= broken:
                break
    return seen, broken


def _families() -> list[str]:
    with toy_family_registered():
        return sorted({find_task(t).family for t in TASKS})


def _pool(task: str) -> set[str]:
    """The task's pool kinds the sample must reach: all but the mechanisms and the opt-in
    stateful kinds (never sampled: tests/test_stateful.py)."""
    spec = find_task(task)
    opt_in = {c.id for c in spec.pool_of("stateful")} - set(spec.base_rules)
    return {c.id for c in spec.pool if c.id not in MECHANISM_IDS} - opt_in


@pytest.mark.parametrize("task", TASKS)
def test_single_moves_break_every_rule_kind_of_the_pool_in_a_fixed_sample(task):
    """The mutation properties are only as good as their reach: over a fixed sample of the
    task type, every rule kind of its pool (but the opt-in stateful ones and the adapter's
    documented exemptions) is seen (pool coverage), and each one seen is broken by some
    single move."""
    seen, broken = sample_kinds(task)
    assert _pool(task) - adapter(task).rarely_sampled.get(task, set()) <= seen, (task, sorted(_pool(task) - seen))
    assert seen == broken, (task, sorted(seen - broken))


@pytest.mark.parametrize("fid", _families())
def test_the_fixed_samples_of_a_family_reach_every_pool_kind(fid):
    """Across the family every pool kind is seen (a kind rarely sampled by one task type is
    covered by a sibling)."""
    ad = ADAPTERS[fid]
    tasks = [t.id for t in family(fid).spec.tasks]
    seen_all = set().union(*(sample_kinds(t)[0] for t in tasks))
    pools = set().union(*(_pool(t) for t in tasks))
    assert pools <= seen_all, sorted(pools - seen_all)
    if ad.every_check_seen:  # rule kinds only the hard hooks add are in the sample too
        checks = set(ad.tc(tasks[0]).checks) - ad.opt_in_kinds
        assert seen_all == checks, sorted(seen_all ^ checks)