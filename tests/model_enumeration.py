"""Every plan a CP-SAT model accepts, enumerated by the solver itself: the model side of the
task files' rule-by-rule tests (model and checker must accept the same plans)."""

from __future__ import annotations

from collections.abc import Callable, Hashable

from ortools.sat.python import cp_model

from pbsolve.family import SolverModel

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
