"""Grading behaviours held for the mutation campaign over the workforce and emergency
checkers rewritten for speed (inline reads of rows spelled as the instance spells them,
per-plan caches, checks bound once), one behaviour each.

Two parts:

- the stored emergency verdict sample, tests/data/mutation_moves_emergency.jsonl (single-move
  answers with the CP-SAT model's verdict per rule, written by ``scripts/mutation_fixture.py
  emergency``; tests/test_mutation_kills_checkers.py grades them rule by rule against the
  model): here, every stored answer's objective figures (the model's) are what the checker
  computes, and the certified reference of every stored instance passes every item;
- behaviour tests for what the sample cannot reach, each judging a small hand-written data
  model directly through the checker's own tables (its rule checks, its plan reader), so
  it runs in milliseconds for every mutant.

The survivors argued equivalent are in scripts/mutation_equivalents.toml.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from pbsolve.checker_kit import OK as OK_VERDICT
from pbsolve.checkers.emergency import check_answer as emergency_check_answer
from pbsolve.checkers.emergency import medical as md
from pbsolve.checkers.emergency import response as rp
from pbsolve.checkers.workforce import recruitment as rc
from pbsolve.checkers.workforce import shift_duty as sd
from pbsolve.checkers.workforce import volunteer as vs
from pbsolve.checkers.workforce import work_assignment as wa
from pbsolve.params import NoParams
from pbsolve.schema import Instance, Rule
from tests.kill_helpers import stored_cases, stored_records
from tests.test_emergency_emergency_planning import DATA as RESPONSE
from tests.test_emergency_emergency_planning import ED, FE, NEW, NS, PM, sent
from tests.test_emergency_emergency_planning import GOOD as RESPONSE_GOOD
from tests.test_emergency_medical_resource_planning import DATA as MEDICAL
from tests.test_emergency_medical_resource_planning import GOOD as MEDICAL_GOOD
from tests.test_emergency_medical_resource_planning import INFECTIOUS, moved

DATA = Path(__file__).parent / "data"
EMERGENCY = ("disaster_evacuation_planning", "emergency_planning", "medical_resource_planning")


# == the stored emergency verdict sample ======================================================
def _graded(inst: Instance, answer: dict[str, Any]) -> dict[str, bool]:
    """Checklist rule (or item name) -> passed, through the family's public check_answer."""
    verdicts = emergency_check_answer(inst, answer)
    return {it.rule: verdicts[it.id][0] for it in inst.checklist}


@pytest.mark.parametrize("task", EMERGENCY)
def test_a_stored_emergency_answer_states_its_plans_own_objective_figures(task: str) -> None:
    """The sample's answers state the figures the solver model gives their plans (checked
    when the sample was written), so the validation item passes on every one of them."""
    for inst, answer, _ in stored_cases("emergency", task):
        assert _graded(inst, answer)["validation"], inst.id


@pytest.mark.parametrize("task", EMERGENCY)
def test_the_certified_reference_of_every_stored_emergency_instance_passes_every_item(task: str) -> None:
    """Every rule kept, the objective equal to CP-SAT's proven optimum, the figures its own."""
    for rec in stored_records("emergency", task):
        inst = Instance.model_validate(rec["instance"])
        failed = [rule for rule, ok in _graded(inst, copy.deepcopy(inst.reference)).items() if not ok]
        assert not failed, inst.id


# == Shift & Duty Scheduling ==================================================================
def _ward() -> sd.ShiftDutyData:
    """Two days, two shifts, three staff; Ada and Cleo hold the triage skill."""
    return sd.ShiftDutyData.model_validate({
        "days": [{"id": "Fri"}, {"id": "Sat", "weekend": True}],
        "shifts": [{"id": "Early", "start": 6, "hours": 8}, {"id": "Night", "start": 22, "hours": 8}],
        "staff": [{"id": "Ada", "wage": 10, "skills": ["triage"]}, {"id": "Bram", "wage": 12},
                  {"id": "Cleo", "wage": 15, "skills": ["triage"]}],
        "cover": [{"day": "Fri", "shift": "Early", "need": 1}, {"day": "Sat", "shift": "Night", "need": 1}],
    })  # fmt: skip


def test_the_coverage_reason_names_the_short_shift_by_its_day_and_shift() -> None:
    plan = sd.Plan({"Ada": {"Fri": "Early"}})
    assert sd.CHECKS["coverage"](_ward(), plan, NoParams()) == (False, "Sat Night has 0 staff; it needs 1")


def test_the_skill_cover_reason_names_the_short_shift_by_its_day_and_shift() -> None:
    plan = sd.Plan({"Bram": {"Sat": "Night"}, "Ada": {"Fri": "Early"}})
    p = sd.SkillCover(skill="triage", min=1, slots=[("Fri", "Early"), ("Sat", "Night")])
    assert sd.CHECKS["skill_cover"](_ward(), plan, p) == (
        False,
        "Sat Night has 0 staff with skill triage; it needs 1",
    )


def test_the_absence_cover_reason_names_the_shift_left_short_by_its_day_and_shift() -> None:
    plan = sd.Plan({"Ada": {"Fri": "Early"}, "Bram": {"Fri": "Early", "Sat": "Night"}, "Cleo": {"Sat": "Night"}})
    assert sd.CHECKS["absence_cover"](_ward(), plan, NoParams()) == (True, "holds")
    alone = sd.Plan({"Ada": {"Fri": "Early"}, "Bram": {"Fri": "Early", "Sat": "Night"}})
    assert sd.CHECKS["absence_cover"](_ward(), alone, NoParams()) == (
        False,
        "if Bram were absent, Sat Night would have 0 of 1",
    )


# Other spellings of an entry's own field names: upper case, capitalised, and marked.
DECOY_FIELDS = ["PERSON", "Person", "XXpersonXX", "DAY", "Day", "XXdayXX", "SHIFT", "Shift", "XXshiftXX"]


