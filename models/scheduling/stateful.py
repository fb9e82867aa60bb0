"""Stateful rules for timetables: CP-SAT encodings and witness-based parameter builders.

The state (a room's pending reset, a person's busy count, a battery level) evolves slot
by slot and restarts every day. The checker simulates it; here it is encoded on its own:
auxiliary Booleans and integer level variables are *defined* unconditionally (a
definition never forbids a placement), and only the rule itself is posted behind the
rule's literal, so the certifier can switch it off like any other rule.
"""

from __future__ import annotations

import itertools
import random

from ortools.sat.python import cp_model

from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, TimetableData
from pbsolve.models.scheduling.common import RULE_BUILDERS, RuleBuilder, Witness, fits
from pbsolve.models.scheduling.timetable_model import Encoder, TimetableModel, encoder, post


def _same_day_after(data: TimetableData, t: int, k: int) -> list[int]:
    """The (up to) k slots that follow slot t on its own day."""
    return [u for u in range(t + 1, min(t + k + 1, len(data.slots))) if data.slots[u].day == data.slots[t].day]


def _indicator(tm: TimetableModel, terms: list[cp_model.LinearExprT], name: str) -> cp_model.IntVar:
    """A Boolean equal to 1 iff at least one of the 0/1 expressions is 1."""
    b = tm.m.new_bool_var(name)
    for term in terms:
        tm.m.add(b >= term)
    tm.m.add(b <= sum(terms))
    return b


# -- encoders ----------------------------------------------------------------------------
@encoder("room_cooldown")
def _room_cooldown(tm: TimetableModel, params: rp.RoomCooldown, lit: cp_model.IntVar) -> None:
    """No placement in the room that ends at t together with one that uses the room in
    one of the `gap` same-day slots after t. Plain pairs: an "ends at t" indicator was
    measured slower to certify (plan counting on default course timetables)."""
    room, gap = params.room, params.gap
    n = len(tm.data.slots)
    ends: list[list[cp_model.IntVar]] = [[] for _ in range(n)]
    uses: list[list[cp_model.IntVar]] = [[] for _ in range(n)]
    for e in tm.data.events:
        for s in tm.starts[e.id]:
            v = tm.x[e.id, s, room]
            ends[s + e.duration - 1].append(v)
            for t in range(s, s + e.duration):
                uses[t].append(v)
    for t in range(n):
        for u in _same_day_after(tm.data, t, gap):
            for a in ends[t]:
                for b in uses[u]:
                    post(tm, a + b <= 1, lit)


@encoder("fatigue_protocol")
def _fatigue_protocol(tm: TimetableModel, params: rp.FatigueProtocol, lit: cp_model.IntVar) -> None:
    """An event starting at t when the day's busy count before t is >= threshold has no
    busy slot among the `rest` slots before t (clipped to the day: with no room for the
    rest before t the start is forbidden, as the earlier busy slot lies inside the clip)."""
    person, h, g = params.person, params.threshold, params.rest
    mine = tm.events_of(person)
    busy = [_indicator(tm, [tm.occupies(e, t) for e in mine], f"busy[{person},{t}]") for t in range(len(tm.data.slots))]
    for d in tm.days():
        day = tm.slots_of_day(d)
        for i, t in enumerate(day):
            starting = [tm.at(e, t) for e in mine if t in tm.starts[e.id]]
            if i < h or not starting:
                continue  # fewer than h earlier slots: the protocol cannot be on yet
            count = sum(busy[u] for u in day[:i])
            on = tm.m.new_bool_var(f"fatigued[{person},{t}]")
            tm.m.add(count >= h).only_enforce_if(on)
            tm.m.add(count <= h - 1).only_enforce_if(~on)
            for st in starting:
                for u in day[max(0, i - g) : i]:
                    post(tm, st + on + busy[u] <= 2, lit)


@encoder("battery_level")
def _battery_level(tm: TimetableModel, params: rp.BatteryLevel, lit: cp_model.IntVar) -> None:
    """Level variables follow the recurrence (drain while a user runs, else capped
    recharge), restarted each day; the rule bounds every level below by 0."""
    feature, cap, start = params.feature, params.capacity, params.start
    use, gain = params.use, params.recharge
    users = [e for e in tm.data.events if feature in e.needs]
    for d in tm.days():
        day = tm.slots_of_day(d)
        prev: cp_model.LinearExprT = start
        top = max(cap, start)
        for t in day:
            on = _indicator(tm, [tm.occupies(e, t) for e in users], f"drain[{feature},{t}]")
            charged = tm.m.new_int_var(-use * len(day), top, f"charged[{feature},{t}]")
            tm.m.add_min_equality(charged, [prev + gain, cap])
            level = tm.m.new_int_var(start - use * len(day), top, f"level[{feature},{t}]")
            tm.m.add(level == prev - use).only_enforce_if(on)
            tm.m.add(level == charged).only_enforce_if(~on)
            post(tm, level >= 0, lit)
            prev = level


