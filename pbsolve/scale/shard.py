"""One shard: the certified instances of an index range, built in one worker.

A shard is the unit of work of a sharded run on any backend (local processes or Ray):
indices ``lo .. hi-1`` of one run seed, built one after the other with
:func:`pbsolve.generate.build_instance`, exactly as an unsharded run builds them. Its
result is plain data (instance lines, their problem hashes, one record per index), so it
crosses process and machine boundaries unchanged and the driver alone writes files.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pbsolve import interrupts
from pbsolve.canonical import problem_hash
from pbsolve.generate import GenerateOptions, build_instance
from pbsolve.jsonl import dumps
from pbsolve.scale.manifest import Stats
from pbsolve.schema import Instance

# Fault injection for the tests of worker loss: "<marker file>:<shard lo>" makes the
# worker building the shard that starts at <lo> die (os._exit) the first time, leaving the
# marker so that the retry goes through. Never set outside tests.
FAULT_ENV = "PBSOLVE_TEST_KILL_SHARD_ONCE"


@dataclass(frozen=True)
class ShardRange:
    """Shard ``k`` of a run: indices ``lo .. hi-1``."""

    k: int
    lo: int
    hi: int

    @property
    def label(self) -> str:
        return f"shard {self.k} (indices {self.lo}..{self.hi - 1})"


@dataclass(frozen=True)
class Facts:
    """What the dataset card counts of one instance."""

    family: str
    task: str
    tiers: tuple[str, ...]
    mechanisms: tuple[str, ...]
    determinacy: str
    margin: int | None

    @classmethod
    def of(cls, inst: Instance) -> Facts:
        cert = inst.certificate
        return cls(inst.family, inst.task, tuple(inst.tiers), tuple(inst.mechanisms), cert.determinacy, cert.margin)


def stats_of(facts: list[Facts]) -> Stats:
    """The card's counts over some instances."""
    family: Counter[str] = Counter()
    task: Counter[str] = Counter()
    tier: Counter[str] = Counter()
    mechanism: Counter[str] = Counter()
    determinacy: Counter[str] = Counter()
    margins = [f.margin for f in facts if f.margin is not None]
    for f in facts:
        family[f.family] += 1
        task[f.task] += 1
        tier.update(set(f.tiers))
        mechanism.update(set(f.mechanisms))
        determinacy[f.determinacy] += 1
    return Stats(
        family=dict(sorted(family.items())),
        task=dict(sorted(task.items())),
        tier=dict(sorted(tier.items())),
        mechanism=dict(sorted(mechanism.items())),
        determinacy=dict(sorted(determinacy.items())),
        margin_count=len(margins),
        margin_sum=sum(margins),
        margin_one=sum(m == 1 for m in margins),
    )


@dataclass
class ShardOutput:
    """What building one shard produced, in index order."""

    k: int
    lines: list[str] = field(default_factory=list)  # one canonical JSON line per certified instance
    hashes: list[str] = field(default_factory=list)  # the problem hash of each line
    indices: list[int] = field(default_factory=list)  # the index of each line
    facts: list[Facts] = field(default_factory=list)  # what the card counts of each line
    rejects: Counter[str] = field(default_factory=Counter)  # every re-sampled or failed attempt, by reason
    failed_indices: int = 0  # indices that certified nothing
    seconds: float = 0.0
    first_solve_s: float = 0.0
    uniqueness_s: float = 0.0
    interrupted: bool = False  # a stop request ended it: not a result


def shard_range(k: int, start: int, shard_size: int) -> ShardRange:
    lo = start + k * shard_size
    return ShardRange(k, lo, lo + shard_size)


def _maybe_die(lo: int) -> None:
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    marker, _, at = spec.rpartition(":")
    if int(at) == lo and not Path(marker).exists():
        Path(marker).write_text("killed once\n")
        os._exit(17)


def build_shard(seed: int, rng: ShardRange, options: GenerateOptions) -> ShardOutput:
    """Every index of the shard, in order (a :class:`~pbsolve.generate.CheckerDisagreement`
    propagates: it is a bug, never a reject); an interrupt gives a marked, empty output."""
    _maybe_die(rng.lo)
    out = ShardOutput(k=rng.k)
    try:
        for index in range(rng.lo, rng.hi):
            o = build_instance(seed, index, options)
            out.seconds += o.seconds
            out.first_solve_s += o.first_solve_s
            out.uniqueness_s += o.uniqueness_s
            if o.instance is None:
                out.failed_indices += 1
                out.rejects.update(o.reasons() or ["no reason recorded"])
                continue
            out.rejects.update(o.rejects)
            out.lines.append(dumps(o.instance))
            out.hashes.append(problem_hash(o.instance))
            out.indices.append(index)
            out.facts.append(Facts.of(o.instance))
    except interrupts.Interrupted:
        return ShardOutput(k=rng.k, interrupted=True)
    return out
