"""Type-check the installed package with mypy (`make lint`).

pyproject's package-dir installs models/, renderers/ and checkers/ as pbsolve.models,
pbsolve.renderers and pbsolve.checkers. The editable install does that with an import
hook, which mypy cannot follow, and checking the folders as they lie would name them
`models.…` (a second, unrelated module for every file). This script therefore lays out
the installed tree under build/typecheck/ with symlinks (pbsolve/ with models/,
renderers/ and checkers/ inside it), read from package-dir so the two cannot drift, runs
mypy there with the repo's [tool.mypy] settings, so each file is checked once under its
installed name, and prints the findings with the repo's own paths.

Usage: python scripts/typecheck.py [extra mypy arguments]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGE = ROOT / "build" / "typecheck"


def layout() -> dict[str, str]:
    """Installed path -> repo folder, from pyproject package-dir ('pbsolve/models' -> 'models')."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_dir: dict[str, str] = cfg["tool"]["setuptools"]["package-dir"]
    return {name.replace(".", "/"): folder for name, folder in package_dir.items()}


def stage(mapping: dict[str, str], into: Path = STAGE) -> None:
    """Symlink the installed tree: each mapped folder's entries, nested folders as one link."""
    if into.exists():
        shutil.rmtree(into)
    nested = set(mapping)
    for dest, folder in sorted(mapping.items()):  # parents before the folders inside them
        target = into / dest
        if any(dest.startswith(other + "/") for other in nested):
            target.symlink_to(ROOT / folder, target_is_directory=True)
            continue
        target.mkdir(parents=True)
        for entry in (ROOT / folder).iterdir():
            if entry.name != "__pycache__" and f"{dest}/{entry.name}" not in nested:
                (target / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())


def repo_path(line: str, mapping: dict[str, str]) -> str:
    """'pbsolve/models/x.py:3: error' -> 'models/x.py:3: error' (the longest matching prefix)."""
    for dest in sorted(mapping, key=len, reverse=True):
        if line.startswith(dest + "/"):
            return mapping[dest] + line[len(dest) :]
    return line


def main(argv: list[str]) -> int:
    mapping = layout()
    stage(mapping)
    cmd = [
        sys.executable, "-m", "mypy",
        "--config-file", str(ROOT / "pyproject.toml"),
        "--cache-dir", str(ROOT / ".mypy_cache"),
        *argv,
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=STAGE, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        print(repo_path(line, mapping))
    sys.stderr.write(proc.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
