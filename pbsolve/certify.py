"""Certification with CP-SAT: proven optimum, uniqueness, plan counts, conflict sets.

Every solve is deterministic (one worker, fixed seed, deterministic time limit) so the
same draft always yields the same certificate. Anything not proven within the limits
raises :class:`Rejected`; an uncertified instance is never emitted.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from ortools.sat.python import cp_model
from ortools.sat.python import cp_model_helper as cmh

from pbsolve import interrupts
from pbsolve.family import Builds, Draft, SolverModel
from pbsolve.lru import LockedLRU
from pbsolve.schema import Certificate


class Rejected(Exception):
    """The draft could not be certified; ``reason`` is a short, countable key."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class SolverLimits:
    deterministic_time: float = 20.0  # per solve, in CP-SAT deterministic seconds
    plan_count_cap: int = 16
    count_budget: float = 10.0  # deterministic seconds for counting optimal plans, in all
    max_conflict_sets: int = 12
    max_conflict_solves: int = 600


def phase_clock() -> float:
    """CPU seconds of this process: the clock of :class:`CertStats`. Every solve runs one
    worker in the calling thread, so a phase's CPU time is the work it did; wall time
    would also count whatever else the machine runs, and the ratio of two phases (the
    uniqueness proof against the first solve) would move with the machine's load."""
    return time.process_time()


@dataclass
class CertStats:
    """CPU seconds (:func:`phase_clock`) spent in each phase of certification, and the
    number of solves."""

    first_solve_s: float = 0.0
    uniqueness_s: float = 0.0
    count_s: float = 0.0
    infeasibility_s: float = 0.0
    solves: int = 0


@dataclass
class CertResult:
    certificate: Certificate
    plan: dict[str, Any] | None  # decoded reference plan (feasible) or None
    stats: CertStats = field(default_factory=CertStats)


class StoppableSolver(cp_model.CpSolver):
    """A CpSolver that an interrupt stops, and whose interrupted solves never count.

    A search stopped by :func:`pbsolve.interrupts.request_stop` returns UNKNOWN or FEASIBLE,
    which the certifier would take for a time-out (a rejection, then a re-sample that
    changes the run's output). Instead :class:`~pbsolve.interrupts.Interrupted` is raised,
    and no rejection handler catches it."""

    def solve(self, model: cp_model.CpModel, solution_callback: Any = None) -> Any:
        interrupts.check()
        with interrupts.solving(self):
            status = super().solve(model, solution_callback)
        interrupts.check()
        return status


class LeanCpModel(cp_model.CpModel):
    """A ``CpModel`` without OR-Tools' pre-PEP 8 aliases (``AddBoolOr`` and the like),
    which its constructor builds per instance by walking ``dir()``: 7 ms of Python per
    model, about a fifth of a default instance's building time, for names nothing here
    calls. The model and its proto are otherwise CP-SAT's own."""

    def _add_pre_pep8_methods(self) -> None:
        return None

    def _set_objective(self, obj: Any, maximize: bool) -> None:
        """OR-Tools' own objective, with the variable indices written in one call rather
        than one proto append per variable (a 5,000-term objective: 22 against 94 ms)."""
        if not (isinstance(obj, cp_model.LinearExpr) and obj.is_integer()):
            super()._set_objective(obj, maximize)
            return
        self.clear_objective()
        flat = cmh.FlatIntExpr(obj)
        objective = self.model_proto.objective
        objective.vars.extend([v.index for v in flat.vars])
        sign = -1 if maximize else 1
        objective.scaling_factor = float(sign)
        objective.offset = sign * flat.offset
        objective.coeffs.extend([sign * c for c in flat.coeffs] if maximize else flat.coeffs)


def new_model() -> cp_model.CpModel:
    """An empty CP-SAT model for the certifier and every family's model (see :class:`LeanCpModel`)."""
    return LeanCpModel()


def make_solver(
    limits: SolverLimits, presolve: bool = True, optimise: bool = False, parameters: dict[str, Any] | None = None
) -> cp_model.CpSolver:
    """A deterministic single-worker solver; ``parameters`` (a model's own, see
    :class:`SolverModel`) may change the search (``linearization_level``), never the
    determinism settings below, which always win.

    CP-SAT never installs its own SIGINT handler (``catch_sigint_signal``): pbsolve owns
    the signals (:mod:`pbsolve.interrupts`)."""
    solver = StoppableSolver()
    p = solver.parameters
    if optimise:
        # The full LP relaxation proves timetable optima far sooner on one worker
        # (measured: 0.05 s against 2.3 s on the slowest default course instance).
        p.linearization_level = 2
    for key, value in (parameters or {}).items():
        setattr(p, key, value)
    p.num_workers = 1
    p.random_seed = 0
    p.max_deterministic_time = limits.deterministic_time
    p.cp_model_presolve = presolve
    p.log_search_progress = False
    p.catch_sigint_signal = False
    return solver


