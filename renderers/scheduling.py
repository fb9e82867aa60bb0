"""Template prompts for the Scheduling & Timetabling family.

Every fact is stated once, rules carry their stable ids, and the objective with its
tie-break order is explicit. The answer-format section is appended by the core from the
answer schema.
"""

from __future__ import annotations

import itertools
from typing import Any

from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import Event, TimetableData
from pbsolve.mechanisms import PromptContext, prompt_sections
from pbsolve.params import as_model, parse
from pbsolve.render_kit import a_or_an, plural
from pbsolve.renderers import (  # noqa: F401  (registers sentences)
    scheduling_calendar,
    scheduling_content,
    scheduling_day_spacing,
    scheduling_places,
    scheduling_stateful,
)
from pbsolve.renderers.scheduling_calendar import EMAIL_INTRO, OBJECTIVE_SENTENCES, email_details
from pbsolve.renderers.scheduling_words import SENTENCES, Vocab, room_label, sentence
from pbsolve.renderers.scheduling_words import unit as _start_word
from pbsolve.renderers.scheduling_words import units as _units
from pbsolve.schema import ObjectiveTerm, Recovery, Rule

VOCAB = {
    "meeting_planning": Vocab("meeting", "meetings", "attendee", "You are scheduling {n} meetings on one working day."),
    "course_timetabling": Vocab(
        "lecture", "lectures", "participant", "You are building a weekly timetable for {n} lectures."
    ),
    "exam_scheduling": Vocab("exam", "exams", "participant", "You are scheduling {n} exam sittings."),
    "study_planning": Vocab(
        "session", "sessions", "student",
        "You are planning {n} study sessions over the coming days. A student's unavailable periods are fixed "
        "commitments (classes, or work shifts where stated); sessions of a subject are numbered and studied in "
        "order, and each session's difficulty is given.",
    ),
    "fitness_planning": Vocab(
        "session", "sessions", "participant",
        "You are planning {n} training sessions over the coming weeks. Sessions of one muscle group or "
        "discipline are numbered and done in order; each session's intensity is given (3 = intense).",
    ),
    "email_scheduling": Vocab("message", "messages", "segment", EMAIL_INTRO),
    "schedule_planning": scheduling_places.SCHEDULE_VOCAB,
    "team_building_event_planning": scheduling_places.TEAM_VOCAB,
    "content_scheduling": scheduling_content.CONTENT_VOCAB,
}  # fmt: skip

SUBTASK_CONTEXT = {
    "cross_team_sync": "The meetings bring together people from several teams.",
    "interview_panel": "A candidate meets a series of interview panels.",
    "board_meeting_series": "Numbered board sessions are part of one series.",
    "multi_time_zone_standups": "Several people work remotely from other time zones, so their hours are shifted.",
    "client_visit": "A client is visiting for the day and joins several meetings, which have the highest priority.",
    "university_lectures": "Courses are shared between degree cohorts.",
    "school_classes": "Class groups are taught by subject teachers.",
    "lab_sessions": "Some sessions are double-period labs that need a lab room.",
    "seminar_groups": "Each course has one lecture for all its groups and a seminar for each group, led by a tutor.",
    "joint_degree": "This is a joint degree: every group takes every course.",
    "university_finals": "These are end-of-term finals for degree cohorts.",
    "school_mock_exams": "These are mock exams for school year groups.",
    "certification_sittings": "These are professional certification sittings; some need computer rooms.",
    "resit_week": "This is a short resit week; many candidates sit several papers.",
    "oral_exams": "These are oral exams in small rooms; each is run by one examiner, who examines one exam at a time.",
    "exam_cram": "One student prepares for several exams that fall within these days.",
    "spaced_revision": "Each subject ends with a review session (id ending in R), spaced from its first session.",
    "study_group": "The students study as a group: each session is attended by every student listed for it.",
    "working_student": "The student works shifts: the unavailable periods are work shifts.",
    "thesis_and_courses": "Thesis writing sessions last two periods and need a quiet place.",
    "strength_split": "The programme splits strength work by muscle group.",
    "endurance_build": "The programme builds endurance with runs that get longer.",
    "injury_comeback": "The athlete is coming back from an injury.",
    "small_group_training": "A coach trains small groups: each session is attended by every person listed for it.",
    "triathlon_block": "A triathlete trains swimming, cycling and running, each in its own area.",
    **scheduling_places.SUBTASK_CONTEXT,
    **scheduling_content.SUBTASK_CONTEXT,
}


