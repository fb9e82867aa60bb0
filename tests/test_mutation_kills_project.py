"""Behaviours the mutation campaign over the project checkers not yet campaigned found
untested (checkers/project/warehouse.py, maintenance.py, production.py, activities.py,
budget.py): one behaviour per test, each a verdict, a figure or a plan read as grading
does it."""

from __future__ import annotations

import pytest

from pbsolve.checker_kit import OK
from pbsolve.checkers.project import activities as pj
from pbsolve.checkers.project import budget as fb
from pbsolve.checkers.project import maintenance as mc
from pbsolve.checkers.project import production as pp
from pbsolve.checkers.project import warehouse as wh
from pbsolve.params import NoParams, Params, make_term
from pbsolve.schema import ObjectiveTerm
from tests.test_project_financial_budgeting import DATA as FB
from tests.test_project_financial_budgeting import OK_PLAN as FB_OK
from tests.test_project_financial_budgeting import plan as fb_plan
from tests.test_project_it_system_maintenance_planning import DATA as MC
from tests.test_project_production_planning import DATA as PP
from tests.test_project_production_planning import OK_PLAN as PP_OK
from tests.test_project_production_planning import plan as pp_plan
from tests.test_project_project_planning import DATA as PJ
from tests.test_project_project_planning import OK_PLAN as PJ_OK
from tests.test_project_project_planning import plan as pj_plan
from tests.test_project_warehouse_planning import DATA as WH
from tests.test_project_warehouse_planning import OK_PLAN as WH_OK
from tests.test_project_warehouse_planning import plan as wh_plan


# -- checkers/project/warehouse.py ---------------------------------------------------------
# WH: zone Z1 (chilled, 100 kg) with S1 (level 0) and S2 (level 1); zone Z2 (150 kg) with
# S3 (level 0), S4 (level 1) and S5 (level 0). Items I1 60 kg, I2 40 kg, I3 90 kg.
# WH_OK: I1 in S1, I2 in S3, I3 in S4 (Z1 60 kg, Z2 130 kg; S2 and S5 empty).
def _wh(kind: str, plan: wh.Plan, params: Params | None = None) -> tuple[bool, str]:
    return wh.CHECKS[kind](WH, plan, params or NoParams())


def _slotting(rows: list[object]) -> tuple[object, str]:
    """The plan TASK.read_plan reads from a slotting of these rows, and why."""
    return wh.TASK.read_plan(WH, {"slotting": rows}, wh.TASK.lookups(WH), [])


OK_ROWS = [{"item": "I1", "slot": "S1"}, {"item": "I2", "slot": "S3"}, {"item": "I3", "slot": "S4"}]


def test_a_zone_loaded_exactly_to_its_limit_keeps_the_capacity_rule():
    assert _wh("zone_capacity", wh_plan(I2="S2")) == OK  # Z1: 60 + 40 = 100 kg


def test_an_item_weighing_exactly_the_heavy_weight_must_be_low():
    got = _wh("heavy_low", WH_OK, wh.HeavyLow(min_weight=90, max_level=0))
    assert got == (False, "I3 weighs 90 kg and is on level 1 (at most level 0)")


def test_an_item_in_a_reserved_slot_is_named_with_the_slot():
    got = _wh("reserved_slots", wh_plan(I2="S2"), wh.ReservedSlots(slots=["S2"]))
    assert got == (False, "I2 is in slot S2, which is reserved")


def test_two_items_in_a_reserved_slot_are_both_named():
    got = _wh("reserved_slots", wh_plan(I2="S2", I3="S2"), wh.ReservedSlots(slots=["S2"]))
    assert got == (False, "I2, I3 are in slot S2, which is reserved")


def test_a_zone_loaded_exactly_to_the_threshold_keeps_its_upper_levels_usable():
    # Z2 holds 130 kg and I3 is on level 1 (S4): not over a 130 kg threshold
    assert _wh("load_threshold", WH_OK, wh.LoadThreshold(zone="Z2", threshold=130, level=1)) == OK


def test_a_zone_over_the_threshold_names_the_item_on_an_upper_level():
    got = _wh("load_threshold", WH_OK, wh.LoadThreshold(zone="Z2", threshold=100, level=1))
    assert got == (False, "I3 is in slot S4, which is on level 1 or above while zone Z2 holds 130 kg (over 100 kg)")


def test_the_load_threshold_empties_only_the_upper_slots_of_its_own_zone():
    # Z1 (60 kg) is over 50 kg, its upper slot S2 is empty; I3 on level 1 is in Z2
    assert _wh("load_threshold", WH_OK, wh.LoadThreshold(zone="Z1", threshold=50, level=1)) == OK


