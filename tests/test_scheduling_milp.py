"""The second back-end of the scheduling family: a PuLP MILP of the timetable model.

On every instance where both back-ends exist, the MILP (HiGHS, zero gap, staged
lexicographic objective) must prove the same optimum as the CP-SAT certificate, find
the same instances infeasible, and produce a plan the checker grades at that optimum;
rule by rule, it must accept exactly the plans the checker accepts. Uniqueness stays
the business of the back-end that generated the instance (CP-SAT).
"""

from __future__ import annotations

import itertools
import json

import pytest

pulp = pytest.importorskip("pulp")

from pbsolve import milp_kit  # noqa: E402
from pbsolve.certify import SolverLimits, optimum  # noqa: E402
from pbsolve.checkers.scheduling import rule_params as rp  # noqa: E402
from pbsolve.checkers.scheduling.calendar_params import DeliveryCost  # noqa: E402
from pbsolve.checkers.scheduling.checks import CHECKS, evaluate  # noqa: E402
from pbsolve.checkers.scheduling.instance_data import TimetableData  # noqa: E402
from pbsolve.family import family, find_task  # noqa: E402
from pbsolve.grading import grade  # noqa: E402
from pbsolve.mechanisms import HARD_KINDS  # noqa: E402
from pbsolve.models.scheduling import milp  # noqa: E402
from pbsolve.params import make_term  # noqa: E402
from pbsolve.schema import ObjectiveTerm, Rule  # noqa: E402
from pbsolve.taxonomy import MECHANISM_IDS  # noqa: E402
from tests.helpers import TASKS as SCHEDULING_TASKS  # noqa: E402
from tests.helpers import draft_of, instance_at, plan_of, single_moves  # noqa: E402
from tests.instances import find  # noqa: E402

FAM = family("scheduling")
TASKS = milp.TASKS  # the timetable task types of the shared time model; the others' own kinds have no rows yet
SAMPLE = [(size, index, hard) for size in ("small", "default") for index in range(4) for hard in (False, True)]
STATEFUL = {
    "meeting_planning": ("room_cooldown", "fatigue_protocol", "battery_level"),
    "course_timetabling": ("room_cooldown", "fatigue_protocol"),
    "exam_scheduling": ("room_cooldown", "fatigue_protocol"),
}


def _certified(inst):
    return tuple(inst.certificate.objective[t.id] for t in inst.objective) if inst.certificate.objective else None


def _cp_sat(draft, without=None):
    return optimum(FAM, draft, SolverLimits(), without=without)


def test_the_milp_serves_the_three_timetable_tasks():
    assert set(milp.TASKS) == {"meeting_planning", "course_timetabling", "exam_scheduling"} <= set(SCHEDULING_TASKS)


@pytest.mark.parametrize("task", [t for t in SCHEDULING_TASKS if t not in milp.TASKS])
def test_a_task_whose_rule_kinds_have_no_rows_is_declined_never_solved_without_them(task):
    for index in range(12):
        inst = instance_at(task, 21, index, "small", False)
        if inst is not None and {r.kind for r in inst.rules} - set(milp.ROWS):
            with pytest.raises(milp.NoMilpForm, match="no MILP rows for rule kinds"):
                milp.optimum(draft_of(inst))
            return
    pytest.fail(f"no {task} instance with a rule kind outside the twin's rows")


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(("size", "index", "hard"), SAMPLE)
def test_milp_proves_the_certified_optimum(task, size, index, hard):
    inst = instance_at(task, 21, index, size, hard)
    if inst is None:
        pytest.skip("no certified instance at this index")
    result = milp.optimum(draft_of(inst))
    assert result.values == _certified(inst), (inst.mechanisms, result.values, _certified(inst))
    if result.values is None:
        assert inst.certificate.status == "infeasible"
        return
    # the MILP's own plan is valid and scores the optimum under the checker
    answer = {**inst.reference, **result.plan, "objective": inst.certificate.objective}
    g = grade(inst, json.dumps(answer))
    rule_items = {
        it.id
        for it in inst.checklist
        if any(r.id == it.rule for r in inst.rules) or it.rule in ("format", "objective", "validation")
    }
    assert all(i.passed for i in g.items if i.id in rule_items), [i for i in g.items if not i.passed]


