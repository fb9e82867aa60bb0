"""Sharded dataset builds (pbsolve.scale): the same bytes on any backend and worker count,
resumable, deduplicated, with exclusions, retries of lost workers and a failing shard
reported by its range. Ray itself is covered in tests/test_scale_ray.py."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from pbsolve import interrupts
from pbsolve.generate import GenerateOptions, generate
from pbsolve.jsonl import dumps
from pbsolve.scale import manifest as mf
from pbsolve.scale.backends import LocalBackend, ShardFailure, make_backend
from pbsolve.scale.card import card_text
from pbsolve.scale.driver import NoInstances, ShardFailed, build_dataset, drawn_tasks, excluded_datasets
from pbsolve.scale.manifest import ManifestError, RunKey
from pbsolve.scale.shard import FAULT_ENV, Facts, ShardOutput, ShardRange

OPTS = GenerateOptions(task="meeting_planning", size="tiny")


@pytest.fixture(autouse=True)
def _no_stop_left_behind():
    interrupts.reset()
    yield
    interrupts.reset()


def key(n: int = 9, shard_size: int = 4, seed: int = 1, **kw) -> RunKey:
    fields = {"seed": seed, "start": 0, "n": n, "shard_size": shard_size, "format": "jsonl", "dedup": True,
              "options": OPTS.model_dump(mode="json"), "tasks": drawn_tasks(OPTS)} | kw  # fmt: skip
    return RunKey(**fields)


def build(folder: Path, k: RunKey, workers: int = 1, **kw) -> mf.Manifest:
    return build_dataset(folder, k, OPTS, lambda: LocalBackend(workers), command="pbsolve generate ...", **kw)


def dataset_bytes(folder: Path) -> bytes:
    m = mf.load(folder)
    return b"".join(p.read_bytes() for p in mf.shard_files(folder, m))


@pytest.fixture(scope="module")
def unsharded() -> bytes:
    """The first 9 instances of seed 1, by the unsharded generator."""
    return b"".join((dumps(o.instance) + "\n").encode() for o in generate(9, 1, OPTS) if o.instance is not None)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ref")
    build(folder, key())
    return folder


def test_a_sharded_run_writes_the_bytes_of_an_unsharded_run(reference: Path, unsharded: bytes):
    assert dataset_bytes(reference) == unsharded


def test_two_worker_processes_write_the_same_files_as_one(reference: Path, tmp_path: Path):
    build(tmp_path, key(), workers=2)
    assert dataset_bytes(tmp_path) == dataset_bytes(reference)
    for a, b in zip(mf.load(tmp_path).shards, mf.load(reference).shards, strict=True):
        assert (a.file, a.sha256, a.hashes_sha256, a.lo, a.hi) == (b.file, b.sha256, b.hashes_sha256, b.lo, b.hi)


def test_the_manifest_records_every_shard_with_its_range_counts_and_sha256(reference: Path):
    m = mf.load(reference)
    assert m.complete and m.instances == 9
    assert [(s.lo, s.hi) for s in m.shards] == [(4 * k, 4 * k + 4) for k in range(len(m.shards))]
    for s in m.shards:
        assert s.certified == s.instances + s.duplicates + s.excluded + s.truncated
        assert s.certified + s.failed_indices == s.hi - s.lo
        if s.file:
            assert mf.sha256_file(reference / s.file) == s.sha256
            assert sum(1 for _ in open(reference / s.file)) == s.instances
    assert m.pbsolve_version and m.ortools_version


def test_the_last_shard_is_cut_at_exactly_n_instances(reference: Path):
    m = mf.load(reference)
    assert sum(s.instances for s in m.shards) == 9
    assert all(s.truncated == 0 for s in m.shards[:-1])


def test_problem_hashes_are_stored_beside_each_shard(reference: Path):
    m = mf.load(reference)
    from pbsolve.canonical import problem_hash
    from pbsolve.schema import Instance

    lines = dataset_bytes(reference).decode().splitlines()
    assert list(mf.read_hashes(reference, m.shards)) == [problem_hash(Instance.model_validate_json(x)) for x in lines]


def test_a_rerun_keeps_complete_shards_and_rebuilds_a_torn_one(reference: Path, tmp_path: Path):
    build(tmp_path, key())
    m = mf.load(tmp_path)
    first = tmp_path / m.shards[0].file
    before = first.stat().st_mtime_ns
    last = tmp_path / m.shards[-1].file
    last.write_bytes(last.read_bytes()[:50])  # torn by a crash
    build(tmp_path, key())
    assert first.stat().st_mtime_ns == before
    assert dataset_bytes(tmp_path) == dataset_bytes(reference)


def test_a_complete_folder_is_left_as_it_is(reference: Path, tmp_path: Path):
    build(tmp_path, key())
    stamps = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("shard-*")}
    build(tmp_path, key())
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("shard-*")} == stamps


def test_a_folder_of_another_run_is_refused_naming_what_differs(reference: Path):
    with pytest.raises(ManifestError, match="other settings \\(seed\\)"):
        build(reference, key(seed=2))
    with pytest.raises(ManifestError, match="options.size"):
        build_dataset(reference, key().model_copy(update={"options": {**OPTS.model_dump(mode="json"), "size": "small"}}),
                      OPTS, lambda: LocalBackend(1))  # fmt: skip


def test_a_folder_made_when_other_task_types_were_installed_is_refused(reference: Path):
    with pytest.raises(ManifestError, match="other settings \\(tasks\\)"):
        build(reference, key(tasks=["meeting_planning", "a_task_type_added_since"]))


def test_an_earlier_dataset_given_to_exclude_shares_no_problem(reference: Path, tmp_path: Path):
    k = key(exclude=excluded_datasets([reference]))
    m = build(tmp_path, k)
    old = set(mf.read_hashes(reference, mf.load(reference).shards))
    new = list(mf.read_hashes(tmp_path, m.shards))
    assert len(new) == 9 and not old & set(new)
    assert m.totals().excluded >= 9  # the same seed: every problem of the first dataset came again


def test_a_lost_worker_is_retried_and_the_bytes_do_not_change(reference: Path, tmp_path: Path, monkeypatch):
    marker = tmp_path / "killed"
    monkeypatch.setenv(FAULT_ENV, f"{marker}:4")  # the worker building indices 4..7 dies once
    out = tmp_path / "ds"
    build(out, key(), workers=2)
    assert marker.exists()
    assert dataset_bytes(out) == dataset_bytes(reference)


# -- the driver against scripted backends ---------------------------------------------------
def _output(k: int, lo: int, hashes: list[str]) -> ShardOutput:
    facts = Facts("f", "t", ("basic",), (), "unique", 1)
    lines = [json.dumps({"i": lo + i, "h": h}) for i, h in enumerate(hashes)]
    return ShardOutput(k=k, lines=lines, hashes=hashes, indices=[lo + i for i in range(len(hashes))],
                       facts=[facts] * len(hashes))  # fmt: skip


class Scripted:
    """A backend whose shards come back as scripted (per shard k, one result per attempt)."""

    slots = 3

    def __init__(self, script: dict[int, list]) -> None:
        self.script = {k: list(v) for k, v in script.items()}
        self.submitted: list[int] = []
        self.queue: list[ShardRange] = []

    def submit(self, seed, rng, options):
        self.submitted.append(rng.k)
        self.queue.append(rng)

    def wait(self, timeout):
        done, self.queue = list(reversed(self.queue)), []  # finish out of order
        return [(rng, self.script[rng.k].pop(0) if rng.k in self.script else self.filler(rng)) for rng in done]

    @staticmethod
    def filler(rng: ShardRange) -> ShardOutput:
        """An unscripted shard: one instance of a problem of its own."""
        return _output(rng.k, rng.lo, [f"{1000 + rng.k:064x}"])

    def close(self):
        pass


H = [f"{i:064x}" for i in range(20)]


def test_duplicates_in_a_run_are_dropped_in_index_order_and_counted(tmp_path: Path):
    script = {0: [_output(0, 0, [H[1], H[2], H[1]])], 1: [_output(1, 4, [H[2], H[3], H[4]])]}
    m = build_dataset(tmp_path, key(n=4), OPTS, lambda: Scripted(script))
    assert list(mf.read_hashes(tmp_path, m.shards)) == [H[1], H[2], H[3], H[4]]
    assert [s.duplicates for s in m.shards] == [1, 1]


def test_without_dedup_every_certified_instance_is_kept(tmp_path: Path):
    script = {0: [_output(0, 0, [H[1], H[1], H[1]])], 1: [_output(1, 4, [H[1]])]}
    m = build_dataset(tmp_path, key(n=4, dedup=False), OPTS, lambda: Scripted(script))
    assert list(mf.read_hashes(tmp_path, m.shards)) == [H[1]] * 4


def test_a_shard_whose_worker_keeps_dying_stops_the_run_naming_its_range(tmp_path: Path):
    lost = ShardFailure("a worker process died", retryable=True)
    script = {0: [_output(0, 0, [H[1]])], 1: [lost, lost, lost], 2: [_output(2, 8, [H[2]])]}
    with pytest.raises(ShardFailed, match=r"shard 1 \(indices 4\.\.7\) failed after 3 attempt\(s\)"):
        build_dataset(tmp_path, key(n=9), OPTS, lambda: Scripted(script))
    m = mf.load(tmp_path)
    assert [s.k for s in m.shards] == [0]  # shard 2 came back, but is never written past the gap
    assert m.failed[0].model_dump() == {"k": 1, "lo": 4, "hi": 8, "attempts": 3, "error": "a worker process died"}


def test_a_lost_shard_that_succeeds_on_retry_is_written_in_its_place(tmp_path: Path):
    lost = ShardFailure("a worker process died", retryable=True)
    script = {0: [lost, _output(0, 0, [H[1], H[2]])], 1: [_output(1, 4, [H[3], H[4]])]}
    m = build_dataset(tmp_path, key(n=4), OPTS, lambda: Scripted(script))
    assert list(mf.read_hashes(tmp_path, m.shards)) == H[1:5]


def test_a_failure_that_would_repeat_is_not_retried(tmp_path: Path):
    script = {0: [ShardFailure("ValueError: bad", retryable=False)], 1: [_output(1, 4, [H[1]])]}
    backend = Scripted(script)
    with pytest.raises(ShardFailed, match="after 1 attempt"):
        build_dataset(tmp_path, key(n=4), OPTS, lambda: backend)
    assert backend.submitted.count(0) == 1


def test_indices_that_never_certify_stop_the_run(tmp_path: Path):
    script = {k: [ShardOutput(k=k, failed_indices=4, rejects=Counter({"timeout_first_solve": 4}))] for k in range(20)}
    with pytest.raises(NoInstances, match="indices in a row"):
        build_dataset(tmp_path, key(n=4), OPTS, lambda: Scripted(script), max_empty_indices=12)


def test_no_more_shards_are_started_than_the_instances_still_wanted_need(tmp_path: Path):
    script = {k: [_output(k, 4 * k, [H[2 * k], H[2 * k + 1]])] for k in range(10)}
    backend = Scripted(script)
    build_dataset(tmp_path, key(n=4), OPTS, lambda: backend)
    assert len(backend.submitted) <= 3  # a few in flight, never all ten


def test_the_card_reports_counts_certificates_and_the_rebuild_command(reference: Path):
    text = (reference / "README.md").read_text()
    m = mf.load(reference)
    assert text == card_text(m)
    assert "| `meeting_planning` | 9 | 100.0% |" in text
    assert "unique optimum:" in text and "seed 1, first index 0, 9 instances, shards of 4 indices" in text
    assert m.command in text


def test_the_local_backend_refuses_a_ray_address():
    with pytest.raises(ValueError, match="--address joins a Ray cluster"):
        make_backend("local", 1, "127.0.0.1:6379")


def test_parquet_shards_hold_the_same_instances(reference: Path, tmp_path: Path):
    from pbsolve.serve.store import iter_instance_texts

    m = build(tmp_path, key(format="parquet"))
    texts = [t for f in mf.shard_files(tmp_path, m) for _, t in iter_instance_texts(f)]
    assert "".join(t + "\n" for t in texts).encode() == dataset_bytes(reference)
    assert os.path.getsize(mf.shard_files(tmp_path, m)[0]) > 0
