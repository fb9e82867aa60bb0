"""Prompt text of Logistics Delivery Planning: one sentence per rule kind and objective
kind (minutes after departure, units of goods), and the body of the prompt: the fleet,
the stops and the full travel-minute matrix (the closing sections are the kit's)."""

from __future__ import annotations

from pbsolve.checkers.routing import delivery as dl
from pbsolve.checkers.routing.delivery import RELOAD, DeliveryData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=dl.TASK_ID,
    data_type=DeliveryData,
    rule_params=dl.RULE_PARAMS,
    term_params=dl.TERM_PARAMS,
    worst_case="the data's least favourable values are service minutes and delivered units at the high end",
)
CONTEXT = {
    "round_trip": "one delivery vehicle's round trip: it leaves the depot, visits every stop once and returns",
    "parcel_rounds": "a parcel company's delivery rounds with a fleet of identical vans",
    "grocery_home_delivery": "a grocer's home deliveries in booked time slots, with a van and cargo bikes",
    "pickup_and_delivery": "a same-day courier collecting goods at shops and delivering them to customers",
    "multi_trip": "a delivery round in which vans may return to the depot to reload and go out again",
}


@TEXT.rule("capacity")
def _capacity(d: DeliveryData, p: NoParams) -> str:
    if d.pickups:
        return "A vehicle never carries more units than its capacity (it leaves the depot empty)."
    trip = " on each trip (it is reloaded at every depot visit)" if d.reloads else ""
    return (
        f"A vehicle leaves the depot with all the units it delivers{trip}, and that load may not exceed its capacity."
    )


@TEXT.rule("time_windows")
def _windows(d: DeliveryData, p: NoParams) -> str:
    return "Service at every stop with a window starts no later than the minute its window closes."


@TEXT.rule("shift_end")
def _shift(d: DeliveryData, p: NoParams) -> str:
    return f"Driver hours: every vehicle is back at the depot by minute {d.shift} (the end of the shift)."


@TEXT.rule("stop_deadline")
def _deadline(d: DeliveryData, p: dl.StopDeadline) -> str:
    return f"Service at {and_list(p.stops)} starts no later than minute {p.by}."


@TEXT.rule("max_stops")
def _max_stops(d: DeliveryData, p: dl.MaxStops) -> str:
    reloads = " (reloads do not count as stops)" if d.reloads else ""
    return f"No vehicle serves more than {plural(p.max, 'stop')}{reloads}."


@TEXT.rule("first_stop")
def _first(d: DeliveryData, p: dl.FirstStop) -> str:
    return (
        f"{p.stop} is urgent: it is the first stop of the route that serves it (straight from the depot at minute 0)."
    )


@TEXT.rule("pickup_delivery")
def _pickup(d: DeliveryData, p: NoParams) -> str:
    pairs = [f"{a} → {b}" for a, b in d.pairs]
    return (
        f"Goods picked up at a shop go to their customer on the same vehicle, later in its route: {', '.join(pairs)}."
    )


@TEXT.rule("precedence")
def _precedence(d: DeliveryData, p: dl.Precedence) -> str:
    pairs = [f"{b} after {a}" for a, b in p.pairs]
    return f"Order: {and_list(pairs)}: service at the later stop starts at a strictly later minute (any vehicles)."


@TEXT.rule("same_vehicle")
def _same(d: DeliveryData, p: dl.SameVehicle) -> str:
    return f"{and_list(p.stops)} are served by the same vehicle."


@TEXT.rule("different_vehicle")
def _different(d: DeliveryData, p: dl.DifferentVehicle) -> str:
    pairs = [f"{a} and {b}" for a, b in p.pairs]
    return f"Each of these pairs of stops is served by two different vehicles: {'; '.join(pairs)}."


@TEXT.rule("route_balance")
def _balance(d: DeliveryData, p: dl.RouteBalance) -> str:
    spread = f"differ by at most {p.max}" if p.max else "are all equal"
    return f"Balance: the numbers of stops served by any two vehicles (an unused vehicle serves 0) {spread}."


@TEXT.rule("battery_range")
def _battery(d: DeliveryData, p: dl.BatteryRange) -> str:
    trip = "each trip (from leaving the depot to the next arrival there)" if d.reloads else "each route"
    return (
        f"Battery: the vehicles are electric and are charged at the depot; {trip} drives at most "
        f"{plural(p.max, 'minute')} in total (travel minutes only, not service or waiting)."
    )


@TEXT.rule("load_limit")
def _load_limit(d: DeliveryData, p: dl.LoadLimit) -> str:
    return (
        f"Weight limit: the street at {p.stop} is restricted, so the vehicle arriving there carries at most "
        f"{plural(p.max, 'unit')} on arrival (before unloading or loading at {p.stop})."
    )


@TEXT.rule("vehicle_off")
def _vehicle_off(d: DeliveryData, p: dl.VehicleOff) -> str:
    return f"{p.vehicle} has broken down and serves no stop."


@TEXT.rule("delay_buffer")
def _buffer(d: DeliveryData, p: dl.DelayBuffer) -> str:
    parts = []
    if any(s.close is not None for s in d.stops):
        parts.append(
            f"service at every stop with a window starts at least {plural(p.minutes, 'minute')} before it closes"
        )
    if d.shift is not None:
        parts.append(f"every vehicle used is back at least {plural(p.minutes, 'minute')} before the shift ends")
    return f"Delay buffer, so a {p.minutes}-minute delay on any one leg breaks no promise: {' and '.join(parts)}."


