"""Grading never raises, always answers per checklist item, and rewards only what it should.

Fixtures (tests/conftest.py): ``any_instance`` is a feasible meeting instance;
``feasible_instance`` / ``infeasible_instance`` run a test once per task type.
"""

from __future__ import annotations

import copy
import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbsolve.checkers.scheduling.checks import evaluate, read_plan
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.grading import QUALITY_ITEMS, REWARD_MODES, grade
from pbsolve.schema import Grade, Instance

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- helpers ----------------------------------------------------------------------------
def fenced(value: Any) -> str:
    return "Answer:\n```json\n" + json.dumps(value, allow_nan=True) + "\n```"


def assert_well_formed(inst: Instance, g: Grade, mode: str = "all_pass") -> None:
    """The invariants of every grade, whatever the response was."""
    assert isinstance(g, Grade)
    assert [r.id for r in g.items] == [c.id for c in inst.checklist]
    passed = [r.passed for r in g.items]
    assert g.all_pass == int(all(passed))
    assert g.avg_pass == pytest.approx(sum(passed) / len(passed))
    assert g.reward_mode == mode and 0.0 <= g.reward <= 1.0
    for r in g.items:
        assert isinstance(r.reason, str) and len(r.reason) <= 300
        assert not r.reason.startswith("checker error"), f"the checker crashed: {r.reason}"
        if not r.passed:
            assert r.reason.strip(), f"item {r.id} fails without a reason"


def graded(inst: Instance, response: Any, mode: str = "all_pass") -> Grade:
    g = grade(inst, response, mode)
    assert_well_formed(inst, g, mode)
    return g


def verdicts(g: Grade) -> dict[str, bool]:
    return {r.id: r.passed for r in g.items}


def rule_of(inst: Instance) -> dict[str, str]:
    return {c.id: c.rule for c in inst.checklist}


def failing_rules(inst: Instance, g: Grade) -> set[str]:
    rules = rule_of(inst)
    return {rules[r.id] for r in g.items if not r.passed}


def assert_malformed(inst: Instance, response: Any, parse_error: bool) -> None:
    """reward 0 in every mode, a reason on every item, parse_error set iff nothing parsed."""
    for mode in REWARD_MODES:
        g = graded(inst, response, mode)
        assert g.reward == 0.0 and g.all_pass == 0 and g.avg_pass == 0.0
        assert not any(r.passed for r in g.items)
        assert all(r.reason.strip() for r in g.items)
        assert (g.parse_error is not None) == parse_error
        if parse_error:
            assert g.parse_error.strip()


def reference(inst: Instance) -> dict[str, Any]:
    return copy.deepcopy(inst.reference)


# -- arbitrary input --------------------------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=5),
    max_leaves=25,
)


@FUZZ
@given(text=st.text())
def test_arbitrary_text_gets_a_well_formed_grade(any_instance, text):
    for mode in REWARD_MODES:
        graded(any_instance, text, mode)


@FUZZ
@given(value=json_values)
def test_arbitrary_json_value_in_a_fenced_block_gets_a_well_formed_grade(any_instance, value):
    for mode in REWARD_MODES:
        graded(any_instance, fenced(value), mode)


@FUZZ
@given(value=json_values)
def test_arbitrary_json_value_on_an_infeasible_instance_gets_a_well_formed_grade(any_infeasible_instance, value):
    graded(any_infeasible_instance, fenced(value))


def answer_like(inst: Instance) -> st.SearchStrategy[dict]:
    """Objects shaped like answers: right keys, a mix of valid, re-cased and junk values."""
    d = inst.data
    events = [e["id"] for e in d["events"]]
    slots = [s["id"] for s in d["slots"]]
    rooms = [r["id"] for r in d["rooms"]]
    rules = [r.id for r in inst.rules]
    terms = [t.id for t in inst.objective]
    junk = json_values

    def field(choices: list[str]) -> st.SearchStrategy:
        pick = st.sampled_from(choices)
        return st.one_of(pick, pick.map(str.lower), pick.map(str.upper), junk)

    row = st.fixed_dictionaries({}, optional={"event": field(events), "start": field(slots), "room": field(rooms)})
    return st.fixed_dictionaries(
        {},
        optional={
            "feasible": st.one_of(st.booleans(), junk),
            "schedule": st.one_of(st.lists(row, max_size=len(events) + 2), junk),
            "objective": st.one_of(st.dictionaries(st.sampled_from(terms), st.one_of(st.integers(), junk)), junk),
            "conflict": st.one_of(st.lists(st.one_of(st.sampled_from(rules), st.text(max_size=4)), max_size=6), junk),
        },
    )


