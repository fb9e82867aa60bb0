"""Workforce verdicts held for the mutation campaign (pbsolve issue 12), one behaviour each.

No test of the campaign's selection graded a workforce answer before this file (mutmut's
forced-fail self-test could not even start on the four checker files), so the file has
two parts:

- the stored verdict sample, tests/data/mutation_moves_workforce.jsonl (written by
  ``scripts/mutation_fixture.py workforce``, which solved once and refused any answer on
  which checker and CP-SAT model disagree): every rule item of every stored single-move
  answer gets the model's verdict, the certified reference of every stored instance
  passes every item (its objective item against CP-SAT's proven optimum), and every
  stored answer's own objective figures (the model's, checked when the sample was
  written) are what the checker computes;
- behaviour tests for what the sample cannot reach, each grading an answer built from a
  generated instance's certified reference with one change and asserting the verdict of
  one checklist item, after asserting the instance has the needed shape.

The survivors argued equivalent are in scripts/mutation_equivalents.toml.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pbsolve.checkers.workforce import check_answer
from pbsolve.grading import grade
from pbsolve.schema import Instance
from tests.kill_helpers import by_id as _by_id
from tests.kill_helpers import item_passes, stored_cases, stored_lines, stored_records
from tests.kill_helpers import only_rule as _rule
from tests.kill_helpers import reference as _reference
from tests.kill_helpers import rule_params as _params
from tests.kill_helpers import with_params as _with_params

DATA = Path(__file__).parent / "data"
TASKS = (
    "recruitment_planning",
    "shift_duty_scheduling",
    "volunteer_scheduling",
    "work_assignment_scheduling",
)


# -- the stored verdict sample --------------------------------------------------------------
def _graded(inst: Instance, answer: dict[str, Any]) -> dict[str, bool]:
    """Checklist rule (or item name) -> passed, through the family's public check_answer."""
    verdicts = check_answer(inst, answer)
    return {it.rule: verdicts[it.id][0] for it in inst.checklist}


@pytest.mark.parametrize("task", TASKS)
def test_every_rule_item_of_a_stored_single_move_answer_gets_the_solver_models_verdict(task: str) -> None:
    """Each rule's item passes exactly when the CP-SAT model accepts the plan with that rule on."""
    wrong = []
    for inst, answer, model in stored_cases("workforce", task):
        passed = _graded(inst, answer)
        wrong += [(inst.id, rid, passed[rid]) for rid in model if passed[rid] != model[rid]]
    assert not wrong


@pytest.mark.parametrize("task", TASKS)
def test_a_stored_answer_that_breaks_a_rule_gets_no_all_pass_reward(task: str) -> None:
    for inst, answer, model in stored_cases("workforce", task):
        if not all(model.values()):
            assert grade(inst, json.dumps(answer)).reward == 0.0, inst.id


@pytest.mark.parametrize("task", TASKS)
def test_a_stored_answer_states_its_plans_own_objective_figures(task: str) -> None:
    """The sample's answers state the figures the solver model gives their plans (checked
    when the sample was written), so the validation item passes on every one of them."""
    for inst, answer, _ in stored_cases("workforce", task):
        assert _graded(inst, answer)["validation"], inst.id


@pytest.mark.parametrize("task", TASKS)
def test_the_certified_reference_of_every_stored_instance_passes_every_item(task: str) -> None:
    """Every rule kept, the objective equal to CP-SAT's proven optimum, the figures its own."""
    for rec in stored_records("workforce", task):
        inst = Instance.model_validate(rec["instance"])
        failed = [rule for rule, ok in _graded(inst, copy.deepcopy(inst.reference)).items() if not ok]
        assert not failed, inst.id


def test_the_stored_sample_breaks_rules_of_every_task_and_some_answers_break_none() -> None:
    """The sample is only as strong as its reach: every task has answers breaking rules (a
    too-lax check is caught) and answers breaking nothing (a too-strict one is caught)."""
    broken: Counter[str] = Counter()
    clean: Counter[str] = Counter()
    for task in TASKS:
        for _, _, model in stored_cases("workforce", task):
            (clean if all(model.values()) else broken)[task] += 1
    assert set(broken) == set(clean) == set(TASKS)


