"""Responders: the certified ``oracle``, a greedy ``baseline``, the empty ``nothing``, and
``openai`` (any OpenAI-compatible endpoint, built from options by a factory).

The built-ins let the whole pipeline run offline: the oracle must reach 100% All-pass (a
self-test of certificate and checker together); the baseline is valid but often wrong;
``nothing`` answers with an empty string and fails every item (the floor, and the
control of the difficulty loop).

A responder is a callable ``Instance -> str``. One that also has ``answer(instance) ->
Answer`` (and optionally ``answer_many``) reports token usage, calls and raw responses;
:func:`answer_one` and :func:`answer_many` give every responder that richer interface.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pbsolve import interrupts
from pbsolve.family import checker
from pbsolve.llm.client import LLMClient, LLMConfig, RequestFailed
from pbsolve.schema import Instance

Responder = Callable[[Instance], str]


@dataclass
class Answer:
    """One response with what it cost."""

    text: str
    usage: dict[str, int] = field(default_factory=dict)  # prompt_tokens, completion_tokens, total_tokens
    calls: int = 1  # requests made (retries included)
    seconds: float = 0.0
    model: str | None = None
    raw: Any = None  # the endpoint's raw response
    error: str | None = None  # why no text was obtained (the text is then "")

    @property
    def tokens(self) -> int:
        return int(self.usage.get("total_tokens", 0))


def oracle(instance: Instance) -> str:
    return "Here is the certified plan.\n```json\n" + json.dumps(instance.reference, ensure_ascii=False) + "\n```"


def baseline(instance: Instance) -> str:
    return checker(instance.family).baseline_answer(instance)


def nothing(instance: Instance) -> str:
    return ""


RESPONDERS: dict[str, Responder] = {"oracle": oracle, "baseline": baseline, "nothing": nothing}


class OpenAIResponder:
    """The ``openai`` responder: sends each instance's prompt (after the optional system
    prompt) and records the text, token usage, requests made and the raw response.

    A request the endpoint rejects on its own (e.g. HTTP 400) gives an empty answer with
    the error recorded; an endpoint that stays down, or a wrong key/model, raises.
    """

    name = "openai"

    def __init__(self, config: LLMConfig, client: LLMClient | None = None) -> None:
        self.config = config
        self.client = client or LLMClient(config)

    def answer(self, instance: Instance) -> Answer:
        t0 = time.perf_counter()
        try:
            c = self.client.ask(instance.prompt)
        except RequestFailed as exc:
            return Answer(
                text="", calls=exc.attempts, seconds=time.perf_counter() - t0, model=self.config.model, error=str(exc)
            )
        return Answer(
            text=c.text, usage=c.usage.as_dict(), calls=c.attempts, seconds=c.seconds, model=c.model, raw=c.raw
        )

    def answer_many(self, instances: Sequence[Instance]) -> Iterator[tuple[int, Answer]]:
        yield from self.client.map(self.answer, instances)

    def __call__(self, instance: Instance) -> str:
        return self.answer(instance).text


def _openai(**options: Any) -> Responder:
    return OpenAIResponder(LLMConfig(**options))


# Responders built from options (endpoint, model, ...): name -> factory(**options).
RESPONDER_FACTORIES: dict[str, Callable[..., Responder]] = {"openai": _openai}


def responder_names() -> list[str]:
    return [*RESPONDERS, *RESPONDER_FACTORIES]


def get_responder(name: str, **options: Any) -> Responder:
    """A registered responder; factory-built ones (``openai``) take their options here."""
    if name in RESPONDERS:
        return RESPONDERS[name]
    if name in RESPONDER_FACTORIES:
        return RESPONDER_FACTORIES[name](**options)
    raise KeyError(f"unknown responder {name!r}; built in: {', '.join(responder_names())}")


def answer_one(responder: Responder, instance: Instance) -> Answer:
    """The responder's answer. A plain responder that raises gives an empty answer with the
    error recorded (one broken instance must not stop a long run; it grades 0)."""
    rich = getattr(responder, "answer", None)
    if callable(rich):
        return rich(instance)
    t0 = time.perf_counter()
    try:
        text = responder(instance)
    except Exception as exc:
        interrupts.reraise_if_stopping(exc)
        return Answer(
            text="", seconds=time.perf_counter() - t0, error=f"responder error: {type(exc).__name__}: {exc}"[:300]
        )
    return Answer(text=text, seconds=time.perf_counter() - t0)


def answer_many(responder: Responder, instances: Sequence[Instance]) -> Iterator[tuple[int, Answer]]:
    """``(index, Answer)`` in index order; concurrent for responders that support it."""
    many = getattr(responder, "answer_many", None)
    if callable(many):
        yield from many(instances)
        return
    for i, inst in enumerate(instances):
        yield i, answer_one(responder, inst)
