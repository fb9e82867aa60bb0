"""The parameters of every allocation rule kind and objective kind, one model each.

Encoders (CP-SAT and the MILP twin), checks and sentences all read a rule through the
model its kind has here (:mod:`pbsolve.params`). Fields are declared in the order the
instance file lists them: the dump of a model is the rule's ``params`` object, byte for
byte. Kinds that take no parameters (the structural rules, most objective terms) use
:class:`~pbsolve.params.NoParams`. Names are ids of the instance data (suppliers,
weeks, sites, lessons, students, ...) exactly as the data spells them.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, NonNegativeInt, PositiveInt

from pbsolve.params import NoParams, Params, parse
from pbsolve.schema import ObjectiveTerm

Percent = Annotated[int, Field(ge=0, le=100)]
Pair = tuple[str, str]


# -- Procurement Planning ---------------------------------------------------------------
class PeriodBudget(Params):
    """At most ``max`` spent in any one week (unit prices plus order charges)."""

    max: NonNegativeInt


class MinOrder(Params):
    """A week's order from each named supplier is nothing or at least its minimum (all items together)."""

    min: dict[str, NonNegativeInt]


class SupplierClosed(Params):
    """The supplier takes no orders in the named weeks."""

    supplier: str
    periods: list[str]


class DockCapacity(Params):
    """At most ``max`` units (all items together) arrive in any one week."""

    max: NonNegativeInt


class SafetyStock(Params):
    """The item never ends a week with less than ``min`` in stock."""

    item: str
    min: NonNegativeInt


class StockTarget(Params):
    """The item ends the named week with at least ``min`` in stock (a delivery commitment)."""

    item: str
    period: str
    min: NonNegativeInt


class StorageCap(Params):
    """At most ``max`` units (all items together) in stock at the end of every week."""

    max: NonNegativeInt


class ShelfLife(Params):
    """The item is used first in, first out; a unit is used within ``periods`` weeks counting the week it arrives."""

    item: str
    periods: PositiveInt


class SupplierShare(Params):
    """No supplier provides more than ``pct`` percent of the item ordered over the plan."""

    item: str
    pct: Percent


class ContractMinimum(Params):
    """The supplier receives orders for at least ``min`` units over the plan."""

    supplier: str
    min: NonNegativeInt


class OrderGap(Params):
    """No orders with the supplier in two consecutive weeks."""

    supplier: str


class SingleSourcing(Params):
    """The item is bought from one supplier only."""

    item: str


class DualSourcing(Params):
    """The item is bought from at least two suppliers."""

    item: str


class LotCap(Params):
    """No order line (one supplier, item and week) exceeds ``max`` units."""

    max: NonNegativeInt


class CurrentOrders(Params):
    """The current plan a ``changes`` term counts against: (supplier, item, week, units) lines."""

    existing: list[tuple[str, str, str, NonNegativeInt]]


# -- Material Allocation ----------------------------------------------------------------
class RouteClosed(Params):
    """Nothing is sent from the depot to the site."""

    depot: str
    site: str


class TruckCapacity(Params):
    """At most ``max`` units (all materials together) from one depot to one site."""

    max: NonNegativeInt


class DepotThroughput(Params):
    """The depot dispatches at most ``max`` units in total."""

    depot: str
    max: NonNegativeInt


class MinGuarantee(Params):
    """Each named site receives at least ``min`` units of the material."""

    sites: list[str]
    material: str
    min: NonNegativeInt


class SiteIntake(Params):
    """The site receives at most ``max`` units in total."""

    site: str
    max: NonNegativeInt


class TransportBudget(Params):
    """The total transport cost is at most ``max``."""

    max: NonNegativeInt


class FillGap(Params):
    """The fill rates of any two sites differ by at most ``max`` percentage points."""

    max: NonNegativeInt


class PriorityOrder(Params):
    """Along the named sites, each site's fill rate is at least the next one's."""

    sites: list[str]


class SingleSource(Params):
    """Each named site is served by one depot only."""

    sites: list[str]


class MinShipment(Params):
    """A delivery from a depot to a site is nothing or at least ``min`` units."""

    min: NonNegativeInt


class ShareCap(Params):
    """No site receives more than ``pct`` percent of the material sent out."""

    material: str
    pct: Percent


class CurrentShipments(Params):
    """The current plan a ``changes`` term counts against: (depot, site, material, units) lines."""

    existing: list[tuple[str, str, str, NonNegativeInt]]


# -- Educational Resource Planning ------------------------------------------------------
class TeacherAbsent(Params):
    """The teacher teaches no lesson in the named slots."""

    teacher: str
    slots: list[str]


class TeacherLoad(Params):
    """Each named teacher teaches at most ``max`` lessons."""

    teachers: list[str]
    max: NonNegativeInt


class KitPool(Params):
    """At most ``max`` lessons needing laptops are held in rooms without computers in any slot."""

    max: NonNegativeInt


class RoomClosed(Params):
    """The room holds no lesson in the named slots."""

    room: str
    slots: list[str]


class DailyLoad(Params):
    """Each named teacher teaches at most ``max`` lessons on any one day."""

    teachers: list[str]
    max: NonNegativeInt


class LoadBalance(Params):
    """The loads of any two teachers differ by at most ``max`` lessons."""

    max: NonNegativeInt


class MinLoad(Params):
    """Each named teacher teaches at least ``min`` lessons."""

    teachers: list[str]
    min: NonNegativeInt


class Continuity(Params):
    """The named lessons are taught by one teacher."""

    lessons: list[str]


