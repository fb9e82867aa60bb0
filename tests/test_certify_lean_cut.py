"""The lean uniqueness cut (``SolverModel.uniqueness_lean_cut``): when the first objective
term counts answer literals, the proof first searches the plans that drop or move
something of the reference, and widens to the single cut only when that search cannot
settle the question. It must certify exactly what the single cut certifies."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from ortools.sat.python import cp_model

from pbsolve.certify import Rejected, SolverLimits, _counted_literals, certify_feasible
from pbsolve.family import Draft, SolverModel, Symmetry
from tests.certify_helpers import first_solve_fixes


class CoverCounted:
    """Pick options, each covering some needs at a cost, so that every need is covered.
    The first objective term is the number of options picked (a count of answer literals:
    the lean cut applies), the second their cost. ``lean``: the model's
    ``uniqueness_lean_cut``."""

    def __init__(self, options: list[tuple[int, set[int]]], needs: int, lean: bool) -> None:
        self.options, self.needs, self.lean = options, needs, lean

    def build_model(self, draft: Draft) -> SolverModel:
        m = cp_model.CpModel()
        x = [m.new_bool_var(f"x{i}") for i in range(len(self.options))]
        for need in range(self.needs):
            m.add_bool_or([x[i] for i, (_, covers) in enumerate(self.options) if need in covers] or [m.new_constant(0)])
        cost = cp_model.LinearExpr.weighted_sum(x, [c for c, _ in self.options])

        def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
            return {"picked": [i for i, v in enumerate(x) if solver.value(v)]}

        return SolverModel(
            model=m, answer_literals=x, rule_literals={},
            objective_terms=[("count", sum(x), len(x)), ("cost", cost, sum(c for c, _ in self.options))],
            decode=decode, uniqueness_lean_cut=self.lean,
        )  # fmt: skip


def _certify(options: list[tuple[int, set[int]]], needs: int, lean: bool) -> Any:
    return certify_feasible(CoverCounted(options, needs, lean), None, SolverLimits())  # type: ignore[arg-type]


def _ranked(options: list[tuple[int, set[int]]], needs: int) -> list[tuple[int, int]]:
    """(count, cost) of every covering selection, best first: the brute-force answer."""
    values = []
    for picks in itertools.product((0, 1), repeat=len(options)):
        chosen = [o for o, p in zip(options, picks) if p]
        if set().union(*(covers for _, covers in chosen)) >= set(range(needs)):
            values.append((len(chosen), sum(c for c, _ in chosen)))
    return sorted(values)


def _spy_solves(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """The literals of the model's last constraint at each solve (the cut, once there is one)."""
    import pbsolve.certify as certify

    seen: list[list[int]] = []
    real = certify._solve

    def spy(solver: cp_model.CpSolver, model: cp_model.CpModel, stats: Any, callback: Any = None) -> Any:
        constraints = model.proto.constraints  # OR-Tools' proto lists take no negative index
        seen.append(list(constraints[len(constraints) - 1].bool_or.literals))
        return real(solver, model, stats, callback)

    monkeypatch.setattr(certify, "_solve", spy)
    return seen


@pytest.mark.parametrize("seed", range(80))
def test_the_lean_cut_certifies_what_the_single_cut_and_enumeration_certify(seed: int):
    rng = random.Random(seed)
    needs = rng.randint(1, 4)
    options = [(rng.randint(0, 4), {n for n in range(needs) if rng.random() < 0.5}) for _ in range(rng.randint(2, 7))]
    ranked = _ranked(options, needs)
    if not ranked:
        pytest.skip("no selection covers every need")
    lean, single = _certify(options, needs, True), _certify(options, needs, False)
    assert (lean.certificate, lean.plan) == (single.certificate, single.plan)
    cert = lean.certificate
    assert tuple(cert.objective.values()) == ranked[0]
    assert cert.optimal_plans == ranked.count(ranked[0])
    if cert.optimal_plans == 1:
        assert (tuple(cert.second_best.values()) if cert.second_best else None) == (ranked[1:] or [None])[0]


def test_the_lean_cut_leaves_out_the_counted_literals_the_reference_leaves_unset(monkeypatch: pytest.MonkeyPatch):
    seen = _spy_solves(monkeypatch)
    options = [(1, {0, 1}), (2, {0, 1}), (3, {0}), (4, {1})]
    result = _certify(options, 2, True)
    assert result.plan == {"picked": [0]}
    assert seen[1] == [-0 - 1]  # only "option 0 is dropped": the one literal the reference sets
    assert len(seen) == 2  # a plan as good on the count (option 1) settles it


def test_without_the_flag_the_cut_names_every_answer_literal(monkeypatch: pytest.MonkeyPatch):
    seen = _spy_solves(monkeypatch)
    _certify([(1, {0, 1}), (2, {0, 1}), (3, {0}), (4, {1})], 2, False)
    assert sorted(seen[1]) == [-1, 1, 2, 3]


