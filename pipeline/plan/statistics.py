"""Statistics over a group's values as SQL, each equal to numpy's to the last bit: the median
(`numpy.median`: the middle value, or the mean of the two middle ones), a percentile
(`numpy.percentile`'s default, linear interpolation between the closest ranks), the maximum, and
queries per second. Latency's aggregators (`pipeline.metrics.latency`, in the aggregate
statement) and the median of a query's repeated timings (`pipeline.plan.latency`) read them.
Pure, no I/O.

numpy's linear percentile of sorted values `s` (n of them) at `q`: the virtual index
`i = (n - 1) * q`, `a = s[floor(i)]`, `b = s[floor(i) + 1]` (the last value past the end) and
`t = i - floor(i)`; then `a + (b - a) * t`, or `b - (b - a) * (1 - t)` where `t >= 0.5`
(numpy's `_lerp`, which keeps the result monotone). Written here the same way, in the same
order of operations, so that no value differs from numpy's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipeline.measures.resolved import ResolvedMeasure

__all__ = [
    "PERCENTILES", "STATISTICS", "aggregated_statistics", "median", "percentile", "statistic",
]  # fmt: skip

#: the percentiles an aggregator may name, by name (`p95`: numpy's q = 95 / 100)
PERCENTILES = {"p90": 90, "p95": 95, "p99": 99}
#: every statistic `statistic` writes, beyond the mean
STATISTICS = ("median", *PERCENTILES, "max", "qps")


def aggregated_statistics(metrics: Iterable[ResolvedMeasure]) -> tuple[str, ...]:
    """The statistics of `STATISTICS` that `metrics` aggregate by, once each, in their order:
    the cases the aggregate statement needs."""
    return tuple(dict.fromkeys(m.aggregator for m in metrics if m.aggregator in STATISTICS))


def _sorted(value: str) -> str:
    """SQL: the group's non-NULL `value`s, sorted ascending."""
    return f"list_sort(list({value}) FILTER (WHERE {value} IS NOT NULL))"


def median(value: str) -> str:
    """SQL aggregate: numpy.median of the group's `value`s (NULL for none)."""
    middle = "s[(len(s) + 1) // 2]"
    pair = "(s[len(s) // 2] + s[len(s) // 2 + 1]) / 2.0"
    body = f"CASE WHEN len(s) = 0 THEN NULL WHEN len(s) % 2 = 1 THEN {middle} ELSE {pair} END"
    return f"list_transform([{_sorted(value)}], lambda s: {body})[1]"


def percentile(value: str, q: int) -> str:
    """SQL aggregate: numpy.percentile(values, q) of the group's `value`s (NULL for none)."""
    fraction = f"(CAST({int(q)} AS DOUBLE) / 100.0)"  # numpy divides q by 100 in doubles too
    # i: the virtual index; its floor counts from 0, DuckDB's lists from 1
    a = "s[CAST(floor(i) AS BIGINT) + 1]"
    b = "s[least(CAST(floor(i) AS BIGINT) + 2, len(s))]"
    t = "(i - floor(i))"
    lerp = (
        f"CASE WHEN {t} >= 0.5 THEN {b} - ({b} - {a}) * (1 - {t}) ELSE {a} + ({b} - {a}) * {t} END"
    )
    at = f"list_transform([CAST(len(s) - 1 AS DOUBLE) * {fraction}], lambda i: {lerp})[1]"
    return f"list_transform([{_sorted(value)}], lambda s: CASE WHEN len(s) = 0 THEN NULL ELSE {at} END)[1]"


def statistic(name: str, value: str, order: str) -> str:
    """SQL aggregate: the statistic `name` (`STATISTICS`) of the group's `value`s; `qps` is the
    number of values over their sum in seconds (values in milliseconds, summed in `order`)."""
    if name == "median":
        return median(value)
    if name in PERCENTILES:
        return percentile(value, PERCENTILES[name])
    if name == "max":
        return f"max({value})"
    if name == "qps":
        return f"count({value}) / (sum({value} ORDER BY {order}) / 1000.0)"
    raise ValueError(f"no statistic {name!r}")