# == behaviour tests: helpers ================================================================
Row = dict[str, Any]


@cache
def _stored_instance(instance_id: str) -> str:
    (line,) = [line for line in stored_lines("workforce") if json.loads(line)["instance"]["id"] == instance_id]
    return json.dumps(json.loads(line)["instance"])


def _stored(task: str, kind: str | None = None, mechanism: str | None = None) -> Instance:
    """A fresh copy of the first stored instance of ``task`` with a rule of ``kind`` and
    the ``mechanism`` (the sample's instances: generated and certified, nothing to solve)."""
    for rec in stored_records("workforce", task):
        inst = rec["instance"]
        if (kind is None or kind in {r["kind"] for r in inst["rules"]}) and (
            mechanism is None or mechanism in inst["mechanisms"]
        ):
            return Instance.model_validate(json.loads(_stored_instance(inst["id"])))
    raise AssertionError(f"the stored sample has no {task} instance with {kind} {mechanism}")


def _passes(inst: Instance, answer: dict[str, Any], rule: str) -> bool:
    return item_passes(check_answer, inst, answer, rule)


def _with_data(inst: Instance, group: str, item: str, **fields: Any) -> Instance:
    """The instance with one figure of its data changed: ``fields`` of the ``group`` entry ``item``."""
    data = copy.deepcopy(inst.data)
    (entry,) = [x for x in data[group] if x["id"] == item]
    entry.update(fields)
    return inst.model_copy(update={"data": data})


# == every task: a recovery plan counted against the answer's own main plan ===================
@pytest.mark.parametrize("task", TASKS)
def test_the_certified_reference_of_a_recovery_instance_passes_every_item(task: str) -> None:
    """The recovery items read the main plan back as the 'changes' term's current plan
    (the task checker's ``existing``): the reference's recovery plan is then optimal."""
    from tests.instances import find

    inst = find(task, 0, "small", ("exception_recovery",))
    assert inst is not None and inst.recovery is not None
    assert any(t.kind == "changes" for t in inst.recovery.objective)
    verdicts = check_answer(inst.model_copy(), _reference(inst))
    assert all(ok for ok, _ in verdicts.values()), {k: v for k, v in verdicts.items() if not v[0]}


# == Recruitment Planning =====================================================================
REC = "recruitment_planning"


def _steps(answer: dict[str, Any]) -> dict[tuple[str, str], Row]:
    return {(row["candidate"], row["stage"]): row for row in answer["schedule"]}


def test_a_schedule_listing_a_stage_twice_fails_the_format_item() -> None:
    inst = _stored(REC)
    answer = _reference(inst)
    answer["schedule"].append(copy.deepcopy(answer["schedule"][0]))
    assert not _passes(inst, answer, "format")


def test_a_schedule_missing_a_stage_fails_the_format_item() -> None:
    inst = _stored(REC)
    answer = _reference(inst)
    del answer["schedule"][-1]
    assert not _passes(inst, answer, "format")


def test_a_staff_list_holding_something_other_than_names_fails_the_format_item() -> None:
    inst = _stored(REC)
    answer = _reference(inst)
    answer["schedule"][0]["staff"][0] = 7
    assert not _passes(inst, answer, "format")


def test_a_backup_that_is_not_a_name_fails_the_format_item() -> None:
    inst = _stored(REC, "backup_staff")
    answer = _reference(inst)
    answer["schedule"][0]["backup"] = 7
    assert not _passes(inst, answer, "format")


def test_a_backup_who_already_runs_the_stage_fails_the_backup_item() -> None:
    inst = _stored(REC, "backup_staff")
    answer = _reference(inst)
    row = answer["schedule"][0]
    row["backup"] = row["staff"][0]
    assert not _passes(inst, answer, "backup_staff")


def test_a_backup_not_qualified_for_the_stage_fails_the_backup_item() -> None:
    """The backup is free and available then; only the stage is not among theirs."""
    inst = _stored(REC, "backup_staff")
    answer = _reference(inst)
    staff = _by_id(inst, "staff")
    row, other = next(
        (row, p)
        for row in answer["schedule"]
        for p in staff.values()
        if p["id"] not in row["staff"] and row["stage"] not in p["stages"] and row["slot"] not in p["unavailable"]
    )
    row["backup"] = other["id"]
    assert not _passes(inst, answer, "backup_staff")


