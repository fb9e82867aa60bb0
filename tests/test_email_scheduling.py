"""Email scheduling: the campaign-calendar rule kinds and objective kinds, its subtasks.

The checks are pinned on hand-built plans (each keeps or breaks its rule), the CP-SAT
encodings are held against the checks on every plan of a tiny calendar, the witness
builders' parameters are met by their witness, and the subtasks carry their structure.
"""

from __future__ import annotations

import itertools
import random

import pytest
from ortools.sat.python import cp_model

from pbsolve.checkers.scheduling import calendar_params as cp
from pbsolve.checkers.scheduling.checks import CHECKS, OBJECTIVE_VALUES, Plan
from pbsolve.checkers.scheduling.instance_data import Event, Person, Room, TimetableData
from pbsolve.models.scheduling import calendar_rules as model_mod
from pbsolve.models.scheduling import email_scheduling as email
from pbsolve.models.scheduling.common import place_witness
from pbsolve.models.scheduling.timetable_model import ENCODERS, OBJECTIVES, TimetableModel
from pbsolve.params import Params
from pbsolve.renderers.scheduling import render_rule
from pbsolve.sampler import sample_spec
from pbsolve.schema import Rule
from tests.instances import subtask_instances

KINDS = ("local_send_window", "blackout_days", "send_spacing", "min_lag", "frequency_cap")

# Mon 06:00 (value 6), Mon 14:00 (14), Tue 06:00 (30), Tue 14:00 (38), Wed 06:00 (54), Wed 14:00 (62)
SLOTS = email._slots(["Mon", "Tue", "Wed"], (6, 14))


def _data(events: list[Event]) -> TimetableData:
    people = sorted({p for e in events for p in e.people})
    return TimetableData(
        time_unit="period",
        days=("Mon", "Tue", "Wed"),
        slots=tuple(SLOTS),
        rooms=(Room(id="A", seats=50, cost=0), Room(id="B", seats=50, cost=2)),
        people=tuple(Person(id=p, role="segment") for p in people),
        events=tuple(events),
    )


def _msg(eid: str, segs: tuple[str, ...] = ("Tokyo",), size: int = 10) -> Event:
    return Event(id=eid, name=eid, duration=1, people=segs, size=size)


D = _data([_msg("M1"), _msg("M2"), _msg("M3", ("Berlin",))])


def _check(kind: str, plan: Plan, params: Params, d: TimetableData = D) -> tuple[bool, str]:
    return CHECKS[kind](d, plan, params)


# -- local_send_window -------------------------------------------------------------------
def test_local_window_converts_utc_to_the_segments_local_hour():
    # Tokyo is UTC+9: 06:00 UTC is 15:00 local, 14:00 UTC is 23:00 local
    p = cp.LocalSendWindow(segment="Tokyo", utc_offset=9, earliest=8, latest=20)
    assert _check("local_send_window", {"M1": (0, "A"), "M2": (2, "B"), "M3": (1, "A")}, p) == (True, "holds")
    ok, why = _check("local_send_window", {"M1": (0, "A"), "M2": (3, "A"), "M3": (1, "A")}, p)
    assert not ok and "M2" in why and "23:00" in why


def test_local_window_wraps_past_midnight_and_includes_both_ends():
    p = cp.LocalSendWindow(segment="Tokyo", utc_offset=-8, earliest=6, latest=22)  # 06:00 UTC is 22:00 local
    assert _check("local_send_window", {"M1": (0, "A"), "M2": (2, "A"), "M3": (1, "A")}, p)[0]
    p = cp.LocalSendWindow(segment="Tokyo", utc_offset=20 - 24, earliest=6, latest=22)  # 14:00 UTC is 10:00
    assert _check("local_send_window", {"M1": (1, "A"), "M2": (3, "A"), "M3": (0, "A")}, p)[0]
    assert not _check("local_send_window", {"M1": (0, "A"), "M2": (3, "A"), "M3": (0, "A")}, p)[0]  # 02:00


def test_local_window_leaves_other_segments_alone():
    p = cp.LocalSendWindow(segment="Berlin", utc_offset=1, earliest=10, latest=20)
    assert _check("local_send_window", {"M1": (0, "A"), "M2": (2, "A"), "M3": (1, "A")}, p)[0]  # 15:00 Berlin
    assert not _check("local_send_window", {"M1": (1, "A"), "M2": (2, "A"), "M3": (0, "A")}, p)[0]  # 07:00


# -- blackout_days -----------------------------------------------------------------------
def test_blackout_days_reject_a_message_to_the_segment_on_the_day():
    p = cp.BlackoutDays(segment="Tokyo", days=["Tue"])
    assert _check("blackout_days", {"M1": (0, "A"), "M2": (4, "A"), "M3": (2, "A")}, p)[0]
    ok, why = _check("blackout_days", {"M1": (0, "A"), "M2": (3, "A"), "M3": (2, "A")}, p)
    assert not ok and "M2" in why and "Tue" in why


