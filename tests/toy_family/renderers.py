"""Toy family, language side: one sentence per rule kind and objective term, and the prompt."""

from __future__ import annotations

from typing import Any

from pbsolve import params
from pbsolve.mechanisms import PromptContext, prompt_sections
from pbsolve.schema import ObjectiveTerm, Recovery, Rule
from tests.toy_family.checkers import RULE_PARAMS, ToyData

SENTENCES: dict[str, Any] = {  # kind -> sentence of its parsed parameters
    "table_capacity": lambda p: f"No table seats more than {p.max} guests.",
    "apart": lambda p: "These guests sit at different tables: " + "; ".join(f"{a} and {b}" for a, b in p.pairs) + ".",
    "together": lambda p: "These guests share a table: " + "; ".join(f"{a} and {b}" for a, b in p.pairs) + ".",
    "avoid": lambda p: f"{p.guest} does not sit at table {p.table}.",
}
OBJECTIVES = {
    "cost": "minimise the total dislike of the guests for their tables",
    "code": "among equal plans, the one whose table numbers, read guest by guest, form the smallest number",
}


def render_rule(rule: Rule, data: dict[str, Any], task: str) -> str:
    return SENTENCES[rule.kind](params.parse(RULE_PARAMS, rule))


def render_objective(term: ObjectiveTerm, data: dict[str, Any], task: str) -> str:
    return OBJECTIVES[term.kind]


def sentence_kinds(task: str) -> frozenset[str]:
    return frozenset(SENTENCES)


def _objective_lines(terms: list[ObjectiveTerm], baseline: str = "") -> list[str]:
    return [f"{i}. ({t.id}) {t.text}" for i, t in enumerate(terms, 1)]


def render_prompt(
    data: dict[str, Any], rules: list[Rule], objective: list[ObjectiveTerm], task: str, subtask: str,
    mechanisms: list[str] | None = None, recovery: Recovery | None = None,
) -> str:  # fmt: skip
    d = ToyData.model_validate(data)
    out = [f"Seat {len(d.guests)} guests at the tables {', '.join(d.tables)}; each guest sits at exactly one table.", ""]
    out += ["**Dislikes** (guest: table=dislike):"]
    out += [f"- {g.id}: " + ", ".join(f"{t}={c}" for t, c in g.cost.items()) for g in d.guests]
    out += ["", "**Rules** (every plan must satisfy all of them):", *[f"- {r.id}: {r.text}" for r in rules]]
    out += ["", "**Objective** (in priority order):", *_objective_lines(objective)]
    out += prompt_sections(mechanisms or [], PromptContext(recovery=recovery, objective_lines=_objective_lines, verification=lambda: ""))
    return "\n".join(out)