def _join(items: list[str], word: str = "and") -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {word} " + items[-1]


def _all(n: int) -> str:
    """'both' for two, 'all' for more (a rule over one event says neither)."""
    return "both " if n == 2 else "all " if n > 2 else ""


def _end(d: TimetableData, slot_id: str) -> str:
    return d.slots[d.slot_index[slot_id]].end_label


# the rule kinds a minimum-change replanning disruption takes (always hard-tier)
DISRUPTION_KINDS = frozenset({"person_absent", "room_closed"})


def sentence_kinds(task: str) -> frozenset[str]:
    """The rule kinds ``render_rule`` has a sentence for in ``task`` (the family contract)."""
    VOCAB[task]  # KeyError for a task this family does not have
    return frozenset(SENTENCES)


def render_rule(rule: Rule, data: dict[str, Any], task: str) -> str:
    fn = SENTENCES.get(rule.kind)
    if fn is None:
        raise ValueError(f"no sentence for rule kind {rule.kind!r}")
    return fn(TimetableData.model_validate(data), parse(rp.RULE_PARAMS, rule), VOCAB[task])


# -- one sentence per rule kind ----------------------------------------------------------
@sentence("availability")
def _s_availability(d: TimetableData, p: rp.NoParams, v: Vocab) -> str:
    return f"Every {v.person} is available for the whole of each {v.event} they take part in."


@sentence("room_fit")
def _s_room_fit(d: TimetableData, p: rp.NoParams, v: Vocab) -> str:
    return f"A room must seat everyone in the {v.event} and have all the equipment the {v.event} needs."


@sentence("person_no_overlap")
def _s_person_no_overlap(d: TimetableData, p: rp.NoParams, v: Vocab) -> str:
    return f"No {v.person} takes part in two {v.events} at the same time."


@sentence("room_no_overlap")
def _s_room_no_overlap(d: TimetableData, p: rp.NoParams, v: Vocab) -> str:
    return f"A room holds at most one {v.event} at a time."


@sentence("series_order")
def _s_series_order(d: TimetableData, p: rp.NoParams, v: Vocab) -> str:
    return _series_order(d, v)


@sentence("window")
def _s_window(d: TimetableData, p: rp.Window, v: Vocab) -> str:
    return f"{p.event} must start at or after {p.from_} and finish by {_end(d, p.to)}."


@sentence("deadline")
def _s_deadline(d: TimetableData, p: rp.Deadline, v: Vocab) -> str:
    return f"{_join(p.events)} must {_all(len(p.events))}finish by {_end(d, p.to)}."


@sentence("blocked_slots")
def _s_blocked_slots(d: TimetableData, p: rp.BlockedSlots, v: Vocab) -> str:
    return f"No {v.event} may take place, even in part, during {_join(_runs(d, p.slots), 'or')}."


@sentence("daily_limit")
def _s_daily_limit(d: TimetableData, p: rp.DailyLimit, v: Vocab) -> str:
    # an email calendar's days are UTC days, whatever a segment's local time (see the intro)
    per = "that day" if len(d.days) == 1 else ("per UTC day" if v.event == "message" else "per day")
    who = _join(p.people) + (" each take" if len(p.people) > 1 else " takes")
    noun = v.event if p.max == 1 else v.events
    if not p.max:
        return f"{who} part in no {v.events} at all."
    return f"{who} part in at most {p.max} {noun} {per}."


@sentence("day_cap")
def _s_day_cap(d: TimetableData, p: rp.DayCap, v: Vocab) -> str:
    if p.max == 1:
        return f"At most one {v.event} takes place on any one day."
    return f"At most {p.max} {v.events} take place on any one day."


