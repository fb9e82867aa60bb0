"""Checks for Power Dispatch Planning answers (unit commitment): every generating unit gets
an integer output in MW for every hour, and the battery (where there is one) an integer
charge or discharge; demand, output limits, ramps, minimum up and down times, reserves,
critical loads, fuel and battery levels must hold.

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. Every figure is recomputed from the plan in plain Python integers. Hours are
one hour long, so an output of x MW in an hour delivers x MWh.

The derived quantities, one definition for the model and the checker: in hour h the
units and the battery supply ``net = sum(outputs) + battery`` (battery > 0 discharges,
< 0 charges); the rest of the demand, ``residual = demand - net``, is met by renewable
output up to what is available (``used = min(available, max(0, residual))``), the
remainder is shed (``shed = max(0, residual) - used``) and the renewable output not
used is curtailed (``available - used``). A unit is on in an hour when its output is
above 0; it starts up in an hour when it is on and was off in the hour before (every
unit is off before hour 0).
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import OK, PerData, PlanChecker, lookup
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse, problem
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "power_dispatch_planning"
BATTERY = "battery"  # the key of the battery's flows in a `changes` term's current plan


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Unit(_Frozen):
    """A generating unit: off (0 MW) or on between ``pmin`` and ``pmax`` MW (when the output
    limits rule holds); its output costs ``cost`` per MWh and each start-up ``startup``."""

    id: str
    name: str
    pmin: PositiveInt = Field(description="MW when on")
    pmax: PositiveInt = Field(description="MW when on")
    cost: NonNegativeInt = Field(description="fuel cost per MWh")
    startup: NonNegativeInt = Field(default=0, description="cost per start-up")
    ramp: PositiveInt = Field(default=1, description="MW the output may change between two hours on")
    min_up: PositiveInt = Field(default=1, description="hours on after a start-up")
    min_down: PositiveInt = Field(default=1, description="hours off after a shut-down")


class Battery(_Frozen):
    """Energy storage: its state of charge (MWh) starts at ``initial`` and always stays
    within 0..``capacity``; per hour it charges at most ``charge`` MW or discharges at most
    ``discharge`` MW (losses are neglected: 1 MW for an hour moves 1 MWh)."""

    capacity: PositiveInt
    initial: NonNegativeInt
    charge: PositiveInt
    discharge: PositiveInt


class PowerData(BaseModel):
    """One day's dispatch problem: every number a rule or the objective reads is here.
    ``demand``, ``critical`` and ``renewable`` hold one figure per hour 0..hours-1."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hours: PositiveInt
    demand: tuple[NonNegativeInt, ...]
    critical: tuple[NonNegativeInt, ...] = ()
    renewable: tuple[NonNegativeInt, ...] = ()
    renewable_name: str = "renewable output"
    units: tuple[Unit, ...]
    battery: Battery | None = None
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> PowerData:
        """Malformed data is a clear error: profiles of the wrong length, repeated unit ids,
        output limits the wrong way round, critical load above demand, a battery that
        starts outside its capacity."""
        if not self.units:
            raise ValueError("a dispatch problem needs at least one unit")
        ids = [u.id for u in self.units]
        if len(set(ids)) != len(ids) or BATTERY in ids:
            raise ValueError("unit ids must be distinct (and not 'battery')")
        for what, profile in (("demand", self.demand), ("critical", self.critical), ("renewable", self.renewable)):
            if what != "demand" and not profile:
                continue
            if len(profile) != self.hours:
                raise ValueError(f"{what} has {len(profile)} hourly figures, {self.hours} expected")
        for u in self.units:
            if u.pmin > u.pmax:
                raise ValueError(f"unit {u.id}: minimum output {u.pmin} above maximum {u.pmax}")
        if self.critical and any(c > d for c, d in zip(self.critical, self.demand)):
            raise ValueError("critical load above demand in some hour")
        b = self.battery
        if b is not None and b.initial > b.capacity:
            raise ValueError(f"battery starts at {b.initial} MWh, above its capacity {b.capacity}")
        return self

    @cached_property
    def unit_by_id(self) -> dict[str, Unit]:
        return {u.id: u for u in self.units}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``);
        a current plan also names the battery, when there is one."""
        if what == "unit or battery":
            return {*self.unit_by_id, *([BATTERY] if self.battery else [])}
        names: dict[str, Container[str]] = {"unit": self.unit_by_id}
        return names[what]

    def available(self, h: int) -> int:
        """Renewable MW available in hour ``h`` (0 without renewables)."""
        return self.renewable[h] if self.renewable else 0

    def critical_at(self, h: int) -> int:
        return self.critical[h] if self.critical else 0


def replaced(d: PowerData, **changes: Any) -> PowerData:
    """``d`` with fields replaced, as a new validated object."""
    return PowerData.model_validate({**{f: getattr(d, f) for f in PowerData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
UnitName = Annotated[str, Names("unit")]


class MustRun(Params):
    """Each named unit is on (output above 0) in every hour."""

    units: list[UnitName]


class UnitOutage(Params):
    """The unit is out of service in hours ``first``..``last`` (both included): output 0."""

    unit: UnitName
    first: NonNegativeInt
    last: NonNegativeInt


class SpinningReserve(Params):
    """In every hour, the spare capacity of the units that are on (maximum output minus
    output, summed over units on) is at least ``mw``."""

    mw: PositiveInt


class FuelLimit(Params):
    """The unit's output summed over all hours is at most ``mwh`` (its fuel on site)."""

    unit: UnitName
    mwh: NonNegativeInt


