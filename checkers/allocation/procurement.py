"""Checks for Procurement Planning answers: orders placed with suppliers, period by period.

Stock is simulated period by period, literally as the prompt states it: at the start of
a period the deliveries due that period arrive, then the period's demand is used, and
what is left is carried into the next period.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from pbsolve.answer_checks import stated_int
from pbsolve.checker_kit import MAX_QUANTITY, OK, PerData, lookup, row_names
from pbsolve.checkers.allocation import rule_params as rp
from pbsolve.checkers.allocation.common import TaskChecker
from pbsolve.checkers.allocation.data import ProcurementData
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import NoParams, Params, as_model
from pbsolve.schema import Instance, ObjectiveTerm, Rule

Plan = dict[tuple[str, str, int], int]  # (supplier, item, order period index) -> units (> 0)


class Orders(dict[tuple[str, str, int], int]):
    """A plan as :meth:`Procurement.read_plan` reads it, with what the checks work out from
    it kept beside it: the rules and the objective of one answer all read the same stock
    levels and order totals, so each is worked out once (a read plan is never changed;
    stock levels are kept per data object, see :class:`PerData`). Any other plan (a plain
    dict) is worked out on every call, to the same figures."""

    __slots__ = ("_arrivals", "_by", "_levels")

    def __init__(self) -> None:
        super().__init__()
        self._arrivals: PerData[dict[str, list[int]]] = PerData()
        self._levels: PerData[dict[str, list[int]]] = PerData()
        self._by: dict[tuple[str, int], int] | None = None


CHECKS: KindRegistry[Check] = KindRegistry("check")


check = CHECKS.register


# -- derived figures -------------------------------------------------------------------
def arrivals(d: ProcurementData, plan: Plan) -> dict[str, list[int]]:
    """Units arriving per item and period; kept with a read plan (:class:`Orders`), so
    never to be changed by the caller."""
    if type(plan) is Orders:
        return plan._arrivals.get(d, lambda: _arrivals(d, plan))
    return _arrivals(d, plan)


def _arrivals(d: ProcurementData, plan: Plan) -> dict[str, list[int]]:
    out = {i.id: [0] * len(d.periods) for i in d.items}
    lead = d.lead_times
    for (s, i, t), q in plan.items():
        out[i][t + lead[s]] += q
    return out


def stock_levels(d: ProcurementData, plan: Plan) -> dict[str, list[int]]:
    """End-of-period stock per item (negative when demand went unmet); kept with a read
    plan (:class:`Orders`), so never to be changed by the caller."""
    if type(plan) is Orders:
        return plan._levels.get(d, lambda: _stock_levels(d, plan))
    return _stock_levels(d, plan)


def _stock_levels(d: ProcurementData, plan: Plan) -> dict[str, list[int]]:
    arr = arrivals(d, plan)
    out = {}
    periods = range(len(d.periods))
    for item in d.items:
        level, levels, incoming, demand = item.initial_stock, [], arr[item.id], item.demand
        for t in periods:
            level += incoming[t] - demand[t]
            levels.append(level)
        out[item.id] = levels
    return out


def _ordered_by(plan: Plan) -> dict[tuple[str, int], int]:
    """(supplier, order period) -> the units ordered from it in that period, all items
    together, in one pass (absent: nothing ordered); kept with a read plan (:class:`Orders`)."""
    if type(plan) is Orders:
        if plan._by is None:
            plan._by = _count_orders(plan)
        return plan._by
    return _count_orders(plan)


def _count_orders(plan: Plan) -> dict[tuple[str, int], int]:
    out: dict[tuple[str, int], int] = {}
    for (s, _, t), q in plan.items():
        out[s, t] = out.get((s, t), 0) + q
    return out


def spend_in(d: ProcurementData, plan: Plan, t: int, by: dict[tuple[str, int], int]) -> int:
    """What the orders placed in period ``t`` cost (``by``: :func:`_ordered_by` of the plan)."""
    total = sum(d.prices[s, i] * q for (s, i, u), q in plan.items() if u == t)
    return total + sum(s.fixed_cost for s in d.suppliers if by.get((s.id, t), 0) > 0)


# -- rule checks -----------------------------------------------------------------------
@check("inventory_balance")
def _inventory_balance(d: ProcurementData, plan: Plan, p: NoParams) -> Verdict:
    for item, levels in stock_levels(d, plan).items():
        for t, level in enumerate(levels):
            if level < 0:
                return False, f"{item} runs {-level} short in {d.periods[t]}"
    return OK


@check("supplier_capacity")
def _supplier_capacity(d: ProcurementData, plan: Plan, p: NoParams) -> Verdict:
    by = _ordered_by(plan)
    for s in d.suppliers:
        for t in range(len(d.periods)):
            n = by.get((s.id, t), 0)
            if n > s.capacity:
                return False, f"{s.id} gets orders for {n} units in {d.periods[t]} (capacity {s.capacity})"
    return OK


@check("period_budget")
def _period_budget(d: ProcurementData, plan: Plan, p: rp.PeriodBudget) -> Verdict:
    by = _ordered_by(plan)
    for t in range(len(d.periods)):
        spent = spend_in(d, plan, t, by)
        if spent > p.max:
            return False, f"spending in {d.periods[t]} is {spent} (budget {p.max})"
    return OK


@check("min_order")
def _min_order(d: ProcurementData, plan: Plan, p: rp.MinOrder) -> Verdict:
    by = _ordered_by(plan)
    for supplier, least in p.min.items():
        for t in range(len(d.periods)):
            n = by.get((supplier, t), 0)
            if 0 < n < least:
                return False, f"the order with {supplier} in {d.periods[t]} is {n} units (minimum {least})"
    return OK


@check("supplier_closed")
def _supplier_closed(d: ProcurementData, plan: Plan, p: rp.SupplierClosed) -> Verdict:
    by = _ordered_by(plan)
    for label in p.periods:
        if by.get((p.supplier, d.period_index[label]), 0) > 0:
            return False, f"an order is placed with {p.supplier} in {label}, when it takes none"
    return OK


@check("dock_capacity")
def _dock_capacity(d: ProcurementData, plan: Plan, p: rp.DockCapacity) -> Verdict:
    arr = arrivals(d, plan)
    for t in range(len(d.periods)):
        n = sum(arr[i.id][t] for i in d.items)
        if n > p.max:
            return False, f"{n} units arrive in {d.periods[t]} (dock limit {p.max})"
    return OK


@check("safety_stock")
def _safety_stock(d: ProcurementData, plan: Plan, p: rp.SafetyStock) -> Verdict:
    for t, level in enumerate(stock_levels(d, plan)[p.item]):
        if level < p.min:
            return False, f"{p.item} ends {d.periods[t]} with {level} in stock (safety stock {p.min})"
    return OK


@check("stock_target")
def _stock_target(d: ProcurementData, plan: Plan, p: rp.StockTarget) -> Verdict:
    level = stock_levels(d, plan)[p.item][d.period_index[p.period]]
    if level < p.min:
        return False, f"{p.item} ends {p.period} with {level} in stock (at least {p.min} committed)"
    return OK


@check("storage_cap")
def _storage_cap(d: ProcurementData, plan: Plan, p: rp.StorageCap) -> Verdict:
    levels = stock_levels(d, plan)
    for t in range(len(d.periods)):
        n = sum(levels[i.id][t] for i in d.items)
        if n > p.max:
            return False, f"{n} units are in store at the end of {d.periods[t]} (room for {p.max})"
    return OK


@check("shelf_life")
def _shelf_life(d: ProcurementData, plan: Plan, p: rp.ShelfLife) -> Verdict:
    """First in, first out: lots of (arrival period, units); a unit that arrived in
    period a may be used up to period a + k - 1 and must not be in stock after it."""
    item, k = d.item_by_id[p.item], p.periods
    arr = arrivals(d, plan)[item.id]
    lots: deque[list[int]] = deque([[0, item.initial_stock]] if item.initial_stock else [])
    backlog = 0
    for t in range(len(d.periods)):
        incoming = arr[t]
        paid = min(backlog, incoming)  # an arrival first covers demand already missed
        backlog, incoming = backlog - paid, incoming - paid
        if incoming:
            lots.append([t, incoming])
        need = item.demand[t]
        while need and lots:
            take = min(need, lots[0][1])
            lots[0][1] -= take
            need -= take
            if lots[0][1] == 0:
                lots.popleft()
        backlog += need
        for a, units in lots:
            if a + k - 1 <= t:
                return (
                    False,
                    f"{units} units of {item.id} received in {d.periods[a]} are still in stock at the end of {d.periods[t]}",
                )
    return OK


@check("supplier_share")
def _supplier_share(d: ProcurementData, plan: Plan, p: rp.SupplierShare) -> Verdict:
    item, pct = p.item, p.pct
    total = sum(q for (_, i, _), q in plan.items() if i == item)
    for s in d.suppliers:
        mine = sum(q for (x, i, _), q in plan.items() if x == s.id and i == item)
        if 100 * mine > pct * total:
            return False, f"{s.id} provides {mine} of the {total} {item} ordered, more than {pct}%"
    return OK


@check("contract_minimum")
def _contract_minimum(d: ProcurementData, plan: Plan, p: rp.ContractMinimum) -> Verdict:
    n = sum(q for (s, _, _), q in plan.items() if s == p.supplier)
    return OK if n >= p.min else (False, f"{p.supplier} receives orders for {n} units (contract minimum {p.min})")


@check("order_gap")
def _order_gap(d: ProcurementData, plan: Plan, p: rp.OrderGap) -> Verdict:
    s = p.supplier
    by = _ordered_by(plan)
    for t in range(len(d.periods) - 1):
        if by.get((s, t), 0) > 0 and by.get((s, t + 1), 0) > 0:
            return False, f"orders are placed with {s} in both {d.periods[t]} and {d.periods[t + 1]}"
    return OK


def _sources(plan: Plan, item: str) -> list[str]:
    return sorted({s for (s, i, _), q in plan.items() if i == item and q > 0})


@check("single_sourcing")
def _single_sourcing(d: ProcurementData, plan: Plan, p: rp.SingleSourcing) -> Verdict:
    sources = _sources(plan, p.item)
    return OK if len(sources) <= 1 else (False, f"{p.item} is bought from {', '.join(sources)}")


@check("dual_sourcing")
def _dual_sourcing(d: ProcurementData, plan: Plan, p: rp.DualSourcing) -> Verdict:
    sources = _sources(plan, p.item)
    return OK if len(sources) >= 2 else (False, f"{p.item} is bought from {len(sources)} supplier(s)")


@check("lot_cap")
def _lot_cap(d: ProcurementData, plan: Plan, p: rp.LotCap) -> Verdict:
    for (s, i, t), q in plan.items():
        if q > p.max:
            return False, f"the order of {q} {i} from {s} in {d.periods[t]} exceeds the lot size {p.max}"
    return OK


@check("delay_robust")
def _delay_robust(d: ProcurementData, plan: Plan, p: NoParams) -> Verdict:
    """Simulates the plan, then each delivery arriving one period late on its own: every
    period's demand must be met from stock every time."""
    verdict = _inventory_balance(d, plan, p)
    if not verdict[0]:
        return verdict
    for (s, i, t), q in plan.items():
        late = {cell: n for cell, n in plan.items() if cell != (s, i, t)}
        due = d.arrival(s, t) + 1
        levels = stock_levels(d, late)[i]
        # the late delivery is in stock from period `due` on (if that is within the horizon)
        for u in range(due, len(d.periods)):
            levels[u] += q
        for u, level in enumerate(levels):
            if level < 0:
                return (
                    False,
                    f"if the {q} {i} from {s} ordered in {d.periods[t]} came a period late, {i} would run {-level} short in {d.periods[u]}",
                )
    return OK


