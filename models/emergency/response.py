"""Emergency Planning: response teams and materials sent to concurrent incidents in two
alert waves over a road network.

Decision: x[t,i] = 1 when team t is sent to incident i (only teams of a role the incident
needs; exactly the needed number of each role per incident, fewer allowed for an incident
a rule adds) and z[i,m,d] = 1 when depot d sends incident i all the material m it needs
(exactly one depot per needed material). Travel minutes are the shortest minutes of the
instance's road network with its closed roads removed (:mod:`pbsolve.network_kit`). An
incident's response is complete when its last team or material arrives; lateness past
the severity deadline is weighted by severity. Rules are the task's pool, each behind its
enforcement literal; the objective is the subtask's lexicographic order of weighted
lateness, travel minutes and material cost.

Teams of one role at one base are interchangeable (no rule or figure tells them apart),
so the model breaks that symmetry itself: within each such class, the teams' rows of x
are ordered (each row read as a binary number, first incident most significant, never
increasing along the team list), and :class:`pbsolve.family.Symmetry` tells the
certifier the canonical form. No artificial tie-break term is needed for them.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.emergency import response as rp
from pbsolve.checkers.emergency.response import Depot, Incident, ResponseData, Severity, Team
from pbsolve.family import Draft, NoDraft, SolverModel, Symmetry
from pbsolve.kit import (
    KindRegistry,
    PositiveRange,
    Settings,
    SizeTable,
    Uncertain,
    insert_position,
    parsed,
    sampled_kinds,
    witness_rules,
)
from pbsolve.model_kit import (
    Encoder,
    HardHooks,
    ModelBase,
    added_rule,
    alone_infeasible,
    first_infeasible,
    solver_model,
    with_conflict_rule,
)
from pbsolve.network_kit import Shape, sample_network
from pbsolve.params import NoParams, Params, make_rule
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=rp.TASK_ID,
    name="Emergency Planning",
    family="emergency",
    summary="send response teams and materials to concurrent incidents over a road network, against severity deadlines",
    subtasks=(
        SubtaskSpec(
            "urban_fire_and_rescue", "Urban fire and rescue", "fire, ladder, rescue and paramedic teams on a city grid"
        ),
        SubtaskSpec("flood_response", "Flood response", "boats and pump crews; sandbag and pump stocks at depots"),
        SubtaskSpec(
            "multi_casualty_collision",
            "Multi-casualty collision",
            "ambulance crews per triage class of the casualties; the most severe collision first",
        ),
        SubtaskSpec(
            "hazmat_spill",
            "Hazmat spill",
            "specialist units and neutralising materials; roads in the exclusion zone are closed",
        ),
        SubtaskSpec(
            "wildfire_rotation",
            "Wildfire rotation",
            "two waves of fire fronts; crews rotate, rest after long shifts and must be back before the next wave",
        ),
    ),
    pool=(
        ConstraintSpec("stock", "basic", "depots ship no more material than they hold"),
        ConstraintSpec(
            "depot_range", "basic", "no material comes from a depot more than a stated number of minutes away"
        ),
        ConstraintSpec("deadline", "basic", "named incidents are reached within their severity deadline"),
        ConstraintSpec("max_travel", "basic", "no team travels more than a stated number of minutes"),
        ConstraintSpec("station_cover", "basic", "a station keeps some teams of a role at home"),
        ConstraintSpec("dispatch_cap", "basic", "no base sends more than so many teams per wave"),
        ConstraintSpec("arrives_first", "medium", "scene safety: one role arrives no later than another"),
        ConstraintSpec("severity_priority", "medium", "priority: a severe incident is complete no later than another"),
        ConstraintSpec("same_base", "medium", "single command: an incident's teams come from one base"),
        ConstraintSpec("dispatch_balance", "medium", "fairness: bases send similar numbers of teams per wave"),
        ConstraintSpec("rest_after_long", "stateful", "a team that worked a long first-wave incident rests in wave 2"),
        ConstraintSpec(
            "cumulative_duty", "stateful", "a team over a duty-minutes threshold takes only light second-wave work"
        ),
        ConstraintSpec("turnaround", "stateful", "a team is back at base before it is sent in the second wave"),
        *mechanism_pool(
            "every needed role keeps a spare team within reach, so any single team breaking down is covered",
            replan="a new incident is reported (or a team breaks down): repair the plan with the fewest changes",
        ),
    ),
    base_rules=("stock",),
)

BASES = (("North Station", "N"), ("Harbour Station", "H"), ("Kiln Road Station", "K"), ("Park Station", "P"),
         ("West Station", "W"))  # fmt: skip
DEPOTS = ("East Depot", "Quarry Depot", "Airfield Depot", "Canal Depot")
SITES = (
    "Mill Lane", "Market Square", "Riverside", "Old Town", "Station Road", "Elm Park", "Dock Street", "Hill Farm",
    "Bridge End", "Orchard Way", "Chapel Row", "Fen Gate",
)  # fmt: skip
JUNCTIONS = ("Central Junction", "Ring Road Junction", "Canal Bridge", "Bypass Roundabout", "Tunnel Mouth")
ROLES = {
    "urban_fire_and_rescue": ("fire engine", "ladder truck", "rescue squad", "paramedic crew"),
    "flood_response": ("boat team", "pump crew", "sandbag crew", "paramedic crew"),
    "multi_casualty_collision": ("ALS crew", "BLS crew", "rescue squad", "fire engine"),
    "hazmat_spill": ("hazmat unit", "decontamination team", "fire engine", "paramedic crew"),
    "wildfire_rotation": ("brush engine", "hand crew", "water tender", "dozer team"),
}
ABBR = {
    "fire engine": "ENG", "ladder truck": "LAD", "rescue squad": "RSQ", "paramedic crew": "MED", "boat team": "BOAT",
    "pump crew": "PUMP", "sandbag crew": "SAND", "ALS crew": "ALS", "BLS crew": "BLS", "hazmat unit": "HAZ",
    "decontamination team": "DECON", "brush engine": "BRUSH", "hand crew": "HAND", "water tender": "TEND",
    "dozer team": "DOZER",
}  # fmt: skip
MATERIALS = {
    "urban_fire_and_rescue": ("foam", "air cylinders"),
    "flood_response": ("sandbags", "portable pumps"),
    "multi_casualty_collision": ("oxygen", "stretchers"),
    "hazmat_spill": ("absorbent", "neutraliser"),
    "wildfire_rotation": ("retardant", "water bladders"),
}
NAMES = {
    "urban_fire_and_rescue": ("House fire", "Warehouse fire", "Person trapped in lift", "Kitchen fire", "Roof collapse",
                              "Car park fire"),
    "flood_response": ("Flooded basement", "River overtopping", "Stranded car", "Care home flooding", "Burst culvert",
                       "Flooded underpass"),
    "multi_casualty_collision": ("Multi-vehicle collision", "Bus crash", "Van rollover", "Tram collision",
                                 "Lorry jackknife", "Coach collision"),
    "hazmat_spill": ("Tanker leak", "Chlorine release", "Laboratory spill", "Drum leak", "Pipeline rupture",
                     "Fertiliser fire"),
    "wildfire_rotation": ("Grass fire", "Forest fire front", "Spot fire", "Scrub fire", "Ridge fire", "Heath fire"),
}  # fmt: skip
SHAPES: dict[str, Shape] = {
    "urban_fire_and_rescue": "grid",
    "flood_response": "geometric",
    "multi_casualty_collision": "ring",
    "hazmat_spill": "grid",
    "wildfire_rotation": "geometric",
}
OBJECTIVES = {  # fatigue and running cost last: they settle what the stated figures leave open
    "urban_fire_and_rescue": ("lateness", "travel", "material_cost", "fatigue", "running_cost"),
    "flood_response": ("lateness", "material_cost", "travel", "fatigue", "running_cost"),
    "multi_casualty_collision": ("lateness", "travel", "material_cost", "fatigue", "running_cost"),
    "hazmat_spill": ("lateness", "material_cost", "travel", "fatigue", "running_cost"),
    "wildfire_rotation": ("lateness", "fatigue", "travel", "material_cost", "running_cost"),
}
FORCED = {
    "urban_fire_and_rescue": ("arrives_first",),
    "flood_response": ("depot_range",),
    "multi_casualty_collision": ("severity_priority",),
    "hazmat_spill": ("arrives_first",),
    "wildfire_rotation": ("rest_after_long", "turnaround"),
}
SAFETY_FIRST = {  # (first, then) role pairs the scene-safety rule prefers
    "urban_fire_and_rescue": ("fire engine", "paramedic crew"),
    "hazmat_spill": ("hazmat unit", "decontamination team"),
}
TRIAGE = {"red": "ALS crew", "yellow": "BLS crew"}  # red: one ALS crew each; yellow: one BLS crew per two
DURATION = {"wildfire_rotation": (60, 240)}  # minutes on scene, in steps of 5
DEFAULT_DURATION = (20, 150)


class ResponseSizes(Settings):
    """How big an emergency-planning instance is."""

    bases: PositiveInt = Field(ge=2, le=len(BASES))
    roles: PositiveInt = Field(ge=2, le=4)
    per_role: PositiveRange = Field(description="teams of one role (spread over the bases)")
    first_wave: PositiveInt = Field(description="incidents alerted in the first wave")
    second_wave: PositiveInt = Field(description="incidents alerted in the second wave")
    depots: PositiveInt = Field(ge=2, le=len(DEPOTS))
    materials: PositiveInt = Field(ge=1, le=2)
    junctions: int = Field(ge=0, le=len(JUNCTIONS))
    road_minutes: PositiveRange
    need: PositiveRange = Field(description="teams of one role an incident needs")
    roles_needed: PositiveRange = Field(description="roles one incident needs")
    quantity: PositiveRange = Field(description="units of one material an incident needs")


SIZES = SizeTable[ResponseSizes](
    tiny=ResponseSizes(
        bases=2, roles=2, per_role=PositiveRange(lo=2, hi=3), first_wave=1, second_wave=1, depots=2, materials=1,
        junctions=0, road_minutes=PositiveRange(lo=2, hi=8), need=PositiveRange(lo=1, hi=1),
        roles_needed=PositiveRange(lo=1, hi=2), quantity=PositiveRange(lo=2, hi=6),
    ),
    small=ResponseSizes(
        bases=2, roles=3, per_role=PositiveRange(lo=2, hi=3), first_wave=2, second_wave=1, depots=2, materials=2,
        junctions=1, road_minutes=PositiveRange(lo=3, hi=13), need=PositiveRange(lo=1, hi=2),
        roles_needed=PositiveRange(lo=1, hi=2), quantity=PositiveRange(lo=2, hi=10),
    ),
    default=ResponseSizes(
        bases=3, roles=3, per_role=PositiveRange(lo=2, hi=4), first_wave=3, second_wave=2, depots=2, materials=2,
        junctions=2, road_minutes=PositiveRange(lo=3, hi=13), need=PositiveRange(lo=1, hi=2),
        roles_needed=PositiveRange(lo=1, hi=2), quantity=PositiveRange(lo=2, hi=12),
    ),
    large=ResponseSizes(
        bases=4, roles=4, per_role=PositiveRange(lo=3, hi=5), first_wave=4, second_wave=3, depots=3, materials=2,
        junctions=3, road_minutes=PositiveRange(lo=3, hi=13), need=PositiveRange(lo=1, hi=2),
        roles_needed=PositiveRange(lo=1, hi=3), quantity=PositiveRange(lo=2, hi=15),
    ),
)  # fmt: skip
PROBE_TIME = 2.0
# measured on 30 default drafts: first solves 0.29 s in all with CP-SAT's LP at level 2 (the
# certifier's default), 0.17 s at level 1; the uniqueness re-optimisations 0.34 and 0.21 s
SOLVER_PARAMETERS = {"linearization_level": 1}
# the uniqueness re-optimisation without presolve: 0.20 s against 0.21 s on the same drafts, and
# steadier (the cut makes presolve redo most of its work)
UNIQUENESS_PARAMETERS = {"cp_model_presolve": False}


# -- the CP-SAT model ------------------------------------------------------------------
def parse_data(data: dict[str, Any]) -> ResponseData:
    """The draft's data, parsed once per distinct content (the kit's cache): one instance's
    certification builds its model and runs its hooks many times (measured: 18 parses per
    default instance, most of the sampling time before)."""
    return parsed(ResponseData, data)


class ResponseModel(ModelBase):
    """Variables and the structure every plan has: the needed teams per role and one depot
    per needed material, completion times exact (the max of the arrivals) whatever is
    optimised, and the interchangeable teams' rows ordered."""

    def __init__(self, data: ResponseData, extra: tuple[Incident, ...]) -> None:
        super().__init__()
        self.d = d = data
        self.extra = extra
        self.incidents = (*d.incidents, *extra)
        self.x: dict[tuple[str, str], cp_model.IntVar] = {}
        self.rows: dict[str, list[str]] = {}  # team -> the incidents of its row, in model order
        for t in d.teams:  # team-major: each team's row is contiguous in the answer literals
            self.rows[t.id] = [i.id for i in self.incidents if t.role in i.needs]
            for iid in self.rows[t.id]:
                self.x[t.id, iid] = self.m.new_bool_var(f"x[{t.id},{iid}]")
        self.z: dict[tuple[str, str, str], cp_model.IntVar] = {}
        for i in self.incidents:
            for mat in i.materials:
                row = []
                for dp in d.depots:
                    if mat in dp.stock:
                        self.z[i.id, mat, dp.id] = v = self.m.new_bool_var(f"z[{i.id},{mat},{dp.id}]")
                        row.append(v)
                if i in extra:
                    self.m.add_at_most_one(row)
                else:
                    self.m.add_exactly_one(row)
        for i in self.incidents:
            for role, n in i.needs.items():
                count = self.count(i.id, [t.id for t in d.teams if t.role == role])
                self.m.add(count <= n) if i in extra else self.m.add(count == n)
        for t in d.teams:  # a team is at one incident at a time: at most one per wave
            for wave in rp.WAVES:
                self.m.add_at_most_one(
                    [self.x[t.id, i.id] for i in self.incidents if i.wave == wave and (t.id, i.id) in self.x]
                )
        self.comp: dict[str, cp_model.IntVar] = {}
        self.comp_top: dict[str, int] = {}
        for i in self.incidents:
            arrivals = [self.x[t.id, i.id] * d.travel(t.id, i) for t in d.teams if (t.id, i.id) in self.x]
            arrivals += [v * d.minutes[dp][i.site] for (iid, _, dp), v in self.z.items() if iid == i.id]
            top = max([0, *(d.travel(t.id, i) for t in d.teams), *(d.minutes[x.id][i.site] for x in d.depots)])
            self.comp_top[i.id] = top
            self.comp[i.id] = c = self.m.new_int_var(0, top, f"comp[{i.id}]")
            self.m.add_max_equality(c, [0, *arrivals])
        self._break_symmetry()

    def count(self, incident: str, teams: list[str]) -> cp_model.LinearExpr:
        return cp_model.LinearExpr.sum([self.x[t, incident] for t in teams if (t, incident) in self.x])

    def sent(self, team: str, wave: int) -> cp_model.LinearExpr:
        """How many incidents of ``wave`` the team is sent to."""
        return cp_model.LinearExpr.sum(
            [self.x[team, i.id] for i in self.incidents if i.wave == wave and (team, i.id) in self.x]
        )

    def base_sent(self, base: str, wave: int) -> cp_model.LinearExpr:
        return cp_model.LinearExpr.sum([self.sent(t.id, wave) for t in self.d.teams if t.base == base])

    def classes(self) -> list[list[str]]:
        return team_classes(self.d)

    def _break_symmetry(self) -> None:
        """Within a class, row codes never increase along the team list (see the module docstring)."""
        for members in self.classes():
            codes = []
            for t in members:
                row = self.rows[t]
                weights = [2 ** (len(row) - 1 - j) for j in range(len(row))]
                codes.append(cp_model.LinearExpr.weighted_sum([self.x[t, i] for i in row], weights))
            for a, b in itertools.pairwise(codes):
                self.m.add(a >= b)


