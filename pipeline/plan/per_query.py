"""The SQL of the result tables, once every batch of runs is ranked into `wide`. Pure, no I/O.

per_query  the query set (`queries` setting) in long form: run, collection, qid, metric,
           value, text (fixed columns, whatever the metrics)
aggregate  per (run, collection, metric): the measure's aggregator over the query set, and
           n_queries
curve_*    the same two tables for the measures compiled beside the spec's for its
           precision-recall outputs (`output_tables.py`), so that per_query and aggregate hold
           only the spec's metrics
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.contract.columns import Requirements
from pipeline.plan.exact_mean import exact_mean
from pipeline.plan.measure_sql import CompiledMeasure, CompiledMeasures, typed
from pipeline.plan.missing_rankings import MISSING_RANKING_FLAG, reset_missing_ranking
from pipeline.plan.ranking import ranking_length, select_list
from pipeline.plan.statistics import statistic
from pipeline.sql import Statement

if TYPE_CHECKING:
    from pipeline.spec import Settings

__all__ = [
    "Names",
    "PerQueryOptions",
    "aggregate_sql",
    "aggregate_tables",
    "per_query_options",
    "result_tables",
]


@dataclass(frozen=True)
class Names:
    """Where a per-query table goes: its name, the table naming its metrics (ordinal, metric,
    aggregator), and which of `wide`'s measure columns (by ordinal) those are."""

    table: str
    metrics: str
    ordinals: range


@dataclass(frozen=True)
class PerQueryOptions:
    """What every per-query table of a plan is made of: the measures' SQL (a query without a row
    in `wide` gets its `missing_sql`, or its `empty_sql` if the run has it but -J or -M emptied
    it); the query set (`queries` setting); `by_presence`: `wide` may lack answered queries, so
    the intersection is taken on `present`; `length`: the `num_ret` of a query without a row in
    `wide` (None if no measure reads it); `missing_rankings`: queries the run lacked were
    ranked as trec_eval -c ranks them, then reset by name; `cached`: the rows of the runs in
    `cached_runs` are read from `cached_values`."""

    measures: tuple[CompiledMeasure, ...]
    query_set: str
    by_presence: bool
    length: str | None
    missing_rankings: bool
    cached: bool = False
    #: a measure averages with `exact_mean` (its SQL is then in the aggregate statement)
    exact_mean: bool = False
    #: the statistics over queries measures aggregate by (`statistics.STATISTICS`: Latency's),
    #: whose SQL is then in the aggregate statement
    statistics: tuple[str, ...] = ()


def per_query_options(
    compiled: CompiledMeasures,
    settings: Settings,
    judged_rows: bool,
    missing_rankings: bool,
    exact_mean: bool = False,
    statistics: tuple[str, ...] = (),
) -> PerQueryOptions:
    """The options of a plan's per-query tables (the runs' values all computed); `statistics`:
    the statistics over queries the metrics aggregate by."""
    return PerQueryOptions(
        statistics=statistics,
        measures=compiled.measures,
        query_set=settings.query_set,
        by_presence=compiled.can_empty or judged_rows,
        length=_unjudged_length(compiled.req, settings, judged_rows),
        missing_rankings=missing_rankings,
        exact_mean=exact_mean,
    )


def result_tables(options: PerQueryOptions, spec_metrics: int | None = None) -> list[Statement]:
    """per_query and aggregate, once every batch is ranked into `wide`. `spec_metrics`: how many
    of the measures (the first ones) are the spec's; the others go to curve_per_query and
    curve_aggregate, by the same SQL, so their values are what the spec's would be."""
    measures = len(options.measures)
    count = measures if spec_metrics is None else spec_metrics
    curves = count < measures
    tables = [Statement(_per_query_sql(options, Names("per_query", "metrics", range(count))))]
    if curves:
        names = Names("curve_per_query", "curve_metrics", range(count, measures))
        tables.append(Statement(_per_query_sql(options, names)))
    statistics = options.statistics
    return tables + aggregate_tables(
        options.missing_rankings, curves, options.exact_mean, statistics
    )


