"""Disaster Evacuation Planning: the timing of routes over periods, each rule kind's check
on hand-built plans, the checker held against the CP-SAT encoder on every plan of a small
instance, the subtasks' structure, the stateful kinds, the baseline's pass rate, answers
naming unknown entities and malformed instance data."""

from __future__ import annotations

import itertools
import json
from functools import cache

import pytest
from ortools.sat.python import cp_model
from pydantic import ValidationError

from pbsolve.checkers.emergency import evacuation as ev
from pbsolve.checkers.emergency.evacuation import CHECKS, EvacData, Exit, Group, Plan, Route, Shelter
from pbsolve.family import Draft
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from pbsolve.models.emergency import evacuation as model
from pbsolve.network_kit import Road, RoadNetwork
from pbsolve.params import NoParams, Params
from pbsolve.schema import GenerationSpec, Grade, Instance, ItemResult, ObjectiveTerm, Rule
from tests.instances import subtask_instances

T = ev.TASK_ID
SPEC = GenerationSpec(family="emergency", task=T, subtask="river_flood", seed=0, size="tiny")

# A (two groups) -- B -- S (shelter S1), A -- T and B -- T (shelter S2); periods of 10 minutes.
NET = RoadNetwork(
    places=("A", "B", "S", "T"),
    roads=(
        Road(a="A", b="B", minutes=11, capacity=50),
        Road(a="B", b="S", minutes=7, capacity=40),
        Road(a="A", b="T", minutes=12, capacity=60),
        Road(a="B", b="T", minutes=5, capacity=100),
    ),
)
DATA = EvacData(
    network=NET,
    period_minutes=10,
    periods=3,
    groups=(
        Group(id="G1", name="A residents", kind="residents", place="A", people=30, due=2, weight=1, priority=7),
        Group(
            id="G2",
            name="A care home",
            kind="care home",
            place="A",
            people=25,
            due=2,
            weight=4,
            priority=5,
            wheelchair=True,
            escort=True,
        ),
    ),
    shelters=(
        Shelter(id="S1", name="S school", place="S", capacity=40),
        Shelter(id="S2", name="T hall", place="T", capacity=60, accessible=True),
    ),
    routes=(
        Route(id="G1-1", group="G1", shelter="S1", places=("A", "B", "S")),  # 18 min: B-S entered at t+1
        Route(id="G1-2", group="G1", shelter="S2", places=("A", "T")),  # 12 min
        Route(id="G1-3", group="G1", shelter="S2", places=("A", "B", "T")),  # 16 min
        Route(id="G2-1", group="G2", shelter="S1", places=("A", "B", "S")),
        Route(id="G2-2", group="G2", shelter="S2", places=("A", "T")),
    ),
    exits=(Exit(place="A", capacity=40),),
)
GOOD = Plan({"G1": ("G1-1", 1), "G2": ("G2-2", 2)})


def moved(plan: Plan, **changes: tuple[str, int]) -> Plan:
    return Plan({**plan.assign, **changes}, plan.backup)


def verdict(kind: str, plan: Plan, params: Params | None = None, data: EvacData = DATA) -> tuple[bool, str]:
    return CHECKS[kind](data, plan, params or NoParams())


def test_a_route_enters_each_road_at_the_minutes_driven_before_it_over_the_period_length_rounded_down():
    legs = DATA.legs["G1-1"]
    assert [(sorted(leg.ends), leg.offset) for leg in legs] == [(["A", "B"], 0), (["B", "S"], 1)]
    assert DATA.minutes["G1-1"] == 18 and DATA.travel["G1-1"] == 1
    assert ev.arrival(DATA, GOOD, "G1") == 2 and ev.arrival(DATA, GOOD, "G2") == 3
    entries = ev.road_entries(DATA, GOOD.assign)
    assert entries[frozenset("AB"), 1] == 30 and entries[frozenset("BS"), 2] == 30 and entries[frozenset("AT"), 2] == 25


