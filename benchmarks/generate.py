"""Generation throughput benchmark: certified instances per second, per task type.

For every task type (``pbsolve.family.all_tasks()``) it builds indices 0..n-1 with
``build_instance(seed, index, GenerateOptions(task=..., size=...))`` in this process (one
core) and reports:

* certified instances per second (emitted instances / wall seconds) and emitted/requested;
* rejects per emitted instance, with every reject reason and its count (``Outcome.rejects``);
* % unique optimum among feasible instances and % infeasible instances;
* median, p90 and max seconds per index (one ``build_instance`` call, re-samples included);
* uniqueness-proof time / first-solve time (sum of ``Outcome.uniqueness_s`` over sum of
  ``Outcome.first_solve_s``, both measured in this run, both CPU seconds:
  ``pbsolve.certify.phase_clock``), with a 95% bootstrap interval over the task's indices
  (``ratio_interval``): a few slow proofs decide the ratio of 30 indices, and the interval
  shows how far another sample of the same size could move it;
* peak resident memory (``resource.getrusage``).

With ``--workers W`` (W > 1) it also runs the same jobs through
``pbsolve.generate.generate(n, seed, options, W)`` and reports overall instances per second,
pool start-up included, and whether the output equals the single-core output.

For task types with a second, MILP back-end (a family module ``pbsolve.models.<id>.milp``
exposing ``TASKS`` and ``optimum(draft)``; PuLP installed), a separate section re-solves
the instances just certified: the lexicographic optimum by CP-SAT
(``pbsolve.certify.optimum``, one weighted solve) and by the MILP (stage by stage), both
timed with model building included, on the same instances; it reports both times, the
MILP / CP-SAT time ratio and whether the two optima agree (``--no-milp`` skips it).

Targets, each printed with its figure (``targets()``): at default sizes, >= 25 certified
instances per second per core over all task types and >= 15 on every task type (issue 18;
``../shared/FAMILY_DONE.md`` asks >= 10 per task type), and a uniqueness proof costing at
most 1.5 first solves on every task type.

With reasoning-gym installed (the optional ``bench`` extra), its ``zebra_puzzles`` (the
one generator of that peer that proves uniqueness) generates the same number of items in
the same run, and the ratio of the two rates is printed (``--no-peer`` skips it).

    python benchmarks/generate.py [--n 30] [--seed 0] [--size default] [--workers 2] [--no-milp] [--json]
                                  [--task meeting_planning ...] [--no-peer]
"""

from __future__ import annotations

import argparse
import importlib
import json
import resource
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from pbsolve.certify import SolverLimits, optimum
from pbsolve.family import Draft, all_tasks, family
from pbsolve.generate import GenerateOptions, Outcome, build_instance, generate
from pbsolve.kit import SIZE_NAMES
from pbsolve.schema import Size

TARGET_PER_SECOND = 25.0  # certified instances/s per core, all task types together
TARGET_TASK_PER_SECOND = 15.0  # ... and on every task type
FAMILY_DONE_PER_SECOND = 10.0  # the definition of done of a task type
TARGET_UNIQUENESS_RATIO = 1.5  # uniqueness proof time / first solve time, every task type
BOOTSTRAP_RESAMPLES = 2000  # resamples of a task's indices for the ratio's interval


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolation percentile, q in [0, 100]; 0.0 for no values."""
    xs = sorted(values)
    if not xs:
        return 0.0
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident set size in MiB (ru_maxrss is KiB on Linux, bytes on macOS)."""
    rss = resource.getrusage(who).ru_maxrss
    return rss / 2**20 if sys.platform == "darwin" else rss / 2**10


