"""Typed rule parameters (pbsolve.params): one model per kind, validated when an instance
is graded, parsed once per instance, dumped into the instance file unchanged."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pydantic import Field, NonNegativeInt, model_validator

from pbsolve import checking, params
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import InvalidGroundTruth, grade
from pbsolve.params import InvalidParams, NoParams, Params, TypedParams
from pbsolve.schema import Instance, ObjectiveTerm, Rule
from tests.family_adapters import toy_family_registered


class Window(Params):
    event: str
    from_: str = Field(alias="from")
    to: str


class Limit(Params):
    people: list[str]
    max: int


TABLE = {"window": Window, "daily_limit": Limit}


@pytest.fixture(scope="module")
def toy() -> Iterator[Instance]:
    with toy_family_registered():
        inst = build_instance(0, 1, GenerateOptions(task="seating", size="small")).instance
        assert inst is not None
        yield inst


def test_a_rule_parses_into_its_kinds_model():
    p = params.parse(TABLE, Rule(id="R2", kind="daily_limit", tier="basic", params={"people": ["P1"], "max": 2}))
    assert p == Limit(people=["P1"], max=2)


def test_a_keyword_key_is_read_and_dumped_under_its_json_name():
    raw = {"event": "E1", "from": "Mon 9", "to": "Mon 12"}
    p = params.parse(TABLE, Rule(id="R1", kind="window", tier="basic", params=raw))
    assert isinstance(p, Window) and p.from_ == "Mon 9"
    assert p.dump() == raw and list(p.dump()) == ["event", "from", "to"]


def test_the_dump_keeps_field_order_whatever_order_the_model_was_built_in():
    assert list(Window(to="b", from_="a", event="E").dump()) == ["event", "from", "to"]


def test_a_missing_field_is_an_error_naming_the_rule_the_kind_and_the_field():
    with pytest.raises(InvalidParams, match=r"R4 \(daily_limit\): max: Field required"):
        params.parse(TABLE, Rule(id="R4", kind="daily_limit", tier="basic", params={"people": ["P1"]}))


def test_a_mistyped_field_is_an_error():
    with pytest.raises(InvalidParams, match=r"R4 \(daily_limit\): max: Input should be a valid integer"):
        params.parse(TABLE, Rule(id="R4", kind="daily_limit", tier="basic", params={"people": [], "max": "two"}))


def test_an_unknown_field_is_an_error_not_silently_dropped():
    with pytest.raises(InvalidParams, match=r"maxx: Extra inputs are not permitted"):
        params.parse(TABLE, Rule(id="R4", kind="daily_limit", tier="basic", params={"people": [], "max": 1, "maxx": 2}))


def test_a_kind_without_a_model_is_an_error_naming_it():
    with pytest.raises(InvalidParams, match=r"R9: no parameter model for kind 'teleport'"):
        params.parse(TABLE, Rule(id="R9", kind="teleport", tier="basic", params={}))


def test_problems_lists_every_bad_item_and_leaves_unknown_kinds_to_the_caller():
    rules = [
        Rule(id="R1", kind="daily_limit", tier="basic", params={"people": [], "max": 1}),
        Rule(id="R2", kind="daily_limit", tier="basic", params={"people": []}),
        Rule(id="R3", kind="window", tier="basic", params={"event": "E1"}),
        Rule(id="R4", kind="teleport", tier="basic", params={}),
    ]
    found = params.problems(TABLE, rules)
    assert [f.split(" ")[0] for f in found] == ["R2", "R3"]


def test_rule_and_term_store_the_dumped_model():
    r = params.make_rule("window", "medium", Window(event="E1", from_="a", to="b"), "R3")
    assert (r.id, r.kind, r.tier, r.params) == ("R3", "window", "medium", {"event": "E1", "from": "a", "to": "b"})
    assert params.make_term("cost", "total_cost").params == {}


def test_typed_params_parse_an_owned_rule_once():
    r = Rule(id="R1", kind="daily_limit", tier="basic", params={"people": ["P1"], "max": 2})
    typed = TypedParams(TABLE, {}, owned=[r])
    assert typed.rule(r) is typed.rule(r)


def test_typed_params_never_keep_a_rule_the_instance_does_not_own():
    owned = Rule(id="R1", kind="daily_limit", tier="basic", params={"people": ["P1"], "max": 2})
    typed = TypedParams(TABLE, {}, owned=[owned])
    stranger = Rule(id="R1", kind="daily_limit", tier="basic", params={"people": ["P1"], "max": 3})
    assert typed.rule(stranger) == Limit(people=["P1"], max=3)
    assert typed.rule(stranger) is not typed.rule(stranger)  # parsed each time, never cached
    assert typed.rule(owned) == Limit(people=["P1"], max=2)


def test_an_instance_parse_cache_parses_an_item_once():
    r = Rule(id="R1", kind="daily_limit", tier="basic", params={"people": ["P1"], "max": 2})
    cache = params.Parsed()
    assert cache(TABLE, r) == Limit(people=["P1"], max=2)
    assert cache(TABLE, r) is cache(TABLE, r)


def test_an_instance_parse_cache_parses_an_equal_item_of_its_own_apart():
    first = Rule(id="R1", kind="daily_limit", tier="basic", params={"people": ["P1"], "max": 2})
    second = first.model_copy(deep=True)
    cache = params.Parsed()
    assert cache(TABLE, first) == cache(TABLE, second)
    assert cache(TABLE, first) is not cache(TABLE, second)


def test_an_instance_parse_cache_reads_an_item_under_each_model_apart():
    r = Rule(id="R1", kind="daily_limit", tier="basic", params={"people": ["P1"], "max": 2})

    class Other(Limit):
        pass

    cache = params.Parsed()
    assert type(cache(TABLE, r)) is Limit
    assert type(cache({"daily_limit": Other}, r)) is Other
    assert type(cache(TABLE, r)) is Limit


def test_an_instance_parse_cache_keeps_no_failed_parse():
    r = Rule(id="R2", kind="daily_limit", tier="basic", params={"people": []})
    cache = params.Parsed()
    for _ in range(2):
        with pytest.raises(InvalidParams, match=r"R2 \(daily_limit\): max: Field required"):
            cache(TABLE, r)
    r.params = {"people": [], "max": 4}
    assert cache(TABLE, r) == Limit(people=[], max=4)


def test_typed_params_read_owned_rules_through_the_instance_parse_cache():
    r = Rule(id="R1", kind="daily_limit", tier="basic", params={"people": ["P1"], "max": 2})
    cache = params.Parsed()
    kept = cache(TABLE, r)
    assert TypedParams(TABLE, {}, owned=[r], kept=cache).rule(r) is kept


def parsed_params(inst: Instance, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The identity of each parameter object a parameter model validates from now on."""
    read: list[int] = []
    real = Params.model_validate.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Params], obj: object, *args: object, **kwargs: object) -> Params:
        read.append(id(obj))
        return real(cls, obj, *args, **kwargs)

    monkeypatch.setattr(Params, "model_validate", classmethod(counting))
    return read


