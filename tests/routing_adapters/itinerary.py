"""The registry suite's knowledge of Travel Itinerary Planning: its answer variables (the
arcs of each day's circuit, self-loops for skipped stops), single moves and every plan of
a tiny instance."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.routing.itinerary import TASK_ID, Plan, TripData, neighbours
from pbsolve.models.routing.itinerary import END, START, arc_name
from pbsolve.schema import Instance, Rule
from tests.routing_adapters import TaskAdapter


def _data(inst: Instance, data: dict | None = None) -> TripData:
    return TripData.model_validate(inst.data if data is None else data)


class ItineraryAdapter(TaskAdapter):
    task = TASK_ID

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        d = _data(inst)
        out: dict[str, int] = {}
        for x in d.days:
            route = [START, *plan.days[x.id], END]
            out |= {arc_name(x.id, a, b): 1 for a, b in itertools.pairwise(route)}
            nodes = [s.id for s in d.sights] + [t.id for t in d.stops_of(x.id)]
            out |= {arc_name(x.id, s, s): 1 for s in nodes if s not in plan.days[x.id]}
        return out

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        return neighbours(_data(inst), plan)

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        """Each sight on no day or one day, each fixed stop in or out of its day, every order."""
        d = _data(inst, data)
        days = [x.id for x in d.days]
        for where in itertools.product([None, *days], repeat=len(d.sights)):
            for keep in itertools.product([False, True], repeat=len(d.stops)):
                per_day = {
                    day: [s.id for s, w in zip(d.sights, where) if w == day]
                    + [t.id for t, k in zip(d.stops, keep) if k and t.day == day]
                    for day in days
                }
                for orders in itertools.product(*(itertools.permutations(per_day[day]) for day in days)):
                    yield Plan(dict(zip(days, orders)))

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"day": day, "stops": list(stops)} for day, stops in existing.items()]

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        return Plan({day: tuple(stops) for day, stops in existing.items()})


ADAPTER = ItineraryAdapter()
