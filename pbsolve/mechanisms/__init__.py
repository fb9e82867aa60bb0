"""Hard-tier and reporting mechanisms, designed once in the core and supported by every family.

Each mechanism is one module here exposing ``MECHANISM`` (a :class:`~pbsolve.mechanisms.base.Mechanism`):
it declares its checklist items, certificate fields, answer-schema fragment, prompt section,
reference-answer fragment and verdicts, and the core iterates over :data:`MECHANISMS`.
Adding a mechanism is adding a module (plus the family hooks it needs, if the family must
compute something). The solver side -- how a draft becomes the harder, certified question
-- is :mod:`pbsolve.mechanisms.certification` (which loads OR-Tools; this package does not,
so grading-only processes can use the registry).

* ``infeasibility_detection`` -- no plan; name a certified minimal conflicting rule set.
* ``min_change_replanning`` -- repair a disrupted plan with the certified minimum of changes.
* ``robustness_design`` -- backups that survive every listed single failure (a family rule).
* ``exception_recovery`` -- a second, certified-optimal plan for a named scenario.
* ``local_incompleteness`` -- ranged inputs; name those whose worst case costs something.
* ``explainability`` -- name the rules that bind the optimum.
* ``conflict_validation`` (medium, reporting) -- report verification figures of the plan.
"""

from __future__ import annotations

import importlib
import pkgutil

from pbsolve.mechanisms.base import Item, Mechanism, PromptContext

_NOT_MECHANISMS = frozenset({"base", "certification"})


def _discover() -> tuple[Mechanism, ...]:
    """Every module of this package that exposes ``MECHANISM``, ordered by position."""
    found: list[Mechanism] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name in _NOT_MECHANISMS:
            continue
        mech = getattr(importlib.import_module(f"{__name__}.{info.name}"), "MECHANISM", None)
        if not isinstance(mech, Mechanism):
            raise TypeError(f"pbsolve.mechanisms.{info.name} exposes no MECHANISM (a Mechanism instance)")
        if mech.id != info.name:
            raise ValueError(
                f"pbsolve.mechanisms.{info.name} declares id {mech.id!r}: a mechanism's module is named by its id"
            )
        found.append(mech)
    positions = [m.position for m in found]
    if len(set(positions)) != len(positions):
        raise ValueError(f"two mechanisms share a position: {sorted((m.position, m.id) for m in found)}")
    return tuple(sorted(found, key=lambda m: m.position))


MECHANISMS: tuple[Mechanism, ...] = _discover()
BY_ID: dict[str, Mechanism] = {m.id: m for m in MECHANISMS}
# The hard mechanisms (and kinds) in the order certification applies them; the reporting kinds (medium tier).
HARD_MECHANISMS: tuple[Mechanism, ...] = tuple(
    sorted((m for m in MECHANISMS if m.kind == "hard"), key=lambda m: m.certify_order)
)
HARD_KINDS: tuple[str, ...] = tuple(m.id for m in HARD_MECHANISMS)
REPORTING_KINDS: tuple[str, ...] = tuple(m.id for m in MECHANISMS if m.kind == "reporting")
# Mechanisms by where their prompt sections stand.
IN_PROMPT_ORDER: tuple[Mechanism, ...] = tuple(sorted(MECHANISMS, key=lambda m: m.prompt_position))
# Checklist item rule -> the mechanism that adds it.
ITEM_OWNERS: dict[str, Mechanism] = {rule: m for m in MECHANISMS for rule in sorted(m.item_rules())}


__all__ = [
    "BY_ID",
    "HARD_KINDS",
    "HARD_MECHANISMS",
    "IN_PROMPT_ORDER",
    "ITEM_OWNERS",
    "MECHANISMS",
    "REPORTING_KINDS",
    "Item",
    "Mechanism",
    "PromptContext",
    "prompt_sections",
]


def prompt_sections(mechanisms: list[str], ctx: PromptContext) -> list[str]:
    """The prompt sections of the mechanisms an instance carries, in prompt order (they
    follow the objective); the family supplies the data-dependent parts through ``ctx``."""
    out: list[str] = []
    for m in IN_PROMPT_ORDER:
        if m.present(mechanisms, ctx.recovery):
            out += m.prompt(ctx)
    return out
