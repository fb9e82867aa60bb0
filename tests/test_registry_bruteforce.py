"""Every task type of every registered family: certificates agree with exhaustive
enumeration on tiny instances.

Every assignment of the answer variables of a tiny instance is enumerated (through the
family's adapter, tests/family_adapters.py) and judged by the checker alone, so these
tests hold the solver's optimum, plan count, second best, infeasibility proof, conflict
sets, replanning minimum, binding rules, conservative inputs, recovery plans and robust
plans against an independent computation.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from pbsolve.family import family, find_task
from pbsolve.generate import GenerateOptions, build_instance
from tests.family_adapters import ADAPTERS, adapter, draft_of, find, instance_at, registry_tasks, toy_family_registered

TASKS = registry_tasks()
MECHANISMS = ("min_change_replanning", "explainability", "local_incompleteness", "exception_recovery", "robustness_design")
BASE = dict(zip(MECHANISMS, (300, 400, 500, 600, 700)))  # seed offset per mechanism


@pytest.fixture(autouse=True)
def _registry() -> Iterator[None]:
    with toy_family_registered():
        yield


def _with_toy(fn):
    with toy_family_registered():
        return fn()


def _cases(seeds: str) -> list[tuple[str, int]]:
    return _with_toy(lambda: [(t, s) for t in TASKS for s in getattr(adapter(t), seeds)])


def _mechanism_cases(mech: str) -> list[tuple[str, int]]:
    """(task, seed) for the task types whose pool offers the mechanism."""
    return _with_toy(lambda: [(t, s) for t in TASKS if mech in {c.id for c in find_task(t).pool} for s in adapter(t).mechanism_seeds])


def tiny(task, seed, status, include=()):
    """The first tiny instance with this certificate status at this seed (indices 0..5)
    whose plans are few enough to enumerate in seconds (see Adapter.enumerable)."""
    return find(task, seed, "tiny", tuple(include), status, tries=6, accept=adapter(task).enumerable)


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
    ad = adapter(inst.task)
    outcomes = ad.outcomes(inst)
    rule_ids = frozenset(r.id for r in inst.rules)
    best, optimal = _best(outcomes, rule_ids)
    assert best is not None, "the solver claims optimal but no plan satisfies every rule"
    cert = inst.certificate
    assert best == tuple(cert.objective[t.id] for t in inst.objective)
    if cert.optimal_plans_exact:
        assert len(optimal) == cert.optimal_plans
    else:
        assert len(optimal) >= cert.optimal_plans
    ref = ad.plan_key(inst, ad.plan_of(inst, inst.reference))
    assert ref in [o.key for o in optimal]
    if cert.determinacy == "unique":
        others = sorted(o.values for o in outcomes if rule_ids <= o.satisfied and o.key != ref)
        assert (cert.second_best is None) == (not others)
        if others:
            assert others[0] == tuple(cert.second_best[t.id] for t in inst.objective)
    return outcomes


@pytest.mark.parametrize(("task", "seed"), _cases("seeds"))
def test_feasible_certificate_matches_enumeration(task, seed):
    inst = tiny(task, 100 + seed, "optimal")
    if inst is None:
        pytest.skip("no feasible tiny instance at this seed")
    _check_feasible(inst)


def _by_levels_cases() -> list[tuple[str, int]]:
    return [(t, s) for t, s in _cases("seeds") if s < 2]


@pytest.mark.parametrize(("task", "seed"), _by_levels_cases())
def test_uniqueness_split_by_levels_certifies_the_same_instances_and_matches_enumeration(task, seed, monkeypatch):
    """Every task type's uniqueness proof split along its objective terms
    (SolverModel.uniqueness_levels_after, forced to 0): the same tiny instances, byte for byte,
    as the model's own proof, and the certificate holds against enumeration."""
    import pbsolve.certify as certify

    real = certify._certify

    def by_levels(sm, *args, **kwargs):
        sm.uniqueness_levels_after = 0.0
        return real(sm, *args, **kwargs)

    own = [instance_at(task, 100 + seed, i, "tiny") for i in range(6)]
    monkeypatch.setattr(certify, "_certify", by_levels)
    split = [build_instance(100 + seed, i, GenerateOptions(task=task, size="tiny")).instance for i in range(6)]
    assert [i and i.model_dump_json() for i in split] == [i and i.model_dump_json() for i in own]
    inst = tiny(task, 100 + seed, "optimal")
    if inst is None:
        pytest.skip("no feasible tiny instance at this seed")
    _check_feasible(next(s for s in split if s is not None and s.model_dump_json() == inst.model_dump_json()))


@pytest.mark.parametrize(("task", "seed"), _cases("seeds"))
def test_infeasible_certificate_and_conflict_sets_match_enumeration(task, seed):
    inst = tiny(task, 200 + seed, "infeasible", ("infeasibility_detection",))
    if inst is None:
        pytest.skip("no infeasible tiny instance at this seed")
    outcomes = adapter(task).outcomes(inst)
    rule_ids = [r.id for r in inst.rules]
    assert not any(set(rule_ids) <= o.satisfied for o in outcomes), "a plan satisfies every rule"
    expected = _minimal_conflict_sets(rule_ids, {o.satisfied for o in outcomes})
    assert {frozenset(s) for s in inst.certificate.conflict_sets} == expected
    if adapter(task).conflicts_run_through_rules:
        assert all(len(s) >= 2 for s in inst.certificate.conflict_sets), "a conflict should run through the instance's rules"


