"""Hand-written instances of the allocation and emergency families, volunteer scheduling and
recruitment planning whose rules or objective terms name what the data lacks are refused
as ground truth naming the rule and the name (``Params.data_problems``), never graded
against a checker that crashes or a rule that holds for every plan."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pbsolve.family import checker
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.params import Params
from pbsolve.schema import Instance
from tests.reference_helpers import refusal

DATA = Path(__file__).parent / "data"
MINE = {
    "procurement_planning",
    "material_allocation",
    "educational_resource_planning",
    "student_grouping",
    "disaster_evacuation_planning",
    "medical_resource_planning",
    "emergency_planning",
    "volunteer_scheduling",
    "recruitment_planning",
}
Z = "ZZZ"


@pytest.fixture(scope="module")
def instances() -> dict[str, Instance]:
    """Task id -> its first small certified feasible instance without mechanisms (the
    session fixture ``feasible_instances`` holds scheduling tasks only)."""
    out = {}
    for task in sorted(MINE):
        for index in range(12):
            inst = build_instance(0, index, GenerateOptions(task=task, size="small")).instance
            if inst is not None and inst.certificate.status == "optimal" and not inst.mechanisms:
                out[task] = inst
                break
    assert set(out) == MINE
    return out


def _data(instances: dict[str, Instance], task: str) -> Any:
    inst = instances[task]
    return checker(inst.family).read_data(inst)


def _params(instances: dict[str, Instance], task: str, kind: str, params: dict[str, Any], term: bool) -> Params:
    inst = instances[task]
    rules, terms = checker(inst.family).known_kinds(task)
    model: Params = (terms if term else rules)[kind].model_validate(params)
    return model


def _problems(
    instances: dict[str, Instance], task: str, kind: str, build: Callable[[Any], dict[str, Any]], term: bool = False
) -> list[str]:
    d = _data(instances, task)
    return _params(instances, task, kind, build(d), term).data_problems(d)


def _with_rule(inst: Instance, kind: str, params: dict[str, Any]) -> Instance:
    """A new instance object with one more (hard) rule, ``R99``."""
    raw = inst.model_dump(mode="json")
    raw["rules"].append({"id": "R99", "kind": kind, "tier": "hard", "params": params})
    return Instance.model_validate(raw)


def _with_changes(inst: Instance, existing: Any) -> Instance:
    """A new instance object with one more objective term, a ``changes`` term ``X9``."""
    raw = inst.model_dump(mode="json")
    raw["objective"].append({"id": "X9", "kind": "changes", "params": {"existing": existing}})
    return Instance.model_validate(raw)


# -- one unknown name per Params class: the exact problem ---------------------------------------
# (task, kind, params from the data with one name replaced by "ZZZ", a changes term?, problem)
CASES: list[tuple[str, str, Callable[[Any], dict[str, Any]], bool, str]] = [
    # procurement
    ("procurement_planning", "min_order", lambda d: {"min": {Z: 1}}, False, "unknown supplier 'ZZZ'"),
    (
        "procurement_planning",
        "supplier_closed",
        lambda d: {"supplier": d.suppliers[0].id, "periods": [Z]},
        False,
        "unknown period 'ZZZ'",
    ),
    ("procurement_planning", "safety_stock", lambda d: {"item": Z, "min": 1}, False, "unknown item 'ZZZ'"),
    (
        "procurement_planning",
        "stock_target",
        lambda d: {"item": d.items[0].id, "period": Z, "min": 1},
        False,
        "unknown period 'ZZZ'",
    ),
    ("procurement_planning", "shelf_life", lambda d: {"item": Z, "periods": 2}, False, "unknown item 'ZZZ'"),
    ("procurement_planning", "supplier_share", lambda d: {"item": Z, "pct": 50}, False, "unknown item 'ZZZ'"),
    ("procurement_planning", "contract_minimum", lambda d: {"supplier": Z, "min": 1}, False, "unknown supplier 'ZZZ'"),
    ("procurement_planning", "order_gap", lambda d: {"supplier": Z}, False, "unknown supplier 'ZZZ'"),
    ("procurement_planning", "single_sourcing", lambda d: {"item": Z}, False, "unknown item 'ZZZ'"),
    ("procurement_planning", "dual_sourcing", lambda d: {"item": Z}, False, "unknown item 'ZZZ'"),
    (
        "procurement_planning",
        "changes",
        lambda d: {"existing": [[d.suppliers[0].id, Z, d.periods[0], 1]]},
        True,
        "unknown item 'ZZZ'",
    ),
    # material allocation
    (
        "material_allocation",
        "route_closed",
        lambda d: {"depot": Z, "site": d.sites[0].id},
        False,
        "unknown depot 'ZZZ'",
    ),
    ("material_allocation", "depot_throughput", lambda d: {"depot": Z, "max": 1}, False, "unknown depot 'ZZZ'"),
    (
        "material_allocation",
        "min_guarantee",
        lambda d: {"sites": [d.sites[0].id], "material": Z, "min": 1},
        False,
        "unknown material 'ZZZ'",
    ),
    ("material_allocation", "site_intake", lambda d: {"site": Z, "max": 1}, False, "unknown site 'ZZZ'"),
    ("material_allocation", "priority_order", lambda d: {"sites": [d.sites[0].id, Z]}, False, "unknown site 'ZZZ'"),
    ("material_allocation", "single_source", lambda d: {"sites": [Z]}, False, "unknown site 'ZZZ'"),
    ("material_allocation", "share_cap", lambda d: {"material": Z, "pct": 50}, False, "unknown material 'ZZZ'"),
    (
        "material_allocation",
        "changes",
        lambda d: {"existing": [[d.depots[0].id, Z, d.materials[0].id, 1]]},
        True,
        "unknown site 'ZZZ'",
    ),
    # educational resources
    (
        "educational_resource_planning",
        "teacher_absent",
        lambda d: {"teacher": d.teachers[0].id, "slots": [Z]},
        False,
        "unknown slot 'ZZZ'",
    ),
    (
        "educational_resource_planning",
        "teacher_load",
        lambda d: {"teachers": [Z], "max": 1},
        False,
        "unknown teacher 'ZZZ'",
    ),
    (
        "educational_resource_planning",
        "room_closed",
        lambda d: {"room": Z, "slots": [d.slots[0].id]},
        False,
        "unknown room 'ZZZ'",
    ),
    (
        "educational_resource_planning",
        "daily_load",
        lambda d: {"teachers": [Z], "max": 1},
        False,
        "unknown teacher 'ZZZ'",
    ),
    (
        "educational_resource_planning",
        "min_load",
        lambda d: {"teachers": [Z], "min": 1},
        False,
        "unknown teacher 'ZZZ'",
    ),
    (
        "educational_resource_planning",
        "continuity",
        lambda d: {"lessons": [d.lessons[0].id, Z]},
        False,
        "unknown lesson 'ZZZ'",
    ),
    ("educational_resource_planning", "same_room", lambda d: {"lessons": [Z]}, False, "unknown lesson 'ZZZ'"),
    ("educational_resource_planning", "teacher_gap", lambda d: {"teacher": Z}, False, "unknown teacher 'ZZZ'"),
    (
        "educational_resource_planning",
        "changes",
        lambda d: {"existing": {x.id: [Z, d.rooms[0].id] for x in d.lessons}},
        True,
        "unknown teacher 'ZZZ'",
    ),
    # student grouping
    ("student_grouping", "apart", lambda d: {"pairs": [[d.students[0].id, Z]]}, False, "unknown student 'ZZZ'"),
    ("student_grouping", "together", lambda d: {"pairs": [[Z, d.students[0].id]]}, False, "unknown student 'ZZZ'"),
    ("student_grouping", "wish_guarantee", lambda d: {"students": [Z]}, False, "unknown student 'ZZZ'"),
    (
        "student_grouping",
        "changes",
        lambda d: {"existing": [[s.id for s in d.students] + [Z]]},
        True,
        "unknown student 'ZZZ'",
    ),
    # disaster evacuation
    ("disaster_evacuation_planning", "deadline", lambda d: {"groups": [Z], "period": 1}, False, "unknown group 'ZZZ'"),
    (
        "disaster_evacuation_planning",
        "road_closure",
        lambda d: {"road": [d.network.places[0], Z], "period": 1},
        False,
        "unknown place 'ZZZ'",
    ),
    ("disaster_evacuation_planning", "not_before", lambda d: {"group": Z, "period": 1}, False, "unknown group 'ZZZ'"),
    ("disaster_evacuation_planning", "vulnerable_first", lambda d: {"groups": [Z]}, False, "unknown group 'ZZZ'"),
    (
        "disaster_evacuation_planning",
        "same_shelter",
        lambda d: {"groups": [d.groups[0].id, Z]},
        False,
        "unknown group 'ZZZ'",
    ),
    (
        "disaster_evacuation_planning",
        "max_travel",
        lambda d: {"groups": [Z], "minutes": 10},
        False,
        "unknown group 'ZZZ'",
    ),
    (
        "disaster_evacuation_planning",
        "staged_opening",
        lambda d: {"shelter": Z, "period": 1, "beds": 0},
        False,
        "unknown shelter 'ZZZ'",
    ),
    (
        "disaster_evacuation_planning",
        "changes",
        lambda d: {"existing": {g.id: [Z, 1] for g in d.groups}},
        True,
        "unknown route 'ZZZ'",
    ),
    # medical resources
    ("medical_resource_planning", "max_patients", lambda d: {"doctors": [Z], "max": 1}, False, "unknown doctor 'ZZZ'"),
    ("medical_resource_planning", "target_deadline", lambda d: {"patients": [Z]}, False, "unknown patient 'ZZZ'"),
    ("medical_resource_planning", "same_doctor", lambda d: {"stages": [Z]}, False, "unknown stage 'ZZZ'"),
    (
        "medical_resource_planning",
        "room_turnover",
        lambda d: {"room_type": Z, "slots": 1},
        False,
        "unknown room type 'ZZZ'",
    ),
    (
        "medical_resource_planning",
        "triage_order",
        lambda d: {"pairs": [[d.patients[0].id, Z]]},
        False,
        "unknown patient 'ZZZ'",
    ),
    (
        "medical_resource_planning",
        "doctor_absent",
        lambda d: {"doctor": Z, "start": 0, "end": 1},
        False,
        "unknown doctor 'ZZZ'",
    ),
    (
        "medical_resource_planning",
        "reserved",
        lambda d: {"doctor": d.doctors[0].id, "room": d.rooms[0].id, "start": 0, "end": 1, "triage": Z},
        False,
        "unknown triage class 'ZZZ'",
    ),
    ("medical_resource_planning", "not_before", lambda d: {"stage": Z, "slot": 0}, False, "unknown stage 'ZZZ'"),
    (
        "medical_resource_planning",
        "changes",
        lambda d: {"existing": {s.id: [d.doctors[0].id, Z, 0] for s in d.stages}},
        True,
        "unknown room 'ZZZ'",
    ),
    # emergency response
    ("emergency_planning", "deadline", lambda d: {"incidents": [Z]}, False, "unknown incident 'ZZZ'"),
    (
        "emergency_planning",
        "station_cover",
        lambda d: {"base": Z, "role": d.roles[0], "keep": 1, "wave": 1},
        False,
        "unknown base 'ZZZ'",
    ),
    (
        "emergency_planning",
        "arrives_first",
        lambda d: {"incident": d.incidents[0].id, "first": Z, "then": d.roles[0]},
        False,
        "unknown role 'ZZZ'",
    ),
    (
        "emergency_planning",
        "severity_priority",
        lambda d: {"first": d.incidents[0].id, "then": Z},
        False,
        "unknown incident 'ZZZ'",
    ),
    ("emergency_planning", "same_base", lambda d: {"incident": Z}, False, "unknown incident 'ZZZ'"),
    (
        "emergency_planning",
        "unit_out",
        lambda d: {"base": d.bases[0], "role": Z, "count": 1},
        False,
        "unknown role 'ZZZ'",
    ),
    ("emergency_planning", "spare_cover", lambda d: {"minutes": 10, "severity": Z}, False, "unknown severity 'ZZZ'"),
    (
        "emergency_planning",
        "changes",
        lambda d: {"existing": {"teams": {d.incidents[0].id: [Z]}, "materials": {}}},
        True,
        "unknown team 'ZZZ'",
    ),
    # volunteer scheduling
    ("volunteer_scheduling", "load_cap", lambda d: {"volunteers": [Z], "max": 1}, False, "unknown volunteer 'ZZZ'"),
    (
        "volunteer_scheduling",
        "volunteer_absent",
        lambda d: {"volunteer": d.volunteers[0].id, "shifts": [Z]},
        False,
        "unknown shift 'ZZZ'",
    ),
    ("volunteer_scheduling", "min_shifts", lambda d: {"volunteers": [Z], "min": 1}, False, "unknown volunteer 'ZZZ'"),
    ("volunteer_scheduling", "buffer", lambda d: {"volunteers": [Z]}, False, "unknown volunteer 'ZZZ'"),
    (
        "volunteer_scheduling",
        "changes",
        lambda d: {"existing": [[d.volunteers[0].id, Z, d.shifts[0].id]]},
        True,
        "unknown post 'ZZZ'",
    ),
    # recruitment planning
    ("recruitment_planning", "daily_cap", lambda d: {"staff": [Z], "max": 1}, False, "unknown staff member 'ZZZ'"),
    ("recruitment_planning", "staff_load", lambda d: {"staff": [Z], "max": 1}, False, "unknown staff member 'ZZZ'"),
    (
        "recruitment_planning",
        "final_deadline",
        lambda d: {"candidates": [d.candidates[0].id], "slot": Z},
        False,
        "unknown slot 'ZZZ'",
    ),
    (
        "recruitment_planning",
        "min_gap",
        lambda d: {"first": d.stages[0].id, "second": Z, "days": 1},
        False,
        "unknown stage 'ZZZ'",
    ),
    ("recruitment_planning", "panel_senior", lambda d: {"stage": Z}, False, "unknown stage 'ZZZ'"),
    (
        "recruitment_planning",
        "staff_absent",
        lambda d: {"staff": Z, "slots": [d.slots[0].id]},
        False,
        "unknown staff member 'ZZZ'",
    ),
    (
        "recruitment_planning",
        "candidate_blocked",
        lambda d: {"candidate": Z, "slots": [d.slots[0].id]},
        False,
        "unknown candidate 'ZZZ'",
    ),
    (
        "recruitment_planning",
        "changes",
        lambda d: {"existing": [[d.candidates[0].id, d.stages[0].id, d.slots[0].id, [Z]]]},
        True,
        "unknown staff member 'ZZZ'",
    ),
]


@pytest.mark.parametrize(
    ("task", "kind", "build", "term", "problem"),
    CASES,
    ids=[f"{task}.{kind}" for task, kind, *_ in CASES],
)
def test_a_parameter_naming_what_the_data_lacks_is_reported_by_name(
    instances: dict[str, Instance],
    task: str,
    kind: str,
    build: Callable[[Any], dict[str, Any]],
    term: bool,
    problem: str,
):
    assert _problems(instances, task, kind, build, term) == [problem]


# -- overrides: conditions beyond unknown names ---------------------------------------------------
def test_a_current_lesson_plan_leaving_a_lesson_out_is_reported(instances: dict[str, Instance]):
    def build(d: Any) -> dict[str, Any]:
        return {"existing": {x.id: [d.teachers[0].id, d.rooms[0].id] for x in d.lessons[1:]}}

    first = _data(instances, "educational_resource_planning").lessons[0].id
    assert _problems(instances, "educational_resource_planning", "changes", build, term=True) == [
        f"the current plan gives no teacher and room for lesson {first!r}"
    ]


def test_a_current_grouping_leaving_a_student_out_is_reported(instances: dict[str, Instance]):
    d = _data(instances, "student_grouping")
    gone = d.students[0].id

    def build(d: Any) -> dict[str, Any]:
        return {"existing": [[s.id for s in d.students[1:]]]}

    assert _problems(instances, "student_grouping", "changes", build, term=True) == [
        f"the current grouping leaves out student {gone!r}"
    ]


def test_a_current_grouping_placing_a_student_twice_is_reported(instances: dict[str, Instance]):
    d = _data(instances, "student_grouping")
    twice = d.students[0].id

    def build(d: Any) -> dict[str, Any]:
        return {"existing": [[s.id for s in d.students], [twice]]}

    assert _problems(instances, "student_grouping", "changes", build, term=True) == [
        f"the current grouping places student {twice!r} more than once"
    ]


def _no_road(d: Any) -> tuple[str, str]:
    """Two places of the evacuation network with no road between them."""
    places = d.network.places
    return next((a, b) for a in places for b in places if a != b and frozenset((a, b)) not in d.capacity)


def test_a_road_closure_between_places_with_no_road_is_reported(instances: dict[str, Instance]):
    d = _data(instances, "disaster_evacuation_planning")
    a, b = _no_road(d)
    found = _problems(
        instances, "disaster_evacuation_planning", "road_closure", lambda d: {"road": [a, b], "period": 1}
    )
    assert found == [f"there is no road between {a!r} and {b!r}"]


def _evac_current(d: Any) -> dict[str, list[Any]]:
    return {g.id: [d.routes_of[g.id][0].id, 1] for g in d.groups}


def test_a_current_evacuation_plan_leaving_a_group_out_is_reported(instances: dict[str, Instance]):
    d = _data(instances, "disaster_evacuation_planning")
    gone = d.groups[0].id

    def build(d: Any) -> dict[str, Any]:
        return {"existing": {g: v for g, v in _evac_current(d).items() if g != gone}}

    assert _problems(instances, "disaster_evacuation_planning", "changes", build, term=True) == [
        f"the current plan gives no route and departure for group {gone!r}"
    ]


def test_a_current_evacuation_plan_giving_a_group_another_groups_route_is_reported(
    instances: dict[str, Instance],
):
    d = _data(instances, "disaster_evacuation_planning")
    a, b = d.groups[0].id, d.groups[1].id

    def build(d: Any) -> dict[str, Any]:
        return {"existing": {**_evac_current(d), a: [d.routes_of[b][0].id, 1]}}

    assert _problems(instances, "disaster_evacuation_planning", "changes", build, term=True) == [
        f"the current plan gives group {a!r} a route of another group"
    ]


def test_a_current_evacuation_plan_departing_outside_the_periods_is_reported(instances: dict[str, Instance]):
    d = _data(instances, "disaster_evacuation_planning")
    a = d.groups[0].id

    def build(d: Any) -> dict[str, Any]:
        return {"existing": {**_evac_current(d), a: [d.routes_of[a][0].id, d.periods + 1]}}

    assert _problems(instances, "disaster_evacuation_planning", "changes", build, term=True) == [
        f"the current plan departs group {a!r} outside periods 1..{d.periods}"
    ]


def test_a_current_medical_plan_leaving_a_stage_out_is_reported(instances: dict[str, Instance]):
    d = _data(instances, "medical_resource_planning")
    gone = d.stages[0].id

    def build(d: Any) -> dict[str, Any]:
        return {"existing": {s.id: [d.doctors[0].id, d.rooms[0].id, 0] for s in d.stages if s.id != gone}}

    assert _problems(instances, "medical_resource_planning", "changes", build, term=True) == [
        f"the current plan gives no doctor, room and start for stage {gone!r}"
    ]


def test_arrives_first_naming_a_role_its_incident_does_not_need_is_reported(instances: dict[str, Instance]):
    d = _data(instances, "emergency_planning")
    i, role = next((i, r) for i in d.incidents for r in d.roles if r not in i.needs)
    needed = next(iter(i.needs))
    found = _problems(
        instances,
        "emergency_planning",
        "arrives_first",
        lambda d: {"incident": i.id, "first": role, "then": needed},
    )
    assert found == [f"incident {i.id!r} needs no {role!r} team"]


def _new_incident(d: Any, **changes: Any) -> dict[str, Any]:
    i = d.incidents[0]
    return {"incident": {**i.model_dump(mode="json"), "id": "I99", **changes}}


def test_a_new_incident_with_the_data_names_has_no_problem(instances: dict[str, Instance]):
    assert _problems(instances, "emergency_planning", "new_incident", _new_incident) == []


def test_a_new_incident_reusing_an_incident_id_is_reported(instances: dict[str, Instance]):
    d = _data(instances, "emergency_planning")
    old = d.incidents[0].id
    found = _problems(instances, "emergency_planning", "new_incident", lambda d: _new_incident(d, id=old))
    assert found == [f"incident {old!r} is already an incident of the data"]


def test_a_new_incident_at_an_unknown_place_with_unknown_severity_and_role_is_reported(
    instances: dict[str, Instance],
):
    found = _problems(
        instances,
        "emergency_planning",
        "new_incident",
        lambda d: _new_incident(d, site=Z, severity="Y", needs={"X": 1}, materials={"W": 1}),
    )
    assert found == ["unknown place 'ZZZ'", "unknown severity 'Y'", "unknown role 'X'", "unknown material 'W'"]


def test_a_current_dispatch_naming_unknown_incidents_and_depots_is_reported(instances: dict[str, Instance]):
    d = _data(instances, "emergency_planning")
    material = d.materials[0]

    def build(d: Any) -> dict[str, Any]:
        return {"existing": {"teams": {"I77": []}, "materials": {d.incidents[0].id: {material: "D9"}}}}

    assert _problems(instances, "emergency_planning", "changes", build, term=True) == [
        "unknown incident 'I77'",
        "unknown depot 'D9'",
    ]


# -- the grader refuses the instance, naming the rule and the name -----------------------------
REFUSED: list[tuple[str, str, Callable[[Any], dict[str, Any]], str]] = [
    (
        "procurement_planning",
        "supplier_closed",
        lambda d: {"supplier": Z, "periods": [d.periods[0]]},
        "unknown supplier 'ZZZ'",
    ),
    ("student_grouping", "apart", lambda d: {"pairs": [[d.students[0].id, Z]]}, "unknown student 'ZZZ'"),
    ("disaster_evacuation_planning", "deadline", lambda d: {"groups": [Z], "period": 1}, "unknown group 'ZZZ'"),
    ("medical_resource_planning", "max_minutes", lambda d: {"doctors": [Z], "max": 60}, "unknown doctor 'ZZZ'"),
    (
        "emergency_planning",
        "severity_priority",
        lambda d: {"first": Z, "then": d.incidents[0].id},
        "unknown incident 'ZZZ'",
    ),
    ("volunteer_scheduling", "load_cap", lambda d: {"volunteers": [Z], "max": 1}, "unknown volunteer 'ZZZ'"),
    (
        "recruitment_planning",
        "final_deadline",
        lambda d: {"candidates": [Z], "slot": d.slots[-1].id},
        "unknown candidate 'ZZZ'",
    ),
]


@pytest.mark.parametrize(("task", "kind", "build", "problem"), REFUSED, ids=[f"{t}.{k}" for t, k, *_ in REFUSED])
def test_the_grader_refuses_an_instance_whose_rule_names_an_unknown_thing(
    instances: dict[str, Instance], task: str, kind: str, build: Callable[[Any], dict[str, Any]], problem: str
):
    inst = instances[task]
    why = refusal(_with_rule(inst, kind, build(_data(instances, task))))
    assert "not a valid ground truth" in why
    assert f"R99 ({kind}): {problem}" in why


def test_the_grader_refuses_a_changes_term_whose_current_plan_leaves_a_lesson_out(
    instances: dict[str, Instance],
):
    inst = instances["educational_resource_planning"]
    d = _data(instances, "educational_resource_planning")
    existing = {x.id: [d.teachers[0].id, d.rooms[0].id] for x in d.lessons[1:]}
    why = refusal(_with_changes(inst, existing))
    assert f"X9 (changes): the current plan gives no teacher and room for lesson {d.lessons[0].id!r}" in why


# -- no false alarm: stored certified instances (with changes terms and recoveries) -------------
def _stored() -> list[Instance]:
    out = []
    for family in ("allocation", "workforce"):
        for line in (DATA / f"mutation_moves_{family}.jsonl").read_text().splitlines():
            inst = json.loads(line)["instance"]
            if inst["task"] in MINE:
                out.append(Instance.model_validate(inst))
    return out


def test_stored_instances_with_changes_terms_and_recoveries_name_only_what_their_data_has():
    stored = _stored()
    assert any(t.kind == "changes" for inst in stored for t in inst.objective)
    assert any(inst.recovery for inst in stored)
    for inst in stored:
        module = checker(inst.family)
        rules, terms = module.known_kinds(inst.task)
        data = module.read_data(inst)
        scenario = inst.recovery.scenario if inst.recovery else []
        rec_terms = inst.recovery.objective if inst.recovery else []
        for table, items in ((rules, [*inst.rules, *scenario]), (terms, [*inst.objective, *rec_terms])):
            for item in items:
                params: Any = table[item.kind].model_validate(item.params)
                assert params.data_problems(data) == [], (inst.id, item.id, item.kind)


def test_every_data_model_answers_every_kind_of_name_its_parameters_use(instances: dict[str, Instance]):
    """A Names tag no data model answers would raise KeyError inside the grader."""
    from pbsolve.params import Names

    for task in sorted(MINE):
        inst = instances[task]
        module = checker(inst.family)
        data = module.read_data(inst)
        rules, terms = module.known_kinds(task)
        for model in {*rules.values(), *terms.values()}:
            for field in model.model_fields.values():
                for what in _tags(field.annotation, field.metadata, Names):
                    data.names(what)  # raises KeyError when unanswered


def _tags(tp: Any, meta: Any, names_type: type) -> set[str]:
    from typing import Annotated, get_args, get_origin

    found = {m.what for m in meta if isinstance(m, names_type)}
    for a in get_args(tp):
        found |= _tags(a, get_args(a)[1:] if get_origin(a) is Annotated else (), names_type)
    return found
