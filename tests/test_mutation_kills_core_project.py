"""Behaviours the mutation campaign over last session's faster grading code found untested
(pbsolve/parsing.py, pbsolve/checking.py, pbsolve/checker_kit.py and the project and
scheduling checkers): one behaviour per test, each a grade or a parse an answer gets."""

from __future__ import annotations

import json

import pytest

from pbsolve.checker_kit import lookup, start_rows
from pbsolve.checkers.project import job_shop as js
from pbsolve.checkers.project import power as pw
from pbsolve.params import NoParams
from pbsolve.parsing import MAX_BARE_DEPTH, Parsed, parse_response
from pbsolve.schema import ObjectiveTerm
from tests.test_project_power_dispatch_planning import DATA as POWER
from tests.test_project_power_dispatch_planning import OK_PLAN
from tests.test_project_power_dispatch_planning import plan as power_plan


def _nested(depth: int) -> dict:
    """An object ``depth`` objects deep."""
    value: dict = {"v": 1}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


# -- pbsolve/parsing.py: the whole-object shortcut -------------------------------------------
def test_an_object_nested_past_the_bare_depth_through_an_array_is_read_to_its_deepest_bare_object():
    # arrays do not count towards the depth (an array inside a nested object keeps its
    # level), so the outer object is one level too deep to be a bare answer: the last bare
    # object is the one inside it
    inner = {"b": [_nested(MAX_BARE_DEPTH - 1)]}
    text = json.dumps({"a": inner})
    assert parse_response(text) == Parsed(value=inner, source="object")


# -- pbsolve/checker_kit.py ----------------------------------------------------------------
def test_a_schedule_missing_many_entities_names_the_first_eight_in_data_order():
    names = [f"T{n}" for n in range(1, 11)]
    got = start_rows({"schedule": []}, "task", "tasks", lookup(names), dict.fromkeys(names, 1), 10, "hour")
    assert got == (None, "tasks missing from the schedule: T1, T2, T3, T4, T5, T6, T7, T8")


# -- checkers/project/power.py: reading a dispatch, figures, reasons -------------------------
def _dispatch(**hour0: object) -> dict:
    """The dispatch of OK_PLAN as an answer section, hour 0's row updated with ``hour0``."""
    rows = [
        {
            "hour": h,
            "output": {"U1": OK_PLAN.output["U1"][h], "U2": OK_PLAN.output["U2"][h]},
            "battery": OK_PLAN.battery[h],
        }
        for h in range(POWER.hours)
    ]
    rows[0].update(hour0)
    return {"dispatch": rows}


def _read(section: dict, data: pw.PowerData = POWER) -> tuple[object, str]:
    tc = pw.PowerDispatch()
    return tc.read_plan(data, section, tc.lookups(data), [])


def test_a_dispatch_as_the_instance_spells_it_reads_to_its_plan():
    assert _read(_dispatch()) == (OK_PLAN, "complete plan")


def test_a_dispatch_naming_units_in_another_case_reads_to_the_same_plan():
    section = _dispatch(output={"u1": 2, " u2 ": 0})
    assert _read(section) == (OK_PLAN, "complete plan")


@pytest.mark.parametrize(
    ("hour0", "reason"),
    [
        ({"hour": 3}, "row 1 needs an integer 'hour' from 0 to 2"),
        ({"hour": True}, "row 1 needs an integer 'hour' from 0 to 2"),
        ({"hour": "0"}, "row 1 needs an integer 'hour' from 0 to 2"),
        ({"output": {"U1": 2, "X9": 1}}, "hour 0 names unknown unit 'X9'"),
        ({"output": {"U1": 2, "Y" * 50: 1}}, f"hour 0 names unknown unit {'Y' * 40!r}"),
        ({"output": {"U1": 2, "U2": 4}}, "hour 0: U2 needs an integer output from 0 to 3 MW"),
        ({"output": {"U1": 2, "U2": True}}, "hour 0: U2 needs an integer output from 0 to 3 MW"),
        ({"output": {"U1": 2}}, "hour 0 gives no output for U2"),
        ({"battery": True}, "hour 0 needs an integer 'battery' flow"),
        ({"battery": 2}, "hour 0: battery flow 2 MW is outside -1..1"),
    ],
    ids=[
        "hour-past-the-day",
        "hour-true",
        "hour-text",
        "unknown-unit",
        "long-unknown-unit",
        "output-above-max",
        "output-true",
        "unit-left-out",
        "battery-true",
        "battery-beyond-its-rate",
    ],
)
def test_a_dispatch_row_breaking_the_form_is_refused_saying_why(hour0, reason):
    assert _read(_dispatch(**hour0)) == (None, reason)