def lexicographic_weights(bounds: list[int]) -> list[int]:
    """Integer weights w with sum(w_k * f_k) ordering plans lexicographically by (f_1, f_2, ...).

    Each f_k must lie in [0, bounds[k]]; w_k exceeds the largest possible sum of all
    later terms, so a better earlier term always wins.
    """
    weights = [1] * len(bounds)
    acc = 1
    for k in range(len(bounds) - 1, -1, -1):
        weights[k] = acc
        acc *= bounds[k] + 1
    if acc >= 2**62:
        raise Rejected("objective_overflow", f"lexicographic weight {acc} exceeds int64")
    return weights


def _solve(solver: cp_model.CpSolver, model: cp_model.CpModel, stats: CertStats, callback: Any = None) -> Any:
    stats.solves += 1
    return solver.solve(model, callback)


class _Incumbents(cp_model.CpSolverSolutionCallback):
    """The answer values of every plan an optimisation finds, in the order found (each
    better than the one before): the plan before the optimum is a complete, feasible plan
    other than the reference, a ready incumbent for the uniqueness proof
    (``SolverModel.uniqueness_hint``). Recording changes nothing in the search."""

    def __init__(self, variables: list[cp_model.IntVar]) -> None:
        super().__init__()
        self.variables = variables
        self.plans: list[list[int]] = []

    def on_solution_callback(self) -> None:
        value = self.value
        self.plans.append([int(value(v)) for v in self.variables])

    def before(self, reference: list[int]) -> list[int] | None:
        """The last plan found that is not the reference (None: the first plan was optimal)."""
        return next((plan for plan in reversed(self.plans) if plan != reference), None)


def _objective_values(sm: SolverModel, solver: cp_model.CpSolver) -> dict[str, int]:
    return {tid: int(solver.value(expr)) for tid, expr, _ in sm.objective_terms}


def _answer_values(sm: SolverModel, solver: cp_model.CpSolver) -> list[int]:
    """The values of the answer variables: the literals, then the integers. With a
    symmetry the model breaks itself, a plan that is not canonical is a model bug."""
    values = [int(solver.value(v)) for v in (*sm.answer_literals, *sm.answer_ints)]
    if sm.symmetry is not None and sm.symmetry.in_model and sm.symmetry.canonical(values) != values:
        raise Rejected("solver_disagreement", "the model's symmetry breaking admitted a non-canonical plan")
    return values


def _exclude(
    model: cp_model.CpModel, sm: SolverModel, values: list[int], leave_out: frozenset[int] | None = None
) -> int:
    """No-good cut on the answer: every assignment that states it is excluded (one, or
    each image under the model's :class:`~pbsolve.family.Symmetry`). With ``leave_out``
    (see :func:`_counted_literals`; no symmetry to cut images of) the cut leaves in the
    plans that grow the answer by those literals. Returns the proto index of the last cut
    added, to widen it in place (:func:`_grown`)."""
    images = [values] if sm.symmetry is None or sm.symmetry.in_model else sm.symmetry.images(values)
    return [_exclude_one(model, sm, image, leave_out) for image in images][-1]


def _exclude_one(
    model: cp_model.CpModel, sm: SolverModel, values: list[int], leave_out: frozenset[int] | None = None
) -> int:
    """No-good cut: at least one answer variable differs from the given assignment.

    A literal differs by taking the other value; an integer by a fresh Boolean that
    enforces ``var != value`` (one literal per integer: with a literal for each side, the
    re-optimisation had twice the choices to refute; measured in CPU time on 12 default
    instances per task type, the proof took 0.45 s instead of 0.72 s on material
    allocation, 0.08 s instead of 0.10 s on urban traffic (20 instances), about the same
    on the others, every instance byte-identical)."""
    n = len(sm.answer_literals)
    # literal indices as the proto writes them (the negation of literal i is -i - 1): a
    # Python object per literal cost the timed proof phase about 0.1 ms per 240 literals
    differs = [-lit.index - 1 if v else lit.index for lit, v in zip(sm.answer_literals, values[:n])]
    if leave_out:
        differs = [i for i in differs if i not in leave_out]
    for var, v in zip(sm.answer_ints, values[n:]):
        moved = model.new_bool_var("")
        model.add(var != v).only_enforce_if(moved)
        differs.append(moved.index)
    constraints = model.proto.constraints
    constraints.add().bool_or.literals.extend(differs)
    return len(constraints) - 1


