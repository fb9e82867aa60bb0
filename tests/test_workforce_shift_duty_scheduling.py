"""Shift & Duty Scheduling: what each rule kind, objective and subtask means, held on a
small hand-made ward and on generated instances (the registry suites add the brute-force
and mechanism properties)."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from ortools.sat.python import cp_model

from pbsolve.checkers.workforce import shift_duty as sd
from pbsolve.checkers.workforce.shift_duty import TASK as TC
from pbsolve.checkers.workforce.shift_duty import Plan, ShiftDutyData
from pbsolve.family import Draft, NoDraft
from pbsolve.grading import grade
from pbsolve.models.workforce import shift_duty as model
from pbsolve.params import NoParams, Params, make_rule, make_term
from pbsolve.schema import GenerationSpec
from tests.instances import instance_at

TASK = "shift_duty_scheduling"
DATA = ShiftDutyData.model_validate({
    "days": [{"id": "Fri"}, {"id": "Sat", "weekend": True}, {"id": "Sun", "weekend": True}],
    "shifts": [{"id": "Early", "start": 6, "hours": 8}, {"id": "Late", "start": 14, "hours": 8},
               {"id": "Night", "start": 22, "hours": 8}],
    "skills": ["senior"],
    "staff": [{"id": "Ada", "skills": ["senior"], "wage": 10}, {"id": "Bram", "wage": 12, "holidays": ["Sat"]},
              {"id": "Cleo", "skills": ["senior"], "wage": 15}],
    "cover": [{"day": x, "shift": s, "need": 1 if s != "Late" else 0} for x in ("Fri", "Sat", "Sun")
              for s in ("Early", "Late", "Night")],
    "requests": [{"id": "Q1", "person": "Ada", "day": "Sun", "weight": 2},
                 {"id": "Q2", "person": "Cleo", "day": "Fri", "shift": "Night", "weight": 3}],
})  # fmt: skip


# absence-proof cover needs a spare on every staffed shift: one staffed shift only
ONE_SHIFT = DATA.model_copy(update={"cover": tuple(
    c.model_copy(update={"need": 1 if (c.day, c.shift) == ("Fri", "Early") else 0}) for c in DATA.cover
)})  # fmt: skip


def data_for(kind: str) -> ShiftDutyData:
    return ONE_SHIFT if kind == "absence_cover" else DATA


def plan(text: str) -> Plan:
    """'Ada: Early Off Night; Bram: ...' -> a roster (Off is a day off)."""
    shifts: dict[str, dict[str, str]] = {}
    for part in text.split(";"):
        who, line = part.split(":")
        for day, s in zip(("Fri", "Sat", "Sun"), line.split()):
            if s != "Off":
                shifts.setdefault(who.strip(), {})[day] = s
    return Plan(shifts)


GOOD = plan("Ada: Early Early Off; Bram: Night Off Early; Cleo: Off Night Night")
CASES: list[tuple[str, Params, Plan, Plan, str]] = [
    ("coverage", NoParams(), GOOD, plan("Ada: Early Early Off; Bram: Night Off Off; Cleo: Off Night Night"),
     "Sun Early has 0 staff; it needs 1"),
    ("skill_cover", sd.SkillCover(skill="senior", min=1, slots=[("Fri", "Early"), ("Sun", "Night")]), GOOD,
     plan("Ada: Off Early Off; Bram: Early Off Early; Cleo: Night Night Night"), "Fri Early has 0 staff with skill senior"),
    ("holidays", NoParams(), GOOD, plan("Ada: Early Off Off; Bram: Night Early Early; Cleo: Off Night Night"),
     "Bram is on leave on Sat"),
    ("max_hours", sd.MaxHours(people=["Ada", "Cleo"], max=16), GOOD,
     plan("Ada: Early Early Early; Bram: Night Off Off; Cleo: Off Night Night"), "Ada works 24 hours (at most 16)"),
    ("min_hours", sd.MinHours(people=["Bram"], min=16), GOOD,
     plan("Ada: Early Early Early; Bram: Night Off Off; Cleo: Off Night Night"), "Bram works 8 hours (at least 16)"),
    ("forbidden_succession", sd.ForbiddenSuccession(first="Night", then="Early"),
     plan("Ada: Early Early Off; Bram: Night Off Early; Cleo: Off Night Late"),
     plan("Ada: Early Early Off; Bram: Night Off Off; Cleo: Off Night Early"), "Cleo works Night on Sat then Early on Sun"),
    ("shift_ban", sd.ShiftBan(person="Ada", shifts=["Night"]), GOOD,
     plan("Ada: Early Night Off; Bram: Night Off Early; Cleo: Off Early Night"), "Ada works Night on Sat"),
    ("max_consecutive", sd.MaxConsecutive(max=2), GOOD,
     plan("Ada: Early Early Early; Bram: Night Off Off; Cleo: Off Night Night"), "Ada works 3 days in a row from Fri"),
    ("complete_weekends", sd.CompleteWeekends(people=["Ada"]), plan("Ada: Early Early Late; Bram: Night Off Early; Cleo: Off Night Night"),
     GOOD, "Ada works Sat but not all of Sat, Sun"),
    ("shift_balance", sd.ShiftBalance(shift="Night", max=2), GOOD,
     plan("Ada: Early Early Early; Bram: Off Off Off; Cleo: Night Night Night"), "Cleo works 3 Night shifts and Ada 0"),
    ("weekend_cap", sd.WeekendCap(people=["Cleo"], max=1), plan("Ada: Early Early Night; Bram: Night Off Early; Cleo: Off Night Off"),
     GOOD, "Cleo works 2 weekend days (at most 1)"),
    ("min_rest", sd.MinRest(hours=11), GOOD,
     plan("Ada: Early Early Off; Bram: Night Off Early; Cleo: Late Early Night"), "Cleo has 8 hours between Late on Fri and Early on Sat"),
    ("night_fatigue", sd.NightFatigue(shift="Night", run=2, rest=1),
     plan("Ada: Early Early Off; Bram: Night Off Early; Cleo: Night Night Off"),
     plan("Ada: Early Early Off; Bram: Off Off Early; Cleo: Night Night Night"), "Cleo works Night on Sun within 1 days after 2 Night shifts"),
    ("run_hours", sd.RunHours(max=16), GOOD,
     plan("Ada: Early Early Early; Bram: Night Off Off; Cleo: Off Night Night"), "Ada reaches 24 hours without a day off on Sun"),
    ("person_absent", sd.PersonAbsent(person="Bram", days=["Sun"]), plan("Ada: Early Early Early; Bram: Night Off Off; Cleo: Off Night Night"),
     GOOD, "Bram is absent on Sun but works Early"),
    ("absence_cover", NoParams(), plan("Ada: Early Off Off; Bram: Off Off Off; Cleo: Early Off Off"), GOOD,
     "if Ada were absent, Fri Early would have 0 of 1"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "params", "keeps", "breaks", "reason"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_check_accepts_a_roster_that_keeps_it_and_rejects_one_that_breaks_it_with_the_reason(
    kind, params, keeps, breaks, reason
):
    check = sd.CHECKS[kind]
    assert check(data_for(kind), keeps, params) == (True, "holds")
    ok, why = check(data_for(kind), breaks, params)
    assert not ok and reason in why, why


def test_every_rule_kind_the_checker_knows_has_a_case_here():
    assert sorted(sd.CHECKS) == sorted(c[0] for c in CASES)


def _draft(
    kinds: list[tuple[str, Params]], objective: tuple[str, ...] = ("rota_score",), data: ShiftDutyData = DATA
) -> Draft:
    spec = GenerationSpec(family="workforce", task=TASK, subtask="hospital_ward", seed=0, size="tiny")
    rules = [make_rule(k, "basic", p, f"R{i}") for i, (k, p) in enumerate(kinds, 1)]
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules,
                 objective=[make_term(t, t) for t in objective])  # fmt: skip


def _model_accepts(draft: Draft, roster: Plan) -> bool:
    sm = model.build(draft)
    fixed = {f"x[{q},{x},{s}]" for q, x, s in roster.rows(DATA)}
    for var in sm.answer_literals:
        sm.model.add(var == (1 if var.name in fixed else 0))
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    return solver.solve(sm.model) == cp_model.OPTIMAL


def _all_rosters(staff: tuple[str, ...] = ("Ada", "Cleo")) -> list[Plan]:
    """Every roster of two people over the three days (Bram off): 4^6 rosters."""
    options = ["Off", "Early", "Late", "Night"]
    out = []
    for combo in itertools.product(options, repeat=6):
        out.append(plan(f"{staff[0]}: {' '.join(combo[:3])}; {staff[1]}: {' '.join(combo[3:])}"))
    return out


@pytest.mark.parametrize(("kind", "params"), [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES])
def test_encoder_and_check_agree_on_a_sample_of_rosters(kind, params):
    rosters = _all_rosters()
    sample = [
        *random.Random(kind).sample(rosters, 60),
        *(c[2] for c in CASES if c[0] == kind),
        *(c[3] for c in CASES if c[0] == kind),
    ]
    draft = _draft([(kind, params)], data=data_for(kind))
    for roster in sample:
        assert _model_accepts(draft, roster) == sd.CHECKS[kind](data_for(kind), roster, params)[0], (kind, roster)


def test_objective_terms_are_recomputed_from_the_roster():
    d, r = DATA, GOOD
    none = NoParams()
    value = lambda kind, p=none: sd.objective_value(d, r, make_term(kind, kind, p), p)  # noqa: E731
    assert value("requests") == 0  # Ada is off on Sun; Cleo has no Night on Fri
    assert value("wage_cost") == 10 * 16 + 12 * 16 + 15 * 16
    assert value("unsocial_max", sd.UnsocialMax(shift="Night")) == 2  # Cleo's two nights
    # Ada (k=1) Early Fri (1*1*1) + Early Sat (1*2*1); Bram (k=2) Night Fri (2*1*3) + Early Sun (2*3*1);
    # Cleo (k=3) Night Sat (3*2*3) + Night Sun (3*3*3)
    assert value("rota_score") == 1 + 2 + 6 + 6 + 18 + 27
    old = sd.CurrentRoster(existing=[("Ada", "Fri", "Early"), ("Ada", "Sat", "Late")])
    assert value("changes", old) == 1 + 1 + 4  # Ada Sat moved (2), Bram's and Cleo's four entries added


def test_the_run_hours_state_resets_on_a_day_off_and_fatigue_applies_after_every_run():
    p = sd.RunHours(max=16)
    assert sd.CHECKS["run_hours"](DATA, plan("Ada: Early Off Early; Bram: Off Off Off; Cleo: Early Early Off"), p)[0]
    f = sd.NightFatigue(shift="Night", run=1, rest=1)
    assert not sd.CHECKS["night_fatigue"](
        DATA, plan("Ada: Night Off Night; Bram: Off Off Off; Cleo: Off Night Late"), f
    )[0]


def test_stateful_kinds_agree_with_their_encoders_on_every_roster_of_two_people():
    for kind, params in (
        ("run_hours", sd.RunHours(max=16)),
        ("night_fatigue", sd.NightFatigue(shift="Night", run=1, rest=1)),
    ):
        draft = _draft([(kind, params)])
        for roster in _all_rosters()[::7]:
            assert _model_accepts(draft, roster) == sd.CHECKS[kind](DATA, roster, params)[0], (kind, roster)


SUBTASKS = {
    "hospital_ward": ("skill_cover", ["requests", "unsocial_max", "rota_score"], 3),
    "call_centre": ("max_hours", ["wage_cost", "requests", "rota_score"], 3),
    "security_guards": ("night_fatigue", ["unsocial_max", "requests", "rota_score"], 2),
    "retail_store": ("complete_weekends", ["requests", "wage_cost", "rota_score"], 2),
    "factory_three_shift": ("forbidden_succession", ["wage_cost", "unsocial_max", "rota_score"], 3),
}


@pytest.mark.parametrize("subtask", sorted(SUBTASKS))
def test_each_subtask_carries_its_defining_rule_its_shifts_and_its_objective(subtask):
    forced, objective, n_shifts = SUBTASKS[subtask]
    spec = GenerationSpec(family="workforce", task=TASK, subtask=subtask, seed=3, size="default")
    for seed in range(6):
        try:
            draft = model.draft(spec, random.Random(seed))
        except NoDraft:
            continue
        assert forced in [r.kind for r in draft.rules]
        assert [t.kind for t in draft.objective] == objective
        assert len(draft.data["shifts"]) == n_shifts
        return
    pytest.fail("no draft in six seeds")


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ({"person": "Zed", "day": "Fri", "shift": "Early"}, "unknown person 'Zed'"),
        ({"person": "Ada", "day": "Funday", "shift": "Early"}, "unknown day 'Funday'"),
        ({"person": "Ada", "day": "Fri", "shift": "Brunch"}, "unknown shift 'Brunch'"),
        ({"person": "Ada", "day": "Fri"}, "needs string fields"),
    ],
)
def test_a_roster_naming_an_unknown_person_day_or_shift_fails_the_format_item_with_a_reason(row, reason):
    got, why = TC.read_plan(DATA, {"roster": [row]}, TC.lookups(DATA), [])
    assert got is None and reason in why, why


def test_a_person_rostered_twice_on_one_day_fails_the_format_item():
    rows = [{"person": "Ada", "day": "Fri", "shift": "Early"}, {"person": "ada", "day": "fri", "shift": "Late"}]
    got, why = TC.read_plan(DATA, {"roster": rows}, TC.lookups(DATA), [])
    assert got is None and "Ada is rostered more than once on Fri" in why


def test_a_generated_instance_grades_an_unknown_name_as_a_format_failure_not_a_crash():
    inst = instance_at(TASK, 9, 0, "small", False)
    assert inst is not None
    answer = {**inst.reference, "roster": [*inst.reference["roster"], {"person": "Nobody", "day": "x", "shift": "y"}]}
    g = grade(inst, json.dumps(answer))
    fmt_id = next(it.id for it in inst.checklist if it.rule == "format")
    fmt = next(i for i in g.items if i.id == fmt_id)
    assert not fmt.passed and "unknown person" in fmt.reason and not g.all_pass


def test_near_misses_break_exactly_the_rule_they_name():
    from pbsolve.family import checker
    from tests.instances import find

    fam = checker("workforce")
    seen: set[str] = set()
    for seed in range(4):
        inst = find("shift_duty_scheduling", 800 + seed, "small", (), "optimal", tries=4)
        if inst is None:
            continue
        items = {it.id: it.rule for it in inst.checklist}
        kind_of = {r.id: r.kind for r in inst.rules}
        for kind, answer in fam.near_misses(inst, random.Random(seed)):
            failed = [items[i] for i, (ok, _) in fam.check_answer(inst, answer).items() if not ok]
            if kind.startswith("break_rule:"):
                assert [kind_of[r] for r in failed if r in kind_of] == [kind.split(":")[1]], (kind, failed)
                seen.add(kind)
    assert "break_rule:coverage" in seen, seen
