"""The preflight's checks of the runs' latency inputs (`runs.NAME.latency`), before any data is
read: a metric that reads runs' times has some run that gives them (both engines read them; a
table given in Python only the duckdb engine, as every input: `input_files`); and, with the
data, the unit each file's header names (its first line: `qid usec`), which the plan reads the
file in."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pipeline.errors import SpecError
from pipeline.inputs.latency import unit_named
from pipeline.inputs.recognise import first_line
from pipeline.measures.resolve import columns_of, declared_needs
from pipeline.measures.resolved import ResolvedMeasure
from pipeline.plan.latency import unit_key
from pipeline.spec import LoadedSpec

__all__ = ["check_latency", "with_latency_units"]


def check_latency(loaded: LoadedSpec, metrics: list[ResolvedMeasure]) -> None:
    """SpecError, naming the key, for a metric of runs' times in a spec whose runs give none."""
    spec = loaded.spec
    timed = [name for name, run in spec.file_runs().items() if run.latency is not None]
    c = columns_of(spec.settings)
    reading = [m for m in metrics if any(n.kind == "latency" for n in declared_needs(m, c))]
    if reading and not timed:
        raise SpecError(
            f"{loaded.where('metrics')}: metric '{reading[0].label}' reads the runs' per-query "
            "times, and no run gives them: add runs.NAME.latency (a file of qid time lines, in "
            "milliseconds)"
        )


def with_latency_units(loaded: LoadedSpec) -> LoadedSpec:
    """The spec with the unit of each latency file whose first line is a header naming another
    than milliseconds (`qid usec`), in `loaded.formats` (read by `plan.latency`)."""
    paths = [r.latency for r in loaded.spec.file_runs().values() if isinstance(r.latency, Path)]
    units = {unit_key(path): unit for path in paths if (unit := _unit(path)) != "ms"}
    return replace(loaded, formats={**loaded.formats, **units}) if units else loaded


def _unit(path: Path) -> str:
    """The unit a file's header names; milliseconds when it has none, or cannot be read here
    (loading it then says what is wrong)."""
    line = first_line(path)
    return "ms" if line is None else unit_named(line)