def test_a_backup_who_runs_another_stage_in_that_slot_fails_the_backup_item() -> None:
    """Qualified and available, so the row itself is fine; the clash appears only once the
    stage's own staff member drops out and the backup takes over."""
    inst = _stored(REC, "backup_staff")
    answer = _reference(inst)
    staff = _by_id(inst, "staff")
    rows = answer["schedule"]
    row, busy = next(
        (row, p)
        for row in rows
        for other in rows
        if other is not row and other["slot"] == row["slot"]
        for p in other["staff"]
        if p not in row["staff"] and row["stage"] in staff[p]["stages"] and row["slot"] not in staff[p]["unavailable"]
    )
    row["backup"] = busy
    assert _passes(inst, answer, "staff_no_clash")
    assert not _passes(inst, answer, "backup_staff")


def test_a_candidate_whose_stages_all_move_a_day_later_keeps_their_span() -> None:
    """The span is the last stage's day minus the first's, never their sum: one candidate's
    stages each moved to the same slot of the next day still keep the rule."""
    inst = _stored(REC, "max_span")
    answer = _reference(inst)
    by_day: dict[int, list[str]] = {}
    for s in inst.data["slots"]:
        by_day.setdefault(s["day"], []).append(s["id"])
    later = {x: by_day[d + 1][k] for d, ids in by_day.items() if d + 1 in by_day for k, x in enumerate(ids)}
    rows = [row for row in answer["schedule"] if row["candidate"] == inst.data["candidates"][-1]["id"]]
    assert all(row["slot"] in later for row in rows)
    for row in rows:
        row["slot"] = later[row["slot"]]
    assert _passes(inst, _reference(inst), "max_span") and _params(inst, "max_span")["days"] >= 1
    assert _passes(inst, answer, "max_span")


def _panel_rows(inst: Instance, answer: dict[str, Any]) -> list[Row]:
    stage = _params(inst, "panel_cooldown")["stage"]
    return [row for row in answer["schedule"] if row["stage"] == stage]


def test_a_panel_held_in_the_last_slot_has_no_cool_down_slot_to_keep() -> None:
    inst = _stored(REC, "panel_cooldown")
    answer = _reference(inst)
    slots = [s["id"] for s in inst.data["slots"]]
    panel = _panel_rows(inst, answer)[0]
    panel["slot"] = slots[-1]
    assert _passes(inst, answer, "panel_cooldown")


def test_a_panel_member_running_a_stage_in_the_next_slot_of_the_day_fails_the_cool_down() -> None:
    """The last panel of the schedule sits in the day's second-to-last slot, its member runs
    another stage in the last one (the slot after the panel, on the same day); an earlier
    panel of the schedule ends its day, which leaves nothing to check for it alone."""
    inst = _stored(REC, "panel_cooldown")
    answer = _reference(inst)
    slots = inst.data["slots"]
    ends_day = {a["id"] for a, b in itertools.pairwise(slots) if a["day"] != b["day"]}
    *earlier, panel = _panel_rows(inst, answer)
    assert slots[-2]["day"] == slots[-1]["day"] and any(row["slot"] in ends_day for row in earlier)
    member = panel["staff"][0]
    after = next(row for row in answer["schedule"] if row is not panel and member not in row["staff"])
    panel["slot"], after["slot"] = slots[-2]["id"], slots[-1]["id"]
    after["staff"][0] = member
    assert not _passes(inst, answer, "panel_cooldown")


def test_days_past_the_listed_budget_releases_release_nothing() -> None:
    """The releases are cut to the days before the last day with fees, the last of them one
    short of that day's fees: the money runs out by one on that day."""
    inst = _stored(REC, "budget_release")
    answer = _reference(inst)
    day = {s["id"]: s["day"] for s in inst.data["slots"]}
    fee = {p["id"]: p["fee"] for p in inst.data["staff"]}
    spent: Counter[int] = Counter()
    for row in answer["schedule"]:
        spent[day[row["slot"]]] += sum(fee[p] for p in row["staff"])
    last = max(d for d, f in spent.items() if f > 0)
    assert last >= 1
    releases = [spent[d] for d in range(last)]
    releases[-1] += spent[last] - 1
    assert _passes(inst, answer, "budget_release")
    assert not _passes(_with_params(inst, "budget_release", releases=releases), answer, "budget_release")