@pytest.mark.parametrize("decoy", DECOY_FIELDS)
def test_a_roster_entry_is_read_from_its_own_field_names_and_a_look_alike_field_is_ignored(decoy: str) -> None:
    """The look-alike field names another listed person, day or shift than the entry's
    own field: the entry reads exactly as without it."""
    ward = _ward()
    lk = sd.TASK.lookups(ward)
    own: dict[str, Any] = {"person": "Ada", "day": "Fri", "shift": "Early"}
    other = {"person": "Bram", "day": "Sat", "shift": "Night"}[decoy.strip("X").lower()]
    plan, why = sd.TASK.read_plan(ward, {"roster": [{**own, decoy: other}]}, lk, [])
    assert why == "complete plan"
    assert plan == sd.Plan({"Ada": {"Fri": "Early"}})


def test_the_shift_balance_reason_names_who_works_the_shift_most_and_least_with_their_counts() -> None:
    plan = sd.Plan({"Ada": {"Fri": "Early", "Sat": "Early"}})
    assert sd.CHECKS["shift_balance"](_ward(), plan, sd.ShiftBalance(shift="Early", max=1)) == (
        False,
        "Ada works 2 Early shifts and Bram 0: more than 1 apart",
    )


# == Volunteer Scheduling =====================================================================
def _event() -> vs.VolunteerData:
    """Two shifts of one day, two posts, two volunteers."""
    return vs.VolunteerData.model_validate({
        "shifts": [{"id": "S1", "day": 0}, {"id": "S2", "day": 0}],
        "posts": [{"id": "Gate", "need": 1}, {"id": "First Aid", "need": 0}],
        "volunteers": [{"id": "Ana", "prefs": {"Gate": 0, "First Aid": 1}},
                       {"id": "Ben", "prefs": {"Gate": 1, "First Aid": 0}}],
    })  # fmt: skip


def _read_roster(rows: list[Any]) -> tuple[vs.Plan | None, str]:
    event = _event()
    return vs.TASK.read_plan(event, {"roster": rows}, vs.TASK.lookups(event), [])


VOLUNTEER_DECOYS = [
    "VOLUNTEER",
    "Volunteer",
    "XXvolunteerXX",
    "SHIFT",
    "Shift",
    "XXshiftXX",
    "POST",
    "Post",
    "XXpostXX",
]


@pytest.mark.parametrize("decoy", VOLUNTEER_DECOYS)
def test_a_roster_row_is_read_from_its_own_field_names_and_a_look_alike_field_is_ignored(decoy: str) -> None:
    """The look-alike field names another listed volunteer, shift or post than the row's
    own field: the row reads exactly as without it."""
    own: dict[str, Any] = {"volunteer": "Ana", "shift": "S1", "post": "Gate"}
    other = {"volunteer": "Ben", "shift": "S2", "post": "First Aid"}[decoy.strip("X").lower()]
    assert _read_roster([{**own, decoy: other}]) == (vs.Plan({("Ana", "S1"): "Gate"}), "complete roster")


def test_roster_rows_in_another_spelling_read_as_the_instances_own() -> None:
    own = [
        {"volunteer": "Ana", "shift": "S1", "post": "Gate"},
        {"volunteer": "Ben", "shift": "S2", "post": "First Aid"},
    ]
    odd = [
        {"volunteer": " ana", "shift": "s1", "post": "GATE"},
        {"volunteer": "BEN ", "shift": "S2", "post": "first  aid"},
    ]
    assert (
        _read_roster(odd)
        == _read_roster(own)
        == (
            vs.Plan({("Ana", "S1"): "Gate", ("Ben", "S2"): "First Aid"}),
            "complete roster",
        )
    )


def test_a_roster_row_naming_an_unknown_post_is_named_by_its_place() -> None:
    rows = [{"volunteer": "Ana", "shift": "S1", "post": "Gate"}, {"volunteer": "Ben", "shift": "S1", "post": "Bar"}]
    assert _read_roster(rows) == (None, "roster row 2 names unknown post 'Bar'")


def test_a_standby_row_where_no_rule_asks_for_one_is_refused_naming_its_place() -> None:
    rows = [{"volunteer": "Ana", "shift": "S1", "post": "Gate"}, {"volunteer": "Ben", "shift": "S1", "post": "standby"}]
    assert _read_roster(rows) == (None, "roster row 2 names a standby, but no rule asks for one")


def test_the_load_balance_reason_names_the_busiest_and_least_busy_volunteer_with_their_shifts() -> None:
    plan = vs.Plan({("Ana", "S1"): "Gate", ("Ana", "S2"): "Gate"})
    assert vs.CHECKS["load_balance"](_event(), plan, vs.LoadBalance(max=1)) == (
        False,
        "Ana works 2 shifts and Ben 0: more than 1 apart",
    )


# == Recruitment Planning =====================================================================
def _hiring() -> rc.RecruitmentData:
    """One day of two slots, two stages each run by one person, two staff, two candidates."""
    return rc.RecruitmentData.model_validate({
        "slots": [{"id": "Mon AM", "day": 0}, {"id": "Mon PM", "day": 0}],
        "stages": [{"id": "Screen", "staff": 1}, {"id": "Panel", "staff": 1}],
        "roles": [{"id": "Nurse", "urgency": 1}],
        "staff": [{"id": "Ana Silva", "stages": ["Screen", "Panel"]}, {"id": "Ben", "stages": ["Screen", "Panel"]}],
        "candidates": [{"id": "Cat", "role": "Nurse"}, {"id": "Dan", "role": "Nurse"}],
    })  # fmt: skip


def _read_schedule(rows: list[Any]) -> tuple[rc.Plan | None, str]:
    hiring = _hiring()
    return rc.TASK.read_plan(hiring, {"schedule": rows}, rc.TASK.lookups(hiring), [])


def _row(candidate: str, stage: str, slot: str, staff: str) -> dict[str, Any]:
    return {"candidate": candidate, "stage": stage, "slot": slot, "staff": [staff]}


