"""What the ``pbsolve`` command modules share, in one place.

The consoles, the error exits (:func:`fail`, :func:`exit_interrupted`), the progress bar,
the disk-error guard, reading an instance file, and the LLM endpoint options: declared
once as :func:`llm_options` and used by ``generate --renderer llm``, ``answer``, ``loop``,
``rewrite`` and ``audit --judge-model``. Every command module imports this one and none
imports another command module's helpers, so :mod:`pbsolve.cli` has no import cycle.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Annotated, Any, Literal, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pbsolve import interrupts
from pbsolve.api import load_instances
from pbsolve.jsonl import LineError
from pbsolve.kit import SIZE_NAMES
from pbsolve.llm.client import EndpointConfigError, EndpointDown, LLMClient, LLMConfig
from pbsolve.llm.responders import RESPONDER_FACTORIES, Responder, get_responder
from pbsolve.schema import Size

# emoji=False: user text such as `responses.jsonl:100:` must never turn into an emoji;
# markup in user text is escaped wherever it is printed.
out = Console(emoji=False)
# soft_wrap: never break a `file:line:` message across lines when stderr is a log file
err = Console(stderr=True, soft_wrap=True, emoji=False)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``error: message`` on stderr and end the command with ``code``."""
    err.print(f"[red]error:[/red] {escape(message)}")
    raise typer.Exit(code)


SIZE_HELP = " | ".join(SIZE_NAMES)


def parse_size(size: str) -> Size:
    """The size named on the command line; an unknown one ends the command with a clear error."""
    if size not in SIZE_NAMES:
        fail(f"unknown size {size!r}; choose {', '.join(SIZE_NAMES)}")
    return size


def exit_interrupted(message: str) -> NoReturn:
    """Report an interrupt and end with 128 + the signal (130 for SIGINT, 143 for SIGTERM).

    After a real signal the process ends as soon as the message is out (``os._exit``):
    worker threads still waiting on an LLM endpoint must not keep it alive for minutes.
    Every output file is closed before this is called."""
    signum = interrupts.received()
    code = interrupts.exit_code(signum)
    if signum is None:  # a KeyboardInterrupt raised in-process (tests, embedding code)
        fail(message, code)
    err.print(f"[red]error:[/red] {escape(message)}")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def progress_bar() -> Progress:
    """A progress bar on stderr, drawn only when stderr is a terminal."""
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, transient=False, disable=not err.is_terminal,
    )  # fmt: skip


class write_guard:
    """Turn disk errors into one clear message; the .partial file is kept for inspection."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> Literal[False]:
        if isinstance(exc, OSError):
            why = "no space left on device" if exc.errno == errno.ENOSPC else exc.strerror or str(exc)
            partial = self.path.with_name(self.path.name + ".partial")
            kept = partial.is_file() and partial.stat().st_size > 0
            fail(f"cannot write {self.path}: {why}" + (f"; partial output kept in {partial}" if kept else ""))
        return False


def read_instances(path: Path) -> tuple[dict, list[LineError]]:
    """The valid instances of a file by id, and its skipped lines (each reported on stderr)."""
    if not path.exists():
        fail(f"{path}: no such file")
    found, errors = load_instances(path)
    for e in errors:
        err.print(f"[yellow]skipped[/yellow] {escape(str(e))}")
    return found, errors


def warn_workers(workers: int) -> None:
    """More worker processes than cores only makes them compete."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if workers > cores:
        err.print(f"[yellow]warning:[/yellow] --workers {workers} is more than the {cores} core(s) available; "
                  "the extra workers only compete for them")  # fmt: skip


# -- the LLM endpoint options ------------------------------------------------------------------

PANEL = "LLM endpoint (--responder openai, --renderer llm)"


def _endpoint_options(panel: str, system_prompt_help: str) -> dict[str, Any]:
    """The typer annotation of every endpoint option, shown under ``panel`` in --help."""
    return {
        "base_url": Annotated[
            str | None,
            typer.Option(
                "--base-url",
                help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (vLLM), "
                "http://127.0.0.1:11434/v1 (Ollama); default $OPENAI_BASE_URL, else api.openai.com",
                rich_help_panel=panel,
            ),
        ],
        "model": Annotated[
            str | None, typer.Option("--model", help="model name as the endpoint serves it", rich_help_panel=panel)
        ],
        "api_key_env": Annotated[
            str,
            typer.Option(
                "--api-key-env",
                help="environment variable holding the API key (unset: a placeholder, fine for local servers)",
                rich_help_panel=panel,
            ),
        ],
        "temperature": Annotated[
            float, typer.Option("--temperature", min=0.0, max=2.0, help="sampling temperature", rich_help_panel=panel)
        ],
        "max_tokens": Annotated[
            int | None, typer.Option("--max-tokens", min=1, help="completion token cap", rich_help_panel=panel)
        ],
        "system_prompt": Annotated[
            str | None, typer.Option("--system-prompt", help=system_prompt_help, rich_help_panel=panel)
        ],
        "timeout": Annotated[
            float, typer.Option("--timeout", min=0.001, help="seconds per request", rich_help_panel=panel)
        ],
        "max_retries": Annotated[
            int,
            typer.Option(
                "--max-retries", min=0, help="retries per request on 429/5xx/time-outs", rich_help_panel=panel
            ),
        ],
        "backoff": Annotated[
            float,
            typer.Option(
                "--backoff", min=0.0, help="seconds before the first retry (doubles per retry)", rich_help_panel=panel
            ),
        ],
        "concurrency": Annotated[
            int, typer.Option("--concurrency", min=1, help="requests in flight at once", rich_help_panel=panel)
        ],
    }