# -- witness-based builders --------------------------------------------------------------
def _by_day(data: TimetableData, witness: Witness, events: list[Event]) -> dict[int, list[Event]]:
    """Events grouped by witness day, each group in start order."""
    out: dict[int, list[Event]] = {}
    for e in sorted(events, key=lambda e: witness[e.id][0]):
        out.setdefault(data.slots[witness[e.id][0]].day, []).append(e)
    return out


def build_room_cooldown(data: TimetableData, witness: Witness, rng: random.Random) -> rp.RoomCooldown | None:
    """A room at least two events fit, with the largest gap (at most 2) that the
    witness's same-day reuses of it allow; a room the witness reuses back to back is
    out. An unused room counts too: the optimum may well want it (rooms differ in cost)."""
    options = []
    for r in data.rooms:
        if sum(fits(e, r) for e in data.events) < 2:
            continue  # at most one event can ever be there: the rule could not bind
        placed = [e for e in data.events if witness[e.id][1] == r.id]
        gaps = [
            witness[b.id][0] - (witness[a.id][0] + a.duration)
            for day in _by_day(data, witness, placed).values()
            for a, b in itertools.pairwise(day)
        ]
        k = min(min(gaps), 2) if gaps else rng.randint(1, 2)
        if k >= 1:
            options.append(rp.RoomCooldown(room=r.id, gap=k))
    return rng.choice(options) if options else None


def build_fatigue_protocol(data: TimetableData, witness: Witness, rng: random.Random) -> rp.FatigueProtocol | None:
    """A person with several events; (threshold, rest) the witness meets, preferring
    pairs under which some witness event actually starts with the protocol on."""
    triggered: list[
        rp.FatigueProtocol
    ] = []  # candidate params under which some witness event starts with the protocol on
    quiet: list[rp.FatigueProtocol] = []
    per_day = max(sum(1 for s in data.slots if s.day == d) for d in range(len(data.days)))
    for p in data.people:
        mine = [e for e in data.events if p.id in e.people]
        if len(mine) < 2:
            continue
        # (busy slots before, free slots since the previous event) at each start
        starts: list[tuple[int, int]] = []
        for day in _by_day(data, witness, mine).values():
            busy, last_end = 0, None
            for e in day:
                s = witness[e.id][0]
                if last_end is not None:
                    starts.append((busy, s - last_end))
                busy, last_end = busy + e.duration, s + e.duration
        # the protocol can bite only if an event can follow h busy slots on one day
        shortest = min(e.duration for e in mine)
        most = min(sum(e.duration for e in mine), per_day) - shortest
        for h in range(1, most + 1):
            bound = [free for before, free in starts if before >= h]
            for g in (1, 2):
                if all(free >= g for free in bound):
                    (triggered if bound else quiet).append(rp.FatigueProtocol(person=p.id, threshold=h, rest=g))
    if triggered:  # a threshold above 1 makes it a switch rather than a plain buffer
        switching = [o for o in triggered if o.threshold >= 2]
        return rng.choice(switching or triggered)
    quiet = [o for o in quiet if o.threshold <= 2]
    return rng.choice(quiet) if quiet else None


def _battery_ok(drain: list[list[bool]], cap: int, start: int, use: int, gain: int) -> bool:
    for day in drain:
        level = start
        for on in day:
            level = level - use if on else min(cap, level + gain)
            if level < 0:
                return False
    return True


def build_battery_level(data: TimetableData, witness: Witness, rng: random.Random) -> rp.BatteryLevel | None:
    """A needed feature; the smallest capacity, then the smallest start level, that the
    witness's use of it allows (one spare unit of capacity at random). None when even
    running every user back to back at the start of a day could not empty the battery."""
    features = sorted({f for e in data.events for f in e.needs})
    if not features:
        return None
    feature = rng.choice(features)
    users = [e for e in data.events if feature in e.needs]
    running = {t for e in users for t in range(witness[e.id][0], witness[e.id][0] + e.duration)}
    days = [[t for t, s in enumerate(data.slots) if s.day == d] for d in range(len(data.days))]
    drain = [[t in running for t in day] for day in days]
    per_day = max(len(day) for day in days)
    total = min(sum(e.duration for e in users), per_day)
    combos = [(u, r) for u in (1, 2, 3) for r in (1, 2)]
    rng.shuffle(combos)
    for use, gain in combos:
        cap = next(c for c in range(use, use * per_day + 1) if _battery_ok(drain, c, c, use, gain))
        cap += rng.randint(0, 1)
        start = next(s for s in range(cap + 1) if _battery_ok(drain, cap, s, use, gain))
        if total * use > start:
            return rp.BatteryLevel(feature=feature, capacity=cap, start=start, use=use, recharge=gain)
    return None


STATEFUL_BUILDERS: dict[str, RuleBuilder] = {
    "room_cooldown": build_room_cooldown,
    "fatigue_protocol": build_fatigue_protocol,
    "battery_level": build_battery_level,
}
for _kind, _builder in STATEFUL_BUILDERS.items():
    RULE_BUILDERS.add(_kind, _builder)

# the kinds this module registers, for callers that manage the registries themselves
STATEFUL_ENCODERS: dict[str, Encoder] = {
    "room_cooldown": _room_cooldown,
    "fatigue_protocol": _fatigue_protocol,
    "battery_level": _battery_level,
}
