"""A grading failure is never a reward (issue 11 items 1, 2, 7, 10; issue 19 hole 6).

Checker errors, unimportable checkers, unknown families and ground truths that are not
valid instances raise ``GradingError`` / ``InvalidGroundTruth`` in process, answer 5xx (or
422 for an inline instance) from the server, and make ``pbsolve grade`` exit non-zero; a
documented ``on_error="zero"`` turns them into a loud, counted zero. Tests that break an
instance or a checker work on fresh copies (``fresh``), so the shared session instances
never carry a cached verdict of a broken grader.
"""

from __future__ import annotations

import inspect
import json
import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import pbsolve.cli.main as cli
import pbsolve.grading as grading
from pbsolve.cli.serve import serve_cmd
from pbsolve.family import checker
from pbsolve.grading import GradingError, InvalidGroundTruth, grade, validate_instance
from pbsolve.jsonl import dumps
from pbsolve.parsing import MAX_CHARS
from pbsolve.llm.responders import oracle
from pbsolve.serve.rewards import ON_ERROR_ENV, compute_score, make_openrlhf_reward, openrlhf_rewards, trl_reward
from pbsolve.schema import Instance
from pbsolve.serve.server import ServerSettings, create_app


def fresh(inst: Instance, **changes: object) -> Instance:
    """A new instance object (empty memo) with some top-level fields replaced."""
    data = inst.model_dump(mode="json")
    data.update(changes)
    return Instance.model_validate(data)


@pytest.fixture
def broken_checker(monkeypatch: pytest.MonkeyPatch, any_instance: Instance) -> None:
    """The scheduling checker raises on every answer, as a checker bug would."""

    def boom(instance: Instance, answer: object) -> dict:
        raise KeyError("bug in the checker")

    monkeypatch.setattr(checker(any_instance.family), "check_answer", boom)


# -- item 1: checker failures raise --------------------------------------------------------------
def test_a_checker_that_raises_makes_grade_raise_not_return_zero(any_instance, broken_checker):
    with pytest.raises(GradingError, match="bug in the checker"):
        grade(fresh(any_instance), oracle(any_instance))


def test_a_checker_that_raises_after_validation_still_raises(any_instance, monkeypatch):
    inst = fresh(any_instance)
    validate_instance(inst)  # validated with the real checker, then the checker breaks
    monkeypatch.setattr(checker(inst.family), "check_answer", lambda i, a: 1 / 0)
    with pytest.raises(GradingError, match="ZeroDivisionError") as info:
        grade(inst, oracle(inst))
    assert not isinstance(info.value, InvalidGroundTruth)


def test_an_unimportable_checker_module_is_a_grading_error(any_instance, monkeypatch):
    def missing(fid: str) -> object:
        raise ModuleNotFoundError("No module named 'pbsolve.checkers'", name="pbsolve.checkers")

    monkeypatch.setattr(grading, "checker", missing)
    with pytest.raises(GradingError, match="cannot be imported") as info:
        grade(fresh(any_instance), oracle(any_instance))
    assert not isinstance(info.value, InvalidGroundTruth)


def test_on_error_zero_gives_a_marked_zero_grade(any_instance, broken_checker):
    g = grade(fresh(any_instance), oracle(any_instance), on_error="zero")
    assert g.reward == 0.0 and g.all_pass == 0 and g.grader_error is not None and "bug in the checker" in g.grader_error
    assert g.items and all(not it.passed and it.reason.startswith("grader error") for it in g.items)


def test_a_malformed_response_is_an_ordinary_failed_grade_not_a_grader_error(any_instance):
    g = grade(any_instance, "no JSON here")
    assert g.reward == 0.0 and g.parse_error is not None and g.grader_error is None


def test_a_normal_grade_has_no_grader_error(any_instance):
    assert grade(any_instance, oracle(any_instance)).grader_error is None


def test_compute_score_raises_on_a_checker_failure(any_instance, broken_checker):
    with pytest.raises(GradingError):
        compute_score("pbsolve", oracle(any_instance), fresh(any_instance).model_dump_json())


