"""The stateful timetable rules: cool-down, fatigue protocol, battery level.

Each checker is a slot-by-slot simulation; the CP-SAT encoding is written on its own.
These specifications pin the simulations on hand-built plans, hold the encoding against
the checker on every plan of tiny instances, check the witness-based builders, and hold
certified optima with a stateful rule against exhaustive enumeration.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

import pytest
from ortools.sat.python import cp_model

from pbsolve.certify import SolverLimits, certify_feasible
from pbsolve.checkers.scheduling import stateful as checks_mod  # noqa: E402
from pbsolve.checkers.scheduling.checks import CHECKS, Plan, evaluate
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, TimetableData
from pbsolve.checkers.scheduling.rule_params import RULE_PARAMS
from pbsolve.family import Draft, family
from pbsolve.models.scheduling import stateful as model_mod  # noqa: E402
from pbsolve.models.scheduling.common import hour_slots, period_slots
from pbsolve.models.scheduling.timetable_model import ENCODERS, build
from pbsolve.params import Params
from pbsolve.renderers import scheduling_stateful as render_mod  # noqa: E402
from pbsolve.renderers.scheduling import SENTENCES, render_rule
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule
from tests.helpers import TASKS, draft_of, instance_at, plan_of

KINDS = ("room_cooldown", "fatigue_protocol", "battery_level")


# -- hand-built data ---------------------------------------------------------------------
def _data(slots: list, events: list[Event], rooms: tuple[str, ...] = ("A", "B")) -> TimetableData:
    people = sorted({p for e in events for p in e.people})
    days = sorted({s.day for s in slots})
    return TimetableData(
        time_unit="hour" if ":" in slots[0].id else "period",
        days=tuple(["the day"] if len(days) == 1 else [f"D{d}" for d in days]),
        slots=tuple(slots),
        rooms=tuple(Room(id=r, seats=10, features=("projector",), cost=i) for i, r in enumerate(rooms)),
        people=tuple(Person(id=p, role="attendee") for p in people),
        events=tuple(events),
    )


def _ev(eid: str, duration: int = 1, people: tuple[str, ...] = ("Ana",), needs: tuple[str, ...] = ()) -> Event:
    return Event(id=eid, name=eid, duration=duration, people=people, size=1, needs=needs)


HOURS = hour_slots(9, 16)  # 09:00 .. 16:00, indices 0..7, one day
TWO_DAYS = period_slots(["Mon", "Tue"], 3)  # Mon P1..P3 = 0..2, Tue P1..P3 = 3..5


def _raw(params: dict[str, Any] | Params) -> dict[str, Any]:
    """A rule's stored parameters, from a builder's model or a test's dict."""
    return params.dump() if isinstance(params, Params) else params


def _check(kind: str, d: TimetableData, plan: Plan, params: dict[str, Any] | Params) -> tuple[bool, str]:
    return CHECKS[kind](d, plan, RULE_PARAMS[kind].model_validate(_raw(params)))


# -- room_cooldown -----------------------------------------------------------------------
COOL = _data(HOURS, [_ev("M1"), _ev("M2", 2, ("Ben",)), _ev("M3", 1, ("Chen",))])


def test_cooldown_accepts_reuse_after_exactly_the_gap():
    plan = {"M1": (0, "A"), "M2": (3, "A"), "M3": (7, "B")}
    assert _check("room_cooldown", COOL, plan, {"room": "A", "gap": 2}) == (True, "holds")


def test_cooldown_rejects_reuse_inside_the_gap_naming_the_slot():
    plan = {"M1": (0, "A"), "M2": (2, "A"), "M3": (7, "B")}
    ok, why = _check("room_cooldown", COOL, plan, {"room": "A", "gap": 2})
    assert not ok and "11:00" in why and "M2" in why and "M1" in why


def test_cooldown_counts_from_the_last_slot_of_an_event():
    plan = {"M2": (0, "A"), "M1": (2, "A"), "M3": (7, "B")}  # M2 fills 09:00-11:00
    ok, why = _check("room_cooldown", COOL, plan, {"room": "A", "gap": 1})
    assert not ok and "11:00" in why
    assert _check("room_cooldown", COOL, {**plan, "M1": (3, "A")}, {"room": "A", "gap": 1})[0]


def test_cooldown_leaves_other_rooms_free():
    plan = {"M1": (0, "A"), "M2": (1, "B"), "M3": (3, "B")}
    assert _check("room_cooldown", COOL, plan, {"room": "A", "gap": 2})[0]


