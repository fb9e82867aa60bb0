"""Write tests/data/mutation_moves_allocation.jsonl: a fixed sample of answers whose
verdict per rule was decided by the CP-SAT solver model, for the fast mutation-kill test
(tests/test_mutation_kills_checkers.py).

Why: the rule checks are the heart of grading, but the suites that hold them against the
solver model (tests/test_allocation_model_vs_checker.py) solve for minutes -- too slow to
run once per mutant. This script does the solving once: for sample instances of every
allocation task it takes single moves away from the certified plan (each breaks one or
more rules), keeps a few per rule kind broken, asks the model, rule by rule, whether the
moved plan satisfies it, and stores instance, answer and the model's verdicts. It refuses
to write a line on which the checker disagrees with the model (that would be a grading bug
to fix first). The test then only grades stored answers: milliseconds per mutant.

Run from a tree in the installed layout (the mutation stage has one), with the code to
hold fixed, e.g.:  cd build/mutation && PYTHONPATH=. python ../../scripts/mutation_fixture.py
Add the argument ``scheduling`` for tests/data/mutation_moves_scheduling.jsonl.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "mutation_moves_allocation.jsonl"
SEED = 7
INDICES = 24
PER_KIND = 2  # moves kept per rule kind broken
PASSING_PER_INSTANCE = 1  # moves that break nothing, kept too (a check must not be too strict)


SCHEDULING_OUT = OUT.with_name("mutation_moves_scheduling.jsonl")


def scheduling() -> int:
    """The same sample for the timetabling tasks (tests/test_mutation_kills_checkers.py):
    single moves (one event's start or room) away from the certified plan, the backup rooms
    of the reference kept, and the CP-SAT model's verdict on every rule."""
    from pbsolve.grading import grade
    from tests.helpers import answer_of, backups_of, instance_at, model_verdict, plan_of, single_moves

    lines: list[str] = []
    for task in ("meeting_planning", "course_timetabling", "exam_scheduling"):
        kept: dict[str, int] = {}
        for index in range(INDICES):
            inst = instance_at(task, SEED, index, "small", index % 2 == 1)
            if inst is None or inst.certificate.status != "optimal" or inst.recovery is not None:
                continue
            backups = backups_of(inst.reference)
            item_rule = {it.id: it.rule for it in inst.checklist}
            passing = 0
            answers: list[dict] = []
            for plan in single_moves(inst, plan_of(inst, inst.reference)):
                answer = answer_of(inst, plan, backups=backups)
                g = grade(inst, json.dumps(answer))
                got = {item_rule[i.id]: i.passed for i in g.items}
                broken = {r.kind for r in inst.rules if not got[r.id]}
                if broken:
                    if all(kept.get(k, 0) >= PER_KIND for k in broken):
                        continue
                elif passing >= PASSING_PER_INSTANCE:
                    continue
                expected = {r.id: model_verdict(inst, plan, [r.id], backups)[0] for r in inst.rules}
                disagree = {rid for rid, ok in expected.items() if ok != got[rid]}
                if disagree:
                    raise SystemExit(
                        f"checker and model disagree on {inst.id} rules {sorted(disagree)}: fix the checker first"
                    )
                for k in broken:
                    kept[k] = kept.get(k, 0) + 1
                passing += not broken
                answers.append({"answer": answer, "model_verdicts": expected})
            if answers:
                lines.append(json.dumps({"instance": inst.model_dump(mode="json"), "answers": answers}, sort_keys=True))
        print(f"{task}: rule kinds broken {sorted(kept)}")
    SCHEDULING_OUT.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} instances -> {SCHEDULING_OUT}")
    return 0


def main() -> int:
    sys.path.insert(0, ".")
    if sys.argv[1:] == ["scheduling"]:
        return scheduling()
    from tests.allocation_helpers import TASKS, answer_of, evaluate, instance_at, model_verdict, plan_of, single_moves

    lines: list[str] = []  # one line per instance: {"instance", "answers": [{"answer", "model_verdicts"}]}
    for task in TASKS:
        kept: dict[str, int] = {}
        for index in range(INDICES):
            inst = instance_at(task, SEED, index, "small", index % 2 == 1)
            if inst is None or inst.certificate.status != "optimal":
                continue
            passing = 0
            answers: list[dict] = []
            for plan in single_moves(inst, plan_of(inst, inst.reference)):
                verdicts, _ = evaluate(inst, plan)
                broken = {r.kind for r in inst.rules if not verdicts[r.id][0]}
                if broken:
                    if all(kept.get(k, 0) >= PER_KIND for k in broken):
                        continue
                elif passing >= PASSING_PER_INSTANCE:
                    continue
                expected = {r.id: model_verdict(inst, plan, [r.id])[0] for r in inst.rules}
                disagree = {rid for rid, ok in expected.items() if ok != verdicts[rid][0]}
                if disagree:
                    raise SystemExit(
                        f"checker and model disagree on {inst.id} rules {sorted(disagree)}: fix the checker first"
                    )
                for k in broken:
                    kept[k] = kept.get(k, 0) + 1
                passing += not broken
                answer = answer_of(inst, plan, base=inst.reference)
                answers.append({"answer": answer, "model_verdicts": expected})
            if answers:
                lines.append(json.dumps({"instance": inst.model_dump(mode="json"), "answers": answers}, sort_keys=True))
        print(f"{task}: rule kinds broken {sorted(kept)}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} instances -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
