"""Travel Itinerary Planning: the timing convention, each rule kind's check on hand-built
plans, the checker held against the CP-SAT encoder (feasibility and figures) on every plan
of a small trip, the subtasks' structure, the order score's tie-breaking, answers naming
unknown or misplaced stops, malformed data and the baseline's pass rate."""

from __future__ import annotations

import itertools
import json
import random
from functools import cache

import pytest
from ortools.sat.python import cp_model
from pydantic import ValidationError

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.routing import itinerary as it
from pbsolve.checkers.routing.itinerary import CHECKS, Day, Plan, Sight, Stop, TripData, schedule
from pbsolve.family import Draft, checker
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from pbsolve.models.routing import itinerary as model
from pbsolve.network_kit import Road, RoadNetwork
from pbsolve.params import NoParams, Params, make_rule
from pbsolve.schema import GenerationSpec, Instance, ObjectiveTerm
from tests.routing_adapters.itinerary import ADAPTER

T = it.TASK_ID
H = "Hotel Aurora"
NETWORK = RoadNetwork(
    places=(H, "Cathedral", "Zoo", "Art Gallery"),
    roads=(
        Road(a=H, b="Cathedral", minutes=10),
        Road(a=H, b="Zoo", minutes=15),
        Road(a=H, b="Art Gallery", minutes=20),
        Road(a="Cathedral", b="Zoo", minutes=10),
        Road(a="Zoo", b="Art Gallery", minutes=10),
    ),
)


def sight(name: str, category: str, minutes: int, price: int, opens: int, closes: int, **extra: object) -> Sight:
    return Sight(
        id=name, category=category, value=len(name), priority=len(name) + 1, minutes=minutes, price=price,
        opens=opens, closes=closes, **extra,
    )  # fmt: skip


DATA = TripData(
    city="Ghent",
    network=NETWORK,
    days=(
        Day(id="Thu", start_place=H, end_place=H, start=540, end=1020),
        Day(id="Fri", start_place=H, end_place=H, start=540, end=900),
    ),
    sights=(
        sight("Cathedral", "landmark", 60, 5, 540, 720),
        sight("Zoo", "park", 120, 12, 600, 1020, closed_on=("Fri",)),
        sight("Art Gallery", "museum", 90, 8, 600, 960, booked_day="Fri", booked_at=660),
    ),
    stops=(Stop(id="Rest (Thu)", kind="rest", day="Thu", place=H, minutes=60, earliest=720, latest=780),),
)
GOOD = Plan({"Thu": ("Cathedral", "Rest (Thu)", "Zoo"), "Fri": ("Art Gallery",)})
LIGHT = Plan({"Thu": ("Cathedral", "Rest (Thu)"), "Fri": ("Art Gallery",)})


def plan(thu: tuple[str, ...], fri: tuple[str, ...]) -> Plan:
    return Plan({"Thu": thu, "Fri": fri})


def verdict(kind: str, p: Plan, params: Params | None = None, data: TripData = DATA) -> tuple[bool, str]:
    return CHECKS[kind](data, p, params or NoParams())


def test_times_wait_for_opening_and_booked_times_and_the_margin_delays_every_leg():
    thu = schedule(DATA, "Thu", GOOD.days["Thu"])
    assert [(v.stop, v.arrive, v.start, v.end) for v in thu.visits] == [
        ("Cathedral", 550, 550, 610),
        ("Rest (Thu)", 620, 720, 780),  # waits for the rest window
        ("Zoo", 795, 795, 915),
    ]
    assert (thu.back, thu.travel) == (930, 50)
    fri = schedule(DATA, "Fri", GOOD.days["Fri"])
    assert (fri.visits[0].arrive, fri.visits[0].start, fri.back) == (560, 660, 770)  # waits for the booking
    late = schedule(DATA, "Thu", GOOD.days["Thu"], delay=10)
    assert (late.visits[0].start, late.back, late.travel) == (560, 950, 50)  # travel figures never include the margin


