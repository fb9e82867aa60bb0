"""LLM judges: a rubric protocol like the PlanningBench critic, and a robust verdict parser.

**Protocol.** The judge sees the problem exactly as the solver of it did (the instance
prompt), the checklist (item id, tier and sentence), and the answer. It is asked to
(1) list what each item requires, (2) check the answer against each item, recomputing
any figure from the plan instead of trusting what the answer claims, (3) self-check
every item it marked satisfied, and (4) end with a JSON verdict::

    {"items": {"C1": 1, "C2": 0, ...}, "score": <fraction of items satisfied>}

**Parsing a verdict** (:func:`parse_verdict`) never raises. Everything up to the last
``</think>`` is ignored; fenced blocks are tried last first, then bare ``{...}`` objects
last first; the first candidate naming at least one checklist item wins. A verdict may
be a mapping (``{"C1": 1}``, under ``items``/``verdicts``/``checklist``/``results``/...
or at the top level), a list of ``{"id": .., "passed": ..}`` objects, or a positional
0/1 list as long as the checklist. Values read as pass: ``true``, ``1``, ``"PASS"``,
``"yes"``, ``"satisfied"``, ``"✓"``...; as fail: ``false``, ``0``, ``"FAIL"``, ``"no"``,
``"violated"``, ``"✗"``...; a nested ``{"passed": ..}`` works too. Item keys match case-
and space-insensitively (``c1``, ``C 1``, ``item C1``; a bare ``1`` for ``C1``). With no
usable JSON, lines such as ``C3: FAIL`` or ``| C3 | ... | PASS |`` are read, the last
mention of an item winning. Checklist items the verdict does not decide are *missing*;
keys that are not checklist items are *extra* (ignored); a text with no verdict at all
is a *parse failure* (every item missing), recorded, never an exception.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pbsolve.parsing import fenced_blocks, strip_thinking, top_level_objects
from pbsolve.schema import Instance

MAX_VERDICT_CHARS = 200_000  # only the tail of a longer judge output is read (the verdict ends it)
MAX_RESPONSE_CHARS = 100_000  # answers longer than this are cut in the judge prompt (and the cut is said)
MAX_CANDIDATES = 50

JUDGE_SYSTEM = (
    "You are a meticulous, strict grader of planning answers. You verify every claim yourself and never give "
    "credit for a requirement you have not checked."
)

PROTOCOL = """## How to grade

1. **Requirements.** For each checklist item, state in one line what it requires.
2. **Check.** Check the answer against each item in turn. Recompute every figure (objective values, counts,
   times) from the plan itself; do not trust figures, claims or explanations the answer states. An item is
   satisfied only if it fully holds. If the answer does not give a complete plan where one is required, every
   rule item is unsatisfied. Only the final JSON object of the answer counts; prose around it is ignored.
3. **Self-check.** Re-examine every item you marked satisfied and look for a violation you missed; change
   the verdict if you find one.
4. **Verdict.** End your reply with one fenced JSON block and nothing after it, giving every checklist item
   id with 1 (satisfied) or 0 (not satisfied), and the overall score (the fraction of items satisfied):

