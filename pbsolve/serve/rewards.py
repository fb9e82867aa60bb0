"""Rewards for RL training: pbsolve's grader behind the interfaces trainers call.

* **verl** -- ``compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs)``
  returns a dict: ``score`` is the reward, and ``all_pass``, ``avg_pass``, ``parse_ok``,
  ``items_passed``, ``items_total`` are logged as extra metrics. Every answer, malformed or
  not, gets the same keys with float values (verl stacks them into arrays).
  ``compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs)``
  is the batch form (``reward_model.reward_manager=batch``).
* **TRL** -- ``trl_reward(column="instance")`` returns ``reward(prompts, completions, **kwargs)``
  for ``GRPOTrainer(reward_funcs=...)``: standard (str) and conversational (message list)
  completions; the instance comes from a dataset column.
* **OpenRLHF** -- ``reward_func(queries, prompts, labels, **kwargs)`` for
  ``--remote_rm_url /path/to/pbsolve/rewards.py`` (that file, the public ``pbsolve.rewards``,
  re-exports this module and can be loaded on its own by path), returning
  ``{"rewards", "scores", "extra_logs"}``; ``pbsolve serve`` answers the same contract over HTTP.

The reward mode (``all_pass`` by default, ``avg_pass``, ``feasible``) is a keyword
everywhere; where a trainer passes no keywords (OpenRLHF's file mode) it is read from the
``PBSOLVE_REWARD_MODE`` environment variable. A ground truth or label is the instance as
JSON text (what ``pbsolve export`` writes), a dict, an ``Instance``, or an instance id
looked up in a store (``PBSOLVE_STORE=path`` or ``store=``).

A ground truth that is not an instance raises ``InstanceError``: that is a data problem,
never a reward of 0, so a training run can tell a failure from a wrong answer. In the same
way a grader failure -- a checker that raises or cannot be imported, an unknown family, an
instance that is not a valid ground truth -- raises ``GradingError`` (``InvalidGroundTruth``)
by default. ``on_error="zero"`` (keyword), or ``PBSOLVE_ON_GRADER_ERROR=zero`` where a
trainer passes no keywords, makes it a loud, counted zero instead: reward 0, a warning on
the ``pbsolve.rewards`` logger, and the metric ``grader_error`` = 1.0 (0.0 for every real
grade). A malformed *answer* is never a grader failure: it is reward 0 with ``parse_ok`` 0.

Only the text after the last ``</think>`` is graded, and at most ``pbsolve.parsing.MAX_CHARS``
characters of it (longer answers fail every item), the same limit the server applies by
default. Nothing here uses signals or time-outs, so trainers may call these functions from
worker threads.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pbsolve.grading import (
    ON_ERROR_MODES,
    REWARD_MODES,
    GradingError,
    InvalidGroundTruth,
    OnError,
    error_grade,
    grade,
    validate_instance,
)
from pbsolve.lru import LockedLRU
from pbsolve.parsing import MAX_CHARS, strip_thinking
from pbsolve.schema import Grade, Instance, ItemResult, RewardMode

METRIC_KEYS: tuple[str, ...] = (
    "score", "all_pass", "avg_pass", "parse_ok", "items_passed", "items_total", "grader_error",
)  # fmt: skip
EXTRA_KEYS: tuple[str, ...] = METRIC_KEYS[1:]
MODE_ENV = "PBSOLVE_REWARD_MODE"
ON_ERROR_ENV = "PBSOLVE_ON_GRADER_ERROR"
log = logging.getLogger("pbsolve.rewards")  # the documented logger name, kept from the old layout
STORE_ENV = "PBSOLVE_STORE"
CACHE_SIZE = 512  # parsed instances kept per resolver


class InstanceError(ValueError):
    """A ground truth or label that is not a pbsolve instance, or an unknown instance id."""


class UnknownInstance(InstanceError):
    """An instance id that the store does not hold."""


class DeadlineExceeded(TimeoutError):
    """Raised between two grades when a batch runs past its deadline."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__(f"time limit exceeded after grading {done} of {total} responses")
        self.done = done
        self.total = total


