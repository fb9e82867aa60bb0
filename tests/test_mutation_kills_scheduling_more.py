"""Timetable verdicts the mutation campaign mutF found unguarded, one behaviour each.

checkers/scheduling/checks.py: the generator never pairs room backups with a recovery
scenario (exception_recovery excludes robustness_design), but the grader accepts such a
hand-written ground truth, and then the recovery plan is read with backup rooms and
judged with them, by the rules and by a backup-cost term of the recovery objective. And a
timetable checker that brings an ``evaluate`` of its own is graded by it (the fast
evaluator of the plain checker would skip it).

Each test grades an answer built from a generated instance's certified reference through
the family's public ``check_answer``. The survivors argued equivalent are in
scripts/mutation_equivalents.toml (section of campaign mutF).
"""

from __future__ import annotations

from typing import Any

import pytest

from pbsolve.checkers.scheduling import check_answer
from pbsolve.checkers.scheduling.checks import TimetableChecker, TimetablePlan, Verdict
from pbsolve.checkers.scheduling.instance_data import TimetableData
from pbsolve.checking import check_answer as generic_check_answer
from pbsolve.params import TypedParams
from pbsolve.schema import ChecklistItem, Instance, ObjectiveTerm, Recovery, Rule
from tests.instances import find
from tests.kill_helpers import item_passes, reference


# -- instances (generated once per process by tests.instances) -------------------------------
@pytest.fixture(scope="module")
def exams_with_backups() -> Instance:
    """Room backups and a backup-cost term (the instance tests/test_mutation_kills_scheduling.py uses)."""
    inst = find("exam_scheduling", 11, "default", include=("robustness_design",))
    assert inst is not None, "the generator no longer gives this instance"
    return inst


def _with_backup_recovery(inst: Instance) -> Instance:
    """``inst`` with a recovery whose scenario adds no rule and whose objective is the
    backup cost alone, certified at the main plan's backup cost (the main plan is then a
    certified recovery plan too)."""
    (term,) = [t for t in inst.objective if t.kind == "backup_cost"]
    best = inst.certificate.objective or {}
    cert = inst.certificate.model_copy(update={"objective": {term.id: best[term.id]}})
    recovery = Recovery(scenario=[], objective=[term], certificate=cert)
    n = len(inst.checklist)
    items = [
        ChecklistItem(id=f"C{n + k + 1}", rule=rule, text=rule, tier="hard")
        for k, rule in enumerate(("recovery:format", "recovery:rules", "recovery:objective"))
    ]
    return inst.model_copy(update={"recovery": recovery, "checklist": [*inst.checklist, *items]})


def _answer_recovering_with_the_main_plan(inst: Instance) -> dict[str, Any]:
    answer = reference(inst)
    answer["recovery"] = {
        "schedule": answer["schedule"],
        "objective": {"backup_cost": inst.certificate.objective["backup_cost"]},
    }  # type: ignore[index]
    return answer


# -- a recovery under rules asking for backup rooms -------------------------------------------
def test_a_recovery_plan_under_a_backup_rule_is_judged_with_the_backup_rooms_its_rows_name(
    exams_with_backups: Instance,
) -> None:
    inst = _with_backup_recovery(exams_with_backups)
    assert "room_backup" in {r.kind for r in inst.rules}
    assert item_passes(check_answer, inst, _answer_recovering_with_the_main_plan(inst), "recovery:rules")


def test_a_backup_cost_term_of_the_recovery_objective_counts_the_recovery_rows_backup_rooms(
    exams_with_backups: Instance,
) -> None:
    inst = _with_backup_recovery(exams_with_backups)
    assert item_passes(check_answer, inst, _answer_recovering_with_the_main_plan(inst), "recovery:objective")


# -- a timetable checker with an evaluate of its own ------------------------------------------
class _NothingHolds(TimetableChecker):
    """A timetable checker whose own ``evaluate`` fails every rule it is given."""

    def evaluate(
        self,
        data: TimetableData,
        rules: list[Rule],
        objective: list[ObjectiveTerm],
        plan: TimetablePlan,
        typed: TypedParams | None = None,
    ) -> tuple[dict[str, Verdict], dict[str, int]]:
        verdicts, values = super().evaluate(data, rules, objective, plan, typed)
        return {rid: (False, "refused by the subclass") for rid in verdicts}, values


def test_a_timetable_checker_with_an_evaluate_of_its_own_is_graded_by_it(exams_with_backups: Instance) -> None:
    inst = exams_with_backups.model_copy()
    verdicts = generic_check_answer(_NothingHolds(), inst, reference(inst))
    rule_items = [it.id for it in inst.checklist if it.rule in {r.id for r in inst.rules}]
    assert rule_items and all(verdicts[i] == (False, "refused by the subclass") for i in rule_items)
    assert verdicts[next(it.id for it in inst.checklist if it.rule == "objective")][0]
