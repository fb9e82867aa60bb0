"""Sentences of the campaign-calendar rules (email scheduling).

Send slots are written as on the calendar ('Tue 12:00', in UTC); each sentence states
its unit (local clock hours, hours, calendar days) and every number it uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pbsolve.checkers.scheduling import calendar_params as cp
from pbsolve.checkers.scheduling.instance_data import Event, TimetableData
from pbsolve.render_kit import plural
from pbsolve.renderers.scheduling_words import Sentence, Vocab, sentence


def _join(items: list[str], word: str = "and") -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {word} " + items[-1]


def _days(n: int) -> str:
    return f"{n} day" + ("" if n == 1 else "s")


def _offset(hours: int) -> str:
    return "UTC" if hours == 0 else f"UTC{hours:+d}"


@sentence("local_send_window")
def _local_send_window(d: TimetableData, p: cp.LocalSendWindow, v: Vocab) -> str:
    shift = (
        "local time equals UTC"
        if p.utc_offset == 0
        else f"local time is UTC {'plus' if p.utc_offset > 0 else 'minus'} {plural(abs(p.utc_offset), 'hour')}, "
        f"wrapping past midnight"
    )
    return (
        f"{p.segment} is in time zone {_offset(p.utc_offset)} ({shift}): every {v.event} to {p.segment} must be "
        f"sent at a local time from {p.earliest:02d}:00 to {p.latest:02d}:00, both included."
    )


@sentence("blackout_days")
def _blackout_days(d: TimetableData, p: cp.BlackoutDays, v: Vocab) -> str:
    return (
        f"{p.segment} has blackout days: no {v.event} to {p.segment} may be sent on {_join(p.days, 'or')} (UTC days)."
    )


@sentence("send_spacing")
def _send_spacing(d: TimetableData, p: cp.SendSpacing, v: Vocab) -> str:
    hours = f"{p.hours} hour" + ("" if p.hours == 1 else "s")
    return (
        f"Any two {v.events} to {p.segment} are sent at least {hours} apart "
        f"(measured between their send times, across days)."
    )


@sentence("min_lag")
def _min_lag(d: TimetableData, p: cp.MinLag, v: Vocab) -> str:
    return (
        f"{p.after} is sent at least {_days(p.days)} after {p.before}: its calendar day comes at least "
        f"{_days(p.days)} after the day {p.before} is sent on (the send times within the days do not matter)."
    )


@sentence("frequency_cap")
def _frequency_cap(d: TimetableData, p: cp.FrequencyCap, v: Vocab) -> str:
    noun = v.event if p.max == 1 else v.events
    if p.days == 1:
        return f"Frequency cap: {p.segment} receives at most {p.max} {noun} on any one calendar day."
    return (
        f"Frequency cap: in any {p.days} consecutive calendar days of the plan, {p.segment} receives at most "
        f"{p.max} {noun} in total (count every window of {p.days} days, e.g. {_window(d, p.days)})."
    )


def _window(d: TimetableData, days: int) -> str:
    width = min(days, len(d.days))
    first = [f"{d.days[i]}-{d.days[i + width - 1]}" for i in range(len(d.days) - width + 1)]
    return _join(first[:3]) + (" and so on" if len(first) > 3 else "")


# the kinds this module registers, for callers that manage the registries themselves
CALENDAR_SENTENCES: dict[str, Sentence] = {
    "local_send_window": _local_send_window,
    "blackout_days": _blackout_days,
    "send_spacing": _send_spacing,
    "min_lag": _min_lag,
    "frequency_cap": _frequency_cap,
}


# -- the email task's words (its VOCAB entry and event lines in renderers/scheduling.py) --
EMAIL_INTRO = (
    "You are scheduling {n} email messages over a campaign calendar of send slots. All send times are UTC; "
    "each send slot is numbered by its hour of the week (the hours since Monday 00:00 UTC, so Tue 06:00 is 30), "
    "and each message is sent in one send slot (its period). Each message goes out through one sending pool, "
    "listed under **Rooms**: a pool's seats are the thousands of recipients it delivers in one send slot, its "
    "equipment is what it is cleared for, and a pool sends one message per send slot. The segments of a "
    "message are its recipients; a segment takes part in a message when it receives it."
)


def email_details(d: TimetableData, e: Event) -> str:
    """The recipients and clearance of one message, for its line in the message list (an
    uncertain audience is given as its range, as the other tasks give uncertain sizes)."""
    u = next((u for u in d.uncertain if u.kind == "size" and u.target == e.id), None)
    if u is None:
        text = f"{e.size} thousand recipients ({e.size} seats)"
    else:
        text = f"{u.low}–{u.high} (uncertain input {u.id}) thousand recipients (as many seats)"
    return text + (" — needs " + _join(list(e.needs)) if e.needs else "")


# -- objective sentences -----------------------------------------------------------------
def _hour_runs(hours: list[int]) -> str:
    """Local hours as clock ranges: [7, 8, 18, 19, 20] -> '07:00–08:59 and 18:00–20:59'."""
    runs: list[list[int]] = []
    for h in sorted(hours):
        if runs and runs[-1][-1] == h - 1:
            runs[-1].append(h)
        else:
            runs.append([h])
    return _join([f"{r[0]:02d}:00–{r[-1]:02d}:59" for r in runs])


def _open_loss(d: TimetableData, tp: cp.OpenLoss, v: Vocab) -> str:
    levels: dict[int, list[int]] = {}
    for h, value in enumerate(tp.penalty):
        levels.setdefault(value, []).append(h)
    table = "; ".join(
        f"{value} for a local send time in {_hour_runs(hours)}" for value, hours in sorted(levels.items())
    )
    return (
        f"the total open loss: for each {v.event} and each segment it goes to, the segment's thousands of "
        f"recipients × the penalty of the segment's local send time (the send slot's UTC time plus the "
        f"segment's UTC offset, wrapping past midnight), summed. Penalty per thousand recipients: {table}"
    )


def _delivery_cost(d: TimetableData, tp: cp.DeliveryCost, v: Vocab) -> str:
    if v.event != "message":  # a cost per person (team-building venues, seminar rooms)
        if v.event == "session":  # a session's line lists its people
            return (
                "the total booking cost: each session pays its venue's listed cost per person × the number of "
                "people listed for the session"
            )
        return (  # a lecture's or seminar's line lists its seats, not the people named with it
            f"the total booking cost: each {v.event} pays its room's listed cost per seat × the number of seats "
            f"listed for the {v.event}"
        )
    return (
        f"the total delivery cost: each {v.event} pays its pool's cost (per thousand recipients) × its "
        f"thousands of recipients"
    )


OBJECTIVE_SENTENCES: dict[str, Callable[[TimetableData, Any, Vocab], str]] = {
    "open_loss": _open_loss,
    "delivery_cost": _delivery_cost,
}
