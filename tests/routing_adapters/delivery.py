"""The registry suite's knowledge of Logistics Delivery Planning: its answer variables
(arcs x[vehicle,i,j] in the model's canonical labelling of interchangeable vehicles),
single moves (a stop or reload moved, two stops swapped) and every plan of a tiny
instance (one per answer)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

from pbsolve.checkers.routing import delivery as dl
from pbsolve.checkers.routing.delivery import RELOAD, DeliveryData, Plan
from pbsolve.schema import Instance, ObjectiveTerm, Rule
from tests.routing_adapters import TaskAdapter


def canonical(d: DeliveryData, plan: Plan, rules: Sequence[Rule], objective: Sequence[ObjectiveTerm]) -> Plan:
    """The same answer with each class of interchangeable vehicles ordered by the
    lowest-numbered stop of its routes (unused vehicles last), as the model keeps it."""
    routes = dict(plan.routes)
    n = len(d.stops)
    for members in dl.vehicle_classes(d, rules, objective):
        key = lambda r: min((d.index[s] for s in r if s != RELOAD), default=n + 1)  # noqa: E731
        ordered = sorted((plan.routes[v] for v in members), key=key)
        routes.update(zip(members, ordered))
    return Plan(routes)


def arcs(d: DeliveryData, plan: Plan) -> dict[str, int]:
    n = len(d.stops)
    out: dict[str, int] = {}
    for v in d.vehicles:
        route = plan.routes[v.id]
        if not route:
            continue
        nodes, reload = [0], n
        for x in route:
            if x == RELOAD:
                reload += 1
                nodes.append(reload)
            else:
                nodes.append(d.index[x])
        nodes.append(0)
        for i, j in itertools.pairwise(nodes):
            out[f"x[{v.id},{i},{j}]"] = 1
    return out


class DeliveryAdapter(TaskAdapter):
    task = dl.TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> DeliveryData:
        return DeliveryData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        d = self._data(inst)
        return arcs(d, canonical(d, plan, inst.rules, inst.objective))

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        return dl.neighbours(self._data(inst), plan)

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = self._data(inst, data)
        vehicles = [v.id for v in d.vehicles]
        ids = [s.id for s in d.stops]
        seen: set[str] = set()
        objective = inst.objective
        rec = inst.recovery
        if rec is not None and {r.id for r in rec.scenario} & {r.id for r in rules}:
            objective = rec.objective  # the recovery model counts changes: no vehicle is interchangeable
        for owner in itertools.product(vehicles, repeat=len(ids)):
            groups = {v: [s for s, o in zip(ids, owner) if o == v] for v in vehicles}
            for orders in itertools.product(*(list(itertools.permutations(groups[v])) for v in vehicles)):
                for routes in itertools.product(*(_with_reloads(o, d.reloads) for o in orders)):
                    plan = Plan(dict(zip(vehicles, routes)))
                    plan = canonical(d, plan, rules, objective)
                    key = repr(sorted(arcs(d, plan).items()))
                    if key not in seen:
                        seen.add(key)
                        yield plan

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        plan = self.existing_plan(inst, existing)
        return [{"vehicle": v, "stops": list(r)} for v, r in plan.routes.items() if r]

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        d = self._data(inst)
        routes: dict[str, tuple[str, ...]] = {}
        for v in d.vehicles:
            mine = {s: before for s, (w, before) in existing.items() if w == v.id}
            after: dict[str, list[str]] = {}
            for s in d.stops:
                if s.id in mine:
                    after.setdefault(mine[s.id], []).append(s.id)
            order: list[str] = []
            at = d.depot
            while after.get(at):
                nxt = after[at].pop(0)
                if at == d.depot and order:
                    order.append(RELOAD)
                order.append(nxt)
                at = nxt if after.get(nxt) else d.depot
            routes[v.id] = tuple(order)
        return Plan(routes)


def _with_reloads(order: tuple[str, ...], reloads: int) -> list[tuple[str, ...]]:
    """The order with 0..reloads reloads placed in distinct gaps between stops."""
    out = []
    gaps = range(1, len(order))
    for k in range(min(reloads, len(order) - 1) + 1 if order else 1):
        for chosen in itertools.combinations(gaps, k):
            route = list(order)
            for g in sorted(chosen, reverse=True):
                route.insert(g, RELOAD)
            out.append(tuple(route))
    return out


ADAPTER = DeliveryAdapter()
