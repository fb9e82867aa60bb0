"""Prompt text of Warehouse Planning: one sentence per rule kind and objective kind
(kilograms, metres, picks per week, aisles and levels stated in their units), and the
body of the prompt: the zones, the slots and the items (the closing sections are the
kit's)."""

from __future__ import annotations

from pbsolve.checkers.project import warehouse as wh
from pbsolve.checkers.project.warehouse import HAZARD_NAMES, WarehouseData
from pbsolve.params import NoParams
from pbsolve.render_kit import TaskText, and_list, plural, ranged
from pbsolve.schema import ObjectiveTerm, Rule

TEXT = TaskText(
    task=wh.TASK_ID,
    data_type=WarehouseData,
    rule_params=wh.RULE_PARAMS,
    term_params=wh.TERM_PARAMS,
    worst_case=(
        "the data's least favourable values are item weights at the high end and zone load limits at the low end; "
        "every figure you report (objective, verification) counts an uncertain weight at the top of its range"
    ),
    current="the current slotting",
)
CONTEXT = {
    "ecommerce": "an e-commerce fulfilment centre: pick faces of the catalogue's items, slotted by how often they are picked",
    "cold_chain": "a cold-chain warehouse with chilled rooms and an ambient store",
    "chemical_store": "a chemical store: most items carry a dangerous-goods hazard class",
    "spare_parts": "a spare-parts store: parts from a few kilograms to nearly a tonne, on racks of three levels",
    "cross_dock": "a cross-dock: pallets staged in lanes before they are loaded onto outbound trailers",
}
LAYOUT_NOTE = (
    "Aisles are numbered along the building: two slots on aisles a and b are |a − b| "
    "aisles apart. Rack levels count from 0 (floor level) upwards. A slot's walking distance is the metres a "
    "picker walks for one pick there (dock to slot and back); all slots of one bay share it."
)


def _kg(d: WarehouseData, kind: str, target: str, value: int, what: str) -> str:
    """'load limit 350 kg', or 'load limit (kg) 320–350 (uncertain input U2)' for an uncertain input."""
    text = ranged(d, kind, target, value)
    return f"{what} (kg) {text}" if "uncertain input" in text else f"{what} {text} kg"


def _klass(c: str) -> str:
    return f"class {c} ({HAZARD_NAMES[c]})"


@TEXT.rule("slot_exclusive")
def _slot_exclusive(d: WarehouseData, p: NoParams) -> str:
    return "Every slot holds at most one item."


@TEXT.rule("zone_capacity")
def _zone_capacity(d: WarehouseData, p: NoParams) -> str:
    return "In every zone, the weights of the items stored there sum to at most the zone's load limit (kg)."


@TEXT.rule("chilled")
def _chilled(d: WarehouseData, p: wh.Chilled) -> str:
    cold = [z.id for z in d.zones if z.temperature == "chilled"]
    verb = "are" if len(p.items) > 1 else "is"
    return f"{and_list(p.items)} {verb} temperature-sensitive: stored only in a chilled zone ({and_list(cold)})."


@TEXT.rule("heavy_low")
def _heavy_low(d: WarehouseData, p: wh.HeavyLow) -> str:
    where = "on level 0 (floor level)" if p.max_level == 0 else f"on a level from 0 to {p.max_level}"
    return f"Heavy goods low: every item weighing {p.min_weight} kg or more is stored {where}."


@TEXT.rule("reserved_slots")
def _reserved(d: WarehouseData, p: wh.ReservedSlots) -> str:
    if len(p.slots) == 1:
        return f"Slot {p.slots[0]} is reserved for returns and stays empty."
    return f"Slots {and_list(p.slots)} are reserved for returns and stay empty."


@TEXT.rule("hazard_zone")
def _hazard_zone(d: WarehouseData, p: wh.HazardZone) -> str:
    a, b = p.classes
    return (
        f"Segregation: no zone holds both an item of hazard {_klass(a)} and an item of hazard {_klass(b)} "
        f"({and_list(d.of_class(a))} against {and_list(d.of_class(b))})."
    )


@TEXT.rule("secure_zone")
def _secure(d: WarehouseData, p: wh.SecureZone) -> str:
    verb = "are" if len(p.items) > 1 else "is"
    return f"{and_list(p.items)} {verb} high-value: stored only in zone {p.zone} (the secure zone)."


@TEXT.rule("affinity")
def _affinity(d: WarehouseData, p: wh.Affinity) -> str:
    pairs = "; ".join(f"{a} and {b}" for a, b in p.pairs)
    if p.max_aisles == 0:
        return f"Items picked together are stored on the same aisle: {pairs}."
    return f"Items picked together are stored at most {plural(p.max_aisles, 'aisle')} apart: {pairs}."


