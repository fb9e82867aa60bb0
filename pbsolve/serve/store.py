"""An embedded instance store: instance id -> instance JSON, in one SQLite file.

The reward server looks instances up by id; a training set can hold millions of them, so
nothing here loads a whole file into memory:

* ``build_store`` streams JSON Lines or Parquet files (row groups of a Parquet file are
  read one batch at a time), validates every instance, and inserts rows with
  ``executemany`` in chunks into ``<dest>.partial``, renamed into place only when complete.
  Bad lines and duplicate ids are reported as ``file:line: reason`` (the first copy of an
  id is kept) and the other lines are still stored.
* Rows are zstd-compressed, each with a dictionary of its own task type: the raw text of
  that task's first ``DICT_SAMPLES`` rows (instances of one task type share most of their
  text: prompt boilerplate, rule sentences, answer schema, checklist). Measured on 640
  distinct instances of 32 task types (13.4 KB of JSON each), on the rows that are not
  samples: 717 B per row at zstd level 5 (915 B at level 3, for half the CPU), against
  1,723 B at level 3 with one dictionary trained on the first 256 rows of every task (the
  ``pbsolve-store/2`` format, still read, as is the zlib ``pbsolve-store/1``). A chunk's
  rows are compressed on ``COMPRESS_THREADS`` threads (zstd leaves the GIL), in the
  background while the next chunk is added: the serve benchmark's 1,000,000 rows built at
  19,800 rows/s against 15,800 when each task type's rows were compressed on zstd's own
  threads while the writer waited (one sitting, 2 cores), to the same bytes. A row written
  before its task has its samples is stored empty and filled in once the dictionary
  exists, so rows keep the order they were added in and the writer holds at most
  ``DICT_SAMPLES`` rows per task type.
* ``InstanceStore`` opens the file read-only, one SQLite connection per thread, looks ids
  up through the primary-key index and keeps a small LRU of parsed ``Instance`` objects
  (parsing and the per-instance grading memo are the cost; the SQLite page cache is small).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote

import zstandard
from pydantic import ValidationError

from pbsolve import __version__
from pbsolve.jsonl import LineError
from pbsolve.lru import LockedLRU
from pbsolve.schema import Instance

STORE_FORMAT = "pbsolve-store/3"  # zstd rows, a raw-content dictionary per task type in kinds.zdict
TRAINED_FORMAT = "pbsolve-store/2"  # zstd rows, one trained dictionary in meta.zdict (read only)
ZLIB_FORMAT = "pbsolve-store/1"  # zlib rows, preset dictionary in meta.zdict (read only)
STORE_SUFFIXES = (".pbstore", ".sqlite", ".sqlite3", ".db")
SQLITE_MAGIC = b"SQLite format 3\x00"
PARQUET_MAGIC = b"PAR1"
DICT_SAMPLES = 16  # rows of a task type whose text is that task's dictionary
DICT_BYTES = 256 * 1024  # at most this much of their text (the end of it) is kept
ZSTD_LEVEL = 5  # 717 B per row against 915 at level 3 (the docstring's rows), about twice the CPU
PAGE_SIZE = 16384  # SQLite pages: ~1 KB rows leave less slack in larger pages
MAX_ERRORS_KEPT = 1000


class StoreError(Exception):
    """The store file is missing, not a pbsolve store, or damaged."""


# -- reading instance text from JSON Lines and Parquet ---------------------------------------
def is_parquet(path: str | Path) -> bool:
    p = Path(path)
    if p.suffix.lower() in (".parquet", ".pq"):
        return True
    try:
        with open(p, "rb") as fh:
            return fh.read(4) == PARQUET_MAGIC
    except OSError:
        return False


def is_store_file(path: str | Path) -> bool:
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:
        return p.suffix.lower() in STORE_SUFFIXES


def _parquet_instance_column(names: Sequence[str], path: Path) -> tuple[str, str | None]:
    """(column, struct field) holding instance JSON: ``instance`` (pbsolve export --format
    jsonl|parquet), ``reward_model.ground_truth`` (--format verl) or ``ground_truth``."""
    if "instance" in names:
        return "instance", None
    if "reward_model" in names:
        return "reward_model", "ground_truth"
    if "ground_truth" in names:
        return "ground_truth", None
    raise StoreError(
        f"{path}: no instance column; expected 'instance', 'reward_model' (with 'ground_truth') or "
        f"'ground_truth', found {', '.join(names) or 'none'}"
    )


def iter_instance_texts(path: str | Path, batch_rows: int = 1000) -> Iterator[tuple[int, str | LineError]]:
    """Yield (line or row number, instance JSON text or LineError) for every record of a
    JSON Lines or Parquet file, streaming (memory does not grow with the file)."""
    p = Path(path)
    if is_parquet(p):
        yield from _iter_parquet(p, batch_rows)
        return
    with open(p, encoding="utf-8", errors="replace") as fh:
        for no, raw in enumerate(fh, 1):
            text = raw.strip()
            if text:
                yield no, text


def _iter_parquet(path: Path, batch_rows: int) -> Iterator[tuple[int, str | LineError]]:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise StoreError(f"{path}: not a readable Parquet file: {exc}") from exc
    column, sub = _parquet_instance_column(pf.schema_arrow.names, path)
    row = 0
    for batch in pf.iter_batches(batch_size=batch_rows, columns=[column]):
        for value in batch.column(0).to_pylist():
            row += 1
            if sub is not None:
                value = value.get(sub) if isinstance(value, dict) else None
            if isinstance(value, dict):
                yield row, json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            elif isinstance(value, str) and value.strip():
                yield row, value.strip()
            else:
                yield row, LineError(str(path), row, f"row holds no instance JSON in column {column!r}")


def _short(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "line"
    return f"{where}: {first.get('msg', 'invalid')} ({exc.error_count()} error(s))"


def parse_instance_text(text: str, path: str, no: int) -> Instance | LineError:
    try:
        return Instance.model_validate_json(text)
    except ValidationError as exc:
        if exc.errors()[0].get("type") == "json_invalid":
            return LineError(path, no, f"not valid JSON: {exc.errors()[0].get('msg', '')}")
        return LineError(path, no, f"not a valid Instance: {_short(exc)}")
    except RecursionError:
        return LineError(path, no, "not a valid Instance: nested too deeply")


# -- writing ------------------------------------------------------------------------------------
_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE kinds (
    kind   INTEGER PRIMARY KEY,
    task   TEXT NOT NULL,
    family TEXT NOT NULL,
    zdict  BLOB NOT NULL  -- zstd(raw-content dictionary of this task type's rows), no dictionary
);
CREATE TABLE instances (
    id   TEXT PRIMARY KEY,
    kind INTEGER NOT NULL,  -- kinds.kind: task type, family and dictionary
    body BLOB NOT NULL      -- zstd(instance JSON, utf-8) with the kind's dictionary
);
"""


