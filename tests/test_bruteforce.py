"""Certificates agree with exhaustive enumeration on tiny instances.

Every assignment of the answer variables of a tiny instance (starts, rooms and, where
asked, backup rooms) is enumerated and judged by the checker alone, so these tests hold
the solver's optimum, plan count, infeasibility proof, conflict sets, replanning
minimum, binding rules, conservative inputs and recovery plans against an independent
computation.
"""

from __future__ import annotations

import itertools

import pytest

from pbsolve.family import Draft
from pbsolve.models.scheduling.hard import optimistic
from tests.helpers import TASKS, backups_of, enumerate_outcomes, instance_at, plan_of

SEEDS = range(10)
MECHANISM_SEEDS = range(6)


def tiny(task, seed, status, include=()):
    """The first tiny instance with this certificate status at this seed (indices 0..5)."""
    for index in range(6):
        inst = instance_at(task, seed, index, size="tiny", hard=status == "infeasible", include=tuple(include))
        if inst is not None and inst.certificate.status == status:
            if all(k in inst.mechanisms for k in include):
                return inst
    return None


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


def _check_feasible(inst):
    outcomes = list(enumerate_outcomes(inst.data, inst.rules, inst.objective))
    rule_ids = frozenset(r.id for r in inst.rules)
    best, optimal = _best(outcomes, rule_ids)
    assert best is not None, "the solver claims optimal but no plan satisfies every rule"
    cert = inst.certificate
    assert best == tuple(cert.objective.values())
    if cert.optimal_plans_exact:
        assert len(optimal) == cert.optimal_plans
    else:
        assert len(optimal) >= cert.optimal_plans
    ref = (plan_of(inst, inst.reference), backups_of(inst.reference))
    assert ref in [(o.plan, o.backups) for o in optimal]
    if cert.determinacy == "unique":
        others = sorted(o.values for o in outcomes if rule_ids <= o.satisfied and (o.plan, o.backups) != ref)
        assert (cert.second_best is None) == (not others)
        if others:
            assert others[0] == tuple(cert.second_best.values())
    return outcomes


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
    inst = tiny(task, 200 + seed, "infeasible", include=("infeasibility_detection",))
    if inst is None:
        pytest.skip("no infeasible tiny instance at this seed")
    outcomes = list(enumerate_outcomes(inst.data, inst.rules, inst.objective))
    rule_ids = [r.id for r in inst.rules]
    assert not any(set(rule_ids) <= o.satisfied for o in outcomes), "a plan satisfies every rule"
    expected = _minimal_conflict_sets(rule_ids, {o.satisfied for o in outcomes})
    assert {frozenset(s) for s in inst.certificate.conflict_sets} == expected


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", MECHANISM_SEEDS)
def test_replanning_minimum_matches_enumeration_and_the_disruption_breaks_the_old_plan(task, seed):
    inst = tiny(task, 300 + seed, "optimal", include=("min_change_replanning",))
    if inst is None:
        pytest.skip("no replanning tiny instance at this seed")
    outcomes = _check_feasible(inst)  # the changes term is the first objective figure
    changes = next(t for t in inst.objective if t.kind == "changes")
    old = {eid: tuple(v) for eid, v in changes.params["existing"].items()}
    assert inst.certificate.objective["changes"] >= 1
    rule_ids = frozenset(r.id for r in inst.rules)
    assert min(o.values[0] for o in outcomes if rule_ids <= o.satisfied) == inst.certificate.objective["changes"]
    d_slots = {s["id"]: i for i, s in enumerate(inst.data["slots"])}
    old_plan = {eid: (d_slots[s], room) for eid, (s, room) in old.items()}
    old_outcome = next(o for o in outcomes if o.plan == old_plan)
    assert not rule_ids <= old_outcome.satisfied, "the disruption leaves the current schedule valid"


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", MECHANISM_SEEDS)
def test_binding_rules_match_enumeration(task, seed):
    inst = tiny(task, 400 + seed, "optimal", include=("explainability",))
    if inst is None:
        pytest.skip("no explainability tiny instance at this seed")
    outcomes = _check_feasible(inst)
    rule_ids = frozenset(r.id for r in inst.rules)
    best, _ = _best(outcomes, rule_ids)
    binding = [r for r in sorted(rule_ids, key=lambda x: int(x[1:])) if _best(outcomes, rule_ids - {r})[0] < best]
    assert binding == inst.certificate.binding_rules


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", MECHANISM_SEEDS)
def test_conservative_inputs_match_enumeration(task, seed):
    inst = tiny(task, 500 + seed, "optimal", include=("local_incompleteness",))
    if inst is None:
        pytest.skip("no incompleteness tiny instance at this seed")
    outcomes = _check_feasible(inst)
    rule_ids = frozenset(r.id for r in inst.rules)
    best, _ = _best(outcomes, rule_ids)
    draft = Draft(spec=inst.spec, data=inst.data, rules=list(inst.rules), objective=list(inst.objective))
    expected = []
    for u in inst.data["uncertain"]:
        variant = optimistic(draft, u["id"])
        value, _ = _best(list(enumerate_outcomes(variant.data, inst.rules, inst.objective)), rule_ids)
        if value is not None and value < best:
            expected.append(u["id"])
    assert expected == inst.certificate.conservative_inputs


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", MECHANISM_SEEDS)
def test_recovery_plan_matches_enumeration(task, seed):
    inst = tiny(task, 600 + seed, "optimal", include=("exception_recovery",))
    if inst is None:
        pytest.skip("no recovery tiny instance at this seed")
    _check_feasible(inst)
    rec = inst.recovery
    rules = [*inst.rules, *rec.scenario]
    outcomes = list(enumerate_outcomes(inst.data, rules, rec.objective))
    best, optimal = _best(outcomes, frozenset(r.id for r in rules))
    assert best == tuple(rec.certificate.objective.values())
    assert [o.plan for o in optimal] == [plan_of(inst, inst.reference["recovery"])]
    main = plan_of(inst, inst.reference)
    assert rec.objective[0].params["existing"] == {
        eid: [inst.data["slots"][s]["id"], room] for eid, (s, room) in main.items()
    }


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("seed", MECHANISM_SEEDS)
def test_robust_plan_with_backups_matches_enumeration(task, seed):
    inst = tiny(task, 700 + seed, "optimal", include=("robustness_design",))
    if inst is None:
        pytest.skip("no robustness tiny instance at this seed")
    assert backups_of(inst.reference) is not None
    _check_feasible(inst)  # enumerates backup rooms too: uniqueness covers them


MECHANISMS = ("min_change_replanning", "explainability", "local_incompleteness", "exception_recovery", "robustness_design")


def test_brute_force_sample_is_not_all_skipped():
    feasible = sum(tiny(t, 100 + s, "optimal") is not None for t in TASKS for s in SEEDS)
    infeasible = sum(tiny(t, 200 + s, "infeasible", ("infeasibility_detection",)) is not None for t in TASKS for s in SEEDS)
    assert feasible >= 24 and infeasible >= 20, (feasible, infeasible)
    for mech, base in zip(MECHANISMS, (300, 400, 500, 600, 700)):
        found = sum(tiny(t, base + s, "optimal", (mech,)) is not None for t in TASKS for s in MECHANISM_SEEDS)
        assert found >= 6, (mech, found)
