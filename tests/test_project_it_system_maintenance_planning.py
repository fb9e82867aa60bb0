"""IT System Maintenance Planning: what the registry suites do not say on their own --
downtime counts the hours a service's providers are down, every rule kind's encoder
agrees with its check on every plan of a small hand-built night, each subtask carries its
structure, bad answers and malformed data are refused with their reason, every rule kind
has a one-rule near miss, and the prompt states every number it relies on."""

from __future__ import annotations

import itertools
import json
import random
from functools import cache
from typing import Any

import pytest
from ortools.sat.python import cp_model
from pydantic import ValidationError

from pbsolve.checkers.project import maintenance as mc
from pbsolve.checkers.project.maintenance import MaintData, MTask, Service, Window
from pbsolve.family import Draft, checker, find_task
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from pbsolve.mechanisms import HARD_KINDS, REPORTING_KINDS
from pbsolve.models.project import maintenance as mm
from pbsolve.params import NoParams, Params, make_rule
from pbsolve.renderers import project as R
from pbsolve.schema import GenerationSpec, Instance, ObjectiveTerm, Rule

TASK = mc.TASK_ID

# S2 depends on S1, S3 on S2 (so on S1 too); S1 and S3 share a cluster. Horizon 6 hours:
# 5 x 6 x 5 = 150 plans, every one enumerable.
DATA = MaintData(
    services=(
        Service(id="S1", name="Database", users=30, cluster="c1", windows=(Window(start=0, end=4),)),
        Service(id="S2", name="App", users=20, depends_on=("S1",), windows=(Window(start=0, end=2), Window(start=3, end=6))),
        Service(id="S3", name="Web", users=50, depends_on=("S2",), cluster="c1", windows=(Window(start=1, end=6),)),
    ),
    tasks=(
        MTask(id="T1", name="upgrade database", service="S1", duration=2, staff=2, risk=3, skill="networking"),
        MTask(id="T2", name="patch app", service="S2", duration=1, staff=1, risk=5, skill="networking"),
        MTask(id="T3", name="reboot web", service="S3", duration=2, staff=1, risk=1),
    ),
    horizon=6,
    engineers=2,
)  # fmt: skip
SPEC = GenerationSpec(family="project", task=TASK, subtask="web_patch_night", seed=0, size="tiny")
PARAMS: dict[str, Params] = {
    "windows": NoParams(),
    "engineer_capacity": NoParams(),
    "cluster_exclusive": NoParams(),
    "precedence": mc.Precedence(pairs=[("T1", "T3")]),
    "deadline": mc.Deadline(tasks=["T2", "T3"], by=4),
    "change_freeze": mc.Freeze(start=2, end=3),
    "not_before": mc.NotBefore(task="T2", at=2),
    "rollback_slot": mc.Rollback(tasks=["T2"], hours=2),
    "not_together": mc.NotTogether(pairs=[("T1", "T2")]),
    "max_parallel": mc.MaxParallel(max=1),
    "specialists": mc.Specialists(skill="networking", max=1),
    "service_uptime": mc.Uptime(service="S3", start=1, end=3),
    "downtime_budget": mc.DowntimeBudget(service="S3", hours=3),
    "busy_run": mc.BusyRun(hours=2),
    "overrun_buffer": mc.OverrunBuffer(hours=1, clusters=True),
}


def plans(d: MaintData = DATA) -> list[dict[str, int]]:
    ids = [t.id for t in d.tasks]
    return [dict(zip(ids, c)) for c in itertools.product(*[range(d.horizon - t.duration + 1) for t in d.tasks])]


# -- the checker on hand-built plans -------------------------------------------------------
def test_downtime_counts_each_hour_a_service_or_any_provider_is_down_once():
    plan = {"T1": 0, "T2": 1, "T3": 3}  # T1 runs 0-1, T2 runs 1, T3 runs 3-4
    assert mc.down_hours(DATA, plan, "S1") == {0, 1}
    assert mc.down_hours(DATA, plan, "S2") == {0, 1}  # its own hour 1 overlaps the database's
    assert mc.down_hours(DATA, plan, "S3") == {0, 1, 3, 4}  # through S2 on S1 as well
    assert mc.downtime(DATA, plan) == 30 * 2 + 20 * 2 + 50 * 4
    assert mc.exposure(DATA, plan) == 3 * 2 + 5 * 2 + 1 * 5
    assert mc.verification(DATA, plan)["service_down"] == {"S1": 2, "S2": 2, "S3": 4}


def test_rollback_hours_keep_the_service_free_after_the_risky_task_and_end_by_the_horizon():
    d = mc.replaced(DATA, tasks=(*DATA.tasks, MTask(id="T4", name="reboot app", service="S2", duration=1)))
    check = mc.CHECKS["rollback_slot"]
    p = mc.Rollback(tasks=["T2"], hours=2)
    assert check(d, {"T1": 0, "T2": 1, "T3": 2, "T4": 4}, p)[0]  # rollback hours 2-3, T4 at 4
    assert not check(d, {"T1": 0, "T2": 1, "T3": 2, "T4": 3}, p)[0]  # T4 in the rollback hours
    assert check(d, {"T1": 0, "T2": 3, "T3": 2, "T4": 2}, p)[0]  # T4 ends as T2 starts
    assert not check(d, {"T1": 0, "T2": 4, "T3": 2, "T4": 0}, p)[0]  # 5 + 2 > horizon 6


