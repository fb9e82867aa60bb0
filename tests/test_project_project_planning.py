"""Project Planning (RCPSP): each rule kind's check on hand-built plans, the checker held
against the CP-SAT encoder on every plan of a small project, the subtasks' structure,
answers naming unknown activities, malformed data, and the PSPLIB importer: every stored
j30 file certified at its published optimal makespan, and malformed files refused with
the line at fault."""

from __future__ import annotations

import csv
import itertools
import json
from functools import cache
from pathlib import Path

import pytest

from pbsolve.checkers.project import activities as pj
from pbsolve.checkers.project.activities import CHECKS, Activity, Link, Milestone, Plan, ProjectData, Resource
from pbsolve.family import Draft, checker
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from pbsolve.models.project import activities as model
from pbsolve.params import NoParams, Params, make_rule, make_term
from pbsolve.schema import GenerationSpec, Instance
from pbsolve.sources import SourceError, SourceFile
from tests.instances import subtask_instances
from tests.model_enumeration import enumerate_solutions, objective_figures, with_rule_on
from tests.test_cli import run

T = pj.TASK_ID
SPEC = GenerationSpec(family="project", task=T, subtask="construction", seed=0, size="tiny")
PSPLIB = Path(__file__).parent / "data" / "psplib-j30"
NO_RULES = {"basic": 0, "medium": 0, "hard": 0, "stateful": 0}

# Three activities, two resources, horizon 6: 6 x 5 x 4 = 120 plans, every one enumerable.
DATA = ProjectData(
    horizon=6,
    resources=(Resource(id="R1", name="crew", capacity=3), Resource(id="R2", name="crane", capacity=1)),
    activities=(
        Activity(id="A1", name="Dig", duration=1, demand={"R1": 2}, cost=30, weight=3),
        Activity(id="A2", name="Pour", duration=2, demand={"R1": 2, "R2": 1}, release=1, cost=50, weight=2),
        Activity(id="A3", name="Lift", duration=3, demand={"R2": 1}, cost=20, weight=5),
    ),
    links=(Link(before="A1", after="A2", type="FS", lag=1), Link(before="A1", after="A3", type="SS", lag=1)),
    milestones=(Milestone(id="M1", name="Shell", activities=("A2",), due=4, weight=2),),
)


def plan(**starts: int) -> Plan:
    return Plan({"A1": 0, "A2": 4, "A3": 1} | starts)


# A1 on day 0, A3 (the crane) on days 1-3, A2 on days 4-5: every base rule holds
OK_PLAN = plan()


def verdict(kind: str, p: Plan, params: Params | None = None, data: ProjectData = DATA) -> tuple[bool, str]:
    return CHECKS[kind](data, p, params or NoParams())


# (kind, params, a plan that keeps it, a plan that breaks it, words of the reason)
CASES = [
    ("precedence", None, OK_PLAN, plan(A2=1), "A2 starts on day 1, before day 2 (A1 finishes + 1)"),
    ("precedence", None, OK_PLAN, plan(A3=0), "A3 starts on day 0, before day 1 (A1 starts + 1)"),
    ("resource_capacity", None, OK_PLAN, plan(A2=2), "R2 is used 2 units on day 2 (capacity 1)"),
    ("release", None, OK_PLAN, plan(A2=0), "before its release day 1"),
    (
        "deadline",
        pj.Deadline(activities=["A2"], day=5),
        plan(A2=3),
        OK_PLAN,
        "A2 finishes at day 6, after its deadline 5",
    ),
    ("deadline", pj.Deadline(activities=["A3"], day=4), OK_PLAN, plan(A3=2), "A3 finishes at day 5"),
    ("time_window", pj.TimeWindow(activity="A3", earliest=1, latest=2), OK_PLAN, plan(A3=3), "outside days 1-2"),
    (
        "resource_outage",
        pj.ResourceOutage(resource="R1", first=4, last=5, units=2),
        plan(A2=2, A3=3),
        OK_PLAN,
        "R1 is used 2 units on day 4 of its outage (at most 1)",
    ),
    ("daily_budget", pj.DailyBudget(max=50), OK_PLAN, plan(A1=1, A3=2, A2=3), "day 3 cost 70 (budget 50 per day)"),
    ("max_lag", pj.MaxLag(before="A1", after="A2", lag=2), plan(A2=3), OK_PLAN, "A2 starts on day 4, after day 3"),
    ("no_overlap", pj.NoOverlap(pairs=[("A1", "A3")]), OK_PLAN, plan(A1=1, A3=0), "run on a common day"),
    ("max_parallel", pj.MaxParallel(max=1), OK_PLAN, plan(A2=2), "2 activities run on day 2 (at most 1)"),
    (
        "synchronised_start",
        pj.SynchronisedStart(activities=("A1", "A3"), max_gap=1),
        OK_PLAN,
        plan(A3=2),
        "2 days apart",
    ),
    ("work_to_date", pj.WorkToDate(resource="R1", day=3, max=2), OK_PLAN, plan(A2=2), "4 unit-days before day 3"),
    ("progress_by", pj.ProgressBy(day=2, min=2), OK_PLAN, plan(A1=1, A3=2), "1 activity-days are done before day 2"),
    ("spare_unit", pj.SpareUnit(resources=["R1"]), OK_PLAN, plan(A1=2, A2=2), "4 units in use would exceed 2"),
    ("not_before", pj.NotBefore(activity="A3", day=2), plan(A3=2), OK_PLAN, "A3 starts on day 1, before day 2"),
]


