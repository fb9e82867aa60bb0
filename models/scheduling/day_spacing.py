"""Day-spacing rules of multi-day plans: CP-SAT encodings and witness-based builders.

Every rule compares the days on which events start. The day of an event is the linear
expression sum(day(s) * at(e, s)); rules on day differences are posted on it directly,
rules on day pairs as forbidden pairs of (event, day) choices. Builders read the planted
witness and return parameters it satisfies, or None when the rule could not bind.
"""

from __future__ import annotations

import itertools
import random

from ortools.sat.python import cp_model

from pbsolve.checkers.scheduling import day_spacing as ds
from pbsolve.checkers.scheduling.instance_data import Event, TimetableData
from pbsolve.models.scheduling.common import RULE_BUILDERS, Witness
from pbsolve.models.scheduling.timetable_model import TimetableModel, encoder, forbid, post


def day_of(tm: TimetableModel, e: Event) -> cp_model.LinearExpr:
    """The number of the day on which ``e`` starts."""
    return tm.by_start(lambda _, s: tm.data.slots[s].day, [e])


def _forbid_day_pairs(tm: TimetableModel, a: Event, b: Event, bad: list[int], lit: cp_model.IntVar) -> None:
    """Forbid ``b`` starting ``k`` days after ``a`` for every k in ``bad`` (k may be negative)."""
    for da in tm.days():
        for k in bad:
            db = da + k
            if 0 <= db < len(tm.data.days):
                post(tm, cp_model.LinearExpr.sum([tm.on_day(a, da), tm.on_day(b, db)]) <= 1, lit)


# -- encoders ----------------------------------------------------------------------------
@encoder("min_days_apart")
def _min_days_apart(tm: TimetableModel, params: ds.MinDaysApart, lit: cp_model.IntVar) -> None:
    group = [tm.data.event_by_id[eid] for eid in params.events]
    close = list(range(-params.days + 1, params.days))
    for a, b in itertools.combinations(group, 2):
        _forbid_day_pairs(tm, a, b, close, lit)


@encoder("review_window")
def _review_window(tm: TimetableModel, params: ds.ReviewWindow, lit: cp_model.IntVar) -> None:
    for pair in params.pairs:
        gap = day_of(tm, tm.data.event_by_id[pair.review]) - day_of(tm, tm.data.event_by_id[pair.first])
        post(tm, gap >= params.min_days, lit)
        post(tm, gap <= params.max_days, lit)


@encoder("exam_dates")
def _exam_dates(tm: TimetableModel, params: ds.ExamDates, lit: cp_model.IntVar) -> None:
    xs: list[cp_model.IntVar] = []
    for exam in params.exams:
        limit = tm.data.days.index(exam.day)
        for eid in exam.sessions:
            e = tm.data.event_by_id[eid]
            xs += [v for s in tm.starts[eid] if tm.data.slots[s].day >= limit for v in tm.cells(e, s)]
    forbid(tm, xs, lit)


@encoder("daily_load")
def _daily_load(tm: TimetableModel, params: ds.DailyLoad, lit: cp_model.IntVar) -> None:
    mine = [e for e in tm.events_of(params.person) if e.id in params.load]
    if sum(params.load[e.id] for e in mine) <= params.max:
        return
    for d in tm.days():
        post(tm, sum(params.load[e.id] * tm.on_day(e, d) for e in mine) <= params.max, lit)


@encoder("recovery_days")
def _recovery_days(tm: TimetableModel, params: ds.RecoveryDays, lit: cp_model.IntVar) -> None:
    after = list(range(0, params.days + 1))
    for hid in params.intense:
        hard = tm.data.event_by_id[hid]
        for oid in params.trains:
            if oid != hid:
                _forbid_day_pairs(tm, hard, tm.data.event_by_id[oid], after, lit)


@encoder("progression")
def _progression(tm: TimetableModel, params: ds.Progression, lit: cp_model.IntVar) -> None:
    chain = [tm.data.event_by_id[eid] for eid in params.events]
    for a, b in itertools.pairwise(chain):
        gap = day_of(tm, b) - day_of(tm, a)
        post(tm, gap >= params.min_days, lit)
        post(tm, gap <= params.max_days, lit)