def test_the_fatigue_rule_reads_the_longest_run_of_busy_hours():
    check = mc.CHECKS["busy_run"]
    plan = {"T1": 0, "T2": 3, "T3": 4}  # busy in hours 0-1 and 3-5: runs of 2 and 3
    assert mc.longest_run(set(mc.load(DATA, plan))) == (3, 3)
    assert check(DATA, plan, mc.BusyRun(hours=3))[0]
    assert not check(DATA, plan, mc.BusyRun(hours=2))[0]


def test_business_hours_count_the_providers_tasks():
    check = mc.CHECKS["service_uptime"]
    p = mc.Uptime(service="S3", start=1, end=3)
    assert not check(DATA, {"T1": 0, "T2": 4, "T3": 4}, p)[0]  # the database (a provider) is down in hour 1
    assert check(DATA, {"T1": 3, "T2": 5, "T3": 3}, p)[0]


# -- model against checker -------------------------------------------------------------
def _model_accepts(kind: str, plan: dict[str, int]) -> bool:
    rule = make_rule(kind, "basic", PARAMS[kind], "R1")
    sm = mm.build(Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=[rule], objective=[]))
    for var, t in zip(sm.answer_ints, DATA.tasks, strict=True):
        sm.model.add(var == plan[t.id])
    sm.model.add(sm.rule_literals["R1"] == 1)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    return solver.solve(sm.model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


@pytest.mark.parametrize("kind", sorted(PARAMS))
def test_each_rule_kind_encoder_accepts_exactly_the_plans_its_check_accepts(kind: str):
    accepted = rejected = 0
    for plan in plans():
        want = mc.CHECKS[kind](DATA, plan, PARAMS[kind])[0]
        assert _model_accepts(kind, plan) == want, (kind, plan)
        accepted += want
        rejected += not want
    assert accepted and rejected  # the hand-built parameters bind


def test_the_model_figures_equal_the_checker_figures_on_every_plan():
    terms = [ObjectiveTerm(id=k, kind=k) for k in ("downtime", "finish", "exposure")]
    for plan in plans()[::5]:
        sm = mm.build(Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=[], objective=terms))
        for var, t in zip(sm.answer_ints, DATA.tasks, strict=True):
            sm.model.add(var == plan[t.id])
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        assert solver.solve(sm.model) == cp_model.OPTIMAL
        got = {tid: int(solver.value(expr)) for tid, expr, _ in sm.objective_terms}
        want = {
            "downtime": mc.downtime(DATA, plan),
            "finish": mc.finish(DATA, plan),
            "exposure": mc.exposure(DATA, plan),
        }
        assert got == want, plan


# -- subtasks ----------------------------------------------------------------------------
@cache
def instance(subtask: str, size: str = "small") -> Instance:
    """The first feasible instance of the subtask (seed 3)."""
    for index in range(8):
        out = build_instance(3, index, GenerateOptions(task=TASK, subtask=subtask, size=size))
        if out.instance is not None and out.instance.certificate.status == "optimal":
            return out.instance
    raise AssertionError(f"no feasible {subtask} instance")


@pytest.mark.parametrize(("subtask", "kinds", "primary"), [
    ("web_patch_night", {"cluster_exclusive"}, "downtime"),
    ("db_migration", {"precedence", "service_uptime"}, "downtime"),
    ("rack_move", {"max_parallel"}, "finish"),
    ("k8s_upgrade", {"cluster_exclusive", "busy_run"}, "downtime"),
    ("bank_freeze", {"change_freeze", "rollback_slot"}, "downtime"),
])  # fmt: skip
def test_each_subtask_carries_its_structure_and_objective(subtask: str, kinds: set[str], primary: str):
    inst = instance(subtask)
    assert kinds <= {r.kind for r in inst.rules}
    assert [t.kind for t in inst.objective] == [primary, "exposure"]
    assert grade(inst, json.dumps(inst.reference)).all_pass
    if "cluster_exclusive" in kinds:
        assert MaintData.model_validate(inst.data).clusters


def test_the_prompt_states_every_task_service_and_window_with_units():
    inst = instance("db_migration", "default")
    d = MaintData.model_validate(inst.data)
    for t in d.tasks:
        assert f"- {t.id}: {t.name} ({t.service}); hours: {t.duration}; engineers needed: {t.staff}" in inst.prompt
        assert f"risk points: {t.risk}" in inst.prompt
    for s in d.services:
        assert f"{s.users} users" in inst.prompt
        for w in s.windows:
            assert f"from hour {w.start} to hour {w.end}" in inst.prompt
    assert f"end by hour {d.horizon}" in inst.prompt and f"{d.engineers} engineers are on call" in inst.prompt


