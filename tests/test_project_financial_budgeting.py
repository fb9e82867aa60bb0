"""Financial Budgeting: each rule kind's check on hand-built plans, the checker held against
the CP-SAT encoder on every plan of a small budget (rule by rule, and the objective
figures), the balance arithmetic, the subtasks' structure, answers naming unknown items
or malformed amounts, and malformed data."""

from __future__ import annotations

import itertools
import json
import random
from functools import cache

import pytest

from pbsolve.checkers.project import budget as fb
from pbsolve.checkers.project.budget import CHECKS, BudgetData, Item, Plan
from pbsolve.family import Draft, checker
from pbsolve.grading import grade
from pbsolve.models.project import budget as model
from pbsolve.params import NoParams, Params, make_rule, make_term
from pbsolve.schema import GenerationSpec, Instance
from tests.instances import subtask_instances
from tests.model_enumeration import enumerate_solutions, objective_figures, with_rule_on

T = fb.TASK_ID
SPEC = GenerationSpec(family="project", task=T, subtask="departmental", seed=0, size="tiny")

# Three items over two periods, caps 2: 9^3 = 729 plans, every one enumerable.
DATA = BudgetData(
    opening=1,
    budget=(2, 3),
    items=(
        Item(id="I1", name="Engineering", value=5, cap=2, weight=3),
        Item(id="I2", name="Sales", value=3, cap=2, weight=1),
        Item(id="I3", name="Legal", value=2, cap=2, weight=2),
    ),
)


def plan(**amounts: tuple[int, int]) -> Plan:
    return Plan({"I1": (2, 0), "I2": (1, 1), "I3": (0, 1)} | amounts)


# spend 3 then 2: balances 0 and 1; every base rule holds
OK_PLAN = plan()


def verdict(kind: str, p: Plan, params: Params | None = None) -> tuple[bool, str]:
    return CHECKS[kind](DATA, p, params or NoParams())


# (kind, params, a plan that keeps it, a plan that breaks it, words of the reason)
CASES = [
    ("funds", None, OK_PLAN, plan(I3=(1, 0)), "balance at the end of period 1 is -1"),
    ("item_caps", None, OK_PLAN, plan(I3=(2, 1)), "I3 receives 3 in total, above its cap 2"),
    ("min_funding", fb.MinFunding(item="I2", amount=2), OK_PLAN, plan(I2=(1, 0)), "below the minimum 2"),
    ("period_limit", fb.PeriodLimit(max=3), OK_PLAN, plan(I2=(2, 1)), "4 is spent in period 1"),
    ("item_period_cap", fb.ItemPeriodCap(item="I1", max=1), plan(I1=(1, 1)), OK_PLAN, "I1 receives 2 in period 1"),
    ("start_period", fb.StartPeriod(item="I3", period=2), OK_PLAN, plan(I3=(1, 0)), "before period 2"),
    ("spend_by", fb.SpendBy(item="I1", period=1), OK_PLAN, plan(I1=(1, 1)), "after period 1"),
    ("all_or_nothing", fb.AllOrNothing(items=["I1", "I3"]), plan(I3=(0, 0)), OK_PLAN, "either nothing or exactly 2"),
    ("dependency", fb.Dependency(item="I3", requires="I2"), OK_PLAN, plan(I2=(0, 0)), "which it requires"),
    ("exclusive", fb.Exclusive(items=("I2", "I3")), plan(I3=(0, 0)), OK_PLAN, "at most one may be"),
    ("ramp", fb.Ramp(item="I1", max_change=1), plan(I1=(1, 1)), OK_PLAN, "a change above 1"),
    ("group_cap", fb.GroupCap(items=["I2", "I3"], max=2), plan(I3=(0, 0)), OK_PLAN, "receive 3 together"),
    ("carry_cap", fb.CarryCap(max=0), OK_PLAN, plan(I1=(1, 0)), "1 is carried from period 1 into period 2"),
    (
        "spend_threshold",
        fb.SpendThreshold(item="I2", threshold=0, cap=0),
        plan(I2=(0, 1)),
        OK_PLAN,
        "after its cumulative amount passed 0 in period 1",
    ),
    ("spend_down", fb.SpendDown(period=1, min=3), OK_PLAN, plan(I1=(1, 1)), "2 is spent over periods 1 to 1"),
    ("contingency", fb.Contingency(amount=1), plan(I1=(1, 0)), OK_PLAN, "balance 0"),
    ("budget_cut", fb.BudgetCut(period=2, amount=1), OK_PLAN, plan(I3=(0, 2)), "is -1"),
    ("freeze", fb.Freeze(item="I2", period=2), plan(I2=(1, 0)), OK_PLAN, "when it is frozen"),
]


