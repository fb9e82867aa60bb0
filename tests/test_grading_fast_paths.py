"""Grading's shortcuts read the same answer and give the same verdicts as the long way
(issue 18): a reply that is one fenced block in plain prose is decoded without the scan,
a plan row spelled as the instance spells it is read at once, the generic evaluation
looks each rule's check and parameters up once per instance, and what many rules read of
one plan (a roster's lines and shifts, a volunteer's load, a dispatch's net output, a
traffic plan's road loads) is worked out once per plan and data."""

from __future__ import annotations

import json

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pbsolve import checking, parsing
from pbsolve.checker_kit import Names, row_names
from pbsolve.checkers.emergency import medical as md
from pbsolve.checkers.project import activities as ac
from pbsolve.checkers.project import power as pw
from pbsolve.checkers.routing import traffic as tr
from pbsolve.checkers.scheduling import checks as sched_checks
from pbsolve.checkers.workforce import shift_duty as sd
from pbsolve.checkers.workforce import volunteer as vs
from pbsolve.checkers.workforce.shift_duty import ShiftDutyData
from pbsolve.family import checker
from pbsolve.params import NoParams
from pbsolve.parsing import parse_response
from pbsolve.schema import Instance
from tests.instances import find
from tests.test_emergency_medical_resource_planning import DATA as MEDICAL
from tests.test_project_it_system_maintenance_planning import DATA as MAINT
from tests.test_project_power_dispatch_planning import DATA as POWER
from tests.test_routing_urban_traffic_planning import DATA as TRAFFIC

_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)
_PROSE = st.lists(
    st.sampled_from(["Here is the plan:", "\n", " ", "x", "}", "{", "`", "``", '"', '{"a": 1}', "```"]), max_size=4
)
_OPENERS = st.sampled_from(["```json\n", "```\n", "````JSON \r\n", "``` json\t\n", "```json", "``json\n"])
_CLOSERS = st.sampled_from(["\n```", "```", "\n````", "\n``", ""])


# -- one fenced block in prose --------------------------------------------------------------
@settings(max_examples=400, deadline=None)
@given(before=_PROSE, after=_PROSE, opener=_OPENERS, closer=_CLOSERS, value=_VALUES, broken=st.booleans())
def test_a_fenced_block_in_prose_parses_as_the_scan_reads_it(before, after, opener, closer, value, broken):
    inner = json.dumps(value)[:-1] if broken and len(json.dumps(value)) > 1 else json.dumps(value)
    text = "".join(before) + opener + inner + closer + "".join(after)
    assume("<think>" not in text and "</think>" not in text)  # thinking is cut before either path
    assert parse_response(text) == parsing._scanned(text) == parsing._full_scan(text, 0)


def test_the_usual_fenced_reply_is_read_without_the_scan():
    text = 'Here is the plan.\n```json\n{"feasible": true, "plan": [1, 2]}\n```\n'
    assert parsing._one_fence(text) == parsing.Parsed(value={"feasible": True, "plan": [1, 2]}, source="fenced")


def test_a_brace_before_the_fenced_block_leaves_the_reply_to_the_scan():
    assert parsing._one_fence('Rules {R1}:\n```json\n{"a": 1}\n```') is None


def test_a_brace_after_the_fenced_block_leaves_the_reply_to_the_scan():
    text = '```json\n{"a": 1}\n```\nor rather {"a": 2}'
    assert parsing._one_fence(text) is None
    assert parse_response(text).value == {"a": 2}


def test_a_second_fence_after_the_block_leaves_the_reply_to_the_scan():
    text = '```json\n{"a": 1}\n```\n```json\n[2]\n```'
    assert parsing._one_fence(text) is None
    assert parse_response(text).value == [2]


def test_invalid_json_in_the_only_fenced_block_fails_as_the_last_fenced_block():
    text = 'Plan:\n```json\n{"a": tru}\n```'
    assert parsing._one_fence(text) == parsing._full_scan(text, 0)
    assert parse_response(text).error.startswith("last fenced block is not valid JSON")


# -- plan rows in the instance's own spelling -------------------------------------------------
FIELDS = {"site": Names(["North Depot", "South"]), "item": Names(["Oxygen"])}


def test_a_row_in_the_instances_own_spelling_gives_its_names():
    assert row_names({"site": "North Depot", "item": "Oxygen"}, 0, "row", FIELDS) == (["North Depot", "Oxygen"], "")


def test_a_row_in_another_spelling_gives_the_same_names():
    row = {"site": "  north   DEPOT", "item": "OXYGEN "}
    assert row_names(row, 0, "row", FIELDS) == (["North Depot", "Oxygen"], "")