def test_a_closed_slot_kept_empty_keeps_the_rule():
    assert _wh("slot_closed", wh_plan(I2="S5"), wh.SlotClosed(slot="S3")) == OK


def test_an_item_in_a_closed_slot_breaks_the_rule_naming_it():
    got = _wh("slot_closed", WH_OK, wh.SlotClosed(slot="S3"))
    assert got == (False, "I2 is in slot S3, which is out of service")


def test_a_zone_with_an_empty_slot_keeps_a_spare():
    assert _wh("spare_slot", WH_OK, wh.SpareSlot(zones=["Z1"])) == OK  # S2 is empty


def test_a_zone_with_every_slot_taken_has_no_spare():
    got = _wh("spare_slot", wh_plan(I3="S2"), wh.SpareSlot(zones=["Z1"]))
    assert got == (False, "zone Z1 has no empty slot: a damaged slot's goods could not be moved within it")


def test_the_changes_figure_counts_the_items_moved_from_the_current_plan():
    current = wh.CurrentSlots(existing={"I1": "S1", "I2": "S2", "I3": "S5"})
    terms = [
        make_term("pick_path", "pick_path"),
        make_term("lift_effort", "lift_effort"),
        make_term("changes", "changes", current),
    ]
    _, values = wh.TASK.evaluate(WH, [], terms, WH_OK)
    assert values == {"pick_path": 50 * 10 + 20 * 20 + 5 * 20, "lift_effort": 90 * 1, "changes": 2}  # I2, I3 moved


def test_an_unknown_objective_kind_is_a_clear_error():
    with pytest.raises(ValueError, match=r"^unknown objective kind 'speed'$"):
        wh.objective_value(WH, WH_OK, ObjectiveTerm(id="T", kind="speed"), NoParams())


def test_a_recovery_counts_changes_against_the_main_plans_slotting():
    assert wh.TASK.existing(WH, WH_OK) == {"I1": "S1", "I2": "S3", "I3": "S4"}


def test_a_replaced_warehouse_keeps_every_other_field_and_is_validated_again():
    fewer = wh.replaced(WH, items=WH.items[:2])
    assert (fewer.zones, fewer.slots, fewer.items) == (WH.zones, WH.slots, WH.items[:2])
    with pytest.raises(ValueError, match="3 items but only 2 slots"):
        wh.replaced(WH, slots=WH.slots[:2])


def test_a_slotting_as_the_instance_spells_it_reads_to_its_plan():
    assert _slotting(OK_ROWS) == (WH_OK, "complete plan")


def test_a_slotting_naming_items_and_slots_in_another_case_reads_to_the_same_plan():
    rows = [{"item": r["item"].lower(), "slot": f" {r['slot'].lower()} "} for r in OK_ROWS]
    assert _slotting(rows) == (WH_OK, "complete plan")


@pytest.mark.parametrize("key", ["ITEM", "Item", "XXitemXX", "SLOT", "XXslotXX"])
def test_a_slotting_row_is_read_from_its_item_and_slot_keys_alone(key):
    # another key naming another item or slot (even 'item' in capitals) is ignored
    rows = [{**OK_ROWS[0], key: "I3" if "item" in key.lower() else "S5"}, *OK_ROWS[1:]]
    assert _slotting(rows) == (WH_OK, "complete plan")


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ({"item": "i9", "slot": "S3"}, "row 2 names unknown item 'i9'"),
        ({"item": "I2", "slot": "s9"}, "row 2 names unknown slot 's9'"),
        ({"item": "I2", "slot": 3}, "row 2 needs string fields 'item' and 'slot'"),
        ({"item": "I2"}, "row 2 needs string fields 'item' and 'slot'"),
        (["I2", "S3"], "row 2 is not an object"),
    ],
    ids=["unknown-item", "unknown-slot", "slot-not-text", "slot-left-out", "row-a-list"],
)
def test_a_slotting_row_breaking_the_form_is_refused_saying_why(row, reason):
    assert _slotting([OK_ROWS[0], row, OK_ROWS[2]]) == (None, reason)


def test_a_slotting_missing_an_item_is_refused_naming_it():
    assert _slotting(OK_ROWS[:2]) == (None, "items missing from the slotting: I3")


def test_a_slotting_naming_an_item_twice_is_refused():
    rows = [*OK_ROWS, {"item": "i1", "slot": "S5"}]
    assert _slotting(rows) == (None, "item I1 appears more than once")


