"""benchmarks/generate.py: every target printed with its figure, and the peer side by side."""

from __future__ import annotations

import sys
import types

import pytest

from tests.bench_loader import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("generate")


def row(bench, task: str, per_second: float, ratio: float):
    return bench.Row(task=task, requested=10, emitted=10, wall_s=1.0, per_second=per_second, rejects_per_emitted=0.0,
                     reject_reasons={}, unique_pct=100.0, infeasible_pct=0.0, median_s=0.1, p90_s=0.1, max_s=0.1,
                     uniqueness_vs_first_solve=ratio)  # fmt: skip


def report(bench, rows):
    rep = bench.Report(n=10, seed=0, size="default", tasks=rows)
    rep.overall = row(bench, "overall", sum(r.per_second for r in rows) / len(rows), 1.0)
    return rep


def test_each_target_line_names_the_task_types_that_miss_it(bench):
    lines = bench.targets(report(bench, [row(bench, "fast", 40.0, 1.1), row(bench, "slow", 12.0, 2.0)]))
    assert lines[0].startswith(">= 25 certified instances/s") and "meets (26.00)" in lines[0]
    assert "MISSES" in lines[1] and "misses: slow 12.00" in lines[1] and "fast" not in lines[1].split("misses")[1]
    assert "(FAMILY_DONE): meets" in lines[2]
    assert "MISSES" in lines[3] and "misses: slow 2.00" in lines[3]


def test_the_peer_is_timed_when_reasoning_gym_is_installed(bench, monkeypatch):
    made = []
    fake = types.ModuleType("reasoning_gym")
    fake.__version__ = "0.1.19"  # type: ignore[attr-defined]
    fake.create_dataset = lambda name, size, seed: made.append((name, size, seed)) or list(range(size))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "reasoning_gym", fake)
    peer = bench.run_peer(5, 3)
    assert made == [("zebra_puzzles", 5, 3)]
    assert peer["items"] == 5 and peer["peer"] == "reasoning-gym 0.1.19 zebra_puzzles" and peer["per_second"] > 0
    rep = report(bench, [row(bench, "t", 20.0, 1.0)])
    rep.peer = dict(peer, per_second=10.0)
    assert bench.peer_line(rep).endswith("pbsolve 20.00 certified instances/s: x2.00")


def test_without_reasoning_gym_the_peer_line_says_how_to_install_it(bench, monkeypatch):
    monkeypatch.setitem(sys.modules, "reasoning_gym", None)  # import fails
    assert bench.run_peer(5, 3) is None
    rep = report(bench, [row(bench, "t", 20.0, 1.0)])
    assert "pip install -e '.[bench]'" in bench.peer_line(rep)


def test_the_ratio_interval_brackets_the_ratio_of_the_sample(bench):
    uniq, first = [1.0, 2.0, 9.0, 1.5, 1.0, 3.0], [1.0, 1.0, 2.0, 1.0, 1.0, 1.5]
    lo, hi = bench.ratio_interval(uniq, first)
    assert lo < sum(uniq) / sum(first) < hi


def test_the_ratio_interval_is_one_point_when_every_index_has_the_same_ratio(bench):
    assert bench.ratio_interval([1.2, 2.4, 0.6], [1.0, 2.0, 0.5]) == pytest.approx((1.2, 1.2))


def test_the_ratio_interval_is_the_same_in_every_run(bench):
    uniq, first = [1.0, 2.0, 9.0, 1.5], [1.0, 1.0, 2.0, 1.0]
    assert bench.ratio_interval(uniq, first) == bench.ratio_interval(uniq, first)


def test_the_ratio_interval_of_nothing_is_zero(bench):
    assert bench.ratio_interval([], []) == (0.0, 0.0) and bench.ratio_interval([1.0], [0.0]) == (0.0, 0.0)


def test_a_task_type_missing_the_uniqueness_target_is_named_with_its_interval(bench):
    slow = row(bench, "slow", 20.0, 1.6)
    slow.uniqueness_ratio_ci = (1.31, 1.92)
    lines = bench.targets(report(bench, [row(bench, "fast", 40.0, 1.1), slow]))
    assert "misses: slow 1.60 (95% CI 1.31-1.92)" in lines[3]


def test_the_task_table_prints_the_ratio_interval(bench):
    r = row(bench, "t", 20.0, 1.4)
    r.uniqueness_ratio_ci = (1.1, 1.75)
    text = bench.format_text(report(bench, [r]))
    assert "95% CI" in text and "1.10-1.75" in text
