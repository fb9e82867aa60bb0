"""The family-independent half of every MILP back-end (PuLP): solver, rows, stages.

A family's ``models/<id>/milp.py`` writes its rule kinds as linear rows on a
:class:`Builder` and hands :func:`solve` a function that returns the builder, the
objective terms (in lexicographic order) and a decoder of the answer section; this
module runs the stages (optimise one term, pin it, optimise the next) and times them.
HiGHS (through highspy) is used when available, CBC otherwise; a stage counts only when
the solution status is proven optimal (``sol_status``, not ``status``, which also reads
"Optimal" after a time-out), and the relative gap is 0. The certifier stays CP-SAT:
this is a cross-check, held against it in the tests and the generation benchmark.

Importing this module needs PuLP (the ``milp`` extra); nothing else in the core does.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pulp

from pbsolve.family import Draft


class MilpUnproven(Exception):
    """A stage ended without a proven optimum (time limit, numerical trouble)."""


def _quiet_banner() -> None:
    """highspy prints a banner on stdout the first time a solver is made in a process, even
    with output off; make that first one with stdout pointed at /dev/null."""
    try:
        import highspy
    except ImportError:
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


_quiet_banner()


def solver(time_limit: float = 60.0, backend: str | None = None) -> pulp.LpSolver:
    """HiGHS with a zero gap and one thread; CBC where HiGHS is unavailable (or asked for)."""
    highs = pulp.HiGHS(msg=False, gapRel=0, threads=1, timeLimit=time_limit, random_seed=0)
    if backend != "CBC" and highs.available():
        return highs
    return pulp.PULP_CBC_CMD(msg=False, gapRel=0, timeLimit=time_limit, threads=1)


@dataclass
class MilpResult:
    values: tuple[int, ...] | None  # lexicographic optimum, None when infeasible
    plan: dict[str, Any] | None  # decoded answer section of the optimum
    seconds: float  # everything: building the PuLP model and every stage
    backend: str
    solve_seconds: float = 0.0  # the solver's own time, summed over the stages


class Builder:
    """A PuLP problem with numbered variables (created in call order, so a model built in
    a fixed order is reproducible) and rows that may be constant."""

    def __init__(self, name: str) -> None:
        self.prob = pulp.LpProblem(name, pulp.LpMinimize)
        self._n = 0
        self.solve_seconds = 0.0

    def var(self, lo: int, hi: int, binary: bool = False, continuous: bool = False) -> pulp.LpVariable:
        """A new integer (or binary, or continuous) variable in [lo, hi]."""
        self._n += 1
        cat = pulp.LpBinary if binary else pulp.LpContinuous if continuous else pulp.LpInteger
        if hasattr(self.prob, "add_variable"):  # PuLP >= 3.3; plain construction is deprecated there
            return self.prob.add_variable(f"v{self._n}", lowBound=lo, upBound=hi, cat=cat)
        return pulp.LpVariable(f"v{self._n}", lowBound=lo, upBound=hi, cat=cat)

    def add(self, constraint: Any) -> None:
        if isinstance(constraint, bool):  # a constant row: true holds, false cannot
            if not constraint:
                self.prob += pulp.lpSum([]) >= 1
            return
        self.prob += constraint

    def differs(self, v: pulp.LpVariable, old: int, big: int) -> pulp.LpVariable:
        """d >= [v != old]; minimising keeps it exact where it counts."""
        d = self.var(0, 1, binary=True)
        self.add(v - old <= big * d)
        self.add(old - v <= big * d)
        return d


def lexicographic(
    b: Builder, terms: list[tuple[str, Any]], time_limit: float, backend: str | None
) -> tuple[int, ...] | None:
    """Optimise each term in turn, pinning it to its optimum before the next; None when the
    first stage is infeasible. Every stage must end proven optimal (else MilpUnproven)."""
    values: list[int] = []
    for _, expr in terms:
        b.prob.setObjective(pulp.lpSum([expr]) if not isinstance(expr, pulp.LpAffineExpression) else expr)
        b.prob.solve(solver(time_limit, backend))
        b.solve_seconds += b.prob.solutionTime
        if b.prob.status == pulp.LpStatusInfeasible:
            if values:
                raise MilpUnproven("a later stage became infeasible")
            return None
        if b.prob.sol_status != pulp.LpSolutionOptimal:
            raise MilpUnproven(f"stage ended with {pulp.LpStatus[b.prob.status]} / sol_status {b.prob.sol_status}")
        value = round(pulp.value(expr) if not isinstance(expr, (int, float)) else expr)
        values.append(value)
        b.add(expr <= value + 0.5)  # integer-valued: pins the stage's optimum exactly
    return tuple(values)


Formulation = tuple[Builder, list[tuple[str, Any]], Callable[[], dict[str, Any]]]
"""What a family's builder returns: the rows, the objective terms in order, a decoder."""


def solve(
    build: Callable[[Draft, str | None], Formulation],
    draft: Draft,
    without: str | None = None,
    time_limit: float = 60.0,
    backend: str | None = None,
) -> MilpResult:
    """The lexicographic optimum of ``build(draft, without)`` (``without``: a rule id left
    out), timed with model building included."""
    t0 = time.perf_counter()
    b, terms, decode = build(draft, without)
    values = lexicographic(b, terms, time_limit, backend)
    name = solver(time_limit, backend).name
    return MilpResult(
        values=values,
        plan=decode() if values is not None else None,
        seconds=time.perf_counter() - t0,
        backend=name,
        solve_seconds=b.solve_seconds,
    )