```json
{"items": {ITEMS}, "score": <number between 0 and 1>}
```"""


def build_judge_prompt(instance: Instance, response: str) -> str:
    """The user message of the rubric protocol for one answer to one instance."""
    text = response if isinstance(response, str) else str(response)
    note = ""
    if len(text) > MAX_RESPONSE_CHARS:
        note = f"\n[the answer was cut to its last {MAX_RESPONSE_CHARS:,} characters of {len(text):,}]"
        text = text[-MAX_RESPONSE_CHARS:]
    items = "\n".join(f"- **{it.id}** ({it.tier}): {it.text}" for it in instance.checklist)
    example = "{" + ", ".join(f'"{it.id}": <0 or 1>' for it in instance.checklist) + "}"
    return (
        "Grade an answer to a planning problem against a checklist.\n\n"
        "# The problem (as given to the solver)\n\n"
        f"{instance.prompt}\n\n"
        "# The checklist\n\n"
        f"{items}\n\n"
        "# The answer to grade\n\n"
        "<<<ANSWER\n"
        f"{text}\n"
        f"ANSWER>>>{note}\n\n" + PROTOCOL.replace("{ITEMS}", example)
    )


# -- reading a verdict ---------------------------------------------------------------
_PASS_WORDS = {
    "1", "pass", "passed", "passes", "yes", "y", "true", "t", "satisfied", "met", "ok", "okay", "correct", "holds",
    "valid", "✓", "✔", "✅", "☑", "✔️", "☑️",
}  # fmt: skip
_FAIL_WORDS = {
    "0", "fail", "failed", "fails", "no", "n", "false", "f", "violated", "unsatisfied", "unmet", "incorrect",
    "invalid", "wrong", "x", "✗", "✘", "❌", "✖", "✖️",
}  # fmt: skip
_NEGATED = re.compile(r"^(not|does not|doesn't|is not|isn't|fails? to|never)\b")
_NO_PROBLEM = re.compile(r"^no (violations?|issues?|problems?|errors?)\b")
_STRIP = " \t\r\n*_`'\".,;:!()[]{}<>|-—–"
_CONTAINERS = ("items", "verdicts", "verdict", "checklist", "results", "result", "checks", "item_scores",
               "scores", "vector", "evaluation", "evaluations", "grades", "judgement", "judgment")  # fmt: skip
_SCORE_KEYS = ("score", "overall", "overall_score", "final_score", "total", "total_score")
_ID_KEYS = ("id", "item", "item_id", "itemid", "check", "name", "key", "criterion")
_VALUE_KEYS = ("passed", "pass", "satisfied", "verdict", "result", "value", "score", "ok", "met", "status",
               "holds", "correct", "decision", "label")  # fmt: skip
_LINE_TOKEN = (
    r"(not\s+satisfied|not\s+met|passed|pass|failed|fail|satisfied|unsatisfied|violated|yes|no|true|false|"
    r"[01]|✓|✔|✅|✗|✘|❌)"
)


def coerce_pass(value: Any, _depth: int = 0) -> bool | None:
    """A judge's value for one item as pass (True) / fail (False), or None if unreadable."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return True if value == 1 else False if value == 0 else None
    if isinstance(value, str):
        word = value.strip().strip(_STRIP).strip().lower()
        if not word:
            return None
        if _NO_PROBLEM.match(word):
            return True
        if _NEGATED.match(word):
            return False
        if word in _PASS_WORDS:
            return True
        if word in _FAIL_WORDS:
            return False
        first = re.split(r"[\s:,;.()\-—–/]+", word, maxsplit=1)[0].strip(_STRIP)
        if first in _PASS_WORDS - {"t", "y"}:
            return True
        if first in _FAIL_WORDS - {"f", "n", "x"}:
            return False
        return None
    if isinstance(value, dict) and _depth < 3:
        lowered = {str(k).strip().lower(): v for k, v in value.items()}
        for key in _VALUE_KEYS:
            if key in lowered:
                return coerce_pass(lowered[key], _depth + 1)
    return None


class _Keys:
    """Judge keys -> checklist item ids (case/space-insensitive; '1' for 'C1')."""

    def __init__(self, ids: Sequence[str]) -> None:
        self.ids = list(ids)
        self.by_norm = {self.norm(i): i for i in ids}
        for i in ids:
            m = re.fullmatch(r"[A-Za-z]+(\d+)", i)
            if m:
                self.by_norm.setdefault(m.group(1), i)

    @staticmethod
    def norm(key: Any) -> str:
        text = re.sub(r"\s+", "", str(key)).strip(_STRIP).upper()
        return re.sub(r"^(ITEM|CHECK|CRITERION)#?", "", text) or text

    def get(self, key: Any) -> str | None:
        return self.by_norm.get(self.norm(key))


@dataclass
class ParsedVerdict:
    """A judge's verdict on one answer, as read from its text."""

    items: dict[str, bool] = field(default_factory=dict)  # checklist item id -> passed (decided items only)
    missing: list[str] = field(default_factory=list)  # checklist items the verdict does not decide
    extra: list[str] = field(default_factory=list)  # verdict keys that are not checklist items
    unreadable: list[str] = field(default_factory=list)  # items named with a value neither pass nor fail
    score: float | None = None  # the overall score the judge stated, if any
    error: str | None = None  # parse failure: no verdict could be read
    source: str = ""  # "json" or "lines"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _score(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if isinstance(value, str):
            m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(?:/\s*(\d+(?:\.\d+)?))?\s*%?\s*", value)
            if m:
                num, den = float(m.group(1)), float(m.group(2)) if m.group(2) else None
                value = num / den if den else num / 100 if value.strip().endswith("%") else num
            else:
                return None
        else:
            return None
    v = float(value)
    return v if v == v and 0.0 <= v <= 1.0 else None


