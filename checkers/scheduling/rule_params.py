"""The parameters of every timetabling rule kind and objective kind, one model each.

The CP-SAT encoders, the checks and the prompt sentences all read a rule through the
model its kind has here (:mod:`pbsolve.params`); every timetabling task type shares the
one table. Fields are declared in the order the instance file lists them, so the dump of
a model is the rule's ``params`` object byte for byte. Names are ids of the instance data
(events, people, rooms, slots, features) exactly as the data spells them; each field says
what it names (:mod:`pbsolve.checkers.scheduling.refs`), and that the data has it is
checked by the grader's instance validation (``Params.data_problems``), not here.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, NonNegativeInt, PositiveInt

from pbsolve.checkers.scheduling.calendar_params import CALENDAR_PARAMS, CALENDAR_TERMS
from pbsolve.checkers.scheduling.refs import (
    EventName,
    FeatureName,
    PersonName,
    RoomName,
    SlotName,
)
from pbsolve.params import NoParams, Params, problem

EventIds = Annotated[list[EventName], Field(min_length=1)]
SlotIds = Annotated[list[SlotName], Field(min_length=1)]


# -- basic and medium kinds -------------------------------------------------------------
class Window(Params):
    """``event`` runs entirely within the slots ``from`` .. ``to`` (one day)."""

    event: EventName
    from_: SlotName = Field(alias="from")
    to: SlotName


class Deadline(Params):
    """Every one of ``events`` has finished by the end of slot ``to``."""

    events: EventIds
    to: SlotName


class BlockedSlots(Params):
    """No event runs in any of ``slots``."""

    slots: SlotIds


class DailyLimit(Params):
    """Each of ``people`` attends at most ``max`` events on any one day."""

    max: NonNegativeInt
    people: Annotated[list[PersonName], Field(min_length=1)]


class DayCap(Params):
    """At most ``max`` events start on any one day."""

    max: NonNegativeInt


class Precedence(Params):
    """``before`` ends before ``after`` starts."""

    before: EventName
    after: EventName


class PriorityOrder(Params):
    """``events`` start in this order (each no earlier than the one before)."""

    events: Annotated[list[EventName], Field(min_length=2)]


class PersonBuffer(Params):
    """``person`` has at least ``gap`` free slots between two events on one day."""

    person: PersonName
    gap: PositiveInt


class MaxConsecutive(Params):
    """``person`` is busy at most ``max`` slots in a row."""

    person: PersonName
    max: NonNegativeInt


class DifferentDays(Params):
    """``events`` are held on pairwise different days."""

    events: EventIds


class SameRoom(Params):
    """``events`` are all held in one room."""

    events: EventIds


# -- hard-tier kinds (disruptions and recovery scenarios) --------------------------------
class PersonAbsent(Params):
    """``person`` attends no event running in ``slots``."""

    person: PersonName
    slots: SlotIds


class RoomClosed(Params):
    """No event runs in ``room`` during ``slots``."""

    room: RoomName
    slots: SlotIds


# -- stateful kinds ---------------------------------------------------------------------
class RoomCooldown(Params):
    """After an event in ``room`` ends, the room stays empty for ``gap`` slots that day."""

    room: RoomName
    gap: PositiveInt


class FatigueProtocol(Params):
    """Once ``person`` has been busy ``threshold`` slots in a day, every later event of
    theirs that day starts after at least ``rest`` free slots. A threshold of at least 1
    keeps the protocol off at the start of each day (what the model and check assume)."""

    person: PersonName
    threshold: PositiveInt
    rest: PositiveInt


class BatteryLevel(Params):
    """The equipment with ``feature`` starts each day at ``start`` charge (at most
    ``capacity``), loses ``use`` per slot in use and regains ``recharge`` per idle slot;
    its charge never drops below 0."""

    feature: FeatureName
    capacity: NonNegativeInt
    start: NonNegativeInt
    use: PositiveInt
    recharge: NonNegativeInt

    def data_problems(self, data: Any) -> list[str]:
        # a feature no event needs drains nothing: the rule would hold for every plan
        found = super().data_problems(data)
        if not found and not any(self.feature in e.needs for e in data.events):
            found.append(f"no event needs feature {self.feature!r}: the battery would never drain")
        return found


# -- objective terms --------------------------------------------------------------------
class WeightedEnd(Params):
    """The sum over events of weight x end time (``weights`` per event id)."""

    weights: dict[EventName, NonNegativeInt]

    def data_problems(self, data: Any) -> list[str]:
        # the check (and the model) read every event's weight
        return super().data_problems(data) + problem(
            "no weight for event", [e.id for e in data.events if e.id not in self.weights]
        )


class SlotPenalty(Params):
    """The penalty of each slot an event runs in (slots not listed cost 0)."""

    penalty: dict[SlotName, NonNegativeInt]


class SameDayPairs(Params):
    """For each of ``people``, every event beyond the first on one day counts 1."""

    people: list[PersonName]


class CurrentSchedule(Params):
    """The current plan a ``changes`` term counts against: event -> (start slot, room)."""

    existing: dict[EventName, tuple[SlotName, RoomName]]

    def data_problems(self, data: Any) -> list[str]:
        # the check (and the model) compare every event with its current row
        return super().data_problems(data) + problem(
            "the current plan has no row for event", [e.id for e in data.events if e.id not in self.existing]
        )


STRUCTURAL = ("availability", "room_fit", "person_no_overlap", "room_no_overlap", "series_order", "room_backup")
"""Kinds that take no parameters: they state a property of the data or the plan."""

RULE_PARAMS: dict[str, type[Params]] = {
    **dict.fromkeys(STRUCTURAL, NoParams),
    "window": Window,
    "deadline": Deadline,
    "blocked_slots": BlockedSlots,
    "daily_limit": DailyLimit,
    "day_cap": DayCap,
    "precedence": Precedence,
    "priority_order": PriorityOrder,
    "person_buffer": PersonBuffer,
    "max_consecutive": MaxConsecutive,
    "different_days": DifferentDays,
    "same_room": SameRoom,
    "person_absent": PersonAbsent,
    "room_closed": RoomClosed,
    "room_cooldown": RoomCooldown,
    "fatigue_protocol": FatigueProtocol,
    "battery_level": BatteryLevel,
}
RULE_PARAMS.update(CALENDAR_PARAMS)  # the campaign-calendar kinds (email scheduling)

TERM_PARAMS: dict[str, type[Params]] = {
    "changes": CurrentSchedule,
    "backup_cost": NoParams,
    "weighted_end": WeightedEnd,
    "room_cost": NoParams,
    "slot_penalty": SlotPenalty,
    "same_day_pairs": SameDayPairs,
}
TERM_PARAMS.update(CALENDAR_TERMS)  # the campaign-calendar objective kinds (email scheduling)