def team_classes(d: ResponseData, singles: bool = False) -> list[list[str]]:
    """Teams of one role at one base (two or more, or also single ones), each class in team-list order."""
    by: dict[tuple[str, str], list[str]] = {}
    for t in d.teams:
        by.setdefault((t.role, t.base), []).append(t.id)
    return [ids for ids in by.values() if singles or len(ids) > 1]


def symmetry(tm: ResponseModel) -> Symmetry:
    """Relabelling teams within a class states the same answer; the canonical labelling
    sorts the class's rows in decreasing binary order (what the model's constraints keep)."""
    start: dict[str, int] = {}
    k = 0
    for t in tm.d.teams:
        start[t.id] = k
        k += len(tm.rows[t.id])
    slices = [[(start[t], start[t] + len(tm.rows[t])) for t in members] for members in tm.classes()]

    def canonical(values: list[int]) -> list[int]:
        out = list(values)
        for spans in slices:
            rows = sorted((values[a:b] for a, b in spans), reverse=True)
            for (a, b), row in zip(spans, rows):
                out[a:b] = row
        return out

    def images(values: list[int]) -> list[list[int]]:  # only used without in-model breaking
        return [canonical(values)]

    return Symmetry(canonical=canonical, images=images, in_model=True)


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("depot_range")
def _depot_range(tm: ResponseModel, p: rp.DepotRange, lit: cp_model.IntVar) -> None:
    by_id = {i.id: i for i in tm.incidents}
    far = [v for (iid, _, dp), v in tm.z.items() if tm.d.minutes[dp][by_id[iid].site] > p.minutes]
    if far:
        tm.post(cp_model.LinearExpr.sum(far) == 0, lit)


