"""``pbsolve loop`` (the closed difficulty loop) and ``pbsolve rewrite`` (the LLM rewriter
over an existing instance file). Registered on the main app by :func:`register`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from pbsolve import interrupts
from pbsolve.cli.common import (
    SIZE_HELP,
    LLMOptions,
    build_responder,
    err,
    exit_interrupted,
    fail,
    llm_options,
    out,
    parse_size,
    preflight_or_fail,
    progress_bar,
    read_instances,
    warn_workers,
    write_guard,
)  # fmt: skip
from pbsolve.jsonl import atomic_writer, dumps
from pbsolve.llm.client import EndpointConfigError, EndpointDown, LLMClient
from pbsolve.llm.responders import responder_names

LOOP_PANEL = "Difficulty update"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def print_loop_summary(s: dict[str, Any], out_dir: Path) -> None:
    t = Table(title=escape(f"closed loop: {s['answered']} answered, {s['kept']} kept -> {out_dir}/kept.jsonl"))
    for col in ("task", "n", "kept", "solved", "avg pass", "p b/m/h", "next"):
        t.add_column(col, justify="left" if col in ("task", "p b/m/h") else "right")
    for task, row in s["by_task"].items():
        w = row.get("weights") or {}
        counts = row.get("next_counts") or {}
        t.add_row(
            task, str(row["n"]), str(row["kept"]), _pct(row["solve_rate"]), _pct(row["avg_pass"]),
            "/".join(f"{w[k]:.2f}" for k in ("basic", "medium", "hard")) if w else "-",
            "/".join(str(counts[k]) for k in ("basic", "medium", "hard")) if counts else "-",
        )  # fmt: skip
    out.print(t)
    out.print("(n: answered; solved: solve rate; p b/m/h: tier weights now; next: rules per tier of the next instance)")
    tiers = Table(title="solve rate by tier (hardest sampled tier)")
    for col in ("tier", "answered", "solved", "solve rate", "avg pass"):
        tiers.add_column(col, justify="left" if col == "tier" else "right")
    for tier, row in s["by_tier"].items():
        tiers.add_row(tier, str(row["n"]), str(row["solved"]), _pct(row["solve_rate"]), _pct(row["avg_pass"]))
    out.print(tiers)
    c = s["cost"]
    tok = c["tokens"].get("total_tokens", 0)
    line = (
        f"generation cost: {c['responder_calls']:,} responder calls, {tok:,} tokens "
        f"({c['tokens'].get('prompt_tokens', 0):,} prompt, {c['tokens'].get('completion_tokens', 0):,} completion)"
    )
    if c["rewrite_calls"]:
        line += f", {c['rewrite_calls']:,} rewriter calls, {c['rewrite_tokens']:,} rewriter tokens"
    out.print(line, markup=False)
    out.print(
        f"per kept instance: {_num(c['calls_per_kept'], 2)} calls, {_num(c['tokens_per_kept'], 0)} tokens, "
        f"{_num(c['seconds_per_kept'], 2)} s (certify + answer)"
        + (f" · {s['rejected_steps']} steps certified no instance" if s["rejected_steps"] else ""),
        markup=False,
    )


def register(app: typer.Typer) -> None:
    @app.command()
    @llm_options(temperature=0.0)
    def loop(
        responder: Annotated[str, typer.Option(help=f"who answers: {', '.join(responder_names())}")],
        budget: Annotated[
            int, typer.Option(min=1, help="instances to answer in total (a larger budget extends a run)")
        ],
        out_dir: Annotated[Path, typer.Option("--out", help="run folder (created, or resumed)")],
        seed: Annotated[int, typer.Option(help="run seed; step i's instance depends on (seed, i, its counts)")] = 0,
        family: Annotated[str | None, typer.Option(help="restrict to one family")] = None,
        task: Annotated[str | None, typer.Option(help="restrict to one task type")] = None,
        size: Annotated[str, typer.Option(help=SIZE_HELP)] = "default",
        eta: Annotated[float, typer.Option(help="η: step size of the weight update", rich_help_panel=LOOP_PANEL)] = 0.3,
        alpha: Annotated[
            float, typer.Option(help="α: pressure away from basic rules", rich_help_panel=LOOP_PANEL)
        ] = 1.0,
        beta: Annotated[float, typer.Option(help="β: pull towards medium rules", rich_help_panel=LOOP_PANEL)] = 0.5,
        gamma: Annotated[float, typer.Option(help="γ: pull towards hard rules", rich_help_panel=LOOP_PANEL)] = 1.0,
        m_step: Annotated[
            float,
            typer.Option(
                min=0.0,
                help="growth of the expected rule count M per solved instance (M: 3.25 -> 6)",
                rich_help_panel=LOOP_PANEL,
            ),
        ] = 0.25,
        window: Annotated[int, typer.Option(min=1, help="rolling window of the solve-rate plot")] = 10,
        workers: Annotated[int, typer.Option(min=1, help="processes certifying a round's instances")] = 1,
        time_limit: Annotated[float, typer.Option(help="CP-SAT deterministic time limit per solve")] = 20.0,
        plan_cap: Annotated[int, typer.Option(min=2, help="count optimal plans exactly up to this cap")] = 16,
        renderer: Annotated[
            str, typer.Option(help="template | llm (reword prompts with --rewriter-model on the same endpoint)")
        ] = "template",
        rewriter_model: Annotated[str | None, typer.Option(help="llm renderer model (default: --model)")] = None,
        summary_json: Annotated[bool, typer.Option("--summary-json", help="print the summary as JSON")] = False,
        *,
        llm: LLMOptions,
    ) -> None:
        """The closed difficulty loop: certify, answer, grade, make the next instance harder.

        Solved instances push the tier weights towards harder rules; failed ones go to
        OUT/kept.jsonl. Rerun the same command to resume an interrupted run."""
        from pbsolve.loop.difficulty import Loop, LoopError, LoopParams, LoopSettings, plot, summarize
        from pbsolve.sampler import select_tasks

        size_name = parse_size(size)
        if renderer not in ("template", "llm"):
            fail(f"unknown renderer {renderer!r}; choose template or llm")
        try:
            select_tasks(family, task)
            fn, config = build_responder(responder, llm)
            rewriter = None
            if renderer == "llm":  # the rewriter: the same endpoint, its own model, temperature 0.7, no system prompt
                rewriter = llm.replace(model=rewriter_model or llm.model, temperature=0.7, system_prompt=None).config(
                    needed_by="--renderer llm"
                )
            settings = LoopSettings(
                seed=seed, family=family, task=task, size=size_name,
                params=LoopParams(eta=eta, alpha=alpha, beta=beta, gamma=gamma, m_step=m_step),
                responder=responder, responder_settings=config.identity() if config else {},
                renderer=renderer, rewriter_settings=rewriter.identity() if rewriter else {},
                deterministic_time=time_limit, plan_count_cap=plan_cap,
            )  # fmt: skip
        except (KeyError, ValueError) as exc:
            fail(str(exc).strip("'\""))
        for target in (fn if config is not None else None, rewriter):
            if target is not None:
                preflight_or_fail(target)

        run = Loop(out_dir, settings, fn, rewriter=rewriter, workers=workers)
        failure: str | None = None
        code = 1
        interrupted = False
        warn_workers(workers)
        with progress_bar() as bar:
            progress = bar.add_task("closed loop", total=budget)

            def on_step(rec: dict[str, Any]) -> None:
                if rec["status"] == "rejected":
                    return
                done = run.answered()
                solved = sum(r["status"] == "solved" for r in run.trajectory)
                counts = "/".join(str(rec["counts"][k]) for k in ("basic", "medium", "hard"))
                bar.update(progress, completed=done,
                           description=f"closed loop · {rec['task']} {counts} · solved {solved}/{done}")  # fmt: skip

            try:
                with interrupts.owned_signals():
                    run.run(budget, on_step)
            except LoopError as exc:
                failure = str(exc)
            except (EndpointDown, EndpointConfigError) as exc:
                failure = f"{exc}. Every step before it is saved in {out_dir}; fix the endpoint and rerun the same command to resume"
            except KeyboardInterrupt:
                failure = (f"interrupted: {run.answered()} answered step(s) saved in {out_dir}; rerun the same command "
                           "to resume")  # fmt: skip
                code = interrupts.exit_code(interrupts.received())
                interrupted = True
        trajectory = run.trajectory
        if failure is not None and not trajectory:
            exit_interrupted(failure) if interrupted else fail(failure, code)
        tasks = run.tasks
        summary = summarize(trajectory, tasks, settings.params)
        if trajectory:
            with write_guard(out_dir / "summary.json"), atomic_writer(out_dir / "summary.json") as fh:
                fh.write(json.dumps(summary, indent=2) + "\n")
            try:
                if not interrupted:  # drawing takes seconds; an interrupted run stops now (resuming redraws it)
                    plot(trajectory, out_dir / "trajectory.png", window, tasks)
            except OSError as exc:
                err.print(f"[yellow]warning:[/yellow] no plot: {escape(str(exc))}")
        if summary_json:
            print(json.dumps(summary))
        else:
            print_loop_summary(summary, out_dir)
            if trajectory:
                drawn = "" if interrupted else f" · plot: {out_dir}/trajectory.png"
                out.print(f"trajectory: {out_dir}/trajectory.jsonl{drawn} · summary: {out_dir}/summary.json",
                          markup=False)  # fmt: skip
        if failure is not None:
            exit_interrupted(failure) if interrupted else fail(failure, code)

    @app.command()
    @llm_options(temperature=0.7)
    def rewrite(
        instances: Annotated[Path, typer.Option(help="instances JSONL (template-rendered)")],
        out_path: Annotated[Path, typer.Option("--out", help="instances JSONL with reworded prompts")],
        rewrite_attempts: Annotated[
            int, typer.Option(min=1, help="rewrites tried per instance before the template text is kept")
        ] = 3,
        *,
        llm: LLMOptions,
    ) -> None:
        """Reword the prompts of an instance file with an LLM (the fidelity-guarded llm renderer).

        Every rewrite passes the fidelity guard or the template text is kept; each instance
        records which text it carries and why. Requests run concurrently."""
        from pbsolve.llm.rewriter import rewrite_instance, rewrite_summary

        try:
            config = llm.config(needed_by="rewrite")
        except ValueError as exc:
            fail(str(exc))
        found, errors = read_instances(instances)
        client = LLMClient(config)
        preflight_or_fail(client)
        items = list(found.values())
        done = []
        with write_guard(out_path), atomic_writer(out_path) as fh, progress_bar() as bar:
            progress = bar.add_task("rewriting", total=len(items))
            for _, inst in client.map(lambda i: rewrite_instance(i, client, rewrite_attempts), items):
                fh.write(dumps(inst) + "\n")
                done.append(inst)
                bar.advance(progress)
        out.print(rewrite_summary(done) or "no instance", markup=False)
        if errors:
            raise typer.Exit(1)
