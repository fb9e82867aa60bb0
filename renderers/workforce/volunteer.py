"""Prompt text of Volunteer Scheduling: one sentence per rule kind and objective kind, and
the body of the prompt (the shared closing sections are the kit's)."""

from __future__ import annotations

from pbsolve.checkers.workforce import volunteer as vc
from pbsolve.checkers.workforce.volunteer import VolunteerData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, labelled, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=vc.TASK_ID,
    data_type=VolunteerData,
    rule_params=vc.RULE_PARAMS,
    term_params=vc.TERM_PARAMS,
    worst_case="the data's least favourable values are post needs at the high end and shift caps at the low end",
    current="the current roster",
)
CONTEXT = {
    "music_festival": "a music festival: gates, bars, first aid and the other posts over its days",
    "marathon": "a city marathon weekend: the start pen, water stations along the route and the finish",
    "food_bank_shifts": "a food bank's week: sorting, packing, deliveries and reception",
    "conference": "a conference: the registration desk, the session rooms and the other posts",
    "relief_hub": "a disaster relief hub that runs around the clock: intake, kitchen, medical and supply posts",
}


def _who(names: list[str], one: str, many: str) -> str:
    return and_list(names) + (f" each {many}" if len(names) > 1 else f" {one}")


@TEXT.rule("skill")
def _s_skill(d: VolunteerData, p: NoParams) -> str:
    return "A volunteer works a post only if they have the skill the post needs (posts listed with no skill need none)."


@TEXT.rule("coverage")
def _s_coverage(d: VolunteerData, p: NoParams) -> str:
    return "In every shift, every post has at least its listed need of volunteers working it."


@TEXT.rule("availability")
def _s_availability(d: VolunteerData, p: NoParams) -> str:
    return "No volunteer works in a shift in which they are unavailable."


@TEXT.rule("training")
def _s_training(d: VolunteerData, p: NoParams) -> str:
    return "A volunteer works a post that needs a training only if they have completed that training."


@TEXT.rule("shift_cap")
def _s_shift_cap(d: VolunteerData, p: NoParams) -> str:
    return "No volunteer works more shifts in total than their listed maximum."


@TEXT.rule("peak_cover")
def _s_peak_cover(d: VolunteerData, p: NoParams) -> str:
    peaks = [s.id for s in d.shifts if s.peak]
    return (
        f"In the peak shifts ({and_list(peaks)}), every post has at least its listed peak need of volunteers "
        "working it."
    )


@TEXT.rule("minors")
def _s_minors(d: VolunteerData, p: vc.MinorHours) -> str:
    late = [s.id for s in d.shifts if s.late]
    no_late = f"and never works a late shift ({and_list(late)})" if late else "and never works a late shift"
    return f"Every minor (volunteer under 18) works at most {plural(p.max_per_day, 'shift')} on any one day {no_late}."


@TEXT.rule("leader_on_site")
def _s_leader(d: VolunteerData, p: NoParams) -> str:
    return "In every shift at least one team leader works some post."


@TEXT.rule("load_cap")
def _s_load_cap(d: VolunteerData, p: vc.LoadCap) -> str:
    who = _who(p.volunteers, "works", "work")
    return f"{who} at most {plural(p.max, 'shift')} in total." if p.max else f"{who} no shift at all."


@TEXT.rule("volunteer_absent")
def _s_absent(d: VolunteerData, p: vc.VolunteerAbsent) -> str:
    return f"{p.volunteer} is absent in {and_list(p.shifts)} and works no post then."


@TEXT.rule("load_balance")
def _s_balance(d: VolunteerData, p: vc.LoadBalance) -> str:
    spread = f"differ by at most {p.max} between any two volunteers" if p.max else "are all equal"
    return (
        "Fairness: the loads (shifts worked per volunteer, counting every volunteer listed, also those who work "
        f"none) {spread}."
    )


@TEXT.rule("rotation")
def _s_rotation(d: VolunteerData, p: NoParams) -> str:
    return (
        "Rotation: no volunteer works the same post in two consecutive shifts of the same day (shifts are "
        "consecutive when they follow each other in the shift list on one day)."
    )


@TEXT.rule("min_shifts")
def _s_min_shifts(d: VolunteerData, p: vc.MinShifts) -> str:
    return f"{_who(p.volunteers, 'works', 'work')} at least {plural(p.min, 'shift')} in total."


@TEXT.rule("buffer")
def _s_buffer(d: VolunteerData, p: vc.Buffer) -> str:
    who = and_list(p.volunteers)
    return (
        f"Buffer: {who} never {'work' if len(p.volunteers) > 1 else 'works'} two consecutive shifts of the same day "
        "(shifts are consecutive when they follow each other in the shift list on one day)."
    )


@TEXT.rule("rest_after_run")
def _s_rest(d: VolunteerData, p: vc.RestAfterRun) -> str:
    return (
        f"Rest: a volunteer who has worked {plural(p.run, 'shift')} in a row (consecutive in the shift list, across "
        f"days too) must be off the next shift; so nobody works more than {p.run} consecutive shifts of the list."
    )