@sentence("precedence")
def _s_precedence(d: TimetableData, p: rp.Precedence, v: Vocab) -> str:
    return f"{p.before} ends no later than {p.after} starts."


@sentence("priority_order")
def _s_priority_order(d: TimetableData, p: rp.PriorityOrder, v: Vocab) -> str:
    chain = p.events
    return "Priority ranking: " + ", ".join(f"{a} starts no later than {b}" for a, b in itertools.pairwise(chain)) + "."


@sentence("person_buffer")
def _s_person_buffer(d: TimetableData, p: rp.PersonBuffer, v: Vocab) -> str:
    return f"{p.person} has at least {_units(d, p.gap)} free between any two of their {v.events} on the same day."


@sentence("max_consecutive")
def _s_max_consecutive(d: TimetableData, p: rp.MaxConsecutive, v: Vocab) -> str:
    return (
        f"{p.person} is never busy for more than {_units(d, p.max)} in a row (busy: in one of their {v.events} "
        f"of this plan; the count starts again each day)."
    )


@sentence("different_days")
def _s_different_days(d: TimetableData, p: rp.DifferentDays, v: Vocab) -> str:
    return f"{_join(p.events)} {_all(len(p.events))}take place on different days."


@sentence("same_room")
def _s_same_room(d: TimetableData, p: rp.SameRoom, v: Vocab) -> str:
    return f"{_join(p.events)} {_all(len(p.events))}use the same room."


@sentence("person_absent")
def _s_person_absent(d: TimetableData, p: rp.PersonAbsent, v: Vocab) -> str:
    return f"{p.person} cannot take part in any {v.event} during {_span(d, p.slots)}."


@sentence("room_closed")
def _s_room_closed(d: TimetableData, p: rp.RoomClosed, v: Vocab) -> str:
    return f"{room_label(p.room)} is closed during {_span(d, p.slots)}."


@sentence("room_backup")
def _s_room_backup(d: TimetableData, p: rp.NoParams, v: Vocab) -> str:
    return (
        f"Every {v.event} names a backup room other than its own room. If any one room became unusable, "
        f"each {v.event} in it would move to its backup room at the same time; the backup must seat everyone "
        f"and have the equipment the {v.event} needs, and after the move no room may hold two {v.events} at "
        f"once. This must work for each room failing on its own."
    )


def render_objective(term: ObjectiveTerm, data: dict[str, Any], task: str) -> str:
    d = TimetableData.model_validate(data)
    v, tp = VOCAB[task], parse(rp.TERM_PARAMS, term)
    if term.kind == "weighted_end":
        w = as_model(tp, rp.WeightedEnd).weights
        if d.time_unit == "hour":
            return f"the sum over {v.events} of priority × finishing hour (a {v.event} ending at 17:00 counts 17)"
        weights = "; ".join(f"{eid} {w[eid]}" for eid in w)
        first = d.slots[0]  # the numbers are the listed period numbers, which need not run 1, 2, 3
        return (
            f"the sum over {v.events} of weight × finishing period number, where {a_or_an(v.event)} that starts in "
            f"period number n and lasts k periods finishes at n + k (so starting in {first.id}, number "
            f"{first.value}, and lasting 1 period counts {first.value + 1}) (weights: {weights})"
        )
    if term.kind == "room_cost":
        return f"the total room cost: each {v.event} pays the cost of its room"
    if term.kind == "slot_penalty":
        pen = as_model(tp, rp.SlotPenalty).penalty
        groups: dict[int, list[str]] = {}
        for sid, value in pen.items():
            groups.setdefault(value, []).append(sid)
        parts = [f"{value} for each {v.event}-period in {_join(sids)}" for value, sids in sorted(groups.items())]
        return "the total period penalty: " + "; ".join(parts) + " (other periods cost 0)"
    if term.kind == "same_day_pairs":
        return (
            f"the number of extra same-day {v.events}: for each cohort and each day, the number of its "
            f"{v.events} that day minus one (when positive), summed"
        )
    if term.kind == "changes":
        return (
            f"the number of {v.events} whose start or room differs from the current schedule "
            f"(each changed {v.event} counts 1)"
        )
    if term.kind == "backup_cost":
        return f"the total backup cost: each {v.event} pays the cost of its backup room"
    if term.kind in OBJECTIVE_SENTENCES:  # add-on objective kinds (e.g. renderers/scheduling_calendar.py)
        return OBJECTIVE_SENTENCES[term.kind](d, tp, v)
    raise ValueError(f"no sentence for objective kind {term.kind!r}")


