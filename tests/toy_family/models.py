"""Toy family, solver side: the taxonomy entry, a witness-based sampler, the CP-SAT model
(one encoder per rule kind behind the rule's literal) and the hard hooks.

Decision: x[g,t] = 1 when guest g sits at table t. Only one hard mechanism is in the
pool (infeasibility detection), so the other hard hooks are never called: they say so."""

from __future__ import annotations

import random
from typing import Any

from ortools.sat.python import cp_model

from pbsolve import params
from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.family import Draft, Family, SolverModel
from pbsolve.kit import (
    KindRegistry,
    Settings,
    SizeTable,
    encode_rules,
    insert_at,
    insert_position,
    post,
    sampled_kinds,
    witness_rules,
)
from pbsolve.schema import GenerationSpec, Tier
from pbsolve.sources import Imported, SourceError, SourceFile
from pbsolve.taxonomy import ConstraintSpec, FamilySpec, SubtaskSpec, TaskSpec
from tests.toy_family.checkers import RULE_PARAMS, Avoid, Capacity, Pairs, ToyData, code

TASK = TaskSpec(
    id="seating",
    name="Seating",
    family="toy",
    summary="seat guests at tables under capacity and pair rules",
    subtasks=(SubtaskSpec("dinner", "Dinner", "a dinner party"),),
    pool=(
        ConstraintSpec("table_capacity", "basic", "no table seats more than a number of guests"),
        ConstraintSpec("apart", "basic", "named pairs of guests sit at different tables"),
        ConstraintSpec("together", "basic", "named pairs of guests share a table"),
        ConstraintSpec("avoid", "medium", "a guest does not sit at a named table"),
        ConstraintSpec("infeasibility_detection", "hard", "recognise an impossible request and name a minimal conflict"),
    ),
    base_rules=("table_capacity",),
)


class ToySizes(Settings):
    guests: int
    tables: int


SIZES = SizeTable[ToySizes](tiny=ToySizes(guests=4, tables=2), small=ToySizes(guests=5, tables=3), default=ToySizes(guests=7, tables=3), large=ToySizes(guests=9, tables=4))


class Model:
    """The CP-SAT variables of one draft, read by the encoders."""

    def __init__(self, d: ToyData) -> None:
        self.d, self.m = d, cp_model.CpModel()
        self.x = {(g.id, t): self.m.new_bool_var(f"x[{g.id},{t}]") for g in d.guests for t in d.tables}
        for g in d.guests:
            self.m.add_exactly_one(self.x[g.id, t] for t in d.tables)


ENCODERS: KindRegistry[Any] = KindRegistry("encoder")


@ENCODERS.register("table_capacity")
def _capacity(tm: Model, p: Capacity, lit: cp_model.IntVar) -> None:
    for t in tm.d.tables:
        post(tm.m, sum(tm.x[g.id, t] for g in tm.d.guests) <= p.max, lit)


@ENCODERS.register("apart")
def _apart(tm: Model, p: Pairs, lit: cp_model.IntVar) -> None:
    for a, b in p.pairs:
        for t in tm.d.tables:
            post(tm.m, tm.x[a, t] + tm.x[b, t] <= 1, lit)


@ENCODERS.register("together")
def _together(tm: Model, p: Pairs, lit: cp_model.IntVar) -> None:
    for a, b in p.pairs:
        for t in tm.d.tables:
            post(tm.m, tm.x[a, t] == tm.x[b, t], lit)


@ENCODERS.register("avoid")
def _avoid(tm: Model, p: Avoid, lit: cp_model.IntVar) -> None:
    post(tm.m, tm.x[p.guest, p.table] == 0, lit)


def build(draft: Draft) -> SolverModel:
    d = ToyData.model_validate(draft.data)
    tm = Model(d)
    rule_literals = encode_rules(tm.m, draft.rules, ENCODERS, tm, RULE_PARAMS)
    k, n = len(d.tables), len(d.guests)
    exprs = {
        "cost": (sum(g.cost[t] * tm.x[g.id, t] for g in d.guests for t in d.tables), sum(max(g.cost.values()) for g in d.guests)),
        "code": (sum(i * k ** (n - 1 - j) * tm.x[g.id, t] for j, g in enumerate(d.guests) for i, t in enumerate(d.tables)), k**n),
    }

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        plan = {g.id: next(t for t in d.tables if solver.value(tm.x[g.id, t])) for g in d.guests}
        return {"seating": [{"guest": g, "table": t} for g, t in plan.items()]}

    terms = [(term.id, *exprs[term.kind]) for term in draft.objective]
    return SolverModel(model=tm.m, answer_literals=list(tm.x.values()), rule_literals=rule_literals, objective_terms=terms, decode=decode)


# -- sampling: rules drawn so that a planted witness plan satisfies them -------------
def _b_apart(d: ToyData, w: dict[str, str], rng: random.Random) -> Pairs | None:
    pairs = [(a.id, b.id) for i, a in enumerate(d.guests) for b in d.guests[i + 1 :] if w[a.id] != w[b.id]]
    return Pairs(pairs=[rng.choice(pairs)]) if pairs else None


def _b_together(d: ToyData, w: dict[str, str], rng: random.Random) -> Pairs | None:
    pairs = [(a.id, b.id) for i, a in enumerate(d.guests) for b in d.guests[i + 1 :] if w[a.id] == w[b.id]]
    return Pairs(pairs=[rng.choice(pairs)]) if pairs else None


def _b_avoid(d: ToyData, w: dict[str, str], rng: random.Random) -> Avoid:
    g = rng.choice(d.guests).id
    return Avoid(guest=g, table=rng.choice([t for t in d.tables if t != w[g]]))


