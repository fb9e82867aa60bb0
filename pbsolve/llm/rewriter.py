"""The LLM rewriter (``--renderer llm``) and its fidelity guard.

An LLM may only reword the *narrative* of a template prompt: the family renderer's text,
before the answer-format section. pbsolve appends the answer-format section itself,
verbatim, after the rewrite; the model never sees or writes it. Every rewrite passes
the fidelity guard or is not used. The guard (pure functions, :func:`check_rewrite`)
demands, against the template text:

1. **names**: every entity name and id of the instance that the template shows
   (people, rooms, events and their names, slots, equipment, rule and scenario ids,
   objective keys) is still present, spelled the same;
2. **numbers**: every number and time keeps its number of occurrences, and no new
   number appears, so changing one number is caught even when its new value occurs
   elsewhere (numbers inside names such as "Cohort 2" belong to the name; list
   ordinals "1." are replaced by check 4);
3. **no new ids, keys or number words**: no id-like token (R9, M7), no `backticked`
   key and no number word ("three") that the template does not have;
4. **facts stay bound, in order**: each template line that starts with an id or name
   (a rule, a person, a room, an event, an objective term, a schedule entry) has a
   line in the rewrite that holds that id with all the names and numbers of the
   template line; every other line that states facts has them within a few lines of
   one paragraph (a sentence may be split); and these come in the template's order.
   So a rewrite cannot move a number or a name from one rule or entity to another, or
   reorder priorities;
5. **nothing else**: no code fence, no answer-format section, not empty, and a
   length between ``MIN_RATIO`` and ``MAX_RATIO`` of the template's.

A rejected rewrite is retried (the model is told why); after ``attempts`` tries the
template text is used. The instance records which text it carries and why in
``provenance.renderer`` ("llm" or "template") and ``provenance.rewrite``.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pbsolve.answer_format import render_answer_format
from pbsolve.llm.client import LLMClient, LLMConfig, LLMError, Usage
from pbsolve.schema import Instance, RewriteRecord

MIN_RATIO = 0.5
MAX_RATIO = 2.5

# A number or a time (09:00, 9:00, 14, 2.5) not glued to a word (P1, R3, BIO-L1 are ids).
_NUMBER = re.compile(r"(?<![\w.:])(\d{1,2}:\d{2}|\d+(?:\.\d+)?)(?![\w:]|\.\d)")
_ORDINAL = re.compile(r"^(\s*)\d+[.)](?=\s)", re.MULTILINE)
_ID = re.compile(r"(?<![\w-])[A-Z]+(?:-[A-Z]+)?\d+(?![\w-])")
_KEY = re.compile(r"`([^`\n]+)`")
_BULLET = re.compile(r"^\s*(?:[-*•]\s+|\d+[.)]\s+)?(?:\*\*)?")
NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand "
    "once twice thrice half double triple dozen".split()
)
_WORD = re.compile(r"[A-Za-z]+")

SYSTEM_PROMPT = """You reword the statements of planning problems so that the same problem reads differently.
Rules:
- Keep every fact. Write every name and id (such as R3, M2, Cohort A, Mon P1), every number and every time exactly as in the original, with digits as digits.
- Add nothing: no new number, name, id, example, hint, assumption or fact. Drop nothing. Do not solve the problem.
- Keep each rule, person, room, item and schedule entry on a line of its own that starts with its id or name, in the original order.
- Keep text in `backticks` exactly as it is, backticks included.
- Output only the reworded statement: no preamble, no code fences, and no answer format (one is appended separately)."""

USER_PROMPT = "Reword this problem statement. Vary the wording and sentence structure; keep every fact.\n\n<statement>\n{narrative}\n</statement>"
RETRY_PROMPT = (
    "That rewrite was rejected because it changed the facts: {reasons}. "
    "Reword the original statement again, keeping every name, id, number and time exactly as written."
)


# -- the guard (pure) -----------------------------------------------------------------------
@functools.lru_cache(maxsize=4096)
def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])")


def _has(text: str, name: str) -> bool:
    return name in text and _name_pattern(name).search(text) is not None


def _is_number(text: str) -> bool:
    return _NUMBER.fullmatch(text) is not None


def instance_names(instance: Instance) -> list[str]:
    """Candidate entity names and ids of an instance: ``id`` and ``name`` values and list
    items anywhere in its data, rule and scenario ids, objective keys. Numbers and times are
    left to the number check; lowercase phrases ("the day") are not names."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("id", "name") and isinstance(value, str):
                    found.add(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                if isinstance(value, str):
                    found.add(value)
                else:
                    walk(value)

    walk(instance.data)
    found.update(r.id for r in instance.rules)
    found.update(t.id for t in instance.objective)
    if instance.recovery is not None:
        found.update(r.id for r in instance.recovery.scenario)
        found.update(t.id for t in instance.recovery.objective)
    return sorted(
        n for n in found
        if len(n.strip()) >= 2 and not _is_number(n.strip()) and not (n == n.lower() and " " in n)
    )  # fmt: skip


@functools.lru_cache(maxsize=256)
def _digit_names(names: tuple[str, ...]) -> re.Pattern[str] | None:
    with_digits = sorted((n for n in names if any(ch.isdigit() for ch in n)), key=len, reverse=True)
    if not with_digits:
        return None
    return re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, with_digits)) + r")(?![\w-])")


