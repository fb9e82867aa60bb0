"""Report of a mutmut run staged by scripts/mutation.py: the kill rate per file and every
surviving mutant with its diff.

Survivors argued equivalent in scripts/mutation_equivalents.toml (mutant name ->
argument) are counted apart: the rate is killed / (mutants - equivalent - not run).
Exit status 1 when some file is below --target (default 95%) over its non-equivalent
mutants.

Usage: python scripts/mutation_report.py [--stage build/mutation] [--target 95] [--no-diffs]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "scripts" / "mutation_equivalents.toml"
# mutmut's exit-code meanings (mutmut.stats.status_by_exit_code)
KILLED = {1, 3, 36, 37, -24, 24, 152, 255}  # a failing test, a pytest error, a timeout, a type check
SURVIVED = {0}
NOT_RUN = {None, 2, 5, 33, 34}  # not checked, interrupted, no tests reach it, skipped


def load_results(stage: Path) -> dict[str, dict[str, int | None]]:
    """Staged source path -> {mutant name: exit code}."""
    out: dict[str, dict[str, int | None]] = {}
    for meta in sorted((stage / "mutants").rglob("*.py.meta")):
        rel = meta.relative_to(stage / "mutants").as_posix()[: -len(".meta")]
        out[rel] = json.loads(meta.read_text())["exit_code_by_key"]
    return out


def repo_path(staged: str) -> str:
    for top in ("checkers", "models", "renderers"):
        if staged.startswith(f"pbsolve/{top}/"):
            return staged[len("pbsolve/") :]
    return staged


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", type=Path, default=ROOT / "build" / "mutation")
    ap.add_argument("--target", type=float, default=95.0)
    ap.add_argument("--no-diffs", action="store_true")
    args = ap.parse_args()
    stage = args.stage.resolve()
    results = load_results(stage)
    if not results:
        print(f"no mutmut results under {stage}/mutants: run `make mutation` first")
        return 1
    equivalent: dict[str, str] = tomllib.loads(EQUIVALENTS.read_text()).get("equivalent", {}) if EQUIVALENTS.exists() else {}
    mutmut = Path(sys.executable).with_name("mutmut")
    below = False
    survivors: list[tuple[str, str]] = []
    print(f"{'file':45} {'mutants':>7} {'killed':>6} {'surv':>5} {'equiv':>5} {'not run':>7} {'kill rate':>9}")
    for staged, codes in results.items():
        n = Counter()
        for name, code in codes.items():
            if code in NOT_RUN:
                n["not_run"] += 1
            elif code in KILLED:
                n["killed"] += 1
            elif name in equivalent:
                n["equivalent"] += 1
            else:
                n["survived"] += 1
                survivors.append((staged, name))
        judged = n["killed"] + n["survived"]
        rate = 100.0 * n["killed"] / judged if judged else None  # nothing judged yet is no pass
        below |= rate is None or rate < args.target
        shown = f"{rate:8.1f}%" if rate is not None else "      n/a"
        print(f"{repo_path(staged):45} {len(codes):7} {n['killed']:6} {n['survived']:5} {n['equivalent']:5} {n['not_run']:7} {shown}")
    stale = sorted(set(equivalent) - {k for codes in results.values() for k, c in codes.items() if c in SURVIVED})
    if stale:
        print(f"\nequivalents no longer surviving (or renamed): {stale}")
    print(f"\n{len(survivors)} surviving mutants (kill each with a test, or argue it equivalent in {EQUIVALENTS.relative_to(ROOT)})")
    for staged, name in survivors:
        print(f"\n## {repo_path(staged)}: {name}")
        if not args.no_diffs:
            diff = subprocess.run([str(mutmut), "show", name], cwd=stage, capture_output=True, text=True).stdout
            print("\n".join(line for line in diff.splitlines() if line.startswith(("+", "-", "@@")) and not line.startswith(("+++", "---"))))
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
