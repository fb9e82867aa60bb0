"""Medical Resource Planning: doctors, rooms and start slots for every stage of a patient flow.

Decision, per patient stage s: a start slot start[s] (an integer), one doctor x[s,d] and
one room y[s,r] (Booleans, exactly one of each), and, for robustness, one backup doctor
b[s,d]. Time is modelled with CP-SAT interval variables, never one Boolean per slot: for
each rule that needs it, an optional interval of the stage on a doctor (present when
x[s,d] and the rule's literal hold) or in a room, with ``add_no_overlap`` per doctor and
per single-bed room and ``add_cumulative`` for rooms with several beds.

Urgency classes are the Manchester Triage System's (immediate 0 min, very urgent 10,
urgent 60, standard 120, non-urgent 240), their targets scaled to the instance's slot
length. The objective is lexicographic, in the subtask's order: weighted waiting beyond
target, total completion (discharge) time, staff and room cost, and last a stated order
score (each stage's points x (100 x start + its doctor's rate + its room's rate)).

No two doctors and no two rooms of one type are interchangeable: each has its own stated
rate (doctors' pay rates are drawn distinct, a room's running cost is its type's base
plus its beds plus its number within the type). This is deliberate and measured: with
identical doctors (or rooms) the canonical-answer hook (:class:`pbsolve.family.Symmetry`)
only identifies plans that relabel the twins wholesale, while optima that split the
stages differently between twins are genuinely different plans with equal figures
(measured: 19 of 26 default drafts had several optimal plans with twin cubicles and twin
junior doctors declared symmetric). With distinct rates the cost term and the order
score -- a stated last criterion over plans, not a label tie-break -- separate them.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.emergency import medical as md
from pbsolve.checkers.emergency.medical import Doctor, MedicalData, Patient, Room, Stage, TriageClass
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
    id=md.TASK_ID,
    name="Medical Resource Planning",
    family="emergency",
    summary="doctors, rooms and start slots for a patient flow under triage targets, skills, shifts and pathways",
    subtasks=(
        SubtaskSpec(
            "emergency_department",
            "Emergency department",
            "triage, treatment and observation in cubicles, resus bays and a ward",
        ),
        SubtaskSpec(
            "outpatient_clinic", "Outpatient clinic", "specialist appointments and follow-up tests in clinic rooms"
        ),
        SubtaskSpec(
            "operating_theatres", "Operating theatres", "induction, operation and recovery; theatres need a changeover"
        ),
        SubtaskSpec("imaging_department", "Imaging department", "scans on CT, MRI and X-ray equipment, then a report"),
        SubtaskSpec(
            "major_incident_surge",
            "Major incident surge",
            "a burst of urgent casualties seen by interchangeable junior doctors under hard triage targets",
        ),
    ),
    pool=(
        ConstraintSpec("skill", "basic", "a stage's doctor has the skill it needs"),
        ConstraintSpec("room_type", "basic", "a stage is in a room of the type it needs"),
        ConstraintSpec("doctor_overlap", "basic", "a doctor does one stage at a time"),
        ConstraintSpec("room_beds", "basic", "a room holds at most its beds at once"),
        ConstraintSpec("pathway", "basic", "stages in pathway order, none before arrival"),
        ConstraintSpec("shift", "basic", "a doctor works only within their shift window"),
        ConstraintSpec("max_patients", "basic", "named doctors see at most so many patients"),
        ConstraintSpec("max_minutes", "basic", "named doctors work at most so many minutes"),
        ConstraintSpec("target_deadline", "basic", "named patients are seen within their triage target"),
        ConstraintSpec("min_gap", "medium", "pathway gaps: minimum slots between consecutive stages"),
        ConstraintSpec("same_doctor", "medium", "continuity: named stages keep one doctor"),
        ConstraintSpec("buffer", "medium", "a doctor has free slots between two stages"),
        ConstraintSpec("room_turnover", "medium", "rooms of a type stand empty between two stages (changeover)"),
        ConstraintSpec("load_balance", "medium", "fairness: doctors' minutes within a stated gap"),
        ConstraintSpec("triage_order", "medium", "priority: named patients are seen no later than others"),
        ConstraintSpec("infection_cleaning", "stateful", "a room is cleaned after an infectious patient before reuse"),
        ConstraintSpec("fatigue_break", "stateful", "a doctor over a cumulative-minutes threshold takes a break"),
        *mechanism_pool("every stage names a backup doctor so any single absent doctor is covered"),
    ),
    base_rules=("skill", "room_type", "doctor_overlap", "room_beds", "pathway"),
)

TRIAGE = (  # Manchester Triage System: (colour, name, target minutes, weight per slot beyond it)
    ("red", "immediate", 0, 16),
    ("orange", "very urgent", 10, 8),
    ("yellow", "urgent", 60, 4),
    ("green", "standard", 120, 2),
    ("blue", "non-urgent", 240, 1),
)
NAMES = (
    "Dr Adeyemi", "Dr Brooks", "Dr Chen", "Dr Dubois", "Dr Eriksen", "Dr Farouk", "Dr Garcia", "Dr Haddad",
    "Dr Ito", "Dr Jensen", "Dr Kowalski", "Dr Li",
)  # fmt: skip


class Flow:
    """One subtask's world: slot length, urgency mix, rooms (type, beds) in the order rooms
    are opened, skills, pathways (stage templates) and the complaints of each pathway."""

    def __init__(
        self,
        slot: int,
        classes: tuple[str, ...],
        rooms: tuple[tuple[str, int], ...],
        skills: tuple[str, ...],
        pathways: tuple[tuple[tuple[str, str, str, int, int], ...], ...],
        complaints: tuple[tuple[str, ...], ...],
        arrivals: int,
        turnover: tuple[str, int] | None = None,
        surge: int = 0,
    ) -> None:
        self.slot, self.classes, self.rooms, self.skills = slot, classes, rooms, skills
        self.pathways, self.complaints, self.arrivals = pathways, complaints, arrivals
        self.turnover = turnover  # (room type, slots) the witness leaves such rooms empty after a stage
        self.surge = surge  # patients beyond the size's count (short pathways, one burst of arrivals)


# stage template: (name, skill, room type, shortest, longest duration in slots)
FLOWS = {
    "emergency_department": Flow(
        10,
        ("red", "orange", "yellow", "green", "blue"),
        (("cubicle", 1), ("resus bay", 1), ("observation ward", 2), ("cubicle", 1), ("resus bay", 1), ("cubicle", 1)),
        ("triage", "emergency medicine", "resuscitation", "acute medicine"),
        (
            (("triage", "triage", "cubicle", 1, 1), ("treatment", "emergency medicine", "cubicle", 1, 3)),
            (
                ("triage", "triage", "cubicle", 1, 1),
                ("resuscitation", "resuscitation", "resus bay", 1, 3),
                ("observation", "acute medicine", "observation ward", 1, 3),
            ),
            (
                ("triage", "triage", "cubicle", 1, 1),
                ("treatment", "emergency medicine", "cubicle", 1, 2),
                ("observation", "acute medicine", "observation ward", 1, 3),
            ),
        ),
        (
            ("sprained ankle", "small cut", "fever"),
            ("chest pain", "collapse", "severe breathlessness"),
            ("abdominal pain", "head injury", "fall"),
        ),
        arrivals=6,
    ),
    "outpatient_clinic": Flow(
        15,
        ("yellow", "green", "blue"),
        (
            ("consulting room", 1),
            ("test room", 1),
            ("consulting room", 1),
            ("consulting room", 1),
            ("test room", 1),
            ("consulting room", 1),
        ),
        ("cardiology", "dermatology", "orthopaedics", "cardiac physiology"),
        (
            (("consultation", "cardiology", "consulting room", 1, 2), ("ECG", "cardiac physiology", "test room", 1, 1)),
            (("consultation", "dermatology", "consulting room", 1, 2),),
            (
                ("consultation", "orthopaedics", "consulting room", 1, 2),
                ("follow-up", "orthopaedics", "consulting room", 1, 1),
            ),
        ),
        (("palpitations", "chest tightness"), ("rash", "mole check"), ("knee pain", "hip pain")),
        arrivals=8,
    ),
    "operating_theatres": Flow(
        15,
        ("orange", "yellow", "green"),
        (
            ("theatre", 1),
            ("anaesthetic room", 1),
            ("recovery bay", 2),
            ("theatre", 1),
            ("anaesthetic room", 1),
            ("theatre", 1),
        ),
        ("anaesthesia", "general surgery", "orthopaedic surgery", "recovery care"),
        (
            (("induction", "anaesthesia", "anaesthetic room", 1, 1), ("operation", "general surgery", "theatre", 1, 3)),
            (
                ("induction", "anaesthesia", "anaesthetic room", 1, 1),
                ("operation", "orthopaedic surgery", "theatre", 2, 3),
                ("recovery", "recovery care", "recovery bay", 1, 2),
            ),
            (("operation", "general surgery", "theatre", 1, 2), ("recovery", "recovery care", "recovery bay", 1, 2)),
        ),
        (("appendicitis", "gallstones"), ("hip fracture", "knee replacement"), ("hernia", "skin abscess")),
        arrivals=4,
        turnover=("theatre", 1),
    ),
    "imaging_department": Flow(
        10,
        ("orange", "yellow", "green", "blue"),
        (
            ("CT scanner", 1),
            ("reporting room", 2),
            ("MRI scanner", 1),
            ("X-ray room", 1),
            ("CT scanner", 1),
            ("X-ray room", 1),
        ),
        ("CT", "radiology reporting", "MRI", "X-ray"),
        (
            (("CT scan", "CT", "CT scanner", 1, 2), ("report", "radiology reporting", "reporting room", 1, 1)),
            (("MRI scan", "MRI", "MRI scanner", 2, 3), ("report", "radiology reporting", "reporting room", 1, 1)),
            (("X-ray", "X-ray", "X-ray room", 1, 1), ("report", "radiology reporting", "reporting room", 1, 1)),
        ),
        (("suspected stroke", "abdominal pain"), ("knee injury", "back pain"), ("chest infection", "wrist injury")),
        arrivals=6,
    ),
    "major_incident_surge": Flow(
        5,
        ("red", "orange", "yellow", "green"),
        (
            ("treatment bay", 2),
            ("resus bay", 1),
            ("treatment bay", 2),
            ("resus bay", 1),
            ("treatment bay", 1),
            ("resus bay", 1),
        ),
        ("triage", "trauma", "emergency medicine", "resuscitation"),
        (
            (("triage", "triage", "treatment bay", 1, 1), ("trauma care", "trauma", "resus bay", 1, 3)),
            (("triage", "triage", "treatment bay", 1, 1), ("treatment", "emergency medicine", "treatment bay", 1, 2)),
            (("triage", "triage", "treatment bay", 1, 1),),
        ),
        (("crush injury", "blast injury"), ("burns", "smoke inhalation"), ("lacerations", "bruising")),
        arrivals=2,
        surge=2,
    ),
}
ROOM_BASE = {  # cost per slot of a room type; a room's rate is this plus its beds
    "cubicle": 2, "resus bay": 6, "observation ward": 1, "consulting room": 2, "test room": 3, "theatre": 9,
    "anaesthetic room": 4, "recovery bay": 2, "CT scanner": 7, "MRI scanner": 10, "X-ray room": 4,
    "reporting room": 1, "treatment bay": 2,
}  # fmt: skip
OBJECTIVES = {
    "emergency_department": ("waiting", "completion", "cost", "order_score"),
    "outpatient_clinic": ("waiting", "cost", "completion", "order_score"),
    "operating_theatres": ("completion", "waiting", "cost", "order_score"),
    "imaging_department": ("waiting", "completion", "cost", "order_score"),
    "major_incident_surge": ("waiting", "completion", "cost", "order_score"),
}
FORCED = {
    "emergency_department": ("triage_order",),
    "outpatient_clinic": ("shift",),
    "operating_theatres": ("room_turnover",),
    "imaging_department": ("min_gap",),
    "major_incident_surge": ("target_deadline",),
}


class MedicalSizes(Settings):
    """How big a medical-resource instance is."""

    patients: PositiveInt = Field(description="patients aimed at (a draft with fewer is re-sampled)")
    doctors: int = Field(ge=2, le=len(NAMES))
    rooms: int = Field(ge=2, le=6)
    slots: int = Field(ge=3, description="the horizon in slots")
    stages: PositiveInt = Field(description="most stages in one patient's pathway")
    total: PositiveInt = Field(description="most stages in all")
    points: PositiveRange = Field(description="order-score points of a stage (distinct)")
    second: float = Field(ge=0, le=1, description="chance that a skill has a second holder (backups need one)")


SIZES = SizeTable[MedicalSizes](
    tiny=MedicalSizes(
        patients=2, doctors=2, rooms=2, slots=4, stages=2, total=3, points=PositiveRange(lo=1, hi=9), second=0.5
    ),
    small=MedicalSizes(
        patients=3, doctors=3, rooms=3, slots=7, stages=2, total=6, points=PositiveRange(lo=1, hi=20), second=0.6
    ),
    default=MedicalSizes(
        patients=4, doctors=4, rooms=4, slots=9, stages=3, total=9, points=PositiveRange(lo=1, hi=40), second=0.75
    ),
    large=MedicalSizes(
        patients=9, doctors=6, rooms=6, slots=16, stages=3, total=20, points=PositiveRange(lo=1, hi=60), second=0.75
    ),
)
PROBE_TIME = 2.0
UNIQUENESS_PARAMETERS: dict[str, Any] = {"cp_model_presolve": False}


# -- the CP-SAT model ------------------------------------------------------------------
class MedicalModel(ModelBase):
    """start[s], x[s,d], y[s,r] (and b[s,d]) with helpers that build optional intervals."""

    def __init__(self, data: MedicalData, with_backups: bool = False) -> None:
        super().__init__()
        self.data = d = data
        self.start: dict[str, cp_model.IntVar] = {}
        self.x: dict[tuple[str, str], cp_model.IntVar] = {}
        self.y: dict[tuple[str, str], cp_model.IntVar] = {}
        self.b: dict[tuple[str, str], cp_model.IntVar] = {}
        self._both: dict[tuple[int, int], cp_model.IntVar] = {}
        for s in d.stages:
            self.start[s.id] = self.m.new_int_var(0, d.slots - s.duration, f"start[{s.id}]")
            row = [self.m.new_bool_var(f"x[{s.id},{x.id}]") for x in d.doctors]
            self.x.update({(s.id, x.id): v for x, v in zip(d.doctors, row)})
            self.m.add_exactly_one(row)
            rooms = [self.m.new_bool_var(f"y[{s.id},{r.id}]") for r in d.rooms]
            self.y.update({(s.id, r.id): v for r, v in zip(d.rooms, rooms)})
            self.m.add_exactly_one(rooms)
            if with_backups:
                brow = [self.m.new_bool_var(f"b[{s.id},{x.id}]") for x in d.doctors]
                self.b.update({(s.id, x.id): v for x, v in zip(d.doctors, brow)})
                self.m.add_exactly_one(brow)

    def end(self, s: Stage) -> cp_model.LinearExpr:
        return self.start[s.id] + s.duration

    def present(self, var: cp_model.IntVar, lit: cp_model.IntVar) -> cp_model.IntVar:
        """var AND lit, one Boolean per pair (the presence of an interval behind a rule),
        in two constraints: p implies both, and both imply p."""
        key = (var.index, lit.index)
        if key not in self._both:
            p = self.m.new_bool_var("")
            self.m.add_bool_and([var, lit]).only_enforce_if(p)
            self.m.add_bool_or([~var, ~lit, p])
            self._both[key] = p
        return self._both[key]

    def interval(self, s: Stage, presence: cp_model.IntVar, extra: int = 0) -> cp_model.IntervalVar:
        """The stage's slots (and ``extra`` slots after it) as an optional interval."""
        return self.m.new_optional_fixed_size_interval_var(self.start[s.id], s.duration + extra, presence, "")

    def doctor_minutes(self, doctor: str) -> cp_model.LinearExpr:
        d = self.data
        return cp_model.LinearExpr.weighted_sum(
            [self.x[s.id, doctor] for s in d.stages], [s.duration * d.slot_minutes for s in d.stages]
        )

    def rate_of(self, s: Stage) -> cp_model.LinearExpr:
        """The doctor's plus the room's rate of the stage."""
        d = self.data
        vs = [self.x[s.id, x.id] for x in d.doctors] + [self.y[s.id, r.id] for r in d.rooms]
        return cp_model.LinearExpr.weighted_sum(vs, [x.rate for x in d.doctors] + [r.rate for r in d.rooms])


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("skill")
def _skill(tm: MedicalModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    for s in d.stages:
        banned = [tm.x[s.id, x.id] for x in d.doctors if s.skill not in x.skills]
        if banned:
            tm.post(sum(banned) == 0, lit)


@encoder("room_type")
def _room_type(tm: MedicalModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    for s in d.stages:
        banned = [tm.y[s.id, r.id] for r in d.rooms if r.type != s.room_type]
        if banned:
            tm.post(sum(banned) == 0, lit)


@encoder("doctor_overlap")
def _doctor_overlap(tm: MedicalModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """One no-overlap per doctor over the stages' optional intervals (present: x AND lit)."""
    for x in tm.data.doctors:
        tm.m.add_no_overlap([tm.interval(s, tm.present(tm.x[s.id, x.id], lit)) for s in tm.data.stages])


@encoder("room_beds")
def _room_beds(tm: MedicalModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """A single-bed room: no-overlap; a room with several beds: cumulative, demand 1 a stage."""
    d = tm.data
    for r in d.rooms:
        intervals = [tm.interval(s, tm.present(tm.y[s.id, r.id], lit)) for s in d.stages]
        if r.beds == 1:
            tm.m.add_no_overlap(intervals)
        elif r.beds < len(d.stages):
            tm.m.add_cumulative(intervals, [1] * len(intervals), r.beds)


@encoder("pathway")
def _pathway(tm: MedicalModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for pt in tm.data.patients:
        tm.post(tm.start[pt.stages[0].id] >= pt.arrival, lit)
        for a, b in zip(pt.stages, pt.stages[1:]):
            tm.post(tm.start[b.id] >= tm.end(a), lit)


@encoder("shift")
def _shift(tm: MedicalModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    for s in d.stages:
        for x in d.doctors:
            if x.shift_start > 0:
                tm.m.add(tm.start[s.id] >= x.shift_start).only_enforce_if([tm.x[s.id, x.id], lit])
            if x.shift_end < d.slots:
                tm.m.add(tm.end(s) <= x.shift_end).only_enforce_if([tm.x[s.id, x.id], lit])


@encoder("max_patients")
def _max_patients(tm: MedicalModel, p: md.Doctors, lit: cp_model.IntVar) -> None:
    """seen[p] is at least every x of the patient's stages (a lower bound is enough: the
    cap only pushes it down)."""
    for doc in p.doctors:
        seen = []
        for pt in tm.data.patients:
            v = tm.m.new_bool_var("")
            for s in pt.stages:
                tm.m.add(v >= tm.x[s.id, doc])
            seen.append(v)
        tm.post(sum(seen) <= p.max, lit)


@encoder("max_minutes")
def _max_minutes(tm: MedicalModel, p: md.Doctors, lit: cp_model.IntVar) -> None:
    for doc in p.doctors:
        tm.post(tm.doctor_minutes(doc) <= p.max, lit)


@encoder("target_deadline")
def _target_deadline(tm: MedicalModel, p: md.Patients, lit: cp_model.IntVar) -> None:
    d = tm.data
    for pid in p.patients:
        pt = d.patient_by_id[pid]
        tm.post(tm.start[pt.stages[0].id] <= pt.arrival + d.class_by_id[pt.triage].target, lit)


@encoder("min_gap")
def _min_gap(tm: MedicalModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for pt in tm.data.patients:
        for a, b in zip(pt.stages, pt.stages[1:]):
            if b.gap:
                tm.post(tm.start[b.id] >= tm.end(a) + b.gap, lit)


@encoder("same_doctor")
def _same_doctor(tm: MedicalModel, p: md.SameDoctor, lit: cp_model.IntVar) -> None:
    for a, b in zip(p.stages, p.stages[1:]):
        for x in tm.data.doctors:
            tm.post(tm.x[a, x.id] == tm.x[b, x.id], lit)


@encoder("buffer")
def _buffer(tm: MedicalModel, p: md.Slots, lit: cp_model.IntVar) -> None:
    """Each stage's interval stretched by the buffer: stretched intervals of one doctor
    never overlap exactly when consecutive stages are the buffer apart."""
    for x in tm.data.doctors:
        tm.m.add_no_overlap([tm.interval(s, tm.present(tm.x[s.id, x.id], lit), p.slots) for s in tm.data.stages])


@encoder("room_turnover")
def _room_turnover(tm: MedicalModel, p: md.RoomTurnover, lit: cp_model.IntVar) -> None:
    d = tm.data
    for r in d.rooms:
        if r.type == p.room_type:
            tm.m.add_no_overlap([tm.interval(s, tm.present(tm.y[s.id, r.id], lit), p.slots) for s in d.stages])


@encoder("load_balance")
def _load_balance(tm: MedicalModel, p: md.LoadBalance, lit: cp_model.IntVar) -> None:
    doctors = tm.data.doctors
    for a in doctors:
        for b in doctors:
            if a.id != b.id:
                tm.post(tm.doctor_minutes(a.id) - tm.doctor_minutes(b.id) <= p.max, lit)


@encoder("triage_order")
def _triage_order(tm: MedicalModel, p: md.TriageOrder, lit: cp_model.IntVar) -> None:
    d = tm.data
    for a, b in p.pairs:
        tm.post(tm.start[d.patient_by_id[a].stages[0].id] <= tm.start[d.patient_by_id[b].stages[0].id], lit)


@encoder("infection_cleaning")
def _infection_cleaning(tm: MedicalModel, p: md.Slots, lit: cp_model.IntVar) -> None:
    """Per room, each infectious stage's cleaning window (the slots after it ends) and each
    other stage's interval: a two-interval no-overlap, both present when both stages are
    in the room and the rule holds."""
    d = tm.data
    for pt in d.patients:
        if not pt.infectious:
            continue
        for s in pt.stages:
            for r in d.rooms:
                here = tm.present(tm.y[s.id, r.id], lit)
                clean = tm.m.new_optional_fixed_size_interval_var(tm.start[s.id] + s.duration, p.slots, here, "")
                for o in d.stages:
                    if o.id != s.id:
                        tm.m.add_no_overlap([clean, tm.interval(o, tm.present(tm.y[o.id, r.id], lit))])


@encoder("fatigue_break")
def _fatigue_break(tm: MedicalModel, p: md.FatigueBreak, lit: cp_model.IntVar) -> None:
    """before[s]: the stage ends by the checkpoint; after[s]: it starts after the break.
    Per doctor a free Boolean 'over': either the minutes of the stages ended by the
    checkpoint stay within the threshold, or every stage of theirs is before or after."""
    d = tm.data
    before, after = {}, {}
    for s in d.stages:
        before[s.id], after[s.id] = tm.m.new_bool_var(""), tm.m.new_bool_var("")
        tm.m.add(tm.end(s) <= p.slot).only_enforce_if(before[s.id])
        tm.m.add(tm.end(s) >= p.slot + 1).only_enforce_if(~before[s.id])
        tm.m.add(tm.start[s.id] >= p.slot + p.slots).only_enforce_if(after[s.id])
        tm.m.add(tm.start[s.id] <= p.slot + p.slots - 1).only_enforce_if(~after[s.id])
    big = sum(s.duration for s in d.stages) * d.slot_minutes
    for x in d.doctors:
        over = tm.m.new_bool_var("")
        done = []
        for s in d.stages:
            z = tm.m.new_bool_var("")
            tm.m.add(z >= tm.x[s.id, x.id] + before[s.id] - 1)
            done.append(z)
        worked = cp_model.LinearExpr.weighted_sum(done, [s.duration * d.slot_minutes for s in d.stages])
        tm.post(worked <= p.minutes + big * over, lit)
        for s in d.stages:
            tm.post(before[s.id] + after[s.id] >= tm.x[s.id, x.id] + over - 1, lit)


def _away(tm: MedicalModel, s: Stage, var: cp_model.IntVar, start: int, end: int, lit: cp_model.IntVar) -> None:
    """The stage, when ``var`` holds, shares no slot with [start, end) (the rule's literal on)."""
    block = tm.m.new_optional_fixed_size_interval_var(start, end - start, lit, "")
    tm.m.add_no_overlap([block, tm.interval(s, tm.present(var, lit))])


@encoder("doctor_absent")
def _doctor_absent(tm: MedicalModel, p: md.DoctorAbsent, lit: cp_model.IntVar) -> None:
    for s in tm.data.stages:
        _away(tm, s, tm.x[s.id, p.doctor], p.start, p.end, lit)


@encoder("reserved")
def _reserved(tm: MedicalModel, p: md.Reserved, lit: cp_model.IntVar) -> None:
    for s in tm.data.stages:
        _away(tm, s, tm.x[s.id, p.doctor], p.start, p.end, lit)
        _away(tm, s, tm.y[s.id, p.room], p.start, p.end, lit)


@encoder("not_before")
def _not_before(tm: MedicalModel, p: md.NotBefore, lit: cp_model.IntVar) -> None:
    tm.post(tm.start[p.stage] >= p.slot, lit)


@encoder("backup_doctor")
def _backup_doctor(tm: MedicalModel, p: md.Backup, lit: cp_model.IntVar) -> None:
    """For each absent doctor F and each other doctor W, W's own stages and the stages of F
    whose backup is W never overlap: presence q >= lit AND (x[s,W] OR (x[s,F] AND b[s,W]))
    (a lower bound is enough: a present interval only adds a constraint)."""
    d = tm.data
    for s in d.stages:
        for x in d.doctors:
            b = tm.b[s.id, x.id]
            if s.skill not in x.skills:
                tm.post(b == 0, lit)
            tm.post(b + tm.x[s.id, x.id] <= 1, lit)
            if p.shifts:
                if x.shift_start > 0:
                    tm.m.add(tm.start[s.id] >= x.shift_start).only_enforce_if([b, lit])
                if x.shift_end < d.slots:
                    tm.m.add(tm.end(s) <= x.shift_end).only_enforce_if([b, lit])
    for f in d.doctors:
        for w in d.doctors:
            if f.id == w.id:
                continue
            intervals = []
            for s in d.stages:
                q = tm.m.new_bool_var("")
                tm.m.add(q >= lit + tm.x[s.id, w.id] - 1)
                tm.m.add(q >= lit + tm.x[s.id, f.id] + tm.b[s.id, w.id] - 2)
                intervals.append(tm.interval(s, q))
            tm.m.add_no_overlap(intervals)


def _objective(tm: MedicalModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    if term.kind == "waiting":
        parts, ub = [], 0
        for pt in d.patients:
            c = d.class_by_id[pt.triage]
            w = tm.m.new_int_var(0, d.slots, f"late[{pt.id}]")
            tm.m.add_max_equality(w, [tm.start[pt.stages[0].id] - pt.arrival - c.target, 0])
            parts.append(c.weight * w)
            ub += c.weight * d.slots
        return sum(parts), ub
    if term.kind == "completion":
        return sum(tm.end(pt.stages[-1]) for pt in d.patients), len(d.patients) * d.slots
    top = max(x.rate for x in d.doctors) + max(r.rate for r in d.rooms)
    if term.kind == "cost":
        return sum(s.duration * tm.rate_of(s) for s in d.stages), sum(s.duration for s in d.stages) * top
    if term.kind == "order_score":
        expr = sum(s.points * (md.START_WEIGHT * tm.start[s.id] + tm.rate_of(s)) for s in d.stages)
        return expr, sum(s.points * (md.START_WEIGHT * d.slots + top) for s in d.stages)
    if term.kind == "backup_cost":
        cells = list(tm.b.items())
        rate = {x.id: x.rate for x in d.doctors}
        expr = cp_model.LinearExpr.weighted_sum([v for _, v in cells], [rate[x] for (_, x), _ in cells])
        return expr, len(d.stages) * max(rate.values())
    if term.kind == "changes":
        old = md.current_plan(term)
        parts = []
        for s in d.stages:
            doc, room, st = old[s.id]
            parts += [1 - tm.x[s.id, doc], 1 - tm.y[s.id, room], tm.differs(tm.start[s.id], st, "")]
        return sum(parts), 3 * len(d.stages)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = MedicalData.model_validate(draft.data)
    robust = any(r.kind == "backup_doctor" for r in draft.rules)
    tm = MedicalModel(data, with_backups=robust)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        rows = []
        for s in data.stages:
            doc = next(x.id for x in data.doctors if solver.value(tm.x[s.id, x.id]))
            room = next(r.id for r in data.rooms if solver.value(tm.y[s.id, r.id]))
            row: dict[str, Any] = {
                "stage": s.id,
                "doctor": doc,
                "room": room,
                "start": int(solver.value(tm.start[s.id])),
            }
            if tm.b:
                row["backup"] = next(x.id for x in data.doctors if solver.value(tm.b[s.id, x.id]))
            rows.append(row)
        return {"schedule": rows}

    answer = [*tm.x.values(), *tm.y.values(), *tm.b.values()]
    starts = [tm.start[s.id] for s in data.stages]
    return solver_model(
        tm,
        draft,
        ENCODERS,
        md.RULE_PARAMS,
        _objective,
        decode,
        answer,
        starts,
        uniqueness_parameters=UNIQUENESS_PARAMETERS,
    )


# -- sampling --------------------------------------------------------------------------
Witness = dict[str, tuple[str, str, int]]  # stage -> (doctor, room, start)


def _classes(flow: Flow) -> tuple[TriageClass, ...]:
    return tuple(
        TriageClass(id=c, name=n, minutes=mins, target=mins // flow.slot, weight=w)
        for c, n, mins, w in TRIAGE
        if c in flow.classes
    )


def _doctors(flow: Flow, s: MedicalSizes, rng: random.Random) -> list[Doctor]:
    """Doctors with distinct rates (see the module docstring: no two doctors are
    interchangeable); every skill has one holder in turn and, with the size's chance, a
    second one (a second holder makes backups possible, a single one makes caps bind)."""
    n = s.doctors
    skills = flow.skills
    held: list[set[str]] = [set() for _ in range(n)]
    for k, skill in enumerate(skills):
        held[k % n].add(skill)
        if rng.random() < s.second:
            held[rng.choice([i for i in range(n) if i != k % n])].add(skill)
    rates = rng.sample(range(4, 30), n)
    names = rng.sample(NAMES, n)
    return [
        Doctor(
            id=names[i],
            skills=tuple(k for k in skills if k in held[i]),
            shift_start=0,
            shift_end=s.slots,
            rate=rates[i],
        )
        for i in range(n)
    ]


def _rooms(flow: Flow, s: MedicalSizes) -> list[Room]:
    counts: dict[str, int] = {}
    out = []
    for kind, beds in flow.rooms[: s.rooms]:
        counts[kind] = counts.get(kind, 0) + 1
        rate = ROOM_BASE[kind] + beds + counts[kind] - 1  # distinct within a type
        out.append(Room(id=f"{kind[0].upper()}{kind[1:]} {counts[kind]}", type=kind, beds=beds, rate=rate))
    return out


def _fits(spans: list[tuple[int, int]], a: int, b: int, cap: int = 1) -> bool:
    return all(sum(1 for x0, x1 in spans if x0 <= t < x1) < cap for t in range(a, b))


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[MedicalData, Witness]:
    """Patients drawn one by one, each pathway placed greedily (a random skilled doctor and
    room of the type, the earliest slot both are free, sometimes a slot later): the
    placement is the witness every sampled rule is built to keep."""
    s = SIZES.of(spec.size)
    flow = FLOWS[spec.subtask]
    doctors, rooms = _doctors(flow, s, rng), _rooms(flow, s)
    types = {r.type for r in rooms}
    pathways = [(pw[: s.stages], why) for pw, why in zip(flow.pathways, flow.complaints, strict=True)]
    pathways = [(pw, why) for pw, why in pathways if all(t[2] in types for t in pw)]
    if not pathways:
        raise NoDraft("pathways")
    busy: dict[str, list[tuple[int, int]]] = {}
    beds = {r.id: r.beds for r in rooms}
    patients: list[Patient] = []
    witness: Witness = {}
    total = 0
    classes = _classes(flow)
    rest = int(rng.random() < 0.35)  # some witnesses give every doctor a free slot after each stage (buffers hold)
    tries = 0
    wanted = s.patients + flow.surge
    while len(patients) < wanted and tries < 40:
        tries += 1
        pw, why = rng.choice(pathways)
        if total + len(pw) > s.total:
            pw = pw[: s.total - total]
            if not pw:
                break
        pid = f"P{len(patients) + 1}"
        arrival = rng.randint(0, min(flow.arrivals, s.slots - 2))
        ready, placed, ok = arrival, [], True
        for k, (name, skill, rtype, lo, hi) in enumerate(pw, 1):
            dur = rng.randint(lo, min(hi, s.slots - 1))
            if k > 1 and rng.random() < 0.3:
                ready += 1  # a wait between stages (results, transfer): room for pathway gaps
            options = []
            for x in doctors:
                if skill not in x.skills:
                    continue
                for r in rooms:
                    if r.type != rtype:
                        continue
                    turn = flow.turnover[1] if flow.turnover and flow.turnover[0] == r.type else 0
                    t = next(
                        (t for t in range(ready, s.slots - dur + 1)
                         if _fits(busy.get(x.id, []), t, t + dur + rest) and _fits(busy.get(r.id, []), t, t + dur + turn, beds[r.id])),
                        None,
                    )  # fmt: skip
                    if t is not None:
                        options.append((t, x.id, r.id))
            if not options:
                ok = False
                break
            options.sort()
            t, doc, room = rng.choice([o for o in options if o[0] == options[0][0]] if rng.random() < 0.7 else options)
            placed.append(
                (Stage(id=f"{pid}.{k}", name=name, skill=skill, room_type=rtype, duration=dur, points=1), doc, room, t)
            )
            busy.setdefault(doc, []).append((t, t + dur + rest))
            turn = flow.turnover[1] if flow.turnover and flow.turnover[0] == rtype else 0
            busy.setdefault(room, []).append((t, t + dur + turn))
            ready = t + dur
        if not ok:
            for st, doc, room, t in placed:
                turn = flow.turnover[1] if flow.turnover and flow.turnover[0] == st.room_type else 0
                busy[doc].remove((t, t + st.duration + rest))
                busy[room].remove((t, t + st.duration + turn))
            continue
        # resuscitation pathways are for the two most urgent classes, the others for the rest
        resus = [st.room_type == "resus bay" for st, *_ in placed]
        if not any(kind == "resus bay" for kind, _ in flow.rooms):
            tri = rng.choice(flow.classes)
        else:
            tri = rng.choice(flow.classes[:2] if any(resus) else flow.classes[1:])
        patients.append(
            Patient(
                id=pid,
                complaint=rng.choice(why),
                triage=tri,
                arrival=arrival,
                stages=tuple(st for st, *_ in placed),
            )
        )
        for st, doc, room, t in placed:
            witness[st.id] = (doc, room, t)
        total += len(placed)
    if len(patients) < max(2, wanted - 1):
        raise NoDraft("witness")
    points = iter(rng.sample(range(s.points.lo, s.points.hi + 1), total))
    patients = [
        p.model_copy(update={"stages": tuple(st.model_copy(update={"points": next(points)}) for st in p.stages)})
        for p in patients
    ]
    data = MedicalData(
        slot_minutes=flow.slot,
        slots=s.slots,
        classes=classes,
        doctors=tuple(doctors),
        rooms=tuple(rooms),
        patients=tuple(patients),
    )
    return data, witness


def _with_shifts(d: MedicalData, w: Witness, rng: random.Random) -> MedicalData:
    """Each doctor (twins alike) gets a shift window covering their witness stages, often
    narrower than the whole horizon."""
    by: dict[str, list[tuple[int, int]]] = {x.id: [] for x in d.doctors}
    for s in d.stages:
        doc, _, t = w[s.id]
        by[doc].append((t, t + s.duration))
    key = {x.id: (x.skills, x.rate) for x in d.doctors}
    groups: dict[Any, list[str]] = {}
    for x in d.doctors:
        groups.setdefault(key[x.id], []).append(x.id)
    shift: dict[str, tuple[int, int]] = {}
    for ids in groups.values():
        spans = [sp for i in ids for sp in by[i]]
        if spans:
            lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
            a, b = rng.randint(0, lo), rng.randint(hi, d.slots)
        else:
            a = rng.randint(0, d.slots - 2)
            b = rng.randint(a + 1, d.slots)
        for i in ids:
            shift[i] = (a, b)
    doctors = tuple(
        x.model_copy(update={"shift_start": shift[x.id][0], "shift_end": shift[x.id][1]}) for x in d.doctors
    )
    return md.replaced(d, doctors=doctors)


def _with_gaps(d: MedicalData, w: Witness, rng: random.Random) -> MedicalData:
    """Each later stage gets a minimum gap up to its witness slack (positive where the slack allows)."""
    patients = []
    for p in d.patients:
        stages = [p.stages[0]]
        for a, b in zip(p.stages, p.stages[1:]):
            slack = w[b.id][2] - (w[a.id][2] + a.duration)
            stages.append(b.model_copy(update={"gap": rng.randint(min(1, slack), slack)}))
        patients.append(p.model_copy(update={"stages": tuple(stages)}))
    if not any(s.gap for p in patients for s in p.stages):
        raise NoDraft("min_gap")  # every gap 0 would make the rule say nothing
    return md.replaced(d, patients=tuple(patients))


def _infectious(d: MedicalData, w: Witness, k: int, rng: random.Random) -> MedicalData | None:
    """Mark one or two patients infectious whose witness rooms stay empty k slots after each of their stages."""

    def clean(p: Patient) -> bool:
        for s in p.stages:
            room, e = w[s.id][1], w[s.id][2] + s.duration
            for o in d.stages:
                if o.id != s.id and w[o.id][1] == room and md.overlap(e, e + k, w[o.id][2], w[o.id][2] + o.duration):
                    return False
        return True

    options = [p.id for p in d.patients if clean(p)]
    if not options:
        return None
    chosen = set(rng.sample(options, min(len(options), rng.randint(1, 2))))
    return md.replaced(d, patients=tuple(p.model_copy(update={"infectious": p.id in chosen}) for p in d.patients))


def _minutes(d: MedicalData, w: Witness) -> dict[str, int]:
    out = {x.id: 0 for x in d.doctors}
    for s in d.stages:
        out[w[s.id][0]] += s.duration * d.slot_minutes
    return out


def _pick(rng: random.Random, options: list[str], most: int) -> list[str]:
    chosen = set(rng.sample(options, min(len(options), rng.randint(1, most))))
    return [o for o in options if o in chosen]


def _b_max_patients(d: MedicalData, w: Witness, rng: random.Random) -> md.Doctors | None:
    seen = {x.id: len({d.patient_of[s.id].id for s in d.stages if w[s.id][0] == x.id}) for x in d.doctors}
    options = [x.id for x in d.doctors if seen[x.id]]
    if not options:
        return None
    chosen = _pick(rng, options, 2)
    return md.Doctors(doctors=chosen, max=max(seen[c] for c in chosen))


def _b_max_minutes(d: MedicalData, w: Witness, rng: random.Random) -> md.Doctors | None:
    worked = _minutes(d, w)
    options = [x.id for x in d.doctors if worked[x.id]]
    if not options:
        return None
    chosen = _pick(rng, options, 2)
    return md.Doctors(doctors=chosen, max=max(worked[c] for c in chosen))


def _b_target_deadline(d: MedicalData, w: Witness, rng: random.Random) -> md.Patients | None:
    options = [p.id for p in d.patients if w[p.stages[0].id][2] - p.arrival <= d.class_by_id[p.triage].target]
    return md.Patients(patients=_pick(rng, options, 3)) if options else None


def _b_same_doctor(d: MedicalData, w: Witness, rng: random.Random) -> md.SameDoctor | None:
    options = []
    for p in d.patients:
        for a, b in itertools.combinations(p.stages, 2):
            if w[a.id][0] == w[b.id][0]:
                options.append([a.id, b.id])
    return md.SameDoctor(stages=rng.choice(options)) if options else None


def _min_distance(spans: list[tuple[int, int]]) -> int | None:
    """The smallest free time between two of the spans (None: fewer than two; 0 or less: they touch or overlap)."""
    spans = sorted(spans)
    gaps = [b0 - a1 for (_, a1), (b0, _) in itertools.pairwise(spans)]
    return min(gaps) if gaps else None


def _b_buffer(d: MedicalData, w: Witness, rng: random.Random) -> md.Slots | None:
    gaps = [
        g for x in d.doctors
        if (g := _min_distance([(w[s.id][2], w[s.id][2] + s.duration) for s in d.stages if w[s.id][0] == x.id])) is not None
    ]  # fmt: skip
    most = min(gaps) if gaps else 2  # no doctor with two stages: any buffer holds
    return md.Slots(slots=rng.randint(1, most)) if most >= 1 else None


def _b_room_turnover(d: MedicalData, w: Witness, rng: random.Random) -> md.RoomTurnover | None:
    """A room type whose rooms the witness leaves empty between stages (a forced
    changeover, as in theatres, is planted by the sampler)."""
    options = []
    for kind in sorted({r.type for r in d.rooms}):
        rooms = [r.id for r in d.rooms if r.type == kind]
        if not any(w[s.id][1] in rooms for s in d.stages):
            continue
        gaps = [
            _min_distance([(w[s.id][2], w[s.id][2] + s.duration) for s in d.stages if w[s.id][1] == r]) for r in rooms
        ]
        used = [g for g in gaps if g is not None]
        most = min(used) if used else 2
        if most >= 1:
            options.append((kind, most))
    if not options:
        return None
    kind, most = rng.choice(options)
    return md.RoomTurnover(room_type=kind, slots=rng.randint(1, most))


def _b_load_balance(d: MedicalData, w: Witness, rng: random.Random) -> md.LoadBalance | None:
    worked = _minutes(d, w).values()
    return md.LoadBalance(max=max(worked) - min(worked) + rng.choice((0, d.slot_minutes)))


def _b_triage_order(d: MedicalData, w: Witness, rng: random.Random) -> md.TriageOrder | None:
    rank = {c.id: k for k, c in enumerate(d.classes)}
    first = {p.id: w[p.stages[0].id][2] for p in d.patients}
    options = [
        (a.id, b.id) for a in d.patients for b in d.patients
        if rank[a.triage] < rank[b.triage] and a.arrival <= b.arrival and first[a.id] <= first[b.id]
    ]  # fmt: skip
    if not options:
        return None
    return md.TriageOrder(pairs=sorted(rng.sample(options, min(len(options), rng.randint(1, 3)))))


def _b_fatigue_break(d: MedicalData, w: Witness, rng: random.Random) -> md.FatigueBreak | None:
    for _ in range(6):
        c, b = rng.randint(1, d.slots - 1), rng.randint(1, 2)
        done, touches = {}, {}
        for x in d.doctors:
            spans = [(w[s.id][2], w[s.id][2] + s.duration) for s in d.stages if w[s.id][0] == x.id]
            done[x.id] = sum((e - a) * d.slot_minutes for a, e in spans if e <= c)
            touches[x.id] = any(md.overlap(a, e, c, c + b) for a, e in spans)
        low = max([done[x] for x in done if touches[x]], default=0)
        high = max([done[x] - 1 for x in done if not touches[x] and done[x]], default=-1)
        if low <= high:
            return md.FatigueBreak(slot=c, minutes=rng.randint(low, high), slots=b)
    return None


BUILDERS = {
    "max_patients": _b_max_patients,
    "max_minutes": _b_max_minutes,
    "target_deadline": _b_target_deadline,
    "same_doctor": _b_same_doctor,
    "buffer": _b_buffer,
    "room_turnover": _b_room_turnover,
    "load_balance": _b_load_balance,
    "triage_order": _b_triage_order,
    "fatigue_break": _b_fatigue_break,
}
STRUCTURAL = ("shift", "min_gap")


def objective_terms(subtask: str) -> list[ObjectiveTerm]:
    return [ObjectiveTerm(id=k, kind=k) for k in OBJECTIVES[subtask]]


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    data, witness = _entities(spec, rng)
    sampled = sampled_kinds(spec, TASK.base_rules, FORCED[spec.subtask])
    if "shift" in sampled:
        data = _with_shifts(data, witness, rng)
    if "min_gap" in sampled:
        data = _with_gaps(data, witness, rng)
    builders: dict[str, Any] = dict(BUILDERS)
    if "infection_cleaning" in sampled:
        k = rng.randint(1, 2)
        marked = _infectious(data, witness, k, rng)
        if marked is None:
            raise NoDraft("infection_cleaning")
        data = marked
        builders["infection_cleaning"] = lambda d, w, r: md.Slots(slots=k)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, builders, data, witness, rng, structural=STRUCTURAL)
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective_terms(spec.subtask))


# -- hard-tier hooks -------------------------------------------------------------------
def _plan(plan: dict[str, Any]) -> Witness:
    return {r["stage"]: (r["doctor"], r["room"], r["start"]) for r in plan["schedule"]}


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A cap on one or two doctors who alone hold some skills -- on their minutes or on the
    patients they see, drawn at random -- just around their share of what those skills
    force on them: the loosest infeasible of (share, share - 1). A cap this close to a
    counting bound keeps the proof short, and the conflict runs through the skill rule."""
    d = MedicalData.model_validate(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731
    kind = rng.choice(("max_minutes", "max_patients"))

    def with_cap(doctors: list[str], most: int) -> Draft:
        return with_conflict_rule(draft_, kind, md.Doctors(doctors=doctors, max=most), position)

    names = [x.id for x in d.doctors]
    holders = {s.id: {x.id for x in d.doctors if s.skill in x.skills} for s in d.stages}
    options = [[a] for a in names] + [[a, b] for i, a in enumerate(names) for b in names[i + 1 :]]
    rng.shuffle(options)
    tried = 0
    for doctors in options:
        if len(doctors) == len(names):
            continue
        only = [s for s in d.stages if holders[s.id] and holders[s.id] <= set(doctors)]
        # minutes: slots of those stages; patients: each patient with such a stage is seen by one of them
        forced = sum(s.duration for s in only) if kind == "max_minutes" else len({d.patient_of[s.id].id for s in only})
        if forced < 1:
            continue
        each = -(-forced // len(doctors))
        unit = d.slot_minutes if kind == "max_minutes" else 1
        caps = [k * unit for k in (each, each - 1) if k >= 0]
        found = first_infeasible(caps, lambda k: with_cap(doctors, k), feasible)  # noqa: B023 - called within this iteration
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
        tried += 1
        if tried == 4:
            break
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """Per stage of the plan, one of: its doctor absent for its slots; a new immediate
    (red) arrival taking its doctor and room for its slots; the stage delayed by a slot."""
    d = MedicalData.model_validate(draft_.data)
    w = _plan(plan)
    out = []
    for s in d.stages:
        doc, room, t = w[s.id]
        options = [
            make_rule("doctor_absent", "hard", md.DoctorAbsent(doctor=doc, start=t, end=t + s.duration)),
            make_rule(
                "reserved",
                "hard",
                md.Reserved(doctor=doc, room=room, start=t, end=t + s.duration, triage=d.classes[0].id),
            ),
        ]
        if t + 1 <= d.slots - s.duration:
            options.append(make_rule("not_before", "hard", md.NotBefore(stage=s.id, slot=t + 1)))
        out.append(rng.choice(options))
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, list[Any]]:
    return {r["stage"]: [r["doctor"], r["room"], r["start"]] for r in plan["schedule"]}


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    shifts = any(r.kind == "shift" for r in draft_.rules)
    return make_rule("backup_doctor", "hard", md.Backup(shifts=shifts)), [
        ObjectiveTerm(id="backup_cost", kind="backup_cost")
    ]


NON_MONOTONE = ("infection_cleaning", "fatigue_break", "load_balance")  # a shorter stage can break these


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Stage durations (worst: long; only where no rule is broken by a shorter stage), the
    beds of multi-bed rooms and, with shifts, the end of a doctor's shift (worst: low)."""
    d = MedicalData.model_validate(draft_.data)
    kinds = {r.kind for r in draft_.rules}
    out: list[Uncertain] = []
    if not kinds & set(NON_MONOTONE):
        longer = [
            Uncertain(id="", kind="duration", target=s.id, low=s.duration, high=s.duration + 1)
            for s in d.stages
            if s.duration + 1 <= d.slots
        ]
        out += rng.sample(longer, min(2, len(longer)))
    beds = [Uncertain(id="", kind="beds", target=r.id, low=r.beds - 1, high=r.beds) for r in d.rooms if r.beds >= 2]
    out += rng.sample(beds, min(2, len(beds)))
    if "shift" in kinds:
        ends = [
            Uncertain(id="", kind="shift_end", target=x.id, low=x.shift_end - 1, high=x.shift_end)
            for x in d.doctors
            if x.shift_end - 1 > x.shift_start
        ]
        out += rng.sample(ends, min(2, len(ends)))
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = MedicalData.model_validate(data)
    if u.kind == "beds":
        rooms = tuple(r.model_copy(update={"beds": value}) if r.id == u.target else r for r in d.rooms)
        return {**data, "rooms": [r.model_dump(mode="json") for r in rooms]}
    if u.kind == "shift_end":
        doctors = tuple(x.model_copy(update={"shift_end": value}) if x.id == u.target else x for x in d.doctors)
        return {**data, "doctors": [x.model_dump(mode="json") for x in doctors]}
    patients = tuple(
        p.model_copy(
            update={
                "stages": tuple(s.model_copy(update={"duration": value}) if s.id == u.target else s for s in p.stages)
            }
        )
        for p in d.patients
    )
    return {**data, "patients": [p.model_dump(mode="json") for p in patients]}


def worst_is_low(u: Uncertain) -> bool:
    return u.kind in ("beds", "shift_end")


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = MedicalData.model_validate(draft_.data)
    w = _plan(plan)
    return {"minutes": _minutes(d, w), "waiting": {p.id: w[p.stages[0].id][2] - p.arrival for p in d.patients}}


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
