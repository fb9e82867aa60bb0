"""Schedule Planning: one person's agenda over a week, across places with travel times.

The rooms of the timetable are places (home, office, library, shops, gym); an activity's
needs say which places can host it (an errand needs the shop's counter). Structural rules
of every instance: the places' travel times (the planner's consecutive activities at
different places need the trip between them) and fixed commitments; subtasks add opening
hours, focus windows and an energy penalty, a home base, or other people's availability.
The objective is personal priority: the sum of priority x finishing period (important
things early in the week), then the total place cost.
"""

from __future__ import annotations

import random

from pydantic import Field, PositiveInt

from pbsolve.checkers.scheduling import places as pp
from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, Slot, TimetableData
from pbsolve.kit import PositiveRange, Settings, SizeTable
from pbsolve.models.scheduling.common import PEOPLE, WEEKDAYS, WITHOUT_BACKUPS, Entities, TaskRecipe, Witness
from pbsolve.models.scheduling.hard import PROBE_PARAMETERS
from pbsolve.models.scheduling.places import day_slots, in_day, legs_from
from pbsolve.models.scheduling.timetable_model import SPEED_PARAMETERS
from pbsolve.params import Params, make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec

FIRST_HOUR = 9

# place -> (seats, features): what each place offers
PLACES = {
    "Home": (4, ("desk", "kitchen")),
    "Office": (12, ("desk", "printer")),
    "Library": (8, ("desk", "printer")),
    "Gym": (20, ("gym",)),
    "Post office": (10, ("counter",)),
    "Market": (30, ("groceries",)),
    "Cafe": (8, ("coffee",)),
    "Clinic": (6, ("doctor",)),
}
# (name, needs, durations, kind): kind "work", "errand", "social" or "commitment"
ACTIVITIES = (
    ("Write report", ("desk",), (1, 2), "work"),
    ("Prepare slides", ("desk",), (1, 2), "work"),
    ("Review budget", ("desk",), (1,), "work"),
    ("Print handouts", ("printer",), (1,), "work"),
    ("Post parcel", ("counter",), (1,), "errand"),
    ("Buy groceries", ("groceries",), (1,), "errand"),
    ("Workout", ("gym",), (1, 2), "errand"),
    ("Batch cooking", ("kitchen",), (2,), "errand"),
    ("Coffee catch-up", ("coffee",), (1,), "social"),
    ("Check-up", ("doctor",), (1,), "commitment"),
    ("Team meeting", ("printer",), (1,), "commitment"),
)


class ScheduleSizes(Settings):
    """How big a schedule-planning instance is."""

    days: PositiveInt = Field(le=len(WEEKDAYS))
    per_day: PositiveInt = Field(le=10, description="one-hour periods a day, from 09:00")
    places: int = Field(ge=2, le=len(PLACES))
    activities: PositiveRange
    commitments: int = Field(ge=0, le=2, description="fixed commitments")


SIZES = SizeTable[ScheduleSizes](
    tiny=ScheduleSizes(days=2, per_day=3, places=2, activities=PositiveRange(lo=2, hi=3), commitments=1),
    small=ScheduleSizes(days=2, per_day=5, places=3, activities=PositiveRange(lo=4, hi=4), commitments=1),
    default=ScheduleSizes(days=3, per_day=6, places=4, activities=PositiveRange(lo=6, hi=7), commitments=2),
    large=ScheduleSizes(days=4, per_day=7, places=5, activities=PositiveRange(lo=8, hi=9), commitments=2),
)

