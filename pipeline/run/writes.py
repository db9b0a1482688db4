"""What a spec's evaluation writes and what it must keep, checked before any data is read
(`pipeline.outputs.targets`): its outputs and its pools', the history, the dashboard, and a JUnit
report; against its inputs, the spec and the spec's directory."""

from __future__ import annotations

from pathlib import Path

from pipeline.outputs.targets import Kept, Written, check_written
from pipeline.spec import LoadedSpec
from pipeline.spec.inputs import run_inputs
from pipeline.spec.outputs import PER_RUN_LEVELS, run_files

__all__ = ["check_report", "check_writes", "kept_paths", "written_paths"]

_INPUT = "writing it would replace the data"


def check_writes(
    loaded: LoadedSpec, history: Written | None = None, report: Written | None = None
) -> None:
    """Every path the spec's evaluation writes, apart from what it keeps and from each other;
    `history` replaces the spec's history (`--history`), `report` is a JUnit file (`--junit`)."""
    written = written_paths(loaded)
    if history is not None:
        written = [w for w in written if w.kind != "history"] + [history]
    check_written([*written, *([report] if report else [])], kept_paths(loaded))


def check_report(spec: str | Path, path: Path) -> None:
    """A JUnit report (`irpipe run --junit PATH`) apart from what the spec's evaluation reads
    and writes, and replacing only a report irpipe wrote."""
    from pipeline.spec import load_spec

    check_writes(load_spec(spec), report=Written(path, "report", "--junit", "--junit"))


def kept_paths(loaded: LoadedSpec) -> list[Kept]:
    """The spec, its directory (files may be written inside it), and every input file."""
    spec = loaded.spec
    inputs = [(("collections", n, "qrels"), c.qrels_file) for n, c in spec.collections.items()]
    inputs += [(("runs", f.run, *f.key), f.path) for f in run_inputs(spec.file_runs())]
    inputs += [(("pools", n, "exclude"), p.exclude) for n, p in spec.pools.items()]
    kept = [
        Kept(loaded.path, "the spec"),
        Kept(loaded.path.parent, "the spec's directory", enclosing=True),
    ]
    return kept + [
        Kept(path, f"an input of this spec ({'.'.join(key)})", _INPUT)
        for key, path in inputs
        if isinstance(path, Path)  # not a URI, an ir_datasets id or a table
    ]


def _paths(loaded: LoadedSpec, key: tuple, output) -> list[Path]:
    """The files an output writes: its path, or a per-run output's file for each run."""
    if output.level not in PER_RUN_LEVELS:
        return [output.path]
    return [f.path for f in run_files(output, loaded.spec.runs, loaded.where(*key, "path"))]


def written_paths(loaded: LoadedSpec) -> list[Written]:
    """Every path the evaluation writes: the outputs (the spec's, then its pools'), the history
    and its dashboard."""
    spec = loaded.spec
    keys = [("outputs", i) for i in range(len(spec.outputs))]
    keys += [
        ("pools", n, "outputs", i) for n, p in spec.pools.items() for i in range(len(p.outputs))
    ]
    outputs = [*spec.outputs, *(o for p in spec.pools.values() for o in p.outputs)]
    written = [
        Written(path, "output", ".".join(map(str, k)), loaded.where(*k, "path"))
        for k, o in zip(keys, outputs, strict=True)
        for path in _paths(loaded, k, o)
    ]
    if spec.history is not None:
        written.append(Written(spec.history.path, "history", "history", loaded.where("history")))
        if spec.history.dashboard is not None:
            where = loaded.where("history", "dashboard")
            written.append(Written(spec.history.dashboard, "dashboard", "history.dashboard", where))
    return written
