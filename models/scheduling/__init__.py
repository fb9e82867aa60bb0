"""Scheduling & Timetabling family: placing activities in time and rooms."""

from __future__ import annotations

import random

from pbsolve.certify import CertStats, Feasibility, SolverLimits
from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.family import Draft, Family, SolverModel
from pbsolve.kit import insert_at, insert_position
from pbsolve.models.scheduling import (  # noqa: F401 (registers)
    calendar_rules,
    content_scheduling,
    course_timetabling,
    day_spacing,
    email_scheduling,
    exam_scheduling,
    fitness_planning,
    hard,
    meeting_planning,
    places,
    schedule_planning,
    stateful,
    study_planning,
    team_building_event_planning,
)
from pbsolve.models.scheduling.timetable_model import ENCODERS, build, build_parts
from pbsolve.params import make_rule
from pbsolve.schema import GenerationSpec
from pbsolve.taxonomy import FamilySpec

TASK_MODULES = {m.TASK.id: m for m in (meeting_planning, course_timetabling, exam_scheduling)}
TASK_MODULES |= {m.TASK.id: m for m in (study_planning, fitness_planning)}
TASK_MODULES |= {m.TASK.id: m for m in (email_scheduling,)}
TASK_MODULES |= {m.TASK.id: m for m in (schedule_planning, team_building_event_planning, content_scheduling)}


class SchedulingFamily(Family):
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

    def encoder_kinds(self, task: str) -> frozenset[str]:
        self.spec.task(task)  # KeyError for a task this family does not have
        return ENCODERS.kinds()  # every timetable task shares one model

    def make_infeasible(self, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
        """Add a deadline on two events that no plan can meet: the latest such deadline.

        Events sharing a person are preferred, so the conflict runs through the rules
        rather than through the deadline alone. Tighter deadlines only remove plans, so
        the latest infeasible one is found by bisection over the candidate end slots;
        every probe posts its deadline into one model of the draft, behind its own
        literal, and is solved with only that one switched on.
        """
        data = TimetableData.model_validate(draft.data)
        events = list(data.events)
        pairs = [(a, b) for i, a in enumerate(events) for b in events[i + 1 :] if set(a.people) & set(b.people)]
        if not pairs:
            pairs = [(a, b) for i, a in enumerate(events) for b in events[i + 1 :]]
        rng.shuffle(pairs)
        # the conflict rule goes to a random place among the sampled rules, so neither its
        # number nor its position marks it
        base = TASK_MODULES[draft.spec.task].TASK.base_rules
        position = insert_position(draft.rules, base, rng)
        sm, tm = build_parts(draft)
        oracle = Feasibility(sm, limits, CertStats())
        rules = list(sm.rule_literals)

        def infeasible_by(a_id: str, b_id: str, last: int) -> bool:
            probe = f"deadline[{a_id},{b_id},{last}]"
            lit = sm.rule_literals[probe] = tm.m.new_bool_var(probe)
            ENCODERS["deadline"](tm, rp.Deadline(events=[a_id, b_id], to=data.slots[last].id), lit)
            return not oracle.check([*rules, probe])[0]

        for a, b in pairs[:4]:
            ends = sorted({s + max(a.duration, b.duration) - 1 for e in (a, b) for s in data.starts(e)})
            ends = [t for t in ends if t < len(data.slots)]
            lo, hi, best = 0, len(ends) - 1, None  # invariant: ends[:lo] infeasible, ends[hi+1:] feasible
            while lo <= hi:
                mid = (lo + hi) // 2
                if infeasible_by(a.id, b.id, ends[mid]):
                    best, lo = ends[mid], mid + 1
                else:
                    hi = mid - 1
            if best is not None:
                rule = make_rule("deadline", "hard", rp.Deadline(events=[a.id, b.id], to=data.slots[best].id))
                return Draft(
                    spec=draft.spec,
                    data=draft.data,
                    rules=insert_at(draft.rules, rule, position),
                    objective=draft.objective,
                    mechanisms=[*draft.mechanisms, "infeasibility_detection"],
                )
        return None

    # -- hard-tier hooks (see pbsolve.mechanisms) ------------------------------------
    def make_disruption(
        self, draft: Draft, plan: dict, rng: random.Random, limits: SolverLimits, scenario: bool = False
    ) -> Draft | None:
        base = TASK_MODULES[draft.spec.task].TASK.base_rules
        return hard.make_disruption(draft, plan, rng, limits, base, scenario)

    def make_robust(self, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
        return hard.make_robust(draft, rng, limits, TASK_MODULES[draft.spec.task].TASK.base_rules)

    def make_uncertain(self, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
        return hard.make_uncertain(draft, rng, limits)

    def optimistic(self, draft: Draft, uid: str) -> Draft:
        return hard.optimistic(draft, uid)

    def uncertain_ids(self, draft: Draft) -> list[str]:
        return hard.uncertain_ids(draft)

    def report(self, draft: Draft, plan: dict) -> dict:
        return hard.report(draft, plan)


FAMILY = SchedulingFamily()
