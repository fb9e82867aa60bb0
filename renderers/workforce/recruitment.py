"""Prompt text of Recruitment Planning: one sentence per rule kind and objective kind, and the
body of the prompt (the shared closing sections are the kit's)."""

from __future__ import annotations

from pbsolve.checkers.workforce import recruitment as rc
from pbsolve.checkers.workforce.recruitment import RecruitmentData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, a_or_an, and_list, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=rc.TASK_ID,
    data_type=RecruitmentData,
    rule_params=rc.RULE_PARAMS,
    term_params=rc.TERM_PARAMS,
    worst_case="the data's least favourable values are the fees at the high end of their ranges",
    current="the current schedule",
)
SITUATION = {
    "graduate_intake": "a graduate intake (many graduates; external assessors charge fees)",
    "executive_hire": "a senior executive hire (the board panel sits together)",
    "engineering_hiring": "engineering hiring",
    "seasonal_retail": "seasonal retail hiring for urgent store roles",
    "faculty_search": "an academic faculty search",
}


def _who(staff: list[str], verb: str) -> str:
    return and_list(staff) + (f" each {verb}" if len(staff) > 1 else f" {verb}s")


def _panels(d: RecruitmentData) -> bool:
    """Whether any stage is run by a panel (several staff members): only then do the
    sentences that count stages say how a panel seat counts."""
    return any(s.staff > 1 for s in d.stages)


def _seat_note(d: RecruitmentData) -> str:
    return " (a panel seat counts as a stage)" if _panels(d) else ""


@TEXT.rule("qualified")
def _s_qualified(d: RecruitmentData, p: NoParams) -> str:
    return "Every stage is run only by staff members who may run that stage (see the staff list)."


@TEXT.rule("stage_order")
def _s_order(d: RecruitmentData, p: NoParams) -> str:
    return (
        "Each candidate goes through the stages in the listed order, each stage in a later slot than the "
        "candidate's previous stage (so a candidate never has two stages in one slot)."
    )


@TEXT.rule("staff_no_clash")
def _s_clash(d: RecruitmentData, p: NoParams) -> str:
    return "No staff member runs two stages in the same slot."


@TEXT.rule("staff_availability")
def _s_staff_avail(d: RecruitmentData, p: NoParams) -> str:
    return "No staff member runs a stage in a slot in which they are unavailable."


@TEXT.rule("candidate_availability")
def _s_cand_avail(d: RecruitmentData, p: NoParams) -> str:
    return "No candidate has a stage in a slot in which they are unavailable."


@TEXT.rule("daily_cap")
def _s_daily(d: RecruitmentData, p: rc.StaffCap) -> str:
    if not p.max:
        return f"{_who(p.staff, 'run')} no stages on any day."
    return f"{_who(p.staff, 'run')} at most {plural(p.max, 'stage')} on any one day{_seat_note(d)}."


@TEXT.rule("staff_load")
def _s_load(d: RecruitmentData, p: rc.StaffCap) -> str:
    if not p.max:
        return f"{_who(p.staff, 'run')} no stages at all."
    return f"{_who(p.staff, 'run')} at most {plural(p.max, 'stage')} in total{_seat_note(d)}."


@TEXT.rule("fee_budget")
def _s_budget(d: RecruitmentData, p: rc.FeeBudget) -> str:
    return (
        f"The fee budget is {p.max}: the fees of all stages together (each staff member's fee for every stage "
        f"they run) are at most {p.max}."
    )


@TEXT.rule("final_deadline")
def _s_deadline(d: RecruitmentData, p: rc.Deadline) -> str:
    who = f"{and_list(p.candidates)} each finish" if len(p.candidates) > 1 else f"{p.candidates[0]} finishes"
    return f"{who} their final stage ({d.last_stage}) in {p.slot} or an earlier slot."


@TEXT.rule("min_gap")
def _s_gap(d: RecruitmentData, p: rc.MinGap) -> str:
    return (
        f"Every candidate's {p.second} is held at least {plural(p.days, 'day')} after the day of their "
        f"{p.first} (by day: {a_or_an(p.first)} on Mon allows {a_or_an(p.second)} on {_day_after(d, p.days)} at the earliest)."
    )


def _day_after(d: RecruitmentData, days: int) -> str:
    names = [s.id.split()[0] for s in d.slots]
    ordered = list(dict.fromkeys(names))
    return ordered[days] if days < len(ordered) else f"day {days + 1}"


@TEXT.rule("panel_senior")
def _s_senior(d: RecruitmentData, p: rc.StageRule) -> str:
    return f"The staff of every {p.stage} include at least one senior staff member."


@TEXT.rule("panel_team")
def _s_team(d: RecruitmentData, p: rc.StageRule) -> str:
    return f"The staff of every {p.stage} include at least one member of the hiring team of the candidate's role."


@TEXT.rule("fresh_eyes")
def _s_fresh(d: RecruitmentData, p: NoParams) -> str:
    return "No candidate meets the same staff member at two different stages."


@TEXT.rule("load_balance")
def _s_balance(d: RecruitmentData, p: rc.LoadBalance) -> str:
    spread = f"differ by at most {p.max} between any two staff members" if p.max else "are all equal"
    return (
        f"Fairness: the numbers of stages the staff members run ({'a panel seat counts as a stage; ' if _panels(d) else ''}"
        f"every listed staff member counts, also those who run none) {spread}."
    )


@TEXT.rule("max_span")
def _s_span(d: RecruitmentData, p: rc.MaxSpan) -> str:
    if not p.days:
        return "Every candidate has all their stages on one day."
    return (
        f"Every candidate's first and last stages are at most {plural(p.days, 'day')} apart (counting days, "
        "e.g. Mon to Tue is 1 day)."
    )


