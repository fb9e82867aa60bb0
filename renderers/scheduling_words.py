"""Words shared by the timetable sentence modules: the task vocabulary, a few English
helpers and the registry that add-on rule modules put their sentences in. Kept apart so
the sentence modules and the prompt module import it and never each other."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pbsolve.checkers.scheduling.instance_data import TimetableData


@dataclass(frozen=True)
class Vocab:
    event: str
    events: str
    person: str  # what a row of the people table is
    intro: str


def room_label(room: str) -> str:
    """'Room Cedar', but 'Writing room' and 'Weights area' as they are: a name of several
    words already says what the place is."""
    return room if " " in room else f"Room {room}"


def unit(d: TimetableData) -> str:
    return "hour" if d.time_unit == "hour" else "period"


def units(d: TimetableData, n: int) -> str:
    """'1 hour', '3 periods'."""
    return f"{n} {unit(d)}" + ("" if n == 1 else "s")


Sentence = Callable[[TimetableData, Any, Vocab], str]  # (data, the rule's Params model, words) -> text
SENTENCES: dict[str, Sentence] = {}


def sentence(kind: str) -> Callable[[Sentence], Sentence]:
    """Register the sentence of a rule kind (used by add-on rule modules)."""

    def register(fn: Sentence) -> Sentence:
        SENTENCES[kind] = fn
        return fn

    return register
