"""Grading behaviours of Disaster Evacuation Planning held for the mutation campaign over
checkers/emergency/evacuation.py (campaign mutD), one behaviour each.

The stored emergency verdict sample (tests/data/mutation_moves_emergency.jsonl, graded by
tests/test_mutation_kills_checkers.py) judges whole plans against the solver model; what
it cannot reach is judged here on a small hand-written data model, through the checker's
own tables (its rule checks, its plan reader), so every test runs in milliseconds for
every mutant. The network lists its places out of alphabetical order, so a road named in
a reason shows whether it follows the network's place order.

The survivors argued equivalent are in scripts/mutation_equivalents.toml.
"""

from __future__ import annotations

from typing import Any

import pytest

from pbsolve.checkers.emergency import evacuation as ev
from pbsolve.checkers.emergency.evacuation import CHECKS, EvacData, Exit, Group, Plan, Route, Shelter
from pbsolve.network_kit import Road, RoadNetwork
from pbsolve.params import NoParams, Params
from pbsolve.schema import Rule

# North (two groups) -- Mid -- Camp (shelter S1), North -- Hall and Mid -- Hall (shelter S2);
# periods of 10 minutes. Places listed North, Mid, Camp, Hall: never alphabetical.
NET = RoadNetwork(
    places=("North", "Mid", "Camp", "Hall"),
    roads=(
        Road(a="North", b="Mid", minutes=11, capacity=50),
        Road(a="Mid", b="Camp", minutes=7, capacity=40),
        Road(a="North", b="Hall", minutes=12, capacity=60),
        Road(a="Mid", b="Hall", minutes=5, capacity=100),
    ),
)
DATA = EvacData(
    network=NET,
    period_minutes=10,
    periods=3,
    groups=(
        Group(id="G1", name="North residents", kind="residents", place="North", people=30, due=2, weight=1,
              priority=7),
        Group(id="G2", name="North care home", kind="care home", place="North", people=25, due=2, weight=4,
              priority=5, wheelchair=True, escort=True),
    ),
    shelters=(
        Shelter(id="S1", name="Camp school", place="Camp", capacity=40),
        Shelter(id="S2", name="Hall", place="Hall", capacity=60, accessible=True),
    ),
    routes=(
        Route(id="G1-1", group="G1", shelter="S1", places=("North", "Mid", "Camp")),  # 18 min: Mid-Camp at t+1
        Route(id="G1-2", group="G1", shelter="S2", places=("North", "Hall")),  # 12 min
        Route(id="G1-3", group="G1", shelter="S2", places=("North", "Mid", "Hall")),  # 16 min
        Route(id="G2-1", group="G2", shelter="S1", places=("North", "Mid", "Camp")),
        Route(id="G2-2", group="G2", shelter="S2", places=("North", "Hall")),
    ),
    exits=(Exit(place="North", capacity=40),),
)  # fmt: skip
GOOD = Plan({"G1": ("G1-1", 1), "G2": ("G2-2", 2)})
# no wheelchairs: every backup may lead to either shelter
NO_WHEELCHAIRS = ev.replaced(DATA, groups=tuple(g.model_copy(update={"wheelchair": False}) for g in DATA.groups))


def verdict(kind: str, plan: Plan, params: Params | None = None, data: EvacData = DATA) -> tuple[bool, str]:
    return CHECKS[kind](data, plan, params or NoParams())


def with_capacities(data: EvacData, **caps: int) -> EvacData:
    """``data`` with the roads named 'North_Mid' etc. holding these capacities."""
    roads = tuple(r.model_copy(update={"capacity": caps.get(f"{r.a}_{r.b}", r.capacity)}) for r in data.network.roads)
    return ev.replaced(data, network=data.network.model_copy(update={"roads": roads}))


# == names and data ============================================================================
def test_a_road_is_named_by_its_ends_in_the_networks_place_order() -> None:
    assert ev.road_name(frozenset(("Mid", "North")), NET) == "North–Mid"
    assert ev.road_name(("Camp", "Mid"), NET) == "Mid–Camp"


def test_a_road_named_without_a_network_lists_its_ends_alphabetically() -> None:
    assert ev.road_name(("Mid", "Camp")) == "Camp–Mid"


def test_replaced_data_changes_the_named_fields_and_keeps_the_others() -> None:
    longer = ev.replaced(DATA, periods=5)
    assert longer.periods == 5 and longer.model_dump(exclude={"periods"}) == DATA.model_dump(exclude={"periods"})


def test_a_current_plan_may_depart_a_group_in_the_last_period() -> None:
    current = ev.CurrentPlan(existing={"G1": ("G1-2", 3), "G2": ("G2-2", 1)})
    assert current.data_problems(DATA) == []


