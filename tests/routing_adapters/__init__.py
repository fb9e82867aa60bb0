"""The registry suite's knowledge of each routing task type: one module per task type,
each exposing ``ADAPTER`` (a :class:`tests.task_adapters.TaskAdapter`)."""

from __future__ import annotations

from tests.task_adapters import TaskAdapter, adapters_in


def adapters() -> dict[str, TaskAdapter]:
    return adapters_in(__name__)


__all__ = ["TaskAdapter", "adapters"]