@TEXT.rule("panel_cooldown")
def _s_cooldown(d: RecruitmentData, p: rc.StageRule) -> str:
    return (
        f"Cool-down: a staff member who runs a {p.stage} in a slot runs no stage in the next slot of the same day "
        "(the last slot of a day is followed by no slot of that day)."
    )


@TEXT.rule("budget_release")
def _s_release(d: RecruitmentData, p: rc.BudgetRelease) -> str:
    days = list(dict.fromkeys(s.id.split()[0] for s in d.slots))
    parts = [f"{p.releases[k] if k < len(p.releases) else 0} on {day}" for k, day in enumerate(days)]
    return (
        "The fee budget is released day by day: " + and_list(parts) + ". By the end of each day the fees of "
        "all stages held so far (that day included) are at most the total released so far (unspent money "
        "carries over)."
    )


@TEXT.rule("staff_absent")
def _s_absent(d: RecruitmentData, p: rc.StaffAbsent) -> str:
    return f"{p.staff} has dropped out for {and_list(p.slots)} and runs no stage then."


@TEXT.rule("candidate_blocked")
def _s_blocked(d: RecruitmentData, p: rc.CandidateBlocked) -> str:
    return f"{p.candidate} cannot come in {and_list(p.slots)} and has no stage then."


@TEXT.rule("backup_staff")
def _s_backup(d: RecruitmentData, p: NoParams) -> str:
    free = (
        ", and is available in the stage's slot (not listed as unavailable then)"
        if any(x.unavailable for x in d.staff)
        else ""
    )
    return (
        "Every stage of every candidate names a backup staff member who does not already run it and who may run "
        f"that stage{free}. If any one staff member dropped out, the backup of each stage they run would take "
        "their place in it, and no staff member may then run two stages in one slot. This must work for each "
        "staff member dropping out on their own."
    )


@TEXT.objective("urgency")
def _o_urgency(d: RecruitmentData, p: NoParams) -> str:
    return (
        "the weighted completion: for each candidate, the urgency of their role times the slot number "
        f"(1 = {d.slots[0].id}, 2 = {d.slots[1].id if len(d.slots) > 1 else ''}, ...) of their final stage; "
        "summed over candidates"
    )


@TEXT.objective("fees")
def _o_fees(d: RecruitmentData, p: NoParams) -> str:
    return "the fees: each staff member's fee for every stage they run, summed"


@TEXT.objective("order_score")
def _o_score(d: RecruitmentData, p: NoParams) -> str:
    return (
        "the order score: row number n (the candidate-and-stage rows numbered 1, 2, ... as listed under "
        "**Schedule rows**) held in slot number j and run by staff with listed numbers k scores "
        "n × (10 × j + the sum of those k); summed over rows"
    )


@TEXT.objective("backup_score")
def _o_backup(d: RecruitmentData, p: NoParams) -> str:
    return "the backup score: each row counts the listed number k of its backup staff member; summed over rows"


@TEXT.objective("changes")
def _o_changes(d: RecruitmentData, p: rc.CurrentSchedule) -> str:
    return (
        "the number of rows (a candidate's stage) whose slot or staff differ from the current schedule "
        "(each changed row counts 1)"
    )


@TEXT.body
def _body(d: RecruitmentData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    out = [
        f"You are scheduling {SITUATION.get(subtask, 'a hiring process')}: every candidate goes through "
        f"{and_list([s.id for s in d.stages])}. The slots are "
        f"{and_list([s.id for s in d.slots])}, in this order (slot numbers 1, 2, ...; a slot's day is its first "
        "word).",
        "",
        "**Stages** (every candidate goes through all of them, in this order):",
    ]
    out += [
        f"- {s.id}: run by " + ("1 staff member" if s.staff == 1 else f"{s.staff} staff members together")
        for s in d.stages
    ]
    out += ["", "**Roles** (urgency weights the objective):"]
    for r in d.roles:
        team = [p.id for p in d.staff if r.id in p.teams]
        out.append(f"- {r.id}: urgency {r.urgency}; hiring team " + (and_list(team) if team else "nobody"))
    out += ["", "**Staff** (listed number k = 1, 2, ...):"]
    for k, p in enumerate(d.staff, 1):
        line = f"- {k}. {p.id}: may run " + (and_list(list(p.stages)) if p.stages else "no stage")
        line += "; senior" if p.senior else "; not senior"
        line += f"; fee {ranged(d, 'fee', p.id, p.fee)} per stage" if p.fee or _uncertain(d, p.id) else "; no fee"
        if p.unavailable:
            line += "; unavailable " + and_list(list(p.unavailable))
        out.append(line)
    out += ["", "**Candidates:**"]
    for c in d.candidates:
        line = f"- {c.id}: {c.role}"
        if c.unavailable:
            line += "; unavailable " + and_list(list(c.unavailable))
        out.append(line)
    out += ["", "**Schedule rows** (row number n = 1, 2, ...):"]
    out += [f"{n}. {c} — {s}" for n, (c, s) in enumerate(d.steps, 1)]
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        old = rc.CurrentSchedule.model_validate(changes.params).existing
        out += ["", "**Current schedule** (made before the change; change as few rows as you can):"]
        out += [f"- {c} — {s}: {slot}, {and_list(staff)}" for c, s, slot, staff in old]
    return out


def _uncertain(d: RecruitmentData, staff: str) -> bool:
    return any(u.kind == "fee" and u.target == staff for u in d.uncertain)


@TEXT.verification
def _verification(d: RecruitmentData) -> str:
    seats = ", a panel seat counting as a stage" if _panels(d) else ""
    return (
        "under `verification`, report from your plan `load` (for every staff member, the number of stages they "
        f"run{seats}) and `finish` (for every candidate, the slot number of their final stage)."
    )