def check_mode(mode: str | None = None) -> RewardMode:
    """The reward mode to use: ``mode``, else ``$PBSOLVE_REWARD_MODE``, else ``all_pass``."""
    chosen = mode if mode is not None else (os.environ.get(MODE_ENV) or "all_pass")
    if chosen not in REWARD_MODES:
        raise ValueError(f"unknown reward mode {chosen!r}; choose one of {', '.join(REWARD_MODES)}")
    return chosen


def check_on_error(on_error: str | None = None) -> OnError:
    """What a grader failure becomes: ``on_error``, else ``$PBSOLVE_ON_GRADER_ERROR``, else
    ``raise``. ``zero`` gives reward 0, a logged warning and ``grader_error`` = 1.0."""
    chosen = on_error if on_error is not None else (os.environ.get(ON_ERROR_ENV) or "raise")
    if chosen not in ON_ERROR_MODES:
        raise ValueError(f"unknown on_error {chosen!r}; choose one of {', '.join(ON_ERROR_MODES)}")
    return chosen


class _ErrorCount:
    """Grader failures turned into zeros in this process (thread-safe), for the warnings."""

    def __init__(self) -> None:
        self.n = 0
        self._lock = threading.Lock()

    def add(self) -> int:
        with self._lock:
            self.n += 1
            return self.n


grader_errors = _ErrorCount()


def _counted_zero(inst: Instance, mode: RewardMode, rid: str | None, exc: GradingError) -> Grade:
    n = grader_errors.add()
    log.warning("pbsolve grader failure counted as reward 0 (%d so far in this process): %s", n, exc)
    return error_grade(inst, mode, rid, exc)


def metrics(g: Grade) -> dict[str, float]:
    """The fixed numeric view of a grade: ``score`` (the reward under the grade's mode),
    ``all_pass``, ``avg_pass``, ``parse_ok`` (1.0 when the answer parsed), ``items_passed``,
    ``items_total``, ``grader_error`` (1.0 when the grader failed and the grade is a
    stand-in zero). The same keys for every answer, all floats."""
    passed = sum(1 for it in g.items if it.passed)
    return {
        "score": float(g.reward),
        "all_pass": float(g.all_pass),
        "avg_pass": float(g.avg_pass),
        "parse_ok": 1.0 if g.parse_error is None else 0.0,
        "items_passed": float(passed),
        "items_total": float(len(g.items)),
        "grader_error": 0.0 if g.grader_error is None else 1.0,
    }


def grade_view(g: Grade, details: bool = False) -> dict[str, Any]:
    """What the reward server answers for one grade: the reward under the grade's mode, the
    metrics, the parse error, and with ``details`` every item's verdict."""
    m = metrics(g)
    out: dict[str, Any] = {
        "id": g.id,
        "response_id": g.response_id,
        "reward": m["score"],
        "reward_mode": g.reward_mode,
        "all_pass": m["all_pass"],
        "avg_pass": m["avg_pass"],
        "parse_ok": m["parse_ok"],
        "items_passed": m["items_passed"],
        "items_total": m["items_total"],
        "parse_error": g.parse_error,
    }
    if details:
        out["items"] = [{"id": it.id, "passed": it.passed, "reason": it.reason} for it in g.items]
    return out


