"""The rubric judge: its prompt, its verdict parser (which must survive anything a model
writes), and judging through the real `openai` client against the local stub server."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbsolve.audit.report import verdict_of
from pbsolve.audit.judge import (
    JUDGE_SYSTEM, MAX_RESPONSE_CHARS, build_judge_prompt, coerce_pass, judge_many, judge_one, parse_verdict, verdict_line,
)  # fmt: skip
from pbsolve.llm.client import EndpointDown, LLMClient, LLMConfig
from tests.openai_stub import OpenAIStub, Reply, openai_stub  # noqa: F401  (fixture)

IDS = ["C1", "C2", "C3", "C4", "C5"]


def test_the_prompt_carries_problem_checklist_answer_and_protocol(any_instance):
    prompt = build_judge_prompt(any_instance, "my answer {json}")
    assert any_instance.prompt in prompt
    for it in any_instance.checklist:
        assert f"**{it.id}** ({it.tier}): {it.text}" in prompt
        assert f'"{it.id}": <0 or 1>' in prompt
    assert "<<<ANSWER\nmy answer {json}\nANSWER>>>" in prompt
    for step in ("Requirements", "Check", "Self-check", "Verdict"):
        assert f"**{step}.**" in prompt
    assert "do not trust figures" in prompt and '"score"' in prompt


def test_a_huge_answer_is_cut_and_the_cut_is_said(any_instance):
    prompt = build_judge_prompt(any_instance, "x" * (MAX_RESPONSE_CHARS + 10) + "END")
    assert "END\nANSWER>>>" in prompt and "the answer was cut" in prompt
    assert len(prompt) < MAX_RESPONSE_CHARS + len(any_instance.prompt) + 10_000


@pytest.mark.parametrize(
    ("text", "items", "missing"),
    [
        ('Let me check.\n```json\n{"items": {"C1": 1, "C2": 0, "C3": 1, "C4": 1, "C5": 0}, "score": 0.6}\n```',
         {"C1": True, "C2": False, "C3": True, "C4": True, "C5": False}, []),
        ('{"items": {"C1": "PASS", "C2": "FAIL", "C3": "yes", "C4": "no", "C5": true}}',
         {"C1": True, "C2": False, "C3": True, "C4": False, "C5": True}, []),
        ('{"C1": "✅", "C2": "❌", "c3": "Satisfied", "C 4": "violated", "Item C5": "not satisfied"}',
         {"C1": True, "C2": False, "C3": True, "C4": False, "C5": False}, []),
        ('{"verdicts": [{"id": "C1", "passed": true}, {"item": "C2", "verdict": "fail"}, {"id": "C3", "result": "PASS"}]}',
         {"C1": True, "C2": False, "C3": True}, ["C4", "C5"]),
        ('```json\n{"vector": [1, 0, 1, 1, 0], "score": "3/5"}\n```',
         {"C1": True, "C2": False, "C3": True, "C4": True, "C5": False}, []),
        ('{"items": {"C1": {"passed": true, "reason": "ok"}, "C2": {"satisfied": "no", "reason": "clash"}}}',
         {"C1": True, "C2": False}, ["C3", "C4", "C5"]),
        ('{"checklist": {"1": 1, "2": 1, "3": 0, "4": 1, "5": 1}}',
         {"C1": True, "C2": True, "C3": False, "C4": True, "C5": True}, []),
        ('{"items": {"C1": "PASS - format fine", "C2": "FAIL: R1 broken", "C3": "No violations found"}}',
         {"C1": True, "C2": False, "C3": True}, ["C4", "C5"]),
        # thinking is ignored, the last usable block wins
        ('<think>{"items": {"C1": 0}}</think>draft ```json\n{"items": {"C1": 0}}\n``` final ```json\n{"items": {"C1": 1}}\n```',
         {"C1": True}, ["C2", "C3", "C4", "C5"]),
        # a trailing block that is not a verdict (a quoted answer) does not hide the verdict before it
        ('```json\n{"items": {"C1": 1, "C2": 1}}\n```\nThe answer was:\n```json\n{"feasible": true, "schedule": []}\n```',
         {"C1": True, "C2": True}, ["C3", "C4", "C5"]),
        # prose verdicts, markdown tables, restated rules that are not verdicts
        ("## Requirements\nC2: R1: No room may be double-booked.\nC3: No person in two places at once.\n"
         "## Verdict\n| C1 | format | PASS |\n| C2 | R1 | ✗ |\n- **C3**: **FAIL**\nC4 = 1\nC5: not met",
         {"C1": True, "C2": False, "C3": False, "C4": True, "C5": False}, []),
        ("C1: PASS, C2: FAIL, C3: yes", {"C1": True, "C2": False, "C3": True}, ["C4", "C5"]),
    ],
)
def test_parse_verdict_reads_the_common_shapes(text, items, missing):
    v = parse_verdict(text, IDS)
    assert v.error is None
    assert v.items == items and v.missing == missing


def test_extra_and_unreadable_items_are_reported_not_counted():
    v = parse_verdict('{"items": {"C1": 1, "C7": 1, "foo": 0, "C2": "partially", "C3": null, "score": 1}}', IDS)
    assert v.items == {"C1": True}
    assert v.extra == ["C7", "foo"]
    assert v.unreadable == ["C2", "C3"]
    assert v.missing == ["C2", "C3", "C4", "C5"]
    assert v.score is None or v.score == 1.0


def test_score_is_read_in_several_forms():
    assert parse_verdict('{"items": {"C1": 1}, "score": 0.8}', IDS).score == 0.8
    assert parse_verdict('{"items": {"C1": 1}, "score": "80%"}', IDS).score == 0.8
    assert parse_verdict('{"items": {"C1": 1}, "overall": "4/5"}', IDS).score == 0.8
    assert parse_verdict('{"items": {"C1": 1}, "score": 7}', IDS).score is None  # not a fraction


@pytest.mark.parametrize(
    "text",
    ["", "   ", "I think the answer is great overall!", "```json\n{not json\n```", '{"feasible": true, "schedule": []}',
     "[" * 50_000, "{" * 50_000, '{"items": ' * 3000 + "1" + "}" * 3000, "\x00\x01\x02", "C1 C2 C3 but no verdict words",
     '{"items": [1, 0]}', "x" * 2_000_000],
)  # fmt: skip
def test_garbage_is_a_recorded_parse_failure_not_a_crash(text):
    v = parse_verdict(text, IDS)
    assert v.error is not None and v.items == {} and v.missing == IDS


@pytest.mark.parametrize("value", [None, 3, ["C1"], {"C1": 1}])
def test_non_text_output_is_a_parse_failure(value):
    v = parse_verdict(value, IDS)
    assert v.error and v.missing == IDS


@pytest.mark.parametrize(
    ("value", "want"),
    [(True, True), (False, False), (1, True), (0, False), (1.0, True), (0.5, None), (2, None), ("PASS", True),
     ("passed", True), ("Yes.", True), ("**true**", True), ("✓", True), ("✔️", True), ("FAIL", False), ("no", False),
     ("✗", False), ("Not satisfied", False), ("does not hold", False), ("unsatisfied", False), ("n/a", None),
     ("partially", None), ("", None), (None, None), ({"passed": "yes"}, True), ({"status": "FAIL"}, False),
     ({"reason": "x"}, None), ([1], None)],
)  # fmt: skip
def test_coerce_pass(value, want):
    assert coerce_pass(value) is want


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_yields_a_verdict_or_a_parse_failure(text):
    v = parse_verdict(text, IDS)
    assert set(v.items) <= set(IDS)
    assert v.missing == [i for i in IDS if i not in v.items]
    assert (v.error is None) or v.items == {}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=True) | st.sampled_from(["PASS", "no", "C1", "1"]),
    lambda kids: st.lists(kids, max_size=6) | st.dictionaries(st.sampled_from(["C1", "C2", "items", "id", "passed", "x", "3"]), kids, max_size=6),
    max_leaves=30,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_any_json_verdict_is_read_without_raising(value):
    text = "```json\n" + json.dumps(value) + "\n```"
    v = parse_verdict(text, IDS)
    assert set(v.items) <= set(IDS) and v.missing == [i for i in IDS if i not in v.items]


# -- through the real client, against the local stub ---------------------------------------
def config(stub: OpenAIStub, **kw) -> LLMConfig:
    base = {"model": "judge-model", "base_url": stub.url, "timeout": 5.0, "max_retries": 2, "backoff": 0.01,
            "backoff_max": 0.02, "concurrency": 2}  # fmt: skip
    return LLMConfig(**{**base, **kw})


def test_judge_one_sends_the_rubric_and_parses_the_reply(openai_stub, any_instance):
    ids = [it.id for it in any_instance.checklist]
    openai_stub.responder = lambda req: "Checked.\n```json\n" + json.dumps({"items": {i: 1 for i in ids}, "score": 1}) + "\n```"
    line = judge_one(LLMClient(config(openai_stub)), any_instance, "r1", "the answer")
    req = openai_stub.requests[-1]
    assert req.system == JUDGE_SYSTEM and req.body["temperature"] == 0.0
    assert "<<<ANSWER\nthe answer\nANSWER>>>" in req.prompt
    assert line["items"] == {i: True for i in ids} and line["missing"] == [] and line["parse_error"] is None
    assert line["id"] == any_instance.id and line["response_id"] == "r1" and line["score"] == 1.0
    assert line["raw"].startswith("Checked.") and line["usage"]["total_tokens"] > 0 and line["judge"] == "judge-model"


def test_a_custom_system_prompt_replaces_the_rubric_grader(openai_stub, any_instance):
    judge_one(LLMClient(config(openai_stub, system_prompt="Be lenient.")), any_instance, "r", "x")
    assert openai_stub.requests[-1].system == "Be lenient."


def test_garbage_refusals_and_retries_are_recorded(openai_stub, any_instance):
    ids = [it.id for it in any_instance.checklist]
    good = "```json\n" + json.dumps({"items": {i: 0 for i in ids}}) + "\n```"
    openai_stub.script(
        Reply(text="I cannot grade this."),  # garbage -> parse failure
        Reply(status=500), Reply(text=good),  # retried -> fine
        Reply(status=400, error_message="context length exceeded"),  # this request only -> recorded failure
        Reply(body=b"<html>oops</html>"), Reply(text=good),  # unparseable body -> retried
    )  # fmt: skip
    client = LLMClient(config(openai_stub, concurrency=1))
    jobs = [(any_instance, f"r{k}", "answer") for k in range(4)]
    lines = [line for _, line in judge_many(client, jobs)]
    assert lines[0]["parse_error"] == "no verdict found in the judge output" and lines[0]["items"] == {}
    assert lines[0]["missing"] == ids and lines[0]["raw"] == "I cannot grade this."
    assert lines[1]["items"] == {i: False for i in ids} and lines[1]["calls"] == 2
    assert lines[2]["request_failed"] and "context length exceeded" in lines[2]["parse_error"] and lines[2]["items"] == {}
    assert lines[3]["items"] == {i: False for i in ids} and lines[3]["calls"] == 2
    assert [ln["response_id"] for ln in lines] == ["r0", "r1", "r2", "r3"]


def test_an_endpoint_that_stays_down_raises_after_the_completed_lines(openai_stub, any_instance):
    openai_stub.down()
    with pytest.raises(EndpointDown):
        list(judge_many(LLMClient(config(openai_stub, max_retries=1, concurrency=1)), [(any_instance, "r", "a")]))


def test_a_verdict_line_reads_back_to_the_same_decided_items(any_instance):
    ids = [it.id for it in any_instance.checklist]
    parsed = parse_verdict(json.dumps({"items": {ids[0]: "PASS", ids[1]: "fail", "C99": 1}}), ids)
    line = json.loads(json.dumps(verdict_line(any_instance, "r", parsed, raw="x")))
    assert verdict_of(line, any_instance).items == {ids[0]: True, ids[1]: False}
    assert line["extra"] == ["C99"] and line["missing"] == ids[2:]
