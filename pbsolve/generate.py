"""The generation pipeline: spec -> draft -> certificate -> rendered, self-checked Instance.

``build_instance(run_seed, index, options)`` depends on nothing else, so instance i of
a run can be rebuilt alone and any number of worker processes give the same bytes.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import ortools
from pydantic import BaseModel, Field, model_validator

from pbsolve import __version__, interrupts
from pbsolve.answer_format import render_answer_format
from pbsolve.certify import Rejected, SolverLimits
from pbsolve.family import Family, NoDraft, checker, family, find_task, renderer
from pbsolve.grading import grade
from pbsolve.llm.client import LLMConfig
from pbsolve.mechanisms import HARD_KINDS, MECHANISMS
from pbsolve.mechanisms.base import ReferenceContext
from pbsolve.mechanisms.certification import Certified, certify_spec
from pbsolve.sampler import derive_seed, sample_spec
from pbsolve.schema import SCHEMA_VERSION, ChecklistItem, Instance, Provenance, Size, Tier
from pbsolve.sources import Imported, SourceFile, SourceRecord


class GenerateOptions(BaseModel):
    family: str | None = None
    task: str | None = None
    subtask: str | None = Field(
        default=None, description="only this subtask (its task type's); None: drawn per instance"
    )
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
        default="template",
        description="llm: an LLM rewords the narrative under the fidelity guard (pbsolve.llm.rewriter)",
    )
    rewriter: LLMConfig | None = Field(default=None, description="the endpoint of the llm renderer")
    rewrite_attempts: int = Field(default=3, ge=1, description="rewrites tried before the template text is kept")
    source: SourceFile | None = Field(
        default=None, description="a published data file every instance is built on (needs task); None: sampled data"
    )

    @model_validator(mode="after")
    def _rewriter_given(self) -> GenerateOptions:
        if self.renderer == "llm" and self.rewriter is None:
            raise ValueError("renderer 'llm' needs a rewriter endpoint (an LLMConfig)")
        return self

    @model_validator(mode="after")
    def _source_names_its_task(self) -> GenerateOptions:
        if self.source is not None and self.task is None:
            raise ValueError("a data file is read by one task type: give the task with it")
        return self


@dataclass
class Outcome:
    index: int
    instance: Instance | None
    rejects: list[str] = field(default_factory=list)
    seconds: float = 0.0  # wall seconds of the index, re-samples included
    first_solve_s: float = 0.0  # CPU seconds (pbsolve.certify.phase_clock) of the first optimisations
    uniqueness_s: float = 0.0  # CPU seconds of the uniqueness proofs
    hard_rejects: list[str] = field(default_factory=list)  # "<hard kind>:<reason>"
    error: str | None = None  # why no spec could be sampled at all
    interrupted: bool = False  # a stop request ended the work: not a result, never a reject

    def reasons(self) -> list[str]:
        """Why this index produced no instance: the reason of every attempt, in order."""
        return [*self.rejects, *([self.error] if self.error and "no_compatible_spec" not in self.rejects else [])]


def checklist_for(
    rules: list,
    feasible: bool,
    mechanisms: list[str],
    certified_objective: dict[str, int] | None = None,
    plan_text: str = "a complete plan with valid values",
) -> list[ChecklistItem]:
    """The items of an instance: the format, then (when a plan exists) every rule, the
    objective and the stated figures, then each mechanism's items in order.

    An infeasible instance has only the items of the mechanism that made it so.
    ``plan_text`` says what a complete plan of the task is (the family checker's ``format_text``)."""
    items = [
        ChecklistItem(
            id="C1",
            tier="basic",
            rule="format",
            text=f"The answer is one JSON object in the form the instance calls for. When a plan exists: {plan_text}. "
            "When none does: a declaration of infeasibility whose rule list names only this instance's rule ids.",
        )
    ]

    def add(tier: Tier, rule: str, text: str) -> None:
        items.append(ChecklistItem(id=f"C{len(items) + 1}", tier=tier, rule=rule, text=text))

    if not feasible:
        for m in MECHANISMS:
            if m.infeasible:
                for it in m.checklist(certified_objective):
                    add(it.tier, it.rule, it.text)
        return items
    for r in rules:
        add(r.tier, r.id, f"{r.id}: {r.text}")
    add("basic", "objective", "The plan's objective figures, recomputed from the plan, equal the certified optimum.")
    add("medium", "validation", "The objective figures the answer states equal those recomputed from its own plan.")
    for m in MECHANISMS:
        if not m.infeasible and m.id in mechanisms:
            for it in m.checklist(certified_objective):
                add(it.tier, it.rule, it.text)
    return items


def _assemble(fam: Family, certified: Certified, instance_id: str) -> Instance:
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
        recovery = recovery.model_copy(
            update={"scenario": texts(recovery.scenario), "objective": term_texts(recovery.objective)}
        )
    cert = result.certificate
    feasible = cert.status == "optimal"
    mechanisms = list(draft.mechanisms)
    schema = chk.answer_schema(spec.task, draft.data, objective, mechanisms, recovery, rules)
    prompt = (
        rend.render_prompt(draft.data, rules, objective, spec.task, spec.subtask, mechanisms, recovery)
        + "\n\n"
        + render_answer_format(schema)
    )
    if feasible:
        reference: dict = {"feasible": True, **(result.plan or {}), "objective": cert.objective}
        optimal_plan = result.plan
        assert optimal_plan is not None  # an optimal certificate always carries its plan
        ctx = ReferenceContext(certificate=cert, recovery=recovery, recovery_plan=certified.recovery_plan,
                               report=lambda: fam.report(draft, optimal_plan))  # fmt: skip
        for m in MECHANISMS:
            if not m.infeasible and m.present(mechanisms, recovery):
                reference.update(m.reference(ctx))
    else:
        reference = {"feasible": False, "conflict": (cert.conflict_sets or [[]])[0]}
    checklist = checklist_for(rules, feasible, mechanisms, cert.objective, plan_text=chk.format_text(spec.task))
    tiers = sorted(
        {it.tier for it in checklist} | {r.tier for r in rules}, key=["basic", "medium", "hard", "stateful"].index
    )
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
            solver_version=ortools.__version__,  # type: ignore[attr-defined]  # ortools' stubs omit __version__
        ),
    )