def _pairs(value: Any, keys: _Keys, depth: int = 0) -> tuple[list[tuple[Any, Any]], float | None] | None:
    """(key, raw value) pairs and the stated score from one JSON value, or None if it
    names no checklist item."""
    if depth > 4:
        return None
    if isinstance(value, dict):
        lowered = {str(k).strip().lower(): v for k, v in value.items()}
        score = next((_score(lowered[k]) for k in _SCORE_KEYS if k in lowered and _score(lowered[k]) is not None), None)
        for name in _CONTAINERS:
            if name in lowered and isinstance(lowered[name], (dict, list)):
                found = _pairs(lowered[name], keys, depth + 1)
                if found is not None:
                    return found[0], found[1] if found[1] is not None else score
        pairs = list(value.items())
        if any(keys.get(k) is not None for k, _ in pairs):
            return [(k, v) for k, v in pairs if str(k).strip().lower() not in _SCORE_KEYS], score
        for v in value.values():  # a single wrapper of another name, e.g. {"grading": {...}}
            if isinstance(v, (dict, list)):
                found = _pairs(v, keys, depth + 1)
                if found is not None:
                    return found[0], found[1] if found[1] is not None else score
        return None
    if isinstance(value, list):
        if value and all(isinstance(x, dict) for x in value):
            pairs = []
            for x in value:
                low = {str(k).strip().lower(): v for k, v in x.items()}
                ident = next((low[k] for k in _ID_KEYS if k in low and isinstance(low[k], (str, int))), None)
                if ident is None:
                    continue
                pairs.append((ident, next((low[k] for k in _VALUE_KEYS if k in low), None)))
            if any(keys.get(k) is not None for k, _ in pairs):
                return pairs, None
            return None
        if len(value) == len(keys.ids) and value and all(coerce_pass(x) is not None for x in value):
            return list(zip(keys.ids, value)), None
    return None


def _from_pairs(pairs: list[tuple[Any, Any]], keys: _Keys, score: float | None, source: str) -> ParsedVerdict:
    items: dict[str, bool] = {}
    extra: list[str] = []
    unreadable: set[str] = set()
    for k, v in pairs:
        iid = keys.get(k)
        if iid is None:
            extra.append(str(k)[:40])
            continue
        verdict = coerce_pass(v)
        if verdict is None:
            unreadable.add(iid)
            items.pop(iid, None)
        else:
            items[iid] = verdict
            unreadable.discard(iid)
    return ParsedVerdict(
        items={i: items[i] for i in keys.ids if i in items},
        missing=[i for i in keys.ids if i not in items],
        extra=extra[:50],
        unreadable=[i for i in keys.ids if i in unreadable],
        score=score,
        source=source,
    )


def verdict_from_json(value: Any, item_ids: Sequence[str]) -> ParsedVerdict:
    """A verdict from an already-parsed JSON value (e.g. the ``items`` of a verdicts file)."""
    keys = _Keys(item_ids)
    try:
        found = _pairs(value, keys)
    except RecursionError:
        found = None
    if found is None:
        return ParsedVerdict(missing=list(item_ids), error="no checklist item in the verdict")
    return _from_pairs(found[0], keys, found[1], "json")


def _json_candidates(body: str) -> Iterator[Any]:
    for block in reversed(fenced_blocks(body)):
        try:
            yield json.loads(block)
        except (ValueError, RecursionError):
            continue
    for start, end in reversed(top_level_objects(body)[-MAX_CANDIDATES:]):
        try:
            yield json.loads(body[start:end])
        except (ValueError, RecursionError):
            continue


