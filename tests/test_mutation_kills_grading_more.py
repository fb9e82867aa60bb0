"""Grading paths the mutation campaign mutG found unguarded, one behaviour each.

A family whose data cannot answer what an instance's rules name (its ``names()`` raises)
is the grader's failure, not the instance's: ``_problems`` turns it into a GradingError
that names the instance and carries the family's own error, cut to 300 characters.
"""

from __future__ import annotations

import pytest

from pbsolve import grading, params
from pbsolve.grading import GradingError
from pbsolve.schema import Instance
from tests.instances import instance_at


def _fresh() -> Instance:
    """An educational instance not yet validated (a copy keeps no verdict of another test)."""
    inst = instance_at("educational_resource_planning", 0, 0)
    assert inst is not None
    return Instance.model_validate(inst.model_dump(mode="json"))


def _refused_with_broken_names(monkeypatch: pytest.MonkeyPatch, inst: Instance, message: str) -> GradingError:
    """validate_instance's error when the family's data cannot check what the rules name."""

    def broken(*args: object, **kwargs: object) -> list[str]:
        raise LookupError(message)

    monkeypatch.setattr(params, "data_problems", broken)
    with pytest.raises(GradingError) as caught:
        grading.validate_instance(inst)
    return caught.value


def test_a_family_that_cannot_check_what_the_rules_name_fails_the_grader_naming_the_instance(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inst = _fresh()
    error = _refused_with_broken_names(monkeypatch, inst, "no names of kind 'teacher'")
    assert (type(error), error.instance_id) == (GradingError, inst.id)


def test_the_grader_failure_of_a_family_that_cannot_check_names_carries_its_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    error = _refused_with_broken_names(monkeypatch, _fresh(), "no names of kind 'teacher'")
    assert str(error).endswith("LookupError: no names of kind 'teacher'")


def test_the_family_s_error_is_cut_to_300_characters_in_the_grader_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    error = _refused_with_broken_names(monkeypatch, _fresh(), "x" * 400)
    assert str(error).endswith("LookupError: " + "x" * 300)