# -- checkers/project/maintenance.py -------------------------------------------------------
# MC: S1 (window 0-4, cluster c1) <- S2 (windows 0-2 and 3-6) <- S3 (window 1-6, cluster
# c1); T1 on S1 (2 h, 2 engineers), T2 on S2 (1 h), T3 on S3 (2 h); horizon 6, 2 engineers.
# T4: a second 1-hour task on S2, for the rollback rule.
MC_T4 = mc.MTask(id="T4", name="reboot app", service="S2", duration=1)
MC4 = mc.replaced(MC, tasks=(*MC.tasks, MC_T4))
# Two services of one cluster open all night, a 2-hour task on each: for overruns.
PAIR = mc.MaintData(
    services=tuple(
        mc.Service(id=s, name=s, users=1, cluster="c", windows=(mc.Window(start=0, end=10),)) for s in ("SA", "SB")
    ),
    tasks=(
        mc.MTask(id="A", name="a", service="SA", duration=2),
        mc.MTask(id="B", name="b", service="SB", duration=2),
    ),
    horizon=10,
    engineers=2,
)


def _mc(kind: str, d: mc.MaintData, plan: dict[str, int], params: Params | None = None) -> tuple[bool, str]:
    return mc.CHECKS[kind](d, plan, params or NoParams())


def _schedule(rows: list[object]) -> tuple[object, str]:
    """The plan TASK.read_plan reads from a schedule of these rows, and why."""
    return mc.TASK.read_plan(MC, {"schedule": rows}, mc.TASK.lookups(MC), [])


def test_a_task_fits_at_every_start_hour_of_each_of_its_services_windows():
    t2 = MC.task_by_id["T2"]  # 1 hour on S2: windows 0-2 and 3-6
    assert MC.starts(t2) == [0, 1, 3, 4, 5]


def test_a_task_lengthened_by_an_overrun_fits_at_fewer_start_hours():
    assert MC.starts(MC.task_by_id["T2"], 1) == [0, 3, 4]


def test_a_replaced_maintenance_night_keeps_every_other_field_and_is_validated_again():
    fewer = mc.replaced(MC, tasks=MC.tasks[:2])
    assert (fewer.services, fewer.tasks, fewer.horizon, fewer.engineers) == (MC.services, MC.tasks[:2], 6, 2)
    with pytest.raises(ValueError, match="task T1 needs 2 engineers, only 1 are on call"):
        mc.replaced(MC, engineers=1)


def test_an_overrun_counts_each_task_busy_for_its_extra_hours():
    plan = {"T1": 0, "T2": 3, "T3": 3}
    assert list(mc.hours_of(plan, MC.task_by_id["T1"], 1)) == [0, 1, 2]
    assert mc.load(MC, plan, 1) == {0: (1, 2), 1: (1, 2), 2: (1, 2), 3: (2, 2), 4: (2, 2), 5: (1, 1)}


def test_two_tasks_of_one_cluster_may_run_back_to_back():
    assert _mc("cluster_exclusive", PAIR, {"A": 2, "B": 4}) == OK


def test_two_tasks_may_run_back_to_back_when_kept_apart():
    assert _mc("not_together", PAIR, {"A": 2, "B": 4}, mc.NotTogether(pairs=[("A", "B")])) == OK


@pytest.mark.parametrize(
    "plan", [{"A": 2, "B": 4}, {"A": 4, "B": 2}], ids=["first-listed-first", "first-listed-second"]
)
def test_an_overrun_buffer_keeps_back_to_back_tasks_of_one_cluster_apart(plan):
    got = _mc("overrun_buffer", PAIR, plan, mc.OverrunBuffer(hours=1))
    assert got == (False, "with a 1-hour overrun: A and B both run in cluster c at the same hour")


def test_an_overrun_buffer_keeps_each_task_an_overrun_inside_its_window():
    got = _mc("overrun_buffer", PAIR, {"A": 8, "B": 0}, mc.OverrunBuffer(hours=1))
    assert got == (False, "with a 1-hour overrun: A runs 8-11, outside every maintenance window of SA")


def test_the_busy_run_is_the_longest_run_of_busy_hours_not_the_first():
    plan = {"T1": 0, "T2": 3, "T3": 4}  # busy in hours 0-1 and 3-5
    got = _mc("busy_run", MC, plan, mc.BusyRun(hours=2))
    assert got == (False, "tasks run 3 hours in a row from hour 3 (at most 2)")


