"""Checks for Material Allocation answers: shipments of scarce materials from depots to sites."""

from __future__ import annotations

import itertools
from typing import Any

from pbsolve.answer_checks import stated_int
from pbsolve.checker_kit import MAX_QUANTITY, OK, lookup, row_names
from pbsolve.checkers.allocation import rule_params as rp
from pbsolve.checkers.allocation.common import TaskChecker
from pbsolve.checkers.allocation.data import MaterialData
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import NoParams, Params, as_model
from pbsolve.schema import Instance, ObjectiveTerm, Rule

Plan = dict[tuple[str, str, str], int]  # (depot, site, material) -> units (> 0)
CHECKS: KindRegistry[Check] = KindRegistry("check")


check = CHECKS.register


def received(d: MaterialData, plan: Plan, site: str) -> int:
    """Units the site receives, all materials together."""
    return sum(q for (_, s, _), q in plan.items() if s == site)


def shipped(d: MaterialData, plan: Plan, depot: str) -> int:
    """Units the depot sends, all materials together."""
    return sum(q for (x, _, _), q in plan.items() if x == depot)


# Totals of a plan in one pass each (the checks below read them instead of summing the
# plan once per site, depot or material; sums of integers, so the figures are the same).
def _by_site_material(plan: Plan) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for (_, s, m), q in plan.items():
        out[s, m] = out.get((s, m), 0) + q
    return out


def _by_depot_material(plan: Plan) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for (x, _, m), q in plan.items():
        out[x, m] = out.get((x, m), 0) + q
    return out


def _by_route(plan: Plan) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for (x, s, _), q in plan.items():
        out[x, s] = out.get((x, s), 0) + q
    return out


def _by_site(plan: Plan) -> dict[str, int]:
    out: dict[str, int] = {}
    for (_, s, _), q in plan.items():
        out[s] = out.get(s, 0) + q
    return out


def _by_depot(plan: Plan) -> dict[str, int]:
    out: dict[str, int] = {}
    for (x, _, _), q in plan.items():
        out[x] = out.get(x, 0) + q
    return out


def _transport_cost(d: MaterialData, plan: Plan) -> int:
    cost, total = d.cost, 0
    for (x, s, _), q in plan.items():
        total += cost[x][s] * q
    return total


