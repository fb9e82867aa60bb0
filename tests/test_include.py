"""`--include`: every instance carries the named constraints, so a task type whose pool
lacks one is never drawn for the run (it used to be drawn, and emitted without it)."""

from __future__ import annotations

import pytest

from pbsolve.sampler import sample_spec


def test_a_task_type_without_the_included_constraint_has_no_spec_to_draw():
    with pytest.raises(ValueError, match="no selected task type has every constraint"):
        sample_spec(3, 0, task="meeting_planning", include=["not_in_any_pool"])


def test_a_family_run_with_an_included_constraint_draws_it_into_every_spec():
    specs = [sample_spec(3, i, family="scheduling", include=["local_incompleteness"]) for i in range(40)]
    assert all("local_incompleteness" in s.hard for s in specs)
