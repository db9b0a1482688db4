"""Writers of result tables, chosen by file suffix, and atomic writing of a set of outputs.

Built-in writers are registered through the `register_writers` hook like any plugin's. Each writes one
DuckDB table to a path; `write_outputs` gives every writer a temporary file in the target directory and
renames all of them only when all succeeded, so a failure leaves earlier outputs untouched.
Every output gets a manifest beside it (`<file>.manifest.json`): settings, spec hash, input hashes,
irpipe version.

Imports: the contract's `Writer`, the plan's `OutputJob`, the spec, the foundation, and duckdb for
the DuckDB writer; the writers are plugins that the host loads by name.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pipeline import interrupts
from pipeline.contract.writer import Writer
from pipeline.errors import OutputError, SpecError
from pipeline.formatting import format_value, json_text
from pipeline.hookspecs import hookimpl
from pipeline.plan.output_jobs import OutputJob
from pipeline.spec.levels import LEVELS, TABLE_LEVELS
from pipeline.spec.settings import RUNTIME_SETTINGS
from pipeline.sql import quote_identifier

if TYPE_CHECKING:  # DuckDB is imported where a table is written: validating a spec needs none
    import duckdb

__all__ = [
    "TABLE_LEVELS",
    "OutputJob",
    "write_outputs",
    "write_space_separated",
    "writer_for",
    "writers_of",
]

#: the table levels but the report, which the report writers draw (`outputs/report.py`)
_PLAIN_TABLE_LEVELS = tuple(r.name for r in LEVELS if r.is_table and not r.is_report)


def write_space_separated(con: duckdb.DuckDBPyConnection, select: str, path: Path) -> None:
    """The rows of `select` as TREC's text files hold them: fields separated by one space, no
    header, nothing quoted (qrels, runs and pools are read this way by every tool)."""
    con.execute(
        f"COPY ({select}) TO ? (FORMAT csv, DELIMITER ' ', HEADER false, QUOTE '')", [str(path)]
    )


class CopyWriter(Writer):
    """Formats DuckDB's COPY writes itself."""

    options: ClassVar[str]
    levels = TABLE_LEVELS

    def write(self, con, table, path, manifest):
        con.execute(
            f"COPY (SELECT * FROM {quote_identifier(table)}) TO ? ({self.options})", [str(path)]
        )


class CsvWriter(CopyWriter):
    suffixes = (".csv",)
    options = "FORMAT csv, HEADER true"


class TsvWriter(CopyWriter):
    suffixes = (".tsv",)
    options = "FORMAT csv, HEADER true, DELIMITER '\t'"


class ParquetWriter(CopyWriter):
    suffixes = (".parquet",)
    options = "FORMAT parquet"


class JsonlWriter(CopyWriter):
    suffixes = (".jsonl", ".ndjson")
    options = "FORMAT json"


class DuckDBWriter(Writer):
    """A DuckDB database with the table (named after its level) and a `manifest` table."""

    suffixes = (".duckdb", ".db")
    levels = TABLE_LEVELS

    def write(self, con, table, path, manifest):
        con.execute("ATTACH ? AS irpipe_out", [str(path)])
        try:
            name = quote_identifier(table)
            con.execute(f"CREATE TABLE irpipe_out.{name} AS SELECT * FROM {name}")
            con.execute("CREATE TABLE irpipe_out.manifest (key VARCHAR, value VARCHAR)")
            rows = [(key, json_text(value)) for key, value in manifest.items()]
            con.executemany("INSERT INTO irpipe_out.manifest VALUES (?, ?)", rows)
        finally:
            con.execute("DETACH irpipe_out")

    def check_target(self, con, path):
        """Refuse to replace a database another process has open: it would go on writing to the
        old file and lose its work. DuckDB's lock fails at once, so this never waits."""
        import duckdb

        if path.exists():
            try:
                con.execute("ATTACH ? AS irpipe_check", [str(path)])
                con.execute("DETACH irpipe_check")
            except duckdb.IOException as exc:
                if "lock" not in str(exc):
                    return  # not a database we can open: it is simply replaced
                held = re.search(r"\(PID (\d+)\)", str(exc))
                by = f"process {held.group(1)}" if held else "another process"
                raise OutputError(
                    f"{path}: the database is open in {by}; close it there and rerun"
                ) from None
            except duckdb.Error:
                return
        Path(f"{path}.wal").unlink(missing_ok=True)  # a stale log would replay into the new file


