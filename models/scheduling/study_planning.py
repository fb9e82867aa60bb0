"""Study Planning: study sessions of several subjects over the days before their exams.

A student (or a study group) places numbered study sessions of each subject in the
periods of the coming days, around fixed classes (periods they are unavailable), in
bookable study places (a home desk, a group room, a computer booth). Every subject's
sessions come before its exam day; the objective weighs how late each subject is
studied, then the cost of the places.
"""

from __future__ import annotations

import random

from pydantic import Field, PositiveInt

from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, TimetableData
from pbsolve.kit import PositiveRange, Settings, SizeTable
from pbsolve.models.scheduling.common import PEOPLE, PERSONAL_POOL, STATEFUL_POOL, Entities, TaskRecipe, period_slots
from pbsolve.models.scheduling.hard import PROBE_PARAMETERS
from pbsolve.models.scheduling.timetable_model import IMPLIED_ROOM_ROWS, SPEED_PARAMETERS
from pbsolve.params import make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec

DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# (subject, id prefix, equipment its sessions need)
SUBJECTS = (
    ("Algebra", "ALG", ()), ("Biology", "BIO", ()), ("Chemistry", "CHE", ()), ("Economics", "ECO", ()),
    ("History", "HIS", ()), ("Programming", "PRG", ("computer",)), ("Physics", "PHY", ()),
    ("Statistics", "STA", ("computer",)), ("French", "FRE", ()), ("Law", "LAW", ()),
)  # fmt: skip
# bookable places: (name, seats, equipment, cost); two have computers, so a computer
# session can have a backup place
PLACES = (
    ("Home desk", 1, (), 0),
    ("Library carrel", 1, ("computer", "quiet"), 1),
    ("Group room", 6, ("whiteboard",), 2),
    ("Computer booth", 3, ("computer", "quiet"), 3),
)


class StudySizes(Settings):
    """How big a study-planning instance is (a study group adds students, not sessions)."""

    days: PositiveInt = Field(ge=2, le=len(DAYS), description="days of the plan (the witness leaves the last free)")
    periods_per_day: PositiveInt = Field(le=3, description="morning, afternoon, evening")
    subjects: PositiveInt = Field(le=len(SUBJECTS))
    sessions: PositiveRange = Field(description="sessions per subject")
    places: PositiveInt = Field(ge=2, le=len(PLACES))


SIZES = SizeTable[StudySizes](
    tiny=StudySizes(days=3, periods_per_day=2, subjects=2, sessions=PositiveRange(lo=1, hi=2), places=2),
    small=StudySizes(days=4, periods_per_day=2, subjects=2, sessions=PositiveRange(lo=2, hi=3), places=3),
    default=StudySizes(days=5, periods_per_day=3, subjects=3, sessions=PositiveRange(lo=2, hi=3), places=3),
    large=StudySizes(days=6, periods_per_day=3, subjects=4, sessions=PositiveRange(lo=2, hi=3), places=3),
)

TASK = TaskSpec(
    id="study_planning",
    name="Study Planning",
    family="scheduling",
    summary="study sessions of several subjects before their exams, around fixed classes and daily limits",
    subtasks=(
        SubtaskSpec("exam_cram", "Exam cram", "one student, several subjects with exams in the same week"),
        SubtaskSpec(
            "spaced_revision", "Spaced revision", "each subject ends with a review session a set number of days later"
        ),
        SubtaskSpec("study_group", "Study group", "three students; each subject is studied together by two or three"),
        SubtaskSpec(
            "working_student", "Working student", "a student whose work shifts block most mornings or evenings"
        ),
        SubtaskSpec(
            "thesis_and_courses", "Thesis and courses", "double-period thesis writing sessions in a quiet place"
        ),
    ),
    pool=(
        ConstraintSpec("availability", "basic", "fixed classes (or work shifts): periods a student cannot study"),
        ConstraintSpec("room_fit", "basic", "a place seats the session and has its equipment"),
        ConstraintSpec("person_no_overlap", "basic", "no student in two sessions at once"),
        ConstraintSpec("room_no_overlap", "basic", "a place holds one session at a time"),
        ConstraintSpec("exam_dates", "basic", "every session of a subject before its exam day"),
        ConstraintSpec("daily_load", "basic", "daily limit on difficulty points"),
        ConstraintSpec("daily_limit", "basic", "at most k sessions a day"),
        ConstraintSpec("blocked_slots", "basic", "no study in blocked periods"),
        ConstraintSpec("window", "basic", "a session must fall inside a stated window"),
        ConstraintSpec("deadline", "basic", "two named sessions must finish by a stated time"),
        ConstraintSpec("min_days_apart", "medium", "spacing: sessions of one subject at least k days apart"),
        ConstraintSpec("review_window", "medium", "review interval: a review k1..k2 days after the first session"),
        ConstraintSpec("different_days", "medium", "sessions of one subject on different days"),
        ConstraintSpec("day_cap", "medium", "balanced plan: cap on sessions per day"),
        ConstraintSpec("precedence", "medium", "a session must come before another"),
        ConstraintSpec("max_consecutive", "medium", "cap on consecutive study periods"),
        ConstraintSpec("person_buffer", "medium", "a free period between two sessions of a day"),
        *PERSONAL_POOL,
        *STATEFUL_POOL,
    ),
    base_rules=("availability", "room_fit", "person_no_overlap", "room_no_overlap", "series_order"),
)


