"""Test-session helper for mutation runs only (scripts/mutation.py appends an import of it
to the *staged* tests/conftest.py; the repo's own test runs never load it).

mutmut 3 forks one child per mutant from the process that ran the stats pass, and each
child starts a new pytest session: every session fixture is built again, and the suite's
fixtures build their instances with CP-SAT (``pbsolve.generate.build_instance``). Two
problems follow: (1) a second or more of solving per mutant, and (2) the build runs the
generator's self-check through the *mutated* grader, so a mutant can change which
instances the tests see (or make them skip) instead of being judged on them.

Instances are ground truth and must come from the unmutated code. So ``build_instance`` is
memoised per process: the first call (in the stats pass, where every trampoline runs the
original function) does the work, and every later call -- in a forked child too, which
inherits the memo -- gets an independent copy. The copy is a pickle round trip, which
drops ``Instance.memo`` (schema.Instance.__getstate__): each child validates and grades its
instances afresh, through the mutant.
"""

from __future__ import annotations

import pickle
from functools import wraps
from typing import Any

import pbsolve.generate as generate

_ORIGINAL = generate.build_instance
_BUILT: dict[tuple[int, int, str], bytes] = {}


@wraps(_ORIGINAL)
def build_instance(run_seed: int, index: int, options: Any) -> Any:
    """``pbsolve.generate.build_instance`` computed once per (seed, index, options)."""
    key = (run_seed, index, options.model_dump_json())
    if key not in _BUILT:
        _BUILT[key] = pickle.dumps(_ORIGINAL(run_seed, index, options))
    return pickle.loads(_BUILT[key])


generate.build_instance = build_instance
