"""Certificates agree with exhaustive enumeration on tiny instances.

Every plan of a tiny instance is enumerated and judged by the checker alone, so these
tests hold the solver's optimum, plan count, infeasibility proof and conflict sets
against an independent computation.
"""

from __future__ import annotations

import itertools

import pytest

from pbsolve.checkers.scheduling.checks import evaluate
from pbsolve.checkers.scheduling.instance_data import TimetableData
from tests.helpers import TASKS, all_plans, instance_at, plan_of

SEEDS = range(12)


def tiny(task, seed, status):
    """The first tiny instance with this certificate status at this seed (indices 0..5)."""
    for index in range(6):
        inst = instance_at(task, seed, index, size="tiny", hard=status == "infeasible")
        if inst is not None and inst.certificate.status == status:
            return inst
    return None


def _enumerate(inst):
    d = TimetableData.model_validate(inst.data)
    rule_ids = [r.id for r in inst.rules]
    satisfied_sets = set()
    feasible = []
    for plan in all_plans(inst):
        verdicts, values = evaluate(d, inst.rules, inst.objective, plan)
        ok = frozenset(r for r in rule_ids if verdicts[r][0])
        satisfied_sets.add(ok)
        if len(ok) == len(rule_ids):
            feasible.append((tuple(values.values()), plan))
    return rule_ids, satisfied_sets, feasible


def _minimal_conflict_sets(rule_ids, satisfied_sets):
    def consistent(subset):
        return any(subset <= s for s in satisfied_sets)

    found = []
    for k in range(1, len(rule_ids) + 1):
        for combo in itertools.combinations(rule_ids, k):
            s = frozenset(combo)
            if any(m <= s for m in found):
                continue
            if not consistent(s):
                found.append(s)
    return {m for m in found}


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", SEEDS)
def test_feasible_certificate_matches_enumeration(task, seed):
    inst = tiny(task, 100 + seed, "optimal")
    if inst is None:
        pytest.skip("no feasible tiny instance at this seed")
    _, _, feasible = _enumerate(inst)
    assert feasible, "the solver claims optimal but no plan satisfies every rule"
    best = min(v for v, _ in feasible)
    optimal = [p for v, p in feasible if v == best]
    cert = inst.certificate
    assert best == tuple(cert.objective.values())
    if cert.optimal_plans_exact:
        assert len(optimal) == cert.optimal_plans
    else:
        assert len(optimal) >= cert.optimal_plans
    if cert.determinacy == "unique":
        assert optimal == [plan_of(inst, inst.reference)]
        others = sorted(v for v, p in feasible if p != optimal[0])
        if others:
            assert cert.second_best is not None and others[0] == tuple(cert.second_best.values())
        else:
            assert cert.second_best is None
    assert plan_of(inst, inst.reference) in optimal


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", SEEDS)
def test_infeasible_certificate_and_conflict_sets_match_enumeration(task, seed):
    inst = tiny(task, 200 + seed, "infeasible")
    if inst is None:
        pytest.skip("no infeasible tiny instance at this seed")
    rule_ids, satisfied_sets, feasible = _enumerate(inst)
    assert not feasible, "the solver claims infeasible but a plan satisfies every rule"
    expected = _minimal_conflict_sets(rule_ids, satisfied_sets)
    assert {frozenset(s) for s in inst.certificate.conflict_sets} == expected


def test_brute_force_sample_is_not_all_skipped():
    feasible = sum(tiny(t, 100 + s, "optimal") is not None for t in TASKS for s in SEEDS)
    infeasible = sum(tiny(t, 200 + s, "infeasible") is not None for t in TASKS for s in SEEDS)
    assert feasible >= 30 and infeasible >= 24, (feasible, infeasible)
