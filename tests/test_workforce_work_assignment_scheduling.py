"""Work Assignment Scheduling: each rule kind's check on hand-built plans, the checker held
against the CP-SAT encoder on every plan of a small instance, the subtasks' structure,
the stateful kinds, the baseline's pass rate and answers naming unknown entities."""

from __future__ import annotations

import itertools
import json
from functools import cache

import pytest
from ortools.sat.python import cp_model

from pbsolve.checkers.workforce import work_assignment as wa
from pbsolve.checkers.workforce.work_assignment import CHECKS, Chain, Job, Plan, WorkData, Worker
from pbsolve.family import Draft
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from pbsolve.models.workforce import work_assignment as model
from pbsolve.params import NoParams, Params
from pbsolve.schema import GenerationSpec, Grade, Instance, ItemResult, ObjectiveTerm, Rule
from tests.instances import subtask_instances

T = wa.TASK_ID
SPEC = GenerationSpec(family="workforce", task=T, subtask="maintenance_crew", seed=0, size="tiny")


def job(
    tid: str, skill: str, hours: int, release: str = "Mon", due: str = "Tue", weight: int = 1, priority: int = 1
) -> Job:
    return Job(
        id=tid, name=f"{tid} job", skill=skill, hours=hours, release=release, due=due, weight=weight, priority=priority
    )


# Three days, two workers, three tasks: 6^3 = 216 plans, every one enumerable.
DATA = WorkData(
    days=("Mon", "Tue", "Wed"),
    workers=(
        Worker(id="Ana", skills=("weld", "wire"), rate=30, max_day=4, days_off=("Wed",)),
        Worker(id="Ben", skills=("wire",), rate=20, max_day=3),
    ),
    tasks=(
        job("T1", "weld", 3, due="Mon", weight=2, priority=5),
        job("T2", "wire", 2, release="Tue", due="Tue", priority=3),
        job("T3", "wire", 1, due="Wed", weight=3, priority=7),
    ),
    chains=(Chain(id="C1", tasks=("T2", "T3"), cost=4),),
)
GOOD = Plan({"T1": ("Ana", "Mon"), "T2": ("Ben", "Tue"), "T3": ("Ben", "Mon")})


def fresh(data: WorkData, **changes: object) -> WorkData:
    """A new data object with fields replaced (model_copy would keep cached lookups)."""
    return wa.replaced(data, **changes)


def moved(plan: Plan, **changes: tuple[str, str]) -> Plan:
    return Plan({**plan.assign, **changes}, plan.backup)


def verdict(kind: str, plan: Plan, params: Params | None = None, data: WorkData = DATA) -> tuple[bool, str]:
    return CHECKS[kind](data, plan, params or NoParams())


# (kind, params, a plan that keeps it, a plan that breaks it, words of the reason)
CASES = [
    ("skill", None, GOOD, moved(GOOD, T1=("Ben", "Mon")), "lacks the skill weld"),
    ("daily_hours", None, GOOD, moved(GOOD, T2=("Ana", "Mon")), "Ana works 5 hours on Mon"),
    ("availability", None, GOOD, moved(GOOD, T3=("Ana", "Wed")), "Ana has Wed off"),
    ("release", None, GOOD, moved(GOOD, T2=("Ben", "Mon")), "before its release day Tue"),
    ("hard_deadline", wa.HardDeadline(tasks=["T1"]), GOOD, moved(GOOD, T1=("Ana", "Tue")), "after its deadline Mon"),
    ("weekly_hours", wa.WeeklyHours(workers=["Ben"], max=3), GOOD, moved(GOOD, T1=("Ben", "Wed")), "Ben works 6 hours"),
    (
        "worker_absent",
        wa.WorkerAbsent(worker="Ben", days=["Wed"]),
        GOOD,
        moved(GOOD, T3=("Ben", "Wed")),
        "absent on Wed",
    ),
    ("not_before", wa.NotBefore(task="T3", day="Tue"), moved(GOOD, T3=("Ben", "Tue")), GOOD, "before Tue"),
    ("precedence", wa.Precedence(pairs=[("T1", "T2")]), GOOD, moved(GOOD, T1=("Ana", "Tue")), "not on a later day"),
    ("load_balance", wa.LoadBalance(max=0), GOOD, moved(GOOD, T3=("Ana", "Tue")), "more than 0 apart"),
    (
        "different_worker",
        wa.DifferentWorker(pairs=[("T2", "T3")]),
        moved(GOOD, T3=("Ana", "Mon")),
        GOOD,
        "both done by Ben",
    ),
    ("same_worker", wa.SameWorker(tasks=["T2", "T3"]), GOOD, moved(GOOD, T3=("Ana", "Mon")), "are done by Ana, Ben"),
    ("min_hours", wa.MinHours(workers=["Ben"], min=3), GOOD, moved(GOOD, T3=("Ana", "Tue")), "at least 3"),
    (
        "cumulative_rest",
        wa.CumulativeRest(day="Mon", hours=0, light=1),
        moved(GOOD, T3=("Ben", "Wed")),
        GOOD,
        "Ben works 1 hours through Mon (over 0) and 2 on Tue",
    ),
    ("consecutive_days", wa.ConsecutiveDays(max=1), moved(GOOD, T2=("Ben", "Wed")), GOOD, "2 days in a row"),
]


