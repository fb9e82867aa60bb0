"""`pbsolve export`: verl Parquet and JSON Lines / Parquet datasets with train/eval splits.

The rows are read back the way the consumers read them (pyarrow is what verl's
RLHFDataset and Hugging Face `datasets` load Parquet and JSON Lines with), and fed to the
reward adapters: an exported row must grade its instance's oracle answer as 1.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.json as pajson
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import pbsolve.cli.main as cli
from pbsolve.canonical import problem_hash
from pbsolve.generate import GenerateOptions, generate
from pbsolve.serve.export import eval_count, export, split_key
from pbsolve.jsonl import dumps
from pbsolve.llm.responders import oracle
from pbsolve.serve.rewards import compute_score, trl_reward
from pbsolve.schema import Instance

runner = CliRunner()


def clones(instances: list[Instance], n: int) -> list[Instance]:
    """The first n instances (the fixture holds 40 distinct problems, for split sizes)."""
    assert len(instances) >= n
    return instances[:n]


@pytest.fixture(scope="module")
def instances(feasible_instances, infeasible_instances) -> list[Instance]:
    """40 instances posing 40 different problems: the session's certified ones, then tiny
    ones of every family (splits follow problems, so copies would move together)."""
    found = [*feasible_instances.values(), *infeasible_instances.values()]
    seen = {problem_hash(i) for i in found}
    for o in generate(40 - len(found) + 6, 7, GenerateOptions(size="tiny")):
        if o.instance is not None and problem_hash(o.instance) not in seen and len(found) < 40:
            seen.add(problem_hash(o.instance))
            found.append(o.instance)
    assert len(found) == 40
    return found


@pytest.fixture(scope="module")
def source(tmp_path_factory, instances) -> Path:
    path = tmp_path_factory.mktemp("export") / "instances.jsonl"
    path.write_text("".join(dumps(i) + "\n" for i in clones(instances, 40)), encoding="utf-8")
    return path


def read_rows(path: Path) -> list[dict]:
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# -- verl ---------------------------------------------------------------------------------------
def test_verl_export_has_the_columns_verl_reads(tmp_path, source, instances):
    report = export([source], tmp_path, fmt="verl", eval_fraction=0.25)
    assert set(report.files) == {"train", "eval"}
    assert report.rows == {"train": 30, "eval": 10}
    schema = pq.read_schema(tmp_path / "train.parquet")
    assert schema.names == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    assert schema.field("prompt").type == pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    by_id = {i.id: i for i in clones(instances, 40)}
    for split in ("train", "eval"):
        rows = read_rows(tmp_path / f"{split}.parquet")
        assert [r["extra_info"]["index"] for r in rows] == list(range(len(rows)))
        for r in rows:
            inst = by_id[r["extra_info"]["id"]]
            assert r["data_source"] == f"pbsolve/{inst.task}"
            assert r["prompt"] == [{"role": "user", "content": inst.prompt}]
            assert r["ability"] == "planning"
            assert r["reward_model"]["style"] == "rule"
            assert Instance.model_validate_json(r["reward_model"]["ground_truth"]).model_dump() == inst.model_dump()
            info = r["extra_info"]
            assert info["split"] == split
            assert (info["family"], info["task"], info["subtask"], info["tiers"]) == (inst.family, inst.task, inst.subtask, list(inst.tiers))


def test_verl_rows_feed_compute_score_directly(tmp_path, source, instances):
    export([source], tmp_path, fmt="verl", eval_fraction=0.25)
    by_id = {i.id: i for i in clones(instances, 40)}
    for split in ("train", "eval"):
        for r in read_rows(tmp_path / f"{split}.parquet"):
            inst = by_id[r["extra_info"]["id"]]
            # NaiveRewardManager: reward_model.ground_truth, data_source, extra_info of the row
            out = compute_score(
                data_source=r["data_source"], solution_str=oracle(inst),
                ground_truth=r["reward_model"]["ground_truth"], extra_info=r["extra_info"],
            )  # fmt: skip
            assert out["score"] == 1.0


def test_system_message_and_data_source_options(tmp_path, source):
    export([source], tmp_path, fmt="verl", eval_fraction=0, system="You plan.", data_source="planning")
    assert not (tmp_path / "eval.parquet").exists()
    row = read_rows(tmp_path / "train.parquet")[0]
    assert row["prompt"][0] == {"role": "system", "content": "You plan."}
    assert row["prompt"][1]["role"] == "user" and row["data_source"] == "planning"


# -- jsonl / parquet for datasets ------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_dataset_export_loads_with_arrow_and_feeds_the_trl_reward(tmp_path, source, instances, fmt):
    report = export([source], tmp_path, fmt=fmt, eval_fraction=0.1)
    assert report.rows == {"train": 36, "eval": 4}
    ext = "jsonl" if fmt == "jsonl" else "parquet"
    by_id = {i.id: i for i in clones(instances, 40)}
    for split in ("train", "eval"):
        path = tmp_path / f"{split}.{ext}"
        table = pajson.read_json(path) if fmt == "jsonl" else pq.read_table(path)  # one schema for every row
        assert table.column_names == ["id", "prompt", "instance", "family", "task", "subtask", "tiers", "split", "index"]
        assert table.num_rows == report.rows[split]
        rows = table.to_pylist()
        assert {r["split"] for r in rows} == {split}
        assert [r["index"] for r in rows] == list(range(len(rows)))
        # TRL: every column but prompt reaches the reward function as a list
        kwargs = {k: [r[k] for r in rows] for k in table.column_names if k != "prompt"}
        completions = [[{"role": "assistant", "content": oracle(by_id[r["id"]])}] for r in rows]
        prompts = [r["prompt"] for r in rows]
        assert prompts[0] == [{"role": "user", "content": by_id[rows[0]["id"]].prompt}]
        assert trl_reward()(prompts=prompts, completions=completions, **kwargs) == [1.0] * len(rows)


def test_text_prompt_style(tmp_path, source):
    export([source], tmp_path, fmt="parquet", prompt_style="text", eval_fraction=0)
    table = pq.read_table(tmp_path / "train.parquet")
    assert table.schema.field("prompt").type == pa.string()
    with pytest.raises(ValueError, match="chat messages"):
        export([source], tmp_path / "v", fmt="verl", prompt_style="text")


# -- splits ---------------------------------------------------------------------------------------
def test_eval_counts_are_exact_and_never_leave_a_split_empty():
    assert [eval_count(n, 0.1) for n in (0, 1, 2, 9, 10, 11, 100)] == [0, 0, 1, 1, 1, 1, 10]
    assert eval_count(10, 0.0) == 0 and eval_count(10, 1.0) == 10 and eval_count(10, 0.99) == 9


def test_split_depends_on_seed_and_id_not_on_file_order(tmp_path, source):
    lines = source.read_text(encoding="utf-8").splitlines()
    reverse = tmp_path / "reverse.jsonl"
    reverse.write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")

    def eval_ids(path: Path, out: Path, seed: int) -> set[str]:
        export([path], out, fmt="jsonl", eval_fraction=0.25, seed=seed)
        return {r["id"] for r in read_rows(out / "eval.jsonl")}

    a = eval_ids(source, tmp_path / "a", 0)
    assert a == eval_ids(reverse, tmp_path / "b", 0)
    assert a != eval_ids(source, tmp_path / "c", 1)
    insts = [Instance.model_validate_json(x) for x in lines]
    ranked = sorted(insts, key=lambda i: split_key(problem_hash(i), 0))
    assert a == {i.id for i in ranked[:10]}


def test_copies_of_one_problem_under_other_ids_share_a_split_and_the_report_says_so(tmp_path, source):
    lines = source.read_text(encoding="utf-8").splitlines()
    copies = []
    for x in lines:
        inst = Instance.model_validate_json(x)
        copies.append(inst.model_copy(update={"id": inst.id + "-copy", "prompt": inst.prompt + " "}).model_dump_json())
    both = tmp_path / "both.jsonl"
    both.write_text("\n".join(lines + copies) + "\n", encoding="utf-8")
    report = export([both], tmp_path / "out", fmt="jsonl", eval_fraction=0.3)
    split_of: dict[str, set[str]] = {}
    for s in ("train", "eval"):
        for row in read_rows(tmp_path / "out" / f"{s}.jsonl"):
            split_of.setdefault(row["id"].removesuffix("-copy"), set()).add(s)
    assert all(len(v) == 1 for v in split_of.values()) and len(split_of) == len(lines)
    check = report.as_dict()["leak_check"]
    assert check["shared"] == 0 and check["repeated_problems"] == len(lines)
    assert check["eval_problems"] + check["train_problems"] == len(lines)


def test_a_problem_found_in_both_splits_stops_the_export(tmp_path, source, monkeypatch):
    from pbsolve.serve import export as export_module

    keys = itertools.cycle([0, 1])  # a broken split: keys by position, not by problem
    monkeypatch.setattr(export_module, "split_key", lambda problem, seed=0: next(keys))
    lines = source.read_text(encoding="utf-8").splitlines()
    twice = tmp_path / "twice.jsonl"
    inst = Instance.model_validate_json(lines[0])
    twice.write_text(lines[0] + "\n" + inst.model_copy(update={"id": "other"}).model_dump_json() + "\n")
    with pytest.raises(export_module.SplitLeak, match="1 problem\\(s\\) in both splits"):
        export([twice], tmp_path / "out", fmt="jsonl", eval_fraction=0.5)
    assert not (tmp_path / "out" / "train.jsonl").exists()


# -- bad input, atomic output, Parquet input ------------------------------------------------------
def test_bad_lines_and_duplicates_are_reported_and_the_rest_exported(tmp_path, source):
    lines = source.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], "{broken", '{"id": "x"}', lines[0], "", *lines[1:5]]) + "\n", encoding="utf-8")
    report = export([bad], tmp_path / "out", fmt="jsonl", eval_fraction=0)
    assert report.rows["train"] == 5
    first_id = json.loads(lines[0])["id"]
    assert [(e.path, e.line) for e in report.errors] == [(str(bad), 2), (str(bad), 3), (str(bad), 4)]
    assert report.errors[0].message.startswith("not valid JSON")
    assert report.errors[1].message.startswith("not a valid Instance")
    assert report.errors[2].message == f"duplicate instance id {first_id!r} (the first one is kept)"
    assert not list((tmp_path / "out").glob("*.partial"))


def test_export_reads_parquet_exports_back(tmp_path, source):
    export([source], tmp_path / "hf", fmt="parquet", eval_fraction=0.25)
    export([source], tmp_path / "verl", fmt="verl", eval_fraction=0.25)
    again = export([tmp_path / "hf" / "train.parquet", tmp_path / "verl" / "eval.parquet"], tmp_path / "again", fmt="jsonl", eval_fraction=0)
    assert again.rows["train"] == 40 and not again.errors
    original = {json.loads(x)["id"]: json.loads(x) for x in source.read_text(encoding="utf-8").splitlines()}
    for r in read_rows(tmp_path / "again" / "train.jsonl"):
        assert json.loads(r["instance"]) == original[r["id"]]


def test_cli_export(tmp_path, source, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli.app, ["export", "--instances", str(source), "--format", "verl", "--out", "data", "--summary-json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    assert summary["rows"] == {"train": 36, "eval": 4} and summary["errors"] == 0
    assert (tmp_path / "data" / "train.parquet").is_file() and (tmp_path / "data" / "eval.parquet").is_file()
    table = runner.invoke(cli.app, ["export", "--instances", str(source), "--format", "jsonl", "--out", "hf"])
    assert table.exit_code == 0 and "train" in table.output and (tmp_path / "hf" / "train.jsonl").is_file()


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--format", "csv"], "unknown export format 'csv'"),
        (["--eval-fraction", "1.5"], "between 0 and 1"),
        (["--prompt-style", "xml"], "unknown prompt style"),
    ],
)
def test_cli_export_bad_options_fail_cleanly(tmp_path, source, args, needle):
    result = runner.invoke(cli.app, ["export", "--instances", str(source), "--out", str(tmp_path / "o"), *args])
    assert result.exit_code == 1 and "error:" in result.output and needle in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_cli_export_missing_file_and_bad_lines(tmp_path, source):
    missing = runner.invoke(cli.app, ["export", "--instances", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o")])
    assert missing.exit_code == 1 and "no such file" in missing.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text(source.read_text(encoding="utf-8").splitlines()[0] + "\n{oops\n", encoding="utf-8")
    result = runner.invoke(cli.app, ["export", "--instances", str(bad), "--out", str(tmp_path / "o2"), "--eval-fraction", "0"])
    assert result.exit_code == 1
    assert "skipped" in result.output and "bad.jsonl:2: not valid JSON" in " ".join(result.output.split())
    assert len(read_rows(tmp_path / "o2" / "train.jsonl")) == 1