def test_compute_score_on_error_zero_is_a_logged_counted_zero(any_instance, broken_checker, caplog):
    with caplog.at_level(logging.WARNING, logger="pbsolve.rewards"):
        out = compute_score("pbsolve", oracle(any_instance), fresh(any_instance).model_dump_json(), on_error="zero")
    assert out["score"] == 0.0 and out["grader_error"] == 1.0
    assert any("grader failure" in r.getMessage() for r in caplog.records)


def test_every_real_grade_reports_grader_error_zero(any_instance):
    assert compute_score("pbsolve", oracle(any_instance), any_instance)["grader_error"] == 0.0


def test_trl_reward_raises_on_a_checker_failure(any_instance, broken_checker):
    reward = trl_reward()
    with pytest.raises(GradingError):
        reward(prompts=["p"], completions=[oracle(any_instance)], instance=[fresh(any_instance).model_dump_json()])


def test_trl_reward_on_error_zero_logs_the_grader_error_metric(any_instance, broken_checker):
    logged: dict[str, float] = {}
    reward = trl_reward(on_error="zero")
    out = reward(
        prompts=["p"], completions=[oracle(any_instance)], instance=[fresh(any_instance).model_dump_json()],
        log_metric=lambda k, v: logged.__setitem__(k, v),
    )  # fmt: skip
    assert out == [0.0] and logged["pbsolve/grader_error"] == 1.0


def test_openrlhf_file_mode_raises_unless_the_env_asks_for_zeros(any_instance, broken_checker, monkeypatch):
    reward_func = make_openrlhf_reward()
    query, label = any_instance.prompt + oracle(any_instance), fresh(any_instance).model_dump_json()
    monkeypatch.delenv(ON_ERROR_ENV, raising=False)
    with pytest.raises(GradingError):
        reward_func([query], [any_instance.prompt], [label])
    monkeypatch.setenv(ON_ERROR_ENV, "zero")
    out = openrlhf_rewards([query], [any_instance.prompt], [label], "all_pass", on_error="zero")
    assert out["rewards"] == [0.0] and out["extra_logs"]["grader_error"] == [1.0]
    assert list(reward_func([query], [any_instance.prompt], [label])["extra_logs"]["grader_error"]) == [1.0]


def test_an_unknown_on_error_value_is_refused(any_instance):
    with pytest.raises(ValueError, match="on_error"):
        compute_score("pbsolve", "", any_instance, on_error="ignore")


def test_the_server_answers_500_not_a_reward_when_the_checker_fails(any_instance, broken_checker):
    client = TestClient(create_app(None))
    r = client.post("/grade", json={"instance": fresh(any_instance).model_dump_json(), "response": oracle(any_instance)})
    assert r.status_code == 500 and r.json()["error"].startswith("grader error") and "reward" not in r.json()
    batch = {"requests": [{"instance": fresh(any_instance).model_dump_json(), "response": "{}"}]}
    assert client.post("/grade/batch", json=batch).status_code == 500


def test_the_server_refuses_an_inline_instance_that_is_no_valid_ground_truth(any_instance):
    client = TestClient(create_app(None))
    bad = fresh(any_instance, checklist=[]).model_dump_json()
    r = client.post("/grade", json={"instance": bad, "response": ""})
    assert r.status_code == 422 and "checklist is empty" in r.json()["error"]
    r = client.post("/openrlhf", json={"query": ["x"], "prompts": ["x"], "labels": [bad]})
    assert r.status_code == 422 and "rewards" not in r.json()


def test_the_server_answers_500_for_a_stored_instance_that_is_no_valid_ground_truth(any_instance, tmp_path):
    from pbsolve.serve.store import InstanceStore, ensure_store

    bad = fresh(any_instance, id="broken-1", checklist=[])
    src = tmp_path / "i.jsonl"
    src.write_text(dumps(bad) + "\n", encoding="utf-8")
    path, _ = ensure_store([src])
    with InstanceStore(path) as st:
        r = TestClient(create_app(st)).post("/grade", json={"id": "broken-1", "response": ""})
    assert r.status_code == 500 and "checklist is empty" in r.json()["error"]


