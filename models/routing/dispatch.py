"""Transportation Dispatch Planning: vehicles to the jobs of a shift, each vehicle doing
its jobs in sequence from and back to the depot over a road network.

Decision: one multiple circuit (``add_multiple_circuit``) over the depot (node 0) and
the jobs (nodes 1..n): x[i,k] = 1 when some vehicle goes from i to k, so the true arcs
are routes that leave and re-enter the depot; y[j,v] = 1 when vehicle v does job j. The
jobs of one route share their vehicle and there are as many routes as vehicles used, so
each used vehicle drives exactly one route. Times propagate along the true arcs and are
exact: a job's arrival is fixed by its predecessor (the depot at minute 0, or the
previous job's finish plus the empty drive), its start is the max of arrival and
release, its finish the start plus the loaded drive and the handling; so a set of routes
fixes every time, as the checker computes them. Per-route running totals (empty minutes,
minutes driven) carry the per-vehicle caps and the battery charge. Travel minutes are
the shortest minutes of the instance's road network (:mod:`pbsolve.network_kit`).
(A per-vehicle ``add_circuit`` was the first version: four times the arcs, and its
infeasibility proofs were twice as slow.)

Vehicles of one type (and battery) are interchangeable: rules speak of types and
counts, and the replanning figure of stops, never of one vehicle. The model breaks that
symmetry itself: within each class the vehicles' job sets, read as binary numbers (job
J1 most significant), never increase along the vehicle list, and
:class:`pbsolve.family.Symmetry` tells the certifier that canonical form. The objective
is the subtask's lexicographic order of vehicles used, weighted lateness and deadhead
minutes, then a stated pickup score (priority points x the minute the vehicle reaches
the pickup, points distinct), which settles what the other figures leave open without
breaking any symmetry: two plans with different finish minutes differ in some arrival,
and plans that only differ in which route takes which job after a drop-off (same
finishes, same empty minutes, common on tree-like networks) differ in arrivals too.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible
from pbsolve.checkers.routing import dispatch as dp
from pbsolve.checkers.routing.dispatch import DispatchData, Job, Plan, Vehicle
from pbsolve.family import Draft, SolverModel, Symmetry
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
from pbsolve.network_kit import SHAPES, sample_network
from pbsolve.params import NoParams, Params, make_rule
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=dp.TASK_ID,
    name="Transportation Dispatch Planning",
    family="routing",
    summary="sequence a shift's transport jobs on typed vehicles from a depot, against release and due times",
    subtasks=(
        SubtaskSpec("taxi_prebookings", "Taxi pre-bookings", "saloons and wheelchair-accessible cabs; lateness first"),
        SubtaskSpec(
            "freight_haulage",
            "Freight haulage",
            "curtain-siders and reefers under hard delivery deadlines; fewest trucks first",
        ),
        SubtaskSpec(
            "patient_transport",
            "Patient transport",
            "seated and stretcher ambulances; continuity of care keeps named trips with one crew",
        ),
        SubtaskSpec(
            "airport_shuttles", "Airport shuttles", "electric shuttles whose battery charge runs down along the route"
        ),
        SubtaskSpec(
            "waste_collection",
            "Waste collection",
            "rear loaders and skip lorries that fill up job by job; empty miles first",
        ),
    ),
    pool=(
        ConstraintSpec("vehicle_type", "basic", "a job's vehicle is of the type it needs"),
        ConstraintSpec("shift_end", "basic", "every vehicle is back at the depot by the end of the shift"),
        ConstraintSpec("hard_deadline", "basic", "named jobs finish by their due minute"),
        ConstraintSpec("max_jobs", "basic", "no vehicle does more than so many jobs"),
        ConstraintSpec("max_deadhead", "basic", "no vehicle drives more than so many minutes empty"),
        ConstraintSpec("max_vehicles", "basic", "at most so many vehicles go out"),
        ConstraintSpec("same_vehicle", "medium", "continuity: named jobs share one vehicle"),
        ConstraintSpec("different_vehicle", "medium", "separation: named pairs of jobs on different vehicles"),
        ConstraintSpec("max_wait", "medium", "no vehicle waits more than so many minutes for a release"),
        ConstraintSpec("direct_start", "medium", "named jobs are served straight from the depot"),
        ConstraintSpec("battery", "stateful", "an electric vehicle's charge never falls below a reserve"),
        ConstraintSpec("cumulative_load", "stateful", "a vehicle's running total of loads stays within its body"),
        *mechanism_pool(
            "a spare vehicle of each named type stays at the depot, so any single vehicle breaking down is covered",
            replan="a vehicle breaks down or a driver is short: repair the routes with the fewest jobs changed",
        ),
    ),
    base_rules=("vehicle_type", "shift_end"),
)


class Vocabulary(Settings):
    """A subtask's words and ranges: the depot, the two or three vehicle types (with their
    id prefixes), who a job is for, what a load counts, and the job figures."""

    depot: str
    types: tuple[tuple[str, str], ...]
    customers: tuple[str, ...]
    units: str
    load: PositiveRange
    handling: PositiveRange


VOCAB = {
    "taxi_prebookings": Vocabulary(
        depot="Cab Office",
        types=(("saloon", "SAL"), ("wheelchair-accessible cab", "WAV"), ("estate car", "EST")),
        customers=("Mr Okafor", "Ms Lindqvist", "Dr Mehta", "Mrs Byrne", "Mr Tanaka", "Ms Rossi", "Mr Adeyemi",
                   "Mrs Novak", "Ms Haddad", "Mr Kowalski", "Dr Silva", "Ms Brennan", "Mr Ito", "Mrs Costa",
                   "Mr Dube", "Ms Ferreira"),
        units="passengers", load=PositiveRange(lo=1, hi=4), handling=PositiveRange(lo=2, hi=6),
    ),
    "freight_haulage": Vocabulary(
        depot="Freight Yard",
        types=(("curtain-sider", "CS"), ("refrigerated truck", "REF"), ("flatbed", "FB")),
        customers=("Acme Steel", "Birch Foods", "Corvo Paper", "Delta Drinks", "Elm Timber", "Fenwick Glass",
                   "Granite Co", "Harbour Fish", "Ivory Dairy", "Juno Parts", "Kestrel Tiles", "Linden Flour",
                   "Marlow Paints", "Nettle Farms", "Orbit Plastics", "Pine Frozen"),
        units="tonnes", load=PositiveRange(lo=4, hi=18), handling=PositiveRange(lo=10, hi=25),
    ),
    "patient_transport": Vocabulary(
        depot="Ambulance Station",
        types=(("seated ambulance", "SEA"), ("stretcher ambulance", "STR"), ("bariatric ambulance", "BAR")),
        customers=("patient A.K.", "patient B.M.", "patient C.O.", "patient D.R.", "patient E.S.", "patient F.T.",
                   "patient G.W.", "patient H.Y.", "patient I.L.", "patient J.N.", "patient K.P.", "patient L.V.",
                   "patient M.D.", "patient N.F.", "patient O.H.", "patient P.J."),
        units="patients", load=PositiveRange(lo=1, hi=2), handling=PositiveRange(lo=5, hi=12),
    ),
    "airport_shuttles": Vocabulary(
        depot="Shuttle Depot",
        types=(("electric shuttle", "ES"), ("minibus", "MB"), ("coach", "CO")),
        customers=("flight BA 214", "flight LH 903", "flight AF 118", "flight KL 455", "flight EI 162",
                   "flight IB 731", "flight SK 520", "flight AY 877", "flight TP 342", "flight LX 615",
                   "flight OS 204", "flight SN 988", "flight AZ 431", "flight LO 276", "flight FI 509",
                   "flight DY 613"),
        units="passengers", load=PositiveRange(lo=3, hi=14), handling=PositiveRange(lo=4, hi=10),
    ),
    "waste_collection": Vocabulary(
        depot="Council Depot",
        types=(("rear loader", "RL"), ("skip lorry", "SK"), ("hook lift", "HL")),
        customers=("Market Hall", "Leisure Centre", "Primary School", "High Street bins", "Hospital annex",
                   "Library", "Bus Station", "Retail Park", "Care Home", "Sports Ground", "Town Hall",
                   "Community Centre", "Allotments", "Fire Station", "Garden Centre", "College"),
        units="tonnes", load=PositiveRange(lo=1, hi=6), handling=PositiveRange(lo=8, hi=18),
    ),
}  # fmt: skip
STREETS = (
    "Mill Lane", "Market Square", "Riverside", "Old Town", "Station Road", "Elm Park", "Dock Street", "Hill Farm",
    "Bridge End", "Orchard Way", "Chapel Row", "Fen Gate", "Kings Cross Road", "Queensway", "Abbey Green",
    "Castle Hill", "Harbour Road", "Wharf Street", "Victoria Park", "Church Lane", "Airport Terminal", "Hospital Gate",
)  # fmt: skip
OBJECTIVES = {  # the pickup score last: it settles what the stated figures leave open
    "taxi_prebookings": ("lateness", "deadhead", "pickup_score"),
    "freight_haulage": ("vehicles_used", "deadhead", "lateness", "pickup_score"),
    "patient_transport": ("lateness", "deadhead", "pickup_score"),
    "airport_shuttles": ("lateness", "deadhead", "pickup_score"),
    "waste_collection": ("deadhead", "lateness", "pickup_score"),
}
FORCED = {
    "taxi_prebookings": (),
    "freight_haulage": ("hard_deadline",),
    "patient_transport": ("same_vehicle",),
    "airport_shuttles": ("battery",),
    "waste_collection": ("cumulative_load",),
}
ELECTRIC = ("airport_shuttles",)  # subtasks whose first vehicle type is always electric


class DispatchSizes(Settings):
    """How big a dispatch instance is."""

    places: PositiveInt = Field(ge=4, le=len(STREETS) + 1, description="places of the network, the depot included")
    types: PositiveInt = Field(ge=1, le=3)
    per_type: PositiveRange = Field(description="vehicles of one type")
    jobs: PositiveInt
    road_minutes: PositiveRange


SIZES = SizeTable[DispatchSizes](
    tiny=DispatchSizes(places=6, types=2, per_type=PositiveRange(lo=1, hi=2), jobs=3,
                       road_minutes=PositiveRange(lo=3, hi=10)),
    small=DispatchSizes(places=8, types=2, per_type=PositiveRange(lo=1, hi=2), jobs=5,
                        road_minutes=PositiveRange(lo=3, hi=12)),
    default=DispatchSizes(places=10, types=2, per_type=PositiveRange(lo=2, hi=2), jobs=7,
                          road_minutes=PositiveRange(lo=3, hi=12)),
    large=DispatchSizes(places=14, types=3, per_type=PositiveRange(lo=2, hi=3), jobs=13,
                        road_minutes=PositiveRange(lo=3, hi=12)),
)  # fmt: skip
PROBE_TIME = 2.0
# measured on 40 default instances (hard tier as sampled): CP-SAT time 2.30 s in all with the
# certifier's LP (level 2), 1.85 s at level 1, 1.51 s with no LP and 1.42 s also without probing,
# the same certificates; the uniqueness re-optimisation without presolve (2.89 s with it)
# on up to FEW_JOBS jobs; on the large size (13 jobs) the LP pays for itself: 0.47 s per
# instance with the certifier's settings against 3.2 s without it (one instance 39 s)
SOLVER_PARAMETERS: dict[str, Any] = {"linearization_level": 0, "cp_model_probing_level": 0}
FEW_JOBS = 8
UNIQUENESS_PARAMETERS: dict[str, Any] = {"cp_model_presolve": False}
DEPOT = "depot"  # node 0's name in the variable names


def parse_data(data: Any) -> DispatchData:
    """The draft's data, parsed once per distinct content (the kit's cache)."""
    return parsed(DispatchData, data)


# -- the CP-SAT model ------------------------------------------------------------------
class DispatchModel(ModelBase):
    """The routes as one multiple circuit through the depot, a vehicle per job, exact
    times, and the interchangeable vehicles ordered.

    x[i,k] = 1 when some vehicle goes from node i to node k (node 0 the depot, node k the
    k-th job); ``add_multiple_circuit`` makes the true arcs routes that leave and re-enter
    the depot. y[j,v] = 1 when vehicle v does job j: the jobs of one route share their
    vehicle (veh[j], the vehicle's number, is equal along every true arc), and there are
    as many routes as vehicles used, so no vehicle drives two routes."""

    def __init__(self, data: DispatchData) -> None:
        super().__init__()
        self.d = d = data
        m = self.m
        n = len(d.jobs)
        self.names = [DEPOT, *(j.id for j in d.jobs)]
        self.pairs = [(i, k) for i in range(n + 1) for k in range(n + 1) if i != k]
        mins = d.minutes
        self.empty = {(i, k): mins[self._end(i)][self._start(k)] for i, k in self.pairs}
        longest = max(max(row.values()) for row in mins.values())
        dur = [d.duration(j) for j in d.jobs]
        self.horizon = max(j.release for j in d.jobs) + sum(dur) + (n + 1) * longest
        self.arr = [m.new_int_var(0, self.horizon, f"arr[{j.id}]") for j in d.jobs]
        self.start = [m.new_int_var(0, self.horizon, f"start[{j.id}]") for j in d.jobs]
        for k, j in enumerate(d.jobs):
            m.add_max_equality(self.start[k], [self.arr[k], j.release])
        self.finish = [self.start[k] + dur[k] for k in range(n)]
        self.x = {(i, k): m.new_bool_var(f"x[{self.names[i]},{self.names[k]}]") for i, k in self.pairs}
        m.add_multiple_circuit([(i, k, lit) for (i, k), lit in self.x.items()])
        for (i, k), lit in self.x.items():
            if i == 0:
                m.add(self.arr[k - 1] == self.empty[i, k]).only_enforce_if(lit)
            elif k != 0:
                m.add(self.arr[k - 1] == self.finish[i - 1] + self.empty[i, k]).only_enforce_if(lit)
        self.y = {(j.id, v.id): m.new_bool_var(f"y[{j.id},{v.id}]") for v in d.vehicles for j in d.jobs}
        self.veh = []
        for j in d.jobs:
            m.add_exactly_one([self.y[j.id, v.id] for v in d.vehicles])
            number = m.new_int_var(0, len(d.vehicles) - 1, f"veh[{j.id}]")
            m.add(number == cp_model.LinearExpr.weighted_sum([self.y[j.id, v.id] for v in d.vehicles],
                                                              list(range(len(d.vehicles)))))  # fmt: skip
            self.veh.append(number)
        for (i, k), lit in self.x.items():
            if i and k:
                m.add(self.veh[i - 1] == self.veh[k - 1]).only_enforce_if(lit)
        self.used: dict[str, cp_model.IntVar] = {}
        for v in d.vehicles:
            u = self.used[v.id] = m.new_bool_var(f"used[{v.id}]")
            col = [self.y[j.id, v.id] for j in d.jobs]
            for c in col:
                m.add_implication(c, u)
            m.add(u <= cp_model.LinearExpr.sum(col))
        routes = cp_model.LinearExpr.sum([self.x[0, k] for k in range(1, n + 1)])
        m.add(routes == cp_model.LinearExpr.sum(list(self.used.values())))
        self.classes = vehicle_classes(d)
        for members in self.classes:
            codes = [self.code(v) for v in members]
            for a, b in itertools.pairwise(codes):
                m.add(a >= b)
        self._running: dict[str, list[cp_model.IntVar]] = {}
        self._count: dict[str, cp_model.IntVar] = {}

    def _end(self, node: int) -> str:
        """Where a vehicle is after node ``node`` (the depot, or the job's drop-off)."""
        return self.d.depot if node == 0 else self.d.jobs[node - 1].dest

    def _start(self, node: int) -> str:
        """Where node ``node`` begins (the depot, or the job's pickup)."""
        return self.d.depot if node == 0 else self.d.jobs[node - 1].origin

    def code(self, v: str) -> cp_model.LinearExpr:
        """v's jobs as a binary number, the first job most significant."""
        n = len(self.d.jobs)
        return cp_model.LinearExpr.weighted_sum(
            [self.y[j.id, v] for j in self.d.jobs], [2 ** (n - 1 - k) for k in range(n)]
        )

    def jobs_of(self, v: str) -> cp_model.IntVar:
        """How many jobs v does (an integer variable, so caps on it propagate at once)."""
        if v not in self._count:
            n = len(self.d.jobs)
            c = self._count[v] = self.m.new_int_var(0, n, f"count[{v}]")
            self.m.add(c == cp_model.LinearExpr.sum([self.y[j.id, v] for j in self.d.jobs]))
        return self._count[v]

    def running(self, what: str) -> list[cp_model.IntVar]:
        """Per job, a running total along its route up to the job's drop-off: the empty
        minutes driven so far (``what`` "empty"), or every minute driven so far, empty
        or loaded ("driven"). Set along the true arcs, so exact on every route."""
        if what not in self._running:
            d, m = self.d, self.m
            n = len(d.jobs)
            extra = [d.loaded(j) if what == "driven" else 0 for j in d.jobs]
            top = sum(max(self.empty[i, k] for i in range(n + 1) if i != k) for k in range(1, n + 1)) + sum(extra)
            acc = [m.new_int_var(0, top, f"{what}[{j.id}]") for j in d.jobs]
            for (i, k), lit in self.x.items():
                if k == 0:
                    continue
                before = acc[i - 1] if i else 0
                m.add(acc[k - 1] == before + self.empty[i, k] + extra[k - 1]).only_enforce_if(lit)
            self._running[what] = acc
        return self._running[what]

    def index(self, job: str) -> int:
        return self.names.index(job) - 1


def vehicle_classes(d: DispatchData) -> list[list[str]]:
    """Interchangeable vehicles (two or more), each class in vehicle-list order: one type
    and battery (rules speak of types, and the changes figure of stops, never of a vehicle)."""
    by: dict[tuple[str, int | None], list[str]] = {}
    for v in d.vehicles:
        by.setdefault((v.type, v.battery), []).append(v.id)
    return [ids for ids in by.values() if len(ids) > 1]


def symmetry(tm: DispatchModel) -> Symmetry:
    """Relabelling vehicles within a class states the same routes; the canonical labelling
    orders the class's columns of y (one block of the answer literals per vehicle, after
    the arcs) in decreasing binary order, first job most significant (what the model keeps)."""
    n, base = len(tm.d.jobs), len(tm.x)
    at = {v.id: base + k * n for k, v in enumerate(tm.d.vehicles)}
    spans = [[(at[v], at[v] + n) for v in members] for members in tm.classes]

    def canonical(values: list[int]) -> list[int]:
        out = list(values)
        for group in spans:
            blocks = sorted((values[a:b] for a, b in group), reverse=True)
            for (a, b), blk in zip(group, blocks):
                out[a:b] = blk
        return out

    def images(values: list[int]) -> list[list[int]]:  # only used without in-model breaking
        return [canonical(values)]

    return Symmetry(canonical=canonical, images=images, in_model=True)


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("vehicle_type")
def _vehicle_type(tm: DispatchModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """No job on a vehicle of another type; and (implied, for fast counting proofs) the
    vehicles of a type do at least as many jobs as need that type."""
    d = tm.d
    wrong = [tm.y[j.id, v.id] for v in d.vehicles for j in d.jobs if j.needs != v.type]
    if wrong:
        tm.post(cp_model.LinearExpr.sum(wrong) == 0, lit)
    for kind in dict.fromkeys(v.type for v in d.vehicles):
        need = sum(1 for j in d.jobs if j.needs == kind)
        if need:
            fleet = [tm.jobs_of(v.id) for v in d.vehicles if v.type == kind]
            tm.post(cp_model.LinearExpr.sum(fleet) >= need, lit)


@encoder("shift_end")
def _shift_end(tm: DispatchModel, p: NoParams, lit: cp_model.IntVar) -> None:
    """A route's last job is followed by the drive home: it must end by the shift's end."""
    for k in range(len(tm.d.jobs)):
        tm.m.add(tm.finish[k] + tm.empty[k + 1, 0] <= tm.d.shift).only_enforce_if([lit, tm.x[k + 1, 0]])


@encoder("hard_deadline")
def _hard_deadline(tm: DispatchModel, p: dp.HardDeadline, lit: cp_model.IntVar) -> None:
    for jid in p.jobs:
        k = tm.index(jid)
        tm.post(tm.finish[k] <= tm.d.jobs[k].due, lit)


@encoder("max_jobs")
def _max_jobs(tm: DispatchModel, p: dp.MaxJobs, lit: cp_model.IntVar) -> None:
    for v in tm.d.vehicles:
        tm.post(tm.jobs_of(v.id) <= p.max, lit)


@encoder("max_deadhead")
def _max_deadhead(tm: DispatchModel, p: dp.MaxDeadhead, lit: cp_model.IntVar) -> None:
    """A route's empty minutes are its running total at the last drop-off plus the drive home."""
    acc = tm.running("empty")
    for k in range(len(tm.d.jobs)):
        tm.m.add(acc[k] + tm.empty[k + 1, 0] <= p.max).only_enforce_if([lit, tm.x[k + 1, 0]])


@encoder("max_vehicles")
def _max_vehicles(tm: DispatchModel, p: dp.MaxVehicles, lit: cp_model.IntVar) -> None:
    tm.post(cp_model.LinearExpr.sum(list(tm.used.values())) <= p.max, lit)


@encoder("same_vehicle")
def _same_vehicle(tm: DispatchModel, p: dp.SameVehicle, lit: cp_model.IntVar) -> None:
    for a, b in zip(p.jobs, p.jobs[1:]):
        tm.post(tm.veh[tm.index(a)] == tm.veh[tm.index(b)], lit)


@encoder("different_vehicle")
def _different_vehicle(tm: DispatchModel, p: dp.DifferentVehicle, lit: cp_model.IntVar) -> None:
    for a, b in p.pairs:
        for v in tm.d.vehicles:
            tm.post(tm.y[a, v.id] + tm.y[b, v.id] <= 1, lit)


@encoder("max_wait")
def _max_wait(tm: DispatchModel, p: dp.MaxWait, lit: cp_model.IntVar) -> None:
    for k in range(len(tm.d.jobs)):
        tm.post(tm.start[k] - tm.arr[k] <= p.max, lit)


@encoder("direct_start")
def _direct_start(tm: DispatchModel, p: dp.DirectStart, lit: cp_model.IntVar) -> None:
    for jid in p.jobs:
        tm.post(tm.x[0, tm.index(jid) + 1] == 1, lit)


@encoder("battery")
def _battery(tm: DispatchModel, p: dp.Battery, lit: cp_model.IntVar) -> None:
    """The charge only falls along a route, so its lowest point is back at the depot:
    the minutes driven by then (running total at the last drop-off plus the drive home)
    within the battery less the reserve, for the vehicle of the route."""
    acc = tm.running("driven")
    for v in tm.d.vehicles:
        if v.battery is None:
            continue
        if v.battery < p.reserve:  # even staying home breaks the reserve
            tm.post(False, lit)
            continue
        for k, j in enumerate(tm.d.jobs):
            tm.m.add(acc[k] + tm.empty[k + 1, 0] <= v.battery - p.reserve).only_enforce_if(
                [lit, tm.x[k + 1, 0], tm.y[j.id, v.id]]
            )


@encoder("cumulative_load")
def _cumulative_load(tm: DispatchModel, p: dp.CumulativeLoad, lit: cp_model.IntVar) -> None:
    """Loads only add up, so the running total is highest after the last job."""
    jobs = tm.d.jobs
    for v in tm.d.vehicles:
        total = cp_model.LinearExpr.weighted_sum([tm.y[j.id, v.id] for j in jobs], [j.load for j in jobs])
        tm.post(total <= p.max, lit)


@encoder("fleet_cap")
def _fleet_cap(tm: DispatchModel, p: dp.FleetCap, lit: cp_model.IntVar) -> None:
    tm.post(cp_model.LinearExpr.sum([tm.used[v.id] for v in tm.d.vehicles if v.type == p.type]) <= p.max, lit)


@encoder("spare_vehicle")
def _spare_vehicle(tm: DispatchModel, p: dp.SpareVehicle, lit: cp_model.IntVar) -> None:
    for kind in p.types:
        fleet = [tm.used[v.id] for v in tm.d.vehicles if v.type == kind]
        tm.post(cp_model.LinearExpr.sum(fleet) <= len(fleet) - 1, lit)


def _objective(tm: DispatchModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.d
    top_finish = [tm.horizon + d.duration(j) for j in d.jobs]
    if term.kind == "lateness":
        parts, ub = [], 0
        for k, j in enumerate(d.jobs):
            top = max(0, top_finish[k] - j.due)
            late = tm.m.new_int_var(0, top, f"late[{j.id}]")
            tm.m.add_max_equality(late, [0, tm.finish[k] - j.due])
            parts.append(j.weight * late)
            ub += j.weight * top
        return cp_model.LinearExpr.sum(parts), ub
    if term.kind == "deadhead":
        cells = [(lit, tm.empty[a]) for a, lit in tm.x.items()]
        expr = cp_model.LinearExpr.weighted_sum([c for c, _ in cells], [w for _, w in cells])
        return expr, (2 * len(d.jobs)) * max(tm.empty.values())
    if term.kind == "vehicles_used":
        return cp_model.LinearExpr.sum(list(tm.used.values())), len(d.vehicles)
    if term.kind == "pickup_score":
        expr = cp_model.LinearExpr.weighted_sum(tm.arr, [j.points for j in d.jobs])
        return expr, sum(j.points for j in d.jobs) * tm.horizon
    if term.kind == "changes":
        was = dp.predecessors(dp.current_plan(term))
        kept = [tm.x[tm.names.index(was[j.id]), k + 1] for k, j in enumerate(d.jobs) if j.id in was]
        return len(d.jobs) - cp_model.LinearExpr.sum(kept), len(d.jobs)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = parse_data(draft.data)
    tm = DispatchModel(data)
    n = len(data.jobs)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        """Each route from the depot, following the true arcs, under the vehicle of its jobs."""
        rows = []
        for first in range(1, n + 1):
            if not solver.value(tm.x[0, first]):
                continue
            route, at = [], first
            while at != 0:
                route.append(tm.names[at])
                at = next(k for k in range(n + 1) if k != at and solver.value(tm.x[at, k]))
            v = next(v.id for v in data.vehicles if solver.value(tm.y[route[0], v.id]))
            rows.append((v, route))
        order = {v.id: k for k, v in enumerate(data.vehicles)}
        return {"routes": [{"vehicle": v, "jobs": r} for v, r in sorted(rows, key=lambda vr: order[vr[0]])]}

    answer = [*tm.x.values(), *(tm.y[j.id, v.id] for v in data.vehicles for j in data.jobs)]
    parameters = SOLVER_PARAMETERS if n <= FEW_JOBS else {}
    sm = solver_model(
        tm, draft, ENCODERS, dp.RULE_PARAMS, _objective, decode, answer, [], parameters, UNIQUENESS_PARAMETERS
    )
    sm.symmetry = symmetry(tm)
    return sm


# -- sampling --------------------------------------------------------------------------
Witness = dict[str, list[str]]  # vehicle -> its jobs in order


def _entities(
    spec: GenerationSpec, rng: random.Random, electric: bool, busy: bool, spare: bool, idle: bool, split: bool
) -> tuple[DispatchData, Witness]:
    """A network, a fleet and the jobs of a planted plan: each vehicle's jobs are drawn
    along its route (pickup, drop-off, a release around the witness arrival, a due minute
    around the witness finish), so the plan exists by construction. ``busy``: most jobs
    go to the first type (an instance asked to be infeasible needs a type with more jobs
    than a per-vehicle cap lets its vehicles take); ``spare``: every type with two or
    more vehicles keeps one at the depot (robustness asks for spares); ``idle``: at least
    one vehicle stays at the depot (a cap on the vehicles going out can then bind);
    ``split``: two vehicles of one type both do jobs (jobs to keep apart exist)."""
    s = SIZES.of(spec.size)
    voc = VOCAB[spec.subtask]
    places = [voc.depot, *rng.sample(STREETS, s.places - 1)]
    network = sample_network(rng, places, rng.choice(SHAPES), (s.road_minutes.lo, s.road_minutes.hi))
    mins = network.minutes
    vehicles: list[Vehicle] = []
    for kind, abbr in voc.types[: s.types]:
        for k in range(s.per_type.draw(rng)):
            vehicles.append(Vehicle(id=f"{abbr}-{k + 1}", type=kind))
    if spare:  # a robust plan keeps a vehicle of every type with two or more at the depot
        fleets: dict[str, list[Vehicle]] = {}
        for v in vehicles:
            fleets.setdefault(v.type, []).append(v)
        active = [v for fleet in fleets.values() for v in (fleet[1:] if len(fleet) > 1 else fleet)]
    else:
        top = len(vehicles) - 1 if idle and len(vehicles) > 1 else len(vehicles)
        active = rng.sample(vehicles, rng.randint(max(1, len(vehicles) - 2), top))
    if busy:  # most jobs on the first type's vehicles: a per-vehicle job cap can then conflict with the types
        first = [v for v in vehicles if v.type == vehicles[0].type]
        owner = [rng.choice(first if rng.random() < 0.75 else vehicles).id for _ in range(s.jobs)]
    else:
        owner = [rng.choice(active).id for _ in range(s.jobs)]
    if split and not spare and s.jobs >= 2:  # two vehicles of one type both busy: a separation rule can bind
        kinds = [k for k in dict.fromkeys(v.type for v in vehicles) if sum(v.type == k for v in vehicles) >= 2]
        if kinds:
            kind = rng.choice(kinds)
            a, b = rng.sample([v.id for v in vehicles if v.type == kind], 2)
            owner[0], owner[1] = a, b
    customers = rng.sample(voc.customers, s.jobs)
    origins, dests = _ends(rng, places[1:], s.jobs)
    drafts: list[tuple[str, dict[str, Any]]] = []
    for v in vehicles:
        t, at = 0, voc.depot
        for _ in range(owner.count(v.id)):
            origin, dest = origins.pop(), dests.pop()
            arrive = t + mins[at][origin]
            release = max(0, arrive + rng.randint(-25, 10))
            handling = voc.handling.draw(rng)
            finish = max(arrive, release) + mins[origin][dest] + handling
            due = max(1, finish + rng.randint(-12, 25))
            drafts.append((v.id, {"needs": v.type, "origin": origin, "dest": dest, "handling": handling,
                                  "release": release, "due": due, "load": voc.load.draw(rng)}))  # fmt: skip
            t, at = finish, dest
    order = list(range(len(drafts)))
    rng.shuffle(order)
    points = rng.sample(range(1, 41), len(drafts))
    jobs: list[Job] = []
    witness: Witness = {v.id: [] for v in vehicles}
    for k, (idx, pts) in enumerate(zip(order, points), 1):
        vid, fields = drafts[idx]
        jobs.append(Job(id=f"J{k}", name=customers[k - 1], weight=rng.randint(1, 3), points=pts, **fields))
    pos = {idx: k for k, idx in enumerate(order, 1)}
    for idx, (vid, _) in enumerate(drafts):
        witness[vid].append(f"J{pos[idx]}")
    data = DispatchData(network=network, depot=voc.depot, shift=1, units=voc.units, vehicles=tuple(vehicles),
                        jobs=tuple(jobs))  # fmt: skip
    tl = dp.timeline(data, _plan_of(data, witness))
    if electric:  # the first type runs on batteries a little beyond what its witness routes use
        used = {v: tl[v].deadhead + sum(data.loaded(data.job_by_id[j]) for j in witness[v]) for v in witness}
        kind = vehicles[0].type
        top = max(used[v.id] for v in vehicles if v.type == kind)
        battery = 10 * math.ceil((top + rng.randint(8, 30)) / 10)
        vehicles = [v.model_copy(update={"battery": battery}) if v.type == kind else v for v in vehicles]
    back = max(x.back for x in tl.values())
    shift = 30 * math.ceil((back + rng.randint(0, 25)) / 30)
    return dp.replaced(data, shift=shift, vehicles=tuple(vehicles)), witness


def _ends(rng: random.Random, places: list[str], n: int) -> tuple[list[str], list[str]]:
    """Pickup and drop-off places of n jobs: no two jobs share a pickup or a drop-off
    (jobs with the same ends would make optima tie), and no job ends where it starts."""
    while True:
        origins, dests = rng.sample(places, n), rng.sample(places, n)
        if all(a != b for a, b in zip(origins, dests)):
            return origins, dests


def _plan_of(d: DispatchData, w: Witness) -> Plan:
    return Plan({v.id: tuple(w.get(v.id, ())) for v in d.vehicles})


def _pick(rng: random.Random, options: list[str], most: int) -> list[str]:
    """1..most of ``options``, kept in their given order."""
    chosen = set(rng.sample(options, min(len(options), rng.randint(1, most))))
    return [o for o in options if o in chosen]


def _b_hard_deadline(d: DispatchData, w: Witness, rng: random.Random) -> dp.HardDeadline | None:
    done = dp.finishes(d, _plan_of(d, w))
    options = [j.id for j in d.jobs if done[j.id] <= j.due]
    return dp.HardDeadline(jobs=_pick(rng, options, 3)) if options else None


def _b_max_jobs(d: DispatchData, w: Witness, rng: random.Random) -> dp.MaxJobs | None:
    top = max(len(jobs) for jobs in w.values())
    return dp.MaxJobs(max=top) if top >= 1 else None


def _b_max_deadhead(d: DispatchData, w: Witness, rng: random.Random) -> dp.MaxDeadhead | None:
    tl = dp.timeline(d, _plan_of(d, w))
    return dp.MaxDeadhead(max=max(x.deadhead for x in tl.values()) + rng.randint(0, 4))


def _b_max_vehicles(d: DispatchData, w: Witness, rng: random.Random) -> dp.MaxVehicles | None:
    used = sum(1 for jobs in w.values() if jobs)
    return dp.MaxVehicles(max=used) if used < len(d.vehicles) else None


def _b_same_vehicle(d: DispatchData, w: Witness, rng: random.Random) -> dp.SameVehicle | None:
    options = [jobs for jobs in w.values() if len(jobs) >= 2]
    if not options:
        return None
    return dp.SameVehicle(jobs=sorted(rng.sample(rng.choice(options), 2), key=lambda j: int(j[1:])))


def _b_different_vehicle(d: DispatchData, w: Witness, rng: random.Random) -> dp.DifferentVehicle | None:
    of = {j: v for v, jobs in w.items() for j in jobs}
    kind = {j.id: j.needs for j in d.jobs}
    pairs = [(a.id, b.id) for a in d.jobs for b in d.jobs
             if int(a.id[1:]) < int(b.id[1:]) and of[a.id] != of[b.id] and kind[a.id] == kind[b.id]]  # fmt: skip
    if not pairs:
        return None
    return dp.DifferentVehicle(pairs=sorted(rng.sample(pairs, min(len(pairs), rng.randint(1, 2)))))


def _b_max_wait(d: DispatchData, w: Witness, rng: random.Random) -> dp.MaxWait | None:
    tl = dp.timeline(d, _plan_of(d, w))
    top = max((leg.start - leg.arrive for x in tl.values() for leg in x.legs), default=0)
    return dp.MaxWait(max=top + rng.randint(0, 3))


def _b_direct_start(d: DispatchData, w: Witness, rng: random.Random) -> dp.DirectStart | None:
    firsts = sorted((jobs[0] for jobs in w.values() if jobs), key=lambda j: int(j[1:]))
    return dp.DirectStart(jobs=_pick(rng, firsts, 2)) if firsts else None


def _b_battery(d: DispatchData, w: Witness, rng: random.Random) -> dp.Battery | None:
    tl = dp.timeline(d, _plan_of(d, w))
    slack = [
        v.battery - tl[v.id].deadhead - sum(d.loaded(d.job_by_id[j]) for j in w[v.id])
        for v in d.vehicles
        if v.battery is not None
    ]
    if not slack or min(slack) < 0:
        return None
    return dp.Battery(reserve=max(0, min(slack) - rng.randint(0, 3)))


def _b_cumulative_load(d: DispatchData, w: Witness, rng: random.Random) -> dp.CumulativeLoad | None:
    top = max(sum(d.job_by_id[j].load for j in jobs) for jobs in w.values())
    return dp.CumulativeLoad(max=top + rng.randint(0, 2)) if top else None


BUILDERS = {
    "hard_deadline": _b_hard_deadline,
    "max_jobs": _b_max_jobs,
    "max_deadhead": _b_max_deadhead,
    "max_vehicles": _b_max_vehicles,
    "same_vehicle": _b_same_vehicle,
    "different_vehicle": _b_different_vehicle,
    "max_wait": _b_max_wait,
    "direct_start": _b_direct_start,
    "battery": _b_battery,
    "cumulative_load": _b_cumulative_load,
}


def objective_terms(subtask: str) -> list[ObjectiveTerm]:
    return [ObjectiveTerm(id=k, kind=k) for k in OBJECTIVES[subtask]]


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    sampled = sampled_kinds(spec, TASK.base_rules, FORCED[spec.subtask])
    electric = spec.subtask in ELECTRIC or "battery" in sampled
    data, witness = _entities(
        spec,
        rng,
        electric,
        busy="infeasibility_detection" in spec.hard,
        spare="robustness_design" in spec.hard,
        idle="max_vehicles" in sampled,
        split="different_vehicle" in sampled,
    )
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    rules = witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng)
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective_terms(spec.subtask))


# -- hard-tier hooks -------------------------------------------------------------------
def _routes(plan: dict[str, Any]) -> Witness:
    return {r["vehicle"]: list(r["jobs"]) for r in plan["routes"]}


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """A cap that the vehicle types cannot meet: at most k jobs per vehicle, one below
    what some type's jobs need on its vehicles (its jobs over its vehicles, rounded up),
    or at most one vehicle fewer than the types with jobs. Either is a counting bound
    (fast to prove) and feasible on its own."""
    d = parse_data(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731
    options: list[tuple[str, Params]] = []
    for kind in sorted({j.needs for j in d.jobs}):
        jobs = sum(1 for j in d.jobs if j.needs == kind)
        fleet = sum(1 for v in d.vehicles if v.type == kind)
        need = -(-jobs // fleet)
        if need >= 2:
            options.append(("max_jobs", dp.MaxJobs(max=need - 1)))
    rng.shuffle(options)
    for kind, params in options:
        found = first_infeasible([params], lambda p: with_conflict_rule(draft_, kind, p, position), feasible)  # noqa: B023
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """A breakdown in a type whose vehicles all go out in the plan (one vehicle fewer of
    it), or a driver shortage (one job fewer on the busiest vehicle): both speak of
    types and counts, never of one vehicle, so the vehicles stay interchangeable."""
    d = parse_data(draft_.data)
    routes = _routes(plan)
    out = []
    for kind in dict.fromkeys(v.type for v in d.vehicles):
        fleet = [v.id for v in d.vehicles if v.type == kind]
        if len(fleet) >= 2 and all(routes.get(v) for v in fleet):
            out.append(make_rule("fleet_cap", "hard", dp.FleetCap(type=kind, max=len(fleet) - 1)))
    busiest = max(len(jobs) for jobs in routes.values())
    if busiest >= 2:
        out.append(make_rule("max_jobs", "hard", dp.MaxJobs(max=busiest - 1)))
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, list[str]]:
    return {v: jobs for v, jobs in _routes(plan).items() if jobs}


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    """A spare of every type with two or more vehicles and some jobs (the kit probes that
    the draft stays feasible)."""
    d = parse_data(draft_.data)
    needed = {j.needs for j in d.jobs}
    types = [t for t in dict.fromkeys(v.type for v in d.vehicles)
             if t in needed and sum(1 for v in d.vehicles if v.type == t) >= 2]  # fmt: skip
    if not types:
        return None
    return make_rule("spare_vehicle", "hard", dp.SpareVehicle(types=types)), []


UNCERTAIN_EACH = 3  # candidates of each kind probed (each costs two optimisations)


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Due minutes (worst: early) and handling minutes (worst: long). Handling only when
    no waiting cap is stated: a shorter handling can lengthen a wait, so its long end
    would not be the worst case for that rule."""
    d = parse_data(draft_.data)
    due = [Uncertain(id="", kind="due", target=j.id, low=max(1, j.due - rng.randint(5, 20)), high=j.due)
           for j in d.jobs]  # fmt: skip
    out = rng.sample(due, min(UNCERTAIN_EACH, len(due)))
    if not any(r.kind == "max_wait" for r in draft_.rules):
        handling = [
            Uncertain(id="", kind="handling", target=j.id, low=j.handling, high=j.handling + rng.randint(3, 10))
            for j in d.jobs
        ]
        out += rng.sample(handling, min(UNCERTAIN_EACH, len(handling)))
    rng.shuffle(out)
    return out


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = parse_data(data)
    field = "due" if u.kind == "due" else "handling"
    jobs = [j.model_copy(update={field: value}) if j.id == u.target else j for j in d.jobs]
    return {**data, "jobs": [j.model_dump(mode="json") for j in jobs]}


def worst_is_low(u: Uncertain) -> bool:
    return u.kind == "due"


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = parse_data(draft_.data)
    p = _plan_of(d, _routes(plan))
    return dp.TASK.verification(d, p)


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