class CheckerDisagreement(Exception):
    """The certified reference answer fails the instance's own checker.

    Certificate and checker are independent implementations of the same rules, so a
    disagreement is a bug in one of them, never a property of the draw: it propagates out
    of generation (the run fails, naming the instance and the items) instead of being
    counted as a reject and re-sampled, which would silently turn a too-strict checker
    into a smaller data set.
    """

    def __init__(self, instance_id: str, failed: list[str]) -> None:
        self.instance_id = instance_id
        self.failed = list(failed)
        super().__init__(f"the certified reference answer of {instance_id} fails its checker: {'; '.join(self.failed)}")

    def __reduce__(self) -> tuple[type, tuple[str, list[str]]]:  # crosses worker-process boundaries intact
        return (type(self), (self.instance_id, self.failed))


def imported_data(options: GenerateOptions) -> Imported | None:
    """The options' data file as their task type's data (None without one); a
    :class:`SourceError` says why a file cannot be imported."""
    if options.source is None or options.task is None:
        return None
    return family(find_task(options.task).family).import_source(options.task, options.source)


def build_instance(run_seed: int, index: int, options: GenerateOptions) -> Outcome:
    t0 = time.perf_counter()
    out = Outcome(index=index, instance=None)
    limits = SolverLimits(deterministic_time=options.deterministic_time, plan_count_cap=options.plan_count_cap)
    imported = imported_data(options)
    subtask = options.subtask or (imported.subtask if imported is not None else None)
    for attempt in range(options.max_attempts):
        last = attempt == options.max_attempts - 1
        try:
            spec = sample_spec(
                run_seed, index, attempt, options.family, options.task, options.size,
                counts=options.counts, force_tiers=options.force_tiers, include=options.include,
                subtask=subtask,
            )  # fmt: skip
        except ValueError as exc:  # e.g. --include kinds that exclude each other
            out.rejects.append("no_compatible_spec")
            out.error = str(exc)
            break
        # a re-sample cannot change a file's problem without sampled rules: its plans are
        # counted at once, and a rejection is final (another attempt would repeat it)
        fixed = imported is not None and not any((spec.basic, spec.medium, spec.hard, spec.stateful))
        last = last or fixed
        try:
            fam = family(spec.family)
            rng = random.Random(spec.seed)
            draft = fam.draft(spec, rng) if imported is None else fam.draft_imported(spec, imported.data, rng)
            certified = certify_spec(fam, draft, rng, limits, count_plans=last or not options.require_unique)
            out.first_solve_s += certified.result.stats.first_solve_s
            out.uniqueness_s += certified.result.stats.uniqueness_s
            source = options.source
            key = [json.dumps(spec.model_dump(mode="json"), sort_keys=True)]
            digest = derive_seed(*key, *([source.sha256] if source is not None else [])) % 16**6  # sampled: as ever
            instance = _assemble(fam, certified, f"{spec.task}-{run_seed}-{index}-{digest:06x}")
            if source is not None:
                provenance = instance.provenance.model_copy(
                    update={"source": SourceRecord(name=source.name, sha256=source.sha256)}
                )
                instance = instance.model_copy(update={"provenance": provenance})
            reference_grade = grade(
                instance, json.dumps(instance.reference), on_error="zero"
            )  # a grader failure is a disagreement too
            if not reference_grade.all_pass:  # never re-sampled: it would hide a checker bug
                raise CheckerDisagreement(
                    instance.id, [f"{i.id}: {i.reason}" for i in reference_grade.items if not i.passed]
                )
            if options.renderer == "llm" and options.rewriter is not None:
                from pbsolve.llm.rewriter import client_for, rewrite_instance

                instance = rewrite_instance(instance, client_for(options.rewriter), options.rewrite_attempts)
            out.instance = instance
            break
        except NoDraft as exc:
            out.rejects.append(f"not_applicable:{exc}")
        except Rejected as rej:
            kinds = [k for k in spec.hard] or ["none"]
            out.rejects.append(rej.reason)
            out.hard_rejects.extend(f"{k}:{rej.reason}" for k in kinds if k != "none")
        if fixed:
            break
    out.seconds = time.perf_counter() - t0
    return out


