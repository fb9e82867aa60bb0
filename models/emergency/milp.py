"""MILP formulation (PuLP) of Disaster Evacuation Planning: a flow over time on the
time-expanded network, restricted to the listed routes.

The second back-end: the same drafts, every rule kind written again as linear rows over
binaries x[g,r,p] (group g takes route r departing in period p; one per group) and, for
robustness, y[g,r] (g's backup route), with the lexicographic objective solved stage by
stage (optimise one term, fix it, optimise the next). Road capacity is the flow bound of
each time-expanded arc (road, period): the people whose route enters the road in that
period. Tests and the generation benchmark hold its optimum against CP-SAT's on the same
instances; the certifier itself stays CP-SAT. The solver (HiGHS, else CBC; zero gap),
the row builder and the proven-optimal stages are the core's (:mod:`pbsolve.milp_kit`).

Importing this module needs PuLP (the ``milp`` extra); nothing else in the family does.
"""

from __future__ import annotations

import itertools
from typing import Any

import pulp

from pbsolve.checkers.emergency import evacuation as ev
from pbsolve.checkers.emergency.evacuation import EvacData
from pbsolve.family import Draft
from pbsolve.milp_kit import Builder, Formulation, MilpResult, MilpUnproven, solve  # noqa: F401 (MilpUnproven: re-exported)
from pbsolve.params import parse
from pbsolve.schema import ObjectiveTerm, Rule

TASKS = ("disaster_evacuation_planning",)


