"""Name normalisation and its caches (mutation campaign survivors), one behaviour each.

Two normalisers read names in answers: the core's :func:`pbsolve.checking.norm` (case- and
space-insensitive) and the timetable family's ``_norm`` (the same, and '09:00' reads as
'9:00'). Both remember what they computed in a bounded cache (:func:`pbsolve.checking.remember`:
texts of at most ``_NORM_CACHE_CHARS`` characters, emptied when it holds
``_NORM_CACHE_SIZE``). The tests give each normaliser a fresh cache, so they do not depend
on what other tests normalised, and show that a remembered text is not normalised again
by making the second pass fail if it reaches the regular expression.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from pbsolve import checking
from pbsolve import checker_kit as common
from pbsolve.checker_kit import Names
from pbsolve.checkers.scheduling import checks


class _NoSpaces:
    """Stands for the whitespace pattern once a text should no longer need it."""

    def sub(self, repl: str, text: str) -> str:
        raise AssertionError(f"normalised {text!r} again")


@pytest.fixture
def fresh_caches(monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, str], dict[str, str]]:
    core: dict[str, str] = {}
    timetable: dict[str, str] = {}
    monkeypatch.setattr(checking, "_norm_cache", core)
    monkeypatch.setattr(checks, "_norm_cache", timetable)
    return core, timetable


NORMALISERS: dict[str, tuple[Callable[[str], str], object]] = {
    "core": (checking.norm, checking),
    "timetable": (checks._norm, checks),
}


# -- what a name normalises to ------------------------------------------------------------------
@pytest.mark.parametrize("which", sorted(NORMALISERS))
def test_norm_ignores_case_and_collapses_whitespace(which: str, fresh_caches: object) -> None:
    norm, _ = NORMALISERS[which]
    assert norm("  Test \t\n  KITS ") == "test kits"


@pytest.mark.parametrize("which", sorted(NORMALISERS))
def test_norm_keeps_single_spaces_and_lower_case(which: str, fresh_caches: object) -> None:
    norm, _ = NORMALISERS[which]
    assert norm("olive oil") == "olive oil"


def test_timetable_norm_reads_a_leading_zero_hour_as_the_plain_hour(fresh_caches: object) -> None:
    assert checks._norm(" 09:00 ") == checks._norm("9:00") == "9:00"


def test_timetable_norm_keeps_a_two_digit_hour(fresh_caches: object) -> None:
    assert checks._norm("10:00") == "10:00"


def test_timetable_norm_keeps_five_characters_that_are_no_time(fresh_caches: object) -> None:
    assert checks._norm("Room1") == "room1"
    assert checks._norm("0ab c") == "0ab c"


def test_timetable_norm_keeps_a_six_character_time_with_a_leading_zero(fresh_caches: object) -> None:
    assert checks._norm("09:00a") == "09:00a"


def test_timetable_norm_keeps_a_short_name(fresh_caches: object) -> None:
    assert checks._norm("R:") == "r:"


def test_core_norm_keeps_a_leading_zero_hour(fresh_caches: object) -> None:
    assert checking.norm("09:00") == "09:00"


# -- the caches ---------------------------------------------------------------------------
@pytest.mark.parametrize("which", sorted(NORMALISERS))
def test_norm_remembers_a_short_text_with_its_key(which: str, fresh_caches: object) -> None:
    norm, module = NORMALISERS[which]
    key = norm(" Harbor  Hall ")
    assert module._norm_cache == {" Harbor  Hall ": key}  # type: ignore[attr-defined]


@pytest.mark.parametrize("which", sorted(NORMALISERS))
def test_norm_answers_a_second_call_from_the_cache_with_the_first_answer(
    which: str, fresh_caches: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    norm, module = NORMALISERS[which]
    first = norm(" Harbor  HALL ")
    monkeypatch.setattr(module, "_SPACES", _NoSpaces())
    assert norm(" Harbor  HALL ") == first == "harbor hall"


@pytest.mark.parametrize("which", sorted(NORMALISERS))
def test_norm_does_not_remember_a_long_text_but_normalises_it_the_same(which: str, fresh_caches: object) -> None:
    norm, module = NORMALISERS[which]
    long = "A  b" * 30
    assert len(long) > checking._NORM_CACHE_CHARS
    assert norm(long) == norm(long) == re.sub(r"\s+", " ", long.lower())
    assert module._norm_cache == {}  # type: ignore[attr-defined]


def test_remember_keeps_a_text_of_exactly_the_character_limit() -> None:
    cache: dict[str, str] = {}
    text = "x" * checking._NORM_CACHE_CHARS
    assert checking.remember(cache, text, "k") == "k"
    assert cache == {text: "k"}


def test_remember_does_not_keep_a_text_one_past_the_character_limit() -> None:
    cache: dict[str, str] = {}
    assert checking.remember(cache, "x" * (checking._NORM_CACHE_CHARS + 1), "k") == "k"
    assert cache == {}


def test_remember_fills_the_cache_up_to_its_size() -> None:
    cache = {str(n): "k" for n in range(checking._NORM_CACHE_SIZE - 1)}
    checking.remember(cache, "last", "k")
    assert len(cache) == checking._NORM_CACHE_SIZE
    assert cache["last"] == "k"


def test_remember_empties_a_full_cache_before_keeping_a_new_text() -> None:
    cache = {str(n): "k" for n in range(checking._NORM_CACHE_SIZE)}
    assert checking.remember(cache, "new", "key") == "key"
    assert cache == {"new": "key"}


# -- exact names --------------------------------------------------------------------------
def test_exact_names_maps_each_name_and_each_key_that_the_table_knows() -> None:
    table = {"north": "North", "mercy": "Mercy"}
    assert checking.exact_names(table, ["North", "Mercy", "Nowhere"]) == {
        "North": "North",
        "Mercy": "Mercy",
        "north": "North",
        "mercy": "Mercy",
    }


def test_exact_names_reads_with_the_given_key() -> None:
    table = {"9:00": 0}
    assert checking.exact_names(table, ["09:00"], checks._norm) == {"09:00": 0, "9:00": 0}


def test_names_find_reads_an_exact_spelling_without_normalising(monkeypatch: pytest.MonkeyPatch) -> None:
    names = Names(["North", "Mercy"])
    monkeypatch.setattr(common, "norm", lambda text: pytest.fail(f"normalised {text!r}"))
    assert names.find("North") == "North"
    assert names.find("mercy") == "Mercy"


def test_names_find_reads_any_other_spelling_by_its_key() -> None:
    names = Names(["North", "Test kits"])
    assert names.find("  TEST   Kits ") == "Test kits"
    assert names.find("South") is None
