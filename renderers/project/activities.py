"""Prompt text of Project Planning: one sentence per rule kind and objective kind (days,
units and costs stated in their units), and the body of the prompt: the project's
resources, activities, links and milestones (the closing sections are the kit's)."""

from __future__ import annotations

from pbsolve.checkers.project import activities as pj
from pbsolve.checkers.project.activities import ProjectData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=pj.TASK_ID,
    data_type=ProjectData,
    rule_params=pj.RULE_PARAMS,
    term_params=pj.TERM_PARAMS,
    worst_case="the data's least favourable values are durations at the high end and capacities at the low end",
)
CONTEXT = {
    "construction": "a building site: works linked by finish-to-start links (some with curing lags), sharing crews and a tower crane",
    "software_release": "a software release: development and test work, some of it starting a few days after related work starts",
    "event_buildup": "the build-up of an event venue: rigging and fit-out jobs sharing riggers, forklifts and electricians",
    "plant_shutdown": "a plant turnaround: maintenance jobs, some released only when their unit has cooled down",
    "plain_rcpsp": "a project of activities with finish-to-start links and renewable resources",
}
DAYS_NOTE = (
    "Time is counted in whole days from the project start (day 0). An activity with start day s and duration d "
    "runs on days s, s+1, ..., s+d-1, holds its resource units on each of those days, and finishes at day s+d "
    "(its finish day)."
)


def _acts(ids: list[str]) -> str:
    return and_list(ids)


@TEXT.rule("precedence")
def _precedence(d: ProjectData, p: NoParams) -> str:
    return (
        "Every link holds: for a finish-to-start link with lag L, the later activity starts on or after the earlier "
        "one's finish day + L; for a start-to-start link with lag L, it starts on or after the earlier one's start "
        "day + L."
    )


@TEXT.rule("resource_capacity")
def _capacity(d: ProjectData, p: NoParams) -> str:
    return (
        "On every day, the units of each resource held by the activities running that day sum to at most the "
        "resource's capacity."
    )


@TEXT.rule("release")
def _release(d: ProjectData, p: NoParams) -> str:
    return "No activity starts before its release day."


@TEXT.rule("deadline")
def _deadline(d: ProjectData, p: pj.Deadline) -> str:
    verb = "finish" if len(p.activities) > 1 else "finishes"
    return f"{_acts(p.activities)} {verb} by day {p.day} at the latest (finish day at most {p.day})."


@TEXT.rule("time_window")
def _window(d: ProjectData, p: pj.TimeWindow) -> str:
    if p.earliest == p.latest:
        return f"{p.activity} starts exactly on day {p.earliest} (a fixed delivery slot)."
    return f"{p.activity} starts on a day from {p.earliest} to {p.latest} (both included; a delivery slot)."


@TEXT.rule("resource_outage")
def _outage(d: ProjectData, p: pj.ResourceOutage) -> str:
    r = d.resource_by_id[p.resource]
    span = f"on day {p.first}" if p.first == p.last else f"on days {p.first} to {p.last} (both included)"
    left = r.capacity - p.units
    return (
        f"{plural(p.units, 'unit')} of {p.resource} ({r.name}) {'is' if p.units == 1 else 'are'} out of service "
        f"{span}: on {'that day' if p.first == p.last else 'those days'} at most {plural(max(left, 0), 'unit')} of "
        f"{p.resource} may be in use."
    )


@TEXT.rule("daily_budget")
def _budget(d: ProjectData, p: pj.DailyBudget) -> str:
    return f"On every day, the daily costs of the activities running that day sum to at most {p.max}."


@TEXT.rule("max_lag")
def _max_lag(d: ProjectData, p: pj.MaxLag) -> str:
    return (
        f"{p.after} starts at most {plural(p.lag, 'day')} after {p.before} finishes (its start day is at most "
        f"{p.before}'s finish day + {p.lag})."
    )


@TEXT.rule("no_overlap")
def _no_overlap(d: ProjectData, p: pj.NoOverlap) -> str:
    pairs = [f"{a} and {b}" for a, b in p.pairs]
    return f"Shared work area: these activities never run on a common day: {'; '.join(pairs)}."


@TEXT.rule("max_parallel")
def _parallel(d: ProjectData, p: pj.MaxParallel) -> str:
    return f"Span of control: at most {plural(p.max, 'activity', 'activities')} run on any one day."


@TEXT.rule("synchronised_start")
def _sync(d: ProjectData, p: pj.SynchronisedStart) -> str:
    a, b = p.activities
    if p.max_gap == 0:
        return f"{a} and {b} start on the same day."
    return f"{a} and {b} start at most {plural(p.max_gap, 'day')} apart (in either order)."


