"""Recruitment Planning: each rule kind's check keeps and breaks as its sentence says, the
model and the checker agree plan by plan on tiny instances, the subtasks carry their
structure, the stateful kinds hold their state, the baseline is usually wrong and bad
names fail the format item with a reason."""

from __future__ import annotations

import json
import random

import pytest

from pbsolve.checkers.workforce import recruitment as rc
from pbsolve.checkers.workforce.recruitment import Plan, RecruitmentData
from pbsolve.family import Draft, NoDraft, checker
from pbsolve.models.workforce import recruitment as model
from pbsolve.params import NoParams, Params
from pbsolve.schema import GenerationSpec, Instance, ObjectiveTerm
from tests.family_adapters import ADAPTERS
from tests.instances import find
from tests.workforce_adapters.recruitment import ADAPTER

TASK = "recruitment_planning"
AD = ADAPTERS["workforce"]


def _data() -> RecruitmentData:
    """Two days of two slots, two candidates through a screen and a two-person panel."""
    return RecruitmentData.model_validate({
        "slots": [{"id": "Mon AM", "day": 0}, {"id": "Mon PM", "day": 0}, {"id": "Tue AM", "day": 1}, {"id": "Tue PM", "day": 1}],
        "stages": [{"id": "Screen", "staff": 1}, {"id": "Panel", "staff": 2}],
        "roles": [{"id": "Analyst", "urgency": 3}],
        "staff": [
            {"id": "Ana", "stages": ["Screen", "Panel"], "senior": True, "teams": ["Analyst"], "fee": 0},
            {"id": "Ben", "stages": ["Screen", "Panel"], "fee": 4},
            {"id": "Chen", "stages": ["Panel"], "fee": 0, "unavailable": ["Tue PM"]},
        ],
        "candidates": [{"id": "Avery", "role": "Analyst"}, {"id": "Blake", "role": "Analyst", "unavailable": ["Mon AM"]}],
    })  # fmt: skip


def _plan(**changes: tuple[str, tuple[str, ...]]) -> Plan:
    """A plan keeping every rule below; ``Avery_Panel=("Tue AM", ("Ana", "Ben"))`` changes one step."""
    rows = {
        ("Avery", "Screen"): ("Mon AM", ("Ana",)),
        ("Avery", "Panel"): ("Tue AM", ("Ana", "Chen")),
        ("Blake", "Screen"): ("Mon PM", ("Ben",)),
        ("Blake", "Panel"): ("Tue PM", ("Ana", "Ben")),
    }
    for key, value in changes.items():
        c, s = key.split("_")
        rows[c, s] = value
    return Plan({k: v[0] for k, v in rows.items()}, {k: v[1] for k, v in rows.items()})