def aggregate_tables(
    missing_rankings: bool,
    curves: bool,
    exact_mean: bool = False,
    statistics: tuple[str, ...] = (),
) -> list[Statement]:
    """aggregate (and curve_aggregate) from the per-query tables: all an engine that computes
    per_query elsewhere (Spark's shards) runs on the whole. `exact_mean`: a metric averages by
    `exact_mean`; `statistics`: metrics aggregate by these statistics over queries."""
    statement = aggregate_sql(missing_rankings, exact_mean=exact_mean, statistics=statistics)
    tables = [Statement(statement)]
    if curves:
        tables.append(
            Statement(aggregate_sql(False, "curve_per_query", "curve_metrics", "curve_aggregate"))
        )
    return tables


def _unjudged_length(req: Requirements, settings: Settings, judged_rows: bool) -> str | None:
    """SQL `num_ret` of a query without a row in `wide` (if a measure reads it): the run's
    ranking when only judged rows were kept; else that query has no ranking."""
    if not req.has("length"):
        return None
    return ranking_length(settings, "coalesce(p.retrieved, 0)") if judged_rows else "0"


_PRESENT = "EXISTS (SELECT 1 FROM present p WHERE p.run = e.run AND p.qid = e.qid)"


def _per_query_sql(options: PerQueryOptions, names: Names) -> str:
    """Every expected query in long form, in the table `names.table`, for the metrics `names`
    holds (see `PerQueryOptions`)."""
    # The intersection is taken on the run as given, before -J, -M or the judged-rows plan.
    intersection = options.query_set == "intersection"
    join = "JOIN" if intersection and not options.by_presence else "LEFT JOIN"
    where = f"WHERE {_PRESENT}" if intersection and options.by_presence else ""
    flag = MISSING_RANKING_FLAG if options.missing_rankings else ""
    columns = select_list(_filled_columns(options, names.ordinals))
    return f"""
CREATE TABLE {names.table} AS
WITH expected AS ({_expected(options)}
),
filled AS (
    SELECT e.ordinal, e.run, e.collection, e.qid{flag}{columns}
    FROM expected e {join} wide w ON w.run = e.run AND w.collection = e.collection AND w.qid = e.qid
    {where}
)
SELECT run, collection, qid, metric, value, text FROM ({_long_rows(options, names)})
ORDER BY ordinal, qid, metric_ordinal"""


def _expected(options: PerQueryOptions) -> str:
    """The rows expected: the queries of each collection a run is evaluated under (but those
    of the (run, collection) pairs whose values are cached)."""
    length = options.length
    num_ret = "" if length is None else f", {length} AS num_ret"
    lengths = "" if length is None else " LEFT JOIN present p ON p.run = runs.run AND p.qid = f.qid"
    evaluated = (
        " ANTI JOIN cached_runs c ON c.run = runs.run AND c.collection = runs.collection"
        if options.cached
        else ""
    )
    return f"""
    SELECT runs.ordinal, runs.run, f.*{num_ret}
    FROM runs JOIN facts f USING (collection){lengths}{evaluated}"""


def _filled_columns(options: PerQueryOptions, ordinals: range) -> dict[str, str]:
    """Each measure's column: its value in `wide`, else its value for a query without one."""
    columns = {}
    for i in ordinals:
        m = options.measures[i]
        absent = typed(m.missing_sql, m.kind)
        if m.empty_sql is not None:
            absent = f"CASE WHEN {_PRESENT} THEN {typed(m.empty_sql, m.kind)} ELSE {absent} END"
        columns[f"m{i}"] = f"CASE WHEN w.qid IS NULL THEN {absent} ELSE w.m{i} END"
    return columns


