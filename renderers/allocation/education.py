"""Prompt text of Educational Resource Planning: one sentence per rule kind and objective kind, and the
body of the prompt (the shared closing sections are the family's, in __init__)."""

from __future__ import annotations

from pbsolve.checkers.allocation import rule_params as rp
from pbsolve.checkers.allocation.data import EducationData
from pbsolve.render_kit import TaskText, and_list, plural, ranged
from pbsolve.renderers.allocation.text import disrupted
from pbsolve.schema import ObjectiveTerm, Rule

E = "educational_resource_planning"
TEXT = TaskText(
    task=E,
    data_type=EducationData,
    rule_params=rp.RULE_PARAMS[E],
    term_params=rp.TERM_PARAMS[E],
    worst_case="the data's least favourable values are group sizes at the high end and seats at the low end",
)
EDUCATION_CONTEXT = {
    "secondary_school": "a secondary school's week: subject lessons for its class groups",
    "university_labs": "a university department's lab week: practical sessions for its year groups",
    "language_school": "a language school's week: courses for its levels",
    "training_centre": "a training centre's week: courses for its client teams",
    "part_time_tutors": "an adult-education centre's week: courses for its cohorts, taught partly by part-time tutors",
}


def _part_time(d: EducationData) -> str:
    """The part-time tutors (those with unavailable slots) and the slots they work."""
    parts = [
        f"{t.id} only in " + and_list([s.id for s in d.slots if s.id not in t.unavailable])
        for t in d.teachers
        if t.unavailable
    ]
    return (
        "Some of the teachers are part-time tutors who come in only at some times of the week: each of them is "
        "available only in the slots given here and unavailable in every other slot: " + "; ".join(parts) + "."
    )


@TEXT.rule("qualified")
def _e_qualified(d: EducationData, p: rp.NoParams) -> str:
    return "Every lesson is taught by a teacher who teaches its subject."


@TEXT.rule("room_fit")
def _e_room_fit(d: EducationData, p: rp.NoParams) -> str:
    return "A lesson's room must seat its whole group and have all the equipment the lesson needs."


@TEXT.rule("teacher_no_clash")
def _e_teacher_clash(d: EducationData, p: rp.NoParams) -> str:
    return "No teacher teaches two lessons in the same slot."


@TEXT.rule("room_no_clash")
def _e_room_clash(d: EducationData, p: rp.NoParams) -> str:
    return "A room holds at most one lesson per slot."


@TEXT.rule("availability")
def _e_availability(d: EducationData, p: rp.NoParams) -> str:
    return "No teacher teaches in a slot in which they are unavailable."


@TEXT.rule("teacher_absent")
def _e_absent(d: EducationData, p: rp.TeacherAbsent) -> str:
    return f"{p.teacher} is absent in {and_list(p.slots)} and teaches no lesson then."


@TEXT.rule("teacher_load")
def _e_load(d: EducationData, p: rp.TeacherLoad) -> str:
    who = and_list(p.teachers) + (" each teach" if len(p.teachers) > 1 else " teaches")
    return f"{who} at most {plural(p.max, 'lesson')}." if p.max else f"{who} no lessons."


@TEXT.rule("kit_pool")
def _e_kit(d: EducationData, p: rp.KitPool) -> str:
    n = p.max
    if n == 0:
        return "There are no laptop trolleys: every lesson that needs laptops must be held in a room with computers."
    rooms = "a room" if n == 1 else "rooms"
    return (
        f"There {'is' if n == 1 else 'are'} {plural(n, 'laptop trolley')}: in any slot, at most {n} of the lessons "
        f"that need laptops may be held in {rooms} without computers (a lesson in a room with computers needs no "
        f"trolley)."
    )


@TEXT.rule("room_closed")
def _e_closed(d: EducationData, p: rp.RoomClosed) -> str:
    return f"Room {p.room} is closed in {and_list(p.slots)}."


@TEXT.rule("daily_load")
def _e_daily(d: EducationData, p: rp.DailyLoad) -> str:
    who = and_list(p.teachers) + (" each teach" if len(p.teachers) > 1 else " teaches")
    if not p.max:
        return f"{who} no lessons on any day."
    return f"{who} at most {plural(p.max, 'lesson')} on any one day."


@TEXT.rule("load_balance")
def _e_balance(d: EducationData, p: rp.LoadBalance) -> str:
    spread = f"differ by at most {p.max} between any two teachers" if p.max else "are all equal"
    return (
        f"Fairness: the teaching loads (lessons per teacher, counting every teacher listed, also those who teach "
        f"none) {spread}."
    )