def _evacuation(draft: Draft, without: str | None) -> Formulation:
    d = EvacData.model_validate(draft.data)
    b = Builder("evacuation")
    periods = range(1, d.periods + 1)
    people = {g.id: g.people for g in d.groups}
    x = {(g.id, r.id, p): b.var(0, 1, binary=True) for g in d.groups for r in d.routes_of[g.id] for p in periods}
    for g in d.groups:
        b.add(pulp.lpSum([x[g.id, r.id, p] for r in d.routes_of[g.id] for p in periods]) == 1)
    robust = any(r.kind == "backup_route" for r in draft.rules)  # y exists even with the rule off, as in CP-SAT
    y = {(g.id, r.id): b.var(0, 1, binary=True) for g in d.groups for r in d.routes_of[g.id]} if robust else {}
    if robust:
        for g in d.groups:
            b.add(pulp.lpSum([y[g.id, r.id] for r in d.routes_of[g.id]]) == 1)

    def shelter_of(r: str) -> str:
        return d.route_by_id[r].shelter

    def on_route(g: str, r: str) -> Any:
        return pulp.lpSum([x[g, r, p] for p in periods])

    def depart(g: str) -> Any:
        return pulp.lpSum([p * x[g, r.id, p] for r in d.routes_of[g] for p in periods])

    def arrival(g: str) -> Any:
        return pulp.lpSum([(p + d.travel[r.id]) * x[g, r.id, p] for r in d.routes_of[g] for p in periods])

    def load(s: str) -> Any:
        return pulp.lpSum([people[g] * v for (g, r, _), v in x.items() if shelter_of(r) == s])

    def arcs() -> dict[tuple[ev.Ends, int], list[tuple[Any, int]]]:
        """The time-expanded arcs (road, period) and the flow variables entering each."""
        out: dict[tuple[ev.Ends, int], list[tuple[Any, int]]] = {}
        for (g, r, p), v in x.items():
            for leg in d.legs[r]:
                out.setdefault((leg.ends, p + leg.offset), []).append((v, people[g]))
        return out

    def rule(rl: Rule) -> None:
        pm: Any = parse(ev.RULE_PARAMS, rl)
        k = rl.kind
        if k == "road_capacity":
            for (ends, _), cells in arcs().items():
                b.add(pulp.lpSum([c * v for v, c in cells]) <= d.capacity[ends])
        elif k == "shelter_capacity":
            for s in d.shelters:
                b.add(load(s.id) <= s.capacity)
        elif k == "accessible_shelter":
            for g in d.groups:
                if g.wheelchair:
                    for r in d.routes_of[g.id]:
                        if not d.shelter_by_id[r.shelter].accessible:
                            b.add(on_route(g.id, r.id) == 0)
        elif k == "exit_capacity":
            for place, cap in d.exit_capacity.items():
                here = [g for g in d.groups if g.place == place]
                for t in periods:
                    b.add(pulp.lpSum([g.people * x[g.id, r.id, t] for g in here for r in d.routes_of[g.id]]) <= cap)
        elif k == "deadline":
            for g in pm.groups:
                b.add(arrival(g) <= pm.period)
        elif k == "road_closure":
            closed = frozenset(pm.road)
            for (ends, t), cells in arcs().items():
                if ends == closed and t >= pm.period:
                    b.add(pulp.lpSum([v for v, _ in cells]) == 0)
        elif k == "not_before":
            b.add(depart(pm.group) >= pm.period)
        elif k == "vulnerable_first":
            for a in pm.groups:
                for other in d.groups:
                    if other.id not in pm.groups:
                        b.add(depart(a) <= depart(other.id))
        elif k == "same_shelter":
            for a, c in itertools.pairwise(pm.groups):
                for s in d.shelters:
                    b.add(
                        pulp.lpSum([on_route(a, r.id) for r in d.routes_of[a] if r.shelter == s.id])
                        == pulp.lpSum([on_route(c, r.id) for r in d.routes_of[c] if r.shelter == s.id])
                    )
        elif k == "shelter_balance":
            for s1 in d.shelters:
                for s2 in d.shelters:
                    if s1.id != s2.id:
                        b.add(load(s1.id) - load(s2.id) <= pm.max)
        elif k == "max_travel":
            for g in pm.groups:
                for r in d.routes_of[g]:
                    if d.minutes[r.id] > pm.minutes:
                        b.add(on_route(g, r.id) == 0)
        elif k == "escort_teams":
            busy: dict[int, list[Any]] = {}
            for (gid, rid, p), v in x.items():
                if d.group_by_id[gid].escort:
                    for t in ev.busy(d, rid, p):
                        busy.setdefault(t, []).append(v)
            for t in sorted(busy):
                b.add(pulp.lpSum(busy[t]) <= pm.teams)
        elif k == "staged_opening":
            early = [
                people[g] * v
                for (g, r, p), v in x.items()
                if shelter_of(r) == pm.shelter and p + d.travel[r] < pm.period
            ]
            b.add(pulp.lpSum(early) <= pm.beds)
        elif k == "backup_route":
            _backup_rows()
        else:
            raise ValueError(f"no MILP row for rule kind {k!r}")

    def _backup_rows() -> None:
        """Backups share no road with the route (nor are it), are accessible for
        wheelchair users, and every single road failure keeps shelter capacities:
        moved[g,f,s] >= on_f[g] + y_to_s[g] - 1 counts a moved group at its backup's shelter."""
        for g in d.groups:
            for bk in d.routes_of[g.id]:
                if g.wheelchair and not d.shelter_by_id[bk.shelter].accessible:
                    b.add(y[g.id, bk.id] == 0)
                for r in d.routes_of[g.id]:
                    if r.id == bk.id or ev.shares_road(d, r.id, bk.id):
                        b.add(y[g.id, bk.id] + on_route(g.id, r.id) <= 1)
        for s in d.shelters:  # no road failed
            b.add(load(s.id) <= s.capacity)
        for f in sorted({leg.ends for r in d.routes for leg in d.legs[r.id]}, key=lambda e: sorted(e)):
            for s in d.shelters:
                terms = []
                for g in d.groups:
                    via = [r for r in d.routes_of[g.id] if any(leg.ends == f for leg in d.legs[r.id])]
                    terms += [
                        people[g.id] * on_route(g.id, r.id)
                        for r in d.routes_of[g.id]
                        if r.shelter == s.id and r not in via
                    ]
                    to_s = [y[g.id, r.id] for r in d.routes_of[g.id] if r.shelter == s.id]
                    if via and to_s:
                        moved = b.var(0, 1, binary=True)
                        b.add(moved >= pulp.lpSum([on_route(g.id, r.id) for r in via]) + pulp.lpSum(to_s) - 1)
                        terms.append(people[g.id] * moved)
                b.add(pulp.lpSum(terms) <= s.capacity)

    for r in draft.rules:
        if r.id != without:
            rule(r)

    def term(t: ObjectiveTerm) -> Any:
        if t.kind == "lateness":
            return pulp.lpSum([
                ev.lateness(d, d.group_by_id[g], p + d.travel[r]) * v for (g, r, p), v in x.items()
            ])  # fmt: skip
        if t.kind == "evacuation_time":
            return pulp.lpSum([people[g] * (p + d.travel[r]) * v for (g, r, p), v in x.items()])
        if t.kind == "travel_minutes":
            return pulp.lpSum([people[g] * d.minutes[r] * v for (g, r, _), v in x.items()])
        if t.kind == "order_score":
            prio = {g.id: g.priority for g in d.groups}
            return pulp.lpSum([
                prio[g] * (ev.DEPART_WEIGHT * p + d.route_number[r]) * v for (g, r, p), v in x.items()
            ])  # fmt: skip
        if t.kind == "backup_score":
            prio = {g.id: g.priority for g in d.groups}
            return pulp.lpSum([prio[g] * d.route_number[r] * v for (g, r), v in y.items()])
        if t.kind == "changes":
            old = ev.CurrentPlan.model_validate(t.params).existing
            return pulp.lpSum([1 - x[g.id, old[g.id][0], int(old[g.id][1])] for g in d.groups])
        raise ValueError(f"no MILP expression for objective kind {t.kind!r}")

    terms = [(t.id, term(t)) for t in draft.objective]

    def decode() -> dict[str, Any]:
        rows = []
        for g in d.groups:
            route, depart_ = next((r, p) for (gg, r, p), v in x.items() if gg == g.id and round(v.value() or 0) == 1)
            row: dict[str, Any] = {"group": g.id, "route": route, "depart": depart_}
            if y:
                row["backup"] = next(r.id for r in d.routes_of[g.id] if round(y[g.id, r.id].value() or 0) == 1)
            rows.append(row)
        return {"evacuation": rows}

    return b, terms, decode


BUILDERS = {"disaster_evacuation_planning": _evacuation}


def optimum(
    draft: Draft, without: str | None = None, time_limit: float = 60.0, backend: str | None = None
) -> MilpResult:
    """The lexicographic optimum of a draft by MILP (optionally with one rule off); the
    backend is HiGHS unless ``backend="CBC"`` or HiGHS is missing."""
    return solve(BUILDERS[draft.spec.task], draft, without, time_limit, backend)
