"""Behaviours the mutation campaign over last session's faster grading code found untested
(pbsolve/parsing.py, pbsolve/checking.py, pbsolve/checker_kit.py and the project and
scheduling checkers): one behaviour per test, each a grade or a parse an answer gets."""

from __future__ import annotations

import json

from pbsolve.checker_kit import lookup, start_rows
from pbsolve.parsing import MAX_BARE_DEPTH, Parsed, parse_response


def _nested(depth: int) -> dict:
    """An object ``depth`` objects deep."""
    value: dict = {"v": 1}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


# -- pbsolve/parsing.py: the whole-object shortcut -------------------------------------------
def test_an_object_nested_past_the_bare_depth_through_an_array_is_read_to_its_deepest_bare_object():
    # arrays do not count towards the depth (an array inside a nested object keeps its
    # level), so the outer object is one level too deep to be a bare answer: the last bare
    # object is the one inside it
    inner = {"b": [_nested(MAX_BARE_DEPTH - 1)]}
    text = json.dumps({"a": inner})
    assert parse_response(text) == Parsed(value=inner, source="object")


# -- pbsolve/checker_kit.py ----------------------------------------------------------------
def test_a_schedule_missing_many_entities_names_the_first_eight_in_data_order():
    names = [f"T{n}" for n in range(1, 11)]
    got = start_rows({"schedule": []}, "task", "tasks", lookup(names), dict.fromkeys(names, 1), 10, "hour")
    assert got == (None, "tasks missing from the schedule: T1, T2, T3, T4, T5, T6, T7, T8")
