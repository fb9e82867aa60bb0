"""The README is a specification: its examples run here, offline, and must still say what they print.

Every fenced block in README.md carries a marker, an HTML comment on the last non-blank
line before its opening fence, so no example can drift unnoticed:

* ``<!-- readme-test: run -->``: the block runs with bash in one temporary work folder
  shared by all run blocks, in README order (so a block may use files an earlier one made),
  with ``.venv/bin`` first on PATH (``pbsolve`` and ``python`` are this checkout's) and
  ``COLUMNS=100`` (the width the README's tables were printed at). It must exit 0.
* ``; replace "A" "B" (why)`` after ``run``: the test runs the block with every A replaced
  by B, visibly, e.g. a smaller ``--n`` for a block whose only cost is its size.
* ``; serve "CMD" (why)`` after ``run``: the test starts CMD with ``--port P`` on a free
  port P in the work folder first, waits for ``/health``, and sends the block's
  ``localhost:8000`` (the default port) to P; the server is stopped after the block.
* ``<!-- readme-test: output -->``: the block is output of the nearest run block above
  it. Its lines, normalised (table borders and spacing ignored, seconds masked), must
  appear in that run's output in order and contiguously; a line ``...`` skips any lines.
* ``<!-- readme-test: skip (reason) -->``: not run (a GPU trainer, a model endpoint, a
  placeholder), and the reason is required.

Every ``pbsolve`` command in a bash block, run or skipped, must name an existing
subcommand and existing options. Refresh an output block from the command of its run
block (``COLUMNS=100``), never by hand.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import typer

from pbsolve.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAKEFILE = ROOT / "Makefile"
BIN = Path(sys.executable).parent
COLUMNS = "100"
BLOCK_TIMEOUT = 240  # seconds; a run block that needs longer is too large for a README example
MARKER = re.compile(r"^<!--\s*readme-test:\s*(?P<body>.*?)\s*-->$")
REPLACE = re.compile(r'replace\s+"(?P<old>[^"]*)"\s+"(?P<new>[^"]*)"')
SERVE = re.compile(r'serve\s+"(?P<cmd>[^"]+)"')
DEFAULT_HOSTS = ("localhost:8000", "127.0.0.1:8000")


@dataclass
class Block:
    """One fenced block of the README and its marker."""

    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    section: str
    marker: str | None  # the marker body, or None when the block has none
    kind: str = ""  # run, output, skip (or "" when unmarked / unknown)
    replacements: list[tuple[str, str]] = field(default_factory=list)
    serve: str | None = None
    source: Block | None = None  # for output blocks: the run block it is output of

    @property
    def name(self) -> str:
        return f"{self.section}:L{self.line}"


def parse_readme(text: str) -> list[Block]:
    """Every fenced block (a line starting with ```), with the marker on the line before it."""
    blocks: list[Block] = []
    section = "top"
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            section = re.sub(r"[^a-z0-9]+", "-", line.lstrip("#").strip().lower()).strip("-")[:24]
        if line.startswith("```"):
            start, lang = i, line[3:].strip()
            j = i + 1
            while j < len(lines) and lines[j].rstrip() != "```":
                j += 1
            k = start - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            found = MARKER.match(lines[k].strip()) if k >= 0 else None
            blocks.append(Block(start + 1, lang, "\n".join(lines[start + 1 : j]), section,
                                found.group("body") if found else None))  # fmt: skip
            i = j + 1
            continue
        i += 1
    last_run: Block | None = None
    for b in blocks:
        if b.marker is None:
            continue
        head = re.split(r"[\s;(]", b.marker, maxsplit=1)[0]
        if head in ("run", "output", "skip"):
            b.kind = head
        if b.kind == "run":
            b.replacements = [(m.group("old"), m.group("new")) for m in REPLACE.finditer(b.marker)]
            serve = SERVE.search(b.marker)
            b.serve = serve.group("cmd") if serve else None
            last_run = b
        elif b.kind == "output":
            b.source = last_run
    return blocks


BLOCKS = parse_readme(README.read_text(encoding="utf-8"))
RUN_BLOCKS = [b for b in BLOCKS if b.kind == "run"]
OUTPUT_BLOCKS = [b for b in BLOCKS if b.kind == "output"]
BASH_BLOCKS = [b for b in BLOCKS if b.lang in ("bash", "sh", "shell")]


# -- normalising output -----------------------------------------------------------------------
RULE_LINE = re.compile(r"^[\s━─═┏┓┗┛┡┩└┘┌┐├┤┼╇╈╋┳┻┬┴╭╮╰╯]+$")
CELL_SEP = re.compile(r"[│┃]")
SECONDS = re.compile(r"\b\d+(?:\.\d+)?(?= ?s\b)")


def normalise(text: str) -> list[str]:
    """Lines as compared: borders reduced to one token, cells stripped, spacing and seconds ignored."""
    result = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if RULE_LINE.match(line):
            result.append("<rule>")
            continue
        line = SECONDS.sub("<t>", line)
        if CELL_SEP.search(line):
            cells = [re.sub(r"\s+", " ", c.strip()) for c in CELL_SEP.split(line)]
            line = "| " + " | ".join(cells[1:-1] if cells[0] == "" and cells[-1] == "" else cells) + " |"
        else:
            line = re.sub(r"\s+", " ", line)
        result.append(line)
    return result


def find_excerpt(excerpt: list[str], lines: list[str]) -> bool:
    """True if ``excerpt`` occurs in ``lines`` in order, contiguously between ``...`` lines."""
    segments: list[list[str]] = [[]]
    for line in excerpt:
        if line == "...":
            segments.append([])
        else:
            segments[-1].append(line)
    pos = 0
    for seg in segments:
        if not seg:
            continue
        starts = range(pos, len(lines) - len(seg) + 1)
        hit = next((s for s in starts if lines[s : s + len(seg)] == seg), None)
        if hit is None:
            return False
        pos = hit + len(seg)
    return True


# -- running the blocks -----------------------------------------------------------------------
@dataclass
class Result:
    """What running one README block gave."""

    script: str
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = COLUMNS
    env.pop("PBSOLVE_TOKEN", None)
    return env


def _wait_healthy(port: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {proc.stdout.read() if proc.stdout else ''}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"server on port {port} not healthy after {timeout} s")


def run_block(block: Block, workdir: Path) -> Result:
    """Run one marked block as its marker says, in ``workdir``."""
    script = block.text
    for old, new in block.replacements:
        assert old in script, f"{block.name}: marker replaces {old!r}, which the block does not contain"
        script = script.replace(old, new)
    server = None
    if block.serve:
        port = _free_port()
        cmd = [*shlex.split(block.serve), "--port", str(port)]
        server = subprocess.Popen(cmd, cwd=workdir, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True)  # fmt: skip
        for host in DEFAULT_HOSTS:
            script = script.replace(host, f"127.0.0.1:{port}")
    t0 = time.monotonic()
    try:
        if server is not None:
            _wait_healthy(port, server)
        proc = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=workdir, env=_env(),
                              capture_output=True, text=True, timeout=BLOCK_TIMEOUT, check=False)  # fmt: skip
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    return Result(script, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - t0)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Result]:
    """Every run block, run once, in README order, in one work folder."""
    workdir = tmp_path_factory.mktemp("readme")
    return {b.line: run_block(b, workdir) for b in RUN_BLOCKS}


