"""Command-line pieces shared by the commands that talk to an LLM endpoint.

The options (``--base-url``, ``--model``, ...) are declared once here and used by
``answer``, ``generate --renderer llm``, ``loop`` and ``rewrite``. This module does not
import :mod:`pbsolve.cli` at import time (``cli`` imports it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from pbsolve.llm import EndpointConfigError, EndpointDown, LLMConfig
from pbsolve.responders import RESPONDER_FACTORIES, Answer, Responder, answer_many, get_responder
from pbsolve.schema import Instance

PANEL = "LLM endpoint (--responder openai, --renderer llm)"

BaseUrlOpt = Annotated[
    Optional[str],
    typer.Option("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (vLLM), "
                 "http://127.0.0.1:11434/v1 (Ollama); default $OPENAI_BASE_URL, else api.openai.com", rich_help_panel=PANEL),
]  # fmt: skip
ModelOpt = Annotated[Optional[str], typer.Option("--model", help="model name as the endpoint serves it", rich_help_panel=PANEL)]
ApiKeyEnvOpt = Annotated[
    str,
    typer.Option("--api-key-env", help="environment variable holding the API key (unset: a placeholder, "
                 "fine for local servers)", rich_help_panel=PANEL),
]  # fmt: skip
TemperatureOpt = Annotated[float, typer.Option("--temperature", min=0.0, max=2.0, help="sampling temperature", rich_help_panel=PANEL)]
MaxTokensOpt = Annotated[Optional[int], typer.Option("--max-tokens", min=1, help="completion token cap", rich_help_panel=PANEL)]
SystemPromptOpt = Annotated[
    Optional[str], typer.Option("--system-prompt", help="system message; @FILE reads it from a file", rich_help_panel=PANEL)
]
TimeoutOpt = Annotated[float, typer.Option("--timeout", min=0.001, help="seconds per request", rich_help_panel=PANEL)]
MaxRetriesOpt = Annotated[int, typer.Option("--max-retries", min=0, help="retries per request on 429/5xx/time-outs", rich_help_panel=PANEL)]
BackoffOpt = Annotated[float, typer.Option("--backoff", min=0.0, help="seconds before the first retry (doubles per retry)", rich_help_panel=PANEL)]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="requests in flight at once", rich_help_panel=PANEL)]


def llm_config(
    *,
    model: str | None,
    base_url: str | None,
    api_key_env: str,
    temperature: float,
    max_tokens: int | None,
    system_prompt: str | None,
    timeout: float,
    max_retries: int,
    backoff: float,
    concurrency: int,
    needed_by: str,
) -> LLMConfig:
    """An LLMConfig from the shared options; ValueError with a one-line reason if unusable."""
    if not model:
        raise ValueError(f"{needed_by} needs --model (the model name the endpoint serves)")
    if system_prompt and system_prompt.startswith("@"):
        path = Path(system_prompt[1:])
        if not path.is_file():
            raise ValueError(f"--system-prompt {system_prompt}: no such file")
        system_prompt = path.read_text(encoding="utf-8")
    return LLMConfig(
        model=model, base_url=base_url, api_key_env=api_key_env, temperature=temperature, max_tokens=max_tokens,
        system_prompt=system_prompt, timeout=timeout, max_retries=max_retries, backoff=backoff, concurrency=concurrency,
    )  # fmt: skip


def build_responder(name: str, **llm: Any) -> tuple[Responder, LLMConfig | None]:
    """The named responder; factory-built ones (openai) get an LLMConfig from the options.

    Raises KeyError for an unknown name and ValueError for unusable options."""
    if name in RESPONDER_FACTORIES:
        config = llm_config(**llm, needed_by=f"--responder {name}")
        return get_responder(name, **config.model_dump()), config
    return get_responder(name), None


def preflight(responder_or_config: Any) -> str | None:
    """Reach the endpoint once before a long run. Raises EndpointDown/EndpointConfigError;
    returns a warning (model not listed) or None. Responders without a client pass."""
    from pbsolve.llm import LLMClient

    client = getattr(responder_or_config, "client", None)
    if client is None and isinstance(responder_or_config, LLMConfig):
        client = LLMClient(responder_or_config)
    return client.preflight() if client is not None else None


def response_line(responder: str, inst: Instance, ans: Answer) -> str:
    """A response line: {id, response, response_id}, plus cost and raw response when known."""
    line: dict[str, Any] = {"id": inst.id, "response": ans.text, "response_id": f"{responder}-{inst.id}"}
    if ans.usage or ans.raw is not None or ans.error is not None:
        line.update({"model": ans.model, "usage": ans.usage, "calls": ans.calls, "seconds": round(ans.seconds, 4)})
        if ans.error is not None:
            line["error"] = ans.error
        if ans.raw is not None:
            line["raw"] = ans.raw
    return json.dumps(line, ensure_ascii=False)


def _done_ids(partial: Path) -> set[str]:
    """Ids answered in an interrupted run (a torn last line is cut)."""
    data = partial.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        with open(partial, "r+b") as fh:
            fh.truncate(len(data))
    ids = set()
    for raw in data.decode("utf-8", errors="replace").splitlines():
        try:
            ids.add(json.loads(raw)["id"])
        except (ValueError, KeyError, TypeError):
            continue
    return ids


def write_answers(responder: Responder, name: str, instances: Sequence[Instance], out_path: Path, resume: bool) -> None:
    """Answer ``instances`` into ``out_path`` (via ``<out>.partial``, renamed when complete).

    With ``resume``, lines already in ``<out>.partial`` are kept and their instances
    skipped. When the endpoint stays down, the answers obtained are kept in the
    ``.partial`` file and the command fails with a message saying how to resume.
    """
    from pbsolve import interrupts
    from pbsolve.cli import _fail, _interrupted, _progress, _write_guard, err
    from pbsolve.jsonl import check_writable

    try:
        check_writable(out_path)
    except OSError as exc:
        _fail(f"cannot write {out_path}: {exc.strerror or exc}")

    partial = out_path.with_name(out_path.name + ".partial")
    done = _done_ids(partial) if resume and partial.exists() else set()
    todo = [inst for inst in instances if inst.id not in done]
    saved = len(done)
    failed = 0
    stats = getattr(getattr(responder, "client", None), "stats", None)
    with _write_guard(out_path), interrupts.owned_signals():
        out_path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(partial, "a" if resume else "w", encoding="utf-8")
        try:
            with _progress() as bar:
                task = bar.add_task(f"answering ({name})", total=len(instances), completed=saved)
                for i, ans in answer_many(responder, todo):
                    failed += ans.error is not None
                    fh.write(response_line(name, todo[i], ans) + "\n")
                    fh.flush()
                    saved += 1
                    bar.advance(task)
        except (EndpointDown, EndpointConfigError) as exc:
            fh.close()
            _fail(f"{exc}. {saved} of {len(instances)} responses saved in {partial}; "
                  f"fix the endpoint and run the same command with --resume to continue")  # fmt: skip
        except KeyboardInterrupt:
            fh.close()
            _interrupted(f"interrupted: {saved} of {len(instances)} responses saved in {partial}; "
                         "run the same command with --resume to continue")  # fmt: skip
        fh.flush()
        os.fsync(fh.fileno())
        fh.close()
        os.replace(partial, out_path)
    note = ""
    if stats is not None:
        note = f" · {stats.requests} requests ({stats.retries} retried), {stats.usage.total_tokens} tokens"
    if resume and done:
        note += f" · {len(done)} kept from the interrupted run"
    if failed:
        note += f" · {failed} without an answer (the reason is under `error` in their lines)"
    err.print(f"{len(instances)} responses by {name} -> {out_path}{note}", markup=False)
