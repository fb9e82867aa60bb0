"""Financial Budgeting: an amount of money for every item in every period.

Decision: one integer x[i,t] per (item, period), from 0 to the item's cap (an allocation
over periods: integer variables and linear rows, no time slots). The stateful quantity
is the balance: the money at the end of period t (opening + new funds of periods 1..t -
spending of periods 1..t) is carried into period t+1, and the carry-over, contingency
and budget-cut rules read it; a spending threshold reads an item's cumulative amount.
Every numbered rule is posted behind its own enforcement literal (all-or-nothing,
dependency and exclusivity through free "funded" Booleans bounded by the amounts), so
rules can be switched off for conflict sets and explanations.

The objective is lexicographic and stated: the forgone value (each item's value per
unit times the part of its cap left unfunded: maximising the value funded), then the
money carried over (the balances at the ends of periods 1..T-1), then the timing
score (each unit given in period t counts the item's urgency weight times t-1). Items
are never interchangeable (distinct values, caps and urgency weights), so no symmetry
is broken by the last term: its distinct weights are stated in the prompt.
"""

from __future__ import annotations

import random
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible, lexicographic_weights, make_solver
from pbsolve.checkers.project import budget as fb
from pbsolve.checkers.project.budget import BudgetData, Item, Plan
from pbsolve.family import Draft, SolverModel
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
    id=fb.TASK_ID,
    name="Financial Budgeting",
    family="project",
    summary="amounts of money for items over periods under funds arriving per period, caps, priorities and carry-over",
    subtasks=(
        SubtaskSpec(
            "departmental",
            "Annual departmental budget",
            "departments funded quarter by quarter with minimum allocations and a cap on the money carried over",
        ),
        SubtaskSpec(
            "capital_portfolio",
            "Capital projects portfolio",
            "fixed-cost projects funded all or nothing, some only if another is funded",
        ),
        SubtaskSpec(
            "grant_programme",
            "Grant programme",
            "an endowment paid out to grants with spend-down targets and alternative grants that exclude each other",
        ),
        SubtaskSpec(
            "marketing",
            "Marketing budget",
            "monthly spend over channels with ramp limits and per-month channel caps",
        ),
        SubtaskSpec(
            "household",
            "Household budget",
            "personal savings goals over months under a monthly spending limit and review thresholds",
        ),
    ),
    pool=(
        ConstraintSpec("funds", "basic", "money spent never exceeds the funds received so far"),
        ConstraintSpec("item_caps", "basic", "each item's total stays within its cap"),
        ConstraintSpec("min_funding", "basic", "an item receives at least a minimum in total"),
        ConstraintSpec("period_limit", "basic", "total spending in each period stays within a limit"),
        ConstraintSpec("item_period_cap", "basic", "an item receives at most so much in any one period"),
        ConstraintSpec("start_period", "basic", "an item receives nothing before a stated period"),
        ConstraintSpec("spend_by", "basic", "an item receives nothing after a stated period"),
        ConstraintSpec("all_or_nothing", "medium", "fixed-cost items receive nothing or exactly their cap"),
        ConstraintSpec("dependency", "medium", "an item is funded only if another item is funded"),
        ConstraintSpec("exclusive", "medium", "at most one of two alternative items is funded"),
        ConstraintSpec("ramp", "medium", "an item's amount changes by at most so much from one period to the next"),
        ConstraintSpec("group_cap", "medium", "a group of items together receive at most so much"),
        ConstraintSpec("carry_cap", "stateful", "the balance carried from one period into the next stays within a cap"),
        ConstraintSpec(
            "spend_threshold",
            "stateful",
            "once an item's cumulative amount passes a threshold, a per-period cap applies",
        ),
        ConstraintSpec("spend_down", "stateful", "cumulative spending by a stated period reaches a target"),
        *mechanism_pool(
            "every period ends with a contingency reserve, so an unforeseen bill of a stated amount could be paid",
            replan="repair an allocation after a budget cut or a frozen account, changing the fewest amounts",
        ),
    ),
    base_rules=("funds", "item_caps"),
)

