"""How plans are read, and the reasons given when they cannot be (mutation campaign survivors).

The reason a plan is refused is user-facing: it names the offending row 1-based, quotes at
most 40 characters of an unknown name and spells out the fields a row needs. Each test
hands one reader (``row_names``, an allocation task type's ``read_plan``, the timetable
``read_plan``) a small hand-built plan and pins the exact reason. The offending row is
always the second one, so that a row number off by one either way shows.

Readers look the instance's own spellings up without normalising them; the tests that say
so replace the normaliser with one that fails, so a reader that normalises an exact
spelling (or skips the exact table) is noticed.
"""

from __future__ import annotations

from typing import Any

import pytest

from pbsolve.checker_kit import MAX_QUANTITY, Names, owner_rows, row_names, start_rows
from pbsolve.checkers.allocation import TASKS, education, grouping
from pbsolve.checkers.scheduling import checks, read_data
from pbsolve.schema import Instance
from tests.instances import instance_at

EDU, MAT, PROC, GROUP = (
    "educational_resource_planning",
    "material_allocation",
    "procurement_planning",
    "student_grouping",
)
LONG = "Q" * 39 + "RSTUVWXYZ"  # an unknown name longer than the 40 characters a reason quotes
QUOTED = repr(LONG[:40])


def _instance(task: str) -> Instance:
    inst = instance_at(task, 0, 0)
    assert inst is not None, "the generator no longer gives this instance"
    return inst


def _read(task: str, section: dict[str, Any]) -> tuple[Any, str]:
    inst = _instance(task)
    tc = TASKS[task]
    d = tc.data(inst)
    return tc.read_plan(d, section, tc.lookups(d), list(inst.rules))


def _no_norm(text: str) -> str:
    raise AssertionError(f"normalised {text!r}, an exact spelling")


# -- row_names -----------------------------------------------------------------------------
FIELDS = {"depot": Names(["North"]), "site": Names(["Mercy"]), "material": Names(["Oxygen"])}


def test_row_names_gives_each_field_as_the_data_spells_it() -> None:
    row = {"depot": " north ", "site": "MERCY", "material": "oxygen"}
    assert row_names(row, 0, "shipment", FIELDS) == (["North", "Mercy", "Oxygen"], "")


def test_row_names_numbers_a_row_that_is_not_an_object_from_one() -> None:
    assert row_names(["North"], 1, "shipment", FIELDS) == (None, "shipment 2 is not an object")


def test_row_names_lists_every_string_field_a_row_needs() -> None:
    row = {"depot": "North", "site": 3, "material": "Oxygen"}
    assert row_names(row, 1, "shipment", FIELDS) == (
        None,
        "shipment 2 needs string fields 'depot', 'site' and 'material'",
    )


def test_row_names_with_two_fields_joins_them_with_and() -> None:
    fields = {"depot": FIELDS["depot"], "site": FIELDS["site"]}
    assert row_names({"depot": "North"}, 1, "order", fields) == (None, "order 2 needs string fields 'depot' and 'site'")


def test_row_names_quotes_forty_characters_of_an_unknown_name() -> None:
    row = {"depot": "North", "site": LONG, "material": "Oxygen"}
    assert row_names(row, 1, "shipment", FIELDS) == (None, f"shipment 2 names unknown site {QUOTED}")


def test_row_names_reports_the_first_unknown_field_in_field_order() -> None:
    row = {"depot": "North", "site": "Nowhere", "material": "Lead"}
    assert row_names(row, 1, "shipment", FIELDS) == (None, "shipment 2 names unknown site 'Nowhere'")


# -- owner_rows ----------------------------------------------------------------------------
VANS = Names(["Van A", "Van B"])


def _routes(rows: Any) -> tuple[Any, str]:
    return owner_rows({"routes": rows}, "routes", "vehicle", "stops", VANS, "route")


def test_owner_rows_gives_each_owner_as_the_data_spells_it_with_its_raw_items() -> None:
    got = _routes([{"vehicle": " van b ", "stops": ["S1", 2]}, {"vehicle": "Van A", "stops": []}])
    assert got == ([(0, "Van B", ["S1", 2]), (1, "Van A", [])], "")


def test_owner_rows_needs_the_section_list() -> None:
    assert owner_rows({}, "routes", "vehicle", "stops", VANS, "route") == (None, "'routes' is missing or not a list")
    assert owner_rows([], "routes", "vehicle", "stops", VANS, "route") == (None, "'routes' is missing or not a list")
    assert _routes({"vehicle": "Van A"}) == (None, "'routes' is missing or not a list")


def test_owner_rows_numbers_a_row_that_is_not_an_object_from_one() -> None:
    assert _routes([{"vehicle": "Van A", "stops": []}, "Van B"]) == (None, "route 2 is not an object")


