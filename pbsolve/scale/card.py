"""The dataset card: ``README.md`` in a sharded dataset's folder, made from its manifest.

It says what the folder holds (counts per family, task type, tier and hard kind), how
sharp its certificates are (unique optima, infeasible instances, margins to the second
best plan), what was left out and why, and the exact settings and command that rebuild
it byte for byte. Every figure comes from the manifest, so the card never disagrees with
the files.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from pbsolve.jsonl import write_atomic
from pbsolve.scale.manifest import Manifest


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def _table(title: str, counts: dict[str, int], total: int) -> list[str]:
    lines = [f"| {title} | instances | share |", "|---|---:|---:|"]
    lines += [f"| `{k}` | {v:,} | {_pct(v, total)} |" for k, v in counts.items()]
    return lines


def card_text(m: Manifest) -> str:
    run, t = m.run, m.totals()
    n = m.instances
    det = t.stats.determinacy
    feasible = n - det.get("infeasible", 0)
    opts = {k: v for k, v in run.options.items() if v not in (None, [], {})}
    status = "complete" if m.complete else f"incomplete ({n:,} of {run.n:,} instances so far)"
    out = [
        "# pbsolve dataset",
        "",
        f"{n:,} certified planning instances in {len([s for s in m.shards if s.file])} shard file(s) "
        f"(`{run.format}`), {status}. Every feasible instance carries a proven optimum and every "
        "infeasible one a proof with its minimal conflict sets; answers are graded by pbsolve's checkers.",
        "",
        "## Contents",
        "",
        *_table("family", t.stats.family, n),
        "",
        *_table("task type", t.stats.task, n),
        "",
        *_table("tier (instances with at least one rule of it)", t.stats.tier, n),
        "",
        *(_table("hard kind / mechanism", t.stats.mechanism, n) if t.stats.mechanism else ["No hard-tier mechanisms."]),
        "",
        "## Certificates",
        "",
        f"- unique optimum: {det.get('unique', 0):,} ({_pct(det.get('unique', 0), feasible)} of feasible)",
        f"- value-determinate (several optimal plans, one optimal value): {det.get('value', 0):,}",
        f"- infeasible (certified, with conflict sets): {det.get('infeasible', 0):,} ({_pct(det.get('infeasible', 0), n)})",
        (
            f"- margin to the second-best plan: mean {t.stats.margin_sum / t.stats.margin_count:.2f} over "
            f"{t.stats.margin_count:,} instances; a margin of exactly 1 in {_pct(t.stats.margin_one, t.stats.margin_count)}"
            if t.stats.margin_count
            else "- margin to the second-best plan: none recorded"
        ),
        "",
        "## What was left out",
        "",
        f"- indices visited: {run.start:,}..{t.hi - 1:,} ({t.hi - run.start:,}); certified {t.certified:,}; "
        f"{t.failed_indices:,} certified nothing",
        f"- duplicates of a problem earlier in this run: {t.duplicates:,} (deduplication {'on' if run.dedup else 'off'})",
        f"- problems already in an excluded dataset: {t.excluded:,}",
        f"- certified past the {run.n:,}-th instance (cut): {t.truncated:,}",
        "- re-sampled or rejected attempts, by reason: "
        + (", ".join(f"`{k}` {v:,}" for k, v in t.rejects.items()) or "none"),
        "",
        "## Rebuild",
        "",
        f"pbsolve {m.pbsolve_version}, OR-Tools {m.ortools_version}; seed {run.seed}, first index {run.start}, "
        f"{run.n:,} instances, shards of {run.shard_size:,} indices, format {run.format}.",
        f"Generation options: `{opts}`.",
        *(f"Excluded dataset: `{e.path}` (manifest sha256 `{e.sha256[:16]}…`)." for e in run.exclude),
        "",
        "The same command gives the same bytes on any number of processes or Ray workers; run again in this "
        "folder, it keeps the complete shards and builds only the rest:",
        "",
        "```bash",
        m.command or "pbsolve generate ...",
        "```",
        "",
        f"Each shard's sha256 and problem hashes are in `manifest.json`; certification took "
        f"{t.seconds:,.0f} CPU-seconds of worker time.",
        "",
    ]
    return "\n".join(out)


def write_card(folder: Path, m: Manifest) -> None:
    write_atomic(folder / "README.md", card_text(m).encode())


def command_line(argv: list[str]) -> str:
    """The command as a user would type it again."""
    return shlex.join(["pbsolve", *argv])