def _mask(text: str, names: list[str]) -> str:
    """Names holding digits ("Cohort 2", "Interview round 1") hidden from the number count."""
    pattern = _digit_names(tuple(names))
    return pattern.sub(" \x00 ", text) if pattern is not None else text


def numbers(text: str, names: list[str]) -> Counter[str]:
    """Numbers and times of a text, with their counts (names and list ordinals excluded)."""
    return Counter(m.group(1) for m in _NUMBER.finditer(_ORDINAL.sub(r"\1", _mask(text, names))))


def _number_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() in NUMBER_WORDS}


@dataclass(frozen=True)
class FactLine:
    """A template line that states facts: its names and numbers must stay together."""

    anchor: str | None  # the id, name or `key` leading the line (a rule, an entity, an objective term)
    names: frozenset[str]
    numbers: Counter[str]
    text: str


def fact_lines(template: str, names: list[str]) -> list[FactLine]:
    keys = sorted(set(_KEY.findall(template)), key=len, reverse=True)
    by_length = sorted(names, key=len, reverse=True)
    out = []
    for line in template.splitlines():
        bullet = _BULLET.match(line)
        head = line[bullet.end() :] if bullet else line
        anchor = next((f"`{k}`" for k in keys if head.startswith(f"`{k}`")), None)
        if anchor is None:
            anchor = next((n for n in by_length if head.startswith(n) and _has(head[: len(n) + 1], n)), None)
        line_names = frozenset(n for n in names if _has(line, n)) | frozenset(
            f"`{k}`" for k in keys if f"`{k}`" in line
        )
        line_numbers = numbers(line, names)
        if anchor is not None or line_names or line_numbers:
            out.append(FactLine(anchor, line_names, line_numbers, line.strip()))
    return out


@dataclass(frozen=True)
class _Seen:
    """The names (and `keys`) and numbers one line, or a window of lines, of a rewrite holds."""

    names: frozenset[str]
    numbers: Counter[str]

    def __add__(self, other: _Seen) -> _Seen:
        return _Seen(self.names | other.names, self.numbers + other.numbers)


def _seen(line: str, names: list[str]) -> _Seen:
    keys = frozenset(f"`{k}`" for k in _KEY.findall(line))
    return _Seen(frozenset(n for n in names if _has(line, n)) | keys, numbers(line, names))


def _gaps(fact: FactLine, seen: _Seen) -> list[str]:
    """The facts of ``fact`` that ``seen`` lacks (its anchor first)."""
    if fact.anchor is not None and fact.anchor not in seen.names:
        return [fact.anchor]
    missing = [n for n in sorted(fact.names) if n not in seen.names]
    return missing + [num for num, c in sorted(fact.numbers.items()) if seen.numbers[num] < c]


