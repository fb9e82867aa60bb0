"""Executable checks for timetable answers: one function per rule kind and objective kind.

Written from the rule sentences, not from the solver model (this package never imports
pbsolve.models), so the two implementations can be held against each other in tests.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any

from pbsolve.checkers.scheduling.instance_data import Event, TimetableData
from pbsolve.checkers.scheduling.rule_params import (
    RULE_PARAMS,
    TERM_PARAMS,
    BlockedSlots,
    CurrentSchedule,
    DailyLimit,
    DayCap,
    Deadline,
    DifferentDays,
    MaxConsecutive,
    PersonAbsent,
    PersonBuffer,
    Precedence,
    PriorityOrder,
    RoomClosed,
    SameDayPairs,
    SameRoom,
    SlotPenalty,
    WeightedEnd,
    Window,
)
from pbsolve.checking import Evaluator, TaskChecker, exact_names, figures_schema, remember
from pbsolve.checking import answer_schema as generic_answer_schema
from pbsolve.checking import check_answer as generic_check_answer
from pbsolve.kit import KindRegistry
from pbsolve.params import NoParams, Params, TypedParams, as_model, parse
from pbsolve.schema import Instance, ObjectiveTerm, Recovery, Rule

Plan = dict[str, tuple[int, str]]  # event id -> (start slot index, room id)
Verdict = tuple[bool, str]


# -- reading an answer ---------------------------------------------------------------
_SPACES = re.compile(r"\s+")


def _norm(text: str) -> str:
    """Case- and space-insensitive key; '9:00' and '09:00' read alike."""
    found = _norm_cache.get(text)
    return found if found is not None else remember(_norm_cache, text, _norm_text(text))


def _norm_text(text: str) -> str:
    key = _SPACES.sub(" ", text.strip().lower())
    if len(key) == 5 and key[0] == "0" and key[2] == ":":
        key = key[1:]
    return key


_norm_cache: dict[str, str] = {}


class Lookups:
    """Normalised name -> entity tables of one instance, built once per instance."""

    def __init__(self, data: TimetableData) -> None:
        self.events = {_norm(e.id): e for e in data.events}
        self.slots = {_norm(s.id): i for i, s in enumerate(data.slots)}
        self.rooms = {_norm(r.id): r.id for r in data.rooms}
        self.starts = {e.id: frozenset(data.starts(e)) for e in data.events}
        # the instance's own spellings, read without normalising (exact_names)
        self.exact_events = exact_names(self.events, [e.id for e in data.events], _norm)
        self.exact_slots = exact_names(self.slots, [s.id for s in data.slots], _norm)
        self.exact_rooms = exact_names(self.rooms, [r.id for r in data.rooms], _norm)


def read_plan(
    data: TimetableData, answer: dict[str, Any], lookups: Lookups | None = None, backups: dict[str, str] | None = None
) -> tuple[Plan | None, str]:
    """Decode answer['schedule'] into a plan, or say exactly what is wrong with it.

    With ``backups`` (a dict to fill), every row must also name a known 'backup' room.
    """
    schedule = answer.get("schedule") if isinstance(answer, dict) else None
    if not isinstance(schedule, list):
        return None, "'schedule' is missing or not a list"
    lk = lookups or Lookups(data)
    events, slots, rooms, starts = lk.events, lk.slots, lk.rooms, lk.starts
    exact_events, exact_slots, exact_rooms = lk.exact_events, lk.exact_slots, lk.exact_rooms
    plan: Plan = {}
    for k, row in enumerate(schedule):
        if not isinstance(row, dict):
            return None, f"schedule entry {k + 1} is not an object"
        ev, start, room = row.get("event"), row.get("start"), row.get("room")
        if not (isinstance(ev, str) and isinstance(start, str) and isinstance(room, str)):
            return None, f"schedule entry {k + 1} needs string fields 'event', 'start' and 'room'"
        e = exact_events.get(ev)
        if e is None:
            e = events.get(_norm(ev))
        if e is None:
            return None, f"schedule entry {k + 1} names unknown event {ev[:40]!r}"
        eid = e.id
        if eid in plan:
            return None, f"event {eid} appears more than once"
        s = exact_slots.get(start)
        if s is None:
            s = slots.get(_norm(start))
        if s is None:
            return None, f"event {eid} has unknown start {start[:40]!r}"
        if s not in starts[eid]:
            return None, f"event {eid} starting at {data.slots[s].id} would run past the end of the day"
        r = exact_rooms.get(room)
        if r is None:
            r = rooms.get(_norm(room))
        if r is None:
            return None, f"event {eid} has unknown room {room[:40]!r}"
        plan[eid] = (s, r)
        if backups is not None:
            b = row.get("backup")
            b_id = (exact_rooms.get(b) or rooms.get(_norm(b))) if isinstance(b, str) else None
            if b_id is None:
                return None, f"event {eid} needs a 'backup' room from the room list"
            backups[eid] = b_id
    missing = [eid for eid, _ in data.spans if eid not in plan]
    if missing:
        return None, f"events missing from the schedule: {', '.join(missing)}"
    return plan, "complete plan"


# -- rule checks ---------------------------------------------------------------------
def _day(data: TimetableData, plan: Plan, e: Event) -> int:
    return data.slots[plan[e.id][0]].day


Check = Callable[[TimetableData, Plan, Any], Verdict]  # (data, plan, the rule's Params model) -> verdict
CHECKS: KindRegistry[Check] = KindRegistry("check")


check = CHECKS.register


OK: Verdict = (True, "holds")
OBJECTIVE_VALUES: dict[str, Callable[[TimetableData, Plan, Any], int]] = {}  # add-on objective kinds


@check("availability")
def _availability(d: TimetableData, plan: Plan, p: NoParams) -> Verdict:
    # Slots as bit sets (bit t: slot index t): an event's slots meet a person's unavailable
    # ones exactly when the two sets share a bit, and the lowest shared bit is the first
    # slot of the event at which the person is unavailable.
    off = d.unavailable_masks
    for eid, duration, people in d.event_rows:
        busy = ((1 << duration) - 1) << plan[eid][0]
        for person in people:
            clash = off[person] & busy
            if clash:
                t = (clash & -clash).bit_length() - 1
                return False, f"{person} is unavailable at {d.slots[t].id} during {eid}"
    return OK


@check("room_fit")
def _room_fit(d: TimetableData, plan: Plan, p: NoParams) -> Verdict:
    for k, ((eid, _), fits) in enumerate(zip(d.spans, d.room_fits)):
        if plan[eid][1] in fits:
            continue  # a room with the seats and every feature (the tests below all pass)
        e = d.events[k]
        room = d.room_by_id[plan[e.id][1]]
        if room.seats < e.size:
            return False, f"{e.id} needs {e.size} seats; {room.id} has {room.seats}"
        lacking = [f for f in e.needs if f not in room.features]
        if lacking:
            return False, f"{e.id} needs {', '.join(lacking)}; {room.id} lacks it"
    return OK


def _clash(d: TimetableData, plan: Plan, group: Sequence[Event], who: str) -> Verdict:
    """The first event of ``group`` (in order) that uses a slot an earlier one uses, at the
    first such slot of it."""
    return _clash_spans(d, plan, [(e.id, e.duration) for e in group], who)


def _clash_spans(d: TimetableData, plan: Plan, spans: Sequence[tuple[str, int]], who: str) -> Verdict:
    """:func:`_clash` of the events given as (id, duration). Slots are kept as a bit set
    (bit t: slot index t); the earlier events never overlap each other, so exactly one of
    them holds the slot found."""
    taken = 0
    for k, (eid, duration) in enumerate(spans):
        mine = ((1 << duration) - 1) << plan[eid][0]
        both = taken & mine
        if both:
            t = (both & -both).bit_length() - 1
            first = next(x for x, n in spans[:k] if plan[x][0] <= t < plan[x][0] + n)
            return False, f"{who} is in {first} and {eid} at {d.slots[t].id}"
        taken |= mine
    return OK


@check("person_no_overlap")
def _person_no_overlap(d: TimetableData, plan: Plan, p: NoParams) -> Verdict:
    for person, spans in d.person_spans:
        verdict = _clash_spans(d, plan, spans, person)
        if not verdict[0]:
            return verdict
    return OK


@check("room_no_overlap")
def _room_no_overlap(d: TimetableData, plan: Plan, p: NoParams) -> Verdict:
    held: dict[str, list[tuple[str, int]]] = {}  # room id -> its events, in list order
    for span in d.spans:
        held.setdefault(plan[span[0]][1], []).append(span)
    for room in d.room_ids:
        verdict = _clash_spans(d, plan, held.get(room, ()), f"room {room}")
        if not verdict[0]:
            return verdict
    return OK


def _ends_before(plan: Plan, a: Event, b: Event) -> bool:
    return plan[a.id][0] + a.duration <= plan[b.id][0]


@check("series_order")
def _series_order(d: TimetableData, plan: Plan, p: NoParams) -> Verdict:
    for a, duration, b in d.series_pairs:
        if not plan[a][0] + duration <= plan[b][0]:
            return False, f"{a} does not end before {b} starts"
    return OK


@check("window")
def _window(d: TimetableData, plan: Plan, p: Window) -> Verdict:
    e = d.event_by_id[p.event]
    lo, hi = d.slot_index[p.from_], d.slot_index[p.to]
    if plan[e.id][0] < lo or plan[e.id][0] + e.duration - 1 > hi:
        return False, f"{e.id} at {d.slots[plan[e.id][0]].id} leaves its window"
    return OK


@check("deadline")
def _deadline(d: TimetableData, plan: Plan, p: Deadline) -> Verdict:
    hi = d.slot_index[p.to]
    for eid in p.events:
        e = d.event_by_id[eid]
        if plan[e.id][0] + e.duration - 1 > hi:
            return False, f"{e.id} finishes after the deadline"
    return OK


@check("blocked_slots")
def _blocked(d: TimetableData, plan: Plan, p: BlockedSlots) -> Verdict:
    blocked = set(p.slots)
    ids = d.slot_ids
    for eid, duration in d.spans:
        start = plan[eid][0]
        for t in range(start, start + duration):
            if ids[t] in blocked:
                return False, f"{eid} uses blocked slot {ids[t]}"
    return OK


def _count_days(d: TimetableData, plan: Plan, spans: Sequence[tuple[str, int]]) -> list[int]:
    """How many of the events given as (id, duration) fall on each day."""
    counts = [0] * len(d.days)
    days = d.slot_days
    for eid, _ in spans:
        counts[days[plan[eid][0]]] += 1
    return counts


@check("daily_limit")
def _daily_limit(d: TimetableData, plan: Plan, p: DailyLimit) -> Verdict:
    for person in p.people:
        counts = _count_days(d, plan, d.spans_of(person))
        for day, n in enumerate(counts):
            if n > p.max:
                return False, f"{person} has {n} on {d.days[day]} (max {p.max})"
    return OK


@check("day_cap")
def _day_cap(d: TimetableData, plan: Plan, p: DayCap) -> Verdict:
    for day, n in enumerate(_count_days(d, plan, d.spans)):
        if n > p.max:
            return False, f"{n} events on {d.days[day]} (max {p.max})"
    return OK


@check("precedence")
def _precedence(d: TimetableData, plan: Plan, p: Precedence) -> Verdict:
    a, b = d.event_by_id[p.before], d.event_by_id[p.after]
    return OK if _ends_before(plan, a, b) else (False, f"{a.id} does not end before {b.id} starts")


@check("priority_order")
def _priority_order(d: TimetableData, plan: Plan, p: PriorityOrder) -> Verdict:
    chain = p.events
    for a, b in itertools.pairwise(chain):
        if plan[a][0] > plan[b][0]:
            return False, f"{a} starts after {b}"
    return OK


@check("person_buffer")
def _person_buffer(d: TimetableData, plan: Plan, p: PersonBuffer) -> Verdict:
    mine = sorted(d.spans_of(p.person), key=lambda span: plan[span[0]][0])
    days = d.slot_days
    for i, (a, duration) in enumerate(mine):
        for b, _ in mine[i + 1 :]:
            if days[plan[a][0]] != days[plan[b][0]]:
                continue
            free = plan[b][0] - (plan[a][0] + duration)
            if free < p.gap:
                return False, f"{p.person} has {max(free, 0)} free slot(s) between {a} and {b}"
    return OK


@check("max_consecutive")
def _max_consecutive(d: TimetableData, plan: Plan, p: MaxConsecutive) -> Verdict:
    mine = d.spans_of(p.person)
    if sum(n for _, n in mine) <= p.max:
        return OK  # a run of busy slots is never longer than all their events together
    busy = {t for eid, n in mine for t in range(plan[eid][0], plan[eid][0] + n)}
    run, prev_day = 0, None
    for t, slot in enumerate(d.slots):
        if slot.day != prev_day:
            run, prev_day = 0, slot.day
        run = run + 1 if t in busy else 0
        if run > p.max:
            return False, f"{p.person} is busy {run} slots in a row ending {slot.id}"
    return OK


@check("different_days")
def _different_days(d: TimetableData, plan: Plan, p: DifferentDays) -> Verdict:
    seen: dict[int, str] = {}
    for eid in p.events:
        day = _day(d, plan, d.event_by_id[eid])
        if day in seen:
            return False, f"{seen[day]} and {eid} are both on {d.days[day]}"
        seen[day] = eid
    return OK


@check("same_room")
def _same_room(d: TimetableData, plan: Plan, p: SameRoom) -> Verdict:
    rooms = {plan[eid][1] for eid in p.events}
    return OK if len(rooms) == 1 else (False, f"uses rooms {', '.join(sorted(rooms))}")


@check("person_absent")
def _person_absent(d: TimetableData, plan: Plan, p: PersonAbsent) -> Verdict:
    gone = set(p.slots)
    ids = d.slot_ids
    for eid, duration in d.spans_of(p.person):
        start = plan[eid][0]
        for t in range(start, start + duration):
            if ids[t] in gone:
                return False, f"{p.person} is absent at {ids[t]} but attends {eid}"
    return OK


@check("room_closed")
def _room_closed(d: TimetableData, plan: Plan, p: RoomClosed) -> Verdict:
    gone = set(p.slots)
    ids = d.slot_ids
    for eid, duration in d.spans:
        start, room = plan[eid]
        if room != p.room:
            continue
        for t in range(start, start + duration):
            if ids[t] in gone:
                return False, f"{eid} uses {p.room} at {ids[t]} while it is closed"
    return OK


@check("room_backup")
def _room_backup(d: TimetableData, plan: Plan, p: NoParams) -> Verdict:
    """Registered for the kind tables only: the rule is judged on the answer's backup
    rooms, which are part of the plan, not of the rule (:func:`evaluate` passes them to
    :func:`backup_verdict`)."""
    raise TypeError("room_backup is judged by evaluate(), with the answer's backup rooms")


def backup_verdict(d: TimetableData, plan: Plan, backups: dict[str, str]) -> Verdict:
    """Fail each room in turn: its events move to their backups at the same time."""
    for e in d.events:
        b = backups.get(e.id)
        if b is None:
            return False, f"{e.id} names no backup room"
        if b == plan[e.id][1]:
            return False, f"{e.id}'s backup is its own room {b}"
        room = d.room_by_id[b]
        if room.seats < e.size or not set(e.needs) <= set(room.features):
            return False, f"backup {b} cannot hold {e.id}"
    for failed in d.rooms:
        moved = {
            e.id: (plan[e.id][0], backups[e.id] if plan[e.id][1] == failed.id else plan[e.id][1]) for e in d.events
        }
        held: dict[str, list[Event]] = {}  # room id -> its events after the failure, in list order
        for e in d.events:
            held.setdefault(moved[e.id][1], []).append(e)
        for room in d.rooms:
            verdict = _clash(d, moved, held.get(room.id, ()), f"room {room.id}")
            if not verdict[0]:
                return False, f"if {failed.id} fails: {verdict[1]}"
    return OK


# -- objective -----------------------------------------------------------------------
def objective_value(
    d: TimetableData, plan: Plan, term: ObjectiveTerm, tp: Params, backups: dict[str, str] | None = None
) -> int:
    """The plan's figure for one objective term (``tp``: the term's parsed parameters)."""
    kind = term.kind  # read once: the chain below tests it several times
    if kind == "changes":
        old = as_model(tp, CurrentSchedule).existing
        ids, total = d.slot_ids, 0
        for eid, _ in d.spans:
            start, room = plan[eid]
            if (ids[start], room) != tuple(old[eid]):
                total += 1
        return total
    if kind == "backup_cost":
        return sum(d.room_by_id[(backups or {})[e.id]].cost for e in d.events)
    if kind == "weighted_end":
        w = as_model(tp, WeightedEnd).weights
        values, total = d.slot_values, 0
        for eid, duration in d.spans:
            total += w[eid] * (values[plan[eid][0]] + duration)
        return total
    if kind == "room_cost":
        costs, total = d.room_costs, 0
        for eid, _ in d.spans:
            total += costs[plan[eid][1]]
        return total
    if kind == "slot_penalty":
        pen = as_model(tp, SlotPenalty).penalty
        ids, total = d.slot_ids, 0
        for eid, duration in d.spans:
            start = plan[eid][0]
            for t in range(start, start + duration):
                total += pen.get(ids[t], 0)
        return total
    if kind == "same_day_pairs":
        total = 0
        for pid in as_model(tp, SameDayPairs).people:
            for n in _count_days(d, plan, d.spans_of(pid)):
                if n > 1:
                    total += n - 1
        return total
    if kind in OBJECTIVE_VALUES:  # add-on objective kinds (e.g. checkers/scheduling/calendar_checks.py)
        return OBJECTIVE_VALUES[kind](d, plan, tp)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def evaluate(
    d: TimetableData,
    rules: list[Rule],
    objective: list[ObjectiveTerm],
    plan: Plan,
    backups: dict[str, str] | None = None,
    typed: TypedParams | None = None,
) -> tuple[dict[str, Verdict], dict[str, int]]:
    """Every rule's verdict and every objective figure of a complete plan (``backups``:
    the answer's backup room per event, which only ``room_backup`` reads; ``typed``: the
    instance's parsed parameters, else each item is parsed here)."""
    typed = typed or TypedParams(RULE_PARAMS, TERM_PARAMS)
    verdicts: dict[str, Verdict] = {}
    for r in rules:
        kind = r.kind
        verdicts[r.id] = (
            backup_verdict(d, plan, backups or {}) if kind == "room_backup" else CHECKS[kind](d, plan, typed.rule(r))
        )
    return verdicts, {t.id: objective_value(d, plan, t, typed.term(t), backups) for t in objective}