@pytest.mark.parametrize(("task", "seed"), _mechanism_cases("min_change_replanning"))
def test_replanning_minimum_matches_enumeration_and_the_disruption_breaks_the_old_plan(task, seed):
    inst = tiny(task, 300 + seed, "optimal", ("min_change_replanning",))
    if inst is None:
        pytest.skip("no replanning tiny instance at this seed")
    ad = adapter(task)
    outcomes = _check_feasible(inst)  # the changes term is the first objective figure
    assert inst.objective[0].kind == "changes" and inst.certificate.objective["changes"] >= 1
    rule_ids = frozenset(r.id for r in inst.rules)
    assert min(o.values[0] for o in outcomes if rule_ids <= o.satisfied) == inst.certificate.objective["changes"]
    old = ad.existing_plan(inst, inst.objective[0].params["existing"])
    old_outcome = next(o for o in outcomes if o.key == ad.plan_key(inst, old))
    assert not rule_ids <= old_outcome.satisfied, "the disruption leaves the current plan valid"
    assert old_outcome.values[0] == 0


@pytest.mark.parametrize(("task", "seed"), _mechanism_cases("explainability"))
def test_binding_rules_match_enumeration(task, seed):
    inst = tiny(task, 400 + seed, "optimal", ("explainability",))
    if inst is None:
        pytest.skip("no explainability tiny instance at this seed")
    outcomes = _check_feasible(inst)
    rule_ids = frozenset(r.id for r in inst.rules)
    best, _ = _best(outcomes, rule_ids)
    binding = [r for r in sorted(rule_ids, key=lambda x: int(x[1:])) if _best(outcomes, rule_ids - {r})[0] < best]
    assert binding == inst.certificate.binding_rules


@pytest.mark.parametrize(("task", "seed"), _mechanism_cases("local_incompleteness"))
def test_conservative_inputs_match_enumeration(task, seed):
    inst = tiny(task, 500 + seed, "optimal", ("local_incompleteness",))
    if inst is None:
        pytest.skip("no incompleteness tiny instance at this seed")
    outcomes = _check_feasible(inst)
    rule_ids = frozenset(r.id for r in inst.rules)
    best, _ = _best(outcomes, rule_ids)
    expected = []
    for u in inst.data["uncertain"]:
        variant = family(inst.family).optimistic(draft_of(inst), u["id"])
        value, _ = _best(adapter(task).outcomes(inst, data=variant.data), rule_ids)
        if value is not None and value < best:
            expected.append(u["id"])
    assert expected == inst.certificate.conservative_inputs


@pytest.mark.parametrize(("task", "seed"), _mechanism_cases("exception_recovery"))
def test_recovery_plan_matches_enumeration(task, seed):
    inst = tiny(task, 600 + seed, "optimal", ("exception_recovery",))
    if inst is None:
        pytest.skip("no recovery tiny instance at this seed")
    ad = adapter(task)
    _check_feasible(inst)
    rec = inst.recovery
    rules = [*inst.rules, *rec.scenario]
    outcomes = ad.outcomes(inst, rules=rules, objective=rec.objective)
    best, optimal = _best(outcomes, frozenset(r.id for r in rules))
    assert best == tuple(rec.certificate.objective[t.id] for t in rec.objective)
    assert [o.key for o in optimal] == [ad.plan_key(inst, ad.plan_of(inst, inst.reference["recovery"], rules))]
    main = ad.plan_of(inst, inst.reference)
    assert rec.objective[0].params["existing"] == ad.tc(task).existing(ad.data(inst), main)


@pytest.mark.parametrize(("task", "seed"), _mechanism_cases("robustness_design"))
def test_robust_plan_matches_enumeration(task, seed):
    inst = tiny(task, 700 + seed, "optimal", ("robustness_design",))
    if inst is None:
        pytest.skip("no robustness tiny instance at this seed")
    assert adapter(task).robust_reference_ok(inst)
    _check_feasible(inst)  # backups are enumerated too: uniqueness covers them


def _families() -> list[str]:
    return _with_toy(lambda: sorted({find_task(t).family for t in TASKS}))


@pytest.mark.parametrize("fid", _families())
def test_brute_force_sample_is_not_all_skipped(fid):
    ad = ADAPTERS[fid]
    scope, floor_feasible, floor_infeasible, floor_mechanism = ad.found_floor
    tasks = [t.id for t in family(fid).spec.tasks]
    groups = [tasks] if scope == "family" else [[t] for t in tasks]
    for group in groups:
        feasible = sum(tiny(t, 100 + s, "optimal") is not None for t in group for s in ad.seeds)
        infeasible = sum(tiny(t, 200 + s, "infeasible", ("infeasibility_detection",)) is not None for t in group for s in ad.seeds)
        assert feasible >= floor_feasible and infeasible >= floor_infeasible, (group, feasible, infeasible)
        for mech in MECHANISMS:
            offered = [t for t in group if mech in {c.id for c in find_task(t).pool}]
            found = sum(tiny(t, BASE[mech] + s, "optimal", (mech,)) is not None for t in offered for s in ad.mechanism_seeds)
            assert not offered or found >= floor_mechanism, (group, mech, found)