def _counted_literals(sm: SolverModel) -> frozenset[int] | None:
    """The answer literals the first objective term counts, when that term is a sum of
    answer literals with positive coefficients and nothing else (None otherwise, or with a
    symmetry whose images the cut must exclude).

    A plan that keeps every answer literal the reference sets, every other answer
    variable as the reference has it, and sets one of these literals more is worse than
    the reference on the first term: the uniqueness cut can leave such plans in
    (:func:`_settled_by_lean_cut` says when their absence is proven anyway)."""
    if (sm.symmetry is not None and not sm.symmetry.in_model) or not sm.objective_terms:
        return None
    flat = _flat(sm.objective_terms[0][1])
    if isinstance(flat, str):
        return None
    indices, coeffs, offset = flat
    answer = {lit.index for lit in sm.answer_literals}
    if offset or not indices or min(coeffs) <= 0 or not answer.issuperset(indices):
        return None
    return frozenset(indices)


def _settled_by_lean_cut(sm: SolverModel, solver: cp_model.CpSolver, status: Any, best: dict[str, int]) -> bool:
    """Whether the re-optimisation under the lean cut answered the single cut's question:
    it found a plan as good as the reference on the first term. The plans the lean cut
    left in are all worse there (:func:`_counted_literals`), so none of them beats it.
    Not settled: no plan found (INFEASIBLE), or one worse on the first term; the caller
    widens the cut to the single cut and asks again."""
    if status != cp_model.OPTIMAL:
        return status != cp_model.INFEASIBLE  # a time-out is the caller's rejection either way
    tid, expr, _ = sm.objective_terms[0]
    return int(solver.value(expr)) <= best[tid]


def _grown(sm: SolverModel, values: list[int], counted: frozenset[int]) -> list[int]:
    """The literals the lean cut left out: the counted literals the reference leaves unset."""
    return [lit.index for lit, v in zip(sm.answer_literals, values) if not v and lit.index in counted]


def _hint(model: cp_model.CpModel, variables: list[cp_model.IntVar], values: list[int]) -> None:
    """``model.add_hint`` for each variable, written to the proto in two calls: the hint is
    part of the timed uniqueness phase, and one ``add_hint`` per variable cost it more
    than a tenth of its CPU time on volunteer rosters (240 answer literals, a 6 ms
    proof). The proto is the same, entry for entry."""
    indices = [v.index for v in variables]
    if min(indices, default=0) < 0:  # a negated literal: OR-Tools' own call hints its variable
        for var, value in zip(variables, values):
            model.add_hint(var, value)
        return
    hint = model.proto.solution_hint
    hint.vars.extend(indices)
    hint.values.extend(values)


def _first_difference(best: dict[str, int], other: dict[str, int]) -> tuple[str, int] | None:
    for key, value in best.items():
        if other[key] != value:
            return key, other[key] - value
    return None


def certify_feasible(family: Builds, draft: Draft, limits: SolverLimits, count_plans: bool = True) -> CertResult:
    """Prove the optimum and its uniqueness; count optimal plans when it is not unique.

    With ``count_plans=False`` a non-unique optimum is rejected at once (``not_unique``):
    the caller will re-sample, so counting would be wasted work.

    The two optimisations run with the search settings that prove these models fastest
    (:func:`_tuned`). Those settings decide nothing a unique optimum's certificate states,
    but which of several optimal plans a search returns depends on them; so an optimum
    that is not unique is certified again, and counted, with CP-SAT's default search
    (presolve on, the model's own parameters), and the reference plan of such an
    instance stays what it has always been for its seed.
    """
    stats = CertStats()
    result = _certify(family.build_model(draft), limits, count_plans, stats, tuned=True)
    if result is None:
        result = _certify(family.build_model(draft), limits, count_plans, stats, tuned=False)
    assert result is not None
    return result


