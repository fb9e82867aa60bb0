"""What one hard-tier or reporting mechanism declares, in one object.

A mechanism is one module of :mod:`pbsolve.mechanisms` exposing ``MECHANISM``, an instance
of a :class:`Mechanism` subclass. It declares its checklist items, the certificate fields
it fills, the part of the answer schema it adds, the section of the prompt that asks for
it, the part of the reference answer it adds, and its verdicts. The core (checklist,
answer schema, prompt, reference, grading) iterates over the mechanisms; a family only
computes what is its own (its plan schema, its verification figures and sentence, its
objective lines) through the small contexts below.

Nothing here imports the solver: grading-only processes load this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pbsolve.schema import Certificate, Instance, ObjectiveTerm, Recovery, Rule, Tier

if TYPE_CHECKING:  # the generic grading flow imports this module, not the other way round
    import random

    from pbsolve.certify import SolverLimits
    from pbsolve.checking import TaskChecker
    from pbsolve.family import Draft, Family
    from pbsolve.mechanisms.certification import Certified

Verdict = tuple[bool, str]


@dataclass(frozen=True)
class Item:
    """One checklist item a mechanism adds: its rule key, tier and sentence.

    ``validity``: the `feasible` reward mode keeps it (it speaks of the plan's validity,
    not its quality). ``needs_plan``: judged only once the answer's plan has been read
    (items of infeasible instances are judged on the declaration alone)."""

    rule: str
    tier: Tier
    text: str
    validity: bool = False
    needs_plan: bool = True


@dataclass
class SchemaContext:
    """What a mechanism's answer-schema fragment is built from."""

    checker: TaskChecker
    data: Any  # the task's typed data
    objective: list[ObjectiveTerm]
    rules: list[Rule]
    recovery: Recovery | None
    plan_schema: dict[str, Any]  # the family's schema of a plan (under ``checker.plan_key``)


@dataclass
class PromptContext:
    """The family-rendered parts a mechanism's prompt section frames.

    ``objective_lines(terms, baseline)``: the family's objective list, with its word for
    the current plan replaced by ``baseline``; ``verification()``: the family's request
    for its verification figures (the sentence after "**Verification:** ")."""

    recovery: Recovery | None
    objective_lines: Callable[[list[ObjectiveTerm], str], list[str]]
    verification: Callable[[], str]


@dataclass
class ReferenceContext:
    """What a mechanism's part of the certified reference answer is built from.

    ``report()`` is the family's verification figures of the certified plan (computed
    only when a mechanism asks for them)."""

    certificate: Certificate
    recovery: Recovery | None
    recovery_plan: dict[str, Any] | None
    report: Callable[[], Any]


@dataclass
class CheckContext:
    """One answer being graded: the family's reading of it, for the mechanisms' verdicts.

    ``plan`` is the family's decoded main plan (None when the answer gives none or it did
    not read), ``verdicts`` its per-rule verdicts and ``values`` its objective figures."""

    instance: Instance
    checker: TaskChecker
    data: Any
    lookups: Any
    answer: dict[str, Any]
    feasible: bool
    plan: Any
    why: str
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    values: dict[str, int] = field(default_factory=dict)


class Mechanism:
    """One mechanism; subclasses set the class attributes and override the parts they have.

    Three orders are fixed by attributes because the instance bytes depend on them:
    ``certify_order`` (hard kinds: :func:`~pbsolve.mechanisms.certification.certify_spec`
    runs their :meth:`prepare` steps in this order and their :meth:`after` steps in the
    reverse order, nested: the first to prepare the draft is the last to finish it),
    ``position`` (its checklist items, answer-schema keys and reference keys, after the
    core's own) and ``prompt_position`` (its prompt section, after the objective).

    The solver-side steps (:meth:`prepare`, :meth:`after`, :meth:`certify_alone`) import
    the solver lazily, through :mod:`pbsolve.mechanisms.certification`: grading-only
    processes load this package without OR-Tools."""

    id: ClassVar[str]
    kind: ClassVar[Literal["hard", "reporting"]]
    tier: ClassVar[Tier]
    certify_order: ClassVar[int]
    position: ClassVar[int]
    prompt_position: ClassVar[int]
    summary: ClassVar[str]  # one sentence: what the question asks beyond a plain instance
    items: ClassVar[tuple[Item, ...]] = ()
    certificate_fields: ClassVar[tuple[str, ...]] = ()  # Certificate fields it fills
    answer_keys: ClassVar[tuple[str, ...]] = ()  # top-level answer keys its schema fragment adds
    infeasible: ClassVar[bool] = False  # it makes the instance infeasible (its items are all it has)

    def present(self, mechanisms: list[str], recovery: Recovery | None) -> bool:
        """Whether an instance with these mechanisms (and recovery section) carries it."""
        return self.id in mechanisms

    def checklist(self, certified_objective: dict[str, int] | None) -> list[Item]:
        """Its checklist items (texts may cite certified figures)."""
        return list(self.items)

    def schema(self, ctx: SchemaContext) -> dict[str, Any]:
        """Its properties of the plan form of the answer schema (key -> JSON Schema)."""
        return {}

    def answer_form(self, ctx: SchemaContext) -> dict[str, Any] | None:
        """An answer form of its own beside the plan form (None: it adds none)."""
        return None

    def prompt(self, ctx: PromptContext) -> list[str]:
        """Its prompt section, as lines."""
        return []

    def reference(self, ctx: ReferenceContext) -> dict[str, Any]:
        """Its keys of the certified reference answer of a feasible instance."""
        return {}

    def verdicts(self, ctx: CheckContext) -> dict[str, Verdict]:
        """Its verdict per item rule for one answer."""
        return {}

    # -- the solver side (generation only) ------------------------------------------------
    def prepare(self, fam: Family, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft:
        """The draft turned into its question before the main certification (the
        family's hook for it; Rejected when the family has no variant)."""
        return draft

    def after(self, fam: Family, certified: Certified, rng: random.Random, limits: SolverLimits) -> None:
        """What it certifies on top of the certified draft (certificate fields, a second
        plan); Rejected when that would be degenerate."""

    def certify_alone(self, fam: Family, draft: Draft, rng: random.Random, limits: SolverLimits) -> Certified:
        """The whole certification of an instance with no plan: an ``infeasible``
        mechanism replaces the main certification and every other mechanism's steps."""
        raise NotImplementedError(f"{self.id} does not make instances infeasible")

    def item_rules(self) -> frozenset[str]:
        """The rule keys of every item it can add (whatever the instance)."""
        return frozenset(it.rule for it in self.items)

    def items_valid(self, instance: Instance) -> bool:
        """Whether its items can stand on this instance (the grader refuses them otherwise)."""
        return True
