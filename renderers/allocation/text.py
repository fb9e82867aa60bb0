"""What the allocation task modules share: English helpers and :class:`TaskText`, the one
object in which a task type's prompt module declares everything the family renderer
needs from it (its sentences, objective sentences, prompt body, verification request and
the words of the shared closing sections)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pbsolve.checkers.allocation.data import EducationData, GroupingData, MaterialData, ProcurementData
from pbsolve.schema import ObjectiveTerm, Rule

Sentence = Callable[[Any, Any], str]  # (task data, the item's Params model) -> text
Body = Callable[[Any, str, list[ObjectiveTerm], list[Rule]], list[str]]  # (data, subtask, objective, rules) -> lines


@dataclass
class TaskText:
    """A task type's prompt text; its module fills it with the decorators below."""

    task: str
    data_type: type[ProcurementData | MaterialData | EducationData | GroupingData]
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


ROBUST_KINDS = frozenset({"teacher_backup", "dropout_robust", "depot_failure", "delay_robust"})


def disrupted(rules: list[Rule]) -> str:
    """'the disruption in R6' -- the hard-tier rule that is not a robustness rule is the
    disruption of a minimum-change replanning instance; the header names it."""
    ids = [r.id for r in rules if r.tier == "hard" and r.kind not in ROBUST_KINDS]
    return (
        f"the disruption in {and_list(ids)}, which it breaks"
        if ids
        else "the disruption among the rules, which it breaks"
    )


def counting(units: list[str], what: str) -> str:
    """Limits over several items add their quantities; say how, so that 'units' of
    kg, litres and reels are one stated measure."""
    kinds = sorted(set(units))
    if len(kinds) == 1:
        return f"Wherever a limit counts units of several {what} together, it adds their quantities in {kinds[0]}."
    return (
        f"The {what} come in different units ({and_list(kinds)}); wherever a limit counts units of several {what} "
        f"together, every unit counts as 1 whatever it measures (for example 3 {kinds[0]} and 2 {kinds[1]} are "
        f"5 units)."
    )


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def ranged(d: Any, kind: str, target: str, value: int) -> str:
    """'40–60 (uncertain input U1)' for an uncertain input, else the value."""
    for u in d.uncertain:
        if u.kind == kind and u.target == target:
            return f"{u.low}–{u.high} (uncertain input {u.id})"
    return str(value)
