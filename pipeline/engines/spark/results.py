"""The driver's side: the shards' results become the DuckDB engine's tables, after the checks.

Shards return their per-query rows and what the checks of whole files need (lines and bad lines
per file, duplicate pairs, queries shared with the qrels) as counts; summed here, they are what
the DuckDB engine finds, reported in its order and words. The per-query tables are then ordered
as the DuckDB engine orders them, and the aggregates computed from them by the same statements.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pipeline.errors import DuplicateError, InputDataError
from pipeline.inputs import messages
from pipeline.inputs.latency import unanswered_message
from pipeline.plan.per_query import aggregate_tables
from pipeline.plan.unmatched_runs import unmatched_message

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

    from pipeline.engines.spark.problems import Reporter
    from pipeline.inputs.format import Load
    from pipeline.plan.sql_plan import SqlPlan

__all__ = ["collect", "finish", "prepare"]

_RESULT = "SELECT * FROM shard_results WHERE tbl = '{}'"
# What the driver keeps of the shards: the result tables, and what checks and trec-eval read.
_DRIVER_TABLES = [
    f"CREATE TABLE facts AS SELECT collection, qid FROM ({_RESULT.format('facts')}) ORDER BY ALL",
    "CREATE VIEW qrels AS SELECT collection, qid FROM facts",  # the qrels' queries, for checks
    # Which qrels queries each run answers (as `irpipe trec-eval` asks): the shards return the
    # few a run lacks, not the many it has; how many documents it ranked stays on the workers.
    f"CREATE TABLE missing AS SELECT run, qid FROM ({_RESULT.format('missing')})",
    "CREATE VIEW present AS SELECT DISTINCT r.run, f.qid, NULL::BIGINT AS retrieved "
    "FROM runs r JOIN facts f USING (collection) ANTI JOIN missing m USING (run, qid)",
    "CREATE TABLE positive_judgments AS SELECT collection, sum(value)::BIGINT AS n "
    f"FROM ({_RESULT.format('positive_judgments')}) GROUP BY collection",
]
_PER_QUERY = """
CREATE TABLE {table} AS
SELECT r.run, r.collection, r.qid, r.metric, r.value, r.text
FROM ({rows}) r JOIN runs USING (run, collection) JOIN {metrics} m USING (metric)
ORDER BY runs.ordinal, r.qid, m.ordinal"""


def collect(
    con: duckdb.DuckDBPyConnection,
    plan: SqlPlan,
    results: pa.Table,
    reporter: Callable[[Load], Reporter],
) -> None:
    """Fill `con` with the tables the DuckDB engine leaves (per_query, aggregate, the curve and
    output tables), from the shards' `results`; an InputDataError first if the inputs are bad."""
    prepare(con, plan, results, reporter)
    finish(con, plan)


def prepare(
    con: duckdb.DuckDBPyConnection,
    plan: SqlPlan,
    results: pa.Table,
    reporter: Callable[[Load], Reporter],
) -> None:
    """The names, the facts and the checks, from the shards' `results` (kept as shard_results
    for `finish`); an InputDataError if the inputs are bad."""
    con.register("shard_results", results)
    try:
        for statement in [*plan.runs.names, *plan.qrels.names]:
            con.execute(statement.sql, statement.params)
        for sql in _DRIVER_TABLES:
            con.execute(sql)
        _check(con, plan, reporter)
    except BaseException:
        con.unregister("shard_results")
        raise


def finish(
    con: duckdb.DuckDBPyConnection, plan: SqlPlan, aggregate: pa.Table | None = None
) -> None:
    """The result tables: per-query tables in the DuckDB engine's order, then the aggregates
    from them; or, given the `aggregate` rows computed beside the per-query table (which then
    stays out of the driver: `per_query` is empty), those in the DuckDB engine's order."""
    curves = bool(plan.results.curves)
    try:
        tables = [("per_query", "metrics")] + (
            [("curve_per_query", "curve_metrics")] if curves else []
        )
        for table, metrics in tables:
            con.execute(_PER_QUERY.format(table=table, rows=_RESULT.format(table), metrics=metrics))
        results = plan.results
        aggregates = aggregate_tables(
            plan.runs.missing_rankings, curves, results.exact_mean, results.statistics
        )
        if aggregate is not None:
            con.register("spark_aggregate", aggregate)
            con.execute(_AGGREGATE)
            con.unregister("spark_aggregate")
            aggregates = aggregates[1:]  # the curves' are computed here, from their rows
        for statement in (*aggregates, *plan.results.outputs):
            con.execute(statement.sql, statement.params)
    finally:
        con.unregister("shard_results")


_AGGREGATE = """
CREATE TABLE aggregate AS
SELECT a.run, a.collection, a.metric, a.value, a.n_queries
FROM spark_aggregate a JOIN runs USING (run, collection) JOIN metrics m USING (metric)
ORDER BY runs.ordinal, m.ordinal"""