def _fills(d: MaterialData, plan: Plan) -> dict[str, int]:
    """Every site's fill rate in whole percent, rounded down (100 x received / requested),
    in site order."""
    got, want = _by_site(plan), d.requested_by_site
    return {s.id: 100 * got.get(s.id, 0) // want[s.id] for s in d.sites}


# -- rule checks -----------------------------------------------------------------------
@check("depot_stock")
def _depot_stock(d: MaterialData, plan: Plan, p: NoParams) -> Verdict:
    sent = _by_depot_material(plan)
    for key, depot, m, have in d.stock_pairs:
        n = sent.get(key, 0)
        if n > have:
            return False, f"{depot} ships {n} {m} but holds {have}"
    return OK


@check("request_cap")
def _request_cap(d: MaterialData, plan: Plan, p: NoParams) -> Verdict:
    got = _by_site_material(plan)
    for key, site, m, want in d.request_pairs:
        n = got.get(key, 0)
        if n > want:
            return False, f"{site} receives {n} {m} but requested {want}"
    return OK


@check("route_closed")
def _route_closed(d: MaterialData, plan: Plan, p: rp.RouteClosed) -> Verdict:
    n = sum(q for (x, s, _), q in plan.items() if x == p.depot and s == p.site)
    return OK if n == 0 else (False, f"{n} units go from {p.depot} to {p.site} on a closed route")


@check("truck_capacity")
def _truck_capacity(d: MaterialData, plan: Plan, p: rp.TruckCapacity) -> Verdict:
    routes, most = _by_route(plan), p.max
    for key, depot, site in d.route_pairs:
        n = routes.get(key, 0)
        if n > most:
            return False, f"{n} units go from {depot} to {site} (truck holds {most})"
    return OK


@check("depot_throughput")
def _depot_throughput(d: MaterialData, plan: Plan, p: rp.DepotThroughput) -> Verdict:
    n = shipped(d, plan, p.depot)
    return OK if n <= p.max else (False, f"{p.depot} dispatches {n} units (limit {p.max})")


@check("min_guarantee")
def _min_guarantee(d: MaterialData, plan: Plan, p: rp.MinGuarantee) -> Verdict:
    got = _by_site_material(plan)
    for site in p.sites:
        n = got.get((site, p.material), 0)
        if n < p.min:
            return False, f"{site} receives {n} {p.material} (guaranteed {p.min})"
    return OK


@check("site_intake")
def _site_intake(d: MaterialData, plan: Plan, p: rp.SiteIntake) -> Verdict:
    n = received(d, plan, p.site)
    return OK if n <= p.max else (False, f"{p.site} receives {n} units (room for {p.max})")


@check("transport_budget")
def _transport_budget(d: MaterialData, plan: Plan, p: rp.TransportBudget) -> Verdict:
    n = _transport_cost(d, plan)
    return OK if n <= p.max else (False, f"transport costs {n} (budget {p.max})")


@check("fill_gap")
def _fill_gap(d: MaterialData, plan: Plan, p: rp.FillGap) -> Verdict:
    rates = _fills(d, plan)
    hi, lo = max(rates, key=rates.__getitem__), min(rates, key=rates.__getitem__)
    if rates[hi] - rates[lo] > p.max:
        return False, f"fill rates range from {rates[lo]}% ({lo}) to {rates[hi]}% ({hi}), more than {p.max} points"
    return OK


@check("priority_order")
def _priority_order(d: MaterialData, plan: Plan, p: rp.PriorityOrder) -> Verdict:
    chain = p.sites
    got, want = _by_site(plan), d.requested_by_site
    for a, b in itertools.pairwise(chain):
        fa, fb = 100 * got.get(a, 0) // want[a], 100 * got.get(b, 0) // want[b]
        if fa < fb:
            return False, f"{a} is filled {fa}% but {b} {fb}%"
    return OK


@check("single_source")
def _single_source(d: MaterialData, plan: Plan, p: rp.SingleSource) -> Verdict:
    for site in p.sites:
        depots = sorted({x for (x, s, _), q in plan.items() if s == site})
        if len(depots) > 1:
            return False, f"{site} is supplied by {', '.join(depots)}"
    return OK


@check("min_shipment")
def _min_shipment(d: MaterialData, plan: Plan, p: rp.MinShipment) -> Verdict:
    routes, least = _by_route(plan), p.min
    for key, depot, site in d.route_pairs:
        n = routes.get(key, 0)
        if 0 < n < least:
            return False, f"only {n} units go from {depot} to {site} (a delivery is at least {least})"
    return OK


@check("share_cap")
def _share_cap(d: MaterialData, plan: Plan, p: rp.ShareCap) -> Verdict:
    m, pct = p.material, p.pct
    total = sum(q for (_, _, x), q in plan.items() if x == m)
    got = _by_site_material(plan)
    for site in d.sites:
        n = got.get((site.id, m), 0)
        if 100 * n > pct * total:
            return False, f"{site.id} receives {n} of the {total} {m} shipped, more than {pct}%"
    return OK


@check("depot_failure")
def _depot_failure(d: MaterialData, plan: Plan, p: NoParams) -> Verdict:
    """Simulates each depot failing on its own: every site must keep at least half of
    every material the plan sends it."""
    got = _by_site_material(plan)
    for failed in d.depots:
        for site in d.sites:
            for m in d.materials:
                planned = got.get((site.id, m.id), 0)
                kept = planned - plan.get((failed.id, site.id, m.id), 0)
                if 2 * kept < planned:
                    return False, f"if {failed.id} failed, {site.id} would keep {kept} of its {planned} {m.id}"
    return OK


# -- objective -------------------------------------------------------------------------
def objective_value(d: MaterialData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind  # read once: the chain below tests it several times
    if kind == "shortage":
        got, total = _by_site_material(plan), 0
        for key, priority, want in d.shortage_terms:
            total += priority * (want - got.get(key, 0))
        return total
    if kind == "transport_cost":
        return _transport_cost(d, plan)
    if kind == "route_score":
        dn, sn, mn = d.numbers
        total = 0
        for (x, s, m), q in plan.items():
            total += q * mn[m] * (10 * dn[x] + sn[s])
        return total
    if kind == "changes":
        old = {(x, s, m): q for x, s, m, q in as_model(tp, rp.CurrentShipments).existing}
        return sum(1 for cell in set(old) | set(plan) if old.get(cell, 0) != plan.get(cell, 0))
    raise ValueError(f"unknown objective kind {term.kind!r}")


class MaterialAllocation(TaskChecker):
    task = "material_allocation"
    plan_key = "shipments"
    plan_text = (
        "a list of shipment lines, each naming a depot, a site and a material the depot holds and the site "
        "requests, with whole units no more than the depot holds, no line listed twice"
    )
    data_type = MaterialData
    checks = CHECKS
    rule_params = rp.RULE_PARAMS["material_allocation"]
    term_params = rp.TERM_PARAMS["material_allocation"]

    def lookups(self, d: MaterialData) -> dict[str, dict[str, str]]:
        return {
            "depot": lookup([x.id for x in d.depots]),
            "site": lookup([s.id for s in d.sites]),
            "material": lookup([m.id for m in d.materials]),
        }

    def read_plan(
        self, d: MaterialData, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Plan | None, str]:
        rows = section.get("shipments") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'shipments' is missing or not a list"
        plan: Plan = {}
        seen: set[tuple[str, str, str]] = set()
        cells = d.cell_set
        fields = {"depot": lk["depot"], "site": lk["site"], "material": lk["material"]}
        ex_depot, ex_site, ex_material = fields["depot"].exact, fields["site"].exact, fields["material"].exact
        for k, row in enumerate(rows):
            try:  # the usual row, each name as the instance spells it: row_names' answer, read inline
                if type(row) is not dict:
                    raise TypeError
                x, s, m = ex_depot[row["depot"]], ex_site[row["site"]], ex_material[row["material"]]
            except (KeyError, TypeError):
                names, why = row_names(row, k, "shipment", fields)
                if names is None:
                    return None, why
                x, s, m = names
            cell = (x, s, m)
            q = row.get("units")
            if type(q) is not int:  # an int stands for itself; anything else is read by stated_int
                q = stated_int(q)
            if q is None or not 0 <= q <= MAX_QUANTITY:
                return None, f"shipment {k + 1} needs whole non-negative 'units'"
            if cell not in cells and q:
                return None, f"{x} holds no {m} or {s} requests none"
            if q and q > d.depot_by_id[x].stock[m]:
                return None, f"shipment {k + 1} sends {q} {m} from {x}, more than it holds"
            if cell in seen:
                return None, f"the shipment of {m} from {x} to {s} appears more than once"
            seen.add(cell)
            if q:
                plan[cell] = q
        return plan, "complete plan"

    def objective_value(self, d: MaterialData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: MaterialData, plan: Plan) -> dict[str, dict[str, int]]:
        got, sent = _by_site(plan), _by_depot(plan)
        return {
            "received": {s.id: got.get(s.id, 0) for s in d.sites},
            "dispatched": {x.id: sent.get(x.id, 0) for x in d.depots},
        }

    def existing(self, d: MaterialData, plan: Plan) -> list[list[Any]]:
        return [[x, s, m, q] for (x, s, m), q in sorted_shipments(d, plan)]

    def plan_schema(self, d: MaterialData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        row = {
            "type": "object",
            "properties": {
                "units": {"type": "integer"},
                "depot": {"enum": [x.id for x in d.depots]},
                "site": {"enum": [s.id for s in d.sites]},
                "material": {"enum": [m.id for m in d.materials]},
            },
            "required": ["units", "depot", "site", "material"],
        }
        return {
            "type": "array",
            "items": row,
            "description": "every shipment: the units of one material sent from one depot to one site, each depot, "
            "site and material at most once (leave out what you do not send)",
        }

    def verification_schema(self, d: MaterialData) -> dict[str, Any]:
        return figures_schema({
            "received": ([s.id for s in d.sites], "for each site, the units it receives (all materials)"),
            "dispatched": ([x.id for x in d.depots], "for each depot, the units it sends (all materials)"),
        })  # fmt: skip

    def plan_json(self, d: MaterialData, plan: Plan) -> list[dict[str, Any]]:
        return [{"units": q, "depot": x, "site": s, "material": m} for (x, s, m), q in sorted_shipments(d, plan)]

    def baseline_plan(self, d: MaterialData, instance: Instance) -> Plan:
        """Highest priority first, each request from the cheapest depot with stock left;
        every rule but stock and requests ignored."""
        left = {(x.id, m): n for x in d.depots for m, n in x.stock.items()}
        plan: Plan = {}
        for site in sorted(d.sites, key=lambda s: -s.priority):
            for m, want in site.requests.items():
                for depot in sorted(d.depots, key=lambda x: d.cost[x.id][site.id]):
                    take = min(want, left.get((depot.id, m), 0))
                    if take > 0:
                        plan[depot.id, site.id, m] = take
                        left[depot.id, m] -= take
                        want -= take
        return plan


def sorted_shipments(d: MaterialData, plan: Plan) -> list[tuple[tuple[str, str, str], int]]:
    rank = {cell: n for n, cell in enumerate(d.cells)}
    return sorted(plan.items(), key=lambda kv: rank.get(kv[0], len(rank)))


TASK = MaterialAllocation()
