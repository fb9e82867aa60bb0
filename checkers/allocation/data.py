"""The Allocation & Matching family's instance data, one container per task type.

This is the grader's reading of an instance, so it lives on the checker side; the
solver models read the same containers but encode every rule on their own. Every number
is an integer, and every list keeps the order the prompt shows (list order is what the
stated tie-breaks refer to).
"""

from __future__ import annotations

from collections.abc import Container
from functools import cached_property

from pydantic import BaseModel, ConfigDict, Field

from pbsolve.kit import Uncertain, fitting_rooms  # one definition, in the core kit


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- Procurement Planning ---------------------------------------------------------------
class Offer(_Frozen):
    item: str
    price: int = Field(ge=0, description="price per unit")


class Supplier(_Frozen):
    id: str
    lead_time: int = Field(ge=0, description="periods between placing an order and its arrival")
    capacity: int = Field(ge=1, description="units (all items together) it ships per order period")
    fixed_cost: int = Field(ge=0, description="charged once for every period in which an order is placed with it")
    offers: tuple[Offer, ...]


class Item(_Frozen):
    id: str
    unit: str
    initial_stock: int = Field(ge=0)
    holding_cost: int = Field(ge=0, description="per unit in stock at the end of a period")
    demand: tuple[int, ...] = Field(description="units used in each period")


class ProcurementData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    periods: tuple[str, ...]
    items: tuple[Item, ...]
    suppliers: tuple[Supplier, ...]
    uncertain: tuple[Uncertain, ...] = ()

    @cached_property
    def item_by_id(self) -> dict[str, Item]:
        return {i.id: i for i in self.items}

    @cached_property
    def supplier_by_id(self) -> dict[str, Supplier]:
        return {s.id: s for s in self.suppliers}

    @cached_property
    def period_index(self) -> dict[str, int]:
        return {p: t for t, p in enumerate(self.periods)}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {
            "supplier": self.supplier_by_id,
            "item": self.item_by_id,
            "period": self.period_index,
        }
        return names[what]

    @cached_property
    def prices(self) -> dict[tuple[str, str], int]:
        return {(s.id, o.item): o.price for s in self.suppliers for o in s.offers}

    @cached_property
    def cells(self) -> list[tuple[str, str, int]]:
        """Every (supplier, item, order period) an order may use: the supplier offers the
        item and the delivery arrives within the horizon. Fixed order: suppliers, their
        offers, periods."""
        n = len(self.periods)
        return [(s.id, o.item, t) for s in self.suppliers for o in s.offers for t in range(n) if t + s.lead_time < n]

    @cached_property
    def lead_times(self) -> dict[str, int]:
        """Supplier id -> its lead time (as :attr:`supplier_by_id` reads it)."""
        return {sid: s.lead_time for sid, s in self.supplier_by_id.items()}

    def arrival(self, supplier: str, t: int) -> int:
        return t + self.supplier_by_id[supplier].lead_time


# -- Material Allocation ----------------------------------------------------------------
class Material(_Frozen):
    id: str
    unit: str


class Depot(_Frozen):
    id: str
    stock: dict[str, int] = Field(description="material id -> units on hand")


class Site(_Frozen):
    id: str
    priority: int = Field(ge=1, description="weight of each unit it goes short")
    requests: dict[str, int] = Field(description="material id -> units requested")


class MaterialData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    materials: tuple[Material, ...]
    depots: tuple[Depot, ...]
    sites: tuple[Site, ...]
    cost: dict[str, dict[str, int]] = Field(description="depot id -> site id -> transport cost per unit")
    uncertain: tuple[Uncertain, ...] = ()

    @cached_property
    def depot_by_id(self) -> dict[str, Depot]:
        return {d.id: d for d in self.depots}

    @cached_property
    def site_by_id(self) -> dict[str, Site]:
        return {s.id: s for s in self.sites}

    @cached_property
    def material_ids(self) -> frozenset[str]:
        return frozenset(m.id for m in self.materials)

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {
            "depot": self.depot_by_id,
            "site": self.site_by_id,
            "material": self.material_ids,
        }
        return names[what]

    @cached_property
    def cells(self) -> list[tuple[str, str, str]]:
        """Every (depot, site, material) a shipment may use: the depot holds the material
        and the site requests it."""
        return [
            (d.id, s.id, m.id)
            for d in self.depots
            for s in self.sites
            for m in self.materials
            if d.stock.get(m.id, 0) > 0 and s.requests.get(m.id, 0) > 0
        ]

    @cached_property
    def cell_set(self) -> frozenset[tuple[str, str, str]]:
        return frozenset(self.cells)

    # The loops of the checks, laid out once (in the order the checks walk them): each
    # entry carries its totals key, so a check reads a plan's totals without building keys.
    @cached_property
    def stock_pairs(self) -> tuple[tuple[tuple[str, str], str, str, int], ...]:
        """((depot, material), depot, material, units held) for each depot's stock entries."""
        return tuple(((x.id, m), x.id, m, have) for x in self.depots for m, have in x.stock.items())

    @cached_property
    def request_pairs(self) -> tuple[tuple[tuple[str, str], str, str, int], ...]:
        """((site, material), site, material, units requested, 0 if none) for each site and material."""
        return tuple(((s.id, m.id), s.id, m.id, s.requests.get(m.id, 0)) for s in self.sites for m in self.materials)

    @cached_property
    def route_pairs(self) -> tuple[tuple[tuple[str, str], str, str], ...]:
        """((depot, site), depot, site) for each depot and site."""
        return tuple(((x.id, s.id), x.id, s.id) for x in self.depots for s in self.sites)

    @cached_property
    def shortage_terms(self) -> tuple[tuple[tuple[str, str], int, int], ...]:
        """((site, material), site priority, units requested) for each site's requests."""
        return tuple(((s.id, m), s.priority, want) for s in self.sites for m, want in s.requests.items())

    @cached_property
    def requested_by_site(self) -> dict[str, int]:
        """Site id -> :meth:`requested`."""
        return {s.id: self.requested(s.id) for s in self.sites}

    @cached_property
    def numbers(self) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
        """Depot, site and material id -> its position in its list, from 1."""
        return (
            {x.id: n for n, x in enumerate(self.depots, 1)},
            {s.id: n for n, s in enumerate(self.sites, 1)},
            {m.id: n for n, m in enumerate(self.materials, 1)},
        )

    def requested(self, site: str) -> int:
        """Units the site requests (all materials)."""
        return sum(self.site_by_id[site].requests.values())