CASES: list[tuple[str, Params, dict, str]] = [
    ("qualified", NoParams(), {"Avery_Screen": ("Mon AM", ("Chen",))}, "Chen may not run the Screen"),
    ("stage_order", NoParams(), {"Avery_Panel": ("Mon AM", ("Ben", "Chen"))}, "is not after the Screen"),
    ("staff_no_clash", NoParams(), {"Blake_Screen": ("Mon AM", ("Ana",))}, "Ana runs"),
    ("staff_availability", NoParams(), {"Blake_Panel": ("Tue PM", ("Ana", "Chen"))}, "Chen is unavailable in Tue PM"),
    ("candidate_availability", NoParams(), {"Blake_Screen": ("Mon AM", ("Ben",))}, "Blake is unavailable in Mon AM"),
    ("daily_cap", rc.StaffCap(staff=["Ben"], max=1), {"Blake_Screen": ("Tue AM", ("Ben",))}, "Ben runs 2 stages on Tue"),
    ("staff_load", rc.StaffCap(staff=["Ana"], max=3), {"Blake_Screen": ("Mon PM", ("Ana",))}, "Ana runs 4 stages"),
    ("fee_budget", rc.FeeBudget(max=8), {"Avery_Panel": ("Tue AM", ("Ben", "Chen"))}, "fees total 12"),
    ("final_deadline", rc.Deadline(candidates=["Avery"], slot="Tue AM"), {"Avery_Panel": ("Tue PM", ("Ana", "Chen"))}, "after Tue AM"),
    ("min_gap", rc.MinGap(first="Screen", second="Panel", days=1), {"Avery_Panel": ("Mon PM", ("Ana", "Chen"))}, "0 days after"),
    ("panel_senior", rc.StageRule(stage="Panel"), {"Blake_Panel": ("Tue PM", ("Ben", "Chen"))}, "no senior member"),
    ("panel_team", rc.StageRule(stage="Panel"), {"Avery_Panel": ("Tue AM", ("Ben", "Chen"))}, "nobody from the Analyst hiring team"),
    ("fresh_eyes", NoParams(), {}, "Avery meets Ana at the Screen and the Panel"),
    ("load_balance", rc.LoadBalance(max=2), {"Blake_Screen": ("Mon PM", ("Ana",))}, "more than 2 apart"),
    ("max_span", rc.MaxSpan(days=0), {}, "span 1 days"),
    ("budget_release", rc.BudgetRelease(releases=[0, 8]), {}, "by the end of Mon fees of 4 are spent; 0 released"),
    ("staff_absent", rc.StaffAbsent(staff="Chen", slots=["Tue AM"]), {}, "Chen is absent in Tue AM"),
    ("candidate_blocked", rc.CandidateBlocked(candidate="Blake", slots=["Mon PM"]), {}, "Blake cannot come in Mon PM"),
]  # fmt: skip


def _judge(kind: str, params: Params, plan: Plan) -> tuple[bool, str]:
    return rc.CHECKS[kind](_data(), plan, params)


