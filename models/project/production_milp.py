"""MILP formulation (PuLP) of Production Planning: capacitated lot sizing, the textbook way.

The second back-end: the same drafts, every rule kind written again as linear rows over
integer lots q[l,p,t] and setup binaries y[l,p,t] (q >= y, q <= max_lots * y, at most one
product per line and period), net stock as a linear expression split into held stock and
shortage (s >= net, b >= -net, both >= 0: exact at every optimum, since held stock is
costed and shortage weighted), and changeovers as binaries bounded below by
y[l,p,t-1] + run[l,t] - y[l,p,t] - 1. A changeover row only ever needs a lower bound:
the cost stage charges each changeover and a changeover cap is a upper bound over the
same binaries, so at an optimum each binary is 1 exactly when the line changes product.
The lexicographic objective is solved stage by stage by the kit
(:mod:`pbsolve.milp_kit`); ``without`` leaves one rule out (hard-tier probes).

Importing this module needs PuLP (the ``milp`` extra); nothing else in the family does.
"""

from __future__ import annotations

import itertools
from typing import Any

import pulp

from pbsolve.checkers.project import production as pp
from pbsolve.checkers.project.production import ProductionData
from pbsolve.family import Draft
from pbsolve.milp_kit import Builder, Formulation
from pbsolve.params import parse
from pbsolve.schema import ObjectiveTerm, Rule

TASK_ID = "production_planning"


def build(draft: Draft, without: str | None) -> Formulation:
    d = ProductionData.model_validate(draft.data)
    b = Builder("production")
    periods = range(1, d.periods + 1)
    total = sum(o.lots for o in d.orders)
    q: dict[tuple[str, str, int], Any] = {}
    y: dict[tuple[str, str, int], Any] = {}
    for x in d.lines:
        for t in periods:
            for p in d.products:
                q[x.id, p.id, t] = b.var(0, d.max_lots)
                y[x.id, p.id, t] = b.var(0, 1, binary=True)
                b.add(q[x.id, p.id, t] >= y[x.id, p.id, t])
                b.add(q[x.id, p.id, t] <= d.max_lots * y[x.id, p.id, t])
            b.add(pulp.lpSum([y[x.id, p.id, t] for p in d.products]) <= 1)

    def run(line: str, t: int) -> Any:
        return pulp.lpSum([y[line, p.id, t] for p in d.products])

    def lots(line: str, t: int) -> Any:
        return pulp.lpSum([q[line, p.id, t] for p in d.products])

    net: dict[tuple[str, int], Any] = {}
    stock: dict[tuple[str, int], Any] = {}
    short: dict[tuple[str, int], Any] = {}
    for p in d.products:
        for t in periods:
            made = pulp.lpSum([q[x.id, p.id, s] for x in d.lines for s in range(1, t + 1)])
            net[p.id, t] = made + p.initial - sum(d.demand[p.id][:t])
            stock[p.id, t] = b.var(0, p.initial + t * len(d.lines) * d.max_lots)
            short[p.id, t] = b.var(0, total)
            b.add(stock[p.id, t] >= net[p.id, t])
            b.add(short[p.id, t] >= -net[p.id, t])
    change: dict[tuple[str, int], Any] = {}
    for x in d.lines:
        for t in periods:
            if t == 1:
                continue
            c = b.var(0, 1, binary=True)
            for p in d.products:
                b.add(c >= y[x.id, p.id, t - 1] + run(x.id, t) - y[x.id, p.id, t] - 1)
            change[x.id, t] = c

    def rule(r: Rule) -> None:
        prm: Any = parse(pp.RULE_PARAMS, r)
        k = r.kind
        if k == "line_capability":
            for x in d.lines:
                for p in d.products:
                    if p.id not in x.makes:
                        for t in periods:
                            b.add(y[x.id, p.id, t] == 0)
        elif k == "line_capacity":
            for x in d.lines:
                for t in periods:
                    b.add(lots(x.id, t) <= x.capacity)
        elif k == "no_backlog":
            for v in net.values():
                b.add(v >= 0)
        elif k == "line_downtime":
            for t in range(prm.first, prm.last + 1):
                b.add(run(prm.line, t) == 0)
        elif k == "storage_cap":
            # held stock s >= max(0, net) can always sit at its lower bound: the cap is on that bound
            for t in periods:
                b.add(pulp.lpSum([stock[p.id, t] for p in d.products]) <= prm.max)
        elif k == "min_lot":
            for x in d.lines:
                for t in periods:
                    b.add(q[x.id, prm.product, t] >= prm.lots * y[x.id, prm.product, t])
        elif k == "max_changeovers":
            for x in d.lines:
                b.add(pulp.lpSum([change[x.id, t] for t in periods if t > 1]) <= prm.max)
        elif k == "forbidden_succession":
            for x in d.lines:
                for t in periods:
                    if t > 1:
                        b.add(y[x.id, prm.first, t - 1] + y[x.id, prm.then, t] <= 1)
        elif k == "max_runs":
            b.add(pulp.lpSum([y[x.id, prm.product, t] for x in d.lines for t in periods]) <= prm.max)
        elif k == "line_balance":
            tot = {x.id: pulp.lpSum([lots(x.id, t) for t in periods]) for x in d.lines}
            for a, c in itertools.permutations(tot, 2):
                b.add(tot[a] - tot[c] <= prm.max)
        elif k == "material_supply":
            for t in periods:
                used = pulp.lpSum([
                    p.material * q[x.id, p.id, s] for x in d.lines for p in d.products for s in range(1, t + 1)
                ])  # fmt: skip
                b.add(used <= d.material_initial + sum(d.arrivals[:t]))
        elif k == "safety_stock":
            for t in range(prm.first, d.periods + 1):
                b.add(net[prm.product, t] >= prm.min)
        elif k == "capacity_reserve":
            for line in prm.lines:
                for t in periods:
                    b.add(lots(line, t) <= d.line_by_id[line].capacity - 1)
        else:
            raise ValueError(f"no MILP row for rule kind {k!r}")

    for r in draft.rules:
        if r.id != without:
            rule(r)

    def term(tm: ObjectiveTerm) -> Any:
        if tm.kind == "backlog":
            return pulp.lpSum([p.penalty * short[p.id, t] for p in d.products for t in periods])
        if tm.kind == "cost":
            return pulp.lpSum([
                *[x.setup.get(p.id, 0) * y[x.id, p.id, t] for x in d.lines for p in d.products for t in periods],
                *[x.cost * lots(x.id, t) for x in d.lines for t in periods],
                *[x.changeover * change[x.id, t] for x in d.lines for t in periods if t > 1],
                *[p.hold * stock[p.id, t] for p in d.products for t in periods],
            ])  # fmt: skip
        if tm.kind == "changes":
            old = pp.current_plan(tm)
            moved = []
            for x in d.lines:
                for t in periods:
                    cell = old.get((x.id, t))
                    if cell is None:
                        moved.append(run(x.id, t))
                    else:
                        moved.append(b.differs(q[x.id, cell[0], t], cell[1], d.max_lots))
            return pulp.lpSum(moved)
        raise ValueError(f"no MILP expression for objective kind {tm.kind!r}")

    terms = [(tm.id, term(tm)) for tm in draft.objective]

    def decode() -> dict[str, Any]:
        rows = []
        for t in periods:
            for x in d.lines:
                for p in d.products:
                    v = round(q[x.id, p.id, t].value() or 0)
                    if v:
                        rows.append({"line": x.id, "period": t, "product": p.id, "lots": v})
        return {"production": rows}

    return b, terms, decode
