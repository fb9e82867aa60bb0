"""Power Dispatch Planning (unit commitment): each rule kind's check on hand-built plans,
the derived figures (shed, curtailed, battery levels, start-ups), the checker held against
the CP-SAT encoder on every plan of a small system, the subtasks' structure, answers
naming unknown units or breaking the battery's physics, and malformed data."""

from __future__ import annotations

import itertools
import json
from functools import cache

import pytest

from pbsolve.checkers.project import power as pw
from pbsolve.checkers.project.power import CHECKS, Battery, Plan, PowerData, Unit
from pbsolve.family import Draft, checker
from pbsolve.grading import grade
from pbsolve.models.project import power as model
from pbsolve.params import NoParams, Params, make_rule, make_term
from pbsolve.schema import GenerationSpec, Instance
from tests.instances import subtask_instances
from tests.model_enumeration import enumerate_solutions, objective_figures

T = pw.TASK_ID
SPEC = GenerationSpec(family="project", task=T, subtask="island_grid", seed=0, size="tiny")

# Two units, an empty battery of 1 MWh and wind over 3 hours: 27 x 64 output rows x
# battery flow sequences, every plan enumerable.
DATA = PowerData(
    hours=3,
    demand=(3, 4, 2),
    critical=(1, 3, 1),
    renewable=(1, 0, 2),
    renewable_name="wind farm",
    units=(
        Unit(id="U1", name="Diesel 1", pmin=2, pmax=2, cost=30, startup=50, ramp=2, min_up=2, min_down=2),
        Unit(id="U2", name="Diesel 2", pmin=1, pmax=3, cost=40, startup=20, ramp=1, min_up=2, min_down=2),
    ),
    battery=Battery(capacity=1, initial=0, charge=1, discharge=1),
)


def plan(u1: tuple[int, ...] = (2, 2, 0), u2: tuple[int, ...] = (0, 2, 1), flows: tuple[int, ...] = (0, 0, -1)) -> Plan:
    return Plan({"U1": u1, "U2": u2}, flows)


# U1 runs hours 0-1, U2 hours 1-2, the battery charges in hour 2 from the wind
OK_PLAN = plan()


def verdict(kind: str, p: Plan, params: Params | None = None, data: PowerData = DATA) -> tuple[bool, str]:
    return CHECKS[kind](data, p, params or NoParams())


# (kind, params, a plan that keeps it, a plan that breaks it, words of the reason)
CASES = [
    ("power_balance", None, OK_PLAN, plan(u2=(2, 2, 1)), "hour 0: units and battery supply 4 MW, above the demand"),
    ("output_limits", None, OK_PLAN, plan(u1=(1, 2, 0)), "U1 runs at 1 MW in hour 0, below its minimum of 2"),
    ("must_run", pw.MustRun(units=["U2"]), plan(u2=(1, 2, 1)), OK_PLAN, "must-run unit U2 is off in hour 0"),
    ("critical_load", None, OK_PLAN, plan(u2=(0, 0, 1)), "hour 1: 2 MW served, below the critical load of 3"),
    ("unit_outage", pw.UnitOutage(unit="U1", first=2, last=2), OK_PLAN, plan(u1=(2, 2, 2)), "U1 runs in hour 2"),
    ("spinning_reserve", pw.SpinningReserve(mw=1), plan(u2=(1, 1, 1)), OK_PLAN, "hour 0: 0 MW spinning reserve"),
    ("fuel_limit", pw.FuelLimit(unit="U1", mwh=4), OK_PLAN, plan(u1=(2, 2, 2)), "U1 produces 6 MWh"),
    ("ramp_limits", None, OK_PLAN, plan(u2=(0, 3, 1)), "U2 changes from 3 to 1 MW in hour 2 (ramp limit 1 MW)"),
    ("min_up_time", None, OK_PLAN, plan(u2=(0, 0, 1)), "U2 starts in hour 2"),  # the horizon ends its run: holds
    ("min_down_time", None, OK_PLAN, plan(u2=(1, 0, 1)), "U2 stops in hour 1 and runs in hour 2"),
    ("max_starts", pw.MaxStarts(unit="U2", max=1), OK_PLAN, plan(u2=(1, 0, 1)), "U2 starts up 2 times (at most 1)"),
    (
        "curtailment_cap",
        pw.CurtailmentCap(mwh=1),
        OK_PLAN,
        plan(u2=(0, 2, 2), flows=(0, 0, 0)),
        "2 MWh of wind farm curtailed",
    ),
    ("battery_floor", pw.BatteryFloor(mwh=1), plan(flows=(0, 0, 0)), OK_PLAN, "holds 0 MWh at the end of hour 0"),
    ("battery_end", pw.BatteryEnd(mwh=1), OK_PLAN, plan(flows=(-1, 1, 0)), "ends the day with 0 MWh"),
    ("trip_reserve", None, plan(u1=(0, 0, 0), u2=(0, 0, 0), flows=(0, 0, 0)), OK_PLAN, "if U1 tripped in hour 0"),
    ("derate", pw.Derate(unit="U2", first=1, last=2, mw=1), plan(u2=(0, 1, 1)), OK_PLAN, "U2 runs at 2 MW in hour 1"),
]
CASES[8] = ("min_up_time", None, OK_PLAN, plan(u2=(1, 0, 0)), "U2 starts in hour 0 and is off in hour 1")
CASES[12] = (
    "battery_floor",
    pw.BatteryFloor(mwh=1),
    plan(flows=(-1, 0, 0)),
    OK_PLAN,
    "holds 0 MWh at the end of hour 0",
)