class MaxStarts(Params):
    """The unit starts up at most ``max`` times over the day."""

    unit: UnitName
    max: NonNegativeInt


class CurtailmentCap(Params):
    """Renewable energy curtailed over the day (available minus used, summed) is at most ``mwh``."""

    mwh: NonNegativeInt


class BatteryFloor(Params):
    """The battery's state of charge at the end of every hour is at least ``mwh``."""

    mwh: NonNegativeInt


class BatteryEnd(Params):
    """The battery's state of charge at the end of the last hour is at least ``mwh``."""

    mwh: NonNegativeInt


class Derate(Params):
    """A disruption: the unit delivers at most ``mw`` in hours ``first``..``last``."""

    unit: UnitName
    first: NonNegativeInt
    last: NonNegativeInt
    mw: NonNegativeInt


class CurrentDispatch(Params):
    """The current plan a ``changes`` term counts against: unit id (and ``battery``) -> its
    hourly figures."""

    existing: dict[Annotated[str, Names("unit or battery")], list[int]]

    def data_problems(self, data: Any) -> list[str]:
        """Also: the plan has one figure per hour for every unit, and for the battery when it
        names one (the ``changes`` figure compares each of them)."""
        found = super().data_problems(data)
        named = dict.fromkeys([*data.unit_by_id, *self.existing])
        short = [x for x in named if len(self.existing.get(x, ())) != data.hours]
        return found + problem(f"the current plan does not have {data.hours} hourly figures for", short)


RULE_PARAMS: ParamsTable = {
    "power_balance": NoParams,
    "output_limits": NoParams,
    "must_run": MustRun,
    "critical_load": NoParams,
    "unit_outage": UnitOutage,
    "spinning_reserve": SpinningReserve,
    "fuel_limit": FuelLimit,
    "ramp_limits": NoParams,
    "min_up_time": NoParams,
    "min_down_time": NoParams,
    "max_starts": MaxStarts,
    "curtailment_cap": CurtailmentCap,
    "battery_floor": BatteryFloor,
    "battery_end": BatteryEnd,
    "trip_reserve": NoParams,
    "derate": Derate,
}
TERM_PARAMS: ParamsTable = {
    "unserved": NoParams,
    "cost": NoParams,
    "battery_reserve": NoParams,
    "changes": CurrentDispatch,
}


def current_plan(changes: ObjectiveTerm) -> dict[str, list[int]]:
    """The current plan of a ``changes`` term (unit id or ``battery`` -> hourly figures)."""
    return as_model(parse(TERM_PARAMS, changes), CurrentDispatch).existing