def _runs(d: TimetableData, slot_ids: list[str]) -> list[str]:
    """The slots as time spans: '10:00–12:00' for each run of consecutive hours of one
    day; the slot labels on a period timetable."""
    if d.time_unit != "hour":
        return [d.slots[i].id for i in sorted({d.slot_index[x] for x in slot_ids})]
    return scheduling_places.runs(d, slot_ids)


def _span(d: TimetableData, slot_ids: list[str]) -> str:
    """Every listed slot, as spans: '10:00–12:00 and 15:00–16:00', 'Mon P1 and Tue P2'."""
    return _join(_runs(d, slot_ids))


def _series_order(d: TimetableData, v: Vocab) -> str:
    """One order per series; a series of one event orders nothing and is not named."""
    chains = [[e.id for e in members] for members in d.series_members().values() if len(members) >= 2]
    close = "it may start the moment the previous one ends"
    if not chains:
        return f"{v.events.capitalize()} of one series happen in their listed order; here no two {v.events} share a series."
    if len(chains) == 1:
        return f"{_join(chains[0])} happen in this order: each ends no later than the next one starts ({close})."
    listed = "; ".join(f"{_join(c)}" for c in chains)
    return (
        f"Each of these {len(chains)} series happens in its own listed order: {listed}. Within a series, each "
        f"{v.event} ends no later than the next one starts ({close}); {v.events} of different series may come "
        f"in any order."
    )


def _uncertain(d: TimetableData, kind: str, target: str) -> str | None:
    for u in d.uncertain:
        if u.kind == kind and u.target == target:
            return f"{u.low}–{u.high}" + f" (uncertain input {u.id})"
    return None


def _availability(d: TimetableData, unavailable: tuple[str, ...]) -> str:
    if not unavailable:
        return "available throughout"
    if d.time_unit != "hour":
        return "unavailable in " + ", ".join(unavailable)
    off = set(unavailable)
    ranges: list[str] = []
    start = None  # the first slot of the available run being read
    for i, s in enumerate(d.slots):
        if s.id not in off and start is None:
            start = s
        if s.id in off and start is not None:  # a run started at an earlier slot ends at the one before
            ranges.append(f"{start.id}–{d.slots[i - 1].end_label}")
            start = None
    if start is not None:
        ranges.append(f"{start.id}–{d.slots[-1].end_label}")
    return "available " + ", ".join(ranges) if ranges else "not available at all"


def _event_line(d: TimetableData, e: Event, task: str) -> str:
    parts = [f"{e.id} {e.name}", ", ".join(e.people)]
    duration = _uncertain(d, "duration", e.id)
    duration = (
        f"{duration.split(' ', 1)[0]} {_start_word(d)}s {duration.split(' ', 1)[1]}"
        if duration
        else _units(d, e.duration)
    )
    if task == "email_scheduling":
        return "- " + " — ".join([*parts, email_details(d, e)])
    if task == "meeting_planning":
        parts.append(duration)
        if e.needs:
            parts.append("needs " + _join(list(e.needs)))
        parts.append(f"priority {e.priority}")
    elif task == "content_scheduling":
        parts += scheduling_content.event_details(e, duration)
    elif task in scheduling_places.EVENT_LINE_TASKS:
        parts += scheduling_places.event_details(e, task, duration, _uncertain(d, "size", e.id))
    else:
        size = _uncertain(d, "size", e.id)
        parts.append(f"{size.split(' ', 1)[0]} seats {size.split(' ', 1)[1]}" if size else plural(e.size, "seat"))
        parts.append(duration)
        if e.needs:
            parts.append("needs " + _join(list(e.needs)))
    if task in LEVEL_WORDS:  # study difficulty, training intensity (both 1..3)
        parts.append(f"{LEVEL_WORDS[task]} {e.priority}")
    return "- " + " — ".join(parts)