@pytest.mark.parametrize(("kind", "params", "good", "bad", "why"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_kind_passes_a_plan_that_keeps_it_and_fails_one_that_breaks_it_with_a_reason(
    kind, params, good, bad, why
):
    assert verdict(kind, good, params)[0]
    ok, reason = verdict(kind, bad, params)
    assert not ok and why in reason


def test_every_checked_kind_has_a_case_and_an_encoder():
    assert {c[0] for c in CASES} == set(CHECKS) == set(model.ENCODERS)


def test_balances_carry_unspent_money_from_period_to_period():
    assert fb.balances(DATA, OK_PLAN) == [0, 1]
    assert fb.balances(DATA, plan(I1=(0, 0), I2=(0, 0), I3=(0, 0))) == [3, 6]


RULES = [make_rule(kind, "basic", params or NoParams(), f"R{k}") for k, (kind, params, *_) in enumerate(CASES, 1)]
OBJECTIVE = [
    make_term("forgone_value", "forgone_value"),
    make_term("carry_over", "carry_over"),
    make_term("timing", "timing"),
    make_term("changes", "changes", fb.CurrentAmounts(existing={"I1": [2, 0], "I2": [1, 1], "I3": [0, 1]})),
]


def all_plans() -> list[Plan]:
    rows = list(itertools.product(range(3), repeat=2))
    return [Plan(dict(zip(("I1", "I2", "I3"), c))) for c in itertools.product(rows, repeat=3)]


def key(p: Plan) -> tuple[int, ...]:
    return tuple(a for i in DATA.items for a in p.amounts[i.id])


@cache
def model_accepts(rule_id: str) -> frozenset[tuple[int, ...]]:
    """Every plan the CP-SAT model accepts with only this rule on, enumerated by the solver."""
    rule = next(r for r in RULES if r.id == rule_id)
    draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=[rule], objective=[])
    sm = with_rule_on(model.build, draft, rule_id)
    return enumerate_solutions(sm)


@pytest.mark.parametrize("rule", RULES, ids=[r.kind for r in RULES])
def test_model_and_checker_accept_the_same_plans_rule_by_rule(rule):
    tc = checker("project").task_checker(T)
    plans = all_plans()
    accepted = {key(p) for p in plans if tc.evaluate(DATA, [rule], [], p)[0][rule.id][0]}
    assert accepted == set(model_accepts(rule.id))
    assert 0 < len(accepted) < len(plans)  # each rule decides something on this budget


def test_model_and_checker_compute_the_same_objective_figures():
    tc = checker("project").task_checker(T)
    draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=[], objective=OBJECTIVE)
    for p in all_plans()[::23]:
        _, values = tc.evaluate(DATA, [], OBJECTIVE, p)
        assert values == objective_figures(model.build(draft), key(p))


def test_the_objective_figures_of_a_hand_built_plan():
    _, values = checker("project").task_checker(T).evaluate(DATA, [], OBJECTIVE, OK_PLAN)
    # forgone: only I3 misses a unit of its cap (value 2 x 1); carry: the balance after period 1 is 0;
    # timing: period-2 units x weight: I2 1 x 1 + I3 1 x 2
    assert values == {"forgone_value": 2, "carry_over": 0, "timing": 3, "changes": 0}


# -- answers ------------------------------------------------------------------------------
@cache
def default_instance() -> Instance:
    return subtask_instances(T, "departmental", n=1, size="default")[0]


