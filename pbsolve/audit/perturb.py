"""Near-miss answers with known truth: the input of a judge audit (``pbsolve perturb``).

From each certified instance this module builds labelled answers: correct ones in
unusual but valid formatting, plans that break exactly one rule, feasible plans that
miss the optimum by the smallest margin found, wrong figures, and wrong claims on
infeasible instances. These are the answers lenient judges pass.

**The label is the grade.** Every candidate is rendered to text and graded with the
checkers; the line records which checklist items fail (``fails``). A candidate whose
grade contradicts its kind (a "format" variant that fails an item, a "break_rule" that
breaks two rules, ...) is dropped and counted, never emitted.

**Family-independent kinds** are built here from the reference answer, the rule list,
the certificate and the family's ``baseline_answer``. **Family-specific kinds** (rule
breaks, sub-optimal and alternative plans, id/time formatting) come from a hook in the
family's checker package, ``near_misses(instance, rng) -> list[(kind, answer_dict)]``.
A family without the hook gets the family-independent kinds only, and the run says so.

**Deterministic.** The lines of an instance depend only on (seed, instance id), not on
the other instances in the file or their order.

Kinds (``category:detail``; the category says what the grade must show):

======================== =========================================================
``correct``               the reference answer (every item passes)
``format:*``              the reference in unusual formatting (every item passes)
``alternative_optimum``   another optimal plan (every item passes)
``alternative_conflict``  another certified minimal conflicting set (every item passes)
``break_rule:<kind>``     exactly one rule item fails, a rule of that kind
``suboptimal``            every rule holds; the optimality item fails, figures are true
``suboptimal_claims_optimum`` every rule holds; optimality and stated figures fail
``wrong_figures``         the reference stating one objective figure off by one
``wrong_verification``    the reference with one verification figure off by one
``wrong_binding``         the reference naming one binding rule too many or too few
``wrong_conservative``    the reference naming one conservative input too many or too few
``false_infeasible``      a feasible instance declared infeasible (every item fails)
``claims_plan``           an infeasible instance answered with a plan (every item fails)
``conflict_superset``     a certified conflict set plus one more rule (only conflict fails)
``conflict_all_rules``    every rule named as the conflict (only conflict fails)
``conflict_subset``       a certified conflict set minus one rule, which can all hold
``conflict_unrelated``    a rule set containing no conflicting set
======================== =========================================================
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pbsolve import interrupts
from pbsolve.family import checker
from pbsolve.grading import grade
from pbsolve.parsing import parse_response
from pbsolve.sampler import derive_seed
from pbsolve.schema import Grade, Instance

HOOK = "near_misses"
Hook = Callable[[Instance, random.Random], list[tuple[str, dict[str, Any]]]]

PROSE_PLAN = (
    "I worked through the rules one at a time and built the plan below. Every rule holds, and the "
    "objective figures are computed from the plan itself."
)
PROSE_INFEASIBLE = (
    "Not every rule can hold at once: the rules listed below cannot all be satisfied together, so no valid plan exists."
)
STYLES = ("compact", "fenced", "prose")

# Categories whose grade must pass every item.
ALL_PASS = frozenset({"correct", "format", "alternative_optimum", "alternative_conflict"})
CATEGORIES = (
    "correct", "format", "alternative_optimum", "alternative_conflict", "break_rule", "suboptimal",
    "suboptimal_claims_optimum", "wrong_figures", "wrong_verification", "wrong_binding", "wrong_conservative",
    "false_infeasible", "claims_plan", "conflict_superset", "conflict_all_rules", "conflict_subset",
    "conflict_unrelated",
)  # fmt: skip


def category(kind: str) -> str:
    return kind.split(":", 1)[0]


@dataclass(frozen=True)
class Perturbation:
    """One labelled answer: a response line plus the items its grade fails."""

    id: str
    response_id: str
    kind: str
    response: str
    fails: tuple[str, ...]
    target: str | None = None  # the checklist rule of the one failing item, when exactly one fails

    def line(self) -> dict[str, Any]:
        return {"id": self.id, "response_id": self.response_id, "kind": self.kind, "response": self.response,
                "fails": list(self.fails), "target": self.target}  # fmt: skip


@dataclass
class PerturbReport:
    perturbations: list[Perturbation] = field(default_factory=list)
    instances: int = 0
    kinds: Counter = field(default_factory=Counter)
    rejected: Counter = field(default_factory=Counter)  # kind -> candidates whose grade contradicted the kind
    reject_reasons: dict[str, str] = field(default_factory=dict)  # kind -> first reason seen
    no_hook: Counter = field(default_factory=Counter)  # family -> instances without family-specific kinds
    hook_errors: dict[str, str] = field(default_factory=dict)  # instance id -> error raised by the hook

    def messages(self) -> list[str]:
        out = []
        for fam, n in sorted(self.no_hook.items()):
            out.append(
                f"family {fam!r} has no `{HOOK}` hook (pbsolve.checkers.{fam}.{HOOK}): its {n} instance(s) get only "
                "the family-independent kinds (correct, format, wrong figures, wrong claims), no rule-breaking or "
                "sub-optimal plans"
            )
        for iid, why in sorted(self.hook_errors.items()):
            out.append(f"{iid}: the {HOOK} hook failed ({why}); family-independent kinds only")
        for kind, n in sorted(self.rejected.items()):
            out.append(
                f"dropped {n} {kind} candidate(s) whose grade contradicts the kind, e.g. {self.reject_reasons[kind]}"
            )
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "instances": self.instances,
            "responses": len(self.perturbations),
            "kinds": dict(sorted(self.kinds.items())),
            "rejected": dict(sorted(self.rejected.items())),
            "no_hook": dict(sorted(self.no_hook.items())),
            "hook_errors": dict(sorted(self.hook_errors.items())),
        }


def family_hook(family_id: str) -> Hook | None:
    """The family's ``near_misses`` function, or None when its checker package has none."""
    try:
        module = checker(family_id)
    except ImportError:
        return None
    fn = getattr(module, HOOK, None)
    return fn if callable(fn) else None


