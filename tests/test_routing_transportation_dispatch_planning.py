"""Transportation Dispatch Planning: the rules of motion on a hand-built shift, each rule
kind's check on hand-built plans, the checker held against the CP-SAT encoder on every
plan of a small instance (interchangeable vans in the model's canonical labelling), the
subtasks' structure, the stateful kinds, the baseline's pass rate, and answers or data
naming unknown entities."""

from __future__ import annotations

import itertools
import json
from functools import cache

import pytest
from ortools.sat.python import cp_model
from pydantic import ValidationError

from pbsolve.checkers.routing import dispatch as dp
from pbsolve.checkers.routing.dispatch import CHECKS, DispatchData, Job, Plan, Vehicle
from pbsolve.family import Draft
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from pbsolve.models.routing import dispatch as model
from pbsolve.network_kit import Road, RoadNetwork
from pbsolve.params import NoParams, Params
from pbsolve.schema import GenerationSpec, Grade, Instance, ItemResult, ObjectiveTerm, Rule
from tests.instances import subtask_instances
from tests.routing_adapters.dispatch import canonical

T = dp.TASK_ID
SPEC = GenerationSpec(family="routing", task=T, subtask="taxi_prebookings", seed=0, size="tiny")

# Depot-A 5, A-B 4, B-C 6, C-Depot 7, A-D 3: shortest Depot->B 9, Depot->D 8, B->D 7, C->D 13.
NETWORK = RoadNetwork(
    places=("Depot", "A", "B", "C", "D"),
    roads=(
        Road(a="Depot", b="A", minutes=5),
        Road(a="A", b="B", minutes=4),
        Road(a="B", b="C", minutes=6),
        Road(a="Depot", b="C", minutes=7),
        Road(a="A", b="D", minutes=3),
    ),
)


def job(jid: str, needs: str, origin: str, dest: str, handling: int, release: int, due: int, **kw: int) -> Job:
    fields = {"weight": 1, "points": 1, "load": 1} | kw
    return Job(id=jid, name=f"{jid} customer", needs=needs, origin=origin, dest=dest, handling=handling,
               release=release, due=due, **fields)  # fmt: skip


DATA = DispatchData(
    network=NETWORK,
    depot="Depot",
    shift=40,
    units="passengers",
    vehicles=(
        Vehicle(id="V1", type="van", battery=80),
        Vehicle(id="V2", type="van", battery=80),
        Vehicle(id="T1", type="truck"),
    ),
    jobs=(
        job("J1", "van", "A", "B", 3, 10, 25, weight=2, points=5, load=2),
        job("J2", "van", "C", "D", 4, 0, 40, weight=1, points=3, load=3),
        job("J3", "truck", "D", "C", 5, 5, 30, weight=3, points=7, load=4),
    ),
)


def plan(**routes: list[str]) -> Plan:
    return Plan({v.id: tuple(routes.get(v.id, ())) for v in DATA.vehicles})


GOOD = plan(V1=["J1"], V2=["J2"], T1=["J3"])  # backs 26, 32, 33; empty 14, 15, 15; V1 waits 5 for J1
BOTH = plan(V1=["J1", "J2"], T1=["J3"])  # J2 starts 23, finishes 40; V1 back 48, empty 19
SWAP = plan(V1=["J2", "J1"], T1=["J3"])  # J1 reached at 27 (no wait), finishes 34


def verdict(kind: str, p: Plan, params: Params | None = None, data: DispatchData = DATA) -> tuple[bool, str]:
    return CHECKS[kind](data, p, params or NoParams())


def test_a_vehicle_waits_only_for_a_release_and_drives_the_quickest_roads():
    tl = dp.timeline(DATA, GOOD)
    first = tl["V1"].legs[0]
    assert (first.arrive, first.start, first.finish, first.deadhead) == (5, 10, 17, 5)
    assert (tl["V1"].home, tl["V1"].back, tl["V1"].deadhead) == (9, 26, 14)
    assert [(leg.start, leg.finish) for leg in dp.timeline(DATA, BOTH)["V1"].legs] == [(10, 17), (23, 40)]
    assert dp.timeline(DATA, GOOD)["V2"].back == 32 and dp.timeline(DATA, BOTH)["V2"].back == 0
    assert dp.finishes(DATA, SWAP) == {"J2": 24, "J1": 34, "J3": 26}


