"""Emergency Planning: each rule kind's check on hand-built plans, the checker held against
the CP-SAT encoder on the plans of a small instance, travel over the open roads, the
canonical labelling of interchangeable teams, the subtasks' structure, the stateful
kinds, the baseline's pass rate, answers naming unknown entities and malformed data."""

from __future__ import annotations

import itertools
import json
from functools import cache

import pytest
from ortools.sat.python import cp_model
from pydantic import ValidationError

from pbsolve.checkers.emergency import response as rp
from pbsolve.checkers.emergency.response import (
    CHECKS,
    Depot,
    Incident,
    Plan,
    ResponseData,
    Severity,
    Team,
    combos,
)
from pbsolve.family import Draft
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from pbsolve.models.emergency import response as model
from pbsolve.network_kit import Road, RoadNetwork
from pbsolve.params import NoParams, Params
from pbsolve.schema import GenerationSpec, Grade, Instance, ItemResult, ObjectiveTerm, Rule
from tests.emergency_adapters.response import canonical
from tests.instances import subtask_instances

T = rp.TASK_ID
SPEC = GenerationSpec(family="emergency", task=T, subtask="urban_fire_and_rescue", seed=0, size="tiny")
NS, HS, ED, QD, ML, RS, OT = (
    "North Station", "Harbour Station", "East Depot", "Quarry Depot", "Mill Lane", "Riverside", "Old Town",
)  # fmt: skip
NETWORK = RoadNetwork(
    places=(NS, HS, ED, QD, ML, RS, OT),
    roads=tuple(
        Road(a=a, b=b, minutes=m)
        for a, b, m in [(NS, ML, 4), (HS, RS, 3), (ML, RS, 5), (NS, OT, 6), (HS, OT, 2), (ED, ML, 3), (QD, RS, 2),
                        (NS, ED, 5), (HS, QD, 4)]
    ),
)  # fmt: skip
FE, PM = "fire engine", "paramedic crew"
DATA = ResponseData(
    network=NETWORK,
    alerts=(0, 65),
    severities=(
        Severity(id="critical", deadline=6, weight=4),
        Severity(id="serious", deadline=15, weight=2),
        Severity(id="minor", deadline=30, weight=1),
    ),
    teams=(
        Team(id="ENG-N1", role=FE, base=NS, cost=5),
        Team(id="ENG-N2", role=FE, base=NS, cost=5),
        Team(id="ENG-H1", role=FE, base=HS, cost=7),
        Team(id="MED-H1", role=PM, base=HS, cost=3),
        Team(id="MED-N1", role=PM, base=NS, cost=4),
    ),
    depots=(
        Depot(id=ED, stock={"foam": 10}, price={"foam": 3}, haul=1),
        Depot(id=QD, stock={"foam": 6}, price={"foam": 5}, haul=2),
    ),
    incidents=(
        Incident(id="I1", name="House fire", site=ML, wave=1, severity="critical", needs={FE: 1, PM: 1},
                 materials={"foam": 5}, duration=60),
        Incident(id="I2", name="Kitchen fire", site=RS, wave=1, severity="serious", needs={FE: 1},
                 materials={"foam": 4}, duration=30),
        Incident(id="I3", name="Roof collapse", site=OT, wave=2, severity="minor", needs={FE: 1, PM: 1}, duration=45),
    ),
)  # fmt: skip
SUPPLY = {"I1": {"foam": ED}, "I2": {"foam": QD}, "I3": {}}
GOOD = Plan({"I1": ("ENG-N1", "MED-N1"), "I2": ("ENG-H1",), "I3": ("ENG-N2", "MED-H1")}, SUPPLY)
NEW = Incident(id="I4", name="Flooded cellar", site=RS, wave=2, severity="minor", needs={PM: 1}, duration=20)


def sent(plan: Plan, **teams: tuple[str, ...]) -> Plan:
    return Plan({**plan.teams, **teams}, plan.supply, plan.extra)


def supplied(plan: Plan, incident: str, depot: str) -> Plan:
    return Plan(plan.teams, {**plan.supply, incident: {"foam": depot}}, plan.extra)


def verdict(kind: str, plan: Plan, params: Params | None = None) -> tuple[bool, str]:
    return CHECKS[kind](DATA, plan, params or NoParams())


