"""MILP formulations (PuLP) of the quantity tasks: procurement and material allocation.

The second back-end: the same drafts, every rule kind written again as linear rows, and
the lexicographic objective solved stage by stage (optimise one term, fix it, optimise
the next). Tests and the generation benchmark hold its optimum against CP-SAT's on the
same instances; the certifier itself stays CP-SAT. The solver (HiGHS, else CBC; zero
gap), the row builder and the proven-optimal stages are the core's
(:mod:`pbsolve.milp_kit`), shared with every family's MILP back-end.

Importing this module needs PuLP (the ``milp`` extra); nothing else in the family does.
"""

from __future__ import annotations

from typing import Any

import pulp

from pbsolve.checkers.allocation import rule_params as rp
from pbsolve.checkers.allocation.data import MaterialData, ProcurementData
from pbsolve.family import Draft
from pbsolve.milp_kit import Builder, Formulation, MilpResult, MilpUnproven, solve  # noqa: F401 (MilpUnproven: re-exported)
from pbsolve.params import parse
from pbsolve.schema import ObjectiveTerm, Rule

TASKS = ("procurement_planning", "material_allocation")


# == Procurement ========================================================================
def _procurement(draft: Draft, without: str | None) -> Formulation:
    d = ProcurementData.model_validate(draft.data)
    b = Builder("procurement")
    n = len(d.periods)
    cap = {s.id: s.capacity for s in d.suppliers}
    q = {c: b.var(0, cap[c[0]]) for c in d.cells}
    y: dict[tuple[str, int], pulp.LpVariable] = {}
    for s in d.suppliers:
        for t in range(n):
            cells = [v for (x, _, u), v in q.items() if x == s.id and u == t]
            if cells:
                y[s.id, t] = yv = b.var(0, 1, binary=True)
                for v in cells:
                    b.add(v <= cap[s.id] * yv)
                b.add(pulp.lpSum(cells) >= yv)
    used: dict[tuple[str, str], pulp.LpVariable] = {}

    def use(s: str, i: str) -> pulp.LpVariable | None:
        cells = [v for (x, k, _), v in q.items() if x == s and k == i]
        if not cells:
            return None
        if (s, i) not in used:
            used[s, i] = u = b.var(0, 1, binary=True)
            for v in cells:
                b.add(v <= cap[s] * u)
            b.add(pulp.lpSum(cells) >= u)
        return used[s, i]

    arr = {
        i.id: [pulp.lpSum([v for (s, k, t), v in q.items() if k == i.id and d.arrival(s, t) == a]) for a in range(n)]
        for i in d.items
    }
    stock = {}
    for i in d.items:
        levels = []
        for t in range(n):
            levels.append(i.initial_stock + pulp.lpSum(arr[i.id][: t + 1]) - sum(i.demand[: t + 1]))
        stock[i.id] = levels

    def ordered(s: str, t: int) -> Any:
        return pulp.lpSum([v for (x, _, u), v in q.items() if x == s and u == t])

    def spend(t: int) -> Any:
        units = pulp.lpSum([d.prices[s, i] * v for (s, i, u), v in q.items() if u == t])
        return units + pulp.lpSum([d.supplier_by_id[s].fixed_cost * yv for (s, u), yv in y.items() if u == t])

    def rule(r: Rule) -> None:
        p: Any = parse(rp.RULE_PARAMS[draft.spec.task], r)
        k = r.kind
        if k in ("inventory_balance", "delay_robust"):
            for levels in stock.values():
                for level in levels:
                    b.add(level >= 0)
            if k == "delay_robust":
                for (s, i, t), v in q.items():
                    b.add(stock[i][d.arrival(s, t)] - v >= 0)
        elif k == "supplier_capacity":
            for sup in d.suppliers:
                for t in range(n):
                    b.add(ordered(sup.id, t) <= sup.capacity)
        elif k == "period_budget":
            for t in range(n):
                b.add(spend(t) <= p.max)
        elif k == "min_order":
            for s, least in p.min.items():
                for t in range(n):
                    if (s, t) in y:
                        b.add(ordered(s, t) >= least * y[s, t])
        elif k == "supplier_closed":
            for label in p.periods:
                b.add(ordered(p.supplier, d.period_index[label]) == 0)
        elif k == "dock_capacity":
            for t in range(n):
                b.add(pulp.lpSum([arr[i.id][t] for i in d.items]) <= p.max)
        elif k == "safety_stock":
            for level in stock[p.item]:
                b.add(level >= p.min)
        elif k == "stock_target":
            b.add(stock[p.item][d.period_index[p.period]] >= p.min)
        elif k == "storage_cap":
            for t in range(n):
                b.add(pulp.lpSum([stock[i.id][t] for i in d.items]) <= p.max)
        elif k == "shelf_life":
            item, span = d.item_by_id[p.item], p.periods
            for t in range(n):
                recent = pulp.lpSum(arr[item.id][max(0, t - span + 2) : t + 1]) + (
                    item.initial_stock if t <= span - 2 else 0
                )
                b.add(stock[item.id][t] <= recent)
        elif k == "supplier_share":
            total = pulp.lpSum([v for (_, i, _), v in q.items() if i == p.item])
            for sup in d.suppliers:
                mine = [v for (x, i, _), v in q.items() if x == sup.id and i == p.item]
                if mine:
                    b.add(100 * pulp.lpSum(mine) <= p.pct * total)
        elif k == "contract_minimum":
            b.add(pulp.lpSum([v for (s, _, _), v in q.items() if s == p.supplier]) >= p.min)
        elif k == "order_gap":
            for t in range(n - 1):
                if (p.supplier, t) in y and (p.supplier, t + 1) in y:
                    b.add(y[p.supplier, t] + y[p.supplier, t + 1] <= 1)
        elif k in ("single_sourcing", "dual_sourcing"):
            flags = [u for s in d.suppliers if (u := use(s.id, p.item)) is not None]
            b.add(pulp.lpSum(flags) <= 1 if k == "single_sourcing" else pulp.lpSum(flags) >= 2)
        elif k == "lot_cap":
            for v in q.values():
                b.add(v <= p.max)
        else:
            raise ValueError(f"no MILP row for rule kind {k!r}")

    for r in draft.rules:
        if r.id != without:
            rule(r)

    def term(t: ObjectiveTerm) -> Any:
        if t.kind == "total_cost":
            purchase = pulp.lpSum([d.prices[s, i] * v for (s, i, _), v in q.items()])
            fixed = pulp.lpSum([d.supplier_by_id[s].fixed_cost * yv for (s, _), yv in y.items()])
            holding = pulp.lpSum([i.holding_cost * level for i in d.items for level in stock[i.id]])
            return purchase + fixed + holding
        if t.kind == "order_score":
            number = {s.id: k for k, s in enumerate(d.suppliers, 1)}
            return pulp.lpSum([(10 * number[s] + u + 1) * v for (s, _, u), v in q.items()])
        if t.kind == "changes":
            old = {(s, i, d.period_index[label]): x for s, i, label, x in rp.current_plan(draft.spec.task, t)}
            return pulp.lpSum([b.differs(v, old.get(c, 0), cap[c[0]]) for c, v in q.items()])
        raise ValueError(f"no MILP expression for objective kind {t.kind!r}")

    terms = [(t.id, term(t)) for t in draft.objective]

    def decode() -> dict[str, Any]:
        rows = []
        for (s, i, t), v in q.items():
            x = round(v.value() or 0)
            if x > 0:
                rows.append({"quantity": x, "supplier": s, "item": i, "week": d.periods[t]})
        return {"orders": rows}

    return b, terms, decode


