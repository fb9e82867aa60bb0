"""The registry suite's knowledge of Recruitment Planning: plans are the checker's
:class:`~pbsolve.checkers.workforce.recruitment.Plan` (step -> slot, staff team, backup)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.workforce.recruitment import Plan, RecruitmentData
from pbsolve.schema import Instance, Rule
from tests.workforce_adapters import TaskAdapter


class RecruitmentAdapter(TaskAdapter):
    task = "recruitment_planning"

    def data(self, inst: Instance, data: dict | None = None) -> RecruitmentData:
        return RecruitmentData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        """w[c,s,slot,team] for each step's slot and team; b[c,s,p] for backups."""
        out = {f"w[{c},{s},{plan.slot[c, s]},{'+'.join(plan.staff[c, s])}]": 1 for c, s in plan.slot}
        return out | {f"b[{c},{s},{p}]": 1 for (c, s), p in (plan.backup or {}).items()}

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        """One step moved to another slot, one staff member of a step replaced by someone
        not on it, or one backup changed."""
        d = self.data(inst)
        num = d.staff_number
        for step in d.steps:
            for slot in d.slots:
                if slot.id != plan.slot[step]:
                    yield Plan({**plan.slot, step: slot.id}, plan.staff, plan.backup)
            team = plan.staff[step]
            for out in team:
                for p in d.staff:
                    if p.id not in team:
                        new = tuple(sorted([*(x for x in team if x != out), p.id], key=num.__getitem__))
                        yield Plan(plan.slot, {**plan.staff, step: new}, plan.backup)
            if plan.backup is not None:
                for p in d.staff:
                    if p.id != plan.backup[step]:
                        yield Plan(plan.slot, plan.staff, {**plan.backup, step: p.id})

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        """Every slot and team of every step; with backups, every backup not on the step's
        own team (a backup on its own team breaks the backup rule whatever else holds)."""
        d = self.data(inst, data)
        names = [p.id for p in d.staff]
        steps = list(d.steps)
        options = [
            [(slot.id, team) for slot in d.slots for team in itertools.combinations(names, d.stage_by_id[s].staff)]
            for _, s in steps
        ]
        backups = any(r.kind == "backup_staff" for r in rules)
        for combo in itertools.product(*options):
            slots = {step: slot for step, (slot, _) in zip(steps, combo)}
            staff = {step: team for step, (_, team) in zip(steps, combo)}
            if not backups:
                yield Plan(slots, staff)
                continue
            free = [[p for p in names if p not in staff[step]] for step in steps]
            for bs in itertools.product(*free):
                yield Plan(slots, staff, dict(zip(steps, bs)))

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"candidate": c, "stage": s, "slot": slot, "staff": list(staff)} for c, s, slot, staff in existing]

    def existing_plan(self, inst: Instance, existing: Any) -> Any:
        d = self.data(inst)
        num = d.staff_number
        return Plan(
            {(c, s): slot for c, s, slot, _ in existing},
            {(c, s): tuple(sorted(staff, key=num.__getitem__)) for c, s, _, staff in existing},
        )

    def robust_reference_ok(self, inst: Instance) -> bool:
        rows = (inst.reference or {}).get("schedule", [])
        return bool(rows) and all("backup" in r for r in rows)


ADAPTER = RecruitmentAdapter()