WITH_NEW = Plan({**GOOD.teams, "I4": ("MED-N1",)}, {**SUPPLY, "I4": {}}, (NEW,))

# (kind, params, a plan that keeps it, a plan that breaks it, words of the reason)
CASES = [
    ("stock", None, GOOD, supplied(GOOD, "I1", QD), "Quarry Depot ships 9 units of foam (it holds 6)"),
    ("depot_range", rp.DepotRange(minutes=3), GOOD, supplied(GOOD, "I2", ED), "East Depot, 8 minutes away"),
    ("deadline", rp.Deadline(incidents=["I1"]), GOOD, sent(GOOD, I1=("ENG-N1", "MED-H1")), "after 8 minutes (deadline 6)"),
    ("max_travel", rp.MaxTravel(minutes=6), GOOD, sent(GOOD, I1=("ENG-N1", "MED-H1")), "MED-H1 travels 8 minutes"),
    (
        "station_cover",
        rp.StationCover(base=NS, role=FE, keep=1, wave=1),
        GOOD,
        sent(GOOD, I2=("ENG-N2",), I3=("ENG-H1", "MED-H1")),
        "North Station keeps 0 fire engine teams in wave 1",
    ),
    ("dispatch_cap", rp.DispatchCap(max=2), GOOD, sent(GOOD, I2=("ENG-N2",), I3=("ENG-H1", "MED-H1")), "sends 3 teams"),
    (
        "arrives_first",
        rp.ArrivesFirst(incident="I3", first=PM, then=FE),
        GOOD,
        sent(GOOD, I3=("ENG-H1", "MED-N1")),
        "a paramedic crew arrives after 6 minutes, a fire engine after 2",
    ),
    ("severity_priority", rp.SeverityPriority(first="I2", then="I1"), GOOD, supplied(GOOD, "I2", ED), "later than I1"),
    ("same_base", rp.SameBase(incident="I1"), GOOD, sent(GOOD, I1=("ENG-N1", "MED-H1"), I3=("ENG-N2", "MED-N1")), "from Harbour Station, North Station"),
    ("dispatch_balance", rp.DispatchBalance(max=1), GOOD, sent(GOOD, I2=("ENG-N2",), I3=("ENG-H1", "MED-H1")), "3 teams and Harbour Station 0"),
    ("rest_after_long", rp.RestAfterLong(minutes=60), GOOD, sent(GOOD, I3=("ENG-N1", "MED-H1")), "ENG-N1 works I1 (60 minutes"),
    (
        "cumulative_duty",
        rp.CumulativeDuty(minutes=60, light=30),
        GOOD,
        sent(GOOD, I3=("ENG-N1", "MED-H1")),
        "ENG-N1 has 68 duty minutes in wave 1 (over 60)",
    ),
    ("turnaround", None, GOOD, sent(GOOD, I3=("ENG-N1", "MED-H1")), "back from I1 at minute 68, after the wave-2 alert (65)"),
    ("new_incident", rp.NewIncident(incident=NEW), WITH_NEW, sent(WITH_NEW, I4=()), "gets 0 paramedic crew teams (it needs 1)"),
    ("unit_out", rp.UnitOut(base=NS, role=FE, count=1), GOOD, sent(GOOD, I2=("ENG-N2",), I3=("ENG-H1", "MED-H1")), "with 1 of 2 out of service"),
    ("spare_cover", rp.SpareCover(minutes=7, severity="critical"), sent(GOOD, I1=("ENG-N1", "MED-H1"), I3=("ENG-N2", "MED-N1")), GOOD, "no spare paramedic crew team is left within 7 minutes of I1"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "params", "keeps", "breaks", "why"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_kinds_check_accepts_a_plan_that_keeps_it_and_rejects_one_that_breaks_it_with_the_reason(
    kind, params, keeps, breaks, why
):
    assert verdict(kind, keeps, params) == (True, "holds")
    ok, reason = verdict(kind, breaks, params)
    assert not ok and why in reason, reason


def test_every_rule_kind_the_checker_knows_has_a_hand_built_case():
    assert set(CHECKS) == {c[0] for c in CASES}
    pool = {c.id for c in model.TASK.pool} & set(CHECKS)
    assert pool <= {c[0] for c in CASES}


# -- the checker against the encoder -----------------------------------------------------
def plans(extra: tuple[Incident, ...] = ()) -> list[Plan]:
    """Every plan of DATA the model's structure admits (one team at a time per wave)."""
    incidents = [*DATA.incidents, *extra]
    out = []
    for teams in itertools.product(*[list(combos(DATA, i, optional=i in extra)) for i in incidents]):
        waves: dict[int, list[str]] = {}
        for i, ts in zip(incidents, teams):
            waves.setdefault(i.wave, []).extend(ts)
        if any(len(v) != len(set(v)) for v in waves.values()):
            continue
        for d1, d2 in itertools.product((ED, QD), repeat=2):
            supply = {"I1": {"foam": d1}, "I2": {"foam": d2}, "I3": {}} | {i.id: {} for i in extra}
            out.append(Plan({i.id: ts for i, ts in zip(incidents, teams)}, supply, extra))
    return out


ALL = plans()
OBJECTIVE = [ObjectiveTerm(id=k, kind=k) for k in ("lateness", "travel", "material_cost", "fatigue", "running_cost")]


def model_says(
    plan: Plan, rules: list[Rule], objective: list[ObjectiveTerm] = OBJECTIVE
) -> tuple[bool, dict[str, int]]:
    draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=rules, objective=objective)
    sm = model.build(draft)
    c = canonical(DATA, plan)
    chosen = {f"x[{t},{i}]" for i, ts in c.teams.items() for t in ts}
    chosen |= {f"z[{i},{m},{dp}]" for i, mats in c.supply.items() for m, dp in mats.items()}
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


@pytest.mark.parametrize(("kind", "params"), [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES])
def test_encoder_and_check_agree_on_the_plans_of_a_small_instance(kind, params):
    rule = Rule(id="R1", kind=kind, tier="basic", params=(params or NoParams()).dump())
    sample = plans((NEW,))[::5] if kind == "new_incident" else ALL[::3]
    outcomes = set()
    for plan in sample:
        ok, _ = CHECKS[kind](DATA, plan, params or NoParams())
        assert model_says(plan, [rule])[0] == ok, (kind, plan)
        outcomes.add(ok)
    assert outcomes == {True, False}, kind


def test_the_models_objective_figures_equal_the_checkers_on_the_plans():
    for plan in ALL[::7]:
        _, figures = model_says(plan, [])
        assert figures == {t.id: rp.objective_value(DATA, plan, t, NoParams()) for t in OBJECTIVE}


def test_changes_count_per_role_and_base_so_a_relabelled_plan_changes_nothing():
    existing = rp.Dispatch(
        teams={k: list(v) for k, v in GOOD.teams.items()}, materials={"I1": {"foam": ED}, "I2": {"foam": QD}}
    )
    term = ObjectiveTerm(id="changes", kind="changes", params={"existing": existing.model_dump(mode="json")})
    params = rp.CurrentDispatch(existing=existing)
    assert rp.objective_value(DATA, GOOD, term, params) == 0
    relabelled = sent(GOOD, I1=("ENG-N2", "MED-N1"), I3=("ENG-N1", "MED-H1"))
    assert rp.objective_value(DATA, relabelled, term, params) == 0
    moved = sent(GOOD, I2=("ENG-N2",), I3=("ENG-H1", "MED-H1"))
    assert rp.objective_value(DATA, moved, term, params) == 4  # I2: -1 Harbour +1 North; I3: the same back
    assert rp.objective_value(DATA, supplied(GOOD, "I1", QD), term, params) == 1
    assert model_says(moved, [], [term])[1] == {"changes": 4}


def test_fatigue_counts_the_product_of_the_two_waves_on_scene_units_for_a_reused_team():
    term = ObjectiveTerm(id="fatigue", kind="fatigue")
    assert rp.objective_value(DATA, GOOD, term, NoParams()) == 0
    reused = sent(GOOD, I3=("ENG-N1", "MED-H1"))
    assert rp.objective_value(DATA, reused, term, NoParams()) == (60 // 5) * (45 // 5)


# -- interchangeable teams ----------------------------------------------------------------
def test_relabelling_teams_of_one_role_at_one_base_gives_the_same_canonical_answer_and_figures():
    relabelled = sent(GOOD, I1=("ENG-N2", "MED-N1"), I3=("ENG-N1", "MED-H1"))
    assert canonical(DATA, relabelled) == canonical(DATA, GOOD)
    for t in OBJECTIVE:
        assert rp.objective_value(DATA, relabelled, t, NoParams()) == rp.objective_value(DATA, GOOD, t, NoParams())


def test_the_model_admits_only_the_canonical_labelling_and_its_symmetry_hook_agrees():
    draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=[], objective=OBJECTIVE)
    sm = model.build(draft)
    assert sm.symmetry is not None and sm.symmetry.in_model
    names = [v.name for v in sm.answer_literals]
    for plan in (GOOD, sent(GOOD, I1=("ENG-N2", "MED-N1"), I3=("ENG-N1", "MED-H1"))):
        chosen = {f"x[{t},{i}]" for i, ts in plan.teams.items() for t in ts}
        chosen |= {f"z[{i},{m},{dp}]" for i, mats in plan.supply.items() for m, dp in mats.items()}
        values = [int(n in chosen) for n in names]
        want = canonical(DATA, plan)
        cchosen = {f"x[{t},{i}]" for i, ts in want.teams.items() for t in ts} | {n for n in chosen if n.startswith("z")}
        assert sm.symmetry.canonical(values) == [int(n in cchosen) for n in names]


def test_travel_minutes_are_shortest_paths_over_the_open_roads_only():
    assert DATA.travel("ENG-N1", DATA.incidents[1]) == 9  # North Station - Mill Lane - Riverside
    closed = rp.replaced(DATA, closed=((ML, RS),))
    assert closed.travel("ENG-N1", DATA.incidents[1]) == 11  # North Station - Old Town - Harbour Station - Riverside


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"closed": ((NS, RS),)}, "is not a road of the network"),
        ({"alerts": (60, 30)}, "second wave's alert must come after"),
        ({"teams": (Team(id="X-1", role=FE, base="Nowhere", cost=1),)}, "is not a place of the network"),
        ({"closed": ((NS, ML), (NS, OT), (NS, ED))}, "cuts the network"),
    ],
)
def test_malformed_instance_data_is_a_clear_error_naming_the_problem(change, why):
    with pytest.raises(ValidationError, match=why):
        rp.replaced(DATA, **change)


