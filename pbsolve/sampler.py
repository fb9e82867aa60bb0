"""Index-seeded sampling of generation specs from the taxonomy.

Instance i of a run with seed s depends on (s, i) alone, so any instance can be rebuilt
by itself and runs shard trivially across processes or machines.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

from pbsolve.family import all_tasks
from pbsolve.schema import TIERS, GenerationSpec, Size, Tier
from pbsolve.taxonomy import COUNT_PRIORS, TaskSpec, check_compatible


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any parts, stable across Python versions and platforms."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _draw(rng: random.Random, prior: dict[int, float]) -> int:
    values = sorted(prior)
    return rng.choices(values, weights=[prior[v] for v in values])[0]


def select_tasks(family: str | None = None, task: str | None = None, subtask: str | None = None) -> list[TaskSpec]:
    """The task types matching every filter given (a subtask selects the task types that have it)."""
    tasks = [
        t
        for t in all_tasks()
        if (family is None or t.family == family)
        and (task is None or t.id == task)
        and (subtask is None or subtask in {s.id for s in t.subtasks})
    ]
    if not tasks:
        which = f"family={family!r} task={task!r}" + (f" subtask={subtask!r}" if subtask is not None else "")
        raise KeyError(f"no task matches {which}; see `pbsolve taxonomy`")
    return tasks


def sample_constraints(
    task: TaskSpec,
    rng: random.Random,
    counts: dict[Tier, int] | None = None,
    force_tiers: Sequence[Tier] = (),
    include: Sequence[str] = (),
    tries: int = 50,
    subtask: str | None = None,
) -> dict[Tier, list[str]]:
    """Constraint subsets per tier, drawn without replacement and checked for compatibility.

    ``include`` names constraints that must be drawn (when the task's pool has them);
    they count towards their tier's number. Kinds that do not apply to ``subtask`` (see
    :attr:`ConstraintSpec.subtasks`) are never drawn.
    """
    ids = {c.id for c in task.pool}
    inapplicable = [c for c in include if c in ids and not task.constraint(c).applies_to(subtask)]
    if inapplicable:
        raise ValueError(f"{inapplicable} do not apply to subtask {subtask} of {task.id}")
    for _ in range(tries):
        chosen: dict[Tier, list[str]] = {}
        for tier in TIERS:
            pool = [c.id for c in task.pool_of(tier) if c.id not in task.base_rules and c.applies_to(subtask)]
            must = [c for c in include if c in pool]
            n = counts[tier] if counts and tier in counts else _draw(rng, COUNT_PRIORS[tier])
            if tier in force_tiers:
                n = max(n, 1)
            if n > len(pool) and tier in force_tiers:
                raise ValueError(f"task {task.id} has no {tier} constraints to force")
            rest = [c for c in pool if c not in must]
            chosen[tier] = must + rng.sample(rest, max(0, min(n, len(pool)) - len(must)))
        if check_compatible(task, [c for tier in TIERS for c in chosen[tier]]) is None:
            return chosen
    missing = [c for c in include if c not in ids]
    detail = f" ({missing} not in its pool)" if missing else ""
    raise ValueError(f"no compatible constraint subset for {task.id} after {tries} tries{detail}")


def sample_spec(
    run_seed: int,
    index: int,
    attempt: int = 0,
    family: str | None = None,
    task: str | None = None,
    size: Size = "default",
    counts: dict[Tier, int] | None = None,
    force_tiers: Sequence[Tier] = (),
    include: Sequence[str] = (),
    subtask: str | None = None,
) -> GenerationSpec:
    """The spec of instance ``index``: its task type, subtask and sampled rule kinds
    (``subtask``: that subtask always, else one drawn uniformly). Task types are drawn in
    shuffled rounds, so any n indices hold every task type about n / len(tasks) times (a
    sample dataset shows them all) and instance ``index`` still depends on nothing else."""
    tasks = select_tasks(family, task, subtask)
    if include:  # every instance carries them: only task types whose pool has them all are drawn
        tasks = [t for t in tasks if set(include) <= {c.id for c in t.pool}]
        if not tasks:
            raise ValueError(f"no selected task type has every constraint of {list(include)} in its pool")
    rng = random.Random(derive_seed("task", run_seed, index))
    chosen_task = rng.choice(tasks)  # drawn even when replaced below: the subtask draw that follows stays as it was
    if len(tasks) > 1:  # stratified: every run of len(tasks) indices from a multiple of it has each task once
        block, position = divmod(index, len(tasks))
        order = list(tasks)
        random.Random(derive_seed("task-order", run_seed, block)).shuffle(order)
        chosen_task = order[position]
    pool = {c.id: c for c in chosen_task.pool}
    admitting = [  # a subtask some included kind does not apply to is never drawn
        s for s in chosen_task.subtasks if all(pool[c].applies_to(s.id) for c in include if c in pool)
    ]
    if not admitting:
        raise ValueError(f"no subtask of {chosen_task.id} admits every constraint of {list(include)}")
    drawn = rng.choice(admitting).id
    subtask = subtask or drawn
    crng = random.Random(derive_seed("constraints", run_seed, index, attempt))
    chosen = sample_constraints(chosen_task, crng, counts, force_tiers, include, subtask=subtask)
    return GenerationSpec(
        family=chosen_task.family,
        task=chosen_task.id,
        subtask=subtask,
        basic=chosen["basic"],
        medium=chosen["medium"],
        hard=chosen["hard"],
        stateful=chosen["stateful"],
        seed=derive_seed("instance", run_seed, index, attempt),
        size=size,
    )
