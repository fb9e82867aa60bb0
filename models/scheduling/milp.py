"""MILP formulation (PuLP) of the timetable model every scheduling task type shares.

The second back-end, a time-indexed ILP: one binary x[e,s,r] per (event, start slot,
room), exactly one per event, as in the CP-SAT model (:mod:`timetable_model`), and every
rule kind written again as linear rows, constraint by constraint, in a fixed order (the
draft's rule order, then lists of the data, never sets). Where CP-SAT posts a sum of
start indices (precedence-like kinds), the rows here are the aggregated time-indexed
form (b started by t implies a started by t - duration), which has the same integer
solutions and a much tighter relaxation. Auxiliary variables of the stateful kinds are
defined only while their rule is on, so leaving a rule out (explainability) leaves out
everything it added. The objective is lexicographic, solved stage by stage with a zero
gap, each stage proven optimal (:mod:`pbsolve.milp_kit`). Tests and the generation
benchmark hold its optimum against CP-SAT's on the same instances; the certifier itself
stays CP-SAT.

Every rule kind and objective kind of the three task types has rows here, the hard
tier's too (disruptions, backup rooms, scenarios; uncertain inputs are data at their
worst case). A kind without rows raises :class:`NoMilpForm` rather than being dropped.

Importing this module needs PuLP (the ``milp`` extra); nothing else in the family does.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pulp

from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, TimetableData
from pbsolve.family import Draft
from pbsolve.milp_kit import Builder, Formulation, MilpResult, solve
from pbsolve.params import NoParams, as_model, parse
from pbsolve.schema import ObjectiveTerm, Rule

TASKS = ("meeting_planning", "course_timetabling", "exam_scheduling")


class NoMilpForm(ValueError):
    """A rule or objective kind this formulation has no linear rows for: the instance is
    excluded from the cross-check, loudly."""


class Timetable:
    """The variables and the linear expressions the rows are written in."""

    def __init__(self, b: Builder, data: TimetableData, with_backups: bool) -> None:
        self.b, self.data = b, data
        self.x: dict[tuple[str, int, str], pulp.LpVariable] = {}
        self.backup: dict[tuple[str, str], pulp.LpVariable] = {}  # only with a room_backup rule
        self.starts = {e.id: data.starts(e) for e in data.events}
        self.n = len(data.slots)
        for e in data.events:
            cell = []
            for s in self.starts[e.id]:
                for r in data.rooms:
                    self.x[e.id, s, r.id] = v = b.var(0, 1, binary=True)
                    cell.append(v)
            b.add(pulp.lpSum(cell) == 1)
            if with_backups:
                row = [b.var(0, 1, binary=True) for _ in data.rooms]
                self.backup.update({(e.id, r.id): v for r, v in zip(data.rooms, row)})
                b.add(pulp.lpSum(row) == 1)

    # -- expressions ---------------------------------------------------------------------
    def at(self, e: Event, s: int) -> list[pulp.LpVariable]:
        """The variables whose sum is 1 iff e starts at slot s (in any room)."""
        return [self.x[e.id, s, r.id] for r in self.data.rooms]

    def covers(self, e: Event, s: int, t: int) -> bool:
        return s <= t < s + e.duration

    def occupies(self, e: Event, t: int) -> list[pulp.LpVariable]:
        """Sums to 1 iff e occupies slot t."""
        return [v for s in self.starts[e.id] if self.covers(e, s, t) for v in self.at(e, s)]

    def started_by(self, e: Event, t: int) -> list[pulp.LpVariable]:
        """Sums to 1 iff e starts at slot t or earlier."""
        return [v for s in self.starts[e.id] if s <= t for v in self.at(e, s)]

    def on_day(self, e: Event, day: int) -> list[pulp.LpVariable]:
        return [v for s in self.starts[e.id] if self.data.slots[s].day == day for v in self.at(e, s)]

    def in_room(self, e: Event, room: str) -> list[pulp.LpVariable]:
        return [self.x[e.id, s, room] for s in self.starts[e.id]]

    def events_of(self, person: str) -> list[Event]:
        return [e for e in self.data.events if person in e.people]

    def days(self) -> range:
        return range(len(self.data.days))

    def slots_of_day(self, day: int) -> list[int]:
        return [i for i, s in enumerate(self.data.slots) if s.day == day]

    # -- row shapes ----------------------------------------------------------------------
    def forbid(self, cells: list[pulp.LpVariable]) -> None:
        """sum(cells) == 0."""
        if cells:
            self.b.add(pulp.lpSum(cells) == 0)

    def at_most(self, cells: list[pulp.LpVariable], k: int) -> None:
        """sum(cells) <= k (no row for an empty sum: 0 <= k holds, as k >= 0)."""
        if cells:
            self.b.add(pulp.lpSum(cells) <= k)

    def ends_before(self, a: Event, b: Event) -> None:
        """start(a) + duration(a) <= start(b), time-indexed: for every slot t, b started
        by t implies a started by t - duration(a)."""
        for t in range(self.n):
            later = self.started_by(b, t)
            if later:
                self.b.add(pulp.lpSum(later) <= pulp.lpSum(self.started_by(a, t - a.duration)))

    def starts_no_later(self, a: Event, b: Event) -> None:
        """start(a) <= start(b): for every slot t, b started by t implies a started by t."""
        for t in range(self.n):
            later = self.started_by(b, t)
            if later:
                self.b.add(pulp.lpSum(later) <= pulp.lpSum(self.started_by(a, t)))

    def lower_bound_of(self, cells: list[pulp.LpVariable], binary: bool = False) -> pulp.LpVariable:
        """A variable in [0, 1] at least every one of ``cells`` (binary when asked)."""
        y = self.b.var(0, 1, binary=binary, continuous=not binary)
        for v in cells:
            self.b.add(y >= v)
        return y

    def indicator(self, groups: list[list[pulp.LpVariable]]) -> pulp.LpVariable:
        """A variable equal to 1 iff one of the 0/1 sums ``groups`` is 1 (0 when none):
        at least each, at most their total. Integral whenever x is."""
        y = self.b.var(0, 1, continuous=True)
        for g in groups:
            self.b.add(y >= pulp.lpSum(g))
        self.b.add(y <= pulp.lpSum([v for g in groups for v in g]))
        return y


Rows = Callable[[Timetable, Any], None]  # (model, the rule's Params model)
ROWS: dict[str, Rows] = {}


def rows(kind: str) -> Callable[[Rows], Rows]:
    def register(fn: Rows) -> Rows:
        ROWS[kind] = fn
        return fn

    return register


# == base, sampled and hard-tier rule kinds ============================================
@rows("availability")
def _availability(tm: Timetable, p: NoParams) -> None:
    """No start whose slots meet a slot one of the event's people cannot attend."""
    idx = tm.data.slot_index
    for e in tm.data.events:
        busy = {idx[sid] for person in e.people for sid in tm.data.person_by_id[person].unavailable}
        for s in tm.starts[e.id]:
            if any(tm.covers(e, s, t) for t in busy):
                tm.forbid(tm.at(e, s))


