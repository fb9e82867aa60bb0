"""The second back-ends of the kit families: the PuLP MILP of Shift & Duty Scheduling
(workforce), of Disaster Evacuation Planning (emergency: a flow over time on the
time-expanded network of the listed routes) and of Urban Traffic Planning (routing: an
integer multi-commodity flow over the listed routes).

On every instance, the MILP (HiGHS, zero gap, staged lexicographic objective) must prove
the same optimum as the CP-SAT certificate, find the same instances infeasible, and
produce a plan the checker scores at that optimum. Uniqueness stays the business of the
back-end that generated the instance (CP-SAT). Hard kinds go through the MILP rows too:
replanning (a changes term), robustness (absence-proof cover; backup routes under any
one road failing), recovery scenarios, uncertain inputs and infeasibility.
"""

from __future__ import annotations

import importlib
import json
import sys
from dataclasses import dataclass
from types import ModuleType

import pytest

pulp = pytest.importorskip("pulp")

from pbsolve import milp_kit  # noqa: E402
from pbsolve.certify import SolverLimits, optimum  # noqa: E402
from pbsolve.family import checker, family  # noqa: E402
from pbsolve.grading import grade  # noqa: E402
from pbsolve.mechanisms import HARD_KINDS  # noqa: E402
from pbsolve.schema import Instance  # noqa: E402
from tests.instances import draft_of, find, instance_at  # noqa: E402


@dataclass(frozen=True)
class Twin:
    family: str
    task: str
    sample: int  # indices per (size, tier) of the optimum-and-plan sample
    pool_sample: int  # small indices over which every sampled rule kind must be seen
    kinds_seen: int  # rule kinds that pool sample must reach

    @property
    def milp(self) -> ModuleType:
        return importlib.import_module(f"pbsolve.models.{self.family}.milp")

    def __str__(self) -> str:
        return self.task


TWINS = [
    Twin("workforce", "shift_duty_scheduling", sample=4, pool_sample=16, kinds_seen=9),
    Twin("emergency", "disaster_evacuation_planning", sample=6, pool_sample=30, kinds_seen=9),
    Twin("routing", "urban_traffic_planning", sample=4, pool_sample=20, kinds_seen=8),
    Twin("project", "production_planning", sample=4, pool_sample=20, kinds_seen=8),
    Twin("project", "financial_budgeting", sample=4, pool_sample=20, kinds_seen=10),
    Twin("project", "warehouse_planning", sample=3, pool_sample=16, kinds_seen=8),
    Twin("project", "power_dispatch_planning", sample=4, pool_sample=20, kinds_seen=10),
]
SAMPLE = [
    (twin, size, index, hard)
    for twin in TWINS
    for size in ("small", "default")
    for index in range(twin.sample)
    for hard in (False, True)
]


def _certified(inst: Instance) -> tuple[int, ...] | None:
    return tuple(inst.certificate.objective[t.id] for t in inst.objective) if inst.certificate.objective else None


@pytest.mark.parametrize(("twin", "size", "index", "hard"), SAMPLE, ids=str)
def test_milp_proves_the_certified_optimum_and_its_plan_passes_the_checker(twin, size, index, hard):
    inst = instance_at(twin.task, 21, index, size, hard)
    if inst is None:
        pytest.skip("no certified instance at this index")
    result = twin.milp.optimum(draft_of(inst))
    assert result.values == _certified(inst), (inst.mechanisms, result.values, _certified(inst))
    if result.values is None:
        assert inst.certificate.status == "infeasible"
        return
    answer = {**inst.reference, **result.plan, "objective": inst.certificate.objective}
    g = grade(inst, json.dumps(answer))
    rule_items = {
        it.id for it in inst.checklist
        if any(r.id == it.rule for r in inst.rules) or it.rule in ("format", "objective", "validation")
    }  # fmt: skip
    assert all(i.passed for i in g.items if i.id in rule_items), [i for i in g.items if not i.passed]


