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


def sample_options(task: str) -> dict[str, GenerateOptions]:
    """A fixed sample: the task type with each tier forced and with each hard kind included."""
    out: dict[str, GenerateOptions] = {}
    for tier in TIERS:
        out[f"{task} tier={tier}"] = GenerateOptions(task=task, force_tiers=[tier])
    for kind in KINDS:
        out[f"{task} include={kind}"] = GenerateOptions(task=task, include=[kind])
    return out


def _covers(opts: GenerateOptions, kind: str | None) -> bool | None:
    """Build the draws in turn until one instance covers the option (True); None when the
    task has no such option at all (every draw: no compatible spec), else False."""
    admitted = False
    for size, index in DRAWS:
        outcome = build_instance(SEED, index, opts.model_copy(update={"size": size}))
        admitted = admitted or outcome.rejects != ["no_compatible_spec"]
        inst = outcome.instance
        if inst is not None and (kind is None or kind in inst.mechanisms):
            return True
    return False if admitted else None


@pytest.mark.parametrize("task", [t.id for t in all_tasks()])
def test_reference_answers_of_a_sample_covering_every_tier_and_hard_kind_all_pass_their_checker(task: str):
    """A disagreement raises CheckerDisagreement out of build_instance and fails this test
    with the instance id and the failing items. The sample must also really produce
    instances for every option a task admits, or it would check nothing there (stateful
    rules, for one, exist only where the domain carries state)."""
    not_covered = [
        label
        for label, opts in sample_options(task).items()
        if _covers(opts, label.split("include=")[-1] if "include=" in label else None) is False
    ]
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
