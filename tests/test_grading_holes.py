"""Grading behaviours that mutation testing found unguarded (issue 19): for each, an answer
that must pass or fail and why. Without these tests a checker could flip each verdict
below and the whole suite would still pass."""

from __future__ import annotations

import copy
import json

import pytest

from pbsolve.grading import grade
from pbsolve.schema import Instance, Rule
from tests import allocation_helpers as alloc
from tests import helpers as sched

KNOWN_NAME_TASKS = ("meeting_planning", "course_timetabling", "exam_scheduling")


def failed_rules(inst: Instance, answer: dict) -> set[str]:
    """The checklist rules (item.rule) whose items the answer fails; grading must not raise."""
    g = grade(inst, json.dumps(answer))
    rule = {it.id: it.rule for it in inst.checklist}
    return {rule[i.id] for i in g.items if not i.passed}


def format_reason(inst: Instance, answer: dict) -> str:
    g = grade(inst, json.dumps(answer))
    fmt = next(it.id for it in inst.checklist if it.rule == "format")
    return next(i.reason for i in g.items if i.id == fmt)


def with_mechanism(kind: str, task: str) -> Instance:
    """A small feasible instance carrying this hard mechanism (the mechanism tests' seeds)."""
    if task in alloc.TASKS:
        for seed in (11, 12):
            inst = alloc.find(task, seed, "small", (kind,), "optimal", tries=20)
            if inst is not None:
                return inst
    else:
        for index in range(40):
            inst = sched.instance_at(task, 11, index, "small", False, (kind,))
            if inst is not None and kind in inst.mechanisms:
                return inst
    pytest.skip(f"no {kind} instance for {task}")


def near_miss(name: str) -> str:
    """Same length and case pattern, first character changed: a name no instance defines."""
    first = "Q" if name[0].upper() != "Q" else "Z"
    return (first if name[0].isupper() else first.lower()) + name[1:]


# -- 1. names are matched exactly (up to case, spacing and a leading zero in clock times)


@pytest.mark.parametrize("task", KNOWN_NAME_TASKS)
def test_a_room_named_one_letter_off_is_an_unknown_room(task):
    """'Qelta' is not 'Delta': five-letter names are the ones a clock-time rule ('09:00'
    reads as '9:00') could wrongly shorten, so every room is tried with its first letter changed."""
    inst = sched.instance_at(task, 0, 0)
    rooms = [r["id"] for r in inst.data["rooms"]]
    assert any(len(r) == 5 for r in rooms), rooms  # the case the clock rule could catch
    for room in rooms:
        answer = copy.deepcopy(inst.reference)
        row = answer["schedule"][0]
        row["room"] = near_miss(room)
        assert "format" in failed_rules(inst, answer), room
        assert "unknown room" in format_reason(inst, answer)


def test_a_start_time_one_digit_off_is_not_read_as_a_real_slot():
    """'19:00' must not be read as '09:00' (only a leading zero may be dropped), while
    '9:00' does mean '09:00'. Meeting planning is the task whose slots are clock times."""
    inst = sched.instance_at("meeting_planning", 0, 0)
    slots = [s["id"] for s in inst.data["slots"]]
    answer = copy.deepcopy(inst.reference)
    row = next(r for r in answer["schedule"] if r["start"].startswith("0"))
    stated = row["start"]
    assert "1" + stated[1:] not in slots  # e.g. '19:00' is no slot of this day
    row["start"] = "1" + stated[1:]
    assert "format" in failed_rules(inst, answer)
    assert "unknown start" in format_reason(inst, answer)
    row["start"] = stated[1:]
    assert failed_rules(inst, answer) == set()


@pytest.mark.parametrize("task", KNOWN_NAME_TASKS)
def test_an_event_named_one_letter_off_is_an_unknown_event(task):
    inst = sched.instance_at(task, 0, 0)
    answer = copy.deepcopy(inst.reference)
    answer["schedule"][0]["event"] = near_miss(answer["schedule"][0]["event"])
    assert "format" in failed_rules(inst, answer)
    assert "unknown event" in format_reason(inst, answer)


# -- 2. stated verification figures (conflict_validation), both families

VERIFICATION_TASKS = ("meeting_planning", *alloc.TASKS)


@pytest.mark.parametrize("task", VERIFICATION_TASKS)
def test_an_empty_verification_section_fails_verification(task):
    inst = with_mechanism("conflict_validation", task)
    assert inst.reference["verification"]
    answer = {**copy.deepcopy(inst.reference), "verification": {}}
    assert failed_rules(inst, answer) == {"verification"}


@pytest.mark.parametrize("task", VERIFICATION_TASKS)
def test_a_verification_group_that_is_not_an_object_fails_verification(task):
    inst = with_mechanism("conflict_validation", task)
    answer = copy.deepcopy(inst.reference)
    group = next(iter(answer["verification"]))
    answer["verification"][group] = list(answer["verification"][group].values())
    assert failed_rules(inst, answer) == {"verification"}