def _job(args: tuple[int, int, GenerateOptions]) -> Outcome:
    """One index, in a worker process or thread; an interrupt becomes a marked Outcome."""
    return run_job(build_instance, args)


def run_job(build: Callable[..., Outcome], args: tuple[int, int, GenerateOptions]) -> Outcome:
    """``build(*args)`` made safe to send back from a worker: an interrupt becomes a marked
    Outcome (an instance's grading cache is never pickled: see ``Instance.__getstate__``)."""
    try:
        out = build(*args)
    except interrupts.Interrupted:
        return Outcome(index=args[1], instance=None, interrupted=True)
    return out


MAX_CONSECUTIVE_FAILURES = 50


class GaveUp(Exception):
    """Too many indices in a row produced no instance: the options are unlikely ever to."""

    def __init__(self, failures: list[Outcome]) -> None:
        self.failures = failures
        reasons = Counter(r for o in failures for r in o.reasons())
        top = ", ".join(f"{r} {k}" for r, k in reasons.most_common(5))
        super().__init__(
            f"{len(failures)} indices in a row ({failures[0].index}..{failures[-1].index}) produced no certified "
            f"instance (reasons: {top or 'none recorded'}); relax the options (--include, --tiers, --time-limit)"
        )


def wait_outcome(fut: Future) -> Outcome:
    """The outcome of a submitted job, waking every 0.1 s: after a stop request the wait
    re-stops any search that began just as it came, and an interrupted job (or a worker
    pool broken by the same signal) raises :class:`~pbsolve.interrupts.Interrupted`."""
    while True:
        try:
            outcome = fut.result(timeout=0.1)
            break
        except FutureTimeout:
            if interrupts.stop_requested():
                interrupts.stop_active_solvers()
        except BrokenProcessPool:
            if interrupts.stop_requested():
                raise interrupts.Interrupted() from None
            raise
    if outcome.interrupted:
        raise interrupts.Interrupted()
    return outcome


