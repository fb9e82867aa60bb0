"""Prompt text of Commuting Planning: one sentence per rule kind and objective kind
(times as 24-hour HH:MM, durations in minutes, fares in euros), and the body of the
prompt: the walk links, the timetable, the commuters (the closing sections are the kit's)."""

from __future__ import annotations

from pbsolve.checkers.routing import commuting as cm
from pbsolve.checkers.routing.commuting import CommuteData, clock
from pbsolve.network_kit import road_rows
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=cm.TASK_ID,
    data_type=CommuteData,
    rule_params=cm.RULE_PARAMS,
    term_params=cm.TERM_PARAMS,
    worst_case=(
        "the data's least favourable values are ride minutes and fares at the high end and spare places at the low end"
    ),
)
CONTEXT = {
    "morning_commute": "the morning commute of a group of office workers, who must be at work by their start times",
    "evening_return": "the evening trips home of a group of colleagues, some with a pick-up on the way",
    "park_and_ride": "the morning commute of a group in which car owners may drive to a park-and-ride car park and ride on from there",
    "school_run": "the school run: children travel with the adults who escort them, and the adults go on to work",
    "night_shift": "the trips of night-shift workers to their sites on a sparse night timetable",
}
ROBUST_KINDS = frozenset({"delay_robust"})


def _euros(n: int) -> str:
    return f"€{n}"


@TEXT.rule("deadline")
def _deadline(d: CommuteData, p: NoParams) -> str:
    return "Every commuter arrives at their destination no later than their deadline."


@TEXT.rule("seat_capacity")
def _seats(d: CommuteData, p: NoParams) -> str:
    return "No departure carries more commuters of this group than its line's spare places."


@TEXT.rule("transfer_time")
def _transfer(d: CommuteData, p: NoParams) -> str:
    return (
        f"A change from one ride straight onto another (no walk between) leaves at least "
        f"{plural(d.transfer, 'minute')} between arriving on the first and the departure of the second."
    )


def _who(names: list[str], verb: str) -> str:
    return and_list(names) + (f" each {verb}" if len(names) > 1 else f" {verb}s")


@TEXT.rule("walk_limit")
def _walk_limit(d: CommuteData, p: cm.Commuters) -> str:
    if p.max == 0:
        return f"{and_list(p.commuters)} {'do' if len(p.commuters) > 1 else 'does'} not walk at all (no walk legs)."
    return f"{_who(p.commuters, 'walk')} at most {plural(p.max, 'minute')} in total (walk legs only)."


@TEXT.rule("fare_cap")
def _fare_cap(d: CommuteData, p: cm.Commuters) -> str:
    return f"{_who(p.commuters, 'pay')} at most {_euros(p.max)} in total (fares and any parking fee)."


@TEXT.rule("max_transfers")
def _max_transfers(d: CommuteData, p: cm.Commuters) -> str:
    if p.max == 0:
        return f"{_who(p.commuters, 'take')} at most one ride (no change of vehicle)."
    return (
        f"{_who(p.commuters, 'change')} vehicle at most {plural(p.max, 'time')} (a trip with n rides changes "
        "n − 1 times)."
    )


@TEXT.rule("parking_spaces")
def _parking(d: CommuteData, p: cm.Parking) -> str:
    where = (
        "the park-and-ride at " + p.stops[0] if len(p.stops) == 1 else "any park-and-ride (" + and_list(p.stops) + ")"
    )
    return f"No more commuters drive to {where} than it has spaces."


@TEXT.rule("buffer")
def _buffer(d: CommuteData, p: cm.Buffer) -> str:
    return (
        f"{and_list(p.commuters)} arrive{'s' if len(p.commuters) == 1 else ''} at least "
        f"{plural(p.minutes, 'minute')} before {'their deadlines' if len(p.commuters) > 1 else 'the deadline'}."
    )


@TEXT.rule("arrival_order")
def _order(d: CommuteData, p: cm.ArrivalOrder) -> str:
    pairs = [f"{a} before {b}" for a, b in p.pairs]
    if p.gap == 0:
        return f"Arrival order: {and_list(pairs)} (arriving at the same minute counts as before)."
    return f"Arrival order: {and_list(pairs)}, at least {plural(p.gap, 'minute')} earlier."


@TEXT.rule("travel_balance")
def _balance(d: CommuteData, p: cm.Balance) -> str:
    spread = f"differ by at most {plural(p.max, 'minute')}" if p.max else "are all equal"
    return f"Fairness: the travel times of any two commuters (minutes from leaving their origin to arriving) {spread}."


@TEXT.rule("shared_ride")
def _shared(d: CommuteData, p: cm.Pair) -> str:
    return f"Car-pool of the day: {p.first} and {p.second} ride at least one departure together."


@TEXT.rule("escort")
def _escort(d: CommuteData, p: cm.Escorts) -> str:
    pairs = [f"{child} only rides departures that {adult} also rides" for child, adult in p.pairs]
    return f"Escorts: {'; '.join(pairs)} (walking alone is allowed)."


@TEXT.rule("via_stop")
def _via(d: CommuteData, p: cm.ViaStop) -> str:
    return f"Pick-up: {p.commuter}'s trip passes through {p.stop}."


@TEXT.rule("walk_fatigue")
def _fatigue(d: CommuteData, p: cm.WalkFatigue) -> str:
    return (
        f"Fatigue: once a commuter has walked more than {plural(p.after, 'minute')} in total on their trip, each "
        f"later walk leg of theirs takes at most {plural(p.longest, 'minute')}."
    )


@TEXT.rule("ride_rest")
def _rest(d: CommuteData, p: cm.RideRest) -> str:
    return (
        f"Rest: once a commuter has spent more than {plural(p.after, 'minute')} on board in total (ride minutes "
        f"so far), each later ride of theirs departs at least {plural(p.rest, 'minute')} after they reach its stop."
    )


