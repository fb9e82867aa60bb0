"""Prompt text of Procurement Planning: one sentence per rule kind and objective kind, and the
body of the prompt (the shared closing sections are the family's, in __init__)."""

from __future__ import annotations

from pbsolve.checkers.allocation import rule_params as rp
from pbsolve.checkers.allocation.data import ProcurementData
from pbsolve.render_kit import TaskText, and_list, of_unit, plural, ranged
from pbsolve.renderers.allocation.text import counting, disrupted
from pbsolve.schema import ObjectiveTerm, Rule

P = "procurement_planning"
TEXT = TaskText(
    task=P,
    data_type=ProcurementData,
    rule_params=rp.RULE_PARAMS[P],
    term_params=rp.TERM_PARAMS[P],
    worst_case="figures are computed with the least favourable values (capacities at the low end, demands at the high end)",
)
PROCUREMENT_CONTEXT = {
    "manufacturing_inputs": ("a factory", "The items are raw materials for a production line."),
    "restaurant_supplies": (
        "a restaurant kitchen",
        "The items are ingredients; perishable ones are used oldest first.",
    ),
    "hospital_consumables": ("a hospital", "The items are consumables the wards use every week."),
    "construction_materials": ("a building site", "The items are bulky materials, and storage on site is limited."),
    "seasonal_demand": ("a gift shop", "The items are seasonal goods: they sell steadily except in one holiday week."),
}


def _seasonal(d: ProcurementData) -> str:
    """The peak week of a seasonal instance; the generator makes its demand exceed the
    suppliers' weekly capacities together (and all the initial stock)."""
    total = [sum(i.demand[t] for i in d.items) for t in range(len(d.periods))]
    peak = d.periods[total.index(max(total))]
    return (
        f"{peak} is that week: its demand (all items together) is more than all the suppliers together can deliver "
        f"in one week, so part of it must be ordered in earlier weeks and held in stock."
    )


def _unit_of(d: ProcurementData, item: str) -> str:
    return d.item_by_id[item].unit


@TEXT.rule("inventory_balance")
def _p_inventory(d: ProcurementData, p: rp.NoParams) -> str:
    return (
        "Stock is carried from week to week, and every week's demand must be met from the stock on hand that week "
        "(deliveries arriving that week included): no item may ever run short."
    )


@TEXT.rule("supplier_capacity")
def _p_capacity(d: ProcurementData, p: rp.NoParams) -> str:
    return (
        "In any one week, the units ordered from a supplier (all items together) must not exceed its weekly capacity."
    )


@TEXT.rule("period_budget")
def _p_budget(d: ProcurementData, p: rp.PeriodBudget) -> str:
    return (
        f"At most {p.max} may be spent in any one week: the unit prices of the orders placed that week plus the "
        f"order charges of the suppliers ordered from that week."
    )


@TEXT.rule("min_order")
def _p_min_order(d: ProcurementData, p: rp.MinOrder) -> str:
    if len(p.min) == 1:
        ((s, m),) = p.min.items()
        return (
            f"Minimum order size, counting all items together: in any week in which anything is ordered from {s}, "
            f"that week's order from {s} totals at least {plural(m, 'unit')}; ordering nothing from {s} that week "
            "is allowed."
        )
    minima = "; ".join(f"{s}: {plural(m, 'unit')}" for s, m in p.min.items())
    return (
        "Minimum order sizes, counting all items together: in any week in which anything is ordered from one of "
        f"these suppliers, that week's order from it totals at least its listed minimum ({minima}); ordering "
        "nothing from it that week is allowed."
    )


@TEXT.rule("supplier_closed")
def _p_closed(d: ProcurementData, p: rp.SupplierClosed) -> str:
    return f"{p.supplier} takes no orders in {and_list(p.periods)}."


@TEXT.rule("dock_capacity")
def _p_dock(d: ProcurementData, p: rp.DockCapacity) -> str:
    return f"At most {plural(p.max, 'unit')} (all items together) can be received in any one week."


@TEXT.rule("safety_stock")
def _p_safety(d: ProcurementData, p: rp.SafetyStock) -> str:
    return f"{p.item} never ends a week with fewer than {of_unit(p.min, _unit_of(d, p.item))} in stock."


@TEXT.rule("stock_target")
def _p_target(d: ProcurementData, p: rp.StockTarget) -> str:
    return f"At the end of {p.period}, at least {of_unit(p.min, _unit_of(d, p.item))} of {p.item} must be in stock (a delivery commitment)."


@TEXT.rule("storage_cap")
def _p_storage(d: ProcurementData, p: rp.StorageCap) -> str:
    return f"At the end of every week, at most {plural(p.max, 'unit')} (all items together) may be in storage."


@TEXT.rule("shelf_life")
def _p_shelf(d: ProcurementData, p: rp.ShelfLife) -> str:
    k = p.periods
    last = (
        "in the week it is received"
        if k == 1
        else f"by the end of the {_ordinal(k)} week counting the week it is received"
    )
    return (
        f"{p.item} is perishable and is used first in, first out (oldest units first). Each unit must be used "
        f"{last}, and may not still be in stock after that; the initial stock counts as received in {d.periods[0]}."
    )


