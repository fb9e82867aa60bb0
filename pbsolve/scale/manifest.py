"""The manifest of a sharded dataset: what fixes its bytes, and every finished shard.

``manifest.json`` sits beside the shard files. Its ``run`` part holds everything that
decides the output (seed, first index, instance count, shard size, format, deduplication,
generation options, excluded datasets); a run continues a folder only when its ``run``
part is the same. Each finished shard has one entry: its index range, its file and that
file's sha256, its problem hashes (the file beside it, for ``--exclude`` and leak checks),
how many instances it kept and dropped and why, and the figures the dataset card reports.
The manifest is rewritten atomically after every shard, so a crash leaves the entries of
the shards that are really on disk.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pbsolve.jsonl import write_atomic

MANIFEST = "manifest.json"
FORMAT_VERSION = 1
ShardFormat = Literal["jsonl", "parquet"]


class ManifestError(Exception):
    """A manifest that cannot be read, or a folder whose manifest belongs to another run."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Excluded(_Strict):
    """An earlier dataset whose problems this run leaves out."""

    path: str
    sha256: str  # of its manifest.json, so a changed or other dataset is noticed


class RunKey(_Strict):
    """Everything that decides a sharded run's bytes (``workers`` and the backend do not)."""

    pbsolve_dataset: int = FORMAT_VERSION
    seed: int
    start: int
    n: int
    shard_size: int
    format: ShardFormat
    dedup: bool
    options: dict[str, Any]
    # the task types the options draw from: a family or task type added since the folder was
    # made changes which task each index gets, so such a folder is not continued
    tasks: list[str] = Field(default_factory=list)
    exclude: list[Excluded] = Field(default_factory=list)


class Stats(_Strict):
    """Counts over a shard's kept instances, summed for the dataset card."""

    family: dict[str, int] = Field(default_factory=dict)
    task: dict[str, int] = Field(default_factory=dict)
    tier: dict[str, int] = Field(default_factory=dict)  # instances with at least one rule of the tier
    mechanism: dict[str, int] = Field(default_factory=dict)  # hard kinds and reporting mechanisms
    determinacy: dict[str, int] = Field(default_factory=dict)  # unique / value / infeasible
    margin_count: int = 0  # feasible instances with a recorded margin to the second-best plan
    margin_sum: int = 0
    margin_one: int = 0  # of them, a margin of exactly 1 (the sharpest rewards)

    def add(self, other: Stats) -> None:
        for name in ("family", "task", "tier", "mechanism", "determinacy"):
            mine, theirs = getattr(self, name), getattr(other, name)
            merged = Counter(mine) + Counter(theirs)
            setattr(self, name, dict(sorted(merged.items())))
        self.margin_count += other.margin_count
        self.margin_sum += other.margin_sum
        self.margin_one += other.margin_one


class ShardEntry(_Strict):
    k: int
    lo: int
    hi: int
    file: str | None  # None: the shard kept no instance
    sha256: str | None
    hashes_file: str | None
    hashes_sha256: str | None
    instances: int  # kept (written)
    certified: int  # certified in the range, before deduplication
    duplicates: int = 0  # dropped: the same problem earlier in this run
    excluded: int = 0  # dropped: the problem is in an --exclude dataset
    truncated: int = 0  # dropped: past the run's n-th instance (last shard only)
    failed_indices: int = 0  # indices that certified nothing
    rejects: dict[str, int] = Field(default_factory=dict)  # every re-sampled or failed attempt
    seconds: float = 0.0
    first_solve_s: float = 0.0
    uniqueness_s: float = 0.0
    stats: Stats = Field(default_factory=Stats)


class FailedShard(_Strict):
    k: int
    lo: int
    hi: int
    attempts: int
    error: str


class Manifest(_Strict):
    run: RunKey
    pbsolve_version: str
    ortools_version: str
    command: str
    complete: bool = False
    instances: int = 0
    shards: list[ShardEntry] = Field(default_factory=list)
    failed: list[FailedShard] = Field(default_factory=list)

    def totals(self) -> ShardEntry:
        """The shard entries summed (range: the whole run's)."""
        total = ShardEntry(k=-1, lo=self.run.start, hi=self.shards[-1].hi if self.shards else self.run.start,
                           file=None, sha256=None, hashes_file=None, hashes_sha256=None, instances=0, certified=0)  # fmt: skip
        rejects: Counter[str] = Counter()
        for s in self.shards:
            for name in ("instances", "certified", "duplicates", "excluded", "truncated", "failed_indices"):
                setattr(total, name, getattr(total, name) + getattr(s, name))
            for name in ("seconds", "first_solve_s", "uniqueness_s"):
                setattr(total, name, getattr(total, name) + getattr(s, name))
            rejects.update(s.rejects)
            total.stats.add(s.stats)
        total.rejects = dict(sorted(rejects.items()))
        return total


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def save(folder: Path, manifest: Manifest) -> None:
    text = json.dumps(manifest.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"
    write_atomic(folder / MANIFEST, text.encode())


def manifest_path(path: str | Path) -> Path:
    """A dataset folder or its manifest file -> the manifest file."""
    p = Path(path)
    return p / MANIFEST if p.is_dir() else p


def load(path: str | Path) -> Manifest:
    p = manifest_path(path)
    try:
        return Manifest.model_validate_json(p.read_bytes())
    except FileNotFoundError:
        raise ManifestError(f"{p}: no manifest (not a sharded dataset folder)") from None
    except (ValidationError, ValueError) as exc:
        raise ManifestError(f"{p}: not a pbsolve dataset manifest: {str(exc).splitlines()[0]}") from None


def verified_shards(folder: Path, manifest: Manifest) -> Iterator[ShardEntry]:
    """The manifest's shard entries, in order, as long as their files are on disk with the
    recorded sha256 (the first one that is not ends the walk: later shards are rebuilt)."""
    for entry in manifest.shards:
        for name, digest in ((entry.file, entry.sha256), (entry.hashes_file, entry.hashes_sha256)):
            if name is None:
                continue
            p = folder / name
            if not p.is_file() or sha256_file(p) != digest:
                return
        yield entry


def read_hashes(folder: Path, entries: Iterable[ShardEntry]) -> Iterator[str]:
    """The problem hashes of the given shards' instances, in dataset order."""
    for entry in entries:
        if entry.hashes_file is None:
            continue
        with open(folder / entry.hashes_file, encoding="ascii") as fh:
            for line in fh:
                if line.strip():
                    yield line.strip()


def shard_files(folder: Path, manifest: Manifest) -> list[Path]:
    """The instance files of a dataset, in order."""
    return [folder / e.file for e in manifest.shards if e.file is not None]


def expand_dataset_paths(paths: Iterable[Path]) -> list[Path]:
    """Instance files, with a sharded dataset folder (or its manifest.json) replaced by its
    shard files in order; raises :class:`ManifestError` for a folder without a manifest."""
    found: list[Path] = []
    for p in paths:
        if p.is_dir() or p.name == MANIFEST:
            folder = p if p.is_dir() else p.parent
            found += shard_files(folder, load(p))
        else:
            found.append(p)
    return found
