"""Medical Resource Planning: each rule kind's check on hand-built plans, the checker held
against the CP-SAT interval encoder on a sample of every plan of a small instance, the
objective figures, the subtasks' structure, the stateful kinds, the sizes, the baseline's
pass rate, bad answers and malformed data."""

from __future__ import annotations

import itertools
import json
from functools import cache

import pytest
from ortools.sat.python import cp_model
from pydantic import ValidationError

from pbsolve.checkers.emergency import medical as md
from pbsolve.checkers.emergency.medical import CHECKS, Doctor, MedicalData, Patient, Plan, Room, Stage, TriageClass
from pbsolve.family import Draft, checker
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from pbsolve.kit import SIZE_NAMES
from pbsolve.models.emergency import medical as model
from pbsolve.params import NoParams, Params
from pbsolve.schema import GenerationSpec, Grade, Instance, ItemResult, ObjectiveTerm, Rule
from tests.instances import subtask_instances

T = md.TASK_ID
SPEC = GenerationSpec(family="emergency", task=T, subtask="emergency_department", seed=0, size="tiny")

# Five slots of 10 minutes, two doctors, two rooms, three stages: every plan is enumerable.
DATA = MedicalData(
    slot_minutes=10,
    slots=5,
    classes=(
        TriageClass(id="red", name="immediate", minutes=0, target=0, weight=16),
        TriageClass(id="yellow", name="urgent", minutes=60, target=6, weight=4),
    ),
    doctors=(
        Doctor(id="Dr A", skills=("triage", "medicine"), shift_start=0, shift_end=5, rate=5),
        Doctor(id="Dr B", skills=("medicine",), shift_start=1, shift_end=5, rate=7),
    ),
    rooms=(
        Room(id="Cubicle 1", type="cubicle", beds=1, rate=3),
        Room(id="Ward 1", type="ward", beds=2, rate=2),
    ),
    patients=(
        Patient(
            id="P1",
            complaint="chest pain",
            triage="red",
            arrival=0,
            stages=(
                Stage(id="P1.1", name="triage", skill="triage", room_type="cubicle", duration=1, points=3),
                Stage(id="P1.2", name="treatment", skill="medicine", room_type="ward", duration=2, gap=1, points=5),
            ),
        ),
        Patient(
            id="P2",
            complaint="fall",
            triage="yellow",
            arrival=1,
            stages=(Stage(id="P2.1", name="treatment", skill="medicine", room_type="ward", duration=2, points=4),),
        ),
    ),
)
INFECTIOUS = md.replaced(DATA, patients=(DATA.patients[0].model_copy(update={"infectious": True}), DATA.patients[1]))
GOOD = Plan({"P1.1": ("Dr A", "Cubicle 1", 0), "P1.2": ("Dr B", "Ward 1", 2), "P2.1": ("Dr A", "Ward 1", 1)})


def moved(plan: Plan, **changes: tuple[str, str, int]) -> Plan:
    return Plan({**plan.assign, **{k.replace("_", "."): v for k, v in changes.items()}}, plan.backup)


def verdict(kind: str, plan: Plan, params: Params | None = None, data: MedicalData = DATA) -> tuple[bool, str]:
    return CHECKS[kind](data, plan, params or NoParams())


