"""The closed difficulty loop: Generator -> Responder -> Critic (pbsolve's checkers).

Per task type the loop keeps tier weights p = (p_b, p_m, p_h) and an expected total M of
sampled constraints. Each step certifies one instance whose constraint counts per tier
come from M·p, asks the Responder, and grades the answer (u = All-pass, ρ = Avg-pass).
When u = 1 the task is too easy for the Responder:

    p <- Normalize(p ⊙ exp(η·[-α, β, γ])),    M <- min(M + m_step, M_MAX)

When u = 0 the instance is kept and nothing changes.

**The M rule.** M starts at the prior's expected total, E[N_b] + E[N_m] + E[N_h] = 2.0 +
0.95 + 0.3 = 3.25, and p at the prior's expected shares (E[N_t] / 3.25), so the first
counts are the prior's typical (2, 1, 0). Each solved instance adds ``m_step`` (0.25)
to M, up to M_MAX = 6, the largest total S admits. M must grow: S caps hard at 1 and
medium at 2, so with M fixed, moving weight towards the hard tier would *shrink* the
number of rules instead of making instances harder.

**The projection.** The counts are the point of S = {1,2,3} × {0,1,2} × {0,1} whose
total is round-half-up(M) (clamped to 1..6) and which is nearest to M·p in Euclidean
distance; ties go to the harder point (more hard, then more medium). S has 18 points,
so the projection is exact enumeration. Keeping the total fixed is what makes the
weights matter (plain per-tier rounding and clipping would lose the mass above a cap).

**State and resumption.** Everything lives in the output folder: ``loop.json`` (the
settings; resuming with different ones is refused), ``kept.jsonl`` (u = 0: instance,
answer, grade), ``solved.jsonl`` (u = 1, same form), ``trajectory.jsonl`` (one line per
step). Each step is appended and fsynced, its kept/solved line first and its trajectory
line second; the weights are replayed from the trajectory. A run killed at any point
resumes where it stopped: a torn last line is cut, a kept/solved line whose trajectory
line was not written is completed, and instances are rebuilt from (seed, step), so
there are no duplicated and no lost instances. Steps run in rounds of one step per
task (the tasks' weights are independent), so an LLM Responder answers a round
concurrently with results identical to running the steps one by one.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import math
import os
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field

from pbsolve.generate import (
    GenerateOptions,
    Outcome,
    build_instance,
    close_executor,
    executor_for,
    run_job,
    wait_outcome,
)
from pbsolve.grading import grade
from pbsolve.llm.client import LLMConfig
from pbsolve.llm.responders import Answer, Responder, answer_many
from pbsolve.sampler import select_tasks
from pbsolve.schema import Instance, Size, Tier
from pbsolve.taxonomy import COUNT_PRIORS

LOOP_TIERS: tuple[Tier, Tier, Tier] = ("basic", "medium", "hard")
ADMISSIBLE: dict[str, tuple[int, ...]] = {"basic": (1, 2, 3), "medium": (0, 1, 2), "hard": (0, 1)}
S_POINTS: tuple[tuple[int, int, int], ...] = tuple(itertools.product(*(ADMISSIBLE[t] for t in LOOP_TIERS)))  # type: ignore[arg-type]
M_MAX = max(sum(p) for p in S_POINTS)  # 6
M_MIN = min(sum(p) for p in S_POINTS)  # 1
FILES = ("loop.json", "kept.jsonl", "solved.jsonl", "trajectory.jsonl")
Weights = tuple[float, float, float]


# -- the update rule, M and the projection (pure) ---------------------------------------------
def prior_expectation() -> Weights:
    e = [sum(n * p for n, p in COUNT_PRIORS[t].items()) for t in LOOP_TIERS]
    return (e[0], e[1], e[2])


def prior_total() -> float:
    return sum(prior_expectation())


def prior_weights() -> Weights:
    e = prior_expectation()
    total = sum(e)
    return (e[0] / total, e[1] / total, e[2] / total)


class LoopParams(BaseModel):
    """η, α, β, γ of the weight update and the growth of M."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    eta: float = Field(default=0.3, gt=0, description="step size η")
    alpha: float = Field(default=1.0, gt=0, description="pressure away from basic rules")
    beta: float = Field(default=0.5, gt=0, description="pull towards medium rules")
    gamma: float = Field(default=1.0, gt=0, description="pull towards hard rules")
    m_step: float = Field(default=0.25, ge=0, description="growth of the expected total M per solved instance")