def _from_lines(body: str, keys: _Keys) -> ParsedVerdict | None:
    ids = sorted(keys.ids, key=len, reverse=True)
    if not ids:
        return None
    alt = "|".join(re.escape(i) for i in ids)
    sep = r"[\s*_`:=\-–—|>)\]]*"
    # the token must end its phrase ("C3: No cohort ..." restates a rule; it is no verdict)
    ends = r"(?=[\s*_`]*(?:$|[|,;:.!)\]\-—–(]))"
    direct = re.compile(
        rf"(?<![A-Za-z0-9])({alt})(?![A-Za-z0-9]){sep}{_LINE_TOKEN}(?![A-Za-z0-9]){ends}", re.IGNORECASE
    )
    at_end = re.compile(rf"(?<![A-Za-z0-9])({alt})(?![A-Za-z0-9]).*?[\s|:]{_LINE_TOKEN}[\s*_`|.!]*$", re.IGNORECASE)
    pairs: list[tuple[str, str]] = []
    for line in body.splitlines()[-5000:]:
        if len(line) > 2000:
            continue
        hits = [(m.group(1), m.group(2)) for m in direct.finditer(line)]
        if not hits:
            m = at_end.search(line)
            if m and len(re.findall(rf"(?<![A-Za-z0-9])({alt})(?![A-Za-z0-9])", line, re.IGNORECASE)) == 1:
                hits = [(m.group(1), m.group(2))]
        pairs.extend(hits)
    if not pairs:
        return None
    return _from_pairs([(k, re.sub(r"\s+", " ", v)) for k, v in pairs], keys, None, "lines")


def parse_verdict(text: Any, item_ids: Sequence[str]) -> ParsedVerdict:
    """Read a judge's per-item verdict out of its reply; never raises (see the module docstring)."""
    ids = list(item_ids)
    if not isinstance(text, str):
        return ParsedVerdict(missing=ids, error=f"judge output is {type(text).__name__}, not text")
    body = strip_thinking(text)
    if len(body) > MAX_VERDICT_CHARS:
        body = body[-MAX_VERDICT_CHARS:]
    if not body.strip():
        return ParsedVerdict(missing=ids, error="empty judge output")
    keys = _Keys(ids)
    try:
        for value in _json_candidates(body):
            found = _pairs(value, keys)
            if found is not None:
                return _from_pairs(found[0], keys, found[1], "json")
        lines = _from_lines(body, keys)
    except RecursionError:
        lines = None
    if lines is not None:
        return lines
    return ParsedVerdict(missing=ids, error="no verdict found in the judge output")


# -- running an LLM judge ------------------------------------------------------------
def verdict_line(
    instance: Instance, response_id: str, parsed: ParsedVerdict, *, raw: str | None = None, **extra: Any
) -> dict[str, Any]:
    """A verdicts-file line: ``{"id", "response_id", "items": {item: bool}}`` plus what
    the parse found (missing, extra, unreadable items, stated score, parse error)."""
    line: dict[str, Any] = {
        "id": instance.id,
        "response_id": response_id,
        "items": parsed.items,
        "missing": parsed.missing,
        "extra": parsed.extra,
        "unreadable": parsed.unreadable,
        "score": parsed.score,
        "parse_error": parsed.error,
    }
    line.update(extra)
    if raw is not None:
        line["raw"] = raw
    return line


def judge_one(client: Any, instance: Instance, response_id: str, response: str) -> dict[str, Any]:
    """Ask the judge about one answer; a request the endpoint refuses becomes a recorded
    failure (every item missing). EndpointDown/EndpointConfigError propagate."""
    from pbsolve.llm.client import RequestFailed

    ids = [it.id for it in instance.checklist]
    system = client.config.system_prompt if client.config.system_prompt is not None else JUDGE_SYSTEM
    t0 = time.perf_counter()
    try:
        c = client.ask(build_judge_prompt(instance, response), system=system)
    except RequestFailed as exc:
        parsed = ParsedVerdict(missing=ids, error=f"judge request failed: {exc}"[:300])
        return verdict_line(instance, response_id, parsed, judge=client.config.model, calls=exc.attempts,
                            seconds=round(time.perf_counter() - t0, 4), request_failed=True)  # fmt: skip
    parsed = parse_verdict(c.text, ids)
    return verdict_line(instance, response_id, parsed, raw=c.text, judge=c.model, usage=c.usage.as_dict(),
                        calls=c.attempts, seconds=round(c.seconds, 4), finish_reason=c.finish_reason)  # fmt: skip


def judge_many(client: Any, jobs: Sequence[tuple[Instance, str, str]]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(index, verdict line)`` for (instance, response id, response text) jobs, in order,
    with the client's bounded concurrency. On EndpointDown the completed lines are
    yielded first, then the error is raised (see :meth:`pbsolve.llm.LLMClient.map`)."""
    yield from client.map(lambda job: judge_one(client, *job), jobs)
