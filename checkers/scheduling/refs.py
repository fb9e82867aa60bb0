"""What the timetabling parameters name: the ``Names`` of their fields, in the outer
parameters and in the models nested in them alike (a review pair, an exam, a travel leg:
the generic walk enters them).

A rule's parameters name ids of the instance data as the data spells them
(:meth:`pbsolve.checkers.scheduling.instance_data.TimetableData.names` answers each
``what``). A hand-written instance naming what its data lacks is refused when it is
validated as ground truth (:meth:`pbsolve.params.Params.data_problems`), instead of
crashing a check or holding vacuously. Free labels (a subject, a muscle group, a body
part) stay plain strings: the data has no set of them.
"""

from __future__ import annotations

from typing import Annotated

from pbsolve.params import Names

EventName = Annotated[str, Names("event")]
SlotName = Annotated[str, Names("slot")]
RoomName = Annotated[str, Names("room")]
PlaceName = Annotated[str, Names("place")]  # a room of a personal agenda or an outing
PersonName = Annotated[str, Names("person")]
SegmentName = Annotated[str, Names("segment")]  # a person of an email campaign
DayName = Annotated[str, Names("day")]
FeatureName = Annotated[str, Names("feature")]
