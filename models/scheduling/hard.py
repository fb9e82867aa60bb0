"""Hard-tier mechanisms for timetables: disruptions, backup rooms and uncertain inputs.

Each hook turns a certified draft into the draft of a harder question; the core
certifies the result exactly like any other draft.
"""

from __future__ import annotations

import random
from typing import Any

from ortools.sat.python import cp_model

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.family import Draft
from pbsolve.kit import Uncertain, insert_rule
from pbsolve.models.scheduling.timetable_model import (
    _BOOLEAN,
    TimetableModel,
    at_most_one_rows,
    build,
    encoder,
    forbid,
    post,
)
from pbsolve.params import NoParams, make_rule, make_term
from pbsolve.schema import ObjectiveTerm

# CP-SAT parameters of the feasibility probes below (a trial draft's model, built for the
# probe alone and then dropped), per task type: a probe answers feasible or not, which no
# search setting changes, so these are free to favour speed. Registered by the task
# modules that measured them.
PROBE_PARAMETERS: dict[str, dict[str, Any]] = {}


def _feasible(trial: Draft, limits: SolverLimits) -> bool:
    """Whether the trial draft has a plan (every rule on), with its task's probe parameters."""
    sm = build(trial)
    sm.parameters = {**sm.parameters, **PROBE_PARAMETERS.get(trial.spec.task, {})}
    return is_feasible(sm, limits)


@encoder("person_absent")
def _person_absent(tm: TimetableModel, params: rp.PersonAbsent, lit: cp_model.IntVar) -> None:
    gone = [tm.data.slot_index[sid] for sid in params.slots]
    xs: list[cp_model.IntVar] = []
    for e in tm.events_of(params.person):
        xs += tm.cells_covering(e, gone)
    forbid(tm, xs, lit)


@encoder("room_closed")
def _room_closed(tm: TimetableModel, params: rp.RoomClosed, lit: cp_model.IntVar) -> None:
    gone = [tm.data.slot_index[sid] for sid in params.slots]
    room = [r.id for r in tm.data.rooms].index(params.room)
    xs: list[cp_model.IntVar] = []
    for e in tm.data.events:
        covered = tm.cells_covering(e, gone)  # the cells at those starts, in room order
        xs += covered[room :: len(tm.data.rooms)]
    forbid(tm, xs, lit)


@encoder("room_backup")
def _room_backup(tm: TimetableModel, params: NoParams, lit: cp_model.IntVar) -> None:
    """Backup room per event; any single room failing moves its events to their backups.

    u[e,s,f,r] >= x[e,s,f] + b[e,r] - 1 marks "e starts at s in room f and backs up to r";
    under the failure of f, room r at slot t holds its own events plus those moved in.
    """
    d = tm.data
    for e in d.events:
        for r in d.rooms:
            b = tm.backup[e.id, r.id]
            fits = r.seats >= e.size and set(e.needs) <= set(r.features)
            if not fits:
                post(tm, b == 0, lit)
            primary = sum(tm.x[e.id, s, r.id] for s in tm.starts[e.id])
            post(tm, primary + b <= 1, lit)
    # u >= x[e,s,f] + b[e,r] - 1 on Booleans is the clause (u or not x or not b): written
    # straight into the proto, one clause per marker, without a Python expression each
    proto = tm.m.model_proto
    constraints = proto.constraints
    x = {key: v.index for key, v in tm.x.items()}
    backup = {key: v.index for key, v in tm.backup.items()}
    moved_index: dict[tuple[str, int, str, str], int] = {}
    for e in d.events:
        for s in tm.starts[e.id]:
            for f in d.rooms:
                for r in d.rooms:
                    if r.id == f.id:
                        continue
                    u = cp_model.IntVar(proto).with_name(f"moved[{e.id},{s},{f.id},{r.id}]").with_domain(_BOOLEAN)
                    ui = u.index
                    constraints.add().bool_or.literals.extend((ui, -x[e.id, s, f.id] - 1, -backup[e.id, r.id] - 1))
                    moved_index[e.id, s, f.id, r.id] = ui
    # the (event, start) pairs covering each slot, in event then start order
    covering = [[(e.id, s) for e in d.events for s in tm.covering_starts(e, t)] for t in range(len(d.slots))]
    rows = []
    for f in d.rooms:
        for r in d.rooms:
            if r.id == f.id:
                continue
            for t in range(len(d.slots)):
                here = [x[eid, s, r.id] for eid, s in covering[t]] + [
                    moved_index[eid, s, f.id, r.id] for eid, s in covering[t]
                ]
                if len(here) > 1:
                    rows.append(here)
    at_most_one_rows(tm, rows, lit)  # sum(here) <= 1 for each, as post writes it


