"""Study planning: the day-spacing kinds it brings (exam dates, spacing, review interval,
daily load), encoder against checker on every plan of tiny timetables, the builders'
parameters on generated instances, and the structure each subtask promises."""

from __future__ import annotations

import pytest

from pbsolve.checkers.scheduling.checks import CHECKS, Plan
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, TimetableData
from pbsolve.checkers.scheduling.rule_params import RULE_PARAMS
from pbsolve.models.scheduling.common import period_slots
from pbsolve.renderers.scheduling import render_rule
from pbsolve.schema import Rule
from tests.instances import subtask_instances
from tests.test_stateful import assert_model_and_checker_agree_on_every_plan

DAYS = ["Mon", "Tue", "Wed", "Thu"]


def _ev(eid: str, series: str, difficulty: int = 1) -> Event:
    return Event(id=eid, name=eid, duration=1, people=("Ana",), size=1, priority=difficulty, series=series)


def _data(per_day: int = 1, events: list[Event] | None = None, days: list[str] = DAYS) -> TimetableData:
    evs = events or [_ev("ALG1", "ALG", 3), _ev("ALG2", "ALG", 3), _ev("ALGR", "ALG", 3)]
    return TimetableData(
        time_unit="period",
        days=tuple(days),
        slots=tuple(period_slots(days, per_day)),
        rooms=(Room(id="Desk", seats=1, cost=0),),
        people=(Person(id="Ana", role="student"),),
        events=tuple(evs),
    )


def _check(kind: str, d: TimetableData, plan: Plan, params: dict) -> tuple[bool, str]:
    return CHECKS[kind](d, plan, RULE_PARAMS[kind].model_validate(params))


def _on_days(*days: int) -> Plan:
    """ALG1, ALG2, ALGR on these day numbers (one period a day, one room)."""
    return {eid: (day, "Desk") for eid, day in zip(("ALG1", "ALG2", "ALGR"), days)}


D = _data()
EXAMS = {"exams": [{"subject": "Algebra", "day": "Thu", "sessions": ["ALG1", "ALG2", "ALGR"]}]}


# -- exam_dates ----------------------------------------------------------------------------
def test_exam_dates_accept_sessions_on_the_days_before_the_exam():
    assert _check("exam_dates", D, _on_days(0, 1, 2), EXAMS)[0]


def test_exam_dates_reject_a_session_on_the_exam_day_itself():
    ok, why = _check("exam_dates", D, _on_days(0, 1, 3), EXAMS)
    assert not ok and "ALGR" in why and "Thu" in why


# -- min_days_apart ----------------------------------------------------------------------
SPACED = {"events": ["ALG1", "ALG2", "ALGR"], "days": 2}


def test_spacing_accepts_sessions_exactly_the_minimum_apart():
    assert _check("min_days_apart", _data(days=["D0", "D1", "D2", "D3", "D4"]), _on_days(0, 2, 4), SPACED)[0]


def test_spacing_rejects_two_sessions_on_neighbouring_days():
    ok, why = _check("min_days_apart", _data(days=["D0", "D1", "D2", "D3", "D4"]), _on_days(0, 2, 3), SPACED)
    assert not ok and "ALG2" in why and "ALGR" in why


def test_spacing_compares_every_pair_not_only_neighbours_in_the_list():
    d = _data(days=["D0", "D1", "D2", "D3", "D4"])
    assert not _check("min_days_apart", d, _on_days(0, 4, 1), SPACED)[0]


# -- review_window -----------------------------------------------------------------------
REVIEW = {"pairs": [{"first": "ALG1", "review": "ALGR"}], "min_days": 2, "max_days": 3}


def test_review_accepts_both_ends_of_its_window():
    assert _check("review_window", D, _on_days(0, 0, 2), REVIEW)[0]
    assert _check("review_window", D, _on_days(0, 0, 3), REVIEW)[0]


def test_review_rejects_a_review_too_soon_after_the_first_session():
    ok, why = _check("review_window", D, _on_days(0, 0, 1), REVIEW)
    assert not ok and "1 day(s)" in why


def test_review_rejects_a_review_too_late():
    d = _data(days=["D0", "D1", "D2", "D3", "D4"])
    assert not _check("review_window", d, _on_days(0, 0, 4), REVIEW)[0]


def test_review_window_refuses_a_minimum_above_the_maximum():
    with pytest.raises(ValueError):
        RULE_PARAMS["review_window"].model_validate({**REVIEW, "min_days": 4})


