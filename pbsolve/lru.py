"""A bounded memo that threads may share: cachetools' LRUCache behind one lock.

Each of pbsolve's memos (parsed instance data, optima, enumerated trips, the servers'
decoded instances) is read from thread pools (one-worker runs, the reward servers), and
LRUCache is not thread-safe: even a read reorders it. Values are computed outside the
lock by the caller, so a slow validation or solve never blocks other readers, and one
that raises leaves no entry.
"""

from __future__ import annotations

import threading
from typing import Generic, TypeVar, overload

from cachetools import LRUCache

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")


class LockedLRU(Generic[K, V]):
    """The ``size`` most recently used entries; a size of 0 (or less) keeps none."""

    def __init__(self, size: int) -> None:
        self.size = max(0, size)
        self._data: LRUCache[K, V] = LRUCache(maxsize=max(1, self.size))
        self._lock = threading.Lock()

    @overload
    def get(self, key: K) -> V | None: ...
    @overload
    def get(self, key: K, default: D) -> V | D: ...
    def get(self, key: K, default: object = None) -> object:
        """The value kept for ``key`` (now the most recently used), else ``default``."""
        with self._lock:
            return self._data.get(key, default)

    def put(self, key: K, value: V) -> None:
        """Keep ``value``; the least recently used entry goes when the memo is full."""
        if self.size == 0:
            return
        with self._lock:
            self._data[key] = value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)
