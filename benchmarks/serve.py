"""Reward-server benchmark: a bounded load run against a local ``pbsolve serve``.

1. Certifies ``--n`` instances in this process (or reads them from ``--instances``).
2. Builds a store of ``--rows`` rows (default 1,000,000) with ``StoreWriter``: first, for
   every task type, its first ``DICT_SAMPLES`` instances (they become that task's
   compression dictionary), then the other instances (the *base*) cloned under new ids
   (``<id>~<k>``) up to ``--rows``. zstd compresses every row on its own, so a clone of an
   instance that is not in its dictionary costs what a distinct row costs: the size per
   row is that of a store of distinct instances. (The rows are copies of validated
   instances, so validation is skipped; the full ``build_store`` path -- JSON Lines in,
   every line validated -- is timed separately on ``--validate-rows`` rows.) Reports build
   time, rows/s, file size, and in-process lookup latency and RSS.
3. Starts ``python -m pbsolve serve`` on the store in a subprocess (127.0.0.1, a free
   port, ``--cache`` parsed instances, batches graded on the server's default grading
   processes unless ``--grade-processes`` says otherwise) and runs, one client, keep-alive:
   * ``--singles`` requests to ``POST /grade``, one response each, random ids;
   * ``--batches`` requests to ``POST /grade/batch`` and as many to ``POST /openrlhf``,
     each ``--prompts`` x ``--rollouts`` (128 x 8 = 1,024) responses for random ids --
     with a million rows and a small cache, almost every instance is parsed cold.
   Responses mix the certified answer, the greedy baseline, thinking + answer, and
   malformed text; every reward is checked against in-process grading. Request bodies are
   encoded before the clock starts: latency is the HTTP round trip (server work included).
4. Prints throughput and p50/p99 latency per kind, errors (non-200 answers, transport
   errors, wrong rewards), and the server's RSS.

Targets (issue 18), each printed with its figure: a batch of 1,024 graded with p99 at most
250 ms on 2 cores and zero errors; a store of at most 1 KiB per row, built at 20,000 rows/s
or more, with a cold parsed lookup p99 of at most 1 ms. The exit status is 0 only when
every target is met.

    python benchmarks/serve.py [--rows 1000000] [--n 576 | --instances FILE] [--singles 2000] [--batches 100] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from pbsolve.generate import GenerateOptions, generate
from pbsolve.grading import grade
from pbsolve.jsonl import dumps
from pbsolve.kit import SIZE_NAMES
from pbsolve.llm.responders import baseline, oracle
from pbsolve.schema import Instance
from pbsolve.serve.heap import freeze_startup_heap
from pbsolve.serve.store import DICT_SAMPLES, InstanceStore, StoreWriter, build_store

TARGET_BATCH_P99_MS = 250.0
TARGET_BYTES_PER_ROW = 1024.0
TARGET_BUILD_ROWS_PER_S = 20_000.0
TARGET_COLD_LOOKUP_P99_US = 1000.0
# Batch requests per endpoint: the p99 of 20 (the earlier default) is their maximum, one
# sample; of 100 it lies between the two slowest.
BATCHES = 100


def percentile(values: list[float], q: float) -> float:
    xs = sorted(values)
    if not xs:
        return 0.0
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def rss_mib(pid: int | str = "self") -> tuple[float, float]:
    """(current, peak) resident set size in MiB, from /proc."""
    cur = peak = 0.0
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    cur = int(line.split()[1]) / 1024
                elif line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) / 1024
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return cur, peak


def children(pid: int) -> list[int]:
    """The server's grading processes: its children started by multiprocessing's spawn
    (not its resource tracker), from Linux /proc; [] where that cannot be read."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            kids = [int(x) for x in fh.read().split()]
        out = []
        for k in kids:
            with open(f"/proc/{k}/cmdline", "rb") as fh:
                if b"spawn_main" in fh.read():
                    out.append(k)
        return out
    except OSError:
        return []


def wrong(inst: Instance) -> str:
    """The greedy baseline's answer; for the few instances it cannot answer (it raises on
    robustness-design instances), the certified plan with a wrong objective figure."""
    try:
        return baseline(inst)
    except Exception:
        ref = json.loads(json.dumps(inst.reference))
        if isinstance(ref.get("objective"), dict) and ref["objective"]:
            key = next(iter(ref["objective"]))
            ref["objective"][key] += 1
        else:
            ref["feasible"] = not ref.get("feasible", True)
        return "```json\n" + json.dumps(ref) + "\n```"


