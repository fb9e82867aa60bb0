"""The kit's balance check (``checker_kit.spread_verdict``): the rule that the largest and the
smallest of some values per person, base or day are at most ``max`` apart, shared by the
load, shift, travel, shelter, dispatch and sight balance rules of six families."""

from __future__ import annotations

from pbsolve.checker_kit import OK, spread_verdict


def test_values_exactly_max_apart_hold():
    assert spread_verdict({"Ana": 5, "Ben": 3}, 2, "works", "shifts") == OK


def test_values_more_than_max_apart_fail_naming_the_largest_and_the_smallest():
    assert spread_verdict({"Ana": 2, "Ben": 6, "Cy": 4}, 3, "works", "shifts") == (
        False,
        "Ben works 6 shifts and Ana 2: more than 3 apart",
    )


def test_equal_values_are_named_by_the_first_of_them_in_order():
    assert spread_verdict({"Ana": 1, "Ben": 5, "Cy": 1, "Dee": 5}, 0, "runs", "stages") == (
        False,
        "Ben runs 5 stages and Ana 1: more than 0 apart",
    )


def test_the_reason_starts_with_where_it_was_found():
    assert spread_verdict({"North": 3, "South": 0}, 1, "sends", "teams", "in wave 2 ") == (
        False,
        "in wave 2 North sends 3 teams and South 0: more than 1 apart",
    )


def test_one_value_alone_holds_for_any_max():
    assert spread_verdict({"Ana": 9}, 0, "works", "hours") == OK