@pytest.mark.parametrize("twin", TWINS, ids=str)
def test_milp_and_cp_sat_agree_on_every_hard_kind(twin):
    seen = 0
    for kind in HARD_KINDS:
        inst = find(twin.task, 31, "small", (kind,), "infeasible" if kind == "infeasibility_detection" else "optimal")
        if inst is None:
            continue
        seen += 1
        assert twin.milp.optimum(draft_of(inst)).values == _certified(inst), kind
        if inst.recovery is not None:
            scenario = draft_of(
                inst, rules=[*inst.recovery.scenario, *inst.rules], objective=list(inst.recovery.objective)
            )
            expected = tuple(inst.recovery.certificate.objective[t.id] for t in inst.recovery.objective)
            assert twin.milp.optimum(scenario).values == expected
    assert seen >= 4


@pytest.mark.parametrize("twin", TWINS, ids=str)
def test_milp_agrees_on_the_optimum_with_each_rule_removed(twin):
    """Explainability asks for the optimum without each rule: both back-ends agree."""
    inst = find(twin.task, 41, "small", ("explainability",))
    if inst is None:
        pytest.skip("no explainability instance")
    fam = family(twin.family)
    for rule in inst.rules:
        cp = optimum(fam, draft_of(inst), SolverLimits(), without=rule.id)
        assert twin.milp.optimum(draft_of(inst), without=rule.id).values == cp, rule.kind


@pytest.mark.parametrize("twin", TWINS, ids=str)
def test_milp_holds_every_rule_kind_of_the_pool_on_generated_instances(twin):
    """Over a fixed sample of small instances of every subtask (each forces its own
    kinds), every sampled rule kind goes through the MILP and the optimum agrees."""
    kinds: set[str] = set()
    for index in range(twin.pool_sample):
        inst = instance_at(twin.task, 71, index, "small", False)
        if inst is None or inst.certificate.status != "optimal":
            continue
        kinds |= {r.kind for r in inst.rules}
        assert twin.milp.optimum(draft_of(inst)).values == _certified(inst)
    assert len(kinds) >= twin.kinds_seen, sorted(kinds)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # PuLP 3.3 flags its bundled CBC for 4.0
@pytest.mark.parametrize("twin", TWINS, ids=str)
def test_cbc_fallback_proves_the_same_optimum(twin):
    inst = find(twin.task, 51, "small")
    assert inst is not None
    highs = twin.milp.optimum(draft_of(inst))
    cbc = twin.milp.optimum(draft_of(inst), backend="CBC")
    assert highs.backend == "HiGHS" and cbc.backend == "PULP_CBC_CMD"
    assert highs.values == cbc.values == _certified(inst)


@pytest.mark.parametrize("twin", TWINS, ids=str)
def test_the_milp_source_names_every_rule_and_objective_kind_the_checker_knows(twin):
    builder = getattr(twin.milp, "BUILDERS", {}).get(twin.task)
    path = sys.modules[builder.__module__].__file__ if builder is not None else twin.milp.__file__
    with open(path) as f:  # the twin's own module (a family back-end may dispatch to one per task type)
        source = f.read()
    tc = checker(twin.family).TASKS[twin.task]
    for kind in [*tc.checks, *tc.term_params]:
        assert f'"{kind}"' in source, kind


@pytest.mark.parametrize("twin", TWINS, ids=str)
def test_a_stage_without_a_proven_optimum_is_refused(twin, monkeypatch):
    """sol_status, not status, decides: a time-limited stage that reports 'Optimal' with
    an unproven solution raises MilpUnproven."""
    inst = find(twin.task, 51, "small")
    assert inst is not None
    b, terms, _ = twin.milp.BUILDERS[twin.task](draft_of(inst), None)

    class Unproven:
        name = "fake"

        def actualSolve(self, lp):
            lp.assignStatus(pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible)
            for v in lp.variables():
                v.varValue = 0
            return pulp.LpStatusOptimal

    monkeypatch.setattr(milp_kit, "solver", lambda *a, **k: Unproven())
    with pytest.raises(twin.milp.MilpUnproven):
        milp_kit.lexicographic(b, terms, 1.0, None)