@TEXT.rule("late_cooldown")
def _s_cooldown(d: VolunteerData, p: NoParams) -> str:
    late = [s.id for s in d.shifts if s.late]
    return (
        f"Cool-down: a volunteer who works a late shift ({and_list(late)}) is off the shift that follows it in the "
        "shift list."
    )


@TEXT.rule("standby")
def _s_standby(d: VolunteerData, p: NoParams) -> str:
    minors = " is not a minor if the shift is a late shift," if any(v.minor for v in d.volunteers) else ""
    return (
        "Every shift names one standby volunteer (a roster row with post `standby`) who could step in for any one "
        "volunteer of that shift: the standby works no post in that shift, is not unavailable then,"
        f"{minors} and has the skill and the training of every post staffed in that shift."
    )


@TEXT.objective("volunteer_shifts")
def _o_shifts(d: VolunteerData, p: NoParams) -> str:
    return "the number of volunteer-shifts: each roster row of a volunteer working a post counts 1"


@TEXT.objective("preference")
def _o_preference(d: VolunteerData, p: NoParams) -> str:
    return "the preference total: each volunteer-shift counts the volunteer's listed preference for its post"


@TEXT.objective("order_score")
def _o_order(d: VolunteerData, p: NoParams) -> str:
    return (
        "the order score: volunteer number k working post number j in shift number t scores "
        f"t × ({vc.ORDER_CODE} × k + j)²; summed over volunteer-shifts"
    )


@TEXT.objective("standby_score")
def _o_standby(d: VolunteerData, p: NoParams) -> str:
    return "the standby score: each shift counts the number k of its standby volunteer; summed over shifts"


@TEXT.objective("changes")
def _o_changes(d: VolunteerData, p: vc.CurrentRoster) -> str:
    return (
        "the number of changes to the current roster: each volunteer and shift whose post (or being off) differs "
        "from the current roster counts 1"
    )


def _volunteer_line(d: VolunteerData, k: int, v: vc.Volunteer) -> str:
    parts = [f"{k}. {v.id}"]
    parts.append(labelled("skill", list(v.skills)) if v.skills else "no skills")
    if any(p.training for p in d.posts):
        parts.append("trained in " + and_list(list(v.trained)) if v.trained else "no training")
    if v.leader:
        parts.append("team leader")
    if v.minor:
        parts.append("minor (under 18)")
    if v.max_shifts is not None:
        parts.append(f"at most {plural(ranged(d, 'max_shifts', v.id, v.max_shifts), 'shift')}")
    if v.unavailable:
        parts.append("unavailable " + and_list(list(v.unavailable)))
    parts.append("preferences " + ", ".join(f"{post}: {n}" for post, n in v.prefs.items()))
    return "- " + "; ".join(parts)


@TEXT.body
def _body(d: VolunteerData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    peaks = [s.id for s in d.shifts if s.peak and any(p.peak_need is not None for p in d.posts)]
    late = [s.id for s in d.shifts if s.late]
    out = [
        f"You are rostering volunteers for {CONTEXT.get(subtask, 'an event')}. The shifts, in order (shift number "
        f"t = 1, 2, ...), are: " + ", ".join(f"{t}. {s.id}" for t, s in enumerate(d.shifts, 1)) + ".",
    ]
    if peaks:
        out.append(f"Peak shifts: {and_list(peaks)}.")
    if late:
        out.append(f"Late shifts: {and_list(late)}.")
    out.append("Each volunteer works at most one post per shift; a volunteer not on the roster in a shift is off then.")
    out += ["", "**Posts** (post number j = 1, 2, ... as listed):"]
    for j, p in enumerate(d.posts, 1):
        need = ranged(d, "need", p.id, p.need)
        parts = [f"{j}. {p.id}", f"needs {need} {'volunteer' if need == '1' else 'volunteers'} per shift"]
        if p.peak_need is not None:
            parts.append(f"peak need {p.peak_need}")
        parts.append(f"skill: {p.skill}" if p.skill else "no skill needed")
        if p.training:
            parts.append(f"training: {p.training}")
        out.append("- " + "; ".join(parts))
    out += ["", "**Volunteers** (volunteer number k = 1, 2, ... as listed; preference 0 is a favourite post):"]
    out += [_volunteer_line(d, k, v) for k, v in enumerate(d.volunteers, 1)]
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        existing = vc.CurrentRoster.model_validate(changes.params).existing
        absent = [r.id for r in rules if r.kind == "volunteer_absent"]
        why = f" (made before the dropout in {and_list(absent)}, which it breaks)" if absent else ""
        out += ["", f"**Current roster**{why}; change as little of it as you can:"]
        for s in d.shifts:
            here = [f"{v} at {p}" for v, p, ss in existing if ss == s.id]
            out.append(f"- {s.id}: " + (", ".join(here) if here else "nobody"))
    return out


@TEXT.verification
def _verification(d: VolunteerData) -> str:
    return (
        "under `verification`, report from your roster `shifts` (for every volunteer, the number of shifts they "
        "work) and `staffed` (for every post, the number of volunteer-shifts worked at it over all shifts)."
    )
