"""The response parsing policy (pbsolve/parsing.py), one behaviour per test.

1. Everything up to and including the last ``</think>`` is ignored.
2. A response longer than ``MAX_CHARS`` (after step 1) is refused.
3. If the rest holds a fenced code block, the last one is the answer.
4. Otherwise the answer is the last top-level ``{...}`` object that parses as JSON.
5. JSON must be standard: NaN and Infinity are refused.
Never an exception.
"""

from __future__ import annotations

import json
import time

import pytest

from pbsolve.parsing import MAX_CHARS, parse_response

FENCE = "```"


def fenced(body: str, lang: str = "json") -> str:
    return f"{FENCE}{lang}\n{body}\n{FENCE}"


def ok(text: object):
    parsed = parse_response(text)
    assert parsed.error is None, parsed.error
    return parsed


def refused(text: object) -> str:
    parsed = parse_response(text)
    assert parsed.value is None
    assert isinstance(parsed.error, str) and parsed.error.strip()
    return parsed.error


# -- 1. thinking ------------------------------------------------------------------------
def test_text_up_to_the_last_think_close_tag_is_ignored():
    text = '<think>maybe {"a": 1}</think> first </think> then {"b": 2}'
    assert ok(text).value == {"b": 2}


def test_json_object_inside_thinking_is_never_the_answer():
    assert refused('<think>{"feasible": true}</think> I cannot decide.') == "no JSON object found in the response"


def test_fenced_block_inside_thinking_is_never_the_answer():
    text = "<think>" + fenced('{"a": 1}') + '</think>\nAnswer: {"b": 2}'
    parsed = ok(text)
    assert parsed.value == {"b": 2} and parsed.source == "object"


def test_nothing_after_think_close_tag_is_an_error():
    assert "after </think>" in refused('<think>{"a": 1}</think>   \n')


def test_unclosed_think_tag_does_not_hide_the_answer():
    assert ok('<think> still thinking {"a": 1}').value == {"a": 1}


# -- 2. length ----------------------------------------------------------------------------
def test_response_longer_than_max_chars_is_refused_with_a_reason():
    error = refused('{"a": 1}' + " " * MAX_CHARS)
    assert "too long" in error and f"{MAX_CHARS:,}" in error


def test_response_of_exactly_max_chars_is_accepted():
    body = '{"a": 1}'
    assert ok(body + " " * (MAX_CHARS - len(body))).value == {"a": 1}


def test_thinking_does_not_count_towards_the_length_limit():
    text = "<think>" + "x" * (MAX_CHARS + 10) + '</think>{"a": 1}'
    assert ok(text).value == {"a": 1}


# -- 3. fenced blocks -------------------------------------------------------------------
def test_last_fenced_block_wins_over_earlier_fenced_blocks():
    text = fenced('{"a": 1}') + "\nor rather\n" + fenced('{"a": 2}')
    parsed = ok(text)
    assert parsed.value == {"a": 2} and parsed.source == "fenced"


def test_fenced_block_wins_over_a_later_bare_object():
    text = fenced('{"a": 1}') + '\nthen again {"a": 2}'
    assert ok(text).value == {"a": 1}


def test_fenced_block_wins_over_an_earlier_bare_object():
    text = '{"a": 2}\n' + fenced('{"a": 1}')
    assert ok(text).value == {"a": 1}


def test_fence_without_language_tag_counts_as_a_fenced_block():
    parsed = ok("Answer:\n" + fenced('{"a": 1}', lang=""))
    assert parsed.value == {"a": 1} and parsed.source == "fenced"


def test_last_fenced_block_with_invalid_json_is_an_error_without_fallback():
    text = fenced('{"a": 1}') + '\n{"b": 2}\n' + fenced("{not json}")
    assert refused(text).startswith("last fenced block is not valid JSON")


def test_fenced_block_with_non_object_json_is_returned_as_is():
    parsed = ok(fenced("[1, 2, 3]"))
    assert parsed.value == [1, 2, 3] and parsed.source == "fenced"


def test_unclosed_fence_falls_back_to_the_last_bare_object():
    parsed = ok('```json\n{"a": 1}\n')
    assert parsed.value == {"a": 1} and parsed.source == "object"


# -- 4. bare objects --------------------------------------------------------------------
def test_without_fences_the_last_top_level_object_is_the_answer():
    parsed = ok('First {"a": 1}, then {"a": 2}. Done.')
    assert parsed.value == {"a": 2} and parsed.source == "object"


def test_last_object_that_does_not_parse_is_skipped_for_an_earlier_one():
    assert ok('{"a": 1} and {a: 2}').value == {"a": 1}


def test_braces_inside_json_strings_do_not_end_the_object():
    value = {"note": "a } brace, a { brace, an escaped \" quote and }{", "b": [1]}
    assert ok("Here: " + json.dumps(value) + " end").value == value


def test_nested_objects_give_the_outer_object():
    assert ok('x {"outer": {"inner": {"deep": 1}}} y').value == {"outer": {"inner": {"deep": 1}}}


def test_stray_closing_brace_before_the_answer_is_harmless():
    assert ok('oops } {"a": 1}').value == {"a": 1}


def test_unbalanced_opening_brace_in_prose_does_not_hide_the_answer():
    text = 'Rules {R1, R2 clash, so:\n{"feasible": false, "conflict": ["R1", "R2"]}'
    assert ok(text).value == {"feasible": False, "conflict": ["R1", "R2"]}


def test_top_level_json_array_without_an_object_is_an_error():
    assert refused("[1, 2, 3]") == "no JSON object found in the response"


def test_text_without_any_json_is_an_error():
    assert refused("I think the answer is 42.") == "no JSON object found in the response"


# -- 5. standard JSON only --------------------------------------------------------------
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_standard_constants_in_a_fenced_block_are_refused(constant):
    assert "not valid JSON" in refused(fenced('{"a": %s}' % constant))


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_bare_object_with_non_standard_constant_is_not_an_answer(constant):
    assert refused('{"a": %s}' % constant) == "no JSON object found in the response"


# -- never an exception -----------------------------------------------------------------
@pytest.mark.parametrize("text", ["", " ", "\n\t  \r\n"], ids=["empty", "space", "whitespace"])
def test_empty_or_whitespace_only_response_is_an_error(text):
    assert refused(text) == "empty response"


@pytest.mark.parametrize("value", [None, 42, 1.5, b'{"a": 1}', {"a": 1}, ["x"]], ids=lambda v: type(v).__name__)
def test_non_string_input_is_an_error_naming_its_type(value):
    assert type(value).__name__ in refused(value)


DEPTH = 100_000


def test_deeply_nested_arrays_in_a_fenced_block_give_an_error():
    assert "not valid JSON" in refused(fenced("[" * DEPTH + "]" * DEPTH))


def test_deeply_nested_arrays_inside_a_bare_object_give_an_error():
    assert refused('{"a": ' + "[" * DEPTH + "]" * DEPTH + "}") == "no JSON object found in the response"


def test_deeply_nested_objects_give_an_error():
    assert refused('{"a": ' * DEPTH + "1" + "}" * DEPTH) == "no JSON object found in the response"


def test_deeply_nested_bare_arrays_give_an_error():
    assert refused("[" * DEPTH + "]" * DEPTH) == "no JSON object found in the response"


def test_fence_opener_followed_by_long_whitespace_is_parsed_in_linear_time():
    text = FENCE + " " * 16_000 + "x"
    t0 = time.perf_counter()
    parse_response(text)
    assert time.perf_counter() - t0 < 0.2
