"""Typed parameters of rules and objective terms: one pydantic model per kind.

A rule's parameters are read by three sides -- the solver encoder, the checker and the
prompt sentence -- so each kind declares them once, as a :class:`Params` model that all
three import from the family's checker package (checkers never import models, and
models and renderers may import checkers). The instance file keeps them as the plain
JSON object ``Rule.params`` (readable, and versioned with the instance format): a model
is dumped into it when a rule is drafted and validated out of it when an instance is
graded, so a malformed parameter is a clear error naming the rule, not a ``KeyError``
deep in a check.

Nothing here imports the solver.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from types import UnionType
from typing import Annotated, Any, NamedTuple, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from pbsolve.schema import ObjectiveTerm, Rule, Tier


class Params(BaseModel):
    """Base of one kind's parameters. Fields are declared in the order the instance file
    lists them (the dump keeps that order, so instance bytes do not depend on who built
    the rule); a field whose JSON key is a Python keyword uses an alias (``from_`` for
    ``"from"``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def dump(self) -> dict[str, Any]:
        """The JSON object stored as ``Rule.params`` / ``ObjectiveTerm.params``."""
        return self.model_dump(mode="json", by_alias=True)

    def data_problems(self, data: Any) -> list[str]:
        """What these parameters name that the instance's data (as its checker reads it)
        does not have: an unknown day, person or task. Fields say what they name by
        metadata (``Annotated[str, Names("day")]``, at any depth of lists, tuples, dict
        keys or values and nested models) and the data answers ``data.names("day")``.
        Checked once, when an instance is validated as ground truth, so a hand-written
        instance is refused with the reason instead of crashing the checker mid-grade, or
        being graded against a rule about nobody. A kind with a further condition (a
        checkpoint that needs a next day) adds it in an override.

        One problem per field and kind of name: the names of the models nested in a field
        (a list of review pairs, a current plan) are listed with the field's, so a name
        unknown to several of them is reported once; a nested :class:`Params` with its own
        override adds that override's further conditions after them. Each distinct
        problem once."""
        found: list[str] = []
        inner: list[Params] = []
        for name, tp, meta in _named_fields(type(self)):
            named: dict[str, list[str]] = {}
            _collect(tp, meta, getattr(self, name), named, inner)
            for what, values in named.items():
                found += unknown(what, values, data.names(what))
            if inner:  # after the field's names: the further conditions of its nested models
                found += [p for nested in inner for p in _further(nested, data)]
                inner.clear()
        return list(dict.fromkeys(found))

    def adds(self) -> Mapping[str, Iterable[str]]:
        """The names this rule brings into its instance, by what they name (a new incident's
        id): the items checked with it may name them (:func:`added`, :class:`WithAdded`).
        None by default."""
        return {}


@dataclass(frozen=True)
class Names:
    """Parameter field metadata: the strings of this field are names of the data's
    ``what`` (see :meth:`Params.data_problems`)."""

    what: str


def listed(names: Iterable[str]) -> str:
    """Names for a problem's message: each once, in their order, at most five (quoted, cut
    at 40 characters), and how many more."""
    found = list(dict.fromkeys(names))
    more = f" (+{len(found) - 5} more)" if len(found) > 5 else ""
    return f"{', '.join(repr(n[:40]) for n in found[:5])}{more}"


def problem(text: str, names: Iterable[str]) -> list[str]:
    """One problem, ``text`` followed by the :func:`listed` ``names``; none without names."""
    found = list(names)
    return [f"{text} {listed(found)}"] if found else []


def self_paired(pairs: Iterable[tuple[str, str]], things: str) -> list[str]:
    """One problem naming what a pair names twice (a rule about one thing and itself holds
    of nothing); ``things``: what the pairs hold, plural ("activities")."""
    same = [a for a, b in pairs if a == b]
    return [f"{listed(same)} is paired with itself: the rule needs two different {things}"] if same else []


def unknown(what: str, names: Iterable[str], known: Container[str]) -> list[str]:
    """One problem naming the ``names`` that are not ``known``."""
    return problem(f"unknown {what}", (n for n in names if n not in known))


def _overrides(cls: type[BaseModel]) -> bool:
    """Whether ``cls`` is a :class:`Params` with its own ``data_problems`` (further conditions)."""
    return issubclass(cls, Params) and cls.data_problems is not Params.data_problems


def _further(nested: Params, data: Any) -> list[str]:
    """The problems a nested model's own override adds to the generic walk: its names are
    already reported with the enclosing field's (the override repeats them through
    ``super()``, which is why they are taken out here)."""
    generic = set(Params.data_problems(nested, data))
    return [p for p in nested.data_problems(data) if p not in generic]


def _mentions_names(tp: Any, meta: Iterable[Any] = (), seen: frozenset[type] = frozenset()) -> bool:
    """Whether a value typed ``tp`` can hold a name: ``Names`` metadata at any depth, or a
    nested model with such a field or its own ``data_problems``. A model met again inside
    itself (``seen``) counts as naming: walking it is then harmless and never misses one."""
    if any(isinstance(m, Names) for m in meta):
        return True
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        if tp in seen:
            return True
        inside = seen | {tp}
        return _overrides(tp) or any(
            _mentions_names(f.annotation, f.metadata, inside) for f in tp.model_fields.values()
        )
    return any(_mentions_names(a, get_args(a)[1:] if get_origin(a) is Annotated else (), seen) for a in get_args(tp))


@cache
def _named_fields(cls: type[BaseModel]) -> tuple[tuple[str, Any, tuple[Any, ...]], ...]:
    """(field, annotation, metadata) of the fields of ``cls`` that name data, directly or
    in a nested model, computed once per class (outer and nested models alike)."""
    out = []
    for name, info in cls.model_fields.items():
        if _mentions_names(info.annotation, info.metadata):
            out.append((name, info.annotation, tuple(info.metadata)))
    return tuple(out)


def _collect(tp: Any, meta: Iterable[Any], value: Any, out: dict[str, list[str]], inner: list[Params]) -> None:
    """The names in ``value`` (typed ``tp`` with metadata ``meta``), by what they name,
    nested models included; the nested :class:`Params` with their own override go to
    ``inner`` (their further conditions are asked of them)."""
    if value is None:
        return
    tag = next((m.what for m in meta if isinstance(m, Names)), None)
    if tag is not None:  # every string in the value names one ``tag``
        stack = [value]
        while stack:
            v = stack.pop()
            if isinstance(v, str):
                out.setdefault(tag, []).append(v)
            elif isinstance(v, (list, tuple, set, frozenset, dict)):  # a dict: its keys
                stack.extend(reversed(list(v)))
        return
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        _collect(args[0], args[1:], value, out, inner)
    elif origin in (Union, UnionType):
        arms = [a for a in args if a is not type(None)]
        if len(arms) == 1:
            _collect(arms[0], (), value, out, inner)
        elif isinstance(value, BaseModel):  # one of several models: the value's own class says
            _collect_model(value, out, inner)
    elif origin is dict and isinstance(value, dict):
        for key, item in value.items():
            _collect(args[0], (), key, out, inner)
            _collect(args[1], (), item, out, inner)
    elif origin is tuple and isinstance(value, tuple) and args and args[-1] is not Ellipsis:
        for arg, item in zip(args, value):
            _collect(arg, (), item, out, inner)
    elif origin in (list, tuple, set, frozenset) and isinstance(value, (list, tuple, set, frozenset)) and args:
        for item in value:
            _collect(args[0], (), item, out, inner)
    elif isinstance(value, BaseModel):
        _collect_model(value, out, inner)


def _collect_model(value: BaseModel, out: dict[str, list[str]], inner: list[Params]) -> None:
    """:func:`_collect` of a nested model: its fields that name data (by its own class)."""
    if isinstance(value, Params) and _overrides(type(value)):
        inner.append(value)
    for name, tp, meta in _named_fields(type(value)):
        _collect(tp, meta, getattr(value, name), out, inner)


class NoParams(Params):
    """A kind that takes no parameters (structural rules such as ``room_no_overlap``)."""


P = TypeVar("P", bound=Params)
ParamsTable = Mapping[str, type[Params]]
"""Kind -> its parameter model: what a family declares for the rule kinds (and the
objective kinds) of a task type."""

Item = Rule | ObjectiveTerm


class InvalidParams(ValueError):
    """A rule's or objective term's parameters do not fit its kind's model."""


def _errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(x) for x in err["loc"]) or "(params)"
        parts.append(f"{where}: {err['msg']}")
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def parse(table: ParamsTable, item: Item) -> Params:
    """``item``'s parameters as its kind's model; :class:`InvalidParams` names the item,
    the kind and what is wrong (an unknown kind, a missing or mistyped field)."""
    model = table.get(item.kind)
    if model is None:
        raise InvalidParams(f"{item.id}: no parameter model for kind {item.kind!r}")
    try:
        return model.model_validate(item.params)
    except ValidationError as exc:
        raise InvalidParams(f"{item.id} ({item.kind}): {_errors(exc)}") from None


