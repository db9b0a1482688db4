"""One shard of queries, evaluated on a Spark worker by irpipe's own plan in an in-memory DuckDB.

Every measure is per query: a shard holds every run row and every qrels row of its queries (Spark
partitions the rows by query id), and this module runs exactly the statements the DuckDB engine
runs for one batch (`pipeline.engines.duckdb.executor`), so each number is computed by the same SQL, in the same
order, on the same rows: bit for bit the DuckDB engine's. What needs more than a shard (the
checks of whole files, sums over every query) leaves as counts in the result, for the driver.

Nothing here imports pyspark: the worker hands Arrow record batches in and takes them back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from pipeline.engines.duckdb.steps import compute, rank
from pipeline.inputs.checks import record_queries, unjudged_rows
from pipeline.inputs.formats import after_loading
from pipeline.inputs.latency import unanswered
from pipeline.inputs.row_stream import IDENTITY, STREAM_COLUMNS, checked_rows, into_tables
from pipeline.plan.missing_rankings import missing_ranking_rows
from pipeline.plan.unmatched_runs import MATCHED_SQL, examples, unmatched_sql
from pipeline.sql import Statement

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

    from pipeline.inputs.format import Load
    from pipeline.plan.sql_plan import SqlPlan

__all__ = [
    "AGGREGATE_SCHEMA",
    "PER_QUERY_SCHEMA",
    "RESULT_SCHEMA",
    "ROW_SCHEMA",
    "SPARK_TYPES",
    "aggregate_shard",
    "evaluate_shard",
    "typed",
]

#: Spark's name of each DuckDB type a row's column has
SPARK_TYPES = {"VARCHAR": "string", "DOUBLE": "double", "INTEGER": "int", "BIGINT": "bigint",
               "BOOLEAN": "boolean"}  # fmt: skip
#: The rows a shard receives, every input's in one stream (`pipeline.inputs.row_stream`): qrels
#: (`kind` 'qrels', `name` its collection) and runs (`kind` 'run', `name` the run), each read
#: and checked by `parsed_lines` (`ok` false: a bad line). The shard's tables are typed by the
#: `grades` setting (`QrelsPart.input_tables`).
ROW_SCHEMA = ", ".join(f"{c} {SPARK_TYPES[t]}" for c, t in STREAM_COLUMNS.items())
#: What a shard returns, one long table: `tbl` says what a row is (see `_RESULTS`).
RESULT_SCHEMA = (
    "tbl string, run string, collection string, qid string, metric string, value double, "
    "text string"
)

#: The per-query table, and the aggregate rows computed from it on the workers
PER_QUERY_SCHEMA = (
    "run string, collection string, qid string, metric string, value double, text string"
)
AGGREGATE_SCHEMA = "run string, collection string, metric string, value double, n_queries bigint"

_ARROW_TYPES = {"string": "string", "int": "int32", "bigint": "int64", "double": "float64",
                "boolean": "bool_"}  # fmt: skip


def typed(reader: Iterable[pa.RecordBatch], schema: str) -> Iterator[pa.RecordBatch]:
    """DuckDB's Arrow batches as Spark expects them: exactly `schema` (a Spark DDL string),
    whatever string layout or nullability DuckDB's version gives."""
    import pyarrow as pa

    fields = [field.split() for field in schema.split(", ")]
    target = pa.schema([(name, getattr(pa, _ARROW_TYPES[kind])()) for name, kind in fields])
    for batch in reader:
        yield pa.RecordBatch.from_arrays(
            [column.cast(f.type) for column, f in zip(batch.columns, target, strict=True)],
            schema=target,
        )


