"""Scale-out benchmark: sharded generation on local processes and on a local Ray.

1. **Throughput.** The same sharded dataset (``--n`` instances, ``--size``, shards of
   ``--shard-size`` indices) is built with 1 and 2 workers on the process backend and on
   a local Ray; instances per second for each, and the Ray overhead ratio (process rate /
   Ray rate at the same worker count; target <= 1.1). Ray's start-up is timed apart and
   not counted in its rate (a cluster starts once for many runs). Every build's bytes are
   compared with the first one's.
2. **A big build** (``--big N``, default 100,000 instances; ``--big 0`` skips it) on the
   process backend with ``--workers``: wall time, instances per second, the driver's peak
   resident memory and its resident memory sampled along the run (flat in the dataset
   size: the driver holds only shards in flight), and the output size per instance.
3. **The arithmetic for 10 million instances** on clusters of N nodes x C cores, from the
   measured per-core rate and the measured Ray overhead.

    python benchmarks/scale.py [--n 60] [--size tiny] [--shard-size 10] [--big 100000]
                               [--big-size tiny] [--workers 2] [--no-ray] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pbsolve.generate import GenerateOptions
from pbsolve.scale import manifest as mf
from pbsolve.scale.backends import Backend, LocalBackend, RayBackend
from pbsolve.scale.driver import Progress, build_dataset, drawn_tasks
from pbsolve.scale.manifest import RunKey

TARGET_RAY_OVERHEAD = 1.1
CLUSTERS = ((1, 2), (4, 16), (16, 32), (64, 64))  # (nodes, cores per node)
TEN_MILLION = 10_000_000


@dataclass
class Throughput:
    backend: str
    workers: int
    instances: int
    seconds: float
    per_second: float
    same_bytes: bool
    startup_s: float = 0.0


@dataclass
class BigBuild:
    instances: int
    size: str
    workers: int
    shard_size: int
    seconds: float
    per_second: float
    peak_rss_mib: float
    rss_samples_mib: list[tuple[int, float]] = field(default_factory=list)  # (instances written, MiB)
    output_bytes: int = 0
    bytes_per_instance: float = 0.0


def rss_mib() -> float:
    """The driver's resident memory now (Linux /proc; the peak elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return peak_rss_mib()


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _key(n: int, size: str, shard_size: int, seed: int) -> tuple[RunKey, GenerateOptions]:
    opts = GenerateOptions(size=size)  # type: ignore[arg-type]
    key = RunKey(seed=seed, start=0, n=n, shard_size=shard_size, format="jsonl", dedup=True,
                 options=opts.model_dump(mode="json"), tasks=drawn_tasks(opts))  # fmt: skip
    return key, opts


def _bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in mf.shard_files(folder, mf.load(folder)))


def _warm_worker() -> None:
    """Start a Ray worker, import what a shard needs and load the family registry (counted
    as start-up, as the process backend's workers inherit all of it from the driver)."""
    import pbsolve.scale.shard  # noqa: F401
    from pbsolve.family import families

    families()

    time.sleep(0.5)  # held long enough that each of the first tasks gets a worker of its own


def timed_build(folder: Path, key: RunKey, opts: GenerateOptions, make: Callable[[], Backend],
                on_progress: Callable[[Progress], None] | None = None) -> float:  # fmt: skip
    t0 = time.perf_counter()
    build_dataset(folder, key, opts, make, "benchmarks/scale.py", on_progress)
    return time.perf_counter() - t0


