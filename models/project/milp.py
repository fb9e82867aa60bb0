"""MILP back-end (PuLP) of the Project & Production Operations family.

Each task type with a natural MILP writes its formulation in its own module
``<module>_milp.py`` (``TASK_ID``, and ``build(draft, without) -> Formulation`` written
with the kit's :class:`~pbsolve.milp_kit.Builder`); this module finds them, so a twin is
added by adding its file, like a task type. The solver (HiGHS, else CBC; zero gap), the
staged lexicographic objective and the proven-optimal stages are the core's
(:mod:`pbsolve.milp_kit`). Tests and the generation benchmark hold each optimum against
CP-SAT's on the same instances; the certifier itself stays CP-SAT.

Importing this module needs PuLP (the ``milp`` extra); nothing else in the family does.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from types import ModuleType

from pbsolve.family import Draft
from pbsolve.milp_kit import Formulation, MilpResult, MilpUnproven, solve  # noqa: F401 (MilpUnproven: re-exported)

_PACKAGE = __name__.rpartition(".")[0]


def _twins() -> list[ModuleType]:
    pkg = importlib.import_module(_PACKAGE)
    names = sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name.endswith("_milp"))
    return [importlib.import_module(f"{_PACKAGE}.{name}") for name in names]


BUILDERS: dict[str, Callable[[Draft, str | None], Formulation]] = {m.TASK_ID: m.build for m in _twins()}
TASKS = tuple(BUILDERS)


def optimum(
    draft: Draft, without: str | None = None, time_limit: float = 60.0, backend: str | None = None
) -> MilpResult:
    """The lexicographic optimum of a draft by MILP (optionally with one rule off); the
    backend is HiGHS unless ``backend="CBC"`` or HiGHS is missing."""
    return solve(BUILDERS[draft.spec.task], draft, without, time_limit, backend)
