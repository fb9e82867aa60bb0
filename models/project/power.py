"""Power Dispatch Planning (unit commitment): every generating unit gets an integer output
in MW for every hour, and the battery an integer charge or discharge.

Decision: one integer output p[u,h] per (unit, hour) (0 = off) and one integer battery
flow b[h] per hour; the on/off Booleans (on exactly when the output is above 0) and the
start-up Booleans are tied to them exactly, so every figure the checker recomputes --
renewable output used, load shed, curtailment, the battery's state of charge -- is one
defined variable of the model (see :mod:`pbsolve.checkers.project.power` for the
definitions). Each numbered rule is a block of linear rows behind its one enforcement
literal, written in the forms whose LP relaxation is tight (``p >= pmin * on``, ramps
with their start-up and shut-down terms, a minimum up time as "a start in the last U
hours keeps the unit on"): on integer points each is the rule as stated. The objective
is lexicographic: energy shed (MWh), then the cost (fuel per MWh × output plus start-up
costs), then, with a battery, its unfilled room summed over the
hours (keep the battery as full as possible: charge early, discharge late), which
decides between plans the cost cannot tell apart. Units have distinct fuel costs, so no
two are interchangeable and no symmetry is broken by a tie-break.
"""

from __future__ import annotations

import random
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible, lexicographic_weights, make_solver
from pbsolve.checkers.project import power as pw
from pbsolve.checkers.project.power import Battery, Plan, PowerData, Unit
from pbsolve.family import Draft, SolverModel
from pbsolve.kit import (
    KindRegistry,
    PositiveRange,
    Settings,
    SizeTable,
    Uncertain,
    insert_position,
    parsed,
    sampled_kinds,
    witness_rules,
)
from pbsolve.model_kit import (
    Encoder,
    HardHooks,
    ModelBase,
    added_rule,
    alone_infeasible,
    first_infeasible,
    solver_model,
    with_conflict_rule,
)
from pbsolve.params import NoParams, Params, make_rule, make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=pw.TASK_ID,
    name="Power Dispatch Planning",
    family="project",
    summary="hourly unit commitment and dispatch of generating units and a battery under demand peaks",
    subtasks=(
        SubtaskSpec(
            "island_grid",
            "Island grid",
            "diesel gensets and a battery serve an island's demand; fuel on site is limited",
        ),
        SubtaskSpec(
            "industrial_microgrid",
            "Industrial microgrid",
            "a must-run CHP plant, gas engines with ramp limits and rooftop solar serve a factory, no storage",
        ),
        SubtaskSpec(
            "regional_fleet",
            "Regional thermal fleet",
            "coal, gas and peaker units with ramps, minimum up and down times and start-up costs, beside a wind farm",
        ),
        SubtaskSpec(
            "solar_storage",
            "Solar plus storage",
            "a solar farm, a battery and backup generators; curtailment is capped",
        ),
        SubtaskSpec(
            "hospital_backup",
            "Hospital backup plan",
            "backup generators and a UPS battery during a grid outage: critical loads must be served, the rest shed",
        ),
    ),
    pool=(
        ConstraintSpec("power_balance", "basic", "units and battery never supply more than the demand"),
        ConstraintSpec("output_limits", "basic", "a unit that is on runs between its minimum and maximum output"),
        ConstraintSpec("must_run", "basic", "named units stay on in every hour"),
        ConstraintSpec("critical_load", "basic", "the critical part of the demand is served in every hour"),
        ConstraintSpec("unit_outage", "basic", "a unit is out of service for some hours"),
        ConstraintSpec("spinning_reserve", "basic", "the units on keep a stated spare capacity in every hour"),
        ConstraintSpec("ramp_limits", "medium", "a unit's output changes by at most its ramp limit between hours"),
        ConstraintSpec("min_up_time", "medium", "a unit that starts up stays on for its minimum up time"),
        ConstraintSpec("min_down_time", "medium", "a unit that shuts down stays off for its minimum down time"),
        ConstraintSpec("max_starts", "medium", "a unit starts up at most so many times"),
        ConstraintSpec("curtailment_cap", "medium", "renewable energy curtailed over the day stays within a cap"),
        ConstraintSpec("fuel_limit", "stateful", "a unit's energy over the day stays within its fuel on site"),
        ConstraintSpec("battery_floor", "stateful", "the battery's state of charge never falls below a floor"),
        ConstraintSpec("battery_end", "stateful", "the battery ends the day with at least a stated charge"),
        *mechanism_pool(
            "N-1 security: whichever single running unit trips, the others' spare capacity covers its output",
            replan="repair a disrupted dispatch changing the fewest hourly figures",
        ),
    ),
    base_rules=("power_balance", "output_limits"),
)

