"""Judge audit: how often a judge is wrong, measured against certified ground truth.

Every response is graded by the checkers (the truth: a pass/fail per checklist item)
and by the judge under audit (a verdict per item, from an LLM run through
:mod:`pbsolve.audit.judge` or read from a verdicts file). The figures compare the two.

**Definitions** (item level: one (response, checklist item) pair is one observation).

- A judge verdict is *pass*, *fail* or *missing* (the judge did not decide the item, its
  value was unreadable, its output could not be parsed, or it gave no verdict for the
  response). Missing verdicts are tallied separately (``missing_rate``) and **count as
  fail** everywhere else: a judge that says nothing has not said "satisfied".
- ``item_accuracy`` = share of items where the judge's pass/fail equals the checker's.
- ``false_pass_rate`` = P(judge pass | checker fail): violations the judge lets through.
- ``false_fail_rate`` = P(judge fail or missing | checker pass).
- ``kappa`` = Cohen's kappa of the item-level pass/fail labels (judge vs checker):
  (p_o - p_e) / (1 - p_e), null when undefined (both raters constant and equal).
- ``all_pass_agreement`` = share of responses where the judge's All-pass (every item
  pass) equals the checker's. ``false_accept_rate`` = P(judge All-pass | checker not
  All-pass), the reward a judge would pay for a wrong answer; ``false_reject_rate`` the
  converse.

**Confidence intervals** are percentile bootstrap intervals, resampling *responses*
(clusters) with replacement, never single items: the items of one response share its
plan and its judge call, so they are correlated, and an item-level bootstrap would give
intervals that are too narrow. A numpy Generator seeded from ``seed`` and the group name
makes every figure reproducible.

**Breakdowns**: by tier and rule kind (item attributes; the response-level figures do not
apply there), and by task type, family, prompt length (instance prompt characters, in
terciles) and perturbation kind (response attributes).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pbsolve.audit.judge import verdict_from_json
from pbsolve.grading import grade
from pbsolve.jsonl import LineError, read_models
from pbsolve.sampler import derive_seed
from pbsolve.schema import Instance, ResponseLine

HEADLINE = ("item_accuracy", "false_pass_rate", "false_fail_rate", "all_pass_agreement", "kappa")
EXTRA = ("missing_rate", "false_accept_rate", "false_reject_rate")
FIGURES = HEADLINE + EXTRA
RESPONSE_FIGURES = frozenset({"all_pass_agreement", "false_accept_rate", "false_reject_rate"})
ITEM_GROUPS = ("tier", "rule_kind")
RESPONSE_GROUPS = ("task", "family", "prompt_length", "perturbation", "kind")
# per-response count columns
_A, _B, _C, _D, _MISS, _RESP, _AGREE, _TFAIL, _FACC, _TPASS, _FREJ = range(11)
_K = 11

DEFINITIONS = {
    "item_accuracy": "share of (response, item) pairs where the judge's pass/fail equals the checker's; missing counts as fail",
    "false_pass_rate": "P(judge pass | checker fail), item level",
    "false_fail_rate": "P(judge fail or missing | checker pass), item level",
    "all_pass_agreement": "share of responses where judge All-pass (every item pass) equals checker All-pass",
    "kappa": "Cohen's kappa of item-level pass/fail (missing counts as fail); null when undefined",
    "missing_rate": "share of items the judge did not decide (not named, unreadable, unparseable output, no verdict)",
    "false_accept_rate": "P(judge All-pass | checker not All-pass), response level",
    "false_reject_rate": "P(judge not All-pass | checker All-pass), response level",
    "ci": "percentile bootstrap over responses (clusters), not items: items of one response are correlated",
}


@dataclass
class Verdict:
    """A judge's decided items for one response (absent items are missing)."""

    items: dict[str, bool]
    parse_error: str | None = None


