"""The SQL of the plan's tables before and around the ranking (`ranking.py`); the per-query and
aggregate tables after it are `per_query.py`'s. Pure, no I/O.

runs, collections, metrics   names from the spec, as bound values
facts      per (collection, query): counts and ideal DCGs from the qrels, one GROUP BY (and the
           subtopic judgments' facts: `subtopic_tables.py`)
ideal_*    the ideal ranking of each query, for the measures that walk it
wide       per (run, query): one column per measure (filled batch by batch by the ranking)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.contract.columns import Requirements, exact_running_sum
from pipeline.plan import subtopic_tables
from pipeline.plan.in_order import aggregates_in_order
from pipeline.plan.measure_sql import typed
from pipeline.plan.missing_rankings import MISSING_RANKINGS_TABLE, POSITIVE_JUDGMENTS
from pipeline.plan.ranking import select_list
from pipeline.spec.inputs import file_name
from pipeline.sql import Statement

if TYPE_CHECKING:
    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.plan.measure_sql import CompiledMeasure, CompiledMeasures
    from pipeline.spec import LoadedSpec

__all__ = [
    "name_tables",
    "probes",
    "run_names",
    "run_setup_tables",
    "setup_tables",
    "values_table",
    "wide_sql",
]


def setup_tables(req: Requirements, missing_rankings: bool) -> list[Statement]:
    """The qrels' tables, made before any run is read: the subtopic judgments' tables, facts,
    ideal rankings."""
    return [
        *subtopic_tables.setup(req),
        Statement(_facts_sql(req)),
        *([POSITIVE_JUDGMENTS] if missing_rankings else []),
        *(Statement(_ideal_sql(tag, gain)) for tag, gain in req.ideal_lists.items()),
    ]


def run_setup_tables(wide: str, missing_rankings: bool) -> list[Statement]:
    """The tables the runs' rankings fill, made empty before any run is read: trec_eval -c's
    missing rankings, and `wide` (`wide`: its SQL, as the ranking fills it)."""
    return [
        *([MISSING_RANKINGS_TABLE] if missing_rankings else []),
        Statement(f"CREATE TABLE wide AS {wide} LIMIT 0"),  # run_rows is still empty here
    ]


def probes(compiled: CompiledMeasures, ranked: str) -> list[Statement]:
    """Per measure: its value over the ranking `ranked` (SQL: the full plan's, which reads every
    column) and its missing value over the facts, no rows."""
    length = ", 0 AS num_ret" if compiled.req.has("length") else ""
    facts = f"(SELECT f.*{length} FROM facts f)"
    return [
        Statement(
            f"SELECT * FROM ({wide_sql((m,), ranked, compiled.req)}) "
            f"UNION ALL BY NAME SELECT {typed(m.missing_sql, m.kind)} AS absent FROM {facts} "
            "LIMIT 0"
        )
        for m in compiled.measures
    ]


def name_tables(loaded: LoadedSpec, metrics: list[ResolvedMeasure]) -> list[Statement]:
    """Names from the spec enter the database as bound values, never as SQL text: the
    collections' and the metrics' here, the runs' in `run_names`."""
    collections = [(name, c.num_docs) for name, c in loaded.spec.collections.items()]
    rows = [(i, m.label, m.aggregator, m.canonical) for i, m in enumerate(metrics)]
    return [
        *values_table("collections", "collection VARCHAR, num_docs BIGINT", collections),
        *values_table(
            "metrics",
            "ordinal INTEGER, metric VARCHAR, aggregator VARCHAR, canonical VARCHAR",
            rows,
        ),
    ]


def run_names(loaded: LoadedSpec) -> list[Statement]:
    """The table `runs`: a row per run and collection it is evaluated under, its ordinal the
    order of the result tables (runs in spec order, a run's collections in its list's order)."""
    pairs = [(_loaded_as(name, r, c), c) for name, r in loaded.spec.runs.items()
             for c in r.collections]  # fmt: skip
    rows = [(i, name, collection) for i, (name, collection) in enumerate(pairs)]
    return values_table("runs", "ordinal INTEGER, run VARCHAR, collection VARCHAR", rows)


def _loaded_as(name: str, run, collection: str) -> str:
    """The name a run's rows are loaded under for `collection` (`inputs.file_name` for a run
    with a file per collection), which `renamed_runs` renames `name` once evaluated."""
    return file_name(name, collection) if getattr(run, "per_collection", False) else name


#: the result tables holding run names, renamed once every run is evaluated
RESULT_TABLES = ("runs", "per_query", "aggregate", "curve_per_query", "curve_aggregate")


def renamed_runs(loaded: LoadedSpec, curves: bool) -> list[Statement]:
    """A run with one file per collection is evaluated as one run per file (its rows loaded
    under `inputs.file_name`, each under its collection); these statements give the result
    tables the run's own name (nothing for a spec without such a run)."""
    pairs = [(file_name(name, c), name) for name, r in loaded.spec.runs.items()
             if getattr(r, "per_collection", False) for c in r.collections]  # fmt: skip
    if not pairs:
        return []
    tables = RESULT_TABLES if curves else RESULT_TABLES[:3]
    statements = values_table("run_files", "loaded_as VARCHAR, run VARCHAR", pairs)
    return statements + [
        Statement(f"UPDATE {t} SET run = f.run FROM run_files f WHERE {t}.run = f.loaded_as")
        for t in tables
    ]


