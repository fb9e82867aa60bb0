"""Shared by the ground-truth reference tests: an instance with one rule's (or term's)
parameters edited, and the refusal its grading raises."""

from __future__ import annotations

from typing import Any

import pytest

from pbsolve.grading import InvalidGroundTruth, grade
from pbsolve.llm.responders import oracle
from pbsolve.schema import Instance


def edited(inst: Instance, kind: str, **params: Any) -> tuple[Instance, str]:
    """A new instance object whose first rule (or else objective term) of ``kind`` has some
    parameters replaced, and that item's id."""
    raw = inst.model_dump(mode="json")
    item = next(x for x in [*raw["rules"], *raw["objective"]] if x["kind"] == kind)
    item["params"].update(params)
    return Instance.model_validate(raw), item["id"]


def with_params(inst: Instance, kind: str, **params: Any) -> Instance:
    """:func:`edited`, the instance alone."""
    return edited(inst, kind, **params)[0]


def refusal(inst: Instance) -> str:
    """The message of the ``InvalidGroundTruth`` that grading ``inst`` raises."""
    with pytest.raises(InvalidGroundTruth) as info:
        grade(inst, oracle(inst))
    return str(info.value)
