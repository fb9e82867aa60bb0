"""Names a rule brings into its instance (``Params.adds``: a new incident) are known to the
items read beside it: the instance's own additions to its rules and objective, and the
recovery scenario's (with the instance's) to the scenario and the recovery objective. A
rule naming what only the scenario adds is still refused outside it."""

from __future__ import annotations

from typing import Annotated, Any

import pytest

from pbsolve import params
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import validate_instance
from pbsolve.params import Names, Params
from pbsolve.schema import Instance, Rule
from tests.reference_helpers import refusal

Day = Annotated[str, Names("day")]


class Data:
    """Two days."""

    week = "short"

    def names(self, what: str) -> frozenset[str]:
        return {"day": frozenset({"Mon", "Tue"}), "room": frozenset({"A"})}[what]


class Holiday(Params):
    """A rule that brings a day into the instance."""

    day: str

    def adds(self) -> dict[str, list[str]]:
        return {"day": [self.day]}


class Closed(Params):
    day: Day


class NewRoom(Params):
    """A rule that brings a room into the instance."""

    room: str

    def adds(self) -> dict[str, list[str]]:
        return {"room": [self.room]}


TABLE = {"holiday": Holiday, "closed": Closed, "new_room": NewRoom}


def _rule(kind: str, **values: Any) -> Rule:
    return Rule(id=f"R-{kind}", kind=kind, tier="hard", params=values)


def test_a_rule_adds_no_name_by_default():
    assert Closed(day="Mon").adds() == {}


def test_the_names_rules_add_are_gathered_by_what_they_name_in_rule_order():
    rules = [_rule("holiday", day="Sun"), _rule("closed", day="Mon"), _rule("holiday", day="Sat")]
    assert params.added(TABLE, rules) == {"day": ["Sun", "Sat"]}


def test_a_name_another_rule_adds_is_known_beside_it():
    data = params.with_added(Data(), {"day": ["Sun"]})
    assert (Closed(day="Sun").data_problems(data), Closed(day="Sat").data_problems(data)) == (
        [],
        ["unknown day 'Sat'"],
    )


def test_the_data_with_added_names_answers_everything_else_as_the_data():
    data = params.with_added(Data(), {"day": ["Sun"]})
    assert (data.week, "A" in data.names("room"), "Sun" in data.names("room")) == ("short", True, False)


def test_the_data_with_added_names_answers_which_rule_added_a_name():
    sunday = Holiday(day="Sun")
    data = params.with_added(Data(), {"day": ["Sun"]}, [params.Addition("day", "Sun", sunday)])
    assert (params.adder(data, "day", "Sun"), params.adder(data, "day", "Mon")) == (sunday, None)


def test_no_rule_added_the_data_s_own_names():
    assert params.adder(Data(), "day", "Mon") is None


def test_the_data_as_rules_see_it_knows_the_names_they_add_and_who_adds_them():
    rules = [_rule("closed", day="Mon"), _rule("holiday", day="Sun")]
    data = params.seen_beside(Data(), TABLE, rules)
    assert ("Sun" in data.names("day"), params.adder(data, "day", "Sun")) == (True, Holiday(day="Sun"))


def test_a_name_added_twice_is_one_problem_naming_it():
    rules = [_rule("holiday", day="Sun"), _rule("holiday", day="Sat"), _rule("holiday", day="Sun")]
    assert params.added_twice(params.additions(TABLE, rules)) == ["day added by more than one rule: 'Sun'"]


def test_names_added_once_each_are_no_problem():
    rules = [_rule("holiday", day="Sun"), _rule("holiday", day="Sat")]
    assert params.added_twice(params.additions(TABLE, rules)) == []


def test_one_name_added_once_as_a_day_and_once_as_a_room_is_no_problem():
    rules = [_rule("holiday", day="Sun"), _rule("new_room", room="Sun")]
    assert params.added_twice(params.additions(TABLE, rules)) == []


