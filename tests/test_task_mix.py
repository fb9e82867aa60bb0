"""Which task type instance ``index`` of a run gets: shuffled rounds over the selected task
types, so a sample dataset (the demo's 36 instances) shows every one of them."""

from __future__ import annotations

from collections import Counter

from pbsolve.family import all_tasks, family
from pbsolve.sampler import sample_spec

ALL = sorted(t.id for t in all_tasks())


def test_every_round_of_indices_holds_each_task_type_once() -> None:
    n = len(ALL)
    for block in range(4):
        tasks = [sample_spec(0, block * n + k).task for k in range(n)]
        assert sorted(tasks) == ALL


def test_a_family_run_rounds_over_that_familys_task_types() -> None:
    ids = sorted(t.id for t in family("scheduling").spec.tasks)
    tasks = Counter(sample_spec(5, i, family="scheduling").task for i in range(3 * len(ids)))
    assert set(tasks) == set(ids) and set(tasks.values()) == {3}


def test_the_rounds_are_shuffled_differently_per_round_and_per_seed() -> None:
    n = len(ALL)
    orders = {tuple(sample_spec(seed, block * n + k).task for k in range(n)) for seed in range(3) for block in range(3)}
    assert len(orders) > 1


def test_the_demo_sample_of_36_instances_covers_every_task_type() -> None:
    assert {sample_spec(0, i).task for i in range(36)} == set(ALL)


def test_a_spec_depends_only_on_the_seed_and_its_index() -> None:
    forward = [sample_spec(2, i) for i in range(25)]
    backward = [sample_spec(2, i) for i in reversed(range(25))][::-1]
    assert forward == backward
