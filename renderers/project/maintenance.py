"""Prompt text of IT System Maintenance Planning: one sentence per rule kind and objective
kind, every time in whole hours counted from hour 0 (the start of the maintenance
period), and the body of the prompt (services with users, dependencies, clusters and
windows; tasks with hours, engineers and risk points; the closing sections are the
kit's)."""

from __future__ import annotations

from pbsolve.checkers.project import maintenance as mc
from pbsolve.checkers.project.maintenance import MaintData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=mc.TASK_ID,
    data_type=MaintData,
    rule_params=mc.RULE_PARAMS,
    term_params=mc.TERM_PARAMS,
    worst_case="the data's least favourable values are task hours and engineers needed at the high end",
)
CONTEXT = {
    "web_patch_night": "the monthly patch night of a web stack: load balancers, web and application servers and "
    "their supporting services get patches, upgrades and reboots",
    "db_migration": "a database migration weekend: databases are migrated and the services that use them are "
    "upgraded afterwards",
    "rack_move": "a data-centre rack move: servers are shut down, moved, recabled and restarted",
    "k8s_upgrade": "a Kubernetes cluster upgrade: node pools are drained and upgraded one by one, with the platform "
    "services that run on them",
    "bank_freeze": "maintenance on a bank's core systems around a change freeze (the nightly batch run)",
}
ROBUST_KINDS = frozenset({"overrun_buffer"})


def _hours(n: int) -> str:
    return plural(n, "hour")


@TEXT.rule("windows")
def _windows(d: MaintData, p: NoParams) -> str:
    return (
        "Maintenance windows: each task runs entirely inside one of its service's maintenance windows (a task "
        "may start at the window's first hour and must end by the window's end hour)."
    )


@TEXT.rule("engineer_capacity")
def _engineers(d: MaintData, p: NoParams) -> str:
    return (
        f"Engineers on call: a running task needs its stated number of engineers in every hour it runs; in no hour "
        f"do the running tasks need more than the {d.engineers} engineers on call."
    )


@TEXT.rule("cluster_exclusive")
def _clusters(d: MaintData, p: NoParams) -> str:
    return (
        "Clusters: two tasks on services of the same cluster (see the service list) never run in the same hour, "
        "so the cluster keeps serving while one of its services is down."
    )


@TEXT.rule("precedence")
def _precedence(d: MaintData, p: mc.Precedence) -> str:
    pairs = [f"{b} starts no earlier than the hour {a} ends" for a, b in p.pairs]
    return f"Sequence: {and_list(pairs)}."


@TEXT.rule("deadline")
def _deadline(d: MaintData, p: mc.Deadline) -> str:
    which = f"{and_list(p.tasks)} must each end" if len(p.tasks) > 1 else f"{p.tasks[0]} must end"
    return f"Security deadline: {which} by hour {p.by}."


@TEXT.rule("change_freeze")
def _freeze(d: MaintData, p: mc.Freeze) -> str:
    return (
        f"Change freeze from hour {p.start} to hour {p.end}: no task runs during it (a task may end at hour "
        f"{p.start} or start at hour {p.end})."
    )


@TEXT.rule("not_before")
def _not_before(d: MaintData, p: mc.NotBefore) -> str:
    return f"The vendor's files for {p.task} arrive late: {p.task} starts at hour {p.at} or later."


@TEXT.rule("rollback_slot")
def _rollback(d: MaintData, p: mc.Rollback) -> str:
    which = and_list(p.tasks)
    return (
        f"Rollback readiness: {which} {'are risky changes' if len(p.tasks) > 1 else 'is a risky change'}; after "
        f"each of them, {_hours(p.hours)} are kept for a possible rollback. From the task's start until "
        f"{_hours(p.hours)} after its end, no other task on the same service runs, and those rollback hours end "
        f"by hour {d.horizon}."
    )


@TEXT.rule("not_together")
def _not_together(d: MaintData, p: mc.NotTogether) -> str:
    pairs = "; ".join(f"{a} with {b}" for a, b in p.pairs)
    return f"Separate changes: in each of these pairs the two tasks never run in the same hour: {pairs}."


@TEXT.rule("max_parallel")
def _max_parallel(d: MaintData, p: mc.MaxParallel) -> str:
    return f"Change board limit: at most {plural(p.max, 'task')} run in any hour."


@TEXT.rule("specialists")
def _specialists(d: MaintData, p: mc.Specialists) -> str:
    return (
        f"Specialists: each task marked as needing {p.skill} needs one {p.skill} specialist while it runs, and "
        f"{plural(p.max, 'specialist is', 'specialists are')} on call, so at most {plural(p.max, 'such task')} "
        "run in any hour."
    )


