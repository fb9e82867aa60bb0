"""Shard files: the instances of one shard (JSON Lines or Parquet) and their problem hashes.

Each file is written to ``<name>.partial`` and renamed into place once on disk, and its
sha256 goes into the manifest, so a later run can tell a complete shard from a torn one.
Parquet shards have the columns of ``pbsolve export --format parquet``'s instance data
(``id``, ``family``, ``task``, ``subtask``, ``instance`` as JSON text), which every
reader of instance files in pbsolve accepts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pbsolve.jsonl import write_atomic
from pbsolve.scale.manifest import ShardFormat, sha256_file


def shard_name(k: int, fmt: ShardFormat) -> str:
    return f"shard-{k:06d}.{fmt}"


def _write_parquet(path: Path, lines: list[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in lines]
    table = pa.table(
        {
            "id": pa.array([r["id"] for r in rows], pa.string()),
            "family": pa.array([r["family"] for r in rows], pa.string()),
            "task": pa.array([r["task"] for r in rows], pa.string()),
            "subtask": pa.array([r["subtask"] for r in rows], pa.string()),
            "instance": pa.array(lines, pa.string()),
        }
    )
    tmp = path.with_name(path.name + ".partial")
    # no creation time or writer version that could vary: the same rows give the same bytes
    pq.write_table(table, tmp, compression="zstd", write_statistics=False, store_schema=False)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_shard(folder: Path, k: int, lines: list[str], hashes: list[str], fmt: ShardFormat) -> dict[str, Any]:
    """Write shard ``k``'s files (none when it kept nothing); the manifest fields naming them."""
    if not lines:
        return {"file": None, "sha256": None, "hashes_file": None, "hashes_sha256": None}
    name = shard_name(k, fmt)
    if fmt == "jsonl":
        write_atomic(folder / name, "".join(line + "\n" for line in lines).encode())
    else:
        _write_parquet(folder / name, lines)
    hashes_name = f"shard-{k:06d}.hashes"
    write_atomic(folder / hashes_name, "".join(h + "\n" for h in hashes).encode())
    return {
        "file": name,
        "sha256": sha256_file(folder / name),
        "hashes_file": hashes_name,
        "hashes_sha256": sha256_file(folder / hashes_name),
    }
