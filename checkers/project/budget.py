"""Checks for Financial Budgeting answers: an amount of money (whole units, k$ or $100)
for every item (programme, department, project, channel) in every period (month,
quarter, year), under a budget that arrives period by period.

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. Every figure is recomputed from the plan in plain Python integers. The one state
the rules read is the balance: the money left at the end of period t is the opening
balance plus the new funds of periods 1..t minus everything spent in periods 1..t; that
balance is what is carried into period t+1.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import OK, PlanChecker, lookup
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse, problem, self_paired
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "financial_budgeting"


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Item(_Frozen):
    """Something to fund. ``value``: benefit per unit of money funded (the priority);
    ``cap``: the most it can usefully receive in total; ``weight``: its urgency weight in
    the timing score (distinct per item, so the stated objective has one optimum)."""

    id: str
    name: str
    value: PositiveInt
    cap: PositiveInt
    weight: PositiveInt = 1


class BudgetData(_Frozen):
    """One budget: new funds arrive at the start of each period (``budget[t-1]`` for period
    t), on top of the ``opening`` balance; every number a rule or the objective reads is
    here. ``unit`` names the money unit of every amount, ``period_word`` the period."""

    unit: str = "k$"
    period_word: str = "quarter"
    opening: NonNegativeInt = 0
    budget: tuple[NonNegativeInt, ...]
    items: tuple[Item, ...]
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> BudgetData:
        """Malformed data is a clear error: no periods or items, repeated item ids."""
        if not self.budget:
            raise ValueError("a budget needs at least one period")
        if not self.items:
            raise ValueError("a budget needs at least one item")
        ids = [i.id for i in self.items]
        if len(set(ids)) != len(ids):
            raise ValueError("repeated item id")
        if any(i.startswith("P") and i[1:].isdigit() for i in ids):
            raise ValueError("item ids must differ from period ids P1, P2, ...")
        return self

    @property
    def periods(self) -> int:
        return len(self.budget)

    @cached_property
    def item_by_id(self) -> dict[str, Item]:
        return {i.id: i for i in self.items}

    def period_ids(self) -> list[str]:
        return [f"P{t}" for t in range(1, self.periods + 1)]

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {"item": self.item_by_id}
        return names[what]


def replaced(d: BudgetData, **changes: Any) -> BudgetData:
    """``d`` with fields replaced, as a new validated object."""
    return BudgetData.model_validate({**{f: getattr(d, f) for f in BudgetData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
ItemName = Annotated[str, Names("item")]


class MinFunding(Params):
    """The item receives at least ``amount`` in total over all periods."""

    item: ItemName
    amount: PositiveInt


class PeriodLimit(Params):
    """Total spending in each period is at most ``max`` (a cash-flow limit)."""

    max: NonNegativeInt


class ItemPeriodCap(Params):
    """The item receives at most ``max`` in any one period."""

    item: ItemName
    max: NonNegativeInt


class StartPeriod(Params):
    """The item receives nothing before period ``period`` (1-based)."""

    item: ItemName
    period: PositiveInt


class SpendBy(Params):
    """The item receives nothing after period ``period`` (1-based)."""

    item: ItemName
    period: PositiveInt


class AllOrNothing(Params):
    """Each named item receives in total either nothing or exactly its cap (a project with a fixed cost)."""

    items: list[ItemName]


class Dependency(Params):
    """``item`` may receive money only if ``requires`` receives some (a total of at least 1)."""

    item: ItemName
    requires: ItemName

    def data_problems(self, data: Any) -> list[str]:
        """Also: two different items (an item funded always has itself funded)."""
        found = super().data_problems(data)
        return found + self_paired([(self.item, self.requires)], "items")


class Exclusive(Params):
    """At most one of the two items receives any money (alternatives)."""

    items: tuple[ItemName, ItemName]


class Ramp(Params):
    """From one period to the next, the item's amount rises or falls by at most ``max_change``."""

    item: ItemName
    max_change: NonNegativeInt


class GroupCap(Params):
    """The named items together receive at most ``max`` in total."""

    items: list[ItemName]
    max: NonNegativeInt


class CarryCap(Params):
    """The balance carried out of each period into the next (periods 1..T-1) is at most ``max``."""

    max: NonNegativeInt


class SpendThreshold(Params):
    """Once the item's cumulative amount at the end of a period exceeds ``threshold``, it
    receives at most ``cap`` in every later period (a spending review switches on)."""

    item: ItemName
    threshold: NonNegativeInt
    cap: NonNegativeInt


class SpendDown(Params):
    """Cumulative spending on all items over periods 1..``period`` is at least ``min``."""

    period: PositiveInt
    min: PositiveInt


class Contingency(Params):
    """Robustness: the balance at the end of every period is at least ``amount``, so an
    unforeseen bill of up to ``amount`` could be paid in any period."""

    amount: PositiveInt


