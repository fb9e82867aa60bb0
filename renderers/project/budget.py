"""Prompt text of Financial Budgeting: one sentence per rule kind and objective kind (every
amount in the budget's money unit, periods numbered from 1), and the body of the prompt:
the funds per period, the items with their values, caps and urgency weights, and how the
balance is carried (the closing sections are the kit's)."""

from __future__ import annotations

from pbsolve.checkers.project import budget as fb
from pbsolve.checkers.project.budget import BudgetData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=fb.TASK_ID,
    data_type=BudgetData,
    rule_params=fb.RULE_PARAMS,
    term_params=fb.TERM_PARAMS,
    worst_case="the data's least favourable values are new funds and caps at the low end",
)
CONTEXT = {
    "departmental": "a company's annual budget across its departments",
    "capital_portfolio": "a portfolio of capital projects, several of which have a fixed cost",
    "grant_programme": "a foundation's grant programme, paid mostly from an endowment held at the start",
    "marketing": "a marketing budget across advertising channels",
    "household": "a household's savings plan across personal goals",
}
UNIT_WORDS = {"k$": "k$ (thousands of dollars)", "$100": "$100 units (hundreds of dollars)"}


def _money(d: BudgetData, x: int) -> str:
    return f"{x} {d.unit}"


def _period(d: BudgetData, t: int) -> str:
    return f"period {t}"


@TEXT.rule("funds")
def _funds(d: BudgetData, p: NoParams) -> str:
    return (
        "Funds: at the end of every period the balance (opening balance + new funds of periods 1 to t − total given "
        "to all items in periods 1 to t) is not negative: money is never spent before it has arrived."
    )


@TEXT.rule("item_caps")
def _item_caps(d: BudgetData, p: NoParams) -> str:
    return "Caps: each item's total over all periods is at most its cap."


@TEXT.rule("min_funding")
def _min_funding(d: BudgetData, p: fb.MinFunding) -> str:
    return f"{p.item} receives at least {_money(d, p.amount)} in total over all periods."


@TEXT.rule("period_limit")
def _period_limit(d: BudgetData, p: fb.PeriodLimit) -> str:
    return f"Spending limit: the total given to all items in any one period is at most {_money(d, p.max)}."


@TEXT.rule("item_period_cap")
def _item_period_cap(d: BudgetData, p: fb.ItemPeriodCap) -> str:
    return f"{p.item} receives at most {_money(d, p.max)} in any one period."


@TEXT.rule("start_period")
def _start_period(d: BudgetData, p: fb.StartPeriod) -> str:
    which = "its amount in period 1 is 0" if p.period == 2 else f"its amounts in periods 1 to {p.period - 1} are 0"
    return f"{p.item} receives nothing before period {p.period} ({which})."


@TEXT.rule("spend_by")
def _spend_by(d: BudgetData, p: fb.SpendBy) -> str:
    last = d.periods
    which = (
        f"its amount in period {last} is 0"
        if p.period + 1 == last
        else f"its amounts in periods {p.period + 1} to {last} are 0"
    )
    return f"{p.item} receives nothing after period {p.period} ({which})."


@TEXT.rule("all_or_nothing")
def _all_or_nothing(d: BudgetData, p: fb.AllOrNothing) -> str:
    whole = [f"{i} (exactly {_money(d, d.item_by_id[i].cap)})" for i in p.items]
    verb = "has a fixed cost" if len(p.items) == 1 else "have fixed costs"
    return f"{and_list(p.items)} {verb}: each receives in total either nothing or exactly its cap: {and_list(whole)}."


@TEXT.rule("dependency")
def _dependency(d: BudgetData, p: fb.Dependency) -> str:
    return (
        f"{p.item} may receive money only if {p.requires} is funded: if {p.item}'s total is above 0, "
        f"{p.requires}'s total is at least 1."
    )


@TEXT.rule("exclusive")
def _exclusive(d: BudgetData, p: fb.Exclusive) -> str:
    a, b = p.items
    return f"{a} and {b} are alternatives: at most one of them receives any money (the other's total is 0)."


@TEXT.rule("ramp")
def _ramp(d: BudgetData, p: fb.Ramp) -> str:
    return f"Ramp: from one period to the next, {p.item}'s amount rises or falls by at most {_money(d, p.max_change)}."


@TEXT.rule("group_cap")
def _group_cap(d: BudgetData, p: fb.GroupCap) -> str:
    return f"{and_list(p.items)} together receive at most {_money(d, p.max)} in total over all periods."


