"""Production Planning (capacitated lot sizing): lots of products on production lines over
a horizon of periods.

Decision: one integer lot count q[l,p,t] per (line, product, period) with a setup
Boolean y[l,p,t] (q >= y, q <= max_lots * y; a line makes at most one product per
period, the answer format's own structure). Stock is a linear expression per (product,
period) (initial + lots made - lots ordered, summed up to the period) whose positive part
is held and whose negative part is a backlog; changeovers are exact Booleans over
consecutive periods. Every numbered rule is a block of linear rows behind its
enforcement literal. The objective is lexicographic: the backlog (lots short at the end
of each period, times the product's stated weight) where the subtask allows a backlog,
then the total cost (setups, lots, changeovers, holding). Lines are never
interchangeable (no symmetry to break): they carry distinct per-lot costs that differ by
less than any holding cost, and setup costs per (line, product), so moving a lot to
another line or period always changes the cost, and two setup patterns cost the same
only by coincidence (such drafts, about one in fifteen at default size, are re-sampled
as not unique).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible, lexicographic_weights, make_solver
from pbsolve.checkers.project import production as pp
from pbsolve.checkers.project.production import Line, Order, Plan, Product, ProductionData
from pbsolve.family import Draft, NoDraft, SolverModel
from pbsolve.kit import (
    KindRegistry,
    PositiveRange,
    Settings,
    SizeTable,
    Uncertain,
    insert_position,
    parsed,
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
from pbsolve.params import NoParams, Params, make_rule, make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=pp.TASK_ID,
    name="Production Planning",
    family="project",
    summary="lots of products on production lines per period under capacities, stock, changeovers and material",
    subtasks=(
        SubtaskSpec(
            "bakery",
            "Bakery batches",
            "daily orders met from the day's batches with no backlog, minimum batch sizes and holding costs",
        ),
        SubtaskSpec(
            "bottling",
            "Bottling lines",
            "filling lines with costly changeovers, a cap on changeovers and a forbidden flavour succession",
        ),
        SubtaskSpec(
            "metal_parts",
            "Metal parts shop",
            "parts made from a raw material that arrives in deliveries: production limited by material in stock",
        ),
        SubtaskSpec(
            "make_to_order",
            "Make to order",
            "sparse urgent customer orders with weighted lateness (backlog) and planned line downtime",
        ),
        SubtaskSpec(
            "seasonal",
            "Seasonal build-ahead",
            "demand peaking late in the horizon, built ahead under a warehouse storage cap with no backlog",
        ),
    ),
    pool=(
        ConstraintSpec("line_capability", "basic", "a line makes only the products it is able to make"),
        ConstraintSpec("line_capacity", "basic", "a line makes at most its capacity in lots per period"),
        ConstraintSpec("no_backlog", "basic", "every order is met on time from stock (no backlog)"),
        ConstraintSpec("line_downtime", "basic", "a line is down for maintenance in some periods"),
        ConstraintSpec("storage_cap", "basic", "lots in stock at the end of a period stay within the warehouse"),
        ConstraintSpec("min_lot", "basic", "every run of a product makes at least a minimum batch"),
        ConstraintSpec("max_changeovers", "medium", "each line changes product at most so many times"),
        ConstraintSpec("forbidden_succession", "medium", "a product never runs right after another on a line"),
        ConstraintSpec("max_runs", "medium", "a product is made in at most so many runs (campaigning)"),
        ConstraintSpec("line_balance", "medium", "the lines' total lots differ by at most a stated amount"),
        ConstraintSpec("material_supply", "stateful", "raw material in stock (arrivals minus use) never negative"),
        ConstraintSpec("safety_stock", "stateful", "a product's stock stays above a level from a period on"),
        *mechanism_pool(
            "named lines keep one lot of capacity spare in every period, so losing one lot of capacity is covered",
            replan="repair a disrupted production plan changing the fewest line-periods",
        ),
    ),
    base_rules=("line_capability", "line_capacity"),
)

PRODUCTS: dict[str, tuple[str, ...]] = {
    "bakery": ("Sourdough", "Baguettes", "Rye loaves", "Croissants", "Brioche"),
    "bottling": ("Cola", "Lemonade", "Orange soda", "Ginger ale", "Tonic water"),
    "metal_parts": ("Flanges", "Shafts", "Brackets", "Gear blanks", "Bushings"),
    "make_to_order": ("Control cabinets", "Pump skids", "Valve blocks", "Sensor kits", "Drive units"),
    "seasonal": ("Snow shovels", "Sledges", "Ice scrapers", "Salt spreaders", "Heaters"),
}
LINES: dict[str, tuple[str, ...]] = {
    "bakery": ("Oven line 1", "Oven line 2", "Deck oven"),
    "bottling": ("Filler A", "Filler B", "Filler C"),
    "metal_parts": ("CNC cell 1", "CNC cell 2", "Lathe bay"),
    "make_to_order": ("Assembly line 1", "Assembly line 2", "Test bench line"),
    "seasonal": ("Press line", "Moulding line", "Assembly line"),
}
FORCED = {
    "bakery": ("no_backlog", "min_lot"),
    "bottling": ("max_changeovers", "forbidden_succession"),
    "metal_parts": ("material_supply",),
    "make_to_order": ("line_downtime",),
    "seasonal": ("no_backlog", "storage_cap"),
}
NO_BACKLOG = ("bakery", "seasonal")  # orders derived so the witness never runs short


class PlantSizes(Settings):
    """How big a plant and its horizon are."""

    lines: PositiveInt = Field(le=3)
    products: PositiveInt = Field(le=5)
    periods: PositiveInt = Field(le=8)
    capacity: PositiveRange = Field(description="lots per period of one line")


SIZES = SizeTable[PlantSizes](
    tiny=PlantSizes(lines=2, products=2, periods=2, capacity=PositiveRange(lo=1, hi=2)),
    small=PlantSizes(lines=2, products=2, periods=3, capacity=PositiveRange(lo=2, hi=3)),
    default=PlantSizes(lines=2, products=3, periods=3, capacity=PositiveRange(lo=2, hi=4)),
    large=PlantSizes(lines=3, products=4, periods=6, capacity=PositiveRange(lo=3, hi=5)),
)
PROBE_TIME = 2.0
# Small plants search without the LP relaxation: their proofs are short, and building the
# relaxation at every node cost more than it saved (default instances: 0.03 against 0.16 s
# for one optimisation). Larger plants need it: on large instances level 0 took 2-55 s
# (two time-outs in six) where level 1 proved each optimum in 0.1-1.9 s.
SMALL_MODEL = 24  # line x product x period cells searched without the relaxation
UNIQUENESS_PARAMETERS: dict[str, Any] = {"cp_model_presolve": False}


# -- the CP-SAT model ------------------------------------------------------------------
class PlantModel(ModelBase):
    def __init__(self, data: ProductionData) -> None:
        super().__init__()
        self.data = d = data
        m = self.m
        self.T = range(1, d.periods + 1)
        self.q: dict[tuple[str, str, int], cp_model.IntVar] = {}
        self.y: dict[tuple[str, str, int], cp_model.IntVar] = {}
        for x in d.lines:
            for t in self.T:
                for p in d.products:
                    q = m.new_int_var(0, d.max_lots, f"q[{x.id},{p.id},{t}]")
                    y = m.new_bool_var(f"y[{x.id},{p.id},{t}]")
                    m.add(q >= y)
                    m.add(q <= d.max_lots * y)
                    self.q[x.id, p.id, t], self.y[x.id, p.id, t] = q, y
                m.add(sum(self.y[x.id, p.id, t] for p in d.products) <= 1)  # one product per line and period
        self.run = {(x.id, t): sum(self.y[x.id, p.id, t] for p in d.products) for x in d.lines for t in self.T}
        self.lots = {(x.id, t): sum(self.q[x.id, p.id, t] for p in d.products) for x in d.lines for t in self.T}
        # net stock per (product, period), held stock and shortage (its two parts)
        self.net: dict[tuple[str, int], cp_model.IntVar] = {}
        self.stock: dict[tuple[str, int], cp_model.LinearExprT] = {}
        self.short: dict[tuple[str, int], cp_model.IntVar] = {}
        total = sum(o.lots for o in d.orders)
        for p in d.products:
            level: Any = p.initial
            for t in self.T:
                level = level + sum(self.q[x.id, p.id, t] for x in d.lines) - d.demand[p.id][t - 1]
                hi = p.initial + t * len(d.lines) * d.max_lots
                v = m.new_int_var(p.initial - total, hi, f"net[{p.id},{t}]")
                m.add(v == level)
                b = m.new_int_var(0, total, "")
                m.add_max_equality(b, [-v, 0])
                s = v + b  # held stock = max(0, net): an expression, so costs stay linear in the lots
                self.net[p.id, t], self.stock[p.id, t], self.short[p.id, t] = v, s, b
                level = v
        # changeovers: a Boolean per (line, period >= 2), exact through linear rows alone:
        # forced on when the product of t-1 is not made in t while the line runs in t,
        # forced off when the line is idle in t-1 or t or makes the same product in both
        self.change: dict[tuple[str, int], cp_model.IntVar] = {}
        for x in d.lines:
            for t in self.T[1:]:
                c = m.new_bool_var(f"change[{x.id},{t}]")
                m.add(c <= self.run[x.id, t - 1])
                m.add(c <= self.run[x.id, t])
                for p in d.products:
                    before, now = self.y[x.id, p.id, t - 1], self.y[x.id, p.id, t]
                    m.add(c >= before + self.run[x.id, t] - now - 1)
                    m.add(c <= 2 - before - now)
                self.change[x.id, t] = c


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("line_capability")
def _line_capability(tm: PlantModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for x in tm.data.lines:
        for prod in tm.data.products:
            if prod.id not in x.makes:
                for t in tm.T:
                    tm.post(tm.y[x.id, prod.id, t] == 0, lit)


@encoder("line_capacity")
def _line_capacity(tm: PlantModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for x in tm.data.lines:
        if x.capacity < tm.data.max_lots:
            for t in tm.T:
                tm.post(tm.lots[x.id, t] <= x.capacity, lit)


@encoder("no_backlog")
def _no_backlog(tm: PlantModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for v in tm.net.values():
        tm.post(v >= 0, lit)


@encoder("line_downtime")
def _line_downtime(tm: PlantModel, p: pp.LineDowntime, lit: cp_model.IntVar) -> None:
    for t in range(p.first, p.last + 1):
        tm.post(tm.run[p.line, t] == 0, lit)


@encoder("storage_cap")
def _storage_cap(tm: PlantModel, p: pp.StorageCap, lit: cp_model.IntVar) -> None:
    for t in tm.T:
        tm.post(sum(tm.stock[prod.id, t] for prod in tm.data.products) <= p.max, lit)


@encoder("min_lot")
def _min_lot(tm: PlantModel, p: pp.MinLot, lit: cp_model.IntVar) -> None:
    for x in tm.data.lines:
        for t in tm.T:
            tm.post(tm.q[x.id, p.product, t] >= p.lots * tm.y[x.id, p.product, t], lit)


@encoder("max_changeovers")
def _max_changeovers(tm: PlantModel, p: pp.MaxChangeovers, lit: cp_model.IntVar) -> None:
    for x in tm.data.lines:
        tm.post(sum(tm.change[x.id, t] for t in tm.T[1:]) <= p.max, lit)


@encoder("forbidden_succession")
def _forbidden_succession(tm: PlantModel, p: pp.ForbiddenSuccession, lit: cp_model.IntVar) -> None:
    for x in tm.data.lines:
        for t in tm.T[1:]:
            tm.post(tm.y[x.id, p.first, t - 1] + tm.y[x.id, p.then, t] <= 1, lit)


@encoder("max_runs")
def _max_runs(tm: PlantModel, p: pp.MaxRuns, lit: cp_model.IntVar) -> None:
    tm.post(sum(tm.y[x.id, p.product, t] for x in tm.data.lines for t in tm.T) <= p.max, lit)


@encoder("line_balance")
def _line_balance(tm: PlantModel, p: pp.LineBalance, lit: cp_model.IntVar) -> None:
    total = {x.id: sum(tm.lots[x.id, t] for t in tm.T) for x in tm.data.lines}
    for a, b in itertools.permutations(total, 2):
        tm.post(total[a] - total[b] <= p.max, lit)


@encoder("material_supply")
def _material_supply(tm: PlantModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    arrived, used = d.material_initial, []
    for t in tm.T:
        arrived += d.arrivals[t - 1] if d.arrivals else 0
        used += [(tm.q[x.id, prod.id, t], prod.material) for x in d.lines for prod in d.products if prod.material]
        tm.post(cp_model.LinearExpr.weighted_sum([v for v, _ in used], [c for _, c in used]) <= arrived, lit)


@encoder("safety_stock")
def _safety_stock(tm: PlantModel, p: pp.SafetyStock, lit: cp_model.IntVar) -> None:
    for t in range(p.first, tm.data.periods + 1):
        tm.post(tm.net[p.product, t] >= p.min, lit)


@encoder("capacity_reserve")
def _capacity_reserve(tm: PlantModel, p: pp.CapacityReserve, lit: cp_model.IntVar) -> None:
    for line in p.lines:
        for t in tm.T:
            tm.post(tm.lots[line, t] <= tm.data.line_by_id[line].capacity - 1, lit)


def _objective(tm: PlantModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    if term.kind == "backlog":
        expr = sum(prod.penalty * tm.short[prod.id, t] for prod in d.products for t in tm.T)
        total = sum(o.lots for o in d.orders)
        return expr, sum(prod.penalty for prod in d.products) * total * d.periods
    if term.kind == "cost":
        cells: list[tuple[cp_model.LinearExprT, int]] = [
            (tm.y[x.id, p.id, t], x.setup.get(p.id, 0)) for x in d.lines for p in d.products for t in tm.T
        ]
        cells += [(tm.q[x.id, p.id, t], x.cost) for x in d.lines for p in d.products for t in tm.T]
        cells += [(tm.change[x.id, t], x.changeover) for x in d.lines for t in tm.T[1:]]
        cells += [(tm.stock[prod.id, t], prod.hold) for prod in d.products for t in tm.T]
        cost = cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells])
        ub = sum(max(x.setup.values(), default=0) + x.cost * d.max_lots + x.changeover for x in d.lines) * d.periods
        ub += sum(prod.hold * (prod.initial + d.periods * len(d.lines) * d.max_lots) for prod in d.products) * d.periods
        return cost, ub
    if term.kind == "changes":
        old = pp.current_plan(term)
        moved = []
        for x in d.lines:
            for t in tm.T:
                cell = old.get((x.id, t))
                if cell is None:
                    moved.append(tm.run[x.id, t])
                else:
                    moved.append(tm.differs(tm.q[x.id, cell[0], t], cell[1], ""))
        return sum(moved), len(moved)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def parameters(d: ProductionData) -> dict[str, Any]:
    """The CP-SAT parameters of a plant's model (see SMALL_MODEL)."""
    cells = len(d.lines) * len(d.products) * d.periods
    return {"linearization_level": 0 if cells <= SMALL_MODEL else 1}