def test_a_current_plan_reports_a_missing_group_a_foreign_route_and_a_departure_out_of_range_together() -> None:
    current = ev.CurrentPlan(existing={"G2": ("G1-1", 4)})
    assert current.data_problems(DATA) == [
        "the current plan gives no route and departure for group 'G1'",
        "the current plan gives group 'G2' a route of another group",
        "the current plan departs group 'G2' outside periods 1..3",
    ]


def test_the_current_plan_a_recovery_counts_changes_against_is_each_groups_route_and_departure() -> None:
    assert ev.TASK.existing(DATA, GOOD) == {"G1": ["G1-1", 1], "G2": ["G2-2", 2]}


# == rule checks ===============================================================================
def test_the_road_capacity_reason_names_the_earliest_overloaded_period_first() -> None:
    """G1 overloads North-Mid in period 2, G2 (listed later) North-Hall in period 1."""
    narrow = with_capacities(DATA, North_Mid=20, North_Hall=20)
    plan = Plan({"G1": ("G1-1", 2), "G2": ("G2-2", 1)})
    assert verdict("road_capacity", plan, data=narrow) == (
        False,
        "25 people enter road North–Hall in period 1 (capacity 20)",
    )


def _two_places() -> EvacData:
    """A third group, at Mid, whose exits let 20 out per period (North's: 40)."""
    return ev.replaced(
        DATA,
        groups=(*DATA.groups, Group(id="G3", name="Mid flats", kind="residents", place="Mid", people=30, due=2,
                                    weight=1, priority=1)),
        routes=(*DATA.routes, Route(id="G3-1", group="G3", shelter="S2", places=("Mid", "Hall"))),
        exits=(Exit(place="North", capacity=40), Exit(place="Mid", capacity=20)),
    )  # fmt: skip


def test_the_exit_capacity_reason_names_the_earliest_crowded_period_first() -> None:
    plan = Plan({"G1": ("G1-2", 1), "G2": ("G2-2", 1), "G3": ("G3-1", 2)})
    assert verdict("exit_capacity", plan, data=_two_places()) == (
        False,
        "55 people leave North in period 1 (its exits let 40 out per period)",
    )


def test_the_exit_capacity_reason_names_crowded_places_of_one_period_alphabetically() -> None:
    plan = Plan({"G1": ("G1-2", 1), "G2": ("G2-2", 1), "G3": ("G3-1", 1)})
    assert verdict("exit_capacity", plan, data=_two_places()) == (
        False,
        "30 people leave Mid in period 1 (its exits let 20 out per period)",
    )


def test_a_closed_road_further_along_a_route_is_closed_from_the_period_the_group_enters_it() -> None:
    """G1 leaving in period 2 drives North-Mid for 11 minutes: it enters Mid-Camp in period 3."""
    closure = ev.RoadClosure(road=("Camp", "Mid"), period=3)
    assert verdict("road_closure", Plan({"G1": ("G1-1", 2), "G2": ("G2-2", 1)}), closure) == (
        False,
        "G1 enters the closed road Mid–Camp in period 3",
    )


def test_a_group_outside_the_vulnerable_ones_may_not_depart_before_them() -> None:
    ok, _ = verdict("vulnerable_first", GOOD, ev.VulnerableFirst(groups=["G2"]))
    assert not ok


def test_the_shelter_balance_reason_names_the_fullest_and_the_emptiest_shelter() -> None:
    assert verdict("shelter_balance", GOOD, ev.ShelterBalance(max=4)) == (
        False,
        "S1 receives 30 people and S2 25: more than 4 apart",
    )


def test_an_escort_team_back_from_its_trip_may_leave_again_in_the_next_period() -> None:
    """G1's route takes one travel period: leaving in period 1 its team is back by period 3."""
    escorted = ev.replaced(DATA, periods=5, groups=tuple(g.model_copy(update={"escort": True}) for g in DATA.groups))
    plan = Plan({"G1": ("G1-1", 1), "G2": ("G2-2", 4)})
    assert verdict("escort_teams", plan, ev.EscortTeams(teams=1), data=escorted) == (True, "holds")


def test_people_arriving_in_a_shelters_opening_period_are_not_early() -> None:
    """G1 leaves in period 1 and arrives in period 2, when S1 opens."""
    assert verdict("staged_opening", GOOD, ev.StagedOpening(shelter="S1", period=2, beds=0)) == (True, "holds")


def test_as_many_early_arrivals_as_open_beds_keep_a_staged_opening() -> None:
    assert verdict("staged_opening", GOOD, ev.StagedOpening(shelter="S1", period=3, beds=30)) == (True, "holds")


# == backups ===================================================================================
def test_a_wheelchair_groups_backup_to_a_shelter_that_is_not_accessible_fails() -> None:
    plan = Plan({"G1": ("G1-1", 1), "G2": ("G2-2", 1)}, {"G1": "G1-2", "G2": "G2-1"})
    assert verdict("backup_route", plan) == (False, "G2's backup G2-1 leads to a shelter that is not accessible")


