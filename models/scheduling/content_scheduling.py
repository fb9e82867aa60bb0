"""Content Scheduling: a publication calendar of content pieces through production.

Each piece (an article, a video) is a numbered series of production steps done in
order -- draft, review, publish; script, shoot, edit, publish -- each by a named staff
member at a workstation or on a channel. The rooms of the time model are the team's
workstations (desks, the edit suite, the studio) and its publishing channels (the blog,
the newsletter, the video channel): a channel carries one publication per period, a
staff member does one task at a time. Subtasks add embargoes and a launch deadline,
channel slots (a channel publishes only at stated periods), or design assets from a
freelance designer that must be ready before their piece goes out.

The objective: publish early, each piece weighted by its distinct priority; then
finish production early; then the workstations' cost.
"""

from __future__ import annotations

import random

from pydantic import Field, PositiveInt

from pbsolve.checkers.scheduling import places as pp
from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, TimetableData
from pbsolve.kit import PositiveRange, Settings, SizeTable
from pbsolve.models.scheduling import content_rules  # noqa: F401 (registers the embargo)
from pbsolve.models.scheduling.common import (
    PEOPLE,
    PERSONAL_WITHOUT_BACKUPS,
    STATEFUL_POOL,
    WEEKDAYS,
    Entities,
    TaskRecipe,
    Witness,
    period_slots,
)
from pbsolve.models.scheduling.hard import PROBE_PARAMETERS
from pbsolve.models.scheduling.timetable_model import SPEED_PARAMETERS
from pbsolve.params import Params, make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec

TITLES = (
    "Spring buying guide", "Customer story", "Product tour", "Weekly roundup", "How-to tutorial",
    "Team interview", "Release notes", "Industry report", "Behind the scenes", "Expert Q&A",
)  # fmt: skip
# workstations and channels: (name, features, cost). One room offers writing, so two
# writers drafting at once never swap desks for the same cost (an optimum that ties by
# symmetry); editing can go to the cheaper hot desk or the edit suite, by cost.
WORKSTATIONS = (
    ("Writing room", ("writing",), 0),
    ("Hot desk", ("editing",), 1),
    ("Edit suite", ("editing", "video editing"), 2),
    ("Studio", ("recording",), 3),
    ("Design station", ("design",), 1),
)
CHANNELS = (("Blog", "blog"), ("Newsletter", "newsletter"), ("Social feed", "social"), ("Video channel", "video"))
# the steps of a piece: (step name, who does it, what it needs, durations)
ARTICLE = (("draft", "writer", "writing", (1, 2)), ("review", "editor", "editing", (1,)))
VIDEO = (
    ("script", "writer", "writing", (1,)),
    ("shoot", "producer", "recording", (2,)),
    ("edit", "producer", "video editing", (1,)),
)


class ContentSizes(Settings):
    """How big a content-scheduling instance is."""

    days: PositiveInt = Field(ge=2, le=len(WEEKDAYS))
    periods_per_day: PositiveInt = Field(ge=2, le=3)
    pieces: PositiveRange = Field(description="content pieces, each a series of steps")
    writers: PositiveInt = Field(le=3)


SIZES = SizeTable[ContentSizes](
    tiny=ContentSizes(days=2, periods_per_day=2, pieces=PositiveRange(lo=1, hi=1), writers=1),
    small=ContentSizes(days=3, periods_per_day=3, pieces=PositiveRange(lo=2, hi=2), writers=1),
    default=ContentSizes(days=4, periods_per_day=3, pieces=PositiveRange(lo=3, hi=4), writers=2),
    large=ContentSizes(days=5, periods_per_day=3, pieces=PositiveRange(lo=5, hi=6), writers=3),
)

