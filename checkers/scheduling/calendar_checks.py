"""Checks of the campaign-calendar rules (email scheduling), written from their sentences.

A slot's ``value`` is its hour of the week in UTC (see
:mod:`pbsolve.checkers.scheduling.calendar_params`): its UTC clock hour is ``value % 24``.
Each check names the first message (in list order) or the first run of days that breaks
the rule. Independent of the solver model, which encodes the same rules on its own.
"""

from __future__ import annotations

from pbsolve.checkers.scheduling import calendar_params as cp
from pbsolve.checkers.scheduling.checks import OBJECTIVE_VALUES, Check, Plan, Verdict, check
from pbsolve.checkers.scheduling.instance_data import TimetableData

OK: Verdict = (True, "holds")


def _clock(hour: int) -> str:
    return f"{hour % 24:02d}:00"


@check("local_send_window")
def _local_send_window(d: TimetableData, plan: Plan, p: cp.LocalSendWindow) -> Verdict:
    for eid, _ in d.spans_of(p.segment):
        slot = d.slots[plan[eid][0]]
        local = (slot.value % 24 + p.utc_offset) % 24
        if not p.earliest <= local <= p.latest:
            return False, (
                f"{eid} is sent at {slot.id} UTC, {_clock(local)} local time for {p.segment}, "
                f"outside {_clock(p.earliest)}-{_clock(p.latest)}"
            )
    return OK


@check("blackout_days")
def _blackout_days(d: TimetableData, plan: Plan, p: cp.BlackoutDays) -> Verdict:
    off = set(p.days)
    for eid, _ in d.spans_of(p.segment):
        day = d.days[d.slots[plan[eid][0]].day]
        if day in off:
            return False, f"{eid} reaches {p.segment} on {day}, a blackout day"
    return OK


@check("send_spacing")
def _send_spacing(d: TimetableData, plan: Plan, p: cp.SendSpacing) -> Verdict:
    mine = d.spans_of(p.segment)
    for i, (a, _) in enumerate(mine):
        for b, _ in mine[i + 1 :]:
            apart = abs(d.slots[plan[a][0]].value - d.slots[plan[b][0]].value)
            if apart < p.hours:
                return False, f"{a} and {b} reach {p.segment} only {apart} hour(s) apart (needs {p.hours})"
    return OK


@check("min_lag")
def _min_lag(d: TimetableData, plan: Plan, p: cp.MinLag) -> Verdict:
    first, then = d.slots[plan[p.before][0]].day, d.slots[plan[p.after][0]].day
    if then - first < p.days:
        return False, f"{p.after} is sent {then - first} day(s) after {p.before} (needs at least {p.days})"
    return OK


@check("frequency_cap")
def _frequency_cap(d: TimetableData, plan: Plan, p: cp.FrequencyCap) -> Verdict:
    """State: the number of messages the segment has received on each day; every run of
    ``days`` consecutive days (the whole calendar when it is shorter) is summed."""
    per_day = [0] * len(d.days)
    for eid, _ in d.spans_of(p.segment):
        per_day[d.slots[plan[eid][0]].day] += 1
    width = min(p.days, len(d.days))
    for first in range(len(d.days) - width + 1):
        got = sum(per_day[first : first + width])
        if got > p.max:
            span = d.days[first] if width == 1 else f"{d.days[first]}-{d.days[first + width - 1]}"
            return False, f"{p.segment} receives {got} messages in {span} (max {p.max} in {p.days} days)"
    return OK


# the kinds this module registers, for callers that manage the registries themselves
CALENDAR_CHECKS: dict[str, Check] = {
    "local_send_window": _local_send_window,
    "blackout_days": _blackout_days,
    "send_spacing": _send_spacing,
    "min_lag": _min_lag,
    "frequency_cap": _frequency_cap,
}


# -- objective terms ---------------------------------------------------------------------
def _open_loss(d: TimetableData, plan: Plan, tp: cp.OpenLoss) -> int:
    total = 0
    for e in d.events:
        utc = d.slots[plan[e.id][0]].value % 24
        for seg in e.people:
            total += tp.audience[seg] * tp.penalty[(utc + tp.offsets[seg]) % 24]
    return total


def _delivery_cost(d: TimetableData, plan: Plan, tp: cp.DeliveryCost) -> int:
    return sum(d.room_by_id[plan[e.id][1]].cost * e.size for e in d.events)


OBJECTIVE_VALUES.update({"open_loss": _open_loss, "delivery_cost": _delivery_cost})
