"""Instance data read from published benchmark files (`pbsolve generate --from FILE`).

A task type that can import a literature format (TSPLIB, PSPLIB, job-shop files) turns a
file's text into its own instance data; the generator then certifies and renders it like
sampled data, so a published problem becomes a certified task whose optimum can be held
against the published one. The file's text travels inside the generation options (not its
path), so workers on other machines rebuild the same bytes, and the instance records the
file's name and SHA-256.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

MAX_SOURCE_BYTES = 8 * 1024 * 1024  # benchmark files are kilobytes; a larger one is a mistake


class SourceError(ValueError):
    """A data file that cannot be imported: unreadable, of the wrong format, or for a task
    type without an importer. The message names the file and what is wrong."""


class SourceFile(BaseModel):
    """The text of one data file and the name it was read under."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    text: str

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    @classmethod
    def read(cls, path: Path) -> SourceFile:
        """The file's text, or a :class:`SourceError` saying why it cannot be read."""
        try:
            size = path.stat().st_size
            if path.is_dir():
                raise SourceError(f"{path} is a folder, not a data file")
            if size > MAX_SOURCE_BYTES:
                raise SourceError(f"{path} has {size:,} bytes; data files are at most {MAX_SOURCE_BYTES:,}")
            raw = path.read_bytes()
        except OSError as exc:
            raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SourceError(f"{path} is not UTF-8 text (byte {exc.start})") from exc
        return cls(name=path.name, text=text)


class SourceRecord(BaseModel):
    """Which file an instance's data came from (its provenance)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    sha256: str


@dataclass(frozen=True)
class Imported:
    """A file's problem as a task type's instance data, and the subtask it is an instance of."""

    subtask: str
    data: dict[str, Any]