def test_of_two_longest_busy_runs_the_first_is_named():
    plan = {"T1": 0, "T2": 3, "T3": 3}  # busy in hours 0-1 and 3-4
    got = _mc("busy_run", MC, plan, mc.BusyRun(hours=1))
    assert got == (False, "tasks run 2 hours in a row from hour 0 (at most 1)")


@pytest.mark.parametrize(
    ("hours", "run"), [(set(), (0, 0)), ({4}, (1, 4)), ({2, 4, 5}, (2, 4))], ids=["none", "one-hour", "two-runs"]
)
def test_the_longest_run_of_hours_and_where_it_starts(hours, run):
    assert mc.longest_run(hours) == run


def test_a_task_on_the_service_in_the_rollback_hours_breaks_the_rule_naming_it():
    got = _mc("rollback_slot", MC4, {"T1": 0, "T2": 1, "T3": 2, "T4": 3}, mc.Rollback(tasks=["T2"], hours=2))
    assert got == (False, "T4 runs on S2 during T2 or its rollback hours (1-4)")


def test_a_task_on_the_service_may_start_as_the_rollback_hours_end():
    assert _mc("rollback_slot", MC4, {"T1": 0, "T2": 1, "T3": 2, "T4": 4}, mc.Rollback(tasks=["T2"], hours=2)) == OK


def test_a_task_on_the_service_may_end_as_the_risky_task_starts():
    assert _mc("rollback_slot", MC4, {"T1": 0, "T2": 3, "T3": 2, "T4": 2}, mc.Rollback(tasks=["T2"], hours=2)) == OK


def test_an_unknown_maintenance_objective_kind_is_a_clear_error():
    with pytest.raises(ValueError, match=r"^unknown objective kind 'speed'$"):
        mc.objective_value(MC, {"T1": 0, "T2": 3, "T3": 3}, ObjectiveTerm(id="T", kind="speed"), NoParams())


def test_a_schedule_missing_a_task_is_refused_naming_the_tasks_missing():
    rows = [{"task": "T1", "start": 0}, {"task": "T2", "start": 3}]
    assert _schedule(rows) == (None, "tasks missing from the schedule: T3")


def test_a_schedule_row_without_a_whole_number_start_is_refused_asking_for_an_hour():
    rows = [{"task": "T1", "start": 0.5}]
    assert _schedule(rows) == (None, "task T1 needs a whole-number 'start' hour")


# -- checkers/project/production.py --------------------------------------------------------
# PP: periods 1-2, at most 2 lots a run; L1 (capacity 2) makes P1 and P2, L2 (capacity 1)
# makes P2. PP_OK: P2 on L2 in both periods, 2 lots of P1 on L1 in period 2.
PP_ROWS = [
    {"line": "L2", "period": 1, "product": "P2", "lots": 1},
    {"line": "L1", "period": 2, "product": "P1", "lots": 2},
    {"line": "L2", "period": 2, "product": "P2", "lots": 1},
]


def _production(rows: list[object]) -> tuple[object, str]:
    """The plan TASK.read_plan reads from a production list of these rows, and why."""
    return pp.TASK.read_plan(PP, {"production": rows}, pp.TASK.lookups(PP), [])


def test_a_production_list_as_the_instance_spells_it_reads_to_its_plan():
    assert _production(PP_ROWS) == (PP_OK, "complete plan")


def test_a_production_list_naming_lines_and_products_in_another_case_reads_to_the_same_plan():
    rows = [{**r, "line": r["line"].lower(), "product": f" {r['product'].lower()} "} for r in PP_ROWS]
    assert _production(rows) == (PP_OK, "complete plan")


@pytest.mark.parametrize("key", ["LINE", "Product", "XXlineXX", "XXproductXX"])
def test_a_production_row_is_read_from_its_line_and_product_keys_alone(key):
    rows = [{**PP_ROWS[0], key: "L1" if "line" in key.lower() else "P1"}, *PP_ROWS[1:]]
    assert _production(rows) == (PP_OK, "complete plan")