@encoder("stock")
def _stock(tm: ResponseModel, p: NoParams, lit: cp_model.IntVar) -> None:
    by_id = {i.id: i for i in tm.incidents}
    for dp in tm.d.depots:
        for mat, have in dp.stock.items():
            cells = [(v, by_id[iid].materials[m]) for (iid, m, x), v in tm.z.items() if x == dp.id and m == mat]
            if sum(q for _, q in cells) > have:
                tm.post(cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [q for _, q in cells]) <= have, lit)


@encoder("deadline")
def _deadline(tm: ResponseModel, p: rp.Deadline, lit: cp_model.IntVar) -> None:
    by_id = {i.id: i for i in tm.incidents}
    for iid in p.incidents:
        tm.post(tm.comp[iid] <= tm.d.deadline(by_id[iid]), lit)


@encoder("max_travel")
def _max_travel(tm: ResponseModel, p: rp.MaxTravel, lit: cp_model.IntVar) -> None:
    by_id = {i.id: i for i in tm.incidents}
    far = [v for (t, iid), v in tm.x.items() if tm.d.travel(t, by_id[iid]) > p.minutes]
    if far:
        tm.post(cp_model.LinearExpr.sum(far) == 0, lit)


def _class_members(tm: ResponseModel, base: str, role: str) -> list[str]:
    return [t.id for t in tm.d.teams if t.base == base and t.role == role]


@encoder("station_cover")
def _station_cover(tm: ResponseModel, p: rp.StationCover, lit: cp_model.IntVar) -> None:
    _class_limit(tm, p.base, p.role, p.keep, lit, (p.wave,))


@encoder("unit_out")
def _unit_out(tm: ResponseModel, p: rp.UnitOut, lit: cp_model.IntVar) -> None:
    _class_limit(tm, p.base, p.role, p.count, lit, rp.WAVES)


def _class_limit(
    tm: ResponseModel, base: str, role: str, keep: int, lit: cp_model.IntVar, waves: tuple[int, ...]
) -> None:
    """In each of ``waves`` at least ``keep`` of the class's teams are sent nowhere (a team
    is counted once however often it is sent: a Boolean per team and wave)."""
    members = _class_members(tm, base, role)
    for wave in waves:
        busy = []
        for t in members:
            b = tm.m.new_bool_var("")
            cells = [tm.x[t, i.id] for i in tm.incidents if i.wave == wave and (t, i.id) in tm.x]
            for v in cells:
                tm.m.add(b >= v)
            tm.m.add(b <= cp_model.LinearExpr.sum(cells))
            busy.append(b)
        tm.post(cp_model.LinearExpr.sum(busy) <= len(members) - keep, lit)


@encoder("dispatch_cap")
def _dispatch_cap(tm: ResponseModel, p: rp.DispatchCap, lit: cp_model.IntVar) -> None:
    for base in tm.d.bases:
        for wave in rp.WAVES:
            tm.post(tm.base_sent(base, wave) <= p.max, lit)


