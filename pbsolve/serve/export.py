"""Training-set export: instances -> verl Parquet, or JSON Lines / Parquet for ``datasets``.

Rows are streamed (read one instance, write it into a row group buffer); memory grows
only by the set of ids seen (duplicates are skipped) and one 64-bit key per instance. The
``eval`` split is the round(fraction x n) instances whose hash of (seed, problem) is
smallest (at least one in each split when 0 < fraction < 1), found in a first pass over
the files: independent of file order, and an instance's split changes only when
instances are added or removed near the cut. The problem is the canonical content hash of
:mod:`pbsolve.canonical` (data, rules, objective; ids and wording left out), so two
instances that pose the same problem always land in the same split: no eval problem can
leak into train. The counts are exact unless copies of one problem straddle the cut
(they all go to eval). After writing, the problem hashes of the two splits are compared
and the report says how many each has and that none is shared (a shared one raises).

``verl``   -> ``<out>/train.parquet``, ``<out>/eval.parquet`` with ``data_source``,
              ``prompt`` (chat messages), ``ability``, ``reward_model`` {``style``: "rule",
              ``ground_truth``: instance JSON}, ``extra_info`` {split, index, id, family,
              task, subtask, tiers}.
``jsonl``  -> ``<out>/train.jsonl``, ``<out>/eval.jsonl``  } columns ``id``, ``prompt``,
``parquet``-> ``<out>/train.parquet``, ``<out>/eval.parquet`` } ``instance`` (JSON text),
              ``family``, ``task``, ``subtask``, ``tiers``, ``split``, ``index``; ``prompt``
              is a list of chat messages (TRL's conversational format) or, with
              ``prompt_style="text"``, the prompt string.

The ``instance`` / ``ground_truth`` text is what the reward adapters in ``pbsolve.serve.rewards``
read back.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from pbsolve.canonical import problem_hash
from pbsolve.jsonl import LineError, check_writable, dumps
from pbsolve.schema import Instance
from pbsolve.serve.store import iter_instance_texts, parse_instance_text

ExportFormat = Literal["verl", "jsonl", "parquet"]
FORMATS: tuple[str, ...] = ("verl", "jsonl", "parquet")
SPLITS: tuple[str, ...] = ("train", "eval")
ABILITY = "planning"


def split_key(problem: str, seed: int = 0) -> int:
    """The 64-bit hash of (seed, problem hash) that orders instances for the train/eval
    assignment (equal problems, equal keys: the same split)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{problem}".encode()).digest()[:8], "big")


class SplitLeak(Exception):
    """A problem is in both splits: a bug, never exported."""


@dataclass
class LeakCheck:
    """How the export checked that no eval problem is in train."""

    eval_problems: int = 0  # distinct problem hashes in eval
    train_problems: int = 0
    shared: int = 0
    repeated: int = 0  # instances whose problem an earlier instance (another id) already posed

    def as_dict(self) -> dict[str, Any]:
        return {
            "eval_problems": self.eval_problems,
            "train_problems": self.train_problems,
            "shared": self.shared,
            "repeated_problems": self.repeated,
            "method": "split by a hash of each instance's canonical problem hash (pbsolve.canonical), then the "
            "sets of problem hashes of the written splits compared",
        }


def eval_count(n: int, eval_fraction: float) -> int:
    """round(fraction x n), but at least one instance in each split when 0 < fraction < 1."""
    if n == 0 or eval_fraction <= 0:
        return 0
    if eval_fraction >= 1:
        return n
    k = round(eval_fraction * n)
    return min(max(k, 1), n - 1) if n >= 2 else k


def eval_threshold(keys: Sequence[int], eval_fraction: float) -> int:
    """The largest split key of the eval split (-1: no eval split): the eval split is the
    ``eval_count`` instances with the smallest keys."""
    k = eval_count(len(keys), eval_fraction)
    return sorted(keys)[k - 1] if k else -1


def chat_prompt(inst: Instance, system: str | None = None) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": inst.prompt})
    return messages


def instance_json(inst: Instance) -> str:
    """The canonical one-line JSON of an instance (the bytes ``pbsolve generate`` writes)."""
    return dumps(inst)


