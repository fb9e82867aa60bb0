"""Batches graded on worker processes (``create_app(grade_processes=N)``, pbsolve.serve.pool)
answer exactly what a batch graded in the server process answers: the same rewards and
views, the same errors for unknown ids and invalid stored instances, the deadline; and a
worker that dies costs one request (a grader error), never a wrong reward."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from pbsolve.grading import grade
from pbsolve.jsonl import dumps
from pbsolve.llm.responders import baseline, oracle
from pbsolve.schema import Instance
from pbsolve.serve.pool import GradingPool, PoolFailure, PoolItem, split_batch
from pbsolve.serve.rewards import compute_score
from pbsolve.serve.server import ServerThread, create_app
from pbsolve.serve.store import StoreWriter


def rollouts(inst: Instance) -> list[str]:
    right = oracle(inst)
    return [right, baseline(inst), "", "<think>x</think>" + right, "{}", right[:40], "garbage }{", right]


@pytest.fixture(scope="module")
def instances(feasible_instances, infeasible_instances) -> list[Instance]:
    found = [*feasible_instances.values(), *infeasible_instances.values()]
    return [b.model_copy(update={"id": f"{b.id}~{k}"}) for k, b in enumerate(found * 2)]


@pytest.fixture(scope="module")
def broken(instances) -> Instance:
    """A stored instance that is not a valid ground truth (a checklist without items)."""
    return instances[0].model_copy(update={"id": "broken-instance", "checklist": []})


@pytest.fixture(scope="module")
def store_path(tmp_path_factory, instances, broken) -> Path:
    path = tmp_path_factory.mktemp("pool") / "s.pbstore"
    with StoreWriter(path) as w:
        for inst in [*instances, broken]:
            w.add(inst.id, inst.task, inst.family, dumps(inst))
    return path


@pytest.fixture(scope="module")
def pooled_app(store_path):
    app = create_app(store_path, grade_processes=2, time_limit=60, cache_size=32)
    app.state.service.pool.pids()  # both workers up before the first test
    with ServerThread(app) as url:
        yield url, app.state.service.pool


@pytest.fixture(scope="module")
def pooled(pooled_app) -> str:
    return pooled_app[0]


@pytest.fixture(scope="module")
def pool(pooled_app) -> GradingPool:
    return pooled_app[1]


@pytest.fixture(scope="module")
def local(store_path) -> str:
    with ServerThread(create_app(store_path, grade_processes=0, time_limit=60, cache_size=32)) as url:
        yield url


def post(url: str, path: str, body: dict) -> httpx.Response:
    return httpx.post(url + path, json=body, timeout=120)


def test_health_reports_the_grading_processes(pooled, local):
    assert httpx.get(pooled + "/health").json()["grade_processes"] == 2
    assert httpx.get(local + "/health").json()["grade_processes"] == 0


def test_a_split_keeps_every_answer_to_one_instance_in_one_part():
    ids = ["a", "b", "a", "c", "b", "a", "d"]
    parts, owner = split_batch(ids, 2, {})
    assert sorted(k for part in parts for k in part) == list(range(len(ids)))
    for w, part in enumerate(parts):
        assert part == sorted(part) and all(owner[ids[k]] == w for k in part)


def test_a_split_of_new_instances_is_balanced_where_a_hash_is_not():
    """128 instances of 8 answers each: the two parts differ by at most one instance."""
    ids = [f"inst-{i}" for i in range(128) for _ in range(8)]
    parts, _ = split_batch(ids, 2, {})
    assert sorted(len(p) for p in parts) == [512, 512]
    parts, _ = split_batch(ids[:8 * 127], 2, {})
    assert sorted(len(p) for p in parts) == [504, 512]


def test_a_split_places_the_instances_with_most_answers_first():
    ids = ["small"] * 1 + ["big"] * 20 + ["mid"] * 10 + ["mid2"] * 9
    _, owner = split_batch(ids, 2, {})
    # costs 8 + answers: big 28 -> 0, mid 18 -> 1, mid2 17 -> 1 (18 < 28), small 9 -> 0: 37 against 35
    # (in batch order: small 9 -> 0, big 28 -> 1, mid 18 -> 0, mid2 17 -> 0: 44 against 28)
    assert owner == {"big": 0, "mid": 1, "mid2": 1, "small": 0}


def test_a_split_sends_an_instance_back_to_its_home_worker():
    ids = ["a", "b", "c", "d"]
    _, owner = split_batch(ids, 2, {"a": 1, "b": 1, "c": 1})
    assert owner == {"a": 1, "b": 1, "c": 1, "d": 0}


def test_a_home_beyond_the_workers_is_ignored():
    _, owner = split_batch(["a"], 2, {"a": 5})
    assert owner == {"a": 0}


def test_the_same_batch_and_homes_give_the_same_split():
    ids = [f"i{k % 37}" for k in range(300)]
    home = {"i3": 1, "i4": 0}
    assert split_batch(ids, 3, home) == split_batch(list(ids), 3, dict(home))


def test_the_pool_remembers_where_an_instance_was_graded(pool, instances):
    few = instances[:8]  # fewer than the workers' caches hold (2 x 16)
    items = [PoolItem(i.id, oracle(i)) for i in few]
    pool.grade(items, "all_pass", deadline=time.monotonic() + 60)
    first = {i.id: pool._home[i.id] for i in few}
    assert set(first.values()) == {0, 1}
    pool.grade(list(reversed(items)), "all_pass", deadline=time.monotonic() + 60)
    assert {i.id: pool._home[i.id] for i in few} == first


def test_the_pool_remembers_no_more_instances_than_its_workers_cache(pool, instances):
    items = [PoolItem(i.id, oracle(i)) for i in instances]
    assert len({i.id for i in instances}) > 32
    pool.grade(items, "all_pass", deadline=time.monotonic() + 60)
    assert len(pool._home) == 32 and list(pool._home)[-1] == instances[-1].id


def test_each_worker_grades_the_part_made_for_it(pool):
    """Part i goes to worker i's own executor: always the same process, a different one per worker."""
    from pbsolve.serve.pool import _worker_pid

    seen = [[ex.submit(_worker_pid).result(timeout=60) for _ in range(3)] for ex in pool._executors]
    assert all(len(set(pids)) == 1 for pids in seen)
    assert len({pids[0] for pids in seen}) == 2 == pool.processes


