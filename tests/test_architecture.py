"""Structural promises of the design: layout, independence and taxonomy coverage."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from pbsolve.checkers.scheduling.checks import CHECKS
from pbsolve.family import all_tasks, families
from pbsolve.models.scheduling.common import RULE_BUILDERS
from pbsolve.models.scheduling.timetable_model import ENCODERS
from pbsolve.schema import instance_json_schema

ROOT = Path(__file__).resolve().parents[1]


def _imports(folder: Path) -> set[str]:
    names = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
    return names


def test_checkers_never_import_the_solver_models_or_ortools():
    imported = _imports(ROOT / "checkers")
    assert not [m for m in imported if m.startswith(("pbsolve.models", "ortools", "pulp"))]


def test_core_has_no_family_specific_imports():
    imported = _imports(ROOT / "pbsolve")
    family_ids = set(families())
    leaks = [m for m in imported if any(m.startswith(f"pbsolve.{side}.{f}") for side in ("models", "renderers", "checkers") for f in family_ids)]
    assert not leaks


def test_no_top_level_models_package_is_installed(tmp_path):
    import subprocess
    import sys

    probe = "import importlib.util as u; print(u.find_spec('models') is None, u.find_spec('pbsolve.models') is not None)"
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["True", "True"]


def test_docs_instance_schema_is_current():
    on_disk = json.loads((ROOT / "docs" / "instance.schema.json").read_text())
    assert on_disk == instance_json_schema(), "run `make schema` to refresh docs/instance.schema.json"


@pytest.mark.parametrize("task", all_tasks(), ids=lambda t: t.id)
def test_each_task_meets_the_pool_minimums(task):
    assert len(task.subtasks) >= 3
    assert len(task.pool_of("basic")) >= 6
    assert len(task.pool_of("medium")) >= 5
    assert task.pool_of("hard")[0].id == "infeasibility_detection"


@pytest.mark.parametrize("task", [t for t in all_tasks() if t.family == "scheduling"], ids=lambda t: t.id)
def test_every_pool_constraint_has_an_encoding_a_check_and_a_sentence(task):
    from pbsolve.mechanisms import HARD_KINDS, REPORTING_KINDS
    from pbsolve.renderers import scheduling as rend

    source = Path(rend.__file__).read_text()
    for c in task.pool:
        if c.id in HARD_KINDS or c.id in REPORTING_KINDS:
            assert c.id in HARD_KINDS + REPORTING_KINDS  # mechanisms, implemented once in the core
            continue
        assert c.id in ENCODERS and c.id in CHECKS, c.id
        assert f'"{c.id}"' in source or c.id in rend.SENTENCES, f"no sentence for {c.id}"
        assert c.id in task.base_rules or c.id in RULE_BUILDERS or c.id == "availability", c.id
