"""Prompt text of Urban Traffic Planning: one sentence per rule kind and objective kind
(vehicles per period, minutes and percentages stated in their units), and the body of the
prompt: the periods, the road table, the flows with their demands and candidate routes
(the closing sections are the kit's)."""

from __future__ import annotations

from pbsolve.checkers.routing import traffic as tr
from pbsolve.checkers.routing.traffic import TrafficData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=tr.TASK_ID,
    data_type=TrafficData,
    rule_params=tr.RULE_PARAMS,
    term_params=tr.TERM_PARAMS,
    worst_case="the data's least favourable values are road capacities at the low end and road minutes at the high end",
    current="the current routing",
)
CONTEXT = {
    "peak_hour_diversion": "the morning peak: commuter flows that the traffic control centre may divert off congested main roads",
    "road_works_closure": "a weekday morning with road works: some roads are closed in some periods and traffic is diverted around them",
    "event_traffic": "an evening event: flows of visitors converging on the venue, each signed along a few routes by stewards",
    "priority_corridor": "a morning with bus and ambulance traffic that must get through quickly alongside ordinary traffic",
    "evening_ramp_down": "the evening ramp-down: demand falls period by period and route signs should change only gradually",
}
ROBUST_KINDS = frozenset({"incident_backup"})


def _roads(d: TrafficData, roads: list[tr.Pair]) -> str:
    return and_list([tr.label(r, d) for r in roads])


@TEXT.rule("road_capacity")
def _capacity(d: TrafficData, p: NoParams) -> str:
    return (
        "No road carries more vehicles in a period than its capacity (vehicles per period, both directions "
        "together; a vehicle counts on every road of its route in the period it is routed in)."
    )


@TEXT.rule("road_closure")
def _closure(d: TrafficData, p: tr.RoadClosure) -> str:
    road = "is closed" if len(p.roads) == 1 else "are closed"
    return (
        f"{_roads(d, p.roads)} {road} in the {'periods' if len(p.periods) > 1 else 'period'} starting at "
        f"{and_list(p.periods)}: no vehicle may take a route along a closed road in a period it is closed."
    )


@TEXT.rule("priority_bound")
def _priority(d: TrafficData, p: tr.PriorityBound) -> str:
    return (
        f"Priority vehicles: every vehicle of {and_list(p.flows)} takes a route of at most "
        f"{plural(p.minutes, 'minute')} (the route's minutes: the sum of its roads' minutes)."
    )


@TEXT.rule("zone_limit")
def _zone(d: TrafficData, p: tr.ZoneLimit) -> str:
    return (
        f"Protected zone: at most {plural(p.max, 'vehicle')} per period take a route that passes through "
        f"{p.place} (routes starting or ending there count too)."
    )


@TEXT.rule("route_ban")
def _ban(d: TrafficData, p: tr.RouteBan) -> str:
    return f"Vehicles of {and_list(p.flows)} may not use {_roads(d, p.roads)} in any period."


@TEXT.rule("detour_limit")
def _detour(d: TrafficData, p: tr.DetourLimit) -> str:
    return (
        f"Detours: no vehicle takes a route more than {plural(p.minutes, 'minute')} longer than the quickest listed "
        "route of its flow (route minutes: the sum of its roads' minutes)."
    )


@TEXT.rule("split_limit")
def _split(d: TrafficData, p: tr.SplitLimit) -> str:
    return (
        f"Signage: in each period, every flow sends vehicles along at most {plural(p.max, 'route')} "
        "(a route counts when it carries at least one vehicle of the flow in that period)."
    )


@TEXT.rule("main_route_share")
def _share(d: TrafficData, p: tr.MainRouteShare) -> str:
    return (
        f"In each period, at least {p.percent}% of the vehicles of {and_list(p.flows)} (each flow on its own) take "
        "the flow's main route (its route number 1): 100 × vehicles on the main route ≥ "
        f"{p.percent} × the flow's demand in that period."
    )


@TEXT.rule("corridor_balance")
def _balance(d: TrafficData, p: tr.CorridorBalance) -> str:
    gap = f"differ by at most {plural(p.max, 'vehicle')}" if p.max else "are equal"
    return (
        f"Corridor balance: in each period, the vehicles on {tr.label(p.first, d)} and on "
        f"{tr.label(p.second, d)} {gap}."
    )


@TEXT.rule("route_stability")
def _stability(d: TrafficData, p: tr.RouteStability) -> str:
    return (
        f"Gradual changes: between any two consecutive periods, the vehicles on each route change by at most "
        f"{plural(p.max, 'vehicle')} (up or down)."
    )


@TEXT.rule("exposure_budget")
def _exposure(d: TrafficData, p: tr.ExposureBudget) -> str:
    each = "each of " if len(p.roads) > 1 else ""
    return (
        f"Residential exposure: {each}{_roads(d, p.roads)} carries at most {plural(p.max, 'vehicle')} in total over "
        "all periods together (its running total, period by period, never goes over)."
    )


@TEXT.rule("congestion_recovery")
def _recovery(d: TrafficData, p: tr.CongestionRecovery) -> str:
    return (
        "Recovery: no road carries more vehicles than its free-flow level in two consecutive periods (a road over "
        "its level in one period is at or under it in the next)."
    )