def test_cooldown_does_not_carry_over_to_the_next_day():
    d = _data(TWO_DAYS, [_ev("L1"), _ev("L2", 1, ("Ben",))])
    assert _check("room_cooldown", d, {"L1": (2, "A"), "L2": (3, "A")}, {"room": "A", "gap": 2})[0]
    assert not _check("room_cooldown", d, {"L1": (0, "A"), "L2": (2, "A")}, {"room": "A", "gap": 2})[0]


# -- fatigue_protocol ----------------------------------------------------------------------
FATIGUE = _data(HOURS, [_ev("M1", 2), _ev("M2"), _ev("M3"), _ev("M4", 3, ("Ben",))])
PROTOCOL = {"person": "Ana", "threshold": 3, "rest": 1}


def test_fatigue_exempts_events_that_start_before_the_threshold():
    # M2 starts after 2 busy hours (< 3): back to back is fine; M3 starts after 3 and rests 1
    plan = {"M1": (0, "A"), "M2": (2, "A"), "M3": (4, "A"), "M4": (0, "B")}
    assert _check("fatigue_protocol", FATIGUE, plan, PROTOCOL) == (True, "holds")


def test_fatigue_rejects_a_start_without_the_rest_naming_the_slot():
    plan = {"M1": (0, "A"), "M2": (2, "A"), "M3": (3, "A"), "M4": (0, "B")}
    ok, why = _check("fatigue_protocol", FATIGUE, plan, PROTOCOL)
    assert not ok and "M3" in why and "12:00" in why and "busy 3" in why


def test_fatigue_rest_counts_free_slots_since_the_previous_event():
    plan = {"M1": (0, "A"), "M2": (3, "A"), "M3": (5, "A"), "M4": (0, "B")}
    strict = {**PROTOCOL, "threshold": 2, "rest": 2}
    ok, why = _check("fatigue_protocol", FATIGUE, plan, strict)  # M2 rests 1 after 2 busy hours
    assert not ok and "M2" in why and "12:00" in why
    assert _check("fatigue_protocol", FATIGUE, {**plan, "M2": (4, "A"), "M3": (7, "A")}, strict)[0]


def test_fatigue_counts_only_the_persons_own_busy_slots():
    plan = {"M4": (0, "A"), "M1": (3, "B"), "M2": (5, "B"), "M3": (6, "B")}  # Ben busy first
    assert not _check("fatigue_protocol", FATIGUE, plan, PROTOCOL)[0]  # M3: 3 busy, no rest
    assert _check("fatigue_protocol", FATIGUE, plan, {**PROTOCOL, "threshold": 4})[0]


def test_fatigue_count_restarts_each_day():
    d = _data(TWO_DAYS, [_ev("L1", 2), _ev("L2"), _ev("L3")])
    plan = {"L1": (0, "A"), "L2": (3, "A"), "L3": (4, "A")}  # Tue: L3 starts after 1 busy period
    params = {"person": "Ana", "threshold": 2, "rest": 1}
    assert _check("fatigue_protocol", d, plan, params)[0]
    assert not _check("fatigue_protocol", d, {**plan, "L2": (2, "A"), "L3": (5, "A")}, params)[0]


# -- battery_level ---------------------------------------------------------------------------
BATTERY = _data(HOURS, [_ev("P1", 2, needs=("projector",)), _ev("P2", 1, ("Ben",), ("projector",)), _ev("N1", 2, ("Chen",))])
CELL = {"feature": "projector", "capacity": 4, "start": 2, "use": 2, "recharge": 1}


def test_battery_accepts_a_plan_whose_level_stays_at_or_above_zero():
    # levels 3 4 | 2 0 | 1 2 | 0 | 1
    plan = {"P1": (2, "A"), "P2": (6, "A"), "N1": (0, "B")}
    assert _check("battery_level", BATTERY, plan, CELL) == (True, "holds")


def test_battery_rejects_the_slot_where_the_level_goes_negative():
    plan = {"P1": (2, "A"), "P2": (5, "A"), "N1": (0, "B")}
    ok, why = _check("battery_level", BATTERY, plan, CELL)
    assert not ok and "14:00" in why and "-1" in why and "P2" in why


def test_battery_recharge_is_capped_at_the_capacity():
    params = {**CELL, "capacity": 2, "use": 1}  # three idle hours leave 2, not 5
    plan = {"P1": (3, "A"), "P2": (5, "A"), "N1": (0, "B")}
    ok, why = _check("battery_level", BATTERY, plan, params)
    assert not ok and "14:00" in why
    assert _check("battery_level", BATTERY, plan, {**params, "capacity": 3})[0]


