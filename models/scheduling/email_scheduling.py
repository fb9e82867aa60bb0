"""Email Scheduling: campaign messages to audience segments over a week of send slots.

The time model of the timetable tasks, read for email: segments are its people (a
segment receives one message at a time), sending pools are its rooms (a pool's seats
are the thousands of recipients it delivers in one send slot, its features what it is
cleared for, e.g. transactional mail), and send slots are its slots, each numbered by
its hour of the week in UTC. The campaign rules (time-zone send windows, blackout days,
spacing, lags, rolling frequency caps) are in models/scheduling/calendar_rules.py.
"""

from __future__ import annotations

import random

from pydantic import Field, PositiveInt, model_validator

from pbsolve.checkers.scheduling import calendar_params as cc
from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, Person, Slot, TimetableData
from pbsolve.kit import PositiveRange, Settings, SizeTable
from pbsolve.models.scheduling.calendar_rules import CITIES, OFFSETS
from pbsolve.models.scheduling.common import ROOMS, SHARED_POOL, Entities, TaskRecipe, rooms
from pbsolve.params import make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec

WEEK = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
CAMPAIGNS = (
    "Product update", "Spring promo", "Webinar invite", "Customer survey", "Feature tips", "Flash sale",
    "Event recap", "Loyalty offer", "Case study", "Partner news", "Price change notice", "Holiday hours",
)  # fmt: skip
HOURS = (0, 6, 12, 14, 18)  # the UTC send hours a calendar may use
# open loss per thousand recipients by local send hour: office hours 0, their edges 1, night 3
LOCAL_PENALTY = tuple(0 if 9 <= h <= 17 else 1 if h in (7, 8, 18, 19, 20) else 3 for h in range(24))


class EmailSizes(Settings):
    """How big an email-scheduling instance is."""

    days: PositiveInt = Field(le=len(WEEK))
    send_hours: tuple[int, ...] = Field(min_length=1, description="the UTC send hours of every day")
    segments: PositiveInt = Field(ge=2, le=len(CITIES))
    pools: PositiveInt = Field(le=len(ROOMS), description="sending pools (the rooms of the time model)")
    messages: PositiveRange

    @model_validator(mode="after")
    def _hours(self) -> EmailSizes:
        if list(self.send_hours) != sorted(set(self.send_hours)) or not set(self.send_hours) <= set(HOURS):
            raise ValueError(f"send hours must be increasing and among {list(HOURS)}")
        if self.messages.hi > len(CAMPAIGNS):
            raise ValueError(f"at most {len(CAMPAIGNS)} messages")
        return self


SIZES = SizeTable[EmailSizes](
    tiny=EmailSizes(days=2, send_hours=(6, 14), segments=2, pools=2, messages=PositiveRange(lo=2, hi=3)),
    small=EmailSizes(days=3, send_hours=(6, 12, 18), segments=3, pools=2, messages=PositiveRange(lo=3, hi=4)),
    default=EmailSizes(days=5, send_hours=(6, 12, 18), segments=5, pools=3, messages=PositiveRange(lo=6, hi=7)),
    large=EmailSizes(days=5, send_hours=(6, 12, 18), segments=6, pools=3, messages=PositiveRange(lo=8, hi=9)),
)

TASK = TaskSpec(
    id="email_scheduling",
    name="Email Scheduling",
    family="scheduling",
    summary="campaign messages to audience segments under time-zone send windows, frequency caps and ordering",
    subtasks=(
        SubtaskSpec("welcome_series", "Welcome series", "new sign-ups get a numbered welcome series before any promo"),
        SubtaskSpec("global_launch", "Global launch", "a teaser then a launch message to each regional segment"),
        SubtaskSpec("promo_burst", "Promo burst", "promotions to two or three overlapping segments each"),
        SubtaskSpec("transactional_mix", "Transactional mix", "urgent notices that need a transactional pool"),
        SubtaskSpec("newsletter_digest", "Newsletter digest", "one digest to every segment beside regular messages"),
    ),
    pool=(
        ConstraintSpec("room_fit", "basic", "a sending pool delivers the audience and is cleared for the message"),
        ConstraintSpec("person_no_overlap", "basic", "a segment gets at most one message per send slot"),
        ConstraintSpec("room_no_overlap", "basic", "a sending pool sends one message per send slot"),
        ConstraintSpec("local_send_window", "basic", "send window in the segment's local time zone"),
        ConstraintSpec("blackout_days", "basic", "no message to a segment on its blackout days"),
        ConstraintSpec("blocked_slots", "basic", "no sends during blocked slots (maintenance)"),
        ConstraintSpec("deadline", "basic", "two messages must go out by a stated slot"),
        ConstraintSpec("daily_limit", "basic", "at most k messages a day to a segment"),
        ConstraintSpec("precedence", "medium", "ordering: one message goes out before another (welcome before promo)"),
        ConstraintSpec("min_lag", "medium", "a follow-up at least d days after its predecessor"),
        ConstraintSpec("send_spacing", "medium", "at least h hours between two messages to one segment"),
        ConstraintSpec("priority_order", "medium", "higher-priority messages go out first"),
        ConstraintSpec("day_cap", "medium", "balanced week: cap on messages per day"),
        *SHARED_POOL,
        ConstraintSpec("frequency_cap", "stateful", "at most k messages to a segment in any w consecutive days"),
        ConstraintSpec("room_cooldown", "stateful", "a sending pool rests after each send (IP reputation)"),
    ),
    base_rules=("room_fit", "person_no_overlap", "room_no_overlap", "series_order"),
)


