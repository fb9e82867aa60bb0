"""Constraint kinds that only some subtasks admit (``ConstraintSpec.subtasks``): the
sampler never draws them elsewhere, ``--include`` of one draws only admitting subtasks,
and a taxonomy naming an unknown subtask is refused where it is written."""

from __future__ import annotations

import pytest

from pbsolve.family import find_task
from pbsolve.sampler import sample_spec
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec

TASK = "commuting_planning"  # escort: school runs only; parking_spaces: outward trips only


def restricted() -> dict[str, tuple[str, ...]]:
    return {c.id: c.subtasks for c in find_task(TASK).pool if c.subtasks}


def test_the_commuting_pool_restricts_escort_and_parking_spaces():
    assert restricted() == {
        "parking_spaces": ("morning_commute", "park_and_ride", "school_run", "night_shift"),
        "escort": ("school_run",),
    }


def test_a_restricted_kind_is_never_drawn_for_a_subtask_that_does_not_admit_it():
    drawn_where: dict[str, set[str]] = {k: set() for k in restricted()}
    for index in range(400):
        spec = sample_spec(3, index, task=TASK)
        for kind in (*spec.basic, *spec.medium, *spec.hard, *spec.stateful):
            if kind in drawn_where:
                drawn_where[kind].add(spec.subtask)
    for kind, subtasks in restricted().items():
        assert drawn_where[kind], f"{kind} never drawn in 400 specs"
        assert drawn_where[kind] <= set(subtasks), (kind, drawn_where[kind])


def test_including_a_restricted_kind_draws_only_subtasks_that_admit_it():
    specs = [sample_spec(5, index, task=TASK, include=["escort"]) for index in range(30)]
    assert {s.subtask for s in specs} == {"school_run"}
    assert all("escort" in s.medium for s in specs)


def test_including_a_kind_the_chosen_subtask_does_not_admit_is_a_clear_error():
    with pytest.raises(ValueError, match=r"\['escort'\] do not apply to subtask night_shift of commuting_planning"):
        sample_spec(5, 0, task=TASK, include=["escort"], subtask="night_shift")


def test_unrestricted_kinds_are_drawn_for_every_subtask():
    seen = {sample_spec(7, i, task=TASK).subtask for i in range(60)}
    assert seen == {s.id for s in find_task(TASK).subtasks}


def test_a_constraint_naming_an_unknown_subtask_is_refused_by_the_taxonomy():
    with pytest.raises(ValueError, match=r"constraint c names unknown subtasks \['nowhere'\]"):
        TaskSpec(
            id="t", name="T", family="f", summary="s",
            subtasks=(SubtaskSpec("here", "Here", "the only one"),),
            pool=(ConstraintSpec("c", "basic", "a kind", subtasks=("nowhere",)),),
        )  # fmt: skip