def test_a_dispatch_row_that_is_not_an_object_is_numbered_from_one():
    section = _dispatch()
    section["dispatch"][1] = [1]
    assert _read(section) == (None, "row 2 is not an object")


def test_a_dispatch_row_with_a_bad_hour_is_numbered_from_one():
    section = _dispatch()
    section["dispatch"][1]["hour"] = -1
    assert _read(section) == (None, "row 2 needs an integer 'hour' from 0 to 2")


def test_a_dispatch_missing_an_hour_is_refused_naming_it():
    section = _dispatch()
    del section["dispatch"][2]
    assert _read(section) == (None, "hours missing from the dispatch: 2")


def test_without_a_battery_every_flow_must_be_zero():
    no_battery = POWER.model_copy(update={"battery": None})
    assert pw.battery_ok(no_battery, (0, 0, 0)) == ""
    assert pw.battery_ok(no_battery, (0, 1, 0)) == "there is no battery: its flow must be 0 in every hour"


def test_a_system_without_renewables_or_critical_load_has_none_in_any_hour():
    bare = POWER.model_copy(update={"renewable": (), "critical": ()})
    assert (bare.available(0), bare.critical_at(0)) == (0, 0)


def test_a_system_without_a_battery_keeps_no_battery_reserve():
    assert pw.battery_reserve(POWER.model_copy(update={"battery": None}), power_plan(flows=(0, 0, 0))) == 0


def test_the_verification_figures_hold_the_battery_level_at_every_hours_end():
    assert pw.verification(POWER, OK_PLAN)["level"] == {"0": 0, "1": 0, "2": 1}


def test_renewable_output_is_unused_in_an_hour_the_units_already_cover():
    # hour 2: the units give the whole demand of 2 MW, so the 2 MW of wind are all curtailed
    assert pw.curtailed(POWER, power_plan(u2=(0, 2, 2), flows=(0, 0, 0)), 2) == 2


@pytest.mark.parametrize(("check", "params"), [("unit_outage", pw.UnitOutage), ("derate", pw.Derate)])
def test_a_window_past_the_last_hour_is_judged_up_to_the_last_hour(check, params):
    p = params(unit="U1", first=2, last=9, **({"mw": 1} if check == "derate" else {}))
    assert pw.CHECKS[check](POWER, OK_PLAN, p)[0]  # U1 is off in hour 2
    assert not pw.CHECKS[check](POWER, power_plan(u1=(2, 2, 2)), p)[0]


def test_a_derating_holds_outside_its_window():
    assert pw.CHECKS["derate"](POWER, OK_PLAN, pw.Derate(unit="U1", first=2, last=2, mw=1))[0]  # 2 MW in hours 0-1


def test_a_ramp_violation_names_the_hour_before_and_the_hour():
    got = pw.CHECKS["ramp_limits"](POWER, power_plan(u2=(0, 3, 1)), NoParams())
    assert got == (False, "U2 changes from 3 to 1 MW in hour 2 (ramp limit 1 MW)")


def test_the_battery_end_is_its_level_after_the_last_hour():
    assert pw.CHECKS["battery_end"](POWER, OK_PLAN, pw.BatteryEnd(mwh=1)) == (True, "holds")


def test_a_trip_reason_gives_the_spare_of_the_other_units():
    got = pw.CHECKS["trip_reserve"](POWER, power_plan(u1=(2, 0, 0), u2=(1, 0, 0)), NoParams())
    assert got == (False, "if U2 tripped in hour 0, its 1 MW exceed the 0 MW spare on the other units")


def test_the_existing_plan_of_a_dispatch_lists_every_unit_and_the_battery():
    assert pw.PowerDispatch().existing(POWER, OK_PLAN) == {"U1": [2, 2, 0], "U2": [0, 2, 1], "battery": [0, 0, -1]}


def test_a_changes_figure_counts_every_battery_hour_moved():
    term = ObjectiveTerm(id="changes", kind="changes", params={})
    old = pw.CurrentDispatch(existing={"U1": [2, 2, 0], "U2": [0, 2, 1], "battery": [1, 1, -1]})
    assert pw.objective_value(POWER, OK_PLAN, term, old) == 2