@pytest.mark.parametrize(("kind", "params", "keeps", "breaks", "why"), CASES, ids=[c[0] for c in CASES])
def test_each_check_keeps_a_good_plan_and_names_why_a_bad_one_fails(kind, params, keeps, breaks, why):
    ok, reason = verdict(kind, keeps, params)
    assert ok, reason
    ok, reason = verdict(kind, breaks, params)
    assert not ok
    assert why in reason


def test_every_checked_kind_has_a_case():
    assert {c[0] for c in CASES} == set(CHECKS)


def test_a_zero_length_activity_overlaps_nothing():
    data = pj.replaced(DATA, activities=(*DATA.activities[:2], DATA.activities[2].model_copy(update={"duration": 0})))
    assert verdict("no_overlap", plan(A3=2, A2=2), pj.NoOverlap(pairs=[("A2", "A3")]), data)[0]


# -- the checker against the CP-SAT encoder, plan by plan --------------------------------
RULES = [
    make_rule("precedence", "basic", NoParams(), "R1"),
    make_rule("resource_capacity", "basic", NoParams(), "R2"),
    make_rule("release", "basic", NoParams(), "R3"),
    make_rule("deadline", "basic", pj.Deadline(activities=["A2", "A3"], day=5), "R4"),
    make_rule("time_window", "basic", pj.TimeWindow(activity="A3", earliest=1, latest=3), "R5"),
    make_rule("resource_outage", "basic", pj.ResourceOutage(resource="R1", first=2, last=3, units=2), "R6"),
    make_rule("daily_budget", "basic", pj.DailyBudget(max=70), "R7"),
    make_rule("max_lag", "medium", pj.MaxLag(before="A1", after="A2", lag=2), "R8"),
    make_rule("no_overlap", "medium", pj.NoOverlap(pairs=[("A1", "A3")]), "R9"),
    make_rule("max_parallel", "medium", pj.MaxParallel(max=2), "R10"),
    make_rule("synchronised_start", "medium", pj.SynchronisedStart(activities=("A2", "A3"), max_gap=2), "R11"),
    make_rule("work_to_date", "stateful", pj.WorkToDate(resource="R1", day=3, max=3), "R12"),
    make_rule("progress_by", "stateful", pj.ProgressBy(day=3, min=3), "R13"),
    make_rule("spare_unit", "hard", pj.SpareUnit(resources=["R1"]), "R14"),
    make_rule("not_before", "hard", pj.NotBefore(activity="A1", day=1), "R15"),
]
OBJECTIVE = [
    make_term("makespan", "makespan"),
    make_term("milestone_lateness", "milestone_lateness"),
    make_term("start_score", "start_score"),
    make_term("changes", "changes", pj.CurrentStarts(existing={"A1": 0, "A2": 2, "A3": 1})),
]


def all_plans(d: ProjectData = DATA) -> list[Plan]:
    ranges = [range(d.horizon - a.duration + 1) for a in d.activities]
    return [Plan(dict(zip([a.id for a in d.activities], c))) for c in itertools.product(*ranges)]


@cache
def model_accepts(rule_id: str) -> frozenset[tuple[int, ...]]:
    """Every plan (start tuple) the CP-SAT model accepts with only this rule on: enumerated
    by the solver itself."""
    rule = next(r for r in RULES if r.id == rule_id)
    draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=[rule], objective=[])
    sm = with_rule_on(model.build, draft, rule_id)
    return enumerate_solutions(sm)