@rows("room_fit")
def _room_fit(tm: Timetable, p: NoParams) -> None:
    """x[e,s,r] == 0 for every room short of seats or of a needed feature."""
    for e in tm.data.events:
        for r in tm.data.rooms:
            if r.seats < e.size or not set(e.needs) <= set(r.features):
                tm.forbid(tm.in_room(e, r.id))


@rows("person_no_overlap")
def _person_no_overlap(tm: Timetable, p: NoParams) -> None:
    """Per person with two events or more, per slot: at most one of them occupies it."""
    for person in tm.data.people:
        mine = tm.events_of(person.id)
        if len(mine) < 2:
            continue
        for t in range(tm.n):
            tm.at_most([v for e in mine for v in tm.occupies(e, t)], 1)


@rows("room_no_overlap")
def _room_no_overlap(tm: Timetable, p: NoParams) -> None:
    """Per room and slot: at most one placement covering the slot in that room."""
    for r in tm.data.rooms:
        for t in range(tm.n):
            using = [tm.x[e.id, s, r.id] for e in tm.data.events for s in tm.starts[e.id] if tm.covers(e, s, t)]
            if len(using) > 1:
                tm.at_most(using, 1)


@rows("series_order")
def _series_order(tm: Timetable, p: NoParams) -> None:
    for members in tm.data.series_members().values():
        for a, b in itertools.pairwise(members):
            tm.ends_before(a, b)