def _ordinal(n: int) -> str:
    return {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth"}.get(n, f"{n}th")


@TEXT.rule("supplier_share")
def _p_share(d: ProcurementData, p: rp.SupplierShare) -> str:
    return f"No single supplier provides more than {p.pct}% of all the {p.item} ordered over the plan."


@TEXT.rule("contract_minimum")
def _p_contract(d: ProcurementData, p: rp.ContractMinimum) -> str:
    return f"Under its contract, {p.supplier} receives orders for at least {plural(p.min, 'unit')} in total over the plan (all items and weeks together)."


@TEXT.rule("order_gap")
def _p_gap(d: ProcurementData, p: rp.OrderGap) -> str:
    return f"Orders are never placed with {p.supplier} in two consecutive weeks."


@TEXT.rule("single_sourcing")
def _p_single(d: ProcurementData, p: rp.SingleSourcing) -> str:
    return f"Single sourcing: every order of {p.item} over the whole plan goes to one and the same supplier."


@TEXT.rule("dual_sourcing")
def _p_dual(d: ProcurementData, p: rp.DualSourcing) -> str:
    return f"{p.item} is bought from at least two different suppliers over the plan."


@TEXT.rule("lot_cap")
def _p_lot(d: ProcurementData, p: rp.LotCap) -> str:
    return f"No single order line (one item from one supplier in one week) may exceed {p.max} units."


@TEXT.rule("delay_robust")
def _p_delay(d: ProcurementData, p: rp.NoParams) -> str:
    return (
        "Every week's demand must be met from stock, and must still be met if any one order (one supplier, item and "
        "week) arrived one week late while every other order came on time; an order due in the last week would then "
        "not arrive at all. This must hold for each order being late on its own."
    )


@TEXT.objective("total_cost")
def _p_total_cost(d: ProcurementData, p: rp.NoParams) -> str:
    return (
        "the total cost: the unit prices of everything ordered, plus each supplier's order charge for every week in "
        "which an order is placed with it, plus each item's holding cost for every unit in stock at the end of each week"
    )


@TEXT.objective("order_score")
def _p_order_score(d: ProcurementData, p: rp.NoParams) -> str:
    return (
        "the order score: each unit ordered from the supplier listed k-th (first = 1) in week Wt scores 10 × k + t; "
        "sum over all units ordered"
    )


@TEXT.objective("changes")
def _p_changes(d: ProcurementData, p: rp.CurrentOrders) -> str:
    return (
        "the number of order lines (supplier, item and week) whose quantity differs from the current plan "
        "(a line found in only one of the two plans counts as well)"
    )


@TEXT.body
def _procurement_body(d: ProcurementData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    where, context = PROCUREMENT_CONTEXT.get(subtask, ("an organisation", ""))
    n = len(d.periods)
    if subtask == "seasonal_demand":
        context += " " + _seasonal(d)
    out = [
        f"You are planning the purchases of {where} over {n} weeks, {d.periods[0]} to {d.periods[-1]}. {context}",
        "",
        f"**How stock works:** each item starts with the stock shown. An order placed with a supplier in week Wt arrives "
        f"at the start of week W(t + lead time) and can be used that same week; every order must arrive by "
        f"{d.periods[-1]}. In each week the deliveries arrive first, then the week's demand is used, and what is left is "
        f"carried into the next week. Quantities are whole units, and one order line (supplier, item, week) can never "
        f"exceed the supplier's weekly capacity. " + counting([i.unit for i in d.items], "items"),
        "",
        "**Items:**",
    ]
    for i in d.items:
        demand = ", ".join(
            f"{d.periods[t]} {ranged(d, 'demand', f'{i.id}/{d.periods[t]}', x)}" for t, x in enumerate(i.demand)
        )
        out.append(
            f"- {i.id} ({i.unit}): initial stock {i.initial_stock}; holding cost {i.holding_cost} per unit in stock at the end "
            f"of a week; demand {demand}"
        )
    out += ["", "**Suppliers** (listed order k = 1, 2, ...):"]
    for s in d.suppliers:
        offers = (
            ", ".join(f"{o.item} at {o.price}" for o in s.offers) + " per unit" if s.offers else "none of the items"
        )
        cap = ranged(d, "capacity", s.id, s.capacity)
        lead = plural(s.lead_time, "week")
        out.append(
            f"- {s.id}: lead time {lead}; weekly capacity {cap} units (all items together); order charge {s.fixed_cost} "
            f"for each week with an order; sells {offers}"
        )
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {disrupted(rules)}; change as few order lines as you can):"]
        lines = [f"- {q} {i} from {s} in {label}" for s, i, label, q in rp.current_plan(P, changes)]
        out += lines or ["- (no orders)"]
    return out


@TEXT.verification
def _procurement_verification(d: ProcurementData) -> str:
    return (
        "under `verification`, report from your plan `spend` (for every supplier, everything paid to it: unit prices "
        f"plus order charges) and `closing_stock` (for every item, the stock at the end of {d.periods[-1]})."
    )
