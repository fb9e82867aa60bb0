"""Reading the answer out of a response: one documented policy, never an exception.

1. Everything up to and including the last ``</think>`` is ignored.
2. A response longer than ``MAX_CHARS`` (after step 1) is refused.
3. If the rest holds a fenced code block (```json or ```), the last one is the answer.
4. Otherwise the answer is the last top-level ``{...}`` object that parses as JSON
   (only the last ``MAX_OBJECT_TRIES`` candidates are tried, which bounds grading time).
5. JSON must be standard: NaN and Infinity are refused.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_CHARS = 1_000_000
MAX_OBJECT_TRIES = 50  # bare-object candidates tried, last first
_INFO = re.compile(r"[ \t]*[A-Za-z0-9_+-]*[ \t]*\r?")


@dataclass(frozen=True)
class Parsed:
    value: Any = None
    error: str | None = None
    source: str = ""  # "fenced" or "object"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def strip_thinking(text: str) -> str:
    cut = text.rfind("</think>")
    return text[cut + len("</think>") :] if cut >= 0 else text


def fenced_blocks(text: str) -> list[str]:
    """Bodies of ``` fenced blocks, in order, found in one linear pass.

    An opening fence is three backticks, an optional info word (json, ...) and a line
    break; the block runs to the next three backticks. An unclosed block is ignored.
    """
    blocks, pos = [], 0
    while True:
        open_at = text.find("```", pos)
        if open_at < 0:
            return blocks
        line_end = text.find("\n", open_at + 3)
        if line_end < 0:
            return blocks
        if not _INFO.fullmatch(text, open_at + 3, line_end):
            pos = open_at + 3  # three backticks inside a line: not a fence opener
            continue
        close_at = text.find("```", line_end + 1)
        if close_at < 0:
            return blocks
        blocks.append(text[line_end + 1 : close_at])
        pos = close_at + 3


def top_level_objects(text: str) -> list[tuple[int, int]]:
    """Spans of matched {...} pairs not nested in another matched pair, in one linear pass.

    Braces are matched with a stack, so a stray '{' in prose that never closes is simply
    left unmatched instead of swallowing the answer after it. Inside an open brace,
    JSON strings are tracked so braces within them do not count.
    """
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    in_str = escape = False
    for i, ch in enumerate(text):
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
        elif ch == '"' and stack:
            in_str = True
        elif ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            pairs.append((stack.pop(), i + 1))
    pairs.sort()
    top: list[tuple[int, int]] = []
    reach = -1
    for start, end in pairs:
        if start >= reach:
            top.append((start, end))
            reach = end
    return top


def parse_response(text: Any) -> Parsed:
    if not isinstance(text, str):
        return Parsed(error=f"response is {type(text).__name__}, not text")
    body = strip_thinking(text)
    if len(body) > MAX_CHARS:
        return Parsed(error=f"response too long ({len(body):,} characters; limit {MAX_CHARS:,})")
    if not body.strip():
        return Parsed(error="empty response" if "</think>" not in text else "nothing after </think>")
    fences = fenced_blocks(body)
    if fences:
        inner = fences[-1]
        try:
            return Parsed(value=_loads(inner), source="fenced")
        except (ValueError, RecursionError) as exc:
            return Parsed(error=f"last fenced block is not valid JSON: {str(exc)[:200]}")
    for start, end in reversed(top_level_objects(body)[-MAX_OBJECT_TRIES:]):
        try:
            return Parsed(value=_loads(body[start:end]), source="object")
        except (ValueError, RecursionError):
            continue
    return Parsed(error="no JSON object found in the response")
