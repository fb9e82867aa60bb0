"""benchmarks/scale.py: its figures, the Ray overhead target and the 10-million arithmetic."""

from __future__ import annotations

import pytest

from tests.bench_loader import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("scale")


def test_the_ray_overhead_is_the_process_rate_over_the_ray_rate_at_equal_workers(bench):
    rows = [bench.Throughput("processes", 2, 10, 1.0, 20.0, True), bench.Throughput("ray", 2, 10, 1.0, 16.0, True)]
    assert bench.ray_overhead(rows, 2) == pytest.approx(1.25)
    assert bench.ray_overhead(rows[:1], 2) is None
    lines = bench.report(rows, None, 2)
    assert any(line.startswith("target: Ray overhead <= 1.1") and "MISSES (x1.25)" in line for line in lines)


def test_ten_million_instances_divide_by_the_cluster_rate(bench):
    lines = bench.ten_million(per_core=10.0, overhead=1.0, bytes_per_instance=2**30 / 10_000_000)
    assert "1.0 GiB of shards" in lines[0]
    assert "4 node(s) x 16 cores =    64 cores:       640 instances/s,     4.34 h" in lines[2]


def test_a_small_run_builds_the_same_bytes_on_one_and_two_processes(bench):
    result = bench.main(["--n", "3", "--shard-size", "2", "--big", "4", "--big-shard-size", "2", "--no-ray", "--json"])
    assert [r["same_bytes"] for r in result["throughput"]] == [True, True]
    big = result["big"]
    assert big["instances"] == 4 and big["peak_rss_mib"] > 0 and big["bytes_per_instance"] > 0
    assert big["rss_samples_mib"]
