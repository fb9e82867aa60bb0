"""OpenAI-compatible chat endpoints: one client wrapper for the responder and the rewriter.

Any server that speaks ``POST /v1/chat/completions`` works: OpenAI, vLLM, SGLang,
Ollama, llama.cpp. The wrapper does its own retrying (the ``openai`` client's is set to
0) so that the policy is visible and tested:

- 429, 408, 409, 5xx, time-outs, dropped connections and unparseable bodies are retried
  with exponential backoff (``backoff`` seconds doubling per retry, capped at
  ``backoff_max``, halved to full by jitter; a ``Retry-After`` header wins when present),
  up to ``max_retries`` retries; then :class:`EndpointDown` is raised.
- 401, 403 and 404 raise :class:`EndpointConfigError` at once (every request would fail).
- Other 4xx fail that request only (:class:`RequestFailed`, e.g. a prompt too long).

:meth:`LLMClient.map` runs calls with bounded concurrency (threads) and yields results
in input order; when the endpoint stays down it stops the other calls, yields what had
already completed and raises, so callers can save a partial result.

The ``openai`` package is imported only when a client is first used.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T")
R = TypeVar("R")

PLACEHOLDER_KEY = "EMPTY"  # what local servers (vLLM, Ollama, llama.cpp) accept when they check no key
RETRYABLE_STATUS = frozenset({408, 409, 429})
FATAL_STATUS = frozenset({401, 403, 404})


class LLMConfig(BaseModel):
    """One endpoint and how to call it. The API key itself is never stored: only the
    name of the environment variable that holds it."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="model name as the endpoint knows it")
    base_url: str | None = Field(
        default=None, description="e.g. http://127.0.0.1:8000/v1; default: $OPENAI_BASE_URL, else api.openai.com"
    )
    api_key_env: str = Field(default="OPENAI_API_KEY", description="environment variable holding the key")
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, ge=1, description="completion token cap (None: the server's default)")
    system_prompt: str | None = Field(default=None, description="sent as a system message before the prompt")
    timeout: float = Field(default=300.0, gt=0, description="seconds per request")
    max_retries: int = Field(default=4, ge=0, description="retries per request on 429/5xx/time-outs")
    backoff: float = Field(default=1.0, ge=0, description="seconds before the first retry; doubles per retry")
    backoff_max: float = Field(default=60.0, ge=0)
    concurrency: int = Field(default=4, ge=1, description="requests in flight at once")

    def api_key(self) -> str:
        return os.environ.get(self.api_key_env) or PLACEHOLDER_KEY

    @property
    def endpoint(self) -> str:
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"

    def identity(self) -> dict[str, Any]:
        """The settings that shape answers (for run records; no endpoint address or key)."""
        return {"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens,
                "system_prompt": self.system_prompt}  # fmt: skip


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
        )

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class Completion:
    text: str
    usage: Usage
    raw: dict[str, Any]
    attempts: int
    seconds: float
    model: str
    finish_reason: str | None = None