def test_the_daily_cap_reason_names_the_day_the_cap_is_broken_on() -> None:
    """The cap set one below someone's busiest day: the reason names that day as the slots
    do ('Tue' of 'Tue AM')."""
    inst = _stored(REC, "daily_cap")
    answer = _reference(inst)
    day = {s["id"]: s["day"] for s in inst.data["slots"]}
    person = _params(inst, "daily_cap")["staff"][0]
    per_day = Counter(day[row["slot"]] for row in answer["schedule"] if person in row["staff"])
    busiest = max(per_day.values())
    first = min(d for d, n in per_day.items() if n == busiest)
    name = next(s["id"] for s in inst.data["slots"] if s["day"] == first).split()[0]
    capped = _with_params(inst, "daily_cap", staff=[person], max=busiest - 1)
    (item,) = [it.id for it in capped.checklist if it.rule == _rule(capped, "daily_cap").id]
    ok, reason = check_answer(capped, answer)[item]
    assert not ok and f" on {name} " in reason


# == Shift & Duty Scheduling ==================================================================
SHIFT = "shift_duty_scheduling"
OFF = None


def _stored_all(task: str, kind: str) -> list[Instance]:
    return [
        Instance.model_validate(json.loads(_stored_instance(rec["instance"]["id"])))
        for rec in stored_records("workforce", task)
        if kind in {r["kind"] for r in rec["instance"]["rules"]}
    ]


