"""Allocation family: certificates agree with exhaustive enumeration on tiny instances.

Every assignment of the answer variables of a tiny instance (order quantities, shipment
units, teachers/rooms/backups, set partitions) is enumerated and judged by the checker
alone, so these tests hold the solver's optimum, plan count, second best, infeasibility
proof, conflict sets, replanning minimum, binding rules, conservative inputs, recovery
plans and robust plans against an independent computation.
"""

from __future__ import annotations

import itertools

import pytest

from pbsolve.models.allocation import TASK_MODULES
from pbsolve.models.allocation.common import optimistic
from tests.allocation_helpers import TASKS, data_of, draft_of, enumerate_outcomes, find, plan_key, plan_of, tc_of

SEEDS = range(4)
MECHANISMS = ("min_change_replanning", "explainability", "local_incompleteness", "exception_recovery", "robustness_design")


def tiny(task, seed, status, include=()):
    return find(task, seed, "tiny", tuple(include), status, tries=6)


def _best(outcomes, required):
    feasible = [o for o in outcomes if required <= o.satisfied]
    if not feasible:
        return None, []
    best = min(o.values for o in feasible)
    return best, [o for o in feasible if o.values == best]


def _minimal_conflict_sets(rule_ids, satisfied_sets):
    found = []
    for k in range(1, len(rule_ids) + 1):
        for combo in itertools.combinations(rule_ids, k):
            s = frozenset(combo)
            if any(m <= s for m in found):
                continue
            if not any(s <= sat for sat in satisfied_sets):
                found.append(s)
    return set(found)


def _values(inst, objective=None):
    terms = objective or inst.objective
    return tuple(inst.certificate.objective[t.id] for t in terms)


def _check_feasible(inst):
    outcomes = enumerate_outcomes(inst)
    rule_ids = frozenset(r.id for r in inst.rules)
    best, optimal = _best(outcomes, rule_ids)
    assert best is not None, "the solver claims optimal but no plan satisfies every rule"
    cert = inst.certificate
    assert best == _values(inst)
    if cert.optimal_plans_exact:
        assert len(optimal) == cert.optimal_plans
    else:
        assert len(optimal) >= cert.optimal_plans
    ref = plan_key(inst, plan_of(inst, inst.reference))
    assert ref in [o.key for o in optimal]
    if cert.determinacy == "unique":
        others = sorted(o.values for o in outcomes if rule_ids <= o.satisfied and o.key != ref)
        assert (cert.second_best is None) == (not others)
        if others:
            assert others[0] == tuple(cert.second_best[t.id] for t in inst.objective)
    return outcomes