@pytest.mark.parametrize("rule", RULES, ids=[r.kind for r in RULES])
def test_model_and_checker_accept_the_same_plans_rule_by_rule(rule):
    tc = checker("project").task_checker(T)
    accepted = set()
    for p in all_plans():
        verdicts, _ = tc.evaluate(DATA, [rule], [], p)
        if verdicts[rule.id][0]:
            accepted.add(tuple(p.start[a.id] for a in DATA.activities))
    assert accepted == set(model_accepts(rule.id))
    assert 0 < len(accepted) < len(all_plans())  # each rule decides something on this project


def test_model_and_checker_compute_the_same_objective_figures():
    tc = checker("project").task_checker(T)
    draft = Draft(spec=SPEC, data=DATA.model_dump(mode="json"), rules=[], objective=OBJECTIVE)
    for p in all_plans()[::7]:
        _, values = tc.evaluate(DATA, [], OBJECTIVE, p)
        assert values == objective_figures(model.build(draft), [p.start[a.id] for a in DATA.activities])


# -- answers ------------------------------------------------------------------------------
@cache
def default_instance() -> Instance:
    return subtask_instances(T, "construction", n=1, size="default")[0]


def answer_with(rows: list[dict]) -> str:
    ref = dict(default_instance().reference)
    return json.dumps({**ref, "schedule": rows})


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda rows: [{**rows[0], "activity": "Z9"}, *rows[1:]], "unknown activity 'Z9'"),
        (lambda rows: rows[1:], "missing from the schedule"),
        (lambda rows: [*rows, rows[0]], "appears more than once"),
        (lambda rows: [{**rows[0], "start": "3"}, *rows[1:]], "whole-number 'start' day"),
        (lambda rows: [{**rows[0], "start": True}, *rows[1:]], "whole-number 'start' day"),
        (lambda rows: [{**rows[0], "start": -1}, *rows[1:]], "it must start at 0 or later and end by"),
        (lambda rows: [{**rows[0], "start": 10_000}, *rows[1:]], "it must start at 0 or later and end by"),
    ],
)
def test_a_malformed_schedule_fails_the_format_item_with_a_reason(change, why):
    inst = default_instance()
    g = grade(inst, answer_with(change(list(inst.reference["schedule"]))))
    fmt = next(i for i in g.items if i.id == "C1")
    assert not fmt.passed and why in fmt.reason
    assert not g.all_pass


def test_the_reference_passes_and_activity_names_are_read_case_insensitively():
    inst = default_instance()
    assert grade(inst, json.dumps(inst.reference)).all_pass
    rows = [{**r, "activity": r["activity"].lower()} for r in inst.reference["schedule"]]
    assert grade(inst, answer_with(rows)).all_pass


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"links": [{"before": "A1", "after": "A9"}]}, "unknown activity"),
        ({"links": [{"before": "A1", "after": "A2"}, {"before": "A2", "after": "A1"}]}, "cycle"),
        ({"horizon": 2}, "cannot finish within the horizon"),
        ({"activities": [{"id": "A1", "name": "x", "duration": 1, "demand": {"R7": 1}}]}, "unknown resource R7"),
        (
            {"resources": [{"id": "R1", "name": "a", "capacity": 1}, {"id": "R1", "name": "b", "capacity": 1}]},
            "repeated resource id",
        ),
    ],
)
def test_malformed_project_data_is_a_clear_error(change, why):
    with pytest.raises(ValueError, match=why):
        ProjectData.model_validate({**DATA.model_dump(mode="json"), **change})


# -- subtasks --------------------------------------------------------------------------
@pytest.mark.parametrize("subtask", [s.id for s in model.TASK.subtasks])
def test_each_subtask_carries_its_structure(subtask):
    import random

    spec = GenerationSpec(family="project", task=T, subtask=subtask, seed=3, size="default")
    d = model.draft(spec, random.Random(3))
    data = ProjectData.model_validate(d.data)
    kinds = {r.kind for r in d.rules}
    assert set(model.FORCED[subtask]) <= kinds
    assert {"precedence", "resource_capacity"} <= kinds
    assert bool(data.milestones) == (subtask in model.MILESTONES)
    assert d.objective[0].kind == "makespan"
    if subtask not in model.START_LINKS:
        assert all(lk.type == "FS" for lk in data.links)
    if subtask == "plain_rcpsp":
        assert all(lk.lag == 0 for lk in data.links)