TASK = TaskSpec(
    id="schedule_planning",
    name="Schedule Planning",
    family="scheduling",
    summary="one person's week across places: travel times, fixed commitments, opening hours, focus and priorities",
    subtasks=(
        SubtaskSpec("work_week", "Work week", "work split between home and office, a fixed team meeting"),
        SubtaskSpec("errand_week", "Errand week", "errands at shops and services with opening hours"),
        SubtaskSpec(
            "focus_and_energy", "Focus and energy", "deep work inside focus windows; low-energy hours are penalised"
        ),
        SubtaskSpec("commuter_week", "Commuter week", "every day starts and ends at home; place costs come first"),
        SubtaskSpec("family_week", "Family week", "activities shared with family and friends, who have availability"),
    ),
    pool=(
        ConstraintSpec("room_fit", "basic", "an activity's place offers what it needs"),
        ConstraintSpec("person_no_overlap", "basic", "no person in two activities at once"),
        ConstraintSpec("room_no_overlap", "basic", "a place holds one activity at a time"),
        ConstraintSpec("fixed_commitment", "basic", "fixed commitments keep their time and place"),
        ConstraintSpec("availability", "basic", "other people's availability"),
        ConstraintSpec("opening_hours", "basic", "errands only while their place is open"),
        ConstraintSpec("focus_windows", "basic", "deep work inside focus windows"),
        ConstraintSpec("window", "basic", "an activity inside a stated window"),
        ConstraintSpec("deadline", "basic", "two named activities done by a stated time"),
        ConstraintSpec("blocked_slots", "basic", "no activity in blocked hours"),
        ConstraintSpec("daily_limit", "basic", "at most so many activities a day"),
        ConstraintSpec("travel_time", "medium", "travel time between consecutive activities at different places"),
        ConstraintSpec("precedence", "medium", "one activity before another"),
        ConstraintSpec("priority_order", "medium", "higher personal priority starts first"),
        ConstraintSpec("person_buffer", "medium", "a break between activities"),
        ConstraintSpec("max_consecutive", "medium", "cap on busy hours in a row (energy)"),
        ConstraintSpec("different_days", "medium", "spread activities over different days"),
        *WITHOUT_BACKUPS,
        ConstraintSpec("fatigue_protocol", "stateful", "after a busy stretch, rest breaks become mandatory"),
    ),
    base_rules=("room_fit", "person_no_overlap", "room_no_overlap", "travel_time", "fixed_commitment"),
)


def _slots(days: list[str], per_day: int) -> list[Slot]:
    out = []
    for d, name in enumerate(days):
        for p in range(per_day):
            h = FIRST_HOUR + p
            out.append(
                Slot(id=f"{name} {h:02d}:00", day=d, value=d * per_day + p + 1, end_label=f"{name} {h + 1:02d}:00")
            )
    return out


def entities(spec: GenerationSpec, rng: random.Random) -> Entities:
    s = SIZES.of(spec.size)
    days = list(WEEKDAYS[: s.days])
    slots = _slots(days, s.per_day)
    names = ["Home", "Office", *rng.sample([p for p in PLACES if p not in ("Home", "Office")], s.places - 2)]
    place_list = [Room(id=n, seats=PLACES[n][0], features=PLACES[n][1], cost=0) for n in names]
    costs = list(range(len(names)))
    rng.shuffle(costs)
    place_list = [r.model_copy(update={"cost": c}) for r, c in zip(place_list, costs)]
    offered = {f for r in place_list for f in r.features}
    me = rng.choice(PEOPLE)
    others = rng.sample([p for p in PEOPLE if p != me], 2)
    people = [Person(id=me, role="you")]
    if spec.subtask == "family_week":
        people += [Person(id=others[0], role="family"), Person(id=others[1], role="friend")]
    possible = [a for a in ACTIVITIES if set(a[1]) <= offered and a[2][0] <= s.per_day]
    commitments = [a for a in possible if a[3] == "commitment"]
    rest = [a for a in possible if a[3] != "commitment"]
    if spec.subtask == "errand_week":
        rest.sort(key=lambda a: (a[3] != "errand", rng.random()))
    else:
        rng.shuffle(rest)
    n = s.activities.draw(rng)
    k = min(s.commitments, len(commitments), n - 1)
    chosen = rng.sample(commitments, k) + rest[: n - k]
    if not chosen:
        chosen = rest[:1]
    weights = rng.sample(range(1, len(chosen) + 3), len(chosen))  # distinct personal priorities
    events = []
    for i, (name, needs, durations, kind) in enumerate(chosen):
        who = [me]
        if spec.subtask == "family_week" and kind != "work" and len(people) > 1 and rng.random() < 0.7:
            who.append(rng.choice(people[1:]).id)
        events.append(
            Event(
                id=f"A{i + 1}",
                name=name,
                duration=rng.choice(durations),
                people=tuple(who),
                size=len(who),
                needs=needs,
                priority=weights[i],
            )
        )
    fixed = [e.id for e, a in zip(events, chosen) if a[3] == "commitment"]
    # places on a line, 0 to 2 periods apart: a metric, so checking every pair of a day's
    # activities equals checking consecutive ones
    positions = {r.id: (0 if r.id == "Home" else rng.randint(0, 2)) for r in place_list}
    if spec.subtask == "commuter_week":
        positions["Office"] = 2
    home = "Home" if spec.subtask == "commuter_week" else None
    travel = pp.TravelTime(people=[me], home=home, legs=legs_from(positions))
    notes: dict = {"travel": travel, "fixed": fixed}
    if spec.subtask == "errand_week":
        notes["opening"] = _opening(slots, [r for r in place_list if r.id not in ("Home", "Office")], rng)
    return Entities(
        time_unit="period", days=days, slots=slots, rooms=place_list, people=people, events=events, notes=notes
    )


