"""Template prompts for the Allocation & Matching family.

Every fact is stated once, rules carry their stable ids, and the objective with its
tie-break order is explicit. The answer-format section is appended by the core from the
answer schema. One section per task type: its sentences (one per rule kind), its
objective sentences and the body of its prompt; the closing sections (rules, objective,
recovery, explanation, uncertainty, verification) are shared.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from pbsolve.checkers.allocation.data import EducationData, GroupingData, MaterialData, ProcurementData
from pbsolve.checkers.allocation.rule_params import (
    RULE_PARAMS,
    TERM_PARAMS,
    Apart,
    Continuity,
    ContractMinimum,
    CurrentGroups,
    CurrentLessons,
    CurrentOrders,
    CurrentShipments,
    DailyLoad,
    DepotThroughput,
    Diversity,
    DockCapacity,
    DropoutRobust,
    DualSourcing,
    FillGap,
    GroupSize,
    KitPool,
    LeaderFloor,
    LoadBalance,
    LotCap,
    Mentor,
    MinGuarantee,
    MinLoad,
    MinOrder,
    MinShipment,
    NoParams,
    OrderGap,
    PeriodBudget,
    PriorityOrder,
    RoomClosed,
    RouteClosed,
    SafetyStock,
    SameRoom,
    ShareCap,
    ShelfLife,
    SingleSource,
    SingleSourcing,
    SiteIntake,
    SkillBalance,
    SkillFloor,
    StockTarget,
    StorageCap,
    SupplierClosed,
    SupplierShare,
    TeacherAbsent,
    TeacherGap,
    TeacherLoad,
    Together,
    TrackCap,
    TransportBudget,
    TruckCapacity,
    WishGuarantee,
    current_plan,
)
from pbsolve.mechanisms import PromptContext, prompt_sections
from pbsolve.params import parse
from pbsolve.schema import ObjectiveTerm, Recovery, Rule

Sentence = Callable[[Any, Any], str]  # (task data, the item's Params model) -> text
SENTENCES: dict[str, dict[str, Sentence]] = {
    "procurement_planning": {},
    "material_allocation": {},
    "educational_resource_planning": {},
    "student_grouping": {},
}
DATA_TYPES: dict[str, type[ProcurementData | MaterialData | EducationData | GroupingData]] = {
    "procurement_planning": ProcurementData,
    "material_allocation": MaterialData,
    "educational_resource_planning": EducationData,
    "student_grouping": GroupingData,
}


def sentence(task: str, kind: str) -> Callable[[Sentence], Sentence]:
    def register(fn: Sentence) -> Sentence:
        SENTENCES[task][kind] = fn
        return fn

    return register


def sentence_kinds(task: str) -> frozenset[str]:
    """The rule kinds ``render_rule`` has a sentence for in ``task`` (the family contract)."""
    return frozenset(SENTENCES[task])


def _join(items: list[str]) -> str:
    items = [str(x) for x in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


ROBUST_KINDS = frozenset({"teacher_backup", "dropout_robust", "depot_failure", "delay_robust"})


def _disrupted(rules: list[Rule]) -> str:
    """'the disruption in R6' -- the hard-tier rule that is not a robustness rule is the
    disruption of a minimum-change replanning instance; the header names it."""
    ids = [r.id for r in rules if r.tier == "hard" and r.kind not in ROBUST_KINDS]
    return (
        f"the disruption in {_join(ids)}, which it breaks" if ids else "the disruption among the rules, which it breaks"
    )


def _counting(units: list[str], what: str) -> str:
    """Limits over several items add their quantities; say how, so that 'units' of
    kg, litres and reels are one stated measure."""
    kinds = sorted(set(units))
    if len(kinds) == 1:
        return f"Wherever a limit counts units of several {what} together, it adds their quantities in {kinds[0]}."
    return (
        f"The {what} come in different units ({_join(kinds)}); wherever a limit counts units of several {what} "
        f"together, every unit counts as 1 whatever it measures (for example 3 {kinds[0]} and 2 {kinds[1]} are "
        f"5 units)."
    )


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _range(d: Any, kind: str, target: str, value: int) -> str:
    """'40–60 (uncertain input U1)' for an uncertain input, else the value."""
    for u in d.uncertain:
        if u.kind == kind and u.target == target:
            return f"{u.low}–{u.high} (uncertain input {u.id})"
    return str(value)


def render_rule(rule: Rule, data: dict[str, Any], task: str) -> str:
    d = DATA_TYPES[task].model_validate(data)
    fn = SENTENCES[task].get(rule.kind)
    if fn is None:
        raise ValueError(f"no sentence for rule kind {rule.kind!r} in {task}")
    return fn(d, parse(RULE_PARAMS[task], rule))


def render_objective(term: ObjectiveTerm, data: dict[str, Any], task: str) -> str:
    d = DATA_TYPES[task].model_validate(data)
    fn = OBJECTIVES[task].get(term.kind)
    if fn is None:
        raise ValueError(f"no sentence for objective kind {term.kind!r} in {task}")
    return fn(d, parse(TERM_PARAMS[task], term))


# == Procurement Planning ==============================================================
P = "procurement_planning"
PROCUREMENT_CONTEXT = {
    "manufacturing_inputs": ("a factory", "The items are raw materials for a production line."),
    "restaurant_supplies": (
        "a restaurant kitchen",
        "The items are ingredients; perishable ones are used oldest first.",
    ),
    "hospital_consumables": ("a hospital", "The items are consumables the wards use every week."),
    "construction_materials": ("a building site", "The items are bulky materials, and storage on site is limited."),
}


def _unit_of(d: ProcurementData, item: str) -> str:
    return d.item_by_id[item].unit


@sentence(P, "inventory_balance")
def _p_inventory(d: ProcurementData, p: NoParams) -> str:
    return (
        "Stock is carried from week to week, and every week's demand must be met from the stock on hand that week "
        "(deliveries arriving that week included): no item may ever run short."
    )


@sentence(P, "supplier_capacity")
def _p_capacity(d: ProcurementData, p: NoParams) -> str:
    return (
        "In any one week, the units ordered from a supplier (all items together) must not exceed its weekly capacity."
    )


@sentence(P, "period_budget")
def _p_budget(d: ProcurementData, p: PeriodBudget) -> str:
    return (
        f"At most {p.max} may be spent in any one week: the unit prices of the orders placed that week plus the "
        f"order charges of the suppliers ordered from that week."
    )


@sentence(P, "min_order")
def _p_min_order(d: ProcurementData, p: MinOrder) -> str:
    parts = [f"{s} {_plural(m, 'unit')}" for s, m in p.min.items()]
    return (
        "Minimum order sizes, counting all items together: in any week in which anything is ordered from one of "
        "these suppliers, that week's order from it totals at least " + _join(parts) + "; ordering nothing from it "
        "that week is allowed."
    )


@sentence(P, "supplier_closed")
def _p_closed(d: ProcurementData, p: SupplierClosed) -> str:
    return f"{p.supplier} takes no orders in {_join(p.periods)}."


@sentence(P, "dock_capacity")
def _p_dock(d: ProcurementData, p: DockCapacity) -> str:
    return f"At most {_plural(p.max, 'unit')} (all items together) can be received in any one week."


@sentence(P, "safety_stock")
def _p_safety(d: ProcurementData, p: SafetyStock) -> str:
    return f"{p.item} never ends a week with fewer than {p.min} {_unit_of(d, p.item)} in stock."


@sentence(P, "stock_target")
def _p_target(d: ProcurementData, p: StockTarget) -> str:
    return f"At the end of {p.period}, at least {p.min} {_unit_of(d, p.item)} of {p.item} must be in stock (a delivery commitment)."


@sentence(P, "storage_cap")
def _p_storage(d: ProcurementData, p: StorageCap) -> str:
    return f"At the end of every week, at most {_plural(p.max, 'unit')} (all items together) may be in storage."


@sentence(P, "shelf_life")
def _p_shelf(d: ProcurementData, p: ShelfLife) -> str:
    k = p.periods
    last = (
        "in the week it is received"
        if k == 1
        else f"by the end of the {_ordinal(k)} week counting the week it is received"
    )
    return (
        f"{p.item} is perishable and is used first in, first out (oldest units first). Each unit must be used "
        f"{last}, and may not still be in stock after that; the initial stock counts as received in {d.periods[0]}."
    )


def _ordinal(n: int) -> str:
    return {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth"}.get(n, f"{n}th")


@sentence(P, "supplier_share")
def _p_share(d: ProcurementData, p: SupplierShare) -> str:
    return f"No single supplier provides more than {p.pct}% of all the {p.item} ordered over the plan."


@sentence(P, "contract_minimum")
def _p_contract(d: ProcurementData, p: ContractMinimum) -> str:
    return f"Under its contract, {p.supplier} receives orders for at least {p.min} units in total over the plan (all items and weeks together)."


@sentence(P, "order_gap")
def _p_gap(d: ProcurementData, p: OrderGap) -> str:
    return f"Orders are never placed with {p.supplier} in two consecutive weeks."


@sentence(P, "single_sourcing")
def _p_single(d: ProcurementData, p: SingleSourcing) -> str:
    return f"All the {p.item} is bought from one supplier only."


@sentence(P, "dual_sourcing")
def _p_dual(d: ProcurementData, p: DualSourcing) -> str:
    return f"{p.item} is bought from at least two different suppliers over the plan."


@sentence(P, "lot_cap")
def _p_lot(d: ProcurementData, p: LotCap) -> str:
    return f"No single order line (one item from one supplier in one week) may exceed {p.max} units."


@sentence(P, "delay_robust")
def _p_delay(d: ProcurementData, p: NoParams) -> str:
    return (
        "Every week's demand must be met from stock, and must still be met if any one order (one supplier, item and "
        "week) arrived one week late while every other order came on time; an order due in the last week would then "
        "not arrive at all. This must hold for each order being late on its own."
    )


def _p_total_cost(d: ProcurementData, p: NoParams) -> str:
    return (
        "the total cost: the unit prices of everything ordered, plus each supplier's order charge for every week in "
        "which an order is placed with it, plus each item's holding cost for every unit in stock at the end of each week"
    )


def _p_order_score(d: ProcurementData, p: NoParams) -> str:
    return (
        "the order score: each unit ordered from the supplier listed k-th (first = 1) in week Wt scores 10 × k + t; "
        "sum over all units ordered"
    )


def _p_changes(d: ProcurementData, p: CurrentOrders) -> str:
    return (
        "the number of order lines (supplier, item and week) whose quantity differs from the current plan "
        "(a line found in only one of the two plans counts as well)"
    )


def _procurement_body(d: ProcurementData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    where, context = PROCUREMENT_CONTEXT.get(subtask, ("an organisation", ""))
    n = len(d.periods)
    out = [
        f"You are planning the purchases of {where} over {n} weeks, {d.periods[0]} to {d.periods[-1]}. {context}",
        "",
        f"**How stock works:** each item starts with the stock shown. An order placed with a supplier in week Wt arrives "
        f"at the start of week W(t + lead time) and can be used that same week; every order must arrive by "
        f"{d.periods[-1]}. In each week the deliveries arrive first, then the week's demand is used, and what is left is "
        f"carried into the next week. Quantities are whole units, and one order line (supplier, item, week) can never "
        f"exceed the supplier's weekly capacity. " + _counting([i.unit for i in d.items], "items"),
        "",
        "**Items:**",
    ]
    for i in d.items:
        demand = ", ".join(
            f"{d.periods[t]} {_range(d, 'demand', f'{i.id}/{d.periods[t]}', x)}" for t, x in enumerate(i.demand)
        )
        out.append(
            f"- {i.id} ({i.unit}): initial stock {i.initial_stock}; holding cost {i.holding_cost} per unit in stock at the end "
            f"of a week; demand {demand}"
        )
    out += ["", "**Suppliers** (listed order k = 1, 2, ...):"]
    for s in d.suppliers:
        offers = ", ".join(f"{o.item} at {o.price}" for o in s.offers)
        cap = _range(d, "capacity", s.id, s.capacity)
        lead = _plural(s.lead_time, "week")
        out.append(
            f"- {s.id}: lead time {lead}; weekly capacity {cap} units (all items together); order charge {s.fixed_cost} "
            f"for each week with an order; sells {offers} per unit"
        )
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; change as few order lines as you can):"]
        lines = [f"- {q} {i} from {s} in {label}" for s, i, label, q in current_plan(P, changes)]
        out += lines or ["- (no orders)"]
    return out


def _procurement_verification(d: ProcurementData) -> str:
    return (
        "under `verification`, report from your plan `spend` (for every supplier, everything paid to it: unit prices "
        f"plus order charges) and `closing_stock` (for every item, the stock at the end of {d.periods[-1]})."
    )


# == Material Allocation ===============================================================
M = "material_allocation"
MATERIAL_CONTEXT = {
    "disaster_relief": (
        "relief supplies",
        "evacuation centres",
        "A storm has displaced families; the centres have sent their requests.",
    ),
    "hospital_supplies": (
        "medical supplies",
        "hospitals",
        "Supplies are short during an outbreak; each hospital has sent its request.",
    ),
    "school_devices": (
        "learning materials",
        "schools",
        "A district is equipping its schools; each school has sent its request.",
    ),
    "food_bank": (
        "food bank stock",
        "community centres",
        "The food bank is sharing out this week's stock among its centres.",
    ),
}
FILL_RATE = (
    "A site's fill rate is 100 × (units it receives, all materials) ÷ (units it requested, all materials), rounded "
    "down to a whole percent."
)


def _m_unit(d: MaterialData, m: str) -> str:
    return next(x.unit for x in d.materials if x.id == m)


@sentence(M, "depot_stock")
def _m_stock(d: MaterialData, p: NoParams) -> str:
    return "No depot sends out more of a material than it holds (all sites together)."


@sentence(M, "request_cap")
def _m_request(d: MaterialData, p: NoParams) -> str:
    return "No site receives more of a material than it requested (all depots together)."


@sentence(M, "route_closed")
def _m_closed(d: MaterialData, p: RouteClosed) -> str:
    return f"The road from {p.depot} to {p.site} is closed: nothing can be sent from {p.depot} to {p.site}."


@sentence(M, "truck_capacity")
def _m_truck(d: MaterialData, p: TruckCapacity) -> str:
    return (
        f"Everything sent from one depot to one site travels in a single truck, which carries at most {p.max} "
        f"units (all materials together)."
    )


@sentence(M, "depot_throughput")
def _m_throughput(d: MaterialData, p: DepotThroughput) -> str:
    return f"{p.depot} can dispatch at most {p.max} units in total (all materials and sites together)."


@sentence(M, "min_guarantee")
def _m_guarantee(d: MaterialData, p: MinGuarantee) -> str:
    who = _join(p.sites) + (" are each" if len(p.sites) > 1 else " is")
    return f"{who} guaranteed at least {p.min} {_m_unit(d, p.material)} of {p.material}."


@sentence(M, "site_intake")
def _m_intake(d: MaterialData, p: SiteIntake) -> str:
    return f"{p.site} can take in at most {p.max} units in total (all materials together)."


@sentence(M, "transport_budget")
def _m_budget(d: MaterialData, p: TransportBudget) -> str:
    return f"The total transport cost may not exceed {p.max}."


@sentence(M, "fill_gap")
def _m_gap(d: MaterialData, p: FillGap) -> str:
    if not p.max:
        return "Fairness: every site has the same fill rate."
    return f"Fairness: the fill rates of all sites lie within {_plural(p.max, 'percentage point')} of each other."


@sentence(M, "priority_order")
def _m_priority(d: MaterialData, p: PriorityOrder) -> str:
    chain = p.sites
    return (
        "Priority order: " + ", ".join(f"{a}'s fill rate is at least {b}'s" for a, b in itertools.pairwise(chain)) + "."
    )


@sentence(M, "single_source")
def _m_single(d: MaterialData, p: SingleSource) -> str:
    who = _join(p.sites) + (" each receive" if len(p.sites) > 1 else " receives")
    return f"{who} everything from one depot only."


@sentence(M, "min_shipment")
def _m_min_shipment(d: MaterialData, p: MinShipment) -> str:
    return f"A delivery from a depot to a site (all materials together) is either nothing or at least {p.min} units."


@sentence(M, "share_cap")
def _m_share(d: MaterialData, p: ShareCap) -> str:
    return f"No site receives more than {p.pct}% of all the {p.material} sent out."


@sentence(M, "depot_failure")
def _m_failure(d: MaterialData, p: NoParams) -> str:
    return (
        "If any one depot failed and sent nothing (every other shipment unchanged), every site must still receive "
        "at least half of each material your plan sends it. This must hold for each depot failing on its own."
    )


def _m_shortage(d: MaterialData, p: NoParams) -> str:
    return "the weighted shortage: for every site and material, (units requested − units received) × the site's priority, summed"


def _m_transport(d: MaterialData, p: NoParams) -> str:
    return "the transport cost: every unit sent costs its route's cost per unit (depot to site), summed"


def _m_route_score(d: MaterialData, p: NoParams) -> str:
    return (
        "the route score: each unit of the material listed i-th sent from the depot listed j-th to the site listed "
        "k-th scores i × (10 × j + k); summed over all units sent"
    )


def _m_changes(d: MaterialData, p: CurrentShipments) -> str:
    return (
        "the number of shipment lines (depot, site and material) whose units differ from the current plan "
        "(a line found in only one of the two plans counts as well)"
    )


def _material_body(d: MaterialData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    what, where, context = MATERIAL_CONTEXT.get(subtask, ("supplies", "sites", ""))
    out = [
        f"You are allocating scarce {what} from {len(d.depots)} depots to {len(d.sites)} {where}. {context} The supplies "
        f"do not cover every request.",
        "",
        "**Materials** (listed order i = 1, 2, ...): " + ", ".join(f"{m.id} (in {m.unit})" for m in d.materials) + ".",
        "",
        "A shipment line sends a whole number of units of one material from one depot to one site; one line can never "
        "exceed what the depot holds of that material. "
        + FILL_RATE
        + " "
        + _counting([m.unit for m in d.materials], "materials"),
        "",
        "**Depots** (listed order j = 1, 2, ...):",
    ]
    for x in d.depots:
        held = ", ".join(f"{_range(d, 'stock', f'{x.id}/{m}', q)} {_m_unit(d, m)} of {m}" for m, q in x.stock.items())
        out.append(f"- {x.id}: holds {held}")
    out += ["", f"**{where.capitalize()}** (listed order k = 1, 2, ...):"]
    for s in d.sites:
        wants = ", ".join(f"{q} {_m_unit(d, m)} of {m}" for m, q in s.requests.items())
        out.append(f"- {s.id}: priority {s.priority}; requests {wants}")
    out += ["", "**Transport cost per unit** (from a depot to each site):"]
    for x in d.depots:
        out.append(
            f"- {x.id}: " + ", ".join(f"{s} {_range(d, 'cost', f'{x.id}/{s}', c)}" for s, c in d.cost[x.id].items())
        )
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; change as few shipment lines as you can):"]
        lines = [f"- {q} {_m_unit(d, m)} of {m} from {x} to {s}" for x, s, m, q in current_plan(M, changes)]
        out += lines or ["- (no shipments)"]
    return out


def _material_verification(d: MaterialData) -> str:
    return (
        "under `verification`, report from your plan `received` (for every site, the units it receives, all "
        "materials together) and `dispatched` (for every depot, the units it sends out, all materials together)."
    )


# == Educational Resource Planning =====================================================
E = "educational_resource_planning"
EDUCATION_CONTEXT = {
    "secondary_school": "a secondary school's week: subject lessons for its class groups",
    "university_labs": "a university department's lab week: practical sessions for its year groups",
    "language_school": "a language school's week: courses for its levels",
    "training_centre": "a training centre's week: courses for its client teams",
}


@sentence(E, "qualified")
def _e_qualified(d: EducationData, p: NoParams) -> str:
    return "Every lesson is taught by a teacher who teaches its subject."


@sentence(E, "room_fit")
def _e_room_fit(d: EducationData, p: NoParams) -> str:
    return "A lesson's room must seat its whole group and have all the equipment the lesson needs."


@sentence(E, "teacher_no_clash")
def _e_teacher_clash(d: EducationData, p: NoParams) -> str:
    return "No teacher teaches two lessons in the same slot."


@sentence(E, "room_no_clash")
def _e_room_clash(d: EducationData, p: NoParams) -> str:
    return "A room holds at most one lesson per slot."


@sentence(E, "availability")
def _e_availability(d: EducationData, p: NoParams) -> str:
    return "No teacher teaches in a slot in which they are unavailable."


@sentence(E, "teacher_absent")
def _e_absent(d: EducationData, p: TeacherAbsent) -> str:
    return f"{p.teacher} is absent in {_join(p.slots)} and teaches no lesson then."


@sentence(E, "teacher_load")
def _e_load(d: EducationData, p: TeacherLoad) -> str:
    who = _join(p.teachers) + (" each teach" if len(p.teachers) > 1 else " teaches")
    return f"{who} at most {_plural(p.max, 'lesson')}." if p.max else f"{who} no lessons."


@sentence(E, "kit_pool")
def _e_kit(d: EducationData, p: KitPool) -> str:
    n = p.max
    if n == 0:
        return "There are no laptop trolleys: every lesson that needs laptops must be held in a room with computers."
    rooms = "a room" if n == 1 else "rooms"
    return (
        f"There {'is' if n == 1 else 'are'} {_plural(n, 'laptop trolley')}: in any slot, at most {n} of the lessons "
        f"that need laptops may be held in {rooms} without computers (a lesson in a room with computers needs no "
        f"trolley)."
    )


@sentence(E, "room_closed")
def _e_closed(d: EducationData, p: RoomClosed) -> str:
    return f"Room {p.room} is closed in {_join(p.slots)}."


@sentence(E, "daily_load")
def _e_daily(d: EducationData, p: DailyLoad) -> str:
    who = _join(p.teachers) + (" each teach" if len(p.teachers) > 1 else " teaches")
    if not p.max:
        return f"{who} no lessons on any day."
    return f"{who} at most {_plural(p.max, 'lesson')} on any one day."


@sentence(E, "load_balance")
def _e_balance(d: EducationData, p: LoadBalance) -> str:
    spread = f"differ by at most {p.max} between any two teachers" if p.max else "are all equal"
    return (
        f"Fairness: the teaching loads (lessons per teacher, counting every teacher listed, also those who teach "
        f"none) {spread}."
    )


@sentence(E, "min_load")
def _e_min_load(d: EducationData, p: MinLoad) -> str:
    who = _join(p.teachers) + (" each teach" if len(p.teachers) > 1 else " teaches")
    return f"{who} at least {_plural(p.min, 'lesson')}."


@sentence(E, "continuity")
def _e_continuity(d: EducationData, p: Continuity) -> str:
    return f"{_join(p.lessons)} are taught by the same teacher."


@sentence(E, "same_room")
def _e_same_room(d: EducationData, p: SameRoom) -> str:
    return f"{_join(p.lessons)} are held in the same room."


@sentence(E, "teacher_gap")
def _e_gap(d: EducationData, p: TeacherGap) -> str:
    return (
        f"{p.teacher} never teaches in two consecutive slots of the same day (slots are consecutive when they "
        f"follow each other in the slot list on one day)."
    )


@sentence(E, "teacher_backup")
def _e_backup(d: EducationData, p: NoParams) -> str:
    free = (
        ", and is available in the lesson's slot (not listed as unavailable then)"
        if any(t.unavailable for t in d.teachers)
        else ""
    )
    return (
        f"Every lesson names a backup teacher other than its own teacher, who teaches the lesson's subject{free}. "
        "If any one teacher fell ill, each of their lessons would be taught by its backup, "
        "and no teacher may then have two lessons in one slot. This must work for each teacher falling ill on their own."
    )


def _e_preference(d: EducationData, p: NoParams) -> str:
    return (
        "the preference total: each lesson counts its teacher's preference for the lesson's subject (0 = first "
        "choice; a teacher outside their subjects would count 3)"
    )


def _e_room_cost(d: EducationData, p: NoParams) -> str:
    return "the room cost: each lesson pays its room's cost"


def _e_score(d: EducationData, p: NoParams) -> str:
    return (
        "the assignment score: lesson number n taught by the teacher listed k-th in the room listed j-th scores "
        "n × (10 × k + j); summed over lessons"
    )


def _e_backup_score(d: EducationData, p: NoParams) -> str:
    return "the backup score: each lesson counts the listed number k of its backup teacher; summed over lessons"


def _e_changes(d: EducationData, p: CurrentLessons) -> str:
    return "the number of lessons whose teacher or room differs from the current plan (each changed lesson counts 1)"


def _education_body(d: EducationData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    out = [
        f"You are assigning teachers and rooms for {EDUCATION_CONTEXT.get(subtask, 'a week of lessons')}. Every lesson "
        f"keeps its timetabled slot; the slots are {_join([s.id for s in d.slots])}, in this order.",
        "",
        "**Teachers** (listed order k = 1, 2, ...; preference 0 is a first choice):",
    ]
    for t in d.teachers:
        line = f"- {t.id}: teaches " + ", ".join(f"{s} (preference {v})" for s, v in t.subjects.items())
        if t.unavailable:
            line += "; unavailable " + _join(list(t.unavailable))
        out.append(line)
    out += ["", "**Rooms** (listed order j = 1, 2, ...):"]
    for r in d.rooms:
        feats = _join(list(r.features)) if r.features else "no special equipment"
        out.append(f"- {r.id}: {_range(d, 'seats', r.id, r.seats)} seats, {feats}, cost {r.cost}")
    out += ["", "**Lessons** (lesson number n = 1, 2, ... as listed):"]
    for x in d.lessons:
        parts = [f"{x.id} {x.name}", x.slot, f"group {x.group}, {_range(d, 'size', x.group, x.size)} students"]
        if x.needs:
            parts.append("needs " + _join(list(x.needs)))
        if x.kit:
            parts.append("needs laptops (a trolley, unless its room has computers)")
        out.append("- " + " — ".join(parts))
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current plan** (made before {_disrupted(rules)}; change as few lessons as you can):"]
        out += [f"- {lid}: {t}, {r}" for lid, (t, r) in current_plan(E, changes).items()]
    return out


def _education_verification(d: EducationData) -> str:
    return (
        "under `verification`, report from your plan `load` (for every teacher, the number of lessons they teach) "
        "and `room_use` (for every room, the number of lessons held in it)."
    )


# == Student Grouping ==================================================================
G = "student_grouping"
GROUPING_CONTEXT = {
    "project_teams": ("project teams", "for a semester project"),
    "lab_partners": ("lab groups", "for the term's practical sessions; each group needs someone to lead on safety"),
    "study_groups": ("study groups", "for exam revision; students said whom they would like to study with"),
    "sports_teams": ("teams", "for the school tournament; the teams should be evenly matched"),
}


def _pairs(pairs: list[tuple[str, str]], how: str) -> str:
    return "; ".join(f"{a} and {b} are {how}" for a, b in pairs) + "."


@sentence(G, "group_size")
def _g_size(d: GroupingData, p: GroupSize) -> str:
    if p.min == p.max:
        return f"Every group has exactly {_plural(p.min, 'student')}."
    return f"Every group has between {p.min} and {p.max} students."


@sentence(G, "apart")
def _g_apart(d: GroupingData, p: Apart) -> str:
    return _pairs(p.pairs, "in different groups")


@sentence(G, "together")
def _g_together(d: GroupingData, p: Together) -> str:
    return _pairs(p.pairs, "in the same group")


@sentence(G, "leader_floor")
def _g_leader(d: GroupingData, p: LeaderFloor) -> str:
    return f"Every group has at least one student with leadership {p.level} or more."


@sentence(G, "track_cap")
def _g_track_cap(d: GroupingData, p: TrackCap) -> str:
    return f"No group has more than {_plural(p.max, 'student')} of the same track."


@sentence(G, "skill_floor")
def _g_skill_floor(d: GroupingData, p: SkillFloor) -> str:
    return f"Every group's skill total (the sum of its students' skills) is at least {p.min}."


@sentence(G, "skill_balance")
def _g_balance(d: GroupingData, p: SkillBalance) -> str:
    if not p.max:
        return "Fairness: every group has the same skill total."
    return f"Fairness: the skill totals of any two groups differ by at most {p.max}."


@sentence(G, "diversity")
def _g_diversity(d: GroupingData, p: Diversity) -> str:
    if p.min <= 1:
        return f"Every group has students of at least {p.min} track."
    return f"Every group has students of at least {p.min} different tracks."


@sentence(G, "no_isolation")
def _g_isolation(d: GroupingData, p: NoParams) -> str:
    return "No student is the only one of their track in their group."


@sentence(G, "wish_guarantee")
def _g_wishes(d: GroupingData, p: WishGuarantee) -> str:
    who = _join(p.students) + (" each share" if len(p.students) > 1 else " shares")
    return f"{who} a group with at least one of the classmates they wished for."


@sentence(G, "mentor")
def _g_mentor(d: GroupingData, p: Mentor) -> str:
    return (
        f"Every newcomer shares a group with a mentor: a student who is not a newcomer and has leadership "
        f"{p.level} or more."
    )


@sentence(G, "dropout_robust")
def _g_dropout(d: GroupingData, p: DropoutRobust) -> str:
    return (
        f"If any one student dropped out, every group would still have a student with leadership {p.level} or "
        f"more. This must hold for each student dropping out on their own."
    )


def _g_unmet(d: GroupingData, p: NoParams) -> str:
    return "the number of unmet wishes: each wish (a student wishing to work with a classmate) whose two students are in different groups counts 1"


def _g_spread(d: GroupingData, p: NoParams) -> str:
    return "the skill spread: the highest group skill total minus the lowest"


def _g_code(d: GroupingData, p: NoParams) -> str:
    return (
        "the grouping code: write each student's group number (numbered as above) in list order and read the "
        "digits as one whole number; a smaller code is an earlier grouping"
    )


def _g_changes(d: GroupingData, p: CurrentGroups) -> str:
    return (
        "the number of pairs of students whose pairing differs from the current grouping: together before and "
        "apart now, or apart before and together now"
    )


def _grouping_body(d: GroupingData, subtask: str, objective: list[ObjectiveTerm], rules: list[Rule]) -> list[str]:
    word, context = GROUPING_CONTEXT.get(subtask, ("groups", ""))
    n = len(d.students)
    out = [
        f"You are splitting a class of {n} students into {d.groups} {word} {context}. Every student is in exactly one "
        f"group and no group is empty. Groups have no names or order: a grouping is only who is with whom.",
        "",
        "**Group numbers** (used only by the grouping code): number the groups in the order of their first-listed "
        "student. The group of the first student in the list below is group 1; the group of the earliest-listed "
        "student not in group 1 is group 2; and so on.",
        "",
        f"**Students** (listed order 1 to {n}; skill 1–5, leadership 0–3):",
    ]
    for s in d.students:
        parts = [f"skill {s.skill}", f"track {s.track}", f"leadership {_range(d, 'leadership', s.id, s.leadership)}"]
        if s.newcomer:
            parts.append("newcomer")
        line = f"- {s.id}: " + ", ".join(parts)
        if s.wishes:
            line += "; wishes to work with " + _join(list(s.wishes))
        out.append(line)
    changes = next((t for t in objective if t.kind == "changes"), None)
    if changes is not None:
        out += ["", f"**Current grouping** (made before {_disrupted(rules)}; change as few pairings as you can):"]
        out += [f"- {', '.join(g)}" for g in current_plan(G, changes)]
    return out


def _grouping_verification(d: GroupingData) -> str:
    return (
        "under `verification`, report from your grouping `group_skill` (for every student, the skill total of their "
        "group) and `wishes_met` (for every student, how many of their wishes your grouping grants)."
    )


# == shared ============================================================================
OBJECTIVES: dict[str, dict[str, Sentence]] = {
    P: {"total_cost": _p_total_cost, "order_score": _p_order_score, "changes": _p_changes},
    M: {"shortage": _m_shortage, "transport_cost": _m_transport, "route_score": _m_route_score, "changes": _m_changes},
    E: {
        "preference": _e_preference,
        "room_cost": _e_room_cost,
        "assignment_score": _e_score,
        "backup_score": _e_backup_score,
        "changes": _e_changes,
    },
    G: {"unmet_wishes": _g_unmet, "skill_spread": _g_spread, "grouping_code": _g_code, "changes": _g_changes},
}
BODIES: dict[str, Callable[[Any, str, list[ObjectiveTerm], list[Rule]], list[str]]] = {
    P: _procurement_body,
    M: _material_body,
    E: _education_body,
    G: _grouping_body,
}
VERIFICATION: dict[str, Callable[[Any], str]] = {
    P: _procurement_verification,
    M: _material_verification,
    E: _education_verification,
    G: _grouping_verification,
}
WORST_CASE = {
    P: "figures are computed with the least favourable values (capacities at the low end, demands at the high end)",
    M: "figures are computed with the least favourable values (stocks at the low end, transport costs at the high end)",
    E: "the data's least favourable values are group sizes at the high end and seats at the low end",
    G: "the least favourable values are the low ends of the leadership ranges",
}
CURRENT = {P: "the current plan", M: "the current plan", E: "the current plan", G: "the current grouping"}


def _objective_lines(objective: list[ObjectiveTerm], current: str, baseline: str | None = None) -> list[str]:
    lines = ["Minimise, in this order of priority:"]
    for i, term in enumerate(objective, 1):
        text = term.text.replace(current, baseline) if baseline else term.text
        lines.append(f"{i}. `{term.id}` — {text}.")
    if len(objective) > 1:
        lines.append(
            "A plan is better when its first figure is smaller; only when first figures are equal does the "
            "second decide, and so on."
        )
    return lines


def render_prompt(
    data: dict[str, Any],
    rules: list[Rule],
    objective: list[ObjectiveTerm],
    task: str,
    subtask: str,
    mechanisms: list[str] | None = None,
    recovery: Recovery | None = None,
) -> str:
    d = DATA_TYPES[task].model_validate(data)
    mechanisms = mechanisms or []
    out = BODIES[task](d, subtask, objective, rules)
    if d.uncertain:
        out += [
            "",
            "**Uncertain inputs:** the values marked as ranges (" + ", ".join(u.id for u in d.uncertain) + ") are not "
            "known exactly yet. Your plan must satisfy every rule for every value in each range; "
            + WORST_CASE[task]
            + ".",
        ]
    out += ["", "**Rules** (every plan must satisfy all of them):"]
    out += [f"- {r.id}: {r.text}" for r in rules]
    out += ["", "**Objective:**", *_objective_lines(objective, CURRENT[task])]
    out += prompt_sections(
        mechanisms,
        PromptContext(
            recovery=recovery,
            objective_lines=lambda terms, baseline: _objective_lines(terms, CURRENT[task], baseline),
            verification=lambda: VERIFICATION[task](d),
        ),
    )
    return "\n".join(out)
