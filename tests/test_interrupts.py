"""Run safety: pbsolve owns SIGINT/SIGTERM, stops within about a second, keeps the .partial
file, says how to continue, and `--resume` finishes byte-identical to an uninterrupted run.

The CLI tests send a real signal to a real subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pydantic
import pydantic_core
import pytest

from pbsolve import interrupts
from pbsolve.certify import Rejected, SolverLimits, make_solver
from pbsolve.generate import GenerateOptions, build_instance, generate, load_checkpoint, run_header, sidecar_path
from pbsolve.jsonl import dumps

TINY = GenerateOptions(size="tiny")
ROOT = Path(__file__).resolve().parents[1]


def stop_bound_s() -> float:
    """How soon a stopped run must have exited: 2.5 s on a machine with a core to spare,
    stretched by how overloaded the machine is (a CI run beside other jobs), so the test
    catches a hang, not a busy neighbour."""
    return 2.5 * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


@pytest.fixture(autouse=True)
def _no_stop_left_behind():
    interrupts.reset()
    yield
    interrupts.reset()


def _pbsolve(*args: object, cwd: Path, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "pbsolve", *map(str, args)], cwd=cwd, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw,
    )  # fmt: skip


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _wait_for_lines(path: Path, k: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while _lines(path) < k:
        assert proc.poll() is None, f"the run ended before it could be interrupted: {proc.communicate()}"
        assert time.monotonic() < deadline, "the run wrote nothing"
        time.sleep(0.05)


def _stop(proc: subprocess.Popen, sig: int, group: bool = False) -> tuple[int, float, str]:
    """Send ``sig`` (to the process group: a terminal's Ctrl-C), wait; (rc, seconds, stderr)."""
    t0 = time.monotonic()
    if group:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=30)
    return proc.returncode, time.monotonic() - t0, " ".join(stderr.split())


def _clean_bytes(n: int, seed: int) -> bytes:
    return "".join(dumps(o.instance) + "\n" for o in generate(n, seed, TINY) if o.instance).encode()


# -- the solver never catches the signal; a stopped solve is never a result -------------------
def test_cp_sat_never_installs_its_own_sigint_handler():
    assert make_solver(SolverLimits()).parameters.catch_sigint_signal is False


def _slow_model():
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    xs = [m.new_int_var(0, 60, f"x{i}") for i in range(45)]
    m.add_all_different(xs)
    for a, b in zip(xs, xs[1:]):
        m.add(a + b != 60)
    m.maximize(sum((i % 7) * x for i, x in enumerate(xs)))
    return m


def test_a_stop_request_ends_a_running_solve_with_interrupted_not_a_status():
    solver = make_solver(SolverLimits(deterministic_time=1000.0))
    caught: list[BaseException | int] = []

    def solve() -> None:
        try:
            caught.append(solver.solve(_slow_model()))
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            caught.append(exc)

    t = threading.Thread(target=solve)
    t.start()
    time.sleep(0.5)
    t0 = time.monotonic()
    interrupts.request_stop(signal.SIGINT)
    t.join(5)
    assert not t.is_alive() and time.monotonic() - t0 < 1.5
    assert len(caught) == 1 and isinstance(caught[0], interrupts.Interrupted)
    assert not isinstance(caught[0], Rejected)


def test_an_index_built_after_a_stop_request_raises_instead_of_recording_a_reject():
    interrupts.request_stop(signal.SIGINT)
    with pytest.raises(interrupts.Interrupted):
        build_instance(1, 1, TINY)


# -- an interrupt that a library wraps in its own error is still an interrupt -------------------
class _Serialised(pydantic.BaseModel):
    x: int = 0

    @pydantic.model_serializer(mode="wrap")
    def _signal_midway(self, handler: pydantic.SerializerFunctionWrapHandler) -> object:
        os.kill(os.getpid(), signal.SIGINT)  # the handler runs here and raises inside pydantic
        time.sleep(0.2)
        return handler(self)


def test_sigint_inside_a_pydantic_serializer_leaves_the_block_as_interrupted():
    with pytest.raises(interrupts.Interrupted) as caught, interrupts.owned_signals():
        _Serialised().model_dump_json()
    assert isinstance(caught.value.__cause__, pydantic_core.PydanticSerializationError)
    assert caught.value.signum == signal.SIGINT


