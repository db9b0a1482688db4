"""The `reproduction:` entries resolved against the spec and checked before any data is read, each
error naming its key: the runs are the spec's, each side's runs are evaluated under its
collection, and the spec has a metric whose values can be compared. Nothing here imports numpy:
`irpipe validate` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.compare.plan import check_extra
from pipeline.errors import SpecError
from pipeline.reproduction.plan import Pair, ReproductionEntry, ReproductionPlan
from pipeline.spec.base import did_you_mean

if TYPE_CHECKING:
    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.spec import LoadedSpec

__all__ = ["compared_metrics", "reproduction_plan"]


def reproduction_plan(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool = True
) -> ReproductionPlan | None:
    """The spec's reproduction entries resolved, or None without any; SpecError naming the key
    when a run, a collection or the metrics do not fit."""
    spec = loaded.spec
    if not spec.reproduction:
        return None
    if spec.settings.engine == "spark":
        raise SpecError(
            f"{loaded.where('reproduction')}: reproductions are measured on the duckdb engine "
            "(ktu and rbo read the rankings); evaluate this spec with settings.engine: duckdb"
        )
    if data:
        check_extra(loaded.where("reproduction"), "measuring reproductions needs")
    entries = tuple(_entry(loaded, i) for i in range(len(spec.reproduction)))
    return ReproductionPlan(entries, tuple(m.label for m in _metrics(loaded, metrics)))


def compared_metrics(metrics: list[ResolvedMeasure]) -> list[ResolvedMeasure]:
    """The metrics whose per-query values repro_eval's measures compare: numbers averaged by
    their mean, by which runs are better or worse."""
    return [m for m in metrics
            if m.averaged and m.aggregator == "mean" and m.better is not None]  # fmt: skip


def _metrics(loaded: LoadedSpec, metrics: list[ResolvedMeasure]) -> list[ResolvedMeasure]:
    found = compared_metrics(metrics)
    if not found:
        raise SpecError(
            f"{loaded.where('reproduction')}: no metric of the spec is a mean over queries by "
            "which runs are better or worse, for rmse, er and the t-test to compare; add one, "
            "such as AP or nDCG@10"
        )
    return found


def _entry(loaded: LoadedSpec, index: int) -> ReproductionEntry:
    entry, key = loaded.spec.reproduction[index], ("reproduction", index)
    for role in ("original", "reproduced"):
        for i, run in enumerate(getattr(entry, role)):
            _check_run(loaded, (*key, role, i), run)
    for i, (a, b) in enumerate(zip(entry.original, entry.reproduced, strict=True)):
        if a == b:
            raise SpecError(f"{loaded.where(*key, 'reproduced', i)}: '{b}' is the original run "
                            "itself; name its reproduction")  # fmt: skip
    collection = _collection(loaded, key, "collection", entry.original, entry.collection)
    default = collection if _under(loaded, entry.reproduced, collection) else None
    reproduced = _collection(loaded, key, "reproduced_collection", entry.reproduced,
                             entry.reproduced_collection or default)  # fmt: skip
    pairs = tuple(Pair(a, b) for a, b in zip(entry.original, entry.reproduced, strict=True))
    return ReproductionEntry(index, pairs, collection, reproduced, entry.depth, entry.rbo_p)


def _check_run(loaded: LoadedSpec, key: tuple, run: str) -> None:
    runs = list(loaded.spec.runs)
    if run not in runs:
        raise SpecError(f"{loaded.where(*key)}: unknown run '{run}'; {did_you_mean(run, runs)}"
                        f"the spec's runs: {', '.join(runs)}")  # fmt: skip


def _under(loaded: LoadedSpec, runs: list[str], collection: str) -> bool:
    return all(collection in loaded.spec.runs[run].collections for run in runs)


def _collection(
    loaded: LoadedSpec, key: tuple, field: str, runs: list[str], named: str | None
) -> str:
    """The collection `runs` are compared under: `named`, under which each is evaluated, or the
    one collection they all are."""
    spec = loaded.spec
    if named is not None:
        if named not in spec.collections:
            known = list(spec.collections)
            raise SpecError(f"{loaded.where(*key, field)}: unknown collection '{named}'; "
                            f"{did_you_mean(named, known)}defined: {', '.join(known)}")  # fmt: skip
        outside = [run for run in runs if named not in spec.runs[run].collections]
        if outside:
            raise SpecError(f"{loaded.where(*key, field)}: run '{outside[0]}' is not evaluated "
                            f"under '{named}'; add it to the run's collection")  # fmt: skip
        return named
    shared = [c for c in spec.collections if _under(loaded, runs, c)]
    if len(shared) != 1:
        found = (
            f"they are all evaluated under {', '.join(shared)}"
            if shared
            else ("no collection has them all")
        )
        raise SpecError(f"{loaded.where(*key)}: say which collection the runs {', '.join(runs)} "
                        f"are compared under ({field}: NAME): {found}")  # fmt: skip
    return shared[0]
