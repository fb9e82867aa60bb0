"""Family-independent checks on answers that name ids (rules, uncertain inputs)."""

from __future__ import annotations

from typing import Any


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
