"""Prompt text of Medical Resource Planning: one sentence per rule kind and objective kind
(slots, minutes and costs stated in their units), and the body of the prompt: the slot
clock, the Manchester Triage classes with their targets in minutes and in slots, the
doctors, the rooms and the patients' pathways (the closing sections are the kit's)."""

from __future__ import annotations

from pbsolve.checkers.emergency import medical as md
from pbsolve.checkers.emergency.medical import MedicalData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, a_or_an, and_list, labelled, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=md.TASK_ID,
    data_type=MedicalData,
    rule_params=md.RULE_PARAMS,
    term_params=md.TERM_PARAMS,
    worst_case="the data's least favourable values are stage durations at the high end and beds and shift ends at the low end",
)
CONTEXT = {
    "emergency_department": "an emergency department's next hours: patients are triaged, treated and some observed",
    "outpatient_clinic": "an outpatient clinic session: specialist consultations, some followed by a test or a follow-up",
    "operating_theatres": "a theatre list: anaesthetic induction, the operation and recovery",
    "imaging_department": "an imaging department's session: scans on CT, MRI and X-ray equipment, each then reported",
    "major_incident_surge": "the first hour of a major incident: a burst of casualties is triaged and treated",
}
ROBUST_KINDS = frozenset({"backup_doctor"})


def _slots(d: MedicalData, start: int, end: int) -> str:
    return f"slot {start}" if end - start == 1 else f"slots {start}–{end - 1}"


@TEXT.rule("skill")
def _skill(d: MedicalData, p: NoParams) -> str:
    return "Every stage is done by a doctor who has the skill it needs."


@TEXT.rule("room_type")
def _room_type(d: MedicalData, p: NoParams) -> str:
    return "Every stage takes place in a room of the type it needs."


@TEXT.rule("doctor_overlap")
def _doctor_overlap(d: MedicalData, p: NoParams) -> str:
    return "No doctor does two stages that share a slot."


@TEXT.rule("room_beds")
def _room_beds(d: MedicalData, p: NoParams) -> str:
    return "In every slot, a room holds no more stages than it has beds (each stage takes one bed)."


@TEXT.rule("pathway")
def _pathway(d: MedicalData, p: NoParams) -> str:
    return (
        "Each patient's stages happen in the listed order: the first starts no earlier than the patient's arrival "
        "slot, and each later stage starts no earlier than the slot at which the previous one ends."
    )


@TEXT.rule("shift")
def _shift(d: MedicalData, p: NoParams) -> str:
    return (
        "Every stage lies within its doctor's shift: it starts no earlier than the slot at which the shift starts and "
        "ends no later than the slot at which the shift ends."
    )


@TEXT.rule("max_patients")
def _max_patients(d: MedicalData, p: md.Doctors) -> str:
    who = and_list(p.doctors) + (" each see" if len(p.doctors) > 1 else " sees")
    return f"{who} at most {plural(p.max, 'patient')} (a patient counts once however many of their stages the doctor does)."


@TEXT.rule("max_minutes")
def _max_minutes(d: MedicalData, p: md.Doctors) -> str:
    who = and_list(p.doctors) + (" each work" if len(p.doctors) > 1 else " works")
    return f"{who} at most {plural(p.max, 'minute')} in stages in all (a stage of k slots is k × {d.slot_minutes} minutes)."


@TEXT.rule("target_deadline")
def _target_deadline(d: MedicalData, p: md.Patients) -> str:
    whose = "their triage targets" if len(p.patients) > 1 else "their triage target"
    return (
        f"{and_list(p.patients)} must be seen within {whose}: the first stage starts at most the target's number of "
        "slots after arrival (a hard deadline)."
    )


@TEXT.rule("min_gap")
def _min_gap(d: MedicalData, p: NoParams) -> str:
    return "Each stage with a minimum gap starts at least that many slots after the patient's previous stage ends."


@TEXT.rule("same_doctor")
def _same_doctor(d: MedicalData, p: md.SameDoctor) -> str:
    return f"Continuity of care: {and_list(p.stages)} are done by the same doctor."


