"""Team-Building Event Planning: one day of sessions for several teams, at venues.

The rooms of the timetable are venues: capacity (seats) for the headcount, accessibility
features (step-free access, a hearing loop) and equipment (kitchen for catered meals,
projector), and a booking cost. The people are the teams (a session's headcount is the
sum of its teams' sizes). Structural rules of every instance: the venue booking budget
(the cost of the cheapest of a few planted witnesses) and a catered lunch inside a lunch
window; subtasks add venue opening hours, off-site venues reached by one coach, travel
times between venues, a rotation of teams through stations, or a short half day.
The objective: the sum of priority x finishing hour (the team is free early), then the
total booking cost.
"""

from __future__ import annotations

import random

from pydantic import Field

from pbsolve.checkers.scheduling import calendar_params as cc
from pbsolve.checkers.scheduling import places as pp
from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, TimetableData
from pbsolve.kit import PositiveRange, Settings, SizeTable
from pbsolve.models.scheduling.common import ROOMS, SHARED_POOL, Entities, TaskRecipe, Witness, hour_slots
from pbsolve.models.scheduling.places import coach_ok, witness_cost
from pbsolve.params import Params, make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec

FIRST_HOUR = 9
TEAMS = ("Sales", "Design", "Engineering", "Support", "Finance", "Marketing")
FEATURES = ("step-free", "hearing loop", "kitchen", "projector")
# (name, needs, durations, everyone?) -- everyone: all teams attend together
Session = tuple[str, tuple[str, ...], tuple[int, ...], bool]
SESSIONS: tuple[Session, ...] = (
    ("Welcome talk", ("projector",), (1,), True),
    ("Strategy workshop", ("projector",), (1, 2), False),
    ("Escape room", (), (1,), False),
    ("Cooking class", ("kitchen",), (2,), False),
    ("Kayaking", (), (2,), False),
    ("Design sprint", ("projector",), (1, 2), False),
    ("Treasure hunt", (), (1,), False),
    ("Closing drinks", (), (1,), True),
)
LUNCH: Session = ("Catered lunch", ("kitchen",), (1,), True)


class TeamSizes(Settings):
    """How big a team-building instance is."""

    last_start: int = Field(ge=FIRST_HOUR, description=f"the last hour a session may start (from {FIRST_HOUR}:00)")
    teams: int = Field(ge=1, le=len(TEAMS))
    venues: int = Field(ge=2, le=len(ROOMS))
    sessions: PositiveRange = Field(description="sessions besides lunch")


SIZES = SizeTable[TeamSizes](
    tiny=TeamSizes(last_start=12, teams=2, venues=2, sessions=PositiveRange(lo=1, hi=2)),
    small=TeamSizes(last_start=14, teams=2, venues=3, sessions=PositiveRange(lo=3, hi=3)),
    default=TeamSizes(last_start=16, teams=3, venues=4, sessions=PositiveRange(lo=4, hi=5)),
    large=TeamSizes(last_start=17, teams=4, venues=5, sessions=PositiveRange(lo=5, hi=6)),
)

