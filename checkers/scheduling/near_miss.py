"""Near-miss answers for timetables: the family hook of ``pbsolve perturb``.

``near_misses(instance, rng)`` returns ``(kind, answer)`` pairs built from the certified
reference plan. The driver (:mod:`pbsolve.audit.perturb`) renders each answer, grades it and
keeps it only if the grade confirms what the kind promises, so nothing here has to be
trusted; it only has to find good candidates:

- ``break_rule:<rule kind>`` -- one per rule kind where possible: a plan one move away
  from the reference (one event's start or room changed, or two events' assignments
  swapped) under which exactly one rule fails; when every such move also breaks another
  rule, a second single move that repairs the others is searched for. Among such plans,
  those whose objective figures still equal the optimum (so the broken rule is the only
  failing item) are preferred, then those failing the fewest checklist items. Some
  kinds cannot break alone (a deadline at the end of the day; a room clash between
  events that always share a person) and are then absent.
- ``suboptimal`` -- a valid plan one move away with the smallest objective gap found:
  the lexicographically smallest figures above the optimum. Its stated figures are the
  ones the plan really has, so only the optimality item fails.
- ``suboptimal_claims_optimum`` -- the same plan stating the certified optimum's figures
  (the optimality and the stated-figures items fail).
- ``alternative_optimum`` -- a different plan with the optimal figures, when the optimum
  is not unique (every item passes).
- ``format:id_case``, ``format:clock_9_00``, ``format:row_order`` -- the reference with ids
  in other letter cases, ``9:00`` for ``09:00``, rows shuffled and their keys reordered
  (every item still passes). On infeasible instances: ``format:id_case`` on the conflict.

Every plan is judged with :func:`evaluate` (the same rule checks the grader uses).
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.scheduling.checks import Lookups, Plan, check_answer, evaluate, read_plan, verification_figures
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.schema import Instance

MAX_CANDIDATES = 6000  # neighbour plans evaluated per instance (sampled beyond this)
SHORTLIST = 12  # candidates graded in full per kind when choosing the nearest miss
REPAIR_STARTS = 8  # one-move plans tried as the start of a two-move rule break
_LEADING_ZERO_CLOCK = re.compile(r"^0\d:\d\d$")


def _data(instance: Instance) -> TimetableData:
    return instance.memo("scheduling.data", lambda: TimetableData.model_validate(instance.data))


def _lookups(instance: Instance, data: TimetableData) -> Lookups:
    return instance.memo("scheduling.lookups", lambda: Lookups(data))


def _single_moves(data: TimetableData, plan: Plan) -> Iterator[Plan]:
    for e in data.events:
        for s in data.starts(e):
            for r in data.rooms:
                if (s, r.id) != plan[e.id]:
                    yield {**plan, e.id: (s, r.id)}


def _neighbours(data: TimetableData, plan: Plan) -> Iterator[Plan]:
    """Plans one move away: one event re-placed, or two events' assignments swapped."""
    yield from _single_moves(data, plan)
    events = list(data.events)
    for i, a in enumerate(events):
        for b in events[i + 1 :]:
            pa, pb = plan[a.id], plan[b.id]
            if pa == pb or pb[0] not in data.starts(a) or pa[0] not in data.starts(b):
                continue
            yield {**plan, a.id: pb, b.id: pa}


def _rows(data: TimetableData, plan: Plan, backups: dict[str, str] | None) -> list[dict[str, str]]:
    rows = []
    for e in data.events:
        row = {"event": e.id, "start": data.slots[plan[e.id][0]].id, "room": plan[e.id][1]}
        if backups is not None:
            row["backup"] = backups[e.id]
        rows.append(row)
    return rows


def _answer(
    instance: Instance, data: TimetableData, plan: Plan, backups: dict[str, str] | None, figures: dict[str, int]
) -> dict[str, Any]:
    """The reference answer with its main plan replaced, stating ``figures`` and the
    plan's true verification figures (binding, conservative and recovery are kept)."""
    answer = copy.deepcopy(instance.reference)
    answer["schedule"] = _rows(data, plan, backups)
    answer["objective"] = dict(figures)
    if "verification" in answer:
        answer["verification"] = verification_figures(data, plan)
    return answer


def _failing(instance: Instance, answer: dict[str, Any]) -> int:
    return sum(1 for ok, _ in check_answer(instance, answer).values() if not ok)


def _nearest(
    instance: Instance, options: list[tuple[Plan, dict[str, int]]], build: Any, rng: random.Random
) -> dict[str, Any]:
    """The option whose answer fails the fewest checklist items; ties broken by ``rng``."""
    shuffled = options[:]
    rng.shuffle(shuffled)
    best = instance.certificate.objective or {}
    shuffled.sort(key=lambda o: o[1] != best)  # stable: optimum-preserving moves first
    answers = [build(plan, values) for plan, values in shuffled[:SHORTLIST]]
    return min(answers, key=lambda a: _failing(instance, a))


