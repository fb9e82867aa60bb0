"""Writing a responder's answers to a file (``pbsolve answer``): response lines with token
usage and raw responses, via ``<out>.partial``, resumable after an interrupt or an endpoint
that stays down. The endpoint options themselves live in :mod:`pbsolve.cli.common`."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pbsolve import interrupts
from pbsolve.cli.common import err, exit_interrupted, fail, progress_bar, write_guard
from pbsolve.jsonl import check_writable
from pbsolve.llm.client import EndpointConfigError, EndpointDown
from pbsolve.llm.responders import Answer, Responder, answer_many
from pbsolve.schema import Instance


def response_line(responder: str, inst: Instance, ans: Answer) -> str:
    """A response line: {id, response, response_id}, plus cost and raw response when known."""
    line: dict[str, Any] = {"id": inst.id, "response": ans.text, "response_id": f"{responder}-{inst.id}"}
    if ans.usage or ans.raw is not None or ans.error is not None:
        line.update({"model": ans.model, "usage": ans.usage, "calls": ans.calls, "seconds": round(ans.seconds, 4)})
        if ans.error is not None:
            line["error"] = ans.error
        if ans.raw is not None:
            line["raw"] = ans.raw
    return json.dumps(line, ensure_ascii=False)


def _done_ids(partial: Path) -> set[str]:
    """Ids answered in an interrupted run (a torn last line is cut)."""
    data = partial.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        with open(partial, "r+b") as fh:
            fh.truncate(len(data))
    ids = set()
    for raw in data.decode("utf-8", errors="replace").splitlines():
        try:
            ids.add(json.loads(raw)["id"])
        except (ValueError, KeyError, TypeError):
            continue
    return ids


def write_answers(responder: Responder, name: str, instances: Sequence[Instance], out_path: Path, resume: bool) -> None:
    """Answer ``instances`` into ``out_path`` (via ``<out>.partial``, renamed when complete).

    With ``resume``, lines already in ``<out>.partial`` are kept and their instances
    skipped. When the endpoint stays down, the answers obtained are kept in the
    ``.partial`` file and the command fails with a message saying how to resume.
    """
    try:
        check_writable(out_path)
    except OSError as exc:
        fail(f"cannot write {out_path}: {exc.strerror or exc}")

    partial = out_path.with_name(out_path.name + ".partial")
    done = _done_ids(partial) if resume and partial.exists() else set()
    todo = [inst for inst in instances if inst.id not in done]
    saved = len(done)
    failed = 0
    stats = getattr(getattr(responder, "client", None), "stats", None)
    with write_guard(out_path), interrupts.owned_signals():
        out_path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(partial, "a" if resume else "w", encoding="utf-8")  # noqa: SIM115 - closed by hand on each exit path
        try:
            with progress_bar() as bar:
                task = bar.add_task(f"answering ({name})", total=len(instances), completed=saved)
                for i, ans in answer_many(responder, todo):
                    failed += ans.error is not None
                    fh.write(response_line(name, todo[i], ans) + "\n")
                    fh.flush()
                    saved += 1
                    bar.advance(task)
        except (EndpointDown, EndpointConfigError) as exc:
            fh.close()
            fail(f"{exc}. {saved} of {len(instances)} responses saved in {partial}; "
                  f"fix the endpoint and run the same command with --resume to continue")  # fmt: skip
        except KeyboardInterrupt:
            fh.close()
            exit_interrupted(f"interrupted: {saved} of {len(instances)} responses saved in {partial}; "
                         "run the same command with --resume to continue")  # fmt: skip
        fh.flush()
        os.fsync(fh.fileno())
        fh.close()
        os.replace(partial, out_path)
    note = ""
    if stats is not None:
        note = f" · {stats.requests} requests ({stats.retries} retried), {stats.usage.total_tokens} tokens"
    if resume and done:
        note += f" · {len(done)} kept from the interrupted run"
    if failed:
        note += f" · {failed} without an answer (the reason is under `error` in their lines)"
    err.print(f"{len(instances)} responses by {name} -> {out_path}{note}", markup=False)