def test_owner_rows_needs_a_string_owner_and_a_list_of_items() -> None:
    want = (None, "route 1 needs a string 'vehicle' and a list 'stops'")
    assert _routes([{"vehicle": 3, "stops": []}]) == want
    assert _routes([{"vehicle": "Van A", "stops": "S1"}]) == want


def test_owner_rows_quotes_forty_characters_of_an_unknown_owner() -> None:
    assert _routes([{"vehicle": "Van A", "stops": []}, {"vehicle": LONG, "stops": []}]) == (
        None,
        f"route 2 names unknown vehicle {QUOTED}",
    )


def test_owner_rows_refuses_a_second_row_for_one_owner() -> None:
    rows = [{"vehicle": "Van A", "stops": []}, {"vehicle": "VAN A", "stops": ["S1"]}]
    assert _routes(rows) == (None, "vehicle Van A has more than one route")


# -- start_rows ----------------------------------------------------------------------------
TASKS_ = Names(["T1", "T2", "T3"])
DURATIONS = {"T1": 2, "T2": 3, "T3": 1}


def _starts(rows: Any) -> tuple[Any, str]:
    return start_rows({"schedule": rows}, "task", "tasks", TASKS_, DURATIONS, 10, "hour")


def _rows(**starts: Any) -> list[dict[str, Any]]:
    return [{"task": t, "start": v} for t, v in starts.items()]


def test_start_rows_gives_each_start_under_the_name_the_data_spells() -> None:
    rows = [{"task": " t2 ", "start": 7}, {"task": "T1", "start": 0}, {"task": "T3", "start": 9}]
    assert _starts(rows) == ({"T2": 7, "T1": 0, "T3": 9}, "complete plan")


def test_start_rows_needs_the_schedule_list() -> None:
    assert _starts({"task": "T1"}) == (None, "'schedule' is missing or not a list")
    assert start_rows([], "task", "tasks", TASKS_, DURATIONS, 10, "hour") == (None, "'schedule' is missing or not a list")


def test_start_rows_numbers_a_row_that_is_not_an_object_from_one() -> None:
    assert _starts([*_rows(T1=0), "T2"]) == (None, "schedule row 2 is not an object")


def test_start_rows_needs_a_string_name_and_knows_every_name() -> None:
    assert _starts([{"task": 1, "start": 0}]) == (None, "schedule row 1 needs a string field 'task'")
    assert _starts([*_rows(T1=0), {"task": LONG, "start": 0}]) == (None, f"schedule row 2 names unknown task {QUOTED}")


def test_start_rows_needs_a_whole_number_start_in_the_unit() -> None:
    for bad in ("3", True, 2.0, None):
        assert _starts(_rows(T1=bad)) == (None, "task T1 needs a whole-number 'start' hour")


def test_start_rows_keeps_every_entity_inside_the_horizon() -> None:
    assert _starts(_rows(T1=0, T2=7, T3=9)) == ({"T1": 0, "T2": 7, "T3": 9}, "complete plan")  # T2 ends at 10
    assert _starts(_rows(T2=8)) == (None, "task T2 starts at 8: it must start at 0 or later and end by 10")
    assert _starts(_rows(T1=-1)) == (None, "task T1 starts at -1: it must start at 0 or later and end by 10")


def test_start_rows_refuses_an_entity_given_twice_and_lists_the_missing_in_data_order() -> None:
    assert _starts([*_rows(T1=0), {"task": "t1", "start": 1}]) == (None, "task T1 appears more than once")
    assert _starts(_rows(T2=0)) == (None, "tasks missing from the schedule: T1, T3")


# -- educational resources -------------------------------------------------------------------
def _edu_row(**over: Any) -> dict[str, Any]:
    d = TASKS[EDU].data(_instance(EDU))
    return {"lesson": d.lessons[0].id, "teacher": d.teachers[0].id, "room": d.rooms[0].id, **over}


def _edu_plan() -> list[dict[str, Any]]:
    d = TASKS[EDU].data(_instance(EDU))
    return [{"lesson": x.id, "teacher": d.teachers[0].id, "room": d.rooms[0].id} for x in d.lessons]


def test_education_numbers_an_assignment_that_is_not_an_object_from_one() -> None:
    assert _read(EDU, {"assignments": [_edu_row(), "L2"]}) == (None, "assignment 2 is not an object")


def test_education_quotes_forty_characters_of_an_unknown_lesson() -> None:
    section = {"assignments": [_edu_row(), _edu_row(lesson=LONG)]}
    assert _read(EDU, section) == (None, f"assignment 2 names unknown lesson {QUOTED}")


def test_education_quotes_forty_characters_of_an_unknown_teacher() -> None:
    row = _edu_row(teacher=LONG)
    assert _read(EDU, {"assignments": [row]}) == (None, f"lesson {row['lesson']} has unknown teacher {QUOTED}")