@dataclass
class AuditTable:
    """Responses and their items, with checker truth and judge verdicts."""

    ids: list[str] = field(default_factory=list)
    response_ids: list[str] = field(default_factory=list)
    attrs: dict[str, list[str]] = field(default_factory=lambda: {g: [] for g in RESPONSE_GROUPS})
    prompt_chars: list[int] = field(default_factory=list)
    has_verdict: list[bool] = field(default_factory=list)
    parse_failed: list[bool] = field(default_factory=list)
    instances: set[str] = field(default_factory=set)
    # item level
    resp: list[int] = field(default_factory=list)
    item_ids: list[str] = field(default_factory=list)
    tier: list[str] = field(default_factory=list)
    rule_kind: list[str] = field(default_factory=list)
    truth: list[bool] = field(default_factory=list)
    judge: list[int] = field(default_factory=list)  # 1 pass, 0 fail, -1 missing

    def __len__(self) -> int:
        return len(self.ids)


def rule_kind(instance: Instance, rule: str) -> str:
    """An item's rule kind: the kind of its numbered rule, else the item's own rule name."""
    for r in instance.rules:
        if r.id == rule:
            return r.kind
    return rule


def build_table(
    instances: dict[str, Instance], responses: Sequence[ResponseLine], verdicts: dict[tuple[str, str], Verdict]
) -> AuditTable:
    """Grade every response (the truth) and line it up with the judge's verdicts.
    Responses must carry a response_id (see :func:`load_responses`)."""
    t = AuditTable()
    for line in responses:
        inst = instances[line.id]
        rid = line.response_id or ""
        g = grade(inst, line.response, "all_pass", rid)
        v = verdicts.get((line.id, rid))
        idx = len(t.ids)
        t.ids.append(line.id)
        t.response_ids.append(rid)
        t.instances.add(line.id)
        kind = str((line.model_extra or {}).get("kind") or "(none)")
        t.attrs["task"].append(inst.task)
        t.attrs["family"].append(inst.family)
        t.attrs["kind"].append(kind)
        t.attrs["perturbation"].append(kind.split(":", 1)[0])
        t.attrs["prompt_length"].append("")  # binned below
        t.prompt_chars.append(len(inst.prompt))
        t.has_verdict.append(v is not None)
        t.parse_failed.append(v is not None and v.parse_error is not None)
        rules = {it.id: it for it in inst.checklist}
        for res in g.items:
            it = rules[res.id]
            t.resp.append(idx)
            t.item_ids.append(it.id)
            t.tier.append(it.tier)
            t.rule_kind.append(rule_kind(inst, it.rule))
            t.truth.append(res.passed)
            decided = None if v is None else v.items.get(it.id)
            t.judge.append(-1 if decided is None else int(bool(decided)))
    t.attrs["prompt_length"], _ = length_bins(t.prompt_chars)
    return t


def length_bins(chars: Sequence[int]) -> tuple[list[str], list[int]]:
    """Tercile bins of prompt length (characters): a label per response and the edges."""
    if not chars:
        return [], []
    arr = np.asarray(chars)
    edges = sorted({round(q) for q in np.quantile(arr, [1 / 3, 2 / 3])})
    edges = [e for e in edges if e < arr.max()]
    labels = []
    for c in chars:
        lo = None
        for e in edges:
            if c <= e:
                break
            lo = e
        hi = next((e for e in edges if c <= e), None)
        if hi is None and lo is None:
            labels.append("all")
        elif lo is None:
            labels.append(f"≤{hi:,} chars")
        elif hi is None:
            labels.append(f">{lo:,} chars")
        else:
            labels.append(f"{lo + 1:,}–{hi:,} chars")
    return labels, edges