@dataclasses.dataclass(frozen=True)
class LLMOptions:
    """The endpoint options one command was given (see :func:`llm_options`)."""

    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int | None = None
    system_prompt: str | None = None
    timeout: float = 300.0
    max_retries: int = 4
    backoff: float = 1.0
    concurrency: int = 4

    def replace(self, **changes: Any) -> LLMOptions:
        return dataclasses.replace(self, **changes)

    def config(self, needed_by: str) -> LLMConfig:
        """An LLMConfig from these options; ValueError with a one-line reason if unusable."""
        if not self.model:
            raise ValueError(f"{needed_by} needs --model (the model name the endpoint serves)")
        system_prompt = self.system_prompt
        if system_prompt and system_prompt.startswith("@"):
            path = Path(system_prompt[1:])
            if not path.is_file():
                raise ValueError(f"--system-prompt {system_prompt}: no such file")
            system_prompt = path.read_text(encoding="utf-8")
        return LLMConfig(**{**dataclasses.asdict(self), "system_prompt": system_prompt})


F = TypeVar("F", bound=Callable[..., Any])


def llm_options(
    *,
    temperature: float = 0.0,
    panel: str = PANEL,
    model: bool = True,
    system_prompt_help: str = "system message; @FILE reads it from a file",
) -> Callable[[F], F]:
    """Give a command the endpoint options (``--base-url``, ``--model``, ... ``--concurrency``).

    The command declares a last, keyword-only parameter ``llm: LLMOptions``; typer sees the
    options in its place (``model=False`` leaves ``--model`` out, for a command that names
    its model another way) and the command receives them as one :class:`LLMOptions`.
    Only the temperature's default differs between commands."""  # fmt: skip
    options = _endpoint_options(panel, system_prompt_help)
    if not model:
        del options["model"]
    defaults = {**dataclasses.asdict(LLMOptions()), "temperature": temperature}

    def decorate(func: F) -> F:
        sig = inspect.signature(func, eval_str=True)
        params = list(sig.parameters.values())
        if not params or params[-1].name != "llm" or params[-1].kind is not inspect.Parameter.KEYWORD_ONLY:
            raise TypeError(f"{func.__name__} must end with a keyword-only parameter `llm: LLMOptions`")
        added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=defaults[name], annotation=ann)
                 for name, ann in options.items()]  # fmt: skip

        @functools.wraps(func)
        def command(**kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in options}
            return func(**kwargs, llm=LLMOptions(**given))

        new_params = [*params[:-1], *added]
        command.__signature__ = sig.replace(parameters=new_params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in new_params} | {"return": sig.return_annotation}
        return command  # type: ignore[return-value]

    return decorate


def build_responder(name: str, llm: LLMOptions) -> tuple[Responder, LLMConfig | None]:
    """The named responder; factory-built ones (openai) get an LLMConfig from the options.

    Raises KeyError for an unknown name and ValueError for unusable options."""
    if name in RESPONDER_FACTORIES:
        config = llm.config(needed_by=f"--responder {name}")
        return get_responder(name, **config.model_dump()), config
    return get_responder(name), None


def preflight(responder_or_config: Any) -> str | None:
    """Reach the endpoint once before a long run (through an LLMClient, a responder's client,
    or a client made from an LLMConfig). Raises EndpointDown/EndpointConfigError; returns a
    warning (model not listed) or None. Responders without a client pass."""
    client = (
        responder_or_config
        if isinstance(responder_or_config, LLMClient)
        else getattr(responder_or_config, "client", None)
    )
    if client is None and isinstance(responder_or_config, LLMConfig):
        client = LLMClient(responder_or_config)
    return client.preflight() if client is not None else None


def preflight_or_fail(responder_or_config: Any) -> None:
    """:func:`preflight`, ending the command when the endpoint is down or misconfigured and
    printing the warning it may give."""
    try:
        warning = preflight(responder_or_config)
    except (EndpointDown, EndpointConfigError) as exc:
        fail(str(exc))
    if warning:
        err.print(f"[yellow]warning:[/yellow] {escape(warning)}")
