"""What the pages know of a history's metrics, by label (`Metrics`, `read_metrics`): which value
is better, which per-query value is, and which metrics are latency statistics. Each label is
resolved by its canonical form as the installed measures define it now (`p95_ms` is the
`Latency(stat='p95')` its evaluation recorded), never by the label alone."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pipeline.history.views import installed_measure

__all__ = ["Metrics", "read_metrics"]


@dataclass(frozen=True)
class Metrics:
    """Each metric label's reading. `better`: which value is better, "higher", "lower" or None
    (a count, a diagnostic, or a metric no installed plugin provides); `per_query`: the same
    for its per-query values (a latency statistic's per-query values are times, lower better,
    even where its value is QPS, higher better); `latency`: the latency statistics with a
    direction (Latency, QPS: the metrics that read runs' times), by their measure's name;
    `effectiveness`: the other metrics with a direction, numbers."""

    better: dict[str, str | None] = field(default_factory=dict)
    per_query: dict[str, str | None] = field(default_factory=dict)
    latency: dict[str, str] = field(default_factory=dict)
    effectiveness: frozenset[str] = frozenset()

    def default_latency(self, labels: Iterable[str]) -> str | None:
        """The latency statistic a page shows first among `labels`: the first Latency one,
        else the first latency statistic (QPS), else None."""
        found = [label for label in labels if label in self.latency]
        return next((m for m in found if self.latency[m] == "Latency"), found[0] if found else None)


def read_metrics(evaluations: list[dict[str, Any]], registry) -> Metrics:
    """The reading of every metric label of `evaluations` (each with its `canonical` forms),
    as `registry` (the installed measures) resolves them."""
    labelled = {(label, e["canonical"].get(label) or label): None
                for e in evaluations for label in e["metrics"]}  # fmt: skip
    better, per_query, latency, effectiveness = {}, {}, {}, set()
    for label, canonical in labelled:  # each once: a long history repeats them
        resolved = installed_measure(canonical, registry)
        direction = None if resolved is None else resolved.better
        times = direction is not None and "latency" in resolved.needs_kinds
        better[label] = direction
        per_query[label] = "lower" if times else direction
        if times and resolved.measure.kind == "number":
            latency[label] = resolved.measure.name
        elif direction is not None and resolved.measure.kind == "number":
            effectiveness.add(label)
    return Metrics(better, per_query, latency, frozenset(effectiveness))
