"""Course Timetabling: weekly lectures of courses, taught by teachers to curricula."""

from __future__ import annotations

import random

from pydantic import Field, PositiveInt

from pbsolve.checkers.scheduling import calendar_params as cp
from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, Person, TimetableData
from pbsolve.kit import Settings, SizeTable
from pbsolve.models.scheduling.common import (
    PEOPLE,
    ROOMS,
    SHARED_POOL,
    STATEFUL_POOL,
    WEEKDAYS,
    Entities,
    TaskRecipe,
    period_slots,
    rooms,
)
from pbsolve.models.scheduling.hard import PROBE_PARAMETERS
from pbsolve.models.scheduling.timetable_model import (
    IMPLIED_ROOM_ROWS,
    OPTIMUM_PARAMETERS,
    SOLVER_PARAMETERS,
    SPEED_PARAMETERS,
)
from pbsolve.params import make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec

COURSES = (
    ("ALG", "Algebra"), ("BIO", "Biology"), ("CHE", "Chemistry"), ("ECO", "Economics"), ("HIS", "History"),
    ("LIT", "Literature"), ("PHY", "Physics"), ("STA", "Statistics"), ("GEO", "Geography"), ("CS", "Computing"),
)  # fmt: skip


class CourseSizes(Settings):
    """How big a course-timetabling instance is."""

    days: PositiveInt = Field(le=len(WEEKDAYS))
    periods_per_day: PositiveInt
    courses: PositiveInt = Field(le=len(COURSES))
    max_lectures: PositiveInt = Field(description="a course has 1 to this many lectures a week")
    teachers: PositiveInt = Field(le=len(PEOPLE))
    curricula: PositiveInt = Field(le=26, description="groups A, B, ...")
    rooms: PositiveInt = Field(le=len(ROOMS))


SIZES = SizeTable[CourseSizes](
    tiny=CourseSizes(days=2, periods_per_day=2, courses=2, max_lectures=2, teachers=2, curricula=1, rooms=2),
    small=CourseSizes(days=3, periods_per_day=2, courses=3, max_lectures=2, teachers=2, curricula=2, rooms=2),
    default=CourseSizes(days=5, periods_per_day=3, courses=4, max_lectures=3, teachers=3, curricula=2, rooms=3),
    large=CourseSizes(days=5, periods_per_day=4, courses=8, max_lectures=3, teachers=5, curricula=3, rooms=4),
)

TASK = TaskSpec(
    id="course_timetabling",
    name="Course Timetabling",
    family="scheduling",
    summary="weekly lectures in periods and rooms without teacher or curriculum clashes",
    subtasks=(
        SubtaskSpec("university_lectures", "University lectures", "courses shared between degree curricula"),
        SubtaskSpec("school_classes", "School classes", "class groups taught by subject teachers"),
        SubtaskSpec("lab_sessions", "Lab sessions", "double-period practicals that need lab rooms"),
        SubtaskSpec(
            "seminar_groups", "Seminar groups", "one lecture per course for all its groups and a seminar for each group"
        ),
        SubtaskSpec("joint_degree", "Joint degree", "every group takes every course, so no two lectures overlap"),
    ),
    pool=(
        ConstraintSpec("room_fit", "basic", "room capacity and equipment match"),
        ConstraintSpec("person_no_overlap", "basic", "no teacher or curriculum in two lectures at once"),
        ConstraintSpec("room_no_overlap", "basic", "a room holds one lecture at a time"),
        ConstraintSpec("series_order", "basic", "lectures of a course are numbered in time order"),
        ConstraintSpec("availability", "basic", "teacher and group unavailability"),
        ConstraintSpec("deadline", "basic", "two named items must finish by a stated time"),
        ConstraintSpec("blocked_slots", "basic", "no lectures in blocked periods"),
        ConstraintSpec("daily_limit", "basic", "daily lecture limit per teacher or group"),
        ConstraintSpec("window", "basic", "a lecture must fall inside a stated window"),
        ConstraintSpec("different_days", "medium", "lectures of one course on different days"),
        ConstraintSpec("same_room", "medium", "room stability: a course keeps one room"),
        ConstraintSpec("day_cap", "medium", "balanced week: cap on lectures per day"),
        ConstraintSpec("precedence", "medium", "a lecture must come before another"),
        ConstraintSpec("max_consecutive", "medium", "cap on consecutive periods for a teacher or group"),
        ConstraintSpec("person_buffer", "medium", "a free period between two lectures of a teacher"),
        *SHARED_POOL,
        *STATEFUL_POOL,
    ),
    base_rules=("room_fit", "person_no_overlap", "room_no_overlap", "series_order"),
)