TASK = TaskSpec(
    id="team_building_event_planning",
    name="Team-Building Event Planning",
    family="scheduling",
    summary="a team day: venue capacity, accessibility and availability, budget, coach and catering logistics",
    subtasks=(
        SubtaskSpec("offsite_day", "Off-site day", "workshops and a catered lunch inside a lunch window"),
        SubtaskSpec("accessible_outing", "Accessible outing", "step-free and hearing-loop needs; venue opening hours"),
        SubtaskSpec("remote_adventure", "Remote adventure", "off-site venues reached by one booked coach"),
        SubtaskSpec("team_rotation", "Team rotation", "every team rotates through the same activity stations"),
        SubtaskSpec(
            "half_day_workshop",
            "Half-day workshop",
            "a short day with few venues and sessions; venue capacity is tight",
        ),
    ),
    pool=(
        ConstraintSpec("room_fit", "basic", "venue capacity for the headcount, accessibility and equipment"),
        ConstraintSpec("person_no_overlap", "basic", "no team in two sessions at once"),
        ConstraintSpec("room_no_overlap", "basic", "a venue holds one session at a time"),
        ConstraintSpec("budget", "basic", "total venue booking cost within the budget"),
        ConstraintSpec("availability", "basic", "team availability"),
        ConstraintSpec("opening_hours", "basic", "venue availability: bookable hours"),
        ConstraintSpec("window", "basic", "a session inside a stated window (catering slot)"),
        ConstraintSpec("deadline", "basic", "two sessions over by a stated time"),
        ConstraintSpec("blocked_slots", "basic", "no sessions in blocked hours"),
        ConstraintSpec("coach_transfer", "medium", "one coach to off-site venues, out and back"),
        ConstraintSpec("travel_time", "medium", "transfer time between venues for each team"),
        ConstraintSpec("precedence", "medium", "one session before another"),
        ConstraintSpec("priority_order", "medium", "higher priority sessions start first"),
        ConstraintSpec("person_buffer", "medium", "a break between a team's sessions"),
        ConstraintSpec("same_room", "medium", "sessions kept in one venue"),
        *SHARED_POOL,
        ConstraintSpec("room_cooldown", "stateful", "a venue needs a reset (cleaning, set-up) after each session"),
    ),
    base_rules=("room_fit", "person_no_overlap", "room_no_overlap", "budget", "window"),
)


