"""The response parsing policy (pbsolve/parsing.py), one behaviour per test.

1. Everything up to and including the last ``</think>`` is ignored; an unclosed
   ``<think>`` is an error.
2. A response longer than ``MAX_CHARS`` (after step 1) is refused.
3. The answer is the last candidate (a closed fenced block or a bare JSON-looking object),
   the one that ends last.
4. No fallback: a last candidate that does not parse is an error.
5. JSON must be standard: NaN and Infinity are refused.
Never an exception, and linear time in the input.
"""

from __future__ import annotations

import json
import time

import pytest

from pbsolve import parsing
from pbsolve.parsing import MAX_BARE_DEPTH, MAX_CHARS, parse_response

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


def test_answer_inside_an_unclosed_think_tag_fails():
    assert "unclosed <think>" in refused('<think> still thinking {"a": 1}')


def test_think_tag_reopened_after_the_last_close_tag_fails():
    assert "unclosed <think>" in refused('<think>a</think> {"a": 1} <think> more')


def test_close_tag_without_an_open_tag_grades_the_text_after_it():
    assert ok('thinking from the chat template {"a": 1}</think>{"b": 2}').value == {"b": 2}


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


def test_bare_object_after_a_fenced_block_is_the_answer():
    parsed = ok(fenced('{"a": 1}') + '\nthen again {"a": 2}')
    assert parsed.value == {"a": 2} and parsed.source == "object"


def test_fenced_block_after_a_bare_object_is_the_answer():
    parsed = ok('{"a": 2}\n' + fenced('{"a": 1}'))
    assert parsed.value == {"a": 1} and parsed.source == "fenced"


def test_object_inside_a_fenced_block_is_not_a_separate_candidate():
    text = '{"a": 0}\n' + fenced('{"a": 1}\n{"a": 2}')
    assert refused(text).startswith("last fenced block is not valid JSON")


def test_broken_bare_object_after_a_fenced_block_is_an_error_without_fallback():
    text = fenced('{"a": 1}') + '\nor {"a": 2,}'
    assert refused(text).startswith("last JSON object is not valid JSON")


def test_never_closed_json_object_after_an_answer_is_an_error_without_fallback():
    assert "never closed" in refused('{"a": 1}\nactually: {"a": 2, "b": [')


def test_never_closed_json_object_before_the_answer_is_prose():
    assert ok('I tried {"a": 1, but no.\nFinal: {"a": 2}').value == {"a": 2}


@pytest.mark.parametrize("tail", ["\n```", "\n```\n", "\n```json\n", "\n```\nthat is all.\n"], ids=repr)
def test_stray_fence_line_after_the_answer_does_not_change_it(tail):
    parsed = ok(fenced('{"a": 1}') + tail)
    assert parsed.value == {"a": 1} and parsed.source == "fenced"


def test_answer_after_a_never_closed_fence_is_read_as_a_bare_object():
    parsed = ok(fenced('{"a": 1}') + '\n```\n{"a": 2}')
    assert parsed.value == {"a": 2} and parsed.source == "object"


@pytest.mark.parametrize("ticks", [4, 6])
def test_longer_fence_opener_closes_at_the_next_run_of_three_or_more_backticks(ticks):
    opener = "`" * ticks
    assert ok(opener + 'json\n{"a": 1}\n' + opener).value == {"a": 1}
    assert ok(opener + 'json\n{"a": 1}\n```').value == {"a": 1}


def test_backticks_inside_a_line_do_not_open_a_fence():
    assert ok('Use ```json fences.\n{"a": 1}').value == {"a": 1}


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


def test_braces_that_do_not_open_a_json_object_are_prose():
    assert ok('{"a": 1} and {a: 2}, \\frac{1}{2}, {R1, R2}').value == {"a": 1}


def test_json_object_inside_prose_braces_is_a_candidate():
    assert ok('{see {"a": 1}}').value == {"a": 1}


def test_many_objects_before_the_answer_do_not_matter():
    assert ok('{"x": 0} ' * 5000 + '{"a": 1}').value == {"a": 1}


def test_empty_object_is_a_candidate():
    assert ok('{"a": 1} then {}').value == {}


def test_stray_quote_in_prose_does_not_hide_a_later_answer_on_another_line():
    assert ok('{"s": "unterminated\n{"a": 1}').value == {"a": 1}