def test_a_shelter_overfilled_with_no_road_failed_breaks_the_backup_rule() -> None:
    plan = Plan({"G1": ("G1-1", 1), "G2": ("G2-1", 2)}, {"G1": "G1-2", "G2": "G2-2"})
    assert verdict("backup_route", plan, data=NO_WHEELCHAIRS) == (
        False,
        "with no road failed, S1 would receive 55 people (capacity 40)",
    )


def test_a_road_failure_sends_only_the_groups_using_that_road_to_their_backups() -> None:
    """North-Hall failing moves G2 alone to S1 (30 + 25 > 40); the other failures move G1
    alone to S2 (55 <= 60); moving both at once would fit (25 and 30)."""
    plan = Plan({"G1": ("G1-1", 1), "G2": ("G2-2", 1)}, {"G1": "G1-2", "G2": "G2-1"})
    assert verdict("backup_route", plan, data=NO_WHEELCHAIRS) == (
        False,
        "if road North–Hall failed, S1 would receive 55 people (capacity 40)",
    )


def test_roads_no_group_uses_are_skipped_and_the_roads_after_them_still_fail() -> None:
    """North-Mid and Mid-Camp (listed first) carry nobody; North-Hall failing moves both groups to S1."""
    plan = Plan({"G1": ("G1-2", 1), "G2": ("G2-2", 2)}, {"G1": "G1-1", "G2": "G2-1"})
    assert verdict("backup_route", plan, data=NO_WHEELCHAIRS) == (
        False,
        "if road North–Hall failed, S1 would receive 55 people (capacity 40)",
    )


# == reading the plan ==========================================================================
BACKUP_RULE = [Rule(id="R1", kind="backup_route", tier="hard")]
G1_ROW = {"group": "G1", "route": "G1-1", "depart": 1}
LONG = "Z" * 50  # an unknown name longer than the 40 characters a reason quotes


def read(rows: Any, rules: list[Rule] | None = None) -> tuple[Plan | None, str]:
    return ev.TASK.read_plan(DATA, {"evacuation": rows}, ev.TASK.lookups(DATA), rules or [])


@pytest.mark.parametrize(
    ("second_row", "why"),
    [
        ("G2", "row 2 is not an object"),
        ({"group": "G2", "route": 5, "depart": 1}, "row 2 needs string fields 'group' and 'route'"),
        ({"group": LONG, "route": "G2-2", "depart": 1}, f"row 2 names unknown group {LONG[:40]!r}"),
        ({"group": "G2", "route": LONG, "depart": 1}, f"row 2 names unknown route {LONG[:40]!r}"),
        ({"group": "G2", "route": "G2-2"}, "row 2 (G2) needs 'depart', a period from 1 to 3"),
    ],
    ids=["not_an_object", "route_not_a_string", "unknown_group", "unknown_route", "no_depart"],
)
def test_an_unreadable_row_is_refused_with_its_row_number_from_one(second_row: Any, why: str) -> None:
    assert read([G1_ROW, second_row]) == (None, why)


@pytest.mark.parametrize("depart", ["2", True, 2.5, 0, 4], ids=["string", "bool", "fraction", "zero", "past_horizon"])
def test_a_departure_must_be_a_whole_number_period_of_the_horizon(depart: Any) -> None:
    plan, why = read([G1_ROW, {"group": "G2", "route": "G2-2", "depart": depart}])
    assert plan is None and why == "row 2 (G2) needs 'depart', a period from 1 to 3"


def test_a_departure_written_as_a_whole_float_reads_as_its_period() -> None:
    plan, _ = read([G1_ROW, {"group": "G2", "route": "G2-2", "depart": 2.0}])
    assert plan is not None and plan.assign == {"G1": ("G1-1", 1), "G2": ("G2-2", 2)}


@pytest.mark.parametrize("backup", [5, "G1-2"], ids=["not_a_string", "another_groups_route"])
def test_a_backup_must_name_one_of_the_groups_own_routes(backup: Any) -> None:
    rows = [{**G1_ROW, "backup": "G1-2"}, {"group": "G2", "route": "G2-2", "depart": 1, "backup": backup}]
    assert read(rows, BACKUP_RULE) == (None, "group G2 needs a 'backup' route from its own route list")


def test_a_plan_missing_a_group_is_refused_naming_it() -> None:
    assert read([G1_ROW]) == (None, "groups missing from the plan: G2")


def test_a_plan_read_without_a_backup_rule_carries_no_backups() -> None:
    """So a near-miss answer written from it has no 'backup' field."""
    plan, _ = read([{**G1_ROW, "backup": "G1-2"}, {"group": "G2", "route": "G2-2", "depart": 2}])
    assert plan is not None and plan.backup is None
    assert ev.TASK.plan_json(DATA, plan) == [G1_ROW, {"group": "G2", "route": "G2-2", "depart": 2}]
