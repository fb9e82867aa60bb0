"""The family plugin interface and its discovery.

A family is three packages that share an id:

* ``pbsolve.models.<id>`` exposes ``FAMILY``, a :class:`Family` -- the taxonomy entry,
  the instance sampler (a :class:`Draft` from a spec), the CP-SAT model builder and the
  hard-tier hooks;
* ``pbsolve.renderers.<id>`` is a :class:`Renderer` -- the language side;
* ``pbsolve.checkers.<id>`` is a :class:`Checker` -- the grading side, written without
  importing the solver models.

The core only talks to these names, so a new family is added by adding files;
:func:`families` checks each one against the contract when it loads it.

A family kept outside pbsolve (a third-party package, or the template in
``tests/toy_family``) is the same three parts under one package root ``<root>``:
``<root>.models`` (exposing ``FAMILY``), ``<root>.renderers`` and ``<root>.checkers``.
It is registered by an entry point of the group ``pbsolve.families`` (name: the family
id, value: ``<root>``) or by the environment variable ``PBSOLVE_FAMILY_PATH``
(comma-separated ``<id>=<root>``), read when the registry first loads.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import pkgutil
import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # grading-only processes (reward servers) never load the solver
    from ortools.sat.python import cp_model

from pbsolve.params import ParamsTable
from pbsolve.schema import GenerationSpec, Instance, ObjectiveTerm, Recovery, Rule
from pbsolve.sources import Imported, SourceError, SourceFile
from pbsolve.taxonomy import MECHANISM_IDS, FamilySpec, TaskSpec


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


@dataclass(frozen=True)
class Symmetry:
    """Answer-variable assignments that state the same answer (interchangeable groups,
    vehicles or staff: relabelling them changes the variables, not the answer).

    Values are those of ``SolverModel.answer_literals`` then ``answer_ints``.
    ``images(values)`` lists every assignment of the same answer (``values`` included);
    ``canonical(values)`` is the one representative of them. With ``in_model`` the
    model's own symmetry-breaking constraints admit only the canonical image: the
    certifier then cuts one assignment per answer and checks that every plan it finds is
    canonical. Without it, the uniqueness cut and the plan count exclude every image.
    """

    canonical: Callable[[list[int]], list[int]]
    images: Callable[[list[int]], list[list[int]]]
    in_model: bool = False


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
    presolve) always override them. ``uniqueness_parameters`` are further parameters of
    the uniqueness re-optimisation alone (``cp_model_presolve``, ``linearization_level``),
    chosen by measurement for the model: they change how fast a proof comes, never what
    it proves. ``speed_parameters`` are parameters of both optimisations of the tuned
    certification only (first solve and uniqueness proof, never the default-search
    re-certification of a tied optimum, whose returned plan must stay what it has always
    been): settings such as ``add_lp_constraints_lazily`` that change the search path, and
    so which of several tied plans comes back, but not the optimum. ``symmetry`` (see :class:`Symmetry`) says which
    answer assignments are one answer, so uniqueness and plan counts compare answers,
    not labellings. ``uniqueness_levels_after``, when set, lets the tuned uniqueness
    re-optimisation run that many deterministic seconds and then splits it along the
    objective terms (see :func:`pbsolve.certify._second_best_by_levels`); at once when the
    first optimisation took longer (a hard optimum, a hard proof) or the value is 0: the
    same answer (unique, the same second-best values, or a tie), chosen by measurement
    for the model. ``uniqueness_hint`` starts the tuned uniqueness re-optimisation (the
    single cut) from the first optimisation's last plan before its optimum, a complete
    plan the cut leaves in: the proof has an incumbent from the start, and proves the
    same answer. ``uniqueness_lean_cut`` lets the tuned single cut leave out the
    literals that would only grow the reference, when the first objective term counts
    answer literals (see :func:`pbsolve.certify._counted_literals`): the re-optimisation
    asks first among the plans that drop or move something, and widens the cut to the
    single cut only when that search finds no plan as good on the first term; the same
    answer, chosen by measurement for the model. ``optimum_parameters`` are further parameters of
    :func:`pbsolve.certify.optimum` alone (the hard tier's probes of variant drafts, which
    read back only the optimal values), ``cp_model_presolve`` included (off unless set):
    chosen by measurement for the model, they change how fast the value comes, never
    the value.
    """

    model: cp_model.CpModel
    answer_literals: list[cp_model.IntVar]
    rule_literals: dict[str, cp_model.IntVar]
    objective_terms: list[tuple[str, cp_model.LinearExprT, int]]
    decode: Callable[[cp_model.CpSolver], dict[str, Any]]
    answer_ints: list[cp_model.IntVar] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    uniqueness_parameters: dict[str, Any] = field(default_factory=dict)
    speed_parameters: dict[str, Any] = field(default_factory=dict)
    symmetry: Symmetry | None = None
    uniqueness_levels_after: float | None = None
    uniqueness_hint: bool = False
    uniqueness_lean_cut: bool = False
    optimum_parameters: dict[str, Any] = field(default_factory=dict)


