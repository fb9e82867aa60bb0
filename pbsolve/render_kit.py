"""The family kit's language side: what every family's prompt text shares.

A task type's prompt module fills one :class:`TaskText` (its sentences, one per rule kind
and objective kind, the body of its prompt, its verification request and the words of
the shared closing sections); :class:`FamilyRenderer` turns a family's texts into the
functions of the :class:`pbsolve.family.Renderer` protocol, with the closing sections
(uncertain inputs, rules, objective, and each mechanism's own) shared. Facts are stated
once, rules carry their stable ids and the objective's priority order is explicit; the
answer-format section is appended by the core from the answer schema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pbsolve.kit import parsed
from pbsolve.mechanisms import PromptContext, prompt_sections
from pbsolve.params import ParamsTable, parse
from pbsolve.schema import ObjectiveTerm, Recovery, Rule

Sentence = Callable[[Any, Any], str]  # (task data, the item's Params model) -> text
Body = Callable[[Any, str, list[ObjectiveTerm], list[Rule]], list[str]]  # (data, subtask, objective, rules) -> lines


@dataclass
class TaskText:
    """A task type's prompt text; its module fills it with the decorators below."""

    task: str
    data_type: type[Any]  # the task's data model (a pydantic model with ``uncertain``; frozen: parsed once per content)
    rule_params: ParamsTable  # rule kind -> parameter model
    term_params: ParamsTable  # objective kind -> parameter model
    worst_case: str  # which values are least favourable, for the uncertain-inputs section
    current: str = "the current plan"  # what a replanning prompt calls the plan being repaired
    sentences: dict[str, Sentence] = field(default_factory=dict)
    objectives: dict[str, Sentence] = field(default_factory=dict)
    body_fn: Body | None = None
    verification_fn: Callable[[Any], str] | None = None

    def rule(self, kind: str) -> Callable[[Sentence], Sentence]:
        """Register the sentence of a rule kind."""

        def register(fn: Sentence) -> Sentence:
            self.sentences[kind] = fn
            return fn

        return register

    def objective(self, kind: str) -> Callable[[Sentence], Sentence]:
        """Register the sentence of an objective kind."""

        def register(fn: Sentence) -> Sentence:
            self.objectives[kind] = fn
            return fn

        return register

    def body(self, fn: Body) -> Body:
        """Register the prompt body: the situation and the data tables."""
        self.body_fn = fn
        return fn

    def verification(self, fn: Callable[[Any], str]) -> Callable[[Any], str]:
        """Register the sentence asking for the verification figures."""
        self.verification_fn = fn
        return fn


def and_list(items: list[str]) -> str:
    items = [str(x) for x in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def plural(n: int | str, word: str, many: str | None = None) -> str:
    """'1 shift', '3 shifts', '4–6 shifts (uncertain input U1)': ``n`` may be a rendered figure."""
    return f"{n} {word if str(n) == '1' else (many or word + 's')}"


def of_unit(n: int | str, unit: str) -> str:
    """A quantity in a unit named in the plural by the instance's data ('crates', 'boxes',
    'kg'): '1 crate', '1 box', '1 kg', '5 boxes'."""
    if str(n) != "1" or not unit.endswith("s"):
        return f"{n} {unit}"
    one = unit[:-2] if unit.endswith(("xes", "ches", "shes", "sses")) else unit[:-1]
    return f"{n} {one}"


def a_or_an(noun: str) -> str:
    """'a ward', 'an observation ward', 'an X-ray room', 'an MRI scanner': the indefinite
    article by the sound of the first letter, spelled out where the first word is an
    abbreviation (none of the names pbsolve samples starts with a silent h or a 'you' sound)."""
    first = noun.split(" ", 1)[0].split("-", 1)[0]
    spelled = len(first) > 0 and (first.isupper() and len(first) <= 4)  # read letter by letter: 'X', 'MRI'
    vowel_sound = first[:1].upper() in "AEFHILMNORSX" if spelled else noun[:1].lower() in "aeiou"
    return f"{'an' if vowel_sound else 'a'} {noun}"


def labelled(word: str, items: list[str]) -> str:
    """'skill legal', 'skills strategy and legal': a list after its label, which agrees in number."""
    return f"{word if len(items) == 1 else word + 's'} {and_list(items)}"


def ranged(d: Any, kind: str, target: str, value: int) -> str:
    """'40–60 (uncertain input U1)' for an uncertain input, else the value."""
    for u in d.uncertain:
        if u.kind == kind and u.target == target:
            return f"{u.low}–{u.high} (uncertain input {u.id})"
    return str(value)


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


class FamilyRenderer:
    """The functions of a family's renderer module (the :class:`pbsolve.family.Renderer`
    protocol) over its task texts; the module binds them: ``render_rule =
    FAMILY_RENDERER.render_rule`` and so on."""

    def __init__(self, texts: Mapping[str, TaskText]) -> None:
        self.texts = dict(texts)

    def sentence_kinds(self, task: str) -> frozenset[str]:
        """The rule kinds ``render_rule`` has a sentence for in ``task`` (the family contract)."""
        return frozenset(self.texts[task].sentences)

    def render_rule(self, rule: Rule, data: dict[str, Any], task: str) -> str:
        text = self.texts[task]
        fn = text.sentences.get(rule.kind)
        if fn is None:
            raise ValueError(f"no sentence for rule kind {rule.kind!r} in {task}")
        return fn(parsed(text.data_type, data), parse(text.rule_params, rule))

    def render_objective(self, term: ObjectiveTerm, data: dict[str, Any], task: str) -> str:
        text = self.texts[task]
        fn = text.objectives.get(term.kind)
        if fn is None:
            raise ValueError(f"no sentence for objective kind {term.kind!r} in {task}")
        return fn(parsed(text.data_type, data), parse(text.term_params, term))

    def render_prompt(
        self,
        data: dict[str, Any],
        rules: list[Rule],
        objective: list[ObjectiveTerm],
        task: str,
        subtask: str,
        mechanisms: list[str] | None = None,
        recovery: Recovery | None = None,
    ) -> str:
        return render_prompt(self.texts[task], data, rules, objective, subtask, mechanisms, recovery)


def render_prompt(
    text: TaskText,
    data: dict[str, Any],
    rules: list[Rule],
    objective: list[ObjectiveTerm],
    subtask: str,
    mechanisms: list[str] | None = None,
    recovery: Recovery | None = None,
) -> str:
    """The prompt of one task text: its body, the uncertain inputs, the rules, the objective
    and each mechanism's section."""
    d = parsed(text.data_type, data)
    mechanisms = mechanisms or []
    assert text.body_fn is not None and text.verification_fn is not None, text.task
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