# -- subtasks ---------------------------------------------------------------------------
@cache
def insts(subtask: str) -> list[Instance]:
    return subtask_instances(T, subtask, 3)


def kinds(inst: Instance) -> set[str]:
    return {r.kind for r in inst.rules}


def test_there_are_five_subtasks_with_their_own_roles_materials_and_networks():
    assert len(model.TASK.subtasks) == 5
    assert len({model.ROLES[s.id] for s in model.TASK.subtasks}) == 5
    assert len({model.MATERIALS[s.id] for s in model.TASK.subtasks}) == 5


def test_urban_fire_and_rescue_has_a_scene_safety_rule_on_a_city_grid():
    for inst in insts("urban_fire_and_rescue"):
        assert "arrives_first" in kinds(inst)
        assert {t["role"] for t in inst.data["teams"]} <= set(model.ROLES["urban_fire_and_rescue"])


def test_flood_response_always_moves_materials_and_prices_them_before_travel():
    for inst in insts("flood_response"):
        assert all(i["materials"] for i in inst.data["incidents"])
        assert [t.kind for t in inst.objective if t.kind != "changes"][:3] == ["lateness", "material_cost", "travel"]


def test_a_collision_derives_ambulance_crews_from_the_triage_classes_and_puts_the_worst_first():
    for inst in insts("multi_casualty_collision"):
        assert "severity_priority" in kinds(inst)
        for i in inst.data["incidents"]:
            c = i["casualties"]
            assert i["needs"].get("ALS crew", 0) == c["red"]
            assert i["needs"].get("BLS crew", 0) == -(-c["yellow"] // 2)
        assert "Triage:" in inst.prompt


def test_a_hazmat_spill_closes_roads_at_its_site_and_travel_avoids_them():
    for inst in insts("hazmat_spill"):
        d = ResponseData.model_validate(inst.data)
        assert d.closed and all(d.incidents[0].site in pair for pair in d.closed)
        assert "CLOSED (exclusion zone)" in inst.prompt


def test_wildfire_rotation_carries_the_rest_and_turnaround_rules_and_weighs_fatigue_second():
    for inst in insts("wildfire_rotation"):
        assert {"rest_after_long", "turnaround"} <= kinds(inst)
        assert [t.kind for t in inst.objective if t.kind != "changes"][:2] == ["lateness", "fatigue"]


# -- stateful kinds ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["rest_after_long", "cumulative_duty", "turnaround"])
def test_a_stateful_kind_is_sampled_on_request_and_its_reference_passes(kind):
    found = None
    for index in range(12):
        inst = build_instance(3, index, GenerateOptions(task=T, size="small", include=[kind])).instance
        if inst is not None and inst.certificate.status == "optimal" and kind in kinds(inst):
            found = inst
            break
    assert found is not None
    assert next(r for r in found.rules if r.kind == kind).tier == "stateful"
    assert grade(found, json.dumps(found.reference)).all_pass == 1


# -- responders and bad answers ---------------------------------------------------------
@cache
def small_instance() -> Instance:
    inst = build_instance(2, 0, GenerateOptions(task=T, size="small")).instance
    assert inst is not None and inst.certificate.status == "optimal"
    return inst


def format_item(inst: Instance, g: Grade) -> ItemResult:
    fmt = next(it.id for it in inst.checklist if it.rule == "format")
    return next(i for i in g.items if i.id == fmt)


def _answer() -> dict:
    return json.loads(json.dumps(small_instance().reference))


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda a: a["dispatch"][0].update(incident="I99"), "names unknown incident 'I99'"),
        (lambda a: a["dispatch"][0]["teams"].__setitem__(0, "ZZZ-9"), "names unknown team 'ZZZ-9'"),
        (lambda a: a["dispatch"][0].update(teams="ENG-N1"), "needs 'teams', a list of team ids"),
        (lambda a: a["dispatch"].pop(0), "missing from the dispatch"),
        (lambda a: a["dispatch"].append(a["dispatch"][0]), "appears more than once"),
        (lambda a: a["dispatch"][0]["teams"].pop(), "the answer sends"),
    ],
)
def test_an_answer_naming_unknown_entities_or_leaving_gaps_fails_the_format_item_with_a_reason(edit, why):
    inst = small_instance()
    answer = _answer()
    edit(answer)
    g = grade(inst, json.dumps(answer))
    fmt = format_item(inst, g)
    assert not fmt.passed and why in fmt.reason, fmt.reason
    assert g.all_pass == 0


