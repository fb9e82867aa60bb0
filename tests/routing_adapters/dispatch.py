"""The registry suite's knowledge of Transportation Dispatch Planning: its answer variables
(x[from,to] arcs of the routes, y[job,vehicle]) in the model's canonical labelling of
interchangeable vehicles, single moves, and every distinct plan of a tiny instance."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.routing.dispatch import TASK_ID, DispatchData, Plan, neighbours
from pbsolve.schema import Instance, Rule
from tests.routing_adapters import TaskAdapter


def classes(d: DispatchData) -> list[list[str]]:
    """Vehicles of one type and battery: no rule or figure tells them apart."""
    by: dict[tuple[str, int | None], list[str]] = {}
    for v in d.vehicles:
        by.setdefault((v.type, v.battery), []).append(v.id)
    return list(by.values())


def canonical(d: DispatchData, plan: Plan) -> Plan:
    """The same routes with vehicles relabelled within each class so that their job sets,
    read as binary numbers (first job most significant), decrease along the vehicle list."""
    order = [j.id for j in d.jobs]
    routes = dict(plan.routes)
    for members in classes(d):
        row = {v: tuple(int(j in plan.routes[v]) for j in order) for v in members}
        ranked = sorted(members, key=lambda v: row[v], reverse=True)
        for target, source in zip(members, ranked):
            routes[target] = plan.routes[source]
    return Plan(routes)


class DispatchAdapter(TaskAdapter):
    task = TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> DispatchData:
        return DispatchData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        c = canonical(self._data(inst), plan)
        out: dict[str, int] = {}
        for v, jobs in c.routes.items():
            stops = ["depot", *jobs, "depot"] if jobs else []
            out |= {f"x[{a},{b}]": 1 for a, b in itertools.pairwise(stops)}
            out |= {f"y[{j},{v}]": 1 for j in jobs}
        return out

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        """The checker's one-move neighbours that state another answer (a move that only
        relabels interchangeable vehicles states the same one)."""
        here = self.assignment(inst, plan)
        return (p for p in neighbours(self._data(inst), plan) if self.assignment(inst, p) != here)

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        """Every set of routes (each job on one vehicle, every order), one per answer."""
        d = self._data(inst, data)
        ids = [j.id for j in d.jobs]
        seen: set[str] = set()
        for owners in itertools.product([v.id for v in d.vehicles], repeat=len(ids)):
            groups = {v.id: [j for j, o in zip(ids, owners) if o == v.id] for v in d.vehicles}
            for orders in itertools.product(*(itertools.permutations(g) for g in groups.values())):
                plan = Plan(dict(zip(groups, (tuple(o) for o in orders))))
                key = repr(sorted(self.assignment(inst, plan).items()))
                if key not in seen:
                    seen.add(key)
                    yield plan

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"vehicle": v, "jobs": list(jobs)} for v, jobs in existing.items()]

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        d = self._data(inst)
        return Plan({v.id: tuple(existing.get(v.id, ())) for v in d.vehicles})


ADAPTER = DispatchAdapter()
