"""The rule sentences read as the checker judges: one test per rule kind, rendered for
its edge values (0, 1, one-element and several series, single and several spans).

Data comes from uncertified drafts (no solver run), so every sentence is rendered on
real instance data; a final test holds the list of tested kinds against every kind the
renderers can be asked for, so a new kind cannot arrive without a wording test.
"""

from __future__ import annotations

import random
import re
from functools import cache
from typing import Any

import pytest

from pbsolve.checkers.allocation.data import MaterialData, ProcurementData
from pbsolve.family import NoDraft, family, find_task
from pbsolve.renderers import allocation as A
from pbsolve.renderers import scheduling as S
from pbsolve.renderers.allocation import material as material_text
from pbsolve.renderers.allocation import procurement as procurement_text
from pbsolve.sampler import sample_spec
from pbsolve.schema import Rule


@cache
def data_of(task: str) -> dict[str, Any]:
    """The data of the first draft of the task that samples (size small)."""
    for index in range(40):
        spec = sample_spec(0, index, 0, None, task, "small")
        try:
            return family(spec.family).draft(spec, random.Random(spec.seed)).data
        except NoDraft:
            continue
    raise AssertionError(f"no draft of {task}")


def say(task: str, kind: str, data: dict[str, Any] | None = None, tier: str = "basic", **params: Any) -> str:
    rule = Rule(id="R1", kind=kind, tier=tier, params=params)
    renderer = S if find_task(task).family == "scheduling" else A
    return renderer.render_rule(rule, data if data is not None else data_of(task), task)


# == Scheduling ==========================================================================
MEET, COURSE, EXAM = "meeting_planning", "course_timetabling", "exam_scheduling"


def _events(task: str) -> list[dict[str, Any]]:
    return data_of(task)["events"]


def _with_series(series: list[str | None]) -> dict[str, Any]:
    """Course data whose events carry the given series codes (None: no series)."""
    data = dict(data_of(COURSE))
    events = [dict(e) for e in data["events"]]
    while len(events) < len(series):  # more events: copies of the last, under new ids
        events.append({**events[-1], "id": f"X-L{len(events) + 1}"})
    for e, code in zip(events, series + [None] * (len(events) - len(series))):
        e["series"] = code
    data["events"] = events
    return data


def test_series_order_with_one_series_is_one_chain_that_may_touch():
    d = _with_series(["A", "A", "A"])
    ids = [e["id"] for e in d["events"][:3]]
    text = say(COURSE, "series_order", d)
    assert text.startswith(f"{ids[0]}, {ids[1]} and {ids[2]} happen in this order")
    assert "ends no later than the next one starts" in text
    assert "ends before" not in text


def test_series_order_with_several_series_states_one_order_per_series():
    d = _with_series(["A", "A", "B", "B", "C"])  # C has one lecture: it orders nothing
    ids = [e["id"] for e in d["events"]]
    text = say(COURSE, "series_order", d)
    assert "Each of these 2 series happens in its own listed order" in text
    assert f"{ids[0]} and {ids[1]}; {ids[2]} and {ids[3]}" in text
    assert "different series may come in any order" in text
    assert ids[4] not in text  # a one-lecture "series" is not a series


def test_series_order_without_any_series_of_two_orders_nothing():
    text = say(COURSE, "series_order", _with_series(["A", "B"]))
    assert "no two lectures share a series" in text


def test_precedence_allows_the_next_event_to_start_as_the_first_ends():
    a, b = (e["id"] for e in _events(MEET)[:2])
    assert say(MEET, "precedence", before=a, after=b) == f"{a} ends no later than {b} starts."


def test_blocked_slots_joins_separate_spans_with_or_and_merges_adjacent_hours():
    slots = [s["id"] for s in data_of(MEET)["slots"]]
    text = say(MEET, "blocked_slots", slots=[slots[0], slots[1], slots[3]])
    first_end = data_of(MEET)["slots"][1]["end_label"]
    fourth_end = data_of(MEET)["slots"][3]["end_label"]
    assert text == f"No meeting may take place, even in part, during {slots[0]}–{first_end} or {slots[3]}–{fourth_end}."
    assert " and " not in text


