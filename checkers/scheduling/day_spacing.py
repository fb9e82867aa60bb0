"""Day-spacing rules of multi-day plans (study and training plans): parameters and checks.

A plan spans several days; these rules read only the *day* on which each event starts
(its position in the instance's day list, counted from 0) and compare days: sessions
of one subject kept apart, a review a few days after the first session, exams after
the last session of their subject, recovery days after an intense workout, weekly
goals, an injury rest period. Each check is written from its sentence, without the
solver model (which encodes the same rules on its own), so the two can be compared.
"""

from __future__ import annotations

import itertools
from typing import Annotated, Any

from pydantic import Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checkers.scheduling.checks import Plan, Verdict, check
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.checkers.scheduling.refs import DayName, EventName, PersonName
from pbsolve.checkers.scheduling.rule_params import RULE_PARAMS
from pbsolve.params import Params

OK: Verdict = (True, "holds")
Group = Annotated[list[EventName], Field(min_length=2)]


# -- parameters ----------------------------------------------------------------------
class MinDaysApart(Params):
    """Any two of ``events`` start on days whose numbers differ by at least ``days``."""

    events: Group
    days: PositiveInt


class ReviewPair(Params):
    """A review session and the first session of its subject."""

    first: EventName
    review: EventName


class ReviewWindow(Params):
    """Each pair's ``review`` starts on a day ``min_days`` .. ``max_days`` days after the
    day of its ``first`` (both bounds included)."""

    pairs: Annotated[list[ReviewPair], Field(min_length=1)]
    min_days: PositiveInt
    max_days: PositiveInt

    @model_validator(mode="after")
    def _ordered(self) -> ReviewWindow:
        if self.min_days > self.max_days:
            raise ValueError("min_days must not exceed max_days")
        return self


class Exam(Params):
    """The exam of ``subject`` is on ``day`` (a day name); ``sessions`` study for it."""

    subject: str
    day: DayName
    sessions: Annotated[list[EventName], Field(min_length=1)]


class ExamDates(Params):
    """Every session of each exam starts on a day before the exam's day."""

    exams: Annotated[list[Exam], Field(min_length=1)]


class DailyLoad(Params):
    """The ``load`` points of ``person``'s events starting on one day add up to at most ``max``."""

    person: PersonName
    max: NonNegativeInt
    load: dict[EventName, PositiveInt]


class RecoveryDays(Params):
    """After an ``intense`` session of ``group`` on day d, no other session of ``trains``
    starts on day d or on any of the ``days`` days after it."""

    group: str
    intense: Annotated[list[EventName], Field(min_length=1)]
    trains: Group
    days: PositiveInt


class Progression(Params):
    """``events`` in this order, each starting ``min_days`` .. ``max_days`` days after the
    day of the one before (both bounds included)."""

    events: Group
    min_days: PositiveInt
    max_days: PositiveInt

    @model_validator(mode="after")
    def _ordered(self) -> Progression:
        if self.min_days > self.max_days:
            raise ValueError("min_days must not exceed max_days")
        return self


class WeeklyQuota(Params):
    """In each week (days 0..days_per_week-1, the next days_per_week, ...; the last week
    may be shorter), at least ``min`` of ``events`` start."""

    events: Group
    min: PositiveInt
    days_per_week: PositiveInt


class InjuryRest(Params):
    """None of ``events`` starts on a day from ``from_day`` to ``to_day`` (day names,
    both included)."""

    part: str
    events: Annotated[list[EventName], Field(min_length=1)]
    from_day: DayName
    to_day: DayName

    def data_problems(self, data: Any) -> list[str]:
        # a period ending before it starts has no day: the rule would hold for every plan
        found = super().data_problems(data)
        if not found and data.days.index(self.from_day) > data.days.index(self.to_day):
            found.append(
                f"the rest period starts on {self.from_day!r}, after it ends on {self.to_day!r}: it has no day"
            )
        return found


DAY_SPACING_PARAMS: dict[str, type[Params]] = {
    "min_days_apart": MinDaysApart,
    "review_window": ReviewWindow,
    "exam_dates": ExamDates,
    "daily_load": DailyLoad,
    "recovery_days": RecoveryDays,
    "progression": Progression,
    "weekly_quota": WeeklyQuota,
    "injury_rest": InjuryRest,
}
RULE_PARAMS.update(DAY_SPACING_PARAMS)  # registration: the family's one kind table


