"""The closed difficulty loop: the update rule, M and the projection, escalation, the kept
and solved files, resumption after a kill, the trajectory, the plot and the CLI."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import pbsolve.cli.main as cli
import pbsolve.loop.difficulty as loop_mod
from pbsolve.grading import grade
from pbsolve.loop.difficulty import (
    LOOP_TIERS,
    M_MAX,
    S_POINTS,
    Loop,
    LoopError,
    LoopParams,
    LoopSettings,
    LoopStore,
    TaskState,
    counts_for,
    grow_total,
    plot,
    prior_total,
    prior_weights,
    project,
    round_total,
    summarize,
    update_weights,
)
from pbsolve.llm.responders import get_responder, oracle
from pbsolve.schema import Grade, Instance
from tests.openai_stub import OpenAIStub, Reply

FAMILY = "scheduling"
TASKS = ["meeting_planning", "course_timetabling", "exam_scheduling"]
runner = CliRunner()


def settings_for(responder: str, **kw) -> LoopSettings:
    """A run over TASKS in turn (the family's first three task types: budgets stay small)."""
    kw.setdefault("tasks", TASKS)
    return LoopSettings(responder=responder, family=FAMILY, size="small", **kw)


def run_loop(out: Path, responder: str, budget: int, fn=None, **kw) -> Loop:
    loop = Loop(out, settings_for(responder, **kw), fn or get_responder(responder))
    loop.run(budget)
    return loop


def read(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()] if path.exists() else []


def without_timing(records: list[dict]) -> list[dict]:
    def strip(r: dict) -> dict:
        return {k: v for k, v in r.items() if k != "seconds"}

    return [strip(r) for r in records]


# -- the rule ----------------------------------------------------------------------------
def test_the_prior_gives_the_typical_counts():
    assert prior_total() == pytest.approx(3.25)
    assert prior_weights() == pytest.approx((2.0 / 3.25, 0.95 / 3.25, 0.3 / 3.25))
    assert counts_for(prior_weights(), prior_total()) == {"basic": 2, "medium": 1, "hard": 0}


def test_the_update_is_the_normalised_exponential_step():
    params = LoopParams(eta=0.3, alpha=1.0, beta=0.5, gamma=1.0)
    p = prior_weights()
    raw = [p[0] * math.exp(-0.3), p[1] * math.exp(0.15), p[2] * math.exp(0.3)]
    assert update_weights(p, params) == pytest.approx(tuple(x / sum(raw) for x in raw))
    state = TaskState()
    assert state.after(0, params) == TaskState(state.weights, state.total, 1, 0)  # u = 0: unchanged
    solved = state.after(1, params)
    assert solved.weights == update_weights(state.weights, params) and solved.total == 3.5 and solved.solved == 1


def test_m_grows_by_its_step_up_to_the_largest_total_of_s():
    params = LoopParams(m_step=0.25)
    m = prior_total()
    for _ in range(30):
        m = grow_total(m, params)
    assert m == M_MAX == 6
    assert [round_total(x) for x in (0.2, 1.49, 1.5, 3.25, 3.5, 5.49, 9.0)] == [1, 1, 2, 3, 4, 5, 6]


def test_projection_examples_and_tie_break():
    assert project([0, 0, 6], 6) == (3, 2, 1)
    assert project([0, 0, 5], 5) == (2, 2, 1)
    assert project([5, 0, 0], 1) == (1, 0, 0)
    assert project([2.0, 0.95, 0.3], 3) == (2, 1, 0)
    # (2,1,1) and (1,2,1) are equally near (1.5,1.5,1): the harder (more medium) wins
    assert project([1.5, 1.5, 1.0], 4) == (1, 2, 1)


@settings(max_examples=300, deadline=None)
@given(
    st.tuples(*[st.floats(0.001, 1.0)] * 3),
    st.floats(0.0, 8.0),
)
def test_projection_is_the_nearest_point_of_s_with_the_rounded_total(raw, m):
    p = [x / sum(raw) for x in raw]
    target = [m * w for w in p]
    total = round_total(m)
    point = project(target, total)
    assert point in S_POINTS and sum(point) == total
    dist = sum((a - b) ** 2 for a, b in zip(point, target))
    assert all(dist <= sum((a - b) ** 2 for a, b in zip(s, target)) + 1e-9 for s in S_POINTS if sum(s) == total)


def test_consecutive_successes_escalate_to_the_hardest_counts():
    params = LoopParams()
    state, path = TaskState(), []
    for _ in range(16):
        path.append(tuple(state.counts[t] for t in LOOP_TIERS))
        state = state.after(1, params)
    assert path[0] == (2, 1, 0) and path[-1] == (3, 2, 1)
    assert all(sum(b) >= sum(a) for a, b in zip(path, path[1:]))  # never fewer rules
    assert all(b[2] >= a[2] for a, b in zip(path, path[1:]))  # never fewer hard rules


# -- the loop escalates with a strong responder and stays with a failing one -------------------------
def test_with_the_oracle_the_weights_move_to_the_hard_tiers(tmp_path):
    loop = run_loop(tmp_path / "run", "oracle", 12)
    traj = read(tmp_path / "run" / "trajectory.jsonl")
    assert len(read(tmp_path / "run" / "solved.jsonl")) == 12 and read(tmp_path / "run" / "kept.jsonl") == []
    prior = dict(zip(LOOP_TIERS, prior_weights()))
    for task in TASKS:
        rows = [r for r in traj if r["task"] == task and r["status"] == "solved"]
        assert len(rows) == 4
        hard = [prior["hard"]] + [r["weights_next"]["hard"] for r in rows]
        basic = [prior["basic"]] + [r["weights_next"]["basic"] for r in rows]
        assert all(b > a for a, b in zip(hard, hard[1:])), hard
        assert all(b < a for a, b in zip(basic, basic[1:])), basic
        assert rows[0]["counts"] == {"basic": 2, "medium": 1, "hard": 0}
        assert rows[-1]["counts"]["hard"] == 1 and sum(rows[-1]["counts"].values()) > 3
        assert loop.states[task].weights[2] > 3 * prior["hard"]
    # the instances really carry the counts they were sampled with
    for rec in read(tmp_path / "run" / "solved.jsonl"):
        spec = rec["instance"]["spec"]
        assert [len(spec[t]) for t in LOOP_TIERS] == [rec["counts"][t] for t in LOOP_TIERS]


def test_with_a_responder_that_always_fails_the_weights_stay_put(tmp_path):
    run_loop(tmp_path / "run", "nothing", 9)
    traj = read(tmp_path / "run" / "trajectory.jsonl")
    answered = [r for r in traj if r["status"] != "rejected"]
    assert len(answered) == 9 and all(r["status"] == "kept" and r["u"] == 0 for r in answered)
    prior = dict(zip(LOOP_TIERS, prior_weights()))
    for r in answered:
        assert r["weights"] == prior and r["weights_next"] == prior
        assert r["counts"] == {"basic": 2, "medium": 1, "hard": 0}
    assert read(tmp_path / "run" / "solved.jsonl") == []


def test_nothing_is_lost_kept_lines_carry_the_answer_and_its_grade(tmp_path):
    run_loop(tmp_path / "run", "baseline", 9)
    kept, solved = read(tmp_path / "run" / "kept.jsonl"), read(tmp_path / "run" / "solved.jsonl")
    traj = read(tmp_path / "run" / "trajectory.jsonl")
    assert len(kept) + len(solved) == 9 and kept and solved
    ids = [r["instance"]["id"] for r in kept + solved]
    assert len(set(ids)) == 9
    assert sorted(r["instance_id"] for r in traj if r["status"] != "rejected") == sorted(ids)
    for rec in kept:
        inst = Instance.model_validate(rec["instance"])
        g = Grade.model_validate(rec["grade"])
        assert g.all_pass == 0 and rec["response"]["response"] == get_responder("baseline")(inst)
        assert grade(inst, rec["response"]["response"]) == g  # the stored grade is the checker's
    for rec in solved:
        assert rec["grade"]["all_pass"] == 1
    for r in traj:
        assert {"step", "task", "counts", "weights", "u", "rho", "tokens", "seconds"} <= set(r)


# -- state is saved as it goes --------------------------------------------------------------
class Interrupting:
    """The oracle, until its n-th call, which raises KeyboardInterrupt (a Ctrl-C)."""

    def __init__(self, n: int) -> None:
        self.n, self.calls = n, 0

    def __call__(self, inst: Instance) -> str:
        self.calls += 1
        if self.calls == self.n:
            raise KeyboardInterrupt
        return oracle(inst)


def test_an_interrupted_loop_resumes_to_the_same_result(tmp_path):
    whole = run_loop(tmp_path / "whole", "oracle", 10)
    with pytest.raises(KeyboardInterrupt):
        run_loop(tmp_path / "cut", "oracle", 10, fn=Interrupting(5))
    cut = without_timing(read(tmp_path / "cut" / "trajectory.jsonl"))
    # the steps before the 5th answer are kept (steps that certified nothing answer nothing)
    assert 4 <= len(cut) < 10 and cut == without_timing(whole.trajectory)[: len(cut)]
    run_loop(tmp_path / "cut", "oracle", 10)
    assert without_timing(read(tmp_path / "cut" / "trajectory.jsonl")) == without_timing(whole.trajectory)
    ids = lambda d: [r["instance"]["id"] for r in read(d / "solved.jsonl")]  # noqa: E731
    assert ids(tmp_path / "cut") == ids(tmp_path / "whole")


def test_a_torn_line_and_a_missing_trajectory_line_are_repaired(tmp_path):
    out = tmp_path / "run"
    run_loop(out, "nothing", 6)
    reference = without_timing(read(out / "trajectory.jsonl"))
    # a kill between the kept line and the trajectory line, and a kill in mid-write
    lines = (out / "trajectory.jsonl").read_text().splitlines(keepends=True)
    (out / "trajectory.jsonl").write_text("".join(lines[:-1]) + lines[-1][:25])
    kept = (out / "kept.jsonl").read_text()
    (out / "kept.jsonl").write_text(kept + kept.splitlines(keepends=True)[0][:40])
    run_loop(out, "nothing", 6)
    assert without_timing(read(out / "trajectory.jsonl")) == reference
    assert len(read(out / "kept.jsonl")) == 6
    run_loop(out, "nothing", 8)  # a larger budget extends the run
    assert len(read(out / "kept.jsonl")) == 8 and len({r["step"] for r in read(out / "kept.jsonl")}) == 8


def test_other_settings_and_a_second_runner_are_refused(tmp_path):
    out = tmp_path / "run"
    run_loop(out, "nothing", 3)
    with pytest.raises(LoopError, match="other settings"):
        run_loop(out, "nothing", 3, params=LoopParams(eta=0.9))
    with pytest.raises(LoopError, match="other settings"):
        run_loop(out, "oracle", 3)
    holder = LoopStore(out)
    holder.open(settings_for("nothing", tasks=TASKS))
    try:
        with pytest.raises(LoopError, match="another loop is running"):
            run_loop(out, "nothing", 4)
    finally:
        holder.close()


def test_a_killed_process_resumes_with_no_duplicate_and_no_loss(tmp_path):
    """SIGKILL a real `pbsolve loop` process mid-run (answers come slowly from the stub), rerun it."""
    out = tmp_path / "run"
    with OpenAIStub(lambda req: Reply(text="no idea", delay=0.25)) as stub:
        args = [sys.executable, "-m", "pbsolve", "loop", "--responder", "openai", "--model", "stub-model",
                "--base-url", stub.url, "--budget", "9", "--out", str(out), "--family", FAMILY, "--size", "small",
                "--concurrency", "1"]  # fmt: skip
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "200"})
        deadline = time.monotonic() + 60
        while len(read(out / "trajectory.jsonl")) < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done = len(read(out / "trajectory.jsonl"))
        assert 3 <= done < 9
        result = runner.invoke(cli.app, [str(a) for a in args[3:]])
        assert result.exit_code == 0, result.output
        calls_after = stub.calls
    kept, traj = read(out / "kept.jsonl"), read(out / "trajectory.jsonl")
    assert len(kept) == 9 and len({r["instance"]["id"] for r in kept}) == 9
    assert [r["step"] for r in traj] == list(range(len(traj)))  # a step certifying nothing is recorded too
    assert [r["step"] for r in kept] == [r["step"] for r in traj if r["status"] == "kept"]
    assert calls_after >= 9


