"""Timetable verdicts the mutation campaign (issue 19) found unguarded, one behaviour each.

Every test grades an answer built from a generated instance's certified reference (one
row changed at most) through the family's public ``check_answer`` and asserts the verdict
of one checklist item. Where a test needs the instance to have some shape (three rooms,
two events held at once, a backup room exactly as large as its event), it first asserts
that shape, so a change of generator fails the test loudly instead of emptying it.

The survivors they kill: room overlap and backup simulations that only differ from the
rule with three rooms or more, a backup-room capacity test, the tie of a priority
ranking, a room closure checked past the first event held elsewhere, and periods without
a listed penalty. The survivors argued equivalent are in scripts/mutation_equivalents.toml.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from pbsolve.checkers.scheduling import check_answer
from pbsolve.schema import Instance, Rule
from tests.instances import find
from tests.kill_helpers import by_id as _by_id
from tests.kill_helpers import item_passes
from tests.kill_helpers import only_rule as _rule
from tests.kill_helpers import reference as _reference

Row = dict[str, Any]


# -- instances (generated once per process by tests.instances) -------------------------------
def _found(inst: Instance | None) -> Instance:
    assert inst is not None, "the generator no longer gives this instance"
    return inst


@pytest.fixture(scope="module")
def exams_with_backups() -> Instance:
    """Three rooms, room backups, and a reference holding two exams at once in two rooms."""
    return _found(find("exam_scheduling", 11, "default", include=("robustness_design",)))


@pytest.fixture(scope="module")
def meetings_with_backups() -> Instance:
    """Room backups where some meeting's backup room has exactly the seats it needs."""
    return _found(find("meeting_planning", 11, "default", include=("robustness_design",)))


@pytest.fixture(scope="module")
def replanned_meetings() -> Instance:
    """A replanning instance with a room closure and a priority ranking."""
    return _found(find("meeting_planning", 2, "small", include=("min_change_replanning",)))


@pytest.fixture(scope="module")
def recovered_meetings() -> Instance:
    """An exception-recovery instance: a scenario rule and a certified recovery plan."""
    return _found(find("meeting_planning", 2, "small", include=("exception_recovery",)))


@pytest.fixture(scope="module")
def week_of_lectures() -> Instance:
    """Five days of three periods: the middle periods carry no listed penalty."""
    return _found(find("course_timetabling", 11, "default"))


# -- reading instances and answers -----------------------------------------------------------
def _passes(inst: Instance, answer: dict[str, Any], rule: str) -> bool:
    return item_passes(check_answer, inst, answer, rule)


def _rows(answer: dict[str, Any]) -> dict[str, Row]:
    return {row["event"]: row for row in answer["schedule"]}


def _occupies(inst: Instance, event: str, start: str) -> set[int]:
    """Slot indices an event starting at ``start`` occupies."""
    index = [s["id"] for s in inst.data["slots"]].index(start)
    return set(range(index, index + _by_id(inst, "events")[event]["duration"]))


def _fits_day(inst: Instance, event: str, start: str) -> bool:
    """The event starting at ``start`` ends on its start's day (the answer stays readable)."""
    slots = inst.data["slots"]
    taken = sorted(_occupies(inst, event, start))
    return taken[-1] < len(slots) and len({slots[t]["day"] for t in taken}) == 1


def _overlap(inst: Instance, a: Row, b: Row) -> bool:
    return bool(_occupies(inst, a["event"], a["start"]) & _occupies(inst, b["event"], b["start"]))


def _at_once_in_two_rooms(inst: Instance, answer: dict[str, Any]) -> Iterator[tuple[Row, Row]]:
    """Pairs of rows held at the same time in different rooms."""
    rows = answer["schedule"]
    for i, a in enumerate(rows):
        for b in rows[i + 1 :]:
            if a["room"] != b["room"] and _overlap(inst, a, b):
                yield a, b


def _holds(inst: Instance, event: str, room: str) -> tuple[bool, bool]:
    """(enough seats, every needed feature) of ``room`` for ``event``."""
    e, r = _by_id(inst, "events")[event], _by_id(inst, "rooms")[room]
    return r["seats"] >= e["size"], set(e["needs"]) <= set(r["features"])


# -- room overlap with three rooms -----------------------------------------------------------
def test_two_events_held_at_once_in_different_rooms_keep_the_room_overlap_rule(exams_with_backups: Instance) -> None:
    inst, answer = exams_with_backups, _reference(exams_with_backups)
    assert len(inst.data["rooms"]) >= 3 and next(_at_once_in_two_rooms(inst, answer), None)
    assert _passes(inst, answer, "room_no_overlap")


# -- room backups ----------------------------------------------------------------------------
def test_events_held_at_once_in_different_rooms_may_share_a_backup_room(exams_with_backups: Instance) -> None:
    """Rooms fail one at a time, so two events in two rooms never both move to the backup."""
    inst, answer = exams_with_backups, _reference(exams_with_backups)
    shared = [(a, b) for a, b in _at_once_in_two_rooms(inst, answer) if a["backup"] == b["backup"]]
    assert len(inst.data["rooms"]) >= 3 and shared
    assert _passes(inst, answer, "room_backup")


def test_a_backup_room_another_event_holds_at_that_time_fails_the_backup_item(exams_with_backups: Instance) -> None:
    """The plan itself has no clash; the clash appears only once the event's room fails."""
    inst, answer = exams_with_backups, _reference(exams_with_backups)
    rows = answer["schedule"]
    e, taken = next(
        (e, other["room"])
        for e in rows
        for other in rows
        if other["room"] != e["room"] and _overlap(inst, e, other) and all(_holds(inst, e["event"], other["room"]))
    )
    e["backup"] = taken
    assert _passes(inst, answer, "room_no_overlap")
    assert not _passes(inst, answer, "room_backup")


