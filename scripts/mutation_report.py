"""Report of a mutmut run staged by scripts/mutation.py: the kill rate per file and every
surviving mutant with its diff.

Survivors argued equivalent in scripts/mutation_equivalents.toml are counted apart. An
entry is pinned to its mutation: ``"name" = { change = "...", why = "..." }`` where
``change`` is the mutant's edit as this script prints it (``- old`` / ``+ new`` lines).
mutmut numbers mutants in source order, so after an edit to a function the same name can
point at another mutation; an entry whose recorded change no longer matches its mutant (or
that records none) is reported as drifted and counted as a survivor until re-argued.
``--pin`` writes the current change into every entry that has none (run it right after
checking each such entry's argument against its ``mutmut show`` diff). Survivors argued
equivalent are counted apart, and so are message-only survivors, classified here by rule
(``message_only``): the mutant changes nothing but the text of a string literal, and that
literal only ever becomes part of a human-readable message -- the reason of a verdict
(element 1 of a ``(passed, reason)`` tuple), an exception's message, an ``error=`` /
``reason=`` / ``description=`` argument, or a ``"description"`` in the answer schema. A
grade's verdicts and reward never depend on such text (pbsolve.grading takes ``passed``
from the checker and only truncates the reason), so no answer can tell the mutant from the
original by its grade. Literals anywhere else (keys, kinds, separators that are parsed,
regexes, comparisons) stay survivors to be killed or argued one by one.
The rate is killed / (mutants - equivalent - message-only - not run).
Exit status 1 when some file is below --target (default 95%) over its non-equivalent
mutants.

Usage: python scripts/mutation_report.py [--stage build/mutation] [--target 95] [--no-diffs] [--pin]
"""

from __future__ import annotations

import argparse
import ast
import difflib
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


MESSAGE_KEYWORDS = {"reason", "error", "description", "message"}


def _sources(stage: Path, staged: str, cache: dict) -> tuple[str, dict[str, ast.FunctionDef]]:
    if staged not in cache:
        source = (stage / "mutants" / staged).read_text()
        cache[staged] = (source, _functions_of(source))
    return cache[staged]


def _functions_of(source: str) -> dict[str, ast.FunctionDef]:
    out: dict[str, ast.FunctionDef] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef):
            out.setdefault(node.name, node)
    return out


def _pair(
    stage: Path, staged: str, mutant: str, cache: dict
) -> tuple[str, ast.FunctionDef | None, ast.FunctionDef | None]:
    """The generated module's source, the original function and the mutated one."""
    source, funcs = _sources(stage, staged, cache)
    local = mutant.rsplit(".", 1)[-1]  # x_name__mutmut_3 or xǁClassǁname__mutmut_3
    return source, funcs.get(local.rsplit("__mutmut_", 1)[0] + "__mutmut_orig"), funcs.get(local)