# -- the tests --------------------------------------------------------------------------------
def test_every_fenced_block_has_a_known_marker() -> None:
    bad = [f"{b.name} ({b.marker or 'no marker'})" for b in BLOCKS if not b.kind]
    assert not bad, "README blocks without a readme-test marker (run / output / skip (reason)):\n" + "\n".join(bad)


def test_every_skip_gives_its_reason() -> None:
    bad = [b.name for b in BLOCKS if b.kind == "skip" and not re.search(r"\(\s*\S", b.marker or "")]
    assert not bad, f"skip markers without a reason: {bad}"


def test_every_output_block_follows_a_run_block() -> None:
    bad = [b.name for b in OUTPUT_BLOCKS if b.source is None]
    assert not bad, f"output blocks with no run block above them: {bad}"


def test_markers_parse_into_runs_and_outputs() -> None:
    """The convention is live: the README has run blocks with output blocks to compare."""
    assert RUN_BLOCKS and OUTPUT_BLOCKS
    assert all(b.lang in ("bash", "sh", "shell") for b in RUN_BLOCKS)


def test_make_demo_is_the_pbsolve_demo_the_quickstart_marker_runs() -> None:
    """The Quickstart marker runs ``make demo`` as its recipe; hold the Makefile to it."""
    recipe = re.search(r"^demo:.*\n\t(?P<cmd>.+)$", MAKEFILE.read_text(encoding="utf-8"), re.MULTILINE)
    assert recipe and recipe.group("cmd").strip() == "$(BIN)/pbsolve demo --out demo"
    quick = [b for b in RUN_BLOCKS if "make demo" in b.text]
    assert quick and ("make demo", "pbsolve demo --out demo") in quick[0].replacements