def _existing_plan(inst, existing):
    """The checker plan of a `changes` term's `existing` parameter."""
    task = inst.task
    if task == "procurement_planning":
        rows = [{"quantity": q, "supplier": s, "item": i, "week": w} for s, i, w, q in existing]
    elif task == "material_allocation":
        rows = [{"units": q, "depot": x, "site": s, "material": m} for x, s, m, q in existing]
    elif task == "educational_resource_planning":
        rows = [{"lesson": x, "teacher": t, "room": r} for x, (t, r) in existing.items()]
    else:
        rows = existing
    return plan_of(inst, {tc_of(task).plan_key: rows}, rules=[r for r in inst.rules if r.kind != "teacher_backup"])


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", SEEDS)
def test_feasible_certificate_matches_enumeration(task, seed):
    inst = tiny(task, 100 + seed, "optimal")
    if inst is None:
        pytest.skip("no feasible tiny instance at this seed")
    _check_feasible(inst)


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", SEEDS)
def test_infeasible_certificate_and_conflict_sets_match_enumeration(task, seed):
    inst = tiny(task, 200 + seed, "infeasible", ("infeasibility_detection",))
    if inst is None:
        pytest.skip("no infeasible tiny instance at this seed")
    outcomes = enumerate_outcomes(inst)
    rule_ids = [r.id for r in inst.rules]
    assert not any(set(rule_ids) <= o.satisfied for o in outcomes), "a plan satisfies every rule"
    expected = _minimal_conflict_sets(rule_ids, {o.satisfied for o in outcomes})
    assert {frozenset(s) for s in inst.certificate.conflict_sets} == expected
    assert all(len(s) >= 2 for s in inst.certificate.conflict_sets), "a conflict should run through the instance's rules"


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", SEEDS)
def test_replanning_minimum_matches_enumeration_and_the_disruption_breaks_the_old_plan(task, seed):
    inst = tiny(task, 300 + seed, "optimal", ("min_change_replanning",))
    if inst is None:
        pytest.skip("no replanning tiny instance at this seed")
    outcomes = _check_feasible(inst)  # the changes term is the first objective figure
    assert inst.objective[0].kind == "changes" and inst.certificate.objective["changes"] >= 1
    rule_ids = frozenset(r.id for r in inst.rules)
    old = _existing_plan(inst, inst.objective[0].params["existing"])
    old_outcome = next(o for o in outcomes if o.key == plan_key(inst, old))
    assert not rule_ids <= old_outcome.satisfied, "the disruption leaves the current plan valid"
    assert old_outcome.values[0] == 0


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", SEEDS)
def test_binding_rules_match_enumeration(task, seed):
    inst = tiny(task, 400 + seed, "optimal", ("explainability",))
    if inst is None:
        pytest.skip("no explainability tiny instance at this seed")
    outcomes = _check_feasible(inst)
    rule_ids = frozenset(r.id for r in inst.rules)
    best, _ = _best(outcomes, rule_ids)
    binding = []
    for r in sorted(rule_ids, key=lambda x: int(x[1:])):
        value, _ = _best(outcomes, rule_ids - {r})
        if value < best:
            binding.append(r)
    assert binding == inst.certificate.binding_rules


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", SEEDS)
def test_conservative_inputs_match_enumeration(task, seed):
    inst = tiny(task, 500 + seed, "optimal", ("local_incompleteness",))
    if inst is None:
        pytest.skip("no incompleteness tiny instance at this seed")
    outcomes = _check_feasible(inst)
    rule_ids = frozenset(r.id for r in inst.rules)
    best, _ = _best(outcomes, rule_ids)
    hooks = TASK_MODULES[task].HOOKS
    expected = []
    for u in inst.data["uncertain"]:
        variant = optimistic(hooks, draft_of(inst), u["id"])
        value, _ = _best(enumerate_outcomes(inst, data=variant.data), rule_ids)
        if value is not None and value < best:
            expected.append(u["id"])
    assert expected == inst.certificate.conservative_inputs


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", SEEDS)
def test_recovery_plan_matches_enumeration(task, seed):
    inst = tiny(task, 600 + seed, "optimal", ("exception_recovery",))
    if inst is None:
        pytest.skip("no recovery tiny instance at this seed")
    _check_feasible(inst)
    rec = inst.recovery
    rules = [*inst.rules, *rec.scenario]
    outcomes = enumerate_outcomes(inst, rules=rules, objective=rec.objective)
    best, optimal = _best(outcomes, frozenset(r.id for r in rules))
    assert best == tuple(rec.certificate.objective[t.id] for t in rec.objective)
    assert [o.key for o in optimal] == [plan_key(inst, plan_of(inst, inst.reference["recovery"], rules))]
    main = plan_of(inst, inst.reference)
    assert rec.objective[0].params["existing"] == tc_of(task).existing(data_of(inst), main)


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", SEEDS)
def test_robust_plan_matches_enumeration(task, seed):
    inst = tiny(task, 700 + seed, "optimal", ("robustness_design",))
    if inst is None:
        pytest.skip("no robustness tiny instance at this seed")
    _check_feasible(inst)  # backup teachers are enumerated too: uniqueness covers them


def test_brute_force_sample_is_not_all_skipped():
    for task in TASKS:
        feasible = sum(tiny(task, 100 + s, "optimal") is not None for s in SEEDS)
        infeasible = sum(tiny(task, 200 + s, "infeasible", ("infeasibility_detection",)) is not None for s in SEEDS)
        assert feasible >= 3 and infeasible >= 3, (task, feasible, infeasible)
        for mech, base in zip(MECHANISMS, (300, 400, 500, 600, 700)):
            found = sum(tiny(task, base + s, "optimal", (mech,)) is not None for s in SEEDS)
            assert found >= 2, (task, mech, found)
