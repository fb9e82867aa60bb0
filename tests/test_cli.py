"""The ``pbsolve`` command line, driven in-process through typer's CliRunner.

Every test runs in its own tmp_path (made the working directory, so file names in
messages are short and stay on one line of Rich's 80-column fallback width).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import pbsolve.cli.main as cli
import pbsolve.jsonl
from pbsolve.schema import Grade, Instance

TASK_IDS = ("meeting_planning", "course_timetabling", "exam_scheduling")
runner = CliRunner()


def run(*args: str) -> Result:
    return runner.invoke(cli.app, [str(a) for a in args])


def flat(text: str) -> str:
    """Output with Rich's line wrapping undone."""
    return " ".join(text.split())


def assert_clean_failure(result: Result, *needles: str) -> str:
    """Non-zero exit through typer.Exit (no exception escaped) with a one-line 'error:'."""
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    text = flat(result.output)
    assert "Traceback" not in text
    assert "error:" in text
    for needle in needles:
        assert needle in text, text
    return text


def lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


# -- a small generated file, shared by the module -------------------------------------------
@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, Path]:
    out = tmp_path_factory.mktemp("gen") / "instances.jsonl"
    return run("generate", "--n", 4, "--seed", 1, "--size", "small", "--out", out), out


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated) -> Path:
    """tmp_path as the working directory, holding a copy of the generated instances.jsonl."""
    shutil.copy(generated[1], tmp_path / "instances.jsonl")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def oracle_responses(workdir: Path) -> Path:
    result = run("answer", "--instances", "instances.jsonl", "--responder", "oracle", "--out", "oracle.jsonl")
    assert result.exit_code == 0, result.output
    return workdir / "oracle.jsonl"


# -- generate ---------------------------------------------------------------------------
def test_generate_writes_one_valid_instance_per_line(generated):
    result, out = generated
    assert result.exit_code == 0, result.output
    rows = lines(out)
    assert 1 <= len(rows) <= 4
    instances = [Instance.model_validate_json(row) for row in rows]
    assert len({i.id for i in instances}) == len(instances)
    assert all(i.spec.size == "small" for i in instances)


def test_generate_leaves_no_partial_file(generated):
    _, out = generated
    assert out.exists()
    assert not out.with_name(out.name + ".partial").exists()
    assert [p.name for p in out.parent.iterdir()] == [out.name]


# -- taxonomy / show --------------------------------------------------------------------
def test_taxonomy_lists_the_three_task_ids():
    result = run("taxonomy")
    assert result.exit_code == 0
    for task in TASK_IDS:
        assert task in result.stdout


def test_show_prints_the_prompt(workdir):
    first = Instance.model_validate_json(lines(workdir / "instances.jsonl")[0])
    result = run("show", "instances.jsonl", "--what", "prompt")
    assert result.exit_code == 0, result.output
    assert first.prompt in result.stdout


def test_show_by_id_prints_that_instance(workdir):
    last = Instance.model_validate_json(lines(workdir / "instances.jsonl")[-1])
    result = run("show", "instances.jsonl", "--id", last.id, "--what", "json")
    assert result.exit_code == 0
    assert Instance.model_validate_json(result.stdout.strip()) == last


def test_show_unknown_id_is_a_clean_error(workdir):
    assert_clean_failure(run("show", "instances.jsonl", "--id", "nope"), "no instance 'nope'")


def test_missing_instances_file_is_a_clean_error(workdir):
    assert_clean_failure(run("show", "absent.jsonl"), "absent.jsonl: no such file")


