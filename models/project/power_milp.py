"""MILP formulation (PuLP) of Power Dispatch Planning: the textbook unit-commitment MILP.

The second back-end: the same drafts, every rule kind written again as linear rows over
integer outputs p[u,h], binaries on[u,h] and start[u,h] (start-ups and shut-downs exact,
so minimum up and down times are rows over them), integer battery flows and levels, and
the shed and curtailed energy as exact max / min expressions with one binary each
(big-M from the variables' bounds). The lexicographic objective is solved stage by stage
(:mod:`pbsolve.milp_kit`); ``without`` leaves one rule out for the hard-tier probes.
Tests and the generation benchmark hold its optimum against CP-SAT's on the same
instances; the certifier itself stays CP-SAT.

Importing this module needs PuLP (the ``milp`` extra); nothing else in the family does.
"""

from __future__ import annotations

from typing import Any

import pulp

from pbsolve.checkers.project import power as pw
from pbsolve.checkers.project.power import Plan, PowerData
from pbsolve.family import Draft
from pbsolve.milp_kit import Builder, Formulation
from pbsolve.params import parse
from pbsolve.schema import Rule

TASK_ID = pw.TASK_ID


def _max0(b: Builder, expr: Any, lo: int, hi: int) -> Any:
    """A variable equal to max(0, expr), for an integer ``expr`` within [lo, hi]."""
    if hi <= 0:
        return 0
    v = b.var(0, hi)
    if lo >= 0:
        b.add(v == expr)
        return v
    z = b.var(0, 1, binary=True)  # z = 1: expr >= 0 and v = expr; z = 0: v = 0
    b.add(v >= expr)
    b.add(v <= expr - lo * (1 - z))
    b.add(v <= hi * z)
    return v


def _min_with(b: Builder, cap: int, v: Any, hi: int) -> Any:
    """A variable equal to min(cap, v), for v within [0, hi]."""
    if hi <= cap:
        return v
    c = b.var(0, cap)
    y = b.var(0, 1, binary=True)  # y = 1: c = cap; y = 0: c = v
    b.add(c <= cap)
    b.add(c <= v)
    b.add(c >= cap - cap * (1 - y))
    b.add(c >= v - hi * y)
    return c


