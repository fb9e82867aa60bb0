"""Routing verdicts held for the mutation campaign, one behaviour each, on small
hand-written data: urban traffic first, transportation dispatch after it.

Urban traffic (checkers/routing/traffic.py): two flows over a square of roads plus one
road no route uses::

    A --5-- B --5-- D        F1: A -> D by R1 (A B D) or R2 (A C D), 3 vehicles a period
    |     /         |        F2: B -> D by S1 (B D) or S2 (B A C D), 1 vehicle a period
    6   1 (unused)  6
    |  /            |
    C ------6-------+

Each test grades one plan with one rule (or reads one answer) and asserts the verdict the
rule's wording gives. The survivors argued equivalent are in scripts/mutation_equivalents.toml.
"""

from __future__ import annotations

from typing import Any

import pytest

from pbsolve.checker_kit import MAX_QUANTITY
from pbsolve.checkers.routing import dispatch as dp
from pbsolve.checkers.routing import traffic as tr
from pbsolve.network_kit import Road, RoadNetwork
from pbsolve.params import NoParams
from pbsolve.schema import ObjectiveTerm, Rule

PERIODS = ("p1", "p2")
ROUTES = {"R1": ("F1", "ABD"), "R2": ("F1", "ACD"), "S1": ("F2", "BD"), "S2": ("F2", "BACD")}


def _data(capacity: dict[str, int] | None = None, f1_demand: tuple[int, int] = (3, 3)) -> tr.TrafficData:
    """The square network; ``capacity`` overrides a road's (by its two places, e.g. 'AC')."""
    caps = {"AB": 10, "BD": 10, "AC": 10, "CD": 10, "BC": 10, **(capacity or {})}
    minutes = {"AB": 5, "BD": 5, "AC": 6, "CD": 6, "BC": 1}
    roads = tuple(Road(a=k[0], b=k[1], minutes=minutes[k], capacity=caps[k]) for k in minutes)
    return tr.TrafficData(
        network=RoadNetwork(places=("A", "B", "C", "D"), roads=roads),
        periods=PERIODS,
        period_minutes=60,
        flows=(
            tr.Flow(id="F1", name="F1", vehicle="cars", origin="A", destination="D", demand=f1_demand, points=1),
            tr.Flow(id="F2", name="F2", vehicle="buses", origin="B", destination="D", demand=(1, 1), points=2),
        ),
        routes=tuple(tr.Route(id=rid, flow=f, places=tuple(p)) for rid, (f, p) in ROUTES.items()),
        levels=tuple(tr.Level(a=k[0], b=k[1], free=5, delay=1) for k in minutes),
    )


def _plan(backup: dict[str, str] | None = None, **rows: tuple[int, int]) -> tr.Plan:
    """Vehicles per route and period (routes not named carry none): F1 on R1 and F2 on S1
    unless told otherwise."""
    rows = rows or {"R1": (3, 3), "S1": (1, 1)}
    vehicles = {(rid, p): rows.get(rid, (0, 0))[i] for rid in ROUTES for i, p in enumerate(PERIODS)}
    return tr.Plan(vehicles, backup)


def _passes(kind: str, plan: tr.Plan, data: tr.TrafficData | None = None, **params: Any) -> bool:
    return tr.CHECKS[kind](data or _data(), plan, tr.RULE_PARAMS[kind](**params))[0]


# -- incident_backup ----------------------------------------------------------------------------
def test_incident_backup_fails_a_plan_naming_no_backup_route() -> None:
    assert not _passes("incident_backup", _plan(), roads=[("A", "B")])


def test_incident_backup_fails_a_backup_that_is_another_flows_route() -> None:
    assert not _passes("incident_backup", _plan({"F1": "S1", "F2": "S1"}), roads=[("A", "B")])


def test_incident_backup_fails_a_backup_along_a_road_that_may_fail_even_with_room_to_spare() -> None:
    """R1 runs along A-B; every road has room for every vehicle, so only the backup's
    own road tells."""
    assert not _passes("incident_backup", _plan({"F1": "R1", "F2": "S1"}), roads=[("A", "B")])


def test_incident_backup_fails_when_the_rerouted_vehicles_overfill_a_backup_road() -> None:
    """With A-B failed F1's 3 vehicles take R2 along A-C, which carries 1: nothing is on
    A-C in the plan itself."""
    plan = _plan({"F1": "R2", "F2": "S1"})
    assert _passes("road_capacity", plan, _data({"AC": 1}))
    assert not _passes("incident_backup", plan, _data({"AC": 1}), roads=[("A", "B")])


def test_incident_backup_passes_when_every_rerouted_vehicle_fits() -> None:
    assert _passes("incident_backup", _plan({"F1": "R2", "F2": "S1"}), _data({"AC": 3}), roads=[("A", "B")])


