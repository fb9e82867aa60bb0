"""The judge audit: metric definitions on hand-computed tables, the response-level
(cluster) bootstrap, and end-to-end runs in which a lenient and a strict scripted judge,
served by the local OpenAI-compatible stub, are told apart by the figures."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from pbsolve.audit.report import HEADLINE, RESPONSE_GROUPS, AuditTable, compute, length_bins
from pbsolve.cli.main import app
from pbsolve.grading import grade
from pbsolve.audit.perturb import perturb
from tests.openai_stub import OpenAIStub, Reply

runner = CliRunner()


def table(rows: list[tuple[list[bool], list[int]]], kinds: list[str] | None = None) -> AuditTable:
    """An audit table from (checker truth, judge verdict 1/0/-1) per response."""
    t = AuditTable()
    for r, (truth, judge) in enumerate(rows):
        t.ids.append(f"i{r}")
        t.response_ids.append(f"r{r}")
        t.instances.add(f"i{r}")
        for g in RESPONSE_GROUPS:
            t.attrs[g].append("x")
        t.prompt_chars.append(100)
        t.has_verdict.append(True)
        t.parse_failed.append(False)
        for k, (tv, jv) in enumerate(zip(truth, judge)):
            t.resp.append(r)
            t.item_ids.append(f"C{k + 1}")
            t.tier.append("basic" if k < 2 else "medium")
            names = kinds or ["format", "room_fit", "objective"]
            t.rule_kind.append(names[k % len(names)])
            t.truth.append(tv)
            t.judge.append(jv)
    return t


T, F = True, False
HAND = [([T, T, F], [1, 1, 1]), ([T, F, F], [1, 0, -1]), ([T, T, T], [1, 0, 1]), ([F, T], [0, 1])]


def test_figures_match_a_hand_computation():
    a = compute(table(HAND), resamples=0)
    # a=6 (pass/pass), b=1 (judge pass, checker fail), c=1 (judge fail, checker pass), d=3 (one of them missing)
    assert a["item_accuracy"] == pytest.approx(9 / 11)
    assert a["false_pass_rate"] == pytest.approx(1 / 4)
    assert a["false_fail_rate"] == pytest.approx(1 / 7)
    assert a["missing_rate"] == pytest.approx(1 / 11)
    assert a["kappa"] == pytest.approx((9 / 11 - 65 / 121) / (1 - 65 / 121))
    assert a["all_pass_agreement"] == pytest.approx(2 / 4)
    assert a["false_accept_rate"] == pytest.approx(1 / 3) and a["false_reject_rate"] == pytest.approx(1.0)
    c = a["counts"]
    assert c["confusion"] == {"truth_pass": {"judge_pass": 6, "judge_fail": 1, "judge_missing": 0},
                              "truth_fail": {"judge_pass": 1, "judge_fail": 2, "judge_missing": 1}}  # fmt: skip
    assert c["judge_missing_items"] == 1 and c["truth_all_pass"] == 1 and c["judge_all_pass"] == 1


def test_a_missing_verdict_counts_as_fail_and_is_tallied_apart():
    answered = compute(table([([T, F], [1, 0])]), resamples=0)
    silent = compute(table([([T, F], [1, -1])]), resamples=0)
    assert answered["item_accuracy"] == silent["item_accuracy"] == 1.0
    assert answered["missing_rate"] == 0 and silent["missing_rate"] == 0.5
    passing_but_silent = compute(table([([T, T], [1, -1])]), resamples=0)
    assert passing_but_silent["false_fail_rate"] == 0.5 and passing_but_silent["all_pass_agreement"] == 0.0


def kappa_by_hand(truth: list[bool], judge: list[bool]) -> float:
    n = len(truth)
    po = sum(t == j for t, j in zip(truth, judge)) / n
    pt, pj = sum(truth) / n, sum(judge) / n
    pe = pt * pj + (1 - pt) * (1 - pj)
    return (po - pe) / (1 - pe)


def test_kappa_agrees_with_a_direct_computation_and_its_edge_cases():
    rng = random.Random(3)
    rows = [([rng.random() < 0.7 for _ in range(6)], [int(rng.random() < 0.6) for _ in range(6)]) for _ in range(40)]
    truth = [t for tr, _ in rows for t in tr]
    judge = [bool(j) for _, jr in rows for j in jr]
    assert compute(table(rows), resamples=0)["kappa"] == pytest.approx(kappa_by_hand(truth, judge), abs=1e-6)
    assert compute(table([([T, F, T], [1, 0, 1])]), resamples=0)["kappa"] == 1.0
    assert compute(table([([T, F, T], [1, 1, 1])]), resamples=0)["kappa"] == 0.0  # a constant judge
    assert compute(table([([T, T], [1, 1])]), resamples=0)["kappa"] is None  # undefined: both constant


def test_the_bootstrap_resamples_responses_not_items():
    # one response right on all 50 items, one wrong on all 50: items are perfectly correlated within a response,
    # so accuracy is 0, 1/2 or 1 with chance 1/4, 1/2, 1/4 -- an item-level bootstrap would claim about 0.5 +- 0.1
    a = compute(table([([T] * 50, [1] * 50), ([T] * 50, [0] * 50)], kinds=["k"]), resamples=2000, seed=1)
    assert a["item_accuracy"] == 0.5
    assert a["ci"]["item_accuracy"] == [0.0, 1.0]


def test_intervals_are_seeded_and_contain_the_estimate():
    rng = random.Random(0)
    rows = [([rng.random() < 0.6 for _ in range(5)], [int(rng.random() < 0.7) for _ in range(5)]) for _ in range(60)]
    a1, a2 = compute(table(rows), resamples=500, seed=4), compute(table(rows), resamples=500, seed=4)
    assert a1 == a2
    assert compute(table(rows), resamples=500, seed=5)["ci"] != a1["ci"]
    for f in HEADLINE:
        lo, hi = a1["ci"][f]
        assert lo <= a1[f] <= hi, f


def test_breakdowns_partition_the_items():
    a = compute(table(HAND), resamples=50)
    for group in ("tier", "rule_kind"):
        rows = a["breakdowns"][group]
        assert sum(r["n_items"] for r in rows.values()) == a["counts"]["items"]
        assert all(r["all_pass_agreement"] is None for r in rows.values())  # response-level figure: not per item group
    assert a["breakdowns"]["tier"]["basic"]["n_items"] == 8
    assert a["breakdowns"]["rule_kind"]["room_fit"]["false_pass_rate"] == 0.0
    assert a["breakdowns"]["task"]["x"]["n_responses"] == 4


def test_prompt_length_bins_are_terciles_with_readable_labels():
    labels, edges = length_bins([100, 200, 300, 400, 500, 600])
    assert edges == [267, 433]
    assert labels == ["≤267 chars", "≤267 chars", "268–433 chars", "268–433 chars", ">433 chars", ">433 chars"]
    assert length_bins([50, 50, 50])[0] == ["all", "all", "all"]


# -- end to end: scripted judges on the local OpenAI-compatible server ----------------------
def _answer_of(prompt: str) -> str:
    return prompt.split("<<<ANSWER\n", 1)[1].rsplit("\nANSWER>>>", 1)[0]


def _render(verdict: dict[str, bool], style: int) -> str:
    """The judge's reply in one of several shapes (the parser must read them all)."""
    if style == 0:
        return "Requirements listed and checked.\n```json\n" + json.dumps({"items": {k: int(v) for k, v in verdict.items()}, "score": 0.5}) + "\n```"
    if style == 1:
        rows = "\n".join(f"| {k} | checked | {'PASS' if v else 'FAIL'} |" for k, v in verdict.items())
        return "## Verdict\n| item | note | verdict |\n|---|---|---|\n" + rows
    if style == 2:
        return "Self-check done. Final: " + json.dumps({k: "yes" if v else "no" for k, v in verdict.items()})
    return "```\n" + json.dumps({"verdicts": [{"id": k, "passed": v} for k, v in verdict.items()]}) + "\n```"