def _tuned(sm: SolverModel, limits: SolverLimits, phase: Literal["first", "uniqueness"]) -> cp_model.CpSolver:
    """The solver of one phase of :func:`certify_feasible`: the first optimisation without
    presolve (measured on 370 stored instances of 13 task types: 3.7 against 5.1 s, the same
    certificates), the uniqueness re-optimisation as the model's
    ``uniqueness_parameters`` say, both with the model's ``speed_parameters`` (see
    :class:`~pbsolve.family.SolverModel`)."""
    tuned = {**sm.parameters, **sm.speed_parameters}
    if phase == "first":
        return make_solver(limits, presolve=False, optimise=True, parameters=tuned)
    presolve, extra = _with_presolve(sm.uniqueness_parameters, default=True)
    return make_solver(limits, presolve=presolve, optimise=True, parameters={**tuned, **extra})


def _with_presolve(parameters: dict[str, Any], default: bool) -> tuple[bool, dict[str, Any]]:
    """A model's parameters of one kind of solve, split into whether that solve presolves
    (``cp_model_presolve``, ``default`` when unset: :func:`make_solver` takes it as an
    argument) and the rest."""
    rest = dict(parameters)
    return bool(rest.pop("cp_model_presolve", default)), rest


def _certify(
    sm: SolverModel, limits: SolverLimits, count_plans: bool, stats: CertStats, tuned: bool
) -> CertResult | None:
    """:func:`certify_feasible` on a fresh model; None when ``tuned`` and the optimum is not
    unique with plans to count (the caller certifies it again untuned)."""
    model = sm.model
    model.add_assumptions(list(sm.rule_literals.values()))
    bounds = [ub for _, _, ub in sm.objective_terms]
    weights = lexicographic_weights(bounds)
    weighted = sum(w * expr for w, (_, expr, _) in zip(weights, sm.objective_terms))
    model.minimize(weighted)

    t0 = phase_clock()
    first = _tuned(sm, limits, "first") if tuned else make_solver(limits, optimise=True, parameters=sm.parameters)
    solver = first
    seen = _Incumbents([*sm.answer_literals, *sm.answer_ints]) if tuned and sm.uniqueness_hint else None
    status = _solve(solver, model, stats, seen)
    stats.first_solve_s += phase_clock() - t0
    if status == cp_model.INFEASIBLE:
        raise Rejected("unexpectedly_infeasible")
    if status == cp_model.MODEL_INVALID:
        raise Rejected("model_invalid", solver.status_name(status))
    if status != cp_model.OPTIMAL:
        raise Rejected("timeout_first_solve", solver.status_name(status))
    best = _objective_values(sm, solver)
    best_weighted = int(solver.value(weighted))
    plan = sm.decode(solver)
    ref_values = _answer_values(sm, solver)

    # Uniqueness on the answer variables: exclude the reference, re-optimise. This second,
    # independent optimisation also confirms the first: it must not find a better plan.
    t1 = phase_clock()
    if tuned and sm.uniqueness_levels_after is not None:
        after = sm.uniqueness_levels_after if first.deterministic_time <= sm.uniqueness_levels_after else 0.0
        status, solver = _uniqueness_by_levels(sm, limits, stats, best, ref_values, after)
    else:
        counted = _counted_literals(sm) if tuned and sm.uniqueness_lean_cut else None
        cut = _exclude(model, sm, ref_values, leave_out=counted)
        incumbent = seen.before(ref_values) if seen is not None else None
        if incumbent is not None:  # a plan the cut leaves in: the proof starts with an incumbent
            _hint(model, [*sm.answer_literals, *sm.answer_ints], incumbent)
        solver = _tuned(sm, limits, "uniqueness") if tuned else first  # untuned: one solver for both, as always
        status = _solve(solver, model, stats)
        if counted is not None and not _settled_by_lean_cut(sm, solver, status, best):
            model.proto.constraints[cut].bool_or.literals.extend(_grown(sm, ref_values, counted))  # the single cut
            solver = _tuned(sm, limits, "uniqueness")
            status = _solve(solver, model, stats)
    stats.uniqueness_s += phase_clock() - t1
    second_best: dict[str, int] | None = None
    margin: int | None = None
    margin_term: str | None = None
    count, exact = 1, True
    if status == cp_model.OPTIMAL:
        if int(solver.value(weighted)) < best_weighted:
            raise Rejected("solver_disagreement", "re-optimisation found a better plan than the optimum")
        second_best = _objective_values(sm, solver)
        diff = _first_difference(best, second_best)
        if diff is not None:
            margin_term, margin = diff
        elif not count_plans:
            raise Rejected("not_unique")
        elif tuned:
            return None
        else:
            count, exact = _count_optimal(sm, solver, weighted, best_weighted, limits, stats)
            second_best = None
    elif status != cp_model.INFEASIBLE:
        raise Rejected("timeout_uniqueness", solver.status_name(status))

    cert = Certificate(
        status="optimal",
        objective=best,
        optimal_plans=count,
        optimal_plans_cap=limits.plan_count_cap,
        optimal_plans_exact=exact,
        determinacy="unique" if count == 1 else "value",
        second_best=second_best,
        margin=margin,
        margin_term=margin_term,
        confirmations=["cp-sat optimal", "re-optimisation without the reference found no better plan"],
    )
    return CertResult(certificate=cert, plan=plan, stats=stats)