# -- objective -------------------------------------------------------------------------
def objective_value(d: ProcurementData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind  # read once: the chain below tests it several times
    if kind == "total_cost":
        prices, purchase = d.prices, 0
        for (s, i, _), q in plan.items():
            purchase += prices[s, i] * q
        by, periods, fixed = _ordered_by(plan), range(len(d.periods)), 0
        for supplier in d.suppliers:
            for t in periods:
                if by.get((supplier.id, t), 0) > 0:
                    fixed += supplier.fixed_cost
        levels, holding = stock_levels(d, plan), 0
        for item in d.items:
            holding += item.holding_cost * sum(levels[item.id])
        return purchase + fixed + holding
    if kind == "order_score":
        number = {s.id: n for n, s in enumerate(d.suppliers, 1)}
        return sum(q * (10 * number[s] + t + 1) for (s, _, t), q in plan.items())
    if kind == "changes":
        old = {(s, i, d.period_index[label]): q for s, i, label, q in as_model(tp, rp.CurrentOrders).existing}
        return sum(1 for cell in set(old) | set(plan) if old.get(cell, 0) != plan.get(cell, 0))
    raise ValueError(f"unknown objective kind {term.kind!r}")


class Procurement(TaskChecker):
    task = "procurement_planning"
    plan_key = "orders"
    plan_text = (
        "a list of order lines, each naming a supplier, an item it sells, a week whose order arrives by the last "
        "week and a whole quantity within the supplier's weekly capacity, no line listed twice"
    )
    data_type = ProcurementData
    checks = CHECKS
    rule_params = rp.RULE_PARAMS["procurement_planning"]
    term_params = rp.TERM_PARAMS["procurement_planning"]

    def lookups(self, d: ProcurementData) -> dict[str, Any]:
        return {
            "supplier": lookup([s.id for s in d.suppliers]),
            "item": lookup([i.id for i in d.items]),
            "week": lookup(list(d.periods)),
            "cells": _cell_caps(d),
        }

    def read_plan(
        self, d: ProcurementData, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Plan | None, str]:
        rows = section.get("orders") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'orders' is missing or not a list"
        plan = Orders()
        seen: set[tuple[str, str, int]] = set()
        fields = {"supplier": lk["supplier"], "item": lk["item"], "week": lk["week"]}
        ex_supplier, ex_item, ex_week = fields["supplier"].exact, fields["item"].exact, fields["week"].exact
        cells = lk["cells"]
        for k, row in enumerate(rows):
            try:  # the usual row, each name as the instance spells it: row_names' answer, read inline
                if type(row) is not dict:
                    raise TypeError
                s, i, label = ex_supplier[row["supplier"]], ex_item[row["item"]], ex_week[row["week"]]
            except (KeyError, TypeError):
                names, why = row_names(row, k, "order", fields)
                if names is None:
                    return None, why
                s, i, label = names
            t = d.period_index[label]
            q = row.get("quantity")
            if type(q) is int and 0 <= q <= cells.get((s, i, t), -1) and (s, i, t) not in seen:
                seen.add((s, i, t))  # the usual row: every test below passes
                if q:
                    plan[s, i, t] = q
                continue
            if type(q) is not int:  # an int stands for itself; anything else is read by stated_int
                q = stated_int(q)
            if q is None or not 0 <= q <= MAX_QUANTITY:
                return None, f"order {k + 1} needs a whole non-negative 'quantity'"
            if (s, i) not in d.prices:
                return None, f"{s} does not sell {i}"
            if q > d.supplier_by_id[s].capacity:
                return (
                    None,
                    f"order {k + 1} asks {s} for {q} units, more than it can ever ship in a period ({d.supplier_by_id[s].capacity})",
                )
            if d.arrival(s, t) >= len(d.periods):
                return None, f"an order with {s} placed in {label} would arrive after {d.periods[-1]}"
            if (s, i, t) in seen:
                return None, f"the order of {i} from {s} in {label} appears more than once"
            seen.add((s, i, t))
            if q:
                plan[s, i, t] = q
        return plan, "complete plan"

    def objective_value(self, d: ProcurementData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: ProcurementData, plan: Plan) -> dict[str, dict[str, int]]:
        spend = {}
        by = _ordered_by(plan)
        for s in d.suppliers:
            units = sum(d.prices[s.id, i] * q for (x, i, _), q in plan.items() if x == s.id)
            fixed = s.fixed_cost * sum(1 for t in range(len(d.periods)) if by.get((s.id, t), 0) > 0)
            spend[s.id] = units + fixed
        levels = stock_levels(d, plan)
        return {"spend": spend, "closing_stock": {i.id: levels[i.id][-1] for i in d.items}}

    def existing(self, d: ProcurementData, plan: Plan) -> list[list[Any]]:
        return [[s, i, d.periods[t], q] for (s, i, t), q in sorted_orders(d, plan)]

    def plan_schema(self, d: ProcurementData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        row = {
            "type": "object",
            "properties": {
                "quantity": {"type": "integer"},
                "supplier": {"enum": [s.id for s in d.suppliers]},
                "item": {"enum": [i.id for i in d.items]},
                "week": {"enum": list(d.periods)},
            },
            "required": ["quantity", "supplier", "item", "week"],
        }
        return {
            "type": "array",
            "items": row,
            "description": "every order you place: the units of one item ordered from one supplier in the week "
            "the order is placed, each supplier, item and week at most once (leave out what you do not order)",
        }

    def verification_schema(self, d: ProcurementData) -> dict[str, Any]:
        return figures_schema({
            "spend": ([s.id for s in d.suppliers], "for each supplier, everything paid to it: unit prices and order charges"),
            "closing_stock": ([i.id for i in d.items], f"for each item, the stock at the end of {d.periods[-1]}"),
        })  # fmt: skip

    def plan_json(self, d: ProcurementData, plan: Plan) -> list[dict[str, Any]]:
        return [
            {"quantity": q, "supplier": s, "item": i, "week": d.periods[t]} for (s, i, t), q in sorted_orders(d, plan)
        ]

    def baseline_plan(self, d: ProcurementData, instance: Instance) -> Plan:
        """Just in time, from the cheapest supplier that can still deliver, ignoring every
        rule but the stock."""
        plan: Plan = {}
        for item in d.items:
            level = item.initial_stock
            for t in range(len(d.periods)):
                level += sum(q for (s, i, u), q in plan.items() if i == item.id and d.arrival(s, u) == t)
                short = item.demand[t] - level
                if short > 0:
                    options = [
                        (d.prices[s.id, item.id], n, s.id)
                        for n, s in enumerate(d.suppliers)
                        if (s.id, item.id) in d.prices and t - s.lead_time >= 0
                    ]
                    if options:
                        _, _, s = min(options)
                        cell = (s, item.id, t - d.supplier_by_id[s].lead_time)
                        plan[cell] = plan.get(cell, 0) + short
                        level += short
                level -= item.demand[t]
        return plan


def _cell_caps(d: ProcurementData) -> dict[tuple[str, str, int], int]:
    """(supplier, item, order period) -> the most units an order there may ask, for every
    cell an order may use, by the tests of :meth:`Procurement.read_plan` themselves: an
    order line naming such a cell with a quantity from 0 to this passes every one of them
    but the one against a line listed twice."""
    n, caps = len(d.periods), {}
    for s, i in d.prices:
        most = min(d.supplier_by_id[s].capacity, MAX_QUANTITY)
        for t in range(n):
            if d.arrival(s, t) < n:
                caps[s, i, t] = most
    return caps


def sorted_orders(d: ProcurementData, plan: Plan) -> list[tuple[tuple[str, str, int], int]]:
    rank = {cell: n for n, cell in enumerate(d.cells)}
    return sorted(plan.items(), key=lambda kv: rank.get(kv[0], len(rank)))


TASK = Procurement()