class ScriptedJudge:
    """Lenient: passes every item. Strict: recomputes the truth with the checkers, but lets one
    violated item through on about one answer in eight (a realistic, imperfect strict judge)."""

    def __init__(self, instances: list, strict: bool) -> None:
        self.instances = instances
        self.strict = strict

    def __call__(self, req) -> str:
        inst = next(i for i in self.instances if i.prompt in req.prompt)
        answer = _answer_of(req.prompt)
        h = int(hashlib.sha256(answer.encode()).hexdigest(), 16)
        if self.strict:
            verdict = {i.id: i.passed for i in grade(inst, answer).items}
            violated = [k for k, v in verdict.items() if not v]
            if violated and h % 8 == 0:
                verdict[violated[0]] = True
        else:
            verdict = {it.id: True for it in inst.checklist}
        return _render(verdict, h % 4)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory, feasible_instances, infeasible_instances) -> tuple[Path, Path, list]:
    folder = tmp_path_factory.mktemp("audit")
    insts = [*feasible_instances.values(), *infeasible_instances.values()]
    inst_path, resp_path = folder / "instances.jsonl", folder / "perturbed.jsonl"
    inst_path.write_text("".join(i.model_dump_json() + "\n" for i in insts))
    report = perturb(insts, seed=0)
    resp_path.write_text("".join(json.dumps(p.line()) + "\n" for p in report.perturbations))
    return inst_path, resp_path, insts