def _places(rng: random.Random, n: int, needed: set[str]) -> list[Room]:
    """The home desk, then places at random; the places sessions need are included."""
    chosen: list[tuple[str, int, tuple[str, ...], int]] = [PLACES[0]]
    rest = list(PLACES[1:])
    rng.shuffle(rest)
    must = [p for p in rest if needed & set(p[2])]
    for p in must + [p for p in rest if p not in must]:
        if len(chosen) < n:
            chosen.append(p)
    chosen.sort(key=PLACES.index)
    return [Room(id=name, seats=seats, features=feats, cost=cost) for name, seats, feats, cost in chosen]


def entities(spec: GenerationSpec, rng: random.Random) -> Entities:
    settings = SIZES.of(spec.size)
    days = list(DAYS[: settings.days])
    per_day = settings.periods_per_day
    slots = period_slots(days, per_day)
    group = spec.subtask == "study_group"
    names = rng.sample(PEOPLE, 3 if group else 1)
    students = [Person(id=n, role="student") for n in names]
    subjects = sorted(rng.sample(SUBJECTS, settings.subjects), key=lambda s: s[1])
    if spec.subtask == "thesis_and_courses":
        subjects = [("Thesis", "THS", ("quiet",)), *subjects[1:]]
    events = []
    for subject, code, needs in subjects:
        n = settings.sessions.draw(rng)
        difficulty = rng.randint(1, 3)
        who = tuple(sorted(rng.sample(names, rng.randint(2, 3)), key=names.index)) if group else (names[0],)
        thesis = code == "THS"
        for i in range(n):
            review = spec.subtask == "spaced_revision" and i == n - 1 and n >= 2
            events.append(
                Event(
                    id=f"{code}{i + 1}" if not review else f"{code}R",
                    name=f"{subject} review" if review else f"{subject} {i + 1}",
                    duration=2 if thesis and per_day >= 2 else 1,
                    people=who,
                    size=len(who),
                    needs=needs,
                    priority=difficulty,
                    series=code,
                )
            )
    needed = {f for e in events for f in e.needs}
    if group:  # a group session needs a place that seats the group
        needed.add("whiteboard")
    room_list = _places(rng, settings.places, needed)
    return Entities(time_unit="period", days=days, slots=slots, rooms=room_list, people=students, events=events)


def objective(data: TimetableData, rng: random.Random) -> list[ObjectiveTerm]:
    """Study early: each subject weighs its sessions' finishing periods by its own
    urgency (distinct weights 1..n, so swapping two subjects' periods changes the
    figure), then the places' cost."""
    subjects = list(dict.fromkeys(e.series for e in data.events if e.series))
    urgency = list(range(1, len(subjects) + 1))
    rng.shuffle(urgency)
    weight = dict(zip(subjects, urgency))
    weights = {e.id: weight[e.series] if e.series else 1 for e in data.events}
    return [
        make_term("weighted_finish", "weighted_end", rp.WeightedEnd(weights=weights)),
        ObjectiveTerm(id="room_cost", kind="room_cost"),
    ]


def recipe(spec: GenerationSpec) -> TaskRecipe:
    planted = ("exam_dates", "review_window") if spec.subtask == "spaced_revision" else ("exam_dates",)
    share = 1.0 if spec.subtask == "working_student" else 0.7
    return TaskRecipe(
        entities=entities,
        base_rules=TASK.base_rules,
        objective=objective,
        availability_share=share,
        planted=planted,
        free_last_day=True,
    )


# The two tuned certification solves with LP rows loaded at once and no symmetry detection
# (speed_parameters: the default-search re-certification of a tied optimum keeps its search
# and its plan). Generation CPU of 60 instances (seeds 0 and 1 at default size, tiny and
# small): 3.48 against 3.01 s, byte-identical instances.
SPEED_PARAMETERS[TASK.id] = {"add_lp_constraints_lazily": False, "symmetry_level": 0}

# The hard tier's feasibility probes without CP-SAT's root probing (a probe answers only
# whether a model is feasible), as for fitness planning and course timetabling.
# One student attends every session: a slot's room rows are implied by person_no_overlap
# and bind only while that rule is off (IMPLIED_ROOM_ROWS).
# Generation CPU of the 60 instances above, two alternating runs: content 4.06-4.18 against
# 3.98-4.03 s, schedule 3.49-3.57 against 3.37-3.40 s, study 3.01-3.19 against 2.93-2.96 s,
# byte-identical instances.
PROBE_PARAMETERS[TASK.id] = {"cp_model_probing_level": 0}
IMPLIED_ROOM_ROWS.add(TASK.id)
