"""The allocation family's task-checker base; the shared grading helpers are the kit's
(:mod:`pbsolve.checker_kit`). Nothing here imports the solver models."""

from __future__ import annotations

from pbsolve.checker_kit import PlanChecker


class TaskChecker(PlanChecker):
    """An allocation task type's grading side; subclasses fill every method."""

    family = "allocation"