# -- send_spacing ------------------------------------------------------------------------
def test_send_spacing_measures_hours_across_days():
    p = cp.SendSpacing(segment="Tokyo", hours=16)  # Mon 14:00 -> Tue 06:00 is 16 hours
    assert _check("send_spacing", {"M1": (1, "A"), "M2": (2, "A"), "M3": (0, "A")}, p)[0]
    p = cp.SendSpacing(segment="Tokyo", hours=17)
    ok, why = _check("send_spacing", {"M1": (1, "A"), "M2": (2, "A"), "M3": (0, "A")}, p)
    assert not ok and "16 hour" in why


# -- min_lag -----------------------------------------------------------------------------
def test_min_lag_counts_calendar_days_not_hours():
    p = cp.MinLag(before="M1", after="M2", days=1)
    assert _check("min_lag", {"M1": (1, "A"), "M2": (2, "A"), "M3": (0, "A")}, p)[0]  # Mon 14:00 -> Tue 06:00
    assert not _check("min_lag", {"M1": (0, "A"), "M2": (1, "A"), "M3": (0, "B")}, p)[0]  # same day
    assert not _check("min_lag", {"M1": (2, "A"), "M2": (0, "A"), "M3": (1, "A")}, p)[0]  # the wrong way round
    p = cp.MinLag(before="M1", after="M2", days=2)
    assert not _check("min_lag", {"M1": (1, "A"), "M2": (3, "A"), "M3": (0, "A")}, p)[0]
    assert _check("min_lag", {"M1": (1, "A"), "M2": (4, "A"), "M3": (0, "A")}, p)[0]


# -- frequency_cap -----------------------------------------------------------------------
D3 = _data([_msg("M1"), _msg("M2"), _msg("M3")])


def test_frequency_cap_counts_every_run_of_consecutive_days():
    p = cp.FrequencyCap(segment="Tokyo", max=1, days=2)
    assert _check("frequency_cap", {"M1": (0, "A"), "M2": (4, "A"), "M3": (5, "B")}, p, D3)[0] is False  # Wed twice
    assert _check("frequency_cap", {"M1": (0, "A"), "M2": (4, "A"), "M3": (1, "B")}, p, D3)[0] is False  # Mon twice
    p = cp.FrequencyCap(segment="Tokyo", max=2, days=2)
    ok, why = _check("frequency_cap", {"M1": (1, "A"), "M2": (2, "A"), "M3": (3, "A")}, p, D3)
    assert not ok and "Mon-Tue" in why
    assert _check("frequency_cap", {"M1": (0, "A"), "M2": (1, "A"), "M3": (4, "A")}, p, D3)[0]


def test_frequency_cap_longer_than_the_calendar_caps_the_whole_calendar():
    p = cp.FrequencyCap(segment="Tokyo", max=2, days=5)
    assert not _check("frequency_cap", {"M1": (0, "A"), "M2": (2, "A"), "M3": (4, "A")}, p, D3)[0]


# -- the model against the checks on every plan of a tiny calendar ----------------------
CASES = [
    ("local_send_window", cp.LocalSendWindow(segment="Tokyo", utc_offset=9, earliest=8, latest=20)),
    ("blackout_days", cp.BlackoutDays(segment="Tokyo", days=["Mon", "Wed"])),
    ("send_spacing", cp.SendSpacing(segment="Tokyo", hours=20)),
    ("min_lag", cp.MinLag(before="M2", after="M1", days=1)),
    ("frequency_cap", cp.FrequencyCap(segment="Tokyo", max=1, days=2)),
]
SMALL = _data([_msg("M1"), _msg("M2", ("Tokyo", "Berlin"), 20), _msg("M3", ("Berlin",), 5)])


def _all_plans(d: TimetableData):
    options = [[(s, r.id) for s in d.starts(e) for r in d.rooms] for e in d.events]
    for combo in itertools.product(*options):
        yield dict(zip([e.id for e in d.events], combo))


def _model_accepts(d: TimetableData, kind: str, params: Params, plan: Plan) -> bool:
    tm = TimetableModel(d)
    lit = tm.m.new_bool_var("rule")
    tm.m.add(lit == 1)
    ENCODERS[kind](tm, params, lit)
    for e in d.events:
        tm.m.add(tm.x[e.id, plan[e.id][0], plan[e.id][1]] == 1)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    return solver.solve(tm.m) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


@pytest.mark.parametrize(("kind", "params"), CASES, ids=[k for k, _ in CASES])
def test_model_accepts_exactly_the_plans_the_checker_accepts(kind, params):
    seen = set()
    for plan in _all_plans(SMALL):
        if any(r == "B" for _, r in plan.values()):
            continue  # rooms do not matter to these rules: one room keeps the loop short
        verdict = CHECKS[kind](SMALL, plan, params)[0]
        assert _model_accepts(SMALL, kind, params, plan) == verdict, plan
        seen.add(verdict)
    assert seen == {True, False}