@pytest.mark.parametrize(("kind", "params", "change", "reason"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_kind_keeps_the_plan_that_keeps_it(kind, params, change, reason):
    keeps = (
        _plan()
        if kind not in ("fresh_eyes", "max_span", "budget_release", "staff_absent", "candidate_blocked")
        else None
    )
    if keeps is not None:
        assert _judge(kind, params, keeps)[0], _judge(kind, params, keeps)


@pytest.mark.parametrize(("kind", "params", "change", "reason"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_kind_rejects_the_plan_that_breaks_it_naming_why(kind, params, change, reason):
    ok, why = _judge(kind, params, _plan(**change))
    assert not ok and reason in why, why


def test_fresh_eyes_max_span_and_absences_keep_plans_that_avoid_them():
    fresh = _plan(Blake_Panel=("Tue PM", ("Ana", "Chen")), Avery_Panel=("Tue AM", ("Ben", "Chen")))
    assert _judge("fresh_eyes", NoParams(), fresh)[0]
    assert _judge("max_span", rc.MaxSpan(days=1), _plan())[0]
    assert _judge("staff_absent", rc.StaffAbsent(staff="Chen", slots=["Mon AM"]), _plan())[0]
    assert _judge("candidate_blocked", rc.CandidateBlocked(candidate="Blake", slots=["Tue AM"]), _plan())[0]
    assert _judge("budget_release", rc.BudgetRelease(releases=[4, 4]), _plan())[0]


def test_panel_cooldown_rests_a_panel_member_for_the_next_slot_of_the_same_day_only():
    rule = rc.StageRule(stage="Panel")
    tired = _plan(Avery_Panel=("Mon PM", ("Ana", "Chen")), Avery_Screen=("Mon AM", ("Ben",)),
                  Blake_Screen=("Tue AM", ("Ana",)), Blake_Panel=("Tue PM", ("Ana", "Ben")))  # fmt: skip
    assert _judge("panel_cooldown", rule, tired)[0]  # Mon PM is the day's last slot: Tue AM is another day
    busy = _plan(Avery_Panel=("Tue AM", ("Ana", "Chen")), Blake_Screen=("Mon PM", ("Ben",)),
                 Blake_Panel=("Tue PM", ("Ana", "Ben")))  # fmt: skip
    ok, why = _judge("panel_cooldown", rule, busy)
    assert not ok and "Ana runs Blake's Panel right after Avery's Panel" in why


def test_budget_release_carries_unspent_money_over_to_later_days():
    assert _judge("budget_release", rc.BudgetRelease(releases=[6, 2]), _plan())[0]
    ok, why = _judge("budget_release", rc.BudgetRelease(releases=[4, 3]), _plan())
    assert not ok and "by the end of Tue fees of 8 are spent; 7 released" in why


def test_backups_must_cover_every_single_dropout_without_a_clash():
    plan = _plan()
    good = {
        ("Avery", "Screen"): "Ben",
        ("Avery", "Panel"): "Ben",
        ("Blake", "Screen"): "Ana",
        ("Blake", "Panel"): "Chen",
    }
    data = _data().model_copy(update={"staff": tuple(p.model_copy(update={"unavailable": ()}) for p in _data().staff)})
    assert rc.CHECKS["backup_staff"](data, Plan(plan.slot, plan.staff, good), NoParams())[0]
    own = {**good, ("Avery", "Screen"): "Ana"}
    ok, why = rc.CHECKS["backup_staff"](data, Plan(plan.slot, plan.staff, own), NoParams())
    assert not ok and "already runs it" in why


def test_the_objective_terms_are_recomputed_from_the_plan():
    d, plan = _data(), _plan()
    values = {
        k: rc.objective_value(d, plan, ObjectiveTerm(id=k, kind=k), NoParams())
        for k in ("urgency", "fees", "order_score")
    }
    assert values["urgency"] == 3 * 3 + 3 * 4  # both Analysts: final stages in slots 3 and 4
    assert values["fees"] == 4 + 4  # Ben's two stages
    # rows: 1 Avery Screen (slot 1, Ana 1), 2 Avery Panel (3, Ana+Chen 1+3), 3 Blake Screen (2, Ben 2), 4 Blake Panel (4, 1+2)
    assert values["order_score"] == 1 * (10 + 1) + 2 * (30 + 4) + 3 * (20 + 2) + 4 * (40 + 3)


# -- model against checker -------------------------------------------------------------
def _tiny(seed: int, include: tuple[str, ...] = ()) -> Instance | None:
    return find(TASK, seed, "tiny", include, "optimal", tries=6)


@pytest.mark.parametrize("seed", range(3))
def test_encoder_and_check_agree_on_every_plan_of_a_tiny_instance(seed):
    inst = _tiny(300 + seed)
    if inst is None:
        pytest.skip("no tiny instance at this seed")
    plans = list(ADAPTER.all_plans(inst, None, list(inst.rules)))
    rng = random.Random(seed)
    for plan in rng.sample(plans, min(40, len(plans))):
        verdicts, values = AD.evaluate(inst, plan)
        ok = all(v[0] for v in verdicts.values())
        accepted, figures = AD.model_verdict(inst, plan, [r.id for r in inst.rules])
        assert ok == accepted, (verdicts, plan)
        if ok:
            assert figures == values


@pytest.mark.parametrize("kind", ["panel_cooldown", "budget_release"])
def test_stateful_kinds_are_certified_when_asked_for(kind):
    inst = find(TASK, 11, "small", (kind,), "optimal", tries=12, unlisted=(kind,))
    assert inst is not None
    assert kind in {r.kind for r in inst.rules}
    answer = json.dumps(inst.reference)
    grades = checker("workforce").check_answer(inst, json.loads(answer))
    assert all(v[0] for v in grades.values()), grades


# -- subtasks --------------------------------------------------------------------------
def _draft(subtask: str, seed: int) -> Draft:
    spec = GenerationSpec(
        family="workforce",
        task=TASK,
        subtask=subtask,
        basic=[],
        medium=[],
        hard=[],
        stateful=[],
        seed=seed,
        size="default",
    )
    for k in range(20):
        try:
            return model.draft(spec, random.Random(seed * 100 + k))
        except NoDraft:  # re-sample
            continue
    raise AssertionError("no draft")


def test_each_subtask_has_its_own_hiring_process_and_forced_structure():
    stages = {s: [x["id"] for x in _draft(s, 1).data["stages"]] for s in model.CONTEXT}
    assert stages["seasonal_retail"] == ["Screen", "Trial shift"]
    assert stages["faculty_search"] == ["Seminar", "Department panel", "Dean meeting"]
    assert stages["engineering_hiring"][-1] == "Panel"
    kinds = {s: {r.kind for r in _draft(s, 2).rules} for s in model.CONTEXT}
    assert "panel_senior" in kinds["executive_hire"]
    assert "panel_team" in kinds["faculty_search"]
    assert "fee_budget" in kinds["graduate_intake"]
    assert "final_deadline" in kinds["seasonal_retail"]


def test_panels_need_two_staff_members_where_the_subtask_has_a_panel():
    d = RecruitmentData.model_validate(_draft("executive_hire", 3).data)
    assert d.stage_by_id["Board panel"].staff == 2


# -- grading -----------------------------------------------------------------------------
@pytest.mark.parametrize(("field", "value", "reason"), [
    ("candidate", "Zed", "unknown candidate 'Zed'"),
    ("stage", "Lunch", "unknown stage 'Lunch'"),
    ("slot", "Sat AM", "unknown slot 'Sat AM'"),
    ("staff", ["Nobody"], "unknown staff member 'Nobody'"),
])  # fmt: skip
def test_an_answer_naming_an_unknown_entity_fails_the_format_item_with_a_reason(field, value, reason):
    inst = _tiny(300) or _tiny(301)
    assert inst is not None
    answer = json.loads(json.dumps(inst.reference))
    answer["schedule"][0][field] = value
    grades = checker("workforce").check_answer(inst, answer)
    fmt = next(it.id for it in inst.checklist if it.rule == "format")
    assert not grades[fmt][0] and reason in grades[fmt][1], grades[fmt]


def test_a_row_with_the_wrong_number_of_staff_fails_the_format_item():
    inst = _tiny(300) or _tiny(301)
    assert inst is not None
    answer = json.loads(json.dumps(inst.reference))
    answer["schedule"][0]["staff"] = []
    grades = checker("workforce").check_answer(inst, answer)
    fmt = next(it.id for it in inst.checklist if it.rule == "format")
    assert not grades[fmt][0] and "staff members, not 0" in grades[fmt][1]


def test_the_disruption_rule_breaks_the_plan_it_was_drawn_from():
    d = _data()
    rules = model.disruptions(
        Draft(spec=GenerationSpec(family="workforce", task=TASK, subtask="graduate_intake", basic=[], medium=[], hard=[], stateful=[], seed=0, size="tiny"),
              data=d.model_dump(mode="json"), rules=[], objective=[]),
        {"schedule": rc.TASK.plan_json(d, _plan())},
        random.Random(0),
    )  # fmt: skip
    for rule in rules:
        params = rc.RULE_PARAMS[rule.kind].model_validate(rule.params)
        assert not rc.CHECKS[rule.kind](d, _plan(), params)[0], rule


def test_near_misses_break_exactly_their_rule_or_only_the_optimum():
    fam = checker("workforce")
    seen: set[str] = set()
    for seed in range(6):
        inst = find(TASK, 700 + seed, "small", (), "optimal", tries=4)
        if inst is None:
            continue
        items = {it.id: it.rule for it in inst.checklist}
        kind_of = {r.id: r.kind for r in inst.rules}
        for kind, answer in fam.near_misses(inst, random.Random(seed)):
            failed = [items[i] for i, (ok, _) in fam.check_answer(inst, answer).items() if not ok]
            if kind.startswith("break_rule:"):
                broken = [r for r in failed if r in kind_of]
                assert [kind_of[r] for r in broken] == [kind.split(":")[1]], (kind, failed)
                seen.add(kind)
            else:
                assert "format" not in failed and not any(r in kind_of for r in failed), (kind, failed)
    assert len(seen) >= 4, seen