# (kind, params, a plan that keeps it, a plan that breaks it, words of the reason)
CASES = [
    ("vehicle_type", None, GOOD, plan(V1=["J2"], V2=[], T1=["J3", "J1"]), "J1 needs a van but T1 is a truck"),
    ("shift_end", None, GOOD, BOTH, "V1 is back at the depot at minute 48"),
    ("hard_deadline", dp.HardDeadline(jobs=["J1"]), GOOD, SWAP, "J1 finishes at minute 34, after its deadline 25"),
    ("max_jobs", dp.MaxJobs(max=1), GOOD, BOTH, "V1 does 2 jobs (at most 1)"),
    ("max_deadhead", dp.MaxDeadhead(max=15), GOOD, BOTH, "V1 drives 19 minutes empty (at most 15)"),
    ("max_vehicles", dp.MaxVehicles(max=2), BOTH, GOOD, "3 vehicles do jobs (at most 2)"),
    ("same_vehicle", dp.SameVehicle(jobs=["J1", "J2"]), BOTH, GOOD, "J1, J2 are done by V1, V2"),
    ("different_vehicle", dp.DifferentVehicle(pairs=[("J1", "J2")]), GOOD, BOTH, "J1 and J2 are both done by V1"),
    ("max_wait", dp.MaxWait(max=4), SWAP, GOOD, "V1 waits 5 minutes for J1 (at most 4)"),
    ("direct_start", dp.DirectStart(jobs=["J1"]), GOOD, SWAP, "J1 is not the first job of V1 (J2 is)"),
    ("battery", dp.Battery(reserve=50), GOOD, BOTH, "V1's charge falls to 44 minutes on the way home (reserve 50)"),
    ("cumulative_load", dp.CumulativeLoad(max=4), GOOD, BOTH, "V1 has carried 5 passengers by J2 (at most 4)"),
    ("fleet_cap", dp.FleetCap(type="van", max=1), BOTH, GOOD, "2 vehicles of type van go out (V1, V2; at most 1)"),
    ("spare_vehicle", dp.SpareVehicle(types=["van"]), BOTH, GOOD, "every van does a job"),
]


