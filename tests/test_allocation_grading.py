"""Allocation family: grading never raises, always answers per checklist item, rewards
only what it should, and the built-in responders sit where they should (oracle at 100%
All-pass, the greedy baseline well below)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbsolve.generate import GenerateOptions, generate
from pbsolve.grading import REWARD_MODES, grade
from pbsolve.llm.responders import baseline, oracle
from pbsolve.schema import Grade, Instance
from tests.allocation_helpers import TASKS, find, instance_at, tc_of

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def fenced(value: Any) -> str:
    return "Answer:\n```json\n" + json.dumps(value, allow_nan=True) + "\n```"


def graded(inst: Instance, response: Any, mode: str = "all_pass") -> Grade:
    g = grade(inst, response, mode)
    assert [r.id for r in g.items] == [c.id for c in inst.checklist]
    assert g.all_pass == int(all(r.passed for r in g.items))
    assert 0.0 <= g.reward <= 1.0
    for r in g.items:
        assert not r.reason.startswith("checker error"), r.reason
        assert len(r.reason) <= 300
        if not r.passed:
            assert r.reason.strip()
    return g


def failing(inst: Instance, g: Grade) -> set[str]:
    rules = {c.id: c.rule for c in inst.checklist}
    return {rules[r.id] for r in g.items if not r.passed}


def assert_malformed(inst: Instance, response: Any) -> None:
    for mode in REWARD_MODES:
        g = graded(inst, response, mode)
        assert g.reward == 0.0 and g.all_pass == 0 and not any(r.passed for r in g.items)


def feasible(task: str) -> Instance:
    inst = find(task, 5, "small")
    assert inst is not None
    return inst


def infeasible(task: str) -> Instance:
    inst = find(task, 6, "small", ("infeasibility_detection",), "infeasible")
    assert inst is not None
    return inst


def ref(inst: Instance) -> dict:
    return copy.deepcopy(inst.reference)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=5),
    max_leaves=25,
)


@FUZZ
@given(task=st.sampled_from(TASKS), value=json_values, infeasible_one=st.booleans())
def test_arbitrary_json_gets_a_well_formed_grade(task, value, infeasible_one):
    inst = infeasible(task) if infeasible_one else feasible(task)
    for mode in REWARD_MODES:
        graded(inst, fenced(value), mode)


def _row_strategy(inst: Instance) -> st.SearchStrategy:
    d = inst.data
    pick = lambda xs: st.one_of(st.sampled_from(xs), st.sampled_from(xs).map(str.upper), json_values)  # noqa: E731
    if inst.task == "procurement_planning":
        return st.fixed_dictionaries({}, optional={
            "quantity": st.one_of(st.integers(-3, 400), json_values), "supplier": pick([s["id"] for s in d["suppliers"]]),
            "item": pick([i["id"] for i in d["items"]]), "week": pick(d["periods"])})  # fmt: skip
    if inst.task == "material_allocation":
        return st.fixed_dictionaries({}, optional={
            "units": st.one_of(st.integers(-3, 200), json_values), "depot": pick([x["id"] for x in d["depots"]]),
            "site": pick([s["id"] for s in d["sites"]]), "material": pick([m["id"] for m in d["materials"]])})  # fmt: skip
    if inst.task == "educational_resource_planning":
        return st.fixed_dictionaries({}, optional={
            "lesson": pick([x["id"] for x in d["lessons"]]), "teacher": pick([t["id"] for t in d["teachers"]]),
            "room": pick([r["id"] for r in d["rooms"]])})  # fmt: skip
    return st.lists(pick([s["id"] for s in d["students"]]), max_size=6)


@FUZZ
@given(data=st.data())
def test_answer_shaped_objects_get_a_well_formed_grade(data):
    task = data.draw(st.sampled_from(TASKS))
    inst = data.draw(st.sampled_from([feasible(task), infeasible(task)]))
    key = tc_of(task).plan_key
    value = data.draw(st.fixed_dictionaries({}, optional={
        "feasible": st.one_of(st.booleans(), json_values),
        key: st.one_of(st.lists(_row_strategy(inst), max_size=8), json_values),
        "objective": st.one_of(st.dictionaries(st.sampled_from([t.id for t in inst.objective]), st.integers()), json_values),
        "conflict": st.one_of(st.lists(st.sampled_from([r.id for r in inst.rules]), max_size=4), json_values),
    }))  # fmt: skip
    for mode in REWARD_MODES:
        graded(inst, fenced(value), mode)


# -- the reference and its near misses -----------------------------------------------
@pytest.mark.parametrize("task", TASKS)
def test_reference_answers_pass_in_every_mode(task):
    for inst in (feasible(task), infeasible(task)):
        for mode in REWARD_MODES:
            g = graded(inst, json.dumps(inst.reference), mode)
            assert g.reward == 1.0 and g.all_pass == 1


@pytest.mark.parametrize("task", TASKS)
def test_a_wrong_stated_figure_fails_only_validation(task):
    inst = feasible(task)
    answer = ref(inst)
    answer["objective"][inst.objective[0].id] += 1
    assert failing(inst, graded(inst, fenced(answer))) == {"validation"}
    answer = ref(inst)
    answer["objective"] = {k: float(v) for k, v in answer["objective"].items()}
    assert graded(inst, fenced(answer)).all_pass == 1
    answer["objective"] = {k: str(int(v)) for k, v in answer["objective"].items()}
    assert failing(inst, graded(inst, fenced(answer))) == {"validation"}


@pytest.mark.parametrize("task", TASKS)
def test_names_are_case_and_space_insensitive(task):
    inst = feasible(task)
    answer = ref(inst)
    key = tc_of(task).plan_key
    if task == "student_grouping":
        answer[key] = [[f"  {s.upper()} " for s in g] for g in answer[key]]
    else:
        answer[key] = [{k: (f" {v.swapcase()} " if isinstance(v, str) else v) for k, v in row.items()} for row in answer[key]]
    assert graded(inst, fenced(answer)).all_pass == 1


@pytest.mark.parametrize("task", TASKS)
def test_declaring_a_feasible_instance_infeasible_earns_nothing(task):
    inst = feasible(task)
    for mode in REWARD_MODES:
        assert graded(inst, fenced({"feasible": False, "conflict": [inst.rules[0].id]}), mode).reward == 0.0


@pytest.mark.parametrize("task", TASKS)
def test_claiming_a_plan_for_an_infeasible_instance_earns_nothing(task):
    inst = infeasible(task)
    answer = json.loads(baseline(inst))
    for mode in ("all_pass", "feasible"):
        assert graded(inst, fenced(answer), mode).reward == 0.0


@pytest.mark.parametrize("task", TASKS)
def test_only_the_figures_without_a_plan_fail_every_item(task):
    inst = feasible(task)
    figures = dict(inst.certificate.objective)
    assert_malformed(inst, fenced({"feasible": True, "objective": figures}))
    assert_malformed(inst, fenced(figures))


WRONG = {"null": None, "int": 1, "float": 1.5, "bool": True, "list": [], "dict": {}}


@pytest.mark.parametrize("task", ["procurement_planning", "material_allocation", "educational_resource_planning"])
@pytest.mark.parametrize("kind", list(WRONG))
def test_a_wrong_type_in_a_row_field_fails_every_item(task, kind):
    inst = feasible(task)
    key = tc_of(task).plan_key
    for field in inst.reference[key][0]:
        answer = ref(inst)
        if field in ("quantity", "units") and kind in ("int",):
            continue
        answer[key][0][field] = WRONG[kind]
        assert_malformed(inst, fenced(answer))


@pytest.mark.parametrize("task", TASKS)
def test_a_duplicated_row_or_student_fails_every_item(task):
    inst = feasible(task)
    key = tc_of(task).plan_key
    answer = ref(inst)
    if task == "student_grouping":
        answer[key][0].append(answer[key][1][0])
    else:
        answer[key].append(dict(answer[key][0]))
    assert_malformed(inst, fenced(answer))


@pytest.mark.parametrize("task", TASKS)
def test_an_unknown_name_fails_every_item(task):
    inst = feasible(task)
    key = tc_of(task).plan_key
    answer = ref(inst)
    if task == "student_grouping":
        answer[key][0][0] = "Nobody"
    else:
        field = next(k for k, v in answer[key][0].items() if isinstance(v, str))
        answer[key][0][field] = "no-such-" + field
    assert_malformed(inst, fenced(answer))


@pytest.mark.parametrize("task", ["procurement_planning", "material_allocation"])
def test_quantities_must_be_whole_non_negative_and_within_the_physical_bound(task):
    inst = feasible(task)
    key, field = ("orders", "quantity") if task == "procurement_planning" else ("shipments", "units")
    for bad in (-1, 2.5, 10**12, "7"):
        answer = ref(inst)
        answer[key][0][field] = bad
        assert_malformed(inst, fenced(answer))
    answer = ref(inst)
    answer[key][0][field] = float(answer[key][0][field])
    assert graded(inst, fenced(answer)).all_pass == 1
    answer = ref(inst)
    answer[key].append({**answer[key][0], field: 0})  # a zero line is no order, but a line listed twice is
    assert_malformed(inst, fenced(answer))


def test_a_zero_quantity_line_is_harmless():
    inst = feasible("procurement_planning")
    d = tc_of(inst.task).data(inst)
    used = {(r["supplier"], r["item"], r["week"]) for r in inst.reference["orders"]}
    free = next((s, i, d.periods[t]) for s, i, t in d.cells if (s, i, d.periods[t]) not in used)
    answer = ref(inst)
    answer["orders"].append({"quantity": 0, "supplier": free[0], "item": free[1], "week": free[2]})
    assert graded(inst, fenced(answer)).all_pass == 1


@pytest.mark.parametrize("change", ["fewer", "more", "empty"])
def test_a_grouping_with_the_wrong_number_of_groups_or_an_empty_group_fails_every_item(change):
    inst = feasible("student_grouping")
    answer = ref(inst)
    if change == "fewer":
        answer["groups"] = [answer["groups"][0] + answer["groups"][1], *answer["groups"][2:]]
    elif change == "more":
        answer["groups"] = [answer["groups"][0][:1], answer["groups"][0][1:], *answer["groups"][1:]]
    else:
        answer["groups"][-1] = []
    assert_malformed(inst, fenced(answer))


def test_a_lesson_missing_from_the_assignments_fails_every_item():
    inst = feasible("educational_resource_planning")
    answer = ref(inst)
    answer["assignments"].pop()
    assert_malformed(inst, fenced(answer))


# -- the responders on a generated set ------------------------------------------------
def test_oracle_passes_everything_and_the_baseline_stays_well_below():
    instances = [o.instance for o in generate(24, 3, GenerateOptions(family="allocation"), 1) if o.instance]
    assert len(instances) >= 20 and {i.task for i in instances} == set(TASKS)
    oracle_grades = [grade(i, oracle(i)) for i in instances]
    base_grades = [grade(i, baseline(i)) for i in instances]
    assert all(g.all_pass for g in oracle_grades)
    all_pass = sum(g.all_pass for g in base_grades) / len(base_grades)
    avg_pass = sum(g.avg_pass for g in base_grades) / len(base_grades)
    assert all_pass <= 0.25, all_pass
    assert avg_pass > all_pass  # locally right, globally wrong
    assert all(g.parse_error is None for g in base_grades)


def test_grades_are_stable_for_an_instance_round_tripped_through_json():
    inst = instance_at("material_allocation", 8, 0, "small", True)
    if inst is None:
        pytest.skip("no instance")
    again = Instance.model_validate_json(inst.model_dump_json())
    for text in (oracle(inst), baseline(inst)):
        assert grade(inst, text).model_dump() == grade(again, text).model_dump()