def ratio_interval(
    uniq: Sequence[float], first: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0
) -> tuple[float, float]:
    """95% percentile-bootstrap interval of sum(uniq) / sum(first) over paired samples
    (one pair per index), seeded so the same run prints the same interval; (0, 0) when
    there is nothing to resample."""
    u, f = np.asarray(uniq, dtype=float), np.asarray(first, dtype=float)
    if len(u) == 0 or not f.sum():
        return 0.0, 0.0
    picks = np.random.default_rng(seed).integers(0, len(u), size=(resamples, len(u)))
    firsts = f[picks].sum(axis=1)
    ratios = np.divide(u[picks].sum(axis=1), firsts, out=np.zeros(resamples), where=firsts > 0)
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    return float(lo), float(hi)


@dataclass
class Row:
    task: str
    requested: int
    emitted: int
    wall_s: float
    per_second: float
    rejects_per_emitted: float
    reject_reasons: dict[str, int]
    unique_pct: float
    infeasible_pct: float
    median_s: float
    p90_s: float
    max_s: float
    uniqueness_vs_first_solve: float
    uniqueness_ratio_ci: tuple[float, float] = (0.0, 0.0)  # 95% bootstrap interval (ratio_interval)


def summarize(task: str, outcomes: list[Outcome], wall_s: float) -> Row:
    instances = [o.instance for o in outcomes if o.instance is not None]
    feasible = [i for i in instances if i.certificate.status == "optimal"]
    unique = sum(i.certificate.determinacy == "unique" for i in feasible)
    reasons = Counter(r for o in outcomes for r in o.rejects)
    first = sum(o.first_solve_s for o in outcomes)
    uniq = sum(o.uniqueness_s for o in outcomes)
    secs = [o.seconds for o in outcomes]
    return Row(
        task=task,
        requested=len(outcomes),
        emitted=len(instances),
        wall_s=wall_s,
        per_second=len(instances) / wall_s if wall_s else 0.0,
        rejects_per_emitted=sum(reasons.values()) / max(len(instances), 1),
        reject_reasons=dict(reasons.most_common()),
        unique_pct=100.0 * unique / max(len(feasible), 1),
        infeasible_pct=100.0 * (len(instances) - len(feasible)) / max(len(instances), 1),
        median_s=percentile(secs, 50),
        p90_s=percentile(secs, 90),
        max_s=max(secs, default=0.0),
        uniqueness_vs_first_solve=uniq / first if first else 0.0,
        uniqueness_ratio_ci=ratio_interval([o.uniqueness_s for o in outcomes], [o.first_solve_s for o in outcomes]),
    )


@dataclass
class Report:
    n: int
    seed: int
    size: Size
    tasks: list[Row] = field(default_factory=list)
    overall: Row | None = None
    peak_rss_mib: float = 0.0
    multiprocess: dict[str, Any] | None = None
    milp: list[dict[str, Any]] = field(default_factory=list)
    peer: dict[str, Any] | None = None
    target_per_second: float = TARGET_PER_SECOND


def milp_backends() -> dict[str, Any]:
    """task id -> the ``milp`` module of its family, for families that ship one."""
    found: dict[str, Any] = {}
    for task in all_tasks():
        try:
            module = importlib.import_module(f"pbsolve.models.{task.family}.milp")
        except ImportError:  # no MILP back-end for the family, or PuLP missing
            continue
        if task.id in getattr(module, "TASKS", ()):
            found[task.id] = module
    return found


def run_milp(task: str, module: Any, outcomes: list[Outcome]) -> dict[str, Any]:
    """CP-SAT and MILP optima of the same certified instances, each timed."""
    cp_times: list[float] = []
    milp_times: list[float] = []
    milp_solve: list[float] = []
    agree = 0
    backend = ""
    for o in outcomes:
        inst = o.instance
        if inst is None:
            continue
        fam = family(inst.family)
        draft = Draft(spec=inst.spec, data=inst.data, rules=list(inst.rules), objective=list(inst.objective))
        t0 = time.perf_counter()
        cp = optimum(fam, draft, SolverLimits())
        cp_times.append(time.perf_counter() - t0)
        result = module.optimum(draft)
        milp_times.append(result.seconds)
        milp_solve.append(getattr(result, "solve_seconds", result.seconds))
        backend = result.backend
        agree += result.values == cp
    cp_total, milp_total = sum(cp_times), sum(milp_times)
    return {
        "task": task,
        "instances": len(cp_times),
        "agree": agree,
        "backend": backend,
        "cp_sat_s": cp_total,
        "milp_s": milp_total,
        "milp_solver_s": sum(milp_solve),
        "cp_sat_median_s": percentile(cp_times, 50),
        "milp_median_s": percentile(milp_times, 50),
        "ratio": milp_total / cp_total if cp_total else 0.0,
        "median_ratio": percentile([m / c for m, c in zip(milp_times, cp_times) if c > 0], 50),
    }


