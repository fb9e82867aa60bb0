"""The registry suite's knowledge of Volunteer Scheduling: rosters as CP-SAT variable
values, single moves and every roster of a tiny instance."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.workforce.volunteer import STANDBY, Plan, VolunteerData
from pbsolve.schema import Instance, Rule
from tests.workforce_adapters import TaskAdapter


class VolunteerAdapter(TaskAdapter):
    task = "volunteer_scheduling"

    def _data(self, inst: Instance, data: dict | None = None) -> VolunteerData:
        return VolunteerData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Plan) -> dict[str, int]:
        out = {f"x[{v},{p},{s}]": 1 for (v, s), p in plan.assign.items()}
        return out | {f"y[{v},{s}]": 1 for s, v in (plan.standby or {}).items()}

    def single_moves(self, inst: Instance, plan: Plan) -> Iterator[Plan]:
        """Every roster one volunteer-shift away: another post, or off, or on when off;
        and every other standby of one shift."""
        d = self._data(inst)
        for v in d.volunteers:
            for s in d.shifts:
                now = plan.assign.get((v.id, s.id))
                for post in [None, *(p.id for p in d.posts)]:
                    if post == now:
                        continue
                    assign = dict(plan.assign)
                    if post is None:
                        del assign[v.id, s.id]
                    else:
                        assign[v.id, s.id] = post
                    yield Plan(assign, plan.standby)
        if plan.standby is not None:
            for s in d.shifts:
                for v in d.volunteers:
                    if v.id != plan.standby[s.id]:
                        yield Plan(plan.assign, {**plan.standby, s.id: v.id})

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Plan]:
        d = self._data(inst, data)
        cells = [(v.id, s.id) for v in d.volunteers for s in d.shifts]
        options = [None, *(p.id for p in d.posts)]
        with_standby = any(r.kind == "standby" for r in rules)
        standbys: list[Any] = (
            list(itertools.product(*[[v.id for v in d.volunteers]] * len(d.shifts))) if with_standby else [None]
        )
        for combo in itertools.product(options, repeat=len(cells)):
            assign = {c: p for c, p in zip(cells, combo) if p is not None}
            for sb in standbys:
                yield Plan(assign, dict(zip([s.id for s in d.shifts], sb)) if sb is not None else None)

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        return [{"volunteer": v, "shift": s, "post": p} for v, p, s in existing]

    def robust_reference_ok(self, inst: Instance) -> bool:
        return any(r["post"] == STANDBY for r in (inst.reference or {}).get("roster", []))


ADAPTER = VolunteerAdapter()
