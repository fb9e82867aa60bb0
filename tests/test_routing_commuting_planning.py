"""Commuting Planning: hand-built trips for every rule kind's check, the CP-SAT encoders
held against the checks on every plan of a small instance, the answer reader's reasons,
the five subtasks' structures, and the baseline."""

from __future__ import annotations

import itertools
import json
from functools import cache

import pytest
from ortools.sat.python import cp_model

from pbsolve.checkers.routing import commuting as cm
from pbsolve.checkers.routing.commuting import CHECKS, CommuteData, Commuter, Drive, Line, ParkRide, Plan, Trip
from pbsolve.family import Draft
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from pbsolve.models.routing import commuting as model
from pbsolve.network_kit import Road, RoadNetwork
from pbsolve.params import NoParams, Params
from pbsolve.schema import GenerationSpec, Grade, Instance, ItemResult, ObjectiveTerm, Rule
from tests.instances import subtask_instances

T = cm.TASK_ID
SPEC = GenerationSpec(family="routing", task=T, subtask="morning_commute", seed=0, size="tiny")
M, S, E, OT = "Mill Road", "Station Square", "Elm Street", "Old Town"

# Four stops; Bus 1 runs Mill Road -> Elm Street, Tram 2 Elm Street -> Old Town, one spare place each.
DATA = CommuteData(
    network=RoadNetwork(
        places=(M, S, E, OT),
        roads=(
            Road(a=M, b=S, minutes=10),
            Road(a=M, b=E, minutes=25),
            Road(a=S, b=E, minutes=8),
            Road(a=E, b=OT, minutes=6),
        ),
    ),
    lines=(
        Line(id="Bus 1", mode="bus", origin=M, dest=E, minutes=5, fare=2, seats=1, departures=(425, 435)),
        Line(id="Tram 2", mode="tram", origin=E, dest=OT, minutes=3, fare=1, seats=1, departures=(432, 445)),
    ),
    commuters=(
        Commuter(id="Ana", origin=M, dest=OT, ready=420, deadline=450),
        Commuter(id="Ben", origin=S, dest=OT, ready=420, deadline=460),
    ),
    transfer=2,
    max_legs=3,
)


def trip(cid: str, *legs: tuple[str, ...], data: CommuteData = DATA) -> Trip:
    t, why = cm.trip_of(data, data.commuter_by_id[cid], tuple(legs))
    assert t is not None, why
    return t


BUS_TRAM = trip("Ana", ("ride", "Bus 1", "425"), ("ride", "Tram 2", "432"))  # arrives 07:15
BUS_WALK = trip("Ana", ("ride", "Bus 1", "425"), ("walk", OT))  # arrives 07:16
ANA_WALKS = trip("Ana", ("walk", S), ("walk", E), ("walk", OT))  # 24 minutes walking
ANA_LATE = trip("Ana", ("walk", E), ("walk", OT))  # arrives 07:31
BEN_WALKS = trip("Ben", ("walk", E), ("walk", OT))  # arrives 07:14
BEN_EARLY_TRAM = trip("Ben", ("walk", E), ("ride", "Tram 2", "432"))
BEN_LATE_TRAM = trip("Ben", ("walk", E), ("ride", "Tram 2", "445"))  # arrives 07:28
GOOD = Plan({"Ana": BUS_TRAM, "Ben": BEN_WALKS})


def plan(ana: Trip, ben: Trip) -> Plan:
    return Plan({"Ana": ana, "Ben": ben})


def verdict(kind: str, p: Plan, params: Params | None = None, data: CommuteData = DATA) -> tuple[bool, str]:
    return CHECKS[kind](data, p, params or NoParams())


PARKED = model.cm_replace(
    DATA,
    parkings=(ParkRide(stop=E, spaces=1, fee=3),),
    commuters=tuple(c.model_copy(update={"drives": (Drive(stop=E, minutes=5),)}) for c in DATA.commuters),
)
BOTH_PARK = Plan({c.id: trip(c.id, ("drive", E), ("walk", OT), data=PARKED) for c in PARKED.commuters})
SLOW_CHANGE = model.cm_replace(DATA, transfer=3)

