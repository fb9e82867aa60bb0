"""Volunteer Scheduling: what each rule kind means, the subtasks' structure, the stateful
kinds, the solver model against the checker, the baseline and bad answers."""

from __future__ import annotations

import json
import random

import pytest
from ortools.sat.python import cp_model

from pbsolve.checkers.workforce.volunteer import TASK as CHECKER
from pbsolve.checkers.workforce.volunteer import (
    Buffer,
    LoadBalance,
    LoadCap,
    MinorHours,
    MinShifts,
    Plan,
    RestAfterRun,
    VolunteerAbsent,
    VolunteerData,
)
from pbsolve.family import Draft
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from pbsolve.models.workforce import volunteer as model
from pbsolve.params import NoParams, Params, make_rule
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule

TASK = "volunteer_scheduling"

# Three shifts (Sat day is a peak, Sat late is late, Sun day a peak on the next day), two
# posts (Aid needs first aid and the triage training), four volunteers.
DATA = VolunteerData.model_validate({
    "shifts": [
        {"id": "Sat day", "day": 0, "peak": True},
        {"id": "Sat late", "day": 0, "late": True},
        {"id": "Sun day", "day": 1, "peak": True},
    ],
    "posts": [
        {"id": "Gate", "need": 1, "peak_need": 2},
        {"id": "Aid", "skill": "first aid", "training": "triage", "need": 1, "peak_need": 1},
    ],
    "volunteers": [
        {"id": "Ana", "skills": ["first aid"], "trained": ["triage"], "leader": True, "max_shifts": 3,
         "prefs": {"Gate": 2, "Aid": 0}},
        {"id": "Ben", "minor": True, "max_shifts": 2, "unavailable": ["Sun day"], "prefs": {"Gate": 0, "Aid": 1}},
        {"id": "Cy", "skills": ["first aid"], "max_shifts": 2, "prefs": {"Gate": 1, "Aid": 0}},
        {"id": "Dee", "leader": True, "max_shifts": 2, "prefs": {"Gate": 0, "Aid": 3}},
    ],
})  # fmt: skip
# A roster keeping every rule below: Aid always Ana (trained), Gate at its peak need.
GOOD = Plan({
    ("Ana", "Sat day"): "Aid", ("Ben", "Sat day"): "Gate", ("Dee", "Sat day"): "Gate",
    ("Cy", "Sat late"): "Gate", ("Ana", "Sat late"): "Aid",
    ("Dee", "Sun day"): "Gate", ("Cy", "Sun day"): "Gate", ("Ana", "Sun day"): "Aid",
})  # fmt: skip


def _moved(plan: Plan, **changes: str | None) -> Plan:
    """The plan with (volunteer, shift) cells changed: 'Ana__Sat_day' -> post or None (off)."""
    assign = dict(plan.assign)
    for key, post in changes.items():
        v, s = key.split("__")
        cell = (v, s.replace("_", " "))
        if post is None:
            assign.pop(cell, None)
        else:
            assign[cell] = post
    return Plan(assign, plan.standby)


def _verdict(kind: str, params: Params, plan: Plan) -> tuple[bool, str]:
    rule = make_rule(kind, "basic", params, "R1")
    verdicts, _ = CHECKER.evaluate(DATA, [rule], [], plan)
    return verdicts["R1"]


