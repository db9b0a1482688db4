"""The SQL of the plan's tables, around the ranking (`ranking.py`). Pure, no I/O.

runs, collections, metrics   names from the spec, as bound values
facts      per (collection, query): counts and ideal DCGs from the qrels, one GROUP BY
ideal_*    the ideal ranking of each query, for the measures that walk it
wide       per (run, query): one column per measure (filled batch by batch by the ranking)
per_query  the query set (`queries` setting) in long form: run, collection, qid, metric,
           value, text (fixed columns, whatever the metrics)
aggregate  per (run, metric): the measure's aggregator over the query set, and n_queries
curve_*    the same two tables for the measures compiled beside the spec's for its
           precision-recall outputs (`derived.py`), so that per_query and aggregate hold only
           the spec's metrics
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.contract.columns import Requirements
from pipeline.plan.missing_rankings import BOGUS_FLAG, BOGUS_TABLE, POSITIVE_JUDGMENTS, reset_bogus
from pipeline.plan.ranking import ranking_length, select_list
from pipeline.plan.statement import Statement

if TYPE_CHECKING:
    from pipeline.measures.registry import ResolvedMeasure
    from pipeline.plan.measure_sql import CompiledMeasure, CompiledMeasures
    from pipeline.spec import LoadedSpec, Settings

__all__ = [
    "aggregate_sql",
    "aggregate_tables",
    "Names",
    "PerQueryOptions",
    "name_tables",
    "per_query_options",
    "probes",
    "result_tables",
    "run_names",
    "run_setup_tables",
    "setup_tables",
    "values_table",
    "wide_sql",
]


def setup_tables(req: Requirements, bogus: bool) -> list[Statement]:
    """The qrels' tables, made before any run is read: facts, ideal rankings."""
    return [
        Statement(_facts_sql(req)),
        *([POSITIVE_JUDGMENTS] if bogus else []),
        *(Statement(_ideal_sql(tag, gain)) for tag, gain in req.ideal_lists.items()),
    ]


