"""``pbsolve perturb`` (near-miss answers with known truth) and ``pbsolve audit`` (how often
a judge is wrong). Registered on the main app by :func:`register`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from pbsolve import interrupts
from pbsolve.cli.common import (
    LLMOptions,
    err,
    exit_interrupted,
    fail,
    llm_options,
    out,
    preflight_or_fail,
    progress_bar,
    read_instances,
    write_guard,
)  # fmt: skip
from pbsolve.jsonl import atomic_writer
from pbsolve.llm.client import EndpointConfigError, EndpointDown, LLMClient

JUDGE_PANEL = "LLM judge endpoint (--judge-model)"
JudgeModelOpt = Annotated[
    str | None,
    typer.Option("--judge-model", help="judge with this model (OpenAI-compatible endpoint) under the rubric protocol",
                 rich_help_panel=JUDGE_PANEL),
]  # fmt: skip
JUDGE_SYSTEM_PROMPT_HELP = "system message (default: the rubric grader's); @FILE reads a file"


def _fmt(figure: str, x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.3f}" if figure == "kappa" else f"{100 * x:.1f}%"


def print_headline(figures: dict[str, Any], out_dir: Path) -> None:
    from pbsolve.audit.report import FIGURES

    c = figures["counts"]
    t = Table(
        title=escape(f"judge audit: {figures['judge'] or 'judge'} · {c['responses']} responses, {c['items']} items")
    )
    t.add_column("figure")
    t.add_column("value", justify="right")
    t.add_column(f"{round(100 * figures['confidence'])}% CI (bootstrap over responses)", justify="right")
    for f in FIGURES:
        ci = figures["ci"].get(f)
        t.add_row(f, _fmt(f, figures[f]), "-" if ci is None else f"{_fmt(f, ci[0])} – {_fmt(f, ci[1])}")
    out.print(t)
    out.print(
        escape(f"parse failures {c['parse_failures']} · responses without verdict {c['responses_without_verdict']} · "
               f"report: {out_dir / 'report.md'}, figures: {out_dir / 'audit.json'}")
    )  # fmt: skip


def _judge_run(config: Any, instances: dict, responses: list, out_dir: Path, resume: bool) -> list[dict[str, Any]]:
    """Judge every response into out_dir/verdicts.jsonl (via .partial; --resume keeps its lines)."""
    from pbsolve.audit.judge import judge_many

    path = out_dir / "verdicts.jsonl"
    partial = path.with_name(path.name + ".partial")
    kept: list[dict[str, Any]] = []
    wanted = {(r.id, r.response_id) for r in responses}
    if resume and partial.exists():
        data = partial.read_bytes()
        data = data[: data.rfind(b"\n") + 1]  # a torn last line is cut
        for raw in data.decode("utf-8", errors="replace").splitlines():
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if isinstance(line, dict) and (line.get("id"), line.get("response_id")) in wanted:
                kept.append(line)
    done = {(ln.get("id"), ln.get("response_id")) for ln in kept}
    todo = [r for r in responses if (r.id, r.response_id) not in done]
    client = LLMClient(config)
    lines = list(kept)
    with write_guard(path), interrupts.owned_signals():
        out_dir.mkdir(parents=True, exist_ok=True)
        fh = open(partial, "w", encoding="utf-8")  # noqa: SIM115 - closed by hand before the rename or the error
        for line in kept:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        try:
            with progress_bar() as bar:
                task = bar.add_task(f"judging ({config.model})", total=len(responses), completed=len(kept))
                jobs = [(instances[r.id], r.response_id, r.response) for r in todo]
                for _, line in judge_many(client, jobs):
                    fh.write(json.dumps(line, ensure_ascii=False) + "\n")
                    fh.flush()
                    lines.append(line)
                    bar.advance(task)
        except (EndpointDown, EndpointConfigError) as exc:
            fh.close()
            fail(f"{exc}. {len(lines)} of {len(responses)} verdicts saved in {partial}; "
                  "fix the endpoint and run the same command with --resume to continue")  # fmt: skip
        except KeyboardInterrupt:
            fh.close()
            exit_interrupted(f"interrupted: {len(lines)} of {len(responses)} verdicts saved in {partial}; "
                         "run the same command with --resume to continue")  # fmt: skip
        fh.flush()
        os.fsync(fh.fileno())
        fh.close()
        os.replace(partial, path)
    s = client.stats
    err.print(f"{len(responses)} verdicts by {config.model} -> {path} · {s.requests} requests ({s.retries} retried), "
              f"{s.usage.total_tokens} tokens", markup=False)  # fmt: skip
    return lines


def register(app: typer.Typer) -> None:
    @app.command("perturb")
    def perturb_cmd(
        instances: Annotated[Path, typer.Option(help="instances JSONL")],
        out_path: Annotated[Path, typer.Option("--out", help="response lines with kind and known truth")] = Path(
            "perturbed.jsonl"
        ),
        seed: Annotated[int, typer.Option(help="the lines of an instance depend only on (seed, instance id)")] = 0,
        kinds: Annotated[
            str | None,
            typer.Option(
                help="keep only these categories or kinds, comma-separated, e.g. break_rule,suboptimal,format"
            ),
        ] = None,
        summary_json: Annotated[bool, typer.Option("--summary-json", help="print the summary as JSON")] = False,
    ) -> None:
        """Near-miss answers with known truth, for auditing judges: one-rule breaks, sub-optimal plans, valid odd formatting, wrong claims."""
        from pbsolve.audit.perturb import CATEGORIES, PerturbReport, perturb_instance

        cats = [k.strip() for k in (kinds or "").split(",") if k.strip()] or None
        if cats:
            bad = [k for k in cats if k.split(":", 1)[0] not in CATEGORIES]
            if bad:
                fail(f"unknown kind(s) {bad}; categories: {', '.join(CATEGORIES)}")
        found, errors = read_instances(instances)
        if not found:
            fail(f"{instances} holds no valid instance")
        report = PerturbReport()
        done = lines = 0
        partial = out_path.with_name(out_path.name + ".partial")
        try:
            with (
                write_guard(out_path),
                interrupts.owned_signals(),
                atomic_writer(out_path) as fh,
                progress_bar() as bar,
            ):
                task = bar.add_task("perturbing", total=len(found))
                for inst in found.values():
                    for p in perturb_instance(inst, seed, cats, report):
                        fh.write(json.dumps(p.line(), ensure_ascii=False) + "\n")
                        lines += 1
                    done += 1
                    bar.advance(task)
        except KeyboardInterrupt:
            exit_interrupted(f"interrupted: {lines} lines for {done} of {len(found)} instances written to {partial}; "
                         "the output depends only on the seed and the instances: run the same command again")  # fmt: skip
        for message in report.messages():
            err.print(f"[yellow]note:[/yellow] {escape(message)}")
        if summary_json:
            print(json.dumps(report.as_dict()))
        else:
            t = Table(
                title=escape(
                    f"{len(report.perturbations)} labelled answers to {report.instances} instances -> {out_path}"
                )
            )
            t.add_column("kind")
            t.add_column("answers", justify="right")
            for kind, n in sorted(report.kinds.items()):
                t.add_row(kind, str(n))
            out.print(t)
        if errors:
            raise typer.Exit(1)

    @app.command("audit")
    @llm_options(temperature=0.0, panel=JUDGE_PANEL, model=False, system_prompt_help=JUDGE_SYSTEM_PROMPT_HELP)
    def audit_cmd(
        instances: Annotated[Path, typer.Option(help="instances JSONL")],
        responses: Annotated[Path, typer.Option(help="responses JSONL (e.g. from `pbsolve perturb`)")],
        out_dir: Annotated[Path, typer.Option("--out", help="folder for report.md, audit.json, plots")] = Path("audit"),
        verdicts: Annotated[
            Path | None,
            typer.Option(help='judge verdicts JSONL: {"id", "response_id", "items": {item: true|false}} per line'),
        ] = None,
        judge_model: JudgeModelOpt = None,
        judge_name: Annotated[str | None, typer.Option(help="name of the judge in the report")] = None,
        bootstrap: Annotated[
            int, typer.Option(min=0, help="bootstrap resamples (of responses) for the intervals")
        ] = 1000,
        confidence: Annotated[float, typer.Option(min=0.5, max=0.999, help="confidence level of the intervals")] = 0.95,
        seed: Annotated[int, typer.Option(help="seed of the bootstrap")] = 0,
        resume: Annotated[
            bool, typer.Option("--resume", help="--judge-model: keep the verdicts of an interrupted run")
        ] = False,
        summary_json: Annotated[
            bool, typer.Option("--summary-json", help="print the headline figures as JSON")
        ] = False,
        *,
        llm: LLMOptions,
    ) -> None:
        """Audit a judge against the checkers: accuracy, false-pass/false-fail rates, All-pass agreement, kappa, with bootstrap CIs and breakdowns."""
        from pbsolve.audit.report import HEADLINE, audit, load_responses, load_verdicts, verdicts_from_lines

        if (verdicts is None) == (judge_model is None):
            fail(
                "give exactly one judge: --verdicts FILE (verdicts of any judge) or --judge-model MODEL (an LLM judge)"
            )
        if verdicts is not None and not verdicts.exists():
            fail(f"{verdicts}: no such file")
        if not responses.exists():
            fail(f"{responses}: no such file")
        config = None
        if judge_model is not None:
            try:
                config = llm.replace(model=judge_model).config(needed_by="--judge-model")
            except ValueError as exc:
                fail(str(exc))
        found, inst_errors = read_instances(instances)
        lines, errors = load_responses(responses, found)
        if not lines:
            for e in errors:
                err.print(f"[yellow]skipped[/yellow] {escape(str(e))}")
            fail(f"{responses} holds no response to a known instance")
        if config is not None:
            preflight_or_fail(config)
            judged = verdicts_from_lines(_judge_run(config, found, lines, out_dir, resume), found)
        else:
            judged, verdict_errors = load_verdicts(verdicts, found, lines)  # type: ignore[arg-type]
            errors.extend(verdict_errors)
        for e in errors:
            err.print(f"[yellow]skipped[/yellow] {escape(str(e))}")
        name = judge_name or judge_model or (verdicts.stem if verdicts else "")
        try:
            with interrupts.owned_signals():
                figures = audit(
                    found, lines, judged, out_dir, judge=name, resamples=bootstrap, seed=seed, confidence=confidence
                )
        except OSError as exc:
            fail(f"cannot write the report to {out_dir}: {exc.strerror or exc}")
        except KeyboardInterrupt:
            exit_interrupted(f"interrupted while computing the audit; no report was finished in {out_dir}"
                         + ("; the verdicts are kept: run the same command to redo the figures" if config else
                            "; run the same command again"))  # fmt: skip
        if summary_json:
            print(json.dumps({f: figures[f] for f in HEADLINE} | {"ci": {f: figures["ci"][f] for f in HEADLINE}}))
        else:
            print_headline(figures, out_dir)
        if errors or inst_errors:
            raise typer.Exit(1)
