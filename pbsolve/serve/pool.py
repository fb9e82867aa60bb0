"""Batch grading on worker processes, so that one large batch uses every core.

A server process grades one answer at a time (Python's GIL), and a training batch of
1,024 answers to 128 instances is mostly cold work: parsing each instance, validating it,
grading eight answers. ``GradingPool`` splits such a batch among ``processes`` workers by
instance id; each worker opens the store itself, keeps its own cache of parsed and
validated instances, and sends back only the public view of each grade (what the server
answers with), never the instances. An id always goes to the same worker (a stable hash),
so the workers' caches hold disjoint instances and stay useful from batch to batch.

Everything a batch graded in the server process can say, a pooled batch says the same
way: unknown ids, stored instances that are not valid ground truths, a grader failure,
the deadline. Workers ignore SIGINT: Ctrl-C reaches the server, which shuts the pool down.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pkgutil
import signal
import threading
import time
import zlib
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from pbsolve.grading import GradingError, InvalidGroundTruth, validate_instance
from pbsolve.schema import RewardMode
from pbsolve.serve.heap import freeze_startup_heap
from pbsolve.serve.rewards import DeadlineExceeded, grade_pairs, grade_view, response_from_query


@dataclass(frozen=True)
class PoolItem:
    """One answer to grade: ``text`` is the response, or with ``from_query`` an OpenRLHF
    query whose response part is cut out with the instance's own prompt (the worker holds
    the instance; the server found no prompt to cut at)."""

    instance_id: str
    text: Any
    response_id: str | None = None
    from_query: bool = False


class PoolFailure(Exception):
    """Why a pooled batch has no grades; ``kind`` is one of ``unknown`` (``ids``: ids the
    store does not hold), ``invalid`` (``ids`` with ``reasons``: stored instances that are not
    valid ground truths), ``grader`` (``reasons[0]``, ``ids`` the instance if known: the
    grader failed) and ``deadline`` (``done`` of ``total`` answers graded in time)."""

    def __init__(
        self, kind: str, ids: tuple[str, ...] = (), reasons: tuple[str, ...] = (), done: int = 0, total: int = 0
    ) -> None:
        super().__init__(kind, ids, reasons, done, total)  # the args rebuild it in the server process
        self.kind, self.ids, self.reasons, self.done, self.total = kind, ids, reasons, done, total


# -- the worker side ------------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}


def _start_worker(store_path: str, cache_size: int, max_response_chars: int) -> None:
    from pbsolve.family import checker
    from pbsolve.serve.store import InstanceStore

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server handles Ctrl-C and shuts the pool down
    _WORKER.update(store=InstanceStore(store_path, cache_size=cache_size), limit=max_response_chars)
    import pbsolve.checkers as checkers

    for found in pkgutil.iter_modules(checkers.__path__):  # import every checker now, not in the first batch
        with contextlib.suppress(Exception):  # grading reports a checker that cannot be imported, per instance
            checker(found.name)
    freeze_startup_heap()


def _worker_pid(pause: float = 0.0) -> int:
    time.sleep(pause)  # keeps this worker busy, so that the next call goes to another one
    return os.getpid()


def _grade_part(items: Sequence[PoolItem], mode: RewardMode, deadline: float, details: bool) -> list[dict[str, Any]]:
    """Grade one worker's share of a batch; raises ``PoolFailure`` (picklable) on anything
    that is not a grade."""
    store, limit = _WORKER["store"], _WORKER["limit"]
    ids = list(dict.fromkeys(it.instance_id for it in items))
    found = store.get_many(ids)
    missing = tuple(i for i in ids if i not in found)
    if missing:
        raise PoolFailure("unknown", ids=missing)
    invalid: list[tuple[str, str]] = []
    for iid in ids:
        try:
            validate_instance(found[iid])
        except InvalidGroundTruth as exc:
            invalid.append((iid, str(exc)))
        except GradingError as exc:
            raise PoolFailure("grader", ids=(iid,), reasons=(str(exc),)) from None
    if invalid:
        raise PoolFailure("invalid", ids=tuple(i for i, _ in invalid), reasons=tuple(r for _, r in invalid))
    pairs = []
    for it in items:
        inst = found[it.instance_id]
        pairs.append((inst, response_from_query(it.text, None, inst) if it.from_query else it.text))
    try:
        grades = grade_pairs(pairs, mode, [it.response_id for it in items], deadline=deadline, max_response_chars=limit)
    except DeadlineExceeded as exc:
        raise PoolFailure("deadline", done=exc.done, total=exc.total) from None
    except GradingError as exc:
        raise PoolFailure("grader", reasons=(str(exc),)) from None
    return [grade_view(g, details) for g in grades]


# -- the server side ------------------------------------------------------------------------------
def worker_of(instance_id: str, processes: int) -> int:
    """The worker that grades every answer to this instance (stable across runs)."""
    return zlib.crc32(instance_id.encode("utf-8", "surrogatepass")) % processes


class GradingPool:
    """``processes`` worker processes grading batches of store-backed answers."""

    def __init__(self, store_path: str, processes: int, cache_size: int, max_response_chars: int) -> None:
        if processes < 1:
            raise ValueError("a grading pool needs at least one process")
        self.processes = processes
        self._args = (store_path, max(16, cache_size // processes), max_response_chars)
        self._lock = threading.Lock()
        self._executor = self._start()

    def _start(self) -> ProcessPoolExecutor:
        ex = ProcessPoolExecutor(
            max_workers=self.processes,
            mp_context=multiprocessing.get_context("spawn"),  # nothing of the server's threads or sockets
            initializer=_start_worker,
            initargs=self._args,
        )
        for _ in range(self.processes):  # start every worker now (they import the checkers)
            ex.submit(_worker_pid)
        return ex

    def pids(self, timeout: float = 60.0) -> set[int]:
        """The workers' process ids: asked until every worker has answered (each is kept
        busy for a moment, so the calls spread over all of them), or ``timeout`` seconds."""
        with self._lock:
            ex = self._executor
        seen: set[int] = set()
        end = time.monotonic() + timeout
        while len(seen) < self.processes and time.monotonic() < end:
            seen |= {f.result() for f in [ex.submit(_worker_pid, 0.2) for _ in range(self.processes)]}
        return seen

    def grade(
        self, items: Sequence[PoolItem], mode: RewardMode, deadline: float, details: bool = False
    ) -> list[dict[str, Any]]:
        """The grades' public views (``grade_view``), in the order of ``items``; raises
        ``PoolFailure`` (unknown ids, invalid stored instances, a grader failure, the
        deadline) and ``GradingError`` when a worker process died (the pool is restarted)."""
        parts: list[list[int]] = [[] for _ in range(self.processes)]
        for k, it in enumerate(items):
            parts[worker_of(it.instance_id, self.processes)].append(k)
        with self._lock:
            ex = self._executor
        futures: list[tuple[list[int], Future[list[dict[str, Any]]]]] = []
        try:
            for where in parts:
                if where:
                    futures.append((where, ex.submit(_grade_part, [items[k] for k in where], mode, deadline, details)))
            out: list[dict[str, Any] | None] = [None] * len(items)
            failures: list[PoolFailure] = []
            finished = 0  # answers of the parts graded in full
            for where, fut in futures:
                try:
                    for k, view in zip(where, fut.result()):
                        out[k] = view
                    finished += len(where)
                except PoolFailure as exc:
                    failures.append(exc)
        except BrokenProcessPool as exc:
            self._restart(ex)
            raise GradingError(f"a grading worker process died ({exc}); the pool was restarted") from None
        if failures:
            raise _first_failure(failures, finished, len(items))
        return out  # type: ignore[return-value]  # every index is in exactly one part

    def _restart(self, broken: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._executor is broken:
                broken.shutdown(wait=False, cancel_futures=True)
                self._executor = self._start()

    def close(self) -> None:
        with self._lock:
            self._executor.shutdown(wait=True, cancel_futures=True)


def _first_failure(failures: list[PoolFailure], finished: int, total: int) -> PoolFailure:
    """The failure the whole batch reports, in the order a batch graded in one process finds
    them: unknown ids, a grader failure, invalid instances, then the deadline."""
    for kind in ("unknown", "grader", "invalid"):
        same = [f for f in failures if f.kind == kind]
        if same:
            return PoolFailure(
                kind, ids=tuple(i for f in same for i in f.ids), reasons=tuple(r for f in same for r in f.reasons)
            )
    return PoolFailure("deadline", done=finished + sum(f.done for f in failures), total=total)


__all__ = ["GradingPool", "PoolFailure", "PoolItem", "worker_of"]
