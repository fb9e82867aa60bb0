"""MILP twin of Warehouse Planning (PuLP, found by :mod:`pbsolve.models.project.milp`).

Slotting is an assignment problem with side rows, the textbook MILP: binary x[i,s] (item
i in slot s, one slot per item) and the zone sums y[i,z] as linear expressions in x. Each
rule kind is written again, independently of the CP-SAT encoders, as linear rows; the
disjunctive kinds (hazard classes at least k aisles apart, a zone's load switching its
upper levels off, a spare slot) use a binary and big-M rows with the tightest M the data
allows. The objective terms are the CP-SAT model's, optimised in lexicographic stages by
:mod:`pbsolve.milp_kit`; the certifier stays CP-SAT, and the tests hold the two against
each other.
"""

from __future__ import annotations

import itertools
from typing import Any

import pulp

from pbsolve.checkers.project import warehouse as wh
from pbsolve.checkers.project.warehouse import WarehouseData
from pbsolve.family import Draft
from pbsolve.milp_kit import Builder, Formulation
from pbsolve.params import parse

TASK_ID = wh.TASK_ID


def build(draft: Draft, without: str | None = None) -> Formulation:
    """The rows of every rule but ``without`` (a rule id), the objective terms in order and a decoder."""
    d = WarehouseData.model_validate(draft.data)
    b = Builder("warehouse")
    x = {(i.id, s.id): b.var(0, 1, binary=True) for i in d.items for s in d.slots}
    n = len(d.items)
    for i in d.items:
        b.add(pulp.lpSum(x[i.id, s.id] for s in d.slots) == 1)

    def in_zone(iid: str, zone: str) -> Any:
        return pulp.lpSum(x[iid, s.id] for s in d.slots if s.zone == zone)

    def count(sid: str) -> Any:
        return pulp.lpSum(x[i.id, sid] for i in d.items)

    def aisle(iid: str) -> Any:
        return pulp.lpSum(s.aisle * x[iid, s.id] for s in d.slots)

    def load(zone: str) -> Any:
        return pulp.lpSum(i.weight * in_zone(i.id, zone) for i in d.items)

    top_aisle = max(s.aisle for s in d.slots)
    for r in draft.rules:
        if r.id == without:
            continue
        p: Any = parse(wh.RULE_PARAMS, r)
        kind = r.kind
        if kind == "slot_exclusive":
            for s in d.slots:
                b.add(count(s.id) <= 1)
        elif kind == "zone_capacity":
            for z in d.zones:
                b.add(load(z.id) <= z.max_load)
        elif kind == "chilled":
            for iid in p.items:
                b.add(pulp.lpSum(in_zone(iid, z.id) for z in d.zones if z.temperature == "chilled") == 1)
        elif kind == "heavy_low":
            for i in d.items:
                if i.weight >= p.min_weight:
                    b.add(pulp.lpSum(x[i.id, s.id] for s in d.slots if s.level > p.max_level) == 0)
        elif kind in ("reserved_slots", "slot_closed"):
            for sid in p.slots if kind == "reserved_slots" else [p.slot]:
                b.add(count(sid) == 0)
        elif kind == "hazard_zone":
            for a in d.of_class(p.classes[0]):
                for c in d.of_class(p.classes[1]):
                    for z in d.zones:
                        b.add(in_zone(a, z.id) + in_zone(c, z.id) <= 1)
        elif kind == "secure_zone":
            for iid in p.items:
                b.add(in_zone(iid, p.zone) == 1)
        elif kind == "affinity":
            for a, c in p.pairs:
                b.add(aisle(a) - aisle(c) <= p.max_aisles)
                b.add(aisle(c) - aisle(a) <= p.max_aisles)
        elif kind == "hazard_distance":
            big = top_aisle + p.min_aisles  # |aisle difference| < top_aisle
            for a in d.of_class(p.classes[0]):
                for c in d.of_class(p.classes[1]):
                    later = b.var(0, 1, binary=True)
                    b.add(aisle(a) - aisle(c) >= p.min_aisles - big * (1 - later))
                    b.add(aisle(c) - aisle(a) >= p.min_aisles - big * later)
        elif kind == "zone_pick_cap":
            for z in d.zones:
                b.add(pulp.lpSum(i.picks * in_zone(i.id, z.id) for i in d.items) <= p.max)
        elif kind == "fast_movers":
            for i in d.items:
                if i.picks >= p.min_picks:
                    b.add(pulp.lpSum(x[i.id, s.id] for s in d.slots if s.distance > p.max_distance) == 0)
        elif kind == "same_zone":
            for group in p.groups:
                for a, c in itertools.pairwise(group):
                    for z in d.zones:
                        b.add(in_zone(a, z.id) == in_zone(c, z.id))
        elif kind == "load_threshold":
            over = b.var(0, 1, binary=True)
            total = sum(i.weight for i in d.items)
            b.add(load(p.zone) <= p.threshold + total * over)
            for s in d.slots:
                if s.zone == p.zone and s.level >= p.level:
                    b.add(count(s.id) <= n * (1 - over))
        elif kind == "spare_slot":
            for zid in p.zones:
                empties = []
                for s in d.slots:
                    if s.zone == zid:
                        e = b.var(0, 1, binary=True)
                        b.add(count(s.id) <= n * (1 - e))
                        empties.append(e)
                b.add(pulp.lpSum(empties) >= 1)
        else:
            raise ValueError(f"no MILP rows for rule kind {kind!r}")

    terms: list[tuple[str, Any]] = []
    for t in draft.objective:
        if t.kind == "pick_path":
            expr = pulp.lpSum(i.picks * s.distance * x[i.id, s.id] for i in d.items for s in d.slots)
        elif t.kind == "lift_effort":
            expr = pulp.lpSum(i.weight * s.level * x[i.id, s.id] for i in d.items for s in d.slots)
        elif t.kind == "changes":
            old = wh.current_plan(t)
            expr = pulp.lpSum(1 - x[i.id, old[i.id]] for i in d.items)
        else:
            raise ValueError(f"unknown objective kind {t.kind!r}")
        terms.append((t.id, expr))

    def decode() -> dict[str, Any]:
        rows = []
        for i in d.items:
            sid = next(s.id for s in d.slots if (pulp.value(x[i.id, s.id]) or 0) > 0.5)
            rows.append({"item": i.id, "slot": sid})
        return {"slotting": rows}

    return b, terms, decode