@TEXT.rule("hazard_distance")
def _hazard_distance(d: WarehouseData, p: wh.HazardDistance) -> str:
    a, b = p.classes
    return (
        f"Separation distance: every item of hazard {_klass(a)} ({and_list(d.of_class(a))}) is stored at least "
        f"{plural(p.min_aisles, 'aisle')} apart from every item of hazard {_klass(b)} ({and_list(d.of_class(b))})."
    )


@TEXT.rule("zone_pick_cap")
def _pick_cap(d: WarehouseData, p: wh.ZonePickCap) -> str:
    return f"Picker congestion: in every zone, the picks per week of the items stored there sum to at most {p.max}."


@TEXT.rule("fast_movers")
def _fast(d: WarehouseData, p: wh.FastMovers) -> str:
    return (
        f"Fast movers near the dock: every item with {p.min_picks} or more picks per week is stored in a slot "
        f"whose walking distance is at most {p.max_distance} m."
    )


@TEXT.rule("same_zone")
def _same_zone(d: WarehouseData, p: wh.SameZone) -> str:
    groups = "; ".join(and_list(g) for g in p.groups)
    return f"These items leave on one trailer and are all stored in one zone (the same zone for the group): {groups}."


@TEXT.rule("load_threshold")
def _load_threshold(d: WarehouseData, p: wh.LoadThreshold) -> str:
    return (
        f"Derating: if the items stored in zone {p.zone} weigh more than {p.threshold} kg in total, every slot of "
        f"zone {p.zone} on level {p.level} or above stays empty (at {p.threshold} kg or less, no such limit)."
    )


@TEXT.rule("spare_slot")
def _spare(d: WarehouseData, p: wh.SpareSlot) -> str:
    where = f"zone {p.zones[0]}" if len(p.zones) == 1 else f"each of zones {and_list(p.zones)}"
    return (
        f"Robustness: any single slot may be damaged, so {where} keeps at least one slot empty (its goods could "
        "then move within their zone)."
    )


@TEXT.rule("slot_closed")
def _closed(d: WarehouseData, p: wh.SlotClosed) -> str:
    return f"Slot {p.slot} is out of service (a damaged beam) and stays empty."


@TEXT.objective("pick_path")
def _pick_path(d: WarehouseData, p: NoParams) -> str:
    return (
        "the pick path in metres walked per week: each item's picks per week × the walking distance (m) of its "
        "slot; summed over items"
    )


@TEXT.objective("lift_effort")
def _lift(d: WarehouseData, p: NoParams) -> str:
    return "the lifting effort in kg-levels (heavier goods lower): each item's weight (kg) × its slot's level; summed over items"


@TEXT.objective("changes")
def _changes(d: WarehouseData, p: wh.CurrentSlots) -> str:
    return "the number of items whose slot differs from the current slotting (each moved item counts 1)"


def _disrupted(rules: list[Rule]) -> str:
    ids = [r.id for r in rules if r.kind == "slot_closed"]
    return f"the closure in {and_list(ids)}, which it breaks" if ids else "the disruption among the rules"


@TEXT.body
def _body(d: WarehouseData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    hazards = any(i.hazard for i in d.items)
    out = [
        f"You are slotting {CONTEXT.get(subtask, 'a warehouse')}. Give every item one storage slot.",
        LAYOUT_NOTE,
        "",
        "**Zones:**",
    ]
    for z in d.zones:
        temp = "chilled" if z.temperature == "chilled" else "ambient"
        aisles = sorted({s.aisle for s in d.zone_slots(z.id)})
        out.append(
            f"- {z.id} {z.name} — {temp} — aisle{'s' if len(aisles) > 1 else ''} {and_list([str(a) for a in aisles])} "
            f"— {_kg(d, 'max_load', z.id, z.max_load, 'load limit')}"
        )
    out += ["", "**Slots** (zone, aisle, level, walking distance per pick):"]
    for s in d.slots:
        out.append(f"- {s.id}: zone {s.zone}, aisle {s.aisle}, level {s.level}, {s.distance} m")
    out += [
        "",
        "**Items** (picks per week; weight: the kg of the item's stock held in its slot"
        + ("; hazard class" if hazards else "")
        + "):",
    ]
    for i in d.items:
        parts = [f"{i.id} {i.name}", f"{i.picks} picks per week", _kg(d, "weight", i.id, i.weight, "weight")]
        if i.hazard:
            parts.append(f"hazard {_klass(i.hazard)}")
        out.append("- " + " — ".join(parts))
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current slotting** (made before {_disrupted(rules)}; move as few items as you can):"]
        out += [f"- {iid}: slot {sid}" for iid, sid in wh.current_plan(changes).items()]
    return out


@TEXT.verification
def _verification(d: WarehouseData) -> str:
    return (
        "under `verification`, report from your plan `zone_load` (for every zone, the total weight in kg of the "
        "items stored in it) and `zone_picks` (for every zone, the total picks per week of the items stored in it)."
    )
