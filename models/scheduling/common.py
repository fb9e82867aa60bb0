"""Sampling machinery shared by the timetable task types.

Instances are built around a planted *witness* plan: entities are drawn, a random
witness placement is found, and sampled rules take parameters the witness satisfies,
so drafts are feasible by construction (the solver still proves it) and the optimum is
usually a different, better plan than the witness.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, Slot, TimetableData
from pbsolve.family import Draft, NoDraft
from pbsolve.kit import KindRegistry, sampled_kinds, witness_rules
from pbsolve.params import NoParams, Params
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Tier
from pbsolve.taxonomy import ConstraintSpec, mechanism_pool

PEOPLE = (
    "Ana", "Ben", "Chen", "Dara", "Eli", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kemi", "Lars",
    "Mira", "Nico", "Omar", "Pia", "Quinn", "Rosa", "Sami", "Tove",
)  # fmt: skip
ROOMS = ("Cedar", "Atlas", "Birch", "Delta", "Elm", "Fjord", "Grove", "Harbor")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")

Witness = dict[str, tuple[int, str]]  # event id -> (start slot index, room id)

# The optional stateful layer (encoders, builders: models/scheduling/stateful.py).
STATEFUL_POOL = (
    ConstraintSpec("room_cooldown", "stateful", "a room needs a reset gap after each use"),
    ConstraintSpec("fatigue_protocol", "stateful", "after a cumulative busy threshold, rest gaps become mandatory"),
)
BATTERY = ConstraintSpec("battery_level", "stateful", "a shared device battery drains in use and recharges when idle")

# The hard pool and the reporting rule every timetable task shares (see pbsolve.mechanisms).
SHARED_POOL = mechanism_pool(
    "name backup rooms so any single room failure is survivable",
    replan="repair a disrupted schedule with the fewest changes",
)
# One person's plan over periods (study, fitness): the shared uncertain inputs are event
# sizes and room seats, which a plan for one person never comes near (one seat, places with
# room to spare), so no uncertain input could ever cost anything and local incompleteness
# would certify nothing. These task types leave it out of their pool instead of sampling it.
PERSONAL_POOL = tuple(c for c in SHARED_POOL if c.id != "local_incompleteness")
# Places and workstations that each offer what only they offer (the post office's counter,
# the one writing room) leave no backup room for most events, so robustness design (a
# backup room for every event) would certify nothing; those task types leave it out.
WITHOUT_BACKUPS = tuple(c for c in SHARED_POOL if c.id != "robustness_design")
PERSONAL_WITHOUT_BACKUPS = tuple(c for c in PERSONAL_POOL if c.id != "robustness_design")


@dataclass
class Entities:
    time_unit: str
    days: list[str]
    slots: list[Slot]
    rooms: list[Room]
    people: list[Person]
    events: list[Event]
    notes: dict[str, Any] = field(default_factory=dict)

    def data(self) -> TimetableData:
        return TimetableData(
            time_unit=self.time_unit,
            days=tuple(self.days),
            slots=tuple(self.slots),
            rooms=tuple(self.rooms),
            people=tuple(self.people),
            events=tuple(self.events),
        )


def hour_slots(first: int, last_start: int) -> list[Slot]:
    return [Slot(id=f"{h:02d}:00", day=0, value=h, end_label=f"{h + 1:02d}:00") for h in range(first, last_start + 1)]


def period_slots(days: list[str], per_day: int) -> list[Slot]:
    out = []
    for d, name in enumerate(days):
        for p in range(1, per_day + 1):
            n = d * per_day + p
            out.append(Slot(id=f"{name} P{p}", day=d, value=n, end_label=f"end of {name} P{p}"))
    return out


def rooms(rng: random.Random, n: int, seat_range: tuple[int, int], features: list[str], feature_p: float) -> list[Room]:
    names = rng.sample(ROOMS, n)
    costs = list(range(n))
    out = []
    for i, name in enumerate(names):
        feats = tuple(f for f in features if rng.random() < feature_p)
        out.append(Room(id=name, seats=rng.randint(*seat_range), features=feats, cost=costs[i]))
    # the largest room has every feature, so every event fits somewhere
    big = max(range(n), key=lambda i: out[i].seats)
    out[big] = out[big].model_copy(update={"features": tuple(features), "seats": seat_range[1]})
    return out


def fits(e: Event, r: Room) -> bool:
    return r.seats >= e.size and set(e.needs) <= set(r.features)


Allowed = Callable[[TimetableData, Witness, Event, int, str], bool]  # (data, plan so far, event, start, room)


def place_witness(
    data: TimetableData,
    rng: random.Random,
    tries: int = 30,
    allowed: Allowed | None = None,
    first: Collection[str] = (),
) -> Witness | None:
    """A random placement with no person or room double-booked and every room fitting.

    ``allowed`` adds a task's structural rules (travel between places, opening hours) as
    a test on each candidate placement; the events in ``first`` (fixed commitments) are
    placed before the others."""
    listed = {e.id: i for i, e in enumerate(data.events)}
    series = data.series_members()
    previous = {b.id: a for members in series.values() for a, b in itertools.pairwise(members)}
    # per event, the same in every try: the rooms it fits (in order) and each start's span
    # (no room: no option at all)
    fitting = {e.id: [r.id for r in data.rooms if fits(e, r)] for e in data.events}
    spans = {
        e.id: [(s, range(s, s + e.duration)) for s in data.starts(e)] if fitting[e.id] else [] for e in data.events
    }
    for _ in range(tries):
        busy_people: dict[str, set[int]] = {p.id: set() for p in data.people}
        busy_rooms: dict[str, set[int]] = {r.id: set() for r in data.rooms}
        plan: Witness = {}
        order = list(data.events)
        rng.shuffle(order)
        # series members go in number order, each after the previous one has ended
        drawn = {e.id: i for i, e in enumerate(order)}
        rank = {e.id: drawn[series[e.series][0].id] if e.series else drawn[e.id] for e in order}
        order.sort(key=lambda e: (e.id not in first, rank[e.id], listed[e.id]))
        for e in order:
            prev = previous.get(e.id)
            earliest = plan[prev.id][0] + prev.duration if prev is not None else 0
            # (start, room) in start-then-room order; people are checked once per start
            rooms = fitting[e.id]
            taken = set().union(*(busy_people.setdefault(p, set()) for p in e.people))
            options: list[tuple[int, str]] = []
            for s, span in spans[e.id]:
                if s < earliest or not taken.isdisjoint(span):
                    continue
                options += [
                    (s, r)
                    for r in rooms
                    if busy_rooms[r].isdisjoint(span) and (allowed is None or allowed(data, plan, e, s, r))
                ]
            if not options:
                break
            s, room = rng.choice(options)
            plan[e.id] = (s, room)
            span = range(s, s + e.duration)
            busy_rooms[room].update(span)
            for p in e.people:
                busy_people[p].update(span)
        else:
            if _series_in_order(data, plan):
                return plan
    return None


def _series_in_order(data: TimetableData, plan: Witness) -> bool:
    for members in data.series_members().values():
        for a, b in itertools.pairwise(members):
            if plan[a.id][0] + a.duration > plan[b.id][0]:
                return False
    return True


def used_slots(data: TimetableData, plan: Witness, events: list[Event]) -> set[int]:
    return {t for e in events for t in range(plan[e.id][0], plan[e.id][0] + e.duration)}


def events_of(data: TimetableData, person: str) -> list[Event]:
    return [e for e in data.events if person in e.people]


def with_availability(data: TimetableData, plan: Witness, rng: random.Random, share: float) -> TimetableData:
    """Give some people unavailable blocks at the edge of a day, avoiding their witness slots."""
    people = []
    for p in data.people:
        mine = used_slots(data, plan, events_of(data, p.id))
        blocked: list[str] = []
        if rng.random() < share:
            for d in range(len(data.days)):
                day = [i for i, s in enumerate(data.slots) if s.day == d]
                if rng.random() < 0.5:
                    day = day[::-1]  # leaves early instead of arriving late
                k = rng.randint(0, max(1, len(day) // 3))
                for t in day[:k]:
                    if t in mine:
                        break
                    blocked.append(data.slots[t].id)
        order = data.slot_index
        people.append(p.model_copy(update={"unavailable": tuple(sorted(blocked, key=order.__getitem__))}))
    return data.model_copy(update={"people": tuple(people)})


# -- sampled rule builders: (data, witness, rng) -> params or None ------------------------
RuleBuilder = Callable[[TimetableData, Witness, random.Random], Params | None]


def _window(data: TimetableData, plan: Witness, rng: random.Random) -> rp.Window | None:
    e = rng.choice(data.events)
    s = plan[e.id][0]
    day = [i for i, sl in enumerate(data.slots) if sl.day == data.slots[s].day]
    lo = max(day[0], s - rng.randint(0, 1))
    hi = min(day[-1], s + e.duration - 1 + rng.randint(0, 1))
    if lo == day[0] and hi == day[-1]:
        return None
    return rp.Window.model_validate({"event": e.id, "from": data.slots[lo].id, "to": data.slots[hi].id})


def _deadline(data: TimetableData, plan: Witness, rng: random.Random) -> rp.Deadline | None:
    """Two events that must finish by a moment the witness meets (the same sentence that
    states the conflict in infeasible variants, so its presence gives nothing away)."""
    if len(data.events) < 2:
        return None
    a, b = sorted(rng.sample(list(data.events), 2), key=data.events.index)
    last = max(plan[e.id][0] + e.duration - 1 for e in (a, b))
    day_end = max(i for i, sl in enumerate(data.slots) if sl.day == data.slots[last].day)
    last = min(day_end, last + rng.randint(0, 1))
    return rp.Deadline(events=[a.id, b.id], to=data.slots[last].id)


def _blocked_slots(data: TimetableData, plan: Witness, rng: random.Random) -> rp.BlockedSlots | None:
    used = used_slots(data, plan, list(data.events))
    free = [i for i in range(len(data.slots)) if i not in used]
    if not free:
        return None
    picks = sorted(rng.sample(free, min(len(free), rng.randint(1, 2))))
    return rp.BlockedSlots(slots=[data.slots[i].id for i in picks])


def _busy_people(data: TimetableData, minimum: int = 2) -> list[Person]:
    return [p for p in data.people if len(events_of(data, p.id)) >= minimum]


def _per_day(data: TimetableData, plan: Witness, events: list[Event]) -> list[int]:
    counts = [0] * len(data.days)
    for e in events:
        counts[data.slots[plan[e.id][0]].day] += 1
    return counts


def _daily_limit(data: TimetableData, plan: Witness, rng: random.Random) -> rp.DailyLimit | None:
    people = _busy_people(data, 3 if len(data.days) == 1 else 2)
    if not people:
        return None
    chosen = sorted(rng.sample(people, min(len(people), rng.randint(1, 3))), key=lambda p: p.id)
    need = max(max(_per_day(data, plan, events_of(data, p.id))) for p in chosen)
    most = max(len(events_of(data, p.id)) for p in chosen)
    if need >= most:
        return None
    return rp.DailyLimit(max=need, people=[p.id for p in chosen])


def _day_cap(data: TimetableData, plan: Witness, rng: random.Random) -> rp.DayCap | None:
    if len(data.days) < 2:
        return None
    return rp.DayCap(max=max(_per_day(data, plan, list(data.events))))


def _precedence(data: TimetableData, plan: Witness, rng: random.Random) -> rp.Precedence | None:
    pairs = [
        (a, b)
        for a in data.events
        for b in data.events
        if a.id != b.id
        and not (a.series is not None and a.series == b.series)
        and plan[a.id][0] + a.duration <= plan[b.id][0]
    ]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    return rp.Precedence(before=a.id, after=b.id)


def _priority_order(data: TimetableData, plan: Witness, rng: random.Random) -> rp.PriorityOrder | None:
    ranked = sorted(data.events, key=lambda e: (-e.priority, plan[e.id][0]))
    chain = [ranked[0]]
    for e in ranked[1:]:
        if e.priority < chain[-1].priority and plan[e.id][0] >= plan[chain[-1].id][0]:
            chain.append(e)
    if len(chain) < 2:
        return None
    return rp.PriorityOrder(events=[e.id for e in chain])


def _person_buffer(data: TimetableData, plan: Witness, rng: random.Random) -> rp.PersonBuffer | None:
    options = []
    for p in _busy_people(data):
        mine = sorted(events_of(data, p.id), key=lambda e: plan[e.id][0])
        gaps = [
            plan[b.id][0] - (plan[a.id][0] + a.duration)
            for a, b in itertools.pairwise(mine)
            if data.slots[plan[a.id][0]].day == data.slots[plan[b.id][0]].day
        ]
        if gaps and min(gaps) >= 1:
            options.append((p.id, min(min(gaps), 2)))
    if not options:
        return None
    person, gap = rng.choice(options)
    return rp.PersonBuffer(person=person, gap=gap)


def _max_consecutive(data: TimetableData, plan: Witness, rng: random.Random) -> rp.MaxConsecutive | None:
    options = []
    day_len = max(sum(1 for sl in data.slots if sl.day == d) for d in range(len(data.days)))
    for p in _busy_people(data):
        busy = used_slots(data, plan, events_of(data, p.id))
        longest = 0
        for d in range(len(data.days)):
            run = 0
            for t in (i for i, sl in enumerate(data.slots) if sl.day == d):
                run = run + 1 if t in busy else 0
                longest = max(longest, run)
        total = sum(e.duration for e in events_of(data, p.id))
        if longest < min(total, day_len):  # else no plan could break it: the rule would be vacuous
            options.append((p.id, longest))
    if not options:
        return None
    person, k = rng.choice(options)
    return rp.MaxConsecutive(person=person, max=k)


def _different_days(data: TimetableData, plan: Witness, rng: random.Random) -> rp.DifferentDays | None:
    groups = [m for m in data.series_members().values() if len(m) >= 2]
    groups += [events_of(data, p.id) for p in _busy_people(data)]
    groups = [g for g in groups if len({data.slots[plan[e.id][0]].day for e in g}) == len(g)]
    if not groups or len(data.days) < 2:
        return None
    return rp.DifferentDays(events=[e.id for e in rng.choice(groups)])


def _same_room(data: TimetableData, plan: Witness, rng: random.Random) -> rp.SameRoom | None:
    groups = [m for m in data.series_members().values() if len(m) >= 2]
    groups += [events_of(data, p.id) for p in _busy_people(data)]
    groups = [g for g in groups if len({plan[e.id][1] for e in g}) == 1]
    if not groups:
        return None
    return rp.SameRoom(events=[e.id for e in rng.choice(groups)])


# One registry of witness rule builders (the stateful layer adds its own kinds).
RULE_BUILDERS: KindRegistry[RuleBuilder] = KindRegistry(
    "rule builder",
    {
        "window": _window,
        "deadline": _deadline,
        "blocked_slots": _blocked_slots,
        "daily_limit": _daily_limit,
        "day_cap": _day_cap,
        "precedence": _precedence,
        "priority_order": _priority_order,
        "person_buffer": _person_buffer,
        "max_consecutive": _max_consecutive,
        "different_days": _different_days,
        "same_room": _same_room,
    },
)


Structure = Callable[[Entities, TimetableData, Witness, random.Random], list[tuple[str, Params]]]


@dataclass
class TaskRecipe:
    """What a timetable task type contributes: entities, base rules and an objective.

    Optional parts, each used by some task types:

    * ``planted``: kinds built from the witness like the sampled ones but always present
      (exam dates, review intervals, injuries); the draft fails when one cannot be built.
    * ``free_last_day``: the witness leaves the last day empty, so exams (or any later
      date) can fall after it inside the plan.
    * ``structure``, ``allowed`` and ``first``: rules with parameters that are part of
      the task's structure (travel times between places, fixed commitments, opening
      hours), built from the entities' notes and the witness; ``allowed`` makes the
      witness keep them while it is placed, ``first`` places fixed events first.
    * ``witnesses`` and ``pick``: plant several witnesses and keep the one ``pick``
      chooses (the cheapest, say, so a budget built from it is tight).
    """

    entities: Callable[[GenerationSpec, random.Random], Entities]
    base_rules: tuple[str, ...]
    objective: Callable[[TimetableData, random.Random], list[ObjectiveTerm]]
    availability_share: float = 0.6
    planted: tuple[str, ...] = ()
    free_last_day: bool = False
    structure: Structure | None = None
    allowed: Callable[[Entities], Allowed] | None = None
    first: Callable[[Entities], list[str]] | None = None
    witnesses: int = 1
    pick: Callable[[TimetableData, list[Witness]], Witness] | None = None
    tries: int = 30

    def witness(self, ent: Entities, data: TimetableData, rng: random.Random) -> Witness:
        target = without_last_day(data) if self.free_last_day else data
        allowed = self.allowed(ent) if self.allowed is not None else None
        first = self.first(ent) if self.first is not None else ()
        found = [
            w
            for w in (place_witness(target, rng, self.tries, allowed, first) for _ in range(self.witnesses))
            if w is not None
        ]
        if not found:
            raise NoDraft("witness")
        return self.pick(data, found) if self.pick is not None else found[0]

    def draft(self, spec: GenerationSpec, rng: random.Random, tiers: dict[str, Tier]) -> Draft:
        ent = self.entities(spec, rng)
        data = ent.data()
        plan = self.witness(ent, data, rng)
        sampled = spec.basic + spec.medium + spec.stateful
        if "availability" in self.base_rules or "availability" in sampled:
            data = with_availability(data, plan, rng, self.availability_share)
        # base rules (series order only with numbered series), the structural and planted
        # rules, then the sampled kinds; kinds without a builder are structural (e.g. availability)
        base: list[tuple[str, Tier, Params]] = [
            (k, "basic", NoParams()) for k in self.base_rules if k != "series_order" or data.series_members()
        ]
        if self.structure is not None:
            base += [(k, tiers.get(k, "basic"), p) for k, p in self.structure(ent, data, plan, rng)]
        for kind in self.planted:
            params = RULE_BUILDERS[kind](data, plan, rng)
            if params is None:
                raise NoDraft(kind)
            base.append((kind, tiers.get(kind, "basic"), params))
        kinds = sampled_kinds(spec, (*self.base_rules, *self.planted))
        structural = [k for k in kinds if k not in RULE_BUILDERS]
        rules = witness_rules(base, kinds, tiers, RULE_BUILDERS, data, plan, rng, structural)
        return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=self.objective(data, rng))


def without_last_day(data: TimetableData) -> TimetableData:
    """The same timetable with its last day's slots dropped (slot indices of the other
    days are unchanged: slots are listed day by day)."""
    last = len(data.days) - 1
    fields = {name: getattr(data, name) for name in TimetableData.model_fields}
    return TimetableData(**(fields | {"slots": tuple(s for s in data.slots if s.day < last)}))  # fresh caches
