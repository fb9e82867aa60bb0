"""What the timetabling parameters name: the ``Names`` of their fields, and two helpers of
the kinds whose further conditions are checked in a ``data_problems`` override.

A rule's parameters name ids of the instance data as the data spells them
(:meth:`pbsolve.checkers.scheduling.instance_data.TimetableData.names` answers each
``what``). A hand-written instance naming what its data lacks is refused when it is
validated as ground truth (:meth:`pbsolve.params.Params.data_problems`), instead of
crashing a check or holding vacuously. Free labels (a subject, a muscle group, a body
part) stay plain strings: the data has no set of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

from pbsolve.params import Names, Params

EventName = Annotated[str, Names("event")]
SlotName = Annotated[str, Names("slot")]
RoomName = Annotated[str, Names("room")]
PlaceName = Annotated[str, Names("place")]  # a room of a personal agenda or an outing
PersonName = Annotated[str, Names("person")]
SegmentName = Annotated[str, Names("segment")]  # a person of an email campaign
DayName = Annotated[str, Names("day")]
FeatureName = Annotated[str, Names("feature")]


def nested_problems(found: list[str], items: Iterable[Params], data: Any) -> list[str]:
    """``found`` (the problems of the outer parameters) and then the data problems of the
    parameter models nested in a field (a review pair, an exam, a travel leg), which the
    generic walk of :meth:`Params.data_problems` does not enter; each distinct problem once."""
    out = list(dict.fromkeys(found))
    for item in items:
        for problem in item.data_problems(data):
            if problem not in out:
                out.append(problem)
    return out
