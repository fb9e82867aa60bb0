"""Educational Resource Planning: a teacher and a room for every lesson, lessons at fixed times.

Decision: t[l,T] = 1 when teacher T teaches lesson l, r[l,R] = 1 when lesson l is held
in room R (exactly one of each per lesson) and, for robustness, b[l,T] = 1 when T is
lesson l's backup teacher. Lessons keep the slots of the school timetable; what is
allocated is staff, rooms and the shared laptop trolleys.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.allocation import rule_params as rp
from pbsolve.checkers.allocation.data import EducationData, Lesson, Room, Slot, Teacher
from pbsolve.family import Draft, NoDraft, SolverModel
from pbsolve.kit import (
    KindRegistry,
    PositiveRange,
    Settings,
    SizeTable,
    Uncertain,
    insert_position,
    sampled_kinds,
    witness_rules,
)
from pbsolve.model_kit import (
    Encoder,
    HardHooks,
    ModelBase,
    added_rule,
    alone_infeasible,
    first_infeasible,
    solver_model,
    with_conflict_rule,
)
from pbsolve.params import NoParams, Params, make_rule
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id="educational_resource_planning",
    name="Educational Resource Planning",
    family="allocation",
    summary="assign teachers, rooms and shared equipment to timetabled lessons",
    subtasks=(
        SubtaskSpec("secondary_school", "Secondary school", "subject teachers and classrooms for class groups"),
        SubtaskSpec("university_labs", "University labs", "lab sessions needing equipped rooms and demonstrators"),
        SubtaskSpec("language_school", "Language school", "language courses with native-speaker preferences"),
        SubtaskSpec("training_centre", "Training centre", "professional courses sharing laptop trolleys"),
        SubtaskSpec(
            "part_time_tutors",
            "Part-time tutors",
            "adult-education courses whose part-time tutors come in only on some days",
        ),
    ),
    pool=(
        ConstraintSpec("qualified", "basic", "a lesson's teacher teaches its subject"),
        ConstraintSpec("room_fit", "basic", "room capacity and equipment match"),
        ConstraintSpec("teacher_no_clash", "basic", "no teacher in two lessons at once"),
        ConstraintSpec("room_no_clash", "basic", "a room holds one lesson at a time"),
        ConstraintSpec("availability", "basic", "teachers' unavailable slots"),
        ConstraintSpec("teacher_load", "basic", "named teachers teach at most so many lessons"),
        ConstraintSpec("kit_pool", "basic", "laptop trolleys per slot are limited"),
        ConstraintSpec("room_closed", "basic", "a room is closed in stated slots"),
        ConstraintSpec("daily_load", "basic", "named teachers teach at most so many lessons a day"),
        ConstraintSpec("load_balance", "medium", "fairness: teaching loads within a stated gap"),
        ConstraintSpec("min_load", "medium", "minimum guarantee: named teachers teach at least so many lessons"),
        ConstraintSpec("continuity", "medium", "a group's lessons of one subject keep one teacher"),
        ConstraintSpec("same_room", "medium", "a group's lessons of one subject keep one room"),
        ConstraintSpec("teacher_gap", "medium", "buffer: a teacher never teaches in two consecutive slots of a day"),
        *mechanism_pool("every lesson names a backup teacher so any single teacher falling ill is covered"),
    ),
    base_rules=("qualified", "room_fit", "teacher_no_clash", "room_no_clash"),
)

PEOPLE = (
    "Ana", "Ben", "Chen", "Dara", "Eli", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kemi", "Lars",
    "Mira", "Nico", "Omar", "Pia", "Quinn", "Rosa", "Sami", "Tove",
)  # fmt: skip
ROOMS = ("Aspen", "Beech", "Cedar", "Dogwood", "Elder", "Fern", "Gorse", "Hazel")
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")
CONTEXT = {
    "secondary_school": (
        ("Maths", "English", "Physics", "Chemistry", "History", "Computing"),
        ("7A", "7B", "8A", "8B"),
    ),
    "university_labs": (
        ("Organic lab", "Optics lab", "Circuits lab", "Genetics lab", "Statistics"),
        ("Year 1", "Year 2", "Year 3"),
    ),
    "language_school": (
        ("Spanish", "French", "German", "Italian", "Japanese"),
        ("Beginners", "Intermediate", "Advanced"),
    ),
    "training_centre": (
        ("Excel", "Python", "Leadership", "Negotiation", "Data privacy"),
        ("Team North", "Team South", "Team West"),
    ),
    "part_time_tutors": (
        ("Pottery", "Bookkeeping", "Photography", "Web design", "First aid", "Creative writing"),
        ("Cohort 1", "Cohort 2", "Cohort 3"),
    ),
}
NEEDS = {
    "secondary_school": {"Physics": ("lab",), "Chemistry": ("lab",), "Computing": ("computers",)},
    "university_labs": {
        "Organic lab": ("lab",),
        "Optics lab": ("lab",),
        "Circuits lab": ("lab",),
        "Genetics lab": ("lab",),
    },
    "language_school": {},
    "training_centre": {"Leadership": ("projector",), "Negotiation": ("projector",)},
    "part_time_tutors": {"Pottery": ("kiln",), "Web design": ("computers",), "Photography": ("projector",)},
}
KIT_SUBJECTS = {
    "Computing",
    "Python",
    "Excel",
    "Statistics",
    "Data privacy",
    "Japanese",
    "Bookkeeping",
    "Creative writing",
}
# Part-time tutors work only some days (some slots in a one-day week) and are unavailable
# in the others; the availability rule always holds them to it.
PART_TIME = "part_time_tutors"


class EducationSizes(Settings):
    """How big an education-allocation instance is."""

    days: PositiveInt = Field(le=len(DAYS))
    slots_per_day: PositiveInt = Field(description="two are named AM and PM, more P1, P2, ...")
    lessons: int = Field(ge=2, description="lessons aimed at (a draft with two fewer is re-sampled)")
    teachers: PositiveInt = Field(le=len(PEOPLE))
    rooms: PositiveInt = Field(le=len(ROOMS))
    group_size: PositiveRange = Field(description="students per group; rooms seat up to six more than the largest")


SIZES = SizeTable[EducationSizes](
    tiny=EducationSizes(
        days=1, slots_per_day=2, lessons=3, teachers=2, rooms=2, group_size=PositiveRange(lo=10, hi=20)
    ),
    small=EducationSizes(
        days=2, slots_per_day=2, lessons=5, teachers=3, rooms=3, group_size=PositiveRange(lo=12, hi=28)
    ),
    default=EducationSizes(
        days=3, slots_per_day=2, lessons=16, teachers=6, rooms=5, group_size=PositiveRange(lo=12, hi=30)
    ),
    large=EducationSizes(
        days=5, slots_per_day=2, lessons=28, teachers=9, rooms=7, group_size=PositiveRange(lo=12, hi=30)
    ),
)
PROBE_TIME = 2.0
# the uniqueness re-optimisation with one presolve pass and no probing: measured on 79
# stored drafts (default seeds 0-2, small seed 0), 0.61-0.76 against 0.81-1.50 s in all
# (uniqueness over first 1.11-1.24 against 1.54-1.61), the same certificates
UNIQUENESS_PARAMETERS = {"max_presolve_iterations": 1, "cp_model_probing_level": 0}


# -- the CP-SAT model ------------------------------------------------------------------
class EducationModel(ModelBase):
    def __init__(self, data: EducationData, with_backups: bool = False) -> None:
        super().__init__()
        self.data = d = data
        self.t: dict[tuple[str, str], cp_model.IntVar] = {}
        self.r: dict[tuple[str, str], cp_model.IntVar] = {}
        self.b: dict[tuple[str, str], cp_model.IntVar] = {}
        for x in d.lessons:
            row = [self.m.new_bool_var(f"t[{x.id},{t.id}]") for t in d.teachers]
            self.t.update({(x.id, t.id): v for t, v in zip(d.teachers, row)})
            self.m.add_exactly_one(row)
            row = [self.m.new_bool_var(f"r[{x.id},{r.id}]") for r in d.rooms]
            self.r.update({(x.id, r.id): v for r, v in zip(d.rooms, row)})
            self.m.add_exactly_one(row)
            if with_backups:
                row = [self.m.new_bool_var(f"b[{x.id},{t.id}]") for t in d.teachers]
                self.b.update({(x.id, t.id): v for t, v in zip(d.teachers, row)})
                self.m.add_exactly_one(row)

    def in_slot(self, slot: str) -> list[Lesson]:
        return [x for x in self.data.lessons if x.slot == slot]

    def load(self, teacher: str) -> cp_model.LinearExpr | int:
        return sum(self.t[x.id, teacher] for x in self.data.lessons)


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("qualified")
def _qualified(tm: EducationModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for x in tm.data.lessons:
        for t in tm.data.teachers:
            if x.subject not in t.subjects:
                tm.post(tm.t[x.id, t.id] == 0, lit)


@encoder("room_fit")
def _room_fit(tm: EducationModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for x in tm.data.lessons:
        for r in tm.data.rooms:
            if r.seats < x.size or not set(x.needs) <= set(r.features):
                tm.post(tm.r[x.id, r.id] == 0, lit)


@encoder("teacher_no_clash")
def _teacher_no_clash(tm: EducationModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for s in tm.data.slots:
        here = tm.in_slot(s.id)
        if len(here) > 1:
            for t in tm.data.teachers:
                tm.post(sum(tm.t[x.id, t.id] for x in here) <= 1, lit)


@encoder("room_no_clash")
def _room_no_clash(tm: EducationModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for s in tm.data.slots:
        here = tm.in_slot(s.id)
        if len(here) > 1:
            for r in tm.data.rooms:
                tm.post(sum(tm.r[x.id, r.id] for x in here) <= 1, lit)


@encoder("availability")
def _availability(tm: EducationModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for x in tm.data.lessons:
        for t in tm.data.teachers:
            if x.slot in t.unavailable:
                tm.post(tm.t[x.id, t.id] == 0, lit)


@encoder("teacher_absent")
def _teacher_absent(tm: EducationModel, p: rp.TeacherAbsent, lit: cp_model.IntVar) -> None:
    for x in tm.data.lessons:
        if x.slot in p.slots:
            tm.post(tm.t[x.id, p.teacher] == 0, lit)


@encoder("teacher_load")
def _teacher_load(tm: EducationModel, p: rp.TeacherLoad, lit: cp_model.IntVar) -> None:
    for t in p.teachers:
        tm.post(tm.load(t) <= p.max, lit)


@encoder("kit_pool")
def _kit_pool(tm: EducationModel, p: rp.KitPool, lit: cp_model.IntVar) -> None:
    plain = [r for r in tm.data.rooms if "computers" not in r.features]
    for s in tm.data.slots:
        using = [tm.r[x.id, r.id] for x in tm.in_slot(s.id) if x.kit for r in plain]
        if using:
            tm.post(sum(using) <= p.max, lit)


@encoder("room_closed")
def _room_closed(tm: EducationModel, p: rp.RoomClosed, lit: cp_model.IntVar) -> None:
    for x in tm.data.lessons:
        if x.slot in p.slots:
            tm.post(tm.r[x.id, p.room] == 0, lit)


@encoder("daily_load")
def _daily_load(tm: EducationModel, p: rp.DailyLoad, lit: cp_model.IntVar) -> None:
    days = sorted({s.day for s in tm.data.slots})
    day = {s.id: s.day for s in tm.data.slots}
    for t in p.teachers:
        for dd in days:
            mine = [tm.t[x.id, t] for x in tm.data.lessons if day[x.slot] == dd]
            if len(mine) > p.max:
                tm.post(sum(mine) <= p.max, lit)


@encoder("load_balance")
def _load_balance(tm: EducationModel, p: rp.LoadBalance, lit: cp_model.IntVar) -> None:
    for a in tm.data.teachers:
        for b in tm.data.teachers:
            if a.id != b.id:
                tm.post(tm.load(a.id) - tm.load(b.id) <= p.max, lit)


@encoder("min_load")
def _min_load(tm: EducationModel, p: rp.MinLoad, lit: cp_model.IntVar) -> None:
    for t in p.teachers:
        tm.post(tm.load(t) >= p.min, lit)


@encoder("continuity")
def _continuity(tm: EducationModel, p: rp.Continuity, lit: cp_model.IntVar) -> None:
    for a, b in zip(p.lessons, p.lessons[1:]):
        for t in tm.data.teachers:
            tm.post(tm.t[a, t.id] == tm.t[b, t.id], lit)


@encoder("same_room")
def _same_room(tm: EducationModel, p: rp.SameRoom, lit: cp_model.IntVar) -> None:
    for a, b in zip(p.lessons, p.lessons[1:]):
        for r in tm.data.rooms:
            tm.post(tm.r[a, r.id] == tm.r[b, r.id], lit)


@encoder("teacher_gap")
def _teacher_gap(tm: EducationModel, p: rp.TeacherGap, lit: cp_model.IntVar) -> None:
    d, t = tm.data, p.teacher
    idx = d.slot_index
    for a in d.lessons:
        for b in d.lessons:
            ia, ib = idx[a.slot], idx[b.slot]
            if ib == ia + 1 and d.slots[ia].day == d.slots[ib].day:
                tm.post(tm.t[a.id, t] + tm.t[b.id, t] <= 1, lit)


@encoder("teacher_backup")
def _teacher_backup(tm: EducationModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """Backup b[l,B]; when F falls ill, lesson l of F moves to its backup:
    z[l,F,B] >= t[l,F] + b[l,B] - 1, and in every slot no teacher B then has two lessons."""
    d = tm.data
    for x in d.lessons:
        for t in d.teachers:
            b = tm.b[x.id, t.id]
            if x.subject not in t.subjects or x.slot in t.unavailable:
                tm.post(b == 0, lit)
            tm.post(b + tm.t[x.id, t.id] <= 1, lit)
    z: dict[tuple[str, str, str], cp_model.IntVar] = {}
    for x in d.lessons:
        for f in d.teachers:
            for t in d.teachers:
                if f.id != t.id:
                    v = tm.m.new_bool_var(f"moved[{x.id},{f.id},{t.id}]")
                    tm.m.add(v >= tm.t[x.id, f.id] + tm.b[x.id, t.id] - 1)
                    z[x.id, f.id, t.id] = v
    for s in d.slots:
        here = tm.in_slot(s.id)
        for f in d.teachers:
            for t in d.teachers:
                if f.id != t.id:
                    terms = [tm.t[x.id, t.id] for x in here] + [z[x.id, f.id, t.id] for x in here]
                    if len(terms) > 1:
                        tm.post(sum(terms) <= 1, lit)


OUTSIDE_SUBJECT = 3


def _objective(tm: EducationModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    if term.kind == "preference":
        pen = {(x.id, t.id): t.subjects.get(x.subject, OUTSIDE_SUBJECT) for x in d.lessons for t in d.teachers}
        return sum(pen[k] * v for k, v in tm.t.items()), OUTSIDE_SUBJECT * len(d.lessons)
    if term.kind == "room_cost":
        return sum(d.room_by_id[r].cost * v for (_, r), v in tm.r.items()), len(d.lessons) * max(
            r.cost for r in d.rooms
        )
    if term.kind == "assignment_score":
        ln = {x.id: k for k, x in enumerate(d.lessons, 1)}
        tn = {t.id: k for k, t in enumerate(d.teachers, 1)}
        rn = {r.id: k for k, r in enumerate(d.rooms, 1)}
        expr = sum(ln[x] * 10 * tn[t] * v for (x, t), v in tm.t.items()) + sum(
            ln[x] * rn[r] * v for (x, r), v in tm.r.items()
        )
        ub = sum(ln[x.id] * (10 * len(d.teachers) + len(d.rooms)) for x in d.lessons)
        return expr, ub
    if term.kind == "backup_score":
        tn = {t.id: k for k, t in enumerate(d.teachers, 1)}
        return sum(tn[t] * v for (_, t), v in tm.b.items()), len(d.teachers) * len(d.lessons)
    if term.kind == "changes":
        old = rp.current_plan(TASK.id, term)
        kept = [tm.both(tm.t[x.id, old[x.id][0]], tm.r[x.id, old[x.id][1]], f"kept[{x.id}]") for x in d.lessons]
        return len(d.lessons) - sum(kept), len(d.lessons)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = EducationData.model_validate(draft.data)
    tm = EducationModel(data, with_backups=any(r.kind == "teacher_backup" for r in draft.rules))

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        rows = []
        for x in data.lessons:
            teacher = next(t.id for t in data.teachers if solver.value(tm.t[x.id, t.id]))
            room = next(r.id for r in data.rooms if solver.value(tm.r[x.id, r.id]))
            row = {"lesson": x.id, "teacher": teacher, "room": room}
            if tm.b:
                row["backup"] = next(t.id for t in data.teachers if solver.value(tm.b[x.id, t.id]))
            rows.append(row)
        return {"assignments": rows}

    answer = [*tm.t.values(), *tm.r.values(), *tm.b.values()]
    return solver_model(
        tm,
        draft,
        ENCODERS,
        rp.RULE_PARAMS[TASK.id],
        _objective,
        decode,
        answer,
        [],
        uniqueness_parameters=UNIQUENESS_PARAMETERS,
    )


# -- sampling --------------------------------------------------------------------------
Witness = dict[str, tuple[str, str]]  # lesson -> (teacher, room)


def _fits(x: Lesson, r: Room) -> bool:
    return r.seats >= x.size and set(x.needs) <= set(r.features)


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[EducationData, Witness]:
    settings = SIZES.of(spec.size)
    n_days, per_day, n_lessons, n_teach, n_rooms = (
        settings.days,
        settings.slots_per_day,
        settings.lessons,
        settings.teachers,
        settings.rooms,
    )
    lo, hi = settings.group_size.lo, settings.group_size.hi
    subjects_all, groups_all = CONTEXT[spec.subtask]
    halves = ("AM", "PM") if per_day == 2 else tuple(f"P{k + 1}" for k in range(per_day))
    slots = [Slot(id=f"{DAYS[dd]} {h}", day=dd) for dd in range(n_days) for h in halves]
    subjects = rng.sample(subjects_all, min(len(subjects_all), max(2, n_teach)))
    # each subject taught by at least two teachers (one first choice), most teachers 2-3 subjects
    names = rng.sample(PEOPLE, n_teach)
    can: dict[str, dict[str, int]] = {t: {} for t in names}
    for subj in subjects:
        for t in rng.sample(names, min(n_teach, 2)):
            can[t][subj] = 0 if not can[t] else rng.randint(0, 2)
    for t in names:
        for subj in subjects:
            if subj not in can[t] and rng.random() < 0.25:
                can[t][subj] = rng.randint(1, 2)
    teachers = [Teacher(id=t, subjects={s: can[t][s] for s in subjects if s in can[t]}) for t in names]
    if spec.subtask == PART_TIME:
        teachers = _part_timers(teachers, slots, rng)
    features = sorted({f for s in subjects for f in NEEDS[spec.subtask].get(s, ())} | {"computers"})
    rooms = []
    for k, name in enumerate(rng.sample(ROOMS, n_rooms)):
        feats = tuple(f for f in features if rng.random() < 0.4)
        rooms.append(Room(id=name, seats=rng.randint(lo, hi + 6), features=feats, cost=k))
    big = max(range(n_rooms), key=lambda k: rooms[k].seats)
    rooms[big] = rooms[big].model_copy(update={"features": tuple(features), "seats": hi + 6})
    rng.shuffle(rooms)
    rooms = [r.model_copy(update={"cost": rng.randint(0, 3)}) for r in rooms]
    # lessons: class groups, each in distinct slots; some subjects repeat within a group.
    # A lesson is kept only when a qualified teacher and a fitting room are still free
    # in its slot, so the lessons come with a witness assignment.
    groups = list(groups_all[: max(2, min(len(groups_all), n_lessons // 2))])
    lessons: list[Lesson] = []
    plan: dict[int, tuple[str, str]] = {}
    busy: set[tuple[str, str]] = set()
    sizes = {g: rng.randint(lo, hi) for g in groups}
    favourite = {g: rng.choice(subjects) for g in groups}
    tries = 0
    while len(lessons) < n_lessons and tries < 300:
        tries += 1
        g = rng.choice(groups)
        s = rng.choice(slots).id
        if (g, s) in busy:
            continue
        subj = favourite[g] if rng.random() < 0.35 else rng.choice(subjects)
        x = Lesson(
            id="", name=f"{g} {subj}", subject=subj, group=g, size=sizes[g], slot=s,
            needs=NEEDS[spec.subtask].get(subj, ()), kit=subj in KIT_SUBJECTS and rng.random() < 0.7,
        )  # fmt: skip
        before = [plan[k] for k, y in enumerate(lessons) if y.group == g and y.subject == subj]
        free_t = [t.id for t in teachers if subj in t.subjects and (t.id, s) not in busy and s not in t.unavailable]
        free_r = [r.id for r in rooms if _fits(x, r) and (r.id, s) not in busy]
        if not free_t or not free_r:
            continue
        t = before[0][0] if before and before[0][0] in free_t and rng.random() < 0.7 else rng.choice(free_t)
        r = before[0][1] if before and before[0][1] in free_r and rng.random() < 0.7 else rng.choice(free_r)
        plan[len(lessons)] = (t, r)
        lessons.append(x)
        busy |= {(g, s), (t, s), (r, s)}
    if len(lessons) < max(2, n_lessons - 2):
        raise NoDraft("witness")
    order = {s.id: k for k, s in enumerate(slots)}
    ranked = sorted(range(len(lessons)), key=lambda k: (order[lessons[k].slot], groups.index(lessons[k].group), k))
    final = [lessons[k].model_copy(update={"id": f"L{n + 1}"}) for n, k in enumerate(ranked)]
    witness = {f"L{n + 1}": plan[k] for n, k in enumerate(ranked)}
    data = EducationData(slots=tuple(slots), teachers=tuple(teachers), rooms=tuple(rooms), lessons=tuple(final))
    return data, witness


def _part_timers(teachers: list[Teacher], slots: list[Slot], rng: random.Random) -> list[Teacher]:
    """One to half of the teachers, part-time: each works a random non-empty part of the
    week's days (of its slots when the week has one day) and is unavailable in the rest."""
    days = sorted({s.day for s in slots})
    blocks = [[s.id for s in slots if s.day == dd] for dd in days] if len(days) > 1 else [[s.id] for s in slots]
    chosen = set(rng.sample(range(len(teachers)), rng.randint(1, max(1, len(teachers) // 2))))
    out = []
    for k, t in enumerate(teachers):
        if k in chosen:
            works = set(rng.sample(range(len(blocks)), rng.randint(1, len(blocks) - 1)))
            t = t.model_copy(
                update={"unavailable": tuple(s for b, ids in enumerate(blocks) if b not in works for s in ids)}
            )
        out.append(t)
    return out


def _with_availability(d: EducationData, w: Witness, rng: random.Random) -> EducationData:
    teachers = []
    for t in d.teachers:
        mine = {x.slot for x in d.lessons if w[x.id][0] == t.id}
        free = [s.id for s in d.slots if s.id not in mine]
        off = (
            sorted(rng.sample(free, min(len(free), rng.randint(0, 2))), key=d.slot_index.__getitem__)
            if rng.random() < 0.7
            else []
        )
        teachers.append(t.model_copy(update={"unavailable": tuple(off)}))
    return d.model_copy(update={"teachers": tuple(teachers)})


def _loads(d: EducationData, w: Witness) -> dict[str, int]:
    return {t.id: sum(1 for x in d.lessons if w[x.id][0] == t.id) for t in d.teachers}


def _b_teacher_load(d: EducationData, w: Witness, rng: random.Random) -> rp.TeacherLoad | None:
    loads = _loads(d, w)
    options = [t.id for t in d.teachers if sum(1 for x in d.lessons if x.subject in t.subjects) > loads[t.id] >= 1]
    if not options:
        return None
    chosen = sorted(rng.sample(options, min(len(options), rng.randint(1, 2))), key=[t.id for t in d.teachers].index)
    return rp.TeacherLoad(teachers=chosen, max=max(loads[t] for t in chosen))


def _b_kit_pool(d: EducationData, w: Witness, rng: random.Random) -> rp.KitPool | None:
    need = {s.id: sum(1 for x in d.lessons if x.slot == s.id and x.kit) for s in d.slots}
    if max(need.values()) < 1:
        return None
    plain = {r.id for r in d.rooms if "computers" not in r.features}
    used = max(sum(1 for x in d.lessons if x.slot == s.id and x.kit and w[x.id][1] in plain) for s in d.slots)
    if used >= max(need.values()):
        return None
    return rp.KitPool(max=used)


def _b_room_closed(d: EducationData, w: Witness, rng: random.Random) -> rp.RoomClosed | None:
    options = [(r.id, s.id) for r in d.rooms for s in d.slots if not any(
        x.slot == s.id and w[x.id][1] == r.id for x in d.lessons) and any(x.slot == s.id for x in d.lessons)]  # fmt: skip
    if not options:
        return None
    room, _ = rng.choice(options)
    free = [s for r, s in options if r == room]
    return rp.RoomClosed(
        room=room, slots=sorted(rng.sample(free, min(len(free), rng.randint(1, 2))), key=d.slot_index.__getitem__)
    )


def _b_daily_load(d: EducationData, w: Witness, rng: random.Random) -> rp.DailyLoad | None:
    day = {s.id: s.day for s in d.slots}
    options = []
    for t in d.teachers:
        per: dict[int, int] = {}
        for x in d.lessons:
            if w[x.id][0] == t.id:
                per[day[x.slot]] = per.get(day[x.slot], 0) + 1
        possible = max(
            (sum(1 for x in d.lessons if day[x.slot] == dd and x.subject in t.subjects) for dd in set(day.values())),
            default=0,
        )
        if per and max(per.values()) < possible:
            options.append((t.id, max(per.values())))
    if not options:
        return None
    tid, most = rng.choice(options)
    return rp.DailyLoad(teachers=[tid], max=most)


def _b_load_balance(d: EducationData, w: Witness, rng: random.Random) -> rp.LoadBalance | None:
    loads = _loads(d, w).values()
    return rp.LoadBalance(max=max(loads) - min(loads) + rng.randint(0, 1))


def _b_min_load(d: EducationData, w: Witness, rng: random.Random) -> rp.MinLoad | None:
    loads = _loads(d, w)
    options = [t for t, n in loads.items() if n >= 1]
    if not options:
        return None
    chosen = sorted(rng.sample(options, min(len(options), rng.randint(1, 2))), key=[t.id for t in d.teachers].index)
    return rp.MinLoad(teachers=chosen, min=min(loads[t] for t in chosen))


def _series(d: EducationData) -> list[list[str]]:
    groups: dict[tuple[str, str], list[str]] = {}
    for x in d.lessons:
        groups.setdefault((x.group, x.subject), []).append(x.id)
    return [v for v in groups.values() if len(v) >= 2]


def _b_continuity(d: EducationData, w: Witness, rng: random.Random) -> rp.Continuity | None:
    options = [s for s in _series(d) if len({w[x][0] for x in s}) == 1]
    return rp.Continuity(lessons=rng.choice(options)) if options else None


def _b_same_room(d: EducationData, w: Witness, rng: random.Random) -> rp.SameRoom | None:
    options = [s for s in _series(d) if len({w[x][1] for x in s}) == 1]
    return rp.SameRoom(lessons=rng.choice(options)) if options else None


def _b_teacher_gap(d: EducationData, w: Witness, rng: random.Random) -> rp.TeacherGap | None:
    idx = d.slot_index
    options = []
    for t in d.teachers:
        mine = sorted(idx[x.slot] for x in d.lessons if w[x.id][0] == t.id)
        if len(mine) >= 2 and not any(
            b == a + 1 and d.slots[a].day == d.slots[b].day for a, b in itertools.pairwise(mine)
        ):
            options.append(t.id)
    return rp.TeacherGap(teacher=rng.choice(options)) if options else None


BUILDERS = {
    "teacher_load": _b_teacher_load,
    "kit_pool": _b_kit_pool,
    "room_closed": _b_room_closed,
    "daily_load": _b_daily_load,
    "load_balance": _b_load_balance,
    "min_load": _b_min_load,
    "continuity": _b_continuity,
    "same_room": _b_same_room,
    "teacher_gap": _b_teacher_gap,
}


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    data, witness = _entities(spec, rng)
    sampled = sampled_kinds(spec, TASK.base_rules)
    if spec.subtask == PART_TIME:
        if "availability" not in sampled:
            sampled.insert(0, "availability")  # part-timers keep to their days
    elif "availability" in sampled:
        data = _with_availability(data, witness, rng)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng, structural=("availability",))
    objective = [
        ObjectiveTerm(id="preference", kind="preference"),
        ObjectiveTerm(id="room_cost", kind="room_cost"),
        ObjectiveTerm(id="assignment_score", kind="assignment_score"),
    ]
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective)


# -- hard-tier hooks -------------------------------------------------------------------
def _plan(plan: dict[str, Any]) -> Witness:
    return {r["lesson"]: (r["teacher"], r["room"]) for r in plan["assignments"]}


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A teaching cap on one or two teachers just below the least they must teach, found
    by bisection (a lower cap only removes plans)."""
    d = EducationData.model_validate(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731

    def with_cap(teachers: list[str], most: int) -> Draft:
        return with_conflict_rule(draft_, "teacher_load", rp.TeacherLoad(teachers=teachers, max=most), position)

    names = [t.id for t in d.teachers]
    options = [[a, b] for i, a in enumerate(names) for b in names[i + 1 :]] + [[a] for a in names]
    rng.shuffle(options)
    for teachers in options[:4]:
        found = first_infeasible(range(len(d.lessons), -1, -1), lambda k: with_cap(teachers, k), feasible)  # noqa: B023 - called within this iteration
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A teacher absent, or a room closed, in the slot of a lesson that uses them."""
    d = EducationData.model_validate(draft_.data)
    out = []
    for x in d.lessons:
        t, r = _plan(plan)[x.id]
        out.append(rng.choice([
            make_rule("teacher_absent", "hard", rp.TeacherAbsent(teacher=t, slots=[x.slot])),
            make_rule("room_closed", "hard", rp.RoomClosed(room=r, slots=[x.slot])),
        ]))  # fmt: skip
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, list[str]]:
    return {r["lesson"]: [r["teacher"], r["room"]] for r in plan["assignments"]}


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    return make_rule("teacher_backup", "hard", NoParams()), [ObjectiveTerm(id="backup_score", kind="backup_score")]


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Group sizes (worst: high) and room seats (worst: low)."""
    d = EducationData.model_validate(draft_.data)
    out = []
    for g in sorted({x.group for x in d.lessons}):
        size = next(x.size for x in d.lessons if x.group == g)
        out.append(Uncertain(id="", kind="size", target=g, low=size, high=size + rng.randint(2, 6)))
    for r in d.rooms:
        if r.seats > 5:
            out.append(Uncertain(id="", kind="seats", target=r.id, low=r.seats - rng.randint(2, 6), high=r.seats))
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = EducationData.model_validate(data)
    if u.kind == "seats":
        rooms = tuple(r.model_copy(update={"seats": value}) if r.id == u.target else r for r in d.rooms)
        return {**data, "rooms": [r.model_dump(mode="json") for r in rooms]}
    lessons = tuple(x.model_copy(update={"size": value}) if x.group == u.target else x for x in d.lessons)
    return {**data, "lessons": [x.model_dump(mode="json") for x in lessons]}


def worst_is_low(u: Uncertain) -> bool:
    return u.kind == "seats"


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = EducationData.model_validate(draft_.data)
    w = _plan(plan)
    return {
        "load": {t.id: sum(1 for tt, _ in w.values() if tt == t.id) for t in d.teachers},
        "room_use": {r.id: sum(1 for _, rr in w.values() if rr == r.id) for r in d.rooms},
    }


HOOKS = HardHooks(
    base=TASK.base_rules,
    build=build,
    disruptions=disruptions,
    existing=existing,
    robust=robust,
    uncertain=uncertain,
    with_value=with_value,
    worst_is_low=worst_is_low,
)
