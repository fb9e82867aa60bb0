"""Campaign-calendar rules (email scheduling): CP-SAT encoders and witness-based builders.

Segments are the people of the time model; a slot's ``value`` is its hour of the week in
UTC (see :mod:`pbsolve.checkers.scheduling.calendar_params`). Every rule is posted behind
its literal; the frequency cap counts messages per day with plain sums (no auxiliary
state is needed: the rolling count over a run of days is a linear sum).
"""

from __future__ import annotations

import itertools
import random

from ortools.sat.python import cp_model

from pbsolve.checkers.scheduling import calendar_params as cp
from pbsolve.checkers.scheduling.instance_data import Event, TimetableData
from pbsolve.models.scheduling.common import RULE_BUILDERS, RuleBuilder, Witness, events_of
from pbsolve.models.scheduling.places import none_of
from pbsolve.models.scheduling.timetable_model import (
    OBJECTIVES,
    Encoder,
    TimetableModel,
    at_most_one_rows,
    encoder,
    post,
)

# audience segments by city, with their UTC offset in hours (no daylight saving is modelled)
CITIES = (
    ("Berlin", 1), ("Tokyo", 9), ("New York", -5), ("London", 0), ("Sydney", 10), ("Sao Paulo", -3),
    ("Dubai", 4), ("Seattle", -8), ("Singapore", 8), ("Nairobi", 3), ("Mexico City", -6), ("Seoul", 9),
)  # fmt: skip
OFFSETS = dict(CITIES)


def local_hour(data: TimetableData, slot: int, offset: int) -> int:
    return (data.slots[slot].value % 24 + offset) % 24


# -- encoders ----------------------------------------------------------------------------
@encoder("local_send_window")
def _local_send_window(tm: TimetableModel, params: cp.LocalSendWindow, lit: cp_model.IntVar) -> None:
    """No message to the segment starts outside its local window: one enforced bool_and
    of the negated cells of every such start (the same plans as a row ``at(e, s) == 0``
    per start)."""
    index = tm.cell_indices()
    outside = [
        s
        for s in range(len(tm.data.slots))
        if not params.earliest <= local_hour(tm.data, s, params.utc_offset) <= params.latest
    ]
    none_of(tm, [v for e in tm.events_of(params.segment) for s in _among(tm, e, outside) for v in index[e.id, s]], lit)


@encoder("blackout_days")
def _blackout_days(tm: TimetableModel, params: cp.BlackoutDays, lit: cp_model.IntVar) -> None:
    """No message to the segment on a blackout day (one enforced bool_and, as above)."""
    off = {tm.data.days.index(name) for name in params.days}
    index = tm.cell_indices()
    blocked = [s for s, sl in enumerate(tm.data.slots) if sl.day in off]
    none_of(tm, [v for e in tm.events_of(params.segment) for s in _among(tm, e, blocked) for v in index[e.id, s]], lit)


def _among(tm: TimetableModel, e: Event, slots: list[int]) -> list[int]:
    """The starts of ``e`` (in order) among ``slots``."""
    chosen = set(slots)
    return [s for s in tm.starts[e.id] if s in chosen]


@encoder("send_spacing")
def _send_spacing(tm: TimetableModel, params: cp.SendSpacing, lit: cp_model.IntVar) -> None:
    """At most one message to the segment starts in any stretch of ``hours`` hours: per
    send value v (ascending), one row ``sum of at(e, s) <= 1`` over every start s of the
    segment's messages with v <= value(s) < v + hours, written straight into the proto
    (:func:`~pbsolve.models.scheduling.timetable_model.at_most_one_rows`).

    The same plans as a row ``at(a, sa) + at(b, sb) <= 1`` per pair of starts of two
    messages closer than the spacing: such a pair lies in the stretch opening at the
    earlier start, and two starts of one message in a stretch already exclude each other
    (each message has exactly one start, in every model, whatever rules are on). A
    stretch is skipped when its starts are all those of the previous one, or of one
    message. Fewer, stronger rows (cliques instead of pairs)."""
    mine = tm.events_of(params.segment)
    value = [s.value for s in tm.data.slots]
    index = tm.cell_indices()
    starts = sorted((value[s], i, s) for i, e in enumerate(mine) for s in tm.starts[e.id])
    rows = []
    previous: set[tuple[int, int]] = set()
    hi = 0
    for lo, (v, _, _) in enumerate(starts):
        if lo and starts[lo - 1][0] == v:
            continue  # one stretch per send value
        while hi < len(starts) and starts[hi][0] < v + params.hours:
            hi += 1
        members = {(i, s) for _, i, s in starts[lo:hi]}
        if members <= previous or len({i for i, _ in members}) < 2:
            continue
        previous = members
        rows.append([c for _, i, s in starts[lo:hi] for c in index[mine[i].id, s]])
    at_most_one_rows(tm, rows, lit)