@encoder("arrives_first")
def _arrives_first(tm: ResponseModel, p: rp.ArrivesFirst, lit: cp_model.IntVar) -> None:
    d = tm.d
    i = next(x for x in tm.incidents if x.id == p.incident)
    for a in d.teams:
        for b in d.teams:
            both = (a.id, i.id) in tm.x and (b.id, i.id) in tm.x
            if both and a.role == p.first and b.role == p.then and d.travel(a.id, i) > d.travel(b.id, i):
                tm.post(tm.x[a.id, i.id] + tm.x[b.id, i.id] <= 1, lit)


@encoder("severity_priority")
def _severity_priority(tm: ResponseModel, p: rp.SeverityPriority, lit: cp_model.IntVar) -> None:
    tm.post(tm.comp[p.first] <= tm.comp[p.then], lit)


@encoder("same_base")
def _same_base(tm: ResponseModel, p: rp.SameBase, lit: cp_model.IntVar) -> None:
    used = {b: tm.m.new_bool_var("") for b in tm.d.bases}
    for t in tm.d.teams:
        if (t.id, p.incident) in tm.x:
            tm.m.add(used[t.base] >= tm.x[t.id, p.incident])
    tm.post(cp_model.LinearExpr.sum(list(used.values())) <= 1, lit)


@encoder("dispatch_balance")
def _dispatch_balance(tm: ResponseModel, p: rp.DispatchBalance, lit: cp_model.IntVar) -> None:
    for wave in rp.WAVES:
        for a in tm.d.bases:
            for b in tm.d.bases:
                if a != b:
                    tm.post(tm.base_sent(a, wave) - tm.base_sent(b, wave) <= p.max, lit)


@encoder("rest_after_long")
def _rest_after_long(tm: ResponseModel, p: rp.RestAfterLong, lit: cp_model.IntVar) -> None:
    long = [i for i in tm.incidents if i.wave == 1 and i.duration >= p.minutes]
    later = [i for i in tm.incidents if i.wave == 2]
    for t in tm.d.teams:
        for i in long:
            for j in later:
                if (t.id, i.id) in tm.x and (t.id, j.id) in tm.x:
                    tm.post(tm.x[t.id, i.id] + tm.x[t.id, j.id] <= 1, lit)


@encoder("cumulative_duty")
def _cumulative_duty(tm: ResponseModel, p: rp.CumulativeDuty, lit: cp_model.IntVar) -> None:
    """Duty over the threshold forbids heavy second-wave work: for each heavy incident j,
    duty(t) <= threshold + big * (1 - x[t,j]) (big: the team's largest possible duty)."""
    d = tm.d
    first = [i for i in tm.incidents if i.wave == 1]
    heavy = [j for j in tm.incidents if j.wave == 2 and j.duration > p.light]
    for t in d.teams:
        cells = [(tm.x[t.id, i.id], 2 * d.travel(t.id, i) + i.duration) for i in first if (t.id, i.id) in tm.x]
        big = sum(c for _, c in cells)
        if big <= p.minutes:
            continue
        duty = cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells])
        for j in heavy:
            if (t.id, j.id) in tm.x:
                tm.post(duty <= p.minutes + big * (1 - tm.x[t.id, j.id]), lit)


@encoder("turnaround")
def _turnaround(tm: ResponseModel, p: NoParams, lit: cp_model.IntVar) -> None:
    d = tm.d
    later = [j for j in tm.incidents if j.wave == 2]
    for t in d.teams:
        for i in tm.incidents:
            if i.wave == 1 and (t.id, i.id) in tm.x and d.alerts[0] + 2 * d.travel(t.id, i) + i.duration > d.alerts[1]:
                for j in later:
                    if (t.id, j.id) in tm.x:
                        tm.post(tm.x[t.id, i.id] + tm.x[t.id, j.id] <= 1, lit)


@encoder("new_incident")
def _new_incident(tm: ResponseModel, p: rp.NewIncident, lit: cp_model.IntVar) -> None:
    i = p.incident
    for role, n in i.needs.items():
        tm.post(tm.count(i.id, [t.id for t in tm.d.teams if t.role == role]) == n, lit)


@encoder("spare_cover")
def _spare_cover(tm: ResponseModel, p: rp.SpareCover, lit: cp_model.IntVar) -> None:
    """Each (incident of the severity, role it needs) has a team of the role within reach
    that is sent nowhere in the incident's wave (a team is at one incident a wave, so
    1 - sent is exactly 'idle')."""
    d = tm.d
    for i in tm.incidents:
        if i.severity != p.severity:
            continue
        for role in i.needs:
            near = [t.id for t in d.teams if t.role == role and d.travel(t.id, i) <= p.minutes]
            idle = [1 - tm.sent(t, i.wave) for t in near]
            tm.post(cp_model.LinearExpr.sum(idle) >= 1, lit)


