"""The ``pbsolve`` command line: the typer ``app`` (the console script) and its core commands
(generate, show, answer, grade, schema, taxonomy, demo). The other command groups live in
:mod:`pbsolve.cli.serve`, :mod:`pbsolve.cli.loop` and :mod:`pbsolve.cli.audit` and are
registered at import; all of them share :mod:`pbsolve.cli.common`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Literal, cast

import typer
from rich.markup import escape
from rich.table import Table

from pbsolve import interrupts
from pbsolve.cli import audit as audit_commands
from pbsolve.cli import loop as loop_commands
from pbsolve.cli import serve as serve_commands
from pbsolve.cli.common import (
    SIZE_HELP,
    LLMOptions,
    build_responder,
    err,
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
from pbsolve.cli.llm import write_answers
from pbsolve.family import families
from pbsolve.generate import (
    GaveUp,
    GenerateOptions,
    ResumeError,
    RunSummary,
    generate,
    imported_data,
    load_checkpoint,
    outcome_record,
    run_header,
    sidecar_path,
)  # fmt: skip
from pbsolve.grade_report import grade_responses
from pbsolve.grade_report import summarize as _summarize
from pbsolve.grading import REWARD_MODES
from pbsolve.jsonl import LineError, atomic_writer, check_writable, dumps
from pbsolve.llm.responders import get_responder, responder_names
from pbsolve.schema import TIERS, Grade
from pbsolve.sources import SourceFile

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Certified planning problems, graded by code.")


def _parse_tiers(tiers: str | None) -> list:
    if not tiers:
        return []
    names = [t.strip() for t in tiers.split(",") if t.strip()]
    bad = [t for t in names if t not in TIERS]
    if bad:
        fail(f"unknown tier(s) {bad}; choose from {', '.join(TIERS)}")
    return names


def run_generate(
    n: int,
    seed: int,
    options: GenerateOptions,
    workers: int,
    path: Path,
    quiet: bool = False,
    start: int = 0,
    resume: bool = False,
) -> RunSummary:
    """Generate exactly ``n`` instances from index ``start`` into ``path``.

    Lines go to ``<path>.partial`` and every index visited to ``<path>.partial.run`` (the
    run's settings, then one line per index); the file is renamed into place when
    complete. SIGINT/SIGTERM stop the run within about a second, keep both files and say
    how to continue: ``--resume`` keeps their agreeing prefix and goes on from there, so
    the finished file is byte-identical to an uninterrupted run."""
    check_writable(path)
    partial = path.with_name(path.name + ".partial")
    sidecar = sidecar_path(partial)
    header = run_header(n, seed, options, start)
    summary = RunSummary(requested=n, start=start)
    if resume:
        try:
            summary.outcomes = load_checkpoint(partial, header)
        except ResumeError as exc:
            fail(str(exc))
    elif partial.exists() and sidecar.exists():
        err.print(
            f"note: replacing the interrupted run in {partial} (use --resume to continue it instead)", markup=False
        )
    kept = len(summary.instances)
    with write_guard(path), interrupts.owned_signals(raise_in_main=False):
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = "a" if resume else "w"
        with (
            open(partial, mode, encoding="utf-8") as fh,
            open(sidecar, mode, encoding="utf-8") as log,
            progress_bar() as bar,
        ):
            if not resume:
                log.write(json.dumps(header) + "\n")
                log.flush()
            task = bar.add_task("certifying", total=n, completed=kept)
            try:
                for outcome in generate(n - kept, seed, options, workers, start=summary.outcomes[-1].index + 1
                                        if summary.outcomes else start):  # fmt: skip
                    if outcome.instance is not None:
                        fh.write(dumps(outcome.instance) + "\n")
                        fh.flush()
                        bar.advance(task)
                    log.write(json.dumps(outcome_record(outcome)) + "\n")
                    log.flush()
                    summary.add(outcome)
            except interrupts.Interrupted as exc:
                fh.close()
                log.close()
                got = len(summary.instances)
                where = f" (indices {start}..{summary.outcomes[-1].index})" if summary.outcomes else ""
                fail(f"interrupted by {interrupts.signal_name(exc.signum)}: {got} of {n} instances{where} written to "
                      f"{partial}; run the same command with --resume to continue (the finished file is "
                      "byte-identical to an uninterrupted run)", interrupts.exit_code(exc.signum))  # fmt: skip
            except GaveUp as exc:
                fh.close()
                log.close()
                fail(f"{exc}. {len(summary.instances)} of {n} instances kept in {partial}")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(partial, path)
        sidecar.unlink(missing_ok=True)
    if not quiet:
        print_generate_summary(summary.as_dict(), path)
    return summary


def print_generate_summary(s: dict, path: Path) -> None:
    t = Table(title=escape(f"generated {s['emitted']} of {s['requested']} -> {path}"))
    cols = ["instances", "basic", "medium", "hard", "stateful", "unique", "value_determinate", "infeasible"]
    t.add_column("task")
    for c in cols:
        t.add_column(c.replace("_", " "), justify="right")
    for task, row in s["by_task"].items():
        t.add_row(task, *(str(row[c]) for c in cols))
    out.print(t)
    out.print("(tier columns count instances with at least one rule of that tier)")
    out.print(
        f"unique optimum: {s['unique_pct']:.1f}% of feasible · infeasible: {s['infeasible_pct']:.1f}% · "
        f"median {s['median_seconds']:.3f} s/instance · uniqueness proof / first solve: {s['uniqueness_vs_first_solve']:.2f}"
    )
    if s["rejects"]:
        out.print("re-sampled or rejected, by reason: " + ", ".join(f"{k} {v}" for k, v in s["rejects"].items()))
    hard = {k: v for k, v in s["hard_kinds"].items() if v["generated"] or v["rejected"]}
    if hard:
        h = Table(title="hard kinds")
        h.add_column("kind")
        h.add_column("generated", justify="right")
        h.add_column("rejected, by reason")
        for kind, v in hard.items():
            h.add_row(kind, str(v["generated"]), ", ".join(f"{r} {n}" for r, n in v["rejected"].items()) or "-")
        out.print(h)
    failed = s["failed_indices"]
    if s["last_index"] is not None:
        out.print(f"indices {s['first_index']}..{s['last_index']} used (the next shard starts at --start {s['next_index']})",
                  markup=False)  # fmt: skip
    if failed:
        out.print(f"{len(failed)} indices produced no certified instance (the run went on to further indices):",
                  style="yellow", markup=False)  # fmt: skip
        for f in failed:
            out.print(f"  index {f['index']}: {', '.join(f['reasons']) or 'no reason recorded'}", markup=False)


@app.command("generate")
@llm_options(temperature=0.7)
def generate_cmd(
    out_path: Annotated[Path, typer.Option("--out", help="output JSONL file")] = Path("instances.jsonl"),
    n: Annotated[
        int,
        typer.Option(
            "--n",
            min=1,
            help="number of instances: exactly this many (indices that certify "
            "nothing are skipped and the run goes on)",
        ),
    ] = 20,
    seed: Annotated[int, typer.Option(help="run seed; instance i depends only on (seed, i)")] = 0,
    start: Annotated[
        int, typer.Option("--start", min=0, help="first index (shards: the summary gives the next shard's --start)")
    ] = 0,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="continue the interrupted run in <out>.partial (same options); "
            "the result is byte-identical to an uninterrupted run",
        ),
    ] = False,
    family: Annotated[str | None, typer.Option(help="restrict to one family")] = None,
    task: Annotated[str | None, typer.Option(help="restrict to one task type")] = None,
    subtask: Annotated[str | None, typer.Option(help="only this subtask (see `pbsolve taxonomy`)")] = None,
    size: Annotated[str, typer.Option(help=SIZE_HELP)] = "default",
    tiers: Annotated[str | None, typer.Option(help="force at least one rule of each listed tier, e.g. hard")] = None,
    include: Annotated[
        str | None, typer.Option(help="constraint ids every instance must carry, comma-separated")
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="worker processes (output is identical for any value)")] = 1,
    time_limit: Annotated[float, typer.Option(help="CP-SAT deterministic time limit per solve")] = 20.0,
    plan_cap: Annotated[int, typer.Option(min=2, help="count optimal plans exactly up to this cap")] = 16,
    summary_json: Annotated[bool, typer.Option("--summary-json", help="print the summary as JSON")] = False,
    renderer: Annotated[
        str, typer.Option(help="template (deterministic) | llm (an LLM rewords the narrative; fidelity-guarded)")
    ] = "template",
    rewrite_attempts: Annotated[
        int, typer.Option(min=1, help="llm renderer: rewrites tried before the template text is kept")
    ] = 3,
    shard_size: Annotated[
        int | None,
        typer.Option(
            "--shard-size",
            min=1,
            help="write a sharded dataset folder (--out DIR): shards of this many indices, a manifest and a "
            "dataset card; the same command continues an interrupted run",
        ),
    ] = None,
    backend: Annotated[
        str, typer.Option(help="sharded runs: local (worker processes) | ray (a local Ray, or --address)")
    ] = "local",
    address: Annotated[
        str | None, typer.Option(help="sharded runs on Ray: the cluster to join (e.g. 10.0.0.5:6379 or auto)")
    ] = None,
    exclude: Annotated[
        list[Path] | None,
        typer.Option(help="sharded runs: leave out problems already in this dataset (folder or manifest.json)"),
    ] = None,
    shard_format: Annotated[str, typer.Option("--format", help="sharded runs: jsonl | parquet")] = "jsonl",
    dedup: Annotated[
        bool, typer.Option("--dedup/--no-dedup", help="sharded runs: drop a problem seen earlier in the run")
    ] = True,
    source_path: Annotated[
        Path | None,
        typer.Option(
            "--from",
            help="build the instances on this published data file (needs --task; the formats: `pbsolve taxonomy`)",
        ),
    ] = None,
    rules: Annotated[
        str,
        typer.Option(
            help="sampled | none: only the task's structural rules (with --from, the file's problem as published)"
        ),
    ] = "sampled",
    *,
    llm: LLMOptions,
) -> None:
    """Generate certified instances (JSON Lines; with --shard-size, a sharded dataset folder)."""
    if rules not in ("sampled", "none"):
        fail(f"unknown --rules {rules!r}; choose sampled or none")
    if rules == "none" and (tiers or include):
        fail("--rules none samples no rules: drop --tiers and --include")
    if source_path is not None and task is None:
        fail("--from reads a data file of one task type: add --task")
    if shard_size is None:
        given = [o for o, on in (("--backend", backend != "local"), ("--address", address), ("--exclude", exclude),
                                 ("--format", shard_format != "jsonl"), ("--no-dedup", not dedup)) if on]  # fmt: skip
        if given:
            fail(f"{', '.join(given)} apply to sharded runs: add --shard-size (and --out DIR)")
    elif resume:
        fail("a sharded run continues by itself: run the same command again, without --resume")
    if shard_format not in ("jsonl", "parquet"):
        fail(f"unknown --format {shard_format!r}; choose jsonl or parquet")
    if backend not in ("local", "ray"):
        fail(f"unknown --backend {backend!r}; choose local or ray")
    if renderer not in ("template", "llm"):
        fail(f"unknown renderer {renderer!r}; choose template or llm")
    size_name = parse_size(size)
    renderer_name = cast(Literal["template", "llm"], renderer)
    try:
        opts = GenerateOptions(
            family=family, task=task, subtask=subtask, size=size_name, force_tiers=_parse_tiers(tiers),
            include=[c.strip() for c in (include or "").split(",") if c.strip()],
            deterministic_time=time_limit, plan_count_cap=plan_cap, renderer=renderer_name, rewrite_attempts=rewrite_attempts,
            rewriter=None if renderer == "template" else llm.config(needed_by="--renderer llm"),
            counts={tier: 0 for tier in TIERS} if rules == "none" else None,
            source=None if source_path is None else SourceFile.read(source_path),
        )  # fmt: skip
        imported = imported_data(opts)  # a file that cannot be imported fails here, before any work
        from pbsolve.sampler import select_tasks

        tasks = select_tasks(family, task, subtask)
        unknown = [c for c in opts.include if not any(c in {x.id for x in t.pool} for t in tasks)]
        if unknown:
            raise ValueError(f"unknown constraint id(s) {unknown}; see `pbsolve taxonomy`")
        from pbsolve.sampler import sample_spec

        sample_spec(
            seed, 0, 0, family, task, size_name, force_tiers=opts.force_tiers, include=opts.include,
            subtask=subtask or (imported.subtask if imported is not None else None),
        )  # fmt: skip
    except (KeyError, ValueError) as exc:
        fail(str(exc).strip("'\""))
    if opts.rewriter is not None:
        preflight_or_fail(opts.rewriter)
    try:
        if shard_size is None:
            check_writable(out_path)
    except OSError as exc:
        fail(f"cannot write {out_path}: {exc.strerror or exc}")
    if shard_size is not None:
        from pbsolve.cli.sharded import run_sharded

        if backend == "local":
            warn_workers(workers)
        fmt = cast(Literal["jsonl", "parquet"], shard_format)
        m = run_sharded(out_path, n, seed, start, opts, shard_size, fmt, dedup, list(exclude or []), backend, workers,
                        address, quiet=summary_json)  # fmt: skip
        if summary_json:
            print(json.dumps(m.totals().model_dump(mode="json") | {"complete": m.complete, "instances": m.instances}))
        return
    warn_workers(workers)
    summary = run_generate(n, seed, opts, workers, out_path, quiet=summary_json, start=start, resume=resume)
    if summary_json:
        print(json.dumps(summary.as_dict()))
    elif opts.renderer == "llm":
        from pbsolve.llm.rewriter import rewrite_summary

        out.print(rewrite_summary(summary.instances) or "llm renderer: no instance", markup=False)


SHOW_WHAT = ("prompt", "certificate", "checklist", "reference", "json", "all")


@app.command()
def show(
    path: Annotated[Path, typer.Argument(help="instances JSONL")],
    instance_id: Annotated[str | None, typer.Option("--id", help="instance id (default: the first)")] = None,
    what: Annotated[str, typer.Option(help="prompt | certificate | checklist | reference | json | all")] = "all",
) -> None:
    """Show one instance: its prompt, certificate, checklist and reference answer."""
    if what not in SHOW_WHAT:
        fail(f"unknown --what {what!r}; choose one of {', '.join(SHOW_WHAT)}")
    found, _errors = read_instances(path)
    if not found:
        fail(f"{path} holds no valid instance")
    inst = found.get(instance_id) if instance_id else next(iter(found.values()))
    if inst is None:
        fail(f"no instance {instance_id!r} in {path}")
    if what == "json":
        print(dumps(inst))
        return
    if what in ("prompt", "all"):
        out.rule(escape(f"{inst.id} · {inst.task} / {inst.subtask} · tiers {', '.join(inst.tiers)}"))
        print(inst.prompt)
    if what in ("certificate", "all"):
        out.rule("certificate")
        print(json.dumps(inst.certificate.model_dump(mode="json"), indent=2))
    if what in ("checklist", "all"):
        t = Table("id", "tier", "rule", "text", title="checklist")
        for it in inst.checklist:
            t.add_row(it.id, it.tier, it.rule, escape(it.text))
        out.print(t)
    if what in ("reference", "all"):
        out.rule("reference answer")
        print(json.dumps(inst.reference, ensure_ascii=False))


@app.command()
@llm_options(temperature=0.0)
def answer(
    instances: Annotated[Path, typer.Option(help="instances JSONL")],
    responder: Annotated[str, typer.Option(help=f"one of: {', '.join(responder_names())}")] = "baseline",
    out_path: Annotated[Path, typer.Option("--out", help="responses JSONL")] = Path("responses.jsonl"),
    resume: Annotated[
        bool, typer.Option("--resume", help="keep the answers in <out>.partial of an interrupted run; answer the rest")
    ] = False,
    *,
    llm: LLMOptions,
) -> None:
    """Answer every instance with a responder; writes response lines (with token usage and raw responses for openai)."""
    try:
        fn, config = build_responder(responder, llm)
    except (KeyError, ValueError) as exc:
        fail(str(exc).strip("'\""))
    found, errors = read_instances(instances)
    if not found:
        fail(f"{instances} holds no valid instance")
    if config is not None:
        preflight_or_fail(fn)
    write_answers(fn, responder, list(found.values()), out_path, resume)
    if errors:
        raise typer.Exit(1)


def grade_file(instances: dict, responses: Path, mode: str) -> tuple[list[Grade], list[LineError]]:
    """Grades of a responses file and its skipped lines (see ``pbsolve.grade_report``)."""
    run = grade_responses(instances, responses, mode)  # type: ignore[arg-type]
    return run.grades, run.errors


def summarize(grades: list[Grade], missing: int = 0) -> dict:
    """n, responses, missing, all_pass, avg_pass, reward (means over n), grader_errors."""
    return _summarize(grades, missing)


MAX_SHOWN = 20


@app.command("grade")
def grade_cmd(
    instances: Annotated[Path, typer.Option(help="instances JSONL")],
    responses: Annotated[Path, typer.Option(help="responses JSONL: {id, response[, response_id]} per line")],
    out_path: Annotated[Path, typer.Option("--out", help="grades JSONL")] = Path("grades.jsonl"),
    mode: Annotated[str, typer.Option(help="reward mode: all_pass | avg_pass | feasible")] = "all_pass",
    allow_missing: Annotated[
        bool,
        typer.Option(
            "--allow-missing",
            help="leave instances without a response out of the means (default: they count as failures)",
        ),
    ] = False,
    summary_json: Annotated[
        bool,
        typer.Option(
            "--summary-json",
            help="print the summary (n, all_pass, avg_pass, reward, mode, missing, duplicates, ...) as JSON",
        ),
    ] = False,
) -> None:
    """Grade responses against certified instances.

    Instances without a response count as failures (unless --allow-missing); a line that
    repeats an earlier (id, response_id) is skipped. Exit 1 if lines were skipped or no
    response matched an instance, 2 if the grader failed on any response (those grades
    carry `grader_error` and are no verdict on the answer).
    """
    if mode not in REWARD_MODES:
        fail(f"unknown reward mode {mode!r}; choose one of {', '.join(REWARD_MODES)}")
    if not responses.exists():
        fail(f"{responses}: no such file")
    found, inst_errors = read_instances(instances)
    run = grade_responses(found, responses, mode)
    grades, errors = run.grades, run.errors
    for e in errors[:MAX_SHOWN]:
        err.print(f"[yellow]skipped[/yellow] {escape(str(e))}")
    if len(errors) > MAX_SHOWN:
        err.print(f"[yellow]... and {len(errors) - MAX_SHOWN} more skipped line(s)[/yellow]")
    with write_guard(out_path), atomic_writer(out_path) as fh:
        for g in grades:
            fh.write(json.dumps(g.model_dump(mode="json", exclude_none=False), ensure_ascii=False) + "\n")
    counted = 0 if allow_missing else len(run.missing)
    s = summarize(grades, counted)
    failed = run.grader_errors
    if summary_json:
        print(json.dumps({
            **s, "mode": mode, "missing": len(run.missing), "missing_counted": not allow_missing,
            "duplicates": run.duplicates, "skipped": len(errors) - run.duplicates, "instances": len(found),
        }))  # fmt: skip
    else:
        print_grade_table({"responses": grades}, found, {"responses": [] if allow_missing else run.missing})
    if run.missing:
        how = "left out (--allow-missing)" if allow_missing else "counted as failures"
        shown = ", ".join(run.missing[:5]) + (" ..." if len(run.missing) > 5 else "")
        err.print(
            f"[yellow]warning:[/yellow] {len(run.missing)} of {len(found)} instance(s) have no response, {how}: {escape(shown)}"
        )
    if run.duplicates:
        err.print(f"[yellow]warning:[/yellow] {run.duplicates} duplicate response line(s) skipped")
    for g in failed[:MAX_SHOWN]:
        err.print(f"[red]grader error[/red] {escape(g.id)}: {escape(g.grader_error or '')}")
    if failed:
        fail(
            f"the grader failed on {len(failed)} of {len(grades)} response(s); their reward 0 says nothing about the answers",
            code=2,
        )
    if found and not grades:
        fail(f"no response in {responses} matched an instance of {instances}")
    if errors or inst_errors:
        raise typer.Exit(1)


def _cell(grades: list[Grade], missing: int) -> str:
    s = summarize(grades, missing)
    if s["n"] == 0:
        return "-  (n=0)"
    notes = [f"n={s['n']}"]
    if missing:
        notes.append(f"{missing} missing")
    if s["grader_errors"]:
        notes.append(f"{s['grader_errors']} grader error(s)")
    return f"{100 * s['all_pass']:.1f}% / {100 * s['avg_pass']:.1f}% / {s['reward']:.3f}  ({', '.join(notes)})"


def print_grade_table(
    runs: dict[str, list[Grade]], instances: dict, missing: dict[str, list[str]] | None = None
) -> None:
    """One column per run: All-pass / Avg-pass / mean reward per task; ``missing`` (run ->
    instance ids without a response) are counted as failures in their task's row."""
    missing = missing or {}
    modes = sorted({g.reward_mode for gs in runs.values() for g in gs})
    t = Table(title=f"grades (All-pass / Avg-pass / mean reward; mode {', '.join(modes) or '-'})")
    t.add_column("task")
    for name in runs:
        t.add_column(name, justify="right")
    tasks = sorted(
        {instances[g.id].task for gs in runs.values() for g in gs}
        | {instances[i].task for ms in missing.values() for i in ms}
    )
    for task in [*tasks, "all"]:
        row = [task]
        for name, gs in runs.items():
            sel = [g for g in gs if task == "all" or instances[g.id].task == task]
            gone = [i for i in missing.get(name, []) if task == "all" or instances[i].task == task]
            row.append(_cell(sel, len(gone)))
        t.add_row(*row)
    out.print(t)


@app.command()
def schema(
    out_path: Annotated[Path | None, typer.Option("--out", help="write here instead of stdout")] = None,
) -> None:
    """Print the JSON Schema of an instance line (docs/instance.schema.json is this output)."""
    from pbsolve.schema import instance_json_schema

    text = json.dumps(instance_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if out_path is None:
        sys.stdout.write(text)
    else:
        with write_guard(out_path), atomic_writer(out_path) as fh:
            fh.write(text)


@app.command()
def taxonomy() -> None:
    """List families, task types, subtasks and constraint pools with counts."""
    t = Table(title="pbsolve taxonomy")
    for col in ("family", "task", "subtasks", "basic", "medium", "hard", "stateful"):
        t.add_column(col)
    for fam in families().values():
        for task in fam.spec.tasks:
            t.add_row(
                fam.spec.id, task.id, str(len(task.subtasks)),
                *(str(len(task.pool_of(tier))) for tier in TIERS),
            )  # fmt: skip
    out.print(t)
    for fam in families().values():
        for task in fam.spec.tasks:
            out.print(f"[bold]{task.id}[/bold] subtasks: {', '.join(s.id for s in task.subtasks)}")
            source_format = fam.source_format(task.id)
            if source_format is not None:
                out.print(f"  --from FILE reads: {escape(source_format)}")
            for tier in TIERS:
                pool = task.pool_of(tier)
                if pool:
                    out.print(f"  {tier}: " + ", ".join(c.id + ("*" if c.id in task.base_rules else "") for c in pool))
    out.print("(* = always present)")


@app.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="folder for the sample dataset")] = Path("demo"),
    n: Annotated[int, typer.Option("--n", min=1)] = 36,
    seed: int = 0,
    workers: Annotated[int, typer.Option(min=1)] = 2,
) -> None:
    """The main job: certify a sample dataset, answer it with oracle and baseline, grade both."""
    inst_path = out_dir / "instances.jsonl"
    warn_workers(workers)
    summary = run_generate(n, seed, GenerateOptions(), workers, inst_path)
    found = {i.id: i for i in summary.instances}
    runs: dict[str, list[Grade]] = {}
    for name in ("oracle", "baseline"):
        fn = get_responder(name)
        resp_path, grade_path = out_dir / f"responses.{name}.jsonl", out_dir / f"grades.{name}.jsonl"
        with write_guard(resp_path), atomic_writer(resp_path) as fh:
            for inst in found.values():
                fh.write(json.dumps({"id": inst.id, "response_id": f"{name}-{inst.id}", "response": fn(inst)}) + "\n")
        grades, _errors = grade_file(found, resp_path, "all_pass")
        with write_guard(grade_path), atomic_writer(grade_path) as fh:
            for g in grades:
                fh.write(json.dumps(g.model_dump(mode="json")) + "\n")
        runs[name] = grades
    print_grade_table(runs, found)
    oracle_ok = all(g.all_pass for g in runs["oracle"])
    out.print(f"files in {escape(str(out_dir))}/ · oracle all-pass on every instance: {'yes' if oracle_ok else 'NO'}")
    if not oracle_ok:
        raise typer.Exit(1)


# Command groups that live in their own modules.
serve_commands.register(app)
loop_commands.register(app)
audit_commands.register(app)