# -- figures -------------------------------------------------------------------------
def _counts(t: AuditTable, item_mask: np.ndarray | None = None, with_responses: bool = True) -> np.ndarray:
    """Per-response count matrix (responses x _K) over the selected items."""
    n = len(t)
    resp = np.asarray(t.resp, dtype=np.int64)
    truth = np.asarray(t.truth, dtype=bool)
    judge = np.asarray(t.judge, dtype=np.int8)
    if item_mask is None:
        item_mask = np.ones(len(resp), dtype=bool)
    jp = judge == 1
    R = np.zeros((n, _K), dtype=np.float64)
    for col, sel in ((_A, jp & truth), (_B, jp & ~truth), (_C, ~jp & truth), (_D, ~jp & ~truth), (_MISS, judge == -1)):
        R[:, col] = np.bincount(resp[sel & item_mask], minlength=n)
    if with_responses:
        n_items = np.bincount(resp, minlength=n)
        truth_ok = np.bincount(resp[truth], minlength=n) == n_items
        judge_ok = np.bincount(resp[jp], minlength=n) == n_items
        R[:, _RESP] = 1
        R[:, _AGREE] = truth_ok == judge_ok
        R[:, _TFAIL] = ~truth_ok
        R[:, _FACC] = ~truth_ok & judge_ok
        R[:, _TPASS] = truth_ok
        R[:, _FREJ] = truth_ok & ~judge_ok
    return R


def _figures(S: np.ndarray) -> dict[str, np.ndarray]:
    """Every figure from summed counts (last axis = count columns); NaN when undefined."""
    a, b, c, d = S[..., _A], S[..., _B], S[..., _C], S[..., _D]
    n = a + b + c + d
    with np.errstate(divide="ignore", invalid="ignore"):
        po = (a + d) / n
        pe = ((a + b) * (a + c) + (c + d) * (b + d)) / (n * n)
        kappa = np.where(1 - pe > 1e-12, (po - pe) / (1 - pe), np.nan)
        return {
            "item_accuracy": po,
            "false_pass_rate": b / (b + d),
            "false_fail_rate": c / (a + c),
            "all_pass_agreement": S[..., _AGREE] / S[..., _RESP],
            "kappa": kappa,
            "missing_rate": S[..., _MISS] / n,
            "false_accept_rate": S[..., _FACC] / S[..., _TFAIL],
            "false_reject_rate": S[..., _FREJ] / S[..., _TPASS],
        }


def _num(x: Any) -> float | None:
    x = float(x)
    return None if x != x else round(x, 6)


def bootstrap_ci(
    R: np.ndarray, resamples: int, rng: np.random.Generator, confidence: float, chunk: int = 64
) -> dict[str, list[float] | None]:
    """Percentile intervals of every figure, resampling rows of R (responses) with replacement."""
    n = R.shape[0]
    if n == 0 or resamples <= 0:
        return {f: None for f in FIGURES}
    draws: dict[str, list[np.ndarray]] = {f: [] for f in FIGURES}
    p = np.full(n, 1.0 / n)
    done = 0
    while done < resamples:
        size = min(chunk, resamples - done)
        W = rng.multinomial(n, p, size=size).astype(np.float64)  # response weights of each resample
        for f, v in _figures(W @ R).items():
            draws[f].append(v)
        done += size
    alpha = (1 - confidence) / 2
    out: dict[str, list[float] | None] = {}
    for f, parts in draws.items():
        v = np.concatenate(parts)
        v = v[~np.isnan(v)]
        out[f] = None if v.size == 0 else [round(float(x), 6) for x in np.quantile(v, [alpha, 1 - alpha])]
    return out


def summarise(
    R: np.ndarray, resamples: int, seed: int, confidence: float, name: str, response_level: bool = True
) -> dict[str, Any]:
    S = R.sum(axis=0)
    point = {f: _num(v) for f, v in _figures(S).items()}
    ci = bootstrap_ci(R, resamples, np.random.default_rng([seed, derive_seed("audit", name) % 2**32]), confidence)
    if not response_level:
        for f in RESPONSE_FIGURES:
            point[f], ci[f] = None, None
    return {
        **point,
        "ci": ci,
        "n_responses": int((R[:, _A] + R[:, _B] + R[:, _C] + R[:, _D] > 0).sum()),
        "n_items": int(S[_A] + S[_B] + S[_C] + S[_D]),
        "truth_fail_items": int(S[_B] + S[_D]),
        "truth_pass_items": int(S[_A] + S[_C]),
    }