class BudgetCut(Params):
    """The new funds of period ``period`` are cut by ``amount``: every balance from that
    period on is ``amount`` lower, and must still not be negative."""

    period: PositiveInt
    amount: PositiveInt


class Freeze(Params):
    """The item receives nothing in period ``period`` (a frozen account)."""

    item: ItemName
    period: PositiveInt


class CurrentAmounts(Params):
    """The current plan a ``changes`` term counts against: item -> amounts per period."""

    existing: dict[ItemName, list[int]]

    def data_problems(self, data: Any) -> list[str]:
        """Also: the plan has one amount per period for every item (the ``changes`` figure
        compares each of them)."""
        found = super().data_problems(data)
        short = [i for i in data.item_by_id if len(self.existing.get(i, ())) != data.periods]
        return found + problem(
            f"the current plan does not have {data.periods} amounts (one per period) for item", short
        )


RULE_PARAMS: ParamsTable = {
    "funds": NoParams,
    "item_caps": NoParams,
    "min_funding": MinFunding,
    "period_limit": PeriodLimit,
    "item_period_cap": ItemPeriodCap,
    "start_period": StartPeriod,
    "spend_by": SpendBy,
    "all_or_nothing": AllOrNothing,
    "dependency": Dependency,
    "exclusive": Exclusive,
    "ramp": Ramp,
    "group_cap": GroupCap,
    "carry_cap": CarryCap,
    "spend_threshold": SpendThreshold,
    "spend_down": SpendDown,
    "contingency": Contingency,
    "budget_cut": BudgetCut,
    "freeze": Freeze,
}
TERM_PARAMS: ParamsTable = {
    "forgone_value": NoParams,
    "carry_over": NoParams,
    "timing": NoParams,
    "changes": CurrentAmounts,
}


def current_plan(changes: ObjectiveTerm) -> dict[str, list[int]]:
    """The current plan of a ``changes`` term (item -> amounts per period)."""
    return as_model(parse(TERM_PARAMS, changes), CurrentAmounts).existing


# -- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    amounts: dict[str, tuple[int, ...]]  # item -> amount in periods 1..T


def total(plan: Plan, item: str) -> int:
    return sum(plan.amounts[item])


def spend(d: BudgetData, plan: Plan) -> list[int]:
    """Per period 1..T (list index t-1), the total amount given to all items."""
    return [sum(plan.amounts[i.id][t] for i in d.items) for t in range(d.periods)]


def balances(d: BudgetData, plan: Plan) -> list[int]:
    """Per period 1..T, the balance at its end: opening + new funds so far - spending so far."""
    out, bal = [], d.opening
    for t, s in enumerate(spend(d, plan)):
        bal += d.budget[t] - s
        out.append(bal)
    return out


def funded(plan: Plan, item: str) -> bool:
    return total(plan, item) >= 1


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
@check("funds")
def _funds(d: BudgetData, plan: Plan, p: NoParams) -> Verdict:
    for t, bal in enumerate(balances(d, plan), 1):
        if bal < 0:
            return False, f"the balance at the end of period {t} is {bal}: more is spent than the funds received"
    return OK


@check("item_caps")
def _item_caps(d: BudgetData, plan: Plan, p: NoParams) -> Verdict:
    for i in d.items:
        if total(plan, i.id) > i.cap:
            return False, f"{i.id} receives {total(plan, i.id)} in total, above its cap {i.cap}"
    return OK


@check("min_funding")
def _min_funding(d: BudgetData, plan: Plan, p: MinFunding) -> Verdict:
    got = total(plan, p.item)
    if got < p.amount:
        return False, f"{p.item} receives {got} in total, below the minimum {p.amount}"
    return OK


@check("period_limit")
def _period_limit(d: BudgetData, plan: Plan, p: PeriodLimit) -> Verdict:
    for t, s in enumerate(spend(d, plan), 1):
        if s > p.max:
            return False, f"{s} is spent in period {t}, above the limit {p.max}"
    return OK


@check("item_period_cap")
def _item_period_cap(d: BudgetData, plan: Plan, p: ItemPeriodCap) -> Verdict:
    for t, a in enumerate(plan.amounts[p.item], 1):
        if a > p.max:
            return False, f"{p.item} receives {a} in period {t}, above {p.max}"
    return OK


@check("start_period")
def _start_period(d: BudgetData, plan: Plan, p: StartPeriod) -> Verdict:
    for t, a in enumerate(plan.amounts[p.item], 1):
        if t < p.period and a > 0:
            return False, f"{p.item} receives {a} in period {t}, before period {p.period}"
    return OK