@TEXT.rule("incident_backup")
def _backup(d: TrafficData, p: tr.IncidentBackup) -> str:
    return (
        f"Incidents: {_roads(d, p.roads)} may fail. Every flow names a backup route among its own routes that uses "
        f"none of {_roads(d, p.roads)}. If any one of them failed in any one period, every vehicle of a route along "
        "it would take its flow's backup route in that period instead, and no road may then carry more vehicles "
        "than its capacity in that period. This must hold for each of these roads failing in each period on its own."
    )


@TEXT.objective("network_minutes")
def _network(d: TrafficData, p: NoParams) -> str:
    return (
        "the network minutes: every vehicle counts its route's minutes, and every road counts, per period, "
        "its delay minutes × the vehicles beyond its free-flow level (0 when at or under it); summed over vehicles, "
        "roads and periods"
    )


@TEXT.objective("priority_minutes")
def _priority_minutes(d: TrafficData, p: NoParams) -> str:
    names = and_list([f.id for f in d.flows if f.priority]) or "no flow"
    return f"the priority minutes: vehicles × route minutes over the priority flows ({names}), summed over periods"


@TEXT.objective("diverted")
def _diverted(d: TrafficData, p: NoParams) -> str:
    return "the diverted vehicles: vehicles not on their flow's main route (route number 1), summed over periods"


@TEXT.objective("order_score")
def _order(d: TrafficData, p: NoParams) -> str:
    return (
        "the order score: each vehicle of a flow with order points q on its route number k scores q × k; summed "
        "over vehicles and periods"
    )


@TEXT.objective("backup_score")
def _backup_score(d: TrafficData, p: NoParams) -> str:
    return (
        "the backup score: each flow counts its order points × the route number of its backup route; summed over flows"
    )


@TEXT.objective("changes")
def _changes(d: TrafficData, p: tr.CurrentFlows) -> str:
    return (
        "the vehicles moved: for every route and period, the vehicles the current routing puts there minus the "
        "vehicles your plan puts there, when positive; summed over routes and periods"
    )


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.tier == "hard" and r.kind not in ROBUST_KINDS]
    return f"the disruption in {and_list(ids)}, which it breaks" if ids else "the disruption among the rules"


@TEXT.body
def _body(d: TrafficData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    context = CONTEXT.get(subtask, "a working day's traffic").replace("the venue", d.flows[0].destination)
    periods = and_list(list(d.periods))
    out = [
        f"You are planning urban traffic for {context}. The plan covers {plural(len(d.periods), 'period')} of "
        f"{d.period_minutes} minutes, starting at {periods}. Each period is planned on its own: every flow's demand "
        "in a period (vehicles) is split over the flow's listed routes in whole vehicles, and a vehicle counts on "
        "every road of its route in that period.",
        "",
        "**Roads** (two-way; capacity and free-flow level in vehicles per period, both directions together; each "
        "vehicle beyond the free-flow level in a period is delayed by the delay minutes):",
        "| road | minutes | capacity | free-flow level | delay minutes per extra vehicle |",
        "|---|---|---|---|---|",
    ]
    for r in d.network.roads:
        lv = d.level_of[r.ends]
        name = tr.label(r.ends, d)
        out.append(
            f"| {name} | {ranged(d, 'minutes', name, r.minutes)} | {ranged(d, 'capacity', name, r.capacity or 0)} "
            f"| {lv.free} | {lv.delay} |"
        )
    ranged_minutes = {
        r.ends for r in d.network.roads for u in d.uncertain if u.kind == "minutes" and u.target == tr.label(r.ends, d)
    }
    out += ["", "**Flows** (demand in vehicles per period, in period order; order points weigh the order score):"]
    for f in d.flows:
        tag = "; priority flow" if f.priority else ""
        out.append(
            f"- {f.id} ({f.vehicle}, {f.name}{tag}): demand {', '.join(map(str, f.demand))}; order points {f.points}"
        )
        for k, rt in enumerate(d.routes_of[f.id], 1):
            main = " (main route)" if k == 1 else ""
            worst = " (its uncertain roads at their high end)" if set(d.route_roads[rt.id]) & ranged_minutes else ""
            out.append(
                f"  - route {rt.id}, number {k}{main}: {' → '.join(rt.places)} — "
                f"{plural(d.route_minutes[rt.id], 'minute')}{worst}"
            )
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current routing** (made before {_disrupted(rules)}; move as few vehicles as you can):"]
        cur = tr.current_flows(changes)
        for rt in d.routes:
            counts = [cur.get((rt.id, p), 0) for p in d.periods]
            if any(counts):
                out.append(f"- {rt.id}: {', '.join(map(str, counts))}")
    return out


@TEXT.verification
def _verification(d: TrafficData) -> str:
    return (
        "under `verification`, report from your plan `flow_minutes` (for every flow, its vehicles × route minutes "
        "summed over periods, without delays) and `peak_load` (for every road some listed route uses, the most "
        "vehicles it carries in one period)."
    )
