"""The family-specific parts of the registry suite (tests/test_registry_*.py), in one place.

Everything the registry tests need that only a family knows: how its plans become CP-SAT
variable values, the single moves and exhaustive plans of an instance, and how a plan is
written as an answer. Reading and judging go through each task's
:class:`pbsolve.checking.TaskChecker`. A new family adds one adapter here; the toy family
(tests/toy_family) is registered for the suite by :func:`toy_family_registered`.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from ortools.sat.python import cp_model

from pbsolve.checking import TaskChecker
from pbsolve.params import TypedParams
from pbsolve.family import FAMILY_PATH_ENV, family, find_task, reload_registry
from pbsolve.schema import Instance, ObjectiveTerm, Rule
from tests import allocation_helpers as alloc
from tests import helpers as sched
from tests.task_adapters import TaskAdapter, adapters_in
from tests.instances import draft_of, find, instance_at  # noqa: F401 (re-exported)

TOY_PATH = "toy=tests.toy_family"
# a tiny timetable with more plans than this is left out of the brute-force suite: judging
# 330,000 plans took 70 s for one test (most tiny timetables have under 5,000)
MAX_TIMETABLE_PLANS = 25_000


@contextmanager
def toy_family_registered() -> Iterator[None]:
    """The registry with the toy family added (through ``PBSOLVE_FAMILY_PATH``, as a third
    party would register one), restored afterwards."""
    before = os.environ.get(FAMILY_PATH_ENV)
    os.environ[FAMILY_PATH_ENV] = ",".join(filter(None, [before, TOY_PATH]))
    reload_registry()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(FAMILY_PATH_ENV, None)
        else:
            os.environ[FAMILY_PATH_ENV] = before
        reload_registry()


def registry_tasks() -> list[str]:
    """Every task type of every registered family (the toy family included), for parametrising."""
    from pbsolve.family import all_tasks

    with toy_family_registered():
        return [t.id for t in all_tasks()]


@dataclass(frozen=True)
class Outcome:
    """One complete plan, judged by the checker alone."""

    key: str
    plan: Any
    satisfied: frozenset[str]
    values: tuple[int, ...]


class Adapter:
    """One family's test-side knowledge; plans are the task checker's plans."""

    family: str
    seeds: range = range(4)  # brute-force seeds per task type
    mechanism_seeds: range = range(4)  # brute-force seeds per task type and mechanism
    # floors of found tiny instances: per "task" or summed over the "family"
    found_floor: tuple[str, int, int, int] = ("task", 3, 3, 2)  # (scope, feasible, infeasible, per mechanism)
    conflicts_run_through_rules = False  # every conflict set has >= 2 rules
    uncertain_range_in_prompt = False  # the prompt states an uncertain input as "low–high" of its data
    moves_sampled = 6  # single moves judged rule by rule per example
    # pool kinds a task's small instances almost never admit (covered by a sibling task)
    rarely_sampled: ClassVar[dict[str, set[str]]] = {}
    every_check_seen = False  # the fixed sample reaches every kind the checker knows
    opt_in_kinds: ClassVar[set[str]] = set()  # ... but these opt-in ones

    def tc(self, task: str) -> TaskChecker:
        raise NotImplementedError

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        """Variable name -> value of every non-zero answer variable of the CP-SAT model."""
        raise NotImplementedError

    def fixes(self, name: str, plan: Any) -> bool:
        """Is this answer variable stated by the plan (fixed when the plan is put into the model)?"""
        return True

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        raise NotImplementedError

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        raise NotImplementedError

    def answer_rows(self, inst: Instance, plan: Any) -> Any:
        raise NotImplementedError

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        """The answer rows of a `changes` term's `existing` parameter (the current plan)."""
        raise NotImplementedError

    def existing_plan(self, inst: Instance, existing: Any) -> Any:
        """The checker plan of a `changes` term's `existing` parameter."""
        return self.plan_of(inst, {self.tc(inst.task).plan_key: self.existing_rows(inst, existing)})

    def robust_reference_ok(self, inst: Instance) -> bool:
        """Does a robustness instance's reference state what robustness asks (e.g. backups)?"""
        return True

    def enumerable(self, inst: Instance) -> bool:
        """Are the instance's plans few enough for the brute-force suite (every plan judged
        by the checker, about 0.1-1 ms each)? Families whose tiny size is always small say yes."""
        return True

    # -- generic, through the task checker ------------------------------------------------
    def data(self, inst: Instance, data: dict | None = None) -> Any:
        return self.tc(inst.task).data_type.model_validate(inst.data if data is None else data)

    def plan_of(self, inst: Instance, answer: dict, rules: list[Rule] | None = None) -> Any:
        tc, d = self.tc(inst.task), self.data(inst)
        plan, why = tc.read_section(inst, d, answer, tc.lookups(d), list(inst.rules) if rules is None else rules)
        assert plan is not None, why
        return plan

    def evaluate(self, inst: Instance, plan: Any, rules: list[Rule] | None = None,
                 objective: list[ObjectiveTerm] | None = None, data: dict | None = None) -> tuple[dict, dict]:  # fmt: skip
        rules = list(inst.rules) if rules is None else rules
        return self.tc(inst.task).evaluate(
            self.data(inst, data), rules, list(inst.objective) if objective is None else objective, plan
        )

    def answer_of(self, inst: Instance, plan: Any, base: dict | None = None) -> dict:
        """An answer stating this plan and its own figures (other sections copied from ``base``)."""
        _, values = self.evaluate(inst, plan)
        return {
            **(base or {}),
            "feasible": True,
            self.tc(inst.task).plan_key: self.answer_rows(inst, plan),
            "objective": values,
        }

    def baseline(self, inst: Instance) -> str:
        """The family checker's baseline answer (a plan, usually wrong)."""
        from pbsolve.family import checker

        return checker(inst.family).baseline_answer(inst)

    def plan_key(self, inst: Instance, plan: Any) -> str:
        return repr(sorted(self.assignment(inst, plan).items()))

    def model_verdict(self, inst: Instance, plan: Any, rule_ids: list[str], data: dict | None = None,
                      rules: list[Rule] | None = None, objective: list[ObjectiveTerm] | None = None) -> tuple[bool, dict[str, int]]:  # fmt: skip
        """Does the solver model accept this plan with only these rules on? Also its figures."""
        sm = family(inst.family).build_model(draft_of(inst, data, rules, objective))
        values = self.assignment(inst, plan)
        for var in [*sm.answer_literals, *sm.answer_ints]:
            if self.fixes(var.name, plan):
                sm.model.add(var == values.get(var.name, 0))
        for rid, lit in sm.rule_literals.items():
            sm.model.add(lit == (1 if rid in rule_ids else 0))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        status = solver.solve(sm.model)
        assert status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE), solver.status_name(status)
        if status == cp_model.INFEASIBLE:
            return False, {}
        return True, {tid: int(solver.value(expr)) for tid, expr, _ in sm.objective_terms}

    def outcomes(self, inst: Instance, rules: list[Rule] | None = None, objective: list[ObjectiveTerm] | None = None,
                 data: dict | None = None) -> list[Outcome]:  # fmt: skip
        """Every plan of a tiny instance, judged by the checker. The data is validated and
        the parameters parsed once for all plans (as grading does per instance): a fresh
        data object per plan would recompute its lookups every time."""
        rules = list(inst.rules) if rules is None else rules
        objective = list(inst.objective) if objective is None else objective
        tc, d = self.tc(inst.task), self.data(inst, data)
        typed = TypedParams(tc.rule_params, tc.term_params, [*rules, *objective])
        out = []
        for plan in self.all_plans(inst, data, rules):
            verdicts, values = tc.evaluate(d, rules, objective, plan, typed)
            ok = frozenset(r for r, (passed, _) in verdicts.items() if passed)
            out.append(Outcome(self.plan_key(inst, plan), plan, ok, tuple(values[t.id] for t in objective)))
        return out