def verl_row(
    inst: Instance, text: str, split: str, index: int, system: str | None = None, data_source: str | None = None
) -> dict[str, Any]:
    return {
        "data_source": data_source or f"pbsolve/{inst.task}",
        "prompt": chat_prompt(inst, system),
        "ability": ABILITY,
        "reward_model": {"style": "rule", "ground_truth": text},
        "extra_info": {
            "split": split,
            "index": index,
            "id": inst.id,
            "family": inst.family,
            "task": inst.task,
            "subtask": inst.subtask,
            "tiers": list(inst.tiers),
        },
    }


def dataset_row(
    inst: Instance, text: str, split: str, index: int, system: str | None = None, prompt_style: str = "chat"
) -> dict[str, Any]:
    return {
        "id": inst.id,
        "prompt": chat_prompt(inst, system) if prompt_style == "chat" else inst.prompt,
        "instance": text,
        "family": inst.family,
        "task": inst.task,
        "subtask": inst.subtask,
        "tiers": list(inst.tiers),
        "split": split,
        "index": index,
    }


def _schema(fmt: str, prompt_style: str) -> Any:
    import pyarrow as pa

    messages = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    if fmt == "verl":
        return pa.schema([
            ("data_source", pa.string()),
            ("prompt", messages),
            ("ability", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
            ("extra_info", pa.struct([
                ("split", pa.string()), ("index", pa.int64()), ("id", pa.string()), ("family", pa.string()),
                ("task", pa.string()), ("subtask", pa.string()), ("tiers", pa.list_(pa.string())),
            ])),
        ])  # fmt: skip
    return pa.schema([
        ("id", pa.string()),
        ("prompt", messages if prompt_style == "chat" else pa.string()),
        ("instance", pa.string()),
        ("family", pa.string()),
        ("task", pa.string()),
        ("subtask", pa.string()),
        ("tiers", pa.list_(pa.string())),
        ("split", pa.string()),
        ("index", pa.int64()),
    ])  # fmt: skip


@dataclass
class ExportReport:
    fmt: str
    files: dict[str, str] = field(default_factory=dict)  # split -> path
    rows: dict[str, int] = field(default_factory=lambda: {s: 0 for s in SPLITS})
    tasks: dict[str, dict[str, int]] = field(default_factory=dict)  # task -> split -> rows
    errors: list[LineError] = field(default_factory=list)
    leak_check: LeakCheck = field(default_factory=LeakCheck)

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.fmt,
            "files": self.files,
            "rows": self.rows,
            "tasks": self.tasks,
            "errors": len(self.errors),
            "leak_check": self.leak_check.as_dict(),
        }


class _SplitWriter:
    """One output file: rows are buffered and written ``row_group`` at a time to
    ``<path>.partial``; ``commit`` renames it into place."""

    def __init__(self, path: Path, fmt: str, prompt_style: str, row_group: int) -> None:
        self.path = path
        self.partial = path.with_name(path.name + ".partial")
        self.fmt = fmt
        self.row_group = row_group
        self.rows: list[dict[str, Any]] = []
        self._fh: IO[str] | None = None
        self._pq: Any = None
        if fmt == "jsonl":
            self._fh = open(self.partial, "w", encoding="utf-8")  # noqa: SIM115 - the writer owns it; closed in close()
        else:
            import pyarrow.parquet as pq

            self.schema = _schema(fmt, prompt_style)
            self._pq = pq.ParquetWriter(self.partial, self.schema, compression="zstd")

    def add(self, row: dict[str, Any]) -> None:
        if self._fh is not None:
            self._fh.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
            return
        self.rows.append(row)
        if len(self.rows) >= self.row_group:
            self._write()

    def _write(self) -> None:
        import pyarrow as pa

        if self.rows:
            self._pq.write_table(pa.Table.from_pylist(self.rows, schema=self.schema))
            self.rows = []

    def close(self) -> None:
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
        else:
            self._write()
            self._pq.close()

    def commit(self) -> None:
        os.replace(self.partial, self.path)


