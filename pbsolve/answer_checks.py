"""Family-independent checks: id lists (rules, uncertain inputs), conflict sets, stated
figures, and the objective and id-list parts of an answer schema. The generic grading
flow (:mod:`pbsolve.checking`) and the mechanisms (:mod:`pbsolve.mechanisms`) use these."""

from __future__ import annotations

import math
from typing import Any

from pbsolve.schema import Instance, ObjectiveTerm

Verdict = tuple[bool, str]


def stated_int(value: Any) -> int | None:
    """An integer as an answer states it: ints, or floats with no fractional part."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def conflict_list(answer: dict[str, Any]) -> list[str] | None:
    names = answer.get("conflict")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        return None
    return names


def conflict_verdict(instance: Instance, answer: dict[str, Any]) -> Verdict:
    """The named rules must be one of the certified minimal conflicting sets."""
    named = {n.strip().upper() for n in conflict_list(answer) or []}
    known = {r.id.upper() for r in instance.rules}
    unknown = sorted(named - known)
    if unknown:
        return False, f"unknown rule ids {unknown[:5]}"
    sets = [{r.upper() for r in s} for s in instance.certificate.conflict_sets or []]
    if named in sets:
        return True, "names a minimal conflicting set"
    if any(s < named for s in sets):
        return False, "the named rules conflict, but the set is not minimal"
    return False, "the named rules can all hold together"


def validation_verdict(answer: dict[str, Any], values: dict[str, int], where: str = "objective") -> Verdict:
    """The objective figures the answer states must equal those of its own plan.

    ``where`` names the stated section in reasons ('objective', 'recovery.objective')."""
    stated = answer.get("objective")
    if not isinstance(stated, dict):
        return False, f"'{where}' figures are missing"
    for key, true_value in values.items():
        got = stated.get(key)
        if type(got) is not int:  # an int stands for itself; anything else is read by stated_int
            got = stated_int(got)
        if got is None:
            return False, f"'{where}.{key}' is missing or not an integer"
        if got != true_value:
            return False, f"'{where}' states {key}={got}; the plan gives {true_value}"
    return True, "stated figures match the plan"


def format_verdict(instance: Instance, answer: dict[str, Any], plan_ok: bool, why: str) -> Verdict:
    """The required form is the one the instance calls for: a complete plan when a plan
    exists, a declaration whose rule list names only this instance's rules when none does.

    Declaring infeasibility on a feasible instance earns no item at all, not even this
    one; and the prompt's own placeholder (``["R?", "R?"]``) is not a rule list, so a
    template copied verbatim earns nothing either.
    """
    feasible = answer.get("feasible") is True
    if instance.certificate.status == "optimal":
        return (plan_ok, why) if feasible else (False, "declares infeasibility, but a plan exists")
    if feasible:
        return False, "gives a plan, but none exists"
    named = conflict_list(answer)
    if named is None:
        return False, "'conflict' must be a non-empty list of rule ids"
    known = {r.id.upper() for r in instance.rules}
    unknown = sorted({n.strip().upper() for n in named} - known)
    if unknown:
        return False, f"'conflict' names ids that are not rules of this instance: {unknown[:5]}"
    return True, "declaration with a rule list"


def objective_schema(objective: list[ObjectiveTerm], what: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {t.id: {"type": "integer"} for t in objective},
        "required": [t.id for t in objective],
        "description": what,
    }


def ids_schema(ids: list[str], what: str, title: str) -> dict[str, Any]:
    """An answer list of ids drawn from ``ids`` (each a ``title``)."""
    return {"type": "array", "items": {"enum": ids, "title": title}, "description": what}


def id_set_verdict(named: Any, expected: list[str], known: list[str], key: str) -> tuple[bool, str]:
    """The answer's list under ``key`` must name exactly the expected ids (any order/case).

    Naming every known id passes only when every id is expected, which the generator
    rules out, so the item cannot be passed without computing the set.
    """
    if not isinstance(named, list) or not all(isinstance(n, str) for n in named):
        return False, f"'{key}' must be a list of ids"
    got = {n.strip().upper() for n in named}
    unknown = sorted(got - {k.upper() for k in known})
    if unknown:
        return False, f"'{key}' names unknown ids {unknown[:5]}"
    want = {e.upper() for e in expected}
    if got == want:
        return True, f"'{key}' is exactly right"
    missing, extra = sorted(want - got), sorted(got - want)
    return False, f"'{key}' misses {len(missing)} and wrongly adds {len(extra)}"