# -- the plan and its derived figures --------------------------------------------------
@dataclass(frozen=True)
class Hourly:
    """One plan's figures of every hour against one data model (see :func:`hourly`)."""

    net: list[int]
    used: list[int]  # renewable MW used
    shed: list[int]
    curtailed: list[int]
    spare: list[int]  # spare capacity over the units on


@dataclass(frozen=True)
class Plan:
    output: dict[str, tuple[int, ...]]  # unit -> MW per hour
    battery: tuple[int, ...]  # MW per hour: > 0 discharge, < 0 charge (all 0 without a battery)
    # every hour's figures per data they were computed for (see hourly)
    _hourly: PerData[Hourly] = field(default_factory=PerData, compare=False, repr=False)
    # unit -> the hours it starts up in (see starts)
    _starts: dict[str, list[int]] = field(default_factory=dict, compare=False, repr=False)


def hourly(d: PowerData, plan: Plan) -> Hourly:
    """The figures of every hour, worked out once per plan and data: the balance, shedding,
    renewable and reserve rules, the objective and the figures read them over and over
    (not to be changed)."""
    return plan._hourly.get(d, lambda: _hourly(d, plan))


def _hourly(d: PowerData, plan: Plan) -> Hourly:
    rows = [(u.pmax, plan.output[u.id]) for u in d.units]
    nets, used, sheds, cut, spares = [], [], [], [], []
    for h in range(d.hours):
        n, room = plan.battery[h], 0
        for top, row in rows:
            x = row[h]
            n += x
            if x > 0:
                room += top - x
        residual = max(0, d.demand[h] - n)
        available = d.available(h)
        u = min(available, residual)
        nets.append(n)
        used.append(u)
        sheds.append(residual - u)
        cut.append(available - u)
        spares.append(room)
    return Hourly(nets, used, sheds, cut, spares)


def net(d: PowerData, plan: Plan, h: int) -> int:
    """MW the units and the battery put in (or, charging, take out of) the grid in hour ``h``."""
    nets = hourly(d, plan).net
    return nets[h] if 0 <= h < len(nets) else _net(d, plan, h)


def _net(d: PowerData, plan: Plan, h: int) -> int:
    return sum(plan.output[u.id][h] for u in d.units) + plan.battery[h]


def renewable_used(d: PowerData, plan: Plan, h: int) -> int:
    """Renewable MW used in hour ``h``: what is available, up to the demand the units and
    the battery leave (see :func:`hourly`)."""
    return hourly(d, plan).used[h]


def shed(d: PowerData, plan: Plan, h: int) -> int:
    """MW of demand left unserved in hour ``h``."""
    return hourly(d, plan).shed[h]


def curtailed(d: PowerData, plan: Plan, h: int) -> int:
    """Renewable MW available in hour ``h`` and not used."""
    return hourly(d, plan).curtailed[h]


def levels(d: PowerData, plan: Plan) -> list[int]:
    """The battery's state of charge (MWh) at the end of every hour."""
    level = d.battery.initial if d.battery else 0
    out = []
    for b in plan.battery:
        level -= b
        out.append(level)
    return out


def on(plan: Plan, unit: str, h: int) -> bool:
    return h >= 0 and plan.output[unit][h] > 0


def starts(plan: Plan, unit: str) -> list[int]:
    """The hours the unit starts up in (on, and off in the hour before or h = 0); worked
    out once per plan and unit (not to be changed)."""
    hit = plan._starts.get(unit)
    if hit is None:
        hit = plan._starts[unit] = _starts(plan.output[unit])
    return hit


def _starts(row: tuple[int, ...]) -> list[int]:
    out, was = [], False
    for h, x in enumerate(row):
        now = x > 0
        if now and not was:
            out.append(h)
        was = now
    return out


def stops(plan: Plan, unit: str) -> list[int]:
    """The hours the unit is shut down in (off, and on in the hour before)."""
    return [h for h in range(1, len(plan.output[unit])) if not on(plan, unit, h) and on(plan, unit, h - 1)]