@rows("window")
def _window(tm: Timetable, p: rp.Window) -> None:
    e = tm.data.event_by_id[p.event]
    lo, hi = tm.data.slot_index[p.from_], tm.data.slot_index[p.to]
    for s in tm.starts[e.id]:
        if s < lo or s + e.duration - 1 > hi:
            tm.forbid(tm.at(e, s))


@rows("deadline")
def _deadline(tm: Timetable, p: rp.Deadline) -> None:
    hi = tm.data.slot_index[p.to]
    for eid in p.events:
        e = tm.data.event_by_id[eid]
        for s in tm.starts[e.id]:
            if s + e.duration - 1 > hi:
                tm.forbid(tm.at(e, s))


@rows("blocked_slots")
def _blocked_slots(tm: Timetable, p: rp.BlockedSlots) -> None:
    blocked = [tm.data.slot_index[sid] for sid in p.slots]
    for e in tm.data.events:
        for s in tm.starts[e.id]:
            if any(tm.covers(e, s, t) for t in blocked):
                tm.forbid(tm.at(e, s))


@rows("daily_limit")
def _daily_limit(tm: Timetable, p: rp.DailyLimit) -> None:
    for pid in p.people:
        mine = tm.events_of(pid)
        if len(mine) <= p.max:
            continue
        for d in tm.days():
            tm.at_most([v for e in mine for v in tm.on_day(e, d)], p.max)


@rows("day_cap")
def _day_cap(tm: Timetable, p: rp.DayCap) -> None:
    for d in tm.days():
        tm.at_most([v for e in tm.data.events for v in tm.on_day(e, d)], p.max)


@rows("precedence")
def _precedence(tm: Timetable, p: rp.Precedence) -> None:
    tm.ends_before(tm.data.event_by_id[p.before], tm.data.event_by_id[p.after])


@rows("priority_order")
def _priority_order(tm: Timetable, p: rp.PriorityOrder) -> None:
    chain = [tm.data.event_by_id[eid] for eid in p.events]
    for a, b in itertools.pairwise(chain):
        tm.starts_no_later(a, b)


@rows("person_buffer")
def _person_buffer(tm: Timetable, p: rp.PersonBuffer) -> None:
    """Two of the person's events on one day leave ``gap`` free slots between them iff
    their spans stretched by ``gap`` slots (allowed past the day's end) do not overlap:
    per day and per stretched slot, at most one stretched span covers it (a clique row
    instead of CP-SAT's pairs of starts)."""
    mine = tm.events_of(p.person)
    if len(mine) < 2:
        return
    for d in tm.days():
        stretched: dict[int, list[tuple[str, pulp.LpVariable]]] = {}
        for e in mine:
            for s in tm.starts[e.id]:
                if tm.data.slots[s].day != d:
                    continue
                for tau in range(s, s + e.duration + p.gap):
                    stretched.setdefault(tau, []).extend((e.id, v) for v in tm.at(e, s))
        for tau in sorted(stretched):
            cells = stretched[tau]
            if len({eid for eid, _ in cells}) > 1:
                tm.at_most([v for _, v in cells], 1)


