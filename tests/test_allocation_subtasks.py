"""The fifth subtask of every Allocation task type carries the structure its name promises,
and its prompt states that structure."""

from __future__ import annotations

from pbsolve.checkers.allocation.data import EducationData, GroupingData, MaterialData, ProcurementData
from pbsolve.schema import Instance
from tests.instances import subtask_instances


def _instances(task: str, subtask: str, n: int = 4, size: str = "small") -> list[Instance]:
    return subtask_instances(task, subtask, n, size)


def test_a_seasonal_peak_week_needs_more_than_all_suppliers_deliver_in_a_week_so_stock_is_bought_ahead():
    for inst in _instances("procurement_planning", "seasonal_demand"):
        d = ProcurementData.model_validate(inst.data)
        totals = [sum(i.demand[t] for i in d.items) for t in range(len(d.periods))]
        peak = totals.index(max(totals))
        weekly = sum(s.capacity for s in d.suppliers if s.offers)
        assert peak >= 2
        assert totals[peak] > weekly + sum(i.initial_stock for i in d.items)
        assert f"{d.periods[peak]} is that week: its demand (all items together) is more than all the suppliers" in (
            inst.prompt
        )
        if inst.reference.get("feasible"):  # more arrives before the peak than is used before it
            early = sum(
                r["quantity"]
                for r in inst.reference["orders"]
                if d.period_index[r["week"]] + d.supplier_by_id[r["supplier"]].lead_time < peak
            )
            assert early > sum(totals[:peak])


def test_vaccines_are_held_at_one_cold_store_and_requested_only_by_some_clinics():
    for inst in _instances("material_allocation", "vaccine_cold_chain"):
        d = MaterialData.model_validate(inst.data)
        cold = d.materials[0].id
        assert cold == "Vaccines" and len(d.materials) >= 2
        stores = [x.id for x in d.depots if x.stock.get(cold, 0) > 0]
        fridges = [s.id for s in d.sites if cold in s.requests]
        assert len(stores) == 1
        assert 1 <= len(fridges) < len(d.sites)
        assert all(set(s.requests) - {cold} for s in d.sites)  # every clinic wants something kept at room temperature
        assert all(x.stock for x in d.depots)  # no depot stands empty
        assert f"only {stores[0]} has a cold store to hold them" in inst.prompt


def test_a_tiny_cold_chain_takes_a_second_material_and_one_depot_fewer_to_stay_enumerable():
    for inst in _instances("material_allocation", "vaccine_cold_chain", n=3, size="tiny"):
        d = MaterialData.model_validate(inst.data)
        assert (len(d.materials), len(d.depots), len(d.sites)) == (2, 2, 2)


def test_part_time_tutors_miss_whole_days_and_the_availability_rule_always_holds_them_to_it():
    for inst in _instances("educational_resource_planning", "part_time_tutors"):
        d = EducationData.model_validate(inst.data)
        assert "availability" in {r.kind for r in inst.rules}
        part_timers = [t for t in d.teachers if t.unavailable]
        assert 1 <= len(part_timers) <= max(1, len(d.teachers) // 2)
        for t in part_timers:
            off_days = {s.day for s in d.slots if s.id in t.unavailable}
            assert set(t.unavailable) == {s.id for s in d.slots if s.day in off_days}  # whole days only
            assert off_days < {s.day for s in d.slots}  # and never the whole week
            free = [s.id for s in d.slots if s.id not in t.unavailable]
            assert f"{t.id} only in {free[0]}" in inst.prompt


def test_every_hackathon_team_must_have_each_role_and_each_role_has_one_student_per_team():
    for inst in _instances("student_grouping", "hackathon_teams"):
        d = GroupingData.model_validate(inst.data)
        per = len(d.students) // d.groups
        assert len(d.tracks) == per  # as many roles as team places (at these sizes)
        assert all(sum(1 for s in d.students if s.track == t) == d.groups for t in d.tracks)
        diversity = [r for r in inst.rules if r.kind == "diversity"]
        assert len(diversity) == 1 and diversity[0].params["min"] == len(d.tracks)
        if inst.reference.get("feasible"):
            for team in inst.reference["groups"]:
                assert sorted(d.student_by_id[s].track for s in team) == d.tracks
        assert "every team needs a student in each role" in inst.prompt