def test_a_reference_that_every_other_plan_grows_is_proven_by_the_single_cut(monkeypatch: pytest.MonkeyPatch):
    seen = _spy_solves(monkeypatch)
    options = [(1, {0, 1}), (3, set()), (2, set())]  # every other cover adds to option 0
    cert = _certify(options, 2, True).certificate
    assert (cert.determinacy, cert.second_best) == ("unique", {"count": 2, "cost": 3})
    assert len(seen) == 3 and sorted(seen[2]) == [-1, 1, 2]  # the lean search found nothing; widened


def test_a_grown_plan_better_than_the_lean_searchs_best_is_found(monkeypatch: pytest.MonkeyPatch):
    seen = _spy_solves(monkeypatch)
    # the reference is option 0; the lean search's best is options 1 + 2 (count 2, cost 2),
    # but option 0 with option 3 (count 2, cost 1) grows the reference and is better
    options = [(1, {0, 1}), (1, {0}), (1, {1}), (0, set())]
    cert = _certify(options, 2, True).certificate
    assert cert.second_best == {"count": 2, "cost": 1}
    assert (cert.margin_term, cert.margin) == ("count", 1)
    assert len(seen) == 3


def test_a_tie_found_by_the_lean_search_is_counted_as_the_single_cut_counts_it():
    options = [(1, {0, 1}), (1, {0, 1}), (5, {0})]
    lean, single = _certify(options, 2, True), _certify(options, 2, False)
    assert lean.certificate.optimal_plans == 2
    assert (lean.certificate, lean.plan) == (single.certificate, single.plan)


def test_a_plan_better_than_the_optimum_found_by_the_lean_search_is_a_disagreement(monkeypatch: pytest.MonkeyPatch):
    first_solve_fixes(monkeypatch, 1)  # as if option 1, cost 2, were optimal
    with pytest.raises(Rejected) as info:
        _certify([(1, {0, 1}), (2, {0, 1})], 2, True)
    assert info.value.reason == "solver_disagreement"


# -- which first terms count answer literals --------------------------------------------
def _first_term(expr: Any, symmetry: Symmetry | None = None) -> SolverModel:
    m = cp_model.CpModel()
    x = [m.new_bool_var(f"x{i}") for i in range(3)]
    other = m.new_int_var(0, 5, "other")
    return SolverModel(
        model=m, answer_literals=x, rule_literals={}, objective_terms=[("t", expr(x, other), 10)],
        decode=lambda solver: {}, symmetry=symmetry,
    )  # fmt: skip


def test_a_positive_sum_of_answer_literals_is_counted():
    sm = _first_term(lambda x, _: 2 * x[0] + x[2])
    assert _counted_literals(sm) == frozenset({x.index for x in (sm.answer_literals[0], sm.answer_literals[2])})


@pytest.mark.parametrize(
    "expr",
    [
        lambda x, _: x[0] - x[1],  # a literal that counts against
        lambda x, _: 3 - x[0],  # an offset: a plan that drops a literal is worse
        lambda x, other: x[0] + other,  # a variable outside the answer
        lambda x, _: 0 * x[0],  # counts nothing
    ],
    ids=["negative", "offset", "outside", "empty"],
)
def test_a_first_term_that_is_not_a_count_of_answer_literals_keeps_the_single_cut(expr: Any):
    assert _counted_literals(_first_term(expr)) is None


def test_a_symmetry_whose_images_are_cut_keeps_the_single_cut():
    images = Symmetry(canonical=lambda v: v, images=lambda v: [v])
    assert _counted_literals(_first_term(lambda x, _: sum(x), images)) is None
    in_model = Symmetry(canonical=lambda v: v, images=lambda v: [v], in_model=True)
    assert _counted_literals(_first_term(lambda x, _: sum(x), in_model)) is not None


# -- the task types that ask for it -----------------------------------------------------
@pytest.mark.parametrize("task", ["volunteer_scheduling", "shift_duty_scheduling"])
def test_a_task_type_that_asks_for_the_lean_cut_gets_the_instances_the_single_cut_gives(
    task: str, monkeypatch: pytest.MonkeyPatch
):
    import pbsolve.certify as certify
    from pbsolve.generate import GenerateOptions, build_instance

    counted: list[frozenset[int] | None] = []
    real = certify._counted_literals

    def spy(sm: SolverModel) -> frozenset[int] | None:
        counted.append(real(sm))
        return counted[-1]

    monkeypatch.setattr(certify, "_counted_literals", spy)
    options = GenerateOptions(task=task, size="default")
    lean = [build_instance(3, i, options).instance for i in range(4)]
    assert sum(c is not None for c in counted) >= len(lean)  # its first term counts answer literals
    monkeypatch.setattr(certify, "_counted_literals", lambda sm: None)
    single = [build_instance(3, i, options).instance for i in range(4)]
    assert [i.model_dump_json() if i else None for i in lean] == [i.model_dump_json() if i else None for i in single]
