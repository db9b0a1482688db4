"""File-level input checks over the loaded tables (what they say: `messages`).

Pure like the readers: SQL builders; `execute` runs the SQL. In the normal path a
batch of files costs, beyond the load itself, a count per file (`summary`), a sort of one 64-bit hash
per row (`colliding_hashes`; an exact look at the few rows whose hashes collide, `duplicated_files`)
and, for runs, their distinct queries (`record_queries`, which `shared_counts` reads), each one
statement over the loaded table for the whole batch. The reports with line numbers
(`problem_lines`, `duplicates`) read a file again only once it is known to be bad.
"""

from __future__ import annotations

from pipeline.inputs import trec_qrels
from pipeline.inputs.format import Load
from pipeline.inputs.loaded_tables import LOADED_TABLES
from pipeline.inputs.messages import MAX_REPORTED
from pipeline.inputs.table_rows import identity
from pipeline.inputs.text_lines import literal_path, numbered_lines
from pipeline.sql import Statement, quote_identifier

__all__ = [
    "colliding_hashes",
    "duplicated_files",
    "duplicates",
    "record_queries",
    "shared_counts",
    "shared_queries",
    "summary",
    "unjudged_rows",
]


def _where(load: Load) -> str:
    return f"FROM {quote_identifier(load.table)} WHERE {quote_identifier(load.key)} = ?"


def _of_batch(loads: list[Load]) -> tuple[str, str]:
    """(key column, FROM ... WHERE clause) selecting the rows of every file of a batch."""
    key = quote_identifier(loads[0].key)
    return key, f"FROM {quote_identifier(loads[0].table)} WHERE list_contains(?, {key})"


def summary(loads: list[Load]) -> Statement:
    """(name, rows, bad rows) of each loaded file of a batch (a file without data has no row)."""
    key, rows = _of_batch(loads)
    sql = f"SELECT {key}, count(*), count(*) FILTER (WHERE NOT ok) {rows} GROUP BY {key}"
    return Statement(sql, [[load.name for load in loads]])


def _hash(key: str, table: str) -> str:
    """A 32-bit hash of a row's (name, qid, docno) (and subtopic: `identity`): half the memory
    of DuckDB's 64-bit one to sort, and no weaker here, where every collision is checked exactly
    anyway."""
    return f"(hash({key}, {identity(LOADED_TABLES[table])}) >> 32)::UINTEGER"


def colliding_hashes(loads: list[Load]) -> Statement:
    """The (name, qid, docno) hashes that more than one row of a batch has, as one list.

    An empty list proves there is no duplicate: equal triples have equal hashes, which sorting
    makes neighbours. Sorting bare hashes costs less memory than a hash table of string triples
    (or of hashes), and than carrying each row's triple through the sort. Distinct triples share
    a hash now and then (a few thousand pairs among 7M rows), so a hash in the list is only a
    candidate, which `duplicated_files` checks exactly.
    """
    key, rows = _of_batch(loads)
    sql = f"""SELECT coalesce(list(DISTINCT h), []) FROM (
        SELECT h, lag(h) OVER (ORDER BY h) AS previous FROM (SELECT {_hash(key, loads[0].table)} AS h {rows}))
        WHERE h = previous"""
    return Statement(sql, [[load.name for load in loads]])


def duplicated_files(loads: list[Load], hashes: list[int]) -> Statement:
    """The names of a batch's files that hold a (qid, docno) twice, comparing the triples exactly,
    but only those of rows whose hash is one of `hashes` (`colliding_hashes`)."""
    key, rows = _of_batch(loads)
    table = loads[0].table
    sql = f"""SELECT DISTINCT {key} FROM (
        SELECT {key}, {identity(LOADED_TABLES[table])} {rows} AND {_hash(key, table)} IN (SELECT unnest(?::UINTEGER[]))
        GROUP BY ALL HAVING count(*) > 1)"""
    return Statement(sql, [[load.name for load in loads], hashes])


