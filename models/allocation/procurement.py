"""Procurement Planning: order items from suppliers period by period.

Decision: q[s,i,t], the integer units of item i ordered from supplier s in period t
(only where s sells i and the delivery arrives within the horizon; at most s's
capacity). An order placed in period t arrives at the start of period t + lead time.
Stock is carried from period to period (the stateful base rule).

Instances are built around a planted *witness* plan: demand, suppliers and prices are
drawn, a random plan that meets demand is built, capacities are set above its use, and
sampled rules take parameters the witness satisfies. The optimum is usually a different,
cheaper plan.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.allocation import rule_params as rp
from pbsolve.checkers.allocation.data import Item, Offer, ProcurementData, Supplier
from pbsolve.family import Draft, NoDraft, SolverModel
from pbsolve.kit import (
    IntRange,
    KindRegistry,
    PositiveRange,
    Settings,
    SizeTable,
    Uncertain,
    insert_position,
    sampled_kinds,
    witness_rules,
)
from pbsolve.model_kit import (
    Encoder,
    HardHooks,
    ModelBase,
    added_rule,
    alone_infeasible,
    first_infeasible,
    solver_model,
    with_conflict_rule,
)
from pbsolve.params import NoParams, Params, make_rule
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id="procurement_planning",
    name="Procurement Planning",
    family="allocation",
    summary="order items from suppliers period by period under lead times, capacities, budgets and stock carried over",
    subtasks=(
        SubtaskSpec("manufacturing_inputs", "Manufacturing inputs", "raw materials for a production line"),
        SubtaskSpec(
            "restaurant_supplies",
            "Restaurant supplies",
            "perishable ingredients for a kitchen, used first in first out",
        ),
        SubtaskSpec("hospital_consumables", "Hospital consumables", "gloves, syringes and dressings for the wards"),
        SubtaskSpec(
            "construction_materials",
            "Construction materials",
            "bulky materials for a building site with little storage",
        ),
        SubtaskSpec(
            "seasonal_demand",
            "Seasonal demand",
            "a holiday rush in one week beyond the suppliers' weekly capacity, bought ahead and held in stock",
        ),
    ),
    pool=(
        ConstraintSpec(
            "inventory_balance",
            "stateful",
            "stock carried over periods with lead times; every period's demand met from stock",
        ),
        ConstraintSpec("supplier_capacity", "basic", "a supplier ships at most its capacity per order period"),
        ConstraintSpec("period_budget", "basic", "spending per period within a budget"),
        ConstraintSpec("min_order", "basic", "minimum order quantities of some suppliers"),
        ConstraintSpec("supplier_closed", "basic", "a supplier takes no orders in stated periods"),
        ConstraintSpec("dock_capacity", "basic", "at most so many units received per period"),
        ConstraintSpec("safety_stock", "basic", "an item never ends a period below its safety stock"),
        ConstraintSpec("storage_cap", "basic", "total stock at the end of each period within the storage space"),
        ConstraintSpec(
            "stock_target",
            "basic",
            "a delivery commitment: at least so many units of an item in stock at the end of a period",
        ),
        ConstraintSpec("lot_cap", "basic", "no single order line exceeds a lot size"),
        ConstraintSpec("supplier_share", "medium", "fairness: no supplier provides more than a share of an item"),
        ConstraintSpec(
            "contract_minimum",
            "medium",
            "minimum guarantee: a contracted supplier receives orders for at least so many units",
        ),
        ConstraintSpec("order_gap", "medium", "buffer: no orders with a supplier in two consecutive periods"),
        ConstraintSpec(
            "single_sourcing", "medium", "an item is bought from one supplier only", excludes=("dual_sourcing",)
        ),
        ConstraintSpec(
            "dual_sourcing", "medium", "an item is bought from at least two suppliers", excludes=("single_sourcing",)
        ),
        ConstraintSpec("shelf_life", "stateful", "perishable stock is used first in first out within its shelf life"),
        *mechanism_pool("the plan survives any one delivery arriving a period late"),
    ),
    base_rules=("inventory_balance", "supplier_capacity"),
)

SUPPLIERS = ("Apex", "Borealis", "Crown", "Dynamo", "Evergreen", "Fulcrum")
CATALOGUE = {
    "manufacturing_inputs": (("Steel sheet", "sheets"), ("Resin", "kg"), ("Copper wire", "reels"), ("Fasteners", "boxes"), ("Paint", "litres")),
    "restaurant_supplies": (("Flour", "kg"), ("Tomatoes", "kg"), ("Cheese", "kg"), ("Olive oil", "litres"), ("Basil", "bunches")),
    "hospital_consumables": (("Gloves", "boxes"), ("Syringes", "packs"), ("Dressings", "packs"), ("Masks", "boxes"), ("Saline", "bags")),
    "construction_materials": (("Cement", "bags"), ("Rebar", "bars"), ("Bricks", "pallets"), ("Timber", "beams"), ("Gravel", "tonnes")),
    "seasonal_demand": (("Gift boxes", "boxes"), ("Wrapping paper", "rolls"), ("Candles", "cartons"), ("Chocolates", "cases"), ("Fairy lights", "sets")),
}  # fmt: skip


class ProcurementSizes(Settings):
    """How big a procurement instance is. Default measured at ~8 certified instances/s on
    one core; a sixth week or a fourth supplier drops it to 3.5 / 5.6 per s (order charges
    make lot sizing combinatorial)."""

    periods: PositiveInt = Field(description="weeks W1, W2, ...")
    items: PositiveInt = Field(le=min(len(c) for c in CATALOGUE.values()))
    suppliers: int = Field(ge=2, le=len(SUPPLIERS), description="every item is sold by at least two")
    demand: PositiveRange = Field(description="units per item and week (a week has none with chance 0.15)")
    price: PositiveRange = Field(description="an item's base unit price")
    fixed_cost: IntRange = Field(description="a supplier's charge per order week (none when the range is 0-0)")
    holding_cost: IntRange = Field(description="per unit and week in stock")
    enumerable: bool = Field(
        default=False,
        description="capacities at most 3, lead times 0-1 and costs in steps of 1: small enough to enumerate every plan",
    )


SIZES = SizeTable[ProcurementSizes](
    tiny=ProcurementSizes(
        periods=3, items=1, suppliers=2, demand=PositiveRange(lo=1, hi=3), price=PositiveRange(lo=1, hi=9),
        fixed_cost=IntRange(lo=0, hi=4), holding_cost=IntRange(lo=1, hi=1), enumerable=True,
    ),
    small=ProcurementSizes(
        periods=4, items=2, suppliers=3, demand=PositiveRange(lo=5, hi=30), price=PositiveRange(lo=3, hi=25),
        fixed_cost=IntRange(lo=10, hi=60), holding_cost=IntRange(lo=1, hi=2),
    ),
    default=ProcurementSizes(
        periods=5, items=3, suppliers=3, demand=PositiveRange(lo=4, hi=18), price=PositiveRange(lo=20, hi=200),
        fixed_cost=IntRange(lo=40, hi=200), holding_cost=IntRange(lo=5, hi=15),
    ),
    large=ProcurementSizes(
        periods=8, items=4, suppliers=4, demand=PositiveRange(lo=4, hi=18), price=PositiveRange(lo=20, hi=200),
        fixed_cost=IntRange(lo=40, hi=200), holding_cost=IntRange(lo=5, hi=15),
    ),
)  # fmt: skip
PERISHABLE = ("restaurant_supplies",)
SEASONAL = "seasonal_demand"  # one peak week beyond the suppliers' weekly capacity (see _seasonal_peak)
# Stock balances, budgets and capacities are linear: every solve uses the full LP
# relaxation (feasibility probes with the default level were measured up to 500x slower).
# the uniqueness re-optimisation with linearization 1: measured on 31 stored default
# instances, 0.66-0.90 against 1.5-1.8 s in all, the same certificates; and with one
# presolve pass without probing (with the lot-sizing inequalities, on 82 stored drafts:
# one pass 3.1-3.3 against 3.6-3.9 CPU s for both optimisations; no probing on top, on an
# idler machine, 3.12 against 3.40-3.45 CPU s, uniqueness 1.66-1.80 against 1.98-2.07 s;
# the same certificates)
UNIQUENESS_PARAMETERS = {"linearization_level": 1, "max_presolve_iterations": 1, "cp_model_probing_level": 0}
# The uniqueness proof starts from the first solve's last plan before the optimum
# (SolverModel.uniqueness_hint): CPU s of the proof on the drafts of 30 default indices per
# seed, the same certificates: seeds 0-1 0.68 against 0.62, seeds 2-5 1.76 against 1.40,
# seeds 6-9 1.46 against 1.34 (the first solve with its plans recorded: 0.41, 0.99, 0.79
# either way).
LP_PARAMETERS = {"linearization_level": 2}
PROBE_TIME = 2.0  # deterministic seconds per feasibility probe of the infeasible variant


# -- the CP-SAT model ------------------------------------------------------------------
class ProcurementModel(ModelBase):
    def __init__(self, data: ProcurementData) -> None:
        super().__init__()
        self.data = d = data
        n = len(d.periods)
        self.q: dict[tuple[str, str, int], cp_model.IntVar] = {}
        for s, i, t in d.cells:
            self.q[s, i, t] = self.m.new_int_var(0, d.supplier_by_id[s].capacity, f"q[{s},{i},{t}]")
        # y[s,t] = 1 exactly when an order is placed with s in t (a definition: it forbids nothing)
        self.y: dict[tuple[str, int], cp_model.IntVar] = {}
        for sup in d.suppliers:
            for t in range(n):
                cells = self.of(sup.id, t)
                if cells:
                    y = self.m.new_bool_var(f"y[{sup.id},{t}]")
                    for v in cells:  # disaggregated linking: a tighter LP than one big-M row
                        self.m.add(v <= sup.capacity * y)
                    self.m.add(sum(cells) >= y)
                    self.y[sup.id, t] = y
        self.arr = {
            i.id: [sum(v for (s, x, t), v in self.q.items() if x == i.id and d.arrival(s, t) == u) for u in range(n)]
            for i in d.items
        }
        self.stock = {}
        for item in d.items:
            levels: list[cp_model.LinearExpr | int] = []
            level: cp_model.LinearExpr | int = item.initial_stock
            for t in range(n):
                level = level + self.arr[item.id][t] - item.demand[t]
                levels.append(level)
            self.stock[item.id] = levels
        self._used: dict[tuple[str, str], cp_model.IntVar] = {}

    def of(self, supplier: str, t: int) -> list[cp_model.IntVar]:
        return [v for (s, _, u), v in self.q.items() if s == supplier and u == t]

    def ordered(self, supplier: str, t: int) -> cp_model.LinearExprT:
        return sum(self.of(supplier, t))

    def spend(self, t: int) -> cp_model.LinearExprT:
        d = self.data
        return sum(d.prices[s, i] * v for (s, i, u), v in self.q.items() if u == t) + sum(
            d.supplier_by_id[s].fixed_cost * y for (s, u), y in self.y.items() if u == t
        )

    def used(self, supplier: str, item: str) -> cp_model.IntVar | None:
        """1 exactly when anything of the item is ordered from the supplier."""
        cells = [v for (s, i, _), v in self.q.items() if s == supplier and i == item]
        if not cells:
            return None
        if (supplier, item) not in self._used:
            cap = self.data.supplier_by_id[supplier].capacity
            u = self.m.new_bool_var(f"u[{supplier},{item}]")
            for v in cells:
                self.m.add(v <= cap * u)
            self.m.add(sum(cells) >= u)
            self._used[supplier, item] = u
        return self._used[supplier, item]

    def stock_bound(self, item: str) -> int:
        return self.data.item_by_id[item].initial_stock + sum(
            self.data.supplier_by_id[s].capacity for (s, i, _) in self.q if i == item
        )


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("inventory_balance")
def _inventory_balance(tm: ProcurementModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for levels in tm.stock.values():
        for level in levels:
            tm.post(level >= 0, lit)
    _lot_sizing_cuts(tm, lit)


def _lot_sizing_cuts(tm: ProcurementModel, lit: cp_model.IntVar) -> None:
    """Redundant (l, S) lot-sizing inequalities with S one order line: an order of item i
    with supplier s in week t (arriving in week a) exceeds neither the demand of weeks a..l
    (when an order is placed with s in t at all) plus the stock at the end of l.

    Valid for every plan with stock never negative: the units of that order, arriving in
    week a, are either used in weeks a..l or still in stock at the end of l. They forbid no
    plan; they tighten the LP relaxation of the order charges (q <= capacity * y)."""
    d = tm.data
    n = len(d.periods)
    for (s, i, t), v in tm.q.items():
        a = d.arrival(s, t)
        cap = d.supplier_by_id[s].capacity
        demand = d.item_by_id[i].demand
        need = 0
        for u in range(a, n):
            need += demand[u]
            if need >= cap:
                break  # implied by q <= capacity * y and stock >= 0
            tm.post(v <= need * tm.y[s, t] + tm.stock[i][u], lit)


@encoder("supplier_capacity")
def _supplier_capacity(tm: ProcurementModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for s in tm.data.suppliers:
        for t in range(len(tm.data.periods)):
            cells = tm.of(s.id, t)
            if len(cells) > 1:
                tm.post(sum(cells) <= s.capacity, lit)


@encoder("period_budget")
def _period_budget(tm: ProcurementModel, p: rp.PeriodBudget, lit: cp_model.IntVar) -> None:
    for t in range(len(tm.data.periods)):
        tm.post(tm.spend(t) <= p.max, lit)


@encoder("min_order")
def _min_order(tm: ProcurementModel, p: rp.MinOrder, lit: cp_model.IntVar) -> None:
    for supplier, least in p.min.items():
        for t in range(len(tm.data.periods)):
            if (supplier, t) in tm.y:
                tm.post(tm.ordered(supplier, t) >= least * tm.y[supplier, t], lit)


@encoder("supplier_closed")
def _supplier_closed(tm: ProcurementModel, p: rp.SupplierClosed, lit: cp_model.IntVar) -> None:
    for label in p.periods:
        cells = tm.of(p.supplier, tm.data.period_index[label])
        if cells:
            tm.post(sum(cells) == 0, lit)


@encoder("dock_capacity")
def _dock_capacity(tm: ProcurementModel, p: rp.DockCapacity, lit: cp_model.IntVar) -> None:
    for t in range(len(tm.data.periods)):
        tm.post(sum(tm.arr[i.id][t] for i in tm.data.items) <= p.max, lit)


@encoder("safety_stock")
def _safety_stock(tm: ProcurementModel, p: rp.SafetyStock, lit: cp_model.IntVar) -> None:
    for level in tm.stock[p.item]:
        tm.post(level >= p.min, lit)


@encoder("storage_cap")
def _storage_cap(tm: ProcurementModel, p: rp.StorageCap, lit: cp_model.IntVar) -> None:
    for t in range(len(tm.data.periods)):
        tm.post(sum(tm.stock[i.id][t] for i in tm.data.items) <= p.max, lit)


@encoder("stock_target")
def _stock_target(tm: ProcurementModel, p: rp.StockTarget, lit: cp_model.IntVar) -> None:
    tm.post(tm.stock[p.item][tm.data.period_index[p.period]] >= p.min, lit)


@encoder("shelf_life")
def _shelf_life(tm: ProcurementModel, p: rp.ShelfLife, lit: cp_model.IntVar) -> None:
    """First in, first out leaves the newest units in stock, so no unit is older than
    allowed exactly when the stock is at most what arrived in the last k - 1 periods
    (the initial stock counts as arriving in the first period)."""
    item, k = tm.data.item_by_id[p.item], p.periods
    for t in range(len(tm.data.periods)):
        recent: cp_model.LinearExpr | int = sum(tm.arr[item.id][a] for a in range(max(0, t - k + 2), t + 1))
        if t <= k - 2:
            recent = recent + item.initial_stock  # never +=: it would change the shared sum in place
        tm.post(tm.stock[item.id][t] <= recent, lit)


@encoder("supplier_share")
def _supplier_share(tm: ProcurementModel, p: rp.SupplierShare, lit: cp_model.IntVar) -> None:
    item, pct = p.item, p.pct
    total = sum(v for (_, i, _), v in tm.q.items() if i == item)
    for s in tm.data.suppliers:
        mine = [v for (x, i, _), v in tm.q.items() if x == s.id and i == item]
        if mine:
            tm.post(100 * sum(mine) <= pct * total, lit)


@encoder("contract_minimum")
def _contract_minimum(tm: ProcurementModel, p: rp.ContractMinimum, lit: cp_model.IntVar) -> None:
    tm.post(sum(v for (s, _, _), v in tm.q.items() if s == p.supplier) >= p.min, lit)


@encoder("order_gap")
def _order_gap(tm: ProcurementModel, p: rp.OrderGap, lit: cp_model.IntVar) -> None:
    s = p.supplier
    for t in range(len(tm.data.periods) - 1):
        if (s, t) in tm.y and (s, t + 1) in tm.y:
            tm.post(tm.y[s, t] + tm.y[s, t + 1] <= 1, lit)


@encoder("single_sourcing")
def _single_sourcing(tm: ProcurementModel, p: rp.SingleSourcing, lit: cp_model.IntVar) -> None:
    used = [u for s in tm.data.suppliers if (u := tm.used(s.id, p.item)) is not None]
    if len(used) > 1:
        tm.post(sum(used) <= 1, lit)


@encoder("dual_sourcing")
def _dual_sourcing(tm: ProcurementModel, p: rp.DualSourcing, lit: cp_model.IntVar) -> None:
    used = [u for s in tm.data.suppliers if (u := tm.used(s.id, p.item)) is not None]
    tm.post(sum(used) >= 2, lit)


@encoder("lot_cap")
def _lot_cap(tm: ProcurementModel, p: rp.LotCap, lit: cp_model.IntVar) -> None:
    for v in tm.q.values():
        tm.post(v <= p.max, lit)


@encoder("delay_robust")
def _delay_robust(tm: ProcurementModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """A delivery arriving in period a and delayed by one period lowers only the stock
    at the end of a, by its own size."""
    for levels in tm.stock.values():
        for level in levels:
            tm.post(level >= 0, lit)
    for (s, i, t), v in tm.q.items():
        tm.post(tm.stock[i][tm.data.arrival(s, t)] - v >= 0, lit)


def _objective(tm: ProcurementModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    if term.kind == "total_cost":
        purchase = sum(d.prices[s, i] * v for (s, i, _), v in tm.q.items())
        fixed = sum(d.supplier_by_id[s].fixed_cost * y for (s, _), y in tm.y.items())
        # stock is never negative under the inventory rule; signed, the cost stays linear
        holding = [item.holding_cost * level for item in d.items for level in tm.stock[item.id]]
        ub = sum(d.prices[s, i] * d.supplier_by_id[s].capacity for (s, i, _) in tm.q)
        ub += sum(d.supplier_by_id[s].fixed_cost for (s, _) in tm.y)
        ub += sum(i.holding_cost * tm.stock_bound(i.id) * len(d.periods) for i in d.items)
        return purchase + fixed + sum(holding), ub
    if term.kind == "order_score":
        number = {s.id: n for n, s in enumerate(d.suppliers, 1)}
        weight = {cell: 10 * number[cell[0]] + cell[2] + 1 for cell in tm.q}
        return sum(weight[c] * v for c, v in tm.q.items()), sum(
            weight[c] * d.supplier_by_id[c[0]].capacity for c in tm.q
        )
    if term.kind == "changes":
        old = {(s, i, d.period_index[label]): q for s, i, label, q in rp.current_plan(TASK.id, term)}
        expr = sum(tm.differs(v, old.get(c, 0), f"changed[{c}]") for c, v in tm.q.items())
        return expr, len(tm.q)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = ProcurementData.model_validate(draft.data)
    tm = ProcurementModel(data)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        rows = [
            {"quantity": int(solver.value(v)), "supplier": s, "item": i, "week": data.periods[t]}
            for (s, i, t), v in tm.q.items()
            if solver.value(v) > 0
        ]
        return {"orders": rows}

    sm = solver_model(
        tm,
        draft,
        ENCODERS,
        rp.RULE_PARAMS[TASK.id],
        _objective,
        decode,
        [],
        list(tm.q.values()),
        LP_PARAMETERS,
        UNIQUENESS_PARAMETERS,
    )
    sm.uniqueness_hint = True
    return sm


# -- sampling --------------------------------------------------------------------------
Witness = dict[tuple[str, str, int], int]


def _round_up(x: float, step: int) -> int:
    return max(step, math.ceil(x / step) * step)


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[ProcurementData, Witness]:
    settings = SIZES.of(spec.size)
    n, dem = settings.periods, settings.demand
    tiny = settings.enumerable
    step = 1 if tiny else 5
    periods = tuple(f"W{t + 1}" for t in range(n))
    names = rng.sample(CATALOGUE[spec.subtask], settings.items)
    perishable = spec.subtask in PERISHABLE
    sup_names = rng.sample(SUPPLIERS, settings.suppliers)
    leads = {s: rng.choice((0, 1) if tiny else (0, 1, 1, 2)) for s in sup_names}
    leads[sup_names[0]] = min(leads[sup_names[0]], 1)
    # every item is sold by at least two suppliers (one of them fast), most by more
    sells: dict[str, list[str]] = {s: [] for s in sup_names}
    for item, _ in names:
        chosen = [s for s in sup_names if rng.random() < 0.6]
        fast = [s for s in sup_names if leads[s] <= 1]
        if not any(leads[s] <= 1 for s in chosen):
            chosen.append(rng.choice(fast))
        while len(chosen) < min(2, settings.suppliers):
            chosen.append(rng.choice([s for s in sup_names if s not in chosen]))
        for s in sup_names:
            if s in chosen:
                sells[s].append(item)
    base_price = {item: settings.price.draw(rng) for item, _ in names}
    prices: dict[tuple[str, str], int] = {}
    for item, _ in names:
        taken: set[int] = set()
        for s in sup_names:
            if item in sells[s]:
                p = max(1, round(base_price[item] * (rng.uniform(0.85, 1.25) - 0.08 * leads[s])))
                while p in taken:
                    p += 1
                taken.add(p)
                prices[s, item] = p
    demand = {item: [dem.draw(rng) if rng.random() < 0.85 else 0 for _ in range(n)] for item, _ in names}
    # the witness: per item a set of allowed suppliers and a stock buffer it keeps
    witness: Witness = {}
    initial: dict[str, int] = {}
    for item, _ in names:
        sellers = [s for s in sup_names if item in sells[s]]
        allowed = [s for s in sellers if rng.random() < 0.6] or [rng.choice(sellers)]
        lmin = min(leads[s] for s in allowed)
        top = max(dem.hi, 1)
        buffer = 0 if perishable or rng.random() < 0.4 else rng.randint(0, top // 3)
        initial[item] = sum(demand[item][:lmin]) + buffer + rng.randint(0, top // 4)
        stock, arrive = initial[item], [0] * n
        for t in range(n):
            stock += arrive[t]
            if stock - demand[item][t] < buffer:
                need = buffer + demand[item][t] - stock + rng.randint(0, top // 4)
                s = rng.choice([x for x in allowed if leads[x] <= t])
                cell = (s, item, t - leads[s])
                witness[cell] = witness.get(cell, 0) + need
                stock += need
            stock -= demand[item][t]
    suppliers = []
    for s in sup_names:
        peak = max([sum(q for (x, _, t), q in witness.items() if x == s and t == u) for u in range(n)] + [0])
        floor = 4 if tiny else 2 * dem.hi
        cap = min(3, max(peak, rng.randint(2, 3))) if tiny else _round_up(max(peak, floor) * rng.uniform(1.1, 1.5), 10)
        if tiny and peak > 3:
            raise NoDraft("witness")
        offers = tuple(Offer(item=item, price=prices[s, item]) for item, _ in names if item in sells[s])
        suppliers.append(
            Supplier(
                id=s,
                lead_time=leads[s],
                capacity=cap,
                fixed_cost=_round_up(settings.fixed_cost.draw(rng), step) if settings.fixed_cost.hi else 0,
                offers=offers,
            )
        )
    holding: list[int] | None = None
    if spec.subtask == SEASONAL:
        _seasonal_peak(suppliers, demand, initial, witness, rng)
        # stock built ahead fills the capacity of shared suppliers; with equal holding costs
        # two items could trade order weeks at no cost (a tie), so the costs differ
        costs = range(settings.holding_cost.lo, settings.holding_cost.hi + 1)
        holding = rng.sample(costs, len(names)) if len(costs) >= len(names) else None
    items = tuple(
        Item(
            id=item,
            unit=unit,
            initial_stock=initial[item],
            holding_cost=settings.holding_cost.draw(rng) if holding is None else holding[k],
            demand=tuple(demand[item]),
        )
        for k, (item, unit) in enumerate(names)
    )
    return ProcurementData(periods=periods, items=items, suppliers=tuple(suppliers)), witness


def _seasonal_peak(
    suppliers: list[Supplier],
    demand: dict[str, list[int]],
    initial: dict[str, int],
    witness: Witness,
    rng: random.Random,
) -> None:
    """The seasonal rush, in place: one week from the third on needs more (all items
    together) than every supplier's weekly capacity and all the initial stock together,
    so stock must be bought in earlier weeks and held. The extra units fill part of the
    spare capacity the witness leaves in the order weeks that arrive by the peak, and
    become the peak week's extra demand, so the witness still meets every week."""
    n = len(next(iter(demand.values())))
    peak = rng.randint(2, n - 1)
    selling = [s for s in suppliers if s.offers]
    need = sum(s.capacity for s in selling) + sum(initial.values()) + 1 - sum(d[peak] for d in demand.values())
    spare = {(s.id, u): s.capacity - _ordered(witness, s.id, u) for s in selling for u in range(peak - s.lead_time + 1)}
    room = sum(spare.values())
    if room < need:
        raise NoDraft("seasonal_peak")
    extra = max(1, need + rng.randint(0, (room - need) // 3))
    sells = {s.id: [o.item for o in s.offers] for s in selling}
    cells = [c for c, q in spare.items() if q > 0]
    rng.shuffle(cells)
    for s, u in cells:
        q = min(spare[s, u], extra)
        if q == 0:
            break
        item = rng.choice(sells[s])
        witness[s, item, u] = witness.get((s, item, u), 0) + q
        demand[item][peak] += q
        extra -= q


def _stock(d: ProcurementData, w: Witness, item: str) -> list[int]:
    level, out = d.item_by_id[item].initial_stock, []
    for t in range(len(d.periods)):
        level += (
            sum(q for (s, i, u), q in w.items() if i == item and d.arrival(s, u) == t) - d.item_by_id[item].demand[t]
        )
        out.append(level)
    return out


def _ordered(w: Witness, supplier: str, t: int) -> int:
    return sum(q for (s, _, u), q in w.items() if s == supplier and u == t)


def _spend(d: ProcurementData, w: Witness, t: int) -> int:
    units = sum(d.prices[s, i] * q for (s, i, u), q in w.items() if u == t)
    return units + sum(s.fixed_cost for s in d.suppliers if _ordered(w, s.id, t) > 0)


def _fifo_ok(d: ProcurementData, w: Witness, item: str, k: int) -> bool:
    arr = [sum(q for (s, i, u), q in w.items() if i == item and d.arrival(s, u) == t) for t in range(len(d.periods))]
    init = d.item_by_id[item].initial_stock
    for t, level in enumerate(_stock(d, w, item)):
        recent = sum(arr[max(0, t - k + 2) : t + 1]) + (init if t <= k - 2 else 0)
        if level > recent:
            return False
    return True


def _step(d: ProcurementData) -> int:
    return 1 if max(s.capacity for s in d.suppliers) <= 10 else 5


def _b_period_budget(d: ProcurementData, w: Witness, rng: random.Random) -> rp.PeriodBudget | None:
    peak = max(_spend(d, w, t) for t in range(len(d.periods)))
    return rp.PeriodBudget(max=_round_up(peak * rng.uniform(1.0, 1.1), _step(d) * 2))


def _b_min_order(d: ProcurementData, w: Witness, rng: random.Random) -> rp.MinOrder | None:
    options = {}
    for s in d.suppliers:
        sizes = [_ordered(w, s.id, t) for t in range(len(d.periods)) if _ordered(w, s.id, t) > 0]
        least = min(sizes) if sizes else rng.randint(1, max(1, s.capacity // 3))
        least = least - least % _step(d) if least >= 2 * _step(d) else least
        if least >= 2:
            options[s.id] = least
    if not options:
        return None
    chosen = sorted(
        rng.sample(sorted(options), min(len(options), rng.randint(1, 2))), key=[s.id for s in d.suppliers].index
    )
    return rp.MinOrder(min={s: options[s] for s in chosen})


def _b_supplier_closed(d: ProcurementData, w: Witness, rng: random.Random) -> rp.SupplierClosed | None:
    options = [
        (s.id, t) for s in d.suppliers for t in range(len(d.periods)) if _ordered(w, s.id, t) == 0 and any(
            (s.id, i, t) in set(d.cells) for i in d.item_by_id)
    ]  # fmt: skip
    if not options:
        return None
    s, _ = rng.choice(options)
    free = [t for x, t in options if x == s]
    picks = sorted(rng.sample(free, min(len(free), rng.randint(1, 2))))
    return rp.SupplierClosed(supplier=s, periods=[d.periods[t] for t in picks])


def _b_dock_capacity(d: ProcurementData, w: Witness, rng: random.Random) -> rp.DockCapacity | None:
    n = len(d.periods)
    peak = max(sum(q for (s, _, u), q in w.items() if d.arrival(s, u) == t) for t in range(n))
    return rp.DockCapacity(max=max(1, _round_up(peak * rng.uniform(1.0, 1.15), _step(d))))


def _b_safety_stock(d: ProcurementData, w: Witness, rng: random.Random) -> rp.SafetyStock | None:
    options = [(i.id, min(_stock(d, w, i.id))) for i in d.items]
    options = [(i, low) for i, low in options if low >= 1]
    if not options:
        return None
    item, low = rng.choice(options)
    return rp.SafetyStock(item=item, min=rng.randint((low + 1) // 2, low))


def _b_storage_cap(d: ProcurementData, w: Witness, rng: random.Random) -> rp.StorageCap | None:
    n = len(d.periods)
    peak = max(sum(_stock(d, w, i.id)[t] for i in d.items) for t in range(n))
    return rp.StorageCap(max=max(1, _round_up(peak * rng.uniform(1.0, 1.1), _step(d))))


def _b_stock_target(d: ProcurementData, w: Witness, rng: random.Random) -> rp.StockTarget | None:
    options = [(i.id, t, level) for i in d.items for t, level in enumerate(_stock(d, w, i.id)) if level >= 1]
    if not options:
        return None
    item, t, level = rng.choice(options)
    return rp.StockTarget(item=item, period=d.periods[t], min=rng.randint((level + 1) // 2, level))


def _b_shelf_life(d: ProcurementData, w: Witness, rng: random.Random) -> rp.ShelfLife | None:
    n = len(d.periods)
    options = []
    for i in d.items:
        k = next((k for k in range(1, n + 1) if _fifo_ok(d, w, i.id, k)), None)
        if k is not None and k < n:
            options.append((i.id, k + rng.randint(0, 1 if k + 1 < n else 0)))
    if not options:
        return None
    item, k = rng.choice(options)
    return rp.ShelfLife(item=item, periods=k)


def _b_supplier_share(d: ProcurementData, w: Witness, rng: random.Random) -> rp.SupplierShare | None:
    options = []
    for i in d.items:
        sellers = [s.id for s in d.suppliers if (s.id, i.id) in d.prices]
        total = sum(q for (_, x, _), q in w.items() if x == i.id)
        if len(sellers) < 2 or total == 0:
            continue
        top = max(sum(q for (s, x, _), q in w.items() if s == sid and x == i.id) for sid in sellers)
        pct = _round_up(100 * top / total, 5)
        if pct < 100:
            options.append(rp.SupplierShare(item=i.id, pct=max(pct, 50)))
    return rng.choice(options) if options else None


def _b_contract_minimum(d: ProcurementData, w: Witness, rng: random.Random) -> rp.ContractMinimum | None:
    options = [(s.id, sum(q for (x, _, _), q in w.items() if x == s.id)) for s in d.suppliers]
    options = [(s, n) for s, n in options if n >= 2]
    if not options:
        return None
    s, n = rng.choice(options)
    least = max(1, int(n * rng.uniform(0.5, 1.0)))
    step = _step(d)
    return rp.ContractMinimum(supplier=s, min=max(1, least - least % step))


def _b_order_gap(d: ProcurementData, w: Witness, rng: random.Random) -> rp.OrderGap | None:
    n = len(d.periods)
    options = []
    for s in d.suppliers:
        times = [t for t in range(n) if _ordered(w, s.id, t) > 0]
        possible = {t for (x, _, t) in d.cells if x == s.id}
        if len(possible) >= 2 and all(b - a >= 2 for a, b in itertools.pairwise(times)):
            options.append(s.id)
    return rp.OrderGap(supplier=rng.choice(options)) if options else None


def _sources(w: Witness, item: str) -> set[str]:
    return {s for (s, i, _), q in w.items() if i == item and q > 0}


def _b_single_sourcing(d: ProcurementData, w: Witness, rng: random.Random) -> rp.SingleSourcing | None:
    options = [
        i.id
        for i in d.items
        if len(_sources(w, i.id)) == 1 and sum(1 for s in d.suppliers if (s.id, i.id) in d.prices) >= 2
    ]
    return rp.SingleSourcing(item=rng.choice(options)) if options else None


def _b_dual_sourcing(d: ProcurementData, w: Witness, rng: random.Random) -> rp.DualSourcing | None:
    options = [i.id for i in d.items if len(_sources(w, i.id)) >= 2]
    return rp.DualSourcing(item=rng.choice(options)) if options else None


def _b_lot_cap(d: ProcurementData, w: Witness, rng: random.Random) -> rp.LotCap | None:
    most = max(w.values(), default=0)
    if most < 2:
        return None
    return rp.LotCap(max=most + rng.randint(0, max(0, most // 10)))


BUILDERS = {
    "period_budget": _b_period_budget,
    "min_order": _b_min_order,
    "supplier_closed": _b_supplier_closed,
    "dock_capacity": _b_dock_capacity,
    "safety_stock": _b_safety_stock,
    "storage_cap": _b_storage_cap,
    "stock_target": _b_stock_target,
    "shelf_life": _b_shelf_life,
    "supplier_share": _b_supplier_share,
    "contract_minimum": _b_contract_minimum,
    "order_gap": _b_order_gap,
    "single_sourcing": _b_single_sourcing,
    "dual_sourcing": _b_dual_sourcing,
    "lot_cap": _b_lot_cap,
}


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    data, witness = _entities(spec, rng)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    sampled = sampled_kinds(spec, TASK.base_rules)
    if spec.subtask in PERISHABLE and "shelf_life" not in sampled:
        sampled.insert(0, "shelf_life")  # perishables are always used first in first out
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng)
    objective = [ObjectiveTerm(id="total_cost", kind="total_cost"), ObjectiveTerm(id="order_score", kind="order_score")]
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective)


# -- hard-tier hooks -------------------------------------------------------------------
def _plan(d: ProcurementData, plan: dict[str, Any]) -> Witness:
    return {(r["supplier"], r["item"], d.period_index[r["week"]]): r["quantity"] for r in plan["orders"]}


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A delivery commitment (stock of an item at the end of a period) just above the most
    any valid plan can hold then, found by bisection: a higher target only removes plans.
    The commitment is the same sentence feasible instances carry, so it marks nothing.

    Probes run under a short limit: a boundary the solver cannot settle quickly is
    rejected rather than certified slowly."""
    d = ProcurementData.model_validate(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731

    def with_target(item: str, t: int, least: int) -> Draft:
        return with_conflict_rule(
            draft_, "stock_target", rp.StockTarget(item=item, period=d.periods[t], min=least), position
        )

    n = len(d.periods)
    options = [(i.id, t) for i in d.items for t in range(n - 1)]
    rng.shuffle(options)
    for item, t in options[:3]:
        top = d.item_by_id[item].initial_stock + sum(
            d.supplier_by_id[s].capacity for (s, i, u) in d.cells if i == item and d.arrival(s, u) <= t
        )
        found = first_infeasible(range(0, top + 2), lambda m: with_target(item, t, m), feasible)  # noqa: B023 - called within this iteration
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A supplier that cannot take an order the plan places with it."""
    d = ProcurementData.model_validate(draft_.data)
    placed = sorted(
        {(s, t) for (s, _, t) in _plan(d, plan)}, key=lambda x: ([s.id for s in d.suppliers].index(x[0]), x[1])
    )
    rng.shuffle(placed)
    return [
        make_rule("supplier_closed", "hard", rp.SupplierClosed(supplier=s, periods=[d.periods[t]])) for s, t in placed
    ]


def existing(draft_: Draft, plan: dict[str, Any]) -> list[list[Any]]:
    return [[r["supplier"], r["item"], r["week"], r["quantity"]] for r in plan["orders"]]


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    return make_rule("delay_robust", "hard", NoParams()), []


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Supplier capacities (worst: low) and, when no rule caps stock from above, demands
    (worst: high), so that the worst case is one value for every rule."""
    d = ProcurementData.model_validate(draft_.data)
    out = []
    for s in d.suppliers:
        if s.capacity >= 3:
            out.append(
                Uncertain(
                    id="",
                    kind="capacity",
                    target=s.id,
                    low=s.capacity - rng.randint(1, max(1, s.capacity // 3)),
                    high=s.capacity,
                )
            )
    if not any(r.kind in ("storage_cap", "shelf_life") for r in draft_.rules):
        for i in d.items:
            for t, need in enumerate(i.demand):
                if need > 0:
                    out.append(
                        Uncertain(
                            id="",
                            kind="demand",
                            target=f"{i.id}/{d.periods[t]}",
                            low=need,
                            high=need + rng.randint(1, max(1, need // 3)),
                        )
                    )
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = ProcurementData.model_validate(data)
    if u.kind == "capacity":
        suppliers = tuple(s.model_copy(update={"capacity": value}) if s.id == u.target else s for s in d.suppliers)
        return {**data, "suppliers": [s.model_dump(mode="json") for s in suppliers]}
    item, period = u.target.split("/")
    t = d.period_index[period]
    items = tuple(
        i.model_copy(update={"demand": tuple(value if k == t else x for k, x in enumerate(i.demand))})
        if i.id == item
        else i
        for i in d.items
    )
    return {**data, "items": [i.model_dump(mode="json") for i in items]}


def worst_is_low(u: Uncertain) -> bool:
    return u.kind == "capacity"


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Verification figures, computed here from the decoded plan on their own."""
    d = ProcurementData.model_validate(draft_.data)
    w = _plan(d, plan)
    spend = {s.id: 0 for s in d.suppliers}
    for (s, i, _), q in w.items():
        spend[s] += d.prices[s, i] * q
    for s, _t in {(s, t) for (s, _, t) in w}:
        spend[s] += d.supplier_by_id[s].fixed_cost
    return {"spend": spend, "closing_stock": {i.id: _stock(d, w, i.id)[-1] for i in d.items}}


HOOKS = HardHooks(
    base=TASK.base_rules,
    build=build,
    disruptions=disruptions,
    existing=existing,
    robust=robust,
    uncertain=uncertain,
    with_value=with_value,
    worst_is_low=worst_is_low,
)