# subtask -> (unit, period word, item names)
NAMES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "departmental": ("k$", "quarter", (
        "Engineering", "Sales", "Marketing", "Customer support", "Finance", "Human resources", "Legal", "IT",
        "Facilities", "Research", "Training", "Procurement",
    )),
    "capital_portfolio": ("k$", "quarter", (
        "New roof", "Fleet renewal", "ERP upgrade", "Solar panels", "Warehouse racking", "Lab extension",
        "Data centre cooling", "Parking deck", "Loading dock", "Security system", "Boiler replacement", "Canteen refit",
    )),
    "grant_programme": ("k$", "quarter", (
        "Literacy project", "Youth sports", "River clean-up", "Food bank", "Arts festival", "Elder care visits",
        "Coding club", "Tree planting", "Refugee support", "Mental health line", "Community garden", "Repair café",
    )),
    "marketing": ("k$", "month", (
        "Search ads", "Social media", "Television", "Radio", "Print", "Influencers", "Events", "Email",
        "Podcasts", "Outdoor", "Affiliates", "Video ads",
    )),
    "household": ("$100", "month", (
        "Emergency fund", "Holiday", "Course fees", "New laptop", "Home repairs", "Pension top-up", "Car fund",
        "Gifts", "Bike", "Furniture", "Charity", "Wedding fund",
    )),
}  # fmt: skip
FORCED = {
    "departmental": ("min_funding", "carry_cap"),
    "capital_portfolio": ("all_or_nothing", "dependency"),
    "grant_programme": ("spend_down", "exclusive"),
    "marketing": ("ramp", "item_period_cap"),
    "household": ("period_limit", "spend_threshold"),
}
OBJECTIVES = {
    "departmental": ("forgone_value", "carry_over", "timing"),
    "capital_portfolio": ("forgone_value", "carry_over", "timing"),
    "grant_programme": ("forgone_value", "carry_over", "timing"),
    "marketing": ("forgone_value", "carry_over", "timing"),
    "household": ("forgone_value", "carry_over", "timing"),
}
ENDOWED = ("grant_programme",)  # most of the money is there at the start (an endowment)
WHOLE = ("capital_portfolio",)  # witness items funded all or nothing


class BudgetSizes(Settings):
    """How big a budget is."""

    items: PositiveInt = Field(le=12)
    periods: PositiveInt = Field(le=8)
    cap: PositiveRange = Field(description="an item's cap, in money units")


SIZES = SizeTable[BudgetSizes](
    tiny=BudgetSizes(items=2, periods=2, cap=PositiveRange(lo=2, hi=3)),
    small=BudgetSizes(items=3, periods=3, cap=PositiveRange(lo=3, hi=8)),
    default=BudgetSizes(items=5, periods=4, cap=PositiveRange(lo=4, hi=14)),
    large=BudgetSizes(items=8, periods=6, cap=PositiveRange(lo=6, hi=24)),
)
PROBE_TIME = 2.0
PARAMETERS: dict[str, Any] = {}
# the uniqueness re-optimisation without the probing CP-SAT runs before its search even with
# presolve off, and without rounds of cuts at the root: uniq/first CPU 2.91 -> 2.63 (probing)
# -> 1.82 (cuts) on 66 default drafts (deterministic time 5.76 -> 4.46 -> 3.24), the same
# certificates and plans; linearization level 0 or 1 there is far slower
UNIQUENESS_PARAMETERS: dict[str, Any] = {
    "cp_model_presolve": False,
    "cp_model_probing_level": 0,
    "max_cut_rounds_at_level_zero": 0,
}


