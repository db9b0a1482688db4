"""The runs' latency files in the plan: one load per run that names one (`runs.NAME.latency`,
or a frame's `latency_ms` column), read in the unit its header names, and the statement that
keeps each query's median time once they are loaded (`query_latency`, which `Columns.query_ms`
reads: its format's `after`). Pure, no I/O:
the preflight read each file's first line for its unit (`LoadedSpec.formats`)."""

from __future__ import annotations

from dataclasses import replace

from pipeline.inputs.format import Format, Load
from pipeline.inputs.latency import read
from pipeline.plan.statistics import median
from pipeline.spec import LoadedSpec
from pipeline.sql import Statement

__all__ = ["latency_loads", "query_medians", "unit_key"]


def unit_key(path: object) -> str:
    """The key of a latency file's unit in `LoadedSpec.formats` (the preflight's reading)."""
    return f"latency:{path}"


def latency_loads(loaded: LoadedSpec) -> tuple[Load, ...]:
    """Each run's latency input, in spec order, under the run's name."""
    mode = loaded.spec.settings.input
    return tuple(
        Load(run.latency, name, _format(mode, loaded.formats.get(unit_key(run.latency), "ms")))
        for name, run in loaded.spec.file_runs().items()
        if run.latency is not None
    )


def _format(mode: str, unit: str) -> Format:
    """How a latency file in `unit` is read, and what runs once it is loaded (`after`, which
    both engines run as for any format): each query's median time."""
    return replace(read(mode, unit), after=query_medians)


def query_medians(runs: list[str]) -> Statement:
    """Each query's median time (numpy.median of its repetitions) of the latency inputs of
    `runs`, into `query_latency`."""
    sql = f"""INSERT INTO query_latency
SELECT run, qid, {median("ms")} FROM latency WHERE list_contains(?, run) GROUP BY run, qid"""
    return Statement(sql, [runs])
