"""Allocation plan readings the mutation campaign mutF found unguarded, one behaviour each.

read_plan of material allocation and procurement reads a row spelled as the instance
spells it inline (a shortcut) and falls back to the field-by-field read of
pbsolve.checker_kit.row_names on any KeyError or TypeError. A shortcut that read another
field (the field name upper-cased or marked) would fall back for a usual row, but read
the wrong name from a row that also carries such a look-alike field: these tests give
every row one, naming another listed depot, site, material (or supplier, item, week), and
the row must read exactly as without it.

The survivors argued equivalent are in scripts/mutation_equivalents.toml (section of
campaign mutF).
"""

from __future__ import annotations

from typing import Any

import pytest

from pbsolve.checkers.allocation import material as ma
from pbsolve.checkers.allocation import procurement as pr


# == Material Allocation ======================================================================
def _relief() -> ma.MaterialData:
    """Two depots holding both materials, two sites requesting both."""
    return ma.MaterialData.model_validate({
        "materials": [{"id": "water", "unit": "crate"}, {"id": "tents", "unit": "tent"}],
        "depots": [{"id": "North", "stock": {"water": 5, "tents": 5}},
                   {"id": "South", "stock": {"water": 5, "tents": 5}}],
        "sites": [{"id": "Camp A", "priority": 1, "requests": {"water": 4, "tents": 4}},
                  {"id": "Camp B", "priority": 2, "requests": {"water": 4, "tents": 4}}],
        "cost": {"North": {"Camp A": 1, "Camp B": 2}, "South": {"Camp A": 2, "Camp B": 1}},
    })  # fmt: skip


# Other spellings of a shipment's own field names: upper case, capitalised, and marked.
SHIPMENT_DECOYS = ["DEPOT", "Depot", "XXdepotXX", "SITE", "Site", "XXsiteXX", "MATERIAL", "Material", "XXmaterialXX"]


@pytest.mark.parametrize("decoy", SHIPMENT_DECOYS)
def test_a_shipment_is_read_from_its_own_field_names_and_a_look_alike_field_is_ignored(decoy: str) -> None:
    """The look-alike field names the other listed depot, site or material: the shipment
    reads exactly as without it."""
    relief = _relief()
    own: dict[str, Any] = {"depot": "North", "site": "Camp A", "material": "water", "units": 3}
    other = {"depot": "South", "site": "Camp B", "material": "tents"}[decoy.strip("X").lower()]
    plan, why = ma.TASK.read_plan(relief, {"shipments": [{**own, decoy: other}]}, ma.TASK.lookups(relief), [])
    assert why == "complete plan"
    assert plan == {("North", "Camp A", "water"): 3}


# == Procurement Planning =====================================================================
def _purchasing() -> pr.ProcurementData:
    """Three weeks, two items, two suppliers selling both with no lead time."""
    return pr.ProcurementData.model_validate({
        "periods": ["W1", "W2", "W3"],
        "items": [{"id": "bolts", "unit": "box", "initial_stock": 0, "holding_cost": 1, "demand": [1, 1, 1]},
                  {"id": "nuts", "unit": "box", "initial_stock": 0, "holding_cost": 1, "demand": [1, 1, 1]}],
        "suppliers": [{"id": "Acme", "lead_time": 0, "capacity": 9, "fixed_cost": 1,
                       "offers": [{"item": "bolts", "price": 2}, {"item": "nuts", "price": 2}]},
                      {"id": "Brix", "lead_time": 0, "capacity": 9, "fixed_cost": 1,
                       "offers": [{"item": "bolts", "price": 3}, {"item": "nuts", "price": 3}]}],
    })  # fmt: skip


# Other spellings of an order's own field names: upper case, capitalised, and marked.
ORDER_DECOYS = ["SUPPLIER", "Supplier", "XXsupplierXX", "ITEM", "Item", "XXitemXX", "WEEK", "Week", "XXweekXX"]


@pytest.mark.parametrize("decoy", ORDER_DECOYS)
def test_an_order_is_read_from_its_own_field_names_and_a_look_alike_field_is_ignored(decoy: str) -> None:
    """The look-alike field names the other listed supplier, item or a later week: the
    order reads exactly as without it."""
    purchasing = _purchasing()
    own: dict[str, Any] = {"supplier": "Acme", "item": "bolts", "week": "W1", "quantity": 3}
    other = {"supplier": "Brix", "item": "nuts", "week": "W3"}[decoy.strip("X").lower()]
    rows = [{**own, decoy: other}]
    plan, why = pr.TASK.read_plan(purchasing, {"orders": rows}, pr.TASK.lookups(purchasing), [])
    assert why == "complete plan"
    assert plan == {("Acme", "bolts", 0): 3}
