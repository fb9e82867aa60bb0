"""In-process reward adapters, called with the exact argument shapes each trainer uses.

verl:     NaiveRewardManager calls ``compute_score(data_source=..., solution_str=...,
          ground_truth=..., extra_info=...)`` (plus ``reward_kwargs`` from the config);
          BatchRewardManager calls ``compute_score(data_sources=..., solution_strs=...,
          ground_truths=..., extra_infos=...)``; both load the function from a file path.
TRL:      GRPOTrainer calls ``reward_func(prompts=..., completions=..., completion_ids=...,
          trainer_state=..., log_extra=..., log_metric=..., **columns)`` where every dataset
          column except ``prompt`` arrives as a list with one entry per completion.
OpenRLHF: loads ``reward_func`` from the file given to ``--remote_rm_url`` with
          ``spec_from_file_location("reward_func", path)`` and calls
          ``reward_func(queries, prompts, labels)``; a query is the chat-templated prompt plus
          the response, decoded with special tokens (left padding, EOS) kept.
"""

from __future__ import annotations

import ast
import copy
import functools
import importlib.util
import json
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import pbsolve.rewards as public_rewards
import pbsolve.serve.rewards as rewards
from pbsolve.grading import REWARD_MODES, grade
from pbsolve.llm.responders import baseline, oracle
from pbsolve.serve.rewards import (
    METRIC_KEYS,
    DeadlineExceeded,
    InstanceError,
    InstanceResolver,
    UnknownInstance,
    compute_score,
    compute_score_batch,
    grade_pairs,
    metrics,
    response_from_query,
    trl_reward,
)
from pbsolve.schema import Instance
from pbsolve.serve.store import StoreWriter

ROOT = Path(__file__).resolve().parents[1]


def _instances(feasible: dict, infeasible: dict) -> list[Instance]:
    return [*feasible.values(), *infeasible.values()]


@pytest.fixture(scope="module")
def instances(feasible_instances, infeasible_instances) -> list[Instance]:
    return _instances(feasible_instances, infeasible_instances)


