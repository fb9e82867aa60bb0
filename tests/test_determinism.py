"""Same spec and seed, same bytes: whatever the number of worker processes."""

from __future__ import annotations

from pbsolve.generate import GenerateOptions, build_instance, generate
from pbsolve.jsonl import dumps


def _bytes(workers: int) -> list[str]:
    return [dumps(o.instance) for o in generate(6, 42, GenerateOptions(size="small"), workers) if o.instance]


def test_one_and_two_workers_give_identical_bytes():
    one = _bytes(1)
    assert one and one == _bytes(2)


def test_an_instance_rebuilt_alone_matches_its_run():
    run = list(generate(4, 9, GenerateOptions(size="small"), 1))
    alone = build_instance(9, 3, GenerateOptions(size="small"))
    assert run[3].instance is not None
    assert dumps(alone.instance) == dumps(run[3].instance)


def test_different_seeds_give_different_instances():
    a = build_instance(1, 0, GenerateOptions(size="small")).instance
    b = build_instance(2, 0, GenerateOptions(size="small")).instance
    assert a is not None and b is not None and a.id != b.id and a.prompt != b.prompt
