"""Reading the answer out of a response: one documented policy, never an exception.

1. Everything up to and including the last ``</think>`` is ignored. A ``<think>`` left
   open (no ``</think>`` after it) is an error: an answer inside unfinished thinking is
   no answer (the usual think-format rule of RL rewards).
2. A response longer than ``MAX_CHARS`` (after step 1) is refused. ``MAX_CHARS`` is the
   one default for every entry point (grading, rewards, the reward server).
3. The answer is the **last candidate** in the rest, the one that ends last. Candidates:

   * every closed fenced block: a run of three or more backticks, an optional language
     word and a line break open it; the next run of three or more backticks closes it
     (whatever the opener's length). A fence that is never closed is plain text;
   * every bare JSON-looking object outside fenced blocks: a ``{`` followed (after
     whitespace) by ``"`` or ``}``, running to its matching ``}``; braces inside JSON
     strings do not count, and objects may nest at most ``MAX_BARE_DEPTH`` deep (a
     deeper one is not read as one object). Any other brace (``{R1, R2}``, ``\\frac{a}{b}``)
     is prose. A JSON-looking ``{`` that is never closed is prose too, unless it comes
     after the last candidate: then the reply ends in a broken answer (see 4).

4. **No fallback.** The last candidate must parse as standard JSON (a fenced block may
   hold any JSON value, a bare candidate is an object); if it does not, the response
   fails. It is never replaced by an earlier answer: a response holding several answers
   is graded on its last one only, so writing more answers, or a draft before a broken
   final answer, can never earn more than writing the last one alone.
5. JSON must be standard: NaN and Infinity are refused, and so is a number too large
   for a float (``1e400`` would read as infinity).

Cost: one pass of one regular expression (possessive, no backtracking) over at most
``MAX_CHARS`` characters, then one JSON decode of one candidate: linear in the input,
whatever it holds (runs of backticks or braces, deep nesting, unterminated strings).
A text with no ``}`` cannot hold a bare object: it is read by a lighter pass that looks
for fences only, and one search for a JSON-looking ``{`` past the last one (the same
result, property-tested against the full pattern). And a long run of JSON-looking
braces before the first ``}``, nested deeper than ``MAX_BARE_DEPTH``, is not tried brace
by brace: those whose object must fail are found from the braces and quotes alone, and the
scan starts after them (:func:`_hopeless_prefix`, property-tested the same way). A run
of flat objects (``{}{}{}``, ``{"a":1} {"a":1}``) is one token of the scan, read to the
same last object as one token per object (property-tested against the scan as defined).
A reply that is nothing but one JSON object (the usual case), or one fenced block with
plain prose around it, is decoded directly, without the scan, with the same result
(property-tested against the scan).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

MAX_CHARS = 100_000  # characters after </think>; the default of grading, rewards and the server
MAX_BARE_DEPTH = 6  # object nesting a bare (unfenced) answer may have; fenced blocks have no such limit

# A JSON string inside an object; it cannot span a line (raw line breaks are not JSON), so
# a stray quote only reaches the end of its line. An unterminated one ends there.
_STR = r'"(?:[^"\\\n]++|\\.)*+"?'


def _object_pattern(depth: int) -> str:
    """A brace-matched object nesting at most ``depth`` deep, as a possessive pattern."""
    inner = r"\{(?:[^{}" + '"' + r"]++|" + _STR + r")*+\}"
    for _ in range(depth - 1):
        inner = r"\{(?:[^{}" + '"' + r"]++|" + _STR + "|" + inner + r")*+\}"
    return inner


_LOOKS_JSON = r"\{(?=\s*+[\"}])"
_FENCE = (
    r"(?<!`)`{3,}+[ \t]*+[A-Za-z0-9_+.-]*+[ \t]*+\r?\n"  # opener: backticks, a language word, a line break
    r"(?P<body>(?:[^`]++|`{1,2}+(?!`))*+)"  # body: up to the next run of three or more
    r"`{3,}+"
)
# One left-to-right pass: prose, whole fenced blocks, whole bare objects, or a stray
# backtick run / brace. Each group keeps its last match, so one match gives the last
# fenced block, the last bare object and the last broken JSON-looking opener.
_OBJECT = _object_pattern(MAX_BARE_DEPTH)
# A run of flat objects (no brace inside, strings plain: no brace, backslash or line break),
# prose between them: the scan would read each as one bare object, to the same end, and the
# prose as prose; read here as one token, far cheaper. The run ends with its last object
# (an attempt at one more that fails is dropped whole), which starts at its last brace.
_FLAT = r'\{(?:\}|(?=\s*+["}])(?:[^{}"]++|"[^"\\\n{}]*+")*+\})'  # an empty object first: the cheapest
_FLAT_RUN = _FLAT + r"(?:[^{`]*+" + _FLAT + r")*+"


def _scan_body(fast: bool) -> str:
    """The scan's pattern: as the policy defines it, or (``fast``) with two shortcuts that
    read the same tokens in fewer steps: a run of flat objects as one token, and a run of
    adjacent braces as prose at once (every brace of it but the last is followed by a
    brace, so opens nothing; the last is left to an object when it looks like one)."""
    # prose, with any brace (fast: run of braces) that does not open an object; then the
    # shortcut through flat objects (fast); objects, only where a brace looks JSON-like;
    # fenced blocks; a JSON-looking brace that never closes (within MAX_BARE_DEPTH); backticks
    prose = r"(?:[^{`]++|" + (r"\{+" if fast else r"\{") + r"(?!\s*+[\"}]))++"
    flat = r"|(?P<flat>" + _FLAT_RUN + r")" if fast else ""
    return r"(?:" + prose + flat + r"|(?P<obj>" + _OBJECT + r")|(?P<fence>" + _FENCE + r")|(?P<broken>\{)|`++)*"


# The policy's scan, as it is defined (each bare object one token); the tests hold the
# scan below, with its shortcut through runs of flat objects, to give the same answer.
_PLAIN_SCAN = re.compile(r"\A" + _scan_body(False), re.DOTALL)
_SCAN = re.compile(r"\A" + _scan_body(True), re.DOTALL)
# the same scan resumed at a position where the full one is between two tokens (or inside prose)
_SCAN_FROM = re.compile(_scan_body(True), re.DOTALL)
_FENCES = re.compile(_FENCE, re.DOTALL)
# The scan of a text with no closing brace: no object can close, so every JSON-looking
# brace is a broken opener and only fences are candidates. Braces never touch the fences
# (only an object could hold a backtick run, and none can form), so the fences are those
# of the full scan, and its last broken opener is the last JSON-looking brace anywhere
# outside them; past the last fence everything is outside one.
# (each fence or backtick run takes the prose after it along: one step instead of two)
_SCAN_FENCES_ONLY = re.compile(r"\A[^`]*+(?:(?P<fence>" + _FENCE + r")[^`]*+|`++[^`]*+)*", re.DOTALL)
_JSON_OPENER = re.compile(_LOOKS_JSON)
_OPENS_JSON = re.compile(r"\s*+[\"}]")  # what follows a JSON-looking brace (the scan's lookahead)
# The braces and quotes of a text read backwards from a close (every other byte deleted):
# the next brace with an even number of quotes before it, from a point with an even number;
# the next with an odd number, from a point with an even or an odd number.
_NOT_BRACE_OR_QUOTE = bytes(range(256)).translate(None, b'{"')
_EVEN_BRACE = re.compile(rb'(?:"\{*+")*+(?=\{)')
_ODD_BRACE_FROM_EVEN = re.compile(rb'(?:\{|"")*+"(?=\{)')
_ODD_BRACE_FROM_ODD = re.compile(rb'(?:"(?:\{|"")*+")?(?=\{)')
_NEAR_BRACES = 64  # hopeful braces this close to the close are found by walking back to them
# a JSON-looking brace read backwards, the last one first: a quote or brace, blanks, the brace
_OPENER_BACKWARDS = re.compile(r"[\"}]\s*+\{")
# The pre-pass costs a little for every brace before the first close, an object attempt
# far more: it runs when at least a quarter of those braces (and 32) open with a quote.
# Which texts it runs on changes its speed only, never its result.
_SKIP_MIN_BRACES = 32


@dataclass(frozen=True)
class Parsed:
    value: Any = None
    error: str | None = None
    source: str = ""  # "fenced" or "object"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    """A JSON number with a fraction or exponent; one too large for a float (``1e400``)
    would read as infinity, which standard JSON cannot hold: refused like ``Infinity``."""
    value = float(text)
    if value in (math.inf, -math.inf):
        raise ValueError(f"{text[:40]} is out of range for a JSON number")
    return value


# one decoder: json.loads would build one per call
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def _loads(text: str) -> Any:
    """``json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)``,
    exactly (the BOM check included)."""
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODER.decode(text)


def strip_thinking(text: str) -> str:
    """The text after the last ``</think>`` (all of it if there is none)."""
    cut = text.rfind("</think>")
    return text[cut + len("</think>") :] if cut >= 0 else text


def fenced_blocks(text: str) -> list[str]:
    """Bodies of the closed fenced blocks, in order (the fences of the policy above)."""
    return [m.group("body") for m in _FENCES.finditer(text)]


def top_level_objects(text: str) -> list[tuple[int, int]]:
    """Spans of matched {...} pairs not nested in another matched pair, in one linear pass.

    Any brace counts here (the judge reads verdicts with it); a stray '{' that never
    closes is left unmatched instead of swallowing what follows. Inside an open brace,
    JSON strings are tracked so braces within them do not count.
    """
    top: list[tuple[int, int]] = []
    stack: list[int] = []
    in_str = escape = False
    for i, ch in enumerate(text):
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"' or ch == "\n":
                in_str = False
        elif ch == '"' and stack:
            in_str = True
        elif ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            start = stack.pop()
            while top and top[-1][0] > start:  # pairs inside this one are not top-level
                top.pop()
            top.append((start, i + 1))
    return top


def _decode(text: str, what: str) -> tuple[Any, str | None]:
    try:
        return _loads(text), None
    except (ValueError, RecursionError) as exc:
        detail = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
        return None, f"{what} is not valid JSON: {detail}"


def _within_bare_depth(value: Any, depth: int = 1) -> bool:
    """Whether objects nest at most ``MAX_BARE_DEPTH`` deep in ``value`` (an object or an
    array at object level ``depth``); arrays do not count, as in the bare-object pattern."""
    for child in value.values() if type(value) is dict else value:
        kind = type(child)
        if kind is dict:
            if depth == MAX_BARE_DEPTH or not _within_bare_depth(child, depth + 1):
                return False
        elif kind is list and not _within_bare_depth(child, depth):
            return False
    return True


def _whole_object(body: str) -> Parsed | None:
    """The answer when the body is nothing but one JSON object (the usual reply of a
    model asked for JSON), read without the scan; None when the body is anything else.

    Same result as the scan: with no backtick there is no fenced block, and a body that
    is one valid object within the depth limit is one bare candidate, the last one."""
    stripped = body.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")) or "`" in body:
        return None
    try:
        value = _loads(stripped)
        if not isinstance(value, dict) or not _within_bare_depth(value):
            return None
    except (ValueError, RecursionError):
        return None  # the scan gives the policy's own answer or error
    return Parsed(value=value, source="object")


def parse_response(text: Any) -> Parsed:
    """The answer of a response by the policy in the module docstring; never raises."""
    if not isinstance(text, str):
        return Parsed(error=f"response is {type(text).__name__}, not text")
    body = strip_thinking(text)
    if len(body) > MAX_CHARS:
        return Parsed(error=f"response too long ({len(body):,} characters; limit {MAX_CHARS:,})")
    if "<think>" in body:
        return Parsed(error="unclosed <think>: no </think> after it, so no answer")
    if not body.strip():
        return Parsed(error="empty response" if "</think>" not in text else "nothing after </think>")
    whole = _whole_object(body)
    if whole is not None:
        return whole
    fenced = _one_fence(body)
    if fenced is not None:
        return fenced
    return _scanned(body)


def _one_fence(body: str) -> Parsed | None:
    """The answer when the body is one fenced block with plain prose around it (no brace
    and no backtick outside the block: "Here is the plan:" and a fenced JSON block, the
    usual reply of a model asked for a fenced answer), read without the scan; None when
    the body is anything else.

    Same result as the scan: the prose before the block holds no token, so the scan's
    first token is this block (the fence pattern, matched where it starts); the prose after
    it holds no token either, so the block is the last candidate and nothing is broken."""
    start = body.find("`")
    if start < 0 or body.find("{", 0, start) >= 0:
        return None
    fence = _FENCES.match(body, start)
    if fence is None:
        return None
    end = fence.end()
    if body.find("`", end) >= 0 or body.find("{", end) >= 0:
        return None
    value, error = _decode(fence.group("body"), "last fenced block")
    return Parsed(error=error) if error else Parsed(value=value, source="fenced")


def _scanned(body: str) -> Parsed:
    """The answer by one pass of the scan (the policy's general case)."""
    close = body.find("}")
    if close < 0:
        return _scanned_without_objects(body)
    return _full_scan(body, close)


def _full_scan(body: str, close: int = -1) -> Parsed:
    """:func:`_scanned` by the scan pattern, whatever the text holds (``close``: the
    position of its first ``}``, where a run of openers before it may be skipped; -1:
    skip nothing, the scan runs from the first character)."""
    if close < 2 * _SKIP_MIN_BRACES or body.count('{"', 0, close) < _SKIP_MIN_BRACES:
        scan, broken_before = _SCAN.match(body), -1  # the usual reply: no run of openers to skip
    else:
        start, broken_before = _hopeless_prefix(body, close)
        scan = _SCAN.match(body) if start == 0 else _SCAN_FROM.match(body, start)
    assert scan is not None  # the pattern matches every text (each alternative may repeat zero times)
    fence_end, obj_end, broken_end, flat_end = scan.end("fence"), scan.end("obj"), scan.end("broken"), scan.end("flat")
    if broken_end < 0:
        broken_end = broken_before
    if flat_end > obj_end:  # the last bare object closes a run of flat ones
        obj_end = flat_end
    if broken_end > max(fence_end, obj_end):
        return Parsed(error="the last JSON object is never closed (or nested too deeply)")
    if fence_end < 0 and obj_end < 0:
        return Parsed(error="no JSON object found in the response")
    if fence_end > obj_end:
        value, error = _decode(scan.group("body"), "last fenced block")
        return Parsed(error=error) if error else Parsed(value=value, source="fenced")
    if obj_end == flat_end:
        obj_text = body[body.rfind("{", scan.start("flat"), flat_end) : flat_end]
    else:
        obj_text = scan.group("obj")
    value, error = _decode(obj_text, "last JSON object")
    return Parsed(error=error) if error else Parsed(value=value, source="object")


def _scanned_without_objects(body: str) -> Parsed:
    """:func:`_full_scan` of a text without a closing brace, with the same result: the
    full scan's work on such a text is mostly object attempts that cannot succeed (each
    JSON-looking brace tried to its nesting limit or the end), here skipped; the last
    JSON-looking brace past the last fence is found by one search."""
    scan = _SCAN_FENCES_ONLY.match(body)
    assert scan is not None  # matches every text, as the full scan
    fence_end = scan.end("fence")
    if _JSON_OPENER.search(body, max(fence_end, 0)) is not None:
        return Parsed(error="the last JSON object is never closed (or nested too deeply)")
    if fence_end < 0:
        return Parsed(error="no JSON object found in the response")
    value, error = _decode(scan.group("body"), "last fenced block")
    return Parsed(error=error) if error else Parsed(value=value, source="fenced")


def _hopeless_prefix(body: str, close: int | None = None) -> tuple[int, int]:
    """Where the scan of ``body`` may start instead of at 0, and the end of the last
    broken opener before that point (-1: none), or (0, -1) to scan it all (``close``: the
    position of the first ``}``, if the caller has it).

    A run of JSON-looking braces before the first ``}`` costs the scan one object attempt
    per brace, each running to the nesting limit before it fails (``{"a":{"a":...``): here
    those that must fail are found without trying them, and skipped. With no backtick, backslash or
    line break before the first ``}``, the text there holds only prose and braces, and
    every string an object attempt reads ends at the next quote; so, read from a brace,
    another brace is outside strings exactly when an even number of quotes lies between
    them. A brace with ``MAX_BARE_DEPTH`` such braces after it (before the first ``}``)
    opens an object nested too deeply before anything closes: its attempt fails and the
    scan takes it as a broken opener. Everything before the first brace not known to fail
    is prose or broken openers, so the scan resumed there reads the rest as the full scan
    does (the prose before it ends at that brace, or at the first ``}`` when every brace
    fails, where resuming splits one prose run). The braces that may succeed are the last
    ``MAX_BARE_DEPTH`` of each quote parity; the last broken opener before the resumption
    point is found by reading the text backwards from it."""
    close = body.find("}") if close is None else close
    if close < 2 * _SKIP_MIN_BRACES:  # too short a run to be worth it (or no close at all)
        return 0, -1
    openers = body.count('{"', 0, close)  # most JSON-looking braces, cheaply
    if openers < _SKIP_MIN_BRACES:
        return 0, -1
    openers += body.count('{ "', 0, close)
    if (
        openers * 4 < body.count("{", 0, close)
        or body.find("`", 0, close) >= 0
        or body.find("\\", 0, close) >= 0
        or body.find("\n", 0, close) >= 0
    ):
        return 0, -1
    # Which braces may succeed: the last MAX_BARE_DEPTH of each quote parity. They are
    # found in the braces and quotes alone, read backwards from the close (parity 0: an
    # even number of quotes between the brace and the close).
    head = body[:close]
    marks = head.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACE_OR_QUOTE)[::-1]
    found: list[int] = []  # indices in marks of the hopeful braces
    for first, then in ((_EVEN_BRACE, _EVEN_BRACE), (_ODD_BRACE_FROM_EVEN, _ODD_BRACE_FROM_ODD)):
        mark = first.match(marks)
        for _ in range(MAX_BARE_DEPTH):
            if mark is None:
                break
            found.append(mark.end())
            mark = then.match(marks, mark.end() + 1)
    back = [marks.count(b"{", 0, i) for i in found]  # how many braces follow each, before the close
    hopeful: list[int] = []
    if max(back, default=0) < _NEAR_BRACES:  # all among the last few braces: walk back to them
        at, pos = [], close
        for _ in range(max(back, default=-1) + 1):
            pos = body.rfind("{", 0, pos)
            at.append(pos)
        hopeful = [at[j] for j in back]
    else:  # the position of every brace, from the text before each
        parts = head.split("{")[:-1]
        ends = list(accumulate(map(len, parts)))  # brace k sits at ends[k] + k
        hopeful = [ends[k] + k for k in (len(parts) - 1 - j for j in back)]
    opens_json = _OPENS_JSON.match
    start = min((pos for pos in hopeful if opens_json(body, pos + 1) is not None), default=close)
    # every JSON-looking brace before start is a broken opener: the last one, found by
    # reading the text backwards (a quote, or the close, after blanks after a brace)
    last = _OPENER_BACKWARDS.search(body[start::-1])  # body[start - i] at index i
    return start, (start - last.end() + 2 if last is not None else -1)
