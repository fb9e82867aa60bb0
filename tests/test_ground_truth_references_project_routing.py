"""Project and routing: a hand-written instance whose rules or objective terms name what its
data lacks (an activity, item, job, unit, slot, commuter, stop, vehicle, sight, flow, road ...)
is refused as a ground truth naming the rule and the name, instead of crashing the checker
mid-grade or being graded against a rule about nothing (``Params.data_problems``).

Also the conditions the names alone cannot say: a traffic rule's road must be a road of the
network, and a ``changes`` term's current plan must cover what its figure compares.

Instances are generated (small, seed 0 or 3) and certified once per process."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from pbsolve.checkers.project import activities as pa
from pbsolve.checkers.project import budget as bu
from pbsolve.checkers.project import job_shop as js
from pbsolve.checkers.project import maintenance as mt
from pbsolve.checkers.project import power as pw
from pbsolve.checkers.project import production as pr
from pbsolve.checkers.project import warehouse as wh
from pbsolve.checkers.routing import commuting as cm
from pbsolve.checkers.routing import delivery as dl
from pbsolve.checkers.routing import dispatch as dp
from pbsolve.checkers.routing import itinerary as it
from pbsolve.checkers.routing import traffic as tr
from pbsolve.family import checker
from pbsolve.grading import grade
from pbsolve.llm.responders import oracle
from pbsolve.params import Params
from pbsolve.schema import Instance
from tests.instances import find
from tests.reference_helpers import refusal, with_params

REPLAN = ("min_change_replanning",)


@cache
def _instance(task: str, include: tuple[str, ...] = ()) -> Instance:
    inst = find(task, 3 if include else 0, include=include)
    assert inst is not None, f"no certified {task} instance with {include}"
    return inst


@cache
def _data(task: str) -> Any:
    inst = _instance(task)
    return checker(inst.family).read_data(inst)


def _no_road(d: tr.TrafficData) -> tuple[str, str]:
    """Two places of the network that no road joins (a place and itself if every two are joined)."""
    places = d.network.places
    return next(
        ((a, b) for a, b in itertools.combinations(places, 2) if d.network.road(a, b) is None), (places[0],) * 2
    )


def _road(d: tr.TrafficData) -> tuple[str, str]:
    r = d.network.roads[0]
    return (r.a, r.b)


# -- every parameter model that names data: an unknown name is one problem, naming it ----------
Case = tuple[str, Callable[[Any], Params], str]
P = pytest.param
CASES = [
    # project planning (activities)
    P("project_planning", lambda d: pa.Deadline(activities=[d.activities[0].id, "A?"], day=3), "unknown activity 'A?'", id="pa.Deadline"),
    P("project_planning", lambda d: pa.TimeWindow(activity="A?", earliest=0, latest=3), "unknown activity 'A?'", id="pa.TimeWindow"),
    P("project_planning", lambda d: pa.ResourceOutage(resource="R?", first=0, last=1, units=1), "unknown resource 'R?'", id="pa.ResourceOutage"),
    P("project_planning", lambda d: pa.MaxLag(before="A?", after=d.activities[0].id, lag=1), "unknown activity 'A?'", id="pa.MaxLag.before"),
    P("project_planning", lambda d: pa.MaxLag(before=d.activities[0].id, after="A?", lag=1), "unknown activity 'A?'", id="pa.MaxLag.after"),
    P("project_planning", lambda d: pa.NoOverlap(pairs=[(d.activities[0].id, "A?")]), "unknown activity 'A?'", id="pa.NoOverlap"),
    P("project_planning", lambda d: pa.SynchronisedStart(activities=("A?", d.activities[0].id), max_gap=1), "unknown activity 'A?'", id="pa.SynchronisedStart"),
    P("project_planning", lambda d: pa.WorkToDate(resource="R?", day=2, max=1), "unknown resource 'R?'", id="pa.WorkToDate"),
    P("project_planning", lambda d: pa.SpareUnit(resources=["R?"]), "unknown resource 'R?'", id="pa.SpareUnit"),
    P("project_planning", lambda d: pa.NotBefore(activity="A?", day=1), "unknown activity 'A?'", id="pa.NotBefore"),
    # financial budgeting
    P("financial_budgeting", lambda d: bu.MinFunding(item="I?", amount=1), "unknown item 'I?'", id="bu.MinFunding"),
    P("financial_budgeting", lambda d: bu.ItemPeriodCap(item="I?", max=1), "unknown item 'I?'", id="bu.ItemPeriodCap"),
    P("financial_budgeting", lambda d: bu.StartPeriod(item="I?", period=1), "unknown item 'I?'", id="bu.StartPeriod"),
    P("financial_budgeting", lambda d: bu.SpendBy(item="I?", period=1), "unknown item 'I?'", id="bu.SpendBy"),
    P("financial_budgeting", lambda d: bu.AllOrNothing(items=[d.items[0].id, "I?"]), "unknown item 'I?'", id="bu.AllOrNothing"),
    P("financial_budgeting", lambda d: bu.Dependency(item=d.items[0].id, requires="I?"), "unknown item 'I?'", id="bu.Dependency"),
    P("financial_budgeting", lambda d: bu.Exclusive(items=(d.items[0].id, "I?")), "unknown item 'I?'", id="bu.Exclusive"),
    P("financial_budgeting", lambda d: bu.Ramp(item="I?", max_change=1), "unknown item 'I?'", id="bu.Ramp"),
    P("financial_budgeting", lambda d: bu.GroupCap(items=["I?"], max=1), "unknown item 'I?'", id="bu.GroupCap"),
    P("financial_budgeting", lambda d: bu.SpendThreshold(item="I?", threshold=1, cap=1), "unknown item 'I?'", id="bu.SpendThreshold"),
    P("financial_budgeting", lambda d: bu.Freeze(item="I?", period=1), "unknown item 'I?'", id="bu.Freeze"),
    # resource scheduling (job shop)
    P("resource_scheduling", lambda d: js.Deadline(jobs=["J?"], by=9), "unknown job 'J?'", id="js.Deadline"),
    P("resource_scheduling", lambda d: js.Downtime(machine="M?", start=0, end=5), "unknown machine 'M?'", id="js.Downtime"),
    P("resource_scheduling", lambda d: js.NotBefore(op="O?", at=1), "unknown operation 'O?'", id="js.NotBefore"),
    P("resource_scheduling", lambda d: js.MinLag(ops=["O?"], minutes=1), "unknown operation 'O?'", id="js.MinLag"),
    P("resource_scheduling", lambda d: js.MaxWait(jobs=["J?"], minutes=1), "unknown job 'J?'", id="js.MaxWait"),
    P("resource_scheduling", lambda d: js.JobAfter(pairs=[(d.jobs[0].id, "J?")]), "unknown job 'J?'", id="js.JobAfter"),
    P("resource_scheduling", lambda d: js.MachineBuffer(machine="M?", minutes=1), "unknown machine 'M?'", id="js.MachineBuffer"),
    P("resource_scheduling", lambda d: js.Cooldown(machine="M?", longer_than=1, minutes=1), "unknown machine 'M?'", id="js.Cooldown"),
    P("resource_scheduling", lambda d: js.ToolWear(machine="M?", until=5, minutes=1), "unknown machine 'M?'", id="js.ToolWear"),
    # IT system maintenance
    P("it_system_maintenance_planning", lambda d: mt.Precedence(pairs=[("T?", d.tasks[0].id)]), "unknown task 'T?'", id="mt.Precedence"),
    P("it_system_maintenance_planning", lambda d: mt.Deadline(tasks=["T?"], by=5), "unknown task 'T?'", id="mt.Deadline"),
    P("it_system_maintenance_planning", lambda d: mt.NotBefore(task="T?", at=1), "unknown task 'T?'", id="mt.NotBefore"),
    P("it_system_maintenance_planning", lambda d: mt.Rollback(tasks=["T?"], hours=1), "unknown task 'T?'", id="mt.Rollback"),
    P("it_system_maintenance_planning", lambda d: mt.NotTogether(pairs=[(d.tasks[0].id, "T?")]), "unknown task 'T?'", id="mt.NotTogether"),
    P("it_system_maintenance_planning", lambda d: mt.Uptime(service="S?", start=0, end=2), "unknown service 'S?'", id="mt.Uptime"),
    P("it_system_maintenance_planning", lambda d: mt.DowntimeBudget(service="S?", hours=1), "unknown service 'S?'", id="mt.DowntimeBudget"),
    P("it_system_maintenance_planning", lambda d: mt.Specialists(skill="K?", max=1), "unknown skill 'K?'", id="mt.Specialists"),
    # power dispatch
    P("power_dispatch_planning", lambda d: pw.MustRun(units=["U?"]), "unknown unit 'U?'", id="pw.MustRun"),
    P("power_dispatch_planning", lambda d: pw.UnitOutage(unit="U?", first=0, last=1), "unknown unit 'U?'", id="pw.UnitOutage"),
    P("power_dispatch_planning", lambda d: pw.FuelLimit(unit="U?", mwh=1), "unknown unit 'U?'", id="pw.FuelLimit"),
    P("power_dispatch_planning", lambda d: pw.MaxStarts(unit="U?", max=1), "unknown unit 'U?'", id="pw.MaxStarts"),
    P("power_dispatch_planning", lambda d: pw.Derate(unit="U?", first=0, last=1, mw=1), "unknown unit 'U?'", id="pw.Derate"),
    # production planning
    P("production_planning", lambda d: pr.LineDowntime(line="L?", first=1, last=1), "unknown line 'L?'", id="pr.LineDowntime"),
    P("production_planning", lambda d: pr.MinLot(product="P?", lots=1), "unknown product 'P?'", id="pr.MinLot"),
    P("production_planning", lambda d: pr.ForbiddenSuccession(first="P?", then=d.products[0].id), "unknown product 'P?'", id="pr.ForbiddenSuccession.first"),
    P("production_planning", lambda d: pr.ForbiddenSuccession(first=d.products[0].id, then="P?"), "unknown product 'P?'", id="pr.ForbiddenSuccession.then"),
    P("production_planning", lambda d: pr.MaxRuns(product="P?", max=1), "unknown product 'P?'", id="pr.MaxRuns"),
    P("production_planning", lambda d: pr.SafetyStock(product="P?", first=1, min=1), "unknown product 'P?'", id="pr.SafetyStock"),
    P("production_planning", lambda d: pr.CapacityReserve(lines=["L?"]), "unknown line 'L?'", id="pr.CapacityReserve"),
    P("production_planning", lambda d: pr.CurrentRuns(existing=[("L?", 1, d.products[0].id, 1)]), "unknown line 'L?'", id="pr.CurrentRuns.line"),
    P("production_planning", lambda d: pr.CurrentRuns(existing=[(d.lines[0].id, 1, "P?", 1)]), "unknown product 'P?'", id="pr.CurrentRuns.product"),
    # warehouse planning
    P("warehouse_planning", lambda d: wh.Chilled(items=["I?"]), "unknown item 'I?'", id="wh.Chilled"),
    P("warehouse_planning", lambda d: wh.ReservedSlots(slots=["S?"]), "unknown slot 'S?'", id="wh.ReservedSlots"),
    P("warehouse_planning", lambda d: wh.HazardZone(classes=("1.1", "7")), "unknown hazard class '1.1', '7'", id="wh.HazardZone"),
    P("warehouse_planning", lambda d: wh.SecureZone(items=["I?"], zone=d.zones[0].id), "unknown item 'I?'", id="wh.SecureZone.items"),
    P("warehouse_planning", lambda d: wh.SecureZone(items=[d.items[0].id], zone="Z?"), "unknown zone 'Z?'", id="wh.SecureZone.zone"),
    P("warehouse_planning", lambda d: wh.Affinity(pairs=[(d.items[0].id, "I?")], max_aisles=1), "unknown item 'I?'", id="wh.Affinity"),
    P("warehouse_planning", lambda d: wh.HazardDistance(classes=("7", "7"), min_aisles=1), "unknown hazard class '7'", id="wh.HazardDistance"),
    P("warehouse_planning", lambda d: wh.SameZone(groups=[[d.items[0].id, "I?"]]), "unknown item 'I?'", id="wh.SameZone"),
    P("warehouse_planning", lambda d: wh.LoadThreshold(zone="Z?", threshold=1, level=1), "unknown zone 'Z?'", id="wh.LoadThreshold"),
    P("warehouse_planning", lambda d: wh.SpareSlot(zones=["Z?"]), "unknown zone 'Z?'", id="wh.SpareSlot"),
    P("warehouse_planning", lambda d: wh.SlotClosed(slot="S?"), "unknown slot 'S?'", id="wh.SlotClosed"),
    P("warehouse_planning", lambda d: wh.CurrentSlots(existing={**{i.id: d.slots[0].id for i in d.items}, "I?": d.slots[0].id}), "unknown item 'I?'", id="wh.CurrentSlots.item"),
    P("warehouse_planning", lambda d: wh.CurrentSlots(existing={i.id: "S?" for i in d.items}), "unknown slot 'S?'", id="wh.CurrentSlots.slot"),
    # commuting
    P("commuting_planning", lambda d: cm.Commuters(commuters=["C?"], max=1), "unknown commuter 'C?'", id="cm.Commuters"),
    P("commuting_planning", lambda d: cm.Buffer(commuters=["C?"], minutes=1), "unknown commuter 'C?'", id="cm.Buffer"),
    P("commuting_planning", lambda d: cm.ArrivalOrder(pairs=[(d.commuters[0].id, "C?")], gap=1), "unknown commuter 'C?'", id="cm.ArrivalOrder"),
    P("commuting_planning", lambda d: cm.Pair(first="C?", second=d.commuters[0].id), "unknown commuter 'C?'", id="cm.Pair"),
    P("commuting_planning", lambda d: cm.Escorts(pairs=[("C?", d.commuters[0].id)]), "unknown commuter 'C?'", id="cm.Escorts"),
    P("commuting_planning", lambda d: cm.ViaStop(commuter="C?", stop=d.network.places[0]), "unknown commuter 'C?'", id="cm.ViaStop.commuter"),
    P("commuting_planning", lambda d: cm.ViaStop(commuter=d.commuters[0].id, stop="X?"), "unknown stop 'X?'", id="cm.ViaStop.stop"),
    P("commuting_planning", lambda d: cm.Cancelled(line="L?", departure=480), "unknown line 'L?'", id="cm.Cancelled"),
    P("commuting_planning", lambda d: cm.ClosedStop(stop="X?"), "unknown stop 'X?'", id="cm.ClosedStop"),
    P("commuting_planning", lambda d: cm.Parking(stops=["X?"]), "unknown park-and-ride stop 'X?'", id="cm.Parking"),
    P("commuting_planning", lambda d: cm.CurrentTrips(existing={"C?": [["walk", d.network.places[0]]]}), "unknown commuter 'C?'", id="cm.CurrentTrips"),
    # logistics delivery
    P("logistics_delivery_planning", lambda d: dl.StopDeadline(stops=["X?"], by=5), "unknown stop 'X?'", id="dl.StopDeadline"),
    P("logistics_delivery_planning", lambda d: dl.FirstStop(stop="X?"), "unknown stop 'X?'", id="dl.FirstStop"),
    P("logistics_delivery_planning", lambda d: dl.Precedence(pairs=[(d.stops[0].id, "X?")]), "unknown stop 'X?'", id="dl.Precedence"),
    P("logistics_delivery_planning", lambda d: dl.SameVehicle(stops=["X?"]), "unknown stop 'X?'", id="dl.SameVehicle"),
    P("logistics_delivery_planning", lambda d: dl.DifferentVehicle(pairs=[("X?", d.stops[0].id)]), "unknown stop 'X?'", id="dl.DifferentVehicle"),
    P("logistics_delivery_planning", lambda d: dl.LoadLimit(stop="X?", max=1), "unknown stop 'X?'", id="dl.LoadLimit"),
    P("logistics_delivery_planning", lambda d: dl.VehicleOff(vehicle="V?"), "unknown vehicle 'V?'", id="dl.VehicleOff"),
    P("logistics_delivery_planning", lambda d: dl.CurrentRoutes(existing={s.id: ("V?", d.depot) for s in d.stops}), "unknown vehicle 'V?'", id="dl.CurrentRoutes.vehicle"),
    P("logistics_delivery_planning", lambda d: dl.CurrentRoutes(existing={s.id: (d.vehicles[0].id, "X?") for s in d.stops}), "unknown stop or depot 'X?'", id="dl.CurrentRoutes.before"),
    # transportation dispatch
    P("transportation_dispatch_planning", lambda d: dp.HardDeadline(jobs=["J?"]), "unknown job 'J?'", id="dp.HardDeadline"),
    P("transportation_dispatch_planning", lambda d: dp.SameVehicle(jobs=[d.jobs[0].id, "J?"]), "unknown job 'J?'", id="dp.SameVehicle"),
    P("transportation_dispatch_planning", lambda d: dp.DifferentVehicle(pairs=[(d.jobs[0].id, "J?")]), "unknown job 'J?'", id="dp.DifferentVehicle"),
    P("transportation_dispatch_planning", lambda d: dp.DirectStart(jobs=["J?"]), "unknown job 'J?'", id="dp.DirectStart"),
    P("transportation_dispatch_planning", lambda d: dp.FleetCap(type="T?", max=1), "unknown vehicle type 'T?'", id="dp.FleetCap"),
    P("transportation_dispatch_planning", lambda d: dp.SpareVehicle(types=["T?"]), "unknown vehicle type 'T?'", id="dp.SpareVehicle"),
    P("transportation_dispatch_planning", lambda d: dp.CurrentRoutes(existing={"V?": [d.jobs[0].id]}), "unknown vehicle 'V?'", id="dp.CurrentRoutes.vehicle"),
    P("transportation_dispatch_planning", lambda d: dp.CurrentRoutes(existing={d.vehicles[0].id: ["J?"]}), "unknown job 'J?'", id="dp.CurrentRoutes.job"),
    # travel itinerary
    P("travel_itinerary_planning", lambda d: it.MustSee(sights=["S?"]), "unknown sight 'S?'", id="it.MustSee"),
    P("travel_itinerary_planning", lambda d: it.Precedence(pairs=[(d.sights[0].id, "S?")]), "unknown sight 'S?'", id="it.Precedence"),
    P("travel_itinerary_planning", lambda d: it.SameDay(sights=("S?", d.sights[0].id)), "unknown sight 'S?'", id="it.SameDay"),
    P("travel_itinerary_planning", lambda d: it.CategoryCap(category="K?", max=1), "unknown category 'K?'", id="it.CategoryCap"),
    P("travel_itinerary_planning", lambda d: it.SightClosure(sight="S?", days=[d.days[0].id]), "unknown sight 'S?'", id="it.SightClosure.sight"),
    P("travel_itinerary_planning", lambda d: it.SightClosure(sight=d.sights[0].id, days=["D?"]), "unknown day 'D?'", id="it.SightClosure.days"),
    P("travel_itinerary_planning", lambda d: it.CurrentTrip(existing={"D?": []}), "unknown day 'D?'", id="it.CurrentTrip.day"),
    P("travel_itinerary_planning", lambda d: it.CurrentTrip(existing={d.days[0].id: ["S?"]}), "unknown sight or stop 'S?'", id="it.CurrentTrip.stop"),
    # urban traffic
    P("urban_traffic_planning", lambda d: tr.RoadClosure(roads=[_road(d)], periods=["P?"]), "unknown period 'P?'", id="tr.RoadClosure.periods"),
    P("urban_traffic_planning", lambda d: tr.RoadClosure(roads=[("X?", d.network.places[0])], periods=[]), "unknown place 'X?'", id="tr.RoadClosure.roads"),
    P("urban_traffic_planning", lambda d: tr.PriorityBound(flows=["F?"], minutes=5), "unknown flow 'F?'", id="tr.PriorityBound"),
    P("urban_traffic_planning", lambda d: tr.ZoneLimit(place="X?", max=1), "unknown place 'X?'", id="tr.ZoneLimit"),
    P("urban_traffic_planning", lambda d: tr.RouteBan(flows=["F?"], roads=[_road(d)]), "unknown flow 'F?'", id="tr.RouteBan"),
    P("urban_traffic_planning", lambda d: tr.MainRouteShare(flows=["F?"], percent=50), "unknown flow 'F?'", id="tr.MainRouteShare"),
    P("urban_traffic_planning", lambda d: tr.CorridorBalance(first=_road(d), second=("X?", d.network.places[0]), max=1), "unknown place 'X?'", id="tr.CorridorBalance"),
    P("urban_traffic_planning", lambda d: tr.ExposureBudget(roads=[("X?", d.network.places[0])], max=1), "unknown place 'X?'", id="tr.ExposureBudget"),
    P("urban_traffic_planning", lambda d: tr.IncidentBackup(roads=[("X?", d.network.places[0])]), "unknown place 'X?'", id="tr.IncidentBackup"),
    P("urban_traffic_planning", lambda d: tr.CurrentFlows(existing=[("R?", d.periods[0], 1)]), "unknown route 'R?'", id="tr.CurrentFlows.route"),
    P("urban_traffic_planning", lambda d: tr.CurrentFlows(existing=[(d.routes[0].id, "P?", 1)]), "unknown period 'P?'", id="tr.CurrentFlows.period"),
]  # fmt: skip


@pytest.mark.parametrize(("task", "build", "problem"), CASES)
def test_a_parameter_naming_what_the_data_lacks_is_one_problem_naming_it(
    task: str, build: Callable[[Any], Params], problem: str
):
    d = _data(task)
    assert build(d).data_problems(d) == [problem]


# -- overrides: what the names alone cannot say -------------------------------------------------
ROAD_RULES: list[Callable[[tuple[str, str], tuple[str, str]], Params]] = [
    lambda road, bad: tr.RoadClosure(roads=[road, bad], periods=[]),
    lambda road, bad: tr.RouteBan(flows=[], roads=[road, bad]),
    lambda road, bad: tr.CorridorBalance(first=road, second=bad, max=1),
    lambda road, bad: tr.ExposureBudget(roads=[bad, road], max=1),
    lambda road, bad: tr.IncidentBackup(roads=[bad]),
]


@pytest.mark.parametrize(
    "build", ROAD_RULES, ids=["RoadClosure", "RouteBan", "CorridorBalance", "ExposureBudget", "IncidentBackup"]
)
def test_a_traffic_rule_naming_two_places_no_road_joins_is_refused_naming_the_road(build: Callable[..., Params]):
    d = _data("urban_traffic_planning")
    a, b = _no_road(d)
    assert build(_road(d), (a, b)).data_problems(d) == [f"unknown road '{a}–{b}'"]


def test_a_traffic_rule_naming_real_roads_has_no_problem():
    d = _data("urban_traffic_planning")
    last = d.network.roads[-1]
    assert [build(_road(d), (last.b, last.a)).data_problems(d) for build in ROAD_RULES] == [[]] * len(ROAD_RULES)


def test_an_unknown_place_in_a_road_is_reported_once_as_a_place_not_again_as_a_road():
    d = _data("urban_traffic_planning")
    assert tr.RoadClosure(roads=[("X?", "Y?")], periods=[]).data_problems(d) == ["unknown place 'X?', 'Y?'"]


SELF_PAIRS = [
    P("project_planning", lambda d: pa.MaxLag(before=d.activities[0].id, after=d.activities[0].id, lag=1),
      lambda d: d.activities[0].id, "activities", id="pa.MaxLag"),
    P("project_planning", lambda d: pa.SynchronisedStart(activities=(d.activities[0].id,) * 2, max_gap=1),
      lambda d: d.activities[0].id, "activities", id="pa.SynchronisedStart"),
    P("financial_budgeting", lambda d: bu.Dependency(item=d.items[0].id, requires=d.items[0].id),
      lambda d: d.items[0].id, "items", id="bu.Dependency"),
    P("commuting_planning", lambda d: cm.ArrivalOrder(pairs=[(d.commuters[0].id,) * 2], gap=0),
      lambda d: d.commuters[0].id, "commuters", id="cm.ArrivalOrder"),
    P("commuting_planning", lambda d: cm.Pair(first=d.commuters[0].id, second=d.commuters[0].id),
      lambda d: d.commuters[0].id, "commuters", id="cm.Pair"),
    P("commuting_planning", lambda d: cm.Escorts(pairs=[(d.commuters[0].id,) * 2]),
      lambda d: d.commuters[0].id, "commuters", id="cm.Escorts"),
    P("warehouse_planning", lambda d: wh.Affinity(pairs=[(d.items[0].id,) * 2], max_aisles=1),
      lambda d: d.items[0].id, "items", id="wh.Affinity"),
    P("travel_itinerary_planning", lambda d: it.SameDay(sights=(d.sights[0].id,) * 2),
      lambda d: d.sights[0].id, "sights", id="it.SameDay"),
]  # fmt: skip


@pytest.mark.parametrize(("task", "build", "name", "what"), SELF_PAIRS)
def test_a_pair_naming_one_thing_twice_is_refused_as_a_rule_that_always_holds(
    task: str, build: Callable[[Any], Params], name: Callable[[Any], str], what: str
):
    d = _data(task)
    assert build(d).data_problems(d) == [f"{name(d)!r} is paired with itself: the rule needs two different {what}"]


def test_a_corridor_balance_of_a_road_with_itself_is_refused_in_either_spelling():
    d = _data("urban_traffic_planning")
    a, b = _road(d)
    assert tr.CorridorBalance(first=(a, b), second=(b, a), max=1).data_problems(d) == [
        f"the road {a}–{b} is paired with itself: the rule needs two different roads"
    ]


def test_a_min_lag_after_the_last_operation_of_a_job_is_refused():
    d = _data("resource_scheduling")
    last = d.jobs[0].ops[-1].id
    assert js.MinLag(ops=[last], minutes=1).data_problems(d) == [
        f"operation {last!r} is the last of its job: there is no next operation"
    ]


def test_a_min_lag_after_an_operation_with_a_next_one_has_no_problem():
    d = _data("resource_scheduling")
    job = next(j for j in d.jobs if len(j.ops) > 1)
    assert js.MinLag(ops=[job.ops[0].id], minutes=1).data_problems(d) == []


def test_a_max_wait_on_a_job_of_one_operation_is_refused():
    d = _data("resource_scheduling")
    lone = js.Job(id="J-lone", name="lone", ops=(js.Op(id="O-lone", machine=d.machines[0].id, duration=1),))
    d = js.replaced(d, jobs=(*d.jobs, lone))
    assert js.MaxWait(jobs=["J-lone"], minutes=1).data_problems(d) == [
        "job 'J-lone' has one operation: there is no wait between operations"
    ]


def test_a_cancelled_departure_the_line_does_not_have_is_refused():
    d = _data("commuting_planning")
    line = d.lines[0]
    late = line.departures[-1] + 1
    assert cm.Cancelled(line=line.id, departure=late).data_problems(d) == [
        f"{line.id} has no departure at {cm.clock(late)}"
    ]
    assert cm.Cancelled(line=line.id, departure=line.departures[0]).data_problems(d) == []


def _coverage_cases() -> list[Any]:
    """(task, current plan missing its first entry, expected problem) for the changes terms
    whose figure looks every entry up (a KeyError mid-grade before)."""
    return [
        P("project_planning", lambda d: pa.CurrentStarts(existing={a.id: 0 for a in d.activities[1:]}),
          lambda d: f"the current plan has no start day for activity {d.activities[0].id!r}", id="pa.CurrentStarts"),
        P("resource_scheduling", lambda d: js.CurrentStarts(existing={o.id: 0 for o in d.ops[1:]}),
          lambda d: f"the current plan has no start minute for operation {d.ops[0].id!r}", id="js.CurrentStarts"),
        P("it_system_maintenance_planning", lambda d: mt.CurrentStarts(existing={t.id: 0 for t in d.tasks[1:]}),
          lambda d: f"the current plan has no start hour for task {d.tasks[0].id!r}", id="mt.CurrentStarts"),
        P("warehouse_planning", lambda d: wh.CurrentSlots(existing={i.id: d.slots[0].id for i in d.items[1:]}),
          lambda d: f"the current plan has no slot for item {d.items[0].id!r}", id="wh.CurrentSlots"),
        P("logistics_delivery_planning",
          lambda d: dl.CurrentRoutes(existing={s.id: (d.vehicles[0].id, d.depot) for s in d.stops[1:]}),
          lambda d: f"the current plan has no vehicle and predecessor for stop {d.stops[0].id!r}", id="dl.CurrentRoutes"),
        P("financial_budgeting",
          lambda d: bu.CurrentAmounts(existing={i.id: [0] * (d.periods - (k == 0)) for k, i in enumerate(d.items)}),
          lambda d: f"the current plan does not have {d.periods} amounts (one per period) for item {d.items[0].id!r}",
          id="bu.CurrentAmounts"),
        P("power_dispatch_planning",
          lambda d: pw.CurrentDispatch(existing={u.id: [0] * (d.hours - (k == 0)) for k, u in enumerate(d.units)}),
          lambda d: f"the current plan does not have {d.hours} hourly figures for {d.units[0].id!r}",
          id="pw.CurrentDispatch"),
    ]  # fmt: skip


@pytest.mark.parametrize(("task", "build", "problem"), _coverage_cases())
def test_a_current_plan_that_leaves_something_out_is_refused_naming_it(
    task: str, build: Callable[[Any], Params], problem: Callable[[Any], str]
):
    d = _data(task)
    assert build(d).data_problems(d) == [problem(d)]


def test_a_power_plan_naming_a_battery_the_data_lacks_is_an_unknown_name():
    d = _data("power_dispatch_planning")
    plan = {u.id: [0] * d.hours for u in d.units}
    known = pw.CurrentDispatch(existing={**plan, pw.BATTERY: [0] * d.hours}).data_problems(d)
    assert known == ([] if d.battery else ["unknown unit or battery 'battery'"])


def test_a_complete_current_plan_has_no_problem():
    d = _data("power_dispatch_planning")
    assert pw.CurrentDispatch(existing={u.id: [0] * d.hours for u in d.units}).data_problems(d) == []


# -- no false alarm: generated instances name only what their data has --------------------------
TASKS = [
    "project_planning", "financial_budgeting", "resource_scheduling", "it_system_maintenance_planning",
    "power_dispatch_planning", "production_planning", "warehouse_planning", "commuting_planning",
    "logistics_delivery_planning", "transportation_dispatch_planning", "travel_itinerary_planning",
    "urban_traffic_planning",
]  # fmt: skip


@pytest.mark.parametrize("task", TASKS)
def test_a_generated_instance_and_its_replanning_variant_name_only_what_their_data_has(task: str):
    for inst in (_instance(task), _instance(task, REPLAN)):
        module = checker(inst.family)
        rules, terms = module.known_kinds(inst.task)
        data = module.read_data(inst)
        for table, items in ((rules, inst.rules), (terms, inst.objective)):
            for item in items:
                assert table[item.kind].model_validate(item.params).data_problems(data) == [], (inst.id, item.id)


# -- the grader: refused before any answer is graded, naming the rule and the name -------------
@pytest.mark.parametrize(
    ("task", "kinds"),
    [
        ("project_planning", ("deadline", "time_window", "no_overlap", "max_lag", "not_before")),
        ("logistics_delivery_planning", ("stop_deadline", "first_stop", "precedence", "same_vehicle")),
        ("commuting_planning", ("walk_limit", "fare_cap", "max_transfers", "buffer", "arrival_order", "shared_ride")),
        ("warehouse_planning", ("chilled", "secure_zone", "reserved_slots", "affinity", "same_zone", "slot_closed")),
        ("transportation_dispatch_planning", ("hard_deadline", "same_vehicle", "different_vehicle", "direct_start")),
    ],
)
def test_a_rule_naming_an_unknown_thing_is_refused_by_the_grader_naming_rule_and_name(
    task: str, kinds: tuple[str, ...]
):
    inst = _instance(task)
    rule = next((r for r in inst.rules if r.kind in kinds), None)
    if rule is None:
        pytest.skip(f"the {task} instance has none of {kinds}")
    field, value = next((k, v) for k, v in rule.params.items() if isinstance(v, (str, list)) and v)
    bad = (
        "Nowhere?"
        if isinstance(value, str)
        else [["Nowhere?", "Nowhere?"]]
        if isinstance(value[0], list)
        else ["Nowhere?"]
    )
    why = refusal(with_params(inst, rule.kind, **{field: bad}))
    assert f"{rule.id} ({rule.kind}): unknown" in why and "'Nowhere?'" in why


def test_a_traffic_rule_on_a_road_that_does_not_exist_is_refused_by_the_grader():
    inst = _instance("urban_traffic_planning")
    d = _data("urban_traffic_planning")
    rule = next(r for r in inst.rules if "roads" in r.params)
    a, b = _no_road(d)
    why = refusal(with_params(inst, rule.kind, roads=[[a, b]]))
    assert f"{rule.id} ({rule.kind}): unknown road '{a}–{b}'" in why


def test_a_changes_term_whose_current_plan_leaves_an_activity_out_is_refused_not_a_crash():
    inst = _instance("project_planning", REPLAN)
    term = next(t for t in inst.objective if t.kind == "changes")
    existing = dict(term.params["existing"])
    left_out = next(iter(existing))
    del existing[left_out]
    why = refusal(with_params(inst, "changes", existing=existing))
    assert f"{term.id} (changes): the current plan has no start day for activity {left_out!r}" in why


@pytest.mark.parametrize("task", ["project_planning", "urban_traffic_planning", "commuting_planning"])
def test_the_unchanged_instances_still_grade(task: str):
    for inst in (_instance(task), _instance(task, REPLAN)):
        assert grade(inst, oracle(inst)).all_pass == 1
