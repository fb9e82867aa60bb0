"""Grading machinery shared by the allocation task types.

A task type supplies a :class:`TaskChecker`: how to read its plan out of an answer, one
check per rule kind, its objective figures and its verification figures. This module
turns those into a verdict per checklist item, exactly as the checklist describes
(format, every rule, the objective, the stated figures, and the hard-tier items), and
builds the answer schema. Nothing here imports the solver models.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from pbsolve.answer_checks import conflict_list, conflict_verdict, objective_schema, stated_int  # noqa: F401 (re-exported)
from pbsolve.answer_checks import validation_verdict as validation  # noqa: F401 (re-exported)
from pbsolve.answer_checks import RECOVERY_ITEMS, recovery_unchecked  # noqa: F401 (re-exported)
from pbsolve.answer_checks import format_verdict as shared_format_verdict
from pbsolve.answer_checks import recovery_verdicts as recovery_items
from pbsolve.answer_checks import id_set_verdict
from pbsolve.schema import Instance, ObjectiveTerm, Recovery, Rule

Verdict = tuple[bool, str]
Check = Callable[[Any, Any, dict[str, Any]], Verdict]
OK: Verdict = (True, "holds")
MAX_QUANTITY = 10**9

_SPACES = re.compile(r"\s+")


def norm(text: str) -> str:
    """Case- and space-insensitive key."""
    return _SPACES.sub(" ", text.strip().lower())




def lookup(names: list[str]) -> dict[str, str]:
    return {norm(n): n for n in names}


class TaskChecker:
    """What a task type contributes to grading; subclasses fill every method."""

    task: str = ""
    plan_key: str = ""  # the answer key holding the plan
    plan_text: str = ""  # what a complete plan is, for the format item (what read_plan accepts)
    data_type: type = object
    checks: dict[str, Check] = {}
    objective_kinds: frozenset[str] = frozenset()  # the kinds objective_value knows

    # -- reading -------------------------------------------------------------------
    def data(self, instance: Instance) -> Any:
        return instance.memo("allocation.data", lambda: self.data_type.model_validate(instance.data))

    def lookups(self, data: Any) -> Any:
        return None

    def read_plan(self, data: Any, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Any | None, str]:
        raise NotImplementedError

    # -- judging -------------------------------------------------------------------
    def objective_value(self, data: Any, plan: Any, term: ObjectiveTerm) -> int:
        raise NotImplementedError

    def verification(self, data: Any, plan: Any) -> dict[str, dict[str, int]]:
        raise NotImplementedError

    def existing(self, data: Any, plan: Any) -> Any:
        """The plan in the form a `changes` objective term keeps as its `existing` parameter."""
        raise NotImplementedError

    def evaluate(
        self, data: Any, rules: list[Rule], objective: list[ObjectiveTerm], plan: Any
    ) -> tuple[dict[str, Verdict], dict[str, int]]:
        verdicts = {r.id: self.checks[r.kind](data, plan, r.params) for r in rules}
        return verdicts, {t.id: self.objective_value(data, plan, t) for t in objective}

    # -- writing -------------------------------------------------------------------
    def plan_schema(self, data: Any, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        raise NotImplementedError

    def verification_schema(self, data: Any) -> dict[str, Any]:
        raise NotImplementedError

    def plan_json(self, data: Any, plan: Any) -> Any:
        raise NotImplementedError

    def baseline_plan(self, data: Any, instance: Instance) -> Any:
        raise NotImplementedError


# -- grading one answer ----------------------------------------------------------------
def check_answer(tc: TaskChecker, instance: Instance, answer: Any) -> dict[str, Verdict]:
    """Verdict per checklist item id for a parsed answer (None when nothing parsed)."""
    data = tc.data(instance)
    lk = instance.memo("allocation.lookups", lambda: tc.lookups(data))
    items = instance.checklist
    if not isinstance(answer, dict):
        return {it.id: (False, "no JSON object to check") for it in items}
    feasible = answer.get("feasible")
    if not isinstance(feasible, bool):
        return {it.id: (False, "'feasible' must be true or false") for it in items}
    if feasible:
        plan, why = tc.read_plan(data, answer, lk, instance.rules)
    else:
        plan, why = None, "the answer declares the instance infeasible"
        if conflict_list(answer) is None:
            return {it.id: (False, "'conflict' must be a list of rule ids") for it in items}
    out: dict[str, Verdict] = {}
    verdicts: dict[str, Verdict] = {}
    values: dict[str, int] = {}
    if plan is not None:
        verdicts, values = tc.evaluate(data, instance.rules, instance.objective, plan)
    recovery = recovery_verdicts(tc, instance, data, lk, answer, plan) if instance.recovery else {}
    cert = instance.certificate
    for it in items:
        if it.rule == "format":
            out[it.id] = shared_format_verdict(instance, answer, plan is not None, why)
        elif it.rule == "infeasibility":
            out[it.id] = (not feasible, "declares infeasibility" if not feasible else "claims a plan exists")
        elif it.rule == "conflict":
            out[it.id] = conflict_verdict(instance, answer) if not feasible else (False, "names no conflict")
        elif plan is None:
            out[it.id] = (False, why if feasible else "no plan to check")
        elif it.rule == "objective":
            best = cert.objective or {}
            out[it.id] = (values == best, f"plan scores {values}; certified optimum {best}")
        elif it.rule.startswith("objective:"):
            key = it.rule.split(":", 1)[1]
            want = (cert.objective or {}).get(key)
            out[it.id] = (values.get(key) == want, f"plan gives {key}={values.get(key)}; certified {want}")
        elif it.rule == "validation":
            out[it.id] = validation(answer, values)
        elif it.rule == "verification":
            out[it.id] = figures_verdict(answer.get("verification"), tc.verification(data, plan), "verification")
        elif it.rule == "binding":
            out[it.id] = id_set_verdict(answer.get("binding"), cert.binding_rules or [], [r.id for r in instance.rules], "binding")
        elif it.rule == "conservative":
            out[it.id] = id_set_verdict(
                answer.get("conservative"), cert.conservative_inputs or [], [u.id for u in data.uncertain], "conservative"
            )
        elif it.rule.startswith("recovery:"):
            out[it.id] = recovery.get(it.rule, (False, "no recovery plan to check"))
        else:
            out[it.id] = verdicts.get(it.rule, (False, f"unknown rule {it.rule}"))
    return out


def recovery_verdicts(
    tc: TaskChecker, instance: Instance, data: Any, lk: Any, answer: dict[str, Any], main: Any
) -> dict[str, Verdict]:
    """The recovery plan: complete, valid under every rule plus the scenario, and optimal,
    with changes counted against the answer's own main plan."""
    rec = instance.recovery
    assert rec is not None
    section = answer.get("recovery")
    if not isinstance(section, dict):
        return recovery_unchecked(False, "'recovery' section is missing", "'recovery' section is missing")
    rules = [*instance.rules, *rec.scenario]
    plan, why = tc.read_plan(data, section, lk, rules)
    if plan is None or main is None:
        reason = why if plan is None else "no main plan to recover from"
        return recovery_unchecked(plan is not None, why, reason)
    existing = tc.existing(data, main)
    terms = [t.model_copy(update={"params": {"existing": existing}}) if t.kind == "changes" else t for t in rec.objective]
    verdicts, values = tc.evaluate(data, rules, terms, plan)
    return recovery_items(verdicts, values, rec.certificate.objective or {}, section)