class SameRoom(Params):
    """The named lessons are held in one room."""

    lessons: list[str]


class TeacherGap(Params):
    """The teacher never teaches in two consecutive slots of a day."""

    teacher: str


class CurrentLessons(Params):
    """The current plan a ``changes`` term counts against: lesson -> (teacher, room)."""

    existing: dict[str, tuple[str, str]]


# -- Student Grouping -------------------------------------------------------------------
class GroupSize(Params):
    """Every group has from ``min`` to ``max`` students."""

    min: NonNegativeInt
    max: NonNegativeInt


class Apart(Params):
    """The two students of each pair are in different groups."""

    pairs: list[Pair]


class Together(Params):
    """The two students of each pair are in the same group."""

    pairs: list[Pair]


class LeaderFloor(Params):
    """Every group has a student with leadership ``level`` or more."""

    level: NonNegativeInt


class TrackCap(Params):
    """No group has more than ``max`` students of one track."""

    max: NonNegativeInt


class SkillFloor(Params):
    """Every group's skill total is at least ``min``."""

    min: NonNegativeInt


class SkillBalance(Params):
    """The skill totals of any two groups differ by at most ``max``."""

    max: NonNegativeInt


class Diversity(Params):
    """Every group mixes students of at least ``min`` tracks."""

    min: NonNegativeInt


class WishGuarantee(Params):
    """Each named student shares a group with at least one classmate they wished for."""

    students: list[str]


class Mentor(Params):
    """Every newcomer shares a group with a non-newcomer of leadership ``level`` or more."""

    level: NonNegativeInt


class DropoutRobust(Params):
    """Every group keeps a student of leadership ``level`` or more when any one student drops out."""

    level: NonNegativeInt


class CurrentGroups(Params):
    """The current grouping a ``changes`` term counts against: the groups' student lists."""

    existing: list[list[str]]


# -- the tables, per task type ------------------------------------------------------------
RULE_PARAMS: dict[str, dict[str, type[Params]]] = {
    "procurement_planning": {
        "inventory_balance": NoParams,
        "supplier_capacity": NoParams,
        "period_budget": PeriodBudget,
        "min_order": MinOrder,
        "supplier_closed": SupplierClosed,
        "dock_capacity": DockCapacity,
        "safety_stock": SafetyStock,
        "stock_target": StockTarget,
        "storage_cap": StorageCap,
        "shelf_life": ShelfLife,
        "supplier_share": SupplierShare,
        "contract_minimum": ContractMinimum,
        "order_gap": OrderGap,
        "single_sourcing": SingleSourcing,
        "dual_sourcing": DualSourcing,
        "lot_cap": LotCap,
        "delay_robust": NoParams,
    },
    "material_allocation": {
        "depot_stock": NoParams,
        "request_cap": NoParams,
        "route_closed": RouteClosed,
        "truck_capacity": TruckCapacity,
        "depot_throughput": DepotThroughput,
        "min_guarantee": MinGuarantee,
        "site_intake": SiteIntake,
        "transport_budget": TransportBudget,
        "fill_gap": FillGap,
        "priority_order": PriorityOrder,
        "single_source": SingleSource,
        "min_shipment": MinShipment,
        "share_cap": ShareCap,
        "depot_failure": NoParams,
    },
    "educational_resource_planning": {
        "qualified": NoParams,
        "room_fit": NoParams,
        "teacher_no_clash": NoParams,
        "room_no_clash": NoParams,
        "availability": NoParams,
        "teacher_absent": TeacherAbsent,
        "teacher_load": TeacherLoad,
        "kit_pool": KitPool,
        "room_closed": RoomClosed,
        "daily_load": DailyLoad,
        "load_balance": LoadBalance,
        "min_load": MinLoad,
        "continuity": Continuity,
        "same_room": SameRoom,
        "teacher_gap": TeacherGap,
        "teacher_backup": NoParams,
    },
    "student_grouping": {
        "group_size": GroupSize,
        "apart": Apart,
        "together": Together,
        "leader_floor": LeaderFloor,
        "track_cap": TrackCap,
        "skill_floor": SkillFloor,
        "skill_balance": SkillBalance,
        "diversity": Diversity,
        "no_isolation": NoParams,
        "wish_guarantee": WishGuarantee,
        "mentor": Mentor,
        "dropout_robust": DropoutRobust,
    },
}
TERM_PARAMS: dict[str, dict[str, type[Params]]] = {
    "procurement_planning": {"total_cost": NoParams, "order_score": NoParams, "changes": CurrentOrders},
    "material_allocation": {
        "shortage": NoParams,
        "transport_cost": NoParams,
        "route_score": NoParams,
        "changes": CurrentShipments,
    },
    "educational_resource_planning": {
        "preference": NoParams,
        "room_cost": NoParams,
        "assignment_score": NoParams,
        "backup_score": NoParams,
        "changes": CurrentLessons,
    },
    "student_grouping": {
        "unmet_wishes": NoParams,
        "skill_spread": NoParams,
        "grouping_code": NoParams,
        "changes": CurrentGroups,
    },
}


def current_plan(task: str, changes: ObjectiveTerm) -> Any:
    """The current plan a ``changes`` term counts against (its ``existing`` parameter),
    validated by the task's model: order lines, shipment lines, lesson assignments or
    groups."""
    p = parse(TERM_PARAMS[task], changes)
    if not isinstance(p, CurrentOrders | CurrentShipments | CurrentLessons | CurrentGroups):
        raise TypeError(f"{changes.id}: {changes.kind!r} is not a changes term of {task}")
    return p.existing
