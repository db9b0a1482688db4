"""The `pools:` section resolved against the spec and checked before any data is read.

A pool's runs are the collection's runs (`runs: all`) or those named; a name given to a run path
that is a glob pattern stands for every run it expands to. Groups for leave-one-out come from the
`groups` pattern: runs whose match (its first group, if it has one) is equal form one group; a
run it does not match is a group of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.errors import SpecError
from pipeline.plan.generated_names import apart_from
from pipeline.spec.base import did_you_mean
from pipeline.spec.levels import level_of

if TYPE_CHECKING:
    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.spec import LoadedSpec
    from pipeline.spec.judgment_sets import Overlay
    from pipeline.spec.pools import Pool

__all__ = ["PoolPlan", "pool_plans"]

#: RRF's constant (Cormack, Clarke and Buettcher, 2009): a document at rank r scores 1/(60 + r)
RRF_K = 60


@dataclass(frozen=True)
class PoolPlan:
    """One pool, resolved: its runs in spec order with their groups, and what it writes. Its
    `exclude` qrels are loaded among the qrels as collection `excluded_as` (a name apart from
    the spec's collections) before they move to a table of their own."""

    index: int
    name: str
    collection: str
    qrels: Path | Overlay | None  # the collection's qrels: a file, an overlay, or none yet
    kind: str  # depth, rrf, combsum, uniform
    size: int
    seed: int
    exclude: Path | None
    excluded_as: str | None  # given `exclude`
    runs: tuple[str, ...]
    groups: tuple[str, ...]  # the leave-one-out group of each run, in the order of `runs`
    metrics: tuple[str, ...]  # leave_one_out: labels
    judged_at: int
    outputs: tuple[tuple[Path, str], ...]  # (path, level)

    @property
    def leaves_out(self) -> bool:
        """Whether an output needs the leave-one-out evaluation."""
        return any(level_of(level).evaluates_again for _, level in self.outputs)

    @property
    def kept_rank(self) -> int | None:
        """How deep each run's ranking is kept: the depth (or Judged@k's k, if deeper); every
        document for the methods that read whole rankings."""
        return max(self.size, self.judged_at) if self.kind == "depth" else None

    def manifest(self) -> dict:
        """What every output of the pool records about it."""
        method = {self.kind: self.size, **({"rrf_k": RRF_K} if self.kind == "rrf" else {})}
        return {
            "name": self.name,
            "collection": self.collection,
            "method": method,
            "seed": self.seed,
            "exclude": str(self.exclude) if self.exclude else None,
            "runs": list(self.runs),
            "groups": dict(zip(self.runs, self.groups, strict=True)),
        }


def pool_plans(loaded: LoadedSpec, metrics: list[ResolvedMeasure]) -> list[PoolPlan]:
    """Every pool of the spec, resolved; SpecError naming the key when one does not fit."""
    if loaded.spec.pools and loaded.spec.settings.engine != "duckdb":
        raise SpecError(
            f"{loaded.where('pools')}: pools are built by the duckdb engine, from local run "
            f"files, not by {loaded.spec.settings.engine}; evaluate this spec with the duckdb "
            "engine, or move the pools to a spec of their own"
        )
    plans = []
    for index, (name, pool) in enumerate(loaded.spec.pools.items()):
        key = ("pools", name)
        collection = _collection(loaded, key, pool)
        runs = _runs(loaded, key, pool)
        plans.append(
            PoolPlan(
                index, name, pool.collection, collection, pool.kind, pool.size, pool.seed,
                pool.exclude, _excluded_as(loaded, name, pool), runs,
                _groups(loaded, key, pool, runs),
                _metrics(loaded, key, pool, metrics), pool.judged_at,
                tuple((o.path, o.level) for o in pool.outputs),
            )
        )  # fmt: skip
        _check_leave_one_out(loaded, key, plans[-1])
    return plans


def _excluded_as(loaded: LoadedSpec, name: str, pool: Pool) -> str | None:
    """The collection name the pool's `exclude` qrels are loaded under: none of the spec's."""
    if pool.exclude is None:
        return None
    return apart_from([f"{name} exclude"], loaded.spec.collections)[0]


def _collection(loaded: LoadedSpec, key: tuple, pool: Pool) -> Path | Overlay | None:
    known = list(loaded.spec.collections)
    if pool.collection not in known:
        raise SpecError(
            f"{loaded.where(*key, 'collection')}: unknown collection '{pool.collection}'; "
            f"{did_you_mean(pool.collection, known)}defined: {', '.join(known)}"
        )
    return loaded.spec.collections[pool.collection].qrels


def _runs(loaded: LoadedSpec, key: tuple, pool: Pool) -> tuple[str, ...]:
    """The pooled runs in spec order: each one of the pool's collection."""
    runs, fused = loaded.spec.runs, loaded.spec.fused_inputs()
    if pool.runs == "all":  # the runs submitted: a fused run adds no document of its own
        chosen = [name for name, run in runs.items()
                  if pool.collection in run.collections and name not in fused]  # fmt: skip
        if not chosen:
            raise SpecError(
                f"{loaded.where(*key, 'collection')}: no run is of collection "
                f"'{pool.collection}': there is nothing to pool"
            )
        return tuple(chosen)
    chosen = []
    for i, name in enumerate(pool.runs):
        expanded = _expanded(runs, name)
        where = loaded.where(*key, "runs", i)
        if not expanded:
            raise SpecError(
                f"{where}: unknown run '{name}'; {did_you_mean(name, list(runs))}"
                f"defined: {', '.join(list(runs)[:10])}"
            )
        for run in expanded:
            if run in fused:
                raise SpecError(
                    f"{where}: run '{run}' is fused from {', '.join(r for r, _ in fused[run])}; "
                    "a pool holds the runs submitted (its inputs add the same documents)"
                )
            if pool.collection not in runs[run].collections:
                raise SpecError(
                    f"{where}: run '{run}' is of collection "
                    f"{', '.join(repr(c) for c in runs[run].collections)}, and the pool of "
                    f"'{pool.collection}'; a pool holds the runs of one collection"
                )
        chosen += [run for run in expanded if run not in chosen]
    return tuple(chosen)


def _expanded(runs: dict, name: str) -> list[str]:
    """The runs a name stands for: itself, or every run its glob pattern expanded to."""
    if name in runs:
        return [name]
    return [run for run in runs if run.startswith(f"{name}/")]


def _groups(loaded: LoadedSpec, key: tuple, pool: Pool, runs: tuple[str, ...]) -> tuple[str, ...]:
    """Each run's leave-one-out group: its own name, or its match of the `groups` pattern."""
    if pool.groups is None:
        return runs
    where = loaded.where(*key, "groups")
    try:
        pattern = re.compile(pool.groups)
    except re.error as exc:
        raise SpecError(f"{where}: not a regular expression: {exc}") from None
    matches = [pattern.search(run) for run in runs]
    if not any(matches):
        raise SpecError(
            f"{where}: the pattern {pool.groups!r} matches none of the pool's runs "
            f"({', '.join(runs[:5])}{', ...' if len(runs) > 5 else ''}); every run would be "
            "a group of its own: fix the pattern or remove `groups`"
        )
    return tuple(_group(m, run) for m, run in zip(matches, runs, strict=True))


def _group(match: re.Match | None, run: str) -> str:
    if match is None:
        return run
    return match.group(1) if match.re.groups and match.group(1) is not None else match.group(0)


def _metrics(
    loaded: LoadedSpec, key: tuple, pool: Pool, metrics: list[ResolvedMeasure]
) -> tuple[str, ...]:
    """The labels leave-one-out reports: those named, or every metric with a number per query."""
    numeric = [m.label for m in metrics if m.averaged]
    if pool.metrics is None:
        return tuple(numeric)
    for i, label in enumerate(pool.metrics):
        if label not in numeric:
            raise SpecError(
                f"{loaded.where(*key, 'metrics', i)}: '{label}' is not a metric of this spec "
                f"with a number per query; {did_you_mean(label, numeric)}known: "
                f"{', '.join(numeric)}"
            )
    return tuple(pool.metrics)


def _check_leave_one_out(loaded: LoadedSpec, key: tuple, plan: PoolPlan) -> None:
    if not plan.leaves_out:
        return
    i, level = next(
        (i, level) for i, (_, level) in enumerate(plan.outputs) if level_of(level).evaluates_again
    )
    if not plan.metrics:
        raise SpecError(
            f"{loaded.where(*key, 'outputs', i, 'level')}: {level} compares metrics with a "
            "number per query, and the spec has none; add one (AP, nDCG@10, ...)"
        )
    if plan.qrels is None:
        raise SpecError(
            f"{loaded.where(*key, 'outputs', i, 'level')}: leave_one_out evaluates the runs, "
            f"and collection '{plan.collection}' has no qrels yet; add its qrels once judged, "
            "or remove this output"
        )
