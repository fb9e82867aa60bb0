"""The pre-pass over a long run of JSON-looking braces before the first ``}``
(pbsolve.parsing._hopeless_prefix) skips only braces whose object must fail: the answer
read past the skip is the policy's own, the last candidate, and when no candidate is
left the reply is refused as one that ends in a broken object. Each text below is one
the pre-pass runs on (32 or more ``{"`` before a first ``}`` at 64 or later, no backtick,
backslash or line break before it), checked by its parse result, never by its timing."""

from __future__ import annotations

import json

import pytest

from pbsolve import parsing
from pbsolve.parsing import MAX_BARE_DEPTH, Parsed, parse_response

OPENERS = '{"a":' * 40  # forty openers, each nested in the one before: none can close in time
NEVER_CLOSED = Parsed(error="the last JSON object is never closed (or nested too deeply)")


def _pre_pass_runs_on(text: str) -> bool:
    """Whether parsing takes the pre-pass on ``text`` (and skips something), so that a test
    of it is not silently a test of the plain scan."""
    close = text.find("}")
    return parsing._hopeless_prefix(text, close)[0] > 0


def test_a_lone_surrogate_before_a_run_of_openers_does_not_stop_the_reading():
    # a JSON-decoded request can carry a lone surrogate; the pre-pass reads braces and quotes only
    text = "\ud800" + OPENERS + '{"b":1}'
    assert _pre_pass_runs_on(text)
    assert parse_response(text) == Parsed(value={"b": 1}, source="object")


@pytest.mark.parametrize("strings", [40, 70], ids=["braces-near-the-close", "braces-far-from-the-close"])
def test_an_answer_whose_strings_hold_opening_braces_is_read_whole(strings):
    # every "{" inside the answer's strings looks like an opener to the pre-pass; the
    # answer's own first brace is the one that closes (found near or far back)
    answer = {"notes": ["{"] * strings}
    text = json.dumps(answer, separators=(",", ":")) + "\nThat is all."
    assert parse_response(text) == Parsed(value=answer, source="object")


def test_an_answer_after_a_stray_prose_brace_and_strings_of_braces_is_read_whole():
    # the stray "{" before the answer shifts every brace's index by one
    answer = {"notes": ["{"] * 70}
    text = "Sets open with {, and the plan is " + json.dumps(answer, separators=(",", ":")) + "\nThat is all."
    assert parse_response(text) == Parsed(value=answer, source="object")


def test_an_answer_nested_to_the_bare_depth_after_a_run_of_openers_is_read_from_its_outer_brace():
    # the brace just before the first close is that of the innermost (empty) object
    inner: dict = {}
    for _ in range(MAX_BARE_DEPTH - 1):
        inner = {"b": inner}
    text = OPENERS + json.dumps(inner, separators=(",", ":"))
    assert _pre_pass_runs_on(text)
    assert parse_response(text) == Parsed(value=inner, source="object")


@pytest.mark.parametrize("prose", ["{x" * 12, "{x " * 12], ids=["prose-braces", "prose-braces-spaced"])
def test_a_run_of_openers_before_prose_braces_is_refused_as_never_closed(prose):
    # no brace can open an object that closes: the openers are all broken, nothing is a candidate
    text = OPENERS + prose + "}"
    assert parse_response(text) == NEVER_CLOSED


def test_an_object_after_a_run_of_openers_ending_in_prose_braces_is_the_answer():
    text = OPENERS + "{x" * 12 + '} and then {"c": 2}'
    assert parse_response(text) == Parsed(value={"c": 2}, source="object")


def test_an_object_after_prose_braces_that_follow_a_run_of_openers_is_the_answer():
    # the broken openers all lie before the prose braces, the answer after them
    text = OPENERS + '{ x {x {x {x {x {"b":1}'
    assert _pre_pass_runs_on(text)
    assert parse_response(text) == Parsed(value={"b": 1}, source="object")


def test_an_answer_with_an_escaped_quote_after_a_leading_backslash_is_read_whole():
    # an escaped quote shifts the quote count from the answer's first brace: braces and
    # quotes alone no longer tell which braces lie inside strings, so nothing is skipped
    answer = {"q": 'say "hi', "notes": ["{"] * 40}
    text = "\\o/ " + json.dumps(answer) + " ok"
    assert parse_response(text) == Parsed(value=answer, source="object")


def test_an_answer_with_a_line_break_in_a_string_after_a_leading_one_is_refused_as_invalid_json():
    # a string cannot span a line: the answer's object closes where the line break ends the
    # string, so it is the last candidate, and its JSON is what fails
    text = '\n{"q": "a\n' + json.dumps({"notes": ["{"] * 40})[1:] + " ok"
    parsed = parse_response(text)
    assert parsed.value is None and parsed.error is not None
    assert parsed.error.startswith("last JSON object is not valid JSON: Invalid control character")
