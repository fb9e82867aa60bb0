"""optimum() keeps its answers by question -- the model and the solver's parameters exactly
-- so a question the hard tier asks twice is solved once, and nothing else is ever shared."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from ortools.sat.python import cp_model

import pbsolve.certify as certify
from pbsolve.certify import Rejected, SolverLimits, optimum
from pbsolve.family import SolverModel
from pbsolve.lru import LockedLRU


class Pick:
    """One of n options is picked; rule R1 forbids option 0, rule R2 option 1; the
    objective is the picked option's cost."""

    def build_model(self, draft: Any) -> SolverModel:
        costs: list[int] = draft["costs"]
        m = cp_model.CpModel()
        x = [m.new_bool_var(f"x{i}") for i in range(len(costs))]
        m.add_exactly_one(x)
        rules = {rid: m.new_bool_var(f"rule[{rid}]") for rid in ("R1", "R2")}
        m.add(x[0] == 0).only_enforce_if(rules["R1"])
        m.add(x[1] == 0).only_enforce_if(rules["R2"])
        for i in draft.get("banned", []):
            m.add(x[i] == 0)
        return SolverModel(
            model=m,
            answer_literals=x,
            rule_literals=rules,
            objective_terms=[("cost", cp_model.LinearExpr.weighted_sum(x, costs), max(costs))],
            decode=lambda solver: {},
        )


@pytest.fixture(autouse=True)
def empty_memo() -> Iterator[None]:
    certify._OPTIMA.clear()
    yield
    certify._OPTIMA.clear()


@pytest.fixture
def solves(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every CP-SAT solve run from now on, as the status it returned."""
    seen: list[int] = []
    real = certify.StoppableSolver.solve

    def counted(self: certify.StoppableSolver, model: cp_model.CpModel, solution_callback: Any = None) -> Any:
        status = real(self, model, solution_callback)
        seen.append(status)
        return status

    monkeypatch.setattr(certify.StoppableSolver, "solve", counted)
    return seen


def ask(draft: dict[str, Any], limits: SolverLimits | None = None, without: str | None = None) -> Any:
    return optimum(Pick(), draft, limits or SolverLimits(), without=without)  # type: ignore[arg-type]


def test_the_same_question_asked_twice_is_solved_once(solves: list[int]) -> None:
    draft = {"costs": [0, 1, 5, 3]}  # each ask builds a new model with a new builder
    assert ask(draft) == ask(draft) == (3,)
    assert len(solves) == 1


def test_different_data_is_a_different_question(solves: list[int]) -> None:
    assert ask({"costs": [0, 1, 5, 3]}) == (3,)
    assert ask({"costs": [0, 1, 5, 4]}) == (4,)
    assert len(solves) == 2


def test_a_rule_switched_off_is_a_different_question(solves: list[int]) -> None:
    draft = {"costs": [0, 1, 5, 3]}
    assert ask(draft) == (3,)
    assert ask(draft, without="R2") == (1,)
    assert ask(draft, without="R1") == (0,)
    assert len(solves) == 3


def test_other_solver_limits_are_a_different_question(solves: list[int]) -> None:
    draft = {"costs": [0, 1, 5, 3]}
    ask(draft, SolverLimits(deterministic_time=5.0))
    ask(draft, SolverLimits(deterministic_time=6.0))
    assert len(solves) == 2


def test_an_infeasible_answer_is_kept(solves: list[int]) -> None:
    draft = {"costs": [0, 1, 5], "banned": [2]}
    assert ask(draft) is None
    assert ask(draft) is None
    assert solves == [cp_model.INFEASIBLE]


def test_a_time_out_is_never_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    statuses = [cp_model.UNKNOWN, cp_model.OPTIMAL]
    real = certify.StoppableSolver.solve

    def first_times_out(self: certify.StoppableSolver, model: cp_model.CpModel, solution_callback: Any = None) -> Any:
        real(self, model, solution_callback)
        return statuses.pop(0)

    monkeypatch.setattr(certify.StoppableSolver, "solve", first_times_out)
    draft = {"costs": [0, 1, 5, 3]}
    with pytest.raises(Rejected, match="timeout_explanation"):
        ask(draft)
    assert ask(draft) == (3,)
    assert statuses == []


def test_the_memo_keeps_only_the_latest_questions(monkeypatch: pytest.MonkeyPatch, solves: list[int]) -> None:
    monkeypatch.setattr(certify, "_OPTIMA", LockedLRU(2))
    first, second, third = ({"costs": [0, 1, 5, c]} for c in (2, 3, 4))
    ask(first)
    ask(second)
    ask(first)  # first is now the latest used: second is the oldest
    ask(third)
    assert len(certify._OPTIMA) == 2
    ask(first)
    assert len(solves) == 3
    ask(second)
    assert len(solves) == 4


def test_a_kept_answer_equals_a_fresh_solve() -> None:
    draft = {"costs": [0, 1, 7, 4, 6]}
    kept = ask(draft)
    certify._OPTIMA.clear()
    assert ask(draft) == kept == (4,)