HIRING = [
    _row("Cat", "Screen", "Mon AM", "Ana Silva"),
    _row("Cat", "Panel", "Mon PM", "Ana Silva"),
    _row("Dan", "Screen", "Mon PM", "Ben"),
    _row("Dan", "Panel", "Mon AM", "Ben"),
]
HIRING_PLAN = rc.Plan(
    {("Cat", "Screen"): "Mon AM", ("Cat", "Panel"): "Mon PM", ("Dan", "Screen"): "Mon PM", ("Dan", "Panel"): "Mon AM"},
    {("Cat", "Screen"): ("Ana Silva",), ("Cat", "Panel"): ("Ana Silva",), ("Dan", "Screen"): ("Ben",),
     ("Dan", "Panel"): ("Ben",)},
)  # fmt: skip
RECRUITMENT_DECOYS = [
    "CANDIDATE",
    "Candidate",
    "XXcandidateXX",
    "STAGE",
    "Stage",
    "XXstageXX",
    "SLOT",
    "Slot",
    "XXslotXX",
]


@pytest.mark.parametrize("decoy", RECRUITMENT_DECOYS)
def test_a_recruitment_schedule_row_is_read_from_its_own_field_names_and_a_look_alike_field_is_ignored(
    decoy: str,
) -> None:
    """The look-alike field names another listed candidate, stage or slot than the row's own."""
    other = {"candidate": "Dan", "stage": "Panel", "slot": "Mon PM"}[decoy.strip("X").lower()]
    rows = [{**HIRING[0], decoy: other}, *HIRING[1:]]
    assert _read_schedule(rows) == (HIRING_PLAN, "complete plan")


def test_schedule_rows_in_another_spelling_read_as_the_instances_own() -> None:
    odd = [
        _row("cat", "SCREEN", "mon  am", "ana silva"),
        _row("Cat", "Panel", "Mon PM", "ANA SILVA"),
        _row("Dan", "Screen", "Mon PM", " BEN "),
        _row("DAN", "panel", "MON AM", "Ben"),
    ]
    assert _read_schedule(odd) == _read_schedule(HIRING) == (HIRING_PLAN, "complete plan")


LONG = "Q" * 50  # an unknown name longer than the 40 characters a reason quotes
ROW_FAULTS = [  # (field of the second row, its value, the reason)
    ("stage", 7, "row 2 needs a string field 'stage'"),
    ("slot", LONG, f"row 2 names unknown slot {LONG[:40]!r}"),
    ("staff", "Ben", "row 2 needs 'staff', a list of staff names"),
    ("staff", [LONG], f"row 2 names unknown staff member {LONG[:40]!r}"),
    ("staff", ["Ana Silva", "ana silva"], "row 2 names Ana Silva twice"),
    ("staff", ["Ana Silva", "Ben"], "row 2: the Panel is run by 1 staff members, not 2"),
]


@pytest.mark.parametrize(("field", "value", "why"), ROW_FAULTS, ids=[w.split(" ", 2)[2][:24] for _, _, w in ROW_FAULTS])
def test_a_faulty_schedule_row_is_refused_naming_its_place_and_its_fault(field: str, value: Any, why: str) -> None:
    rows = [HIRING[0], {**HIRING[1], field: value}, *HIRING[2:]]
    assert _read_schedule(rows) == (None, why)


def test_a_schedule_row_without_a_backup_is_refused_naming_its_place_where_a_rule_asks_for_backups() -> None:
    hiring = _hiring()
    rules = [Rule(id="R1", kind="backup_staff", tier="hard")]
    rows = [{**row, "backup": "Ben"} for row in HIRING]
    del rows[1]["backup"]
    assert rc.TASK.read_plan(hiring, {"schedule": rows}, rc.TASK.lookups(hiring), rules) == (
        None,
        "row 2 needs a 'backup' staff member from the staff list",
    )


def test_a_teams_unqualified_member_is_named_in_staff_list_order_whatever_order_the_row_gives() -> None:
    """Zoe is listed before Ana in the staff list, and neither may run the panel."""
    data = rc.RecruitmentData.model_validate({
        "slots": [{"id": "Mon AM", "day": 0}],
        "stages": [{"id": "Panel", "staff": 2}],
        "roles": [{"id": "Nurse", "urgency": 1}],
        "staff": [{"id": "Zoe", "stages": []}, {"id": "Ana", "stages": []}],
        "candidates": [{"id": "Cat", "role": "Nurse"}],
    })  # fmt: skip
    row = {"candidate": "Cat", "stage": "Panel", "slot": "Mon AM", "staff": ["Ana", "Zoe"]}
    plan, why = rc.TASK.read_plan(data, {"schedule": [row]}, rc.TASK.lookups(data), [])
    assert plan is not None, why
    assert rc.CHECKS["qualified"](data, plan, NoParams()) == (False, "Zoe may not run the Panel (Cat)")


def test_the_load_balance_reason_names_the_busiest_and_least_busy_staff_member_with_their_stages() -> None:
    alone = rc.Plan(HIRING_PLAN.slot, dict.fromkeys(HIRING_PLAN.staff, ("Ana Silva",)))
    assert rc.CHECKS["load_balance"](_hiring(), alone, rc.LoadBalance(max=1)) == (
        False,
        "Ana Silva runs 4 stages and Ben 0: more than 1 apart",
    )


# == Work Assignment Scheduling ===============================================================
def _works() -> wa.WorkData:
    """Two days, two workers, two tasks."""
    job = {"name": "job", "skill": "wiring", "hours": 2, "release": "Mon", "due": "Tue", "weight": 1, "priority": 1}
    return wa.WorkData.model_validate({
        "days": ["Mon", "Tue"],
        "workers": [{"id": "Ana", "skills": ["wiring"], "rate": 10, "max_day": 8},
                    {"id": "Ben", "skills": ["wiring"], "rate": 12, "max_day": 8}],
        "tasks": [{"id": "T1", **job}, {"id": "T2", **job}],
    })  # fmt: skip


def _read_assignments(rows: list[Any]) -> tuple[wa.Plan | None, str]:
    works = _works()
    return wa.TASK.read_plan(works, {"assignments": rows}, wa.TASK.lookups(works), [])


