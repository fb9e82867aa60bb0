"""Warehouse Planning (slotting): every item (a SKU's pick face, a pallet) gets one
storage slot of a warehouse laid out in zones, aisles, bays and rack levels.

Decision: one Boolean x[i,s] per (item, slot), exactly one slot per item (the answer
format); an item's zone and aisle are linear in its row of x, so every rule is a few
linear rows behind the rule's enforcement literal (the assignment polytope keeps the LP
relaxation tight). Zone weight limits, slot exclusivity, temperature zones, heavy goods
low, reserved slots, hazard classes apart (by zone or by a number of aisles), a secure
cage, affinity pairs close, picker congestion per zone, fast movers near the dock, kits
in one zone, and the stateful rule of a zone whose load switches its upper levels off.

The objective is lexicographic: the pick path (metres walked per week: each item's picks
per week x its slot's walking distance), then the lifting effort (each item's weight x
its slot's level, in kg-levels: heavier goods lower). Every bay has its own walking
distance and items have distinct picks and distinct weights, so no two slots or items are
interchangeable: no symmetry is broken by the second term, which is a real stated
objective, and the optimum is unique unless two different placements happen to cost
exactly the same metres and kg-levels (the certifier counts those rare cases).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from ortools.sat.python import cp_model
from pydantic import Field, PositiveInt

from pbsolve.certify import SolverLimits, is_feasible, lexicographic_weights, make_solver
from pbsolve.checkers.project import warehouse as wh
from pbsolve.checkers.project.warehouse import HAZARD_NAMES, Item, Plan, Slot, WarehouseData, Zone
from pbsolve.family import Draft, SolverModel
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
from pbsolve.params import NoParams, Params, make_rule, make_term
from pbsolve.schema import GenerationSpec, ObjectiveTerm, Rule, Tier
from pbsolve.taxonomy import ConstraintSpec, SubtaskSpec, TaskSpec, mechanism_pool

TASK = TaskSpec(
    id=wh.TASK_ID,
    name="Warehouse Planning",
    family="project",
    summary="storage slots for items under zone weight limits, temperature and hazard zoning, heavy goods low "
    "and fast movers near the dock",
    subtasks=(
        SubtaskSpec(
            "ecommerce",
            "E-commerce fulfilment centre",
            "pick faces slotted by turnover, with items bought together kept in near aisles",
        ),
        SubtaskSpec(
            "cold_chain",
            "Cold-chain warehouse",
            "several chilled zones; temperature-sensitive items only in chilled zones",
        ),
        SubtaskSpec(
            "chemical_store",
            "Chemical store",
            "most items carry a hazard class; incompatible classes never share a zone",
        ),
        SubtaskSpec(
            "spare_parts",
            "Spare-parts store",
            "wide weight range on three rack levels; heavy parts only on low levels",
        ),
        SubtaskSpec(
            "cross_dock",
            "Cross-dock staging",
            "pallets staged in lanes; the pallets of one outbound trailer are staged in one zone",
        ),
    ),
    pool=(
        ConstraintSpec("slot_exclusive", "basic", "a slot holds at most one item"),
        ConstraintSpec("zone_capacity", "basic", "the items in a zone weigh at most its stated load limit"),
        ConstraintSpec("chilled", "basic", "temperature-sensitive items only in chilled zones"),
        ConstraintSpec("heavy_low", "basic", "items above a weight only on low rack levels"),
        ConstraintSpec("reserved_slots", "basic", "reserved slots stay empty"),
        ConstraintSpec("hazard_zone", "basic", "two hazard classes never share a zone"),
        ConstraintSpec("secure_zone", "basic", "high-value items only in the secure zone"),
        ConstraintSpec("affinity", "medium", "items picked together at most so many aisles apart"),
        ConstraintSpec("hazard_distance", "medium", "two hazard classes at least so many aisles apart"),
        ConstraintSpec("zone_pick_cap", "medium", "picker congestion: picks per week per zone within a cap"),
        ConstraintSpec("fast_movers", "medium", "items with many picks within a walking distance of the dock"),
        ConstraintSpec("same_zone", "medium", "the items of a group (a trailer, a kit) all in one zone"),
        ConstraintSpec("load_threshold", "stateful", "a zone's load above a threshold switches its upper levels off"),
        *mechanism_pool(
            "named zones keep one slot empty, so the goods of any single damaged slot can move within their zone",
            replan="re-slot after a slot is closed, moving the fewest items",
        ),
    ),
    base_rules=("slot_exclusive", "zone_capacity"),
)

ZONE_NAMES: dict[str, tuple[str, ...]] = {
    "ecommerce": ("Forward pick", "Mezzanine", "Bulk racking", "Long-tail shelving"),
    "cold_chain": ("Ambient dry store", "Dispatch hall", "Returns hall", "Overflow store"),
    "chemical_store": ("Bay North", "Bay South", "Cage West", "Bay East"),
    "spare_parts": ("Heavy racking", "Fast parts", "Bulk parts", "Overflow"),
    "cross_dock": ("Lane 1", "Lane 2", "Lane 3", "Lane 4"),
}
CHILLED_NAMES: dict[str, tuple[str, ...]] = {  # names of the chilled zones
    "ecommerce": ("Chilled grocery room",),
    "cold_chain": ("Chill room A", "Chill room B", "Chill room C", "Chill room D"),
    "chemical_store": ("Cooled store",),
    "spare_parts": ("Climate-controlled room",),
    "cross_dock": ("Reefer lane",),
}
ITEM_NAMES: dict[str, tuple[str, ...]] = {
    "ecommerce": (
        "Phone cases", "USB cables", "Sneakers", "Yoga mats", "Coffee beans", "Board games", "Headphones",
        "Water bottles", "Desk lamps", "Backpacks", "Dog food", "Printer paper", "Kettles", "Towels",
        "Vitamins", "Hair dryers", "Toner", "Notebooks",
    ),
    "cold_chain": (
        "Yoghurt", "Fresh milk", "Cheese", "Salads", "Vaccines", "Insulin", "Butter", "Smoked salmon",
        "Fruit juice", "Ready meals", "Flowers", "Cream", "Eggs", "Prawns", "Sausages", "Tofu",
        "Ham", "Berries",
    ),
    "chemical_store": (
        "Distilled water", "Glycerine", "Silicone sealant", "Paraffin wax", "Citric acid", "Lubricant",
        "Resin", "Talc", "Soda ash", "Epsom salt", "Gypsum", "Kaolin", "Salt", "Starch", "Urea",
        "Calcium carbonate", "Cellulose", "Gelatine",
    ),
    "spare_parts": (
        "Gearboxes", "Bearings", "Hydraulic pumps", "Filters", "Drive belts", "Motors", "Valves", "Gaskets",
        "Brake discs", "Couplings", "Shafts", "Seals", "Fuses", "Pistons", "Sensors", "Axles",
        "Clutch plates", "Hoses",
    ),
    "cross_dock": tuple(f"Pallet P{k}" for k in range(1, 19)),
}  # fmt: skip
# goods of each hazard class (an item of that class is named from its list)
HAZARD_ITEMS: dict[str, tuple[str, ...]] = {
    "2.1": ("Hair spray", "Spray paint", "Deodorant aerosols", "Canned air", "Propane cans", "Insect spray"),
    "3": ("Acetone", "Ethanol", "Paint thinner", "Lamp oil", "Methanol", "Nail polish remover"),
    "5.1": ("Hydrogen peroxide", "Pool chlorine", "Chlorine tablets", "Sodium nitrate", "Bleach powder"),
    "6.1": ("Pesticide", "Rat poison", "Wood preservative", "Herbicide", "Phenol"),
    "8": ("Sulphuric acid", "Caustic soda", "Drain cleaner", "Nitric acid", "Battery acid", "Ammonia"),
    "9": ("Power banks", "Lithium cells", "Laptop batteries", "E-bike batteries", "Phone batteries"),
}
# hazard classes an item may carry, and how often, per subtask
HAZARDS: dict[str, tuple[tuple[str, ...], float]] = {
    "ecommerce": (("2.1", "9"), 0.3),
    "cold_chain": (("2.1", "9"), 0.2),
    "chemical_store": (("3", "5.1", "8", "6.1"), 0.85),
    "spare_parts": (("3", "9"), 0.3),
    "cross_dock": (("3", "8", "9"), 0.35),
}
WEIGHTS: dict[str, tuple[int, int]] = {  # kg range of one item
    "ecommerce": (20, 400),
    "cold_chain": (40, 500),
    "chemical_store": (30, 600),
    "spare_parts": (10, 950),
    "cross_dock": (150, 900),
}
FORCED: dict[str, tuple[str, ...]] = {
    "ecommerce": ("affinity",),
    "cold_chain": ("chilled",),
    "chemical_store": ("hazard_zone",),
    "spare_parts": ("heavy_low",),
    "cross_dock": ("same_zone",),
}
OBJECTIVES = ("pick_path", "lift_effort")


class WarehouseSizes(Settings):
    """How big a warehouse is: zones of consecutive aisles, each aisle with bays of racks."""

    items: PositiveInt = Field(le=18)
    zones: PositiveInt = Field(le=4)
    aisles_per_zone: PositiveInt = Field(le=2)
    bays: PositiveInt = Field(description="bays per aisle (each bay has its own walking distance)")
    levels: PositiveInt = Field(le=3, description="rack levels of every bay (0 = floor)")
    picks: PositiveRange = Field(description="picks per week of one item")


SIZES = SizeTable[WarehouseSizes](
    tiny=WarehouseSizes(items=3, zones=2, aisles_per_zone=1, bays=1, levels=2, picks=PositiveRange(lo=5, hi=60)),
    small=WarehouseSizes(items=5, zones=2, aisles_per_zone=1, bays=2, levels=2, picks=PositiveRange(lo=5, hi=120)),
    default=WarehouseSizes(items=7, zones=3, aisles_per_zone=1, bays=2, levels=2, picks=PositiveRange(lo=5, hi=200)),
    large=WarehouseSizes(items=14, zones=4, aisles_per_zone=2, bays=2, levels=2, picks=PositiveRange(lo=5, hi=300)),
)
LEVELS = {"spare_parts": 3}  # the spare-parts store has three rack levels (capped by the size's levels + 1)
PROBE_TIME = 2.0
# Every solve keeps the full LP relaxation (the assignment rows make it tight: without it, 70
# deterministic seconds against 1 on 40 default drafts) but skips the Chvatal-Gomory, MIR and
# zero-half cuts, which cost more LP time than they save here (measured on the same 40 drafts
# under load: first solves 0.5-0.8 s against 0.9-1.0 s in all).
PARAMETERS: dict[str, Any] = {"add_cg_cuts": False, "add_mir_cuts": False, "add_zero_half_cuts": False}
# the uniqueness re-optimisation without presolve (same drafts: 1.0 against 1.2-1.3 s, close to
# the first solve's time)
UNIQUENESS_PARAMETERS: dict[str, Any] = {"cp_model_presolve": False}


# -- the CP-SAT model ------------------------------------------------------------------
class WarehouseModel(ModelBase):
    """x[i,s]: item i in slot s (exactly one slot per item, the answer's format); y[i,z]:
    item i in zone z, channelled to its row of x (zone rules read the short rows of y)."""

    def __init__(self, data: WarehouseData) -> None:
        super().__init__()
        self.data = d = data
        m = self.m
        self.x: dict[tuple[str, str], cp_model.IntVar] = {}
        self.y: dict[tuple[str, str], cp_model.IntVar] = {}
        self._zone_slots = {z.id: d.zone_slots(z.id) for z in d.zones}
        for i in d.items:
            for s in d.slots:
                self.x[i.id, s.id] = m.new_bool_var(f"x[{i.id},{s.id}]")
            m.add_exactly_one(self.x[i.id, s.id] for s in d.slots)  # the answer names one slot per item
            for z in d.zones:
                y = m.new_bool_var(f"y[{i.id},{z.id}]")
                m.add(y == cp_model.LinearExpr.sum([self.x[i.id, s.id] for s in self._zone_slots[z.id]]))
                self.y[i.id, z.id] = y
            m.add_exactly_one(self.y[i.id, z.id] for z in d.zones)  # redundant: tightens the relaxation
        self._aisle: dict[str, cp_model.LinearExpr] = {}
        self._empty: dict[str, cp_model.IntVar] = {}

    def in_zone(self, iid: str, zone: str) -> cp_model.IntVar:
        """1 when item ``iid`` is in ``zone``, else 0."""
        return self.y[iid, zone]

    def aisle(self, iid: str) -> cp_model.LinearExpr:
        """The aisle number of item ``iid``'s slot (read off its zone when zones are one aisle wide)."""
        if iid not in self._aisle:
            d = self.data
            aisles = {z.id: {s.aisle for s in self._zone_slots[z.id]} for z in d.zones}
            if all(len(a) == 1 for a in aisles.values()):
                self._aisle[iid] = cp_model.LinearExpr.weighted_sum(
                    [self.y[iid, z.id] for z in d.zones], [next(iter(aisles[z.id])) for z in d.zones]
                )
            else:
                self._aisle[iid] = cp_model.LinearExpr.weighted_sum(
                    [self.x[iid, s.id] for s in d.slots], [s.aisle for s in d.slots]
                )
        return self._aisle[iid]

    def count(self, sid: str) -> cp_model.LinearExpr:
        """How many items are in slot ``sid``."""
        return cp_model.LinearExpr.sum([self.x[i.id, sid] for i in self.data.items])

    def load(self, zone: str) -> cp_model.LinearExpr:
        d = self.data
        return cp_model.LinearExpr.weighted_sum([self.y[i.id, zone] for i in d.items], [i.weight for i in d.items])

    def forbid(self, iid: str, sid: str, lit: cp_model.IntVar) -> None:
        self.m.add_implication(lit, ~self.x[iid, sid])

    def empty(self, sid: str) -> cp_model.IntVar:
        """A Boolean that, when on, keeps slot ``sid`` empty."""
        if sid not in self._empty:
            e = self.m.new_bool_var(f"empty[{sid}]")
            self.m.add(self.count(sid) == 0).only_enforce_if(e)
            self._empty[sid] = e
        return self._empty[sid]


ENCODERS: KindRegistry[Encoder] = KindRegistry("encoder")
encoder = ENCODERS.register


@encoder("slot_exclusive")
def _slot_exclusive(tm: WarehouseModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for s in tm.data.slots:
        tm.post(tm.count(s.id) <= 1, lit)


@encoder("zone_capacity")
def _zone_capacity(tm: WarehouseModel, p: NoParams, lit: cp_model.IntVar) -> None:
    for z in tm.data.zones:
        tm.post(tm.load(z.id) <= z.max_load, lit)


@encoder("chilled")
def _chilled(tm: WarehouseModel, p: wh.Chilled, lit: cp_model.IntVar) -> None:
    for iid in p.items:
        for z in tm.data.zones:
            if z.temperature != "chilled":
                tm.m.add_implication(lit, ~tm.y[iid, z.id])


@encoder("heavy_low")
def _heavy_low(tm: WarehouseModel, p: wh.HeavyLow, lit: cp_model.IntVar) -> None:
    for i in tm.data.items:
        if i.weight >= p.min_weight:
            for s in tm.data.slots:
                if s.level > p.max_level:
                    tm.forbid(i.id, s.id, lit)


@encoder("reserved_slots")
def _reserved_slots(tm: WarehouseModel, p: wh.ReservedSlots, lit: cp_model.IntVar) -> None:
    for sid in p.slots:
        tm.post(tm.count(sid) == 0, lit)


@encoder("hazard_zone")
def _hazard_zone(tm: WarehouseModel, p: wh.HazardZone, lit: cp_model.IntVar) -> None:
    a, b = p.classes
    d = tm.data
    for x in d.of_class(a):
        for y in d.of_class(b):
            for z in d.zones:
                tm.post(tm.in_zone(x, z.id) + tm.in_zone(y, z.id) <= 1, lit)


@encoder("secure_zone")
def _secure_zone(tm: WarehouseModel, p: wh.SecureZone, lit: cp_model.IntVar) -> None:
    for iid in p.items:
        for z in tm.data.zones:
            if z.id != p.zone:
                tm.m.add_implication(lit, ~tm.y[iid, z.id])


@encoder("affinity")
def _affinity(tm: WarehouseModel, p: wh.Affinity, lit: cp_model.IntVar) -> None:
    for a, b in p.pairs:
        tm.post(tm.aisle(a) - tm.aisle(b) <= p.max_aisles, lit)
        tm.post(tm.aisle(b) - tm.aisle(a) <= p.max_aisles, lit)


@encoder("hazard_distance")
def _hazard_distance(tm: WarehouseModel, p: wh.HazardDistance, lit: cp_model.IntVar) -> None:
    """Per pair of items of the two classes, a free Boolean picks which one is further along."""
    a, b = p.classes
    d = tm.data
    for x in d.of_class(a):
        for y in d.of_class(b):
            later = tm.m.new_bool_var("")
            tm.m.add(tm.aisle(x) - tm.aisle(y) >= p.min_aisles).only_enforce_if([lit, later])
            tm.m.add(tm.aisle(y) - tm.aisle(x) >= p.min_aisles).only_enforce_if([lit, ~later])


@encoder("zone_pick_cap")
def _zone_pick_cap(tm: WarehouseModel, p: wh.ZonePickCap, lit: cp_model.IntVar) -> None:
    d = tm.data
    for z in d.zones:
        expr = cp_model.LinearExpr.weighted_sum([tm.in_zone(i.id, z.id) for i in d.items], [i.picks for i in d.items])
        tm.post(expr <= p.max, lit)


@encoder("fast_movers")
def _fast_movers(tm: WarehouseModel, p: wh.FastMovers, lit: cp_model.IntVar) -> None:
    for i in tm.data.items:
        if i.picks >= p.min_picks:
            for s in tm.data.slots:
                if s.distance > p.max_distance:
                    tm.forbid(i.id, s.id, lit)


@encoder("same_zone")
def _same_zone(tm: WarehouseModel, p: wh.SameZone, lit: cp_model.IntVar) -> None:
    for group in p.groups:
        for a, b in itertools.pairwise(group):
            for z in tm.data.zones:
                tm.post(tm.in_zone(a, z.id) == tm.in_zone(b, z.id), lit)


@encoder("load_threshold")
def _load_threshold(tm: WarehouseModel, p: wh.LoadThreshold, lit: cp_model.IntVar) -> None:
    """A free Boolean ``over`` (the zone's state): off, the load stays within the threshold;
    on, the zone's upper levels are empty."""
    over = tm.m.new_bool_var("")
    tm.m.add(tm.load(p.zone) <= p.threshold).only_enforce_if([lit, ~over])
    for s in tm.data.zone_slots(p.zone):
        if s.level >= p.level:
            tm.m.add(tm.count(s.id) == 0).only_enforce_if([lit, over])


@encoder("spare_slot")
def _spare_slot(tm: WarehouseModel, p: wh.SpareSlot, lit: cp_model.IntVar) -> None:
    for zid in p.zones:
        tm.post(cp_model.LinearExpr.sum([tm.empty(s.id) for s in tm.data.zone_slots(zid)]) >= 1, lit)


@encoder("slot_closed")
def _slot_closed(tm: WarehouseModel, p: wh.SlotClosed, lit: cp_model.IntVar) -> None:
    tm.post(tm.count(p.slot) == 0, lit)


def _objective(tm: WarehouseModel, term: ObjectiveTerm) -> tuple[cp_model.LinearExprT, int]:
    d = tm.data
    keys = [(i.id, s.id) for i in d.items for s in d.slots]
    xs = [tm.x[k] for k in keys]
    if term.kind == "pick_path":
        coef = [d.item_by_id[i].picks * d.slot_by_id[s].distance for i, s in keys]
        top = max(s.distance for s in d.slots)
        return cp_model.LinearExpr.weighted_sum(xs, coef), sum(i.picks for i in d.items) * top
    if term.kind == "lift_effort":
        coef = [d.item_by_id[i].weight * d.slot_by_id[s].level for i, s in keys]
        top = max(s.level for s in d.slots)
        return cp_model.LinearExpr.weighted_sum(xs, coef), sum(i.weight for i in d.items) * top
    if term.kind == "changes":
        old = wh.current_plan(term)
        moved = [1 - tm.x[i.id, old[i.id]] for i in d.items]
        return cp_model.LinearExpr.sum(moved), len(moved)
    raise ValueError(f"unknown objective kind {term.kind!r}")


def build(draft: Draft) -> SolverModel:
    data = parsed(WarehouseData, draft.data)
    tm = WarehouseModel(data)

    def decode(solver: cp_model.CpSolver) -> dict[str, Any]:
        rows = []
        for i in data.items:
            sid = next(s.id for s in data.slots if solver.value(tm.x[i.id, s.id]))
            rows.append({"item": i.id, "slot": sid})
        return {"slotting": rows}

    return solver_model(
        tm, draft, ENCODERS, wh.RULE_PARAMS, _objective, decode, list(tm.x.values()), [],
        parameters=PARAMETERS, uniqueness_parameters=UNIQUENESS_PARAMETERS,
    )  # fmt: skip


# -- sampling --------------------------------------------------------------------------
Witness = dict[str, str]  # item -> slot


def _layout(spec: GenerationSpec, rng: random.Random) -> tuple[list[Zone], list[Slot]]:
    """Zones of consecutive aisles; every bay of every aisle gets its own walking distance
    (increasing along the aisles and bays, away from the dock), shared by its levels."""
    s = SIZES.of(spec.size)
    sub = spec.subtask
    levels = min(LEVELS.get(sub, s.levels), s.levels + 1)
    per_aisle = max(1, s.bays - (levels > s.levels))  # taller racks, fewer bays: about as many slots
    n_aisles = s.zones * s.aisles_per_zone
    bays = n_aisles * per_aisle
    steps = [rng.randint(2, 9) for _ in range(bays)]
    dist, k = [], rng.randint(6, 14) * 2
    for step in steps:
        k += 2 * step
        dist.append(k)
    chilled = max(1, s.zones // 2 + (s.zones > 2)) if sub == "cold_chain" else 1
    cold = set(rng.sample(range(s.zones), chilled))
    ambient = iter(ZONE_NAMES[sub])
    chill = iter(CHILLED_NAMES[sub])
    zones = [
        Zone(id=f"Z{z + 1}", name=next(chill), temperature="chilled", max_load=0)
        if z in cold
        else Zone(id=f"Z{z + 1}", name=next(ambient), max_load=0)
        for z in range(s.zones)
    ]
    slots: list[Slot] = []
    for a in range(n_aisles):
        zone = zones[a // s.aisles_per_zone].id
        for b in range(per_aisle):
            for lv in range(levels):
                slots.append(
                    Slot(id=f"L{len(slots) + 1}", zone=zone, aisle=a + 1, level=lv, distance=dist[a * per_aisle + b])
                )
    return zones, slots


def _witness(items: list[Item], slots: list[Slot], zones: list[Zone], rng: random.Random) -> Witness:
    """A random placement in which, most of the time, each hazard class has a home zone (a
    store keeps a class together), so segregation rules drawn from it usually exist."""
    if not any(i.hazard for i in items) or rng.random() < 0.3:
        return {i.id: sl.id for i, sl in zip(items, rng.sample(slots, len(items)))}
    free = {z.id: [sl for sl in slots if sl.zone == z.id] for z in zones}
    for group in free.values():
        rng.shuffle(group)
    homes = [z.id for z in zones]
    rng.shuffle(homes)
    classes = sorted({i.hazard for i in items if i.hazard})
    rng.shuffle(classes)
    witness: Witness = {}
    for k, c in enumerate(classes):
        for i in items:
            if i.hazard == c:
                home = free[homes[k % len(homes)]] or next(g for g in free.values() if g)
                witness[i.id] = home.pop().id
    rest = [sl for z in homes for sl in free[z]]
    rng.shuffle(rest)
    for i in items:
        if i.id not in witness:
            witness[i.id] = rest.pop().id
    return witness


def _entities(spec: GenerationSpec, rng: random.Random) -> tuple[WarehouseData, Witness]:
    s = SIZES.of(spec.size)
    sub = spec.subtask
    zones, slots = _layout(spec, rng)
    lo, hi = WEIGHTS[sub]
    picks = rng.sample(range(s.picks.lo, s.picks.hi + 1), s.items)
    weights = rng.sample(range(lo, hi + 1), s.items)
    classes, share = HAZARDS[sub]
    hazards = [rng.choice(classes) if rng.random() < share else "" for _ in range(s.items)]
    if len({h for h in hazards if h}) < 2 and s.items >= 2:  # two classes at least, so segregation
        a, b = rng.sample(range(s.items), 2)  # rules always have something to separate
        hazards[a], hazards[b] = rng.sample(classes, 2)
    plain = rng.sample(ITEM_NAMES[sub], s.items)
    dangerous = {c: rng.sample(HAZARD_ITEMS[c], len(HAZARD_ITEMS[c])) for c in sorted(set(hazards) - {""})}
    names = [dangerous[h].pop() if h and dangerous[h] else plain[k] for k, h in enumerate(hazards)]
    items = [
        Item(id=f"I{k + 1}", name=names[k], picks=picks[k], weight=weights[k], hazard=hazards[k])
        for k in range(s.items)
    ]
    witness = _witness(items, slots, zones, rng)
    # the heaviest item on the floor in the witness (heavy goods low, as a store would place them)
    by_slot = {sid: iid for iid, sid in witness.items()}
    heavy = max(items, key=lambda i: i.weight)
    floor = [sl.id for sl in slots if sl.level == 0]
    slot_of = {sl.id: sl for sl in slots}
    if slot_of[witness[heavy.id]].level > 0:
        target = rng.choice(floor)
        other = by_slot.get(target)
        if other is not None:
            witness[other] = witness[heavy.id]
        witness[heavy.id] = target
    load = {z.id: 0 for z in zones}
    for i in items:
        load[slot_of[witness[i.id]].zone] += i.weight
    zones = [z.model_copy(update={"max_load": -(-(load[z.id] + rng.randint(0, hi // 3)) // 10) * 10}) for z in zones]
    data = WarehouseData(zones=tuple(zones), slots=tuple(slots), items=tuple(items))
    return data, witness


def _plan(w: Witness) -> Plan:
    return Plan(dict(w))


def _b_chilled(d: WarehouseData, w: Witness, rng: random.Random) -> wh.Chilled | None:
    cold = [i.id for i in d.items if d.zone_by_id[d.slot_by_id[w[i.id]].zone].temperature == "chilled"]
    fresh = [iid for iid in cold if not d.item_by_id[iid].hazard]  # food and drugs, not aerosols or batteries
    cold = fresh or cold
    if not cold:
        return None
    picked = rng.sample(cold, min(len(cold), rng.randint(1, 3)))
    return wh.Chilled(items=sorted(picked, key=lambda x: int(x[1:])))


def _b_heavy_low(d: WarehouseData, w: Witness, rng: random.Random) -> wh.HeavyLow | None:
    top = max(s.level for s in d.slots)
    if top == 0:
        return None
    max_level = rng.randint(0, top - 1)
    above = [i.weight for i in d.items if d.slot_by_id[w[i.id]].level > max_level]
    floor = max(above, default=0) + 1
    heaviest = max(i.weight for i in d.items)
    if floor > heaviest:
        return None
    lo = max(floor, sorted(i.weight for i in d.items)[len(d.items) // 2])  # about half the items or fewer
    return wh.HeavyLow(min_weight=rng.randint(min(lo, heaviest), heaviest), max_level=max_level)


def _b_reserved_slots(d: WarehouseData, w: Witness, rng: random.Random) -> wh.ReservedSlots | None:
    used = set(w.values())
    free = [s.id for s in d.slots if s.id not in used]
    if not free:
        return None
    picked = rng.sample(free, min(len(free), rng.randint(1, 2)))
    return wh.ReservedSlots(slots=sorted(picked, key=lambda x: int(x[1:])))


def _class_pairs(d: WarehouseData) -> list[tuple[str, str]]:
    present = [c for c in HAZARD_NAMES if d.of_class(c)]
    return [(a, b) for k, a in enumerate(present) for b in present[k + 1 :]]


def _b_hazard_zone(d: WarehouseData, w: Witness, rng: random.Random) -> wh.HazardZone | None:
    plan = _plan(w)
    ok = [
        (a, b)
        for a, b in _class_pairs(d)
        if not {wh.zone_of(d, plan, x) for x in d.of_class(a)} & {wh.zone_of(d, plan, y) for y in d.of_class(b)}
    ]
    return wh.HazardZone(classes=rng.choice(ok)) if ok else None


def _b_secure_zone(d: WarehouseData, w: Witness, rng: random.Random) -> wh.SecureZone | None:
    z = rng.choice(d.zones).id
    inside = [i.id for i in d.items if d.slot_by_id[w[i.id]].zone == z]
    if not inside:
        return None
    picked = rng.sample(inside, min(len(inside), rng.randint(1, 2)))
    return wh.SecureZone(items=sorted(picked, key=lambda x: int(x[1:])), zone=z)


def _b_affinity(d: WarehouseData, w: Witness, rng: random.Random) -> wh.Affinity | None:
    plan = _plan(w)
    ids = [i.id for i in d.items]
    pairs = [(a, b) for k, a in enumerate(ids) for b in ids[k + 1 :]]
    gap = {pr: abs(wh.aisle_of(d, plan, pr[0]) - wh.aisle_of(d, plan, pr[1])) for pr in pairs}
    limit = rng.choice((0, 0, 1))
    close = [pr for pr in pairs if gap[pr] <= limit]
    if not close:
        return None
    picked = sorted(
        rng.sample(close, min(len(close), rng.randint(1, 2))), key=lambda pr: (int(pr[0][1:]), int(pr[1][1:]))
    )
    return wh.Affinity(pairs=picked, max_aisles=max(gap[pr] for pr in picked))


def _b_hazard_distance(d: WarehouseData, w: Witness, rng: random.Random) -> wh.HazardDistance | None:
    plan = _plan(w)
    options = []
    for a, b in _class_pairs(d):
        gap = min(abs(wh.aisle_of(d, plan, x) - wh.aisle_of(d, plan, y)) for x in d.of_class(a) for y in d.of_class(b))
        if gap >= 1:
            options.append((a, b, gap))
    if not options:
        return None
    a, b, gap = rng.choice(options)
    return wh.HazardDistance(classes=(a, b), min_aisles=rng.randint(max(1, gap - 1), gap))


def _b_zone_pick_cap(d: WarehouseData, w: Witness, rng: random.Random) -> wh.ZonePickCap | None:
    peak = max(wh.zone_picks(d, _plan(w)).values())
    return wh.ZonePickCap(max=peak + rng.randint(0, 20))


def _b_fast_movers(d: WarehouseData, w: Witness, rng: random.Random) -> wh.FastMovers | None:
    ranked = sorted(d.items, key=lambda i: -i.picks)
    k = rng.randint(1, max(1, min(3, len(ranked) // 2)))
    fast = ranked[:k]
    far = max(d.slot_by_id[w[i.id]].distance for i in fast)
    return wh.FastMovers(min_picks=fast[-1].picks, max_distance=far)


def _b_same_zone(d: WarehouseData, w: Witness, rng: random.Random) -> wh.SameZone | None:
    by_zone: dict[str, list[str]] = {}
    for i in d.items:
        by_zone.setdefault(d.slot_by_id[w[i.id]].zone, []).append(i.id)
    groups = [g for g in by_zone.values() if len(g) >= 2]
    if not groups:
        return None
    g = rng.choice(groups)
    picked = rng.sample(g, min(len(g), rng.randint(2, 3)))
    return wh.SameZone(groups=[sorted(picked, key=lambda x: int(x[1:]))])


def _b_load_threshold(d: WarehouseData, w: Witness, rng: random.Random) -> wh.LoadThreshold | None:
    top = max(s.level for s in d.slots)
    if top == 0:
        return None
    z = rng.choice(d.zones).id
    level = rng.randint(1, top)
    kg = wh.loads(d, _plan(w))[z]
    upper_used = any(d.slot_by_id[w[i.id]].zone == z and d.slot_by_id[w[i.id]].level >= level for i in d.items)
    if upper_used:  # the witness keeps within the threshold (rounded up to 10 kg)
        threshold = -(-(kg + rng.randint(0, 50)) // 10) * 10
    else:  # the witness is over the threshold with its upper levels empty (rounded down to 10 kg)
        threshold = rng.randint(max(0, kg - 300), max(0, kg - 1)) // 10 * 10 if kg else 0
    return wh.LoadThreshold(zone=z, threshold=threshold, level=level)


BUILDERS = {
    "chilled": _b_chilled,
    "heavy_low": _b_heavy_low,
    "reserved_slots": _b_reserved_slots,
    "hazard_zone": _b_hazard_zone,
    "secure_zone": _b_secure_zone,
    "affinity": _b_affinity,
    "hazard_distance": _b_hazard_distance,
    "zone_pick_cap": _b_zone_pick_cap,
    "fast_movers": _b_fast_movers,
    "same_zone": _b_same_zone,
    "load_threshold": _b_load_threshold,
}


def _rules(spec: GenerationSpec, data: WarehouseData, witness: Witness, rng: random.Random) -> list[Rule]:
    sampled = sampled_kinds(spec, TASK.base_rules, FORCED[spec.subtask])
    tiers: dict[str, Tier] = {c.id: c.tier for c in TASK.pool}
    base: list[tuple[str, Tier, Params]] = [(k, tiers[k], NoParams()) for k in TASK.base_rules]
    return witness_rules(base, sampled, tiers, BUILDERS, data, witness, rng)


def draft(spec: GenerationSpec, rng: random.Random) -> Draft:
    data, witness = _entities(spec, rng)
    rules = _rules(spec, data, witness, rng)
    objective = [make_term(k, k) for k in OBJECTIVES]
    return Draft(spec=spec, data=data.model_dump(mode="json"), rules=rules, objective=objective)


# -- hard-tier hooks -------------------------------------------------------------------
def _slots(plan: dict[str, Any]) -> Witness:
    return {r["item"]: r["slot"] for r in plan["slotting"]}


def _optimal_plan(draft_: Draft, limits: SolverLimits) -> Witness | None:
    sm = build(draft_)
    weights = lexicographic_weights([ub for _, _, ub in sm.objective_terms])
    sm.model.minimize(sum(w * expr for w, (_, expr, _) in zip(weights, sm.objective_terms)))
    for lit in sm.rule_literals.values():
        sm.model.add(lit == 1)
    solver = make_solver(limits, presolve=True, optimise=True)
    if solver.solve(sm.model) != cp_model.OPTIMAL:
        return None
    return _slots(sm.decode(solver))


def make_infeasible(draft_: Draft, rng: random.Random, limits: SolverLimits) -> Draft | None:
    """Fast movers within a walking distance just below what the rules allow: for the k
    busiest items, bisection over the slots' distances from the farthest of them in the
    optimal plan down to the nearest slot finds the loosest infeasible distance. With one
    item per slot the conflict runs through the slots; a rule infeasible on its own is
    passed over."""
    d = WarehouseData.model_validate(draft_.data)
    position = insert_position(draft_.rules, TASK.base_rules, rng)
    probe = SolverLimits(deterministic_time=min(limits.deterministic_time, PROBE_TIME))
    feasible = lambda t: is_feasible(build(t), probe)  # noqa: E731
    best = _optimal_plan(draft_, probe)
    if best is None:
        return None
    ranked = sorted(d.items, key=lambda i: -i.picks)
    counts = list(range(1, min(4, len(ranked)) + 1))
    rng.shuffle(counts)
    for k in counts[:2]:
        fast = ranked[:k]
        far = max(d.slot_by_id[best[i.id]].distance for i in fast)
        dists = sorted({s.distance for s in d.slots if s.distance <= far}, reverse=True)  # loosest first

        def with_rule(dist: int, picks: int = fast[-1].picks) -> Draft:
            return with_conflict_rule(
                draft_, "fast_movers", wh.FastMovers(min_picks=picks, max_distance=dist), position
            )

        found = first_infeasible(dists, with_rule, feasible)
        if found is not None and not alone_infeasible(build, found, added_rule(found, position), probe):
            return found
    return None


def disruptions(draft_: Draft, plan: dict[str, Any], rng: random.Random) -> list[Rule]:
    """An occupied slot closed (a damaged beam): the plan breaks it."""
    used = sorted(set(_slots(plan).values()), key=lambda x: int(x[1:]))
    out = [make_rule("slot_closed", "hard", wh.SlotClosed(slot=s)) for s in used]
    rng.shuffle(out)
    return out


def existing(draft_: Draft, plan: dict[str, Any]) -> dict[str, str]:
    return _slots(plan)


def robust(draft_: Draft, rng: random.Random) -> tuple[Rule, list[ObjectiveTerm]] | None:
    """One empty slot kept in one zone, chosen so that the rule bites or is one move from
    biting: zones the optimal plan fills first (the rule changes the plan), then zones it
    leaves one slot empty; accepted when the optimal plan under the rule keeps exactly one
    slot of that zone empty, so a plan one move away can break it."""
    d = WarehouseData.model_validate(draft_.data)
    probe = SolverLimits(deterministic_time=PROBE_TIME)
    best = _optimal_plan(draft_, probe)
    if best is None:
        return None

    def empties(w: Witness, zone: str) -> int:
        used = set(w.values())
        return sum(1 for s in d.zone_slots(zone) if s.id not in used)

    named = [z.id for z in d.zones if len(d.zone_slots(z.id)) >= 2 and empties(best, z.id) <= 1]
    rng.shuffle(named)
    named.sort(key=lambda z: empties(best, z))
    for zid in named[:2]:
        rule = make_rule("spare_slot", "hard", wh.SpareSlot(zones=[zid]), f"R{len(draft_.rules) + 1}")
        after = _optimal_plan(Draft(draft_.spec, draft_.data, [*draft_.rules, rule], draft_.objective), probe)
        if after is not None and empties(after, zid) == 1:
            return rule, []
    return None


def uncertain(draft_: Draft, rng: random.Random) -> list[Uncertain]:
    """Item weights (worst: heavy; a heavier item never keeps a rule a lighter one breaks)
    and zone load limits (worst: low)."""
    d = WarehouseData.model_validate(draft_.data)
    heavier = [
        Uncertain(id="", kind="weight", target=i.id, low=i.weight, high=i.weight + rng.randint(1, 6) * 10)
        for i in d.items
    ]
    lower = [
        Uncertain(id="", kind="max_load", target=z.id, low=max(0, z.max_load - rng.randint(1, 4) * 50), high=z.max_load)
        for z in d.zones
        if z.max_load >= 50
    ]
    # two of each kind, alternating: the kit keeps three with at least one of each sort
    # (worst case costs / does not), and every candidate probed costs two optimisations
    picked = [rng.sample(heavier, min(2, len(heavier))), rng.sample(lower, min(2, len(lower)))]
    rng.shuffle(picked)
    return [u for pair in zip(*picked) for u in pair] + [u for group in picked for u in group[min(map(len, picked)) :]]


def with_value(data: dict[str, Any], u: Uncertain, value: int) -> dict[str, Any]:
    d = WarehouseData.model_validate(data)
    if u.kind == "max_load":
        zones = [z.model_copy(update={"max_load": value}) if z.id == u.target else z for z in d.zones]
        return {**data, "zones": [z.model_dump(mode="json") for z in zones]}
    items = [i.model_copy(update={"weight": value}) if i.id == u.target else i for i in d.items]
    return {**data, "items": [i.model_dump(mode="json") for i in items]}


def worst_is_low(u: Uncertain) -> bool:
    return u.kind == "max_load"


def report(draft_: Draft, plan: dict[str, Any]) -> dict[str, dict[str, int]]:
    d = WarehouseData.model_validate(draft_.data)
    p = _plan(_slots(plan))
    return {"zone_load": wh.loads(d, p), "zone_picks": wh.zone_picks(d, p)}


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