LEVEL_WORDS = {"study_planning": "difficulty", "fitness_planning": "intensity"}


def render_prompt(
    data: dict[str, Any],
    rules: list[Rule],
    objective: list[ObjectiveTerm],
    task: str,
    subtask: str,
    mechanisms: list[str] | None = None,
    recovery: Recovery | None = None,
) -> str:
    d = TimetableData.model_validate(data)
    v = VOCAB[task]
    mechanisms = mechanisms or []
    out = [v.intro.format(n=len(d.events)) + " " + SUBTASK_CONTEXT.get(subtask, "")]
    if d.time_unit == "hour":
        first, last = d.slots[0], d.slots[-1]
        out.append(
            f"{v.events.capitalize()} start on the hour, between {first.id} and {last.id}, and must end by "
            f"{last.end_label}. Start times are written HH:MM."
        )
    else:
        per_day = sum(1 for s in d.slots if s.day == 0)
        out.append(
            f"The timetable covers {_join(list(d.days))}, with {plural(per_day, 'period')} a day, numbered through the "
            f"week: " + ", ".join(f"{s.id} = {s.value}" for s in d.slots) + ". "
            f"{a_or_an(v.event).capitalize()} lasting k periods occupies k consecutive periods of one day."
        )
    out += ["", f"**{v.person.capitalize()}s:**"]
    out += [
        f"- {p.id}"
        + (f" ({p.role})" if p.role not in ("attendee", "cohort") else "")
        + f": {_availability(d, p.unavailable)}"
        for p in d.people
    ]
    out += ["", "**Rooms:**"]
    for r in d.rooms:
        feats = _join(list(r.features)) if r.features else "no special equipment"
        seats = _uncertain(d, "seats", r.id)
        seats = f"{seats.split(' ', 1)[0]} seats {seats.split(' ', 1)[1]}" if seats else plural(r.seats, "seat")
        out.append(f"- {r.id}: {seats}, {feats}, cost {r.cost}")
    out += ["", f"**{v.events.capitalize()}** (id, name, {v.person}s, details):"]
    out += [_event_line(d, e, task) for e in d.events]
    if d.uncertain:
        out += [
            "",
            "**Uncertain inputs:** the values marked as ranges (" + ", ".join(u.id for u in d.uncertain) + ") are "
            "not known exactly yet. Your plan must satisfy every rule for every value in each range.",
        ]
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        hit = [r.id for r in rules if r.tier == "hard" and r.kind in DISRUPTION_KINDS]
        before = (
            f"the disruption in {_join(hit)}, which it breaks"
            if hit
            else "the disruption among the rules, which it breaks"
        )
        out += ["", f"**Current schedule** (made before {before}; change as few {v.events} as you can):"]
        out += [
            f"- {eid}: {start}, {room}"
            for eid, (start, room) in as_model(parse(rp.TERM_PARAMS, changes), rp.CurrentSchedule).existing.items()
        ]
    out += ["", "**Rules** (every plan must satisfy all of them):"]
    out += [f"- {r.id}: {r.text}" for r in rules]
    out += ["", "**Objective:**", *_objective_lines(objective)]
    out += prompt_sections(mechanisms, PromptContext(
        recovery=recovery,
        objective_lines=_objective_lines,
        verification=lambda: (
            f"under `verification`, report from your plan `busy` (for every {v.person}, the number of "
            f"{_start_word(d)}s they spend in {v.events}) and `rooms` (for every room, the number of {v.events} it holds)."
        ),
    ))  # fmt: skip
    return "\n".join(out)


def _objective_lines(objective: list[ObjectiveTerm], baseline: str = "the current schedule") -> list[str]:
    lines = ["Minimise, in this order of priority:"]
    for i, term in enumerate(objective, 1):
        lines.append(f"{i}. `{term.id}` — {term.text.replace('the current schedule', baseline)}.")
    if len(objective) > 1:
        lines.append(
            "A plan is better when its first figure is smaller; only when first figures are equal does the "
            "second decide, and so on."
        )
    return lines
