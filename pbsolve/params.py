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

from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, partial
from types import UnionType
from typing import Annotated, Any, NamedTuple, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from pbsolve.schema import Instance, ObjectiveTerm, Rule, Tier


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
        for name, walk in _named_fields(type(self)):
            named: dict[str, list[str]] = {}
            walk(getattr(self, name), named, inner)
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


Walker = Callable[[Any, dict[str, list[str]], list["Params"]], None]
"""Collects the names in one value of a known type: (value, names by what, nested models
with further conditions) -> None."""


@cache
def _named_fields(cls: type[BaseModel]) -> tuple[tuple[str, Walker], ...]:
    """(field, its :func:`_walker`) of the fields of ``cls`` that name data, directly or in
    a nested model, computed once per class (outer and nested models alike)."""
    out = []
    for name, info in cls.model_fields.items():
        if _mentions_names(info.annotation, info.metadata):
            out.append((name, _walker(info.annotation, tuple(info.metadata))))
    return tuple(out)


def _walker(tp: Any, meta: Iterable[Any]) -> Walker:
    """How to collect the names in a value typed ``tp`` (metadata ``meta``), by what they
    name, nested models included (the nested :class:`Params` with their own override go
    to ``inner``: their further conditions are asked of them). Worked out once per field
    from its type: validating an instance walks every parameter value, and reading the
    type again for each value (``get_origin``, ``get_args``, the metadata) was most of
    that walk. The value is the validated model's, so of the shape its type says (or None
    where the type allows it). A type that names data in a form the walk cannot read (a
    ``Sequence``, a ``Mapping``, a union of a model and a list) is a ``TypeError`` here,
    when its class is first checked, never names silently left unchecked."""
    tag = next((m.what for m in meta if isinstance(m, Names)), None)
    if tag is not None:  # every string in the value names one ``tag``
        return partial(_tagged, tag)
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return _walker(args[0], args[1:])
    if origin in (Union, UnionType):
        arms = [a for a in args if a is not type(None)]
        if len(arms) == 1:
            return _walker(arms[0], ())
        odd = [a for a in arms if not isinstance(a, type) and _mentions_names(a)]  # a class naming data is a model
        if odd:
            raise TypeError(f"a union of models and {odd} names data in a form the parameter walk cannot read")
        return _model_only  # one of several models: the value's own class says
    if origin is dict:
        return partial(_walk_dict, _walker(args[0], ()), _walker(args[1], ()))
    if origin is tuple and args and args[-1] is not Ellipsis:
        return partial(_walk_fixed_tuple, tuple(_walker(a, ()) for a in args))
    if origin in (list, tuple, set, frozenset) and args:
        return partial(_walk_items, _walker(args[0], ()))
    if origin is not None and _mentions_names(tp):
        raise TypeError(f"{tp} names data in a form the parameter walk cannot read")
    return _model_only


def _tagged(tag: str, value: Any, out: dict[str, list[str]], inner: list[Params]) -> None:
    if value is None:
        return
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.setdefault(tag, []).append(v)
        elif isinstance(v, (list, tuple, set, frozenset, dict)):  # a dict: its keys
            stack.extend(reversed(list(v)))


def _model_only(value: Any, out: dict[str, list[str]], inner: list[Params]) -> None:
    if isinstance(value, BaseModel):
        _collect_model(value, out, inner)


def _walk_dict(keys: Walker, items: Walker, value: Any, out: dict[str, list[str]], inner: list[Params]) -> None:
    if value is not None:
        for key, item in value.items():
            keys(key, out, inner)
            items(item, out, inner)


def _walk_items(each: Walker, value: Any, out: dict[str, list[str]], inner: list[Params]) -> None:
    if value is not None:
        for item in value:
            each(item, out, inner)


def _walk_fixed_tuple(arms: tuple[Walker, ...], value: Any, out: dict[str, list[str]], inner: list[Params]) -> None:
    if value is not None:
        for each, item in zip(arms, value):
            each(item, out, inner)