TASK = TaskSpec(
    id="content_scheduling",
    name="Content Scheduling",
    family="scheduling",
    summary="a publication calendar: production steps in order, channel slots, staff capacity, embargoes, deadlines",
    subtasks=(
        SubtaskSpec("editorial_calendar", "Editorial calendar", "articles drafted, reviewed by the editor, published"),
        SubtaskSpec("video_pipeline", "Video pipeline", "videos scripted, shot in the studio, edited and published"),
        SubtaskSpec("product_launch", "Product launch", "launch pieces under embargo until the launch, a deadline"),
        SubtaskSpec("channel_slots", "Channel slots", "each channel publishes only in its stated periods"),
        SubtaskSpec(
            "freelance_design",
            "Freelance design",
            "graphics by a part-time designer, ready before their piece goes out",
        ),
    ),
    pool=(
        ConstraintSpec("availability", "basic", "staff availability: periods a staff member is away"),
        ConstraintSpec("room_fit", "basic", "a workstation or channel has what the task needs"),
        ConstraintSpec("person_no_overlap", "basic", "staff capacity: one task at a time per staff member"),
        ConstraintSpec("room_no_overlap", "basic", "one task per workstation, one publication per channel, at a time"),
        ConstraintSpec("embargo", "basic", "a piece must not go out before its embargo lifts"),
        ConstraintSpec("deadline", "basic", "two named tasks done by a stated time"),
        ConstraintSpec(
            "opening_hours", "basic", "channel slots: a channel or workstation usable only at stated periods"
        ),
        ConstraintSpec("window", "basic", "a task inside a stated window"),
        ConstraintSpec("blocked_slots", "basic", "no work in blocked periods"),
        ConstraintSpec("daily_limit", "basic", "staff capacity: at most k tasks a day per staff member"),
        ConstraintSpec("precedence", "medium", "a production dependency: one task before another"),
        ConstraintSpec("day_cap", "medium", "at most k tasks start on any one day"),
        ConstraintSpec("person_buffer", "medium", "a free period between two tasks of one staff member on a day"),
        ConstraintSpec("max_consecutive", "medium", "cap on consecutive busy periods of a staff member"),
        ConstraintSpec("different_days", "medium", "steps of a piece on different days"),
        ConstraintSpec("same_room", "medium", "named tasks at one workstation"),
        *PERSONAL_WITHOUT_BACKUPS,
        *STATEFUL_POOL,
    ),
    base_rules=("room_fit", "person_no_overlap", "room_no_overlap", "series_order"),
)


def _staff(spec: GenerationSpec, rng: random.Random, writers: int) -> dict[str, list[str]]:
    """Staff names by role (the channel manager publishes every piece); the designer only
    where graphics are made, the producer only for videos."""
    names = rng.sample(PEOPLE, writers + 4)
    staff = {"writer": names[:writers], "editor": [names[writers]], "channel manager": [names[writers + 1]]}
    if spec.subtask == "video_pipeline":
        staff["producer"] = [names[writers + 2]]
    if spec.subtask == "freelance_design":
        staff["designer"] = [names[writers + 3]]
    return staff


def entities(spec: GenerationSpec, rng: random.Random) -> Entities:
    s = SIZES.of(spec.size)
    days = list(WEEKDAYS[: s.days])
    slots = period_slots(days, s.periods_per_day)
    sub = spec.subtask
    staff = _staff(spec, rng, s.writers)
    n = s.pieces.draw(rng)
    titles = rng.sample(TITLES, n)
    channels = [c for c in CHANNELS if c[1] != "video"]
    priorities = rng.sample(range(1, n + 1), n)  # distinct piece priorities
    events: list[Event] = []
    assets: list[tuple[str, str]] = []  # (graphic, the publication it must precede)
    used_channels: set[str] = set()
    for i, title in enumerate(titles):
        code = chr(ord("A") + i)
        video = sub == "video_pipeline" and (i == 0 or (i == 1 and rng.random() < 0.7))  # one producer, one studio
        steps = VIDEO if video else ARTICLE
        writer = rng.choice(staff["writer"])
        channel = "video" if video else rng.choice(channels)[1]
        used_channels.add(channel)
        members = []
        for k, (step, role, need, durations) in enumerate(steps):
            who = writer if role == "writer" else staff[role][0]
            duration = rng.choice([d for d in durations if d <= s.periods_per_day])
            members.append((f"{code}{k + 1}", f"{title}: {step}", who, need, duration, priorities[i]))
        publisher = staff["channel manager"][0]
        members.append((f"{code}{len(steps) + 1}", f"{title}: publish", publisher, channel, 1, priorities[i]))
        for eid, name, who, need, duration, priority in members:
            events.append(
                Event(
                    id=eid,
                    name=name,
                    duration=duration,
                    people=(who,),
                    size=1,
                    needs=(need,),
                    priority=priority,
                    series=code,
                )
            )
        if sub == "freelance_design" and (i == 0 or rng.random() < 0.6):
            asset = Event(
                id=f"G{i + 1}",
                name=f"{title}: graphics",
                duration=1,
                people=(staff["designer"][0],),
                size=1,
                needs=("design",),
                priority=priorities[i],
            )
            events.append(asset)
            assets.append((asset.id, members[-1][0]))
    needed = {f for e in events for f in e.needs}
    rooms = [
        Room(id=name, seats=1, features=feats, cost=cost) for name, feats, cost in WORKSTATIONS if set(feats) & needed
    ]
    rooms += [Room(id=name, seats=1, features=(feat,), cost=0) for name, feat in CHANNELS if feat in used_channels]
    people = [Person(id=p, role=role) for role, names in staff.items() for p in names]
    notes: dict[str, object] = {"assets": assets, "launch": sub == "product_launch"}
    if sub == "channel_slots":
        notes["opening"] = _channel_slots(slots, [r for r in rooms if r.id in dict(CHANNELS)], rng)
    return Entities(time_unit="period", days=days, slots=slots, rooms=rooms, people=people, events=events, notes=notes)