# -- finding the instance behind a ground truth -----------------------------------------------
class InstanceResolver:
    """Turns ground truths into parsed ``Instance`` objects, parsing each distinct one once.

    Parsed instances are kept in a small thread-safe LRU, so the per-instance grading memo
    (``Instance.memo``) survives from one rollout of a prompt to the next. Instance ids are
    looked up in ``store`` (an ``InstanceStore`` or a path to one).
    """

    def __init__(self, store: Any = None, cache_size: int = CACHE_SIZE) -> None:
        self._store = store
        self._store_lock = threading.Lock()
        self._cache: LockedLRU[str, Instance] = LockedLRU(cache_size)

    @property
    def store(self) -> Any:
        if isinstance(self._store, (str, Path)):
            with self._store_lock:
                if isinstance(self._store, (str, Path)):
                    from pbsolve.serve.store import InstanceStore

                    self._store = InstanceStore(self._store)
        return self._store

    def _from_json(self, text: str) -> Instance:
        inst = self._cache.get(text)
        if inst is None:
            try:
                inst = Instance.model_validate_json(text)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first.get("loc", ())) or "text"
                raise InstanceError(
                    f"not a pbsolve instance: {where}: {first.get('msg', 'invalid')} ({exc.error_count()} error(s))"
                ) from None
            except RecursionError:
                raise InstanceError("not a pbsolve instance: nested too deeply") from None
            self._cache.put(text, inst)
        return inst

    def _from_id(self, instance_id: str) -> Instance:
        store = self.store
        if store is None:
            raise InstanceError(
                f"{instance_id[:80]!r} is not instance JSON and no instance store is configured to look it up "
                f"as an id (pass store=..., or set {STORE_ENV})"
            )
        inst = store.get(instance_id)
        if inst is None:
            raise UnknownInstance(f"unknown instance id {instance_id[:200]!r}")
        return inst

    def resolve(self, value: Any) -> Instance:
        if isinstance(value, Instance):
            return value
        if isinstance(value, (bytes, bytearray, memoryview)):
            try:
                value = bytes(value).decode("utf-8")
            except UnicodeDecodeError:
                raise InstanceError("ground truth is bytes but not UTF-8 text") from None
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("{"):
                return self._from_json(text)
            if not text:
                raise InstanceError("ground truth is empty")
            return self._from_id(text)
        if isinstance(value, Mapping):
            try:
                key = json.dumps(value, ensure_ascii=False, separators=(",", ":"))  # key order kept: reasons quote it
            except (TypeError, ValueError) as exc:
                raise InstanceError(f"ground truth dict is not JSON data: {exc}") from None
            return self._from_json(key)
        raise InstanceError(
            f"ground truth is {type(value).__name__}; expected the instance as JSON text, a dict or an instance id"
        )

    def resolve_many(self, values: Sequence[Any]) -> list[Instance]:
        """One instance per value; equal values share one parse (a prompt's rollouts)."""
        seen: dict[Any, Instance] = {}
        out = []
        for v in values:
            key = v if isinstance(v, (str, bytes)) else None
            if key is not None and key in seen:
                out.append(seen[key])
                continue
            inst = self.resolve(v)
            if key is not None:
                seen[key] = inst
            out.append(inst)
        return out


_default: InstanceResolver | None = None
_default_lock = threading.Lock()


def default_resolver() -> InstanceResolver:
    """The module's resolver; its store is ``$PBSOLVE_STORE`` if set (opened on first use)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = InstanceResolver(store=os.environ.get(STORE_ENV) or None)
    return _default


_by_store: dict[Any, InstanceResolver] = {}


def _resolver(store: Any) -> InstanceResolver:
    """The default resolver, or one resolver per store (a path or an ``InstanceStore``),
    kept for the life of the process so its cache and connections are reused."""
    if store is None:
        return default_resolver()
    if isinstance(store, InstanceResolver):
        return store
    key = str(Path(store).resolve()) if isinstance(store, (str, Path)) else id(store)
    with _default_lock:
        found = _by_store.get(key)
        if found is None:
            found = _by_store[key] = InstanceResolver(store=store)
        return found


# -- grading many answers ---------------------------------------------------------------------
def too_long_grade(instance: Instance, mode: RewardMode, response_id: str | None, length: int, limit: int) -> Grade:
    """The grade of an answer longer than a server's limit: every item fails, reward 0."""
    why = f"response too long for this grader ({length:,} characters after </think>; limit {limit:,})"
    items = [ItemResult(id=it.id, passed=False, reason=why) for it in instance.checklist]
    return Grade(
        id=instance.id, response_id=response_id, all_pass=0, avg_pass=0.0, reward=0.0,
        reward_mode=mode, items=items, parse_error=why,
    )  # fmt: skip