def own_items(inst: Instance) -> list[Rule | ObjectiveTerm]:
    rec = inst.recovery
    return [*inst.rules, *inst.objective, *(rec.scenario if rec else []), *(rec.objective if rec else [])]


def test_validating_and_grading_an_instance_parse_each_of_its_items_once(toy, monkeypatch):
    inst = Instance.model_validate(toy.model_dump(mode="json"))
    read = parsed_params(inst, monkeypatch)
    grade(inst, json.dumps(inst.reference))  # validation, the reference checked, then the answer
    grade(inst, json.dumps(inst.reference))
    assert len(own_items(inst)) >= 3
    assert sorted(read) == sorted(id(i.params) for i in own_items(inst))


@pytest.mark.parametrize("where", ["scenario", "rules"])
def test_a_rule_adding_a_name_is_parsed_once_too(where, monkeypatch):
    """A new incident's rule is read for what it adds as well as for its form and names,
    in a recovery scenario and among the rules (a replanned instance's disruption)."""
    from tests.instances import find

    found = find(
        "emergency_planning", 0, hard=True,
        include=("exception_recovery",) if where == "scenario" else ("min_change_replanning",),
        accept=lambda i: any(
            r.kind == "new_incident" for r in (i.recovery.scenario if where == "scenario" and i.recovery else i.rules)
        ),
    )  # fmt: skip
    assert found is not None
    inst = Instance.model_validate(found.model_dump(mode="json"))
    read = parsed_params(inst, monkeypatch)
    assert grade(inst, json.dumps(inst.reference)).all_pass == 1
    own = sorted(id(i.params) for i in own_items(inst))
    # (the recovery's `changes` term keeps the answer's own plan: built and parsed per answer)
    assert sorted(r for r in read if r in own) == own