@dataclass
class BuildReport:
    path: str
    sources: list[str]
    rows: int = 0
    read: int = 0
    duplicates: int = 0
    errors: list[LineError] = field(default_factory=list)  # at most MAX_ERRORS_KEPT
    error_count: int = 0
    seconds: float = 0.0
    bytes: int = 0
    reused: bool = False

    def add_error(self, error: LineError) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_ERRORS_KEPT:
            self.errors.append(error)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "sources": self.sources, "rows": self.rows, "read": self.read,
            "duplicates": self.duplicates, "errors": self.error_count, "seconds": self.seconds,
            "bytes": self.bytes, "reused": self.reused,
        }  # fmt: skip


@dataclass
class _Kind:
    """One task type's rows while a store is written: its dictionary once it has one, and
    until then its sample texts and the ids of the rows stored empty."""

    kind: int
    task: str
    family: str
    samples: list[bytes] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    zdict: bytes | None = None
    compressors: list[Any] = field(default_factory=list)  # one per compressing thread; none before the dictionary


class StoreWriter:
    """Append rows to a new store file. ``add`` buffers; rows go to SQLite with
    ``executemany`` every ``chunk_rows`` rows, inside one transaction.

    A task type's dictionary is its first ``DICT_SAMPLES`` rows (see the module docstring);
    rows added before it exists are inserted empty and compressed when it does (at the
    latest in ``close()``). Use as a context manager, or call ``close()``; the file is
    complete only after ``close()`` (``abort()`` leaves it unfinished).
    """

    def __init__(
        self, path: str | Path, chunk_rows: int = 1000, level: int = ZSTD_LEVEL, sources: Sequence[str] = ()
    ) -> None:
        self.path = Path(path)
        if self.path.exists():
            self.path.unlink()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.chunk_rows = max(1, chunk_rows)
        self.level = level
        self.sources = list(sources)
        self.rows = 0
        self.duplicates: list[tuple[str, Any]] = []  # (id, tag) of rows not stored
        self._pending: list[tuple[str, str, str, bytes, Any]] = []  # id, task, family, utf-8 JSON, tag
        self._kinds: dict[tuple[str, str], _Kind] = {}
        self._pool: ThreadPoolExecutor | None = None  # compresses one chunk while the next is added
        self._in_flight: Future[None] | None = None
        self._in_flight_chunk: tuple[list[tuple[str, int, bytes]], list[_Job], list[_Kind]] = ([], [], [])
        self._in_flight_ids: set[str] = set()
        self._conn = sqlite3.connect(self.path, isolation_level=None)
        self._conn.executescript(
            f"PRAGMA page_size={PAGE_SIZE}; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
            "PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;"
        )
        self._conn.executescript(_SCHEMA)
        self._conn.execute("BEGIN")

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def add(self, instance_id: str, task: str, family: str, text: str | bytes, tag: Any = None) -> None:
        body = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        self._pending.append((instance_id, task, family, body, tag))
        if len(self._pending) >= self.chunk_rows:
            self._flush(wait=False)

    def _kind(self, task: str, family: str) -> _Kind:
        k = self._kinds.get((task, family))
        if k is None:
            k = self._kinds[(task, family)] = _Kind(len(self._kinds) + 1, task, family)
        return k

    def _flush(self, wait: bool = True) -> None:
        """Store the buffered rows. With ``wait=False`` (a full buffer, while rows are still
        being added) their compression runs on a background thread and they are inserted at
        the next flush: the caller goes on producing rows meanwhile (zstd leaves the GIL).
        The same rows, bytes and statements in the same order either way."""
        if not self._pending:
            if wait:
                self._insert_in_flight()
            return
        ids = list(dict.fromkeys(p[0] for p in self._pending))
        marks = ",".join("?" * len(ids))
        existing = {r[0] for r in self._conn.execute(f"SELECT id FROM instances WHERE id IN ({marks})", ids)}
        existing.update(i for i in ids if i in self._in_flight_ids)  # rows of the chunk still compressing
        rows: list[tuple[str, int, bytes]] = []
        ready: list[_Kind] = []  # kinds whose samples are complete with this chunk
        jobs: dict[int, _Job] = {}  # rows to compress, per kind
        seen: set[str] = set()
        for iid, task, fam, raw, tag in self._pending:
            if iid in existing or iid in seen:
                self.duplicates.append((iid, tag))
                continue
            seen.add(iid)
            k = self._kind(task, fam)
            if k.compressors:
                job = jobs.setdefault(k.kind, (k, [], []))
                job[1].append(len(rows))
                job[2].append(raw)
                rows.append((iid, k.kind, b""))
                continue
            rows.append((iid, k.kind, b""))  # filled in once the kind has its dictionary
            k.samples.append(raw)
            k.waiting.append(iid)
            if len(k.samples) == DICT_SAMPLES:
                self._make_dictionary(k)  # the kind's later rows, in this chunk too, are compressed at once
                ready.append(k)
        self._pending.clear()
        self._insert_in_flight()  # the chunk before, whose rows precede these
        chunk = (rows, list(jobs.values()), ready)
        if wait:
            self._insert(*chunk)
            return
        self._in_flight = self._executor().submit(_compress_chunk, rows, chunk[1])
        self._in_flight_chunk = chunk
        self._in_flight_ids = seen

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pbsolve-store-compress")
        return self._pool

    def _insert_in_flight(self) -> None:
        """Insert the chunk compressing in the background, once it is compressed."""
        if self._in_flight is None:
            return
        future, (rows, _, ready) = self._in_flight, self._in_flight_chunk
        self._in_flight, self._in_flight_chunk, self._in_flight_ids = None, ([], [], []), set()
        future.result()  # a compression error is raised here, in the writer's thread
        self._insert(rows, [], ready)

    def _insert(self, rows: list[tuple[str, int, bytes]], jobs: list[_Job], ready: list[_Kind]) -> None:
        """Compress ``jobs`` into ``rows`` (if not done yet), insert the rows, then fill in
        the rows of the kinds whose dictionary this chunk completed."""
        _compress_chunk(rows, jobs)
        self._conn.executemany("INSERT INTO instances (id, kind, body) VALUES (?, ?, ?)", rows)
        for k in ready:
            self._fill_waiting(k)
        self.rows += len(rows)

    def _make_dictionary(self, k: _Kind) -> None:
        k.zdict = raw_dictionary(k.samples)
        zd = _zstd_dict(k.zdict, raw=True)
        if zd is not None:
            zd.precompute_compress(level=self.level)  # else every compress() loads the dictionary again
        k.compressors = [zstandard.ZstdCompressor(level=self.level, dict_data=zd) for _ in range(COMPRESS_THREADS)]

    def _fill_waiting(self, k: _Kind) -> None:
        """Compress the rows stored empty while the kind had no dictionary (they are inserted)."""
        assert k.compressors
        rows = [(iid, k.kind, b"") for iid in k.waiting]
        _compress_chunk(rows, [(k, list(range(len(rows))), k.samples)])
        self._conn.executemany("UPDATE instances SET body = ? WHERE id = ?", [(body, iid) for iid, _, body in rows])
        k.samples, k.waiting = [], []

    def take_duplicates(self) -> list[tuple[str, Any]]:
        """Duplicates found so far (call after ``flush()`` to get every one), then forget them."""
        out, self.duplicates = self.duplicates, []
        return out

    def flush(self) -> None:
        self._flush()

    def close(self) -> None:
        self._flush()
        self._stop_pool()
        for k in self._kinds.values():
            if not k.compressors:  # fewer rows than DICT_SAMPLES of this task type
                self._make_dictionary(k)
                self._fill_waiting(k)
        self._conn.executemany(
            "INSERT INTO kinds (kind, task, family, zdict) VALUES (?, ?, ?, ?)",
            [(k.kind, k.task, k.family, _pack_dictionary(k.zdict or b"")) for k in self._kinds.values()],
        )
        meta = {
            "format": STORE_FORMAT,
            "count": str(self.rows),
            "pbsolve_version": __version__,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "sources": json.dumps(self.sources),
            "compression": f"zstd-{self.level}+dict-per-task",
        }
        self._conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", list(meta.items()))
        self._conn.execute("COMMIT")
        self._conn.close()

    def _stop_pool(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def abort(self) -> None:
        self._stop_pool()  # a compression under way finishes; its rows are never inserted
        self._in_flight = None
        with contextlib.suppress(sqlite3.Error):
            self._conn.execute("ROLLBACK")
        self._conn.close()


COMPRESS_THREADS = min(4, os.cpu_count() or 1)


_Job = tuple[_Kind, list[int], list[bytes]]  # a kind, the positions of its rows in the chunk, their texts


def _compress_chunk(rows: list[tuple[str, int, bytes]], jobs: list[_Job]) -> None:
    """Put each job's compressed texts into ``rows`` at their positions (emptying the
    jobs, so a chunk is compressed once): the chunk's texts cut into ``COMPRESS_THREADS``
    runs of about equal size, each compressed on a thread of its own with compressors of
    its own (a compressor is not to be shared between threads; its digested dictionary,
    read-only, is), one zstd call per run of one kind's rows, which leaves the GIL for
    the whole run: a call per row would wait for the GIL between rows while the writer's
    thread adds the next chunk. The bytes are the same on any number of threads."""
    items = [(i, k, raw) for k, where, raws in jobs for i, raw in zip(where, raws)]
    jobs.clear()
    total = sum(len(raw) for _, _, raw in items)
    parts: list[list[tuple[int, _Kind, bytes]]] = [[] for _ in range(COMPRESS_THREADS)]
    done = 0
    for item in items:
        parts[min(done * COMPRESS_THREADS // max(total, 1), COMPRESS_THREADS - 1)].append(item)
        done += len(item[2])

    def run(t: int) -> None:
        part = parts[t]
        start = 0
        while start < len(part):  # one call per run of one kind's rows: zstd's loop, without the GIL
            k = part[start][1]
            end = start
            while end < len(part) and part[end][1] is k:
                end += 1
            raws = [raw for _, _, raw in part[start:end]]
            compressor = k.compressors[t]
            if any(raws):
                bodies = [bytes(body) for body in compressor.multi_compress_to_buffer(raws, threads=1)]
            else:  # zstd's batch call refuses a batch of nothing but empty texts
                bodies = [compressor.compress(raw) for raw in raws]
            for (i, _, _), body in zip(part[start:end], bodies):
                rows[i] = (rows[i][0], rows[i][1], body)
            start = end

    others = [_helpers().submit(run, t) for t in range(1, COMPRESS_THREADS) if parts[t]]
    try:
        run(0)
    finally:
        wait(others)  # every run ends before the rows are read or an error is raised
    for done_run in others:
        done_run.result()  # a helper's error, raised here: a row left uncompressed is never stored


_HELPER_POOL: list[ThreadPoolExecutor] = []  # made at the first chunk with more than one run
_HELPER_LOCK = threading.Lock()


def _helpers() -> ThreadPoolExecutor:
    """The threads that compress a chunk's runs beside the calling thread (up to three:
    ``COMPRESS_THREADS`` is at most four), shared by every writer of the process."""
    with _HELPER_LOCK:
        if not _HELPER_POOL:
            _HELPER_POOL.append(ThreadPoolExecutor(max_workers=3, thread_name_prefix="pbsolve-store-zstd"))
        return _HELPER_POOL[0]


def raw_dictionary(samples: list[bytes]) -> bytes:
    """A raw-content zstd dictionary: the end of the samples' text, at most ``DICT_BYTES``.
    With a few dozen rows per task type, raw content compresses better than a trained
    dictionary (measured in the module docstring), and it is deterministic."""
    return b"\n".join(samples)[-DICT_BYTES:]


DICT_PACK_LEVEL = 9


def _pack_dictionary(zdict: bytes) -> bytes:
    """A dictionary as stored: compressed, since a store of a few rows per task type would
    otherwise hold their text twice (the samples are the dictionary)."""
    return zstandard.ZstdCompressor(level=DICT_PACK_LEVEL).compress(zdict) if zdict else b""


def _unpack_dictionary(packed: bytes) -> bytes:
    return zstandard.ZstdDecompressor().decompress(packed) if packed else b""


def _zstd_dict(zdict: bytes, raw: bool = False) -> zstandard.ZstdCompressionDict | None:
    """``raw``: the bytes are dictionary content (pbsolve-store/3); else a trained dictionary
    starts with zstd's magic and anything else is taken as raw content (pbsolve-store/2)."""
    if not zdict:
        return None
    kind = zstandard.DICT_TYPE_RAWCONTENT if raw else zstandard.DICT_TYPE_AUTO
    return zstandard.ZstdCompressionDict(zdict, dict_type=kind)


def source_fingerprint(sources: Sequence[str | Path]) -> list[dict[str, Any]]:
    out = []
    for s in sources:
        st = os.stat(s)
        out.append({"path": str(Path(s).resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns})
    return out


def build_store(
    sources: Sequence[str | Path],
    dest: str | Path,
    chunk_rows: int = 1000,
    level: int = ZSTD_LEVEL,
    progress: Any = None,
) -> BuildReport:
    """Build a store from JSON Lines / Parquet instance files (see the module docstring).

    ``progress``, if given, is called with the number of records read so far (every chunk).
    """
    t0 = time.perf_counter()
    dest = Path(dest)
    partial = dest.with_name(dest.name + ".partial")
    fingerprint = json.dumps(source_fingerprint(sources))
    report = BuildReport(path=str(dest), sources=[str(s) for s in sources])
    writer = StoreWriter(partial, chunk_rows=chunk_rows, level=level)
    writer.sources = json.loads(fingerprint)
    try:
        for src in sources:
            name = str(src)
            for no, item in iter_instance_texts(src):
                report.read += 1
                if isinstance(item, LineError):
                    report.add_error(item)
                    continue
                inst = parse_instance_text(item, name, no)
                if isinstance(inst, LineError):
                    report.add_error(inst)
                    continue
                writer.add(inst.id, inst.task, inst.family, item, tag=(name, no))
                if report.read % chunk_rows == 0:
                    _report_duplicates(writer, report)
                    if progress is not None:
                        progress(report.read)
        writer.flush()
        _report_duplicates(writer, report)
        writer.close()
    except BaseException:
        writer.abort()
        raise
    os.replace(partial, dest)
    order = {str(s): k for k, s in enumerate(sources)}
    report.errors.sort(key=lambda e: (order.get(e.path, 0), e.line))  # duplicates are found a chunk late
    report.rows = writer.rows
    report.seconds = time.perf_counter() - t0
    report.bytes = dest.stat().st_size
    return report


def _report_duplicates(writer: StoreWriter, report: BuildReport) -> None:
    for iid, (name, no) in writer.take_duplicates():
        report.duplicates += 1
        report.add_error(LineError(name, no, f"duplicate instance id {iid!r} (the first one is kept)"))


def default_store_path(sources: Sequence[str | Path]) -> Path:
    first = Path(sources[0])
    return first.with_name(first.name + ".pbstore")


def ensure_store(
    sources: Sequence[str | Path], store_path: str | Path | None = None, rebuild: bool = False, progress: Any = None
) -> tuple[Path, BuildReport]:
    """The store for these sources: the file itself if it is a store, an up-to-date store
    built from the same files (same paths, sizes and modification times) if there is one,
    otherwise a newly built one."""
    if not sources:
        raise StoreError("no instance file given")
    for s in sources:
        if not Path(s).is_file():
            raise StoreError(f"{s}: no such file")
    if len(sources) == 1 and is_store_file(sources[0]):
        path = Path(sources[0])
        with InstanceStore(path) as st:
            return path, BuildReport(
                path=str(path), sources=[str(path)], rows=len(st), reused=True, bytes=path.stat().st_size
            )
    if any(is_store_file(s) for s in sources):
        raise StoreError("a store file cannot be combined with other instance files")
    path = Path(store_path) if store_path is not None else default_store_path(sources)
    if path.exists() and not is_store_file(path):
        raise StoreError(f"{path} exists and is not an instance store; refusing to overwrite it")
    if path.exists() and not rebuild:
        try:
            with InstanceStore(path) as st:
                if json.loads(st.meta.get("sources", "[]")) == source_fingerprint(sources):
                    return path, BuildReport(
                        path=str(path), sources=[str(s) for s in sources], rows=len(st), reused=True,
                        bytes=path.stat().st_size,
                    )  # fmt: skip
        except StoreError:
            pass  # not a store (or an older format): rebuilt below
    return path, build_store(sources, path, progress=progress)


# -- reading ----------------------------------------------------------------------------------
class InstanceStore:
    """Read-only access to a store file, safe to share between threads."""

    def __init__(self, path: str | Path, cache_size: int = 256) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise StoreError(f"{self.path}: no such file")
        self._uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self.cache: LockedLRU[str, Instance] = LockedLRU(cache_size)
        try:
            rows = dict(self._conn().execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StoreError(f"{self.path}: not a pbsolve instance store ({exc})") from exc
        fmt = rows.get("format")
        fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
        if fmt not in (STORE_FORMAT, TRAINED_FORMAT, ZLIB_FORMAT):
            self.close()
            raise StoreError(f"{self.path}: not a pbsolve instance store (format {fmt!r})")
        self.format = fmt
        zdict = bytes(rows.pop("zdict", b""))
        # pbsolve-store/3: a dictionary per kind (task type); the older formats: one for all rows
        self._dicts: dict[int, zstandard.ZstdCompressionDict | None] = {}
        if fmt == STORE_FORMAT:
            try:
                kinds = self._conn().execute("SELECT kind, zdict FROM kinds").fetchall()
            except sqlite3.DatabaseError as exc:
                self.close()
                raise StoreError(f"{self.path}: damaged store, no table of task kinds ({exc})") from exc
            try:
                self._dicts = {kind: _zstd_dict(_unpack_dictionary(bytes(z)), raw=True) for kind, z in kinds}
            except zstandard.ZstdError as exc:
                self.close()
                raise StoreError(f"{self.path}: damaged store, a task dictionary does not decompress ({exc})") from exc
        elif fmt == TRAINED_FORMAT:
            self._dicts = {0: _zstd_dict(zdict)}
        self._decompressor = (
            None if fmt != ZLIB_FORMAT else zlib.decompressobj(zdict=zdict) if zdict else zlib.decompressobj()
        )
        self._select = "kind, body" if fmt == STORE_FORMAT else "0, body"
        self.meta: dict[str, str] = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in rows.items()}
        self._count = int(self.meta.get("count", "0"))

    # connections: one per thread, each used only by the thread that opened it
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(self._uri, uri=True, check_same_thread=False)
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: cannot open ({exc})") from exc
            conn.execute("PRAGMA query_only=1")
            conn.execute("PRAGMA cache_size=-2048")  # 2 MiB per connection
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    def close(self) -> None:
        with self._conns_lock:
            conns, self._conns = self._conns, []
        for c in conns:
            with contextlib.suppress(sqlite3.Error):
                c.close()
        self._local = threading.local()

    def __enter__(self) -> InstanceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return self._count

    def __contains__(self, instance_id: object) -> bool:
        if not isinstance(instance_id, str):
            return False
        return self._conn().execute("SELECT 1 FROM instances WHERE id = ?", (instance_id,)).fetchone() is not None

    def _decode(self, kind: int, body: bytes) -> str:
        if self._decompressor is None:  # zstd; a decompressor per thread and kind: they are not safe to share
            per_thread = getattr(self._local, "zstd", None)
            if per_thread is None:
                per_thread = self._local.zstd = {}
            d = per_thread.get(kind)
            if d is None:
                if kind not in self._dicts:
                    raise StoreError(f"{self.path}: damaged store, a row names kind {kind} that has no dictionary")
                d = per_thread[kind] = zstandard.ZstdDecompressor(dict_data=self._dicts[kind])
            try:
                return d.decompress(body).decode("utf-8")
            except (zstandard.ZstdError, UnicodeDecodeError) as exc:
                raise StoreError(f"{self.path}: damaged store, a row does not decompress ({exc})") from exc
        z = self._decompressor.copy()  # a pbsolve-store/1 file
        return (z.decompress(body) + z.flush()).decode("utf-8")

    def get_text(self, instance_id: str) -> str | None:
        """The instance's JSON text, or None for an unknown id."""
        row = self._conn().execute(f"SELECT {self._select} FROM instances WHERE id = ?", (instance_id,)).fetchone()
        return None if row is None else self._decode(row[0], row[1])

    def _parse(self, instance_id: str, text: str) -> Instance:
        try:
            return Instance.model_validate_json(text)
        except (ValidationError, RecursionError) as exc:
            raise StoreError(f"{self.path}: stored instance {instance_id!r} no longer validates: {exc}") from exc

    def get(self, instance_id: str) -> Instance | None:
        """The parsed instance (shared through the LRU: never mutate it), or None."""
        inst = self.cache.get(instance_id)
        if inst is not None:
            return inst
        text = self.get_text(instance_id)
        if text is None:
            return None
        inst = self._parse(instance_id, text)
        self.cache.put(instance_id, inst)
        return inst

    def get_many(self, ids: Iterable[str]) -> dict[str, Instance]:
        """Parsed instances for the distinct known ids among ``ids`` (unknown ids are absent),
        with one SQL query per 500 ids not in the LRU."""
        found: dict[str, Instance] = {}
        missing: list[str] = []
        for iid in dict.fromkeys(ids):
            inst = self.cache.get(iid)
            if inst is None:
                missing.append(iid)
            else:
                found[iid] = inst
        conn = self._conn()
        for start in range(0, len(missing), 500):
            part = missing[start : start + 500]
            marks = ",".join("?" * len(part))
            sql = f"SELECT id, {self._select} FROM instances WHERE id IN ({marks})"
            for iid, kind, body in conn.execute(sql, part):
                inst = self._parse(iid, self._decode(kind, body))
                self.cache.put(iid, inst)
                found[iid] = inst
        return found

    def ids(self, limit: int | None = None, offset: int = 0) -> list[str]:
        """Ids in rowid order (for sampling and tools; not for serving)."""
        sql = "SELECT id FROM instances ORDER BY rowid LIMIT ? OFFSET ?"
        return [r[0] for r in self._conn().execute(sql, (-1 if limit is None else limit, offset))]

    def id_at(self, rowid: int) -> str | None:
        row = self._conn().execute("SELECT id FROM instances WHERE rowid = ?", (rowid,)).fetchone()
        return None if row is None else row[0]


__all__ = [
    "BuildReport",
    "InstanceStore",
    "StoreError",
    "StoreWriter",
    "build_store",
    "default_store_path",
    "ensure_store",
    "is_parquet",
    "is_store_file",
    "iter_instance_texts",
    "parse_instance_text",
]
