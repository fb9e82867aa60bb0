"""Allocation verdicts the mutation campaign (issue 19) found unguarded, one behaviour each.

Every test grades an answer through the family's public ``check_answer`` and asserts the
verdict of one checklist item. The answers are built from generated instances: the
certified reference with an entry changed, or a few hand-picked lines. Where a test needs
a boundary (an order of exactly a supplier's capacity, a budget met to the unit) it takes
the rule's own parameter when the data allow it, and otherwise sets the parameter (or a
figure of the data: an item's opening stock and demand for the shelf-life simulation, two
sites' requests for exact fill rates, a stock entry of 0 units) to the boundary, so the
test names the figure it holds the checker to. Where a test needs the instance to have
some shape (two lessons in one slot sharing a backup, three depots) the instance is
searched for that shape and the shape is asserted, so a change of generator fails the test
loudly instead of emptying it.

The survivors argued equivalent instead are in scripts/mutation_equivalents.toml.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pbsolve.checker_kit import MAX_QUANTITY
from pbsolve.checkers.allocation import check_answer
from pbsolve.schema import Instance
from tests.instances import instance_at
from tests.kill_helpers import by_id as _by_id
from tests.kill_helpers import item_passes
from tests.kill_helpers import reference as _reference
from tests.kill_helpers import rule_params as _params
from tests.kill_helpers import with_params as _with_params

Row = dict[str, Any]
EDU, MAT, PROC, GROUP = (
    "educational_resource_planning",
    "material_allocation",
    "procurement_planning",
    "student_grouping",
)


# -- instances (generated once per process by tests.instances) -------------------------------
def _find(
    task: str,
    kinds: tuple[str, ...] = (),
    include: tuple[str, ...] = (),
    where: Callable[[Instance], bool] | None = None,
    size: str = "default",
) -> Instance:
    """The first optimal instance (seed by seed, index by index) with every rule kind in
    ``kinds``, every mechanism in ``include`` and, if given, the shape ``where``."""
    for seed, index in itertools.product(range(16), range(4)):
        inst = instance_at(task, seed, index, size, False, include)
        if inst is None or inst.certificate.status != "optimal" or not set(include) <= set(inst.mechanisms):
            continue
        if set(kinds) <= {r.kind for r in inst.rules} and (where is None or where(inst)):
            return inst
    raise AssertionError(f"the generator no longer gives a {task} instance with {kinds} {include} and this shape")


def _passes(inst: Instance, answer: dict[str, Any], rule: str) -> bool:
    return item_passes(check_answer, inst, answer, rule)


# == Educational Resource Planning ============================================================
def _lessons(inst: Instance) -> dict[str, dict[str, Any]]:
    return _by_id(inst, "lessons")


def _rows(answer: dict[str, Any]) -> dict[str, Row]:
    return {row["lesson"]: row for row in answer["assignments"]}


def _same_slot_pairs(inst: Instance) -> Iterator[tuple[str, str]]:
    lessons = inst.data["lessons"]
    for a, b in itertools.permutations(lessons, 2):
        if a["slot"] == b["slot"]:
            yield a["id"], b["id"]


def _teaches(inst: Instance, teacher: str, lesson: str) -> bool:
    return _lessons(inst)[lesson]["subject"] in _by_id(inst, "teachers")[teacher]["subjects"]


def _free(inst: Instance, teacher: str, lesson: str) -> bool:
    return _lessons(inst)[lesson]["slot"] not in _by_id(inst, "teachers")[teacher]["unavailable"]


def _shared_backup(inst: Instance) -> bool:
    """Two lessons held in one slot name the same backup teacher in the reference."""
    rows = _rows(inst.reference)
    return any(rows[a]["backup"] == rows[b]["backup"] for a, b in _same_slot_pairs(inst))


def _clashing_backup(inst: Instance) -> tuple[str, str] | None:
    """(lesson x, lesson y) in one slot, taught by different teachers in the reference,
    where y's teacher could stand in for x (qualified and available) and teaches nothing
    else in that slot: made x's backup, they would then teach x and y at once."""
    rows = _rows(inst.reference)
    lessons = _lessons(inst)
    for x, y in _same_slot_pairs(inst):
        c = rows[y]["teacher"]
        others = [z for z in lessons if z != y and lessons[z]["slot"] == lessons[x]["slot"] and rows[z]["teacher"] == c]
        if c != rows[x]["teacher"] and _teaches(inst, c, x) and _free(inst, c, x) and not others:
            return x, y
    return None


def _unavailable_stand_in(inst: Instance) -> tuple[str, str] | None:
    """(lesson, teacher): a teacher of the lesson's subject, not its teacher in the
    reference, who is unavailable in the lesson's slot."""
    rows = _rows(inst.reference)
    for x in inst.data["lessons"]:
        for t in inst.data["teachers"]:
            if t["id"] != rows[x["id"]]["teacher"] and x["subject"] in t["subjects"] and x["slot"] in t["unavailable"]:
                return x["id"], t["id"]
    return None


@pytest.fixture(scope="module")
def robust_timetable() -> Instance:
    """Backup teachers, with two lessons of one slot sharing a backup in the reference."""
    return _find(EDU, ("teacher_backup",), ("robustness_design",), where=_shared_backup)


@pytest.fixture(scope="module")
def backup_clash() -> Instance:
    return _find(EDU, ("teacher_backup",), ("robustness_design",), where=lambda i: _clashing_backup(i) is not None)


@pytest.fixture(scope="module")
def backup_unavailable() -> Instance:
    return _find(EDU, ("teacher_backup",), ("robustness_design",), where=lambda i: _unavailable_stand_in(i) is not None)


def test_the_certified_backups_of_a_robust_timetable_keep_teacher_backup(robust_timetable: Instance) -> None:
    """Teachers fall ill one at a time: two lessons of one slot may share a backup."""
    assert _shared_backup(robust_timetable)
    assert _passes(robust_timetable, _reference(robust_timetable), "teacher_backup")


def test_the_certified_backups_score_the_certified_backup_score(robust_timetable: Instance) -> None:
    """backup_score numbers the teachers from 1 in list order."""
    assert "backup_score" in {t.kind for t in robust_timetable.objective}
    assert _passes(robust_timetable, _reference(robust_timetable), "objective")


