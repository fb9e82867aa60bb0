"""Every plan a CP-SAT model accepts, enumerated by the solver itself: the model side of the
task files' rule-by-rule tests (model and checker must accept the same plans)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

from ortools.sat.python import cp_model

from pbsolve.family import Draft, SolverModel

Reader = Callable[[Callable[[cp_model.IntVar], int]], Hashable]


def enumerate_solutions(sm: SolverModel, read: Reader | None = None) -> frozenset[Hashable]:
    """Every solution of ``sm.model`` (presolve keeps them all), each as ``read(value)``;
    by default the tuple of the answer integers."""
    found: set[Hashable] = set()
    reader: Reader = read or (lambda value: tuple(value(v) for v in sm.answer_ints))

    class Collect(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            found.add(reader(self.value))

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.enumerate_all_solutions = True
    solver.parameters.keep_all_feasible_solutions_in_presolve = True
    assert solver.solve(sm.model, Collect()) in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    return frozenset(found)


def objective_figures(sm: SolverModel, answer_ints: Sequence[int]) -> dict[str, int]:
    """The model's figure for each objective term once its answer integers are fixed to
    the given values, in order (the model side of "model and checker compute the same
    figures"); the plan must leave the model solvable."""
    for var, value in zip(sm.answer_ints, answer_ints):
        sm.model.add(var == value)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.solve(sm.model) == cp_model.OPTIMAL
    return {tid: int(solver.value(expr)) for tid, expr, _ in sm.objective_terms}


def with_rule_on(build: Callable[[Draft], SolverModel], draft: Draft, rule_id: str) -> SolverModel:
    """The model of ``draft`` with rule ``rule_id``'s literal fixed on."""
    sm = build(draft)
    sm.model.add(sm.rule_literals[rule_id] == 1)
    return sm