def _day_of(tm: TimetableModel, e: Event) -> cp_model.LinearExpr:
    """The day index e is sent on, as one weighted sum of its placement Booleans."""
    cells = [(tm.x[e.id, s, r.id], tm.data.slots[s].day) for s in tm.starts[e.id] for r in tm.data.rooms]
    return cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [day for _, day in cells])


@encoder("min_lag")
def _min_lag(tm: TimetableModel, params: cp.MinLag, lit: cp_model.IntVar) -> None:
    a, b = tm.data.event_by_id[params.before], tm.data.event_by_id[params.after]
    post(tm, _day_of(tm, b) - _day_of(tm, a) >= params.days, lit)


@encoder("frequency_cap")
def _frequency_cap(tm: TimetableModel, params: cp.FrequencyCap, lit: cp_model.IntVar) -> None:
    mine = tm.events_of(params.segment)
    n = len(tm.data.days)
    width = min(params.days, n)
    if len(mine) <= params.max:
        return  # never more messages than the segment has
    for first in range(n - width + 1):
        post(tm, sum(tm.on_day(e, d) for e in mine for d in range(first, first + width)) <= params.max, lit)


# -- witness-based builders --------------------------------------------------------------
def _segments(data: TimetableData, minimum: int) -> list[str]:
    return [p.id for p in data.people if len(events_of(data, p.id)) >= minimum]


def build_local_send_window(data: TimetableData, witness: Witness, rng: random.Random) -> cp.LocalSendWindow | None:
    """A segment's local window around the witness's local send hours, widened at random;
    a window every send slot falls in forbids nothing and is not offered."""
    options = []
    for seg in _segments(data, 1):
        offset = OFFSETS.get(seg, 0)
        sent = [local_hour(data, witness[e.id][0], offset) for e in events_of(data, seg)]
        lo = max(0, min(sent) - rng.randint(0, 3))
        hi = min(23, max(sent) + rng.randint(0, 3))
        if any(not lo <= local_hour(data, t, offset) <= hi for t in range(len(data.slots))):
            options.append(cp.LocalSendWindow(segment=seg, utc_offset=offset, earliest=lo, latest=hi))
    return rng.choice(options) if options else None


def build_blackout_days(data: TimetableData, witness: Witness, rng: random.Random) -> cp.BlackoutDays | None:
    """One or two days on which the witness sends the segment nothing (never every day)."""
    options = []
    for seg in _segments(data, 1):
        used = {data.slots[witness[e.id][0]].day for e in events_of(data, seg)}
        free = [d for d in range(len(data.days)) if d not in used]
        if free:
            options.append((seg, free))
    if not options:
        return None
    seg, free = rng.choice(options)
    picks = sorted(rng.sample(free, min(len(free), rng.randint(1, 2))))
    return cp.BlackoutDays(segment=seg, days=[data.days[d] for d in picks])


def build_send_spacing(data: TimetableData, witness: Witness, rng: random.Random) -> cp.SendSpacing | None:
    """A spacing in hours the witness keeps for a segment with two or more messages, longer
    than the shortest distance between two send slots (else no-overlap already says it)."""
    values = sorted({s.value for s in data.slots})
    step = min((b - a for a, b in itertools.pairwise(values)), default=0)
    options = []
    for seg in _segments(data, 2):
        sent = sorted(data.slots[witness[e.id][0]].value for e in events_of(data, seg))
        closest = min(b - a for a, b in itertools.pairwise(sent))
        if closest > step:
            options.append(cp.SendSpacing(segment=seg, hours=rng.randint(step + 1, closest)))
    return rng.choice(options) if options else None