def executor_for(workers: int) -> Executor:
    """Certification never runs in the main thread, so a signal's handler runs at once
    (CP-SAT releases the GIL; the main thread only waits): one background thread for
    ``workers <= 1``, else a pool of processes that ignore SIGINT (:mod:`pbsolve.interrupts`)."""
    if workers <= 1:
        return ThreadPoolExecutor(max_workers=1, thread_name_prefix="pbsolve-certify")
    return interrupts.worker_pool(workers)


def close_executor(ex: Executor) -> None:
    if isinstance(ex, interrupts.WorkerPool):
        ex.close()
    else:
        ex.shutdown(wait=True, cancel_futures=True)


def generate(
    n: int,
    seed: int,
    options: GenerateOptions,
    workers: int = 1,
    start: int = 0,
    max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES,
) -> Iterator[Outcome]:
    """Outcomes of indices start, start+1, ... in index order, until ``n`` of them carry an
    instance: exactly ``n`` instances, the same bytes whatever ``workers`` is.

    Indices that produce no instance are yielded too (``instance`` None, with their
    reasons) and the run goes on to further indices; :class:`GaveUp` is raised after
    ``max_consecutive_failures`` of them in a row. A stop request (a signal under
    :func:`pbsolve.interrupts.owned_signals`) raises :class:`~pbsolve.interrupts.Interrupted`
    after the last completed outcome; an interrupted index is never yielded.
    """
    if n <= 0:
        return
    ex = executor_for(workers)
    window = 1 if workers <= 1 else 2 * workers
    pending: deque[Future] = deque()
    nxt, emitted = start, 0
    failures: list[Outcome] = []
    try:
        while emitted < n:
            interrupts.check()
            # Never more jobs in flight than instances still wanted: a run where every
            # index succeeds does no work past its last instance.
            while len(pending) < min(window, n - emitted):
                pending.append(ex.submit(_job, (seed, nxt, options)))
                nxt += 1
            outcome = wait_outcome(pending.popleft())
            yield outcome
            if outcome.instance is not None:
                emitted += 1
                failures = []
            else:
                failures.append(outcome)
                if len(failures) >= max_consecutive_failures:
                    raise GaveUp(failures)
    finally:
        for fut in pending:
            fut.cancel()
        close_executor(ex)


@dataclass
class RunSummary:
    """The outcomes of a run, every index it visited (a resumed run: both sessions)."""

    outcomes: list[Outcome] = field(default_factory=list)
    requested: int | None = None  # instances asked for (None: as many as outcomes)
    start: int = 0

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
            "requested": self.requested if self.requested is not None else len(self.outcomes),
            "emitted": len(inst),
            "first_index": self.outcomes[0].index if self.outcomes else self.start,
            "last_index": self.outcomes[-1].index if self.outcomes else None,
            "next_index": self.outcomes[-1].index + 1 if self.outcomes else self.start,
            "failed_indices": [{"index": o.index, "reasons": o.reasons()} for o in self.outcomes if o.instance is None],
            "per_task": dict(sorted(per_task.items())),
            "per_tier": dict(sorted(per_tier.items())),
            "by_task": dict(sorted(by_task.items())),
            "unique_pct": 100.0 * sum(i.certificate.determinacy == "unique" for i in feasible) / max(len(feasible), 1),
            "infeasible_pct": 100.0 * (len(inst) - len(feasible)) / max(len(inst), 1),
            "rejects": dict(sorted(rejects.items())),
            "hard_kinds": {
                k: {
                    "generated": sum(k in i.mechanisms for i in inst),
                    "rejected": dict(
                        sorted(
                            Counter(
                                r.split(":", 1)[1]
                                for o in self.outcomes
                                for r in o.hard_rejects
                                if r.startswith(k + ":")
                            ).items()
                        )
                    ),
                }
                for k in HARD_KINDS
            },
            "median_seconds": statistics.median(secs) if secs else 0.0,
            "uniqueness_vs_first_solve": uniq / first if first else 0.0,
        }


