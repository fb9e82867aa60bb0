"""The family kit's grading side: what every family's checkers share beyond the core's
grading flow (:mod:`pbsolve.checking`).

A task type supplies a :class:`PlanChecker` (the core's :class:`pbsolve.checking.TaskChecker`
plus a baseline plan and the plan's JSON form); :class:`FamilyChecker` turns a family's
task checkers into the module functions of the :class:`pbsolve.family.Checker` protocol.
Name tables (:class:`Names`) read the entity names an answer gives. Nothing here imports
the solver models.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from pbsolve import checking
from pbsolve.checking import norm
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import ParamsTable
from pbsolve.schema import Instance, ObjectiveTerm, Recovery, Rule

OK: Verdict = (True, "holds")
MAX_QUANTITY = 10**9


def spread_verdict(values: Mapping[str, int], most: int, does: str, unit: str, where: str = "") -> Verdict:
    """The balance rules' check (loads, counts, travel times of people, bases, days): the
    largest and the smallest value at most ``most`` apart. The reason names the first name
    with the largest value and the first with the smallest, in ``values``' order: "{where}A
    {does} 5 {unit} and B 2: more than 1 apart"."""
    hi, lo = max(values, key=values.__getitem__), min(values, key=values.__getitem__)
    if values[hi] - values[lo] > most:
        return False, f"{where}{hi} {does} {values[hi]} {unit} and {lo} {values[lo]}: more than {most} apart"
    return OK


class Names(dict[str, str]):
    """Normalised name -> the name, for the names of one kind (a plain dict to read);
    ``exact`` answers the same for the spellings the instance itself uses
    (:func:`pbsolve.checking.exact_names`), so reading an answer rarely normalises."""

    __slots__ = ("exact",)

    def __init__(self, names: list[str]) -> None:
        super().__init__({norm(n): n for n in names})
        self.exact = checking.exact_names(self, names)

    def find(self, text: str) -> str | None:
        """``self.get(norm(text))``."""
        hit = self.exact.get(text)
        return hit if hit is not None else self.get(norm(text))


def lookup(names: list[str]) -> Names:
    return Names(names)


T = TypeVar("T")


class PerData(Generic[T]):
    """What a checker works out from one plan against one data model (a roster's staffing,
    a timeline), kept with the plan as a field (``field(default_factory=PerData,
    compare=False, repr=False)``): every rule reads it, and a plan read against other data
    (a recovery scenario's) gets its own, so values are kept per data object, by identity."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept: dict[int, tuple[object, T]] = {}

    def get(self, d: object, compute: Callable[[], T]) -> T:
        """The value for ``d``: ``compute()`` the first time, the kept one after."""
        hit = self._kept.get(id(d))
        if hit is not None and hit[0] is d:
            return hit[1]
        value = compute()
        self._kept[id(d)] = (d, value)
        return value


def row_names(row: Any, k: int, what: str, fields: dict[str, Names]) -> tuple[list[str] | None, str]:
    """The names row ``k`` (0-based) of a plan gives under each of ``fields`` (field -> the
    names it may take), each as the data spells it; or None and why not: the row is not an
    object, a field is not a string, or names nothing the data has (the first, in field
    order). ``what`` names a row in the reason ("shipment 3 names unknown site 'X'")."""
    if type(row) is dict:  # the usual row: every field a spelling the instance uses, read at once
        try:
            return [names.exact[row[field]] for field, names in fields.items()], ""
        except (KeyError, TypeError):  # a field missing, unhashable or spelled otherwise: read below
            pass
    if not isinstance(row, dict):
        return None, f"{what} {k + 1} is not an object"
    given: list[str] = []
    for field in fields:
        text = row.get(field)
        if not isinstance(text, str):
            quoted = [f"'{field}'" for field in fields]
            return None, f"{what} {k + 1} needs string fields {', '.join(quoted[:-1])} and {quoted[-1]}"
        given.append(text)
    found: list[str] = []
    for (field, names), text in zip(fields.items(), given, strict=True):
        hit = names.exact.get(text)  # names.find, inlined: this runs for every row of every answer
        if hit is None:
            hit = names.get(norm(str(text)))
            if hit is None:
                return None, f"{what} {k + 1} names unknown {field} {str(text)[:40]!r}"
        found.append(hit)
    return found, ""


def owner_rows(
    section: Any, key: str, owner: str, items: str, owners: Names, what: str
) -> tuple[list[tuple[int, str, list[Any]]] | None, str]:
    """The rows of a plan listed per owner (a vehicle's route, a crew's jobs): the list
    ``section[key]``, each row an object naming its owner under ``owner`` (one of
    ``owners``, at most one row each) and listing ``items`` -- as (row index, owner as the
    data spells it, the raw items), or None and why not. ``what`` names a row in the
    reason ("route 2 names unknown vehicle 'X'"); the items are the caller's to read."""
    rows = section.get(key) if isinstance(section, dict) else None
    if not isinstance(rows, list):
        return None, f"'{key}' is missing or not a list"
    out: list[tuple[int, str, list[Any]]] = []
    seen: set[str] = set()
    for k, row in enumerate(rows):
        if not isinstance(row, dict):
            return None, f"{what} {k + 1} is not an object"
        name, listed = row.get(owner), row.get(items)
        if not isinstance(name, str) or not isinstance(listed, list):
            return None, f"{what} {k + 1} needs a string '{owner}' and a list '{items}'"
        found = owners.find(name)
        if found is None:
            return None, f"{what} {k + 1} names unknown {owner} {name[:40]!r}"
        if found in seen:
            return None, f"{owner} {found} has more than one {what}"
        seen.add(found)
        out.append((k, found, listed))
    return out, ""


