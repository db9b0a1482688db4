"""How the full plan ranks a large batch, and a batch whose runs are under several collections:
in parts, one statement each. Pure, no I/O; the engines' `steps` run these statements around the
ranking's (`ranking.ranked_sql`), which reads `run_rows` and `runs` as if they held the batch.

  slices       the batch's queries in slices of about `SLICE_ROWS` rows (`slice_bounds`), so that
               a sort holds one slice: the rows set aside (`SET_ASIDE`), `run_rows` a view of
               one slice at a time (`slice_rows`), then put back (`PUT_BACK`)
  collections  one collection at a time (`SET_ASIDE_RUNS`, `ONE_COLLECTION`, `PUT_BACK_RUNS`)
"""

from __future__ import annotations

__all__ = [
    "ONE_COLLECTION",
    "PUT_BACK",
    "PUT_BACK_RUNS",
    "SET_ASIDE",
    "SET_ASIDE_RUNS",
    "SLICE_ROWS",
    "slice_bounds",
    "slice_rows",
]

#: Rows of a batch the full plan sorts at once, at most (about): a larger batch is ranked in
#: slices of whole queries, one statement each, since a sort holds its rows in memory (about
#: 110 bytes a row beyond the rows themselves: a 7M-line run sorted at once peaked at 1.3 GB, in
#: slices of 2^20 rows at 0.74 GB). Smaller slices sort faster too (less to merge, more of it in
#: cache): a 7M-line run under pooled qrels takes about 10% less CPU in slices of 2^19 rows than
#: of 2^20, and adds no more to the peak than the loaded rows already hold.
SLICE_ROWS = 1 << 19  # 524,288


def slice_bounds() -> str:
    """SQL over a bound list of run names: the first qid of each slice of those runs' queries,
    in qid order: as few slices as hold at most about SLICE_ROWS rows each, of whole queries and
    of about equal size; one bound for a batch that needs no slicing."""
    return f"""
WITH per_query AS (SELECT qid, sum(retrieved) AS n FROM present WHERE list_contains(?, run) GROUP BY qid),
numbered AS (
    SELECT qid, sum(n) OVER (ORDER BY qid ROWS UNBOUNDED PRECEDING) - n AS before,
        sum(n) OVER () AS total
    FROM per_query
),
sliced AS (SELECT qid, before * ((total + {SLICE_ROWS - 1}) // {SLICE_ROWS}) // total AS slice FROM numbered)
SELECT coalesce(list(first ORDER BY slice), []) FROM (SELECT slice, min(qid) AS first FROM sliced GROUP BY slice)"""


#: The variable holding the slice being ranked: [first qid, first qid after it (NULL: none)].
_SLICE = "getvariable('ranked_slice')"
#: SQL that sets a batch's rows aside before it is ranked in slices, and puts them back after.
#: Meanwhile `run_rows` is a view of the slice's rows (`slice_rows` names them): each ranking
#: reads its queries in place, where a copy would write and hold them again. DuckDB folds the
#: variable into the view's filter when a statement is planned, so the scan skips every row
#: group outside the slice (by their qid statistics) and knows about how many rows it reads.
SET_ASIDE = f"""SET VARIABLE ranked_slice = [NULL]::VARCHAR[];
ALTER TABLE run_rows RENAME TO batch_rows;
CREATE VIEW run_rows AS SELECT * FROM batch_rows
    WHERE qid >= {_SLICE}[1] AND ({_SLICE}[2] IS NULL OR qid < {_SLICE}[2])"""
PUT_BACK = (
    "DROP VIEW run_rows; RESET VARIABLE ranked_slice; ALTER TABLE batch_rows RENAME TO run_rows"
)


#: SQL that ranks a batch one collection at a time, when a run is evaluated under several: the
#: runs' names set aside, then for each collection `runs` made its rows alone (a bound
#: collection) before the ranking, then put back. Each collection's rows are then ranked, and
#: summed, exactly as a spec of that collection alone ranks them: a sum over a query's rows
#: (DCG's) adds them in the order they arrive, which the other collections' rows would change
#: in its last bit.
SET_ASIDE_RUNS = "ALTER TABLE runs RENAME TO all_runs"
ONE_COLLECTION = "CREATE OR REPLACE TABLE runs AS SELECT * FROM all_runs WHERE collection = ?"
PUT_BACK_RUNS = "DROP TABLE runs; ALTER TABLE all_runs RENAME TO runs"


def slice_rows(last: bool) -> str:
    """SQL that makes `run_rows` (the view `SET_ASIDE` made) the rows set aside whose qid is from
    a bound parameter on (and, unless `last`, before a second one): whole queries, which the
    plan's ranking then reads as if they were the batch. A range of qids, not a hash: a run
    sorted by query (as runs are) is read only where the slice lies, its other row groups
    skipped by their qid statistics."""
    upper = "NULL" if last else "?"
    return f"SET VARIABLE ranked_slice = [?, {upper}]::VARCHAR[]"
