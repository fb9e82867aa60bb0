"""scripts/typecheck.py: mypy sees the installed layout, each file once, and reports repo paths."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("typecheck_script", ROOT / "scripts" / "typecheck.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_staged_tree_holds_every_package_file_once_under_its_installed_path(tmp_path: Path) -> None:
    tc = _script()
    mapping = tc.layout()
    tc.stage(mapping, tmp_path)
    staged = {
        (Path(d) / f).relative_to(tmp_path).as_posix(): (Path(d) / f).resolve()
        for d, _, files in os.walk(tmp_path, followlinks=True)  # the nested folders are symlinks
        for f in files
        if f.endswith(".py")
    }
    # each repo file is staged exactly once ...
    assert len(set(staged.values())) == len(staged)
    # ... under the module path the editable install gives it (the repo folders are disjoint)
    expected = {
        dest + "/" + p.relative_to(ROOT / folder).as_posix(): p.resolve()
        for dest, folder in mapping.items()
        for p in (ROOT / folder).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert staged == expected
    assert staged["pbsolve/models/allocation/milp.py"] == (ROOT / "models" / "allocation" / "milp.py").resolve()


def test_findings_are_printed_with_repo_paths() -> None:
    tc = _script()
    mapping = tc.layout()
    assert (
        tc.repo_path("pbsolve/models/allocation/milp.py:3: error: x", mapping)
        == "models/allocation/milp.py:3: error: x"
    )
    assert (
        tc.repo_path("pbsolve/checkers/scheduling/checks.py:9: note", mapping)
        == "checkers/scheduling/checks.py:9: note"
    )
    assert tc.repo_path("pbsolve/kit.py:1: error: y", mapping) == "pbsolve/kit.py:1: error: y"
    assert tc.repo_path("Found 2 errors in 1 file", mapping) == "Found 2 errors in 1 file"