def _clone(model: cp_model.CpModel) -> cp_model.CpModel:
    """A copy of the model to add constraints to (a :class:`LeanCpModel`: OR-Tools' own
    ``clone`` builds a plain ``CpModel``, aliases and all)."""
    copy = new_model()
    copy.proto.copy_from(model.proto)
    copy.rebuild_constant_map()
    return copy


def _uniqueness_by_levels(
    sm: SolverModel, limits: SolverLimits, stats: CertStats, best: dict[str, int], ref_values: list[int], after: float
) -> tuple[Any, cp_model.CpSolver]:
    """The tuned uniqueness re-optimisation of a model that asks for it: the single cut for
    ``after`` deterministic seconds (most proofs take far less), then, unsettled, the
    same question split along the objective terms (:func:`_second_best_by_levels`).
    ``after`` 0 splits at once."""
    if after <= 0:
        return _second_best_by_levels(sm, sm.model, limits, stats, best, ref_values)
    rest = _clone(sm.model)
    _exclude(sm.model, sm, ref_values)
    solver = _tuned(sm, limits, "uniqueness")
    solver.parameters.max_deterministic_time = min(after, limits.deterministic_time)
    status = _solve(solver, sm.model, stats)
    if status in (cp_model.OPTIMAL, cp_model.INFEASIBLE):
        return status, solver
    return _second_best_by_levels(sm, rest, limits, stats, best, ref_values)


def _second_best_by_levels(
    sm: SolverModel,
    model: cp_model.CpModel,
    limits: SolverLimits,
    stats: CertStats,
    best: dict[str, int],
    ref_values: list[int],
) -> tuple[Any, cp_model.CpSolver]:
    """The uniqueness re-optimisation of ``model`` (``sm``'s, its objective the weighted
    sum, no cut yet), split along the objective terms f_1..f_K: the status and the solver
    of the first part that finds a plan, or INFEASIBLE with the last part's solver when
    none does.

    Every part cuts the reference off, as the single re-optimisation does, and the parts
    divide what it searches by the terms' values: the first keeps f_1..f_{K-1} at their
    optimal values (a tie shows here); part j (j = K-1 .. 1, in this order) keeps
    f_1..f_{j-1} and moves f_j off its optimal value. A plan of a later part is
    lexicographically worse than every plan of an earlier one, so the first part that
    finds a plan finds the single re-optimisation's value (or a plan better than the
    optimum: the caller's disagreement check still sees it), and none finding one is its
    infeasibility. The cross-check of the first solve is as wide as the parts searched:
    all of them for a unique optimum; for a second best, the parts up to its own (a plan
    better than the optimum that moves an earlier term off it would sit in a part not
    searched, where only the first solve's proof of optimality rules it out). The fixed terms confine each part to a face of the optimum, where the
    linear relaxation settles what the single cut left to search (material allocation:
    see its ``UNIQUENESS_LEVELS_AFTER``)."""
    terms = [(tid, expr) for tid, expr, _ in sm.objective_terms]
    rest = _clone(model) if len(terms) > 1 else model
    for tid, expr in terms[:-1]:
        model.add(expr == best[tid])
    _exclude(model, sm, ref_values)
    solver = _tuned(sm, limits, "uniqueness")
    status = _solve(solver, model, stats)
    for j in range(len(terms) - 2, -1, -1):
        if status != cp_model.INFEASIBLE:
            break
        model = _clone(rest) if j else rest
        for tid, expr in terms[:j]:
            model.add(expr == best[tid])
        tid, expr = terms[j]
        model.add(expr != best[tid])
        _exclude(model, sm, ref_values)
        solver = _tuned(sm, limits, "uniqueness")
        status = _solve(solver, model, stats)
    return status, solver


def is_feasible(sm: SolverModel, limits: SolverLimits) -> bool:
    """Feasibility of a model with every rule on; a time-out is a rejection, not an answer."""
    feasible, _ = Feasibility(sm, limits, CertStats()).check(list(sm.rule_literals))
    return feasible