def test_a_task_checker_with_a_check_but_no_parameter_model_breaks_the_contract():
    class Broken(checking.TaskChecker):
        task = "broken"
        checks = {"window": lambda d, plan, p: (True, ""), "daily_limit": lambda d, plan, p: (True, "")}
        rule_params = {"window": Window}
        term_params = {"cost": NoParams}

    with pytest.raises(
        TypeError, match=r"task broken: rule kinds without both a check and a parameter model: \['daily_limit'\]"
    ):
        Broken().known_kinds()


def test_an_instance_whose_rule_parameters_do_not_fit_is_not_a_valid_ground_truth(toy):
    bad_rules = [
        r.model_copy(update={"params": {**r.params, "max": "many"}}) if r.kind == "table_capacity" else r
        for r in toy.rules
    ]
    bad = toy.model_copy(update={"rules": bad_rules})
    rid = next(r.id for r in toy.rules if r.kind == "table_capacity")
    with (
        toy_family_registered(),
        pytest.raises(InvalidGroundTruth, match=rf"{rid} \(table_capacity\): max: Input should be a valid integer"),
    ):
        grade(bad, json.dumps(bad.reference))


def test_an_instance_whose_objective_term_has_unexpected_parameters_is_not_a_valid_ground_truth(toy):
    bad = toy.model_copy(
        update={"objective": [ObjectiveTerm(id=t.id, kind=t.kind, params={"weight": 2}) for t in toy.objective]}
    )
    with (
        toy_family_registered(),
        pytest.raises(InvalidGroundTruth, match=r"cost \(cost\): weight: Extra inputs are not permitted"),
    ):
        grade(bad, json.dumps(bad.reference))


def test_grading_reads_each_rules_parameters_once_per_instance(toy, monkeypatch):
    with toy_family_registered():
        fresh = toy.model_copy()
        grade(fresh, json.dumps(fresh.reference))  # validation and the first grade parse them
        calls: list[str] = []
        real = params.parse
        monkeypatch.setattr(params, "parse", lambda table, item: calls.append(item.id) or real(table, item))
        for _ in range(3):
            assert grade(fresh, json.dumps(fresh.reference)).all_pass == 1
        assert calls == []


# -- the shipped families ----------------------------------------------------------------
def _shipped_instances() -> list[Instance]:
    """A few certified instances of every shipped task type, hard and stateful tiers included."""
    from pbsolve.family import families

    out = []
    for fam in families().values():
        for task in fam.spec.tasks:
            for index, tiers in enumerate((["hard"], ["stateful"], [], ["hard"])):
                built = build_instance(
                    3, index, GenerateOptions(task=task.id, size="small", force_tiers=tiers)
                ).instance
                if built is not None:
                    out.append(built)
    return out


@pytest.fixture(scope="module")
def shipped() -> list[Instance]:
    found = _shipped_instances()
    assert {i.task for i in found} >= {"meeting_planning", "procurement_planning", "student_grouping"}
    return found


def test_every_stored_parameter_object_is_its_models_dump_byte_for_byte(shipped):
    from pbsolve.family import checker

    for inst in shipped:
        rule_table, term_table = checker(inst.family).known_kinds(inst.task)
        rec = inst.recovery
        for item in [*inst.rules, *(rec.scenario if rec else [])]:
            assert json.dumps(params.parse(rule_table, item).dump()) == json.dumps(item.params), (inst.id, item.id)
        for item in [*inst.objective, *(rec.objective if rec else [])]:
            assert json.dumps(params.parse(term_table, item).dump()) == json.dumps(item.params), (inst.id, item.id)


@pytest.mark.parametrize("family", ["scheduling", "allocation"])
def test_every_rule_kind_of_a_shipped_family_has_a_model_a_check_and_a_sentence(family):
    from pbsolve.family import checker, renderer

    from pbsolve.family import families
    from pbsolve.mechanisms import MECHANISMS

    fam_checker, fam_renderer = checker(family), renderer(family)
    for task in families()[family].spec.tasks:
        rule_table, _ = fam_checker.known_kinds(task.id)
        assert set(rule_table) <= set(fam_renderer.sentence_kinds(task.id)), task.id
        mechanisms = {m.id for m in MECHANISMS}
        assert {c.id for c in task.pool if c.id not in mechanisms} <= set(rule_table), task.id


