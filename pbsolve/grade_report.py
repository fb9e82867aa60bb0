"""Grading a responses file against an instance set, with nothing hidden (``pbsolve grade``).

A run says how many responses were graded, which instances got no response (counted as
failures unless the caller opts out), which lines were duplicates of an earlier
(id, response_id) pair (skipped: only the first counts), which lines were unreadable or
named unknown instances, and which grades the grader could not give (``grader_error``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pbsolve.grading import grade
from pbsolve.jsonl import LineError, read_models
from pbsolve.schema import Grade, Instance, ResponseLine, RewardMode


@dataclass
class GradeRun:
    """The outcome of grading one responses file."""

    mode: RewardMode
    grades: list[Grade] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)  # unreadable lines, unknown ids, duplicates
    duplicates: int = 0
    missing: list[str] = field(default_factory=list)  # instance ids without any response, in instance order

    @property
    def grader_errors(self) -> list[Grade]:
        return [g for g in self.grades if g.grader_error is not None]


def grade_responses(instances: dict[str, Instance], responses: Path, mode: RewardMode) -> GradeRun:
    """Grade every line of ``responses``; grader failures become grades with ``grader_error``
    set (so one broken instance does not stop the file), never silent zeros."""
    run = GradeRun(mode=mode)
    first_line: dict[tuple[str, str | None], int] = {}
    for no, item in read_models(responses, ResponseLine):
        if isinstance(item, LineError):
            run.errors.append(item)
            continue
        inst = instances.get(item.id)
        if inst is None:
            run.errors.append(LineError(str(responses), no, f"unknown instance id {item.id!r}"))
            continue
        key = (item.id, item.response_id)
        if key in first_line:
            run.duplicates += 1
            rid = "" if item.response_id is None else f" and response_id {item.response_id!r}"
            run.errors.append(
                LineError(
                    str(responses), no, f"duplicate of line {first_line[key]} (same id {item.id!r}{rid}); not counted"
                )
            )
            continue
        first_line[key] = no
        run.grades.append(grade(inst, item.response, mode, item.response_id, on_error="zero"))
    answered = {g.id for g in run.grades}
    run.missing = [iid for iid in instances if iid not in answered]
    return run


def summarize(grades: list[Grade], missing: int = 0) -> dict[str, Any]:
    """Means over the graded responses plus ``missing`` instances counted as failures (0)."""
    n = len(grades) + missing
    return {
        "n": n,
        "responses": len(grades),
        "missing": missing,
        "all_pass": sum(g.all_pass for g in grades) / n if n else 0.0,
        "avg_pass": sum(g.avg_pass for g in grades) / n if n else 0.0,
        "reward": sum(g.reward for g in grades) / n if n else 0.0,
        "grader_errors": sum(1 for g in grades if g.grader_error is not None),
    }


__all__ = ["GradeRun", "grade_responses", "summarize"]