def _commands(script: str) -> list[list[str]]:
    """The ``pbsolve`` invocations of a shell script: [subcommand, args...] each."""
    joined = script.replace("\\\n", " ")
    found = []
    for line in joined.splitlines():
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError:
            tokens = line.split()
        for i, tok in enumerate(tokens):
            if tok == "pbsolve" and (i == 0 or tokens[i - 1] in ("&&", "||", ";", "|", "&", "then", "do")):
                args = []
                for t in tokens[i + 1 :]:
                    if t in ("&&", "||", ";", "|", "&", ">", "<") or t.startswith((">", "<", "2>")):
                        break
                    args.append(t)
                found.append(args)
    return found


@pytest.mark.parametrize("block", BASH_BLOCKS, ids=lambda b: b.name)
def test_pbsolve_commands_name_existing_options(block: Block) -> None:
    group = typer.main.get_command(app)
    problems = []
    for args in _commands(block.text):
        if not args:
            continue
        command = group.commands.get(args[0])  # type: ignore[attr-defined]
        if command is None:
            problems.append(f"pbsolve {args[0]}: no such subcommand")
            continue
        known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        for arg in args[1:]:
            opt = arg.split("=", 1)[0]
            if opt.startswith("--") and opt not in known:
                problems.append(f"pbsolve {args[0]}: no option {opt}")
    assert not problems, f"{block.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("block", RUN_BLOCKS, ids=lambda b: b.name)
def test_run_block_succeeds(block: Block, results: dict[int, Result]) -> None:
    r = results[block.line]
    assert r.returncode == 0, (
        f"{block.name} exited {r.returncode}\n--- script\n{r.script}\n--- stderr\n{r.stderr[-3000:]}"
    )


@pytest.mark.parametrize("block", OUTPUT_BLOCKS, ids=lambda b: b.name)
def test_output_block_is_what_its_command_prints(block: Block, results: dict[int, Result]) -> None:
    assert block.source is not None
    r = results[block.source.line]
    expected = normalise(block.text)
    actual = normalise(r.stdout) + normalise(r.stderr)
    assert expected, f"{block.name} is empty"
    assert find_excerpt(expected, actual), (
        f"{block.name} no longer matches the output of {block.source.name} (refresh it from a real run, "
        f"COLUMNS={COLUMNS}):\n--- README (normalised)\n" + "\n".join(expected)
        + "\n--- this run (normalised)\n" + "\n".join(actual)
    )  # fmt: skip


def test_normalise_ignores_borders_spacing_and_seconds() -> None:
    a = "┏━━┳━━┓\n│ x  │  1 │\n done in 0.09 s  (certify)"
    b = "┏━━━━━┳━┓\n│ x │ 1     │\ndone in 1.5 s (certify)"
    assert normalise(a) == normalise(b) == ["<rule>", "| x | 1 |", "done in <t> s (certify)"]
    assert normalise("│ x │ 2 │") != normalise("│ x │ 1 │")


def test_excerpt_must_be_contiguous_except_at_ellipsis() -> None:
    lines = ["a", "b", "c", "d"]
    assert find_excerpt(["b", "c"], lines)
    assert not find_excerpt(["b", "d"], lines)
    assert find_excerpt(["a", "...", "d"], lines)
    assert not find_excerpt(["d", "...", "a"], lines)


def test_parser_reads_markers_and_leaves_an_unmarked_block_unmarked() -> None:
    text = (
        '## A\n\n<!-- readme-test: run; replace "--n 9" "--n 1" (time) -->\n```bash\npbsolve generate --n 9\n```\n\n'
        "<!-- readme-test: output -->\n```\nsummary\n```\n\nprose\n\n```bash\nuncovered\n```\n"
    )
    run, output, bare = parse_readme(text)
    assert (run.kind, run.replacements, run.lang) == ("run", [("--n 9", "--n 1")], "bash")
    assert output.kind == "output" and output.source is run
    assert bare.kind == "" and bare.marker is None


def main() -> None:
    """``python tests/test_readme.py``: run every run block in a fresh folder and print, for each
    output block, the full output of its command, to refresh the README from (by hand)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="readme-") as tmp:
        results = {b.line: run_block(b, Path(tmp)) for b in RUN_BLOCKS}
    for b in OUTPUT_BLOCKS:
        assert b.source is not None
        r = results[b.source.line]
        status = "matches" if find_excerpt(normalise(b.text), normalise(r.stdout) + normalise(r.stderr)) else "DIFFERS"
        print(f"===== {b.name} ({status}; output of {b.source.name}, exit {r.returncode}, {r.seconds:.1f} s)")
        print(r.stdout.rstrip("\n"))
        if r.stderr.strip():
            print(f"----- stderr\n{r.stderr.rstrip()}")


if __name__ == "__main__":
    main()