@TEXT.rule("delay_robust")
def _robust(d: CommuteData, p: cm.Delay) -> str:
    return (
        f"Every trip survives any one of its rides arriving {plural(p.minutes, 'minute')} late (the rest as "
        f"planned): the commuter still catches their next ride (leaving at least {plural(d.transfer, 'minute')} "
        "when boarding it straight from the late ride), and after their last ride still arrives by the deadline."
    )


@TEXT.rule("cancelled")
def _cancelled(d: CommuteData, p: cm.Cancelled) -> str:
    return f"The {clock(p.departure)} departure of {p.line} is cancelled: nobody rides it."


@TEXT.rule("closed_stop")
def _closed(d: CommuteData, p: cm.ClosedStop) -> str:
    return f"{p.stop} is closed: no trip passes through it (no leg starts or ends there)."


@TEXT.objective("travel_minutes")
def _travel(d: CommuteData, p: NoParams) -> str:
    return "the total travel time: minutes from each commuter's leaving time to their arrival, summed over commuters"


@TEXT.objective("fares")
def _fares(d: CommuteData, p: NoParams) -> str:
    cap = f", with each commuter's ride fares capped at the day-pass price {_euros(d.day_pass)}" if d.day_pass else ""
    park = " plus parking fees" if d.parkings else ""
    return f"the total fares in euros: each commuter's ride fares{cap}{park}, summed over commuters"


@TEXT.objective("walking")
def _walking(d: CommuteData, p: NoParams) -> str:
    return "the total walking minutes of all commuters"


@TEXT.objective("route_score")
def _route(d: CommuteData, p: NoParams) -> str:
    return (
        "the route score: each walk or drive leg scores the listed number of the stop it ends at; each ride scores "
        "20 × its line's listed number + the listed number of its departure on that line; summed over all legs"
    )


@TEXT.objective("changes")
def _changes(d: CommuteData, p: cm.CurrentTrips) -> str:
    return "the number of commuters whose trip (its legs) differs from the current plan"


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.tier == "hard" and r.kind not in ROBUST_KINDS]
    return f"the disruption in {and_list(ids)}, which it breaks" if ids else "the disruption among the rules"


def _leg_text(leg: list[str]) -> str:
    if leg[0] == "ride":
        return f"ride {leg[1]} at {leg[2]}"
    return f"{leg[0]} to {leg[1]}"


@TEXT.body
def _body(d: CommuteData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    stops = list(d.network.places)
    out = [
        f"You are planning {CONTEXT.get(subtask, 'the trips of a group of commuters')}. Each commuter leaves their "
        "origin at their leaving time and travels to their destination in legs: a walk along one walk link, a "
        "ride on one departure of a line (boarded at the line's first stop, alighting at its last stop, no stops "
        "between), or, where listed, a drive to a park-and-ride as the first leg. Walks and drives start as soon as "
        "the commuter is there; a ride can be boarded when the commuter is at its first stop by its departure time, "
        "and it reaches its last stop the line's ride minutes after that departure. Waiting at a stop is allowed. A trip has at most "
        f"{plural(d.max_legs, 'leg')} and reaches no stop twice. Times are 24-hour HH:MM on one day. In the "
        "answer, a walk or drive leg gives `mode` and `to` (the stop it ends at); a ride gives `mode`, `line` and "
        "`departs` (its departure time); a trip's `arrival` is the time its legs reach the destination.",
        "",
        "**Stops** (listed number in brackets): " + ", ".join(f"{s} ({k})" for k, s in enumerate(stops, 1)),
        "",
        "**Walk links** (two-way; minutes walking):",
    ]
    out += [f"- {a} — {b}: {m} min" for a, b, m, *_ in road_rows(d.network)]
    out += ["", "**Lines** (listed number in brackets; every departure has the same spare places for this group):"]
    for k, x in enumerate(d.lines, 1):
        deps = ", ".join(f"{clock(t)} ({i})" for i, t in enumerate(x.departures, 1))
        out.append(
            f"- ({k}) {x.id} ({x.mode}): {x.origin} → {x.dest}, ride {ranged(d, 'ride', x.id, x.minutes)} min, "
            f"fare €{ranged(d, 'fare', x.id, x.fare)}, spare places {ranged(d, 'seats', x.id, x.seats)}; departures "
            f"(numbered): {deps}"
        )
    if d.parkings:
        out += ["", "**Park-and-ride car parks:**"]
        out += [f"- at {p.stop}: {plural(p.spaces, 'space')}, parking fee {_euros(p.fee)}" for p in d.parkings]
    if d.day_pass is not None:
        out += ["", f"**Day pass:** a commuter never pays more than {_euros(d.day_pass)} in ride fares for the day."]
    out += ["", "**Commuters:**"]
    for c in d.commuters:
        line = f"- {c.id}{' (child)' if c.child else ''}: from {c.origin} to {c.dest}, leaves {clock(c.ready)}, deadline {clock(c.deadline)}"
        if c.drives:
            line += "; has a car: drive " + ", ".join(f"to {dr.stop} {dr.minutes} min" for dr in c.drives)
        out.append(line)
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; change as few trips as you can):"]
        out += [
            f"- {cid}: {'; '.join(_leg_text(leg) for leg in legs)}" for cid, legs in cm.current_plan(changes).items()
        ]
    return out


@TEXT.verification
def _verification(d: CommuteData) -> str:
    return (
        "under `verification`, report from your plan `travel` (for every commuter, minutes from leaving to "
        "arriving) and `fare` (for every commuter, the euros they pay)."
    )