def _duty(answer: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(person, day) -> shift of the roster."""
    return {(row["person"], row["day"]): row["shift"] for row in answer["roster"]}


def _with_line(inst: Instance, answer: dict[str, Any], person: str, line: list[str | None]) -> dict[str, Any]:
    """The answer with ``person`` working ``line`` (a shift or OFF per day, in day order)."""
    days = [x["id"] for x in inst.data["days"]]
    rows = [row for row in answer["roster"] if row["person"] != person]
    rows += [{"person": person, "day": x, "shift": s} for x, s in zip(days, line, strict=True) if s is not OFF]
    return {**answer, "roster": rows}


def test_a_person_rostered_twice_on_one_day_fails_the_format_item() -> None:
    inst = _stored(SHIFT)
    answer = _reference(inst)
    row = answer["roster"][0]
    other = next(s["id"] for s in inst.data["shifts"] if s["id"] != row["shift"])
    answer["roster"].append({**row, "shift": other})
    assert not _passes(inst, answer, "format")


def test_each_skilled_person_on_a_shift_counts_once_toward_its_skill_cover() -> None:
    """The cover set one above the fewest skilled staff any listed shift has: it fails."""
    inst = _stored(SHIFT, "skill_cover")
    p, answer = _params(inst, "skill_cover"), _reference(inst)
    duty, people = _duty(answer), _by_id(inst, "staff")
    have = [
        sum(1 for (q, x), s in duty.items() if (x, s) == (day, shift) and p["skill"] in people[q]["skills"])
        for day, shift in p["slots"]
    ]
    assert min(have) >= 1
    assert not _passes(_with_params(inst, "skill_cover", min=min(have) + 1), answer, "skill_cover")


def test_the_shift_balance_is_the_difference_of_two_counts_not_their_sum() -> None:
    """Everyone works the rule's shift at least once (a day's shift changed to it for whoever
    never did), and the balance is set to the spread of those counts: it holds."""
    inst = _stored(SHIFT, "shift_balance")
    shift, answer = _params(inst, "shift_balance")["shift"], _reference(inst)
    days = [x["id"] for x in inst.data["days"]]
    for person in inst.data["staff"]:
        mine = [row for row in answer["roster"] if row["person"] == person["id"]]
        if not any(row["shift"] == shift for row in mine):
            if mine:
                mine[0]["shift"] = shift
            else:
                answer["roster"].append({"person": person["id"], "day": days[0], "shift": shift})
    per = [
        sum(1 for row in answer["roster"] if row["person"] == q["id"] and row["shift"] == shift)
        for q in inst.data["staff"]
    ]
    assert min(per) >= 1
    assert _passes(_with_params(inst, "shift_balance", max=max(per) - min(per)), answer, "shift_balance")


def test_rest_between_shifts_is_measured_on_a_24_hour_clock() -> None:
    """The rest set one hour above the shortest rest the reference gives anyone: it fails."""
    inst = _stored(SHIFT, "min_rest")
    answer = _reference(inst)
    index = {x["id"]: k for k, x in enumerate(inst.data["days"])}
    shifts = _by_id(inst, "shifts")
    gaps = []
    for person in inst.data["staff"]:
        times = sorted(
            (24 * index[x] + shifts[s]["start"], shifts[s]["hours"])
            for (q, x), s in _duty(answer).items()
            if q == person["id"]
        )
        gaps += [b - (a + h) for (a, h), (b, _) in itertools.pairwise(times)]
    assert gaps
    assert not _passes(_with_params(inst, "min_rest", hours=min(gaps) + 1), answer, "min_rest")


def test_a_run_of_night_shifts_one_short_of_the_rule_from_the_first_day_needs_no_rest() -> None:
    inst = _stored(SHIFT, "night_fatigue")
    p = _params(inst, "night_fatigue")
    n = len(inst.data["days"])
    other = next(s["id"] for s in inst.data["shifts"] if s["id"] != p["shift"])
    assert p["run"] >= 2 and n >= p["run"]
    line = [p["shift"]] * (p["run"] - 1) + [other] + [OFF] * (n - p["run"])
    answer = _with_line(inst, _reference(inst), inst.data["staff"][0]["id"], line)
    assert _passes(inst, answer, "night_fatigue")


def test_work_on_the_day_after_the_rest_days_that_follow_a_night_run_keeps_the_rule() -> None:
    inst = _stored(SHIFT, "night_fatigue")
    p = _params(inst, "night_fatigue")
    n = len(inst.data["days"])
    other = next(s["id"] for s in inst.data["shifts"] if s["id"] != p["shift"])
    assert n >= p["run"] + p["rest"] + 1
    line = [p["shift"]] * p["run"] + [OFF] * p["rest"] + [other] + [OFF] * (n - p["run"] - p["rest"] - 1)
    answer = _with_line(inst, _reference(inst), inst.data["staff"][0]["id"], line)
    assert _passes(inst, answer, "night_fatigue")


def test_running_hours_start_from_zero_after_a_day_off() -> None:
    """Off on the first day, then the longest shift every day: exactly the rule's maximum."""
    inst = _stored(SHIFT, "run_hours")
    n = len(inst.data["days"])
    longest = max(inst.data["shifts"], key=lambda s: s["hours"])
    answer = _with_line(inst, _reference(inst), inst.data["staff"][0]["id"], [OFF] + [longest["id"]] * (n - 1))
    capped = _with_params(inst, "run_hours", max=(n - 1) * longest["hours"])
    assert _passes(capped, answer, "run_hours")


@pytest.fixture(scope="module")
def covered_rota() -> Instance:
    """A robustness instance: every shift's cover has to survive any one person's absence."""
    from tests.instances import find

    inst = find(SHIFT, 0, "small", ("robustness_design",))
    assert inst is not None and "absence_cover" in {r.kind for r in inst.rules}
    return inst


def test_the_certified_rota_of_an_absence_cover_instance_keeps_the_absence_cover(covered_rota: Instance) -> None:
    assert _passes(covered_rota, _reference(covered_rota), "absence_cover")


def test_a_shift_staffed_to_exactly_its_cover_fails_the_absence_cover(covered_rota: Instance) -> None:
    """One person fewer on a shift the reference staffs one above its need: the cover
    itself still holds, the cover without any one of them does not."""
    inst, answer = covered_rota, _reference(covered_rota)
    duty = _duty(answer)
    cover = next(
        c
        for c in inst.data["cover"]
        if c["need"] >= 1 and sum(1 for k, s in duty.items() if (k[1], s) == (c["day"], c["shift"])) == c["need"] + 1
    )
    gone = next(row for row in answer["roster"] if (row["day"], row["shift"]) == (cover["day"], cover["shift"]))
    answer["roster"].remove(gone)
    assert _passes(inst, answer, "coverage")
    assert not _passes(inst, answer, "absence_cover")


