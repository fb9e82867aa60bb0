"""Timetabling (every scheduling task type): a hand-written instance whose rules or
objective terms name an event, slot, room, place, person, segment, day or feature its data
lacks is refused as a ground truth naming the rule and the name -- never a checker crash
mid-grade, never a rule about nothing that holds for every plan. The kinds whose checks
need more than known names (a weight and a current row for every event, an offset and an
audience for every segment a message goes to, a battery feature some event needs, a rest
period that has a day) say so too (``Params.data_problems`` overrides)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pbsolve import params
from pbsolve.checkers.scheduling import calendar_params as cp
from pbsolve.checkers.scheduling import content as ct
from pbsolve.checkers.scheduling import day_spacing as ds
from pbsolve.checkers.scheduling import places as pl
from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.grading import grade
from pbsolve.llm.responders import oracle
from pbsolve.params import NoParams, Params
from pbsolve.schema import Instance
from tests.reference_helpers import edited, refusal

STORED = Path(__file__).parent / "data" / "mutation_moves_scheduling.jsonl"
_LINES = [json.loads(line)["instance"] for line in STORED.read_text().splitlines()]


def _stored(task: str, kind: str | None = None) -> Instance:
    """A fresh copy of the first stored (generated and certified) instance of ``task`` with a rule or term of ``kind``."""
    for inst in _LINES:
        kinds = {x["kind"] for x in [*inst["rules"], *inst["objective"]]}
        if inst["task"] == task and (kind is None or kind in kinds):
            return Instance.model_validate(inst)
    raise AssertionError(f"no stored {task} instance with a {kind} rule or term")


STUDY = _stored("study_planning", "review_window")
DATA = TimetableData.model_validate(STUDY.data)
E, E2 = DATA.events[0].id, DATA.events[1].id
S, S2 = DATA.slots[0].id, DATA.slots[1].id
R, P, D = DATA.rooms[0].id, DATA.people[0].id, DATA.days[0]
WEIGHTS = {e.id: 1 for e in DATA.events}
ROWS = {e.id: (S, R) for e in DATA.events}
SEGMENTS = {p.id: 0 for p in DATA.people}
PENALTY = [0] * 24


def _case(params: Params, field: str, problem: str) -> Any:
    return pytest.param(params, problem, id=f"{type(params).__name__}.{field}")


CASES = [
    # -- rule_params: basic, medium, hard and stateful kinds, and the objective terms --
    _case(rp.Window(event="E?", from_=S, to=S2), "event", "unknown event 'E?'"),
    _case(rp.Window(event=E, from_="S?", to=S2), "from", "unknown slot 'S?'"),
    _case(rp.Window(event=E, from_=S, to="S?"), "to", "unknown slot 'S?'"),
    _case(rp.Deadline(events=[E, "E?"], to=S), "events", "unknown event 'E?'"),
    _case(rp.Deadline(events=[E], to="S?"), "to", "unknown slot 'S?'"),
    _case(rp.BlockedSlots(slots=[S, "S?"]), "slots", "unknown slot 'S?'"),
    _case(rp.DailyLimit(max=1, people=[P, "P?"]), "people", "unknown person 'P?'"),
    _case(rp.Precedence(before="E?", after=E), "before", "unknown event 'E?'"),
    _case(rp.Precedence(before=E, after="E?"), "after", "unknown event 'E?'"),
    _case(rp.PriorityOrder(events=[E, "E?"]), "events", "unknown event 'E?'"),
    _case(rp.PersonBuffer(person="P?", gap=1), "person", "unknown person 'P?'"),
    _case(rp.MaxConsecutive(person="P?", max=1), "person", "unknown person 'P?'"),
    _case(rp.DifferentDays(events=[E, "E?"]), "events", "unknown event 'E?'"),
    _case(rp.SameRoom(events=["E?", E]), "events", "unknown event 'E?'"),
    _case(rp.PersonAbsent(person="P?", slots=[S]), "person", "unknown person 'P?'"),
    _case(rp.PersonAbsent(person=P, slots=["S?"]), "slots", "unknown slot 'S?'"),
    _case(rp.RoomClosed(room="R?", slots=[S]), "room", "unknown room 'R?'"),
    _case(rp.RoomClosed(room=R, slots=["S?"]), "slots", "unknown slot 'S?'"),
    _case(rp.RoomCooldown(room="R?", gap=1), "room", "unknown room 'R?'"),
    _case(rp.FatigueProtocol(person="P?", threshold=1, rest=1), "person", "unknown person 'P?'"),
    _case(rp.BatteryLevel(feature="F?", capacity=4, start=4, use=1, recharge=1), "feature", "unknown feature 'F?'"),
    _case(rp.WeightedEnd(weights={**WEIGHTS, "E?": 1}), "weights", "unknown event 'E?'"),
    _case(rp.SlotPenalty(penalty={S: 1, "S?": 2}), "penalty", "unknown slot 'S?'"),
    _case(rp.SameDayPairs(people=[P, "P?"]), "people", "unknown person 'P?'"),
    _case(rp.CurrentSchedule(existing={**ROWS, "E?": (S, R)}), "existing.event", "unknown event 'E?'"),
    _case(rp.CurrentSchedule(existing={**ROWS, E: ("S?", R)}), "existing.slot", "unknown slot 'S?'"),
    _case(rp.CurrentSchedule(existing={**ROWS, E: (S, "R?")}), "existing.room", "unknown room 'R?'"),
    # -- the campaign calendar (email scheduling): segments are the data's people --
    _case(cp.LocalSendWindow(segment="G?", utc_offset=0, earliest=0, latest=23), "segment", "unknown segment 'G?'"),
    _case(cp.BlackoutDays(segment="G?", days=[D]), "segment", "unknown segment 'G?'"),
    _case(cp.BlackoutDays(segment=P, days=["D?"]), "days", "unknown day 'D?'"),
    _case(cp.SendSpacing(segment="G?", hours=1), "segment", "unknown segment 'G?'"),
    _case(cp.MinLag(before="E?", after=E, days=1), "before", "unknown event 'E?'"),
    _case(cp.MinLag(before=E, after="E?", days=1), "after", "unknown event 'E?'"),
    _case(cp.FrequencyCap(segment="G?", max=1, days=1), "segment", "unknown segment 'G?'"),
    _case(
        cp.OpenLoss(offsets={**SEGMENTS, "G?": 0}, audience=SEGMENTS, penalty=PENALTY),
        "offsets",
        "unknown segment 'G?'",
    ),
    _case(
        cp.OpenLoss(offsets=SEGMENTS, audience={**SEGMENTS, "G?": 0}, penalty=PENALTY),
        "audience",
        "unknown segment 'G?'",
    ),
    # -- day spacing (study and fitness plans), nested pairs and exams included --
    _case(ds.MinDaysApart(events=[E, "E?"], days=1), "events", "unknown event 'E?'"),
    _case(
        ds.ReviewWindow(pairs=[ds.ReviewPair(first="E?", review=E)], min_days=1, max_days=2),
        "pairs.first",
        "unknown event 'E?'",
    ),
    _case(
        ds.ReviewWindow(pairs=[ds.ReviewPair(first=E, review="E?")], min_days=1, max_days=2),
        "pairs.review",
        "unknown event 'E?'",
    ),
    _case(ds.ExamDates(exams=[ds.Exam(subject="Law", day="D?", sessions=[E])]), "exams.day", "unknown day 'D?'"),
    _case(
        ds.ExamDates(exams=[ds.Exam(subject="Law", day=D, sessions=[E, "E?"])]),
        "exams.sessions",
        "unknown event 'E?'",
    ),
    _case(ds.DailyLoad(person="P?", max=1, load={E: 1}), "person", "unknown person 'P?'"),
    _case(ds.DailyLoad(person=P, max=1, load={E: 1, "E?": 1}), "load", "unknown event 'E?'"),
    _case(ds.RecoveryDays(group="Legs", intense=["E?"], trains=[E, E2], days=1), "intense", "unknown event 'E?'"),
    _case(ds.RecoveryDays(group="Legs", intense=[E], trains=[E, "E?"], days=1), "trains", "unknown event 'E?'"),
    _case(ds.Progression(events=[E, "E?"], min_days=1, max_days=2), "events", "unknown event 'E?'"),
    _case(ds.WeeklyQuota(events=[E, "E?"], min=1, days_per_week=7), "events", "unknown event 'E?'"),
    _case(ds.InjuryRest(part="Legs", events=["E?"], from_day=D, to_day=D), "events", "unknown event 'E?'"),
    _case(ds.InjuryRest(part="Legs", events=[E], from_day="D?", to_day=D), "from_day", "unknown day 'D?'"),
    _case(ds.InjuryRest(part="Legs", events=[E], from_day=D, to_day="D?"), "to_day", "unknown day 'D?'"),
    # -- places and venues (personal agenda, team building): places are the data's rooms --
    _case(pl.TravelTime(people=["P?"], legs=[]), "people", "unknown person 'P?'"),
    _case(pl.TravelTime(people=[P], home="H?", legs=[]), "home", "unknown place 'H?'"),
    _case(pl.TravelTime(people=[P], legs=[pl.TravelLeg(a="H?", b=R, slots=1)]), "legs.a", "unknown place 'H?'"),
    _case(pl.TravelTime(people=[P], legs=[pl.TravelLeg(a=R, b="H?", slots=1)]), "legs.b", "unknown place 'H?'"),
    _case(pl.OpeningHours(room="R?", open=[S]), "room", "unknown room 'R?'"),
    _case(pl.OpeningHours(room=R, open=[S, "S?"]), "open", "unknown slot 'S?'"),
    _case(pl.FixedCommitment(event="E?", start=S, room=R), "event", "unknown event 'E?'"),
    _case(pl.FixedCommitment(event=E, start="S?", room=R), "start", "unknown slot 'S?'"),
    _case(pl.FixedCommitment(event=E, start=S, room="R?"), "room", "unknown room 'R?'"),
    _case(pl.FocusWindows(events=["E?"], slots=[S]), "events", "unknown event 'E?'"),
    _case(pl.FocusWindows(events=[E], slots=["S?"]), "slots", "unknown slot 'S?'"),
    _case(pl.CoachTransfer(rooms=[R, "R?"], lead=1), "rooms", "unknown room 'R?'"),
    # -- content scheduling --
    _case(ct.Embargo(events=["E?"], from_=S), "events", "unknown event 'E?'"),
    _case(ct.Embargo(events=[E], from_="S?"), "from", "unknown slot 'S?'"),
]

# kinds whose parameters name nothing of the data (or take none)
NAME_FREE = {NoParams, rp.DayCap, pl.Budget, cp.DeliveryCost}


@pytest.mark.parametrize(("params", "problem"), CASES)
def test_a_timetabling_parameter_naming_what_the_data_lacks_is_exactly_one_problem(params: Params, problem: str):
    assert params.data_problems(DATA) == [problem]


def test_every_timetabling_kind_that_names_data_has_a_case_above():
    models = {*rp.RULE_PARAMS.values(), *rp.TERM_PARAMS.values()} - NAME_FREE
    covered = {type(case.values[0]) for case in CASES}
    assert sorted(m.__name__ for m in models - covered) == []


def test_parameters_naming_only_what_the_data_has_have_no_problem():
    fine: list[Params] = [
        rp.Window(event=E, from_=S, to=S2),
        rp.WeightedEnd(weights=WEIGHTS),
        rp.CurrentSchedule(existing=ROWS),
        cp.BlackoutDays(segment=P, days=[D]),
        ds.ReviewWindow(pairs=[ds.ReviewPair(first=E, review=E2)], min_days=1, max_days=2),
        ds.ExamDates(exams=[ds.Exam(subject="Law", day=D, sessions=[E])]),
        ds.InjuryRest(part="Legs", events=[E], from_day=D, to_day=D),
        pl.TravelTime(people=[P], home=R, legs=[pl.TravelLeg(a=R, b=DATA.rooms[-1].id, slots=1)]),
    ]
    assert [x.data_problems(DATA) for x in fine] == [[] for _ in fine]


def test_free_labels_are_not_names_of_the_data():
    """A muscle group, a body part and an exam subject only word the sentence."""
    labels: list[Params] = [
        ds.RecoveryDays(group="no such group", intense=[E], trains=[E, E2], days=1),
        ds.InjuryRest(part="no such part", events=[E], from_day=D, to_day=D),
        ds.ExamDates(exams=[ds.Exam(subject="no such subject", day=D, sessions=[E])]),
    ]
    assert [x.data_problems(DATA) for x in labels] == [[], [], []]


# -- the data's names ---------------------------------------------------------------------------
def test_a_segment_is_a_person_of_the_data_and_a_place_a_room():
    assert (DATA.names("segment"), DATA.names("place")) == (DATA.person_by_id, DATA.room_by_id)


def test_a_feature_is_one_a_room_offers_or_an_event_needs():
    raw = DATA.model_dump(mode="json")
    raw["rooms"][0]["features"] = ["projector"]
    raw["events"][0]["needs"] = ["lab"]
    data = TimetableData.model_validate(raw)
    assert [f in data.names("feature") for f in ("projector", "lab", "F?")] == [True, True, False]


def test_a_day_is_named_as_the_data_lists_it():
    assert [d in DATA.names("day") for d in (*DATA.days, "D?")] == [*(True for _ in DATA.days), False]


# -- the overrides: what a check needs beyond known names ----------------------------------------
def test_a_weight_table_without_every_event_is_a_problem_naming_the_missing_events():
    weights = {eid: w for eid, w in WEIGHTS.items() if eid not in (E, E2)}
    assert rp.WeightedEnd(weights=weights).data_problems(DATA) == [f"no weight for event {E!r}, {E2!r}"]


def test_a_current_plan_without_every_event_is_a_problem_naming_the_missing_event():
    rows = {eid: row for eid, row in ROWS.items() if eid != E2}
    assert rp.CurrentSchedule(existing=rows).data_problems(DATA) == [f"the current plan has no row for event {E2!r}"]


def test_open_loss_without_the_offset_or_audience_of_a_segment_a_message_reaches_is_a_problem():
    reached = DATA.events[0].people[0]
    rest = {s: 0 for s in SEGMENTS if s != reached}
    assert (
        cp.OpenLoss(offsets=rest, audience=SEGMENTS, penalty=PENALTY).data_problems(DATA),
        cp.OpenLoss(offsets=SEGMENTS, audience=rest, penalty=PENALTY).data_problems(DATA),
    ) == (
        [f"offsets give no UTC offset for segment {reached!r}"],
        [f"audience gives no size for segment {reached!r}"],
    )


def test_open_loss_may_leave_out_a_segment_no_message_reaches():
    raw = DATA.model_dump(mode="json")
    raw["people"].append({"id": "Quiet", "role": "nobody writes to them"})
    data = TimetableData.model_validate(raw)
    assert cp.OpenLoss(offsets=SEGMENTS, audience=SEGMENTS, penalty=PENALTY).data_problems(data) == []


def test_a_battery_feature_that_no_event_needs_is_a_problem():
    raw = DATA.model_dump(mode="json")
    raw["rooms"][0]["features"].append("wifi")  # a feature only a room offers
    data = TimetableData.model_validate(raw)
    p = rp.BatteryLevel(feature="wifi", capacity=4, start=4, use=1, recharge=1)
    assert p.data_problems(data) == ["no event needs feature 'wifi': the battery would never drain"]


def test_a_battery_feature_that_an_event_needs_is_fine():
    data = TimetableData.model_validate(_stored("meeting_planning", "battery_level").data)
    needed = next(f for e in data.events for f in e.needs)
    assert rp.BatteryLevel(feature=needed, capacity=4, start=4, use=1, recharge=1).data_problems(data) == []


def test_an_injury_rest_ending_before_it_starts_is_a_problem():
    first, last = DATA.days[0], DATA.days[-1]
    assert ds.InjuryRest(part="Legs", events=[E], from_day=last, to_day=first).data_problems(DATA) == [
        f"the rest period starts on {last!r}, after it ends on {first!r}: it has no day"
    ]


def test_a_name_unknown_in_several_nested_places_is_one_problem():
    legs = [pl.TravelLeg(a="H?", b=R, slots=1), pl.TravelLeg(a=DATA.rooms[-1].id, b="H?", slots=2)]
    assert pl.TravelTime(people=[P], home="H?", legs=legs).data_problems(DATA) == ["unknown place 'H?'"]


def test_the_unknown_events_of_several_review_pairs_are_one_problem_naming_each_once():
    pairs = [ds.ReviewPair(first="A?", review=E), ds.ReviewPair(first="B?", review="A?")]
    assert ds.ReviewWindow(pairs=pairs, min_days=1, max_days=2).data_problems(DATA) == ["unknown event 'A?', 'B?'"]


def test_a_problem_names_five_and_counts_the_rest_and_says_nothing_when_none_lack():
    assert (params.problem("no row for", [f"e{k}" for k in range(7)]), params.problem("no row for", [])) == (
        ["no row for 'e0', 'e1', 'e2', 'e3', 'e4' (+2 more)"],
        [],
    )


# -- the grader, end to end ---------------------------------------------------------------------
def test_a_window_on_an_unknown_event_is_refused_naming_the_rule_and_the_event():
    inst, rid = edited(_stored("meeting_planning", "window"), "window", event="M?")
    assert f"{rid} (window): unknown event 'M?'" in refusal(inst)


def test_blocked_slots_naming_an_unknown_slot_are_refused_not_held_vacuously():
    inst, rid = edited(_stored("course_timetabling", "blocked_slots"), "blocked_slots", slots=["Sun 09:00"])
    assert f"{rid} (blocked_slots): unknown slot 'Sun 09:00'" in refusal(inst)


def test_an_exam_on_an_unknown_day_is_refused_naming_the_rule_and_the_day():
    inst = _stored("study_planning", "exam_dates")
    exams = next(r for r in inst.rules if r.kind == "exam_dates").params["exams"]
    inst, rid = edited(inst, "exam_dates", exams=[{**exams[0], "day": "Sun"}, *exams[1:]])
    assert f"{rid} (exam_dates): unknown day 'Sun'" in refusal(inst)


def test_a_weighted_end_term_without_an_event_weight_is_refused_naming_the_event():
    inst = _stored("exam_scheduling", "weighted_end")
    term = next(t for t in inst.objective if t.kind == "weighted_end")
    first = inst.data["events"][0]["id"]
    weights = {k: v for k, v in term.params["weights"].items() if k != first}
    inst, tid = edited(inst, "weighted_end", weights=weights)
    assert f"{tid} (weighted_end): no weight for event {first!r}" in refusal(inst)


def test_an_injury_rest_ending_before_it_starts_is_refused():
    inst = _stored("fitness_planning", "injury_rest")
    days = inst.data["days"]
    inst, rid = edited(inst, "injury_rest", from_day=days[2], to_day=days[0])
    assert f"{rid} (injury_rest): the rest period starts on {days[2]!r}, after it ends on {days[0]!r}" in refusal(inst)


def test_a_send_window_for_an_unknown_segment_is_refused_naming_the_segment():
    inst, rid = edited(_stored("email_scheduling", "local_send_window"), "local_send_window", segment="Mars")
    assert f"{rid} (local_send_window): unknown segment 'Mars'" in refusal(inst)


def test_stored_instances_of_every_timetabling_task_still_grade():
    tasks = sorted({inst["task"] for inst in _LINES})
    assert len(tasks) == 9
    scores = {t: grade(inst, oracle(inst)).all_pass for t in tasks for inst in [_stored(t)]}
    assert scores == dict.fromkeys(tasks, 1)


def test_no_stored_timetabling_instance_names_what_its_data_lacks():
    """No false alarm over every stored certified instance, every rule and term."""
    found = []
    for raw in _LINES:
        inst = Instance.model_validate(raw)
        data = TimetableData.model_validate(inst.data)
        for table, items in ((rp.RULE_PARAMS, inst.rules), (rp.TERM_PARAMS, inst.objective)):
            for item in items:
                found += [
                    (inst.id, item.id, p) for p in table[item.kind].model_validate(item.params).data_problems(data)
                ]
    assert found == []
