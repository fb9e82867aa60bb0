"""MILP formulation (PuLP) of Urban Traffic Planning: an integer multi-commodity flow over
the listed candidate routes.

The second back-end: the same drafts, every rule kind written again as linear rows over
integers x[r,p] (vehicles of route r's flow on r in period p; a flow's x in a period sum
to its demand) and, for robustness, binaries y[f,r] (f's backup route), with the
lexicographic objective solved stage by stage (optimise one term, pin it, optimise the
next). Congestion is the convex piecewise cost of each (road, period): an excess e >= load
- free, e >= 0, minimised (exact at every stage's optimum). Tests and the generation
benchmark hold its optimum against CP-SAT's on the same instances; the certifier itself
stays CP-SAT. The solver (HiGHS, else CBC; zero gap), the row builder and the
proven-optimal stages are the core's (:mod:`pbsolve.milp_kit`).

Importing this module needs PuLP (the ``milp`` extra); nothing else in the family does.
"""

from __future__ import annotations

import itertools
from typing import Any

import pulp

from pbsolve.checkers.routing import traffic as tr
from pbsolve.checkers.routing.traffic import Ends, Plan, TrafficData
from pbsolve.family import Draft
from pbsolve.milp_kit import Builder, Formulation, MilpResult, MilpUnproven, solve  # noqa: F401 (MilpUnproven: re-exported)
from pbsolve.params import parse
from pbsolve.schema import ObjectiveTerm, Rule

TASKS = ("urban_traffic_planning",)


