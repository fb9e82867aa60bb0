"""The reward server: pbsolve's grader over HTTP (FastAPI + uvicorn).

Endpoints (JSON in, JSON out; every error is ``{"error": "<message>"}``):

``GET  /health``      status, instance count, default mode and limits (no token needed).
``POST /grade``       ``{"id" | "instance", "response", "response_id"?, "mode"?, "details"?}``
                      -> one grade: ``reward``, ``all_pass``, ``avg_pass``, ``parse_ok``,
                      ``items_passed``, ``items_total``, ``parse_error`` (``items`` with details).
``POST /grade/batch`` ``{"mode"?, "details"?, "requests": [{"id" | "instance", "response",
                      "response_id"?}, ...]}`` -> ``{"rewards": [...], "grades": [...]}``.
``POST /openrlhf``    OpenRLHF's remote reward contract (also at ``/get_reward``):
                      ``{"query": [...], "prompts": [...], "labels": [...]}`` ->
                      ``{"rewards": [...], "scores": [...], "extra_logs": {key: [numbers]}}``;
                      a label is an instance id or instance JSON; ``?mode=`` picks the mode.

Failure is never a reward: an unknown instance id is a 404, a malformed request a 4xx with
a message, a request that runs past the time limit a 503. An inline instance that is not a
valid ground truth (empty checklist, unknown rule kinds, ...) is a 422; a stored one, or a
grader failure (a checker that raises or cannot be imported), is a 500 whose ``error``
starts with ``grader error:`` -- the whole request fails, no reward is returned. Limits:
request body size (413), batch length (413), response length (an answer longer than the
limit after ``</think>``, by default ``pbsolve.parsing.MAX_CHARS``, is graded as failing
every item, like any other unparsable answer), and a per-request time
limit enforced without signals -- grading runs in a worker thread and checks its deadline
between two grades. An optional bearer token guards every endpoint but ``/health``
(``Authorization: Bearer <token>``, or ``?token=`` for clients that cannot set headers).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs

import anyio
from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from pbsolve import __version__
from pbsolve.grading import REWARD_MODES, GradingError, InvalidGroundTruth, validate_instance
from pbsolve.parsing import MAX_CHARS
from pbsolve.schema import Grade, Instance, RewardMode
from pbsolve.serve.heap import freeze_startup_heap
from pbsolve.serve.pool import GradingPool, PoolFailure, PoolItem
from pbsolve.serve.rewards import (
    DeadlineExceeded,
    InstanceError,
    InstanceResolver,
    after_prompt,
    check_mode,
    grade_view,
    openrlhf_payload,
    openrlhf_views,
)
from pbsolve.serve.rewards import grade_pairs as _grade_pairs
from pbsolve.serve.store import InstanceStore

CONFIG_ENV = "PBSOLVE_SERVE_CONFIG"
OPEN_PATHS = frozenset({"/health"})


@dataclass
class ServerSettings:
    """Everything ``create_app`` needs; also what ``pbsolve serve --workers N`` hands each
    worker process (as JSON in ``$PBSOLVE_SERVE_CONFIG``)."""

    store: str | None = None
    token: str | None = None
    mode: str = "all_pass"
    max_body_bytes: int = 64 * 1024 * 1024
    max_response_chars: int = MAX_CHARS
    max_batch: int = 8192
    time_limit: float = 30.0
    concurrency: int = 2
    cache_size: int = 1024
    grade_processes: int = 0  # batches of store ids graded on this many worker processes (0: in this one)


# -- request bodies -----------------------------------------------------------------------------
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GradeItem(_Body):
    id: str | None = Field(default=None, description="instance id, looked up in the store")
    instance: dict[str, Any] | str | None = Field(default=None, description="the instance inline (object or JSON text)")
    response: str
    response_id: str | None = None


class GradeRequest(GradeItem):
    mode: RewardMode | None = None
    details: bool = Field(default=False, description="include per-item verdicts")


class BatchRequest(_Body):
    mode: RewardMode | None = None
    details: bool = False
    requests: list[GradeItem] = Field(min_length=1)


class OpenRLHFRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # newer OpenRLHF also sends "metas"

    query: list[str]
    prompts: list[str] | None = None
    labels: list[str | dict[str, Any]] | None = None


async def openrlhf_body(request: Request) -> OpenRLHFRequest:
    """The body of an OpenRLHF request, read and validated in one pass by pydantic's own
    JSON reader: such a batch carries every prompt in full (11.9 MB for the benchmark's
    1,024 queries), and FastAPI's ``json.loads`` then validation took 36 ms against 24 ms
    (measured on that body) in the server's event loop. Errors are the request validation
    errors FastAPI raises for the other endpoints, located in the body as theirs are."""
    body = await request.body()
    if not body.strip():
        raise RequestValidationError([{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}])
    try:
        return OpenRLHFRequest.model_validate_json(body)
    except ValidationError as exc:
        raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]) from None


# -- plumbing -------------------------------------------------------------------------------------
def _json(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return Response(body, status_code=status, media_type="application/json", headers=headers)


async def _send_json(send: Callable, status: int, payload: dict, headers: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]
    body = json.dumps(payload).encode()
    await send({
        "type": "http.response.start", "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers],
    })  # fmt: skip
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware run before anything else: the bearer token, then the body size.

    Both are checked before the body is parsed, so an unauthenticated or oversized request
    costs no more than reading ``max_body_bytes``. The body is read here and replayed to
    the application."""

    def __init__(self, app: Any, token: str | None, max_body_bytes: int) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.max_body = max_body_bytes

    def _authorized(self, scope: dict) -> bool:
        assert self.token is not None
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, given = value.partition(b" ")
                if scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.token):
                    return True
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        return any(hmac.compare_digest(t.encode(), self.token) for t in query.get("token", ()))

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.token is not None and scope["path"] not in OPEN_PATHS and not self._authorized(scope):
            await _send_json(
                send, 401, {"error": "missing or wrong bearer token (send 'Authorization: Bearer <token>')"},
                [(b"www-authenticate", b"Bearer")],
            )  # fmt: skip
            return
        declared = None
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _send_json(send, 400, {"error": "invalid Content-Length header"})
                    return
        too_big = {"error": f"request body larger than this server's limit of {self.max_body:,} bytes"}
        if declared is not None and declared > self.max_body:
            await _send_json(send, 413, too_big)
            return
        if scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await _send_json(send, 413, too_big)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _listing(entries: list[str], limit: int = 10) -> str:
    shown = "; ".join(entries[:limit])
    return shown + (f"; ... ({len(entries)} in all)" if len(entries) > limit else "")