@TEXT.rule("carry_cap")
def _carry_cap(d: BudgetData, p: fb.CarryCap) -> str:
    return (
        f"Carry-over cap: the balance at the end of each of periods 1 to {d.periods - 1} (the money carried into "
        f"the next period) is at most {_money(d, p.max)}."
    )


@TEXT.rule("spend_threshold")
def _spend_threshold(d: BudgetData, p: fb.SpendThreshold) -> str:
    return (
        f"Spending review: once {p.item}'s cumulative amount at the end of a period is above "
        f"{_money(d, p.threshold)}, it receives at most {_money(d, p.cap)} in each later period."
    )


@TEXT.rule("spend_down")
def _spend_down(d: BudgetData, p: fb.SpendDown) -> str:
    return (
        f"Spend-down target: the total given to all items over periods 1 to {p.period} is at least {_money(d, p.min)}."
    )


@TEXT.rule("contingency")
def _contingency(d: BudgetData, p: fb.Contingency) -> str:
    return (
        f"Robustness: an unforeseen bill of up to {_money(d, p.amount)} may arrive at the end of any period, so the "
        f"balance at the end of every period is at least {_money(d, p.amount)}."
    )


@TEXT.rule("budget_cut")
def _budget_cut(d: BudgetData, p: fb.BudgetCut) -> str:
    return (
        f"Budget cut: the new funds of period {p.period} are {_money(d, p.amount)} lower than listed, so every "
        f"balance from period {p.period} on is {_money(d, p.amount)} lower and must still not be negative (each "
        f"balance as computed from the listed funds is at least {_money(d, p.amount)} from period {p.period} on)."
    )


@TEXT.rule("freeze")
def _freeze(d: BudgetData, p: fb.Freeze) -> str:
    return f"{p.item}'s account is frozen in period {p.period}: it receives nothing in that period."


@TEXT.objective("forgone_value")
def _forgone(d: BudgetData, p: NoParams) -> str:
    return (
        "the forgone value (fund the most valuable items): for each item, its value per unit × the part of its cap "
        "left unfunded (cap − its total); summed over items"
    )


@TEXT.objective("carry_over")
def _carry_over(d: BudgetData, p: NoParams) -> str:
    return f"the money carried over: the balances at the end of periods 1 to {d.periods - 1}, summed"


@TEXT.objective("timing")
def _timing(d: BudgetData, p: NoParams) -> str:
    return (
        "the timing score (fund urgent items early): each unit given to an item in period t counts the item's "
        "urgency weight × (t − 1); summed over items and periods"
    )


@TEXT.objective("changes")
def _changes(d: BudgetData, p: fb.CurrentAmounts) -> str:
    return "the number of changed amounts: each (item, period) whose amount differs from the current plan counts 1"


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.tier == "hard" and r.kind != "contingency"]
    return f"the change in {and_list(ids)}, which it breaks" if ids else "the change among the rules"


@TEXT.body
def _body(d: BudgetData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    word = d.period_word
    unit = UNIT_WORDS.get(d.unit, d.unit)
    out = [
        f"You are allocating {CONTEXT.get(subtask, 'a budget')}. The plan covers {d.periods} {word}s, numbered "
        f"period 1 to period {d.periods} (one period = one {word}). Give every item a whole-number amount from 0 "
        "to its cap in every period.",
        f"All amounts are in {unit}. New funds arrive at the start of each period; money not given out stays in "
        "the balance and is carried into the next period. The balance at the end of period t = the opening "
        "balance + the new funds of periods 1 to t − the total given to all items in periods 1 to t.",
        "",
        f"**Funds:** opening balance {_money(d, d.opening)}.",
    ]
    for t, b in enumerate(d.budget, 1):
        out.append(f"- period {t}: new funds {ranged(d, 'funds', f'P{t}', b)} {d.unit}")
    out += ["", f"**Items** (value = benefit per {d.unit} given; cap = the most it can receive in total):"]
    for i in d.items:
        out.append(
            f"- {i.id} {i.name}: value {i.value} per {d.unit}, cap {ranged(d, 'cap', i.id, i.cap)} {d.unit}, "
            f"urgency weight {i.weight}"
        )
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; change as few amounts as you can):"]
        out += [f"- {iid}: {', '.join(str(a) for a in xs)}" for iid, xs in fb.current_plan(changes).items()]
    return out


@TEXT.verification
def _verification(d: BudgetData) -> str:
    return (
        "under `verification`, report from your plan `total` (for every item, its total over all periods) and "
        "`balance` (for every period P1, P2, ..., the balance at its end)."
    )