def spare(d: PowerData, plan: Plan, h: int, without: str | None = None) -> int:
    """Spare capacity in hour ``h``: maximum minus output over the units on (but ``without``)."""
    return sum(u.pmax - plan.output[u.id][h] for u in d.units if u.id != without and on(plan, u.id, h))


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


# -- rule checks -----------------------------------------------------------------------
@check("power_balance")
def _power_balance(d: PowerData, plan: Plan, p: NoParams) -> Verdict:
    nets, demand = hourly(d, plan).net, d.demand
    for h in range(d.hours):
        n = nets[h]
        if n > demand[h]:
            return False, f"hour {h}: units and battery supply {n} MW, above the demand of {d.demand[h]} MW"
    return OK


@check("output_limits")
def _output_limits(d: PowerData, plan: Plan, p: NoParams) -> Verdict:
    for u in d.units:
        for h, x in enumerate(plan.output[u.id]):
            if 0 < x < u.pmin:
                return False, f"{u.id} runs at {x} MW in hour {h}, below its minimum of {u.pmin} MW when on"
    return OK


@check("must_run")
def _must_run(d: PowerData, plan: Plan, p: MustRun) -> Verdict:
    for uid in p.units:
        for h in range(d.hours):
            if not on(plan, uid, h):
                return False, f"must-run unit {uid} is off in hour {h}"
    return OK


@check("critical_load")
def _critical_load(d: PowerData, plan: Plan, p: NoParams) -> Verdict:
    sheds = hourly(d, plan).shed
    for h in range(d.hours):
        served = d.demand[h] - sheds[h]
        if served < d.critical_at(h):
            return False, f"hour {h}: {served} MW served, below the critical load of {d.critical_at(h)} MW"
    return OK


@check("unit_outage")
def _unit_outage(d: PowerData, plan: Plan, p: UnitOutage) -> Verdict:
    for h in range(p.first, min(p.last, d.hours - 1) + 1):
        if on(plan, p.unit, h):
            return False, f"{p.unit} runs in hour {h}, during its outage (hours {p.first}-{p.last})"
    return OK


@check("spinning_reserve")
def _spinning_reserve(d: PowerData, plan: Plan, p: SpinningReserve) -> Verdict:
    spares = hourly(d, plan).spare
    for h in range(d.hours):
        s = spares[h]
        if s < p.mw:
            return False, f"hour {h}: {s} MW spinning reserve, below {p.mw} MW"
    return OK


@check("fuel_limit")
def _fuel_limit(d: PowerData, plan: Plan, p: FuelLimit) -> Verdict:
    total = sum(plan.output[p.unit])
    if total > p.mwh:
        return False, f"{p.unit} produces {total} MWh over the day, above its fuel for {p.mwh} MWh"
    return OK


@check("ramp_limits")
def _ramp_limits(d: PowerData, plan: Plan, p: NoParams) -> Verdict:
    for u in d.units:
        out = plan.output[u.id]
        for h in range(1, d.hours):
            if out[h] and out[h - 1] and abs(out[h] - out[h - 1]) > u.ramp:
                return False, f"{u.id} changes from {out[h - 1]} to {out[h]} MW in hour {h} (ramp limit {u.ramp} MW)"
    return OK


@check("min_up_time")
def _min_up_time(d: PowerData, plan: Plan, p: NoParams) -> Verdict:
    for u in d.units:
        row = plan.output[u.id]
        for h in starts(plan, u.id):
            for k in range(h, min(d.hours, h + u.min_up)):
                if not row[k] > 0:
                    return False, f"{u.id} starts in hour {h} and is off in hour {k} (minimum up time {u.min_up} h)"
    return OK


@check("min_down_time")
def _min_down_time(d: PowerData, plan: Plan, p: NoParams) -> Verdict:
    for u in d.units:
        row = plan.output[u.id]
        for h in stops(plan, u.id):
            for k in range(h, min(d.hours, h + u.min_down)):
                if row[k] > 0:
                    return False, f"{u.id} stops in hour {h} and runs in hour {k} (minimum down time {u.min_down} h)"
    return OK