# -- daily_load --------------------------------------------------------------------------
LOAD = {"person": "Ana", "max": 4, "load": {"ALG1": 3, "ALG2": 1, "ALGR": 2}}


def test_daily_load_accepts_a_day_at_exactly_the_cap():
    d = _data(per_day=2)
    assert _check("daily_load", d, {"ALG1": (0, "Desk"), "ALG2": (1, "Desk"), "ALGR": (2, "Desk")}, LOAD)[0]


def test_daily_load_rejects_a_day_over_the_cap_naming_it():
    d = _data(per_day=2)
    ok, why = _check("daily_load", d, {"ALG1": (0, "Desk"), "ALG2": (2, "Desk"), "ALGR": (1, "Desk")}, LOAD)
    assert not ok and "5 load points on Mon" in why


# -- encoder against checker, every plan of tiny timetables -------------------------------------
EXHAUSTIVE = [
    ("exam_dates", _data(per_day=2, days=["Mon", "Tue", "Wed"]), {"exams": [
        {"subject": "Algebra", "day": "Wed", "sessions": ["ALG1", "ALGR"]}]}),
    ("min_days_apart", _data(days=["D0", "D1", "D2", "D3", "D4"]), SPACED),
    ("min_days_apart", _data(per_day=2, days=["Mon", "Tue", "Wed"]), {"events": ["ALG1", "ALGR"], "days": 1}),
    ("review_window", _data(per_day=2, days=["Mon", "Tue", "Wed"]), {**REVIEW, "min_days": 1, "max_days": 1}),
    ("review_window", _data(), REVIEW),
    ("daily_load", _data(per_day=2, days=["Mon", "Tue", "Wed"]), LOAD),
]  # fmt: skip


@pytest.mark.parametrize("kind,d,params", EXHAUSTIVE, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(EXHAUSTIVE)])
def test_model_accepts_exactly_the_plans_the_checker_accepts(kind, d, params):
    assert_model_and_checker_agree_on_every_plan(kind, d, params)


@pytest.mark.parametrize("kind,d,params", EXHAUSTIVE, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(EXHAUSTIVE)])
def test_every_sentence_names_its_unit_of_days(kind, d, params):
    text = render_rule(
        Rule(id="R1", kind=kind, tier="basic", params=params), d.model_dump(mode="json"), "study_planning"
    )
    assert "day" in text or "points" in text


# -- generated instances: planted rules and subtask structure ---------------------------------
def _rules(inst, kind: str) -> list[Rule]:
    return [r for r in inst.rules if r.kind == kind]


@pytest.mark.parametrize(
    "subtask", ["exam_cram", "spaced_revision", "study_group", "working_student", "thesis_and_courses"]
)
def test_every_study_plan_carries_one_exam_date_per_subject_after_its_sessions(subtask):
    for inst in subtask_instances("study_planning", subtask, 2, "small"):
        (rule,) = _rules(inst, "exam_dates")
        subjects = {e["series"] for e in inst.data["events"]}
        assert len(rule.params["exams"]) == len(subjects)
        assert {s for x in rule.params["exams"] for s in x["sessions"]} == {e["id"] for e in inst.data["events"]}


def test_spaced_revision_ends_subjects_with_reviews_bound_by_a_review_interval():
    for inst in subtask_instances("study_planning", "spaced_revision", 3, "small"):
        reviews = [e for e in inst.data["events"] if e["name"].endswith("review")]
        assert reviews and all(e["id"].endswith("R") for e in reviews)
        (rule,) = _rules(inst, "review_window")
        assert {p["review"] for p in rule.params["pairs"]} <= {e["id"] for e in reviews}


def test_a_study_group_has_three_students_and_group_sessions_that_need_seats():
    for inst in subtask_instances("study_planning", "study_group", 3, "small"):
        assert len(inst.data["people"]) == 3
        assert all(len(e["people"]) >= 2 and e["size"] == len(e["people"]) for e in inst.data["events"])


def test_thesis_sessions_last_two_periods_and_need_a_quiet_place():
    for inst in subtask_instances("study_planning", "thesis_and_courses", 3, "small"):
        thesis = [e for e in inst.data["events"] if e["series"] == "THS"]
        assert thesis and all(e["duration"] == 2 and "quiet" in e["needs"] for e in thesis)


def test_a_working_student_has_shifts_and_says_so():
    insts = subtask_instances("study_planning", "working_student", 3, "small")
    assert any(p["unavailable"] for inst in insts for p in inst.data["people"])
    assert all("work shifts" in inst.prompt for inst in insts)