@check("spend_by")
def _spend_by(d: BudgetData, plan: Plan, p: SpendBy) -> Verdict:
    for t, a in enumerate(plan.amounts[p.item], 1):
        if t > p.period and a > 0:
            return False, f"{p.item} receives {a} in period {t}, after period {p.period}"
    return OK


@check("all_or_nothing")
def _all_or_nothing(d: BudgetData, plan: Plan, p: AllOrNothing) -> Verdict:
    for iid in p.items:
        got, cap = total(plan, iid), d.item_by_id[iid].cap
        if got not in (0, cap):
            return False, f"{iid} receives {got} in total: either nothing or exactly {cap}"
    return OK


@check("dependency")
def _dependency(d: BudgetData, plan: Plan, p: Dependency) -> Verdict:
    if funded(plan, p.item) and not funded(plan, p.requires):
        return False, f"{p.item} is funded ({total(plan, p.item)}) but {p.requires}, which it requires, gets nothing"
    return OK


@check("exclusive")
def _exclusive(d: BudgetData, plan: Plan, p: Exclusive) -> Verdict:
    a, b = p.items
    if funded(plan, a) and funded(plan, b):
        return False, f"both {a} ({total(plan, a)}) and {b} ({total(plan, b)}) are funded; at most one may be"
    return OK


@check("ramp")
def _ramp(d: BudgetData, plan: Plan, p: Ramp) -> Verdict:
    xs = plan.amounts[p.item]
    for t in range(1, len(xs)):
        if abs(xs[t] - xs[t - 1]) > p.max_change:
            return (
                False,
                f"{p.item} goes from {xs[t - 1]} in period {t} to {xs[t]} in period {t + 1}: "
                f"a change above {p.max_change}",
            )
    return OK


@check("group_cap")
def _group_cap(d: BudgetData, plan: Plan, p: GroupCap) -> Verdict:
    got = sum(total(plan, i) for i in p.items)
    if got > p.max:
        return False, f"{', '.join(p.items)} receive {got} together, above {p.max}"
    return OK


@check("carry_cap")
def _carry_cap(d: BudgetData, plan: Plan, p: CarryCap) -> Verdict:
    for t, bal in enumerate(balances(d, plan)[:-1], 1):
        if bal > p.max:
            return False, f"{bal} is carried from period {t} into period {t + 1}, above {p.max}"
    return OK


@check("spend_threshold")
def _spend_threshold(d: BudgetData, plan: Plan, p: SpendThreshold) -> Verdict:
    """Walks the periods keeping the item's cumulative amount; once it has passed the
    threshold at a period's end, every later period's amount is capped."""
    cum, passed_at = 0, 0
    for t, a in enumerate(plan.amounts[p.item], 1):
        if passed_at and a > p.cap:
            return (
                False,
                f"{p.item} receives {a} in period {t}, above {p.cap}, after its cumulative amount passed "
                f"{p.threshold} in period {passed_at}",
            )
        cum += a
        if not passed_at and cum > p.threshold:
            passed_at = t
    return OK


@check("spend_down")
def _spend_down(d: BudgetData, plan: Plan, p: SpendDown) -> Verdict:
    done = sum(spend(d, plan)[: p.period])
    if done < p.min:
        return False, f"{done} is spent over periods 1 to {p.period}, below {p.min}"
    return OK


@check("contingency")
def _contingency(d: BudgetData, plan: Plan, p: Contingency) -> Verdict:
    """Simulates an unforeseen bill of ``amount`` at the end of each period."""
    for t, bal in enumerate(balances(d, plan), 1):
        if bal < p.amount:
            return False, f"a bill of {p.amount} at the end of period {t} could not be paid (balance {bal})"
    return OK


@check("budget_cut")
def _budget_cut(d: BudgetData, plan: Plan, p: BudgetCut) -> Verdict:
    for t, bal in enumerate(balances(d, plan), 1):
        if t >= p.period and bal - p.amount < 0:
            return False, f"after the cut of {p.amount}, the balance at the end of period {t} is {bal - p.amount}"
    return OK


@check("freeze")
def _freeze(d: BudgetData, plan: Plan, p: Freeze) -> Verdict:
    a = plan.amounts[p.item][p.period - 1] if p.period <= d.periods else 0
    if a > 0:
        return False, f"{p.item} receives {a} in period {p.period}, when it is frozen"
    return OK


