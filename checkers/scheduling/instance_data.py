"""The Scheduling & Timetabling family's instance data: a timetable problem.

Events (meetings, lectures, exams) are placed at a start slot and in a room. Slots are
ordered in time; an event of duration d occupies d consecutive slots of one day. This
is the grader's reading of an instance, so it lives on the checker side; the solver
model reads the same container but encodes every rule on its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Container
from functools import cached_property

from pydantic import BaseModel, ConfigDict, Field

from pbsolve.kit import Uncertain, fitting_rooms  # one definition, in the core kit


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Slot(_Frozen):
    id: str = Field(description="label used in answers, e.g. '09:00' or 'Mon P2'")
    day: int = Field(ge=0)
    value: int = Field(description="the number objectives use: clock hour or period number")
    end_label: str = Field(description="label of the moment this slot ends, e.g. '10:00'")


class Room(_Frozen):
    id: str
    seats: int = Field(ge=1)
    features: tuple[str, ...] = ()
    cost: int = Field(ge=0)


class Person(_Frozen):
    id: str
    role: str
    unavailable: tuple[str, ...] = Field(default=(), description="slot ids this person cannot attend")


class Event(_Frozen):
    id: str
    name: str
    duration: int = Field(ge=1)
    people: tuple[str, ...]
    size: int = Field(ge=1, description="seats needed")
    needs: tuple[str, ...] = ()
    priority: int = 1
    series: str | None = Field(default=None, description="events of one series are numbered in time order")


class TimetableData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    time_unit: str = Field(description="'hour' (slot values are clock hours) or 'period'")
    days: tuple[str, ...]
    slots: tuple[Slot, ...]
    rooms: tuple[Room, ...]
    people: tuple[Person, ...]
    events: tuple[Event, ...]
    uncertain: tuple[Uncertain, ...] = ()

    @cached_property
    def slot_index(self) -> dict[str, int]:
        return {s.id: i for i, s in enumerate(self.slots)}

    @cached_property
    def room_by_id(self) -> dict[str, Room]:
        return {r.id: r for r in self.rooms}

    @cached_property
    def person_by_id(self) -> dict[str, Person]:
        return {p.id: p for p in self.people}

    @cached_property
    def event_by_id(self) -> dict[str, Event]:
        return {e.id: e for e in self.events}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``):
        ids of events, slots, rooms and people as the data spells them, and day names. A
        segment (email scheduling) is a person of the data and a place (a personal agenda)
        a room; a feature is one a room offers or an event needs."""
        if what == "day":
            return frozenset(self.days)
        if what == "feature":
            return {f for r in self.rooms for f in r.features} | {f for e in self.events for f in e.needs}
        names: dict[str, Container[str]] = {
            "event": self.event_by_id,
            "slot": self.slot_index,
            "room": self.room_by_id,
            "place": self.room_by_id,
            "person": self.person_by_id,
            "segment": self.person_by_id,
        }
        return names[what]

    def starts(self, event: Event) -> list[int]:
        """Slot indices at which an event can start and still end on the same day."""
        return self._starts_by_duration[event.duration]

    @cached_property
    def _starts_by_duration(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for d in sorted({e.duration for e in self.events}):
            out[d] = [
                i
                for i, s in enumerate(self.slots)
                if i + d <= len(self.slots) and all(self.slots[j].day == s.day for j in range(i, i + d))
            ]
        return out

    # -- derived tables the checks read on every answer (computed once per data object) --
    @cached_property
    def events_by_person(self) -> dict[str, tuple[Event, ...]]:
        """Person id -> the events they attend, in list order (people of the people list)."""
        return {p.id: tuple(e for e in self.events if p.id in e.people) for p in self.people}

    @cached_property
    def slot_ids(self) -> tuple[str, ...]:
        """The id of each slot, by slot index."""
        return tuple(s.id for s in self.slots)

    @cached_property
    def slot_days(self) -> tuple[int, ...]:
        """The day of each slot, by slot index."""
        return tuple(s.day for s in self.slots)

    @cached_property
    def unavailable_masks(self) -> dict[str, int]:
        """Person id -> bit set of the slot indices whose slot they cannot attend."""
        return {p.id: self.slot_mask(p.unavailable) for p in self.people}

    def slot_mask(self, slot_ids: tuple[str, ...] | list[str]) -> int:
        """Bit set of the slot indices whose slot id is one of ``slot_ids``."""
        wanted = set(slot_ids)
        return sum(1 << t for t, s in enumerate(self.slots) if s.id in wanted)

    @cached_property
    def room_fits(self) -> tuple[frozenset[str], ...]:
        """For each event (by position), the ids of the rooms (as :attr:`room_by_id` reads
        them) with enough seats and every feature it needs."""
        return fitting_rooms(self.events, self.room_by_id)

    @cached_property
    def series_groups(self) -> tuple[tuple[Event, ...], ...]:
        """:meth:`series_members`' groups, in order."""
        return tuple(tuple(g) for g in self.series_members().values())

    # The events as plain (id, duration) pairs -- what most checks read of them, without
    # going through the models' attribute machinery on every answer.
    @cached_property
    def spans(self) -> tuple[tuple[str, int], ...]:
        """(id, duration) of each event, in list order."""
        return tuple((e.id, e.duration) for e in self.events)

    @cached_property
    def event_rows(self) -> tuple[tuple[str, int, tuple[str, ...]], ...]:
        """(id, duration, people) of each event, in list order."""
        return tuple((e.id, e.duration, e.people) for e in self.events)

    def spans_of(self, person: str) -> tuple[tuple[str, int], ...]:
        """:attr:`spans` of the events ``person`` attends, in list order."""
        found = self._spans_by_person.get(person)
        if found is None:
            found = tuple((e.id, e.duration) for e in self.events if person in e.people)
        return found

    @cached_property
    def _spans_by_person(self) -> dict[str, tuple[tuple[str, int], ...]]:
        return {pid: tuple((e.id, e.duration) for e in evs) for pid, evs in self.events_by_person.items()}

    @cached_property
    def person_spans(self) -> tuple[tuple[str, tuple[tuple[str, int], ...]], ...]:
        """(person id, :meth:`spans_of` them) for each person, in list order."""
        return tuple((p.id, self.spans_of(p.id)) for p in self.people)

    @cached_property
    def series_pairs(self) -> tuple[tuple[str, int, str], ...]:
        """(id, duration, id of the next) for each event of a series followed by another."""
        return tuple((a.id, a.duration, b.id) for g in self.series_groups for a, b in itertools.pairwise(g))

    @cached_property
    def room_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.rooms)

    @cached_property
    def room_costs(self) -> dict[str, int]:
        """Room id -> cost (as :attr:`room_by_id` reads it)."""
        return {rid: r.cost for rid, r in self.room_by_id.items()}

    @cached_property
    def slot_values(self) -> tuple[int, ...]:
        """The value of each slot, by slot index."""
        return tuple(s.value for s in self.slots)

    @cached_property
    def busy_by_person(self) -> dict[str, int]:
        """Person id -> the slots their events take (whatever the plan)."""
        return {p.id: sum(n for _, n in self.spans_of(p.id)) for p in self.people}

    def series_members(self) -> dict[str, list[Event]]:
        groups: dict[str, list[Event]] = {}
        for e in self.events:
            if e.series is not None:
                groups.setdefault(e.series, []).append(e)
        return groups
