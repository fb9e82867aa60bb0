"""Behaviours the mutation campaign over last session's faster grading code found untested
(pbsolve/parsing.py, pbsolve/checking.py, pbsolve/checker_kit.py and the project and
scheduling checkers): one behaviour per test, each a grade or a parse an answer gets."""

from __future__ import annotations

import json

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
