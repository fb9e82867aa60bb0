"""``Params.data_problems`` enters nested models: the ``Names`` fields of a model held in a
field (another ``Params`` or a plain pydantic model, at any depth of lists, tuples, dict
values and ``Optional``) are checked like the field's own, their names listed with the
field's; a nested ``Params`` with an override adds its further conditions; each distinct
problem is reported once."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from pbsolve import params
from pbsolve.params import Names, Params

Day = Annotated[str, Names("day")]
Room = Annotated[str, Names("room")]


class Data:
    """Two days, in order, and two rooms."""

    days = ("Mon", "Tue")

    def names(self, what: str) -> tuple[str, ...]:
        return {"day": self.days, "room": ("A", "B")}[what]


class Visit(Params):
    day: Day
    room: Room
    note: str = ""


class Tour(Params):
    visits: list[Visit]


class Booking(BaseModel):
    """A plain pydantic model (no ``Params``): its ``Names`` are walked all the same."""

    room: Room
    guests: int = 1


class Bookings(Params):
    by_day: dict[Day, Booking] = Field(default_factory=dict)
    backup: Visit | None = None


class Span(Params):
    """A nested kind with a further condition of its own."""

    first: Day
    last: Day

    def data_problems(self, data: Any) -> list[str]:
        found = super().data_problems(data)
        if not found and data.days.index(self.first) > data.days.index(self.last):
            found.append(f"the span {self.first}..{self.last} has no day")
        return found


class Spans(Params):
    spans: list[Span]
    room: Room = "A"


class Week(Params):
    """Models nested two deep, in a tuple."""

    tours: tuple[Tour, ...]


class Node(BaseModel):
    """A model that holds itself."""

    day: Day
    children: list[Node] = []


class Tree(Params):
    root: Node


class Pair(Params):
    a: Day
    b: Day


class Unnamed(BaseModel):
    label: str


class Holder(Params):
    plain: Unnamed
    day: Day


def problems(p: Params) -> list[str]:
    return p.data_problems(Data())


def test_a_list_of_nested_params_with_known_names_has_no_problem():
    assert problems(Tour(visits=[Visit(day="Mon", room="A"), Visit(day="Tue", room="B")])) == []


def test_the_unknown_names_of_a_list_of_nested_params_are_one_problem_per_kind_of_name():
    tour = Tour(visits=[Visit(day="Sun", room="A"), Visit(day="Mon", room="Z"), Visit(day="Sat", room="Q")])
    assert problems(tour) == ["unknown day 'Sun', 'Sat'", "unknown room 'Z', 'Q'"]


def test_a_name_unknown_to_several_nested_models_is_listed_once():
    tour = Tour(visits=[Visit(day="Sun", room="A"), Visit(day="Sun", room="B")])
    assert problems(tour) == ["unknown day 'Sun'"]


def test_a_dict_of_plain_nested_models_checks_its_keys_and_the_models_names():
    assert problems(Bookings(by_day={"Mon": Booking(room="A"), "Wed": Booking(room="Q")})) == [
        "unknown day 'Wed'",
        "unknown room 'Q'",
    ]


def test_an_optional_nested_model_is_checked_when_given_and_skipped_when_none():
    given = Bookings(backup=Visit(day="Fri", room="A"))
    assert (problems(given), problems(Bookings(backup=None))) == (["unknown day 'Fri'"], [])


def test_models_nested_two_deep_in_a_tuple_are_checked():
    week = Week(tours=(Tour(visits=[Visit(day="Mon", room="A")]), Tour(visits=[Visit(day="Mon", room="Z")])))
    assert problems(week) == ["unknown room 'Z'"]


def test_a_model_holding_itself_is_walked_to_every_depth():
    tree = Tree(root=Node(day="Mon", children=[Node(day="Tue", children=[Node(day="Sun")])]))
    assert problems(tree) == ["unknown day 'Sun'"]


def test_a_nested_model_with_its_own_override_adds_its_further_condition():
    assert problems(Spans(spans=[Span(first="Mon", last="Tue"), Span(first="Tue", last="Mon")])) == [
        "the span Tue..Mon has no day"
    ]


def test_a_nested_override_does_not_repeat_the_unknown_names_in_its_own_words():
    spans = Spans(spans=[Span(first="Sun", last="Mon"), Span(first="Tue", last="Sat")])
    assert problems(spans) == ["unknown day 'Sun', 'Sat'"]


def test_the_further_conditions_follow_the_unknown_names_of_their_field():
    spans = Spans(spans=[Span(first="Tue", last="Mon"), Span(first="Sun", last="Mon")], room="Z")
    assert problems(spans) == ["unknown day 'Sun'", "the span Tue..Mon has no day", "unknown room 'Z'"]


def test_a_problem_found_twice_is_reported_once():
    twice = Spans(spans=[Span(first="Tue", last="Mon"), Span(first="Tue", last="Mon")])
    assert (problems(twice), problems(Pair(a="Sun", b="Sun"))) == (
        ["the span Tue..Mon has no day"],
        ["unknown day 'Sun'"],
    )


def test_a_field_holding_a_model_without_names_is_not_walked():
    assert [name for name, _ in params._named_fields(Holder)] == ["day"]


# -- every place a nested model with a further condition can sit --------------------------
class Wrap(BaseModel):
    """A plain model holding a kind with a further condition."""

    span: Span


class Anywhere(Params):
    """A nested ``Span`` in each kind of field the walker enters."""

    annotated: Annotated[list[Span], Field(min_length=1)]
    optional: Span | None = None
    either: Span | Pair | None = None
    by_day: dict[Day, Span] = Field(default_factory=dict)
    fixed: tuple[Span, Day] | None = None
    single: tuple[Day] | None = None
    wrapped: Wrap | None = None
    grouped: dict[Day, Annotated[list[Span], Field(min_length=1)]] = Field(default_factory=dict)


BACKWARDS = Span(first="Tue", last="Mon")
FINE = Span(first="Mon", last="Tue")
NO_DAY = "the span Tue..Mon has no day"


@pytest.mark.parametrize(
    "where",
    [
        {"annotated": [BACKWARDS]},
        {"optional": BACKWARDS},
        {"either": BACKWARDS},
        {"by_day": {"Mon": BACKWARDS}},
        {"fixed": (BACKWARDS, "Mon")},
        {"wrapped": Wrap(span=BACKWARDS)},
        {"grouped": {"Mon": [FINE, BACKWARDS]}},
    ],
    ids=[
        "annotated-list",
        "optional",
        "union-of-models",
        "dict-value",
        "fixed-tuple",
        "plain-model",
        "annotated-in-dict",
    ],
)
def test_a_nested_further_condition_is_found_wherever_the_model_sits(where: dict[str, Any]) -> None:
    fields = {"annotated": [FINE], **where}
    assert problems(Anywhere(**fields)) == [NO_DAY]


@pytest.mark.parametrize(
    "where",
    [
        {"annotated": [Span(first="Sun", last="Tue")]},
        {"either": Pair(a="Sun", b="Mon")},
        {"by_day": {"Sun": FINE}},
        {"fixed": (FINE, "Sun")},
        {"single": ("Sun",)},
        {"wrapped": Wrap(span=Span(first="Mon", last="Sun"))},
        {"grouped": {"Mon": [Span(first="Sun", last="Tue")]}},
    ],
    ids=[
        "annotated-list",
        "union-of-models",
        "dict-key",
        "fixed-tuple",
        "one-element-tuple",
        "plain-model",
        "annotated-in-dict",
    ],
)
def test_a_nested_unknown_name_is_found_wherever_it_sits(where: dict[str, Any]) -> None:
    fields = {"annotated": [FINE], **where}
    assert problems(Anywhere(**fields)) == ["unknown day 'Sun'"]


class Chain(BaseModel):
    """A model holding itself before its named field (the walk must not loop on it)."""

    below: list[Chain] = []
    day: Day


class Chained(Params):
    top: Chain


def test_a_model_holding_itself_before_its_names_is_walked_without_looping() -> None:
    chain = Chain(below=[Chain(below=[Chain(day="Sun")], day="Tue")], day="Mon")
    assert problems(Chained(top=chain)) == ["unknown day 'Sun'"]


# -- the wording every family shares --------------------------------------------------------
def test_five_names_are_listed_without_a_count() -> None:
    assert params.listed(["a", "b", "c", "d", "e"]) == "'a', 'b', 'c', 'd', 'e'"


def test_a_sixth_name_is_counted_not_listed() -> None:
    assert params.listed(["a", "b", "c", "d", "e", "f"]) == "'a', 'b', 'c', 'd', 'e' (+1 more)"


def test_a_long_name_is_cut_at_forty_characters() -> None:
    assert params.listed(["x" * 45]) == repr("x" * 40)


def test_names_are_added_only_by_kinds_the_table_knows() -> None:
    class Adds(Params):
        day: Day

        def adds(self) -> dict[str, list[str]]:
            return {"day": [self.day]}

    table = {"adds": Adds}
    rules = [
        params.make_rule("unheard_of", "basic", Pair(a="Mon", b="Tue"), "R1"),
        params.make_rule("adds", "basic", Adds(day="Fri"), "R2"),
    ]
    assert params.added(table, rules) == {"day": ["Fri"]}


# -- the shapes the walk reads ------------------------------------------------------------
def test_a_field_naming_data_in_a_shape_the_walk_cannot_read_is_refused_not_skipped():
    from collections.abc import Sequence

    class Listed(Params):
        days: Sequence[Day]

    with pytest.raises(TypeError, match="cannot read"):
        Listed(days=["Sun"]).data_problems(Data())


def test_a_union_of_a_model_and_names_outside_a_model_is_refused_not_skipped():
    class Either(Params):
        where: Visit | list[Day]

    with pytest.raises(TypeError, match="cannot read"):
        Either(where=["Sun"]).data_problems(Data())


def test_an_optional_container_left_empty_names_nothing():
    class Maybe(Params):
        days: list[Day] | None = None
        by_day: dict[Day, Booking] | None = None
        pair: tuple[Day, Room] | None = None

    assert Maybe().data_problems(Data()) == []
    assert Maybe(days=["Sun"], by_day={"Fri": Booking(room="Z")}, pair=("Sat", "Y")).data_problems(Data()) == [
        "unknown day 'Sun'",
        "unknown day 'Fri'",
        "unknown room 'Z'",
        "unknown day 'Sat'",
        "unknown room 'Y'",
    ]


def test_every_parameter_model_of_every_family_is_in_a_shape_the_walk_reads():
    import importlib
    import pkgutil

    import pbsolve.checkers as checkers

    for found in pkgutil.walk_packages(checkers.__path__, "pbsolve.checkers."):
        importlib.import_module(found.name)

    def subclasses(cls: type) -> list[type]:
        return [c for sub in cls.__subclasses__() for c in (sub, *subclasses(sub))]

    models = {c for c in subclasses(Params) if c.__module__.startswith(("pbsolve.checkers", "checkers"))}
    assert len(models) > 100
    for model in models:
        params._named_fields(model)  # raises TypeError on a shape it cannot read