class Builds(Protocol):
    """What the certifier needs of a family: a model per draft."""

    def build_model(self, draft: Draft) -> SolverModel: ...


class Family(ABC):
    """The model side of a family: every hook the core calls, in one place.

    A family package ``pbsolve.models.<id>`` exposes ``FAMILY``, an instance of a
    subclass. Per-task hooks receive the task through the draft (``draft.spec.task``)
    or explicitly (``task``), so one family object serves all its task types. The hard
    hooks (``make_*``, ``optimistic``, ``uncertain_ids``, ``report``) implement the
    family's part of the mechanisms in :mod:`pbsolve.mechanisms`; feasibility probes in
    them respect ``limits`` (the certifier's :class:`~pbsolve.certify.SolverLimits`)
    and report a time-out by raising :class:`~pbsolve.certify.Rejected`.
    """

    spec: FamilySpec

    @abstractmethod
    def draft(self, spec: GenerationSpec, rng: random.Random) -> Draft:
        """An uncertified instance of ``spec.task`` whose rules a planted witness plan
        satisfies; :class:`NoDraft` when the sampled entities admit none (re-sampled)."""

    @abstractmethod
    def build_model(self, draft: Draft) -> SolverModel:
        """The CP-SAT model of the draft: every numbered rule behind its own literal."""

    @abstractmethod
    def encoder_kinds(self, task: str) -> frozenset[str]:
        """The rule kinds the task's model can encode (checked against its pools)."""

    @abstractmethod
    def make_infeasible(self, draft: Draft, rng: random.Random, limits: Any) -> Draft | None:
        """The draft with one added rule (at a random place among the sampled rules, of a
        kind feasible instances carry too) that makes it infeasible, the mechanism
        ``infeasibility_detection`` appended; None if none was found."""

    @abstractmethod
    def make_disruption(
        self, draft: Draft, plan: dict[str, Any], rng: random.Random, limits: Any, scenario: bool = False
    ) -> Draft | None:
        """A feasible draft with a rule that breaks ``plan`` and a first objective term
        ``changes`` (assignments changed from ``plan``). Inserted among the numbered
        rules with ``min_change_replanning`` appended; as a ``scenario`` (exception
        recovery) the rule is appended as ``S1`` instead. None if none was found."""

    @abstractmethod
    def make_robust(self, draft: Draft, rng: random.Random, limits: Any) -> Draft | None:
        """The draft with the family's robustness rule (backups that survive any single
        failure) and its cost terms, ``robustness_design`` appended; None if infeasible."""

    @abstractmethod
    def make_uncertain(self, draft: Draft, rng: random.Random, limits: Any) -> Draft | None:
        """The draft with some inputs stated as ranges (``data["uncertain"]``, ids U1..),
        the data at their worst case, ``local_incompleteness`` appended; None if fewer
        than two feasible candidates were found."""

    @abstractmethod
    def optimistic(self, draft: Draft, uid: str) -> Draft:
        """The draft with uncertain input ``uid`` at its best case."""

    @abstractmethod
    def uncertain_ids(self, draft: Draft) -> list[str]:
        """The ids of the draft's uncertain inputs, in data order."""

    @abstractmethod
    def report(self, draft: Draft, plan: dict[str, Any]) -> dict[str, Any]:
        """The verification figures of ``plan`` (``conflict_validation``), computed from the
        decoded plan independently of the checker."""

    # -- published data (`pbsolve generate --from FILE`); optional ------------------------
    def source_format(self, task: str) -> str | None:
        """The file format task type ``task`` imports (a phrase for messages), None if none."""
        return None

    def import_source(self, task: str, source: SourceFile) -> Imported:
        """The file's problem as ``task``'s instance data; :class:`SourceError` with the
        reason when the file is not of the task's format or is malformed."""
        raise SourceError(f"task type {task} reads no data files")

    def draft_imported(self, spec: GenerationSpec, data: dict[str, Any], rng: random.Random) -> Draft:
        """A draft on imported ``data`` (from :meth:`import_source`): the task's structural
        rules, the spec's sampled rules (none with ``--rules none``: then the draft is the
        file's problem exactly) and the subtask's objective."""
        raise SourceError(f"task type {spec.task} reads no data files")


