"""Mutation testing of the grading code with mutmut (`make mutation`).

mutmut imports the mutated copy of a file by its path under ./mutants, so the module
name must follow from the path. This repo installs checkers/, models/ and renderers/ as
pbsolve.checkers etc. (pyproject package-dir), which mutmut cannot see. This script
therefore stages the installed layout under build/mutation/ (pbsolve/ with checkers/,
models/ and renderers/ inside it, plus tests/), writes a pyproject there whose
[tool.mutmut] section is the repo's with its paths translated, runs `mutmut run` in it
and prints the report (scripts/mutation_report.py).

Usage: python scripts/mutation.py [--only checkers/allocation/material.py ...]
                                  [--max-children 2] [--stage build/mutation] [--keep]
                                  [--rev COMMIT [--overlay tests/test_x.py ...]]

--rev stages the tree of a commit (read with `git archive`, the repo is left alone)
instead of the working tree, --overlay then copies the named working-tree files over it:
a campaign on committed code while the working tree is in flux.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Top-level folders and where the installed package puts them (pyproject package-dir).
LAYOUT = {
    "pbsolve": "pbsolve",
    "checkers": "pbsolve/checkers",
    "models": "pbsolve/models",
    "renderers": "pbsolve/renderers",
}


def staged_path(repo_path: str) -> str:
    """'checkers/allocation/common.py' -> 'pbsolve/checkers/allocation/common.py'."""
    top, _, rest = repo_path.partition("/")
    if top not in LAYOUT:
        raise SystemExit(f"{repo_path}: not inside {sorted(LAYOUT)}")
    return f"{LAYOUT[top]}/{rest}"


# Functions that are not grading logic, left unmutated (name -> why). The baseline is the
# greedy responder that `pbsolve baseline` and the demos answer with: no grade depends on
# it, and its own tests (a baseline answer is graded like any other) live elsewhere.
NOT_GRADING = {
    "baseline_answer": "the greedy baseline responder: builds an answer, never judges one",
    "baseline_plan": "the greedy baseline plan of a task (allocation): builds an answer, never judges one",
    # Generation side: these build a new instance's prompt, answer schema, checklist and
    # certified reference (pbsolve.generate, the answer_schema chain, prompt_sections). The
    # grader never calls them: it reads the instance as stored, and the self-check at
    # generation grades the reference through the grading code under test. Their mutants
    # could only be killed by schema or prompt tests, not by any grade.
    **dict.fromkeys(
        ("answer_schema", "plan_schema", "verification_schema", "figures_schema", "objective_schema", "ids_schema"),
        "generation side: builds the answer schema of a new instance; no grade reads it",
    ),
    "schema": "generation side: a mechanism's fragment of the answer schema; no grade reads it",
    "answer_form": "generation side: a mechanism's answer form in the answer schema; no grade reads it",
    "present": "generation side: which mechanisms a new instance's schema and reference carry; grading goes by the checklist",
    "prompt": "generation side: a mechanism's prompt section; no grade reads it",
    "prompt_sections": "generation side: the prompt's mechanism sections; no grade reads it",
    "reference": "generation side: a mechanism's keys of the certified reference answer (then graded by the self-check)",
    "checklist": "generation side: a mechanism's checklist items of a new instance; grading reads instance.checklist",
    "_discover": "import-time only (builds pbsolve.mechanisms.MECHANISMS): mutmut cannot run its mutants",
    # parsing's helpers for pbsolve.audit.judge (reading an LLM judge's verdicts): the
    # grader's parse_response does not use them.
    "fenced_blocks": "used only by pbsolve.audit.judge, not by parse_response: no grade depends on it",
    "top_level_objects": "used only by pbsolve.audit.judge, not by parse_response: no grade depends on it",
    "format_text": "generation side: the text of a new instance's format checklist item; no grade reads it",
    "fits_room": "the greedy baseline's choice of a backup room (called only by baseline_answer): builds an answer, never judges one",
    "plan_json": "serialises the greedy baseline's plan (called only by baseline_answer): builds an answer, never judges one",
    # Called only while the module is imported (parsing builds its answer regex from it): a
    # mutant child forks after the import, so the mutant could never run and would read as
    # a survivor. The regex it builds is held by tests/test_parsing.py directly.
    "_object_pattern": "import-time only (builds parsing's module-level regex): mutmut cannot run its mutants",
    "_scan_body": "import-time only (builds parsing's module-level scan patterns): mutmut cannot run its mutants",
    # The registrar the staged copy calls after each rule check's def (REGISTRARS below):
    # it runs while the module is imported, so its mutants could never run, and mutmut's
    # forced-failure self-test would fail the import of every family instead of a test.
    "check": "import-time only (registers each rule check in its table): mutmut cannot run its mutants",
    # families() validates every family when the registry loads, which tests/conftest.py
    # does at collection: a mutant there fails collection, not a test (mutmut's self-test
    # refuses that). The contract it enforces is held by tests/test_params.py directly.
    "known_kinds": "runs at collection (families() validates each family on load): mutmut cannot run its mutants",
    # Generation side of typed parameters and of the mechanisms: they build and certify a
    # new instance's rules, terms, variants and scenario; grading reads the instance as
    # stored. Certification is held by the registry suite (brute force, model vs checker).
    "after": "generation side: a mechanism's step after certification (builds and certifies the recovery scenario)",
    "prepare": "generation side: a mechanism's step before certification (the family's variant of the draft)",
    "certify_alone": "generation side: the certification of an infeasible instance and its conflict sets",
    "dump": "generation side: a parameter model's JSON for a new rule; grading validates what is stored, never dumps",
    "make_rule": "generation side: builds a new instance's rule from its parameter model",
    "make_term": "generation side: builds a new instance's objective term from its parameter model",
    "current_plan": "generation side: the changes term's plan as the solver model and the prompt read it",
    # Near-miss moves for `pbsolve perturb` (TaskChecker.neighbours and its helpers): they
    # build candidate answers, which the perturb driver then grades through the code under
    # test, so nothing in them is trusted (as checkers/scheduling/near_miss.py, left out).
    "neighbours": "near-miss moves for pbsolve perturb: builds candidate answers, each then graded; never judges one",
    "_moves": "near-miss moves (recruitment): builds candidate answers for pbsolve perturb; never judges one",
    "with_shift": "near-miss moves (shift duty): builds a candidate roster for pbsolve perturb; never judges one",
    # the greedy baseline's helpers (workforce), like fits_room and plan_json above
    "_first_fit": "the greedy baseline's slot choice (recruitment): builds an answer, never judges one",
    "has_peak_rule": "the greedy baseline's reading of the rules (volunteer): builds an answer, never judges one",
}
# Registration decorators: `@check("kind")` puts a rule check into the family's table and
# returns the function unchanged. mutmut skips every decorated function (it cannot know
# what a decorator does), which would leave every rule check unmutated; the staged copy
# registers them with a plain call after the def instead, which does the same.
REGISTRARS = {"check"}
PRAGMA = "# pragma: no mutate block"


def prepare_for_mutmut(text: str) -> str:
    """The staged copy of a file to mutate: rule-check registration as a call instead of a
    decorator (so mutmut mutates rule checks), and NOT_GRADING functions under a
    no-mutate pragma. Same behaviour as ``text``; only the staged tree is rewritten."""
    tree = ast.parse(text)
    lines = text.splitlines()
    edits: list[tuple[int, str, str]] = []  # (0-based line, op, text), applied bottom-up
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and len(node.decorator_list) == 1:
            dec = node.decorator_list[0]
            if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Name) and dec.func.id in REGISTRARS:
                call = ast.get_source_segment(text, dec)
                for i in range(dec.lineno - 1, dec.end_lineno):
                    edits.append((i, "blank", ""))
                edits.append((node.end_lineno, "insert", f"{call}({node.name})  # staged: was a decorator"))
        for fn in [node, *(node.body if isinstance(node, ast.ClassDef) else [])]:
            if isinstance(fn, ast.FunctionDef) and fn.name in NOT_GRADING:
                edits.append((fn.body[0].lineno - 2, "pragma", PRAGMA))
    for i, op, extra in sorted(edits, key=lambda e: (e[0], e[1] != "insert"), reverse=True):
        if op == "blank":
            lines[i] = ""
        elif op == "insert":
            lines.insert(i, extra)
        else:
            lines[i] = f"{lines[i]}  {extra}"
    out = "\n".join(lines) + "\n"
    ast.parse(out)  # the rewrite must stay valid Python
    return out


PLUGIN_IMPORT = "\n# Appended by scripts/mutation.py (staged copy only): instances built once, by unmutated code.\nfrom tests.mutation_plugin import build_instance  # noqa: E402,F401,F811\n"


def repo_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def toml_list(values: list[str]) -> str:
    return json.dumps(values)  # a JSON list of strings is a valid TOML array


def source_tree(rev: str | None, overlay: list[str], into: Path) -> Path:
    """The tree to stage from: the working tree, or ``rev`` exported to ``into`` plus overlays."""
    if rev is None:
        return ROOT
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    for path in overlay:
        (into / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, into / path)
    return into


def stage(stage_dir: Path, only: list[str], keep: bool, src: Path = ROOT) -> None:
    """Lay out the installed package tree and a pyproject with the translated mutmut section."""
    cfg = repo_config()
    mm = cfg["tool"]["mutmut"]
    if not keep and stage_dir.exists():
        shutil.rmtree(stage_dir)
    stage_dir.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for dest in LAYOUT.values():
        target = stage_dir / dest
        if target.exists():
            shutil.rmtree(target)
    for top, dest in LAYOUT.items():  # pbsolve first, then the folders that go inside it
        shutil.copytree(src / top, stage_dir / dest, ignore=ignore, dirs_exist_ok=True)
    if (stage_dir / "tests").exists():
        shutil.rmtree(stage_dir / "tests")
    shutil.copytree(src / "tests", stage_dir / "tests", ignore=ignore)
    for path in ROOT.glob("tests/test_mutation_kills_*.py"):  # the campaign's own tests, from the working tree
        shutil.copy2(path, stage_dir / "tests" / path.name)
    if (ROOT / "tests" / "data").is_dir():
        shutil.copytree(ROOT / "tests" / "data", stage_dir / "tests" / "data", dirs_exist_ok=True)
    shutil.copy2(ROOT / "tests" / "test_grading_holes.py", stage_dir / "tests" / "test_grading_holes.py")
    shutil.copy2(ROOT / "scripts" / "mutation_plugin.py", stage_dir / "tests" / "mutation_plugin.py")
    conftest = stage_dir / "tests" / "conftest.py"
    conftest.write_text(conftest.read_text() + PLUGIN_IMPORT)
    for path in only or mm["only_mutate"]:
        target = stage_dir / staged_path(path)
        target.write_text(prepare_for_mutmut(target.read_text()))
    for extra in ("README.md", "docs"):
        path = src / extra
        if path.is_dir():
            shutil.copytree(path, stage_dir / extra, ignore=ignore, dirs_exist_ok=True)
        elif path.exists():
            shutil.copy2(path, stage_dir / extra)
    selection = list(mm["pytest_add_cli_args_test_selection"])
    selection += sorted(  # the campaign's own tests always run, whatever the list says
        f"tests/{p.name}" for p in ROOT.glob("tests/test_mutation_kills_*.py") if f"tests/{p.name}" not in selection
    )
    tests = [t for t in selection if (stage_dir / t).exists()]  # the stage holds the overlays too
    missing = sorted(set(selection) - set(tests))
    if missing:
        print(f"note: test files not present, skipped: {missing}")
    pytest_ini = cfg["tool"]["pytest"]["ini_options"]
    (stage_dir / "pyproject.toml").write_text(
        "# Written by scripts/mutation.py from the repo's pyproject.toml; do not edit.\n"
        "[tool.pytest.ini_options]\n"
        f"testpaths = {toml_list(pytest_ini.get('testpaths', ['tests']))}\n"
        "[tool.mutmut]\n"
        'source_paths = ["pbsolve/"]\n'
        f"only_mutate = {toml_list([staged_path(p) for p in (only or mm['only_mutate'])])}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
        f"pytest_add_cli_args = {toml_list(mm.get('pytest_add_cli_args', []))}\n"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", default=[], help="repo paths to mutate (default: [tool.mutmut] only_mutate)")
    ap.add_argument("--max-children", type=int, default=2)
    ap.add_argument("--stage", type=Path, default=ROOT / "build" / "mutation")
    ap.add_argument(
        "--keep", action="store_true", help="reuse mutmut's results in the stage (only re-run what changed)"
    )
    ap.add_argument("--rev", help="stage this commit's tree instead of the working tree")
    ap.add_argument("--overlay", nargs="*", default=[], help="with --rev: working-tree files copied over it")
    ap.add_argument("--report-only", action="store_true", help="print the report of the last run")
    args = ap.parse_args()
    stage_dir = args.stage.resolve()
    if not args.report_only:
        src = source_tree(args.rev, args.overlay, stage_dir.with_name(stage_dir.name + "-src"))
        stage(stage_dir, args.only, args.keep, src)
        mutmut = Path(sys.executable).with_name("mutmut")
        if not mutmut.exists():
            raise SystemExit("mutmut is not installed: pip install -e '.[mutation]'")
        rc = subprocess.call([str(mutmut), "run", "--max-children", str(args.max_children)], cwd=stage_dir)
        if rc != 0:
            print(f"mutmut run exited with {rc}", file=sys.stderr)
            return rc
    return subprocess.call([sys.executable, str(ROOT / "scripts" / "mutation_report.py"), "--stage", str(stage_dir)])


if __name__ == "__main__":
    sys.exit(main())