def answer_with(rows: list[dict]) -> str:
    return json.dumps({**dict(default_instance().reference), "allocation": rows})


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda rows: [{**rows[0], "item": "Z9"}, *rows[1:]], "unknown item 'Z9'"),
        (lambda rows: rows[1:], "missing from the allocation"),
        (lambda rows: [*rows, rows[0]], "appears more than once"),
        (lambda rows: [{**rows[0], "amounts": rows[0]["amounts"][1:]}, *rows[1:]], "needs 'amounts'"),
        (lambda rows: [{**rows[0], "amounts": ["1", *rows[0]["amounts"][1:]]}, *rows[1:]], "not a whole number"),
        (lambda rows: [{**rows[0], "amounts": [True, *rows[0]["amounts"][1:]]}, *rows[1:]], "not a whole number"),
        (lambda rows: [{**rows[0], "amounts": [-1, *rows[0]["amounts"][1:]]}, *rows[1:]], "outside 0 to its cap"),
        (lambda rows: [{**rows[0], "amounts": [999, *rows[0]["amounts"][1:]]}, *rows[1:]], "outside 0 to its cap"),
    ],
)
def test_a_malformed_allocation_fails_the_format_item_with_a_reason(change, why):
    inst = default_instance()
    g = grade(inst, answer_with(change(list(inst.reference["allocation"]))))
    fmt = next(i for i in g.items if i.id == "C1")
    assert not fmt.passed and why in fmt.reason
    assert not g.all_pass


def test_the_reference_passes_and_item_ids_are_read_case_insensitively():
    inst = default_instance()
    assert grade(inst, json.dumps(inst.reference)).all_pass
    rows = [{**r, "item": r["item"].lower()} for r in inst.reference["allocation"]]
    assert grade(inst, answer_with(rows)).all_pass


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"budget": []}, "at least one period"),
        ({"items": []}, "at least one item"),
        ({"items": [{"id": "I1", "name": "a", "value": 1, "cap": 1}] * 2}, "repeated item id"),
        ({"items": [{"id": "P1", "name": "a", "value": 1, "cap": 1}]}, "differ from period ids"),
        ({"items": [{"id": "I1", "name": "a", "value": 0, "cap": 1}]}, "greater than 0"),
        ({"budget": [-1, 2]}, "greater than or equal to 0"),
    ],
)
def test_malformed_budget_data_is_a_clear_error(change, why):
    with pytest.raises(ValueError, match=why):
        BudgetData.model_validate({**DATA.model_dump(mode="json"), **change})


# -- subtasks --------------------------------------------------------------------------
@pytest.mark.parametrize("subtask", [s.id for s in model.TASK.subtasks])
def test_each_subtask_carries_its_structure(subtask):
    spec = GenerationSpec(family="project", task=T, subtask=subtask, seed=3, size="default")
    d = model.draft(spec, random.Random(3))
    data = BudgetData.model_validate(d.data)
    kinds = {r.kind for r in d.rules}
    assert set(model.FORCED[subtask]) <= kinds
    assert {"funds", "item_caps"} <= kinds
    assert [t.kind for t in d.objective] == list(model.OBJECTIVES[subtask])
    assert data.unit == model.NAMES[subtask][0] and data.period_word == model.NAMES[subtask][1]
    if subtask in model.ENDOWED:
        assert data.opening >= 1


def test_values_and_urgency_weights_are_distinct_in_sampled_budgets():
    for seed in range(5):
        spec = GenerationSpec(family="project", task=T, subtask="marketing", seed=seed, size="default")
        data = BudgetData.model_validate(model.draft(spec, random.Random(seed)).data)
        for field in ("value", "weight"):
            figures = [getattr(i, field) for i in data.items]
            assert len(set(figures)) == len(figures)


def test_the_baseline_funds_the_most_valuable_items_first_within_the_money_at_hand():
    inst = default_instance()
    tc = checker("project").task_checker(T)
    d = tc.data(inst)
    p = tc.baseline_plan(d, inst)
    assert all(b >= 0 for b in fb.balances(d, p))
    assert all(fb.total(p, i.id) <= i.cap for i in d.items)