@pytest.mark.parametrize(("kind", "params", "keeps", "breaks", "why"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_kinds_check_accepts_a_plan_that_keeps_it_and_rejects_one_that_breaks_it_with_the_reason(
    kind, params, keeps, breaks, why
):
    assert verdict(kind, keeps, params) == (True, "holds")
    ok, reason = verdict(kind, breaks, params)
    assert not ok and why in reason, reason


def test_every_pool_rule_kind_and_disruption_kind_has_a_hand_built_case():
    pool = {c.id for c in model.TASK.pool} & set(CHECKS)
    assert pool | {"worker_absent", "not_before"} <= {c[0] for c in CASES} | {"worker_backup"}


def test_the_backup_check_simulates_each_worker_falling_ill_for_the_week():
    data = fresh(DATA, workers=(*DATA.workers, Worker(id="Cy", skills=("weld", "wire"), rate=10, max_day=4)))
    plan = Plan(GOOD.assign, {"T1": "Cy", "T2": "Cy", "T3": "Ana"})
    assert verdict("worker_backup", plan, data=data) == (True, "holds")
    own = Plan(GOOD.assign, {"T1": "Ana", "T2": "Cy", "T3": "Ana"})
    assert "its own worker" in verdict("worker_backup", own, data=data)[1]
    unskilled = Plan(GOOD.assign, {"T1": "Ben", "T2": "Cy", "T3": "Ana"})
    assert "lacks the skill weld" in verdict("worker_backup", unskilled, data=data)[1]
    overloaded = Plan(moved(GOOD, T1=("Cy", "Mon"), T3=("Ben", "Tue")).assign, {"T1": "Ana", "T2": "Ana", "T3": "Ana"})
    assert verdict("worker_backup", overloaded, data=data) == (True, "holds")  # Ana: 3 of 4 hours on Tue
    tight = fresh(data, workers=(data.workers[0].model_copy(update={"max_day": 2}), *data.workers[1:]))
    ok, why = verdict("worker_backup", overloaded, data=tight)
    assert not ok and "if Ben fell ill, Ana would work 3 hours on Tue (at most 2)" in why


# -- the checker against the encoder, on every plan ----------------------------------------
ALL_PLANS = [
    Plan(dict(zip(("T1", "T2", "T3"), combo)))
    for combo in itertools.product([(w.id, d) for w in DATA.workers for d in DATA.days], repeat=3)
]
OBJECTIVE = [ObjectiveTerm(id=k, kind=k) for k in ("labour_cost", "lateness", "handovers", "order_score")]


def model_says(
    plan: Plan, rules: list[Rule], objective: list[ObjectiveTerm] = OBJECTIVE
) -> tuple[bool, dict[str, int]]:
    draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=rules, objective=objective)
    sm = model.build(draft)
    chosen = {f"x[{t},{w},{d}]" for t, (w, d) in plan.assign.items()}
    for var in sm.answer_literals:
        sm.model.add(var == int(var.name in chosen))
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.solve(sm.model)
    if status == cp_model.INFEASIBLE:
        return False, {}
    assert status == cp_model.OPTIMAL
    return True, {tid: int(solver.value(expr)) for tid, expr, _ in sm.objective_terms}


@pytest.mark.parametrize(("kind", "params"), [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES])
def test_encoder_and_check_agree_on_every_plan_of_a_small_instance(kind, params):
    rule = Rule(id="R1", kind=kind, tier="basic", params=(params or NoParams()).dump())
    for plan in ALL_PLANS:
        ok, _ = verdict(kind, plan, params)
        assert model_says(plan, [rule])[0] == ok, (kind, plan)


def test_the_models_objective_figures_equal_the_checkers_on_every_plan():
    for plan in ALL_PLANS[::7]:
        _, figures = model_says(plan, [])
        assert figures == {t.id: wa.objective_value(DATA, plan, t, NoParams()) for t in OBJECTIVE}


def test_handovers_count_each_change_of_worker_within_a_chain_at_its_cost():
    term = ObjectiveTerm(id="handovers", kind="handovers")
    assert wa.objective_value(DATA, GOOD, term, NoParams()) == 0
    assert wa.objective_value(DATA, moved(GOOD, T3=("Ana", "Mon")), term, NoParams()) == 4


def test_lateness_counts_weight_times_days_late_and_nothing_for_early_tasks():
    term = ObjectiveTerm(id="lateness", kind="lateness")
    assert wa.objective_value(DATA, GOOD, term, NoParams()) == 0
    assert wa.objective_value(DATA, moved(GOOD, T1=("Ana", "Wed")), term, NoParams()) == 2 * 2


# -- subtasks ---------------------------------------------------------------------------
@cache
def insts(subtask: str) -> list[Instance]:
    return subtask_instances(T, subtask, 3)


def kinds(inst: Instance) -> set[str]:
    return {r.kind for r in inst.rules}


def terms(inst: Instance) -> list[str]:
    return [t.kind for t in inst.objective]


def test_there_are_five_subtasks_each_with_its_own_objective_order():
    assert len(model.TASK.subtasks) == 5
    orders = {s.id: tuple(model.OBJECTIVES[s.id]) for s in model.TASK.subtasks}
    assert len(set(orders.values())) == 5 and all(o[-1] == "order_score" for o in orders.values())


def test_a_maintenance_crew_has_dependencies_and_equipment_chains_with_handovers_after_lateness():
    for inst in insts("maintenance_crew"):
        assert "precedence" in kinds(inst) and inst.data["chains"]
        assert terms(inst) == ["lateness", "handovers", "labour_cost", "order_score"]


def test_a_consulting_team_bills_rates_first_under_hard_client_deadlines():
    for inst in insts("consulting_team"):
        assert "hard_deadline" in kinds(inst) and not inst.data["chains"]
        assert terms(inst)[0] == "labour_cost"
        assert len({w["rate"] for w in inst.data["workers"]}) == len(inst.data["workers"])


def test_a_software_sprint_reviews_stories_by_another_worker_on_a_later_day():
    for inst in insts("software_sprint"):
        names = {t["id"]: t["name"] for t in inst.data["tasks"]}
        reviews = [[a, b] for a, b in itertools.pairwise(names) if names[b].endswith("code review")]
        assert reviews and all(names[a].endswith("story") for a, _ in reviews)
        assert next(r for r in inst.rules if r.kind == "different_worker").params["pairs"] == reviews
        after = next(r for r in inst.rules if r.kind == "precedence").params["pairs"]
        assert all(p in after for p in reviews)


def test_cleaning_rounds_run_in_chains_and_pay_handovers_after_labour_cost():
    for inst in insts("cleaning_services"):
        assert inst.data["chains"] and terms(inst) == ["labour_cost", "handovers", "order_score"]
        assert "Chains" in inst.prompt and "handover cost" in inst.prompt


def test_a_translation_agency_has_a_second_reviewer_rule_over_language_pairs():
    for inst in insts("translation_agency"):
        assert "different_worker" in kinds(inst)
        assert {t["skill"] for t in inst.data["tasks"]} <= set(model.SKILLS["translation_agency"])
        assert terms(inst) == ["lateness", "labour_cost", "order_score"]


# -- stateful kinds ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["cumulative_rest", "consecutive_days"])
def test_a_stateful_kind_is_sampled_on_request_and_its_reference_passes(kind):
    found = None
    for index in range(12):
        inst = build_instance(3, index, GenerateOptions(task=T, size="small", include=[kind])).instance
        if inst is not None and inst.certificate.status == "optimal" and kind in kinds(inst):
            found = inst
            break
    assert found is not None
    rule = next(r for r in found.rules if r.kind == kind)
    assert rule.tier == "stateful"
    assert grade(found, json.dumps(found.reference)).all_pass == 1


def test_the_running_hours_rule_only_caps_the_day_after_the_checkpoint():
    p = wa.CumulativeRest(day="Mon", hours=2, light=0)
    heavy_monday = moved(GOOD, T3=("Ben", "Wed"))  # Ana 3 h on Mon, nothing on Tue; Ben 2 h on Tue
    assert verdict("cumulative_rest", heavy_monday, p) == (True, "holds")
    ok, why = verdict("cumulative_rest", moved(heavy_monday, T2=("Ana", "Tue")), p)
    assert not ok and "Ana works 3 hours through Mon" in why


# -- responders and bad answers ---------------------------------------------------------
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
        ("worker", "Zed", "names unknown worker 'Zed'"),
        ("day", "Sun", "names unknown day 'Sun'"),
        ("task", "T99", "names unknown task 'T99'"),
        ("worker", 7, "needs string fields"),
    ],
)
def test_an_answer_naming_an_unknown_worker_day_or_task_fails_the_format_item_with_a_reason(field, value, why):
    inst = small_instance()
    answer = json.loads(json.dumps(inst.reference))
    answer["assignments"][0][field] = value
    g = grade(inst, json.dumps(answer))
    fmt = format_item(inst, g)
    assert not fmt.passed and why in fmt.reason
    assert g.all_pass == 0


