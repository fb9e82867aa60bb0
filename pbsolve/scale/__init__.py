"""Sharded, resumable, deduplicated dataset builds on local processes or Ray.

:mod:`~pbsolve.scale.shard` is the unit of work (an index range), :mod:`~pbsolve.scale.backends`
where it runs, :mod:`~pbsolve.scale.driver` the in-order writer with deduplication and
resume, :mod:`~pbsolve.scale.manifest` the record of a dataset and
:mod:`~pbsolve.scale.card` its README.
"""