# -- the CP-SAT model ------------------------------------------------------------------
class BudgetModel(ModelBase):
    def __init__(self, data: BudgetData) -> None:
        super().__init__()
        self.data = d = data
        self.x: dict[str, list[cp_model.IntVar]] = {
            i.id: [self.m.new_int_var(0, i.cap, f"x[{i.id},{t}]") for t in range(1, d.periods + 1)] for i in d.items
        }
        self._funded: dict[str, cp_model.IntVar] = {}

    def total(self, iid: str) -> cp_model.LinearExprT:
        return cp_model.LinearExpr.sum(self.x[iid])

    def spend(self, t: int) -> cp_model.LinearExprT:
        """Spending of period t (0-based index)."""
        return cp_model.LinearExpr.sum([self.x[i.id][t] for i in self.data.items])

    def balance(self, t: int) -> cp_model.LinearExprT:
        """The balance at the end of period t (0-based index)."""
        d = self.data
        spent = [self.x[i.id][s] for i in d.items for s in range(t + 1)]
        return d.opening + sum(d.budget[: t + 1]) - cp_model.LinearExpr.sum(spent)

    def funded(self, iid: str) -> cp_model.IntVar:
        """A Boolean that must be 1 when the item receives anything (free otherwise: rules
        only ever require it to be 0, so it is exactly 'funded' where it matters)."""
        if iid not in self._funded:
            y = self.m.new_bool_var(f"funded[{iid}]")
            big = self.data.item_by_id[iid].cap * self.data.periods  # the most the amounts can sum to
            self.m.add(self.total(iid) <= big * y)
            self._funded[iid] = y
        return self._funded[iid]


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("funds")
def _funds(tm: BudgetModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for t in range(tm.data.periods):
        tm.post(tm.balance(t) >= 0, lit)


@encoder("item_caps")
def _item_caps(tm: BudgetModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for i in tm.data.items:
        tm.post(tm.total(i.id) <= i.cap, lit)


@encoder("min_funding")
def _min_funding(tm: BudgetModel, p: fb.MinFunding, lit: cp_model.IntVar) -> None:
    tm.post(tm.total(p.item) >= p.amount, lit)


@encoder("period_limit")
def _period_limit(tm: BudgetModel, p: fb.PeriodLimit, lit: cp_model.IntVar) -> None:
    for t in range(tm.data.periods):
        tm.post(tm.spend(t) <= p.max, lit)


@encoder("item_period_cap")
def _item_period_cap(tm: BudgetModel, p: fb.ItemPeriodCap, lit: cp_model.IntVar) -> None:
    for v in tm.x[p.item]:
        tm.post(v <= p.max, lit)


@encoder("start_period")
def _start_period(tm: BudgetModel, p: fb.StartPeriod, lit: cp_model.IntVar) -> None:
    for v in tm.x[p.item][: p.period - 1]:
        tm.post(v == 0, lit)


@encoder("spend_by")
def _spend_by(tm: BudgetModel, p: fb.SpendBy, lit: cp_model.IntVar) -> None:
    for v in tm.x[p.item][p.period :]:
        tm.post(v == 0, lit)


@encoder("all_or_nothing")
def _all_or_nothing(tm: BudgetModel, p: fb.AllOrNothing, lit: cp_model.IntVar) -> None:
    for iid in p.items:
        whole = tm.m.new_bool_var("")
        tm.m.add(tm.total(iid) == tm.data.item_by_id[iid].cap * whole).only_enforce_if(lit)


@encoder("dependency")
def _dependency(tm: BudgetModel, p: fb.Dependency, lit: cp_model.IntVar) -> None:
    tm.post(tm.total(p.requires) >= tm.funded(p.item), lit)


@encoder("exclusive")
def _exclusive(tm: BudgetModel, p: fb.Exclusive, lit: cp_model.IntVar) -> None:
    a, b = p.items
    tm.post(tm.funded(a) + tm.funded(b) <= 1, lit)


@encoder("ramp")
def _ramp(tm: BudgetModel, p: fb.Ramp, lit: cp_model.IntVar) -> None:
    xs = tm.x[p.item]
    for t in range(1, len(xs)):
        tm.post(xs[t] - xs[t - 1] <= p.max_change, lit)
        tm.post(xs[t - 1] - xs[t] <= p.max_change, lit)


@encoder("group_cap")
def _group_cap(tm: BudgetModel, p: fb.GroupCap, lit: cp_model.IntVar) -> None:
    tm.post(cp_model.LinearExpr.sum([tm.total(i) for i in p.items]) <= p.max, lit)


@encoder("carry_cap")
def _carry_cap(tm: BudgetModel, p: fb.CarryCap, lit: cp_model.IntVar) -> None:
    for t in range(tm.data.periods - 1):
        tm.post(tm.balance(t) <= p.max, lit)


@encoder("spend_threshold")
def _spend_threshold(tm: BudgetModel, p: fb.SpendThreshold, lit: cp_model.IntVar) -> None:
    """passed[t] must be 1 once the cumulative amount at the end of period t exceeds the
    threshold (it is monotone, so period t+1's cap under passed[t] covers every later one)."""
    xs = tm.x[p.item]
    for t in range(len(xs) - 1):
        passed = tm.m.new_bool_var("")
        tm.m.add(cp_model.LinearExpr.sum(xs[: t + 1]) <= p.threshold).only_enforce_if(~passed)
        tm.m.add(xs[t + 1] <= p.cap).only_enforce_if([lit, passed])


@encoder("spend_down")
def _spend_down(tm: BudgetModel, p: fb.SpendDown, lit: cp_model.IntVar) -> None:
    periods = range(min(p.period, tm.data.periods))
    tm.post(cp_model.LinearExpr.sum([tm.spend(t) for t in periods]) >= p.min, lit)


@encoder("contingency")
def _contingency(tm: BudgetModel, p: fb.Contingency, lit: cp_model.IntVar) -> None:
    for t in range(tm.data.periods):
        tm.post(tm.balance(t) >= p.amount, lit)


@encoder("budget_cut")
def _budget_cut(tm: BudgetModel, p: fb.BudgetCut, lit: cp_model.IntVar) -> None:
    for t in range(p.period - 1, tm.data.periods):
        tm.post(tm.balance(t) >= p.amount, lit)


@encoder("freeze")
def _freeze(tm: BudgetModel, p: fb.Freeze, lit: cp_model.IntVar) -> None:
    if p.period <= tm.data.periods:
        tm.post(tm.x[p.item][p.period - 1] == 0, lit)


def _objective(tm: BudgetModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    if term.kind == "forgone_value":
        # Linear (no max with 0): with the caps on it is never negative; with them off (an
        # explanation's re-optimisation) it may be, and its range stays within the bound.
        expr = cp_model.LinearExpr.weighted_sum([tm.total(i.id) for i in d.items], [-i.value for i in d.items])
        return sum(i.value * i.cap for i in d.items) + expr, sum(i.value * i.cap for i in d.items) * d.periods
    if term.kind == "carry_over":
        # Linear like the forgone value: the balances themselves, never negative under the funds rule.
        money = d.opening + sum(d.budget) + d.periods * sum(i.cap for i in d.items)
        return cp_model.LinearExpr.sum([tm.balance(t) for t in range(d.periods - 1)]), money * (d.periods - 1)
    if term.kind == "timing":
        cells = [(tm.x[i.id][t], i.weight * t) for i in d.items for t in range(1, d.periods)]
        expr = cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [w for _, w in cells])
        return expr, sum(i.weight * t * i.cap for i in d.items for t in range(1, d.periods))
    if term.kind == "changes":
        old = fb.current_plan(term)
        moved = [tm.differs(tm.x[i.id][t], old[i.id][t], "") for i in d.items for t in range(d.periods)]
        return cp_model.LinearExpr.sum(moved), len(moved)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = parsed(BudgetData, draft.data)
    tm = BudgetModel(data)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        return {
            "allocation": [{"item": i.id, "amounts": [int(solver.value(v)) for v in tm.x[i.id]]} for i in data.items]
        }

    answer = [v for i in data.items for v in tm.x[i.id]]
    return solver_model(
        tm, draft, ENCODERS, fb.RULE_PARAMS, _objective, decode, [], answer,
        parameters=PARAMETERS, uniqueness_parameters=UNIQUENESS_PARAMETERS,
    )  # fmt: skip


# -- sampling --------------------------------------------------------------------------
Witness = dict[str, list[int]]  # item -> amounts per period


def _plan(w: Witness) -> Plan:
    return Plan({k: tuple(v) for k, v in w.items()})


def _spread(rng: random.Random, amount: int, periods: list[int], n: int) -> list[int]:
    """``amount`` split over the given period indices at random (n periods in all)."""
    out = [0] * n
    for _ in range(amount):
        out[rng.choice(periods)] += 1
    return out


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[BudgetData, Witness]:
    """Items with distinct values and urgency weights, a witness allocation funding about
    half of the caps (one item not at all), and funds per period that the witness fits with a little slack:
    the money binds, so priorities decide the optimum."""
    s = SIZES.of(spec.size)
    sub = spec.subtask
    unit, word, pool = NAMES[sub]
    names = rng.sample(pool, s.items)
    values = rng.sample(range(1, 3 * s.items + 4), s.items)
    weights = rng.sample(range(1, 4 * s.items + 1), s.items)
    n = s.periods
    items: list[Item] = []
    witness: Witness = {}
    idle = rng.randint(1, s.items)  # one item the witness leaves unfunded (alternatives, dependencies)
    for k, (name, v, w) in enumerate(zip(names, values, weights), 1):
        cap = s.cap.draw(rng)
        items.append(Item(id=f"I{k}", name=name, value=v, cap=cap, weight=w))
        if k == idle:
            amount = 0
        elif sub in WHOLE or rng.random() < 0.3:
            amount = cap if rng.random() < 0.5 else 0
        else:
            amount = rng.randint(0, cap)
        first = rng.randint(0, n - 1)
        last = rng.randint(first, n - 1)
        witness[f"I{k}"] = _spread(rng, amount, list(range(first, last + 1)), n)
    spent = [sum(witness[i.id][t] for i in items) for t in range(n)]
    if sub in ENDOWED:
        opening = sum(spent) - rng.randint(0, sum(spent) // 3) if spent else 0
        budget, bal = [], opening
        for t in range(n):  # new funds only where the endowment falls short
            need = max(0, spent[t] - bal)
            b = need + rng.randint(0, 1)
            budget.append(b)
            bal += b - spent[t]
    else:
        opening = rng.randint(0, 2)
        budget, bal = [], opening
        for t in range(n):
            b = max(0, spent[t] - bal) + rng.randint(0, 2)
            budget.append(b)
            bal += b - spent[t]
    data = BudgetData(unit=unit, period_word=word, opening=opening, budget=tuple(budget), items=tuple(items))
    return data, witness


def _cum(xs: list[int]) -> list[int]:
    out, acc = [], 0
    for a in xs:
        acc += a
        out.append(acc)
    return out


def _b_min_funding(d: BudgetData, w: Witness, rng: random.Random) -> fb.MinFunding | None:
    funded = [i.id for i in d.items if sum(w[i.id]) >= 1]
    if not funded:
        return None
    iid = rng.choice(funded)
    return fb.MinFunding(item=iid, amount=rng.randint(max(1, sum(w[iid]) // 2), sum(w[iid])))


def _b_period_limit(d: BudgetData, w: Witness, rng: random.Random) -> fb.PeriodLimit | None:
    peak = max(fb.spend(d, _plan(w)))
    return fb.PeriodLimit(max=peak + rng.choice((0, 0, 1)))


def _b_item_period_cap(d: BudgetData, w: Witness, rng: random.Random) -> fb.ItemPeriodCap | None:
    options = [i for i in d.items if max(w[i.id]) + 1 < i.cap]
    if not options:
        return None
    i = rng.choice(options)
    return fb.ItemPeriodCap(item=i.id, max=max(w[i.id]) + rng.randint(0, 1))


def _b_start_period(d: BudgetData, w: Witness, rng: random.Random) -> fb.StartPeriod | None:
    options = []
    for i in d.items:
        first = next((t for t, a in enumerate(w[i.id], 1) if a), d.periods)
        if first >= 2:
            options.append((i.id, first))
    if not options:
        return None
    iid, first = rng.choice(options)
    return fb.StartPeriod(item=iid, period=rng.randint(2, first))


def _b_spend_by(d: BudgetData, w: Witness, rng: random.Random) -> fb.SpendBy | None:
    options = []
    for i in d.items:
        last = max((t for t, a in enumerate(w[i.id], 1) if a), default=1)
        if last < d.periods:
            options.append((i.id, last))
    if not options:
        return None
    iid, last = rng.choice(options)
    return fb.SpendBy(item=iid, period=rng.randint(last, d.periods - 1))


def _b_all_or_nothing(d: BudgetData, w: Witness, rng: random.Random) -> fb.AllOrNothing | None:
    whole = [i.id for i in d.items if sum(w[i.id]) in (0, i.cap)]
    if not whole:
        return None
    chosen = rng.sample(whole, min(len(whole), rng.randint(1, 3)))
    return fb.AllOrNothing(items=sorted(chosen, key=lambda x: int(x[1:])))


def _b_dependency(d: BudgetData, w: Witness, rng: random.Random) -> fb.Dependency | None:
    ids = [i.id for i in d.items]
    pairs = [(a, b) for a in ids for b in ids if a != b and (sum(w[a]) == 0 or sum(w[b]) >= 1)]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    return fb.Dependency(item=a, requires=b)


def _b_exclusive(d: BudgetData, w: Witness, rng: random.Random) -> fb.Exclusive | None:
    ids = [i.id for i in d.items]
    pairs = [(a, b) for k, a in enumerate(ids) for b in ids[k + 1 :] if not (sum(w[a]) and sum(w[b]))]
    if not pairs:
        return None
    return fb.Exclusive(items=rng.choice(pairs))


def _b_ramp(d: BudgetData, w: Witness, rng: random.Random) -> fb.Ramp | None:
    if d.periods < 2:
        return None
    options = []
    for i in d.items:
        step = max(abs(b - a) for a, b in zip(w[i.id], w[i.id][1:]))
        if step + 1 < i.cap:
            options.append((i.id, step))
    if not options:
        return None
    iid, step = rng.choice(options)
    return fb.Ramp(item=iid, max_change=step + rng.randint(0, 1))


def _b_group_cap(d: BudgetData, w: Witness, rng: random.Random) -> fb.GroupCap | None:
    if len(d.items) < 2:
        return None
    chosen = sorted(rng.sample([i.id for i in d.items], rng.randint(2, min(3, len(d.items)))), key=lambda x: int(x[1:]))
    got = sum(sum(w[i]) for i in chosen)
    if got + 1 >= sum(d.item_by_id[i].cap for i in chosen):
        return None
    return fb.GroupCap(items=chosen, max=got + rng.randint(0, 1))


def _b_carry_cap(d: BudgetData, w: Witness, rng: random.Random) -> fb.CarryCap | None:
    if d.periods < 2:
        return None
    top = max(fb.balances(d, _plan(w))[:-1])
    return fb.CarryCap(max=max(0, top) + rng.randint(0, 1))


def _b_spend_threshold(d: BudgetData, w: Witness, rng: random.Random) -> fb.SpendThreshold | None:
    options = [i for i in d.items if sum(w[i.id]) >= 1 and d.periods >= 2]
    if not options:
        return None
    i = rng.choice(options)
    xs = w[i.id]
    threshold = rng.randint(0, sum(xs) - 1)
    cum = _cum(xs)
    passed = next(t for t, c in enumerate(cum) if c > threshold)
    later = xs[passed + 1 :]
    cap = max(later) + rng.randint(0, 1) if later else rng.randint(0, i.cap - 1)
    if cap >= i.cap:
        return None
    return fb.SpendThreshold(item=i.id, threshold=threshold, cap=cap)


def _b_spend_down(d: BudgetData, w: Witness, rng: random.Random) -> fb.SpendDown | None:
    spent = _cum(fb.spend(d, _plan(w)))
    options = [t for t in range(1, d.periods) if spent[t - 1] >= 1] or [
        t for t in range(1, d.periods + 1) if spent[t - 1]
    ]
    if not options:
        return None
    t = rng.choice(options)
    return fb.SpendDown(period=t, min=max(1, spent[t - 1] - rng.randint(0, 1)))


BUILDERS = {
    "min_funding": _b_min_funding,
    "period_limit": _b_period_limit,
    "item_period_cap": _b_item_period_cap,
    "start_period": _b_start_period,
    "spend_by": _b_spend_by,
    "all_or_nothing": _b_all_or_nothing,
    "dependency": _b_dependency,
    "exclusive": _b_exclusive,
    "ramp": _b_ramp,
    "group_cap": _b_group_cap,
    "carry_cap": _b_carry_cap,
    "spend_threshold": _b_spend_threshold,
    "spend_down": _b_spend_down,
}


def objective_terms(subtask: str) -> list[ObjectiveTerm]:
    return [make_term(k, k) for k in OBJECTIVES[subtask]]


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    data, witness = _entities(spec, rng)
    sampled = sampled_kinds(spec, TASK.base_rules, FORCED[spec.subtask])
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng)
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective_terms(spec.subtask))


# -- hard-tier hooks -------------------------------------------------------------------
def _amounts(plan: dict[str, Any]) -> Witness:
    return {r["item"]: list(r["amounts"]) for r in plan["allocation"]}


def _optimal_plan(draft_: Draft, limits: SolverLimits) -> Witness | None:
    sm = build(draft_)
    weights = lexicographic_weights([ub for _, _, ub in sm.objective_terms])
    sm.model.minimize(sum(w * expr for w, (_, expr, _) in zip(weights, sm.objective_terms)))
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = make_solver(limits, presolve=False, optimise=True)
    if solver.solve(sm.model) != cp_model.OPTIMAL:
        return None
    return _amounts(sm.decode(solver))


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A minimum funding of one item just above what the rules allow: bisection over the
    amounts from its funding in the optimal plan up to its cap finds the loosest
    infeasible minimum; one infeasible on its own is passed over (the conflict must run
    through the instance's rules)."""
    d = BudgetData.model_validate(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731
    best = _optimal_plan(draft_, probe)
    if best is None:
        return None
    items = [i for i in d.items if sum(best[i.id]) < i.cap]
    rng.shuffle(items)
    for i in items[:4]:
        amounts = list(range(max(1, sum(best[i.id]) + 1), i.cap + 1))  # loosest first

        def with_minimum(amount: int, iid: str = i.id) -> Draft:
            return with_conflict_rule(draft_, "min_funding", fb.MinFunding(item=iid, amount=amount), position)

        found = first_infeasible(amounts, with_minimum, feasible)
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A cut of a period's new funds deeper than the plan's lowest balance from then on,
    or an item frozen in a period the plan gives it money."""
    d = BudgetData.model_validate(draft_.data)
    w = _amounts(plan)
    bal = fb.balances(d, _plan(w))
    out: list[Rule] = []
    for t in range(1, d.periods + 1):
        low = min(bal[t - 1 :])
        if low >= 0:
            cut = low + rng.randint(1, 2)
            if cut <= d.budget[t - 1]:
                out.append(make_rule("budget_cut", "hard", fb.BudgetCut(period=t, amount=cut)))
    for i in d.items:
        busy = [t for t, a in enumerate(w[i.id], 1) if a]
        if busy:
            out.append(make_rule("freeze", "hard", fb.Freeze(item=i.id, period=rng.choice(busy))))
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, list[int]]:
    return _amounts(plan)


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    """A contingency reserve of a few units at the end of every period, the largest of
    1-3 that keeps the rules feasible (the kit probes it again)."""
    d = BudgetData.model_validate(draft_.data)
    probe = SolverLimits(deterministic_time=PROBE_TIME)
    amounts = [3, 2, 1] if rng.random() < 0.5 else [2, 1]
    for amount in amounts:
        if d.opening + d.budget[0] < amount:
            continue
        rule = make_rule("contingency", "hard", fb.Contingency(amount=amount), f"R{len(draft_.rules) + 1}")
        if is_feasible(build(Draft(draft_.spec, draft_.data, [*draft_.rules, rule], draft_.objective)), probe):
            return rule, []
    return None


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """New funds of a period (worst: low) and item caps (worst: low). Higher funds raise
    every later balance, which could break a carry-over cap the worst case keeps, so
    funds are offered only without carry-over caps; caps only of items no all-or-nothing
    rule names (their total would have to equal every value of the range)."""
    d = BudgetData.model_validate(draft_.data)
    kinds = {r.kind for r in draft_.rules}
    whole = {i for r in draft_.rules if r.kind == "all_or_nothing" for i in r.params["items"]}
    out: list[Uncertain] = []
    if "carry_cap" not in kinds:
        funds = [
            Uncertain(id="", kind="funds", target=f"P{t}", low=b - rng.randint(1, 2), high=b)
            for t, b in enumerate(d.budget, 1)
            if b >= 2
        ]
        out += rng.sample(funds, min(3, len(funds)))
    caps = [
        Uncertain(id="", kind="cap", target=i.id, low=i.cap - 1, high=i.cap)
        for i in d.items
        if i.id not in whole and i.cap >= 2
    ]
    out += rng.sample(caps, min(3, len(caps)))
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = BudgetData.model_validate(data)
    if u.kind == "funds":
        t = int(u.target[1:]) - 1
        return {**data, "budget": [value if k == t else b for k, b in enumerate(d.budget)]}
    items = tuple(i.model_copy(update={"cap": value}) if i.id == u.target else i for i in d.items)
    return {**data, "items": [i.model_dump(mode="json") for i in items]}


def worst_is_low(u: Uncertain) -> bool:
    return True


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = BudgetData.model_validate(draft_.data)
    return fb.TASK.verification(d, _plan(_amounts(plan)))


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
