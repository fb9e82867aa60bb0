"""Session fixtures: a small certified set, generated once per test session (per xdist worker).

For every scheduling task type the set holds the first plain feasible instance (certificate
status "optimal", no hard or reporting mechanism) and the first infeasible one (forced "hard" tier, i.e. infeasibility
detection) found from index 0 upwards. Everything is ``size="small"``: the whole set
takes well under a second to certify.

Instances are shared between tests: never mutate one (deep-copy ``reference`` first).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from pbsolve import params
from pbsolve.family import family
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.schema import Instance

# Scheduling only: the tests using these fixtures read timetables (tests/helpers.py). Every
# family and task type is covered by the registry suite (tests/test_registry_*.py).
TASKS = tuple(t.id for t in family("scheduling").spec.tasks)
SEED = 0
MAX_INDEX = 12  # indices tried per (task, status) before giving up


def _first(task: str, status: str) -> Instance | None:
    opts = GenerateOptions(task=task, size="small", force_tiers=["hard"] if status == "infeasible" else [])
    for index in range(MAX_INDEX):
        inst = build_instance(SEED, index, opts).instance
        if inst is not None and inst.certificate.status == status and (status == "infeasible" or not inst.mechanisms):
            return inst
    return None


def _by_task(status: str) -> dict[str, Instance]:
    found = {task: _first(task, status) for task in TASKS}
    return {task: inst for task, inst in found.items() if inst is not None}


@pytest.fixture(scope="session")
def feasible_instances() -> dict[str, Instance]:
    """task id -> one certified feasible instance (status 'optimal')."""
    found = _by_task("optimal")
    assert found, "no feasible instance could be certified"
    return found


@pytest.fixture(scope="session")
def infeasible_instances() -> dict[str, Instance]:
    """task id -> one certified infeasible instance (status 'infeasible', with conflict sets)."""
    found = _by_task("infeasible")
    assert found, "no infeasible instance could be certified"
    return found


@pytest.fixture(scope="session")
def any_instance(feasible_instances: dict[str, Instance]) -> Instance:
    """One feasible meeting-planning instance."""
    if "meeting_planning" not in feasible_instances:
        pytest.skip("no feasible meeting_planning instance in the small set")
    return feasible_instances["meeting_planning"]


@pytest.fixture(scope="session")
def any_infeasible_instance(infeasible_instances: dict[str, Instance]) -> Instance:
    """One infeasible meeting-planning instance."""
    if "meeting_planning" not in infeasible_instances:
        pytest.skip("no infeasible meeting_planning instance in the small set")
    return infeasible_instances["meeting_planning"]


@pytest.fixture(params=TASKS)
def feasible_instance(request: pytest.FixtureRequest, feasible_instances: dict[str, Instance]) -> Instance:
    """Each task's feasible instance in turn (skipped when the small set has none)."""
    if request.param not in feasible_instances:
        pytest.skip(f"no feasible {request.param} instance in the small set")
    return feasible_instances[request.param]


@pytest.fixture(params=TASKS)
def infeasible_instance(request: pytest.FixtureRequest, infeasible_instances: dict[str, Instance]) -> Instance:
    """Each task's infeasible instance in turn (skipped when the small set has none)."""
    if request.param not in infeasible_instances:
        pytest.skip(f"no infeasible {request.param} instance in the small set")
    return infeasible_instances[request.param]


# -- mutation testing ------------------------------------------------------------------------
# mutmut runs each mutant against the tests it saw reach the mutated function in one "stats"
# pass over the whole selection (MUTANT_UNDER_TEST == "stats" in that pass). Instances are
# shared between tests (tests/instances.py caches them per process) and every instance caches
# what grading derives from it (Instance.memo: parsed data, lookups, parameters, the
# validation verdict), so only the first test to grade an instance would reach those
# functions and be run against their mutants. In the stats pass, every instance's cache is
# therefore emptied before each test: every test computes what it uses, and is run against
# the mutants of it. The same holds in a mutant's run: mutmut forks it from the process that
# ran the stats pass, so the per-process instance cache comes with the caches the original
# code filled, and a mutant of a cached function would never run. So under mutmut (any
# MUTANT_UNDER_TEST) every instance that ever cached something is emptied before each
# test, and so is the per-class cache of the fields that name data (params._named_fields,
# whose helpers would otherwise never run in a mutant's child). Outside mutmut nothing
# changes.
_MEMOISED: weakref.WeakValueDictionary[int, Instance] = weakref.WeakValueDictionary()  # by id: models do not hash


@pytest.fixture(scope="session", autouse=True)
def _instances_seen_in_mutmut_stats() -> Iterator[None]:
    if "MUTANT_UNDER_TEST" not in os.environ:
        yield
        return
    original = Instance.memo

    def memo(self: Instance, key: str, make: Any) -> Any:
        _MEMOISED[id(self)] = self
        return original(self, key, make)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Instance, "memo", memo)
        yield


@pytest.fixture(autouse=True)
def _fresh_instance_caches_in_mutmut_stats(_instances_seen_in_mutmut_stats: None) -> None:
    if "MUTANT_UNDER_TEST" not in os.environ:
        return
    for inst in list(_MEMOISED.values()):  # kept registered: a forked mutant run inherits the registry
        inst.memo_clear()
    params._named_fields.cache_clear()


# -- an extended audit: the brute-force suite on more seeds -----------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--brute-force-seeds",
        metavar="FIRST:COUNT",
        default=None,
        help="hold the certificates against exhaustive enumeration (tests/test_registry_bruteforce.py) on "
        "COUNT seeds from FIRST per task type and per mechanism, instead of each family's own few",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Applied before collection: the brute-force tests are parametrised by the adapters' seeds."""
    spec = config.getoption("--brute-force-seeds")
    if spec is None:
        return
    first, sep, count = spec.partition(":")
    if not (sep and first.isdigit() and count.isdigit() and int(count) > 0):
        raise pytest.UsageError(f"--brute-force-seeds wants FIRST:COUNT (two whole numbers, COUNT > 0), got {spec!r}")
    from tests.family_adapters import ADAPTERS  # imports the families: only when asked

    seeds = range(int(first), int(first) + int(count))
    for a in ADAPTERS.values():
        a.seeds = a.mechanism_seeds = seeds
