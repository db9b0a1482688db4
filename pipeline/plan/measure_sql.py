"""Every measure's SQL under a spec's settings: each measure asked for each part (its per-query
value, its value for a query the run lacks, for an emptied ranking) over its view of the columns,
bound to what it declared it needs."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.contract.columns import Columns, Requirements, flatten
from pipeline.measures.resolve import columns_of, declared_needs
from pipeline.measures.resolved import ResolvedMeasure
from pipeline.spec import Settings

__all__ = [
    "MeasureSql",
    "measure_sql",
    "measures_sql",
]


def measure_sql(
    metrics: list[ResolvedMeasure], views: list[Columns], part: str
) -> list[tuple[str, str]]:
    """(SQL, kind) of one part of each measure (`per_query`, `missing`, `empty`), each over its
    view of the columns (bound to what it declared)."""
    return [
        (getattr(m.measure, part)(m.params, view), m.measure.kind)
        for m, view in zip(metrics, views, strict=True)
    ]


@dataclass(frozen=True)
class MeasureSql:
    """The SQL of every measure, each part in spec order as (expression, kind), and what they
    need built."""

    values: list[tuple[str, str]]
    missing: list[tuple[str, str]]
    empty: list[tuple[str, str]] | None  # None: no ranking can be emptied (-J, -M 0)
    req: Requirements


def measures_sql(metrics: list[ResolvedMeasure], settings: Settings) -> MeasureSql:
    """Every measure's SQL under these settings."""
    c = columns_of(settings)
    declared = [declared_needs(m, c) for m in metrics]
    views = [
        c.bound(needs, f"metric {m.label!r} ({type(m.measure).__name__})")
        for m, needs in zip(metrics, declared, strict=True)
    ]
    # -J and -M 0 can empty a ranking the run did give; trec_eval evaluates it as empty.
    can_empty = settings.judged_only or settings.max_docs == 0
    empty = measure_sql(metrics, views, "empty") if can_empty else None
    return MeasureSql(
        measure_sql(metrics, views, "per_query"),
        measure_sql(metrics, views, "missing"),
        empty,
        Requirements(flatten(declared)),
    )
