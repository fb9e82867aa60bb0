"""The embargo rule of content scheduling: CP-SAT encoding and witness-based builder."""

from __future__ import annotations

import random

from ortools.sat.python import cp_model

from pbsolve.checkers.scheduling import content as ct
from pbsolve.checkers.scheduling.instance_data import Event, TimetableData
from pbsolve.models.scheduling.common import RULE_BUILDERS, Witness
from pbsolve.models.scheduling.places import none_of
from pbsolve.models.scheduling.timetable_model import TimetableModel, encoder


@encoder("embargo")
def _embargo(tm: TimetableModel, params: ct.Embargo, lit: cp_model.IntVar) -> None:
    """No held-back event starts before the embargo lifts: one enforced bool_and of the
    negated cells of every earlier start (the same plans as a row ``at(e, s) == 0`` per
    start, in one constraint)."""
    lifted = tm.data.slot_index[params.from_]
    index = tm.cell_indices()
    none_of(tm, [v for eid in params.events for s in tm.starts[eid] if s < lifted for v in index[eid, s]], lit)


def _earliest(data: TimetableData, e: Event) -> int:
    """The first slot at which ``e`` could start with the earlier members of its series
    done back to back before it."""
    before = 0
    if e.series is not None:
        members = data.series_members()[e.series]
        before = sum(m.duration for m in members[: members.index(e)])
    return min((s for s in data.starts(e) if s >= before), default=len(data.slots))


def embargo_candidates(data: TimetableData) -> list[Event]:
    """The events an embargo may hold back: the last step of each series (the publication),
    or every event when there are no series."""
    series = data.series_members()
    return [m[-1] for m in series.values()] if series else list(data.events)


def build_embargo(data: TimetableData, witness: Witness, rng: random.Random) -> ct.Embargo | None:
    """One to three publications held back to a moment no later than the earliest of their
    witness starts (so the witness keeps it) and later than the first moment one of them
    could start (else the embargo forbids nothing)."""
    pool = embargo_candidates(data)
    chosen = sorted(rng.sample(pool, min(len(pool), rng.randint(1, 3))), key=data.events.index)
    latest = min(witness[e.id][0] for e in chosen)
    earliest = min(_earliest(data, e) for e in chosen)
    if latest <= earliest:
        return None
    lifted = rng.randint(earliest + 1, latest)
    return ct.Embargo.model_validate({"events": [e.id for e in chosen], "from": data.slots[lifted].id})


RULE_BUILDERS.add("embargo", build_embargo)
