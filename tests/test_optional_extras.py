"""The core and every family load without the optional ``milp`` extra: the MILP back-ends
are the only modules that import PuLP, and nothing else imports them."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from pbsolve.kit import is_milp_backend

_WITHOUT_PULP = textwrap.dedent(
    """
    import sys

    class NoPulp:
        def find_spec(self, name, path=None, target=None):
            if name == "pulp" or name.startswith("pulp."):
                raise ImportError("pulp is not installed")

    sys.meta_path.insert(0, NoPulp())
    from pbsolve.family import all_tasks, family
    from pbsolve.generate import build_instance
    families = sorted({t.family for t in all_tasks()})
    for f in families:
        family(f)
    print(len(families), len(all_tasks()))
    """
)


def test_every_family_loads_with_pulp_missing():
    done = subprocess.run([sys.executable, "-c", _WITHOUT_PULP], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    families, tasks = (int(x) for x in done.stdout.split())
    assert families >= 6 and tasks >= 27


def test_milp_backends_are_named_milp_or_end_in_milp():
    assert is_milp_backend("milp") and is_milp_backend("budget_milp")
    assert not is_milp_backend("activities") and not is_milp_backend("milpy")