@FUZZ
@given(data=st.data())
def test_answer_shaped_objects_get_a_well_formed_grade(feasible_instances, infeasible_instances, data):
    inst = data.draw(st.sampled_from([*feasible_instances.values(), *infeasible_instances.values()]))
    value = data.draw(answer_like(inst))
    for mode in REWARD_MODES:
        graded(inst, fenced(value), mode)


@FUZZ
@given(data=st.data())
def test_every_complete_plan_gets_a_verdict_on_every_rule(feasible_instances, data):
    inst = data.draw(st.sampled_from(list(feasible_instances.values())))
    d = TimetableData.model_validate(inst.data)
    schedule = [
        {"event": e.id, "start": d.slots[data.draw(st.sampled_from(d.starts(e)))].id,
         "room": data.draw(st.sampled_from([r.id for r in d.rooms]))}
        for e in d.events
    ]  # fmt: skip
    g = graded(inst, fenced({"feasible": True, "schedule": schedule, "objective": {}}))
    rules = rule_of(inst)
    assert verdicts(g)[next(c.id for c in inst.checklist if c.rule == "format")]
    assert all(r.reason != "not checked" for r in g.items)
    assert "validation" in failing_rules(inst, g)  # no figures stated
    assert {rules[r.id] for r in g.items if not r.passed} <= {r.id for r in inst.rules} | QUALITY_ITEMS


# -- degenerate input -------------------------------------------------------------------
def test_empty_string_is_malformed(any_instance):
    assert_malformed(any_instance, "", parse_error=True)


@pytest.mark.parametrize("response", [None, 7, b"{}", ["x"]], ids=lambda v: type(v).__name__)
def test_non_string_response_is_malformed(any_instance, response):
    assert_malformed(any_instance, response, parse_error=True)


def test_ten_megabytes_of_text_is_refused_quickly(any_instance):
    text = "x" * 10_000_000 + fenced(reference(any_instance))
    t0 = time.perf_counter()
    assert_malformed(any_instance, text, parse_error=True)
    assert time.perf_counter() - t0 < 5
    assert "too long" in grade(any_instance, text).parse_error


@pytest.mark.parametrize(
    "response",
    [
        "```json\n" + "[" * 40_000 + "]" * 40_000 + "\n```",
        '{"feasible": true, "schedule": ' + "[" * 40_000 + "]" * 40_000 + "}",
        '{"a": ' * 100_000 + "1" + "}" * 100_000,
    ],
    ids=["fenced-arrays", "bare-object-with-arrays", "nested-objects"],
)
def test_deeply_nested_json_is_malformed(any_instance, response):
    assert_malformed(any_instance, response, parse_error=True)


def test_moderately_nested_json_that_parses_is_graded(any_instance):
    answer = reference(any_instance)
    answer["schedule"] = json.loads("[" * 500 + "]" * 500)
    assert_malformed(any_instance, fenced(answer), parse_error=False)


# -- wrong types in every field of a correct answer --------------------------------------
WRONG = {"null": None, "int": 1, "float": 1.5, "bool": True, "str-true": "true", "list": [], "dict": {}}


def _set(answer: dict, path: tuple, value: Any) -> dict:
    target = answer
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return answer