def test_blocked_slots_with_one_slot_names_one_span():
    s = data_of(EXAM)["slots"][0]["id"]
    assert say(EXAM, "blocked_slots", slots=[s]) == f"No exam may take place, even in part, during {s}."


def test_deadline_says_both_for_two_events_all_for_three_and_neither_for_one():
    ids = [e["id"] for e in _events(EXAM)]
    to = data_of(EXAM)["slots"][-1]["id"]
    end = data_of(EXAM)["slots"][-1]["end_label"]
    assert say(EXAM, "deadline", events=ids[:2], to=to) == f"{ids[0]} and {ids[1]} must both finish by {end}."
    assert say(EXAM, "deadline", events=ids[:3], to=to).endswith(f"must all finish by {end}.")
    assert say(EXAM, "deadline", events=ids[:1], to=to) == f"{ids[0]} must finish by {end}."


def test_window_names_its_start_and_finish():
    e = _events(MEET)[0]["id"]
    slots = data_of(MEET)["slots"]
    text = say(MEET, "window", event=e, **{"from": slots[0]["id"], "to": slots[2]["id"]})
    assert text == f"{e} must start at or after {slots[0]['id']} and finish by {slots[2]['end_label']}."


@pytest.mark.parametrize("n, expected", [(0, "part in no exams at all"), (1, "at most 1 exam per day"), (2, "at most 2 exams per day")])
def test_daily_limit_counts_agree_with_their_noun(n, expected):
    person = data_of(EXAM)["people"][0]["id"]
    assert expected in say(EXAM, "daily_limit", people=[person], max=n)


def test_daily_limit_of_several_people_applies_to_each():
    people = [p["id"] for p in data_of(EXAM)["people"][:2]]
    assert say(EXAM, "daily_limit", people=people, max=2).startswith(f"{people[0]} and {people[1]} each take part")


@pytest.mark.parametrize("n, expected", [(1, "At most one exam takes place on any one day."), (3, "At most 3 exams take place on any one day.")])
def test_day_cap_agrees_in_number(n, expected):
    assert say(EXAM, "day_cap", max=n) == expected


def test_priority_order_lists_each_pair():
    a, b, c = (e["id"] for e in _events(MEET)[:3])
    assert say(MEET, "priority_order", events=[a, b, c]) == (
        f"Priority ranking: {a} starts no later than {b}, {b} starts no later than {c}."
    )


@pytest.mark.parametrize("gap, unit", [(1, "1 hour free"), (2, "2 hours free")])
def test_person_buffer_agrees_in_number(gap, unit):
    person = data_of(MEET)["people"][0]["id"]
    assert unit in say(MEET, "person_buffer", person=person, gap=gap)


@pytest.mark.parametrize("n, unit", [(1, "more than 1 period in a row"), (2, "more than 2 periods in a row")])
def test_max_consecutive_agrees_in_number(n, unit):
    person = data_of(EXAM)["people"][0]["id"]
    text = say(EXAM, "max_consecutive", person=person, max=n)
    assert text.endswith(unit + " (busy: in one of their exams of this plan; the count starts again each day).")


def test_different_days_and_same_room_say_both_or_all():
    ids = [e["id"] for e in _events(EXAM)]
    assert say(EXAM, "different_days", events=ids[:2]).endswith("both take place on different days.")
    assert say(EXAM, "different_days", events=ids[:3]).endswith("all take place on different days.")
    assert say(EXAM, "same_room", events=ids[:2]).endswith("both use the same room.")
    assert say(EXAM, "same_room", events=ids[:3]).endswith("all use the same room.")