PEER_TASK = "zebra_puzzles"  # reasoning-gym's one generator that proves its answer unique


def run_peer(n: int, seed: int) -> dict[str, Any] | None:
    """reasoning-gym's ``zebra_puzzles`` generating ``n`` items in this process, timed like
    a task type here (dataset creation and every item); None when reasoning-gym is not
    installed (``pip install -e '.[bench]'``)."""
    try:
        import reasoning_gym  # type: ignore[import-not-found]
    except ImportError:
        return None
    t0 = time.perf_counter()
    dataset = reasoning_gym.create_dataset(PEER_TASK, size=n, seed=seed)
    items = [dataset[i] for i in range(n)]
    wall = time.perf_counter() - t0
    version = getattr(reasoning_gym, "__version__", "?")
    return {"peer": f"reasoning-gym {version} {PEER_TASK}", "items": len(items), "wall_s": wall,
            "per_second": len(items) / wall if wall else 0.0}  # fmt: skip


def run(
    n: int,
    seed: int,
    size: Size,
    workers: int,
    progress: bool,
    milp: bool = True,
    only: list[str] | None = None,
    peer: bool = True,
) -> Report:
    report = Report(n=n, seed=seed, size=size)
    everything: list[Outcome] = []
    wall_total = 0.0
    task_ids = [t.id for t in all_tasks()]
    if only:
        unknown = sorted(set(only) - set(task_ids))
        if unknown:
            raise SystemExit(f"unknown task type(s): {', '.join(unknown)}; known: {', '.join(task_ids)}")
        task_ids = [t for t in task_ids if t in only]
    backends = milp_backends() if milp else {}
    for task in task_ids:
        options = GenerateOptions(task=task, size=size)
        t0 = time.perf_counter()
        outcomes = [build_instance(seed, i, options) for i in range(n)]
        wall = time.perf_counter() - t0
        report.tasks.append(summarize(task, outcomes, wall))
        everything += outcomes
        if milp and task in backends:
            report.milp.append(run_milp(task, backends[task], outcomes))
        wall_total += wall
        if progress:
            print(f"  {task}: {wall:.1f} s", file=sys.stderr)
    report.overall = summarize("overall", everything, wall_total)
    report.peak_rss_mib = peak_rss_mib()
    if peer:
        report.peer = run_peer(n, seed)
    if workers > 1:
        report.multiprocess = run_workers(n, seed, size, workers, task_ids, everything, wall_total)
    return report


def run_workers(
    n: int, seed: int, size: Size, workers: int, task_ids: list[str], single: list[Outcome], single_wall: float
) -> dict[str, Any]:
    """The same jobs through ``generate(..., workers)``, one pool per task type."""
    t0 = time.perf_counter()
    outcomes: list[Outcome] = []
    for task in task_ids:
        outcomes += generate(n, seed, GenerateOptions(task=task, size=size), workers)
    wall = time.perf_counter() - t0
    emitted = sum(o.instance is not None for o in outcomes)
    dump = [o.instance.model_dump_json() if o.instance else None for o in outcomes]
    single_dump = [o.instance.model_dump_json() if o.instance else None for o in single]
    single_rate = sum(o.instance is not None for o in single) / single_wall if single_wall else 0.0
    rate = emitted / wall if wall else 0.0
    return {
        "workers": workers,
        "emitted": emitted,
        "wall_s": wall,
        "per_second": rate,
        "speedup_vs_single": rate / single_rate if single_rate else 0.0,
        "identical_to_single": dump == single_dump,
        "peak_rss_children_mib": peak_rss_mib(resource.RUSAGE_CHILDREN),
    }


