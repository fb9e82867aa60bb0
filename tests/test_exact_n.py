"""`--n N` gives N: failed indices are skipped (and named, with their reasons), the run goes
on to further indices, and shards by `--start` concatenate to the whole run."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from pbsolve.cli.main import app
from pbsolve.generate import GaveUp, GenerateOptions, generate
from pbsolve.jsonl import dumps

# One task type, so the seed's first index keeps failing however many task types there are
# (index 0 of seed 17 certifies nothing in its six attempts: a tiny procurement plan with
# no disruption to make and rules with nothing to apply).
TASK = "procurement_planning"
TINY = GenerateOptions(size="tiny", task=TASK)
SEED = 17


def _run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_a_failed_index_is_replaced_by_the_next_one_so_n_instances_come_out():
    outcomes = list(generate(8, SEED, TINY))
    assert outcomes[0].instance is None and outcomes[0].rejects
    assert sum(o.instance is not None for o in outcomes) == 8
    assert [o.index for o in outcomes] == list(range(len(outcomes)))


def test_the_cli_writes_exactly_n_lines_and_the_summary_names_each_failed_index_and_why(tmp_path):
    out = tmp_path / "i.jsonl"
    result = _run("generate", "--n", 8, "--seed", SEED, "--size", "tiny", "--task", TASK, "--out", out, "--summary-json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(out.read_text(encoding="utf-8").splitlines()) == 8
    assert summary["requested"] == 8 and summary["emitted"] == 8
    assert summary["failed_indices"][0]["index"] == 0 and summary["failed_indices"][0]["reasons"]
    assert summary["last_index"] == 7 + len(summary["failed_indices"])


def test_the_summary_table_lists_the_failed_index_with_its_reasons(tmp_path):
    result = _run("generate", "--n", 3, "--seed", SEED, "--size", "tiny", "--task", TASK, "--out", tmp_path / "i.jsonl")
    text = " ".join(result.stdout.split())
    assert "1 indices produced no certified instance" in text and "index 0: no_disruption, not_applicable:" in text
    assert "the next shard starts at --start 4" in text


def test_exactly_n_gives_the_same_bytes_with_one_and_two_workers():
    one = [dumps(o.instance) for o in generate(8, SEED, TINY, 1) if o.instance]
    two = [dumps(o.instance) for o in generate(8, SEED, TINY, 2) if o.instance]
    assert len(one) == 8 and one == two


def test_shards_starting_where_the_previous_one_ended_concatenate_to_the_whole_run():
    whole = [o for o in generate(8, SEED, TINY)]
    first = [o for o in generate(4, SEED, TINY, start=0)]
    second = [o for o in generate(4, SEED, TINY, start=first[-1].index + 1)]
    assert [dumps(o.instance) for o in first + second if o.instance] == [dumps(o.instance) for o in whole if o.instance]


def test_a_run_that_keeps_failing_gives_up_naming_the_indices_and_reasons():
    with pytest.raises(GaveUp) as exc:
        list(generate(8, SEED, TINY, max_consecutive_failures=1))
    assert "1 indices in a row (0..0)" in str(exc.value) and "not_applicable:" in str(exc.value)