def figures_verdict(stated: Any, true: dict[str, dict[str, int]], key: str) -> Verdict:
    if not isinstance(stated, dict):
        return False, f"'{key}' section is missing"
    for group, figures in true.items():
        got = stated.get(group)
        if not isinstance(got, dict):
            return False, f"'{key}.{group}' is missing"
        keys = {norm(k): v for k, v in got.items() if isinstance(k, str)}
        for name, value in figures.items():
            if stated_int(keys.get(norm(name))) != value:
                return False, f"'{key}.{group}.{name}' is {keys.get(norm(name))!r}; the plan gives {value}"
        known = {norm(k) for k in figures}
        extra = [k for k in got if not isinstance(k, str) or norm(k) not in known]
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
    mechanisms: list[str],
    recovery: Recovery | None,
    rules: list[Rule] | None,
) -> dict[str, Any]:
    plan = tc.plan_schema(data, mechanisms, rules or [])
    props: dict[str, Any] = {"feasible": {"const": True}, tc.plan_key: plan, "objective": objective_schema(objective, "the plan's own objective figures")}
    if "conflict_validation" in mechanisms:
        props["verification"] = tc.verification_schema(data)
    if "explainability" in mechanisms:
        props["binding"] = {
            "type": "array",
            "items": {"enum": [r.id for r in rules or []], "title": "rule id"},
            "description": "ids of exactly the rules whose removal alone would allow a better plan",
        }
    if "local_incompleteness" in mechanisms:
        props["conservative"] = {
            "type": "array",
            "items": {"enum": [u.id for u in data.uncertain], "title": "input id"},
            "description": "ids of exactly the uncertain inputs whose best case alone would allow a better plan",
        }
    if recovery is not None:
        props["recovery"] = {
            "type": "object",
            "properties": {tc.plan_key: plan, "objective": objective_schema(recovery.objective, "the recovery plan's own figures")},
            "required": [tc.plan_key, "objective"],
            "description": "the best plan for the scenario",
        }
    plan_form = {"type": "object", "properties": props, "required": list(props)}
    infeasible_form = {
        "type": "object",
        "properties": {
            "feasible": {"const": False},
            "conflict": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                         "description": "the ids of a minimal set of rules that cannot all hold together "
                                        "(dropping any one of them would leave rules that can all hold)"},
        },
        "required": ["feasible", "conflict"],
    }  # fmt: skip
    return {"oneOf": [plan_form, infeasible_form]}


def baseline_answer(tc: TaskChecker, instance: Instance) -> str:
    """A greedy plan (the task's own heuristic) with its own figures: valid JSON, often
    wrong -- realistic failures for exercising the pipeline offline."""
    data = tc.data(instance)
    plan = tc.baseline_plan(data, instance)
    values = {t.id: tc.objective_value(data, plan, t) for t in instance.objective}
    return json.dumps({"feasible": True, tc.plan_key: tc.plan_json(data, plan), "objective": values})
