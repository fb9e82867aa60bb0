"""Prompt text of Transportation Dispatch Planning: the rules of motion stated once (depot
at minute 0, quickest roads, waiting only for a release), one sentence per rule kind and
objective kind with its unit (minutes after the shift starts, minutes driven, the
subtask's load units), and the body of the prompt: the road table, the fleet and the
jobs (the closing sections are the kit's)."""

from __future__ import annotations

from pbsolve.checkers.routing import dispatch as dp
from pbsolve.checkers.routing.dispatch import DispatchData
from pbsolve.network_kit import road_rows
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=dp.TASK_ID,
    data_type=DispatchData,
    rule_params=dp.RULE_PARAMS,
    term_params=dp.TERM_PARAMS,
    worst_case="the data's least favourable values are due minutes at the early end and handling minutes at the long end",
    current="the current routes",
)
CONTEXT = {
    "taxi_prebookings": "a cab office's pre-booked rides for one shift: each booking picks passengers up at one place and drops them at another",
    "freight_haulage": "a haulier's loads for one shift: each load is collected from a customer and delivered to another place",
    "patient_transport": "a non-emergency patient transport service's trips for one shift; for continuity of care some trips must stay with one ambulance crew",
    "airport_shuttles": "an airport shuttle operator's transfers for one shift, run partly with battery-electric shuttles",
    "waste_collection": "a council's waste collections for one shift: each collection is loaded at a site and tipped at another place",
}
ROBUST_KINDS = frozenset({"spare_vehicle"})


def _jobs(jobs: list[str]) -> str:
    return and_list(jobs)


@TEXT.rule("vehicle_type")
def _vehicle_type(d: DispatchData, p: NoParams) -> str:
    return "Every job is done by a vehicle of the type it needs."


@TEXT.rule("shift_end")
def _shift_end(d: DispatchData, p: NoParams) -> str:
    return (
        f"Every vehicle that does a job is back at {d.depot} by minute {d.shift}, the end of the shift (minute of "
        "arrival after the drive back from its last drop-off)."
    )


@TEXT.rule("hard_deadline")
def _hard_deadline(d: DispatchData, p: dp.HardDeadline) -> str:
    whose = "their due minutes" if len(p.jobs) > 1 else "its due minute"
    return f"{_jobs(p.jobs)} must finish no later than {whose} (a hard deadline)."


@TEXT.rule("max_jobs")
def _max_jobs(d: DispatchData, p: dp.MaxJobs) -> str:
    return f"No vehicle does more than {plural(p.max, 'job')} in the shift."


@TEXT.rule("max_deadhead")
def _max_deadhead(d: DispatchData, p: dp.MaxDeadhead) -> str:
    return (
        f"No vehicle drives more than {plural(p.max, 'minute')} empty in the shift (its deadhead: from the depot to "
        "its first pickup, from each drop-off to the next pickup and from its last drop-off back to the depot)."
    )


@TEXT.rule("max_vehicles")
def _max_vehicles(d: DispatchData, p: dp.MaxVehicles) -> str:
    return f"At most {plural(p.max, 'vehicle')} may go out (do at least one job) in the shift."


@TEXT.rule("same_vehicle")
def _same_vehicle(d: DispatchData, p: dp.SameVehicle) -> str:
    return f"Continuity: {_jobs(p.jobs)} are done by the same vehicle."


@TEXT.rule("different_vehicle")
def _different_vehicle(d: DispatchData, p: dp.DifferentVehicle) -> str:
    pairs = [f"{a} and {b}" for a, b in p.pairs]
    if len(pairs) == 1:
        return f"Separation: {pairs[0]} are done by two different vehicles."
    return f"Separation: each of these pairs of jobs is done by two different vehicles: {'; '.join(pairs)}."


@TEXT.rule("max_wait")
def _max_wait(d: DispatchData, p: dp.MaxWait) -> str:
    return (
        f"No vehicle waits more than {plural(p.max, 'minute')} at a pickup (from its arrival there to the job's "
        "release minute)."
    )


@TEXT.rule("direct_start")
def _direct_start(d: DispatchData, p: dp.DirectStart) -> str:
    each = "each the first job" if len(p.jobs) > 1 else "the first job"
    return f"{_jobs(p.jobs)} {'are' if len(p.jobs) > 1 else 'is'} {each} of its vehicle (driven to straight from the depot)."


@TEXT.rule("battery")
def _battery(d: DispatchData, p: dp.Battery) -> str:
    return (
        "Battery: an electric vehicle leaves the depot fully charged with its range in driving minutes; every minute "
        "it drives, empty or loaded, uses one minute of range (there is no charging during the shift), and its "
        f"remaining range must never fall below a reserve of {plural(p.reserve, 'minute')}, also after the drive "
        f"back to the depot (so its driving minutes, the drive back included, total at most its range minus "
        f"{p.reserve})."
    )


@TEXT.rule("cumulative_load")
def _cumulative_load(d: DispatchData, p: dp.CumulativeLoad) -> str:
    return (
        f"Running load: a vehicle's running total of the loads of the jobs it has done (in {d.units}, added job by "
        f"job over the whole shift) never exceeds {p.max} {d.units}."
    )