def answers(inst: Instance) -> dict[str, object]:
    """Responses of every kind a policy produces, malformed ones included."""
    ref = json.dumps(inst.reference)
    return {
        "oracle": oracle(inst),
        "baseline": baseline(inst),
        "think_then_answer": "<think>Let me try {\"feasible\": true}... </think>\n```json\n" + ref + "\n```",
        "answer_only_in_thinking": "<think>```json\n" + ref + "\n```</think> I am not sure.",
        "empty": "",
        "garbage": "no idea {really} }{",
        "truncated": ref[: len(ref) // 2],
        "nan": '{"feasible": NaN}',
        "not_text": None,
    }


# -- the fixed numeric keys ----------------------------------------------------------------------
def test_compute_score_returns_the_same_numeric_keys_for_every_answer(instances):
    for inst in instances:
        gt = inst.model_dump_json()
        for kind, text in answers(inst).items():
            out = compute_score(data_source=f"pbsolve/{inst.task}", solution_str=text, ground_truth=gt, extra_info={"index": 0})
            assert tuple(out) == METRIC_KEYS, kind
            assert all(type(v) is float for v in out.values()), (kind, out)
            g = grade(inst, text)
            assert out["score"] == g.reward
            assert out["all_pass"] == g.all_pass and out["avg_pass"] == g.avg_pass
            assert out["parse_ok"] == (1.0 if g.parse_error is None else 0.0)
            assert out["items_passed"] == sum(it.passed for it in g.items)
            assert out["items_total"] == len(inst.checklist)


def test_oracle_scores_one_and_malformed_answers_score_zero_with_parse_ok_zero(instances):
    for inst in instances:
        gt = inst.model_dump_json()
        a = answers(inst)
        assert compute_score("pbsolve", a["oracle"], gt)["score"] == 1.0
        for kind in ("empty", "garbage", "nan", "not_text"):
            out = compute_score("pbsolve", a[kind], gt)
            assert out["score"] == 0.0 and out["parse_ok"] == 0.0 and out["items_passed"] == 0.0, kind
        # a truncated answer may still hold a complete inner object (the parser takes it): wrong, not unparsable
        assert compute_score("pbsolve", a["truncated"], gt)["score"] == 0.0


def test_only_the_text_after_the_last_think_tag_is_graded(any_instance):
    gt = any_instance.model_dump_json()
    a = answers(any_instance)
    assert compute_score("pbsolve", a["think_then_answer"], gt)["score"] == 1.0
    hidden = compute_score("pbsolve", a["answer_only_in_thinking"], gt)
    assert hidden["score"] == 0.0 and hidden["parse_ok"] == 0.0


@pytest.mark.parametrize("mode", REWARD_MODES)
def test_reward_mode_comes_from_reward_kwargs_like_verl_passes_them(instances, mode):
    # verl: compute_score = partial(fn, **config.custom_reward_function.reward_kwargs)
    fn = functools.partial(compute_score, mode=mode)
    for inst in instances:
        text = baseline(inst)
        out = fn(data_source="pbsolve", solution_str=text, ground_truth=inst.model_dump_json(), extra_info=None)
        assert out["score"] == grade(inst, text, mode).reward


def test_mode_from_the_environment_and_unknown_modes(monkeypatch, any_instance):
    gt = any_instance.model_dump_json()
    text = baseline(any_instance)
    monkeypatch.setenv(rewards.MODE_ENV, "avg_pass")
    assert rewards.check_mode() == "avg_pass"
    assert compute_score("pbsolve", text, gt)["score"] == grade(any_instance, text, "avg_pass").reward
    assert rewards.check_mode("feasible") == "feasible"  # an explicit mode wins
    with pytest.raises(ValueError, match="unknown reward mode"):
        compute_score("pbsolve", text, gt, mode="partial")
    monkeypatch.setenv(rewards.MODE_ENV, "bogus")
    with pytest.raises(ValueError, match="bogus"):
        rewards.check_mode()


def test_the_mode_changes_the_score_but_not_the_other_keys(any_instance):
    gt = any_instance.model_dump_json()
    text = baseline(any_instance)
    outs = {m: compute_score("pbsolve", text, gt, mode=m) for m in REWARD_MODES}
    assert outs["avg_pass"]["score"] == outs["avg_pass"]["avg_pass"]
    assert outs["all_pass"]["score"] == outs["all_pass"]["all_pass"]
    rest = [{k: v for k, v in o.items() if k != "score"} for o in outs.values()]
    assert rest[0] == rest[1] == rest[2]


# -- a bad ground truth is an error, never a reward of 0 ------------------------------------------
@pytest.mark.parametrize(
    "bad, needle",
    [
        ("{not json", "not a pbsolve instance"),
        ("{}", "not a pbsolve instance"),
        ('{"id": "x"}', "not a pbsolve instance"),
        (42, "int"),
        ("", "empty"),
        ("meeting_planning-0-0-abc", "no instance store"),
        (b"\xff\xfe", "UTF-8"),
    ],
)
def test_a_ground_truth_that_is_not_an_instance_raises(bad, needle):
    with pytest.raises(InstanceError, match=needle):
        compute_score("pbsolve", "```json\n{}\n```", bad)
    with pytest.raises(InstanceError):
        compute_score_batch(["pbsolve"], ["x"], [bad])


def test_ground_truth_may_be_json_text_bytes_a_dict_or_an_instance(any_instance):
    text = oracle(any_instance)
    forms = [
        any_instance.model_dump_json(),
        "  " + any_instance.model_dump_json() + "\n",
        any_instance.model_dump_json().encode(),
        json.loads(any_instance.model_dump_json()),
        any_instance,
    ]
    assert all(compute_score("pbsolve", text, gt)["score"] == 1.0 for gt in forms)


def test_a_dict_ground_truth_keeps_its_key_order_so_reasons_read_as_in_process(any_instance):
    """The optimality reason quotes the certified figures in their order: a ground truth
    given as a dict must grade to the same reasons as the instance itself."""
    data = json.loads(any_instance.model_dump_json())
    data["certificate"]["objective"] = {"zz_first": 0, **data["certificate"]["objective"]}  # not sorted
    resolved = rewards.InstanceResolver().resolve(data)
    assert list(resolved.certificate.objective) == list(data["certificate"]["objective"])


def test_ids_resolve_through_a_store_and_unknown_ids_raise(tmp_path, instances, monkeypatch):
    path = tmp_path / "s.pbstore"
    with StoreWriter(path) as w:
        for inst in instances:
            w.add(inst.id, inst.task, inst.family, inst.model_dump_json())
    inst = instances[0]
    assert compute_score("pbsolve", oracle(inst), inst.id, store=path)["score"] == 1.0
    with pytest.raises(UnknownInstance, match="unknown instance id 'nope'"):
        compute_score("pbsolve", oracle(inst), "nope", store=path)
    # the module-level resolver reads $PBSOLVE_STORE (what file-mode trainers use)
    monkeypatch.setenv(rewards.STORE_ENV, str(path))
    monkeypatch.setattr(rewards, "_default", None)
    assert compute_score("pbsolve", oracle(inst), inst.id)["score"] == 1.0


# -- parsing each instance once -------------------------------------------------------------------
def test_equal_ground_truths_share_one_parsed_instance(any_instance):
    r = InstanceResolver()
    a = any_instance.model_dump_json()
    b = "".join(list(a))  # equal text, another object (as each Parquet row gives)
    assert a == b and a is not b
    first, second = r.resolve_many([a, b])
    assert first is second
    assert r.resolve(b) is first  # and across calls, through the LRU
    assert r.resolve(json.loads(a)) is r.resolve(json.loads(b))


def test_the_resolver_cache_is_bounded(instances):
    r = InstanceResolver(cache_size=2)
    texts = [i.model_dump_json() for i in instances[:4]]
    for t in texts:
        r.resolve(t)
    assert len(r._cache) == 2


# -- verl batch form ------------------------------------------------------------------------------
def test_compute_score_batch_matches_the_single_form(instances):
    # 128 prompts x 8 rollouts shape, scaled down: every instance, every answer kind, repeated
    data_sources, sols, gts, extras = [], [], [], []
    for idx, inst in enumerate(instances):
        gt = inst.model_dump_json()
        for text in answers(inst).values():
            data_sources.append(f"pbsolve/{inst.task}")
            sols.append(text)
            gts.append(gt)
            extras.append({"split": "train", "index": idx})
    out = compute_score_batch(data_sources=data_sources, solution_strs=sols, ground_truths=gts, extra_infos=extras)
    assert isinstance(out, list) and len(out) == len(sols)
    assert out == [compute_score(d, s, g, e) for d, s, g, e in zip(data_sources, sols, gts, extras)]
    with pytest.raises(ValueError, match="ground truths"):
        compute_score_batch(data_sources=["a"], solution_strs=["x", "y"], ground_truths=[gts[0]])


def test_verl_loads_compute_score_from_the_file_path(any_instance):
    # verl's custom_reward_function.path / .name: spec_from_file_location + getattr
    # the file the README names: `python -c "import pbsolve.rewards as r; print(r.__file__)"`
    assert Path(public_rewards.__file__).relative_to(ROOT).as_posix() == "pbsolve/rewards.py"
    spec = importlib.util.spec_from_file_location("custom_module", public_rewards.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    gt = any_instance.model_dump_json()
    assert module.compute_score("pbsolve", oracle(any_instance), gt, None)["score"] == 1.0
    assert module.compute_score_batch(["pbsolve"], [oracle(any_instance)], [gt], [None])[0]["score"] == 1.0
    # the same objects as the installed module: one cache, one set of exception classes
    assert module.compute_score is compute_score and module.InstanceError is InstanceError


# -- worker threads, no signals -------------------------------------------------------------------
def test_rewards_are_computed_from_worker_threads_without_signals(instances):
    before = signal.getsignal(signal.SIGALRM)
    jobs = [(inst.model_dump_json(), text) for inst in instances for text in answers(inst).values()] * 3
    expected = [compute_score("pbsolve", t, g) for g, t in jobs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda job: compute_score("pbsolve", job[1], job[0]), jobs))
    assert got == expected
    assert signal.getsignal(signal.SIGALRM) == before
    assert threading.active_count() >= 1


def test_serving_modules_never_use_signals():
    for name in ("rewards.py", "serve/rewards.py", "serve/server.py", "serve/store.py", "serve/export.py", "cli/serve.py"):
        tree = ast.parse((ROOT / "pbsolve" / name).read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert "signal" not in imported, name


# -- deadline and length limits used by the server ------------------------------------------------
def test_grade_pairs_checks_its_deadline_between_grades(any_instance):
    import time

    pairs = [(any_instance, oracle(any_instance))] * 5
    with pytest.raises(DeadlineExceeded) as info:
        grade_pairs(pairs, "all_pass", deadline=time.monotonic() - 1)
    assert (info.value.done, info.value.total) == (0, 5)
    assert [g.reward for g in grade_pairs(pairs, "all_pass", deadline=time.monotonic() + 60)] == [1.0] * 5


def test_an_answer_past_the_length_limit_fails_every_item_but_long_thinking_is_fine(any_instance):
    right = oracle(any_instance)
    long_answer = "x" * 5000 + right
    g = grade_pairs([(any_instance, long_answer)], "avg_pass", max_response_chars=1000)[0]
    assert g.reward == 0.0 and "limit 1,000" in g.parse_error
    assert tuple(metrics(g)) == METRIC_KEYS and metrics(g)["parse_ok"] == 0.0
    thinking = "<think>" + "y" * 5000 + "</think>" + right
    assert grade_pairs([(any_instance, thinking)], "all_pass", max_response_chars=1000)[0].reward == 1.0


# -- TRL ------------------------------------------------------------------------------------------
def _trl_inputs(instances: list[Instance], conversational: bool, generations: int = 4) -> list[dict]:
    """Rows as `pbsolve export --format jsonl` writes them, repeated per generation as
    GRPOTrainer repeats its inputs."""
    rows = []
    for i, inst in enumerate(instances):
        prompt = [{"role": "user", "content": inst.prompt}] if conversational else inst.prompt
        row = {"id": inst.id, "prompt": prompt, "instance": inst.model_dump_json(), "task": inst.task, "index": i}
        rows.extend(copy.deepcopy(row) for _ in range(generations))
    return rows


def _trl_call(reward_func, inputs: list[dict], completions: list, log_metric=None):
    # grpo_trainer._calculate_rewards, verbatim in shape
    prompts = [x["prompt"] for x in inputs]
    keys = [key for key in inputs[0] if key not in ["prompt", "completion", "completion_ids"]]
    reward_kwargs = {key: [example[key] for example in inputs] for key in keys}
    reward_kwargs["trainer_state"] = object()
    reward_kwargs["log_extra"] = lambda column, values: None
    reward_kwargs["log_metric"] = log_metric or (lambda name, value: None)
    completion_ids = [[1, 2, 3] for _ in completions]
    return reward_func(prompts=prompts, completions=completions, completion_ids=completion_ids, **reward_kwargs)


def _rollouts(inst: Instance) -> list[str]:
    return [oracle(inst), baseline(inst), "", "<think>hmm</think>" + oracle(inst)]


@pytest.mark.parametrize("conversational", [False, True], ids=["standard", "conversational"])
def test_trl_reward_grades_standard_and_conversational_completions(instances, conversational):
    inputs = _trl_inputs(instances, conversational)
    texts = [t for inst in instances for t in _rollouts(inst)]
    completions = [[{"role": "assistant", "content": t}] for t in texts] if conversational else texts
    logged: dict[str, float] = {}
    fn = trl_reward()
    out = _trl_call(fn, inputs, completions, log_metric=lambda name, value: logged.__setitem__(name, value))
    expected = [grade(inst, t).reward for inst in instances for t in _rollouts(inst)]
    assert out == expected and all(type(x) is float for x in out)
    assert set(logged) == {"pbsolve/all_pass", "pbsolve/avg_pass", "pbsolve/parse_ok", "pbsolve/grader_error"}
    assert logged["pbsolve/parse_ok"] == pytest.approx(3 / 4)
    assert fn.__name__ == "pbsolve_all_pass"


def test_trl_reward_takes_the_last_assistant_message_and_text_parts(any_instance):
    inputs = _trl_inputs([any_instance], conversational=True, generations=3)
    right = oracle(any_instance)
    completions = [
        [{"role": "assistant", "content": "draft: nothing"}, {"role": "tool", "content": "ok"}, {"role": "assistant", "content": right}],
        [{"role": "assistant", "content": [{"type": "text", "text": right[:10]}, {"type": "text", "text": right[10:]}]}],
        [{"role": "assistant", "content": right}, {"role": "assistant", "content": "never mind"}],
    ]
    assert _trl_call(trl_reward(), inputs, completions) == [1.0, 1.0, 0.0]


@pytest.mark.parametrize("mode", REWARD_MODES)
def test_trl_reward_mode_and_name(instances, mode):
    inputs = _trl_inputs(instances, conversational=False, generations=1)
    texts = [baseline(inst) for inst in instances]
    fn = trl_reward(mode=mode, name=f"planning_{mode}")
    assert fn.__name__ == f"planning_{mode}"
    assert _trl_call(fn, inputs, texts) == [grade(inst, t, mode).reward for inst, t in zip(instances, texts)]


def test_trl_reward_reads_ids_through_a_store_and_names_missing_columns(tmp_path, instances):
    path = tmp_path / "s.pbstore"
    with StoreWriter(path) as w:
        for inst in instances:
            w.add(inst.id, inst.task, inst.family, inst.model_dump_json())
    inputs = [{"prompt": inst.prompt, "id": inst.id} for inst in instances]
    texts = [oracle(inst) for inst in instances]
    assert _trl_call(trl_reward(column="id", store=str(path)), inputs, texts) == [1.0] * len(instances)
    with pytest.raises(KeyError, match="no dataset column 'instance'.*columns received: completion_ids, id"):
        _trl_call(trl_reward(), inputs, texts)
    with pytest.raises(ValueError, match="unknown reward mode"):
        trl_reward(mode="strict")


# -- OpenRLHF -------------------------------------------------------------------------------------
def _load_openrlhf_reward_func():
    # openrlhf: spec_from_file_location("reward_func", args.remote_rm_url); module.reward_func
    spec = importlib.util.spec_from_file_location("reward_func", public_rewards.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reward_func


def _template(prompt: str) -> str:
    return f"<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"


def _openrlhf_batch(instances: list[Instance], labels_of) -> tuple[list[str], list[str], list, list[float]]:
    queries, prompts, labels, expected = [], [], [], []
    for inst in instances:
        for text in _rollouts(inst):
            p = _template(inst.prompt)
            queries.append("<|endoftext|>" * 3 + p + text + "<|im_end|>")  # left padding, EOS kept
            prompts.append(p)
            labels.append(labels_of(inst))
            expected.append(grade(inst, text).reward)
    return queries, prompts, labels, expected


def test_openrlhf_file_mode_reward_func(instances):
    reward_func = _load_openrlhf_reward_func()
    queries, prompts, labels, expected = _openrlhf_batch(instances, lambda i: i.model_dump_json())
    out = reward_func(queries, prompts, labels)
    assert set(out) == {"rewards", "scores", "extra_logs"}
    as_list = out["rewards"].tolist() if hasattr(out["rewards"], "tolist") else out["rewards"]
    assert as_list == expected
    assert set(out["extra_logs"]) == {"all_pass", "avg_pass", "parse_ok", "items_passed", "items_total", "grader_error"}
    assert all(len(v) == len(queries) for v in out["extra_logs"].values())


def test_openrlhf_file_mode_with_ids_mode_from_environment(tmp_path, monkeypatch, instances):
    path = tmp_path / "s.pbstore"
    with StoreWriter(path) as w:
        for inst in instances:
            w.add(inst.id, inst.task, inst.family, inst.model_dump_json())
    monkeypatch.setenv(rewards.STORE_ENV, str(path))
    monkeypatch.setenv(rewards.MODE_ENV, "avg_pass")
    monkeypatch.setattr(rewards, "_default", None)  # $PBSOLVE_STORE is read on first use
    reward_func = _load_openrlhf_reward_func()
    queries, prompts, labels, _ = _openrlhf_batch(instances, lambda i: i.id)
    out = reward_func(queries=queries, prompts=prompts, labels=labels)
    texts = [t for inst in instances for t in _rollouts(inst)]
    insts = [inst for inst in instances for _ in _rollouts(inst)]
    got = out["rewards"].tolist() if hasattr(out["rewards"], "tolist") else out["rewards"]
    assert got == [grade(i, t, "avg_pass").reward for i, t in zip(insts, texts)]
    with pytest.raises(UnknownInstance):
        reward_func(queries[:1], prompts[:1], ["missing-id"])
    with pytest.raises(ValueError, match="labels"):
        reward_func(queries, prompts, labels[:-1])


def test_the_prompt_is_cut_off_before_grading(any_instance):
    # The prompt's own answer-format section holds a valid JSON block; grading the whole
    # query would read it as the answer. An empty response must fail to parse.
    query = _template(any_instance.prompt)
    assert grade(any_instance, query).parse_error is None  # what naive grading would do
    out = rewards.openrlhf_rewards([query], [query], [any_instance.model_dump_json()], "all_pass")
    assert out["extra_logs"]["parse_ok"] == [0.0]
    # when the templated prompt does not occur verbatim, the instance's prompt tail is used
    right = oracle(any_instance)
    mangled = "SYSTEM " + any_instance.prompt.replace("\n", " ", 1) + "\nASSISTANT: " + right
    assert response_from_query(mangled, "a prompt that is not there", any_instance).endswith(right)
    assert response_from_query(mangled, "a prompt that is not there", any_instance).startswith("\nASSISTANT")
    assert response_from_query("just text", None, None) == "just text"


def test_equal_answers_in_a_batch_are_graded_once_and_keep_their_own_ids(any_instance, monkeypatch):
    calls = []
    real = rewards.grade
    monkeypatch.setattr(rewards, "grade", lambda *a, **k: calls.append(1) or real(*a, **k))
    right, wrong = oracle(any_instance), baseline(any_instance)
    pairs = [(any_instance, right), (any_instance, wrong), (any_instance, right), (any_instance, right)]
    grades = grade_pairs(pairs, "avg_pass", response_ids=["a", "b", "c", "d"])
    assert len(calls) == 2
    assert [g.response_id for g in grades] == ["a", "b", "c", "d"]
    assert [g.reward for g in grades] == [grade(any_instance, t, "avg_pass").reward for _, t in pairs]
    assert grades[2] is not grades[0] and grades[2].items == grades[0].items


@pytest.mark.parametrize(
    ("query", "prompt", "cut"),
    [
        ("PROMPT answer", "PROMPT", " answer"),  # the usual query: the prompt first
        ("<pad><pad>PROMPT answer", "PROMPT", " answer"),  # left-padded
        ("PROMPT PROMPT answer", "PROMPT", " PROMPT answer"),  # the first occurrence
        ("answer only", "PROMPT", None),
        ("PROMPT answer", "", None),
        ("PROMPT answer", None, None),
    ],
)
def test_the_response_is_the_text_after_the_prompts_first_occurrence(query, prompt, cut):
    assert rewards.after_prompt(query, prompt) == cut