def test_a_backup_who_teaches_another_lesson_in_that_slot_breaks_teacher_backup(backup_clash: Instance) -> None:
    x, y = _clashing_backup(backup_clash) or ("", "")
    answer = _reference(backup_clash)
    rows = _rows(answer)
    rows[x]["backup"] = rows[y]["teacher"]
    assert not _passes(backup_clash, answer, "teacher_backup")


def test_a_backup_who_does_not_teach_the_subject_breaks_teacher_backup(robust_timetable: Instance) -> None:
    answer = _reference(robust_timetable)
    rows = _rows(answer)
    x, t = next(
        (x, t["id"])
        for x in rows
        for t in robust_timetable.data["teachers"]
        if t["id"] != rows[x]["teacher"] and not _teaches(robust_timetable, t["id"], x)
    )
    rows[x]["backup"] = t
    assert not _passes(robust_timetable, answer, "teacher_backup")


def test_a_backup_unavailable_in_the_lessons_slot_breaks_teacher_backup(backup_unavailable: Instance) -> None:
    x, t = _unavailable_stand_in(backup_unavailable) or ("", "")
    answer = _reference(backup_unavailable)
    _rows(answer)[x]["backup"] = t
    assert not _passes(backup_unavailable, answer, "teacher_backup")


def _room_without_feature(inst: Instance) -> tuple[str, str] | None:
    """(lesson, room): the room seats the lesson's group but lacks a feature it needs."""
    for x in inst.data["lessons"]:
        for r in inst.data["rooms"]:
            if r["seats"] >= x["size"] and set(x["needs"]) - set(r["features"]):
                return x["id"], r["id"]
    return None


def test_a_room_with_the_seats_but_without_a_needed_feature_breaks_room_fit() -> None:
    inst = _find(EDU, ("room_fit",), where=lambda i: _room_without_feature(i) is not None)
    x, room = _room_without_feature(inst) or ("", "")
    answer = _reference(inst)
    _rows(answer)[x]["room"] = room
    assert not _passes(inst, answer, "room_fit")


def test_every_lesson_given_to_the_teacher_first_in_name_order_breaks_load_balance() -> None:
    """The spread is between the most and the least loaded teacher, whatever their names."""
    inst = _find(EDU, ("load_balance",), where=lambda i: len(i.data["lessons"]) > _params(i, "load_balance")["max"])
    first = min(t["id"] for t in inst.data["teachers"])
    answer = _reference(inst)
    for row in answer["assignments"]:
        row["teacher"] = first
    assert not _passes(inst, answer, "load_balance")


def _day_boundary(inst: Instance) -> tuple[str, str] | None:
    """(lesson, lesson) in the last slot of a day and the first slot of the next day."""
    slots = inst.data["slots"]
    for a, b in itertools.pairwise(slots):
        if a["day"] != b["day"]:
            xa = next((x["id"] for x in inst.data["lessons"] if x["slot"] == a["id"]), None)
            xb = next((x["id"] for x in inst.data["lessons"] if x["slot"] == b["id"]), None)
            if xa and xb:
                return xa, xb
    return None


def _back_to_back(inst: Instance) -> tuple[str, str] | None:
    """(lesson, lesson) in consecutive slots of one day."""
    for a, b in itertools.pairwise(inst.data["slots"]):
        if a["day"] == b["day"]:
            xa = next((x["id"] for x in inst.data["lessons"] if x["slot"] == a["id"]), None)
            xb = next((x["id"] for x in inst.data["lessons"] if x["slot"] == b["id"]), None)
            if xa and xb:
                return xa, xb
    return None


def _only_teacher_of(inst: Instance, lessons: tuple[str, ...]) -> dict[str, Any]:
    """The reference with the teacher_gap teacher teaching exactly ``lessons``."""
    teacher = _params(inst, "teacher_gap")["teacher"]
    other = next(t["id"] for t in inst.data["teachers"] if t["id"] != teacher)
    answer = _reference(inst)
    for row in answer["assignments"]:
        row["teacher"] = teacher if row["lesson"] in lessons else other
    return answer


@pytest.fixture(scope="module")
def gaps() -> Instance:
    return _find(EDU, ("teacher_gap",), where=lambda i: _day_boundary(i) is not None and _back_to_back(i) is not None)


def test_lessons_in_the_last_slot_of_a_day_and_the_first_of_the_next_are_no_gap_violation(gaps: Instance) -> None:
    """teacher_gap forbids back-to-back lessons within a day; a night lies between these."""
    assert _passes(gaps, _only_teacher_of(gaps, _day_boundary(gaps) or ()), "teacher_gap")


def test_lessons_in_consecutive_slots_of_one_day_break_teacher_gap(gaps: Instance) -> None:
    assert not _passes(gaps, _only_teacher_of(gaps, _back_to_back(gaps) or ()), "teacher_gap")


def test_two_lessons_of_a_teacher_in_one_slot_are_not_back_to_back(gaps: Instance) -> None:
    """Teaching two lessons at once is a clash (another rule), not a missing gap."""
    x, y = next(_same_slot_pairs(gaps))
    assert _passes(gaps, _only_teacher_of(gaps, (x, y)), "teacher_gap")


@pytest.fixture(scope="module")
def timetable() -> Instance:
    return _find(EDU)


def test_an_assignment_naming_its_teacher_by_a_number_makes_the_plan_unreadable(timetable: Instance) -> None:
    answer = _reference(timetable)
    answer["assignments"][0]["teacher"] = 5
    assert not _passes(timetable, answer, "format")


def test_a_plan_leaving_a_lesson_out_is_unreadable(timetable: Instance) -> None:
    answer = _reference(timetable)
    answer["assignments"].pop()
    assert not _passes(timetable, answer, "format")


def test_an_assignment_without_a_backup_in_a_robust_timetable_is_unreadable(robust_timetable: Instance) -> None:
    answer = _reference(robust_timetable)
    del answer["assignments"][0]["backup"]
    assert not _passes(robust_timetable, answer, "format")


# == Material Allocation ======================================================================
def _ship(depot: str, site: str, material: str, units: int) -> Row:
    return {"units": units, "depot": depot, "site": site, "material": material}


def _shipments(answer: dict[str, Any]) -> dict[tuple[str, str, str], int]:
    return {(r["depot"], r["site"], r["material"]): r["units"] for r in answer["shipments"]}