class Scheduling(Adapter):
    family = "scheduling"
    seeds = range(10)
    mechanism_seeds = range(6)
    found_floor = ("family", 24, 20, 6)
    # a buffer needs two same-day events of one person with a gap in the witness: at small
    # size lectures and exams rarely give one (0 of 60 drafts at seed 7); meetings do
    rarely_sampled: ClassVar[dict[str, set[str]]] = {
        "course_timetabling": {"person_buffer"},
        "exam_scheduling": {"person_buffer"},
    }
    # one person's packed days rarely leave a gap, a run or a light day to cap (perturb breaks each on --include runs)
    rarely_sampled |= {"study_planning": {"person_buffer", "max_consecutive"}, "fitness_planning": {"daily_load"}}
    # a small agenda has 2 days and few activities a day: rarely a set on pairwise different days to keep
    rarely_sampled |= {"schedule_planning": {"different_days"}}
    # a small calendar's staff have one or two tasks a day, back to back in production order
    rarely_sampled |= {"content_scheduling": {"person_buffer"}}
    every_check_seen = True
    opt_in_kinds: ClassVar[set[str]] = {"room_cooldown", "fatigue_protocol", "battery_level", "frequency_cap"}  # tests/test_stateful.py, test_email_scheduling.py

    def tc(self, task: str) -> TaskChecker:
        from pbsolve.checkers.scheduling.checks import TIMETABLE

        return TIMETABLE

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        starts, backups = plan
        out = {f"x[{e},{s},{room}]": 1 for e, (s, room) in starts.items()}
        return out | {f"b[{e},{room}]": 1 for e, room in (backups or {}).items()}

    def fixes(self, name: str, plan: Any) -> bool:
        return plan[1] is not None or not name.startswith("b[")

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        return ((q, plan[1]) for q in sched.single_moves(inst, plan[0]))

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self.data(inst, data)
        ids = [e.id for e in d.events]
        options = [[(s, r.id) for s in d.starts(e) for r in d.rooms] for e in d.events]
        with_backups = any(r.kind == "room_backup" for r in rules)
        backup_options = list(itertools.product(*[[r.id for r in d.rooms]] * len(ids))) if with_backups else [None]
        for combo in itertools.product(*options):
            for bs in backup_options:
                yield dict(zip(ids, combo)), (dict(zip(ids, bs)) if bs is not None else None)

    def answer_rows(self, inst: Instance, plan: Any) -> Any:
        return sched.answer_of(inst, plan[0], {}, plan[1])["schedule"]

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"event": e, "start": s, "room": r} for e, (s, r) in existing.items()]

    def existing_plan(self, inst: Instance, existing: Any) -> Any:
        slot = {s["id"]: i for i, s in enumerate(inst.data["slots"])}
        return {e: (slot[s], room) for e, (s, room) in existing.items()}, None

    def robust_reference_ok(self, inst: Instance) -> bool:
        return sched.backups_of(inst.reference) is not None

    def enumerable(self, inst: Instance) -> bool:
        d = self.data(inst)
        plans = math.prod(len(list(d.starts(e))) * len(d.rooms) for e in d.events)
        if any(r.kind == "room_backup" for r in inst.rules):
            plans *= len(d.rooms) ** len(d.events)
        return plans <= MAX_TIMETABLE_PLANS


