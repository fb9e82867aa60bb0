"""Scheduling & Timetabling family: placing activities in time and rooms."""

from __future__ import annotations

import random

from ortools.sat.python import cp_model

from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.family import Draft, SolverModel
from pbsolve.models.scheduling import course_timetabling, exam_scheduling, meeting_planning
from pbsolve.models.scheduling.timetable_model import build
from pbsolve.schema import GenerationSpec, Rule
from pbsolve.taxonomy import FamilySpec

TASK_MODULES = {m.TASK.id: m for m in (meeting_planning, course_timetabling, exam_scheduling)}


class SchedulingFamily:
    spec = FamilySpec(
        id="scheduling",
        name="Scheduling & Timetabling",
        summary="placing activities in time under windows, mutual exclusion, sequencing and durations",
        tasks=tuple(m.TASK for m in TASK_MODULES.values()),
    )

    def draft(self, spec: GenerationSpec, rng: random.Random) -> Draft:
        module = TASK_MODULES[spec.task]
        tiers = {c.id: c.tier for c in module.TASK.pool}
        return module.recipe(spec).draft(spec, rng, tiers)

    def build_model(self, draft: Draft) -> SolverModel:
        return build(draft)

    def make_infeasible(self, draft: Draft, rng: random.Random) -> Draft | None:
        """Add a deadline on two events that no plan can meet, the latest such deadline.

        Events sharing a person are preferred, so the conflict runs through the rules
        rather than through the deadline alone.
        """
        data = TimetableData.model_validate(draft.data)
        events = list(data.events)
        pairs = [(a, b) for i, a in enumerate(events) for b in events[i + 1 :] if set(a.people) & set(b.people)]
        if not pairs:
            pairs = [(a, b) for i, a in enumerate(events) for b in events[i + 1 :]]
        rng.shuffle(pairs)
        # the conflict rule goes to a random place among the sampled rules, so neither its
        # number nor its position marks it
        n_base = sum(1 for r in draft.rules if r.kind in TASK_MODULES[draft.spec.task].TASK.base_rules)
        position = rng.randint(n_base, len(draft.rules))
        for a, b in pairs[:4]:
            candidates = sorted({s for e in (a, b) for s in data.starts(e)})
            best: Draft | None = None
            for s in candidates:  # earliest first; keep the latest deadline still infeasible
                last = s + max(a.duration, b.duration) - 1
                if last >= len(data.slots):
                    continue
                rule = Rule(id="", kind="deadline", tier="hard", params={"events": [a.id, b.id], "to": data.slots[last].id})
                rules = [*draft.rules[:position], rule, *draft.rules[position:]]
                rules = [r.model_copy(update={"id": f"R{i}"}) for i, r in enumerate(rules, 1)]
                trial = Draft(
                    spec=draft.spec,
                    data=draft.data,
                    rules=rules,
                    objective=draft.objective,
                    hard_kinds={"infeasibility_detection": [f"R{position + 1}"]},
                )
                if _feasible(trial):
                    break
                best = trial
            if best is not None:
                return best
        return None


def _feasible(draft: Draft) -> bool:
    sm = build(draft)
    sm.model.add_assumptions(list(sm.rule_literals.values()))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_deterministic_time = 10.0
    status = solver.solve(sm.model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE):
        raise TimeoutError("feasibility check did not finish")
    return status != cp_model.INFEASIBLE


FAMILY = SchedulingFamily()
