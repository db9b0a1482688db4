"""A run's per-query times given in Python, as the Arrow table a latency input is read from
(`qid`, `ms`: `pipeline.inputs.latency`): a run frame's `latency_ms` column (one value per query,
repeated on each of its rows, as a frame of results holds it), or a frame of its own with `qid`
and `ms` (or `latency_ms`) columns, one row per timing."""

from __future__ import annotations

from typing import Any

from pipeline.errors import InputDataError

__all__ = ["LATENCY_COLUMN", "has_latency", "latency_table"]

#: the column of a run frame that holds each query's latency in milliseconds
LATENCY_COLUMN = "latency_ms"


def _columns(value: Any) -> list[str]:
    """A pandas or polars frame's or an Arrow table's column names; [] for anything else."""
    if type(value).__name__ == "LazyFrame":  # its schema, without collecting it
        return list(value.collect_schema().names())
    names = getattr(value, "column_names", None)
    if names is None and type(value).__name__ == "DataFrame":
        names = value.columns
    return [str(name) for name in names] if names is not None else []


def has_latency(value: Any) -> bool:
    """Whether a run given in Python carries its per-query times (`latency_ms`)."""
    return LATENCY_COLUMN in _columns(value)


def latency_table(value: Any, where: str, per_query: bool = True):
    """The `qid`, `ms` table of a frame's times (`ms`, else `latency_ms`); `per_query`: a run
    frame's column, one value per query (repeated on its rows), kept once; else every row is a
    timing. InputDataError naming `where` and the query whose rows disagree."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = _columns(value)
    column = "ms" if "ms" in names and not per_query else LATENCY_COLUMN
    if "qid" not in names or column not in names:
        raise InputDataError(f"{where}: a table of times needs the columns qid and {column}")
    table = _arrow(value, ["qid", column])
    qid = pc.cast(table.column("qid"), pa.string())
    ms = pc.cast(table.column(column), pa.float64())
    times = pa.table({"qid": qid, "ms": ms})
    if not per_query:
        return times
    # a query of the run without a time (a null, pandas' NaN) was not timed
    return _once_per_query(times.filter(pc.is_valid(times.column("ms"))), where)


def _arrow(value: Any, columns: list[str]):
    """The columns of a pandas or polars frame or an Arrow table, as Arrow."""
    import pyarrow as pa

    if isinstance(value, pa.Table):
        return value.select(columns)
    if type(value).__name__ == "LazyFrame":
        return value.select(columns).collect().to_arrow()
    if hasattr(value, "to_arrow"):  # polars
        return value.select(columns).to_arrow()
    return pa.Table.from_pandas(value[columns], preserve_index=False)


def _once_per_query(times, where: str):
    """Each query's one time, from the rows of a run frame that repeat it."""
    grouped = times.group_by("qid", use_threads=False).aggregate(
        [("ms", "min"), ("ms", "max"), ("ms", "count_distinct")]
    )
    for qid, distinct in zip(grouped.column("qid").to_pylist(),
                             grouped.column("ms_count_distinct").to_pylist(), strict=True):  # fmt: skip
        if distinct > 1:
            raise InputDataError(
                f"{where}: query {qid!r} has {distinct} values of {LATENCY_COLUMN}; a run's "
                f"{LATENCY_COLUMN} is one time per query, on each of its rows (several timings "
                "of a query: a latency file, whose repetitions count their median)"
            )
    return grouped.select(["qid", "ms_min"]).rename_columns(["qid", "ms"])
