"""A scripted OpenAI-compatible server on 127.0.0.1, for tests that drive the real `openai` client.

It implements ``POST /v1/chat/completions`` and ``GET /v1/models`` on a free port in a
background thread, answers every request from a *script*, records every request, and
returns realistic ``usage`` figures. Nothing leaves the machine.

    from tests.openai_stub import OpenAIStub, Reply

    def answer(req: ChatRequest) -> str | Reply:      # any callable of the request
        return "```json\\n{...}\\n```"

    with OpenAIStub(answer) as stub:                  # or the `openai_stub` pytest fixture
        stub.script(Reply(status=429, headers={"retry-after": "0"}), Reply(status=500))
        client = openai.OpenAI(base_url=stub.url, api_key="test")
        ...
        assert stub.calls == 3 and stub.requests[-1].prompt.startswith("You are")

Behaviours, each a :class:`Reply` (from the one-shot ``script(...)`` queue first, then
from the responder callable):

- ``Reply(text=...)`` — a normal completion (``finish_reason`` "stop"; "length" with
  ``finish_reason="length"``); ``usage`` counts whitespace-separated words of the prompt
  and of the text (or is given with ``usage={...}``).
- ``Reply(status=429 | 500 | 503 | 400 | 401 ...)`` — an OpenAI-style error body
  (``{"error": {"message", "type", "code"}}``) with that status; ``headers`` adds e.g.
  ``retry-after``.
- ``Reply(delay=2.0, ...)`` — the reply is sent after sleeping (slow answers, time-outs).
- ``Reply(body=b"<html>not json")`` — raw bytes as the 200 body (garbage on the wire).
- ``Reply(drop=True)`` — the connection is closed without any reply.

``fail_first=k, fail_status=500`` makes the first k requests fail with that status before
the script or the responder is consulted (an endpoint that comes back). ``api_key="…"``
makes the server demand ``Authorization: Bearer …`` (401 otherwise). ``stub.down()``
makes every later request fail (503) until ``stub.up()``.

The callable gets a :class:`ChatRequest` (model, messages, temperature, max_tokens, the
raw JSON body and headers) and is called from the server's worker threads: keep it
thread-safe (pure functions of the request are). This module is reusable by any test
that needs an LLM endpoint (responders, the LLM rewriter, LLM-judge audits).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    """What the server does with one request."""

    text: str | None = None
    status: int = 200
    delay: float = 0.0
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None
    drop: bool = False
    error_message: str | None = None


@dataclass
class ChatRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def system(self) -> str | None:
        return next((m.get("content") for m in self.messages if m.get("role") == "system"), None)

    @property
    def prompt(self) -> str:
        """The content of the last user message."""
        return next((str(m.get("content", "")) for m in reversed(self.messages) if m.get("role") == "user"), "")


Responder = Callable[[ChatRequest], "str | Reply"]


def words(text: str) -> int:
    return len(text.split())


class OpenAIStub:
    def __init__(
        self,
        responder: Responder | None = None,
        *,
        fail_first: int = 0,
        fail_status: int = 500,
        api_key: str | None = None,
        models: tuple[str, ...] = ("stub-model",),
    ) -> None:
        self.responder: Responder = responder or (lambda req: "ok")
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.api_key = api_key
        self.models = models
        self.requests: list[ChatRequest] = []
        self.statuses: list[int] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._down = False
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- control ---------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None, "stub not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def calls(self) -> int:
        """Chat-completion requests received so far (failed ones included)."""
        with self._lock:
            return len(self.requests)

    def script(self, *replies: Reply) -> None:
        """Queue one-shot replies, used (in order) before the responder."""
        with self._lock:
            self._script.extend(replies)

    def down(self) -> None:
        with self._lock:
            self._down = True

    def up(self) -> None:
        with self._lock:
            self._down = False

    def start(self) -> OpenAIStub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # one small reply must not wait for a delayed ACK

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                return None

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    data = {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "stub"} for m in stub.models]}
                    self._send(200, json.dumps(data).encode())
                else:
                    self._send(404, _error_body(404, f"no route {self.path}"))

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, _error_body(404, f"no route {self.path}"))
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, _error_body(400, "request body is not JSON"))
                    return
                req = ChatRequest(self.path, body, {k.lower(): v for k, v in self.headers.items()})
                reply = stub._reply_for(req)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    try:
                        self.connection.shutdown(2)
                    except OSError:
                        pass
                    return
                if reply.status != 200:
                    self._send(reply.status, _error_body(reply.status, reply.error_message), reply.headers)
                elif reply.body is not None:
                    self._send(200, reply.body, reply.headers)
                else:
                    self._send(200, json.dumps(_completion(req, reply)).encode(), reply.headers)

            def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (time-out)
                    self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-stub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- behaviour -------------------------------------------------------------------
    def _reply_for(self, req: ChatRequest) -> Reply:
        with self._lock:
            self.requests.append(req)
            n = len(self.requests)
            if self.api_key is not None and req.headers.get("authorization") != f"Bearer {self.api_key}":
                reply: Reply | None = Reply(status=401, error_message="invalid api key")
            elif self._down:
                reply = Reply(status=503, error_message="service unavailable")
            elif n <= self.fail_first:
                reply = Reply(status=self.fail_status, error_message="scripted failure")
            elif self._script:
                reply = self._script.popleft()
            else:
                reply = None
        if reply is None:
            out = self.responder(req)
            reply = out if isinstance(out, Reply) else Reply(text=str(out))
        with self._lock:
            self.statuses.append(reply.status)
        return reply


def _error_body(status: int, message: str | None = None) -> bytes:
    kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error"}
    err = {"message": message or f"HTTP {status}", "type": kind.get(status, "server_error"), "code": str(status)}
    return json.dumps({"error": err}).encode()


def _completion(req: ChatRequest, reply: Reply) -> dict[str, Any]:
    text = reply.text or ""
    prompt_tokens = sum(words(str(m.get("content", ""))) for m in req.messages)
    usage = reply.usage or {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": words(text),
        "total_tokens": prompt_tokens + words(text),
    }
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": req.model or "stub-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": reply.finish_reason}],
        "usage": usage,
    }


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A started stub answering "ok"; set ``stub.responder`` / ``stub.script(...)`` in the test."""
    with OpenAIStub() as stub:
        yield stub