def _window(lines: list[str], seen: list[_Seen], j: int, fact: FactLine, span: int = 3) -> _Seen:
    """Line j alone for a led line; otherwise up to ``span`` lines of j's paragraph
    (a sentence may be split in two)."""
    out = seen[j]
    if fact.anchor is None:
        for k in range(j + 1, min(j + span, len(lines))):
            if not lines[k].strip():
                break
            out = out + seen[k]
    return out


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def check_rewrite(template: str, rewrite: str, names: Iterable[str]) -> list[str]:
    """Every way ``rewrite`` departs from the facts of ``template``; empty when it keeps them.

    ``names`` are the instance's candidate names (:func:`instance_names`); those the
    template shows are required.
    """
    problems: list[str] = []
    text = rewrite.strip()
    if not text:
        return ["the rewrite is empty"]
    if "```" in text:
        problems.append("the rewrite contains a code fence")
    if re.search(r"(?im)^\s*#*\s*answer format", text) or '"feasible"' in text:
        problems.append("the rewrite writes an answer format (pbsolve appends it)")
    ratio = len(text) / max(len(template.strip()), 1)
    if not MIN_RATIO <= ratio <= MAX_RATIO:
        problems.append(f"the rewrite is {ratio:.2f} times the template's length (allowed {MIN_RATIO}–{MAX_RATIO})")

    shown = [n for n in dict.fromkeys(names) if _has(template, n)]
    problems += [f"name {n!r} is missing" for n in shown if not _has(text, n)]

    want, got = numbers(template, shown), numbers(text, shown)
    for num in sorted(set(want) | set(got), key=lambda x: (float(x.replace(":", ".")), x)):
        if want[num] == got[num]:
            continue
        if want[num] == 0:
            problems.append(f"new number {num}")
        else:
            problems.append(f"number {num}: {want[num]}× in the template, {got[num]}× in the rewrite")

    new_ids = sorted(set(_ID.findall(text)) - set(_ID.findall(template)))
    problems += [f"new id {i}" for i in new_ids]
    template_keys = set(_KEY.findall(template))
    problems += [f"`{k}` is missing" for k in sorted(template_keys) if f"`{k}`" not in text]
    problems += [f"new `{k}`" for k in sorted(set(_KEY.findall(text)) - template_keys)]
    problems += [f"new number word {w!r}" for w in sorted(_number_words(text) - _number_words(template))]

    lines = text.splitlines()
    seen = [_seen(line, shown) for line in lines]
    at = 0
    for fact in fact_lines(template, shown):
        gaps_at = [_gaps(fact, _window(lines, seen, j, fact)) for j in range(len(lines))]
        hit = next((j for j in range(at, len(lines)) if not gaps_at[j]), None)
        if hit is not None:
            at = hit
            continue
        if any(not g for g in gaps_at[:at]):
            problems.append(f"the facts of {_short(fact.text)!r} are out of the template's order")
            continue
        led = [g for g in gaps_at if fact.anchor is None or g != [fact.anchor]]
        gaps = min(led, key=len) if led else [fact.anchor]
        lead = f"{fact.anchor} with " if fact.anchor is not None else ""
        problems.append(f"no line keeps {lead}{', '.join(map(str, gaps))} together (template: {_short(fact.text)!r})")
    return problems


# -- the rewriter -------------------------------------------------------------------------
def split_prompt(instance: Instance) -> tuple[str, str]:
    """(narrative, answer-format section) of a template-rendered prompt."""
    fmt = render_answer_format(instance.answer_schema)
    if not instance.prompt.endswith("\n\n" + fmt):
        raise ValueError(f"{instance.id}: the prompt does not end with its answer-format section")
    return instance.prompt[: -len(fmt) - 2], fmt


