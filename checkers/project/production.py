"""Checks for Production Planning answers (capacitated lot sizing): each production line
makes at most one product per period, in a whole number of lots; stock carries from one
period to the next and the orders due in a period are taken from it.

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. Every figure is recomputed from the plan in plain Python integers. Periods are
numbered 1..T; the net stock of a product at the end of period t is its initial stock
plus the lots made in periods 1..t minus the lots ordered for periods 1..t. A positive
net stock is held (holding cost, storage); a negative one is a backlog (orders short).
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import OK, PlanChecker, lookup, row_names
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "production_planning"


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Product(_Frozen):
    id: str
    name: str
    hold: NonNegativeInt = Field(description="holding cost per lot in stock at the end of a period")
    penalty: PositiveInt = Field(default=1, description="backlog weight per lot short at the end of a period")
    initial: NonNegativeInt = Field(default=0, description="lots in stock before period 1")
    material: NonNegativeInt = Field(default=0, description="units of raw material one lot consumes")


class Line(_Frozen):
    id: str
    name: str
    capacity: PositiveInt = Field(description="most lots per period")
    makes: tuple[str, ...] = Field(description="the products the line is able to make")
    setup: dict[str, NonNegativeInt] = Field(description="product -> cost of each run of it on the line (a setup)")
    cost: NonNegativeInt = Field(description="cost per lot made")
    changeover: NonNegativeInt = Field(default=0, description="cost of each changeover")


class Order(_Frozen):
    """``lots`` of ``product`` taken from stock at the end of ``period``."""

    id: str
    product: ProductName
    period: PositiveInt
    lots: PositiveInt


class ProductionData(BaseModel):
    """One plant: every number a rule or the objective reads is here. ``max_lots``: the
    most lots one run may state (an answer's lots are 0..max_lots); ``arrivals``: raw
    material units arriving at the start of each period (empty: material is not planned)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    periods: PositiveInt
    max_lots: PositiveInt
    products: tuple[Product, ...]
    lines: tuple[Line, ...]
    orders: tuple[Order, ...] = ()
    material_initial: NonNegativeInt = 0
    arrivals: tuple[NonNegativeInt, ...] = ()
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> ProductionData:
        """Malformed data is a clear error: repeated or unknown ids, periods outside the
        horizon, a capacity above ``max_lots``, arrivals not one per period."""
        for what, ids in (
            ("product", [p.id for p in self.products]),
            ("line", [x.id for x in self.lines]),
            ("order", [o.id for o in self.orders]),
        ):
            if len(set(ids)) != len(ids):
                raise ValueError(f"repeated {what} id")
        if not self.products or not self.lines:
            raise ValueError("a plant needs at least one product and one line")
        known = {p.id for p in self.products}
        for x in self.lines:
            if x.capacity > self.max_lots:
                raise ValueError(f"line {x.id} has capacity {x.capacity} above max_lots {self.max_lots}")
            bad = [p for p in [*x.makes, *x.setup] if p not in known]
            if bad:
                raise ValueError(f"line {x.id} makes unknown product {bad[0]}")
        for o in self.orders:
            if o.product not in known:
                raise ValueError(f"order {o.id} names unknown product {o.product}")
            if o.period > self.periods:
                raise ValueError(f"order {o.id} is due in period {o.period}, after the horizon {self.periods}")
        if self.arrivals and len(self.arrivals) != self.periods:
            raise ValueError(f"{len(self.arrivals)} material arrivals for {self.periods} periods")
        return self

    @cached_property
    def product_by_id(self) -> dict[str, Product]:
        return {p.id: p for p in self.products}

    @cached_property
    def line_by_id(self) -> dict[str, Line]:
        return {x.id: x for x in self.lines}

    @cached_property
    def order_by_id(self) -> dict[str, Order]:
        return {o.id: o for o in self.orders}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {"line": self.line_by_id, "product": self.product_by_id}
        return names[what]

    @cached_property
    def demand(self) -> dict[str, list[int]]:
        """Product -> lots ordered per period (index 0 is period 1)."""
        out = {p.id: [0] * self.periods for p in self.products}
        for o in self.orders:
            out[o.product][o.period - 1] += o.lots
        return out


def replaced(d: ProductionData, **changes: Any) -> ProductionData:
    """``d`` with fields replaced, as a new validated object."""
    return ProductionData.model_validate({**{f: getattr(d, f) for f in ProductionData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
LineName = Annotated[str, Names("line")]
ProductName = Annotated[str, Names("product")]


class LineDowntime(Params):
    """The line makes nothing in periods ``first``..``last`` (both included)."""

    line: LineName
    first: PositiveInt
    last: PositiveInt


class StorageCap(Params):
    """At the end of every period, the lots in stock (all products) are at most ``max``."""

    max: NonNegativeInt


class MinLot(Params):
    """Every run of ``product`` makes at least ``lots`` lots."""

    product: ProductName
    lots: PositiveInt


class MaxChangeovers(Params):
    """Every line has at most ``max`` changeovers over the horizon."""

    max: NonNegativeInt


class ForbiddenSuccession(Params):
    """On no line is ``then`` made in the period right after a period making ``first``."""

    first: ProductName
    then: ProductName


class MaxRuns(Params):
    """``product`` is made in at most ``max`` runs (line-periods) in all."""

    product: ProductName
    max: NonNegativeInt


class LineBalance(Params):
    """The total lots of any two lines differ by at most ``max``."""

    max: NonNegativeInt


class SafetyStock(Params):
    """From period ``first`` on, the net stock of ``product`` at the end of every period is at least ``min``."""

    product: ProductName
    first: PositiveInt
    min: NonNegativeInt


class CapacityReserve(Params):
    """Robustness: each named line makes at most its capacity minus 1 lots in every period,
    so the plan survives the line losing one lot of capacity in any period."""

    lines: list[LineName]


class CurrentRuns(Params):
    """The current plan a ``changes`` term counts against: rows [line, period, product, lots]."""

    existing: list[tuple[LineName, int, ProductName, int]]


RULE_PARAMS: ParamsTable = {
    "line_capability": NoParams,
    "line_capacity": NoParams,
    "no_backlog": NoParams,
    "line_downtime": LineDowntime,
    "storage_cap": StorageCap,
    "min_lot": MinLot,
    "max_changeovers": MaxChangeovers,
    "forbidden_succession": ForbiddenSuccession,
    "max_runs": MaxRuns,
    "line_balance": LineBalance,
    "material_supply": NoParams,
    "safety_stock": SafetyStock,
    "capacity_reserve": CapacityReserve,
}
TERM_PARAMS: ParamsTable = {"backlog": NoParams, "cost": NoParams, "changes": CurrentRuns}


def current_plan(changes: ObjectiveTerm) -> dict[tuple[str, int], tuple[str, int]]:
    """The current plan of a ``changes`` term: (line, period) -> (product, lots)."""
    rows = as_model(parse(TERM_PARAMS, changes), CurrentRuns).existing
    return {(line, t): (p, q) for line, t, p, q in rows}


# -- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    runs: dict[tuple[str, int], tuple[str, int]]  # (line, period) -> (product, lots >= 1)


def made(d: ProductionData, plan: Plan) -> dict[str, list[int]]:
    """Product -> lots made per period (index 0 is period 1)."""
    out = {p.id: [0] * d.periods for p in d.products}
    for (_, t), (p, q) in plan.runs.items():
        out[p][t - 1] += q
    return out


def net_stock(d: ProductionData, plan: Plan) -> dict[str, list[int]]:
    """Product -> net stock at the end of each period (negative: lots short)."""
    out: dict[str, list[int]] = {}
    mk = made(d, plan)
    for p in d.products:
        level, levels = p.initial, []
        for t in range(d.periods):
            level += mk[p.id][t] - d.demand[p.id][t]
            levels.append(level)
        out[p.id] = levels
    return out


def product_at(plan: Plan, line: str, t: int) -> str | None:
    run = plan.runs.get((line, t))
    return run[0] if run else None


def changeovers(d: ProductionData, plan: Plan, line: str) -> list[int]:
    """The periods t >= 2 in which the line makes a product other than the one it made in t-1."""
    out = []
    for t in range(2, d.periods + 1):
        a, b = product_at(plan, line, t - 1), product_at(plan, line, t)
        if a is not None and b is not None and a != b:
            out.append(t)
    return out


def line_lots(d: ProductionData, plan: Plan) -> dict[str, int]:
    out = {x.id: 0 for x in d.lines}
    for (line, _), (_, q) in plan.runs.items():
        out[line] += q
    return out


def material_levels(d: ProductionData, plan: Plan) -> list[int]:
    """Raw material left at the end of each period: initial + arrivals - lots x material per lot."""
    level, out = d.material_initial, []
    for t in range(1, d.periods + 1):
        level += d.arrivals[t - 1] if d.arrivals else 0
        level -= sum(q * d.product_by_id[p].material for (_, s), (p, q) in plan.runs.items() if s == t)
        out.append(level)
    return out


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
def _sorted_runs(plan: Plan) -> list[tuple[tuple[str, int], tuple[str, int]]]:
    return sorted(plan.runs.items(), key=lambda kv: (kv[0][1], kv[0][0]))


@check("line_capability")
def _line_capability(d: ProductionData, plan: Plan, p: NoParams) -> Verdict:
    for (line, t), (prod, _) in _sorted_runs(plan):
        if prod not in d.line_by_id[line].makes:
            return False, f"{line} makes {prod} in period {t}, but it cannot make {prod}"
    return OK


@check("line_capacity")
def _line_capacity(d: ProductionData, plan: Plan, p: NoParams) -> Verdict:
    for (line, t), (_, q) in _sorted_runs(plan):
        cap = d.line_by_id[line].capacity
        if q > cap:
            return False, f"{line} makes {q} lots in period {t} (capacity {cap})"
    return OK


@check("no_backlog")
def _no_backlog(d: ProductionData, plan: Plan, p: NoParams) -> Verdict:
    net = net_stock(d, plan)
    for t in range(d.periods):
        for prod in d.products:
            if net[prod.id][t] < 0:
                return False, f"{prod.id} is {-net[prod.id][t]} lots short at the end of period {t + 1}"
    return OK


@check("line_downtime")
def _line_downtime(d: ProductionData, plan: Plan, p: LineDowntime) -> Verdict:
    for t in range(p.first, p.last + 1):
        if (p.line, t) in plan.runs:
            return False, f"{p.line} runs in period {t}, during its downtime (periods {p.first}-{p.last})"
    return OK


@check("storage_cap")
def _storage_cap(d: ProductionData, plan: Plan, p: StorageCap) -> Verdict:
    net = net_stock(d, plan)
    for t in range(d.periods):
        held = sum(max(0, net[prod.id][t]) for prod in d.products)
        if held > p.max:
            return False, f"{held} lots are in stock at the end of period {t + 1} (storage for {p.max})"
    return OK


@check("min_lot")
def _min_lot(d: ProductionData, plan: Plan, p: MinLot) -> Verdict:
    for (line, t), (prod, q) in _sorted_runs(plan):
        if prod == p.product and q < p.lots:
            return False, f"{line} makes {q} lots of {prod} in period {t} (a run makes at least {p.lots})"
    return OK


@check("max_changeovers")
def _max_changeovers(d: ProductionData, plan: Plan, p: MaxChangeovers) -> Verdict:
    for x in d.lines:
        found = changeovers(d, plan, x.id)
        if len(found) > p.max:
            return False, f"{x.id} has {len(found)} changeovers (periods {found}; at most {p.max})"
    return OK


@check("forbidden_succession")
def _forbidden_succession(d: ProductionData, plan: Plan, p: ForbiddenSuccession) -> Verdict:
    for x in d.lines:
        for t in range(2, d.periods + 1):
            if product_at(plan, x.id, t - 1) == p.first and product_at(plan, x.id, t) == p.then:
                return False, f"{x.id} makes {p.then} in period {t}, right after {p.first} in period {t - 1}"
    return OK


@check("max_runs")
def _max_runs(d: ProductionData, plan: Plan, p: MaxRuns) -> Verdict:
    runs = sum(1 for prod, _ in plan.runs.values() if prod == p.product)
    if runs > p.max:
        return False, f"{p.product} is made in {runs} runs (at most {p.max})"
    return OK


@check("line_balance")
def _line_balance(d: ProductionData, plan: Plan, p: LineBalance) -> Verdict:
    lots = line_lots(d, plan)
    hi = max(lots, key=lambda x: lots[x])
    lo = min(lots, key=lambda x: lots[x])
    if lots[hi] - lots[lo] > p.max:
        return False, f"{hi} makes {lots[hi]} lots and {lo} {lots[lo]}: {lots[hi] - lots[lo]} apart (at most {p.max})"
    return OK


@check("material_supply")
def _material_supply(d: ProductionData, plan: Plan, p: NoParams) -> Verdict:
    """Walks the material stock through the periods."""
    for t, level in enumerate(material_levels(d, plan), 1):
        if level < 0:
            return False, f"period {t} uses {-level} units of raw material more than have arrived"
    return OK


@check("safety_stock")
def _safety_stock(d: ProductionData, plan: Plan, p: SafetyStock) -> Verdict:
    net = net_stock(d, plan)[p.product]
    for t in range(p.first, d.periods + 1):
        if net[t - 1] < p.min:
            return False, f"{p.product} has {net[t - 1]} lots in stock at the end of period {t} (at least {p.min})"
    return OK


@check("capacity_reserve")
def _capacity_reserve(d: ProductionData, plan: Plan, p: CapacityReserve) -> Verdict:
    """Simulates each named line losing one lot of capacity in any period."""
    for (line, t), (_, q) in _sorted_runs(plan):
        if line in p.lines and q > d.line_by_id[line].capacity - 1:
            return False, f"if {line} lost one lot of capacity in period {t}, its {q} lots would not fit"
    return OK


# -- objective -------------------------------------------------------------------------
def backlog(d: ProductionData, plan: Plan) -> int:
    net = net_stock(d, plan)
    return sum(p.penalty * max(0, -level) for p in d.products for level in net[p.id])


def cost(d: ProductionData, plan: Plan) -> int:
    """Setups + lots + changeovers + holding (each lot in stock at the end of a period)."""
    total = 0
    for (line, _), (p, q) in plan.runs.items():
        x = d.line_by_id[line]
        total += x.setup.get(p, 0) + x.cost * q
    for x in d.lines:
        total += x.changeover * len(changeovers(d, plan, x.id))
    net = net_stock(d, plan)
    total += sum(p.hold * max(0, level) for p in d.products for level in net[p.id])
    return total


def objective_value(d: ProductionData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "backlog":
        return backlog(d, plan)
    if kind == "cost":
        return cost(d, plan)
    if kind == "changes":
        rows = as_model(tp, CurrentRuns).existing
        old = {(line, t): (p, q) for line, t, p, q in rows}
        cells = set(old) | set(plan.runs)
        return sum(1 for c in cells if old.get(c) != plan.runs.get(c))
    raise ValueError(f"unknown objective kind {term.kind!r}")


def neighbours(d: ProductionData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one line-period set to idle or to another (product, lots)."""
    for x in d.lines:
        for t in range(1, d.periods + 1):
            cur = plan.runs.get((x.id, t))
            options: list[tuple[str, int] | None] = [None]
            options += [(p.id, q) for p in d.products for q in range(1, d.max_lots + 1)]
            for opt in options:
                if opt != cur:
                    runs = dict(plan.runs)
                    if opt is None:
                        runs.pop((x.id, t))
                    else:
                        runs[x.id, t] = opt
                    yield Plan(runs)


# -- the task checker ------------------------------------------------------------------
class ProductionPlanning(PlanChecker):
    family = "project"
    task = TASK_ID
    plan_key = "production"
    plan_text = (
        "a list of runs, each naming a line, a period from 1 to the horizon, a product and an integer number of "
        "lots from 0 to max_lots, with each line and period at most once (a line and period not listed is idle)"
    )
    data_type = ProductionData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: ProductionData) -> dict[str, Any]:
        return {"line": lookup([x.id for x in d.lines]), "product": lookup([p.id for p in d.products])}

    def read_plan(
        self, d: ProductionData, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Plan | None, str]:
        rows = section.get("production") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'production' is missing or not a list"
        runs: dict[tuple[str, int], tuple[str, int]] = {}
        seen: set[tuple[str, int]] = set()
        fields = {"line": lk["line"], "product": lk["product"]}
        ex_line, ex_product = lk["line"].exact, lk["product"].exact
        for k, row in enumerate(rows):
            try:  # the usual row, each name as the instance spells it: row_names' answer, read inline
                if type(row) is not dict:
                    raise TypeError
                line, prod = ex_line[row["line"]], ex_product[row["product"]]
            except (KeyError, TypeError):
                names, why = row_names(row, k, "run", fields)
                if names is None:
                    return None, why
                line, prod = names
            t, q = row.get("period"), row.get("lots")
            if isinstance(t, bool) or not isinstance(t, int) or not 1 <= t <= d.periods:
                return None, f"run {k + 1} needs an integer 'period' from 1 to {d.periods}"
            if isinstance(q, bool) or not isinstance(q, int) or not 0 <= q <= d.max_lots:
                return None, f"run {k + 1} needs an integer 'lots' from 0 to {d.max_lots}"
            if (line, t) in seen:
                return None, f"{line} appears more than once in period {t} (one product per line and period)"
            seen.add((line, t))
            if q:
                runs[line, t] = (prod, q)
        return Plan(runs), "complete plan"

    def objective_value(self, d: ProductionData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: ProductionData, plan: Plan) -> dict[str, dict[str, int]]:
        mk = made(d, plan)
        return {"lots": line_lots(d, plan), "made": {p.id: sum(mk[p.id]) for p in d.products}}

    def existing(self, d: ProductionData, plan: Plan) -> list[list[Any]]:
        return [[line, t, p, q] for (line, t), (p, q) in _sorted_runs(plan)]

    def plan_schema(self, d: ProductionData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        row = {
            "type": "object",
            "properties": {
                "line": {"enum": [x.id for x in d.lines]},
                "period": {"type": "integer", "minimum": 1, "maximum": d.periods},
                "product": {"enum": [p.id for p in d.products]},
                "lots": {"type": "integer", "minimum": 0, "maximum": d.max_lots},
            },
            "required": ["line", "period", "product", "lots"],
        }
        return {"type": "array", "items": row, "description": "one row per run; each line and period at most once"}

    def verification_schema(self, d: ProductionData) -> dict[str, Any]:
        return figures_schema({
            "lots": ([x.id for x in d.lines], "for each line, the lots it makes over the horizon"),
            "made": ([p.id for p in d.products], "for each product, the lots made of it over the horizon"),
        })  # fmt: skip

    def plan_json(self, d: ProductionData, plan: Plan) -> list[dict[str, Any]]:
        return [{"line": line, "period": t, "product": p, "lots": q} for (line, t), (p, q) in _sorted_runs(plan)]

    def neighbours(self, data: ProductionData, plan: Plan) -> Iterator[Plan]:
        """One move from ``plan`` (see :func:`neighbours`), for the kit's near misses."""
        return neighbours(data, plan)

    def baseline_plan(self, d: ProductionData, instance: Instance) -> Plan:
        """Lot-for-lot: period by period, each product's shortfall for that period's orders
        is made on the first listed line that can make it and is still free, up to its
        capacity. Blind to costs, changeovers, material and every sampled rule."""
        runs: dict[tuple[str, int], tuple[str, int]] = {}
        stock = {p.id: p.initial for p in d.products}
        for t in range(1, d.periods + 1):
            for p in d.products:
                need = d.demand[p.id][t - 1] - stock[p.id]
                for x in d.lines:
                    if need <= 0:
                        break
                    if p.id in x.makes and (x.id, t) not in runs:
                        q = min(need, x.capacity)
                        runs[x.id, t] = (p.id, q)
                        stock[p.id] += q
                        need -= q
                stock[p.id] -= d.demand[p.id][t - 1]
        return Plan(runs)


TASK = ProductionPlanning()
