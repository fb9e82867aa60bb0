"""The grading paths around the checkers (mutation campaign survivors), one behaviour each.

How a checker's verdicts are taken (``grading._verdicts``), which items the `feasible`
mode counts (``grading._Checklist``), when an instance is validated again
(``grading._validated``), what the generic flow works out once per instance and what it
shows the mechanisms (``checking._prepared`` and ``checking.check_answer``), and the
reasons of two answer checks (``answer_checks``). Counting spies stand in for timings: a
step done once per instance is shown by how often it runs.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import pytest

from pbsolve import checking, grading
from pbsolve.answer_checks import id_set_verdict, validation_verdict
from pbsolve.checkers.allocation import TASKS
from pbsolve.checkers.allocation import check_answer as allocation_check_answer
from pbsolve.checkers.scheduling import check_answer as scheduling_check_answer
from pbsolve.checkers.scheduling import near_miss
from pbsolve.grading import GradingError, grade, is_validity_item
from pbsolve.llm.responders import oracle
from pbsolve.schema import Instance
from tests.instances import find, instance_at

EDU = "educational_resource_planning"


def _feasible() -> Instance:
    inst = instance_at(EDU, 0, 0)
    assert inst is not None and inst.certificate.status == "optimal"
    return inst.model_copy()


def _infeasible() -> Instance:
    inst = find("procurement_planning", 6, "small", ("infeasibility_detection",), "infeasible")
    assert inst is not None, "the generator no longer gives an infeasible instance"
    return inst.model_copy()


# -- answer checks --------------------------------------------------------------------------------
def test_id_set_verdict_counts_the_missing_ids() -> None:
    assert id_set_verdict(["a"], ["A", "B"], ["A", "B", "C"], "binding") == (
        False,
        "'binding' misses 1 and wrongly adds 0",
    )


def test_id_set_verdict_counts_the_wrongly_added_ids() -> None:
    assert id_set_verdict([" a ", "b", "C"], ["A"], ["A", "B", "C"], "binding") == (
        False,
        "'binding' misses 0 and wrongly adds 2",
    )


def test_id_set_verdict_counts_both_when_the_sets_cross() -> None:
    assert id_set_verdict(["B"], ["A"], ["A", "B"], "binding") == (False, "'binding' misses 1 and wrongly adds 1")


def test_validation_verdict_accepts_a_whole_float_as_its_integer() -> None:
    assert validation_verdict({"objective": {"cost": 3.0}}, {"cost": 3}) == (True, "stated figures match the plan")


def test_validation_verdict_does_not_read_true_as_one() -> None:
    assert validation_verdict({"objective": {"cost": True}}, {"cost": 1}) == (
        False,
        "'objective.cost' is missing or not an integer",
    )


def test_validation_verdict_does_not_read_a_numeric_string() -> None:
    assert validation_verdict({"objective": {"cost": "3"}}, {"cost": 3}) == (
        False,
        "'objective.cost' is missing or not an integer",
    )


# -- taking a checker's verdicts ---------------------------------------------------------------
def _taken(verdicts: Any, ids: list[str]) -> list[tuple[bool, str]]:
    module = SimpleNamespace(check_answer=lambda instance, answer: verdicts)
    return grading._verdicts(_feasible(), module, {}, ids)  # type: ignore[arg-type]


def test_verdicts_keeps_a_usual_verdict_as_it_is() -> None:
    usual = (True, "holds")
    (got,) = _taken({"a": usual}, ["a"])
    assert got is usual


def test_verdicts_turns_a_list_verdict_into_a_tuple() -> None:
    assert _taken({"a": [False, "too many"]}, ["a"]) == [(False, "too many")]


def test_verdicts_turns_a_reason_that_is_no_string_into_one() -> None:
    got = _taken({"a": (True, 5), "b": (False, None)}, ["a", "b"])
    assert got == [(True, "5"), (False, "None")]
    assert all(type(reason) is str for _, reason in got)


def test_verdicts_follow_the_order_of_the_ids() -> None:
    assert _taken({"a": (True, "x"), "b": (False, "y")}, ["b", "a"]) == [(False, "y"), (True, "x")]


def test_verdicts_refuse_a_verdict_of_three_parts() -> None:
    with pytest.raises(GradingError, match="gave no verdict"):
        _taken({"a": (True, "x", "extra")}, ["a"])


def test_verdicts_refuse_a_verdict_whose_first_part_is_no_bool() -> None:
    with pytest.raises(GradingError, match="gave no verdict"):
        _taken({"a": ("yes", "x")}, ["a"])


# -- the feasible mode's items -------------------------------------------------------------------
def test_feasible_mode_counts_only_validity_items_of_a_feasible_instance() -> None:
    inst = _feasible()
    counts = grading._Checklist(inst).feasible_counts
    assert counts == tuple(is_validity_item(inst, it.rule) for it in inst.checklist)
    assert True in counts and False in counts, "the instance has validity items and others"


def test_feasible_mode_counts_every_item_of_an_infeasible_instance() -> None:
    inst = _infeasible()
    assert not all(is_validity_item(inst, it.rule) for it in inst.checklist), "some item is no validity item"
    assert grading._Checklist(inst).feasible_counts == (True,) * len(inst.checklist)


# -- validating an instance once --------------------------------------------------------------
def _count_validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = grading._validate

    def counting(instance: Instance) -> Any:
        calls.append(instance.id)
        return real(instance)

    monkeypatch.setattr(grading, "_validate", counting)
    return calls


def test_an_instance_is_validated_once_for_many_grades(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _feasible()
    calls = _count_validations(monkeypatch)
    for _ in range(3):
        assert grade(inst, oracle(inst)).all_pass == 1
    assert len(calls) == 1


def test_an_instance_whose_rules_are_replaced_is_validated_once_more_and_then_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inst = _feasible()
    calls = _count_validations(monkeypatch)
    grade(inst, oracle(inst))
    inst.rules = list(inst.rules)
    for _ in range(3):
        assert grade(inst, oracle(inst)).all_pass == 1
    assert len(calls) == 2


def test_replacing_an_instance_part_drops_what_was_cached_for_it() -> None:
    inst = _feasible()
    grade(inst, oracle(inst))
    inst.memo("tests.sentinel", lambda: "old")
    inst.rules = list(inst.rules)
    grade(inst, oracle(inst))
    assert inst.memo("tests.sentinel", lambda: "new") == "new"


def test_an_unchanged_instance_keeps_what_was_cached_for_it() -> None:
    inst = _feasible()
    grade(inst, oracle(inst))
    inst.memo("tests.sentinel", lambda: "old")
    grade(inst, oracle(inst))
    assert inst.memo("tests.sentinel", lambda: "new") == "old"


# -- the generic flow --------------------------------------------------------------------------
def _count_item_plans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = checking._item_plan

    def counting(item_id: str, rule: str) -> Any:
        calls.append(item_id)
        return real(item_id, rule)

    monkeypatch.setattr(checking, "_item_plan", counting)
    return calls


def test_how_each_item_is_judged_is_worked_out_once_per_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _feasible()
    calls = _count_item_plans(monkeypatch)
    for _ in range(3):
        allocation_check_answer(inst, inst.reference)
    assert calls == [it.id for it in inst.checklist]


def test_a_replaced_checklist_is_worked_out_again(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _feasible()
    calls = _count_item_plans(monkeypatch)
    allocation_check_answer(inst, inst.reference)
    inst.checklist = inst.checklist[:-1]
    got = allocation_check_answer(inst, inst.reference)
    assert list(got) == [it.id for it in inst.checklist]
    assert len(calls) == 2 * len(inst.checklist) + 1


class _Probe:
    """A mechanism judging one item without needing a plan: it reports what it was shown."""

    id = "tests_probe"
    items = (SimpleNamespace(rule="probe", needs_plan=False),)

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def verdicts(self, ctx: Any) -> dict[str, tuple[bool, str]]:
        self.seen.append(ctx)
        return {"probe": (True, "seen")}


def _probed(monkeypatch: pytest.MonkeyPatch, answer: dict[str, Any]) -> tuple[Instance, Any]:
    base = _feasible()
    item = base.checklist[0].model_copy(update={"id": "PROBE", "rule": "probe"})
    inst = base.model_copy(update={"checklist": [*base.checklist, item]})
    probe = _Probe()
    monkeypatch.setitem(checking.ITEM_OWNERS, "probe", probe)
    assert allocation_check_answer(inst, answer)["PROBE"] == (True, "seen")
    (ctx,) = probe.seen
    return inst, ctx


def test_mechanisms_see_the_plan_reading_and_its_verdicts_and_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    inst, ctx = _probed(monkeypatch, copy.deepcopy(_feasible().reference))
    tc = TASKS[EDU]
    assert ctx.why == "complete plan"
    verdicts, values = tc.evaluate(ctx.data, inst.rules, inst.objective, ctx.plan, tc.typed(inst))
    assert ctx.verdicts == verdicts and ctx.values == values
    assert set(ctx.verdicts) == {r.id for r in inst.rules}


def test_mechanisms_see_why_a_plan_did_not_read_and_no_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    _, ctx = _probed(monkeypatch, {"feasible": True, "assignments": "none"})
    assert ctx.plan is None
    assert ctx.why == "'assignments' is missing or not a list"
    assert ctx.verdicts == {} and ctx.values == {}


def test_grading_keeps_its_lookups_where_the_near_miss_search_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    base = instance_at("exam_scheduling", 0, 0)
    assert base is not None and base.certificate.status == "optimal"
    inst = base.model_copy()
    graded = scheduling_check_answer(inst, copy.deepcopy(inst.reference))
    assert all(passed for passed, _ in graded.values())
    monkeypatch.setattr(near_miss, "Lookups", lambda data: pytest.fail("the lookups were built again"))
    assert near_miss._lookups(inst, near_miss._data(inst)) is not None