@pytest.mark.parametrize("task", VERIFICATION_TASKS)
def test_every_verification_figure_off_by_one_fails_verification(task):
    inst = with_mechanism("conflict_validation", task)
    answer = copy.deepcopy(inst.reference)
    for figures in answer["verification"].values():
        for name in figures:
            figures[name] += 1
    assert failed_rules(inst, answer) == {"verification"}


@pytest.mark.parametrize("task", VERIFICATION_TASKS)
def test_every_verification_figure_unknown_fails_verification(task):
    """Claiming figures without computing them ("unknown") never passes."""
    inst = with_mechanism("conflict_validation", task)
    answer = copy.deepcopy(inst.reference)
    for figures in answer["verification"].values():
        for name in figures:
            figures[name] = "unknown"
    assert failed_rules(inst, answer) == {"verification"}


@pytest.mark.parametrize("task", VERIFICATION_TASKS)
def test_verification_figures_keyed_in_another_case_pass(task):
    """Names are matched like every other name of the answer: case-insensitively."""
    inst = with_mechanism("conflict_validation", task)
    answer = copy.deepcopy(inst.reference)
    answer["verification"] = {g: {k.upper(): v for k, v in fs.items()} for g, fs in answer["verification"].items()}
    assert failed_rules(inst, answer) == set()


# -- 3, 4. material allocation: truck capacity and minimum shipment are per route


def material_setup() -> tuple[Instance, list[str], list[str], str]:
    """A plain material instance: two depots, two sites and one material to ship."""
    inst = alloc.find("material_allocation", 0)
    d = alloc.data_of(inst)
    assert len(d.depots) >= 2 and len(d.sites) >= 2
    return inst, [x.id for x in d.depots[:2]], [s.id for s in d.sites[:2]], d.materials[0].id


def verdict(inst: Instance, plan: dict, rule: Rule) -> bool:
    verdicts, _ = alloc.evaluate(inst, plan, rules=[rule])
    return verdicts[rule.id][0]


TRUCK = Rule(id="R90", kind="truck_capacity", tier="medium", params={"max": 10})
MIN_SHIPMENT = Rule(id="R91", kind="min_shipment", tier="medium", params={"min": 5})


def test_a_load_of_exactly_the_truck_capacity_is_allowed_and_one_unit_more_is_not():
    inst, (d1, _), (s1, _), m = material_setup()
    other = alloc.data_of(inst).materials[1].id
    assert verdict(inst, {(d1, s1, m): 6, (d1, s1, other): 4}, TRUCK)  # 10 units, materials added up
    assert not verdict(inst, {(d1, s1, m): 6, (d1, s1, other): 5}, TRUCK)


def test_the_truck_capacity_counts_one_route_not_the_depots_or_sites_other_traffic():
    inst, (d1, d2), (s1, s2), m = material_setup()
    # d1 sends 16 and s1 receives 16 in all, but no single route carries more than 8
    assert verdict(inst, {(d1, s1, m): 8, (d1, s2, m): 8, (d2, s1, m): 8}, TRUCK)
    assert not verdict(inst, {(d1, s1, m): 3, (d1, s2, m): 3, (d2, s2, m): 11}, TRUCK)


def test_a_delivery_below_the_minimum_fails_even_when_its_depot_and_site_have_other_traffic():
    inst, (d1, d2), (s1, s2), m = material_setup()
    # route d1->s1 carries 2 < 5, while d1 and s1 each handle plenty on other routes
    assert not verdict(inst, {(d1, s1, m): 2, (d1, s2, m): 9, (d2, s1, m): 9}, MIN_SHIPMENT)


def test_deliveries_at_or_above_the_minimum_and_unused_routes_pass_the_minimum_shipment():
    inst, (d1, d2), (s1, s2), m = material_setup()
    assert verdict(inst, {(d1, s1, m): 5, (d2, s2, m): 9}, MIN_SHIPMENT)  # d1->s2 and d2->s1 unused


# -- 5. the binding-rules list (explainability)

BINDING_TASKS = ("meeting_planning", "material_allocation")


@pytest.mark.parametrize("task", BINDING_TASKS)
def test_a_missing_binding_list_fails_only_the_binding_item(task):
    inst = with_mechanism("explainability", task)
    answer = copy.deepcopy(inst.reference)
    del answer["binding"]
    assert failed_rules(inst, answer) == {"binding"}
    answer["binding"] = None
    assert failed_rules(inst, answer) == {"binding"}


@pytest.mark.parametrize("task", BINDING_TASKS)
def test_a_binding_object_keyed_by_the_right_ids_is_not_a_list_and_fails(task):
    """{"R2": true, ...} is not the list the answer format asks for: it fails, it is not read as one."""
    inst = with_mechanism("explainability", task)
    answer = copy.deepcopy(inst.reference)
    answer["binding"] = {rid: True for rid in inst.certificate.binding_rules}
    assert failed_rules(inst, answer) == {"binding"}
    answer["binding"] = ",".join(inst.certificate.binding_rules)
    assert failed_rules(inst, answer) == {"binding"}
