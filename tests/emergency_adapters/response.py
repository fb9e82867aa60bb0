"""The registry suite's knowledge of Emergency Planning: its answer variables (x[team,
incident], z[incident,material,depot]) in the model's canonical labelling of
interchangeable teams, single moves, and every distinct plan of a tiny instance."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from pbsolve.checkers.emergency.response import TASK_ID, Incident, Plan, ResponseData, combos, neighbours, new_incidents
from pbsolve.schema import Instance, Rule
from tests.emergency_adapters import TaskAdapter


def canonical(d: ResponseData, plan: Plan) -> Plan:
    """The same answer with teams relabelled within each (role, base) class so that their
    rows (one 0/1 per incident needing the role, incidents in model order) decrease."""
    incidents = (*d.incidents, *plan.extra)
    where = {(t, iid) for iid, teams in plan.teams.items() for t in teams}
    classes: dict[tuple[str, str], list[str]] = {}
    for t in d.teams:
        classes.setdefault((t.role, t.base), []).append(t.id)
    rename: dict[str, str] = {}
    for (role, _), members in classes.items():
        row_of = {t: tuple(int((t, i.id) in where) for i in incidents if role in i.needs) for t in members}
        order = sorted(members, key=lambda t: row_of[t], reverse=True)
        rename.update(dict(zip(order, members)))  # the k-th largest row goes to the k-th team
    pos = {t.id: k for k, t in enumerate(d.teams)}
    teams = {iid: tuple(sorted((rename[t] for t in ts), key=pos.__getitem__)) for iid, ts in plan.teams.items()}
    return Plan(teams, plan.supply, plan.extra)


class ResponseAdapter(TaskAdapter):
    task = TASK_ID

    def _data(self, inst: Instance, data: dict | None = None) -> ResponseData:
        return ResponseData.model_validate(inst.data if data is None else data)

    def assignment(self, inst: Instance, plan: Any) -> dict[str, int]:
        c = canonical(self._data(inst), plan)
        out = {f"x[{t},{iid}]": 1 for iid, teams in c.teams.items() for t in teams}
        return out | {f"z[{iid},{m},{dp}]": 1 for iid, mats in c.supply.items() for m, dp in mats.items()}

    def single_moves(self, inst: Instance, plan: Any) -> Iterator[Any]:
        """The checker's one-move neighbours that state another answer (a move that only
        relabels interchangeable teams states the same one)."""
        here = self.assignment(inst, plan)
        return (p for p in neighbours(self._data(inst), plan) if self.assignment(inst, p) != here)

    def all_plans(self, inst: Instance, data: dict | None, rules: list[Rule]) -> Iterator[Any]:
        """Every plan the model's structure admits, one per answer (canonical labelling)."""
        d = self._data(inst, data)
        extra = new_incidents(rules)
        incidents: list[Incident] = [*d.incidents, *extra]
        team_options = [list(combos(d, i, optional=i in extra)) for i in incidents]
        mat_keys = [(i.id, m) for i in incidents for m in i.materials]
        mat_options = [[x.id for x in d.depots if m in x.stock] for _, m in mat_keys]
        seen: set[str] = set()
        for teams in itertools.product(*team_options):
            waves: dict[int, list[str]] = {}
            for i, ts in zip(incidents, teams):
                waves.setdefault(i.wave, []).extend(ts)
            if any(len(v) != len(set(v)) for v in waves.values()):
                continue
            by_incident = {i.id: ts for i, ts in zip(incidents, teams)}
            for depots in itertools.product(*mat_options):
                supply: dict[str, dict[str, str]] = {i.id: {} for i in incidents}
                for (iid, m), dp in zip(mat_keys, depots):
                    supply[iid][m] = dp
                plan = Plan(dict(by_incident), supply, extra)
                key = repr(sorted(self.assignment(inst, plan).items()))
                if key not in seen:
                    seen.add(key)
                    yield plan

    def existing_rows(self, inst: Instance, existing: Any) -> Any:
        mats = existing["materials"]
        return [
            {
                "incident": iid,
                "teams": teams,
                "materials": [
                    {
                        "material": m,
                        "depot": dp,
                        "quantity": next(i for i in inst.data["incidents"] if i["id"] == iid)["materials"][m],
                    }
                    for m, dp in mats.get(iid, {}).items()
                ],
            }
            for iid, teams in existing["teams"].items()
        ]

    def existing_plan(self, inst: Instance, existing: Any) -> Any | None:
        extra = new_incidents(list(inst.rules))
        teams = {iid: tuple(ts) for iid, ts in existing["teams"].items()} | {i.id: () for i in extra}
        supply = {iid: dict(existing["materials"].get(iid, {})) for iid in existing["teams"]} | {
            i.id: {} for i in extra
        }
        return Plan(teams, supply, extra)


ADAPTER = ResponseAdapter()