# -- checks --------------------------------------------------------------------------
def _day(d: TimetableData, plan: Plan, eid: str) -> int:
    """The number of the day (0 = the first listed day) on which ``eid`` starts."""
    return d.slots[plan[eid][0]].day


def _day_number(d: TimetableData, name: str) -> int:
    return d.days.index(name)


@check("min_days_apart")
def _min_days_apart(d: TimetableData, plan: Plan, p: MinDaysApart) -> Verdict:
    for a, b in itertools.combinations(p.events, 2):
        gap = abs(_day(d, plan, a) - _day(d, plan, b))
        if gap < p.days:
            return (
                False,
                f"{a} ({d.days[_day(d, plan, a)]}) and {b} ({d.days[_day(d, plan, b)]}) are {gap} day(s) apart",
            )
    return OK


@check("review_window")
def _review_window(d: TimetableData, plan: Plan, p: ReviewWindow) -> Verdict:
    for pair in p.pairs:
        after = _day(d, plan, pair.review) - _day(d, plan, pair.first)
        if not p.min_days <= after <= p.max_days:
            return False, f"{pair.review} is {after} day(s) after {pair.first} (needs {p.min_days} to {p.max_days})"
    return OK


@check("exam_dates")
def _exam_dates(d: TimetableData, plan: Plan, p: ExamDates) -> Verdict:
    for exam in p.exams:
        limit = _day_number(d, exam.day)
        for eid in exam.sessions:
            if _day(d, plan, eid) >= limit:
                return (
                    False,
                    f"{eid} is on {d.days[_day(d, plan, eid)]}, not before the {exam.subject} exam on {exam.day}",
                )
    return OK


@check("daily_load")
def _daily_load(d: TimetableData, plan: Plan, p: DailyLoad) -> Verdict:
    totals = [0] * len(d.days)
    for eid, _ in d.spans_of(p.person):
        totals[_day(d, plan, eid)] += p.load.get(eid, 0)
    for day, total in enumerate(totals):
        if total > p.max:
            return False, f"{p.person} has {total} load points on {d.days[day]} (max {p.max})"
    return OK


@check("recovery_days")
def _recovery_days(d: TimetableData, plan: Plan, p: RecoveryDays) -> Verdict:
    for hard in p.intense:
        start = _day(d, plan, hard)
        for other in p.trains:
            if other == hard:
                continue
            after = _day(d, plan, other) - start
            if 0 <= after <= p.days:
                when = "the same day" if after == 0 else f"{after} day(s) later"
                return False, f"{other} trains {p.group} {when} than intense {hard} (needs {p.days} recovery day(s))"
    return OK


@check("progression")
def _progression(d: TimetableData, plan: Plan, p: Progression) -> Verdict:
    for a, b in itertools.pairwise(p.events):
        after = _day(d, plan, b) - _day(d, plan, a)
        if not p.min_days <= after <= p.max_days:
            return False, f"{b} is {after} day(s) after {a} (needs {p.min_days} to {p.max_days})"
    return OK


@check("weekly_quota")
def _weekly_quota(d: TimetableData, plan: Plan, p: WeeklyQuota) -> Verdict:
    weeks = (len(d.days) + p.days_per_week - 1) // p.days_per_week
    counts = [0] * weeks
    for eid in p.events:
        counts[_day(d, plan, eid) // p.days_per_week] += 1
    for week, n in enumerate(counts):
        if n < p.min:
            return False, f"week {week + 1} has {n} of the listed sessions (needs at least {p.min})"
    return OK


@check("injury_rest")
def _injury_rest(d: TimetableData, plan: Plan, p: InjuryRest) -> Verdict:
    lo, hi = _day_number(d, p.from_day), _day_number(d, p.to_day)
    for eid in p.events:
        day = _day(d, plan, eid)
        if lo <= day <= hi:
            return False, f"{eid} is on {d.days[day]}, inside the {p.part} rest from {p.from_day} to {p.to_day}"
    return OK