ASSIGNED = [{"task": "T1", "worker": "Ana", "day": "Mon"}, {"task": "T2", "worker": "Ben", "day": "Tue"}]
ASSIGNED_PLAN = wa.Plan({"T1": ("Ana", "Mon"), "T2": ("Ben", "Tue")})
WORK_DECOYS = ["TASK", "Task", "XXtaskXX", "WORKER", "Worker", "XXworkerXX", "DAY", "Day", "XXdayXX"]


@pytest.mark.parametrize("decoy", WORK_DECOYS)
def test_an_assignment_is_read_from_its_own_field_names_and_a_look_alike_field_is_ignored(decoy: str) -> None:
    """The look-alike field names another listed task, worker or day than the row's own."""
    other = {"task": "T2", "worker": "Ben", "day": "Tue"}[decoy.strip("X").lower()]
    rows = [{**ASSIGNED[0], decoy: other}, ASSIGNED[1]]
    assert _read_assignments(rows) == (ASSIGNED_PLAN, "complete plan")


def test_assignments_in_another_spelling_read_as_the_instances_own() -> None:
    odd = [{"task": "t1", "worker": "ANA", "day": " mon"}, {"task": "T2", "worker": "ben", "day": "TUE"}]
    assert _read_assignments(odd) == _read_assignments(ASSIGNED) == (ASSIGNED_PLAN, "complete plan")


def test_an_assignment_naming_an_unknown_worker_is_named_by_its_place() -> None:
    rows = [ASSIGNED[0], {"task": "T2", "worker": "Cy", "day": "Tue"}]
    assert _read_assignments(rows) == (None, "assignment 2 names unknown worker 'Cy'")


def test_the_load_balance_reason_names_the_busiest_and_least_busy_worker_with_their_hours() -> None:
    alone = wa.Plan({"T1": ("Ana", "Mon"), "T2": ("Ana", "Tue")})
    assert wa.CHECKS["load_balance"](_works(), alone, wa.LoadBalance(max=1)) == (
        False,
        "Ana works 4 hours and Ben 0: more than 1 apart",
    )


# == Medical Resource Planning ================================================================
def _medical_rows() -> list[dict[str, Any]]:
    """The hand-built good plan of the medical test data, as answer rows (starts 0, 2, 1)."""
    return [
        {"stage": "P1.1", "doctor": "Dr A", "room": "Cubicle 1", "start": 0},
        {"stage": "P1.2", "doctor": "Dr B", "room": "Ward 1", "start": 2},
        {"stage": "P2.1", "doctor": "Dr A", "room": "Ward 1", "start": 1},
    ]


def _read_medical(rows: list[Any], *, backups: bool = False) -> tuple[md.Plan | None, str]:
    rules = [Rule(id="R1", kind="backup_doctor", tier="hard", params={"shifts": False})] if backups else []
    return md.TASK.read_plan(MEDICAL, {"schedule": rows}, md.TASK.lookups(MEDICAL), rules)


MEDICAL_PLAN = md.Plan({"P1.1": ("Dr A", "Cubicle 1", 0), "P1.2": ("Dr B", "Ward 1", 2), "P2.1": ("Dr A", "Ward 1", 1)})
MEDICAL_DECOYS = ["STAGE", "Stage", "XXstageXX", "DOCTOR", "Doctor", "XXdoctorXX", "ROOM", "Room", "XXroomXX"]


@pytest.mark.parametrize("decoy", MEDICAL_DECOYS)
def test_a_medical_schedule_row_is_read_from_its_own_field_names_and_a_look_alike_field_is_ignored(decoy: str) -> None:
    """The look-alike field names another listed stage, doctor or room than the row's own."""
    rows = _medical_rows()
    rows[2][decoy] = {"stage": "P1.2", "doctor": "Dr B", "room": "Cubicle 1"}[decoy.strip("X").lower()]
    assert _read_medical(rows) == (MEDICAL_PLAN, "complete plan")


def test_medical_schedule_rows_in_another_spelling_read_as_the_instances_own() -> None:
    rows = _medical_rows()
    rows[0].update(stage="p1.1", doctor="DR A", room="cubicle  1")
    rows[2].update(doctor=" dr a")
    assert _read_medical(rows) == (MEDICAL_PLAN, "complete plan")


def test_a_medical_schedule_row_naming_an_unknown_room_is_named_by_its_place() -> None:
    rows = _medical_rows()
    rows[1]["room"] = "Broom cupboard"
    assert _read_medical(rows) == (None, "schedule row 2 names unknown room 'Broom cupboard'")


@pytest.mark.parametrize("start", [True, False, 1.0, "1", None])
def test_a_start_that_is_not_a_whole_number_is_refused(start: Any) -> None:
    rows = _medical_rows()
    rows[2]["start"] = start
    assert _read_medical(rows) == (None, "stage P2.1 needs a whole-number 'start' slot")


def test_a_stage_may_start_in_slot_0_and_in_the_last_slot_it_fits_in() -> None:
    """P2.1 lasts 2 of the 5 slots: slots 0 and 3 are its first and last starts."""
    for start in (0, 3):
        rows = _medical_rows()
        rows[2]["start"] = start
        plan, why = _read_medical(rows)
        assert why == "complete plan" and plan is not None and plan.assign["P2.1"][2] == start


@pytest.mark.parametrize("start", [-1, 4])
def test_a_stage_starting_before_slot_0_or_too_late_to_end_in_the_horizon_is_refused(start: int) -> None:
    rows = _medical_rows()
    rows[2]["start"] = start
    assert _read_medical(rows) == (
        None,
        f"stage P2.1 starts in slot {start}: it must start in slot 0 to 3 to end by slot 5",
    )


def test_a_backup_doctor_in_another_spelling_reads_as_the_listed_doctor() -> None:
    rows = [{**row, "backup": b} for row, b in zip(_medical_rows(), ["dr b", "DR A", "Dr B"], strict=True)]
    assert _read_medical(rows, backups=True) == (
        md.Plan(MEDICAL_PLAN.assign, {"P1.1": "Dr B", "P1.2": "Dr A", "P2.1": "Dr B"}),
        "complete plan",
    )