def test_a_system_without_a_battery_holds_nothing_at_any_hours_end():
    no_battery = POWER.model_copy(update={"battery": None})
    assert pw.levels(no_battery, power_plan(flows=(0, 0, 0))) == [0, 0, 0]


# -- checkers/project/job_shop.py: reasons, boundaries and figures on a tiny shop -------------
SHOP = js.ShopData.model_validate(
    {
        "machines": [{"id": "M1", "name": "Lathe"}, {"id": "M2", "name": "Idle mill"}],
        "jobs": [
            {
                "id": "J1",
                "name": "Shaft",
                "ops": [{"id": "A", "machine": "M1", "duration": 5}, {"id": "B", "machine": "M1", "duration": 3}],
            },
            {"id": "J2", "name": "Gear", "ops": [{"id": "C", "machine": "M1", "duration": 2}]},
        ],
        "horizon": 30,
    }
)


def _shop(**starts: int) -> dict[str, int]:
    return {"A": 0, "B": 5, "C": 8, **starts}


def test_a_schedule_missing_an_operation_names_the_operations_missing():
    tc = js.ResourceScheduling()
    got = tc.read_plan(SHOP, {"schedule": [{"operation": "A", "start": 0}]}, tc.lookups(SHOP), [])
    assert got == (None, "operations missing from the schedule: B, C")


def test_a_start_that_is_not_a_whole_number_asks_for_a_start_minute():
    tc = js.ResourceScheduling()
    got = tc.read_plan(SHOP, {"schedule": [{"operation": "A", "start": "0"}]}, tc.lookups(SHOP), [])
    assert got == (None, "operation A needs a whole-number 'start' minute")


def test_an_operation_may_start_exactly_at_its_not_before_minute_and_not_earlier():
    p = js.NotBefore(op="C", at=8)
    assert js.CHECKS["not_before"](SHOP, _shop(), p) == (True, "holds")
    assert js.CHECKS["not_before"](SHOP, _shop(C=7, B=10), p) == (False, "C starts at 7, before 8")


def test_a_max_wait_reason_gives_the_minutes_waited():
    got = js.CHECKS["max_wait"](SHOP, _shop(B=9), js.MaxWait(jobs=["J1"], minutes=1))
    assert got == (False, "B waits 4 minutes after A (at most 1)")


@pytest.mark.parametrize(
    ("starts", "reason"),
    [
        ({"C": 4}, "on M1, C starts at 4 but A ends at 5 (they overlap)"),  # the earlier one first
        ({"A": 2, "C": 1, "B": 8}, "on M1, A starts at 2 but C ends at 3 (they overlap)"),
    ],
    ids=["listed-first-starts-first", "listed-later-starts-first"],
)
def test_an_overlap_names_the_later_start_and_the_earlier_operations_end(starts, reason):
    assert js.CHECKS["machine_exclusive"](SHOP, _shop(**starts), NoParams()) == (False, reason)


def test_a_cooldown_reason_gives_the_minutes_needed():
    got = js.CHECKS["cooldown"](SHOP, _shop(B=6), js.Cooldown(machine="M1", longer_than=4, minutes=2))
    assert got == (False, "on M1, B starts at 6 but A ends at 5 (needs 2 minutes between them)")


@pytest.mark.parametrize(
    ("longer_than", "holds"), [(5, True), (4, False)], ids=["as-long-as-the-limit", "longer-than-the-limit"]
)
def test_a_cooldown_follows_only_an_operation_longer_than_its_limit(longer_than, holds):
    # A (5 minutes) ends at 5 and B starts right after it; C, short, follows B back to back
    assert (
        js.CHECKS["cooldown"](SHOP, _shop(), js.Cooldown(machine="M1", longer_than=longer_than, minutes=2))[0] is holds
    )


def test_an_operator_limit_reason_gives_the_first_minute_of_the_peak():
    # A with C over minutes 0-2, then A with B from minute 3: two at once both times
    got = js.CHECKS["operator_limit"](SHOP, _shop(C=0, B=3), js.OperatorLimit(max=1))
    assert got == (False, "2 operations run at minute 0 (at most 1)")


def test_an_idle_machine_lasts_until_minute_zero():
    assert js.verification(SHOP, _shop())["machine_last"] == {"M1": 10, "M2": 0}


def test_a_changes_figure_counts_the_operations_moved():
    term = ObjectiveTerm(id="changes", kind="changes", params={})
    old = js.CurrentStarts(existing={"A": 0, "B": 6, "C": 9})
    assert js.ResourceScheduling().objective_value(SHOP, _shop(), term, old) == 2
