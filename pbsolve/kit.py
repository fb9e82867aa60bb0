"""The family kit: machinery every family's model side shares.

One definition of what used to be copied per family: the constraint-kind registry
(encoders and witness rule builders), enforced constraint posting, rule insertion at a
random position, the witness-based rule loop of ``draft()``, ``Uncertain`` ranges and the
named, validated size settings of each task (:class:`Settings`, :class:`SizeTable`).

This module never imports OR-Tools at run time (``Uncertain`` is read by the checkers,
and grading-only processes must not load the solver); the posting helper receives the
model it posts into.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import random
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve import params
from pbsolve.family import NoDraft
from pbsolve.lru import LockedLRU
from pbsolve.params import NoParams, Params, ParamsTable
from pbsolve.schema import GenerationSpec, Rule, Size, Tier

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

F = TypeVar("F", bound=Callable[..., Any])

# Pool entries that ask for a report section, not a rule (see pbsolve.mechanisms).
REPORTING = ("conflict_validation",)


class Uncertain(BaseModel):
    """An input known only as a range. The data holds its worst case; plans must hold for
    every value in the range. Each family documents its kinds (an event's 'duration',
    a room's 'seats', a depot's 'stock', ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="U1, U2, ...")
    kind: str = Field(description="what the range is (the family's input kinds)")
    target: str = Field(description="the entity the range belongs to")
    low: int
    high: int


class IntRange(BaseModel):
    """A whole number drawn uniformly from ``lo`` to ``hi`` (both included)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lo: NonNegativeInt
    hi: NonNegativeInt

    @model_validator(mode="after")
    def _ordered(self) -> IntRange:
        if self.lo > self.hi:
            raise ValueError(f"empty range: lo {self.lo} > hi {self.hi}")
        return self

    def draw(self, rng: random.Random) -> int:
        """One draw (``rng.randint(lo, hi)``: the same random stream as the bounds passed by hand)."""
        return rng.randint(self.lo, self.hi)

    def __str__(self) -> str:
        return f"{self.lo}-{self.hi}" if self.lo != self.hi else str(self.lo)


class PositiveRange(IntRange):
    """A range never below one (counts, prices)."""

    lo: PositiveInt
    hi: PositiveInt


class Settings(BaseModel):
    """Base of a task type's size and difficulty settings: each task subclasses it with
    named fields (counts, :class:`IntRange` ranges, switches), validated on creation, so a
    sampler reads ``settings.rooms``, never the third item of a tuple."""

    model_config = ConfigDict(extra="forbid", frozen=True)


S = TypeVar("S", bound=Settings)


class SizeTable(BaseModel, Generic[S]):
    """One task type's settings for every size (:data:`pbsolve.schema.Size`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tiny: S
    small: S
    default: S
    large: S

    def of(self, size: Size) -> S:
        """The settings of one size (a size the schema does not know is an error)."""
        if size not in SIZE_NAMES:
            raise KeyError(f"unknown size {size!r}; known: {', '.join(SIZE_NAMES)}")
        value: S = getattr(self, size)
        return value

    def rows(self) -> list[tuple[str, S]]:
        """(size, settings) in size order, for listings."""
        return [(size, self.of(size)) for size in SIZE_NAMES]


SIZE_NAMES: tuple[Size, ...] = get_args(Size)
if set(SIZE_NAMES) != set(SizeTable.model_fields):  # the table's fields are the schema's sizes
    raise TypeError(f"SizeTable fields {sorted(SizeTable.model_fields)} differ from the sizes {SIZE_NAMES}")


