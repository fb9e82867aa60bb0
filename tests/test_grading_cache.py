"""What grading keeps between answers (issue 18): an instance's validation, parsed data,
lookups, parameters and the way each checklist item is judged are worked out once and kept
in ``Instance.memo`` -- and never answer for contents the instance no longer has -- and the
name-normalisation caches shared by every instance are pure and bounded."""

from __future__ import annotations

import copy
import re

import pytest

from pbsolve import checking
from pbsolve.checker_kit import Names
from pbsolve.checkers.scheduling import checks as sched_checks
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.checking import exact_names, norm
from pbsolve.grading import InvalidGroundTruth, grade
from pbsolve.llm.responders import oracle
from pbsolve.schema import Instance


def fresh(inst: Instance) -> Instance:
    """A new instance object with the same contents (an empty memo)."""
    return Instance.model_validate(inst.model_dump(mode="json"))


def counted_validations(model: type, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The inputs ``model.model_validate`` is called with from now on (the test's own list)."""
    real = model.model_validate
    calls: list[object] = []

    def counting(obj: object, *args: object, **kwargs: object) -> object:
        calls.append(obj)
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(model, "model_validate", counting)
    return calls


def test_grading_an_instance_again_reads_its_data_no_more(any_instance, monkeypatch):
    inst = fresh(any_instance)
    calls = counted_validations(TimetableData, monkeypatch)
    assert grade(inst, oracle(inst)).all_pass == 1
    after_first = len(calls)
    for text in (oracle(inst), "{}", "no answer"):
        grade(inst, text)
    assert after_first >= 1 and len(calls) == after_first


@pytest.mark.parametrize("task", ["procurement_planning", "urban_traffic_planning", "project_planning",
                                  "emergency_planning", "volunteer_scheduling"])  # fmt: skip
def test_validating_an_instance_reads_its_data_once_for_the_checker_too(task, monkeypatch):
    from pbsolve.family import checker
    from tests.instances import find

    found = find(task, 0)
    assert found is not None
    inst = fresh(found)
    module = checker(inst.family)
    calls = counted_validations(module.task_checker(inst.task).data_type, monkeypatch)
    assert grade(inst, oracle(inst)).all_pass == 1  # validation (the data read, the reference checked), then grading
    assert len(calls) == 1
    assert module.read_data(inst) is module.task_checker(inst.task).data(inst)


def test_an_instance_whose_data_is_replaced_is_graded_against_the_new_data(any_instance):
    """Replacing ``data`` after a grade drops the parsed data with the verdict: the reference
    answer is checked again against the new data (here: rooms too small for every event)."""
    inst = fresh(any_instance)
    assert any(r.kind == "room_fit" for r in inst.rules), "the fixture has a room_fit rule"
    assert grade(inst, oracle(inst)).all_pass == 1
    data = copy.deepcopy(inst.data)
    for room in data["rooms"]:
        room["seats"] = 1
    if all(e["size"] <= 1 for e in data["events"]):
        pytest.skip("every event fits a one-seat room")
    inst.data = data
    with pytest.raises(InvalidGroundTruth, match="reference answer fails"):
        grade(inst, oracle(inst))


def test_an_instance_whose_checklist_is_replaced_is_graded_on_the_new_checklist(any_instance):
    inst = fresh(any_instance)
    grade(inst, oracle(inst))
    inst.checklist = inst.checklist[:-1]
    g = grade(inst, oracle(inst))
    assert [i.id for i in g.items] == [it.id for it in inst.checklist]
    assert g.all_pass == 1


def test_a_copy_of_a_graded_instance_keeps_no_cache_of_the_original(any_instance):
    inst = fresh(any_instance)
    grade(inst, oracle(inst))
    copied = inst.model_copy(update={"checklist": inst.checklist[1:]})
    assert [i.id for i in grade(copied, oracle(copied)).items] == [it.id for it in inst.checklist[1:]]


SPACES = re.compile(r"\s+")
ODD_NAMES = [
    "Room A",
    "room  a",
    " ROOM A ",
    "Room\tA",
    "09:00",
    "9:00",
    " 09:00",
    "0900",
    "",
    "   ",
    "Ünïcödé  Nämé",
    "x" * 500,
]


@pytest.mark.parametrize("text", ODD_NAMES)
def test_a_cached_normalisation_is_the_normalisation(text):
    expected = SPACES.sub(" ", text.strip().lower())
    assert norm(text) == expected
    assert norm(text) == expected  # the second call is answered by the cache


@pytest.mark.parametrize("text", ODD_NAMES)
def test_a_cached_timetable_normalisation_reads_a_leading_zero_hour_alike(text):
    key = SPACES.sub(" ", text.strip().lower())
    expected = key[1:] if len(key) == 5 and key[0] == "0" and key[2] == ":" else key
    assert sched_checks._norm(text) == expected
    assert sched_checks._norm(text) == expected


def test_the_normalisation_cache_stays_bounded_whatever_the_answers_name():
    for n in range(3 * checking._NORM_CACHE_SIZE):
        norm(f"name {n}")
    assert len(checking._norm_cache) <= checking._NORM_CACHE_SIZE
    assert norm("Name  7") == "name 7"


def test_exact_name_tables_read_every_text_as_its_normalised_lookup():
    names = ["Room A", "room a", "Lab", "09:00", "Hall  B"]
    table = {norm(n): n for n in names}
    exact = exact_names(table, names)
    for text in [*names, *table, *ODD_NAMES, "LAB", "hall b", "Cellar"]:
        found = exact.get(text)
        assert (found if found is not None else table.get(norm(text))) == table.get(norm(text))


def test_an_allocation_name_table_finds_names_as_before():
    names = ["Depot North", "depot north", "Depot South"]
    table = Names(names)
    assert dict(table) == {norm(n): n for n in names}
    for text in [*names, "DEPOT  SOUTH", " depot north ", "Depot East"]:
        assert table.find(text) == {norm(n): n for n in names}.get(norm(text))


def recovery_instance(task: str) -> Instance:
    from tests.instances import find

    found = find(task, 0, include=("exception_recovery",), hard=True)
    assert found is not None and found.recovery is not None
    return fresh(found)


def counted_bindings(inst: Instance, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of rules of each evaluator the instance's task checker binds from now on."""
    from pbsolve.family import checker

    module = checker(inst.family)
    tc = module.task_checker(inst.task) if hasattr(module, "task_checker") else sched_checks.TIMETABLE
    bound: list[int] = []
    real = type(tc).evaluator

    def counting(self, rules, objective, typed):  # type: ignore[no-untyped-def]
        bound.append(len(rules))
        return real(self, rules, objective, typed)

    monkeypatch.setattr(type(tc), "evaluator", counting)
    return bound


@pytest.mark.parametrize("task", ["volunteer_scheduling", "course_timetabling"])  # the kit's evaluator; the timetable's
def test_a_recovery_plans_rules_are_looked_up_once_per_instance(task, monkeypatch):
    """The recovery plan is judged as the main plan is: by an evaluator bound once per
    instance (each rule's check and parameters looked up once), not rule by rule per answer."""
    inst = recovery_instance(task)
    bound = counted_bindings(inst, monkeypatch)
    for _ in range(3):
        assert grade(inst, oracle(inst)).all_pass == 1
    assert inst.recovery is not None
    scenario = len(inst.recovery.scenario)
    assert sorted(bound) == [len(inst.rules), len(inst.rules) + scenario]  # the main plan's, the recovery plan's


@pytest.mark.parametrize("part", ["rules", "scenario"])
def test_a_recovery_evaluator_is_bound_again_for_replaced_rules_or_scenario(part, monkeypatch):
    """Asked directly (without grade's check of the instance's parts), the checker binds the
    recovery plan's evaluator again when the instance's rules or scenario are other lists."""
    from pbsolve.family import checker

    inst = recovery_instance("volunteer_scheduling")
    assert inst.recovery is not None and grade(inst, oracle(inst)).all_pass == 1
    bound = counted_bindings(inst, monkeypatch)
    module = checker(inst.family)
    module.check_answer(inst, inst.reference)
    assert bound == []
    if part == "rules":
        inst.rules = list(inst.rules)
    else:
        inst.recovery.scenario = list(inst.recovery.scenario)
    verdicts = module.check_answer(inst, inst.reference)
    assert all(ok for ok, _ in verdicts.values())
    n = len(inst.rules) + len(inst.recovery.scenario)
    assert bound == ([len(inst.rules), n] if part == "rules" else [n])  # the main plan's binds again with its rules