# == Volunteer Scheduling =====================================================================
VOL = "volunteer_scheduling"


def _standby_rows(answer: dict[str, Any]) -> dict[str, Row]:
    return {row["shift"]: row for row in answer["roster"] if row["post"] == "standby"}


def _working(answer: dict[str, Any], shift: str) -> set[str]:
    return {row["volunteer"] for row in answer["roster"] if row["shift"] == shift and row["post"] != "standby"}


def test_a_roster_row_naming_an_unknown_volunteer_fails_the_format_item() -> None:
    inst = _stored(VOL)
    answer = _reference(inst)
    answer["roster"][0]["volunteer"] = "Nobody Listed"
    assert not _passes(inst, answer, "format")


def test_a_shift_without_its_standby_row_fails_the_format_item() -> None:
    inst = _stored(VOL, "standby")
    answer = _reference(inst)
    answer["roster"].remove(next(iter(_standby_rows(answer).values())))
    assert not _passes(inst, answer, "format")


def test_a_standby_unavailable_in_their_shift_fails_the_standby_item() -> None:
    inst = _stored(VOL, "standby")
    answer = _reference(inst)
    shift, row = next(iter(_standby_rows(answer).items()))
    unavailable = _with_data(inst, "volunteers", row["volunteer"], unavailable=[shift])
    assert _passes(inst, answer, "standby")
    assert not _passes(unavailable, answer, "standby")


def test_a_minor_as_the_standby_of_a_late_shift_fails_the_standby_item() -> None:
    """The minor is free and available in the late shift; only their age rules them out."""
    inst = _stored(VOL, "standby")
    answer = _reference(inst)
    late = next(s["id"] for s in inst.data["shifts"] if s["late"])
    minor = next(
        v["id"]
        for v in inst.data["volunteers"]
        if v["minor"] and late not in v["unavailable"] and v["id"] not in _working(answer, late)
    )
    _standby_rows(answer)[late]["volunteer"] = minor
    assert not _passes(inst, answer, "standby")


def test_a_standby_without_the_skill_of_a_staffed_post_fails_the_standby_item() -> None:
    """The post staffed in every shift needs a skill nobody has (and no training)."""
    inst = _stored(VOL, "standby")
    answer = _reference(inst)
    post = answer["roster"][0]["post"]
    assert all(post in {r["post"] for r in answer["roster"] if r["shift"] == s["id"]} for s in inst.data["shifts"])
    skilled = _with_data(inst, "posts", post, skill="forklift licence", training=None)
    assert not _passes(skilled, answer, "standby")


def test_a_standby_without_the_training_of_a_staffed_post_fails_the_standby_item() -> None:
    inst = _stored(VOL, "standby")
    answer = _reference(inst)
    post = answer["roster"][0]["post"]
    assert all(post in {r["post"] for r in answer["roster"] if r["shift"] == s["id"]} for s in inst.data["shifts"])
    trained = _with_data(inst, "posts", post, skill=None, training="crowd safety")
    assert not _passes(trained, answer, "standby")


def test_a_minor_working_more_shifts_in_one_day_than_allowed_fails_the_minors_item() -> None:
    """The cap set to one shift a day; a minor listed after an adult works two daytime shifts."""
    inst, minor = next(
        (inst, v["id"])
        for inst in _stored_all(VOL, "minors")
        for k, v in enumerate(inst.data["volunteers"])
        if v["minor"] and any(not u["minor"] for u in inst.data["volunteers"][:k])
    )
    answer = _reference(inst)
    day0 = [s["id"] for s in inst.data["shifts"] if s["day"] == inst.data["shifts"][0]["day"] and not s["late"]]
    assert len(day0) >= 2
    post = inst.data["posts"][0]["id"]
    answer["roster"] = [r for r in answer["roster"] if not (r["volunteer"] == minor and r["shift"] in day0[:2])]
    answer["roster"] += [{"volunteer": minor, "shift": s, "post": post} for s in day0[:2]]
    assert not _passes(_with_params(inst, "minors", max_per_day=1), answer, "minors")