def _answer(inst: Instance, key: str, rows: list[Row]) -> dict[str, Any]:
    return {**_reference(inst), key: rows}


def _stock(inst: Instance, depot: str, material: str) -> int:
    return _by_id(inst, "depots")[depot]["stock"].get(material, 0)


def _requests(inst: Instance, site: str, material: str) -> int:
    return _by_id(inst, "sites")[site]["requests"].get(material, 0)


def _lines_to(inst: Instance, depot: str, site: str, units: int) -> list[Row] | None:
    """Shipment lines carrying exactly ``units`` from depot to site (materials the depot
    holds and the site requests, each line within the depot's stock), or None."""
    rows, left = [], units
    for m in inst.data["materials"]:
        q = min(left, _stock(inst, depot, m["id"])) if _requests(inst, site, m["id"]) else 0
        if q > 0:
            rows.append(_ship(depot, site, m["id"], q))
            left -= q
    return rows if left == 0 else None


def _reach(inst: Instance, depot: str, site: str) -> int:
    """The most units one delivery from depot to site can carry in readable lines."""
    return sum(_stock(inst, depot, m["id"]) for m in inst.data["materials"] if _requests(inst, site, m["id"]))


def _three_depots_to(inst: Instance, least: int) -> tuple[str, list[str]] | None:
    """A site that three depots can each deliver ``least`` units to."""
    for s in inst.data["sites"]:
        depots = [x["id"] for x in inst.data["depots"] if _reach(inst, x["id"], s["id"]) >= least]
        if len(depots) >= 3:
            return s["id"], depots[:3]
    return None


def test_transport_costs_exactly_at_the_budget_keep_transport_budget() -> None:
    inst = _find(MAT, ("transport_budget",), where=lambda i: i.reference["objective"]["transport_cost"] > 0)
    exact = _with_params(inst, "transport_budget", max=inst.reference["objective"]["transport_cost"])
    assert _passes(exact, _reference(inst), "transport_budget")


def test_two_full_trucks_from_two_depots_to_one_site_keep_truck_capacity() -> None:
    """The truck limit is per route: one site may take a full truck from each depot."""
    inst = _find(MAT, ("truck_capacity",), where=lambda i: len(i.data["depots"]) >= 3 and _three_depots_to(i, 1))
    site, (a, b, _) = _three_depots_to(inst, 1) or ("", ("", "", ""))
    full = min(_reach(inst, a, site), _reach(inst, b, site), _params(inst, "truck_capacity")["max"])
    rows = (_lines_to(inst, a, site, full) or []) + (_lines_to(inst, b, site, full) or [])
    assert _passes(_with_params(inst, "truck_capacity", max=full), _answer(inst, "shipments", rows), "truck_capacity")


def test_three_deliveries_each_below_the_minimum_break_min_shipment() -> None:
    """Every delivery on its own must reach the minimum, however many reach the site."""
    inst = _find(MAT, ("min_shipment",), where=lambda i: _three_depots_to(i, 1) is not None)
    site, depots = _three_depots_to(inst, 1) or ("", [])
    small = min(_reach(inst, x, site) for x in depots)
    small = min(small, math.ceil(_params(inst, "min_shipment")["min"] / 2))
    rows = [row for x in depots for row in _lines_to(inst, x, site, small) or []]
    least = 2 * small  # each delivery carries half the minimum: below it, however many arrive
    assert not _passes(_with_params(inst, "min_shipment", min=least), _answer(inst, "shipments", rows), "min_shipment")


def _exact_share(inst: Instance) -> list[Row] | None:
    """Shipments of the capped material in which the largest share is exactly the cap:
    T units in all, one site receiving pct percent of them, the others less."""
    p = _params(inst, "share_cap")
    m, pct = p["material"], p["pct"]
    g = math.gcd(pct, 100)
    top, total = pct // g, 100 // g
    sites = [s["id"] for s in inst.data["sites"] if _requests(inst, s["id"], m)]
    depot = next((x["id"] for x in inst.data["depots"] if _stock(inst, x["id"], m) >= top), None)
    amounts, left = [top], total - top
    while left > 0:
        amounts.append(min(top, left))
        left -= amounts[-1]
    if depot is None or len(amounts) > len(sites):
        return None
    return [_ship(depot, s, m, q) for s, q in zip(sites, amounts)]


def test_a_site_receiving_exactly_the_capped_share_keeps_share_cap() -> None:
    inst = _find(MAT, ("share_cap",), where=lambda i: _exact_share(i) is not None)
    rows = _exact_share(inst) or []
    pct, total = _params(inst, "share_cap")["pct"], sum(r["units"] for r in rows)
    assert 100 * max(r["units"] for r in rows) == pct * total
    assert _passes(inst, _answer(inst, "shipments", rows), "share_cap")


def _unsupplied_material(inst: Instance) -> Row | None:
    """A one-unit line of a material that a site requests and receives from nobody, to a
    site that the reference does supply."""
    plan = _shipments(inst.reference)
    for s in inst.data["sites"]:
        if not any(site == s["id"] for _, site, _ in plan):
            continue
        for m in s["requests"]:
            if any(site == s["id"] and mat == m for _, site, mat in plan):
                continue
            depot = next((x["id"] for x in inst.data["depots"] if _stock(inst, x["id"], m) > 0), None)
            if depot is not None:
                return _ship(depot, s["id"], m, 1)
    return None


def test_a_material_a_site_gets_from_one_depot_only_breaks_depot_failure() -> None:
    """Every material counts on its own: a site keeping most of its other deliveries still
    loses all of a material that came from the failed depot alone."""
    inst = _find(MAT, ("depot_failure",), ("robustness_design",), where=lambda i: _unsupplied_material(i) is not None)
    answer = _reference(inst)
    assert _passes(inst, answer, "depot_failure")
    answer["shipments"].append(_unsupplied_material(inst))
    assert not _passes(inst, answer, "depot_failure")


def _existing_cells(inst: Instance) -> set[tuple[str, str, str]]:
    (term,) = [t for t in inst.objective if t.kind == "changes"]
    return {(x, s, m) for x, s, m, _ in term.params["existing"]}