def duplicates(load: Load) -> Statement:
    """The first duplicate (qid, docno) pairs (subtopic qrels: (qid, subtopic, docno)), each
    with its line numbers, how many there are, and a detail: the subtopic (subtopic qrels), or
    how many second fields the lines have (qrels: more than one, and they are subtopics)."""
    key, fmt = identity(load.format.loaded), load.format
    subtopic = "subtopic" in key
    on = " AND TRY_CAST(n.f[2] AS INTEGER) = d.subtopic" if subtopic else ""
    detail = (
        "d.subtopic" if subtopic else "count(DISTINCT n.f[2])" if fmt.name == trec_qrels.NAME
        else "NULL"
    )  # fmt: skip
    # A line's number once per time it holds the pair (a JSON line may hold it twice).
    times = "list_transform(list_filter(n.docnos, lambda x: x = d.docno), lambda x: n.line_no)"
    lines = (
        f"SELECT *, {fmt.qid} AS line_qid, {fmt.line_docnos} AS docnos FROM ({numbered_lines(fmt)})"
    )
    sql = f"""
WITH dup AS (SELECT {key} {_where(load)} GROUP BY {key} HAVING count(*) > 1)
SELECT d.qid, d.docno, flatten(list({times} ORDER BY n.line_no)), (SELECT count(*) FROM dup),
    {detail}
FROM dup d JOIN ({lines}) n ON n.line_qid = d.qid AND list_contains(n.docnos, d.docno){on}
GROUP BY {", ".join(f"d.{c}" for c in key.split(", "))}
ORDER BY min(n.line_no)
LIMIT {MAX_REPORTED}"""
    return Statement(sql, [load.name, literal_path(load.path)])


def unjudged_rows(loads: list[Load]) -> Statement | None:
    """The first row, per run of a batch whose format wants every row judged (`judged_only`), of
    a document a collection it is evaluated under does not judge: (run, collection, qid, docno),
    in spec order. None when no run of the batch is such."""
    wanting = [load for load in loads if load.format.judged_only]
    if not wanting:
        return None
    formats = list(dict.fromkeys(load.format for load in wanting))
    rows = " OR ".join(f"(list_contains(?, r.run) AND {fmt.judged_only})" for fmt in formats)
    sql = f"""SELECT r.run, c.collection, min(r.qid), arg_min(r.docno, (r.qid, r.docno))
FROM run_rows r JOIN runs c USING (run)
WHERE ({rows}) AND NOT EXISTS (SELECT 1 FROM qrels q
    WHERE q.collection = c.collection AND q.qid = r.qid AND q.docno = r.docno)
GROUP BY r.run, c.collection
ORDER BY list_position(?, r.run), c.collection"""
    names = [[load.name for load in wanting if load.format == fmt] for fmt in formats]
    return Statement(sql, [*names, [load.name for load in wanting]])


def record_queries() -> Statement:
    """Record the queries of the loaded runs (`run_rows` holds one batch), and their lengths, in
    `present`."""
    return Statement("INSERT INTO present SELECT run, qid, count(*) FROM run_rows GROUP BY ALL")


def shared_counts(loads: list[Load]) -> Statement:
    """(run, collection, queries the run shares with that collection's qrels) for each run of a
    batch and each collection it is evaluated under."""
    sql = """
WITH judged AS (SELECT DISTINCT collection, qid FROM qrels)
SELECT p.run, runs.collection, count(j.qid)
FROM present p JOIN runs USING (run)
LEFT JOIN judged j ON j.collection = runs.collection AND j.qid = p.qid
WHERE list_contains(?, p.run)
GROUP BY p.run, runs.collection"""
    return Statement(sql, [[load.name for load in loads]])


def shared_queries(load: Load, collection: str) -> Statement:
    """For a run and a collection it is evaluated under: (queries the run shares with the
    collection's qrels, a few of its queries, a few of the qrels' queries)."""
    sql = """
WITH run AS (SELECT qid FROM present WHERE run = ?),
judged AS (SELECT DISTINCT qid FROM qrels WHERE collection = ?)
SELECT (SELECT count(*) FROM run SEMI JOIN judged USING (qid)),
    (SELECT list(qid ORDER BY qid)[1:3] FROM run),
    (SELECT list(qid ORDER BY qid)[1:3] FROM judged)"""
    return Statement(sql, [load.name, collection])
