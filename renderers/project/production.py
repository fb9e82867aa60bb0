"""Prompt text of Production Planning: one sentence per rule kind and objective kind (lots,
periods and costs stated in their units), and the body of the prompt: the products, the
lines, the orders and the raw material (the closing sections are the kit's)."""

from __future__ import annotations

from pbsolve.checkers.project import production as pp
from pbsolve.checkers.project.production import ProductionData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=pp.TASK_ID,
    data_type=ProductionData,
    rule_params=pp.RULE_PARAMS,
    term_params=pp.TERM_PARAMS,
    worst_case=(
        "the data's least favourable values are line capacities at the low end, order sizes and holding costs at "
        "the high end"
    ),
)
CONTEXT = {
    "bakery": ("a bakery's production", "shift", "1 lot = a batch of 40 items"),
    "bottling": ("a bottling plant's filling lines", "day", "1 lot = 1,000 bottles"),
    "metal_parts": ("a machine shop whose parts are cut from a delivered raw material", "day", "1 lot = 50 parts"),
    "make_to_order": ("a make-to-order assembly plant with urgent customer orders", "week", "1 lot = 1 finished unit"),
    "seasonal": ("a seasonal build-ahead for winter products", "month", "1 lot = a pallet of 100 units"),
}
STOCK_NOTE = (
    "Quantities are whole lots. Periods are numbered from 1. The net stock of a product at the end of period t is "
    "its initial stock, plus all lots of it made in periods 1 to t, minus all lots of it ordered for periods 1 to t "
    "(orders are taken from stock at the end of their period). A positive net stock is held in stock; a negative "
    "net stock is a backlog (lots short, still owed). All costs are in euros."
)


@TEXT.rule("line_capability")
def _capability(d: ProductionData, p: NoParams) -> str:
    return "Each line makes only products it is able to make (listed under Lines)."


@TEXT.rule("line_capacity")
def _capacity(d: ProductionData, p: NoParams) -> str:
    return "In every period, each line makes at most its capacity in lots."


@TEXT.rule("no_backlog")
def _no_backlog(d: ProductionData, p: NoParams) -> str:
    return (
        "No backlog: every order is met on time, so every product's net stock is 0 or more at the end of every period."
    )


@TEXT.rule("line_downtime")
def _downtime(d: ProductionData, p: pp.LineDowntime) -> str:
    span = f"in period {p.first}" if p.first == p.last else f"in periods {p.first} to {p.last} (both included)"
    return f"{p.line} is down for maintenance {span}: it makes nothing then."


@TEXT.rule("storage_cap")
def _storage(d: ProductionData, p: pp.StorageCap) -> str:
    return (
        f"Warehouse: at the end of every period, the lots held in stock (the positive net stocks, summed over "
        f"products) are at most {p.max}."
    )


@TEXT.rule("min_lot")
def _min_lot(d: ProductionData, p: pp.MinLot) -> str:
    return f"Minimum batch: every run of {p.product} (a line making it in a period) makes at least {plural(p.lots, 'lot')}."


@TEXT.rule("max_changeovers")
def _changeovers(d: ProductionData, p: pp.MaxChangeovers) -> str:
    return f"Each line has at most {plural(p.max, 'changeover')} over the horizon."


@TEXT.rule("forbidden_succession")
def _succession(d: ProductionData, p: pp.ForbiddenSuccession) -> str:
    return f"Cleaning rule: no line makes {p.then} in the period right after a period in which it made {p.first}."


@TEXT.rule("max_runs")
def _max_runs(d: ProductionData, p: pp.MaxRuns) -> str:
    if not p.max:
        return f"Campaigning: {p.product} is not made at all (no line makes it in any period)."
    return (
        f"Campaigning: {p.product} is made in at most {plural(p.max, 'run')} in all (a run is one line in one period)."
    )


@TEXT.rule("line_balance")
def _balance(d: ProductionData, p: pp.LineBalance) -> str:
    return f"Line balance: the total lots made by any two lines over the horizon differ by at most {p.max}."


@TEXT.rule("material_supply")
def _material(d: ProductionData, p: NoParams) -> str:
    return (
        "Raw material: in every period, the material used by the lots made in periods 1 to that period is at most "
        "the initial material plus the deliveries of periods 1 to that period (a delivery can be used in its own "
        "period)."
    )


@TEXT.rule("safety_stock")
def _safety(d: ProductionData, p: pp.SafetyStock) -> str:
    return (
        f"Safety stock: from period {p.first} on, the net stock of {p.product} at the end of every period is at "
        f"least {plural(p.min, 'lot')}."
    )