@pytest.mark.parametrize("backup", [None, 7, "Dr Who"])
def test_a_backup_doctor_that_names_no_listed_doctor_is_refused(backup: Any) -> None:
    rows = [{**row, "backup": "Dr B"} for row in _medical_rows()]
    rows[1]["backup"] = backup
    assert _read_medical(rows, backups=True) == (None, "stage P1.2 needs a 'backup' doctor from the doctor list")


def test_backup_doctors_are_read_only_where_a_rule_asks_for_them() -> None:
    rows = [{**row, "backup": "Dr Who"} for row in _medical_rows()]
    assert _read_medical(rows) == (MEDICAL_PLAN, "complete plan")


def test_a_medical_schedule_missing_a_stage_is_refused_naming_it() -> None:
    assert _read_medical(_medical_rows()[:2]) == (None, "stages missing from the schedule: P2.1")


def test_the_current_plan_a_recovery_counts_changes_against_is_each_stages_doctor_room_and_start() -> None:
    assert md.TASK.existing(MEDICAL, MEDICAL_GOOD) == {
        "P1.1": ["Dr A", "Cubicle 1", 0],
        "P1.2": ["Dr B", "Ward 1", 2],
        "P2.1": ["Dr A", "Ward 1", 1],
    }


# The medical test data: P1.1 (1 slot, triage, cubicle), P1.2 (2 slots, gap 1, ward), P2.1
# (2 slots, ward); the good plan runs P1.1 at 0 (Dr A), P2.1 at 1 (Dr A), P1.2 at 2 (Dr B).
def _medical(kind: str, plan: md.Plan, params: Any = None, data: md.MedicalData = MEDICAL) -> tuple[bool, str]:
    return md.CHECKS[kind](data, plan, params or NoParams())


MEDICAL_REASONS = [  # (kind, params, plan, data, the reason: the stages and slots it names)
    ("doctor_overlap", None, moved(MEDICAL_GOOD, P2_1=("Dr A", "Ward 1", 0)), MEDICAL,
     "Dr A does P1.1 and P2.1 at overlapping times"),
    ("buffer", md.Slots(slots=1), MEDICAL_GOOD, MEDICAL, "Dr A has fewer than 1 free slots between P1.1 and P2.1"),
    ("room_turnover", md.RoomTurnover(room_type="ward", slots=1), MEDICAL_GOOD, MEDICAL,
     "Ward 1 has fewer than 1 empty slots between P1.2 and P2.1"),
    ("shift", None, moved(MEDICAL_GOOD, P2_1=("Dr B", "Ward 1", 0)), MEDICAL, "P2.1 (slots 0-1) is outside Dr B's shift"),
    ("min_gap", None, moved(MEDICAL_GOOD, P1_2=("Dr B", "Ward 1", 1)), MEDICAL,
     "P1.2 starts 0 slots after P1.1 ends (at least 1)"),
    ("infection_cleaning", md.Slots(slots=2), moved(MEDICAL_GOOD, P2_1=("Dr A", "Cubicle 1", 1)), INFECTIOUS,
     "P2.1 is in Cubicle 1 during the cleaning after infectious P1.1 (slots 1-2)"),
    ("doctor_absent", md.DoctorAbsent(doctor="Dr B", start=2, end=4), MEDICAL_GOOD, MEDICAL,
     "Dr B is absent in slots 2-3 but does P1.2"),
    ("room_beds", None, moved(MEDICAL_GOOD, P1_1=("Dr A", "Cubicle 1", 0), P1_2=("Dr B", "Cubicle 1", 1),
                               P2_1=("Dr A", "Cubicle 1", 0)), MEDICAL,
     "Cubicle 1 holds 2 stages in slot 0 (P1.1, P2.1) but has 1 bed(s)"),
    ("not_before", md.NotBefore(stage="P2.1", slot=2), MEDICAL_GOOD, MEDICAL, "P2.1 starts in slot 1, before slot 2"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "params", "plan", "data", "why"), MEDICAL_REASONS, ids=[c[0] for c in MEDICAL_REASONS]
)
def test_a_broken_medical_rule_is_failed_with_the_stages_and_slots_that_break_it(
    kind: str, params: Any, plan: md.Plan, data: md.MedicalData, why: str
) -> None:
    assert _medical(kind, plan, params, data) == (False, why)


def test_a_room_is_full_from_slot_0_when_stages_start_there() -> None:
    """Two stages in the one-bed cubicle from slot 0: P1.1 there for slot 0 only."""
    assert not _medical("room_beds", moved(MEDICAL_GOOD, P2_1=("Dr A", "Cubicle 1", 0)))[0]


def test_a_stage_that_ends_as_a_doctors_absence_starts_keeps_the_absence() -> None:
    """P1.2 (Dr B) takes slots 2-3 and ends at slot 4, when the absence begins."""
    assert _medical("doctor_absent", MEDICAL_GOOD, md.DoctorAbsent(doctor="Dr B", start=4, end=5)) == OK_VERDICT


def test_a_room_that_stands_empty_for_no_slot_between_two_stages_breaks_a_turnover() -> None:
    """P2.1 in slots 0-1 and P1.2 from slot 2 in the same ward: adjacent, not overlapping."""
    adjacent = moved(MEDICAL_GOOD, P2_1=("Dr A", "Ward 1", 0))
    assert _medical("room_turnover", adjacent, md.RoomTurnover(room_type="ward", slots=1)) == (
        False,
        "Ward 1 has fewer than 1 empty slots between P1.2 and P2.1",
    )


def test_a_stage_ending_at_the_fatigue_checkpoint_counts_as_done_by_it() -> None:
    """P1.1 (Dr A, 10 minutes) ends at slot 1, the checkpoint; Dr A's P2.1 starts in the break."""
    assert _medical("fatigue_break", MEDICAL_GOOD, md.FatigueBreak(slot=1, minutes=0, slots=1)) == (
        False,
        "Dr A has 10 minutes done by slot 1 (over 0) but does P2.1 during the break",
    )


def test_minutes_done_equal_to_the_fatigue_threshold_need_no_break() -> None:
    assert _medical("fatigue_break", MEDICAL_GOOD, md.FatigueBreak(slot=1, minutes=10, slots=1)) == OK_VERDICT


