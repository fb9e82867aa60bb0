"""CP-SAT model of a timetable: one Boolean per (event, start slot, room).

Each numbered rule is posted behind its own enforcement literal, constraint by
constraint, so the certifier can switch rules off to find conflict sets. Every
structure is built in a fixed order (lists, never sets) so models are reproducible.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ortools.sat.python import cp_model

from pbsolve import kit
from pbsolve.certify import new_model
from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, TimetableData
from pbsolve.family import Draft, SolverModel
from pbsolve.kit import KindRegistry
from pbsolve.params import NoParams, as_model, parse
from pbsolve.schema import ObjectiveTerm, Rule

_BOOLEAN = cp_model.Domain(0, 1)


class TimetableModel:
    """Variables and derived expressions shared by the rule encoders.

    The derived expressions are flat sums over the x variables, built once per model and
    cached: CP-SAT sorts and merges a constraint's variables, so a flat sum yields the
    same model as the nested one, at a fraction of the Python cost."""

    def __init__(self, data: TimetableData, with_backups: bool = False) -> None:
        self.data = data
        self.m = new_model()
        self.x: dict[tuple[str, int, str], cp_model.IntVar] = {}
        # backup room per event: part of the answer only when a room_backup rule exists
        self.backup: dict[tuple[str, str], cp_model.IntVar] = {}
        self.starts: dict[str, list[int]] = {}
        # the x variables of event e at start s, over the rooms in order
        self._cells: dict[tuple[str, int], list[cp_model.IntVar]] = {}
        self._at: dict[tuple[str, int], cp_model.LinearExpr | int] = {}
        # the variables new_bool_var makes, without a fresh Domain object per variable
        proto = self.m.model_proto
        room_ids = [r.id for r in data.rooms]
        # per duration (the starts depend on nothing else): the starts covering each slot,
        # and the starts on each day, asked by several encoders for every slot or day
        self._covering: dict[int, list[list[int]]] = {}
        self._on_day: dict[int, list[list[int]]] = {}
        self._start_index: dict[str, cp_model.LinearExpr] = {}
        self._room_index: dict[str, cp_model.LinearExpr] = {}
        # proto indices of the x variables per (event, start): variables are numbered in
        # the order they are made, from 0 in a fresh model
        self._cell_indices: dict[tuple[str, int], list[int]] = {}
        # the literal of the model's person_no_overlap rule once encoded, and whether the
        # task type posts room rows that rule implies behind it (see IMPLIED_ROOM_ROWS)
        self.person_rule: cp_model.IntVar | None = None
        self.implied_room_rows = False
        index = len(proto.variables)
        n_rooms = len(room_ids)
        for e in data.events:
            self.starts[e.id] = data.starts(e)
            event_cells = []
            for s in self.starts[e.id]:
                row = []
                for r in room_ids:
                    v = cp_model.IntVar(proto).with_name(f"x[{e.id},{s},{r}]").with_domain(_BOOLEAN)
                    self.x[e.id, s, r] = v
                    row.append(v)
                self._cells[e.id, s] = row
                self._cell_indices[e.id, s] = list(range(index, index + n_rooms))
                index += n_rooms
                event_cells += row
            self.m.add_exactly_one(event_cells)
            if with_backups:
                brow = [self.m.new_bool_var(f"b[{e.id},{r.id}]") for r in data.rooms]
                self.backup.update({(e.id, r.id): v for r, v in zip(data.rooms, brow)})
                self.m.add_exactly_one(brow)
                index += n_rooms

    # -- derived expressions -------------------------------------------------------
    def cell_indices(self) -> dict[tuple[str, int], list[int]]:
        """The proto indices of :meth:`cells`, per (event id, start)."""
        return self._cell_indices

    def cells(self, e: Event, s: int) -> list[cp_model.IntVar]:
        """The x variables of event e at start s, one per room in the rooms' order."""
        return self._cells[e.id, s]

    def at(self, e: Event, s: int) -> cp_model.LinearExpr | int:
        """1 iff event e starts at slot s (in any room)."""
        key = (e.id, s)
        expr = self._at.get(key)
        if expr is None:
            expr = self._at[key] = total(self._cells[key])
        return expr

    def covers(self, e: Event, s: int, t: int) -> bool:
        return s <= t < s + e.duration

    def covering_starts(self, e: Event, t: int) -> list[int]:
        """The starts of e (in order) at which it occupies slot t (cached: callers must not
        change the list)."""
        table = self.covering_table(e)
        return table[t] if 0 <= t < len(table) else []

    def covering_table(self, e: Event) -> list[list[int]]:
        """:meth:`covering_starts` of e for every slot, by slot index (cached per duration:
        callers must not change the lists)."""
        table = self._covering.get(e.duration)
        if table is None:
            table = [[] for _ in self.data.slots]
            for s in self.starts[e.id]:  # in order, so each slot's list is in order too
                for u in range(s, min(s + e.duration, len(table))):
                    table[u].append(s)
            self._covering[e.duration] = table
        return table

    def cells_covering(self, e: Event, slots: Iterable[int]) -> list[cp_model.IntVar]:
        """The x variables of e (in start, then room order) at every start at which e
        occupies one of the given slots."""
        table = self.covering_table(e)
        hit = {s for t in slots if 0 <= t < len(table) for s in table[t]}
        if not hit:
            return []
        return [v for s in self.starts[e.id] if s in hit for v in self._cells[e.id, s]]

    def occupying(self, e: Event, t: int) -> list[cp_model.IntVar]:
        """The x variables of e that occupy slot t."""
        return [v for s in self.covering_starts(e, t) for v in self._cells[e.id, s]]

    def occupies(self, e: Event, t: int) -> cp_model.LinearExprT:
        """1 iff event e occupies slot t."""
        return total(self.occupying(e, t))

    def by_start(
        self, weight: Callable[[Event, int], int], events: Sequence[Event] | None = None
    ) -> cp_model.LinearExpr:
        """sum of weight(e, s) * at(e, s) over the events (all by default) and their starts,
        as one flat weighted sum."""
        xs: list[cp_model.IntVar] = []
        ws: list[int] = []
        for e in self.data.events if events is None else events:
            for s in self.starts[e.id]:
                row = self._cells[e.id, s]
                xs += row
                ws += [weight(e, s)] * len(row)
        return cp_model.LinearExpr.weighted_sum(xs, ws)

    def start_index(self, e: Event) -> cp_model.LinearExprT:
        """The start slot of e (built once per model and event)."""
        expr = self._start_index.get(e.id)
        if expr is None:
            starts = self.starts[e.id]
            cells = [self._cells[e.id, s] for s in starts]
            expr = self._start_index[e.id] = cp_model.LinearExpr.weighted_sum(
                [v for row in cells for v in row], [s for s, row in zip(starts, cells) for _ in row]
            )
        return expr

    def room_index(self, e: Event) -> cp_model.LinearExprT:
        """The position of e's room in the rooms' order (built once per model and event)."""
        expr = self._room_index.get(e.id)
        if expr is None:
            starts = self.starts[e.id]
            cells = [self._cells[e.id, s] for s in starts]
            expr = self._room_index[e.id] = cp_model.LinearExpr.weighted_sum(
                [v for row in cells for v in row], [i for row in cells for i in range(len(row))]
            )
        return expr

    def on_day_vars(self, e: Event, day: int) -> list[cp_model.IntVar]:
        """The x variables of e that start on the given day."""
        table = self._on_day.get(e.duration)
        if table is None:
            days = self.data.slot_days
            table = [[] for _ in range(max(len(self.data.days), max(days, default=-1) + 1))]
            for s in self.starts[e.id]:
                table[days[s]].append(s)
            self._on_day[e.duration] = table
        cells = self._cells
        return [v for s in table[day] for v in cells[e.id, s]] if 0 <= day < len(table) else []

    def on_day(self, e: Event, day: int) -> cp_model.LinearExprT:
        return total(self.on_day_vars(e, day))

    def events_of(self, person: str) -> list[Event]:
        return [e for e in self.data.events if person in e.people]

    def days(self) -> range:
        return range(len(self.data.days))

    def slots_of_day(self, day: int) -> list[int]:
        return [i for i, s in enumerate(self.data.slots) if s.day == day]


