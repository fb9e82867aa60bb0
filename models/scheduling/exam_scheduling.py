"""Exam Scheduling: exam sittings in periods and rooms, spread out for student cohorts."""

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
from pbsolve.params import make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec

SUBJECTS = (
    "Anatomy", "Calculus", "Contract Law", "Databases", "Ethics", "French", "Genetics", "Macroeconomics",
    "Mechanics", "Optics", "Philosophy", "Sociology", "Thermodynamics", "Topology",
)  # fmt: skip


class ExamSizes(Settings):
    """How big an exam-scheduling instance is (a resit week has a day less, at least two, and a cohort more)."""

    days: PositiveInt = Field(le=len(WEEKDAYS))
    periods_per_day: PositiveInt
    exams: PositiveInt = Field(le=len(SUBJECTS), description="one subject each")
    cohorts: PositiveInt
    rooms: PositiveInt = Field(le=len(ROOMS))


SIZES = SizeTable[ExamSizes](
    tiny=ExamSizes(days=2, periods_per_day=2, exams=3, cohorts=2, rooms=2),
    small=ExamSizes(days=3, periods_per_day=2, exams=4, cohorts=2, rooms=2),
    default=ExamSizes(days=3, periods_per_day=3, exams=6, cohorts=3, rooms=3),
    large=ExamSizes(days=5, periods_per_day=3, exams=10, cohorts=4, rooms=4),
)

TASK = TaskSpec(
    id="exam_scheduling",
    name="Exam Scheduling",
    family="scheduling",
    summary="exam sittings in periods and rooms without cohort clashes, spread across days",
    subtasks=(
        SubtaskSpec("university_finals", "University finals", "end-of-term exams for degree cohorts"),
        SubtaskSpec("school_mock_exams", "School mock exams", "mock exams for year groups"),
        SubtaskSpec(
            "certification_sittings", "Certification sittings", "long professional exams needing computer rooms"
        ),
        SubtaskSpec("resit_week", "Resit week", "a short resit session with many shared candidates"),
        SubtaskSpec("oral_exams", "Oral exams", "small oral exams, each run by one of a few examiners"),
    ),
    pool=(
        ConstraintSpec("room_fit", "basic", "room capacity and equipment match"),
        ConstraintSpec("person_no_overlap", "basic", "no cohort sits two exams at once"),
        ConstraintSpec("room_no_overlap", "basic", "a room holds one exam at a time"),
        ConstraintSpec("availability", "basic", "cohort unavailability (field trips, placements)"),
        ConstraintSpec("deadline", "basic", "two named items must finish by a stated time"),
        ConstraintSpec("blocked_slots", "basic", "no exams in blocked periods"),
        ConstraintSpec("daily_limit", "basic", "at most k exams a day per cohort"),
        ConstraintSpec("window", "basic", "an exam must fall inside a stated window"),
        ConstraintSpec("precedence", "medium", "an exam must come before another"),
        ConstraintSpec("person_buffer", "medium", "a free period between two exams of a cohort"),
        ConstraintSpec("day_cap", "medium", "balanced session: cap on exams per day"),
        ConstraintSpec("different_days", "medium", "a cohort's exams on different days"),
        ConstraintSpec("max_consecutive", "medium", "cap on consecutive exam periods for a cohort"),
        *SHARED_POOL,
        *STATEFUL_POOL,
    ),
    base_rules=("room_fit", "person_no_overlap", "room_no_overlap"),
)


def entities(spec: GenerationSpec, rng: random.Random) -> Entities:
    settings = SIZES.of(spec.size)
    n_days, per_day, n_coh = settings.days, settings.periods_per_day, settings.cohorts
    if spec.subtask == "resit_week":
        n_days, n_coh = max(2, n_days - 1), n_coh + 1
    days = list(WEEKDAYS[:n_days])
    slots = period_slots(days, per_day)
    word = "Year" if spec.subtask == "school_mock_exams" else "Cohort"
    cohorts = [Person(id=f"{word} {i + 1}", role="cohort") for i in range(n_coh)]
    computer = spec.subtask == "certification_sittings"
    oral = spec.subtask == "oral_exams"
    seats = (6, 20) if oral else (30, 120)
    room_list = rooms(rng, settings.rooms, seats, ["computers"] if computer else ["accessible"], 0.4)
    # oral exams: each exam is run by one examiner, who can examine one exam at a time
    n_examiners = max(2, settings.exams // 2)
    examiners = [Person(id=n, role="examiner") for n in rng.sample(PEOPLE, n_examiners)] if oral else []
    events = []
    # distinct oral sizes: small exams fit every room, so two held at once could otherwise
    # swap rooms (or periods, at equal weight) for the same figures
    oral_sizes = rng.sample(range(4, 4 + 2 * settings.exams), settings.exams) if oral else []
    for i, subject in enumerate(sorted(rng.sample(SUBJECTS, settings.exams))):
        takers = sorted(rng.sample([c.id for c in cohorts], rng.randint(1, min(2, n_coh))))
        examiner = (examiners[i % len(examiners)].id,) if oral else ()
        events.append(
            Event(
                id=f"E{i + 1}",
                name=f"{subject} oral" if oral else subject,
                duration=2 if computer and per_day >= 2 and rng.random() < 0.4 else 1,
                people=(*examiner, *takers),
                size=oral_sizes[i] if oral else rng.randint(20, 110),
                needs=("computers",) if computer and rng.random() < 0.6 else (),
            )
        )
    return Entities(
        time_unit="period", days=days, slots=slots, rooms=room_list, people=examiners + cohorts, events=events
    )


def objective(data: TimetableData, rng: random.Random) -> list[ObjectiveTerm]:
    return [
        make_term(
            "same_day_extra",
            "same_day_pairs",
            rp.SameDayPairs(people=[p.id for p in data.people if p.role == "cohort"]),
        ),
        make_term("weighted_finish", "weighted_end", rp.WeightedEnd(weights={e.id: e.size for e in data.events})),
        # oral exams are small enough for any room: a cost per seat (their sizes are
        # distinct) makes two held at once swapping rooms change the figure
        make_term("room_cost", "delivery_cost", cp.DeliveryCost())
        if any(p.role == "examiner" for p in data.people)
        else ObjectiveTerm(id="room_cost", kind="room_cost"),
    ]


def recipe(spec: GenerationSpec) -> TaskRecipe:
    return TaskRecipe(entities=entities, base_rules=TASK.base_rules, objective=objective, availability_share=0.5)