# -- the LLM responder inside the loop ---------------------------------------------------------
def test_the_loop_with_an_openai_responder_records_tokens_and_cost(tmp_path, monkeypatch):
    """The stub answers with the certified plan for meeting planning and with a wrong plan
    (the baseline's) or garbage otherwise, after a 429 and a 500."""
    built: dict[str, Instance] = {}
    real_build = loop_mod.build_instance

    def recording_build(*args, **kwargs):
        outcome = real_build(*args, **kwargs)
        if outcome.instance is not None:
            built[outcome.instance.prompt] = outcome.instance
        return outcome

    monkeypatch.setattr(loop_mod, "build_instance", recording_build)

    def answer(req):
        inst = built[req.prompt]
        if inst.task == "meeting_planning":
            return oracle(inst)
        return get_responder("baseline")(inst) if inst.task == "course_timetabling" else "garbage {"

    with OpenAIStub(answer) as stub:
        stub.script(Reply(status=429), Reply(status=500))
        fn = get_responder("openai", model="stub-model", base_url=stub.url, backoff=0.01, concurrency=3)
        loop = Loop(tmp_path / "run", settings_for("openai", responder_settings={"model": "stub-model"}), fn)
        loop.run(9)
    traj = [r for r in loop.trajectory if r["status"] != "rejected"]
    by_task = {t: [r for r in traj if r["task"] == t] for t in TASKS}
    assert all(r["u"] == 1 for r in by_task["meeting_planning"])
    assert all(r["u"] == 0 for r in by_task["exam_scheduling"])
    assert by_task["meeting_planning"][-1]["weights_next"]["hard"] > by_task["exam_scheduling"][-1]["weights_next"]["hard"]
    assert all(r["tokens"]["total_tokens"] > 0 for r in traj)
    assert sum(r["calls"] for r in traj) == 9 + 2  # two retries
    kept = read(tmp_path / "run" / "kept.jsonl")
    assert all(rec["response"]["raw"]["object"] == "chat.completion" and rec["response"]["usage"] for rec in kept)
    s = summarize(loop.trajectory, loop.tasks, loop.settings.params)
    tokens = sum(r["tokens"]["total_tokens"] for r in traj)
    assert s["kept"] == len(kept) >= 3 and s["cost"]["responder_calls"] == 11
    assert s["cost"]["tokens_per_kept"] == pytest.approx(tokens / len(kept))
    assert s["cost"]["calls_per_kept"] == pytest.approx(11 / len(kept))
    assert s["by_task"]["meeting_planning"]["solve_rate"] == 1.0


