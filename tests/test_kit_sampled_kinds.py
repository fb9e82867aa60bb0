"""The kit's ``sampled_kinds``: the rule kinds a draft builds, from its spec's sampled tiers
and the subtask's forced kinds (the structure a subtask always carries)."""

from __future__ import annotations

from pbsolve.kit import sampled_kinds
from pbsolve.schema import GenerationSpec


def _spec(basic: list[str], medium: list[str] = [], stateful: list[str] = []) -> GenerationSpec:  # noqa: B006
    return GenerationSpec(
        family="toy", task="toy_task", subtask="plain", seed=0, size="tiny",
        basic=basic, medium=medium, stateful=stateful,
    )  # fmt: skip


def test_the_sampled_kinds_come_in_tier_order_without_base_rules():
    spec = _spec(["cap", "base"], ["gap"], ["fatigue"])
    assert sampled_kinds(spec, {"base"}) == ["cap", "gap", "fatigue"]


def test_forced_kinds_the_sampler_did_not_draw_follow_in_their_order():
    assert sampled_kinds(_spec(["cap"], ["gap"]), set(), ["window", "gap", "shift"]) == ["cap", "gap", "window", "shift"]


def test_a_forced_kind_listed_twice_is_added_once():
    assert sampled_kinds(_spec(["cap"]), set(), ["window", "window"]) == ["cap", "window"]
