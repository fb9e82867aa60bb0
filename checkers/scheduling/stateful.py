"""Stateful checks: rules over a state that evolves slot by slot through each day.

Each check is a literal simulation of the rule sentence: it walks the slots in time
order, resets the state at the start of every day, updates it slot by slot and stops at
the first slot where the state breaks the rule, naming that slot. Written without the
solver model (which encodes the same rules on its own), so the two can be compared.
"""

from __future__ import annotations

from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.checks import Check, Plan, Verdict, check
from pbsolve.checkers.scheduling.instance_data import Event, TimetableData

OK: Verdict = (True, "holds")


def _running(d: TimetableData, plan: Plan, events: list[Event]) -> list[list[Event]]:
    """For every slot, the events of ``events`` that occupy it."""
    out: list[list[Event]] = [[] for _ in d.slots]
    for e in events:
        start = plan[e.id][0]
        for t in range(start, start + e.duration):
            out[t].append(e)
    return out


@check("room_cooldown")
def _room_cooldown(d: TimetableData, plan: Plan, p: rp.RoomCooldown) -> Verdict:
    """State: slots of reset still owed by the room, and the event that caused them."""
    room, gap = p.room, p.gap
    mine = [e for e in d.events if plan[e.id][1] == room]
    running = _running(d, plan, mine)
    owed, cause, day = 0, "", None
    for t, slot in enumerate(d.slots):
        if slot.day != day:
            owed, day = 0, slot.day  # the reset does not carry over to the next day
        if running[t] and owed > 0:
            return False, f"room {room} holds {running[t][0].id} at {slot.id}, still in its reset after {cause}"
        ending = [e for e in running[t] if plan[e.id][0] + e.duration - 1 == t]
        if ending:
            owed, cause = gap, ending[0].id
        else:
            owed = max(owed - 1, 0)
    return OK


@check("fatigue_protocol")
def _fatigue_protocol(d: TimetableData, plan: Plan, p: rp.FatigueProtocol) -> Verdict:
    """State: busy slots so far today and the last busy slot; the protocol binds every
    event that starts once the busy count has reached the threshold."""
    person, threshold, rest = p.person, p.threshold, p.rest
    mine = [e for e in d.events if person in e.people]
    running = _running(d, plan, mine)
    busy, last, day = 0, -1, None
    for t, slot in enumerate(d.slots):
        if slot.day != day:
            busy, last, day = 0, -1, slot.day
        starting = [e for e in running[t] if plan[e.id][0] == t]
        if starting and busy >= threshold:
            free = t - last - 1
            if free < rest:
                return False, (
                    f"{person} had been busy {busy} slot(s) that day when {starting[0].id} starts at {slot.id}, "
                    f"with only {free} free slot(s) since their previous event (needs {rest})"
                )
        if running[t]:
            busy, last = busy + 1, t
    return OK


@check("battery_level")
def _battery_level(d: TimetableData, plan: Plan, p: rp.BatteryLevel) -> Verdict:
    """State: the battery level, reset to the start level each day, updated every slot."""
    feature = p.feature
    users = [e for e in d.events if feature in e.needs]
    running = _running(d, plan, users)
    level, day = 0, None
    for t, slot in enumerate(d.slots):
        if slot.day != day:
            level, day = p.start, slot.day
        if running[t]:
            level -= p.use
        else:
            level = min(p.capacity, level + p.recharge)
        if level < 0:
            who = f" ({running[t][0].id} is running)" if running[t] else ""
            return False, f"the {feature} battery drops to {level} during {slot.id}{who}"
    return OK


# the kinds this module registers, for callers that manage the registries themselves
STATEFUL_CHECKS: dict[str, Check] = {
    "room_cooldown": _room_cooldown,
    "fatigue_protocol": _fatigue_protocol,
    "battery_level": _battery_level,
}