def rollouts(inst: Instance) -> list[str]:
    """8 responses a policy might give: right, wrong, thinking, malformed."""
    right = oracle(inst)
    ref = json.dumps(inst.reference)
    return [
        right,
        wrong(inst),
        "<think>" + "Consider the rules one by one. " * 60 + "</think>\n" + right,
        "I could not find a plan {sorry}.",
        "",
        ref[: len(ref) // 2],
        "<think>quick</think>" + wrong(inst),
        "Final answer:\n" + right,
    ]


def clone_text(text: bytes, orig_id: str, new_id: str) -> bytes:
    """An instance's UTF-8 JSON under another id. Bytes, as a producer reading files hands
    them to the writer: re-encoding a 13 KB non-ASCII string per row would cost more than
    the row's database insert and be timed as the store's work."""
    head = b'{"id":' + json.dumps(orig_id).encode()
    assert text.startswith(head), "instance JSON must start with its id"
    return b'{"id":' + json.dumps(new_id).encode() + text[len(head) :]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(fn, *args: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def lat_row(kind: str, lat_s: list[float], items_per_call: int, wall_s: float, errors: int) -> dict[str, Any]:
    ms = [x * 1000 for x in lat_s]
    return {
        "kind": kind,
        "calls": len(ms),
        "responses_per_call": items_per_call,
        "calls_per_s": len(ms) / wall_s if wall_s else 0.0,
        "grades_per_s": len(ms) * items_per_call / wall_s if wall_s else 0.0,
        "p50_ms": percentile(ms, 50),
        "p99_ms": percentile(ms, 99),
        "max_ms": max(ms, default=0.0),
        "errors": errors,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    rep: dict[str, Any] = {"rows": args.rows, "cpus": os.cpu_count(), "loadavg_start": os.getloadavg()[0]}
    t_run = time.perf_counter()
    # 1. certified instances: each task's first DICT_SAMPLES are its dictionary, the rest the base
    t0 = time.perf_counter()
    if args.instances:
        pool = [Instance.model_validate_json(line) for line in Path(args.instances).read_text().splitlines() if line]
    else:
        pool = [o.instance for o in generate(args.n, args.seed, GenerateOptions(size=args.size)) if o.instance]
    rep["certified"] = len(pool)
    rep["certify_s"] = time.perf_counter() - t0
    samples, base = split_pool(pool)
    if not base:
        raise SystemExit(f"no task type has more than {DICT_SAMPLES} instances in the pool: raise --n")
    rep["samples"], rep["base"] = len(samples), len(base)
    rep["base_tasks"] = len({b.task for b in base})
    texts = [dumps(i).encode() for i in base]
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="pbsolve-serve-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    store_path = work / "bench.pbstore"
    try:
        # 2a. the full build path on a JSON Lines file (validation included)
        vrows = min(args.validate_rows, args.rows)
        jsonl = work / "validate.jsonl"
        with open(jsonl, "w", encoding="utf-8") as fh:
            fh.writelines(dumps(inst) + "\n" for inst in samples)
            for k in range(max(0, vrows - len(samples))):
                b = base[k % len(base)]
                fh.write(clone_text(texts[k % len(base)], b.id, f"{b.id}~{k}").decode() + "\n")
        vrep = build_store([jsonl], work / "validate.pbstore")
        rep["validated_build"] = {"rows": vrep.rows, "seconds": vrep.seconds, "rows_per_s": vrep.rows / vrep.seconds}
        jsonl.unlink()
        (work / "validate.pbstore").unlink()
        # 2b. the big store (kept from an earlier run with --dir ... --keep if it holds the same rows)
        t0 = time.perf_counter()
        if not (args.keep and store_path.exists() and _same_store(store_path, base, args.rows, len(samples))):
            with StoreWriter(store_path, chunk_rows=5000) as w:
                for inst in samples:
                    w.add(inst.id, inst.task, inst.family, dumps(inst))
                for k in range(args.rows - len(samples)):
                    i = k % len(base)
                    b = base[i]
                    w.add(f"{b.id}~{k}", b.task, b.family, clone_text(texts[i], b.id, f"{b.id}~{k}"))
        else:
            rep["store_reused"] = True
        build_s = time.perf_counter() - t0
        size = store_path.stat().st_size
        raw = sum(len(t) for t in texts) / len(texts)
        rep["store"] = {
            "build_s": build_s, "rows_per_s": args.rows / build_s, "file_mib": size / 2**20,
            "bytes_per_row": size / args.rows, "json_bytes_per_row": raw,
        }  # fmt: skip
        # 2c. in-process lookups; this script's own data (the pool, the rollouts) moved out of
        # the collector's way first, as the server does with its startup heap
        freeze_startup_heap()
        rng = random.Random(args.seed)
        clones = args.rows - len(samples)
        ids = [f"{base[k % len(base)].id}~{k}" for k in (rng.randrange(clones) for _ in range(20_000))]
        rss_before, _ = rss_mib()
        with InstanceStore(store_path, cache_size=256) as st:
            lat_text = [timed(st.get_text, i)[1] for i in ids]
            lat_parse = [timed(st.get, i)[1] for i in ids[:2000]]
            assert all(st.get_text(i) is not None for i in ids[:100])
        rss_after, rss_peak = rss_mib()
        rep["lookup"] = {
            "get_text_p50_us": percentile(lat_text, 50) * 1e6, "get_text_p99_us": percentile(lat_text, 99) * 1e6,
            "get_parsed_p50_us": percentile(lat_parse, 50) * 1e6, "get_parsed_p99_us": percentile(lat_parse, 99) * 1e6,
            "rss_before_mib": rss_before, "rss_after_mib": rss_after, "rss_peak_mib": rss_peak,
        }  # fmt: skip
        # 3. the server
        port = free_port()
        cmd = [
            sys.executable, "-m", "pbsolve", "serve", "--instances", str(store_path), "--port", str(port),
            "--cache", str(args.cache), "--workers", str(args.workers),
        ]  # fmt: skip
        if args.grade_processes is not None:
            cmd += ["--grade-processes", str(args.grade_processes)]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            args.sample_rows = len(samples)
            rep["load"] = load_run(args, base, port, proc)
            rep["server_rss_mib"], rep["server_rss_peak_mib"] = rss_mib(proc.pid)
            kids = children(proc.pid)  # the grading processes
            rep["grading_processes"] = len(kids)
            rep["grading_rss_mib"] = sum(rss_mib(k)[0] for k in kids)
            if args.workers > 1:
                rep["server_rss_note"] = "main process only; each worker holds its own cache"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            rep["kept"] = str(work)
    rep["total_s"] = time.perf_counter() - t_run
    rep["loadavg_end"] = os.getloadavg()[0]
    batch = next(r for r in rep["load"]["rows"] if r["kind"] == "batch /grade/batch")
    orl = next(r for r in rep["load"]["rows"] if r["kind"] == "batch /openrlhf")
    rep["errors"] = sum(r["errors"] for r in rep["load"]["rows"])
    rep["targets"] = targets(rep, max(batch["p99_ms"], orl["p99_ms"]))
    rep["meets_target"] = all(t["met"] for t in rep["targets"]) and rep["errors"] == 0
    return rep


def targets(rep: dict[str, Any], batch_p99_ms: float) -> list[dict[str, Any]]:
    """Each figure of issue 18's table with its target and whether it is met; a store
    reused from ``--dir`` was not built in this run, so its build rate is no figure."""

    def row(name: str, value: float, target: float, unit: str, most: bool) -> dict[str, Any]:
        met = value <= target if most else value >= target
        return {"figure": name, "value": value, "target": target, "unit": unit, "at_most": most, "met": met}

    s, lk = rep["store"], rep["lookup"]
    rows = [
        row("batch of 1,024, p99", batch_p99_ms, TARGET_BATCH_P99_MS, "ms", True),
        row("store size per row", s["bytes_per_row"], TARGET_BYTES_PER_ROW, "B", True),
        row("store build", s["rows_per_s"], TARGET_BUILD_ROWS_PER_S, "rows/s", False),
        row("cold parsed lookup, p99", lk["get_parsed_p99_us"], TARGET_COLD_LOOKUP_P99_US, "us", True),
    ]
    return [r for r in rows if not (rep.get("store_reused") and r["figure"] == "store build")]


def split_pool(pool: list[Instance]) -> tuple[list[Instance], list[Instance]]:
    """(samples, base): each task type's first DICT_SAMPLES instances, and the others."""
    seen: dict[str, int] = {}
    samples, base = [], []
    for inst in pool:
        seen[inst.task] = seen.get(inst.task, 0) + 1
        (samples if seen[inst.task] <= DICT_SAMPLES else base).append(inst)
    return samples, base


def _same_store(path: Path, base: list[Instance], rows: int, samples: int) -> bool:
    with InstanceStore(path) as st:
        last = rows - samples - 1
        return len(st) == rows and st.get_text(f"{base[last % len(base)].id}~{last}") is not None


def load_run(args: argparse.Namespace, base: list[Instance], port: int, proc: subprocess.Popen) -> dict[str, Any]:
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if proc.poll() is not None:
            raise SystemExit(f"the server exited: {proc.stderr.read() if proc.stderr else ''}")
        if time.monotonic() > deadline:
            raise SystemExit("the server did not come up within 120 s")
        time.sleep(0.1)
    resp = {i: rollouts(b) for i, b in enumerate(base)}
    expected = {(i, k): grade(b, t).reward for i, b in enumerate(base) for k, t in enumerate(resp[i])}
    rng = random.Random(args.seed + 1)
    rows = []
    with httpx.Client(base_url=url, timeout=120) as c:
        c.get("/health")
        # single requests
        lat, errors = [], 0
        t_start = time.perf_counter()
        for _ in range(args.singles):
            k = rng.randrange(args.rows - args.sample_rows)
            i = k % len(base)
            j = rng.randrange(len(resp[i]))
            body = json.dumps({"id": f"{base[i].id}~{k}", "response": resp[i][j]}).encode()
            try:
                r, dt = timed(lambda: c.post("/grade", content=body, headers={"content-type": "application/json"}))
                lat.append(dt)
                if r.status_code != 200 or r.json()["reward"] != expected[(i, j)]:
                    errors += 1
            except httpx.HTTPError:
                errors += 1
        rows.append(lat_row("single /grade", lat, 1, time.perf_counter() - t_start, errors))
        # batches: /grade/batch and /openrlhf
        for kind in ("batch /grade/batch", "batch /openrlhf"):
            lat, errors = [], 0
            t_start = time.perf_counter()
            for _ in range(args.batches):
                picks = [rng.randrange(args.rows - args.sample_rows) for _ in range(args.prompts)]
                want, reqs, queries, prompts, labels = [], [], [], [], []
                for k in picks:
                    i = k % len(base)
                    iid = f"{base[i].id}~{k}"
                    for r_ in range(args.rollouts):
                        j = r_ % len(resp[i])
                        want.append(expected[(i, j)])
                        if kind.endswith("batch"):
                            reqs.append({"id": iid, "response": resp[i][j]})
                        else:
                            p = f"<|im_start|>user\n{base[i].prompt}<|im_end|>\n<|im_start|>assistant\n"
                            queries.append(p + resp[i][j] + "<|im_end|>")
                            prompts.append(p)
                            labels.append(iid)
                if kind.endswith("batch"):
                    path, body = "/grade/batch", json.dumps({"requests": reqs}).encode()
                else:
                    path, body = (
                        "/openrlhf",
                        json.dumps({"query": queries, "prompts": prompts, "labels": labels}).encode(),
                    )
                try:
                    r, dt = timed(lambda: c.post(path, content=body, headers={"content-type": "application/json"}))
                    lat.append(dt)
                    if r.status_code != 200:
                        errors += len(want)
                    else:
                        got = r.json()["rewards"]
                        errors += sum(1 for a, b in zip(got, want) if a != b) + abs(len(got) - len(want))
                except httpx.HTTPError:
                    errors += len(want)
            rows.append(lat_row(kind, lat, args.prompts * args.rollouts, time.perf_counter() - t_start, errors))
    return {"rows": rows}


def format_text(rep: dict[str, Any]) -> str:
    s, lk, vb = rep["store"], rep["lookup"], rep["validated_build"]
    lines = [
        f"serve benchmark: {rep['certified']} certified instances (certified in {rep['certify_s']:.1f} s), "
        f"{rep['rows']:,}-row store, {rep['cpus']} CPU(s)",
        f"store rows: {rep['samples']} dictionary samples (the first {DICT_SAMPLES} of each task type), then "
        f"clones of {rep['base']} other instances of {rep['base_tasks']} task types under new ids",
        (
            "store reused from --dir: "
            if rep.get("store_reused")
            else f"store build: {s['build_s']:.1f} s ({s['rows_per_s']:,.0f} rows/s), "
        )
        + f"{s['file_mib']:,.1f} MiB "
        f"({s['bytes_per_row']:,.0f} B/row vs {s['json_bytes_per_row']:,.0f} B of JSON)",
        f"store build from JSON Lines with validation: {vb['rows']:,} rows in {vb['seconds']:.1f} s "
        f"({vb['rows_per_s']:,.0f} rows/s)",
        f"lookup by id: text p50 {lk['get_text_p50_us']:.0f} us, p99 {lk['get_text_p99_us']:.0f} us; "
        f"parsed (cold) p50 {lk['get_parsed_p50_us']:.0f} us, p99 {lk['get_parsed_p99_us']:.0f} us; "
        f"RSS {lk['rss_before_mib']:.0f} -> {lk['rss_after_mib']:.0f} MiB over 22,000 lookups",
    ]
    head = ["kind", "calls", "resp/call", "calls/s", "grades/s", "p50 ms", "p99 ms", "max ms", "errors"]
    cells = [head]
    for r in rep["load"]["rows"]:
        cells.append([
            r["kind"], str(r["calls"]), f"{r['responses_per_call']:,}", f"{r['calls_per_s']:,.1f}",
            f"{r['grades_per_s']:,.0f}", f"{r['p50_ms']:,.1f}", f"{r['p99_ms']:,.1f}", f"{r['max_ms']:,.1f}",
            str(r["errors"]),
        ])  # fmt: skip
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    for k, c in enumerate(cells):
        lines.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(c, widths))))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append(
        f"server RSS: {rep['server_rss_mib']:.0f} MiB (peak {rep['server_rss_peak_mib']:.0f} MiB), "
        f"{rep['grading_processes']} grading process(es) {rep['grading_rss_mib']:.0f} MiB"
    )
    lines.append(
        f"machine load average (1 min): {rep['loadavg_start']:.1f} at start, {rep['loadavg_end']:.1f} at end "
        f"(other processes share the {rep['cpus']} CPU(s) when it is above about 2)"
    )
    for t in rep["targets"]:
        sign = "<=" if t["at_most"] else ">="
        lines.append(
            f"target {t['figure']}: {t['value']:,.0f} {t['unit']} ({sign} {t['target']:,.0f}): "
            + ("meets" if t["met"] else "BELOW")
        )
    lines.append(f"errors: {rep['errors']} (target 0); all targets: " + ("meet" if rep["meets_target"] else "BELOW"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument(
        "--n", type=int, default=576, help="instances to certify (default 576: 18 of each of 32 task types)"
    )
    ap.add_argument("--instances", default=None, help="read certified instances from this JSON Lines file instead")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", choices=SIZE_NAMES, default="default")
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows in the store (default 1,000,000)")
    ap.add_argument("--validate-rows", type=int, default=20_000, help="rows for the validated build timing")
    ap.add_argument("--singles", type=int, default=2000, help="single /grade requests (default 2000)")
    ap.add_argument(
        "--batches", type=int, default=BATCHES, help=f"batch requests per batch endpoint (default {BATCHES})"
    )
    ap.add_argument("--prompts", type=int, default=128)
    ap.add_argument("--rollouts", type=int, default=8)
    ap.add_argument("--cache", type=int, default=256, help="server --cache (parsed instances kept)")
    ap.add_argument("--workers", type=int, default=1, help="server --workers")
    ap.add_argument(
        "--grade-processes", type=int, default=None, help="server --grade-processes (default: the server's own)"
    )
    ap.add_argument("--dir", default=None, help="work folder (default: a temporary one, removed afterwards)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder and the store (and reuse a kept store)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = ap.parse_args(argv)
    if min(args.n, args.rows, args.prompts, args.rollouts) < 1 or min(args.singles, args.batches) < 0:
        ap.error("--n, --rows, --prompts and --rollouts must be at least 1")
    rep = run(args)
    print(json.dumps(rep) if args.json else format_text(rep))
    return 0 if rep["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