def _channel_slots(slots: list, channels: list[Room], rng: random.Random) -> list[pp.OpeningHours]:
    """Each channel's publishing slots: one period of every day at random, and each other
    period with probability 0.4."""
    out = []
    for r in channels:
        by_day: dict[int, list[str]] = {}
        for sl in slots:
            by_day.setdefault(sl.day, []).append(sl.id)
        open_ = [rng.choice(ids) for ids in by_day.values()]
        open_ += [sl.id for sl in slots if sl.id not in open_ and rng.random() < 0.4]
        order = {sl.id: i for i, sl in enumerate(slots)}
        out.append(pp.OpeningHours(room=r.id, open=sorted(open_, key=order.__getitem__)))
    return out


def _allowed(ent: Entities):  # type: ignore[no-untyped-def]
    """The witness keeps the channel slots and has every graphic done before its piece goes
    out (None where the instance has neither)."""
    opening = {o.room: set(o.open) for o in ent.notes.get("opening", [])}
    before = dict(ent.notes["assets"])
    after = {pub: asset for asset, pub in before.items()}
    if not opening and not before:
        return None  # nothing to test: the sampler skips the call (it draws nothing itself)

    def allowed(data: TimetableData, plan: Witness, e: Event, s: int, room: str) -> bool:
        if room in opening and any(data.slots[t].id not in opening[room] for t in range(s, s + e.duration)):
            return False
        if e.id in before and before[e.id] in plan and s + e.duration > plan[before[e.id]][0]:
            return False
        if e.id in after and after[e.id] in plan:
            a = data.event_by_id[after[e.id]]
            if s < plan[a.id][0] + a.duration:
                return False
        return True

    return allowed


def _structure(ent: Entities, data: TimetableData, plan: Witness, rng: random.Random) -> list[tuple[str, Params]]:
    out: list[tuple[str, Params]] = [("opening_hours", o) for o in ent.notes.get("opening", [])]
    out += [("precedence", rp.Precedence(before=a, after=b)) for a, b in ent.notes["assets"]]
    if ent.notes.get("launch"):
        out.append(("deadline", _launch_deadline(data, plan, rng)))
    return out


def _launch_deadline(data: TimetableData, plan: Witness, rng: random.Random) -> rp.Deadline:
    """Two publications (or the one there is) must be out by a period between the witness's
    last release of them and the end of that day."""
    pubs = [m[-1] for m in data.series_members().values()]
    chosen = sorted(rng.sample(pubs, min(2, len(pubs))), key=data.events.index)
    last = max(plan[e.id][0] + e.duration - 1 for e in chosen)
    day_end = max(i for i, sl in enumerate(data.slots) if sl.day == data.slots[last].day)
    return rp.Deadline(events=[e.id for e in chosen], to=data.slots[rng.randint(last, day_end)].id)


def objective(data: TimetableData, rng: random.Random) -> list[ObjectiveTerm]:
    """Publish early by priority, then finish the production steps early, each weighted by
    its piece's priority (every step and graphic of a piece carries it), then workstation
    cost. Distinct priorities make swapping two pieces' steps change the figure."""
    last = {m[-1].id for m in data.series_members().values()}
    published = {e.id: e.priority if e.id in last else 0 for e in data.events}
    production = {e.id: 0 if e.id in last else e.priority for e in data.events}
    return [
        make_term("publish_delay", "weighted_end", rp.WeightedEnd(weights=published)),
        make_term("production_finish", "weighted_end", rp.WeightedEnd(weights=production)),
        ObjectiveTerm(id="desk_cost", kind="room_cost"),
    ]


PLANTED = {"product_launch": ("embargo",)}


def recipe(spec: GenerationSpec) -> TaskRecipe:
    base = TASK.base_rules + (("availability",) if spec.subtask == "freelance_design" else ())
    return TaskRecipe(
        entities=entities,
        base_rules=base,
        objective=objective,
        availability_share=0.8,
        planted=PLANTED.get(spec.subtask, ()),
        structure=_structure,
        allowed=_allowed,
        tries=150,
    )


# The two tuned certification solves with LP rows loaded at once and no symmetry detection
# (speed_parameters: the default-search re-certification of a tied optimum keeps its search
# and its plan). Generation CPU of 60 instances (seeds 0 and 1 at default size, tiny and
# small): 4.33 against 4.06 s, byte-identical instances.
SPEED_PARAMETERS[TASK.id] = {"add_lp_constraints_lazily": False, "symmetry_level": 0}

# The hard tier's feasibility probes without CP-SAT's root probing (a probe answers only
# whether a model is feasible), as for fitness planning and course timetabling.
# Generation CPU of the 60 instances above, two alternating runs: content 4.06-4.18 against
# 3.98-4.03 s, schedule 3.49-3.57 against 3.37-3.40 s, study 3.01-3.19 against 2.93-2.96 s,
# byte-identical instances.
PROBE_PARAMETERS[TASK.id] = {"cp_model_probing_level": 0}
