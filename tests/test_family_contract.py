"""The family contract: every family is a Family, its checker and renderer expose the
protocol functions, and every pool kind has an encoder, a check and a sentence; plus the
canonical-answer hook that uniqueness certification relies on for symmetric answers."""

from __future__ import annotations

import random
import sys
import types

import pytest

from pbsolve import family as family_mod
from pbsolve.certify import Rejected, SolverLimits, certify_feasible
from pbsolve.family import Checker, Draft, Family, FamilyContractError, NoDraft, Renderer, Symmetry, families
from pbsolve.params import NoParams
from pbsolve.sampler import sample_spec
from pbsolve.taxonomy import ConstraintSpec, FamilySpec, SubtaskSpec, TaskSpec, mechanism_pool

# -- a deliberately incomplete fake family ---------------------------------------------
FAKE_TASK = TaskSpec(
    id="fake_task",
    name="Fake task",
    family="fake",
    summary="a task for contract tests",
    subtasks=(SubtaskSpec("only", "Only", "the only subtask"),),
    pool=(
        ConstraintSpec("walls", "basic", "a base rule"),
        ConstraintSpec("teleport", "basic", "a kind nothing implements"),
        *mechanism_pool("survive one failure"),
    ),
    base_rules=("walls",),
)


class FakeFamily(Family):
    spec = FamilySpec(id="fake", name="Fake", summary="contract tests", tasks=(FAKE_TASK,))

    def __init__(self, encodes: frozenset[str] = frozenset({"walls", "teleport"})) -> None:
        self.encodes = encodes

    def draft(self, spec, rng):
        raise NoDraft("fake")

    def build_model(self, draft):
        raise NotImplementedError

    def encoder_kinds(self, task: str) -> frozenset[str]:
        return self.encodes

    def make_infeasible(self, draft, rng, limits):
        return None

    def make_disruption(self, draft, plan, rng, limits, scenario=False):
        return None

    def make_robust(self, draft, rng, limits):
        return None

    def make_uncertain(self, draft, rng, limits):
        return None

    def optimistic(self, draft: Draft, uid: str) -> Draft:
        return draft

    def uncertain_ids(self, draft: Draft) -> list[str]:
        return []

    def report(self, draft, plan):
        return {}


def _checker(checks: frozenset[str] = frozenset({"walls", "teleport"})) -> types.ModuleType:
    m = types.ModuleType("pbsolve.checkers.fake")
    m.check_answer = lambda instance, answer: {}
    m.answer_schema = lambda task, data, objective, mechanisms, recovery, rules: {}
    m.baseline_answer = lambda instance: "{}"
    m.format_text = lambda task: "a plan"
    m.known_kinds = lambda task: (dict.fromkeys(checks, NoParams), {})
    m.read_data = lambda instance: instance.data
    return m


def _renderer(sentences: frozenset[str] = frozenset({"walls", "teleport"})) -> types.ModuleType:
    m = types.ModuleType("pbsolve.renderers.fake")
    m.render_rule = lambda rule, data, task: "a rule"
    m.render_objective = lambda term, data, task: "a term"
    m.render_prompt = lambda data, rules, objective, task, subtask, mechanisms, recovery: "a prompt"
    m.sentence_kinds = lambda task: sentences
    return m


@pytest.fixture
def fake_installed(monkeypatch: pytest.MonkeyPatch):
    """Install a fake family next to the real ones; yields a function that sets its parts."""

    def install(fam: object, chk: types.ModuleType, rend: types.ModuleType) -> None:
        model = types.ModuleType("pbsolve.models.fake")
        model.FAMILY = fam
        monkeypatch.setitem(sys.modules, "pbsolve.models.fake", model)
        monkeypatch.setitem(sys.modules, "pbsolve.checkers.fake", chk)
        monkeypatch.setitem(sys.modules, "pbsolve.renderers.fake", rend)

    real = family_mod._family_ids()
    monkeypatch.setattr(family_mod, "_family_ids", lambda: [*real, "fake"])
    for cached in (families, family_mod.checker, family_mod.renderer):
        cached.cache_clear()
    yield install
    for cached in (families, family_mod.checker, family_mod.renderer):
        cached.cache_clear()


def test_installed_families_satisfy_the_contract() -> None:
    for fid, fam in families().items():
        assert isinstance(fam, Family)
        assert isinstance(family_mod.checker(fid), Checker)
        assert isinstance(family_mod.renderer(fid), Renderer)


def test_a_complete_fake_family_loads(fake_installed) -> None:
    fake_installed(FakeFamily(), _checker(), _renderer())
    assert "fake" in families()


def test_a_family_object_that_is_not_a_family_is_refused(fake_installed) -> None:
    class Loose:  # the hooks, but not the contract's base class
        spec = FakeFamily.spec

    fake_installed(Loose(), _checker(), _renderer())
    with pytest.raises(FamilyContractError, match=r"family fake: FAMILY is a Loose, not a pbsolve.family.Family"):
        families()