def test_sheltering_in_place_is_a_route_of_one_place_arriving_in_its_departure_period():
    data = ev.replaced(
        DATA,
        shelters=(*DATA.shelters, Shelter(id="S3", name="A sealed room", place="A", capacity=30, in_place=True)),
        routes=(*DATA.routes, Route(id="G1-4", group="G1", shelter="S3", places=("A",))),
    )
    plan = moved(GOOD, G1=("G1-4", 2))
    assert data.legs["G1-4"] == () and ev.arrival(data, plan, "G1") == 2
    assert verdict("shelter_capacity", plan, data=data) == (True, "holds")


# (kind, params, a plan that keeps it, a plan that breaks it, words of the reason)
CASES = [
    ("road_capacity", None, GOOD, moved(GOOD, G2=("G2-1", 1)), "55 people enter road A–B in period 1 (capacity 50)"),
    ("shelter_capacity", None, GOOD, moved(GOOD, G2=("G2-1", 2)), "55 people go to S1 (capacity 40)"),
    ("accessible_shelter", None, GOOD, moved(GOOD, G2=("G2-1", 2)), "goes to S1, which is not accessible"),
    ("exit_capacity", None, GOOD, moved(GOOD, G2=("G2-2", 1)), "55 people leave A in period 1"),
    ("deadline", ev.Deadline(groups=["G1"], period=2), GOOD, moved(GOOD, G1=("G1-1", 2)), "arrives in period 3"),
    (
        "road_closure",
        ev.RoadClosure(road=("B", "S"), period=3),
        GOOD,
        moved(GOOD, G1=("G1-1", 2)),
        "enters the closed road B–S in period 3",
    ),
    ("not_before", ev.NotBefore(group="G2", period=2), GOOD, moved(GOOD, G2=("G2-2", 1)), "before period 2"),
    (
        "vulnerable_first",
        ev.VulnerableFirst(groups=["G2"]),
        moved(GOOD, G2=("G2-2", 1), G1=("G1-2", 2)),
        GOOD,
        "G1 departs in period 1, before G2",
    ),
    ("same_shelter", ev.SameShelter(groups=["G1", "G2"]), moved(GOOD, G1=("G1-2", 1)), GOOD, "go to S1, S2"),
    ("shelter_balance", ev.ShelterBalance(max=5), GOOD, moved(GOOD, G1=("G1-2", 1)), "more than 5 apart"),
    ("max_travel", ev.MaxTravel(groups=["G1"], minutes=16), moved(GOOD, G1=("G1-3", 1)), GOOD, "takes 18 minutes"),
    (
        "staged_opening",
        ev.StagedOpening(shelter="S1", period=3, beds=20),
        moved(GOOD, G1=("G1-1", 2)),
        GOOD,
        "30 people arrive at S1 before period 3 (only 20 beds open)",
    ),
]


