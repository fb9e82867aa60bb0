"""JSON Lines in and out: per-line errors that name file and line, atomic output files.

Outputs are written to ``<name>.partial`` and renamed into place only when complete,
so an interrupted run never leaves a truncated file that looks finished.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class LineError:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def _short(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "line"
    return f"{where}: {first.get('msg', 'invalid')} ({exc.error_count()} error(s))"


def read_models(path: str | Path, model: type[M]) -> Iterator[tuple[int, M | LineError]]:
    """Yield (line number, parsed model or LineError) for every non-blank line."""
    p = str(path)
    with open(path, encoding="utf-8", errors="replace") as fh:
        for no, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except ValueError as exc:
                yield no, LineError(p, no, f"not valid JSON: {exc}")
                continue
            except RecursionError:
                yield no, LineError(p, no, "not valid JSON: nested too deeply")
                continue
            try:
                yield no, model.model_validate(obj)
            except ValidationError as exc:
                yield no, LineError(p, no, f"not a valid {model.__name__}: {_short(exc)}")
            except RecursionError:
                yield no, LineError(p, no, f"not a valid {model.__name__}: nested too deeply")


def dumps(model: BaseModel) -> str:
    """Canonical one-line JSON: the same model always gives the same bytes."""
    return json.dumps(model.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))


def check_writable(path: str | Path) -> None:
    """Raise OSError now if ``path`` cannot be written (a folder, an unwritable folder), so a
    long run never fails only at its very end, when the finished file is renamed into place."""
    final = Path(path)
    if final.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", str(final))
    parent = final.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, f"{parent} is not a directory", str(final))
    if not os.access(parent, os.W_OK | os.X_OK) or (final.exists() and not os.access(final, os.W_OK)):
        raise PermissionError(errno.EACCES, "permission denied", str(final))


@contextmanager
def _replaced(path: str | Path, binary: bool) -> Iterator[IO[Any]]:
    """Write to path.partial; rename to path only if the block finishes without error, and
    only once the content is on disk (a crash keeps the old file)."""
    final = Path(path)
    check_writable(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    partial = final.with_name(final.name + ".partial")
    with open(partial, "wb") if binary else open(partial, "w", encoding="utf-8") as fh:
        yield fh
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(partial, final)


def atomic_writer(path: str | Path) -> AbstractContextManager[IO[str]]:
    """A text file written in a ``with`` block, atomically (see :func:`_replaced`)."""
    return _replaced(path, binary=False)


def write_atomic(path: str | Path, data: bytes) -> None:
    """``path`` replaced atomically by content already in memory."""
    with _replaced(path, binary=True) as fh:
        fh.write(data)
