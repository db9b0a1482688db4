"""The history database's tables, and what is done with a file made by another irpipe.

One DuckDB file holds every evaluation. Per-query values are stored once per *result key* (the
digest of everything that can change a run's numbers, `cache.run_keys`): an unchanged run costs
no new rows, and a later evaluation finds its results by that key. Evaluations point at keys.

Times are UTC (TIMESTAMP, not TIMESTAMPTZ: reading those from Python needs pytz).
Version 1 is the first schema irpipe wrote; version 2 added the judgment sets' comparisons
(`agreement`, `confusion`, `correlation`, each row with its evaluation and its place in the
evaluation's table). A file of an older version is read as it is (what it lacks, it never
held) and migrated when an evaluation is written to it (`MIGRATIONS`, in a transaction of its
own); a file of a newer or unknown version, or a DuckDB database that is not a history, is
refused with a message rather than read as if it were one.
"""

from __future__ import annotations

__all__ = ["HISTORY_TABLES", "JUDGMENT_TABLES", "MIGRATIONS", "SCHEMA_VERSION", "VIEWS"]

SCHEMA_VERSION = 2

#: the tables version 2 added: an evaluation's comparisons of judgment sets and of orderings,
#: as its tables of the same names (a grade as DOUBLE, whether the qrels' are integers or not)
JUDGMENT_TABLES = (
    """CREATE TABLE {db}.agreement (
    evaluation_id BIGINT, ordinal INTEGER, reference VARCHAR, other VARCHAR, collection VARCHAR,
    statistic VARCHAR, value DOUBLE)""",
    """CREATE TABLE {db}.confusion (
    evaluation_id BIGINT, ordinal INTEGER, reference VARCHAR, other VARCHAR,
    reference_grade DOUBLE, other_grade DOUBLE, pairs BIGINT)""",
    """CREATE TABLE {db}.correlation (
    evaluation_id BIGINT, ordinal INTEGER, reference VARCHAR, other VARCHAR, collection VARCHAR,
    metric VARCHAR, statistic VARCHAR, value DOUBLE, ci_low DOUBLE, ci_high DOUBLE, run VARCHAR)""",
)

#: CREATE statements for the current schema, in the attached database `{db}`
HISTORY_TABLES = (
    "CREATE TABLE {db}.irpipe_history (key VARCHAR PRIMARY KEY, value VARCHAR)",
    """CREATE TABLE {db}.evaluations (
    id BIGINT PRIMARY KEY, started TIMESTAMP, finished TIMESTAMP, host VARCHAR,
    spec VARCHAR, spec_canonical VARCHAR, irpipe_version VARCHAR, duckdb_version VARCHAR,
    python_version VARCHAR, provenance JSON)""",
    """CREATE TABLE {db}.inputs (
    evaluation_id BIGINT, role VARCHAR, name VARCHAR, path VARCHAR, size BIGINT, digest VARCHAR)""",
    """CREATE TABLE {db}.evaluation_runs (
    evaluation_id BIGINT, ordinal INTEGER, run VARCHAR, collection VARCHAR, result_key VARCHAR,
    cached BOOLEAN)""",
    """CREATE TABLE {db}.evaluation_metrics (
    evaluation_id BIGINT, ordinal INTEGER, metric VARCHAR, canonical VARCHAR, aggregator VARCHAR,
    kind VARCHAR)""",
    "CREATE TABLE {db}.result_keys (result_key VARCHAR PRIMARY KEY, first_evaluation BIGINT)",
    """CREATE TABLE {db}.results (
    result_key VARCHAR, tbl VARCHAR, qid VARCHAR, metric VARCHAR, value DOUBLE, text VARCHAR)""",
    """CREATE TABLE {db}.aggregates (
    evaluation_id BIGINT, run VARCHAR, collection VARCHAR, metric VARCHAR, value DOUBLE,
    n_queries BIGINT)""",
    *JUDGMENT_TABLES,
)

#: what brings a file of each older version to the next one: version -> its statements
MIGRATIONS = {1: JUDGMENT_TABLES}

#: views for people querying the history with DuckDB; their names resolve in the history itself
VIEWS = (
    """CREATE VIEW {db}.per_query AS
SELECT r.evaluation_id, r.run, r.collection, v.qid, v.metric, v.value, v.text
FROM evaluation_runs r JOIN results v USING (result_key)
WHERE v.tbl = 'per_query'""",
)