_ROWS = checked_rows()  # every loaded table's: (kind, name, identity, ok)
# Per file: its lines and bad lines; per (file, qid): documents listed twice (once per subtopic in
# subtopic qrels; a table whose rows may repeat has no duplicates). Read before the bad rows are
# dropped, so that the driver can report them as the DuckDB engine would.
_CHECKS = f"""
SELECT 'lines' AS tbl, name AS run, NULL AS collection, NULL AS qid, kind AS metric,
    count(*)::DOUBLE AS value, count(*) FILTER (WHERE NOT ok)::VARCHAR AS text
FROM {_ROWS}
GROUP BY kind, name
UNION ALL
SELECT 'duplicates', name, NULL, NULL, kind, count(*)::DOUBLE, NULL FROM (
    SELECT kind, name FROM {checked_rows(identified=True)} WHERE ok
    GROUP BY kind, name, {", ".join(IDENTITY)} HAVING count(*) > 1)
GROUP BY kind, name"""
# Which qrels queries each run lacks (of any collection it is evaluated under), and how many it
# shares with each collection's qrels: taken as the runs are loaded, before trec_eval -c's
# rankings make every query answered (as the DuckDB engine does).
_PRESENCE = """
CREATE TEMP TABLE presence AS
SELECT DISTINCT 'missing' AS tbl, r.run, NULL AS collection, f.qid, NULL::DOUBLE AS value,
    NULL::VARCHAR AS text
FROM runs r JOIN facts f USING (collection) ANTI JOIN present p ON p.run = r.run AND p.qid = f.qid
UNION ALL SELECT 'shared', p.run, runs.collection, NULL, count(*), NULL
FROM present p JOIN runs USING (run) SEMI JOIN facts f USING (collection, qid)
GROUP BY p.run, runs.collection"""
# Whether each run retrieves a judged document of each collection in this shard ('matched'),
# and, where it does not, its first shared query, how many it shares and a few docnos of each
# side as JSON ('unmatched', `_unmatched`): the driver sums them as the DuckDB engine checks a batch.
_MATCHED = (
    f"INSERT INTO presence SELECT 'matched', run, collection, NULL, NULL, NULL FROM ({MATCHED_SQL})"
)
_RESULTS = """
SELECT 'per_query' AS tbl, run, collection, qid, metric, value, text FROM per_query
UNION ALL SELECT 'facts', NULL, collection, qid, NULL, NULL, NULL FROM facts
UNION ALL SELECT tbl, run, collection, qid, NULL, value, text FROM presence"""
_CURVES = "UNION ALL SELECT 'curve_per_query', run, collection, qid, metric, value, text FROM curve_per_query"
_POSITIVE = "UNION ALL SELECT 'positive_judgments', NULL, collection, NULL, NULL, n, NULL FROM positive_judgments"


def evaluate_shard(
    plan: SqlPlan, batches: Iterable[pa.RecordBatch], threads: int = 1
) -> Iterator[pa.RecordBatch]:
    """The result rows (`RESULT_SCHEMA`) of one shard's input rows (`ROW_SCHEMA`)."""
    import duckdb

    con = duckdb.connect(config=_config(plan, threads))
    try:
        _load(con, plan, batches)
        yield from typed(con.sql(_CHECKS).to_arrow_reader(), RESULT_SCHEMA)
        if _all_good(con, plan):
            _evaluate(con, plan)
            yield from typed(con.sql(_results(plan)).to_arrow_reader(), RESULT_SCHEMA)
    finally:
        con.close()


def _config(plan: SqlPlan, threads: int) -> dict:
    # One DuckDB thread per core Spark gives the task: tasks already run side by side.
    config: dict = {"threads": threads}
    if plan.memory_limit:
        config["memory_limit"] = plan.memory_limit
    return config


def _load(con: duckdb.DuckDBPyConnection, plan: SqlPlan, batches: Iterable[pa.RecordBatch]) -> None:
    """The plan's input tables made, then each batch of rows into its input's table."""
    _run(con, plan.qrels.input_tables)
    into = into_tables(plan.loads)
    for batch in batches:
        con.register("rows", batch)
        _run(con, into)
        con.unregister("rows")


def _all_good(con: duckdb.DuckDBPyConnection, plan: SqlPlan) -> bool:
    """Whether every qrels and run row read well; otherwise the evaluation is not worth it: the
    driver stops. The runs' times are checked once the runs are (as the DuckDB engine loads
    them): a bad time still lets the shard count the queries the runs share with the qrels."""
    later = sorted({load.format.kind for load in plan.runs.latency})
    sql = f"SELECT count(*) FROM {_ROWS} WHERE NOT ok AND NOT list_contains(?, kind)"
    [(bad,)] = con.execute(sql, [later]).fetchall()
    return bad == 0