# -- item 2: ground truths that are not valid instances ----------------------------------------
def test_an_empty_checklist_raises_instead_of_rewarding_every_answer(any_instance):
    with pytest.raises(InvalidGroundTruth, match="checklist is empty"):
        grade(fresh(any_instance, checklist=[]), "")


def test_an_empty_checklist_in_avg_pass_mode_raises_invalid_ground_truth_not_zero_division(any_instance):
    with pytest.raises(InvalidGroundTruth):
        grade(fresh(any_instance, checklist=[]), oracle(any_instance), "avg_pass")


def test_an_unknown_family_raises_invalid_ground_truth(any_instance):
    with pytest.raises(InvalidGroundTruth, match="unknown family 'gardening'"):
        grade(fresh(any_instance, family="gardening"), oracle(any_instance))


def test_an_unknown_rule_kind_raises_invalid_ground_truth(any_instance):
    rules = [r.model_dump() for r in any_instance.rules]
    rules[0]["kind"] = "levitation"
    with pytest.raises(InvalidGroundTruth, match="rule kinds .* levitation"):
        grade(fresh(any_instance, rules=rules), oracle(any_instance))


def test_an_unknown_objective_kind_raises_invalid_ground_truth(any_instance):
    if not any_instance.objective:
        pytest.skip("instance has no objective")
    terms = [t.model_dump() for t in any_instance.objective]
    terms[0]["kind"] = "happiness"
    with pytest.raises(InvalidGroundTruth, match="objective kinds .* happiness"):
        grade(fresh(any_instance, objective=terms), oracle(any_instance))


def test_a_checklist_item_naming_a_missing_rule_raises_invalid_ground_truth(any_instance):
    items = [it.model_dump() for it in any_instance.checklist]
    items[-1]["rule"] = "R999"
    with pytest.raises(InvalidGroundTruth, match="'R999'"):
        grade(fresh(any_instance, checklist=items), oracle(any_instance))


def test_data_that_does_not_match_the_task_raises_invalid_ground_truth(any_instance):
    with pytest.raises(InvalidGroundTruth, match="data does not match"):
        grade(fresh(any_instance, data={"depots": []}), oracle(any_instance))


def test_a_certificate_the_reference_answer_does_not_meet_raises_invalid_ground_truth(any_instance):
    cert = any_instance.certificate.model_dump()
    if not cert["objective"]:
        pytest.skip("instance has no objective figures")
    key = next(iter(cert["objective"]))
    cert["objective"][key] += 1
    with pytest.raises(InvalidGroundTruth, match="reference answer fails"):
        grade(fresh(any_instance, certificate=cert), oracle(any_instance))


def test_an_invalid_ground_truth_through_compute_score_raises(any_instance):
    with pytest.raises(InvalidGroundTruth):
        compute_score("pbsolve", "", fresh(any_instance, checklist=[]).model_dump_json())


def test_validation_runs_once_per_instance(any_instance, monkeypatch):
    module = checker(any_instance.family)
    calls = []
    real = module.known_kinds
    monkeypatch.setattr(module, "known_kinds", lambda task: calls.append(task) or real(task))
    inst = fresh(any_instance)
    for text in (oracle(inst), "{}", "x"):
        grade(inst, text)
    assert len(calls) == 1


def test_a_copy_with_other_contents_is_validated_again(any_instance):
    inst = fresh(any_instance)
    validate_instance(inst)
    with pytest.raises(InvalidGroundTruth):
        grade(inst.model_copy(update={"checklist": []}), "")


def test_every_certified_instance_is_a_valid_ground_truth(feasible_instance, infeasible_instance):
    for inst in (feasible_instance, infeasible_instance):
        validate_instance(inst)


