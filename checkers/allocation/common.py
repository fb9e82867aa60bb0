"""What the allocation task types share beyond the core's grading flow.

A task type supplies a :class:`TaskChecker` (the core's :class:`pbsolve.checking.TaskChecker`
plus a baseline plan and the plan's JSON form); the generic flow turns it into a verdict
per checklist item and an answer schema (:mod:`pbsolve.checking`). Nothing here imports
the solver models.
"""

from __future__ import annotations

import json
from typing import Any

from pbsolve import checking
from pbsolve.answer_checks import stated_int  # noqa: F401 (re-exported)
from pbsolve.checking import Check, exact_names, figures_schema, norm  # noqa: F401 (re-exported)
from pbsolve.mechanisms.base import Verdict
from pbsolve.schema import Instance

OK: Verdict = (True, "holds")
MAX_QUANTITY = 10**9


class Names(dict[str, str]):
    """Normalised name -> the name, for the names of one kind (a plain dict to read);
    ``exact`` answers the same for the spellings the instance itself uses
    (:func:`pbsolve.checking.exact_names`), so reading an answer rarely normalises."""

    __slots__ = ("exact",)

    def __init__(self, names: list[str]) -> None:
        super().__init__({norm(n): n for n in names})
        self.exact = exact_names(self, names)

    def find(self, text: str) -> str | None:
        """``self.get(norm(text))``."""
        hit = self.exact.get(text)
        return hit if hit is not None else self.get(norm(text))


def lookup(names: list[str]) -> Names:
    return Names(names)


def row_names(row: Any, k: int, what: str, fields: dict[str, Names]) -> tuple[list[str] | None, str]:
    """The names row ``k`` (0-based) of a plan gives under each of ``fields`` (field -> the
    names it may take), each as the data spells it; or None and why not: the row is not an
    object, a field is not a string, or names nothing the data has (the first, in field
    order). ``what`` names a row in the reason ("shipment 3 names unknown site 'X'")."""
    if not isinstance(row, dict):
        return None, f"{what} {k + 1} is not an object"
    given = [row.get(field) for field in fields]
    if not all(isinstance(text, str) for text in given):
        quoted = [f"'{field}'" for field in fields]
        return None, f"{what} {k + 1} needs string fields {', '.join(quoted[:-1])} and {quoted[-1]}"
    found: list[str] = []
    for (field, names), text in zip(fields.items(), map(str, given), strict=True):
        hit = names.find(text)
        if hit is None:
            return None, f"{what} {k + 1} names unknown {field} {text[:40]!r}"
        found.append(hit)
    return found, ""


class TaskChecker(checking.TaskChecker):
    """An allocation task type's grading side; subclasses fill every method."""

    family = "allocation"

    def plan_json(self, data: Any, plan: Any) -> Any:
        raise NotImplementedError

    def baseline_plan(self, data: Any, instance: Instance) -> Any:
        raise NotImplementedError


def baseline_answer(tc: TaskChecker, instance: Instance) -> str:
    """A greedy plan (the task's own heuristic) with its own figures: valid JSON, often
    wrong -- realistic failures for exercising the pipeline offline."""
    data = tc.data(instance)
    plan = tc.baseline_plan(data, instance)
    _, values = tc.evaluate(data, [], instance.objective, plan, tc.typed(instance))
    return json.dumps({"feasible": True, tc.plan_key: tc.plan_json(data, plan), "objective": values})
