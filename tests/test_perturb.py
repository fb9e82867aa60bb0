"""`pbsolve perturb`: near-miss answers whose truth is known because the checkers grade them.

Every property is checked here independently of the driver's own self-check: the line's
grade, the rule it breaks, how far its plan is from the reference, and whether a smaller
objective gap or an uncovered rule kind was within one move.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import pbsolve.audit.perturb as perturb_mod
from pbsolve.checkers.scheduling.checks import evaluate
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.cli.main import app
from pbsolve.grading import grade
from pbsolve.parsing import parse_response
from pbsolve.audit.perturb import perturb, perturb_instance
from pbsolve.schema import Instance, ResponseLine
from tests.helpers import TASKS, instance_at, plan_of, single_moves


def failing_rules(inst: Instance, text: str) -> list[str]:
    rule = {it.id: it.rule for it in inst.checklist}
    return [rule[i.id] for i in grade(inst, text).items if not i.passed]


def rule_items(inst: Instance, rules: list[str]) -> list[str]:
    ids = {r.id for r in inst.rules}
    return [r for r in rules if r in ids]


def test_every_line_is_labelled_by_its_grade_and_fits_its_kind(feasible_instance: Instance):
    lines = perturb_instance(feasible_instance, seed=0)
    kinds = {p.kind.split(":")[0] for p in lines}
    assert {"correct", "format", "break_rule", "suboptimal", "wrong_figures", "false_infeasible"} <= kinds
    kind_of = {r.id: r.kind for r in feasible_instance.rules}
    for p in lines:
        g = grade(feasible_instance, p.response)
        assert list(p.fails) == [i.id for i in g.items if not i.passed], p.kind
        failing = failing_rules(feasible_instance, p.response)
        broken = rule_items(feasible_instance, failing)
        cat = p.kind.split(":")[0]
        if cat in ("correct", "format", "alternative_optimum"):
            assert failing == [], (p.kind, failing)
        elif cat == "break_rule":
            assert len(broken) == 1 and kind_of[broken[0]] == p.kind.split(":", 1)[1]
            assert p.target == broken[0] or len(failing) > 1
        elif cat == "suboptimal":
            assert failing == ["objective"]  # plain instance: the plan's true figures are stated
        elif cat == "suboptimal_claims_optimum":
            assert failing == ["objective", "validation"]
        elif cat == "wrong_figures":
            assert failing == ["validation"] and p.target == "validation"
        elif cat == "false_infeasible":
            assert len(failing) == len(feasible_instance.checklist)
        else:
            pytest.fail(f"unexpected kind {p.kind} on a plain feasible instance")


def test_rule_breaks_are_one_or_two_moves_from_the_reference(feasible_instance: Instance):
    ref = plan_of(feasible_instance, feasible_instance.reference)
    lines = [p for p in perturb_instance(feasible_instance, seed=1) if p.kind.startswith("break_rule:")]
    assert lines
    best = feasible_instance.certificate.objective
    for p in lines:
        answer = parse_response(p.response).value
        plan = plan_of(feasible_instance, answer)
        moved = [e for e in ref if plan[e] != ref[e]]
        assert 1 <= len(moved) <= 3, (p.kind, moved)
        # the stated figures are the plan's own: the stated-figures item never fails
        assert "validation" not in failing_rules(feasible_instance, p.response)
        # an objective-preserving break is preferred: if one move breaks only this kind and keeps the
        # optimal figures, the chosen break fails no optimality item either
        kind = p.kind.split(":", 1)[1]
        if any(alone == kind and values == best for alone, values in one_rule_moves(feasible_instance, ref)):
            assert "objective" not in failing_rules(feasible_instance, p.response), p.kind


def one_rule_moves(inst: Instance, plan: dict) -> list[tuple[str, dict]]:
    """(kind of the one broken rule, objective figures) of every single move breaking exactly one rule."""
    d = TimetableData.model_validate(inst.data)
    kind_of = {r.id: r.kind for r in inst.rules}
    out = []
    for q in single_moves(inst, plan):
        verdicts, values = evaluate(d, inst.rules, inst.objective, q)
        broken = [r for r, (ok, _) in verdicts.items() if not ok]
        if len(broken) == 1:
            out.append((kind_of[broken[0]], values))
    return out


def test_every_rule_kind_breakable_alone_by_one_move_is_covered(feasible_instance: Instance):
    inst = feasible_instance
    breakable = {kind for kind, _ in one_rule_moves(inst, plan_of(inst, inst.reference))}
    breaks = [p for p in perturb_instance(inst, seed=0) if p.kind.startswith("break_rule:")]
    covered = {p.kind.split(":", 1)[1] for p in breaks}
    assert breakable <= covered, breakable - covered
    assert len(covered) == len(breaks)  # one per rule kind


def test_suboptimal_plan_has_the_smallest_gap_among_single_moves(feasible_instance: Instance):
    inst = feasible_instance
    d = TimetableData.model_validate(inst.data)
    order = [t.id for t in inst.objective]
    best = tuple(inst.certificate.objective[k] for k in order)
    ref = plan_of(inst, inst.reference)
    worse = []
    for q in single_moves(inst, ref):
        verdicts, values = evaluate(d, inst.rules, inst.objective, q)
        if all(ok for ok, _ in verdicts.values()) and tuple(values[k] for k in order) != best:
            worse.append(tuple(values[k] for k in order))
    sub = next((p for p in perturb_instance(inst, seed=0) if p.kind == "suboptimal"), None)
    if not worse:
        assert sub is None or sub.fails  # found through a swap only
        return
    assert sub is not None
    answer = parse_response(sub.response).value
    values = evaluate(d, inst.rules, inst.objective, plan_of(inst, answer))[1]
    got = tuple(values[k] for k in order)
    assert best < got <= min(worse)
    assert answer["objective"] == values  # the figures it states are the ones it has
    claims = next(p for p in perturb_instance(inst, seed=0) if p.kind == "suboptimal_claims_optimum")
    assert parse_response(claims.response).value["objective"] == inst.certificate.objective


def check_format_variants(inst: Instance) -> dict[str, str]:
    compact = json.dumps(inst.reference, ensure_ascii=False)
    lines = [p for p in perturb_instance(inst, seed=0) if p.kind.startswith("format:")]
    assert len(lines) >= 5
    assert len({p.response for p in lines}) == len(lines)
    for p in lines:
        assert grade(inst, p.response).all_pass == 1, p.kind
        assert p.response != compact
    return {p.kind: p.response for p in lines}


def test_format_variants_pass_every_item_and_really_differ(feasible_instance: Instance):
    by_kind = check_format_variants(feasible_instance)
    first_event = feasible_instance.reference["schedule"][0]["event"]
    assert f'"{first_event.lower()}"' in by_kind["format:id_case"]
    assert "```" not in by_kind["format:prose_bare"] and by_kind["format:prose_bare"].startswith("I worked")
    assert all(isinstance(v, float) for v in parse_response(by_kind["format:float_figures"]).value["objective"].values())
    assert "\t" in by_kind["format:whitespace"] and "```\n" in by_kind["format:fence_untagged"]
    reordered = parse_response(by_kind["format:pretty_reordered"]).value
    assert list(reordered) == list(reversed(list(feasible_instance.reference)))


def test_format_variants_of_a_declared_conflict(infeasible_instance: Instance):
    by_kind = check_format_variants(infeasible_instance)
    assert all(c == c.lower() for c in parse_response(by_kind["format:id_case"]).value["conflict"])


def test_clock_variant_drops_the_leading_zero():
    for index in range(12):
        inst = instance_at("meeting_planning", 0, index)
        if inst is not None and inst.certificate.status == "optimal" and any(
            row["start"].startswith("0") for row in inst.reference["schedule"]
        ):
            break
    else:
        pytest.skip("no meeting with a 0X:00 start")
    p = next(p for p in perturb_instance(inst) if p.kind == "format:clock_9_00")
    starts = [row["start"] for row in parse_response(p.response).value["schedule"]]
    assert not any(s.startswith("0") for s in starts) and grade(inst, p.response).all_pass


def test_infeasible_instances_get_wrong_claims_that_fail_only_the_conflict(infeasible_instance: Instance):
    inst = infeasible_instance
    sets = [set(s) for s in inst.certificate.conflict_sets]
    lines = {p.kind: p for p in perturb_instance(inst, seed=0)}
    assert {"correct", "claims_plan", "conflict_all_rules"} <= set(lines) or {"correct", "claims_plan"} <= set(lines)
    assert len(lines["claims_plan"].fails) == len(inst.checklist)
    for kind, p in lines.items():
        failing = failing_rules(inst, p.response)
        named = set(parse_response(p.response).value.get("conflict") or [])
        if kind == "conflict_superset":
            assert any(s < named for s in sets) and failing == ["conflict"]
        elif kind == "conflict_subset":
            assert any(named < s for s in sets) and failing == ["conflict"]
        elif kind == "conflict_unrelated":
            assert not any(s <= named for s in sets) and failing == ["conflict"]
        elif kind == "conflict_all_rules":
            assert named == {r.id for r in inst.rules} and failing == ["conflict"]
        elif kind in ("correct", "alternative_conflict") or kind.startswith("format:"):
            assert failing == []


def test_mechanism_items_get_their_own_near_misses():
    found = {}
    for kind in ("conflict_validation", "explainability"):
        for index in range(30):
            inst = instance_at("meeting_planning", 11, index, "small", False, (kind,))
            if inst is not None and kind in inst.mechanisms:
                found[kind] = inst
                break
    if not found:
        pytest.skip("no mechanism instance found")
    for kind, inst in found.items():
        want = {"conflict_validation": ("wrong_verification", "verification"), "explainability": ("wrong_binding", "binding")}[kind]
        lines = {p.kind: p for p in perturb_instance(inst, seed=0)}
        assert want[0] in lines
        assert failing_rules(inst, lines[want[0]].response) == [want[1]]
        for p in lines.values():
            if p.kind.startswith("break_rule:"):
                assert len(rule_items(inst, failing_rules(inst, p.response))) == 1
                assert "verification" not in failing_rules(inst, p.response)  # recomputed for the moved plan


def test_deterministic_per_instance_and_seed(feasible_instances, infeasible_instances):
    insts = [*feasible_instances.values(), *infeasible_instances.values()]
    both = perturb(insts, seed=5).perturbations
    alone = perturb(list(reversed(insts)), seed=5).perturbations
    assert sorted(p.line()["response_id"] for p in both) == sorted(p.line()["response_id"] for p in alone)
    assert {p.response_id: p for p in both} == {p.response_id: p for p in alone}  # order-free, so repeatable
    other = {p.response_id: p.response for p in perturb(insts[:4], seed=6).perturbations}
    assert any(other.get(p.response_id) != p.response for p in both)


def test_lines_are_response_lines_with_unique_ids(feasible_instances, infeasible_instances):
    report = perturb([*feasible_instances.values(), *infeasible_instances.values()], seed=0)
    ids = [p.response_id for p in report.perturbations]
    assert len(ids) == len(set(ids))
    for p in report.perturbations:
        line = ResponseLine.model_validate(json.loads(json.dumps(p.line())))
        assert line.model_extra["kind"] == p.kind and line.response_id == p.response_id
    assert report.rejected == {} and sum(report.kinds.values()) == len(ids)


def test_kind_filter_keeps_only_the_chosen_categories(any_instance):
    lines = perturb_instance(any_instance, seed=0, categories=["break_rule", "format:id_case"])
    assert lines and all(p.kind.startswith("break_rule:") or p.kind == "format:id_case" for p in lines)
    everything = {p.response_id: p.response for p in perturb_instance(any_instance, seed=0)}
    assert all(everything[p.response_id] == p.response for p in lines)  # filtering changes no other line


def test_a_family_without_the_hook_gets_the_generic_kinds_and_a_message(any_instance, monkeypatch):
    monkeypatch.setattr(perturb_mod, "family_hook", lambda fid: None)
    report = perturb([any_instance])
    kinds = {p.kind for p in report.perturbations}
    assert "correct" in kinds and "wrong_figures" in kinds
    assert not any(k.startswith(("break_rule", "suboptimal")) for k in kinds)
    assert report.no_hook == {"scheduling": 1}
    assert "has no `near_misses` hook" in report.messages()[0]


def test_a_hook_that_raises_is_reported_not_fatal(any_instance, monkeypatch):
    def broken(inst, rng):
        raise RuntimeError("boom")

    monkeypatch.setattr(perturb_mod, "family_hook", lambda fid: broken)
    report = perturb([any_instance])
    assert report.hook_errors == {any_instance.id: "RuntimeError: boom"}
    assert any(p.kind == "correct" for p in report.perturbations)


def test_a_hook_candidate_contradicting_its_kind_is_dropped(any_instance, monkeypatch):
    ref = any_instance.reference
    monkeypatch.setattr(perturb_mod, "family_hook", lambda fid: lambda inst, rng: [("break_rule:room_fit", ref), ("format:odd", {"feasible": True})])
    report = perturb([any_instance])
    assert report.rejected == {"break_rule:room_fit": 1, "format:odd": 1}
    assert not any(p.kind in ("break_rule:room_fit", "format:odd") for p in report.perturbations)
    assert any("dropped 1 break_rule:room_fit" in m for m in report.messages())


def test_other_families_get_confirmed_generic_lines():
    from pbsolve.family import families
    from pbsolve.generate import GenerateOptions, build_instance

    others = [f for f in families() if f != "scheduling"]
    if not others:
        pytest.skip("only the scheduling family is installed")
    for fid in others:
        inst = build_instance(0, 0, GenerateOptions(family=fid, size="small")).instance
        if inst is None:
            continue
        for p in perturb_instance(inst, seed=0):
            assert [i.id for i in grade(inst, p.response).items if not i.passed] == list(p.fails)


def test_cli_perturb_writes_labelled_lines(tmp_path, feasible_instances, infeasible_instances):
    inst_path = tmp_path / "instances.jsonl"
    insts = [*feasible_instances.values(), *infeasible_instances.values()]
    inst_path.write_text("".join(i.model_dump_json() + "\n" for i in insts) + "not json\n")
    out = tmp_path / "perturbed.jsonl"
    r = CliRunner().invoke(app, ["perturb", "--instances", str(inst_path), "--out", str(out), "--summary-json"])
    assert r.exit_code == 1, r.output  # the bad instance line is reported, the rest is processed
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert summary["responses"] == len(lines) and summary["instances"] == len(insts)
    assert set(lines[0]) >= {"id", "response_id", "kind", "response", "fails"}
    grade_r = CliRunner().invoke(app, ["grade", "--instances", str(inst_path), "--responses", str(out), "--out", str(tmp_path / "g.jsonl")])
    grades = [json.loads(x) for x in (tmp_path / "g.jsonl").read_text().splitlines()]
    assert grade_r.exit_code == 1 and len(grades) == len(lines)
    for line, g in zip(lines, grades):
        assert [i["id"] for i in g["items"] if not i["passed"]] == line["fails"]
    r = CliRunner().invoke(app, ["perturb", "--instances", str(inst_path), "--out", str(out), "--kinds", "nonsense"])
    assert r.exit_code == 1 and "unknown kind" in r.output


@pytest.mark.parametrize("task", TASKS)
def test_default_size_instances_are_perturbed_cleanly(task):
    """(How fast is a benchmark's question, not a timed test's: a loaded CI machine would fail it.)"""
    from pbsolve.generate import GenerateOptions, build_instance

    inst = build_instance(4, 0, GenerateOptions(task=task, size="default")).instance
    if inst is None:
        pytest.skip("no instance")
    report = perturb([inst])
    assert report.rejected == {} and report.hook_errors == {}
    assert report.perturbations
