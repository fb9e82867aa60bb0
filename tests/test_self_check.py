"""The generator's self-check (issue 19): every certified reference answer must pass its own
checker, and a disagreement is an error naming the instance and the items, never a reason
to re-sample (which would turn a too-strict checker into a silently smaller data set)."""

from __future__ import annotations

import pickle

import pytest

import pbsolve.generate as generate
from pbsolve.family import all_tasks
from pbsolve.generate import CheckerDisagreement, GenerateOptions, build_instance
from pbsolve.mechanisms import HARD_KINDS, REPORTING_KINDS
from pbsolve.schema import Grade

TIERS = ("basic", "medium", "hard", "stateful")
KINDS = (*HARD_KINDS, *REPORTING_KINDS)
SEED = 0
DRAWS = [("tiny", 0), ("tiny", 1), ("tiny", 2), ("small", 0), ("small", 1), ("small", 2)]  # (size, index) built per option


def sample_options() -> dict[str, GenerateOptions]:
    """A fixed sample: every task type with each tier forced and with each hard kind included."""
    out: dict[str, GenerateOptions] = {}
    for task in (t.id for t in all_tasks()):
        for tier in TIERS:
            out[f"{task} tier={tier}"] = GenerateOptions(task=task, force_tiers=[tier])
        for kind in KINDS:
            out[f"{task} include={kind}"] = GenerateOptions(task=task, include=[kind])
    return out


def test_reference_answers_of_a_sample_covering_every_task_tier_and_hard_kind_all_pass_their_checker():
    """A disagreement raises CheckerDisagreement out of build_instance and fails this test
    with the instance id and the failing items. The sample must also really produce
    instances for every option a task admits, or it would check nothing there."""
    not_covered = []
    for label, opts in sample_options().items():
        outcomes = [build_instance(SEED, index, opts.model_copy(update={"size": size})) for size, index in DRAWS]
        if all(o.rejects == ["no_compatible_spec"] for o in outcomes):
            continue  # the task has no such tier (stateful rules are scheduling and procurement only)
        kind = label.split("include=")[-1] if "include=" in label else None
        made = [o.instance for o in outcomes if o.instance is not None]
        if not any(kind is None or kind in inst.mechanisms for inst in made):
            not_covered.append(label)
    assert not not_covered


def _failing_first_item(real_grade):  # noqa: ANN001, ANN202
    """A grade function whose checker is 'too strict': it fails the first item of every answer."""

    def strict(instance, response, *args, **kwargs) -> Grade:  # noqa: ANN001
        g = real_grade(instance, response, *args, **kwargs)
        first = g.items[0].model_copy(update={"passed": False, "reason": "too strict"})
        return g.model_copy(update={"items": [first, *g.items[1:]], "all_pass": 0})

    return strict


def test_a_reference_answer_its_checker_rejects_stops_generation_naming_the_instance_and_item(monkeypatch):
    opts = GenerateOptions(task="meeting_planning", size="tiny")
    index = next(i for i in range(10) if build_instance(SEED, i, opts).instance is not None)
    monkeypatch.setattr(generate, "grade", _failing_first_item(generate.grade))
    with pytest.raises(CheckerDisagreement) as err:  # raised, not counted as a reject and re-sampled
        build_instance(SEED, index, opts)
    assert err.value.instance_id.startswith(f"meeting_planning-{SEED}-{index}-")
    assert err.value.failed and err.value.failed[0].endswith(": too strict")
    assert err.value.instance_id in str(err.value) and "too strict" in str(err.value)


def test_a_checker_disagreement_crosses_a_worker_process_boundary_intact():
    err = CheckerDisagreement("meeting_planning-0-3-abcdef", ["C4: person A double-booked"])
    back = pickle.loads(pickle.dumps(err))
    assert (back.instance_id, back.failed, str(back)) == (err.instance_id, err.failed, str(err))