@runtime_checkable
class Checker(Protocol):
    """The grading side of a family: the module ``pbsolve.checkers.<id>``. It never
    imports OR-Tools or a model module (grading-only processes load only this)."""

    def check_answer(self, instance: Instance, answer: Any) -> dict[str, tuple[bool, str]]:
        """Verdict per checklist item of a parsed answer."""
        ...

    def answer_schema(
        self, task: str, data: dict[str, Any], objective: list[ObjectiveTerm], mechanisms: list[str],
        recovery: Recovery | None, rules: list[Rule],
    ) -> dict[str, Any]:  # fmt: skip
        """The JSON Schema of an answer to an instance of ``task``."""
        ...

    def baseline_answer(self, instance: Instance) -> str:
        """A simple (usually wrong) answer, for calibrating graders and responders."""
        ...

    def format_text(self, task: str) -> str:
        """What a complete plan of ``task`` is, for the format checklist item."""
        ...

    def known_kinds(self, task: str) -> tuple[ParamsTable, ParamsTable]:
        """(rule kind -> parameter model, objective kind -> parameter model) of what the
        task's checker can judge (:mod:`pbsolve.params`); KeyError for a task the family
        does not have. The grader refuses other kinds and parameters that do not fit."""
        ...

    def read_data(self, instance: Instance) -> Any:
        """The instance's data as the checker reads it; raises if it is not the task's."""
        ...


# optional checker hook: near_misses(instance, rng) -> list[(kind, answer dict)] (pbsolve.perturb)
OPTIONAL_CHECKER_HOOKS = ("near_misses",)


@runtime_checkable
class Renderer(Protocol):
    """The language side of a family: the module ``pbsolve.renderers.<id>``."""

    def render_rule(self, rule: Rule, data: dict[str, Any], task: str) -> str:
        """The sentence of one rule."""
        ...

    def render_objective(self, term: ObjectiveTerm, data: dict[str, Any], task: str) -> str:
        """The sentence of one objective term."""
        ...

    def render_prompt(
        self, data: dict[str, Any], rules: list[Rule], objective: list[ObjectiveTerm], task: str, subtask: str,
        mechanisms: list[str], recovery: Recovery | None,
    ) -> str:  # fmt: skip
        """The prompt without its answer-format section (the core appends it)."""
        ...

    def sentence_kinds(self, task: str) -> frozenset[str]:
        """The rule kinds ``render_rule`` has a sentence for in ``task``."""
        ...


class FamilyContractError(TypeError):
    """A family breaks the contract; the message names the family, the task and what is missing."""


def _protocol_functions(proto: type) -> list[str]:
    return sorted(n for n, v in vars(proto).items() if callable(v) and not n.startswith("_"))