def test_braces_inside_json_strings_do_not_end_the_object():
    value = {"note": 'a } brace, a { brace, an escaped " quote and }{', "b": [1]}
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
def test_bare_object_with_non_standard_constant_is_refused(constant):
    assert "not valid JSON" in refused('{"a": %s}' % constant)


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1.5e999"])
def test_a_number_too_large_for_a_float_is_refused_not_read_as_infinity(number):
    assert "out of range for a JSON number" in refused('{"a": [%s]}' % number)
    assert "out of range for a JSON number" in refused(fenced('{"a": %s}' % number))


def test_a_large_but_finite_number_still_reads():
    assert parse_response('{"a": 1e300}').value == {"a": 1e300}


# -- never an exception -----------------------------------------------------------------
@pytest.mark.parametrize("text", ["", " ", "\n\t  \r\n"], ids=["empty", "space", "whitespace"])
def test_empty_or_whitespace_only_response_is_an_error(text):
    assert refused(text) == "empty response"


@pytest.mark.parametrize("value", [None, 42, 1.5, b'{"a": 1}', {"a": 1}, ["x"]], ids=lambda v: type(v).__name__)
def test_non_string_input_is_an_error_naming_its_type(value):
    assert type(value).__name__ in refused(value)


DEPTH = 40_000  # "[" * DEPTH + "]" * DEPTH fits in MAX_CHARS


def test_deeply_nested_arrays_in_a_fenced_block_give_an_error():
    assert "not valid JSON" in refused(fenced("[" * DEPTH + "]" * DEPTH))


def test_deeply_nested_arrays_inside_a_bare_object_give_an_error():
    assert "nested too deeply" in refused('{"a": ' + "[" * DEPTH + "]" * DEPTH + "}")


def test_deeply_nested_objects_in_a_fenced_block_give_an_error():
    depth = 10_000
    assert "nested too deeply" in refused(fenced('{"a": ' * depth + "1" + "}" * depth))


def depth_of(value: object) -> int:
    return 1 + max(map(depth_of, value.values()), default=0) if isinstance(value, dict) else 0


def test_bare_object_nested_up_to_the_depth_limit_is_read_whole():
    n = MAX_BARE_DEPTH
    assert depth_of(ok('{"a": ' * n + "1" + "}" * n).value) == n


def test_bare_object_nested_beyond_the_depth_limit_is_not_read_as_one_object():
    n = 10_000
    parsed = parse_response('{"a": ' * n + "1" + "}" * n)
    assert parsed.error is not None or depth_of(parsed.value) <= MAX_BARE_DEPTH


def test_deeply_nested_bare_arrays_give_an_error():
    assert refused("[" * DEPTH + "]" * DEPTH) == "no JSON object found in the response"


def test_fence_opener_followed_by_long_whitespace_is_parsed_in_linear_time():
    text = FENCE + " " * 16_000 + "x"
    t0 = time.perf_counter()
    parse_response(text)
    assert time.perf_counter() - t0 < 0.2