def test_a_stage_starting_in_its_not_before_slot_keeps_the_rule() -> None:
    assert _medical("not_before", MEDICAL_GOOD, md.NotBefore(stage="P2.1", slot=1)) == OK_VERDICT


# Backups: both doctors can do every stage; Dr A is on shift in slots 1-4, Dr B in 0-4 (or 0-3).
def _on_shifts(b_end: int) -> md.MedicalData:
    return md.replaced(MEDICAL, doctors=(
        md.Doctor(id="Dr A", skills=("triage", "medicine"), shift_start=1, shift_end=5, rate=5),
        md.Doctor(id="Dr B", skills=("triage", "medicine"), shift_start=0, shift_end=b_end, rate=7),
    ))  # fmt: skip


# Each stage backed by the other doctor, each backup exactly within its shift (P1.1 at Dr B's
# first slot 0, P2.1 at Dr A's first slot 1, P1.2 ending at Dr B's shift end 5), no clash
# when either doctor is absent.
BACKED = md.Plan(
    {"P1.1": ("Dr A", "Cubicle 1", 0), "P2.1": ("Dr B", "Ward 1", 1), "P1.2": ("Dr A", "Ward 1", 3)},
    {"P1.1": "Dr B", "P2.1": "Dr A", "P1.2": "Dr B"},
)


def test_backups_on_shift_from_its_first_slot_to_its_end_keep_the_backup_rule_with_shifts() -> None:
    assert _medical("backup_doctor", BACKED, md.Backup(shifts=True), _on_shifts(5)) == OK_VERDICT


def test_a_backup_whose_shift_ends_before_the_stage_does_fails_the_backup_rule_with_shifts() -> None:
    assert _medical("backup_doctor", BACKED, md.Backup(shifts=True), _on_shifts(4)) == (
        False,
        "P1.2's backup Dr B is not on shift for it",
    )


def test_a_backup_off_shift_keeps_the_backup_rule_without_shifts() -> None:
    assert _medical("backup_doctor", BACKED, md.Backup(shifts=False), _on_shifts(4)) == OK_VERDICT


def test_a_backup_without_the_stages_skill_fails_the_backup_rule() -> None:
    """Only Dr A has triage in the test data: Dr B cannot back P1.1."""
    plan = md.Plan(MEDICAL_GOOD.assign, {"P1.1": "Dr B", "P2.1": "Dr B", "P1.2": "Dr A"})
    assert _medical("backup_doctor", plan, md.Backup(shifts=False)) == (
        False,
        "P1.1's backup Dr B lacks the skill triage",
    )


def test_an_absent_doctors_stages_move_to_their_backups_and_nothing_else_moves() -> None:
    """Dr A absent: P1.1 moves to Dr B at slot 0, where Dr B already does P2.1."""
    plan = md.Plan(
        {"P1.1": ("Dr A", "Cubicle 1", 0), "P2.1": ("Dr B", "Ward 1", 0), "P1.2": ("Dr A", "Ward 1", 2)},
        {"P1.1": "Dr B", "P2.1": "Dr A", "P1.2": "Dr B"},
    )
    assert _medical("backup_doctor", plan, md.Backup(shifts=False), _on_shifts(5)) == (
        False,
        "if Dr A were absent, Dr B would do P1.1 and P2.1 at once",
    )


def test_the_load_balance_reason_names_the_busiest_and_least_busy_doctor_with_their_minutes() -> None:
    assert _medical("load_balance", MEDICAL_GOOD, md.LoadBalance(max=5)) == (
        False,
        "Dr A works 30 minutes and Dr B 20: more than 5 apart",
    )


def test_a_stage_in_the_room_reserved_for_a_new_arrival_fails_the_reservation() -> None:
    reserved = md.Reserved(doctor="Dr B", room="Cubicle 1", start=0, end=1, triage="red")
    assert _medical("reserved", MEDICAL_GOOD, reserved) == (
        False,
        "P1.1 uses Cubicle 1, reserved for the new arrival in slots 0-0",
    )


def test_a_stage_of_the_doctor_reserved_for_a_new_arrival_fails_the_reservation() -> None:
    """P1.2 (Dr B) takes slots 2-3; Dr B is reserved in slot 3."""
    reserved = md.Reserved(doctor="Dr B", room="Cubicle 1", start=3, end=4, triage="red")
    assert _medical("reserved", MEDICAL_GOOD, reserved) == (
        False,
        "P1.2 uses Dr B, reserved for the new arrival in slots 3-3",
    )


def test_stages_clear_of_the_reserved_doctor_room_and_slots_keep_the_reservation() -> None:
    """The cubicle's stage moved to slot 1, after the reserved slot 0; P1.2 ends as Dr B's slot 4 begins."""
    cleared = moved(MEDICAL_GOOD, P1_1=("Dr A", "Cubicle 1", 1))
    room = md.Reserved(doctor="Dr B", room="Cubicle 1", start=0, end=1, triage="red")
    doctor = md.Reserved(doctor="Dr B", room="Cubicle 1", start=4, end=5, triage="red")
    assert _medical("reserved", cleared, room) == _medical("reserved", MEDICAL_GOOD, doctor) == OK_VERDICT


# == Emergency Planning =======================================================================
# The response test data: I1 (wave 1, critical, a fire engine and a paramedic crew, 5 foam, 60
# minutes on scene), I2 (wave 1, a fire engine, 4 foam, 30 minutes), I3 (wave 2, both roles, 45
# minutes); the good plan sends ENG-N1 and MED-N1 to I1, ENG-H1 to I2, ENG-N2 and MED-H1 to I3.
def _response(kind: str, plan: rp.Plan, params: Any = None, data: rp.ResponseData = RESPONSE) -> tuple[bool, str]:
    return rp.CHECKS[kind](data, plan, params or NoParams())