class Allocation(Adapter):
    family = "allocation"
    # six seeds: a mechanism's tiny instances come from 3 in 4 seeds, so four left the floor
    # of two to the luck of which subtasks the seeds draw
    mechanism_seeds = range(6)
    conflicts_run_through_rules = True
    uncertain_range_in_prompt = True
    moves_sampled = 5

    def tc(self, task: str) -> TaskChecker:
        return alloc.tc_of(task)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        return alloc.assignment(inst, plan)

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        return alloc.single_moves(inst, plan)

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        return alloc.all_plans(inst, data, rules)

    def answer_rows(self, inst: Instance, plan: Any) -> Any:
        return alloc.tc_of(inst.task).plan_json(alloc.data_of(inst), plan)

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        task = inst.task
        if task == "procurement_planning":
            return [{"quantity": q, "supplier": s, "item": i, "week": w} for s, i, w, q in existing]
        if task == "material_allocation":
            return [{"units": q, "depot": x, "site": s, "material": m} for x, s, m, q in existing]
        if task == "educational_resource_planning":
            return [{"lesson": x, "teacher": t, "room": r} for x, (t, r) in existing.items()]
        return existing

    def existing_plan(self, inst: Instance, existing: Any) -> Any:
        rows = {self.tc(inst.task).plan_key: self.existing_rows(inst, existing)}
        return alloc.plan_of(inst, rows, rules=[r for r in inst.rules if r.kind != "teacher_backup"])


