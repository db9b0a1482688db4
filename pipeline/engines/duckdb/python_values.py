"""The engine's Python step: metrics computed by `PythonMeasure`s over the ranked grades in `wide`.

The rankings come out of DuckDB as Arrow record batches of many queries; each measure computes a
whole batch at once, and the values go back into `wide` in one UPDATE, so the step costs a Python
call per measure per batch (plus whatever the measure does inside).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pipeline import interrupts
from pipeline.contract.python_measure import RankedQueries
from pipeline.errors import PluginError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import duckdb
    import pyarrow as pa

    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.plan.sql_plan import PythonMetric

__all__ = ["BATCH_QUERIES", "python_values"]

#: Queries per batch handed to a Python measure: large enough that a vectorized measure pays
#: little per call, small enough that a batch of long rankings fits in memory.
BATCH_QUERIES = 65536

_RANKINGS = """
SELECT w.run, w.collection, w.qid, w.ranked_grades, f.qrels_grades
FROM wide w JOIN facts f USING (collection, qid)"""


def python_values(con: duckdb.DuckDBPyConnection, python: Sequence[PythonMetric]) -> None:
    """Compute every metric computed in Python (`ResultsPart.python`) into its column of
    `wide`."""
    pa = _arrow(python)
    reader = con.sql(_RANKINGS).to_arrow_reader(BATCH_QUERIES)
    parts = [_batch_values(pa.Table.from_batches([batch]), python) for batch in reader]
    if not parts:
        return
    con.register("python_values", pa.concat_tables(parts))
    try:
        columns = ", ".join(f"m{p.ordinal} = v.m{p.ordinal}" for p in python)
        interrupts.checkpoint()
        con.execute(
            f"UPDATE wide SET {columns} FROM python_values v "
            "WHERE wide.run = v.run AND wide.collection = v.collection AND wide.qid = v.qid"
        )
    finally:
        con.unregister("python_values")


def _batch_values(table: pa.Table, python: Sequence[PythonMetric]) -> pa.Table:
    interrupts.checkpoint()
    queries = RankedQueries.from_arrow(table)
    values = {f"m{p.ordinal}": _values(p.measure, replace(queries, level=p.level)) for p in python}
    import pyarrow as pa

    keys = {name: table.column(name) for name in ("run", "collection", "qid")}
    return pa.table({**keys, **values})


def _values(m: ResolvedMeasure, queries: RankedQueries):
    """One measure's values for a batch, checked: one finite-or-NaN float per query."""
    import numpy as np

    try:
        values = np.asarray(m.measure.compute_batch(m.params, queries), dtype=np.float64)
    except Exception as exc:  # an author's code: say whose, never a bare traceback
        raise PluginError(
            f"metric {m.label!r} ({type(m.measure).__name__}) raised {type(exc).__name__}: {exc}"
        ) from exc
    if values.shape != (len(queries),):
        raise PluginError(
            f"metric {m.label!r} ({type(m.measure).__name__}) returned {values.shape[0] if values.ndim else 'a scalar'} "
            f"values for {len(queries)} queries; compute_batch must return one per query, in order"
        )
    return values


def _arrow(python: Sequence[PythonMetric]):
    try:
        import numpy  # noqa: F401
        import pyarrow as pa
    except ImportError:
        labels = ", ".join(p.measure.label for p in python)
        raise PluginError(
            f"{labels} computed in Python need numpy and pyarrow; pip install 'irpipe[arrays]'"
        ) from None
    return pa
