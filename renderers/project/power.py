"""Prompt text of Power Dispatch Planning: one sentence per rule kind and objective kind
(MW, MWh, hours and costs stated in their units), and the body of the prompt: the hourly
demand and renewable forecast, the units and the battery (the closing sections are the
kit's)."""

from __future__ import annotations

from pbsolve.checkers.project import power as pw
from pbsolve.checkers.project.power import PowerData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=pw.TASK_ID,
    data_type=PowerData,
    rule_params=pw.RULE_PARAMS,
    term_params=pw.TERM_PARAMS,
    worst_case="the data's least favourable values are the low ends (maximum outputs and renewable forecasts)",
    current="the current dispatch",
)
CONTEXT = {
    "island_grid": "an island grid: diesel gensets, a wind farm and a battery serve the island's demand",
    "industrial_microgrid": "an industrial microgrid: a combined heat and power (CHP) plant, gas engines and rooftop solar serve a factory",
    "regional_fleet": "a regional thermal fleet: coal, gas and peaking units and a wind farm serve the region's demand",
    "solar_storage": "a solar-plus-storage site: a solar farm, a battery and backup generators serve a town",
    "hospital_backup": "a hospital during a grid outage: backup generators, rooftop solar and a UPS battery serve its loads",
}


def _hours_note(d: PowerData) -> str:
    """How the hourly figures are computed, naming only what this system has."""
    supply = "the sum of the units' outputs" + (
        " + the battery flow (positive = discharging, negative = charging)" if d.battery else ""
    )
    rest = (
        "Renewable output fills the rest of the demand: it is used up to min(available, demand − net) MW (0 if net "
        "covers the demand), the demand still not met is **shed** (unserved), and renewable output not used is "
        "**curtailed**."
        if d.renewable and any(d.renewable)
        else "The demand not met by `net` is **shed** (unserved)."
    )
    who = "the units and the battery supply" if d.battery else "the units supply"
    return (
        f"Time runs in whole hours 0, 1, 2, ...; an output of x MW for one hour delivers x MWh. In every hour, {who} "
        f"`net` MW = {supply}. {rest} A unit is **on** in an hour when its output is above 0 and off at 0 MW; it "
        "**starts up** in an hour when it is on and was off in the hour before (every unit is off before hour 0), "
        "and **shuts down** in an hour when it is off and was on in the hour before."
    )


@TEXT.rule("power_balance")
def _balance(d: PowerData, p: NoParams) -> str:
    what = "units' outputs + battery flow" if d.battery else "the units' outputs"
    return f"In every hour, `net` ({what}) is at most the demand: the grid cannot export."


@TEXT.rule("output_limits")
def _limits(d: PowerData, p: NoParams) -> str:
    return "Every unit that is on runs at or above its minimum output (and never above its maximum)."


@TEXT.rule("must_run")
def _must_run(d: PowerData, p: pw.MustRun) -> str:
    verb = "are must-run units: each is" if len(p.units) > 1 else "is a must-run unit: it is"
    return f"{and_list(p.units)} {verb} on (output above 0) in every hour."


@TEXT.rule("critical_load")
def _critical(d: PowerData, p: NoParams) -> str:
    return "Critical loads: in every hour the demand served (demand minus shed) is at least that hour's critical load."


@TEXT.rule("unit_outage")
def _outage(d: PowerData, p: pw.UnitOutage) -> str:
    span = f"in hour {p.first}" if p.first == p.last else f"in hours {p.first} to {p.last} (both included)"
    return f"{p.unit} is out of service {span}: its output is 0 MW then."


@TEXT.rule("spinning_reserve")
def _reserve(d: PowerData, p: pw.SpinningReserve) -> str:
    return (
        f"Spinning reserve: in every hour, the units that are on keep at least {p.mw} MW spare in total (for each "
        "unit on, its maximum output minus its output, summed; an hour with no unit on has none spare and breaks "
        "this rule)."
    )


@TEXT.rule("fuel_limit")
def _fuel(d: PowerData, p: pw.FuelLimit) -> str:
    return f"Fuel on site: {p.unit}'s output summed over all hours is at most {p.mwh} MWh."


@TEXT.rule("ramp_limits")
def _ramp(d: PowerData, p: NoParams) -> str:
    return (
        "Ramp limits: when a unit is on in two consecutive hours, its output changes between them by at most its "
        "ramp limit (MW, up or down); a start-up or a shut-down is not limited."
    )


@TEXT.rule("min_up_time")
def _min_up(d: PowerData, p: NoParams) -> str:
    return (
        "Minimum up time: a unit that starts up in hour h stays on in hours h to h + (its minimum up time) − 1 "
        "(or to the last hour)."
    )


@TEXT.rule("min_down_time")
def _min_down(d: PowerData, p: NoParams) -> str:
    return (
        "Minimum down time: a unit that shuts down in hour h stays off in hours h to h + (its minimum down time) − 1 "
        "(or to the last hour)."
    )


@TEXT.rule("max_starts")
def _starts(d: PowerData, p: pw.MaxStarts) -> str:
    return f"{p.unit} starts up at most {plural(p.max, 'time')} over the plan's hours."


@TEXT.rule("curtailment_cap")
def _curtail(d: PowerData, p: pw.CurtailmentCap) -> str:
    return f"At most {p.mwh} MWh of {d.renewable_name} output is curtailed over the plan (summed over its hours)."