def problems(table: ParamsTable, items: Iterable[Item]) -> list[str]:
    """Every item whose parameters do not fit its kind's model (unknown kinds are
    reported by the caller, which knows what the checker judges)."""
    found = []
    for item in items:
        if item.kind in table:
            try:
                parse(table, item)
            except InvalidParams as exc:
                found.append(str(exc))
    return found


def data_problems(table: ParamsTable, items: Iterable[Item], data: Any) -> list[str]:
    """Every item whose (well-formed) parameters name what ``data`` does not have
    (:meth:`Params.data_problems`), each problem prefixed with the item and its kind."""
    found = []
    for item in items:
        if item.kind in table:
            found += [f"{item.id} ({item.kind}): {p}" for p in parse(table, item).data_problems(data)]
    return found


class Addition(NamedTuple):
    """One name an item brings into its instance (:meth:`Params.adds`), and the parameters
    that bring it (a new incident's rule: what is known of the incident is there)."""

    what: str
    name: str
    by: Params


def additions(table: ParamsTable, items: Iterable[Item]) -> list[Addition]:
    """Every name the (well-formed) ``items`` bring into their instance, in item order."""
    out: list[Addition] = []
    for item in items:
        model = table.get(item.kind)
        if model is not None and model.adds is not Params.adds:  # the others add nothing: not parsed
            p = parse(table, item)
            out += [Addition(what, name, p) for what, names in p.adds().items() for name in names]
    return out


