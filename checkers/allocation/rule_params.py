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

from pbsolve.params import Names, NoParams, Params, listed, parse
from pbsolve.schema import ObjectiveTerm

Percent = Annotated[int, Field(ge=0, le=100)]
SupplierName = Annotated[str, Names("supplier")]
ItemName = Annotated[str, Names("item")]
PeriodName = Annotated[str, Names("period")]
DepotName = Annotated[str, Names("depot")]
SiteName = Annotated[str, Names("site")]
MaterialName = Annotated[str, Names("material")]
SlotName = Annotated[str, Names("slot")]
TeacherName = Annotated[str, Names("teacher")]
RoomName = Annotated[str, Names("room")]
LessonName = Annotated[str, Names("lesson")]
StudentName = Annotated[str, Names("student")]
Pair = tuple[StudentName, StudentName]


# -- Procurement Planning ---------------------------------------------------------------
class PeriodBudget(Params):
    """At most ``max`` spent in any one week (unit prices plus order charges)."""

    max: NonNegativeInt


class MinOrder(Params):
    """A week's order from each named supplier is nothing or at least its minimum (all items together)."""

    min: dict[SupplierName, NonNegativeInt]


class SupplierClosed(Params):
    """The supplier takes no orders in the named weeks."""

    supplier: SupplierName
    periods: list[PeriodName]


class DockCapacity(Params):
    """At most ``max`` units (all items together) arrive in any one week."""

    max: NonNegativeInt


class SafetyStock(Params):
    """The item never ends a week with less than ``min`` in stock."""

    item: ItemName
    min: NonNegativeInt


class StockTarget(Params):
    """The item ends the named week with at least ``min`` in stock (a delivery commitment)."""

    item: ItemName
    period: PeriodName
    min: NonNegativeInt


class StorageCap(Params):
    """At most ``max`` units (all items together) in stock at the end of every week."""

    max: NonNegativeInt


class ShelfLife(Params):
    """The item is used first in, first out; a unit is used within ``periods`` weeks counting the week it arrives."""

    item: ItemName
    periods: PositiveInt


class SupplierShare(Params):
    """No supplier provides more than ``pct`` percent of the item ordered over the plan."""

    item: ItemName
    pct: Percent


class ContractMinimum(Params):
    """The supplier receives orders for at least ``min`` units over the plan."""

    supplier: SupplierName
    min: NonNegativeInt


class OrderGap(Params):
    """No orders with the supplier in two consecutive weeks."""

    supplier: SupplierName


class SingleSourcing(Params):
    """The item is bought from one supplier only."""

    item: ItemName


class DualSourcing(Params):
    """The item is bought from at least two suppliers."""

    item: ItemName


class LotCap(Params):
    """No order line (one supplier, item and week) exceeds ``max`` units."""

    max: NonNegativeInt


class CurrentOrders(Params):
    """The current plan a ``changes`` term counts against: (supplier, item, week, units) lines."""

    existing: list[tuple[SupplierName, ItemName, PeriodName, NonNegativeInt]]


# -- Material Allocation ----------------------------------------------------------------
class RouteClosed(Params):
    """Nothing is sent from the depot to the site."""

    depot: DepotName
    site: SiteName


class TruckCapacity(Params):
    """At most ``max`` units (all materials together) from one depot to one site."""

    max: NonNegativeInt


class DepotThroughput(Params):
    """The depot dispatches at most ``max`` units in total."""

    depot: DepotName
    max: NonNegativeInt


class MinGuarantee(Params):
    """Each named site receives at least ``min`` units of the material."""

    sites: list[SiteName]
    material: MaterialName
    min: NonNegativeInt


class SiteIntake(Params):
    """The site receives at most ``max`` units in total."""

    site: SiteName
    max: NonNegativeInt


class TransportBudget(Params):
    """The total transport cost is at most ``max``."""

    max: NonNegativeInt