SCHEDULE_PATHS = {  # field of a plan answer -> (path in the answer, the type it must have)
    "feasible": (("feasible",), bool),
    "schedule": (("schedule",), list),
    "schedule-row": (("schedule", 0), dict),
    "event": (("schedule", 0, "event"), str),
    "start": (("schedule", 0, "start"), str),
    "room": (("schedule", 0, "room"), str),
}
WRONG_PLAN_FIELDS = [
    pytest.param(path, value, id=f"{field}-{kind}")
    for field, (path, right) in SCHEDULE_PATHS.items()
    for kind, value in WRONG.items()
    if not isinstance(value, right)
]


@pytest.mark.parametrize(("path", "wrong"), WRONG_PLAN_FIELDS)
def test_wrong_type_in_a_plan_field_fails_every_item(any_instance, path, wrong):
    answer = _set(reference(any_instance), path, wrong)
    assert_malformed(any_instance, fenced(answer), parse_error=False)


@pytest.mark.parametrize("field", ["event", "start", "room"])
def test_an_unknown_id_in_a_plan_field_fails_every_item(feasible_instance, field):
    answer = reference(feasible_instance)
    answer["schedule"][0][field] = "no-such-" + field
    assert_malformed(feasible_instance, fenced(answer), parse_error=False)


@pytest.mark.parametrize("wrong", [v for k, v in WRONG.items() if k != "int"], ids=[k for k in WRONG if k != "int"])
@pytest.mark.parametrize("whole", [True, False], ids=["objective", "objective-figure"])
def test_wrong_type_in_the_stated_objective_fails_only_validation(feasible_instance, whole, wrong):
    answer = reference(feasible_instance)
    if whole:
        answer["objective"] = wrong
    else:
        first = feasible_instance.objective[0].id
        answer["objective"][first] = wrong
    g = graded(feasible_instance, fenced(answer))
    assert failing_rules(feasible_instance, g) == {"validation"}


@pytest.mark.parametrize("as_type", [str, bool], ids=["strings", "bools"])
def test_objective_figures_as_strings_or_bools_fail_only_validation(feasible_instance, as_type):
    answer = reference(feasible_instance)
    answer["objective"] = {k: as_type(v) for k, v in answer["objective"].items()}
    g = graded(feasible_instance, fenced(answer))
    assert failing_rules(feasible_instance, g) == {"validation"}


def test_objective_figures_as_whole_number_floats_read_as_integers(feasible_instance):
    answer = reference(feasible_instance)
    answer["objective"] = {k: float(v) for k, v in answer["objective"].items()}
    assert graded(feasible_instance, fenced(answer)).all_pass == 1


def test_objective_figures_as_fractional_floats_fail_only_validation(feasible_instance):
    answer = reference(feasible_instance)
    answer["objective"] = {k: v + 0.5 for k, v in answer["objective"].items()}
    g = graded(feasible_instance, fenced(answer))
    assert failing_rules(feasible_instance, g) == {"validation"}


@pytest.mark.parametrize("missing", ["event", "start", "room"])
def test_a_schedule_row_missing_a_field_fails_every_item(any_instance, missing):
    answer = reference(any_instance)
    del answer["schedule"][0][missing]
    assert_malformed(any_instance, fenced(answer), parse_error=False)


def test_an_event_missing_from_the_schedule_fails_every_item(feasible_instance):
    answer = reference(feasible_instance)
    answer["schedule"].pop()
    assert_malformed(feasible_instance, fenced(answer), parse_error=False)


@pytest.mark.parametrize("key", ["feasible", "schedule"])
def test_a_missing_top_level_field_fails_every_item(any_instance, key):
    answer = reference(any_instance)
    del answer[key]
    assert_malformed(any_instance, fenced(answer), parse_error=False)


def test_only_the_objective_figures_and_no_schedule_fails_every_item(feasible_instance):
    figures = dict(feasible_instance.certificate.objective)
    assert_malformed(feasible_instance, fenced({"feasible": True, "objective": figures}), parse_error=False)
    assert_malformed(feasible_instance, fenced({"objective": figures}), parse_error=False)
    assert_malformed(feasible_instance, fenced(figures), parse_error=False)


