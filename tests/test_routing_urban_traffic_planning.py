"""Urban Traffic Planning: each rule kind's check on a hand-built network, the figures
recomputed by hand, the checker held against the CP-SAT encoder on every plan of that
network, bad answers and malformed data, the subtasks' structure and the baseline."""

from __future__ import annotations

import itertools
import json

import pytest
from ortools.sat.python import cp_model

from pbsolve.checkers.routing import traffic as tr
from pbsolve.checkers.routing.traffic import CHECKS, Flow, Level, Plan, Route, TrafficData
from pbsolve.grading import grade
from pbsolve.models.routing import traffic as model
from pbsolve.network_kit import Road, RoadNetwork
from pbsolve.params import NoParams, Params
from pbsolve.schema import ObjectiveTerm
from tests.instances import find, subtask_instances

T = tr.TASK_ID

# A square A-B-D-C-A with a diagonal B-C: flow F1 A->D by A-B-D or A-C-D; F2 B->C by B-C or B-A-C.
NET = RoadNetwork(
    places=("A", "B", "C", "D"),
    roads=(
        Road(a="A", b="B", minutes=3, capacity=4),
        Road(a="A", b="C", minutes=5, capacity=4),
        Road(a="B", b="C", minutes=4, capacity=2),
        Road(a="B", b="D", minutes=4, capacity=3),
        Road(a="C", b="D", minutes=2, capacity=4),
    ),
)
DATA = TrafficData(
    network=NET,
    periods=("08:00", "08:15"),
    period_minutes=15,
    flows=(
        Flow(id="F1", name="commuters A → D", vehicle="cars", origin="A", destination="D", demand=(3, 2), points=5),
        Flow(
            id="F2",
            name="bus B → C",
            vehicle="buses",
            origin="B",
            destination="C",
            demand=(2, 1),
            points=7,
            priority=True,
        ),
    ),
    routes=(
        Route(id="F1-1", flow="F1", places=("A", "B", "D")),
        Route(id="F1-2", flow="F1", places=("A", "C", "D")),
        Route(id="F2-1", flow="F2", places=("B", "C")),
        Route(id="F2-2", flow="F2", places=("B", "A", "C")),
    ),
    levels=(
        Level(a="A", b="B", free=2, delay=2),
        Level(a="A", b="C", free=4, delay=1),
        Level(a="B", b="C", free=1, delay=3),
        Level(a="B", b="D", free=2, delay=1),
        Level(a="C", b="D", free=4, delay=1),
    ),
)


def plan(f1: tuple[int, int], f2: tuple[int, int]) -> Plan:
    """F1's vehicles on F1-1 per period (the rest on F1-2); F2's on F2-1 (the rest on F2-2)."""
    v = {}
    for i, p in enumerate(DATA.periods):
        v["F1-1", p], v["F1-2", p] = f1[i], DATA.flows[0].demand[i] - f1[i]
        v["F2-1", p], v["F2-2", p] = f2[i], DATA.flows[1].demand[i] - f2[i]
    return Plan(v)


def every_plan() -> list[Plan]:
    f1 = itertools.product(range(4), range(3))
    return [plan(a, b) for a in f1 for b in itertools.product(range(3), range(2))]


PARAMS: list[tuple[str, Params]] = [
    ("road_capacity", NoParams()),
    ("road_closure", tr.RoadClosure(roads=[("B", "D")], periods=["08:15"])),
    ("priority_bound", tr.PriorityBound(flows=["F2"], minutes=4)),
    ("zone_limit", tr.ZoneLimit(place="C", max=3)),
    ("route_ban", tr.RouteBan(flows=["F1"], roads=[("A", "C")])),
    ("detour_limit", tr.DetourLimit(minutes=0)),
    ("split_limit", tr.SplitLimit(max=1)),
    ("main_route_share", tr.MainRouteShare(flows=["F1"], percent=50)),
    ("corridor_balance", tr.CorridorBalance(first=("A", "B"), second=("A", "C"), max=1)),
    ("route_stability", tr.RouteStability(max=1)),
    ("exposure_budget", tr.ExposureBudget(roads=[("A", "B")], max=4)),
    ("congestion_recovery", tr.CongestionRecovery()),
    ("incident_backup", tr.IncidentBackup(roads=[("B", "C")])),
]