def start_rows(
    section: Any, field: str, plural: str, names: Names, durations: Mapping[str, int], horizon: int, unit: str
) -> tuple[dict[str, int] | None, str]:
    """A schedule that gives each entity one whole-number start: the list
    ``section["schedule"]`` of rows naming the entity under ``field`` ("task",
    "operation") and its ``start`` in ``unit``s, each entity (one of ``names``; its
    duration in ``durations``, in the data's order) exactly once and inside ``[0,
    horizon]`` -- as entity -> start, or None and why not (``plural`` names the entities
    in the reason for missing ones)."""
    rows = section.get("schedule") if isinstance(section, dict) else None
    if not isinstance(rows, list):
        return None, "'schedule' is missing or not a list"
    plan: dict[str, int] = {}
    for k, row in enumerate(rows):
        if not isinstance(row, dict):
            return None, f"schedule row {k + 1} is not an object"
        name, start = row.get(field), row.get("start")
        if not isinstance(name, str):
            return None, f"schedule row {k + 1} needs a string field '{field}'"
        found = names.find(name)
        if found is None:
            return None, f"schedule row {k + 1} names unknown {field} {name[:40]!r}"
        if isinstance(start, bool) or not isinstance(start, int):
            return None, f"{field} {found} needs a whole-number 'start' {unit}"
        if start < 0 or start + durations[found] > horizon:
            return None, f"{field} {found} starts at {start}: it must start at 0 or later and end by {horizon}"
        if found in plan:
            return None, f"{field} {found} appears more than once"
        plan[found] = start
    missing = [e for e in durations if e not in plan]
    if missing:
        return None, f"{plural} missing from the schedule: {', '.join(missing[:8])}"
    return plan, "complete plan"