@TEXT.rule("capacity_reserve")
def _reserve(d: ProductionData, p: pp.CapacityReserve) -> str:
    return (
        f"Robustness: {and_list(p.lines)} may lose one lot of capacity in any period, so in every period "
        f"{'it makes' if len(p.lines) == 1 else 'each makes'} at most (its capacity − 1) lots."
    )


@TEXT.objective("backlog")
def _backlog(d: ProductionData, p: NoParams) -> str:
    return (
        "the backlog: for each product and each period, the lots short at the end of the period (its negative net "
        "stock, else 0) × the product's backlog weight; summed"
    )


@TEXT.objective("cost")
def _cost(d: ProductionData, p: NoParams) -> str:
    return (
        "the total cost: each run (a line making a product in a period) costs the line's setup cost for that "
        "product plus the line's cost per lot × the lots made; each changeover costs the line's changeover cost; each lot held in stock at the "
        "end of a period costs the product's holding cost; summed"
    )


@TEXT.objective("changes")
def _changes(d: ProductionData, p: pp.CurrentRuns) -> str:
    return (
        "the number of line-periods whose product or lots differ from the current plan (an idle line-period is "
        "one with no run; each differing line-period counts 1)"
    )


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.tier == "hard" and r.kind != "capacity_reserve"]
    return f"the disruption in {and_list(ids)}, which it breaks" if ids else "the disruption among the rules"


def _uncertain(d: ProductionData, kind: str, target: str) -> bool:
    return any(u.kind == kind and u.target == target for u in d.uncertain)


@TEXT.body
def _body(d: ProductionData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    what, period, lot = CONTEXT.get(subtask, ("a plant", "period", "1 lot = one batch"))
    material = any(r.kind == "material_supply" for r in rules)
    costs = any(t.kind == "cost" for t in objective)
    backlog = any(t.kind == "backlog" for t in objective)
    out = [
        f"You are planning {what} over {d.periods} periods (one period = one {period}). For every line and period, "
        "choose at most one product and a whole number of lots to make of it.",
        f"{STOCK_NOTE} ({lot}.) Every run makes from 1 to {d.max_lots} lots, a fixed limit of the answer "
        "format and not one of the numbered rules (0 lots, or no row, means the line is idle in that period).",
        "A changeover happens in period t (t ≥ 2) when a line makes a product in period t - 1 and a different "
        "product in period t (an idle period in between is no changeover).",
        "",
        "**Products**:",
    ]
    for p in d.products:
        parts = [f"{p.id} {p.name}", f"initial stock {plural(p.initial, 'lot')}"]
        if costs:
            parts.append(f"holding cost €{ranged(d, 'hold', p.id, p.hold)} per lot held at the end of a period")
        if backlog:
            parts.append(f"backlog weight {p.penalty} per lot short at the end of a period")
        if material:
            parts.append(f"uses {plural(p.material, 'unit')} of raw material per lot")
        out.append("- " + " — ".join(parts))
    out += ["", "**Lines**:"]
    for x in d.lines:
        parts = [
            f"{x.id} {x.name}",
            f"capacity {ranged(d, 'capacity', x.id, x.capacity)} lots per period",
            f"can make {and_list(list(x.makes))}",
        ]
        if costs:
            setups = ", ".join(f"{p} €{c}" for p, c in x.setup.items())
            parts.append(f"setup cost per run: {setups}; €{x.cost} per lot made; changeover cost €{x.changeover}")
        out.append("- " + " — ".join(parts))
    out += ["", "**Orders** (lots taken from stock at the end of the period):"]
    if not d.orders:
        out.append("- none")
    for o in d.orders:
        lots = f"{ranged(d, 'order', o.id, o.lots)} lots" if _uncertain(d, "order", o.id) else plural(o.lots, "lot")
        out.append(f"- {o.id}: {lots} of {o.product}, due in period {o.period}")
    if material:
        out += [
            "",
            f"**Raw material**: {plural(d.material_initial, 'unit')} in stock before period 1; deliveries at the start of "
            + ", ".join(f"period {t}: {a}" for t, a in enumerate(d.arrivals, 1))
            + " units.",
        ]
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; change as few line-periods as you can):"]
        cur = pp.current_plan(changes)
        rows = [f"- {line}, period {t}: {plural(q, 'lot')} of {p}" for (line, t), (p, q) in cur.items()]
        out += rows or ["- all idle"]
        out.append("- every line-period not listed is idle")
    return out


@TEXT.verification
def _verification(d: ProductionData) -> str:
    return (
        "under `verification`, report from your plan `lots` (for every line, the lots it makes over the horizon) "
        "and `made` (for every product, the lots made of it over the horizon)."
    )
