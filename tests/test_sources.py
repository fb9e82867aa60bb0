"""`pbsolve generate --from FILE`: a published data file becomes certified instances.

The core's side of importing, specified on the toy family's seating files (the template a
third-party family follows): reading a file, refusing a bad one with its reason before any
work, building the file's problem exactly under ``--rules none``, recording where the data
came from, and leaving sampled generation byte for byte as it was.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import pbsolve.generate
import pbsolve.sources
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from pbsolve.schema import Instance
from pbsolve.sources import SourceError, SourceFile
from tests.family_adapters import toy_family_registered
from tests.test_cli import assert_clean_failure, run

SEATING = """# three tables of two
capacity 2
tables T1 T2 T3
Ann 3 0 1
Bob 0 2 2
Cid 1 1 0
Dee 2 0 3
Eve 0 3 1
"""


@pytest.fixture
def toy() -> Iterator[None]:
    with toy_family_registered():
        yield


@pytest.fixture
def seating(tmp_path: Path) -> Path:
    path = tmp_path / "party.seat"
    path.write_text(SEATING)
    return path


def imported(source: SourceFile, rules: str = "none", seed: int = 0, index: int = 0) -> Instance:
    counts = {t: 0 for t in ("basic", "medium", "hard", "stateful")} if rules == "none" else None
    options = GenerateOptions(task="seating", source=source, counts=counts)
    found = build_instance(seed, index, options).instance
    assert found is not None
    return found


def test_reading_a_missing_file_names_it():
    with pytest.raises(SourceError, match=r"cannot read .*nowhere\.tsp"):
        SourceFile.read(Path("/nowhere.tsp"))


def test_reading_a_folder_is_refused(tmp_path: Path):
    with pytest.raises(SourceError, match="is a folder"):
        SourceFile.read(tmp_path)


def test_reading_a_binary_file_says_it_is_not_text(tmp_path: Path):
    path = tmp_path / "x.sm"
    path.write_bytes(b"jobs \xff\xfe")
    with pytest.raises(SourceError, match=r"not UTF-8 text \(byte 5\)"):
        SourceFile.read(path)


def test_reading_an_oversized_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(pbsolve.sources, "MAX_SOURCE_BYTES", 10)
    path = tmp_path / "big.jss"
    path.write_text("1 2 3 4 5 6 7 8 9")
    with pytest.raises(SourceError, match="17 bytes; data files are at most 10"):
        SourceFile.read(path)


def test_a_source_file_is_identified_by_the_sha256_of_its_text(seating: Path):
    source = SourceFile.read(seating)
    assert source.name == "party.seat"
    assert source.sha256 == "%064x" % int.from_bytes(__import__("hashlib").sha256(SEATING.encode()).digest(), "big")


def test_options_with_a_source_need_a_task(seating: Path):
    with pytest.raises(ValidationError, match="give the task with it"):
        GenerateOptions(source=SourceFile.read(seating))


def test_with_no_rules_the_instance_is_the_files_problem_exactly(toy: None, seating: Path):
    inst = imported(SourceFile.read(seating))
    assert inst.data == {
        "guests": [
            {"id": "Ann", "cost": {"T1": 3, "T2": 0, "T3": 1}},
            {"id": "Bob", "cost": {"T1": 0, "T2": 2, "T3": 2}},
            {"id": "Cid", "cost": {"T1": 1, "T2": 1, "T3": 0}},
            {"id": "Dee", "cost": {"T1": 2, "T2": 0, "T3": 3}},
            {"id": "Eve", "cost": {"T1": 0, "T2": 3, "T3": 1}},
        ],
        "tables": ["T1", "T2", "T3"],
    }
    assert [(r.kind, r.params) for r in inst.rules] == [("table_capacity", {"max": 2})]
    assert inst.subtask == "dinner"
    # Ann T2, Bob T1, Cid T3, Dee T2, Eve T1 costs nothing and fits two per table
    assert inst.certificate.status == "optimal" and inst.certificate.objective["cost"] == 0


def test_an_imported_instance_records_its_file_and_grades_its_reference(toy: None, seating: Path):
    source = SourceFile.read(seating)
    inst = imported(source)
    assert inst.provenance.source is not None
    assert (inst.provenance.source.name, inst.provenance.source.sha256) == ("party.seat", source.sha256)
    assert grade(inst, json.dumps(inst.reference)).all_pass


def test_with_no_rules_the_optimal_plans_are_counted_at_once_not_re_sampled(
    toy: None, seating: Path, monkeypatch: pytest.MonkeyPatch
):
    """A re-sample could not change the file's problem, so the first attempt counts its
    optimal plans (and keeps it) rather than asking for a unique optimum."""
    asked: list[bool] = []
    certify = pbsolve.generate.certify_spec

    def spy(*args: Any, count_plans: bool, **kwargs: Any) -> Any:
        asked.append(count_plans)
        return certify(*args, count_plans=count_plans, **kwargs)

    monkeypatch.setattr(pbsolve.generate, "certify_spec", spy)
    imported(SourceFile.read(seating))
    imported(SourceFile.read(seating), rules="sampled")
    assert asked == [True, False]


def test_sampled_rules_go_on_top_of_imported_data(toy: None, seating: Path):
    inst = imported(SourceFile.read(seating), rules="sampled", index=3)
    assert inst.data["tables"] == ["T1", "T2", "T3"]
    assert len(inst.rules) > 1
    assert grade(inst, json.dumps(inst.reference)).all_pass


def test_the_same_file_and_seed_give_the_same_bytes(toy: None, seating: Path):
    one, two = imported(SourceFile.read(seating), "sampled", 5, 2), imported(SourceFile.read(seating), "sampled", 5, 2)
    assert one.model_dump_json() == two.model_dump_json()


def test_a_different_file_gives_a_different_instance_id(toy: None, seating: Path, tmp_path: Path):
    other = tmp_path / "other.seat"
    other.write_text(SEATING.replace("Eve 0 3 1", "Eve 1 3 0"))
    assert imported(SourceFile.read(seating)).id != imported(SourceFile.read(other)).id


def test_sampled_instances_carry_no_source_record(toy: None):
    inst = build_instance(0, 0, GenerateOptions(task="seating")).instance
    assert inst is not None and inst.provenance.source is None
    assert "source" not in json.loads(inst.model_dump_json())["provenance"]


def test_the_cli_generates_the_files_problem(toy: None, seating: Path, tmp_path: Path):
    out = tmp_path / "i.jsonl"
    result = run("generate", "--task", "seating", "--from", seating, "--rules", "none", "--n", "1", "--out", out)
    assert result.exit_code == 0, result.output
    inst = Instance.model_validate_json(out.read_text().splitlines()[0])
    assert inst.provenance.source is not None and inst.provenance.source.name == "party.seat"


def test_the_cli_refuses_a_malformed_file_naming_the_line(toy: None, tmp_path: Path):
    bad = tmp_path / "bad.seat"
    bad.write_text(SEATING.replace("Cid 1 1 0", "Cid 1 one 0"))
    result = run("generate", "--task", "seating", "--from", bad, "--out", tmp_path / "i.jsonl")
    assert_clean_failure(result, "bad.seat line 6: a guest and 3 whole-number costs expected")
    assert not (tmp_path / "i.jsonl").exists()


def test_the_cli_refuses_a_file_for_a_task_type_without_an_importer(seating: Path, tmp_path: Path):
    result = run("generate", "--task", "meeting_planning", "--from", seating, "--out", tmp_path / "i.jsonl")
    assert_clean_failure(result, "task type meeting_planning reads no data files")


def test_the_cli_refuses_a_file_without_a_task(seating: Path, tmp_path: Path):
    assert_clean_failure(run("generate", "--from", seating, "--out", tmp_path / "i.jsonl"), "--from reads a data file of one task type: add --task")


def test_the_cli_refuses_a_missing_file(tmp_path: Path):
    result = run("generate", "--task", "meeting_planning", "--from", tmp_path / "none.sm", "--out", tmp_path / "i.jsonl")
    assert_clean_failure(result, "cannot read", "none.sm")


def test_the_cli_refuses_no_rules_with_forced_tiers(tmp_path: Path):
    result = run("generate", "--task", "meeting_planning", "--rules", "none", "--tiers", "hard", "--out", tmp_path / "i.jsonl")
    assert_clean_failure(result, "--rules none samples no rules: drop --tiers and --include")


def test_the_cli_refuses_an_unknown_rules_mode(tmp_path: Path):
    assert_clean_failure(run("generate", "--rules", "some", "--out", tmp_path / "i.jsonl"), "unknown --rules 'some'")


def test_no_rules_without_a_file_keeps_only_the_structural_rules(tmp_path: Path):
    out = tmp_path / "i.jsonl"
    result = run("generate", "--task", "meeting_planning", "--rules", "none", "--n", "2", "--out", out)
    assert result.exit_code == 0, result.output
    for line in out.read_text().splitlines():
        inst = Instance.model_validate_json(line)
        assert all(r.tier == "basic" for r in inst.rules) and inst.spec.basic == []


def test_the_taxonomy_lists_what_a_task_type_reads(toy: None):
    result = run("taxonomy")
    assert "--from FILE reads: a seating file" in " ".join(result.output.split())


def test_a_rejected_file_problem_is_not_attempted_again(toy: None, seating: Path, monkeypatch: pytest.MonkeyPatch):
    """Without sampled rules every attempt would certify the same draft: one rejection is final."""
    calls: list[int] = []

    def times_out(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        raise pbsolve.generate.Rejected("timeout_first_solve", "UNKNOWN")

    monkeypatch.setattr(pbsolve.generate, "certify_spec", times_out)
    options = GenerateOptions(task="seating", source=SourceFile.read(seating), counts=dict.fromkeys(("basic", "medium", "hard", "stateful"), 0))
    out = build_instance(0, 0, options)
    assert out.instance is None and out.rejects == ["timeout_first_solve"] and calls == [1]


def test_with_sampled_rules_a_rejected_file_instance_is_re_sampled(toy: None, seating: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(pbsolve.generate, "certify_spec", lambda *a, **k: (_ for _ in ()).throw(pbsolve.generate.Rejected("not_unique")))
    out = build_instance(0, 0, GenerateOptions(task="seating", source=SourceFile.read(seating), max_attempts=3))
    assert out.rejects == ["not_unique"] * 3