@TEXT.rule("work_to_date")
def _work_to_date(d: ProjectData, p: pj.WorkToDate) -> str:
    r = d.resource_by_id[p.resource]
    return (
        f"Cumulative use: over days 0 to {p.day - 1}, the unit-days of {p.resource} ({r.name}) — for each activity, "
        f"its units of {p.resource} × its days run before day {p.day}, summed — are at most {p.max}."
    )


@TEXT.rule("progress_by")
def _progress(d: ProjectData, p: pj.ProgressBy) -> str:
    return (
        f"Progress target: over days 0 to {p.day - 1}, the activity-days done — for each activity, its days run "
        f"before day {p.day}, summed — are at least {p.min}."
    )


@TEXT.rule("spare_unit")
def _spare(d: ProjectData, p: pj.SpareUnit) -> str:
    return (
        f"Robustness: any single unit of {and_list(p.resources)} may break down on any day, so on every day at most "
        "(its capacity − 1) units of each of these resources are in use."
    )


@TEXT.rule("not_before")
def _not_before(d: ProjectData, p: pj.NotBefore) -> str:
    return f"{p.activity} is delayed: it starts on day {p.day} or later."


@TEXT.objective("makespan")
def _makespan(d: ProjectData, p: NoParams) -> str:
    return "the makespan: the latest finish day of any activity"


@TEXT.objective("milestone_lateness")
def _lateness(d: ProjectData, p: NoParams) -> str:
    return (
        "the milestone lateness: a milestone is reached on the latest finish day of its activities; reached k days "
        "after its due day it counts its weight × k (0 when reached on or before its due day); summed over milestones"
    )


@TEXT.objective("start_score")
def _start_score(d: ProjectData, p: NoParams) -> str:
    if all(a.weight == 1 for a in d.activities):
        return "the total start time (start work as early as possible): the sum of all activities' start days"
    return (
        "the start score (start work as early as possible): each activity's start day × its weight; summed over "
        "activities"
    )


@TEXT.objective("changes")
def _changes(d: ProjectData, p: pj.CurrentStarts) -> str:
    return "the number of activities whose start day differs from the current plan (each moved activity counts 1)"


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.tier == "hard" and r.kind != "spare_unit"]
    return f"the disruption in {and_list(ids)}, which it breaks" if ids else "the disruption among the rules"


def _uncertain(d: ProjectData, kind: str, target: str) -> bool:
    return any(u.kind == kind and u.target == target for u in d.uncertain)


@TEXT.body
def _body(d: ProjectData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    budget = any(r.kind == "daily_budget" for r in rules)
    weighted = not all(a.weight == 1 for a in d.activities)
    out = [
        f"You are scheduling {CONTEXT.get(subtask, 'a project')}. Give every activity a start day.",
        DAYS_NOTE,
        f"The planning horizon is {d.horizon} days: every activity runs within days 0 to {d.horizon - 1}, so its "
        f"start day is from 0 to {d.horizon} minus its duration.",
        "",
        "**Resources** (renewable: the capacity is available again on every day):",
    ]
    for r in d.resources:
        out.append(f"- {r.id} ({r.name}): capacity {plural(ranged(d, 'capacity', r.id, r.capacity), 'unit')} per day")
    out += ["", "**Activities** (demands are units held on every day the activity runs):"]
    for a in d.activities:
        dur = (
            f"{ranged(d, 'duration', a.id, a.duration)} days"
            if _uncertain(d, "duration", a.id)
            else plural(a.duration, "day")
        )
        needs = ", ".join(f"{u} × {r}" for r, u in sorted(a.demand.items())) or "no resources"
        parts = [f"{a.id} {a.name}", f"duration {dur}", f"needs {needs}"]
        if a.release:
            parts.append(f"released on day {a.release}")
        if budget:
            parts.append(f"costs {a.cost} per day")
        if weighted:
            parts.append(f"weight {a.weight}")
        out.append("- " + " — ".join(parts))
    if d.links:
        out += ["", "**Links** (FS = finish-to-start, SS = start-to-start; the lag is a minimum number of days):"]
        for lk in d.links:
            out.append(f"- {lk.before} → {lk.after}: {lk.type}, lag {lk.lag}")
    if d.milestones:
        out += ["", "**Milestones** (reached when all their activities have finished):"]
        for m in d.milestones:
            out.append(
                f"- {m.id} {m.name}: {_acts(list(m.activities))} — due day {m.due}, weight {m.weight} per day late"
            )
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; move as few activities as you can):"]
        out += [f"- {aid}: start day {s}" for aid, s in pj.current_plan(changes).items()]
    return out


@TEXT.verification
def _verification(d: ProjectData) -> str:
    return (
        "under `verification`, report from your plan `finish` (for every activity, its finish day = start day + "
        "duration) and `peak` (for every resource, the highest number of its units in use on any one day)."
    )