def _traffic(draft: Draft, without: str | None) -> Formulation:
    d = TrafficData.model_validate(draft.data)
    b = Builder("urban_traffic")
    x = {(r.id, p): b.var(0, d.demand(r.flow, p)) for r in d.routes for p in d.periods}
    for f in d.flows:
        for p in d.periods:
            b.add(pulp.lpSum([x[r.id, p] for r in d.routes_of[f.id]]) == d.demand(f.id, p))
    robust = any(r.kind == "incident_backup" for r in draft.rules)  # y exists even with the rule off, as in CP-SAT
    y = {(f.id, r.id): b.var(0, 1, binary=True) for f in d.flows for r in d.routes_of[f.id]} if robust else {}
    for f in d.flows if robust else ():
        b.add(pulp.lpSum([y[f.id, r.id] for r in d.routes_of[f.id]]) == 1)

    def load(e: Ends, p: str) -> Any:
        return pulp.lpSum([x[rid, p] for rid in d.routes_on.get(e, ())])

    def most(e: Ends, p: str) -> int:
        return sum(d.demand(d.route_by_id[rid].flow, p) for rid in d.routes_on.get(e, ()))

    def rule(r: Rule) -> None:
        p: Any = parse(tr.RULE_PARAMS, r)
        k = r.kind
        if k == "road_capacity":
            for e in d.used_roads:
                for period in d.periods:
                    b.add(load(e, period) <= d.capacity_of[e])
        elif k == "road_closure":
            shut = {frozenset(x_) for x_ in p.roads}
            for period in p.periods:
                for rt in d.routes:
                    if shut & set(d.route_roads[rt.id]):
                        b.add(x[rt.id, period] == 0)
        elif k == "priority_bound":
            for (rid, _), v in x.items():
                if d.route_by_id[rid].flow in p.flows and d.route_minutes[rid] > p.minutes:
                    b.add(v == 0)
        elif k == "zone_limit":
            for period in d.periods:
                b.add(pulp.lpSum([x[rt.id, period] for rt in d.routes if p.place in rt.places]) <= p.max)
        elif k == "route_ban":
            banned = {frozenset(x_) for x_ in p.roads}
            for (rid, _), v in x.items():
                if d.route_by_id[rid].flow in p.flows and banned & set(d.route_roads[rid]):
                    b.add(v == 0)
        elif k == "detour_limit":
            for (rid, _), v in x.items():
                if tr.detour(d, rid) > p.minutes:
                    b.add(v == 0)
        elif k == "split_limit":
            for f in d.flows:
                for i, period in enumerate(d.periods):
                    used = []
                    for rt in d.routes_of[f.id]:
                        u = b.var(0, 1, binary=True)
                        b.add(x[rt.id, period] <= f.demand[i] * u)
                        used.append(u)
                    b.add(pulp.lpSum(used) <= p.max)
        elif k == "main_route_share":
            for fid in p.flows:
                main = d.routes_of[fid][0].id
                for period in d.periods:
                    b.add(100 * x[main, period] >= p.percent * d.demand(fid, period))
        elif k == "corridor_balance":
            one, two = frozenset(p.first), frozenset(p.second)
            for period in d.periods:
                b.add(load(one, period) - load(two, period) <= p.max)
                b.add(load(two, period) - load(one, period) <= p.max)
        elif k == "route_stability":
            for rt in d.routes:
                for before, after in itertools.pairwise(d.periods):
                    b.add(x[rt.id, after] - x[rt.id, before] <= p.max)
                    b.add(x[rt.id, before] - x[rt.id, after] <= p.max)
        elif k == "exposure_budget":
            for road in p.roads:
                b.add(pulp.lpSum([load(frozenset(road), period) for period in d.periods]) <= p.max)
        elif k == "congestion_recovery":
            for e in d.used_roads:
                free = d.level_of[e].free
                over: list[Any] = []
                for period in d.periods:
                    big = most(e, period) - free
                    if big <= 0:
                        over.append(None)
                        continue
                    o = b.var(0, 1, binary=True)
                    b.add(load(e, period) <= free + big * o)
                    over.append(o)
                for one_, two_ in itertools.pairwise(over):
                    if one_ is not None and two_ is not None:
                        b.add(one_ + two_ <= 1)
        elif k == "incident_backup":
            _incident_backup([frozenset(x_) for x_ in p.roads])
        else:
            raise ValueError(f"no MILP row for rule kind {k!r}")

    def _incident_backup(failing: list[Ends]) -> None:
        """Backups avoid the failing roads; w[f,b,e,p] >= (f's vehicles along e) - M (1 - y[f,b])
        are the vehicles moved onto b when e fails in p; every road stays within capacity."""
        for (_, rid), v in y.items():
            if set(d.route_roads[rid]) & set(failing):
                b.add(v == 0)
        for e in failing:
            for i, period in enumerate(d.periods):
                onto: dict[Ends, list[Any]] = {}
                for f in d.flows:
                    along = [x[rt.id, period] for rt in d.routes_of[f.id] if e in d.route_roads[rt.id]]
                    if not along or not f.demand[i]:
                        continue
                    for bk in d.routes_of[f.id]:
                        if set(d.route_roads[bk.id]) & set(failing):
                            continue
                        w = b.var(0, f.demand[i])
                        b.add(w >= pulp.lpSum(along) - f.demand[i] * (1 - y[f.id, bk.id]))
                        for q in d.route_roads[bk.id]:
                            onto.setdefault(q, []).append(w)
                for q in d.used_roads:
                    left = [x[rid, period] for rid in d.routes_on[q] if e in d.route_roads[rid]]
                    b.add(load(q, period) - pulp.lpSum(left) + pulp.lpSum(onto.get(q, [])) <= d.capacity_of[q])

    for r in draft.rules:
        if r.id != without:
            rule(r)

    def term(t: ObjectiveTerm) -> Any:
        if t.kind == "network_minutes":
            parts = [d.route_minutes[rid] * v for (rid, _), v in x.items()]
            for e in d.used_roads:
                lv = d.level_of[e]
                for period in d.periods:
                    if most(e, period) > lv.free:
                        ex = b.var(0, most(e, period) - lv.free)
                        b.add(ex >= load(e, period) - lv.free)
                        parts.append(lv.delay * ex)
            return pulp.lpSum(parts)
        if t.kind == "priority_minutes":
            return pulp.lpSum([
                d.route_minutes[rid] * v for (rid, _), v in x.items() if d.flow_by_id[d.route_by_id[rid].flow].priority
            ])  # fmt: skip
        if t.kind == "diverted":
            return pulp.lpSum([v for (rid, _), v in x.items() if d.route_number[rid] != 1])
        if t.kind == "order_score":
            return pulp.lpSum([
                d.flow_by_id[d.route_by_id[rid].flow].points * d.route_number[rid] * v for (rid, _), v in x.items()
            ])  # fmt: skip
        if t.kind == "backup_score":
            return pulp.lpSum([d.flow_by_id[fid].points * d.route_number[rid] * v for (fid, rid), v in y.items()])
        if t.kind == "changes":
            old = {(r_, p_): v_ for r_, p_, v_ in tr.CurrentFlows.model_validate(t.params).existing}
            parts = []
            for c, v in x.items():
                if old.get(c, 0) > 0:
                    m = b.var(0, old[c])
                    b.add(m >= old[c] - v)
                    parts.append(m)
            return pulp.lpSum(parts)
        raise ValueError(f"no MILP expression for objective kind {t.kind!r}")

    terms = [(t.id, term(t)) for t in draft.objective]

    def decode() -> dict[str, Any]:
        vehicles = {c: round(v.value() or 0) for c, v in x.items()}
        backup = {f: r for (f, r), v in y.items() if round(v.value() or 0) == 1} if robust else None
        return {"flows": tr.TASK.plan_json(d, Plan(vehicles, backup))}

    return b, terms, decode


BUILDERS = {"urban_traffic_planning": _traffic}


def optimum(
    draft: Draft, without: str | None = None, time_limit: float = 60.0, backend: str | None = None
) -> MilpResult:
    """The lexicographic optimum of a draft by MILP (optionally with one rule off); the
    backend is HiGHS unless ``backend="CBC"`` or HiGHS is missing."""
    return solve(BUILDERS[draft.spec.task], draft, without, time_limit, backend)