BUILDERS = {"apart": _b_apart, "together": _b_together, "avoid": _b_avoid}


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    size = SIZES.of(spec.size)
    tables = [f"T{i}" for i in range(1, size.tables + 1)]
    guests = [{"id": f"G{i}", "cost": {t: rng.randint(0, 3) for t in tables}} for i in range(1, size.guests + 1)]
    d = ToyData.model_validate({"guests": guests, "tables": tables})
    cap = -(-size.guests // size.tables) + rng.randint(0, 1)
    witness = {g.id: tables[i % len(tables)] for i, g in enumerate(rng.sample(d.guests, len(d.guests)))}
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base = [("table_capacity", tiers["table_capacity"], Capacity(max=cap))]
    rules = witness_rules(base, sampled_kinds(spec, TASK.base_rules), tiers, BUILDERS, d, witness, rng)
    objective = [params.make_term("cost", "cost"), params.make_term("code", "code")]
    return Draft(spec=spec, data=d.model_dump(mode="json"), rules=rules, objective=objective)


# -- published data (`pbsolve generate --from FILE`): a seating file ------------------
SOURCE_FORMAT = "a seating file: 'capacity N', 'tables T1 T2 ..', then one 'guest cost-per-table ..' line each"


def read_source(source: SourceFile) -> Imported:
    """The file's guests, tables and capacity; a SourceError names the line at fault."""
    lines = [(n, line.split()) for n, line in enumerate(source.text.splitlines(), 1) if line.strip() and not line.startswith("#")]
    if len(lines) < 3 or lines[0][1][0] != "capacity" or lines[1][1][0] != "tables":
        raise SourceError(f"{source.name}: expected 'capacity N', then 'tables ..', then guest lines")
    tables = lines[1][1][1:]
    guests = []
    for n, words in lines[2:]:
        if len(words) != len(tables) + 1 or not all(w.isdigit() for w in words[1:]):
            raise SourceError(f"{source.name} line {n}: a guest and {len(tables)} whole-number costs expected")
        guests.append({"id": words[0], "cost": dict(zip(tables, map(int, words[1:]), strict=True))})
    if not lines[0][1][1:] or not lines[0][1][1].isdigit():
        raise SourceError(f"{source.name} line {lines[0][0]}: the capacity is a whole number")
    return Imported(subtask="dinner", data={"seating": {"guests": guests, "tables": tables}, "capacity": int(lines[0][1][1])})


def draft_from(spec: GenerationSpec, data: dict[str, Any], rng: random.Random) -> Draft:
    """The file's seating under its capacity; sampled rules follow a round-robin witness."""
    d = ToyData.model_validate(data["seating"])
    witness = {g.id: d.tables[i % len(d.tables)] for i, g in enumerate(d.guests)}
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base = [("table_capacity", tiers["table_capacity"], Capacity(max=data["capacity"]))]
    rules = witness_rules(base, sampled_kinds(spec, TASK.base_rules), tiers, BUILDERS, d, witness, rng)
    objective = [params.make_term("cost", "cost"), params.make_term("code", "code")]
    return Draft(spec=spec, data=d.model_dump(mode="json"), rules=rules, objective=objective)


class ToyFamily(Family):
    spec = FamilySpec(id="toy", name="Toy", summary="a template family (tests only)", tasks=(TASK,))

    def draft(self, spec: GenerationSpec, rng: random.Random) -> Draft:
        return draft(spec, rng)

    def source_format(self, task: str) -> str | None:
        return SOURCE_FORMAT

    def import_source(self, task: str, source: SourceFile) -> Imported:
        return read_source(source)

    def draft_imported(self, spec: GenerationSpec, data: dict[str, Any], rng: random.Random) -> Draft:
        return draft_from(spec, data, rng)

    def build_model(self, draft: Draft) -> SolverModel:
        return build(draft)

    def encoder_kinds(self, task: str) -> frozenset[str]:
        return ENCODERS.kinds()

    def make_infeasible(self, draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
        """A 'together' star around one guest, grown until the table capacity cannot hold
        it: the conflict runs through the capacity rule (the star alone is feasible)."""
        d = ToyData.model_validate(draft.data)
        hub = rng.choice(d.guests).id
        others = [g.id for g in d.guests if g.id != hub]
        rng.shuffle(others)
        position = insert_position(draft.rules, TASK.base_rules, rng)
        for m in range(1, len(others) + 1):
            rule = params.make_rule("together", "hard", Pairs(pairs=[(hub, o) for o in others[:m]]))
            found = Draft(draft.spec, draft.data, insert_at(draft.rules, rule, position), draft.objective, [*draft.mechanisms, "infeasibility_detection"])
            if not is_feasible(build(found), limits):
                return found
        return None

    # The pool has no other hard mechanism, so the core never calls these hooks.
    def make_disruption(self, draft: Draft, plan: dict[str, Any], rng: random.Random, limits: Any, scenario: bool = False) -> Draft | None:
        raise NotImplementedError("the toy pool has no min_change_replanning / exception_recovery")

    def make_robust(self, draft: Draft, rng: random.Random, limits: Any) -> Draft | None:
        raise NotImplementedError("the toy pool has no robustness_design")

    def make_uncertain(self, draft: Draft, rng: random.Random, limits: Any) -> Draft | None:
        raise NotImplementedError("the toy pool has no local_incompleteness")

    def optimistic(self, draft: Draft, uid: str) -> Draft:
        raise NotImplementedError("the toy pool has no local_incompleteness")

    def uncertain_ids(self, draft: Draft) -> list[str]:
        return []

    def report(self, draft: Draft, plan: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError("the toy pool has no conflict_validation")


FAMILY = ToyFamily()
assert code  # the checker's tie-break is the model's "code" term (same numbering)