# (kind, params, a plan that keeps it, a plan that breaks it, words of the reason, data)
CASES = [
    ("skill", None, GOOD, moved(GOOD, P1_1=("Dr B", "Cubicle 1", 0)), "Dr B lacks the skill triage", DATA),
    ("room_type", None, GOOD, moved(GOOD, P1_1=("Dr A", "Ward 1", 0)), "needs a cubicle", DATA),
    ("doctor_overlap", None, GOOD, moved(GOOD, P2_1=("Dr A", "Ward 1", 0)), "Dr A does P1.1 and P2.1", DATA),
    ("room_beds", None, GOOD, moved(GOOD, P2_1=("Dr A", "Cubicle 1", 0)), "Cubicle 1 holds 2 stages in slot 0", DATA),
    ("pathway", None, GOOD, moved(GOOD, P1_2=("Dr B", "Ward 1", 0)), "before P1.1 ends (1)", DATA),
    ("shift", None, GOOD, moved(GOOD, P2_1=("Dr B", "Ward 1", 0)), "outside Dr B's shift", DATA),
    (
        "max_patients",
        md.Doctors(doctors=["Dr A"], max=1),
        moved(GOOD, P2_1=("Dr B", "Ward 1", 0)),
        GOOD,
        "Dr A sees 2 patients (at most 1)",
        DATA,
    ),
    (
        "max_minutes",
        md.Doctors(doctors=["Dr A"], max=20),
        moved(GOOD, P2_1=("Dr B", "Ward 1", 0)),
        GOOD,
        "Dr A works 30 minutes (at most 20)",
        DATA,
    ),
    (
        "target_deadline",
        md.Patients(patients=["P1"]),
        GOOD,
        moved(GOOD, P1_1=("Dr A", "Cubicle 1", 1)),
        "P1 waits 1",
        DATA,
    ),
    (
        "min_gap",
        None,
        GOOD,
        moved(GOOD, P1_2=("Dr B", "Ward 1", 1)),
        "P1.2 starts 0 slots after P1.1 ends (at least 1)",
        DATA,
    ),
    (
        "same_doctor",
        md.SameDoctor(stages=["P1.1", "P1.2"]),
        moved(GOOD, P1_2=("Dr A", "Ward 1", 3)),
        GOOD,
        "are done by Dr A, Dr B",
        DATA,
    ),
    (
        "buffer",
        md.Slots(slots=1),
        moved(GOOD, P2_1=("Dr A", "Ward 1", 2)),
        GOOD,
        "Dr A has fewer than 1 free slots",
        DATA,
    ),
    (
        "room_turnover",
        md.RoomTurnover(room_type="ward", slots=1),
        moved(GOOD, P2_1=("Dr A", "Cubicle 1", 1)),
        GOOD,
        "Ward 1 has fewer than 1 empty slots",
        DATA,
    ),
    ("load_balance", md.LoadBalance(max=10), GOOD, moved(GOOD, P2_1=("Dr B", "Ward 1", 0)), "more than 10 apart", DATA),
    (
        "triage_order",
        md.TriageOrder(pairs=[("P1", "P2")]),
        GOOD,
        moved(GOOD, P1_1=("Dr A", "Cubicle 1", 2)),
        "P1 is first seen in slot 2, after P2 (slot 1)",
        DATA,
    ),
    (
        "infection_cleaning",
        md.Slots(slots=1),
        GOOD,
        moved(GOOD, P2_1=("Dr A", "Cubicle 1", 1)),
        "P2.1 is in Cubicle 1 during the cleaning after infectious P1.1",
        INFECTIOUS,
    ),
    (
        "fatigue_break",
        md.FatigueBreak(slot=1, minutes=0, slots=1),
        moved(GOOD, P2_1=("Dr A", "Ward 1", 2)),
        GOOD,
        "Dr A has 10 minutes done by slot 1 (over 0) but does P2.1",
        DATA,
    ),
    (
        "doctor_absent",
        md.DoctorAbsent(doctor="Dr B", start=2, end=3),
        moved(GOOD, P1_2=("Dr B", "Ward 1", 3)),
        GOOD,
        "Dr B is absent in slots 2-2 but does P1.2",
        DATA,
    ),
    (
        "reserved",
        md.Reserved(doctor="Dr B", room="Cubicle 1", start=0, end=1, triage="red"),
        moved(GOOD, P1_1=("Dr A", "Cubicle 1", 1)),
        GOOD,
        "P1.1 uses Cubicle 1, reserved for the new arrival",
        DATA,
    ),
    (
        "not_before",
        md.NotBefore(stage="P2.1", slot=2),
        moved(GOOD, P2_1=("Dr A", "Ward 1", 2)),
        GOOD,
        "before slot 2",
        DATA,
    ),
]


