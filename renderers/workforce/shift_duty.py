"""Prompt text of Shift & Duty Scheduling: one sentence per rule kind and objective kind,
and the body of the prompt (the staff, the shifts on the clock, the cover table and the
requests); the shared closing sections are the kit's."""

from __future__ import annotations

from pbsolve.checkers.workforce import shift_duty as sd
from pbsolve.checkers.workforce.shift_duty import ShiftDutyData, slot_name
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, labelled, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=sd.TASK_ID,
    data_type=ShiftDutyData,
    rule_params=sd.RULE_PARAMS,
    term_params=sd.TERM_PARAMS,
    worst_case="the data's least favourable values are the high ends of the staff requirements",
    current="the current roster",
)
SETTING = {
    "hospital_ward": "the nursing roster of a hospital ward",
    "call_centre": "the agent roster of a call centre, some of whose agents are on part-time contracts",
    "security_guards": "the guard roster of a site guarded round the clock in 12-hour posts",
    "retail_store": "the sales-floor roster of a retail store",
    "factory_three_shift": "the operator roster of a factory running three shifts",
}


def _a(word: str) -> str:
    """'a Late', 'an Early'."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def _clock(hour: int) -> str:
    return f"{hour % 24:02d}:00"


@TEXT.rule("coverage")
def _coverage(d: ShiftDutyData, p: NoParams) -> str:
    return "Every shift has at least the number of staff the cover table requires for it."


@TEXT.rule("skill_cover")
def _skill_cover(d: ShiftDutyData, p: sd.SkillCover) -> str:
    who = plural(p.min, "rostered person", "rostered people")
    uncovered = any(d.need[x, s] == 0 for x, s in p.slots)  # someone must work there all the same
    return (
        f"Each of these shifts has at least {who} with the skill {p.skill}: "
        + and_list([slot_name(x, s) for x, s in p.slots])
        + (" (this holds also where the cover table requires 0)" if uncovered else "")
        + "."
    )


@TEXT.rule("holidays")
def _holidays(d: ShiftDutyData, p: NoParams) -> str:
    return "Nobody works on a day of their booked leave."


@TEXT.rule("max_hours")
def _max_hours(d: ShiftDutyData, p: sd.MaxHours) -> str:
    who = and_list(p.people) + (" each work" if len(p.people) > 1 else " works")
    return f"Contract maximum: {who} at most {plural(p.max, 'hour')} over the whole roster."


@TEXT.rule("min_hours")
def _min_hours(d: ShiftDutyData, p: sd.MinHours) -> str:
    who = and_list(p.people) + (" each work" if len(p.people) > 1 else " works")
    return f"Contract minimum: {who} at least {plural(p.min, 'hour')} over the whole roster."


@TEXT.rule("forbidden_succession")
def _succession(d: ShiftDutyData, p: sd.ForbiddenSuccession) -> str:
    return f"Nobody works {_a(p.then)} shift on the day after working {_a(p.first)} shift."


@TEXT.rule("shift_ban")
def _shift_ban(d: ShiftDutyData, p: sd.ShiftBan) -> str:
    return f"{p.person} never works {_a(and_list(p.shifts))} shift."


@TEXT.rule("max_consecutive")
def _max_consecutive(d: ShiftDutyData, p: sd.MaxConsecutive) -> str:
    return f"Nobody works on more than {plural(p.max, 'day')} in a row (any shift counts as a working day)."


@TEXT.rule("complete_weekends")
def _complete_weekends(d: ShiftDutyData, p: sd.CompleteWeekends) -> str:
    who = and_list(p.people)
    days = and_list(["–".join(w) for w in d.weekends if len(w) >= 2])
    return (
        f"Complete weekends: {who} work{'s' if len(p.people) == 1 else ''} on both weekend days ({days}) or on neither."
    )


@TEXT.rule("shift_balance")
def _shift_balance(d: ShiftDutyData, p: sd.ShiftBalance) -> str:
    spread = (
        f"differ by at most {p.max} between any two staff members" if p.max else "are the same for every staff member"
    )
    return (
        f"Fairness: the numbers of {p.shift} shifts worked (per person over the roster, counting every person listed, "
        f"also those who work none) {spread}."
    )


@TEXT.rule("weekend_cap")
def _weekend_cap(d: ShiftDutyData, p: sd.WeekendCap) -> str:
    days = and_list([x.id for x in d.days if x.weekend])
    who = and_list(p.people) + (" each work" if len(p.people) > 1 else " works")
    return f"Weekends off: {who} on at most {plural(p.max, 'weekend day')} (the weekend days are {days})."


@TEXT.rule("min_rest")
def _min_rest(d: ShiftDutyData, p: sd.MinRest) -> str:
    return (
        f"Minimum rest: between the end of one shift and the start of the next shift of the same person there are at "
        f"least {plural(p.hours, 'hour')} (shifts end at their start time plus their length, a night shift ending the next morning)."
    )


@TEXT.rule("night_fatigue")
def _night_fatigue(d: ShiftDutyData, p: sd.NightFatigue) -> str:
    return (
        f"Fatigue: whoever has worked {plural(p.run, f'{p.shift} shift')} on consecutive days takes the next "
        f"{plural(p.rest, 'day')} off (no shift at all); this applies after every such run, also when a run is longer."
    )


@TEXT.rule("run_hours")
def _run_hours(d: ShiftDutyData, p: sd.RunHours) -> str:
    return (
        f"Cumulative hours: a person's running total of hours since their last day off (reset to 0 by every day off) "
        f"never exceeds {p.max} hours."
    )


@TEXT.rule("person_absent")
def _absent(d: ShiftDutyData, p: sd.PersonAbsent) -> str:
    return f"{p.person} is absent on {and_list(p.days)} and works no shift then."


@TEXT.rule("absence_cover")
def _absence_cover(d: ShiftDutyData, p: NoParams) -> str:
    return (
        "Absence-proof cover: if any one person were absent, every shift would still have the staff the cover table "
        "requires, so each shift that requires staff has at least one person more than it requires."
    )


@TEXT.objective("requests")
def _requests(d: ShiftDutyData, p: NoParams) -> str:
    return "the request penalty: the sum of the weights of the staff requests your roster does not grant"


@TEXT.objective("wage_cost")
def _wage(d: ShiftDutyData, p: NoParams) -> str:
    return "the wage cost: for every shift worked, the person's hourly wage times the shift's length in hours"


@TEXT.objective("unsocial_max")
def _unsocial_max(d: ShiftDutyData, p: sd.UnsocialMax) -> str:
    return f"the {p.shift} load: the largest number of {p.shift} shifts worked by any one person"


@TEXT.objective("rota_score")
def _rota(d: ShiftDutyData, p: NoParams) -> str:
    return (
        "the rota score: person number k (in the staff list's order) working shift number s (in the shift list's "
        "order) on day number d (in the roster's order, from 1) scores k × d × s; summed over every shift worked"
    )


@TEXT.objective("changes")
def _changes(d: ShiftDutyData, p: sd.CurrentRoster) -> str:
    return (
        "the number of roster entries (person, day, shift) that are in your roster but not in the current roster, or "
        "in the current roster but not in yours (moving a person to another shift on the same day counts 2)"
    )


def _requests_lines(d: ShiftDutyData) -> list[str]:
    out = []
    for r in d.requests:
        what = f"no {r.shift} shift on {r.day}" if r.shift is not None else f"{r.day} off"
        out.append(f"- {r.id}: {r.person} asks for {what} (weight {r.weight})")
    return out


@TEXT.body
def _body(d: ShiftDutyData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    out = [
        f"You are planning {SETTING.get(subtask, 'a staff roster')} for {and_list([x.id for x in d.days])} "
        f"(in this order, consecutive days). Each person works at most one shift a day; a day without a shift is a "
        "day off.",
        "",
        "**Shifts** (shift number s = 1, 2, ... in this order):",
    ]
    for s in d.shifts:
        end = s.start + s.hours
        note = " (ends the next morning)" if end > 24 else ""
        out.append(f"- {s.id}: {_clock(s.start)}–{_clock(end)}, {s.hours} hours{note}")
    out += ["", "**Staff** (person number k = 1, 2, ... in this order):"]
    for k, q in enumerate(d.staff, 1):
        parts = [f"{q.id} (k = {k})", f"wage {q.wage} per hour"]
        parts.append(labelled("skill", list(q.skills)) if q.skills else "no special skill")
        if q.holidays:
            parts.append("booked leave on " + and_list(list(q.holidays)))
        out.append("- " + "; ".join(parts))
    out += ["", "**Cover** (staff required on each shift; every shift of every day is listed):"]
    for x in d.days:
        cells = [f"{s.id} {ranged(d, 'need', slot_name(x.id, s.id), d.need[x.id, s.id])}" for s in d.shifts]
        out.append(f"- {x.id}{' (weekend)' if x.weekend else ''}: " + ", ".join(cells))
    if d.requests:
        out += ["", "**Requests** (soft: a request not granted adds its weight to the request penalty):"]
        out += _requests_lines(d)
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        ids = [r.id for r in rules if r.kind == "person_absent"]
        why = f"the absence in {and_list(ids)}" if ids else "the absence among the rules"
        out += ["", f"**Current roster** (made before {why}, which it breaks; change as few entries as you can):"]
        current = sd.CurrentRoster.model_validate(changes.params).existing
        out += [f"- {q}: {x} {s}" for q, x, s in current] or ["- (nobody works)"]
    return out


@TEXT.verification
def _verification(d: ShiftDutyData) -> str:
    return (
        "under `verification`, report from your roster `hours` (for every person, the hours they work over the "
        "roster) and `days_worked` (for every person, the number of days on which they work a shift)."
    )
