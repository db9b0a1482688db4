"""The effectiveness-latency trade-off (`level: tradeoff`): per collection, each run's value of
one effectiveness `metric` beside one latency statistic (`latency`: a Latency or QPS metric of
the spec), and whether the run is on the Pareto front: no other run of the collection is at
least as good by both and better by one (each metric's own direction; `pareto_front`, which the
dashboard runs over a history's aggregates too). Pure, no I/O."""

from __future__ import annotations

from pipeline.errors import SpecError
from pipeline.measures.resolved import ResolvedMeasure, metric_labelled
from pipeline.spec import LoadedSpec
from pipeline.sql import Statement

__all__ = [
    "TRADEOFF",
    "check_tradeoff",
    "is_tradeoff_table",
    "pareto_front",
    "sign",
    "tradeoff_sql",
    "tradeoff_table",
    "wide_apart",
]

TRADEOFF = "tradeoff"


def tradeoff_table(index: int) -> str:
    """The table output `index` (a tradeoff) writes."""
    return f"{TRADEOFF}_{index}"


def is_tradeoff_table(table: str) -> bool:
    return table.startswith(f"{TRADEOFF}_")


def check_tradeoff(
    loaded: LoadedSpec, index: int, metrics: list[ResolvedMeasure]
) -> tuple[ResolvedMeasure, ResolvedMeasure]:
    """The (effectiveness, latency) metrics output `index` draws, by their labels: each a
    metric of the spec with a direction, the second one of runs' times; else a SpecError
    naming the key."""
    output = loaded.spec.outputs[index]
    metric = metric_labelled(loaded.where("outputs", index, "metric"), output.metric, metrics)
    latency = metric_labelled(loaded.where("outputs", index, "latency"), output.latency, metrics)
    if "latency" not in latency.needs_kinds:
        raise SpecError(
            f"{loaded.where('outputs', index, 'latency')}: {latency.label} is not a latency "
            "statistic: name a Latency or QPS metric of the spec (Latency(stat='p95'), QPS)"
        )
    for m, key in ((metric, "metric"), (latency, "latency")):
        if m.better is None or m.measure.kind != "number":
            raise SpecError(
                f"{loaded.where('outputs', index, key)}: {m.label} has no direction (neither a "
                "higher nor a lower value is better): a trade-off needs one"
            )
    return metric, latency


def tradeoff_sql(index: int, metric: ResolvedMeasure, latency: ResolvedMeasure) -> Statement:
    """Per collection and run with both values: the metric's, the latency statistic's,
    whether the run is on the Pareto front, and which latency value is better (`faster`: -1
    lower, 1 higher, as QPS); runs in spec order."""
    sql = f"""
CREATE TABLE {tradeoff_table(index)} AS
WITH points AS (
    SELECT runs.ordinal, e.collection, e.run, e.metric, e.value, l.metric AS latency,
        l.value AS latency_value, {_sign(metric)} AS better, {_sign(latency)} AS faster
    FROM aggregate e
    JOIN aggregate l ON l.run = e.run AND l.collection = e.collection
    JOIN runs ON runs.run = e.run AND runs.collection = e.collection
    WHERE e.metric = ? AND l.metric = ? AND isfinite(e.value) AND isfinite(l.value)
)
SELECT collection, run, metric, value, latency, latency_value,
    {pareto_front("points", ("collection",))} AS pareto, faster
FROM points p
ORDER BY ordinal"""
    return Statement(sql, [metric.label, latency.label])


def pareto_front(points: str, same: tuple[str, ...]) -> str:
    """SQL, true where the row `p` of `points` is on the Pareto front of the rows sharing its
    `same` columns: no other run among them is at least as good by both values and better by
    one. Each row has its `run`, its `value` and `latency_value`, and the signs `better` and
    `faster` of its metric and its latency statistic (1 where a higher value is better, -1
    where a lower one is: `sign`). The one definition of the front: the `tradeoff` output's
    and the dashboard's."""
    alike = "".join(f" AND o.{column} = p.{column}" for column in same)
    return f"""NOT EXISTS (SELECT 1 FROM {points} o WHERE o.run <> p.run{alike}
        AND p.better * o.value >= p.better * p.value
        AND p.faster * o.latency_value >= p.faster * p.latency_value
        AND (p.better * o.value > p.better * p.value
             OR p.faster * o.latency_value > p.faster * p.latency_value))"""


def wide_apart(latencies: list[float]) -> bool:
    """Whether latencies are drawn on a log scale: all positive, the largest more than 20
    times the smallest (an order of magnitude apart)."""
    positive = [t for t in latencies if t > 0]
    return bool(positive) and len(positive) == len(latencies) and max(positive) > 20 * min(positive)


def sign(better: str | None) -> int:
    """1 where a higher value is better, -1 where a lower one is."""
    return -1 if better == "lower" else 1


def _sign(m: ResolvedMeasure) -> str:
    return str(sign(m.better))
