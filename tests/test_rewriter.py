"""The LLM rewriter and its fidelity guard.

The guard is pure (``check_rewrite``): it is held against every single-number change and
every dropped name of real instances, and against fact swaps, reorderings and additions.
The rewriter itself runs through the real ``openai`` client against the local stub.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

import pbsolve.cli.main as cli
from pbsolve.answer_format import render_answer_format
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from pbsolve.jsonl import dumps
from pbsolve.llm.client import LLMClient, LLMConfig
from pbsolve.llm.rewriter import (
    _NUMBER,
    _name_pattern,
    check_rewrite,
    instance_names,
    normalize,
    numbers,
    rewrite_instance,
    split_prompt,
)
from pbsolve.schema import Instance
from tests.helpers import instance_at
from tests.openai_stub import ChatRequest, OpenAIStub, Reply, openai_stub  # noqa: F401  (fixture)

# A wording-only rewrite, as an honest LLM would write it (phrases changed, facts kept).
PHRASES = [
    ("You are scheduling", "Your task is to schedule"),
    ("You are building", "Your task is to build"),
    ("every plan must satisfy all of them", "a valid plan meets each one"),
    ("must", "has to"),
    ("available throughout", "free the whole time"),
    ("Minimise, in this order of priority:", "Minimise the following, most important first:"),
    ("A room holds at most one", "A room can host no more than one"),
    ("No ", "Not a single "),
]


def paraphrase(text: str) -> str:
    for old, new in PHRASES:
        text = text.replace(old, new)
    return text.replace("\n- ", "\n* ")


def narrative_of(req: ChatRequest) -> str:
    """The template narrative inside the rewriter's request."""
    first_user = next(m["content"] for m in req.messages if m["role"] == "user")
    return first_user.split("<statement>\n", 1)[1].rsplit("\n</statement>", 1)[0]


@pytest.fixture(scope="module")
def varied() -> list[Instance]:
    """Instances of every task, plain and with hard mechanisms (replanning, recovery, ranges, ...)."""
    out = []
    for task in ("meeting_planning", "course_timetabling", "exam_scheduling"):
        for index in range(3):
            for hard in (False, True):
                inst = instance_at(task, 5, index, "small", hard)
                if inst is not None:
                    out.append(inst)
    assert len(out) >= 12
    return out


def one_of_each(varied: list[Instance]) -> list[Instance]:
    """Per task, the first plain instance and the first with a hard or reporting mechanism."""
    out = []
    for task in ("meeting_planning", "course_timetabling", "exam_scheduling"):
        mine = [i for i in varied if i.task == task]
        out += [next(i for i in mine if not i.mechanisms), next(i for i in mine if i.mechanisms)]
    return out


def _check(inst: Instance, rewrite: str) -> list[str]:
    narrative, _ = split_prompt(inst)
    return check_rewrite(narrative, rewrite, instance_names(inst))


# -- the guard accepts faithful rewrites --------------------------------------------------------
def test_the_template_itself_and_a_wording_only_rewrite_pass(varied):
    for inst in varied:
        narrative, _ = split_prompt(inst)
        assert _check(inst, narrative) == [], inst.id
        assert _check(inst, paraphrase(narrative)) == [], inst.id
        assert paraphrase(narrative) != narrative


def test_a_sentence_split_over_two_lines_passes(any_instance):
    narrative, _ = split_prompt(any_instance)
    split = narrative.replace(". Start times", ".\nStart times", 1)
    assert split != narrative and _check(any_instance, split) == []


# -- the guard rejects a rewrite that changes one number or drops one name ---------------------------
def _free_numbers(narrative: str, names: list[str]) -> list[re.Match[str]]:
    """Number tokens that are not part of a name and not a list ordinal."""
    spans = [(m.start(), m.end()) for n in names for m in _name_pattern(n).finditer(narrative)]
    out = []
    for m in _NUMBER.finditer(narrative):
        line_start = narrative.rfind("\n", 0, m.start()) + 1
        ordinal = re.match(r"\s*\d+[.)]\s", narrative[line_start:]) and narrative[line_start:m.start()].strip() == ""
        if not ordinal and not any(a <= m.start() < b for a, b in spans):
            out.append(m)
    return out