class PlanChecker(checking.TaskChecker):
    """A task type's grading side with a baseline plan; subclasses set ``family`` and fill
    every method."""

    def plan_json(self, data: Any, plan: Any) -> Any:
        raise NotImplementedError

    def baseline_plan(self, data: Any, instance: Instance) -> Any:
        raise NotImplementedError

    def neighbours(self, data: Any, plan: Any) -> Iterator[Any]:
        """The plans one move away from ``plan`` (for near-miss answers, see
        :func:`near_misses`); a task type without moves offers none."""
        return iter(())

    def near_misses(self, instance: Instance, rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
        """``pbsolve perturb`` candidates: the kit's search over :meth:`neighbours`
        (a task type with a search of its own overrides this)."""
        return near_misses(self, instance, rng)


NEAR_MISS_MOVES = 400  # single moves judged per instance at most


def near_misses(tc: PlanChecker, instance: Instance, rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """``(kind, answer)`` near misses from the task's single moves of the reference plan
    (the ``near_misses`` hook of ``pbsolve perturb``, which grades each candidate and
    drops any whose grade contradicts its kind): per rule kind, a plan breaking exactly
    one rule of that kind (preferring one whose figures stay optimal), and the valid plan
    with the smallest objective gap above the optimum (``suboptimal``, true figures).
    Each answer is the reference with its plan, figures and verification replaced."""
    if instance.certificate.status != "optimal" or not isinstance(instance.reference, dict):
        return []
    data = tc.data(instance)
    rules, objective = list(instance.rules), list(instance.objective)
    plan, _ = tc.read_section(instance, data, instance.reference, tc.lookups(data), rules)
    if plan is None:
        return []
    moves = list(tc.neighbours(data, plan))
    if len(moves) > NEAR_MISS_MOVES:
        moves = rng.sample(moves, NEAR_MISS_MOVES)
    typed, kind_of = tc.typed(instance), {r.id: r.kind for r in rules}
    best = instance.certificate.objective or {}
    order = [t.id for t in objective]
    breaks: dict[str, tuple[Any, dict[str, int]]] = {}
    worse: list[tuple[tuple[int, ...], int, Any, dict[str, int]]] = []
    for n, cand in enumerate(moves):
        verdicts, values = tc.evaluate(data, rules, objective, cand, typed)
        broken = [rid for rid, (ok, _) in verdicts.items() if not ok]
        if len(broken) == 1:
            kind = kind_of[broken[0]]
            if kind not in breaks or (values == best and breaks[kind][1] != best):
                breaks[kind] = (cand, values)
        elif not broken and values != best:
            worse.append((tuple(values[k] for k in order), n, cand, values))

    def answer(cand: Any, values: dict[str, int]) -> dict[str, Any]:
        out = copy.deepcopy(instance.reference)
        out[tc.plan_key] = tc.plan_json(data, cand)
        out["objective"] = values
        if "verification" in out:
            out["verification"] = tc.verification(data, cand)
        return out

    found = [(f"break_rule:{kind}", answer(*breaks[kind])) for kind in sorted(breaks)]
    if worse:
        _, _, cand, values = min(worse, key=lambda w: (w[0], w[1]))
        found.append(("suboptimal", answer(cand, values)))
        found.append(("suboptimal_claims_optimum", answer(cand, dict(best))))
    return found


def baseline_answer(tc: PlanChecker, instance: Instance) -> str:
    """A greedy plan (the task's own heuristic) with its own figures: valid JSON, often
    wrong -- realistic failures for exercising the pipeline offline."""
    data = tc.data(instance)
    plan = tc.baseline_plan(data, instance)
    _, values = tc.evaluate(data, [], instance.objective, plan, tc.typed(instance))
    return json.dumps({"feasible": True, tc.plan_key: tc.plan_json(data, plan), "objective": values})


class FamilyChecker:
    """The functions of a family's checker module (the :class:`pbsolve.family.Checker`
    protocol) over its task checkers; the module binds them:
    ``check_answer = FAMILY_CHECKER.check_answer`` and so on."""

    def __init__(self, tasks: Mapping[str, PlanChecker]) -> None:
        self.tasks = dict(tasks)

    def task_checker(self, task: str) -> PlanChecker:
        return self.tasks[task]

    def check_answer(self, instance: Instance, answer: Any) -> dict[str, Verdict]:
        return checking.check_answer(self.tasks[instance.task], instance, answer)

    def answer_schema(
        self,
        task: str,
        data: dict[str, Any],
        objective: list[ObjectiveTerm],
        mechanisms: list[str] | None = None,
        recovery: Recovery | None = None,
        rules: list[Rule] | None = None,
    ) -> dict[str, Any]:
        """The answer schema of an instance of ``task`` (a KeyError for a task this family does not have)."""
        tc = self.tasks[task]
        return checking.answer_schema(tc, tc.data_type.model_validate(data), objective, mechanisms, recovery, rules)

    def format_text(self, task: str) -> str:
        """What a complete plan of this task type is, in the words of the format item."""
        return self.tasks[task].plan_text

    def known_kinds(self, task: str) -> tuple[ParamsTable, ParamsTable]:
        """The rule kinds and objective kinds the task type's checker can judge, each with
        its parameter model; KeyError for a task this family does not have. The grader
        refuses instances that use other kinds or whose parameters do not fit."""
        return self.tasks[task].known_kinds()

    def read_data(self, instance: Instance) -> Any:
        """The instance's data as its task type's checker reads it; raises if the data is
        not that task type's (an unknown task is a KeyError). The very object grading then
        reads (kept in ``Instance.memo``), so validating an instance does not parse its
        data twice: a tenth of validating a cold instance, the reward server's usual case."""
        return self.tasks[instance.task].data(instance)

    def baseline_answer(self, instance: Instance) -> str:
        return baseline_answer(self.tasks[instance.task], instance)

    def near_misses(self, instance: Instance, rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
        """The ``pbsolve perturb`` hook over the task checkers (a family module binds it as
        ``near_misses`` to opt in)."""
        return self.tasks[instance.task].near_misses(instance, rng)