def test_no_added_name_leaves_the_data_itself():
    data = Data()
    assert params.with_added(data, {"day": []}) is data


# -- the emergency family's new incident, end to end --------------------------------------------
@pytest.fixture(scope="module")
def recovering() -> Instance:
    """A small certified emergency instance whose recovery scenario adds a new incident."""
    for index in range(12):
        options = GenerateOptions(task="emergency_planning", size="small", include=["exception_recovery"])
        inst = build_instance(0, index, options).instance
        if inst is not None and inst.recovery and inst.recovery.scenario[0].kind == "new_incident":
            return inst
    pytest.fail("no emergency instance with a new incident in its scenario")


def _with(inst: Instance, where: str, kind: str, values: dict[str, Any]) -> Instance:
    """A new instance object with one more hard rule, in its rules or its recovery scenario."""
    raw = inst.model_dump(mode="json")
    rules = raw["recovery"]["scenario"] if where == "scenario" else raw["rules"]
    rules.append({"id": "R99", "kind": kind, "tier": "hard", "params": values})
    return Instance.model_validate(raw)


def _new(inst: Instance) -> str:
    assert inst.recovery is not None
    return str(inst.recovery.scenario[0].params["incident"]["id"])


def test_a_scenario_rule_naming_the_incident_its_scenario_adds_is_graded_not_refused(recovering: Instance):
    inst = _with(recovering, "scenario", "same_base", {"incident": _new(recovering)})
    assert validate_instance(inst)


def test_a_rule_of_the_instance_naming_an_incident_only_its_scenario_adds_is_refused(recovering: Instance):
    new = _new(recovering)
    inst = _with(recovering, "rules", "same_base", {"incident": new})
    assert f"R99 (same_base): unknown incident {new!r}" in refusal(inst)


def test_a_scenario_rule_naming_an_incident_no_rule_adds_is_refused(recovering: Instance):
    inst = _with(recovering, "scenario", "same_base", {"incident": "I77"})
    assert "R99 (same_base): unknown incident 'I77'" in refusal(inst)


def test_a_second_new_incident_with_the_scenario_s_incident_id_is_refused(recovering: Instance):
    assert recovering.recovery is not None
    again = dict(recovering.recovery.scenario[0].params)
    inst = _with(recovering, "scenario", "new_incident", again)
    assert f"incident added by more than one rule: {_new(recovering)!r}" in refusal(inst)


def test_a_new_incident_of_the_rules_with_the_scenario_s_incident_id_is_refused(recovering: Instance):
    assert recovering.recovery is not None
    again = dict(recovering.recovery.scenario[0].params)
    inst = _with(recovering, "rules", "new_incident", again)
    assert f"incident added by more than one rule: {_new(recovering)!r}" in refusal(inst)


def test_arrives_first_on_the_added_incident_with_a_role_it_does_not_need_is_refused(recovering: Instance):
    """The further condition reads the incident the scenario's rule adds: a rule about a role
    of the data that incident needs no team of would hold for every plan."""
    assert recovering.recovery is not None
    needs = recovering.recovery.scenario[0].params["incident"]["needs"]
    other = sorted({t["role"] for t in recovering.data["teams"]} - set(needs))[0]
    values = {"incident": _new(recovering), "first": next(iter(needs)), "then": other}
    inst = _with(recovering, "scenario", "arrives_first", values)
    assert f"R99 (arrives_first): incident {_new(recovering)!r} needs no {other!r} team" in refusal(inst)


def test_arrives_first_on_the_incident_the_scenario_adds_is_graded_not_raised_on(recovering: Instance):
    """Its further condition looks the incident up in the data, which does not hold it."""
    assert recovering.recovery is not None
    role = next(iter(recovering.recovery.scenario[0].params["incident"]["needs"]))
    values = {"incident": _new(recovering), "first": role, "then": role}
    assert validate_instance(_with(recovering, "scenario", "arrives_first", values))