def test_battery_drains_only_for_events_that_need_the_feature():
    plan = {"N1": (0, "A"), "P1": (2, "A"), "P2": (6, "B")}
    assert _check("battery_level", BATTERY, plan, CELL)[0]
    assert not _check("battery_level", BATTERY, {**plan, "P1": (0, "B")}, CELL)[0]


def test_battery_level_restarts_each_day():
    d = _data(TWO_DAYS, [_ev("L1", needs=("projector",)), _ev("L2", 1, ("Ben",), ("projector",))])
    params = {"feature": "projector", "capacity": 1, "start": 1, "use": 1, "recharge": 1}
    # Mon ends at 0; Tue starts again at 1, so a first-period use on Tue is fine
    assert _check("battery_level", d, {"L1": (2, "A"), "L2": (3, "A")}, params)[0]
    assert not _check("battery_level", d, {"L1": (3, "A"), "L2": (4, "A")}, params)[0]


# -- the solver model, judged against the checker -------------------------------------------
class Judge:
    """One solver model of a draft; plans and rule switches are fixed by assumptions."""

    def __init__(self, draft: Draft) -> None:
        self.sm = build(draft)
        self.x = {lit.name: lit for lit in self.sm.answer_literals}
        self.solver = cp_model.CpSolver()
        self.solver.parameters.num_workers = 1

    def accepts(self, plan: Plan, on: list[str]) -> bool:
        m = self.sm.model
        m.clear_assumptions()
        m.add_assumptions([self.x[f"x[{eid},{s},{room}]"] for eid, (s, room) in plan.items()])
        m.add_assumptions([lit if rid in on else ~lit for rid, lit in self.sm.rule_literals.items()])
        status = self.solver.solve(m)
        assert status in (cp_model.OPTIMAL, cp_model.INFEASIBLE)
        return status == cp_model.OPTIMAL


SPEC = GenerationSpec(family="scheduling", task="meeting_planning", subtask="cross_team_sync", seed=0, size="tiny")


def _draft(d: TimetableData, rules: list[tuple[str, dict[str, Any]]]) -> Draft:
    objective = [
        ObjectiveTerm(id="weighted_finish", kind="weighted_end", params={"weights": {e.id: 1 for e in d.events}}),
        ObjectiveTerm(id="room_cost", kind="room_cost"),
    ]
    numbered = [Rule(id=f"R{i}", kind=k, tier="stateful", params=_raw(p)) for i, (k, p) in enumerate(rules, 1)]
    return Draft(spec=SPEC, data=d.model_dump(mode="json"), rules=numbered, objective=objective)


def _every_plan(d: TimetableData) -> Iterator[Plan]:
    options = [[(s, r.id) for s in d.starts(e) for r in d.rooms] for e in d.events]
    for combo in itertools.product(*options):
        yield {e.id: c for e, c in zip(d.events, combo)}


TINY_DAY = hour_slots(9, 13)  # five hours
TINY_EVENTS = [
    _ev("M1", 2, ("Ana", "Ben"), ("projector",)),
    _ev("M2", 1, ("Ana",), ("projector",)),
    _ev("M3", 1, ("Ana", "Ben")),
]
EXHAUSTIVE = [
    ("room_cooldown", _data(TINY_DAY, TINY_EVENTS), {"room": "A", "gap": 1}),
    ("room_cooldown", _data(TWO_DAYS, TINY_EVENTS), {"room": "B", "gap": 2}),
    ("fatigue_protocol", _data(TINY_DAY, TINY_EVENTS, ("A",)), {"person": "Ana", "threshold": 1, "rest": 1}),
    ("fatigue_protocol", _data(TINY_DAY, TINY_EVENTS, ("A",)), {"person": "Ana", "threshold": 2, "rest": 2}),
    ("fatigue_protocol", _data(TWO_DAYS, TINY_EVENTS, ("A",)), {"person": "Ben", "threshold": 2, "rest": 1}),
    ("battery_level", _data(TINY_DAY, TINY_EVENTS, ("A",)), {"feature": "projector", "capacity": 3, "start": 1, "use": 1, "recharge": 1}),
    ("battery_level", _data(TWO_DAYS, TINY_EVENTS, ("A",)), {"feature": "projector", "capacity": 2, "start": 0, "use": 1, "recharge": 2}),
]


@pytest.mark.parametrize("kind,d,params", EXHAUSTIVE, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(EXHAUSTIVE)])
def test_model_accepts_exactly_the_plans_the_checker_accepts(kind, d, params):
    """Every plan of a tiny instance, overlaps included (only the stateful rule is on)."""
    assert_model_and_checker_agree_on_every_plan(kind, d, params)