@check("max_starts")
def _max_starts(d: PowerData, plan: Plan, p: MaxStarts) -> Verdict:
    n = len(starts(plan, p.unit))
    if n > p.max:
        return False, f"{p.unit} starts up {n} times (at most {p.max})"
    return OK


@check("curtailment_cap")
def _curtailment_cap(d: PowerData, plan: Plan, p: CurtailmentCap) -> Verdict:
    total = sum(hourly(d, plan).curtailed)
    if total > p.mwh:
        return False, f"{total} MWh of {d.renewable_name} curtailed (at most {p.mwh})"
    return OK


@check("battery_floor")
def _battery_floor(d: PowerData, plan: Plan, p: BatteryFloor) -> Verdict:
    for h, level in enumerate(levels(d, plan)):
        if level < p.mwh:
            return False, f"the battery holds {level} MWh at the end of hour {h} (at least {p.mwh})"
    return OK


@check("battery_end")
def _battery_end(d: PowerData, plan: Plan, p: BatteryEnd) -> Verdict:
    level = levels(d, plan)[-1]
    if level < p.mwh:
        return False, f"the battery ends the day with {level} MWh (at least {p.mwh})"
    return OK


@check("trip_reserve")
def _trip_reserve(d: PowerData, plan: Plan, p: NoParams) -> Verdict:
    """Simulates each running unit tripping in each hour: the others' spare capacity must cover it."""
    spares = hourly(d, plan).spare
    for h in range(d.hours):
        for u in d.units:
            x = plan.output[u.id][h]
            if x:
                others = spares[h] - (u.pmax - x if x > 0 else 0)  # the spare of the units on but u
                if others < x:
                    return (
                        False,
                        f"if {u.id} tripped in hour {h}, its {x} MW exceed the {others} MW spare on the other units",
                    )
    return OK


@check("derate")
def _derate(d: PowerData, plan: Plan, p: Derate) -> Verdict:
    for h in range(p.first, min(p.last, d.hours - 1) + 1):
        if plan.output[p.unit][h] > p.mw:
            return False, f"{p.unit} runs at {plan.output[p.unit][h]} MW in hour {h}, above its derating to {p.mw} MW"
    return OK


# -- objective -------------------------------------------------------------------------
def total_shed(d: PowerData, plan: Plan) -> int:
    return sum(hourly(d, plan).shed)


def total_cost(d: PowerData, plan: Plan) -> int:
    total = 0
    for u in d.units:
        total += u.cost * sum(plan.output[u.id]) + u.startup * len(starts(plan, u.id))
    return total


def battery_reserve(d: PowerData, plan: Plan) -> int:
    """Battery room left unfilled: capacity minus state of charge, summed over the hours' ends."""
    if d.battery is None:
        return 0
    return sum(d.battery.capacity - level for level in levels(d, plan))