def _other_values(token: str) -> list[str]:
    if ":" in token:
        hour = int(token.split(":")[0])
        return [f"{(hour + 1) % 24:02d}:00", f"{hour:02d}:30"]
    return sorted({"0", "1", "2", "3", str(int(float(token)) + 1)} - {token})


def test_changing_any_single_number_is_rejected(varied):
    tried = 0
    for inst in one_of_each(varied):
        narrative, _ = split_prompt(inst)
        names = instance_names(inst)
        for m in _free_numbers(narrative, names):
            for value in _other_values(m.group(1)):
                rewrite = narrative[: m.start()] + value + narrative[m.end() :]
                problems = check_rewrite(narrative, rewrite, names)
                assert problems, f"{inst.id}: {m.group(1)} -> {value} at {m.start()} passed"
                tried += 1
    assert tried > 300


def test_dropping_any_name_is_rejected(varied):
    """Every mention of a name that a line states once, replaced: rejected (a line that
    names the same thing twice still states it after losing one mention)."""
    tried = 0
    for inst in one_of_each(varied):
        narrative, _ = split_prompt(inst)
        names = instance_names(inst)
        shown = [n for n in names if _name_pattern(n).search(narrative)]
        for name in shown:
            assert check_rewrite(narrative, _name_pattern(name).sub("someone", narrative), names), (inst.id, name)
            for m in _name_pattern(name).finditer(narrative):
                line_start = narrative.rfind("\n", 0, m.start()) + 1
                line_end = narrative.find("\n", m.end()) % (len(narrative) + 1)
                rest = narrative[line_start : m.start()] + narrative[m.end() : line_end]
                if _name_pattern(name).search(rest):
                    continue
                rewrite = narrative[: m.start()] + "someone" + narrative[m.end() :]
                assert check_rewrite(narrative, rewrite, names), f"{inst.id}: dropping {name!r} at {m.start()} passed"
                tried += 1
    assert tried > 150


def test_the_guard_names_the_number_and_the_name(any_instance):
    narrative, _ = split_prompt(any_instance)
    first_person = any_instance.data["people"][0]["id"]
    m = _free_numbers(narrative, instance_names(any_instance))[0]
    changed = narrative[: m.start()] + "99" + narrative[m.end() :]
    problems = _check(any_instance, changed)
    assert "new number 99" in problems and any(p.startswith(f"number {m.group(1)}:") for p in problems)
    assert f"name {first_person!r} is missing" in _check(any_instance, _name_pattern(first_person).sub("Someone", narrative))


def _lines_starting(narrative: str, prefix: str) -> list[str]:
    return [ln for ln in narrative.splitlines() if ln.startswith(prefix)]


def test_swapping_facts_between_two_entities_is_rejected(varied):
    """Same numbers and names overall, moved from one event (or rule) to another."""
    swapped = 0
    for inst in varied:
        narrative, _ = split_prompt(inst)
        events = [ln for ln in narrative.splitlines() if re.match(r"- [A-Z]+(-[A-Z]+)?\d+ ", ln) and " — " in ln]
        for a, b in zip(events, events[1:]):
            tail_a, tail_b = a.split(" — ", 1)[1], b.split(" — ", 1)[1]
            if tail_a == tail_b:
                continue
            rewrite = narrative.replace(a, a.split(" — ", 1)[0] + " — " + tail_b).replace(b, b.split(" — ", 1)[0] + " — " + tail_a)
            assert _check(inst, rewrite), f"{inst.id}: swap of {a!r} / {b!r} passed"
            swapped += 1
            break
    assert swapped >= 6


def test_reordering_the_objective_terms_is_rejected(varied):
    inst = next(i for i in varied if len(i.objective) >= 2 and i.recovery is None)
    narrative, _ = split_prompt(inst)
    lines = narrative.splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith("1. `"))
    lines[first], lines[first + 1] = "1. " + lines[first + 1][3:], "2. " + lines[first][3:]
    problems = _check(inst, "\n".join(lines))
    assert any("order" in p or "together" in p for p in problems), problems


