"""Compat: compatibility with an ideal ranking (Clarke, Vtyurina and Smucker, ACM TOIS 2021), as
ir_measures computes it: a finite rank-biased overlap, in Python over numpy arrays.

With I the ideal ranking (the query's documents of grade > 0, highest grade first), n the length of
the ranking, D = max(n, |I|) and O(d) the number of documents in both the ranking's and the ideal's
first d:

    RBO    = sum_{d=1}^{D} p^(d-1) O(d) / d  /  sum_{d=1}^{D} p^(d-1)
    Compat = RBO / RBO(I, I)  (normalize, when I is not empty), else RBO

Within a grade the ideal ranking lists the retrieved documents in the run's order, then the
others: the ideal this ranking can reach, which depends on grades and ranks only.

Computed for a batch of queries at once. A retrieved document of grade g that is the j-th of its
grade in the ranking (rank r) is paired with the ideal's j-th document of grade g (rank r'); the
pair is in both prefixes from depth t = max(r, r') on, and adds sum_{d=t}^{D} p^(d-1)/d to the
numerator: a difference of two prefix sums. Every O(d) is a count of such pairs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from pipeline.api import MeasureParams, PythonMeasure, RankedQueries

if TYPE_CHECKING:
    import numpy as np


class CompatParams(MeasureParams):
    """The persistence and whether to normalise by the ideal ranking's own score."""

    p: float = Field(0.95, gt=0, le=1, description="persistence: depth d weighs p^(d-1)")
    normalize: bool = Field(
        True, description="divide by the ideal ranking's score, so that an ideal ranking scores 1"
    )


class Compat(PythonMeasure):
    """Compatibility with the ideal ranking; equal to ir_measures' `Compat(p=..., normalize=...)`
    when scores have no ties and relevant documents score above 0 (see the README)."""

    name = "Compat"
    description = "rank-biased overlap with an ideal ranking (compatibility)"
    Params = CompatParams

    def compute_batch(self, p: Any, batch: RankedQueries) -> np.ndarray:
        import numpy as np

        qrels = _QrelsIndex(batch)
        ideal = qrels.above(np.arange(len(batch)), 0)  # documents of grade > 0
        depth = np.maximum(np.diff(batch.offsets), ideal)
        discounted, plain = _prefix_sums(p.p, int(depth.max(initial=0)))
        query, enters = _pairs(batch, qrels)
        found = discounted[depth[query]] - discounted[enters - 1]
        score = _share(np.bincount(query, found, minlength=len(batch)), plain[depth])
        if not p.normalize:
            return score
        best = plain[ideal] + ideal * (discounted[depth] - discounted[ideal])
        return _share(score, _share(best, plain[depth]), default=score)


def _prefix_sums(p: float, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """sum_{d<=x} p^(d-1)/d and sum_{d<=x} p^(d-1) for x = 0..depth."""
    import numpy as np

    # p^(d-1) by repeated multiplication, as ir_measures computes it (weight *= p)
    weights = np.cumprod(np.concatenate(([1.0], np.full(max(depth - 1, 0), p))))[:depth]
    discounted = np.cumsum(weights / np.arange(1, depth + 1))
    return np.concatenate(([0.0], discounted)), np.concatenate(([0.0], np.cumsum(weights)))


def _share(part: np.ndarray, whole: np.ndarray, default: np.ndarray | None = None) -> np.ndarray:
    """part / whole where whole > 0, else default (0): an empty ideal ranking is not normalised."""
    import numpy as np

    out = np.zeros(len(part)) if default is None else default.copy()
    return np.divide(part, whole, out=out, where=whole > 0)


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
