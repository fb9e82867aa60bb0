"""Prompt text of Material Allocation: one sentence per rule kind and objective kind, and the
body of the prompt (the shared closing sections are the family's, in __init__)."""

from __future__ import annotations

import itertools

from pbsolve.checkers.allocation import rule_params as rp
from pbsolve.checkers.allocation.data import MaterialData
from pbsolve.render_kit import TaskText, and_list, of_unit, plural, ranged
from pbsolve.renderers.allocation.text import counting, disrupted
from pbsolve.schema import ObjectiveTerm, Rule

M = "material_allocation"
TEXT = TaskText(
    task=M,
    data_type=MaterialData,
    rule_params=rp.RULE_PARAMS[M],
    term_params=rp.TERM_PARAMS[M],
    worst_case="figures are computed with the least favourable values (stocks at the low end, transport costs at the high end)",
)
MATERIAL_CONTEXT = {
    "disaster_relief": (
        "relief supplies",
        "evacuation centres",
        "A storm has displaced families; the centres have sent their requests.",
    ),
    "hospital_supplies": (
        "medical supplies",
        "hospitals",
        "Supplies are short during an outbreak; each hospital has sent its request.",
    ),
    "school_devices": (
        "learning materials",
        "schools",
        "A district is equipping its schools; each school has sent its request.",
    ),
    "food_bank": (
        "food bank stock",
        "community centres",
        "The food bank is sharing out this week's stock among its centres.",
    ),
    "vaccine_cold_chain": (
        "vaccination supplies",
        "clinics",
        "A vaccination campaign is starting; each clinic has sent its request.",
    ),
}
FILL_RATE = (
    "A site's fill rate is 100 × (units it receives, all materials) ÷ (units it requested, all materials), rounded "
    "down to a whole percent."
)


def _cold_chain(d: MaterialData) -> str:
    """Who can hold the cold material (the first listed) in a cold-chain instance."""
    cold = d.materials[0].id
    stores = [x.id for x in d.depots if x.stock.get(cold, 0) > 0]
    fridges = [s.id for s in d.sites if s.requests.get(cold, 0) > 0]
    one_store, one_fridge = len(stores) == 1, len(fridges) == 1
    return (
        f"{cold} must be kept cold: only {and_list(stores)} {'has a cold store' if one_store else 'have cold stores'} "
        f"to hold them, and only {and_list(fridges)} {'has a vaccine fridge' if one_fridge else 'have vaccine fridges'} "
        f"to receive them; the other clinics request none."
    )


def _m_unit(d: MaterialData, m: str) -> str:
    return next(x.unit for x in d.materials if x.id == m)


@TEXT.rule("depot_stock")
def _m_stock(d: MaterialData, p: rp.NoParams) -> str:
    return "No depot sends out more of a material than it holds (all sites together)."


@TEXT.rule("request_cap")
def _m_request(d: MaterialData, p: rp.NoParams) -> str:
    return "No site receives more of a material than it requested (all depots together)."


@TEXT.rule("route_closed")
def _m_closed(d: MaterialData, p: rp.RouteClosed) -> str:
    return f"The road from {p.depot} to {p.site} is closed: nothing can be sent from {p.depot} to {p.site}."


@TEXT.rule("truck_capacity")
def _m_truck(d: MaterialData, p: rp.TruckCapacity) -> str:
    return (
        f"Everything sent from one depot to one site travels in a single truck, which carries at most {p.max} "
        f"units (all materials together)."
    )


@TEXT.rule("depot_throughput")
def _m_throughput(d: MaterialData, p: rp.DepotThroughput) -> str:
    return f"{p.depot} can dispatch at most {plural(p.max, 'unit')} in total (all materials and sites together)."


@TEXT.rule("min_guarantee")
def _m_guarantee(d: MaterialData, p: rp.MinGuarantee) -> str:
    who = and_list(p.sites) + (" are each" if len(p.sites) > 1 else " is")
    return f"{who} guaranteed at least {of_unit(p.min, _m_unit(d, p.material))} of {p.material}."


@TEXT.rule("site_intake")
def _m_intake(d: MaterialData, p: rp.SiteIntake) -> str:
    return f"{p.site} can take in at most {plural(p.max, 'unit')} in total (all materials together)."


@TEXT.rule("transport_budget")
def _m_budget(d: MaterialData, p: rp.TransportBudget) -> str:
    return f"The total transport cost may not exceed {p.max}."


@TEXT.rule("fill_gap")
def _m_gap(d: MaterialData, p: rp.FillGap) -> str:
    if not p.max:
        return "Fairness: every site has the same fill rate."
    return f"Fairness: the fill rates of all sites lie within {plural(p.max, 'percentage point')} of each other."


