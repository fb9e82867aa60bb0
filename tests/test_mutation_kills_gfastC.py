"""Behaviours the gfastC speed-ups must keep, pinned for the mutation campaigns of the files
they changed: what a read procurement plan keeps beside it (per data object), and the
order of read_plan's refusals for the rows its shortcut leaves to the full tests. Plans and
data are built inside each test (mutmut forks from a process that already ran the tests).
"""

from __future__ import annotations

from pbsolve.checker_kit import MAX_QUANTITY
from pbsolve.checkers.allocation.data import Item, Offer, ProcurementData, Supplier
from pbsolve.checkers.allocation.procurement import TASK, Orders, arrivals, stock_levels
from pbsolve.checkers.scheduling import places as pp
from pbsolve.checkers.scheduling.checks import CHECKS
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, TimetableData
from pbsolve.checking import figures_verdict
from tests.helpers import hour_periods


def _flour(initial: int = 5, lead: int = 1, capacity: int = 20) -> ProcurementData:
    return ProcurementData(
        periods=("W1", "W2", "W3"),
        items=(Item(id="Flour", unit="kg", initial_stock=initial, holding_cost=1, demand=(4, 6, 3)),),
        suppliers=(
            Supplier(
                id="Apex", lead_time=lead, capacity=capacity, fixed_cost=10, offers=(Offer(item="Flour", price=2),)
            ),
            Supplier(id="Borealis", lead_time=0, capacity=10, fixed_cost=0, offers=()),
        ),
    )


def _read(d: ProcurementData, rows: list[dict]) -> tuple[object, str]:
    return TASK.read_plan(d, {"orders": rows}, TASK.lookups(d), [])


def _order(supplier: str, week: str, quantity: object) -> dict:
    return {"supplier": supplier, "item": "Flour", "week": week, "quantity": quantity}


# -- what a read plan keeps ---------------------------------------------------------------------
def test_a_read_plan_keeps_its_stock_levels_apart_for_each_data_object() -> None:
    plan = Orders()
    plan["Apex", "Flour", 0] = 10
    assert stock_levels(_flour(initial=5), plan)["Flour"] == [1, 5, 2]
    assert stock_levels(_flour(initial=9), plan)["Flour"] == [5, 9, 6]


def test_a_read_plan_keeps_its_arrivals_apart_for_each_data_object() -> None:
    plan = Orders()
    plan["Apex", "Flour", 0] = 10
    assert arrivals(_flour(lead=1), plan)["Flour"] == [0, 10, 0]
    assert arrivals(_flour(lead=0), plan)["Flour"] == [10, 0, 0]


# -- read_plan's refusals, in their order -------------------------------------------------------
def test_a_zero_order_of_an_item_the_supplier_does_not_sell_is_refused_for_the_item() -> None:
    assert _read(_flour(), [_order("Borealis", "W1", 0)]) == (None, "Borealis does not sell Flour")


def test_the_largest_quantity_of_an_item_the_supplier_does_not_sell_is_refused_for_the_item() -> None:
    assert _read(_flour(), [_order("Borealis", "W1", MAX_QUANTITY)]) == (None, "Borealis does not sell Flour")


def test_an_order_of_the_full_capacity_arriving_too_late_is_refused_for_its_arrival() -> None:
    assert _read(_flour(capacity=20), [_order("Apex", "W3", 20)]) == (
        None,
        "an order with Apex placed in W3 would arrive after W3",
    )


def test_a_line_read_from_a_whole_float_and_listed_again_is_refused_as_listed_twice() -> None:
    rows = [_order("Apex", "W1", 2.0), _order("Apex", "W1", 3)]
    assert _read(_flour(), rows) == (None, "the order of Flour from Apex in W1 appears more than once")


# -- travel times between places -----------------------------------------------------------------
def _agenda() -> tuple[TimetableData, pp.TravelTime]:
    data = TimetableData(
        time_unit="period",
        days=("Mon", "Tue"),
        slots=hour_periods(),
        rooms=(Room(id="Home", seats=2, cost=0), Room(id="Office", seats=2, cost=1), Room(id="Gym", seats=2, cost=2)),
        people=(Person(id="Sam", role="you"),),
        events=(
            Event(id="A1", name="Report", duration=1, people=("Sam",), size=1),
            Event(id="A2", name="Slides", duration=1, people=("Sam",), size=1),
        ),
    )
    rule = pp.TravelTime(people=["Sam"], home="Home", legs=[pp.TravelLeg(a="Home", b="Office", slots=2)])
    return data, rule


def test_the_travel_time_between_two_listed_places_is_their_leg() -> None:
    _, rule = _agenda()
    assert rule.between("Office", "Home") == 2


def test_the_travel_time_from_a_place_to_itself_is_zero() -> None:
    _, rule = _agenda()
    assert rule.between("Home", "Home") == 0


def test_a_place_with_no_leg_from_home_is_reached_at_once_from_home() -> None:
    """The Gym has no leg from Home: an event there may start in the day's first slot."""
    data, rule = _agenda()
    assert CHECKS["travel_time"](data, {"A1": (0, "Gym"), "A2": (3, "Home")}, rule) == (True, "holds")


# -- stated figures (checking.figures_verdict) ---------------------------------------------------
def test_stated_figures_do_not_read_true_as_one() -> None:
    assert figures_verdict({"busy": {"Sam": True}}, {"busy": {"Sam": 1}}, "verification") == (
        False,
        "'verification.busy.Sam' is True; the plan gives 1",
    )


def test_stated_figures_read_a_whole_float_as_its_integer() -> None:
    assert figures_verdict({"busy": {"Sam": 3.0}}, {"busy": {"Sam": 3}}, "verification") == (
        True,
        "figures match the plan",
    )


def test_stated_figures_name_a_key_that_is_no_string_as_unknown() -> None:
    assert figures_verdict({"busy": {"Sam": 3, 7: 1}}, {"busy": {"Sam": 3}}, "verification") == (
        False,
        "'verification.busy' names unknown ['7']",
    )