def test_person_absent_and_room_closed_name_every_span_as_a_time_range():
    d = data_of(MEET)
    slots = [s["id"] for s in d["slots"]]
    person, room = d["people"][0]["id"], d["rooms"][0]["id"]
    two = f"{slots[0]}–{d['slots'][0]['end_label']} and {slots[2]}–{d['slots'][2]['end_label']}"
    assert say(MEET, "person_absent", tier="hard", person=person, slots=[slots[0], slots[2]]).endswith(f"during {two}.")
    assert say(MEET, "room_closed", tier="hard", room=room, slots=[slots[0], slots[2]]) == f"Room {room} is closed during {two}."


STRUCTURAL = ("availability", "room_fit", "person_no_overlap", "room_no_overlap", "room_backup")


@pytest.mark.parametrize("task", [MEET, COURSE, EXAM])
@pytest.mark.parametrize("kind", STRUCTURAL)
def test_structural_scheduling_rules_use_the_task_vocabulary(task, kind):
    assert S.VOCAB[task].event in say(task, kind, tier="hard" if kind == "room_backup" else "basic")


def test_stateful_sentences_state_every_number():
    d = data_of(COURSE)
    room, person = d["rooms"][0]["id"], d["people"][0]["id"]
    assert "during the next 1 period of the same day" in say(COURSE, "room_cooldown", tier="stateful", room=room, gap=1)
    text = say(COURSE, "fatigue_protocol", tier="stateful", person=person, threshold=2, rest=1)
    assert "reached 2" in text and "at least 1 period after" in text
    text = say(MEET, "battery_level", tier="stateful", feature="video", capacity=4, start=3, use=2, recharge=1)
    assert all(f in text for f in ("capacity 4 units", "3 units at the start", "falls by 2", "rises by 1"))


def test_the_articles_before_vowel_nouns_are_right():
    assert "An exam lasting k periods" in S.render_prompt(data_of(EXAM), [], [], EXAM, "university_finals")


# == Allocation ==========================================================================
PROC, MAT, EDU, GRP = "procurement_planning", "material_allocation", "educational_resource_planning", "student_grouping"


def test_procurement_prompt_defines_how_units_of_different_items_add_up():
    d = dict(data_of(PROC))
    items = [dict(i) for i in d["items"]]
    items[0]["unit"], items[1]["unit"] = "kg", "reels"
    d["items"] = items
    body = "\n".join(procurement_text._procurement_body(ProcurementData.model_validate(d), "manufacturing_inputs", [], []))
    assert "The items come in different units (kg and reels)" in body
    assert "every unit counts as 1 whatever it measures" in body
    # the limits that add items refer to that convention by the same words
    assert "the units ordered from a supplier (all items together)" in say(PROC, "supplier_capacity", d)
    assert say(PROC, "dock_capacity", d, max=50) == "At most 50 units (all items together) can be received in any one week."
    assert "at most 1 unit (all items together) may be in storage" in say(PROC, "storage_cap", d, max=1)


def test_procurement_prompt_with_one_unit_adds_quantities_in_it():
    d = dict(data_of(PROC))
    d["items"] = [{**i, "unit": "kg"} for i in d["items"]]
    body = "\n".join(procurement_text._procurement_body(ProcurementData.model_validate(d), "manufacturing_inputs", [], []))
    assert "adds their quantities in kg" in body


def test_min_order_lists_each_supplier_minimum():
    sups = [s["id"] for s in data_of(PROC)["suppliers"][:2]]
    text = say(PROC, "min_order", min={sups[0]: 1, sups[1]: 8})
    assert f"totals at least its listed minimum ({sups[0]}: 1 unit; {sups[1]}: 8 units)" in text
    assert "ordering nothing from it that week is allowed" in text


def test_min_order_of_one_supplier_names_it():
    sup = data_of(PROC)["suppliers"][0]["id"]
    text = say(PROC, "min_order", min={sup: 6})
    assert f"ordered from {sup}, that week's order from {sup} totals at least 6 units;" in text
    assert "these suppliers" not in text