def test_an_event_listed_twice_fails_the_format_item(feasible_instance):
    answer = reference(feasible_instance)
    first = answer["schedule"][0]
    other = next(s["id"] for s in feasible_instance.data["slots"] if s["id"] != first["start"])
    answer["schedule"].append({**first, "start": other})  # hedging: the same event at a second time
    g = graded(feasible_instance, fenced(answer))
    format_item = next(c.id for c in feasible_instance.checklist if c.rule == "format")
    assert not verdicts(g)[format_item]
    assert "more than once" in next(r.reason for r in g.items if r.id == format_item)
    assert g.reward == 0.0


def test_an_event_listed_twice_with_identical_rows_still_fails(any_instance):
    answer = reference(any_instance)
    answer["schedule"].append(dict(answer["schedule"][0]))
    assert_malformed(any_instance, fenced(answer), parse_error=False)


# -- several JSON blocks --------------------------------------------------------------------
def test_with_several_json_blocks_the_last_one_is_graded(any_instance):
    good, bad = reference(any_instance), {"feasible": True, "schedule": {}}
    assert graded(any_instance, fenced(bad) + "\n" + fenced(good)).all_pass == 1
    assert graded(any_instance, fenced(good) + "\n" + fenced(bad)).all_pass == 0


def test_a_correct_bare_object_after_a_wrong_fenced_block_is_the_graded_answer(any_instance):
    text = fenced({"feasible": True, "schedule": {}}) + "\nCorrection: " + json.dumps(reference(any_instance))
    assert graded(any_instance, text).all_pass == 1


def test_a_wrong_bare_object_after_a_correct_fenced_block_fails(any_instance):
    text = fenced(reference(any_instance)) + "\nOr maybe: " + json.dumps({"feasible": True, "schedule": {}})
    assert graded(any_instance, text).all_pass == 0


def test_a_broken_answer_after_a_correct_one_fails(any_instance):
    text = fenced(reference(any_instance)) + "\nFinal: " + json.dumps(reference(any_instance))[:-1] + ",}"
    assert_malformed(any_instance, text, parse_error=True)


def test_a_truncated_answer_after_a_correct_one_fails(any_instance):
    text = fenced(reference(any_instance)) + "\nFinal: " + json.dumps(reference(any_instance))[:-1]
    assert graded(any_instance, text).all_pass == 0


def test_a_correct_answer_inside_an_unclosed_think_fails(any_instance):
    assert_malformed(any_instance, "<think>" + fenced(reference(any_instance)), parse_error=True)


# -- the reference answer ---------------------------------------------------------------
@pytest.mark.parametrize("mode", ["all_pass", "avg_pass", "feasible"])
def test_reference_answer_passes_every_item_on_a_feasible_instance(feasible_instance, mode):
    g = graded(feasible_instance, json.dumps(feasible_instance.reference), mode)
    assert all(r.passed for r in g.items) and g.reward == 1.0 and g.parse_error is None


@pytest.mark.parametrize("mode", ["all_pass", "avg_pass", "feasible"])
def test_reference_answer_passes_every_item_on_an_infeasible_instance(infeasible_instance, mode):
    g = graded(infeasible_instance, json.dumps(infeasible_instance.reference), mode)
    assert all(r.passed for r in g.items) and g.reward == 1.0


# -- feasible instances -----------------------------------------------------------------
@pytest.mark.parametrize(
    "mode", ["all_pass", "avg_pass", "feasible"]
)
def test_declaring_a_feasible_instance_infeasible_earns_nothing(feasible_instance, mode):
    rules = [r.id for r in feasible_instance.rules]
    g = graded(feasible_instance, fenced({"feasible": False, "conflict": rules[:2]}), mode)
    assert g.reward == 0.0


def test_declaring_a_feasible_instance_infeasible_fails_every_rule_item(feasible_instance):
    g = graded(feasible_instance, fenced({"feasible": False, "conflict": [feasible_instance.rules[0].id]}))
    assert {r.id for r in feasible_instance.rules} | QUALITY_ITEMS <= failing_rules(feasible_instance, g)


