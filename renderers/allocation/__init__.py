"""Template prompts for the Allocation & Matching family.

Every fact is stated once, rules carry their stable ids, and the objective with its
tie-break order is explicit. The answer-format section is appended by the core from the
answer schema. Each task type has its own module (its sentences, one per rule kind and
objective kind, and the body of its prompt) that fills one :class:`TaskText`; the
closing sections (rules, objective, recovery, explanation, uncertainty, verification)
are shared and live here.
"""

from __future__ import annotations

from typing import Any

from pbsolve.checkers.allocation import rule_params as rp
from pbsolve.mechanisms import PromptContext, prompt_sections
from pbsolve.params import parse
from pbsolve.renderers.allocation import education, grouping, material, procurement
from pbsolve.renderers.allocation.text import Sentence, TaskText
from pbsolve.schema import ObjectiveTerm, Recovery, Rule

TEXTS: dict[str, TaskText] = {m.TEXT.task: m.TEXT for m in (procurement, material, education, grouping)}
SENTENCES: dict[str, dict[str, Sentence]] = {task: text.sentences for task, text in TEXTS.items()}


def sentence_kinds(task: str) -> frozenset[str]:
    """The rule kinds ``render_rule`` has a sentence for in ``task`` (the family contract)."""
    return frozenset(TEXTS[task].sentences)


def render_rule(rule: Rule, data: dict[str, Any], task: str) -> str:
    text = TEXTS[task]
    fn = text.sentences.get(rule.kind)
    if fn is None:
        raise ValueError(f"no sentence for rule kind {rule.kind!r} in {task}")
    return fn(text.data_type.model_validate(data), parse(rp.RULE_PARAMS[task], rule))


def render_objective(term: ObjectiveTerm, data: dict[str, Any], task: str) -> str:
    text = TEXTS[task]
    fn = text.objectives.get(term.kind)
    if fn is None:
        raise ValueError(f"no sentence for objective kind {term.kind!r} in {task}")
    return fn(text.data_type.model_validate(data), parse(rp.TERM_PARAMS[task], term))


def _objective_lines(objective: list[ObjectiveTerm], current: str, baseline: str | None = None) -> list[str]:
    lines = ["Minimise, in this order of priority:"]
    for i, term in enumerate(objective, 1):
        text = term.text.replace(current, baseline) if baseline else term.text
        lines.append(f"{i}. `{term.id}` — {text}.")
    if len(objective) > 1:
        lines.append(
            "A plan is better when its first figure is smaller; only when first figures are equal does the "
            "second decide, and so on."
        )
    return lines


def render_prompt(
    data: dict[str, Any],
    rules: list[Rule],
    objective: list[ObjectiveTerm],
    task: str,
    subtask: str,
    mechanisms: list[str] | None = None,
    recovery: Recovery | None = None,
) -> str:
    text = TEXTS[task]
    d = text.data_type.model_validate(data)
    mechanisms = mechanisms or []
    assert text.body_fn is not None and text.verification_fn is not None, task
    verify = text.verification_fn
    out = text.body_fn(d, subtask, objective, rules)
    if d.uncertain:
        out += [
            "",
            "**Uncertain inputs:** the values marked as ranges (" + ", ".join(u.id for u in d.uncertain) + ") are not "
            "known exactly yet. Your plan must satisfy every rule for every value in each range; "
            + text.worst_case
            + ".",
        ]
    out += ["", "**Rules** (every plan must satisfy all of them):"]
    out += [f"- {r.id}: {r.text}" for r in rules]
    out += ["", "**Objective:**", *_objective_lines(objective, text.current)]
    out += prompt_sections(
        mechanisms,
        PromptContext(
            recovery=recovery,
            objective_lines=lambda terms, baseline: _objective_lines(terms, text.current, baseline),
            verification=lambda: verify(d),
        ),
    )
    return "\n".join(out)
