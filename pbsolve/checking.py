"""The generic grading flow and answer contract, for every family.

A family's checker gives one :class:`TaskChecker` per task type: how to read its plan out
of an answer, one check per rule kind, its objective figures, its verification figures and
the schema of its plan. This module turns those into a verdict per checklist item exactly
as the checklist describes -- the format, every rule, the objective, the stated figures,
and the items of every mechanism the instance carries (:mod:`pbsolve.mechanisms`) -- and
builds the answer schema. Nothing here imports the solver models.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel

from pbsolve.answer_checks import conflict_list, format_verdict, objective_schema, stated_int, validation_verdict
from pbsolve.mechanisms import ITEM_OWNERS, MECHANISMS, Mechanism
from pbsolve.mechanisms.base import CheckContext, SchemaContext, Verdict
from pbsolve.params import Params, ParamsTable, TypedParams
from pbsolve.schema import Instance, ObjectiveTerm, Recovery, Rule

Check = Callable[[Any, Any, Any], Verdict]  # (data, plan, the rule's Params model) -> verdict
_SPACES = re.compile(r"\s+")


def norm(text: str) -> str:
    """Case- and space-insensitive key."""
    return _SPACES.sub(" ", text.strip().lower())


class TaskChecker:
    """What a task type contributes to grading; subclasses fill every method that raises.

    ``family`` names the memo keys of the instance caches (``<family>.data``,
    ``<family>.lookups``, ``<family>.params``). Every rule kind with a check has a
    parameter model in ``rule_params`` and every objective kind one in ``term_params``
    (:mod:`pbsolve.params`): checks and objective figures receive the parsed model."""

    family: str = ""
    task: str = ""
    plan_key: str = ""  # the answer key holding the plan
    plan_text: str = ""  # what a complete plan is, for the format item (what read_plan accepts)
    data_type: type[BaseModel] = BaseModel  # the task's data model; each subclass sets its own
    checks: ClassVar[dict[str, Check]] = {}  # kind -> rule check; each subclass sets its own
    rule_params: ClassVar[ParamsTable] = {}  # kind -> parameter model, for every kind in checks
    term_params: ClassVar[ParamsTable] = {}  # objective kind -> parameter model, every kind objective_value knows

    # -- reading -------------------------------------------------------------------
    def data(self, instance: Instance) -> Any:
        return instance.memo(f"{self.family}.data", lambda: self.data_type.model_validate(instance.data))

    def lookups(self, data: Any) -> Any:
        return None

    def typed(self, instance: Instance) -> TypedParams:
        """The instance's rules and objective terms with parsed parameters, parsed once."""
        rec = instance.recovery
        owned: list[Rule | ObjectiveTerm] = [
            *instance.rules,
            *instance.objective,
            *(rec.scenario if rec else []),
            *(rec.objective if rec else []),
        ]
        return instance.memo(f"{self.family}.params", lambda: TypedParams(self.rule_params, self.term_params, owned))

    def known_kinds(self) -> tuple[ParamsTable, ParamsTable]:
        """(rule kind -> parameter model, objective kind -> parameter model) of what this
        task type judges; a rule kind with a check but no model, or the reverse, is a
        contract error (the check would receive parameters nobody validated)."""
        odd = sorted(set(self.checks) ^ set(self.rule_params))
        if odd:
            raise TypeError(f"task {self.task}: rule kinds without both a check and a parameter model: {odd}")
        return self.rule_params, self.term_params

    def read_plan(self, data: Any, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Any | None, str]:
        raise NotImplementedError

    def read_section(
        self, instance: Instance, data: Any, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Any | None, str]:
        """The plan of one answer section (the main plan, or the recovery plan under ``rules``)."""
        return self.read_plan(data, section, lk, rules)

    def norm(self, text: str) -> str:
        """How names in stated figures are matched (case- and space-insensitively)."""
        return norm(text)

    # -- judging -------------------------------------------------------------------
    def objective_value(self, data: Any, plan: Any, term: ObjectiveTerm, params: Params) -> int:
        """The plan's figure for one objective term (``params``: the term's parsed parameters)."""
        raise NotImplementedError

    def verification(self, data: Any, plan: Any) -> dict[str, dict[str, int]]:
        raise NotImplementedError

    def existing(self, data: Any, plan: Any) -> Any:
        """The plan in the form a `changes` objective term keeps as its `existing` parameter."""
        raise NotImplementedError

    def uncertain_ids(self, data: Any) -> list[str]:
        """The ids of the uncertain (ranged) inputs of the data."""
        return [u.id for u in data.uncertain]

    def evaluate(
        self, data: Any, rules: list[Rule], objective: list[ObjectiveTerm], plan: Any, typed: TypedParams | None = None
    ) -> tuple[dict[str, Verdict], dict[str, int]]:
        """Verdict per rule and figure per objective term (``typed``: the instance's parsed
        parameters; without it every item is parsed here)."""
        typed = typed or TypedParams(self.rule_params, self.term_params)
        verdicts = {r.id: self.checks[r.kind](data, plan, typed.rule(r)) for r in rules}
        return verdicts, {t.id: self.objective_value(data, plan, t, typed.term(t)) for t in objective}

    # -- writing -------------------------------------------------------------------
    def plan_schema(self, data: Any, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        raise NotImplementedError

    def verification_schema(self, data: Any) -> dict[str, Any]:
        raise NotImplementedError


# -- grading one answer ----------------------------------------------------------------
def check_answer(tc: TaskChecker, instance: Instance, answer: Any) -> dict[str, Verdict]:
    """Verdict per checklist item id for a parsed answer (None when nothing parsed)."""
    data = tc.data(instance)
    lk = instance.memo(f"{tc.family}.lookups", lambda: tc.lookups(data))
    items = instance.checklist
    if not isinstance(answer, dict):
        return {it.id: (False, "no JSON object to check") for it in items}
    feasible = answer.get("feasible")
    if not isinstance(feasible, bool):
        return {it.id: (False, "'feasible' must be true or false") for it in items}
    if feasible:
        plan, why = tc.read_section(instance, data, answer, lk, instance.rules)
    else:
        plan, why = None, "the answer declares the instance infeasible"
        if conflict_list(answer) is None:
            return {it.id: (False, "'conflict' must be a list of rule ids") for it in items}
    ctx = CheckContext(
        instance=instance, checker=tc, data=data, lookups=lk, answer=answer, feasible=feasible, plan=plan, why=why
    )
    if plan is not None:
        ctx.verdicts, ctx.values = tc.evaluate(data, instance.rules, instance.objective, plan, tc.typed(instance))
    judged: dict[str, dict[str, Verdict]] = {}  # mechanism id -> its verdicts, computed once

    def by(mech: Mechanism, rule: str) -> Verdict:
        if mech.id not in judged:
            judged[mech.id] = mech.verdicts(ctx)
        return judged[mech.id][rule]

    cert = instance.certificate
    out: dict[str, Verdict] = {}
    for it in items:
        rule = it.rule
        owner = ITEM_OWNERS.get(rule)
        needs_plan = owner is None or next(i.needs_plan for i in owner.items if i.rule == rule)
        if rule == "format":
            out[it.id] = format_verdict(instance, answer, plan is not None, why)
        elif owner is not None and not needs_plan:
            out[it.id] = by(owner, rule)
        elif plan is None:
            out[it.id] = (False, why if feasible else "no plan to check")
        elif rule == "objective":
            best = cert.objective or {}
            out[it.id] = (ctx.values == best, f"plan scores {ctx.values}; certified optimum {best}")
        elif rule == "validation":
            out[it.id] = validation_verdict(answer, ctx.values)
        elif owner is not None:
            out[it.id] = by(owner, rule)
        elif rule.startswith("objective:"):
            key = rule.split(":", 1)[1]
            want = (cert.objective or {}).get(key)
            out[it.id] = (ctx.values.get(key) == want, f"plan gives {key}={ctx.values.get(key)}; certified {want}")
        else:
            out[it.id] = ctx.verdicts.get(rule, (False, f"unknown rule {rule}"))
    return out


def figures_verdict(
    stated: Any, true: dict[str, dict[str, int]], key: str, name_key: Callable[[str], str] = norm
) -> Verdict:
    """Stated figures (group -> name -> integer) must equal the true ones, names matched by
    ``name_key``; a group naming anything else fails."""
    if not isinstance(stated, dict):
        return False, f"'{key}' section is missing"
    for group, figures in true.items():
        got = stated.get(group)
        if not isinstance(got, dict):
            return False, f"'{key}.{group}' is missing"
        keys = {name_key(k): v for k, v in got.items() if isinstance(k, str)}
        for name, value in figures.items():
            if stated_int(keys.get(name_key(name))) != value:
                return False, f"'{key}.{group}.{name}' is {keys.get(name_key(name))!r}; the plan gives {value}"
        known = {name_key(k) for k in figures}
        extra = [k for k in got if not isinstance(k, str) or name_key(k) not in known]
        if extra:
            return False, f"'{key}.{group}' names unknown {[str(k)[:20] for k in extra[:3]]}"
    return True, "figures match the plan"


# -- the answer contract ---------------------------------------------------------------
def figures_schema(groups: dict[str, tuple[list[str], str]]) -> dict[str, Any]:
    """Verification section: group -> (names, what each figure is)."""
    return {
        "type": "object",
        "properties": {
            g: {"type": "object", "properties": {n: {"type": "integer"} for n in names}, "description": what}
            for g, (names, what) in groups.items()
        },
        "description": "figures computed from your plan",
    }


def answer_schema(
    tc: TaskChecker,
    data: Any,
    objective: list[ObjectiveTerm],
    mechanisms: list[str] | None,
    recovery: Recovery | None,
    rules: list[Rule] | None,
) -> dict[str, Any]:
    """The plan form (the family's plan, its figures, each mechanism's keys) and every
    mechanism's own form (the declaration of infeasibility), as ``oneOf``."""
    mechanisms = mechanisms or []
    plan = tc.plan_schema(data, mechanisms, rules or [])
    ctx = SchemaContext(
        checker=tc, data=data, objective=objective, rules=rules or [], recovery=recovery, plan_schema=plan
    )
    props: dict[str, Any] = {
        "feasible": {"const": True},
        tc.plan_key: plan,
        "objective": objective_schema(objective, "the plan's own objective figures"),
    }
    present = [m for m in MECHANISMS if m.present(mechanisms, recovery)]
    for m in present:
        props.update(m.schema(ctx))
    plan_form = {"type": "object", "properties": props, "required": list(props)}
    forms = [f for f in (m.answer_form(ctx) for m in present) if f is not None]
    return {"oneOf": [plan_form, *forms]}