def _count_optimal(
    sm: SolverModel,
    solver: cp_model.CpSolver,
    weighted: Any,
    best_weighted: int,
    limits: SolverLimits,
    stats: CertStats,
) -> tuple[int, bool]:
    """Count optimal plans (distinct answers: on the answer variables, up to the model's
    symmetry) up to the cap.

    Called with the model holding one cut (the reference) and ``solver`` holding a second
    optimal plan. Each further plan is found as a feasibility problem with the objective
    pinned to its optimum and every plan found so far excluded. Returns (count, exact):
    the count is a proven lower bound when the cap or the counting budget is reached.
    """
    t0 = phase_clock()
    model = sm.model
    model.clear_objective()
    model.add(weighted == best_weighted)
    count = 2
    values = _answer_values(sm, solver)
    budget = limits.count_budget
    exact = False
    while count < limits.plan_count_cap and budget > 0:
        _exclude(model, sm, values)
        counter = make_solver(limits, parameters=sm.parameters)
        counter.parameters.max_deterministic_time = min(limits.deterministic_time, budget)
        status = _solve(counter, model, stats)
        budget -= counter.deterministic_time
        if status == cp_model.INFEASIBLE:
            exact = True
            break
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            break  # budget spent: the count so far is a lower bound
        values = _answer_values(sm, counter)
        count += 1
    stats.count_s = phase_clock() - t0
    return count, exact


class Feasibility:
    """Feasibility of one model under subsets of its rules (assumptions), each subset and
    presolve setting solved at most once.

    Searches run with presolve off: on these small models presolve is most of a solve
    (measured on the 95 infeasible instances of a hard-tier sample, 13 task types: 117
    against 261 ms per certificate, the same conflict sets). The independent
    confirmations run with presolve on, one pass of it without probing: the full presolve
    was half the time of a certificate (measured on the same 95 instances: 6.3 against
    8.7 s in all, the same conflict sets)."""

    def __init__(
        self,
        sm: SolverModel,
        limits: SolverLimits,
        stats: CertStats,
        optimise: bool = False,
        timeout: str = "timeout_infeasibility",
    ) -> None:
        self.sm, self.limits, self.stats = sm, limits, stats
        self.optimise, self.timeout = optimise, timeout
        self._seen: dict[tuple[frozenset[str], bool], tuple[bool, list[str]]] = {}

    def check(self, rule_ids: list[str], presolve: bool = False) -> tuple[bool, list[str]]:
        """Is the model feasible with only these rules on? If not, also return a core
        (a subset of ``rule_ids``, in their order, that is infeasible on its own)."""
        key = (frozenset(rule_ids), presolve)
        if key not in self._seen:
            self._seen[key] = self._solve(rule_ids, presolve)
        feasible, core = self._seen[key]
        return feasible, [r for r in rule_ids if r in set(core)]

    def _solve(self, rule_ids: list[str], presolve: bool) -> tuple[bool, list[str]]:
        sm = self.sm
        sm.model.clear_assumptions()
        sm.model.add_assumptions([sm.rule_literals[r] for r in rule_ids])
        solver = make_solver(self.limits, presolve=presolve, optimise=self.optimise, parameters=sm.parameters)
        # with an objective kept as search guidance (binding_rules), the first plan found
        # answers the question: no need to optimise it
        solver.parameters.stop_after_first_solution = sm.model.has_objective()
        if presolve:  # a confirmation: one presolve pass without probing (see the class docstring)
            solver.parameters.max_presolve_iterations = 1
            solver.parameters.cp_model_probing_level = 0
        status = _solve(solver, sm.model, self.stats)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return True, []
        if status != cp_model.INFEASIBLE:
            raise Rejected(self.timeout, solver.status_name(status))
        by_index = {lit.index: r for r, lit in sm.rule_literals.items() if r in rule_ids}
        core_idx = solver.sufficient_assumptions_for_infeasibility()
        core = [by_index[i] for i in core_idx if i in by_index]
        if len(core) != len(core_idx):  # a literal outside the assumptions (OR-Tools #5141)
            core = list(rule_ids)
        return False, core


def _shrink(oracle: Feasibility, unsat: list[str]) -> list[str]:
    """Deletion filter: drop each rule whose removal keeps the set infeasible."""
    current = list(unsat)
    for rule in list(current):
        if rule not in current:
            continue
        trial = [r for r in current if r != rule]
        feasible, core = oracle.check(trial)
        if not feasible:
            current = core or trial
    return current