def test_an_ordinary_error_in_an_owned_block_is_not_taken_for_an_interrupt():
    with pytest.raises(ZeroDivisionError), interrupts.owned_signals():
        1 / 0


def test_an_exit_raised_while_handling_the_interrupt_leaves_the_block_unchanged():
    class Exit(RuntimeError):  # what a CLI framework raises to end with a code
        pass

    with pytest.raises(Exit), interrupts.owned_signals():
        try:
            interrupts.request_stop(signal.SIGTERM)
            interrupts.check()
        except interrupts.Interrupted:
            raise Exit(143) from None


def test_a_checker_error_after_a_stop_request_is_an_interrupt_not_a_grading_error(any_instance, monkeypatch):
    from pbsolve.family import checker
    from pbsolve.grading import grade

    monkeypatch.setattr(checker(any_instance.family), "check_answer", lambda i, a: 1 / 0)
    interrupts.request_stop(signal.SIGINT)
    with pytest.raises(interrupts.Interrupted):
        grade(any_instance, "{}")


def test_a_responder_error_after_a_stop_request_is_an_interrupt_not_an_empty_answer(any_instance):
    from pbsolve.llm.responders import answer_one

    def failing(instance: object) -> str:
        raise RuntimeError("wrapped interrupt")

    assert answer_one(failing, any_instance).error == "responder error: RuntimeError: wrapped interrupt"
    interrupts.request_stop(signal.SIGINT)
    with pytest.raises(interrupts.Interrupted):
        answer_one(failing, any_instance)


# -- generate: a real signal to a real subprocess -----------------------------------------
def test_ctrl_c_to_the_process_group_stops_generate_with_workers_within_a_second(tmp_path):
    proc = _pbsolve("generate", "--n", 400, "--size", "tiny", "--seed", 5, "--workers", 2, "--out", "r.jsonl",
                    cwd=tmp_path, start_new_session=True)  # fmt: skip
    partial = tmp_path / "r.jsonl.partial"
    _wait_for_lines(partial, 5, proc)
    rc, seconds, stderr = _stop(proc, signal.SIGINT, group=True)
    assert rc == 130
    assert seconds < stop_bound_s(), f"took {seconds:.2f} s to stop"
    written = _lines(partial)
    assert f"{written} of 400 instances" in stderr and "--resume" in stderr
    assert not (tmp_path / "r.jsonl").exists()
    with pytest.raises(ProcessLookupError):  # no worker process outlives the run
        time.sleep(0.5)
        os.killpg(proc.pid, 0)


def test_sigterm_stops_generate_with_exit_143_and_the_same_message(tmp_path):
    proc = _pbsolve("generate", "--n", 400, "--size", "tiny", "--seed", 5, "--out", "r.jsonl", cwd=tmp_path)
    partial = tmp_path / "r.jsonl.partial"
    _wait_for_lines(partial, 5, proc)
    rc, seconds, stderr = _stop(proc, signal.SIGTERM)
    assert rc == 143 and seconds < stop_bound_s()
    assert "interrupted by SIGTERM" in stderr and f"{_lines(partial)} of 400 instances" in stderr


def test_resume_after_sigint_gives_bytes_identical_to_an_uninterrupted_run(tmp_path):
    proc = _pbsolve("generate", "--n", 150, "--size", "tiny", "--seed", 7, "--out", "r.jsonl", cwd=tmp_path)
    _wait_for_lines(tmp_path / "r.jsonl.partial", 10, proc)
    rc, _, _ = _stop(proc, signal.SIGINT)
    assert rc == 130
    resumed = _pbsolve("generate", "--n", 150, "--size", "tiny", "--seed", 7, "--out", "r.jsonl", "--resume",
                       "--workers", 2, "--summary-json", cwd=tmp_path)  # fmt: skip
    stdout, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr
    assert json.loads(stdout)["emitted"] == 150
    assert (tmp_path / "r.jsonl").read_bytes() == _clean_bytes(150, 7)
    assert not (tmp_path / "r.jsonl.partial").exists() and not (tmp_path / "r.jsonl.partial.run").exists()