def _repaired(
    data: TimetableData,
    scored: list[tuple[Plan, list[str], dict[str, int]]],
    rule_ids: list[str],
    judge: Any,
    rng: random.Random,
) -> list[tuple[Plan, dict[str, int]]]:
    """Two-move rule breaks, for rules no single move breaks alone: take the one-move
    plans that break the rule together with the fewest others, and look for a second
    single move that repairs the others while the rule stays broken."""
    for rid in rule_ids:
        firsts = [(p, broken) for p, broken, _ in scored if rid in broken]
        if not firsts:
            continue
        fewest = min(len(b) for _, b in firsts)
        pool = [p for p, b in firsts if len(b) == fewest]
        rng.shuffle(pool)
        for first in pool[:REPAIR_STARTS]:
            found = []
            for second in _single_moves(data, first):
                broken, values = judge(second)
                if broken == [rid]:
                    found.append((second, values))
            if found:
                return found
    return []


def _swap_case(text: str) -> str:
    return text.lower() if text != text.lower() else text.upper()


def _format_variants(instance: Instance, rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    ref = instance.reference
    out: list[tuple[str, dict[str, Any]]] = []
    if ref.get("feasible") is False:
        conflict = ref.get("conflict") or []
        if conflict:
            out.append(("format:id_case", {**copy.deepcopy(ref), "conflict": [c.lower() for c in conflict]}))
        return out

    def rows_of(section: dict[str, Any]) -> list[dict[str, Any]]:
        rows = section.get("schedule")
        return rows if isinstance(rows, list) else []

    def each_schedule(answer: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
        yield rows_of(answer)
        if isinstance(answer.get("recovery"), dict):
            yield rows_of(answer["recovery"])

    cased = copy.deepcopy(ref)
    for rows in each_schedule(cased):
        for row in rows:
            for key in ("event", "room", "backup", "start"):
                if isinstance(row.get(key), str):
                    row[key] = _swap_case(row[key])
    if cased != ref:
        out.append(("format:id_case", cased))

    clock = copy.deepcopy(ref)
    changed = False
    for rows in each_schedule(clock):
        for row in rows:
            start = row.get("start")
            if isinstance(start, str) and _LEADING_ZERO_CLOCK.match(start):
                row["start"] = start[1:]
                changed = True
    if changed:
        out.append(("format:clock_9_00", clock))

    shuffled = copy.deepcopy(ref)
    for rows in each_schedule(shuffled):
        order = list(range(len(rows)))
        if len(order) > 1:
            while order == sorted(order):
                rng.shuffle(order)
        rows[:] = [{k: rows[i][k] for k in reversed(list(rows[i]))} for i in order]
    if len(rows_of(ref)) > 1:
        out.append(("format:row_order", shuffled))
    return out


def near_misses(instance: Instance, rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """``(kind, answer)`` candidates for one instance; see the module docstring."""
    out = _format_variants(instance, rng)
    if instance.certificate.status != "optimal":
        return out
    data = _data(instance)
    backups: dict[str, str] | None = {} if any(r.kind == "room_backup" for r in instance.rules) else None
    plan, _ = read_plan(data, instance.reference, _lookups(instance, data), backups)
    if plan is None:
        return out
    best = instance.certificate.objective or {}
    order = [t.id for t in instance.objective]
    kind_of = {r.id: r.kind for r in instance.rules}

    def judge(p: Plan) -> tuple[list[str], dict[str, int]]:
        verdicts, values = evaluate(data, instance.rules, instance.objective, p, backups)
        return [rid for rid, (ok, _) in verdicts.items() if not ok], values

    candidates = list(_neighbours(data, plan))
    if len(candidates) > MAX_CANDIDATES:
        candidates = rng.sample(candidates, MAX_CANDIDATES)
    scored = [(cand, *judge(cand)) for cand in candidates]
    breaks: dict[str, list[tuple[Plan, dict[str, int]]]] = {}
    valid: list[tuple[Plan, dict[str, int]]] = []
    for cand, broken, values in scored:
        if len(broken) == 1:
            breaks.setdefault(kind_of[broken[0]], []).append((cand, values))
        elif not broken:
            valid.append((cand, values))

    def truthful(p: Plan, values: dict[str, int]) -> dict[str, Any]:
        return _answer(instance, data, p, backups, values)

    for kind in sorted(set(kind_of.values())):
        options = breaks.get(kind) or _repaired(data, scored, [r for r, k in kind_of.items() if k == kind], judge, rng)
        if options:
            out.append((f"break_rule:{kind}", _nearest(instance, options, truthful, rng)))

    worse = [(p, v) for p, v in valid if v != best]
    if worse:
        smallest = min(tuple(v[k] for k in order) for _, v in worse)
        ties = [(p, v) for p, v in worse if tuple(v[k] for k in order) == smallest]
        rng.shuffle(ties)
        p, v = min(ties[:SHORTLIST], key=lambda pv: _failing(instance, truthful(*pv)))
        out.append(("suboptimal", truthful(p, v)))
        out.append(("suboptimal_claims_optimum", _answer(instance, data, p, backups, best)))
    same = [(p, v) for p, v in valid if v == best]
    rng.shuffle(same)
    for p, v in same[:SHORTLIST]:  # e.g. a recovery section tied to the reference plan may not follow it
        if _failing(instance, truthful(p, v)) == 0:
            out.append(("alternative_optimum", truthful(p, v)))
            break
    return out
