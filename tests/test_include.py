"""`--include`: every instance carries the named constraints. A task type whose pool lacks
one (study and fitness planning leave local incompleteness out) is never drawn for such a
run, rather than drawn and emitted without it."""

from __future__ import annotations

import pytest

from pbsolve.family import all_tasks
from pbsolve.sampler import sample_spec

WITHOUT = [t.id for t in all_tasks() if "local_incompleteness" not in {c.id for c in t.pool}]


def test_some_task_type_leaves_local_incompleteness_out_of_its_pool():
    assert WITHOUT  # else the tests below check nothing


def test_a_family_run_with_an_included_constraint_draws_only_task_types_that_have_it():
    specs = [sample_spec(3, i, family="scheduling", include=["local_incompleteness"]) for i in range(60)]
    assert not {s.task for s in specs} & set(WITHOUT)
    assert all("local_incompleteness" in s.hard for s in specs)


def test_a_task_type_without_the_included_constraint_has_no_spec_to_draw():
    with pytest.raises(ValueError, match="no selected task type has every constraint"):
        sample_spec(3, 0, task=WITHOUT[0], include=["local_incompleteness"])


def test_a_run_without_include_draws_every_task_type_of_the_family():
    tasks = {sample_spec(3, i, family="scheduling").task for i in range(200)}
    assert set(WITHOUT) <= tasks