# -- main_route_share ------------------------------------------------------------------------
def test_main_route_share_fails_two_of_three_vehicles_against_67_percent() -> None:
    """200 < 201: a hair under the share still fails."""
    assert not _passes("main_route_share", _plan(R1=(2, 3), R2=(1, 0), S1=(1, 1)), flows=["F1"], percent=67)


# -- corridor_balance ------------------------------------------------------------------------
def test_corridor_balance_counts_a_road_no_route_uses_as_carrying_nothing_when_named_first() -> None:
    assert not _passes("corridor_balance", _plan(), first=("B", "C"), second=("A", "B"), max=2)


def test_corridor_balance_counts_a_road_no_route_uses_as_carrying_nothing_when_named_second() -> None:
    assert not _passes("corridor_balance", _plan(), first=("A", "B"), second=("B", "C"), max=2)


def test_corridor_balance_passes_a_difference_of_exactly_max_against_an_unused_road() -> None:
    assert _passes("corridor_balance", _plan(), first=("B", "C"), second=("A", "B"), max=3)


# -- route_stability -------------------------------------------------------------------------
def test_route_stability_passes_a_change_of_exactly_max() -> None:
    assert _passes("route_stability", _plan(R1=(3, 1), R2=(0, 2), S1=(1, 1)), max=2)


# -- exposure_budget -------------------------------------------------------------------------
def test_exposure_budget_passes_a_total_of_exactly_max() -> None:
    assert _passes("exposure_budget", _plan(), roads=[("A", "B")], max=6)


def test_exposure_budget_adds_the_periods_together() -> None:
    """3 vehicles in each period stay under 5, their total 6 does not."""
    assert not _passes("exposure_budget", _plan(), roads=[("A", "B")], max=5)


def test_exposure_budget_passes_a_road_no_route_uses_with_max_zero() -> None:
    assert _passes("exposure_budget", _plan(), roads=[("B", "C")], max=0)


# -- objective ---------------------------------------------------------------------------------
def test_an_unknown_objective_kind_is_refused_by_name() -> None:
    term = ObjectiveTerm(id="o", kind="fuel")
    with pytest.raises(ValueError, match="unknown objective kind 'fuel'"):
        tr.objective_value(_data(), _plan(), term, NoParams())


def test_current_flows_reads_a_changes_terms_rows_by_route_and_period() -> None:
    term = ObjectiveTerm(id="o", kind="changes", params={"existing": [["R1", "p1", 2], ["S1", "p2", 1]]})
    assert tr.current_flows(term) == {("R1", "p1"): 2, ("S1", "p2"): 1}


# -- reading the plan ----------------------------------------------------------------------------
BACKUP_RULE = Rule(id="R1", kind="incident_backup", tier="hard", params={"roads": [["A", "B"]]})


def _read(flows: dict[str, Any], rules: list[Rule] | None = None, d: tr.TrafficData | None = None) -> tuple[Any, str]:
    d = d or _data()
    return tr.TASK.read_plan(d, {"flows": flows}, tr.TASK.lookups(d), rules or [])


def test_a_plan_without_the_backup_rule_reads_with_no_backups() -> None:
    plan, _ = _read({"F1": {"R1": [3, 3]}, "F2": {"S1": [1, 1]}})
    assert plan is not None and plan.backup is None


def test_a_backup_listed_before_the_routes_still_reads_every_route() -> None:
    plan, why = _read({"F1": {"backup": "R2", "R1": [3, 3]}, "F2": {"backup": "S1", "S1": [1, 1]}}, [BACKUP_RULE])
    assert why == "complete plan"
    assert plan.vehicles["R1", "p1"] == 3 and plan.backup == {"F1": "R2", "F2": "S1"}


def test_a_plan_missing_a_flow_is_refused_naming_it() -> None:
    assert _read({"F1": {"R1": [3, 3]}}) == (None, "flows missing from the plan: F2")


def test_a_flow_named_twice_by_spelling_is_refused() -> None:
    plan, why = _read({"F1": {"R1": [3, 3], "r1": [3, 3]}, "F2": {"S1": [1, 1]}})
    assert (plan, why) == (None, "route R1 appears more than once")


def test_an_unknown_flow_is_named_by_its_first_40_characters() -> None:
    name = "x" * 45
    assert _read({name: {}}) == (None, f"'flows' names unknown flow {'x' * 40!r}")


def test_an_unknown_route_is_named_by_its_first_40_characters() -> None:
    name = "y" * 45
    assert _read({"F1": {name: [3, 3]}}) == (None, f"flow F1 names unknown route {'y' * 40!r}")