def added(table: ParamsTable, items: Iterable[Item]) -> dict[str, list[str]]:
    """The names the (well-formed) ``items`` bring into their instance (:meth:`Params.adds`),
    by what they name, in item order."""
    return _by_what(additions(table, items))


def _by_what(found: Iterable[Addition]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for a in found:
        out.setdefault(a.what, []).append(a.name)
    return out


def added_twice(found: Iterable[Addition]) -> list[str]:
    """One problem per kind of name that some items bring in more than once (two new
    incidents with one id): the plan could not tell them apart."""
    seen: dict[str, set[str]] = {}
    twice: dict[str, list[str]] = {}
    for a in found:
        names = seen.setdefault(a.what, set())
        if a.name in names:
            twice.setdefault(a.what, []).append(a.name)
        names.add(a.name)
    return [p for what, names in twice.items() for p in problem(f"{what} added by more than one rule:", names)]


class _Either:
    """The names of the data or of the rules (a container of both)."""

    def __init__(self, known: Container[str], more: frozenset[str]) -> None:
        self.known, self.more = known, more

    def __contains__(self, name: object) -> bool:
        return name in self.more or name in self.known


class WithAdded:
    """The data as the items of one plan see it when some rules bring names into it (a new
    incident): ``names(what)`` answers the data's and the added ones, ``adder(what, name)``
    the parameters that add a name, every other attribute is the data's own. The checker
    reads the same rules beside the plan (a recovery plan is read under the instance's
    rules and its scenario), so a rule naming what another rule adds is graded, not
    crashed on, and must not be refused."""

    def __init__(self, data: Any, more: Mapping[str, frozenset[str]], by: Mapping[tuple[str, str], Params]) -> None:
        self.data, self.more, self.by = data, more, by

    def names(self, what: str) -> Container[str]:
        known: Container[str] = self.data.names(what)
        more = self.more.get(what)
        return _Either(known, more) if more else known

    def adder(self, what: str, name: str) -> Params | None:
        """The parameters of the (first) rule that adds ``name``; None if no rule adds it."""
        return self.by.get((what, name))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.data, name)


