"""`pbsolve generate --shard-size`: a real driver process killed by a real signal, then the
same command again, finishes with the bytes of an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pbsolve.scale import manifest as mf

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["generate", "--task", "exam_scheduling", "--size", "tiny", "--seed", "4", "--n", "14", "--shard-size", "2"]


def _run(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pbsolve", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def _start(*args: object, cwd: Path, **kw: object) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "pbsolve", *map(str, args)], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)  # type: ignore[call-overload]  # fmt: skip


def _wait_for_shards(folder: Path, k: int, proc: subprocess.Popen, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if len(mf.load(folder).shards) >= k:
                return
        except mf.ManifestError:
            pass
        assert proc.poll() is None, f"the run ended before it could be stopped: {proc.communicate()}"
        assert time.monotonic() < deadline, "no shard was written"
        time.sleep(0.05)


def _bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in mf.shard_files(folder, mf.load(folder)))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    folder = tmp_path_factory.mktemp("whole") / "ds"
    done = _run(*ARGS, "--out", folder, cwd=folder.parent)
    assert done.returncode == 0, done.stderr
    return _bytes(folder)


def test_a_killed_driver_is_continued_by_the_same_command(tmp_path: Path, uninterrupted: bytes):
    folder = tmp_path / "ds"
    proc = _start(*ARGS, "--out", folder, "--workers", "2", cwd=tmp_path)
    _wait_for_shards(folder, 2, proc)
    proc.send_signal(signal.SIGKILL)  # no handler runs: the worst case for what is on disk
    proc.communicate(timeout=60)
    kept = mf.load(folder)
    assert not kept.complete and kept.shards
    done = _run(*ARGS, "--out", folder, "--workers", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _bytes(folder) == uninterrupted
    assert mf.load(folder).complete


def test_ctrl_c_stops_with_exit_130_keeping_the_complete_shards(tmp_path: Path, uninterrupted: bytes):
    folder = tmp_path / "ds"
    proc = _start(*ARGS, "--out", folder, cwd=tmp_path, start_new_session=True)
    _wait_for_shards(folder, 1, proc)
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert time.monotonic() - t0 < 15
    assert "run the same command to continue" in " ".join(stderr.split())
    assert not list(folder.glob("*.partial"))
    assert _run(*ARGS, "--out", folder, cwd=tmp_path).returncode == 0
    assert _bytes(folder) == uninterrupted


def test_sharded_only_options_without_shard_size_are_refused(tmp_path: Path):
    done = _run("generate", "--backend", "ray", "--n", "1", "--out", tmp_path / "x.jsonl", cwd=tmp_path)
    assert done.returncode == 1
    assert "--backend apply to sharded runs: add --shard-size" in " ".join(done.stderr.split())


def test_a_folder_of_other_settings_is_refused_with_exit_1(tmp_path: Path):
    folder = tmp_path / "ds"
    args = ["generate", "--task", "exam_scheduling", "--size", "tiny", "--n", "2", "--shard-size", "2"]
    assert _run(*args, "--out", folder, cwd=tmp_path).returncode == 0
    other = _run(*args, "--seed", "9", "--out", folder, cwd=tmp_path)
    assert other.returncode == 1
    assert "made with other settings (seed)" in " ".join(other.stderr.split())


def test_summary_json_reports_the_manifest_totals(tmp_path: Path):
    done = _run("generate", "--task", "exam_scheduling", "--size", "tiny", "--n", "3", "--shard-size", "2",
                "--out", tmp_path / "ds", "--summary-json", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["instances"] == 3 and summary["complete"] is True
    assert summary["stats"]["task"] == {"exam_scheduling": 3}