@pytest.mark.parametrize(("kind", "params", "keeps", "breaks", "why", "data"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_kinds_check_accepts_a_plan_that_keeps_it_and_rejects_one_that_breaks_it_with_the_reason(
    kind, params, keeps, breaks, why, data
):
    assert verdict(kind, keeps, params, data) == (True, "holds")
    ok, reason = verdict(kind, breaks, params, data)
    assert not ok and why in reason, reason


def test_every_pool_rule_kind_and_disruption_kind_has_a_hand_built_case():
    pool = {c.id for c in model.TASK.pool} & set(CHECKS)
    assert pool | {"doctor_absent", "reserved", "not_before"} <= {c[0] for c in CASES} | {"backup_doctor"}
    assert set(CHECKS) == set(model.ENCODERS) == set(md.RULE_PARAMS)


# -- the checker against the encoder ---------------------------------------------------
def _options(data: MedicalData) -> list[list[tuple[str, str, int]]]:
    return [
        [(x.id, r.id, t) for x in data.doctors for r in data.rooms for t in range(data.slots - s.duration + 1)]
        for s in data.stages
    ]


ALL_PLANS = [Plan(dict(zip(("P1.1", "P1.2", "P2.1"), combo))) for combo in itertools.product(*_options(DATA))]
SAMPLE = ALL_PLANS[::29]  # 177 of 5,120 plans, spread over every choice
OBJECTIVE = [ObjectiveTerm(id=k, kind=k) for k in ("waiting", "completion", "cost", "order_score")]


def model_says(
    plan: Plan, rules: list[Rule], objective: list[ObjectiveTerm] = OBJECTIVE, data: MedicalData = DATA
) -> tuple[bool, dict[str, int]]:
    """Is the plan feasible for the CP-SAT model with these rules on? Also its figures."""
    draft = Draft(spec=SPEC, data=data.model_dump(mode="json"), rules=rules, objective=objective)
    sm = model.build(draft)
    chosen = {f"x[{s},{doc}]" for s, (doc, _, _) in plan.assign.items()}
    chosen |= {f"y[{s},{room}]" for s, (_, room, _) in plan.assign.items()}
    chosen |= {f"b[{s},{doc}]" for s, doc in (plan.backup or {}).items()}
    for var in sm.answer_literals:
        sm.model.add(var == int(var.name in chosen))
    for var, s in zip(sm.answer_ints, data.stages):
        sm.model.add(var == plan.assign[s.id][2])
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.solve(sm.model)
    if status == cp_model.INFEASIBLE:
        return False, {}
    assert status == cp_model.OPTIMAL
    return True, {tid: int(solver.value(expr)) for tid, expr, _ in sm.objective_terms}


@pytest.mark.parametrize(("kind", "params", "data"), [(c[0], c[1], c[5]) for c in CASES], ids=[c[0] for c in CASES])
def test_encoder_and_check_agree_on_a_sample_of_every_plan_of_a_small_instance(kind, params, data):
    rule = Rule(id="R1", kind=kind, tier="basic", params=(params or NoParams()).dump())
    outcomes = set()
    for plan in [*SAMPLE, *(c[2] for c in CASES if c[0] == kind), *(c[3] for c in CASES if c[0] == kind)]:
        ok, _ = verdict(kind, plan, params, data)
        assert model_says(plan, [rule], data=data)[0] == ok, (kind, plan)
        outcomes.add(ok)
    assert outcomes == {True, False}


def test_the_models_objective_figures_equal_the_checkers_on_a_sample_of_plans():
    for plan in SAMPLE[::3]:
        _, figures = model_says(plan, [])
        assert figures == {t.id: md.objective_value(DATA, plan, t, NoParams()) for t in OBJECTIVE}


def test_waiting_counts_weight_times_slots_beyond_the_triage_target_and_nothing_within_it():
    term = ObjectiveTerm(id="waiting", kind="waiting")
    assert md.objective_value(DATA, GOOD, term, NoParams()) == 0
    late = moved(GOOD, P1_1=("Dr A", "Cubicle 1", 2), P2_1=("Dr A", "Ward 1", 3))  # P2 waits 2 < 6 slots
    assert md.objective_value(DATA, late, term, NoParams()) == 16 * 2


def test_changes_count_each_differing_doctor_room_and_start_separately():
    existing = {s: list(v) for s, v in GOOD.assign.items()}
    term = ObjectiveTerm(id="changes", kind="changes", params={"existing": existing})
    tp = md.CurrentStages(existing={s: tuple(v) for s, v in GOOD.assign.items()})
    assert md.objective_value(DATA, GOOD, term, tp) == 0
    assert md.objective_value(DATA, moved(GOOD, P2_1=("Dr B", "Cubicle 1", 3)), term, tp) == 3
    _, figures = model_says(moved(GOOD, P2_1=("Dr B", "Cubicle 1", 3)), [], [term])
    assert figures == {"changes": 3}


def test_the_backup_check_moves_each_absent_doctors_stages_to_their_backups():
    three = md.replaced(
        DATA,
        doctors=(*DATA.doctors, Doctor(id="Dr C", skills=("triage", "medicine"), shift_start=0, shift_end=5, rate=9)),
    )
    p = md.Backup(shifts=True)
    plan = Plan(GOOD.assign, {"P1.1": "Dr C", "P1.2": "Dr C", "P2.1": "Dr C"})
    assert verdict("backup_doctor", plan, p, three) == (True, "holds")
    assert "its own doctor" in verdict("backup_doctor", Plan(GOOD.assign, {**plan.backup, "P1.1": "Dr A"}), p, three)[1]
    assert (
        "lacks the skill triage"
        in verdict("backup_doctor", Plan(GOOD.assign, {**plan.backup, "P1.1": "Dr B"}), p, three)[1]
    )
    clash = Plan(
        GOOD.assign, {"P1.1": "Dr C", "P1.2": "Dr C", "P2.1": "Dr B"}
    )  # P2.1 (slots 1-2) onto Dr B's P1.2 (2-3)
    ok, why = verdict("backup_doctor", clash, md.Backup(shifts=False), three)
    assert not ok and "if Dr A were absent, Dr B would do P1.2 and P2.1 at once" in why


def test_the_backup_encoder_and_check_agree_on_plans_with_every_backup_choice():
    rule = Rule(id="R1", kind="backup_doctor", tier="hard", params=md.Backup(shifts=True).dump())
    names = [x.id for x in DATA.doctors]
    outcomes = set()
    for plan in SAMPLE[::6]:
        for combo in itertools.product(names, repeat=3):
            with_backups = Plan(plan.assign, dict(zip(("P1.1", "P1.2", "P2.1"), combo)))
            ok = verdict("backup_doctor", with_backups, md.Backup(shifts=True))[0]
            assert model_says(with_backups, [rule], [])[0] == ok, with_backups
            outcomes.add(ok)
    assert outcomes == {True, False}


def test_malformed_data_is_a_clear_error_naming_what_is_wrong():
    raw = DATA.model_dump(mode="json")
    raw["patients"][0]["triage"] = "purple"
    with pytest.raises(ValidationError, match="unknown triage class 'purple'"):
        MedicalData.model_validate(raw)
    raw = DATA.model_dump(mode="json")
    raw["doctors"][1]["shift_end"] = 9
    with pytest.raises(ValidationError, match="shift 1-9 is not within 0-5"):
        MedicalData.model_validate(raw)
    raw = DATA.model_dump(mode="json")
    raw["rooms"][0]["id"] = "Dr A"
    with pytest.raises(ValidationError, match="must all be distinct"):
        MedicalData.model_validate(raw)


# -- sizes and subtasks ----------------------------------------------------------------
def test_every_size_has_its_own_validated_frozen_settings():
    settings = [model.SIZES.of(size) for size in SIZE_NAMES]
    assert len({type(s) for s in settings}) == 1 and len({s.model_dump_json() for s in settings}) == len(settings)
    with pytest.raises(ValidationError):
        type(settings[0])(**settings[0].model_dump(), colour="red")
    assert model.SIZES.tiny.total <= 3 and model.SIZES.tiny.doctors == model.SIZES.tiny.rooms == 2


def test_the_large_size_certifies_instances():
    """Index 0 of seed 1 certifies in about 2 s (index 1 takes over a minute: large is a stress size)."""
    inst = build_instance(1, 0, GenerateOptions(task=T, size="large")).instance
    assert inst is not None and inst.spec.size == "large"


@cache
def insts(subtask: str) -> list[Instance]:
    return subtask_instances(T, subtask, 2)


def kinds(inst: Instance) -> set[str]:
    return {r.kind for r in inst.rules}


def test_there_are_five_subtasks_with_their_own_objective_order_and_forced_rule():
    assert len(model.TASK.subtasks) == 5
    assert {s.id for s in model.TASK.subtasks} == set(model.OBJECTIVES) == set(model.FORCED) == set(model.FLOWS)
    assert all(o[-1] == "order_score" for o in model.OBJECTIVES.values())


@pytest.mark.parametrize("subtask", [s.id for s in model.TASK.subtasks])
def test_each_subtask_certifies_with_its_forced_rule_its_rooms_and_its_triage_scale(subtask):
    flow = model.FLOWS[subtask]
    for inst in insts(subtask):
        assert set(model.FORCED[subtask]) <= kinds(inst)
        assert [t.kind for t in inst.objective if t.kind not in ("changes", "backup_cost")] == list(
            model.OBJECTIVES[subtask]
        )
        assert {r["type"] for r in inst.data["rooms"]} <= {t for t, _ in flow.rooms}
        assert [c["id"] for c in inst.data["classes"]] == list(flow.classes)
        assert all(c["target"] == c["minutes"] // inst.data["slot_minutes"] for c in inst.data["classes"])
        assert grade(inst, json.dumps(inst.reference)).all_pass == 1


def test_theatres_have_a_changeover_and_an_emergency_department_triages_first():
    for inst in insts("operating_theatres"):
        assert any(r.kind == "room_turnover" for r in inst.rules)
    for inst in insts("emergency_department"):
        assert all(p["stages"][0]["name"] == "triage" for p in inst.data["patients"])


def test_no_two_doctors_or_rooms_are_interchangeable():
    for subtask in model.FLOWS:
        for inst in insts(subtask):
            rates = [x["rate"] for x in inst.data["doctors"]]
            assert len(set(rates)) == len(rates)
            rooms = [(r["type"], r["rate"]) for r in inst.data["rooms"]]
            assert len(set(rooms)) == len(rooms)


def test_the_prompt_states_the_slot_clock_the_triage_targets_and_the_units():
    inst = insts("emergency_department")[0]
    for words in ("slots of 10 minutes", "Manchester Triage System", "red (immediate): target 0 min = 0 slots",
                  "orange (very urgent): target 10 min = 1 slot", "rate: cost per slot", "bed(s)"):  # fmt: skip
        assert words in inst.prompt, words


# -- stateful kinds --------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["infection_cleaning", "fatigue_break"])
def test_a_stateful_kind_is_sampled_on_request_and_its_reference_passes(kind):
    found = None
    for index in range(12):
        inst = build_instance(3, index, GenerateOptions(task=T, size="small", include=[kind])).instance
        if inst is not None and inst.certificate.status == "optimal" and kind in kinds(inst):
            found = inst
            break
    assert found is not None
    assert next(r for r in found.rules if r.kind == kind).tier == "stateful"
    assert grade(found, json.dumps(found.reference)).all_pass == 1
    if kind == "infection_cleaning":
        assert any(p["infectious"] for p in found.data["patients"]) and "infectious" in found.prompt


# -- responders and bad answers --------------------------------------------------------
@cache
def small_instance() -> Instance:
    inst = build_instance(2, 0, GenerateOptions(task=T, size="small")).instance
    assert inst is not None and inst.certificate.status == "optimal"
    return inst


def format_item(inst: Instance, g: Grade) -> ItemResult:
    fmt = next(it.id for it in inst.checklist if it.rule == "format")
    return next(i for i in g.items if i.id == fmt)


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("doctor", "Dr Who", "names unknown doctor 'Dr Who'"),
        ("room", "Broom cupboard", "names unknown room 'Broom cupboard'"),
        ("stage", "P99.1", "names unknown stage 'P99.1'"),
        ("doctor", 7, "needs string fields"),
        ("start", "3", "needs a whole-number 'start' slot"),
        ("start", True, "needs a whole-number 'start' slot"),
        ("start", 999, "it must start in slot 0 to"),
        ("start", -1, "it must start in slot 0 to"),
    ],
)
def test_an_answer_naming_an_unknown_doctor_room_or_stage_or_a_bad_start_fails_the_format_item(field, value, why):
    inst = small_instance()
    answer = json.loads(json.dumps(inst.reference))
    answer["schedule"][0][field] = value
    g = grade(inst, json.dumps(answer))
    fmt = format_item(inst, g)
    assert not fmt.passed and why in fmt.reason, fmt.reason
    assert g.all_pass == 0


def test_an_answer_missing_a_stage_or_repeating_one_fails_the_format_item():
    inst = small_instance()
    answer = json.loads(json.dumps(inst.reference))
    answer["schedule"] = answer["schedule"][1:]
    assert "missing from the schedule" in format_item(inst, grade(inst, json.dumps(answer))).reason
    answer = json.loads(json.dumps(inst.reference))
    answer["schedule"].append(answer["schedule"][0])
    assert "appears more than once" in format_item(inst, grade(inst, json.dumps(answer))).reason


def test_perturb_finds_a_confirmed_one_move_break_for_the_common_rule_kinds():
    from pbsolve.audit.perturb import PerturbReport, perturb_instance

    report, found = PerturbReport(), set()
    for index in range(10):
        inst = build_instance(4, index, GenerateOptions(task=T, size="default")).instance
        if inst is not None:
            found |= {p.kind for p in perturb_instance(inst, 0, report=report)}
    assert not report.hook_errors and not report.rejected
    wanted = {"skill", "room_type", "doctor_overlap", "room_beds", "pathway"}
    assert {f"break_rule:{k}" for k in wanted} <= found
    assert {"suboptimal", "suboptimal_claims_optimum"} <= found


OPTIONAL_KINDS = [
    c.id for c in model.TASK.pool if c.tier in ("basic", "medium", "stateful") and c.id not in model.TASK.base_rules
]
OPTIONAL_KINDS.remove("conflict_validation")


@pytest.mark.parametrize("kind", [*OPTIONAL_KINDS, "robustness_design"])
def test_near_misses_break_each_rule_kind_alone_on_instances_that_carry_it(kind):
    """`pbsolve perturb` has a break_rule line for every kind: over a few small instances
    carrying the kind (robustness: the backup rule), some single move breaks it alone."""
    import random

    target = "backup_doctor" if kind == "robustness_design" else kind
    found = set()
    for index in range(16):
        inst = build_instance(6, index, GenerateOptions(task=T, size="small", include=[kind])).instance
        if inst is None or inst.certificate.status != "optimal" or target not in kinds(inst):
            continue
        found |= {k for k, _ in checker("emergency").near_misses(inst, random.Random(0))}
        if f"break_rule:{target}" in found:
            break
    assert f"break_rule:{target}" in found, sorted(found)
