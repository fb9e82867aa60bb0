"""Place and venue rules for timetables: travel between places, opening hours, fixed
commitments, focus windows, a booking budget and a shared coach.

In the personal agenda (schedule planning) the rooms of a timetable are *places* (home,
office, gym, shops); in team-building event planning they are *venues*. These rules read
the same plan (start slot and room per event) as every other timetable check and are
written from their sentences (renderers/scheduling_places.py), without the solver model.
Their parameter models live here and are added to the family's RULE_PARAMS on import.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.checks import Check, Plan, Verdict, check
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.checkers.scheduling.refs import EventName, PersonName, PlaceName, RoomName, SlotName
from pbsolve.params import Params

OK: Verdict = (True, "holds")


# -- parameter models -------------------------------------------------------------------
class TravelLeg(Params):
    """Two places and the travel time between them, in slots (the same both ways)."""

    a: PlaceName
    b: PlaceName
    slots: NonNegativeInt


class TravelTime(Params):
    """For each of ``people``: two of their events on one day at different places are
    separated by at least the travel time between the places (the later-starting one
    starts that many slots after the earlier one ends). With ``home``, each day also
    starts and ends at ``home``: an event at another place starts no earlier than the
    travel time from home after the day's first slot begins, and ends early enough to
    get home by the end of the day's last slot. ``legs`` lists every pair of places once."""

    people: Annotated[list[PersonName], Field(min_length=1)]
    home: PlaceName | None = None
    legs: list[TravelLeg]

    @model_validator(mode="after")
    def _pairs_once(self) -> TravelTime:
        seen = set()
        for leg in self.legs:
            key = frozenset((leg.a, leg.b))
            if leg.a == leg.b or key in seen:
                raise ValueError(f"travel leg {leg.a}-{leg.b} repeats a pair or joins a place to itself")
            seen.add(key)
        return self

    def between(self, a: str, b: str) -> int:
        """The travel time between two places (0 from a place to itself or for a pair not listed)."""
        if a == b:
            return 0
        for leg in self.legs:
            if {leg.a, leg.b} == {a, b}:
                return leg.slots
        return 0


class OpeningHours(Params):
    """``room`` can be used only during ``open`` (slot ids): every event held there
    occupies open slots only."""

    room: RoomName
    open: Annotated[list[SlotName], Field(min_length=1)]


class FixedCommitment(Params):
    """``event`` is fixed: it starts at slot ``start`` in room ``room``."""

    event: EventName
    start: SlotName
    room: RoomName


class FocusWindows(Params):
    """Every one of ``events`` occupies only slots among ``slots`` (the focus windows)."""

    events: Annotated[list[EventName], Field(min_length=1)]
    slots: Annotated[list[SlotName], Field(min_length=1)]


class Budget(Params):
    """The total booking cost (each event pays its room's cost per person times its
    ``size``, the people it brings) is at most ``max``."""

    max: NonNegativeInt


class CoachTransfer(Params):
    """Events held in ``rooms`` need the one coach from ``lead`` slots before they start
    until ``lead`` slots after they end, within their day; the coach serves one event at
    a time (those coach spans never share a slot)."""

    rooms: Annotated[list[RoomName], Field(min_length=1)]
    lead: PositiveInt


PLACES_PARAMS: dict[str, type[Params]] = {
    "travel_time": TravelTime,
    "opening_hours": OpeningHours,
    "fixed_commitment": FixedCommitment,
    "focus_windows": FocusWindows,
    "budget": Budget,
    "coach_transfer": CoachTransfer,
}
rp.RULE_PARAMS.update(PLACES_PARAMS)  # the one registration line


# -- checks -----------------------------------------------------------------------------
def _day_bounds(d: TimetableData, t: int) -> tuple[int, int]:
    """The first and last slot index of slot t's day."""
    days = d.slot_days
    day = days[t]
    return days.index(day), len(days) - 1 - days[::-1].index(day)


def _trips(p: TravelTime) -> dict[tuple[str, str], int]:
    """(place, place) -> the travel time of the first leg joining them, both ways: what
    ``p.between`` gives for two different places, read by one lookup (the check asks it
    for every pair of one person's events on one day)."""
    out: dict[tuple[str, str], int] = {}
    for leg in p.legs:
        out.setdefault((leg.a, leg.b), leg.slots)
        out.setdefault((leg.b, leg.a), leg.slots)
    return out