# (kind, params, a plan that breaks it, words of the reason)
BREAKS = [
    ("skill", NoParams(), _moved(GOOD, Dee__Sat_day="Aid"), "without the skill first aid"),
    ("training", NoParams(), _moved(GOOD, Ana__Sat_late=None, Cy__Sat_late="Aid"), "without the triage training"),
    ("coverage", NoParams(), _moved(GOOD, Cy__Sat_late=None), "Gate has 0 volunteers in Sat late"),
    ("peak_cover", NoParams(), _moved(GOOD, Cy__Sun_day=None), "peak shift Sun day"),
    ("availability", NoParams(), _moved(GOOD, Ben__Sun_day="Gate"), "Ben is unavailable in Sun day"),
    ("shift_cap", NoParams(), _moved(GOOD, Cy__Sat_day="Gate"), "Cy works 3 shifts (at most 2)"),
    ("minors", MinorHours(max_per_day=1), _moved(GOOD, Ben__Sat_late="Gate"), "minor"),
    ("minors", MinorHours(max_per_day=2), _moved(GOOD, Ben__Sat_late="Gate"), "late shift Sat late"),
    (
        "leader_on_site",
        NoParams(),
        _moved(GOOD, Ana__Sat_late=None, Cy__Sat_late="Aid"),
        "no team leader works in Sat late",
    ),
    ("load_cap", LoadCap(volunteers=["Ana"], max=2), GOOD, "Ana works 3 shifts (at most 2)"),
    ("volunteer_absent", VolunteerAbsent(volunteer="Dee", shifts=["Sun day"]), GOOD, "Dee is absent in Sun day"),
    ("load_balance", LoadBalance(max=1), _moved(GOOD, Ben__Sat_day=None), "more than 1 apart"),
    ("rotation", NoParams(), GOOD, "Ana works Aid in both Sat day and Sat late"),
    ("min_shifts", MinShifts(volunteers=["Ben"], min=2), GOOD, "Ben works 1 shifts (at least 2)"),
    ("buffer", Buffer(volunteers=["Ana"]), GOOD, "Ana works the consecutive shifts Sat day and Sat late"),
    ("rest_after_run", RestAfterRun(run=2), GOOD, "Ana works Sun day right after 2 shifts in a row"),
    ("late_cooldown", NoParams(), GOOD, "right after the late shift Sat late"),
]
# (kind, params, a plan that keeps it)
KEEPS = [
    ("skill", NoParams(), GOOD),
    ("training", NoParams(), GOOD),
    ("coverage", NoParams(), GOOD),
    ("peak_cover", NoParams(), GOOD),
    ("availability", NoParams(), GOOD),
    ("shift_cap", NoParams(), GOOD),
    ("minors", MinorHours(max_per_day=1), GOOD),
    ("leader_on_site", NoParams(), GOOD),
    ("load_cap", LoadCap(volunteers=["Ana"], max=3), GOOD),
    ("volunteer_absent", VolunteerAbsent(volunteer="Ben", shifts=["Sun day"]), GOOD),
    ("load_balance", LoadBalance(max=2), GOOD),
    ("rotation", NoParams(), GOOD.__class__({**GOOD.assign, ("Ana", "Sat late"): "Gate", ("Cy", "Sat late"): "Aid"})),
    ("min_shifts", MinShifts(volunteers=["Ana"], min=3), GOOD),
    ("buffer", Buffer(volunteers=["Ben", "Dee"]), GOOD),
    ("rest_after_run", RestAfterRun(run=3), GOOD),
    ("late_cooldown", NoParams(), _moved(GOOD, Ana__Sat_late=None, Cy__Sat_late=None)),
]


@pytest.mark.parametrize(("kind", "params", "plan"), KEEPS, ids=[k for k, _, _ in KEEPS])
def test_each_rule_kind_accepts_a_roster_that_keeps_it(kind: str, params: Params, plan: Plan) -> None:
    ok, why = _verdict(kind, params, plan)
    assert ok, why


@pytest.mark.parametrize(
    ("kind", "params", "plan", "reason"), BREAKS, ids=[f"{k}-{i}" for i, (k, *_) in enumerate(BREAKS)]
)
def test_each_rule_kind_rejects_a_roster_that_breaks_it_with_the_reason(
    kind: str, params: Params, plan: Plan, reason: str
) -> None:
    ok, why = _verdict(kind, params, plan)
    assert not ok
    assert reason in why


def test_every_rule_kind_of_the_pool_has_a_break_and_a_keep_case() -> None:
    pool = {c.id for c in model.TASK.pool} & set(model.ENCODERS)
    assert pool | {"volunteer_absent"} <= {k for k, *_ in BREAKS} | {"standby"}
    assert pool <= {k for k, *_ in KEEPS}


def test_the_standby_must_be_free_available_and_able_to_step_in_at_every_staffed_post() -> None:
    rule = make_rule("standby", "hard", NoParams(), "R1")
    # Gate staffed on Saturday, Aid (first aid and triage) on Sunday
    roster = {
        ("Cy", "Sat day"): "Gate",
        ("Dee", "Sat day"): "Gate",
        ("Dee", "Sat late"): "Gate",
        ("Cy", "Sun day"): "Aid",
    }
    for standby, ok, words in [
        ({"Sat day": "Ana", "Sat late": "Cy", "Sun day": "Ana"}, True, "holds"),
        ({"Sat day": "Cy", "Sat late": "Cy", "Sun day": "Ana"}, False, "Cy already works Gate"),
        ({"Sat day": "Ana", "Sat late": "Ben", "Sun day": "Ana"}, False, "Ben is a minor"),
        ({"Sat day": "Ana", "Sat late": "Cy", "Sun day": "Ben"}, False, "Ben is unavailable"),
        ({"Sat day": "Ana", "Sat late": "Cy", "Sun day": "Dee"}, False, "Dee could not step in at Aid"),
    ]:
        verdicts, _ = CHECKER.evaluate(DATA, [rule], [], Plan(roster, standby))
        assert verdicts["R1"][0] is ok and words in verdicts["R1"][1], verdicts["R1"]


