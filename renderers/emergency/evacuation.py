"""Prompt text of Disaster Evacuation Planning: one sentence per rule kind and objective
kind (people, periods and minutes stated in their units), and the body of the prompt: the
roads, shelters, groups and, per group, its routes with the period offsets at which each
road is entered and the arrival offset, so no timing is left to interpretation (the
closing sections are the kit's)."""

from __future__ import annotations

from pbsolve.checkers.emergency import evacuation as ev
from pbsolve.checkers.emergency.evacuation import EvacData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=ev.TASK_ID,
    data_type=EvacData,
    rule_params=ev.RULE_PARAMS,
    term_params=ev.TERM_PARAMS,
    worst_case="the data's least favourable values are capacities at the low end",
)
CONTEXT = {
    "river_flood": "an evacuation ahead of a river flood: the river is rising and low roads will go under water",
    "wildfire": "an evacuation ahead of a wildfire: the fire front is advancing and will close roads",
    "hurricane": "an evacuation under a hurricane warning: a long evacuation window, with care homes and hospital wards to move",
    "chemical_plume": "an evacuation from a chemical plume from an industrial plant: time is short, and some buildings have sealed rooms to shelter in place",
    "stadium_event": "the emptying of a stadium: the crowd leaves by stand blocks through the gates",
}
ROBUST_KINDS = frozenset({"backup_route"})


def _road(d: EvacData, road: tuple[str, str] | list[str]) -> str:
    return ev.road_name(tuple(road), d.network)  # type: ignore[arg-type]


@TEXT.rule("road_capacity")
def _road_capacity(d: EvacData, p: NoParams) -> str:
    return (
        "Road capacity: in every period, the people entering a road (groups in both directions together; a group "
        "enters each road of its route in the period stated for that road) do not exceed the road's capacity."
    )


@TEXT.rule("shelter_capacity")
def _shelter_capacity(d: EvacData, p: NoParams) -> str:
    return "Shelter capacity: the people of all groups going to a shelter do not exceed its capacity."


@TEXT.rule("accessible_shelter")
def _accessible(d: EvacData, p: NoParams) -> str:
    return "Groups that include wheelchair users go to an accessible shelter."


@TEXT.rule("exit_capacity")
def _exit(d: EvacData, p: NoParams) -> str:
    in_place = any(s.in_place for s in d.shelters)  # a group staying put still counts, as the checker counts it
    return (
        "Exit capacity: in every period, the people of the groups that depart from a place listed under exits "
        "(all its groups departing in that period together"
        + ("; a group that shelters in place counts too, in its chosen period" if in_place else "")
        + ") do not exceed its exit capacity."
    )


@TEXT.rule("deadline")
def _deadline(d: EvacData, p: ev.Deadline) -> str:
    if len(p.groups) == len(d.groups):
        return f"Deadline: every group must arrive at its shelter in period {p.period} or earlier."
    whose = "their shelters" if len(p.groups) > 1 else "its shelter"
    return f"Deadline: {and_list(p.groups)} must arrive at {whose} in period {p.period} or earlier."


@TEXT.rule("road_closure")
def _closure(d: EvacData, p: ev.RoadClosure) -> str:
    if p.period == 1:
        return f"Road {_road(d, p.road)} is closed for the whole evacuation: no group enters it in any period."
    return (
        f"Road {_road(d, p.road)} closes from period {p.period} on: no group enters it in period {p.period} or "
        "later (groups entering it earlier pass)."
    )


@TEXT.rule("not_before")
def _not_before(d: EvacData, p: ev.NotBefore) -> str:
    return f"{p.group} is delayed: it departs in period {p.period} or later."


@TEXT.rule("vulnerable_first")
def _vulnerable(d: EvacData, p: ev.VulnerableFirst) -> str:
    if len(p.groups) == 1:
        return (
            f"Priority group first: {p.groups[0]} goes first — no other group departs in an earlier period than it "
            "(departing in the same period is allowed)."
        )
    return (
        f"Priority groups first: {and_list(p.groups)} go first — no other group departs in an earlier period than "
        "any of them (departing in the same period is allowed)."
    )


@TEXT.rule("same_shelter")
def _same(d: EvacData, p: ev.SameShelter) -> str:
    return f"{and_list(p.groups)} go to the same shelter."


@TEXT.rule("shelter_balance")
def _balance(d: EvacData, p: ev.ShelterBalance) -> str:
    gap = f"differ by at most {plural(p.max, 'person', 'people')}" if p.max else "are all equal"
    return f"Fairness: the numbers of people received by any two shelters (every listed shelter counts, also an empty one) {gap}."


@TEXT.rule("max_travel")
def _max_travel(d: EvacData, p: ev.MaxTravel) -> str:
    whose = "each take a route" if len(p.groups) > 1 else "takes a route"
    return f"Frail passengers: {and_list(p.groups)} {whose} of at most {plural(p.minutes, 'minute')}."


@TEXT.rule("escort_teams")
def _escort(d: EvacData, p: ev.EscortTeams) -> str:
    escorted = [g.id for g in d.groups if g.escort]
    return (
        f"Escort teams: {and_list(escorted)} each travel with an escort team, and there are {plural(p.teams, 'team')}. "
        "A team escorting a group that departs in period p on a route arriving a periods later is busy in periods "
        "p, p+1, ..., p+2a (out and back; a sealed room at the group's own building keeps it busy in period p only) "
        "and free for its next trip from period p+2a+1. In no period may more escorted groups be under way than "
        "there are teams."
    )