def test_a_row_with_an_unhashable_field_fails_as_a_non_string_field():
    row = {"site": ["North Depot"], "item": "Oxygen"}
    assert row_names(row, 2, "row", FIELDS) == (None, "row 3 needs string fields 'site' and 'item'")


def test_a_row_missing_a_field_fails_as_a_non_string_field():
    assert row_names({"site": "South"}, 0, "row", FIELDS) == (None, "row 1 needs string fields 'site' and 'item'")


def test_a_row_naming_an_unknown_entity_fails_naming_it():
    row = {"site": "South", "item": "Water"}
    assert row_names(row, 0, "row", FIELDS) == (None, "row 1 names unknown item 'Water'")


# -- the generic evaluation, bound once per instance --------------------------------------------
def _volunteer() -> Instance:
    inst = find("volunteer_scheduling", 0)
    assert inst is not None
    return Instance.model_validate(inst.model_dump(mode="json"))


def test_the_bound_evaluation_gives_the_generic_evaluations_verdicts_and_figures():
    inst = _volunteer()
    tc = checker(inst.family).FAMILY_CHECKER.task_checker(inst.task)
    prep = checking._prepared(tc, inst)
    answer = inst.reference
    for rows in (answer[tc.plan_key], answer[tc.plan_key][1:]):  # the reference plan, and one row short
        plan, _ = tc.read_section(inst, prep.data, {**answer, tc.plan_key: rows}, prep.lk, inst.rules)
        assert plan is not None
        assert prep.evaluate(tc, plan) == tc.evaluate(prep.data, inst.rules, inst.objective, plan, prep.typed)


def test_an_instance_whose_rules_are_replaced_is_evaluated_under_the_new_rules():
    inst = _volunteer()
    tc = checker(inst.family).FAMILY_CHECKER.task_checker(inst.task)
    first = inst.rules[0]
    item = next(it.id for it in inst.checklist if it.rule == first.id)
    assert checking.check_answer(tc, inst, inst.reference)[item] == (True, "holds")
    inst.rules = inst.rules[1:]
    assert checking.check_answer(tc, inst, inst.reference)[item] == (False, f"unknown rule {first.id}")


def test_a_timetable_evaluator_gives_the_timetable_evaluations_verdicts_and_figures():
    inst = find("exam_scheduling", 0)
    assert inst is not None
    tc = sched_checks.TIMETABLE
    prep = checking._prepared(tc, inst)
    plan, _ = tc.read_section(inst, prep.data, inst.reference, prep.lk, inst.rules)
    assert plan is not None
    moved = ({**plan[0], next(iter(plan[0])): (0, next(iter(plan[0].values()))[1])}, plan[1])  # one event at slot 0
    bound = tc.evaluator(inst.rules, inst.objective, prep.typed)
    for p in (plan, moved):
        assert bound(prep.data, p) == tc.evaluate(prep.data, inst.rules, inst.objective, p, prep.typed)


def test_a_checker_with_its_own_evaluate_is_called_through_it():
    calls = []

    class Own(checking.TaskChecker):
        def evaluate(self, data, rules, objective, plan, typed=None):
            calls.append((data, rules, objective, plan, typed))
            return {}, {}

    typed = object()
    Own().evaluator(["R"], ["T"], typed)("data", "plan")
    assert calls == [("data", ["R"], ["T"], "plan", typed)]


# -- what a roster's rules read of a plan, worked out once per plan and data ------------------
def _ward() -> ShiftDutyData:
    return ShiftDutyData.model_validate({
        "days": [{"id": "Fri"}, {"id": "Sat", "weekend": True}],
        "shifts": [{"id": "Early", "start": 6, "hours": 8}, {"id": "Night", "start": 22, "hours": 8}],
        "staff": [{"id": "Ada", "wage": 10}, {"id": "Bram", "wage": 12}, {"id": "Cleo", "wage": 15}],
        "cover": [{"day": "Fri", "shift": "Early", "need": 1}],
    })  # fmt: skip


WARD_PLAN = {"Cleo": {"Fri": "Early"}, "Ada": {"Fri": "Early", "Sat": "Night"}}


def test_the_people_on_a_shift_come_in_the_staff_order_of_the_data_read_against():
    ward = _ward()
    reversed_ward = ward.model_copy(update={"staff": ward.staff[::-1]})
    plan = sd.Plan(WARD_PLAN)
    assert sd.on_shift(ward, plan, "Fri", "Early") == ["Ada", "Cleo"]
    assert sd.on_shift(reversed_ward, plan, "Fri", "Early") == ["Cleo", "Ada"]
    assert sd.on_shift(ward, plan, "Sat", "Early") == []