def _objective(tm: ResponseModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.d
    by_id = {i.id: i for i in tm.incidents}
    if term.kind == "lateness":
        lates: list[tuple[cp_model.IntVar, int]] = []
        ub = 0
        for i in tm.incidents:
            sev = d.severity_by_id[i.severity]
            top = max(0, tm.comp_top[i.id] - sev.deadline)
            late = tm.m.new_int_var(0, top, f"late[{i.id}]")
            tm.m.add_max_equality(late, [0, tm.comp[i.id] - sev.deadline])
            lates.append((late, sev.weight))
            ub += sev.weight * top
        return cp_model.LinearExpr.weighted_sum([v for v, _ in lates], [w for _, w in lates]), ub
    if term.kind in ("travel", "running_cost"):
        rate = (lambda t: 1) if term.kind == "travel" else (lambda t: d.team_by_id[t].cost)
        cells = [(v, rate(t) * d.travel(t, by_id[iid])) for (t, iid), v in tm.x.items()]
        ub = 0  # per incident and role, the costliest teams it could get
        for i in tm.incidents:
            for role, n in i.needs.items():
                ub += sum(sorted((rate(t.id) * d.travel(t.id, i) for t in d.teams if t.role == role), reverse=True)[:n])
        return cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells]), ub
    if term.kind == "fatigue":
        # a team sent to i in wave 1 and j in wave 2 counts (i's minutes on scene / 5) x (j's / 5);
        # both[t,i,j] = x[t,i] AND x[t,j] is exact, and a team does at most one incident a wave
        pairs: list[tuple[cp_model.IntVar, int]] = []
        tops: list[int] = []
        for t in d.teams:
            best = 0
            for i in tm.incidents:
                for j in tm.incidents:
                    if i.wave == 1 and j.wave == 2 and (t.id, i.id) in tm.x and (t.id, j.id) in tm.x:
                        c = rp.fatigue_units(i, j)
                        pairs.append((tm.both(tm.x[t.id, i.id], tm.x[t.id, j.id], ""), c))
                        best = max(best, c)
            tops.append(best)
        reused = sum(n for i in tm.incidents if i.wave == 2 for n in i.needs.values())
        ub = sum(sorted(tops, reverse=True)[:reused])
        return cp_model.LinearExpr.weighted_sum([v for v, _ in pairs], [c for _, c in pairs]), ub
    if term.kind == "material_cost":
        cells = [(v, rp.material_cost(d, by_id[iid], m, dp)) for (iid, m, dp), v in tm.z.items()]
        ub = 0
        for i in tm.incidents:
            for m in i.materials:
                ub += max(rp.material_cost(d, i, m, dp.id) for dp in d.depots if m in dp.stock)
        return cp_model.LinearExpr.weighted_sum([v for v, _ in cells], [c for _, c in cells]), ub
    if term.kind == "changes":
        old = rp.current_plan(term)
        parts: list[Any] = []
        ub = 0
        for i in tm.incidents:
            before: dict[tuple[str, str], int] = {}
            for tid in old.teams.get(i.id, []):
                team = d.team_by_id[tid]
                before[team.role, team.base] = before.get((team.role, team.base), 0) + 1
            classes = sorted({(t.role, t.base) for t in d.teams if t.role in i.needs} | set(before))
            for role, base in classes:
                members = [t.id for t in d.teams if t.role == role and t.base == base]
                now = tm.count(i.id, members)
                was = before.get((role, base), 0)
                top = max(len(members), was)
                if was == 0:
                    parts.append(now)
                else:
                    diff = tm.m.new_int_var(0, top, "")
                    tm.m.add_abs_equality(diff, now - was)
                    parts.append(diff)
                ub += top
            for m, dp in old.materials.get(i.id, {}).items():
                if (i.id, m, dp) in tm.z:
                    parts.append(1 - tm.z[i.id, m, dp])
                    ub += 1
        return cp_model.LinearExpr.sum(parts), ub
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = parse_data(draft.data)
    tm = ResponseModel(data, rp.new_incidents(draft.rules))

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        rows = []
        for i in tm.incidents:
            teams = [t.id for t in data.teams if (t.id, i.id) in tm.x and solver.value(tm.x[t.id, i.id])]
            mats = [
                {"material": m, "depot": dp, "quantity": i.materials[m]}
                for (iid, m, dp), v in tm.z.items()
                if iid == i.id and solver.value(v)
            ]
            if i in tm.extra and not teams and not mats:
                continue
            rows.append({"incident": i.id, "teams": teams, "materials": mats})
        return {"dispatch": rows}

    answer = [*tm.x.values(), *tm.z.values()]
    sm = solver_model(
        tm, draft, ENCODERS, rp.RULE_PARAMS, _objective, decode, answer, [], SOLVER_PARAMETERS, UNIQUENESS_PARAMETERS
    )
    sm.symmetry = symmetry(tm)
    return sm


# -- sampling --------------------------------------------------------------------------
Witness = dict[str, tuple[str, ...]]  # incident -> teams
Supply = dict[str, dict[str, str]]  # incident -> material -> depot


def _teams(s: ResponseSizes, roles: tuple[str, ...], bases: list[tuple[str, str]], rng: random.Random) -> list[Team]:
    """Per role a number of teams spread at random over the bases, numbered per base."""
    teams: list[Team] = []
    costs = iter(rng.sample(range(1, 30), len(roles) * len(bases)))  # distinct per (role, base)
    for role in roles:
        count: dict[str, int] = {}
        cost = {name: next(costs) for name, _ in bases}
        for _ in range(s.per_role.draw(rng)):
            name, letter = rng.choice(bases)
            count[name] = count.get(name, 0) + 1
            teams.append(Team(id=f"{ABBR[role]}-{letter}{count[name]}", role=role, base=name, cost=cost[name]))
    return teams