def _new_unit_cell(inst: Instance) -> tuple[str, str, str] | None:
    """A shippable cell that neither the current plan nor the reference uses, where the
    reference has no new one-unit line of its own."""
    old, plan = _existing_cells(inst), _shipments(inst.reference)
    if any(q == 1 and cell not in old for cell, q in plan.items()):
        return None
    for x, s, m in itertools.product(
        [d["id"] for d in inst.data["depots"]],
        [s["id"] for s in inst.data["sites"]],
        [m["id"] for m in inst.data["materials"]],
    ):
        if _stock(inst, x, m) and _requests(inst, s, m) and (x, s, m) not in old | set(plan):
            return x, s, m
    return None


def test_a_new_one_unit_shipment_counts_as_a_change() -> None:
    inst = _find(MAT, include=("min_change_replanning",), where=lambda i: _new_unit_cell(i) is not None)
    answer = _reference(inst)
    assert _passes(inst, answer, "objective:changes")
    x, s, m = _new_unit_cell(inst) or ("", "", "")
    answer["shipments"].append(_ship(x, s, m, 1))
    assert not _passes(inst, answer, "objective:changes")


def _unused_cell(inst: Instance) -> tuple[str, str, str]:
    plan = _shipments(inst.reference)
    return next(
        (x["id"], s["id"], m["id"])
        for x in inst.data["depots"]
        for s in inst.data["sites"]
        for m in inst.data["materials"]
        if _stock(inst, x["id"], m["id"])
        and _requests(inst, s["id"], m["id"])
        and (x["id"], s["id"], m["id"]) not in plan
    )


@pytest.fixture(scope="module")
def shipments() -> Instance:
    return _find(MAT)


def test_a_shipment_line_of_zero_units_is_read(shipments: Instance) -> None:
    answer = _reference(shipments)
    answer["shipments"].append(_ship(*_unused_cell(shipments), 0))
    assert _passes(shipments, answer, "format")


def test_a_shipment_of_a_material_the_site_does_not_request_makes_the_plan_unreadable(shipments: Instance) -> None:
    x, s, m = next(
        (x["id"], s["id"], m)
        for x in shipments.data["depots"]
        for s in shipments.data["sites"]
        for m in x["stock"]
        if x["stock"][m] > 0 and not _requests(shipments, s["id"], m)
    )
    answer = _reference(shipments)
    answer["shipments"].append(_ship(x, s, m, 1))
    assert not _passes(shipments, answer, "format")


def test_a_shipment_above_the_depots_stock_makes_the_plan_unreadable(shipments: Instance) -> None:
    x, s, m = _unused_cell(shipments)
    answer = _reference(shipments)
    answer["shipments"].append(_ship(x, s, m, _stock(shipments, x, m) + 1))
    assert not _passes(shipments, answer, "format")


def test_a_negative_shipment_makes_the_plan_unreadable(shipments: Instance) -> None:
    answer = _reference(shipments)
    answer["shipments"].append(_ship(*_unused_cell(shipments), -3))
    assert not _passes(shipments, answer, "format")


def test_a_shipment_line_listed_twice_makes_the_plan_unreadable(shipments: Instance) -> None:
    answer = _reference(shipments)
    answer["shipments"].append(dict(answer["shipments"][0]))
    assert not _passes(shipments, answer, "format")


@pytest.fixture(scope="module")
def priorities() -> Instance:
    return _find(MAT, ("priority_order",))


def test_an_empty_plan_keeps_priority_order(priorities: Instance) -> None:
    """Every site is filled 0%: equal rates keep the order."""
    assert _passes(priorities, _answer(priorities, "shipments", []), "priority_order")


def test_a_later_site_in_the_priority_order_filled_more_breaks_priority_order(priorities: Instance) -> None:
    later = _params(priorities, "priority_order")["sites"][1]  # ranked below the first site, which gets nothing
    x, m = next(
        (x["id"], m)
        for x in priorities.data["depots"]
        for m in x["stock"]
        if x["stock"][m] and _requests(priorities, later, m)
    )
    q = min(_stock(priorities, x, m), _requests(priorities, later, m))
    asked = sum(_by_id(priorities, "sites")[later]["requests"].values())
    assert 100 * q >= asked  # the later site is filled at least 1%, the first one 0%
    rows = [_ship(x, later, m, q)]
    assert not _passes(priorities, _answer(priorities, "shipments", rows), "priority_order")


def _with_data(inst: Instance, edit: Callable[[dict[str, Any]], None]) -> Instance:
    """The instance with its data changed by ``edit`` (on a copy)."""
    data = copy.deepcopy(inst.data)
    edit(data)
    return inst.model_copy(update={"data": data})


def _fill_two(inst: Instance, first: tuple[int, int], second: tuple[int, int]) -> tuple[Instance, dict[str, Any]]:
    """The first two sites of the priority chain set to request one material only,
    (requested, received) units as given, and an answer shipping exactly the received units
    to them from one depot (nothing to any other site). Fill rates need exact fractions
    (two thirds, 67.5%), so the requests are set rather than searched for."""
    a, b = _params(inst, "priority_order")["sites"][:2]
    x, m = max(((x["id"], m) for x in inst.data["depots"] for m in x["stock"]), key=lambda c: _stock(inst, *c))
    assert _stock(inst, x, m) >= max(first[1], second[1])  # every line within the depot's stock

    def edit(data: dict[str, Any]) -> None:
        for s in data["sites"]:
            if s["id"] in (a, b):
                s["requests"] = {m: (first if s["id"] == a else second)[0]}

    edited = _with_data(inst, edit)
    rows = [_ship(x, s, m, got) for s, (_, got) in ((a, first), (b, second)) if got]
    return edited, _answer(edited, "shipments", rows)


def test_two_sites_each_filled_two_thirds_keep_priority_order(priorities: Instance) -> None:
    """Equal fractions are equal rates, 66% each, whichever way the division is done."""
    assert _passes(*_fill_two(priorities, (3, 2), (3, 2)), "priority_order")


def test_a_site_filled_two_thirds_ranks_below_a_later_one_filled_67_percent(priorities: Instance) -> None:
    """Rates are whole percents rounded down: 2 of 3 is 66%, 27 of 40 is 67%."""
    assert not _passes(*_fill_two(priorities, (3, 2), (40, 27)), "priority_order")


def test_a_site_receiving_nothing_ranks_below_a_later_one_filled_a_third(priorities: Instance) -> None:
    """Nothing received is 0%, below the 33% of one unit in three."""
    assert not _passes(*_fill_two(priorities, (3, 0), (3, 1)), "priority_order")


