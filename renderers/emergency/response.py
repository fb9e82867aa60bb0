"""Prompt text of Emergency Planning: one sentence per rule kind and objective kind
(minutes, units and prices stated in their units), and the body of the prompt: the
alert waves, severity deadlines, teams by base, depots, incidents and the road table
(the closing sections are the kit's). Travel times are left to the reader: the prompt
gives the roads and says that a team or truck takes the quickest open route."""

from __future__ import annotations

from pbsolve.checkers.emergency import response as rp
from pbsolve.checkers.emergency.response import Incident, ResponseData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, plural
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=rp.TASK_ID,
    data_type=ResponseData,
    rule_params=rp.RULE_PARAMS,
    term_params=rp.TERM_PARAMS,
    worst_case="the data's least favourable values are depot stocks at the low end and road minutes at the high end",
)
CONTEXT = {
    "urban_fire_and_rescue": "a city fire and rescue service's control room",
    "flood_response": "a county flood response cell",
    "multi_casualty_collision": "an ambulance and rescue control room during a multi-casualty collision alert",
    "hazmat_spill": "a hazardous-materials response desk; roads inside the spill's exclusion zone are closed",
    "wildfire_rotation": "a wildfire incident command post rotating crews between two waves of fire fronts",
}
ROBUST_KINDS = frozenset({"spare_cover"})
DISRUPTION_KINDS = frozenset({"new_incident", "unit_out"})


def _needs(i: Incident) -> str:
    return and_list([f"{n} {role}" + ("" if n == 1 else "s") for role, n in i.needs.items()])


def _incident_line(d: ResponseData, i: Incident) -> str:
    sev = d.severity_by_id[i.severity]
    parts = [
        f"{i.id} {i.name} (site {i.site})",
        f"wave {i.wave}",
        f"{i.severity} (deadline {sev.deadline} minutes)",
        f"needs {_needs(i)}",
    ]
    if i.casualties:
        parts.append("casualties " + ", ".join(f"{n} {c}" for c, n in i.casualties.items()))
    if i.materials:
        parts.append("materials " + and_list([f"{n} units of {m}" for m, n in i.materials.items()]))
    parts.append(f"{i.duration} minutes on scene")
    return "- " + " — ".join(parts)


def _ranged(d: ResponseData, kind: str, target: str, value: int) -> str:
    for u in d.uncertain:
        if u.kind == kind and u.target == target:
            return f"{u.low}–{u.high} (uncertain input {u.id})"
    return str(value)


@TEXT.rule("depot_range")
def _depot_range(d: ResponseData, p: rp.DepotRange) -> str:
    return f"No material comes from a depot more than {plural(p.minutes, 'minute')} from the incident's site."


@TEXT.rule("stock")
def _stock(d: ResponseData, p: NoParams) -> str:
    return (
        "No depot ships more units of a material, summed over all incidents of both waves, than its stock of that "
        "material."
    )


@TEXT.rule("deadline")
def _deadline(d: ResponseData, p: rp.Deadline) -> str:
    if len(p.incidents) == 1:
        return (
            f"The response to {p.incidents[0]} must be complete (its last team and its last material arrived) "
            "within its severity deadline, counted in minutes from its alert (a hard deadline)."
        )
    return (
        f"The responses to {and_list(p.incidents)} must each be complete (the incident's last team and last "
        "material arrived) within the incident's severity deadline, counted in minutes from its alert (a hard "
        "deadline)."
    )


@TEXT.rule("max_travel")
def _max_travel(d: ResponseData, p: rp.MaxTravel) -> str:
    return f"No team travels more than {plural(p.minutes, 'minute')} from its base to the incident it is sent to."


@TEXT.rule("station_cover")
def _cover(d: ResponseData, p: rp.StationCover) -> str:
    ids = [t.id for t in d.teams if t.base == p.base and t.role == p.role]
    if len(ids) == 1:
        return f"Station cover: {p.base} keeps its only {p.role} ({ids[0]}) at home in wave {p.wave}: it is sent to no incident of that wave."
    return (
        f"Station cover: in wave {p.wave}, at least {p.keep} of {p.base}'s {plural(len(ids), p.role)} "
        f"({', '.join(ids)}) {'is' if p.keep == 1 else 'are'} sent to no incident of that wave."
    )


@TEXT.rule("dispatch_cap")
def _cap(d: ResponseData, p: rp.DispatchCap) -> str:
    return f"No base sends more than {plural(p.max, 'team')} to incidents of one wave."