def entities(spec: GenerationSpec, rng: random.Random) -> Entities:
    s = SIZES.of(spec.size)
    last = s.last_start - (2 if spec.subtask == "half_day_workshop" and s.last_start - FIRST_HOUR >= 4 else 0)
    slots = hour_slots(FIRST_HOUR, last)
    heads = {t: rng.randint(4, 15) for t in rng.sample(TEAMS, s.teams)}
    teams = [Person(id=t, role=f"team of {n}") for t, n in heads.items()]
    n_venues = max(2, s.venues - 1) if spec.subtask == "half_day_workshop" else s.venues
    total = sum(heads.values())
    venues = []
    for name in rng.sample(ROOMS, n_venues):
        feats = tuple(f for f in FEATURES if rng.random() < 0.5)
        venues.append(Room(id=name, seats=rng.randint(8, total + 5), features=feats, cost=0))
    big = max(range(n_venues), key=lambda i: venues[i].seats)
    venues[big] = venues[big].model_copy(update={"seats": total + 5, "features": FEATURES})
    costs = rng.sample(range(1, 3 * n_venues + 1), n_venues)  # distinct booking costs
    venues = [v.model_copy(update={"cost": c}) for v, c in zip(venues, costs)]
    names = list(heads)
    n = s.sessions.draw(rng)
    if spec.subtask == "half_day_workshop":  # two hours shorter: one session fewer
        n = max(1, n - 1)
    chosen: list[Session] = list(rng.sample(SESSIONS, min(n, len(SESSIONS))))
    if spec.subtask == "team_rotation":
        stations = [x for x in SESSIONS if not x[3] and x[2] == (1,)] or [SESSIONS[2]]
        chosen = [(f"{st[0]}: {t}", st[1], st[2], False) for st in stations[:2] for t in names][:n]
    access = spec.subtask == "accessible_outing"
    needy = set(rng.sample(names, max(1, len(names) // 2))) if access else set()
    weights = rng.sample(range(1, len(chosen) + 3), len(chosen) + 1)  # distinct priorities, lunch last
    events = []
    for i, (name, needs, durations, everyone) in enumerate([LUNCH, *chosen]):
        if everyone:
            who = names
        elif spec.subtask == "team_rotation":
            who = [name.split(": ")[1]]
        else:
            who = sorted(rng.sample(names, rng.randint(1, min(2, len(names)))), key=names.index)
        extra: tuple[str, ...] = ("step-free",) if set(who) & needy else ()
        if access and set(who) & needy and rng.random() < 0.5:
            extra += ("hearing loop",)
        duration = rng.choice([d for d in durations if d <= len(slots)] or [1])
        events.append(
            Event(
                id=f"S{i + 1}",
                name=name,
                duration=duration,
                people=tuple(who),
                size=sum(heads[t] for t in who),
                needs=tuple(f for f in FEATURES if f in needs + extra),
                priority=weights[i],
            )
        )
    lunch_lo = max(0, min(len(slots) - 2, 12 - FIRST_HOUR))
    notes: dict[str, object] = {"lunch": ("S1", lunch_lo, min(len(slots) - 1, lunch_lo + 1))}
    if spec.subtask == "accessible_outing":
        notes["opening"] = _opening(slots, venues, rng)
    return Entities(
        time_unit="hour", days=["the day"], slots=slots, rooms=venues, people=teams, events=events, notes=notes
    )


def _opening(slots: list, venues: list[Room], rng: random.Random) -> list[pp.OpeningHours]:
    """Bookable hours for up to two venues other than the largest (so everything fits somewhere)."""
    biggest = max(venues, key=lambda v: v.seats).id
    out = []
    for v in rng.sample([v for v in venues if v.id != biggest], min(2, len(venues) - 1)):
        lo = rng.randint(0, max(0, len(slots) - 3))
        hi = rng.randint(min(len(slots) - 1, lo + 2), len(slots) - 1)
        if hi - lo + 1 < len(slots):
            out.append(pp.OpeningHours(room=v.id, open=[s.id for s in slots[lo : hi + 1]]))
    return out


def _allowed(ent: Entities):  # type: ignore[no-untyped-def]
    lunch, lo, hi = ent.notes["lunch"]
    opening = {o.room: set(o.open) for o in ent.notes.get("opening", [])}
    coach = ent.notes.get("coach")
    remote = set(coach.rooms) if coach is not None else set()

    def allowed(data: TimetableData, plan: Witness, e: Event, s: int, room: str) -> bool:
        if e.id == lunch and not (lo <= s and s + e.duration - 1 <= hi):
            return False
        if room in opening and any(data.slots[t].id not in opening[room] for t in range(s, s + e.duration)):
            return False
        if coach is not None:
            return coach_ok(data, {**plan, e.id: (s, room)}, remote, coach.lead)
        return True

    return allowed


def _entities(spec: GenerationSpec, rng: random.Random) -> Entities:
    ent = entities(spec, rng)
    if spec.subtask == "remote_adventure":
        biggest = max(ent.rooms, key=lambda v: v.seats)
        outdoor = [r for r in ent.rooms if r.id != biggest.id]  # the largest venue (fits all) stays on site
        remote = sorted(rng.sample(outdoor, min(2, len(outdoor))), key=ent.rooms.index)
        ent.notes["coach"] = pp.CoachTransfer(rooms=[r.id for r in remote], lead=1)
    return ent


def _structure(ent: Entities, data: TimetableData, plan: Witness, rng: random.Random) -> list[tuple[str, Params]]:
    lunch, lo, hi = ent.notes["lunch"]
    out: list[tuple[str, Params]] = [
        ("budget", pp.Budget(max=witness_cost(data, plan))),
        ("window", rp.Window.model_validate({"event": lunch, "from": data.slots[lo].id, "to": data.slots[hi].id})),
    ]
    out += [("opening_hours", o) for o in ent.notes.get("opening", [])]
    if "coach" in ent.notes:
        out.append(("coach_transfer", ent.notes["coach"]))
    return out


def _cheapest(data: TimetableData, found: list[Witness]) -> Witness:
    return min(found, key=lambda w: witness_cost(data, w))


def objective(data: TimetableData, rng: random.Random) -> list[ObjectiveTerm]:
    """Priority sessions early, then the booking cost (per person, as the budget counts it).
    A flat fee per session would tie two concurrent sessions swapping venues (the same two
    fees either way); per person, the swap changes the figure unless the headcounts are equal."""
    return [
        make_term("priority_finish", "weighted_end", rp.WeightedEnd(weights={e.id: e.priority for e in data.events})),
        make_term("booking_cost", "delivery_cost", cc.DeliveryCost()),
    ]


def recipe(spec: GenerationSpec) -> TaskRecipe:
    base: tuple[str, ...] = ("room_fit", "person_no_overlap", "room_no_overlap")
    if spec.subtask == "accessible_outing":
        base += ("availability",)
    return TaskRecipe(
        entities=_entities,
        base_rules=base,
        objective=objective,
        structure=_structure,
        allowed=_allowed,
        pick=_cheapest,
        witnesses=4,
        tries=40,
        availability_share=0.7,
    )
