"""The driver of a sharded run: shards out to a backend, files and manifest in order.

Shards are submitted in index order, a few more than the backend runs at once, and
built anywhere in any order; the driver writes them strictly in order, so deduplication
(the first copy of a problem in index order is kept), exclusion of earlier datasets and
the cut at exactly ``n`` instances never depend on timing. That is why 1 process, N
processes and a Ray cluster of any size write the same bytes. The driver holds only the
shards in flight or waiting for their turn, and the problem hashes seen so far live in
an on-disk SQLite table, so its memory stays flat in the dataset size.

A run continues the folder's manifest when the ``run`` part matches: shards whose files
are on disk with their recorded sha256 are kept and only the rest is built again. A
worker lost mid-shard is retried; a shard that keeps failing stops the run, reported by
its index range, and is never skipped. Interrupts follow :mod:`pbsolve.interrupts`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ortools import __version__ as ortools_version  # type: ignore[attr-defined]  # the stubs omit it

from pbsolve import __version__, interrupts
from pbsolve.generate import MAX_CONSECUTIVE_FAILURES, GenerateOptions
from pbsolve.scale import manifest as mf
from pbsolve.scale.backends import Backend, ShardFailure
from pbsolve.scale.card import write_card
from pbsolve.scale.manifest import Excluded, FailedShard, Manifest, ManifestError, RunKey, ShardEntry
from pbsolve.scale.shard import ShardOutput, ShardRange, shard_range, stats_of
from pbsolve.scale.writers import write_shard

MAX_SHARD_ATTEMPTS = 3  # attempts of a shard whose worker is lost, before the run stops
SEEN_DB = ".pbsolve-seen.sqlite"


class ShardFailed(Exception):
    """A shard could not be built; the run stopped after the shards before it."""

    def __init__(self, failed: FailedShard) -> None:
        self.failed = failed
        super().__init__(
            f"shard {failed.k} (indices {failed.lo}..{failed.hi - 1}) failed after {failed.attempts} "
            f"attempt(s): {failed.error}"
        )


class NoInstances(Exception):
    """Too many indices in a row certified nothing: the options are unlikely ever to."""


class SeenProblems:
    """Problem hashes already in this run or in an excluded dataset (SQLite, on disk)."""

    def __init__(self, path: Path) -> None:
        path.unlink(missing_ok=True)  # rebuilt from the shards on disk at every start
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA journal_mode=OFF")
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute("CREATE TABLE seen (hash BLOB PRIMARY KEY, excluded INTEGER NOT NULL) WITHOUT ROWID")
        self.path = path

    def add_all(self, hashes: Iterable[str], excluded: bool) -> None:
        self.db.executemany(
            "INSERT OR IGNORE INTO seen VALUES (?, ?)", ((bytes.fromhex(h), int(excluded)) for h in hashes)
        )

    def status(self, h: str) -> str | None:
        """'excluded', 'run' (seen earlier in this run) or None (new)."""
        row = self.db.execute("SELECT excluded FROM seen WHERE hash = ?", (bytes.fromhex(h),)).fetchone()
        return None if row is None else ("excluded" if row[0] else "run")

    def add(self, h: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO seen VALUES (?, 0)", (bytes.fromhex(h),))

    def close(self) -> None:
        self.db.close()
        self.path.unlink(missing_ok=True)


@dataclass
class Progress:
    """What the driver reports after every written shard."""

    instances: int
    n: int
    shards_done: int
    shards_running: int
    rejects: int
    duplicates: int
    rate: float  # instances written per second in this session


@dataclass
class _State:
    manifest: Manifest
    seen: SeenProblems
    streak: int = 0  # indices since the last certified one
    written_now: int = 0
    t0: float = field(default_factory=time.perf_counter)


def drawn_tasks(options: GenerateOptions) -> list[str]:
    """The ids of the task types a run with these options draws from (for :class:`RunKey`)."""
    from pbsolve.sampler import select_tasks

    return [t.id for t in select_tasks(options.family, options.task, options.subtask)]


def excluded_datasets(paths: Iterable[str | Path]) -> list[Excluded]:
    out = []
    for p in paths:
        path = mf.manifest_path(p)
        mf.load(path)  # refuse anything that is not a manifest now
        out.append(Excluded(path=str(path), sha256=mf.sha256_file(path)))
    return out


def _open_manifest(folder: Path, key: RunKey, command: str) -> Manifest:
    """The folder's manifest when it belongs to this run (kept shards verified), else a new one."""
    path = folder / mf.MANIFEST
    if not path.exists():
        return Manifest(run=key, pbsolve_version=__version__, ortools_version=ortools_version, command=command)
    old = mf.load(path)
    if old.run != key:
        a, b = old.run.model_dump(), key.model_dump()
        diff = sorted(k for k in a if a[k] != b[k])
        if "options" in diff:
            diff.remove("options")
            diff += sorted(f"options.{k}" for k in set(a["options"]) | set(b["options"])
                           if a["options"].get(k) != b["options"].get(k))  # fmt: skip
        raise ManifestError(
            f"{folder} holds a dataset made with other settings ({', '.join(diff)}); use another folder, "
            "or the same options to continue it"
        )
    if old.pbsolve_version != __version__ or old.ortools_version != ortools_version:
        raise ManifestError(
            f"{folder} was written by pbsolve {old.pbsolve_version} with OR-Tools {old.ortools_version}; this is "
            f"pbsolve {__version__} with OR-Tools {ortools_version}: the same seeds could give other bytes, so "
            "it is not continued; use another folder"
        )
    kept = list(mf.verified_shards(folder, old))
    return old.model_copy(update={"shards": kept, "instances": sum(e.instances for e in kept),
                                  "complete": old.complete and len(kept) == len(old.shards), "failed": [],
                                  "command": command})  # fmt: skip