@pytest.mark.parametrize(
    "counts",
    [[3], 3, [True, 3], [-1, 3]],
    ids=["one count for two periods", "not a list", "a boolean count", "a negative count"],
)
def test_route_counts_must_be_a_list_of_whole_vehicles_one_per_period(counts: Any) -> None:
    """The other route makes up each period's demand of 3, so only the counts' form tells."""
    other = [3 - c if isinstance(c, int) else 0 for c in counts] if isinstance(counts, list) else [0, 0]
    plan, why = _read({"F1": {"R1": counts, "R2": other}, "F2": {"S1": [1, 1]}})
    assert (plan, why) == (None, "route R1 of F1 needs a list of 2 whole vehicle counts (one per period)")


def test_a_count_of_exactly_the_largest_quantity_is_read() -> None:
    d = _data(f1_demand=(MAX_QUANTITY, 0))
    plan, why = _read({"F1": {"R1": [MAX_QUANTITY, 0]}, "F2": {"S1": [1, 1]}}, d=d)
    assert why == "complete plan" and plan.vehicles["R1", "p1"] == MAX_QUANTITY


def test_a_missing_backup_is_refused_when_the_backup_rule_is_on() -> None:
    plan, why = _read({"F1": {"R1": [3, 3]}, "F2": {"S1": [1, 1], "backup": "S1"}}, [BACKUP_RULE])
    assert (plan, why) == (None, "flow F1 needs a 'backup' route from its own routes")


def test_a_backup_from_another_flows_routes_is_refused() -> None:
    plan, why = _read({"F1": {"R1": [3, 3], "backup": "S1"}, "F2": {"S1": [1, 1], "backup": "S1"}}, [BACKUP_RULE])
    assert (plan, why) == (None, "flow F1 needs a 'backup' route from its own routes")


# == transportation dispatch (checkers/routing/dispatch.py) =====================================
# Depot H; roads H-P 10, P-Q 10, H-Q 15 minutes. J1 P->H, J2 Q->P, J3 H->P, each 5 minutes of
# handling. V1 is a van without a battery, V2 an electric van with 30 minutes of charge.
# V1 doing J1 alone: 10 empty to P, starts at 10, 10 loaded back to H, 5 handling: done at 25.
def _dispatch(hp: int = 10, j2_release: int = 0) -> dp.DispatchData:
    roads = (Road(a="H", b="P", minutes=hp), Road(a="P", b="Q", minutes=10), Road(a="H", b="Q", minutes=15))

    def job(jid: str, origin: str, dest: str, release: int = 0) -> dp.Job:
        return dp.Job(
            id=jid, name=jid, needs="van", origin=origin, dest=dest, handling=5, release=release, due=25,
            weight=1, points=1, load=2,
        )  # fmt: skip

    return dp.DispatchData(
        network=RoadNetwork(places=("H", "P", "Q"), roads=roads),
        depot="H",
        shift=200,
        units="parcels",
        vehicles=(dp.Vehicle(id="V1", type="van"), dp.Vehicle(id="V2", type="van", battery=30)),
        jobs=(job("J1", "P", "H"), job("J2", "Q", "P", j2_release), job("J3", "H", "P")),
    )


def _routes(v1: tuple[str, ...] = (), v2: tuple[str, ...] = ()) -> dp.Plan:
    return dp.Plan({"V1": v1, "V2": v2})


def _dispatch_verdict(kind: str, plan: dp.Plan, data: dp.DispatchData | None = None, **params: Any) -> Any:
    return dp.CHECKS[kind](data or _dispatch(), plan, dp.RULE_PARAMS[kind](**params))


def test_dispatch_hard_deadline_passes_a_job_finishing_exactly_at_its_due_minute() -> None:
    assert _dispatch_verdict("hard_deadline", _routes(("J1",), ("J2", "J3")), jobs=["J1"])[0]


def test_dispatch_max_wait_passes_a_wait_of_exactly_max() -> None:
    """V1 reaches Q at 15 and J2 is released at 18."""
    assert _dispatch_verdict("max_wait", _routes(("J2",), ("J1", "J3")), _dispatch(j2_release=18), max=3)[0]


def test_dispatch_max_wait_names_the_minutes_waited() -> None:
    verdict = _dispatch_verdict("max_wait", _routes(("J2",), ("J1", "J3")), _dispatch(j2_release=18), max=2)
    assert verdict == (False, "V1 waits 3 minutes for J2 (at most 2)")


def test_dispatch_direct_start_names_the_job_that_is_first_instead() -> None:
    verdict = _dispatch_verdict("direct_start", _routes(("J1", "J2"), ("J3",)), jobs=["J2"])
    assert verdict == (False, "J2 is not the first job of V1 (J1 is)")