@rows("max_consecutive")
def _max_consecutive(tm: Timetable, p: rp.MaxConsecutive) -> None:
    """busy[t] >= every event's occupancy of t; any max+1 consecutive slots of one day
    hold at most max busy ones."""
    k, mine = p.max, tm.events_of(p.person)
    busy = [tm.b.var(0, 1, continuous=True) for _ in range(tm.n)]
    for t in range(tm.n):
        for e in mine:
            tm.b.add(busy[t] >= pulp.lpSum(tm.occupies(e, t)))
    for d in tm.days():
        day = tm.slots_of_day(d)
        for i in range(len(day) - k):
            tm.at_most([busy[t] for t in day[i : i + k + 1]], k)


@rows("different_days")
def _different_days(tm: Timetable, p: rp.DifferentDays) -> None:
    group = [tm.data.event_by_id[eid] for eid in p.events]
    for d in tm.days():
        tm.at_most([v for e in group for v in tm.on_day(e, d)], 1)


@rows("same_room")
def _same_room(tm: Timetable, p: rp.SameRoom) -> None:
    group = [tm.data.event_by_id[eid] for eid in p.events]
    for a, b in itertools.pairwise(group):
        for r in tm.data.rooms:
            tm.b.add(pulp.lpSum(tm.in_room(a, r.id)) == pulp.lpSum(tm.in_room(b, r.id)))


@rows("person_absent")
def _person_absent(tm: Timetable, p: rp.PersonAbsent) -> None:
    gone = [tm.data.slot_index[sid] for sid in p.slots]
    for e in tm.events_of(p.person):
        for s in tm.starts[e.id]:
            if any(tm.covers(e, s, t) for t in gone):
                tm.forbid(tm.at(e, s))


@rows("room_closed")
def _room_closed(tm: Timetable, p: rp.RoomClosed) -> None:
    gone = [tm.data.slot_index[sid] for sid in p.slots]
    for e in tm.data.events:
        for s in tm.starts[e.id]:
            if any(tm.covers(e, s, t) for t in gone):
                tm.forbid([tm.x[e.id, s, p.room]])


@rows("room_backup")
def _room_backup(tm: Timetable, p: NoParams) -> None:
    """A fitting backup room other than the event's own; under the failure of any room f,
    moved[e,s,f,r] >= x[e,s,f] + b[e,r] - 1 (e starts at s in f and backs up to r), and
    room r at slot t holds at most one of its own placements and those moved in."""
    d = tm.data
    for e in d.events:
        for r in d.rooms:
            bv = tm.backup[e.id, r.id]
            if r.seats < e.size or not set(e.needs) <= set(r.features):
                tm.forbid([bv])
            tm.at_most([*tm.in_room(e, r.id), bv], 1)
    moved: dict[tuple[str, int, str, str], pulp.LpVariable] = {}
    for e in d.events:
        for s in tm.starts[e.id]:
            for f in d.rooms:
                for r in d.rooms:
                    if r.id != f.id:
                        moved[e.id, s, f.id, r.id] = u = tm.b.var(0, 1, continuous=True)
                        tm.b.add(u >= tm.x[e.id, s, f.id] + tm.backup[e.id, r.id] - 1)
    for f in d.rooms:
        for r in d.rooms:
            if r.id == f.id:
                continue
            for t in range(tm.n):
                covering = [(e, s) for e in d.events for s in tm.starts[e.id] if tm.covers(e, s, t)]
                here = [tm.x[e.id, s, r.id] for e, s in covering] + [moved[e.id, s, f.id, r.id] for e, s in covering]
                if len(here) > 1:
                    tm.at_most(here, 1)


# == stateful kinds =====================================================================
def _same_day_after(data: TimetableData, t: int, k: int) -> list[int]:
    """The (up to) k slots that follow slot t on its own day."""
    return [u for u in range(t + 1, min(t + k + 1, len(data.slots))) if data.slots[u].day == data.slots[t].day]


