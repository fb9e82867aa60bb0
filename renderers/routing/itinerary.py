"""Prompt text of Travel Itinerary Planning: the trip's days, sights, fixed stops and road
table, the timing convention every figure follows, one sentence per rule kind and
objective kind (minutes, clock times and euros stated as such); the closing sections are
the kit's."""

from __future__ import annotations

from pbsolve.checkers.routing import itinerary as it
from pbsolve.checkers.routing.itinerary import TripData, hhmm
from pbsolve.network_kit import road_rows
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=it.TASK_ID,
    data_type=TripData,
    rule_params=it.RULE_PARAMS,
    term_params=it.TERM_PARAMS,
    worst_case=(
        "the data's least favourable values are visit durations (minutes) and ticket prices (euros) at the high end"
    ),
)
CONTEXT = {
    "city_break": "a city break in {city}, staying at one hotel",
    "family_trip": "a family trip to {city}; the children need a rest back at the hotel every day",
    "museum_pass": "a trip to {city} with a museum pass: museum entry is covered by the pass (ticket price 0)",
    "multi_city": "a trip around {city} and its region that moves hotel on the way",
    "business_trip": "a business trip to {city} with a fixed meeting every day and sightseeing around it",
}


@TEXT.rule("opening_hours")
def _opening(d: TripData, p: NoParams) -> str:
    return "Every visit to a sight ends no later than the sight's closing time (it starts no earlier than opening by the timing convention)."


@TEXT.rule("return_by")
def _return(d: TripData, p: NoParams) -> str:
    return "Every day the traveller is back at that day's evening hotel no later than the day's return time."


@TEXT.rule("closing_days")
def _closing(d: TripData, p: NoParams) -> str:
    return "No sight is visited on a day it is closed."


@TEXT.rule("reservations")
def _reservations(d: TripData, p: NoParams) -> str:
    return (
        "A sight with a booked entry is visited only on its booked day, and the traveller arrives there no later "
        "than the booked time (the visit then starts exactly at the booked time)."
    )


@TEXT.rule("fixed_stops")
def _fixed(d: TripData, p: NoParams) -> str:
    return "Every fixed stop is in the plan of its own day and starts no later than its latest start."


@TEXT.rule("daily_budget")
def _daily_budget(d: TripData, p: it.DailyBudget) -> str:
    return f"The ticket prices of the sights visited on any one day add up to at most {plural(p.max, 'euro')}."


@TEXT.rule("daily_travel")
def _daily_travel(d: TripData, p: it.DailyTravel) -> str:
    return f"Each day's travel (every leg from the morning hotel to the evening hotel) adds up to at most {plural(p.max, 'minute')}."


@TEXT.rule("must_see")
def _must_see(d: TripData, p: it.MustSee) -> str:
    return f"Must-see: {and_list(p.sights)} {'are' if len(p.sights) > 1 else 'is'} visited during the trip."


@TEXT.rule("max_visits")
def _max_visits(d: TripData, p: it.MaxVisits) -> str:
    return f"At most {plural(p.max, 'sight')} are visited on any one day (fixed stops do not count)."


@TEXT.rule("precedence")
def _precedence(d: TripData, p: it.Precedence) -> str:
    pairs = [f"{b} only after {a}" for a, b in p.pairs]
    return (
        f"Order: {and_list(pairs)}; when the later sight is visited, the earlier one is visited too, on an earlier "
        "day or earlier on the same day."
    )


@TEXT.rule("same_day")
def _same_day(d: TripData, p: it.SameDay) -> str:
    a, b = p.sights
    return f"Combined ticket: {a} and {b} are visited on the same day, or neither is visited."


@TEXT.rule("category_cap")
def _category(d: TripData, p: it.CategoryCap) -> str:
    return f"Variety: at most {p.max} sight{'s' if p.max != 1 else ''} of category {p.category} on any one day."


@TEXT.rule("balance")
def _balance(d: TripData, p: it.Balance) -> str:
    spread = f"differ by at most {p.max}" if p.max else "are equal"
    return f"Balance: the numbers of sights visited on any two days {spread}."


@TEXT.rule("trip_budget")
def _trip_budget(d: TripData, p: it.TripBudget) -> str:
    return f"The ticket prices of all sights visited during the trip add up to at most {plural(p.max, 'euro')}."


@TEXT.rule("carry_budget")
def _carry(d: TripData, p: it.CarryBudget) -> str:
    return (
        f"Daily allowance: {p.allowance} euros of tickets per day, and money not spent carries over to the next "
        f"days: the tickets of day 1 through day j together cost at most j × {p.allowance} euros, for every j."
    )


@TEXT.rule("tiring_day")
def _tiring(d: TripData, p: it.TiringDay) -> str:
    return (
        f"Pacing: a day with more than {plural(p.minutes, 'minute')} of sight visits (the sum of the visit "
        f"durations; fixed stops do not count) is followed by a day with at most {plural(p.light, 'minute')} of "
        "sight visits (the last day is followed by none)."
    )


@TEXT.rule("stamina")
def _stamina(d: TripData, p: it.Stamina) -> str:
    kinds = {t.kind for t in d.stops}
    since = "since the day's start or the last rest stop" if "rest" in kinds else "since the day's start"
    notes = {"rest": "a rest stop restores full stamina", "meeting": "a meeting neither uses nor restores it"}
    tail = "; " + " and ".join(notes[k] for k in sorted(kinds)) if kinds else ""
    return (
        f"Stamina: at every stop, the sightseeing minutes (the visit durations of the sights visited {since}, "
        f"that stop included) are at most {p.minutes}{tail}."
    )