@pytest.mark.parametrize(("kind", "params", "keeps", "breaks", "why"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_kinds_check_accepts_a_plan_that_keeps_it_and_rejects_one_that_breaks_it_with_the_reason(
    kind, params, keeps, breaks, why
):
    assert verdict(kind, keeps, params) == (True, "holds")
    ok, reason = verdict(kind, breaks, params)
    assert not ok and why in reason, reason


def test_every_rule_kind_the_checker_knows_has_a_hand_built_case():
    assert set(CHECKS) == {c[0] for c in CASES}
    assert {c.id for c in model.TASK.pool} & set(CHECKS) <= set(CHECKS)


def test_the_battery_counts_loaded_and_empty_minutes_and_an_idle_vehicle_keeps_its_charge():
    assert verdict("battery", BOTH, dp.Battery(reserve=44)) == (True, "holds")
    ok, why = verdict("battery", GOOD, dp.Battery(reserve=81))
    assert not ok and "V1's charge falls to 71 minutes after J1" in why


# -- the checker against the encoder, on every plan ----------------------------------------
OBJECTIVE = [ObjectiveTerm(id=k, kind=k) for k in ("vehicles_used", "lateness", "deadhead", "pickup_score")]


def _names(p: Plan) -> set[str]:
    """The answer variables the plan sets, in its own labelling."""
    out = set()
    for v, jobs in p.routes.items():
        stops = ["depot", *jobs, "depot"] if jobs else []
        out |= {f"x[{a},{b}]" for a, b in itertools.pairwise(stops)}
        out |= {f"y[{j},{v}]" for j in jobs}
    return out


def _assignment(p: Plan) -> set[str]:
    return _names(canonical(DATA, p))


def _all_plans() -> list[Plan]:
    """Every answer: each job on one vehicle in every order, one labelling of the vans."""
    ids, found = [j.id for j in DATA.jobs], {}
    for owners in itertools.product([v.id for v in DATA.vehicles], repeat=len(ids)):
        groups = {v.id: [j for j, o in zip(ids, owners) if o == v.id] for v in DATA.vehicles}
        for orders in itertools.product(*(itertools.permutations(g) for g in groups.values())):
            p = Plan(dict(zip(groups, orders)))
            found.setdefault(repr(sorted(_assignment(p))), p)
    return list(found.values())


ALL_PLANS = _all_plans()


def model_says(p: Plan, rules: list[Rule], objective: list[ObjectiveTerm] = OBJECTIVE) -> tuple[bool, dict[str, int]]:
    draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=rules, objective=objective)
    sm = model.build(draft)
    chosen = _assignment(p)
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


def test_the_enumeration_covers_every_answer_once():
    # 3 jobs in ordered routes on 3 vehicles: 5!/2! = 60 labelled plans; swapping the vans
    # pairs them up except the 3! plans that leave both vans idle: (60 + 6) / 2 answers
    assert len(ALL_PLANS) == 33


@pytest.mark.parametrize(("kind", "params"), [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES])
def test_encoder_and_check_agree_on_every_plan_of_a_small_instance(kind, params):
    rule = Rule(id="R1", kind=kind, tier="basic", params=(params or NoParams()).dump())
    seen = set()
    for p in ALL_PLANS:
        ok, _ = verdict(kind, p, params)
        assert model_says(p, [rule], [])[0] == ok, (kind, p)
        seen.add(ok)
    assert seen == {True, False}


def test_the_models_objective_figures_equal_the_checkers_on_every_plan():
    for p in ALL_PLANS:
        _, figures = model_says(p, [])
        assert figures == {t.id: dp.objective_value(DATA, p, t, NoParams()) for t in OBJECTIVE}, p


def test_changes_count_jobs_whose_previous_stop_differs_whichever_van_drives():
    term = ObjectiveTerm(id="changes", kind="changes", params={"existing": {"V1": ["J1"], "V2": ["J2"], "T1": ["J3"]}})
    tp = dp.CurrentRoutes(existing={"V1": ["J1"], "V2": ["J2"], "T1": ["J3"]})
    assert dp.objective_value(DATA, plan(V2=["J1"], V1=["J2"], T1=["J3"]), term, tp) == 0  # vans swapped
    assert dp.objective_value(DATA, BOTH, term, tp) == 1  # J2 now follows J1
    assert dp.objective_value(DATA, SWAP, term, tp) == 1  # J1 now follows J2
    for p in ALL_PLANS[::5]:
        assert model_says(p, [], [term])[1] == {"changes": dp.objective_value(DATA, p, term, tp)}


def test_the_model_admits_only_the_canonical_labelling_of_interchangeable_vans():
    draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=[], objective=[])
    sm = model.build(draft)
    assert sm.symmetry is not None and sm.symmetry.in_model
    swapped = plan(V2=["J1"], V1=["J2"], T1=["J3"])
    assert dp.TASK.evaluate(DATA, [], OBJECTIVE, swapped) == dp.TASK.evaluate(DATA, [], OBJECTIVE, GOOD)
    good = [int(v.name in _names(GOOD)) for v in sm.answer_literals]
    other = [int(v.name in _names(swapped)) for v in sm.answer_literals]
    assert other != good
    assert {sm.symmetry.canonical(good) == good, sm.symmetry.canonical(other) == good} == {True}
    assert model_says(swapped, []) == model_says(GOOD, [])  # the model reads the canonical labelling


# -- subtasks ---------------------------------------------------------------------------
@cache
def insts(subtask: str) -> list[Instance]:
    return subtask_instances(T, subtask, 2)


def kinds(inst: Instance) -> set[str]:
    return {r.kind for r in inst.rules}


def terms(inst: Instance) -> list[str]:
    return [t.kind for t in inst.objective]


def test_there_are_five_subtasks_each_with_its_vocabulary_and_the_pickup_score_last():
    assert len(model.TASK.subtasks) == 5
    assert {s.id for s in model.TASK.subtasks} == set(model.VOCAB) == set(model.OBJECTIVES) == set(model.FORCED)
    assert all(o[-1] == "pickup_score" for o in model.OBJECTIVES.values())


@pytest.mark.parametrize(
    ("subtask", "kind", "first"),
    [
        ("taxi_prebookings", None, "lateness"),
        ("freight_haulage", "hard_deadline", "vehicles_used"),
        ("patient_transport", "same_vehicle", "lateness"),
        ("airport_shuttles", "battery", "lateness"),
        ("waste_collection", "cumulative_load", "deadhead"),
    ],
)
def test_each_subtask_carries_its_structural_rule_and_objective_order(subtask, kind, first):
    for inst in insts(subtask):
        assert kind is None or kind in kinds(inst)
        assert terms(inst)[0] == first or inst.objective[0].kind == "changes"
        assert inst.data["units"] == model.VOCAB[subtask].units
        assert inst.data["depot"] == model.VOCAB[subtask].depot