def update_weights(p: Sequence[float], params: LoopParams) -> Weights:
    """p <- Normalize(p ⊙ exp(η·[-α, β, γ]))."""
    signs = (-params.alpha, params.beta, params.gamma)
    raw = [w * math.exp(params.eta * s) for w, s in zip(p, signs)]
    total = sum(raw)
    return (raw[0] / total, raw[1] / total, raw[2] / total)


def grow_total(m: float, params: LoopParams) -> float:
    return min(m + params.m_step, float(M_MAX))


def round_total(m: float) -> int:
    """round-half-up(M), clamped to the totals S admits."""
    return max(M_MIN, min(M_MAX, math.floor(m + 0.5)))


def project(target: Sequence[float], total: int) -> tuple[int, int, int]:
    """The point of S with this total nearest to ``target``; ties to the harder point."""
    total = max(M_MIN, min(M_MAX, total))
    candidates = [s for s in S_POINTS if sum(s) == total]

    def key(s: tuple[int, int, int]) -> tuple[float, int, int]:
        dist = sum((a - b) ** 2 for a, b in zip(s, target))
        return (round(dist, 12), -s[2], -s[1])

    return min(candidates, key=key)


def counts_for(p: Sequence[float], m: float) -> dict[str, int]:
    b, md, h = project([m * w for w in p], round_total(m))
    return {"basic": b, "medium": md, "hard": h}


@dataclass(frozen=True)
class TaskState:
    weights: Weights = field(default_factory=prior_weights)
    total: float = field(default_factory=prior_total)
    answered: int = 0
    solved: int = 0

    @property
    def counts(self) -> dict[str, int]:
        return counts_for(self.weights, self.total)

    def after(self, u: int, params: LoopParams) -> TaskState:
        """The state after an answered instance: updated when solved (u = 1), kept otherwise."""
        if u:
            return TaskState(
                update_weights(self.weights, params), grow_total(self.total, params), self.answered + 1, self.solved + 1
            )
        return replace(self, answered=self.answered + 1)


def weights_dict(p: Sequence[float]) -> dict[str, float]:
    return dict(zip(LOOP_TIERS, p))


# -- settings and storage -------------------------------------------------------------------
class LoopSettings(BaseModel):
    """What defines a loop run (saved in loop.json). The budget is not part of it: rerun
    with a larger budget to extend a finished run."""

    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    family: str | None = None
    task: str | None = None
    tasks: list[str] = Field(default_factory=list, description="the task types in turn (resolved when the run starts)")
    size: Size = "default"
    params: LoopParams = Field(default_factory=LoopParams)
    responder: str
    responder_settings: dict[str, Any] = Field(default_factory=dict, description="model, temperature, ... (no keys)")
    renderer: str = "template"
    rewriter_settings: dict[str, Any] = Field(default_factory=dict)
    deterministic_time: float = 20.0
    plan_count_cap: int = 16


class LoopError(Exception):
    """A loop that cannot start or continue (the message says why and what to do)."""


def _fsync_append(fh: IO[str], line: str) -> None:
    fh.write(line + "\n")
    fh.flush()
    os.fsync(fh.fileno())