def _plan_rows(plan: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {row["event"]: (row["start"], row["room"]) for row in plan["schedule"]}


def make_disruption(
    draft: Draft,
    plan: dict[str, Any],
    rng: random.Random,
    limits: SolverLimits,
    base: tuple[str, ...],
    scenario: bool = False,
) -> Draft | None:
    """A disruption that breaks the given plan, and min-change replanning as the objective.

    A person of one planned event becomes absent for that event's slots, or its room
    closes for them; the new objective counts changed assignments first, then the old
    objective terms break ties. As a ``scenario`` (exception recovery) the rule is
    appended as S1 instead of joining the numbered rules.
    """
    data = TimetableData.model_validate(draft.data)
    rows = _plan_rows(plan)
    events = list(data.events)
    rng.shuffle(events)
    for e in events[:4]:
        start_id, room = rows[e.id]
        s = data.slot_index[start_id]
        slots = [data.slots[t].id for t in range(s, s + e.duration)]
        options = [make_rule("room_closed", "hard", rp.RoomClosed(room=room, slots=slots))]
        options += [make_rule("person_absent", "hard", rp.PersonAbsent(person=p, slots=slots)) for p in e.people]
        rule = rng.choice(options)
        changes = make_term("changes", "changes", rp.CurrentSchedule(existing=rows))
        if scenario:
            rules = [*draft.rules, rule.model_copy(update={"id": "S1"})]
            mechanisms = draft.mechanisms
        else:
            rules = insert_rule(draft.rules, rule, base, rng)
            mechanisms = [*draft.mechanisms, "min_change_replanning"]
        trial = Draft(
            spec=draft.spec, data=draft.data, rules=rules, objective=[changes, *draft.objective], mechanisms=mechanisms
        )
        if _feasible(trial, limits):
            return trial
    return None


def make_robust(draft: Draft, rng: random.Random, limits: SolverLimits, base: tuple[str, ...]) -> Draft | None:
    data = TimetableData.model_validate(draft.data)
    if len(data.rooms) < 2:
        return None
    rule = make_rule("room_backup", "hard", NoParams())
    trial = Draft(
        spec=draft.spec,
        data=draft.data,
        rules=insert_rule(draft.rules, rule, base, rng),
        objective=[*draft.objective, ObjectiveTerm(id="backup_cost", kind="backup_cost")],
        mechanisms=[*draft.mechanisms, "robustness_design"],
    )
    return trial if _feasible(trial, limits) else None


def _with_value(data: TimetableData, u: Uncertain, value: int) -> TimetableData:
    if u.kind == "seats":
        rooms = tuple(r.model_copy(update={"seats": value}) if r.id == u.target else r for r in data.rooms)
        return data.model_copy(update={"rooms": rooms})
    field = "duration" if u.kind == "duration" else "size"
    events = tuple(e.model_copy(update={field: value}) if e.id == u.target else e for e in data.events)
    return data.model_copy(update={"events": events})


def _candidates(data: TimetableData, rng: random.Random) -> list[Uncertain]:
    out: list[Uncertain] = []
    for e in data.events:
        if data.time_unit == "hour" and e.series is None:
            out.append(Uncertain(id="", kind="duration", target=e.id, low=e.duration, high=e.duration + 1))
        if data.time_unit != "hour":
            out.append(Uncertain(id="", kind="size", target=e.id, low=e.size, high=e.size + rng.randint(5, 20)))
    for r in data.rooms:
        if r.seats > 3:
            out.append(
                Uncertain(
                    id="", kind="seats", target=r.id, low=r.seats - rng.randint(1, max(1, r.seats // 3)), high=r.seats
                )
            )
    rng.shuffle(out)
    return out


def worst_case(u: Uncertain) -> int:
    return u.low if u.kind == "seats" else u.high


def best_case(u: Uncertain) -> int:
    return u.high if u.kind == "seats" else u.low


def make_uncertain(draft: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """State 2-3 inputs as ranges; the data keeps their worst case, so a plan valid for
    the data is valid for every value in every range."""
    data = TimetableData.model_validate(draft.data)
    chosen: list[Uncertain] = []
    for u in _candidates(data, rng):
        if len(chosen) == 3:
            break
        trial_data = _with_value(data, u, worst_case(u))
        if u.kind == "duration" and not trial_data.starts(trial_data.event_by_id[u.target]):
            continue
        trial = Draft(
            spec=draft.spec, data=trial_data.model_dump(mode="json"), rules=draft.rules, objective=draft.objective
        )
        if _feasible(trial, limits):
            data = trial_data
            chosen.append(u.model_copy(update={"id": f"U{len(chosen) + 1}"}))
    if len(chosen) < 2:
        return None
    data = data.model_copy(update={"uncertain": tuple(chosen)})
    return Draft(
        spec=draft.spec,
        data=data.model_dump(mode="json"),
        rules=draft.rules,
        objective=draft.objective,
        mechanisms=[*draft.mechanisms, "local_incompleteness"],
    )


def optimistic(draft: Draft, uid: str) -> Draft:
    """The same draft with one uncertain input at its best case."""
    data = TimetableData.model_validate(draft.data)
    u = next(x for x in data.uncertain if x.id == uid)
    better = _with_value(data, u, best_case(u))
    return Draft(spec=draft.spec, data=better.model_dump(mode="json"), rules=draft.rules, objective=draft.objective)


def uncertain_ids(draft: Draft) -> list[str]:
    return [u["id"] for u in draft.data.get("uncertain", [])]


def report(draft: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Verification figures of a plan: busy slots per person, events per room.

    Computed here from the decoded plan, independently of the checker's own count.
    """
    data = TimetableData.model_validate(draft.data)
    busy = {p.id: 0 for p in data.people}
    rooms = {r.id: 0 for r in data.rooms}
    for row in plan["schedule"]:
        e = data.event_by_id[row["event"]]
        rooms[row["room"]] += 1
        for p in e.people:
            busy[p] += e.duration
    return {"busy": busy, "rooms": rooms}