@pytest.mark.parametrize(("kind", "params", "keeps", "breaks", "why"), CASES, ids=[c[0] for c in CASES])
def test_each_check_keeps_a_good_plan_and_names_why_a_bad_one_fails(kind, params, keeps, breaks, why):
    ok, reason = verdict(kind, keeps, params)
    assert ok, reason
    ok, reason = verdict(kind, breaks, params)
    assert not ok
    assert why in reason, reason


def test_every_checked_kind_has_a_case():
    assert {c[0] for c in CASES} == set(CHECKS)


def test_renewables_fill_the_demand_after_units_and_battery_and_the_rest_is_shed_or_curtailed():
    p = plan(u1=(0, 2, 0), u2=(0, 1, 0), flows=(-1, 0, 1))
    # hour 0: the battery charges 1 MW, so 3 + 1 MW are wanted: 1 of wind used, 3 MW shed;
    # hour 1: 3 MW of units, 1 shed; hour 2: 1 MW from the battery, 1 of wind used, 1 curtailed
    assert [pw.renewable_used(DATA, p, h) for h in range(3)] == [1, 0, 1]
    assert [pw.shed(DATA, p, h) for h in range(3)] == [3, 1, 0]
    assert [pw.curtailed(DATA, p, h) for h in range(3)] == [0, 0, 1]
    assert pw.levels(DATA, p) == [1, 1, 0]
    assert pw.starts(p, "U1") == [1] and pw.stops(p, "U1") == [2]
    assert pw.total_cost(DATA, p) == 30 * 2 + 50 + 40 * 1 + 20


# -- the checker against the CP-SAT encoder, plan by plan --------------------------------
RULES = [
    make_rule("power_balance", "basic", NoParams(), "R1"),
    make_rule("output_limits", "basic", NoParams(), "R2"),
    make_rule("must_run", "basic", pw.MustRun(units=["U2"]), "R3"),
    make_rule("critical_load", "basic", NoParams(), "R4"),
    make_rule("unit_outage", "basic", pw.UnitOutage(unit="U2", first=0, last=1), "R5"),
    make_rule("spinning_reserve", "basic", pw.SpinningReserve(mw=1), "R6"),
    make_rule("fuel_limit", "stateful", pw.FuelLimit(unit="U2", mwh=4), "R7"),
    make_rule("ramp_limits", "medium", NoParams(), "R8"),
    make_rule("min_up_time", "medium", NoParams(), "R9"),
    make_rule("min_down_time", "medium", NoParams(), "R10"),
    make_rule("max_starts", "medium", pw.MaxStarts(unit="U2", max=1), "R11"),
    make_rule("curtailment_cap", "medium", pw.CurtailmentCap(mwh=1), "R12"),
    make_rule("battery_floor", "stateful", pw.BatteryFloor(mwh=1), "R13"),
    make_rule("battery_end", "stateful", pw.BatteryEnd(mwh=1), "R14"),
    make_rule("trip_reserve", "hard", NoParams(), "R15"),
    make_rule("derate", "hard", pw.Derate(unit="U2", first=1, last=2, mw=1), "R16"),
]
OBJECTIVE = [make_term(k, k) for k in ("unserved", "cost", "battery_reserve")]


def _key(p: Plan) -> tuple[int, ...]:
    return (*p.output["U1"], *p.output["U2"], *p.battery)


# three of the seven possible battery flow sequences (to keep the enumeration short): each
# battery rule keeps some of them and breaks others
FLOWS = [(0, 0, -1), (-1, 0, 0), (-1, 1, 0)]


@cache
def all_plans() -> list[Plan]:
    flows = [f for f in FLOWS if not pw.battery_ok(DATA, f)]
    rows = {u.id: list(itertools.product(range(u.pmax + 1), repeat=3)) for u in DATA.units}
    return [Plan({"U1": a, "U2": b}, f) for a in rows["U1"] for b in rows["U2"] for f in flows]


def model_accepts(rule_id: str) -> frozenset[tuple[int, ...]]:
    rules = [r for r in RULES if r.id == rule_id]
    sm = model.build(Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=rules, objective=[]))
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    sm.model.add_allowed_assignments(sm.answer_ints[-3:], FLOWS)  # the battery's flows come last
    return enumerate_solutions(sm)