@TEXT.rule("buffer")
def _buffer(d: MedicalData, p: md.Slots) -> str:
    return (
        f"Every doctor has at least {plural(p.slots, 'free slot')} between any two of their stages (the next starts "
        f"no earlier than {p.slots} after the previous ends)."
    )


@TEXT.rule("room_turnover")
def _room_turnover(d: MedicalData, p: md.RoomTurnover) -> str:
    return (
        f"Changeover: every {p.room_type} holds one stage at a time and stands empty for at least "
        f"{plural(p.slots, 'slot')} between two stages (the next starts no earlier than {p.slots} after the previous ends)."
    )


@TEXT.rule("load_balance")
def _load_balance(d: MedicalData, p: md.LoadBalance) -> str:
    spread = f"differ by at most {plural(p.max, 'minute')}" if p.max else "are all equal"
    return f"Fairness: the minutes in stages of any two doctors (every listed doctor counts, also one with no stage) {spread}."


@TEXT.rule("triage_order")
def _triage_order(d: MedicalData, p: md.TriageOrder) -> str:
    pairs = [f"{a}'s first stage starts no later than {b}'s" for a, b in p.pairs]
    which = "the first patient of each pair" if len(pairs) > 1 else "the first patient named"
    return f"Priority ({which} is more urgent): {'; '.join(pairs)}."


@TEXT.rule("infection_cleaning")
def _infection_cleaning(d: MedicalData, p: md.Slots) -> str:
    return (
        f"Infection control: after a stage of an infectious patient ends, its room is cleaned for the next "
        f"{plural(p.slots, 'slot')} and no stage (of any patient) may be in the room during those slots."
    )


@TEXT.rule("fatigue_break")
def _fatigue_break(d: MedicalData, p: md.FatigueBreak) -> str:
    return (
        f"Fatigue: a doctor whose stages that have ended by slot {p.slot} add up to more than "
        f"{plural(p.minutes, 'minute')} takes a break in {_slots(d, p.slot, p.slot + p.slots)} and does no stage that "
        "shares a slot with it."
    )


@TEXT.rule("doctor_absent")
def _doctor_absent(d: MedicalData, p: md.DoctorAbsent) -> str:
    return (
        f"{p.doctor} is called away in {_slots(d, p.start, p.end)} and does no stage that shares a slot with that time."
    )


@TEXT.rule("reserved")
def _reserved(d: MedicalData, p: md.Reserved) -> str:
    c = d.class_by_id[p.triage]
    return (
        f"A new {c.name} ({c.id}) patient arrives: {p.doctor} and the whole of {p.room} are reserved for them in "
        f"{_slots(d, p.start, p.end)}, and no listed stage may use either in a slot of that time."
    )


@TEXT.rule("not_before")
def _not_before(d: MedicalData, p: md.NotBefore) -> str:
    return f"{p.stage} is delayed: it starts in slot {p.slot} or later."


@TEXT.rule("backup_doctor")
def _backup(d: MedicalData, p: md.Backup) -> str:
    shift = " and whose shift covers the stage" if p.shifts else ""
    return (
        f"Every stage names a backup doctor other than its own doctor, who has the stage's skill{shift}. If any one "
        "doctor were absent, each of their stages would be done by its backup at the same slots in the same room, "
        "and no doctor may then do two stages that share a slot. This must hold for each doctor being absent on "
        "their own."
    )


@TEXT.objective("waiting")
def _waiting(d: MedicalData, p: NoParams) -> str:
    return (
        "the weighted waiting beyond target: a patient whose first stage starts w slots after arrival, in a class "
        "with a target of t slots and weight k, counts k × (w − t) when w > t and 0 otherwise; summed over patients"
    )


@TEXT.objective("completion")
def _completion(d: MedicalData, p: NoParams) -> str:
    return "the total completion time: the slot at which each patient's last stage ends; summed over patients"


@TEXT.objective("cost")
def _cost(d: MedicalData, p: NoParams) -> str:
    return "the cost: each stage costs its length in slots × (its doctor's rate + its room's rate); summed over stages"


