"""Checks for Medical Resource Planning answers: every stage of every patient's pathway
gets one doctor, one room and a start slot (and, for robustness, a backup doctor).

Time runs in slots of ``slot_minutes`` minutes, numbered from 0; a stage that starts in
slot s and lasts d slots occupies slots s .. s+d-1 and ends at slot s+d. Urgency classes
follow the Manchester Triage System (immediate 0 min, very urgent 10, urgent 60, standard
120, non-urgent 240), each target scaled to whole slots in the data.

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. Every figure is recomputed from the plan in plain Python integers.
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import OK, PlanChecker, lookup, row_names, spread_verdict
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse, problem
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "medical_resource_planning"
START_WEIGHT = 100  # the order score weighs a stage's start slot by 100 and its doctor's and room's rates by 1


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TriageClass(_Frozen):
    """A Manchester Triage urgency class: its waiting target in minutes and in whole slots
    (minutes // slot length: a wait of w slots meets the target when w x slot_minutes <= minutes)."""

    id: str = Field(description="colour code: red, orange, yellow, green, blue")
    name: str = Field(description="immediate, very urgent, urgent, standard, non-urgent")
    minutes: NonNegativeInt
    target: NonNegativeInt = Field(description="the target in slots")
    weight: PositiveInt = Field(description="weight per slot waited beyond the target")


class Doctor(_Frozen):
    id: str
    skills: tuple[str, ...]
    shift_start: NonNegativeInt = Field(description="first slot of the shift")
    shift_end: PositiveInt = Field(description="slot at which the shift ends (exclusive)")
    rate: PositiveInt = Field(description="cost per slot worked")


class Room(_Frozen):
    id: str
    type: str
    beds: PositiveInt = Field(description="patients the room holds at once")
    rate: PositiveInt = Field(description="cost per slot a patient stage uses it")


class Stage(_Frozen):
    id: str = Field(description="<patient>.<k>")
    name: str
    skill: str
    room_type: str
    duration: PositiveInt = Field(description="slots")
    gap: NonNegativeInt = Field(default=0, description="minimum slots after the previous stage ends")
    points: PositiveInt = Field(description="order-score points")


class Patient(_Frozen):
    id: str
    complaint: str
    triage: str = Field(description="triage class id")
    arrival: NonNegativeInt = Field(description="slot of arrival")
    infectious: bool = False
    stages: tuple[Stage, ...]


class MedicalData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    slot_minutes: PositiveInt
    slots: PositiveInt = Field(description="the horizon: slots 0 .. slots-1")
    clock: str = Field(default="08:00", description="clock time at which slot 0 begins")
    classes: tuple[TriageClass, ...]
    doctors: tuple[Doctor, ...]
    rooms: tuple[Room, ...]
    patients: tuple[Patient, ...]
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> MedicalData:
        """Malformed data is a clear error here, never a KeyError deep in a check."""
        classes = {c.id for c in self.classes}
        names = [d.id for d in self.doctors] + [r.id for r in self.rooms] + [p.id for p in self.patients]
        names += [s.id for p in self.patients for s in p.stages]
        if len(set(names)) != len(names):
            raise ValueError("doctor, room, patient and stage ids must all be distinct")
        if not self.doctors or not self.rooms or not self.patients:
            raise ValueError("an instance needs doctors, rooms and patients")
        for d in self.doctors:
            if not d.shift_start < d.shift_end <= self.slots:
                raise ValueError(f"doctor {d.id}: shift {d.shift_start}-{d.shift_end} is not within 0-{self.slots}")
        for p in self.patients:
            if p.triage not in classes:
                raise ValueError(f"patient {p.id}: unknown triage class {p.triage!r}")
            if not p.stages:
                raise ValueError(f"patient {p.id} has no stage")
            if p.arrival >= self.slots:
                raise ValueError(f"patient {p.id} arrives after the last slot")
            for s in p.stages:
                if s.duration > self.slots:
                    raise ValueError(f"stage {s.id} lasts longer than the horizon")
        return self

    @cached_property
    def stages(self) -> tuple[Stage, ...]:
        return tuple(s for p in self.patients for s in p.stages)

    @cached_property
    def stage_by_id(self) -> dict[str, Stage]:
        return {s.id: s for s in self.stages}

    @cached_property
    def patient_of(self) -> dict[str, Patient]:
        return {s.id: p for p in self.patients for s in p.stages}

    @cached_property
    def patient_by_id(self) -> dict[str, Patient]:
        return {p.id: p for p in self.patients}

    @cached_property
    def doctor_by_id(self) -> dict[str, Doctor]:
        return {d.id: d for d in self.doctors}

    @cached_property
    def room_by_id(self) -> dict[str, Room]:
        return {r.id: r for r in self.rooms}

    @cached_property
    def class_by_id(self) -> dict[str, TriageClass]:
        return {c.id: c for c in self.classes}

    @cached_property
    def room_types(self) -> frozenset[str]:
        return frozenset(r.type for r in self.rooms)

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {
            "doctor": self.doctor_by_id,
            "patient": self.patient_by_id,
            "stage": self.stage_by_id,
            "room": self.room_by_id,
            "room type": self.room_types,
            "triage class": self.class_by_id,
        }
        return names[what]


def replaced(d: MedicalData, **changes: Any) -> MedicalData:
    """``d`` with fields replaced, as a new object (``model_copy`` would keep the cached lookups)."""
    return MedicalData.model_validate({**{f: getattr(d, f) for f in MedicalData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
DoctorName = Annotated[str, Names("doctor")]
PatientName = Annotated[str, Names("patient")]
StageName = Annotated[str, Names("stage")]
RoomName = Annotated[str, Names("room")]


class Doctors(Params):
    """Each named doctor sees at most ``max`` (patients, or minutes)."""

    doctors: list[DoctorName]
    max: NonNegativeInt


class Patients(Params):
    """The named patients."""

    patients: list[PatientName]


class SameDoctor(Params):
    """The named stages are all done by one doctor."""

    stages: list[StageName]


class Slots(Params):
    """A number of slots (a buffer, a cleaning time)."""

    slots: PositiveInt


class RoomTurnover(Params):
    """Rooms of ``room_type`` stand empty ``slots`` slots between two stages."""

    room_type: Annotated[str, Names("room type")]
    slots: PositiveInt


class LoadBalance(Params):
    """Minutes worked by any two doctors differ by at most ``max``."""

    max: NonNegativeInt


class TriageOrder(Params):
    """For each pair, the first patient's first stage starts no later than the second's."""

    pairs: list[tuple[PatientName, PatientName]]


class FatigueBreak(Params):
    """A doctor with more than ``minutes`` minutes of stages ended by slot ``slot`` does no
    stage during slots ``slot`` .. ``slot + slots - 1``."""

    slot: PositiveInt
    minutes: NonNegativeInt
    slots: PositiveInt


class DoctorAbsent(Params):
    """The doctor does no stage during slots ``start`` .. ``end - 1``."""

    doctor: DoctorName
    start: NonNegativeInt
    end: PositiveInt


class Reserved(Params):
    """A new urgent patient takes the doctor and the whole room during ``start`` .. ``end - 1``."""

    doctor: DoctorName
    room: RoomName
    start: NonNegativeInt
    end: PositiveInt
    triage: Annotated[str, Names("triage class")]


class NotBefore(Params):
    """The stage starts in slot ``slot`` or later."""

    stage: StageName
    slot: NonNegativeInt


class Backup(Params):
    """Every stage names a backup doctor; ``shifts``: the backup's shift must cover the stage."""

    shifts: bool


class CurrentStages(Params):
    """The current plan a ``changes`` term counts against: stage -> (doctor, room, start)."""

    existing: dict[StageName, tuple[DoctorName, RoomName, int]]

    def data_problems(self, data: Any) -> list[str]:
        """The checker and the model compare every stage with its current doctor, room and start."""
        found = super().data_problems(data)
        missing = [s.id for s in data.stages if s.id not in self.existing]
        return found + problem("the current plan gives no doctor, room and start for stage", missing)


RULE_PARAMS: ParamsTable = {
    "skill": NoParams,
    "room_type": NoParams,
    "doctor_overlap": NoParams,
    "room_beds": NoParams,
    "pathway": NoParams,
    "shift": NoParams,
    "max_patients": Doctors,
    "max_minutes": Doctors,
    "target_deadline": Patients,
    "min_gap": NoParams,
    "same_doctor": SameDoctor,
    "buffer": Slots,
    "room_turnover": RoomTurnover,
    "load_balance": LoadBalance,
    "triage_order": TriageOrder,
    "infection_cleaning": Slots,
    "fatigue_break": FatigueBreak,
    "doctor_absent": DoctorAbsent,
    "reserved": Reserved,
    "not_before": NotBefore,
    "backup_doctor": Backup,
}
TERM_PARAMS: ParamsTable = {
    "waiting": NoParams,
    "completion": NoParams,
    "cost": NoParams,
    "order_score": NoParams,
    "backup_cost": NoParams,
    "changes": CurrentStages,
}


def current_plan(changes: ObjectiveTerm) -> dict[str, tuple[str, str, int]]:
    """The current plan of a ``changes`` term (stage -> (doctor, room, start))."""
    return as_model(parse(TERM_PARAMS, changes), CurrentStages).existing


# -- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    assign: dict[str, tuple[str, str, int]]  # stage -> (doctor, room, start slot)
    backup: dict[str, str] | None = None  # stage -> backup doctor (robustness only)


def end(d: MedicalData, plan: Plan, sid: str) -> int:
    return plan.assign[sid][2] + d.stage_by_id[sid].duration


def first_start(plan: Plan, p: Patient) -> int:
    return plan.assign[p.stages[0].id][2]


def waited(d: MedicalData, plan: Plan, p: Patient) -> int:
    """Slots from arrival to the start of the first stage."""
    return first_start(plan, p) - p.arrival


def minutes(d: MedicalData, plan: Plan) -> dict[str, int]:
    """Doctor -> minutes of stages they do (every doctor listed)."""
    out = {x.id: 0 for x in d.doctors}
    for s in d.stages:
        out[plan.assign[s.id][0]] += s.duration * d.slot_minutes
    return out


def overlap(a0: int, a1: int, b0: int, b1: int) -> bool:
    """Do the slot ranges [a0, a1) and [b0, b1) share a slot?"""
    return a0 < b1 and b0 < a1


def _by_doctor(d: MedicalData, assign: dict[str, tuple[str, str, int]]) -> dict[str, list[tuple[int, int, str]]]:
    out: dict[str, list[tuple[int, int, str]]] = {x.id: [] for x in d.doctors}
    for s in d.stages:
        doc, _, st = assign[s.id]
        out[doc].append((st, st + s.duration, s.id))
    return out


def _first_clash(spans: list[tuple[int, int, str]], gap: int = 0) -> tuple[str, str] | None:
    """Two spans closer than ``gap`` slots (overlapping when gap is 0), or None."""
    for (a0, a1, a), (b0, b1, b) in itertools.combinations(spans, 2):
        if not (b0 >= a1 + gap or a0 >= b1 + gap):
            return a, b
    return None


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
@check("skill")
def _skill(d: MedicalData, plan: Plan, p: NoParams) -> Verdict:
    for s in d.stages:
        doc = plan.assign[s.id][0]
        if s.skill not in d.doctor_by_id[doc].skills:
            return False, f"{doc} lacks the skill {s.skill} that {s.id} needs"
    return OK


@check("room_type")
def _room_type(d: MedicalData, plan: Plan, p: NoParams) -> Verdict:
    for s in d.stages:
        room = d.room_by_id[plan.assign[s.id][1]]
        if room.type != s.room_type:
            return False, f"{s.id} needs a {s.room_type} but is in {room.id} (a {room.type})"
    return OK


@check("doctor_overlap")
def _doctor_overlap(d: MedicalData, plan: Plan, p: NoParams) -> Verdict:
    for doc, spans in _by_doctor(d, plan.assign).items():
        clash = _first_clash(spans)
        if clash:
            return False, f"{doc} does {clash[0]} and {clash[1]} at overlapping times"
    return OK


@check("room_beds")
def _room_beds(d: MedicalData, plan: Plan, p: NoParams) -> Verdict:
    by_room: dict[str, list[tuple[str, int, int]]] = {r.id: [] for r in d.rooms}
    for s in d.stages:  # each room's stages, in stage order
        _, room, a = plan.assign[s.id]
        inside = by_room.get(room)
        if inside is not None:
            inside.append((s.id, a, a + s.duration))
    for r in d.rooms:
        inside = by_room[r.id]
        if len(inside) <= r.beds:  # no slot can hold more stages than the room gets
            continue
        held = [0] * d.slots  # stages in the room per slot, counted from the spans
        for _, a, b in inside:
            for t in range(max(a, 0), min(b, d.slots)):
                held[t] += 1
        full = None  # the first slot over the beds
        for t, n in enumerate(held):
            if n > r.beds:
                full = t
                break
        if full is not None:
            here = [sid for sid, a, b in inside if overlap(full, full + 1, a, b)]
            return False, f"{r.id} holds {len(here)} stages in slot {full} ({', '.join(here)}) but has {r.beds} bed(s)"
    return OK


@check("pathway")
def _pathway(d: MedicalData, plan: Plan, p: NoParams) -> Verdict:
    for pt in d.patients:
        if first_start(plan, pt) < pt.arrival:
            return (
                False,
                f"{pt.stages[0].id} starts in slot {first_start(plan, pt)}, before {pt.id} arrives ({pt.arrival})",
            )
        for a, b in zip(pt.stages, pt.stages[1:]):
            if plan.assign[b.id][2] < end(d, plan, a.id):
                return False, f"{b.id} starts in slot {plan.assign[b.id][2]}, before {a.id} ends ({end(d, plan, a.id)})"
    return OK


@check("shift")
def _shift(d: MedicalData, plan: Plan, p: NoParams) -> Verdict:
    for s in d.stages:
        doc = d.doctor_by_id[plan.assign[s.id][0]]
        if plan.assign[s.id][2] < doc.shift_start or end(d, plan, s.id) > doc.shift_end:
            return False, f"{s.id} (slots {plan.assign[s.id][2]}-{end(d, plan, s.id) - 1}) is outside {doc.id}'s shift"
    return OK


@check("max_patients")
def _max_patients(d: MedicalData, plan: Plan, p: Doctors) -> Verdict:
    for doc in p.doctors:
        seen = {d.patient_of[s.id].id for s in d.stages if plan.assign[s.id][0] == doc}
        if len(seen) > p.max:
            return False, f"{doc} sees {len(seen)} patients (at most {p.max})"
    return OK


@check("max_minutes")
def _max_minutes(d: MedicalData, plan: Plan, p: Doctors) -> Verdict:
    worked = minutes(d, plan)
    for doc in p.doctors:
        if worked[doc] > p.max:
            return False, f"{doc} works {worked[doc]} minutes (at most {p.max})"
    return OK


@check("target_deadline")
def _target_deadline(d: MedicalData, plan: Plan, p: Patients) -> Verdict:
    for pid in p.patients:
        pt = d.patient_by_id[pid]
        target = d.class_by_id[pt.triage].target
        if waited(d, plan, pt) > target:
            return False, f"{pid} waits {waited(d, plan, pt)} slots for their first stage (target {target})"
    return OK


@check("min_gap")
def _min_gap(d: MedicalData, plan: Plan, p: NoParams) -> Verdict:
    for pt in d.patients:
        for a, b in zip(pt.stages, pt.stages[1:]):
            if b.gap and plan.assign[b.id][2] < end(d, plan, a.id) + b.gap:
                return (
                    False,
                    f"{b.id} starts {plan.assign[b.id][2] - end(d, plan, a.id)} slots after {a.id} ends (at least {b.gap})",
                )
    return OK


@check("same_doctor")
def _same_doctor(d: MedicalData, plan: Plan, p: SameDoctor) -> Verdict:
    who = sorted({plan.assign[s][0] for s in p.stages})
    return OK if len(who) == 1 else (False, f"{', '.join(p.stages)} are done by {', '.join(who)}")


@check("buffer")
def _buffer(d: MedicalData, plan: Plan, p: Slots) -> Verdict:
    for doc, spans in _by_doctor(d, plan.assign).items():
        clash = _first_clash(spans, p.slots)
        if clash:
            return False, f"{doc} has fewer than {p.slots} free slots between {clash[0]} and {clash[1]}"
    return OK


@check("room_turnover")
def _room_turnover(d: MedicalData, plan: Plan, p: RoomTurnover) -> Verdict:
    for r in d.rooms:
        if r.type != p.room_type:
            continue
        spans = [(plan.assign[s.id][2], end(d, plan, s.id), s.id) for s in d.stages if plan.assign[s.id][1] == r.id]
        clash = _first_clash(spans, p.slots)
        if clash:
            return False, f"{r.id} has fewer than {p.slots} empty slots between {clash[0]} and {clash[1]}"
    return OK


@check("load_balance")
def _load_balance(d: MedicalData, plan: Plan, p: LoadBalance) -> Verdict:
    worked = minutes(d, plan)
    return spread_verdict(worked, p.max, "works", "minutes")


@check("triage_order")
def _triage_order(d: MedicalData, plan: Plan, p: TriageOrder) -> Verdict:
    for a, b in p.pairs:
        sa, sb = first_start(plan, d.patient_by_id[a]), first_start(plan, d.patient_by_id[b])
        if sa > sb:
            return False, f"{a} is first seen in slot {sa}, after {b} (slot {sb})"
    return OK


@check("infection_cleaning")
def _infection_cleaning(d: MedicalData, plan: Plan, p: Slots) -> Verdict:
    for pt in d.patients:
        if not pt.infectious:
            continue
        for s in pt.stages:
            room, e = plan.assign[s.id][1], end(d, plan, s.id)
            for o in d.stages:
                if (
                    o.id != s.id
                    and plan.assign[o.id][1] == room
                    and overlap(e, e + p.slots, plan.assign[o.id][2], end(d, plan, o.id))
                ):
                    return (
                        False,
                        f"{o.id} is in {room} during the cleaning after infectious {s.id} (slots {e}-{e + p.slots - 1})",
                    )
    return OK


@check("fatigue_break")
def _fatigue_break(d: MedicalData, plan: Plan, p: FatigueBreak) -> Verdict:
    """Per doctor, the minutes of stages that have ended by the checkpoint; over the
    threshold, no stage of theirs may touch the break."""
    for doc, spans in _by_doctor(d, plan.assign).items():
        done = sum((b - a) * d.slot_minutes for a, b, _ in spans if b <= p.slot)
        if done <= p.minutes:
            continue
        for a, b, sid in spans:
            if overlap(a, b, p.slot, p.slot + p.slots):
                return (
                    False,
                    f"{doc} has {done} minutes done by slot {p.slot} (over {p.minutes}) but does {sid} during the break",
                )
    return OK


@check("doctor_absent")
def _doctor_absent(d: MedicalData, plan: Plan, p: DoctorAbsent) -> Verdict:
    for s in d.stages:
        doc, _, st = plan.assign[s.id]
        if doc == p.doctor and overlap(st, st + s.duration, p.start, p.end):
            return False, f"{doc} is absent in slots {p.start}-{p.end - 1} but does {s.id}"
    return OK


@check("reserved")
def _reserved(d: MedicalData, plan: Plan, p: Reserved) -> Verdict:
    for s in d.stages:
        doc, room, st = plan.assign[s.id]
        if (doc == p.doctor or room == p.room) and overlap(st, st + s.duration, p.start, p.end):
            return (
                False,
                f"{s.id} uses {doc if doc == p.doctor else room}, reserved for the new arrival in slots {p.start}-{p.end - 1}",
            )
    return OK


@check("not_before")
def _not_before(d: MedicalData, plan: Plan, p: NotBefore) -> Verdict:
    st = plan.assign[p.stage][2]
    return OK if st >= p.slot else (False, f"{p.stage} starts in slot {st}, before slot {p.slot}")


@check("backup_doctor")
def _backup_doctor(d: MedicalData, plan: Plan, p: Backup) -> Verdict:
    """Each stage's backup has the skill (and, with shifts, is on shift for it); then each
    doctor in turn is taken absent: their stages move to the backups at the same times and
    rooms, and no doctor may then do two stages at once."""
    backup = plan.backup or {}
    for s in d.stages:
        doc, _, st = plan.assign[s.id]
        b = backup.get(s.id)
        if b is None:
            return False, f"{s.id} names no backup doctor"
        if b == doc:
            return False, f"{s.id}'s backup is its own doctor"
        bd = d.doctor_by_id[b]
        if s.skill not in bd.skills:
            return False, f"{s.id}'s backup {b} lacks the skill {s.skill}"
        if p.shifts and (st < bd.shift_start or st + s.duration > bd.shift_end):
            return False, f"{s.id}'s backup {b} is not on shift for it"
    for absent in d.doctors:
        moved = {
            sid: ((backup[sid], r, st) if doc == absent.id else (doc, r, st))
            for sid, (doc, r, st) in plan.assign.items()
        }
        for doc, spans in _by_doctor(d, moved).items():
            clash = _first_clash(spans)
            if clash:
                return False, f"if {absent.id} were absent, {doc} would do {clash[0]} and {clash[1]} at once"
    return OK


# -- objective -------------------------------------------------------------------------
def late(d: MedicalData, plan: Plan, pt: Patient) -> int:
    """Weighted slots waited beyond the patient's triage target."""
    c = d.class_by_id[pt.triage]
    return c.weight * max(0, waited(d, plan, pt) - c.target)


def objective_value(d: MedicalData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    total = 0
    if kind == "waiting":
        for pt in d.patients:
            total += late(d, plan, pt)
        return total
    if kind == "completion":
        for pt in d.patients:
            last = pt.stages[-1]
            total += plan.assign[last.id][2] + last.duration
        return total
    if kind == "cost":
        for s in d.stages:
            doc, room, _ = plan.assign[s.id]
            total += s.duration * (d.doctor_by_id[doc].rate + d.room_by_id[room].rate)
        return total
    if kind == "order_score":
        for s in d.stages:
            doc, room, st = plan.assign[s.id]
            total += s.points * (START_WEIGHT * st + d.doctor_by_id[doc].rate + d.room_by_id[room].rate)
        return total
    if kind == "backup_cost":
        return sum(d.doctor_by_id[(plan.backup or {})[s.id]].rate for s in d.stages)
    if kind == "changes":
        old = as_model(tp, CurrentStages).existing
        return sum(sum(1 for a, b in zip(plan.assign[s.id], old[s.id]) if a != b) for s in d.stages)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def neighbours(d: MedicalData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one stage's doctor, room, start or backup changed, or
    the doctors of two stages swapped."""
    for s in d.stages:
        doc, room, st = plan.assign[s.id]
        for other in d.doctors:
            if other.id != doc:
                yield Plan({**plan.assign, s.id: (other.id, room, st)}, plan.backup)
        for r in d.rooms:
            if r.id != room:
                yield Plan({**plan.assign, s.id: (doc, r.id, st)}, plan.backup)
        for t in range(d.slots - s.duration + 1):
            if t != st:
                yield Plan({**plan.assign, s.id: (doc, room, t)}, plan.backup)
        if plan.backup is not None:
            for other in d.doctors:
                if other.id != plan.backup[s.id]:
                    yield Plan(plan.assign, {**plan.backup, s.id: other.id})
    for a, b in itertools.combinations([s.id for s in d.stages], 2):
        (da, ra, ta), (db, rb, tb) = plan.assign[a], plan.assign[b]
        if da != db:
            yield Plan({**plan.assign, a: (db, ra, ta), b: (da, rb, tb)}, plan.backup)
    for pt in d.patients:  # a whole pathway moved in time, or handed to one other doctor
        for delta in range(-d.slots, d.slots + 1):
            moved = {
                s.id: (plan.assign[s.id][0], plan.assign[s.id][1], plan.assign[s.id][2] + delta) for s in pt.stages
            }
            if delta and all(0 <= moved[s.id][2] <= d.slots - s.duration for s in pt.stages):
                yield Plan({**plan.assign, **moved}, plan.backup)
        for other in d.doctors:
            handed = {s.id: (other.id, *plan.assign[s.id][1:]) for s in pt.stages}
            if handed != {s.id: plan.assign[s.id] for s in pt.stages}:
                yield Plan({**plan.assign, **handed}, plan.backup)


class MedicalResources(PlanChecker):
    family = "emergency"
    task = TASK_ID
    plan_key = "schedule"
    plan_text = (
        "a schedule naming every patient stage exactly once with a listed doctor, a listed room and a whole start "
        "slot at which the stage fits before the end of the horizon (and a backup doctor where the rules ask for one)"
    )
    data_type = MedicalData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: MedicalData) -> dict[str, Any]:
        return {
            "stage": lookup([s.id for s in d.stages]),
            "doctor": lookup([x.id for x in d.doctors]),
            "room": lookup([r.id for r in d.rooms]),
        }

    def read_plan(self, d: MedicalData, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Plan | None, str]:
        rows = section.get("schedule") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'schedule' is missing or not a list"
        need_backup = "backup_doctor" in {r.kind for r in rules}
        assign: dict[str, tuple[str, str, int]] = {}
        backup: dict[str, str] = {}
        fields = {"stage": lk["stage"], "doctor": lk["doctor"], "room": lk["room"]}
        sx, dx, rx = lk["stage"].exact, lk["doctor"].exact, lk["room"].exact
        for k, row in enumerate(rows):
            try:  # the usual row, each name as the instance spells it: row_names' answer, read inline
                if type(row) is not dict:
                    raise TypeError
                sid, doc, room = sx[row["stage"]], dx[row["doctor"]], rx[row["room"]]
            except (KeyError, TypeError):
                found, why = row_names(row, k, "schedule row", fields)
                if found is None:
                    return None, why
                sid, doc, room = found
            start = row.get("start")
            if isinstance(start, bool) or not isinstance(start, int):
                return None, f"stage {sid} needs a whole-number 'start' slot"
            last = d.slots - d.stage_by_id[sid].duration
            if not 0 <= start <= last:
                return (
                    None,
                    f"stage {sid} starts in slot {start}: it must start in slot 0 to {last} to end by slot {d.slots}",
                )
            if sid in assign:
                return None, f"stage {sid} appears more than once"
            assign[sid] = (doc, room, start)
            if need_backup:
                b = row.get("backup")
                b_id = lk["doctor"].find(b) if isinstance(b, str) else None
                if b_id is None:
                    return None, f"stage {sid} needs a 'backup' doctor from the doctor list"
                backup[sid] = b_id
        missing = [s.id for s in d.stages if s.id not in assign]
        if missing:
            return None, f"stages missing from the schedule: {', '.join(missing)}"
        return Plan(assign, backup if need_backup else None), "complete plan"

    def objective_value(self, d: MedicalData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: MedicalData, plan: Plan) -> dict[str, dict[str, int]]:
        return {"minutes": minutes(d, plan), "waiting": {pt.id: waited(d, plan, pt) for pt in d.patients}}

    def existing(self, d: MedicalData, plan: Plan) -> dict[str, list[Any]]:
        return {s.id: list(plan.assign[s.id]) for s in d.stages}

    def plan_schema(self, d: MedicalData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        doctors = [x.id for x in d.doctors]
        props: dict[str, Any] = {
            "stage": {"enum": [s.id for s in d.stages]},
            "doctor": {"enum": doctors},
            "room": {"enum": [r.id for r in d.rooms]},
            "start": {"type": "integer", "minimum": 0, "maximum": d.slots - 1, "description": "start slot"},
        }
        if any(r.kind == "backup_doctor" for r in rules):
            props["backup"] = {"enum": doctors, "description": "backup doctor if the stage's doctor is absent"}
        row = {"type": "object", "properties": props, "required": list(props)}
        return {"type": "array", "items": row, "description": "every patient stage exactly once"}

    def verification_schema(self, d: MedicalData) -> dict[str, Any]:
        return figures_schema({
            "minutes": ([x.id for x in d.doctors], "for each doctor, the minutes of the stages they do"),
            "waiting": ([p.id for p in d.patients], "for each patient, the slots from arrival to the start of their first stage"),
        })  # fmt: skip

    def plan_json(self, d: MedicalData, plan: Plan) -> list[dict[str, Any]]:
        rows = []
        for s in d.stages:
            doc, room, st = plan.assign[s.id]
            row: dict[str, Any] = {"stage": s.id, "doctor": doc, "room": room, "start": st}
            if plan.backup is not None:
                row["backup"] = plan.backup[s.id]
            rows.append(row)
        return rows

    def neighbours(self, data: MedicalData, plan: Plan) -> Iterator[Plan]:
        """One move from ``plan`` (see :func:`neighbours`), for the kit's near misses."""
        return neighbours(data, plan)

    def baseline_plan(self, d: MedicalData, instance: Instance) -> Plan:
        """Stage by stage in listed order: the first doctor with the skill and the first
        room of the type, at the earliest slot from the patient's arrival (and the end of
        their previous stage) where both are free. Greedy and blind to urgency, costs,
        shifts and caps."""
        busy: dict[str, list[tuple[int, int]]] = {}
        assign: dict[str, tuple[str, str, int]] = {}
        for pt in d.patients:
            ready = pt.arrival
            for s in pt.stages:
                doc = next((x.id for x in d.doctors if s.skill in x.skills), d.doctors[0].id)
                room = next((r.id for r in d.rooms if r.type == s.room_type), d.rooms[0].id)
                last = d.slots - s.duration
                start = next(
                    (
                        t
                        for t in range(min(ready, last), last + 1)
                        if not any(overlap(t, t + s.duration, a, b) for a, b in busy.get(doc, []) + busy.get(room, []))
                    ),
                    min(ready, last),
                )
                busy.setdefault(doc, []).append((start, start + s.duration))
                busy.setdefault(room, []).append((start, start + s.duration))
                assign[s.id] = (doc, room, start)
                ready = start + s.duration
        backup = None
        if any(r.kind == "backup_doctor" for r in instance.rules):
            backup = {
                s.id: next(
                    (x.id for x in d.doctors if x.id != assign[s.id][0] and s.skill in x.skills), d.doctors[0].id
                )
                for s in d.stages
            }
        return Plan(assign, backup)


TASK = MedicalResources()
