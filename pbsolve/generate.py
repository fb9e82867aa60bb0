"""The generation pipeline: spec -> draft -> certificate -> rendered, self-checked Instance.

``build_instance(run_seed, index, options)`` depends on nothing else, so instance i of
a run can be rebuilt alone and any number of worker processes give the same bytes.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

import ortools
from pydantic import BaseModel, Field, model_validator

from pbsolve import __version__
from pbsolve.answer_format import render_answer_format
from pbsolve.certify import Rejected, SolverLimits
from pbsolve.family import FamilyModel, NoDraft, checker, family, renderer
from pbsolve.mechanisms import HARD_KINDS, Certified, certify_spec
from pbsolve.grading import grade
from pbsolve.llm import LLMConfig
from pbsolve.sampler import derive_seed, sample_spec
from pbsolve.schema import SCHEMA_VERSION, ChecklistItem, Instance, Provenance, Size, Tier


class GenerateOptions(BaseModel):
    family: str | None = None
    task: str | None = None
    size: Size = "default"
    force_tiers: list[Tier] = Field(default_factory=list)
    include: list[str] = Field(default_factory=list, description="constraint ids every instance must carry")
    max_attempts: int = Field(default=6, ge=1, description="re-samples per index before giving up")
    require_unique: bool = Field(default=True, description="re-sample until the optimum is unique (last try keeps it)")
    deterministic_time: float = 20.0
    plan_count_cap: int = 16
    counts: dict[Tier, int] | None = Field(
        default=None, description="sampled constraints per tier (the difficulty loop sets them); None: the priors"
    )
    renderer: Literal["template", "llm"] = Field(
        default="template", description="llm: an LLM rewords the narrative under the fidelity guard (pbsolve.rewriter)"
    )
    rewriter: LLMConfig | None = Field(default=None, description="the endpoint of the llm renderer")
    rewrite_attempts: int = Field(default=3, ge=1, description="rewrites tried before the template text is kept")

    @model_validator(mode="after")
    def _rewriter_given(self) -> "GenerateOptions":
        if self.renderer == "llm" and self.rewriter is None:
            raise ValueError("renderer 'llm' needs a rewriter endpoint (an LLMConfig)")
        return self


@dataclass
class Outcome:
    index: int
    instance: Instance | None
    rejects: list[str] = field(default_factory=list)
    seconds: float = 0.0
    first_solve_s: float = 0.0
    uniqueness_s: float = 0.0
    hard_rejects: list[str] = field(default_factory=list)  # "<hard kind>:<reason>"
    error: str | None = None  # why no spec could be sampled at all


def checklist_for(rules: list, feasible: bool, mechanisms: list[str], changes: int | None = None) -> list[ChecklistItem]:
    items = [
        ChecklistItem(
            id="C1",
            tier="basic",
            rule="format",
            text="The answer is one JSON object in the form the instance calls for: a complete plan naming every "
            "item exactly once with valid values when a plan exists, a declaration of infeasibility with a rule "
            "list when none does.",
        )
    ]

    def add(tier: Tier, rule: str, text: str) -> None:
        items.append(ChecklistItem(id=f"C{len(items) + 1}", tier=tier, rule=rule, text=text))

    if not feasible:
        add("hard", "infeasibility", "The answer declares that no plan satisfies every rule.")
        add("hard", "conflict", "The answer names a minimal set of rules that cannot all hold together.")
        return items
    for r in rules:
        add(r.tier, r.id, f"{r.id}: {r.text}")
    add("basic", "objective", "The plan's objective figures, recomputed from the plan, equal the certified optimum.")
    add("medium", "validation", "The objective figures the answer states equal those recomputed from its own plan.")
    if "min_change_replanning" in mechanisms:
        add("hard", "objective:changes", f"The plan changes exactly the certified minimum number of assignments ({changes}).")
    if "conflict_validation" in mechanisms:
        add("medium", "verification", "The verification figures the answer reports equal those of its own plan.")
    if "explainability" in mechanisms:
        add("hard", "binding", "The answer names exactly the rules whose removal alone would allow a better plan.")
    if "local_incompleteness" in mechanisms:
        add("hard", "conservative", "The answer names exactly the uncertain inputs whose best case would allow a better plan.")
    if "exception_recovery" in mechanisms:
        add("hard", "recovery:format", "The answer gives a complete recovery plan for the scenario.")
        add("hard", "recovery:rules", "The recovery plan satisfies every rule and the scenario.")
        add("hard", "recovery:objective", "The recovery plan's figures (changes from the main plan first) equal the certified optimum.")
    return items


def _assemble(fam: FamilyModel, certified: Certified, instance_id: str) -> Instance:
    draft, result = certified.draft, certified.result
    spec = draft.spec
    rend = renderer(spec.family)
    chk = checker(spec.family)

    def texts(rules: list) -> list:
        return [r.model_copy(update={"text": rend.render_rule(r, draft.data, spec.task)}) for r in rules]

    def term_texts(terms: list) -> list:
        return [t.model_copy(update={"text": rend.render_objective(t, draft.data, spec.task)}) for t in terms]

    rules = texts(draft.rules)
    objective = term_texts(draft.objective)
    recovery = certified.recovery
    if recovery is not None:
        recovery = recovery.model_copy(update={"scenario": texts(recovery.scenario), "objective": term_texts(recovery.objective)})
    cert = result.certificate
    feasible = cert.status == "optimal"
    mechanisms = list(draft.mechanisms)
    schema = chk.answer_schema(draft.data, objective, mechanisms, recovery, rules)
    prompt = (
        rend.render_prompt(draft.data, rules, objective, spec.task, spec.subtask, mechanisms, recovery)
        + "\n\n"
        + render_answer_format(schema)
    )
    if feasible:
        reference: dict = {"feasible": True, **(result.plan or {}), "objective": cert.objective}
        if "conflict_validation" in mechanisms:
            reference["verification"] = fam.report(draft, result.plan)
        if cert.binding_rules is not None:
            reference["binding"] = cert.binding_rules
        if cert.conservative_inputs is not None:
            reference["conservative"] = cert.conservative_inputs
        if recovery is not None:
            reference["recovery"] = {**(certified.recovery_plan or {}), "objective": recovery.certificate.objective}
    else:
        reference = {"feasible": False, "conflict": (cert.conflict_sets or [[]])[0]}
    changes = (cert.objective or {}).get("changes")
    checklist = checklist_for(rules, feasible, mechanisms, changes)
    tiers = sorted({it.tier for it in checklist} | {r.tier for r in rules}, key=["basic", "medium", "hard", "stateful"].index)
    return Instance(
        id=instance_id,
        family=spec.family,
        task=spec.task,
        subtask=spec.subtask,
        seed=spec.seed,
        spec=spec,
        tiers=tiers,
        prompt=prompt,
        data=draft.data,
        rules=rules,
        objective=objective,
        mechanisms=mechanisms,
        checklist=checklist,
        certificate=cert,
        recovery=recovery,
        reference=reference,
        answer_schema=schema,
        provenance=Provenance(
            pbsolve_version=__version__,
            schema_version=SCHEMA_VERSION,
            solver="ortools-cp-sat",
            solver_version=ortools.__version__,
        ),
    )


def build_instance(run_seed: int, index: int, options: GenerateOptions) -> Outcome:
    t0 = time.perf_counter()
    out = Outcome(index=index, instance=None)
    limits = SolverLimits(deterministic_time=options.deterministic_time, plan_count_cap=options.plan_count_cap)
    for attempt in range(options.max_attempts):
        last = attempt == options.max_attempts - 1
        try:
            spec = sample_spec(
                run_seed, index, attempt, options.family, options.task, options.size,
                counts=options.counts, force_tiers=options.force_tiers, include=options.include,
            )  # fmt: skip
        except ValueError as exc:  # e.g. --include kinds that exclude each other
            out.rejects.append("no_compatible_spec")
            out.error = str(exc)
            break
        try:
            fam = family(spec.family)
            rng = random.Random(spec.seed)
            draft = fam.draft(spec, rng)
            certified = certify_spec(fam, draft, rng, limits, count_plans=last or not options.require_unique)
            out.first_solve_s += certified.result.stats.first_solve_s
            out.uniqueness_s += certified.result.stats.uniqueness_s
            digest = derive_seed(json.dumps(spec.model_dump(mode="json"), sort_keys=True)) % 16**6
            instance = _assemble(fam, certified, f"{spec.task}-{run_seed}-{index}-{digest:06x}")
            reference_grade = grade(instance, json.dumps(instance.reference))
            if not reference_grade.all_pass:
                failed = [f"{i.id}: {i.reason}" for i in reference_grade.items if not i.passed]
                raise Rejected("reference_fails_checker", "; ".join(failed))
            if options.renderer == "llm" and options.rewriter is not None:
                from pbsolve.rewriter import client_for, rewrite_instance

                instance = rewrite_instance(instance, client_for(options.rewriter), options.rewrite_attempts)
            out.instance = instance
            break
        except NoDraft as exc:
            out.rejects.append(f"not_applicable:{exc}")
        except Rejected as rej:
            kinds = [k for k in spec.hard] or ["none"]
            out.rejects.append(rej.reason)
            out.hard_rejects.extend(f"{k}:{rej.reason}" for k in kinds if k != "none")
    out.seconds = time.perf_counter() - t0
    return out


def _job(args: tuple[int, int, GenerateOptions]) -> Outcome:
    return build_instance(*args)


def generate(n: int, seed: int, options: GenerateOptions, workers: int = 1, start: int = 0) -> Iterator[Outcome]:
    """Outcomes for indices start..start+n-1, in index order whatever ``workers`` is."""
    jobs = [(seed, i, options) for i in range(start, start + n)]
    if workers <= 1:
        yield from map(_job, jobs)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(_job, jobs, chunksize=1)


@dataclass
class RunSummary:
    outcomes: list[Outcome] = field(default_factory=list)

    def add(self, o: Outcome) -> None:
        self.outcomes.append(o)

    @property
    def instances(self) -> list[Instance]:
        return [o.instance for o in self.outcomes if o.instance is not None]

    def as_dict(self) -> dict:
        inst = self.instances
        per_task = Counter(i.task for i in inst)
        per_tier = Counter(t for i in inst for t in i.tiers)
        by_task: dict[str, dict[str, int]] = {}
        for i in inst:
            row = by_task.setdefault(i.task, {"instances": 0, "basic": 0, "medium": 0, "hard": 0, "stateful": 0,
                                              "infeasible": 0, "unique": 0, "value_determinate": 0})  # fmt: skip
            row["instances"] += 1
            for t in i.tiers:
                row[t] += 1
            det = i.certificate.determinacy
            row["infeasible" if det == "infeasible" else "unique" if det == "unique" else "value_determinate"] += 1
        rejects = Counter(r for o in self.outcomes for r in o.rejects)
        feasible = [i for i in inst if i.certificate.status == "optimal"]
        secs = [o.seconds for o in self.outcomes if o.instance is not None]
        first = sum(o.first_solve_s for o in self.outcomes)
        uniq = sum(o.uniqueness_s for o in self.outcomes)
        return {
            "requested": len(self.outcomes),
            "emitted": len(inst),
            "failed_indices": sum(1 for o in self.outcomes if o.instance is None),
            "per_task": dict(sorted(per_task.items())),
            "per_tier": dict(sorted(per_tier.items())),
            "by_task": dict(sorted(by_task.items())),
            "unique_pct": 100.0 * sum(i.certificate.determinacy == "unique" for i in feasible) / max(len(feasible), 1),
            "infeasible_pct": 100.0 * (len(inst) - len(feasible)) / max(len(inst), 1),
            "rejects": dict(sorted(rejects.items())),
            "hard_kinds": {
                k: {
                    "generated": sum(k in i.mechanisms for i in inst),
                    "rejected": dict(sorted(Counter(
                        r.split(":", 1)[1] for o in self.outcomes for r in o.hard_rejects if r.startswith(k + ":")
                    ).items())),
                }
                for k in HARD_KINDS
            },
            "median_seconds": statistics.median(secs) if secs else 0.0,
            "uniqueness_vs_first_solve": uniq / first if first else 0.0,
        }
