"""The answer-format section is generated from the answer schema: every field a row holds
is explained where the schema explains it, and a list inside a row is shown by example."""

from __future__ import annotations

from typing import Any

from pbsolve.answer_format import render_answer_format

LEG = {
    "type": "object",
    "properties": {
        "mode": {"enum": ["walk", "ride"]},
        "to": {"enum": ["A", "B"], "description": "the stop the leg ends at"},
        "departs": {"type": "string", "description": "ride: the departure time, HH:MM"},
    },
}
TRIP = {
    "type": "object",
    "properties": {
        "commuter": {"enum": ["Hana", "Chen"]},
        "legs": {"type": "array", "items": LEG, "description": "in travel order"},
        "helpers": {"type": "array", "items": {"enum": ["X1", "X2"]}, "description": "who comes along"},
        "crew": {"type": "array", "items": {"enum": ["C1", "C2"]}},
        "battery": {"type": "integer", "description": "battery MW: positive discharges, negative charges"},
    },
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "feasible": {"const": True},
        "trips": {"type": "array", "items": TRIP, "description": "every commuter exactly once"},
        "objective": {"type": "object", "properties": {"cost": {"type": "integer"}}},
    },
}
TEXT = render_answer_format(SCHEMA)


def test_the_answers_own_rows_are_shown_one_per_key() -> None:
    assert '{"commuter": "Hana", "legs": [' in TEXT and '{"commuter": "Chen", "legs": [' in TEXT


def test_a_list_inside_a_row_is_shown_by_one_example_row_not_one_per_value() -> None:
    assert '{"mode": "<mode>", "to": "<to>", "departs": "<departs>"}, "..."]' in TEXT
    assert '"mode": "walk"' not in TEXT


def test_a_row_field_with_a_description_is_explained() -> None:
    assert "- `battery`: battery MW: positive discharges, negative charges." in TEXT
    assert "- `legs`: in travel order." in TEXT


def test_the_fields_of_rows_nested_in_a_row_are_explained() -> None:
    assert '- `mode`: one of "walk", "ride".' in TEXT
    assert '- `to`: one of "A", "B" (the stop the leg ends at).' in TEXT
    assert "- `departs`: ride: the departure time, HH:MM." in TEXT


def test_a_list_of_values_names_the_values_it_may_hold() -> None:
    assert '- `helpers`: a list, who comes along; each one of "X1", "X2".' in TEXT
    assert '- `crew`: a list, each one of "C1", "C2".' in TEXT


def test_a_single_figure_is_named_in_the_singular() -> None:
    assert "- `objective` holds the integer `cost`, computed from your own plan." in TEXT