@TEXT.rule("battery_floor")
def _floor(d: PowerData, p: pw.BatteryFloor) -> str:
    return f"The battery holds at least {p.mwh} MWh at the end of every hour."


@TEXT.rule("battery_end")
def _end(d: PowerData, p: pw.BatteryEnd) -> str:
    return f"The battery holds at least {p.mwh} MWh at the end of the last hour (hour {d.hours - 1})."


@TEXT.rule("trip_reserve")
def _trip(d: PowerData, p: NoParams) -> str:
    return (
        "N-1 security: any single running unit may trip in any hour, so in every hour each unit's output is at most "
        "the spare capacity (maximum minus output) of the other units that are on."
    )


@TEXT.rule("derate")
def _derate(d: PowerData, p: pw.Derate) -> str:
    span = f"in hour {p.first}" if p.first == p.last else f"in hours {p.first} to {p.last}"
    return f"{p.unit} is derated {span}: its output is at most {p.mw} MW then."


@TEXT.objective("unserved")
def _unserved(d: PowerData, p: NoParams) -> str:
    return "the energy shed: the MW of demand shed, summed over the hours (MWh)"


@TEXT.objective("cost")
def _cost(d: PowerData, p: NoParams) -> str:
    return (
        "the total cost in $: for every unit, its fuel cost per MWh × its output summed over the hours, plus its "
        "start-up cost × its number of start-ups"
    )


@TEXT.objective("battery_reserve")
def _battery_reserve(d: PowerData, p: NoParams) -> str:
    return (
        "the battery's unfilled room: its capacity minus its state of charge at the end of each hour, summed over the "
        "hours (MWh; keep the battery as full as you can)"
    )


@TEXT.objective("changes")
def _changes(d: PowerData, p: pw.CurrentDispatch) -> str:
    what = "figures (unit outputs and battery flows)" if pw.BATTERY in p.existing else "unit outputs"
    return f"the number of hourly {what} that differ from the current dispatch (each differing figure counts 1)"


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.tier == "hard" and r.kind != "trip_reserve"]
    return f"the disruption in {and_list(ids)}, which it breaks" if ids else "the disruption among the rules"


@TEXT.body
def _body(d: PowerData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    kinds = {r.kind for r in rules}
    out = [
        f"You are planning the dispatch of {CONTEXT.get(subtask, 'a power system')} over {d.hours} hours "
        f"(hours 0 to {d.hours - 1}). Give every unit an output in whole MW for every hour"
        + (", and the battery a flow in whole MW for every hour." if d.battery else "."),
        _hours_note(d),
        "",
        "**Hourly figures** (MW):",
    ]
    for h in range(d.hours):
        parts = [f"demand {d.demand[h]}"]
        if "critical_load" in kinds and d.critical:
            parts.append(f"critical load {d.critical[h]}")
        if d.renewable:
            parts.append(f"{d.renewable_name} available {ranged(d, 'renewable', f'hour {h}', d.renewable[h])}")
        out.append(f"- hour {h}: " + ", ".join(parts))
    if not d.renewable:
        out.append("(There is no renewable output.)")
    out += ["", "**Units** (output limits in MW when on; fuel cost per MWh of output; cost per start-up):"]
    for u in d.units:
        parts = [
            f"{u.id} {u.name}",
            f"min {u.pmin} MW, max {ranged(d, 'pmax', u.id, u.pmax)} MW",
            f"fuel ${u.cost}/MWh",
            f"start-up ${u.startup}",
        ]
        if "ramp_limits" in kinds:
            parts.append(f"ramp limit {u.ramp} MW/h")
        if "min_up_time" in kinds:
            parts.append(f"minimum up time {plural(u.min_up, 'hour')}")
        if "min_down_time" in kinds:
            parts.append(f"minimum down time {plural(u.min_down, 'hour')}")
        out.append("- " + " — ".join(parts))
    b = d.battery
    if b is not None:
        out += [
            "",
            f"**Battery:** capacity {b.capacity} MWh, {b.initial} MWh stored at the start of hour 0; it charges at most "
            f"{b.charge} MW and discharges at most {b.discharge} MW in an hour. Its state of charge at the end of hour "
            "h is the stored energy before hour 0 minus the flows of hours 0..h, and must stay within 0 and the "
            "capacity at the end of every hour.",
        ]
    else:
        out += ["", "There is no battery: give no battery flow (or 0)."]
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        old = pw.current_plan(changes)
        out += ["", f"**Current dispatch** (made before {_disrupted(rules)}; change as few figures as you can):"]
        for h in range(d.hours):
            row = ", ".join(f"{u.id} {old[u.id][h]}" for u in d.units)
            if pw.BATTERY in old:
                row += f", battery {old[pw.BATTERY][h]}"
            out.append(f"- hour {h}: {row}")
    return out


@TEXT.verification
def _verification(d: PowerData) -> str:
    level = (
        " and `level` (for every hour, the battery's state of charge in MWh at the end of that hour)"
        if d.battery
        else ""
    )
    return (
        'under `verification`, report from your plan `shed` (for every hour, keyed "0", "1", ..., the MW of '
        f"demand shed), `starts` (for every unit, its number of start-ups){level}."
    )