def with_added(data: Any, names: Mapping[str, Iterable[str]], by: Iterable[Addition] = ()) -> Any:
    """``data`` as the items beside rules adding ``names`` see it: :class:`WithAdded`, or
    the data itself when they add none (then nothing changes). ``by``: the additions the
    names come from, which :func:`adder` then answers."""
    more = {what: frozenset(found) for what, found in names.items()}
    adders: dict[tuple[str, str], Params] = {}
    for a in by:
        adders.setdefault((a.what, a.name), a.by)
    return WithAdded(data, more, adders) if any(more.values()) else data


def seen_beside(data: Any, table: ParamsTable, items: Iterable[Item]) -> Any:
    """``data`` as the items read beside the (well-formed) ``items`` see it: with the names
    those items add, and who adds them (:func:`with_added`)."""
    found = additions(table, items)
    return with_added(data, _by_what(found), found)


def adder(data: Any, what: str, name: str) -> Params | None:
    """The parameters of the rule that brings ``name`` into the data as an item sees it
    (:meth:`WithAdded.adder`); None for the data's own names and unknown ones."""
    return data.adder(what, name) if isinstance(data, WithAdded) else None


def make_rule(kind: str, tier: Tier, params: Params, rule_id: str = "") -> Rule:
    """A rule whose stored parameters are ``params`` dumped (ids are usually given when
    the rules are numbered)."""
    return Rule(id=rule_id, kind=kind, tier=tier, params=params.dump())


def make_term(term_id: str, kind: str, params: Params | None = None) -> ObjectiveTerm:
    """An objective term whose stored parameters are ``params`` dumped (none: ``{}``)."""
    return ObjectiveTerm(id=term_id, kind=kind, params=params.dump() if params is not None else {})


class TypedParams:
    """The parsed parameters of one instance's own rules and terms, parsed once: grading
    many answers to one instance reads them from here (kept in ``Instance.memo``).

    Entries are keyed by object identity and hold the object itself, so an id can never
    be reused by another object while its entry lives; items the instance does not own
    (rules a test or a mechanism builds on the fly) are parsed each time, never kept, so
    the cache cannot grow with the answers graded."""

    def __init__(self, rules: ParamsTable, terms: ParamsTable, owned: Iterable[Item] = ()) -> None:
        self.rules, self.terms = rules, terms
        self._owned = {id(x): x for x in owned}
        self._parsed: dict[int, Params] = {}

    def _get(self, table: ParamsTable, item: Item) -> Params:
        key = id(item)
        if self._owned.get(key) is not item:
            return parse(table, item)
        if key not in self._parsed:
            self._parsed[key] = parse(table, item)
        return self._parsed[key]

    def rule(self, item: Rule) -> Params:
        return self._get(self.rules, item)

    def term(self, item: ObjectiveTerm) -> Params:
        return self._get(self.terms, item)


def as_model(params: Params, model: type[P]) -> P:
    """``params`` as ``model`` (a check registered for one kind receives that kind's
    model; this narrows the type for the type checker and fails loudly if the table
    maps the kind to another model)."""
    if not isinstance(params, model):
        raise TypeError(f"expected {model.__name__} parameters, got {type(params).__name__}")
    return params