def test_airport_shuttles_have_electric_vehicles_whose_range_the_prompt_states():
    for inst in insts("airport_shuttles"):
        electric = [v for v in inst.data["vehicles"] if v["battery"] is not None]
        assert electric and all(v["type"] == "electric shuttle" for v in electric)
        assert f"range {electric[0]['battery']} driving minutes" in inst.prompt


def test_no_two_jobs_share_a_pickup_or_a_drop_off():
    for inst in insts("taxi_prebookings") + insts("waste_collection"):
        jobs = inst.data["jobs"]
        assert len({j["origin"] for j in jobs}) == len({j["dest"] for j in jobs}) == len(jobs)


# -- stateful kinds ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["battery", "cumulative_load"])
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


# -- responders, bad answers and bad data --------------------------------------------------
@cache
def small_instance() -> Instance:
    for index in range(10):
        inst = build_instance(2, index, GenerateOptions(task=T, size="small")).instance
        if inst is not None and inst.certificate.status == "optimal" and not inst.mechanisms:
            return inst
    raise AssertionError("no plain small instance")


def format_item(inst: Instance, g: Grade) -> ItemResult:
    fmt = next(it.id for it in inst.checklist if it.rule == "format")
    return next(i for i in g.items if i.id == fmt)


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("vehicle", "Zed", "names unknown vehicle 'Zed'"),
        ("jobs", ["J99"], "names unknown job 'J99'"),
        ("vehicle", 7, "needs a string 'vehicle' and a list 'jobs'"),
        ("jobs", "J1", "needs a string 'vehicle' and a list 'jobs'"),
    ],
)
def test_an_answer_naming_an_unknown_vehicle_or_job_fails_the_format_item_with_a_reason(field, value, why):
    inst = small_instance()
    answer = json.loads(json.dumps(inst.reference))
    answer["routes"][0][field] = value
    g = grade(inst, json.dumps(answer))
    fmt = format_item(inst, g)
    assert not fmt.passed and why in fmt.reason, fmt.reason
    assert g.all_pass == 0


def test_an_answer_missing_a_job_repeating_one_or_a_vehicle_fails_the_format_item():
    inst = small_instance()
    answer = json.loads(json.dumps(inst.reference))
    answer["routes"][0]["jobs"] = answer["routes"][0]["jobs"][1:]
    assert "missing from the routes" in format_item(inst, grade(inst, json.dumps(answer))).reason
    answer = json.loads(json.dumps(inst.reference))
    answer["routes"][0]["jobs"].append(answer["routes"][0]["jobs"][0])
    assert "appears more than once" in format_item(inst, grade(inst, json.dumps(answer))).reason
    answer = json.loads(json.dumps(inst.reference))
    answer["routes"].append({"vehicle": answer["routes"][0]["vehicle"], "jobs": []})
    assert "has more than one route" in format_item(inst, grade(inst, json.dumps(answer))).reason


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"depot": "Nowhere"}, "the depot Nowhere is not a place of the network"),
        ({"jobs": [{**DATA.jobs[0].model_dump(), "origin": "Mars"}]}, "job J1's place Mars is not a place"),
        ({"jobs": [{**DATA.jobs[0].model_dump(), "needs": "tram"}]}, "needs vehicle type 'tram'"),
        ({"jobs": [{**DATA.jobs[0].model_dump(), "dest": "A"}]}, "starts and ends at the same place"),
        ({"vehicles": [DATA.vehicles[0].model_dump()] * 2}, "vehicle ids must be distinct"),
    ],
)
def test_malformed_instance_data_is_a_clear_error(change, why):
    with pytest.raises(ValidationError, match=why):
        DispatchData.model_validate({**DATA.model_dump(mode="json"), **change})


def test_perturb_finds_a_confirmed_one_move_break_for_the_common_rule_kinds():
    from pbsolve.audit.perturb import PerturbReport, perturb_instance

    report, found = PerturbReport(), set()
    for index in range(10):
        inst = build_instance(4, index, GenerateOptions(task=T, size="default")).instance
        if inst is not None:
            found |= {p.kind for p in perturb_instance(inst, 0, report=report)}
    assert not report.hook_errors and not report.rejected
    assert {"break_rule:vehicle_type", "break_rule:shift_end"} <= found
    assert {"suboptimal", "suboptimal_claims_optimum"} <= found
