"""MILP formulation (PuLP) of Shift & Duty Scheduling: the roster as a covering problem.

The second back-end: the same drafts, every rule kind written again as linear rows over
binaries x[p,d,s] (at most one shift per person per day), and the lexicographic
objective solved stage by stage (optimise one term, fix it, optimise the next). Tests
and the generation benchmark hold its optimum against CP-SAT's on the same instances;
the certifier itself stays CP-SAT. The solver (HiGHS, else CBC; zero gap), the row
builder and the proven-optimal stages are the core's (:mod:`pbsolve.milp_kit`).

Importing this module needs PuLP (the ``milp`` extra); nothing else in the family does.
"""

from __future__ import annotations

import itertools
from typing import Any

import pulp

from pbsolve.checkers.workforce import shift_duty as sd
from pbsolve.checkers.workforce.shift_duty import ShiftDutyData
from pbsolve.family import Draft
from pbsolve.milp_kit import Builder, Formulation, MilpResult, MilpUnproven, solve  # noqa: F401 (MilpUnproven: re-exported)
from pbsolve.params import parse
from pbsolve.schema import ObjectiveTerm, Rule

TASKS = ("shift_duty_scheduling",)


def _roster(draft: Draft, without: str | None) -> Formulation:
    d = ShiftDutyData.model_validate(draft.data)
    b = Builder("shift_duty")
    days, shifts, staff = d.days, d.shifts, d.staff
    x = {(q.id, t.id, s.id): b.var(0, 1, binary=True) for q in staff for t in days for s in shifts}
    for q in staff:
        for t in days:
            b.add(pulp.lpSum([x[q.id, t.id, s.id] for s in shifts]) <= 1)

    def works(q: str, t: str) -> Any:
        return pulp.lpSum([x[q, t, s.id] for s in shifts])

    def hours(q: str) -> Any:
        return pulp.lpSum([s.hours * x[q, t.id, s.id] for t in days for s in shifts])

    def count(q: str, shift: str) -> Any:
        return pulp.lpSum([x[q, t.id, shift] for t in days])

    def staffed(t: str, s: str) -> Any:
        return pulp.lpSum([x[q.id, t, s] for q in staff])

    def rule(r: Rule) -> None:
        p: Any = parse(sd.RULE_PARAMS, r)
        k = r.kind
        if k in ("coverage", "absence_cover"):
            extra = 1 if k == "absence_cover" else 0
            for c in d.cover:
                if c.need:
                    b.add(staffed(c.day, c.shift) >= c.need + extra)
        elif k == "skill_cover":
            for t, s in p.slots:
                b.add(pulp.lpSum([x[q.id, t, s] for q in staff if p.skill in q.skills]) >= p.min)
        elif k == "holidays":
            for q in staff:
                for t in q.holidays:
                    b.add(works(q.id, t) == 0)
        elif k == "person_absent":
            for t in p.days:
                b.add(works(p.person, t) == 0)
        elif k == "max_hours":
            for q in p.people:
                b.add(hours(q) <= p.max)
        elif k == "min_hours":
            for q in p.people:
                b.add(hours(q) >= p.min)
        elif k == "forbidden_succession":
            for q in staff:
                for today, tomorrow in itertools.pairwise(days):
                    b.add(x[q.id, today.id, p.first] + x[q.id, tomorrow.id, p.then] <= 1)
        elif k == "shift_ban":
            b.add(pulp.lpSum([x[p.person, t.id, s] for t in days for s in p.shifts]) == 0)
        elif k == "max_consecutive":
            for q in staff:
                for i in range(len(days) - p.max):
                    b.add(pulp.lpSum([works(q.id, t.id) for t in days[i : i + p.max + 1]]) <= p.max)
        elif k == "complete_weekends":
            for q in p.people:
                for weekend in d.weekends:
                    for sat, sun in itertools.pairwise(weekend):
                        b.add(works(q, sat) == works(q, sun))
        elif k == "shift_balance":
            for one in staff:
                for other in staff:
                    if one.id != other.id:
                        b.add(count(one.id, p.shift) - count(other.id, p.shift) <= p.max)
        elif k == "weekend_cap":
            for q in p.people:
                b.add(pulp.lpSum([works(q, t.id) for t in days if t.weekend]) <= p.max)
        elif k == "min_rest":
            _min_rest(p.hours)
        elif k == "night_fatigue":
            for q in staff:
                for e in range(p.run - 1, len(days)):
                    run = pulp.lpSum([x[q.id, days[i].id, p.shift] for i in range(e - p.run + 1, e + 1)])
                    for j in range(e + 1, min(len(days), e + 1 + p.rest)):
                        b.add(run + works(q.id, days[j].id) <= p.run)
        elif k == "run_hours":
            _run_hours(p.max)
        else:
            raise ValueError(f"no MILP row for rule kind {k!r}")

    def _min_rest(gap: int) -> None:
        """Two shifts of one person closer on the clock than ``gap`` hours exclude each other."""
        for i, a in enumerate(days):
            for j in range(i + 1, min(len(days), i + 3)):
                for s in shifts:
                    for u in shifts:
                        end = 24 * i + s.start + s.hours
                        if 24 * j + u.start - end < gap:
                            for q in staff:
                                b.add(x[q.id, a.id, s.id] + x[q.id, days[j].id, u.id] <= 1)

    def _run_hours(cap: int) -> None:
        """A window of days worked throughout holds at most ``cap`` hours; a day off in it
        lifts the bound by the most the window could hold."""
        longest = max(s.hours for s in shifts)
        for q in staff:
            for i in range(len(days)):
                for j in range(i, len(days)):
                    window = days[i : j + 1]
                    big = longest * len(window)
                    if big <= cap:
                        continue
                    worked = pulp.lpSum([s.hours * x[q.id, t.id, s.id] for t in window for s in shifts])
                    off = pulp.lpSum([1 - works(q.id, t.id) for t in window])
                    b.add(worked <= cap + big * off)

    for r in draft.rules:
        if r.id != without:
            rule(r)

    def term(t: ObjectiveTerm) -> Any:
        if t.kind == "requests":
            return pulp.lpSum([
                r.weight * (works(r.person, r.day) if r.shift is None else x[r.person, r.day, r.shift])
                for r in d.requests
            ])  # fmt: skip
        if t.kind == "wage_cost":
            wage = {q.id: q.wage for q in staff}
            length = {s.id: s.hours for s in shifts}
            return pulp.lpSum([wage[q] * length[s] * v for (q, _, s), v in x.items()])
        if t.kind == "unsocial_max":
            shift = sd.UnsocialMax.model_validate(t.params).shift
            hi = b.var(0, len(days))
            for q in staff:
                b.add(count(q.id, shift) <= hi)
            return hi
        if t.kind == "rota_score":
            pn = {q.id: k for k, q in enumerate(staff, 1)}
            dn = {u.id: k for k, u in enumerate(days, 1)}
            sn = {s.id: k for k, s in enumerate(shifts, 1)}
            return pulp.lpSum([pn[q] * dn[u] * sn[s] * v for (q, u, s), v in x.items()])
        if t.kind == "changes":
            old = {tuple(r) for r in sd.CurrentRoster.model_validate(t.params).existing}
            return pulp.lpSum([(1 - v) if c in old else v for c, v in x.items()])
        raise ValueError(f"no MILP expression for objective kind {t.kind!r}")

    terms = [(t.id, term(t)) for t in draft.objective]

    def decode() -> dict[str, Any]:
        rows = [{"person": q, "day": u, "shift": s} for (q, u, s), v in x.items() if round(v.value() or 0) == 1]
        return {"roster": rows}

    return b, terms, decode


BUILDERS = {"shift_duty_scheduling": _roster}


def optimum(
    draft: Draft, without: str | None = None, time_limit: float = 60.0, backend: str | None = None
) -> MilpResult:
    """The lexicographic optimum of a draft by MILP (optionally with one rule off); the
    backend is HiGHS unless ``backend="CBC"`` or HiGHS is missing."""
    return solve(BUILDERS[draft.spec.task], draft, without, time_limit, backend)