def test_the_rest_rule_counts_runs_across_days_and_resets_after_a_shift_off() -> None:
    run_two = RestAfterRun(run=2)
    assert not _verdict("rest_after_run", run_two, GOOD)[0]  # Ana: Sat day, Sat late, Sun day
    assert _verdict("rest_after_run", run_two, _moved(GOOD, Ana__Sat_late=None, Cy__Sat_late="Aid"))[0]
    assert _verdict("rest_after_run", RestAfterRun(run=3), GOOD)[0]


def test_the_late_cooldown_only_follows_late_shifts() -> None:
    only_day = _moved(GOOD, Ana__Sat_late=None, Cy__Sat_late=None)  # Ana works Sat day and Sun day only
    assert _verdict("late_cooldown", NoParams(), only_day)[0]
    assert not _verdict("late_cooldown", NoParams(), GOOD)[0]


def test_the_objective_figures_are_recomputed_from_the_roster() -> None:
    terms = [ObjectiveTerm(id=k, kind=k) for k in ("volunteer_shifts", "preference", "order_score")]
    _, values = CHECKER.evaluate(DATA, [], terms, GOOD)
    assert values["volunteer_shifts"] == 8
    assert values["preference"] == 0 + 0 + 0 + 1 + 0 + 0 + 1 + 0
    # order score: t * (10 k + j)^2; Ana k=1, Ben 2, Cy 3, Dee 4; Gate j=1, Aid 2
    sat_day = 12**2 + 21**2 + 41**2
    sat_late = 2 * (31**2 + 12**2)
    sun_day = 3 * (41**2 + 31**2 + 12**2)
    assert values["order_score"] == sat_day + sat_late + sun_day


# -- the solver model against the checker ------------------------------------------------
def _spec() -> GenerationSpec:
    return GenerationSpec(family="workforce", task=TASK, subtask="music_festival", seed=0, size="tiny")