def _long_rows(options: PerQueryOptions, names: Names) -> str:
    """One row per query and metric, the value in the column of its kind (`_COLUMN`)."""
    # Both columns always: the table's shape never depends on which metrics a spec names.
    picks = {kind: _pick(options.measures, kind, names.ordinals) for kind in _COLUMN}
    if options.missing_rankings:
        picks = {kind: reset_missing_ranking(kind, pick) for kind, pick in picks.items()}
    cells = "".join(f",\n    {pick} AS {_COLUMN[kind]}" for kind, pick in picks.items())
    computed = f"""
SELECT f.ordinal, m.ordinal AS metric_ordinal, f.run, f.collection, f.qid, m.metric{cells}
FROM filled f CROSS JOIN {names.metrics} m"""
    return _with_cached(computed, names) if options.cached else computed


def _with_cached(computed: str, names: Names) -> str:
    """The computed rows and the cached runs' rows, ordered alike (run and metric ordinals)."""
    return f"""{computed}
UNION ALL BY NAME
SELECT runs.ordinal, m.ordinal AS metric_ordinal, c.run, c.collection, c.qid, c.metric,
    c.value, c.text
FROM cached_values c JOIN runs USING (run, collection) JOIN {names.metrics} m USING (metric)
WHERE c.tbl = '{names.table}'"""


_COLUMN = {"number": "value", "text": "text"}


def _pick(measures: tuple[CompiledMeasure, ...], kind: str, ordinals: range) -> str:
    """The column of each metric's ordinal, for the metrics of one kind among `ordinals`."""
    whens = " ".join(f"WHEN {i} THEN f.m{i}" for i in ordinals if measures[i].kind == kind)
    return f"CASE m.ordinal {whens} END" if whens else typed("NULL", kind)


def aggregate_sql(
    missing_rankings: bool = False,
    source: str = "per_query",
    metrics: str = "metrics",
    table: str = "aggregate",
    exact_mean: bool = False,
    statistics: tuple[str, ...] = (),
) -> str:
    """The aggregate table; with trec_eval -c's missing rankings, `num_rel` is the number of qrels
    lines with a grade > 0, whatever the relevance level (trec_eval's summary does this).
    `source`, `metrics`, `table`: the per-query table read, its metrics' names, the table made;
    `exact_mean`: a metric averages by `exact_mean` (else its SQL is left out); `statistics`:
    the statistics over queries metrics aggregate by (`statistics.STATISTICS`)."""
    value = _aggregated(exact_mean, statistics)
    if missing_rankings:
        num_rel = "(SELECT j.n FROM positive_judgments j WHERE j.collection = p.collection)"
        value = f"CASE WHEN p.metric = 'num_rel' THEN {num_rel} ELSE {value} END"
    return f"""
CREATE TABLE {table} AS
SELECT p.run, p.collection, p.metric, {value} AS value, count(p.value) AS n_queries
FROM {source} p
JOIN {metrics} m USING (metric)
JOIN runs USING (run, collection)
WHERE m.aggregator <> 'none'
GROUP BY runs.ordinal, p.run, p.collection, p.metric, m.ordinal, m.aggregator
ORDER BY runs.ordinal, m.ordinal"""


def _aggregated(exact: bool, statistics: tuple[str, ...] = ()) -> str:
    """Each aggregator's value over a group of `p` rows; `exact`: with `exact_mean`'s, statistics.mean's
    correctly rounded mean (`exact_mean.py`); `statistics`: with those statistics over the
    queries (`statistics.py`: Latency's median, percentiles, max, QPS)."""
    cases = [f"WHEN '{name}' THEN {statistic(name, 'p.value', 'p.qid')}" for name in statistics]
    if exact:
        cases.insert(0, f"WHEN 'exact_mean' THEN {exact_mean('p.value', 'p.metric')}")
    if not cases:
        return _AGGREGATED
    return _AGGREGATED.replace("ELSE", "\n        ".join([*cases, "ELSE"]), 1)


# trec_eval sums in query order; so does this, so that means print the same to the last digit.
_AGGREGATED = """CASE m.aggregator
        WHEN 'sum' THEN sum(p.value ORDER BY p.qid)
        WHEN 'gmean' THEN exp(sum(ln(greatest(p.value, 1e-5)) ORDER BY p.qid) / count(p.value))
        ELSE sum(p.value ORDER BY p.qid) / count(p.value)
    END"""