COLUMNS = [
    ("task", "task", "{}"),
    ("inst/s", "per_second", "{:.2f}"),
    ("emitted", None, ""),
    ("wall s", "wall_s", "{:.1f}"),
    ("rej/inst", "rejects_per_emitted", "{:.2f}"),
    ("unique%", "unique_pct", "{:.1f}"),
    ("infeas%", "infeasible_pct", "{:.1f}"),
    ("median s", "median_s", "{:.3f}"),
    ("p90 s", "p90_s", "{:.3f}"),
    ("max s", "max_s", "{:.2f}"),
    ("uniq/first", "uniqueness_vs_first_solve", "{:.2f}"),
    ("95% CI", "uniqueness_ratio_ci", "{0[0]:.2f}-{0[1]:.2f}"),
]


def format_text(rep: Report) -> str:
    rows = [*rep.tasks, *([rep.overall] if rep.overall else [])]
    cells = [[h for h, _, _ in COLUMNS]]
    for r in rows:
        cells.append(
            [f"{r.emitted}/{r.requested}" if key is None else fmt.format(getattr(r, key)) for _, key, fmt in COLUMNS]
        )
    widths = [max(len(row[c]) for row in cells) for c in range(len(COLUMNS))]
    lines = [f"generate benchmark: n={rep.n} per task, seed={rep.seed}, size={rep.size}, 1 process"]
    for k, row in enumerate(cells):
        lines.append("  ".join(v.ljust(w) if c == 0 else v.rjust(w) for c, (v, w) in enumerate(zip(row, widths))))
        if k == 0 or k == len(cells) - 2:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("reject reasons (count):")
    for r in rep.tasks:
        reasons = ", ".join(f"{k} {v}" for k, v in r.reject_reasons.items()) or "none"
        lines.append(f"  {r.task}: {reasons}")
    lines.append(f"peak RSS: {rep.peak_rss_mib:.1f} MiB")
    if rep.overall is not None:
        note = "" if rep.size == "default" else f" (targets are for size=default; this run used size={rep.size})"
        lines.append(f"targets{note}:")
        lines += [f"  {line}" for line in targets(rep)]
    if rep.milp:
        lines.append("")
        lines.append("MILP vs CP-SAT, lexicographic optimum of the same certified instances (model building included):")
        head = [
            "task",
            "n",
            "agree",
            "backend",
            "cp-sat s",
            "milp s",
            "(solver)",
            "cp med s",
            "milp med s",
            "milp/cp",
            "median ratio",
        ]
        rows = [head] + [
            [m["task"], str(m["instances"]), str(m["agree"]), m["backend"], f"{m['cp_sat_s']:.2f}", f"{m['milp_s']:.2f}",
             f"{m['milp_solver_s']:.2f}", f"{m['cp_sat_median_s']:.3f}", f"{m['milp_median_s']:.3f}", f"{m['ratio']:.2f}",
             f"{m['median_ratio']:.2f}"]
            for m in rep.milp
        ]  # fmt: skip
        widths = [max(len(r[c]) for r in rows) for c in range(len(head))]
        for k, row in enumerate(rows):
            lines.append("  ".join(v.ljust(w) if c == 0 else v.rjust(w) for c, (v, w) in enumerate(zip(row, widths))))
            if k == 0:
                lines.append("  ".join("-" * w for w in widths))
    if rep.overall is not None:
        lines.append(peer_line(rep))
    if rep.multiprocess:
        m = rep.multiprocess
        lines.append(
            f"{m['workers']} workers: {m['per_second']:.2f} instances/s ({m['emitted']} in {m['wall_s']:.1f} s, "
            f"x{m['speedup_vs_single']:.2f} vs 1 process), output identical: {'yes' if m['identical_to_single'] else 'NO'}, "
            f"peak RSS of a worker: {m['peak_rss_children_mib']:.1f} MiB"
        )
    return "\n".join(lines)