@encoder("weekly_quota")
def _weekly_quota(tm: TimetableModel, params: ds.WeeklyQuota, lit: cp_model.IntVar) -> None:
    group = [tm.data.event_by_id[eid] for eid in params.events]
    n, w = len(tm.data.days), params.days_per_week
    for first in range(0, n, w):
        week = range(first, min(first + w, n))
        post(tm, sum(tm.on_day(e, d) for e in group for d in week) >= params.min, lit)


@encoder("injury_rest")
def _injury_rest(tm: TimetableModel, params: ds.InjuryRest, lit: cp_model.IntVar) -> None:
    lo, hi = tm.data.days.index(params.from_day), tm.data.days.index(params.to_day)
    xs: list[cp_model.IntVar] = []
    for eid in params.events:
        e = tm.data.event_by_id[eid]
        xs += [v for s in tm.starts[eid] if lo <= tm.data.slots[s].day <= hi for v in tm.cells(e, s)]
    forbid(tm, xs, lit)


# -- witness-based builders --------------------------------------------------------------
def wday(data: TimetableData, witness: Witness, eid: str) -> int:
    """The day on which the witness starts ``eid``."""
    return data.slots[witness[eid][0]].day


def series_groups(data: TimetableData, minimum: int = 2) -> list[list[Event]]:
    """The numbered series (subjects, muscle groups) with at least ``minimum`` events."""
    return [m for m in data.series_members().values() if len(m) >= minimum]


def build_min_days_apart(data: TimetableData, witness: Witness, rng: random.Random) -> ds.MinDaysApart | None:
    """A series whose witness days are pairwise apart, with the smallest such spacing
    (at most 3 days); None when no series is spread over distinct days."""
    options = []
    for group in series_groups(data):
        days = [wday(data, witness, e.id) for e in group]
        spacing = min(abs(a - b) for a, b in itertools.combinations(days, 2))
        if spacing >= 1:
            options.append(ds.MinDaysApart(events=[e.id for e in group], days=min(spacing, 3)))
    return rng.choice(options) if options else None


def review_pairs(data: TimetableData) -> list[ds.ReviewPair]:
    """(first session, review session) per subject: a series whose last event's name
    ends in 'review'."""
    return [ds.ReviewPair(first=g[0].id, review=g[-1].id) for g in series_groups(data) if g[-1].name.endswith("review")]


def build_review_window(data: TimetableData, witness: Witness, rng: random.Random) -> ds.ReviewWindow | None:
    """The review pairs the witness holds on different days, with the tightest window of
    days their gaps allow (a day of slack on either side at random). Even the loosest
    window (1 day up to the whole plan) binds: it forbids a same-day review."""
    pairs = [p for p in review_pairs(data) if wday(data, witness, p.review) > wday(data, witness, p.first)]
    if not pairs:
        return None
    gaps = [wday(data, witness, p.review) - wday(data, witness, p.first) for p in pairs]
    lo = max(1, min(gaps) - rng.randint(0, 1))
    hi = max(gaps) + rng.randint(0, 1)
    return ds.ReviewWindow(pairs=pairs, min_days=lo, max_days=hi)


def build_exam_dates(data: TimetableData, witness: Witness, rng: random.Random) -> ds.ExamDates | None:
    """One exam per subject, one or two days after the witness's last session of it
    (never past the last day)."""
    exams = []
    last_day = len(data.days) - 1
    for group in series_groups(data, 1):
        last = max(wday(data, witness, e.id) for e in group)
        if last >= last_day:
            return None
        day = min(last_day, last + 1 + rng.randint(0, 1))
        subject = group[0].name.rsplit(" ", 1)[0]
        exams.append(ds.Exam(subject=subject, day=data.days[day], sessions=[e.id for e in group]))
    return ds.ExamDates(exams=exams) if exams else None


def build_daily_load(data: TimetableData, witness: Witness, rng: random.Random) -> ds.DailyLoad | None:
    """A person's events weighted by their ``priority`` (difficulty, intensity); the
    largest day total of the witness as the cap; None when one day could never exceed it."""
    options = []
    for p in data.people:
        mine = [e for e in data.events if p.id in e.people]
        load = {e.id: e.priority for e in mine}
        totals = [0] * len(data.days)
        for e in mine:
            totals[wday(data, witness, e.id)] += load[e.id]
        cap = max(totals)
        per_day = max(sum(1 for s in data.slots if s.day == d) for d in range(len(data.days)))
        heaviest = sum(sorted(load.values(), reverse=True)[:per_day])
        if cap < heaviest:
            options.append(ds.DailyLoad(person=p.id, max=cap, load=load))
    return rng.choice(options) if options else None