def entities(spec: GenerationSpec, rng: random.Random) -> Entities:
    settings = SIZES.of(spec.size)
    per_day, n_curr = settings.periods_per_day, settings.curricula
    days = list(WEEKDAYS[: settings.days])
    slots = period_slots(days, per_day)
    teachers = [Person(id=n, role="teacher") for n in rng.sample(PEOPLE, settings.teachers)]
    group_word = "Class" if spec.subtask == "school_classes" else "Cohort"
    groups = [Person(id=f"{group_word} {chr(65 + i)}", role="group") for i in range(n_curr)]
    lab = spec.subtask == "lab_sessions"
    room_list = rooms(rng, settings.rooms, (20, 60), ["lab"] if lab else ["projector"], 0.4)
    events = []
    seminars = spec.subtask == "seminar_groups"
    n_courses = max(1, settings.courses - 1) if seminars else settings.courses  # seminars take the room-periods
    # distinct seminar sizes, so two seminars held at once never swap rooms for the same cost per seat
    seminar_sizes = rng.sample(range(5, 25), 2 * n_courses) if seminars else []
    for code, name in sorted(rng.sample(COURSES, n_courses)):
        teacher = rng.choice(teachers).id
        members = sorted(rng.sample([g.id for g in groups], rng.randint(1, min(2, n_curr))))
        if spec.subtask == "joint_degree":
            members = [g.id for g in groups]  # every group takes every course
        if seminars:  # a course for two groups where there are two: a lecture for both, a seminar for each
            members = sorted(rng.sample([g.id for g in groups], min(2, n_curr)))
        size = rng.randint(15, 55)
        lectures = rng.randint(1, settings.max_lectures)
        if seminars:
            lectures = 1
            tutors = [t.id for t in teachers if t.id != teacher] or [teacher]
            for g in members:
                events.append(
                    Event(
                        id=f"{code}-S{g[-1]}",
                        name=f"{name} seminar, {g}",
                        duration=1,
                        people=(rng.choice(tutors), g),
                        size=seminar_sizes.pop(),
                    )
                )
        is_lab = lab and rng.random() < 0.5
        for i in range(lectures):
            events.append(
                Event(
                    id=f"{code}-L{i + 1}" if not is_lab else f"{code}-LAB{i + 1}",
                    name=f"{name} {'lab' if is_lab else 'lecture'} {i + 1}",
                    duration=2 if is_lab and per_day >= 2 else 1,
                    people=(teacher, *members),
                    size=size,
                    needs=("lab",) if is_lab else (),
                    series=code,
                )
            )
    return Entities(
        time_unit="period", days=days, slots=slots, rooms=room_list, people=teachers + groups, events=events
    )


def objective(data: TimetableData, rng: random.Random) -> list[ObjectiveTerm]:
    last = {}
    for s in data.slots:
        last[s.day] = s.id
    firsts = [s.id for i, s in enumerate(data.slots) if i == 0 or data.slots[i - 1].day != s.day]
    penalty = {sid: 2 for sid in last.values()}
    for sid in firsts:
        penalty.setdefault(sid, 1)
    weights = {}
    rank = {code: i for i, code in enumerate(sorted({e.series for e in data.events if e.series}))}
    seminars = [e for e in data.events if not e.series]
    # seminar weights drawn apart (not in arithmetic steps, where swapping two pairs of
    # seminars between two days can leave the sum unchanged)
    spread = dict(
        zip(
            (e.id for e in seminars), rng.sample(range(len(rank) + 1, len(rank) + 1 + 8 * len(seminars)), len(seminars))
        )
    )
    for e in data.events:
        weights[e.id] = len(rank) - rank[e.series] if e.series else spread[e.id]
    terms = [
        make_term("period_penalty", "slot_penalty", rp.SlotPenalty(penalty=penalty)),
        make_term("weighted_finish", "weighted_end", rp.WeightedEnd(weights=weights)),
    ]
    if not seminars:
        return [*terms, ObjectiveTerm(id="room_cost", kind="room_cost")]
    # Seminars (no series) are small enough for any room: with a flat room cost, two held at
    # once could swap rooms for the same figure, and two of one course swap periods at equal
    # weight. Distinct weights and a cost per seat make each swap change the figures.
    return [*terms, make_term("room_cost", "delivery_cost", cp.DeliveryCost())]


def recipe(spec: GenerationSpec) -> TaskRecipe:
    return TaskRecipe(entities=entities, base_rules=TASK.base_rules, objective=objective, availability_share=0.5)


# The LP relaxation's rows loaded from the start instead of lazily, and no symmetry
# detection per solve: certify_feasible over 75 stored default drafts (seeds 0, 1) took
# 3.28 against 4.42 CPU s, the same certificates and plans (the root cuts stay: without
# them these models take four times as long)
SOLVER_PARAMETERS[TASK.id] = {"add_lp_constraints_lazily": False, "symmetry_level": 0}

# The two tuned certification solves (first solve, uniqueness proof) without Chvatal-Gomory
# and MIR cuts and without SAT inprocessing (as for fitness planning). CPU of the two
# solves over 55 drafts of seeds 0, 1 (0..19): 30.8 against 22.0 ms per draft, over 126
# drafts of seeds 2..6: 23.5 against 16.8 ms (worst draft 1.06 times slower, the slowest
# ones more than twice as fast); the same optima and second-best values. Only
# speed_parameters: the default-search re-certification of a tied optimum keeps its
# search and its plan.
SPEED_PARAMETERS[TASK.id] = {"add_cg_cuts": False, "add_mir_cuts": False, "use_sat_inprocessing": False}
# Room rows of slots whose lectures pairwise share a teacher or group (every slot in joint
# degrees) bind only while person_no_overlap is off. CPU of the two tuned solves over the
# 55 drafts above: 21.5 against 20.4 ms per draft, the same optima
IMPLIED_ROOM_ROWS.add(TASK.id)

# The hard tier's feasibility probes without CP-SAT's root probing (as for fitness planning):
# 27 probes of seeds 0..2 (0..19) took 3.0 against 6.2 ms CPU each, the same answers
PROBE_PARAMETERS[TASK.id] = {"cp_model_probing_level": 0}
# The hard tier's optimum() probes with one presolve pass without probing (as for material
# allocation): CPU of optimum() over the 30 indices of default seed 0, 0.11 against 0.36 s;
# seeds 0-2, 0.20 against 0.42 s (18 calls); the same instances byte for byte
OPTIMUM_PARAMETERS[TASK.id] = {"cp_model_presolve": True, "max_presolve_iterations": 1, "cp_model_probing_level": 0}