# == Material allocation ================================================================
def _material(draft: Draft, without: str | None) -> Formulation:
    d = MaterialData.model_validate(draft.data)
    b = Builder("material")
    x = {c: b.var(0, d.depot_by_id[c[0]].stock[c[2]]) for c in d.cells}

    def recv(site: str, m: str | None = None) -> Any:
        return pulp.lpSum([v for (_, s, k), v in x.items() if s == site and (m is None or k == m)])

    def route(depot: str, site: str) -> list[pulp.LpVariable]:
        return [v for (dp, s, _), v in x.items() if dp == depot and s == site]

    active: dict[tuple[str, str], pulp.LpVariable] = {}

    def on(depot: str, site: str) -> pulp.LpVariable | None:
        cells = route(depot, site)
        if not cells:
            return None
        if (depot, site) not in active:
            active[depot, site] = a = b.var(0, 1, binary=True)
            for v in cells:
                b.add(v <= d.depot_by_id[depot].stock[_material_of(x, v)] * a)
            b.add(pulp.lpSum(cells) >= a)
        return active[depot, site]

    fills: dict[str, pulp.LpVariable] = {}

    def fill(site: str) -> pulp.LpVariable:
        if site not in fills:
            want = d.requested(site)
            most = sum(d.depot_by_id[dp].stock[m] for (dp, s, m) in d.cells if s == site)
            fills[site] = f = b.var(0, 100 * most // want)
            b.add(want * f <= 100 * recv(site))
            b.add(100 * recv(site) <= want * f + want - 1)
        return fills[site]

    def rule(r: Rule) -> None:
        p: Any = parse(rp.RULE_PARAMS[draft.spec.task], r)
        k = r.kind
        if k == "depot_stock":
            for dp in d.depots:
                for m, have in dp.stock.items():
                    b.add(pulp.lpSum([v for (a, _, c), v in x.items() if a == dp.id and c == m]) <= have)
        elif k == "request_cap":
            for s in d.sites:
                for m, want in s.requests.items():
                    b.add(recv(s.id, m) <= want)
        elif k == "route_closed":
            b.add(pulp.lpSum(route(p.depot, p.site)) == 0)
        elif k == "truck_capacity":
            for dp in d.depots:
                for s in d.sites:
                    b.add(pulp.lpSum(route(dp.id, s.id)) <= p.max)
        elif k == "depot_throughput":
            b.add(pulp.lpSum([v for (a, _, _), v in x.items() if a == p.depot]) <= p.max)
        elif k == "min_guarantee":
            for s in p.sites:
                b.add(recv(s, p.material) >= p.min)
        elif k == "site_intake":
            b.add(recv(p.site) <= p.max)
        elif k == "transport_budget":
            b.add(pulp.lpSum([d.cost[a][s] * v for (a, s, _), v in x.items()]) <= p.max)
        elif k == "fill_gap":
            for a in d.sites:
                for c in d.sites:
                    if a.id != c.id:
                        b.add(fill(a.id) - fill(c.id) <= p.max)
        elif k == "priority_order":
            for a, c in zip(p.sites, p.sites[1:]):
                b.add(fill(a) >= fill(c))
        elif k == "single_source":
            for s in p.sites:
                flags = [f for dp in d.depots if (f := on(dp.id, s)) is not None]
                b.add(pulp.lpSum(flags) <= 1)
        elif k == "min_shipment":
            for dp in d.depots:
                for s in d.sites:
                    flag = on(dp.id, s.id)
                    if flag is not None:
                        b.add(pulp.lpSum(route(dp.id, s.id)) >= p.min * flag)
        elif k == "share_cap":
            total = pulp.lpSum([v for (_, _, m), v in x.items() if m == p.material])
            for s in d.sites:
                b.add(100 * recv(s.id, p.material) <= p.pct * total)
        elif k == "depot_failure":
            for (_, site, m), v in x.items():
                b.add(2 * v <= recv(site, m))
        else:
            raise ValueError(f"no MILP row for rule kind {k!r}")

    for r in draft.rules:
        if r.id != without:
            rule(r)

    def term(t: ObjectiveTerm) -> Any:
        if t.kind == "shortage":
            return pulp.lpSum([s.priority * (want - recv(s.id, m)) for s in d.sites for m, want in s.requests.items()])
        if t.kind == "transport_cost":
            return pulp.lpSum([d.cost[a][s] * v for (a, s, _), v in x.items()])
        if t.kind == "route_score":
            dn = {dp.id: k for k, dp in enumerate(d.depots, 1)}
            sn = {s.id: k for k, s in enumerate(d.sites, 1)}
            mn = {m.id: k for k, m in enumerate(d.materials, 1)}
            return pulp.lpSum([mn[m] * (10 * dn[a] + sn[s]) * v for (a, s, m), v in x.items()])
        if t.kind == "changes":
            old = {(a, s, m): q for a, s, m, q in rp.current_plan(draft.spec.task, t)}
            return pulp.lpSum([b.differs(v, old.get(c, 0), d.depot_by_id[c[0]].stock[c[2]]) for c, v in x.items()])
        raise ValueError(f"no MILP expression for objective kind {t.kind!r}")

    terms = [(t.id, term(t)) for t in draft.objective]

    def decode() -> dict[str, Any]:
        rows = []
        for (a, s, m), v in x.items():
            q = round(v.value() or 0)
            if q > 0:
                rows.append({"units": q, "depot": a, "site": s, "material": m})
        return {"shipments": rows}

    return b, terms, decode


def _material_of(x: dict[tuple[str, str, str], pulp.LpVariable], v: pulp.LpVariable) -> str:
    return next(c[2] for c, w in x.items() if w is v)


BUILDERS = {"procurement_planning": _procurement, "material_allocation": _material}


def optimum(
    draft: Draft, without: str | None = None, time_limit: float = 60.0, backend: str | None = None
) -> MilpResult:
    """The lexicographic optimum of a draft by MILP (optionally with one rule off); the
    backend is HiGHS unless ``backend="CBC"`` or HiGHS is missing."""
    return solve(BUILDERS[draft.spec.task], draft, without, time_limit, backend)