@pytest.mark.parametrize("task", TASKS)
def test_milp_and_cp_sat_agree_on_every_hard_kind(task):
    """Replanning (a changes term), robustness (backup rooms), recovery scenarios,
    uncertain data (and each input at its best case) and infeasibility all go through
    the MILP rows too."""
    seen = []
    for kind in HARD_KINDS:
        status = "infeasible" if kind == "infeasibility_detection" else "optimal"
        inst = find(task, 31, "small", (kind,), status, hard=False, unlisted=("infeasibility_detection",))
        if inst is None:
            continue
        seen.append(kind)
        draft = draft_of(inst)
        assert milp.optimum(draft).values == _certified(inst), kind
        if inst.recovery is not None:
            scenario = draft_of(
                inst, rules=[*inst.rules, *inst.recovery.scenario], objective=list(inst.recovery.objective)
            )
            expected = tuple(inst.recovery.certificate.objective[t.id] for t in inst.recovery.objective)
            assert milp.optimum(scenario).values == expected
        for uid in FAM.uncertain_ids(draft):
            better = FAM.optimistic(draft, uid)
            assert milp.optimum(better).values == _cp_sat(better), uid
    assert {"min_change_replanning", "robustness_design", "infeasibility_detection"} <= set(seen), seen


@pytest.mark.parametrize("task", TASKS)
def test_milp_agrees_on_the_optimum_with_each_rule_removed(task):
    """Explainability asks for the optimum without each rule: both back-ends agree."""
    inst = find(task, 41, "small", ("explainability",), hard=False)
    if inst is None:
        pytest.skip("no explainability instance")
    for rule in inst.rules:
        assert milp.optimum(draft_of(inst), without=rule.id).values == _cp_sat(draft_of(inst), rule.id), rule.kind


@pytest.mark.parametrize(("task", "kind"), [(t, k) for t in TASKS for k in STATEFUL[t]])
def test_milp_agrees_with_a_stateful_rule_on_and_off(task, kind):
    """The stateful rules' auxiliaries (busy flags, a fatigue switch, battery levels) are
    rows of their rule only: with the rule on both back-ends agree, and off too."""
    checked = 0
    for index in range(3):
        inst = instance_at(task, 7, index, "small", False, (kind,))
        if inst is None or inst.certificate.status != "optimal":
            continue
        draft = draft_of(inst)
        assert milp.optimum(draft).values == _certified(inst)
        (rule,) = [r for r in inst.rules if r.kind == kind]
        assert milp.optimum(draft, without=rule.id).values == _cp_sat(draft, rule.id)
        checked += 1
    assert checked


def _accepts(inst, rule: Rule, plan) -> bool:
    """Whether the MILP with only ``rule`` admits ``plan``: the fewest changes from it is 0."""
    d = TimetableData.model_validate(inst.data)
    current = {eid: (d.slots[s].id, room) for eid, (s, room) in plan.items()}
    term = make_term("changes", "changes", rp.CurrentSchedule(existing=current))
    values = milp.optimum(draft_of(inst, rules=[rule], objective=[term])).values
    assert values is not None
    return values == (0,)


def _compare_rules(inst, kinds: tuple[str, ...] | None, every: int, most: int) -> tuple[int, int]:
    """(plans compared, plans the checker rejects) over the reference plan and every
    ``every``-th of its single moves (at most ``most`` plans), for the rules of ``kinds``."""
    d = TimetableData.model_validate(inst.data)
    reference = plan_of(inst, inst.reference)
    plans = [reference, *itertools.islice(single_moves(inst, reference), 0, None, every)][:most]
    compared = rejected = 0
    for rule in inst.rules:
        if rule.kind == "room_backup" or (kinds is not None and rule.kind not in kinds):
            continue
        for plan in plans:
            holds = evaluate(d, [rule], [], plan)[0][rule.id][0]
            assert _accepts(inst, rule, plan) == holds, (rule.kind, plan)
            compared, rejected = compared + 1, rejected + (not holds)
    return compared, rejected


@pytest.mark.parametrize("task", TASKS)
def test_each_rule_accepts_exactly_the_plans_the_checker_accepts(task):
    """Rule by rule, on the reference plan and some of its single moves: the MILP admits a
    plan iff the checker's check of that rule holds (room_backup is judged with the
    answer's own backup rooms, so it is held against CP-SAT above instead)."""
    compared = rejected = 0
    for index in range(3):
        inst = instance_at(task, 21, index, "small", False)
        if inst is not None and inst.certificate.status == "optimal":
            n, k = _compare_rules(inst, None, 7, 12)
            compared, rejected = compared + n, rejected + k
    assert compared and rejected


@pytest.mark.parametrize(("task", "kind"), [(t, k) for t in TASKS for k in STATEFUL[t]])
def test_a_stateful_rule_accepts_exactly_the_plans_the_checker_accepts(task, kind):
    """The same for the stateful kinds, whose rows are the least literal (the fatigue
    switch, the battery levels bounded from above), on more moves."""
    compared = rejected = 0
    for index in range(3):
        inst = instance_at(task, 7, index, "small", False, (kind,))
        if inst is not None and inst.certificate.status == "optimal":
            n, k = _compare_rules(inst, (kind,), 3, 30)
            compared, rejected = compared + n, rejected + k
    assert compared and rejected


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # PuLP 3.3 flags its bundled CBC for 4.0
@pytest.mark.parametrize("task", TASKS)
def test_cbc_fallback_proves_the_same_optimum(task):
    inst = find(task, 51, "small", hard=False)
    assert inst is not None
    highs = milp.optimum(draft_of(inst))
    cbc = milp.optimum(draft_of(inst), backend="CBC")
    assert highs.backend == "HiGHS" and cbc.backend == "PULP_CBC_CMD"
    assert highs.values == cbc.values == _certified(inst)


