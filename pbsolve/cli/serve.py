"""``pbsolve export`` and ``pbsolve serve``: training-set export and the reward server.

``register(app)`` adds both commands to the main typer app (:mod:`pbsolve.cli.main`). The
store, the server and uvicorn are imported inside the commands, so ``pbsolve --help``
stays quick.
"""

from __future__ import annotations

import os
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from pbsolve import interrupts
from pbsolve.cli.common import err, exit_interrupted, fail, out, write_guard
from pbsolve.grading import REWARD_MODES
from pbsolve.parsing import MAX_CHARS

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_SHOWN_ERRORS = 20


def _show_errors(errors: list, total: int | None = None) -> None:
    for e in errors[:MAX_SHOWN_ERRORS]:
        err.print(f"[yellow]skipped[/yellow] {escape(str(e))}")
    total = len(errors) if total is None else total
    if total > MAX_SHOWN_ERRORS:
        err.print(f"[yellow]... and {total - MAX_SHOWN_ERRORS} more skipped line(s)[/yellow]")


def export_cmd(
    instances: Annotated[
        list[Path],
        typer.Option("--instances", help="instances file (JSONL or Parquet) or sharded dataset folder; repeatable"),
    ],
    fmt: Annotated[str, typer.Option("--format", help="verl | jsonl | parquet")] = "jsonl",
    out_dir: Annotated[Path, typer.Option("--out", help="output folder: <split>.parquet or <split>.jsonl")] = Path(
        "dataset"
    ),
    eval_fraction: Annotated[
        float, typer.Option(help="share of instances in the eval split (hash of seed and problem)")
    ] = 0.1,
    seed: Annotated[int, typer.Option(help="seed of the train/eval assignment")] = 0,
    system: Annotated[str | None, typer.Option(help="system message put before each prompt")] = None,
    prompt_style: Annotated[str, typer.Option(help="chat (message list) | text (jsonl and parquet only)")] = "chat",
    data_source: Annotated[str | None, typer.Option(help="verl data_source (default pbsolve/<task>)")] = None,
    summary_json: Annotated[bool, typer.Option("--summary-json", help="print the summary as JSON")] = False,
) -> None:
    """Export instances as a training set: verl Parquet, or JSON Lines / Parquet for `datasets`."""
    import json

    from pbsolve.scale.manifest import ManifestError, expand_dataset_paths
    from pbsolve.serve.export import export
    from pbsolve.serve.store import StoreError

    try:
        instances = expand_dataset_paths(instances)
    except ManifestError as exc:
        fail(str(exc))
    for p in instances:
        if not p.is_file():
            fail(f"{p}: no such file")
    try:
        with write_guard(out_dir), interrupts.owned_signals():
            report = export(
                instances, out_dir, fmt=fmt, eval_fraction=eval_fraction, seed=seed, system=system,
                prompt_style=prompt_style, data_source=data_source,
            )  # fmt: skip
    except (ValueError, StoreError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        exit_interrupted(f"interrupted: the export in {out_dir} is incomplete (rows so far in its .partial files); "
                     "the output depends only on the inputs and options: run the same command again")  # fmt: skip
    _show_errors(report.errors)
    if summary_json:
        print(json.dumps(report.as_dict()))
    else:
        t = Table(title=escape(f"export ({fmt}) -> {out_dir}"))
        t.add_column("task")
        splits = list(report.files)
        for s in splits:
            t.add_column(s, justify="right")
        for task, counts in sorted(report.tasks.items()):
            t.add_row(task, *(str(counts[s]) for s in splits))
        t.add_row("all", *(str(report.rows[s]) for s in splits))
        out.print(t)
        for s, path in report.files.items():
            out.print(escape(f"{s}: {path}"))
        check = report.leak_check
        out.print(f"leak check: {check.shared} of {check.eval_problems} eval problems in train "
                  f"({check.train_problems} train problems, canonical hashes)", markup=False)  # fmt: skip
        if check.repeated:
            out.print(f"{check.repeated} instance(s) repeat an earlier problem in their split", markup=False)
    if report.errors:
        raise typer.Exit(1)


def serve_cmd(
    instances: Annotated[
        list[Path],
        typer.Option(
            "--instances",
            help="instances (JSONL or Parquet, repeatable), a sharded dataset folder or a built store file",
        ),
    ],
    store: Annotated[
        Path | None, typer.Option(help="store file to build or reuse (default <first file>.pbstore)")
    ] = None,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="rebuild the store even if it is up to date")] = False,
    build_only: Annotated[
        bool, typer.Option("--build-only", help="build the store, print its summary and exit")
    ] = False,
    host: Annotated[str, typer.Option(help="interface to bind (loopback unless told otherwise)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535)] = 8000,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="PBSOLVE_TOKEN",
            help="require this bearer token (prefer the PBSOLVE_TOKEN variable)",
            show_default=False,
        ),
    ] = None,
    mode: Annotated[str, typer.Option(help="default reward mode: all_pass | avg_pass | feasible")] = "all_pass",
    max_body_mb: Annotated[float, typer.Option(min=0.001, help="largest request body, MiB")] = 64.0,
    max_response_chars: Annotated[
        int, typer.Option(min=1, help="longest answer graded (characters after </think>)")
    ] = MAX_CHARS,
    max_batch: Annotated[int, typer.Option(min=1, help="most responses per request")] = 8192,
    time_limit: Annotated[float, typer.Option(min=0.001, help="seconds per request, then 503")] = 30.0,
    workers: Annotated[int, typer.Option(min=1, help="server processes (each with its own cache)")] = 1,
    grade_processes: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="processes grading each batch of stored ids, per server process (0: grade in the server "
            "process; default: one per core up to 8 with one server process, else 0)",
            show_default=False,
        ),
    ] = None,
    cache: Annotated[int, typer.Option(min=0, help="parsed instances kept in memory per process")] = 1024,
    access_log: Annotated[bool, typer.Option("--access-log", help="log every request")] = False,
) -> None:
    """Serve rewards over HTTP for RL training (FastAPI + uvicorn)."""
    from pbsolve.scale.manifest import ManifestError, expand_dataset_paths
    from pbsolve.serve.store import InstanceStore, StoreError, ensure_store

    if mode not in REWARD_MODES:
        fail(f"unknown reward mode {mode!r}; choose one of {', '.join(REWARD_MODES)}")
    try:
        instances = expand_dataset_paths(instances)  # a sharded dataset folder: its shard files
    except ManifestError as exc:
        fail(str(exc))
    try:
        with err.status("preparing the instance store ...") if err.is_terminal else nullcontext() as status:

            def progress(read: int) -> None:
                if status is not None:
                    status.update(f"building the instance store ... {read:,} records read")

            path, report = ensure_store(instances, store, rebuild=rebuild, progress=progress)
    except (StoreError, OSError) as exc:
        fail(str(exc))
    _show_errors(report.errors, report.error_count)
    how = "reused" if report.reused else f"built in {report.seconds:.1f} s"
    err.print(escape(f"store {path}: {report.rows:,} instances, {report.bytes / 2**20:.1f} MiB ({how})"))
    if report.rows == 0:
        fail(f"{path} holds no instance to serve")
    if build_only:
        raise typer.Exit(1 if report.error_count else 0)
    if host not in LOOPBACK and not token:
        err.print(
            f"[yellow]warning:[/yellow] serving on {escape(host)} without a token; anyone who can reach it can use it"
        )

    import uvicorn

    from pbsolve.serve.heap import freeze_startup_heap
    from pbsolve.serve.server import CONFIG_ENV, ServerSettings, create_app, settings_env

    if grade_processes is None:
        cores = os.cpu_count() or 1
        grade_processes = min(cores, 8) if workers == 1 and cores > 1 else 0
    settings = ServerSettings(
        store=str(path), token=token, mode=mode, max_body_bytes=int(max_body_mb * 2**20),
        max_response_chars=max_response_chars, max_batch=max_batch, time_limit=time_limit,
        concurrency=2, cache_size=cache, grade_processes=grade_processes,
    )  # fmt: skip
    import socket

    try:  # the banner is printed only once the port is known to be free
        with socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET):
            pass
    except OSError as exc:
        fail(f"cannot serve on {host}:{port}: {exc.strerror or exc}")
    out.print(
        escape(
            f"pbsolve reward server on http://{host}:{port}  (mode {mode}, {workers} worker(s), "
            f"{grade_processes} grading process(es) per worker; Ctrl-C stops)"
        )
    )
    sys.stdout.flush()
    common: dict[str, Any] = {"host": host, "port": port, "log_level": "warning", "access_log": access_log}
    if workers == 1:
        try:
            with InstanceStore(path, cache_size=cache) as st:
                app = create_app(
                    st, token=token, mode=mode, max_body_bytes=settings.max_body_bytes,
                    max_response_chars=max_response_chars, max_batch=max_batch, time_limit=time_limit,
                    cache_size=cache, grade_processes=grade_processes,
                )  # fmt: skip
                freeze_startup_heap()  # what is alive now lives as long as the server
                uvicorn.run(app, **common)
        except StoreError as exc:
            fail(str(exc))
    else:
        os.environ[CONFIG_ENV] = settings_env(settings)
        uvicorn.run("pbsolve.serve.server:app_from_env", factory=True, workers=workers, **common)


def register(app: typer.Typer) -> None:
    """Add ``export`` and ``serve`` to the pbsolve CLI."""
    app.command("export")(export_cmd)
    app.command("serve")(serve_cmd)


__all__ = ["export_cmd", "register", "serve_cmd"]