class KindRegistry(Mapping[str, F]):
    """A table from constraint kind to its function (an encoder, a rule builder), filled
    with the :meth:`register` decorator. Registering a kind twice is an error, so two
    modules can never silently replace each other's encoding."""

    def __init__(self, what: str, entries: Mapping[str, F] | None = None) -> None:
        self.what = what
        self._table: dict[str, F] = {}
        for kind, fn in (entries or {}).items():
            self.add(kind, fn)

    def register(self, kind: str) -> Callable[[F], F]:
        def add(fn: F) -> F:
            self.add(kind, fn)
            return fn

        return add

    def add(self, kind: str, fn: F) -> None:
        if kind in self._table:
            raise ValueError(f"{self.what} for kind {kind!r} registered twice")
        self._table[kind] = fn

    def __getitem__(self, kind: str) -> F:
        try:
            return self._table[kind]
        except KeyError:
            raise KeyError(f"no {self.what} for kind {kind!r}; registered: {', '.join(self._table)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def kinds(self) -> frozenset[str]:
        return frozenset(self._table)


def post(m: cp_model.CpModel, ct: Any, lit: cp_model.IntVar) -> None:
    """Add ``ct`` to ``m`` enforced by ``lit``; constant constraints (empty sums) are folded:
    a false one makes the literal false, a true one is dropped."""
    if isinstance(ct, bool):
        if not ct:
            m.add_implication(lit, ~lit)
        return
    m.add(ct).only_enforce_if(lit)


def encode_rules(
    m: cp_model.CpModel,
    rules: Sequence[Rule],
    encoders: Mapping[str, Callable[..., None]],
    tm: Any,
    table: ParamsTable,
) -> dict[str, cp_model.IntVar]:
    """Post every numbered rule behind its own enforcement literal ``rule[<id>]``, in list
    order, through the encoder of its kind (``encoder(tm, params, lit)``, ``params`` the
    rule's parsed :class:`~pbsolve.params.Params` model from ``table``), so the certifier
    can switch rules off one by one. Returns the literals by rule id."""
    literals: dict[str, cp_model.IntVar] = {}
    for rule in rules:
        lit = m.new_bool_var(f"rule[{rule.id}]")
        encoders[rule.kind](tm, params.parse(table, rule), lit)
        literals[rule.id] = lit
    return literals


# -- rules -----------------------------------------------------------------------------
def renumber(rules: Sequence[Rule]) -> list[Rule]:
    """The rules with ids R1..Rn in list order."""
    return [r.model_copy(update={"id": f"R{i}"}) for i, r in enumerate(rules, 1)]


def insert_position(rules: Sequence[Rule], base: Container[str], rng: random.Random) -> int:
    """A random place among the sampled rules (after the base rules, which come first)."""
    n_base = sum(1 for r in rules if r.kind in base)
    return rng.randint(n_base, len(rules))


def insert_at(rules: Sequence[Rule], rule: Rule, position: int) -> list[Rule]:
    """``rule`` inserted at ``position``, every rule renumbered R1..Rn."""
    return renumber([*rules[:position], rule, *rules[position:]])


def insert_rule(rules: Sequence[Rule], rule: Rule, base: Container[str], rng: random.Random) -> list[Rule]:
    """Insert a rule among the sampled ones at a random place and renumber R1..Rn, so
    neither its number nor its position marks it as the one a mechanism added."""
    return insert_at(rules, rule, insert_position(rules, base, rng))


def sampled_kinds(spec: GenerationSpec, base_rules: Container[str], forced: Iterable[str] = ()) -> list[str]:
    """The spec's sampled rule kinds in tier order, without base rules and report kinds,
    then the ``forced`` kinds (a subtask's own structure) the sampler did not draw."""
    sampled = [c for c in spec.basic + spec.medium + spec.stateful if c not in base_rules and c not in REPORTING]
    return sampled + [k for k in dict.fromkeys(forced) if k not in sampled]


Builder = Callable[[Any, Any, random.Random], "Params | None"]


def witness_rules(
    base: Sequence[tuple[str, Tier, Params]],
    sampled: Sequence[str],
    tiers: Mapping[str, Tier],
    builders: Mapping[str, Builder],
    data: Any,
    witness: Any,
    rng: random.Random,
    structural: Container[str] = (),
) -> list[Rule]:
    """The numbered rules of a witness-based draft: the base rules (kind, tier, params),
    then one rule per sampled kind whose parameters its builder draws so that the planted
    ``witness`` satisfies them; ``structural`` kinds take no parameters. A builder that
    finds no parameters the witness satisfies raises :class:`NoDraft` (re-sampled)."""
    rules = [params.make_rule(kind, tier, p, f"R{i}") for i, (kind, tier, p) in enumerate(base, 1)]
    for cid in sampled:
        built = NoParams() if cid in structural else builders[cid](data, witness, rng)
        if built is None:
            raise NoDraft(cid)
        rules.append(params.make_rule(cid, tiers[cid], built, f"R{len(rules) + 1}"))
    return rules


def fitting_rooms(demands: Iterable[Any], rooms: Mapping[str, Any]) -> tuple[frozenset[str], ...]:
    """For each demand (an event or lesson with ``size`` and ``needs``), the ids of the
    rooms (id -> room with ``seats`` and ``features``) that seat it and have every feature
    it needs: the room-fit table both families' checks read."""
    return tuple(
        frozenset(rid for rid, r in rooms.items() if r.seats >= x.size and all(f in r.features for f in x.needs))
        for x in demands
    )


M = TypeVar("M", bound=BaseModel)
PARSED_KEPT = 64  # distinct data contents kept (one instance's hooks and builds reuse a few)
_PARSED: LockedLRU[tuple[type[BaseModel], str], BaseModel] = LockedLRU(PARSED_KEPT)


def parsed(data_type: type[M], data: Any) -> M:
    """``data`` validated as ``data_type``, once per distinct content: one instance's data
    is read by every model build, hard-tier probe and prompt sentence, and validation can
    cost more than a model (a road network's connectivity, routes' roads). Keyed by the
    data's JSON text, so an entry never answers for other content, whatever was edited
    in place; only frozen models are shared (anything else is validated each time)."""
    if isinstance(data, data_type):
        return data
    if not data_type.model_config.get("frozen"):
        return data_type.model_validate(data)
    try:
        key = (data_type, json.dumps(data, separators=(",", ":"), ensure_ascii=False))
    except (TypeError, ValueError):  # not plain JSON data: nothing to key it by
        return data_type.model_validate(data)
    found = _PARSED.get(key)
    if found is not None:
        return found  # type: ignore[return-value]
    made = data_type.model_validate(data)  # a validation error leaves no entry
    _PARSED.put(key, made)
    return made


def is_milp_backend(module_name: str) -> bool:
    """A family's second back-end (``milp``, or a task type's ``<module>_milp``) needs the
    optional ``milp`` extra (PuLP): the task listing never imports it, so a family loads
    without that extra installed."""
    return module_name == "milp" or module_name.endswith("_milp")


def task_modules(package: str, attr: str) -> list[ModuleType]:
    """Every submodule of the family package ``package`` that defines ``attr`` (a task
    type's ``TASK``, ``TEXT`` ...), in module-name order: a family that lists its task
    types this way gains one by adding its files, and its order never depends on the
    file system. MILP back-ends are left out (:func:`is_milp_backend`)."""
    pkg = importlib.import_module(package)
    names = sorted(
        m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_") and not is_milp_backend(m.name)
    )
    found = [importlib.import_module(f"{package}.{name}") for name in names]
    return [m for m in found if hasattr(m, attr)]