def test_the_milp_has_rows_for_every_rule_kind_and_an_expression_for_every_objective_kind():
    """Every kind of the timetable core (the kinds its three tasks draw); the day-spacing,
    campaign-calendar, place and content kinds belong to the task types the MILP refuses
    (NoMilpForm)."""
    from pbsolve.checkers.scheduling.calendar_params import CALENDAR_PARAMS, CALENDAR_TERMS
    from pbsolve.checkers.scheduling.content import CONTENT_PARAMS
    from pbsolve.checkers.scheduling.day_spacing import DAY_SPACING_PARAMS
    from pbsolve.checkers.scheduling.places import PLACES_PARAMS

    add_ons = {**DAY_SPACING_PARAMS, **CALENDAR_PARAMS, **PLACES_PARAMS, **CONTENT_PARAMS}
    core = set(rp.RULE_PARAMS) - set(add_ons)
    assert set(milp.ROWS) == core and core <= set(CHECKS)
    assert set(milp.TERM_KINDS) == set(rp.TERM_PARAMS) - set(CALENDAR_TERMS) | {"delivery_cost"}  # cost per seat: oral exams, seminars
    for task in milp.TASKS:
        assert {c.id for c in find_task(task).pool} - MECHANISM_IDS <= set(milp.ROWS)
    inst = find("course_timetabling", 61, "small", hard=False)
    assert inst is not None
    d = TimetableData.model_validate(inst.data)
    current = {e.id: (d.slots[d.starts(e)[0]].id, d.rooms[0].id) for e in d.events}
    terms = [
        make_term("changes", "changes", rp.CurrentSchedule(existing=current)),
        make_term("pairs", "same_day_pairs", rp.SameDayPairs(people=[p.id for p in d.people])),
        ObjectiveTerm(id="backup_cost", kind="backup_cost"),
        make_term("per_seat", "delivery_cost", DeliveryCost()),
        *inst.objective,
    ]
    assert {t.kind for t in terms} == set(milp.TERM_KINDS)
    backup = Rule(id=f"R{len(inst.rules) + 1}", kind="room_backup", tier="hard", params={})
    draft = draft_of(inst, rules=[*inst.rules, backup], objective=terms)
    assert milp.optimum(draft).values == _cp_sat(draft)


def test_a_kind_without_rows_is_refused_loudly():
    inst = find("exam_scheduling", 61, "small", hard=False)
    assert inst is not None
    odd = Rule(id="R99", kind="teleport", tier="medium", params={})
    with pytest.raises(milp.NoMilpForm, match="teleport"):
        milp.optimum(draft_of(inst, rules=[*inst.rules, odd]))
    with pytest.raises(milp.NoMilpForm, match="teleport"):
        milp.optimum(draft_of(inst, objective=[ObjectiveTerm(id="t", kind="teleport")]))


def test_the_model_is_built_in_a_fixed_order(tmp_path):
    """The same draft gives the same rows, byte for byte (no iteration over sets)."""
    inst = find("meeting_planning", 61, "default", ("robustness_design",), hard=True)
    assert inst is not None
    texts = []
    for k in range(2):
        b, _, _ = milp._timetable(draft_of(inst), None)
        b.prob.writeLP(str(tmp_path / f"m{k}.lp"))
        texts.append((tmp_path / f"m{k}.lp").read_text())
    assert texts[0] == texts[1]


def test_a_stage_without_a_proven_optimum_is_refused(monkeypatch):
    """sol_status, not status, decides: a time-limited stage that reports 'Optimal' with
    an unproven solution raises MilpUnproven."""
    inst = find("exam_scheduling", 51, "small", hard=False)
    assert inst is not None

    class Unproven:
        name = "fake"

        def actualSolve(self, lp):  # PuLP's interface (camelCase)
            lp.assignStatus(pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible)
            for v in lp.variables():
                v.varValue = 0
            return pulp.LpStatusOptimal

    monkeypatch.setattr(milp_kit, "solver", lambda *a, **k: Unproven())
    with pytest.raises(milp_kit.MilpUnproven):
        milp.optimum(draft_of(inst))


def test_the_milp_module_is_the_only_pulp_import_of_the_family():
    """Generating and grading never need PuLP (the ``milp`` extra)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for folder in ("models/scheduling", "checkers/scheduling"):
        for path in sorted((root / folder).rglob("*.py")):
            if path.name != "milp.py":
                assert "import pulp" not in path.read_text(), path