def compute(
    t: AuditTable, resamples: int = 1000, seed: int = 0, confidence: float = 0.95, judge: str = ""
) -> dict[str, Any]:
    """Every figure of an audit, as a JSON-ready dict (top level: the headline figures)."""
    R = _counts(t)
    head = summarise(R, resamples, seed, confidence, "all")
    truth = np.asarray(t.truth, dtype=bool)
    jv = np.asarray(t.judge, dtype=np.int8)
    confusion = {
        "truth_pass": {"judge_pass": int(((jv == 1) & truth).sum()), "judge_fail": int(((jv == 0) & truth).sum()),
                       "judge_missing": int(((jv == -1) & truth).sum())},
        "truth_fail": {"judge_pass": int(((jv == 1) & ~truth).sum()), "judge_fail": int(((jv == 0) & ~truth).sum()),
                       "judge_missing": int(((jv == -1) & ~truth).sum())},
    }  # fmt: skip
    breakdowns: dict[str, dict[str, Any]] = {}
    for group in ITEM_GROUPS:
        values = np.asarray(getattr(t, group), dtype=object)
        rows = {}
        for value in sorted(set(values.tolist())):
            Rg = _counts(t, values == value, with_responses=False)
            Rg = Rg[(Rg[:, _A] + Rg[:, _B] + Rg[:, _C] + Rg[:, _D]) > 0]  # resample the responses that have such items
            rows[value] = summarise(Rg, resamples, seed, confidence, f"{group}={value}", response_level=False)
        breakdowns[group] = rows
    for group in RESPONSE_GROUPS:
        values = np.asarray(t.attrs[group], dtype=object)
        if group in ("perturbation", "kind") and set(values.tolist()) == {"(none)"}:
            continue
        breakdowns[group] = {
            value: summarise(R[values == value], resamples, seed, confidence, f"{group}={value}")
            for value in sorted(set(values.tolist()), key=_order_key(group, t))
        }
    _, edges = length_bins(t.prompt_chars)
    return {
        "judge": judge,
        **{f: head[f] for f in HEADLINE},
        **{f: head[f] for f in EXTRA},
        "ci": head["ci"],
        "confidence": confidence,
        "bootstrap": {"resamples": resamples, "unit": "response", "seed": seed, "method": "percentile"},
        "counts": {
            "responses": len(t),
            "instances": len(t.instances),
            "items": len(t.truth),
            "truth_pass_items": int(truth.sum()),
            "truth_fail_items": int((~truth).sum()),
            "judge_pass_items": int((jv == 1).sum()),
            "judge_fail_items": int((jv == 0).sum()),
            "judge_missing_items": int((jv == -1).sum()),
            "confusion": confusion,
            "responses_without_verdict": int(len(t) - sum(t.has_verdict)),
            "parse_failures": int(sum(t.parse_failed)),
            "truth_all_pass": int(R[:, _TPASS].sum()),
            "judge_all_pass": int(_judge_all(t).sum()),
        },
        "prompt_length_edges": edges,
        "breakdowns": breakdowns,
        "definitions": DEFINITIONS,
    }


def _judge_all(t: AuditTable) -> np.ndarray:
    resp = np.asarray(t.resp, dtype=np.int64)
    jp = np.asarray(t.judge, dtype=np.int8) == 1
    return np.bincount(resp[jp], minlength=len(t)) == np.bincount(resp, minlength=len(t))


def _order_key(group: str, t: AuditTable) -> Any:
    if group != "prompt_length":
        return str
    first: dict[str, int] = {}
    for label, c in zip(t.attrs["prompt_length"], t.prompt_chars):
        first[label] = min(first.get(label, c), c)
    return lambda label: first.get(label, 0)