# -- linear time ------------------------------------------------------------------------
HOSTILE = {
    "backticks": lambda n: "`" * n,
    "backtick-runs": lambda n: ("```x" * n)[:n],
    "empty-fences": lambda n: ("```\n```\n" * n)[:n],
    "open-braces": lambda n: "{" * n,
    "brace-pairs": lambda n: "{}" * (n // 2),
    "nested-braces": lambda n: "{" * (n // 2) + "}" * (n // 2),
    "open-objects": lambda n: ('{"a":' * n)[:n],
    "nested-objects": lambda n: '{"a":' * (n // 6) + "1" + "}" * (n // 6),
    "open-objects-with-content": lambda n: ('{"a":[1,2,3],"b":' * n)[:n],
    "small-objects": lambda n: ('{"a":1}' * n)[:n],
    "quotes": lambda n: "{" + '"' * (n - 1),
    "unterminated-string": lambda n: '{"' + "x" * (n - 2),
}


def cpu_seconds(text: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        parse_response(text)
        best = min(best, time.process_time() - t0)
    return best


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_input_grades_in_linear_time(kind):
    """Four times the input costs well under sixteen times the time (quadratic would)."""
    small, large = HOSTILE[kind](MAX_CHARS // 4), HOSTILE[kind](MAX_CHARS)
    t_small, t_large = cpu_seconds(small), cpu_seconds(large)
    assert t_large < max(8 * t_small, 0.02), (t_small, t_large)


def test_at_most_one_candidate_is_decoded(monkeypatch):
    calls: list[int] = []
    real = parsing._loads
    monkeypatch.setattr(parsing, "_loads", lambda text: calls.append(len(text)) or real(text))
    parse_response('{"a": 1,} ' * 2000 + fenced("{bad}") + ' {"a": 1,}' * 2000)
    assert len(calls) == 1


def test_a_number_out_of_range_is_quoted_by_its_first_40_characters():
    number = "1" * 45 + "e400"
    reason = refused('{"a": %s}' % number)
    assert f"{'1' * 40} is out of range for a JSON number" in reason
    assert "1" * 41 not in reason


# -- the whole-object fast path: the same answer as the scan, always --------------------------
from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=25,
)
_PIECES = st.sampled_from(['{', '}', '"', "\\", "`", "```", "\n", " ", "\t", "{\"a\": 1}", "[", "]", ",", ":", "x", "1e400", "NaN"])


def nested(depth: int) -> dict:
    """An object ``depth`` objects deep."""
    value: dict = {"v": 1}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


@settings(max_examples=300, deadline=None)
@given(value=st.dictionaries(st.text(max_size=5), _JSON, max_size=4), pad=st.sampled_from(["", " ", "\n", "  \n\t"]),
       indent=st.sampled_from([None, 0, 2]))
def test_a_reply_that_is_one_json_object_parses_as_the_scan_reads_it(value, pad, indent):
    text = pad + json.dumps(value, indent=indent) + pad
    assume("<think>" not in text and "</think>" not in text)  # thinking is cut before either path
    assert parse_response(text) == parsing._scanned(text)


@settings(max_examples=300, deadline=None)
@given(value=st.dictionaries(st.text(max_size=5), _JSON, max_size=3), noise=st.lists(_PIECES, max_size=6),
       at=st.integers(0, 2))
def test_an_object_with_noise_around_or_inside_parses_as_the_scan_reads_it(value, noise, at):
    text = json.dumps(value)
    cut = [0, len(text) // 2, len(text)][at]
    text = text[:cut] + "".join(noise) + text[cut:]
    assume("<think>" not in text and "</think>" not in text)  # thinking is cut before either path
    assert parse_response(text) == parsing._scanned(text)


def test_an_object_nested_past_the_bare_depth_is_not_read_by_the_fast_path():
    deep = json.dumps(nested(MAX_BARE_DEPTH + 1))
    assert parsing._whole_object(deep) is None
    assert parse_response(deep) == parsing._scanned(deep)


def test_an_object_nested_to_the_bare_depth_is_read_by_the_fast_path():
    text = json.dumps({"a": [nested(MAX_BARE_DEPTH - 1)]})
    assert parsing._whole_object(text) == parsing._scanned(text)
    assert parsing._whole_object(text) is not None


def test_a_depth_walk_that_runs_out_of_stack_falls_back_to_the_scan(monkeypatch):
    def exhausted(value, depth=1):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(parsing, "_within_bare_depth", exhausted)
    text = json.dumps({"a": [[1]]})
    assert parse_response(text) == parsing._scanned(text)


# -- a text without a closing brace: fences only, the same answer as the full scan -------------
_OPEN_PIECES = st.sampled_from(['{', '"', "\\", "`", "```", "```json\n", "```\n", "\n", " ", "\t", '{"a": 1', "[", "]",
                                ",", ":", "x", "1e400", "NaN", '{"', "{ \"", "``"])


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(_OPEN_PIECES, max_size=30))
def test_a_text_without_a_closing_brace_parses_as_the_full_scan_reads_it(pieces):
    text = "".join(pieces)
    assert parsing._scanned(text) == parsing._scanned_without_objects(text) == parsing._full_scan(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a":' * 50,  # open objects: each brace tried to the nesting limit by the full pattern
        '```json\n[1]\n```{"a": 1',  # a broken object after the last fence
        '{"a": 1 ```json\n[1]\n```',  # a broken object before it: the fence is the answer
        '```json\n{"a": [1\n```',  # a fence holding broken JSON
        "``` x\n```",  # an empty fence body
        '```json\n[1]',  # an unclosed fence
        "{ {{ x",  # braces that open nothing: no candidate
        "",
    ],
)
def test_texts_without_a_closing_brace_read_as_the_full_scan_reads_them(text):
    assert parsing._scanned_without_objects(text) == parsing._full_scan(text)


# -- a run of JSON-looking braces before the first close: the attempts that must fail are skipped --
_HEAD_PIECES = st.sampled_from(['{"a":', '{"a":', '{"', '{ "', '{', '"', "x", " ", ":", '{"b":"{"', '"{"', '""', "\t", "[", ","])
_TAIL_PIECES = st.sampled_from(["}", "}}", '{"a":1}', '```json\n{"z":2}\n```', '"', "\n", '\\"', "{", '{"a":', "x", "`", "]"])


def _scan_without_skipping(text: str) -> parsing.Parsed:
    return parsing._full_scan(text)  # the scan from the first character, nothing skipped


@settings(max_examples=400, deadline=None)
@given(head=st.lists(_HEAD_PIECES, min_size=20, max_size=120), close=st.sampled_from(["}", "1}", " }", '"}', "}}}}}}}"]),
       tail=st.lists(_TAIL_PIECES, max_size=12))
def test_skipping_the_braces_that_must_fail_reads_as_the_full_scan(head, close, tail):
    text = "".join(head) + close + "".join(tail)
    assert parsing._scanned(text) == _scan_without_skipping(text)


@pytest.mark.parametrize("depth", [MAX_BARE_DEPTH - 1, MAX_BARE_DEPTH, MAX_BARE_DEPTH + 1])
@pytest.mark.parametrize("runs", [40, 400])
def test_nested_objects_past_a_long_run_of_openers_read_as_the_full_scan(depth, runs):
    text = '{"a":' * runs + '{"b":' * depth + "1" + "}" * (runs + depth)
    start, _ = parsing._hopeless_prefix(text)
    assert start > 0  # the pre-pass skipped the openers that cannot close
    assert parsing._scanned(text) == _scan_without_skipping(text)
    assert parse_response(text) == parsing._scanned(text)


def test_the_pre_pass_leaves_texts_it_cannot_read_to_the_full_scan():
    # a backslash, a line break or a backtick before the first close: strings or fences may differ
    for odd in ("\\", "\n", "`"):
        text = '{"a":' * 40 + odd + "1" + "}" * 40
        assert parsing._hopeless_prefix(text) == (0, -1)
    assert parsing._hopeless_prefix("{" * 100 + "}") == (0, -1)  # no opener: nothing to skip


# -- runs of flat objects: one token for the scan, the same answer as one token per object ------
_FLAT_PIECES = st.sampled_from(['{}', '{"a":1}', '{ "a": "x" }', '{"a":"{"}', '{"a":"\\\\"}', '{"a":\n1}', '{"a":{"b":1}}',
                                ' ', 'x', '\n', '{', '}', '"', '`', '```json\n{"z": 3}\n```', '{1}', '{"a": [1, 2]}', '{"a": "b'])


def _plain_answer(text: str) -> tuple:
    """The policy's scan as defined (each bare object one token): last fence, object, broken opener."""
    scan = parsing._PLAIN_SCAN.match(text)
    return scan.end("fence"), scan.end("obj"), scan.end("broken"), scan.group("obj"), scan.group("body")


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(_FLAT_PIECES, max_size=20))
def test_a_run_of_flat_objects_reads_as_one_object_per_token(pieces):
    text = "".join(pieces)
    fence_end, obj_end, broken_end, obj, body = _plain_answer(text)
    scan = parsing._SCAN.match(text)
    flat_end = scan.end("flat")
    last_obj = text[text.rfind("{", scan.start("flat"), flat_end) : flat_end] if flat_end > scan.end("obj") else scan.group("obj")
    assert (scan.end("fence"), max(scan.end("obj"), flat_end), scan.end("broken")) == (fence_end, obj_end, broken_end)
    assert last_obj == obj and scan.group("body") == body
    assert parsing._full_scan(text) == parsing._scanned(text)


def test_brace_pairs_are_read_as_one_run():
    text = "{}" * 1000 + ' {"a": 1}'
    scan = parsing._SCAN.match(text)
    assert scan.start("flat") == 0 and scan.end("flat") == len(text)
    assert parse_response(text) == parsing.Parsed(value={"a": 1}, source="object")


@settings(max_examples=300, deadline=None)
@given(pre=st.lists(st.sampled_from(['{', '"', "x", '{"a":', '"{"', " ", '{"', '""']), max_size=12),
       unit=st.sampled_from(['{"a":', '{"a":"b",', '{ "a":', '{"a":{"b":', '{""{"']), runs=st.integers(40, 120),
       closes=st.integers(1, 130), tail=st.lists(_TAIL_PIECES, max_size=6))
def test_skipping_when_one_parity_has_its_last_braces_far_back(pre, unit, runs, closes, tail):
    # a few braces of the other parity before a long run: found far back, past a walk's reach
    text = "".join(pre) + unit * runs + "1" + "}" * closes + "".join(tail)
    assert parsing._scanned(text) == _scan_without_skipping(text)