def _check(
    con: duckdb.DuckDBPyConnection, plan: SqlPlan, reporter: Callable[[Load], Reporter]
) -> None:
    """The DuckDB engine's checks, in its order: each qrels file's lines, then its duplicates;
    then every run's lines, every run's duplicates, and the queries each shares with its qrels;
    then the runs' times."""
    lines = {
        (kind, name): (rows, bad)
        for kind, name, rows, bad in con.execute(
            "SELECT metric, run, sum(value)::BIGINT, sum(text::BIGINT) "
            f"FROM ({_RESULT.format('lines')}) GROUP BY ALL"
        ).fetchall()
    }
    duplicates = dict(
        ((kind, name), n)
        for kind, name, n in con.execute(
            f"SELECT metric, run, sum(value)::BIGINT FROM ({_RESULT.format('duplicates')}) GROUP BY ALL"
        ).fetchall()
    )
    runs = plan.runs.loads
    for load in plan.qrels.loads:
        _check_lines(load, lines, reporter)
        _check_duplicates(load, duplicates, reporter)
    for load in runs:
        _check_lines(load, lines, reporter)
    for load in runs:
        _check_duplicates(load, duplicates, reporter)
    _check_shared(con, runs, reporter)
    _check_timed(con, plan.runs.latency, lines, reporter)


def _key(load: Load) -> tuple[str, str]:
    return (load.format.kind, load.name)


def _check_lines(load: Load, lines: dict, reporter: Callable[[Load], Reporter]) -> None:
    rows, bad = lines.get(_key(load), (0, 0))
    if bad:
        raise InputDataError(reporter(load).problems(bad))
    if rows == 0:
        raise InputDataError(messages.empty_message(load))


def _check_duplicates(load: Load, duplicates: dict, reporter: Callable[[Load], Reporter]) -> None:
    if duplicates.get(_key(load)):
        raise DuplicateError(reporter(load).duplicates(duplicates[_key(load)]))


def _check_shared(
    con: duckdb.DuckDBPyConnection, runs: list[Load], reporter: Callable[[Load], Reporter]
) -> None:
    rows = con.execute(
        f"SELECT run, collection, sum(value) FROM ({_RESULT.format('shared')}) GROUP BY ALL"
    ).fetchall()
    shared = {(run, collection): n for run, collection, n in rows}
    for load in runs:
        for collection in load.collections:
            if not shared.get((load.name, collection)):
                [qrels] = con.execute(
                    "SELECT list(qid ORDER BY qid)[1:3] FROM facts WHERE collection = ?",
                    [collection],
                ).fetchall()[0]
                row = (0, reporter(load).queries(), qrels)
                raise InputDataError(messages.no_shared_queries_message(load, collection, row))
    _check_matches(con, runs, shared)
    _check_judged(con, runs)


def _check_timed(
    con: duckdb.DuckDBPyConnection,
    loads: Sequence[Load],
    lines: dict,
    reporter: Callable[[Load], Reporter],
) -> None:
    """Each run's times (its latency input: `loads`) read well, and time only queries the run
    answers: the first query that any shard found unanswered, in spec order, named by its line
    (as the DuckDB engine's `load_latency`)."""
    for load in loads:
        _check_lines(load, lines, reporter)
    found = con.execute(
        f"SELECT run, min(qid) FROM ({_RESULT.format('unanswered')}) GROUP BY ALL"
    ).fetchall()
    first = dict(found)
    for load in loads:
        if load.name in first:
            at, line = reporter(load).first_line(first[load.name])
            raise InputDataError(unanswered_message(at, first[load.name], line))


def _check_judged(con: duckdb.DuckDBPyConnection, runs: list[Load]) -> None:
    """Each run that wants every row judged names only judged documents: the first unjudged one
    any shard found, in the DuckDB engine's order (spec order, then collection, qid, docno)."""
    found = con.execute(
        f"SELECT run, collection, min((qid, text)) FROM ({_RESULT.format('unjudged')}) GROUP BY ALL"
    ).fetchall()
    first = {(run, collection): pair for run, collection, pair in found}
    for load in runs:
        for collection in sorted(c for r, c in first if r == load.name):
            pair = first[load.name, collection]
            raise InputDataError(messages.unjudged_message(load, collection, *pair))


def _check_matches(con: duckdb.DuckDBPyConnection, runs: list[Load], shared: dict) -> None:
    """Each run retrieves a judged document of each collection in some shard, unless the spec
    allows it not to (then the shards report nothing); the example is the first shared query's."""
    matched = set(
        con.execute(f"SELECT run, collection FROM ({_RESULT.format('matched')})").fetchall()
    )
    examples = con.execute(
        "SELECT run, collection, min(qid), arg_min(text, qid) "
        f"FROM ({_RESULT.format('unmatched')}) GROUP BY ALL"
    ).fetchall()
    first = {(run, c): (qid, json.loads(text)) for run, c, qid, text in examples}
    for load in runs:
        for collection in load.collections:
            if (load.name, collection) in first and (load.name, collection) not in matched:
                qid, (docnos, judged) = first[load.name, collection]
                row = (load.name, collection, int(shared[load.name, collection]), qid)
                raise InputDataError(unmatched_message(load, row, docnos, judged))