def _read_lines(path: Path) -> list[dict[str, Any]]:
    """Complete JSON lines of an append-only file; a torn last line (no newline) is cut."""
    if not path.exists():
        return []
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        with open(path, "r+b") as fh:
            fh.truncate(keep)
        data = data[:keep]
    out = []
    for no, raw in enumerate(data.decode("utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            out.append(json.loads(raw))
        except ValueError as exc:
            raise LoopError(f"{path}:{no}: not valid JSON ({exc}); the folder was edited by hand?") from exc
    return out


class LoopStore:
    """The output folder of a loop run: append-only files, a lock, crash repair."""

    def __init__(self, out_dir: Path) -> None:
        self.dir = Path(out_dir)
        self.trajectory: list[dict[str, Any]] = []
        self._lock_fh: IO[str] | None = None
        self._files: dict[str, IO[str]] = {}

    def path(self, name: str) -> Path:
        return self.dir / name

    def saved_settings(self) -> LoopSettings | None:
        config = self.path("loop.json")
        if not config.exists():
            return None
        try:
            return LoopSettings.model_validate_json(config.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise LoopError(f"{config}: not the settings of a loop run ({exc.__class__.__name__})") from exc

    def open(self, settings: LoopSettings) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock_fh = open(self.path(".lock"), "w")  # noqa: SIM115 - held for the run (the lock), closed in close()
        try:
            fcntl.flock(self._lock_fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise LoopError(f"another loop is running in {self.dir}") from exc
        config = self.path("loop.json")
        mine = settings.model_dump(mode="json")
        if config.exists():
            saved = json.loads(config.read_text(encoding="utf-8"))
            if saved != mine:
                diff = sorted(k for k in set(saved) | set(mine) if saved.get(k) != mine.get(k))
                detail = ", ".join(f"{k}: {saved.get(k)!r} (saved) vs {mine.get(k)!r}" for k in diff)
                raise LoopError(
                    f"{self.dir} holds a loop run with other settings ({detail}); use a new --out or the same options"
                )
        else:
            tmp = config.with_name("loop.json.partial")
            tmp.write_text(json.dumps(mine, indent=2) + "\n", encoding="utf-8")
            os.replace(tmp, config)
        self.trajectory = self._recover()
        for name in ("kept.jsonl", "solved.jsonl", "trajectory.jsonl"):
            self._files[name] = open(self.path(name), "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def _recover(self) -> list[dict[str, Any]]:
        traj = _read_lines(self.path("trajectory.jsonl"))
        full: dict[int, dict[str, Any]] = {}
        for name in ("kept.jsonl", "solved.jsonl"):
            for rec in _read_lines(self.path(name)):
                if rec["step"] in full:
                    raise LoopError(f"{self.path(name)}: step {rec['step']} appears twice")
                full[rec["step"]] = rec
        steps = [r["step"] for r in traj]
        if steps != list(range(len(steps))):
            raise LoopError(f"{self.path('trajectory.jsonl')}: steps are not 0..{len(steps) - 1} in order")
        for r in traj:
            if r["status"] != "rejected" and r["step"] not in full:
                raise LoopError(f"{self.dir}: step {r['step']} is in the trajectory but in neither kept nor solved")
        orphans = sorted(set(full) - set(steps))
        if orphans:  # killed between an instance line and its trajectory line
            if orphans != list(range(len(steps), len(steps) + len(orphans))):
                raise LoopError(f"{self.dir}: kept/solved steps {orphans} do not follow the trajectory")
            with open(self.path("trajectory.jsonl"), "a", encoding="utf-8") as fh:
                for s in orphans:
                    _fsync_append(fh, json.dumps(full[s]["trajectory"], ensure_ascii=False))
                    traj.append(full[s]["trajectory"])
        return traj

    def append(self, record: dict[str, Any], full: dict[str, Any] | None) -> None:
        if full is not None:
            _fsync_append(self._files[f"{record['status']}.jsonl"], json.dumps(full, ensure_ascii=False))
        _fsync_append(self._files["trajectory.jsonl"], json.dumps(record, ensure_ascii=False))
        self.trajectory.append(record)

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()
        self._files.clear()
        if self._lock_fh is not None:
            self._lock_fh.close()
            self._lock_fh = None


def replay(trajectory: Sequence[dict[str, Any]], tasks: Sequence[str], params: LoopParams) -> dict[str, TaskState]:
    """Task states after the recorded steps, recomputed from u alone (and checked)."""
    states = {t: TaskState() for t in tasks}
    for rec in trajectory:
        task = rec["task"]
        if task not in states:
            raise LoopError(f"trajectory step {rec['step']}: task {task!r} is not among this run's tasks")
        if rec["status"] == "rejected":
            continue
        states[task] = states[task].after(rec["u"], params)
        recorded = rec.get("weights_next")
        if recorded is not None and any(abs(recorded[t] - w) > 1e-9 for t, w in zip(LOOP_TIERS, states[task].weights)):
            raise LoopError(f"trajectory step {rec['step']}: recorded weights do not follow from the settings")
    return states


# -- running ----------------------------------------------------------------------------
def top_tier(inst: Instance) -> str:
    spec = inst.spec
    return "hard" if spec.hard else "medium" if spec.medium else "basic"


@dataclass
class _Planned:
    step: int
    task: str
    state: TaskState
    outcome: Outcome | None = None
    error: str | None = None


class Loop:
    """One run of the closed loop into a folder (see the module docstring)."""

    def __init__(
        self,
        out_dir: Path,
        settings: LoopSettings,
        responder: Responder,
        *,
        rewriter: LLMConfig | None = None,
        workers: int = 1,
        max_consecutive_rejects: int = 30,
    ) -> None:
        self.responder = responder
        self.rewriter = rewriter
        self.workers = workers
        self.max_consecutive_rejects = max_consecutive_rejects
        self.store = LoopStore(out_dir)
        saved = self.store.saved_settings()
        if not settings.tasks:
            # a resumed run keeps the task types it started with (families added since are not mixed in)
            tasks = (
                saved.tasks
                if saved is not None and (saved.family, saved.task) == (settings.family, settings.task)
                else []
            )
            settings = settings.model_copy(
                update={"tasks": tasks or [t.id for t in select_tasks(settings.family, settings.task)]}
            )
        self.settings = settings
        self.tasks = list(settings.tasks)
        self.states: dict[str, TaskState] = {}

    @property
    def trajectory(self) -> list[dict[str, Any]]:
        return self.store.trajectory

    def answered(self) -> int:
        return sum(r["status"] != "rejected" for r in self.trajectory)

    def options(self, task: str, counts: dict[str, int]) -> GenerateOptions:
        """The generation options of one step (its task and the counts of that task's state)."""
        s = self.settings
        return GenerateOptions(
            task=task, size=s.size, counts=counts,  # type: ignore[arg-type]
            deterministic_time=s.deterministic_time, plan_count_cap=s.plan_count_cap,
            renderer="llm" if s.renderer == "llm" else "template", rewriter=self.rewriter,
        )  # fmt: skip

    def _generate(self, planned: list[_Planned], pool: Executor) -> None:
        """Certify a round's steps off the main thread (a signal's handler then runs at
        once); an interrupted certification raises Interrupted and is never recorded."""
        jobs = [(self.settings.seed, p.step, self.options(p.task, p.state.counts)) for p in planned]
        futures = [pool.submit(_certify, job) for job in jobs]
        results: list[Outcome | Exception] = []
        for fut in futures:
            try:
                results.append(wait_outcome(fut))
            except (ValueError, KeyError) as exc:
                results.append(exc)
        for p, res in zip(planned, results):
            if isinstance(res, Exception):
                p.error = f"sampling_error: {res}"[:300]
            else:
                p.outcome = res

    def _record(
        self, p: _Planned, answer: Answer | None, seconds_grade: float, g: Any
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        counts = p.state.counts
        base: dict[str, Any] = {
            "step": p.step,
            "task": p.task,
            "counts": counts,
            "total_target": p.state.total,
            "weights": weights_dict(p.state.weights),
        }
        inst = p.outcome.instance if p.outcome is not None else None
        gen_seconds = p.outcome.seconds if p.outcome is not None else 0.0
        if inst is None or answer is None:
            rejects = (p.outcome.rejects if p.outcome is not None else []) + ([p.error] if p.error else [])
            record = {**base, "status": "rejected", "instance_id": None, "weights_next": weights_dict(p.state.weights),
                      "u": None, "rho": None, "calls": 0, "tokens": {}, "seconds": {"generate": gen_seconds},
                      "rejects": rejects}  # fmt: skip
            return record, None
        u = int(g.all_pass)
        after = p.state.after(u, self.settings.params)
        rewrite = inst.provenance.rewrite
        record = {
            **base,
            "status": "solved" if u else "kept",
            "instance_id": inst.id,
            "weights_next": weights_dict(after.weights),
            "u": u,
            "rho": g.avg_pass,
            "tiers": inst.tiers,
            "top_tier": top_tier(inst),
            "hard": list(inst.spec.hard),
            "calls": answer.calls,
            "tokens": answer.usage,
            "seconds": {"generate": gen_seconds, "answer": answer.seconds, "grade": seconds_grade},
            "rejects": p.outcome.rejects if p.outcome is not None else [],
        }
        if rewrite is not None:
            record["rewrite"] = {"accepted": rewrite.accepted, "calls": rewrite.calls, "tokens": rewrite.tokens}
        response: dict[str, Any] = {
            "id": inst.id,
            "response": answer.text,
            "response_id": f"{self.settings.responder}-{inst.id}",
            "calls": answer.calls,
            "seconds": answer.seconds,
        }
        if answer.model is not None:
            response["model"] = answer.model
        if answer.usage:
            response["usage"] = answer.usage
        if answer.error is not None:
            response["error"] = answer.error
        if answer.raw is not None:
            response["raw"] = answer.raw
        full = {
            "step": p.step,
            "task": p.task,
            "counts": counts,
            "instance": inst.model_dump(mode="json"),
            "response": response,
            "grade": g.model_dump(mode="json"),
            "trajectory": record,
        }
        return record, full

    def run(self, budget: int, on_step: Callable[[dict[str, Any]], None] | None = None) -> None:
        """Answer instances until ``budget`` have been answered in total (resuming if the
        folder holds a run). Raises what the Responder raises (e.g. EndpointDown) after
        saving every step completed before it."""
        self.store.open(self.settings)
        try:
            self.states = replay(self.trajectory, self.tasks, self.settings.params)
            pool = executor_for(self.workers)
            try:
                self._run(budget, on_step, pool)
            finally:
                close_executor(pool)
        finally:
            self.store.close()

    def _run(self, budget: int, on_step: Callable[[dict[str, Any]], None] | None, pool: Executor) -> None:
        n_tasks = len(self.tasks)
        while self.answered() < budget:
            rejects = 0
            for rec in reversed(self.trajectory):
                if rec["status"] != "rejected":
                    break
                rejects += 1
            if rejects >= self.max_consecutive_rejects:
                raise LoopError(
                    f"{rejects} steps in a row produced no certified instance; see the rejects in trajectory.jsonl"
                )
            step = len(self.trajectory)
            planned = [
                _Planned(s, self.tasks[s % n_tasks], self.states[self.tasks[s % n_tasks]])
                for s in range(step, step + n_tasks)
            ]
            self._generate(planned, pool)
            remaining = budget - self.answered()
            cut = len(planned)
            certified = 0
            for i, p in enumerate(planned):
                if p.outcome is not None and p.outcome.instance is not None:
                    certified += 1
                    if certified == remaining:
                        cut = i + 1
                        break
            planned = planned[:cut]
            instances = [
                p.outcome.instance for p in planned if p.outcome is not None and p.outcome.instance is not None
            ]
            answers: dict[str, Answer] = {}
            written = 0
            saving = False

            def flush() -> None:
                """Save the round's steps that are complete, in step order (a prefix)."""
                nonlocal written, saving
                saving = True
                # flush runs within this iteration of the round loop only, so the names it
                # reads from the loop (planned, answers) are this round's.
                while written < len(planned):  # noqa: B023
                    p = planned[written]  # noqa: B023
                    inst = p.outcome.instance if p.outcome is not None else None
                    if inst is not None and inst.id not in answers:  # noqa: B023
                        break  # not answered yet: later steps wait, so the saved steps stay a prefix
                    self._save(p, answers.get(inst.id) if inst is not None else None, on_step)  # noqa: B023
                    written += 1
                saving = False

            try:
                for i, ans in answer_many(self.responder, instances):
                    answers[instances[i].id] = ans
                    flush()
            except BaseException:
                if not saving:  # the Responder failed (endpoint down, Ctrl-C): save what was answered
                    flush()
                raise
            flush()

    def _save(self, p: _Planned, answer: Answer | None, on_step: Callable[[dict[str, Any]], None] | None) -> None:
        inst = p.outcome.instance if p.outcome is not None else None
        g, seconds = None, 0.0
        if inst is not None and answer is not None:
            t0 = time.perf_counter()
            g = grade(inst, answer.text)
            seconds = time.perf_counter() - t0
        record, full = self._record(p, answer, seconds, g)
        self.store.append(record, full)
        if record["status"] != "rejected":
            self.states[p.task] = self.states[p.task].after(record["u"], self.settings.params)
        if on_step is not None:
            on_step(record)


def _certify(job: tuple[int, int, GenerateOptions]) -> Outcome:
    """One step's certification, in a thread or a worker process (module level: picklable)."""
    return run_job(build_instance, job)


# -- summary and plot ---------------------------------------------------------------------
def summarize(
    trajectory: Sequence[dict[str, Any]], tasks: Sequence[str] | None = None, params: LoopParams | None = None
) -> dict[str, Any]:
    answered = [r for r in trajectory if r["status"] != "rejected"]
    kept = [r for r in answered if r["status"] == "kept"]
    solved = [r for r in answered if r["status"] == "solved"]

    def rate(rows: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(rows)
        s = sum(r["u"] for r in rows)
        return {"n": n, "solved": s, "solve_rate": s / n if n else None,
                "avg_pass": sum(r["rho"] for r in rows) / n if n else None}  # fmt: skip

    tokens: dict[str, int] = defaultdict(int)
    for r in answered:
        for k, v in (r.get("tokens") or {}).items():
            tokens[k] += int(v)
    calls = sum(int(r.get("calls") or 0) for r in answered)
    rewrite_calls = sum(int((r.get("rewrite") or {}).get("calls", 0)) for r in answered)
    rewrite_tokens = sum(int((r.get("rewrite") or {}).get("tokens", 0)) for r in answered)
    gen_seconds = sum(float((r.get("seconds") or {}).get("generate", 0.0)) for r in trajectory)
    answer_seconds = sum(float((r.get("seconds") or {}).get("answer", 0.0)) for r in answered)
    per_kept = len(kept) or None
    task_ids = list(tasks) if tasks is not None else sorted({r["task"] for r in trajectory})
    states = replay(trajectory, task_ids, params or LoopParams()) if tasks is not None else {}
    by_task = {}
    for t in task_ids:
        row = rate([r for r in answered if r["task"] == t])
        row["kept"] = sum(r["task"] == t for r in kept)
        if t in states:
            row["weights"] = weights_dict(states[t].weights)
            row["total_target"] = states[t].total
            row["next_counts"] = states[t].counts
        by_task[t] = row
    return {
        "steps": len(trajectory),
        "answered": len(answered),
        "kept": len(kept),
        "solved": len(solved),
        "rejected_steps": len(trajectory) - len(answered),
        "solve_rate": len(solved) / len(answered) if answered else None,
        "by_tier": {t: rate([r for r in answered if r.get("top_tier") == t]) for t in LOOP_TIERS},
        "by_task": by_task,
        "cost": {
            "responder_calls": calls,
            "tokens": dict(tokens),
            "rewrite_calls": rewrite_calls,
            "rewrite_tokens": rewrite_tokens,
            "generate_seconds": gen_seconds,
            "answer_seconds": answer_seconds,
            "calls_per_kept": calls / per_kept if per_kept else None,
            "tokens_per_kept": tokens.get("total_tokens", 0) / per_kept if per_kept else None,
            "seconds_per_kept": (gen_seconds + answer_seconds) / per_kept if per_kept else None,
        },
    }


def rolling(values: Sequence[float], window: int) -> list[float]:
    out, acc = [], 0.0
    for i, v in enumerate(values):
        acc += v
        if i >= window:
            acc -= values[i - window]
        out.append(acc / min(i + 1, window))
    return out


def plot(
    trajectory: Sequence[dict[str, Any]], path: Path, window: int = 10, tasks: Sequence[str] | None = None
) -> Path:
    """Tier weights and the rolling solve rate per task, one row per task (PNG)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    task_ids = list(tasks) if tasks is not None else sorted({r["task"] for r in trajectory})
    fig = Figure(figsize=(10, 2.6 * max(len(task_ids), 1)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(max(len(task_ids), 1), 2, squeeze=False)
    colors = {"basic": "tab:blue", "medium": "tab:orange", "hard": "tab:red"}
    for row, task in zip(axes, task_ids):
        rows = [r for r in trajectory if r["task"] == task and r["status"] != "rejected"]
        xs = list(range(len(rows) + 1))
        first = rows[0]["weights"] if rows else weights_dict(prior_weights())
        for tier in LOOP_TIERS:
            ys = [first[tier]] + [r["weights_next"][tier] for r in rows]
            row[0].plot(xs, ys, label=f"p_{tier[0]} ({tier})", color=colors[tier])
        row[0].set_ylim(0, 1)
        row[0].set_title(f"{task}: tier weights")
        row[0].set_xlabel("answered instances")
        row[0].legend(loc="upper left", fontsize=8)
        us = [float(r["u"]) for r in rows]
        row[1].plot(xs[1:], rolling(us, window), color="tab:green", label=f"solve rate (last {window})")
        totals = [sum(r["counts"].values()) / M_MAX for r in rows]
        row[1].step(xs[1:], totals, where="post", color="grey", linestyle="--", label="rules sampled / 6")
        row[1].set_ylim(-0.02, 1.02)
        row[1].set_title(f"{task}: rolling solve rate")
        row[1].set_xlabel("answered instances")
        row[1].legend(loc="lower right", fontsize=8)
        for ax in row:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    fig.savefig(tmp, dpi=90, format="png")
    os.replace(tmp, path)
    return path