# -- checkpoints: the .partial file of a run and its sidecar --------------------------------
class ResumeError(Exception):
    """The .partial file cannot be continued by this command (other options, or none)."""


def run_header(n: int, seed: int, options: GenerateOptions, start: int) -> dict:
    """What fixes a run's bytes (not ``workers``): a resumed run must match it."""
    return {"pbsolve_run": 1, "pbsolve_version": __version__, "n": n, "seed": seed, "start": start,
            "options": options.model_dump(mode="json")}  # fmt: skip


def outcome_record(o: Outcome) -> dict:
    """One line of the sidecar: an index, its instance id (None: failed) and its reasons."""
    return {"index": o.index, "id": o.instance.id if o.instance is not None else None, "rejects": o.rejects,
            "hard_rejects": o.hard_rejects, "error": o.error, "seconds": o.seconds,
            "first_solve_s": o.first_solve_s, "uniqueness_s": o.uniqueness_s}  # fmt: skip


def _complete_lines(path: Path) -> list[bytes]:
    """The newline-terminated lines of a file (a torn last line is left out)."""
    data = path.read_bytes()
    return data[: data.rfind(b"\n") + 1].splitlines(keepends=True) if b"\n" in data else []


def sidecar_path(partial: Path) -> Path:
    return partial.with_name(partial.name + ".run")


def load_checkpoint(partial: Path, header: dict) -> list[Outcome]:
    """The outcomes an interrupted run saved, after checking it is this run.

    The sidecar names every index visited, in order, with its instance id; the .partial
    file holds the instance lines. The longest prefix on which both agree is kept; both
    files are cut back to it (a line torn by the interruption, an instance written whose
    sidecar line was not)."""
    run = sidecar_path(partial)
    if not partial.exists() or not run.exists():
        missing = partial if not partial.exists() else run
        raise ResumeError(f"nothing to resume: {missing} not found; run without --resume")
    records = _complete_lines(run)
    try:
        saved = json.loads(records[0]) if records else None
    except ValueError:
        saved = None
    if not isinstance(saved, dict) or saved.get("pbsolve_run") != 1:
        raise ResumeError(f"{run} is not the record of a generate run; run without --resume")
    if saved != header:
        keys = sorted(k for k in set(saved) | set(header) if saved.get(k) != header.get(k))
        if "options" in keys:
            a, b = saved.get("options") or {}, header["options"]
            keys = [k for k in keys if k != "options"] + sorted(
                f"options.{k}" for k in set(a) | set(b) if a.get(k) != b.get(k))  # fmt: skip
        raise ResumeError(f"{partial} was written by a run with other settings ({', '.join(keys)}); "
                          "resume with the same options, or run without --resume to start over")  # fmt: skip
    lines = _complete_lines(partial)
    kept: list[Outcome] = []
    used_lines, used_records = 0, 1
    for raw in records[1:]:
        try:
            rec = json.loads(raw)
            index = int(rec["index"])
        except (ValueError, KeyError, TypeError):
            break
        if index != header["start"] + len(kept):
            break
        instance = None
        if rec.get("id") is not None:
            if used_lines >= len(lines):
                break
            try:
                instance = Instance.model_validate_json(lines[used_lines])
            except ValueError:
                break
            if instance.id != rec["id"]:
                break
            used_lines += 1
        kept.append(Outcome(
            index=index, instance=instance, rejects=list(rec.get("rejects") or []),
            hard_rejects=list(rec.get("hard_rejects") or []), error=rec.get("error"),
            seconds=float(rec.get("seconds") or 0.0), first_solve_s=float(rec.get("first_solve_s") or 0.0),
            uniqueness_s=float(rec.get("uniqueness_s") or 0.0),
        ))  # fmt: skip
        used_records += 1
    with open(partial, "r+b") as fh:
        fh.truncate(sum(len(x) for x in lines[:used_lines]))
    with open(run, "r+b") as fh:
        fh.truncate(sum(len(x) for x in records[:used_records]))
    return kept