def test_network_minutes_count_route_minutes_and_each_vehicle_beyond_the_free_flow_level():
    p = plan((3, 2), (2, 1))  # everything on the main routes
    # route minutes: F1-1 = 7, F2-1 = 4 -> 7*5 + 4*3 = 47
    # A-B carries 3 then 2 (free 2, delay 2): 2; B-D the same (free 2, delay 1): 1;
    # B-C carries 2 then 1 (free 1, delay 3): 3
    assert tr.network_minutes(DATA, p) == 47 + 2 + 1 + 3
    values = {
        t: tr.objective_value(DATA, p, ObjectiveTerm(id=t, kind=t), NoParams()) for t in ("order_score", "diverted")
    }
    assert values == {"order_score": 5 * 1 * 5 + 7 * 1 * 3, "diverted": 0}


def test_priority_minutes_count_only_priority_flows():
    p = plan((0, 0), (0, 0))  # F2 by B-A-C: 8 minutes x 3 vehicles
    term = ObjectiveTerm(id="priority_minutes", kind="priority_minutes")
    assert tr.objective_value(DATA, p, term, NoParams()) == 24


def test_each_rule_check_matches_the_cp_sat_encoder_on_every_plan_of_the_hand_built_network():
    """Both implementations judge all 72 plans of the square alike, rule kind by rule kind
    (backups: F2's route F2-2 avoids B-C, F1's main route avoids it)."""
    for kind, params in PARAMS:
        for p in every_plan():
            if kind == "incident_backup":
                p = Plan(p.vehicles, {"F1": "F1-1", "F2": "F2-2"})
            ok, _ = CHECKS[kind](DATA, p, params)
            tm = model.TrafficModel(DATA, with_backups=p.backup is not None)
            lit = tm.m.new_bool_var("rule")
            model.ENCODERS[kind](tm, params, lit)
            tm.m.add(lit == 1)
            for cell, v in p.vehicles.items():
                tm.m.add(tm.x[cell] == v)
            for (fid, rid), var in tm.y.items():
                tm.m.add(var == (1 if (p.backup or {}).get(fid) == rid else 0))
            solver = cp_model.CpSolver()
            solver.parameters.num_workers = 1
            accepted = solver.solve(tm.m) in (cp_model.OPTIMAL, cp_model.FEASIBLE)
            assert accepted == ok, (kind, p.vehicles)


def test_incident_backup_fails_when_the_rerouted_vehicles_exceed_a_capacity():
    params = tr.IncidentBackup(roads=[("B", "C")])
    # F2's 2 vehicles on B-C move to B-A-C in 08:00; F1 puts 3 on A-B (capacity 4): 5 > 4
    p = Plan(plan((3, 2), (2, 1)).vehicles, {"F1": "F1-1", "F2": "F2-2"})
    ok, why = CHECKS["incident_backup"](DATA, p, params)
    assert not ok and "A–B would carry 5" in why
    ok, why = CHECKS["incident_backup"](DATA, Plan(p.vehicles, {"F1": "F1-1", "F2": "F2-1"}), params)
    assert not ok and "uses B–C" in why


def test_malformed_data_is_a_clear_error():
    raw = DATA.model_dump(mode="json")
    bad_route = {**raw, "routes": [*raw["routes"][:-1], {"id": "F2-2", "flow": "F2", "places": ["B", "D", "A", "C"]}]}
    with pytest.raises(ValueError, match="no road from D to A"):
        TrafficData.model_validate(bad_route)
    short = {**raw, "flows": [{**raw["flows"][0], "demand": [3]}, raw["flows"][1]]}
    with pytest.raises(ValueError, match="1 demands for 2 periods"):
        TrafficData.model_validate(short)
    with pytest.raises(ValueError, match="one congestion level"):
        TrafficData.model_validate({**raw, "levels": raw["levels"][:-1]})