def normalize(text: str) -> str:
    """Strip what is not the statement: reasoning before ``</think>``, an outer code fence,
    the ``<statement>`` tags of the request."""
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    text = text.strip()
    fenced = re.fullmatch(r"```[\w-]*\n(.*?)\n?```", text, flags=re.DOTALL)
    if fenced:
        text = fenced.group(1).strip()
    text = re.sub(r"^\s*<statement>\s*|\s*</statement>\s*$", "", text)
    return text.strip()


@dataclass
class RewriteResult:
    narrative: str
    record: RewriteRecord


def rewrite_narrative(narrative: str, names: list[str], client: LLMClient, attempts: int = 3) -> RewriteResult:
    """Ask for a rewrite up to ``attempts`` times; the first that passes the guard is used,
    else the template narrative. Call failures (endpoint down) end the tries at once."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": client.config.system_prompt or SYSTEM_PROMPT},
        {"role": "user", "content": USER_PROMPT.format(narrative=narrative)},
    ]
    reasons: list[str] = []
    usage = Usage()
    calls = 0
    for attempt in range(1, attempts + 1):
        try:
            completion = client.chat(messages)
        except LLMError as exc:
            calls += exc.attempts
            reasons.append(f"attempt {attempt}: call failed: {exc}"[:500])
            break
        calls += completion.attempts
        usage = usage + completion.usage
        candidate = normalize(completion.text)
        problems = check_rewrite(narrative, candidate, names)
        if not problems:
            record = RewriteRecord(model=client.config.model, accepted=True, attempts=attempt, reasons=reasons,
                                   calls=calls, tokens=usage.total_tokens)  # fmt: skip
            return RewriteResult(candidate, record)
        reasons.append(
            f"attempt {attempt}: "
            + "; ".join(problems[:8])
            + (f"; … ({len(problems)} in all)" if len(problems) > 8 else "")
        )
        messages += [
            {"role": "assistant", "content": completion.text},
            {"role": "user", "content": RETRY_PROMPT.format(reasons="; ".join(problems[:8]))},
        ]
    record = RewriteRecord(model=client.config.model, accepted=False, attempts=len(reasons), reasons=reasons,
                           calls=calls, tokens=usage.total_tokens)  # fmt: skip
    return RewriteResult(narrative, record)


def rewrite_instance(instance: Instance, client: LLMClient, attempts: int = 3) -> Instance:
    """The instance with its narrative reworded (or kept), the answer format appended
    verbatim, and the outcome recorded in its provenance."""
    narrative, fmt = split_prompt(instance)
    result = rewrite_narrative(narrative, instance_names(instance), client, attempts)
    provenance = instance.provenance.model_copy(
        update={"renderer": "llm" if result.record.accepted else "template", "rewrite": result.record}
    )
    return instance.model_copy(update={"prompt": result.narrative + "\n\n" + fmt, "provenance": provenance})


_CLIENTS: dict[str, LLMClient] = {}
_CLIENTS_LOCK = threading.Lock()


def client_for(config: LLMConfig) -> LLMClient:
    """One client per configuration per process (generation worker processes each get one)."""
    key = config.model_dump_json()
    with _CLIENTS_LOCK:
        if key not in _CLIENTS:
            _CLIENTS[key] = LLMClient(config)
        return _CLIENTS[key]


def rewrite_summary(instances: Iterable[Instance]) -> str | None:
    """'llm renderer: 8 rewritten, 2 on the template text (…)' or None without rewrites."""
    records = [i.provenance.rewrite for i in instances if i.provenance.rewrite is not None]
    if not records:
        return None
    accepted = sum(r.accepted for r in records)
    failed = [r for r in records if not r.accepted]
    calls = sum("call failed" in (r.reasons[-1] if r.reasons else "") for r in failed)
    tokens = sum(r.tokens for r in records)
    text = f"llm renderer: {accepted} rewritten, {len(failed)} on the template text"
    if failed:
        text += f" ({len(failed) - calls} failed the fidelity guard, {calls} had a failed call)"
    return text + f"; {sum(r.calls for r in records)} calls, {tokens} tokens"