@TEXT.rule("sight_closure")
def _closure(d: TripData, p: it.SightClosure) -> str:
    return f"{p.sight} is closed unexpectedly on {and_list(p.days)} and cannot be visited then."


@TEXT.rule("travel_margin")
def _margin(d: TripData, p: it.TravelMargin) -> str:
    return (
        f"Traffic margin: if every leg between two different places (the legs from and to the hotels included) "
        f"took {plural(p.minutes, 'minute')} longer than its fastest route, with the same timing convention, every "
        "visit would still end by its sight's closing time, every booked sight visited on its booked day would "
        "still be reached by its booked time, every fixed stop in the plan would still start by its latest start, "
        "and every day would still end at the evening hotel by the return time."
    )


@TEXT.objective("value_missed")
def _value(d: TripData, p: NoParams) -> str:
    return "the value missed: the sum of the values of the sights not visited during the trip"


@TEXT.objective("travel_minutes")
def _travel(d: TripData, p: NoParams) -> str:
    return "the total travel minutes of the trip: every leg of every day, from the morning hotel to the evening hotel"


@TEXT.objective("order_score")
def _order(d: TripData, p: NoParams) -> str:
    return (
        f"the order score: a visited sight with priority points p that is the k-th stop (counting fixed stops) "
        f"of day number j scores p × ({it.DAY_WEIGHT} × j + k); summed over visited sights"
    )


@TEXT.objective("changes")
def _changes(d: TripData, p: it.CurrentTrip) -> str:
    return (
        "the number of sights whose day differs from the current plan (a sight visited on another day, newly "
        "visited or no longer visited counts 1; the order within a day does not count)"
    )


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.kind == "sight_closure"]
    return f"the closure in {and_list(ids)}, which it breaks" if ids else "the disruption among the rules"


@TEXT.body
def _body(d: TripData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    context = CONTEXT.get(subtask, "a trip to {city}").format(city=d.city)
    out = [
        f"You are planning {context}. For every day, choose which sights to visit and in what order. The days are "
        f"{and_list([x.id for x in d.days])}, in this order (day number j = 1, 2, ...).",
        "",
        "**Timing convention** (it fixes every time from the order of the stops): each day the traveller leaves the "
        "morning hotel at the day's departure time and travels every leg by the fastest route over the roads below. "
        "At a stop the visit starts on arrival or at the stop's earliest start (a sight's opening time, or its "
        "booked time when it has one; a fixed stop's earliest start), whichever is later, lasts its duration, and "
        "the traveller then leaves for the next stop; after the last stop the traveller goes to the evening hotel. "
        "Times are clock times (HH:MM) on the same day; durations and travel are in minutes. A day's plan lists "
        "its stops in visiting order -- sights and that day's fixed stops, never the hotels; a day may have no stops.",
        "",
        "**Days:**",
    ]
    for x in d.days:
        moving = f", moves to {x.end_place}" if x.end_place != x.start_place else ""
        out.append(
            f"- {x.id}: leaves {x.start_place} at {hhmm(x.start)}{moving}; back at {x.end_place} by {hhmm(x.end)}"
        )
    out += [
        "",
        "**Sights** (value earned by visiting; priority points weigh the order score; each sight at most once in "
        "the trip):",
    ]
    for s in d.sights:
        dur = ranged(d, "duration", s.id, s.minutes)
        price = ranged(d, "price", s.id, s.price)
        parts = [
            f"{s.id} ({s.category})",
            f"value {s.value}",
            f"priority {s.priority}",
            f"visit {dur} minutes",
            f"ticket {price} euros",
            f"open {hhmm(s.opens)}–{hhmm(s.closes)}",
        ]
        if s.closed_on:
            parts.append(f"closed on {and_list(list(s.closed_on))}")
        if s.booked_day is not None and s.booked_at is not None:
            parts.append(f"entry booked for {s.booked_day} at {hhmm(s.booked_at)}")
        out.append("- " + " — ".join(parts))
    if d.stops:
        out += ["", "**Fixed stops** (each belongs to one day and is listed in that day's stops by its name):"]
        for t in d.stops:
            what = "rest" if t.kind == "rest" else "meeting"
            window = (
                f"starts at {hhmm(t.earliest)}" if t.earliest == t.latest else
                f"earliest start {hhmm(t.earliest)}, latest start {hhmm(t.latest)}"
            )  # fmt: skip
            out.append(f"- {t.id}: {what} at {t.place} on {t.day}, {plural(t.minutes, 'minute')}; {window}")
    out += ["", "**Roads** (two-way; minutes either way; travel between two places takes the fastest route):"]
    out += ["| from | to | minutes |", "|---|---|---|"]
    out += [f"| {a} | {b} | {m} |" for a, b, m, *_ in road_rows(d.network)]
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; change as little as you can):"]
        out += [f"- {day}: {', '.join(stops) or '(no stops)'}" for day, stops in it.current_plan(changes).items()]
    return out


@TEXT.verification
def _verification(d: TripData) -> str:
    return (
        "under `verification`, report from your plan `travel` (for every day, its travel minutes from the morning "
        "hotel to the evening hotel) and `spend` (for every day, the euros spent on tickets)."
    )