class FillGap(Params):
    """The fill rates of any two sites differ by at most ``max`` percentage points."""

    max: NonNegativeInt


class PriorityOrder(Params):
    """Along the named sites, each site's fill rate is at least the next one's."""

    sites: list[SiteName]


class SingleSource(Params):
    """Each named site is served by one depot only."""

    sites: list[SiteName]


class MinShipment(Params):
    """A delivery from a depot to a site is nothing or at least ``min`` units."""

    min: NonNegativeInt


class ShareCap(Params):
    """No site receives more than ``pct`` percent of the material sent out."""

    material: MaterialName
    pct: Percent


class CurrentShipments(Params):
    """The current plan a ``changes`` term counts against: (depot, site, material, units) lines."""

    existing: list[tuple[DepotName, SiteName, MaterialName, NonNegativeInt]]


# -- Educational Resource Planning ------------------------------------------------------
class TeacherAbsent(Params):
    """The teacher teaches no lesson in the named slots."""

    teacher: TeacherName
    slots: list[SlotName]


class TeacherLoad(Params):
    """Each named teacher teaches at most ``max`` lessons."""

    teachers: list[TeacherName]
    max: NonNegativeInt


class KitPool(Params):
    """At most ``max`` lessons needing laptops are held in rooms without computers in any slot."""

    max: NonNegativeInt


class RoomClosed(Params):
    """The room holds no lesson in the named slots."""

    room: RoomName
    slots: list[SlotName]


class DailyLoad(Params):
    """Each named teacher teaches at most ``max`` lessons on any one day."""

    teachers: list[TeacherName]
    max: NonNegativeInt


class LoadBalance(Params):
    """The loads of any two teachers differ by at most ``max`` lessons."""

    max: NonNegativeInt


class MinLoad(Params):
    """Each named teacher teaches at least ``min`` lessons."""

    teachers: list[TeacherName]
    min: NonNegativeInt


class Continuity(Params):
    """The named lessons are taught by one teacher."""

    lessons: list[LessonName]


class SameRoom(Params):
    """The named lessons are held in one room."""

    lessons: list[LessonName]


class TeacherGap(Params):
    """The teacher never teaches in two consecutive slots of a day."""

    teacher: TeacherName


class CurrentLessons(Params):
    """The current plan a ``changes`` term counts against: lesson -> (teacher, room)."""

    existing: dict[LessonName, tuple[TeacherName, RoomName]]

    def data_problems(self, data: Any) -> list[str]:
        """A current plan that leaves a lesson out has no teacher and room to compare
        that lesson against (the checker and the model read one for every lesson)."""
        found = super().data_problems(data)
        missing = [x.id for x in data.lessons if x.id not in self.existing]
        if missing:
            found.append(f"the current plan gives no teacher and room for lesson {listed(missing)}")
        return found


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

    students: list[StudentName]


class Mentor(Params):
    """Every newcomer shares a group with a non-newcomer of leadership ``level`` or more."""

    level: NonNegativeInt


class DropoutRobust(Params):
    """Every group keeps a student of leadership ``level`` or more when any one student drops out."""

    level: NonNegativeInt


class CurrentGroups(Params):
    """The current grouping a ``changes`` term counts against: the groups' student lists."""

    existing: list[list[StudentName]]

    def data_problems(self, data: Any) -> list[str]:
        """The current grouping places every student once: the model reads each student's
        current group (a student left out is a KeyError there), and a student in two
        groups would be read one way by the checker (both groups) and another by the model."""
        found = super().data_problems(data)
        named = [s for g in self.existing for s in g]
        missing = [s.id for s in data.students if s.id not in named]
        if missing:
            found.append(f"the current grouping leaves out student {listed(missing)}")
        twice = list(dict.fromkeys(s for s in named if named.count(s) > 1))
        if twice:
            found.append(f"the current grouping places student {listed(twice)} more than once")
        return found


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
