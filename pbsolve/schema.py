"""Pydantic types at pbsolve's boundaries: specs, instances, responses and grades.

Field names here are a public contract (files, tools and trainers rely on them);
rename nothing without a schema version bump.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SerializerFunctionWrapHandler, model_serializer

from pbsolve.sources import SourceRecord

SCHEMA_VERSION = "1.0"

Tier = Literal["basic", "medium", "hard", "stateful"]
TIERS: tuple[Tier, ...] = ("basic", "medium", "hard", "stateful")
RewardMode = Literal["all_pass", "avg_pass", "feasible"]
Size = Literal["tiny", "small", "default", "large"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GenerationSpec(_Strict):
    """r = (task, subtask, S_b, S_m, S_h; seed): everything an instance is rebuilt from."""

    family: str
    task: str
    subtask: str
    basic: list[str] = Field(default_factory=list, description="sampled basic constraint ids")
    medium: list[str] = Field(default_factory=list)
    hard: list[str] = Field(default_factory=list)
    stateful: list[str] = Field(default_factory=list)
    seed: int
    size: Size = "default"


class Rule(_Strict):
    """A numbered rule of the prompt: its kind selects a solver encoding and a checker."""

    id: str = Field(description="stable id shown in the prompt, e.g. R3")
    kind: str = Field(description="constraint kind, e.g. person_no_overlap")
    tier: Tier
    params: dict[str, Any] = Field(default_factory=dict)
    text: str = Field(default="", description="the sentence stating the rule")


class ObjectiveTerm(_Strict):
    """One level of a lexicographic objective (all minimised, integer valued)."""

    id: str = Field(description="key under which the answer reports this figure")
    kind: str
    params: dict[str, Any] = Field(default_factory=dict)
    text: str = ""


class ChecklistItem(_Strict):
    id: str
    tier: Tier
    rule: str = Field(description="rule id, or 'format', 'objective', 'validation', 'infeasibility', 'conflict'")
    text: str


class Certificate(_Strict):
    status: Literal["optimal", "infeasible"]
    objective: dict[str, int] | None = Field(
        default=None, description="certified lexicographic optimum, one value per objective term"
    )
    optimal_plans: int = Field(description="number of optimal plans on the answer variables (exact up to the cap)")
    optimal_plans_cap: int
    optimal_plans_exact: bool = Field(
        description="false when counting stopped at the cap or its time budget: the count is then a lower bound"
    )
    determinacy: Literal["unique", "value", "infeasible"]
    second_best: dict[str, int] | None = Field(
        default=None, description="objective of the best plan other than the reference (unique optima)"
    )
    margin: int | None = Field(
        default=None, description="gap between second-best and optimum on the first objective term that differs"
    )
    margin_term: str | None = None
    conflict_sets: list[list[str]] | None = Field(
        default=None, description="every minimal set of numbered rules that cannot all hold (infeasible only)"
    )
    binding_rules: list[str] | None = Field(
        default=None, description="explainability: rules whose removal alone allows a better plan"
    )
    conservative_inputs: list[str] | None = Field(
        default=None, description="incompleteness: uncertain inputs whose best case would allow a better plan"
    )
    confirmations: list[str] = Field(default_factory=list, description="independent solver runs that agreed")


class Recovery(_Strict):
    """Exception recovery: a named scenario and the certified best recovery plan for it."""

    scenario: list[Rule] = Field(description="rules that hold in the scenario, on top of the instance's rules")
    objective: list[ObjectiveTerm] = Field(description="recovery objective: changes from the main plan first")
    certificate: Certificate


class RewriteRecord(_Strict):
    """How the LLM rewrite of the prompt's narrative went (``--renderer llm`` only)."""

    model: str
    accepted: bool = Field(description="true: the prompt carries the LLM's wording; false: the template text")
    attempts: int = Field(description="rewrites requested")
    reasons: list[str] = Field(
        default_factory=list, description="why each rejected attempt failed the fidelity guard, or why a call failed"
    )
    calls: int = Field(default=0, description="HTTP requests made, retries included")
    tokens: int = Field(default=0, description="total tokens used by the rewrite calls")