def test_resume_with_other_options_is_refused_and_keeps_the_partial_file(tmp_path):
    proc = _pbsolve("generate", "--n", 150, "--size", "tiny", "--seed", 7, "--out", "r.jsonl", cwd=tmp_path)
    partial = tmp_path / "r.jsonl.partial"
    _wait_for_lines(partial, 3, proc)
    _stop(proc, signal.SIGINT)
    before = partial.read_bytes()
    other = _pbsolve("generate", "--n", 150, "--size", "tiny", "--seed", 8, "--out", "r.jsonl", "--resume", cwd=tmp_path)
    _, stderr = other.communicate(timeout=120)
    assert other.returncode == 1
    assert "other settings (seed)" in " ".join(stderr.split())
    assert partial.read_bytes() == before


def test_resume_keeps_only_the_prefix_the_sidecar_and_the_partial_file_agree_on(tmp_path):
    out = tmp_path / "r.jsonl"
    partial = out.with_name("r.jsonl.partial")
    header = run_header(6, 1, TINY, 0)
    outcomes = [o for o in generate(6, 1, TINY)]
    from pbsolve.generate import outcome_record

    lines = [dumps(o.instance) + "\n" for o in outcomes if o.instance]
    # the last instance line was written, its sidecar line was not; then a torn line
    partial.write_text("".join(lines) + lines[0][:40], encoding="utf-8")
    records = [json.dumps(header)] + [json.dumps(outcome_record(o)) for o in outcomes[:-1]]
    sidecar_path(partial).write_text("\n".join(records) + "\n", encoding="utf-8")
    kept = load_checkpoint(partial, header)
    assert [o.index for o in kept] == [o.index for o in outcomes[:-1]]
    assert partial.read_text(encoding="utf-8") == "".join(lines[:-1])


# -- answer: in-flight LLM requests do not keep the process alive ---------------------------
def test_sigint_during_answer_stops_at_once_and_says_how_to_resume(tmp_path):
    sys.path.insert(0, str(ROOT))
    from tests.openai_stub import OpenAIStub, Reply

    inst = tmp_path / "i.jsonl"
    inst.write_text(_clean_bytes(3, 1).decode(), encoding="utf-8")
    with OpenAIStub(lambda req: Reply(text="{}", delay=30.0)) as stub:
        proc = _pbsolve("answer", "--instances", inst, "--responder", "openai", "--model", "stub-model", "--base-url", stub.url,
                        "--out", "resp.jsonl", cwd=tmp_path)  # fmt: skip
        deadline = time.monotonic() + 60
        while stub.calls < 1:  # a chat request is in flight (the preflight is a GET)
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        time.sleep(0.3)
        rc, seconds, stderr = _stop(proc, signal.SIGINT)
    assert rc == 130 and seconds < stop_bound_s(), (seconds, stderr)
    assert "0 of 3 responses saved" in stderr and "--resume" in stderr


# -- loop: a real signal, then the same command resumes ---------------------------------------
def test_sigint_stops_the_loop_at_once_and_the_same_command_resumes(tmp_path):
    args = ("loop", "--responder", "oracle", "--budget", 400, "--size", "tiny", "--out", "run")
    proc = _pbsolve(*args, cwd=tmp_path)
    traj = tmp_path / "run" / "trajectory.jsonl"
    _wait_for_lines(traj, 4, proc)
    rc, seconds, stderr = _stop(proc, signal.SIGINT)
    assert rc == 130 and seconds < stop_bound_s(), (seconds, stderr)
    assert "rerun the same command to resume" in stderr
    steps = [json.loads(ln) for ln in traj.read_text(encoding="utf-8").splitlines()]
    assert [r["step"] for r in steps] == list(range(len(steps)))
    assert not any("interrupt" in json.dumps(r).lower() for r in steps)
    answered = sum(r["status"] != "rejected" for r in steps)
    again = _pbsolve(*[a if a != 400 else answered + 3 for a in args], "--summary-json", cwd=tmp_path)
    stdout, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert json.loads(stdout.strip().splitlines()[-1])["answered"] == answered + 3
