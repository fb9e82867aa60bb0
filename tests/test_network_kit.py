"""The network kit: generated networks are connected and reproducible, malformed network
data is refused with a reason, and the shortest-minute table equals a brute-force one."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from pbsolve.network_kit import SHAPES, Road, RoadNetwork, road_rows, sample_network

PLACES = tuple(f"P{k}" for k in range(12))


def floyd(network: RoadNetwork) -> dict[str, dict[str, float]]:
    d = {a: {b: (0.0 if a == b else float("inf")) for b in network.places} for a in network.places}
    for r in network.roads:
        d[r.a][r.b] = d[r.b][r.a] = min(d[r.a][r.b], r.minutes)
    for k, i, j in itertools.product(network.places, repeat=3):
        d[i][j] = min(d[i][j], d[i][k] + d[k][j])
    return d


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 12), shape=st.sampled_from(SHAPES))
def test_sampled_networks_are_connected_and_shortest_minutes_match_floyd(seed: int, n: int, shape: str) -> None:
    net = sample_network(random.Random(seed), PLACES[:n], shape, (2, 9))  # type: ignore[arg-type]
    assert net.places == PLACES[:n]
    assert all(2 <= r.minutes <= 9 for r in net.roads)
    assert net.minutes == floyd(net)


@pytest.mark.parametrize("shape", SHAPES)
def test_same_seed_gives_the_same_network_bytes(shape: str) -> None:
    a = sample_network(random.Random(7), PLACES, shape, (1, 20), capacity=(5, 30))  # type: ignore[arg-type]
    b = sample_network(random.Random(7), PLACES, shape, (1, 20), capacity=(5, 30))  # type: ignore[arg-type]
    assert a.model_dump_json() == b.model_dump_json()
    assert all(r.capacity is not None and 5 <= r.capacity <= 30 for r in a.roads)


def test_grid_removes_streets_but_stays_connected() -> None:
    full_streets = 2 * 3 * 4 - 3 - 4  # a 3 x 4 grid has 17 streets
    net = sample_network(random.Random(1), PLACES, "grid", (1, 5))
    assert len(net.roads) < full_streets
    assert net.without([]) is not None


def test_network_data_round_trips_through_json() -> None:
    net = sample_network(random.Random(3), PLACES[:6], "ring", (3, 8), capacity=(2, 4))
    assert RoadNetwork.model_validate_json(net.model_dump_json()) == net


@pytest.mark.parametrize(
    ("roads", "reason"),
    [
        ([Road(a="A", b="Z", minutes=3)], "not in the network"),
        ([Road(a="A", b="A", minutes=3)], "to itself"),
        ([Road(a="A", b="B", minutes=3), Road(a="B", b="A", minutes=4)], "two roads join"),
        ([Road(a="A", b="B", minutes=3)], "not connected"),
    ],
)
def test_malformed_network_data_is_refused_with_its_reason(roads: list[Road], reason: str) -> None:
    with pytest.raises(ValidationError, match=reason):
        RoadNetwork(places=("A", "B", "C"), roads=tuple(roads))


def test_zero_minute_road_is_refused() -> None:
    with pytest.raises(ValidationError):
        Road(a="A", b="B", minutes=0)


def test_closing_a_bridge_is_reported_as_cutting_the_network() -> None:
    net = RoadNetwork(places=("A", "B", "C"), roads=(Road(a="A", b="B", minutes=2), Road(a="B", b="C", minutes=5)))
    assert net.without([frozenset(("A", "B"))]) is None


def test_closing_a_road_reroutes_the_shortest_minutes() -> None:
    net = RoadNetwork(
        places=("A", "B", "C"),
        roads=(Road(a="A", b="B", minutes=2), Road(a="B", b="C", minutes=2), Road(a="A", b="C", minutes=9)),
    )
    assert net.minutes["A"]["C"] == 4
    closed = net.without([frozenset(("B", "C"))])
    assert closed is not None and closed.minutes["A"]["C"] == 9


def test_path_minutes_adds_roads_and_names_a_missing_one() -> None:
    net = RoadNetwork(places=("A", "B", "C"), roads=(Road(a="A", b="B", minutes=2), Road(a="B", b="C", minutes=5)))
    assert net.path_minutes(["A", "B", "C"]) == 7
    assert net.path_minutes(["A"]) == 0
    with pytest.raises(ValueError, match="no road from A to C"):
        net.path_minutes(["A", "C"])


def test_road_rows_show_capacity_only_when_the_network_has_one() -> None:
    plain = RoadNetwork(places=("A", "B"), roads=(Road(a="A", b="B", minutes=2),))
    capped = RoadNetwork(places=("A", "B"), roads=(Road(a="A", b="B", minutes=2, capacity=40),))
    assert road_rows(plain) == [["A", "B", "2"]]
    assert road_rows(capped) == [["A", "B", "2", "40"]]


def test_sampling_refuses_a_single_place_or_a_bad_minute_range() -> None:
    with pytest.raises(ValueError, match="two places"):
        sample_network(random.Random(0), ("A",), "ring", (1, 2))
    with pytest.raises(ValueError, match="positive integers"):
        sample_network(random.Random(0), ("A", "B"), "ring", (0, 2))
