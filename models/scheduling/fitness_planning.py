"""Fitness Planning: training sessions over one or two weeks, in the areas of a gym.

Sessions belong to a muscle group or discipline (a numbered series, done in order),
each with an intensity (1 light .. 3 intense) and the equipment it needs; they are
placed in a morning or evening period of a day and in a training area. Recovery days
after intense sessions, progression gaps, weekly goals and injury rest are the
domain's rules; the objective is the athlete's time preferences, then finishing key
work early, then the areas' booking fees.
"""

from __future__ import annotations

import random

from pydantic import Field, PositiveInt

from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, TimetableData
from pbsolve.kit import PositiveRange, Settings, SizeTable
from pbsolve.models.scheduling.common import PEOPLE, PERSONAL_POOL, STATEFUL_POOL, Entities, TaskRecipe, period_slots
from pbsolve.models.scheduling.hard import PROBE_PARAMETERS
from pbsolve.models.scheduling.timetable_model import IMPLIED_ROOM_ROWS, SOLVER_PARAMETERS, SPEED_PARAMETERS
from pbsolve.params import make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
DAYS = tuple(f"W{w} {d}" for w in (1, 2) for d in WEEKDAYS)
# training areas: (name, places, equipment, booking fee); distinct fees, so that no two
# areas are interchangeable under the fee objective
AREAS = (
    ("Weights area", 4, ("barbells",), 2),
    ("Studio", 8, ("mats",), 1),
    ("Cardio zone", 6, ("bikes", "treadmills"), 3),
    ("Track", 12, ("track",), 0),
    ("Pool lane", 3, ("pool",), 4),
    ("Strength room", 3, ("barbells", "mats"), 5),
)
# per subtask: the series (muscle group or discipline, id prefix, equipment)
PROGRAMMES = {
    "strength_split": (("Legs", "LEG", ("barbells",)), ("Push", "PSH", ("barbells",)), ("Pull", "PUL", ("barbells",)),
                       ("Core", "COR", ("mats",))),
    "endurance_build": (("Run", "RUN", ("track",)), ("Core", "COR", ("mats",)), ("Bike", "BIK", ("bikes",)),
                        ("Mobility", "MOB", ("mats",))),
    "injury_comeback": (("Knee rehab", "KNE", ("mats",)), ("Upper body", "UPB", ("barbells",)),
                        ("Swim", "SWM", ("pool",)), ("Legs", "LEG", ("barbells",))),
    "small_group_training": (("Circuit", "CIR", ("mats",)), ("Legs", "LEG", ("barbells",)),
                             ("Cardio", "CAR", ("treadmills",)), ("Push", "PSH", ("barbells",))),
    "triathlon_block": (("Swim", "SWM", ("pool",)), ("Bike", "BIK", ("bikes",)), ("Run", "RUN", ("track",)),
                        ("Core", "COR", ("mats",))),
}  # fmt: skip


class FitnessSizes(Settings):
    """How big a fitness-planning instance is."""

    days: PositiveInt = Field(ge=2, le=len(DAYS), description="days of the plan, from W1 Mon")
    periods_per_day: PositiveInt = Field(le=2, description="morning, evening")
    groups: PositiveInt = Field(le=4, description="muscle groups or disciplines")
    sessions: PositiveRange = Field(description="sessions per group")
    areas: PositiveInt = Field(ge=2, le=len(AREAS))


SIZES = SizeTable[FitnessSizes](
    tiny=FitnessSizes(days=4, periods_per_day=1, groups=2, sessions=PositiveRange(lo=1, hi=2), areas=2),
    small=FitnessSizes(days=8, periods_per_day=1, groups=2, sessions=PositiveRange(lo=2, hi=3), areas=2),
    default=FitnessSizes(days=14, periods_per_day=2, groups=3, sessions=PositiveRange(lo=2, hi=3), areas=2),
    large=FitnessSizes(days=14, periods_per_day=2, groups=4, sessions=PositiveRange(lo=2, hi=3), areas=2),
)