@pytest.mark.parametrize(("kind", "params", "keeps", "breaks", "why"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_kinds_check_accepts_a_plan_that_keeps_it_and_rejects_one_that_breaks_it_with_the_reason(
    kind, params, keeps, breaks, why
):
    assert verdict(kind, keeps, params) == (True, "holds")
    ok, reason = verdict(kind, breaks, params)
    assert not ok and why in reason, reason


def _escorted() -> EvacData:
    groups = tuple(g.model_copy(update={"escort": True}) for g in DATA.groups)
    return ev.replaced(DATA, groups=groups)


def test_an_escort_team_is_busy_out_and_back_before_its_next_trip():
    """G1 on a route of one travel period leaving in period 1 keeps its team busy in
    periods 1, 2 and 3; with one team, G2 may leave only from period 4 (beyond the horizon)."""
    data = _escorted()
    assert list(ev.busy(data, "G1-1", 1)) == [1, 2, 3]
    p = ev.EscortTeams(teams=1)
    ok, why = verdict("escort_teams", GOOD, p, data=data)
    assert not ok and "in period 2 2 escort teams are needed (G1, G2); 1 exist" in why
    assert verdict("escort_teams", GOOD, ev.EscortTeams(teams=2), data=data) == (True, "holds")


def test_the_backup_check_simulates_each_road_failing_on_its_own():
    wide = ev.replaced(DATA, shelters=tuple(s.model_copy(update={"capacity": 60}) for s in DATA.shelters))
    plan = Plan({"G1": ("G1-1", 1), "G2": ("G2-2", 1)}, {"G1": "G1-2", "G2": "G2-1"})
    ok, why = verdict("backup_route", plan, data=wide)
    assert not ok and "S1 would receive" not in why and "not accessible" in why  # G2 uses wheelchairs
    plan = Plan({"G1": ("G1-1", 1), "G2": ("G2-2", 1)}, {"G1": "G1-2", "G2": "G2-2"})
    assert "shares a road" in verdict("backup_route", plan, data=wide)[1]
    fine = ev.replaced(wide, groups=tuple(g.model_copy(update={"wheelchair": False}) for g in wide.groups))
    plan = Plan({"G1": ("G1-1", 1), "G2": ("G2-2", 1)}, {"G1": "G1-2", "G2": "G2-1"})
    assert verdict("backup_route", plan, data=fine) == (True, "holds")
    tight = ev.replaced(fine, shelters=(fine.shelters[0], fine.shelters[1].model_copy(update={"capacity": 50})))
    ok, why = verdict("backup_route", plan, data=tight)
    assert not ok and "if road A–B failed, S2 would receive 55 people (capacity 50)" in why


def test_every_pool_rule_kind_and_disruption_kind_has_a_hand_built_case():
    pool = {c.id for c in model.TASK.pool} & set(CHECKS)
    assert pool <= {c[0] for c in CASES} | {"escort_teams", "backup_route"}


# -- the checker against the encoder, on every plan ----------------------------------------
OPTIONS = {g.id: [(r.id, t) for r in DATA.routes_of[g.id] for t in range(1, DATA.periods + 1)] for g in DATA.groups}
ALL_PLANS = [Plan(dict(zip(OPTIONS, combo))) for combo in itertools.product(*OPTIONS.values())]
OBJECTIVE = [ObjectiveTerm(id=k, kind=k) for k in ("lateness", "evacuation_time", "travel_minutes", "order_score")]


def model_says(
    plan: Plan, rules: list[Rule], objective: list[ObjectiveTerm] = OBJECTIVE, data: EvacData = DATA
) -> tuple[bool, dict[str, int]]:
    draft = Draft(spec=SPEC, data=data.model_dump(mode="json"), rules=rules, objective=objective)
    sm = model.build(draft)
    chosen = {f"x[{g},{r},{t}]" for g, (r, t) in plan.assign.items()}
    chosen |= {f"y[{g},{r}]" for g, r in (plan.backup or {}).items()}
    for var in sm.answer_literals:
        sm.model.add(var == int(var.name in chosen))
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.solve(sm.model)
    if status == cp_model.INFEASIBLE:
        return False, {}
    assert status == cp_model.OPTIMAL
    return True, {tid: int(solver.value(expr)) for tid, expr, _ in sm.objective_terms}


AGREEMENT = [(c[0], c[1]) for c in CASES] + [
    ("escort_teams", ev.EscortTeams(teams=1)),
    ("road_closure", ev.RoadClosure(road=("A", "B"), period=1)),
]


@pytest.mark.parametrize(("kind", "params"), AGREEMENT, ids=[f"{k}-{i}" for i, (k, _) in enumerate(AGREEMENT)])
def test_encoder_and_check_agree_on_every_plan_of_a_small_instance(kind, params):
    data = _escorted() if kind == "escort_teams" else DATA
    rule = Rule(id="R1", kind=kind, tier="basic", params=(params or NoParams()).dump())
    for plan in ALL_PLANS:
        ok, _ = verdict(kind, plan, params, data=data)
        assert model_says(plan, [rule], data=data)[0] == ok, (kind, plan)


def test_encoder_and_check_agree_on_backups_for_every_plan_and_backup_choice():
    fine = ev.replaced(DATA, groups=tuple(g.model_copy(update={"wheelchair": g.id == "G1"}) for g in DATA.groups))
    rule = Rule(id="R1", kind="backup_route", tier="hard", params={})
    backups = [
        dict(zip(OPTIONS, bs)) for bs in itertools.product(*[[r.id for r in fine.routes_of[g]] for g in OPTIONS])
    ]
    for plan in ALL_PLANS[::2]:
        for b in backups:
            p = Plan(plan.assign, b)
            assert model_says(p, [rule], data=fine)[0] == verdict("backup_route", p, data=fine)[0], p


def test_the_models_objective_figures_equal_the_checkers_on_every_plan():
    for plan in ALL_PLANS:
        _, figures = model_says(plan, [])
        assert figures == {t.id: ev.objective_value(DATA, plan, t, NoParams()) for t in OBJECTIVE}


def test_lateness_counts_weight_times_periods_late_and_nothing_for_early_groups():
    term = ObjectiveTerm(id="lateness", kind="lateness")
    assert ev.objective_value(DATA, GOOD, term, NoParams()) == 4  # G2 arrives in 3, due 2, weight 4
    assert ev.objective_value(DATA, moved(GOOD, G2=("G2-2", 1)), term, NoParams()) == 0


# -- malformed data and answers -----------------------------------------------------------
def test_malformed_instance_data_is_a_clear_error():
    raw = DATA.model_dump(mode="json")
    bad = json.loads(json.dumps(raw))
    bad["routes"][0]["places"] = ["A", "S"]
    with pytest.raises(ValidationError, match="no road from A to S"):
        EvacData.model_validate(bad)
    bad = json.loads(json.dumps(raw))
    bad["groups"][0]["place"] = "Nowhere"
    with pytest.raises(ValidationError, match="not a place of the network"):
        EvacData.model_validate(bad)
    bad = json.loads(json.dumps(raw))
    bad["routes"][0]["group"] = "G9"
    with pytest.raises(ValidationError, match="unknown group or shelter"):
        EvacData.model_validate(bad)


@cache
def small_instance() -> Instance:
    inst = build_instance(2, 0, GenerateOptions(task=T, size="small")).instance
    assert inst is not None and inst.certificate.status == "optimal"
    return inst


def format_item(inst: Instance, g: Grade) -> ItemResult:
    fmt = next(it.id for it in inst.checklist if it.rule == "format")
    return next(i for i in g.items if i.id == fmt)


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("group", "G99", "names unknown group 'G99'"),
        ("route", "Z-1", "names unknown route 'Z-1'"),
        ("depart", 99, "needs 'depart', a period from 1 to"),
        ("depart", "1", "needs 'depart', a period from 1 to"),
        ("depart", True, "needs 'depart', a period from 1 to"),
        ("route", 7, "needs string fields"),
    ],
)
def test_an_answer_naming_an_unknown_group_route_or_period_fails_the_format_item_with_a_reason(field, value, why):
    inst = small_instance()
    answer = json.loads(json.dumps(inst.reference))
    answer["evacuation"][0][field] = value
    g = grade(inst, json.dumps(answer))
    fmt = format_item(inst, g)
    assert not fmt.passed and why in fmt.reason
    assert g.all_pass == 0