def enumerate_conflict_sets(oracle: Feasibility, rule_ids: list[str]) -> list[list[str]]:
    """All minimal infeasible subsets of the numbered rules (MARCO-style enumeration).

    A map model over one Boolean per rule proposes a maximal unexplored subset; a
    feasible one blocks all its subsets, an infeasible one is shrunk to a minimal
    conflict set, confirmed with presolve on, and blocks all its supersets. The map
    becoming infeasible proves the list complete.
    """
    sm, limits, stats = oracle.sm, oracle.limits, oracle.stats
    sm.model.clear_objective()
    index = {r: i for i, r in enumerate(rule_ids)}
    mp = new_model()
    pick = [mp.new_bool_var(f"pick_{r}") for r in rule_ids]
    mp.maximize(sum(pick))
    map_solver = make_solver(limits)
    found: list[list[str]] = []
    while True:
        if stats.solves > limits.max_conflict_solves:
            raise Rejected("conflict_enumeration_limit", f"{stats.solves} solves")
        status = map_solver.solve(mp)
        if status == cp_model.INFEASIBLE:
            break
        if status != cp_model.OPTIMAL:
            raise Rejected("timeout_infeasibility", "map solver")
        seed = [r for r, p in zip(rule_ids, pick) if map_solver.value(p)]
        feasible, core = oracle.check(seed)
        if feasible:
            rest = [pick[index[r]] for r in rule_ids if r not in set(seed)]
            if not rest:
                raise Rejected("unexpectedly_feasible", "all rules together are satisfiable")
            mp.add_bool_or(rest)
            continue
        mus = _shrink(oracle, core or seed)
        confirm, _ = oracle.check(mus, presolve=True)
        if confirm:
            raise Rejected("solver_disagreement", f"conflict set {mus} feasible with presolve on")
        found.append(mus)
        if len(found) > limits.max_conflict_sets:
            raise Rejected("conflict_enumeration_limit", f"more than {limits.max_conflict_sets} conflict sets")
        mp.add_bool_or([pick[index[r]].Not() for r in mus])
    order = {r: i for i, r in enumerate(rule_ids)}
    return sorted((sorted(m, key=order.__getitem__) for m in found), key=lambda m: (len(m), [order[r] for r in m]))


def certify_infeasible(family: Builds, draft: Draft, limits: SolverLimits) -> CertResult:
    stats = CertStats()
    t0 = phase_clock()
    sm = family.build_model(draft)
    rule_ids = [r.id for r in draft.rules]
    oracle = Feasibility(sm, limits, stats)
    for presolve in (True, False):
        feasible, _ = oracle.check(rule_ids, presolve=presolve)
        if feasible:
            raise Rejected("unexpectedly_feasible", f"presolve={presolve}")
    sets = enumerate_conflict_sets(oracle, rule_ids)
    if not sets:
        raise Rejected("solver_disagreement", "infeasible but no conflict set found")
    stats.infeasibility_s = phase_clock() - t0
    cert = Certificate(
        status="infeasible",
        objective=None,
        optimal_plans=0,
        optimal_plans_cap=limits.plan_count_cap,
        optimal_plans_exact=True,
        determinacy="infeasible",
        conflict_sets=sets,
        confirmations=["cp-sat presolve=on", "cp-sat presolve=off", "each conflict set re-solved alone"],
    )
    return CertResult(certificate=cert, plan=None, stats=stats)


def optimum(family: Builds, draft: Draft, limits: SolverLimits, without: str | None = None) -> tuple[int, ...] | None:
    """The lexicographic optimum as a tuple of term values, optionally with one rule off.

    Tuples compare across drafts whose data differ (their weights may not); None means
    the draft is infeasible.
    """
    sm = family.build_model(draft)
    sm.model.add_assumptions([lit for rid, lit in sm.rule_literals.items() if rid != without])
    weights = lexicographic_weights([ub for _, _, ub in sm.objective_terms])
    sm.model.minimize(sum(w * expr for w, (_, expr, _) in zip(weights, sm.objective_terms)))
    # only the optimal values are returned, which no search setting changes: presolve off
    # is faster on most models (as for the first optimisation of certify_feasible), and
    # the model's optimum_parameters say otherwise where measured
    presolve, extra = _with_presolve(sm.optimum_parameters, default=False)
    solver = make_solver(limits, presolve=presolve, optimise=True, parameters={**sm.parameters, **extra})
    key = _question(sm, solver)
    kept = _OPTIMA.get(key, _UNASKED)
    if kept is not _UNASKED:
        return kept
    status = solver.solve(sm.model)
    if status == cp_model.INFEASIBLE:
        found = None
    elif status == cp_model.OPTIMAL:
        found = tuple(int(solver.value(expr)) for _, expr, _ in sm.objective_terms)
    else:
        raise Rejected("timeout_explanation", solver.status_name(status))
    _OPTIMA.put(key, found)
    return found


