"""Checks for Educational Resource Planning answers: a teacher and a room for every lesson
(and, for robustness, a backup teacher), with lessons at fixed times."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from pbsolve.checker_kit import OK, lookup, spread_verdict
from pbsolve.checkers.allocation import rule_params as rp
from pbsolve.checkers.allocation.common import TaskChecker
from pbsolve.checkers.allocation.data import EducationData, Lesson
from pbsolve.checking import Check, figures_schema, norm
from pbsolve.kit import KindRegistry
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import NoParams, Params, as_model
from pbsolve.schema import Instance, ObjectiveTerm, Rule

OUTSIDE_SUBJECT_PENALTY = 3  # preference count of a teacher teaching outside their subjects
CHECKS: KindRegistry[Check] = KindRegistry("check")


@dataclass(frozen=True)
class Plan:
    assign: dict[str, tuple[str, str]]  # lesson -> (teacher, room)
    backup: dict[str, str] | None = None  # lesson -> backup teacher (robustness only)


check = CHECKS.register


def teacher_of(plan: Plan, lesson: str) -> str:
    return plan.assign[lesson][0]


def load(d: EducationData, plan: Plan, teacher: str) -> int:
    return sum(1 for t, _ in plan.assign.values() if t == teacher)


def _tally(ids: list[str], named: list[str]) -> dict[str, int]:
    """Id -> how many entries of ``named`` it is, for every id of ``ids`` (other names are
    not counted), in one pass."""
    out = dict.fromkeys(ids, 0)
    for x in named:
        if x in out:
            out[x] += 1
    return out


def _loads(d: EducationData, plan: Plan) -> dict[str, int]:
    """Teacher id -> :func:`load`, for every teacher."""
    return _tally([t.id for t in d.teachers], [t for t, _ in plan.assign.values()])


def _room_uses(d: EducationData, plan: Plan) -> dict[str, int]:
    """Room id -> the lessons held in it, for every room."""
    return _tally([r.id for r in d.rooms], [room for _, room in plan.assign.values()])


def _clash(d: EducationData, lessons: list[Lesson], key: Any, what: str) -> Verdict:
    seen: dict[tuple[str, str], str] = {}
    for x in lessons:
        k = (key(x), x.slot)
        if k in seen:
            return False, f"{what} {k[0]} has {seen[k]} and {x.id} in {x.slot}"
        seen[k] = x.id
    return OK


def _clash_in(d: EducationData, plan: Plan, part: int, what: str) -> Verdict:
    """:func:`_clash` of every lesson keyed by its teacher (``part`` 0) or room (1)."""
    seen: dict[tuple[str, str], str] = {}
    assign = plan.assign
    for x in d.lessons:
        k = (assign[x.id][part], x.slot)
        if k in seen:
            return False, f"{what} {k[0]} has {seen[k]} and {x.id} in {x.slot}"
        seen[k] = x.id
    return OK


# -- rule checks -----------------------------------------------------------------------
@check("qualified")
def _qualified(d: EducationData, plan: Plan, p: NoParams) -> Verdict:
    teachers, assign = d.teacher_by_id, plan.assign
    for x in d.lessons:
        t = assign[x.id][0]
        if x.subject not in teachers[t].subjects:
            return False, f"{t} does not teach {x.subject} ({x.id})"
    return OK


@check("room_fit")
def _room_fit(d: EducationData, plan: Plan, p: NoParams) -> Verdict:
    fits = d.room_fits
    for k, x in enumerate(d.lessons):
        if plan.assign[x.id][1] in fits[k]:
            continue  # a room with the seats and every feature (the tests below all pass)
        room = d.room_by_id[plan.assign[x.id][1]]
        if room.seats < x.size:
            return False, f"{x.id} needs {x.size} seats; {room.id} has {room.seats}"
        lacking = [f for f in x.needs if f not in room.features]
        if lacking:
            return False, f"{x.id} needs {', '.join(lacking)}; {room.id} lacks it"
    return OK


@check("teacher_no_clash")
def _teacher_no_clash(d: EducationData, plan: Plan, p: NoParams) -> Verdict:
    return _clash_in(d, plan, 0, "teacher")


@check("room_no_clash")
def _room_no_clash(d: EducationData, plan: Plan, p: NoParams) -> Verdict:
    return _clash_in(d, plan, 1, "room")


@check("availability")
def _availability(d: EducationData, plan: Plan, p: NoParams) -> Verdict:
    teachers, assign = d.teacher_by_id, plan.assign
    for x in d.lessons:
        t = assign[x.id][0]
        if x.slot in teachers[t].unavailable:
            return False, f"{t} is unavailable in {x.slot} but teaches {x.id}"
    return OK


@check("teacher_absent")
def _teacher_absent(d: EducationData, plan: Plan, p: rp.TeacherAbsent) -> Verdict:
    for x in d.lessons:
        if teacher_of(plan, x.id) == p.teacher and x.slot in p.slots:
            return False, f"{p.teacher} is absent in {x.slot} but teaches {x.id}"
    return OK


@check("teacher_load")
def _teacher_load(d: EducationData, plan: Plan, p: rp.TeacherLoad) -> Verdict:
    for t in p.teachers:
        n = load(d, plan, t)
        if n > p.max:
            return False, f"{t} teaches {n} lessons (at most {p.max})"
    return OK


@check("kit_pool")
def _kit_pool(d: EducationData, plan: Plan, p: rp.KitPool) -> Verdict:
    rooms, assign = d.room_by_id, plan.assign
    trolleys: dict[str, list[str]] = {}  # slot id -> the lessons needing a trolley then, in lesson order
    for x in d.lessons:
        if x.kit and "computers" not in rooms[assign[x.id][1]].features:
            trolleys.setdefault(x.slot, []).append(x.id)
    for slot in d.slots:
        using = trolleys.get(slot.id, [])
        if len(using) > p.max:
            return (
                False,
                f"{len(using)} laptop trolleys are needed in {slot.id} ({', '.join(using)}); there are {p.max}",
            )
    return OK


@check("room_closed")
def _room_closed(d: EducationData, plan: Plan, p: rp.RoomClosed) -> Verdict:
    for x in d.lessons:
        if plan.assign[x.id][1] == p.room and x.slot in p.slots:
            return False, f"{x.id} uses {p.room} in {x.slot} while it is closed"
    return OK


@check("daily_load")
def _daily_load(d: EducationData, plan: Plan, p: rp.DailyLoad) -> Verdict:
    day = d.day_of_slot
    for t in p.teachers:
        counts: dict[int, int] = {}
        for x in d.lessons:
            if teacher_of(plan, x.id) == t:
                counts[day[x.slot]] = counts.get(day[x.slot], 0) + 1
        if counts and max(counts.values()) > p.max:
            return False, f"{t} teaches {max(counts.values())} lessons in one day (at most {p.max})"
    return OK


@check("load_balance")
def _load_balance(d: EducationData, plan: Plan, p: rp.LoadBalance) -> Verdict:
    return spread_verdict(_loads(d, plan), p.max, "teaches", "lessons")


@check("min_load")
def _min_load(d: EducationData, plan: Plan, p: rp.MinLoad) -> Verdict:
    for t in p.teachers:
        n = load(d, plan, t)
        if n < p.min:
            return False, f"{t} teaches {n} lessons (at least {p.min})"
    return OK


@check("continuity")
def _continuity(d: EducationData, plan: Plan, p: rp.Continuity) -> Verdict:
    teachers = sorted({teacher_of(plan, x) for x in p.lessons})
    return OK if len(teachers) == 1 else (False, f"taught by {', '.join(teachers)}")


@check("same_room")
def _same_room(d: EducationData, plan: Plan, p: rp.SameRoom) -> Verdict:
    rooms = sorted({plan.assign[x][1] for x in p.lessons})
    return OK if len(rooms) == 1 else (False, f"held in {', '.join(rooms)}")


@check("teacher_gap")
def _teacher_gap(d: EducationData, plan: Plan, p: rp.TeacherGap) -> Verdict:
    idx = d.slot_index
    mine = sorted((idx[x.slot], x.id) for x in d.lessons if teacher_of(plan, x.id) == p.teacher)
    for (a, xa), (b, xb) in itertools.pairwise(mine):
        if b == a + 1 and d.slots[a].day == d.slots[b].day:
            return False, f"{p.teacher} teaches {xa} and {xb} back to back"
    return OK


@check("teacher_backup")
def _teacher_backup(d: EducationData, plan: Plan, p: NoParams) -> Verdict:
    """Simulates each teacher falling ill on their own: their lessons move to the
    backups, which must be qualified and available, and nobody may then teach twice at once."""
    backup = plan.backup or {}
    for x in d.lessons:
        b = backup.get(x.id)
        if b is None:
            return False, f"{x.id} names no backup teacher"
        if b == teacher_of(plan, x.id):
            return False, f"{x.id}'s backup is its own teacher"
        if x.subject not in d.teacher_by_id[b].subjects:
            return False, f"{x.id}'s backup {b} does not teach {x.subject}"
        if x.slot in d.teacher_by_id[b].unavailable:
            return False, f"{x.id}'s backup {b} is unavailable in {x.slot}"
    for ill in d.teachers:
        after = {
            x.id: (backup[x.id] if teacher_of(plan, x.id) == ill.id else teacher_of(plan, x.id)) for x in d.lessons
        }
        verdict = _clash(d, list(d.lessons), lambda x: after[x.id], f"if {ill.id} fell ill, teacher")  # noqa: B023 - called within this iteration
        if not verdict[0]:
            return verdict
    return OK


# -- objective -------------------------------------------------------------------------
def objective_value(d: EducationData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind  # read once: the chain below tests it several times
    if kind == "preference":
        teachers, assign, total = d.teacher_by_id, plan.assign, 0
        for x in d.lessons:
            total += teachers[assign[x.id][0]].subjects.get(x.subject, OUTSIDE_SUBJECT_PENALTY)
        return total
    if kind == "room_cost":
        rooms, assign, total = d.room_by_id, plan.assign, 0
        for x in d.lessons:
            total += rooms[assign[x.id][1]].cost
        return total
    if kind == "assignment_score":
        tn, rn = d.numbers
        assign, total = plan.assign, 0
        for n, x in enumerate(d.lessons, 1):
            t, r = assign[x.id]
            total += n * (10 * tn[t] + rn[r])
        return total
    if kind == "backup_score":
        tn = d.numbers[0]
        return sum(tn[(plan.backup or {})[x.id]] for x in d.lessons)
    if kind == "changes":
        old = as_model(tp, rp.CurrentLessons).existing
        return sum(1 for x in d.lessons if list(plan.assign[x.id]) != list(old[x.id]))
    raise ValueError(f"unknown objective kind {term.kind!r}")


class EducationalResources(TaskChecker):
    task = "educational_resource_planning"
    plan_key = "assignments"
    plan_text = (
        "a list of assignments naming every lesson exactly once with a listed teacher and a listed room (and a "
        "backup teacher where the rules ask for one)"
    )
    data_type = EducationData
    checks = CHECKS
    rule_params = rp.RULE_PARAMS["educational_resource_planning"]
    term_params = rp.TERM_PARAMS["educational_resource_planning"]

    def lookups(self, d: EducationData) -> dict[str, dict[str, str]]:
        return {
            "lesson": lookup([x.id for x in d.lessons]),
            "teacher": lookup([t.id for t in d.teachers]),
            "room": lookup([r.id for r in d.rooms]),
        }

    def read_plan(
        self, d: EducationData, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Plan | None, str]:
        rows = section.get("assignments") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'assignments' is missing or not a list"
        need_backup = any(r.kind == "teacher_backup" for r in rules)
        assign: dict[str, tuple[str, str]] = {}
        backup: dict[str, str] = {}
        lessons, teachers, rooms = lk["lesson"], lk["teacher"], lk["room"]
        exact_lesson, exact_teacher, exact_room = lessons.exact, teachers.exact, rooms.exact
        for k, row in enumerate(rows):
            if not isinstance(row, dict):
                return None, f"assignment {k + 1} is not an object"
            lesson, teacher, room = row.get("lesson"), row.get("teacher"), row.get("room")
            if not (isinstance(lesson, str) and isinstance(teacher, str) and isinstance(room, str)):
                return None, f"assignment {k + 1} needs string fields 'lesson', 'teacher' and 'room'"
            x = exact_lesson.get(lesson)
            if x is None:
                x = lessons.get(norm(lesson))
            if x is None:
                return None, f"assignment {k + 1} names unknown lesson {lesson[:40]!r}"
            if x in assign:
                return None, f"lesson {x} appears more than once"
            t, r = exact_teacher.get(teacher), exact_room.get(room)
            if t is None:
                t = teachers.get(norm(teacher))
            if r is None:
                r = rooms.get(norm(room))
            if t is None:
                return None, f"lesson {x} has unknown teacher {teacher[:40]!r}"
            if r is None:
                return None, f"lesson {x} has unknown room {room[:40]!r}"
            assign[x] = (t, r)
            if need_backup:
                b = row.get("backup")
                b_id = teachers.find(b) if isinstance(b, str) else None
                if b_id is None:
                    return None, f"lesson {x} needs a 'backup' teacher from the staff list"
                backup[x] = b_id
        missing = [x.id for x in d.lessons if x.id not in assign]
        if missing:
            return None, f"lessons missing from the assignments: {', '.join(missing)}"
        return Plan(assign, backup if need_backup else None), "complete plan"

    def objective_value(self, d: EducationData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: EducationData, plan: Plan) -> dict[str, dict[str, int]]:
        return {"load": _loads(d, plan), "room_use": _room_uses(d, plan)}

    def existing(self, d: EducationData, plan: Plan) -> dict[str, list[str]]:
        return {x.id: list(plan.assign[x.id]) for x in d.lessons}

    def plan_schema(self, d: EducationData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        teachers = [t.id for t in d.teachers]
        props: dict[str, Any] = {
            "lesson": {"enum": [x.id for x in d.lessons]},
            "teacher": {"enum": teachers},
            "room": {"enum": [r.id for r in d.rooms]},
        }
        if any(r.kind == "teacher_backup" for r in rules):
            props["backup"] = {"enum": teachers, "description": "backup teacher if the lesson's teacher falls ill"}
        row = {"type": "object", "properties": props, "required": list(props)}
        return {"type": "array", "items": row, "description": "every lesson exactly once"}

    def verification_schema(self, d: EducationData) -> dict[str, Any]:
        return figures_schema({
            "load": ([t.id for t in d.teachers], "for each teacher, the number of lessons they teach"),
            "room_use": ([r.id for r in d.rooms], "for each room, the number of lessons held in it"),
        })  # fmt: skip

    def plan_json(self, d: EducationData, plan: Plan) -> list[dict[str, Any]]:
        rows = []
        for x in d.lessons:
            row = {"lesson": x.id, "teacher": plan.assign[x.id][0], "room": plan.assign[x.id][1]}
            if plan.backup is not None:
                row["backup"] = plan.backup[x.id]
            rows.append(row)
        return rows

    def baseline_plan(self, d: EducationData, instance: Instance) -> Plan:
        """Lesson by lesson, the first qualified teacher and the first fitting room still
        free in that slot; backups: the first other qualified teacher."""
        busy: set[tuple[str, str]] = set()
        assign: dict[str, tuple[str, str]] = {}
        for x in d.lessons:
            t = next(
                (
                    t.id
                    for t in d.teachers
                    if x.subject in t.subjects and x.slot not in t.unavailable and (t.id, x.slot) not in busy
                ),
                d.teachers[0].id,
            )
            r = next(
                (
                    r.id
                    for r in d.rooms
                    if r.seats >= x.size and set(x.needs) <= set(r.features) and (r.id, x.slot) not in busy
                ),
                d.rooms[0].id,
            )
            busy |= {(t, x.slot), (r, x.slot)}
            assign[x.id] = (t, r)
        backup = None
        if any(r.kind == "teacher_backup" for r in instance.rules):
            backup = {
                x.id: next(
                    (t.id for t in d.teachers if t.id != assign[x.id][0] and x.subject in t.subjects), d.teachers[0].id
                )
                for x in d.lessons
            }
        return Plan(assign, backup)


TASK = EducationalResources()
