"""The family kit's solver side: what every family's CP-SAT models and hard-tier hooks
share (the parts that need no solver live in :mod:`pbsolve.kit`).

A family supplies, per task type, a module with its task-specific parts -- its data, its
CP-SAT model, which rule breaks a plan, which inputs can be uncertain -- and this module
turns them into drafts the core certifies: the model base with enforced posting, the
:class:`~pbsolve.family.SolverModel` assembly, infeasibility search by bisection,
min-change disruptions, robustness and uncertain inputs (:class:`HardHooks`), and
:class:`TaskModulesFamily`, the :class:`~pbsolve.family.Family` that dispatches every
hook to the task's module. Every structure is built in a fixed order so models are
reproducible. Importing this module loads OR-Tools (generation side only).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar

from ortools.sat.python import cp_model

from pbsolve.certify import SolverLimits, is_feasible, make_solver, new_model, optimum
from pbsolve.family import Draft, Family, SolverModel
from pbsolve.kit import KindRegistry, Uncertain, encode_rules, insert_at, insert_rule, post
from pbsolve.params import Params, ParamsTable, make_rule
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule
from pbsolve.sources import Imported, SourceError, SourceFile


class ModelBase:
    """A CP-SAT model under construction, with rule posting behind enforcement literals."""

    def __init__(self) -> None:
        self.m = new_model()

    def post(self, ct: Any, lit: cp_model.IntVar) -> None:
        """Add ``ct`` enforced by ``lit`` (see :func:`pbsolve.kit.post`)."""
        post(self.m, ct, lit)

    def both(self, a: cp_model.IntVar, b: cp_model.IntVar, name: str) -> cp_model.IntVar:
        """A Boolean equal to a AND b."""
        z = self.m.new_bool_var(name)
        self.m.add(z <= a)
        self.m.add(z <= b)
        self.m.add(z >= a + b - 1)
        return z

    def differs(self, var: cp_model.IntVar, value: int, name: str) -> cp_model.IntVar:
        """A Boolean equal to 1 exactly when the integer ``var`` is not ``value``."""
        below, above = self.m.new_bool_var(f"{name}<"), self.m.new_bool_var(f"{name}>")
        self.m.add(var <= value - 1).only_enforce_if(below)
        self.m.add(var >= value).only_enforce_if(~below)
        self.m.add(var >= value + 1).only_enforce_if(above)
        self.m.add(var <= value).only_enforce_if(~above)
        d = self.m.new_bool_var(name)
        self.m.add(d == below + above)
        return d


Encoder = Callable[[Any, Any, cp_model.IntVar], None]  # (task model, the rule's Params model, literal)


def solver_model(
    tm: Any,
    draft: Draft,
    encoders: KindRegistry[Encoder],
    table: ParamsTable,
    objective: Callable[[Any, ObjectiveTerm], tuple[cp_model.LinearExprT, int]],
    decode: Callable[[cp_model.CpSolver], dict[str, Any]],
    answer_literals: list[cp_model.IntVar],
    answer_ints: list[cp_model.IntVar],
    parameters: dict[str, Any] | None = None,
    uniqueness_parameters: dict[str, Any] | None = None,
    speed_parameters: dict[str, Any] | None = None,
) -> SolverModel:
    """Post every numbered rule behind its own literal (its parameters read through
    ``table``, the task's rule kind -> parameter model) and collect the objective terms
    (``parameters``, ``uniqueness_parameters`` and ``speed_parameters``: see :class:`~pbsolve.family.SolverModel`)."""
    rule_literals = encode_rules(tm.m, draft.rules, encoders, tm, table)
    terms = []
    for term in draft.objective:
        expr, ub = objective(tm, term)
        terms.append((term.id, expr, ub))
    return SolverModel(
        model=tm.m,
        answer_literals=answer_literals,
        rule_literals=rule_literals,
        objective_terms=terms,
        decode=decode,
        answer_ints=answer_ints,
        parameters=dict(parameters or {}),
        uniqueness_parameters=dict(uniqueness_parameters or {}),
        speed_parameters=dict(speed_parameters or {}),
    )


# -- drafts ----------------------------------------------------------------------------
def variant(draft: Draft, **changes: Any) -> Draft:
    fields: dict[str, Any] = {
        "spec": draft.spec,
        "data": draft.data,
        "rules": draft.rules,
        "objective": draft.objective,
        "mechanisms": draft.mechanisms,
    }
    fields.update(changes)
    return Draft(**fields)


def first_infeasible(
    values: Sequence[Any], trial: Callable[[Any], Draft], feasible: Callable[[Draft], bool]
) -> Draft | None:
    """``values`` run from loosest to tightest and feasibility only falls along them; the
    draft of the loosest infeasible value, by bisection, or None when all are feasible."""
    lo, hi, best = 0, len(values) - 1, None  # invariant: values[:lo] feasible, values[hi+1:] infeasible
    while lo <= hi:
        mid = (lo + hi) // 2
        t = trial(values[mid])
        if feasible(t):
            lo = mid + 1
        else:
            best, hi = t, mid - 1
    return best


def alone_infeasible(build: Callable[[Draft], SolverModel], draft: Draft, rule_id: str, limits: SolverLimits) -> bool:
    """Is one rule infeasible on its own (every other rule off)? Infeasible variants whose
    only conflict is the added rule itself are passed over: a conflict should run through
    the instance's rules. A time-out counts as 'alone' (the variant is passed over too)."""
    sm = build(draft)
    for rid, lit in sm.rule_literals.items():
        sm.model.add(lit == (1 if rid == rule_id else 0))
    solver = make_solver(limits, parameters=sm.parameters)
    return solver.solve(sm.model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def added_rule(found: Draft, position: int) -> str:
    return found.rules[position].id


def with_conflict_rule(draft: Draft, kind: str, params: Params, position: int) -> Draft:
    """The infeasibility-detection variant: one rule (of a kind feasible instances carry
    too) inserted at ``position`` among the sampled rules, then renumbered."""
    rule = make_rule(kind, "hard", params)
    rules = insert_at(draft.rules, rule, position)
    return variant(draft, rules=rules, mechanisms=[*draft.mechanisms, "infeasibility_detection"])


@dataclass
class HardHooks:
    """The task-specific parts of the hard-tier hooks."""

    base: tuple[str, ...]
    build: Callable[[Draft], SolverModel]
    # plan -> rules that each break it (disruptions / recovery scenarios), best first
    disruptions: Callable[[Draft, dict[str, Any], random.Random], list[Rule]]
    # decoded plan -> the `existing` parameter of a changes term
    existing: Callable[[Draft, dict[str, Any]], Any]
    # draft -> (robustness rule, extra objective terms) or None
    robust: Callable[[Draft, random.Random], tuple[Rule, list[ObjectiveTerm]] | None]
    # data -> candidate uncertain inputs (ids unset), shuffled
    uncertain: Callable[[Draft, random.Random], list[Uncertain]]
    # (data dict, uncertain, value) -> data dict with that value
    with_value: Callable[[dict[str, Any], Uncertain, int], dict[str, Any]]
    worst_is_low: Callable[[Uncertain], bool]


def make_disruption(
    hooks: HardHooks, draft: Draft, plan: dict[str, Any], rng: random.Random, limits: SolverLimits, scenario: bool
) -> Draft | None:
    """A rule that breaks the given plan, and min-change replanning as the objective:
    changed assignments first, then the old objective. As a ``scenario`` (exception
    recovery) the rule is appended as S1 instead of joining the numbered rules."""
    changes = ObjectiveTerm(id="changes", kind="changes", params={"existing": hooks.existing(draft, plan)})
    for rule in hooks.disruptions(draft, plan, rng)[:4]:
        if scenario:
            trial = variant(
                draft, rules=[*draft.rules, rule.model_copy(update={"id": "S1"})], objective=[changes, *draft.objective]
            )
        else:
            trial = variant(
                draft,
                rules=insert_rule(draft.rules, rule, hooks.base, rng),
                objective=[changes, *draft.objective],
                mechanisms=[*draft.mechanisms, "min_change_replanning"],
            )
        if is_feasible(hooks.build(trial), limits):
            return trial
    return None


def make_robust(hooks: HardHooks, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    found = hooks.robust(draft, rng)
    if found is None:
        return None
    rule, terms = found
    trial = variant(
        draft,
        rules=insert_rule(draft.rules, rule, hooks.base, rng),
        objective=[*draft.objective, *terms],
        mechanisms=[*draft.mechanisms, "robustness_design"],
    )
    return trial if is_feasible(hooks.build(trial), limits) else None


class _Builds:
    """A :class:`pbsolve.family.Builds` over a task's model builder, for pbsolve.certify.optimum."""

    def __init__(self, build: Callable[[Draft], SolverModel]) -> None:
        self.build_model = build


UNCERTAIN_CANDIDATES = 12  # candidates probed at most per draft


def make_uncertain(hooks: HardHooks, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """State 2-3 inputs as ranges; the data keeps their worst case, so a plan valid for
    the data is valid for every value in every range.

    Candidates are probed one by one (each with the inputs already chosen at their worst):
    the worst case must stay feasible, and the input is sorted by whether its best case
    alone allows a better plan. At most two of each sort are kept, and at least one of
    each, so the set the answer must name is rarely empty or everything (the core still
    re-checks the final set and re-samples a degenerate one)."""
    builds = _Builds(hooks.build)
    data = dict(draft.data)
    chosen: list[Uncertain] = []
    matters = idle = 0
    for u in hooks.uncertain(draft, rng)[:UNCERTAIN_CANDIDATES]:
        if matters and idle and matters + idle == 3:
            break
        low = hooks.worst_is_low(u)
        worst_data = hooks.with_value(data, u, u.low if low else u.high)
        worst = optimum(builds, variant(draft, data=worst_data, mechanisms=[]), limits)
        if worst is None:
            continue
        best_data = hooks.with_value(worst_data, u, u.high if low else u.low)
        best = optimum(builds, variant(draft, data=best_data, mechanisms=[]), limits)
        better = best is not None and best < worst
        if (better and matters >= 2) or (not better and idle >= 2):
            continue
        matters, idle = matters + better, idle + (not better)
        data = worst_data
        chosen.append(u.model_copy(update={"id": f"U{len(chosen) + 1}"}))
    if not (matters and idle):
        return None
    data["uncertain"] = [u.model_dump(mode="json") for u in chosen]
    return variant(draft, data=data, mechanisms=[*draft.mechanisms, "local_incompleteness"])


def optimistic(hooks: HardHooks, draft: Draft, uid: str) -> Draft:
    """The same draft with one uncertain input at its best case."""
    u = next(Uncertain.model_validate(x) for x in draft.data.get("uncertain", []) if x["id"] == uid)
    best = u.high if hooks.worst_is_low(u) else u.low
    return variant(draft, data=hooks.with_value(draft.data, u, best))


def uncertain_ids(draft: Draft) -> list[str]:
    return [u["id"] for u in draft.data.get("uncertain", [])]


def spread(rng: random.Random, total: int, parts: int, low: int = 0) -> list[int]:
    """``total`` split into ``parts`` random non-negative parts, each at least ``low``."""
    rest = total - low * parts
    cuts = sorted(rng.randint(0, rest) for _ in range(parts - 1))
    return [low + b - a for a, b in zip([0, *cuts], [*cuts, rest])]


class TaskModulesFamily(Family):
    """A :class:`~pbsolve.family.Family` whose task types are one module each.

    Subclasses set ``spec`` and ``TASK_MODULES`` (task id -> module). A task module
    provides ``TASK`` (its TaskSpec), ``draft(spec, rng)``, ``build(draft)``, ``ENCODERS``
    (a :class:`~pbsolve.kit.KindRegistry`), ``make_infeasible(draft, rng, limits)``,
    ``HOOKS`` (its :class:`HardHooks`) and ``report(draft, plan)``; every hook of the
    contract is dispatched to the module of the draft's task."""

    TASK_MODULES: ClassVar[Mapping[str, ModuleType]]

    def _module(self, draft_or_spec: Draft | GenerationSpec) -> ModuleType:
        spec = draft_or_spec.spec if isinstance(draft_or_spec, Draft) else draft_or_spec
        return self.TASK_MODULES[spec.task]

    def draft(self, spec: GenerationSpec, rng: random.Random) -> Draft:
        found: Draft = self._module(spec).draft(spec, rng)
        return found

    def build_model(self, draft: Draft) -> SolverModel:
        sm: SolverModel = self._module(draft).build(draft)
        return sm

    def encoder_kinds(self, task: str) -> frozenset[str]:
        kinds: frozenset[str] = self.TASK_MODULES[task].ENCODERS.kinds()
        return kinds

    # -- hard-tier hooks (see pbsolve.mechanisms) ------------------------------------
    def make_infeasible(self, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
        found: Draft | None = self._module(draft).make_infeasible(draft, rng, limits)
        return found

    def make_disruption(
        self, draft: Draft, plan: dict[str, Any], rng: random.Random, limits: SolverLimits, scenario: bool = False
    ) -> Draft | None:
        return make_disruption(self._module(draft).HOOKS, draft, plan, rng, limits, scenario)

    def make_robust(self, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
        return make_robust(self._module(draft).HOOKS, draft, rng, limits)

    def make_uncertain(self, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
        return make_uncertain(self._module(draft).HOOKS, draft, rng, limits)

    def optimistic(self, draft: Draft, uid: str) -> Draft:
        return optimistic(self._module(draft).HOOKS, draft, uid)

    def uncertain_ids(self, draft: Draft) -> list[str]:
        return uncertain_ids(draft)

    def report(self, draft: Draft, plan: dict[str, Any]) -> dict[str, Any]:
        figures: dict[str, Any] = self._module(draft).report(draft, plan)
        return figures

    # -- published data: a task module that imports files provides SOURCE_FORMAT (a phrase),
    # read_source(source) -> Imported and draft_from(spec, data, rng) -> Draft
    def source_format(self, task: str) -> str | None:
        found: str | None = getattr(self.TASK_MODULES[task], "SOURCE_FORMAT", None)
        return found

    def import_source(self, task: str, source: SourceFile) -> Imported:
        if self.source_format(task) is None:
            return super().import_source(task, source)
        imported: Imported = self.TASK_MODULES[task].read_source(source)
        return imported

    def draft_imported(self, spec: GenerationSpec, data: dict[str, Any], rng: random.Random) -> Draft:
        if self.source_format(spec.task) is None:
            raise SourceError(f"task type {spec.task} reads no data files")
        found: Draft = self._module(spec).draft_from(spec, data, rng)
        return found