# -- rendering -----------------------------------------------------------------------
def _dumps(answer: Any, **kw: Any) -> str:
    return json.dumps(answer, ensure_ascii=False, **kw)


def render(answer: dict[str, Any], style: str) -> str:
    """Answer text in one of the ordinary styles every kind is drawn from."""
    if style == "compact":
        return _dumps(answer)
    if style == "fenced":
        return "```json\n" + _dumps(answer, indent=2) + "\n```"
    prose = PROSE_INFEASIBLE if answer.get("feasible") is False else PROSE_PLAN
    return prose + "\n\n```json\n" + _dumps(answer) + "\n```"


def _reordered(value: Any) -> Any:
    """Every object's keys in reverse order (lists keep their order)."""
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


def _text_formats(answer: dict[str, Any]) -> list[tuple[str, str]]:
    """The reference in unusual but valid text forms (all read by the parsing policy)."""
    prose = PROSE_INFEASIBLE if answer.get("feasible") is False else PROSE_PLAN
    spaced = _dumps(answer, indent="\t", separators=(" ,", " :  "))
    return [
        ("format:pretty_reordered", _dumps(_reordered(answer), indent=4)),
        ("format:whitespace", "\n\n   " + "\n".join(line + "   " for line in spaced.splitlines()) + "\n\n\n"),
        ("format:prose_bare", prose + "\n\nFinal answer:\n" + _dumps(answer)),
        ("format:fence_untagged", prose + "\n\n```\n" + _dumps(answer, indent=1) + "\n```"),
    ]


# -- family-independent candidates ---------------------------------------------------
def _enum_of(instance: Instance, key: str) -> list[str]:
    """Ids the answer schema allows under ``key`` (e.g. binding rules, uncertain inputs)."""
    for form in instance.answer_schema.get("oneOf", [instance.answer_schema]):
        prop = (form.get("properties") or {}).get(key)
        if isinstance(prop, dict):
            items = prop.get("items") or {}
            if isinstance(items.get("enum"), list):
                return [str(x) for x in items["enum"]]
    return []