def test_other_procurement_rules_state_their_figures():
    d = data_of(PROC)
    sup, item, week = d["suppliers"][0]["id"], d["items"][0]["id"], d["periods"][1]
    unit = d["items"][0]["unit"]
    assert say(PROC, "inventory_balance").startswith("Stock is carried from week to week")
    assert say(PROC, "period_budget", max=100).startswith("At most 100 may be spent in any one week")
    assert say(PROC, "supplier_closed", tier="hard", supplier=sup, periods=[week]) == f"{sup} takes no orders in {week}."
    assert say(PROC, "safety_stock", item=item, min=3) == f"{item} never ends a week with fewer than 3 {unit} in stock."
    assert f"at least 4 {unit} of {item}" in say(PROC, "stock_target", item=item, period=week, min=4)
    assert "in the week it is received" in say(PROC, "shelf_life", item=item, periods=1)
    assert "by the end of the second week" in say(PROC, "shelf_life", item=item, periods=2)
    assert say(PROC, "supplier_share", item=item, pct=60).endswith(f"60% of all the {item} ordered over the plan.")
    assert "at least 30 units in total" in say(PROC, "contract_minimum", supplier=sup, min=30)
    assert say(PROC, "order_gap", supplier=sup) == f"Orders are never placed with {sup} in two consecutive weeks."
    assert say(PROC, "single_sourcing", item=item) == (
        f"Single sourcing: every order of {item} over the whole plan goes to one and the same supplier."
    )
    assert "at least two different suppliers" in say(PROC, "dual_sourcing", item=item)
    assert say(PROC, "lot_cap", max=20).endswith("may exceed 20 units.")
    assert "arrived one week late" in say(PROC, "delay_robust", tier="hard")


def test_material_prompt_defines_how_units_of_different_materials_add_up():
    d = dict(data_of(MAT))
    mats = [dict(m) for m in d["materials"]]
    if len(mats) < 2:
        pytest.skip("one material")
    mats[0]["unit"], mats[1]["unit"] = "kits", "litres"
    d["materials"] = mats
    body = "\n".join(material_text._material_body(MaterialData.model_validate(d), "disaster_relief", [], []))
    assert "The materials come in different units (kits and litres)" in body


@pytest.mark.parametrize("n, expected", [(0, "every site has the same fill rate"), (1, "within 1 percentage point "), (10, "within 10 percentage points ")])
def test_fill_gap_edge_values(n, expected):
    assert expected in say(MAT, "fill_gap", max=n)


def test_material_rules_state_their_figures():
    d = data_of(MAT)
    dep, sites, mat = d["depots"][0]["id"], [s["id"] for s in d["sites"]], d["materials"][0]["id"]
    assert say(MAT, "depot_stock").startswith("No depot sends out more")
    assert say(MAT, "request_cap").startswith("No site receives more")
    assert f"nothing can be sent from {dep} to {sites[0]}" in say(MAT, "route_closed", depot=dep, site=sites[0])
    assert "at most 40 units (all materials together)" in say(MAT, "truck_capacity", max=40)
    assert say(MAT, "depot_throughput", depot=dep, max=30).startswith(f"{dep} can dispatch at most 30 units")
    assert f"{sites[0]} is guaranteed at least 2" in say(MAT, "min_guarantee", sites=sites[:1], material=mat, min=2)
    assert f"{sites[0]} and {sites[1]} are each guaranteed" in say(MAT, "min_guarantee", sites=sites[:2], material=mat, min=2)
    assert say(MAT, "site_intake", site=sites[0], max=9).startswith(f"{sites[0]} can take in at most 9 units")
    assert say(MAT, "transport_budget", max=99) == "The total transport cost may not exceed 99."
    assert say(MAT, "priority_order", sites=sites[:2]) == f"Priority order: {sites[0]}'s fill rate is at least {sites[1]}'s."
    assert say(MAT, "single_source", sites=sites[:1]) == f"{sites[0]} receives everything from one depot only."
    assert say(MAT, "single_source", sites=sites[:2]).startswith(f"{sites[0]} and {sites[1]} each receive")
    assert say(MAT, "min_shipment", min=5).endswith("either nothing or at least 5 units.")
    assert say(MAT, "share_cap", material=mat, pct=40) == f"No site receives more than 40% of all the {mat} sent out."
    assert "each depot failing on its own" in say(MAT, "depot_failure", tier="hard")