def peer_line(rep: Report) -> str:
    """The peer's rate next to ours, as one ratio (both measured in this run)."""
    assert rep.overall is not None
    if rep.peer is None:
        return f"peer: reasoning-gym not installed (pip install -e '.[bench]' to time {PEER_TASK} side by side)"
    p, ours = rep.peer, rep.overall.per_second
    ratio = ours / p["per_second"] if p["per_second"] else 0.0
    return (f"peer: {p['peer']} {p['per_second']:.2f} items/s ({p['items']} in {p['wall_s']:.1f} s); pbsolve "
            f"{ours:.2f} certified instances/s: x{ratio:.2f}")  # fmt: skip


def targets(rep: Report) -> list[str]:
    """One line per target: the target, the measured figure, meets or MISSES, and the
    task types that miss it."""
    assert rep.overall is not None

    def line(what: str, ok: bool, figure: str, misses: Sequence[Row] = (), key: str = "") -> str:
        def one(r: Row) -> str:
            ci = (
                f" (95% CI {r.uniqueness_ratio_ci[0]:.2f}-{r.uniqueness_ratio_ci[1]:.2f})"
                if key.startswith("uniq")
                else ""
            )
            return f"{r.task} {getattr(r, key):.2f}{ci}"

        which = ", ".join(one(r) for r in misses)
        return f"{what}: {'meets' if ok else 'MISSES'} ({figure}{'; misses: ' + which if which else ''})"

    slow = [r for r in rep.tasks if r.per_second < TARGET_TASK_PER_SECOND]
    undone = [r for r in rep.tasks if r.per_second < FAMILY_DONE_PER_SECOND]
    costly = [r for r in rep.tasks if r.uniqueness_vs_first_solve > TARGET_UNIQUENESS_RATIO]
    slowest = min(rep.tasks, key=lambda r: r.per_second)
    dearest = max(rep.tasks, key=lambda r: r.uniqueness_vs_first_solve)
    overall = rep.overall.per_second
    return [
        line(f">= {TARGET_PER_SECOND:g} certified instances/s per core, all task types", overall >= TARGET_PER_SECOND,
             f"{overall:.2f}"),
        line(f">= {TARGET_TASK_PER_SECOND:g} on every task type", not slow,
             f"slowest {slowest.task} {slowest.per_second:.2f}", slow, "per_second"),
        line(f">= {FAMILY_DONE_PER_SECOND:g} on every task type (FAMILY_DONE)", not undone,
             f"slowest {slowest.task} {slowest.per_second:.2f}", undone, "per_second"),
        line(f"uniqueness proof <= {TARGET_UNIQUENESS_RATIO:g} x first solve on every task type", not costly,
             f"highest {dearest.task} {dearest.uniqueness_vs_first_solve:.2f}", costly, "uniqueness_vs_first_solve"),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--n", type=int, default=30, help="indices per task type (default 30)")
    ap.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    ap.add_argument("--size", choices=SIZE_NAMES, default="default")
    ap.add_argument("--workers", type=int, default=1, help="also measure generate() with this many processes")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    ap.add_argument("--no-milp", action="store_true", help="skip the MILP vs CP-SAT section")
    ap.add_argument("--task", action="append", help="only this task type (repeatable; default: every task type)")
    ap.add_argument("--no-peer", action="store_true", help=f"skip reasoning-gym's {PEER_TASK} (run when installed)")
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error("--n must be at least 1")
    rep = run(
        args.n,
        args.seed,
        args.size,
        args.workers,
        progress=not args.json,
        milp=not args.no_milp,
        only=args.task,
        peer=not args.no_peer,
    )
    print(json.dumps(asdict(rep)) if args.json else format_text(rep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
