"""Families kept outside pbsolve: registered by PBSOLVE_FAMILY_PATH or the `pbsolve.families`
entry-point group, validated like shipped ones, graded without their model module."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import pbsolve.family as fam_mod
from pbsolve.family import FAMILY_PATH_ENV, FamilyContractError, checker, families, reload_registry
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from tests.family_adapters import TOY_PATH, toy_family_registered

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def clean_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    monkeypatch.delenv(FAMILY_PATH_ENV, raising=False)
    reload_registry()
    yield monkeypatch
    monkeypatch.undo()
    reload_registry()


def test_the_toy_family_is_not_part_of_the_shipped_registry(clean_registry):
    assert "toy" not in families()
    assert set(families()) >= {"scheduling", "allocation"}


def test_a_family_on_the_plugin_path_is_discovered_generated_and_graded():
    with toy_family_registered():
        assert "toy" in families()
        assert checker("toy").__name__ == "tests.toy_family.checkers"
        inst = build_instance(0, 1, GenerateOptions(task="seating", size="small")).instance
        assert inst is not None and inst.family == "toy"
        assert grade(inst, json.dumps(inst.reference)).all_pass == 1


def test_an_entry_point_registers_a_family(clean_registry):
    ep = importlib.metadata.EntryPoint(name="toy", value="tests.toy_family", group=fam_mod.ENTRY_POINT_GROUP)
    real = importlib.metadata.entry_points
    clean_registry.setattr(fam_mod.importlib.metadata, "entry_points", lambda group=None, **kw: [ep] if group == fam_mod.ENTRY_POINT_GROUP else real(group=group, **kw))
    reload_registry()
    assert families()["toy"].spec.tasks[0].id == "seating"


def test_a_malformed_plugin_path_entry_is_refused_by_name(clean_registry):
    clean_registry.setenv(FAMILY_PATH_ENV, "tests.toy_family")
    reload_registry()
    with pytest.raises(FamilyContractError, match=r"'tests.toy_family' is not <family id>=<package root>"):
        families()


def test_a_plugin_family_breaking_the_contract_is_refused_naming_what_is_missing(clean_registry, tmp_path):
    pkg = tmp_path / "half_family"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "models.py").write_text("from tests.toy_family.models import FAMILY  # noqa: F401\n")
    (pkg / "checkers.py").write_text("from tests.toy_family.checkers import *  # noqa: F403\n"
                                     "from tests.toy_family.checkers import known_kinds, read_data  # noqa: F401\n")
    (pkg / "renderers.py").write_text("from tests.toy_family.renderers import render_objective, render_prompt, sentence_kinds  # noqa: F401\n")
    clean_registry.syspath_prepend(str(tmp_path))
    clean_registry.setenv(FAMILY_PATH_ENV, "toy=half_family")
    reload_registry()
    with pytest.raises(FamilyContractError, match=r"family toy: renderer half_family.renderers lacks render_rule"):
        families()


def test_grading_a_plugin_instance_loads_neither_its_model_module_nor_ortools():
    with toy_family_registered():
        inst = build_instance(0, 1, GenerateOptions(task="seating", size="small")).instance
    assert inst is not None
    script = (
        "import json, sys\n"
        "from pbsolve.schema import Instance\n"
        "from pbsolve.grading import grade\n"
        "inst = Instance.model_validate_json(sys.stdin.read())\n"
        "assert grade(inst, json.dumps(inst.reference)).all_pass == 1\n"
        "loaded = [m for m in sys.modules if m == 'tests.toy_family.models' or m.startswith('ortools')]\n"
        "print(json.dumps(loaded))\n"
    )
    env = {**os.environ, FAMILY_PATH_ENV: TOY_PATH, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], input=inst.model_dump_json(), capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    assert json.loads(out.stdout) == []


def test_the_readme_states_the_toy_familys_line_counts():
    """The 'Adding a family' section quotes the template's size: it must be the real one."""
    parts = {p.stem: p.read_text().splitlines() for p in (ROOT / "tests" / "toy_family").glob("*.py")}
    total = sum(len(lines) for lines in parts.values())
    non_blank = {k: sum(1 for line in v if line.strip()) for k, v in parts.items()}
    stated = (
        f"in {total} lines ({sum(non_blank.values())} non-blank: models {non_blank['models']}, "
        f"checkers {non_blank['checkers']}, renderers {non_blank['renderers']}, docstring {non_blank['__init__']})"
    )
    assert stated in " ".join((ROOT / "README.md").read_text().split())
