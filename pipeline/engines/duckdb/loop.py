"""The loop's short path: one run given as a table, evaluated again and again against prepared
qrels (the Python door's `Evaluator`, on a `Session`). DuckDB's fixed cost per statement is most
of such a call (a 5,000-row run), so the path runs few statements:

- the run's rows are checked and ranked in Arrow (`ranked_rows`): no row may break an input rule
  (a missing id or score, a score that is not finite, a (qid, docno) twice), and each row gets
  its rank in the ordering's keys (Arrow's sort compares text bytewise, as DuckDB and trec_eval
  do) and its query's number of rows;
- `wide` is made from those rows by the plan's `Ranking.given` (the judged-rows plan with the
  ranks given), then the result tables as the plan makes them.

Where a run breaks a rule, retrieves no judged document, or the plan is not of this shape (fused
or several runs, trec_eval -c, ranks from the file, rows a format wants judged, no judged-rows
plan), `evaluate` returns False and the caller runs the whole plan, whose checks name the
problem as they always do: the short path never decides an error, it only proves there is none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.engines.duckdb.steps import compute, one, run_all
from pipeline.inputs import checks as check
from pipeline.inputs.table_rows import is_table_input, memory_view
from pipeline.plan.ranking import RANKED_ROWS
from pipeline.sql import Statement

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

    from pipeline.plan.ranking import SortKey
    from pipeline.plan.sql_plan import SqlPlan
    from pipeline.spec import LoadedSpec

__all__ = ["evaluate", "ranked_rows"]

#: the tables the short path makes in an evaluation's schema, dropped if it gives way
_MADE = ("wide", "runs")


def evaluate(plan: SqlPlan, loaded: LoadedSpec, con: duckdb.DuckDBPyConnection) -> bool:
    """The plan's runs' part and results on `con` by the short path, if it applies: True; else
    False, with `con` as it was."""
    table = _table(plan, loaded)
    rows = None if table is None else ranked_rows(table, plan.runs.ranking.order)
    if rows is None:
        return False
    name = plan.runs.batches[0][0].name
    con.register(RANKED_ROWS, _named(rows, name))
    run_all(con, plan.runs.names)
    if not one(con, plan.runs.ranking.given)[0]:  # `wide`'s rows: nothing judged was retrieved
        run_all(con, [Statement(f"DROP TABLE {made}") for made in _MADE])
        con.unregister(RANKED_ROWS)
        return False
    con.register("present", _present(rows, name))
    compute(con, plan.results)
    run_all(con, plan.results.outputs)
    return True


def _table(plan: SqlPlan, loaded: LoadedSpec) -> pa.Table | None:
    """The one run's table, if the plan is of the short path's shape."""
    runs = plan.runs
    ranking = runs.ranking
    if ranking.given is None or ranking.apart or runs.fusions or runs.per_batch or runs.cached:
        return None
    if len(runs.batches) != 1 or len(runs.batches[0]) != 1:
        return None
    load = runs.batches[0][0]
    if not is_table_input(load.path) or check.unjudged_rows([load]) is not None:
        return None
    if any(key.column not in ("score", "docno") for key in ranking.order):
        return None
    return loaded.tables.get(memory_view(load.path, "run"))


def ranked_rows(table: pa.Table, keys: tuple[SortKey, ...]) -> pa.Table | None:
    """The run's rows sorted by query, then by the ordering's `keys`, with their `rank` and their
    query's `retrieved` rows; None if a row breaks an input rule (or numpy is missing)."""
    try:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:  # pragma: no cover - numpy comes with pandas, which the door reads
        return None
    if not _clean(table, pa, pc):
        return None
    sorting = table.select(["qid", "docno", "score"])
    order = [("qid", "ascending")]
    for key in keys:
        column = key.column
        if key.cast:  # trec_eval 9's scores, compared as C floats
            column = f"{key.column}_{key.cast.lower()}"
            sorting = sorting.append_column(column, pc.cast(table[key.column], pa.float32()))
        order.append((column, "descending" if key.descending else "ascending"))
    rows = table.take(pc.sort_indices(sorting, order))
    qids = rows["qid"].combine_chunks()
    starts = np.flatnonzero(
        np.concatenate(([True], pc.not_equal(qids[1:], qids[:-1]).to_numpy(zero_copy_only=False)))
    )
    lengths = np.diff(np.append(starts, len(rows)))
    rank = np.arange(1, len(rows) + 1) - np.repeat(starts, lengths)
    file_rank = rows["rank"] if "rank" in rows.column_names else pa.nulls(len(rows), pa.int64())
    columns = {"qid": qids, "docno": rows["docno"], "score": rows["score"], "file_rank": file_rank}
    return pa.table({**columns, "rank": rank, "retrieved": np.repeat(lengths, lengths)})


def _clean(table: pa.Table, pa, pc) -> bool:
    """Rows that pass the input rules a table's rows are checked by: some rows, ids given as
    text, scores as finite numbers, no (qid, docno) twice."""
    names = table.column_names
    if table.num_rows == 0 or not {"qid", "docno", "score"} <= set(names):
        return False
    text = (pa.types.is_string(t) or pa.types.is_large_string(t) for t in
            (table.schema.field("qid").type, table.schema.field("docno").type))  # fmt: skip
    if not all(text) or not pa.types.is_floating(table.schema.field("score").type):
        return False
    if any(table[c].null_count for c in ("qid", "docno", "score")):
        return False
    if not pc.all(pc.is_finite(table["score"])).as_py():
        return False
    return table.group_by(["qid", "docno"]).aggregate([]).num_rows == table.num_rows


def _named(rows: pa.Table, name: str) -> pa.Table:
    """The ranked rows under the run's name."""
    import pyarrow as pa

    return rows.add_column(0, "run", pa.array([name] * len(rows), pa.string()))


def _present(rows: pa.Table, name: str) -> pa.Table:
    """The table `present`: each query the run answers, with its number of rows."""
    import pyarrow as pa
    import pyarrow.compute as pc

    first = pc.equal(rows["rank"], 1)
    queries = rows.filter(first)
    return pa.table({"run": pa.array([name] * len(queries), pa.string()),
                     "qid": queries["qid"], "retrieved": queries["retrieved"]})  # fmt: skip