def _one_unit_fills(inst: Instance) -> set[int]:
    """The fill rates one unit would give each site (100 // its request total)."""
    return {100 // sum(s["requests"].values()) for s in inst.data["sites"]}


def test_an_empty_plan_keeps_fill_gap_even_at_zero_points() -> None:
    """Every site is filled 0%, however much it requests: no gap at all. (The sites are
    picked so that one unit would fill them differently, so a site that gets nothing must
    count 0%, not as if it had some.)"""
    inst = _find(MAT, ("fill_gap",), where=lambda i: len(_one_unit_fills(i)) > 1)
    assert _passes(_with_params(inst, "fill_gap", max=0), _answer(inst, "shipments", []), "fill_gap")


def test_a_guaranteed_site_receiving_none_of_the_material_breaks_a_one_unit_guarantee() -> None:
    inst = _find(MAT, ("min_guarantee",))
    assert not _passes(_with_params(inst, "min_guarantee", min=1), _answer(inst, "shipments", []), "min_guarantee")


def test_a_plan_shipping_nothing_keeps_a_truck_limit_of_zero_units() -> None:
    """A route that carries nothing loads no truck, whatever the limit."""
    inst = _find(MAT, ("truck_capacity",))
    assert _passes(_with_params(inst, "truck_capacity", max=0), _answer(inst, "shipments", []), "truck_capacity")


def test_a_plan_shipping_none_of_the_capped_material_keeps_share_cap() -> None:
    """With none of the material sent out, no site has a share of it to exceed."""
    inst = _find(MAT, ("share_cap",))
    m = _params(inst, "share_cap")["material"]
    rows = [r for r in _reference(inst)["shipments"] if r["material"] != m]
    assert _passes(inst, _answer(inst, "shipments", rows), "share_cap")


def _unheld(inst: Instance) -> tuple[str, str] | None:
    """(depot, material): a material the depot holds none of."""
    return next(
        (
            (x["id"], m["id"])
            for x in inst.data["depots"]
            for m in inst.data["materials"]
            if not _stock(inst, x["id"], m["id"])
        ),
        None,
    )


def test_a_depot_listing_a_material_with_no_units_on_hand_keeps_depot_stock_when_it_ships_none() -> None:
    """A stock entry of 0 units (the generator leaves such materials out of the list; the
    data allow both) is kept by shipping none of it."""
    inst = _find(MAT, where=lambda i: _unheld(i) is not None)
    x, m = _unheld(inst) or ("", "")

    def edit(data: dict[str, Any]) -> None:
        next(d for d in data["depots"] if d["id"] == x)["stock"][m] = 0

    assert _passes(_with_data(inst, edit), _reference(inst), "depot_stock")


def test_a_current_line_of_zero_units_left_out_of_the_new_plan_is_no_change() -> None:
    """A current shipment of 0 units sends nothing: a plan that sends nothing there changes
    nothing. The certified plan keeps its certified count of changes."""
    inst = _find(MAT, include=("min_change_replanning",), where=lambda i: _new_unit_cell(i) is not None)
    x, s, m = _new_unit_cell(inst) or ("", "", "")
    objective = [
        t.model_copy(update={"params": {"existing": [*t.params["existing"], [x, s, m, 0]]}})
        if t.kind == "changes"
        else t
        for t in inst.objective
    ]
    assert _passes(inst.model_copy(update={"objective": objective}), _reference(inst), "objective:changes")


def _idle_depot(inst: Instance) -> bool:
    """The certified plan sends nothing from some depot."""
    return 0 in inst.reference["verification"]["dispatched"].values()


def test_the_certified_figures_state_0_dispatched_for_a_depot_that_sends_nothing() -> None:
    inst = _find(MAT, include=("conflict_validation",), where=_idle_depot)
    idle = [x for x, n in inst.reference["verification"]["dispatched"].items() if n == 0]
    assert not any(r["depot"] in idle for r in inst.reference["shipments"])
    assert _passes(inst, _reference(inst), "verification")
    for wrong in (1, None):
        answer = _reference(inst)
        answer["verification"]["dispatched"][idle[0]] = wrong
        assert not _passes(inst, answer, "verification")


# == Procurement Planning =====================================================================
def _order(supplier: str, item: str, week: str, quantity: int) -> Row:
    return {"quantity": quantity, "supplier": supplier, "item": item, "week": week}


def _suppliers(inst: Instance) -> dict[str, dict[str, Any]]:
    return _by_id(inst, "suppliers")


def _sells(inst: Instance, supplier: str) -> list[str]:
    return [o["item"] for o in _suppliers(inst)[supplier]["offers"]]


def _price(inst: Instance, supplier: str, item: str) -> int:
    return next(o["price"] for o in _suppliers(inst)[supplier]["offers"] if o["item"] == item)


def _weeks(inst: Instance, supplier: str) -> list[str]:
    """The weeks an order with the supplier may be placed in (it arrives within the horizon)."""
    periods, lead = inst.data["periods"], _suppliers(inst)[supplier]["lead_time"]
    return list(periods[: len(periods) - lead])


def _orders_with(inst: Instance, supplier: str, units: int) -> list[Row] | None:
    """Order lines with ``supplier`` for exactly ``units`` in all, each within its capacity."""
    cap, rows, left = _suppliers(inst)[supplier]["capacity"], [], units
    for week in _weeks(inst, supplier):
        for item in _sells(inst, supplier):
            q = min(cap, left)
            if q > 0:
                rows.append(_order(supplier, item, week, q))
                left -= q
    return rows if left == 0 else None


@pytest.fixture(scope="module")
def orders() -> Instance:
    return _find(PROC)


def test_an_order_of_exactly_the_suppliers_capacity_keeps_supplier_capacity(orders: Instance) -> None:
    s = orders.data["suppliers"][0]
    rows = [_order(s["id"], _sells(orders, s["id"])[0], _weeks(orders, s["id"])[0], s["capacity"])]
    assert _passes(orders, _answer(orders, "orders", rows), "supplier_capacity")


def test_an_order_arriving_one_week_after_the_horizon_makes_the_plan_unreadable(orders: Instance) -> None:
    s = next(s for s in orders.data["suppliers"] if s["lead_time"] >= 1)
    late = orders.data["periods"][len(orders.data["periods"]) - s["lead_time"]]  # arrives in week n + 1
    answer = _reference(orders)
    answer["orders"].append(_order(s["id"], _sells(orders, s["id"])[0], late, 1))
    assert not _passes(orders, answer, "format")


def test_an_order_of_the_largest_readable_quantity_is_read_from_a_supplier_that_ships_that_many(
    orders: Instance,
) -> None:
    """Quantities are read up to MAX_QUANTITY (10**9) inclusive; the supplier's capacity is
    set to that figure, since no generated supplier ships so much."""
    s = orders.data["suppliers"][0]["id"]

    def edit(data: dict[str, Any]) -> None:
        next(x for x in data["suppliers"] if x["id"] == s)["capacity"] = MAX_QUANTITY

    rows = [_order(s, _sells(orders, s)[0], _weeks(orders, s)[0], MAX_QUANTITY)]
    assert _passes(_with_data(orders, edit), _answer(orders, "orders", rows), "format")


def _unordered_cell(inst: Instance) -> tuple[str, str, str] | None:
    """(supplier, item, week) that neither the current plan of the changes term nor the
    reference orders."""
    (term,) = [t for t in inst.objective if t.kind == "changes"]
    used = {(s, i, w) for s, i, w, _ in term.params["existing"]} | {
        (r["supplier"], r["item"], r["week"]) for r in inst.reference["orders"]
    }
    cells = (
        (s["id"], i, w) for s in inst.data["suppliers"] for i in _sells(inst, s["id"]) for w in _weeks(inst, s["id"])
    )
    return next((c for c in cells if c not in used), None)


def test_a_current_order_of_zero_units_left_out_of_the_new_plan_is_no_change() -> None:
    """A current order line of 0 units orders nothing: a plan that orders nothing there
    changes nothing. The certified plan keeps its certified count of changes."""
    inst = _find(PROC, include=("min_change_replanning",), where=lambda i: _unordered_cell(i) is not None)
    s, i, w = _unordered_cell(inst) or ("", "", "")
    objective = [
        t.model_copy(update={"params": {"existing": [*t.params["existing"], [s, i, w, 0]]}})
        if t.kind == "changes"
        else t
        for t in inst.objective
    ]
    assert _passes(inst.model_copy(update={"objective": objective}), _reference(inst), "objective:changes")


def test_an_order_of_exactly_the_minimum_keeps_min_order() -> None:
    def fits(i: Instance) -> bool:
        return all(least <= _suppliers(i)[s]["capacity"] for s, least in _params(i, "min_order")["min"].items())

    inst = _find(PROC, ("min_order",), where=fits)
    supplier, least = next(iter(_params(inst, "min_order")["min"].items()))
    rows = [_order(supplier, _sells(inst, supplier)[0], _weeks(inst, supplier)[0], least)]
    assert _passes(inst, _answer(inst, "orders", rows), "min_order")


def test_orders_totalling_exactly_the_contract_minimum_keep_contract_minimum() -> None:
    inst = _find(PROC, ("contract_minimum",))
    p = _params(inst, "contract_minimum")
    rows = _orders_with(inst, p["supplier"], p["min"])
    assert rows is not None
    assert _passes(inst, _answer(inst, "orders", rows), "contract_minimum")


def test_an_order_of_exactly_the_lot_size_keeps_lot_cap() -> None:
    inst = _find(PROC, ("lot_cap",))
    most = _params(inst, "lot_cap")["max"]
    s = next(s for s in inst.data["suppliers"] if s["capacity"] >= most)
    rows = [_order(s["id"], _sells(inst, s["id"])[0], _weeks(inst, s["id"])[0], most)]
    assert _passes(inst, _answer(inst, "orders", rows), "lot_cap")


def _arriving_in(inst: Instance, week: int, units: int) -> list[Row] | None:
    """Order lines whose deliveries all arrive in ``week`` (an index), ``units`` in all."""
    rows, left = [], units
    for s in inst.data["suppliers"]:
        placed = week - s["lead_time"]
        if placed < 0:
            continue
        for item in _sells(inst, s["id"]):
            q = min(s["capacity"], left)
            if q > 0:
                rows.append(_order(s["id"], item, inst.data["periods"][placed], q))
                left -= q
    return rows if left == 0 else None


def test_deliveries_of_exactly_the_dock_limit_in_one_week_keep_dock_capacity() -> None:
    inst = _find(PROC, ("dock_capacity",))
    last = len(inst.data["periods"]) - 1
    rows = _arriving_in(inst, last, _params(inst, "dock_capacity")["max"])
    assert rows is not None
    assert _passes(inst, _answer(inst, "orders", rows), "dock_capacity")


def _lone_order(inst: Instance, quantity: int) -> tuple[Row, int]:
    """One order line of a supplier with an order charge, and what it costs in its week."""
    s = next(s for s in inst.data["suppliers"] if s["fixed_cost"] > 0)
    item = _sells(inst, s["id"])[0]
    return _order(s["id"], item, _weeks(inst, s["id"])[0], quantity), quantity * _price(inst, s["id"], item) + s[
        "fixed_cost"
    ]


@pytest.fixture(scope="module")
def budgeted() -> Instance:
    return _find(PROC, ("period_budget",), where=lambda i: any(s["fixed_cost"] > 0 for s in i.data["suppliers"]))


def test_spending_exactly_the_period_budget_keeps_period_budget(budgeted: Instance) -> None:
    row, cost = _lone_order(budgeted, 2)
    assert _passes(
        _with_params(budgeted, "period_budget", max=cost), _answer(budgeted, "orders", [row]), "period_budget"
    )


def test_a_one_unit_order_pays_its_order_charge_against_the_period_budget(budgeted: Instance) -> None:
    row, cost = _lone_order(budgeted, 1)
    short = _with_params(budgeted, "period_budget", max=cost - 1)
    assert not _passes(short, _answer(budgeted, "orders", [row]), "period_budget")


def _added_unit(inst: Instance) -> tuple[Row, dict[str, Any]] | None:
    """A one-unit order of a supplier with an order charge, in a week the reference places
    nothing with it, and what it adds: (row, {"spend": ..., "stock": ..., "holding": ...,
    "score": ...}) in the prompt's terms."""
    placed = {(r["supplier"], r["week"]) for r in inst.reference["orders"]}
    periods = inst.data["periods"]
    for n, s in enumerate(inst.data["suppliers"], 1):
        weeks = [w for w in _weeks(inst, s["id"]) if (s["id"], w) not in placed]
        if s["fixed_cost"] == 0 or not weeks:
            continue
        item = _sells(inst, s["id"])[0]
        t = periods.index(weeks[0])
        arrival = t + s["lead_time"]
        held = len(periods) - arrival  # the unit is in stock at the end of every week from its arrival on
        holding = next(i["holding_cost"] for i in inst.data["items"] if i["id"] == item)
        extra = {
            "supplier": s["id"],
            "item": item,
            "spend": _price(inst, s["id"], item) + s["fixed_cost"],
            "holding": holding * held,
            "score": 10 * n + t + 1,
        }
        return _order(s["id"], item, weeks[0], 1), extra
    return None


def test_a_one_unit_order_pays_its_order_charge_in_the_stated_spend() -> None:
    inst = _find(PROC, include=("conflict_validation",), where=lambda i: _added_unit(i) is not None)
    row, extra = _added_unit(inst) or ({}, {})
    answer = _reference(inst)
    answer["orders"].append(row)
    answer["verification"]["spend"][extra["supplier"]] += extra["spend"]
    answer["verification"]["closing_stock"][extra["item"]] += 1
    assert _passes(inst, answer, "verification")


def test_a_one_unit_order_pays_its_order_charge_in_the_total_cost() -> None:
    inst = _find(
        PROC,
        where=lambda i: _added_unit(i) is not None and {t.kind for t in i.objective} == {"total_cost", "order_score"},
    )
    row, extra = _added_unit(inst) or ({}, {})
    answer = _reference(inst)
    answer["orders"].append(row)
    answer["objective"]["total_cost"] += extra["spend"] + extra["holding"]
    answer["objective"]["order_score"] += extra["score"]
    assert _passes(inst, answer, "validation")


def _gap_supplier(inst: Instance) -> str:
    return _params(inst, "order_gap")["supplier"]


def test_one_unit_orders_in_consecutive_weeks_break_order_gap() -> None:
    inst = _find(PROC, ("order_gap",), where=lambda i: len(_weeks(i, _gap_supplier(i))) >= 2)
    s = _gap_supplier(inst)
    item, (a, b) = _sells(inst, s)[0], _weeks(inst, s)[:2]
    rows = [_order(s, item, a, 1), _order(s, item, b, 1)]
    assert not _passes(inst, _answer(inst, "orders", rows), "order_gap")


def test_orders_in_the_last_two_weeks_break_order_gap() -> None:
    """A supplier without lead time takes orders up to the last week."""
    inst = _find(PROC, ("order_gap",), where=lambda i: _suppliers(i)[_gap_supplier(i)]["lead_time"] == 0, size="small")
    s = _gap_supplier(inst)
    item, weeks = _sells(inst, s)[0], inst.data["periods"]
    rows = [_order(s, item, weeks[-2], 1), _order(s, item, weeks[-1], 1)]
    assert not _passes(inst, _answer(inst, "orders", rows), "order_gap")


@pytest.fixture(scope="module")
def delay_robust() -> Instance:
    return _find(PROC, ("delay_robust",), ("robustness_design",))


def test_the_certified_plan_of_a_delay_robust_instance_keeps_delay_robust(delay_robust: Instance) -> None:
    """Each delivery may come one period late, no later: the certified plan allows for that."""
    assert _passes(delay_robust, _reference(delay_robust), "delay_robust")


def test_a_plan_ordering_nothing_that_runs_short_breaks_delay_robust(delay_robust: Instance) -> None:
    """With no delivery to delay, the plan itself must still meet demand."""
    items = delay_robust.data["items"]
    assert any(i["initial_stock"] < sum(i["demand"]) for i in items)
    assert not _passes(delay_robust, _answer(delay_robust, "orders", []), "delay_robust")


# -- shelf life: the first-in-first-out simulation on an item's stock --------------------------
def _perishable(inst: Instance) -> tuple[str, str, int] | None:
    """(item, supplier, lead) for the shelf-life item: a seller whose delivery arriving in
    the third week (or the week after its lead time) still has a full shelf life inside
    the horizon."""
    p, n = _params(inst, "shelf_life"), len(inst.data["periods"])
    for s in inst.data["suppliers"]:
        if p["item"] in _sells(inst, s["id"]) and max(2, s["lead_time"] + 1) + p["periods"] <= n:
            return p["item"], s["id"], s["lead_time"]
    return None


@pytest.fixture(scope="module")
def perishable() -> Instance:
    return _find(PROC, ("shelf_life",), where=lambda i: _perishable(i) is not None)


def _stocked(inst: Instance, item: str, opening: int, demand: list[int]) -> Instance:
    """The instance with the item's opening stock and weekly demand set (every other figure
    as generated): the generator draws both shapes used here -- no opening stock (perishable
    items keep no buffer) and weeks without demand (chance 0.15 a week)."""
    data = copy.deepcopy(inst.data)
    for i in data["items"]:
        if i["id"] == item:
            i["initial_stock"], i["demand"] = opening, demand
    return inst.model_copy(update={"data": data})


def test_an_item_with_no_opening_stock_and_no_orders_holds_no_stale_stock(perishable: Instance) -> None:
    item, _, _ = _perishable(perishable) or ("", "", 0)
    inst = _stocked(perishable, item, 0, [0] * len(perishable.data["periods"]))
    assert _passes(inst, _answer(inst, "orders", []), "shelf_life")


def test_a_delivery_that_exactly_covers_two_weeks_of_missed_demand_leaves_no_stock_to_expire(
    perishable: Instance,
) -> None:
    """Demand missed in the first two weeks is served first from the next delivery, all of it."""
    item, s, lead = _perishable(perishable) or ("", "", 0)
    weeks = perishable.data["periods"]
    arrival = max(2, lead)
    demand = [0] * len(weeks)
    demand[0], demand[1] = 4, 3  # missed: nothing arrives before week `arrival`
    inst = _stocked(perishable, item, 0, demand)
    rows = [_order(s, item, weeks[arrival - lead], 7)]
    assert _passes(inst, _answer(inst, "orders", rows), "shelf_life")


def test_a_delivery_after_the_missed_demand_is_paid_stays_in_stock_and_expires(perishable: Instance) -> None:
    """Once one delivery has paid what was owed, the next one is stock again, and ages."""
    item, s, lead = _perishable(perishable) or ("", "", 0)
    weeks = perishable.data["periods"]
    first = max(1, lead)  # the week the first delivery arrives, after the missed week 1
    demand = [0] * len(weeks)
    demand[0] = 4
    inst = _stocked(perishable, item, 0, demand)
    rows = [_order(s, item, weeks[first - lead], 4), _order(s, item, weeks[first - lead + 1], 8)]  # 8 never used
    assert not _passes(inst, _answer(inst, "orders", rows), "shelf_life")


# == Student Grouping =========================================================================
def _students(inst: Instance) -> dict[str, dict[str, Any]]:
    return _by_id(inst, "students")


def _alone_first(inst: Instance) -> dict[str, Any]:
    """An answer in which the first-listed student is alone (the first group checked): the
    reference's groups without them, the last two merged to keep the number of groups."""
    first = inst.data["students"][0]["id"]
    rest = [[s for s in g if s != first] for g in inst.reference["groups"]]
    rest = [g for g in rest if g]
    while len(rest) > inst.data["groups"] - 1:
        rest[-2:] = [rest[-2] + rest[-1]]
    return {**_reference(inst), "groups": [[first], *rest]}


def test_a_student_alone_in_a_group_breaks_group_size() -> None:
    inst = _find(GROUP, where=lambda i: _params(i, "group_size")["min"] >= 2)
    assert not _passes(inst, _alone_first(inst), "group_size")


def test_a_student_alone_without_the_leadership_level_breaks_leader_floor() -> None:
    inst = _find(
        GROUP,
        ("leader_floor",),
        where=lambda i: i.data["students"][0]["leadership"] < _params(i, "leader_floor")["level"],
    )
    assert not _passes(inst, _alone_first(inst), "leader_floor")


def test_a_student_alone_below_the_skill_floor_breaks_skill_floor() -> None:
    inst = _find(
        GROUP, ("skill_floor",), where=lambda i: i.data["students"][0]["skill"] < _params(i, "skill_floor")["min"]
    )
    assert not _passes(inst, _alone_first(inst), "skill_floor")


def _tracks(inst: Instance, group: list[str]) -> list[str]:
    return [_students(inst)[s]["track"] for s in group]


def test_a_student_alone_mixes_one_track_and_breaks_diversity() -> None:
    inst = _find(GROUP, ("diversity",))
    assert not _passes(inst, _alone_first(inst), "diversity")


def test_groups_mixing_exactly_the_required_number_of_tracks_keep_diversity() -> None:
    def exact(i: Instance) -> bool:
        least = _params(i, "diversity")["min"]
        return any(len(set(_tracks(i, g))) == least for g in i.reference["groups"])

    inst = _find(GROUP, ("diversity",), where=exact)
    assert _passes(inst, _reference(inst), "diversity")


def _pairs_of_a_track(inst: Instance) -> bool:
    """Some group of the reference has exactly two students of one track."""
    return any(2 in {t: _tracks(inst, g).count(t) for t in _tracks(inst, g)}.values() for g in inst.reference["groups"])


def test_two_students_of_a_track_in_a_group_are_not_isolated() -> None:
    inst = _find(GROUP, ("no_isolation",), where=_pairs_of_a_track)
    assert _passes(inst, _reference(inst), "no_isolation")


def _isolating_swap(inst: Instance) -> list[list[str]] | None:
    """The reference's groups with two students swapped so that someone is the only one of
    their track in their group, while in no group does a track hold all members but one."""
    groups = inst.reference["groups"]
    for (i, gi), (j, gj) in itertools.combinations(enumerate(groups), 2):
        for a, b in itertools.product(gi, gj):
            new = [list(g) for g in groups]
            new[i][gi.index(a)], new[j][gj.index(b)] = b, a
            counts = [[_tracks(inst, g).count(t) for t in _tracks(inst, g)] for g in new]
            isolated = any(1 in c for c in counts)
            dominated = any(len(g) - 1 in c for g, c in zip(new, counts))
            if isolated and not dominated:
                return new
    return None


def test_a_student_alone_in_their_track_beside_two_other_tracks_breaks_no_isolation() -> None:
    inst = _find(GROUP, ("no_isolation",), where=lambda i: _isolating_swap(i) is not None)
    answer = {**_reference(inst), "groups": _isolating_swap(inst)}
    assert not _passes(inst, answer, "no_isolation")


def test_a_student_alone_in_a_group_breaks_a_track_cap_of_zero() -> None:
    """A cap of zero students of a track is broken by any group, even one of a single student."""
    inst = _find(GROUP, ("track_cap",))
    assert not _passes(_with_params(inst, "track_cap", max=0), _alone_first(inst), "track_cap")


@pytest.fixture(scope="module")
def dropout() -> Instance:
    return _find(GROUP, ("dropout_robust",), ("robustness_design",))


def test_the_certified_groups_of_a_robust_grouping_keep_dropout_robust(dropout: Instance) -> None:
    """Every group has a second leader at the level, so any one student may drop out."""
    assert _passes(dropout, _reference(dropout), "dropout_robust")


def test_a_leader_alone_in_a_group_breaks_dropout_robust(dropout: Instance) -> None:
    """If the only student of a group drops out, the group has no leader left."""
    assert not _passes(dropout, _alone_first(dropout), "dropout_robust")


@pytest.fixture(scope="module")
def grouping() -> Instance:
    return _find(GROUP)


def test_a_group_listing_a_number_instead_of_a_name_makes_the_grouping_unreadable(grouping: Instance) -> None:
    answer = _reference(grouping)
    answer["groups"][0].append(7)
    assert not _passes(grouping, answer, "format")


def test_an_empty_group_makes_the_grouping_unreadable(grouping: Instance) -> None:
    answer = _reference(grouping)
    answer["groups"][-2:] = [answer["groups"][-2] + answer["groups"][-1], []]
    assert not _passes(grouping, answer, "format")


def test_a_grouping_that_leaves_a_student_out_is_unreadable(grouping: Instance) -> None:
    answer = _reference(grouping)
    answer["groups"][0].pop()
    assert all(answer["groups"])
    assert not _passes(grouping, answer, "format")
