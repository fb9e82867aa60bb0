"""scripts/mutation_report.py: an equivalence argument is pinned to the mutation it argues,
so a mutant that mutmut renumbered onto another edit is a survivor again, not silently
excused."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "mutation_report", Path(__file__).resolve().parents[1] / "scripts" / "mutation_report.py"
)
assert _SPEC is not None and _SPEC.loader is not None
report = importlib.util.module_from_spec(_SPEC)
sys.modules["mutation_report"] = report
_SPEC.loader.exec_module(report)

MODULE = '''
def x_total__mutmut_orig(xs):
    """Sum."""
    return sum(x for x in xs if x > 0)


def x_total__mutmut_1(xs):
    """Sum."""
    return sum(x for x in xs if x >= 0)


def x_total__mutmut_2(xs):
    """Sum."""
    return sum(x for x in xs if x > 1)
'''
NAME = "pkg.calc.x_total__mutmut_"


@pytest.fixture
def stage(tmp_path: Path) -> Path:
    """A staged mutmut run of one module whose two mutants both survived."""
    mutants = tmp_path / "mutants" / "pkg"
    mutants.mkdir(parents=True)
    (mutants / "calc.py").write_text(MODULE)
    (mutants / "calc.py.meta").write_text(json.dumps({"exit_code_by_key": {NAME + "1": 0, NAME + "2": 0}}))
    return tmp_path


def test_the_change_of_a_mutant_is_its_edited_lines_without_indentation(stage: Path) -> None:
    change = report.mutation_change(stage, "pkg/calc.py", NAME + "1", {})
    assert change == "- return sum(x for x in xs if x > 0)\n+ return sum(x for x in xs if x >= 0)"


def test_an_unknown_mutant_has_no_change(stage: Path) -> None:
    assert report.mutation_change(stage, "pkg/calc.py", NAME + "9", {}) == ""


def _write(path: Path, *lines: str) -> Path:
    path.write_text("[equivalent]\n" + "".join(line + "\n" for line in lines))
    return path


def test_a_pinned_entry_whose_change_matches_counts_as_equivalent(stage: Path, tmp_path: Path, capsys) -> None:
    change = report.mutation_change(stage, "pkg/calc.py", NAME + "1", {})
    eq = _write(
        tmp_path / "eq.toml",
        f'"{NAME}1" = {{ change = {json.dumps(change)}, why = "no x is 0" }}',
        f'"{NAME}2" = {{ change = {json.dumps(change)}, why = "argued for mutant 1, not this one" }}',
    )
    assert report.main(["--stage", str(stage), "--equivalents", str(eq), "--no-diffs"]) == 1
    out = capsys.readouterr().out
    assert "1 surviving mutants" in out
    assert f"## pkg/calc.py: {NAME}2" in out and f"## pkg/calc.py: {NAME}1" not in out
    assert "pinned change is not their mutant's" in out


def test_an_unpinned_entry_is_a_survivor_until_pinned(stage: Path, tmp_path: Path, capsys) -> None:
    eq = _write(tmp_path / "eq.toml", "# why mutant 1 is equivalent", f'"{NAME}1" = "no x is 0"')
    report.main(["--stage", str(stage), "--equivalents", str(eq), "--no-diffs"])
    assert "2 surviving mutants" in capsys.readouterr().out
    report.main(["--stage", str(stage), "--equivalents", str(eq), "--no-diffs", "--pin"])
    assert "pinned 1 entries" in capsys.readouterr().out
    assert eq.read_text().splitlines()[1] == "# why mutant 1 is equivalent"
    assert report.load_equivalents(eq)[NAME + "1"] == {
        "why": "no x is 0",
        "change": "- return sum(x for x in xs if x > 0)\n+ return sum(x for x in xs if x >= 0)",
    }
    report.main(["--stage", str(stage), "--equivalents", str(eq), "--no-diffs"])
    assert "1 surviving mutants" in capsys.readouterr().out


def test_pinning_leaves_a_pinned_entry_alone(tmp_path: Path) -> None:
    line = f'"{NAME}1" = {{ change = "- a\\n+ b", why = "kept" }}'
    eq = _write(tmp_path / "eq.toml", line)
    assert report.pin(eq, {NAME + "1": "- c\n+ d"}) == 0
    assert eq.read_text().splitlines()[1] == line


def test_every_grading_file_of_every_family_is_in_the_mutation_campaign() -> None:
    """A family's checker files grade answers, so `make mutation` must mutate them; only
    the near-miss generators (`pbsolve perturb`, which grades nothing) may stay out."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["mutmut"]["only_mutate"])
    grading = {p.relative_to(root).as_posix() for p in (root / "checkers").glob("*/*.py") if p.name != "near_miss.py"}
    assert grading - listed == set()