@pytest.mark.parametrize("rule", RULES, ids=[r.kind for r in RULES])
def test_model_and_checker_accept_the_same_plans_rule_by_rule(rule):
    tc = checker("project").task_checker(T)
    accepted = set()
    for p in all_plans():
        verdicts, _ = tc.evaluate(DATA, [rule], [], p)
        if verdicts[rule.id][0]:
            accepted.add(_key(p))
    assert accepted == set(model_accepts(rule.id))
    assert 0 < len(accepted) < len(all_plans())  # each rule decides something on this system


def test_model_and_checker_compute_the_same_objective_figures():
    tc = checker("project").task_checker(T)
    draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=[], objective=OBJECTIVE)
    for p in all_plans()[::97]:
        _, values = tc.evaluate(DATA, [], OBJECTIVE, p)
        assert values == objective_figures(model.build(draft), _key(p))


# -- answers ------------------------------------------------------------------------------
@cache
def default_instance() -> Instance:
    return subtask_instances(T, "island_grid", n=1, size="default")[0]


def answer_with(rows: list[dict]) -> str:
    inst = default_instance()
    return json.dumps({**inst.reference, "dispatch": rows})


def _rows() -> list[dict]:
    return json.loads(json.dumps(default_instance().reference["dispatch"]))


def _rename(rows: list[dict]) -> list[dict]:
    rows[0]["output"]["Generator Z"] = rows[0]["output"].pop("U1")
    return rows


def _over(rows: list[dict]) -> list[dict]:
    rows[0]["output"]["U1"] = 999
    return rows


def _drain(rows: list[dict]) -> list[dict]:
    for r in rows:
        r["battery"] = default_instance().data["battery"]["discharge"]
    return rows


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (_rename, "names unknown unit 'Generator Z'"),
        (lambda rows: rows[1:], "hours missing from the dispatch: 0"),
        (lambda rows: [*rows, rows[0]], "hour 0 appears more than once"),
        (_over, "U1 needs an integer output from 0 to"),
        (_drain, "the battery would hold"),
    ],
    ids=["unknown unit", "missing hour", "repeated hour", "above maximum", "battery below empty"],
)
def test_a_malformed_dispatch_fails_the_format_item_with_a_reason(change, why):
    g = grade(default_instance(), answer_with(change(_rows())))
    fmt = next(i for i in g.items if i.id == "C1")
    assert not fmt.passed and why in fmt.reason, fmt.reason


def test_the_reference_passes_and_the_baseline_is_valid_json_with_a_plan():
    inst = default_instance()
    assert grade(inst, json.dumps(inst.reference)).all_pass
    base = json.loads(checker("project").baseline_answer(inst))
    assert len(base["dispatch"]) == inst.data["hours"]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"demand": (3, 4)}, "demand has 2 hourly figures, 3 expected"),
        ({"critical": (4, 3, 1)}, "critical load above demand"),
        ({"units": (DATA.units[0], DATA.units[0])}, "unit ids must be distinct"),
        ({"units": (DATA.units[0].model_copy(update={"pmin": 5}),)}, "minimum output 5 above maximum 2"),
        ({"battery": Battery(capacity=1, initial=3, charge=1, discharge=1)}, "battery starts at 3 MWh"),
    ],
    ids=["profile length", "critical above demand", "repeated unit", "pmin above pmax", "battery over capacity"],
)
def test_malformed_power_data_is_a_clear_error(change, why):
    with pytest.raises(ValueError, match=why):
        pw.replaced(DATA, **change)


STRUCTURE = {
    "island_grid": (True, True, {"fuel_limit"}),
    "industrial_microgrid": (False, True, {"must_run", "ramp_limits"}),
    "regional_fleet": (False, True, {"ramp_limits", "min_up_time", "min_down_time"}),
    "solar_storage": (True, True, {"curtailment_cap"}),
    "hospital_backup": (True, True, {"critical_load", "spinning_reserve"}),
}


@pytest.mark.parametrize("subtask", sorted(STRUCTURE))
def test_each_subtask_carries_its_structure(subtask):
    battery, renewable, kinds = STRUCTURE[subtask]
    inst = subtask_instances(T, subtask, n=1, size="small")[0]
    assert (inst.data["battery"] is not None) == battery
    assert any(inst.data["renewable"]) == renewable
    assert kinds <= {r.kind for r in inst.rules}
    assert [t.kind for t in inst.objective][:2] == ["unserved", "cost"] or "changes" in {t.kind for t in inst.objective}


def test_sampled_units_have_distinct_fuel_costs():
    for subtask in STRUCTURE:
        inst = subtask_instances(T, subtask, n=1, size="default")[0]
        costs = [u["cost"] for u in inst.data["units"]]
        assert len(set(costs)) == len(costs)