def _dispatch_rows() -> list[dict[str, Any]]:
    """The good plan as answer rows."""
    need = {i.id: i.materials for i in RESPONSE.incidents}
    return [
        {
            "incident": iid,
            "teams": list(teams),
            "materials": [
                {"material": m, "depot": dp, "quantity": need[iid][m]} for m, dp in RESPONSE_GOOD.supply[iid].items()
            ],
        }
        for iid, teams in RESPONSE_GOOD.teams.items()
    ]


def _read_dispatch(
    rows: list[Any], rules: list[Rule] | None = None, data: rp.ResponseData = RESPONSE
) -> tuple[rp.Plan | None, str]:
    return rp.TASK.read_plan(data, {"dispatch": rows}, rp.TASK.lookups(data), rules or [])


def _new_incident_rule(incident: rp.Incident) -> Rule:
    return Rule(id="R9", kind="new_incident", tier="stateful", params={"incident": incident.model_dump(mode="json")})


RESPONSE_REASONS = [  # (kind, params, plan, data, the reason: its figures)
    ("station_cover", rp.StationCover(base=NS, role=FE, keep=1, wave=1), sent(RESPONSE_GOOD, I2=("ENG-N2",), I3=("ENG-H1", "MED-H1")),
     RESPONSE, "North Station keeps 0 fire engine teams in wave 1 (at least 1)"),
    ("dispatch_balance", rp.DispatchBalance(max=1), sent(RESPONSE_GOOD, I2=("ENG-N2",), I3=("ENG-H1", "MED-H1")), RESPONSE,
     "in wave 1 North Station sends 3 teams and Harbour Station 0: more than 1 apart"),
    ("rest_after_long", rp.RestAfterLong(minutes=60), sent(RESPONSE_GOOD, I3=("ENG-N1", "MED-H1")), RESPONSE,
     "ENG-N1 works I1 (60 minutes on scene) and is sent again in wave 2"),
    ("cumulative_duty", rp.CumulativeDuty(minutes=67, light=30), sent(RESPONSE_GOOD, I3=("ENG-N1", "MED-H1")), RESPONSE,
     "ENG-N1 has 68 duty minutes in wave 1 (over 67) and is sent to I3, which lasts 45 minutes (at most 30)"),
    ("turnaround", None, sent(RESPONSE_GOOD, I3=("ENG-N1", "MED-H1")), RESPONSE,
     "ENG-N1 is back from I1 at minute 68, after the wave-2 alert (65)"),
    ("spare_cover", rp.SpareCover(minutes=7, severity="critical"), RESPONSE_GOOD, RESPONSE,
     "no spare paramedic crew team is left within 7 minutes of I1"),
    ("spare_cover", rp.SpareCover(minutes=3, severity="critical"),
     sent(RESPONSE_GOOD, I1=("ENG-N1", "MED-H1"), I3=("ENG-N2", "MED-N1")), RESPONSE,
     "no spare fire engine team is left within 3 minutes of I1"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "params", "plan", "data", "why"), RESPONSE_REASONS, ids=[c[0] for c in RESPONSE_REASONS]
)
def test_a_broken_response_rule_is_failed_with_the_figures_that_break_it(
    kind: str, params: Any, plan: rp.Plan, data: rp.ResponseData, why: str
) -> None:
    assert _response(kind, plan, params, data) == (False, why)


RESPONSE_KEPT = [  # (kind, params, plan, data): each exactly at its limit
    # ENG-N1's first-wave duty is 2 x 4 + 60 = 68 minutes, then sent to I3 (45 minutes)
    ("cumulative_duty", rp.CumulativeDuty(minutes=68, light=30), sent(RESPONSE_GOOD, I3=("ENG-N1", "MED-H1")), RESPONSE),
    ("cumulative_duty", rp.CumulativeDuty(minutes=60, light=45), sent(RESPONSE_GOOD, I3=("ENG-N1", "MED-H1")), RESPONSE),
    # a first-wave incident's teams are not judged by the second-wave duty rule
    ("cumulative_duty", rp.CumulativeDuty(minutes=60, light=30), RESPONSE_GOOD, RESPONSE),
    # back from I1 at minute 68, the wave-2 alert at 68
    ("turnaround", None, sent(RESPONSE_GOOD, I3=("ENG-N1", "MED-H1")), rp.replaced(RESPONSE, alerts=(0, 68))),
    # I1 (ENG-N1, MED-H1, foam from East Depot) and I2 (ENG-H1, foam from East Depot) both complete after 8 minutes
    ("severity_priority", rp.SeverityPriority(first="I1", then="I2"),
     rp.Plan({**RESPONSE_GOOD.teams, "I1": ("ENG-N1", "MED-H1")}, {**RESPONSE_GOOD.supply, "I2": {"foam": ED}}), RESPONSE),
    # MED-N1, left idle in wave 1, is 4 minutes from I1
    ("spare_cover", rp.SpareCover(minutes=4, severity="critical"),
     sent(RESPONSE_GOOD, I1=("ENG-N1", "MED-H1"), I3=("ENG-N2", "MED-N1")), RESPONSE),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "params", "plan", "data"), RESPONSE_KEPT, ids=[c[0] for c in RESPONSE_KEPT])
def test_a_response_rule_met_exactly_at_its_limit_holds(
    kind: str, params: Any, plan: rp.Plan, data: rp.ResponseData
) -> None:
    assert _response(kind, plan, params, data) == OK_VERDICT


def test_a_new_incident_sent_nothing_is_complete_at_minute_0() -> None:
    plan = rp.Plan({**RESPONSE_GOOD.teams, "I4": ()}, {**RESPONSE_GOOD.supply, "I4": {}}, (NEW,))
    assert rp.completion(RESPONSE, plan, NEW) == 0


def test_fatigue_counts_whole_five_minute_units_on_scene() -> None:
    """12 minutes are 2 whole units, 7 minutes 1."""
    i = RESPONSE.incidents[0]
    assert rp.fatigue_units(i.model_copy(update={"duration": 12}), i.model_copy(update={"duration": 7})) == 2


def test_an_arrives_first_rule_about_an_unknown_incident_is_refused_naming_it() -> None:
    assert rp.ArrivesFirst(incident="I9", first=PM, then=FE).data_problems(RESPONSE) == ["unknown incident 'I9'"]


