"""Prompt sentences that name one or several things agree in number with what they name
("Emery finishes", "G3 goes first", "skill legal"): a prompt read aloud must be good English."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import pytest

from pbsolve.family import renderer
from pbsolve.render_kit import a_or_an, labelled, of_unit, plural
from pbsolve.schema import Instance, Rule
from tests.instances import instance_at


@cache
def _instance(task: str) -> Instance:
    inst = instance_at(task, 0, 0)
    assert inst is not None
    return inst


def _render(family_id: str, task: str, kind: str, params: dict[str, Any]) -> str:
    inst = _instance(task)
    rule = Rule(id="R1", kind=kind, tier="basic", params=params)
    return renderer(family_id).render_rule(rule, inst.data, task)


def _candidates(n: int) -> list[str]:
    return [c["id"] for c in _instance("recruitment_planning").data["candidates"][:n]]


def _slot() -> str:
    return _instance("recruitment_planning").data["slots"][-1]["id"]


def test_a_final_deadline_of_one_candidate_says_the_candidate_finishes() -> None:
    (one,) = _candidates(1)
    text = _render("workforce", "recruitment_planning", "final_deadline", {"candidates": [one], "slot": _slot()})
    assert text.startswith(f"{one} finishes their final stage (")


def test_a_final_deadline_of_two_candidates_says_each_finishes() -> None:
    a, b = _candidates(2)
    text = _render("workforce", "recruitment_planning", "final_deadline", {"candidates": [a, b], "slot": _slot()})
    assert text.startswith(f"{a} and {b} each finish their final stage (")


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        (1, "Priority group first: {0} goes first — no other group departs in an earlier period than it "),
        (
            2,
            "Priority groups first: {0} and {1} go first — no other group departs in an earlier period than any of them ",
        ),
    ],
    ids=["one group", "two groups"],
)
def test_priority_groups_first_agrees_with_the_number_of_groups(groups: int, expected: str) -> None:
    task = "disaster_evacuation_planning"
    ids = [g["id"] for g in _instance(task).data["groups"][:groups]]
    text = _render("emergency", task, "vulnerable_first", {"groups": ids})
    assert text.startswith(expected.format(*ids)), text


def test_a_list_after_its_label_agrees_in_number() -> None:
    assert labelled("skill", ["legal"]) == "skill legal"
    assert labelled("skill", ["strategy", "legal"]) == "skills strategy and legal"


@pytest.mark.parametrize(
    "task", ["volunteer_scheduling", "shift_duty_scheduling", "work_assignment_scheduling", "medical_resource_planning"]
)
def test_a_persons_skills_are_labelled_skill_for_one_and_skills_for_several(task: str) -> None:
    labels = re.findall(r"\b(skills?) ([^;\n]+)", _instance(task).prompt)
    listed = [(label, items) for label, items in labels if not items.startswith(("needed", "needs"))]
    assert listed, "no skill list in the prompt"
    for label, items in listed:
        assert (label == "skills") == (" and " in items), (label, items)


def test_a_count_of_one_names_the_unit_in_the_singular() -> None:
    assert plural(1, "shift") == "1 shift" and plural(3, "shift") == "3 shifts"
    assert plural("1", "hour") == "1 hour"  # a figure rendered as text, as ranged() returns it
    assert plural("4–6 (uncertain input U1)", "shift") == "4–6 (uncertain input U1) shifts"


@pytest.mark.parametrize(
    ("unit", "one"),
    [("crates", "crate"), ("boxes", "box"), ("bunches", "bunch"), ("litres", "litre"), ("kg", "kg")],
)
def test_a_quantity_of_one_in_a_data_unit_names_the_unit_in_the_singular(unit: str, one: str) -> None:
    assert of_unit(1, unit) == f"1 {one}" and of_unit(5, unit) == f"5 {unit}"


def test_every_unit_the_allocation_catalogues_sample_has_a_singular_that_reads_right() -> None:
    from pbsolve.models.allocation import material, procurement

    units = {u for pairs, _places in material.CONTEXT.values() for _, u in pairs}
    units |= {u for pairs in procurement.CATALOGUE.values() for _, u in pairs}
    read_right = {  # checked by eye; a new catalogue unit with another singular fails here
        "bag", "bale", "bar", "beam", "box", "bunch", "carton", "case", "crate", "cylinder", "kg", "kit", "laptop",
        "litre", "pack", "pallet", "parcel", "printer", "reel", "roll", "set", "sheet", "tablet", "tent", "tin",
        "tonne", "vial",
    }  # fmt: skip
    assert {of_unit(1, u).removeprefix("1 ") for u in units} <= read_right
    assert all(of_unit(2, u) == f"2 {u}" for u in units)


def test_the_indefinite_article_follows_the_first_letter() -> None:
    assert a_or_an("observation ward") == "an observation ward" and a_or_an("Interview") == "an Interview"
    assert a_or_an("ward") == "a ward" and a_or_an("Screen") == "a Screen"


@pytest.mark.parametrize(
    ("noun", "expected"),
    [
        ("X-ray room", "an X-ray room"),
        ("MRI scanner", "an MRI scanner"),
        ("CT room", "a CT room"),
        ("ICU bed", "an ICU bed"),
    ],
)
def test_an_abbreviation_takes_the_article_of_its_spelled_out_first_letter(noun: str, expected: str) -> None:
    assert a_or_an(noun) == expected


def _line_with_an_empty_list(task: str, entities: str, field: str, empty: Any) -> str:
    """The prompt line of the first of ``entities`` once its ``field`` is emptied."""
    inst = _instance(task)
    data = json.loads(json.dumps(inst.data))
    first = data[entities][0]
    first[field] = empty
    text = renderer(inst.family).render_prompt(
        data, inst.rules, inst.objective, inst.task, inst.subtask, inst.mechanisms, inst.recovery
    )
    return next(x for x in text.splitlines() if x.startswith(f"- {first['id']}: "))


def test_a_supplier_that_sells_none_of_the_items_says_so() -> None:
    line = _line_with_an_empty_list("procurement_planning", "suppliers", "offers", [])
    assert line.endswith("; sells none of the items"), line


def test_a_depot_that_holds_nothing_says_so() -> None:
    line = _line_with_an_empty_list("material_allocation", "depots", "stock", {})
    assert line.endswith(": holds nothing"), line


def test_a_teacher_with_no_subject_says_so() -> None:
    line = _line_with_an_empty_list("educational_resource_planning", "teachers", "subjects", {})
    assert ": teaches no subject of this plan" in line, line


def _timetable(task: str) -> Any:
    from pbsolve.checkers.scheduling.instance_data import TimetableData

    return TimetableData.model_validate(_instance(task).data)


def test_a_span_of_hours_ends_at_a_clock_time_not_at_the_next_slots_label() -> None:
    from pbsolve.renderers.scheduling_places import runs

    d = _timetable("schedule_planning")
    first, second = d.slots[0], d.slots[1]
    assert first.day == second.day and " " in first.id  # 'Mon 09:00', a day and a clock time
    day = first.id.split(" ")[0]
    (span,) = runs(d, [first.id, second.id])
    assert span == f"{first.id}–{second.end_label.removeprefix(day + ' ')}" and span.count(day) == 1


def test_a_single_period_is_named_by_its_label() -> None:
    from pbsolve.renderers.scheduling_places import runs

    d = _timetable("content_scheduling")
    assert d.slots[0].end_label.startswith("end of ")
    assert runs(d, [d.slots[0].id]) == [d.slots[0].id]
    assert runs(d, [d.slots[0].id, d.slots[1].id]) == [f"{d.slots[0].id}–{d.slots[1].end_label}"]


def test_a_room_is_prefixed_only_when_its_name_is_one_word() -> None:
    from pbsolve.renderers.scheduling_words import room_label

    assert room_label("Cedar") == "Room Cedar"
    assert room_label("Writing room") == "Writing room" and room_label("Weights area") == "Weights area"


def _ids(task: str, key: str, n: int) -> list[str]:
    return [x["id"] for x in _instance(task).data[key][:n]]


CLARIFIED = [  # (family, task, kind, params from the instance's data, words the sentence must carry)
    ("routing", "transportation_dispatch_planning", "battery", lambda: {"reserve": 18},
     "also after the drive back to the depot (so its driving minutes, the drive back included, total at most its range minus 18)"),
    ("routing", "transportation_dispatch_planning", "different_vehicle",
     lambda: {"pairs": [_ids("transportation_dispatch_planning", "jobs", 2)]}, "are done by two different vehicles."),
    ("workforce", "work_assignment_scheduling", "different_worker",
     lambda: {"pairs": [_ids("work_assignment_scheduling", "tasks", 2)]}, "are done by two different workers."),
    ("project", "power_dispatch_planning", "spinning_reserve", lambda: {"mw": 1},
     "an hour with no unit on has none spare and breaks this rule"),
    ("project", "financial_budgeting", "start_period",
     lambda: {"item": _ids("financial_budgeting", "items", 1)[0], "period": 2}, "(its amount in period 1 is 0)"),
    ("project", "production_planning", "max_runs",
     lambda: {"product": _ids("production_planning", "products", 1)[0], "max": 0}, "is not made at all"),
    ("emergency", "medical_resource_planning", "triage_order",
     lambda: {"pairs": [_ids("medical_resource_planning", "patients", 2)]}, "Priority (the first patient named is more urgent)"),
    ("scheduling", "fitness_planning", "progression",
     lambda: {"events": _ids("fitness_planning", "events", 2), "min_days": 1, "max_days": 1},
     "take place in this order, the second exactly 1 day after the day of the one before it."),
    ("scheduling", "fitness_planning", "weekly_quota",
     lambda: {"events": _ids("fitness_planning", "events", 3), "min": 1, "days_per_week": 7}, " takes place in each week"),
    ("scheduling", "email_scheduling", "daily_limit",
     lambda: {"max": 2, "people": _ids("email_scheduling", "people", 1)}, "at most 2 messages per UTC day."),
]  # fmt: skip


@pytest.mark.parametrize(("family_id", "task", "kind", "params", "words"), CLARIFIED, ids=[c[2] for c in CLARIFIED])
def test_a_clarified_sentence_says_what_is_graded(
    family_id: str, task: str, kind: str, params: Any, words: str
) -> None:
    text = _render(family_id, task, kind, params())
    assert words in text, text