def _finalise(folder: Path, st: _State, rng: ShardRange, out: ShardOutput) -> ShardEntry:
    """Deduplicate, exclude and cut one shard's instances, write its files, record it."""
    key, m = st.manifest.run, st.manifest
    keep: list[int] = []
    duplicates = excluded = truncated = 0
    for i, h in enumerate(out.hashes):
        if m.instances + len(keep) >= key.n:
            truncated += 1
            continue
        seen = st.seen.status(h)
        if seen == "excluded":
            excluded += 1
        elif seen == "run" and key.dedup:
            duplicates += 1
        else:
            keep.append(i)
            st.seen.add(h)
    lines = [out.lines[i] for i in keep]
    hashes = [out.hashes[i] for i in keep]
    files = write_shard(folder, rng.k, lines, hashes, key.format)
    entry = ShardEntry(
        k=rng.k, lo=rng.lo, hi=rng.hi, **files, instances=len(lines), certified=len(out.lines),
        duplicates=duplicates, excluded=excluded, truncated=truncated, failed_indices=out.failed_indices,
        rejects=dict(sorted(out.rejects.items())), seconds=out.seconds, first_solve_s=out.first_solve_s,
        uniqueness_s=out.uniqueness_s, stats=stats_of([out.facts[i] for i in keep]),
    )  # fmt: skip
    m.shards.append(entry)
    m.instances += entry.instances
    m.complete = m.instances >= key.n
    mf.save(folder, m)
    st.written_now += entry.instances
    st.streak = (rng.hi - 1 - out.indices[-1]) if out.indices else st.streak + (rng.hi - rng.lo)
    return entry


def build_dataset(
    folder: Path,
    key: RunKey,
    options: GenerateOptions,
    backend: Callable[[], Backend],
    command: str = "",
    on_progress: Callable[[Progress], None] | None = None,
    max_attempts: int = MAX_SHARD_ATTEMPTS,
    max_empty_indices: int = MAX_CONSECUTIVE_FAILURES,
) -> Manifest:
    """Build (or continue) the sharded dataset of ``key`` in ``folder``; the manifest and the
    dataset card are written as shards complete. Raises :class:`ShardFailed`,
    :class:`NoInstances`, :class:`~pbsolve.interrupts.Interrupted` (all shards written so
    far kept) or :class:`ManifestError` (the folder belongs to another run)."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest = _open_manifest(folder, key, command)
    mf.save(folder, manifest)
    st = _State(manifest, SeenProblems(folder / SEEN_DB))
    try:
        for ex in key.exclude:
            old = mf.load(ex.path)
            st.seen.add_all(mf.read_hashes(Path(ex.path).parent, mf.verified_shards(Path(ex.path).parent, old)), True)
        st.seen.add_all(mf.read_hashes(folder, manifest.shards), False)
        if manifest.complete:
            write_card(folder, manifest)
            return manifest
        _run(folder, st, options, backend, on_progress, max_attempts, max_empty_indices)
        write_card(folder, manifest)
        return manifest
    finally:
        st.seen.close()


def _expected_per_shard(m: Manifest) -> float:
    """Instances a shard is expected to keep (from the shards so far; 90% at first)."""
    done = sum(e.hi - e.lo for e in m.shards)
    kept = sum(e.instances for e in m.shards)
    return max(kept / done if done else 0.9, 0.05) * m.run.shard_size


def _run(
    folder: Path,
    st: _State,
    options: GenerateOptions,
    make_backend: Callable[[], Backend],
    on_progress: Callable[[Progress], None] | None,
    max_attempts: int,
    max_empty_indices: int,
) -> None:
    m, key = st.manifest, st.manifest.run
    next_k = finalise_k = len(m.shards)
    attempts: dict[int, int] = {}
    running: set[int] = set()
    ready: dict[int, tuple[ShardRange, ShardOutput]] = {}
    be = make_backend()
    try:
        while not m.complete:
            interrupts.check()
            waiting = len(running) + len(ready)
            while len(running) < be.slots and (waiting == 0 or m.instances + waiting * _expected_per_shard(m) < key.n):
                rng = shard_range(next_k, key.start, key.shard_size)
                be.submit(key.seed, rng, options)
                attempts[rng.k] = attempts.get(rng.k, 0) + 1
                running.add(rng.k)
                next_k += 1
                waiting += 1
            for rng, result in be.wait(0.2):
                running.discard(rng.k)
                if isinstance(result, ShardFailure):
                    if result.retryable and attempts[rng.k] < max_attempts:
                        be.submit(key.seed, rng, options)
                        attempts[rng.k] += 1
                        running.add(rng.k)
                        continue
                    failed = FailedShard(k=rng.k, lo=rng.lo, hi=rng.hi, attempts=attempts[rng.k], error=result.error)
                    m.failed = [failed]
                    mf.save(folder, m)
                    raise ShardFailed(failed)
                ready[rng.k] = (rng, result)
            while finalise_k in ready and not m.complete:
                rng, out = ready.pop(finalise_k)
                _finalise(folder, st, rng, out)
                finalise_k += 1
                if on_progress is not None:
                    total = m.totals()
                    secs = time.perf_counter() - st.t0
                    on_progress(Progress(m.instances, key.n, len(m.shards), len(running),
                                         sum(total.rejects.values()), total.duplicates,
                                         st.written_now / secs if secs > 0 else 0.0))  # fmt: skip
                if st.streak >= max_empty_indices:
                    raise NoInstances(
                        f"{st.streak} indices in a row (up to {rng.hi - 1}) certified no instance; relax the "
                        "options (--include, --tiers, --time-limit)"
                    )
    finally:
        be.close()
