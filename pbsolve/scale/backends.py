"""Where shards are built: local worker processes, or a Ray cluster.

Both backends run the same function (:func:`pbsolve.scale.shard.build_shard`) and hand
back plain results; the driver owns every file and every decision (order, deduplication,
retries of lost workers, the manifest). A backend only says, per submitted shard, what
came back: an output, or a :class:`ShardFailure` that tells whether the work was lost
(a dead worker: worth another attempt) or failed for a reason that would repeat.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import os
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Protocol

from pbsolve import interrupts
from pbsolve.generate import CheckerDisagreement, GenerateOptions
from pbsolve.scale.shard import ShardOutput, ShardRange, build_shard

BACKENDS = ("local", "ray")
RAY_TASK_RETRIES = 3  # Ray re-runs a shard whose worker died this many times


@dataclass(frozen=True)
class ShardFailure:
    error: str
    retryable: bool  # the worker was lost: another attempt may succeed


Result = ShardOutput | ShardFailure


class Backend(Protocol):
    slots: int  # shards worth keeping in flight

    def submit(self, seed: int, rng: ShardRange, options: GenerateOptions) -> None: ...

    def wait(self, timeout: float) -> list[tuple[ShardRange, Result]]:
        """The shards finished since the last call (waits up to ``timeout`` for one)."""
        ...

    def close(self) -> None:
        """Stop: after an interrupt, running shards are abandoned promptly."""
        ...


def _build(args: tuple[int, ShardRange, GenerateOptions]) -> ShardOutput:
    return build_shard(*args)


class LocalBackend:
    """A pool of worker processes (a thread for one worker), as ``pbsolve generate`` uses;
    a worker that dies breaks the pool, which is rebuilt, and its shards are reported lost."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.slots = 2 * workers
        self._ex: cf.Executor = self._new()
        self._pending: dict[cf.Future[ShardOutput], ShardRange] = {}
        self._lost: list[ShardRange] = []  # shards of a pool found broken, reported at the next wait

    def _new(self) -> cf.Executor:
        if self.workers <= 1:
            return cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pbsolve-shard")
        return interrupts.worker_pool(self.workers)

    def submit(self, seed: int, rng: ShardRange, options: GenerateOptions) -> None:
        try:
            fut = self._ex.submit(_build, (seed, rng, options))
        except BrokenProcessPool:  # a worker died since the last wait: its pool takes no more work
            self._restart()
            fut = self._ex.submit(_build, (seed, rng, options))
        self._pending[fut] = rng

    def _restart(self) -> None:
        """A new pool; every shard of the broken one is reported lost at the next wait."""
        for fut, rng in self._pending.items():
            fut.cancel()
            self._lost.append(rng)
        self._pending.clear()
        self._close_executor()
        self._ex = self._new()

    def wait(self, timeout: float) -> list[tuple[ShardRange, Result]]:
        if self._lost:
            lost, self._lost = self._lost, []
            return [(rng, ShardFailure("a worker process died", retryable=True)) for rng in lost]
        if not self._pending:
            return []
        done, _ = cf.wait(list(self._pending), timeout=timeout, return_when=cf.FIRST_COMPLETED)
        if not done and interrupts.stop_requested():
            interrupts.stop_active_solvers()
        found: list[tuple[ShardRange, Result]] = []
        broken = False
        for fut in done:
            rng = self._pending.pop(fut)
            try:
                out = fut.result()
            except BrokenProcessPool:
                broken = True
                found.append((rng, ShardFailure("a worker process died", retryable=True)))
                continue
            except CheckerDisagreement:
                raise
            except Exception as exc:  # a deterministic failure of the shard's own work
                interrupts.reraise_if_stopping(exc)
                found.append((rng, ShardFailure(f"{type(exc).__name__}: {exc}", retryable=False)))
                continue
            if out.interrupted:
                raise interrupts.Interrupted()
            found.append((rng, out))
        if broken:  # every other job of the broken pool is lost too: report them, start afresh
            self._restart()
            lost, self._lost = self._lost, []
            found += [(rng, ShardFailure("a worker process died", retryable=True)) for rng in lost]
        return found

    def _close_executor(self) -> None:
        if isinstance(self._ex, interrupts.WorkerPool):
            self._ex.close()
        else:
            self._ex.shutdown(wait=not interrupts.stop_requested(), cancel_futures=True)

    def close(self) -> None:
        for fut in self._pending:
            fut.cancel()
        self._pending.clear()
        self._close_executor()


class RayBackend:
    """Ray tasks, one per shard; Ray re-runs a task whose worker died (``max_retries``).
    Without ``address`` a local Ray with ``workers`` CPUs is started (and shut down at
    the end); with one, the driver joins that cluster, whose nodes must have pbsolve
    installed at the same version."""

    def __init__(self, workers: int, address: str | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise RuntimeError("the ray backend needs Ray: pip install 'pbsolve[ray]'") from None
        self.ray = ray
        self._started = False
        if not ray.is_initialized():
            if address:
                ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
            else:
                ray.init(num_cpus=workers, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
            self._started = True
        cpus = int(ray.cluster_resources().get("CPU", workers))
        self.slots = 2 * max(cpus, 1)
        self._remote = ray.remote(num_cpus=1, max_retries=RAY_TASK_RETRIES, retry_exceptions=False)(_build)
        self._pending: dict[Any, ShardRange] = {}

    def submit(self, seed: int, rng: ShardRange, options: GenerateOptions) -> None:
        self._pending[self._remote.remote((seed, rng, options))] = rng

    def wait(self, timeout: float) -> list[tuple[ShardRange, Result]]:
        if not self._pending:
            return []
        ready, _ = self.ray.wait(list(self._pending), num_returns=1, timeout=timeout)
        found: list[tuple[ShardRange, Result]] = []
        for ref in ready:
            rng = self._pending.pop(ref)
            try:
                out = self.ray.get(ref)
            except self.ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                if isinstance(cause, CheckerDisagreement):
                    raise cause from None
                found.append((rng, ShardFailure(f"{type(cause or exc).__name__}: {cause or exc}", retryable=False)))
                continue
            except self.ray.exceptions.RayError as exc:  # worker or node lost past Ray's own retries
                found.append((rng, ShardFailure(f"{type(exc).__name__}: {exc}".splitlines()[0], retryable=False)))
                continue
            if out.interrupted:
                raise interrupts.Interrupted()
            found.append((rng, out))
        return found

    def close(self) -> None:
        for ref in self._pending:
            self.ray.cancel(ref, force=True)
        self._pending.clear()
        if self._started:
            self.ray.shutdown()


def make_backend(name: str, workers: int, address: str | None = None) -> Backend:
    if name == "local":
        if address:
            raise ValueError("--address joins a Ray cluster: use it with --backend ray")
        return LocalBackend(workers)
    if name == "ray":
        return RayBackend(workers, address or os.environ.get("RAY_ADDRESS"))
    raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