@TEXT.objective("order_score")
def _order(d: MedicalData, p: NoParams) -> str:
    return (
        f"the order score: a stage with order points q starting in slot s scores q × ({md.START_WEIGHT} × s + its "
        "doctor's rate + its room's rate); summed over stages"
    )


@TEXT.objective("backup_cost")
def _backup_cost(d: MedicalData, p: NoParams) -> str:
    return "the backup cost: each stage counts its backup doctor's rate; summed over stages"


@TEXT.objective("changes")
def _changes(d: MedicalData, p: md.CurrentStages) -> str:
    return (
        "the number of changes from the current plan: each stage counts 1 for its doctor, 1 for its room and 1 for "
        "its start slot when it differs from the current plan"
    )


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.tier == "hard" and r.kind not in ROBUST_KINDS]
    return f"the disruption in {and_list(ids)}, which it breaks" if ids else "the disruption among the rules"


@TEXT.body
def _body(d: MedicalData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    m = d.slot_minutes
    out = [
        f"You are planning {CONTEXT.get(subtask, 'a patient flow')}. Every stage of every patient's pathway is done by "
        "one doctor in one room, starting in a whole slot.",
        f"Time runs in slots of {m} minutes numbered 0 to {d.slots - 1}; slot 0 begins at {d.clock}. A stage of k "
        f"slots that starts in slot s occupies slots s to s+k−1 and ends at slot s+k; every stage must end by slot "
        f"{d.slots}.",
        "",
        "**Triage classes** (Manchester Triage System; the target is the longest wait from arrival to the first stage; "
        f"in slots it is the target minutes ÷ {m}, rounded down):",
    ]
    out += [
        f"- {c.id} ({c.name}): target {c.minutes} min = {plural(c.target, 'slot')}; weight {c.weight}"
        for c in d.classes
    ]
    out += ["", "**Doctors** (rate: cost per slot of a stage they do):"]
    shifts = any(r.kind == "shift" for r in rules) or any(x.shift_start > 0 or x.shift_end < d.slots for x in d.doctors)
    for x in d.doctors:
        line = f"- {x.id}: {labelled('skill', list(x.skills))}; rate {x.rate}"
        if shifts:
            line += (
                f"; shift starts at slot {x.shift_start} and ends at slot {ranged(d, 'shift_end', x.id, x.shift_end)}"
            )
        out.append(line)
    out += ["", "**Rooms** (rate: cost per slot of a stage held there):"]
    for r in d.rooms:
        out.append(f"- {r.id}: {r.type}; {ranged(d, 'beds', r.id, r.beds)} bed(s); rate {r.rate}")
    out += [
        "",
        "**Patients** (arrival slot; stages in pathway order: skill needed, room type, length in slots, order points):",
    ]
    for p in d.patients:
        c = d.class_by_id[p.triage]
        flag = "; infectious" if p.infectious else ""
        out.append(f"- {p.id} ({p.complaint}): triage {c.id} ({c.name}); arrives in slot {p.arrival}{flag}")
        for s in p.stages:
            length = (
                f"{ranged(d, 'duration', s.id, s.duration)} slots"
                if any(u.target == s.id for u in d.uncertain)
                else plural(s.duration, "slot")
            )
            gap = f"; at least {plural(s.gap, 'slot')} after the previous stage ends" if s.gap else ""
            out.append(
                f"  - {s.id} {s.name}: needs {s.skill}; in {a_or_an(s.room_type)}; {length}{gap}; {plural(s.points, 'order point')}"
            )
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; change as little as you can):"]
        out += [f"- {sid}: {doc}, {room}, slot {st}" for sid, (doc, room, st) in md.current_plan(changes).items()]
    return out


@TEXT.verification
def _verification(d: MedicalData) -> str:
    return (
        "under `verification`, report from your plan `minutes` (for every doctor, the minutes of the stages they do) "
        "and `waiting` (for every patient, the slots from arrival to the start of their first stage)."
    )