def total(terms: list[Any]) -> cp_model.LinearExpr | int:
    """The flat sum of ``terms``; the int 0 when there are none, so that a constraint
    over nothing stays a Python bool (folded by :func:`pbsolve.kit.post`)."""
    return cp_model.LinearExpr.sum(terms) if terms else 0


def forbid(tm: TimetableModel, xs: Sequence[cp_model.IntVar], lit: cp_model.IntVar) -> None:
    """``lit`` forces every variable of ``xs`` (Booleans) to 0: one enforced conjunction of
    their negations instead of a constraint ``x == 0`` per variable (CP-SAT loads it as
    the same binary clauses ``not lit or not x``, without an integer constraint each, and
    Python builds one constraint instead of hundreds). Nothing for an empty list.

    Written straight into the model's proto (the same constraint: enforcement literal
    ``lit``, the negated literals in list order), without a negated-literal object per
    variable and the API's constraint wrapper."""
    if xs:
        ct = tm.m.model_proto.constraints.add()
        ct.enforcement_literal.append(lit.index)
        ct.bool_and.literals.extend([-v.index - 1 for v in xs])


def post(tm: TimetableModel, ct: Any, lit: cp_model.IntVar) -> None:
    """Add ``ct`` enforced by ``lit`` (see :func:`pbsolve.kit.post`)."""
    kit.post(tm.m, ct, lit)


