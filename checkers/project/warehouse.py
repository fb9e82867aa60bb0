"""Checks for Warehouse Planning answers (slotting): every item (a SKU's pick face, a
pallet) gets one storage slot; zones have weight limits and temperatures, slots a
walking distance from the dock, an aisle and a rack level, and the rules keep hazard
classes apart, heavy goods low, chilled goods cold and related items close.

This module is the grader's second implementation of every rule: it holds the task's
data model and the parameter model of each rule and objective kind (read by the solver
encoder, this checker and the prompt sentence alike), and never imports the solver
models. Every figure is recomputed from the plan in plain Python integers: an item in
slot s adds its weight to the load of s's zone and its picks per week x s's walking
distance to the pick-path metres.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from pbsolve.checker_kit import OK, PlanChecker, lookup, row_names
from pbsolve.checking import Check, figures_schema
from pbsolve.kit import KindRegistry, Uncertain
from pbsolve.mechanisms.base import Verdict
from pbsolve.params import Names, NoParams, Params, ParamsTable, as_model, parse, problem, self_paired
from pbsolve.schema import Instance, ObjectiveTerm, Rule

TASK_ID = "warehouse_planning"

# Hazard classes (UN dangerous-goods classes) an item may carry, with their names.
HAZARD_NAMES: dict[str, str] = {
    "2.1": "flammable gases (aerosols)",
    "3": "flammable liquids",
    "5.1": "oxidisers",
    "6.1": "toxic substances",
    "8": "corrosives",
    "9": "lithium batteries",
}


# -- data ------------------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Zone(_Frozen):
    """A storage zone: its racks carry at most ``max_load`` kg in all; ``chilled`` zones are
    temperature-controlled."""

    id: str
    name: str
    temperature: Literal["ambient", "chilled"] = "ambient"
    max_load: NonNegativeInt = Field(description="kg the zone's racks carry at most, all its slots together")


class Slot(_Frozen):
    """One storage position: in a zone, on an aisle (aisles are numbered along the building,
    so |a - b| is how many aisles apart two slots are) and a rack level (0 = floor)."""

    id: str
    zone: str
    aisle: PositiveInt
    level: NonNegativeInt
    distance: PositiveInt = Field(description="metres walked per pick: dock to slot and back")


class Item(_Frozen):
    id: str
    name: str
    picks: PositiveInt = Field(description="picks (visits) per week")
    weight: PositiveInt = Field(description="kg")
    hazard: str = Field(default="", description="hazard class ('' for none)")


class WarehouseData(BaseModel):
    """One warehouse: every number a rule or the objective reads is here. There are at
    least as many slots as items."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    zones: tuple[Zone, ...]
    slots: tuple[Slot, ...]
    items: tuple[Item, ...]
    uncertain: tuple[Uncertain, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> WarehouseData:
        """Malformed data is a clear error: unknown or repeated ids, a slot in an unknown
        zone, an unknown hazard class, fewer slots than items."""
        for what, ids in (
            ("zone", [z.id for z in self.zones]),
            ("slot", [s.id for s in self.slots]),
            ("item", [i.id for i in self.items]),
        ):
            if len(set(ids)) != len(ids):
                raise ValueError(f"repeated {what} id")
        if not self.items:
            raise ValueError("a warehouse plan needs at least one item")
        if len(self.slots) < len(self.items):
            raise ValueError(f"{len(self.items)} items but only {len(self.slots)} slots")
        zones = {z.id for z in self.zones}
        for s in self.slots:
            if s.zone not in zones:
                raise ValueError(f"slot {s.id} is in unknown zone {s.zone}")
        for i in self.items:
            if i.hazard and i.hazard not in HAZARD_NAMES:
                raise ValueError(f"item {i.id} has unknown hazard class {i.hazard!r}")
        return self

    @cached_property
    def zone_by_id(self) -> dict[str, Zone]:
        return {z.id: z for z in self.zones}

    @cached_property
    def slot_by_id(self) -> dict[str, Slot]:
        return {s.id: s for s in self.slots}

    @cached_property
    def item_by_id(self) -> dict[str, Item]:
        return {i.id: i for i in self.items}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``);
        a hazard class is one some item carries (a rule about another would hold of nothing)."""
        if what == "hazard class":
            return {i.hazard for i in self.items if i.hazard}
        names: dict[str, Container[str]] = {"item": self.item_by_id, "slot": self.slot_by_id, "zone": self.zone_by_id}
        return names[what]

    def zone_slots(self, zone: str) -> list[Slot]:
        return [s for s in self.slots if s.zone == zone]

    def of_class(self, hazard: str) -> list[str]:
        """The ids of the items of one hazard class."""
        return [i.id for i in self.items if i.hazard == hazard]


def replaced(d: WarehouseData, **changes: Any) -> WarehouseData:
    """``d`` with fields replaced, as a new validated object."""
    return WarehouseData.model_validate({**{f: getattr(d, f) for f in WarehouseData.model_fields}, **changes})


# -- parameters ------------------------------------------------------------------------
ItemName = Annotated[str, Names("item")]
SlotName = Annotated[str, Names("slot")]
ZoneName = Annotated[str, Names("zone")]
HazardClass = Annotated[str, Names("hazard class")]


class Chilled(Params):
    """Each listed item is stored in a chilled zone."""

    items: list[ItemName]


class HeavyLow(Params):
    """Every item weighing ``min_weight`` kg or more is on a level from 0 to ``max_level``."""

    min_weight: PositiveInt
    max_level: NonNegativeInt


class ReservedSlots(Params):
    """The listed slots stay empty (reserved for returns, inbound overflow)."""

    slots: list[SlotName]


class HazardZone(Params):
    """No zone holds both an item of the first and an item of the second hazard class."""

    classes: tuple[HazardClass, HazardClass]


class SecureZone(Params):
    """Each listed item (high value) is stored in ``zone`` (the secure cage)."""

    items: list[ItemName]
    zone: ZoneName


class Affinity(Params):
    """The two items of each pair (picked together) are at most ``max_aisles`` aisles apart."""

    pairs: list[tuple[ItemName, ItemName]]
    max_aisles: NonNegativeInt

    def data_problems(self, data: Any) -> list[str]:
        """Also: two different items per pair (an item is 0 aisles from itself)."""
        found = super().data_problems(data)
        return found + self_paired(self.pairs, "items")


class HazardDistance(Params):
    """Every item of the first class is at least ``min_aisles`` aisles from every item of the second."""

    classes: tuple[HazardClass, HazardClass]
    min_aisles: PositiveInt


class ZonePickCap(Params):
    """The picks per week of the items in any one zone sum to at most ``max`` (picker congestion)."""

    max: NonNegativeInt


class FastMovers(Params):
    """Every item with at least ``min_picks`` picks per week is in a slot at most ``max_distance`` metres."""

    min_picks: PositiveInt
    max_distance: PositiveInt


class SameZone(Params):
    """The items of each group (one outbound trailer, one kit) are all in one zone."""

    groups: list[list[ItemName]]


class LoadThreshold(Params):
    """Once the items in ``zone`` weigh more than ``threshold`` kg, its slots on level ``level``
    and above must be empty (the racking's upper beams are derated under a heavy load)."""

    zone: ZoneName
    threshold: NonNegativeInt
    level: PositiveInt


class SpareSlot(Params):
    """Robustness: each listed zone keeps at least one slot empty, so the goods of any single
    damaged slot can be moved within their zone."""

    zones: list[ZoneName]


class SlotClosed(Params):
    """The slot is out of service (a damaged beam): it stays empty."""

    slot: SlotName


class CurrentSlots(Params):
    """The current plan a ``changes`` term counts against: item -> slot."""

    existing: dict[ItemName, SlotName]

    def data_problems(self, data: Any) -> list[str]:
        """Also: the plan covers every item (the ``changes`` figure compares each item's slot)."""
        found = super().data_problems(data)
        missing = [x for x in data.item_by_id if x not in self.existing]
        return found + problem("the current plan has no slot for item", missing)


RULE_PARAMS: ParamsTable = {
    "slot_exclusive": NoParams,
    "zone_capacity": NoParams,
    "chilled": Chilled,
    "heavy_low": HeavyLow,
    "reserved_slots": ReservedSlots,
    "hazard_zone": HazardZone,
    "secure_zone": SecureZone,
    "affinity": Affinity,
    "hazard_distance": HazardDistance,
    "zone_pick_cap": ZonePickCap,
    "fast_movers": FastMovers,
    "same_zone": SameZone,
    "load_threshold": LoadThreshold,
    "spare_slot": SpareSlot,
    "slot_closed": SlotClosed,
}
TERM_PARAMS: ParamsTable = {
    "pick_path": NoParams,
    "lift_effort": NoParams,
    "changes": CurrentSlots,
}


def current_plan(changes: ObjectiveTerm) -> dict[str, str]:
    """The current plan of a ``changes`` term (item -> slot)."""
    return as_model(parse(TERM_PARAMS, changes), CurrentSlots).existing


# -- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    slot: dict[str, str]  # item -> slot


def zone_of(d: WarehouseData, plan: Plan, item: str) -> str:
    return d.slot_by_id[plan.slot[item]].zone


def aisle_of(d: WarehouseData, plan: Plan, item: str) -> int:
    return d.slot_by_id[plan.slot[item]].aisle


def loads(d: WarehouseData, plan: Plan) -> dict[str, int]:
    """Zone id -> kg of the items stored in it."""
    out = {z.id: 0 for z in d.zones}
    for i in d.items:
        out[zone_of(d, plan, i.id)] += i.weight
    return out


def zone_picks(d: WarehouseData, plan: Plan) -> dict[str, int]:
    """Zone id -> picks per week of the items stored in it."""
    out = {z.id: 0 for z in d.zones}
    for i in d.items:
        out[zone_of(d, plan, i.id)] += i.picks
    return out


def occupants(d: WarehouseData, plan: Plan) -> dict[str, list[str]]:
    """Slot id -> the items placed in it (in item order)."""
    out: dict[str, list[str]] = {s.id: [] for s in d.slots}
    for i in d.items:
        out[plan.slot[i.id]].append(i.id)
    return out


CHECKS: KindRegistry[Check] = KindRegistry("check")
check = CHECKS.register


def _empty(d: WarehouseData, plan: Plan, slots: list[str], why: str) -> Verdict:
    used = occupants(d, plan)
    for s in slots:
        if used[s]:
            return False, f"{', '.join(used[s])} {'is' if len(used[s]) == 1 else 'are'} in slot {s}, which {why}"
    return OK


# -- rule checks -----------------------------------------------------------------------
@check("slot_exclusive")
def _slot_exclusive(d: WarehouseData, plan: Plan, p: NoParams) -> Verdict:
    for s, items in occupants(d, plan).items():
        if len(items) > 1:
            return False, f"slot {s} holds {len(items)} items ({', '.join(items)}); a slot holds at most one"
    return OK


@check("zone_capacity")
def _zone_capacity(d: WarehouseData, plan: Plan, p: NoParams) -> Verdict:
    for zid, kg in loads(d, plan).items():
        cap = d.zone_by_id[zid].max_load
        if kg > cap:
            return False, f"zone {zid} holds {kg} kg (at most {cap} kg)"
    return OK


@check("chilled")
def _chilled(d: WarehouseData, plan: Plan, p: Chilled) -> Verdict:
    for iid in p.items:
        z = zone_of(d, plan, iid)
        if d.zone_by_id[z].temperature != "chilled":
            return False, f"{iid} is in slot {plan.slot[iid]} of zone {z}, which is not chilled"
    return OK


@check("heavy_low")
def _heavy_low(d: WarehouseData, plan: Plan, p: HeavyLow) -> Verdict:
    for i in d.items:
        level = d.slot_by_id[plan.slot[i.id]].level
        if i.weight >= p.min_weight and level > p.max_level:
            return False, f"{i.id} weighs {i.weight} kg and is on level {level} (at most level {p.max_level})"
    return OK


@check("reserved_slots")
def _reserved_slots(d: WarehouseData, plan: Plan, p: ReservedSlots) -> Verdict:
    return _empty(d, plan, p.slots, "is reserved")


@check("hazard_zone")
def _hazard_zone(d: WarehouseData, plan: Plan, p: HazardZone) -> Verdict:
    a, b = p.classes
    for x in d.of_class(a):
        for y in d.of_class(b):
            if zone_of(d, plan, x) == zone_of(d, plan, y):
                return False, f"{x} (class {a}) and {y} (class {b}) are both in zone {zone_of(d, plan, x)}"
    return OK


@check("secure_zone")
def _secure_zone(d: WarehouseData, plan: Plan, p: SecureZone) -> Verdict:
    for iid in p.items:
        z = zone_of(d, plan, iid)
        if z != p.zone:
            return False, f"{iid} is in zone {z}, not in the secure zone {p.zone}"
    return OK


@check("affinity")
def _affinity(d: WarehouseData, plan: Plan, p: Affinity) -> Verdict:
    for a, b in p.pairs:
        gap = abs(aisle_of(d, plan, a) - aisle_of(d, plan, b))
        if gap > p.max_aisles:
            return (
                False,
                f"{a} (aisle {aisle_of(d, plan, a)}) and {b} (aisle {aisle_of(d, plan, b)}) are {gap} aisles apart (at most {p.max_aisles})",
            )
    return OK


@check("hazard_distance")
def _hazard_distance(d: WarehouseData, plan: Plan, p: HazardDistance) -> Verdict:
    a, b = p.classes
    for x in d.of_class(a):
        for y in d.of_class(b):
            gap = abs(aisle_of(d, plan, x) - aisle_of(d, plan, y))
            if gap < p.min_aisles:
                return False, f"{x} (class {a}) and {y} (class {b}) are {gap} aisles apart (at least {p.min_aisles})"
    return OK


@check("zone_pick_cap")
def _zone_pick_cap(d: WarehouseData, plan: Plan, p: ZonePickCap) -> Verdict:
    for zid, picks in zone_picks(d, plan).items():
        if picks > p.max:
            return False, f"the items in zone {zid} take {picks} picks per week (at most {p.max})"
    return OK


@check("fast_movers")
def _fast_movers(d: WarehouseData, plan: Plan, p: FastMovers) -> Verdict:
    for i in d.items:
        dist = d.slot_by_id[plan.slot[i.id]].distance
        if i.picks >= p.min_picks and dist > p.max_distance:
            return False, f"{i.id} ({i.picks} picks per week) is in a slot {dist} m away (at most {p.max_distance} m)"
    return OK


@check("same_zone")
def _same_zone(d: WarehouseData, plan: Plan, p: SameZone) -> Verdict:
    for group in p.groups:
        zones = {zone_of(d, plan, x) for x in group}
        if len(zones) > 1:
            return False, f"the group {', '.join(group)} is spread over zones {', '.join(sorted(zones))}"
    return OK


@check("load_threshold")
def _load_threshold(d: WarehouseData, plan: Plan, p: LoadThreshold) -> Verdict:
    """Computes the zone's load (its state); only above the threshold do the upper levels matter."""
    kg = loads(d, plan)[p.zone]
    if kg <= p.threshold:
        return OK
    upper = [s.id for s in d.zone_slots(p.zone) if s.level >= p.level]
    return _empty(
        d, plan, upper, f"is on level {p.level} or above while zone {p.zone} holds {kg} kg (over {p.threshold} kg)"
    )


@check("spare_slot")
def _spare_slot(d: WarehouseData, plan: Plan, p: SpareSlot) -> Verdict:
    used = occupants(d, plan)
    for zid in p.zones:
        if all(used[s.id] for s in d.zone_slots(zid)):
            return False, f"zone {zid} has no empty slot: a damaged slot's goods could not be moved within it"
    return OK


@check("slot_closed")
def _slot_closed(d: WarehouseData, plan: Plan, p: SlotClosed) -> Verdict:
    return _empty(d, plan, [p.slot], "is out of service")


# -- objective -------------------------------------------------------------------------
def pick_path(d: WarehouseData, plan: Plan) -> int:
    """Metres walked per week: each item's picks per week x its slot's walking distance."""
    return sum(i.picks * d.slot_by_id[plan.slot[i.id]].distance for i in d.items)


def lift_effort(d: WarehouseData, plan: Plan) -> int:
    """Kg-levels: each item's weight x its slot's level."""
    return sum(i.weight * d.slot_by_id[plan.slot[i.id]].level for i in d.items)


def objective_value(d: WarehouseData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
    if term.kind == "pick_path":
        return pick_path(d, plan)
    if term.kind == "lift_effort":
        return lift_effort(d, plan)
    if term.kind == "changes":
        old = as_model(tp, CurrentSlots).existing
        return sum(1 for i in d.items if plan.slot[i.id] != old[i.id])
    raise ValueError(f"unknown objective kind {term.kind!r}")


def neighbours(d: WarehouseData, plan: Plan) -> Iterator[Plan]:
    """Plans one move from ``plan``: one item moved to another slot, or two items swapped."""
    for i in d.items:
        for s in d.slots:
            if s.id != plan.slot[i.id]:
                yield Plan({**plan.slot, i.id: s.id})
    items = d.items
    for k, a in enumerate(items):
        for b in items[k + 1 :]:
            if plan.slot[a.id] != plan.slot[b.id]:
                yield Plan({**plan.slot, a.id: plan.slot[b.id], b.id: plan.slot[a.id]})


# -- the task checker ------------------------------------------------------------------
class WarehousePlanning(PlanChecker):
    family = "project"
    task = TASK_ID
    plan_key = "slotting"
    plan_text = "a list naming every item exactly once with the slot it is stored in"
    data_type = WarehouseData
    checks = CHECKS
    rule_params = RULE_PARAMS
    term_params = TERM_PARAMS

    def lookups(self, d: WarehouseData) -> dict[str, Any]:
        return {"item": lookup([i.id for i in d.items]), "slot": lookup([s.id for s in d.slots])}

    def read_plan(
        self, d: WarehouseData, section: dict[str, Any], lk: Any, rules: list[Rule]
    ) -> tuple[Plan | None, str]:
        rows = section.get("slotting") if isinstance(section, dict) else None
        if not isinstance(rows, list):
            return None, "'slotting' is missing or not a list"
        slot: dict[str, str] = {}
        fields = {"item": lk["item"], "slot": lk["slot"]}
        ex_item, ex_slot = lk["item"].exact, lk["slot"].exact
        for k, row in enumerate(rows):
            try:  # the usual row, each name as the instance spells it: row_names' answer, read inline
                if type(row) is not dict:
                    raise TypeError
                iid, sid = ex_item[row["item"]], ex_slot[row["slot"]]
            except (KeyError, TypeError):
                names, why = row_names(row, k, "row", fields)
                if names is None:
                    return None, why
                iid, sid = names
            if iid in slot:
                return None, f"item {iid} appears more than once"
            slot[iid] = sid
        missing = [i.id for i in d.items if i.id not in slot]
        if missing:
            return None, f"items missing from the slotting: {', '.join(missing)}"
        return Plan(slot), "complete plan"

    def objective_value(self, d: WarehouseData, plan: Plan, term: ObjectiveTerm, tp: Params) -> int:
        return objective_value(d, plan, term, tp)

    def verification(self, d: WarehouseData, plan: Plan) -> dict[str, dict[str, int]]:
        return {"zone_load": loads(d, plan), "zone_picks": zone_picks(d, plan)}

    def existing(self, d: WarehouseData, plan: Plan) -> dict[str, str]:
        return dict(plan.slot)

    def plan_schema(self, d: WarehouseData, mechanisms: list[str], rules: list[Rule]) -> dict[str, Any]:
        row = {
            "type": "object",
            "properties": {"item": {"enum": [i.id for i in d.items]}, "slot": {"enum": [s.id for s in d.slots]}},
            "required": ["item", "slot"],
        }
        return {"type": "array", "items": row, "description": "every item exactly once, with its slot"}

    def verification_schema(self, d: WarehouseData) -> dict[str, Any]:
        zones = [z.id for z in d.zones]
        return figures_schema({
            "zone_load": (zones, "for each zone, the total weight in kg of the items stored in it"),
            "zone_picks": (zones, "for each zone, the total picks per week of the items stored in it"),
        })  # fmt: skip

    def plan_json(self, d: WarehouseData, plan: Plan) -> list[dict[str, Any]]:
        return [{"item": i.id, "slot": plan.slot[i.id]} for i in d.items]

    def neighbours(self, data: WarehouseData, plan: Plan) -> Iterator[Plan]:
        """One move from ``plan`` (see :func:`neighbours`), for the kit's near misses."""
        return neighbours(data, plan)

    def baseline_plan(self, d: WarehouseData, instance: Instance) -> Plan:
        """Turnover slotting, the textbook heuristic: items by picks per week (most first),
        each into the nearest free slot of a zone that still carries its weight. Blind to
        every rule but the slots and the zones' weight limits, and to the lifting term."""
        free = sorted(d.slots, key=lambda s: (s.distance, s.level, s.id))
        load = {z.id: 0 for z in d.zones}
        slot: dict[str, str] = {}
        for i in sorted(d.items, key=lambda i: (-i.picks, i.id)):
            fits = [s for s in free if load[s.zone] + i.weight <= d.zone_by_id[s.zone].max_load]
            s = (fits or free)[0]
            free.remove(s)
            load[s.zone] += i.weight
            slot[i.id] = s.id
        return Plan(slot)


TASK = WarehousePlanning()