def test_the_people_off_on_a_day_are_those_with_no_shift_then():
    assert sd.on_shift(_ward(), sd.Plan(WARD_PLAN), "Sat", sd.OFF) == ["Bram", "Cleo"]


def test_a_persons_line_gives_each_days_shift_or_off_in_day_order():
    ward, plan = _ward(), sd.Plan(WARD_PLAN)
    assert sd.line(ward, plan, "Ada") == ["Early", "Night"]
    assert sd.line(ward, plan, "Bram") == [sd.OFF, sd.OFF]
    assert sd.line(ward, sd.Plan({"Zed": {"Sat": "Early"}}), "Zed") == [sd.OFF, "Early"]  # not on the staff list


def test_the_roster_rows_follow_staff_then_day_order():
    rows = sd.Plan(WARD_PLAN).rows(_ward())
    assert rows == [("Ada", "Fri", "Early"), ("Ada", "Sat", "Night"), ("Cleo", "Fri", "Early")]


def test_a_volunteers_load_counts_their_shifts_and_is_zero_for_one_never_rostered():
    plan = vs.Plan({("Ana", "S1"): "Gate", ("Ben", "S1"): "Aid", ("Ana", "S2"): "Aid"})
    assert [vs.load(plan, v) for v in ("Ana", "Ben", "Cy")] == [2, 1, 0]


def test_a_volunteer_posts_staffing_follows_the_volunteer_order_of_the_data_read_against():
    data = vs.VolunteerData.model_validate({
        "shifts": [{"id": "S1", "day": 0}],
        "posts": [{"id": "Gate", "need": 1}],
        "volunteers": [{"id": "Ana", "prefs": {"Gate": 0}}, {"id": "Ben", "prefs": {"Gate": 0}}],
    })  # fmt: skip
    flipped = data.model_copy(update={"volunteers": data.volunteers[::-1]})
    plan = vs.Plan({("Ben", "S1"): "Gate", ("Ana", "S1"): "Gate"})
    assert vs._staffing(data, plan)["Gate", "S1"] == ["Ana", "Ben"]
    assert vs._staffing(flipped, plan)["Gate", "S1"] == ["Ben", "Ana"]


# -- room beds, counted per slot from the stages' spans -----------------------------------------
def test_a_room_over_its_beds_is_named_with_its_first_full_slot_and_the_stages_there_in_stage_order():
    plan = md.Plan({"P1.1": ("Dr A", "Ward 1", 2), "P1.2": ("Dr B", "Ward 1", 2), "P2.1": ("Dr A", "Ward 1", 1)})
    assert md.CHECKS["room_beds"](MEDICAL, plan, NoParams()) == (
        False,
        "Ward 1 holds 3 stages in slot 2 (P1.1, P1.2, P2.1) but has 2 bed(s)",
    )


def test_a_stage_holds_its_bed_up_to_its_last_slot_and_not_after():
    fits = md.Plan({"P1.1": ("Dr A", "Cubicle 1", 3), "P1.2": ("Dr B", "Ward 1", 0), "P2.1": ("Dr A", "Cubicle 1", 1)})
    clash = md.Plan({"P1.1": ("Dr A", "Cubicle 1", 2), "P1.2": ("Dr B", "Ward 1", 0), "P2.1": ("Dr A", "Cubicle 1", 1)})
    assert md.CHECKS["room_beds"](MEDICAL, fits, NoParams()) == (True, "holds")
    assert md.CHECKS["room_beds"](MEDICAL, clash, NoParams()) == (
        False,
        "Cubicle 1 holds 2 stages in slot 2 (P1.1, P2.1) but has 1 bed(s)",
    )


# -- a dispatch's net output per hour, worked out once per plan and data -----------------------------
def test_the_net_of_an_hour_is_every_units_output_plus_the_battery_flow():
    plan = pw.Plan({"U1": (2, 2, 0), "U2": (0, 2, 1)}, (0, 1, -1))
    assert [pw.net(POWER, plan, h) for h in range(3)] == [2, 5, 0]


def test_the_net_follows_the_units_of_the_data_read_against():
    plan = pw.Plan({"U1": (2, 2, 0), "U2": (0, 2, 1)}, (0, 1, -1))
    only_u1 = POWER.model_copy(update={"units": POWER.units[:1]})
    assert [pw.net(POWER, plan, h) for h in range(3)] == [2, 5, 0]
    assert [pw.net(only_u1, plan, h) for h in range(3)] == [2, 3, -1]