def test_a_pooled_batch_gives_the_same_grades_as_one_process(pooled, local, instances):
    requests = [
        {"id": inst.id, "response": text, "response_id": f"{inst.id}#{k}"}
        for inst in instances for k, text in enumerate(rollouts(inst))
    ]  # fmt: skip
    for mode, details in (("all_pass", True), ("avg_pass", False)):
        body = {"mode": mode, "details": details, "requests": requests}
        a, b = post(pooled, "/grade/batch", body), post(local, "/grade/batch", body)
        assert a.status_code == b.status_code == 200, a.text[:300]
        assert a.json()["grades"] == b.json()["grades"]
        assert a.json()["rewards"] == [grade(i, t, mode).reward for i in instances for t in rollouts(i)]


def test_a_pooled_openrlhf_batch_gives_the_same_rewards_and_logs(pooled, local, instances):
    queries, prompts, labels, expected = [], [], [], []
    for inst in instances:
        for text in rollouts(inst)[:4]:
            p = f"<|im_start|>user\n{inst.prompt}<|im_end|>\n<|im_start|>assistant\n"
            queries.append("<|endoftext|>" + p + text + "<|im_end|>")
            prompts.append(p)
            labels.append(inst.id)
            expected.append(compute_score("pbsolve", text, inst, mode="avg_pass")["score"])
    with_prompts = {"query": queries, "prompts": prompts, "labels": labels}
    a, b = post(pooled, "/openrlhf?mode=avg_pass", with_prompts), post(local, "/openrlhf?mode=avg_pass", with_prompts)
    assert a.status_code == 200 and a.json() == b.json()
    assert a.json()["rewards"] == expected
    # without prompts the response is cut at the end of the instance's own prompt, in the worker
    bare = {"query": queries, "labels": labels}
    a, b = post(pooled, "/openrlhf?mode=avg_pass", bare), post(local, "/openrlhf?mode=avg_pass", bare)
    assert a.status_code == 200 and a.json() == b.json()


def test_unknown_ids_are_the_same_404_listing_every_one_in_request_order(pooled, local, instances):
    body = {"requests": [
        {"id": instances[0].id, "response": "x"}, {"id": "nope-b", "response": "x"},
        {"id": instances[1].id, "response": "x"}, {"id": "nope-a", "response": "x"},
    ]}  # fmt: skip
    a, b = post(pooled, "/grade/batch", body), post(local, "/grade/batch", body)
    assert a.status_code == b.status_code == 404
    assert a.json() == b.json()
    assert a.json()["error"].index("nope-b") < a.json()["error"].index("nope-a")


def test_a_stored_instance_that_is_no_ground_truth_is_the_same_500(pooled, local, instances, broken):
    body = {"requests": [{"id": instances[0].id, "response": "x"}, {"id": broken.id, "response": "x"}]}
    a, b = post(pooled, "/grade/batch", body), post(local, "/grade/batch", body)
    assert a.status_code == b.status_code == 500
    assert a.json() == b.json()
    assert a.json()["error"].startswith("grader error: stored instance(s) are not valid ground truths: requests[1]")


def test_a_deadline_passed_in_the_workers_is_reported_with_what_was_done(pool, instances):
    items = [PoolItem(i.id, oracle(i)) for i in instances]
    with pytest.raises(PoolFailure) as info:
        pool.grade(items, "all_pass", deadline=time.monotonic() - 1)
    assert info.value.kind == "deadline" and info.value.done == 0 and info.value.total == len(items)
    views = pool.grade(items, "all_pass", deadline=time.monotonic() + 60)
    assert [v["reward"] for v in views] == [1.0] * len(items)


def test_a_dead_worker_costs_one_request_a_grader_error_and_the_pool_restarts(store_path, instances):
    app = create_app(store_path, grade_processes=2, time_limit=60)
    pool = app.state.service.pool
    body = {"requests": [{"id": i.id, "response": oracle(i)} for i in instances]}
    with ServerThread(app) as url:
        for pid in pool.pids():
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        r = post(url, "/grade/batch", body)
        assert r.status_code == 500 and r.json()["error"].startswith("grader error: a grading worker process died")
        r = post(url, "/grade/batch", body)
        assert r.status_code == 200 and r.json()["rewards"] == [1.0] * len(instances)


def test_workers_ignore_ctrl_c_so_only_the_server_decides_to_stop(pool, instances):
    pids = pool.pids()
    assert len(pids) == 2
    for pid in pids:
        os.kill(pid, signal.SIGINT)
    time.sleep(0.2)
    items = [PoolItem(i.id, oracle(i)) for i in instances]
    assert [v["reward"] for v in pool.grade(items, "all_pass", time.monotonic() + 60)] == [1.0] * len(items)
    assert pool.pids() == pids


def test_a_batch_with_inline_instances_is_graded_in_the_server_process(pooled, instances):
    inst = instances[0]
    body = {
        "requests": [{"instance": json.loads(dumps(inst)), "response": oracle(inst)}, {"id": inst.id, "response": ""}]
    }
    r = post(pooled, "/grade/batch", body)
    assert r.status_code == 200 and r.json()["rewards"] == [1.0, 0.0]