@TEXT.rule("min_load")
def _e_min_load(d: EducationData, p: rp.MinLoad) -> str:
    who = and_list(p.teachers) + (" each teach" if len(p.teachers) > 1 else " teaches")
    return f"{who} at least {plural(p.min, 'lesson')}."


@TEXT.rule("continuity")
def _e_continuity(d: EducationData, p: rp.Continuity) -> str:
    return f"{and_list(p.lessons)} are taught by the same teacher."


@TEXT.rule("same_room")
def _e_same_room(d: EducationData, p: rp.SameRoom) -> str:
    return f"{and_list(p.lessons)} are held in the same room."


@TEXT.rule("teacher_gap")
def _e_gap(d: EducationData, p: rp.TeacherGap) -> str:
    return (
        f"{p.teacher} never teaches in two consecutive slots of the same day (slots are consecutive when they "
        f"follow each other in the slot list on one day)."
    )


@TEXT.rule("teacher_backup")
def _e_backup(d: EducationData, p: rp.NoParams) -> str:
    free = (
        ", and is available in the lesson's slot (not listed as unavailable then)"
        if any(t.unavailable for t in d.teachers)
        else ""
    )
    return (
        f"Every lesson names a backup teacher other than its own teacher, who teaches the lesson's subject{free}. "
        "If any one teacher fell ill, each of their lessons would be taught by its backup, "
        "and no teacher may then have two lessons in one slot. This must work for each teacher falling ill on their own."
    )


@TEXT.objective("preference")
def _e_preference(d: EducationData, p: rp.NoParams) -> str:
    return (
        "the preference total: each lesson counts its teacher's preference for the lesson's subject (0 = first "
        "choice; a teacher outside their subjects would count 3)"
    )


@TEXT.objective("room_cost")
def _e_room_cost(d: EducationData, p: rp.NoParams) -> str:
    return "the room cost: each lesson pays its room's cost"


@TEXT.objective("assignment_score")
def _e_score(d: EducationData, p: rp.NoParams) -> str:
    return (
        "the assignment score: lesson number n taught by the teacher listed k-th in the room listed j-th scores "
        "n × (10 × k + j); summed over lessons"
    )


@TEXT.objective("backup_score")
def _e_backup_score(d: EducationData, p: rp.NoParams) -> str:
    return "the backup score: each lesson counts the listed number k of its backup teacher; summed over lessons"


@TEXT.objective("changes")
def _e_changes(d: EducationData, p: rp.CurrentLessons) -> str:
    return "the number of lessons whose teacher or room differs from the current plan (each changed lesson counts 1)"


@TEXT.body
def _education_body(d: EducationData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    out = [
        f"You are assigning teachers and rooms for {EDUCATION_CONTEXT.get(subtask, 'a week of lessons')}. Every lesson "
        f"keeps its timetabled slot; the slots are {and_list([s.id for s in d.slots])}, in this order.",
        *([_part_time(d)] if subtask == "part_time_tutors" else []),
        "",
        "**Teachers** (listed order k = 1, 2, ...; preference 0 is a first choice):",
    ]
    for t in d.teachers:
        taught = ", ".join(f"{s} (preference {v})" for s, v in t.subjects.items())
        line = f"- {t.id}: teaches " + (taught or "no subject of this plan")
        if t.unavailable:
            line += "; unavailable " + and_list(list(t.unavailable))
        out.append(line)
    out += ["", "**Rooms** (listed order j = 1, 2, ...):"]
    for r in d.rooms:
        feats = and_list(list(r.features)) if r.features else "no special equipment"
        out.append(f"- {r.id}: {ranged(d, 'seats', r.id, r.seats)} seats, {feats}, cost {r.cost}")
    out += ["", "**Lessons** (lesson number n = 1, 2, ... as listed):"]
    for x in d.lessons:
        parts = [f"{x.id} {x.name}", x.slot, f"group {x.group}, {ranged(d, 'size', x.group, x.size)} students"]
        if x.needs:
            parts.append("needs " + and_list(list(x.needs)))
        if x.kit:
            parts.append("needs laptops (a trolley, unless its room has computers)")
        out.append("- " + " — ".join(parts))
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {disrupted(rules)}; change as few lessons as you can):"]
        out += [f"- {lid}: {t}, {r}" for lid, (t, r) in rp.current_plan(E, changes).items()]
    return out


@TEXT.verification
def _education_verification(d: EducationData) -> str:
    return (
        "under `verification`, report from your plan `load` (for every teacher, the number of lessons they teach) "
        "and `room_use` (for every room, the number of lessons held in it)."
    )