def grade_pairs(
    pairs: Sequence[tuple[Instance, Any]],
    mode: RewardMode,
    response_ids: Sequence[str | None] | None = None,
    deadline: float | None = None,
    max_response_chars: int | None = None,
    on_error: OnError = "raise",
) -> list[Grade]:
    """Grade (instance, response) pairs in order.

    ``deadline`` (a ``time.monotonic()`` value) is checked before each grade, never with
    signals: past it, ``DeadlineExceeded`` is raised. Responses whose text after the last
    ``</think>`` is longer than ``max_response_chars`` (default ``pbsolve.parsing.MAX_CHARS``)
    fail every item without being parsed. Equal answers to the same instance object are
    graded once (grading is a pure function of instance and text); each copy keeps its own
    ``response_id``. Treat grades as read-only. A grader failure raises ``GradingError``,
    or with ``on_error="zero"`` becomes a logged zero with ``grader_error`` set.
    """
    limit = MAX_CHARS if max_response_chars is None else max_response_chars
    out: list[Grade] = []
    total = len(pairs)
    done: dict[tuple[int, str], Grade] = {}  # equal answers to one instance (converged rollouts) are graded once
    for k, (inst, text) in enumerate(pairs):
        if deadline is not None and time.monotonic() > deadline:
            raise DeadlineExceeded(k, total)
        rid = response_ids[k] if response_ids is not None else None
        key = (id(inst), text) if isinstance(text, str) else None
        if key is not None and key in done:
            out.append(done[key].model_copy(update={"response_id": rid}))
            continue
        try:
            if isinstance(text, str) and len(text) > limit and len(body := strip_thinking(text)) > limit:
                validate_instance(inst)  # a failed grader is never hidden behind a too-long answer
                g = too_long_grade(inst, mode, rid, len(body), limit)
            else:
                g = grade(inst, text, mode, rid)
        except GradingError as exc:
            if on_error == "raise":
                raise
            g = _counted_zero(inst, mode, rid, exc)
        out.append(g)
        if key is not None:
            done[key] = g
    return out


