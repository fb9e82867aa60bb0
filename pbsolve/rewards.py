"""The public reward module: ``pbsolve.rewards``, a re-export of :mod:`pbsolve.serve.rewards`.

Trainers load this file by path (verl's ``custom_reward_function.path``, OpenRLHF's
``--remote_rm_url``; ``python -c "import pbsolve.rewards as r; print(r.__file__)"`` prints
it). However it is loaded, it hands out the installed module's objects, so caches, the
instance store and the exception classes are the ones ``import pbsolve.serve.rewards`` gives.
"""

from __future__ import annotations

# A star import: this module is the public name of that one.
from pbsolve.serve.rewards import *  # noqa: F403
from pbsolve.serve.rewards import __all__  # noqa: F401
