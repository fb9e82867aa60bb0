"""`pbsolve answer --responder openai` end to end: the local stub answers with correct plans,
wrong plans and garbage, fails with 429s and 500s, goes down and comes back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import pbsolve.cli.main as cli
from pbsolve.api import load_instances
from pbsolve.grading import grade
from pbsolve.llm.responders import baseline, oracle
from pbsolve.schema import Instance
from tests.openai_stub import OpenAIStub, Reply

runner = CliRunner()


def run(*args: object):
    return runner.invoke(cli.app, [str(a) for a in args])


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def instances_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("llm") / "instances.jsonl"
    result = run("generate", "--n", 6, "--seed", 2, "--size", "small", "--family", "scheduling", "--out", path)
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def instances(instances_file: Path) -> list[Instance]:
    found, _ = load_instances(instances_file)
    return list(found.values())


def kind_of(index: int) -> str:
    return ("correct", "wrong", "garbage")[index % 3]


def scripted(instances: list[Instance]):
    """Correct plans, wrong plans (the greedy baseline's) and garbage, by instance."""
    by_prompt = {inst.prompt: (i, inst) for i, inst in enumerate(instances)}

    def answer(req) -> str:
        i, inst = by_prompt[req.prompt]
        kind = kind_of(i)
        if kind == "correct":
            return oracle(inst)
        if kind == "wrong":
            return baseline(inst) if not grade(inst, baseline(inst)).all_pass else "{}"  # the greedy plan can be optimal
        return "I think the answer is {{ maybe"

    return answer


def common(stub: OpenAIStub, *extra: object) -> list[object]:
    return ["--responder", "openai", "--model", "stub-model", "--base-url", stub.url, "--backoff", 0.01, *extra]


def test_answer_with_an_openai_endpoint_then_grade(instances_file, instances, tmp_path):
    out = tmp_path / "resp.jsonl"
    with OpenAIStub(scripted(instances)) as stub:
        stub.script(Reply(status=429, headers={"retry-after": "0"}), Reply(status=500), Reply(text="", delay=5.0))
        result = run("answer", "--instances", instances_file, *common(stub, "--timeout", 1.0, "--concurrency", 2, "--system-prompt", "Plan well."), "--out", out)
        assert result.exit_code == 0, result.output
        assert stub.requests[0].system == "Plan well."
    assert f"{len(instances)} responses by openai" in flat(result.output) and "3 retried" in flat(result.output)
    lines = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert [ln["id"] for ln in lines] == [i.id for i in instances]
    for ln in lines:
        assert ln["usage"]["total_tokens"] > 0 and ln["raw"]["object"] == "chat.completion" and ln["model"] == "stub-model"
        assert ln["response_id"] == f"openai-{ln['id']}"
    assert sum(ln["calls"] for ln in lines) == len(instances) + 3

    grades = tmp_path / "grades.jsonl"
    result = run("grade", "--instances", instances_file, "--responses", out, "--out", grades, "--summary-json")
    assert result.exit_code == 0, result.output
    by_id = {json.loads(ln)["id"]: json.loads(ln) for ln in grades.read_text().splitlines()}
    for i, inst in enumerate(instances):
        g = by_id[inst.id]
        assert g["all_pass"] == (1 if kind_of(i) == "correct" else 0), (kind_of(i), g)
        if kind_of(i) == "garbage":
            assert g["parse_error"]


def test_an_endpoint_that_stays_down_keeps_a_partial_result_and_resumes(instances_file, instances, tmp_path):
    out = tmp_path / "resp.jsonl"
    partial = tmp_path / "resp.jsonl.partial"
    answered = {"n": 0}

    def answer(req):
        answered["n"] += 1
        if answered["n"] == 3:
            stub.down()
            return Reply(status=503)
        return scripted(instances)(req)

    with OpenAIStub(answer) as stub:
        result = run("answer", "--instances", instances_file, *common(stub, "--max-retries", 2, "--concurrency", 1), "--out", out)
        assert result.exit_code == 1
        text = flat(result.output)
        assert "error:" in text and "still failing after 3 attempt(s): HTTP 503" in text
        assert f"2 of {len(instances)} responses saved in" in text and "--resume" in text and "Traceback" not in text
        assert not out.exists() and len(partial.read_text().splitlines()) == 2

        stub.up()
        result = run("answer", "--instances", instances_file, *common(stub), "--out", out, "--resume")
        assert result.exit_code == 0, result.output
        assert "2 kept from the interrupted run" in flat(result.output)
    ids = [json.loads(ln)["id"] for ln in out.read_text().splitlines()]
    assert sorted(ids) == sorted(i.id for i in instances) and len(ids) == len(set(ids))
    assert not partial.exists()


def test_unreachable_endpoint_and_missing_model_are_clean_errors(instances_file, tmp_path):
    result = run("answer", "--instances", instances_file, "--responder", "openai", "--out", tmp_path / "r.jsonl")
    assert result.exit_code == 1 and "--responder openai needs --model" in flat(result.output)
    result = run("answer", "--instances", instances_file, "--responder", "openai", "--model", "m", "--base-url",
                 "http://127.0.0.1:9/v1", "--max-retries", 0, "--out", tmp_path / "r.jsonl")  # fmt: skip
    assert result.exit_code == 1 and "cannot connect" in flat(result.output) and "Traceback" not in flat(result.output)
    with OpenAIStub(api_key="right") as stub:
        result = run("answer", "--instances", instances_file, *common(stub), "--out", tmp_path / "r.jsonl")
    assert result.exit_code == 1 and "HTTP 401" in flat(result.output) and "OPENAI_API_KEY" in flat(result.output)


def test_the_nothing_responder_fails_every_instance(instances_file, tmp_path):
    out = tmp_path / "nothing.jsonl"
    assert run("answer", "--instances", instances_file, "--responder", "nothing", "--out", out).exit_code == 0
    result = run("grade", "--instances", instances_file, "--responses", out, "--out", tmp_path / "g.jsonl", "--summary-json")
    assert json.loads(result.output.strip().splitlines()[-1])["all_pass"] == 0.0
    assert all(set(json.loads(ln)) == {"id", "response", "response_id"} for ln in out.read_text().splitlines())
