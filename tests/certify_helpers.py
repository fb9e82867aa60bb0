"""Helpers for the certifier's tests: a first solve made to err on purpose."""

from __future__ import annotations

from typing import Any

import pytest
from ortools.sat.python import cp_model


def first_solve_fixes(monkeypatch: pytest.MonkeyPatch, var_index: int) -> None:
    """From now on, the first CP-SAT solve of a certification runs on a copy of its model
    with variable ``var_index`` fixed to 1, as if that plan were optimal; every later solve
    runs as it is. The certifier's own second optimisation must then report the
    disagreement."""
    import pbsolve.certify as certify

    real = certify._solve
    calls: list[int] = []

    def first_solve_errs(solver: cp_model.CpSolver, model: cp_model.CpModel, stats: Any, callback: Any = None) -> Any:
        calls.append(1)
        if len(calls) > 1:
            return real(solver, model, stats, callback)
        wrong = model.clone()
        wrong.add(wrong.get_int_var_from_proto_index(var_index) == 1)
        return real(solver, wrong, stats, callback)

    monkeypatch.setattr(certify, "_solve", first_solve_errs)
