"""certify_feasible's search settings are tuned for speed and never decide what it certifies:
a unique optimum is certified in one pass; an optimum that is not unique is certified
again with CP-SAT's default search, so its reference plan is that search's."""

from __future__ import annotations

from typing import Any

import pytest
from ortools.sat.python import cp_model

from pbsolve.certify import Rejected, SolverLimits, _tuned, certify_feasible, make_solver
from pbsolve.family import Draft, SolverModel


class PickOne:
    """One of n options is picked; rule R1 forbids option 0; the objective is its cost."""

    def __init__(self, costs: list[int]) -> None:
        self.costs = costs
        self.builds = 0

    def build_model(self, draft: Draft) -> SolverModel:
        self.builds += 1
        m = cp_model.CpModel()
        x = [m.new_bool_var(f"x{i}") for i in range(len(self.costs))]
        m.add_exactly_one(x)
        rule = m.new_bool_var("rule[R1]")
        m.add(x[0] == 0).only_enforce_if(rule)
        cost = cp_model.LinearExpr.weighted_sum(x, self.costs)

        def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
            return {"picked": [i for i, v in enumerate(x) if solver.value(v)]}

        return SolverModel(
            model=m,
            answer_literals=x,
            rule_literals={"R1": rule},
            objective_terms=[("cost", cost, max(self.costs))],
            decode=decode,
        )


def default_search_plan(fam: PickOne) -> dict[str, Any]:
    sm = fam.build_model(None)  # type: ignore[arg-type]
    sm.model.add_assumptions(list(sm.rule_literals.values()))
    expr = sm.objective_terms[0][1]
    sm.model.minimize(expr)
    solver = make_solver(SolverLimits(), optimise=True)
    assert solver.solve(sm.model) == cp_model.OPTIMAL
    return sm.decode(solver)


def test_a_unique_optimum_is_certified_with_one_model():
    fam = PickOne([0, 3, 1, 2])
    result = certify_feasible(fam, None, SolverLimits())  # type: ignore[arg-type]
    cert = result.certificate
    assert (result.plan, cert.objective, cert.determinacy) == ({"picked": [2]}, {"cost": 1}, "unique")
    assert (cert.second_best, cert.margin_term, cert.margin) == ({"cost": 2}, "cost", 1)
    assert fam.builds == 1


def test_an_optimum_that_is_not_unique_is_recertified_with_the_default_search():
    fam = PickOne([0, 2, 1, 1, 1, 3])
    result = certify_feasible(fam, None, SolverLimits())  # type: ignore[arg-type]
    cert = result.certificate
    assert (cert.objective, cert.determinacy, cert.optimal_plans, cert.optimal_plans_exact) == (
        {"cost": 1},
        "value",
        3,
        True,
    )
    assert fam.builds == 2
    assert result.plan == default_search_plan(PickOne(fam.costs))


def test_a_non_unique_optimum_without_counting_is_rejected_without_a_second_model():
    fam = PickOne([0, 1, 1])
    with pytest.raises(Rejected) as info:
        certify_feasible(fam, None, SolverLimits(), count_plans=False)  # type: ignore[arg-type]
    assert info.value.reason == "not_unique"
    assert fam.builds == 1


def test_the_first_optimisation_runs_without_presolve():
    sm = PickOne([0, 1]).build_model(None)  # type: ignore[arg-type]
    p = _tuned(sm, SolverLimits(), "first").parameters
    assert (p.cp_model_presolve, p.linearization_level) == (False, 2)


def test_the_uniqueness_solve_takes_the_models_own_settings_but_never_its_determinism():
    sm = PickOne([0, 1]).build_model(None)  # type: ignore[arg-type]
    sm.uniqueness_parameters = {"cp_model_presolve": False, "linearization_level": 1, "num_workers": 8}
    p = _tuned(sm, SolverLimits(), "uniqueness").parameters
    assert (p.cp_model_presolve, p.linearization_level) == (False, 1)
    assert (p.num_workers, p.random_seed) == (1, 0)


