"""Sentences and words of content scheduling: the embargo rule, the task's vocabulary,
its subtask context and its event lines."""

from __future__ import annotations

from pbsolve.checkers.scheduling import content as ct
from pbsolve.checkers.scheduling.instance_data import Event, TimetableData
from pbsolve.renderers.scheduling_words import Vocab, sentence

CONTENT_VOCAB = Vocab(
    "task",
    "tasks",
    "staff member",
    "You are planning a publication calendar: {n} production and publishing tasks. Each content piece goes "
    "through numbered steps (for example draft, review, publish) done in their listed order. The rooms listed "
    "below are the team's workstations and publishing channels: each holds one task at a time, and a task needs "
    "a room with everything it needs (a publication needs its channel, so a channel carries one publication per "
    "period). Each task is done by the staff member named for it, who does one task at a time.",
)

SUBTASK_CONTEXT = {
    "editorial_calendar": "Articles are drafted by writers, reviewed by the editor, then published.",
    "video_pipeline": "Videos are scripted, shot in the studio, edited and then published on the video channel.",
    "product_launch": "Launch pieces are under embargo until the launch and must be out by a deadline.",
    "channel_slots": "Each channel publishes only in its stated slots.",
    "freelance_design": (
        "A freelance designer, available only at certain times, makes the graphics some pieces need before they go out."
    ),
}


@sentence("embargo")
def _embargo(d: TimetableData, p: ct.Embargo, v: Vocab) -> str:
    many = len(p.events) > 1
    ids = ", ".join(p.events[:-1]) + f" and {p.events[-1]}" if many else p.events[0]
    return (
        f"{ids} {'are' if many else 'is'} under embargo until {p.from_}: "
        f"{'none of them may' if many else 'it may not'} start before {p.from_} "
        f"({'each starts' if many else 'it starts'} at {p.from_} or later)."
    )


def event_details(e: Event, duration: str) -> list[str]:
    """What a content task's line shows after its id, name and staff member: its duration,
    what it needs and its piece's priority (the objective's weights)."""
    parts = [duration]
    if e.needs:
        parts.append("needs " + ", ".join(e.needs))
    parts.append(f"piece priority {e.priority}")
    return parts