class Provenance(_Strict):
    pbsolve_version: str
    schema_version: str
    solver: str
    solver_version: str
    renderer: str = Field(
        default="template", description="'template', or 'llm' when the prompt carries an accepted LLM rewrite"
    )
    rewrite: RewriteRecord | None = Field(
        default=None, description="the LLM rewrite attempt (absent for template rendering)"
    )
    source: SourceRecord | None = Field(
        default=None, description="the data file the instance was built from (`generate --from`); absent if sampled"
    )

    @model_serializer(mode="wrap")
    def _omit_absent_records(self, handler: SerializerFunctionWrapHandler) -> Any:
        # template-rendered, sampled instances serialise exactly as before the fields existed
        data = handler(self)
        if isinstance(data, dict):
            for key in ("rewrite", "source"):
                if data.get(key) is None:
                    data.pop(key, None)
        return data


class Instance(_Strict):
    id: str
    family: str
    task: str
    subtask: str
    seed: int
    spec: GenerationSpec
    tiers: list[Tier]
    prompt: str
    data: dict[str, Any] = Field(description="family-specific problem data (entities and numbers)")
    rules: list[Rule]
    objective: list[ObjectiveTerm]
    mechanisms: list[str] = Field(
        default_factory=list, description="hard-tier and reporting mechanisms the instance carries"
    )
    checklist: list[ChecklistItem]
    certificate: Certificate
    recovery: Recovery | None = None
    reference: dict[str, Any] = Field(description="the certified reference answer, in the answer schema")
    answer_schema: dict[str, Any] = Field(description="JSON Schema of an answer")
    provenance: Provenance
    _memo: dict[str, Any] = PrivateAttr(default_factory=dict)

    def memo(self, key: str, make: Any) -> Any:
        """Per-instance cache for derived data (parsed family data, lookup tables), so
        grading many answers to one instance parses it once. Never serialised."""
        # The private dict itself: reading ``self._memo`` goes through pydantic's
        # ``__getattr__`` and costs microseconds, and grading reads the cache several times.
        cache: dict[str, Any] = self.__pydantic_private__["_memo"]  # type: ignore[index]  # never None: the model has a private attribute
        if key not in cache:
            cache[key] = make()
        return cache[key]

    def memo_clear(self) -> None:
        """Drop everything cached for this instance (its contents changed)."""
        self._memo = {}

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Instance:
        """A copy with its own, empty cache: derived data of the original may not hold for it."""
        copy = super().model_copy(update=update, deep=deep)
        copy._memo = {}
        return copy

    def __getstate__(self) -> dict[Any, Any]:
        # the cache may hold modules and is rebuilt on demand: it never crosses a process
        state = super().__getstate__()
        return {**state, "__pydantic_private__": {**(state.get("__pydantic_private__") or {}), "_memo": {}}}


class ResponseLine(BaseModel):
    """One answer to grade; extra keys (e.g. a perturbation kind) are kept."""

    model_config = ConfigDict(extra="allow")

    id: str
    response: str
    response_id: str | None = None


class ItemResult(_Strict):
    id: str
    passed: bool
    reason: str


class Grade(_Strict):
    id: str
    response_id: str | None = None
    all_pass: int
    avg_pass: float
    reward: float
    reward_mode: RewardMode
    items: list[ItemResult]
    parse_error: str | None = None
    grader_error: str | None = Field(
        default=None,
        description="set only when the grader failed (checker error, invalid ground truth) and the caller asked for "
        "a zero instead of an exception: the reward 0 then says nothing about the answer",
    )


def instance_json_schema() -> dict[str, Any]:
    return Instance.model_json_schema()