# -- inputs --------------------------------------------------------------------------
def load_responses(path: str | Path, instances: dict[str, Instance]) -> tuple[list[ResponseLine], list[LineError]]:
    """Response lines; one without a response_id gets ``<id>#L<line number>`` (a verdicts
    file must then use that id). Unknown instance ids and duplicate response ids are errors."""
    lines: list[ResponseLine] = []
    errors: list[LineError] = []
    seen: set[tuple[str, str]] = set()
    for no, item in read_models(path, ResponseLine):
        if isinstance(item, LineError):
            errors.append(item)
            continue
        if item.id not in instances:
            errors.append(LineError(str(path), no, f"unknown instance id {item.id!r}"))
            continue
        if not item.response_id:
            item.response_id = f"{item.id}#L{no}"
        key = (item.id, item.response_id)
        if key in seen:
            errors.append(
                LineError(str(path), no, f"duplicate response_id {item.response_id!r} for instance {item.id!r}")
            )
            continue
        seen.add(key)
        lines.append(item)
    return lines, errors


def verdict_of(line: dict[str, Any], instance: Instance) -> Verdict:
    """A verdicts-file line's decided items (values read like judge output: true/1/"PASS"...)."""
    ids = [it.id for it in instance.checklist]
    items = line.get("items")
    parsed = verdict_from_json({"items": items}, ids) if isinstance(items, (dict, list)) else None
    decided = parsed.items if parsed is not None and parsed.error is None else {}
    error = line.get("parse_error")
    return Verdict(items=decided, parse_error=str(error) if error else None)


def load_verdicts(
    path: str | Path, instances: dict[str, Instance], responses: Sequence[ResponseLine]
) -> tuple[dict[tuple[str, str], Verdict], list[LineError]]:
    """``{"id", "response_id", "items": {item id: true|false}}`` per line; malformed lines,
    unknown responses and duplicates are reported as ``file:line: reason``."""
    known = {(r.id, r.response_id or ""): r for r in responses}
    out: dict[tuple[str, str], Verdict] = {}
    errors: list[LineError] = []
    p = str(path)
    with open(path, encoding="utf-8", errors="replace") as fh:
        for no, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError) as exc:
                errors.append(LineError(p, no, f"not valid JSON: {str(exc)[:120]}"))
                continue
            if (
                not isinstance(obj, dict)
                or not isinstance(obj.get("id"), str)
                or not isinstance(obj.get("response_id"), str)
            ):
                errors.append(LineError(p, no, "a verdict line needs string fields 'id' and 'response_id'"))
                continue
            key = (obj["id"], obj["response_id"])
            if key not in known:
                errors.append(LineError(p, no, f"no response {obj['response_id']!r} for instance {obj['id']!r}"))
                continue
            if key in out:
                errors.append(LineError(p, no, f"duplicate verdict for response {obj['response_id']!r}"))
                continue
            if not isinstance(obj.get("items"), (dict, list)) and not obj.get("parse_error"):
                errors.append(LineError(p, no, "'items' must be an object {item id: true|false}"))
                continue
            out[key] = verdict_of(obj, instances[obj["id"]])
    return out, errors


# -- report --------------------------------------------------------------------------
def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _fmt(figure: str, x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.3f}" if figure == "kappa" else _pct(x)


def _with_ci(figure: str, row: dict[str, Any]) -> str:
    ci = (row.get("ci") or {}).get(figure)
    value = _fmt(figure, row.get(figure))
    if ci is None or row.get(figure) is None:
        return value
    return f"{value} [{_fmt(figure, ci[0])}, {_fmt(figure, ci[1])}]"


GROUP_TITLES = {
    "tier": "By tier", "rule_kind": "By rule kind", "task": "By task type", "family": "By family",
    "prompt_length": "By prompt length (instance prompt characters, terciles)",
    "perturbation": "By perturbation category", "kind": "By perturbation kind",
}  # fmt: skip


