"""The taxonomy registry: families -> task types -> subtasks and tiered constraint pools.

The registry holds data only. Families contribute their entries by shipping a package
under ``pbsolve.models`` that exposes ``FAMILY`` (see :mod:`pbsolve.family`); the core
discovers them, so adding a family never edits this file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pbsolve.schema import Tier

# Count priors from the PlanningBench paper: how many sampled constraints per tier.
COUNT_PRIORS: dict[Tier, dict[int, float]] = {
    "basic": {1: 0.2, 2: 0.6, 3: 0.2},
    "medium": {0: 0.25, 1: 0.55, 2: 0.2},
    "hard": {0: 0.7, 1: 0.3},
    "stateful": {0: 1.0},
}

FAMILY_IDS = ("scheduling", "allocation", "workforce", "routing", "project", "emergency")


@dataclass(frozen=True)
class ConstraintSpec:
    """A constraint of a task's pool. ``requires``/``excludes`` are compatibility rules."""

    id: str
    tier: Tier
    summary: str
    requires: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    subtasks: tuple[str, ...] = ()  # only these subtasks' data admit the kind (empty: every subtask)

    def applies_to(self, subtask: str | None) -> bool:
        return not self.subtasks or subtask is None or subtask in self.subtasks


@dataclass(frozen=True)
class SubtaskSpec:
    id: str
    name: str
    summary: str


@dataclass(frozen=True)
class TaskSpec:
    id: str
    name: str
    family: str
    summary: str
    subtasks: tuple[SubtaskSpec, ...]
    pool: tuple[ConstraintSpec, ...]
    base_rules: tuple[str, ...] = field(default=())  # always-present structural rules, by kind

    def __post_init__(self) -> None:
        known = {s.id for s in self.subtasks}
        for c in self.pool:
            unknown = [s for s in c.subtasks if s not in known]
            if unknown:
                raise ValueError(f"task {self.id}: constraint {c.id} names unknown subtasks {unknown}")

    def pool_of(self, tier: Tier) -> tuple[ConstraintSpec, ...]:
        return tuple(c for c in self.pool if c.tier == tier)

    def constraint(self, cid: str) -> ConstraintSpec:
        for c in self.pool:
            if c.id == cid:
                return c
        raise KeyError(f"task {self.id!r} has no constraint {cid!r}")


@dataclass(frozen=True)
class FamilySpec:
    id: str
    name: str
    summary: str
    tasks: tuple[TaskSpec, ...]

    def task(self, task_id: str) -> TaskSpec:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(f"family {self.id!r} has no task {task_id!r}")


# The mechanisms every task lists after its own constraints (implemented once in the
# core: pbsolve.mechanisms); infeasibility detection excludes the others.
_OTHER_HARD = (
    "min_change_replanning",
    "robustness_design",
    "exception_recovery",
    "local_incompleteness",
    "explainability",
)


def mechanism_pool(
    robust: str,
    replan: str = "repair a disrupted plan with the fewest changes",
    incompleteness_requires: tuple[str, ...] = (),
    robust_excludes: tuple[str, ...] = (),
) -> tuple[ConstraintSpec, ...]:
    """The reporting rule and the six hard mechanisms, as every task lists them.

    ``robust`` and ``replan`` say what robustness and replanning mean for the task;
    ``incompleteness_requires`` names rules whose presence makes uncertain inputs
    meaningful; ``robust_excludes`` names rules robustness contradicts outright.
    """
    return (
        ConstraintSpec("conflict_validation", "medium", "a verification section whose figures must match the plan"),
        ConstraintSpec("infeasibility_detection", "hard", "recognise an impossible request and name a minimal conflict", excludes=_OTHER_HARD),
        ConstraintSpec("min_change_replanning", "hard", replan),
        ConstraintSpec("robustness_design", "hard", robust, excludes=robust_excludes),
        ConstraintSpec(
            "exception_recovery", "hard", "a certified recovery plan for a named scenario",
            excludes=("min_change_replanning", "robustness_design"),
        ),
        ConstraintSpec("local_incompleteness", "hard", "plan for ranges; name the inputs whose worst case costs", requires=incompleteness_requires),
        ConstraintSpec("explainability", "hard", "name the rules that bind the optimum"),
    )  # fmt: skip


# The pool ids that name mechanisms rather than constraint kinds.
MECHANISM_IDS = frozenset(c.id for c in mechanism_pool(""))


def check_compatible(task: TaskSpec, chosen: list[str]) -> str | None:
    """Return why a constraint subset is not admissible, or None when it is."""
    if len(set(chosen)) != len(chosen):
        return "duplicate constraint"
    ids = set(chosen)
    for cid in chosen:
        spec = task.constraint(cid)
        missing = [r for r in spec.requires if r not in ids and r not in task.base_rules]
        if missing:
            return f"{cid} requires {missing}"
        clash = [x for x in spec.excludes if x in ids]
        if clash:
            return f"{cid} excludes {clash}"
    return None