# (kind, params, a plan that keeps it, a plan that breaks it, words of the reason, data)
CASES = [
    ("opening_hours", None, GOOD, plan(("Rest (Thu)", "Cathedral", "Zoo"), ()), "after it closes at 12:00", DATA),
    (
        "return_by",
        None,
        LIGHT,
        GOOD,
        "return to Hotel Aurora is at 15:30, after 15:00",
        it.replaced(DATA, days=(DATA.days[0].model_copy(update={"end": 900}), DATA.days[1])),
    ),
    (
        "closing_days",
        None,
        GOOD,
        plan(("Cathedral", "Rest (Thu)"), ("Art Gallery", "Zoo")),
        "Zoo is closed on Fri",
        DATA,
    ),
    ("reservations", None, GOOD, plan(("Art Gallery", "Rest (Thu)"), ()), "booked for Fri but visited on Thu", DATA),
    (
        "reservations",
        None,
        GOOD,
        plan((), ("Zoo", "Art Gallery")),
        "reached at 12:10, after its booked time 11:00",
        DATA,
    ),
    ("fixed_stops", None, GOOD, plan(("Cathedral", "Zoo"), ("Art Gallery",)), "Rest (Thu) is missing from Thu", DATA),
    ("daily_budget", it.DailyBudget(max=16), LIGHT, GOOD, "Thu's tickets cost 17 euros", DATA),
    ("daily_travel", it.DailyTravel(max=45), LIGHT, GOOD, "Thu has 50 minutes of travel", DATA),
    ("must_see", it.MustSee(sights=["Zoo"]), GOOD, LIGHT, "must-see Zoo not visited", DATA),
    ("max_visits", it.MaxVisits(max=1), LIGHT, GOOD, "Thu has 2 sights", DATA),
    (
        "precedence",
        it.Precedence(pairs=[("Cathedral", "Zoo")]),
        GOOD,
        plan(("Zoo", "Rest (Thu)", "Cathedral"), ()),
        "Zoo is visited but not after Cathedral",
        DATA,
    ),
    (
        "precedence",
        it.Precedence(pairs=[("Cathedral", "Zoo")]),
        GOOD,
        plan(("Rest (Thu)", "Zoo"), ()),
        "Zoo is visited but not after Cathedral",
        DATA,
    ),
    (
        "same_day",
        it.SameDay(sights=("Cathedral", "Zoo")),
        GOOD,
        plan(("Cathedral", "Rest (Thu)"), ("Art Gallery", "Zoo")),
        "are not on one day",
        DATA,
    ),
    ("category_cap", it.CategoryCap(category="park", max=0), LIGHT, GOOD, "1 sights of category park", DATA),
    (
        "balance",
        it.Balance(max=0),
        plan(("Cathedral", "Rest (Thu)"), ("Art Gallery",)),
        GOOD,
        "more than 0 apart",
        DATA,
    ),
    ("trip_budget", it.TripBudget(max=24), LIGHT, GOOD, "25 euros over the trip", DATA),
    (
        "carry_budget",
        it.CarryBudget(allowance=13),
        plan(("Cathedral", "Rest (Thu)"), ("Art Gallery", "Zoo")),
        GOOD,
        "through Thu tickets cost 17 euros",
        DATA,
    ),  # the kept plan spends 20 on Fri: the 8 unspent on Thu carry over
    ("tiring_day", it.TiringDay(minutes=120, light=60), LIGHT, GOOD, "Thu has 180 minutes of sightseeing", DATA),
    (
        "stamina",
        it.Stamina(minutes=100),
        LIGHT,
        GOOD,
        "on Thu Zoo brings 120 minutes of sightseeing since the last rest",
        DATA,
    ),
    (
        "stamina",
        it.Stamina(minutes=150),
        GOOD,
        plan(("Cathedral", "Zoo", "Rest (Thu)"), ()),
        "Zoo brings 180 minutes",
        DATA,
    ),  # the rest comes too late: Cathedral's hour still counts at the Zoo
    ("sight_closure", it.SightClosure(sight="Zoo", days=["Thu"]), LIGHT, GOOD, "Zoo cannot be visited on Thu", DATA),
    (
        "travel_margin",
        it.TravelMargin(minutes=60),
        LIGHT,
        GOOD,
        "after 17:00 with 60 more minutes on every leg",
        DATA,
    ),
]


@pytest.mark.parametrize(("kind", "params", "keep", "broken", "words", "data"), CASES)
def test_each_rule_check_keeps_one_plan_and_names_why_another_breaks_it(kind, params, keep, broken, words, data):
    assert verdict(kind, keep, params, data) == (True, "holds")
    ok, why = verdict(kind, broken, params, data)
    assert not ok and words in why