@TEXT.rule("arrives_first")
def _first(d: ResponseData, p: rp.ArrivesFirst) -> str:
    return (
        f"Scene safety at {p.incident}: every {p.first} sent there arrives no later (in minutes from the alert) "
        f"than every {p.then} sent there."
    )


@TEXT.rule("severity_priority")
def _priority(d: ResponseData, p: rp.SeverityPriority) -> str:
    return (
        f"Priority: the response to {p.first} is complete no later than the response to {p.then} (each counted in "
        "minutes from its alert, until its last team or material arrives)."
    )


@TEXT.rule("same_base")
def _same(d: ResponseData, p: rp.SameBase) -> str:
    return f"Single command: all teams sent to {p.incident} come from the same base."


@TEXT.rule("dispatch_balance")
def _balance(d: ResponseData, p: rp.DispatchBalance) -> str:
    spread = f"differ by at most {p.max}" if p.max else "are all equal"
    return (
        f"Fairness: in each wave, the numbers of teams any two bases send (every listed base counts, also one that "
        f"sends none) {spread}."
    )


@TEXT.rule("rest_after_long")
def _rest(d: ResponseData, p: rp.RestAfterLong) -> str:
    return (
        f"Rest rule: a team sent to a wave-1 incident with {plural(p.minutes, 'minute')} or more on scene is not "
        "sent to any wave-2 incident."
    )


@TEXT.rule("cumulative_duty")
def _duty(d: ResponseData, p: rp.CumulativeDuty) -> str:
    return (
        "Duty limit: a team's wave-1 duty is, over its wave-1 incidents, twice its travel minutes plus the minutes on "
        f"scene. A team whose wave-1 duty exceeds {plural(p.minutes, 'minute')} may be sent in wave 2 only to an "
        f"incident with at most {plural(p.light, 'minute')} on scene."
    )


@TEXT.rule("turnaround")
def _turnaround(d: ResponseData, p: NoParams) -> str:
    return (
        f"Turnaround: a team sent to a wave-1 incident is back at its base at minute {d.alerts[0]} + twice its travel "
        f"minutes + the minutes on scene; it may be sent to a wave-2 incident only if that is no later than the "
        f"wave-2 alert (minute {d.alerts[1]})."
    )


@TEXT.rule("new_incident")
def _new(d: ResponseData, p: rp.NewIncident) -> str:
    i = p.incident
    sev = d.severity_by_id[i.severity]
    return (
        f"A new incident was reported after the plan was made: {i.id} {i.name} (site {i.site}), wave {i.wave}, "
        f"{i.severity} (deadline {sev.deadline} minutes), {i.duration} minutes on scene. It must get exactly "
        f"{_needs(i)}, and it counts in every rule and figure like the listed incidents."
    )


@TEXT.rule("unit_out")
def _out(d: ResponseData, p: rp.UnitOut) -> str:
    ids = [t.id for t in d.teams if t.base == p.base and t.role == p.role]
    n = len(ids)
    if p.count >= n:
        which = f"{p.base}'s only {p.role} ({ids[0]})" if n == 1 else f"all {n} of {p.base}'s {p.role}s"
        return f"Breakdown: {which} cannot be sent to any incident in either wave."
    return (
        f"Breakdown: {p.count} of {p.base}'s {n} {p.role}s ({', '.join(ids)}) {'is' if p.count == 1 else 'are'} out "
        f"of service: in each wave at most {n - p.count} of them may be sent to incidents (any of them; they are "
        "interchangeable)."
    )


@TEXT.rule("spare_cover")
def _spare(d: ResponseData, p: rp.SpareCover) -> str:
    return (
        f"Spare cover: for every {p.severity} incident and every role it needs, at least one team of that role must "
        "be left as a "
        f"spare within {plural(p.minutes, 'minute')} of the incident's site: a team sent to no incident of the "
        "incident's wave (what it does in the other wave does not matter). One spare may cover several incidents."
    )


@TEXT.objective("lateness")
def _lateness(d: ResponseData, p: NoParams) -> str:
    return (
        "the weighted lateness: an incident whose response is complete (last team or material arrived) m minutes "
        "after its severity deadline counts its severity's weight × m (0 when on time); summed over incidents"
    )


@TEXT.objective("travel")
def _travel(d: ResponseData, p: NoParams) -> str:
    return "the total travel minutes: each team sent counts its minutes from its base to the incident; summed"


@TEXT.objective("material_cost")
def _material(d: ResponseData, p: NoParams) -> str:
    return (
        "the material cost: each material an incident gets costs its units × (the sending depot's price per unit + "
        "the depot's haulage per unit per minute × the travel minutes from the depot to the site); summed"
    )