def test_a_wrong_stated_objective_fails_only_the_validation_item(feasible_instance):
    answer = reference(feasible_instance)
    first = feasible_instance.objective[0].id
    answer["objective"][first] += 1
    g = graded(feasible_instance, fenced(answer))
    assert failing_rules(feasible_instance, g) == {"validation"}
    assert "states" in next(r.reason for r in g.items if rule_of(feasible_instance)[r.id] == "validation")


def test_avg_pass_reward_is_the_fraction_of_items_passed(feasible_instance):
    answer = reference(feasible_instance)
    answer["objective"] = {}
    g = graded(feasible_instance, fenced(answer), "avg_pass")
    n = len(feasible_instance.checklist)
    assert g.reward == pytest.approx((n - 1) / n) == pytest.approx(g.avg_pass)


def test_feasible_mode_ignores_a_wrong_stated_objective(feasible_instance):
    answer = reference(feasible_instance)
    answer["objective"] = {}
    assert graded(feasible_instance, fenced(answer), "all_pass").reward == 0.0
    assert graded(feasible_instance, fenced(answer), "feasible").reward == 1.0


def _valid_suboptimal_answer(inst: Instance) -> dict | None:
    """A plan one move from the reference that keeps every rule but misses the optimum."""
    d = TimetableData.model_validate(inst.data)
    plan, _ = read_plan(d, inst.reference)
    assert plan is not None
    for e in d.events:
        for s in d.starts(e):
            for room in d.rooms:
                trial = {**plan, e.id: (s, room.id)}
                checks, values = evaluate(d, inst.rules, inst.objective, trial)
                if all(ok for ok, _ in checks.values()) and values != inst.certificate.objective:
                    rows = [{"event": x.id, "start": d.slots[trial[x.id][0]].id, "room": trial[x.id][1]} for x in d.events]
                    return {"feasible": True, "schedule": rows, "objective": values}
    return None


def test_feasible_mode_ignores_a_suboptimal_but_valid_plan(feasible_instance):
    answer = _valid_suboptimal_answer(feasible_instance)
    if answer is None:
        pytest.skip("no valid suboptimal plan one move from the reference")
    text = fenced(answer)
    assert failing_rules(feasible_instance, graded(feasible_instance, text)) == {"objective"}
    assert graded(feasible_instance, text, "all_pass").reward == 0.0
    assert graded(feasible_instance, text, "feasible").reward == 1.0
    n = len(feasible_instance.checklist)
    assert graded(feasible_instance, text, "avg_pass").reward == pytest.approx((n - 1) / n)


def test_feasible_mode_still_requires_every_rule(feasible_instances):
    for inst in feasible_instances.values():
        answer = reference(inst)
        answer["schedule"].pop()
        assert graded(inst, fenced(answer), "feasible").reward == 0.0


def test_event_and_room_ids_are_case_insensitive_and_hours_may_drop_the_leading_zero(any_instance):
    answer = reference(any_instance)
    assert any(row["start"].startswith("0") for row in answer["schedule"]), "fixture should use a 0h:00 slot"
    for row in answer["schedule"]:
        row["event"] = row["event"].lower()
        row["room"] = row["room"].upper()
        row["start"] = row["start"].removeprefix("0")
    assert graded(any_instance, fenced(answer)).all_pass == 1


def test_slot_ids_are_case_and_space_insensitive(feasible_instance):
    answer = reference(feasible_instance)
    for row in answer["schedule"]:
        row["start"] = "  " + row["start"].swapcase().replace(" ", "   ") + " "
        row["event"] = row["event"].swapcase()
    assert graded(feasible_instance, fenced(answer)).all_pass == 1


# -- infeasible instances ---------------------------------------------------------------
def _declare(conflict: list[str]) -> str:
    return fenced({"feasible": False, "conflict": conflict})


def _conflict_item(inst: Instance, g: Grade) -> bool:
    return verdicts(g)[next(c.id for c in inst.checklist if c.rule == "conflict")]


def _conflict_reason(inst: Instance, g: Grade) -> str:
    item = next(c.id for c in inst.checklist if c.rule == "conflict")
    return next(r.reason for r in g.items if r.id == item)


