"""Write tests/data/mutation_moves_<family>.jsonl: a fixed sample of answers whose
verdict per rule was decided by the CP-SAT solver model, for the fast mutation-kill test
(tests/test_mutation_kills_checkers.py).

Why: the rule checks are the heart of grading, but the suites that hold them against the
solver model (tests/test_allocation_model_vs_checker.py) solve for minutes -- too slow to
run once per mutant. This script does the solving once: for sample instances of every
task type of the family it takes single moves away from the certified plan (each breaks one or
more rules), keeps a few per rule kind broken, asks the model, rule by rule, whether the
moved plan satisfies it, and stores instance, answer and the model's verdicts. It refuses
to write a line on which the checker disagrees with the model (that would be a grading bug
to fix first). The test then only grades stored answers: milliseconds per mutant.

Run from a tree in the installed layout (the mutation stage has one), with the code to
hold fixed, e.g.:  cd build/mutation && PYTHONPATH=. python ../../scripts/mutation_fixture.py
Name the family as the argument (default ``allocation``); the family-specific parts (moves,
answers, the model's verdict) come from tests/family_adapters.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
SEED = 7
INDICES = 24
PER_KIND = 2  # moves kept per rule kind broken
PASSING_PER_INSTANCE = 1  # moves that break nothing, kept too (a check must not be too strict)
INCLUDE_TRIES = 6  # indices tried per pool kind no stored move breaks yet, with the kind included


def sample(family: str) -> list[str]:
    """One JSON line per instance: {"instance", "answers": [{"answer", "model_verdicts"}]}.

    A first pass takes the first INDICES indices of every task type; a second pass asks,
    for every rule kind of the task's pool that no stored move breaks yet (rarely sampled
    or opt-in kinds such as the stateful ones), for instances that include it, so that
    every check the task's instances can carry is reached by some stored answer."""
    from pbsolve.family import families
    from pbsolve.family import find_task
    from pbsolve.taxonomy import MECHANISM_IDS
    from tests.family_adapters import ADAPTERS, instance_at

    ad = ADAPTERS[family]
    lines: list[str] = []
    for task in [t.id for t in families()[family].spec.tasks]:
        kept: dict[str, int] = {}
        for index in range(INDICES):
            inst = instance_at(task, SEED, index, "small", index % 2 == 1)
            line = _moves(ad, inst, kept)
            if line:
                lines.append(line)
        pool = [c.id for c in find_task(task).pool if c.id not in MECHANISM_IDS]
        for kind in pool:
            for index in range(INCLUDE_TRIES):
                if kept.get(kind, 0) >= 1:
                    break
                inst = instance_at(task, SEED, 1000 + index, "small", False, (kind,))
                if inst is not None and kind in {r.kind for r in inst.rules}:
                    line = _moves(ad, inst, kept)
                    if line:
                        lines.append(line)
        print(f"{task}: rule kinds broken {sorted(kept)}; never broken {sorted(set(pool) - set(kept))}")
    return lines


def _moves(ad: Any, inst: Any, kept: dict[str, int]) -> str | None:
    """The instance and its kept single-move answers as one line (None when none is kept).
    A move is kept while some rule kind it breaks has fewer than PER_KIND moves stored."""
    if inst is None or inst.certificate.status != "optimal" or inst.recovery is not None:
        return None  # a recovery plan is graded by its own items, outside the rule verdicts
    passing = 0
    answers: list[dict] = []
    for plan in ad.single_moves(inst, ad.plan_of(inst, inst.reference)):
        verdicts, _ = ad.evaluate(inst, plan)
        broken = {r.kind for r in inst.rules if not verdicts[r.id][0]}
        if broken:
            if all(kept.get(k, 0) >= PER_KIND for k in broken):
                continue
        elif passing >= PASSING_PER_INSTANCE:
            continue
        expected = {r.id: ad.model_verdict(inst, plan, [r.id])[0] for r in inst.rules}
        disagree = {rid for rid, ok in expected.items() if ok != verdicts[rid][0]}
        if disagree:
            raise SystemExit(f"checker and model disagree on {inst.id} rules {sorted(disagree)}: fix the checker first")
        for k in broken:
            kept[k] = kept.get(k, 0) + 1
        passing += not broken
        answers.append({"answer": ad.answer_of(inst, plan, base=inst.reference), "model_verdicts": expected})
    if not answers:
        return None
    return json.dumps({"instance": inst.model_dump(mode="json"), "answers": answers}, sort_keys=True)


def main() -> int:
    sys.path.insert(0, ".")
    family = sys.argv[1] if len(sys.argv) > 1 else "allocation"
    out = DATA / f"mutation_moves_{family}.jsonl"
    lines = sample(family)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} instances -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