def test_a_run_of_zero_lots_leaves_its_line_idle():
    assert _production([*PP_ROWS, {"line": "L1", "period": 1, "product": "P2", "lots": 0}]) == (PP_OK, "complete plan")


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ({"line": "l9", "period": 1, "product": "P2", "lots": 1}, "run 2 names unknown line 'l9'"),
        ({"line": "L1", "period": 1, "product": "p9", "lots": 1}, "run 2 names unknown product 'p9'"),
        ({"line": "L1", "period": 1, "lots": 1}, "run 2 needs string fields 'line' and 'product'"),
        (["L1", 1, "P2", 1], "run 2 is not an object"),
        ({"line": "L1", "period": 0, "product": "P2", "lots": 1}, "run 2 needs an integer 'period' from 1 to 2"),
        ({"line": "L1", "period": 3, "product": "P2", "lots": 1}, "run 2 needs an integer 'period' from 1 to 2"),
        ({"line": "L1", "period": True, "product": "P2", "lots": 1}, "run 2 needs an integer 'period' from 1 to 2"),
        ({"line": "L1", "period": "1", "product": "P2", "lots": 1}, "run 2 needs an integer 'period' from 1 to 2"),
        ({"line": "L1", "period": 1, "product": "P2", "lots": -1}, "run 2 needs an integer 'lots' from 0 to 2"),
        ({"line": "L1", "period": 1, "product": "P2", "lots": 3}, "run 2 needs an integer 'lots' from 0 to 2"),
        ({"line": "L1", "period": 1, "product": "P2", "lots": True}, "run 2 needs an integer 'lots' from 0 to 2"),
        ({"line": "L1", "period": 1, "product": "P2", "lots": 1.0}, "run 2 needs an integer 'lots' from 0 to 2"),
        (
            {"line": "L2", "period": 1, "product": "P2", "lots": 0},
            "L2 appears more than once in period 1 (one product per line and period)",
        ),
    ],
)
def test_a_production_row_breaking_the_form_is_refused_saying_why(row, reason):
    assert _production([PP_ROWS[0], row, *PP_ROWS[1:]]) == (None, reason)


def _pp(kind: str, plan: pp.Plan, params: Params | None = None, d: pp.ProductionData = PP) -> tuple[bool, str]:
    return pp.CHECKS[kind](d, plan, params or NoParams())


def test_a_replaced_plant_keeps_every_other_field_and_is_validated_again():
    fewer = pp.replaced(PP, orders=PP.orders[:2])
    assert fewer.model_dump() == {**PP.model_dump(), "orders": tuple(o.model_dump() for o in PP.orders[:2])}
    with pytest.raises(ValueError, match="1 material arrivals for 2 periods"):
        pp.replaced(PP, arrivals=(1,))


def test_a_line_switching_products_names_the_period_of_its_changeover():
    got = _pp("max_changeovers", pp_plan(L1_1=("P2", 1)), pp.MaxChangeovers(max=0))
    assert got == (False, "L1 has 1 changeovers (periods [2]; at most 0)")


def test_without_planned_arrivals_only_the_initial_material_is_used_up():
    no_arrivals = pp.replaced(PP, arrivals=())
    assert pp.material_levels(no_arrivals, PP_OK) == [1, -4]  # 2 units; 1, then 4 + 1 used


def test_a_shortfall_is_named_with_its_lots_and_period():
    assert _pp("no_backlog", pp_plan(L2_1=None)) == (False, "P2 is 1 lots short at the end of period 1")


def test_too_much_stock_is_named_with_its_period():
    got = _pp("storage_cap", pp_plan(L1_1=("P1", 1)), pp.StorageCap(max=0))
    assert got == (False, "1 lots are in stock at the end of period 1 (storage for 0)")


def test_a_forbidden_succession_names_both_periods():
    got = _pp("forbidden_succession", pp_plan(L1_1=("P2", 1)), pp.ForbiddenSuccession(first="P2", then="P1"))
    assert got == (False, "L1 makes P1 in period 2, right after P2 in period 1")


def test_line_balance_compares_the_busiest_and_the_idlest_line():
    got = _pp("line_balance", pp_plan(L1_1=("P1", 2)), pp.LineBalance(max=1))
    assert got == (False, "L1 makes 4 lots and L2 2: 2 apart (at most 1)")


def test_a_material_shortfall_is_named_with_its_period_and_units():
    got = _pp("material_supply", pp_plan(L1_1=("P1", 2)))
    assert got == (False, "period 1 uses 2 units of raw material more than have arrived")


def test_a_safety_stock_shortfall_names_the_stock_of_its_own_period():
    got = _pp("safety_stock", pp_plan(L1_2=None), pp.SafetyStock(product="P1", first=1, min=0))
    assert got == (False, "P1 has -2 lots in stock at the end of period 2 (at least 0)")


def test_runs_are_judged_period_by_period_before_line_by_line():
    runs = pp.Plan({("L1", 2): ("P1", 2), ("L2", 1): ("P2", 1)})
    got = _pp("capacity_reserve", runs, pp.CapacityReserve(lines=["L1", "L2"]))
    assert got == (False, "if L2 lost one lot of capacity in period 1, its 1 lots would not fit")


