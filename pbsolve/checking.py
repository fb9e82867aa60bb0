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
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel

from pbsolve.answer_checks import conflict_list, format_verdict, objective_schema, stated_int, validation_verdict
from pbsolve.mechanisms import ITEM_OWNERS, MECHANISMS, Mechanism
from pbsolve.mechanisms.base import CheckContext, SchemaContext, Verdict
from pbsolve.params import Params, ParamsTable, TypedParams, parsed
from pbsolve.schema import Instance, ObjectiveTerm, Recovery, Rule

V = TypeVar("V")
Check = Callable[[Any, Any, Any], Verdict]  # (data, plan, the rule's Params model) -> verdict
# (data, plan) -> (verdict per rule, figure per objective term): TaskChecker.evaluator
Evaluator = Callable[[Any, Any], "tuple[dict[str, Verdict], dict[str, int]]"]
_SPACES = re.compile(r"\s+")


_NORM_CACHE_SIZE = 4096  # distinct names remembered (answers repeat a few dozen names)
_NORM_CACHE_CHARS = 80  # longer texts are never names of an instance: not worth keeping


def norm(text: str) -> str:
    """Case- and space-insensitive key."""
    found = _norm_cache.get(text)
    return found if found is not None else remember(_norm_cache, text, _SPACES.sub(" ", text.strip().lower()))


_norm_cache: dict[str, str] = {}


def remember(cache: dict[str, str], text: str, key: str) -> str:
    """Keep ``key``, the normalised form of ``text``, in ``cache`` and return it.

    Name normalisation (:func:`norm`, a family's own) is a pure function of the text --
    the same text always gives the same key, whatever the instance -- so its results can
    be shared: answers name the same few entities over and over, and a regular-expression
    pass costs ten times a lookup. Only short texts are kept, and a full cache is emptied,
    so its size stays bounded whatever the answers hold."""
    if len(text) <= _NORM_CACHE_CHARS:
        if len(cache) >= _NORM_CACHE_SIZE:
            cache.clear()
        cache[text] = key
    return key