class _Evaluation:
    """:func:`evaluate` of one instance's rules and objective, the check of each rule's
    kind and every item's parsed parameters looked up once (the same calls, in the same
    order, with the same arguments); called with a timetable plan and its backups."""

    __slots__ = ("rules", "terms")

    def __init__(self, rules: list[Rule], objective: list[ObjectiveTerm], typed: TypedParams) -> None:
        self.rules = tuple(
            (r.id, None, None) if r.kind == "room_backup" else (r.id, CHECKS[r.kind], typed.rule(r)) for r in rules
        )
        self.terms = tuple((t.id, t, typed.term(t)) for t in objective)

    def __call__(self, d: TimetableData, timetable: TimetablePlan) -> tuple[dict[str, Verdict], dict[str, int]]:
        plan, backups = timetable
        verdicts: dict[str, Verdict] = {}
        for rid, check, p in self.rules:
            verdicts[rid] = backup_verdict(d, plan, backups or {}) if check is None else check(d, plan, p)
        return verdicts, {tid: objective_value(d, plan, t, p, backups) for tid, t, p in self.terms}


def verification_figures(d: TimetableData, plan: Plan) -> dict[str, dict[str, int]]:
    busy = dict(d.busy_by_person)
    held: dict[str, int] = {}
    for eid, _ in d.spans:
        room = plan[eid][1]
        held[room] = held.get(room, 0) + 1
    rooms = {r: held.get(r, 0) for r in d.room_ids}
    return {"busy": busy, "rooms": rooms}


