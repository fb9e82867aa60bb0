"""Production Planning (capacitated lot sizing): each rule kind's check on hand-built
plans, the checker held against the CP-SAT encoder on every plan of a small plant (rule by
rule, and every objective figure), the subtasks' structure, answers naming unknown lines
or products, and malformed plant data."""

from __future__ import annotations

import itertools
import json
import random
from functools import cache

import pytest

from pbsolve.checkers.project import production as pp
from pbsolve.checkers.project.production import CHECKS, Line, Order, Plan, Product, ProductionData
from pbsolve.family import Draft, checker
from pbsolve.grading import grade
from pbsolve.models.project import production as model
from pbsolve.params import NoParams, Params, make_rule, make_term
from pbsolve.schema import GenerationSpec, Instance
from tests.instances import subtask_instances
from tests.model_enumeration import enumerate_solutions, objective_figures, with_rule_on

T = pp.TASK_ID
SPEC = GenerationSpec(family="project", task=T, subtask="metal_parts", seed=0, size="tiny")

# Two lines, two products, two periods, at most 2 lots a run: 5^4 = 625 plans, all enumerable.
DATA = ProductionData(
    periods=2,
    max_lots=2,
    products=(
        Product(id="P1", name="Flanges", hold=3, penalty=2, initial=1, material=2),
        Product(id="P2", name="Shafts", hold=5, penalty=4, initial=0, material=1),
    ),
    lines=(
        Line(id="L1", name="CNC 1", capacity=2, makes=("P1", "P2"), setup={"P1": 10, "P2": 12}, cost=1, changeover=7),
        Line(id="L2", name="Lathe", capacity=1, makes=("P2",), setup={"P1": 20, "P2": 15}, cost=2, changeover=4),
    ),
    orders=(
        Order(id="O1", product="P1", period=1, lots=1),
        Order(id="O2", product="P2", period=1, lots=1),
        Order(id="O3", product="P1", period=2, lots=2),
        Order(id="O4", product="P2", period=2, lots=1),
    ),
    material_initial=2,
    arrivals=(1, 3),
)
# P2 on the lathe in both periods, P1 on CNC 1 in period 2: every base rule holds, no stock left
OK_RUNS = {("L2", 1): ("P2", 1), ("L1", 2): ("P1", 2), ("L2", 2): ("P2", 1)}
OK_PLAN = Plan(OK_RUNS)


def plan(**cells: tuple[str, int] | None) -> Plan:
    """OK_PLAN with cells changed: ``L1_2=("P1", 1)`` sets a run, ``L2_1=None`` idles it."""
    runs = dict(OK_RUNS)
    for key, run in cells.items():
        line, t = key.split("_")
        if run is None:
            runs.pop((line, int(t)), None)
        else:
            runs[line, int(t)] = run
    return Plan(runs)


def verdict(kind: str, p: Plan, params: Params | None = None) -> tuple[bool, str]:
    return CHECKS[kind](DATA, p, params or NoParams())


SWITCH = plan(L1_1=("P2", 1))  # CNC 1 makes P2 then P1: a changeover in period 2

# (kind, params, a plan that keeps it, a plan that breaks it, words of the reason)
CASES = [
    ("line_capability", None, OK_PLAN, plan(L2_1=("P1", 1)), "L2 makes P1 in period 1, but it cannot make P1"),
    ("line_capacity", None, OK_PLAN, plan(L2_2=("P2", 2)), "L2 makes 2 lots in period 2 (capacity 1)"),
    ("no_backlog", None, OK_PLAN, plan(L2_1=None), "P2 is 1 lots short at the end of period 1"),
    (
        "line_downtime",
        pp.LineDowntime(line="L1", first=1, last=1),
        OK_PLAN,
        plan(L1_1=("P1", 1)),
        "during its downtime",
    ),
    ("storage_cap", pp.StorageCap(max=0), OK_PLAN, plan(L1_1=("P1", 1)), "1 lots are in stock at the end of period 1"),
    ("min_lot", pp.MinLot(product="P1", lots=2), OK_PLAN, plan(L1_2=("P1", 1)), "a run makes at least 2"),
    ("max_changeovers", pp.MaxChangeovers(max=0), OK_PLAN, SWITCH, "L1 has 1 changeovers"),
    ("forbidden_succession", pp.ForbiddenSuccession(first="P2", then="P1"), OK_PLAN, SWITCH, "right after P2"),
    ("max_runs", pp.MaxRuns(product="P2", max=2), OK_PLAN, SWITCH, "P2 is made in 3 runs (at most 2)"),
    ("line_balance", pp.LineBalance(max=1), OK_PLAN, plan(L1_1=("P1", 2)), "L1 makes 4 lots and L2 2: 2 apart"),
    ("material_supply", None, OK_PLAN, plan(L1_1=("P1", 2)), "period 1 uses 2 units of raw material more"),
    ("safety_stock", pp.SafetyStock(product="P1", first=1, min=0), OK_PLAN, plan(L1_2=None), "P1 has -2 lots"),
    ("capacity_reserve", pp.CapacityReserve(lines=["L1"]), plan(L1_2=("P1", 1)), OK_PLAN, "its 2 lots would not fit"),
]


