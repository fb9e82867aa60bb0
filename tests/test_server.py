"""The reward server over real HTTP, and the instance store behind it.

A uvicorn server runs in a background thread on 127.0.0.1 (a free port) and is called
with httpx, the way trainers call it: OpenRLHF posts ``{"query", "prompts", "labels"}``
with ``requests.post(url, json=..., timeout=180)``; batch clients post 128 prompts x 8
rollouts. Every bad request must get a 4xx with a message, never a 500; an unknown
instance id must be an error, never a reward.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

import pbsolve.cli.main as cli
from pbsolve.grading import REWARD_MODES, grade
from pbsolve.jsonl import dumps
from pbsolve.llm.responders import baseline, oracle
from pbsolve.serve.rewards import compute_score
from pbsolve.schema import Instance
from pbsolve.serve.server import ServerThread, create_app
from pbsolve.serve.store import InstanceStore, StoreError, StoreWriter, build_store, ensure_store

TOKEN = "t0ken-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
runner = CliRunner()


def clones(instances: list[Instance], n: int) -> list[Instance]:
    """n distinct ids: the certified instances, then copies of them under new ids."""
    return [
        base if k < len(instances) else base.model_copy(update={"id": f"{base.id}~{k}"})
        for k, base in ((k, instances[k % len(instances)]) for k in range(n))
    ]


def rollouts(inst: Instance) -> list[str]:
    right = oracle(inst)
    return [
        right,
        baseline(inst),
        "",
        "<think>" + "x" * 200 + "</think>" + right,
        "{}",
        right[:40],
        "garbage }{",
        right,
    ]


@pytest.fixture(scope="module")
def instances(feasible_instances, infeasible_instances) -> list[Instance]:
    return clones([*feasible_instances.values(), *infeasible_instances.values()], 128)


@pytest.fixture(scope="module")
def source(tmp_path_factory, instances) -> Path:
    path = tmp_path_factory.mktemp("serve") / "instances.jsonl"
    path.write_text("".join(dumps(i) + "\n" for i in instances), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def store(source) -> InstanceStore:
    path, report = ensure_store([source])
    assert report.rows == 128 and not report.errors
    with InstanceStore(path, cache_size=64) as st:
        yield st


@pytest.fixture(scope="module")
def server(store) -> str:
    app = create_app(
        store, token=TOKEN, max_body_bytes=4 * 2**20, max_batch=2048, max_response_chars=20_000, time_limit=20
    )
    with ServerThread(app) as url:
        yield url


@pytest.fixture(scope="module")
def client(server) -> httpx.Client:
    with httpx.Client(base_url=server, headers=AUTH, timeout=60) as c:
        yield c


# -- health, auth -----------------------------------------------------------------------------
def test_health_needs_no_token(server):
    r = httpx.get(server + "/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["instances"] == 128 and body["auth"] is True
    assert body["mode"] == "all_pass" and body["reward_modes"] == list(REWARD_MODES)
    assert body["grade_processes"] == 0  # create_app grades in the server process unless told otherwise


@pytest.mark.parametrize("path", ["/grade", "/grade/batch", "/openrlhf", "/get_reward"])
@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}], ids=["none", "wrong", "no-scheme"]
)
def test_every_grading_endpoint_needs_the_token(server, path, headers):
    r = httpx.post(server + path, json={"id": "x", "response": "y"}, headers=headers)
    assert r.status_code == 401 and "token" in r.json()["error"]
    assert r.headers["www-authenticate"] == "Bearer"


def test_token_as_query_parameter_for_clients_without_headers(server, instances):
    inst = instances[0]
    r = httpx.post(server + f"/grade?token={TOKEN}", json={"id": inst.id, "response": oracle(inst)})
    assert r.status_code == 200 and r.json()["reward"] == 1.0


def test_binds_loopback_by_default():
    from pbsolve.cli.serve import serve_cmd

    import inspect

    assert inspect.signature(serve_cmd).parameters["host"].default == "127.0.0.1"


# -- /grade ------------------------------------------------------------------------------------
def test_grade_by_id_matches_in_process_grading(client, instances):
    for inst in instances[:6]:
        for text in rollouts(inst):
            for mode in REWARD_MODES:
                r = client.post("/grade", json={"id": inst.id, "response": text, "mode": mode, "response_id": "r1"})
                assert r.status_code == 200, r.text
                body = r.json()
                g = grade(inst, text, mode)
                assert body["reward"] == g.reward and body["reward_mode"] == mode and body["response_id"] == "r1"
                assert body["all_pass"] == g.all_pass and body["avg_pass"] == g.avg_pass
                assert body["parse_ok"] == (1.0 if g.parse_error is None else 0.0)
                assert body["items_total"] == len(g.items) and body["parse_error"] == g.parse_error
                assert "items" not in body


def test_grade_inline_instance_and_details(client, instances):
    inst = instances[3]
    text = baseline(inst)
    g = grade(inst, text)
    for form in (json.loads(inst.model_dump_json()), inst.model_dump_json()):
        r = client.post("/grade", json={"instance": form, "response": text, "details": True})
        assert r.status_code == 200, r.text
        assert r.json()["items"] == [{"id": i.id, "passed": i.passed, "reason": i.reason} for i in g.items]


def test_an_unknown_instance_id_is_an_error_never_a_reward(client, instances):
    r = client.post("/grade", json={"id": "no-such-instance", "response": oracle(instances[0])})
    assert r.status_code == 404
    assert "reward" not in r.json() and "no-such-instance" in r.json()["error"]
    batch = [{"id": i.id, "response": "x"} for i in instances[:3]] + [{"id": "ghost", "response": "x"}]
    r = client.post("/grade/batch", json={"requests": batch})
    assert r.status_code == 404 and "'ghost' (requests[3])" in r.json()["error"]
    r = client.post("/openrlhf", json={"query": ["a", "b"], "prompts": ["", ""], "labels": [instances[0].id, "ghost"]})
    assert r.status_code == 404 and "'ghost' (labels[1])" in r.json()["error"]


# -- every bad request: 4xx with a message -------------------------------------------------------
BAD_REQUESTS = [
    ("/grade", b"{not json", "not valid JSON"),
    ("/grade", b"[1, 2]", "one JSON object"),
    ("/grade", b"", "one JSON object"),
    ("/grade", b'{"id": "x"}', "response: Field required"),
    ("/grade", b'{"id": "x", "response": 5}', "response: Input should be a valid string"),
    ("/grade", b'{"response": "r"}', "exactly one of 'id'"),
    ("/grade", b'{"id": "x", "instance": {}, "response": "r"}', "exactly one of 'id'"),
    ("/grade", b'{"instance": {}, "response": "r"}', "not a pbsolve instance"),
    ("/grade", b'{"instance": "plain text", "response": "r"}', "not instance JSON"),
    ("/grade", b'{"instance": "{\\"id\\": 3}", "response": "r"}', "not a pbsolve instance"),
    ("/grade", b'{"id": "x", "response": "r", "mode": "strict"}', "mode"),
    ("/grade", b'{"id": "x", "response": "r", "extra": 1}', "extra: Extra inputs are not permitted"),
    ("/grade/batch", b'{"requests": []}', "at least 1 item"),
    ("/grade/batch", b'{"requests": [{"response": "r"}]}', "requests[0]: give exactly one"),
    ("/grade/batch", b'{"requests": "all"}', "requests"),
    ("/openrlhf", b"{not json", "not valid JSON"),  # the body read by pydantic, not FastAPI: the same errors
    ("/openrlhf", b"[1, 2]", "one JSON object"),
    ("/openrlhf", b"", "one JSON object"),
    ("/openrlhf", b'{"labels": ["a"]}', "query: Field required"),
    ("/openrlhf", b'{"query": ["q"]}', "1 queries but no labels"),
    ("/openrlhf", b'{"query": ["q", "r"], "labels": ["a"]}', "2 queries but 1 labels"),
    ("/openrlhf", b'{"query": ["q"], "labels": ["a"], "prompts": []}', "1 queries but 0 prompts"),
    ("/openrlhf", b'{"query": [1], "labels": ["a"]}', "query.0"),
    ("/openrlhf?mode=nope", b'{"query": ["q"], "labels": ["a"]}', "unknown reward mode 'nope'"),
    ("/openrlhf", b'{"query": ["q"], "labels": ["{broken"]}', "labels[0]"),
]


@pytest.mark.parametrize("path, body, needle", BAD_REQUESTS)
def test_bad_requests_get_a_4xx_with_a_message(client, path, body, needle):
    r = client.post(path, content=body, headers={"content-type": "application/json"})
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/json"
    error = r.json()["error"]
    assert isinstance(error, str) and needle in error, error


def test_the_openrlhf_body_is_documented_as_a_declared_body_would_be():
    schema = create_app().openapi()["paths"]
    for path in ("/openrlhf", "/get_reward"):
        body = schema[path]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert set(body["properties"]) == {"query", "prompts", "labels"} and body["required"] == ["query"]


def test_routing_errors_are_4xx_json(client):
    assert client.get("/grade").status_code == 405
    r = client.get("/nowhere")
    assert r.status_code == 404 and r.json()["error"]
    # a Content-Length httpx refuses to send: write the request by hand
    host, port = client.base_url.host, client.base_url.port
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(b"POST /grade HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n{}")
        status = s.recv(65536).split(b" ", 2)[1]
    assert status == b"400"


def test_size_limits(client, instances):
    big = "x" * (5 * 2**20)
    r = client.post("/grade", json={"id": instances[0].id, "response": big})
    assert r.status_code == 413 and "4,194,304 bytes" in r.json()["error"]

    def chunks():  # no Content-Length: the limit is counted while reading
        for _ in range(6):
            yield b"x" * 2**20

    r = client.post("/grade", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    many = [{"id": instances[0].id, "response": ""}] * 2049
    r = client.post("/grade/batch", json={"requests": many})
    assert r.status_code == 413 and "2,048 per request" in r.json()["error"]


def test_a_long_answer_fails_to_parse_but_long_thinking_does_not(client, instances):
    inst = instances[0]
    right = oracle(inst)
    r = client.post("/grade", json={"id": inst.id, "response": "y" * 30_000 + right})
    assert r.status_code == 200
    assert r.json()["reward"] == 0.0 and "limit 20,000" in r.json()["parse_error"]
    r = client.post("/grade", json={"id": inst.id, "response": "<think>" + "y" * 30_000 + "</think>" + right})
    assert r.json()["reward"] == 1.0


def test_time_limit_answers_503_with_a_message_and_the_server_keeps_serving(store, instances):
    app = create_app(store, time_limit=0.05)
    batch = [{"id": inst.id, "response": text} for inst in instances for text in rollouts(inst)] * 2  # 2,048
    with ServerThread(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        r = c.post("/grade/batch", json={"requests": batch})
        assert r.status_code == 503, r.text[:200]
        assert "time limit of 0.05 s exceeded after grading" in r.json()["error"] and r.headers["retry-after"] == "1"
        assert c.get("/health").status_code == 200
        ok = c.post("/grade", json={"id": instances[0].id, "response": oracle(instances[0])})
        assert ok.status_code == 200 and ok.json()["reward"] == 1.0


# -- batches -----------------------------------------------------------------------------------
def test_batch_of_128_prompts_by_8_rollouts(client, instances):
    requests = [
        {"id": inst.id, "response": text, "response_id": f"{inst.id}#{k}"}
        for inst in instances for k, text in enumerate(rollouts(inst))
    ]  # fmt: skip
    assert len(requests) == 1024
    for mode in ("all_pass", "avg_pass"):
        t0 = time.perf_counter()
        r = client.post("/grade/batch", json={"mode": mode, "requests": requests})
        elapsed = time.perf_counter() - t0
        assert r.status_code == 200, r.text[:300]
        body = r.json()
        assert body["n"] == 1024 and body["mode"] == mode
        expected = [grade(inst, text, mode).reward for inst in instances for text in rollouts(inst)]
        assert body["rewards"] == expected
        assert [g["response_id"] for g in body["grades"]] == [q["response_id"] for q in requests]
        assert elapsed < 10  # the benchmark holds the real target (< 1 s); this only catches a collapse


def test_openrlhf_contract(client, instances):
    queries, prompts, labels, expected = [], [], [], []
    for inst in instances[:16]:
        for text in rollouts(inst):
            p = f"<|im_start|>user\n{inst.prompt}<|im_end|>\n<|im_start|>assistant\n"
            queries.append("<|endoftext|><|endoftext|>" + p + text + "<|im_end|>")
            prompts.append(p)
            labels.append(inst.id)
            expected.append(compute_score("pbsolve", text, inst, mode="avg_pass"))
    # openrlhf.utils.remote_rm_utils: requests.post(url, json={"query", "prompts", "labels"[, "metas"]})
    payload = {"query": queries, "prompts": prompts, "labels": labels, "metas": [{"k": 1}] * len(queries)}
    for path in ("/openrlhf?mode=avg_pass", "/get_reward?mode=avg_pass"):
        r = client.post(path, json=payload, headers={"Content-Type": "application/json"})
        assert r.status_code == 200, r.text[:300]
        body = r.json()
        assert set(body) == {"rewards", "scores", "extra_logs"}
        assert body["rewards"] == [e["score"] for e in expected] == body["scores"]
        assert set(body["extra_logs"]) == {
            "all_pass",
            "avg_pass",
            "parse_ok",
            "items_passed",
            "items_total",
            "grader_error",
        }
        for key, values in body["extra_logs"].items():
            assert values == [e[key] for e in expected]
    # labels may also be the instances themselves (JSON text), as `pbsolve export` writes them
    inline = {"query": queries[:8], "prompts": prompts[:8], "labels": [instances[0].model_dump_json()] * 8}
    r = client.post("/openrlhf?mode=avg_pass", json=inline)
    assert r.json()["rewards"] == [e["score"] for e in expected[:8]]


def test_concurrent_clients(server, instances):
    def call(k: int) -> float:
        inst = instances[k % len(instances)]
        with httpx.Client(base_url=server, headers=AUTH, timeout=60) as c:
            batch = [{"id": inst.id, "response": t} for t in rollouts(inst)]
            r = c.post("/grade/batch", json={"requests": batch})
            assert r.status_code == 200
            return r.json()["rewards"] == [grade(inst, t).reward for t in rollouts(inst)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(call, range(32)))


# -- the store ---------------------------------------------------------------------------------
def _rss_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def test_a_large_store_answers_lookups_fast_in_bounded_memory(tmp_path, instances):
    n = 200_000
    path = tmp_path / "big.pbstore"
    real = {5_000 * k: inst for k, inst in enumerate(instances[:40])}  # real instances spread among placeholders
    with StoreWriter(path, chunk_rows=5000) as w:
        for k in range(n):
            if k in real:
                inst = real[k]
                w.add(inst.id, inst.task, inst.family, inst.model_dump_json())
            else:
                w.add(f"placeholder-{k:07d}", "t", "f", '{"id":"placeholder-%07d","data":[%d]}' % (k, k))
    assert w.rows == n
    with InstanceStore(path, cache_size=16) as st:
        assert len(st) == n
        rng = random.Random(0)
        keys = [f"placeholder-{rng.randrange(n):07d}" for _ in range(20_000)]
        keys = [k for k in keys if int(k.split("-")[1]) not in real]
        for k in keys[:500]:  # warm the connection and the page cache path
            st.get_text(k)
        rss0 = _rss_mib()
        lat = []
        for k in keys:
            t0 = time.perf_counter()
            text = st.get_text(k)
            lat.append(time.perf_counter() - t0)
            assert text is not None and k in text
        lat.sort()
        assert lat[len(lat) // 2] < 0.001 and lat[int(0.99 * len(lat))] < 0.005, (
            lat[len(lat) // 2],
            lat[int(0.99 * len(lat))],
        )
        assert _rss_mib() - rss0 < 20  # lookups do not load the store into memory
        assert st.get_text("placeholder-9999999") is None and "nope" not in st
        got = st.get_many([i.id for i in real.values()] + ["nope"])
        assert set(got) == {i.id for i in real.values()}
        assert all(got[i.id].model_dump() == i.model_dump() for i in real.values())
        assert len(st.cache) == 16  # the parsed-instance LRU stays at its size


def _old_store(path: Path, instances: list[Instance], fmt: str) -> None:
    """A store in an earlier format, one dictionary for every row: pbsolve-store/1 (zlib
    rows, a preset dictionary) or pbsolve-store/2 (zstd rows, a trained dictionary)."""
    import sqlite3
    import zlib

    import zstandard

    texts = [i.model_dump_json().encode() for i in instances]
    if fmt == "pbsolve-store/1":
        zdict = b"\n".join(texts[:8])[-32 * 1024 :]

        def pack(raw: bytes) -> bytes:
            c = zlib.compressobj(1, zdict=zdict)
            return c.compress(raw) + c.flush()
    else:
        zdict = zstandard.train_dictionary(16 * 1024, texts * 8).as_bytes()
        pack = zstandard.ZstdCompressor(level=3, dict_data=zstandard.ZstdCompressionDict(zdict)).compress
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);"
        "CREATE TABLE instances (id TEXT PRIMARY KEY, task TEXT NOT NULL, family TEXT NOT NULL, body BLOB NOT NULL);"
    )
    rows = [(i.id, i.task, i.family, pack(raw)) for i, raw in zip(instances, texts)]
    conn.executemany("INSERT INTO instances VALUES (?, ?, ?, ?)", rows)
    meta = {"format": fmt, "count": str(len(instances)), "zdict": zdict}
    conn.executemany("INSERT INTO meta VALUES (?, ?)", list(meta.items()))
    conn.commit()
    conn.close()


def test_a_store_of_the_first_zlib_format_is_still_read(tmp_path, instances):
    path = tmp_path / "old.pbstore"
    _old_store(path, instances[:20], "pbsolve-store/1")
    with InstanceStore(path) as st:
        assert len(st) == 20
        assert all(st.get(i.id).model_dump() == i.model_dump() for i in instances[:20])


def test_a_store_of_the_second_format_with_one_trained_dictionary_is_still_read(tmp_path, instances):
    path = tmp_path / "v2.pbstore"
    _old_store(path, instances[:40], "pbsolve-store/2")
    with InstanceStore(path) as st:
        assert st.format == "pbsolve-store/2" and len(st) == 40
        assert all(st.get(i.id).model_dump() == i.model_dump() for i in instances[:40])
        assert set(st.get_many([i.id for i in instances[:40]])) == {i.id for i in instances[:40]}


def _kinds(path: Path) -> dict[str, tuple[str, int]]:
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as conn:
        return {t: (f, n) for t, f, n in conn.execute("SELECT task, family, length(zdict) FROM kinds")}


def test_store_rows_are_zstd_with_a_dictionary_per_task_type(tmp_path, instances):
    path = tmp_path / "s.pbstore"
    with StoreWriter(path) as w:
        for inst in instances:
            w.add(inst.id, inst.task, inst.family, inst.model_dump_json())
    with InstanceStore(path) as st:
        assert st.meta["format"] == "pbsolve-store/3" and st.meta["compression"].startswith("zstd-")
        assert all(st.get_text(i.id) == i.model_dump_json() for i in instances)
        assert st.ids() == [i.id for i in instances]  # the order the rows were added in
    kinds = _kinds(path)
    assert kinds.keys() == {i.task for i in instances}
    assert all(kinds[i.task][0] == i.family and kinds[i.task][1] > 0 for i in instances)
    raw = sum(len(i.model_dump_json()) for i in instances)
    assert path.stat().st_size < raw / 4  # the dictionaries share the instances' common text


def test_a_task_type_dictionary_is_its_first_rows_and_later_rows_of_the_same_chunk_use_it(tmp_path, instances):
    import zstandard

    from pbsolve.serve.store import DICT_SAMPLES, raw_dictionary

    task = instances[0].task
    same = [i for i in instances if i.task == task]
    rows = [same[k % len(same)].model_copy(update={"id": f"{task}-row-{k}"}) for k in range(DICT_SAMPLES + 5)]
    path = tmp_path / "one-task.pbstore"
    with StoreWriter(path, chunk_rows=10_000) as w:  # one chunk: the dictionary is made mid-chunk
        for inst in rows:
            w.add(inst.id, inst.task, inst.family, inst.model_dump_json())
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as conn:
        (zdict,) = conn.execute("SELECT zdict FROM kinds").fetchone()
    expected = raw_dictionary([i.model_dump_json().encode() for i in rows[:DICT_SAMPLES]])
    assert zstandard.ZstdDecompressor().decompress(zdict) == expected  # kept compressed
    with InstanceStore(path) as st:
        assert [st.get_text(i.id) for i in rows] == [i.model_dump_json() for i in rows]


def test_store_bytes_do_not_depend_on_the_chunk_size(tmp_path, instances):
    import sqlite3

    def rows(chunk: int) -> list[tuple]:
        path = tmp_path / f"c{chunk}.pbstore"
        with StoreWriter(path, chunk_rows=chunk) as w:
            for inst in instances:
                w.add(inst.id, inst.task, inst.family, inst.model_dump_json())
        with contextlib.closing(sqlite3.connect(path)) as conn:
            return conn.execute("SELECT i.rowid, i.id, k.task, i.body FROM instances i JOIN kinds k USING (kind)").fetchall()

    assert rows(7) == rows(1000)


def _store_rows(path: Path) -> list[tuple]:
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT i.rowid, i.id, k.task, i.body FROM instances i JOIN kinds k USING (kind)").fetchall()


def test_store_bytes_do_not_depend_on_the_number_of_compressing_threads(tmp_path, instances, monkeypatch):
    from pbsolve.serve import store

    def rows(threads: int) -> list[tuple]:
        monkeypatch.setattr(store, "COMPRESS_THREADS", threads)
        path = tmp_path / f"t{threads}.pbstore"
        with StoreWriter(path, chunk_rows=5) as w:
            for k, inst in enumerate(instances * 3):  # past the dictionaries: most rows are compressed in chunks
                w.add(f"{inst.id}~{k}", inst.task, inst.family, inst.model_dump_json())
        return _store_rows(path)

    one = rows(1)
    assert one == rows(2) == rows(3)


def test_an_empty_text_after_its_task_types_dictionary_is_stored_empty(tmp_path, instances):
    from pbsolve.serve.store import DICT_SAMPLES

    inst = instances[0]
    path = tmp_path / "empty.pbstore"
    with StoreWriter(path, chunk_rows=4) as w:
        for k in range(DICT_SAMPLES):
            w.add(f"{inst.id}~{k}", inst.task, inst.family, inst.model_dump_json())
        w.add("empty", inst.task, inst.family, "")  # a chunk of its own: compressed with the dictionary
    with InstanceStore(path) as st:
        assert st.get_text("empty") == "" and st.get_text(f"{inst.id}~3") == inst.model_dump_json()


def test_a_duplicate_of_a_row_still_compressing_is_reported_and_not_stored(tmp_path, instances):
    a, b, c = instances[:3]
    path = tmp_path / "dup.pbstore"
    with StoreWriter(path, chunk_rows=2) as w:
        w.add(a.id, a.task, a.family, a.model_dump_json(), tag="first")
        w.add(b.id, b.task, b.family, b.model_dump_json())  # a full chunk: compressed in the background
        w.add(a.id, a.task, a.family, c.model_dump_json(), tag="again")
        w.add(c.id, c.task, c.family, c.model_dump_json())
        w.flush()
        assert w.take_duplicates() == [(a.id, "again")]
        assert w.rows == 3  # flush() inserts every row added so far, the chunk in the background too
    with InstanceStore(path) as st:
        assert st.ids() == [a.id, b.id, c.id] and st.get_text(a.id) == a.model_dump_json()


class _CompressorFailed(RuntimeError):
    pass


def test_a_compression_error_is_raised_by_the_writer_not_lost(tmp_path, instances, monkeypatch):
    from pbsolve.serve import store

    def broken(rows: list, jobs: list) -> None:
        raise _CompressorFailed("compressor failed")

    monkeypatch.setattr(store, "_compress_chunk", broken)
    w = StoreWriter(tmp_path / "broken.pbstore", chunk_rows=2)
    with pytest.raises(_CompressorFailed, match="compressor failed"):
        for inst in instances:
            w.add(inst.id, inst.task, inst.family, inst.model_dump_json())
        w.close()
    w.abort()
    assert w._pool is None  # the background thread is stopped


def test_an_error_on_a_second_compressing_thread_is_raised_not_stored_as_an_empty_row(tmp_path, instances, monkeypatch):
    from pbsolve.serve import store
    from pbsolve.serve.store import DICT_SAMPLES

    class Broken:
        def multi_compress_to_buffer(self, raws: list, threads: int) -> list:
            raise _CompressorFailed("second thread failed")

        compress = multi_compress_to_buffer

    monkeypatch.setattr(store, "COMPRESS_THREADS", 2)
    inst = instances[0]
    w = StoreWriter(tmp_path / "thread.pbstore", chunk_rows=1000)
    for k in range(DICT_SAMPLES):  # the dictionary, then a chunk of rows split over both threads
        w.add(f"{inst.id}~{k}", inst.task, inst.family, inst.model_dump_json())
    w.flush()
    next(iter(w._kinds.values())).compressors[1] = Broken()
    for k in range(DICT_SAMPLES, DICT_SAMPLES + 8):
        w.add(f"{inst.id}~{k}", inst.task, inst.family, inst.model_dump_json())
    with pytest.raises(_CompressorFailed, match="second thread failed"):
        w.close()
    w.abort()


def test_aborting_with_a_chunk_compressing_stores_nothing_and_stops_the_thread(tmp_path, instances):
    path = tmp_path / "aborted.pbstore"
    w = StoreWriter(path, chunk_rows=2)
    for inst in instances[:5]:
        w.add(inst.id, inst.task, inst.family, inst.model_dump_json())
    w.abort()
    assert w._pool is None
    with pytest.raises(StoreError):
        InstanceStore(path).get_text(instances[0].id)


def test_a_damaged_row_is_a_store_error_not_a_crash(tmp_path, instances):
    import sqlite3

    path = tmp_path / "s.pbstore"
    with StoreWriter(path) as w:
        for inst in instances[:5]:
            w.add(inst.id, inst.task, inst.family, inst.model_dump_json())
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE instances SET body = ? WHERE id = ?", (b"not zstd", instances[0].id))
        conn.execute("UPDATE instances SET kind = 99 WHERE id = ?", (instances[1].id,))
        conn.commit()
    with InstanceStore(path) as st:
        with pytest.raises(StoreError, match="does not decompress"):
            st.get_text(instances[0].id)
        with pytest.raises(StoreError, match="no dictionary"):
            st.get(instances[1].id)
        assert st.get(instances[2].id).model_dump() == instances[2].model_dump()


@pytest.mark.parametrize("rows", [1, 3], ids=["one-row", "three-rows"])
def test_a_store_of_too_few_rows_to_train_on_still_round_trips(tmp_path, instances, rows):
    path = tmp_path / "few.pbstore"
    with StoreWriter(path) as w:
        for inst in instances[:rows]:
            w.add(inst.id, inst.task, inst.family, inst.model_dump_json())
    with InstanceStore(path) as st:
        assert [st.get_text(i.id) for i in instances[:rows]] == [i.model_dump_json() for i in instances[:rows]]


def test_store_build_reports_bad_lines_and_duplicates(tmp_path, source):
    lines = source.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        "\n".join([lines[0], "not json", lines[1], lines[0], '{"id": 1}', "", lines[2]]) + "\n", encoding="utf-8"
    )
    report = build_store([bad], tmp_path / "s.pbstore")
    assert report.rows == 3 and report.duplicates == 1
    assert [(e.line, e.message.split(" ")[0]) for e in report.errors] == [(2, "not"), (4, "duplicate"), (5, "not")]
    assert not (tmp_path / "s.pbstore.partial").exists()
    with InstanceStore(tmp_path / "s.pbstore") as st:
        first = json.loads(lines[0])
        assert st.get(first["id"]).model_dump() == Instance.model_validate(first).model_dump()


def test_ensure_store_reuses_an_up_to_date_store_and_rebuilds_a_stale_one(tmp_path, source):
    src = tmp_path / "i.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()
    src.write_text("\n".join(lines[:5]) + "\n", encoding="utf-8")
    path, first = ensure_store([src])
    assert path == tmp_path / "i.jsonl.pbstore" and not first.reused and first.rows == 5
    _, again = ensure_store([src])
    assert again.reused and again.rows == 5
    src.write_text("\n".join(lines[:7]) + "\n", encoding="utf-8")
    _, stale = ensure_store([src])
    assert not stale.reused and stale.rows == 7
    assert ensure_store([path])[1].reused  # a store file is served as it is
    with pytest.raises(StoreError, match="refusing to overwrite"):
        ensure_store([src], store_path=src)
    with pytest.raises(StoreError, match="no such file"):
        ensure_store([tmp_path / "missing.jsonl"])
    with pytest.raises(StoreError, match="not a pbsolve instance store"):
        InstanceStore(src)


def test_store_builds_from_exported_parquet(tmp_path, source):
    from pbsolve.serve.export import export

    export([source], tmp_path / "verl", fmt="verl", eval_fraction=0)
    export([source], tmp_path / "hf", fmt="parquet", eval_fraction=0)
    a = build_store([tmp_path / "verl" / "train.parquet"], tmp_path / "a.pbstore")
    b = build_store([tmp_path / "hf" / "train.parquet"], tmp_path / "b.pbstore")
    assert a.rows == b.rows == 128 and not a.errors and not b.errors
    with InstanceStore(tmp_path / "a.pbstore") as sa, InstanceStore(tmp_path / "b.pbstore") as sb:
        ids = sa.ids()
        assert ids == sb.ids() and len(ids) == 128
        assert sa.get_text(ids[0]) == sb.get_text(ids[0])


# -- the CLI -----------------------------------------------------------------------------------
def test_cli_serve_build_only(tmp_path, source):
    result = runner.invoke(
        cli.app, ["serve", "--instances", str(source), "--store", str(tmp_path / "s.pbstore"), "--build-only"]
    )
    assert result.exit_code == 0, result.output
    assert "128 instances" in " ".join(result.output.split())
    bad = tmp_path / "bad.jsonl"
    bad.write_text(source.read_text(encoding="utf-8").splitlines()[0] + "\nnope\n", encoding="utf-8")
    result = runner.invoke(cli.app, ["serve", "--instances", str(bad), "--build-only"])
    assert result.exit_code == 1 and "bad.jsonl:2: not valid JSON" in " ".join(result.output.split())
    for args, needle in (
        (["--instances", str(tmp_path / "none.jsonl")], "no such file"),
        (["--instances", str(source), "--mode", "half"], "unknown reward mode 'half'"),
    ):
        result = runner.invoke(cli.app, ["serve", *args, "--build-only"])
        assert result.exit_code == 1 and needle in " ".join(result.output.split()) and "Traceback" not in result.output


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("workers", [1, 2])
def test_cli_serve_runs_a_server(tmp_path, source, instances, workers):
    store_path = tmp_path / "s.pbstore"
    assert (
        runner.invoke(
            cli.app, ["serve", "--instances", str(source), "--store", str(store_path), "--build-only"]
        ).exit_code
        == 0
    )
    port = _free_port()
    env = {**os.environ, "PBSOLVE_TOKEN": TOKEN}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pbsolve", "serve", "--instances", str(store_path), "--port", str(port), "--workers", str(workers), "--mode", "avg_pass"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, (
                proc.stderr.read() if proc.poll() is not None else "timeout"
            )
            time.sleep(0.1)
        inst = instances[1]
        text = baseline(inst)
        r = httpx.post(url + "/grade", json={"id": inst.id, "response": text}, headers=AUTH)
        assert r.status_code == 200 and r.json()["reward"] == grade(inst, text, "avg_pass").reward
        assert httpx.post(url + "/grade", json={"id": inst.id, "response": text}).status_code == 401
        # a batch (on the grading processes when the machine has two cores or more and workers == 1)
        batch = [{"id": i.id, "response": t} for i in instances[:8] for t in (oracle(i), baseline(i))]
        r = httpx.post(url + "/grade/batch", json={"requests": batch}, headers=AUTH, timeout=60)
        assert r.status_code == 200, r.text[:300]
        assert r.json()["rewards"] == [grade(i, t, "avg_pass").reward for i in instances[:8] for t in (oracle(i), baseline(i))]
    finally:
        proc.terminate()
        proc.wait(timeout=20)
