"""Sentences of the place and venue rules (travel times, opening hours, fixed commitments,
focus windows, budget, coach), the two task types' vocabulary and their event lines.

Every number carries its unit (hours or periods, cost units); travel times are listed
for every pair of places, so the checker's pairwise reading is the only one.
"""

from __future__ import annotations

from pbsolve.checkers.scheduling import places as pp
from pbsolve.checkers.scheduling.instance_data import Event, TimetableData
from pbsolve.render_kit import a_or_an
from pbsolve.renderers.scheduling_words import Sentence, Vocab, sentence, units

SCHEDULE_VOCAB = Vocab(
    "activity",
    "activities",
    "participant",
    "You are planning your own agenda for the week: {n} activities. The rooms listed below are the places "
    "where activities happen (each place holds one activity at a time); each period is one hour, labelled "
    "by its start time.",
)
TEAM_VOCAB = Vocab(
    "session",
    "sessions",
    "team",
    "You are planning a team-building day of {n} sessions. The rooms listed below are the venues, with their "
    "capacity (seats), accessibility features and equipment, and their cost per person.",
)
_PLACE = {"activity": "place", "session": "venue"}


def _place(v: Vocab) -> str:
    return _PLACE.get(v.event, "room")


def _join(items: list[str], word: str = "and") -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {word} " + items[-1]


def runs(d: TimetableData, slot_ids: list[str]) -> list[str]:
    """The slots as spans of consecutive slots of one day, from the start of the first to
    the end of the last: 'Mon 10:00–13:00' (the end a clock time, not the label of the
    next slot), 'Wed P1–end of Wed P3'; a single period is its label ('Wed P2')."""
    idx = sorted({d.slot_index[x] for x in slot_ids})
    out: list[list[int]] = []
    for i in idx:
        if out and out[-1][-1] == i - 1 and d.slots[i].day == d.slots[i - 1].day:
            out[-1].append(i)
        else:
            out.append([i])
    return [_span(d.slots[r[0]].id, d.slots[r[-1]].end_label, len(r)) for r in out]


def _span(start: str, end: str, n: int) -> str:
    if end.startswith("end of "):  # period labels: a single period is its label
        return start if n == 1 else f"{start}–{end}"
    day, _, clock = end.partition(" ")
    if clock and start.startswith(day + " "):
        end = clock  # 'Tue 11:00–12:00': 'Tue 12:00' is also the next slot's start label
    return f"{start}–{end}"


def _day_word(d: TimetableData) -> str:
    return "each day" if len(d.days) > 1 else "the day"


@sentence("travel_time")
def _travel_time(d: TimetableData, p: pp.TravelTime, v: Vocab) -> str:
    place = _place(v)
    legs = "; ".join(f"{leg.a}–{leg.b} {units(d, leg.slots)}" for leg in p.legs)
    who = _join(p.people)
    who = who if len(p.people) == 1 else f"any of {who}"
    text = (
        f"Travel between {place}s takes time (in whole {units(d, 2).split()[1]}, the same in both directions): "
        f"{legs}. Whenever {who} has two {v.events} on the same day at "
        f"different {place}s, the one that starts later must start at least the travel time between the two "
        f"{place}s after the earlier one ends (so {v.events} at different {place}s never overlap; a travel time "
        f"of 0 allows back to back)."
    )
    if p.home is not None:
        first = [s for s in d.slots if s.day == 0]
        text += (
            f" {_day_word(d).capitalize()} starts and ends at {p.home}: {_join(p.people)} "
            f"{'leaves' if len(p.people) == 1 else 'each leave'} "
            f"{p.home} no earlier than the start of the day's first {units(d, 1).split()[1]} ({first[0].id} on "
            f"{d.days[0]}) and must be back at {p.home} by the end of the day's last one, so {a_or_an(v.event)} "
            f"at another {place} starts at least the travel time from {p.home} after the day begins and ends at "
            f"least the travel time back before the day ends."
        )
    return text


