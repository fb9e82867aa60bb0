"""Prompt text of Work Assignment Scheduling: one sentence per rule kind and objective
kind (hours, days and costs stated in their units), and the body of the prompt (the
closing sections are the kit's)."""

from __future__ import annotations

from pbsolve.checkers.workforce import work_assignment as wa
from pbsolve.checkers.workforce.work_assignment import WorkData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, labelled, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=wa.TASK_ID,
    data_type=WorkData,
    rule_params=wa.RULE_PARAMS,
    term_params=wa.TERM_PARAMS,
    worst_case="the data's least favourable values are task hours at the high end and daily hours at the low end",
)
CONTEXT = {
    "maintenance_crew": "a maintenance crew's week of repair jobs; some jobs depend on others, and some are grouped in chains where changing worker costs a handover",
    "consulting_team": "a consulting team's week of client workstreams, billed at each consultant's hourly rate",
    "software_sprint": "a software team's sprint week: stories and the code reviews of them",
    "cleaning_services": "a cleaning company's week of site rounds; some rounds are grouped in chains, and changing cleaner within a chain costs travel",
    "translation_agency": "a translation agency's week of jobs by language pair, each translation followed by a second review",
}
ROBUST_KINDS = frozenset({"worker_backup"})


def _who(workers: list[str], verb: str) -> str:
    return and_list(workers) + (f" each {verb}" if len(workers) > 1 else f" {verb}s")


@TEXT.rule("skill")
def _skill(d: WorkData, p: NoParams) -> str:
    return "Every task is done by a worker who has the skill it needs."


@TEXT.rule("daily_hours")
def _daily(d: WorkData, p: NoParams) -> str:
    return (
        "No worker works more hours on one day (the sum of the hours of their tasks that day) than their daily hours."
    )


@TEXT.rule("availability")
def _availability(d: WorkData, p: NoParams) -> str:
    return "No worker does a task on one of their days off."


@TEXT.rule("release")
def _release(d: WorkData, p: NoParams) -> str:
    return "No task is done before its release day."


@TEXT.rule("hard_deadline")
def _deadline(d: WorkData, p: wa.HardDeadline) -> str:
    whose = "their due days" if len(p.tasks) > 1 else "its due day"
    return f"{and_list(p.tasks)} must be done on or before {whose} (a hard deadline)."


@TEXT.rule("weekly_hours")
def _weekly(d: WorkData, p: wa.WeeklyHours) -> str:
    return f"{_who(p.workers, 'work')} at most {plural(p.max, 'hour')} over the whole week."


@TEXT.rule("worker_absent")
def _absent(d: WorkData, p: wa.WorkerAbsent) -> str:
    return f"{p.worker} is absent on {and_list(p.days)} and does no task then."


@TEXT.rule("not_before")
def _not_before(d: WorkData, p: wa.NotBefore) -> str:
    return f"{p.task} is postponed: it is done on {p.day} or a later day."


@TEXT.rule("precedence")
def _precedence(d: WorkData, p: wa.Precedence) -> str:
    pairs = [f"{b} after {a}" for a, b in p.pairs]
    return (
        f"Dependencies: {and_list(pairs)}; a task that comes after another is done on a strictly later day "
        "(a task is finished on the day it is done)."
    )


@TEXT.rule("load_balance")
def _balance(d: WorkData, p: wa.LoadBalance) -> str:
    spread = f"differ by at most {plural(p.max, 'hour')}" if p.max else "are all equal"
    return (
        f"Fairness: the weekly hours of any two workers (every listed worker counts, also one with no task) {spread}."
    )


@TEXT.rule("different_worker")
def _different(d: WorkData, p: wa.DifferentWorker) -> str:
    pairs = [f"{a} and {b}" for a, b in p.pairs]
    if len(pairs) == 1:
        return f"Four eyes: {pairs[0]} are done by two different workers."
    return f"Four eyes: each of these pairs of tasks is done by two different workers: {'; '.join(pairs)}."


@TEXT.rule("same_worker")
def _same(d: WorkData, p: wa.SameWorker) -> str:
    return f"{and_list(p.tasks)} are done by the same worker."


@TEXT.rule("min_hours")
def _min_hours(d: WorkData, p: wa.MinHours) -> str:
    return f"{_who(p.workers, 'work')} at least {plural(p.min, 'hour')} over the week."