# -- verl ---------------------------------------------------------------------------------------
def compute_score(
    data_source: Any = None,
    solution_str: Any = None,
    ground_truth: Any = None,
    extra_info: Any = None,
    mode: str | None = None,
    store: Any = None,
    on_error: str | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """verl's custom reward function (``custom_reward_function.name=compute_score``).

    ``ground_truth`` is ``reward_model.ground_truth`` of the row: the instance as JSON
    text. Choose the mode with ``custom_reward_function.reward_kwargs.mode=avg_pass``;
    ``reward_kwargs.on_error=zero`` makes grader failures counted zeros instead of errors.
    """
    chosen, errors = check_mode(mode), check_on_error(on_error)
    inst = _resolver(store).resolve(ground_truth)
    return metrics(grade_pairs([(inst, solution_str)], chosen, on_error=errors)[0])


def compute_score_batch(
    data_sources: Sequence[Any] | None = None,
    solution_strs: Sequence[Any] = (),
    ground_truths: Sequence[Any] = (),
    extra_infos: Sequence[Any] | None = None,
    mode: str | None = None,
    store: Any = None,
    on_error: str | None = None,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """verl's batch form (``reward_model.reward_manager=batch``,
    ``custom_reward_function.name=compute_score_batch``): lists in, a list of dicts out."""
    if len(solution_strs) != len(ground_truths):
        raise ValueError(f"{len(solution_strs)} solutions but {len(ground_truths)} ground truths")
    chosen, errors = check_mode(mode), check_on_error(on_error)
    instances = _resolver(store).resolve_many(list(ground_truths))
    return [metrics(g) for g in grade_pairs(list(zip(instances, solution_strs)), chosen, on_error=errors)]


# -- TRL ------------------------------------------------------------------------------------------
def completion_text(completion: Any) -> Any:
    """The answer text of a TRL completion: the string itself (standard format), or the
    content of the last assistant message (conversational format; text parts joined)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return _content_text(completion.get("content"))
    if isinstance(completion, Sequence) and completion:
        messages = [m for m in completion if isinstance(m, Mapping)]
        assistant = [m for m in messages if m.get("role") == "assistant"]
        candidates = assistant or messages
        chosen = candidates[-1] if candidates else None
        return _content_text(chosen.get("content")) if chosen is not None else completion
    return completion  # graded as a parse error ("response is ..., not text")


def _content_text(content: Any) -> Any:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):  # [{"type": "text", "text": ...}, ...]
        parts = [p.get("text", "") for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)]
        return "".join(parts)
    return content


def trl_reward(
    column: str = "instance",
    mode: str | None = None,
    store: Any = None,
    name: str | None = None,
    log_metrics: bool = True,
    on_error: str | None = None,
) -> Callable[..., list[float]]:
    """A reward function for TRL's ``GRPOTrainer(reward_funcs=[...])``.

    TRL calls it as ``reward(prompts=..., completions=..., completion_ids=..., **columns)``
    with every dataset column except ``prompt`` passed as a list; ``column`` names the one
    holding the instance (JSON text as written by ``pbsolve export``, or an instance id
    when ``store`` is given). If TRL passes ``log_metric``, the batch means of
    ``all_pass``, ``avg_pass``, ``parse_ok`` and ``grader_error`` are logged as
    ``pbsolve/<key>``. Grader failures raise unless ``on_error="zero"``.
    """
    chosen, errors = check_mode(mode), check_on_error(on_error)
    resolver = _resolver(store)

    def reward(prompts: Any = None, completions: Sequence[Any] = (), **kwargs: Any) -> list[float]:
        if column not in kwargs:
            got = sorted(k for k, v in kwargs.items() if not callable(v))
            raise KeyError(
                f"pbsolve reward: the trainer passed no dataset column {column!r} (columns received: "
                f"{', '.join(got) or 'none'}); export the dataset with `pbsolve export` or pass column=..."
            )
        values = list(kwargs[column])
        if len(values) != len(completions):
            raise ValueError(f"{len(completions)} completions but {len(values)} values in column {column!r}")
        instances = resolver.resolve_many(values)
        pairs = [(inst, completion_text(c)) for inst, c in zip(instances, completions)]
        grades = grade_pairs(pairs, chosen, on_error=errors)
        log_metric = kwargs.get("log_metric")
        if log_metrics and callable(log_metric) and grades:
            rows = [metrics(g) for g in grades]
            for key in ("all_pass", "avg_pass", "parse_ok", "grader_error"):
                log_metric(f"pbsolve/{key}", sum(r[key] for r in rows) / len(rows))
        return [g.reward for g in grades]

    reward.__name__ = name or f"pbsolve_{chosen}"
    reward.__qualname__ = reward.__name__
    return reward


# -- OpenRLHF -------------------------------------------------------------------------------------
PROMPT_TAIL = 200  # characters of an instance's prompt used to find where the response starts


def after_prompt(query: str, prompt: Any) -> str | None:
    """The text after the first occurrence of ``prompt`` in ``query``; None when no prompt
    is given or the query does not contain it."""
    if isinstance(prompt, str) and prompt:
        if query.startswith(prompt):  # the usual query; a comparison, not a search (7 -> 1 ms per 1,024)
            return query[len(prompt) :]
        at = query.find(prompt)
        if at >= 0:
            return query[at + len(prompt) :]
    return None


def response_from_query(query: Any, prompt: Any, instance: Instance | None = None) -> Any:
    """The response part of an OpenRLHF query (prompt + response, chat template included,
    possibly left-padded): the text after the prompt if the prompt occurs in it, else after
    the end of the instance's own prompt text, else the whole query."""
    if not isinstance(query, str):
        return query
    cut = after_prompt(query, prompt)
    if cut is not None:
        return cut
    if instance is not None and instance.prompt:
        tail = instance.prompt[-PROMPT_TAIL:]
        at = query.find(tail)
        if at >= 0:
            return query[at + len(tail) :]
    return query


def openrlhf_payload(
    queries: Sequence[Any],
    prompts: Sequence[Any] | None,
    instances: Sequence[Instance],
    mode: RewardMode,
    deadline: float | None = None,
    max_response_chars: int | None = None,
    on_error: OnError = "raise",
) -> dict[str, Any]:
    """``{"rewards": [...], "scores": [...], "extra_logs": {key: [...]}}`` as plain lists,
    for queries whose instances are already resolved."""
    texts = [
        response_from_query(q, prompts[i] if prompts is not None else None, instances[i]) for i, q in enumerate(queries)
    ]
    grades = grade_pairs(
        list(zip(instances, texts)), mode, deadline=deadline, max_response_chars=max_response_chars, on_error=on_error
    )
    rows = [metrics(g) for g in grades]
    rewards = [r["score"] for r in rows]
    return {"rewards": rewards, "scores": list(rewards), "extra_logs": {k: [r[k] for r in rows] for k in EXTRA_KEYS}}


def openrlhf_views(views: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """:func:`openrlhf_payload`'s answer from grades' public views (:func:`grade_view`): a
    server grades with failures raised, so no view stands for a grader error."""
    rewards = [float(v["reward"]) for v in views]
    logs = {k: [0.0 if k == "grader_error" else float(v[k]) for v in views] for k in EXTRA_KEYS}
    return {"rewards": rewards, "scores": list(rewards), "extra_logs": logs}


def check_openrlhf_lengths(queries: Sequence[Any], prompts: Sequence[Any] | None, labels: Sequence[Any] | None) -> None:
    n = len(queries)
    if labels is None or len(labels) != n:
        got = "no" if labels is None else str(len(labels))
        raise ValueError(f"{n} queries but {got} labels; every query needs its instance (OpenRLHF --label_key)")
    if prompts is not None and len(prompts) != n:
        raise ValueError(f"{n} queries but {len(prompts)} prompts")


def openrlhf_rewards(
    queries: Sequence[Any],
    prompts: Sequence[Any] | None,
    labels: Sequence[Any] | None,
    mode: RewardMode,
    resolver: InstanceResolver | None = None,
    on_error: OnError = "raise",
) -> dict[str, Any]:
    """OpenRLHF's reward contract as plain lists: labels are instance JSON or instance ids."""
    check_openrlhf_lengths(queries, prompts, labels)
    instances = (resolver or default_resolver()).resolve_many(list(labels or ()))
    return openrlhf_payload(queries, prompts, instances, mode, on_error=on_error)


def make_openrlhf_reward(
    mode: str | None = None, store: Any = None, on_error: str | None = None
) -> Callable[..., dict[str, Any]]:
    """OpenRLHF's ``reward_func(queries, prompts, labels, **kwargs)`` with a fixed mode and store.

    Unset ``mode`` / ``on_error`` are read from ``$PBSOLVE_REWARD_MODE`` /
    ``$PBSOLVE_ON_GRADER_ERROR`` at each call (OpenRLHF's file mode passes no keywords).
    Returns torch tensors when torch is importable (as OpenRLHF's own examples do), lists
    otherwise."""
    chosen = check_mode(mode) if mode is not None else None
    errors = check_on_error(on_error) if on_error is not None else None

    def reward_func(
        queries: Sequence[Any], prompts: Sequence[Any], labels: Sequence[Any], **kwargs: Any
    ) -> dict[str, Any]:
        out = openrlhf_rewards(
            list(queries), prompts, labels, chosen or check_mode(None), _resolver(store), errors or check_on_error(None)
        )
        try:
            import torch
        except ImportError:
            return out
        return {
            "rewards": torch.tensor(out["rewards"], dtype=torch.float32),
            "scores": torch.tensor(out["scores"], dtype=torch.float32),
            "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in out["extra_logs"].items()},
        }

    return reward_func


# The module-level function OpenRLHF looks up in the file given to --remote_rm_url.
reward_func = make_openrlhf_reward()


def score_many(
    instances: Iterable[Instance | str | Mapping[str, Any]],
    responses: Iterable[Any],
    mode: str | None = None,
    on_error: str | None = None,
) -> list[dict[str, float]]:
    """Convenience: the metrics dicts of many (instance, response) pairs, in order."""
    chosen, errors = check_mode(mode), check_on_error(on_error)
    inst = default_resolver().resolve_many(list(instances))
    return [metrics(g) for g in grade_pairs(list(zip(inst, list(responses))), chosen, on_error=errors)]


__all__ = [
    "EXTRA_KEYS",
    "METRIC_KEYS",
    "ON_ERROR_ENV",
    "DeadlineExceeded",
    "GradingError",
    "InstanceError",
    "InstanceResolver",
    "InvalidGroundTruth",
    "UnknownInstance",
    "check_mode",
    "check_on_error",
    "check_openrlhf_lengths",
    "completion_text",
    "compute_score",
    "compute_score_batch",
    "default_resolver",
    "grade_pairs",
    "grade_view",
    "grader_errors",
    "make_openrlhf_reward",
    "metrics",
    "openrlhf_payload",
    "openrlhf_rewards",
    "openrlhf_views",
    "response_from_query",
    "reward_func",
    "score_many",
    "too_long_grade",
    "trl_reward",
]