def _model_accepts(rules: list[Rule], plan: Plan, rule_id: str) -> bool:
    sm = model.build(Draft(spec=_spec(), data=DATA.model_dump(mode="json"), rules=rules, objective=[]))
    tm_values = {f"x[{v},{p},{s}]": 1 for (v, s), p in plan.assign.items()}
    tm_values |= {f"y[{v},{s}]": 1 for s, v in (plan.standby or {}).items()}
    for var in sm.answer_literals:
        sm.model.add(var == tm_values.get(var.name, 0))
    for rid, lit in sm.rule_literals.items():
        sm.model.add(lit == (1 if rid == rule_id else 0))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    return solver.solve(sm.model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def _random_plan(rng: random.Random, standby: bool) -> Plan:
    assign = {}
    for v in DATA.volunteers:
        for s in DATA.shifts:
            post = rng.choice([None, None, "Gate", "Aid"])
            if post is not None:
                assign[v.id, s.id] = post
    stand = {s.id: rng.choice(DATA.volunteers).id for s in DATA.shifts} if standby else None
    return Plan(assign, stand)


def test_encoder_and_check_agree_on_random_rosters_for_every_rule_kind() -> None:
    cases = [(k, p) for k, p, _, _ in BREAKS] + [("standby", NoParams())]
    rules = [make_rule(k, "basic", p, f"R{i}") for i, (k, p) in enumerate(cases, 1)]
    rng = random.Random(7)
    for n in range(40):
        plan = _random_plan(rng, standby=True)
        verdicts, _ = CHECKER.evaluate(DATA, rules, [], plan)
        for rule in rules[n % 3 :: 3]:
            assert _model_accepts(rules, plan, rule.id) == verdicts[rule.id][0], (rule.kind, rule.params, plan)


# -- subtasks, sizes, the baseline, bad answers -------------------------------------------
def _instances(subtask: str, n: int = 3, size: str = "small") -> list:
    made = []
    for index in range(12):
        out = build_instance(3, index, GenerateOptions(task=TASK, subtask=subtask, size=size))
        if out.instance is not None:
            made.append(out.instance)
        if len(made) == n:
            break
    return made


@pytest.mark.parametrize(
    ("subtask", "kinds"),
    [
        ("music_festival", {"peak_cover"}),
        ("marathon", {"peak_cover", "rotation"}),
        ("food_bank_shifts", {"minors"}),
        ("conference", {"leader_on_site"}),
        ("relief_hub", {"rest_after_run"}),
    ],
)
def test_each_subtask_always_carries_the_rules_of_its_structure(subtask: str, kinds: set[str]) -> None:
    made = _instances(subtask)
    assert made
    for inst in made:
        assert kinds <= {r.kind for r in inst.rules}, subtask


def test_subtasks_differ_in_their_posts_and_shifts() -> None:
    posts = {}
    for subtask in model.CONTEXTS:
        inst = _instances(subtask, n=1)[0]
        posts[subtask] = frozenset(p["id"] for p in inst.data["posts"])
    assert len(set(posts.values())) == len(posts)


def test_food_bank_minors_never_work_a_late_shift_in_the_reference() -> None:
    for inst in _instances("food_bank_shifts"):
        d = VolunteerData.model_validate(inst.data)
        late = {s.id for s in d.shifts if s.late}
        minors = {v.id for v in d.volunteers if v.minor}
        assert minors
        assert not any(r["volunteer"] in minors and r["shift"] in late for r in inst.reference["roster"])


def test_tiny_instances_are_small_enough_to_enumerate() -> None:
    s = model.SIZES.tiny
    cells = s.volunteers * s.days * s.shifts_per_day
    assert (s.posts + 1) ** cells * s.volunteers ** (s.days * s.shifts_per_day) <= 10_000


def test_the_baseline_passes_every_item_in_under_half_of_default_instances() -> None:
    made = []
    for index in range(40):
        out = build_instance(11, index, GenerateOptions(task=TASK, size="default"))
        if out.instance is not None and out.instance.certificate.status == "optimal":
            made.append(out.instance)
        if len(made) == 12:
            break
    assert len(made) >= 8
    from pbsolve.checkers.workforce import baseline_answer

    passed = [grade(inst, baseline_answer(inst)).all_pass for inst in made]
    assert sum(passed) < len(made) / 2


def _format_item(inst, g):
    fid = next(i.id for i in inst.checklist if i.rule == "format")
    return next(i for i in g.items if i.id == fid)


@pytest.mark.parametrize(
    ("row", "words"),
    [
        ({"volunteer": "Zed", "shift": None, "post": "Gate"}, "needs string fields"),
        ({"volunteer": "Zed", "shift": "SHIFT", "post": "Gate"}, "unknown volunteer 'Zed'"),
        ({"volunteer": "VOL", "shift": "Moonday", "post": "Gate"}, "unknown shift 'Moonday'"),
        ({"volunteer": "VOL", "shift": "SHIFT", "post": "Kitchen sink"}, "unknown post 'Kitchen sink'"),
        ({"volunteer": "VOL", "shift": "SHIFT", "post": "standby"}, "no rule asks for one"),
    ],
)
def test_an_answer_naming_unknown_things_fails_the_format_item_with_a_reason(row: dict, words: str) -> None:
    inst = next(i for i in _instances("music_festival", n=3) if not any(r.kind == "standby" for r in i.rules))
    ref = json.loads(json.dumps(inst.reference))
    first = ref["roster"][0]
    bad = {k: (first["volunteer"] if v == "VOL" else first["shift"] if v == "SHIFT" else v) for k, v in row.items()}
    ref["roster"] = [bad, *ref["roster"][1:]]
    g = grade(inst, json.dumps(ref))
    fmt = _format_item(inst, g)
    assert not fmt.passed and words in fmt.reason
    assert g.all_pass == 0


def test_a_volunteer_twice_in_one_shift_fails_the_format_item() -> None:
    inst = _instances("conference", n=1)[0]
    ref = json.loads(json.dumps(inst.reference))
    ref["roster"] = [*ref["roster"], dict(ref["roster"][0])]
    fmt = _format_item(inst, grade(inst, json.dumps(ref)))
    assert not fmt.passed and "more than once" in fmt.reason


def test_the_same_seed_gives_the_same_bytes() -> None:
    a = build_instance(5, 2, GenerateOptions(task=TASK, size="default")).instance
    b = build_instance(5, 2, GenerateOptions(task=TASK, size="default")).instance
    assert a is not None and b is not None
    assert a.model_dump_json() == b.model_dump_json()


def test_perturb_finds_rule_breaks_and_a_suboptimal_roster_whose_grades_confirm_their_kind() -> None:
    from pbsolve.audit.perturb import perturb

    made = _instances("music_festival", n=3) + _instances("relief_hub", n=3)
    report = perturb(made)
    assert report.rejected == {} and report.hook_errors == {} and not report.no_hook
    kinds = {p["kind"] if isinstance(p, dict) else p.kind for p in report.perturbations}
    assert {"break_rule:skill", "break_rule:coverage", "break_rule:rest_after_run", "suboptimal"} <= kinds


def test_every_size_has_its_own_settings_and_the_large_size_certifies() -> None:
    sizes = [s for _, s in model.SIZES.rows()]
    assert len(set(sizes)) == 4
    made = [build_instance(0, i, GenerateOptions(task=TASK, size="large")).instance for i in range(3)]
    assert any(inst is not None and inst.spec.size == "large" for inst in made)