def validate_family(fam: object, chk: ModuleType, rend: ModuleType) -> None:
    """Check one family against the contract; raise :class:`FamilyContractError` naming
    everything missing. Every constraint kind in every pool of every task (and its base
    rules) needs an encoder, a check and a sentence; mechanism kinds must be mechanisms
    the core implements."""
    from pbsolve.mechanisms import HARD_KINDS, REPORTING_KINDS  # generation side only

    fid = getattr(getattr(fam, "spec", None), "id", repr(fam))
    if not isinstance(fam, Family):
        raise FamilyContractError(f"family {fid}: FAMILY is a {type(fam).__name__}, not a pbsolve.family.Family")
    problems: list[str] = []
    for role, module, proto in (("checker", chk, Checker), ("renderer", rend, Renderer)):
        missing = [n for n in _protocol_functions(proto) if not callable(getattr(module, n, None))]
        if missing:
            problems.append(f"{role} {module.__name__} lacks {', '.join(missing)}")
    if problems:
        raise FamilyContractError(f"family {fid}: " + "; ".join(problems))
    mechanisms = set(HARD_KINDS) | set(REPORTING_KINDS)
    for task in fam.spec.tasks:
        known = {
            "encoder": fam.encoder_kinds(task.id),
            "check": chk.known_kinds(task.id)[0],
            "sentence": rend.sentence_kinds(task.id),
        }
        kinds = [c.id for c in task.pool if c.id not in MECHANISM_IDS] + [
            k for k in task.base_rules if k not in {c.id for c in task.pool}
        ]
        for c in task.pool:
            if c.id in MECHANISM_IDS and c.id not in mechanisms:
                problems.append(f"task {task.id}: mechanism {c.id} is not implemented by pbsolve.mechanisms")
        for what, have in known.items():
            missing = [k for k in kinds if k not in have]
            if missing:
                problems.append(f"task {task.id}: no {what} for {', '.join(missing)}")
    if problems:
        raise FamilyContractError(f"family {fid}: " + "; ".join(problems))


class FamilyNotFound(KeyError):
    pass


FAMILY_PATH_ENV = "PBSOLVE_FAMILY_PATH"
ENTRY_POINT_GROUP = "pbsolve.families"


@cache
def plugin_roots() -> dict[str, str]:
    """Family id -> package root of every family registered from outside pbsolve (entry
    points of :data:`ENTRY_POINT_GROUP`, then :data:`FAMILY_PATH_ENV`, which wins)."""
    roots = {ep.name: ep.value for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    for entry in filter(None, (e.strip() for e in os.environ.get(FAMILY_PATH_ENV, "").split(","))):
        fid, sep, root = entry.partition("=")
        if not sep or not fid.strip().isidentifier() or not root.strip():
            raise FamilyContractError(f"{FAMILY_PATH_ENV}: {entry!r} is not <family id>=<package root>")
        roots[fid.strip()] = root.strip()
    return roots


def _part(fid: str, part: str) -> str:
    """The module name of one part (models, renderers, checkers) of family ``fid``."""
    root = plugin_roots().get(fid)
    return f"{root}.{part}" if root is not None else f"pbsolve.{part}.{fid}"


def _family_ids() -> list[str]:
    import pbsolve.models as models_pkg

    shipped = {m.name for m in pkgutil.iter_modules(models_pkg.__path__) if not m.name.startswith("_")}
    return sorted(shipped | set(plugin_roots()))


def reload_registry() -> None:
    """Forget the loaded registry (after :data:`FAMILY_PATH_ENV` changed, e.g. in tests)."""
    for fn in (plugin_roots, families, renderer, checker):
        fn.cache_clear()


@cache
def families() -> dict[str, Family]:
    """Every installed family, by id, in a fixed (sorted) order, each validated against
    the contract (:func:`validate_family`) when it is loaded."""
    found: dict[str, Family] = {}
    for fid in _family_ids():
        module = importlib.import_module(_part(fid, "models"))
        fam = getattr(module, "FAMILY", None)
        if fam is not None:
            validate_family(fam, checker(fid), renderer(fid))
            found[fam.spec.id] = fam
    return found


def family(fid: str) -> Family:
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
    return importlib.import_module(_part(fid, "renderers"))


@cache
def checker(fid: str) -> ModuleType:
    return importlib.import_module(_part(fid, "checkers"))