@TEXT.objective("travel")
def _travel(d: DeliveryData, p: NoParams) -> str:
    return "the total travel minutes of all vehicles (the matrix minutes of every leg driven, returns and reloads included)"


@TEXT.objective("arrival_sum")
def _arrival(d: DeliveryData, p: NoParams) -> str:
    return "the sum over all stops of the minute at which service there starts (customers served sooner count less)"


@TEXT.objective("changes")
def _changes(d: DeliveryData, p: dl.CurrentRoutes) -> str:
    return (
        "the number of stops whose vehicle, or whose place served just before them (another stop or the depot), "
        "differs from the current plan (each changed stop counts 1)"
    )


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.tier == "hard" and r.kind != "delay_buffer"]
    return f"the disruption in {and_list(ids)}, which it breaks" if ids else "the disruption among the rules"


def _stop_line(d: DeliveryData, k: int) -> str:
    s = d.stops[k - 1]
    parts = [f"{s.id} {s.name}"]
    if s.load:
        units = ranged(d, "load", s.id, abs(s.load))
        what = "pick up" if s.load > 0 and d.pickups else "deliver"
        parts.append(f"{what} {plural(abs(s.load), 'unit') if units == str(abs(s.load)) else units + ' units'}")
    if s.service or any(u.target == s.id and u.kind == "service" for u in d.uncertain):
        parts.append(f"service {ranged(d, 'service', s.id, s.service)} min")
    if s.open or s.close is not None:
        close = "" if s.close is None else f" to {s.close}"
        parts.append(f"window from minute {s.open}{close}")
    return "- " + " — ".join(parts)


@TEXT.body
def _body(d: DeliveryData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    imported = d.network is None
    out = [
        f"You are planning {CONTEXT.get(subtask, 'delivery routes')}. Every vehicle that is used leaves the depot "
        f"({d.depot}) at minute 0, serves its stops in the order you give and returns to the depot. Every stop is "
        "served exactly once, by one vehicle, in one visit; a route lists its stops in order, without the depot at "
        "its start or end. Times are minutes after departure. A vehicle reaching a "
        "stop before its window opens waits there until it opens; service then takes the stop's service minutes.",
    ]
    if d.reloads:
        out.append(
            f"A vehicle may return to the depot to reload between two stops (write `{RELOAD}` in its stop list; at most "
            f"{plural(d.reloads, 'reload')} per vehicle); a reload takes {plural(d.reload_minutes, 'minute')} at the depot."
        )
    pure = not rules and [t.kind for t in objective] == ["travel"]
    if imported and pure and len(d.vehicles) == 1 and d.symmetric:
        out.append(
            "The distances are symmetric: a tour and its reverse are the same tour, and either direction is accepted."
        )
    out += ["", "**Fleet:**"]
    for v in d.vehicles:
        cap = f", capacity {plural(v.capacity, 'unit')}" if v.capacity is not None else ""
        out.append(f"- {v.id}: {v.kind}{cap}")
    if len(dl.vehicle_classes(d, rules, objective)) and not imported:
        out.append("(Vehicles of the same type and capacity are interchangeable.)")
    out += ["", "**Stops:**"]
    out += [_stop_line(d, k) for k in range(1, len(d.stops) + 1)]
    label = "Distances (read as travel minutes)" if imported else "Travel minutes"
    source = "" if imported else " (shortest driving times over the street network)"
    out += ["", f"**{label}** from the row's place to the column's place{source}:"]
    heads = ["", d.depot if not imported else "1", *(s.id for s in d.stops)]
    out.append("| " + " | ".join(heads) + " |")
    out.append("|" + "---|" * len(heads))
    names = [heads[1], *(s.id for s in d.stops)]
    for name, row in zip(names, d.minutes):
        out.append("| " + " | ".join([name, *(str(x) for x in row)]) + " |")
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; change as few stops as you can):"]
        current = dl.current_routes(changes)
        for v in d.vehicles:
            order = _order(d, current, v.id)
            if order:
                out.append(f"- {v.id}: {' → '.join(order)}")
    return out


def _order(d: DeliveryData, current: dict[str, tuple[str, str]], vehicle: str) -> list[str]:
    """A vehicle's stops in order, rebuilt from each stop's predecessor (reloads shown)."""
    mine = {s: before for s, (v, before) in current.items() if v == vehicle}
    after: dict[str, list[str]] = {}
    for s, before in mine.items():
        after.setdefault(before, []).append(s)
    order: list[str] = []
    at = d.depot
    while after.get(at):
        nxt = after[at].pop(0)
        if at == d.depot and order:
            order.append(RELOAD)
        order.append(nxt)
        at = nxt
        if not after.get(at):
            at = d.depot
    return order


@TEXT.verification
def _verification(d: DeliveryData) -> str:
    return (
        "under `verification`, report from your plan `travel` (for every vehicle, its travel minutes; 0 if unused) "
        "and `back` (for every vehicle, the minute it is back at the depot for good; 0 if unused)."
    )