def run_audit(dataset, stub: OpenAIStub, out: Path, *extra: str):
    inst_path, resp_path, _ = dataset
    args = ["audit", "--instances", str(inst_path), "--responses", str(resp_path), "--out", str(out),
            "--judge-model", "stub-model", "--base-url", stub.url, "--bootstrap", "300", "--max-retries", "1",
            "--backoff", "0.01", "--concurrency", "4", *extra]  # fmt: skip
    return runner.invoke(app, args)


def test_lenient_and_strict_judges_are_told_apart(dataset, tmp_path):
    insts = dataset[2]
    figures = {}
    for name, strict in (("lenient", False), ("strict", True)):
        with OpenAIStub(ScriptedJudge(insts, strict)) as stub:
            if strict:
                stub.script(Reply(text="Sorry, I cannot grade this answer."))  # one unparseable verdict
            r = run_audit(dataset, stub, tmp_path / name, "--judge-name", name)
            assert r.exit_code == 0, r.output
            figures[name] = json.loads((tmp_path / name / "audit.json").read_text())
    lenient, strict = figures["lenient"], figures["strict"]
    # the lenient judge passes every near miss: every violation slips through, every wrong answer is rewarded
    assert lenient["false_pass_rate"] == 1.0 and lenient["false_accept_rate"] == 1.0
    assert lenient["kappa"] == pytest.approx(0.0) and lenient["false_fail_rate"] == 0.0
    # the strict judge catches most of them
    assert strict["false_pass_rate"] < 0.25 and strict["kappa"] > 0.75 and strict["item_accuracy"] > 0.95
    assert strict["ci"]["false_pass_rate"][1] < lenient["ci"]["false_pass_rate"][0]
    assert strict["ci"]["kappa"][0] > lenient["ci"]["kappa"][1]
    assert strict["all_pass_agreement"] > lenient["all_pass_agreement"] + 0.2
    assert strict["counts"]["parse_failures"] == 1 and lenient["counts"]["parse_failures"] == 0
    assert strict["counts"]["judge_missing_items"] > 0 and strict["missing_rate"] > 0
    # the breakdowns say where the lenient judge fails: every rule-break kind, sub-optimal plans, wrong claims
    rows = lenient["breakdowns"]["perturbation"]
    for cat in ("break_rule", "suboptimal", "wrong_figures", "claims_plan"):
        assert rows[cat]["false_pass_rate"] == 1.0 and rows[cat]["all_pass_agreement"] == 0.0
    assert rows["format"]["all_pass_agreement"] == 1.0 and rows["correct"]["false_fail_rate"] == 0.0
    assert set(lenient["breakdowns"]) >= {"tier", "rule_kind", "task", "prompt_length", "perturbation", "kind"}
    assert lenient["breakdowns"]["rule_kind"]["objective"]["false_pass_rate"] == 1.0
    assert len(lenient["breakdowns"]["prompt_length"]) >= 2
    for f in HEADLINE:
        assert f in lenient and f in strict  # the JSON's top level
    # the report and its plots
    for name in ("lenient", "strict"):
        folder = tmp_path / name
        md = (folder / "report.md").read_text()
        assert "## Headline" in md and "false_pass_rate" in md and "![confusion matrix](confusion.png)" in md
        for png in ("confusion.png", "false_pass_by_rule_kind.png", "false_pass_by_perturbation.png"):
            assert (folder / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        items = (folder / "items.jsonl").read_text().splitlines()
        assert len(items) == figures[name]["counts"]["items"]
        verdict_lines = (folder / "verdicts.jsonl").read_text().splitlines()
        assert len(verdict_lines) == figures[name]["counts"]["responses"]


def test_verdicts_from_a_judge_run_reproduce_its_audit(dataset, tmp_path):
    inst_path, resp_path, insts = dataset
    with OpenAIStub(ScriptedJudge(insts, True)) as stub:
        assert run_audit(dataset, stub, tmp_path / "llm").exit_code == 0
        calls = stub.calls
    assert calls == len(resp_path.read_text().splitlines())
    r = runner.invoke(app, ["audit", "--instances", str(inst_path), "--responses", str(resp_path), "--out", str(tmp_path / "file"),
                            "--verdicts", str(tmp_path / "llm" / "verdicts.jsonl"), "--bootstrap", "300", "--summary-json"])  # fmt: skip
    assert r.exit_code == 0, r.output
    headline = json.loads(r.stdout.strip().splitlines()[-1])
    first = json.loads((tmp_path / "llm" / "audit.json").read_text())
    for f in HEADLINE:
        assert headline[f] == first[f] and headline["ci"][f] == first["ci"][f]


def test_a_verdicts_file_from_any_judge_with_bad_lines(dataset, tmp_path):
    inst_path, resp_path, insts = dataset
    by_id = {i.id: i for i in insts}
    responses = [json.loads(x) for x in resp_path.read_text().splitlines()]
    lines = []
    for k, r in enumerate(responses[:-1]):  # the last response gets no verdict
        g = grade(by_id[r["id"]], r["response"])
        lines.append(json.dumps({"id": r["id"], "response_id": r["response_id"],
                                 "items": {i.id: ("PASS" if i.passed else "FAIL") if k % 2 else i.passed for i in g.items}}))  # fmt: skip
    lines.insert(3, "{not json")
    lines.insert(5, json.dumps({"id": responses[0]["id"], "response_id": "nope", "items": {}}))
    lines.insert(7, lines[0])  # duplicate
    lines.insert(9, json.dumps({"id": responses[-1]["id"], "response_id": responses[-1]["response_id"], "items": "all good"}))
    path = tmp_path / "verdicts.jsonl"
    path.write_text("\n".join(lines) + "\n")
    r = runner.invoke(app, ["audit", "--instances", str(inst_path), "--responses", str(resp_path), "--out", str(tmp_path / "o"),
                            "--verdicts", str(path), "--bootstrap", "100"])  # fmt: skip
    assert r.exit_code == 1
    out = r.output.replace("\n", " ")
    assert f"{path}:4: not valid JSON" in out and f"{path}:6: no response 'nope'" in out
    assert f"{path}:8: duplicate verdict" in out and f"{path}:10: 'items' must be an object" in out
    a = json.loads((tmp_path / "o" / "audit.json").read_text())
    assert a["counts"]["responses_without_verdict"] == 1
    assert a["counts"]["judge_missing_items"] == len(by_id[responses[-1]["id"]].checklist)
    conf = a["counts"]["confusion"]  # the verdicts given are the truth: only the missing ones disagree
    assert conf["truth_pass"]["judge_fail"] == 0 and conf["truth_fail"]["judge_pass"] == 0 and a["false_pass_rate"] == 0.0
    assert conf["truth_pass"]["judge_missing"] + conf["truth_fail"]["judge_missing"] == a["counts"]["judge_missing_items"]


def test_exactly_one_judge_must_be_given(dataset, tmp_path):
    inst_path, resp_path, _ = dataset
    base = ["audit", "--instances", str(inst_path), "--responses", str(resp_path), "--out", str(tmp_path)]
    for extra in ([], ["--verdicts", str(resp_path), "--judge-model", "m"]):
        r = runner.invoke(app, base + extra)
        assert r.exit_code == 1 and "exactly one judge" in r.output


def test_an_endpoint_that_goes_down_keeps_the_verdicts_and_resume_finishes(dataset, tmp_path):
    insts = dataset[2]
    n = len(dataset[1].read_text().splitlines())
    judge = ScriptedJudge(insts, True)
    state = {"calls": 0}

    def flaky(req):
        state["calls"] += 1
        return judge(req) if state["calls"] <= 5 else Reply(status=503)

    with OpenAIStub(flaky) as stub:
        r = run_audit(dataset, stub, tmp_path / "o", "--concurrency", "1", "--max-retries", "0")
        assert r.exit_code == 1 and "--resume" in r.output.replace("\n", " ")
        partial = tmp_path / "o" / "verdicts.jsonl.partial"
        assert len(partial.read_text().splitlines()) == 5 and not (tmp_path / "o" / "audit.json").exists()
        stub.responder = judge
        before = stub.calls
        r = run_audit(dataset, stub, tmp_path / "o", "--resume")
        assert r.exit_code == 0, r.output
        assert stub.calls - before == n - 5  # only the missing verdicts were asked for
    assert len((tmp_path / "o" / "verdicts.jsonl").read_text().splitlines()) == n
    assert json.loads((tmp_path / "o" / "audit.json").read_text())["counts"]["responses_without_verdict"] == 0


def test_responses_without_ids_get_line_ids(dataset, tmp_path):
    inst_path, resp_path, insts = dataset
    first = json.loads(resp_path.read_text().splitlines()[0])
    bare = tmp_path / "bare.jsonl"
    bare.write_text(json.dumps({"id": first["id"], "response": first["response"]}) + "\n")
    verdicts = tmp_path / "v.jsonl"
    g = grade(next(i for i in insts if i.id == first["id"]), first["response"])
    verdicts.write_text(json.dumps({"id": first["id"], "response_id": f"{first['id']}#L1", "items": {i.id: i.passed for i in g.items}}) + "\n")
    r = runner.invoke(app, ["audit", "--instances", str(inst_path), "--responses", str(bare), "--out", str(tmp_path / "o"),
                            "--verdicts", str(verdicts), "--summary-json", "--bootstrap", "10"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout.strip().splitlines()[-1])["item_accuracy"] == 1.0


def test_numpy_generator_only():
    # the bootstrap draws from a seeded numpy Generator, never the global RandomState
    np.random.seed(0)
    state = np.random.get_state()[1].copy()
    compute(table(HAND), resamples=50, seed=2)
    assert (np.random.get_state()[1] == state).all()