def test_a_material_from_an_unknown_depot_or_in_the_wrong_quantity_fails_the_format_item():
    inst = small_instance()
    answer = _answer()
    row = next(r for r in answer["dispatch"] if r["materials"])
    row["materials"][0]["depot"] = "Moon Depot"
    assert "names unknown depot 'Moon Depot'" in format_item(inst, grade(inst, json.dumps(answer))).reason
    answer = _answer()
    row = next(r for r in answer["dispatch"] if r["materials"])
    row["materials"][0]["quantity"] += 1
    assert "needs 'quantity'" in format_item(inst, grade(inst, json.dumps(answer))).reason


def test_a_team_at_two_incidents_of_one_wave_is_not_a_complete_plan():
    tc = rp.TASK
    rows = tc.plan_json(DATA, sent(GOOD, I2=("ENG-N1",)))
    plan, why = tc.read_plan(DATA, {"dispatch": rows}, tc.lookups(DATA), [])
    assert plan is None and "ENG-N1 is sent to both I1 and I2, incidents of the same wave" in why
    plan, why = tc.read_plan(DATA, {"dispatch": tc.plan_json(DATA, GOOD)}, tc.lookups(DATA), [])
    assert plan == GOOD, why


def test_a_new_incident_may_be_left_out_of_the_plan_but_its_rule_then_fails():
    tc = rp.TASK
    rule = Rule(id="R1", kind="new_incident", tier="hard", params=rp.NewIncident(incident=NEW).dump())
    plan, why = tc.read_plan(DATA, {"dispatch": tc.plan_json(DATA, GOOD)}, tc.lookups(DATA), [rule])
    assert plan is not None and plan.teams["I4"] == (), why
    assert not CHECKS["new_incident"](DATA, plan, rp.NewIncident(incident=NEW))[0]
    plan, why = tc.read_plan(DATA, {"dispatch": tc.plan_json(DATA, WITH_NEW)}, tc.lookups(DATA), [rule])
    assert plan == WITH_NEW, why


