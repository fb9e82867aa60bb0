"""``Params.data_problems``: parameter fields say what they name (``Names`` metadata), at
any depth, and a rule naming what the instance's data lacks is reported once per name."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import Field

from pbsolve.family import all_tasks, checker
from pbsolve.params import Names, Params
from tests.instances import instance_at

Day = Annotated[str, Names("day")]
Room = Annotated[str, Names("room")]


class Data:
    """Two days, two rooms."""

    def names(self, what: str) -> set[str]:
        return {"day": {"Mon", "Tue"}, "room": {"A", "B"}}[what]


class Plain(Params):
    day: Day
    note: str = ""


class Nested(Params):
    slots: tuple[tuple[Day, Room], ...] = ()
    plan: dict[Day, list[Room]] = Field(default_factory=dict)
    maybe: Day | None = None
    tagged_list: Annotated[tuple[str, ...], Names("room")] = ()


def problems(p: Params) -> list[str]:
    return p.data_problems(Data())


def test_a_named_field_with_a_known_name_has_no_problem():
    assert problems(Plain(day="Mon", note="anything")) == []


def test_a_named_field_with_an_unknown_name_is_reported_and_an_unnamed_field_is_not():
    assert problems(Plain(day="Sun", note="Sun")) == ["unknown day 'Sun'"]


def test_each_position_of_a_tuple_names_its_own_kind():
    assert problems(Nested(slots=(("Mon", "A"), ("Sun", "A"), ("Tue", "Z")))) == [
        "unknown day 'Sun'",
        "unknown room 'Z'",
    ]


def test_dict_keys_and_values_name_their_own_kinds():
    assert problems(Nested(plan={"Wed": ["A", "Q"]})) == ["unknown day 'Wed'", "unknown room 'Q'"]


def test_an_optional_name_is_checked_when_given_and_skipped_when_none():
    assert (problems(Nested(maybe="Fri")), problems(Nested(maybe=None))) == (["unknown day 'Fri'"], [])


def test_metadata_on_a_whole_list_names_every_string_in_it():
    assert problems(Nested(tagged_list=("A", "C", "D"))) == ["unknown room 'C', 'D'"]


def test_a_model_without_named_fields_has_no_problems_whatever_the_data():
    class Free(Params):
        label: str

    assert Free(label="x").data_problems(object()) == []


@pytest.mark.parametrize("task", sorted(t.id for t in all_tasks()))
def test_the_generated_instances_of_every_task_name_only_what_their_data_has(task: str):
    """No false alarm: every rule and term of a certified instance (a plain one and one with a
    hard mechanism, recovery scenarios included) names known things, and every data model
    answers every kind of name its task's parameters use."""
    checked, seen = 0, 0
    for index in range(8):
        inst = instance_at(task, 7, index, "small", index % 2 == 1)
        if inst is None:
            continue
        seen += 1
        module = checker(inst.family)
        rules, terms = module.known_kinds(inst.task)
        data = module.read_data(inst)
        rec = inst.recovery
        for table, items in (
            (rules, [*inst.rules, *(rec.scenario if rec else [])]),
            (terms, [*inst.objective, *(rec.objective if rec else [])]),
        ):
            for item in items:
                params: Any = table[item.kind].model_validate(item.params)
                assert params.data_problems(data) == [], (inst.id, item.id, item.kind)
                checked += 1
        if seen == 2:
            break
    assert checked


@pytest.mark.parametrize("what", ["day", "room"])
def test_the_message_names_what_is_unknown(what: str):
    value = "Sun" if what == "day" else "Z"
    p = Plain(day=value) if what == "day" else Nested(tagged_list=(value,))
    assert problems(p) == [f"unknown {what} {value!r}"]