# subtask -> unit names (cheapest first is not implied: costs are drawn)
UNIT_NAMES: dict[str, tuple[str, ...]] = {
    "island_grid": ("Diesel 1", "Diesel 2", "Diesel 3", "Diesel 4", "Harbour genset", "Old diesel"),
    "industrial_microgrid": ("CHP plant", "Gas engine A", "Gas engine B", "Gas engine C", "Boiler turbine", "Peaker"),
    "regional_fleet": ("Coal unit", "CCGT 1", "CCGT 2", "Gas turbine", "Oil peaker", "Hydro"),
    "solar_storage": ("Backup genset 1", "Backup genset 2", "Gas engine", "Biogas engine", "Genset 3", "Genset 4"),
    "hospital_backup": ("Generator A", "Generator B", "Generator C", "Generator D", "Mobile genset", "Generator E"),
}
BATTERY_SUBTASKS = ("island_grid", "solar_storage", "hospital_backup")
# subtask -> (renewable source, its share of the units' total capacity at its best hour, solar-shaped?)
RENEWABLE: dict[str, tuple[str, float, bool]] = {
    "island_grid": ("wind farm", 0.25, False),
    "industrial_microgrid": ("rooftop solar", 0.15, True),
    "regional_fleet": ("wind farm", 0.2, False),
    "solar_storage": ("solar farm", 0.5, True),
    "hospital_backup": ("rooftop solar", 0.15, True),
}
FORCED: dict[str, tuple[str, ...]] = {
    "island_grid": ("fuel_limit",),
    "industrial_microgrid": ("must_run", "ramp_limits"),
    "regional_fleet": ("ramp_limits", "min_up_time", "min_down_time"),
    "solar_storage": ("curtailment_cap",),
    "hospital_backup": ("critical_load", "spinning_reserve"),
}
COSTS = (23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97)  # fuel cost per MWh
STARTUPS = tuple(range(30, 260, 10))


class PowerSizes(Settings):
    """How big a dispatch problem is."""

    units: PositiveInt = Field(le=6)
    hours: PositiveInt = Field(le=24)
    pmax: PositiveRange = Field(description="a unit's maximum output, MW")
    capacity: PositiveRange = Field(description="the battery's capacity, MWh")
    rate: PositiveRange = Field(description="the battery's charge and discharge limits, MW")


SIZES = SizeTable[PowerSizes](
    tiny=PowerSizes(
        units=2, hours=3, pmax=PositiveRange(lo=2, hi=2), capacity=PositiveRange(lo=2, hi=2),
        rate=PositiveRange(lo=1, hi=1),
    ),
    small=PowerSizes(
        units=3, hours=4, pmax=PositiveRange(lo=3, hi=6), capacity=PositiveRange(lo=3, hi=6),
        rate=PositiveRange(lo=1, hi=3),
    ),
    default=PowerSizes(
        units=4, hours=6, pmax=PositiveRange(lo=4, hi=10), capacity=PositiveRange(lo=5, hi=10),
        rate=PositiveRange(lo=2, hi=3),
    ),
    large=PowerSizes(
        units=6, hours=12, pmax=PositiveRange(lo=5, hi=20), capacity=PositiveRange(lo=10, hi=20),
        rate=PositiveRange(lo=3, hi=6),
    ),
)  # fmt: skip
PROBE_TIME = 2.0
PARAMETERS: dict[str, Any] = {}
# the uniqueness re-optimisation at linearization level 1 (the first stays at the certifier's 2),
# without the probing CP-SAT runs before its search even with presolve off and without rounds
# of cuts at the root: with the model's tight rule forms, uniq/first CPU 1.45 (level 1) -> 1.32
# (probing) -> 1.04 (cuts) on 69 default drafts (deterministic time 2.17 -> 1.79 -> 1.63), the
# same certificates and plans; at level 0 it is far slower
UNIQUENESS_PARAMETERS: dict[str, Any] = {
    "cp_model_presolve": False,
    "linearization_level": 1,
    "cp_model_probing_level": 0,
    "max_cut_rounds_at_level_zero": 0,
}


