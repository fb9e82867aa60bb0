"""The Scheduling & Timetabling family's instance data: a timetable problem.

Events (meetings, lectures, exams) are placed at a start slot and in a room. Slots are
ordered in time; an event of duration d occupies d consecutive slots of one day. This
is the grader's reading of an instance, so it lives on the checker side; the solver
model reads the same container but encodes every rule on its own.
"""

from __future__ import annotations

from functools import cached_property

from pydantic import BaseModel, ConfigDict, Field

from pbsolve.kit import Uncertain  # one definition, in the core kit


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

    def series_members(self) -> dict[str, list[Event]]:
        groups: dict[str, list[Event]] = {}
        for e in self.events:
            if e.series is not None:
                groups.setdefault(e.series, []).append(e)
        return groups