# -- issue 19 hole 6: feasible mode on infeasible instances -------------------------------------
def test_feasible_mode_on_an_infeasible_instance_needs_the_right_conflict_set(any_infeasible_instance):
    inst = any_infeasible_instance
    conflict = inst.certificate.conflict_sets[0]
    assert len(conflict) >= 2
    wrong = {"feasible": False, "conflict": conflict[:-1]}  # a subset of a minimal set: not a conflict
    g = grade(inst, json.dumps(wrong), "feasible")
    rules = {it.id: it.rule for it in inst.checklist}
    assert any(it.passed for it in g.items), "the declaration itself passes its items"
    assert not all(it.passed for it in g.items if rules[it.id] == "conflict")
    assert g.reward == 0.0
    assert grade(inst, json.dumps(inst.reference), "feasible").reward == 1.0


# -- item 7 (part): one response length limit ----------------------------------------------------
def test_the_server_and_the_cli_serve_default_to_the_parsing_limit():
    assert ServerSettings().max_response_chars == MAX_CHARS
    assert inspect.signature(serve_cmd).parameters["max_response_chars"].default == MAX_CHARS


def test_compute_score_and_the_server_draw_the_line_at_the_same_length(any_instance):
    right = oracle(any_instance)
    fits = right + " " * (MAX_CHARS - len(right))
    too_long = fits + " "
    client = TestClient(create_app(None))
    inline = any_instance.model_dump_json()
    for text, want in ((fits, 1.0), (too_long, 0.0)):
        assert compute_score("pbsolve", text, inline)["score"] == want
        r = client.post("/grade", json={"instance": inline, "response": text})
        assert r.status_code == 200 and r.json()["reward"] == want


# -- item 10: `pbsolve grade` hides nothing -------------------------------------------------------
runner = CliRunner()


def run(*args: object):  # noqa: ANN201
    return runner.invoke(cli.app, [str(a) for a in args])