def _bump_one(figures: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """A copy of a nested dict of integer figures with one figure off by one."""
    paths: list[tuple[str, ...]] = []

    def walk(d: dict[str, Any], prefix: tuple[str, ...]) -> None:
        for k, v in d.items():
            if isinstance(v, dict):
                walk(v, (*prefix, k))
            elif isinstance(v, int) and not isinstance(v, bool):
                paths.append((*prefix, k))

    walk(figures, ())
    if not paths:
        return None
    path = paths[rng.randrange(len(paths))]
    out = copy.deepcopy(figures)
    node = out
    for k in path[:-1]:
        node = node[k]
    value = node[path[-1]]
    node[path[-1]] = value + 1 if value <= 0 or rng.random() < 0.5 else value - 1
    return out


def _wrong_set(chosen: list[str], known: list[str], rng: random.Random) -> list[str] | None:
    """``chosen`` with one id added or one removed (whichever is possible; rng decides)."""
    extra = [k for k in known if k.upper() not in {c.upper() for c in chosen}]
    options = []
    if extra:
        options.append("add")
    if len(chosen) > 1 or (chosen and extra):
        options.append("drop")
    if not options:
        return None
    if rng.choice(options) == "add":
        return sorted([*chosen, rng.choice(extra)], key=lambda x: known.index(x) if x in known else len(known))
    drop = rng.randrange(len(chosen))
    return [c for i, c in enumerate(chosen) if i != drop]


def _generic(instance: Instance, rng: random.Random) -> list[tuple[str, dict[str, Any] | str]]:
    """(kind, answer dict or finished text) candidates any family supports."""
    ref = instance.reference
    rule_ids = [r.id for r in instance.rules]
    out: list[tuple[str, dict[str, Any] | str]] = [("correct", copy.deepcopy(ref))]
    out.extend(_text_formats(ref))
    if instance.certificate.status == "optimal":
        if isinstance(ref.get("objective"), dict):
            floats = copy.deepcopy(ref)
            floats["objective"] = {k: float(v) if isinstance(v, int) else v for k, v in ref["objective"].items()}
            out.append(("format:float_figures", floats))
            bumped = _bump_one(ref["objective"], rng)
            if bumped is not None:
                out.append(("wrong_figures", {**copy.deepcopy(ref), "objective": bumped}))
        out.append(("format:extra_notes", {**copy.deepcopy(ref), "notes": "Checked by hand against every rule."}))
        if isinstance(ref.get("verification"), dict):
            bumped = _bump_one(ref["verification"], rng)
            if bumped is not None:
                out.append(("wrong_verification", {**copy.deepcopy(ref), "verification": bumped}))
        for key in ("binding", "conservative"):
            if isinstance(ref.get(key), list):
                wrong = _wrong_set(list(ref[key]), _enum_of(instance, key), rng)
                if wrong is not None:
                    out.append((f"wrong_{key}", {**copy.deepcopy(ref), key: wrong}))
        if rule_ids:
            claim = sorted(rng.sample(rule_ids, min(len(rule_ids), rng.choice((2, 3)))), key=rule_ids.index)
            out.append(("false_infeasible", {"feasible": False, "conflict": claim}))
        return out

    sets = [list(s) for s in instance.certificate.conflict_sets or []]
    named = {c.upper() for c in ref.get("conflict") or []}
    others = [s for s in sets if {c.upper() for c in s} != named]
    if others:
        out.append(("alternative_conflict", {"feasible": False, "conflict": others[rng.randrange(len(others))]}))
    try:
        baseline = checker(instance.family).baseline_answer(instance)
    except Exception as exc:  # a family's baseline planner failing costs this one kind only
        interrupts.reraise_if_stopping(exc)
        baseline = None
    if isinstance(baseline, str):
        parsed = parse_response(baseline)
        out.append(("claims_plan", parsed.value if isinstance(parsed.value, dict) else baseline))
    if not sets:
        return out
    base = sets[rng.randrange(len(sets))]
    ordered = lambda ids: sorted(ids, key=lambda r: rule_ids.index(r) if r in rule_ids else len(rule_ids))  # noqa: E731
    outside = [r for r in rule_ids if r not in base]
    if outside:
        out.append(("conflict_superset", {"feasible": False, "conflict": ordered([*base, rng.choice(outside)])}))
    if set(rule_ids) not in [set(s) for s in sets]:
        out.append(("conflict_all_rules", {"feasible": False, "conflict": list(rule_ids)}))
    if len(base) > 1:
        drop = rng.randrange(len(base))
        out.append(("conflict_subset", {"feasible": False, "conflict": [r for i, r in enumerate(base) if i != drop]}))
    size = max(1, min(len(base), len(rule_ids) - 1))
    for _ in range(30):
        pick = set(rng.sample(rule_ids, size))
        if not any(set(s) <= pick for s in sets):
            out.append(("conflict_unrelated", {"feasible": False, "conflict": ordered(pick)}))
            break
    return out


# -- labelling -----------------------------------------------------------------------
def contradiction(instance: Instance, kind: str, g: Grade) -> str | None:
    """Why a graded candidate does not fit its kind (None when it does)."""
    rule_of = {it.id: it.rule for it in instance.checklist}
    rule_ids = {r.id for r in instance.rules}
    kind_of = {r.id: r.kind for r in instance.rules}
    failing = [rule_of[i.id] for i in g.items if not i.passed]
    broken = [r for r in failing if r in rule_ids]
    cat = category(kind)
    if cat in ALL_PASS:
        return f"fails {failing}" if failing else None
    if cat == "break_rule":
        want = kind.split(":", 1)[1] if ":" in kind else None
        if len(broken) != 1:
            return f"breaks {len(broken)} rules ({broken})"
        if want is not None and kind_of[broken[0]] != want:
            return f"breaks a {kind_of[broken[0]]} rule, not a {want} rule"
        return None
    if cat in ("suboptimal", "suboptimal_claims_optimum"):
        if broken:
            return f"breaks {broken}"
        if "objective" not in failing:
            return "passes the optimality item"
        if ("validation" in failing) != (cat == "suboptimal_claims_optimum"):
            return "stated-figures item " + ("fails" if "validation" in failing else "passes")
        return None
    exact = {
        "wrong_figures": ["validation"], "wrong_verification": ["verification"], "wrong_binding": ["binding"],
        "wrong_conservative": ["conservative"], "conflict_superset": ["conflict"], "conflict_all_rules": ["conflict"],
        "conflict_subset": ["conflict"], "conflict_unrelated": ["conflict"],
    }  # fmt: skip
    if cat in exact:
        return None if failing == exact[cat] else f"fails {failing}, expected exactly {exact[cat]}"
    if cat in ("false_infeasible", "claims_plan"):
        return None if len(failing) == len(g.items) else f"passes {len(g.items) - len(failing)} item(s)"
    return None if failing else "passes every item"  # a hook's own kind must at least be wrong somewhere


def _wanted(kind: str, categories: set[str] | None) -> bool:
    return categories is None or category(kind) in categories or kind in categories


def perturb_instance(
    instance: Instance, seed: int = 0, categories: Iterable[str] | None = None, report: PerturbReport | None = None
) -> list[Perturbation]:
    """Labelled near-miss answers for one instance (see the module docstring)."""
    report = report if report is not None else PerturbReport()
    cats = set(categories) if categories is not None else None
    rng = random.Random(derive_seed("perturb", seed, instance.id))
    candidates: list[tuple[str, dict[str, Any] | str]] = _generic(instance, rng)
    hook = family_hook(instance.family)
    if hook is None:
        report.no_hook[instance.family] += 1
    else:
        try:
            candidates.extend(hook(instance, random.Random(derive_seed("near_misses", seed, instance.id))))
        except Exception as exc:  # a hook bug must not stop the run
            interrupts.reraise_if_stopping(exc)
            report.hook_errors[instance.id] = f"{type(exc).__name__}: {exc}"[:200]
    out: list[Perturbation] = []
    seen: Counter = Counter()
    style_rng = random.Random(derive_seed("styles", seed, instance.id))
    for kind, answer in candidates:
        style = style_rng.choice(STYLES)  # drawn for every candidate, so filtering keeps the others' styles
        if not _wanted(kind, cats):
            continue
        text = answer if isinstance(answer, str) else render(answer, style)
        g = grade(instance, text)
        why = contradiction(instance, kind, g)
        if why is not None:
            report.rejected[kind] += 1
            report.reject_reasons.setdefault(kind, f"{instance.id}: {why}")
            continue
        seen[kind] += 1
        rid = f"{instance.id}~{kind}" + (f"~{seen[kind]}" if seen[kind] > 1 else "")
        rules = {it.id: it.rule for it in instance.checklist}
        fails = tuple(i.id for i in g.items if not i.passed)
        out.append(Perturbation(instance.id, rid, kind, text, fails, rules[fails[0]] if len(fails) == 1 else None))
        report.kinds[kind] += 1
    report.instances += 1
    report.perturbations.extend(out)
    return out


def perturb(instances: Iterable[Instance], seed: int = 0, categories: Iterable[str] | None = None) -> PerturbReport:
    report = PerturbReport()
    cats = list(categories) if categories is not None else None
    for inst in instances:
        perturb_instance(inst, seed, cats, report)
    return report
