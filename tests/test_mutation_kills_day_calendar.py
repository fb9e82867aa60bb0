"""Behaviours of the day-spacing and campaign-calendar checks that the mutation campaign
(issue 19) found no test pinning down: each test is an answer that must pass or fail, and
why. The solver model encodes the same rules on its own; these hold the checker to the
sentences the prompt states."""

from __future__ import annotations

from pbsolve.checkers.scheduling import calendar_checks as cc
from pbsolve.checkers.scheduling import calendar_params as cp
from pbsolve.checkers.scheduling import day_spacing as ds
from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.checks import CHECKS
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, Slot, TimetableData
from pbsolve.models.scheduling.common import period_slots

FORTNIGHT = tuple(f"W{w} {d}" for w in (1, 2) for d in ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"))
ROOM = (Room(id="Track", seats=4, cost=0),)


def _plan(data: TimetableData, days: dict[str, int]) -> dict[str, tuple[int, str]]:
    """Each event in the first period of the given day (one period a day)."""
    return {eid: (day, "Track") for eid, day in days.items()}


def _fortnight(n: int) -> TimetableData:
    return TimetableData(
        time_unit="period",
        days=FORTNIGHT,
        slots=tuple(period_slots(list(FORTNIGHT), 1)),
        rooms=ROOM,
        people=(Person(id="Ana", role="athlete"),),
        events=tuple(Event(id=f"RUN{i + 1}", name=f"Run {i + 1}", duration=1, people=("Ana",), size=1) for i in range(n)),
    )


def holds(kind: str, data: TimetableData, plan: dict, params: object) -> bool:
    return CHECKS[kind](data, plan, params)[0]


# -- weekly quota -------------------------------------------------------------------------
def test_a_fortnight_has_two_weeks_so_a_plan_meeting_the_quota_in_both_passes() -> None:
    data = _fortnight(2)
    quota = ds.WeeklyQuota(events=["RUN1", "RUN2"], min=1, days_per_week=7)
    assert holds("weekly_quota", data, _plan(data, {"RUN1": 0, "RUN2": 7}), quota)  # W1 Mon, W2 Mon


def test_two_sessions_in_a_week_meet_a_quota_of_two() -> None:
    data = _fortnight(4)
    quota = ds.WeeklyQuota(events=["RUN1", "RUN2", "RUN3", "RUN4"], min=2, days_per_week=7)
    assert holds("weekly_quota", data, _plan(data, {"RUN1": 0, "RUN2": 2, "RUN3": 8, "RUN4": 10}), quota)


def test_one_session_in_a_week_misses_a_quota_of_two() -> None:
    data = _fortnight(4)
    quota = ds.WeeklyQuota(events=["RUN1", "RUN2", "RUN3", "RUN4"], min=2, days_per_week=7)
    assert not holds("weekly_quota", data, _plan(data, {"RUN1": 0, "RUN2": 8, "RUN3": 9, "RUN4": 10}), quota)


# -- injury rest and daily load -------------------------------------------------------------
def test_a_session_on_the_last_day_of_an_injury_rest_breaks_it() -> None:
    data = _fortnight(1)
    rest = ds.InjuryRest(part="knee", events=["RUN1"], from_day="W1 Tue", to_day="W1 Thu")
    assert not holds("injury_rest", data, _plan(data, {"RUN1": 3}), rest)  # W1 Thu, both ends included
    assert holds("injury_rest", data, _plan(data, {"RUN1": 4}), rest)  # W1 Fri


def test_events_without_load_points_add_nothing_to_the_daily_load() -> None:
    data = _fortnight(3)
    load = ds.DailyLoad(person="Ana", max=3, load={"RUN1": 3})  # RUN2 and RUN3 carry no points
    assert holds("daily_load", data, _plan(data, {"RUN1": 0, "RUN2": 0, "RUN3": 0}), load)
    assert not holds("daily_load", data, _plan(data, {"RUN1": 0, "RUN2": 0, "RUN3": 0}), load.model_copy(update={"max": 2}))


# -- consecutive busy slots -------------------------------------------------------------------
def test_a_run_of_busy_slots_ends_with_the_day() -> None:
    """Busy in the last period of Mon and the first of Tue is two runs of one, not one of two."""
    days = ["Mon", "Tue"]
    data = TimetableData(
        time_unit="period",
        days=tuple(days),
        slots=tuple(period_slots(days, 2)),
        rooms=ROOM,
        people=(Person(id="Ana", role="student"),),
        events=tuple(Event(id=f"S{i}", name=f"S{i}", duration=1, people=("Ana",), size=1) for i in (1, 2)),
    )
    cap = rp.MaxConsecutive(person="Ana", max=1)
    assert holds("max_consecutive", data, {"S1": (1, "Track"), "S2": (2, "Track")}, cap)  # Mon P2, Tue P1
    assert not holds("max_consecutive", data, {"S1": (0, "Track"), "S2": (1, "Track")}, cap)  # Mon P1, Mon P2


# -- local clock hours past midnight ------------------------------------------------------------
def _campaign(hour_utc: int) -> TimetableData:
    return TimetableData(
        time_unit="period",
        days=("Mon",),
        slots=(Slot(id=f"Mon {hour_utc:02d}:00", day=0, value=hour_utc, end_label=f"Mon {hour_utc + 1:02d}:00"),),
        rooms=(Room(id="Pool", seats=50, cost=1),),
        people=(Person(id="Tokyo", role="UTC+9, 10 thousand recipients"),),
        events=(Event(id="M1", name="Launch", duration=1, people=("Tokyo",), size=10),),
    )


def test_a_send_window_reads_the_local_hour_after_midnight() -> None:
    """20:00 UTC is 05:00 in Tokyo (UTC+9): inside a 05:00-08:00 window, outside 06:00-08:00."""
    data = _campaign(20)
    plan = {"M1": (0, "Pool")}
    window = cp.LocalSendWindow(segment="Tokyo", utc_offset=9, earliest=5, latest=8)
    assert holds("local_send_window", data, plan, window)
    assert not holds("local_send_window", data, plan, window.model_copy(update={"earliest": 6}))


def test_the_open_loss_charges_the_local_hour_after_midnight() -> None:
    """20:00 UTC in Tokyo is 05:00: the penalty of hour 5 is charged, per thousand recipients."""
    data = _campaign(20)
    penalty = [0] * 24
    penalty[5] = 3
    penalty[4] = 1
    loss = cp.OpenLoss(offsets={"Tokyo": 9}, audience={"Tokyo": 10}, penalty=penalty)
    assert cc._open_loss(data, {"M1": (0, "Pool")}, loss) == 30