@TEXT.rule("fleet_cap")
def _fleet_cap(d: DispatchData, p: dp.FleetCap) -> str:
    fleet = sum(1 for v in d.vehicles if v.type == p.type)
    down = fleet - p.max
    return (
        f"Breakdown: {plural(down, 'vehicle')} of type {p.type} {'is' if down == 1 else 'are'} out of service, so at "
        f"most {p.max} of the {fleet} vehicles of that type may go out (do any job)."
    )


@TEXT.rule("spare_vehicle")
def _spare_vehicle(d: DispatchData, p: dp.SpareVehicle) -> str:
    kinds = [f"{t}s" for t in p.types]
    return (
        f"Spare cover: of each of these vehicle types, at least one vehicle does no job and stays at the depot as a "
        f"spare, so it can take over if another vehicle breaks down: {and_list(kinds)}."
    )


@TEXT.objective("lateness")
def _lateness(d: DispatchData, p: NoParams) -> str:
    return (
        "the weighted lateness: a job finishing k minutes after its due minute counts its lateness weight × k "
        "(0 when it finishes by its due minute); summed over jobs"
    )


@TEXT.objective("deadhead")
def _deadhead(d: DispatchData, p: NoParams) -> str:
    return (
        "the deadhead minutes: minutes driven empty (depot to first pickup, each drop-off to the next pickup, last "
        "drop-off back to the depot); summed over vehicles"
    )


@TEXT.objective("vehicles_used")
def _vehicles_used(d: DispatchData, p: NoParams) -> str:
    return "the number of vehicles that go out (do at least one job)"


@TEXT.objective("pickup_score")
def _pickup_score(d: DispatchData, p: NoParams) -> str:
    return (
        "the pickup score: each job's priority points × the minute its vehicle arrives at the job's pickup place "
        "(before any wait for the release); summed over jobs"
    )


@TEXT.objective("changes")
def _changes(d: DispatchData, p: dp.CurrentRoutes) -> str:
    return (
        "the number of changed jobs: a job is changed when the stop before it (the depot, or the job its vehicle "
        "does just before it) differs from the current routes; each changed job counts 1"
    )


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.tier == "hard" and r.kind not in ROBUST_KINDS]
    return f"the disruption in {and_list(ids)}, which they break" if ids else "the disruption among the rules"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows)]


@TEXT.body
def _body(d: DispatchData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    out = [
        f"You are planning {CONTEXT.get(subtask, 'the transport jobs of one shift')}. Every job is done by one "
        "vehicle; each vehicle does its jobs one after another in the order you list them. All times are whole "
        f"minutes after the shift starts (minute 0); the shift ends at minute {d.shift}.",
        "",
        "**How a vehicle's shift runs:** it leaves the depot, "
        f"{d.depot}, at minute 0 and drives empty to the pickup place of its first job. It starts a job as soon as "
        "it is at the pickup and the job is released: if it arrives before the release minute it waits there until "
        "then, and it never waits otherwise. It then drives loaded to the drop-off place and spends the job's "
        "handling minutes there; the job finishes at the end of the handling (finish = start + loaded drive + "
        "handling). From there it drives empty to the next pickup, and after its last job back to the depot. A "
        "vehicle with no job stays at the depot. Every drive, empty or loaded, takes the quickest way over the "
        "roads below (the smallest total of road minutes).",
        "",
        "**Roads** (two-way; minutes either way):",
        *_table(["from", "to", "minutes"], road_rows(d.network)),
        "",
        "**Vehicles:**",
    ]
    for v in d.vehicles:
        line = f"- {v.id}: {v.type}"
        if v.battery is not None:
            line += f", electric, range {v.battery} driving minutes when fully charged"
        out.append(line)
    out += [
        "",
        f"**Jobs** (release and due are minutes after the shift starts; load in {d.units}; the lateness weight counts "
        "per minute late; priority points weigh the pickup score):",
    ]
    rows = []
    for j in d.jobs:
        handling = ranged(d, "handling", j.id, j.handling)
        due = ranged(d, "due", j.id, j.due)
        rows.append([j.id, j.name, j.needs, j.origin, j.dest, handling, str(j.release), due, str(j.weight),
                     str(j.points), str(j.load)])  # fmt: skip
    out += _table(
        ["job", "for", "needs", "pickup", "drop-off", "handling min", "release", "due", "lateness weight", "points",
         "load"],
        rows,
    )  # fmt: skip
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current routes** (made before {_disrupted(rules)}; change as few jobs as you can):"]
        out += [f"- {v}: {' → '.join(jobs)}" for v, jobs in dp.current_plan(changes).items()]
    return out


@TEXT.verification
def _verification(d: DispatchData) -> str:
    return (
        "under `verification`, report from your plan `finish` (for every job, the minute it finishes) and "
        "`deadhead` (for every vehicle, the minutes it drives empty; 0 for a vehicle with no job)."
    )
