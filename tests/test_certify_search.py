"""certify_feasible's search settings are tuned for speed and never decide what it certifies:
a unique optimum is certified in one pass; an optimum that is not unique is certified
again with CP-SAT's default search, so its reference plan is that search's."""

from __future__ import annotations

from typing import Any

import pytest
from ortools.sat.python import cp_model

from pbsolve.certify import Rejected, SolverLimits, _tuned, certify_feasible, make_solver
from pbsolve.family import Draft, SolverModel
from tests.certify_helpers import first_solve_fixes


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


# -- the uniqueness proof split along the objective terms (SolverModel.uniqueness_levels_after) --
class PickOneOfPairs:
    """One of n options is picked; each option costs (a, b), a first and a second objective
    term; ``after`` is the model's ``uniqueness_levels_after`` (0: split at once)."""

    def __init__(self, costs: list[tuple[int, int]], after: float | None = 0.0) -> None:
        self.costs, self.after = costs, after
        self.builds = 0

    def build_model(self, draft: Draft) -> SolverModel:
        self.builds += 1
        m = cp_model.CpModel()
        x = [m.new_bool_var(f"x{i}") for i in range(len(self.costs))]
        m.add_exactly_one(x)
        a = cp_model.LinearExpr.weighted_sum(x, [c[0] for c in self.costs])
        b = cp_model.LinearExpr.weighted_sum(x, [c[1] for c in self.costs])

        def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
            return {"picked": [i for i, v in enumerate(x) if solver.value(v)]}

        return SolverModel(
            model=m, answer_literals=x, rule_literals={},
            objective_terms=[("a", a, max(c[0] for c in self.costs)), ("b", b, max(c[1] for c in self.costs))],
            decode=decode, uniqueness_levels_after=self.after,
        )  # fmt: skip


class PickOneOfTuples(PickOneOfPairs):
    """PickOneOfPairs with any number of objective terms (t0, t1, ...)."""

    def build_model(self, draft: Draft) -> SolverModel:
        self.builds += 1
        m = cp_model.CpModel()
        x = [m.new_bool_var(f"x{i}") for i in range(len(self.costs))]
        m.add_exactly_one(x)
        terms = [
            (f"t{k}", cp_model.LinearExpr.weighted_sum(x, [c[k] for c in self.costs]), max(c[k] for c in self.costs))
            for k in range(len(self.costs[0]))
        ]

        def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
            return {"picked": [i for i, v in enumerate(x) if solver.value(v)]}

        return SolverModel(
            model=m, answer_literals=x, rule_literals={}, objective_terms=terms, decode=decode,
            uniqueness_levels_after=self.after,
        )  # fmt: skip


@pytest.mark.parametrize("seed", range(40))
def test_split_by_levels_certifies_what_enumeration_and_the_single_cut_certify(seed: int):
    import random

    rng = random.Random(seed)
    terms, options = rng.randint(1, 4), rng.randint(1, 7)
    costs = [tuple(rng.randint(0, 2) for _ in range(terms)) for _ in range(options)]
    by_levels = certify_feasible(PickOneOfTuples(costs), None, SolverLimits()).certificate  # type: ignore[arg-type]
    by_cut = certify_feasible(PickOneOfTuples(costs, after=None), None, SolverLimits()).certificate  # type: ignore[arg-type]
    assert by_levels == by_cut
    ranked = sorted(costs)
    assert tuple(by_levels.objective.values()) == ranked[0]
    assert by_levels.optimal_plans == ranked.count(ranked[0])
    if ranked.count(ranked[0]) == 1:
        second = tuple(by_levels.second_best.values()) if by_levels.second_best else None
        assert second == (ranked[1] if len(ranked) > 1 else None)


def _levels_and_cut(costs: list[tuple[int, int]]) -> tuple[Any, Any]:
    by_levels = certify_feasible(PickOneOfPairs(costs), None, SolverLimits())  # type: ignore[arg-type]
    by_cut = certify_feasible(PickOneOfPairs(costs, after=None), None, SolverLimits())  # type: ignore[arg-type]
    return by_levels, by_cut