def throughput(n: int, size: str, shard_size: int, seed: int, backend: str, work: Path,
               reference: bytes | None = None) -> list[Throughput]:  # fmt: skip
    """The same build with 1 and 2 workers on one backend, each compared with ``reference``
    (or with the first build)."""
    key, opts = _key(n, size, shard_size, seed)
    rows: list[Throughput] = []
    for workers in (1, 2):
        folder = work / f"{backend}-{workers}"
        startup = 0.0
        if backend == "ray":
            import ray as ray_module

            t0 = time.perf_counter()
            ray_module.init(num_cpus=workers, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
            warm = ray_module.remote(num_cpus=1)(_warm_worker)
            ray_module.get([warm.remote() for _ in range(workers)])  # workers started, pbsolve imported
            startup = time.perf_counter() - t0
            make: Callable[[], Backend] = lambda w=workers: RayBackend(w)  # noqa: E731
        else:
            make = lambda w=workers: LocalBackend(w)  # noqa: E731
        try:
            secs = timed_build(folder, key, opts, make)
        finally:
            if backend == "ray":
                ray_module.shutdown()
        data = _bytes(folder)
        reference = data if reference is None else reference
        rows.append(Throughput(backend, workers, n, secs, n / secs, data == reference, startup))
    return rows


def big_build(n: int, size: str, shard_size: int, workers: int, seed: int, work: Path) -> BigBuild:
    key, opts = _key(n, size, shard_size, seed)
    folder = work / "big"
    samples: list[tuple[int, float]] = []
    marks = {int(n * f / 10) for f in range(1, 11)}

    def sample(p: Progress) -> None:
        if any(p.instances >= m for m in marks):
            samples.append((p.instances, rss_mib()))
            marks.difference_update({m for m in marks if p.instances >= m})

    secs = timed_build(folder, key, opts, lambda: LocalBackend(workers), sample)
    size_bytes = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    return BigBuild(n, size, workers, shard_size, secs, n / secs, peak_rss_mib(), samples, size_bytes,
                    size_bytes / n)  # fmt: skip


def ray_overhead(rows: list[Throughput], workers: int) -> float | None:
    rate = {(r.backend, r.workers): r.per_second for r in rows}
    if ("ray", workers) not in rate:
        return None
    return rate[("processes", workers)] / rate[("ray", workers)]


def ten_million(per_core: float, overhead: float, bytes_per_instance: float) -> list[str]:
    """Wall time for 10M instances per cluster shape, at the measured per-core rate."""
    lines = [f"10,000,000 instances at {per_core:.1f} instances/s per core (measured), Ray overhead x{overhead:.2f}, "
             f"{bytes_per_instance * TEN_MILLION / 2**30:.1f} GiB of shards:"]  # fmt: skip
    for nodes, cores in CLUSTERS:
        rate = per_core * nodes * cores / overhead
        hours = TEN_MILLION / rate / 3600
        lines.append(f"  {nodes:>3} node(s) x {cores:>2} cores = {nodes * cores:>5} cores: {rate:>9,.0f} instances/s, "
                     f"{hours:>8.2f} h")  # fmt: skip
    return lines


def report(rows: list[Throughput], big: BigBuild | None, workers: int) -> list[str]:
    out = ["backend     workers  instances  seconds  inst/s  same bytes  startup s"]
    for r in rows:
        out.append(f"{r.backend:<10}  {r.workers:>7}  {r.instances:>9}  {r.seconds:>7.1f}  {r.per_second:>6.2f}  "
                   f"{'yes' if r.same_bytes else 'NO':>10}  {r.startup_s:>9.1f}")  # fmt: skip
    overhead = ray_overhead(rows, workers)
    if overhead is not None:
        verdict = "meets" if overhead <= TARGET_RAY_OVERHEAD else "MISSES"
        out.append(f"target: Ray overhead <= {TARGET_RAY_OVERHEAD} x processes at {workers} workers: {verdict} "
                   f"(x{overhead:.2f})")  # fmt: skip
    if big is not None:
        out.append(f"big build: {big.instances:,} instances ({big.size}, {big.workers} workers, shards of "
                   f"{big.shard_size:,}) in {big.seconds:,.0f} s = {big.per_second:.1f} instances/s; driver peak RSS "
                   f"{big.peak_rss_mib:.0f} MiB; output {big.output_bytes / 2**20:,.1f} MiB "
                   f"({big.bytes_per_instance:,.0f} B/instance)")  # fmt: skip
        out.append("driver RSS along the run (instances: MiB): "
                   + ", ".join(f"{k:,}: {v:.0f}" for k, v in big.rss_samples_mib))  # fmt: skip
    rate = big.per_second / big.workers if big is not None else max(
        (r.per_second / r.workers for r in rows if r.backend == "processes"), default=0.0)  # fmt: skip
    size = big.bytes_per_instance if big is not None else 0.0
    if rate > 0:
        out += ten_million(rate, overhead or 1.0, size)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=60, help="instances per throughput build")
    ap.add_argument("--size", default="tiny")
    ap.add_argument("--shard-size", type=int, default=10)
    ap.add_argument("--big", type=int, default=100_000, help="instances of the big build (0: skip)")
    ap.add_argument("--big-size", default="tiny")
    ap.add_argument("--big-shard-size", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="pbsolve-scale-"))
    try:
        rows = throughput(args.n, args.size, args.shard_size, args.seed, "processes", work)
        # the big build forks its workers before this process has ever started Ray (forking a
        # process with Ray's threads is unsafe)
        big = big_build(args.big, args.big_size, args.big_shard_size, args.workers, args.seed, work) if args.big else None
        if not args.no_ray:
            first = _bytes(work / "processes-1")
            rows += throughput(args.n, args.size, args.shard_size, args.seed, "ray", work, first)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {"throughput": [asdict(r) for r in rows], "big": asdict(big) if big else None,
              "ray_overhead": ray_overhead(rows, args.workers)}  # fmt: skip
    if args.json:
        print(json.dumps(result))
    else:
        print(f"scale benchmark: {args.n} instances per throughput build ({args.size}, shards of {args.shard_size})")
        print("\n".join(report(rows, big, args.workers)))
    return result


if __name__ == "__main__":
    main()