def intense_of(group: list[Event]) -> list[Event]:
    """The intense sessions of a muscle group: intensity (priority) 3."""
    return [e for e in group if e.priority >= 3]


def build_recovery_days(data: TimetableData, witness: Witness, rng: random.Random) -> ds.RecoveryDays | None:
    """A muscle group with an intense session; the most recovery days (at most 3) the
    witness leaves after each intense session before the group's next session."""
    options = []
    for group in series_groups(data):
        hard = intense_of(group)
        if not hard:
            continue
        rest = []
        for h in hard:
            later = [
                wday(data, witness, o.id) - wday(data, witness, h.id)
                for o in group
                if o.id != h.id and wday(data, witness, o.id) >= wday(data, witness, h.id)
            ]
            rest.append(min(later) - 1 if later else 3)
        k = min(min(rest), 3)
        if k >= 1:
            muscle = group[0].name.rsplit(" ", 1)[0]
            options.append(
                ds.RecoveryDays(group=muscle, intense=[h.id for h in hard], trains=[e.id for e in group], days=k)
            )
    return rng.choice(options) if options else None


def build_progression(data: TimetableData, witness: Witness, rng: random.Random) -> ds.Progression | None:
    """A series whose witness days strictly increase; the window of day gaps it uses,
    a day of slack on the upper side at random."""
    options = []
    for group in series_groups(data):
        gaps = [wday(data, witness, b.id) - wday(data, witness, a.id) for a, b in itertools.pairwise(group)]
        if min(gaps) >= 1:
            options.append(
                ds.Progression(events=[e.id for e in group], min_days=min(gaps), max_days=max(gaps) + rng.randint(0, 1))
            )
    return rng.choice(options) if options else None


DAYS_PER_WEEK = 7


def build_weekly_quota(data: TimetableData, witness: Witness, rng: random.Random) -> ds.WeeklyQuota | None:
    """A series of at least three sessions; the fewest the witness puts in one week as
    the weekly minimum. None on a single week (every session would be in it)."""
    n = len(data.days)
    weeks = (n + DAYS_PER_WEEK - 1) // DAYS_PER_WEEK
    if weeks < 2:
        return None
    options = []
    for group in series_groups(data, 3):
        counts = [0] * weeks
        for e in group:
            counts[wday(data, witness, e.id) // DAYS_PER_WEEK] += 1
        if min(counts) >= 1:
            options.append(ds.WeeklyQuota(events=[e.id for e in group], min=min(counts), days_per_week=DAYS_PER_WEEK))
    return rng.choice(options) if options else None


def build_injury_rest(data: TimetableData, witness: Witness, rng: random.Random) -> ds.InjuryRest | None:
    """A muscle group's sessions kept off a run of days the witness leaves free of
    them (two to four days, starting on the first day when it can)."""
    options = []
    for group in series_groups(data, 1):
        used = {wday(data, witness, e.id) for e in group}
        for lo in range(len(data.days)):
            hi = lo
            while hi + 1 < len(data.days) and hi + 1 not in used and hi + 1 - lo < 3:
                hi += 1
            if lo not in used and hi > lo:
                part = group[0].name.rsplit(" ", 1)[0]
                options.append((lo, ds.InjuryRest(part=part, events=[e.id for e in group],
                                                  from_day=data.days[lo], to_day=data.days[hi])))  # fmt: skip
    if not options:
        return None
    first = min(lo for lo, _ in options)
    early = [o for lo, o in options if lo == first]
    return rng.choice(early if rng.random() < 0.6 else [o for _, o in options])


DAY_SPACING_BUILDERS = {
    "min_days_apart": build_min_days_apart,
    "review_window": build_review_window,
    "exam_dates": build_exam_dates,
    "daily_load": build_daily_load,
    "recovery_days": build_recovery_days,
    "progression": build_progression,
    "weekly_quota": build_weekly_quota,
    "injury_rest": build_injury_rest,
}
for _kind, _builder in DAY_SPACING_BUILDERS.items():
    RULE_BUILDERS.add(_kind, _builder)