@pytest.fixture
def graded_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, feasible_instances) -> Path:
    insts = list(feasible_instances.values())
    (tmp_path / "instances.jsonl").write_text("".join(dumps(i) + "\n" for i in insts), encoding="utf-8")
    rows = [{"id": i.id, "response": oracle(i)} for i in insts]
    (tmp_path / "all.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _rows(path: Path) -> list[str]:
    return [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def _summary(result) -> dict:  # noqa: ANN001
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_grade_counts_instances_without_a_response_as_failures(graded_dir):
    rows = _rows(graded_dir / "all.jsonl")
    if len(rows) < 2:
        pytest.skip("needs two instances")
    (graded_dir / "some.jsonl").write_text(rows[0] + "\n", encoding="utf-8")
    result = run("grade", "--instances", "instances.jsonl", "--responses", "some.jsonl", "--summary-json")
    s = _summary(result)
    assert result.exit_code == 0, result.output
    assert s["n"] == len(rows) and s["responses"] == 1 and s["missing"] == len(rows) - 1
    assert s["all_pass"] == pytest.approx(1 / len(rows)) and s["reward"] == pytest.approx(1 / len(rows))
    assert "have no response" in result.stderr


def test_grade_allow_missing_leaves_them_out_but_still_reports_them(graded_dir):
    rows = _rows(graded_dir / "all.jsonl")
    (graded_dir / "some.jsonl").write_text(rows[0] + "\n", encoding="utf-8")
    result = run("grade", "--instances", "instances.jsonl", "--responses", "some.jsonl", "--summary-json", "--allow-missing")
    s = _summary(result)
    assert s["n"] == 1 and s["all_pass"] == 1.0 and s["missing"] == len(rows) - 1 and s["missing_counted"] is False


def test_grade_table_shows_missing_mode_and_mean_reward(graded_dir):
    rows = _rows(graded_dir / "all.jsonl")
    if len(rows) < 2:
        pytest.skip("needs two instances")
    (graded_dir / "some.jsonl").write_text(rows[0] + "\n", encoding="utf-8")
    result = run("grade", "--instances", "instances.jsonl", "--responses", "some.jsonl", "--mode", "avg_pass")
    text = " ".join(result.stdout.split())
    assert "mode avg_pass" in text and "mean reward" in text and "missing" in text


def test_grade_counts_a_duplicate_line_once_and_reports_it(graded_dir):
    rows = _rows(graded_dir / "all.jsonl")
    (graded_dir / "dup.jsonl").write_text("\n".join([*rows, rows[0]]) + "\n", encoding="utf-8")
    result = run("grade", "--instances", "instances.jsonl", "--responses", "dup.jsonl", "--summary-json", "--out", "g.jsonl")
    s = _summary(result)
    assert s["responses"] == len(rows) and s["duplicates"] == 1 and result.exit_code == 1
    assert f"dup.jsonl:{len(rows) + 1}: duplicate of line 1" in " ".join(result.stderr.split())
    assert len(_rows(graded_dir / "g.jsonl")) == len(rows)


def test_grade_with_no_matching_response_is_an_error_not_zero_percent(graded_dir):
    (graded_dir / "none.jsonl").write_text(json.dumps({"id": "nobody", "response": "{}"}) + "\n", encoding="utf-8")
    result = run("grade", "--instances", "instances.jsonl", "--responses", "none.jsonl")
    assert result.exit_code == 1 and "no response in none.jsonl matched an instance" in " ".join(result.output.split())


def test_grade_reports_a_grader_failure_and_exits_2(graded_dir, broken_checker):
    result = run("grade", "--instances", "instances.jsonl", "--responses", "all.jsonl", "--summary-json", "--out", "g.jsonl")
    assert result.exit_code == 2
    assert "grader error" in result.stderr and "bug in the checker" in result.stderr
    assert _summary(result)["grader_errors"] == len(_rows(graded_dir / "all.jsonl"))
    assert all(json.loads(row)["grader_error"] for row in _rows(graded_dir / "g.jsonl"))


def test_cli_grade_demo_tables_still_take_plain_grade_lists(feasible_instances, capsys):
    insts = list(feasible_instances.values())
    found = {i.id: i for i in insts}
    cli.print_grade_table({"oracle": [grade(i, oracle(i)) for i in insts]}, found)
    assert "100.0% / 100.0% / 1.000" in " ".join(capsys.readouterr().out.split())




@pytest.mark.parametrize(
    "path",
    [
        "pbsolve.grading: validate_instance(inst); assert grade(inst, ref).all_pass",
        "pbsolve.rewards: assert compute_score('pbsolve', ref, text)['score'] == 1.0",
        "pbsolve.serve.rewards: assert compute_score('pbsolve', ref, text)['score'] == 1.0",
        "pbsolve.serve.server: from fastapi.testclient import TestClient; "
        "assert TestClient(create_app(None)).post('/grade', json={'instance': text, 'response': ref}).json()['reward'] == 1.0",
        "pbsolve.grade_report: assert summarize([grade(inst, ref)])['all_pass'] == 1.0",
    ],
    ids=lambda p: p.split(":")[0],
)
def test_grading_and_validation_load_no_solver(any_instance, tmp_path, path):
    """Each grading-only entry point grades a right answer without loading OR-Tools, PuLP or
    any family's solver model (a fresh interpreter, so nothing else loaded them first)."""
    import subprocess
    import sys

    module, _, statement = path.partition(": ")
    inst_path = tmp_path / "inst.json"
    inst_path.write_text(any_instance.model_dump_json(), encoding="utf-8")
    code = (
        f"import sys, json; from {module} import *; from pbsolve.grading import grade, validate_instance\n"
        "from pbsolve.schema import Instance\n"
        f"text = open({str(inst_path)!r}).read(); inst = Instance.model_validate_json(text)\n"
        "ref = '```json\\n' + json.dumps(inst.reference) + '\\n```'\n"
        f"{statement}\n"
        "print([m for m in sys.modules if m.startswith(('ortools', 'pbsolve.models', 'pulp'))])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stderr


def test_validating_an_instance_returns_its_familys_checker(any_instance):
    assert validate_instance(fresh(any_instance)) is checker(any_instance.family)
