"""Size settings: every task type's sizes are named, validated, immutable settings (one per
size), and its sampler reads them by name."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from pbsolve.kit import SIZE_NAMES, IntRange, PositiveRange, Settings, SizeTable
from pbsolve.family import all_tasks, families
from pbsolve.models.allocation import material
from pbsolve.models.scheduling import TASK_MODULES as SCHEDULING_MODULES
from pbsolve.models.scheduling import meeting_planning
from pbsolve.schema import GenerationSpec

# every shipped family's task modules (the scheduling family keeps its own table)
MODULES = {**SCHEDULING_MODULES}
for _family in families().values():
    MODULES |= getattr(_family, "TASK_MODULES", {})


def test_every_task_type_of_every_family_has_its_size_settings_tested():
    assert {t.id for t in all_tasks()} <= set(MODULES)


@pytest.mark.parametrize("task", sorted(MODULES))
def test_every_task_has_one_settings_instance_per_size(task):
    table = MODULES[task].SIZES
    assert isinstance(table, SizeTable)
    settings = [table.of(size) for size in SIZE_NAMES]
    assert all(isinstance(s, Settings) for s in settings)
    assert len({type(s) for s in settings}) == 1  # one settings model per task type


@pytest.mark.parametrize("task", sorted(MODULES))
def test_task_settings_are_frozen_and_reject_unknown_fields(task):
    tiny = MODULES[task].SIZES.tiny
    field = next(iter(type(tiny).model_fields))
    with pytest.raises(ValidationError):
        setattr(tiny, field, getattr(tiny, field))
    with pytest.raises(ValidationError):
        type(tiny)(**tiny.model_dump(), colour="red")


def test_a_range_with_lo_above_hi_is_rejected():
    with pytest.raises(ValidationError, match="empty range"):
        IntRange(lo=5, hi=4)


def test_a_positive_range_rejects_zero():
    assert PositiveRange(lo=1, hi=1).lo == 1
    with pytest.raises(ValidationError):
        PositiveRange(lo=0, hi=3)


def test_a_count_of_zero_is_rejected():
    good = meeting_planning.SIZES.small.model_dump()
    with pytest.raises(ValidationError):
        meeting_planning.MeetingSizes(**{**good, "rooms": 0})


def test_more_meetings_than_topics_are_rejected():
    good = meeting_planning.SIZES.small.model_dump()
    with pytest.raises(ValidationError, match="topic"):
        meeting_planning.MeetingSizes(**{**good, "meetings": {"lo": 1, "hi": len(meeting_planning.TOPICS) + 1}})


def test_an_unknown_size_is_an_error_naming_the_known_ones():
    with pytest.raises(KeyError, match="tiny, small, default"):
        meeting_planning.SIZES.of("huge")  # type: ignore[arg-type]


def _spec(task: str, family: str, subtask: str, size: str) -> GenerationSpec:
    return GenerationSpec.model_construct(family=family, task=task, subtask=subtask, size=size, seed=0)


def test_the_meeting_sampler_reads_its_settings_by_name(monkeypatch):
    small = meeting_planning.SIZES.small
    wider = small.model_copy(update={"rooms": 4, "people": 5, "last_start": 15, "meetings": PositiveRange(lo=6, hi=6)})
    monkeypatch.setattr(meeting_planning, "SIZES", meeting_planning.SIZES.model_copy(update={"small": wider}))
    ent = meeting_planning.entities(_spec("meeting_planning", "scheduling", "cross_team_sync", "small"), random.Random(1))
    assert (len(ent.rooms), len(ent.people), len(ent.events), len(ent.slots)) == (4, 5, 6, 15 - 9 + 1)


def test_the_material_sampler_draws_route_costs_up_to_the_setting(monkeypatch):
    one = material.SIZES.default.model_copy(update={"max_route_cost": 1})
    monkeypatch.setattr(material, "SIZES", material.SIZES.model_copy(update={"default": one}))
    data, _ = material._entities(_spec("material_allocation", "allocation", "disaster_relief", "default"), random.Random(3))
    assert {c for row in data.cost.values() for c in row.values()} == {1}


@pytest.mark.parametrize("task", sorted(MODULES))
def test_every_task_certifies_instances_at_the_large_size(task):
    """`large` is the stress size: bigger than default in its entities, still certified."""
    from pbsolve.generate import GenerateOptions, build_instance

    table = MODULES[task].SIZES
    assert table.large != table.default
    emitted = (build_instance(1, i, GenerateOptions(task=task, size="large")).instance for i in range(4))
    assert any(inst is not None and inst.spec.size == "large" for inst in emitted)  # stops at the first