@sentence("opening_hours")
def _opening_hours(d: TimetableData, p: pp.OpeningHours, v: Vocab) -> str:
    return (
        f"{p.room} is open only during {_join(runs(d, p.open))}: {a_or_an(v.event)} held at {p.room} must take "
        f"place entirely within these times."
    )


@sentence("fixed_commitment")
def _fixed_commitment(d: TimetableData, p: pp.FixedCommitment, v: Vocab) -> str:
    return f"{p.event} is a fixed commitment: it starts at {p.start} at {p.room} and cannot be moved."


@sentence("focus_windows")
def _focus_windows(d: TimetableData, p: pp.FocusWindows, v: Vocab) -> str:
    many = len(p.events) > 1
    return (
        f"{_join(p.events)} need{'' if many else 's'} full focus: {'each' if many else 'it'} must take place "
        f"entirely within the focus windows {_join(runs(d, p.slots))}."
    )


@sentence("budget")
def _budget(d: TimetableData, p: pp.Budget, v: Vocab) -> str:
    return (
        f"Budget: the total booking cost — each {v.event} pays its {_place(v)}'s listed cost per person × the "
        f"number of people in the {v.event} — must not exceed {p.max}."
    )


@sentence("coach_transfer")
def _coach_transfer(d: TimetableData, p: pp.CoachTransfer, v: Vocab) -> str:
    lead = units(d, p.lead)
    where = _join(p.rooms, "or")
    return (
        f"{_join(p.rooms)} {'are' if len(p.rooms) > 1 else 'is'} off-site and reached by the one booked coach: "
        f"{a_or_an(v.event)} at {where} needs the coach from {lead} before it starts until {lead} after it "
        f"ends (out and back), and that whole span must lie within {_day_word(d)}; the coach serves one "
        f"{v.event} at a time, so the coach spans of two {v.events} never share {a_or_an(units(d, 1).split()[1])}."
    )


PLACES_SENTENCES: dict[str, Sentence] = {
    "travel_time": _travel_time,
    "opening_hours": _opening_hours,
    "fixed_commitment": _fixed_commitment,
    "focus_windows": _focus_windows,
    "budget": _budget,
    "coach_transfer": _coach_transfer,
}


def event_details(e: Event, task: str, duration: str, uncertain_size: str | None) -> list[str]:
    """The details of an event line after its id, name and people (the prompt module's
    per-task branch for the two place task types): headcount (seats it needs), duration,
    equipment and access needs, and on the team day its priority (the objective's weight)."""
    if uncertain_size:
        low_high, note = uncertain_size.split(" ", 1)
        parts = [f"{low_high} people {note}"]
    else:
        parts = [f"{e.size} {'person' if e.size == 1 else 'people'}"]
    parts.append(duration)
    if e.needs:
        parts.append("needs " + _join(list(e.needs)))
    if task == "team_building_event_planning":
        parts.append(f"priority {e.priority}")
    return parts


EVENT_LINE_TASKS = frozenset({"schedule_planning", "team_building_event_planning"})

SUBTASK_CONTEXT = {
    "work_week": "It is a working week split between home and the office, with a fixed team meeting.",
    "errand_week": "Besides work there are errands at shops and services, each open only at certain hours.",
    "focus_and_energy": "Your energy dips at certain hours, and deep-work tasks need your focus windows.",
    "commuter_week": "You start and end every day at home, and the places are spread across town.",
    "family_week": "Some activities are shared with family or friends, who have their own availability.",
    "offsite_day": "The day mixes team workshops with a catered lunch inside a lunch window.",
    "accessible_outing": "Some team members need step-free access or a hearing loop, and venues open at set hours.",
    "remote_adventure": "Some venues are off-site and reached by one booked coach.",
    "team_rotation": "Every team rotates through the same activity stations, one team per station at a time.",
    "half_day_workshop": "A short half day with few venues, so venue capacity is tight.",
}
