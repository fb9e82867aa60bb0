"""The publication-calendar rule of content scheduling: an embargo.

A piece under embargo must not go out before a stated moment (a product launch, a press
release). Its parameter model is added to the family's RULE_PARAMS on import; the check
reads the plan as every other timetable check does and is written from its sentence
(renderers/scheduling_content.py), without the solver model.
"""

from __future__ import annotations

from pydantic import Field

from pbsolve.checkers.scheduling import rule_params as rp
from pbsolve.checkers.scheduling.checks import OK, Plan, Verdict, check
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.checkers.scheduling.refs import SlotName
from pbsolve.params import Params


class Embargo(Params):
    """No one of ``events`` starts before slot ``from`` (each starts at ``from`` or later)."""

    events: rp.EventIds
    from_: SlotName = Field(alias="from")


CONTENT_PARAMS: dict[str, type[Params]] = {"embargo": Embargo}
rp.RULE_PARAMS.update(CONTENT_PARAMS)  # the one registration line


@check("embargo")
def _embargo(d: TimetableData, plan: Plan, p: Embargo) -> Verdict:
    lifted = d.slot_index[p.from_]
    for eid in p.events:
        start = plan[eid][0]
        if start < lifted:
            return False, f"{eid} starts at {d.slots[start].id}, before the embargo lifts at {p.from_}"
    return OK