def test_an_endpoint_that_goes_down_stops_the_loop_with_every_step_saved(tmp_path):
    with OpenAIStub(lambda req: "no plan") as stub:
        fn = get_responder("openai", model="stub-model", base_url=stub.url, backoff=0.01, max_retries=1, concurrency=1)
        loop = Loop(tmp_path / "run", settings_for("openai"), fn)
        loop.run(4)
        stub.down()
        with pytest.raises(Exception, match="still failing"):
            loop = Loop(tmp_path / "run", settings_for("openai"), fn)
            loop.run(8)
        assert len(read(tmp_path / "run" / "kept.jsonl")) == 4
        stub.up()
        Loop(tmp_path / "run", settings_for("openai"), fn).run(8)
    assert [r["step"] for r in read(tmp_path / "run" / "kept.jsonl")] == list(range(8))


# -- outputs ------------------------------------------------------------------------------
def test_summary_and_plot(tmp_path):
    loop = run_loop(tmp_path / "run", "baseline", 9)
    s = summarize(loop.trajectory, loop.tasks, loop.settings.params)
    assert s["answered"] == 9 and s["kept"] + s["solved"] == 9
    assert sum(row["n"] for row in s["by_tier"].values()) == 9
    assert set(s["by_task"]) == set(TASKS) and all("weights" in row and "next_counts" in row for row in s["by_task"].values())
    png = plot(loop.trajectory, tmp_path / "run" / "trajectory.png", 5, loop.tasks)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_cli_loop_writes_everything_and_prints_the_summary(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["loop", "--responder", "oracle", "--budget", "6", "--out", "run", "--family", FAMILY, "--size", "small"]
    result = runner.invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "closed loop: 6 answered, 0 kept" in text and "per kept instance" in text and "solve rate by tier" in text
    for name in ("loop.json", "trajectory.jsonl", "solved.jsonl", "kept.jsonl", "trajectory.png", "summary.json"):
        assert (tmp_path / "run" / name).exists(), name
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["solved"] == 6 and summary["cost"]["responder_calls"] == 6
    result = runner.invoke(cli.app, [*args[:-4], "--family", FAMILY, "--size", "small", "--summary-json"])
    assert result.exit_code == 0 and json.loads(result.output)["answered"] == 6  # already done: summary only
    bad = runner.invoke(cli.app, [*args, "--eta", "0"])
    assert bad.exit_code == 1 and "eta" in bad.output
    bad = runner.invoke(cli.app, ["loop", "--responder", "openai", "--budget", "1", "--out", "x"])
    assert bad.exit_code == 1 and "--responder openai needs --model" in " ".join(bad.output.split())


def test_worker_processes_give_the_same_run(tmp_path):
    one = run_loop(tmp_path / "one", "baseline", 6)
    loop = Loop(tmp_path / "two", settings_for("baseline"), get_responder("baseline"), workers=2)
    loop.run(6)
    assert without_timing(loop.trajectory) == without_timing(one.trajectory)


def test_a_responder_that_raises_is_recorded_and_the_loop_goes_on(tmp_path):
    def broken(inst: Instance) -> str:
        raise RuntimeError("responder bug")

    run_loop(tmp_path / "run", "baseline", 3, fn=broken)
    kept = read(tmp_path / "run" / "kept.jsonl")
    assert len(kept) == 3
    assert all(r["response"]["error"] == "responder error: RuntimeError: responder bug" and r["grade"]["all_pass"] == 0 for r in kept)


def test_the_loop_with_the_llm_renderer_counts_the_rewriter_cost(tmp_path):
    from pbsolve.llm.client import LLMConfig
    from tests.test_rewriter import narrative_of, paraphrase

    with OpenAIStub(lambda req: paraphrase(narrative_of(req))) as stub:
        rewriter = LLMConfig(model="stub-model", base_url=stub.url)
        loop = Loop(tmp_path / "run", settings_for("oracle", renderer="llm"), oracle, rewriter=rewriter)
        loop.run(3)
    solved = read(tmp_path / "run" / "solved.jsonl")
    assert len(solved) == 3 and all(r["instance"]["provenance"]["renderer"] == "llm" for r in solved)
    s = summarize(loop.trajectory, loop.tasks, loop.settings.params)
    assert s["cost"]["rewrite_calls"] == 3 and s["cost"]["rewrite_tokens"] > 0