_NO_LOWER_BOUND = (-(2**63), 1)  # the domain CP-SAT's Python API writes for "sum <= 1"


def at_most_one_rows(
    tm: TimetableModel, rows: Sequence[Sequence[int]], lit: cp_model.IntVar, unless: Sequence[bool] = ()
) -> None:
    """For each row (indices of distinct Boolean variables, at least two) the constraint
    ``post(tm, total(variables) <= 1, lit)`` posts, written straight into the model's
    proto: the same constraints, in the same order and form (variables in row order,
    coefficients 1, domain [int64 min, 1], enforced by ``lit``), without building a
    Python expression, a bounded expression and a constraint object per row.

    A row whose flag in ``unless`` is true is enforced by ``lit`` and the negation of
    the person_no_overlap rule's literal (``tm.person_rule``) instead: for rows that rule
    implies, so that they bind only while it is switched off."""
    constraints = tm.m.model_proto.constraints
    enforce = lit.index
    both = (enforce, -tm.person_rule.index - 1) if tm.person_rule is not None and any(unless) else None
    for i, row in enumerate(rows):
        ct = constraints.add()
        if both is not None and i < len(unless) and unless[i]:
            ct.enforcement_literal.extend(both)
        else:
            ct.enforcement_literal.append(enforce)
        linear = ct.linear
        linear.vars.extend(row)
        linear.coeffs.extend([1] * len(row))
        linear.domain.extend(_NO_LOWER_BOUND)


Encoder = Callable[[TimetableModel, Any, cp_model.IntVar], None]  # (model, the rule's Params model, literal)
# every timetable task shares one encoder per rule kind (base, sampled, hard, stateful)
ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register
# CP-SAT parameters of every solve of one task type's models (SolverModel.parameters),
# registered by the task modules that measured them; other task types use CP-SAT's own
SOLVER_PARAMETERS: dict[str, dict[str, Any]] = {}
# CP-SAT parameters of the two tuned certification solves only (SolverModel.speed_parameters:
# first solve and uniqueness proof, never the default-search re-certification of a tied
# optimum nor a hard-tier probe), registered by the task modules that measured them
SPEED_PARAMETERS: dict[str, dict[str, Any]] = {}
# CP-SAT parameters of pbsolve.certify.optimum's solves only (SolverModel.optimum_parameters:
# the hard tier's probes of variant drafts), registered by the task modules that measured them
OPTIMUM_PARAMETERS: dict[str, dict[str, Any]] = {}
# task types whose room_no_overlap rows implied by person_no_overlap bind only while that
# rule is off (see _room_no_overlap), registered by the task modules that measured it
IMPLIED_ROOM_ROWS: set[str] = set()
# add-on objective kinds: (model, the term's Params model) -> (expression, upper bound)
OBJECTIVES: dict[str, Callable[[TimetableModel, Any], tuple[cp_model.LinearExprT, int]]] = {}


