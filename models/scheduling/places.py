"""Place and venue rules for timetables: CP-SAT encodings and witness-based builders.

The task types whose rooms are places (schedule planning) or venues (team-building event
planning) state some of these rules as part of their structure (the travel times between
places, fixed commitments, a venue's opening hours); their recipes
(:class:`~pbsolve.models.scheduling.common.TaskRecipe` with ``structure`` and
``allowed``) build them from the entities and plant a witness that keeps them, then
sample the other kinds through the builders registered here.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Callable, Sequence

from ortools.sat.python import cp_model

from pbsolve.checkers.scheduling import places as pp
from pbsolve.checkers.scheduling.instance_data import Event, TimetableData
from pbsolve.models.scheduling.common import (
    RULE_BUILDERS,
    Witness,
    fits,
)
from pbsolve.models.scheduling.timetable_model import TimetableModel, at_most_one_rows, encoder, post


def day_slots(data: TimetableData) -> tuple[tuple[int, ...], ...]:
    """The slot indices of each day, in order (cached: the witness asks on every placement)."""
    return _day_lists(data.slot_days, len(data.days))


def in_day(data: TimetableData) -> tuple[int, ...]:
    """For each slot, its position within its day (0 for the day's first slot)."""
    return _positions(data.slot_days, len(data.days))


@functools.cache
def _day_lists(slot_days: tuple[int, ...], n_days: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(i for i, day in enumerate(slot_days) if day == d) for d in range(n_days))


@functools.cache
def _positions(slot_days: tuple[int, ...], n_days: int) -> tuple[int, ...]:
    return tuple(p for day in _day_lists(slot_days, n_days) for p in range(len(day)))


# -- encoders ----------------------------------------------------------------------------
def none_of(tm: TimetableModel, variables: Sequence[int], lit: cp_model.IntVar) -> None:
    """Every Boolean of ``variables`` (proto indices) false when ``lit`` holds: one enforced
    bool_and of their negations."""
    if not variables:
        return
    ct = tm.m.model_proto.constraints.add()
    ct.enforcement_literal.append(lit.index)
    ct.bool_and.literals.extend([-v - 1 for v in variables])


def _room_position(tm: TimetableModel, room: str) -> int:
    """The position of ``room`` in the rooms' order (that of :meth:`TimetableModel.cells`)."""
    for i, r in enumerate(tm.data.rooms):
        if r.id == room:
            return i
    raise KeyError(room)


def _spans_outside(tm: TimetableModel, e: Event, inside: set[int]) -> list[int]:
    """The starts of ``e`` (in order) whose span has a slot outside ``inside``."""
    return [s for s in tm.starts[e.id] if any(t not in inside for t in range(s, s + e.duration))]


@functools.cache
def _travel_rows(trip: tuple[tuple[int, ...], ...], days: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
    """The rows of the travel rule as offsets of at[t, r] (``t * len(trip) + r``) from the
    first ``at`` variable, in the order the encoder posts them: per day and slot t1, the
    slot's places (at most one), then per later slot t2 of the day and place ra, ra at t1
    with every place rb too far from ra to reach by t2."""
    n_rooms = len(trip)
    rows: list[tuple[int, ...]] = []
    for day in days:
        for i, t1 in enumerate(day):
            if n_rooms > 1:
                rows.append(tuple(range(t1 * n_rooms, (t1 + 1) * n_rooms)))
            for t2 in day[i + 1 :]:
                between = t2 - t1 - 1
                for ia in range(n_rooms):
                    far = [t2 * n_rooms + ib for ib in range(n_rooms) if ib != ia and between < trip[ia][ib]]
                    if far:
                        rows.append((t1 * n_rooms + ia, *far))
    return tuple(rows)


@encoder("travel_time")
def _travel_time(tm: TimetableModel, params: pp.TravelTime, lit: cp_model.IntVar) -> None:
    """Where each person is: a Boolean at[p, t, r] per slot t and place r, implied by every
    placement of one of p's events that holds r at t (one constraint per placement:
    x[e,s,r] -> at[p,t,r] for each t it covers). Behind the rule literal, at most one
    place per slot, and for each slot t1, place ra and later slot t2 of the same day:
    at[p,t1,ra] + sum of at[p,t2,rb] over the places rb whose trip from ra is longer than
    the slots between (t2 - t1 - 1) <= 1.

    The same rule as one row per pair of events and placement (the check's reading: two
    of p's events on one day at different places leave at least the trip between them,
    overlapping ones never): the last slot of the earlier event and the first of the later
    one are the closest pair of slots they hold, and a slot holds at most one place.
    ``at`` is free where no placement forces it, so it never forbids a plan the check
    keeps. Measured on 94 schedule-planning drafts: about 3x fewer rows to write than
    the pairwise form and a quicker solve (same certificates on every unique optimum).

    Written straight into the proto: the ``at`` variables (consecutive, slot by slot, in
    the rooms' order), the implications and the rows (a table per travel matrix and day
    layout, cached) are those the Python API would write, in the same order."""
    d = tm.data
    pos_in_day = in_day(d)
    days = day_slots(d)
    rooms = [r.id for r in d.rooms]
    n_rooms = len(rooms)
    trip = tuple(tuple(params.between(ra, rb) for rb in rooms) for ra in rooms)
    proto = tm.m.model_proto
    variables, constraints = proto.variables, proto.constraints
    index = tm.cell_indices()
    n_slots = len(d.slots)
    for person in params.people:
        mine = tm.events_of(person)
        if len(mine) >= 2:
            base = len(variables)
            for t in range(n_slots):
                for r in rooms:
                    var = variables.add()
                    var.name = f"at[{person},{t},{r}]"
                    var.domain.extend((0, 1))
            for e in mine:
                step = e.duration * n_rooms
                for s in tm.starts[e.id]:
                    first = base + s * n_rooms
                    for ir, v in enumerate(index[e.id, s]):
                        ct = constraints.add()
                        ct.enforcement_literal.append(v)
                        ct.bool_and.literals.extend(range(first + ir, first + ir + step, n_rooms))
            at_most_one_rows(tm, [[base + o for o in row] for row in _travel_rows(trip, days)], lit)
        if params.home is None:
            continue
        out = [params.between(params.home, r) for r in rooms]
        back = [params.between(r, params.home) for r in rooms]
        away: list[int] = []
        for e in mine:
            for s in tm.starts[e.id]:
                left = len(days[d.slots[s].day]) - (pos_in_day[s] + e.duration)
                cells = index[e.id, s]
                away += [cells[ir] for ir in range(n_rooms) if pos_in_day[s] < out[ir] or left < back[ir]]
        none_of(tm, away, lit)


@encoder("opening_hours")
def _opening_hours(tm: TimetableModel, params: pp.OpeningHours, lit: cp_model.IntVar) -> None:
    open_ = {tm.data.slot_index[sid] for sid in params.open}
    ir = _room_position(tm, params.room)
    index = tm.cell_indices()
    none_of(tm, [index[e.id, s][ir] for e in tm.data.events for s in _spans_outside(tm, e, open_)], lit)


@encoder("fixed_commitment")
def _fixed_commitment(tm: TimetableModel, params: pp.FixedCommitment, lit: cp_model.IntVar) -> None:
    e = tm.data.event_by_id[params.event]
    start, fixed = tm.data.slot_index[params.start], _room_position(tm, params.room)
    index = tm.cell_indices()
    if start not in tm.starts[e.id]:
        post(tm, False, lit)
        return
    ct = tm.m.model_proto.constraints.add()
    ct.enforcement_literal.append(lit.index)
    ct.bool_and.literals.append(index[e.id, start][fixed])


@encoder("focus_windows")
def _focus_windows(tm: TimetableModel, params: pp.FocusWindows, lit: cp_model.IntVar) -> None:
    allowed = {tm.data.slot_index[sid] for sid in params.slots}
    index = tm.cell_indices()
    events = [tm.data.event_by_id[eid] for eid in params.events]
    none_of(tm, [v for e in events for s in _spans_outside(tm, e, allowed) for v in index[e.id, s]], lit)


@encoder("budget")
def _budget(tm: TimetableModel, params: pp.Budget, lit: cp_model.IntVar) -> None:
    d = tm.data
    post(
        tm,
        sum(d.room_by_id[r].cost * d.event_by_id[eid].size * v for (eid, _, r), v in tm.x.items()) <= params.max,
        lit,
    )


@encoder("coach_transfer")
def _coach_transfer(tm: TimetableModel, params: pp.CoachTransfer, lit: cp_model.IntVar) -> None:
    d, k = tm.data, params.lead
    pos_in_day = in_day(d)
    days = day_slots(d)
    holding: list[list[cp_model.IntVar]] = [[] for _ in d.slots]
    for e in d.events:
        for s in tm.starts[e.id]:
            day_len = len(days[d.slots[s].day])
            for r in params.rooms:
                v = tm.x[e.id, s, r]
                if pos_in_day[s] < k or pos_in_day[s] + e.duration + k > day_len:
                    post(tm, v == 0, lit)
                    continue
                for t in range(s - k, s + e.duration + k):
                    holding[t].append(v)
    for vs in holding:
        if len(vs) > 1:
            post(tm, sum(vs) <= 1, lit)


# -- witness-based builders for the sampled kinds ----------------------------------------
def _runs_within(day: Sequence[int], used: set[int], rng: random.Random, min_len: int) -> list[int]:
    """A contiguous stretch of ``day`` that covers ``used`` (empty or inside the day),
    widened at random, at least ``min_len`` long when possible."""
    if used:
        lo, hi = day.index(min(used)), day.index(max(used))
    else:
        lo = rng.randrange(len(day))
        hi = min(len(day) - 1, lo + min_len - 1)
    lo = max(0, lo - rng.randint(0, 2))
    hi = min(len(day) - 1, hi + rng.randint(0, 2))
    return list(day[lo : hi + 1])


def build_opening_hours(data: TimetableData, witness: Witness, rng: random.Random) -> pp.OpeningHours | None:
    """A room some event fits; open hours per day that cover the witness's use of it."""
    rooms = [r for r in data.rooms if any(fits(e, r) for e in data.events)]
    rng.shuffle(rooms)
    shortest = min(e.duration for e in data.events)
    for r in rooms:
        open_: list[int] = []
        for day in day_slots(data):
            used = {
                t
                for e in data.events
                if witness[e.id][1] == r.id and witness[e.id][0] in day
                for t in range(witness[e.id][0], witness[e.id][0] + e.duration)
            }
            if not used and rng.random() < 0.3:
                continue  # closed all day
            open_ += _runs_within(day, used, rng, shortest + 1)
        if open_ and len(open_) < len(data.slots):
            return pp.OpeningHours(room=r.id, open=[data.slots[t].id for t in open_])
    return None


def build_focus_windows(data: TimetableData, witness: Witness, rng: random.Random) -> pp.FocusWindows | None:
    """One to three events; per day a window that covers their witness slots."""
    chosen = sorted(rng.sample(list(data.events), min(len(data.events), rng.randint(1, 3))), key=data.events.index)
    longest = max(e.duration for e in chosen)
    slots: list[int] = []
    for day in day_slots(data):
        used = {
            t for e in chosen if witness[e.id][0] in day for t in range(witness[e.id][0], witness[e.id][0] + e.duration)
        }
        if not used and rng.random() < 0.5:
            continue
        slots += _runs_within(day, used, rng, longest)
    if not slots or len(slots) == len(data.slots):
        return None
    return pp.FocusWindows(events=[e.id for e in chosen], slots=[data.slots[t].id for t in slots])


def witness_cost(data: TimetableData, witness: Witness) -> int:
    """The witness's booking cost: each event pays its room's cost per person x its size."""
    return sum(data.room_by_id[witness[e.id][1]].cost * e.size for e in data.events)


def build_budget(data: TimetableData, witness: Witness, rng: random.Random) -> pp.Budget | None:
    """The witness's booking cost, when some plan could cost more."""
    cost = witness_cost(data, witness)
    most = sum(max(r.cost for r in data.rooms if fits(e, r)) * e.size for e in data.events)
    return pp.Budget(max=cost) if cost < most else None


def coach_ok(data: TimetableData, witness: Witness, rooms: set[str], lead: int) -> bool:
    """Whether the witness (possibly partial: events it does not place are skipped) keeps
    the coach rule: every coach span within its day, no two sharing a slot."""
    pos_in_day, days = in_day(data), day_slots(data)
    held: set[int] = set()
    for e in data.events:
        if e.id not in witness:
            continue
        s, r = witness[e.id]
        if r not in rooms:
            continue
        if pos_in_day[s] < lead or pos_in_day[s] + e.duration + lead > len(days[data.slots[s].day]):
            return False
        span = set(range(s - lead, s + e.duration + lead))
        if span & held:
            return False
        held |= span
    return True


def build_coach_transfer(data: TimetableData, witness: Witness, rng: random.Random) -> pp.CoachTransfer | None:
    """One or two remote venues (at least one event fits one of them) whose witness
    events keep one-slot coach trips apart."""
    usable = [r.id for r in data.rooms if any(fits(e, r) for e in data.events)]
    options = [set(c) for k in (1, 2) for c in itertools.combinations(usable, k)]
    rng.shuffle(options)
    for rooms in options:
        if coach_ok(data, witness, rooms, 1):
            return pp.CoachTransfer(rooms=[r.id for r in data.rooms if r.id in rooms], lead=1)
    return None


def legs_from(positions: dict[str, int]) -> list[pp.TravelLeg]:
    """Travel times |x_a - x_b| from positions on a line (a metric: no detour is faster)."""
    names = list(positions)
    return [
        pp.TravelLeg(a=a, b=b, slots=abs(positions[a] - positions[b]))
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    ]


def travel_ok(data: TimetableData, witness: Witness, rule: pp.TravelTime) -> bool:
    """Whether the witness (possibly partial: events it does not place are ignored) keeps
    the travel rule, read as the check reads it."""
    days = day_slots(data)
    pos_in_day = in_day(data)
    for person in rule.people:
        mine = [e for e in data.events if person in e.people and e.id in witness]
        for i, a in enumerate(mine):
            for b in mine[i + 1 :]:
                (sa, ra), (sb, rb) = witness[a.id], witness[b.id]
                if ra == rb or data.slots[sa].day != data.slots[sb].day:
                    continue
                first, second = (a, b) if sa <= sb else (b, a)
                gap = witness[second.id][0] - (witness[first.id][0] + first.duration)
                if gap < rule.between(ra, rb):
                    return False
        if rule.home is not None:
            for e in mine:
                s, r = witness[e.id]
                if pos_in_day[s] < rule.between(rule.home, r):
                    return False
                if len(days[data.slots[s].day]) - (pos_in_day[s] + e.duration) < rule.between(r, rule.home):
                    return False
    return True


def travel_ok_adding(
    data: TimetableData,
    plan: Witness,
    e: Event,
    s: int,
    room: str,
    rule: pp.TravelTime,
    between: Callable[[str, str], int] | None = None,
) -> bool:
    """``travel_ok(data, {**plan, e.id: (s, room)}, rule)`` for a partial ``plan`` that
    keeps the rule and does not place ``e``: only the pairs of ``e`` with the events placed
    so far, and ``e``'s own trips from and back home, can break it. The witness sampler
    asks this for every candidate placement; the whole plan's pairs each time cost it a
    sixth of a schedule-planning instance. ``between`` may stand for ``rule.between``
    (a table of it, say)."""
    between = between or rule.between
    people = [p for p in rule.people if p in e.people]
    if not people:
        return True
    day = data.slots[s].day
    slot_day = data.slot_days
    end = s + e.duration
    for b in data.events:
        placed = plan.get(b.id)
        if placed is None or b.id == e.id:
            continue
        sb, rb = placed
        if rb == room or slot_day[sb] != day or not any(p in b.people for p in people):
            continue
        gap = sb - end if s <= sb else s - (sb + b.duration)
        if gap < between(room, rb):
            return False
    if rule.home is not None:
        pos_in_day = in_day(data)
        if pos_in_day[s] < between(rule.home, room):
            return False
        if len(day_slots(data)[day]) - (pos_in_day[s] + e.duration) < between(room, rule.home):
            return False
    return True


def build_travel_time(data: TimetableData, witness: Witness, rng: random.Random) -> pp.TravelTime | None:
    """Everyone with two or more events; venue positions on a line (0 to 2 slots apart)
    drawn until the witness keeps the gaps and some pair of places is apart."""
    people = [p.id for p in data.people if sum(p.id in e.people for e in data.events) >= 2]
    if not people or len(data.rooms) < 2:
        return None
    for _ in range(30):
        positions = {r.id: rng.randint(0, 2) for r in data.rooms}
        rule = pp.TravelTime(people=people, legs=legs_from(positions))
        if any(leg.slots for leg in rule.legs) and travel_ok(data, witness, rule):
            return rule
    return None


PLACE_BUILDERS = {
    "opening_hours": build_opening_hours,
    "focus_windows": build_focus_windows,
    "budget": build_budget,
    "coach_transfer": build_coach_transfer,
    "travel_time": build_travel_time,
}
for _kind, _builder in PLACE_BUILDERS.items():
    RULE_BUILDERS.add(_kind, _builder)
