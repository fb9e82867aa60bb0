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


# -- the import graph of pbsolve ------------------------------------------------------------------
def _installed_packages() -> dict[str, Path]:
    """Import name -> source folder, as pyproject installs them (checkers/ is pbsolve.checkers)."""
    import tomllib

    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return {name: ROOT / folder for name, folder in setup["package-dir"].items()}


def _module_files() -> dict[str, Path]:
    """Every pbsolve module by dotted name (packages under their own name, from __init__.py)."""
    files: dict[str, Path] = {}
    roots = sorted(_installed_packages().items(), key=lambda kv: -len(kv[0]))  # pbsolve.models before pbsolve
    for prefix, folder in roots:
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            files.setdefault(".".join((prefix, *parts)), path)
    return files


def _is_type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _imported_modules(module: str, path: Path, known: set[str]) -> set[str]:
    """The pbsolve modules ``module`` imports, at module level or inside functions alike
    (a lazy import is a dependency all the same); imports under ``if TYPE_CHECKING:`` never
    run and do not count. ``from a import b`` names the module a.b when there is one."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _is_type_checking_block(node):
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for a in node.names:
                found.add(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in found if m in known and m != module}


def pbsolve_import_graph() -> dict[str, set[str]]:
    files = _module_files()
    return {m: _imported_modules(m, p, set(files)) for m, p in files.items()}


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Modules reached from ``start`` by one import or more."""
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(graph[m])
    return seen


def _shortest_cycle_through(graph: dict[str, set[str]], start: str) -> list[str]:
    """[start, ..., start] by the fewest imports (breadth-first)."""
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for m in frontier:
            for n in sorted(graph[m]):
                if n == start:
                    path = [m]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [start, *reversed(path[:-1]), start] if m != start else [start, start]
                if n not in parent:
                    parent[n] = m
                    nxt.append(n)
        frontier = nxt
    raise ValueError(f"{start} is on no cycle")


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle [a, b, ..., a] per group of modules that import each other (per strongly
    connected component), in name order."""
    reach = {m: _reachable(graph, m) for m in graph}
    done: set[str] = set()
    cycles = []
    for m in sorted(graph):
        if m in done or m not in reach[m]:
            continue
        done |= {n for n in reach[m] if m in reach[n]}
        cycles.append(_shortest_cycle_through(graph, m))
    return cycles


def _show(cycles: list[list[str]]) -> str:
    return "; ".join(" -> ".join(c) for c in cycles)


def test_the_import_graph_sees_lazy_imports_and_the_uses_of_the_core():
    graph = pbsolve_import_graph()
    assert "pbsolve.serve.rewards" in graph["pbsolve.serve.server"]
    assert "pbsolve.llm.rewriter" in graph["pbsolve.generate"]  # imported inside a function
    assert any(m.startswith("pbsolve.checkers.") for m in graph)  # installed from checkers/


def test_import_cycles_names_the_modules_of_each_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c", "a"], ["d", "e", "d"]]
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def _in_pbsolve_folder(module: str) -> bool:
    return _module_files()[module].is_relative_to(ROOT / "pbsolve")


def test_no_import_cycle_in_pbsolve():
    """The core and its uses (everything in the pbsolve/ folder) import each other in one direction."""
    cycles = [c for c in import_cycles(pbsolve_import_graph()) if any(_in_pbsolve_folder(m) for m in c)]
    assert not cycles, "import cycle: " + _show(cycles)


def test_no_import_cycle_in_the_family_packages():
    """models/, renderers/ and checkers/ (installed as pbsolve.models, ...) have no cycle either."""
    cycles = import_cycles(pbsolve_import_graph())
    assert not cycles, "import cycle: " + _show(cycles)


def test_each_use_of_the_core_lives_in_its_own_subpackage():
    flat = {p.stem for p in (ROOT / "pbsolve").glob("*.py")}
    uses = {"llm", "responders", "rewriter", "loop", "store", "server", "export", "perturb", "judge", "audit",
            "cli", "cli_llm", "cli_loop", "cli_audit", "cli_serve"}  # fmt: skip
    assert not flat & uses, f"move {sorted(flat & uses)} into their subpackage"
    for package in ("llm", "loop", "serve", "audit", "cli"):
        assert (ROOT / "pbsolve" / package / "__init__.py").is_file(), package


def test_every_package_folder_is_listed_for_the_wheel():
    """A package folder missing from pyproject's list is absent from a wheel (the editable
    install hides it), so every folder with an __init__.py must be listed."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = set()
    for package, folder in config["package-dir"].items():
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([package, *rel.parts]))
    assert found - listed == set(), f"add to [tool.setuptools].packages: {sorted(found - listed)}"
