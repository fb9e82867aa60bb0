"""benchmarks/grade.py: the grading ratio is printed with its spread over the run's blocks."""

from __future__ import annotations

import pytest

from tests.bench_loader import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("grade")


def test_rounds_fill_the_blocks_in_order_and_evenly(bench):
    blocks = [bench.block_of(done, 10, 0.0, 0.0) for done in range(10)]
    assert blocks == sorted(blocks)
    assert [blocks.count(b) for b in range(bench.BLOCKS)] == [10 // bench.BLOCKS] * bench.BLOCKS


def test_a_timed_run_assigns_blocks_by_the_time_elapsed(bench):
    assert bench.block_of(7, None, 0.0, 5.0) == 0
    assert bench.block_of(7, None, 2.5, 5.0) == bench.BLOCKS // 2
    assert bench.block_of(7, None, 9.0, 5.0) == bench.BLOCKS - 1  # the last round may overrun the budget


def test_the_ratio_line_names_the_range_over_the_blocks(bench):
    assert bench.block_spread({"grade_oracle_vs_json_loads_p50_by_block": [15.2, 17.04, 14.96]}) == (
        "; 15.0-17.0 over the run's 3 blocks"
    )
    assert bench.block_spread({"grade_oracle_vs_json_loads_p50_by_block": [15.2]}) == ""


def test_a_short_run_reports_one_ratio_per_block(bench):
    rep = bench.run(n=2, seed=0, size="tiny", seconds=0.0, rounds=bench.BLOCKS)
    ratios = rep["grade_oracle_vs_json_loads_p50_by_block"]
    assert len(ratios) == bench.BLOCKS and all(r > 0 for r in ratios)
    assert f"over the run's {bench.BLOCKS} blocks" in bench.format_text(rep)
