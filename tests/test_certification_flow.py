"""The certification flow iterates over the mechanism objects: each hard mechanism's
``prepare`` step runs in certify order before the main certification, its ``after`` step
in the reverse order after it, and a mechanism with no plan certifies the instance alone.
A mechanism added to the registry needs no edit of ``certify_spec``."""

from __future__ import annotations

import random

import pytest

from pbsolve.certify import SolverLimits
from pbsolve.family import NoDraft, family
from pbsolve.mechanisms import HARD_MECHANISMS, Mechanism, certification
from pbsolve.sampler import sample_spec

ALONE = object()  # the result a mechanism that certifies alone hands back


def _recorder(mid: str, order: int, log: list[tuple[str, str]], infeasible: bool = False) -> Mechanism:
    """A hard mechanism that only records its solver-side steps."""

    class Recorder(Mechanism):
        id = mid
        kind = "hard"
        tier = "hard"
        certify_order = order
        position = 90 + order
        prompt_position = 0
        summary = "records its certification steps"

        def prepare(self, fam, draft, rng, limits):
            log.append(("prepare", self.id))
            return draft

        def after(self, fam, certified, rng, limits):
            assert certified.result.plan is not None  # the draft is certified by now
            log.append(("after", self.id))

        def certify_alone(self, fam, draft, rng, limits):
            log.append(("alone", self.id))
            return certification.Certified(draft, ALONE)  # type: ignore[arg-type]

    Recorder.infeasible = infeasible
    return Recorder()


def _plain_draft():
    for index in range(40):
        spec = sample_spec(7, index, 0, None, "meeting_planning", "tiny")
        if spec.hard:
            continue
        fam = family(spec.family)
        rng = random.Random(spec.seed)
        try:
            return fam, fam.draft(spec, rng), rng
        except NoDraft:  # try the next index
            continue
    pytest.skip("no plain draft")


def test_prepare_steps_run_in_certify_order_and_after_steps_in_reverse(monkeypatch):
    log: list[tuple[str, str]] = []
    mechs = (_recorder("first", 1, log), _recorder("second", 2, log), _recorder("unasked", 3, log))
    monkeypatch.setattr(certification, "HARD_MECHANISMS", mechs)
    fam, draft, rng = _plain_draft()
    draft.spec = draft.spec.model_copy(update={"hard": ["second", "first"]})
    out = certification.certify_spec(fam, draft, rng, SolverLimits(), count_plans=False)
    assert log == [("prepare", "first"), ("prepare", "second"), ("after", "second"), ("after", "first")]
    assert out.result.plan is not None


def test_a_mechanism_with_no_plan_certifies_the_instance_alone(monkeypatch):
    log: list[tuple[str, str]] = []
    mechs = (_recorder("before", 1, log), _recorder("nothing", 2, log, infeasible=True), _recorder("later", 3, log))
    monkeypatch.setattr(certification, "HARD_MECHANISMS", mechs)
    fam, draft, rng = _plain_draft()
    draft.spec = draft.spec.model_copy(update={"hard": ["before", "nothing", "later"]})
    out = certification.certify_spec(fam, draft, rng, SolverLimits(), count_plans=False)
    assert log == [("alone", "nothing")]
    assert out.result is ALONE


def test_the_registry_mechanisms_are_the_ones_certification_iterates():
    assert certification.HARD_MECHANISMS is HARD_MECHANISMS
    assert [m.certify_order for m in HARD_MECHANISMS] == sorted(m.certify_order for m in HARD_MECHANISMS)


@pytest.mark.parametrize("mech", HARD_MECHANISMS, ids=lambda m: m.id)
def test_only_the_infeasible_mechanism_certifies_alone(mech):
    overrides = type(mech).certify_alone is not Mechanism.certify_alone
    assert overrides == mech.infeasible