@pytest.mark.parametrize(
    "edit,needle",
    [
        (lambda t: t + "\nNote: at most 7 rooms exist.", "new number 7"),
        (lambda t: t.replace("R1:", "R99:", 1), "new id R99"),
        (lambda t: t + "\nTry to use three rooms.", "new number word 'three'"),
        (lambda t: t + "\n\n## Answer format\nGive JSON.", "answer format"),
        (lambda t: "```\n" + t + "\n```", "code fence"),
        (lambda t: t.replace("`room_cost`", "room_cost"), "`room_cost` is missing"),
        (lambda t: t + "\nReport `total_cost` too.", "new `total_cost`"),
        (lambda t: t[: len(t) // 3], "length"),
        (lambda t: "\n".join([t] * 3), "length"),
        (lambda t: "   ", "empty"),
    ],
)
def test_other_departures_are_rejected(any_instance, edit, needle):
    narrative, _ = split_prompt(any_instance)
    problems = _check(any_instance, edit(narrative))
    assert any(needle in p for p in problems), problems


def test_numbers_inside_names_and_list_ordinals_are_not_counted():
    text = "1. Cohort 2 sits E2 for 2 hours at 09:00.\n2. Mon P1 = 1"
    assert numbers(text, ["Cohort 2", "E2", "Mon P1"]) == {"2": 1, "09:00": 1, "1": 1}


def test_normalize_strips_reasoning_fences_and_tags():
    assert normalize("<think>the 3 rooms</think>\n```text\n<statement>\nHello 3\n</statement>\n```\n") == "Hello 3"
    assert normalize("  plain  ") == "plain"


# -- the rewriter, through the stub ----------------------------------------------------------
def _client(stub: OpenAIStub, **kw) -> LLMClient:
    return LLMClient(LLMConfig(model="stub-model", base_url=stub.url, backoff=0.01, max_retries=2, **kw))


def test_an_accepted_rewrite_keeps_the_answer_format_verbatim(openai_stub, any_instance):
    openai_stub.responder = lambda req: paraphrase(narrative_of(req))
    out = rewrite_instance(any_instance, _client(openai_stub))
    fmt = render_answer_format(any_instance.answer_schema)
    assert out.provenance.renderer == "llm"
    rec = out.provenance.rewrite
    assert rec is not None and rec.accepted and rec.attempts == 1 and rec.reasons == [] and rec.tokens > 0
    assert out.prompt == paraphrase(split_prompt(any_instance)[0]) + "\n\n" + fmt
    assert out.prompt != any_instance.prompt
    # the model never saw the answer format; everything else of the instance is unchanged
    assert "Answer format" not in json.dumps(openai_stub.requests[0].body)
    assert out.model_dump(exclude={"prompt", "provenance"}) == any_instance.model_dump(exclude={"prompt", "provenance"})
    assert grade(out, json.dumps(out.reference)).all_pass == 1
    assert Instance.model_validate_json(dumps(out)).provenance.rewrite == rec


def test_a_rejected_rewrite_is_retried_with_the_reasons(openai_stub, any_instance):
    narrative, _ = split_prompt(any_instance)
    m = _free_numbers(narrative, instance_names(any_instance))[0]
    wrong = narrative[: m.start()] + "99" + narrative[m.end() :]
    openai_stub.script(Reply(text=wrong))
    openai_stub.responder = lambda req: paraphrase(narrative_of(req))
    out = rewrite_instance(any_instance, _client(openai_stub))
    rec = out.provenance.rewrite
    assert rec is not None and rec.accepted and rec.attempts == 2
    assert len(rec.reasons) == 1 and "new number 99" in rec.reasons[0]
    retry = openai_stub.requests[1].messages
    assert retry[-2] == {"role": "assistant", "content": wrong} and "new number 99" in retry[-1]["content"]


def test_after_the_attempts_the_template_text_is_kept_and_why_is_recorded(openai_stub, any_instance):
    first_person = any_instance.data["people"][0]["id"]
    openai_stub.responder = lambda req: _name_pattern(first_person).sub("someone", paraphrase(narrative_of(req)))
    out = rewrite_instance(any_instance, _client(openai_stub), attempts=3)
    assert out.prompt == any_instance.prompt
    assert out.provenance.renderer == "template"
    rec = out.provenance.rewrite
    assert rec is not None and not rec.accepted and rec.attempts == 3 and openai_stub.calls == 3
    assert all(f"name {first_person!r} is missing" in r for r in rec.reasons)


def test_an_endpoint_that_is_down_leaves_the_template_text(openai_stub, any_instance):
    openai_stub.down()
    out = rewrite_instance(any_instance, _client(openai_stub, max_tokens=None), attempts=3)
    rec = out.provenance.rewrite
    assert out.prompt == any_instance.prompt and rec is not None and not rec.accepted
    assert rec.attempts == 1 and "call failed" in rec.reasons[0] and "503" in rec.reasons[0] and rec.calls == 3


def test_generate_with_the_llm_renderer(openai_stub):
    openai_stub.responder = lambda req: paraphrase(narrative_of(req))
    opts = GenerateOptions(task="exam_scheduling", size="small", renderer="llm", rewriter=LLMConfig(model="stub-model", base_url=openai_stub.url))
    template = build_instance(3, 1, GenerateOptions(task="exam_scheduling", size="small")).instance
    rewritten = build_instance(3, 1, opts).instance
    assert template is not None and rewritten is not None
    assert rewritten.id == template.id and rewritten.provenance.renderer == "llm"
    assert rewritten.prompt == paraphrase(split_prompt(template)[0]) + "\n\n" + render_answer_format(template.answer_schema)
    with pytest.raises(ValueError, match="rewriter endpoint"):
        GenerateOptions(renderer="llm")


def test_template_rendering_serialises_as_before():
    """No `rewrite` key and the same bytes whether or not the new options are spelled out."""
    a = build_instance(4, 0, GenerateOptions(size="small")).instance
    b = build_instance(4, 0, GenerateOptions(size="small", renderer="template", counts=None)).instance
    assert a is not None and b is not None and dumps(a) == dumps(b)
    assert list(json.loads(dumps(a))["provenance"]) == ["pbsolve_version", "schema_version", "solver", "solver_version", "renderer"]


# -- the CLI -------------------------------------------------------------------------------
runner = CliRunner()


def test_cli_generate_and_rewrite_with_the_llm_renderer(openai_stub, tmp_path):
    openai_stub.responder = lambda req: paraphrase(narrative_of(req))
    out = tmp_path / "llm.jsonl"
    result = runner.invoke(cli.app, ["generate", "--n", "3", "--size", "small", "--family", "scheduling", "--renderer", "llm",
                                     "--model", "stub-model", "--base-url", openai_stub.url, "--out", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "llm renderer: 3 rewritten, 0 on the template text" in " ".join(result.output.split())
    rows = [Instance.model_validate_json(ln) for ln in out.read_text().splitlines()]
    assert [r.provenance.renderer for r in rows] == ["llm"] * 3

    plain = tmp_path / "plain.jsonl"
    assert runner.invoke(cli.app, ["generate", "--n", "2", "--size", "small", "--family", "scheduling", "--out", str(plain)]).exit_code == 0
    openai_stub.script(Reply(text="Schedule things."))  # the first rewrite drops every fact
    redone = tmp_path / "redone.jsonl"
    result = runner.invoke(cli.app, ["rewrite", "--instances", str(plain), "--out", str(redone), "--model", "stub-model",
                                     "--base-url", openai_stub.url, "--concurrency", "2"])  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = [Instance.model_validate_json(ln) for ln in redone.read_text().splitlines()]
    assert len(rows) == 2 and all(r.provenance.renderer == "llm" for r in rows)
    assert sorted(r.provenance.rewrite.attempts for r in rows) == [1, 2]


def test_cli_llm_renderer_needs_a_model_and_a_reachable_endpoint(tmp_path):
    result = runner.invoke(cli.app, ["generate", "--n", "1", "--renderer", "llm", "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 1 and "--renderer llm needs --model" in " ".join(result.output.split())
    result = runner.invoke(cli.app, ["generate", "--n", "1", "--renderer", "llm", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                                     "--max-retries", "0", "--out", str(tmp_path / "x.jsonl")])  # fmt: skip
    assert result.exit_code == 1 and "cannot connect" in " ".join(result.output.split())
    assert not (tmp_path / "x.jsonl").exists()
