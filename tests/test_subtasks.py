"""Subtasks: every task type has at least five structural variants, `--subtask` selects one,
and the timetabling variants carry the structure their names promise."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from pbsolve.cli.main import app
from pbsolve.family import families
from pbsolve.sampler import sample_spec
from pbsolve.schema import Instance
from tests.instances import subtask_instances

ALL_TASKS = [t for fam in families().values() for t in fam.spec.tasks]


def _instances(task: str, subtask: str, n: int = 3, size: str = "small") -> list[Instance]:
    return subtask_instances(task, subtask, n, size)


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.id)
def test_every_task_type_has_at_least_five_subtasks(task):
    assert len(task.subtasks) >= 5, [s.id for s in task.subtasks]
    assert len({s.id for s in task.subtasks}) == len(task.subtasks)


def test_subtask_ids_are_unique_across_task_types():
    ids = [s.id for t in ALL_TASKS for s in t.subtasks]
    assert len(ids) == len(set(ids))


def test_a_chosen_subtask_is_the_subtask_of_every_spec():
    specs = [sample_spec(0, i, task="exam_scheduling", subtask="oral_exams") for i in range(20)]
    assert {s.subtask for s in specs} == {"oral_exams"}


def test_a_subtask_alone_selects_its_task_type():
    assert sample_spec(0, 0, subtask="joint_degree").task == "course_timetabling"


def test_choosing_a_subtask_leaves_every_other_draw_of_the_spec_unchanged():
    free, chosen = sample_spec(4, 2, task="meeting_planning"), sample_spec(4, 2, task="meeting_planning", subtask="client_visit")
    assert chosen.model_copy(update={"subtask": free.subtask}) == free


def test_an_unknown_subtask_is_a_clear_error_naming_it():
    with pytest.raises(KeyError, match="subtask='board_games'"):
        sample_spec(0, 0, task="meeting_planning", subtask="board_games")


def test_the_cli_refuses_a_subtask_of_another_task_type(tmp_path):
    result = CliRunner().invoke(
        app, ["generate", "--task", "meeting_planning", "--subtask", "oral_exams", "--n", "1", "--out", str(tmp_path / "x.jsonl")]
    )
    assert result.exit_code != 0
    assert "no task matches" in result.output and "oral_exams" in result.output
    assert not (tmp_path / "x.jsonl").exists()


# -- the timetabling variants ------------------------------------------------------------
def test_a_client_visit_has_a_client_in_at_least_half_the_meetings_which_alone_have_top_priority():
    for inst in _instances("meeting_planning", "client_visit"):
        client = [p["id"] for p in inst.data["people"] if p["role"] == "client"]
        assert len(client) == 1
        events = inst.data["events"]
        theirs = [e for e in events if client[0] in e["people"]]
        assert 2 * len(theirs) >= len(events) and len(theirs) >= 2
        assert {e["priority"] for e in theirs} == {3}
        assert {e["priority"] for e in events if e not in theirs} <= {1}
        assert f"{client[0]} (client)" in inst.prompt


def test_seminar_groups_have_one_lecture_per_course_and_one_seminar_per_group_of_it():
    for inst in _instances("course_timetabling", "seminar_groups"):
        groups = {p["id"] for p in inst.data["people"] if p["role"] == "group"}
        lectures = [e for e in inst.data["events"] if e["series"]]
        seminars = [e for e in inst.data["events"] if not e["series"]]
        assert len({e["series"] for e in lectures}) == len(lectures)  # one lecture per course
        for lecture in lectures:
            course, members = lecture["series"], [p for p in lecture["people"] if p in groups]
            mine = [e for e in seminars if e["id"].startswith(f"{course}-S")]
            assert sorted(p for e in mine for p in e["people"] if p in groups) == sorted(members)
            assert all(len(e["people"]) == 2 for e in mine)  # a tutor and one group


def test_in_a_joint_degree_every_group_takes_every_lecture():
    for inst in _instances("course_timetabling", "joint_degree"):
        groups = {p["id"] for p in inst.data["people"] if p["role"] == "group"}
        assert all(groups <= set(e["people"]) for e in inst.data["events"])


def test_every_oral_exam_has_exactly_one_examiner_and_the_same_day_figure_counts_cohorts_only():
    for inst in _instances("exam_scheduling", "oral_exams"):
        examiners = {p["id"] for p in inst.data["people"] if p["role"] == "examiner"}
        assert len(examiners) >= 2
        assert all(len(examiners & set(e["people"])) == 1 for e in inst.data["events"])
        same_day = next(t for t in inst.objective if t.kind == "same_day_pairs")
        assert not examiners & set(same_day.params["people"])
