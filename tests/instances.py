"""Instances for tests, generated once per process: by (task, seed, index), or the first of a
status carrying given mechanisms. Shared by every family's helpers and the registry suite."""

from __future__ import annotations

from collections.abc import Callable

from functools import cache

from pbsolve.family import Draft
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.schema import Instance, ObjectiveTerm, Rule


@cache
def instance_at(task: str, seed: int, index: int, size: str = "small", hard: bool = False, include: tuple[str, ...] = ()) -> Instance | None:
    opts = GenerateOptions(task=task, size=size, force_tiers=["hard"] if hard else [], include=list(include))
    return build_instance(seed, index, opts).instance


def find(
    task: str, seed: int, size: str = "small", include: tuple[str, ...] = (), status: str = "optimal", tries: int = 12,
    hard: bool | None = None, unlisted: tuple[str, ...] = (), accept: Callable[[Instance], bool] | None = None,
) -> Instance | None:  # fmt: skip
    """The first instance of this status (carrying every included mechanism but the
    ``unlisted`` ones, and passing ``accept``) at this seed; ``hard`` forces the hard tier
    (default: for infeasible)."""
    for index in range(tries):
        inst = instance_at(task, seed, index, size, status == "infeasible" if hard is None else hard, include)
        if inst is None or inst.certificate.status != status:
            continue
        if all(k in inst.mechanisms or k in unlisted for k in include) and (accept is None or accept(inst)):
            return inst
    return None


def draft_of(inst: Instance, data: dict | None = None, rules: list[Rule] | None = None, objective: list[ObjectiveTerm] | None = None) -> Draft:
    return Draft(
        spec=inst.spec,
        data=inst.data if data is None else data,
        rules=list(inst.rules) if rules is None else rules,
        objective=list(inst.objective) if objective is None else objective,
    )


def subtask_instances(task: str, subtask: str, n: int = 3, size: str = "small", tries: int = 40) -> list[Instance]:
    """The first ``n`` certified instances of one subtask (run seed 1), from at most ``tries`` indices."""
    out, index = [], 0
    while len(out) < n and index < tries:
        inst = build_instance(1, index, GenerateOptions(task=task, subtask=subtask, size=size)).instance  # type: ignore[arg-type]
        if inst is not None:
            out.append(inst)
        index += 1
    assert len(out) == n, f"{task}/{subtask}: {len(out)} instances from {index} indices"
    return out