def test_the_load_balance_compares_the_busiest_volunteer_not_the_last_named() -> None:
    """The balance set one below the reference's spread fails, though the volunteer whose
    name sorts last works fewer shifts than the busiest."""

    def loads_of(inst: Instance) -> dict[str, int]:
        loads = {v["id"]: 0 for v in inst.data["volunteers"]}
        for row in inst.reference["roster"]:
            loads[row["volunteer"]] += row["post"] != "standby"
        return loads

    inst, loads = next(
        (inst, loads)
        for inst in _stored_all(VOL, "load_balance")
        if (loads := loads_of(inst))[max(loads)] < max(loads.values())
    )
    answer = _reference(inst)
    spread = max(loads.values()) - min(loads.values())
    assert not _passes(_with_params(inst, "load_balance", max=spread - 1), answer, "load_balance")


# == Work Assignment Scheduling ===============================================================
WORK = "work_assignment_scheduling"


def _assignments(answer: dict[str, Any]) -> dict[str, Row]:
    return {row["task"]: row for row in answer["assignments"]}


def _day_hours(inst: Instance, answer: dict[str, Any]) -> Counter[tuple[str, str]]:
    hours = {t["id"]: t["hours"] for t in inst.data["tasks"]}
    out: Counter[tuple[str, str]] = Counter()
    for row in answer["assignments"]:
        out[row["worker"], row["day"]] += hours[row["task"]]
    return out


def test_assignments_missing_a_task_fail_the_format_item() -> None:
    inst = _stored(WORK)
    answer = _reference(inst)
    del answer["assignments"][-1]
    assert not _passes(inst, answer, "format")


def test_a_backup_worker_without_the_tasks_skill_fails_the_backup_item() -> None:
    inst = _stored(WORK, "worker_backup")
    answer = _reference(inst)
    skill = {t["id"]: t["skill"] for t in inst.data["tasks"]}
    row, other = next(
        (row, w["id"])
        for row in answer["assignments"]
        for w in inst.data["workers"]
        if w["id"] != row["worker"] and skill[row["task"]] not in w["skills"] and row["day"] not in w["days_off"]
    )
    row["backup"] = other
    assert not _passes(inst, answer, "worker_backup")


def test_a_backup_worker_off_on_the_tasks_day_fails_the_backup_item() -> None:
    inst = _stored(WORK, "worker_backup")
    answer = _reference(inst)
    row = answer["assignments"][0]
    off = _with_data(inst, "workers", row["backup"], days_off=[row["day"]])
    assert _passes(inst, answer, "worker_backup")
    assert not _passes(off, answer, "worker_backup")


def test_a_backup_worker_with_no_room_left_that_day_fails_the_backup_item() -> None:
    """Skilled and not off, so the row itself is fine; the overload appears only when the
    task's worker falls ill and the backup takes the task on top of their own day."""
    inst = _stored(WORK, "worker_backup")
    answer = _reference(inst)
    tasks, used = _by_id(inst, "tasks"), _day_hours(inst, answer)
    row, other = next(
        (row, w["id"])
        for row in answer["assignments"]
        for w in inst.data["workers"]
        if w["id"] != row["worker"]
        and tasks[row["task"]]["skill"] in w["skills"]
        and row["day"] not in w["days_off"]
        and used[w["id"], row["day"]] + tasks[row["task"]]["hours"] > w["max_day"]
    )
    row["backup"] = other
    assert _passes(inst, answer, "daily_hours")
    assert not _passes(inst, answer, "worker_backup")