class MarkdownWriter(Writer):
    """A readable pivot: one row per run (and query), one column per metric. A table without
    metrics as rows (a precision-recall curve, the comparisons, the correlations' statistics)
    is written as it is."""

    suffixes = (".md", ".markdown")
    levels = _PLAIN_TABLE_LEVELS

    def write(self, con, table, path, manifest):
        columns = _columns(con, table)
        if {"metric", "value"} <= set(columns) and "statistic" not in columns:
            metrics = [m["label"] for m in manifest["metrics"]]
            keys, rows = pivot(con, table, metrics)
            integral = [False] * len(keys) + [m["aggregator"] == "sum" for m in manifest["metrics"]]
            header = keys + metrics
        else:
            header, integral = columns, [c == "n_queries" for c in columns]
            rows = con.execute(f"SELECT * FROM {quote_identifier(table)}").fetchall()
        lines = [_markdown_row(header), "|" + "---|" * len(header)]
        for row in rows:
            lines.append(_markdown_row(map(_formatted, row, integral, header)))
        settings = ", ".join(
            f"{k}={v}" for k, v in manifest["settings"].items() if k not in RUNTIME_SETTINGS
        )
        lines += [
            "",
            f"irpipe {manifest['irpipe_version']}; {settings}; spec {manifest['spec_sha256'][:12]}",
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _formatted(value: Any, integral: bool, column: str) -> str:
    # A p-value shows its first digits however small it is (4 decimals would print 0.0000).
    if column in ("p_value", "p_adjusted") and isinstance(value, float):
        return f"{value:.4g}"
    return format_value(value, integral)


def _markdown_row(cells) -> str:
    # A name is data: a '|' or a line break in a run name or label must not break the table.
    escaped = (str(c).replace("|", "\\|").replace("\n", " ") for c in cells)
    return "| " + " | ".join(escaped) + " |"


def pivot(con: duckdb.DuckDBPyConnection, table: str, metrics: list[str]):
    """Rows of `table` as (key columns, rows): one row per key, one cell per metric in order."""
    columns = _columns(con, table)
    keys = [c for c in columns if c not in ("metric", "value", "text", "n_queries")]
    cells = ", ".join("any_value(value) FILTER (WHERE metric = ?)" for _ in metrics)
    key_list = ", ".join(map(quote_identifier, keys))
    source = quote_identifier(table)
    query = f"SELECT {key_list}, {cells} FROM {source} GROUP BY {key_list} ORDER BY {key_list}"
    return keys, con.execute(query, metrics).fetchall()


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [row[0] for row in con.execute(f"DESCRIBE {quote_identifier(table)}").fetchall()]


@hookimpl
def register_writers() -> list[type[Writer]]:
    return [CsvWriter, TsvWriter, ParquetWriter, JsonlWriter, DuckDBWriter, MarkdownWriter]


def writer_for(path: Path, level: str | None = None) -> Writer:
    """The writer for a path's suffix (at `level`, where writers share a suffix by level), or a
    SpecError listing the known suffixes. A writer is returned even if it does not write
    `level`: the caller says what it writes instead."""
    writers = _writers()
    suffix = path.suffix.lower()
    if suffix not in writers:
        raise SpecError(f"{path}: no writer for '{suffix}'; known: {', '.join(sorted(writers))}")
    return next((w for w in writers[suffix] if level in w.levels), writers[suffix][0])


def writers_of(level: str) -> list[str]:
    """The suffixes whose writers write `level`, sorted (for messages)."""
    found = _writers().items()
    return sorted(suffix for suffix, writers in found if any(level in w.levels for w in writers))


def _writers() -> dict[str, list[Writer]]:
    from pipeline.host.manager import get_plugin_manager

    found: dict[str, list[Writer]] = {}
    for impl in get_plugin_manager().hook.register_writers.get_hookimpls():
        for cls in impl.function() or []:
            for suffix in cls.suffixes:
                for other in found.get(suffix, []):
                    if _overlap(other.levels, cls.levels):
                        raise SpecError(
                            f"two writers claim '{suffix}': {type(other).__name__}, {cls.__name__}"
                        )
                found.setdefault(suffix, []).append(cls())
    return found


def _overlap(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Two writers of one suffix clash where they write a level both."""
    return bool(set(a) & set(b))


def write_outputs(con: duckdb.DuckDBPyConnection, jobs: list[OutputJob], manifest: dict) -> None:
    """Write each job's table and its manifest to temporary files, then rename them all. The
    job's level picks the writer where a suffix has several (`.md`).

    Nothing is renamed unless every write succeeded, and temporary files never outlive the call.
    """
    import duckdb

    staged: list[tuple[Path, Path]] = []
    try:
        _stage(con, jobs, manifest, staged)
        interrupts.checkpoint()  # a signal that came during an import stops the run here
        # Signals wait for the renames (microseconds): every new output, or none.
        with interrupts.held():
            for temp, final in staged:
                os.replace(temp, final)
            interrupts.committed()
    except (OSError, duckdb.Error) as exc:
        raise OutputError(f"cannot write outputs: {exc}") from None
    finally:
        with interrupts.held():  # a signal must not leave half of the temporary files behind
            for temp, _ in staged:
                temp.unlink(missing_ok=True)
                Path(f"{temp}.wal").unlink(missing_ok=True)


def _stage(
    con: duckdb.DuckDBPyConnection,
    jobs: list[OutputJob],
    manifest: dict,
    staged: list[tuple[Path, Path]],
) -> None:
    """Every job's file and manifest written under a temporary name (added to `staged`), once
    every target is known to be replaceable."""
    writers = [_checked(con, job.path, job.level) for job in jobs]
    for job, writer in zip(jobs, writers, strict=True):
        writer.write(con, job.table, _reserve(job.path, staged), manifest)
        sidecar = _reserve(job.path.with_name(job.path.name + ".manifest.json"), staged)
        sidecar.write_text(json_text({**manifest, "table": job.table}, indent=2) + "\n", "utf-8")


def _checked(con: duckdb.DuckDBPyConnection, path: Path, level: str) -> Writer:
    """The writer for `path`, once the target is known to be replaceable (checked before any
    output is written, so a refusal leaves every output as it was)."""
    writer = writer_for(path, level)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        raise OutputError(f"{path}: is a directory")
    writer.check_target(con, path)
    return writer


def _reserve(path: Path, staged: list[tuple[Path, Path]]) -> Path:
    """A fresh temporary name in the target's directory (same filesystem, so rename is atomic)."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.unlink(name)  # writers create the file; DuckDB refuses to ATTACH an empty one
    staged.append((Path(name), path))
    return Path(name)
