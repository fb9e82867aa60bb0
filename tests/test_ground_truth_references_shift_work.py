"""A hand-written instance whose rules name what its data does not have is refused as a
ground truth, with the rule and the name, before any answer is graded: never a checker
crash mid-grade (``Params.data_problems``, checked once per instance by the grader)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pbsolve.checkers.workforce import shift_duty as sd
from pbsolve.checkers.workforce import work_assignment as wa
from pbsolve.grading import InvalidGroundTruth, grade
from pbsolve.llm.responders import oracle
from pbsolve.params import Params, unknown
from pbsolve.schema import Instance
from tests.reference_helpers import refusal, with_params

STORED = Path(__file__).parent / "data" / "mutation_moves_workforce.jsonl"


def _stored(task: str, kind: str | None = None) -> Instance:
    """A fresh copy of the first stored (generated and certified) instance of ``task`` with a rule of ``kind``."""
    for line in STORED.read_text().splitlines():
        inst = json.loads(line)["instance"]
        if inst["task"] == task and (kind is None or kind in {r["kind"] for r in inst["rules"]}):
            return Instance.model_validate(inst)
    raise AssertionError(f"no stored {task} instance with a {kind} rule")


WORK = _stored("work_assignment_scheduling", "cumulative_rest")
DUTY = _stored("shift_duty_scheduling", "max_hours")
WORK_DATA = wa.WorkData.model_validate(WORK.data)
DUTY_DATA = sd.ShiftDutyData.model_validate(DUTY.data)


# -- the grader ---------------------------------------------------------------------------------
def test_a_rest_checkpoint_on_the_last_day_is_refused_with_its_reason():
    last = WORK_DATA.days[-1]
    why = refusal(with_params(WORK, "cumulative_rest", day=last))
    assert "not a valid ground truth" in why
    assert f"(cumulative_rest): the checkpoint {last!r} is the last day" in why


def test_a_rest_checkpoint_on_an_unknown_day_is_refused_naming_the_day():
    assert "(cumulative_rest): unknown day 'Sun'" in refusal(with_params(WORK, "cumulative_rest", day="Sun"))


def test_a_roster_rule_naming_an_unknown_person_is_refused_naming_the_person():
    why = refusal(with_params(DUTY, "max_hours", people=[DUTY_DATA.staff[0].id, "Zed"]))
    assert "(max_hours): unknown person 'Zed'" in why


def test_a_data_model_that_cannot_answer_what_a_rule_names_is_a_grader_error_not_an_invalid_instance(monkeypatch):
    from pbsolve.grading import GradingError

    def broken(self: object, what: str) -> set[str]:
        raise KeyError(what)

    monkeypatch.setattr(wa.WorkData, "names", broken)
    inst = Instance.model_validate(WORK.model_dump(mode="json"))
    with pytest.raises(GradingError, match=r"cannot check what instance .* rules name: KeyError") as info:
        grade(inst, oracle(inst))
    assert not isinstance(info.value, InvalidGroundTruth)


def test_stored_instances_of_both_tasks_still_grade():
    for inst in (WORK, DUTY):
        assert grade(inst, oracle(inst)).all_pass == 1


# -- unknown(): the message ---------------------------------------------------------------------
def test_unknown_lists_missing_names_once_each_in_order():
    assert unknown("day", ["b", "x", "a", "x", "y"], {"a", "b"}) == ["unknown day 'x', 'y'"]


def test_unknown_names_five_and_counts_the_rest():
    assert unknown("task", [f"t{k}" for k in range(7)], set()) == [
        "unknown task 't0', 't1', 't2', 't3', 't4' (+2 more)"
    ]


def test_unknown_says_nothing_when_every_name_is_known():
    assert unknown("day", ["a"], {"a"}) == []


# -- every parameter model that names data ------------------------------------------------------
def _work_params() -> list[tuple[Params, str]]:
    d = WORK_DATA
    w, t, day = d.workers[0].id, d.tasks[0].id, d.days[0]
    return [
        (wa.HardDeadline(tasks=[t, "T?"]), "unknown task 'T?'"),
        (wa.WeeklyHours(workers=[w, "W?"], max=8), "unknown worker 'W?'"),
        (wa.WorkerAbsent(worker="W?", days=[day]), "unknown worker 'W?'"),
        (wa.WorkerAbsent(worker=w, days=["D?"]), "unknown day 'D?'"),
        (wa.NotBefore(task="T?", day=day), "unknown task 'T?'"),
        (wa.NotBefore(task=t, day="D?"), "unknown day 'D?'"),
        (wa.Precedence(pairs=[(t, "T?")]), "unknown task 'T?'"),
        (wa.Precedence(pairs=[("T?", t)]), "unknown task 'T?'"),
        (wa.DifferentWorker(pairs=[(t, "T?")]), "unknown task 'T?'"),
        (wa.DifferentWorker(pairs=[("T?", t)]), "unknown task 'T?'"),
        (wa.SameWorker(tasks=[t, "T?"]), "unknown task 'T?'"),
        (wa.MinHours(workers=["W?"], min=1), "unknown worker 'W?'"),
        (wa.CumulativeRest(day="D?", hours=1, light=0), "unknown day 'D?'"),
        (wa.CurrentTasks(existing={"T?": (w, day)}), "unknown task 'T?'"),
        (wa.CurrentTasks(existing={t: ("W?", day)}), "unknown worker 'W?'"),
        (wa.CurrentTasks(existing={t: (w, "D?")}), "unknown day 'D?'"),
    ]


def _duty_params() -> list[tuple[Params, str]]:
    d = DUTY_DATA
    p, s, day = d.staff[0].id, d.shifts[0].id, d.days[0].id
    k = next(k for x in d.staff for k in x.skills)
    return [
        (sd.SkillCover(skill=k, min=1, slots=[("D?", s)]), "unknown day 'D?'"),
        (sd.SkillCover(skill=k, min=1, slots=[(day, "S?")]), "unknown shift 'S?'"),
        (sd.SkillCover(skill="K?", min=1, slots=[(day, s)]), "unknown skill 'K?'"),
        (sd.MaxHours(people=["P?"], max=8), "unknown person 'P?'"),
        (sd.MinHours(people=["P?"], min=8), "unknown person 'P?'"),
        (sd.CompleteWeekends(people=["P?"]), "unknown person 'P?'"),
        (sd.WeekendCap(people=["P?"], max=1), "unknown person 'P?'"),
        (sd.ForbiddenSuccession(first="S?", then=s), "unknown shift 'S?'"),
        (sd.ForbiddenSuccession(first=s, then="S?"), "unknown shift 'S?'"),
        (sd.ShiftBan(person="P?", shifts=[s]), "unknown person 'P?'"),
        (sd.ShiftBan(person=p, shifts=["S?"]), "unknown shift 'S?'"),
        (sd.ShiftBalance(shift="S?", max=1), "unknown shift 'S?'"),
        (sd.NightFatigue(shift="S?", run=2, rest=1), "unknown shift 'S?'"),
        (sd.UnsocialMax(shift="S?"), "unknown shift 'S?'"),
        (sd.PersonAbsent(person="P?", days=[day]), "unknown person 'P?'"),
        (sd.PersonAbsent(person=p, days=["D?"]), "unknown day 'D?'"),
        (sd.CurrentRoster(existing=[("P?", day, s)]), "unknown person 'P?'"),
        (sd.CurrentRoster(existing=[(p, "D?", s)]), "unknown day 'D?'"),
        (sd.CurrentRoster(existing=[(p, day, "S?")]), "unknown shift 'S?'"),
    ]


@pytest.mark.parametrize(("params", "problem"), _work_params(), ids=lambda x: type(x).__name__)
def test_a_work_assignment_parameter_naming_what_the_data_lacks_is_a_problem(params: Params, problem: str):
    assert params.data_problems(WORK_DATA) == [problem]


@pytest.mark.parametrize(("params", "problem"), _duty_params(), ids=lambda x: type(x).__name__)
def test_a_shift_duty_parameter_naming_what_the_data_lacks_is_a_problem(params: Params, problem: str):
    assert params.data_problems(DUTY_DATA) == [problem]


def test_parameters_naming_only_what_the_data_has_have_no_problem():
    d, e = WORK_DATA, DUTY_DATA
    w, t, day = d.workers[0].id, d.tasks[0].id, d.days[0]
    p, s, dday = e.staff[0].id, e.shifts[0].id, e.days[0].id
    fine: list[tuple[Params, Any]] = [
        (wa.CumulativeRest(day=d.days[-2], hours=1, light=0), d),
        (wa.CurrentTasks(existing={t: (w, day)}), d),
        (wa.Precedence(pairs=[(t, d.tasks[-1].id)]), d),
        (sd.CurrentRoster(existing=[(p, dday, s)]), e),
        (sd.SkillCover(skill=next(k for x in e.staff for k in x.skills), min=1, slots=[(dday, s)]), e),
        (sd.ShiftBan(person=p, shifts=[s]), e),
    ]
    assert [x.data_problems(data) for x, data in fine] == [[] for _ in fine]