def test_a_pool_kind_without_an_encoder_is_named(fake_installed) -> None:
    fake_installed(FakeFamily(encodes=frozenset({"walls"})), _checker(), _renderer())
    with pytest.raises(FamilyContractError, match=r"family fake: task fake_task: no encoder for teleport$"):
        families()


def test_a_pool_kind_without_a_check_or_a_sentence_is_named(fake_installed) -> None:
    fake_installed(FakeFamily(), _checker(frozenset({"teleport"})), _renderer(frozenset({"walls"})))
    with pytest.raises(FamilyContractError) as err:
        families()
    assert "task fake_task: no check for walls" in str(err.value)
    assert "task fake_task: no sentence for teleport" in str(err.value)


def test_a_renderer_without_a_protocol_function_is_named(fake_installed) -> None:
    rend = _renderer()
    del rend.sentence_kinds
    fake_installed(FakeFamily(), _checker(), rend)
    with pytest.raises(FamilyContractError, match=r"family fake: renderer pbsolve.renderers.fake lacks sentence_kinds"):
        families()


def test_a_checker_without_a_protocol_function_is_named(fake_installed) -> None:
    chk = _checker()
    del chk.known_kinds, chk.read_data
    fake_installed(FakeFamily(), chk, _renderer())
    with pytest.raises(FamilyContractError, match=r"checker pbsolve.checkers.fake lacks known_kinds, read_data"):
        families()


def test_a_family_must_implement_every_hook() -> None:
    class Partial(Family):
        spec = FakeFamily.spec

        def draft(self, spec, rng):
            raise NoDraft("partial")

    with pytest.raises(TypeError, match="abstract"):
        Partial()  # type: ignore[abstract]


def test_the_scheduling_renderer_has_one_sentence_per_rule_kind_with_a_parameter_model() -> None:
    from pbsolve.checkers.scheduling.rule_params import RULE_PARAMS
    from pbsolve.renderers import scheduling as rend

    assert rend.sentence_kinds("meeting_planning") == frozenset(RULE_PARAMS)


# -- the canonical-answer hook ----------------------------------------------------------
def _grouping_drafts(n: int) -> list[Draft]:
    fam = families()["allocation"]
    out, index = [], 0
    while len(out) < n:
        spec = sample_spec(3, index, task="student_grouping", size="tiny", counts={"hard": 0})
        index += 1
        try:
            out.append(fam.draft(spec, random.Random(spec.seed)))
        except NoDraft:
            continue
    return out


class _Builder:
    def __init__(self, build) -> None:
        self.build_model = build


def test_grouping_relabel_numbers_groups_by_first_listed_student() -> None:
    from pbsolve.models.allocation.grouping import relabel

    # students 0..3 in groups 2, 0, 2, 1 (k = 3) -> canonical 0, 1, 0, 2
    values = [0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 1, 0]
    assert relabel(values, 3) == [1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1]


def test_cutting_every_relabelling_certifies_what_symmetry_breaking_certifies() -> None:
    from pbsolve.models.allocation.grouping import build

    limits = SolverLimits()
    free = _Builder(lambda d: build(d, break_symmetry=False))
    broken = _Builder(build)
    for draft in _grouping_drafts(4):
        a = certify_feasible(broken, draft, limits)
        b = certify_feasible(free, draft, limits)
        assert (a.plan, a.certificate) == (b.plan, b.certificate)


def test_without_the_hook_a_relabelled_copy_counts_as_a_second_optimum() -> None:
    from pbsolve.models.allocation.grouping import build

    def unhooked(d: Draft):
        sm = build(d, break_symmetry=False)
        sm.symmetry = None
        return sm

    draft = _grouping_drafts(1)[0]
    draft.objective = [t for t in draft.objective if t.kind != "grouping_code"]  # labels then cost nothing
    cert = certify_feasible(_Builder(unhooked), draft, SolverLimits()).certificate
    assert cert.optimal_plans > 1
    hooked = certify_feasible(_Builder(lambda d: build(d, break_symmetry=False)), draft, SolverLimits()).certificate
    assert cert.optimal_plans > hooked.optimal_plans


def test_a_plan_the_model_claims_canonical_but_is_not_is_rejected() -> None:
    from pbsolve.models.allocation.grouping import build

    def lying(d: Draft):
        sm = build(d)
        sm.symmetry = Symmetry(canonical=lambda v: [1 - x for x in v], images=lambda v: [v], in_model=True)
        return sm

    with pytest.raises(Rejected) as err:
        certify_feasible(_Builder(lying), _grouping_drafts(1)[0], SolverLimits())
    assert err.value.reason == "solver_disagreement"