def test_runs_of_one_period_are_judged_in_line_order():
    runs = pp.Plan({("L2", 1): ("P1", 1), ("L1", 1): ("P2", 2)})
    got = _pp("capacity_reserve", runs, pp.CapacityReserve(lines=["L1", "L2"]))
    assert got == (False, "if L1 lost one lot of capacity in period 1, its 2 lots would not fit")


def test_a_setup_cost_the_line_does_not_list_is_zero():
    l1, l2 = PP.lines
    unlisted = pp.replaced(PP, lines=(l1.model_copy(update={"setup": {"P1": 10}}), l2))
    zero = pp.replaced(PP, lines=(l1.model_copy(update={"setup": {"P1": 10, "P2": 0}}), l2))
    runs = pp_plan(L1_1=("P2", 1))
    assert pp.cost(unlisted, runs) == pp.cost(zero, runs) == pp.cost(PP, runs) - 12


def test_an_unknown_production_objective_kind_is_a_clear_error():
    with pytest.raises(ValueError, match=r"^unknown objective kind 'speed'$"):
        pp.objective_value(PP, PP_OK, ObjectiveTerm(id="T", kind="speed"), NoParams())


def test_a_recovery_counts_changes_against_the_main_plans_runs_in_period_order():
    assert pp.TASK.existing(PP, PP_OK) == [["L2", 1, "P2", 1], ["L1", 2, "P1", 2], ["L2", 2, "P2", 1]]


# -- checkers/project/activities.py --------------------------------------------------------
# PJ: horizon 6; R1 (crew, 3) and R2 (crane, 1); A1 (1 day, 2 crew), A2 (2 days, 2 crew and
# the crane, released day 1), A3 (3 days, the crane); A1 -> A2 finish-to-start lag 1,
# A1 -> A3 start-to-start lag 1. PJ_OK: A1 on day 0, A3 on days 1-3, A2 on days 4-5.
EVENT = pj.Activity(id="E", name="handover", duration=0)  # a zero-length event
PJ_E = pj.replaced(PJ, activities=(*PJ.activities, EVENT))


def _pj(kind: str, plan: pj.Plan, params: Params | None = None, d: pj.ProjectData = PJ) -> tuple[bool, str]:
    return pj.CHECKS[kind](d, plan, params or NoParams())


def _pj_schedule(rows: list[object]) -> tuple[object, str]:
    """The plan TASK.read_plan reads from a schedule of these rows, and why."""
    return pj.TASK.read_plan(PJ, {"schedule": rows}, pj.TASK.lookups(PJ), [])


def test_a_replaced_project_keeps_every_other_field_and_is_validated_again():
    assert PJ_E.model_dump() == {**PJ.model_dump(), "activities": (*PJ.model_dump()["activities"], EVENT.model_dump())}
    with pytest.raises(ValueError, match="activity A2 cannot finish within the horizon 2"):
        pj.replaced(PJ, horizon=2)


def test_an_activity_left_out_of_the_weights_adds_nothing_to_a_days_figure():
    assert pj.usage(PJ, PJ_OK, {"A3": 1}) == [0, 1, 1, 1, 0, 0]


def test_an_activity_not_using_a_resource_demands_none_of_it():
    assert pj.demands(PJ, "R2") == {"A1": 0, "A2": 1, "A3": 1}


def test_an_outage_past_the_last_day_is_judged_up_to_the_last_day():
    # R1 loses 1 of its 3 units from day 4 on; A2 uses 2 of them on days 4-5
    assert _pj("resource_outage", PJ_OK, pj.ResourceOutage(resource="R1", first=4, last=9, units=1)) == OK


def test_a_finish_to_start_link_waits_its_lag_after_the_finish():
    assert _pj("precedence", pj_plan(A2=1)) == (False, "A2 starts on day 1, before day 2 (A1 finishes + 1)")


def test_a_start_to_start_link_waits_its_lag_after_the_start():
    assert _pj("precedence", pj_plan(A3=0)) == (False, "A3 starts on day 0, before day 1 (A1 starts + 1)")


def test_an_activity_may_start_exactly_the_maximum_lag_after_the_finish():
    assert _pj("max_lag", pj_plan(A2=3), pj.MaxLag(before="A1", after="A2", lag=2)) == OK  # A1 finishes at 1


