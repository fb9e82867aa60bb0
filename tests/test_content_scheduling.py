"""Content scheduling and its embargo rule: the check keeps a plan that waits for the
embargo and rejects one that does not; the CP-SAT encoding agrees with the check on
every plan of a small calendar; each subtask has the structure it names."""

from __future__ import annotations

import itertools
import random

import pytest

from pbsolve.checkers.scheduling import content as ct
from pbsolve.checkers.scheduling.checks import CHECKS
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, TimetableData
from pbsolve.family import NoDraft
from pbsolve.models.scheduling import content_scheduling as cs
from pbsolve.models.scheduling.common import period_slots
from pbsolve.models.scheduling.content_rules import build_embargo
from pbsolve.schema import GenerationSpec
from tests.helpers import encoder_accepts

DATA = TimetableData(
    time_unit="period",
    days=("Mon", "Tue"),
    slots=tuple(period_slots(["Mon", "Tue"], 2)),
    rooms=(Room(id="Writing room", seats=1, features=("writing",), cost=0), Room(id="Blog", seats=1, features=("blog",), cost=0)),
    people=(Person(id="Ana", role="writer"), Person(id="Jun", role="channel manager")),
    events=(
        Event(id="A1", name="Tour: draft", duration=1, people=("Ana",), size=1, needs=("writing",), series="A"),
        Event(id="A2", name="Tour: publish", duration=1, people=("Jun",), size=1, needs=("blog",), series="A"),
    ),
)
EMBARGO = ct.Embargo.model_validate({"events": ["A2"], "from": "Tue P1"})


def ok(plan: dict, params: ct.Embargo) -> bool:
    return CHECKS["embargo"](DATA, plan, params)[0]


def test_embargo_keeps_a_release_at_the_moment_it_lifts_or_later() -> None:
    assert ok({"A1": (0, "Writing room"), "A2": (2, "Blog")}, EMBARGO)  # Tue P1: the moment it lifts
    assert ok({"A1": (0, "Writing room"), "A2": (3, "Blog")}, EMBARGO)


def test_embargo_rejects_a_release_one_period_early_and_names_it() -> None:
    holds, reason = CHECKS["embargo"](DATA, {"A1": (0, "Writing room"), "A2": (1, "Blog")}, EMBARGO)
    assert not holds
    assert "A2" in reason and "Mon P2" in reason and "Tue P1" in reason


def test_embargo_ignores_events_it_does_not_name() -> None:
    assert ok({"A1": (0, "Writing room"), "A2": (3, "Blog")}, EMBARGO)  # A1 on Mon P1 is not held back


@pytest.mark.parametrize("lifted", ["Mon P1", "Mon P2", "Tue P1", "Tue P2"])
def test_the_embargo_encoder_agrees_with_the_check_on_every_plan(lifted: str) -> None:
    params = ct.Embargo.model_validate({"events": ["A1", "A2"], "from": lifted})
    for s1, s2 in itertools.product(range(4), range(4)):
        plan = {"A1": (s1, "Writing room"), "A2": (s2, "Blog")}
        assert encoder_accepts(DATA, "embargo", params, plan) == ok(plan, params), (lifted, plan)


def test_a_built_embargo_holds_for_the_witness_and_forbids_some_start() -> None:
    witness = {"A1": (1, "Writing room"), "A2": (3, "Blog")}
    for seed in range(20):
        rule = build_embargo(DATA, witness, random.Random(seed))
        assert rule is not None
        assert ok(witness, rule)
        lifted = DATA.slot_index[rule.from_]
        assert any(s < lifted for eid in rule.events for s in DATA.starts(DATA.event_by_id[eid]) if s >= 1)


def test_no_embargo_is_built_when_the_witness_releases_at_the_first_possible_moment() -> None:
    witness = {"A1": (0, "Writing room"), "A2": (1, "Blog")}  # A2 cannot start before Mon P2
    assert all(build_embargo(DATA, witness, random.Random(seed)) is None for seed in range(10))


def _draft(subtask: str, size: str = "default"):  # type: ignore[no-untyped-def]
    spec = GenerationSpec(family="scheduling", task="content_scheduling", subtask=subtask, basic=[], medium=[],
                          hard=[], stateful=[], seed=0, size=size)  # fmt: skip
    for seed in range(30):
        try:
            return cs.recipe(spec).draft(spec, random.Random(seed), {})
        except NoDraft:
            continue
    raise AssertionError(f"no draft for {subtask} in 30 seeds")


def test_every_piece_is_a_series_ending_in_its_publication_on_a_channel() -> None:
    data = TimetableData.model_validate(_draft("editorial_calendar").data)
    channels = {feat for _, feat in cs.CHANNELS}
    for members in data.series_members().values():
        assert members[-1].name.endswith(": publish")
        assert set(members[-1].needs) <= channels
        assert all(not set(m.needs) & channels for m in members[:-1])


def test_video_pipeline_shoots_in_the_studio_for_two_periods() -> None:
    data = TimetableData.model_validate(_draft("video_pipeline").data)
    shoots = [e for e in data.events if e.name.endswith(": shoot")]
    assert shoots and all(e.duration == 2 and e.needs == ("recording",) for e in shoots)


def test_product_launch_holds_publications_under_embargo_with_a_deadline() -> None:
    draft = _draft("product_launch")
    kinds = [r.kind for r in draft.rules]
    assert "embargo" in kinds and "deadline" in kinds
    data = TimetableData.model_validate(draft.data)
    last = {m[-1].id for m in data.series_members().values()}
    embargo = next(r for r in draft.rules if r.kind == "embargo")
    assert set(embargo.params["events"]) <= last


def test_channel_slots_limit_every_channel_to_stated_periods() -> None:
    draft = _draft("channel_slots")
    data = TimetableData.model_validate(draft.data)
    used = {r.id for r in data.rooms} & {name for name, _ in cs.CHANNELS}
    limited = {r.params["room"] for r in draft.rules if r.kind == "opening_hours"}
    assert used and used == limited


def test_freelance_design_makes_graphics_before_their_piece_goes_out() -> None:
    draft = _draft("freelance_design")
    data = TimetableData.model_validate(draft.data)
    graphics = [e for e in data.events if e.needs == ("design",)]
    needs_before = {r.params["before"]: r.params["after"] for r in draft.rules if r.kind == "precedence"}
    assert graphics and all(g.id in needs_before for g in graphics)
    assert all(data.event_by_id[needs_before[g.id]].name.endswith(": publish") for g in graphics)
    assert "availability" in [r.kind for r in draft.rules]


def test_no_two_workstations_offer_writing() -> None:
    """Two writers drafting at once could swap two writing desks at equal cost: a tie by
    symmetry that would make the optimum not unique."""
    assert sum("writing" in feats for _, feats, _ in cs.WORKSTATIONS) == 1


@pytest.mark.parametrize("size", ["tiny", "small", "default", "large"])
def test_every_size_drafts(size: str) -> None:
    assert _draft("editorial_calendar", size).rules