def assert_model_and_checker_agree_on_every_plan(kind: str, d: TimetableData, params: Any) -> None:
    """The CP-SAT model with only this rule on accepts exactly the plans the check accepts,
    over every plan of the tiny timetable ``d``, and the rule both accepts and rejects some
    (shared by the day-spacing tests of study and fitness planning)."""
    judge = Judge(_draft(d, [(kind, params)]))
    seen = set()
    for plan in _every_plan(d):
        ok, why = _check(kind, d, plan, params)
        assert judge.accepts(plan, ["R1"]) == ok, (plan, why)
        seen.add(ok)
    assert seen == {True, False}, "the rule should both accept and reject some plans"


@pytest.mark.parametrize("kind,d,params", EXHAUSTIVE[::2], ids=[k for k, _, _ in EXHAUSTIVE[::2]])
def test_a_switched_off_stateful_rule_forbids_nothing(kind, d, params):
    judge = Judge(_draft(d, [(kind, params)]))
    assert all(judge.accepts(plan, []) for plan in itertools.islice(_every_plan(d), 0, None, 7))


# -- builders on generated instances ------------------------------------------------------
PLAIN_OBJECTIVES = {"weighted_end", "room_cost", "slot_penalty", "same_day_pairs"}


def _plain(inst: Any) -> bool:
    """A feasible instance whose answer is a plan alone (no hard-tier mechanism that adds
    answer fields such as backup rooms), so plans can be enumerated and compared."""
    return (
        inst is not None
        and inst.certificate.status == "optimal"
        and all(r.tier in ("basic", "medium") for r in inst.rules)
        and all(t.kind in PLAIN_OBJECTIVES for t in inst.objective)
    )


def _generated() -> list[tuple[Any, TimetableData, Plan]]:
    """(instance, data, reference plan) for a fixed sample of certified small instances."""
    out = []
    for task in TASKS:
        for index in range(4):
            inst = instance_at(task, 3, index)
            if _plain(inst):
                out.append((inst, TimetableData.model_validate(inst.data), plan_of(inst, inst.reference)))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_builder_params_are_met_by_the_witness(kind):
    built = 0
    for inst, d, witness in _generated():
        for k in range(3):
            params = model_mod.STATEFUL_BUILDERS[kind](d, witness, random.Random(k))
            if params is None:
                continue
            built += 1
            assert _check(kind, d, witness, params)[0], (inst.id, params)
    assert built >= 6, built


def test_builder_params_are_met_by_pipeline_witnesses_at_every_size():
    """The generator's own witnesses (place_witness on sampled entities), no solver."""
    from pbsolve.models.scheduling import TASK_MODULES
    from pbsolve.models.scheduling.common import place_witness

    built = {k: 0 for k in KINDS}
    for task, module in TASK_MODULES.items():
        for size in ("tiny", "small", "default"):
            for seed in range(8):
                rng = random.Random(seed)
                sub = rng.choice(module.TASK.subtasks).id
                spec = GenerationSpec(family="scheduling", task=task, subtask=sub, seed=seed, size=size)
                d = module.entities(spec, rng).data()
                witness = place_witness(d, rng)
                if witness is None:
                    continue
                for kind in KINDS:
                    params = model_mod.STATEFUL_BUILDERS[kind](d, witness, rng)
                    if params is not None:
                        built[kind] += 1
                        assert _check(kind, d, witness, params)[0], (task, size, seed, params)
    assert min(built.values()) >= 10, built


def test_battery_builder_declines_when_no_event_needs_equipment():
    d = _data(TINY_DAY, [_ev("M1"), _ev("M2", 1, ("Ben",))])
    assert model_mod.build_battery_level(d, {"M1": (0, "A"), "M2": (0, "B")}, random.Random(0)) is None


def test_fatigue_builder_declines_when_nobody_has_two_events():
    d = _data(TINY_DAY, [_ev("M1"), _ev("M2", 1, ("Ben",))])
    assert model_mod.build_fatigue_protocol(d, {"M1": (0, "A"), "M2": (0, "B")}, random.Random(0)) is None


@pytest.mark.parametrize("kind", KINDS)
def test_model_and_checker_agree_on_random_plans_of_generated_instances(kind):
    rnd = random.Random(11)
    for inst, d, witness in _generated():
        params = model_mod.STATEFUL_BUILDERS[kind](d, witness, rnd)
        if params is None:
            continue
        judge = Judge(_draft(d, [(kind, params)]))
        options = {e.id: [(s, r.id) for s in d.starts(e) for r in d.rooms] for e in d.events}
        for _ in range(25):
            plan = {eid: rnd.choice(opts) for eid, opts in options.items()}
            assert judge.accepts(plan, ["R1"]) == _check(kind, d, plan, params)[0], (params, plan)