# Answers of optimum(), by question. The hard tier asks the same question more than once per
# draft: make_uncertain's last probe is the optimistic draft conservative_inputs solves again,
# and its worst case the draft certified. On benchmarks/generate.py (n = 30, seed 0) 231 of
# 621 optimum() calls repeated one already asked, 1.15 of their 3.13 CPU s (material
# allocation 0.50 of 1.27 s). A question is the model and the solver's parameters exactly,
# and a single-worker CP-SAT search is deterministic, so a kept answer is the one a new solve
# would give; time-outs (and interrupts, which raise) are never kept.
OPTIMA_KEPT = 256
_OPTIMA: LockedLRU[bytes, tuple[int, ...] | None] = LockedLRU(OPTIMA_KEPT)
_UNASKED: Any = object()  # None is a kept answer (infeasible)


def _question(sm: SolverModel, solver: cp_model.CpSolver) -> bytes:
    """A digest of everything a solve's answer depends on: the model (objective and
    assumptions included), the solver's parameters and the objective terms read back."""
    h = hashlib.blake2b(str(sm.model.Proto()).encode(), digest_size=20)
    h.update(str(solver.parameters).encode())
    h.update(repr([_flat(expr) for _, expr, _ in sm.objective_terms]).encode())
    return h.digest()


def _flat(expr: Any) -> tuple[list[int], list[int], int] | str:
    """An objective term as variable indices, coefficients and offset (names may repeat)."""
    if isinstance(expr, cp_model.LinearExpr):
        flat = cmh.FlatIntExpr(expr)
        return [v.index for v in flat.vars], list(flat.coeffs), flat.offset
    return repr(expr)


def binding_rules(family: Builds, draft: Draft, limits: SolverLimits) -> list[str]:
    """The rules whose removal alone allows a better plan (lexicographic objective), in
    rule order.

    One model: its optimum, then the objective bounded below it, and for each rule the
    question whether every other rule can hold under that bound. An infeasibility core
    of such a question (or of all rules under the bound) contains every binding rule,
    so rules outside it are settled without a solve of their own. Equivalent to
    comparing :func:`optimum` without each rule against the optimum, in far fewer and
    cheaper solves."""
    stats = CertStats()
    sm = family.build_model(draft)
    lits = [r.id for r in draft.rules if r.id in sm.rule_literals]
    sm.model.add_assumptions([sm.rule_literals[r] for r in lits])
    weights = lexicographic_weights([ub for _, _, ub in sm.objective_terms])
    weighted = sum(w * expr for w, (_, expr, _) in zip(weights, sm.objective_terms))
    sm.model.minimize(weighted)
    # only the optimal value is used: presolve off, as for certify_feasible's first solve
    solver = make_solver(limits, presolve=False, optimise=True, parameters=sm.parameters)
    status = _solve(solver, sm.model, stats)
    if status != cp_model.OPTIMAL:
        raise Rejected("timeout_explanation", solver.status_name(status))
    best = int(solver.value(weighted))
    sm.model.add(weighted <= best - 1)
    # The objective stays, as search guidance: an optimising search proves the bound far
    # sooner than a bare feasibility search, and Feasibility stops at the first plan that
    # meets it (measured on 74 explainability drafts of 27 task types: 30.9 against
    # 119.6 s in all, the same binding rules; volunteer rosters 0.72 against 20.7 s). Its
    # LP relaxation is what proves the bound (without it some time out). Presolve off, as
    # in Feasibility (one optimisation per rule was slower: 229 against 151 ms each).
    oracle = Feasibility(sm, limits, stats, optimise=True, timeout="timeout_explanation")
    feasible, core = oracle.check(lits)
    if feasible:
        raise Rejected("solver_disagreement", "a plan better than the optimum satisfies every rule")
    candidates = set(core)
    found: list[str] = []
    for rule in lits:
        if rule not in candidates:
            continue
        feasible, core = oracle.check([r for r in lits if r != rule])
        if feasible:
            found.append(rule)
        else:
            candidates &= set(core)
    return found