@rows("room_cooldown")
def _room_cooldown(tm: Timetable, p: rp.RoomCooldown) -> None:
    """ends[t] >= each placement in the room ending at t, uses[u] >= each one covering
    u; ends[t] + uses[u] <= 1 for the ``gap`` same-day slots u after t (the pairs of
    CP-SAT's encoding, through one variable per slot on each side)."""
    room, gap = p.room, p.gap
    ending: list[list[pulp.LpVariable]] = [[] for _ in range(tm.n)]
    using: list[list[pulp.LpVariable]] = [[] for _ in range(tm.n)]
    for e in tm.data.events:
        for s in tm.starts[e.id]:
            v = tm.x[e.id, s, room]
            ending[s + e.duration - 1].append(v)
            for t in range(s, s + e.duration):
                using[t].append(v)
    ends = [tm.lower_bound_of(cells) if cells else None for cells in ending]
    uses = [tm.lower_bound_of(cells) if cells else None for cells in using]
    for t in range(tm.n):
        for u in _same_day_after(tm.data, t, gap):
            end, use = ends[t], uses[u]
            if end is not None and use is not None:
                tm.at_most([end, use], 1)


@rows("fatigue_protocol")
def _fatigue_protocol(tm: Timetable, p: rp.FatigueProtocol) -> None:
    """busy[t] = [the person is in an event at t]; at the i-th slot t of a day,
    on = [busy slots before t that day >= threshold] by two rows (count >= h*on,
    count <= h-1 + (i-h+1)*on); then start at t + on + busy[u] <= 2 for the ``rest``
    slots u before t (clipped to the day)."""
    person, h, g = p.person, p.threshold, p.rest
    mine = tm.events_of(person)
    busy = [tm.indicator([tm.occupies(e, t) for e in mine]) for t in range(tm.n)]
    for d in tm.days():
        day = tm.slots_of_day(d)
        for i, t in enumerate(day):
            starting = [tm.at(e, t) for e in mine if t in tm.starts[e.id]]
            if i < h or not starting:
                continue  # fewer than h earlier slots: the protocol cannot be on yet
            count = pulp.lpSum([busy[u] for u in day[:i]])
            on = tm.b.var(0, 1, binary=True)
            tm.b.add(count >= h * on)
            tm.b.add(count <= h - 1 + (i - h + 1) * on)
            for st in starting:
                for u in day[max(0, i - g) : i]:
                    tm.at_most([*st, on, busy[u]], 2)


@rows("battery_level")
def _battery_level(tm: Timetable, p: rp.BatteryLevel) -> None:
    """Per day from ``start``: level[t] <= level[t-1] - use while a user runs (on[t] = 1),
    else <= min(level[t-1] + recharge, capacity), each side by a big-M row; level[t] >= 0.
    Both updates are non-decreasing in the previous level, so levels bounded above by the
    recurrence can stay >= 0 exactly when the recurrence's own levels do; on[t] is binary
    and at least every user's occupancy (on when idle only lowers the levels)."""
    cap, start, use, gain = p.capacity, p.start, p.use, p.recharge
    users = [e for e in tm.data.events if p.feature in e.needs]
    top = max(cap, start)
    for d in tm.days():
        prev: Any = start
        for t in tm.slots_of_day(d):
            on = tm.lower_bound_of([v for e in users for v in tm.occupies(e, t)], binary=True)
            level = tm.b.var(-use * tm.n, top, continuous=True)
            tm.b.add(level <= prev - use + (top + use) * (1 - on))  # draining
            tm.b.add(level <= prev + gain)  # recharging (implied while draining)
            tm.b.add(level <= cap + (top - cap) * on)  # the cap applies while idle
            tm.b.add(level >= 0)  # the rule
            prev = level


# == objective terms ====================================================================
TERM_KINDS = ("weighted_end", "room_cost", "delivery_cost", "slot_penalty", "same_day_pairs", "changes", "backup_cost")