def iter_instances(paths: Sequence[str | Path], errors: list[LineError]) -> Iterator[tuple[Instance, str]]:
    """(instance, canonical JSON text) for every valid instance of the files, first copy of
    each id only; bad lines and duplicates are appended to ``errors``."""
    seen: set[str] = set()
    for path in paths:
        name = str(path)
        for no, item in iter_instance_texts(path):
            if isinstance(item, LineError):
                errors.append(item)
                continue
            inst = parse_instance_text(item, name, no)
            if isinstance(inst, LineError):
                errors.append(inst)
                continue
            if inst.id in seen:
                errors.append(LineError(name, no, f"duplicate instance id {inst.id!r} (the first one is kept)"))
                continue
            seen.add(inst.id)
            yield inst, instance_json(inst)


def _split_keys(paths: Sequence[str | Path], seed: int) -> list[int]:
    """First pass: the split keys of the valid, distinct instances (what the second pass writes)."""
    seen: set[str] = set()
    keys: list[int] = []
    for path in paths:
        for no, item in iter_instance_texts(path):
            if isinstance(item, LineError):
                continue
            inst = parse_instance_text(item, str(path), no)
            if isinstance(inst, LineError) or inst.id in seen:
                continue
            seen.add(inst.id)
            keys.append(split_key(problem_hash(inst), seed))
    return keys


def export(
    paths: Sequence[str | Path],
    out_dir: str | Path,
    fmt: str = "jsonl",
    eval_fraction: float = 0.1,
    seed: int = 0,
    system: str | None = None,
    prompt_style: str = "chat",
    data_source: str | None = None,
    row_group: int = 1000,
) -> ExportReport:
    """Write the splits of ``paths`` (JSON Lines or Parquet instance files) under ``out_dir``.

    Files are written to ``<name>.partial`` and renamed only when every split is complete.
    With ``eval_fraction`` 0 only ``train`` is written, with 1 only ``eval``; otherwise both.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if prompt_style not in ("chat", "text"):
        raise ValueError(f"unknown prompt style {prompt_style!r}; choose chat or text")
    if fmt == "verl" and prompt_style != "chat":
        raise ValueError("verl datasets hold chat messages; --prompt-style text applies to jsonl and parquet")
    if not 0.0 <= eval_fraction <= 1.0:
        raise ValueError(f"eval fraction must be between 0 and 1, got {eval_fraction}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ext = "jsonl" if fmt == "jsonl" else "parquet"
    splits = ["train", "eval"] if eval_fraction > 0 else ["train"]
    if eval_fraction >= 1:
        splits = ["eval"]
    report = ExportReport(fmt=fmt)
    keys = _split_keys(paths, seed)
    if not keys:
        raise ValueError(f"{', '.join(str(p) for p in paths)}: no valid instance to export")
    for s in splits:  # fail now, not after the work, if a split cannot be written
        check_writable(out / f"{s}.{ext}")
    threshold = eval_threshold(keys, eval_fraction)
    writers = {s: _SplitWriter(out / f"{s}.{ext}", fmt, prompt_style, row_group) for s in splits}
    problems: dict[str, set[bytes]] = {s: set() for s in SPLITS}
    try:
        for inst, text in iter_instances(paths, report.errors):
            problem = problem_hash(inst)
            split = "eval" if split_key(problem, seed) <= threshold else "train"
            digest = bytes.fromhex(problem)
            report.leak_check.repeated += digest in problems[split]
            problems[split].add(digest)
            index = report.rows[split]
            if fmt == "verl":
                row = verl_row(inst, text, split, index, system, data_source)
            else:
                row = dataset_row(inst, text, split, index, system, prompt_style)
            writers[split].add(row)
            report.rows[split] += 1
            per_task = report.tasks.setdefault(inst.task, {s: 0 for s in SPLITS})
            per_task[split] += 1
        for w in writers.values():
            w.close()
    except BaseException:
        for w in writers.values():
            with contextlib.suppress(Exception):
                w.close()
        raise
    check = report.leak_check
    check.eval_problems, check.train_problems = len(problems["eval"]), len(problems["train"])
    check.shared = len(problems["eval"] & problems["train"])
    if check.shared:
        raise SplitLeak(f"{check.shared} problem(s) in both splits; nothing was exported")
    for s, w in writers.items():
        w.commit()
        report.files[s] = str(w.path)
    return report


__all__ = [
    "FORMATS",
    "SPLITS",
    "ExportReport",
    "LeakCheck",
    "SplitLeak",
    "chat_prompt",
    "dataset_row",
    "eval_count",
    "export",
    "iter_instances",
    "split_key",
    "verl_row",
]
