"""CP-SAT model of a timetable: one Boolean per (event, start slot, room).

Each numbered rule is posted behind its own enforcement literal, constraint by
constraint, so the certifier can switch rules off to find conflict sets. Every
structure is built in a fixed order (lists, never sets) so models are reproducible.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from ortools.sat.python import cp_model

from pbsolve import kit
from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, TimetableData
from pbsolve.family import Draft, SolverModel
from pbsolve.kit import KindRegistry
from pbsolve.params import NoParams, as_model, parse
from pbsolve.schema import ObjectiveTerm, Rule


class TimetableModel:
    """Variables and derived expressions shared by the rule encoders."""

    def __init__(self, data: TimetableData, with_backups: bool = False) -> None:
        self.data = data
        self.m = cp_model.CpModel()
        self.x: dict[tuple[str, int, str], cp_model.IntVar] = {}
        # backup room per event: part of the answer only when a room_backup rule exists
        self.backup: dict[tuple[str, str], cp_model.IntVar] = {}
        self.starts: dict[str, list[int]] = {}
        for e in data.events:
            self.starts[e.id] = data.starts(e)
            cell = []
            for s in self.starts[e.id]:
                for r in data.rooms:
                    v = self.m.new_bool_var(f"x[{e.id},{s},{r.id}]")
                    self.x[e.id, s, r.id] = v
                    cell.append(v)
            self.m.add_exactly_one(cell)
            if with_backups:
                row = [self.m.new_bool_var(f"b[{e.id},{r.id}]") for r in data.rooms]
                self.backup.update({(e.id, r.id): v for r, v in zip(data.rooms, row)})
                self.m.add_exactly_one(row)

    # -- derived expressions -------------------------------------------------------
    def at(self, e: Event, s: int) -> cp_model.LinearExpr | int:
        """1 iff event e starts at slot s (in any room)."""
        return sum(self.x[e.id, s, r.id] for r in self.data.rooms)

    def covers(self, e: Event, s: int, t: int) -> bool:
        return s <= t < s + e.duration

    def occupies(self, e: Event, t: int) -> cp_model.LinearExprT:
        """1 iff event e occupies slot t."""
        return sum(self.at(e, s) for s in self.starts[e.id] if self.covers(e, s, t))

    def start_index(self, e: Event) -> cp_model.LinearExprT:
        return sum(s * self.at(e, s) for s in self.starts[e.id])

    def on_day(self, e: Event, day: int) -> cp_model.LinearExprT:
        return sum(self.at(e, s) for s in self.starts[e.id] if self.data.slots[s].day == day)

    def events_of(self, person: str) -> list[Event]:
        return [e for e in self.data.events if person in e.people]

    def days(self) -> range:
        return range(len(self.data.days))

    def slots_of_day(self, day: int) -> list[int]:
        return [i for i, s in enumerate(self.data.slots) if s.day == day]


def post(tm: TimetableModel, ct: Any, lit: cp_model.IntVar) -> None:
    """Add ``ct`` enforced by ``lit`` (see :func:`pbsolve.kit.post`)."""
    kit.post(tm.m, ct, lit)


Encoder = Callable[[TimetableModel, Any, cp_model.IntVar], None]  # (model, the rule's Params model, literal)
# every timetable task shares one encoder per rule kind (base, sampled, hard, stateful)
ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register
# add-on objective kinds: (model, the term's Params model) -> (expression, upper bound)
OBJECTIVES: dict[str, Callable[[TimetableModel, Any], tuple[cp_model.LinearExprT, int]]] = {}


@encoder("availability")
def _availability(tm: TimetableModel, params: NoParams, lit: cp_model.IntVar) -> None:
    idx = tm.data.slot_index
    for e in tm.data.events:
        busy = {idx[sid] for p in e.people for sid in tm.data.person_by_id[p].unavailable}
        for s in tm.starts[e.id]:
            if any(tm.covers(e, s, t) for t in busy):
                post(tm, tm.at(e, s) == 0, lit)


@encoder("room_fit")
def _room_fit(tm: TimetableModel, params: NoParams, lit: cp_model.IntVar) -> None:
    for e in tm.data.events:
        for r in tm.data.rooms:
            if r.seats < e.size or not set(e.needs) <= set(r.features):
                for s in tm.starts[e.id]:
                    post(tm, tm.x[e.id, s, r.id] == 0, lit)


@encoder("person_no_overlap")
def _person_no_overlap(tm: TimetableModel, params: NoParams, lit: cp_model.IntVar) -> None:
    for p in tm.data.people:
        mine = tm.events_of(p.id)
        if len(mine) < 2:
            continue
        for t in range(len(tm.data.slots)):
            post(tm, sum(tm.occupies(e, t) for e in mine) <= 1, lit)


@encoder("room_no_overlap")
def _room_no_overlap(tm: TimetableModel, params: NoParams, lit: cp_model.IntVar) -> None:
    for r in tm.data.rooms:
        for t in range(len(tm.data.slots)):
            using = [tm.x[e.id, s, r.id] for e in tm.data.events for s in tm.starts[e.id] if tm.covers(e, s, t)]
            if len(using) > 1:
                post(tm, sum(using) <= 1, lit)


@encoder("series_order")
def _series_order(tm: TimetableModel, params: NoParams, lit: cp_model.IntVar) -> None:
    for members in tm.data.series_members().values():
        for a, b in itertools.pairwise(members):
            post(tm, tm.start_index(a) + a.duration <= tm.start_index(b), lit)


@encoder("window")
def _window(tm: TimetableModel, params: rp.Window, lit: cp_model.IntVar) -> None:
    e = tm.data.event_by_id[params.event]
    lo, hi = tm.data.slot_index[params.from_], tm.data.slot_index[params.to]
    for s in tm.starts[e.id]:
        if s < lo or s + e.duration - 1 > hi:
            post(tm, tm.at(e, s) == 0, lit)


@encoder("deadline")
def _deadline(tm: TimetableModel, params: rp.Deadline, lit: cp_model.IntVar) -> None:
    hi = tm.data.slot_index[params.to]
    for eid in params.events:
        e = tm.data.event_by_id[eid]
        for s in tm.starts[e.id]:
            if s + e.duration - 1 > hi:
                post(tm, tm.at(e, s) == 0, lit)


@encoder("blocked_slots")
def _blocked_slots(tm: TimetableModel, params: rp.BlockedSlots, lit: cp_model.IntVar) -> None:
    blocked = [tm.data.slot_index[sid] for sid in params.slots]
    for e in tm.data.events:
        for s in tm.starts[e.id]:
            if any(tm.covers(e, s, t) for t in blocked):
                post(tm, tm.at(e, s) == 0, lit)


@encoder("daily_limit")
def _daily_limit(tm: TimetableModel, params: rp.DailyLimit, lit: cp_model.IntVar) -> None:
    for pid in params.people:
        mine = tm.events_of(pid)
        if len(mine) <= params.max:
            continue
        for d in tm.days():
            post(tm, sum(tm.on_day(e, d) for e in mine) <= params.max, lit)


@encoder("day_cap")
def _day_cap(tm: TimetableModel, params: rp.DayCap, lit: cp_model.IntVar) -> None:
    for d in tm.days():
        post(tm, sum(tm.on_day(e, d) for e in tm.data.events) <= params.max, lit)


@encoder("precedence")
def _precedence(tm: TimetableModel, params: rp.Precedence, lit: cp_model.IntVar) -> None:
    a, b = tm.data.event_by_id[params.before], tm.data.event_by_id[params.after]
    post(tm, tm.start_index(a) + a.duration <= tm.start_index(b), lit)


@encoder("priority_order")
def _priority_order(tm: TimetableModel, params: rp.PriorityOrder, lit: cp_model.IntVar) -> None:
    chain = [tm.data.event_by_id[eid] for eid in params.events]
    for a, b in itertools.pairwise(chain):
        post(tm, tm.start_index(a) <= tm.start_index(b), lit)


@encoder("person_buffer")
def _person_buffer(tm: TimetableModel, params: rp.PersonBuffer, lit: cp_model.IntVar) -> None:
    gap = params.gap
    mine = tm.events_of(params.person)
    day = [s.day for s in tm.data.slots]
    for i, a in enumerate(mine):
        for b in mine[i + 1 :]:
            for sa in tm.starts[a.id]:
                for sb in tm.starts[b.id]:
                    if day[sa] != day[sb]:
                        continue
                    # free slots between the two, negative when they overlap
                    between = sb - (sa + a.duration) if sa <= sb else sa - (sb + b.duration)
                    if between < gap:
                        post(tm, tm.at(a, sa) + tm.at(b, sb) <= 1, lit)


@encoder("max_consecutive")
def _max_consecutive(tm: TimetableModel, params: rp.MaxConsecutive, lit: cp_model.IntVar) -> None:
    k = params.max
    mine = tm.events_of(params.person)
    busy = {}
    for t in range(len(tm.data.slots)):
        b = tm.m.new_bool_var(f"busy[{params.person},{t}]")
        for e in mine:
            tm.m.add(b >= tm.occupies(e, t))
        busy[t] = b
    for d in tm.days():
        day_slots = tm.slots_of_day(d)
        for i in range(len(day_slots) - k):
            window = day_slots[i : i + k + 1]
            post(tm, sum(busy[t] for t in window) <= k, lit)


@encoder("different_days")
def _different_days(tm: TimetableModel, params: rp.DifferentDays, lit: cp_model.IntVar) -> None:
    group = [tm.data.event_by_id[eid] for eid in params.events]
    for d in tm.days():
        post(tm, sum(tm.on_day(e, d) for e in group) <= 1, lit)


@encoder("same_room")
def _same_room(tm: TimetableModel, params: rp.SameRoom, lit: cp_model.IntVar) -> None:
    group = [tm.data.event_by_id[eid] for eid in params.events]
    for a, b in itertools.pairwise(group):
        for r in tm.data.rooms:
            in_a = sum(tm.x[a.id, s, r.id] for s in tm.starts[a.id])
            in_b = sum(tm.x[b.id, s, r.id] for s in tm.starts[b.id])
            post(tm, in_a == in_b, lit)


# -- objective terms -------------------------------------------------------------------
def _objective(tm: TimetableModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d, tp = tm.data, parse(rp.TERM_PARAMS, term)
    if term.kind == "weighted_end":
        w = as_model(tp, rp.WeightedEnd).weights
        expr = sum(w[e.id] * (d.slots[s].value + e.duration) * tm.at(e, s) for e in d.events for s in tm.starts[e.id])
        ub = sum(w[e.id] * max(d.slots[s].value + e.duration for s in tm.starts[e.id]) for e in d.events)
        return expr, ub
    if term.kind == "room_cost":
        expr = sum(d.room_by_id[r].cost * v for (_, _, r), v in tm.x.items())
        return expr, len(d.events) * max(r.cost for r in d.rooms)
    if term.kind == "slot_penalty":
        pen = {d.slot_index[k]: v for k, v in as_model(tp, rp.SlotPenalty).penalty.items()}
        expr = sum(
            sum(pen.get(t, 0) for t in range(s, s + e.duration)) * tm.at(e, s)
            for e in d.events
            for s in tm.starts[e.id]
        )
        ub = sum(max(sum(pen.get(t, 0) for t in range(s, s + e.duration)) for s in tm.starts[e.id]) for e in d.events)
        return expr, ub
    if term.kind == "same_day_pairs":
        parts = []
        for pid in as_model(tp, rp.SameDayPairs).people:
            mine = tm.events_of(pid)
            for day in tm.days():
                z = tm.m.new_int_var(0, len(mine), f"extra[{pid},{day}]")
                tm.m.add_max_equality(z, [sum(tm.on_day(e, day) for e in mine) - 1, 0])
                parts.append(z)
        ub = sum(max(len(tm.events_of(pid)) - 1, 0) for pid in as_model(tp, rp.SameDayPairs).people)
        return sum(parts), ub
    if term.kind == "changes":
        old = as_model(tp, rp.CurrentSchedule).existing
        expr = 0
        for e in d.events:
            start, room = old[e.id]
            s = d.slot_index[start]
            keep = tm.x.get((e.id, s, room))
            expr += 1 - keep if keep is not None else 1
        return expr, len(d.events)
    if term.kind == "backup_cost":
        expr = sum(d.room_by_id[r].cost * v for (_, r), v in tm.backup.items())
        return expr, len(d.events) * max(r.cost for r in d.rooms)
    if term.kind in OBJECTIVES:  # add-on objective kinds (e.g. models/scheduling/calendar_rules.py)
        return OBJECTIVES[term.kind](tm, tp)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = TimetableData.model_validate(draft.data)
    tm = TimetableModel(data, with_backups=any(r.kind == "room_backup" for r in draft.rules))
    rule_literals = kit.encode_rules(tm.m, draft.rules, ENCODERS, tm, rp.RULE_PARAMS)
    terms = []
    for term in draft.objective:
        expr, ub = _objective(tm, term)
        terms.append((term.id, expr, ub))
    answer = list(tm.x.values()) + list(tm.backup.values())

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        schedule = []
        for e in data.events:
            for s in tm.starts[e.id]:
                for r in data.rooms:
                    if solver.value(tm.x[e.id, s, r.id]):
                        row = {"event": e.id, "start": data.slots[s].id, "room": r.id}
                        backups = [
                            b.id
                            for b in data.rooms
                            if (e.id, b.id) in tm.backup and solver.value(tm.backup[e.id, b.id])
                        ]
                        if backups:
                            row["backup"] = backups[0]
                        schedule.append(row)
        return {"schedule": schedule}

    return SolverModel(
        model=tm.m, answer_literals=answer, rule_literals=rule_literals, objective_terms=terms, decode=decode
    )


def check_rule_kinds(rules: list[Rule]) -> None:
    unknown = [r.kind for r in rules if r.kind not in ENCODERS]
    if unknown:
        raise ValueError(f"no solver encoding for rule kinds {unknown}")
