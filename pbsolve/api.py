"""The Python API: generate, load, answer and grade without the CLI.

Grading functions raise ``GradingError`` (``InvalidGroundTruth`` for an instance that is not
a valid ground truth) when the grader fails, never a reward; ``on_error="zero"`` returns a
zero grade with ``grader_error`` set instead."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pbsolve.generate import GenerateOptions, RunSummary, generate
from pbsolve.grading import GradingError, InvalidGroundTruth, OnError, grade
from pbsolve.jsonl import LineError, read_models
from pbsolve.schema import Grade, Instance, RewardMode


def generate_instances(n: int, seed: int = 0, workers: int = 1, **options: Any) -> list[Instance]:
    """Exactly ``n`` certified instances: indices that certify nothing are skipped and the
    run goes on to further indices (:func:`pbsolve.generate.generate`)."""
    opts = GenerateOptions(**options)
    return [o.instance for o in generate(n, seed, opts, workers) if o.instance is not None]


def load_instances(path: str | Path) -> tuple[dict[str, Instance], list[LineError]]:
    found: dict[str, Instance] = {}
    errors: list[LineError] = []
    for no, item in read_models(path, Instance):
        if isinstance(item, LineError):
            errors.append(item)
        elif item.id in found:
            errors.append(LineError(str(path), no, f"duplicate instance id {item.id!r}"))
        else:
            found[item.id] = item
    return found, errors


def reward(
    instance: Instance | str | dict, response: str, mode: RewardMode = "all_pass", on_error: OnError = "raise"
) -> float:
    """The scalar reward of one response (instance as model, dict or JSON string)."""
    if isinstance(instance, str):
        instance = Instance.model_validate_json(instance)
    elif isinstance(instance, dict):
        instance = Instance.model_validate(instance)
    return grade(instance, response, mode, on_error=on_error).reward


def grade_many(
    instance: Instance, responses: Iterable[str], mode: RewardMode = "all_pass", on_error: OnError = "raise"
) -> Iterator[Grade]:
    for text in responses:
        yield grade(instance, text, mode, on_error=on_error)


__all__ = [
    "GenerateOptions",
    "GradingError",
    "InvalidGroundTruth",
    "RunSummary",
    "generate",
    "generate_instances",
    "grade",
    "grade_many",
    "load_instances",
    "reward",
]