def test_an_answer_giving_a_group_another_groups_route_fails_the_format_item():
    inst = small_instance()
    answer = json.loads(json.dumps(inst.reference))
    rows = answer["evacuation"]
    rows[0]["route"] = rows[1]["route"]
    assert "is not one of" in format_item(inst, grade(inst, json.dumps(answer))).reason


def test_an_answer_missing_a_group_or_repeating_one_fails_the_format_item():
    inst = small_instance()
    answer = json.loads(json.dumps(inst.reference))
    answer["evacuation"] = answer["evacuation"][1:]
    assert "missing from the plan" in format_item(inst, grade(inst, json.dumps(answer))).reason
    answer = json.loads(json.dumps(inst.reference))
    answer["evacuation"].append(answer["evacuation"][0])
    assert "appears more than once" in format_item(inst, grade(inst, json.dumps(answer))).reason


# -- subtasks ---------------------------------------------------------------------------
@cache
def insts(subtask: str) -> list[Instance]:
    return subtask_instances(T, subtask, 3)


def kinds(inst: Instance) -> set[str]:
    return {r.kind for r in inst.rules}


def test_there_are_five_subtasks_each_forcing_its_own_structure():
    assert len(model.TASK.subtasks) == 5
    assert {s.id for s in model.TASK.subtasks} == set(model.FORCED) == set(model.OBJECTIVES)
    assert all(o[-1] == "order_score" for o in model.OBJECTIVES.values())


