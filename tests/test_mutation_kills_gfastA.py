"""Grading behaviours held for the mutation campaign over the workforce and emergency
checkers made faster in round 2 of issue 18 (per-data tables, per-plan counts and
timings, plain loops), one behaviour each. Plans and data are built inside each test:
mutmut forks from a process that already ran the tests, so nothing built at module
level may keep a cache of the unmutated code.

The survivors argued equivalent are in scripts/mutation_equivalents.toml (section gfastA).
"""

from __future__ import annotations

from pbsolve.checkers.workforce import volunteer as vs
from pbsolve.params import NoParams


def _one_gate() -> vs.VolunteerData:
    """One shift, one post needing one volunteer, one listed volunteer."""
    return vs.VolunteerData.model_validate({
        "shifts": [{"id": "S1", "day": 0}],
        "posts": [{"id": "Gate", "need": 1}],
        "volunteers": [{"id": "Ana", "prefs": {"Gate": 0}}],
    })  # fmt: skip


def test_a_roster_row_of_a_volunteer_the_data_does_not_list_covers_no_post() -> None:
    plan = vs.Plan({("Zed", "S1"): "Gate"})
    assert vs.CHECKS["coverage"](_one_gate(), plan, NoParams()) == (False, "Gate has 0 volunteers in S1; it needs 1")


def test_a_roster_row_in_a_shift_the_data_does_not_list_covers_no_post() -> None:
    plan = vs.Plan({("Ana", "S9"): "Gate"})
    assert vs.CHECKS["coverage"](_one_gate(), plan, NoParams()) == (False, "Gate has 0 volunteers in S1; it needs 1")