# -- answer + grade -------------------------------------------------------------------------
def test_oracle_answers_grade_to_full_marks(workdir):
    oracle_responses(workdir)
    result = run("grade", "--instances", "instances.jsonl", "--responses", "oracle.jsonl",
                 "--out", "grades.jsonl", "--summary-json")  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    n = len(lines(workdir / "instances.jsonl"))
    assert summary == {
        "n": n, "responses": n, "instances": n, "all_pass": 1.0, "avg_pass": 1.0, "reward": 1.0, "mode": "all_pass",
        "missing": 0, "missing_counted": True, "duplicates": 0, "skipped": 0, "grader_errors": 0,
    }  # fmt: skip
    grades = [Grade.model_validate_json(row) for row in lines(workdir / "grades.jsonl")]
    assert len(grades) == n and all(g.all_pass == 1 for g in grades)


def test_baseline_answers_do_not_all_pass(workdir):
    assert run("answer", "--instances", "instances.jsonl", "--responder", "baseline", "--out", "base.jsonl").exit_code == 0
    result = run("grade", "--instances", "instances.jsonl", "--responses", "base.jsonl", "--summary-json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["n"] == len(lines(workdir / "instances.jsonl"))
    assert summary["all_pass"] < 1.0


def _mixed_responses(workdir: Path) -> tuple[Path, int]:
    """Line 2 malformed JSON, line 3 an unknown instance id, line 5 not a response line."""
    good = lines(oracle_responses(workdir))
    bad = [good[0], '{"id": "x", "response": ', json.dumps({"id": "no-such-instance", "response": "{}"}),
           *good[1:2], json.dumps({"id": "x"}), *good[2:]]  # fmt: skip
    path = workdir / "responses.jsonl"
    path.write_text("\n".join(bad) + "\n", encoding="utf-8")
    return path, len(good)


def test_grade_reports_each_bad_response_line_by_file_and_line(workdir):
    _mixed_responses(workdir)
    result = run("grade", "--instances", "instances.jsonl", "--responses", "responses.jsonl", "--out", "grades.jsonl")
    text = flat(result.stderr)
    assert "responses.jsonl:2: not valid JSON" in text
    assert "responses.jsonl:3: unknown instance id 'no-such-instance'" in text
    assert "responses.jsonl:5: not a valid ResponseLine" in text
    for ok_line in (1, 4, 6):
        assert f"responses.jsonl:{ok_line}:" not in text


def test_grade_still_grades_the_valid_lines(workdir):
    _, n_good = _mixed_responses(workdir)
    run("grade", "--instances", "instances.jsonl", "--responses", "responses.jsonl", "--out", "grades.jsonl")
    grades = [Grade.model_validate_json(row) for row in lines(workdir / "grades.jsonl")]
    assert len(grades) == n_good and all(g.all_pass == 1 for g in grades)


def test_grade_with_bad_lines_exits_non_zero(workdir):
    _mixed_responses(workdir)
    result = run("grade", "--instances", "instances.jsonl", "--responses", "responses.jsonl", "--out", "grades.jsonl")
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_markup_like_text_in_a_bad_line_is_reported_not_interpreted(workdir):
    good = lines(oracle_responses(workdir))
    (workdir / "responses.jsonl").write_text(
        json.dumps({"id": "[/red] x", "response": "{}"}) + "\n" + "\n".join(good) + "\n", encoding="utf-8"
    )
    result = run("grade", "--instances", "instances.jsonl", "--responses", "responses.jsonl", "--out", "grades.jsonl")
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "responses.jsonl:1: unknown instance id '[/red] x'" in flat(result.stderr)
    assert len(lines(workdir / "grades.jsonl")) == len(good)


def test_a_deeply_nested_response_line_is_reported_by_file_and_line(workdir):
    good = lines(oracle_responses(workdir))
    deep = "[" * 100_000 + "]" * 100_000
    (workdir / "responses.jsonl").write_text("\n".join([*good, deep]) + "\n", encoding="utf-8")
    result = run("grade", "--instances", "instances.jsonl", "--responses", "responses.jsonl", "--out", "grades.jsonl")
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert f"responses.jsonl:{len(good) + 1}:" in flat(result.stderr)
    assert len(lines(workdir / "grades.jsonl")) == len(good)


def test_a_long_path_in_a_bad_line_message_stays_on_one_line(workdir, monkeypatch):
    monkeypatch.setattr(cli.err, "_width", 80)  # Rich's width when stderr is not a terminal
    folder = workdir / ("d" * 90)
    folder.mkdir()
    responses = folder / "responses.jsonl"
    responses.write_text("not json\n", encoding="utf-8")
    result = run("grade", "--instances", "instances.jsonl", "--responses", responses, "--out", "grades.jsonl")
    assert f"{responses}:1: not valid JSON" in result.stderr


# -- malformed instances files ------------------------------------------------------------
def _instances_with_a_bad_line(workdir: Path) -> int:
    good = lines(workdir / "instances.jsonl")
    rows = [good[0], "{this is not json", *good[1:], '{"id": "half-an-instance"}']
    (workdir / "broken.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return len(good)


def test_a_malformed_instance_line_is_reported_and_the_rest_still_load(workdir):
    n = _instances_with_a_bad_line(workdir)
    oracle_responses(workdir)
    result = run("grade", "--instances", "broken.jsonl", "--responses", "oracle.jsonl",
                 "--out", "grades.jsonl", "--summary-json")  # fmt: skip
    text = flat(result.stderr)
    assert "broken.jsonl:2: not valid JSON" in text
    assert f"broken.jsonl:{n + 2}: not a valid Instance" in text
    assert json.loads(result.stdout.strip().splitlines()[-1])["n"] == n
    assert len(lines(workdir / "grades.jsonl")) == n
    assert result.exit_code != 0


def test_show_skips_a_malformed_instance_line(workdir):
    _instances_with_a_bad_line(workdir)
    result = run("show", "broken.jsonl", "--what", "prompt")
    assert "broken.jsonl:2: not valid JSON" in flat(result.stderr)
    first = Instance.model_validate_json(lines(workdir / "instances.jsonl")[0])
    assert first.prompt in result.stdout


def test_answer_over_a_malformed_instances_file_answers_the_rest_and_exits_non_zero(workdir):
    n = _instances_with_a_bad_line(workdir)
    result = run("answer", "--instances", "broken.jsonl", "--responder", "oracle", "--out", "resp.jsonl")
    assert "broken.jsonl:2:" in flat(result.stderr)
    assert len(lines(workdir / "resp.jsonl")) == n
    assert result.exit_code != 0


# -- bad options ----------------------------------------------------------------------------
def test_unknown_responder_is_a_clean_error(workdir):
    result = run("answer", "--instances", "instances.jsonl", "--responder", "gpt-17", "--out", "r.jsonl")
    assert_clean_failure(result, "unknown responder 'gpt-17'", "oracle", "baseline")
    assert not (workdir / "r.jsonl").exists()


def test_unknown_reward_mode_is_a_clean_error(workdir):
    oracle_responses(workdir)
    result = run("grade", "--instances", "instances.jsonl", "--responses", "oracle.jsonl", "--mode", "best_of")
    assert_clean_failure(result, "unknown reward mode 'best_of'", "all_pass", "avg_pass", "feasible")


def test_unknown_task_is_a_clean_error(tmp_path):
    out = tmp_path / "x.jsonl"
    result = run("generate", "--n", 1, "--task", "dance_planning", "--out", out)
    assert_clean_failure(result, "dance_planning", "pbsolve taxonomy")
    assert not out.exists()


def test_unknown_size_is_a_clean_error(tmp_path):
    assert_clean_failure(run("generate", "--n", 1, "--size", "huge", "--out", tmp_path / "x.jsonl"), "unknown size 'huge'")


def test_unknown_tier_is_a_clean_error(tmp_path):
    assert_clean_failure(run("generate", "--n", 1, "--tiers", "epic", "--out", tmp_path / "x.jsonl"), "unknown tier")


# -- disk full ------------------------------------------------------------------------------
def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.fixture(params=["replace", "fsync"])
def disk_full(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """os.replace or os.fsync (as used by pbsolve.jsonl) fail with ENOSPC."""
    monkeypatch.setattr(pbsolve.jsonl.os, request.param, _no_space)
    return request.param


def test_generate_on_a_full_disk_fails_clearly_and_leaves_no_output(workdir, disk_full):
    result = run("generate", "--n", 1, "--seed", 1, "--size", "small", "--out", "fresh.jsonl")
    assert_clean_failure(result, "no space left on device", "fresh.jsonl")
    assert not (workdir / "fresh.jsonl").exists()


def test_grade_on_a_full_disk_fails_clearly_and_leaves_no_output(workdir, monkeypatch):
    oracle_responses(workdir)
    monkeypatch.setattr(pbsolve.jsonl.os, "replace", _no_space)
    result = run("grade", "--instances", "instances.jsonl", "--responses", "oracle.jsonl", "--out", "grades.jsonl")
    assert_clean_failure(result, "no space left on device", "grades.jsonl")
    assert not (workdir / "grades.jsonl").exists()


def test_answer_on_a_full_disk_fails_clearly_and_leaves_no_output(workdir, disk_full):
    result = run("answer", "--instances", "instances.jsonl", "--responder", "oracle", "--out", "resp.jsonl")
    assert_clean_failure(result, "no space left on device", "resp.jsonl")
    assert not (workdir / "resp.jsonl").exists()


# -- a new user's rough edges (issue 11) -------------------------------------------------------
def test_show_with_an_unknown_what_is_a_clean_error(workdir):
    assert_clean_failure(run("show", "instances.jsonl", "--what", "promt"), "unknown --what 'promt'", "prompt")


@pytest.mark.parametrize("command", [
    ["answer", "--instances", "empty.jsonl", "--responder", "oracle", "--out", "r.jsonl"],
    ["perturb", "--instances", "empty.jsonl", "--out", "p.jsonl"],
    ["export", "--instances", "empty.jsonl", "--out", "ds"],
])  # fmt: skip
def test_commands_over_an_empty_instance_file_fail_clearly(workdir, command):
    (workdir / "empty.jsonl").write_text("", encoding="utf-8")
    assert_clean_failure(run(*command), "empty.jsonl", "no valid instance")


def test_generate_into_a_directory_fails_before_any_work(workdir, monkeypatch):
    (workdir / "out").mkdir()
    monkeypatch.setattr(cli, "generate", lambda *a, **k: pytest.fail("generation started"))
    assert_clean_failure(run("generate", "--n", 2, "--size", "tiny", "--out", "out"), "cannot write out", "directory")


def test_answer_into_a_directory_fails_before_any_answer(workdir):
    (workdir / "out").mkdir()
    assert_clean_failure(run("answer", "--instances", "instances.jsonl", "--responder", "oracle", "--out", "out"),
                         "cannot write out", "directory")  # fmt: skip
    assert not (workdir / "out.partial").exists()


def test_more_workers_than_cores_is_warned_about(workdir, monkeypatch):
    monkeypatch.setattr(cli.os, "sched_getaffinity", lambda pid: {0, 1})
    result = run("generate", "--n", 1, "--size", "tiny", "--workers", 3, "--out", "w.jsonl")
    assert result.exit_code == 0, result.output
    assert "--workers 3 is more than the 2 core(s)" in flat(result.output)


def test_a_file_line_colon_number_in_a_message_is_never_an_emoji(workdir):
    (workdir / "responses.jsonl").write_text("\n" * 99 + "not json\n", encoding="utf-8")
    result = run("grade", "--instances", "instances.jsonl", "--responses", "responses.jsonl", "--out", "g.jsonl")
    assert "responses.jsonl:100:" in result.output and "\U0001f4af" not in result.output


def test_serve_on_a_busy_port_fails_without_printing_its_banner(workdir):
    import socket

    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        result = run("serve", "--instances", "instances.jsonl", "--port", port)
    assert_clean_failure(result, f"cannot serve on 127.0.0.1:{port}")
    assert "reward server on http://" not in result.output