TASK = TaskSpec(
    id="fitness_planning",
    name="Fitness Planning",
    family="scheduling",
    summary="training sessions over weeks under recovery, progression, weekly goals and injuries",
    subtasks=(
        SubtaskSpec("strength_split", "Strength split", "barbell work split by muscle group, with recovery days"),
        SubtaskSpec("endurance_build", "Endurance build", "runs that progress at a steady rhythm of days"),
        SubtaskSpec("injury_comeback", "Injury comeback", "an injured body part rests for a run of days"),
        SubtaskSpec("small_group_training", "Small-group training", "a coach and three clients in shared sessions"),
        SubtaskSpec("triathlon_block", "Triathlon block", "swim, bike and run sessions in their own areas"),
    ),
    pool=(
        ConstraintSpec("availability", "basic", "work and family commitments: periods a person cannot train"),
        ConstraintSpec("room_fit", "basic", "an area holds the session's people and has its equipment"),
        ConstraintSpec("person_no_overlap", "basic", "no person in two sessions at once"),
        ConstraintSpec("room_no_overlap", "basic", "an area holds one session at a time"),
        ConstraintSpec("injury_rest", "basic", "an injured body part rests for a run of days"),
        ConstraintSpec("weekly_quota", "basic", "weekly goal: at least k sessions of a group each week"),
        ConstraintSpec("daily_load", "basic", "daily limit on intensity points"),
        ConstraintSpec("daily_limit", "basic", "at most k sessions a day"),
        ConstraintSpec("blocked_slots", "basic", "the gym is closed in some periods"),
        ConstraintSpec("deadline", "basic", "two named sessions must finish by a stated time"),
        ConstraintSpec("recovery_days", "medium", "recovery days after an intense session of a muscle group"),
        ConstraintSpec("progression", "medium", "progression: sessions of a group k1..k2 days apart, in order"),
        ConstraintSpec("min_days_apart", "medium", "sessions of one group at least k days apart"),
        ConstraintSpec("day_cap", "medium", "cap on sessions per day"),
        ConstraintSpec("precedence", "medium", "a session must come before another"),
        ConstraintSpec("different_days", "medium", "sessions on different days"),
        *PERSONAL_POOL,
        *STATEFUL_POOL,
    ),
    base_rules=("availability", "room_fit", "person_no_overlap", "room_no_overlap", "series_order"),
)


def _areas(rng: random.Random, n: int, needed: set[str]) -> list[Room]:
    """Areas with every needed equipment first, then others at random, in list order."""
    must = [a for a in AREAS if needed & set(a[2])]
    rest = [a for a in AREAS if a not in must]
    rng.shuffle(must)
    rng.shuffle(rest)
    chosen = sorted((must + rest)[: max(n, len(must))], key=AREAS.index)
    return [Room(id=name, seats=seats, features=feats, cost=fee) for name, seats, feats, fee in chosen]


def entities(spec: GenerationSpec, rng: random.Random) -> Entities:
    settings = SIZES.of(spec.size)
    days = list(DAYS[: settings.days])
    slots = period_slots(days, settings.periods_per_day)
    coached = spec.subtask == "small_group_training"
    names = rng.sample(PEOPLE, 4 if coached else 1)
    people = [Person(id=names[0], role="coach" if coached else "athlete")]
    people += [Person(id=n, role="client") for n in names[1:]]
    programme = list(PROGRAMMES[spec.subtask][: settings.groups])
    events = []
    for group, code, needs in programme:
        n = settings.sessions.draw(rng)
        who = (names[0], *sorted(rng.sample(names[1:], rng.randint(1, 2)), key=names.index)) if coached else (names[0],)
        for i in range(n):
            intensity = 1 if code in ("KNE", "MOB") else rng.choice((2, 3, 3)) if i == 0 else rng.randint(1, 3)
            events.append(
                Event(
                    id=f"{code}{i + 1}",
                    name=f"{group} {i + 1}",
                    duration=1,
                    people=who,
                    size=len(who),
                    needs=needs,
                    priority=intensity,
                    series=code,
                )
            )
    room_list = _areas(rng, settings.areas, {f for e in events for f in e.needs})
    return Entities(time_unit="period", days=days, slots=slots, rooms=room_list, people=people, events=events)


