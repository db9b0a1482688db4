"""trec_eval -c's mode in SQL: the missing rankings, that is the qrels queries a run has no ranking
for, which -c scores. A run that lacks a qrels query is evaluated on a one-document ranking
outside the qrels, so its values are trec_eval's by construction; then the values trec_eval
resets by name for such a query, and its summary's num_rel.

One name in the code: missing rankings (the setting that asks for them is `missing_queries:
trec_eval_c`). The SQL keeps trec_eval's own word for those rankings, bogus (tables `bogus` and
`batch_bogus`, the per-query column `bogus`): renaming them would change every plan's text and
every history's cache keys.
"""

from __future__ import annotations

from pipeline.sql import Statement

__all__ = [
    "MISSING_RANKING_DOCNO",
    "MISSING_RANKING_FLAG",
    "MISSING_RANKING_ROWS",
    "MISSING_RANKINGS_TABLE",
    "POSITIVE_JUDGMENTS",
    "RESET_BY_NAME",
    "missing_ranking_rows",
    "reset_missing_ranking",
]


#: trec_eval -c's bookkeeping: the qrels lines with a grade > 0 of each collection (its summary
#: num_rel, whatever the relevance level), made with the qrels' tables
POSITIVE_JUDGMENTS = Statement(
    "CREATE TABLE positive_judgments AS SELECT collection, count(*) FILTER (WHERE rel > 0) "
    "AS n FROM qrels GROUP BY collection"
)
#: ... and the (run, query) of each missing ranking, made with the runs' tables
MISSING_RANKINGS_TABLE = Statement("CREATE TABLE bogus (run VARCHAR, qid VARCHAR)")

# trec_eval -c evaluates a query missing from the run as a one-document ranking that is not in
# the pool; doing the same gives its values by construction. The batch's runs are in run_rows.
MISSING_RANKING_DOCNO = "ceci_nest_pas_un_docno"


def missing_ranking_rows(runs: str = "SELECT DISTINCT run FROM run_rows") -> list[Statement]:
    """trec_eval -c's one-document rankings for the queries that the runs `runs` (SQL; by default
    the batch's, whose rows are in run_rows) lack. The Spark engine evaluates every run in each
    shard of queries, where a run may have no row at all: it names the table `runs`. A query
    that two collections of a run judge gets one ranking: the run's rows are the same under
    each collection, and its ranking under each is this one."""
    return [
        Statement(f"""
CREATE OR REPLACE TEMP TABLE batch_bogus AS
SELECT DISTINCT r.run, f.qid
FROM ({runs}) r JOIN runs USING (run) JOIN facts f USING (collection)
ANTI JOIN present p ON p.run = r.run AND p.qid = f.qid"""),
        Statement("INSERT INTO bogus SELECT * FROM batch_bogus"),
        Statement(
            "INSERT INTO run_rows SELECT run, qid, ?, 1, 1.0, true FROM batch_bogus",
            [MISSING_RANKING_DOCNO],
        ),
        # The one-document ranking makes the query answered, as trec_eval evaluates it (-J can
        # empty it).
        Statement("INSERT INTO present SELECT run, qid, 1 FROM batch_bogus"),
    ]


#: the statements that add a batch's missing rankings, once it is loaded
MISSING_RANKING_ROWS = missing_ranking_rows()

#: the per-query column saying that the query's ranking was a missing one
MISSING_RANKING_FLAG = (
    ",\n        EXISTS (SELECT 1 FROM bogus b WHERE b.run = e.run AND b.qid = e.qid) AS bogus"
)

#: trec_eval -c then resets these values of a query whose ranking was missing, by exact name
#: (a quirk it has)
RESET_BY_NAME = ("num_ret", "utility", "rbp_resid")


def reset_missing_ranking(kind: str, pick: str) -> str:
    """A value as trec_eval -c leaves it for a missing ranking: reset by name, else `pick`."""
    if kind == "text":
        return f"CASE WHEN f.bogus AND m.metric = 'relstring' THEN '' ELSE {pick} END"
    names = ", ".join(f"'{name}'" for name in RESET_BY_NAME)
    reset = f"m.metric IN ({names}) OR starts_with(m.metric, 'unj')"
    return f"CASE WHEN f.bogus AND ({reset}) THEN 0 ELSE {pick} END"