def _needs(
    spec: GenerationSpec, s: ResponseSizes, roles: tuple[str, ...], free: dict[str, list[str]], rng: random.Random
) -> tuple[dict[str, int], dict[str, int]] | None:
    """(role -> teams needed, triage class -> casualties) of one incident, within the free teams."""
    if spec.subtask == "multi_casualty_collision":
        als, bls = len(free.get("ALS crew", [])), len(free.get("BLS crew", []))
        red = rng.randint(0, min(2, als))
        pairs = rng.randint(0, min(2, bls))
        if not red and not pairs:  # a collision always has a red or yellow casualty while crews are free
            red, pairs = (0, 1) if bls else (min(1, als), 0)
        needs = {"ALS crew": red, "BLS crew": pairs}
        extra = [r for r in roles if r not in TRIAGE.values() and free.get(r)]
        if extra and rng.random() < 0.4:
            needs[rng.choice(extra)] = 1
        needs = {r: n for r, n in needs.items() if n}
        if not needs:
            return None
        yellow = 2 * pairs - rng.randint(0, 1) if pairs else 0
        return needs, {"red": red, "yellow": yellow, "green": rng.randint(0, 4)}
    options = [r for r in roles if free.get(r)]
    if not options:
        return None
    chosen = rng.sample(options, min(len(options), s.roles_needed.draw(rng)))
    return {r: min(len(free[r]), s.need.draw(rng)) for r in roles if r in chosen}, {}


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[ResponseData, Witness, Supply]:
    s = SIZES.of(spec.size)
    sub = spec.subtask
    roles = ROLES[sub][: s.roles] if sub != "multi_casualty_collision" else ROLES[sub][: max(2, s.roles)]
    bases = rng.sample(BASES, s.bases)
    depots = rng.sample(DEPOTS, s.depots)
    n_inc = s.first_wave + s.second_wave
    sites = rng.sample(SITES, n_inc)
    places = [b for b, _ in bases] + depots + sites + list(rng.sample(JUNCTIONS, s.junctions))
    rng.shuffle(places)
    network = sample_network(rng, places, SHAPES[sub], (s.road_minutes.lo, s.road_minutes.hi))
    teams = _teams(s, roles, bases, rng)
    severities = (
        Severity(id="critical", deadline=rng.randint(11, 16), weight=4),
        Severity(id="serious", deadline=rng.randint(19, 27), weight=2),
        Severity(id="minor", deadline=rng.randint(33, 45), weight=1),
    )
    lo, hi = DURATION.get(sub, DEFAULT_DURATION)
    alert2 = rng.randint(hi - 60, hi + 20) if sub == "wildfire_rotation" else rng.randint(90, 180)
    mats = MATERIALS[sub][: s.materials]
    names = rng.sample(NAMES[sub], min(n_inc, len(NAMES[sub])))
    closed = _closures(network, sites[0], rng) if sub == "hazmat_spill" else ()
    if sub == "hazmat_spill" and not closed:
        raise NoDraft("closure")  # the spill site's only road cannot close
    open_net = network.without(frozenset(r) for r in closed)
    assert open_net is not None
    minutes = open_net.minutes
    incidents: list[Incident] = []
    witness: Witness = {}
    used_first: set[str] = set()
    for k in range(n_inc):
        wave = 1 if k < s.first_wave else 2
        busy = {t for i in incidents if i.wave == wave for t in witness[i.id]}
        free = {r: [t.id for t in teams if t.role == r and t.id not in busy] for r in roles}
        if wave == 2:  # a reused team must be back in time; fresh ones are preferred
            for r in roles:
                fresh = [t for t in free[r] if t not in used_first]
                back = [
                    t
                    for t in free[r]
                    if t in used_first and _back_in_time(teams, incidents, witness, t, minutes, alert2)
                ]
                free[r] = fresh if fresh and rng.random() < 0.7 else fresh + back
        found = _needs(spec, s, roles, free, rng)
        if found is None and wave == 2:  # no fresh or rested team left: any team idle in the wave
            free = {r: [t.id for t in teams if t.role == r and t.id not in busy] for r in roles}
            found = _needs(spec, s, roles, free, rng)
        if found is None:
            raise NoDraft("witness")
        needs, casualties = found
        iid = f"I{k + 1}"
        duration = 5 * rng.randint(lo // 5, hi // 5)
        chosen = _pick_teams(teams, needs, free, rng)
        if wave == 1:
            used_first |= set(chosen)
        severity = rng.choice(severities).id
        if casualties:
            severity = "critical" if casualties["red"] else ("serious" if casualties["yellow"] else "minor")
        need_mats = {m: s.quantity.draw(rng) for m in mats if rng.random() < 0.6}
        if sub == "flood_response" and not need_mats:
            need_mats = {mats[0]: s.quantity.draw(rng)}
        incidents.append(
            Incident(
                id=iid, name=names[k % len(names)], site=sites[k], wave=wave, severity=severity,
                needs=needs, materials=need_mats, duration=duration, casualties=casualties,
            )
        )  # fmt: skip
        order = {t.id: n for n, t in enumerate(teams)}
        witness[iid] = tuple(sorted(chosen, key=order.__getitem__))
    depot_list, supply = _depots(incidents, depots, mats, minutes, rng)
    data = ResponseData(
        network=network,
        closed=closed,
        alerts=(0, alert2),
        severities=severities,
        teams=tuple(teams),
        depots=tuple(depot_list),
        incidents=tuple(incidents),
    )
    return data, witness, supply


def _pick_teams(teams: list[Team], needs: dict[str, int], free: dict[str, list[str]], rng: random.Random) -> list[str]:
    """The witness's teams for one incident: at random, or (one time in two) all from
    one base where one base can send them all (so single-command rules have witnesses)."""
    base_of = {t.id: t.base for t in teams}
    if rng.random() < 0.5:
        bases = sorted({base_of[t] for r in needs for t in free[r]})
        able = [b for b in bases if all(sum(1 for t in free[r] if base_of[t] == b) >= n for r, n in needs.items())]
        if able:
            b = rng.choice(able)
            return [t for r, n in needs.items() for t in rng.sample([t for t in free[r] if base_of[t] == b], n)]
    return [t for r, n in needs.items() for t in rng.sample(free[r], n)]


def _back_in_time(
    teams: list[Team], incidents: list[Incident], witness: Witness, team: str, minutes: dict[str, dict[str, int]],
    alert2: int,
) -> bool:  # fmt: skip
    base = next(t.base for t in teams if t.id == team)
    return all(
        2 * minutes[base][i.site] + i.duration <= alert2 for i in incidents if i.wave == 1 and team in witness[i.id]
    )


def _closures(network: Any, site: str, rng: random.Random) -> tuple[tuple[str, str], ...]:
    """One or two roads at the spill site closed (the exclusion zone), never cutting the network."""
    touching = [r for r in network.roads if site in (r.a, r.b)]
    rng.shuffle(touching)
    closed: list[tuple[str, str]] = []
    for r in touching[: max(1, len(touching) - 1)]:
        trial = [*closed, (r.a, r.b)]
        if network.without(frozenset(x) for x in trial) is not None:
            closed = trial
        if len(closed) == 2:
            break
    return tuple(closed)


def _depots(
    incidents: list[Incident], names: list[str], mats: tuple[str, ...], minutes: dict[str, dict[str, int]],
    rng: random.Random,
) -> tuple[list[Depot], Supply]:  # fmt: skip
    """Every depot holds every material, at distinct prices; the witness takes each material
    from a random depot, and stocks are its use plus a slack that is sometimes zero."""
    supply: Supply = {i.id: {m: rng.choice(names) for m in i.materials} for i in incidents}
    depots = []
    prices = {m: rng.sample(range(3, 80), len(names)) for m in mats}
    hauls = rng.sample(range(1, 5), len(names))
    for k, name in enumerate(names):
        stock, price = {}, {}
        for m in mats:
            use = sum(i.materials[m] for i in incidents if supply[i.id].get(m) == name)
            stock[m] = use + rng.choice([0, rng.randint(2, 10), rng.randint(5, 15)])
            price[m] = prices[m][k]
        depots.append(Depot(id=name, stock=stock, price=price, haul=hauls[k]))
    return depots, supply


# -- rule builders (the witness satisfies each) ------------------------------------------
def _plan(d: ResponseData, w: Witness, supply: Supply) -> rp.Plan:
    return rp.Plan(dict(w), {iid: dict(x) for iid, x in supply.items()})


W = tuple[Witness, Supply]


def _b_deadline(d: ResponseData, ws: W, rng: random.Random) -> rp.Deadline | None:
    plan = _plan(d, *ws)
    options = [i.id for i in d.incidents if rp.completion(d, plan, i) <= d.deadline(i)]
    if not options:
        return None
    chosen = set(rng.sample(options, min(len(options), rng.randint(1, 2))))
    return rp.Deadline(incidents=[i for i in options if i in chosen])


def _b_depot_range(d: ResponseData, ws: W, rng: random.Random) -> rp.DepotRange | None:
    """The longest haul the witness uses, when some other depot holding the material lies farther."""
    supply = ws[1]
    by_id = {i.id: i for i in d.incidents}
    used = [d.minutes[dp][by_id[iid].site] for iid, x in supply.items() for dp in x.values()]
    if not used:
        return None
    limit = max(used)
    farther = [
        1
        for iid, x in supply.items()
        for m in x
        for dp in d.depots
        if m in dp.stock and d.minutes[dp.id][by_id[iid].site] > limit
    ]
    # the longest haul the witness uses (a minute more, at random, when no depot lies farther)
    return rp.DepotRange(minutes=limit if farther else limit + rng.randint(0, 1))


def _b_max_travel(d: ResponseData, ws: W, rng: random.Random) -> rp.MaxTravel | None:
    w = ws[0]
    top = max(d.travel(t, i) for i in d.incidents for t in w[i.id])
    return rp.MaxTravel(minutes=top + rng.randint(0, 1))


def _b_station_cover(d: ResponseData, ws: W, rng: random.Random) -> rp.StationCover | None:
    """A class and wave where the witness leaves some of the class at home: keep that many."""
    plan = _plan(d, *ws)
    options = []
    for members in team_classes(d, singles=True):
        t0 = d.team_by_id[members[0]]
        for wave in rp.WAVES:
            sent = rp._class_sent(d, plan, t0.base, t0.role, wave)[1]
            if sent < len(members):
                options.append((t0.base, t0.role, len(members) - sent, wave, sent > 0))
    busy = [o for o in options if o[4]]  # a class the witness also uses binds more often
    if not options:
        return None
    base, role, keep, wave, _ = rng.choice(busy or options)
    return rp.StationCover(base=base, role=role, keep=keep, wave=wave)


def _b_dispatch_cap(d: ResponseData, ws: W, rng: random.Random) -> rp.DispatchCap | None:
    plan = _plan(d, *ws)
    return rp.DispatchCap(max=max(n for wave in rp.WAVES for n in rp.base_counts(d, plan, wave).values()))


def _b_arrives_first(
    d: ResponseData, ws: W, rng: random.Random, prefer: tuple[str, str] | None = None
) -> rp.ArrivesFirst | None:
    w = ws[0]
    options = []
    for i in d.incidents:
        roles = [r for r in i.needs]
        for a in roles:
            for b in roles:
                if a == b:
                    continue
                ta = [d.travel(t, i) for t in w[i.id] if d.team_by_id[t].role == a]
                tb = [d.travel(t, i) for t in w[i.id] if d.team_by_id[t].role == b]
                if max(ta) <= min(tb):
                    options.append((i.id, a, b))
    if not options:
        return None
    preferred = [o for o in options if prefer is not None and (o[1], o[2]) == prefer]
    iid, a, b = rng.choice(preferred or options)
    return rp.ArrivesFirst(incident=iid, first=a, then=b)


def _b_severity_priority(d: ResponseData, ws: W, rng: random.Random) -> rp.SeverityPriority | None:
    """A more severe incident (or an equal one) complete no later than another of its wave
    in the witness, the closest such pair preferred (the rule then binds)."""
    plan = _plan(d, *ws)
    rank = {s.id: k for k, s in enumerate(d.severities)}
    options = []
    for a in d.incidents:
        for b in d.incidents:
            if a.id != b.id and a.wave == b.wave and rank[a.severity] <= rank[b.severity]:
                gap = rp.completion(d, plan, b) - rp.completion(d, plan, a)
                if gap >= 0:
                    options.append((rank[a.severity] == rank[b.severity], gap, a.id, b.id))
    if not options:
        return None
    options.sort()
    _, _, a_id, b_id = options[0] if rng.random() < 0.7 else rng.choice(options)
    return rp.SeverityPriority(first=a_id, then=b_id)


def _b_same_base(d: ResponseData, ws: W, rng: random.Random) -> rp.SameBase | None:
    w = ws[0]
    options = [i.id for i in d.incidents if len(w[i.id]) >= 2 and len({d.team_by_id[t].base for t in w[i.id]}) == 1]
    return rp.SameBase(incident=rng.choice(options)) if options else None


def _b_dispatch_balance(d: ResponseData, ws: W, rng: random.Random) -> rp.DispatchBalance | None:
    plan = _plan(d, *ws)
    gaps = [max(c.values()) - min(c.values()) for c in (rp.base_counts(d, plan, wave) for wave in rp.WAVES)]
    return rp.DispatchBalance(max=max(gaps) + rng.randint(0, 1))


def _b_rest_after_long(d: ResponseData, ws: W, rng: random.Random) -> rp.RestAfterLong | None:
    w = ws[0]
    later = {t for i in d.incidents if i.wave == 2 for t in w[i.id]}
    first = [i for i in d.incidents if i.wave == 1]
    reused = [i.duration for i in first if set(w[i.id]) & later]
    floor = max(reused, default=0) + 1
    top = max(i.duration for i in first)
    if floor > top:
        return None
    return rp.RestAfterLong(minutes=rng.randint(floor, top))


def _b_cumulative_duty(d: ResponseData, ws: W, rng: random.Random) -> rp.CumulativeDuty | None:
    """A light-work cap from the second wave's durations and a duty threshold that every
    witness team doing heavy second-wave work stays within, while some team of a role a
    heavy incident needs is over it (so the rule can bind)."""
    plan = _plan(d, *ws)
    duty = rp.wave_one_duty(d, plan)
    second = [i for i in d.incidents if i.wave == 2]
    light = rng.choice(sorted({i.duration for i in second})) - 5  # at least one heavy incident
    heavy = [i for i in second if i.duration > light]
    floor = max((duty[t] for i in heavy for t in plan.teams[i.id]), default=0)
    roles = {r for i in heavy for r in i.needs}
    tired = [duty[t.id] for t in d.teams if t.role in roles and duty[t.id] > floor]
    if not tired:
        return None
    options = sorted({v for v in duty.values() if floor <= v < max(tired)} | {floor})
    return rp.CumulativeDuty(minutes=rng.choice(options), light=light)


def _b_turnaround(d: ResponseData, ws: W, rng: random.Random) -> NoParams | None:
    ok, _ = rp.CHECKS["turnaround"](d, _plan(d, *ws), NoParams())
    return NoParams() if ok else None


BUILDERS: dict[str, Callable[[ResponseData, W, random.Random], Params | None]] = {
    "deadline": _b_deadline,
    "max_travel": _b_max_travel,
    "depot_range": _b_depot_range,
    "station_cover": _b_station_cover,
    "dispatch_cap": _b_dispatch_cap,
    "arrives_first": _b_arrives_first,
    "severity_priority": _b_severity_priority,
    "same_base": _b_same_base,
    "dispatch_balance": _b_dispatch_balance,
    "rest_after_long": _b_rest_after_long,
    "cumulative_duty": _b_cumulative_duty,
    "turnaround": _b_turnaround,
}


def objective_terms(subtask: str) -> list[ObjectiveTerm]:
    return [ObjectiveTerm(id=k, kind=k) for k in OBJECTIVES[subtask]]


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    data, witness, supply = _entities(spec, rng)
    sampled = sampled_kinds(spec, TASK.base_rules, FORCED[spec.subtask])
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    prefer = SAFETY_FIRST.get(spec.subtask)
    builders = dict(BUILDERS)
    builders["arrives_first"] = lambda d, ws, r: _b_arrives_first(d, ws, r, prefer)
    rules = witness_rules(base, sampled, tiers, builders, data, (witness, supply), rng)
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective_terms(spec.subtask))