# -- the CP-SAT model ------------------------------------------------------------------
class PowerModel(ModelBase):
    def __init__(self, data: PowerData) -> None:
        super().__init__()
        self.data = d = data
        m = self.m
        H = range(d.hours)
        self.p: dict[tuple[str, int], cp_model.IntVar] = {}
        self.on: dict[tuple[str, int], cp_model.IntVar] = {}
        self.start: dict[tuple[str, int], cp_model.IntVar] = {}
        for u in d.units:
            for h in H:
                p = m.new_int_var(0, u.pmax, f"p[{u.id},{h}]")
                on = m.new_bool_var(f"on[{u.id},{h}]")
                m.add(p <= u.pmax * on)  # on exactly when the output is above 0
                m.add(p >= on)
                self.p[u.id, h], self.on[u.id, h] = p, on
            for h in H:  # start-up exactly when on and off (or before hour 0) in the hour before
                s = m.new_bool_var(f"start[{u.id},{h}]")
                prev = self.on[u.id, h - 1] if h else 0
                m.add(s >= self.on[u.id, h] - prev)
                m.add(s <= self.on[u.id, h])
                m.add(s <= 1 - prev)
                self.start[u.id, h] = s
        b = d.battery
        self.b: list[cp_model.IntVar] = []
        self.level: list[cp_model.IntVar] = []
        if b is not None:
            for h in H:
                self.b.append(m.new_int_var(-b.charge, b.discharge, f"b[{h}]"))
                level = m.new_int_var(0, b.capacity, f"soc[{h}]")  # the battery's physics, not a rule
                m.add(level == (self.level[-1] if h else b.initial) - self.b[h])
                self.level.append(level)
        charge = b.charge if b is not None else 0
        self.net: list[cp_model.LinearExprT] = []
        self.shed: list[cp_model.IntVar] = []
        for h in H:
            net = sum(self.p[u.id, h] for u in d.units) + (self.b[h] if b is not None else 0)
            self.net.append(net)
            # shed = max(0, demand - net) - min(available, max(0, demand - net)) = max(0, demand - available - net),
            # exact through a Boolean "the gap is above 0" rather than a max equality: with the
            # rule forms above, 3.90 -> 2.80 CPU s to certify 69 default drafts (the same
            # certificates and plans; the max equality's LP relaxation was the costly part)
            shed = m.new_int_var(0, d.demand[h] + charge, f"shed[{h}]")
            gap = d.demand[h] - d.available(h) - net
            short = m.new_bool_var(f"short[{h}]")  # exactly when the gap is above 0
            m.add(gap >= 1).only_enforce_if(short)
            m.add(shed >= gap)
            m.add(shed <= gap).only_enforce_if(short)
            m.add(shed <= 0).only_enforce_if(~short)
            self.shed.append(shed)
        self._curtailed: list[cp_model.IntVar] | None = None

    def curtailed(self) -> list[cp_model.IntVar]:
        """Renewable MW curtailed per hour: available - min(available, max(0, demand - net)),
        which is min(available, max(0, available + net - demand)); made when a rule reads it."""
        if self._curtailed is None:
            d, m = self.data, self.m
            self._curtailed = []
            for h in range(d.hours):
                top = d.available(h) + sum(u.pmax for u in d.units) + (d.battery.discharge if d.battery else 0)
                over = m.new_int_var(0, top, "")
                m.add_max_equality(over, [0, d.available(h) + self.net[h] - d.demand[h]])
                c = m.new_int_var(0, d.available(h), f"curtailed[{h}]")
                m.add_min_equality(c, [d.available(h), over])
                self._curtailed.append(c)
        return self._curtailed

    def answer_ints(self) -> list[cp_model.IntVar]:
        return [*self.p.values(), *self.b]


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("power_balance")
def _power_balance(tm: PowerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for h in range(tm.data.hours):
        tm.post(tm.net[h] <= tm.data.demand[h], lit)


@encoder("output_limits")
def _output_limits(tm: PowerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for u in tm.data.units:
        if u.pmin > 1:
            for h in range(tm.data.hours):
                tm.post(tm.p[u.id, h] >= u.pmin * tm.on[u.id, h], lit)


@encoder("must_run")
def _must_run(tm: PowerModel, p: pw.MustRun, lit: cp_model.IntVar) -> None:
    for uid in p.units:
        for h in range(tm.data.hours):
            tm.post(tm.on[uid, h] == 1, lit)


@encoder("critical_load")
def _critical_load(tm: PowerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.data
    for h in range(d.hours):
        tm.post(tm.shed[h] <= d.demand[h] - d.critical_at(h), lit)


@encoder("unit_outage")
def _unit_outage(tm: PowerModel, p: pw.UnitOutage, lit: cp_model.IntVar) -> None:
    for h in range(p.first, min(p.last, tm.data.hours - 1) + 1):
        tm.post(tm.p[p.unit, h] == 0, lit)


def _spare(tm: PowerModel, h: int, without: str | None = None) -> cp_model.LinearExprT:
    units = [u for u in tm.data.units if u.id != without]
    return sum(u.pmax * tm.on[u.id, h] - tm.p[u.id, h] for u in units)


@encoder("spinning_reserve")
def _spinning_reserve(tm: PowerModel, p: pw.SpinningReserve, lit: cp_model.IntVar) -> None:
    for h in range(tm.data.hours):
        tm.post(_spare(tm, h) >= p.mw, lit)


@encoder("fuel_limit")
def _fuel_limit(tm: PowerModel, p: pw.FuelLimit, lit: cp_model.IntVar) -> None:
    tm.post(sum(tm.p[p.unit, h] for h in range(tm.data.hours)) <= p.mwh, lit)


@encoder("ramp_limits")
def _ramp_limits(tm: PowerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """Between two hours both on; a start-up or a shut-down is not limited."""
    for u in tm.data.units:
        if u.ramp >= u.pmax - 1:
            continue  # cannot bind: two outputs above 0 differ by at most pmax - 1
        for h in range(1, tm.data.hours):
            up, down = tm.on[u.id, h - 1], tm.on[u.id, h]
            tm.post(tm.p[u.id, h] - tm.p[u.id, h - 1] <= u.ramp * up + u.pmax * (1 - up), lit)
            tm.post(tm.p[u.id, h - 1] - tm.p[u.id, h] <= u.ramp * down + u.pmax * (1 - down), lit)


@encoder("min_up_time")
def _min_up_time(tm: PowerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for u in tm.data.units:
        for h in range(tm.data.hours):
            window = [tm.start[u.id, j] for j in range(max(0, h - u.min_up + 1), h + 1)]
            if len(window) > 1:
                tm.post(sum(window) <= tm.on[u.id, h], lit)


@encoder("min_down_time")
def _min_down_time(tm: PowerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """A stop in hour h: on in h-1 and off in h."""
    for u in tm.data.units:
        for h in range(1, tm.data.hours):
            for k in range(h + 1, min(tm.data.hours, h + u.min_down)):
                tm.m.add_bool_or([~lit, ~tm.on[u.id, h - 1], tm.on[u.id, h], ~tm.on[u.id, k]])


@encoder("max_starts")
def _max_starts(tm: PowerModel, p: pw.MaxStarts, lit: cp_model.IntVar) -> None:
    tm.post(sum(tm.start[p.unit, h] for h in range(tm.data.hours)) <= p.max, lit)


@encoder("curtailment_cap")
def _curtailment_cap(tm: PowerModel, p: pw.CurtailmentCap, lit: cp_model.IntVar) -> None:
    tm.post(sum(tm.curtailed()) <= p.mwh, lit)


@encoder("battery_floor")
def _battery_floor(tm: PowerModel, p: pw.BatteryFloor, lit: cp_model.IntVar) -> None:
    for level in tm.level:
        tm.post(level >= p.mwh, lit)


@encoder("battery_end")
def _battery_end(tm: PowerModel, p: pw.BatteryEnd, lit: cp_model.IntVar) -> None:
    tm.post(tm.level[-1] >= p.mwh, lit)


@encoder("trip_reserve")
def _trip_reserve(tm: PowerModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for h in range(tm.data.hours):
        for u in tm.data.units:
            tm.post(_spare(tm, h, without=u.id) >= tm.p[u.id, h], lit)


@encoder("derate")
def _derate(tm: PowerModel, p: pw.Derate, lit: cp_model.IntVar) -> None:
    for h in range(p.first, min(p.last, tm.data.hours - 1) + 1):
        tm.post(tm.p[p.unit, h] <= p.mw, lit)


def _objective(tm: PowerModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    charge = d.battery.charge if d.battery else 0
    if term.kind == "unserved":
        return sum(tm.shed), sum(x + charge for x in d.demand)
    if term.kind == "cost":
        expr = sum(u.cost * tm.p[u.id, h] + u.startup * tm.start[u.id, h] for u in d.units for h in range(d.hours))
        return expr, sum((u.cost * u.pmax + u.startup) * d.hours for u in d.units)
    if term.kind == "battery_reserve":
        if d.battery is None:
            return 0, 0
        return sum(d.battery.capacity - level for level in tm.level), d.battery.capacity * d.hours
    if term.kind == "changes":
        old = pw.current_plan(term)
        moved = [tm.differs(tm.p[u.id, h], old[u.id][h], "") for u in d.units for h in range(d.hours)]
        if pw.BATTERY in old:
            moved += [tm.differs(tm.b[h], old[pw.BATTERY][h], "") for h in range(d.hours)]
        return sum(moved), len(moved)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = parsed(PowerData, draft.data)
    tm = PowerModel(data)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        output = {u.id: tuple(int(solver.value(tm.p[u.id, h])) for h in range(data.hours)) for u in data.units}
        flows = tuple(int(solver.value(x)) for x in tm.b) if tm.b else (0,) * data.hours
        return {"dispatch": pw.TASK.plan_json(data, Plan(output, flows))}

    return solver_model(
        tm, draft, ENCODERS, pw.RULE_PARAMS, _objective, decode, [], tm.answer_ints(),
        parameters=PARAMETERS, uniqueness_parameters=UNIQUENESS_PARAMETERS,
    )  # fmt: skip


# -- sampling --------------------------------------------------------------------------
def plan_of(d: PowerData, rows: list[dict[str, Any]]) -> Plan:
    """A decoded dispatch (rows of :meth:`PowerDispatch.plan_json`) as a checker plan."""
    by_hour = {r["hour"]: r for r in rows}
    output = {u.id: tuple(int(by_hour[h]["output"][u.id]) for h in range(d.hours)) for u in d.units}
    return Plan(output, tuple(int(by_hour[h].get("battery", 0)) for h in range(d.hours)))


def _shape(rng: random.Random, hours: int) -> list[float]:
    """A daily load shape: a base with one or two peaks."""
    peaks = rng.sample(range(hours), min(hours, rng.randint(1, 2)))
    out = []
    for h in range(hours):
        bump = max((1.0 - abs(h - c) / 2.5 for c in peaks), default=0.0)
        out.append(0.45 + 0.45 * max(0.0, bump) + rng.uniform(-0.08, 0.08))
    return out


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[PowerData, Plan]:
    """Units, demand, renewable output and battery, and a witness dispatch: units kept on
    or off with persistence, one base unit on in every hour where it fits, outputs filled
    towards the demand left after renewables, the battery moving at random within its
    limits. Rules drawn from the witness are satisfiable together."""
    s = SIZES.of(spec.size)
    sub = spec.subtask
    names = UNIT_NAMES[sub][: s.units]
    costs = rng.sample(COSTS, s.units)
    startups = rng.sample(STARTUPS, s.units)
    units = []
    for k, (name, cost, st) in enumerate(zip(names, costs, startups), 1):
        top = s.pmax.draw(rng)
        units.append(
            Unit(id=f"U{k}", name=name, pmin=rng.randint(1, max(1, (2 * top) // 3)), pmax=top, cost=cost, startup=st)
        )
    total = sum(u.pmax for u in units)
    H = s.hours
    demand = [max(1, round(total * f * rng.uniform(0.7, 1.0))) for f in _shape(rng, H)]
    source, share, solar = RENEWABLE[sub]
    if solar:
        mid, width = (H - 1) / 2, max(1.0, H / 3)
        renewable = [max(0, round(total * share * (1 - ((h - mid) / (width + 1)) ** 2))) for h in range(H)]
    else:
        renewable = [rng.randint(0, max(1, round(total * share))) for _ in range(H)]
    battery = None
    if sub in BATTERY_SUBTASKS:
        cap = s.capacity.draw(rng)
        battery = Battery(
            capacity=cap, initial=rng.randint(cap // 3, cap), charge=s.rate.draw(rng), discharge=s.rate.draw(rng)
        )
    d = PowerData(
        hours=H,
        demand=tuple(demand),
        renewable=tuple(renewable),
        renewable_name=source,
        units=tuple(units),
        battery=battery,
    )
    return d, _witness(d, rng)


def _witness(d: PowerData, rng: random.Random) -> Plan:
    H = d.hours
    out = {u.id: [0] * H for u in d.units}
    base = rng.choice(d.units)
    state = {u.id: rng.random() < 0.5 for u in d.units}
    flows = [0] * H
    level = d.battery.initial if d.battery else 0
    for h in range(H):
        need = max(0, d.demand[h] - d.available(h))
        for u in d.units:
            if rng.random() < 0.25:
                state[u.id] = not state[u.id]
        on = [u for u in d.units if state[u.id] or u.id == base.id]
        on.sort(key=lambda u: (u.id != base.id, rng.random()))
        while on and sum(u.pmin for u in on) > d.demand[h]:
            on.pop()
        room = d.demand[h] - sum(u.pmin for u in on)
        fill = max(0, need - sum(u.pmin for u in on))
        for u in on:
            extra = min(u.pmax - u.pmin, fill, room)
            extra = rng.randint(max(0, extra - 1), extra) if extra > 0 else 0
            out[u.id][h] = u.pmin + extra
            fill -= extra
            room -= extra
        if on and not sum(u.pmax - out[u.id][h] for u in on):
            top = next((u for u in on if out[u.id][h] > u.pmin), None)  # keep 1 MW spinning in reserve
            if top is not None:
                out[top.id][h] -= 1
                room += 1
        for u in d.units:
            state[u.id] = out[u.id][h] > 0
        b = d.battery
        if b is not None:
            lo = max(-b.charge, level - b.capacity)
            hi = min(b.discharge, level, room)
            x = rng.randint(lo, hi) if lo <= hi else 0
            flows[h] = x
            level -= x
    return Plan({k: tuple(v) for k, v in out.items()}, tuple(flows))


def _runs(states: list[bool], value: bool) -> list[tuple[int, int]]:
    """(first hour, length) of each maximal run of ``value``."""
    runs, h = [], 0
    while h < len(states):
        if states[h] == value:
            k = h
            while k < len(states) and states[k] == value:
                k += 1
            runs.append((h, k - h))
            h = k
        else:
            h += 1
    return runs


def _with_ramps(d: PowerData, w: Plan, rng: random.Random) -> PowerData:
    units = []
    for u in d.units:
        out = w.output[u.id]
        steps = [abs(out[h] - out[h - 1]) for h in range(1, d.hours) if out[h] and out[h - 1]]
        ramp = max([1, *steps]) + rng.randint(0, 1)
        units.append(u.model_copy(update={"ramp": min(ramp, u.pmax)}))
    return pw.replaced(d, units=tuple(units))


def _with_min_times(d: PowerData, w: Plan, rng: random.Random, up: bool) -> PowerData:
    """Minimum up (or down) times the witness keeps: each unit's shortest run on after a
    start (off after a stop) that ends before the last hour, at most 4 hours."""
    units = []
    for u in d.units:
        states = [x > 0 for x in w.output[u.id]]
        runs = _runs(states, up)
        if not up:
            runs = [(h, n) for h, n in runs if h > 0]  # off from hour 0 is no stop
        inner = [n for h, n in runs if h + n < d.hours]
        longest = min(inner) if inner else rng.randint(2, 4)
        key = "min_up" if up else "min_down"
        units.append(u.model_copy(update={key: max(1, min(4, longest))}))
    return pw.replaced(d, units=tuple(units))


def _with_critical(d: PowerData, w: Plan, rng: random.Random) -> PowerData:
    served = [d.demand[h] - pw.shed(d, w, h) for h in range(d.hours)]
    critical = tuple(rng.randint(x // 2, x) if x else 0 for x in served)
    return pw.replaced(d, critical=critical)


def _b_must_run(d: PowerData, w: Plan, rng: random.Random) -> pw.MustRun | None:
    always = [u.id for u in d.units if all(w.output[u.id])]
    if not always:
        return None
    return pw.MustRun(units=sorted(rng.sample(always, rng.randint(1, min(2, len(always))))))


def _b_unit_outage(d: PowerData, w: Plan, rng: random.Random) -> pw.UnitOutage | None:
    options = []
    for u in d.units:
        for first, n in _runs([x > 0 for x in w.output[u.id]], False):
            for length in range(1, min(n, 3) + 1):
                for a in range(first, first + n - length + 1):
                    options.append((u.id, a, a + length - 1))
    if not options:
        return None
    uid, first, last = rng.choice(options)
    return pw.UnitOutage(unit=uid, first=first, last=last)


def _b_spinning_reserve(d: PowerData, w: Plan, rng: random.Random) -> pw.SpinningReserve | None:
    low = min(pw.spare(d, w, h) for h in range(d.hours))
    return pw.SpinningReserve(mw=low) if low >= 1 else None


def _b_fuel_limit(d: PowerData, w: Plan, rng: random.Random) -> pw.FuelLimit | None:
    used = [u.id for u in d.units if sum(w.output[u.id])]
    if not used:
        return None
    uid = rng.choice(used)
    return pw.FuelLimit(unit=uid, mwh=sum(w.output[uid]) + rng.randint(0, 2))


def _b_max_starts(d: PowerData, w: Plan, rng: random.Random) -> pw.MaxStarts | None:
    started = [u.id for u in d.units if pw.starts(w, u.id)]
    if not started:
        return None
    uid = rng.choice(started)
    return pw.MaxStarts(unit=uid, max=len(pw.starts(w, uid)))


def _b_curtailment_cap(d: PowerData, w: Plan, rng: random.Random) -> pw.CurtailmentCap | None:
    if not any(d.renewable):
        return None
    return pw.CurtailmentCap(mwh=sum(pw.curtailed(d, w, h) for h in range(d.hours)) + rng.randint(0, 2))


def _b_battery_floor(d: PowerData, w: Plan, rng: random.Random) -> pw.BatteryFloor | None:
    if d.battery is None:
        return None
    low = min(pw.levels(d, w))
    return pw.BatteryFloor(mwh=low - rng.randint(0, 1)) if low - 1 >= 1 else None


def _b_battery_end(d: PowerData, w: Plan, rng: random.Random) -> pw.BatteryEnd | None:
    if d.battery is None:
        return None
    end = pw.levels(d, w)[-1]
    return pw.BatteryEnd(mwh=end - rng.randint(0, 1)) if end >= 2 else None


BUILDERS = {
    "must_run": _b_must_run,
    "unit_outage": _b_unit_outage,
    "spinning_reserve": _b_spinning_reserve,
    "fuel_limit": _b_fuel_limit,
    "max_starts": _b_max_starts,
    "curtailment_cap": _b_curtailment_cap,
    "battery_floor": _b_battery_floor,
    "battery_end": _b_battery_end,
}
STRUCTURAL = ("critical_load", "ramp_limits", "min_up_time", "min_down_time")


def objective_terms(battery: bool) -> list[ObjectiveTerm]:
    """Shed energy, then cost, then (with a battery) its unfilled room."""
    kinds = ["unserved", "cost", *(["battery_reserve"] if battery else [])]
    return [make_term(k, k) for k in kinds]


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    data, witness = _entities(spec, rng)
    sampled = sampled_kinds(spec, TASK.base_rules, FORCED[spec.subtask])
    if "critical_load" in sampled:
        data = _with_critical(data, witness, rng)
    if "ramp_limits" in sampled:
        data = _with_ramps(data, witness, rng)
    if "min_up_time" in sampled:
        data = _with_min_times(data, witness, rng, up=True)
    if "min_down_time" in sampled:
        data = _with_min_times(data, witness, rng, up=False)
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng, structural=STRUCTURAL)
    return Draft(
        spec=spec,
        data=data.model_dump(mode="json"),
        rules=rules,
        objective=objective_terms(data.battery is not None),
    )


# -- hard-tier hooks -------------------------------------------------------------------
def _optimal_plan(draft_: Draft, limits: SolverLimits) -> Plan | None:
    sm = build(draft_)
    weights = lexicographic_weights([ub for _, _, ub in sm.objective_terms])
    sm.model.minimize(sum(w * expr for w, (_, expr, _) in zip(weights, sm.objective_terms)))
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = make_solver(limits, presolve=True, optimise=True)
    if solver.solve(sm.model) != cp_model.OPTIMAL:
        return None
    return plan_of(parsed(PowerData, draft_.data), sm.decode(solver)["dispatch"])


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A spinning reserve just above what the rules allow (bisection from the optimal
    plan's lowest reserve up to every unit on at 1 MW, which alone is feasible), or, with
    must-run units, a fuel limit on one just below what running it in every hour takes.
    A rule infeasible on its own is passed over (the conflict runs through the rules)."""
    d = parsed(PowerData, draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731
    best = _optimal_plan(draft_, probe)
    if best is None:
        return None
    low = min(pw.spare(d, best, h) for h in range(d.hours))
    values = list(range(max(1, low + 1), sum(u.pmax - 1 for u in d.units) + 1))

    def with_reserve(mw: int) -> Draft:
        return with_conflict_rule(draft_, "spinning_reserve", pw.SpinningReserve(mw=mw), position)

    found = first_infeasible(values, with_reserve, feasible)
    if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
        return found
    musts = [uid for r in draft_.rules if r.kind == "must_run" for uid in r.params["units"]]
    rng.shuffle(musts)
    for uid in musts[:2]:
        used = sum(best.output[uid])

        def with_fuel(mwh: int, uid: str = uid) -> Draft:
            return with_conflict_rule(draft_, "fuel_limit", pw.FuelLimit(unit=uid, mwh=mwh), position)

        found = first_infeasible(list(range(used, -1, -1)), with_fuel, feasible)
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A unit out of service for one or two hours it runs in, or derated below its
    planned output in one hour."""
    d = parsed(PowerData, draft_.data)
    w = plan_of(d, plan["dispatch"])
    out: list[Rule] = []
    for u in d.units:
        running = [h for h in range(d.hours) if w.output[u.id][h]]
        if running:
            h = rng.choice(running)
            last = min(d.hours - 1, h + rng.randint(0, 1))
            out.append(make_rule("unit_outage", "hard", pw.UnitOutage(unit=u.id, first=h, last=last)))
            x = w.output[u.id][h]
            out.append(make_rule("derate", "hard", pw.Derate(unit=u.id, first=h, last=h, mw=rng.randint(0, x - 1))))
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, list[int]]:
    d = parsed(PowerData, draft_.data)
    return pw.current(d, plan_of(d, plan["dispatch"]))


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    """N-1 security: whichever single running unit trips, the others cover its output."""
    rule = make_rule("trip_reserve", "hard", NoParams(), f"R{len(draft_.rules) + 1}")
    return rule, []


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Units' maximum outputs (worst: low, a derating) and hourly renewable forecasts
    (worst: low). A lower maximum never helps a rule (reserves shrink); less renewable
    output never helps one either (more load is shed) except a curtailment cap (less is
    curtailed), so forecasts are uncertain only without one."""
    d = parsed(PowerData, draft_.data)
    out = [
        Uncertain(id="", kind="pmax", target=u.id, low=u.pmax - rng.randint(1, min(2, u.pmax - u.pmin)), high=u.pmax)
        for u in d.units
        if u.pmax > u.pmin
    ]
    out = rng.sample(out, min(3, len(out)))
    capped = any(r.kind == "curtailment_cap" for r in draft_.rules)  # more renewable output, more curtailed
    hours = [] if capped else [h for h in range(d.hours) if d.available(h) >= 1]
    for h in rng.sample(hours, min(2, len(hours))):
        low = max(0, d.available(h) - rng.randint(1, 2))
        out.append(Uncertain(id="", kind="renewable", target=f"hour {h}", low=low, high=d.available(h)))
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = parsed(PowerData, data)
    if u.kind == "pmax":
        units = [x.model_copy(update={"pmax": value}) if x.id == u.target else x for x in d.units]
        return {**data, "units": [x.model_dump(mode="json") for x in units]}
    h = int(u.target.split()[-1])
    profile = list(d.renewable)
    profile[h] = value
    return {**data, "renewable": profile}


def worst_is_low(u: Uncertain) -> bool:
    return True


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = parsed(PowerData, draft_.data)
    return pw.verification(d, plan_of(d, plan["dispatch"]))


HOOKS = HardHooks(
    base=TASK.base_rules,
    build=build,
    disruptions=disruptions,
    existing=existing,
    robust=robust,
    uncertain=uncertain,
    with_value=with_value,
    worst_is_low=worst_is_low,
)
