"""Road networks for the families that plan over places: the instance data model (named
places joined by two-way roads with integer minutes and, where a task needs it, a
capacity per period), seeded generators of three shapes (a city grid with removed
streets, a ring with chords, a random geometric graph) and the shortest-path tables the
models, checkers and prompts all read.

It lives in the core because routing and emergency response both plan over networks: a
checker computes its travel figures from the same :class:`RoadNetwork` the model was
built from, with networkx, and never from a table the model wrote.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Sequence
from functools import cached_property, lru_cache
from typing import Literal

import networkx as nx
from pydantic import BaseModel, ConfigDict, PositiveInt, model_validator

Shape = Literal["grid", "ring", "geometric"]
SHAPES: tuple[Shape, ...] = ("grid", "ring", "geometric")


class Road(BaseModel):
    """A two-way road between places ``a`` and ``b`` (``a`` before ``b`` in the network's
    place order) taking ``minutes`` either way; ``capacity`` is how many units (vehicles,
    people) it carries per period, where the task has periods."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    a: str
    b: str
    minutes: PositiveInt
    capacity: PositiveInt | None = None

    @property
    def ends(self) -> frozenset[str]:
        return frozenset((self.a, self.b))


class RoadNetwork(BaseModel):
    """Places and the roads between them: connected, no road from a place to itself, at
    most one road per pair of places. Validation says which of these fails, so a malformed
    instance file is a clear error."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    places: tuple[str, ...]
    roads: tuple[Road, ...]

    @model_validator(mode="after")
    def _well_formed(self) -> RoadNetwork:
        if len(set(self.places)) != len(self.places):
            raise ValueError("network places must be distinct")
        known = set(self.places)
        seen: set[frozenset[str]] = set()
        for r in self.roads:
            if r.a not in known or r.b not in known:
                raise ValueError(f"road {r.a}-{r.b} names a place that is not in the network")
            if r.a == r.b:
                raise ValueError(f"road {r.a}-{r.b} joins a place to itself")
            if r.ends in seen:
                raise ValueError(f"two roads join {r.a} and {r.b}")
            seen.add(r.ends)
        if self.places and not nx.is_connected(self.graph):
            raise ValueError("the road network is not connected")
        return self

    @cached_property
    def graph(self) -> nx.Graph[str]:
        g: nx.Graph[str] = nx.Graph()
        g.add_nodes_from(self.places)
        for r in self.roads:
            g.add_edge(r.a, r.b, minutes=r.minutes, capacity=r.capacity)
        return g

    @cached_property
    def road_by_ends(self) -> dict[frozenset[str], Road]:
        return {r.ends: r for r in self.roads}

    def road(self, a: str, b: str) -> Road | None:
        """The road joining ``a`` and ``b`` (either order), or None when there is none."""
        return self.road_by_ends.get(frozenset((a, b)))

    @cached_property
    def minutes(self) -> dict[str, dict[str, int]]:
        """Shortest travel minutes between every pair of places (Dijkstra over all roads),
        computed once per distinct network: every variant of one instance's data (uncertain
        values, added rules) parses to a new object with the same roads."""
        return _minutes_of(self)

    def without(self, closed: Iterable[frozenset[str]]) -> RoadNetwork | None:
        """This network with the named roads closed, or None when closing them cuts it."""
        shut = set(closed)
        g = self.graph.copy()
        g.remove_edges_from((r.a, r.b) for r in self.roads if r.ends in shut)
        if not nx.is_connected(g):
            return None
        return RoadNetwork(places=self.places, roads=tuple(r for r in self.roads if r.ends not in shut))

    def path_minutes(self, path: Sequence[str]) -> int:
        """Minutes along ``path`` road by road; ValueError names the first missing road."""
        total = 0
        for a, b in itertools.pairwise(path):
            r = self.road(a, b)
            if r is None:
                raise ValueError(f"there is no road from {a} to {b}")
            total += r.minutes
        return total


@lru_cache(maxsize=256)
def _minutes_of(network: RoadNetwork) -> dict[str, dict[str, int]]:
    return shortest_minutes(network)


def shortest_minutes(network: RoadNetwork) -> dict[str, dict[str, int]]:
    """All-pairs shortest travel minutes, as plain ints keyed by place in network order."""
    lengths = dict(nx.all_pairs_dijkstra_path_length(network.graph, weight="minutes"))
    return {a: {b: int(lengths[a][b]) for b in network.places} for a in network.places}


# -- generators ---------------------------------------------------------------------------
def sample_network(
    rng: random.Random,
    places: Sequence[str],
    shape: Shape,
    minutes: tuple[int, int],
    capacity: tuple[int, int] | None = None,
) -> RoadNetwork:
    """A connected network over ``places`` in the given shape, with road minutes (and,
    when asked, capacities) drawn uniformly from the inclusive ranges. Only ``rng`` is
    read, so the same seed gives the same network byte for byte."""
    if len(places) < 2:
        raise ValueError("a network needs at least two places")
    lo, hi = minutes
    if not 1 <= lo <= hi:
        raise ValueError(f"road minutes must be a range of positive integers, got {minutes}")
    pairs = _PAIRS[shape](rng, len(places))
    roads = []
    for i, j in sorted({(min(p), max(p)) for p in pairs}):
        cap = rng.randint(*capacity) if capacity else None
        roads.append(Road(a=places[i], b=places[j], minutes=rng.randint(lo, hi), capacity=cap))
    return RoadNetwork(places=tuple(places), roads=tuple(roads))


def _grid_pairs(rng: random.Random, n: int) -> list[tuple[int, int]]:
    """A city grid of ``n`` blocks (rows of ``ceil(sqrt n)``) with about a fifth of its
    streets removed, never one whose removal would cut the grid."""
    cols = math.ceil(math.sqrt(n))
    pairs = [(k, k + 1) for k in range(n - 1) if (k + 1) % cols] + [(k, k + cols) for k in range(n - cols)]
    g = nx.Graph(pairs)
    g.add_nodes_from(range(n))
    for p in rng.sample(pairs, len(pairs) // 5):
        g.remove_edge(*p)
        if not nx.is_connected(g):
            g.add_edge(*p)
    return sorted((min(e), max(e)) for e in g.edges)


def _ring_pairs(rng: random.Random, n: int) -> list[tuple[int, int]]:
    """A ring road through every place plus about n/3 chords across it."""
    pairs = [(k, (k + 1) % n) for k in range(n)] if n > 2 else [(0, 1)]
    chords = [(i, j) for i in range(n) for j in range(i + 2, n) if not (i == 0 and j == n - 1)]
    return pairs + rng.sample(chords, min(len(chords), n // 3))


def _geometric_pairs(rng: random.Random, n: int) -> list[tuple[int, int]]:
    """Places as random points in the unit square, joined when close (radius chosen so
    the graph is usually connected) and then along a minimum spanning tree, so it always is."""
    pts = [(rng.random(), rng.random()) for _ in range(n)]
    radius = 1.6 * math.sqrt(math.log(n + 1) / (math.pi * n))
    g: nx.Graph[int] = nx.Graph()
    g.add_nodes_from(range(n))
    complete: nx.Graph[int] = nx.Graph()
    for i in range(n):
        for j in range(i + 1, n):
            d = math.dist(pts[i], pts[j])
            complete.add_edge(i, j, d=d)
            if d <= radius:
                g.add_edge(i, j)
    g.add_edges_from(nx.minimum_spanning_edges(complete, weight="d", data=False))
    return sorted((min(e), max(e)) for e in g.edges)


_PAIRS = {"grid": _grid_pairs, "ring": _ring_pairs, "geometric": _geometric_pairs}


# -- rendering ----------------------------------------------------------------------------
def road_rows(network: RoadNetwork) -> list[list[str]]:
    """One table row per road (from, to, minutes[, capacity]) in stored order, for prompts."""
    with_cap = any(r.capacity is not None for r in network.roads)
    return [[r.a, r.b, str(r.minutes), *([str(r.capacity)] if with_cap else [])] for r in network.roads]


__all__ = ["SHAPES", "Road", "RoadNetwork", "Shape", "road_rows", "sample_network", "shortest_minutes"]
