"""Compat: compatibility with an ideal ranking (Clarke, Vtyurina and Smucker, ACM TOIS 2021), as
ir_measures computes it: a finite rank-biased overlap, in Python over numpy arrays.

With I the ideal ranking (the query's documents of grade > 0, highest grade first), n the length of
the ranking, D = max(n, |I|) and O(d) the number of documents in both the ranking's and the ideal's
first d:

    RBO    = sum_{d=1}^{D} p^(d-1) O(d) / d  /  sum_{d=1}^{D} p^(d-1)
    Compat = RBO / RBO(I, I)  (normalize, when I is not empty), else RBO

Within a grade the ideal ranking lists the retrieved documents in the run's order, then the
others: the ideal this ranking can reach, which depends on grades and ranks only.

Computed for a batch of queries at once. The j-th retrieved document of grade g (at rank r) is the
ideal's j-th document of grade g (at rank r'), so it is in both prefixes from depth max(r, r') on:
O(d) counts those depths. The sums are then taken depth by depth with ir_measures' arithmetic
(p^(d-1) by repeated multiplication, each term w O / d, added in depth order), so the values are
ir_measures' to the last bit whenever both see the same ideal ranking.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from pipeline.api import MeasureParams, PythonMeasure, RankedQueries

if TYPE_CHECKING:
    import numpy as np

#: Cells of the table in which the sums of a chunk of queries are taken (32 MB of doubles).
CHUNK_CELLS = 1 << 22


class CompatParams(MeasureParams):
    """The persistence and whether to normalise by the ideal ranking's own score."""

    p: float = Field(0.95, gt=0, le=1, description="persistence: depth d weighs p^(d-1)")
    normalize: bool = Field(
        True, description="divide by the ideal ranking's score, so that an ideal ranking scores 1"
    )


class Compat(PythonMeasure[CompatParams]):
    """Compatibility with the ideal ranking; equal to ir_measures' `Compat(p=..., normalize=...)`
    when scores have no ties and relevant documents score above 0 (see the README)."""

    name = "Compat"
    description = "rank-biased overlap with an ideal ranking (compatibility)"
    Params = CompatParams

    def compute_batch(self, p: CompatParams, batch: RankedQueries) -> np.ndarray:
        import numpy as np

        qrels = _QrelsIndex(batch)
        ideal = qrels.above(np.arange(len(batch)), 0)  # documents of grade > 0
        depths = _Depths(np.maximum(np.diff(batch.offsets), ideal))
        weights = np.cumprod(np.concatenate(([1.0], np.full(depths.deepest, p.p))))
        score = depths.rbo(depths.overlaps(*_pairs(batch, qrels)), weights)
        if not p.normalize:
            return score
        best = depths.rbo(np.minimum(depths.depth, ideal[depths.query]), weights)
        return np.divide(score, best, out=score.copy(), where=best > 0)


class _Depths:
    """Depths 1..D of every query of a batch, flat: query i's are `depth[starts[i]:starts[i+1]]`."""

    def __init__(self, lengths: np.ndarray) -> None:
        import numpy as np

        self.lengths = lengths
        self.starts = np.concatenate(([0], np.cumsum(lengths)))
        self.query = np.repeat(np.arange(len(lengths)), lengths)
        self.depth = np.arange(self.starts[-1]) - self.starts[self.query] + 1
        self.deepest = int(lengths.max(initial=0))

    def overlaps(self, query: np.ndarray, enters: np.ndarray) -> np.ndarray:
        """O(d) at each depth: how many of the pairs (query, depth it enters at) have entered."""
        import numpy as np

        entering = np.bincount(self.starts[query] + enters - 1, minlength=len(self.depth))
        entered = np.cumsum(entering)  # integers: exact across queries
        before = np.concatenate(([0], entered))[self.starts[:-1]]
        return entered - before[self.query]

    def rbo(self, overlaps: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Per query, sum_d w_d O(d)/d over sum_d w_d (0 for no depth), as ir_measures sums."""
        import numpy as np

        w = weights[self.depth - 1]
        found = self.in_order(w * overlaps / self.depth)
        total = np.cumsum(weights)[np.maximum(self.lengths - 1, 0)]  # in depth order too
        return np.divide(found, total, out=np.zeros(len(found)), where=self.lengths > 0)

    def in_order(self, values: np.ndarray) -> np.ndarray:
        """Per query, its values added one after the other (numpy's sum adds pairwise): rows of a
        zero-padded table, accumulated along the row, a chunk of queries at a time."""
        import numpy as np

        width = max(self.deepest, 1)
        rows = max(1, CHUNK_CELLS // width)
        sums = np.zeros(len(self.lengths))
        for first in range(0, len(self.lengths), rows):
            lengths = self.lengths[first : first + rows]
            table = np.zeros((len(lengths), width))
            table[np.arange(width) < lengths[:, None]] = values[
                self.starts[first] : self.starts[first + len(lengths)]
            ]
            sums[first : first + len(lengths)] = np.add.accumulate(table, axis=1)[:, -1]
        return sums


def _pairs(batch: RankedQueries, qrels: _QrelsIndex) -> tuple[np.ndarray, np.ndarray]:
    """For each retrieved document that meets its twin in the ideal ranking: the query, and the
    depth (1-based) from which both prefixes hold it."""
    import numpy as np

    query = np.repeat(np.arange(len(batch)), np.diff(batch.offsets))
    rank = np.arange(len(batch.grades)) - batch.offsets[query]  # 0-based
    relevant = batch.grades > 0
    query, rank, grade = query[relevant], rank[relevant], batch.grades[relevant]
    nth = _nth_of_grade(query, grade)
    # a ranking never holds more documents of a grade than the qrels, but stay safe if it did
    paired = nth < qrels.above(query, grade - 1) - qrels.above(query, grade)
    ideal_rank = qrels.above(query, grade) + nth
    return query[paired], np.maximum(rank, ideal_rank)[paired] + 1


def _nth_of_grade(query: np.ndarray, grade: np.ndarray) -> np.ndarray:
    """For each retrieved document: how many documents of its query and grade rank above it."""
    import numpy as np

    order = np.lexsort((grade, query))  # stable: rank order within a (query, grade)
    q, g = query[order], grade[order]
    starts = np.ones(len(q), dtype=bool)
    starts[1:] = (q[1:] != q[:-1]) | (g[1:] != g[:-1])
    first = np.maximum.accumulate(np.where(starts, np.arange(len(q)), 0))
    nth = np.empty(len(q), dtype=np.int64)
    nth[order] = np.arange(len(q)) - first
    return nth


class _QrelsIndex:
    """The batch's qrels grades (each query's highest first) as one ascending array of keys
    (query, -grade), so that one binary search counts a query's grades above a grade."""

    def __init__(self, batch: RankedQueries) -> None:
        import numpy as np

        grades, offsets = batch.qrels, batch.qrels_offsets
        self.top = int(max(grades.max(initial=0), batch.grades.max(initial=0)))
        self.span = self.top - int(min(grades.min(initial=0), -1)) + 2
        query = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
        self.keys = query * self.span + (self.top - grades)
        self.offsets = offsets

    def above(self, query: np.ndarray, grade: np.ndarray | int) -> np.ndarray:
        """How many of each query's qrels grades exceed `grade` (-1 <= grade <= the top grade)."""
        import numpy as np

        key = query * self.span + (self.top - grade)
        return np.searchsorted(self.keys, key, side="left") - self.offsets[query]