# (kind, params, data, a plan that keeps it, a plan that breaks it, words of the reason)
CASES = [
    ("deadline", None, DATA, GOOD, plan(ANA_LATE, BEN_WALKS), "after the deadline 07:30"),
    ("seat_capacity", None, DATA, GOOD, plan(BUS_TRAM, BEN_EARLY_TRAM), "2 commuters ride Tram 2 at 07:12"),
    ("transfer_time", None, SLOW_CHANGE, plan(BUS_WALK, BEN_WALKS), GOOD, "changes rides in 2 minutes"),
    ("walk_limit", cm.Commuters(commuters=["Ben"], max=12), DATA, plan(BUS_TRAM, BEN_LATE_TRAM), GOOD, "Ben walks 14"),
    ("fare_cap", cm.Commuters(commuters=["Ana"], max=2), DATA, plan(BUS_WALK, BEN_WALKS), GOOD, "Ana pays 3"),
    ("max_transfers", cm.Commuters(commuters=["Ana"], max=0), DATA, plan(BUS_WALK, BEN_WALKS), GOOD, "1 times"),
    ("parking_spaces", cm.Parking(stops=[E]), PARKED, GOOD, BOTH_PARK, "2 cars park at Elm Street"),
    ("buffer", cm.Buffer(commuters=["Ben"], minutes=20), DATA, GOOD, plan(BUS_TRAM, BEN_LATE_TRAM), "later than 07:20"),
    (
        "arrival_order",
        cm.ArrivalOrder(pairs=[("Ben", "Ana")], gap=1),
        DATA,
        GOOD,
        plan(BUS_TRAM, BEN_LATE_TRAM),
        "not 1 minutes apart",
    ),
    ("travel_balance", cm.Balance(max=1), DATA, GOOD, plan(BUS_TRAM, BEN_LATE_TRAM), "more than 1 apart"),
    ("shared_ride", cm.Pair(first="Ana", second="Ben"), DATA, plan(BUS_TRAM, BEN_EARLY_TRAM), GOOD, "share no"),
    ("escort", cm.Escorts(pairs=[("Ben", "Ana")]), DATA, GOOD, plan(BUS_TRAM, BEN_LATE_TRAM), "without Ana"),
    ("via_stop", cm.ViaStop(commuter="Ana", stop=S), DATA, plan(ANA_WALKS, BEN_WALKS), GOOD, "does not pass"),
    ("walk_fatigue", cm.WalkFatigue(after=9, longest=7), DATA, GOOD, plan(ANA_WALKS, BEN_WALKS), "walks 8 minutes"),
    ("ride_rest", cm.RideRest(after=4, rest=3), DATA, plan(BUS_WALK, BEN_WALKS), GOOD, "2 minutes after reaching"),
    ("delay_robust", cm.Delay(minutes=3), DATA, plan(BUS_WALK, BEN_WALKS), GOOD, "would miss Tram 2"),
    ("cancelled", cm.Cancelled(line="Tram 2", departure=432), DATA, plan(BUS_WALK, BEN_WALKS), GOOD, "cancelled"),
    ("closed_stop", cm.ClosedStop(stop=S), DATA, Plan({"Ana": BUS_TRAM}), Plan({"Ana": ANA_WALKS}), "closed stop"),
]