def objective(data: TimetableData, rng: random.Random) -> list[ObjectiveTerm]:
    """The athlete's time preferences (penalties on early mornings and on the weekend,
    drawn per instance), then key work early (distinct weights per group), then fees."""
    penalty: dict[str, int] = {}
    early = rng.randint(1, 2)
    for s in data.slots:
        name = data.days[s.day]
        weekend = name.endswith(("Sat", "Sun"))
        value = (early if s.id.endswith("P1") and len(data.slots) > len(data.days) else 0) + (
            rng.randint(1, 2) if weekend else 0
        )
        if value:
            penalty[s.id] = value
    groups = list(dict.fromkeys(e.series for e in data.events if e.series))
    rank = list(range(1, len(groups) + 1))
    rng.shuffle(rank)
    weight = dict(zip(groups, rank))
    weights = {e.id: weight[e.series] if e.series else 1 for e in data.events}
    terms = [
        make_term("weighted_finish", "weighted_end", rp.WeightedEnd(weights=weights)),
        ObjectiveTerm(id="room_cost", kind="room_cost"),
    ]
    if penalty:
        terms.insert(0, make_term("preference_penalty", "slot_penalty", rp.SlotPenalty(penalty=penalty)))
    return terms


PLANTED = {
    "strength_split": ("recovery_days",),
    "endurance_build": ("progression",),
    "injury_comeback": ("injury_rest",),
}


def recipe(spec: GenerationSpec) -> TaskRecipe:
    return TaskRecipe(
        entities=entities,
        base_rules=TASK.base_rules,
        objective=objective,
        availability_share=0.5,
        planted=PLANTED.get(spec.subtask, ()),
    )


# The LP relaxation's rows loaded from the start instead of lazily, and no symmetry
# detection per solve: certify_feasible over 68 stored default drafts (seeds 0, 1) took
# 4.50 against 5.56 CPU s, the same certificates and plans
SOLVER_PARAMETERS[TASK.id] = {"add_lp_constraints_lazily": False, "symmetry_level": 0}

# The two tuned certification solves (first solve, uniqueness proof) without Chvatal-Gomory
# and MIR cuts and without SAT inprocessing: these optima are proved at the root, where
# those cut rounds cost more than they prune. CPU of the two solves over 51 drafts of
# seeds 0, 1 (0..19): 35.8 against 27.1 ms per draft, over 118 drafts of seeds 2..6:
# 34.2 against 26.7 ms (worst draft 1.33 times slower, 20 against 27 ms; the slowest ones
# twice as fast); the same optima and second-best values. Only speed_parameters: the
# default-search re-certification of a tied optimum keeps its search and its plan.
SPEED_PARAMETERS[TASK.id] = {"add_cg_cuts": False, "add_mir_cuts": False, "use_sat_inprocessing": False}
# Every session has the athlete (or the coach) in it, so person_no_overlap implies every
# room row: they bind only while it is off. CPU of the two tuned solves over the 51
# drafts above: 26.5-27.9 against 24.0-24.4 ms per draft, the same optima
IMPLIED_ROOM_ROWS.add(TASK.id)

# The hard tier's feasibility probes (disruption, backup rooms, uncertain inputs: a trial
# draft built for the probe alone) without CP-SAT's root probing: 16 probes of seeds 0..2
# (0..19) took 6.9 against 21.2 ms CPU each (model build aside), the same answers
PROBE_PARAMETERS[TASK.id] = {"cp_model_probing_level": 0}
