"""The kit's parse cache: one validation per distinct data content, never a stale answer."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from pbsolve.kit import parsed


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)
    names: tuple[str, ...]
    size: int


class Mutable(BaseModel):
    names: list[str]


def test_the_same_content_is_validated_once() -> None:
    a = parsed(Frozen, {"names": ["x", "y"], "size": 2})
    assert parsed(Frozen, {"names": ["x", "y"], "size": 2}) is a


def test_data_edited_in_place_is_validated_again() -> None:
    data = {"names": ["x"], "size": 1}
    first = parsed(Frozen, data)
    data["names"].append("z")  # a nested edit: an identity-keyed cache would miss it
    again = parsed(Frozen, data)
    assert again.names == ("x", "z") and first.names == ("x",)


def test_a_parsed_model_is_returned_as_it_is() -> None:
    m = Frozen(names=("a",), size=1)
    assert parsed(Frozen, m) is m


def test_a_model_that_is_not_frozen_is_never_shared() -> None:
    data = {"names": ["x"]}
    assert parsed(Mutable, data) is not parsed(Mutable, data)


def test_data_that_is_not_plain_json_is_validated_without_the_cache() -> None:
    data = {"names": {"x"}, "size": 1}  # a set: no JSON key, still valid input for a tuple
    first, again = parsed(Frozen, data), parsed(Frozen, data)
    assert first == again == Frozen(names=("x",), size=1) and first is not again