# -- Educational Resource Planning ------------------------------------------------------
class Slot(_Frozen):
    id: str
    day: int = Field(ge=0)


class Teacher(_Frozen):
    id: str
    subjects: dict[str, int] = Field(description="subject -> preference penalty (0 = first choice)")
    unavailable: tuple[str, ...] = Field(default=(), description="slot ids")


class Room(_Frozen):
    id: str
    seats: int = Field(ge=1)
    features: tuple[str, ...] = ()
    cost: int = Field(ge=0)


class Lesson(_Frozen):
    id: str
    name: str
    subject: str
    group: str = Field(description="the class group taking it")
    size: int = Field(ge=1)
    slot: str
    needs: tuple[str, ...] = ()
    kit: bool = Field(default=False, description="needs a laptop trolley unless its room has computers")


class EducationData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    slots: tuple[Slot, ...]
    teachers: tuple[Teacher, ...]
    rooms: tuple[Room, ...]
    lessons: tuple[Lesson, ...]
    uncertain: tuple[Uncertain, ...] = ()

    @cached_property
    def slot_index(self) -> dict[str, int]:
        return {s.id: i for i, s in enumerate(self.slots)}

    @cached_property
    def teacher_by_id(self) -> dict[str, Teacher]:
        return {t.id: t for t in self.teachers}

    @cached_property
    def room_by_id(self) -> dict[str, Room]:
        return {r.id: r for r in self.rooms}

    @cached_property
    def lesson_by_id(self) -> dict[str, Lesson]:
        return {x.id: x for x in self.lessons}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {
            "slot": self.slot_index,
            "teacher": self.teacher_by_id,
            "room": self.room_by_id,
            "lesson": self.lesson_by_id,
        }
        return names[what]

    @cached_property
    def day_of_slot(self) -> dict[str, int]:
        return {s.id: s.day for s in self.slots}

    @cached_property
    def numbers(self) -> tuple[dict[str, int], dict[str, int]]:
        """Teacher and room id -> its position in its list, from 1."""
        return {t.id: n for n, t in enumerate(self.teachers, 1)}, {r.id: n for n, r in enumerate(self.rooms, 1)}

    @cached_property
    def room_fits(self) -> tuple[frozenset[str], ...]:
        """For each lesson (by position), the ids of the rooms (as :attr:`room_by_id` reads
        them) with enough seats and every feature it needs."""
        return fitting_rooms(self.lessons, self.room_by_id)


# -- Student Grouping -------------------------------------------------------------------
class Student(_Frozen):
    id: str
    skill: int = Field(ge=0)
    track: str
    leadership: int = Field(ge=0)
    newcomer: bool = False
    wishes: tuple[str, ...] = Field(default=(), description="classmates this student would like to work with")


class GroupingData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    students: tuple[Student, ...]
    groups: int = Field(ge=1, description="number of groups; every group has at least one student")
    uncertain: tuple[Uncertain, ...] = ()

    @cached_property
    def student_by_id(self) -> dict[str, Student]:
        return {s.id: s for s in self.students}

    def names(self, what: str) -> Container[str]:
        """The names a rule's parameters may use, by what they name (``Params.data_problems``)."""
        names: dict[str, Container[str]] = {"student": self.student_by_id}
        return names[what]

    @cached_property
    def skill_of(self) -> dict[str, int]:
        """Student id -> skill (as :attr:`student_by_id` reads it)."""
        return {sid: s.skill for sid, s in self.student_by_id.items()}

    @cached_property
    def track_of(self) -> dict[str, str]:
        """Student id -> track (as :attr:`student_by_id` reads it)."""
        return {sid: s.track for sid, s in self.student_by_id.items()}

    @cached_property
    def position(self) -> dict[str, int]:
        return {s.id: i for i, s in enumerate(self.students)}

    @cached_property
    def tracks(self) -> list[str]:
        return sorted({s.track for s in self.students})

    @cached_property
    def wish_pairs(self) -> list[tuple[str, str]]:
        """(wisher, wished) in list order."""
        return [(s.id, w) for s in self.students for w in s.wishes]