def test_a_free_backup_room_too_small_for_its_event_fails_the_backup_item(exams_with_backups: Instance) -> None:
    """Only the seats are wrong: the room has every needed feature and is free at that time."""
    inst, answer = exams_with_backups, _reference(exams_with_backups)
    rows = answer["schedule"]

    def free(e: Row, room: str) -> bool:
        """Nothing is in ``room``, and no other event of e's room moves there, while e runs."""
        return not any(
            o is not e
            and (o["room"] == room or (o["room"] == e["room"] and o["backup"] == room))
            and _overlap(inst, e, o)
            for o in rows
        )

    e, small = next(
        (e, r)
        for e in rows
        for r in _by_id(inst, "rooms")
        if r != e["room"] and _holds(inst, e["event"], r) == (False, True) and free(e, r)
    )
    e["backup"] = small
    assert not _passes(inst, answer, "room_backup")


def test_a_backup_room_with_exactly_the_seats_its_event_needs_can_hold_it(meetings_with_backups: Instance) -> None:
    inst, answer = meetings_with_backups, _reference(meetings_with_backups)
    events, rooms = _by_id(inst, "events"), _by_id(inst, "rooms")
    assert any(rooms[row["backup"]]["seats"] == events[row["event"]]["size"] for row in answer["schedule"])
    assert _passes(inst, answer, "room_backup")


def test_a_recovery_plan_naming_no_backup_rooms_fails_a_backup_rule_of_the_scenario(
    recovered_meetings: Instance,
) -> None:
    """A backup rule is never met by a plan read without backup rooms (here the main rules
    have none, so the recovery rows are read without them): it fails, it is not skipped."""
    recovery = recovered_meetings.recovery
    assert recovery is not None
    scenario = recovery.scenario
    backup_rule = Rule(
        id=f"S{len(scenario) + 1}", kind="room_backup", tier="hard", text="Every meeting names a backup room."
    )
    inst = recovered_meetings.model_copy(
        update={"recovery": recovery.model_copy(update={"scenario": [*scenario, backup_rule]})}
    )
    answer = _reference(inst)
    assert "room_backup" not in {r.kind for r in inst.rules}
    assert _passes(recovered_meetings, answer, "recovery:rules")
    assert not _passes(inst, answer, "recovery:rules")


# -- priority ranking ------------------------------------------------------------------------
def test_priority_ranked_events_starting_in_the_same_slot_keep_the_ranking(replanned_meetings: Instance) -> None:
    """'a starts no later than b' holds when both start together."""
    inst, answer = replanned_meetings, _reference(replanned_meetings)
    rows = _rows(answer)
    chain = _rule(inst, "priority_order").params["events"]
    # the later of two neighbours in the ranking moves back to the earlier one's start
    # (the rest of the ranking still holds: the reference keeps it)
    a, b = next((a, b) for a, b in itertools.pairwise(chain) if _fits_day(inst, b, rows[a]["start"]))
    rows[b]["start"] = rows[a]["start"]
    assert _passes(inst, answer, "priority_order")


# -- room closure ----------------------------------------------------------------------------
def test_an_event_in_a_closed_room_fails_the_closure_after_an_event_held_elsewhere(
    replanned_meetings: Instance,
) -> None:
    """The first listed event is in another room; a later one uses the room while it is closed."""
    inst, answer = replanned_meetings, _reference(replanned_meetings)
    closure = _rule(inst, "room_closed").params
    rows = _rows(answer)
    first, *later = [e["id"] for e in inst.data["events"]]
    rows[first]["room"] = next(r["id"] for r in inst.data["rooms"] if r["id"] != closure["room"])
    event, start = next(
        (e, s["id"])
        for e in later
        for s in inst.data["slots"]
        if _fits_day(inst, e, s["id"]) and s["id"] in closure["slots"]
    )
    rows[event].update(start=start, room=closure["room"])
    assert not _passes(inst, answer, "room_closed")


# -- objective -------------------------------------------------------------------------------
def test_periods_without_a_listed_penalty_add_nothing_to_the_period_penalty(week_of_lectures: Instance) -> None:
    """The certified optimum counts only listed periods ('other periods cost 0')."""
    inst, answer = week_of_lectures, _reference(week_of_lectures)
    (term,) = [t for t in inst.objective if t.kind == "slot_penalty"]
    assert any(row["start"] not in term.params["penalty"] for row in answer["schedule"])
    assert _passes(inst, answer, "objective")


def test_a_person_the_data_does_not_list_attends_no_events() -> None:
    """Rules name people by id; an id outside the people list attends nothing (an empty
    span list, never None or another person's events)."""
    from pbsolve.checkers.scheduling.instance_data import TimetableData

    inst = find("meeting_planning", 0)
    assert inst is not None
    data = TimetableData.model_validate(inst.data)
    listed = data.people[0].id
    assert data.spans_of(listed) == tuple((e.id, e.duration) for e in data.events if listed in e.people)
    assert data.spans_of("nobody-listed") == ()


def test_the_room_backup_kind_is_never_judged_as_a_plain_rule_check() -> None:
    """room_backup is in the kind table for its parameters only: its verdict needs the
    answer's backup rooms, so calling the table's check is a programming error, said so."""
    from pbsolve.checkers.scheduling.checks import CHECKS
    from pbsolve.checkers.scheduling.instance_data import TimetableData
    from pbsolve.params import NoParams

    inst = find("meeting_planning", 0)
    assert inst is not None
    data = TimetableData.model_validate(inst.data)
    with pytest.raises(TypeError, match=r"^room_backup is judged by evaluate\(\), with the answer's backup rooms$"):
        CHECKS["room_backup"](data, {}, NoParams())
