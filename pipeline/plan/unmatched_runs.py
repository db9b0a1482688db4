"""The check that each run retrieves a judged document: SQL over the loaded tables, and its message.

A run whose documents are never the ones the qrels judge (docnos lower-cased, an index's internal
numbers instead of the collection's ids, the qrels of another collection) scores as if it had
retrieved nothing: AP 0 for every query, which looks like a bad run, not a wrong file. So, under
the default `unmatched_runs: error`, a run that shares queries with a collection's qrels but
retrieves none of their judged documents in any of them is an input error showing a few of its
docnos beside a few of the qrels' for the same query; `allow` evaluates it as it is (trec_eval's
behaviour, which `irpipe trec-eval` keeps). A run that shares no query with the qrels has its own
message (`messages.no_shared_queries_message`).

It runs once a batch of runs is loaded and checked, as the queries it shares are: one join of the
batch's rows with the qrels on (collection, qid, docno), the join that ranking the judged rows
makes anyway; the examples are read only for a run found unmatched. Pure: SQL builders and text.
"""

from __future__ import annotations

from pipeline.inputs.format import Load
from pipeline.inputs.messages import input_name
from pipeline.inputs.table_rows import MEMORY
from pipeline.sql import Statement

__all__ = [
    "EXAMPLES",
    "MATCHED_SQL",
    "examples",
    "unmatched_message",
    "unmatched_runs",
    "unmatched_sql",
]

#: how many docnos of each side a message shows
EXAMPLES = 3

#: (run, collection) of each run of the batch `$names` that retrieves a document the collection
#: judges (each collection the run is evaluated under, as `runs` pairs them)
MATCHED_SQL = """
SELECT DISTINCT b.run, b.collection
FROM run_rows r JOIN runs b ON b.run = r.run
JOIN qrels q ON q.collection = b.collection AND q.qid = r.qid AND q.docno = r.docno
WHERE list_contains($names, r.run)"""


def unmatched_sql() -> str:
    """(run, collection, queries shared, first shared query) for each run of the batch `$names`
    that shares a query with a collection it is evaluated under but retrieves no document that
    collection judges, in the order of the result tables. A run sharing no query is not here
    (its own check says so). Its examples are read apart (`examples`): only on the way to the
    error, since lists of docnos per query would aggregate every row of the batch."""
    return f"""
WITH unmatched AS (
    SELECT ordinal, run, collection FROM runs
    ANTI JOIN ({MATCHED_SQL}) m USING (run, collection)
    WHERE list_contains($names, run))
SELECT u.run, u.collection, count(*) AS queries, min(p.qid) AS qid
FROM unmatched u JOIN present p USING (run)
SEMI JOIN (SELECT DISTINCT collection, qid FROM qrels) j
    ON j.collection = u.collection AND j.qid = p.qid
GROUP BY u.ordinal, u.run, u.collection
ORDER BY u.ordinal"""


def unmatched_runs(loads: list[Load]) -> Statement:
    """`unmatched_sql` for the runs of a batch."""
    return Statement(unmatched_sql(), {"names": [load.name for load in loads]})


def examples(run: str, collection: str, qid: str) -> Statement:
    """(a few of the run's docnos for query `qid`, a few of those the collection judges), in
    docno order, as a message shows them side by side."""
    sql = f"""
SELECT (SELECT list(docno ORDER BY docno)[1:{EXAMPLES}] FROM run_rows
        WHERE run = $run AND qid = $qid),
    (SELECT list(docno ORDER BY docno)[1:{EXAMPLES}] FROM qrels
     WHERE collection = $collection AND qid = $qid)"""
    return Statement(sql, {"run": run, "collection": collection, "qid": qid})


def unmatched_message(load: Load, row: tuple, docnos: list[str], judged: list[str]) -> str:
    """A run that retrieves no judged document (a row of `unmatched_sql`, and its `examples`):
    its docnos beside the qrels', and what to do."""
    _, collection, queries, qid = row
    shared = "the query" if queries == 1 else f"any of the {queries} queries"
    return (
        f"{input_name(load)}: run '{load.name}' retrieves no document judged in collection "
        f"'{collection}' in {shared} they share (query {qid!r}: the run's documents "
        f"{_examples(docnos)}; the qrels' {_examples(judged)}); are the docnos the collection's "
        f"as the qrels spell them (case, prefixes; not an index's internal ids)? To evaluate it "
        f"as it is, set {_ALLOW[str(load.path).startswith(MEMORY)]}"
    )


#: the setting that allows such a run, in a spec and in a Python call
_ALLOW = {
    False: "`settings: {unmatched_runs: allow}`",
    True: "settings={'unmatched_runs': 'allow'}",
}


def _examples(docnos: list[str] | None) -> str:
    return ", ".join(map(repr, docnos or [])) + ", ..."