def _opening(slots: list[Slot], shops: list[Room], rng: random.Random) -> list[pp.OpeningHours]:
    """Opening hours for each shop: the same stretch every open day (one day closed at random)."""
    days = sorted({s.day for s in slots})
    per_day = sum(1 for s in slots if s.day == 0)
    out = []
    for r in shops:
        lo = rng.randint(0, max(0, per_day - 3))
        hi = rng.randint(min(per_day - 1, lo + 2), per_day - 1)
        closed = rng.choice(days) if len(days) > 2 and rng.random() < 0.5 else None
        open_ = [sl.id for sl in slots if sl.day != closed and lo <= sl.value - sl.day * per_day - 1 <= hi]
        if open_ and len(open_) < len(slots):
            out.append(pp.OpeningHours(room=r.id, open=open_))
    return out


def _allowed(ent: Entities):  # type: ignore[no-untyped-def]
    """The witness keeps the opening hours and the travel rule.

    The travel test is :func:`~pbsolve.models.scheduling.places.travel_ok_adding` with
    its per-draft parts worked out once: for each event, the other events that share a
    travelling person with it (the only ones whose trips it can break) with their
    durations, the trip table, and each slot's position in its day."""
    travel: pp.TravelTime = ent.notes["travel"]
    opening = {o.room: set(o.open) for o in ent.notes.get("opening", [])}
    travellers = set(travel.people)
    trips: dict[tuple[str, str], int] = {}
    partners: dict[str, list[tuple[str, int]]] = {}
    days: dict[str, tuple] = {}

    def between(a: str, b: str) -> int:
        key = (a, b)
        if key not in trips:
            trips[key] = travel.between(a, b)
        return trips[key]

    def travel_ok(data: TimetableData, plan: Witness, e: Event, s: int, room: str) -> bool:
        mine = partners.get(e.id)
        if mine is None:
            people = [p for p in e.people if p in travellers]
            mine = partners[e.id] = [
                (b.id, b.duration) for b in data.events if b.id != e.id and any(p in b.people for p in people)
            ]
        if "slot_day" not in days:
            days["slot_day"] = data.slot_days
            days["pos"] = in_day(data)
            days["lengths"] = tuple(len(d) for d in day_slots(data))
        slot_day = days["slot_day"]
        day = slot_day[s]
        end = s + e.duration
        for bid, duration in mine:
            placed = plan.get(bid)
            if placed is None:
                continue
            sb, rb = placed
            if rb == room or slot_day[sb] != day:
                continue
            gap = sb - end if s <= sb else s - (sb + duration)
            if gap < between(room, rb):
                return False
        if travel.home is not None and any(p in travellers for p in e.people):
            pos = days["pos"][s]
            if pos < between(travel.home, room):
                return False
            if days["lengths"][day] - (pos + e.duration) < between(room, travel.home):
                return False
        return True

    def allowed(data: TimetableData, plan: Witness, e: Event, s: int, room: str) -> bool:
        if room in opening and any(data.slots[t].id not in opening[room] for t in range(s, s + e.duration)):
            return False
        # the plan so far keeps the travel rule (every placement in it was allowed)
        return travel_ok(data, plan, e, s, room)

    return allowed