def build_min_lag(data: TimetableData, witness: Witness, rng: random.Random) -> cp.MinLag | None:
    """Two messages the witness sends on different days: the later one at least a number
    of days (up to the witness's distance) after the earlier."""
    day = {e.id: data.slots[witness[e.id][0]].day for e in data.events}
    pairs = [(a.id, b.id) for a in data.events for b in data.events if day[b.id] > day[a.id]]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    return cp.MinLag(before=a, after=b, days=rng.randint(1, min(2, day[b] - day[a])))


def build_frequency_cap(data: TimetableData, witness: Witness, rng: random.Random) -> cp.FrequencyCap | None:
    """The witness's largest count of messages to a segment in any run of 2 or 3 days; a cap
    that is at least the segment's number of messages could never bind and is not offered."""
    n = len(data.days)
    options = []
    for seg in _segments(data, 2):
        per_day = [0] * n
        for e in events_of(data, seg):
            per_day[data.slots[witness[e.id][0]].day] += 1
        total = sum(per_day)
        for width in range(2, min(3, n) + 1):
            most = max(sum(per_day[f : f + width]) for f in range(n - width + 1))
            if most < total:
                options.append(cp.FrequencyCap(segment=seg, max=most, days=width))
    return rng.choice(options) if options else None


CALENDAR_BUILDERS: dict[str, RuleBuilder] = {
    "local_send_window": build_local_send_window,
    "blackout_days": build_blackout_days,
    "send_spacing": build_send_spacing,
    "min_lag": build_min_lag,
    "frequency_cap": build_frequency_cap,
}
for _kind, _builder in CALENDAR_BUILDERS.items():
    RULE_BUILDERS.add(_kind, _builder)

# the kinds this module registers, for callers that manage the registries themselves
CALENDAR_ENCODERS: dict[str, Encoder] = {
    "local_send_window": _local_send_window,
    "blackout_days": _blackout_days,
    "send_spacing": _send_spacing,
    "min_lag": _min_lag,
    "frequency_cap": _frequency_cap,
}


# -- objective terms ---------------------------------------------------------------------
def _open_loss(tm: TimetableModel, tp: cp.OpenLoss) -> tuple[cp_model.LinearExprT, int]:
    """Each placement's loss, worked out once per (event, start) from the slots' UTC hours
    (the same figures as summing ``audience x penalty[local hour]`` per segment, which the
    objective and its bound used to recompute per call: a tenth of an email instance)."""
    d = tm.data
    hours = [sl.value % 24 for sl in d.slots]
    table: dict[tuple[str, int], int] = {}
    for e in d.events:
        parts = [(tp.audience[g], tp.offsets[g]) for g in e.people]
        for s in tm.starts[e.id]:
            h = hours[s]
            table[e.id, s] = sum(a * tp.penalty[(h + off) % 24] for a, off in parts)
    expr = tm.by_start(lambda e, s: table[e.id, s])
    return expr, sum(max(table[e.id, s] for s in tm.starts[e.id]) for e in d.events)


def _delivery_cost(tm: TimetableModel, tp: cp.DeliveryCost) -> tuple[cp_model.LinearExprT, int]:
    """One flat weighted sum over the placement Booleans (the objective CP-SAT receives is
    the same as from the nested Python sum of products, at a fraction of the cost)."""
    d = tm.data
    cost = {r.id: r.cost for r in d.rooms}
    size = {e.id: e.size for e in d.events}
    expr = cp_model.LinearExpr.weighted_sum(list(tm.x.values()), [cost[r] * size[eid] for (eid, _, r) in tm.x])
    return expr, sum(e.size for e in d.events) * max(r.cost for r in d.rooms)


OBJECTIVES.update({"open_loss": _open_loss, "delivery_cost": _delivery_cost})