@TEXT.objective("fatigue")
def _fatigue(d: ResponseData, p: NoParams) -> str:
    return (
        "the carried fatigue: a team sent to incident A in wave 1 and incident B in wave 2 counts (A's minutes on "
        "scene ÷ 5) × (B's minutes on scene ÷ 5) (on-scene minutes are multiples of 5); a team sent in one wave "
        "or none counts 0; summed over teams"
    )


@TEXT.objective("running_cost")
def _running(d: ResponseData, p: NoParams) -> str:
    return (
        "the running cost: each team sent costs its travel minutes to the incident × its running cost per minute; "
        "summed"
    )


@TEXT.objective("changes")
def _changes(d: ResponseData, p: rp.CurrentDispatch) -> str:
    return (
        "the number of changes from the current plan: for every incident and every (role, base) pair, the "
        "difference between the numbers of teams of that role from that base sent now and in the current plan "
        "(teams of one role at one base are interchangeable), plus 1 for each material of a current-plan incident "
        "now taken from another depot"
    )


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.kind in DISRUPTION_KINDS]
    return f"the change in {and_list(ids)}, which it breaks" if ids else "the change among the rules"


@TEXT.body
def _body(d: ResponseData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    out = [
        f"You are planning for {CONTEXT.get(subtask, 'an emergency control room')}. Incidents come in two alert "
        f"waves: wave 1 is alerted at minute {d.alerts[0]} and wave 2 at minute {d.alerts[1]}. Every incident gets "
        "exactly the teams of each role it needs and, for each material it needs, the whole quantity from one depot. "
        "A team works at one incident at a time: no team is sent to two incidents of the same wave.",
        "",
        "Travel: teams leave from their base at their wave's alert (in every wave); materials leave from their depot "
        "at the alert. Everything travels over the open roads below by the quickest route; travel minutes are the "
        "minutes of that route. An incident's response is complete when its last team or material arrives.",
        "",
        "**Severities** (deadline in minutes from the alert; lateness weight per minute late):",
    ]
    out += [f"- {s.id}: deadline {s.deadline} minutes, weight {s.weight}" for s in d.severities]
    out += ["", "**Teams** (teams of one role at one base are interchangeable):"]
    for base in d.bases:
        here = [t for t in d.teams if t.base == base]
        roles = list(dict.fromkeys(t.role for t in here))
        groups = []
        for r in roles:
            ids = [t.id for t in here if t.role == r]
            cost = next(t.cost for t in here if t.role == r)
            groups.append(f"{r} {', '.join(ids)} (running cost {cost} per minute each)")
        out.append(f"- {base}: " + "; ".join(groups))
    out += ["", "**Depots** (stock in units; price per unit; haulage per unit per minute):"]
    for dp in d.depots:
        items = [
            f"{m} stock {_ranged(d, 'stock', f'{dp.id}/{m}', n)} at price {dp.price[m]}" for m, n in dp.stock.items()
        ]
        out.append(f"- {dp.id} (haulage {dp.haul} per unit per minute): " + "; ".join(items))
    out += ["", "**Incidents:**"]
    out += [_incident_line(d, i) for i in d.incidents]
    if any(i.casualties for i in d.incidents):
        out += [
            "",
            "Triage: each red casualty needs one ALS crew; yellow casualties need one BLS crew per two (rounded up); "
            "green casualties need no crew. The needs above already follow this.",
        ]
    closed = {frozenset(c) for c in d.closed}
    out += ["", "**Roads** (two-way; minutes either way):"]
    for road in d.network.roads:
        mins = _ranged(d, "road", f"{road.a}/{road.b}", road.minutes)
        shut = " — CLOSED (exclusion zone)" if road.ends in closed else ""
        out.append(f"- {road.a} – {road.b}: {mins} minutes{shut}")
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        cur = rp.current_plan(changes)
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; change as little as you can):"]
        for iid, teams in cur.teams.items():
            mats = cur.materials.get(iid, {})
            extra = ("; " + and_list([f"{m} from {dp}" for m, dp in mats.items()])) if mats else ""
            out.append(f"- {iid}: {', '.join(teams)}{extra}")
    return out


@TEXT.verification
def _verification(d: ResponseData) -> str:
    return (
        "under `verification`, report from your plan `completion` (for every listed incident, the minutes from its "
        "alert until its last team or material arrives) and `teams_sent` (for every base, the number of teams it "
        "sends over both waves)."
    )