def test_an_answer_missing_a_task_or_repeating_one_fails_the_format_item():
    inst = small_instance()
    answer = json.loads(json.dumps(inst.reference))
    answer["assignments"] = answer["assignments"][1:]
    assert "missing from the assignments" in format_item(inst, grade(inst, json.dumps(answer))).reason
    answer = json.loads(json.dumps(inst.reference))
    answer["assignments"].append(answer["assignments"][0])
    assert "appears more than once" in format_item(inst, grade(inst, json.dumps(answer))).reason


def test_perturb_finds_a_confirmed_one_move_break_for_the_common_rule_kinds():
    from pbsolve.audit.perturb import PerturbReport, perturb_instance

    report, found = PerturbReport(), set()
    for index in range(10):
        inst = build_instance(4, index, GenerateOptions(task=T, size="default")).instance
        if inst is not None:
            found |= {p.kind for p in perturb_instance(inst, 0, report=report)}
    assert not report.hook_errors and not report.rejected
    wanted = {"skill", "daily_hours", "release", "hard_deadline", "precedence", "different_worker", "weekly_hours"}
    assert {f"break_rule:{k}" for k in wanted} <= found
    assert {"suboptimal", "suboptimal_claims_optimum"} <= found


def test_the_backup_encoder_and_check_agree_on_plans_with_every_backup_choice():
    rule = Rule(id="R1", kind="worker_backup", tier="hard", params={})
    names = [w.id for w in DATA.workers]
    checked, outcomes = 0, set()
    for plan in ALL_PLANS[::9]:
        for combo in itertools.product(names, repeat=len(DATA.tasks)):
            with_backups = Plan(plan.assign, dict(zip(("T1", "T2", "T3"), combo)))
            draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=[rule], objective=[])
            sm = model.build(draft)
            chosen = {f"x[{t},{w},{d}]" for t, (w, d) in with_backups.assign.items()}
            chosen |= {f"b[{t},{w}]" for t, w in combo_items(with_backups)}
            for var in sm.answer_literals:
                sm.model.add(var == int(var.name in chosen))
            for lit in sm.rule_literals.values():
                sm.model.add(lit == 1)
            solver = cp_model.CpSolver()
            solver.parameters.num_workers = 1
            accepted = solver.solve(sm.model) != cp_model.INFEASIBLE
            assert accepted == verdict("worker_backup", with_backups)[0], with_backups
            checked += 1
            outcomes.add(accepted)
    assert checked == len(ALL_PLANS[::9]) * 2 ** len(DATA.tasks) and outcomes == {True, False}


def combo_items(plan: Plan) -> list[tuple[str, str]]:
    return sorted((plan.backup or {}).items())