def mutation_change(stage: Path, staged: str, mutant: str, cache: dict) -> str:
    """The mutant's edit as '- old' / '+ new' lines (stripped, def line left out): what an
    equivalence argument is about, independent of the mutant's number."""
    source, orig, mutated = _pair(stage, staged, mutant, cache)
    if orig is None or mutated is None:
        return ""
    a = (ast.get_source_segment(source, orig) or "").splitlines()[1:]
    b = (ast.get_source_segment(source, mutated) or "").splitlines()[1:]
    return "\n".join(
        f"{line[0]} {line[1:].strip()}"
        for line in difflib.unified_diff(a, b, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


def load_equivalents(path: Path = EQUIVALENTS) -> dict[str, dict[str, str]]:
    """Mutant name -> {"why": argument, "change": pinned edit or ""}."""
    if not path.exists():
        return {}
    raw = tomllib.loads(path.read_text()).get("equivalent", {})
    return {
        k: {"why": v, "change": ""} if isinstance(v, str) else {"why": v["why"], "change": v.get("change", "")}
        for k, v in raw.items()
    }


def pin(path: Path, changes: dict[str, str]) -> int:
    """Rewrite the unpinned entries named in ``changes`` as pinned tables; comments and
    order stay. Returns how many entries were pinned."""
    lines = path.read_text().splitlines(keepends=True)
    pinned = 0
    for i, line in enumerate(lines):
        if not line.startswith('"'):
            continue
        entry = tomllib.loads("[e]\n" + line)["e"]
        ((name, value),) = entry.items()
        if isinstance(value, str) and changes.get(name):
            lines[i] = (
                f"{json.dumps(name, ensure_ascii=False)} = {{ change = {json.dumps(changes[name], ensure_ascii=False)}, why = {json.dumps(value, ensure_ascii=False)} }}\n"
            )
            pinned += 1
    path.write_text("".join(lines))
    return pinned


def _is_message(literal: ast.Constant, parents: dict[ast.AST, ast.AST]) -> bool:
    """The literal only ever becomes part of a message (see the module docstring)."""
    child: ast.AST = literal
    node = parents.get(literal)
    while node is not None:
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.keyword) and node.arg in MESSAGE_KEYWORDS:
            return True
        if isinstance(node, ast.Tuple) and len(node.elts) == 2 and node.elts[1] is child:
            first = node.elts[0]
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                return True  # (passed, reason): the reason
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if value is child and isinstance(key, ast.Constant) and key.value == "description":
                    return True
        if isinstance(node, ast.stmt):
            return False
        child, node = node, parents.get(node)
    return False


def message_only(stage: Path, staged: str, mutant: str, cache: dict) -> bool:
    """True when ``mutant`` differs from the original function only in the text of string
    literals that are all messages."""
    _, orig, mutated = _pair(stage, staged, mutant, cache)
    if orig is None or mutated is None:
        return False
    a, b = list(ast.walk(orig))[1:], list(ast.walk(mutated))[1:]  # skip the defs (names differ)
    if len(a) != len(b):
        return False
    changed = []
    for x, y in zip(a, b):
        if type(x) is not type(y):
            return False
        if isinstance(x, ast.Constant) and x.value != y.value:
            if not (isinstance(x.value, str) and isinstance(y.value, str)):
                return False
            changed.append(x)
        elif not isinstance(x, ast.Constant):
            fields = {k: v for k, v in ast.iter_fields(x) if not isinstance(v, (ast.AST, list))}
            if fields != {k: v for k, v in ast.iter_fields(y) if not isinstance(v, (ast.AST, list))}:
                return False
    if not changed:
        return False
    parents = {c: n for n in ast.walk(orig) for c in ast.iter_child_nodes(n)}
    return all(_is_message(lit, parents) for lit in changed)


def repo_path(staged: str) -> str:
    for top in ("checkers", "models", "renderers"):
        if staged.startswith(f"pbsolve/{top}/"):
            return staged[len("pbsolve/") :]
    return staged


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", type=Path, default=ROOT / "build" / "mutation")
    ap.add_argument("--target", type=float, default=95.0)
    ap.add_argument("--no-diffs", action="store_true")
    ap.add_argument("--equivalents", type=Path, default=EQUIVALENTS)
    ap.add_argument("--pin", action="store_true", help="record the current change of every unpinned entry")
    args = ap.parse_args(argv)
    stage = args.stage.resolve()
    results = load_results(stage)
    if not results:
        print(f"no mutmut results under {stage}/mutants: run `make mutation` first")
        return 1
    equivalent = load_equivalents(args.equivalents)
    mutmut = Path(sys.executable).with_name("mutmut")
    below = False
    survivors: list[tuple[str, str]] = []
    drifted: dict[str, str] = {}  # equivalent entries whose pinned change is not their mutant's
    print(
        f"{'file':38} {'mutants':>7} {'killed':>6} {'surv':>5} {'equiv':>5} {'message':>7} {'no test':>7} {'not run':>7} {'kill rate':>9}"
    )
    cache: dict = {}
    totals = Counter()
    for staged, codes in results.items():
        n = Counter()
        for name, code in codes.items():
            if code == 33:
                n["no_tests"] += 1
            elif code in NOT_RUN:
                n["not_run"] += 1
            elif code in KILLED:
                n["killed"] += 1
            elif name in equivalent and equivalent[name]["change"] == mutation_change(stage, staged, name, cache):
                n["equivalent"] += 1
            elif name in equivalent:
                n["survived"] += 1
                survivors.append((staged, name))
                drifted[name] = mutation_change(stage, staged, name, cache)
            elif message_only(stage, staged, name, cache):
                n["message"] += 1
            else:
                n["survived"] += 1
                survivors.append((staged, name))
        judged = n["killed"] + n["survived"]
        rate = 100.0 * n["killed"] / judged if judged else None  # nothing judged yet is no pass
        below |= rate is None or rate < args.target
        shown = f"{rate:8.1f}%" if rate is not None else "      n/a"
        totals.update(n, mutants=len(codes))
        print(
            f"{repo_path(staged):38} {len(codes):7} {n['killed']:6} {n['survived']:5} {n['equivalent']:5} {n['message']:7} {n['no_tests']:7} {n['not_run']:7} {shown}"
        )
    judged = totals["killed"] + totals["survived"]
    if judged:
        print(
            f"{'total':38} {totals['mutants']:7} {totals['killed']:6} {totals['survived']:5} {totals['equivalent']:5} {totals['message']:7} {totals['no_tests']:7} {totals['not_run']:7} {100.0 * totals['killed'] / judged:8.1f}%"
        )
    modules = tuple(staged[: -len(".py")].replace("/", ".") + "." for staged in results)
    in_run = {k for k in equivalent if k.startswith(modules)}  # entries for files this run mutated
    stale = sorted(in_run - {k for codes in results.values() for k, c in codes.items() if c in SURVIVED})
    if stale:
        print(f"\nequivalents no longer surviving (or renamed): {stale}")
    if args.pin:
        unpinned = {k: v for k, v in drifted.items() if not equivalent[k]["change"]}
        print(f"\npinned {pin(args.equivalents, unpinned)} entries in {args.equivalents}")
    elif drifted:
        print(
            f"\nequivalents whose pinned change is not their mutant's (the code moved: re-argue, then --pin an unpinned one): {sorted(drifted)}"
        )
    print(f"\n{len(survivors)} surviving mutants (kill each with a test, or argue it equivalent in {args.equivalents})")
    for staged, name in survivors:
        print(f"\n## {repo_path(staged)}: {name}")
        if not args.no_diffs:
            diff = subprocess.run([str(mutmut), "show", name], cwd=stage, capture_output=True, text=True).stdout
            print(
                "\n".join(
                    line
                    for line in diff.splitlines()
                    if line.startswith(("+", "-", "@@")) and not line.startswith(("+++", "---"))
                )
            )
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