def run_setup_tables(wide: str, bogus: bool) -> list[Statement]:
    """The tables the runs' rankings fill, made empty before any run is read: trec_eval -c's
    bogus rankings, and `wide` (`wide`: its SQL, as the ranking fills it)."""
    return [
        *([BOGUS_TABLE] if bogus else []),
        Statement(f"CREATE TABLE wide AS {wide} LIMIT 0"),  # run_rows is still empty here
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
    `wide` (None if no measure reads it); `bogus`: queries the run lacked were ranked as
    trec_eval -c ranks them, then reset by name; `cached`: the rows of the runs in
    `cached_runs` are read from `cached_values`."""

    measures: tuple[CompiledMeasure, ...]
    query_set: str
    by_presence: bool
    length: str | None
    bogus: bool
    cached: bool = False


def per_query_options(
    compiled: CompiledMeasures, settings: Settings, judged_rows: bool, bogus: bool
) -> PerQueryOptions:
    """The options of a plan's per-query tables (the runs' values all computed)."""
    return PerQueryOptions(
        measures=compiled.measures,
        query_set=settings.query_set,
        by_presence=compiled.can_empty or judged_rows,
        length=_unjudged_length(compiled.req, settings, judged_rows),
        bogus=bogus,
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
    return tables + aggregate_tables(options.bogus, curves)


def aggregate_tables(bogus: bool, curves: bool) -> list[Statement]:
    """aggregate (and curve_aggregate) from the per-query tables: all an engine that computes
    per_query elsewhere (Spark's shards) runs on the whole."""
    tables = [Statement(aggregate_sql(bogus))]
    if curves:
        tables.append(
            Statement(aggregate_sql(False, "curve_per_query", "curve_metrics", "curve_aggregate"))
        )
    return tables


def probes(compiled: CompiledMeasures, ranked: str) -> list[Statement]:
    """Per measure: its value over the ranking `ranked` (SQL: the full plan's, which reads every
    column) and its missing value over the facts, no rows."""
    length = ", 0 AS num_ret" if compiled.req.has("length") else ""
    facts = f"(SELECT f.*{length} FROM facts f)"
    return [
        Statement(
            f"SELECT * FROM ({wide_sql((m,), ranked, compiled.req)}) "
            f"UNION ALL BY NAME SELECT {_typed(m.missing_sql, m.kind)} AS absent FROM {facts} "
            "LIMIT 0"
        )
        for m in compiled.measures
    ]


def name_tables(loaded: LoadedSpec, metrics: list[ResolvedMeasure]) -> list[Statement]:
    """Names from the spec enter the database as bound values, never as SQL text: the runs'
    (`run_names`), the collections' and the metrics'."""
    collections = [(name, c.num_docs) for name, c in loaded.spec.collections.items()]
    rows = [(i, m.label, m.measure.aggregator, m.canonical) for i, m in enumerate(metrics)]
    return [
        *run_names(loaded),
        *values_table("collections", "collection VARCHAR, num_docs BIGINT", collections),
        *values_table(
            "metrics",
            "ordinal INTEGER, metric VARCHAR, aggregator VARCHAR, canonical VARCHAR",
            rows,
        ),
    ]


def run_names(loaded: LoadedSpec) -> list[Statement]:
    """The table `runs`: each run's ordinal, name and collection."""
    runs = [(i, name, r.collection) for i, (name, r) in enumerate(loaded.spec.runs.items())]
    return values_table("runs", "ordinal INTEGER, run VARCHAR, collection VARCHAR", runs)


def values_table(name: str, columns: str, rows: list[tuple]) -> list[Statement]:
    """A table of `columns` holding `rows`, every value bound (names from a spec are data)."""
    width = len(columns.split(","))
    placeholders = ", ".join("(" + ", ".join("?" * width) + ")" for _ in rows)
    params = [value for row in rows for value in row]
    return [
        Statement(f"CREATE TABLE {name} ({columns})"),
        Statement(f"INSERT INTO {name} VALUES {placeholders}", params),
    ]


def _facts_sql(req: Requirements) -> str:
    return f"""
CREATE TABLE facts AS
WITH judged AS (
    SELECT q.*, col.num_docs{select_list(req.of_kind("judged_window"))}
    FROM qrels q JOIN collections col USING (collection)
)
SELECT collection, qid{select_list(req.of_kind("fact"))}
FROM judged
GROUP BY collection, qid"""


def _ideal_sql(tag: str, gain: str) -> str:
    """The ideal ranking of each query: judged documents with positive gain, by gain descending."""
    return f"""
CREATE TABLE ideal_{tag} AS
WITH ordered AS (
    SELECT collection, qid, g, row_number() OVER (PARTITION BY collection, qid ORDER BY g DESC) AS pos
    FROM (SELECT collection, qid, {gain} AS g FROM qrels WHERE rel >= 0) WHERE g > 0
),
prefix AS (
    SELECT *, sum(g / log2(pos + 1)) OVER up AS idcg, sum(greatest(g, 1)) OVER up AS cost,
        lead(g) OVER up IS DISTINCT FROM g AS change
    FROM ordered
    WINDOW up AS (PARTITION BY collection, qid ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
SELECT *,
    coalesce(sum(CASE WHEN change THEN 1 / idcg ELSE 0 END) OVER later, 0) AS tail,
    coalesce(sum(CASE WHEN change THEN 1 ELSE 0 END) OVER later, 0) AS tail_count
FROM prefix
WINDOW later AS (PARTITION BY collection, qid ORDER BY pos DESC
                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)"""


def wide_sql(measures: tuple[CompiledMeasure, ...], ranked: str, req: Requirements) -> str:
    """Per (run, query) over `ranked`: one column per measure, and the lists of the Python path."""
    columns = {f"m{i}": _typed(m.value_sql, m.kind) for i, m in enumerate(measures)}
    columns |= req.of_kind("grades")  # lists for the Python path
    return f"""
WITH {ranked}
SELECT run, collection, qid{select_list(columns)}
FROM ranked
GROUP BY run, collection, qid"""


def _typed(expr: str, kind: str) -> str:
    return f"CAST({expr} AS {'VARCHAR' if kind == 'text' else 'DOUBLE'})"


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
    flag = BOGUS_FLAG if options.bogus else ""
    columns = select_list(_filled_columns(options, names.ordinals))
    return f"""
CREATE TABLE {names.table} AS
WITH expected AS ({_expected(options)}
),
filled AS (
    SELECT e.ordinal, e.run, e.collection, e.qid{flag}{columns}
    FROM expected e {join} wide w ON w.run = e.run AND w.qid = e.qid
    {where}
)
SELECT run, collection, qid, metric, value, text FROM ({_long_rows(options, names)})
ORDER BY ordinal, qid, metric_ordinal"""


def _expected(options: PerQueryOptions) -> str:
    """The rows expected: each run's collection's queries (but the cached runs')."""
    length = options.length
    num_ret = "" if length is None else f", {length} AS num_ret"
    lengths = "" if length is None else " LEFT JOIN present p ON p.run = runs.run AND p.qid = f.qid"
    evaluated = " WHERE runs.run NOT IN (SELECT run FROM cached_runs)" if options.cached else ""
    return f"""
    SELECT runs.ordinal, runs.run, f.*{num_ret}
    FROM runs JOIN facts f USING (collection){lengths}{evaluated}"""


def _filled_columns(options: PerQueryOptions, ordinals: range) -> dict[str, str]:
    """Each measure's column: its value in `wide`, else its value for a query without one."""
    columns = {}
    for i in ordinals:
        m = options.measures[i]
        absent = _typed(m.missing_sql, m.kind)
        if m.empty_sql is not None:
            absent = f"CASE WHEN {_PRESENT} THEN {_typed(m.empty_sql, m.kind)} ELSE {absent} END"
        columns[f"m{i}"] = f"CASE WHEN w.qid IS NULL THEN {absent} ELSE w.m{i} END"
    return columns


def _long_rows(options: PerQueryOptions, names: Names) -> str:
    """One row per query and metric, the value in the column of its kind (`_COLUMN`)."""
    # Both columns always: the table's shape never depends on which metrics a spec names.
    picks = {kind: _pick(options.measures, kind, names.ordinals) for kind in _COLUMN}
    if options.bogus:
        picks = {kind: reset_bogus(kind, pick) for kind, pick in picks.items()}
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
FROM cached_values c JOIN runs USING (run) JOIN {names.metrics} m USING (metric)
WHERE c.tbl = '{names.table}'"""


_COLUMN = {"number": "value", "text": "text"}


def _pick(measures: tuple[CompiledMeasure, ...], kind: str, ordinals: range) -> str:
    """The column of each metric's ordinal, for the metrics of one kind among `ordinals`."""
    whens = " ".join(f"WHEN {i} THEN f.m{i}" for i in ordinals if measures[i].kind == kind)
    return f"CASE m.ordinal {whens} END" if whens else _typed("NULL", kind)


def aggregate_sql(
    bogus: bool = False,
    source: str = "per_query",
    metrics: str = "metrics",
    table: str = "aggregate",
) -> str:
    """The aggregate table; with trec_eval -c's bogus rankings, `num_rel` is the number of qrels
    lines with a grade > 0, whatever the relevance level (trec_eval's summary does this).
    `source`, `metrics`, `table`: the per-query table read, its metrics' names, the table made."""
    value = _AGGREGATED
    if bogus:
        num_rel = "(SELECT j.n FROM positive_judgments j WHERE j.collection = p.collection)"
        value = f"CASE WHEN p.metric = 'num_rel' THEN {num_rel} ELSE {value} END"
    return f"""
CREATE TABLE {table} AS
SELECT p.run, p.collection, p.metric, {value} AS value, count(p.value) AS n_queries
FROM {source} p
JOIN {metrics} m USING (metric)
JOIN runs USING (run)
WHERE m.aggregator <> 'none'
GROUP BY runs.ordinal, p.run, p.collection, p.metric, m.ordinal, m.aggregator
ORDER BY runs.ordinal, m.ordinal"""


# trec_eval sums in query order; so does this, so that means print the same to the last digit.
_AGGREGATED = """CASE m.aggregator
        WHEN 'sum' THEN sum(p.value ORDER BY p.qid)
        WHEN 'gmean' THEN exp(sum(ln(greatest(p.value, 1e-5)) ORDER BY p.qid) / count(p.value))
        ELSE sum(p.value ORDER BY p.qid) / count(p.value)
    END"""