@TEXT.rule("service_uptime")
def _uptime(d: MaintData, p: mc.Uptime) -> str:
    return (
        f"Business hours: {p.service} must stay up from hour {p.start} to hour {p.end}: no task on {p.service} or on "
        "any service it depends on (directly or indirectly) runs "
        + (f"in hour {p.start}." if p.end - p.start == 1 else f"in any of the hours {p.start} to {p.end - 1}.")
    )


@TEXT.rule("downtime_budget")
def _budget(d: MaintData, p: mc.DowntimeBudget) -> str:
    return (
        f"Downtime budget: {p.service} may be down for at most {_hours(p.hours)} in total, counting every hour in "
        "which a task on it or on any service it depends on (directly or indirectly) runs (each hour counts once)."
    )


@TEXT.rule("busy_run")
def _busy_run(d: MaintData, p: mc.BusyRun) -> str:
    return (
        f"Fatigue: the on-call team works at most {_hours(p.hours)} in a row: among any {p.hours + 1} consecutive "
        "hours there is at least one hour in which no task runs."
    )


@TEXT.rule("overrun_buffer")
def _overrun(d: MaintData, p: mc.OverrunBuffer) -> str:
    clusters = (
        ", and two tasks of one cluster still never run in the same hour (the next task in a cluster starts at "
        f"least {_hours(p.hours)} after the previous one ends)"
        if p.clusters
        else ""
    )
    return (
        f"Robustness: leave room for every task overrunning by {_hours(p.hours)}: with each task counted "
        f"{_hours(p.hours)} longer, it still ends inside its maintenance window (at least {_hours(p.hours)} before "
        f"the window closes){clusters}."
    )


@TEXT.objective("downtime")
def _downtime(d: MaintData, p: NoParams) -> str:
    return (
        "the user-facing downtime in user-hours: each service's users × the hours it is down (an hour in which a "
        "task on it or on any service it depends on, directly or indirectly, runs; each hour counts once); summed "
        "over services"
    )


@TEXT.objective("finish")
def _finish(d: MaintData, p: NoParams) -> str:
    return "the finish hour: the hour the last task ends"


@TEXT.objective("exposure")
def _exposure(d: MaintData, p: NoParams) -> str:
    return "the exposure: each task's end hour × its risk points; summed over tasks"


@TEXT.objective("changes")
def _changes(d: MaintData, p: mc.CurrentStarts) -> str:
    return "the number of tasks whose start hour differs from the current plan (each moved task counts 1)"


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.tier == "hard" and r.kind not in ROBUST_KINDS]
    return f"the disruption in {and_list(ids)}, which it breaks" if ids else "the disruption among the rules"


def _task_hours(d: MaintData, t: mc.MTask) -> str:
    return ranged(d, "duration", t.id, t.duration)


def _task_staff(d: MaintData, t: mc.MTask) -> str:
    return ranged(d, "staff", t.id, t.staff)


@TEXT.body
def _body(d: MaintData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    kinds = {r.kind for r in rules}
    out = [
        f"You are planning {CONTEXT.get(subtask, 'IT maintenance')}. Give every task a start hour (a whole number; "
        f"hour 0 is the first hour of the maintenance period). A task of d hours started at hour s runs from s to "
        f"s + d (in hours s, s+1, …, s+d-1) and takes its service down for that time. Every task must end by hour "
        f"{d.horizon} (the end of the horizon). {d.engineers} engineers are on call in every hour.",
        "",
        "**Services** (users affected per hour down; a service is also down whenever a service it depends on is down):",
    ]
    for sv in d.services:
        facts = [f"{sv.users} users"]
        if sv.depends_on:
            facts.append(f"depends on {and_list(list(sv.depends_on))}")
        if sv.cluster and "cluster_exclusive" in kinds:
            facts.append(f"in {sv.cluster}")
        wins = " and ".join(f"from hour {w.start} to hour {w.end}" for w in sv.windows)
        facts.append(f"maintenance window{'s' if len(sv.windows) > 1 else ''} {wins}")
        out.append(f"- {sv.id} {sv.name}: " + "; ".join(facts))
    out += ["", "**Tasks** (`id`: what, on which service; how many hours it runs; engineers it needs while it runs):"]
    for t in d.tasks:
        out.append(
            f"- {t.id}: {t.name} ({t.service}); hours: {_task_hours(d, t)}; engineers needed: {_task_staff(d, t)}; "
            f"risk points: {t.risk}" + (f"; needs a {t.skill} specialist" if t.skill and "specialists" in kinds else "")
        )
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; move as few tasks as you can):"]
        out.append("- " + "; ".join(f"{tid} at {s}" for tid, s in mc.current_plan(changes).items()))
    return out


@TEXT.verification
def _verification(d: MaintData) -> str:
    return (
        "under `verification`, report from your plan `task_end` (for every task, the hour it ends) and "
        "`service_down` (for every service, the number of hours it is down, counting its providers' tasks)."
    )