def objective_value(d: PowerData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    kind = term.kind
    if kind == "unserved":
        return total_shed(d, plan)
    if kind == "cost":
        return total_cost(d, plan)
    if kind == "battery_reserve":
        return battery_reserve(d, plan)
    if kind == "changes":
        old = as_model(tp, CurrentDispatch).existing
        pairs = [(plan.output[u.id], old[u.id]) for u in d.units]
        if BATTERY in old:
            pairs.append((plan.battery, old[BATTERY]))
        moved = 0
        for row, was in pairs:
            for h in range(d.hours):
                if row[h] != was[h]:
                    moved += 1
        return moved
    raise ValueError(f"unknown objective kind {term.kind!r}")


def verification(d: PowerData, plan: Plan) -> dict[str, dict[str, int]]:
    hours = [str(h) for h in range(d.hours)]
    out = {
        "shed": dict(zip(hours, hourly(d, plan).shed)),
        "starts": {u.id: len(starts(plan, u.id)) for u in d.units},
    }
    if d.battery is not None:
        out["level"] = dict(zip(hours, levels(d, plan)))
    return out


def neighbours(d: PowerData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one unit's output in one hour changed (off, or one of a
    few nearby values), or the battery's flow in one hour changed by one."""
    for u in d.units:
        for h in range(d.hours):
            x = plan.output[u.id][h]
            for y in sorted({0, u.pmin, u.pmax, x - 1, x + 1, x - u.ramp - 1, x + u.ramp + 1}):
                if y != x and 0 <= y <= u.pmax:
                    row = list(plan.output[u.id])
                    row[h] = y
                    yield Plan({**plan.output, u.id: tuple(row)}, plan.battery)
    b = d.battery
    if b is not None:
        for h in range(d.hours):
            for y in (plan.battery[h] - 1, plan.battery[h] + 1):
                if -b.charge <= y <= b.discharge:
                    flows = list(plan.battery)
                    flows[h] = y
                    moved = Plan(plan.output, tuple(flows))
                    if all(0 <= x <= b.capacity for x in levels(d, moved)):
                        yield moved


def battery_ok(d: PowerData, battery: tuple[int, ...]) -> str:
    """Why hourly battery flows are impossible (a flow beyond a rate, a level outside the
    capacity), or '' when they are possible."""
    b = d.battery
    if b is None:
        return "" if not any(battery) else "there is no battery: its flow must be 0 in every hour"
    level = b.initial
    for h, x in enumerate(battery):
        if not -b.charge <= x <= b.discharge:
            return f"hour {h}: battery flow {x} MW is outside -{b.charge}..{b.discharge}"
        level -= x
        if not 0 <= level <= b.capacity:
            return f"hour {h}: the battery would hold {level} MWh, outside 0..{b.capacity}"
    return ""


# -- the task checker ------------------------------------------------------------------
class PowerDispatch(PlanChecker):
    family = "project"
    task = TASK_ID
    plan_key = "dispatch"
    plan_text = (
        "a list naming every hour exactly once, each with an integer output in MW from 0 to the unit's maximum for "
        "every unit and an integer battery flow within the battery's rates that keeps its charge within capacity"
    )
    data_type = PowerData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: PowerData) -> dict[str, Any]:
        return {"unit": lookup([u.id for u in d.units])}

    def read_plan(self, d: PowerData, section: dict[str, Any], lk: Any, rules: list[Rule]) -> tuple[Plan | None, str]:
        rows = section.get("dispatch") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'dispatch' is missing or not a list"
        out: dict[str, list[int | None]] = {u.id: [None] * d.hours for u in d.units}
        flows: list[int | None] = [None] * d.hours
        units = lk["unit"]
        exact, pmax = units.exact, {u.id: u.pmax for u in d.units}
        n_units = len(out)
        for k, row in enumerate(rows):
            if not isinstance(row, dict):
                return None, f"row {k + 1} is not an object"
            h = row.get("hour")
            if isinstance(h, bool) or not isinstance(h, int) or not 0 <= h < d.hours:
                return None, f"row {k + 1} needs an integer 'hour' from 0 to {d.hours - 1}"
            if flows[h] is not None:
                return None, f"hour {h} appears more than once"
            given = row.get("output")
            if not isinstance(given, dict):
                return None, f"hour {h} needs an object 'output' (unit -> MW)"
            for name, x in given.items():
                uid = exact.get(name)  # the instance's own spelling (a JSON key is a string)
                if uid is None:
                    uid = units.find(name) if isinstance(name, str) else None
                    if uid is None:
                        return None, f"hour {h} names unknown unit {str(name)[:40]!r}"
                xs = out[uid]
                if xs[h] is not None:
                    return None, f"hour {h} gives unit {uid} twice"
                top = pmax[uid]
                if type(x) is not int:  # a bool, or another type: refused; an int subclass: kept as an int
                    if isinstance(x, bool) or not isinstance(x, int):
                        return None, f"hour {h}: {uid} needs an integer output from 0 to {top} MW"
                    x = int(x)
                if not 0 <= x <= top:
                    return None, f"hour {h}: {uid} needs an integer output from 0 to {top} MW"
                xs[h] = x
            if len(given) < n_units:  # every name given set a unit of its own (a second is refused above)
                missing = [uid for uid in out if out[uid][h] is None]
                return None, f"hour {h} gives no output for {', '.join(missing)}"
            b = row.get("battery", 0)
            if type(b) is not int:
                if isinstance(b, bool) or not isinstance(b, int):
                    return None, f"hour {h} needs an integer 'battery' flow"
                b = int(b)
            flows[h] = b
        if len(rows) < d.hours:  # every row set an hour of its own (a second is refused above)
            absent = [str(h) for h in range(d.hours) if flows[h] is None]
            return None, f"hours missing from the dispatch: {', '.join(absent)}"
        # every hour of every unit and of the battery is set: no None is left
        battery: tuple[int, ...] = tuple(flows)  # type: ignore[arg-type]
        why = battery_ok(d, battery)
        if why:
            return None, why
        output: dict[str, tuple[int, ...]] = {uid: tuple(xs) for uid, xs in out.items()}  # type: ignore[arg-type]
        return Plan(output, battery), "complete plan"

    def objective_value(self, d: PowerData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: PowerData, plan: Plan) -> dict[str, dict[str, int]]:
        return verification(d, plan)

    def existing(self, d: PowerData, plan: Plan) -> dict[str, list[int]]:
        return current(d, plan)

    def plan_schema(self, d: PowerData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        props: dict[str, Any] = {
            "hour": {"type": "integer", "minimum": 0, "maximum": d.hours - 1},
            "output": {
                "type": "object",
                "properties": {u.id: {"type": "integer", "minimum": 0, "maximum": u.pmax} for u in d.units},
                "required": [u.id for u in d.units],
                "additionalProperties": False,
                "description": "MW of every unit in this hour (0 = off)",
            },
        }
        required = ["hour", "output"]
        if d.battery is not None:
            props["battery"] = {
                "type": "integer",
                "minimum": -d.battery.charge,
                "maximum": d.battery.discharge,
                "description": "battery MW: positive discharges, negative charges, 0 idle",
            }
            required.append("battery")
        row = {"type": "object", "properties": props, "required": required}
        return {"type": "array", "items": row, "description": "every hour exactly once"}

    def verification_schema(self, d: PowerData) -> dict[str, Any]:
        hours = [str(h) for h in range(d.hours)]
        groups = {
            "shed": (hours, 'for each hour ("0", "1", ...), the MW of demand shed (unserved)'),
            "starts": ([u.id for u in d.units], "for each unit, its number of start-ups"),
        }
        if d.battery is not None:
            groups["level"] = (hours, "for each hour, the battery's state of charge in MWh at the end of the hour")
        return figures_schema(groups)

    def plan_json(self, d: PowerData, plan: Plan) -> list[dict[str, Any]]:
        rows = []
        for h in range(d.hours):
            row: dict[str, Any] = {"hour": h, "output": {u.id: plan.output[u.id][h] for u in d.units}}
            if d.battery is not None:
                row["battery"] = plan.battery[h]
            rows.append(row)
        return rows

    def neighbours(self, data: PowerData, plan: Plan) -> Iterator[Plan]:
        return neighbours(data, plan)

    def baseline_plan(self, d: PowerData, instance: Instance) -> Plan:
        """Merit order, hour by hour: renewable output first, then units from the cheapest
        fuel cost up, each at most its maximum and at least its minimum, until the demand
        is met; the battery stays idle. Blind to ramps, up and down times, reserves,
        start-up costs and every other rule."""
        out: dict[str, list[int]] = {u.id: [0] * d.hours for u in d.units}
        order = sorted(d.units, key=lambda u: (u.cost, u.id))
        for h in range(d.hours):
            need = d.demand[h] - d.available(h)
            for u in order:
                if need >= u.pmin:
                    x = min(u.pmax, need)
                    out[u.id][h] = x
                    need -= x
        return Plan({k: tuple(v) for k, v in out.items()}, tuple([0] * d.hours))


def current(d: PowerData, plan: Plan) -> dict[str, list[int]]:
    """A plan as a `changes` term's current plan (unit id, and ``battery`` with one, -> hourly figures)."""
    out = {u.id: list(plan.output[u.id]) for u in d.units}
    if d.battery is not None:
        out[BATTERY] = list(plan.battery)
    return out


TASK = PowerDispatch()
