"""Procurement's stateful rules: stock carried over periods with lead times, first-in
first-out shelf life, and robustness to one late delivery.

The checker simulates each rule period by period (lots, backlog, arrivals); the CP-SAT
model encodes each on its own with linear rows. These specifications pin the
simulations on hand-built plans and hold them against the model (and against the
closed-form condition the model uses) on random plans.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from pbsolve.checkers.allocation.data import Item, Offer, ProcurementData, Supplier
from pbsolve.checkers.allocation.procurement import CHECKS, objective_value, stock_levels
from pbsolve.checkers.allocation.rule_params import RULE_PARAMS
from pbsolve.family import Draft, family
from pbsolve.params import NoParams, parse
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule

SPEC = GenerationSpec(family="allocation", task="procurement_planning", subtask="restaurant_supplies", seed=0, size="tiny")


def flour_data(demand=(4, 6, 3, 5), initial=5) -> ProcurementData:
    return ProcurementData(
        periods=("W1", "W2", "W3", "W4"),
        items=(Item(id="Flour", unit="kg", initial_stock=initial, holding_cost=1, demand=tuple(demand)),),
        suppliers=(
            Supplier(id="Apex", lead_time=1, capacity=20, fixed_cost=10, offers=(Offer(item="Flour", price=2),)),
            Supplier(id="Borealis", lead_time=0, capacity=10, fixed_cost=0, offers=(Offer(item="Flour", price=3),)),
        ),
    )


def rule(kind: str, **params) -> Rule:
    return Rule(id="R1", kind=kind, tier="stateful", params=params)


def verdict(d: ProcurementData, plan: dict, kind: str, **params) -> tuple[bool, str]:
    return CHECKS[kind](d, plan, RULE_PARAMS["procurement_planning"][kind](**params))


def model_accepts(d: ProcurementData, plan: dict, rules: list[Rule]) -> bool:
    draft = Draft(spec=SPEC, data=d.model_dump(mode="json"), rules=rules, objective=[ObjectiveTerm(id="total_cost", kind="total_cost")])
    sm = family("allocation").build_model(draft)
    for v in sm.answer_ints:
        s, i, t = v.name[2:-1].split(",")
        sm.model.add(v == plan.get((s, i, int(t)), 0))
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    return solver.solve(sm.model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


# -- stock carried over, with lead times ----------------------------------------------
def test_an_order_arrives_after_its_lead_time_and_stock_carries_over():
    d = flour_data()
    plan = {("Apex", "Flour", 0): 10}  # ordered in W1, arrives in W2
    assert stock_levels(d, plan)["Flour"] == [1, 5, 2, -3]
    ok, why = verdict(d, plan, "inventory_balance")
    assert not ok and "3 short in W4" in why
    plan[("Borealis", "Flour", 3)] = 3  # lead time 0: in time for W4
    assert verdict(d, plan, "inventory_balance") == (True, "holds")
    assert model_accepts(d, plan, [rule("inventory_balance")])
    assert not model_accepts(d, {("Apex", "Flour", 0): 10}, [rule("inventory_balance")])


def test_an_order_that_would_arrive_too_late_for_its_demand_does_not_cover_it():
    d = flour_data()
    plan = {("Apex", "Flour", 0): 4, ("Apex", "Flour", 1): 6, ("Borealis", "Flour", 3): 3}  # the W2 order lands in W3
    assert stock_levels(d, plan)["Flour"] == [1, -1, 2, 0]
    ok, why = verdict(d, plan, "inventory_balance")
    assert not ok and "1 short in W2" in why


def test_the_holding_cost_counts_every_unit_left_at_the_end_of_each_week():
    d = flour_data()
    plan = {("Apex", "Flour", 0): 10, ("Borealis", "Flour", 3): 3}
    cost = objective_value(d, plan, ObjectiveTerm(id="c", kind="total_cost"), NoParams())
    purchase, fixed, holding = 10 * 2 + 3 * 3, 10, 1 + 5 + 2 + 0
    assert cost == purchase + fixed + holding


# -- first in, first out shelf life ----------------------------------------------------
def test_shelf_life_uses_the_oldest_units_first():
    d = flour_data()
    plan = {("Apex", "Flour", 0): 10, ("Borealis", "Flour", 3): 3}
    ok, why = verdict(d, plan, "shelf_life", item="Flour", periods=2)
    assert not ok and "received in W2 are still in stock at the end of W3" in why
    assert verdict(d, plan, "shelf_life", item="Flour", periods=3) == (True, "holds")
    assert not model_accepts(d, plan, [rule("shelf_life", item="Flour", periods=2)])
    assert model_accepts(d, plan, [rule("shelf_life", item="Flour", periods=3)])


def test_the_initial_stock_counts_as_received_in_the_first_week():
    d = flour_data(demand=(1, 1, 1, 1), initial=3)
    ok, why = verdict(d, {}, "shelf_life", item="Flour", periods=2)
    assert not ok and "received in W1 are still in stock at the end of W2" in why
    assert verdict(d, {}, "shelf_life", item="Flour", periods=4) == (True, "holds")


def _closed_form(d: ProcurementData, plan: dict, k: int) -> bool:
    """What the model posts: stock at the end of t is at most what arrived in the last
    k - 1 periods up to t (the initial stock counting as arriving in the first)."""
    item = d.items[0]
    arrivals = [0] * len(d.periods)
    for (s, _, t), q in plan.items():
        arrivals[d.arrival(s, t)] += q
    arrivals[0] += item.initial_stock
    for t, level in enumerate(stock_levels(d, plan)[item.id]):
        if level > sum(arrivals[max(0, t - k + 2) : t + 1]):
            return False
    return True


plans = st.dictionaries(
    st.sampled_from([("Apex", "Flour", 0), ("Apex", "Flour", 1), ("Apex", "Flour", 2), ("Borealis", "Flour", 0),
                     ("Borealis", "Flour", 1), ("Borealis", "Flour", 2), ("Borealis", "Flour", 3)]),
    st.integers(1, 10),
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans, demand=st.tuples(*[st.integers(0, 8)] * 4), initial=st.integers(0, 12), k=st.integers(1, 4))
def test_the_fifo_simulation_equals_the_closed_form_on_random_plans(plan, demand, initial, k):
    d = flour_data(demand, initial)
    assert verdict(d, plan, "shelf_life", item="Flour", periods=k)[0] == _closed_form(d, plan, k)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans, demand=st.tuples(*[st.integers(0, 8)] * 4), initial=st.integers(0, 12), k=st.integers(1, 4))
def test_the_model_agrees_with_the_simulations_on_random_plans(plan, demand, initial, k):
    d = flour_data(demand, initial)
    for r in (rule("shelf_life", item="Flour", periods=k), rule("inventory_balance"), rule("delay_robust"),
              rule("storage_cap", max=6), rule("safety_stock", item="Flour", min=1), rule("stock_target", item="Flour", period="W2", min=2)):  # fmt: skip
        assert model_accepts(d, plan, [r]) == CHECKS[r.kind](d, plan, parse(RULE_PARAMS["procurement_planning"], r))[0], (r.kind, plan)


# -- one delivery a week late -----------------------------------------------------------
def test_delay_robustness_simulates_each_late_delivery_on_its_own():
    d = flour_data()
    plan = {("Apex", "Flour", 0): 10, ("Borealis", "Flour", 3): 3}
    ok, why = verdict(d, plan, "delay_robust")
    assert not ok and "came a period late" in why and "W2" in why
    safe = {("Borealis", "Flour", 0): 10, ("Borealis", "Flour", 1): 9, ("Borealis", "Flour", 2): 3}
    assert stock_levels(d, safe)["Flour"] == [11, 14, 14, 9]
    assert verdict(d, safe, "delay_robust") == (True, "holds")
    assert model_accepts(d, safe, [rule("delay_robust")])
    assert not model_accepts(d, plan, [rule("delay_robust")])


def test_a_delivery_due_in_the_last_week_that_comes_late_never_arrives():
    d = flour_data(demand=(0, 0, 0, 3), initial=0)
    plan = {("Borealis", "Flour", 3): 3}
    assert verdict(d, plan, "inventory_balance")[0]
    assert not verdict(d, plan, "delay_robust")[0]
    assert verdict(d, {("Borealis", "Flour", 2): 3, ("Borealis", "Flour", 3): 3}, "delay_robust")[0]


def test_generated_procurement_instances_state_the_stock_rules_in_words():
    from pbsolve.generate import GenerateOptions, build_instance

    rnd = random.Random(0)
    for index in rnd.sample(range(40), 6):
        inst = build_instance(5, index, GenerateOptions(task="procurement_planning", size="small")).instance
        if inst is None:
            continue
        assert "**How stock works:**" in inst.prompt
        assert any(r.kind == "inventory_balance" and r.tier == "stateful" for r in inst.rules)