@TEXT.rule("priority_order")
def _m_priority(d: MaterialData, p: rp.PriorityOrder) -> str:
    chain = p.sites
    return (
        "Priority order: " + ", ".join(f"{a}'s fill rate is at least {b}'s" for a, b in itertools.pairwise(chain)) + "."
    )


@TEXT.rule("single_source")
def _m_single(d: MaterialData, p: rp.SingleSource) -> str:
    who = and_list(p.sites) + (" each receive" if len(p.sites) > 1 else " receives")
    return f"{who} everything from one depot only."


@TEXT.rule("min_shipment")
def _m_min_shipment(d: MaterialData, p: rp.MinShipment) -> str:
    return f"A delivery from a depot to a site (all materials together) is either nothing or at least {plural(p.min, 'unit')}."


@TEXT.rule("share_cap")
def _m_share(d: MaterialData, p: rp.ShareCap) -> str:
    return f"No site receives more than {p.pct}% of all the {p.material} sent out."


@TEXT.rule("depot_failure")
def _m_failure(d: MaterialData, p: rp.NoParams) -> str:
    return (
        "If any one depot failed and sent nothing (every other shipment unchanged), every site must still receive "
        "at least half of each material your plan sends it. This must hold for each depot failing on its own."
    )


@TEXT.objective("shortage")
def _m_shortage(d: MaterialData, p: rp.NoParams) -> str:
    return "the weighted shortage: for every site and material, (units requested − units received) × the site's priority, summed"


@TEXT.objective("transport_cost")
def _m_transport(d: MaterialData, p: rp.NoParams) -> str:
    return "the transport cost: every unit sent costs its route's cost per unit (depot to site), summed"


@TEXT.objective("route_score")
def _m_route_score(d: MaterialData, p: rp.NoParams) -> str:
    return (
        "the route score: each unit of the material listed i-th sent from the depot listed j-th to the site listed "
        "k-th scores i × (10 × j + k); summed over all units sent"
    )


@TEXT.objective("changes")
def _m_changes(d: MaterialData, p: rp.CurrentShipments) -> str:
    return (
        "the number of shipment lines (depot, site and material) whose units differ from the current plan "
        "(a line found in only one of the two plans counts as well)"
    )


@TEXT.body
def _material_body(d: MaterialData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    what, where, context = MATERIAL_CONTEXT.get(subtask, ("supplies", "sites", ""))
    if subtask == "vaccine_cold_chain":
        context += " " + _cold_chain(d)
    out = [
        f"You are allocating scarce {what} from {len(d.depots)} depots to {len(d.sites)} {where}. {context} The supplies "
        f"do not cover every request.",
        "",
        "**Materials** (listed order i = 1, 2, ...): " + ", ".join(f"{m.id} (in {m.unit})" for m in d.materials) + ".",
        "",
        "A shipment line sends a whole number of units of one material from one depot to one site; one line can never "
        "exceed what the depot holds of that material. "
        + FILL_RATE
        + " "
        + counting([m.unit for m in d.materials], "materials"),
        "",
        "**Depots** (listed order j = 1, 2, ...):",
    ]
    for x in d.depots:
        held = ", ".join(
            f"{of_unit(ranged(d, 'stock', f'{x.id}/{m}', q), _m_unit(d, m))} of {m}" for m, q in x.stock.items()
        )
        out.append(f"- {x.id}: holds {held or 'nothing'}")
    out += ["", f"**{where.capitalize()}** (listed order k = 1, 2, ...):"]
    for s in d.sites:
        wants = ", ".join(f"{of_unit(q, _m_unit(d, m))} of {m}" for m, q in s.requests.items())
        out.append(f"- {s.id}: priority {s.priority}; requests {wants or 'nothing'}")
    out += ["", "**Transport cost per unit** (from a depot to each site):"]
    for x in d.depots:
        out.append(
            f"- {x.id}: " + ", ".join(f"{s} {ranged(d, 'cost', f'{x.id}/{s}', c)}" for s, c in d.cost[x.id].items())
        )
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {disrupted(rules)}; change as few shipment lines as you can):"]
        lines = [f"- {of_unit(q, _m_unit(d, m))} of {m} from {x} to {s}" for x, s, m, q in rp.current_plan(M, changes)]
        out += lines or ["- (no shipments)"]
    return out


@TEXT.verification
def _material_verification(d: MaterialData) -> str:
    return (
        "under `verification`, report from your plan `received` (for every site, the units it receives, all "
        "materials together) and `dispatched` (for every depot, the units it sends out, all materials together)."
    )
