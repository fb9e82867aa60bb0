"""pbsolve owns SIGINT and SIGTERM: an interrupt stops the work, it never becomes a result.

CP-SAT is told never to install its own SIGINT handler (``catch_sigint_signal = False``
in :func:`pbsolve.certify.make_solver`): its handler made an interrupted solve look like a
time-out (the index was then re-sampled, changing the output) and once deadlocked. Here
instead the first SIGINT/SIGTERM sets a stop flag, stops every CP-SAT search running in
this process (``stop_search``) and tells worker processes to do the same; a solve that
returns after a stop raises :class:`Interrupted`, which no rejection handler catches. A
second signal ends the process at once.

Worker processes made by :func:`worker_pool` ignore SIGINT (a Ctrl-C in a terminal reaches
the whole process group; the parent decides) and watch a shared event instead.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)
_stop = threading.Event()
_signum: int | None = None
_lock = threading.Lock()
_solvers: set[Any] = set()
_worker_events: list[Any] = []  # one multiprocessing.Event per live worker pool


class Interrupted(KeyboardInterrupt):
    """The run was interrupted (a signal, or a stop request); not a failure of the work.

    A KeyboardInterrupt, so ``except Exception`` (and every rejection handler) lets it pass."""

    def __init__(self, signum: int | None = None) -> None:
        self.signum = signum if signum is not None else _signum
        super().__init__(signal_name(self.signum))


def signal_name(signum: int | None) -> str:
    if signum is None:
        return "interrupted"
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def exit_code(signum: int | None) -> int:
    """The shell convention: 128 + the signal number (130 for SIGINT, 143 for SIGTERM)."""
    return 128 + (signum if signum is not None else signal.SIGINT)


def stop_requested() -> bool:
    return _stop.is_set()


def received() -> int | None:
    """The signal that asked for the stop (None if none did)."""
    return _signum


def check() -> None:
    """Raise :class:`Interrupted` once a stop was requested."""
    if _stop.is_set():
        raise Interrupted()


def reraise_if_stopping(exc: BaseException) -> None:
    """Call first in an ``except Exception`` handler: once a stop was requested, the error
    is taken for the interrupt itself and re-raised as :class:`Interrupted`.

    The handler's ``Interrupted`` can surface wrapped: raised inside a C extension's
    callback (pydantic's serializers, for one) it comes back as that library's own error.
    Without this, such an error became a result (an empty answer, a rejected instance)."""
    if _stop.is_set() and not isinstance(exc, KeyboardInterrupt):
        raise Interrupted() from exc


def _raised_while_handling_an_interrupt(exc: BaseException) -> bool:
    seen: set[int] = set()
    link: BaseException | None = exc.__context__
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return True
        seen.add(id(link))
        link = link.__context__
    return False


def stop_active_solvers() -> None:
    """Ask every search running in this process to stop (safe from any thread)."""
    with _lock:
        solvers = list(_solvers)
    for s in solvers:
        s.stop_search()


def request_stop(signum: int | None = None) -> None:
    """Stop: set the flag, stop running searches here and in worker processes."""
    global _signum
    if _signum is None:
        _signum = signum
    _stop.set()
    for event in list(_worker_events):
        event.set()
    stop_active_solvers()


def reset() -> None:
    """Forget a stop (tests and long-lived callers that handled it)."""
    global _signum
    _stop.clear()
    _signum = None


@contextmanager
def solving(solver: Any) -> Iterator[None]:
    """Register a CP-SAT solver as running, so a stop request reaches it."""
    with _lock:
        _solvers.add(solver)
    try:
        yield
    finally:
        with _lock:
            _solvers.discard(solver)


def _handler(raise_in_main: bool) -> Callable[[int, Any], None]:
    def handle(signum: int, frame: Any) -> None:
        if _stop.is_set():  # the second signal: the user insists
            sys.stderr.write(f"\n{signal_name(signum)} again: stopping at once\n")
            sys.stderr.flush()
            os._exit(exit_code(signum))
        request_stop(signum)
        if raise_in_main:
            raise Interrupted(signum)

    return handle


@contextmanager
def owned_signals(raise_in_main: bool = True) -> Iterator[None]:
    """SIGINT and SIGTERM stop the work in this block (main thread only; elsewhere a no-op).

    ``raise_in_main``: the handler also raises :class:`Interrupted` in the main thread
    (for commands that wait on I/O); otherwise the caller polls :func:`stop_requested`.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    reset()
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    handle = _handler(raise_in_main)
    for s in SIGNALS:
        signal.signal(s, handle)
    try:
        yield
    except Exception as exc:  # an interrupt that a library wrapped in its own error type
        if not _raised_while_handling_an_interrupt(exc):  # the caller's own exit after a stop stays as it is
            reraise_if_stopping(exc)
        raise
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


# -- worker processes ---------------------------------------------------------------------
def _watch(event: Any) -> None:
    event.wait()
    request_stop()
    while True:  # a search that started just as the stop came is stopped on the next tick
        stop_active_solvers()
        time.sleep(0.05)


def _orphan_watch(parent: int) -> None:
    """A worker whose parent died (killed outright, no handler ran) ends itself: nothing
    would ever collect its work, and it would hold the parent's pipes open."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _init_worker(event: Any) -> None:
    """Worker start-up: the parent owns the signals; a shared event carries its stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch, args=(event,), name="pbsolve-stop", daemon=True).start()
    threading.Thread(target=_orphan_watch, args=(os.getppid(),), name="pbsolve-orphan", daemon=True).start()


class WorkerPool(ProcessPoolExecutor):
    """A process pool whose workers stop their searches when the parent is interrupted."""

    def __init__(self, max_workers: int) -> None:
        self.stop_event = multiprocessing.get_context().Event()
        super().__init__(max_workers=max_workers, initializer=_init_worker, initargs=(self.stop_event,))
        _worker_events.append(self.stop_event)
        if _stop.is_set():
            self.stop_event.set()

    def close(self, grace: float = 2.0) -> None:
        """Shut down promptly: cancel queued jobs; after an interrupt, give running jobs
        ``grace`` seconds to stop and terminate the workers still busy."""
        interrupted = _stop.is_set()
        procs = list((getattr(self, "_processes", None) or {}).values())  # shutdown() forgets them
        if interrupted:
            self.stop_event.set()
        self.shutdown(wait=not interrupted, cancel_futures=True)
        if interrupted:
            deadline = time.monotonic() + grace
            for p in procs:
                p.join(max(0.0, deadline - time.monotonic()))
            for p in procs:
                if p.is_alive():
                    p.terminate()
            for p in procs:
                p.join(1.0)
        if self.stop_event in _worker_events:
            _worker_events.remove(self.stop_event)


def worker_pool(workers: int) -> WorkerPool:
    return WorkerPool(workers)
