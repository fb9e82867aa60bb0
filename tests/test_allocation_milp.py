"""The second back-end: PuLP MILP formulations of procurement and material allocation.

On every instance where both back-ends exist, the MILP (HiGHS, zero gap, staged
lexicographic objective) must prove the same optimum as the CP-SAT certificate, find
the same instances infeasible, and produce a plan the checker scores at that optimum.
Uniqueness stays the business of the back-end that generated the instance (CP-SAT).
"""

from __future__ import annotations

import json

import pytest

pulp = pytest.importorskip("pulp")

from pbsolve import milp_kit  # noqa: E402
from pbsolve.certify import SolverLimits, optimum  # noqa: E402
from pbsolve.family import family  # noqa: E402
from pbsolve.grading import grade  # noqa: E402
from pbsolve.mechanisms import HARD_KINDS  # noqa: E402
from pbsolve.models.allocation import milp  # noqa: E402
from tests.allocation_helpers import MILP_TASKS, draft_of, find, instance_at, tc_of  # noqa: E402

SAMPLE = [(size, index, hard) for size in ("small", "default") for index in range(4) for hard in (False, True)]


def _certified(inst):
    return tuple(inst.certificate.objective[t.id] for t in inst.objective) if inst.certificate.objective else None


@pytest.mark.parametrize("task", MILP_TASKS)
@pytest.mark.parametrize(("size", "index", "hard"), SAMPLE)
def test_milp_proves_the_certified_optimum(task, size, index, hard):
    inst = instance_at(task, 21, index, size, hard)
    if inst is None:
        pytest.skip("no certified instance at this index")
    result = milp.optimum(draft_of(inst))
    assert result.values == _certified(inst), (inst.mechanisms, result.values, _certified(inst))
    if result.values is None:
        assert inst.certificate.status == "infeasible"
        return
    # the MILP's own plan is valid and scores the optimum under the checker
    answer = {**inst.reference, **result.plan, "objective": inst.certificate.objective}
    g = grade(inst, json.dumps(answer))
    rule_items = {it.id for it in inst.checklist if any(r.id == it.rule for r in inst.rules) or it.rule in ("format", "objective", "validation")}
    assert all(i.passed for i in g.items if i.id in rule_items), [i for i in g.items if not i.passed]


@pytest.mark.parametrize("task", MILP_TASKS)
def test_milp_and_cp_sat_agree_on_every_hard_kind(task):
    """Replanning (a changes term), robustness (a robust rule), recovery scenarios,
    uncertain data and infeasibility all go through the MILP rows too."""
    for kind in HARD_KINDS:
        inst = find(task, 31, "small", (kind,), "infeasible" if kind == "infeasibility_detection" else "optimal")
        if inst is None:
            continue
        assert milp.optimum(draft_of(inst)).values == _certified(inst), kind
        if inst.recovery is not None:
            scenario = draft_of(inst, rules=[*inst.rules, *inst.recovery.scenario], objective=list(inst.recovery.objective))
            expected = tuple(inst.recovery.certificate.objective[t.id] for t in inst.recovery.objective)
            assert milp.optimum(scenario).values == expected


@pytest.mark.parametrize("task", MILP_TASKS)
def test_milp_agrees_on_the_optimum_with_each_rule_removed(task):
    """Explainability asks for the optimum without each rule: both back-ends agree."""
    inst = find(task, 41, "small", ("explainability",))
    if inst is None:
        pytest.skip("no explainability instance")
    fam = family("allocation")
    for rule in inst.rules:
        cp = optimum(fam, draft_of(inst), SolverLimits(), without=rule.id)
        assert milp.optimum(draft_of(inst), without=rule.id).values == cp, rule.kind


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # PuLP 3.3 flags its bundled CBC for 4.0
@pytest.mark.parametrize("task", MILP_TASKS)
def test_cbc_fallback_proves_the_same_optimum(task):
    inst = find(task, 51, "small")
    assert inst is not None
    highs = milp.optimum(draft_of(inst))
    cbc = milp.optimum(draft_of(inst), backend="CBC")
    assert highs.backend == "HiGHS" and cbc.backend == "PULP_CBC_CMD"
    assert highs.values == cbc.values == _certified(inst)


def test_the_milp_covers_every_rule_and_objective_kind_of_its_tasks():
    """Every rule kind the checker knows for these tasks has MILP rows (an unknown kind
    would raise): build each kind once on a generated instance."""
    for task in MILP_TASKS:
        inst = find(task, 61, "small")
        assert inst is not None
        source = open(milp.__file__).read()
        for kind in tc_of(task).checks:
            assert f'"{kind}"' in source, (task, kind)
        assert "changes" in source and "total_cost" in source and "shortage" in source


def test_a_stage_without_a_proven_optimum_is_refused(monkeypatch):
    """sol_status, not status, decides: a time-limited stage that reports 'Optimal' with
    an unproven solution raises MilpUnproven."""
    inst = find("procurement_planning", 51, "small")
    assert inst is not None
    b, terms, _ = milp.BUILDERS[inst.task](draft_of(inst), None)

    class Unproven:
        name = "fake"

        def actualSolve(self, lp):  # noqa: N802 - PuLP's interface
            lp.assignStatus(pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible)
            for v in lp.variables():
                v.varValue = 0
            return pulp.LpStatusOptimal

    monkeypatch.setattr(milp_kit, "solver", lambda *a, **k: Unproven())
    with pytest.raises(milp.MilpUnproven):
        milp_kit.lexicographic(b, terms, 1.0, None)