class Toy(Adapter):
    family = "toy"
    seeds = range(6)
    found_floor = ("task", 4, 4, 0)
    conflicts_run_through_rules = True

    def tc(self, task: str) -> TaskChecker:
        from tests.toy_family.checkers import TASKS

        return TASKS[task]

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        return {f"x[{g},{t}]": 1 for g, t in plan.items()}

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        d = self.data(inst)
        for g in d.guests:
            for t in d.tables:
                if t != plan[g.id]:
                    yield {**plan, g.id: t}

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self.data(inst, data)
        for combo in itertools.product(d.tables, repeat=len(d.guests)):
            yield {g.id: t for g, t in zip(d.guests, combo)}

    def answer_rows(self, inst: Instance, plan: Any) -> Any:
        return self.tc(inst.task).plan_json(self.data(inst), plan)  # type: ignore[attr-defined]

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"guest": g, "table": t} for g, t in existing.items()]


class PerTaskFamily(Adapter):
    """A kit family's adapter: dispatches to one :class:`tests.task_adapters.TaskAdapter`
    per task type, found in the family's adapters package."""

    package: ClassVar[str]
    mechanism_seeds = range(6)
    conflicts_run_through_rules = True
    uncertain_range_in_prompt = True
    moves_sampled = 5

    def __init__(self) -> None:
        self.rarely_sampled = {t: set(a.rarely_sampled) for t, a in self.adapters().items()}

    def adapters(self) -> dict[str, TaskAdapter]:
        return adapters_in(self.package)

    def tc(self, task: str) -> TaskChecker:
        return self.adapters()[task].tc()

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        return self.adapters()[inst.task].assignment(inst, plan)

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        return self.adapters()[inst.task].single_moves(inst, plan)

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        return self.adapters()[inst.task].all_plans(inst, data, rules)

    def answer_rows(self, inst: Instance, plan: Any) -> Any:
        return self.adapters()[inst.task].answer_rows(inst, plan)

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return self.adapters()[inst.task].existing_rows(inst, existing)

    def existing_plan(self, inst: Instance, existing: Any) -> Any:
        found = self.adapters()[inst.task].existing_plan(inst, existing)
        return super().existing_plan(inst, existing) if found is None else found

    def robust_reference_ok(self, inst: Instance) -> bool:
        return self.adapters()[inst.task].robust_reference_ok(inst)

    def enumerable(self, inst: Instance) -> bool:
        return self.adapters()[inst.task].enumerable(inst)


class Workforce(PerTaskFamily):
    family = "workforce"
    package = "tests.workforce_adapters"


class Emergency(PerTaskFamily):
    family = "emergency"
    package = "tests.emergency_adapters"


class Routing(PerTaskFamily):
    family = "routing"
    package = "tests.routing_adapters"


class Project(PerTaskFamily):
    family = "project"
    package = "tests.project_adapters"


ADAPTERS: dict[str, Adapter] = {
    a.family: a for a in (Scheduling(), Allocation(), Workforce(), Emergency(), Routing(), Project(), Toy())
}


def adapter(task: str) -> Adapter:
    """The adapter of the family that owns ``task`` (call with the toy family registered)."""
    return ADAPTERS[find_task(task).family]