@pytest.mark.parametrize("pair", [("E", "A3"), ("A3", "E")], ids=["event-first", "event-second"])
def test_a_zero_length_event_overlaps_nothing(pair):
    # the handover on day 2 falls inside A3's days 1-3 but takes no day
    plan = pj.Plan({**PJ_OK.start, "E": 2})
    assert _pj("no_overlap", plan, pj.NoOverlap(pairs=[pair]), PJ_E) == OK


def test_two_overlapping_activities_are_named_with_their_days():
    got = _pj("no_overlap", pj_plan(A1=1, A3=0), pj.NoOverlap(pairs=[("A1", "A3")]))
    assert got == (False, "A1 (days 1-1) and A3 (days 0-2) run on a common day")


def test_an_unknown_project_objective_kind_is_a_clear_error():
    with pytest.raises(ValueError, match=r"^unknown objective kind 'speed'$"):
        pj.objective_value(PJ, PJ_OK, ObjectiveTerm(id="T", kind="speed"), NoParams())


def test_a_project_schedule_missing_an_activity_is_refused_naming_the_activities_missing():
    rows = [{"activity": "A1", "start": 0}, {"activity": "A2", "start": 4}]
    assert _pj_schedule(rows) == (None, "activities missing from the schedule: A3")


def test_a_project_schedule_row_without_a_whole_number_start_is_refused_asking_for_a_day():
    assert _pj_schedule([{"activity": "A1", "start": "0"}]) == (None, "activity A1 needs a whole-number 'start' day")


# -- checkers/project/budget.py ------------------------------------------------------------
# FB: opening 1, new funds 2 then 3; items I1, I2, I3 with caps 2. FB_OK: I1 (2, 0),
# I2 (1, 1), I3 (0, 1): 3 then 2 spent, balances 0 then 1. FB3: a third period (funds 1).
FB3 = fb.replaced(FB, budget=(2, 3, 1))


def _fb(kind: str, plan: fb.Plan, params: Params | None = None, d: fb.BudgetData = FB) -> tuple[bool, str]:
    return fb.CHECKS[kind](d, plan, params or NoParams())


def _fb3(i1: tuple[int, int, int]) -> fb.Plan:
    return fb.Plan({"I1": i1, "I2": (0, 0, 0), "I3": (0, 0, 0)})


def _allocation(rows: list[object]) -> tuple[object, str]:
    """The plan TASK.read_plan reads from an allocation of these rows, and why."""
    return fb.TASK.read_plan(FB, {"allocation": rows}, fb.TASK.lookups(FB), [])


FB_ROWS = [{"item": "I1", "amounts": [2, 0]}, {"item": "I2", "amounts": [1, 1]}, {"item": "I3", "amounts": [0, 1]}]


def test_a_replaced_budget_keeps_every_other_field_and_is_validated_again():
    assert FB3.model_dump() == {**FB.model_dump(), "budget": (2, 3, 1)}
    with pytest.raises(ValueError, match="a budget needs at least one period"):
        fb.replaced(FB, budget=())


def test_the_periods_are_named_p1_to_the_last():
    assert FB.period_ids() == ["P1", "P2"]


def test_an_overdrawn_balance_is_named_with_its_period():
    got = _fb("funds", fb_plan(I3=(1, 0)))
    assert got == (False, "the balance at the end of period 1 is -1: more is spent than the funds received")


def test_spending_over_the_period_limit_is_named_with_its_period():
    assert _fb("period_limit", fb_plan(I2=(2, 1)), fb.PeriodLimit(max=3)) == (
        False,
        "4 is spent in period 1, above the limit 3",
    )


def test_an_amount_over_the_item_period_cap_is_named_with_its_period():
    got = _fb("item_period_cap", FB_OK, fb.ItemPeriodCap(item="I1", max=1))
    assert got == (False, "I1 receives 2 in period 1, above 1")


def test_a_change_of_amount_over_the_ramp_is_named_with_both_periods():
    got = _fb("ramp", FB_OK, fb.Ramp(item="I1", max_change=1))
    assert got == (False, "I1 goes from 2 in period 1 to 0 in period 2: a change above 1")


def test_the_ramp_compares_each_period_with_the_one_before_only():
    assert _fb("ramp", _fb3((0, 1, 2)), fb.Ramp(item="I1", max_change=1), FB3) == OK


def test_a_balance_carried_over_the_cap_is_named_with_both_periods():
    got = _fb("carry_cap", fb_plan(I1=(0, 2)), fb.CarryCap(max=1))  # balances 2, then 1
    assert got == (False, "2 is carried from period 1 into period 2, above 1")