def test_a_dispatch_read_gives_each_incidents_teams_and_depots() -> None:
    assert _read_dispatch(_dispatch_rows()) == (RESPONSE_GOOD, "complete plan")


def test_dispatch_teams_are_kept_in_team_list_order_whatever_order_the_row_gives() -> None:
    """I1 needs two fire engines here: ENG-N2 comes before ENG-H1 in the team list."""
    two = [i.model_copy(update={"needs": {FE: 2, PM: 1}}) if i.id == "I1" else i for i in RESPONSE.incidents]
    data = rp.replaced(RESPONSE, incidents=tuple(two))
    rows = _dispatch_rows()
    rows[0]["teams"], rows[1]["teams"] = ["ENG-H1", "MED-N1", "ENG-N2"], ["ENG-N1"]
    plan, why = _read_dispatch(rows, data=data)
    assert plan is not None, why
    assert plan.teams["I1"] == ("ENG-N2", "ENG-H1", "MED-N1")


def test_dispatch_teams_in_another_spelling_read_as_the_instances_own() -> None:
    rows = _dispatch_rows()
    rows[0]["teams"] = ["eng-n1", " MED-N1"]
    assert _read_dispatch(rows) == (RESPONSE_GOOD, "complete plan")


def test_a_dispatch_row_without_materials_is_read_as_sending_none() -> None:
    rows = _dispatch_rows()
    del rows[2]["materials"]  # I3 needs no material
    assert _read_dispatch(rows) == (RESPONSE_GOOD, "complete plan")


def test_a_new_incident_left_out_of_the_dispatch_gets_no_teams_and_no_materials() -> None:
    plan, why = _read_dispatch(_dispatch_rows(), [_new_incident_rule(NEW)])
    assert why == "complete plan"
    assert plan == rp.Plan({**RESPONSE_GOOD.teams, "I4": ()}, {**RESPONSE_GOOD.supply, "I4": {}}, (NEW,))


def test_a_new_incident_may_go_without_its_materials() -> None:
    needy = NEW.model_copy(update={"materials": {"foam": 2}})
    rows = [*_dispatch_rows(), {"incident": "I4", "teams": ["MED-N1"]}]
    plan, why = _read_dispatch(rows, [_new_incident_rule(needy)])
    assert why == "complete plan" and plan is not None and plan.supply["I4"] == {}


def test_a_new_incident_sent_more_teams_than_it_needs_is_refused() -> None:
    """It needs one fire engine; ENG-N1 and ENG-H1 are both free in the second wave."""
    engine = NEW.model_copy(update={"needs": {FE: 1}})
    rows = [*_dispatch_rows(), {"incident": "I4", "teams": ["ENG-N1", "ENG-H1"]}]
    assert _read_dispatch(rows, [_new_incident_rule(engine)]) == (
        None,
        "incident I4 needs 1 fire engine teams, the answer sends 2",
    )


LONG_NAME = "Z" * 50
DISPATCH_FAULTS = [  # (change to the good rows, the reason)
    (lambda rows: rows.__setitem__(1, ["I2"]), "dispatch row 2 is not an object"),
    (lambda rows: rows[1].__setitem__("incident", 7), "dispatch row 2 needs a string field 'incident'"),
    (lambda rows: rows[1].__setitem__("incident", LONG_NAME), f"dispatch row 2 names unknown incident {LONG_NAME[:40]!r}"),
    (lambda rows: rows.pop(1), "incidents missing from the dispatch: I2"),
    (lambda rows: rows[1].__setitem__("teams", "ENG-H1"), "incident I2 needs 'teams', a list of team ids"),
    (lambda rows: rows[1].__setitem__("teams", [LONG_NAME]), f"incident I2 names unknown team {LONG_NAME[:40]!r}"),
    (lambda rows: rows[1].__setitem__("materials", []), "incident I2 gets no depot for foam"),
    (lambda rows: rows[1]["materials"][0].__setitem__("depot", 7),
     "incident I2: each material row needs string fields 'material' and 'depot'"),
    (lambda rows: rows[1]["materials"][0].__setitem__("material", LONG_NAME),
     f"incident I2 needs no material {LONG_NAME[:40]!r}"),
    (lambda rows: rows[1]["materials"][0].__setitem__("depot", LONG_NAME),
     f"incident I2 names unknown depot {LONG_NAME[:40]!r}"),
    (lambda rows: rows[1]["materials"][0].__setitem__("quantity", 3), "incident I2 needs 'quantity' 4 of foam from one depot"),
    (lambda rows: rows[2].__setitem__("materials", [{"material": "foam", "depot": ED, "quantity": 1}]),
     "incident I3 needs no material 'foam'"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "why"), DISPATCH_FAULTS, ids=[w[:40] for _, w in DISPATCH_FAULTS])
def test_a_faulty_dispatch_is_refused_naming_its_row_or_incident_and_its_fault(change: Any, why: str) -> None:
    rows = _dispatch_rows()
    change(rows)
    assert _read_dispatch(rows) == (None, why)


def test_a_new_incidents_materials_count_no_change_against_a_plan_that_never_listed_it() -> None:
    """The current plan knows only the data's incidents: the new incident's paramedic crew is
    one change, its foam none (there was no depot to change from)."""
    needy = NEW.model_copy(update={"materials": {"foam": 2}})
    plan = rp.Plan({**RESPONSE_GOOD.teams, "I4": ("MED-N1",)}, {**RESPONSE_GOOD.supply, "I4": {"foam": ED}}, (needy,))
    old = rp.Dispatch.model_validate(rp.TASK.existing(RESPONSE, RESPONSE_GOOD))
    assert rp.changes(RESPONSE, plan, old) == 1


def test_spare_cover_is_judged_at_every_incident_of_its_severity_not_only_up_to_another() -> None:
    """I1 (critical) comes first; I2 (serious) has no fire engine spare within 5 minutes."""
    assert _response("spare_cover", RESPONSE_GOOD, rp.SpareCover(minutes=5, severity="serious")) == (
        False,
        "no spare fire engine team is left within 5 minutes of I2",
    )
