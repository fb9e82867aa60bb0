"""Sentences of the day-spacing rules (study and training plans).

Days are counted on the calendar of the plan: "k days after Mon" is the k-th listed day
after Mon. Each sentence says which day of an event counts (the day it starts on), and
gives every bound with its unit and whether it is included.
"""

from __future__ import annotations

from pbsolve.checkers.scheduling import day_spacing as ds
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.renderers.scheduling_words import Sentence, Vocab, sentence


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _days(n: int) -> str:
    return f"{n} day" + ("" if n == 1 else "s")


@sentence("min_days_apart")
def _min_days_apart(d: TimetableData, p: ds.MinDaysApart, v: Vocab) -> str:
    if p.days == 1:
        every = "" if len(p.events) == 2 else " all"
        return f"{_join(p.events)}{every} take place on different days."
    return (
        f"Spacing: any two of {_join(p.events)} take place on days at least {_days(p.days)} apart (days are "
        f"counted on the calendar: {d.days[0]} and {d.days[min(p.days, len(d.days) - 1)]} are "
        f"{_days(min(p.days, len(d.days) - 1))} apart)."
    )


@sentence("review_window")
def _review_window(d: TimetableData, p: ds.ReviewWindow, v: Vocab) -> str:
    pairs = _join([f"{x.review} after {x.first}" for x in p.pairs])
    return (
        f"Review interval: each review {v.event} takes place at least {_days(p.min_days)} and at most "
        f"{_days(p.max_days)} after the day of the first {v.event} of its subject ({pairs}); "
        f"the same day counts as 0 days after."
    )


@sentence("exam_dates")
def _exam_dates(d: TimetableData, p: ds.ExamDates, v: Vocab) -> str:
    parts = [f"{x.subject} on {x.day} ({_join(x.sessions)})" for x in p.exams]
    return (
        f"Exam dates: {'; '.join(parts)}. Every {v.event} of a subject takes place on a day before the day of "
        f"its exam (not on the exam day itself)."
    )


@sentence("daily_load")
def _daily_load(d: TimetableData, p: ds.DailyLoad, v: Vocab) -> str:
    points = ", ".join(f"{eid} {n}" for eid, n in p.load.items())
    return (
        f"Daily load for {p.person}: each {v.event} counts these load points: {points}. The points of "
        f"{p.person}'s {v.events} on any one day add up to at most {p.max}."
    )


@sentence("recovery_days")
def _recovery_days(d: TimetableData, p: ds.RecoveryDays, v: Vocab) -> str:
    others = _join(p.trains)
    return (
        f"Recovery for {p.group}: after an intense {p.group} {v.event} ({_join(p.intense)}), no other {p.group} "
        f"{v.event} (of {others}) may take place on the same day or on the next {_days(p.days)}."
    )


@sentence("progression")
def _progression(d: TimetableData, p: ds.Progression, v: Vocab) -> str:
    if p.min_days == p.max_days:
        gap = f"exactly {_days(p.min_days)} after the day of the one before it"
    else:
        gap = f"at least {_days(p.min_days)} and at most {_days(p.max_days)} after the day of the one before it"
    each = "the second" if len(p.events) == 2 else "each"
    return f"Progression: {_join(p.events)} take place in this order, {each} {gap}."


@sentence("weekly_quota")
def _weekly_quota(d: TimetableData, p: ds.WeeklyQuota, v: Vocab) -> str:
    w = p.days_per_week
    weeks = [d.days[i : i + w] for i in range(0, len(d.days), w)]
    spans = "; ".join(f"week {k + 1} is {days[0]}–{days[-1]}" for k, days in enumerate(weeks))
    if p.min == 1 and len(p.events) > 1:
        named = ", ".join(p.events[:-1]) + " or " + p.events[-1]
        return f"Weekly goal: at least 1 of {named} takes place in each week ({spans})."
    return f"Weekly goal: at least {p.min} of {_join(p.events)} take place in each week ({spans})."


@sentence("injury_rest")
def _injury_rest(d: TimetableData, p: ds.InjuryRest, v: Vocab) -> str:
    return (
        f"Injury rest: because of an injury, no {p.part} {v.event} ({_join(p.events)}) may take place on any day "
        f"from {p.from_day} to {p.to_day} (both days included)."
    )


# the kinds this module registers, for callers that manage the registries themselves
DAY_SPACING_SENTENCES: dict[str, Sentence] = {
    "min_days_apart": _min_days_apart,
    "review_window": _review_window,
    "exam_dates": _exam_dates,
    "daily_load": _daily_load,
    "recovery_days": _recovery_days,
    "progression": _progression,
    "weekly_quota": _weekly_quota,
    "injury_rest": _injury_rest,
}
