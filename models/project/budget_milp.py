"""MILP formulation (PuLP) of Financial Budgeting: the allocation as integer amounts.

The second back-end: the same drafts, every rule kind written again as linear rows over
integers x[i,t] (the amount of item i in period t, 0..cap), with binaries only where a
rule needs a yes/no (an item funded at all, all or nothing, a spending threshold
passed), and the lexicographic objective solved stage by stage. A budget is a natural
MILP: funds, caps and balances are linear rows with a tight relaxation. Tests and the
generation benchmark hold its optimum against CP-SAT's; the certifier stays CP-SAT.

Importing this module needs PuLP (the ``milp`` extra); nothing else in the family does.
"""

from __future__ import annotations

from typing import Any

import pulp

from pbsolve.checkers.project import budget as fb
from pbsolve.checkers.project.budget import BudgetData
from pbsolve.family import Draft
from pbsolve.milp_kit import Builder, Formulation
from pbsolve.params import parse
from pbsolve.schema import ObjectiveTerm, Rule

TASK_ID = fb.TASK_ID


def build(draft: Draft, without: str | None) -> Formulation:
    """The rows of every rule but ``without``, the objective terms in order and a decoder."""
    d = BudgetData.model_validate(draft.data)
    b = Builder("financial_budgeting")
    n = d.periods
    x = {i.id: [b.var(0, i.cap) for _ in range(n)] for i in d.items}
    most = {i.id: i.cap * n for i in d.items}  # the most an item's amounts can sum to
    funded_vars: dict[str, pulp.LpVariable] = {}

    def total(iid: str) -> Any:
        return pulp.lpSum(x[iid])

    def spend(t: int) -> Any:
        return pulp.lpSum([x[i.id][t] for i in d.items])

    def balance(t: int) -> Any:
        """The balance at the end of period t (0-based)."""
        return d.opening + sum(d.budget[: t + 1]) - pulp.lpSum([x[i.id][s] for i in d.items for s in range(t + 1)])

    def funded(iid: str) -> pulp.LpVariable:
        """A binary that must be 1 when the item receives anything."""
        if iid not in funded_vars:
            y = b.var(0, 1, binary=True)
            b.add(total(iid) <= most[iid] * y)
            funded_vars[iid] = y
        return funded_vars[iid]

    def rule(r: Rule) -> None:
        p: Any = parse(fb.RULE_PARAMS, r)
        k = r.kind
        if k == "funds":
            for t in range(n):
                b.add(balance(t) >= 0)
        elif k == "item_caps":
            for i in d.items:
                b.add(total(i.id) <= i.cap)
        elif k == "min_funding":
            b.add(total(p.item) >= p.amount)
        elif k == "period_limit":
            for t in range(n):
                b.add(spend(t) <= p.max)
        elif k == "item_period_cap":
            for v in x[p.item]:
                b.add(v <= p.max)
        elif k == "start_period":
            for v in x[p.item][: p.period - 1]:
                b.add(v == 0)
        elif k == "spend_by":
            for v in x[p.item][p.period :]:
                b.add(v == 0)
        elif k == "all_or_nothing":
            for iid in p.items:
                whole = b.var(0, 1, binary=True)
                b.add(total(iid) == d.item_by_id[iid].cap * whole)
        elif k == "dependency":
            b.add(total(p.requires) >= funded(p.item))
        elif k == "exclusive":
            one, other = p.items
            b.add(funded(one) + funded(other) <= 1)
        elif k == "ramp":
            xs = x[p.item]
            for t in range(1, n):
                b.add(xs[t] - xs[t - 1] <= p.max_change)
                b.add(xs[t - 1] - xs[t] <= p.max_change)
        elif k == "group_cap":
            b.add(pulp.lpSum([total(i) for i in p.items]) <= p.max)
        elif k == "carry_cap":
            for t in range(n - 1):
                b.add(balance(t) <= p.max)
        elif k == "spend_threshold":
            xs, big = x[p.item], most[p.item]
            for t in range(n - 1):
                passed = b.var(0, 1, binary=True)  # must be 1 once the cumulative amount exceeds the threshold
                b.add(pulp.lpSum(xs[: t + 1]) <= p.threshold + big * passed)
                b.add(xs[t + 1] <= p.cap + big * (1 - passed))
        elif k == "spend_down":
            b.add(pulp.lpSum([spend(t) for t in range(min(p.period, n))]) >= p.min)
        elif k == "contingency":
            for t in range(n):
                b.add(balance(t) >= p.amount)
        elif k == "budget_cut":
            for t in range(p.period - 1, n):
                b.add(balance(t) >= p.amount)
        elif k == "freeze":
            if p.period <= n:
                b.add(x[p.item][p.period - 1] == 0)
        else:
            raise ValueError(f"no MILP row for rule kind {k!r}")

    for r in draft.rules:
        if r.id != without:
            rule(r)

    def term(t: ObjectiveTerm) -> Any:
        if t.kind == "forgone_value":
            return pulp.lpSum([i.value * (i.cap - total(i.id)) for i in d.items])
        if t.kind == "carry_over":
            return pulp.lpSum([balance(s) for s in range(n - 1)])
        if t.kind == "timing":
            return pulp.lpSum([i.weight * s * x[i.id][s] for i in d.items for s in range(1, n)])
        if t.kind == "changes":
            old = fb.current_plan(t)
            return pulp.lpSum([b.differs(x[i.id][s], old[i.id][s], i.cap) for i in d.items for s in range(n)])
        raise ValueError(f"no MILP expression for objective kind {t.kind!r}")

    terms = [(t.id, term(t)) for t in draft.objective]

    def decode() -> dict[str, Any]:
        return {"allocation": [{"item": i.id, "amounts": [round(v.value() or 0) for v in x[i.id]]} for i in d.items]}

    return b, terms, decode