class RewardService:
    """The state behind the routes: store, resolver, limits."""

    def __init__(self, store: InstanceStore | None, settings: ServerSettings) -> None:
        self.store = store
        self.settings = settings
        self.mode = check_mode(settings.mode)
        self.resolver = InstanceResolver(store=None, cache_size=max(16, settings.cache_size // 4))
        self._limiter: Any = None
        self.pool: GradingPool | None = None
        if store is not None and settings.grade_processes > 0:
            self.pool = GradingPool(
                str(store.path), settings.grade_processes, settings.cache_size, settings.max_response_chars
            )

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()

    # instances -----------------------------------------------------------------------------
    def resolve(self, refs: list[tuple[str, Any]], where: Callable[[int], str]) -> list[Instance]:
        """Instances for ("id", text) / ("inline", value) references, each distinct one parsed
        once. Unknown ids -> 404, values that are not instances -> 422 (all listed)."""
        out: list[Instance | None] = [None] * len(refs)
        by_id: dict[str, list[int]] = {}
        bad: list[str] = []
        for i, (kind, value) in enumerate(refs):
            if kind == "id":
                by_id.setdefault(value, []).append(i)
                continue
            if isinstance(value, str) and not value.lstrip().startswith("{"):
                bad.append(f"{where(i)}: not instance JSON")
                continue
            try:
                out[i] = self.resolver.resolve(value)
            except InstanceError as exc:
                bad.append(f"{where(i)}: {exc}")
        if bad:
            raise HTTPException(422, _listing(bad))
        if by_id:
            found = self.store.get_many(list(by_id)) if self.store is not None else {}
            missing = [k for k in by_id if k not in found]
            if missing:
                note = "" if self.store is not None else " (this server has no instance store; send instances inline)"
                raise HTTPException(
                    404,
                    "unknown instance id(s): "
                    + _listing([f"{k[:200]!r} ({where(by_id[k][0])})" for k in missing])
                    + note,
                )
            for k, idxs in by_id.items():
                for i in idxs:
                    out[i] = found[k]
        self.validate(out, refs, where)  # type: ignore[arg-type]
        return out  # type: ignore[return-value]

    @staticmethod
    def validate(instances: list[Instance], refs: list[tuple[str, Any]], where: Callable[[int], str]) -> None:
        """Every distinct instance must be a valid ground truth before anything is graded:
        inline ones that are not -> 422 (all listed), stored ones -> 500."""
        seen: set[int] = set()
        inline: list[str] = []
        stored: list[str] = []
        for i, inst in enumerate(instances):
            if id(inst) in seen:
                continue
            seen.add(id(inst))
            try:
                validate_instance(inst)
            except InvalidGroundTruth as exc:
                (inline if refs[i][0] == "inline" else stored).append(f"{where(i)}: {exc}")
            except GradingError as exc:
                raise HTTPException(500, f"grader error: {where(i)}: {exc}") from None
        if stored:
            raise HTTPException(
                500, "grader error: stored instance(s) are not valid ground truths: " + _listing(stored)
            )
        if inline:
            raise HTTPException(422, "not valid ground truth(s): " + _listing(inline))

    @staticmethod
    def ref(item: GradeItem, where: str) -> tuple[str, Any]:
        if (item.id is None) == (item.instance is None):
            raise HTTPException(
                422, f"{where}: give exactly one of 'id' (an instance id) and 'instance' (the instance)"
            )
        return ("id", item.id) if item.id is not None else ("inline", item.instance)

    # running work in a thread, under the deadline ------------------------------------------------
    async def run(self, fn: Callable[[float], Any]) -> Any:
        deadline = time.monotonic() + self.settings.time_limit
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(max(1, self.settings.concurrency))
        try:
            return await anyio.to_thread.run_sync(fn, deadline, limiter=self._limiter)
        except GradingError as exc:  # the grader failed: an error for the whole request, never a reward
            raise HTTPException(500, f"grader error: {exc}") from None
        except DeadlineExceeded as exc:
            raise HTTPException(
                503,
                f"time limit of {self.settings.time_limit:g} s exceeded after grading {exc.done} of {exc.total} "
                "responses; retry, or send smaller batches",
                headers={"Retry-After": "1"},
            ) from None

    def grade(
        self, pairs: list[tuple[Instance, Any]], mode: RewardMode, ids: list[str | None] | None, deadline: float
    ) -> list[Grade]:
        if time.monotonic() > deadline:
            raise DeadlineExceeded(0, len(pairs))
        return _grade_pairs(pairs, mode, ids, deadline=deadline, max_response_chars=self.settings.max_response_chars)

    def pooled(self, refs: list[tuple[str, Any]]) -> bool:
        """Whether this batch is graded on the worker processes: only when there are some and
        every answer names a stored instance by id (inline instances are graded here)."""
        return self.pool is not None and len(refs) > 1 and all(kind == "id" for kind, _ in refs)

    def grade_pooled(
        self, items: list[PoolItem], mode: RewardMode, details: bool, where: Callable[[int], str], deadline: float
    ) -> list[dict[str, Any]]:
        """Grade on the pool; every failure is the HTTP error the in-process path gives."""
        assert self.pool is not None
        try:
            return self.pool.grade(items, mode, deadline, details)
        except PoolFailure as exc:
            first: dict[str, int] = {}
            for i, it in enumerate(items):
                first.setdefault(it.instance_id, i)
            if exc.kind == "unknown":
                missing = sorted(exc.ids, key=first.__getitem__)
                raise HTTPException(
                    404, "unknown instance id(s): " + _listing([f"{k[:200]!r} ({where(first[k])})" for k in missing])
                ) from None
            if exc.kind == "invalid":
                bad = sorted(zip(exc.ids, exc.reasons), key=lambda p: first[p[0]])
                raise HTTPException(
                    500,
                    "grader error: stored instance(s) are not valid ground truths: "
                    + _listing([f"{where(first[k])}: {why}" for k, why in bad]),
                ) from None
            if exc.kind == "grader":
                at = f"{where(first[exc.ids[0]])}: " if exc.ids else ""
                raise HTTPException(500, f"grader error: {at}{exc.reasons[0]}") from None
            raise DeadlineExceeded(exc.done, exc.total) from None

    def check_batch(self, n: int) -> None:
        if n > self.settings.max_batch:
            raise HTTPException(
                413, f"batch of {n:,} responses; this server's limit is {self.settings.max_batch:,} per request"
            )


def create_app(
    store: InstanceStore | str | Path | None = None,
    token: str | None = None,
    mode: str = "all_pass",
    max_body_bytes: int = ServerSettings.max_body_bytes,
    max_response_chars: int = ServerSettings.max_response_chars,
    max_batch: int = ServerSettings.max_batch,
    time_limit: float = ServerSettings.time_limit,
    concurrency: int = ServerSettings.concurrency,
    cache_size: int = ServerSettings.cache_size,
    grade_processes: int = ServerSettings.grade_processes,
) -> FastAPI:
    """The reward server app. ``store`` is an ``InstanceStore``, a path to one, or None
    (then only inline instances can be graded). With ``grade_processes`` > 0, batches that
    name stored instances by id are graded on that many worker processes
    (:mod:`pbsolve.serve.pool`), started now and stopped when the app shuts down."""
    if isinstance(store, (str, Path)):
        store = InstanceStore(store, cache_size=cache_size)
    settings = ServerSettings(
        store=str(store.path) if store is not None else None, token=token, mode=check_mode(mode),
        max_body_bytes=max_body_bytes, max_response_chars=max_response_chars, max_batch=max_batch,
        time_limit=time_limit, concurrency=concurrency, cache_size=cache_size, grade_processes=grade_processes,
    )  # fmt: skip
    svc = RewardService(store, settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        svc.close()  # the grading workers, if any

    app = FastAPI(title="pbsolve reward server", version=__version__, lifespan=lifespan)
    app.state.service = svc
    app.add_middleware(Guard, token=token, max_body_bytes=max_body_bytes)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = exc.errors()
        parts = []
        for e in errors[:5]:
            loc = tuple(e.get("loc", ()))
            if e.get("type") == "json_invalid":
                why = (e.get("ctx") or {}).get("error", "")
                parts.append(f"the body is not valid JSON ({why})" if why else "the body is not valid JSON")
                continue
            if loc == ("body",) and e.get("type") in ("model_attributes_type", "model_type", "dict_type", "missing"):
                parts.append("the body must be one JSON object (Content-Type: application/json)")
                continue
            where = ".".join(str(x) for x in loc if x != "body") or "body"
            parts.append(f"{where}: {e.get('msg', 'invalid')}")
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        return _json({"error": "invalid request: " + "; ".join(parts) + more}, 422)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> Response:
        return _json({"error": str(exc.detail)}, exc.status_code, headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> Response:  # a bug or a damaged store, never a bad request
        return _json({"error": f"internal error: {type(exc).__name__}: {str(exc)[:500]}"}, 500)

    @app.get("/health")
    async def health() -> Response:
        return _json({
            "status": "ok",
            "version": __version__,
            "instances": len(svc.store) if svc.store is not None else 0,
            "mode": svc.mode,
            "reward_modes": list(REWARD_MODES),
            "limits": {
                "max_body_bytes": settings.max_body_bytes, "max_batch": settings.max_batch,
                "max_response_chars": settings.max_response_chars, "time_limit_s": settings.time_limit,
            },
            "auth": token is not None,
            "grade_processes": svc.pool.processes if svc.pool is not None else 0,
        })  # fmt: skip

    @app.post("/grade")
    async def grade_one(req: GradeRequest) -> Response:
        ref = svc.ref(req, "request")
        chosen = req.mode or svc.mode

        def work(deadline: float) -> dict[str, Any]:
            inst = svc.resolve([ref], lambda i: "id" if ref[0] == "id" else "instance")[0]
            g = svc.grade([(inst, req.response)], chosen, [req.response_id], deadline)[0]
            return grade_view(g, req.details)

        return _json(await svc.run(work))

    @app.post("/grade/batch")
    async def grade_batch(req: BatchRequest) -> Response:
        svc.check_batch(len(req.requests))
        refs = [svc.ref(item, f"requests[{i}]") for i, item in enumerate(req.requests)]
        chosen = req.mode or svc.mode

        def work(deadline: float) -> dict[str, Any]:
            t0 = time.perf_counter()
            where = lambda i: f"requests[{i}]"  # noqa: E731
            if svc.pooled(refs):
                items = [
                    PoolItem(str(ref[1]), item.response, item.response_id) for ref, item in zip(refs, req.requests)
                ]
                out = svc.grade_pooled(items, chosen, req.details, where, deadline)
            else:
                instances = svc.resolve(refs, where)
                pairs = [(inst, item.response) for inst, item in zip(instances, req.requests)]
                grades = svc.grade(pairs, chosen, [item.response_id for item in req.requests], deadline)
                out = [grade_view(g, req.details) for g in grades]
            return {
                "mode": chosen, "n": len(out), "rewards": [o["reward"] for o in out], "grades": out,
                "elapsed_ms": round(1000 * (time.perf_counter() - t0), 3),
            }  # fmt: skip

        return _json(await svc.run(work))

    async def openrlhf(
        req: Annotated[OpenRLHFRequest, Depends(openrlhf_body)], mode: str | None = Query(default=None)
    ) -> Response:
        if mode is not None and mode not in REWARD_MODES:
            raise HTTPException(422, f"unknown reward mode {mode!r}; choose one of {', '.join(REWARD_MODES)}")
        chosen: RewardMode = mode or svc.mode
        n = len(req.query)
        svc.check_batch(n)
        if req.labels is None or len(req.labels) != n:
            got = "no" if req.labels is None else str(len(req.labels))
            raise HTTPException(
                422, f"{n} queries but {got} labels; each query needs its instance id or instance JSON "
                "(start OpenRLHF with --label_key naming that dataset column)",
            )  # fmt: skip
        if req.prompts is not None and len(req.prompts) != n:
            raise HTTPException(422, f"{n} queries but {len(req.prompts)} prompts")
        labels = req.labels
        refs = [
            ("inline", v) if isinstance(v, dict) or v.lstrip().startswith("{") else ("id", v.strip()) for v in labels
        ]

        def work(deadline: float) -> dict[str, Any]:
            if svc.pooled(refs):
                return openrlhf_pooled(deadline)
            instances = svc.resolve(refs, lambda i: f"labels[{i}]")
            if time.monotonic() > deadline:
                raise DeadlineExceeded(0, n)
            return openrlhf_payload(
                req.query, req.prompts, instances, chosen, deadline=deadline,
                max_response_chars=svc.settings.max_response_chars,
            )  # fmt: skip

        def openrlhf_pooled(deadline: float) -> dict[str, Any]:
            items = []
            for i, (q, ref) in enumerate(zip(req.query, refs)):
                prompt = req.prompts[i] if req.prompts is not None else None
                cut = after_prompt(q, prompt) if isinstance(q, str) else None
                # without the prompt in the query, the worker cuts after the instance's own prompt
                items.append(PoolItem(str(ref[1]), q if cut is None else cut, None, from_query=cut is None))
            views = svc.grade_pooled(items, chosen, False, lambda i: f"labels[{i}]", deadline)
            return openrlhf_views(views)

        return _json(await svc.run(work))

    documented = {  # the body openrlhf_body reads, in the API's schema as a declared body would be
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": OpenRLHFRequest.model_json_schema()}},
        }
    }
    app.post("/openrlhf", openapi_extra=documented)(openrlhf)
    app.post("/get_reward", openapi_extra=documented)(openrlhf)  # the path OpenRLHF's own reward-model server uses
    return app


def app_from_env() -> FastAPI:
    """App factory for ``uvicorn --factory`` worker processes: settings from $PBSOLVE_SERVE_CONFIG."""
    raw = os.environ.get(CONFIG_ENV)
    if not raw:
        raise RuntimeError(f"{CONFIG_ENV} is not set; start the server with `pbsolve serve`")
    cfg = json.loads(raw)
    app = create_app(**cfg)
    freeze_startup_heap()  # this process serves until it exits
    return app


def settings_env(settings: ServerSettings) -> str:
    return json.dumps(asdict(settings))


class ServerThread:
    """Run an app with uvicorn in a background thread (tests, notebooks, benchmarks).

    ``with ServerThread(app) as url: ...`` binds 127.0.0.1 on a free port, waits until the
    server accepts connections, and shuts it down on exit."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, **config: Any) -> None:
        import uvicorn

        self._sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # accepted connections inherit this: without it, small responses wait for delayed ACKs (~40 ms)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock.bind((host, port))
        self.host, self.port = host, self._sock.getsockname()[1]
        config.setdefault("log_level", "warning")
        config.setdefault("access_log", False)
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=self.port, **config))
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 10.0) -> str:
        self._thread.start()
        end = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > end:
                raise RuntimeError("the reward server did not start")
            time.sleep(0.01)
        return self.url

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self._thread.join(timeout)
        self._sock.close()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = [
    "CONFIG_ENV",
    "Guard",
    "RewardService",
    "ServerSettings",
    "ServerThread",
    "app_from_env",
    "create_app",
    "settings_env",
]