@check("travel_time")
def _travel_time(d: TimetableData, plan: Plan, p: TravelTime) -> Verdict:
    days, trips = d.slot_days, _trips(p)
    for person in p.people:
        mine = d.spans_of(person)
        for i, (a, da) in enumerate(mine):
            sa, pa = plan[a]
            for b, db in mine[i + 1 :]:
                sb, pb = plan[b]
                if pa == pb or days[sa] != days[sb]:
                    continue
                first, dfirst, second = (a, da, b) if sa <= sb else (b, db, a)
                gap = plan[second][0] - (plan[first][0] + dfirst)
                need = trips.get((pa, pb), 0)  # p.between(pa, pb): the places differ
                if gap < need:
                    return False, (
                        f"{person} has {max(gap, 0)} slot(s) between {first} at {plan[first][1]} and {second} at "
                        f"{plan[second][1]}{' (they overlap)' if gap < 0 else ''}; the trip takes {need}"
                    )
        if p.home is None:
            continue
        home = p.home
        for eid, duration in mine:
            s, place = plan[eid]
            day_first, day_last = _day_bounds(d, s)
            trip = 0 if place == home else trips.get((home, place), 0)  # p.between, either way
            if s - day_first < trip:
                return False, f"{person} cannot get from {p.home} to {place} by {d.slots[s].id} for {eid}"
            if day_last + 1 - (s + duration) < trip:
                return False, f"{person} cannot get back to {p.home} from {place} by the end of the day after {eid}"
    return OK


@check("opening_hours")
def _opening_hours(d: TimetableData, plan: Plan, p: OpeningHours) -> Verdict:
    open_, ids, where = set(p.open), d.slot_ids, p.room
    for eid, duration in d.spans:
        start, room = plan[eid]
        if room != where:
            continue
        for t in range(start, start + duration):
            if ids[t] not in open_:
                return False, f"{eid} is at {room} during {ids[t]}, when it is closed"
    return OK


@check("fixed_commitment")
def _fixed_commitment(d: TimetableData, plan: Plan, p: FixedCommitment) -> Verdict:
    start, room = plan[p.event]
    if d.slots[start].id != p.start or room != p.room:
        return False, f"{p.event} is fixed at {p.start}, {p.room} but is planned at {d.slots[start].id}, {room}"
    return OK


@check("focus_windows")
def _focus_windows(d: TimetableData, plan: Plan, p: FocusWindows) -> Verdict:
    allowed, ids, events = set(p.slots), d.slot_ids, d.event_by_id
    for eid in p.events:
        start = plan[eid][0]
        for t in range(start, start + events[eid].duration):
            if ids[t] not in allowed:
                return False, f"{eid} runs during {ids[t]}, outside the focus windows"
    return OK


@check("budget")
def _budget(d: TimetableData, plan: Plan, p: Budget) -> Verdict:
    total = sum(d.room_by_id[plan[e.id][1]].cost * e.size for e in d.events)
    return OK if total <= p.max else (False, f"the bookings cost {total}, over the budget of {p.max}")


@check("coach_transfer")
def _coach_transfer(d: TimetableData, plan: Plan, p: CoachTransfer) -> Verdict:
    remote = set(p.rooms)
    held: dict[int, str] = {}  # slot index -> the event holding the coach then
    for eid, duration in d.spans:
        start, room = plan[eid]
        if room not in remote:
            continue
        first, last = _day_bounds(d, start)
        lo, hi = start - p.lead, start + duration + p.lead - 1
        if lo < first or hi > last:
            return False, f"the coach trip for {eid} at {room} does not fit within its day"
        for t in range(lo, hi + 1):
            if t in held:
                return False, f"the coach is needed for both {held[t]} and {eid} during {d.slots[t].id}"
            held[t] = eid
    return OK


PLACES_CHECKS: dict[str, Check] = {
    "travel_time": _travel_time,
    "opening_hours": _opening_hours,
    "fixed_commitment": _fixed_commitment,
    "focus_windows": _focus_windows,
    "budget": _budget,
    "coach_transfer": _coach_transfer,
}