def build(draft: Draft, without: str | None) -> Formulation:
    d = PowerData.model_validate(draft.data)
    b = Builder("power_dispatch")
    H = range(d.hours)
    units = d.units
    p = {(u.id, h): b.var(0, u.pmax) for u in units for h in H}
    on = {(u.id, h): b.var(0, 1, binary=True) for u in units for h in H}
    start = {(u.id, h): b.var(0, 1, binary=True) for u in units for h in H}
    for u in units:
        for h in H:
            b.add(p[u.id, h] <= u.pmax * on[u.id, h])
            b.add(p[u.id, h] >= on[u.id, h])
            prev = on[u.id, h - 1] if h else 0
            b.add(start[u.id, h] >= on[u.id, h] - prev)
            b.add(start[u.id, h] <= on[u.id, h])
            b.add(start[u.id, h] <= 1 - prev)
    bat = d.battery
    flow: list[Any] = []
    level: list[Any] = []
    if bat is not None:
        for h in H:
            flow.append(b.var(-bat.charge, bat.discharge))
            level.append(b.var(0, bat.capacity))
            b.add(level[h] == (level[h - 1] if h else bat.initial) - flow[h])
    charge = bat.charge if bat else 0
    discharge = bat.discharge if bat else 0
    top = sum(u.pmax for u in units) + discharge
    net = [pulp.lpSum([p[u.id, h] for u in units]) + (flow[h] if bat else 0) for h in H]
    shed = [_max0(b, d.demand[h] - d.available(h) - net[h], d.demand[h] - d.available(h) - top,
                  d.demand[h] - d.available(h) + charge) for h in H]  # fmt: skip

    def curtailed(h: int) -> Any:
        r = d.available(h)
        over = _max0(b, r + net[h] - d.demand[h], r - d.demand[h] - charge, r + top - d.demand[h])
        return _min_with(b, r, over, max(0, r + top - d.demand[h]))

    def spare(h: int, but: str | None = None) -> Any:
        return pulp.lpSum([u.pmax * on[u.id, h] - p[u.id, h] for u in units if u.id != but])

    def hours(first: int, last: int) -> range:
        return range(first, min(last, d.hours - 1) + 1)

    def rule(r: Rule) -> None:
        q: Any = parse(pw.RULE_PARAMS, r)
        k = r.kind
        if k == "power_balance":
            for h in H:
                b.add(net[h] <= d.demand[h])
        elif k == "output_limits":
            for u in units:
                for h in H:
                    b.add(p[u.id, h] >= u.pmin * on[u.id, h])
        elif k == "must_run":
            for uid in q.units:
                for h in H:
                    b.add(on[uid, h] == 1)
        elif k == "critical_load":
            for h in H:
                b.add(shed[h] <= d.demand[h] - d.critical_at(h))
        elif k == "unit_outage":
            for h in hours(q.first, q.last):
                b.add(p[q.unit, h] == 0)
        elif k == "derate":
            for h in hours(q.first, q.last):
                b.add(p[q.unit, h] <= q.mw)
        elif k == "spinning_reserve":
            for h in H:
                b.add(spare(h) >= q.mw)
        elif k == "trip_reserve":
            for h in H:
                for u in units:
                    b.add(spare(h, u.id) >= p[u.id, h])
        elif k == "fuel_limit":
            b.add(pulp.lpSum([p[q.unit, h] for h in H]) <= q.mwh)
        elif k == "max_starts":
            b.add(pulp.lpSum([start[q.unit, h] for h in H]) <= q.max)
        elif k == "ramp_limits":
            for u in units:
                for h in range(1, d.hours):
                    slack = u.pmax * (2 - on[u.id, h] - on[u.id, h - 1])
                    b.add(p[u.id, h] - p[u.id, h - 1] <= u.ramp + slack)
                    b.add(p[u.id, h - 1] - p[u.id, h] <= u.ramp + slack)
        elif k == "min_up_time":
            for u in units:
                for h in H:
                    for t in range(h + 1, min(d.hours, h + u.min_up)):
                        b.add(on[u.id, t] >= start[u.id, h])
        elif k == "min_down_time":
            for u in units:
                for h in range(1, d.hours):
                    stop = on[u.id, h - 1] - on[u.id, h] + start[u.id, h]  # exactly 1 when shut down in h
                    for t in range(h + 1, min(d.hours, h + u.min_down)):
                        b.add(on[u.id, t] <= 1 - stop)
        elif k == "curtailment_cap":
            b.add(pulp.lpSum([curtailed(h) for h in H]) <= q.mwh)
        elif k == "battery_floor":
            for x in level:
                b.add(x >= q.mwh)
        elif k == "battery_end":
            b.add(level[-1] >= q.mwh)
        else:
            raise ValueError(f"no MILP rows for rule kind {k!r}")

    for r in draft.rules:
        if r.id != without:
            rule(r)

    terms: list[tuple[str, Any]] = []
    for t in draft.objective:
        if t.kind == "unserved":
            terms.append((t.id, pulp.lpSum(shed)))
        elif t.kind == "cost":
            terms.append((
                t.id,
                pulp.lpSum([u.cost * p[u.id, h] + u.startup * start[u.id, h] for u in units for h in H]),
            ))  # fmt: skip
        elif t.kind == "battery_reserve":
            terms.append((t.id, pulp.lpSum([bat.capacity - x for x in level]) if bat else 0))
        elif t.kind == "changes":
            old = pw.current_plan(t)
            moved = [b.differs(p[u.id, h], old[u.id][h], u.pmax) for u in units for h in H]
            if pw.BATTERY in old and bat is not None:
                moved += [b.differs(flow[h], old[pw.BATTERY][h], charge + discharge) for h in H]
            terms.append((t.id, pulp.lpSum(moved)))
        else:
            raise ValueError(f"no MILP term for objective kind {t.kind!r}")

    def decode() -> dict[str, Any]:
        output = {u.id: tuple(round(p[u.id, h].value()) for h in H) for u in units}
        flows = tuple(round(x.value()) for x in flow) if bat else (0,) * d.hours
        return {"dispatch": pw.TASK.plan_json(d, Plan(output, flows))}

    return b, terms, decode
