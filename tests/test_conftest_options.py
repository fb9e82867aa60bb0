"""The test suite's own option: ``--brute-force-seeds FIRST:COUNT`` runs the brute-force
suite (tests/test_registry_bruteforce.py) on other seeds, an extended audit of the
certificates (README "Certification")."""

from __future__ import annotations

from typing import Any

import pytest

from tests import conftest
from tests.family_adapters import ADAPTERS


class _Config:
    """What ``pytest_configure`` reads of pytest's config."""

    def __init__(self, value: str | None) -> None:
        self.value = value

    def getoption(self, name: str) -> Any:
        assert name == "--brute-force-seeds"
        return self.value


@pytest.fixture
def kept_seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    for a in ADAPTERS.values():
        monkeypatch.setattr(a, "seeds", a.seeds)
        monkeypatch.setattr(a, "mechanism_seeds", a.mechanism_seeds)


def test_brute_force_seeds_give_every_family_those_seeds_for_tasks_and_mechanisms(kept_seeds: None):
    conftest.pytest_configure(_Config("100:3"))  # type: ignore[arg-type]
    assert {(a.seeds, a.mechanism_seeds) for a in ADAPTERS.values()} == {(range(100, 103), range(100, 103))}


def test_without_the_option_each_family_keeps_its_own_seeds(kept_seeds: None):
    before = {f: (a.seeds, a.mechanism_seeds) for f, a in ADAPTERS.items()}
    conftest.pytest_configure(_Config(None))  # type: ignore[arg-type]
    assert {f: (a.seeds, a.mechanism_seeds) for f, a in ADAPTERS.items()} == before


@pytest.mark.parametrize("value", ["100", "100:", ":3", "a:3", "100:0", "100:-1", "1:2:3"])
def test_a_malformed_seed_range_is_a_usage_error_naming_the_form(kept_seeds: None, value: str):
    with pytest.raises(pytest.UsageError, match="FIRST:COUNT"):
        conftest.pytest_configure(_Config(value))  # type: ignore[arg-type]