def _evaluate(con: duckdb.DuckDBPyConnection, plan: SqlPlan) -> None:
    """The DuckDB engine's steps (`pipeline.engines.duckdb.steps`), for one batch holding every
    run; trec_eval -c's missing rankings for what each run lacks of the shard's queries, rows
    or not (a run may have no row in a shard). First what the inputs' formats run once loaded
    (`after_loading`: a run's times their medians, too), as the DuckDB engine's loading does."""
    _run(con, after_loading(plan.loads))
    _run(con, plan.setup)
    _run(con, [record_queries(), Statement(_PRESENCE)])
    runs = plan.runs
    _unjudged(con, runs.loads)
    if runs.unmatched_runs_fail:
        _unmatched(con, [load.name for load in runs.loads])
    _timed(con, list(runs.latency))
    missing = (
        missing_ranking_rows("SELECT DISTINCT run FROM runs") if runs.missing_rankings else None
    )
    rank(con, runs, runs.loads, missing)
    compute(con, plan.results)


def _unjudged(con: duckdb.DuckDBPyConnection, loads: Sequence[Load]) -> None:
    """The shard's first unjudged row of each run that wants every row judged, as 'unjudged'
    rows of `presence` (qid, and the docno as text): the driver names the first of all."""
    statement = unjudged_rows(list(loads))
    if statement is not None:
        sql = f"INSERT INTO presence SELECT 'unjudged', r, c, q, NULL, d FROM ({statement.sql}) t(r, c, q, d)"
        con.execute(sql, statement.params)


def _timed(con: duckdb.DuckDBPyConnection, loads: list[Load]) -> None:
    """The runs' times (`loads`: their latency inputs), checked as the DuckDB engine's
    `load_latency` checks them: the shard's first query each times that its run does not
    answer, as an 'unanswered' row of `presence` (the driver names the first of all by its
    line)."""
    if loads:
        found = unanswered(loads)
        into = "INSERT INTO presence SELECT 'unanswered', r, NULL, q, NULL, NULL"
        con.execute(f"{into} FROM ({found.sql}) t(r, q)", found.params)


def _unmatched(con: duckdb.DuckDBPyConnection, runs: list[str]) -> None:
    """The shard's 'matched' and 'unmatched' rows of `presence` (see `_MATCHED`)."""
    names = {"names": runs}
    con.execute(_MATCHED, names)
    for run, collection, queries, qid in con.execute(unmatched_sql(), names).fetchall():
        statement = examples(run, collection, qid)
        docnos, judged = con.execute(statement.sql, statement.params).fetchone()
        con.execute(
            "INSERT INTO presence VALUES ('unmatched', ?, ?, ?, ?, ?)",
            [run, collection, qid, queries, json.dumps([docnos, judged])],
        )


def _results(plan: SqlPlan) -> str:
    curves = _CURVES if plan.results.curves else ""
    positive = _POSITIVE if plan.runs.per_batch else ""
    return f"{_RESULTS}\n{curves}\n{positive}"


def _run(con: duckdb.DuckDBPyConnection, statements: Iterable[Statement]) -> None:
    for statement in statements:
        con.execute(statement.sql, statement.params)


def aggregate_shard(
    names: list[Statement],
    positive: list[tuple[str, int]],
    missing_rankings: bool,
    batches: Iterable[pa.RecordBatch],
    exact_mean: bool = False,
    statistics: tuple[str, ...] = (),
) -> Iterator[pa.RecordBatch]:
    """The aggregate rows (`AGGREGATE_SCHEMA`) of per-query rows (`PER_QUERY_SCHEMA`) that hold
    every query of their runs: the DuckDB engine's aggregate statement over them. `names`: the
    plan's name tables; `positive`: each collection's qrels lines with a grade > 0 (trec_eval
    -c's num_rel, when `missing_rankings`); `exact_mean`: a metric averages by `exact_mean`;
    `statistics`: metrics aggregate by these statistics over queries (`ResultsPart.statistics`)."""
    import duckdb

    from pipeline.plan.per_query import aggregate_tables

    con = duckdb.connect(config={"threads": 1})
    try:
        _run(con, names)
        con.execute(f"CREATE TABLE per_query ({PER_QUERY_SCHEMA.replace('string', 'VARCHAR')})")
        con.execute("CREATE TABLE positive_judgments (collection VARCHAR, n BIGINT)")
        if positive:
            con.executemany("INSERT INTO positive_judgments VALUES (?, ?)", positive)
        for batch in batches:
            con.register("rows", batch)
            con.execute("INSERT INTO per_query SELECT * FROM rows")
            con.unregister("rows")
        _run(con, aggregate_tables(missing_rankings, False, exact_mean, statistics))
        yield from typed(con.sql("SELECT * FROM aggregate").to_arrow_reader(), AGGREGATE_SCHEMA)
    finally:
        con.close()