def test_weights_of_the_start_score_are_distinct_in_sampled_projects():
    import random

    for seed in range(5):
        spec = GenerationSpec(family="project", task=T, subtask="event_buildup", seed=seed, size="default")
        data = ProjectData.model_validate(model.draft(spec, random.Random(seed)).data)
        weights = [a.weight for a in data.activities]
        assert len(set(weights)) == len(weights)


# -- PSPLIB import ---------------------------------------------------------------------
def optima() -> dict[str, int]:
    with open(PSPLIB / "optimum.csv") as f:
        return {r["problem"]: int(r["optimum"]) for r in csv.DictReader(f)}


@pytest.mark.parametrize(("name", "published"), sorted(optima().items()))
def test_each_psplib_j30_file_is_certified_at_its_published_optimal_makespan(name, published):
    """Built as `pbsolve generate --task project_planning --from FILE --rules none` does; the
    import time limit (IMPORT_TIME) is above the generator's default, and the plan count
    stops at 2 (the files' optima are never unique under the makespan alone). Measured on
    the shared 2-core machine: 37 files under 2 s each; j3013_1 14 s, j309_2 32 s and
    j3013_2 81 s (group j3013 is PSPLIB's hard one)."""
    options = GenerateOptions(
        task=T,
        source=SourceFile.read(PSPLIB / name),
        counts=NO_RULES,
        deterministic_time=model.IMPORT_TIME,
        plan_count_cap=2,
    )
    out = build_instance(0, 0, options)
    assert out.instance is not None, out.reasons()
    cert = out.instance.certificate
    assert cert.status == "optimal"
    assert cert.objective == {"makespan": published}
    assert [r.kind for r in out.instance.rules] == ["precedence", "resource_capacity"]


def test_an_imported_file_keeps_every_job_link_and_capacity():
    imported = model.read_source(SourceFile.read(PSPLIB / "j301_1.sm"))
    d = ProjectData.model_validate(imported.data)
    assert imported.subtask == "plain_rcpsp"
    assert [a.id for a in d.activities] == [f"J{j}" for j in range(2, 32)]
    assert d.horizon == 158 and [r.capacity for r in d.resources] == [12, 13, 4, 12]
    assert d.activity_by_id["J2"].duration == 8 and d.activity_by_id["J2"].demand == {"K1": 4}
    assert {(lk.before, lk.after) for lk in d.links if lk.before == "J2"} == {
        ("J2", "J6"),
        ("J2", "J11"),
        ("J2", "J15"),
    }


SM = (PSPLIB / "j301_1.sm").read_text()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("\n".join(SM.splitlines()[:40]), "truncated"),
        (
            SM.replace("   2        1          3           6  11  15", "   2        1          4           6  11  15"),
            "announces 4 successors and lists 3",
        ),
        (
            SM.replace("   2        1          3           6  11  15", "   2        1          3           6  xx  15"),
            "whole numbers expected",
        ),
        (
            SM.replace("   2        1          3           6  11  15", "   2        3          3           6  11  15"),
            "only single-mode",
        ),
        (SM.replace(":  0   N", ":  2   N"), "only renewable"),
        (SM.replace("RESOURCEAVAILABILITIES", "AVAILABILITIES"), "no 'RESOURCEAVAILABILITIES' section"),
        ("capacity 2\ntables T1 T2\nAnn 1 2\n", "not a PSPLIB .sm file"),
        (SM.replace("jobs (incl. supersource/sink ):  32", "jobs (incl. supersource/sink ):  33"), "rows expected"),
    ],
    ids=[
        "truncated",
        "wrong-count",
        "non-number",
        "multi-mode",
        "nonrenewable",
        "no-section",
        "other-format",
        "job-count",
    ],
)
def test_a_malformed_psplib_file_is_refused_naming_the_file_and_line(text, why):
    with pytest.raises(SourceError, match=r"bad\.sm") as exc:
        model.read_source(SourceFile(name="bad.sm", text=text))
    assert why in str(exc.value)


def test_the_cli_generates_a_psplib_files_problem(tmp_path: Path):
    out = tmp_path / "i.jsonl"
    src = PSPLIB / "j302_1.sm"
    result = run("generate", "--task", T, "--from", src, "--rules", "none", "--n", "1", "--out", out)
    assert result.exit_code == 0, result.output
    inst = Instance.model_validate_json(out.read_text().splitlines()[0])
    assert inst.provenance.source is not None and inst.provenance.source.name == "j302_1.sm"
    assert inst.certificate.objective == {"makespan": optima()["j302_1.sm"]}
    assert "J2" in inst.prompt and "the makespan" in inst.prompt