def test_a_spending_review_caps_the_periods_after_the_threshold_is_passed():
    got = _fb("spend_threshold", FB_OK, fb.SpendThreshold(item="I2", threshold=0, cap=0))
    assert got == (False, "I2 receives 1 in period 2, above 0, after its cumulative amount passed 0 in period 1")


def test_a_spending_review_allows_the_cap_itself():
    assert _fb("spend_threshold", FB_OK, fb.SpendThreshold(item="I2", threshold=0, cap=1)) == OK


def test_a_cumulative_amount_reaching_the_threshold_has_not_passed_it():
    # I2 has 1 by the end of period 1: not over a threshold of 1, so period 2 is not capped
    assert _fb("spend_threshold", FB_OK, fb.SpendThreshold(item="I2", threshold=1, cap=0)) == OK


def test_the_spending_review_sums_the_amounts_of_every_period_so_far():
    got = _fb("spend_threshold", _fb3((1, 1, 1)), fb.SpendThreshold(item="I1", threshold=1, cap=0), FB3)
    assert got == (False, "I1 receives 1 in period 3, above 0, after its cumulative amount passed 1 in period 2")


def test_a_bill_that_could_not_be_paid_is_named_with_its_period():
    got = _fb("contingency", FB_OK, fb.Contingency(amount=1))
    assert got == (False, "a bill of 1 at the end of period 1 could not be paid (balance 0)")


def test_a_budget_cut_names_the_balance_left_after_it():
    got = _fb("budget_cut", FB_OK, fb.BudgetCut(period=1, amount=1))
    assert got == (False, "after the cut of 1, the balance at the end of period 1 is -1")


@pytest.mark.parametrize(
    ("item", "period", "verdict"),
    [
        ("I1", 1, (False, "I1 receives 2 in period 1, when it is frozen")),
        ("I2", 1, (False, "I2 receives 1 in period 1, when it is frozen")),
        ("I3", 2, (False, "I3 receives 1 in period 2, when it is frozen")),
        ("I1", 2, OK),
        ("I1", 3, OK),
    ],
    ids=["two-in-period-1", "one-in-period-1", "one-in-the-last-period", "nothing-frozen", "past-the-horizon"],
)
def test_a_frozen_account_receives_nothing_in_its_period(item, period, verdict):
    assert _fb("freeze", FB_OK, fb.Freeze(item=item, period=period)) == verdict


def test_an_unknown_budget_objective_kind_is_a_clear_error():
    with pytest.raises(ValueError, match=r"^unknown objective kind 'speed'$"):
        fb.objective_value(FB, FB_OK, ObjectiveTerm(id="T", kind="speed"), NoParams())


def test_a_recovery_counts_changes_against_the_main_plans_amounts():
    assert fb.TASK.existing(FB, FB_OK) == {"I1": [2, 0], "I2": [1, 1], "I3": [0, 1]}


def test_an_allocation_as_the_instance_spells_it_reads_to_its_plan():
    assert _allocation(FB_ROWS) == (FB_OK, "complete plan")


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ([1, 1], "row 2 is not an object"),
        ({"amounts": [1, 1]}, "row 2 needs a string field 'item'"),
        ({"item": "I9", "amounts": [1, 1]}, "row 2 names unknown item 'I9'"),
        ({"item": "X" * 50, "amounts": [1, 1]}, f"row 2 names unknown item {'X' * 40!r}"),
        ({"item": "I2", "amounts": [1]}, "row 2 (I2) needs 'amounts': a list of 2 whole numbers"),
        ({"item": "I2", "amounts": 2}, "row 2 (I2) needs 'amounts': a list of 2 whole numbers"),
        ({"item": "I2", "amounts": [1, 0.5]}, "I2: the amount of period 2 is not a whole number"),
        ({"item": "I2", "amounts": [1, True]}, "I2: the amount of period 2 is not a whole number"),
        ({"item": "I2", "amounts": [1, 3]}, "I2: the amount 3 of period 2 is outside 0 to its cap 2"),
    ],
    ids=[
        "row-a-list",
        "item-left-out",
        "unknown-item",
        "long-unknown-item",
        "too-few-amounts",
        "amounts-a-number",
        "amount-a-fraction",
        "amount-true",
        "amount-over-the-cap",
    ],
)
def test_an_allocation_row_breaking_the_form_is_refused_saying_why(row, reason):
    assert _allocation([FB_ROWS[0], row, FB_ROWS[2]]) == (None, reason)


def test_an_allocation_missing_an_item_is_refused_naming_it():
    assert _allocation(FB_ROWS[:2]) == (None, "items missing from the allocation: I3")
