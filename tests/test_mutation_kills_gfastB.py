"""Behaviours the mutation campaigns over round 2 of faster grading (gfastB: the routing and
project checkers) found untested: one behaviour per test, each plan built inside its test
(a plan keeps the figures it was first judged with, so a plan built at import would keep
those of the unmutated code)."""

from __future__ import annotations

from pbsolve.checkers.project import power as pw
from pbsolve.checkers.routing import commuting as cm
from pbsolve.params import NoParams
from tests.test_project_power_dispatch_planning import DATA as POWER


# -- checkers/project/power.py ---------------------------------------------------------------
def _power_plan(u1: tuple[int, ...], u2: tuple[int, ...], flows: tuple[int, ...] = (0, 0, 0)) -> pw.Plan:
    return pw.Plan({"U1": u1, "U2": u2}, flows)


def _read_power(hour0: dict) -> tuple[object, str]:
    """A dispatch with U1 (2, 2, 0), U2 (0, 2, 1) and battery (0, 0, -1), hour 0's row updated with ``hour0``."""
    rows = [
        {"hour": 0, "output": {"U1": 2, "U2": 0}, "battery": 0},
        {"hour": 1, "output": {"U1": 2, "U2": 2}, "battery": 0},
        {"hour": 2, "output": {"U1": 0, "U2": 1}, "battery": -1},
    ]
    rows[0].update(hour0)
    tc = pw.PowerDispatch()
    return tc.read_plan(POWER, {"dispatch": rows}, tc.lookups(POWER), [])


class _Whole(int):
    """An int of another type, as a caller handing the grader a dict could pass."""


def test_power_renewable_output_is_used_up_to_the_demand_the_units_and_battery_leave():
    p = _power_plan((0, 2, 0), (0, 1, 0), (-1, 0, 1))  # wind 1, 0, 2 MW; demand 3, 4, 2 MW
    assert [pw.renewable_used(POWER, p, h) for h in range(3)] == [1, 0, 1]
    assert [pw.shed(POWER, p, h) for h in range(3)] == [3, 1, 0]
    assert [pw.curtailed(POWER, p, h) for h in range(3)] == [0, 0, 1]


def test_power_spare_capacity_counts_the_units_on_but_the_one_left_out():
    p = _power_plan((1, 0, 2), (1, 2, 0))  # U1 at most 2 MW, U2 at most 3 MW
    assert [pw.spare(POWER, p, h) for h in range(3)] == [3, 1, 0]
    assert pw.spare(POWER, p, 0, without="U1") == 2
    assert pw.spare(POWER, p, 0, without="U2") == 1
    assert pw.spare(POWER, p, 1, without="U1") == 1  # U1 is off in hour 1: nothing to leave out
    assert pw.spare(POWER, p, 0, without="battery") == 3


def test_power_a_unit_restarting_at_one_mw_within_its_minimum_down_time_breaks_it():
    p = _power_plan((0, 0, 0), (1, 0, 1))  # U2: minimum down time 2 h
    assert pw.CHECKS["min_down_time"](POWER, p, NoParams()) == (
        False,
        "U2 stops in hour 1 and runs in hour 2 (minimum down time 2 h)",
    )


def test_power_a_unit_output_given_as_text_is_refused():
    assert _read_power({"output": {"U1": "2", "U2": 0}}) == (None, "hour 0: U1 needs an integer output from 0 to 2 MW")


def test_power_a_unit_output_given_as_a_float_is_refused():
    assert _read_power({"output": {"U1": 2.0, "U2": 0}}) == (None, "hour 0: U1 needs an integer output from 0 to 2 MW")


def test_power_a_battery_flow_given_as_text_is_refused():
    assert _read_power({"battery": "0"}) == (None, "hour 0 needs an integer 'battery' flow")


def test_power_outputs_and_flows_of_an_int_type_are_read_as_plain_ints():
    plan, why = _read_power({"output": {"U1": _Whole(2), "U2": _Whole(0)}, "battery": _Whole(0)})
    assert why == "complete plan"
    assert plan == _power_plan((2, 2, 0), (0, 2, 1), (0, 0, -1))
    assert isinstance(plan, pw.Plan)
    assert type(plan.output["U1"][0]) is int and type(plan.battery[0]) is int


# -- checkers/routing/commuting.py -----------------------------------------------------------
def test_commuting_a_time_written_without_its_leading_zero_is_read_by_the_pattern():
    assert cm.read_clock("7:05") == 425


def test_commuting_a_time_with_spaces_around_it_is_read_by_the_pattern():
    assert cm.read_clock(" 08:15 ") == 495


def test_commuting_a_time_of_hour_24_written_without_padding_is_no_time():
    assert cm.read_clock("24:00") is None and cm.read_clock(" 9:60") is None
