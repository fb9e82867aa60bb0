"""Reading the answer out of a response: one documented policy, never an exception.

1. Everything up to and including the last ``</think>`` is ignored.
2. A response longer than ``MAX_CHARS`` (after step 1) is refused.
3. If the rest holds a fenced code block (```json or ```), the last one is the answer.
4. Otherwise the answer is the last top-level ``{...}`` object that parses as JSON.
5. JSON must be standard: NaN and Infinity are refused.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_CHARS = 1_000_000
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n(.*?)```", re.DOTALL)


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


def _top_level_objects(text: str) -> list[tuple[int, int]]:
    """Spans of balanced {...} at depth 0, in one linear pass (strings tracked inside)."""
    spans, depth, start, in_str, escape = [], 0, -1, False, False
    for i, ch in enumerate(text):
        if depth and in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"' and depth:
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
    return spans


def parse_response(text: Any) -> Parsed:
    if not isinstance(text, str):
        return Parsed(error=f"response is {type(text).__name__}, not text")
    body = strip_thinking(text)
    if len(body) > MAX_CHARS:
        return Parsed(error=f"response too long ({len(body):,} characters; limit {MAX_CHARS:,})")
    if not body.strip():
        return Parsed(error="empty response" if "</think>" not in text else "nothing after </think>")
    fences = _FENCE.findall(body)
    if fences:
        lang, inner = fences[-1]
        try:
            return Parsed(value=_loads(inner), source="fenced")
        except (ValueError, RecursionError) as exc:
            return Parsed(error=f"last fenced block is not valid JSON: {str(exc)[:200]}")
    for start, end in reversed(_top_level_objects(body)):
        try:
            return Parsed(value=_loads(body[start:end]), source="object")
        except (ValueError, RecursionError):
            continue
    return Parsed(error="no JSON object found in the response")
