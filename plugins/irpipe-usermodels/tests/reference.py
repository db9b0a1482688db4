"""Plain-Python definitions of the three measures over one query, written as loops, independent of
the plugin's SQL and numpy code.

`ranked` holds the grades of the ranking in rank order as irpipe gives them (-1: no qrels line,
-2: a negative grade); `qrels` every grade the qrels give the query. An empty ranking is a query the
run lacks: 0 for every measure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


def err(ranked: Sequence[int], k: int | None, max_grade: int = 4) -> float:
    """ERR@k, unrounded, in gdeval.pl's floating-point order (score += r*decay/i; decay *= 1-r);
    grades above max_grade count as max_grade."""
    score, decay = 0.0, 1.0
    for i, grade in enumerate(ranked[:k], start=1):
        gain = min(grade, max_grade) if grade > 0 else 0
        r = (2.0**gain - 1) / 2.0**max_grade
        score += r * decay / i
        decay *= 1 - r
    return score


def gdeval_rounding(value: float) -> float:
    """What ir_measures reads from gdeval.pl: the value printed with printf "%.5f"."""
    return float(f"{value:.5f}")


def judged(ranked: Sequence[int], k: int | None) -> float:
    """Judged@k: documents with a qrels line (any grade) among the first min(k, n), over min(k, n)."""
    top = ranked[:k]
    return sum(1 for grade in top if grade != -1) / len(top) if top else 0.0


def compat(
    ranked: Sequence[int], qrels: Sequence[int], p: float = 0.95, normalize: bool = True
) -> float:
    """Compat: finite RBO against the ideal ranking (grades > 0, highest first; within a grade the
    retrieved documents in rank order, then the others), normalised by the ideal's own RBO."""
    if not ranked:
        return 0.0
    ideal = sorted((g for g in qrels if g > 0), reverse=True)
    depth = max(len(ranked), len(ideal))
    score = _rbo(_overlaps(ranked, ideal, depth), p)
    best = _rbo([min(d, len(ideal)) for d in range(1, depth + 1)], p)
    return score / best if normalize and best > 0 else score


def _overlaps(ranked: Sequence[int], ideal: Sequence[int], depth: int) -> list[int]:
    """O(d) for d = 1..depth: documents in both prefixes. Per grade, the j-th retrieved document
    is the ideal's j-th, so a grade adds as many as the shorter prefix holds."""
    in_ranking: Counter[int] = Counter()
    in_ideal: Counter[int] = Counter()
    overlaps, overlap = [], 0
    for d in range(depth):
        if d < len(ranked) and ranked[d] > 0:
            in_ranking[ranked[d]] += 1
            overlap += in_ranking[ranked[d]] <= in_ideal[ranked[d]]
        if d < len(ideal):
            in_ideal[ideal[d]] += 1
            overlap += in_ideal[ideal[d]] <= in_ranking[ideal[d]]
        overlaps.append(overlap)
    return overlaps


def _rbo(overlaps: Sequence[int], p: float) -> float:
    """sum_d p^(d-1) O(d)/d over sum_d p^(d-1), summed as ir_measures' compat provider does."""
    score = normalizer = 0.0
    weight = 1.0
    for d, overlap in enumerate(overlaps, start=1):
        score += weight * overlap / d
        normalizer += weight
        weight *= p
    return score / normalizer