def build(draft: Draft) -> SolverModel:
    data = parsed(ProductionData, draft.data)
    tm = PlantModel(data)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        rows = []
        for t in tm.T:
            for x in data.lines:
                for p in data.products:
                    q = int(solver.value(tm.q[x.id, p.id, t]))
                    if q:
                        rows.append({"line": x.id, "period": t, "product": p.id, "lots": q})
        return {"production": rows}

    return solver_model(
        tm, draft, ENCODERS, pp.RULE_PARAMS, _objective, decode, [], list(tm.q.values()),
        parameters=parameters(data), uniqueness_parameters=UNIQUENESS_PARAMETERS,
    )  # fmt: skip


# -- sampling --------------------------------------------------------------------------
Witness = Plan


def _witness(d: ProductionData, sub: str, rng: random.Random) -> Plan:
    """A random plan: each line-period idle or one product it can make, in random lots
    (mostly 2 or more: minimum batches can then be drawn from it); bottling lines tend to
    keep their product (long runs)."""
    runs: dict[tuple[str, int], tuple[str, int]] = {}
    for x in d.lines:
        last: str | None = None
        for t in range(1, d.periods + 1):
            if rng.random() < 0.3:
                last = None
                continue
            prod = last if (last and sub == "bottling" and rng.random() < 0.7) else rng.choice(x.makes)
            lots = rng.randint(min(2, x.capacity), x.capacity) if rng.random() < 0.85 else 1
            runs[x.id, t] = (prod, lots)
            last = prod
    return Plan(runs)