PERTURBED = [
    c.id for c in model.TASK.pool if c.tier in ("basic", "medium", "stateful") and c.id != "conflict_validation"
]


@pytest.mark.parametrize(
    ("include", "kinds"),
    [(k, (k,)) for k in PERTURBED] + [("min_change_replanning", ("new_incident", "unit_out"))],
    ids=[*PERTURBED, "disruptions"],
)
def test_perturb_finds_a_confirmed_one_move_break_for_each_rule_kind(include, kinds):
    from pbsolve.audit.perturb import PerturbReport, perturb_instance

    report, found = PerturbReport(), set()
    for index in range(10):
        inst = build_instance(4, index, GenerateOptions(task=T, size="default", include=[include])).instance
        if inst is not None:
            found |= {p.kind for p in perturb_instance(inst, 0, report=report)}
        if any(f"break_rule:{k}" in found for k in kinds):
            break
    assert not report.hook_errors and not report.rejected
    assert any(f"break_rule:{k}" in found for k in kinds), sorted(found)


# -- wording ------------------------------------------------------------------------------
WORDS = {  # rule kind -> words its sentence must carry for the CASES parameters
    "stock": ["stock"],
    "depot_range": ["3 minutes"],
    "deadline": ["I1", "severity deadline"],
    "max_travel": ["6 minutes"],
    "station_cover": ["in wave 1, at least 1 of North Station's 2 fire engines (ENG-N1, ENG-N2) is sent to no"],
    "dispatch_cap": ["more than 2 teams"],
    "arrives_first": ["every paramedic crew sent there arrives no later", "than every fire engine sent there"],
    "severity_priority": ["I2 is complete no later than the response to I1"],
    "same_base": ["all teams sent to I1 come from the same base"],
    "dispatch_balance": ["differ by at most 1"],
    "rest_after_long": ["60 minutes or more on scene", "not sent to any wave-2 incident"],
    "cumulative_duty": ["exceeds 60 minutes", "at most 30 minutes on scene"],
    "turnaround": ["wave-2 alert (minute 65)"],
    "new_incident": ["I4 Flooded cellar (site Riverside), wave 2", "exactly 1 paramedic crew"],
    "unit_out": ["1 of North Station's 2 fire engines (ENG-N1, ENG-N2) is out of service", "at most 1 of them"],
    "spare_cover": ["every critical incident", "within 7 minutes"],
}