@pytest.mark.parametrize(
    "n, expected",
    [
        (0, "There are no laptop trolleys: every lesson that needs laptops must be held in a room with computers."),
        (1, "There is 1 laptop trolley: in any slot, at most 1 of the lessons that need laptops may be held in a room without computers"),
        (2, "There are 2 laptop trolleys: in any slot, at most 2 of the lessons that need laptops may be held in rooms without computers"),
    ],
)
def test_kit_pool_edge_values(n, expected):
    text = say(EDU, "kit_pool", max=n)
    assert text.startswith(expected)
    assert "0 laptop trolleys" not in text and "at most 0" not in text


def _teachers_available(available: bool) -> dict[str, Any]:
    d = dict(data_of(EDU))
    slot = d["slots"][0]["id"]
    d["teachers"] = [{**t, "unavailable": [slot] if available is False and k == 0 else []} for k, t in enumerate(d["teachers"])]
    return d


def test_teacher_backup_without_any_unavailability_says_nothing_about_it():
    text = say(EDU, "teacher_backup", _teachers_available(True), tier="hard")
    assert "unavailable" not in text and "available" not in text
    assert "who teaches the lesson's subject. If any one teacher fell ill" in text


def test_teacher_backup_with_listed_unavailability_has_no_double_negative():
    text = say(EDU, "teacher_backup", _teachers_available(False), tier="hard")
    assert "not unavailable" not in text
    assert "is available in the lesson's slot (not listed as unavailable then)" in text


@pytest.mark.parametrize("n, expected", [(0, "teaches no lessons."), (1, "teaches at most 1 lesson."), (3, "teaches at most 3 lessons.")])
def test_teacher_load_edge_values(n, expected):
    t = data_of(EDU)["teachers"][0]["id"]
    assert say(EDU, "teacher_load", teachers=[t], max=n) == f"{t} {expected}"


@pytest.mark.parametrize("n, expected", [(0, "teaches no lessons on any day."), (1, "teaches at most 1 lesson on any one day.")])
def test_daily_load_edge_values(n, expected):
    t = data_of(EDU)["teachers"][0]["id"]
    assert say(EDU, "daily_load", teachers=[t], max=n) == f"{t} {expected}"


@pytest.mark.parametrize("n, expected", [(0, "are all equal."), (2, "differ by at most 2 between any two teachers.")])
def test_load_balance_edge_values(n, expected):
    assert say(EDU, "load_balance", max=n).endswith(expected)


def test_education_rules_state_their_figures():
    d = data_of(EDU)
    ts, room, slots = [t["id"] for t in d["teachers"]], d["rooms"][0]["id"], [s["id"] for s in d["slots"]]
    lessons = [x["id"] for x in d["lessons"]]
    assert "who teaches its subject" in say(EDU, "qualified")
    assert say(EDU, "room_fit").startswith("A lesson's room must seat its whole group")
    assert say(EDU, "teacher_no_clash") == "No teacher teaches two lessons in the same slot."
    assert say(EDU, "room_no_clash") == "A room holds at most one lesson per slot."
    assert "unavailable" in say(EDU, "availability")
    assert say(EDU, "teacher_absent", tier="hard", teacher=ts[0], slots=slots[:2]).startswith(f"{ts[0]} is absent in {slots[0]} and {slots[1]}")
    assert say(EDU, "room_closed", room=room, slots=slots[:1]) == f"Room {room} is closed in {slots[0]}."
    assert say(EDU, "min_load", teachers=ts[:2], min=1) == f"{ts[0]} and {ts[1]} each teach at least 1 lesson."
    assert say(EDU, "continuity", lessons=lessons[:2]) == f"{lessons[0]} and {lessons[1]} are taught by the same teacher."
    assert say(EDU, "same_room", lessons=lessons[:2]) == f"{lessons[0]} and {lessons[1]} are held in the same room."
    assert "two consecutive slots of the same day" in say(EDU, "teacher_gap", teacher=ts[0])