@pytest.mark.parametrize(("kind", "params", "keeps", "breaks", "why"), CASES, ids=[c[0] for c in CASES])
def test_each_check_keeps_a_good_plan_and_names_why_a_bad_one_fails(kind, params, keeps, breaks, why):
    ok, reason = verdict(kind, keeps, params)
    assert ok, reason
    ok, reason = verdict(kind, breaks, params)
    assert not ok
    assert why in reason


def test_every_checked_kind_has_a_case():
    assert {c[0] for c in CASES} == set(CHECKS)


def test_an_idle_period_between_two_products_is_no_changeover():
    gap = Plan({("L1", 1): ("P2", 1), ("L1", 3): ("P1", 1)})
    data = pp.replaced(DATA, periods=3, arrivals=(1, 3, 0))
    assert pp.changeovers(data, gap, "L1") == []
    assert pp.changeovers(data, Plan({("L1", 2): ("P2", 1), ("L1", 3): ("P1", 1)}), "L1") == [3]


def test_the_cost_adds_setups_lots_changeovers_and_held_stock():
    # SWITCH: setups 12 + 10 (L1) + 15 + 15 (L2); lots 1 + 2 (L1, 1 each) + 2 x 2 (L2);
    # one changeover on L1 (7); P2 holds 1 lot at the end of periods 1 and 2 (5 each)
    assert pp.cost(DATA, SWITCH) == 52 + 3 + 4 + 7 + 10
    assert pp.backlog(DATA, plan(L2_1=None, L2_2=None)) == 4 * (1 + 2)


# -- the checker against the CP-SAT encoder, plan by plan --------------------------------
RULES = [make_rule(kind, "basic", params or NoParams(), f"R{k}") for k, (kind, params, *_rest) in enumerate(CASES, 1)]
OBJECTIVE = [
    make_term("backlog", "backlog"),
    make_term("cost", "cost"),
    make_term("changes", "changes", pp.CurrentRuns(existing=[("L1", 1, "P2", 1), ("L2", 2, "P2", 1)])),
]


def all_plans(d: ProductionData = DATA) -> list[Plan]:
    cells = [(x.id, t) for x in d.lines for t in range(1, d.periods + 1)]
    options = [None, *[(p.id, q) for p in d.products for q in range(1, d.max_lots + 1)]]
    return [
        Plan({c: o for c, o in zip(cells, combo) if o is not None})
        for combo in itertools.product(options, repeat=len(cells))
    ]


def answer_values(p: Plan, d: ProductionData = DATA) -> tuple[int, ...]:
    """The plan as the model's answer integers (q[line, product, period], in build order)."""
    out = []
    for x in d.lines:
        for t in range(1, d.periods + 1):
            run = p.runs.get((x.id, t))
            out += [run[1] if run and run[0] == prod.id else 0 for prod in d.products]
    return tuple(out)


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
    accepted = {answer_values(p) for p in plans if tc.evaluate(DATA, [rule], [], p)[0][rule.id][0]}
    assert accepted == set(model_accepts(rule.id))
    assert 0 < len(accepted) < len(plans)  # each rule decides something on this plant


def test_model_and_checker_compute_the_same_objective_figures():
    tc = checker("project").task_checker(T)
    draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=[], objective=OBJECTIVE)
    for p in all_plans()[::11]:
        _, values = tc.evaluate(DATA, [], OBJECTIVE, p)
        assert values == objective_figures(model.build(draft), answer_values(p))