def _term(tm: Timetable, term: ObjectiveTerm) -> Any:
    kind = term.kind
    if kind not in TERM_KINDS:
        raise NoMilpForm(f"no MILP expression for objective kind {kind!r}")
    d, tp = tm.data, parse(rp.TERM_PARAMS, term)
    if kind == "weighted_end":
        w = as_model(tp, rp.WeightedEnd).weights
        return pulp.lpSum([
            w[e.id] * (d.slots[s].value + e.duration) * v
            for e in d.events
            for s in tm.starts[e.id]
            for v in tm.at(e, s)
        ])  # fmt: skip
    if kind == "room_cost":
        return pulp.lpSum([d.room_by_id[r].cost * v for (_, _, r), v in tm.x.items()])
    if kind == "delivery_cost":  # the room's cost per seat x the event's size
        return pulp.lpSum([d.room_by_id[r].cost * d.event_by_id[eid].size * v for (eid, _, r), v in tm.x.items()])
    if kind == "slot_penalty":
        pen = {d.slot_index[k]: v for k, v in as_model(tp, rp.SlotPenalty).penalty.items()}
        return pulp.lpSum([
            sum(pen.get(t, 0) for t in range(s, s + e.duration)) * v
            for e in d.events
            for s in tm.starts[e.id]
            for v in tm.at(e, s)
        ])  # fmt: skip
    if kind == "same_day_pairs":
        # extra[p,day] >= (the person's events that day) - 1, >= 0: exact at its own
        # stage (minimised), and pinned from above afterwards
        parts = []
        for pid in as_model(tp, rp.SameDayPairs).people:
            mine = tm.events_of(pid)
            for day in tm.days():
                z = tm.b.var(0, len(mine), continuous=True)
                tm.b.add(z >= pulp.lpSum([v for e in mine for v in tm.on_day(e, day)]) - 1)
                parts.append(z)
        return pulp.lpSum(parts)
    if kind == "changes":
        old = as_model(tp, rp.CurrentSchedule).existing
        expr = pulp.LpAffineExpression()
        for e in d.events:
            start, room = old[e.id]
            keep = tm.x.get((e.id, d.slot_index[start], room))
            expr += 1 - keep if keep is not None else 1
        return expr
    # the last of TERM_KINDS: backup_cost
    return pulp.lpSum([d.room_by_id[r].cost * v for (_, r), v in tm.backup.items()])


def _timetable(draft: Draft, without: str | None) -> Formulation:
    data = TimetableData.model_validate(draft.data)
    check_rule_kinds(draft.rules)
    b = Builder("timetable")
    # backup variables exist whenever the draft has the rule (as in CP-SAT), even with it left out
    tm = Timetable(b, data, with_backups=any(r.kind == "room_backup" for r in draft.rules))
    for r in draft.rules:
        if r.id != without:
            ROWS[r.kind](tm, parse(rp.RULE_PARAMS, r))
    terms = [(t.id, _term(tm, t)) for t in draft.objective]

    def decode() -> dict[str, Any]:
        schedule = []
        for e in data.events:
            s, room = next((s, r) for (eid, s, r), v in tm.x.items() if eid == e.id and (v.value() or 0) > 0.5)
            row = {"event": e.id, "start": data.slots[s].id, "room": room}
            if tm.backup:
                row["backup"] = next(r.id for r in data.rooms if (tm.backup[e.id, r.id].value() or 0) > 0.5)
            schedule.append(row)
        return {"schedule": schedule}

    return b, terms, decode


def check_rule_kinds(rules: list[Rule]) -> None:
    """Raise :class:`NoMilpForm` for a rule kind without rows (before any model is built)."""
    unknown = [r.kind for r in rules if r.kind not in ROWS]
    if unknown:
        raise NoMilpForm(f"no MILP rows for rule kinds {unknown}")


def optimum(
    draft: Draft, without: str | None = None, time_limit: float = 60.0, backend: str | None = None
) -> MilpResult:
    """The lexicographic optimum of a timetable draft by MILP (optionally with one rule
    off); the backend is HiGHS unless ``backend="CBC"`` or HiGHS is missing."""
    return solve(_timetable, draft, without, time_limit, backend)