def test_dispatch_battery_checks_an_electric_vehicle_listed_after_one_without_a_battery() -> None:
    """V2 drives 15 empty to Q and 10 loaded to P: 5 of 30 minutes left."""
    assert not _dispatch_verdict("battery", _routes(("J1",), ("J2", "J3")), reserve=10)[0]


def test_dispatch_battery_passes_a_charge_of_exactly_the_reserve_after_a_job() -> None:
    """V2 drives 10 empty to P and 10 loaded back to the depot: 10 left, no drive home."""
    assert _dispatch_verdict("battery", _routes(("J2", "J3"), ("J1",)), reserve=10)[0]


def test_dispatch_timelines_of_one_plan_are_worked_out_for_each_data_apart() -> None:
    """The same plan against data whose road H-P takes 20 minutes finishes J1 later."""
    plan = _routes(("J1",), ("J2", "J3"))
    assert dp.finishes(_dispatch(), plan)["J1"] == 25
    assert dp.finishes(_dispatch(hp=20), plan)["J1"] == 45


def test_dispatch_predecessors_give_each_job_the_stop_before_it() -> None:
    assert dp.predecessors({"V1": ["J1", "J2"], "V2": ["J3"]}) == {"J1": "depot", "J2": "J1", "J3": "depot"}


def test_dispatch_changes_count_the_jobs_whose_stop_before_changed() -> None:
    """J2 now follows J3 instead of J1; J1 and J3 still start from the depot."""
    term = ObjectiveTerm(id="o", kind="changes", params={"existing": {"V1": ["J1", "J2"], "V2": ["J3"]}})
    tp = dp.CurrentRoutes(existing={"V1": ["J1", "J2"], "V2": ["J3"]})
    assert dp.TASK.objective_value(_dispatch(), _routes(("J1",), ("J3", "J2")), term, tp) == 1


def test_dispatch_an_unknown_objective_kind_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown objective kind 'fuel'"):
        dp.objective_value(_dispatch(), _routes(("J1", "J2", "J3")), ObjectiveTerm(id="o", kind="fuel"), NoParams())


def test_dispatch_replaced_changes_only_the_named_fields() -> None:
    d = _dispatch()
    new = dp.replaced(d, shift=100)
    assert new.shift == 100 and new.jobs == d.jobs and new.vehicles == d.vehicles and new is not d


def _read_routes(routes: Any) -> tuple[Any, str]:
    d = _dispatch()
    return dp.TASK.read_plan(d, {"routes": routes}, dp.TASK.lookups(d), [])


def test_dispatch_a_route_that_is_not_an_object_is_refused_by_its_number() -> None:
    assert _read_routes(["V1"]) == (None, "route 1 is not an object")


def test_dispatch_a_job_given_as_a_number_is_refused_as_unknown() -> None:
    assert _read_routes([{"vehicle": "V1", "jobs": [5]}]) == (None, "route 1 names unknown job '5'")


def test_dispatch_an_unknown_job_is_named_by_its_first_40_characters() -> None:
    got = _read_routes([{"vehicle": "V1", "jobs": ["z" * 45]}])
    assert got == (None, f"route 1 names unknown job {'z' * 40!r}")


def test_dispatch_routes_missing_jobs_are_refused_naming_them() -> None:
    got = _read_routes([{"vehicle": "V1", "jobs": ["J1"]}])
    assert got == (None, "jobs missing from the routes: J2, J3")


def test_dispatch_fleet_cap_fails_more_vehicles_of_the_type_going_out_than_max() -> None:
    verdict = _dispatch_verdict("fleet_cap", _routes(("J1",), ("J2", "J3")), type="van", max=1)
    assert verdict == (False, "2 vehicles of type van go out (V1, V2; at most 1)")


def test_dispatch_fleet_cap_passes_exactly_max_vehicles_of_the_type_going_out() -> None:
    assert _dispatch_verdict("fleet_cap", _routes(("J1",), ("J2", "J3")), type="van", max=2)[0]


def test_dispatch_fleet_cap_does_not_count_a_vehicle_that_does_no_job() -> None:
    assert _dispatch_verdict("fleet_cap", _routes(("J1", "J2", "J3")), type="van", max=1)[0]


def test_dispatch_existing_lists_each_used_vehicles_jobs_in_order() -> None:
    """What a recovery plan's changes are counted against: an unused vehicle is left out."""
    assert dp.TASK.existing(_dispatch(), _routes(("J2", "J1", "J3"))) == {"V1": ["J2", "J1", "J3"]}


def test_traffic_replaced_changes_only_the_named_fields() -> None:
    d = _data()
    new = tr.replaced(d, period_minutes=30)
    assert new.period_minutes == 30 and new.flows == d.flows and new.routes == d.routes and new is not d