def _orders(d: ProductionData, w: Plan, sub: str, rng: random.Random) -> tuple[Order, ...]:
    """Orders drawn from the witness's output: where backlog is forbidden, each period's
    order takes at most the stock on hand (so the witness never runs short); seasonal
    orders fall in the second half of the horizon; make-to-order orders are sparse."""
    mk = pp.made(d, w)
    found: list[tuple[int, str, int]] = []
    for p in d.products:
        stock = p.initial
        for t in range(1, d.periods + 1):
            stock += mk[p.id][t - 1]
            if sub == "seasonal" and t <= d.periods // 2:
                continue
            if sub == "make_to_order" and rng.random() < 0.5:
                continue
            if sub in NO_BACKLOG:
                lots = rng.randint((stock + 1) // 2, stock) if stock else 0
            else:
                lots = max(0, stock - rng.randint(0, 2) + (1 if rng.random() < 0.25 else 0))
            if t == d.periods and sub in NO_BACKLOG:
                lots = stock  # nothing is made for after the horizon
            if lots:
                found.append((t, p.id, lots))
                stock -= lots
    found.sort(key=lambda o: (o[0], int(o[1][1:])))
    return tuple(Order(id=f"O{k}", product=p, period=t, lots=q) for k, (t, p, q) in enumerate(found, 1))


def _with_material(d: ProductionData, w: Plan, rng: random.Random) -> ProductionData:
    """Material per lot for each product and arrivals that cover the witness's use just in
    time, sometimes with a few units more (so the material rule binds)."""
    prods = tuple(p.model_copy(update={"material": rng.randint(1, 3)}) for p in d.products)
    per = {p.id: p.material for p in prods}
    use = [sum(q * per[p] for (_, s), (p, q) in w.runs.items() if s == t) for t in range(1, d.periods + 1)]
    initial = rng.randint(0, 2)
    arrivals = [0] * d.periods
    have = initial
    for t in range(d.periods):
        arrivals[t] = max(0, use[t] - have) + (rng.randint(1, 2) if rng.random() < 0.4 else 0)
        have += arrivals[t] - use[t]
    return pp.replaced(d, products=prods, material_initial=initial, arrivals=tuple(arrivals))


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[ProductionData, Plan]:
    s = SIZES.of(spec.size)
    sub = spec.subtask
    names = rng.sample(PRODUCTS[sub], s.products)
    holds = rng.sample(range(3, 10), s.products)
    penalties = rng.sample(range(1, 10), s.products)
    products = tuple(
        Product(id=f"P{k}", name=n, hold=h, penalty=pen, initial=rng.choice((0, 0, 1, 2)) if sub != "seasonal" else 0)
        for k, (n, h, pen) in enumerate(zip(names, holds, penalties), 1)
    )
    ids = [p.id for p in products]
    costs = rng.sample(range(1, 4), s.lines)  # per-lot costs differ by less than any holding cost
    lines: list[Line] = []
    for k, (name, c) in enumerate(zip(rng.sample(LINES[sub], s.lines), costs), 1):
        makes = sorted(rng.sample(ids, rng.randint(max(1, len(ids) - 1), len(ids))), key=lambda x: int(x[1:]))
        change = rng.randint(15, 40) if sub == "bottling" else rng.randint(0, 9)
        lines.append(
            Line(
                id=f"L{k}", name=name, capacity=s.capacity.draw(rng), makes=tuple(makes),
                setup={p: rng.randint(11, 49) for p in ids}, cost=c, changeover=change,
            )
        )  # fmt: skip
    for p in ids:  # every product has a line able to make it
        if not any(p in x.makes for x in lines):
            k = rng.randrange(len(lines))
            lines[k] = lines[k].model_copy(
                update={"makes": tuple(sorted((*lines[k].makes, p), key=lambda x: int(x[1:])))}
            )
    max_lots = max(x.capacity for x in lines)
    d = ProductionData(periods=s.periods, max_lots=max_lots, products=products, lines=tuple(lines))
    w = _witness(d, sub, rng)
    d = pp.replaced(d, orders=_orders(d, w, sub, rng))
    return d, w


def _b_line_downtime(d: ProductionData, w: Plan, rng: random.Random) -> pp.LineDowntime | None:
    idle = [(x.id, t) for x in d.lines for t in range(1, d.periods + 1) if (x.id, t) not in w.runs]
    if not idle:
        return None
    line, t = rng.choice(idle)
    last = t
    while last + 1 <= d.periods and (line, last + 1) not in w.runs and rng.random() < 0.5:
        last += 1
    return pp.LineDowntime(line=line, first=t, last=last)


def _b_storage_cap(d: ProductionData, w: Plan, rng: random.Random) -> pp.StorageCap | None:
    net = pp.net_stock(d, w)
    peak = max(sum(max(0, net[p.id][t]) for p in d.products) for t in range(d.periods))
    return pp.StorageCap(max=peak + rng.choice((0, 0, 1)))


def _b_min_lot(d: ProductionData, w: Plan, rng: random.Random) -> pp.MinLot | None:
    smallest: dict[str, int] = {}
    for prod, q in w.runs.values():
        smallest[prod] = min(q, smallest.get(prod, q))
    options = sorted(p for p, q in smallest.items() if q >= 2)
    if not options:
        return None
    p = rng.choice(options)
    return pp.MinLot(product=p, lots=smallest[p] - rng.choice((0, 0, 1)) if smallest[p] > 2 else 2)


def _b_max_changeovers(d: ProductionData, w: Plan, rng: random.Random) -> pp.MaxChangeovers | None:
    most = max(len(pp.changeovers(d, w, x.id)) for x in d.lines)
    return pp.MaxChangeovers(max=most + rng.choice((0, 0, 1)))


def _b_forbidden_succession(d: ProductionData, w: Plan, rng: random.Random) -> pp.ForbiddenSuccession | None:
    seen = {
        (pp.product_at(w, x.id, t - 1), pp.product_at(w, x.id, t)) for x in d.lines for t in range(2, d.periods + 1)
    }
    pairs = [(a.id, b.id) for a in d.products for b in d.products if a.id != b.id and (a.id, b.id) not in seen]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    return pp.ForbiddenSuccession(first=a, then=b)


def _b_max_runs(d: ProductionData, w: Plan, rng: random.Random) -> pp.MaxRuns | None:
    p = rng.choice(d.products).id
    runs = sum(1 for prod, _ in w.runs.values() if prod == p)
    return pp.MaxRuns(product=p, max=runs + rng.choice((0, 0, 1)))


def _b_line_balance(d: ProductionData, w: Plan, rng: random.Random) -> pp.LineBalance | None:
    lots = pp.line_lots(d, w)
    return pp.LineBalance(max=max(lots.values()) - min(lots.values()) + rng.choice((0, 1)))


def _b_safety_stock(d: ProductionData, w: Plan, rng: random.Random) -> pp.SafetyStock | None:
    net = pp.net_stock(d, w)
    options = [(p.id, f) for p in d.products for f in range(1, d.periods + 1) if min(net[p.id][f - 1 :]) >= 1]
    if not options:
        return None
    p, f = rng.choice(options)
    return pp.SafetyStock(product=p, first=f, min=min(net[p][f - 1 :]) - rng.choice((0, 0, 1)))


BUILDERS = {
    "line_downtime": _b_line_downtime,
    "storage_cap": _b_storage_cap,
    "min_lot": _b_min_lot,
    "max_changeovers": _b_max_changeovers,
    "forbidden_succession": _b_forbidden_succession,
    "max_runs": _b_max_runs,
    "line_balance": _b_line_balance,
    "safety_stock": _b_safety_stock,
}
STRUCTURAL = ("no_backlog", "material_supply")


def objective_terms(subtask: str, rules: list[Rule]) -> list[ObjectiveTerm]:
    """The backlog (where the rules allow one), then the total cost."""
    kinds = ["cost"] if any(r.kind == "no_backlog" for r in rules) else ["backlog", "cost"]
    return [make_term(k, k) for k in kinds]


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    data, witness = _entities(spec, rng)
    sampled = sampled_kinds(spec, TASK.base_rules, FORCED[spec.subtask])
    if "no_backlog" in sampled and min(min(v) for v in pp.net_stock(data, witness).values()) < 0:
        raise NoDraft("no_backlog")  # the witness runs short: the rule would not hold for it (re-sampled)
    if "material_supply" in sampled:
        data = _with_material(data, witness, rng)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng, structural=STRUCTURAL)
    return Draft(
        spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective_terms(spec.subtask, rules)
    )


