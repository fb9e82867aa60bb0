"""Parameters of the campaign-calendar rule kinds (email scheduling), one model each.

Registered into :data:`pbsolve.checkers.scheduling.rule_params.RULE_PARAMS` by one line
there; the CP-SAT encoders (models/scheduling/calendar_rules.py), the checks
(checkers/scheduling/calendar_checks.py) and the sentences
(renderers/scheduling_calendar.py) all read a rule through these models.

Time on a campaign calendar: a slot's ``value`` is its hour of the week in UTC (hours
since Monday 00:00 UTC, so Tue 06:00 is 30); its UTC clock hour is ``value % 24`` and
its day is the slot's ``day``. Segments are the people of the time model.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checkers.scheduling.refs import DayName, EventName, SegmentName
from pbsolve.params import Params, problem


class LocalSendWindow(Params):
    """Every message to ``segment`` is sent at a local clock hour h (UTC hour plus
    ``utc_offset``, modulo 24) with ``earliest`` <= h <= ``latest``."""

    segment: SegmentName
    utc_offset: int = Field(ge=-12, le=14)
    earliest: int = Field(ge=0, le=23)
    latest: int = Field(ge=0, le=23)

    @model_validator(mode="after")
    def _ordered(self) -> LocalSendWindow:
        if self.earliest > self.latest:
            raise ValueError("earliest must not be after latest")
        return self


class BlackoutDays(Params):
    """No message to ``segment`` is sent on any of ``days`` (day names of the calendar)."""

    segment: SegmentName
    days: Annotated[list[DayName], Field(min_length=1)]


class SendSpacing(Params):
    """Any two messages to ``segment`` are sent at least ``hours`` hours apart."""

    segment: SegmentName
    hours: PositiveInt


class MinLag(Params):
    """``after`` is sent on a day at least ``days`` calendar days after the day ``before``
    is sent on."""

    before: EventName
    after: EventName
    days: PositiveInt


class FrequencyCap(Params):
    """In every run of ``days`` consecutive calendar days, ``segment`` receives at most
    ``max`` messages."""

    segment: SegmentName
    max: NonNegativeInt
    days: PositiveInt


CALENDAR_PARAMS: dict[str, type[Params]] = {
    "local_send_window": LocalSendWindow,
    "blackout_days": BlackoutDays,
    "send_spacing": SendSpacing,
    "min_lag": MinLag,
    "frequency_cap": FrequencyCap,
}


# -- objective terms --------------------------------------------------------------------
class OpenLoss(Params):
    """For every message and every segment it goes to: the segment's ``audience``
    (thousands of recipients) x ``penalty[h]``, h the segment's local send hour (UTC hour
    plus its entry in ``offsets``, modulo 24); summed."""

    offsets: dict[SegmentName, int]
    audience: dict[SegmentName, NonNegativeInt]
    penalty: Annotated[list[NonNegativeInt], Field(min_length=24, max_length=24)]

    def data_problems(self, data: Any) -> list[str]:
        # the check (and the model) read both entries of every segment a message goes to
        reached = list(dict.fromkeys(s for e in data.events for s in e.people))
        return (
            super().data_problems(data)
            + problem("offsets give no UTC offset for segment", [s for s in reached if s not in self.offsets])
            + problem("audience gives no size for segment", [s for s in reached if s not in self.audience])
        )


class DeliveryCost(Params):
    """Every message pays its pool's cost per thousand recipients x its thousands of
    recipients (its ``size``)."""


CALENDAR_TERMS: dict[str, type[Params]] = {"open_loss": OpenLoss, "delivery_cost": DeliveryCost}