# -- grading bad answers and bad data ----------------------------------------------------------
def _format_reason(inst: Instance, rows: list[Any]) -> str:
    g = grade(inst, json.dumps({**inst.reference, "schedule": rows}))
    item = next(i for i in g.items if i.id == "C1")
    assert not item.passed and not g.all_pass
    return item.reason


def test_an_answer_naming_an_unknown_task_fails_the_format_item():
    inst = instance("web_patch_night")
    rows = [*inst.reference["schedule"][:-1], {"task": "T99", "start": 0}]
    assert "names unknown task 'T99'" in _format_reason(inst, rows)


@pytest.mark.parametrize("start", ["3", 2.5, None, True, -1, 10**6])
def test_an_answer_with_a_start_that_is_not_an_hour_in_the_horizon_fails_the_format_item(start: Any):
    inst = instance("web_patch_night")
    rows = [dict(r) for r in inst.reference["schedule"]]
    rows[0]["start"] = start
    assert rows[0]["task"] in _format_reason(inst, rows)


def test_an_answer_repeating_or_missing_a_task_fails_the_format_item():
    inst = instance("web_patch_night")
    rows = inst.reference["schedule"]
    assert "appears more than once" in _format_reason(inst, [*rows, rows[0]])
    assert "missing from the schedule" in _format_reason(inst, rows[1:])


@pytest.mark.parametrize(("change", "needle"), [
    (lambda d: {**d, "tasks": [{**d["tasks"][0], "service": "S9"}, *d["tasks"][1:]]}, "names unknown service 'S9'"),
    (lambda d: {**d, "services": [{**d["services"][0], "depends_on": ["S3"]}, *d["services"][1:]]}, "listed after it"),
    (lambda d: {**d, "horizon": 3}, "after the horizon 3"),
    (lambda d: {**d, "tasks": [{**d["tasks"][0], "staff": 5}, *d["tasks"][1:]]}, "only 2 are on call"),
    (lambda d: {**d, "tasks": [d["tasks"][0], d["tasks"][0]]}, "task ids are not unique"),
])  # fmt: skip
def test_malformed_instance_data_is_a_clear_error(change: Any, needle: str):
    with pytest.raises(ValidationError, match=needle):
        MaintData.model_validate(change(DATA.model_dump(mode="json")))


# -- near misses: break_rule for every kind ----------------------------------------------
def _kinds() -> list[str]:
    mechanisms = set(HARD_KINDS) | set(REPORTING_KINDS)
    return sorted({c.id for c in find_task(TASK).pool} - mechanisms)


@pytest.mark.parametrize("kind", [*_kinds(), "overrun_buffer"])
def test_every_rule_kind_has_a_one_rule_near_miss(kind: str):
    mechanism = "robustness_design" if kind == "overrun_buffer" else kind
    counts = {"basic": 1, "medium": 1, "hard": 1 if mechanism == "robustness_design" else 0}
    for index in range(12):
        options = GenerateOptions(task=TASK, size="small", include=[mechanism], counts=counts)
        inst = build_instance(5, index, options).instance
        if inst is None or inst.certificate.status != "optimal" or kind not in {r.kind for r in inst.rules}:
            continue
        found = dict(checker("project").near_misses(inst, random.Random(0)))
        if f"break_rule:{kind}" in found:
            g = grade(inst, json.dumps(found[f"break_rule:{kind}"]))
            kind_of = {r.id: r.kind for r in inst.rules}
            rules = {it.id: it.rule for it in inst.checklist}
            failed = [rules[i.id] for i in g.items if not i.passed and rules[i.id] in kind_of]
            assert [kind_of[r] for r in failed] == [kind]
            return
    pytest.fail(f"no near miss breaking {kind} alone")


# -- wording -----------------------------------------------------------------------------
def say(kind: str, **params: Any) -> str:
    return R.render_rule(Rule(id="R1", kind=kind, tier="basic", params=params), DATA.model_dump(mode="json"), TASK)


def test_every_rule_sentence_states_its_numbers_in_hours():
    said = {kind: say(kind, **p.dump()) for kind, p in PARAMS.items()}
    assert set(said) == set(mc.RULE_PARAMS)
    assert "the 2 engineers on call" in said["engineer_capacity"]
    assert "T3 starts no earlier than the hour T1 ends" in said["precedence"]
    assert "T2 and T3 must each end by hour 4" in said["deadline"]
    assert "from hour 2 to hour 3" in said["change_freeze"] and "start at hour 3" in said["change_freeze"]
    assert "T2 starts at hour 2 or later" in said["not_before"]
    assert "2 hours are kept" in said["rollback_slot"] and "by hour 6" in said["rollback_slot"]
    assert "T1 with T2" in said["not_together"]
    assert "at most 1 task run" in said["max_parallel"]
    assert "1 specialist is on call" in said["specialists"] and "at most 1 such task run" in said["specialists"]
    assert "hours 1 to 2" in said["service_uptime"]
    assert "at most 3 hours in total" in said["downtime_budget"]
    assert "at most 2 hours in a row" in said["busy_run"] and "any 3 consecutive hours" in said["busy_run"]
    assert "overrunning by 1 hour" in said["overrun_buffer"] and "cluster" in said["overrun_buffer"]
