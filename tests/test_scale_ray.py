"""The Ray backend on a local Ray (two CPUs): the bytes of the process backend, and a shard
whose worker dies is re-run by Ray. One Ray session serves the whole module."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbsolve import interrupts
from pbsolve.generate import GenerateOptions
from pbsolve.scale import manifest as mf
from pbsolve.scale.backends import LocalBackend, RayBackend
from pbsolve.scale.driver import build_dataset, drawn_tasks
from pbsolve.scale.manifest import RunKey
from pbsolve.scale.shard import FAULT_ENV

ray = pytest.importorskip("ray")

OPTS = GenerateOptions(task="exam_scheduling", size="tiny")
KEY = RunKey(seed=3, start=0, n=8, shard_size=3, format="jsonl", dedup=True, options=OPTS.model_dump(mode="json"),
             tasks=drawn_tasks(OPTS))  # fmt: skip


@pytest.fixture(scope="module")
def ray_session(tmp_path_factory: pytest.TempPathFactory):
    """A local Ray with 2 CPUs; workers inherit the fault-injection variable set here."""
    marker = tmp_path_factory.mktemp("fault") / "killed"
    import os

    os.environ[FAULT_ENV] = f"{marker}:3"  # the worker of indices 3..5 dies the first time
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        yield marker
    finally:
        ray.shutdown()
        os.environ.pop(FAULT_ENV, None)


def _bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in mf.shard_files(folder, mf.load(folder)))


def test_ray_writes_the_bytes_of_local_processes_and_reruns_a_dead_worker(ray_session: Path, tmp_path: Path):
    interrupts.reset()
    build_dataset(tmp_path / "ray", KEY, OPTS, lambda: RayBackend(2))
    assert ray_session.exists(), "the fault was never injected: the retry went untested"
    build_dataset(tmp_path / "local", KEY, OPTS, lambda: LocalBackend(1))
    assert _bytes(tmp_path / "ray") == _bytes(tmp_path / "local")
    a, b = mf.load(tmp_path / "ray"), mf.load(tmp_path / "local")
    assert [s.sha256 for s in a.shards] == [s.sha256 for s in b.shards]
    assert a.instances == 8


def test_the_ray_backend_keeps_a_session_it_did_not_start(ray_session: Path, tmp_path: Path):
    backend = RayBackend(2)
    backend.close()
    assert ray.is_initialized()
    assert backend.slots == 4  # two shards in flight per CPU of the cluster
