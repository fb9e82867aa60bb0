"""The registry suite's knowledge of Commuting Planning: its answer variables (one per
commuter and trip), single moves (one commuter's trip exchanged for another of their
trips) and every plan of a tiny instance (the product of the commuters' trips).

Trips come from the model's enumeration and become checker plans through the checker's
own replay (:func:`pbsolve.checkers.routing.commuting.trip_of`), so every plan judged
here is one an answer could state."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.routing.commuting import TASK_ID, CommuteData, Plan, Trip, trip_key, trip_of
from pbsolve.kit import parsed
from pbsolve.models.routing.commuting import trips
from pbsolve.schema import Instance, Rule
from tests.routing_adapters import TaskAdapter

MAX_PLANS = 25_000


def _data(inst: Instance, data: dict | None = None) -> CommuteData:
    return parsed(CommuteData, inst.data if data is None else data)


def _trips(d: CommuteData) -> dict[str, list[Trip]]:
    """Commuter -> every trip, as the checker replays it."""
    out: dict[str, list[Trip]] = {}
    for c in d.commuters:
        replayed = []
        for o in trips(d)[c.id]:
            t, why = trip_of(d, c, o.legs)
            assert t is not None, why
            replayed.append(t)
        out[c.id] = replayed
    return out


class CommutingAdapter(TaskAdapter):
    task = TASK_ID

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        return {f"y[{cid},{trip_key(t.legs)}]": 1 for cid, t in plan.trips.items()}

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        d = _data(inst)
        for cid, options in _trips(d).items():
            for t in options:
                if t.legs != plan.trips[cid].legs:
                    yield Plan({**plan.trips, cid: t})

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        d = _data(inst, data)
        by = _trips(d)
        ids = [c.id for c in d.commuters]
        for combo in itertools.product(*(by[c] for c in ids)):
            yield Plan(dict(zip(ids, combo)))

    def enumerable(self, inst: Instance) -> bool:
        d = _data(inst)
        return math.prod(len(v) for v in trips(d).values()) <= MAX_PLANS

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        rows = []
        for cid, legs in existing.items():
            out = [
                {"mode": "ride", "line": leg[1], "departs": leg[2]}
                if leg[0] == "ride"
                else {"mode": leg[0], "to": leg[1]}
                for leg in legs
            ]
            rows.append({"commuter": cid, "legs": out, "arrival": ""})
        return rows

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        d = _data(inst)
        by_words = {c.id: {tuple(tuple(w) for w in _words(t)): t for t in _trips(d)[c.id]} for c in d.commuters}
        return Plan({cid: by_words[cid][tuple(tuple(w) for w in legs)] for cid, legs in existing.items()})


def _words(t: Trip) -> list[list[str]]:
    from pbsolve.checkers.routing.commuting import leg_words

    return [leg_words(leg) for leg in t.legs]


ADAPTER = CommutingAdapter()