def test_a_river_flood_closes_a_road_as_the_water_rises():
    for inst in insts("river_flood"):
        assert "road_closure" in kinds(inst) and ("closes" in inst.prompt or "closed" in inst.prompt)


def test_a_wildfire_closes_roads_and_sets_an_arrival_deadline():
    for inst in insts("wildfire"):
        assert {"road_closure", "deadline"} <= kinds(inst)


def test_a_hurricane_has_a_longer_horizon_accessible_shelters_and_escort_teams():
    for inst in insts("hurricane"):
        d = EvacData.model_validate(inst.data)
        assert d.periods == model.SIZES.small.periods + model.LONG_HORIZON
        assert {"accessible_shelter", "escort_teams"} <= kinds(inst)
        assert any(g.wheelchair for g in d.groups) and any(s.accessible for s in d.shelters)
        assert sum(g.escort for g in d.groups) >= 2


def test_a_chemical_plume_offers_sealed_rooms_to_shelter_in_place_under_a_deadline():
    for inst in insts("chemical_plume"):
        d = EvacData.model_validate(inst.data)
        assert "deadline" in kinds(inst) and d.periods == max(2, model.SIZES.small.periods - 1)
        rooms = [s for s in d.shelters if s.in_place]
        assert rooms and all(any(r.shelter == s.id and len(r.places) == 1 for r in d.routes) for s in rooms)


def test_a_stadium_empties_one_venue_through_gates_under_an_exit_capacity():
    for inst in insts("stadium_event"):
        d = EvacData.model_validate(inst.data)
        assert {g.place for g in d.groups} == {"Stadium"} and "exit_capacity" in kinds(inst)
        assert [e.place for e in d.exits] == ["Stadium"]
        assert {r.b for r in d.network.roads if r.a == "Stadium"} <= set(model.GATES)


# -- stateful kinds ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["escort_teams", "staged_opening"])
def test_a_stateful_kind_is_sampled_on_request_and_its_reference_passes(kind):
    found = None
    for index in range(12):
        inst = build_instance(3, index, GenerateOptions(task=T, size="small", include=[kind])).instance
        if inst is not None and inst.certificate.status == "optimal" and kind in kinds(inst):
            found = inst
            break
    assert found is not None
    rule = next(r for r in found.rules if r.kind == kind)
    assert rule.tier == "stateful"
    assert grade(found, json.dumps(found.reference)).all_pass == 1


# -- responders -------------------------------------------------------------------------
def test_perturb_finds_a_confirmed_one_move_break_for_the_common_rule_kinds():
    from pbsolve.audit.perturb import PerturbReport, perturb_instance

    report, found = PerturbReport(), set()
    for index in range(10):
        inst = build_instance(4, index, GenerateOptions(task=T, size="default")).instance
        if inst is not None:
            found |= {p.kind for p in perturb_instance(inst, 0, report=report)}
    assert not report.hook_errors and not report.rejected
    wanted = {"road_capacity", "shelter_capacity", "road_closure", "deadline"}
    assert {f"break_rule:{k}" for k in wanted} <= found, sorted(found)
    assert {"suboptimal", "suboptimal_claims_optimum"} <= found
