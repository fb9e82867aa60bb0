"""Prompt text of Resource Scheduling (a job shop): one sentence per rule kind and objective
kind, every time in whole minutes from minute 0, and the body of the prompt (machines,
jobs with their operations in machine order, tools and changeovers; the closing sections
are the kit's)."""

from __future__ import annotations

from pbsolve.checkers.project import job_shop as js
from pbsolve.checkers.project.job_shop import ShopData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, plural
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=js.TASK_ID,
    data_type=ShopData,
    rule_params=js.RULE_PARAMS,
    term_params=js.TERM_PARAMS,
    worst_case="the data's least favourable values are operation minutes and release minutes at the high end",
)
CONTEXT = {
    "machine_shop": "a machine shop: parts (jobs) go through machining operations, each on one machine",
    "print_shop": "a print shop: print orders (jobs) go through presses and finishing machines; changing between "
    "ink families on a machine needs a changeover",
    "lab_instruments": "a laboratory: sample batches (jobs) go through instruments, some steps holding a shared "
    "tool, some followed by incubation",
    "bakery_ovens": "a bakery: batches of dough (jobs) go through mixers, proofers and ovens; dough must not wait "
    "too long between steps, and some machines must rest after a long step",
    "repair_workshop": "a repair workshop: vehicles (jobs) arrive at their release minutes and go through the "
    "workshop's bays, each due back by a stated minute",
}
ROBUST_KINDS = frozenset({"overrun_buffer"})


def _mins(n: int) -> str:
    return plural(n, "minute")


@TEXT.rule("machine_order")
def _order(d: ShopData, p: NoParams) -> str:
    return (
        "Machine order: each job's operations run in the listed order; an operation starts no earlier than the "
        "minute the job's previous operation ends."
    )


@TEXT.rule("machine_exclusive")
def _exclusive(d: ShopData, p: NoParams) -> str:
    return "Each machine runs at most one operation at a time (two operations on one machine never overlap)."


@TEXT.rule("release")
def _release(d: ShopData, p: NoParams) -> str:
    return "No operation of a job starts before the job's release minute."


@TEXT.rule("changeover")
def _changeover(d: ShopData, p: NoParams) -> str:
    return (
        "Changeovers: two operations on the same machine never overlap, and when their jobs belong to different "
        "families (see the changeover table), the later one starts at least the changeover minutes after the "
        "earlier one ends."
    )


@TEXT.rule("tool_limit")
def _tools(d: ShopData, p: NoParams) -> str:
    return (
        "Shared tools: an operation that needs a tool holds one unit of it from its start to its end, on whichever "
        "machine it runs; at no minute are more units of a tool held than exist (see the tool table)."
    )


@TEXT.rule("deadline")
def _deadline(d: ShopData, p: js.Deadline) -> str:
    which = f"{and_list(p.jobs)} must each be" if len(p.jobs) > 1 else f"{p.jobs[0]} must be"
    return f"{which} finished (every operation ended) by minute {p.by} (a hard deadline)."


@TEXT.rule("machine_downtime")
def _downtime(d: ShopData, p: js.Downtime) -> str:
    return (
        f"{p.machine} is down for maintenance from minute {p.start} to minute {p.end}: no operation on it may run "
        f"during that time (an operation may end at minute {p.start} or start at minute {p.end})."
    )


@TEXT.rule("not_before")
def _not_before(d: ShopData, p: js.NotBefore) -> str:
    return f"The material for {p.op} arrives late: {p.op} starts at minute {p.at} or later."


@TEXT.rule("min_lag")
def _min_lag(d: ShopData, p: js.MinLag) -> str:
    return (
        f"Time lags: after each of {and_list(p.ops)} ends, the next operation of the same job starts at least "
        f"{_mins(p.minutes)} later."
    )


@TEXT.rule("max_wait")
def _max_wait(d: ShopData, p: js.MaxWait) -> str:
    return (
        f"Maximum wait: in {and_list(p.jobs)}, every operation after the first starts at most "
        f"{_mins(p.minutes)} after the job's previous operation ends."
    )


@TEXT.rule("job_after")
def _job_after(d: ShopData, p: js.JobAfter) -> str:
    pairs = [f"{b} starts only after {a} is finished" for a, b in p.pairs]
    return (
        f"Dependencies: {and_list(pairs)} (no operation of the later job starts before the last operation of the "
        "earlier job ends)."
    )


@TEXT.rule("machine_buffer")
def _buffer(d: ShopData, p: js.MachineBuffer) -> str:
    return (
        f"Cleaning buffer: any two operations on {p.machine} are at least {_mins(p.minutes)} apart (the later one "
        "starts at least that long after the earlier one ends)."
    )


@TEXT.rule("operator_limit")
def _operators(d: ShopData, p: js.OperatorLimit) -> str:
    return (
        f"Operators: each running operation needs one operator and there are {p.max}, so at most "
        f"{plural(p.max, 'operation')} run at any minute, over all machines."
    )


