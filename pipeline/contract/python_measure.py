"""The Python path: a measure computed over numpy arrays after the SQL ranking.

The SQL ranking applies every setting (ordering and ties, query set, judged_only, max_docs) as for
any measure; it then hands each (run, query) the grades of its ranking in rank order and the
query's qrels grades. A measure implements `compute` over one query, or `compute_batch` over many
(flat arrays with offsets, for vectorized code). A query the run lacks, or that -J or -M emptied,
takes `missing` or `empty` as for SQL measures (0 by default).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from pipeline.contract.columns import Columns, Need
from pipeline.contract.measure import Measure, ParamsT
from pipeline.errors import PluginError

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

__all__ = ["PythonMeasure", "Query", "RankedQueries", "RANKED_GRADES"]

#: The wide table's column holding each query's ranked grades (relv in rank order).
RANKED_GRADES = Need("ranked_grades", "grades", "list(relv ORDER BY rank)")


class Query(NamedTuple):
    """One query's arrays: `grades` of the ranking in rank order (-1 not in the qrels, -2 judged
    negative, else the grade: floats under `grades: real`), `judged` (grades >= 0), and `qrels`, every grade the qrels give the
    query (negative judgments included), highest first; and `level`, the relevance level (the
    measure's `rel`, else the spec's `relevance_level`)."""

    grades: np.ndarray
    judged: np.ndarray
    qrels: np.ndarray
    level: int | float = 1


@dataclass(frozen=True)
class RankedQueries:
    """A batch of (run, query) rankings as flat arrays: query i's ranked grades are
    `grades[offsets[i]:offsets[i + 1]]`, its qrels grades `qrels[qrels_offsets[i]:...]`."""

    table: pa.Table  # run, collection, qid, ranked_grades, qrels_grades
    grades: np.ndarray
    offsets: np.ndarray
    qrels: np.ndarray
    qrels_offsets: np.ndarray
    level: int | float = (
        1  # the relevance level: the measure's `rel`, else the spec's relevance_level
    )

    @classmethod
    def from_arrow(cls, table: pa.Table, level: int | float = 1) -> RankedQueries:
        """The arrays of a table with list columns `ranked_grades` and `qrels_grades`."""
        grades, offsets = _flat(table.column("ranked_grades"))
        qrels, qrels_offsets = _flat(table.column("qrels_grades"))
        return cls(table, grades, offsets, qrels, qrels_offsets, level)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def query(self, i: int) -> Query:
        """Query i's arrays."""
        grades = self.grades[self.offsets[i] : self.offsets[i + 1]]
        qrels = self.qrels[self.qrels_offsets[i] : self.qrels_offsets[i + 1]]
        return Query(grades, grades >= 0, qrels, self.level)


def _flat(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np
    import pyarrow as pa

    array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if len(array) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64)
    array = pa.compute.list_slice(array, 0) if array.offset else array  # offsets from 0
    values = array.values.to_numpy(zero_copy_only=False)
    values = values.astype(np.float64 if values.dtype.kind == "f" else np.int64)  # grades: real
    return values, array.offsets.to_numpy().astype(np.int64)


class PythonMeasure(Measure[ParamsT]):
    """A measure computed in Python. Implement `compute` (one query) or `compute_batch` (many).
    Generic in its parameter model as `Measure` is: `class Mine(PythonMeasure[RankedParams])`."""

    #: Python measures see whole rankings: unjudged rows are never skipped for them
    judged_rows_suffice: ClassVar[bool] = False

    def needs(self, p: ParamsT, c: Columns) -> tuple[Need, ...]:
        """The ranked grades and the qrels grades; override to add what `missing` reads."""
        return (RANKED_GRADES, c.qrels_grades())

    def per_query(self, p: ParamsT, c: Columns) -> str:
        return "CAST(NULL AS DOUBLE)"  # filled in by `compute_batch` once the ranking is done

    def compute(self, p: ParamsT, query: Query) -> float:
        """The value of one query with a non-empty ranking."""
        # Plugin loading refuses a class that overrides neither method; this is for one built by hand.
        raise PluginError(f"{type(self).__name__} implements neither compute nor compute_batch")

    def compute_batch(self, p: ParamsT, batch: RankedQueries) -> np.ndarray:
        """The values of a batch of queries, in order; by default `compute` for each query, a
        Python call per query (write this with numpy over the flat arrays to go faster)."""
        import numpy as np

        return np.fromiter(
            (self.compute(p, batch.query(i)) for i in range(len(batch))), float, len(batch)
        )