def test_education_quotes_forty_characters_of_an_unknown_room() -> None:
    row = _edu_row(room=LONG)
    assert _read(EDU, {"assignments": [row]}) == (None, f"lesson {row['lesson']} has unknown room {QUOTED}")


def test_education_reads_names_whatever_their_case_and_spacing() -> None:
    rows = [{k: f"  {v.upper()} " for k, v in row.items()} for row in _edu_plan()]
    plan, why = _read(EDU, {"assignments": rows})
    assert why == "complete plan"
    assert plan.assign == {r["lesson"]: (r["teacher"], r["room"]) for r in _edu_plan()}


def test_education_reads_exact_spellings_without_normalising(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _instance(EDU)
    tc = TASKS[EDU]
    d = tc.data(inst)
    lk = tc.lookups(d)
    monkeypatch.setattr(education, "norm", _no_norm)
    plan, why = tc.read_plan(d, {"assignments": _edu_plan()}, lk, list(inst.rules))
    assert why == "complete plan"
    assert plan.assign == {r["lesson"]: (r["teacher"], r["room"]) for r in _edu_plan()}


def test_education_plan_without_a_backup_rule_has_no_backups() -> None:
    assert "teacher_backup" not in {r.kind for r in _instance(EDU).rules}
    plan, why = _read(EDU, {"assignments": _edu_plan()})
    assert why == "complete plan"
    assert plan.backup is None


# -- student grouping ------------------------------------------------------------------------
def _groups() -> list[list[str]]:
    d = TASKS[GROUP].data(_instance(GROUP))
    ids = [s.id for s in d.students]
    return [ids[k :: d.groups] for k in range(d.groups)]


def test_grouping_numbers_a_group_that_is_no_list_of_names_from_one() -> None:
    groups = _groups()
    groups[1] = []
    assert _read(GROUP, {"groups": groups}) == (None, "group 2 must be a non-empty list of student names")


def test_grouping_quotes_forty_characters_of_an_unknown_student() -> None:
    groups = _groups()
    groups[1] = [*groups[1], LONG]
    assert _read(GROUP, {"groups": groups}) == (None, f"group 2 names unknown student {QUOTED}")


def test_grouping_reads_exact_spellings_without_normalising(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _instance(GROUP)
    tc = TASKS[GROUP]
    d = tc.data(inst)
    lk = tc.lookups(d)
    monkeypatch.setattr(grouping, "norm", _no_norm)
    plan, why = tc.read_plan(d, {"groups": _groups()}, lk, list(inst.rules))
    assert why == "complete grouping"
    assert sorted(s for g in plan for s in g) == sorted(s for g in _groups() for s in g)


# -- material allocation ---------------------------------------------------------------------
def _cells() -> list[tuple[str, str, str]]:
    d = TASKS[MAT].data(_instance(MAT))
    cells = sorted(d.cell_set)
    assert len(cells) >= 2
    return cells


def _shipment(cell: tuple[str, str, str], units: Any) -> dict[str, Any]:
    x, s, m = cell
    return {"depot": x, "site": s, "material": m, "units": units}


def test_material_names_a_shipment_row_in_its_reason() -> None:
    a, _ = _cells()[:2]
    section = {"shipments": [_shipment(a, 0), {"depot": "Nowhere", "site": a[1], "material": a[2], "units": 1}]}
    assert _read(MAT, section) == (None, "shipment 2 names unknown depot 'Nowhere'")


def test_material_numbers_a_shipment_with_negative_units_from_one() -> None:
    a, b = _cells()[:2]
    assert _read(MAT, {"shipments": [_shipment(a, 0), _shipment(b, -1)]}) == (
        None,
        "shipment 2 needs whole non-negative 'units'",
    )


def test_material_reads_the_largest_quantity_as_a_quantity() -> None:
    a, b = _cells()[:2]
    x, _, m = b
    assert _read(MAT, {"shipments": [_shipment(a, 0), _shipment(b, MAX_QUANTITY)]}) == (
        None,
        f"shipment 2 sends {MAX_QUANTITY} {m} from {x}, more than it holds",
    )


def test_material_refuses_a_quantity_past_the_largest() -> None:
    a, b = _cells()[:2]
    assert _read(MAT, {"shipments": [_shipment(a, 0), _shipment(b, MAX_QUANTITY + 1)]}) == (
        None,
        "shipment 2 needs whole non-negative 'units'",
    )


# -- procurement ---------------------------------------------------------------------------
def _order(s: str, i: str, week: str, q: Any) -> dict[str, Any]:
    return {"supplier": s, "item": i, "week": week, "quantity": q}


def _proc() -> Any:
    return TASKS[PROC].data(_instance(PROC))


def test_procurement_names_an_order_row_in_its_reason() -> None:
    d = _proc()
    s, i = next(iter(d.prices))
    section = {"orders": [_order(s, i, d.periods[0], 0), _order(s, "Nothing", d.periods[0], 0)]}
    assert _read(PROC, section) == (None, "order 2 names unknown item 'Nothing'")


def test_procurement_numbers_an_order_over_capacity_from_one() -> None:
    d = _proc()
    s, i = next(iter(d.prices))
    cap = d.supplier_by_id[s].capacity
    section = {"orders": [_order(s, i, d.periods[0], 0), _order(s, i, d.periods[1], cap + 1)]}
    assert _read(PROC, section) == (
        None,
        f"order 2 asks {s} for {cap + 1} units, more than it can ever ship in a period ({cap})",
    )


def test_procurement_says_a_late_order_arrives_after_the_last_period() -> None:
    d = _proc()
    late = [(s, i) for s, i in d.prices if d.supplier_by_id[s].lead_time >= 1]
    assert late, "the instance no longer has a supplier with a lead time"
    s, i = late[0]
    section = {"orders": [_order(s, i, d.periods[-1], 1)]}
    assert _read(PROC, section) == (
        None,
        f"an order with {s} placed in {d.periods[-1]} would arrive after {d.periods[-1]}",
    )


# -- timetables ------------------------------------------------------------------------------
def _timetable() -> Any:
    return read_data(_instance("exam_scheduling"))


def _entry(**over: Any) -> dict[str, Any]:
    d = _timetable()
    return {"event": d.events[0].id, "start": d.slots[d.starts(d.events[0])[0]].id, "room": d.rooms[0].id, **over}


def _schedule() -> list[dict[str, Any]]:
    d = _timetable()
    return [{"event": e.id, "start": d.slots[d.starts(e)[0]].id, "room": d.rooms[0].id} for e in d.events]


def test_timetable_numbers_an_entry_that_is_not_an_object_from_one() -> None:
    assert checks.read_plan(_timetable(), {"schedule": [_entry(), "E2"]}) == (None, "schedule entry 2 is not an object")


def test_timetable_lists_the_string_fields_an_entry_needs() -> None:
    assert checks.read_plan(_timetable(), {"schedule": [_entry(), {"event": "E2"}]}) == (
        None,
        "schedule entry 2 needs string fields 'event', 'start' and 'room'",
    )


def test_timetable_quotes_forty_characters_of_an_unknown_event() -> None:
    assert checks.read_plan(_timetable(), {"schedule": [_entry(), _entry(event=LONG)]}) == (
        None,
        f"schedule entry 2 names unknown event {QUOTED}",
    )


def test_timetable_quotes_forty_characters_of_an_unknown_start() -> None:
    row = _entry(start=LONG)
    assert checks.read_plan(_timetable(), {"schedule": [row]}) == (
        None,
        f"event {row['event']} has unknown start {QUOTED}",
    )


def test_timetable_quotes_forty_characters_of_an_unknown_room() -> None:
    row = _entry(room=LONG)
    assert checks.read_plan(_timetable(), {"schedule": [row]}) == (
        None,
        f"event {row['event']} has unknown room {QUOTED}",
    )


def test_timetable_reads_exact_spellings_without_normalising(monkeypatch: pytest.MonkeyPatch) -> None:
    d = _timetable()
    lk = checks.Lookups(d)
    rows = [{**row, "backup": d.rooms[-1].id} for row in _schedule()]
    monkeypatch.setattr(checks, "_norm", _no_norm)
    backups: dict[str, str] = {}
    plan, why = checks.read_plan(d, {"schedule": rows}, lk, backups)
    assert why == "complete plan"
    assert plan == {r["event"]: (d.starts(d.event_by_id[r["event"]])[0], r["room"]) for r in rows}
    assert backups == {r["event"]: d.rooms[-1].id for r in rows}


def test_timetable_reads_a_backup_room_whatever_its_case_and_spacing() -> None:
    d = _timetable()
    rows = [{**row, "backup": f" {d.rooms[-1].id.upper()}  "} for row in _schedule()]
    backups: dict[str, str] = {}
    _, why = checks.read_plan(d, {"schedule": rows}, None, backups)
    assert why == "complete plan"
    assert backups == {r["event"]: d.rooms[-1].id for r in rows}


def test_timetable_reads_names_whatever_their_case_and_spacing() -> None:
    d = _timetable()
    rows = [{k: f" {v.lower()} " for k, v in row.items()} for row in _schedule()]
    plan, why = checks.read_plan(d, {"schedule": rows})
    assert why == "complete plan"
    assert plan == {e.id: (d.starts(e)[0], d.rooms[0].id) for e in d.events}
