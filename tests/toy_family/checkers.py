"""Toy family, grading side: the data, the typed rule parameters and one check per kind.

No OR-Tools import: reward servers load only this module. The generic grading flow and
answer contract are the core's (:mod:`pbsolve.checking`)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from pbsolve import checking
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import NoParams, Params
from pbsolve.schema import Instance, ObjectiveTerm, Recovery, Rule

Plan = dict[str, str]  # guest id -> table id


class Guest(BaseModel):
    id: str
    cost: dict[str, int]  # table id -> how much the guest dislikes it


class ToyData(BaseModel):
    guests: list[Guest]
    tables: list[str]


# Typed parameters, one model per kind, shared with the model and the renderer.
class Capacity(Params):
    max: int


class Pairs(Params):
    pairs: list[tuple[str, str]]


class Avoid(Params):
    guest: str
    table: str


RULE_PARAMS: dict[str, type[Params]] = {"table_capacity": Capacity, "apart": Pairs, "together": Pairs, "avoid": Avoid}
TERM_PARAMS: dict[str, type[Params]] = {"cost": NoParams, "code": NoParams}


def _capacity(d: ToyData, plan: Plan, p: Capacity) -> Verdict:
    over = [t for t in d.tables if sum(1 for g in plan.values() if g == t) > p.max]
    return (not over, f"tables over {p.max}: {over}" if over else "holds")


def _pairs(same: bool) -> checking.Check:
    def check(d: ToyData, plan: Plan, p: Pairs) -> Verdict:
        bad = [f"{a}/{b}" for a, b in p.pairs if (plan[a] == plan[b]) != same]
        return (not bad, f"pairs broken: {bad}" if bad else "holds")

    return check


def _avoid(d: ToyData, plan: Plan, p: Avoid) -> Verdict:
    return (plan[p.guest] != p.table, f"{p.guest} sits at {plan[p.guest]}")


def code(d: ToyData, plan: Plan) -> int:
    """Each guest's table number, in guest order, read as one number base len(tables): a
    tie-break injective over plans, so every optimum is unique."""
    value = 0
    for g in d.guests:
        value = value * len(d.tables) + d.tables.index(plan[g.id])
    return value


CHECKS: dict[str, checking.Check] = {"table_capacity": _capacity, "apart": _pairs(False), "together": _pairs(True), "avoid": _avoid}


class SeatingChecker(checking.TaskChecker):
    family = "toy"
    task = "seating"
    plan_key = "seating"
    plan_text = "every guest at exactly one table"
    data_type = ToyData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def read_plan(self, data: ToyData, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Plan | None, str]:
        rows = section.get(self.plan_key)
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            return None, f"'{self.plan_key}' must be a list of {{guest, table}} objects"
        plan = {r.get("guest"): r.get("table") for r in rows}
        if len(rows) != len(data.guests) or set(plan) != {g.id for g in data.guests}:
            return None, "every guest must be seated exactly once"
        if not set(plan.values()) <= set(data.tables):
            return None, "a row names an unknown table"
        return plan, "plan read"  # type: ignore[return-value]

    def objective_value(self, data: ToyData, plan: Plan, term: ObjectiveTerm, params: Params) -> int:
        if term.kind == "cost":
            return sum(g.cost[plan[g.id]] for g in data.guests)
        return code(data, plan)

    def existing(self, data: ToyData, plan: Plan) -> Any:
        return dict(plan)

    def plan_schema(self, data: ToyData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        row = {"guest": {"enum": [g.id for g in data.guests]}, "table": {"enum": data.tables}}
        return {"type": "array", "items": {"type": "object", "properties": row, "required": list(row)}}

    def plan_json(self, data: ToyData, plan: Plan) -> list[dict[str, str]]:
        return [{"guest": g.id, "table": plan[g.id]} for g in data.guests]


TASKS = {"seating": SeatingChecker()}


def check_answer(instance: Instance, answer: Any) -> dict[str, Verdict]:
    return checking.check_answer(TASKS[instance.task], instance, answer)


def answer_schema(
    task: str, data: dict[str, Any], objective: list[ObjectiveTerm], mechanisms: list[str] | None = None,
    recovery: Recovery | None = None, rules: list[Rule] | None = None,
) -> dict[str, Any]:  # fmt: skip
    tc = TASKS[task]
    return checking.answer_schema(tc, ToyData.model_validate(data), objective, mechanisms, recovery, rules)


def baseline_answer(instance: Instance) -> str:
    """Everyone at the first table: valid JSON, usually wrong."""
    tc, d = TASKS[instance.task], ToyData.model_validate(instance.data)
    plan = {g.id: d.tables[0] for g in d.guests}
    _, values = tc.evaluate(d, [], instance.objective, plan)
    return json.dumps({"feasible": True, tc.plan_key: tc.plan_json(d, plan), "objective": values})


def format_text(task: str) -> str:
    return TASKS[task].plan_text


def known_kinds(task: str) -> tuple[dict[str, type[Params]], dict[str, type[Params]]]:
    return TASKS[task].known_kinds()


def read_data(instance: Instance) -> ToyData:
    TASKS[instance.task]  # a KeyError for a task this family does not have
    return ToyData.model_validate(instance.data)