# -- hard-tier hooks -------------------------------------------------------------------
def _plan(plan: dict[str, Any]) -> Plan:
    return Plan({(r["line"], r["period"]): (r["product"], r["lots"]) for r in plan["production"]})


def _optimal_plan(draft_: Draft, limits: SolverLimits) -> Plan | None:
    sm = build(draft_)
    weights = lexicographic_weights([ub for _, _, ub in sm.objective_terms])
    sm.model.minimize(sum(w * expr for w, (_, expr, _) in zip(weights, sm.objective_terms)))
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = make_solver(limits, presolve=False, optimise=True, parameters=sm.parameters)
    if solver.solve(sm.model) != cp_model.OPTIMAL:
        return None
    return _plan(sm.decode(solver))


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A safety stock just above what the rules allow: bisection over the level, from the
    lowest stock of the optimal plan upwards, finds the loosest infeasible one; a level
    infeasible on its own is passed over (the conflict must run through the rules)."""
    d = ProductionData.model_validate(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731
    best = _optimal_plan(draft_, probe)
    if best is None:
        return None
    net = pp.net_stock(d, best)
    options = [(p.id, f) for p in d.products for f in range(1, d.periods + 1)]
    rng.shuffle(options)
    top = max(p.initial for p in d.products) + d.periods * len(d.lines) * d.max_lots + 1
    for pid, first in options[:4]:
        low = max(0, min(net[pid][first - 1 :]))
        levels = list(range(low, top + 1))

        def with_level(level: int, pid: str = pid, first: int = first) -> Draft:
            return with_conflict_rule(
                draft_, "safety_stock", pp.SafetyStock(product=pid, first=first, min=level), position
            )

        found = first_infeasible(levels, with_level, feasible)
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A line down in a period the plan runs it."""
    w = _plan(plan)
    out = [
        make_rule("line_downtime", "hard", pp.LineDowntime(line=line, first=t, last=t))
        for (line, t) in sorted(w.runs, key=lambda c: (c[1], c[0]))
    ]
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> list[list[Any]]:
    return [[r["line"], r["period"], r["product"], r["lots"]] for r in plan["production"]]


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    """One lot of spare capacity on a line of capacity 2 or more, the first in random order
    whose plan stays feasible (the kit probes it again)."""
    d = ProductionData.model_validate(draft_.data)
    named = [x.id for x in d.lines if x.capacity >= 2]
    rng.shuffle(named)
    probe = SolverLimits(deterministic_time=PROBE_TIME)
    for lid in named:
        rule = make_rule("capacity_reserve", "hard", pp.CapacityReserve(lines=[lid]), f"R{len(draft_.rules) + 1}")
        if is_feasible(build(Draft(draft_.spec, draft_.data, [*draft_.rules, rule], draft_.objective)), probe):
            return rule, []
    return None


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Line capacities (worst: low), order sizes (worst: high) and holding costs (worst:
    high; they decide no rule, only the cost, and often cost nothing: a product the
    optimum never holds). A larger order never helps a plan except under a storage cap
    (less stock held): orders are offered only without one."""
    d = ProductionData.model_validate(draft_.data)
    kinds = {r.kind for r in draft_.rules}
    out = [
        Uncertain(id="", kind="capacity", target=x.id, low=x.capacity - 1, high=x.capacity)
        for x in d.lines
        if x.capacity >= 2
    ]
    out = rng.sample(out, min(2, len(out)))
    if "storage_cap" not in kinds:
        bigger = [Uncertain(id="", kind="order", target=o.id, low=o.lots, high=o.lots + 1) for o in d.orders]
        out += rng.sample(bigger, min(2, len(bigger)))
    dearer = [Uncertain(id="", kind="hold", target=p.id, low=p.hold, high=p.hold + 2) for p in d.products]
    out += rng.sample(dearer, min(3, len(dearer)))
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = ProductionData.model_validate(data)
    if u.kind == "capacity":
        lines = tuple(x.model_copy(update={"capacity": value}) if x.id == u.target else x for x in d.lines)
        return {**data, "lines": [x.model_dump(mode="json") for x in lines]}
    if u.kind == "hold":
        prods = tuple(p.model_copy(update={"hold": value}) if p.id == u.target else p for p in d.products)
        return {**data, "products": [p.model_dump(mode="json") for p in prods]}
    orders = tuple(o.model_copy(update={"lots": value}) if o.id == u.target else o for o in d.orders)
    return {**data, "orders": [o.model_dump(mode="json") for o in orders]}


def worst_is_low(u: Uncertain) -> bool:
    return u.kind == "capacity"


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = ProductionData.model_validate(draft_.data)
    w = _plan(plan)
    mk = pp.made(d, w)
    return {"lots": pp.line_lots(d, w), "made": {p.id: sum(mk[p.id]) for p in d.products}}


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
