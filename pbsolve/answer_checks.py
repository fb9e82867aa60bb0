"""Family-independent checks: id lists (rules, uncertain inputs), conflict sets, stated
figures, and the objective part of an answer schema. Every family's checker uses these."""

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


def validation_verdict(answer: dict[str, Any], values: dict[str, int]) -> Verdict:
    """The objective figures the answer states must equal those of its own plan."""
    stated = answer.get("objective")
    if not isinstance(stated, dict):
        return False, "'objective' figures are missing"
    for key, true_value in values.items():
        got = stated_int(stated.get(key))
        if got is None:
            return False, f"'objective.{key}' is missing or not an integer"
        if got != true_value:
            return False, f"states {key}={got}; the plan gives {true_value}"
    return True, "stated figures match the plan"


def objective_schema(objective: list[ObjectiveTerm], what: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {t.id: {"type": "integer"} for t in objective},
        "required": [t.id for t in objective],
        "description": what,
    }


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


def recovery_verdicts(verdicts: dict[str, Verdict], values: dict[str, int], best: dict[str, int]) -> dict[str, Verdict]:
    """The exception-recovery items for a complete recovery plan, from the family's rule
    verdicts and objective figures for it (changes counted from the answer's main plan)."""
    broken = [f"{rid}: {reason}" for rid, (ok, reason) in verdicts.items() if not ok]
    return {
        "recovery:format": (True, "complete recovery plan"),
        "recovery:rules": (not broken, "; ".join(broken)[:300] or "every rule and the scenario hold"),
        "recovery:objective": (values == best, f"recovery scores {values}; certified optimum {best}"),
    }