def test_without_settings_of_its_own_the_uniqueness_solve_keeps_presolve_on():
    sm = PickOne([0, 1]).build_model(None)  # type: ignore[arg-type]
    p = _tuned(sm, SolverLimits(), "uniqueness").parameters
    assert (p.cp_model_presolve, p.linearization_level) == (True, 2)


def test_speed_settings_reach_both_tuned_solves():
    sm = PickOne([0, 1]).build_model(None)  # type: ignore[arg-type]
    sm.speed_parameters = {"add_lp_constraints_lazily": False}
    sm.uniqueness_parameters = {"linearization_level": 1}
    first, proof = _tuned(sm, SolverLimits(), "first").parameters, _tuned(sm, SolverLimits(), "uniqueness").parameters
    assert (first.add_lp_constraints_lazily, proof.add_lp_constraints_lazily) == (False, False)
    assert proof.linearization_level == 1


class WithSpeedSettings(PickOne):
    def build_model(self, draft: Draft) -> SolverModel:
        sm = super().build_model(draft)
        sm.speed_parameters = {"add_lp_constraints_lazily": False}
        return sm


def test_the_default_search_recertification_ignores_the_speed_settings(monkeypatch: pytest.MonkeyPatch):
    import pbsolve.certify as certify

    lazy: list[bool] = []
    real = certify.make_solver

    def spy(*args: Any, **kwargs: Any) -> cp_model.CpSolver:
        solver = real(*args, **kwargs)
        lazy.append(solver.parameters.add_lp_constraints_lazily)
        return solver

    monkeypatch.setattr(certify, "make_solver", spy)
    fam = WithSpeedSettings([0, 2, 1, 1, 1, 3])
    result = certify_feasible(fam, None, SolverLimits())  # type: ignore[arg-type]
    assert fam.builds == 2
    assert lazy[:2] == [False, False]  # the tuned pass: first solve and uniqueness proof
    assert lazy[2:] and all(lazy[2:])  # the default search and its plan count
    assert result.plan == default_search_plan(PickOne(fam.costs))


# -- the uniqueness cut on integer answers ------------------------------------------------
class IntegerPair:
    """Two integers x, y in 0..hi with a linear cost: a model whose answer is integers."""

    def __init__(self, hi: int, cost_x: int, cost_y: int, offset: int = 0) -> None:
        self.hi, self.cost_x, self.cost_y, self.offset = hi, cost_x, cost_y, offset

    def build_model(self, draft: Draft) -> SolverModel:
        m = cp_model.CpModel()
        x, y = m.new_int_var(0, self.hi, "x"), m.new_int_var(0, self.hi, "y")
        cost = self.cost_x * x + self.cost_y * y + self.offset

        def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
            return {"x": solver.value(x), "y": solver.value(y)}

        return SolverModel(
            model=m, answer_literals=[], answer_ints=[x, y], rule_literals={},
            objective_terms=[("cost", cost, self.offset + self.hi * (abs(self.cost_x) + abs(self.cost_y)))],
            decode=decode,
        )  # fmt: skip


def test_the_cut_lets_the_second_best_plan_differ_in_one_integer_only():
    result = certify_feasible(IntegerPair(3, 1, 2), None, SolverLimits())  # type: ignore[arg-type]
    assert result.plan == {"x": 0, "y": 0}
    assert (result.certificate.second_best, result.certificate.margin) == ({"cost": 1}, 1)


def test_the_cut_reaches_plans_below_the_reference_value():
    # optimum x = y = 3 (cost 0); the next plan lowers one integer by one (x: cost 1)
    result = certify_feasible(IntegerPair(3, -1, -2, offset=9), None, SolverLimits())  # type: ignore[arg-type]
    assert result.plan == {"x": 3, "y": 3}
    assert (result.certificate.second_best, result.certificate.margin) == ({"cost": 1}, 1)


def test_a_tie_that_moves_one_integer_is_found_and_not_called_unique():
    # cost = y: x is free, so three plans (x = 0, 1 or 2, with y = 0) share the optimum
    result = certify_feasible(IntegerPair(2, 0, 1), None, SolverLimits())  # type: ignore[arg-type]
    cert = result.certificate
    assert (cert.determinacy, cert.optimal_plans, cert.optimal_plans_exact) == ("value", 3, True)
