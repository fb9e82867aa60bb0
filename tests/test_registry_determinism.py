"""Every registered family (the toy family included): the same spec and seed give the same
bytes, whatever the number of worker processes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pbsolve.generate import GenerateOptions, build_instance, generate
from pbsolve.jsonl import dumps
from tests.family_adapters import registry_tasks, toy_family_registered

TASKS = registry_tasks()


def _families() -> list[str | None]:
    from pbsolve.family import families

    with toy_family_registered():
        return [None, *families()]  # None: every family mixed, as a plain `pbsolve generate`


FAMILIES = _families()


@pytest.fixture(autouse=True)
def _registry() -> Iterator[None]:
    with toy_family_registered():
        yield


def _bytes(fid: str | None, workers: int) -> list[str]:
    return [dumps(o.instance) for o in generate(6, 42, GenerateOptions(family=fid, size="small"), workers) if o.instance]


@pytest.mark.parametrize("fid", FAMILIES)
def test_one_and_two_workers_give_identical_bytes(fid):
    one = _bytes(fid, 1)
    assert one and one == _bytes(fid, 2)


@pytest.mark.parametrize("fid", FAMILIES)
def test_an_instance_rebuilt_alone_matches_its_run(fid):
    opts = GenerateOptions(family=fid, size="small")
    run = [o for o in generate(6, 9, opts, 1) if o.instance is not None]
    last = run[-1]  # the last certified index of the run, rebuilt on its own
    assert last.index >= 3
    alone = build_instance(9, last.index, opts)
    assert dumps(alone.instance) == dumps(last.instance)


@pytest.mark.parametrize("task", TASKS)
def test_the_same_seed_gives_the_same_bytes_for_every_task_type(task):
    opts = GenerateOptions(task=task, size="small", force_tiers=["hard"])
    built = [(build_instance(5, i, opts).instance, build_instance(5, i, opts).instance) for i in range(3)]
    assert any(first is not None for first, _ in built)
    for first, again in built:
        assert (first is None) == (again is None) and (first is None or dumps(first) == dumps(again))


@pytest.mark.parametrize("task", TASKS)
def test_different_seeds_give_different_instances(task):
    a = build_instance(1, 0, GenerateOptions(task=task, size="small")).instance
    b = build_instance(2, 0, GenerateOptions(task=task, size="small")).instance
    assert a is not None and b is not None and a.id != b.id and a.prompt != b.prompt