def test_a_scheduling_rule_missing_a_parameter_is_not_a_valid_ground_truth(shipped):
    inst = next(
        i for i in shipped if i.family == "scheduling" and any(r.kind == "window" for r in i.rules) and i.reference
    )
    bad_rules = [
        r.model_copy(update={"params": {k: v for k, v in r.params.items() if k != "to"}}) if r.kind == "window" else r
        for r in inst.rules
    ]
    rid = next(r.id for r in inst.rules if r.kind == "window")
    with pytest.raises(InvalidGroundTruth, match=rf"{rid} \(window\): to: Field required"):
        grade(inst.model_copy(update={"rules": bad_rules}), json.dumps(inst.reference))


def test_an_allocation_rule_with_a_negative_limit_is_not_a_valid_ground_truth(shipped):
    kinds = ("truck_capacity", "period_budget", "teacher_load", "skill_balance", "dock_capacity", "lot_cap")
    inst = next(
        i for i in shipped if i.family == "allocation" and any(r.kind in kinds for r in i.rules) and i.reference
    )
    rule = next(r for r in inst.rules if r.kind in kinds)
    bad_rules = [r.model_copy(update={"params": {**r.params, "max": -1}}) if r.id == rule.id else r for r in inst.rules]
    with pytest.raises(
        InvalidGroundTruth, match=rf"{rule.id} \({rule.kind}\): max: Input should be greater than or equal to 0"
    ):
        grade(inst.model_copy(update={"rules": bad_rules}), json.dumps(inst.reference))


# -- what an invalid-parameter error says ------------------------------------------------
class Five(Params):
    a: int
    b: int
    c: int
    d: int
    e: dict[str, NonNegativeInt] = {}


def test_an_error_lists_three_problems_and_counts_the_rest():
    bad = Rule(id="R7", kind="five", tier="basic", params={"e": {}})
    with pytest.raises(InvalidParams) as err:
        params.parse({"five": Five}, bad)
    assert str(err.value) == "R7 (five): a: Field required; b: Field required; c: Field required (+1 more)"


def test_an_error_with_exactly_three_problems_has_no_count():
    bad = Rule(id="R7", kind="five", tier="basic", params={"a": 1})
    with pytest.raises(InvalidParams) as err:
        params.parse({"five": Five}, bad)
    assert str(err.value) == "R7 (five): b: Field required; c: Field required; d: Field required"


def test_an_error_inside_a_nested_value_names_its_path():
    bad = Rule(id="R7", kind="five", tier="basic", params={"a": 1, "b": 2, "c": 3, "d": 4, "e": {"S1": -1}})
    with pytest.raises(InvalidParams, match=r"^R7 \(five\): e\.S1: Input should be greater than or equal to 0$"):
        params.parse({"five": Five}, bad)


def test_a_check_given_another_kinds_model_is_a_type_error_naming_both():
    with pytest.raises(TypeError, match="^expected Window parameters, got Limit$"):
        params.as_model(Limit(people=["Ana"], max=1), Window)


# -- parse once: the recovery scenario and every family ----------------------------------
def _first_with(task: str, mechanism: str) -> Instance:
    for index in range(40):
        inst = build_instance(5, index, GenerateOptions(task=task, size="small", force_tiers=["hard"])).instance
        if inst is not None and mechanism in inst.mechanisms:
            return inst
    raise AssertionError(f"no {task} instance with {mechanism} in 40 indices")


@pytest.mark.parametrize("task", ["meeting_planning", "material_allocation"])
def test_grading_a_recovery_answer_again_parses_only_the_changes_term_built_from_it(task, monkeypatch):
    """The stored rules, scenario and terms are parsed once per instance; the recovery's
    changes term counts against the answer's own main plan, so it is new with every answer."""
    inst = _first_with(task, "exception_recovery")
    assert grade(inst, json.dumps(inst.reference)).all_pass == 1  # validation and the first grade parse them
    calls: list[str] = []
    real = params.parse
    monkeypatch.setattr(params, "parse", lambda table, item: calls.append(item.id) or real(table, item))
    for _ in range(2):
        assert grade(inst, json.dumps(inst.reference)).all_pass == 1
    assert calls == ["changes", "changes"]


class Ordered(Params):
    low: int
    high: int

    @model_validator(mode="after")
    def _low_below_high(self) -> Ordered:
        if self.low > self.high:
            raise ValueError("low exceeds high")
        return self


def test_an_error_about_the_parameters_as_a_whole_is_placed_at_params():
    bad = Rule(id="R3", kind="ordered", tier="basic", params={"low": 5, "high": 1})
    with pytest.raises(InvalidParams) as err:
        params.parse({"ordered": Ordered}, bad)
    assert str(err.value) == "R3 (ordered): (params): Value error, low exceeds high"
