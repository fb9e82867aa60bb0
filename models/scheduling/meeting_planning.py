"""Meeting Planning: meetings on one working day, with attendees, rooms and equipment."""

from __future__ import annotations

import random

from pydantic import Field, PositiveInt, model_validator

from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, Person, TimetableData
from pbsolve.kit import PositiveRange, Settings, SizeTable
from pbsolve.models.scheduling.common import (
    BATTERY,
    PEOPLE,
    ROOMS,
    SHARED_POOL,
    STATEFUL_POOL,
    Entities,
    TaskRecipe,
    hour_slots,
    rooms,
)
from pbsolve.params import make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec

TOPICS = (
    "Design review", "Budget check", "Hiring sync", "Team retro", "Roadmap", "Vendor call",
    "Security review", "Launch prep", "Customer debrief", "Data audit", "Sprint planning",
)  # fmt: skip

FIRST_HOUR = 9


class MeetingSizes(Settings):
    """How big a meeting-planning instance is."""

    last_start: int = Field(
        ge=FIRST_HOUR, description=f"the last hour a meeting may start (the day starts at {FIRST_HOUR}:00)"
    )
    people: int = Field(ge=2, le=len(PEOPLE), description="attendees (a meeting has two or three)")
    rooms: PositiveInt = Field(le=len(ROOMS))
    meetings: PositiveRange = Field(description="how many meetings")
    max_duration: PositiveInt = Field(description="the longest meeting, in hours")

    @model_validator(mode="after")
    def _enough_topics(self) -> MeetingSizes:
        if self.meetings.hi > len(TOPICS):
            raise ValueError(f"at most {len(TOPICS)} meetings (one topic each)")
        return self


SIZES = SizeTable[MeetingSizes](
    tiny=MeetingSizes(last_start=11, people=3, rooms=2, meetings=PositiveRange(lo=2, hi=3), max_duration=1),
    small=MeetingSizes(last_start=13, people=4, rooms=2, meetings=PositiveRange(lo=3, hi=3), max_duration=2),
    default=MeetingSizes(last_start=16, people=6, rooms=3, meetings=PositiveRange(lo=4, hi=5), max_duration=2),
    large=MeetingSizes(last_start=17, people=8, rooms=3, meetings=PositiveRange(lo=6, hi=7), max_duration=2),
)

TASK = TaskSpec(
    id="meeting_planning",
    name="Meeting Planning",
    family="scheduling",
    summary="place meetings in time and rooms under attendee availability, equipment and priorities",
    subtasks=(
        SubtaskSpec("cross_team_sync", "Cross-team sync", "meetings drawing people from several teams"),
        SubtaskSpec("interview_panel", "Interview panel", "one candidate meets a series of panels in order"),
        SubtaskSpec("board_meeting_series", "Board meeting series", "numbered board sessions held in order"),
        SubtaskSpec(
            "multi_time_zone_standups", "Multi-time-zone stand-ups", "remote people with shifted working hours"
        ),
        SubtaskSpec(
            "client_visit", "Client visit", "a visiting client joins at least half the meetings, which come first"
        ),
    ),
    pool=(
        ConstraintSpec("availability", "basic", "key attendees are available for the whole meeting"),
        ConstraintSpec("room_fit", "basic", "room capacity and equipment match"),
        ConstraintSpec("person_no_overlap", "basic", "no person in two meetings at once"),
        ConstraintSpec("room_no_overlap", "basic", "a room holds one meeting at a time"),
        ConstraintSpec("window", "basic", "a meeting must take place inside a stated time window"),
        ConstraintSpec("deadline", "basic", "two named items must finish by a stated time"),
        ConstraintSpec("blocked_slots", "basic", "no meeting during blocked hours (lunch, all-hands)"),
        ConstraintSpec("precedence", "medium", "meeting-chain order"),
        ConstraintSpec("person_buffer", "medium", "consecutive-meeting buffer for a person"),
        ConstraintSpec("priority_order", "medium", "priority ranking rule: higher priority meetings start first"),
        ConstraintSpec("max_consecutive", "medium", "consecutive-meeting control: cap on back-to-back hours"),
        ConstraintSpec("same_room", "medium", "a meeting series keeps one room"),
        *SHARED_POOL,
        *STATEFUL_POOL,
        BATTERY,
    ),
    base_rules=("availability", "room_fit", "person_no_overlap", "room_no_overlap", "series_order"),
)


def entities(spec: GenerationSpec, rng: random.Random) -> Entities:
    settings = SIZES.of(spec.size)
    n_people = settings.people
    slots = hour_slots(FIRST_HOUR, settings.last_start)
    names = rng.sample(PEOPLE, n_people)
    people = [Person(id=n, role="attendee") for n in names]
    room_list = rooms(rng, settings.rooms, (3, 8), ["projector", "video"], 0.5)
    n_meet = settings.meetings.draw(rng)
    topics = rng.sample(TOPICS, n_meet)
    events = []
    candidate = names[0] if spec.subtask == "interview_panel" else None
    # a client visit: the client (names[0]) sits in the first half of the meetings (at least two)
    client = names[0] if spec.subtask == "client_visit" else None
    with_client = set(range(max(2, (n_meet + 1) // 2))) if client else set()
    if client:
        people[0] = Person(id=client, role="client")
    for i, topic in enumerate(topics):
        k = rng.randint(2, min(3, n_people))
        hub = candidate or (client if i in with_client else None)
        pool = [n for n in names if n not in (candidate, client)]
        k = min(k, len(pool) + (1 if hub else 0))  # a client visit leaves the client out of the other meetings
        attendees = sorted(rng.sample(pool, k - (1 if hub else 0)) + ([hub] if hub else []), key=names.index)
        series = None
        if spec.subtask == "interview_panel":
            topic, series = f"Interview round {i + 1}", "interview"
        elif spec.subtask == "board_meeting_series" and i < 2:
            topic, series = f"Board session {i + 1}", "board"
        needs = tuple(f for f in ("projector", "video") if rng.random() < 0.3)
        events.append(
            Event(
                id=f"M{i + 1}",
                name=topic,
                duration=1 if candidate else rng.randint(1, settings.max_duration),
                people=tuple(attendees),
                size=len(attendees),
                needs=needs,
                priority=(3 if i in with_client else 1) if client else rng.randint(1, 3),
                series=series,
            )
        )
    return Entities(time_unit="hour", days=["the day"], slots=slots, rooms=room_list, people=people, events=events)


def objective(data: TimetableData, rng: random.Random) -> list[ObjectiveTerm]:
    return [
        make_term("weighted_finish", "weighted_end", rp.WeightedEnd(weights={e.id: e.priority for e in data.events})),
        ObjectiveTerm(id="room_cost", kind="room_cost"),
    ]


def recipe(spec: GenerationSpec) -> TaskRecipe:
    share = 1.0 if spec.subtask == "multi_time_zone_standups" else 0.6
    return TaskRecipe(entities=entities, base_rules=TASK.base_rules, objective=objective, availability_share=share)