def _spy_levels(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the solve count after each split proof."""
    import pbsolve.certify as certify

    seen: list[int] = []
    real = certify._second_best_by_levels

    def spy(sm: SolverModel, model: Any, limits: Any, stats: Any, best: Any, ref: Any) -> Any:
        out = real(sm, model, limits, stats, best, ref)
        seen.append(stats.solves)
        return out

    monkeypatch.setattr(certify, "_second_best_by_levels", spy)
    return seen


def test_split_by_levels_finds_a_second_best_that_keeps_the_first_term():
    by_levels, by_cut = _levels_and_cut([(1, 5), (1, 3), (2, 0), (4, 1)])
    assert (by_levels.plan, by_levels.certificate.second_best) == ({"picked": [1]}, {"a": 1, "b": 5})
    assert (by_levels.certificate.margin_term, by_levels.certificate.margin) == ("b", 2)
    assert by_levels.certificate == by_cut.certificate


def test_split_by_levels_finds_a_second_best_that_moves_the_first_term():
    by_levels, by_cut = _levels_and_cut([(3, 0), (1, 3), (2, 9), (2, 4)])
    assert by_levels.certificate.second_best == {"a": 2, "b": 4}
    assert (by_levels.certificate.margin_term, by_levels.certificate.margin) == ("a", 1)
    assert by_levels.certificate == by_cut.certificate


def test_split_by_levels_proves_a_lone_plan_unique_without_a_second_best():
    by_levels, by_cut = _levels_and_cut([(2, 7)])
    assert (by_levels.certificate.determinacy, by_levels.certificate.second_best) == ("unique", None)
    assert by_levels.certificate == by_cut.certificate


def test_split_by_levels_finds_a_tie_and_leaves_it_to_the_default_search(monkeypatch: pytest.MonkeyPatch):
    costs = [(2, 1), (1, 4), (3, 0), (1, 4)]
    splits = _spy_levels(monkeypatch)
    fam = PickOneOfPairs(costs)
    result = certify_feasible(fam, None, SolverLimits())  # type: ignore[arg-type]
    cert = result.certificate
    assert (cert.determinacy, cert.optimal_plans, cert.optimal_plans_exact) == ("value", 2, True)
    assert (fam.builds, len(splits)) == (2, 1)  # the tuned pass split; the default search cut once
    assert result.certificate == _levels_and_cut(costs)[1].certificate


def test_split_by_levels_rejects_a_tie_at_once_when_plans_are_not_counted():
    with pytest.raises(Rejected) as info:
        certify_feasible(PickOneOfPairs([(1, 4), (1, 4)]), None, SolverLimits(), count_plans=False)  # type: ignore[arg-type]
    assert info.value.reason == "not_unique"


def test_split_by_levels_counts_every_solve_in_the_uniqueness_phase(monkeypatch: pytest.MonkeyPatch):
    splits = _spy_levels(monkeypatch)
    result = certify_feasible(PickOneOfPairs([(3, 0), (1, 3), (2, 9)]), None, SolverLimits())  # type: ignore[arg-type]
    assert splits == [3]  # the first solve, the cut on the optimal face, the first term moved
    assert result.stats.solves == 3 and result.stats.uniqueness_s > 0


def test_a_proof_the_single_cut_settles_within_its_budget_is_not_split(monkeypatch: pytest.MonkeyPatch):
    splits = _spy_levels(monkeypatch)
    result = certify_feasible(PickOneOfPairs([(3, 0), (1, 3), (2, 9)], after=5.0), None, SolverLimits())  # type: ignore[arg-type]
    assert (splits, result.stats.solves) == ([], 2)
    assert result.certificate == _levels_and_cut([(3, 0), (1, 3), (2, 9)])[1].certificate


def test_a_first_solve_slower_than_the_budget_sends_the_proof_straight_to_the_split(monkeypatch: pytest.MonkeyPatch):
    splits = _spy_levels(monkeypatch)
    costs = [(3, 0), (1, 3), (2, 9), (2, 4)]
    result = certify_feasible(PickOneOfPairs(costs, after=1e-9), None, SolverLimits())  # type: ignore[arg-type]
    assert splits == [3]  # the first solve, then two parts: no budgeted cut
    assert result.certificate == _levels_and_cut(costs)[1].certificate


def test_a_single_cut_unsettled_within_its_budget_hands_the_proof_to_the_split(monkeypatch: pytest.MonkeyPatch):
    import pbsolve.certify as certify

    real = certify._solve

    def budget_runs_out(solver: cp_model.CpSolver, model: cp_model.CpModel, stats: Any, callback: Any = None) -> Any:
        if solver.parameters.max_deterministic_time == 0.5:
            stats.solves += 1
            return cp_model.UNKNOWN
        return real(solver, model, stats, callback)

    monkeypatch.setattr(certify, "_solve", budget_runs_out)
    splits = _spy_levels(monkeypatch)
    costs = [(3, 0), (1, 3), (2, 9), (2, 4)]
    result = certify_feasible(PickOneOfPairs(costs, after=0.5), None, SolverLimits())  # type: ignore[arg-type]
    assert splits == [4]  # the first solve, the budgeted cut, then two parts
    assert result.certificate == _levels_and_cut(costs)[1].certificate


def test_split_by_levels_reports_a_plan_better_than_the_optimum_as_a_disagreement(monkeypatch: pytest.MonkeyPatch):
    first_solve_fixes(monkeypatch, 0)  # as if option 0, cost (3, 0), were optimal
    with pytest.raises(Rejected) as info:
        certify_feasible(PickOneOfPairs([(3, 0), (1, 3), (2, 9)]), None, SolverLimits())  # type: ignore[arg-type]
    assert info.value.reason == "solver_disagreement"


# -- the uniqueness proof started from the first solve's last plan (SolverModel.uniqueness_hint) --
class CoverWithHint:
    """Pick options (each covers some of 6 needs, at a cost) so that every need is covered;
    two objective terms, the cost and the number of options. ``hint``: the model's
    ``uniqueness_hint``."""

    def __init__(self, seed: int, hint: bool) -> None:
        import random

        rng = random.Random(seed)
        self.options = [(rng.randint(1, 9), {n for n in range(6) if rng.random() < 0.4}) for _ in range(10)]
        self.hint = hint

    def build_model(self, draft: Draft) -> SolverModel:
        m = cp_model.CpModel()
        x = [m.new_bool_var(f"x{i}") for i in range(len(self.options))]
        for need in range(6):
            m.add_bool_or([x[i] for i, (_, covers) in enumerate(self.options) if need in covers] or [m.new_constant(1)])
        cost = cp_model.LinearExpr.weighted_sum(x, [c for c, _ in self.options])

        def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
            return {"picked": [i for i, v in enumerate(x) if solver.value(v)]}

        return SolverModel(
            model=m, answer_literals=x, rule_literals={},
            objective_terms=[("cost", cost, sum(c for c, _ in self.options)), ("count", sum(x), len(x))],
            decode=decode, uniqueness_hint=self.hint,
        )  # fmt: skip


def _spy_incumbents(monkeypatch: pytest.MonkeyPatch) -> list[list[int] | None]:
    """Record what each uniqueness proof is started from."""
    import pbsolve.certify as certify

    seen: list[list[int] | None] = []
    original = certify._Incumbents.before

    def before(self: Any, reference: list[int]) -> list[int] | None:
        seen.append(original(self, reference))
        return seen[-1]

    monkeypatch.setattr(certify._Incumbents, "before", before)
    return seen


@pytest.mark.parametrize("seed", range(60))
def test_a_hinted_uniqueness_proof_certifies_what_the_unhinted_one_certifies(seed: int):
    hinted = certify_feasible(CoverWithHint(seed, True), None, SolverLimits())  # type: ignore[arg-type]
    plain = certify_feasible(CoverWithHint(seed, False), None, SolverLimits())  # type: ignore[arg-type]
    assert (hinted.certificate, hinted.plan) == (plain.certificate, plain.plan)


def test_the_hint_is_the_first_solves_last_plan_before_the_optimum_and_the_cut_leaves_it_in(
    monkeypatch: pytest.MonkeyPatch,
):
    seen = _spy_incumbents(monkeypatch)
    started = []
    for seed in range(30):
        result = certify_feasible(CoverWithHint(seed, True), None, SolverLimits())  # type: ignore[arg-type]
        if seen and seen[-1] is not None:
            started.append((seen[-1], result.plan))
    assert started, "no first solve found a plan before its optimum: the hint was never tried"
    for incumbent, plan in started:
        assert [i for i, v in enumerate(incumbent) if v] != plan["picked"]


def test_without_the_hint_no_plans_are_recorded(monkeypatch: pytest.MonkeyPatch):
    seen = _spy_incumbents(monkeypatch)
    for seed in range(5):
        certify_feasible(CoverWithHint(seed, False), None, SolverLimits())  # type: ignore[arg-type]
    assert seen == []


def test_the_incumbent_is_the_last_plan_found_that_is_not_the_reference():
    from pbsolve.certify import _Incumbents

    kept = _Incumbents([])
    kept.plans = [[1, 0, 1], [0, 1, 1], [0, 0, 1]]
    assert (kept.before([0, 0, 1]), kept.before([1, 1, 1]), _Incumbents([]).before([0])) == ([0, 1, 1], [0, 0, 1], None)


def test_a_first_solve_whose_first_plan_is_optimal_leaves_nothing_to_start_from():
    from pbsolve.certify import _Incumbents

    kept = _Incumbents([])
    kept.plans = [[0, 1]]
    assert kept.before([0, 1]) is None


def test_certification_phases_are_timed_in_cpu_seconds_so_a_busy_machine_does_not_move_their_ratio(
    monkeypatch: pytest.MonkeyPatch,
):
    import time

    import pbsolve.certify as certify

    real = certify._solve

    def waiting_solve(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.05)  # the process waits, as it does while other work holds the core
        return real(*args, **kwargs)

    monkeypatch.setattr(certify, "_solve", waiting_solve)
    start = time.perf_counter()
    result = certify_feasible(PickOne([5, 2, 7]), None, SolverLimits())  # type: ignore[arg-type]
    assert time.perf_counter() - start >= 0.1  # both phases waited
    assert result.stats.first_solve_s < 0.04 and result.stats.uniqueness_s < 0.04


class PickOneProbedWith(PickOne):
    """PickOne whose models ask :func:`pbsolve.certify.optimum` for these settings."""

    def __init__(self, costs: list[int], settings: dict[str, Any]) -> None:
        super().__init__(costs)
        self.settings = settings

    def build_model(self, draft: Draft) -> SolverModel:
        sm = super().build_model(draft)
        sm.optimum_parameters = dict(self.settings)
        return sm


def _spy_optimum_solvers(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The parameters of every solver pbsolve.certify.make_solver hands out from now on."""
    import pbsolve.certify as certify

    made: list[Any] = []
    real = certify.make_solver

    def spying(*args: Any, **kwargs: Any) -> cp_model.CpSolver:
        solver = real(*args, **kwargs)
        made.append(solver.parameters)
        return solver

    monkeypatch.setattr(certify, "make_solver", spying)
    return made


def test_the_optimum_of_a_model_without_settings_of_its_own_is_solved_without_presolve(
    monkeypatch: pytest.MonkeyPatch,
):
    from pbsolve.certify import optimum

    made = _spy_optimum_solvers(monkeypatch)
    assert optimum(PickOne([0, 3, 1, 2]), None, SolverLimits()) == (1,)  # type: ignore[arg-type]
    assert [(p.cp_model_presolve, p.linearization_level) for p in made] == [(False, 2)]


def test_the_optimum_is_solved_with_the_models_optimum_settings_presolve_included_but_never_its_determinism(
    monkeypatch: pytest.MonkeyPatch,
):
    from pbsolve.certify import optimum

    made = _spy_optimum_solvers(monkeypatch)
    settings = {"cp_model_presolve": True, "max_presolve_iterations": 1, "cp_model_probing_level": 0, "num_workers": 8}
    assert optimum(PickOneProbedWith([0, 3, 1, 2], settings), None, SolverLimits()) == (1,)  # type: ignore[arg-type]
    assert [(p.cp_model_presolve, p.max_presolve_iterations, p.cp_model_probing_level) for p in made] == [(True, 1, 0)]
    assert [(p.num_workers, p.random_seed) for p in made] == [(1, 0)]


def test_optimum_settings_reach_neither_certification_solve(monkeypatch: pytest.MonkeyPatch):
    made = _spy_optimum_solvers(monkeypatch)
    fam = PickOneProbedWith([0, 3, 1, 2], {"cp_model_presolve": True, "cp_model_probing_level": 0})
    certify_feasible(fam, None, SolverLimits())  # type: ignore[arg-type]
    assert len(made) == 2 and all(p.cp_model_probing_level != 0 for p in made)
    assert made[0].cp_model_presolve is False  # the first optimisation keeps presolve off