@pytest.mark.parametrize(("kind", "params"), [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES])
def test_each_rule_sentence_states_its_parameters_with_their_units(kind, params):
    from pbsolve.renderers import emergency as rend

    rule = Rule(id="R1", kind=kind, tier="basic", params=(params or NoParams()).dump())
    text = rend.render_rule(rule, DATA.model_dump(mode="json"), T)
    for words in WORDS[kind]:
        assert words in text, text


def test_station_cover_of_a_single_team_keeps_it_at_home():
    from pbsolve.renderers import emergency as rend

    params = rp.StationCover(base=HS, role=PM, keep=1, wave=2).dump()
    text = rend.render_rule(
        Rule(id="R1", kind="station_cover", tier="basic", params=params), DATA.model_dump(mode="json"), T
    )
    assert "Harbour Station keeps its only paramedic crew (MED-H1) at home in wave 2" in text


def test_a_single_team_breaking_down_is_named():
    from pbsolve.renderers import emergency as rend

    rule = Rule(id="R1", kind="unit_out", tier="hard", params=rp.UnitOut(base=HS, role=FE, count=1).dump())
    text = rend.render_rule(rule, DATA.model_dump(mode="json"), T)
    assert (
        text == "Breakdown: Harbour Station's only fire engine (ENG-H1) cannot be sent to any incident in either wave."
    )


def test_the_prompt_lists_teams_by_base_depots_incidents_and_roads_with_units():
    inst = small_instance()
    for words in (
        "**Teams**",
        "running cost",
        "**Depots**",
        "haulage",
        "**Incidents:**",
        "minutes on scene",
        "**Roads**",
    ):
        assert words in inst.prompt