# -- grading one answer --------------------------------------------------------------
def _needs_backups(instance: Instance) -> bool:
    return any(r.kind == "room_backup" for r in instance.rules)


def format_text(task: str) -> str:
    """What a complete plan of this task type is, in the words of the format item (what
    :func:`read_plan` accepts)."""
    word = _EVENT_WORDS.get(task, "event")
    return (
        f"a schedule naming every {word} exactly once, each with a listed start slot from which it fits in its day, "
        f"a listed room (and a backup room where the rules ask for one)"
    )


_EVENT_WORDS = {"meeting_planning": "meeting", "course_timetabling": "lecture", "exam_scheduling": "exam"}
_EVENT_WORDS |= {"study_planning": "study session", "fitness_planning": "training session"}
_EVENT_WORDS |= {"email_scheduling": "message"}
_EVENT_WORDS |= {
    "schedule_planning": "activity",
    "team_building_event_planning": "session",
    "content_scheduling": "task",
}
TimetablePlan = tuple[Plan, "dict[str, str] | None"]  # a plan and its backup rooms (robustness rules)


class TimetableChecker(TaskChecker):
    """The grading side of every timetabling task (they share rule kinds and plans); a
    plan is (start and room per event, backup room per event or None)."""

    family = "scheduling"
    plan_key = "schedule"
    data_type = TimetableData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, data: TimetableData) -> Lookups:
        return Lookups(data)

    def read_section(
        self, instance: Instance, data: TimetableData, section: dict[str, Any], lk: Lookups, rules: list[Rule]
    ) -> tuple[TimetablePlan | None, str]:
        backups: dict[str, str] | None = {} if _needs_backups(instance) else None
        plan, why = read_plan(data, section, lk, backups)
        return (None if plan is None else (plan, backups)), why

    def norm(self, text: str) -> str:
        return _norm(text)

    def evaluate(
        self,
        data: TimetableData,
        rules: list[Rule],
        objective: list[ObjectiveTerm],
        plan: TimetablePlan,
        typed: TypedParams | None = None,
    ) -> tuple[dict[str, Verdict], dict[str, int]]:
        return evaluate(data, rules, objective, plan[0], plan[1], typed)

    def evaluator(self, rules: list[Rule], objective: list[ObjectiveTerm], typed: TypedParams) -> Evaluator:
        """:func:`evaluate` with each rule's check and each item's parameters looked up once."""
        if type(self).evaluate is not TimetableChecker.evaluate:
            return super().evaluator(rules, objective, typed)
        return _Evaluation(rules, objective, typed)

    def verification(self, data: TimetableData, plan: TimetablePlan) -> dict[str, dict[str, int]]:
        return verification_figures(data, plan[0])

    def existing(self, data: TimetableData, plan: TimetablePlan) -> dict[str, list[str]]:
        return {eid: [data.slots[s].id, room] for eid, (s, room) in plan[0].items()}

    # -- the answer contract -----------------------------------------------------------
    def plan_schema(self, data: TimetableData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        rooms = [r.id for r in data.rooms]
        row_props: dict[str, Any] = {
            "event": {"enum": [e.id for e in data.events]},
            "start": {"enum": [s.id for s in data.slots], "description": "start slot"},
            "room": {"enum": rooms},
        }
        if "robustness_design" in mechanisms:
            row_props["backup"] = {"enum": rooms, "description": "backup room if the event's room fails"}
        row = {"type": "object", "properties": row_props, "required": list(row_props)}
        return {"type": "array", "items": row, "description": "every event exactly once"}

    def verification_schema(self, data: TimetableData) -> dict[str, Any]:
        return figures_schema({
            "busy": ([p.id for p in data.people], "for each person, the number of slots they spend in events"),
            "rooms": ([r.id for r in data.rooms], "for each room, the number of events held in it"),
        })  # fmt: skip


TIMETABLE = TimetableChecker()


def check_answer(instance: Instance, answer: Any) -> dict[str, Verdict]:
    """Verdict per checklist item id for a parsed answer (None when nothing parsed)."""
    return generic_check_answer(TIMETABLE, instance, answer)


def answer_schema(
    task: str,
    data_dict: dict[str, Any],
    objective: list[ObjectiveTerm],
    mechanisms: list[str] | None = None,
    recovery: Recovery | None = None,
    rules: list[Rule] | None = None,
) -> dict[str, Any]:
    """The answer schema of a timetable instance (every timetabling task shares its form)."""
    return generic_answer_schema(
        TIMETABLE, TimetableData.model_validate(data_dict), objective, mechanisms, recovery, rules
    )


def baseline_answer(instance: Instance) -> str:
    """A greedy planner: first slot and room that keep the basic rules, in listed order.

    It ignores medium rules and the objective, so it is valid JSON and often wrong --
    realistic failures for exercising the pipeline offline.
    """
    import json

    d = TimetableData.model_validate(instance.data)
    kinds = {r.kind: r for r in instance.rules}
    blocked = (
        set(as_model(parse(RULE_PARAMS, kinds["blocked_slots"]), BlockedSlots).slots)
        if "blocked_slots" in kinds
        else set()
    )
    plan: Plan = {}
    for e in d.events:
        choice = None
        for s in d.starts(e):
            for r in d.rooms:
                trial = {**plan, e.id: (s, r.id)}
                sub = TimetableData.model_validate(
                    {
                        **d.model_dump(mode="json"),
                        "events": [x.model_dump(mode="json") for x in d.events if x.id in trial],
                    }
                )
                basic = ("availability", "room_fit", "person_no_overlap", "room_no_overlap")
                if all(CHECKS[k](sub, trial, NoParams())[0] for k in basic if k in kinds) and not any(
                    d.slots[t].id in blocked for t in range(s, s + e.duration)
                ):
                    choice = (s, r.id)
                    break
            if choice:
                break
        plan[e.id] = choice or (d.starts(e)[0], d.rooms[0].id)
    backups = None
    if _needs_backups(instance):  # first other room that fits, ignoring clashes after a failure
        backups = {
            e.id: next((r.id for r in d.rooms if r.id != plan[e.id][1] and fits_room(e, r)), d.rooms[0].id)
            for e in d.events
        }
    _, values = evaluate(d, [], instance.objective, plan, backups, TIMETABLE.typed(instance))
    schedule = [{"event": e.id, "start": d.slots[plan[e.id][0]].id, "room": plan[e.id][1]} for e in d.events]
    if backups is not None:
        for row in schedule:
            row["backup"] = backups[row["event"]]
    return json.dumps({"feasible": True, "schedule": schedule, "objective": values})


def fits_room(e: Event, room: Any) -> bool:
    return room.seats >= e.size and set(e.needs) <= set(room.features)
