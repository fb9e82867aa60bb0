"""Batch grading on worker processes, so that one large batch uses every core.

A server process grades one answer at a time (Python's GIL), and a training batch of
1,024 answers to 128 instances is mostly cold work: parsing each instance, validating it,
grading eight answers. ``GradingPool`` splits such a batch among ``processes`` workers,
every answer to one instance in one worker's part (:func:`split_batch`); each worker opens
the store itself, keeps its own cache of parsed and validated instances, and sends back
only the public view of each grade (what the server answers with), never the instances.

A batch waits for its slowest part, so the parts are balanced: an instance graded
recently goes back to the worker that holds it (each worker is its own single-process
executor, so a part goes to the worker it was made for), and the new ones, largest
first, to the least loaded worker. A split by a hash of the id alone left the larger of
two parts of a 128-instance batch at 78 instances or more in 1 batch of 100 (68 on
average, against 64 balanced).

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
from collections import OrderedDict
from collections.abc import Mapping, Sequence
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


def _worker_pid() -> int:
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
COLD_COST = 8
"""What parsing and validating an instance costs a worker, in answers graded: about 0.7 ms
against 0.08 ms per answer (measured on the serve benchmark's instances, issue 18)."""


def split_batch(ids: Sequence[str], processes: int, home: Mapping[str, int]) -> tuple[list[list[int]], dict[str, int]]:
    """The positions of ``ids`` (each answer's instance id) in each worker's part, and the
    worker of each instance: every answer to one instance in one part; an instance with a
    ``home`` (the worker that graded it lately, and likely holds it parsed) goes there, and
    the others, most answers first (ties in batch order), each to the least loaded worker
    (the first of equals), an instance costing :data:`COLD_COST` plus its answers. The same
    batch and homes give the same split."""
    groups: dict[str, list[int]] = {}
    for k, iid in enumerate(ids):
        groups.setdefault(iid, []).append(k)
    load = [0] * processes
    owner: dict[str, int] = {}
    new: list[str] = []
    for iid, where in groups.items():
        w = home.get(iid)
        if w is None or not 0 <= w < processes:
            new.append(iid)
        else:
            owner[iid] = w
            load[w] += len(where)
    for iid in sorted(new, key=lambda i: -len(groups[i])):
        w = min(range(processes), key=load.__getitem__)
        owner[iid] = w
        load[w] += COLD_COST + len(groups[iid])
    parts: list[list[int]] = [[] for _ in range(processes)]
    for k, iid in enumerate(ids):
        parts[owner[iid]].append(k)
    return parts, owner


class GradingPool:
    """``processes`` worker processes grading batches of store-backed answers, each its own
    single-process executor (a part is graded by the worker it was made for)."""

    def __init__(self, store_path: str, processes: int, cache_size: int, max_response_chars: int) -> None:
        if processes < 1:
            raise ValueError("a grading pool needs at least one process")
        self.processes = processes
        per_worker = max(16, cache_size // processes)
        self._args = (store_path, per_worker, max_response_chars)
        self._lock = threading.Lock()
        # instance id -> the worker that graded it last, as many as the workers' caches hold
        self._home: OrderedDict[str, int] = OrderedDict()
        self._homes = per_worker * processes
        self._executors = [self._start() for _ in range(processes)]

    def _start(self) -> ProcessPoolExecutor:
        ex = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),  # nothing of the server's threads or sockets
            initializer=_start_worker,
            initargs=self._args,
        )
        ex.submit(_worker_pid)  # start the worker now (it imports the checkers)
        return ex

    def pids(self, timeout: float = 60.0) -> set[int]:
        """The workers' process ids."""
        with self._lock:
            executors = list(self._executors)
        return {f.result(timeout=timeout) for f in [ex.submit(_worker_pid) for ex in executors]}

    def _split(self, items: Sequence[PoolItem]) -> tuple[list[list[int]], list[ProcessPoolExecutor]]:
        """:func:`split_batch` under the pool's homes, which then remember this batch's."""
        with self._lock:
            parts, owner = split_batch([it.instance_id for it in items], self.processes, self._home)
            for iid, w in owner.items():
                self._home[iid] = w
                self._home.move_to_end(iid)
            while len(self._home) > self._homes:
                self._home.popitem(last=False)
            return parts, list(self._executors)

    def grade(
        self, items: Sequence[PoolItem], mode: RewardMode, deadline: float, details: bool = False
    ) -> list[dict[str, Any]]:
        """The grades' public views (``grade_view``), in the order of ``items``; raises
        ``PoolFailure`` (unknown ids, invalid stored instances, a grader failure, the
        deadline) and ``GradingError`` when a worker process died (that worker is restarted)."""
        parts, executors = self._split(items)
        futures: list[tuple[int, list[int], Future[list[dict[str, Any]]]]] = []
        out: list[dict[str, Any] | None] = [None] * len(items)
        failures: list[PoolFailure] = []
        broken: list[int] = []  # the workers found dead
        finished = 0  # answers of the parts graded in full
        for w, where in enumerate(parts):
            if where:
                try:
                    fut = executors[w].submit(_grade_part, [items[k] for k in where], mode, deadline, details)
                except BrokenProcessPool:
                    broken.append(w)
                    continue
                futures.append((w, where, fut))
        for w, where, fut in futures:  # every part is waited for: none is left running
            try:
                for k, view in zip(where, fut.result()):
                    out[k] = view
                finished += len(where)
            except PoolFailure as exc:
                failures.append(exc)
            except BrokenProcessPool:
                broken.append(w)
        if broken:
            for w in broken:
                self._restart(w, executors[w])
            raise GradingError(f"a grading worker process died (worker {broken[0] + 1}); it was restarted")
        if failures:
            raise _first_failure(failures, finished, len(items))
        return out  # type: ignore[return-value]  # every index is in exactly one part

    def _restart(self, w: int, broken: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._executors[w] is broken:
                broken.shutdown(wait=False, cancel_futures=True)
                self._executors[w] = self._start()
                for iid in [i for i, h in self._home.items() if h == w]:  # its cache is gone
                    del self._home[iid]

    def close(self) -> None:
        with self._lock:
            for ex in self._executors:
                ex.shutdown(wait=True, cancel_futures=True)


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


__all__ = ["GradingPool", "PoolFailure", "PoolItem", "split_batch"]