def values_table(name: str, columns: str, rows: list[tuple]) -> list[Statement]:
    """A table of `columns` holding `rows`, every value bound (names from a spec are data), made
    by one statement: DuckDB's fixed cost per statement is most of a small evaluation's time."""
    typed = [column.split() for column in columns.split(",")]
    if not rows:  # a spec that only compares judgment sets has no runs, nor metrics
        return [Statement(f"CREATE TABLE {name} ({columns})")]
    row = "(" + ", ".join("?" * len(typed)) + ")"
    names = ", ".join(column for column, _ in typed)
    casts = ", ".join(f"CAST({column} AS {kind}) AS {column}" for column, kind in typed)
    params = [value for row_values in rows for value in row_values]
    values = ", ".join(row for _ in rows)
    return [Statement(f"CREATE TABLE {name} AS SELECT {casts} FROM (VALUES {values}) v({names})",
                      params)]  # fmt: skip


def _facts_sql(req: Requirements) -> str:
    facts = f"""
WITH judged AS (
    SELECT q.*, col.num_docs{select_list(req.of_kind("judged_window"))}
    FROM qrels q JOIN collections col USING (collection)
)
SELECT collection, qid{select_list(_in_order(req.of_kind("fact"), "docno"))}
FROM judged
GROUP BY collection, qid"""
    return f"CREATE TABLE facts AS {subtopic_tables.facts_with_subtopics(facts, req)}"


def _ideal_sql(tag: str, gain: str) -> str:
    """The ideal ranking of each query: judged documents with positive gain, by gain descending."""
    return f"""
CREATE TABLE ideal_{tag} AS
WITH ordered AS (
    SELECT collection, qid, g, row_number() OVER (PARTITION BY collection, qid ORDER BY g DESC) AS pos
    FROM (SELECT collection, qid, {gain} AS g FROM qrels WHERE rel >= 0) WHERE g > 0
),
prefix AS (
    SELECT *, {exact_running_sum("g / log2(pos + 1)", "up")} AS idcg,
        {exact_running_sum("greatest(g, 1)", "up")} AS cost,
        lead(g) OVER up IS DISTINCT FROM g AS change
    FROM ordered
    WINDOW up AS (PARTITION BY collection, qid ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
SELECT *,
    coalesce({exact_running_sum("CASE WHEN change THEN 1 / idcg ELSE 0 END", "later")}, 0) AS tail,
    coalesce(sum(CASE WHEN change THEN 1 ELSE 0 END) OVER later, 0) AS tail_count
FROM prefix
WINDOW later AS (PARTITION BY collection, qid ORDER BY pos DESC
                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)"""


def wide_sql(measures: tuple[CompiledMeasure, ...], ranked: str, req: Requirements) -> str:
    """Per (run, query) over `ranked`: one column per measure, and the lists of the Python path;
    the measures over the condensed ranking (`judged_only=true`) from `ranked_condensed`."""
    columns = {
        f"m{i}": typed(m.value_sql, m.kind) for i, m in enumerate(measures) if not m.condensed
    }
    columns = _in_order(columns | req.of_kind("grades"), "rank")  # lists for the Python path
    values = f"""
SELECT run, collection, qid{select_list(columns)}
FROM ranked
GROUP BY run, collection, qid"""
    if not any(m.condensed for m in measures):
        return f"\nWITH {ranked}{values}"
    return f"\nWITH {ranked}{_with_condensed(measures, values, req)}"


def _with_condensed(measures: tuple[CompiledMeasure, ...], values: str, req: Requirements) -> str:
    """`values` (per run and query, over the ranking) with the measures over the condensed
    ranking in their places; a query whose ranking holds nothing judged gets their `empty_sql`,
    over its facts and an empty ranking's length, as under -J."""
    condensed = {f"m{i}": typed(m.value_sql, m.kind) for i, m in enumerate(measures) if m.condensed}
    condensed = _in_order(condensed, "rank")
    columns = {
        f"m{i}": f"CASE WHEN c.qid IS NULL THEN {typed(m.empty_sql, m.kind)} ELSE c.m{i} END"
        if m.condensed else f"v.m{i}"
        for i, m in enumerate(measures)
    }  # fmt: skip
    columns |= {name: f"v.{name}" for name in req.of_kind("grades")}
    return f"""
SELECT v.run, v.collection, v.qid{select_list(columns)}
FROM ({values}) v
JOIN (SELECT *, 0 AS num_ret FROM facts) f ON f.collection = v.collection AND f.qid = v.qid
LEFT JOIN (SELECT run, qid{select_list(condensed)}
           FROM ranked_condensed GROUP BY run, qid) c ON c.run = v.run AND c.qid = v.qid"""


def _in_order(columns: dict[str, str], order: str) -> dict[str, str]:
    """Each column's aggregates adding their rows in `order` (`in_order`): a query's value is then
    the same to the last bit whatever the threads, and in rank order it is trec_eval's."""
    return {name: aggregates_in_order(sql, order) for name, sql in columns.items()}