def _structure(ent: Entities, data: TimetableData, plan: Witness, rng: random.Random) -> list[tuple[str, Params]]:
    out: list[tuple[str, Params]] = [("travel_time", ent.notes["travel"])]
    for eid in ent.notes["fixed"]:
        s, room = plan[eid]
        out.append(("fixed_commitment", pp.FixedCommitment(event=eid, start=data.slots[s].id, room=room)))
    out += [("opening_hours", o) for o in ent.notes.get("opening", [])]
    return out


def _structure_focus(ent: Entities, data: TimetableData, plan: Witness, rng: random.Random) -> list[tuple[str, Params]]:
    """The focus subtask: the work activities must sit inside morning focus windows."""
    out = _structure(ent, data, plan, rng)
    work = [e for e in data.events if "desk" in e.needs]
    if work:
        per_day = sum(1 for s in data.slots if s.day == 0)
        used = {t for e in work for t in range(plan[e.id][0], plan[e.id][0] + e.duration)}
        morning = {i for i, s in enumerate(data.slots) if s.value - s.day * per_day <= 3}
        window = sorted(morning | used)
        if len(window) < len(data.slots):
            out.append(
                (
                    "focus_windows",
                    pp.FocusWindows(events=[e.id for e in work], slots=[data.slots[t].id for t in window]),
                )
            )
    return out


def objective(data: TimetableData, rng: random.Random) -> list[ObjectiveTerm]:
    return [
        make_term("priority_finish", "weighted_end", rp.WeightedEnd(weights={e.id: e.priority for e in data.events})),
        ObjectiveTerm(id="place_cost", kind="room_cost"),
    ]


def _energy(data: TimetableData, rng: random.Random) -> list[ObjectiveTerm]:
    """Low-energy hours cost: the period after lunch (13:00) 2 and the day's last period 1."""
    penalty: dict[str, int] = {}
    for s in data.slots:
        if s.id.endswith("13:00"):
            penalty[s.id] = 2
    last: dict[int, str] = {}
    for s in data.slots:
        last[s.day] = s.id
    for sid in last.values():
        penalty.setdefault(sid, 1)
    penalty = {s.id: penalty[s.id] for s in data.slots if s.id in penalty}
    return [make_term("low_energy", "slot_penalty", rp.SlotPenalty(penalty=penalty)), *objective(data, rng)]


def _cost_first(data: TimetableData, rng: random.Random) -> list[ObjectiveTerm]:
    return list(reversed(objective(data, rng)))


def recipe(spec: GenerationSpec) -> TaskRecipe:
    base = TASK.base_rules + (("availability",) if spec.subtask == "family_week" else ())
    obj = {"focus_and_energy": _energy, "commuter_week": _cost_first}.get(spec.subtask, objective)
    structure = _structure_focus if spec.subtask == "focus_and_energy" else _structure
    return TaskRecipe(
        entities=entities,
        base_rules=tuple(k for k in base if k not in ("travel_time", "fixed_commitment")),
        objective=obj,
        structure=structure,
        allowed=_allowed,
        first=lambda ent: list(ent.notes["fixed"]),
        tries=40,
        availability_share=1.0,
    )


# The two tuned certification solves with LP rows loaded at once and no symmetry detection
# (speed_parameters: the default-search re-certification of a tied optimum keeps its search
# and its plan). Generation CPU of 60 instances (seeds 0 and 1 at default size, tiny and
# small): 3.65 against 3.49 s, byte-identical instances.
SPEED_PARAMETERS[TASK.id] = {"add_lp_constraints_lazily": False, "symmetry_level": 0}

# The hard tier's feasibility probes without CP-SAT's root probing (a probe answers only
# whether a model is feasible), as for fitness planning and course timetabling.
# Generation CPU of the 60 instances above, two alternating runs: content 4.06-4.18 against
# 3.98-4.03 s, schedule 3.49-3.57 against 3.37-3.40 s, study 3.01-3.19 against 2.93-2.96 s,
# byte-identical instances.
PROBE_PARAMETERS[TASK.id] = {"cp_model_probing_level": 0}