def markdown(audit: dict[str, Any], plots: dict[str, str]) -> str:
    c = audit["counts"]
    conf = round(100 * audit["confidence"])
    lines = [
        "# LLM-judge audit",
        "",
        f"Judge: **{audit['judge'] or 'unnamed'}** · {c['responses']:,} responses to {c['instances']:,} instances · "
        f"{c['items']:,} checklist items ({c['truth_fail_items']:,} violated according to the checkers) · "
        f"{conf}% intervals from {audit['bootstrap']['resamples']:,} bootstrap resamples of responses.",
        "",
        "## Headline",
        "",
        "| figure | value | " + f"{conf}% CI |",
        "|---|---:|---:|",
    ]
    for f in FIGURES:
        ci = audit["ci"].get(f)
        lines.append(
            f"| `{f}` | {_fmt(f, audit[f])} | " + ("–" if ci is None else f"{_fmt(f, ci[0])} – {_fmt(f, ci[1])}") + " |"
        )
    lines += [
        "",
        f"Judge output that could not be parsed: {c['parse_failures']:,} responses; responses with no verdict: "
        f"{c['responses_without_verdict']:,}; checker All-pass {c['truth_all_pass']:,}, judge All-pass {c['judge_all_pass']:,}.",
        "",
        "## Confusion (items)",
        "",
        "| checker \\ judge | pass | fail | missing |",
        "|---|---:|---:|---:|",
    ]
    for row in ("truth_pass", "truth_fail"):
        r = c["confusion"][row]
        lines.append(
            f"| {row.replace('truth_', '')} | {r['judge_pass']:,} | {r['judge_fail']:,} | {r['judge_missing']:,} |"
        )
    if "confusion" in plots:
        lines += ["", f"![confusion matrix]({plots['confusion']})"]
    for group, rows in audit["breakdowns"].items():
        if not rows:
            continue
        lines += ["", f"## {GROUP_TITLES.get(group, group)}", ""]
        if group == "rule_kind" and "false_pass_by_rule_kind" in plots:
            lines += [f"![false-pass rate by rule kind]({plots['false_pass_by_rule_kind']})", ""]
        if group == "perturbation" and "false_pass_by_perturbation" in plots:
            lines += [f"![false-pass rate by perturbation]({plots['false_pass_by_perturbation']})", ""]
        response_level = group not in ITEM_GROUPS
        cols = ["item_accuracy", "false_pass_rate", "false_fail_rate", "kappa"] + (
            ["all_pass_agreement"] if response_level else []
        )
        lines.append(f"| {group} | responses | items (violated) | " + " | ".join(cols) + " |")
        lines.append("|---|---:|---:|" + "---:|" * len(cols))
        for value, row in rows.items():
            lines.append(
                f"| {value} | {row['n_responses']:,} | {row['n_items']:,} ({row['truth_fail_items']:,}) | "
                + " | ".join(_with_ci(f, row) for f in cols)
                + " |"
            )
    lines += ["", "## Definitions", ""]
    lines += [f"- `{k}`: {v}" for k, v in audit["definitions"].items()]
    lines += [
        "",
        "Truth is the checkers' grade of each response (pbsolve.grading). A missing judge verdict counts as fail "
        "for every figure and is also tallied in `missing_rate`. Rule-kind and tier rows are item-level groups: "
        "response-level figures (All-pass) do not apply to them.",
        "",
    ]
    return "\n".join(lines)


def _png(fig: Any) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def plot_confusion(audit: dict[str, Any]) -> bytes:
    from matplotlib.figure import Figure

    conf = audit["counts"]["confusion"]
    rows, cols = ("truth_pass", "truth_fail"), ("judge_pass", "judge_fail", "judge_missing")
    counts = np.array([[conf[r][c] for c in cols] for r in rows], dtype=float)
    totals = counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(totals > 0, counts / totals, 0.0)
    fig = Figure(figsize=(5.6, 3.2))
    ax = fig.add_subplot()
    ax.imshow(share, cmap="Blues", vmin=0, vmax=1)
    ax.set_xticks(range(3), ["judge: pass", "judge: fail", "judge: missing"])
    ax.set_yticks(range(2), ["checker: pass", "checker: fail"])
    for i in range(2):
        for j in range(3):
            ax.text(j, i, f"{int(counts[i, j]):,}\n{100 * share[i, j]:.1f}%", ha="center", va="center",
                    color="white" if share[i, j] > 0.6 else "black", fontsize=10)  # fmt: skip
    ax.set_title(f"Item verdicts, {audit['judge'] or 'judge'} vs checkers (row %)", fontsize=10)
    return _png(fig)


