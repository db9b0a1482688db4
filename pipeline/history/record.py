"""Appending an evaluation to the attached history, in one transaction, in SQL: the values go
from the evaluation's in-memory tables to the file without passing through Python (the
judgment sets' comparisons too: `judgments`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pipeline.formatting import json_text
from pipeline.history.judgments import append_judgments
from pipeline.history.store import ALIAS, insert_rows, tables_of

if TYPE_CHECKING:
    import duckdb

__all__ = ["append", "previous_tables"]

H = ALIAS


def append(con: duckdb.DuckDBPyConnection, provenance: dict, keys: dict[tuple[str, str], str],
           cached: set[tuple[str, str]], finished: str) -> int:  # fmt: skip
    """Record the evaluation whose tables `con` holds; its id. `keys`: (run, collection) ->
    result key; `cached`: the pairs whose values came from the history (their rows are there
    already)."""
    con.execute("BEGIN TRANSACTION")
    try:
        (evaluation,) = con.execute(
            f"SELECT coalesce(max(id), 0) + 1 FROM {H}.evaluations"
        ).fetchone()
        _evaluation(con, evaluation, {**provenance, "evaluation_id": evaluation}, finished)
        _runs(con, evaluation, keys, cached)
        _results(con, evaluation)
        append_judgments(con, evaluation)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return evaluation


def _evaluation(
    con: duckdb.DuckDBPyConnection, evaluation: int, record: dict, finished: str
) -> None:
    versions = record["versions"]
    con.execute(
        f"INSERT INTO {H}.evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [evaluation, _utc(record["started"]), _utc(finished), record["host"], record["spec"],
         record["spec_canonical"], versions["irpipe"], versions["duckdb"], versions["python"],
         json_text(record)],
    )  # fmt: skip
    inputs = [
        (evaluation, i["role"], i["name"], i["path"], i["size"], i["digest"])
        for i in record["inputs"]
    ]
    insert_rows(con, f"{H}.inputs", inputs)
    metrics = [
        (evaluation, i, m["label"], m["metric"], m["aggregator"], m["kind"])
        for i, m in enumerate(record["metrics"])
    ]
    insert_rows(con, f"{H}.evaluation_metrics", metrics)


def _utc(iso: str) -> datetime:
    """An ISO 8601 time with its offset as a naive UTC datetime (the column's convention)."""
    return datetime.fromisoformat(iso).astimezone(UTC).replace(tzinfo=None)


def _runs(
    con: duckdb.DuckDBPyConnection,
    evaluation: int,
    keys: dict[tuple[str, str], str],
    cached: set[tuple[str, str]],
) -> None:
    con.execute(
        "CREATE OR REPLACE TEMP TABLE run_keys (run VARCHAR, collection VARCHAR, "
        "result_key VARCHAR, cached BOOLEAN)"
    )
    rows = [(run, c, key, (run, c) in cached) for (run, c), key in keys.items()]
    insert_rows(con, "run_keys", rows)
    con.execute(
        f"""INSERT INTO {H}.evaluation_runs
SELECT ?, runs.ordinal, runs.run, runs.collection, k.result_key, k.cached
FROM runs JOIN run_keys k USING (run, collection) ORDER BY runs.ordinal""",
        [evaluation],
    )


# A key is stored once: by the first (run, collection), in the tables' order, that has it and is
# not yet stored.
_NEW_KEYS = f"""
CREATE OR REPLACE TEMP TABLE new_keys AS
SELECT k.run, k.collection, k.result_key
FROM run_keys k JOIN runs USING (run, collection)
WHERE k.result_key NOT IN (SELECT result_key FROM {H}.result_keys)
QUALIFY row_number() OVER (PARTITION BY k.result_key ORDER BY runs.ordinal) = 1"""


def _results(con: duckdb.DuckDBPyConnection, evaluation: int) -> None:
    con.execute(_NEW_KEYS)
    con.execute(f"INSERT INTO {H}.result_keys SELECT result_key, ? FROM new_keys", [evaluation])
    for table in _per_query_tables(con):
        con.execute(
            f"""INSERT INTO {H}.results
SELECT n.result_key, ?, p.qid, p.metric, p.value, p.text
FROM {table} p JOIN new_keys n USING (run, collection)""",
            [table],
        )
    con.execute(
        f"INSERT INTO {H}.aggregates SELECT ?, run, collection, metric, value, n_queries "
        "FROM aggregate",
        [evaluation],
    )


def _per_query_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """per_query, and curve_per_query when the plan made one (precision-recall outputs)."""
    names = tables_of(con, "memory")
    return [name for name in ("per_query", "curve_per_query") if name in names]


def previous_tables(con: duckdb.DuckDBPyConnection, spec: str | None) -> None:
    """`previous_aggregate` and `previous_per_query`: for each (run, collection, metric), the
    values of the latest evaluation of the same spec (by its absolute path) in the history;
    empty for `spec` None (no history file yet: nothing attached)."""
    if spec is None:
        con.execute(f"CREATE OR REPLACE TEMP TABLE previous_aggregate AS {_NO_AGGREGATE}")
        con.execute(f"CREATE OR REPLACE TEMP TABLE previous_per_query AS {_NO_PER_QUERY}")
        return
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE previous_aggregate AS
SELECT run, collection, metric, value, evaluation_id FROM (
    SELECT a.*, row_number() OVER (
        PARTITION BY a.run, a.collection, a.metric ORDER BY a.evaluation_id DESC) AS latest
    FROM {H}.aggregates a JOIN {H}.evaluations e ON e.id = a.evaluation_id
    WHERE e.spec = ?)
WHERE latest = 1""",
        [spec],
    )
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE previous_per_query AS
SELECT p.run, p.collection, v.qid, p.metric, v.value, p.evaluation_id
FROM previous_aggregate p
JOIN {H}.evaluation_runs r
    ON r.evaluation_id = p.evaluation_id AND r.run = p.run AND r.collection = p.collection
JOIN {H}.results v ON v.result_key = r.result_key AND v.metric = p.metric
WHERE v.tbl = 'per_query'"""
    )


# The previous tables' columns, empty: no earlier evaluation to compare with.
_NO_AGGREGATE = """SELECT NULL::VARCHAR AS run, NULL::VARCHAR AS collection,
    NULL::VARCHAR AS metric, NULL::DOUBLE AS value, NULL::BIGINT AS evaluation_id LIMIT 0"""
_NO_PER_QUERY = """SELECT NULL::VARCHAR AS run, NULL::VARCHAR AS collection, NULL::VARCHAR AS qid,
    NULL::VARCHAR AS metric, NULL::DOUBLE AS value, NULL::BIGINT AS evaluation_id LIMIT 0"""