def exact_names(table: dict[str, V], names: Iterable[str], key: Callable[[str], str] = norm) -> dict[str, V]:
    """``text -> table.get(key(text))`` for each of ``names`` and each key of ``table``
    where that finds something: the spellings answers mostly use (the instance's own),
    read without normalising them. Any other text is looked up by its key, to the same
    effect, so ``exact.get(text)``, falling back to ``table.get(key(text))``, reads
    exactly as ``table.get(key(text))``."""
    out: dict[str, V] = {}
    for text in (*names, *table):
        hit = table.get(key(text))
        if hit is not None:
            out[text] = hit
    return out


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
    checks: ClassVar[Mapping[str, Check]] = {}  # kind -> rule check; each subclass sets its own
    rule_params: ClassVar[ParamsTable] = {}  # kind -> parameter model, for every kind in checks
    term_params: ClassVar[ParamsTable] = {}  # objective kind -> parameter model, every kind objective_value knows

    # -- reading -------------------------------------------------------------------
    def data(self, instance: Instance) -> Any:
        return instance.memo(f"{self.family}.data", lambda: self.data_type.model_validate(instance.data))

    def lookups(self, data: Any) -> Any:
        return None

    def typed(self, instance: Instance) -> TypedParams:
        """The instance's rules and objective terms with parsed parameters, parsed once."""

        def make() -> TypedParams:
            rec = instance.recovery
            owned: list[Rule | ObjectiveTerm] = [
                *instance.rules,
                *instance.objective,
                *(rec.scenario if rec else []),
                *(rec.objective if rec else []),
            ]
            return TypedParams(self.rule_params, self.term_params, owned, parsed(instance))

        return instance.memo(f"{self.family}.params", make)

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
        checks, params, value = self.checks, typed.rule, self.objective_value
        verdicts = {r.id: checks[r.kind](data, plan, params(r)) for r in rules}
        return verdicts, {t.id: value(data, plan, t, typed.term(t)) for t in objective}

    def evaluator(self, rules: list[Rule], objective: list[ObjectiveTerm], typed: TypedParams) -> Evaluator:
        """:meth:`evaluate` under these rules, objective and parsed parameters, for one
        plan after another: ``evaluator(...)(data, plan) == evaluate(data, rules,
        objective, plan, typed)``. Grading binds one per instance, so what ``evaluate``
        looks up per item (the check of its kind, its parameters) is looked up once; a task
        checker with an ``evaluate`` of its own has it called as it is, unless it binds
        its own evaluator as well."""
        if type(self).evaluate is not TaskChecker.evaluate:
            return lambda data, plan: self.evaluate(data, rules, objective, plan, typed)
        return _Evaluation(self, rules, objective, typed)

    # -- writing -------------------------------------------------------------------
    def plan_schema(self, data: Any, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        raise NotImplementedError

    def verification_schema(self, data: Any) -> dict[str, Any]:
        raise NotImplementedError


# -- grading one answer ----------------------------------------------------------------
# How a checklist item is judged (worked out once per checklist, in the order of precedence
# of the original chain of tests: the format item, mechanism items judged without a plan,
# then -- only with a plan -- the objective, the validation, mechanism items, objective
# terms and, last, the numbered rules).
_FORMAT, _MECH_ANY, _OBJECTIVE, _VALIDATION, _MECH, _TERM, _RULE = range(7)
ItemPlan = tuple[str, int, str, "Mechanism | None"]  # (item id, how it is judged, rule or term key, its mechanism)
_ITEMS_KEY = "pbsolve.checking.items"


def _item_plan(item_id: str, rule: str) -> ItemPlan:
    owner = ITEM_OWNERS.get(rule)
    needs_plan = owner is None or next(i.needs_plan for i in owner.items if i.rule == rule)
    if rule == "format":
        return item_id, _FORMAT, rule, None
    if owner is not None and not needs_plan:
        return item_id, _MECH_ANY, rule, owner
    if rule == "objective":
        return item_id, _OBJECTIVE, rule, None
    if rule == "validation":
        return item_id, _VALIDATION, rule, None
    if owner is not None:
        return item_id, _MECH, rule, owner
    if rule.startswith("objective:"):
        return item_id, _TERM, rule.split(":", 1)[1], None
    return item_id, _RULE, rule, None


class _Evaluation:
    """The generic :meth:`TaskChecker.evaluate` for one instance's rules and objective,
    with each rule's check and each item's parsed parameters looked up once: the same
    calls, in the same order, with the same arguments, as ``evaluate`` makes for every
    answer."""

    __slots__ = ("rules", "terms", "value")

    def __init__(self, tc: TaskChecker, rules: list[Rule], objective: list[ObjectiveTerm], typed: TypedParams) -> None:
        checks, params = tc.checks, typed.rule
        self.rules = tuple((r.id, checks[r.kind], params(r)) for r in rules)
        self.terms = tuple((t.id, t, typed.term(t)) for t in objective)
        self.value = tc.objective_value

    def __call__(self, data: Any, plan: Any) -> tuple[dict[str, Verdict], dict[str, int]]:
        value = self.value
        verdicts = {rid: check(data, plan, p) for rid, check, p in self.rules}
        return verdicts, {tid: value(data, plan, t, p) for tid, t, p in self.terms}


class _Prepared:
    """What :func:`check_answer` needs of one instance for one task checker, gathered
    once (see :func:`_prepared`); ``evaluation`` is bound at the first plan to judge."""

    __slots__ = ("checklist", "data", "evaluation", "lk", "objective", "plans", "rules", "typed")

    def __init__(self, tc: TaskChecker, instance: Instance) -> None:
        self.checklist, self.rules, self.objective = instance.checklist, instance.rules, instance.objective
        self.data = data = tc.data(instance)
        self.lk = instance.memo(f"{tc.family}.lookups", lambda: tc.lookups(data))
        self.typed = tc.typed(instance)
        self.plans = tuple(_item_plan(it.id, it.rule) for it in instance.checklist)
        self.evaluation: Evaluator | None = None

    def evaluate(self, tc: TaskChecker, plan: Any) -> tuple[dict[str, Verdict], dict[str, int]]:
        """``tc.evaluate(data, rules, objective, plan, typed)`` for the instance's own items."""
        if self.evaluation is None:
            self.evaluation = tc.evaluator(self.rules, self.objective, self.typed)
        return self.evaluation(self.data, plan)


def _prepared(tc: TaskChecker, instance: Instance) -> _Prepared:
    """The instance's data, lookups and parsed parameters as ``tc`` reads them (its
    ``Instance.memo`` entries), and how each checklist item is judged: gathered once, and
    again for another checklist, rule list or objective."""
    memo: dict[Any, Any] = instance.memo(_ITEMS_KEY, dict)
    kept: _Prepared | None = memo.get(tc)
    if (
        kept is None
        or kept.checklist is not instance.checklist
        or kept.rules is not instance.rules
        or kept.objective is not instance.objective
    ):
        kept = memo[tc] = _Prepared(tc, instance)
    return kept


def check_answer(tc: TaskChecker, instance: Instance, answer: Any) -> dict[str, Verdict]:
    """Verdict per checklist item id for a parsed answer (None when nothing parsed)."""
    prep = _prepared(tc, instance)
    data, lk, item_plans = prep.data, prep.lk, prep.plans
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
    verdicts: dict[str, Verdict] = {}
    values: dict[str, int] = {}
    if plan is not None:
        verdicts, values = prep.evaluate(tc, plan)
    judged: dict[str, dict[str, Verdict]] = {}  # mechanism id -> its verdicts, computed once
    contexts: list[CheckContext] = []  # the mechanisms' view of the answer, made when one is asked

    def by(mech: Mechanism, rule: str) -> Verdict:
        if mech.id not in judged:
            if not contexts:
                contexts.append(
                    CheckContext(
                        instance=instance, checker=tc, data=data, lookups=lk, answer=answer, feasible=feasible,
                        plan=plan, why=why, verdicts=verdicts, values=values,
                    )
                )  # fmt: skip
            judged[mech.id] = mech.verdicts(contexts[0])
        return judged[mech.id][rule]

    cert = instance.certificate
    no_plan = (False, why if feasible else "no plan to check")
    out: dict[str, Verdict] = {}
    for item_id, how, rule, owner in item_plans:
        if how == _RULE:
            out[item_id] = no_plan if plan is None else verdicts.get(rule, (False, f"unknown rule {rule}"))
        elif how == _FORMAT:
            out[item_id] = format_verdict(instance, answer, plan is not None, why)
        elif how == _MECH_ANY:
            assert owner is not None
            out[item_id] = by(owner, rule)
        elif plan is None:
            out[item_id] = no_plan
        elif how == _OBJECTIVE:
            best = cert.objective or {}
            out[item_id] = (values == best, f"plan scores {values}; certified optimum {best}")
        elif how == _VALIDATION:
            out[item_id] = validation_verdict(answer, values)
        elif how == _MECH:
            assert owner is not None
            out[item_id] = by(owner, rule)
        else:  # _TERM: rule is the term's key
            want = (cert.objective or {}).get(rule)
            out[item_id] = (values.get(rule) == want, f"plan gives {rule}={values.get(rule)}; certified {want}")
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
        keyed: dict[Any, str | None] = {}  # each stated name -> its key (None: not a string), keyed once
        keys: dict[str, Any] = {}  # key -> the stated figure (of the last name with that key)
        for k, v in got.items():
            nk = name_key(k) if isinstance(k, str) else None
            keyed[k] = nk
            if nk is not None:
                keys[nk] = v
        known: set[str] = set()
        for name, value in figures.items():
            nk = keyed.get(name)  # a name stated as the plan spells it has its key already
            if nk is None:
                nk = name_key(name)
            v = keys.get(nk)
            if (v if type(v) is int else stated_int(v)) != value:  # an int stands for itself
                return False, f"'{key}.{group}.{name}' is {v!r}; the plan gives {value}"
            known.add(nk)
        extra = [k for k, nk in keyed.items() if nk is None or nk not in known]
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
