"""The family plugin interface and its discovery.

A family is three packages that share an id:

* ``pbsolve.models.<id>`` exposes ``FAMILY: FamilyModel`` -- the taxonomy entry, the
  instance sampler (a :class:`Draft` from a spec) and the CP-SAT model builder;
* ``pbsolve.renderers.<id>`` exposes ``render_rule``, ``render_objective`` and
  ``render_prompt`` -- the language side;
* ``pbsolve.checkers.<id>`` exposes ``check_answer`` and ``baseline_answer`` -- the grading
  side, written without importing the solver models.

The core only talks to these names, so a new family is added by adding files.
"""

from __future__ import annotations

import importlib
import pkgutil
import random
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:  # grading-only processes (reward servers) never load the solver
    from ortools.sat.python import cp_model

from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule
from pbsolve.taxonomy import FamilySpec, TaskSpec


class NoDraft(Exception):
    """The sampled entities admit no draft for this spec; the generator re-samples."""


@dataclass
class Draft:
    """An uncertified instance: data, numbered rules and a lexicographic objective."""

    spec: GenerationSpec
    data: dict[str, Any]
    rules: list[Rule]
    objective: list[ObjectiveTerm]
    # Mechanisms the draft carries (hard kinds, conflict validation), in a fixed order.
    mechanisms: list[str] = field(default_factory=list)


@dataclass
class SolverModel:
    """A CP-SAT model of a draft, in the shape the certifier needs.

    ``answer_literals`` are the Boolean variables whose values fix everything the answer
    states (uniqueness is judged on them); ``rule_literals`` enforce each numbered rule,
    so rules can be switched off for conflict sets; ``objective_terms`` are
    (term id, integer expression, upper bound) in priority order. ``answer_ints`` are
    integer answer variables (quantities) for answers that are not all Boolean: a
    uniqueness cut then asks that some answer literal or some answer integer differ.
    ``parameters`` are CP-SAT parameters every solve of this model uses (for example
    ``linearization_level`` for models whose feasibility rests on linear reasoning); the
    certifier's own determinism settings (one worker, seed, deterministic time limit,
    presolve) always override them.
    """

    model: cp_model.CpModel
    answer_literals: list[cp_model.IntVar]
    rule_literals: dict[str, cp_model.IntVar]
    objective_terms: list[tuple[str, cp_model.LinearExprT, int]]
    decode: Callable[[cp_model.CpSolver], dict[str, Any]]
    answer_ints: list[cp_model.IntVar] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)


class FamilyModel(Protocol):
    spec: FamilySpec

    def draft(self, spec: GenerationSpec, rng: random.Random) -> Draft: ...

    def build_model(self, draft: Draft) -> SolverModel: ...

    def make_infeasible(self, draft: Draft, rng: random.Random, limits: Any) -> Draft | None:
        """Add a sampled rule that makes the draft infeasible, or None if none was found.

        ``limits`` are the certifier's SolverLimits; feasibility probes must respect them
        and report a time-out by raising ``pbsolve.certify.Rejected``.
        """
        ...


class FamilyNotFound(KeyError):
    pass


def _family_ids() -> list[str]:
    import pbsolve.models as models_pkg

    return sorted(m.name for m in pkgutil.iter_modules(models_pkg.__path__) if not m.name.startswith("_"))


@cache
def families() -> dict[str, FamilyModel]:
    """Every installed family, by id, in a fixed (sorted) order."""
    found: dict[str, FamilyModel] = {}
    for fid in _family_ids():
        module = importlib.import_module(f"pbsolve.models.{fid}")
        fam = getattr(module, "FAMILY", None)
        if fam is not None:
            found[fam.spec.id] = fam
    return found


def family(fid: str) -> FamilyModel:
    fams = families()
    if fid not in fams:
        raise FamilyNotFound(f"unknown family {fid!r}; installed: {', '.join(fams) or 'none'}")
    return fams[fid]


def all_tasks() -> list[TaskSpec]:
    return [t for fam in families().values() for t in fam.spec.tasks]


def find_task(task_id: str) -> TaskSpec:
    for t in all_tasks():
        if t.id == task_id:
            return t
    raise KeyError(f"unknown task {task_id!r}; see `pbsolve taxonomy`")


@cache
def renderer(fid: str) -> ModuleType:
    return importlib.import_module(f"pbsolve.renderers.{fid}")


@cache
def checker(fid: str) -> ModuleType:
    return importlib.import_module(f"pbsolve.checkers.{fid}")