def test_objective_terms_agree_with_the_checker_on_every_plan():
    terms = {
        "open_loss": cp.OpenLoss(
            offsets={"Tokyo": 9, "Berlin": 1}, audience={"Tokyo": 10, "Berlin": 5}, penalty=list(email.LOCAL_PENALTY)
        ),
        "delivery_cost": cp.DeliveryCost(),
    }
    for kind, tp in terms.items():
        for plan in itertools.islice(_all_plans(SMALL), 0, None, 7):
            tm = TimetableModel(SMALL)
            expr, ub = OBJECTIVES[kind](tm, tp)
            value = OBJECTIVE_VALUES[kind](SMALL, plan, tp)
            assert 0 <= value <= ub
            for e in SMALL.events:
                s, r = plan[e.id]
                tm.m.add(tm.x[e.id, s, r] == 1)
            tm.m.add(expr == value)
            assert cp_model.CpSolver().solve(tm.m) == cp_model.OPTIMAL, (kind, plan)


def test_open_loss_weighs_each_segments_local_hour_by_its_audience():
    tp = cp.OpenLoss(
        offsets={"Tokyo": 9, "Berlin": 1}, audience={"Tokyo": 10, "Berlin": 5}, penalty=list(email.LOCAL_PENALTY)
    )
    # M2 to Tokyo and Berlin at Mon 14:00 UTC: 23:00 Tokyo (3 x 10), 15:00 Berlin (0 x 5)
    plan = {"M1": (0, "A"), "M2": (1, "A"), "M3": (0, "B")}
    # M1 at 06:00 UTC: 15:00 Tokyo, 0; M3 at 06:00 UTC: 07:00 Berlin, 1 x 5
    assert OBJECTIVE_VALUES["open_loss"](SMALL, plan, tp) == 30 + 5


# -- builders, sentences, subtasks -------------------------------------------------------
def _generated(size: str, n: int = 12):
    rng = random.Random(7)
    for i in range(n):
        spec = sample_spec(7, i, task="email_scheduling", subtask=email.TASK.subtasks[i % 5].id)
        spec = spec.model_copy(update={"size": size})
        d = email.entities(spec, rng).data()
        w = place_witness(d, rng)
        if w is not None:
            yield d, w, rng


@pytest.mark.parametrize("kind", KINDS)
def test_builder_params_are_met_by_the_witness(kind):
    built = 0
    for d, w, rng in _generated("default"):
        params = model_mod.CALENDAR_BUILDERS[kind](d, w, rng)
        if params is None:
            continue
        built += 1
        assert CHECKS[kind](d, w, params)[0], (kind, params)
    assert built >= 4


@pytest.mark.parametrize("kind", KINDS)
def test_sentences_state_every_number(kind):
    for d, w, rng in _generated("default", 6):
        params = model_mod.CALENDAR_BUILDERS[kind](d, w, rng)
        if params is None:
            continue
        text = render_rule(
            Rule(id="R9", kind=kind, tier="basic", params=params.dump()), d.model_dump(mode="json"), "email_scheduling"
        )
        for value in params.dump().values():
            for item in value if isinstance(value, list) else [value]:
                shown = (
                    f"{item:02d}:00"
                    if kind == "local_send_window"
                    and item in (params.dump().get("earliest"), params.dump().get("latest"))
                    and not isinstance(item, str)
                    else str(abs(item) if isinstance(item, int) else item)
                )
                assert shown in text, (kind, item, text)


def test_welcome_series_sends_its_numbered_welcomes_to_new_signups_in_order():
    for inst in subtask_instances("email_scheduling", "welcome_series", 2):
        welcome = [e for e in inst.data["events"] if e["series"] == "welcome"]
        assert welcome and all(e["people"] == ["New signups"] for e in welcome)
        assert any(r.kind == "series_order" for r in inst.rules) or len(welcome) == 1


def test_global_launch_pairs_a_teaser_and_a_launch_per_region():
    for inst in subtask_instances("email_scheduling", "global_launch", 2):
        series: dict[str, list[str]] = {}
        for e in inst.data["events"]:
            if e["series"]:
                series.setdefault(e["series"], []).append(e["name"])
        assert series and all(len(v) == 2 and v[0].startswith("Launch teaser") for v in series.values())


def test_transactional_mix_has_notices_that_need_a_transactional_pool():
    for inst in subtask_instances("email_scheduling", "transactional_mix", 2):
        assert any("transactional" in e["needs"] for e in inst.data["events"])


def test_newsletter_digest_goes_to_every_segment():
    for inst in subtask_instances("email_scheduling", "newsletter_digest", 2):
        everyone = sorted(p["id"] for p in inst.data["people"])
        assert any(sorted(e["people"]) == everyone for e in inst.data["events"])


def test_promo_burst_messages_go_to_two_or_more_segments():
    for inst in subtask_instances("email_scheduling", "promo_burst", 2):
        assert all(len(e["people"]) >= 2 for e in inst.data["events"])


def test_segments_show_their_time_zone_and_audience_in_the_prompt():
    inst = subtask_instances("email_scheduling", "global_launch", 1, size="default")[0]
    for p in inst.data["people"]:
        assert f"- {p['id']} ({p['role']})" in inst.prompt and "UTC" in p["role"]