# -- hard-tier hooks -------------------------------------------------------------------
def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """One rule of a kind feasible instances carry, just tight enough that with the
    instance's other rules no plan remains (the loosest such value, by bisection along a
    chain where feasibility only falls): a travel limit, a per-base dispatch cap, station
    cover for one class, or deadlines on a growing set of incidents. A value infeasible on
    its own (with every other rule off) is passed over."""
    d = parse_data(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731
    travel = sorted({d.travel(t.id, i) for i in d.incidents for t in d.teams if t.role in i.needs}, reverse=True)
    top = max(sum(i.needs.values()) for i in d.incidents) * len(d.incidents)
    trials: list[tuple[str, list[Params]]] = [
        ("max_travel", [rp.MaxTravel(minutes=m) for m in travel]),
        ("dispatch_cap", [rp.DispatchCap(max=k) for k in range(top, -1, -1)]),
    ]
    classes = team_classes(d, singles=True)
    for members in rng.sample(classes, min(2, len(classes))):
        t0 = d.team_by_id[members[0]]
        wave = rng.choice(rp.WAVES)
        keeps: list[Params] = [
            rp.StationCover(base=t0.base, role=t0.role, keep=k, wave=wave) for k in range(1, len(members) + 1)
        ]
        trials.append(("station_cover", keeps))
    order = [i.id for i in d.incidents]
    rng.shuffle(order)
    trials.append(
        ("deadline", [rp.Deadline(incidents=sorted(order[:k], key=order.index)) for k in range(1, len(order) + 1)])
    )
    rng.shuffle(trials)
    for kind, values in trials[:4]:
        found = first_infeasible(values, lambda p: with_conflict_rule(draft_, kind, p, position), feasible)  # noqa: B023
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def _decoded(d: ResponseData, plan: dict[str, Any]) -> tuple[Witness, Supply]:
    teams = {r["incident"]: tuple(r["teams"]) for r in plan["dispatch"]}
    supply = {r["incident"]: {m["material"]: m["depot"] for m in r["materials"]} for r in plan["dispatch"]}
    return teams, supply


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A new incident reported at a quiet place (one or two roles, in either wave), or a
    team of a class the plan uses in full breaking down."""
    d = parse_data(draft_.data)
    teams, _ = _decoded(d, plan)
    out: list[Rule] = []
    used = {i.site for i in d.incidents} | set(d.bases) | {x.id for x in d.depots}
    quiet = [p for p in d.network.places if p not in used] or [i.site for i in d.incidents]
    sub = draft_.spec.subtask
    for _ in range(2):
        wave = rng.choice(rp.WAVES)
        roles = rng.sample(list(d.roles), min(len(d.roles), rng.randint(1, 2)))
        site = rng.choice(quiet)
        lo, hi = DURATION.get(sub, DEFAULT_DURATION)
        inc = Incident(
            id=f"I{len(d.incidents) + 1}", name=rng.choice(NAMES[sub]), site=site, wave=wave,
            severity=rng.choice(d.severities).id, needs=dict.fromkeys(roles, 1), duration=5 * rng.randint(lo // 5, hi // 5),
        )  # fmt: skip
        out.append(make_rule("new_incident", "hard", rp.NewIncident(incident=inc)))
    for members in team_classes(d, singles=True):
        t0 = d.team_by_id[members[0]]
        for wave in rp.WAVES:
            sent = {t for i in d.incidents if i.wave == wave for t in teams[i.id]}
            if set(members) <= sent:
                out.append(make_rule("unit_out", "hard", rp.UnitOut(base=t0.base, role=t0.role, count=1)))
                break
    out = list({r.model_dump_json(): r for r in out}.values())
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, Any]:
    d = parse_data(draft_.data)
    teams, supply = _decoded(d, plan)
    return rp.Dispatch(
        teams={i.id: list(teams[i.id]) for i in d.incidents},
        materials={i.id: dict(supply[i.id]) for i in d.incidents if supply[i.id]},
    ).model_dump(mode="json")


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    """Spare cover for the most severe incidents present, within the reach of the n-th
    nearest team of each covered role (n: the teams it needs): so one of the nearest must
    stay home as the spare and a farther one goes, which binds the plan (the kit probes
    that it stays feasible)."""
    d = parse_data(draft_.data)
    present = {i.severity for i in d.incidents}
    top = next(s.id for s in d.severities if s.id in present)  # the most severe incidents are covered
    reach = 1
    binds = False
    for wave in rp.WAVES:  # a role a covered incident needs must have a team beyond the wave's needs
        needed: dict[str, int] = {}
        for i in d.incidents:
            if i.wave == wave:
                for role, n in i.needs.items():
                    needed[role] = needed.get(role, 0) + n
        for i in d.incidents:
            if i.wave != wave or i.severity != top:
                continue
            for role, n in i.needs.items():
                times = sorted(d.travel(t.id, i) for t in d.teams if t.role == role)
                if len(times) <= needed[role]:
                    return None
                reach = max(reach, times[n - 1])  # the spare is among the n nearest: one of them stays home
    for i in d.incidents:  # binds: a plan could send every team of a covered role within reach
        if i.severity != top:
            continue
        demand: dict[str, int] = {}
        for j in d.incidents:
            if j.wave == i.wave:
                for role, n in j.needs.items():
                    demand[role] = demand.get(role, 0) + n
        for role in i.needs:
            near = sum(1 for t in d.teams if t.role == role and d.travel(t.id, i) <= reach)
            binds |= near <= demand[role]
    if not binds:
        return None
    return make_rule("spare_cover", "hard", rp.SpareCover(minutes=reach, severity=top)), []


UNCERTAIN_EACH = 3


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Depot stocks (worst: low) and, unless a rule compares arrival times (where a
    shorter road could reorder arrivals), road minutes (worst: high)."""
    d = parse_data(draft_.data)
    stocks = [
        Uncertain(id="", kind="stock", target=f"{dp.id}/{m}", low=max(0, n - rng.randint(1, 4)), high=n)
        for dp in d.depots
        for m, n in dp.stock.items()
        if n > 0
    ]
    out = rng.sample(stocks, min(UNCERTAIN_EACH, len(stocks)))
    if not any(r.kind in ("arrives_first", "severity_priority") for r in draft_.rules):
        closed = {frozenset(c) for c in d.closed}
        roads = [
            Uncertain(id="", kind="road", target=f"{r.a}/{r.b}", low=r.minutes, high=r.minutes + rng.randint(1, 3))
            for r in d.network.roads
            if r.ends not in closed
        ]
        out += rng.sample(roads, min(UNCERTAIN_EACH, len(roads)))
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    a, b = u.target.split("/")
    if u.kind == "stock":
        depots = [{**dp, "stock": {**dp["stock"], b: value}} if dp["id"] == a else dp for dp in data["depots"]]
        return {**data, "depots": depots}
    net = data["network"]
    roads = [{**r, "minutes": value} if (r["a"], r["b"]) == (a, b) else r for r in net["roads"]]
    return {**data, "network": {**net, "roads": roads}}


def worst_is_low(u: Uncertain) -> bool:
    return u.kind == "stock"


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = parse_data(draft_.data)
    teams, supply = _decoded(d, plan)
    completion = {}
    for i in d.incidents:
        times = [d.minutes[d.team_by_id[t].base][i.site] for t in teams[i.id]]
        times += [d.minutes[dp][i.site] for dp in supply[i.id].values()]
        completion[i.id] = max(times, default=0)
    sent = dict.fromkeys(d.bases, 0)
    for row in plan["dispatch"]:  # new incidents' teams count too
        for t in row["teams"]:
            sent[d.team_by_id[t].base] += 1
    return {"completion": completion, "teams_sent": sent}


HOOKS = HardHooks(
    base=TASK.base_rules,
    build=build,
    disruptions=disruptions,
    existing=existing,
    robust=robust,
    uncertain=uncertain,
    with_value=with_value,
    worst_is_low=worst_is_low,
)
