"""A toy family: the template of a family kept outside pbsolve (see README, "Adding a family").

Three modules, one per side of the contract in :mod:`pbsolve.family`: ``models`` (the
taxonomy entry, the sampler, the CP-SAT model and the hard hooks), ``renderers`` (the
sentences and the prompt) and ``checkers`` (grading, without OR-Tools). The test suite
registers it with ``PBSOLVE_FAMILY_PATH=toy=tests.toy_family``; it is never shipped.
One task type (seat guests at tables), four rule kinds, a two-term objective and one
hard mechanism (infeasibility detection).
"""