def plot_rates(rows: dict[str, Any], title: str, figure: str = "false_pass_rate") -> bytes | None:
    from matplotlib.figure import Figure

    data = [(k, r) for k, r in rows.items() if r.get(figure) is not None]
    if not data:
        return None
    data.sort(key=lambda kr: kr[1][figure])
    labels = [f"{k} (n={r['truth_fail_items'] if figure == 'false_pass_rate' else r['n_items']})" for k, r in data]
    values = np.array([r[figure] for _, r in data])
    lo = np.array([(r["ci"].get(figure) or [r[figure], r[figure]])[0] for _, r in data])
    hi = np.array([(r["ci"].get(figure) or [r[figure], r[figure]])[1] for _, r in data])
    fig = Figure(figsize=(7, 0.8 + 0.32 * len(data)))
    ax = fig.add_subplot()
    y = np.arange(len(data))
    ax.barh(y, values, color="#d9534f", xerr=[np.maximum(values - lo, 0), np.maximum(hi - values, 0)], capsize=3)
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xlabel(figure.replace("_", " ") + " (bootstrap CI over responses)")
    ax.set_title(title, fontsize=10)
    return _png(fig)


def _write_bytes(path: Path, data: bytes) -> None:
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(partial, path)


def write_report(audit: dict[str, Any], out_dir: Path, table: AuditTable | None = None) -> dict[str, Path]:
    """audit.json, report.md and the PNG plots (and items.jsonl with the item-level table)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    plots: dict[str, str] = {}
    written: dict[str, Path] = {}
    pngs = {
        "confusion": plot_confusion(audit),
        "false_pass_by_rule_kind": plot_rates(audit["breakdowns"].get("rule_kind", {}), "False-pass rate by rule kind"),
        "false_pass_by_perturbation": plot_rates(
            audit["breakdowns"].get("perturbation", {}), "False-pass rate by perturbation category"
        ),
    }
    for name, data in pngs.items():
        if data is not None:
            path = out_dir / f"{name}.png"
            _write_bytes(path, data)
            plots[name] = path.name
            written[name] = path
    audit = {**audit, "plots": plots}
    written["json"] = out_dir / "audit.json"
    _write_bytes(written["json"], (json.dumps(audit, indent=2, ensure_ascii=False) + "\n").encode())
    written["markdown"] = out_dir / "report.md"
    _write_bytes(written["markdown"], markdown(audit, plots).encode())
    if table is not None:
        buf = io.StringIO()
        for i, rid in enumerate(table.resp):
            buf.write(json.dumps({
                "id": table.ids[rid], "response_id": table.response_ids[rid], "item": table.item_ids[i],
                "tier": table.tier[i], "rule_kind": table.rule_kind[i], "checker": table.truth[i],
                "judge": {1: True, 0: False}.get(table.judge[i]),
            }, ensure_ascii=False) + "\n")  # fmt: skip
        written["items"] = out_dir / "items.jsonl"
        _write_bytes(written["items"], buf.getvalue().encode())
    return written


def audit(
    instances: dict[str, Instance],
    responses: Sequence[ResponseLine],
    verdicts: dict[tuple[str, str], Verdict],
    out_dir: Path | None = None,
    *,
    judge: str = "",
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Grade, compare, and (with ``out_dir``) write the report; returns the figures."""
    table = build_table(instances, responses, verdicts)
    figures = compute(table, resamples, seed, confidence, judge)
    if out_dir is not None:
        write_report(figures, Path(out_dir), table)
    return figures


def verdicts_from_lines(
    lines: Iterable[dict[str, Any]], instances: dict[str, Instance]
) -> dict[tuple[str, str], Verdict]:
    """Verdicts from verdict lines in memory (as written by the LLM judge run)."""
    return {(ln["id"], ln["response_id"]): verdict_of(ln, instances[ln["id"]]) for ln in lines}
