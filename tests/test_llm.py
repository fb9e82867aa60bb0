"""The OpenAI-compatible client wrapper and the ``openai`` responder, driven through the real
``openai`` client against the local scripted server (tests/openai_stub.py)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from pbsolve.grading import grade
from pbsolve.llm.client import EndpointConfigError, EndpointDown, LLMClient, LLMConfig, RequestFailed
from pbsolve.llm.responders import RESPONDER_FACTORIES, OpenAIResponder, answer_many, get_responder
from tests.openai_stub import OpenAIStub, Reply, openai_stub  # noqa: F401  (fixture)


def config(stub: OpenAIStub, **kw) -> LLMConfig:
    base = {"model": "stub-model", "base_url": stub.url, "timeout": 5.0, "max_retries": 3, "backoff": 0.01, "backoff_max": 0.05}
    return LLMConfig(**{**base, **kw})


def test_a_completion_carries_text_usage_and_the_raw_response(openai_stub, monkeypatch):
    monkeypatch.setenv("PBSOLVE_TEST_KEY", "sk-local")
    openai_stub.api_key = "sk-local"
    openai_stub.responder = lambda req: f"echo: {req.prompt}"
    client = LLMClient(config(openai_stub, api_key_env="PBSOLVE_TEST_KEY", system_prompt="Be brief.", temperature=0.3, max_tokens=77))
    c = client.ask("plan three meetings")
    assert c.text == "echo: plan three meetings"
    assert c.usage.prompt_tokens == 5 and c.usage.completion_tokens == 4 and c.usage.total_tokens == 9
    assert c.raw["choices"][0]["message"]["content"] == c.text and c.raw["usage"]["total_tokens"] == 9
    assert c.attempts == 1 and c.finish_reason == "stop" and c.model == "stub-model"
    req = openai_stub.requests[-1]
    assert req.system == "Be brief."
    assert req.body["temperature"] == 0.3 and req.body["max_tokens"] == 77 and req.model == "stub-model"
    assert req.headers["authorization"] == "Bearer sk-local"
    assert client.stats.completions == 1 and client.stats.usage.total_tokens == 9


def test_without_the_key_variable_a_placeholder_key_is_sent(openai_stub, monkeypatch):
    monkeypatch.delenv("PBSOLVE_UNSET_KEY", raising=False)
    LLMClient(config(openai_stub, api_key_env="PBSOLVE_UNSET_KEY")).ask("hi")
    assert openai_stub.requests[-1].headers["authorization"] == "Bearer EMPTY"


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_429_and_5xx_are_retried_until_the_endpoint_answers(openai_stub, status):
    openai_stub.fail_first, openai_stub.fail_status = 2, status
    client = LLMClient(config(openai_stub))
    c = client.ask("x")
    assert c.text == "ok" and c.attempts == 3
    assert openai_stub.statuses == [status, status, 200]
    assert client.stats.retries == 2


def test_backoff_doubles_and_is_capped(openai_stub):
    openai_stub.fail_first = 5
    waits: list[float] = []
    client = LLMClient(config(openai_stub, max_retries=5, backoff=1.0, backoff_max=4.0), sleep=waits.append)
    assert client.ask("x").attempts == 6
    bases = [1.0, 2.0, 4.0, 4.0, 4.0]
    assert len(waits) == 5
    for wait, base in zip(waits, bases):
        assert base * 0.5 <= wait <= base  # jittered in [base/2, base]


def test_retry_after_header_is_honoured(openai_stub):
    openai_stub.script(Reply(status=429, headers={"retry-after": "0.3"}))
    waits: list[float] = []
    client = LLMClient(config(openai_stub, backoff_max=10.0), sleep=waits.append)
    assert client.ask("x").attempts == 2
    assert waits == [0.3]


def test_a_slow_answer_times_out_and_is_retried(openai_stub):
    openai_stub.script(Reply(text="late", delay=6.0))
    client = LLMClient(config(openai_stub, timeout=1.0))
    t0 = time.perf_counter()
    c = client.ask("x")
    assert c.text == "ok" and c.attempts == 2
    assert time.perf_counter() - t0 < 5.0  # did not wait for the slow reply


def test_garbage_on_the_wire_and_dropped_connections_are_retried(openai_stub):
    openai_stub.script(Reply(body=b"<html>502 bad gateway</html>"), Reply(body=b'{"object": "nothing"}'), Reply(drop=True))
    c = LLMClient(config(openai_stub)).ask("x")
    assert c.text == "ok" and c.attempts == 4


def test_an_endpoint_that_stays_down_raises_after_the_retries(openai_stub):
    openai_stub.down()
    client = LLMClient(config(openai_stub, max_retries=2))
    with pytest.raises(EndpointDown, match=r"still failing after 3 attempt\(s\): HTTP 503") as info:
        client.ask("x")
    assert info.value.attempts == 3 and openai_stub.calls == 3


def test_an_unreachable_endpoint_is_reported_as_such():
    client = LLMClient(LLMConfig(model="m", base_url="http://127.0.0.1:9/v1", max_retries=1, backoff=0.0, timeout=2))
    with pytest.raises(EndpointDown, match="cannot connect"):
        client.ask("x")
    with pytest.raises(EndpointDown):
        client.preflight()


@pytest.mark.parametrize("status,hint", [(401, "PBSOLVE_KEY"), (404, "serving model")])
def test_wrong_key_or_model_fails_at_once_with_a_hint(openai_stub, status, hint):
    openai_stub.fail_first, openai_stub.fail_status = 10, status
    with pytest.raises(EndpointConfigError, match=hint) as info:
        LLMClient(config(openai_stub, api_key_env="PBSOLVE_KEY")).ask("x")
    assert info.value.attempts == 1 and openai_stub.calls == 1


def test_a_request_the_endpoint_rejects_fails_that_request_only(openai_stub, any_instance):
    openai_stub.script(Reply(status=400, error_message="prompt is too long"))
    responder = OpenAIResponder(config(openai_stub))
    first = responder.answer(any_instance)
    assert first.text == "" and "HTTP 400: prompt is too long" in (first.error or "")
    assert grade(any_instance, first.text).all_pass == 0
    assert responder.answer(any_instance).text == "ok"
    openai_stub.script(Reply(status=422))
    with pytest.raises(RequestFailed, match="HTTP 422"):
        LLMClient(config(openai_stub)).ask("x")


def test_preflight_checks_the_model_list(openai_stub):
    assert LLMClient(config(openai_stub)).preflight() is None
    warning = LLMClient(config(openai_stub, model="other")).preflight()
    assert warning is not None and "stub-model" in warning


def test_map_bounds_concurrency_and_keeps_input_order(openai_stub):
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def slow(req):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return req.prompt.upper()

    openai_stub.responder = slow
    client = LLMClient(config(openai_stub, concurrency=3))
    prompts = [f"p{i}" for i in range(10)]
    results = list(client.map(lambda p: client.ask(p).text, prompts))
    assert [i for i, _ in results] == list(range(10))
    assert [t for _, t in results] == [p.upper() for p in prompts]
    assert 2 <= state["peak"] <= 3


def test_map_saves_completed_work_then_raises_when_the_endpoint_goes_down(openai_stub):
    def answer(req):
        if req.prompt == "p3":
            openai_stub.down()
            return Reply(status=503)
        return req.prompt

    openai_stub.responder = answer
    client = LLMClient(config(openai_stub, concurrency=1, max_retries=2))
    got = []
    t0 = time.perf_counter()
    with pytest.raises(EndpointDown):
        for i, text in client.map(lambda p: client.ask(p).text, [f"p{i}" for i in range(8)]):
            got.append((i, text))
    assert got == [(0, "p0"), (1, "p1"), (2, "p2")]
    assert time.perf_counter() - t0 < 3
    openai_stub.up()
    assert client.ask("again").text == "again"  # the client is usable after a failed map


def test_openai_is_a_registered_responder_built_from_options(openai_stub, feasible_instances):
    assert "openai" in RESPONDER_FACTORIES
    instances = list(feasible_instances.values())
    by_prompt = {i.prompt: i for i in instances}

    def correct_plan(req):
        return "Plan:\n```json\n" + json.dumps(by_prompt[req.prompt].reference) + "\n```"

    openai_stub.responder = correct_plan
    responder = get_responder("openai", model="stub-model", base_url=openai_stub.url, backoff=0.01, concurrency=2)
    answers = dict(answer_many(responder, instances))
    assert len(answers) == len(instances)
    for i, inst in enumerate(instances):
        a = answers[i]
        assert grade(inst, a.text).all_pass == 1
        assert a.tokens > 0 and a.calls == 1 and a.raw["object"] == "chat.completion"
    assert responder(instances[0]).startswith("Plan:")  # plain Instance -> str still works