@TEXT.rule("staged_opening")
def _staged(d: EvacData, p: ev.StagedOpening) -> str:
    return (
        f"Staged opening: {p.shelter} has only {plural(p.beds, 'bed')} ready before period {p.period}: the people "
        f"of the groups arriving there in periods before {p.period} number at most {p.beds} (its full capacity "
        "applies to all arrivals)."
    )


@TEXT.rule("backup_route")
def _backup(d: EvacData, p: NoParams) -> str:
    acc = (
        " (an accessible shelter's route for groups with wheelchair users)"
        if any(g.wheelchair for g in d.groups)
        else ""
    )
    return (
        "Every group names a backup route from its own list, other than its route and sharing no road with it"
        f"{acc}. If any one road failed, every group whose route uses that road would take its backup route "
        "instead, departing in the same period. Every shelter's capacity must hold with no road failed and with "
        "each road failing on its own (road capacities are not re-checked under a failure)."
    )


@TEXT.objective("lateness")
def _lateness(d: EvacData, p: NoParams) -> str:
    return (
        "the weighted lateness: a group arriving k periods after its due period counts its lateness weight × k "
        "(0 when it arrives by its due period); summed over groups"
    )


@TEXT.objective("evacuation_time")
def _evacuation_time(d: EvacData, p: NoParams) -> str:
    return "the evacuation time: each group counts its people × its arrival period; summed over groups"


@TEXT.objective("travel_minutes")
def _travel(d: EvacData, p: NoParams) -> str:
    return "the travel: each group counts its people × its route's minutes; summed over groups"


@TEXT.objective("order_score")
def _order(d: EvacData, p: NoParams) -> str:
    return (
        f"the order score: a group with priority points q departing in period t on its route number k (the number "
        f"after the dash in the route id) scores q × ({ev.DEPART_WEIGHT} × t + k); summed over groups"
    )


@TEXT.objective("backup_score")
def _backup_score(d: EvacData, p: NoParams) -> str:
    return (
        "the backup score: a group with priority points q whose backup route has route number k scores q × k; "
        "summed over groups"
    )


@TEXT.objective("changes")
def _changes(d: EvacData, p: ev.CurrentPlan) -> str:
    return "the number of groups whose route or departure period differs from the current plan (each changed group counts 1)"


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.tier == "hard" and r.kind not in ROBUST_KINDS]
    return f"the disruption in {and_list(ids)}, which it breaks" if ids else "the disruption among the rules"


def _offset(k: int) -> str:
    return "t" if k == 0 else f"t+{k}"


@TEXT.body
def _body(d: EvacData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    pm = d.period_minutes
    out = [
        f"You are planning {CONTEXT.get(subtask, 'the evacuation of an area')}. Each group moves as one unit (it "
        "is never split): it takes one of its listed routes to that route's shelter, departing in one period.",
        f"Time runs in periods of {pm} minutes, numbered 1, 2, ...; a group may depart in periods 1 to {d.periods}. "
        f"A group departing in period t enters each road of its route in the period listed with the route (t plus "
        f"the minutes driven before that road, divided by {pm} and rounded down) and arrives in the period listed "
        f"(t plus its route's minutes divided by {pm}, rounded down).",
        "",
        "**Roads** (two-way; capacity = people who may enter the road per period, both directions together):",
    ]
    for r in d.network.roads:
        name = ev.road_name(r.ends, d.network)
        out.append(f"- {name}: {plural(r.minutes, 'minute')}, capacity {ranged(d, 'road', name, int(r.capacity or 0))}")
    if d.exits:
        out += ["", "**Exits** (people who may depart from the place per period, all its groups together):"]
        out += [f"- {e.place}: {e.capacity}" for e in d.exits]
    out += ["", "**Shelters**:"]
    show_access = any(g.wheelchair for g in d.groups)
    for s in d.shelters:
        line = f"- {s.id} {s.name} at {s.place}: capacity {ranged(d, 'shelter', s.id, s.capacity)} people"
        if s.in_place:
            line += "; a sealed room for sheltering in place (only for groups at this place)"
        if show_access:
            line += "; accessible" if s.accessible else "; not accessible"
        out.append(line)
    out += [
        "",
        "**Groups** (due period: arriving later counts as late; priority points weigh the order score):",
    ]
    for g in d.groups:
        parts = [
            f"{g.id} {g.name} ({g.kind}) at {g.place}",
            plural(g.people, "person", "people"),
            f"due period {g.due}",
            f"lateness weight {g.weight}",
            f"priority {g.priority}",
        ]
        if g.wheelchair:
            parts.append("includes wheelchair users")
        if g.escort:
            parts.append("needs an escort team")
        out.append("- " + " — ".join(parts))
    out += ["", "**Routes** (per group; t = the group's departure period):"]
    for route in d.routes:
        legs = d.legs[route.id]
        if legs:
            path = " → ".join(route.places)
            entries = "; ".join(f"enters {ev.road_name(leg.ends, d.network)} in {_offset(leg.offset)}" for leg in legs)
            timing = f"{plural(d.minutes[route.id], 'minute')}; {entries}; arrives in {_offset(d.travel[route.id])}"
        else:
            path = f"stay at {route.places[0]}"
            timing = "0 minutes; arrives in t"
        out.append(f"- {route.id} ({route.group} to {route.shelter}): {path}; {timing}")
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; change as few groups as you can):"]
        out += [f"- {g}: route {r}, departs in period {t}" for g, (r, t) in ev.current_plan(changes).items()]
    return out


@TEXT.verification
def _verification(d: EvacData) -> str:
    return (
        "under `verification`, report from your plan `shelter_people` (for every shelter, the people it receives) "
        "and `arrival` (for every group, its arrival period)."
    )