@encoder("availability")
def _availability(tm: TimetableModel, params: NoParams, lit: cp_model.IntVar) -> None:
    idx = tm.data.slot_index
    xs: list[cp_model.IntVar] = []
    for e in tm.data.events:
        xs += tm.cells_covering(e, {idx[sid] for p in e.people for sid in tm.data.person_by_id[p].unavailable})
    forbid(tm, xs, lit)


@encoder("room_fit")
def _room_fit(tm: TimetableModel, params: NoParams, lit: cp_model.IntVar) -> None:
    xs: list[cp_model.IntVar] = []
    for e in tm.data.events:
        for r in tm.data.rooms:
            if r.seats < e.size or not set(e.needs) <= set(r.features):
                xs += [tm.x[e.id, s, r.id] for s in tm.starts[e.id]]
    forbid(tm, xs, lit)


@encoder("person_no_overlap")
def _person_no_overlap(tm: TimetableModel, params: NoParams, lit: cp_model.IntVar) -> None:
    index = tm.cell_indices()
    for p in tm.data.people:
        mine = tm.events_of(p.id)
        if len(mine) < 2:
            continue
        tables = [(e.id, tm.covering_table(e)) for e in mine]
        rows = [
            [v for eid, table in tables for s in table[t] for v in index[eid, s]] for t in range(len(tm.data.slots))
        ]
        at_most_one_rows(tm, [row for row in rows if row], lit)  # an empty sum is no constraint
    if tm.person_rule is None:
        tm.person_rule = lit


@encoder("room_no_overlap")
def _room_no_overlap(tm: TimetableModel, params: NoParams, lit: cp_model.IntVar) -> None:
    """At most one event per room and slot: one row per (room, slot) over the cells that
    occupy it.

    For the task types in IMPLIED_ROOM_ROWS, once person_no_overlap is encoded, the rows
    of a slot whose occupying events pairwise share a person are posted behind ``lit``
    and the negation of that rule's literal: with person_no_overlap on, two cells of two
    such events are in one person's row of the slot (at most one of them), and two cells
    of one event in its exactly-one, so the room row holds in every plan; with it off,
    the row binds as before. The feasible plans under every set of switched-on rules are
    the same, with no room rows for the solver to load in the certification solves
    (every rule on)."""
    index = tm.cell_indices()
    tables = [(e.id, tm.covering_table(e)) for e in tm.data.events]
    n_slots = len(tm.data.slots)
    covering = [[index[eid, s] for eid, table in tables for s in table[t]] for t in range(n_slots)]
    implied = [False] * n_slots
    if tm.implied_room_rows and tm.person_rule is not None:
        people = [set(e.people) for e in tm.data.events]
        for t in range(n_slots):
            here = [people[i] for i, (_, table) in enumerate(tables) if table[t]]
            implied[t] = all(a & b for i, a in enumerate(here) for b in here[i + 1 :])
    rows = []
    unless = []
    for ir in range(len(tm.data.rooms)):
        for t in range(n_slots):
            if len(covering[t]) > 1:
                rows.append([cell[ir] for cell in covering[t]])
                unless.append(implied[t])
    at_most_one_rows(tm, rows, lit, unless)


@encoder("series_order")
def _series_order(tm: TimetableModel, params: NoParams, lit: cp_model.IntVar) -> None:
    for members in tm.data.series_members().values():
        for a, b in itertools.pairwise(members):
            post(tm, tm.start_index(a) + a.duration <= tm.start_index(b), lit)


@encoder("window")
def _window(tm: TimetableModel, params: rp.Window, lit: cp_model.IntVar) -> None:
    e = tm.data.event_by_id[params.event]
    lo, hi = tm.data.slot_index[params.from_], tm.data.slot_index[params.to]
    forbid(tm, [v for s in tm.starts[e.id] if s < lo or s + e.duration - 1 > hi for v in tm.cells(e, s)], lit)