def test_every_rule_kind_of_the_pool_and_the_mechanisms_has_a_case():
    assert {c[0] for c in CASES} == set(it.RULE_PARAMS)


def _draft(rules, data: TripData = DATA, objective: list[ObjectiveTerm] | None = None) -> Draft:
    spec = GenerationSpec(family="routing", task=T, subtask="family_trip", seed=0, size="tiny")
    return Draft(
        spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective or model.objective_terms()
    )


def _all_plans(data: TripData) -> list[Plan]:
    inst = Instance.model_construct(data=data.model_dump(mode="json"))
    return list(ADAPTER.all_plans(inst, None, []))


def _model_accepts(data: TripData, rules, p: Plan, objective: list[ObjectiveTerm] | None = None):
    """Feasibility of the model with the plan's arcs fixed (as hints), and its figures."""
    sm = model.build(_draft(rules, data, objective))
    inst = Instance.model_construct(data=data.model_dump(mode="json"))
    fixed = ADAPTER.assignment(inst, p)
    for lit in sm.answer_literals:
        sm.model.add(lit == fixed.get(lit.name, 0))
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.solve(sm.model)
    if status == cp_model.INFEASIBLE:
        return False, {}
    assert status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    return True, {tid: int(solver.value(expr)) for tid, expr, _ in sm.objective_terms}


@cache
def _plans() -> tuple[Plan, ...]:
    return tuple(_all_plans(DATA))


@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_encoder_accepts_exactly_the_plans_the_check_accepts(case):
    kind, params, _, _, _, data = CASES[case]
    rule = make_rule(kind, "basic", params or NoParams(), "R1")
    plans = _plans() if data is DATA else tuple(_all_plans(data))
    rng = random.Random(case)
    for p in rng.sample(plans, min(60, len(plans))):
        accepted, _ = _model_accepts(data, [rule], p)
        assert accepted == verdict(kind, p, params, data)[0], (kind, p)


def test_the_model_figures_equal_the_checker_figures_on_every_plan():
    changes = ObjectiveTerm(
        id="changes", kind="changes", params={"existing": {"Thu": ["Zoo"], "Fri": ["Art Gallery", "Cathedral"]}}
    )
    terms = [*model.objective_terms(), changes]
    tc = checker("routing").task_checker(T)
    for p in _plans()[::7]:
        ok, figures = _model_accepts(DATA, [], p, terms)
        assert ok
        _, values = tc.evaluate(DATA, [], terms, p)
        assert figures == values, p


def test_the_order_score_separates_a_day_route_from_its_reverse():
    there = plan(("Cathedral", "Zoo"), ())
    back = plan(("Zoo", "Cathedral"), ())
    tc = checker("routing").task_checker(T)
    terms = model.objective_terms()
    _, a = tc.evaluate(DATA, [], terms, there)
    _, b = tc.evaluate(DATA, [], terms, back)
    assert (a["value_missed"], a["travel_minutes"]) == (b["value_missed"], b["travel_minutes"])
    assert a["order_score"] != b["order_score"]


def _answer(rows: list[dict[str, object]]) -> dict[str, object]:
    return {"feasible": True, "itinerary": rows}


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        ([{"day": "Thu", "stops": ["Louvre"]}, {"day": "Fri", "stops": []}], "unknown stop 'Louvre'"),
        ([{"day": "Sat", "stops": []}], "unknown day 'Sat'"),
        ([{"day": "Thu", "stops": []}, {"day": "Fri", "stops": ["Rest (Thu)"]}], "belongs to Thu, not Fri"),
        ([{"day": "Thu", "stops": ["Zoo"]}, {"day": "Fri", "stops": ["Zoo"]}], "Zoo appears more than once"),
        ([{"day": "Thu", "stops": ["Zoo"]}], "days missing from the itinerary: Fri"),
        ([{"day": "Thu", "stops": [H]}, {"day": "Fri", "stops": []}], "unknown stop 'Hotel Aurora'"),
        ([{"day": "Thu", "stops": "Zoo"}, {"day": "Fri", "stops": []}], "needs a string 'day' and a list 'stops'"),
    ],
)
def test_answers_naming_unknown_or_misplaced_stops_fail_the_format_with_a_reason(rows, words):
    tc = checker("routing").task_checker(T)
    found, why = tc.read_plan(DATA, _answer(rows), tc.lookups(DATA), [])
    assert found is None and words in why


