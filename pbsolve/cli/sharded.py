"""``pbsolve generate --shard-size K``: a sharded dataset folder (pbsolve.scale), on local
processes or Ray, with a live progress bar, a clear message for every way it can stop,
and the summary read back from the manifest."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from pbsolve import interrupts
from pbsolve.cli.common import err, fail, out
from pbsolve.generate import GenerateOptions
from pbsolve.scale import manifest as mf
from pbsolve.scale.backends import make_backend
from pbsolve.scale.card import command_line
from pbsolve.scale.driver import NoInstances, ShardFailed, build_dataset, drawn_tasks, excluded_datasets
from pbsolve.scale.driver import Progress as RunProgress
from pbsolve.scale.manifest import ManifestError, RunKey, ShardFormat


def _bar() -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.fields[detail]}"), console=err, transient=False, disable=not err.is_terminal,
    )  # fmt: skip


def run_sharded(
    folder: Path,
    n: int,
    seed: int,
    start: int,
    options: GenerateOptions,
    shard_size: int,
    fmt: ShardFormat,
    dedup: bool,
    exclude: list[Path],
    backend: str,
    workers: int,
    address: str | None,
    quiet: bool = False,
) -> mf.Manifest:
    """Build or continue the dataset in ``folder``; exits non-zero (keeping every written
    shard) on an interrupt, a failing shard, a folder of another run or a full disk."""
    if folder.exists() and not folder.is_dir():
        fail(f"--out {folder} is a file; a sharded run writes a folder (shards, manifest.json, README.md)")
    try:
        key = RunKey(seed=seed, start=start, n=n, shard_size=shard_size, format=fmt, dedup=dedup,
                     options=options.model_dump(mode="json"), tasks=drawn_tasks(options),
                     exclude=excluded_datasets(exclude))  # fmt: skip
        make = lambda: make_backend(backend, workers, address)  # noqa: E731
        if backend == "local" and address:
            make()  # refuse now, with the backend's message
    except (ManifestError, ValueError) as exc:
        fail(str(exc))
    with _bar() as bar, interrupts.owned_signals(raise_in_main=False):
        task = bar.add_task("certifying", total=n, detail="")

        def show(p: RunProgress) -> None:
            bar.update(task, completed=p.instances, detail=f"{p.shards_done} shards · {p.shards_running} running · "
                       f"{p.rate:.1f} inst/s · {p.rejects} rejects · {p.duplicates} duplicates")  # fmt: skip

        try:
            m = build_dataset(folder, key, options, make, command_line(sys.argv[1:]), show)
        except ManifestError as exc:
            fail(str(exc))
        except RuntimeError as exc:  # e.g. Ray not installed
            fail(str(exc))
        except interrupts.Interrupted as exc:
            got = mf.load(folder)
            fail(f"interrupted by {interrupts.signal_name(exc.signum)}: {got.instances} of {n} instances in "
                 f"{len(got.shards)} complete shard(s) kept in {folder}; run the same command to continue (the "
                 "finished dataset is byte-identical to an uninterrupted run)", interrupts.exit_code(exc.signum))  # fmt: skip
        except ShardFailed as exc:
            fail(f"{exc}; the {len(mf.load(folder).shards)} shard(s) before it are kept in {folder}; run the same "
                 "command to try again")  # fmt: skip
        except NoInstances as exc:
            fail(f"{exc}; {mf.load(folder).instances} instances kept in {folder}")
        except OSError as exc:
            fail(f"cannot write {folder}: {exc.strerror or exc}; complete shards are kept")
    if not quiet:
        print_sharded_summary(folder, m)
    return m


def print_sharded_summary(folder: Path, m: mf.Manifest) -> None:
    t = m.totals()
    out.print(f"dataset {folder}: {m.instances} instances in {len(m.shards)} shard(s)", markup=False)
    table = Table()
    for col in ("task", "instances"):
        table.add_column(col, justify="right" if col != "task" else "left")
    for task, count in t.stats.task.items():
        table.add_row(task, str(count))
    out.print(table)
    det = t.stats.determinacy
    feasible = m.instances - det.get("infeasible", 0)
    out.print(
        f"unique optimum: {100.0 * det.get('unique', 0) / max(feasible, 1):.1f}% of feasible · infeasible: "
        f"{100.0 * det.get('infeasible', 0) / max(m.instances, 1):.1f}%",
        markup=False,
    )
    out.print(f"dropped: {t.duplicates} duplicate(s), {t.excluded} in an excluded dataset · indices "
              f"{m.run.start}..{t.hi - 1}", markup=False)  # fmt: skip
    out.print(f"manifest: {folder / mf.MANIFEST} · card: {folder / 'README.md'}", markup=False)