@TEXT.rule("wip_limit")
def _wip(d: ShopData, p: js.WipLimit) -> str:
    return (
        f"Work in progress: a job is in progress from the start of its first operation until the end of its last; "
        f"at most {plural(p.max, 'job')} are in progress at any minute (the buffer storage holds no more)."
    )


@TEXT.rule("cooldown")
def _cooldown(d: ShopData, p: js.Cooldown) -> str:
    return (
        f"Cool-down: operations on {p.machine} never overlap, and after an operation on it longer than "
        f"{_mins(p.longer_than)} ends, the next operation on {p.machine} starts at least {_mins(p.minutes)} later."
    )


@TEXT.rule("tool_wear")
def _tool_wear(d: ShopData, p: js.ToolWear) -> str:
    return (
        f"Tool wear: the worn cutting tool of {p.machine} is replaced at minute {p.until}; before minute {p.until}, "
        f"{p.machine} runs operations for at most {_mins(p.minutes)} in total (an operation running across minute "
        f"{p.until} counts only its minutes before it)."
    )


@TEXT.rule("overrun_buffer")
def _overrun(d: ShopData, p: js.OverrunBuffer) -> str:
    return (
        f"Robustness: leave room for any single operation overrunning by up to {_mins(p.minutes)}: after every "
        f"operation, the next operation of its job and every later operation on its machine start at least "
        f"{_mins(p.minutes)} after it ends."
    )


@TEXT.objective("makespan")
def _makespan(d: ShopData, p: NoParams) -> str:
    return "the makespan: the minute the last operation of all ends"


@TEXT.objective("weighted_tardiness")
def _tardiness(d: ShopData, p: NoParams) -> str:
    return (
        "the weighted tardiness: a job finished (its last operation ended) k minutes after its due minute counts "
        "its weight × k (0 when finished by its due minute); summed over jobs"
    )


@TEXT.objective("start_score")
def _start_score(d: ShopData, p: NoParams) -> str:
    return "the start score: each operation's start minute × its job's priority points; summed over operations"


@TEXT.objective("changes")
def _changes(d: ShopData, p: js.CurrentStarts) -> str:
    return "the number of operations whose start minute differs from the current plan (each moved operation counts 1)"


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.tier == "hard" and r.kind not in ROBUST_KINDS]
    return f"the disruption in {and_list(ids)}, which it breaks" if ids else "the disruption among the rules"


def _minutes(d: ShopData, op: js.Op) -> str:
    for u in d.uncertain:
        if u.kind == "duration" and u.target == op.id:
            return f"{u.low}–{u.high} min (uncertain input {u.id})"
    return f"{op.duration} min"


def _release_text(d: ShopData, j: js.Job) -> str:
    for u in d.uncertain:
        if u.kind == "release" and u.target == j.id:
            return f"{u.low}–{u.high} (uncertain input {u.id})"
    return str(j.release)


@TEXT.body
def _body(d: ShopData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    kinds = {r.kind for r in rules}
    tardy = any(t.kind == "weighted_tardiness" for t in objective)
    scored = any(t.kind == "start_score" for t in objective)
    out = [
        f"You are scheduling {CONTEXT.get(subtask, 'a job shop')}. Give every operation a start minute (a whole "
        f"number, minute 0 is the start of the shift). An operation of d minutes started at minute s runs from s "
        f"to s + d and occupies its machine for that time. Every operation must end by minute {d.horizon} (the end "
        "of the horizon).",
        "",
        "**Machines:** " + "; ".join(f"{m.id} ({m.name})" for m in d.machines) + ".",
    ]
    if d.tools:
        out.append("**Tools:** " + "; ".join(f"{t.id} ({t.name}): {plural(t.count, 'unit')}" for t in d.tools) + ".")
    if d.changeovers:
        out.append(
            "**Changeovers** (minutes, either order; 0 between jobs of one family): "
            + "; ".join(f"{c.a} ↔ {c.b}: {c.minutes}" for c in d.changeovers)
            + "."
        )
    out += ["", "**Jobs** (operations in machine order, each `id` on machine for minutes):"]
    for j in d.jobs:
        facts = [f"priority points {j.priority}"] if scored else []
        if j.family:
            facts.insert(0, f"family {j.family}")
        if "release" in kinds:
            facts.append(f"released at minute {_release_text(d, j)}")
        if tardy:
            facts.append(f"due at minute {j.due}, tardiness weight {j.weight}")
        steps = [
            f"{o.id} on {o.machine} for {_minutes(d, o)}" + (f" holding {o.tool}" if o.tool and d.tools else "")
            for o in j.ops
        ]
        about = f" ({'; '.join(facts)})" if facts else ""
        out.append(f"- {j.id} {j.name}{about}: " + " → ".join(steps))
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; move as few operations as you can):"]
        out.append("- " + "; ".join(f"{op} at {s}" for op, s in js.current_plan(changes).items()))
    return out


@TEXT.verification
def _verification(d: ShopData) -> str:
    return (
        "under `verification`, report from your plan `job_end` (for every job, the minute its last operation ends) "
        "and `machine_last` (for every machine, the minute its last operation ends)."
    )