@encoder("deadline")
def _deadline(tm: TimetableModel, params: rp.Deadline, lit: cp_model.IntVar) -> None:
    hi = tm.data.slot_index[params.to]
    xs: list[cp_model.IntVar] = []
    for eid in params.events:
        e = tm.data.event_by_id[eid]
        xs += [v for s in tm.starts[e.id] if s + e.duration - 1 > hi for v in tm.cells(e, s)]
    forbid(tm, xs, lit)


@encoder("blocked_slots")
def _blocked_slots(tm: TimetableModel, params: rp.BlockedSlots, lit: cp_model.IntVar) -> None:
    blocked = [tm.data.slot_index[sid] for sid in params.slots]
    xs: list[cp_model.IntVar] = []
    for e in tm.data.events:
        xs += tm.cells_covering(e, blocked)
    forbid(tm, xs, lit)


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
        expr: cp_model.LinearExprT = tm.by_start(lambda e, s: w[e.id] * (d.slots[s].value + e.duration))
        ub = sum(w[e.id] * max(d.slots[s].value + e.duration for s in tm.starts[e.id]) for e in d.events)
        return expr, ub
    if term.kind == "room_cost":
        # one flat weighted sum (the objective CP-SAT receives is the same as from the
        # nested Python sum, at a fraction of the cost)
        cost = {r.id: r.cost for r in d.rooms}
        expr = cp_model.LinearExpr.weighted_sum(list(tm.x.values()), [cost[r] for (_, _, r) in tm.x])
        return expr, len(d.events) * max(r.cost for r in d.rooms)
    if term.kind == "slot_penalty":
        pen = {d.slot_index[k]: v for k, v in as_model(tp, rp.SlotPenalty).penalty.items()}
        expr = tm.by_start(lambda e, s: sum(pen.get(t, 0) for t in range(s, s + e.duration)))
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
    return build_parts(draft)[0]


def build_parts(draft: Draft) -> tuple[SolverModel, TimetableModel]:
    """The solver model and the timetable model under it (for hooks that post more rules
    into the same model, each behind a fresh literal, instead of building a model per probe)."""
    data = TimetableData.model_validate(draft.data)
    tm = TimetableModel(data, with_backups=any(r.kind == "room_backup" for r in draft.rules))
    tm.implied_room_rows = draft.spec.task in IMPLIED_ROOM_ROWS
    rule_literals = kit.encode_rules(tm.m, draft.rules, ENCODERS, tm, rp.RULE_PARAMS)
    terms = []
    for term in draft.objective:
        expr, ub = _objective(tm, term)
        terms.append((term.id, expr, ub))
    answer = list(tm.x.values()) + list(tm.backup.values())

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        """Each event's one (start, room) and backup room (exactly one of each in every
        plan), read as the values of its start and room index expressions: two solver
        look-ups per event instead of one per variable."""
        schedule = []
        for e in data.events:
            start, room = solver.value(tm.start_index(e)), solver.value(tm.room_index(e))
            row = {"event": e.id, "start": data.slots[start].id, "room": data.rooms[room].id}
            if tm.backup:
                brow = [tm.backup[e.id, r.id] for r in data.rooms]
                row["backup"] = data.rooms[
                    solver.value(cp_model.LinearExpr.weighted_sum(brow, list(range(len(brow)))))
                ].id
            schedule.append(row)
        return {"schedule": schedule}

    sm = SolverModel(
        model=tm.m,
        answer_literals=answer,
        rule_literals=rule_literals,
        objective_terms=terms,
        decode=decode,
        parameters=dict(SOLVER_PARAMETERS.get(draft.spec.task, {})),
        speed_parameters=dict(SPEED_PARAMETERS.get(draft.spec.task, {})),
        optimum_parameters=dict(OPTIMUM_PARAMETERS.get(draft.spec.task, {})),
        # measured on 258 stored timetable instances (9 task types): presolve costs the
        # re-optimisation more than it saves (2.6 against 3.4 s)
        uniqueness_parameters={"cp_model_presolve": False},
    )
    return sm, tm


def check_rule_kinds(rules: list[Rule]) -> None:
    unknown = [r.kind for r in rules if r.kind not in ENCODERS]
    if unknown:
        raise ValueError(f"no solver encoding for rule kinds {unknown}")