# -- answers ------------------------------------------------------------------------------
@cache
def default_instance() -> Instance:
    return subtask_instances(T, "bakery", n=1, size="default")[0]


def answer_with(rows: list[dict]) -> str:
    return json.dumps({**dict(default_instance().reference), "production": rows})


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda rows: [{**rows[0], "line": "L9"}, *rows[1:]], "unknown line 'L9'"),
        (lambda rows: [{**rows[0], "product": "Pizza"}, *rows[1:]], "unknown product 'Pizza'"),
        (lambda rows: [*rows, rows[0]], "more than once"),
        (lambda rows: [{**rows[0], "lots": "2"}, *rows[1:]], "integer 'lots'"),
        (lambda rows: [{**rows[0], "lots": True}, *rows[1:]], "integer 'lots'"),
        (lambda rows: [{**rows[0], "lots": 99}, *rows[1:]], "integer 'lots' from 0"),
        (lambda rows: [{**rows[0], "period": 0}, *rows[1:]], "integer 'period' from 1"),
        (lambda rows: [{k: v for k, v in rows[0].items() if k != "line"}, *rows[1:]], "string fields"),
    ],
)
def test_a_malformed_production_plan_fails_the_format_item_with_a_reason(change, why):
    inst = default_instance()
    g = grade(inst, answer_with(change(list(inst.reference["production"]))))
    fmt = next(i for i in g.items if i.id == "C1")
    assert not fmt.passed and why in fmt.reason
    assert not g.all_pass


def test_the_reference_passes_and_a_zero_lot_row_counts_as_idle():
    inst = default_instance()
    assert grade(inst, json.dumps(inst.reference)).all_pass
    rows = list(inst.reference["production"])
    busy = {(r["line"], r["period"]) for r in rows}
    idle = next(
        (x, t)
        for x in ("L1", "L2")
        for t in range(1, ProductionData.model_validate(inst.data).periods + 1)
        if (x, t) not in busy
    )
    extra = {"line": idle[0], "period": idle[1], "product": rows[0]["product"], "lots": 0}
    assert grade(inst, answer_with([*rows, extra])).all_pass


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"orders": [{"id": "O1", "product": "P9", "period": 1, "lots": 1}]}, "unknown product P9"),
        ({"orders": [{"id": "O1", "product": "P1", "period": 5, "lots": 1}]}, "after the horizon"),
        ({"arrivals": [1, 2, 3]}, "3 material arrivals for 2 periods"),
        ({"max_lots": 1}, "above max_lots"),
        (
            {"products": [{"id": "P1", "name": "a", "hold": 1}, {"id": "P1", "name": "b", "hold": 1}]},
            "repeated product",
        ),
    ],
)
def test_malformed_plant_data_is_a_clear_error(change, why):
    with pytest.raises(ValueError, match=why):
        ProductionData.model_validate({**DATA.model_dump(mode="json"), **change})


# -- subtasks --------------------------------------------------------------------------
@pytest.mark.parametrize("subtask", [s.id for s in model.TASK.subtasks])
def test_each_subtask_carries_its_structure(subtask):
    spec = GenerationSpec(family="project", task=T, subtask=subtask, seed=3, size="default")
    d = model.draft(spec, random.Random(3))
    data = ProductionData.model_validate(d.data)
    kinds = {r.kind for r in d.rules}
    assert set(model.FORCED[subtask]) <= kinds | {"no_backlog"}
    assert {"line_capability", "line_capacity"} <= kinds
    assert [t.kind for t in d.objective] == (["cost"] if "no_backlog" in kinds else ["backlog", "cost"])
    assert bool(data.arrivals) == ("material_supply" in kinds)
    if subtask == "seasonal":
        assert all(o.period > data.periods // 2 for o in data.orders)


def test_sampled_costs_make_every_shift_of_a_lot_change_the_cost():
    """Per-lot costs of the lines differ by less than any holding cost, and holding costs
    are distinct: moving a lot to another line or period never leaves the cost equal."""
    for seed in range(6):
        spec = GenerationSpec(family="project", task=T, subtask="make_to_order", seed=seed, size="large")
        data = ProductionData.model_validate(model.draft(spec, random.Random(seed)).data)
        costs = [x.cost for x in data.lines]
        holds = [p.hold for p in data.products]
        assert len(set(costs)) == len(costs) and len(set(holds)) == len(holds)
        assert max(costs) - min(costs) < min(holds)
