"""Built-in responders: the certified ``oracle`` and a greedy ``baseline``.

They let the whole pipeline run offline: the oracle must reach 100% All-pass (a
self-test of certificate and checker together); the baseline is valid but often wrong.
"""

from __future__ import annotations

import json
from typing import Callable

from pbsolve.family import checker
from pbsolve.schema import Instance

Responder = Callable[[Instance], str]


def oracle(instance: Instance) -> str:
    return "Here is the certified plan.\n```json\n" + json.dumps(instance.reference, ensure_ascii=False) + "\n```"


def baseline(instance: Instance) -> str:
    return checker(instance.family).baseline_answer(instance)


RESPONDERS: dict[str, Responder] = {"oracle": oracle, "baseline": baseline}


def get_responder(name: str) -> Responder:
    if name not in RESPONDERS:
        raise KeyError(f"unknown responder {name!r}; built in: {', '.join(RESPONDERS)}")
    return RESPONDERS[name]
