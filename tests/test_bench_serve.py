"""benchmarks/serve.py: the targets it judges."""

from __future__ import annotations

import pytest

from tests.bench_loader import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("serve")


def _report(reused: bool) -> dict:
    rep = {
        "store": {"bytes_per_row": 850.0, "rows_per_s": 2.1e8 if reused else 19_000.0},
        "lookup": {"get_parsed_p99_us": 600.0},
    }
    if reused:
        rep["store_reused"] = True
    return rep


def test_a_store_built_in_the_run_is_judged_on_its_build_rate(bench):
    rows = {t["figure"]: t for t in bench.targets(_report(reused=False), batch_p99_ms=200.0)}
    assert rows["store build"]["met"] is False  # 19,000 rows/s against 20,000
    assert rows["batch of 1,024, p99"]["met"] and rows["store size per row"]["met"]


def test_a_store_reused_from_dir_has_no_build_rate_to_judge(bench):
    figures = [t["figure"] for t in bench.targets(_report(reused=True), batch_p99_ms=200.0)]
    assert "store build" not in figures
    assert figures == ["batch of 1,024, p99", "store size per row", "cold parsed lookup, p99"]