@TEXT.rule("cumulative_rest")
def _rest(d: WorkData, p: wa.CumulativeRest) -> str:
    after = d.days[d.day_index[p.day] + 1]
    first = d.days[0]
    span = f"on {first}" if p.day == first else f"from {first} through {p.day}"
    return (
        f"Running hours: a worker who works more than {plural(p.hours, 'hour')} in total {span} works at most "
        f"{plural(p.light, 'hour')} on {after}."
    )


@TEXT.rule("consecutive_days")
def _consecutive(d: WorkData, p: wa.ConsecutiveDays) -> str:
    return (
        f"Fatigue: no worker works (does at least one task) on more than {plural(p.max, 'day')} in a row "
        f"(the days {and_list(list(d.days))} follow each other)."
    )


@TEXT.rule("worker_backup")
def _backup(d: WorkData, p: NoParams) -> str:
    off = " and does not have the task's day off" if any(w.days_off for w in d.workers) else ""
    return (
        f"Every task names a backup worker other than its own worker, who has the task's skill{off}. If any one "
        "worker fell ill for the whole week, each of their tasks would be done by its backup on the same day, and "
        "no worker may then work more than their daily hours on any day. This must hold for each worker falling "
        "ill on their own."
    )


@TEXT.objective("labour_cost")
def _cost(d: WorkData, p: NoParams) -> str:
    return "the labour cost: each task costs its worker's hourly rate × the task's hours; summed over tasks"


@TEXT.objective("lateness")
def _lateness(d: WorkData, p: NoParams) -> str:
    return (
        "the weighted lateness: a task done k days after its due day counts its weight × k (0 when done on or "
        "before its due day); summed over tasks"
    )


@TEXT.objective("handovers")
def _handovers(d: WorkData, p: NoParams) -> str:
    return (
        "the handover cost: within each chain, every two tasks listed next to each other in the chain that are "
        "done by different workers pay the chain's handover cost; summed over chains"
    )


@TEXT.objective("order_score")
def _order(d: WorkData, p: NoParams) -> str:
    return (
        "the order score: a task with priority points p done on day number j by the worker listed k-th scores "
        "p × (10 × j + k); summed over tasks"
    )


@TEXT.objective("backup_score")
def _backup_score(d: WorkData, p: NoParams) -> str:
    return "the backup score: each task counts the listed number k of its backup worker; summed over tasks"


@TEXT.objective("changes")
def _changes(d: WorkData, p: wa.CurrentTasks) -> str:
    return "the number of tasks whose worker or day differs from the current plan (each changed task counts 1)"


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.tier == "hard" and r.kind not in ROBUST_KINDS]
    return f"the disruption in {and_list(ids)}, which it breaks" if ids else "the disruption among the rules"


@TEXT.body
def _body(d: WorkData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    days = list(d.days)
    out = [
        f"You are assigning the tasks of {CONTEXT.get(subtask, 'a working week')}. Every task is done by one "
        f"worker on one day. The days are {and_list(days)}, in this order (day number j = 1, 2, ...).",
        "",
        "**Workers** (listed order k = 1, 2, ...):",
    ]
    for w in d.workers:
        line = (
            f"- {w.id}: {labelled('skill', list(w.skills))}; rate {w.rate} per hour; daily hours "
            f"{ranged(d, 'capacity', w.id, w.max_day)}"
        )
        if w.days_off:
            line += f"; days off {and_list(list(w.days_off))}"
        out.append(line)
    out += [
        "",
        "**Tasks** (hours are the task's working hours on the day it is done; priority points weigh the order score):",
    ]
    for t in d.tasks:
        parts = [
            f"{t.id} {t.name}",
            f"needs {t.skill}",
            f"{ranged(d, 'hours', t.id, t.hours)} hours"
            if any(u.target == t.id for u in d.uncertain)
            else plural(t.hours, "hour"),
            f"released {t.release}",
            f"due {t.due}",
            f"lateness weight {t.weight}",
            f"priority {t.priority}",
        ]
        out.append("- " + " — ".join(parts))
    if d.chains:
        out += [
            "",
            "**Chains** (a chain only prices handovers: each change of worker between two tasks listed next to each other costs the chain's handover cost; a chain sets no order of days):",
        ]
        out += [f"- {c.id}: {' → '.join(c.tasks)}, handover cost {c.cost}" for c in d.chains]
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; change as few tasks as you can):"]
        out += [f"- {tid}: {w}, {day}" for tid, (w, day) in wa.current_plan(changes).items()]
    return out


@TEXT.verification
def _verification(d: WorkData) -> str:
    return (
        "under `verification`, report from your plan `hours` (for every worker, the hours they work over the week) "
        "and `day_hours` (for every day, the hours of all tasks done that day)."
    )