@pytest.mark.parametrize("kind", KINDS)
def test_sentences_state_every_number(kind):
    for inst, d, witness in _generated():
        params = model_mod.STATEFUL_BUILDERS[kind](d, witness, random.Random(0))
        if params is None:
            continue
        text = render_rule(Rule(id="R9", kind=kind, tier="stateful", params=_raw(params)), inst.data, inst.task)
        for value in _raw(params).values():
            assert str(value) in text, (value, text)


def test_cooldown_sentence_example_agrees_with_the_checker():
    d = _data(HOURS, [_ev("M1"), _ev("M2", 1, ("Ben",))])
    params = {"room": "A", "gap": 2}
    rule = Rule(id="R1", kind="room_cooldown", tier="stateful", params=params)
    text = render_rule(rule, d.model_dump(mode="json"), "meeting_planning")
    assert "ends at 10:00, the next meeting there may start at 12:00 at the earliest" in text
    assert _check("room_cooldown", d, {"M1": (0, "A"), "M2": (3, "A")}, params)[0]  # 12:00
    assert not _check("room_cooldown", d, {"M1": (0, "A"), "M2": (2, "A")}, params)[0]  # 11:00


# -- certified optimum against exhaustive enumeration ---------------------------------------
def _tiny_cases() -> Iterator[tuple[str, Draft, list[tuple[Plan, tuple[int, ...]]]]]:
    """Tiny certified instances, each with one stateful rule built around a random
    *feasible* plan (not the optimum, so the rule can cut the optimum off), together
    with every plan that meets the instance's own rules and its objective figures."""
    for task in TASKS:
        for seed in range(100, 105):
            inst = instance_at(task, seed, 0, size="tiny")
            if not _plain(inst):
                continue
            d = TimetableData.model_validate(inst.data)
            feasible = []
            for plan in _every_plan(d):
                verdicts, values = evaluate(d, inst.rules, inst.objective, plan)
                if all(ok for ok, _ in verdicts.values()):
                    feasible.append((plan, tuple(values.values())))
            rnd = random.Random(seed)
            for kind in KINDS:
                params = model_mod.STATEFUL_BUILDERS[kind](d, rnd.choice(feasible)[0], rnd)
                if params is not None:
                    draft = draft_of(inst)
                    rule = Rule(id=f"R{len(draft.rules) + 1}", kind=kind, tier="stateful", params=_raw(params))
                    yield kind, Draft(spec=draft.spec, data=draft.data, rules=[*draft.rules, rule], objective=draft.objective), feasible


def test_certified_optimum_with_a_stateful_rule_equals_the_exhaustive_optimum_on_generated_instances():
    fam = family("scheduling")
    cases = list(_tiny_cases())
    for kind, draft, feasible in cases:
        d = TimetableData.model_validate(draft.data)
        params = draft.rules[-1].params
        best = min(score for plan, score in feasible if _check(kind, d, plan, params)[0])
        cert = certify_feasible(fam, draft, SolverLimits()).certificate
        assert best == tuple(cert.objective.values()), (kind, params)
    assert {k for k, _, _ in cases} == set(KINDS)


BASE = [("room_fit", {}), ("person_no_overlap", {}), ("room_no_overlap", {})]
BITING = [
    ("room_cooldown", _data(TINY_DAY, TINY_EVENTS), {"room": "A", "gap": 1}),
    ("fatigue_protocol", _data(TINY_DAY, TINY_EVENTS), {"person": "Ana", "threshold": 2, "rest": 1}),
    ("battery_level", _data(TINY_DAY, TINY_EVENTS), {"feature": "projector", "capacity": 3, "start": 1, "use": 1, "recharge": 1}),
]


@pytest.mark.parametrize("kind,d,params", BITING, ids=[k for k, _, _ in BITING])
def test_certified_optimum_with_a_biting_stateful_rule_equals_the_exhaustive_optimum(kind, d, params):
    draft = _draft(d, [*BASE, (kind, params)])
    cert = certify_feasible(family("scheduling"), draft, SolverLimits()).certificate
    with_rule, without = [], []
    for plan in _every_plan(d):
        verdicts, values = evaluate(d, draft.rules, draft.objective, plan)
        if all(verdicts[r.id][0] for r in draft.rules[:-1]):
            without.append(tuple(values.values()))
            if verdicts[draft.rules[-1].id][0]:
                with_rule.append(tuple(values.values()))
    assert tuple(cert.objective.values()) == min(with_rule)
    assert min(with_rule) > min(without), "the rule should cut the unconstrained optimum off"