@pytest.fixture(scope="module")
def inst():
    found = find(T, 3, "small")
    assert found is not None
    return found


def _format_reason(inst, flows) -> tuple[bool, str]:
    ref = json.loads(json.dumps(inst.reference))
    ref["flows"] = flows
    g = grade(inst, json.dumps(ref))
    item = next(i for i in g.items if i.id == next(c.id for c in inst.checklist if c.rule == "format"))
    return item.passed, item.reason


def test_an_answer_naming_an_unknown_flow_or_route_fails_the_format_item_with_a_reason(inst):
    flows = json.loads(json.dumps(inst.reference["flows"]))
    flows["F99"] = flows.pop("F1")
    assert _format_reason(inst, flows) == (False, "'flows' names unknown flow 'F99'")
    flows = json.loads(json.dumps(inst.reference["flows"]))
    flows["F1"] = {"Ring Road": [1] * len(inst.data["periods"])}
    passed, reason = _format_reason(inst, flows)
    assert not passed and "unknown route 'Ring Road'" in reason
    flows = json.loads(json.dumps(inst.reference["flows"]))
    flows["f1"] = flows["F1"]  # the same flow spelt twice
    passed, reason = _format_reason(inst, flows)
    assert not passed and "more than once" in reason


def test_counts_that_miss_the_demand_or_are_not_whole_fail_the_format_item(inst):
    flows = json.loads(json.dumps(inst.reference["flows"]))
    first = next(iter(flows["F1"]))
    flows["F1"][first][0] += 1
    passed, reason = _format_reason(inst, flows)
    assert not passed and "its demand is" in reason
    flows["F1"][first][0] = 1.5
    passed, reason = _format_reason(inst, flows)
    assert not passed and "whole vehicle counts" in reason
    del flows["F1"]
    assert _format_reason(inst, flows) == (False, "flows missing from the plan: F1")


def test_the_answer_format_lists_each_flow_with_its_own_routes_only(inst):
    d = TrafficData.model_validate(inst.data)
    schema = tr.TASK.plan_schema(d, [], list(inst.rules))
    for f in d.flows:
        assert set(schema["properties"][f.id]["properties"]) == {r.id for r in d.routes_of[f.id]}


@pytest.mark.parametrize("subtask", [s.id for s in model.TASK.subtasks])
def test_every_subtask_certifies_instances_carrying_its_forced_rules_and_objective(subtask):
    found = subtask_instances(T, subtask, n=2)
    assert len(found) == 2
    for i in found:
        kinds = {r.kind for r in i.rules}
        assert set(model.FORCED[subtask]) <= kinds
        own = [t.kind for t in i.objective if t.kind not in ("changes", "backup_score")]  # hard-tier terms
        assert own == list(model.OBJECTIVES[subtask])
        if subtask == "event_traffic":
            assert {f["destination"] for f in i.data["flows"]} == {model.VENUE}
        if subtask == "priority_corridor":
            assert any(f["priority"] for f in i.data["flows"])


def test_the_baseline_sends_every_vehicle_by_its_quickest_route(inst):
    d = TrafficData.model_validate(inst.data)
    base = tr.TASK.baseline_plan(d, inst)
    for f in d.flows:
        quickest = min(d.routes_of[f.id], key=lambda r: d.route_minutes[r.id])
        assert [base.vehicles[quickest.id, p] for p in d.periods] == list(f.demand)


def test_the_prompt_states_units_roads_and_routes(inst):
    d = TrafficData.model_validate(inst.data)
    assert "vehicles per period" in inst.prompt
    for r in d.routes:
        assert f"route {r.id}" in inst.prompt
    assert "| road | minutes | capacity |" in inst.prompt