def test_naming_a_certified_conflict_set_passes(infeasible_instance):
    for conflict in infeasible_instance.certificate.conflict_sets:
        g = graded(infeasible_instance, _declare(list(conflict)))
        assert g.all_pass == 1, conflict


def test_naming_a_certified_conflict_set_in_another_order_and_case_passes(infeasible_instance):
    conflict = [r.lower() for r in reversed(infeasible_instance.certificate.conflict_sets[0])]
    assert graded(infeasible_instance, _declare(conflict)).all_pass == 1


def test_naming_every_rule_fails_the_conflict_item(infeasible_instance):
    every = [r.id for r in infeasible_instance.rules]
    if any(set(s) == set(every) for s in infeasible_instance.certificate.conflict_sets):
        pytest.skip("every rule together is itself a minimal conflict")
    g = graded(infeasible_instance, _declare(every))
    assert not _conflict_item(infeasible_instance, g)
    assert failing_rules(infeasible_instance, g) == {"conflict"}
    assert g.reward == 0.0


def test_naming_a_superset_of_a_conflict_set_fails(infeasible_instance):
    conflict = list(infeasible_instance.certificate.conflict_sets[0])
    extra = next(r.id for r in infeasible_instance.rules if r.id not in conflict)
    g = graded(infeasible_instance, _declare(conflict + [extra]))
    assert not _conflict_item(infeasible_instance, g)
    assert "not minimal" in _conflict_reason(infeasible_instance, g)


def test_naming_a_strict_subset_of_a_conflict_set_fails(infeasible_instance):
    conflict = list(infeasible_instance.certificate.conflict_sets[0])
    assert not _conflict_item(infeasible_instance, graded(infeasible_instance, _declare(conflict[:-1])))


@pytest.mark.parametrize("unknown", [["R99"], ["X"], [""], ["format"]], ids=["R99", "X", "empty", "format"])
def test_unknown_rule_ids_fail_the_conflict_item(infeasible_instance, unknown):
    assert not _conflict_item(infeasible_instance, graded(infeasible_instance, _declare(unknown)))


def test_a_conflict_set_padded_with_an_unknown_rule_id_fails(infeasible_instance):
    conflict = list(infeasible_instance.certificate.conflict_sets[0]) + ["R99"]
    g = graded(infeasible_instance, _declare(conflict))
    assert not _conflict_item(infeasible_instance, g)
    assert "unknown" in _conflict_reason(infeasible_instance, g)


@pytest.mark.parametrize("conflict", [[], "R1", None, [1, 2], {"R1": True}], ids=["empty", "str", "null", "ints", "dict"])
def test_an_infeasibility_declaration_without_a_rule_list_fails_every_item(any_infeasible_instance, conflict):
    answer = {"feasible": False, "conflict": conflict}
    assert_malformed(any_infeasible_instance, fenced(answer), parse_error=False)


def test_claiming_a_plan_for_an_infeasible_instance_earns_nothing_in_all_pass(any_infeasible_instance):
    d = TimetableData.model_validate(any_infeasible_instance.data)
    schedule = [{"event": e.id, "start": d.slots[d.starts(e)[0]].id, "room": d.rooms[0].id} for e in d.events]
    for mode in ("all_pass", "feasible"):
        assert graded(any_infeasible_instance, fenced({"feasible": True, "schedule": schedule}), mode).reward == 0.0


# -- malformed answers ------------------------------------------------------------------
@pytest.mark.parametrize(
    "response",
    ["no json here", "```json\n{oops}\n```", '{"feasible": NaN}', "[1, 2, 3]", "<think>{}</think>"],
    ids=["prose", "bad-fence", "nan", "array", "only-thinking"],
)
def test_a_response_where_nothing_parses_sets_parse_error(any_instance, response):
    assert_malformed(any_instance, response, parse_error=True)


@pytest.mark.parametrize("value", [[1, 2], "text", 3, None, {}], ids=["list", "str", "int", "null", "empty-object"])
def test_a_parsed_non_answer_has_no_parse_error_but_fails_every_item(any_instance, value):
    assert_malformed(any_instance, fenced(value), parse_error=False)
