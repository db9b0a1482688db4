"""irpipe's own plugins, loaded by name before any installed one, exactly as entry points are: the
built-in metrics (one family per module) and writers. Their names are what `irpipe plugins` lists."""

from __future__ import annotations

__all__ = [
    "DEFAULT_PLUGINS",
]


DEFAULT_PLUGINS = (
    "pipeline.metrics.counts",
    "pipeline.metrics.precision",
    "pipeline.metrics.set_based",
    "pipeline.metrics.average_precision",
    "pipeline.metrics.reciprocal_rank",
    "pipeline.metrics.cumulative_gain",
    "pipeline.metrics.gain_experimental",
    "pipeline.metrics.rank_biased",
    "pipeline.metrics.expected_reciprocal_rank",
    "pipeline.metrics.relstring",
    "pipeline.metrics.cwl",
    "pipeline.metrics.diversity",
    "pipeline.metrics.nuggets",
    "pipeline.metrics.support",
    "pipeline.metrics.latency",
    "pipeline.outputs",
    "pipeline.outputs.trec_eval",
    "pipeline.outputs.report",
    "pipeline.outputs.plots",
    "pipeline.outputs.pool",
    "pipeline.outputs.trec_run",
    "pipeline.outputs.ir_metadata",
)
