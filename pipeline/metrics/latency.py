"""Latency beside effectiveness: how long a run took to answer each query, and statistics over
its queries, as PISA and MS MARCO Web Search report them.

A run's per-query times are read from `runs.NAME.latency` (`pipeline.inputs.latency`: `qid
time` lines, in milliseconds unless a header names `usec`), from a run frame's `latency_ms`
column, or from the times `pipeline.pyterrier.Experiment` measures; a query timed several times
counts its median. Each query's latency in milliseconds is its per-query value (none where the
run has no time for it: left out, and n_queries says how many were timed).

- `Latency(stat=...)`: the mean (default), the median, p90, p95, p99 (numpy's percentiles,
  linear interpolation) or the max over the queries, in milliseconds; lower is better.
- `QPS`: queries per second of their summed latency (queries / (sum of ms / 1000)); higher is
  better.

Both are statistics over the queries, not means of per-query values: the aggregate table holds
the statistic (`pipeline.plan.statistics`), the per-query table each query's latency, which
comparisons test pairwise.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..api import Columns, Measure, MeasureParams, hookimpl


class LatencyParams(MeasureParams):
    stat: Literal["mean", "median", "p90", "p95", "p99", "max"] = Field(
        "mean",
        description="the statistic over the queries' latencies: mean, median, p90, p95, p99 "
        "(numpy's percentiles, linear interpolation) or max",
    )


def _latency(c: Columns) -> str:
    """A query's latency in milliseconds (the median of its timings), NULL where untimed."""
    return f"any_value({c.query_ms()})"


class Latency(Measure[LatencyParams]):
    """A statistic of the run's per-query latency in milliseconds (runs.NAME.latency)."""

    name = "Latency"
    description = (
        "per-query latency in milliseconds (runs.NAME.latency); over the queries its mean, "
        "median, p90, p95, p99 or max (stat)"
    )
    Params = LatencyParams
    better = "lower"
    judged_only_applies = False

    def aggregated_by(self, p: LatencyParams):
        return p.stat

    def needs(self, p: LatencyParams, c: Columns):
        return [c.query_ms()]

    def per_query(self, p: LatencyParams, c: Columns) -> str:
        return _latency(c)

    def missing(self, p: LatencyParams, c: Columns) -> str:
        return "NULL"  # a query the run did not answer was not timed


class QPS(Measure[MeasureParams]):
    """Queries per second of the run's summed per-query latency."""

    name = "QPS"
    description = (
        "queries per second: the timed queries over their summed latency in seconds "
        "(runs.NAME.latency); per query, its latency in milliseconds"
    )
    aggregator = "qps"
    judged_only_applies = False

    def needs(self, p: MeasureParams, c: Columns):
        return [c.query_ms()]

    def per_query(self, p: MeasureParams, c: Columns) -> str:
        return _latency(c)

    def missing(self, p: MeasureParams, c: Columns) -> str:
        return "NULL"


#: the measures that read runs' latencies: a spec naming one needs a run with a latency input
LATENCY_MEASURES = ("Latency", "QPS")


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [Latency, QPS]
