"""Sentences of the stateful timetable rules.

Each sentence states the state, its daily reset, its update per slot and the bound, with
every number, so that the checker's slot-by-slot simulation is the only reading.
"""

from __future__ import annotations

from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.render_kit import a_or_an
from pbsolve.renderers.scheduling_words import Sentence, Vocab, room_label, sentence, units
from pbsolve.renderers.scheduling_words import unit as _unit


def _day(d: TimetableData) -> str:
    """'each day' on a multi-day timetable, 'the day' on a single day."""
    return "each day" if len(d.days) > 1 else "the day"


@sentence("room_cooldown")
def _room_cooldown(d: TimetableData, p: rp.RoomCooldown, v: Vocab) -> str:
    room, k = p.room, p.gap
    text = (
        f"{room_label(room)} needs a reset after use: once {a_or_an(v.event)} held in {room} ends, {room} holds no {v.event} "
        f"during the next {units(d, k)} of the same day"
    )
    text += " (the reset does not carry over to the next day)." if len(d.days) > 1 else "."
    first_day = [s for s in d.slots if s.day == 0]
    if k + 1 < len(first_day):
        first = first_day[0]
        last = f"ends at {first.end_label}" if d.time_unit == "hour" else f"has {first.id} as its last period"
        text += (
            f" For example, if {a_or_an(v.event)} in {room} {last}, the next {v.event} there may start at "
            f"{first_day[k + 1].id} at the earliest."
        )
    return text


@sentence("fatigue_protocol")
def _fatigue_protocol(d: TimetableData, p: rp.FatigueProtocol, v: Vocab) -> str:
    who, h, g = p.person, p.threshold, p.rest
    return (
        f"Fatigue protocol for {who}: count the {_unit(d)}s {who} spends in {v.events}, starting from 0 at the "
        f"start of {_day(d)}. {a_or_an(v.event).capitalize()} of {who} that starts when this count has already "
        f"reached {h} that day must start at least {units(d, g)} after the end of {who}'s previous "
        f"{v.event} (at least {units(d, g)} free in between); {v.events} that start before the count reaches {h} are not affected."
    )


@sentence("battery_level")
def _battery_level(d: TimetableData, p: rp.BatteryLevel, v: Vocab) -> str:
    f, cap, unit = p.feature, p.capacity, _unit(d)
    return (
        f"Every {v.event} that needs {f} draws on one shared battery (capacity {cap} units). Its level is "
        f"{p.start} units at the start of {_day(d)}. In every {unit} in which at least one {v.event} that needs "
        f"{f} is running, the level falls by {p.use}; in every other {unit} it rises by {p.recharge}, but "
        f"never above {cap}. The level at the end of every {unit} must be at least 0."
    )


# the kinds this module registers, for callers that manage the registries themselves
STATEFUL_SENTENCES: dict[str, Sentence] = {
    "room_cooldown": _room_cooldown,
    "fatigue_protocol": _fatigue_protocol,
    "battery_level": _battery_level,
}