class LLMError(Exception):
    def __init__(self, message: str, attempts: int = 0, status: int | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.status = status


class EndpointDown(LLMError):
    """Retries exhausted on retryable failures: the endpoint is unavailable."""


class EndpointConfigError(LLMError):
    """401/403/404: wrong key, no permission or unknown model; every request would fail."""


class RequestFailed(LLMError):
    """A non-retryable error for this request only (e.g. 400: context length exceeded)."""


class _Invalid(Exception):
    """A 200 response that is not a chat completion."""


@dataclass
class CallStats:
    """Thread-safe running totals of one client."""

    requests: int = 0
    retries: int = 0
    completions: int = 0
    failures: int = 0
    usage: Usage = field(default_factory=Usage)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for key, n in counts.items():
                setattr(self, key, getattr(self, key) + n)

    def add_usage(self, usage: Usage) -> None:
        with self._lock:
            self.usage = self.usage + usage


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    value = headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def describe(exc: BaseException) -> str:
    """A short human reason for a failed call."""
    import openai

    status = _status_of(exc)
    if isinstance(exc, openai.APITimeoutError):
        return "request timed out"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        return f"cannot connect ({type(cause).__name__ if cause else 'connection error'})"
    if isinstance(exc, _Invalid):
        return f"invalid response: {exc}"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid response: body is not JSON ({exc})"[:200]
    if status is not None:
        body = getattr(exc, "body", None)
        message = body.get("message") if isinstance(body, dict) else None
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            message = body["error"].get("message")
        return f"HTTP {status}" + (f": {message}" if message else "")
    return f"{type(exc).__name__}: {exc}"[:200]


class LLMClient:
    """Chat completions with visible retries, usage accounting and bounded concurrency."""

    def __init__(self, config: LLMConfig, sleep: Callable[[float], None] | None = None) -> None:
        self.config = config
        self.stats = CallStats()
        self._client: Any = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sleep = sleep

    def _openai(self) -> Any:
        with self._lock:
            if self._client is None:
                import openai

                self._client = openai.OpenAI(
                    base_url=self.config.endpoint,
                    api_key=self.config.api_key(),
                    timeout=self.config.timeout,
                    max_retries=0,  # retries are ours: see the module docstring
                )
            return self._client

    def _wait(self, seconds: float) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            self._stop.wait(seconds)

    def _delay(self, attempt: int, exc: BaseException) -> float:
        hinted = _retry_after(exc)
        if hinted is not None:
            return min(hinted, self.config.backoff_max)
        base = min(self.config.backoff * 2 ** (attempt - 1), self.config.backoff_max)
        return base * random.uniform(0.5, 1.0)

    def _call(self, fn: Callable[[], R]) -> tuple[R, int]:
        """Run one request with the retry policy; returns (result, attempts)."""
        import openai

        attempts = 0
        while True:
            if self._stop.is_set():
                raise EndpointDown(
                    f"{self.config.endpoint}: stopped after another request found the endpoint down", attempts
                )
            attempts += 1
            self.stats.add(requests=1)
            try:
                return fn(), attempts
            except (openai.APIError, _Invalid, json.JSONDecodeError) as exc:  # anything else is a bug: it propagates
                status = _status_of(exc)
                retryable = isinstance(
                    exc, (openai.APIConnectionError, openai.APIResponseValidationError, _Invalid, json.JSONDecodeError)
                ) or (status is not None and (status in RETRYABLE_STATUS or status >= 500))
                if not retryable:
                    self.stats.add(failures=1)
                    kind = EndpointConfigError if status in FATAL_STATUS else RequestFailed
                    hint = ""
                    if status == 401:
                        hint = f" (is ${self.config.api_key_env} set to a valid key?)"
                    elif status == 404:
                        hint = f" (is {self.config.endpoint} an OpenAI-compatible /v1 URL serving model {self.config.model!r}?)"
                    raise kind(f"{self.config.endpoint}: {describe(exc)}{hint}", attempts, status) from exc
                if attempts > self.config.max_retries:
                    self.stats.add(failures=1)
                    raise EndpointDown(
                        f"{self.config.endpoint} still failing after {attempts} attempt(s): {describe(exc)}",
                        attempts,
                        status,
                    ) from exc
                self.stats.add(retries=1)
                self._wait(self._delay(attempts, exc))

    def chat(self, messages: list[dict[str, Any]]) -> Completion:
        cfg = self.config
        kwargs: dict[str, Any] = {"model": cfg.model, "messages": messages, "temperature": cfg.temperature}
        if cfg.max_tokens is not None:
            kwargs["max_tokens"] = cfg.max_tokens

        def once() -> Any:
            resp = self._openai().chat.completions.create(**kwargs)
            if not getattr(resp, "choices", None):
                raise _Invalid("no choices in the response")
            return resp

        t0 = time.perf_counter()
        resp, attempts = self._call(once)
        raw = resp.model_dump(mode="json", exclude_none=True)
        choice = resp.choices[0]
        usage = Usage()
        if resp.usage is not None:
            usage = Usage(
                int(resp.usage.prompt_tokens or 0),
                int(resp.usage.completion_tokens or 0),
                int(resp.usage.total_tokens or 0),
            )
        self.stats.add(completions=1)
        self.stats.add_usage(usage)
        return Completion(
            text=(choice.message.content if choice.message is not None else None) or "",
            usage=usage,
            raw=raw,
            attempts=attempts,
            seconds=time.perf_counter() - t0,
            model=resp.model or cfg.model,
            finish_reason=choice.finish_reason,
        )

    def messages(self, prompt: str, system: str | None = None) -> list[dict[str, Any]]:
        system = self.config.system_prompt if system is None else system
        head = [{"role": "system", "content": system}] if system else []
        return [*head, {"role": "user", "content": prompt}]

    def ask(self, prompt: str, system: str | None = None) -> Completion:
        return self.chat(self.messages(prompt, system))

    def models(self) -> list[str] | None:
        """Model ids the endpoint lists, or None when it has no /models route.

        Raises EndpointDown when the endpoint cannot be reached (after the retries)."""
        try:
            page, _ = self._call(lambda: self._openai().models.list())
        except (EndpointConfigError, RequestFailed):
            return None
        return [m.id for m in getattr(page, "data", []) or []]

    def preflight(self) -> str | None:
        """Fail fast when the endpoint is unreachable; a warning when the model is not listed."""
        ids = self.models()
        if ids and self.config.model not in ids:
            return f"{self.config.endpoint} does not list model {self.config.model!r} (it lists: {', '.join(ids[:8])})"
        return None

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        """``(index, fn(item))`` in index order, at most ``concurrency`` calls at once.

        When a call raises EndpointDown or EndpointConfigError, queued calls are cancelled,
        calls in flight stop retrying, results that had completed are still yielded, and
        then the error is raised. Other exceptions propagate the same way.
        """
        self._stop.clear()
        if self.config.concurrency <= 1 or len(items) <= 1:
            for i, item in enumerate(items):
                yield i, fn(item)
            return
        error: BaseException | None = None
        pool = ThreadPoolExecutor(max_workers=self.config.concurrency, thread_name_prefix="llm")
        futures: list[Future[R]] = [pool.submit(fn, item) for item in items]
        try:
            for i, fut in enumerate(futures):
                if error is None:
                    try:
                        result = fut.result()
                    except BaseException as exc:
                        error = exc
                        self._stop.set()
                        for later in futures[i + 1 :]:
                            later.cancel()
                        if isinstance(exc, KeyboardInterrupt):
                            break  # an interrupt: keep what completed, never wait for calls in flight
                        continue
                    yield i, result
                elif not fut.cancelled():
                    try:
                        result = fut.result()
                    except BaseException:
                        continue
                    yield i, result
        finally:
            if not all(f.done() for f in futures):  # a consumer that stopped early, or an error
                self._stop.set()
                for fut in futures:
                    fut.cancel()
            from pbsolve import interrupts  # a signal: calls in flight are abandoned, not awaited

            pool.shutdown(wait=not (isinstance(error, KeyboardInterrupt) or interrupts.stop_requested()))
            self._stop.clear()
        if error is not None:
            raise error