@pytest.mark.parametrize(("kind", "params", "data", "keeps", "breaks", "why"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_kinds_check_accepts_a_plan_that_keeps_it_and_rejects_one_that_breaks_it_with_the_reason(
    kind, params, data, keeps, breaks, why
):
    assert verdict(kind, keeps, params, data) == (True, "holds")
    ok, reason = verdict(kind, breaks, params, data)
    assert not ok and why in reason, reason


def test_every_rule_kind_the_checker_knows_has_a_hand_built_case():
    assert {c[0] for c in CASES} == set(CHECKS) == set(model.ENCODERS)


def test_a_trip_is_replayed_leg_by_leg_walks_at_once_rides_at_their_departure():
    assert BUS_TRAM.stops == (M, E, OT) and BUS_TRAM.ends == (430, 435) and BUS_TRAM.arrival == 435
    assert BEN_LATE_TRAM.starts == (420, 445) and BEN_LATE_TRAM.arrival == 448 and BEN_LATE_TRAM.walking == 8
    assert cm.transfers(BUS_TRAM) == [(430, 432)]


@pytest.mark.parametrize(
    ("legs", "why"),
    [
        ((("walk", OT),), "no walk link from Mill Road to Old Town"),
        ((("ride", "Tram 2", "432"),), "leaves from Elm Street, not from Mill Road"),
        ((("ride", "Bus 1", "426"), ("walk", OT)), "no departure at 07:06"),
        ((("walk", S), ("walk", E), ("ride", "Tram 2", "432")), "has left when Ana is there at 07:18"),
        ((("walk", S), ("walk", M)), "reaches Mill Road twice"),
        ((("ride", "Bus 1", "425"),), "ends at Elm Street, not at Old Town"),
        ((("walk", S), ("walk", E), ("walk", S), ("walk", E)), "4 legs (at most 3)"),
        ((("drive", E), ("walk", OT)), "cannot drive to Elm Street"),
    ],
)
def test_legs_that_make_no_trip_are_refused_with_the_reason(legs, why):
    t, reason = cm.trip_of(DATA, DATA.commuter_by_id["Ana"], legs)
    assert t is None and why in reason


def test_the_day_pass_caps_ride_fares_and_parking_fees_come_on_top():
    capped = model.cm_replace(PARKED, day_pass=2)
    assert cm.fare_of(capped, trip("Ana", ("ride", "Bus 1", "425"), ("ride", "Tram 2", "432"), data=capped)) == 2
    assert cm.fare_of(capped, trip("Ana", ("drive", E), ("ride", "Tram 2", "445"), data=capped)) == 3 + 1


def test_a_late_ride_is_replayed_through_the_walks_after_it():
    # Bus 1 at 07:05 then a walk: 3 minutes late still arrives 07:19, before the 07:30 deadline
    assert cm.survives_delay(DATA, DATA.commuter_by_id["Ana"], BUS_WALK, 3) == (True, "holds")
    ok, why = cm.survives_delay(DATA, DATA.commuter_by_id["Ana"], BUS_WALK, 15)
    assert not ok and "after the deadline" in why


# -- the model against the checks ---------------------------------------------------------
def all_plans(data: CommuteData) -> list[Plan]:
    by = {c.id: [trip(c.id, *o.legs, data=data) for o in model.trips(data)[c.id]] for c in data.commuters}
    return [Plan(dict(zip(by, combo))) for combo in itertools.product(*by.values())]


def model_says(data: CommuteData, p: Plan, rules: list[Rule], objective: list[ObjectiveTerm] = ()) -> tuple[bool, dict]:
    draft = Draft(spec=SPEC, data=data.model_dump(mode="json"), rules=rules, objective=list(objective))
    sm = model.build(draft)
    chosen = {f"y[{cid},{cm.trip_key(t.legs)}]" for cid, t in p.trips.items()}
    for var in sm.answer_literals:
        if var.name.split(",")[0][2:] in p.trips:
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


@pytest.mark.parametrize("data", [DATA, PARKED], ids=["walk_and_ride", "park_and_ride"])
def test_the_model_enumerates_exactly_the_trips_the_checker_accepts_up_to_the_leg_limit(data):
    for c in data.commuters:
        found = {o.legs for o in model.trips(data)[c.id]}
        moves = [(mode, s) for s in data.network.places for mode in ("walk", "drive")] + [
            ("ride", x.id, str(t)) for x in data.lines for t in x.departures
        ]
        brute = {
            legs
            for n in range(1, data.max_legs + 1)
            for legs in itertools.product(moves, repeat=n)
            if cm.trip_of(data, c, legs)[0] is not None
        }
        assert found == brute, c.id


@pytest.mark.parametrize("subtask", [s.id for s in model.TASK.subtasks])
def test_the_models_trips_and_the_checkers_own_search_agree_on_generated_instances(subtask):
    for inst in insts(subtask):
        d = CommuteData.model_validate(inst.data)
        for c in d.commuters:
            assert [o.legs for o in model.trips(d)[c.id]] == [t.legs for t in cm.every_trip(d, c)], c.id


@pytest.mark.parametrize("case", [c for c in CASES if c[0] != "closed_stop"], ids=lambda c: c[0])
def test_encoder_and_check_agree_on_every_plan_of_a_small_instance(case):
    kind, params, data = case[0], case[1], case[2]
    rule = Rule(id="R1", kind=kind, tier="basic", params=(params or NoParams()).dump())
    outcomes = set()
    for p in all_plans(data):
        ok, _ = verdict(kind, p, params, data)
        assert model_says(data, p, [rule])[0] == ok, (kind, p)
        outcomes.add(ok)
    assert outcomes == {True, False}


def test_the_closed_stop_encoder_forbids_every_trip_through_the_stop():
    rule = Rule(id="R1", kind="closed_stop", tier="hard", params=cm.ClosedStop(stop=S).dump())
    for p in all_plans(DATA):
        assert model_says(DATA, p, [rule])[0] == verdict("closed_stop", p, cm.ClosedStop(stop=S))[0]


OBJECTIVE = [ObjectiveTerm(id=k, kind=k) for k in ("travel_minutes", "fares", "walking", "route_score")]


def test_the_models_objective_figures_equal_the_checkers_on_every_plan():
    for p in all_plans(PARKED)[::3]:
        _, figures = model_says(PARKED, p, [], OBJECTIVE)
        assert figures == {t.id: cm.objective_value(PARKED, p, t, NoParams()) for t in OBJECTIVE}


def test_the_route_score_weighs_stops_and_lines_by_their_listed_numbers():
    term = ObjectiveTerm(id="route_score", kind="route_score")
    # Bus 1 (line 1) first departure: 20 + 1; Tram 2 (line 2) first departure: 40 + 1; Ben walks to stops 3 and 4
    assert cm.objective_value(DATA, GOOD, term, NoParams()) == 21 + 41 + 3 + 4


# -- subtasks ---------------------------------------------------------------------------
@cache
def insts(subtask: str) -> list[Instance]:
    return subtask_instances(T, subtask, 3)


def kinds(inst: Instance) -> set[str]:
    return {r.kind for r in inst.rules}


def terms(inst: Instance) -> list[str]:
    return [t.kind for t in inst.objective]


def test_there_are_five_subtasks_each_with_its_own_objective_order():
    assert len(model.TASK.subtasks) == 5
    orders = {s.id: tuple(model.OBJECTIVES[s.id]) for s in model.TASK.subtasks}
    assert len(set(orders.values())) >= 4 and all(o[-1] == "route_score" for o in orders.values())


def test_a_morning_commute_states_a_minimum_transfer_time_and_minimises_travel_first():
    for inst in insts("morning_commute"):
        assert "transfer_time" in kinds(inst) and terms(inst)[0] == "travel_minutes"


def test_an_evening_return_has_a_pick_up_stop_on_the_way():
    for inst in insts("evening_return"):
        via = next(r for r in inst.rules if r.kind == "via_stop")
        assert via.params["stop"] in inst.data["network"]["places"]
        assert inst.data["commuters"][0]["ready"] >= 17 * 60


def test_park_and_ride_has_car_parks_with_spaces_and_car_owners_who_may_drive_there():
    for inst in insts("park_and_ride"):
        assert inst.data["parkings"] and "parking_spaces" in kinds(inst)
        assert any(c["drives"] for c in inst.data["commuters"]) and terms(inst)[0] == "fares"
        assert "Park-and-ride car parks" in inst.prompt


def test_a_school_run_has_children_who_ride_only_with_their_escort():
    for inst in insts("school_run"):
        children = {c["id"] for c in inst.data["commuters"] if c["child"]}
        escort = next(r for r in inst.rules if r.kind == "escort")
        assert children and {child for child, _ in escort.params["pairs"]} == children


def test_a_night_shift_has_a_sparse_timetable_a_day_pass_and_a_walking_limit():
    for inst in insts("night_shift"):
        assert inst.data["day_pass"] and "walk_limit" in kinds(inst)
        assert all(len(x["departures"]) <= 2 and x["departures"][0] >= 22 * 60 for x in inst.data["lines"])


@pytest.mark.parametrize("kind", ["walk_fatigue", "ride_rest"])
def test_a_stateful_kind_is_sampled_on_request_and_its_reference_passes(kind):
    found = None
    for index in range(20):
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


def _with(inst: Instance, edit) -> str:  # type: ignore[no-untyped-def]
    answer = json.loads(json.dumps(inst.reference))
    edit(answer["trips"])
    return json.dumps(answer)


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda rows: rows[0].update(commuter="Zed"), "names unknown commuter 'Zed'"),
        (lambda rows: rows[0]["legs"].__setitem__(0, {"mode": "walk", "to": "Atlantis"}), "no listed stop"),
        (
            lambda rows: rows[0]["legs"].__setitem__(0, {"mode": "ride", "line": "Ferry 9", "departs": "07:00"}),
            "no listed line",
        ),
        (lambda rows: rows[0]["legs"].__setitem__(0, {"mode": "ride", "line": "x", "departs": 7}), "no listed line"),
        (lambda rows: rows[0]["legs"].__setitem__(0, {"mode": "fly", "to": "x"}), "unknown mode"),
        (lambda rows: rows[0].update(arrival="23:59"), "is not the"),
        (lambda rows: rows[0].update(legs="all of them"), "'legs' is missing"),
        (lambda rows: rows.pop(0), "missing from the trips"),
        (lambda rows: rows.append(rows[0]), "appears more than once"),
    ],
)
def test_an_answer_naming_unknown_things_or_trips_that_do_not_connect_fails_the_format_item(edit, why):
    inst = small_instance()
    g = grade(inst, _with(inst, edit))
    fmt = format_item(inst, g)
    assert not fmt.passed and why in fmt.reason, fmt.reason
    assert g.all_pass == 0


