"""Warehouse Planning (slotting): each rule kind's check on hand-built plans, the checker
held against the CP-SAT encoder on every plan of a small warehouse (shared slots
included), the objective figures, the subtasks' structure, answers naming unknown items
or slots, and malformed data."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable
from functools import cache

import pytest
from ortools.sat.python import cp_model

from pbsolve.checkers.project import warehouse as wh
from pbsolve.checkers.project.warehouse import CHECKS, Item, Plan, Slot, WarehouseData, Zone
from pbsolve.family import Draft, checker
from pbsolve.grading import grade
from pbsolve.models.project import warehouse as model
from pbsolve.params import NoParams, Params, make_rule, make_term
from pbsolve.schema import GenerationSpec, Instance
from tests.instances import subtask_instances
from tests.model_enumeration import enumerate_solutions, with_rule_on

T = wh.TASK_ID
SPEC = GenerationSpec(family="project", task=T, subtask="ecommerce", seed=0, size="tiny")

# Two zones (Z1 chilled, one aisle; Z2 ambient, aisles 2 and 3), five slots, three items:
# 5 ** 3 = 125 plans, every one enumerable.
DATA = WarehouseData(
    zones=(
        Zone(id="Z1", name="Chill room", temperature="chilled", max_load=100),
        Zone(id="Z2", name="Dry store", max_load=150),
    ),
    slots=(
        Slot(id="S1", zone="Z1", aisle=1, level=0, distance=10),
        Slot(id="S2", zone="Z1", aisle=1, level=1, distance=10),
        Slot(id="S3", zone="Z2", aisle=2, level=0, distance=20),
        Slot(id="S4", zone="Z2", aisle=2, level=1, distance=20),
        Slot(id="S5", zone="Z2", aisle=3, level=0, distance=30),
    ),
    items=(
        Item(id="I1", name="Acetone", picks=50, weight=60, hazard="3"),
        Item(id="I2", name="Peroxide", picks=20, weight=40, hazard="5.1"),
        Item(id="I3", name="Towels", picks=5, weight=90),
    ),
)


def plan(**slots: str) -> Plan:
    return Plan({"I1": "S1", "I2": "S3", "I3": "S4"} | slots)


OK_PLAN = plan()  # Z1: I1 (60 kg, 50 picks); Z2: I2 and I3 (130 kg, 25 picks); S2 and S5 empty


def verdict(kind: str, p: Plan, params: Params | None = None) -> tuple[bool, str]:
    return CHECKS[kind](DATA, p, params or NoParams())


# (kind, params, a plan that keeps it, a plan that breaks it, words of the reason)
CASES = [
    ("slot_exclusive", None, OK_PLAN, plan(I2="S1"), "slot S1 holds 2 items (I1, I2)"),
    ("zone_capacity", None, OK_PLAN, plan(I3="S2"), "zone Z1 holds 150 kg (at most 100 kg)"),
    ("chilled", wh.Chilled(items=["I1"]), OK_PLAN, plan(I1="S5"), "I1 is in slot S5 of zone Z2, which is not chilled"),
    ("heavy_low", wh.HeavyLow(min_weight=90, max_level=0), plan(I3="S5"), OK_PLAN, "I3 weighs 90 kg and is on level 1"),
    ("reserved_slots", wh.ReservedSlots(slots=["S2"]), OK_PLAN, plan(I2="S2"), "I2 is in slot S2, which is reserved"),
    (
        "hazard_zone",
        wh.HazardZone(classes=("3", "5.1")),
        OK_PLAN,
        plan(I2="S2"),
        "I1 (class 3) and I2 (class 5.1) are both in zone Z1",
    ),
    ("secure_zone", wh.SecureZone(items=["I3"], zone="Z2"), OK_PLAN, plan(I3="S2"), "not in the secure zone Z2"),
    ("affinity", wh.Affinity(pairs=[("I1", "I2")], max_aisles=1), OK_PLAN, plan(I2="S5"), "2 aisles apart (at most 1)"),
    (
        "hazard_distance",
        wh.HazardDistance(classes=("3", "5.1"), min_aisles=2),
        plan(I2="S5"),
        OK_PLAN,
        "I1 (class 3) and I2 (class 5.1) are 1 aisles apart (at least 2)",
    ),
    ("zone_pick_cap", wh.ZonePickCap(max=50), OK_PLAN, plan(I2="S2"), "zone Z1 take 70 picks per week (at most 50)"),
    (
        "fast_movers",
        wh.FastMovers(min_picks=20, max_distance=20),
        OK_PLAN,
        plan(I2="S5"),
        "I2 (20 picks per week) is in a slot 30 m away (at most 20 m)",
    ),
    ("same_zone", wh.SameZone(groups=[["I2", "I3"]]), OK_PLAN, plan(I3="S2"), "spread over zones Z1, Z2"),
    (
        "load_threshold",
        wh.LoadThreshold(zone="Z2", threshold=100, level=1),
        plan(I3="S5"),
        OK_PLAN,
        "I3 is in slot S4, which is on level 1 or above while zone Z2 holds 130 kg (over 100 kg)",
    ),
    # below the threshold the upper level is free: I3 in S4 with 90 kg in Z2
    ("load_threshold", wh.LoadThreshold(zone="Z2", threshold=100, level=1), plan(I2="S2"), OK_PLAN, "130 kg"),
    ("spare_slot", wh.SpareSlot(zones=["Z1"]), OK_PLAN, plan(I3="S2"), "zone Z1 has no empty slot"),
    ("slot_closed", wh.SlotClosed(slot="S3"), plan(I2="S5"), OK_PLAN, "I2 is in slot S3, which is out of service"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "params", "keeps", "breaks", "why"), CASES, ids=[c[0] for c in CASES])
def test_each_check_keeps_a_good_plan_and_names_why_a_bad_one_fails(kind, params, keeps, breaks, why):
    ok, reason = verdict(kind, keeps, params)
    assert ok, reason
    ok, reason = verdict(kind, breaks, params)
    assert not ok
    assert why in reason


def test_every_checked_kind_has_a_case():
    assert {c[0] for c in CASES} == set(CHECKS)


# -- the checker against the CP-SAT encoder, plan by plan --------------------------------
RULES = [make_rule(kind, "basic", params or NoParams(), f"R{k}") for k, (kind, params, *_) in enumerate(CASES, 1)]
OBJECTIVE = [
    make_term("pick_path", "pick_path"),
    make_term("lift_effort", "lift_effort"),
    make_term("changes", "changes", wh.CurrentSlots(existing={"I1": "S1", "I2": "S2", "I3": "S5"})),
]


def all_plans() -> list[Plan]:
    ids, slots = [i.id for i in DATA.items], [s.id for s in DATA.slots]
    return [Plan(dict(zip(ids, combo))) for combo in itertools.product(slots, repeat=len(ids))]


def key(p: Plan) -> tuple[str, ...]:
    return tuple(p.slot[i.id] for i in DATA.items)


@cache
def model_accepts(rule_id: str) -> frozenset[tuple[str, ...]]:
    """Every plan (slot tuple) the CP-SAT model accepts with only this rule on: enumerated
    by the solver itself over the answer Booleans."""
    rule = next(r for r in RULES if r.id == rule_id)
    draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=[rule], objective=[])
    sm = with_rule_on(model.build, draft, rule_id)
    names = [v.name for v in sm.answer_literals]

    def slots(value: Callable[[cp_model.IntVar], int]) -> tuple[str, ...]:
        on = [n for n, v in zip(names, sm.answer_literals) if value(v)]
        slot = dict(n[2:-1].split(",") for n in on)  # "x[I1,S3]" -> I1: S3
        return tuple(slot[i.id] for i in DATA.items)

    return enumerate_solutions(sm, slots)


@pytest.mark.parametrize("rule", RULES, ids=[r.kind for r in RULES])
def test_model_and_checker_accept_the_same_plans_rule_by_rule(rule):
    tc = checker("project").task_checker(T)
    accepted = set()
    for p in all_plans():
        verdicts, _ = tc.evaluate(DATA, [rule], [], p)
        if verdicts[rule.id][0]:
            accepted.add(key(p))
    assert accepted == set(model_accepts(rule.id))
    assert 0 < len(accepted) < len(all_plans())  # each rule decides something on this warehouse


def test_model_and_checker_compute_the_same_objective_figures():
    tc = checker("project").task_checker(T)
    draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=[], objective=OBJECTIVE)
    for p in all_plans()[::9]:
        sm = model.build(draft)
        by_name = {v.name: v for v in sm.answer_literals}
        for i in DATA.items:
            sm.model.add(by_name[f"x[{i.id},{p.slot[i.id]}]"] == 1)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        assert solver.solve(sm.model) == cp_model.OPTIMAL
        _, values = tc.evaluate(DATA, [], OBJECTIVE, p)
        assert values == {tid: int(solver.value(expr)) for tid, expr, _ in sm.objective_terms}


def test_the_pick_path_is_picks_times_walking_distance_in_metres_per_week():
    assert wh.pick_path(DATA, OK_PLAN) == 50 * 10 + 20 * 20 + 5 * 20
    assert wh.lift_effort(DATA, OK_PLAN) == 90 * 1


# -- answers ------------------------------------------------------------------------------
@cache
def default_instance() -> Instance:
    return subtask_instances(T, "ecommerce", n=1, size="default")[0]


def answer_with(rows: list[dict]) -> str:
    ref = dict(default_instance().reference)
    return json.dumps({**ref, "slotting": rows})


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda rows: [{**rows[0], "item": "I99"}, *rows[1:]], "unknown item 'I99'"),
        (lambda rows: [{**rows[0], "slot": "S99"}, *rows[1:]], "unknown slot 'S99'"),
        (lambda rows: rows[1:], "missing from the slotting"),
        (lambda rows: [*rows, rows[0]], "appears more than once"),
        (lambda rows: [{**rows[0], "slot": 3}, *rows[1:]], "needs string fields"),
        (lambda rows: [["I1", "S1"], *rows[1:]], "is not an object"),
    ],
)
def test_a_malformed_slotting_fails_the_format_item_with_a_reason(change, why):
    inst = default_instance()
    g = grade(inst, answer_with(change(list(inst.reference["slotting"]))))
    fmt = next(i for i in g.items if i.id == "C1")
    assert not fmt.passed and why in fmt.reason
    assert not g.all_pass


def test_the_reference_passes_and_names_are_read_case_insensitively():
    inst = default_instance()
    assert grade(inst, json.dumps(inst.reference)).all_pass
    rows = [{"item": r["item"].lower(), "slot": r["slot"].lower()} for r in inst.reference["slotting"]]
    assert grade(inst, answer_with(rows)).all_pass


def test_two_items_in_one_slot_fail_the_exclusivity_rule_not_the_format():
    inst = default_instance()
    rows = list(inst.reference["slotting"])
    rows[1] = {**rows[1], "slot": rows[0]["slot"]}
    g = grade(inst, answer_with(rows))
    fmt = next(i for i in g.items if i.id == "C1")
    assert fmt.passed
    assert any(not i.passed and "holds 2 items" in i.reason for i in g.items)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"slots": [{**s.model_dump(), "zone": "Z9"} for s in DATA.slots]}, "unknown zone Z9"),
        ({"items": [{"id": "I1", "name": "x", "picks": 1, "weight": 1, "hazard": "99"}]}, "unknown hazard class"),
        ({"slots": [{"id": "S1", "zone": "Z1", "aisle": 1, "level": 0, "distance": 10}]}, "only 1 slots"),
        ({"zones": [{"id": "Z1", "name": "a", "max_load": 1}, {"id": "Z1", "name": "b", "max_load": 1}]}, "repeated zone"),
        ({"items": []}, "at least one item"),
    ],
)  # fmt: skip
def test_malformed_warehouse_data_is_a_clear_error(change, why):
    with pytest.raises(ValueError, match=why):
        WarehouseData.model_validate({**DATA.model_dump(mode="json"), **change})


# -- subtasks --------------------------------------------------------------------------
@pytest.mark.parametrize("subtask", [s.id for s in model.TASK.subtasks])
def test_each_subtask_carries_its_structure(subtask):
    spec = GenerationSpec(family="project", task=T, subtask=subtask, seed=3, size="default")
    d = model.draft(spec, random.Random(3))
    data = WarehouseData.model_validate(d.data)
    kinds = {r.kind for r in d.rules}
    assert set(model.FORCED[subtask]) <= kinds
    assert {"slot_exclusive", "zone_capacity"} <= kinds
    assert [t.kind for t in d.objective] == ["pick_path", "lift_effort"]
    levels = {s.level for s in data.slots}
    assert levels == ({0, 1, 2} if subtask == "spare_parts" else {0, 1})
    chilled = [z for z in data.zones if z.temperature == "chilled"]
    assert len(chilled) == (2 if subtask == "cold_chain" else 1)
    assert len({i.hazard for i in data.items if i.hazard}) >= 2


def test_no_two_items_or_bays_are_interchangeable_in_sampled_warehouses():
    """Distinct picks, distinct weights and one walking distance per bay: swapping two items
    or moving one always changes a figure of the objective, so optima are unique (no
    symmetry hook needed)."""
    for seed, sub in itertools.product(range(3), [s.id for s in model.TASK.subtasks]):
        spec = GenerationSpec(family="project", task=T, subtask=sub, seed=seed, size="default")
        data = WarehouseData.model_validate(model.draft(spec, random.Random(seed)).data)
        picks, weights = [i.picks for i in data.items], [i.weight for i in data.items]
        assert len(set(picks)) == len(picks) and len(set(weights)) == len(weights)
        bays = {(s.aisle, s.distance) for s in data.slots}
        assert len({dist for _, dist in bays}) == len(bays)


# -- the MILP twin ---------------------------------------------------------------------
@pytest.mark.parametrize(("index", "hard"), [(0, False), (1, True), (2, True), (3, False)])
def test_the_milp_twin_proves_the_certified_optimum_and_its_plan_passes(index, hard):
    pytest.importorskip("pulp")
    from pbsolve.models.project import milp
    from tests.instances import draft_of, instance_at

    inst = instance_at(T, 21, index, "default", hard)
    if inst is None:
        pytest.skip("no certified instance at this index")
    result = milp.optimum(draft_of(inst))
    cert = inst.certificate.objective
    assert result.values == (tuple(cert[t.id] for t in inst.objective) if cert else None)
    if result.plan is not None:
        answer = {**inst.reference, **result.plan}
        assert grade(inst, json.dumps(answer)).all_pass  # a unique optimum: the same plan


def test_the_milp_twin_finds_a_single_rule_off_as_cp_sat_does():
    pytest.importorskip("pulp")
    from pbsolve.certify import SolverLimits, optimum
    from pbsolve.family import family
    from pbsolve.models.project import milp
    from tests.instances import draft_of, instance_at

    inst = instance_at(T, 21, 0, "default")
    assert inst is not None
    draft = draft_of(inst)
    for rule in inst.rules:
        cp = optimum(family("project"), draft, SolverLimits(deterministic_time=20), without=rule.id)
        assert milp.optimum(draft, without=rule.id).values == cp, rule.kind