def _zone(offset: int) -> str:
    return "UTC" if offset == 0 else f"UTC{offset:+d}"


def _slots(days: list[str], hours: tuple[int, ...]) -> list[Slot]:
    return [
        Slot(id=f"{name} {h:02d}:00", day=d, value=24 * d + h, end_label=f"{name} {h + 1:02d}:00")
        for d, name in enumerate(days)
        for h in hours
    ]


def entities(spec: GenerationSpec, rng: random.Random) -> Entities:
    settings = SIZES.of(spec.size)
    days = list(WEEK[: settings.days])
    slots = _slots(days, settings.send_hours)
    sub = spec.subtask
    n_seg = settings.segments
    cities = rng.sample(CITIES, n_seg)
    names = [city for city, _ in cities]
    if sub == "welcome_series":  # the sign-ups of one city form the welcome segment (kept in UTC)
        names[0] = "New signups"
    audience = {n: rng.randint(3, 12) if n == "New signups" else rng.randint(4, 30) for n in names}  # thousands
    # the role is what the prompt shows beside the segment: its time zone and size
    segments = [Person(id=n, role=f"{_zone(OFFSETS.get(n, 0))}, {audience[n]} thousand recipients") for n in names]
    n_msg = settings.messages.draw(rng)
    topics = rng.sample(CAMPAIGNS, len(CAMPAIGNS))
    plan: list[tuple[str, tuple[str, ...], str | None, tuple[str, ...]]] = []  # name, segments, series, needs
    if sub == "welcome_series":
        for i in range(min(3, n_msg - 1)):
            plan.append((f"Welcome {i + 1}", ("New signups",), "welcome", ()))
    elif sub == "global_launch":
        for city in names[: max(1, n_msg // 2)]:
            plan.append((f"Launch teaser {city}", (city,), f"launch {city}", ()))
            plan.append((f"Launch {city}", (city,), f"launch {city}", ()))
    elif sub == "newsletter_digest":
        plan.append(("Weekly digest", tuple(names), None, ()))
    elif sub == "transactional_mix":
        for i in range(max(1, n_msg // 3)):
            k = rng.randint(1, 2)
            plan.append(
                ("Billing notice" if i == 0 else "Terms update", tuple(rng.sample(names, k)), None, ("transactional",))
            )
    plan = plan[:n_msg]
    while len(plan) < n_msg:
        top = 3 if sub == "promo_burst" else 2
        k = rng.randint(2 if sub == "promo_burst" else 1, min(top, n_seg))
        pool = [n for n in names if n != "New signups"] if sub == "welcome_series" else names
        plan.append((topics.pop(), tuple(rng.sample(pool, min(k, len(pool)))), None, ()))
    events = []
    for i, (name, segs, series, needs) in enumerate(plan):
        ordered = tuple(sorted(segs, key=names.index))
        events.append(
            Event(
                id=f"M{i + 1}",
                name=name,
                duration=1,
                people=ordered,
                size=sum(audience[s] for s in ordered),
                needs=needs,
                priority=3 if needs else (2 if series else rng.randint(1, 3)),
                series=series,
            )
        )
    biggest = max(e.size for e in events)
    pools = rooms(rng, settings.pools, (max(20, biggest // 2), max(60, biggest)), ["transactional"], 0.3)
    return Entities(time_unit="period", days=days, slots=slots, rooms=pools, people=segments, events=events)


def objective(data: TimetableData, rng: random.Random) -> list[ObjectiveTerm]:
    offsets = {p.id: OFFSETS.get(p.id, 0) for p in data.people}
    audience = {p.id: int(p.role.split(", ")[1].split()[0]) for p in data.people}
    weights = {e.id: e.size * e.priority for e in data.events}  # recipients reached late, urgent ones doubly
    return [
        make_term(
            "open_loss", "open_loss", cc.OpenLoss(offsets=offsets, audience=audience, penalty=list(LOCAL_PENALTY))
        ),
        make_term("weighted_delay", "weighted_end", rp.WeightedEnd(weights=weights)),
        make_term("delivery_cost", "delivery_cost", cc.DeliveryCost()),
    ]


def recipe(spec: GenerationSpec) -> TaskRecipe:
    return TaskRecipe(entities=entities, base_rules=TASK.base_rules, objective=objective)