def test_malformed_instance_data_is_a_clear_error():
    bad = DATA.model_dump(mode="json")
    bad["lines"][0]["departures"] = [435, 425]
    with pytest.raises(ValueError, match="increasing order"):
        CommuteData.model_validate(bad)
    bad = DATA.model_dump(mode="json")
    bad["commuters"][0]["dest"] = "Atlantis"
    with pytest.raises(ValueError, match="commuter Ana"):
        CommuteData.model_validate(bad)


def test_perturb_finds_a_confirmed_one_move_break_for_the_common_rule_kinds():
    from pbsolve.audit.perturb import PerturbReport, perturb_instance

    report, found = PerturbReport(), set()
    for index in range(10):
        inst = build_instance(4, index, GenerateOptions(task=T, size="default")).instance
        if inst is not None:
            found |= {p.kind for p in perturb_instance(inst, 0, report=report)}
    assert not report.hook_errors and not report.rejected
    assert {"break_rule:deadline", "break_rule:seat_capacity"} <= found, found


@pytest.mark.parametrize("size", ["tiny", "small", "default", "large"])
def test_every_size_certifies_instances_with_distinct_line_names(size):
    made = 0
    for index in range(6):
        inst = build_instance(6, index, GenerateOptions(task=T, size=size)).instance
        if inst is not None:
            made += 1
            names = [x["id"] for x in inst.data["lines"]]
            assert len(set(names)) == len(names) == model.SIZES.of(size).lines
    assert made >= 3


@pytest.mark.parametrize(
    "trips",
    [
        None,
        "all",
        [None],
        [{"commuter": None}],
        [{"commuter": "x", "legs": [], "arrival": "07:00"}],
        [{"commuter": "Ana", "legs": [[1, 2]], "arrival": 5}],
        [{"commuter": "Ana", "legs": [{"mode": None}], "arrival": "07:00"}],
        [{"commuter": "Ana", "legs": [{"mode": "ride", "line": ["Bus"], "departs": {"h": 7}}]}],
        [{"commuter": "Ana", "legs": [{"mode": "walk", "to": "x" * 10_000}] * 500}],
    ],
)
def test_malformed_trips_get_a_grade_and_fail_the_format_item_never_an_exception(trips):
    inst = small_instance()
    g = grade(inst, json.dumps({"feasible": True, "trips": trips, "objective": {}}))
    assert g.all_pass == 0 and not format_item(inst, g).passed