def _collect_model(value: BaseModel, out: dict[str, list[str]], inner: list[Params]) -> None:
    """The names in a nested model: its fields that name data (by its own class)."""
    if isinstance(value, Params) and _overrides(type(value)):
        inner.append(value)
    for name, walk in _named_fields(type(value)):
        walk(getattr(value, name), out, inner)


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


Read = Callable[[ParamsTable, Item], Params]
"""How the functions below read an item's parameters: :func:`parse`, or an instance's
:class:`Parsed` (the same models, each parsed once)."""
PARSED_KEY = "pbsolve.params.parsed"


class Parsed:
    """The parsed parameters of one instance's own items, each parsed once: validating an
    instance reads every rule's parameters three or four times (their form, the names
    they use, what they add) and its first grade once more, and a parse is most of a
    small check. Called as :func:`parse` (``parsed(table, item)``), it keeps the result by
    the item's identity and the model it was parsed as, holding the item so its id cannot
    be reused while the entry lives; a failed parse is not kept. Kept in
    ``Instance.memo`` (:func:`parsed`), so it goes with the instance's other derived data
    when its contents change. Only an instance's own items may be read through it (the
    cache grows with the items it is given)."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept: dict[tuple[int, type[Params] | None], tuple[Item, Params]] = {}

    def __call__(self, table: ParamsTable, item: Item) -> Params:
        key = (id(item), table.get(item.kind))
        kept = self._kept.get(key)
        if kept is not None and kept[0] is item:
            return kept[1]
        found = parse(table, item)
        self._kept[key] = (item, found)
        return found


def parsed(instance: Instance) -> Parsed:
    """The instance's :class:`Parsed` (one per instance, in its memo)."""
    cache: Parsed = instance.memo(PARSED_KEY, Parsed)
    return cache


def problems(table: ParamsTable, items: Iterable[Item], read: Read = parse) -> list[str]:
    """Every item whose parameters do not fit its kind's model (unknown kinds are
    reported by the caller, which knows what the checker judges)."""
    found = []
    for item in items:
        if item.kind in table:
            try:
                read(table, item)
            except InvalidParams as exc:
                found.append(str(exc))
    return found


def data_problems(table: ParamsTable, items: Iterable[Item], data: Any, read: Read = parse) -> list[str]:
    """Every item whose (well-formed) parameters name what ``data`` does not have
    (:meth:`Params.data_problems`), each problem prefixed with the item and its kind."""
    found = []
    for item in items:
        if item.kind in table:
            found += [f"{item.id} ({item.kind}): {p}" for p in read(table, item).data_problems(data)]
    return found


class Addition(NamedTuple):
    """One name an item brings into its instance (:meth:`Params.adds`), and the parameters
    that bring it (a new incident's rule: what is known of the incident is there)."""

    what: str
    name: str
    by: Params


def additions(table: ParamsTable, items: Iterable[Item], read: Read = parse) -> list[Addition]:
    """Every name the (well-formed) ``items`` bring into their instance, in item order."""
    out: list[Addition] = []
    for item in items:
        model = table.get(item.kind)
        if model is not None and model.adds is not Params.adds:  # the others add nothing: not parsed
            p = read(table, item)
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


def seen_beside(data: Any, table: ParamsTable, items: Iterable[Item], read: Read = parse) -> Any:
    """``data`` as the items read beside the (well-formed) ``items`` see it: with the names
    those items add, and who adds them (:func:`with_added`)."""
    found = additions(table, items, read)
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

    The owned items are kept in ``kept`` (the instance's :class:`Parsed`, shared with its
    validation, which has parsed them all already; a fresh one without it); items the
    instance does not own (rules a test or a mechanism builds on the fly) are parsed each
    time, never kept, so the cache cannot grow with the answers graded."""

    def __init__(
        self, rules: ParamsTable, terms: ParamsTable, owned: Iterable[Item] = (), kept: Parsed | None = None
    ) -> None:
        self.rules, self.terms = rules, terms
        self._owned = {id(x): x for x in owned}
        self._kept = kept if kept is not None else Parsed()

    def _get(self, table: ParamsTable, item: Item) -> Params:
        if self._owned.get(id(item)) is not item:
            return parse(table, item)
        return self._kept(table, item)

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
