"""Logistics Delivery Planning: the route simulation the grader relies on, answers naming
unknown entities, malformed data, and the TSPLIB importer (the published optima of gr17
and gr21 reproduced as certified optima, malformed files refused with the line at fault,
a tour and its reverse both graded correct)."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest
from pydantic import ValidationError

from pbsolve.checkers.routing import delivery as dl
from pbsolve.checkers.routing.delivery import DeliveryData, Plan
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.grading import grade
from pbsolve.models.routing import delivery as model
from pbsolve.schema import Instance
from pbsolve.sources import SourceError, SourceFile
from tests.test_cli import run

DATA = Path(__file__).parent / "data" / "tsplib"
OPTIMA = {row["problem"]: int(row["optimum"]) for row in csv.DictReader((DATA / "optimum.csv").open())}
NO_RULES = {t: 0 for t in ("basic", "medium", "hard", "stateful")}


def imported(name: str) -> Instance:
    options = GenerateOptions(task=dl.TASK_ID, source=SourceFile.read(DATA / name), counts=NO_RULES)
    found = build_instance(0, 0, options).instance
    assert found is not None
    return found


def small_data(**changes: object) -> DeliveryData:
    """Depot and three stops on a line (minutes 0-5-10-15 from the depot), two vans."""
    base: dict[str, object] = {
        "depot": "Hub",
        "stops": [
            {"id": "S1", "name": "1 Elm Street", "load": 2, "service": 1},
            {"id": "S2", "name": "2 Elm Street", "load": 3, "service": 1, "open": 20, "close": 30},
            {"id": "S3", "name": "3 Elm Street", "load": 1, "service": 1},
        ],
        "vehicles": [{"id": "Van 1", "kind": "van", "capacity": 5}, {"id": "Van 2", "kind": "van", "capacity": 5}],
        "minutes": [[0, 5, 10, 15], [5, 0, 5, 10], [10, 5, 0, 5], [15, 10, 5, 0]],
        "reloads": 1,
        "reload_minutes": 4,
    }
    return DeliveryData.model_validate({**base, **changes})


# -- the simulation ----------------------------------------------------------------------
def test_a_vehicle_arriving_before_a_window_waits_and_later_stops_shift_with_it():
    d = small_data()
    sim = dl.simulate(d, Plan({"Van 1": ("S1", "S2", "S3"), "Van 2": ()}))
    assert sim.start == {"S1": 5, "S2": 20, "S3": 26}  # S2 reached at 11, waits for 20
    assert sim.back == {"Van 1": 42, "Van 2": 0}
    assert sim.travel == {"Van 1": 30, "Van 2": 0}


def test_a_reload_returns_to_the_depot_and_each_trip_carries_only_its_own_load():
    d = small_data()
    sim = dl.simulate(d, Plan({"Van 1": ("S1", dl.RELOAD, "S3", "S2"), "Van 2": ()}))
    assert sim.onboard == {"S1": 2, "S3": 4, "S2": 3}
    assert sim.start["S3"] == 6 + 5 + 4 + 15  # leave S1 at 6, depot at 11, reload 4 min, drive 15
    assert [m for _, m in sim.trips] == [10, 30]


def test_with_pickups_the_load_grows_at_a_shop_and_falls_at_its_customer():
    d = small_data(
        stops=[
            {"id": "P1", "name": "Bakery", "load": 4, "service": 1, "delivery": "D1"},
            {"id": "D1", "name": "1 Mill Lane", "load": -4, "service": 1},
            {"id": "S3", "name": "3 Elm Street", "load": 0, "service": 1},
        ],
        pickups=True,
        reloads=0,
    )
    sim = dl.simulate(d, Plan({"Van 1": ("P1", "S3", "D1"), "Van 2": ()}))
    assert sim.onboard == {"P1": 0, "S3": 4, "D1": 4}
    assert sim.peak["P1"] == 4


# -- answers and data ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def instance() -> Instance:
    options = GenerateOptions(task=dl.TASK_ID, size="small", subtask="parcel_rounds", counts=NO_RULES | {"basic": 1})
    found = build_instance(3, 0, options).instance
    assert found is not None and found.certificate.status == "optimal"
    return found


def _format_item(inst: Instance, answer: dict) -> tuple[bool, str]:
    g = grade(inst, json.dumps(answer))
    fmt = next(c.id for c in inst.checklist if c.rule == "format")
    item = next(i for i in g.items if i.id == fmt)
    return item.passed, item.reason


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda rows: [{**rows[0], "vehicle": "Lorry 9"}, *rows[1:]], "unknown vehicle"),
        (lambda rows: [{**rows[0], "stops": [*rows[0]["stops"], "S99"]}, *rows[1:]], "unknown stop"),
        (lambda rows: [{**rows[0], "stops": rows[0]["stops"][1:]}, *rows[1:]], "missing"),
        (lambda rows: [{**rows[0], "stops": [rows[0]["stops"][0], *rows[0]["stops"]]}, *rows[1:]], "more than once"),
        (lambda rows: [{**rows[0], "stops": ["Depot", *rows[0]["stops"]]}, *rows[1:]], "Depot"),
    ],
)
def test_an_answer_naming_unknown_or_repeated_entities_fails_the_format_item_with_a_reason(instance, edit, reason):
    ref = instance.reference
    assert _format_item(instance, ref)[0]
    passed, why = _format_item(instance, {**ref, "routes": edit(ref["routes"])})
    assert not passed
    assert reason in why


def test_malformed_instance_data_is_a_clear_error():
    with pytest.raises(ValidationError, match="travel matrix must be 4 x 4"):
        small_data(minutes=[[0, 1], [1, 0]])
    with pytest.raises(ValidationError, match="closes before it opens"):
        small_data(
            stops=[
                {"id": "S1", "name": "x", "open": 10, "close": 5},
                {"id": "S2", "name": "y"},
                {"id": "S3", "name": "z"},
            ]
        )


def test_interchangeable_vans_are_one_class_unless_a_rule_names_one():
    d = small_data()
    assert dl.vehicle_classes(d, [], []) == [["Van 1", "Van 2"]]
    rule = model.make_rule("vehicle_off", "hard", dl.VehicleOff(vehicle="Van 2"))
    assert dl.vehicle_classes(d, [rule], []) == []


# -- TSPLIB ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(OPTIMA))
def test_the_certified_tour_length_of_a_published_file_equals_its_published_optimum(name):
    inst = imported(name)
    assert inst.certificate.status == "optimal"
    assert inst.certificate.objective == {"travel": OPTIMA[name]}
    assert [r.kind for r in inst.rules] == []


def test_a_tour_and_its_reverse_both_grade_as_correct_and_count_as_one_plan():
    inst = imported("gr17.tsp")
    route = inst.reference["routes"][0]
    forward = {**inst.reference}
    backward = {**inst.reference, "routes": [{**route, "stops": route["stops"][::-1]}]}
    assert grade(inst, json.dumps(forward)).all_pass == 1
    assert grade(inst, json.dumps(backward)).all_pass == 1
    assert inst.certificate.optimal_plans == 1  # the reverse is the same tour, not a second optimum


def _tsp(fmt: str, matrix: list[list[int]], kind: str = "TSP") -> str:
    n = len(matrix)
    cells = model._cells(fmt, n)
    numbers = " ".join(str(matrix[i][j]) for i, j in cells)
    return (
        f"NAME: t\nTYPE: {kind}\nDIMENSION: {n}\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: {fmt}\n"
        f"EDGE_WEIGHT_SECTION\n{numbers}\nEOF\n"
    )


@pytest.mark.parametrize("fmt", model.MATRIX_FORMATS)
def test_every_explicit_matrix_layout_reads_the_same_matrix(fmt):
    rng = random.Random(1)
    n = 5
    matrix = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            matrix[i][j] = matrix[j][i] = rng.randint(1, 99)
    got = model.read_source(SourceFile(name="t.tsp", text=_tsp(fmt, matrix)))
    assert got.subtask == "round_trip"
    assert got.data["minutes"] == matrix
    assert got.data["depot"] == "1" and [s["id"] for s in got.data["stops"]] == ["2", "3", "4", "5"]


GOOD = _tsp("LOWER_DIAG_ROW", [[0, 3, 4], [3, 0, 5], [4, 5, 0]])


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (GOOD.replace("3 0 4 5 0", "3 0 4 5"), "line 7"),  # truncated: one number short
        (GOOD.replace("3 0 4 5 0", "3 0 4 5 0 9"), "has 6 numbers, found 7"),  # wrong count
        (GOOD.replace("3 0 4", "3 x 4"), "line 7: 'x' is not"),  # a non-number
        (GOOD.replace("EDGE_WEIGHT_TYPE: EXPLICIT", "EDGE_WEIGHT_TYPE: EUC_2D"), "line 4: EDGE_WEIGHT_TYPE EUC_2D"),
        (GOOD.replace("LOWER_DIAG_ROW", "UPPER_COL"), "line 5: EDGE_WEIGHT_FORMAT UPPER_COL"),
        (GOOD.replace("TYPE: TSP", "TYPE: CVRP"), "line 2: TYPE CVRP"),
        (GOOD.replace("DIMENSION: 3", "DIMENSION: three"), "line 3: DIMENSION"),
        (GOOD.replace("EDGE_WEIGHT_SECTION\n", ""), "line 6"),
        (GOOD.replace("0 3 0", "7 3 0"), "diagonal"),
    ],
)
def test_a_malformed_file_is_refused_naming_the_file_and_the_line(text, needle):
    with pytest.raises(SourceError, match=r"bad\.tsp") as err:
        model.read_source(SourceFile(name="bad.tsp", text=text))
    assert needle in str(err.value)


def test_the_cli_generates_a_published_tour_end_to_end(tmp_path: Path):
    out = tmp_path / "gr17.jsonl"
    result = run(
        "generate", "--task", dl.TASK_ID, "--from", DATA / "gr17.tsp", "--rules", "none", "--n", "1", "--out", out
    )
    assert result.exit_code == 0, result.output
    inst = json.loads(out.read_text().splitlines()[0])
    assert inst["certificate"]["objective"] == {"travel": OPTIMA["gr17.tsp"]}
    assert "either direction is accepted" in inst["prompt"]