@pytest.mark.parametrize("lo, hi, expected", [(1, 1, "exactly 1 student."), (3, 3, "exactly 3 students."), (2, 4, "between 2 and 4 students.")])
def test_group_size_edge_values(lo, hi, expected):
    assert say(GRP, "group_size", min=lo, max=hi).endswith(expected)


@pytest.mark.parametrize("n, expected", [(1, "more than 1 student of"), (2, "more than 2 students of")])
def test_track_cap_agrees_in_number(n, expected):
    assert expected in say(GRP, "track_cap", max=n)


@pytest.mark.parametrize("n, expected", [(0, "every group has the same skill total."), (3, "differ by at most 3.")])
def test_skill_balance_edge_values(n, expected):
    assert say(GRP, "skill_balance", max=n).endswith(expected)


@pytest.mark.parametrize("n, expected", [(1, "at least 1 track."), (2, "at least 2 different tracks.")])
def test_diversity_agrees_in_number(n, expected):
    assert say(GRP, "diversity", min=n).endswith(expected)


def test_grouping_rules_state_their_figures():
    names = [s["id"] for s in data_of(GRP)["students"]]
    a, b, c, e = names[:4]
    assert say(GRP, "apart", pairs=[[a, b]]) == f"{a} and {b} are in different groups."
    assert say(GRP, "together", pairs=[[a, b], [c, e]]) == f"{a} and {b} are in the same group; {c} and {e} are in the same group."
    assert say(GRP, "leader_floor", level=2) == "Every group has at least one student with leadership 2 or more."
    assert say(GRP, "skill_floor", min=6).endswith("is at least 6.")
    assert say(GRP, "no_isolation") == "No student is the only one of their track in their group."
    assert say(GRP, "wish_guarantee", students=[a]).startswith(f"{a} shares a group")
    assert say(GRP, "wish_guarantee", students=[a, b]).startswith(f"{a} and {b} each share a group")
    assert "leadership 2 or more" in say(GRP, "mentor", level=2)
    assert "each student dropping out on their own" in say(GRP, "dropout_robust", tier="hard", level=1)


# == coverage ============================================================================
def _all_kinds(task: str) -> set[str]:
    spec = find_task(task)
    if spec.family == "allocation":
        return set(A.SENTENCES[task])
    from pbsolve.mechanisms import HARD_KINDS, REPORTING_KINDS

    mechanisms = set(HARD_KINDS) | set(REPORTING_KINDS)
    pool = {c.id for c in spec.pool} - mechanisms
    return pool | set(spec.base_rules) | {"person_absent", "room_closed", "room_backup"}


@pytest.mark.parametrize("task", [MEET, COURSE, EXAM, PROC, MAT, EDU, GRP])
def test_every_rule_kind_of_the_task_has_a_wording_test(task):
    """Read from this module's source (``say(TASK, "kind", ...)`` calls), so the check
    does not depend on which tests ran on which xdist worker. The scheduling tasks share
    one renderer, so a kind tested on one of them counts for all three."""
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    said = set(re.findall(r'say\((\w+), "(\w+)"', source))
    scheduling = {"MEET", "COURSE", "EXAM"}
    tag = {MEET: "MEET", COURSE: "COURSE", EXAM: "EXAM", PROC: "PROC", MAT: "MAT", EDU: "EDU", GRP: "GRP"}[task]
    if tag in scheduling:
        covered = {kind for var, kind in said if var in scheduling} | set(STRUCTURAL)
    else:
        covered = {kind for var, kind in said if var == tag}
    missing = sorted(_all_kinds(task) - covered)
    assert not missing, f"{task}: rule kinds without a wording test: {missing}"
