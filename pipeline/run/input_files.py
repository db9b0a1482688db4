"""The preflight's one look at the data, before anything is loaded: every input exists (a file,
a directory of part files or a URI where Spark reads it, a table given in Python) and its size;
the tables of ir_datasets ids read; and the qrels formats that files' first lines show where the
spec names none (`pipeline.inputs.recognise`: the only reading of an input before it is loaded).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pipeline.errors import SpecError
from pipeline.frames.irds import irds_table, is_irds
from pipeline.inputs.recognise import recognised
from pipeline.inputs.table_rows import MEMORY, memory_view
from pipeline.inputs.trec_qrels import NAME as TREC
from pipeline.spec import LoadedSpec
from pipeline.spec.inputs import run_inputs
from pipeline.spec.models import is_uri

__all__ = ["check_input_files", "with_datasets", "with_qrels_formats"]


def check_input_files(loaded: LoadedSpec) -> dict[Path, int]:
    """Every input is a regular file (with engine spark, also a directory of part files, or a
    URI, which Spark checks); the sizes in bytes of the files (the plan batches runs by size)."""
    spec = loaded.spec
    spark = spec.settings.engine == "spark"
    inputs = [(("collections", n, "qrels"), c.qrels_file) for n, c in spec.collections.items()]
    inputs += [(("pools", n, "exclude"), p.exclude) for n, p in spec.pools.items()]
    inputs = [(key, path) for key, path in inputs if path is not None]
    inputs += [(("runs", f.run, *f.key), f.path) for f in run_inputs(spec.file_runs())]
    inputs += [(("runs", n, "latency"), r.latency) for n, r in spec.file_runs().items()
               if r.latency is not None]  # fmt: skip
    for key, path in inputs:
        if str(path).startswith(MEMORY) or is_irds(path):
            _check_table(loaded, key, path)
        elif is_uri(path):
            if not spark:
                raise SpecError(
                    f"{loaded.where(*key)}: {path} is a URI, which only the Spark engine reads; "
                    "set settings.engine: spark (or --engine spark), or give a local path"
                )
        elif not (path.is_file() or (spark and path.is_dir())):
            problem = "does not exist" if not path.exists() else "is not a regular file"
            problem = "is a directory" if path.is_dir() else problem
            raise SpecError(f"{loaded.where(*key)}: {path} {problem}")
    files = [path for _, path in inputs if isinstance(path, Path) and path.is_file()]
    sizes = {path: path.stat().st_size for path in files}
    tables = {
        path: loaded.tables.get(memory_view(path, kind)) for _, path, kind in _inputs(loaded.spec)
    }
    return {**sizes, **{path: table.nbytes for path, table in tables.items() if table is not None}}


def with_datasets(loaded: LoadedSpec) -> LoadedSpec:
    """The spec with the qrels and runs of its ir_datasets ids read into tables (only the
    duckdb engine reads them: `_check_table` says so for another)."""
    found = {
        memory_view(path, kind): irds_table(path, kind, loaded.where(*key))
        for key, path, kind in _inputs(loaded.spec)
        if is_irds(path) and loaded.spec.settings.engine == "duckdb"
    }
    return replace(loaded, tables={**loaded.tables, **found}) if found else loaded


def with_qrels_formats(loaded: LoadedSpec) -> LoadedSpec:
    """The spec with each collection that names no qrels format given the one its file's first
    line shows (`beir` for a BEIR header), and each pool's `exclude` qrels theirs (in
    `loaded.formats`): read here, with the data, so that compiling the plan and building pools
    read no file (`irpipe compile` shows such a file as TREC's unless its format is given)."""
    collections = loaded.spec.collections
    shown = {
        name: c.model_copy(update={"format": found})
        for name, c in collections.items()
        if c.format is None and c.qrels_file is not None
        and (found := recognised(c.qrels_file)) != TREC
    }  # fmt: skip
    excluded = [p.exclude for p in loaded.spec.pools.values() if p.exclude is not None]
    formats = {str(path): recognised(path) for path in excluded}
    if not shown and not formats:
        return loaded
    spec = loaded.spec.model_copy(update={"collections": {**collections, **shown}})
    return replace(loaded, spec=spec, formats={**loaded.formats, **formats})


def _inputs(spec) -> list[tuple[tuple, object, str]]:
    """(key, path, kind) of every qrels and run input."""
    found = [
        (("collections", n, "qrels"), c.qrels_file, "qrels") for n, c in spec.collections.items()
    ]
    files = run_inputs(spec.file_runs())
    return found + [(("runs", f.run, *f.key), f.path, "run") for f in files]


def _check_table(loaded: LoadedSpec, key: tuple, path: str) -> None:
    """An input held in memory (the Python door's) is given, and evaluated by DuckDB."""
    kind = "qrels" if key[0] == "collections" else "latency" if key[-1] == "latency" else "run"
    if memory_view(path, kind) not in loaded.tables:
        raise SpecError(f"{loaded.where(*key)}: {path} names no table given to evaluate()")
    if loaded.spec.settings.engine != "duckdb":
        raise SpecError(
            f"{loaded.where(*key)}: {path} is read in Python and evaluated by the duckdb engine, "
            f"not {loaded.spec.settings.engine}; write it to a file (to_spec) for Spark"
        )
