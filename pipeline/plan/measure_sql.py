"""Every measure's SQL under a spec's settings: each measure asked for each part (its per-query
value, its value for a query the run lacks, for an emptied ranking) over its view of the columns,
bound to what it declared it needs. A metric with `judged_only=true` reads the condensed ranking
(its judged rows, ranked again: `ranking.condensed_sql`), whose derived columns are built from
its own needs."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.contract.columns import Columns, Requirements, flatten
from pipeline.measures.resolve import columns_of, declared_needs
from pipeline.measures.resolved import ResolvedMeasure
from pipeline.spec import Settings

__all__ = [
    "CompiledMeasure",
    "CompiledMeasures",
    "compile_measures",
    "typed",
]


@dataclass(frozen=True)
class CompiledMeasure:
    """One measure's SQL: its label and kind (number or text), the expression of its value over
    a ranking (`value_sql`, an aggregate per run and query), its value for a query none of whose
    documents is judged or that the run lacks (`missing_sql`, over the query's facts), and its
    value for a ranking that -J or -M emptied (`empty_sql`; None when no ranking can be emptied)."""

    label: str
    kind: str
    value_sql: str
    missing_sql: str
    empty_sql: str | None
    condensed: bool = False  # over the condensed ranking (`judged_only=true`)


@dataclass(frozen=True)
class CompiledMeasures:
    """The SQL of every measure, in spec order; the derived columns they need built (`req`: every
    need, from which the qrels' tables are made; `ranked`: those of the ranking, `condensed`: those
    of the condensed ranking, None when no metric reads it); and whether a ranking the run gave
    can be emptied (-J, -M 0: then each measure has its `empty_sql`)."""

    measures: tuple[CompiledMeasure, ...]
    req: Requirements
    can_empty: bool
    ranked: Requirements = Requirements()
    condensed: Requirements | None = None


def compile_measures(metrics: list[ResolvedMeasure], settings: Settings) -> CompiledMeasures:
    """Every measure's SQL under these settings."""
    c = columns_of(settings)
    declared = [declared_needs(m, c) for m in metrics]
    # -J and -M 0 can empty a ranking the run did give; trec_eval evaluates it as empty.
    can_empty = settings.judged_only or settings.max_docs == 0
    # Under -J the ranking is the condensed one already: judged_only changes nothing.
    condensed = [m.judged_only and not settings.judged_only for m in metrics]
    compiled = (
        _compiled(m, c.bound(needs, f"metric {m.label!r} ({type(m.measure).__name__})"), can_empty, alone)
        for m, needs, alone in zip(metrics, declared, condensed, strict=True)
    )  # fmt: skip
    return CompiledMeasures(
        tuple(compiled),
        Requirements(flatten(declared)),
        can_empty,
        ranked=_of(declared, condensed, False),
        condensed=_of(declared, condensed, True) if any(condensed) else None,
    )


def _of(declared: list[tuple], condensed: list[bool], which: bool) -> Requirements:
    """The needs of the metrics over the ranking (`which` False) or the condensed one."""
    return Requirements(flatten(n for n, c in zip(declared, condensed, strict=True) if c == which))


def _compiled(
    m: ResolvedMeasure, view: Columns, can_empty: bool, condensed: bool
) -> CompiledMeasure:
    """One measure's parts, each over its view of the columns (bound to what it declared). A
    measure over the condensed ranking has an `empty_sql` too: for a query whose ranking holds
    nothing judged, it is what -J makes of it."""
    measure, p = m.measure, m.params
    return CompiledMeasure(
        label=m.label,
        kind=measure.kind,
        value_sql=measure.per_query(p, view),
        missing_sql=measure.missing(p, view),
        empty_sql=measure.empty(p, view) if can_empty or condensed else None,
        condensed=condensed,
    )


def typed(expr: str, kind: str) -> str:
    """`expr` cast to the SQL type of a measure of `kind`: VARCHAR for text, else DOUBLE."""
    return f"CAST({expr} AS {'VARCHAR' if kind == 'text' else 'DOUBLE'})"