def test_hours_through_the_checkpoint_at_exactly_the_limit_allow_a_full_next_day() -> None:
    """The light-day cap set below the busiest next day, and the hours limit to the most
    any of those busiest workers had through the checkpoint day: 'more than' is not met."""
    inst = _stored(WORK, "cumulative_rest")
    answer = _reference(inst)
    p, days, used = _params(inst, "cumulative_rest"), inst.data["days"], _day_hours(inst, answer)
    stop = days.index(p["day"])
    after = {w["id"]: used[w["id"], days[stop + 1]] for w in inst.data["workers"]}
    through = {w["id"]: sum(used[w["id"], x] for x in days[: stop + 1]) for w in inst.data["workers"]}
    light = max(after.values()) - 1
    assert light >= 0
    limit = max(through[w] for w, h in after.items() if h > light)
    assert _passes(_with_params(inst, "cumulative_rest", light=light, hours=limit), answer, "cumulative_rest")


def test_a_day_with_a_one_hour_task_is_a_working_day_of_a_run() -> None:
    """A one-hour task moved to a worker who works the day before: two days in a row."""
    inst = _stored(WORK, "consecutive_days")
    answer = _reference(inst)
    days, rows = inst.data["days"], answer["assignments"]
    worked = {(row["worker"], row["day"]) for row in rows}
    row, worker = next(
        (row, w["id"])
        for row in rows
        if days.index(row["day"]) >= 1
        for w in inst.data["workers"]
        if w["id"] != row["worker"]
        and (w["id"], days[days.index(row["day"]) - 1]) in worked
        and (w["id"], row["day"]) not in worked
    )
    row["worker"] = worker
    one_hour = _with_data(inst, "tasks", row["task"], hours=1)
    assert not _passes(_with_params(one_hour, "consecutive_days", max=1), answer, "consecutive_days")


@pytest.fixture(scope="module")
def late_shifts() -> Instance:
    """A default-size event with late shifts that other shifts follow (small events end on
    their late shift, so their instances never carry the cool-down rule)."""
    from tests.instances import instance_at

    inst = instance_at(VOL, 0, 1, "default", False, ("late_cooldown",))
    assert inst is not None and inst.certificate.status == "optimal"
    assert "late_cooldown" in {r.kind for r in inst.rules}
    return inst


def test_the_certified_roster_with_late_shifts_keeps_the_cool_down(late_shifts: Instance) -> None:
    """Whoever works a late shift that another shift follows is off that next shift."""
    inst = late_shifts
    late = [a for a, _ in itertools.pairwise(inst.data["shifts"]) if a["late"]]
    assert any(_working(inst.reference, a["id"]) for a in late)
    assert _passes(inst, _reference(inst), "late_cooldown")


def test_a_volunteer_working_the_shift_after_their_late_shift_fails_the_cool_down(late_shifts: Instance) -> None:
    inst = late_shifts
    answer = _reference(inst)
    a, b = next(
        (a["id"], b["id"])
        for a, b in itertools.pairwise(inst.data["shifts"])
        if a["late"] and _working(answer, a["id"])
    )
    volunteer = next(v for v in sorted(_working(answer, a)) if v not in _working(answer, b))
    answer["roster"] = [r for r in answer["roster"] if not (r["volunteer"] == volunteer and r["shift"] == b)]
    answer["roster"].append({"volunteer": volunteer, "shift": b, "post": inst.data["posts"][0]["id"]})
    assert not _passes(inst, answer, "late_cooldown")


def test_each_person_left_on_a_shift_counts_once_toward_its_cover_when_another_is_absent(
    covered_rota: Instance,
) -> None:
    """A cover raised to exactly the two people the reference puts on that shift: either
    one absent leaves one of two."""
    inst, answer = covered_rota, _reference(covered_rota)
    duty = _duty(answer)
    cover = next(
        c for c in inst.data["cover"] if sum(1 for k, s in duty.items() if (k[1], s) == (c["day"], c["shift"])) == 2
    )
    data = copy.deepcopy(inst.data)
    for c in data["cover"]:
        if (c["day"], c["shift"]) == (cover["day"], cover["shift"]):
            c["need"] = 2
    raised = inst.model_copy(update={"data": data})
    assert _passes(raised, answer, "coverage")
    assert not _passes(raised, answer, "absence_cover")


def test_a_backup_worker_that_is_not_a_name_fails_the_format_item() -> None:
    inst = _stored(WORK, "worker_backup")
    answer = _reference(inst)
    answer["assignments"][0]["backup"] = 7
    assert not _passes(inst, answer, "format")