# -- objective -------------------------------------------------------------------------
def objective_value(d: BudgetData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "forgone_value":  # never negative while the caps hold
        return sum(i.value * (i.cap - total(plan, i.id)) for i in d.items)
    if kind == "carry_over":  # never negative while the funds rule holds
        return sum(balances(d, plan)[:-1])
    if kind == "timing":
        return sum(i.weight * t * a for i in d.items for t, a in enumerate(plan.amounts[i.id]))
    if kind == "changes":
        old = as_model(tp, CurrentAmounts).existing
        return sum(1 for i in d.items for t, a in enumerate(plan.amounts[i.id]) if a != old[i.id][t])
    raise ValueError(f"unknown objective kind {term.kind!r}")


def neighbours(d: BudgetData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one amount changed to another value within its item's cap."""
    for i in d.items:
        xs = plan.amounts[i.id]
        for t in range(d.periods):
            for a in range(i.cap + 1):
                if a != xs[t]:
                    yield Plan({**plan.amounts, i.id: (*xs[:t], a, *xs[t + 1 :])})


# -- the task checker ------------------------------------------------------------------
class FinancialBudgeting(PlanChecker):
    family = "project"
    task = TASK_ID
    plan_key = "allocation"
    plan_text = (
        "a list naming every item exactly once, each with 'amounts': one whole number per period, in period "
        "order, each from 0 to the item's cap"
    )
    data_type = BudgetData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: BudgetData) -> dict[str, Any]:
        return {"item": lookup([i.id for i in d.items])}

    def read_plan(self, d: BudgetData, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Plan | None, str]:
        rows = section.get("allocation") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'allocation' is missing or not a list"
        amounts: dict[str, tuple[int, ...]] = {}
        for k, row in enumerate(rows):
            if not isinstance(row, dict):
                return None, f"row {k + 1} is not an object"
            name, xs = row.get("item"), row.get("amounts")
            if not isinstance(name, str):
                return None, f"row {k + 1} needs a string field 'item'"
            iid = lk["item"].find(name)
            if iid is None:
                return None, f"row {k + 1} names unknown item {name[:40]!r}"
            if not isinstance(xs, list) or len(xs) != d.periods:
                return None, f"row {k + 1} ({iid}) needs 'amounts': a list of {d.periods} whole numbers"
            cap = d.item_by_id[iid].cap
            for t, a in enumerate(xs, 1):
                if isinstance(a, bool) or not isinstance(a, int):
                    return None, f"{iid}: the amount of period {t} is not a whole number"
                if not 0 <= a <= cap:
                    return None, f"{iid}: the amount {a} of period {t} is outside 0 to its cap {cap}"
            if iid in amounts:
                return None, f"item {iid} appears more than once"
            amounts[iid] = tuple(xs)
        missing = [i.id for i in d.items if i.id not in amounts]
        if missing:
            return None, f"items missing from the allocation: {', '.join(missing)}"
        return Plan(amounts), "complete plan"

    def objective_value(self, d: BudgetData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: BudgetData, plan: Plan) -> dict[str, dict[str, int]]:
        return {
            "total": {i.id: total(plan, i.id) for i in d.items},
            "balance": dict(zip(d.period_ids(), balances(d, plan))),
        }

    def existing(self, d: BudgetData, plan: Plan) -> dict[str, list[int]]:
        return {i: list(xs) for i, xs in plan.amounts.items()}

    def plan_schema(self, d: BudgetData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        row = {
            "type": "object",
            "properties": {
                "item": {"enum": [i.id for i in d.items]},
                "amounts": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 0},
                    "minItems": d.periods,
                    "maxItems": d.periods,
                    "description": f"the {d.unit} given to the item in periods 1 to {d.periods}, in order",
                },
            },
            "required": ["item", "amounts"],
        }
        return {"type": "array", "items": row, "description": "every item exactly once"}

    def verification_schema(self, d: BudgetData) -> dict[str, Any]:
        return figures_schema({
            "total": ([i.id for i in d.items], "for each item, its total amount over all periods"),
            "balance": (d.period_ids(), "for each period, the balance at its end (carried into the next period)"),
        })  # fmt: skip

    def plan_json(self, d: BudgetData, plan: Plan) -> list[dict[str, Any]]:
        return [{"item": i.id, "amounts": list(plan.amounts[i.id])} for i in d.items]

    def neighbours(self, data: BudgetData, plan: Plan) -> Iterator[Plan]:
        """One move from ``plan`` (see :func:`neighbours`), for the kit's near misses."""
        return neighbours(data, plan)

    def baseline_plan(self, d: BudgetData, instance: Instance) -> Plan:
        """Greedy by value: period by period, the money at hand goes to the items of
        highest value per unit first, each up to what is left of its cap. Blind to every
        rule but the funds and the caps, and to the secondary objectives."""
        left = {i.id: i.cap for i in d.items}
        amounts = {i.id: [0] * d.periods for i in d.items}
        order = sorted(d.items, key=lambda i: (-i.value, i.id))
        bal = d.opening
        for t in range(d.periods):
            bal += d.budget[t]
            for i in order:
                a = min(left[i.id], bal)
                amounts[i.id][t] = a
                left[i.id] -= a
                bal -= a
        return Plan({k: tuple(v) for k, v in amounts.items()})


TASK = FinancialBudgeting()
