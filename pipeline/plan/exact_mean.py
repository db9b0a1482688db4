"""The correctly rounded mean of a group's values, as SQL: what Python's `statistics.mean` gives
(the exact sum of the floats, rounded once), whatever the order of the values. Pure, no I/O.

A measure whose tools average with `statistics.mean` (nuggetizer's scores of generated answers)
declares the aggregator `exact_mean`. An ordered sum divided by the count (`mean`, trec_eval's)
differs from it in the last bit for about half of all groups of decimals.

How: each value times 2^100 is an integer for every double in [2^-47, 1] (its last bit is worth
at least 2^-99), so their sum is exact in a HUGEINT; its quotient by the count, a double `a`, is
within two units in the last place of the exact mean, which is the candidate around `a` nearest
the exact sum (compared in integers), the even one on a tie. A value that is negative, above 1 or
below 2^-47 (but 0) is refused, naming the metric, rather than averaged inexactly.
"""

from __future__ import annotations

__all__ = ["averages_exactly", "exact_mean"]

_SCALE = "1267650600228229401496703205376.0"  # 2^100
_SMALLEST = "7.105427357601002e-15"  # 2^-47


def averages_exactly(measures) -> bool:
    """Whether a measure of `measures` (resolved) averages by `exact_mean`: the aggregate
    statement then holds its SQL (left out otherwise)."""
    return any(m.aggregator == "exact_mean" for m in measures)


def exact_mean(value: str, metric: str = "metric") -> str:
    """SQL: the correctly rounded mean of the aggregate group's `value`s (a DOUBLE column), 0.0
    for a sum of 0; an execution error naming the group's `metric` column for a value it cannot
    average exactly."""
    total, n = f"sum(CAST({value} * {_SCALE} AS HUGEINT))", f"count({value})"
    approx = f"(CAST({total} AS DOUBLE) / {n} / {_SCALE})"
    down, up = f"nextafter({approx}, -1.0)", f"nextafter({approx}, 2.0)"
    candidates = f"[nextafter({down}, -1.0), {down}, {approx}, {up}, nextafter({up}, 2.0)]"
    scored = f"""list_transform(list_filter({candidates}, lambda c: c >= 0), lambda c: {{
            'error': abs({total} - CAST(c * {_SCALE} AS HUGEINT) * {n}),
            'odd': CASE WHEN c = 0 THEN 0 ELSE CAST(c / (nextafter(c, 2.0) - c) AS HUGEINT) % 2 END,
            'mean': c}})"""
    outside = f"NOT ({value} = 0 OR {value} BETWEEN {_SMALLEST} AND 1)"
    return f"""CASE
            WHEN bool_or({outside}) THEN error('metric ' || any_value({metric}) || ': exact_mean '
                || 'averages values 0 or in [2^-47, 1], found ' || min({value}) FILTER ({outside}))
            WHEN {total} = 0 THEN 0.0
            ELSE list_min({scored}).mean
        END"""