def test_names_are_read_case_and_space_insensitively():
    tc = checker("routing").task_checker(T)
    rows = [{"day": "thu", "stops": ["  cathedral ", "rest (thu)"]}, {"day": "FRI", "stops": ["art  gallery"]}]
    found, _ = tc.read_plan(DATA, _answer(rows), tc.lookups(DATA), [])
    assert found == LIGHT


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"sights": [{**DATA.sights[0].model_dump(), "id": "Louvre"}]}, "not a place of the network"),
        ({"days": [{**DATA.days[0].model_dump(), "start_place": "Nowhere"}]}, "must be places of the network"),
        ({"days": [{**DATA.days[0].model_dump(), "end": 500}]}, "starts at or after its return time"),
        ({"sights": [{**DATA.sights[0].model_dump(), "booked_day": "Thu"}]}, "needs both a day and a time"),
        ({"stops": [{**DATA.stops[0].model_dump(), "day": "Sun"}]}, "unknown day or place"),
    ],
)
def test_malformed_trip_data_is_a_clear_error(change, words):
    with pytest.raises(ValidationError, match=words.replace("(", r"\(")):
        TripData.model_validate({**DATA.model_dump(mode="json"), **change})


def _spec(subtask: str, size: str = "small", seed: int = 1) -> GenerationSpec:
    return GenerationSpec(family="routing", task=T, subtask=subtask, seed=seed, size=size)  # type: ignore[arg-type]


def test_subtasks_differ_in_structure_not_wording():
    parsed: dict[str, tuple[TripData, set[str]]] = {}
    for sub in ("city_break", "family_trip", "museum_pass", "multi_city", "business_trip"):
        d = model.draft(_spec(sub), random.Random(3))
        parsed[sub] = (TripData.model_validate(d.data), {r.kind for r in d.rules})
    assert "must_see" in parsed["city_break"][1]
    fam_data, fam_kinds = parsed["family_trip"]
    assert "fixed_stops" in fam_kinds and {t.kind for t in fam_data.stops} == {"rest"}
    assert {t.day for t in fam_data.stops} == {x.id for x in fam_data.days}
    biz_data, _ = parsed["business_trip"]
    assert all(t.kind == "meeting" and t.earliest == t.latest for t in biz_data.stops)
    pass_data, pass_kinds = parsed["museum_pass"]
    assert "trip_budget" in pass_kinds and all(s.price == 0 for s in pass_data.sights if s.category == "museum")
    multi = parsed["multi_city"][0]
    assert any(x.start_place != x.end_place for x in multi.days)
    assert len({x.start_place for x in multi.days} | {x.end_place for x in multi.days}) == 2


def test_the_witness_keeps_every_drafted_rule():
    for seed, sub in itertools.product(
        range(4), ("city_break", "family_trip", "museum_pass", "multi_city", "business_trip")
    ):
        spec = _spec(sub, "default", seed).model_copy(
            update={
                "basic": ["reservations", "closing_days", "daily_budget"],
                "medium": ["precedence"],
                "stateful": ["tiring_day", "stamina", "carry_budget"],
            }
        )
        d = model.draft(spec, random.Random(seed))
        assert is_feasible(model.build(d), SolverLimits())


@cache
def _default_instances() -> tuple[Instance, ...]:
    opts = GenerateOptions(task=T)
    return tuple(o.instance for o in (build_instance(5, i, opts) for i in range(12)) if o.instance is not None)


def test_the_reference_passes_and_the_baseline_fails_most_default_instances():
    insts = _default_instances()
    assert len(insts) >= 10
    baseline = [grade(i, checker("routing").baseline_answer(i)).all_pass for i in insts]
    assert all(grade(i, json.dumps(i.reference)).all_pass for i in insts)
    assert sum(baseline) < len(insts) / 2


def test_default_prompts_state_units_and_the_timing_convention():
    inst = _default_instances()[0]
    for words in ("**Timing convention**", "minutes", "euros", "| from | to | minutes |", "never the hotels"):
        assert words in inst.prompt
