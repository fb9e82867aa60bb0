"""The canonical content hash of an instance's problem: what deduplication and leak-free
splits compare.

Two instances pose the same problem when their task, data, rules, objective, hard-tier
mechanisms and recovery scenario are the same, whatever their ids, seeds, subtask label
or wording. The hash is taken over a canonical JSON form of exactly those parts: rule
ids and every rendered text are left out, rules are sorted (their numbering is
presentation; the objective keeps its order, which is its priority), and JSON objects are
written with sorted keys. Anything that changes what a correct answer is changes the hash.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pbsolve.schema import Instance, ObjectiveTerm, Rule

HASH_VERSION = "pbsolve-problem/1"  # part of every hash: a change of the canonical form changes every hash


def _rule(r: Rule) -> dict[str, Any]:
    return {"kind": r.kind, "tier": r.tier, "params": r.params}


def _term(t: ObjectiveTerm) -> dict[str, Any]:
    return {"kind": t.kind, "params": t.params}


def canonical_problem(inst: Instance) -> dict[str, Any]:
    """The parts of ``inst`` that define its problem, in canonical form."""
    rules = sorted((_rule(r) for r in inst.rules), key=lambda x: json.dumps(x, sort_keys=True))
    recovery = None
    if inst.recovery is not None:
        recovery = {
            "scenario": sorted((_rule(r) for r in inst.recovery.scenario), key=lambda x: json.dumps(x, sort_keys=True)),
            "objective": [_term(t) for t in inst.recovery.objective],
        }
    return {
        "version": HASH_VERSION,
        "task": inst.task,
        "data": inst.data,
        "rules": rules,
        "objective": [_term(t) for t in inst.objective],
        "mechanisms": sorted(inst.mechanisms),
        "recovery": recovery,
    }


def problem_hash(inst: Instance) -> str:
    """sha256 (hex) of :func:`canonical_problem`: equal exactly when the problems are."""
    text = json.dumps(canonical_problem(inst), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