def test_an_hour_counted_from_the_end_reads_the_plan_as_the_sum_does():
    plan = pw.Plan({"U1": (2, 2, 0), "U2": (0, 2, 1)}, (0, 1, -1))
    assert pw.net(POWER, plan, -1) == 0 and pw.net(POWER, plan, -2) == 5


# -- a traffic plan's road loads, worked out once per plan and data ---------------------------------
def test_road_loads_count_every_vehicle_on_each_road_of_its_route_per_period():
    plan = tr.Plan({("F1-1", "08:00"): 3, ("F1-2", "08:00"): 0, ("F2-1", "08:00"): 2, ("F2-2", "08:00"): 0,
                    ("F1-1", "08:15"): 0, ("F1-2", "08:15"): 2, ("F2-1", "08:15"): 0, ("F2-2", "08:15"): 1})  # fmt: skip
    load = tr.loads(TRAFFIC, plan)
    ab, bc, cd = frozenset("AB"), frozenset("BC"), frozenset("CD")
    assert (load[ab, "08:00"], load[bc, "08:00"], load[cd, "08:00"]) == (3, 2, 0)
    assert (load[ab, "08:15"], load[bc, "08:15"], load[cd, "08:15"]) == (1, 0, 2)


def test_road_loads_follow_the_routes_of_the_data_read_against():
    plan = tr.Plan({("F1-1", "08:00"): 3, ("F1-2", "08:00"): 0, ("F2-1", "08:00"): 2, ("F2-2", "08:00"): 0,
                    ("F1-1", "08:15"): 0, ("F1-2", "08:15"): 2, ("F2-1", "08:15"): 0, ("F2-2", "08:15"): 1})  # fmt: skip
    routes = [r.model_dump() for r in TRAFFIC.routes]
    routes[0]["places"] = ["A", "C", "D"]  # F1-1 now runs A, C, D
    swapped = tr.TrafficData.model_validate({**TRAFFIC.model_dump(), "routes": routes})
    assert tr.loads(TRAFFIC, plan)[frozenset("CD"), "08:00"] == 0
    assert tr.loads(swapped, plan)[frozenset("CD"), "08:00"] == 3


# -- project checks read at C speed or from tables kept on the data -------------------------------
def test_no_day_over_the_limit_gives_none():
    assert ac.first_over([1, 3, 2], 3) is None
    assert ac.first_over([], 0) is None


def test_the_first_day_over_the_limit_is_found():
    assert ac.first_over([1, 4, 5], 3) == 1


def test_the_first_day_over_the_limit_within_the_days_asked():
    assert ac.first_over([9, 1, 5], 3, range(1, 5)) == 2
    assert ac.first_over([9, 1, 2], 3, range(1, 3)) is None


def test_a_clusters_tasks_are_those_of_its_services_in_task_order():
    assert [t.id for t in MAINT.in_cluster("c1")] == ["T1", "T3"]
    assert MAINT.in_cluster("c9") == ()


# -- roster rows read inline when spelled as the instance spells them ----------------------------------
def _ward_lookups() -> dict[str, Names]:
    return sd.TASK.lookups(_ward())


def test_roster_entries_in_another_spelling_read_as_the_instances_own():
    ward, lk = _ward(), _ward_lookups()
    own = [{"person": "Ada", "day": "Fri", "shift": "Early"}, {"person": "Cleo", "day": "Sat", "shift": "Night"}]
    odd = [{"person": " ada", "day": "FRI", "shift": "early "}, {"person": "CLEO", "day": "sat", "shift": "night"}]
    assert sd.TASK.read_plan(ward, {"roster": odd}, lk, [])[0] == sd.TASK.read_plan(ward, {"roster": own}, lk, [])[0]


def test_a_roster_entry_that_is_no_object_is_named_by_its_place():
    rows = [{"person": "Ada", "day": "Fri", "shift": "Early"}, ["Bram", "Fri", "Early"]]
    assert sd.TASK.read_plan(_ward(), {"roster": rows}, _ward_lookups(), []) == (
        None,
        "roster entry 2 is not an object",
    )


def test_a_roster_entry_naming_an_unknown_shift_is_named_by_its_place():
    rows = [{"person": "Ada", "day": "Fri", "shift": "Late"}]
    assert sd.TASK.read_plan(_ward(), {"roster": rows}, _ward_lookups(), []) == (
        None,
        "roster entry 1 names unknown shift 'Late'",
    )
