"""Qrels and runs as Spark DataFrames of checked rows (`shard.ROW_SCHEMA`), wherever they live.

An input is a file, a directory of part files or a glob, on any file system Hadoop reads (a local
path, `file://`, `hdfs://`, `s3a://`), of TREC text (plain or compressed) or Parquet. Text lines
are split and checked on the workers by the DuckDB engine's own SQL (`readers.parsed_lines`), so
a line is read, and rejected, exactly as `irpipe` reads it on one machine. Parquet has columns
instead of fields: `qid`, `docno` and `rel` (qrels: an integer, or a double under `grades: real`)
or `score` and optionally `rank` (runs).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from pipeline.engines.spark.shard import ROW_SCHEMA, SPARK_TYPES, typed
from pipeline.errors import InputDataError, SpecError
from pipeline.inputs.format import Format, Load
from pipeline.inputs.row_stream import padded, stream_columns
from pipeline.inputs.table_rows import cast_sql, id_type_problem, not_parquet_message
from pipeline.inputs.text_lines import parsed_lines

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "file_key",
    "files_of",
    "input_rows",
    "is_parquet",
    "parse_lines",
    "parquet_columns",
    "uri_of",
]


def parquet_columns(load: Load) -> dict[str, str]:
    """The columns the load's Parquet input must have (its table's, but the optional ones), and
    their Spark types once read: a grade by the `grades` setting its format reads under."""
    table, grades = load.format.loaded, load.format.grades
    optional = {c.name for c in table.columns if c.optional}
    return {c: SPARK_TYPES[t] for c, t in table.typed(grades).items() if c not in optional}


def uri_of(path: Path | str) -> str:
    """The URI Spark reads: a URI as given, a local path as `file://` (never the cluster's
    default file system, which a path relative to the spec does not mean)."""
    # Not Path.as_uri(): Hadoop takes the text as it is and would look for "%20" in the name.
    return path if isinstance(path, str) else f"file://{path.resolve().as_posix()}"


def files_of(spark: SparkSession, path: Path | str) -> list[tuple[str, int, int]]:
    """(URI, size, modification time) of every data file of an input, sorted, through Hadoop's
    file systems; a SpecError when there is none, or when Hadoop cannot list the path."""
    from py4j.protocol import Py4JJavaError

    try:
        found = _listed(spark, uri_of(path))
    except Py4JJavaError as exc:  # no file system for the scheme, no access, no such host
        problem = str(exc.java_exception.toString()).splitlines()[0]
        raise SpecError(f"{path}: Spark cannot list it: {problem}") from None
    if not found:
        raise SpecError(f"{path}: no such file or directory, or no data file in it")
    # Hadoop's own text of a path (not its URI, which escapes spaces as %20): what it reads back.
    return sorted((str(s.getPath()), s.getLen(), s.getModificationTime()) for s in found)


def _listed(spark: SparkSession, uri: str) -> list:
    """Hadoop's statuses of the data files that a file, a directory or a glob names."""
    hadoop = spark.sparkContext._jvm.org.apache.hadoop.fs.Path(uri)
    fs = hadoop.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    found = []
    for status in fs.globStatus(hadoop) or []:
        children = fs.listStatus(status.getPath()) if status.isDirectory() else [status]
        found += [c for c in children if c.isFile() and not _hidden(c.getPath().getName())]
    return found


def _hidden(name: str) -> bool:
    # Spark's own rule for the data files of a directory: `_SUCCESS`, `.crc` files are not data.
    return name.startswith(("_", "."))


def is_parquet(files: list[tuple[str, int, int]], path: Path | str) -> bool:
    """Parquet when the input's name says so, or each of its files does."""
    return str(path).rstrip("/").endswith(".parquet") or all(
        f.endswith(".parquet") for f, *_ in files
    )


def input_rows(
    spark: SparkSession, loads: list[Load], files: dict[Load, list], parquet: set[Load]
) -> DataFrame:
    """Every file's rows as one DataFrame of `ROW_SCHEMA`; `files`: each input's data files
    (`files_of`), the inputs in `parquet` being Parquet and the others text. The text inputs of
    a format are one scan, whatever their number: a thousand runs are not a thousand unions."""
    frames = [_parquet_rows(spark, load) for load in loads if load in parquet]
    texts = [load for load in loads if load not in parquet]
    for fmt in dict.fromkeys(load.format for load in texts):
        text = [load for load in texts if load.format == fmt]
        frames += [_text_rows(spark, group, files) for group in _apart(text, files)]
    return reduce(lambda a, b: a.unionByName(b), frames)


def _apart(loads: list[Load], files: dict[Load, list]) -> list[list[Load]]:
    """The loads in groups that share no file (two runs may name one file: each is a run)."""
    groups: list[tuple[list[Load], set]] = []
    for load in loads:
        mine = {uri for uri, *_ in files[load]}
        group = next((g for g in groups if not g[1] & mine), None)
        if group is None:
            groups.append(([], set()))
            group = groups[-1]
        group[0].append(load)
        group[1].update(mine)
    return [members for members, _ in groups]


def _text_rows(spark: SparkSession, loads: list[Load], files: dict[Load, list]) -> DataFrame:
    fmt, kind = loads[0].format, _kind(loads[0])
    names = {file_key(uri): load.name for load in loads for uri, *_ in files[load]}

    def parse(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield from parse_lines(batches, fmt, kind, names)

    lines = spark.read.text([uri_of(load.path) for load in loads])
    return lines.selectExpr("value AS line", "_metadata.file_path AS file").mapInArrow(
        parse, ROW_SCHEMA
    )


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(//[^/]*)?")


def file_key(uri: str) -> str:
    """A data file's path, however Spark or Hadoop spells its URI (`file:/x`, `file:///x`,
    `%20` or a space)."""
    return unquote(_SCHEME.sub("", uri))


def parse_lines(
    batches: Iterable[pa.RecordBatch], fmt: Format, kind: str, names: dict[str, str]
) -> Iterator[pa.RecordBatch]:
    """Text lines (Arrow batches of `line` and its `file`) as rows of `ROW_SCHEMA`, each named
    by `names` (`file_key` -> run or collection); on a worker."""
    import duckdb

    con = duckdb.connect(config={"threads": 1})
    source = "(SELECT ?::VARCHAR AS kind, n.name, l.line FROM lines l JOIN names n USING (file))"
    sql = f"""SELECT kind, name, {", ".join(padded(fmt.loaded))}, ok
        FROM ({parsed_lines(source, fmt, "kind, name")})"""
    try:
        for batch in batches:
            con.register("lines", batch)
            con.register("names", _names(batch, names))
            yield from typed(con.sql(sql, params=[kind]).to_arrow_reader(), ROW_SCHEMA)
            con.unregister("lines")
            con.unregister("names")
    finally:
        con.close()


def _names(batch: pa.RecordBatch, names: dict[str, str]) -> pa.Table:
    """(file, name) of the few files a batch's lines come from."""
    import pyarrow as pa
    import pyarrow.compute as pc

    files = pc.unique(batch.column("file")).to_pylist()
    return pa.table({"file": files, "name": [names[file_key(f)] for f in files]})


def _parquet_frame(spark: SparkSession, load: Load) -> DataFrame:
    """A Parquet input as Spark reads it; InputDataError when it is not Parquet, lacks a column
    its table needs, or has an id column that is neither text nor integers (as on DuckDB)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import AnalysisException

    try:  # Spark reads the footers here, for the schema
        frame = spark.read.parquet(uri_of(load.path))
    except (Py4JJavaError, AnalysisException) as exc:
        raise InputDataError(not_parquet_message(load.path, _cause(exc))) from None
    wanted = parquet_columns(load)
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise InputDataError(
            f"{load.path}: a Parquet {_kind(load)} needs the columns {', '.join(wanted)}; "
            f"missing: {', '.join(missing)} (found: {', '.join(frame.columns)})"
        )
    for column in [c for c in ("qid", "docno") if c in wanted]:
        kind = frame.schema[column].dataType.simpleString()
        problem = id_type_problem(str(load.path), column, kind)
        if problem:
            raise InputDataError(problem)
    return frame


def _cause(exc: Exception) -> str:
    """The first line of what Java (or Spark) says went wrong at the root of `exc`."""
    cause = getattr(exc, "java_exception", None)
    if cause is None:
        return str(exc).strip().splitlines()[0]
    while cause.getCause() is not None:
        cause = cause.getCause()
    return str(cause.getMessage() or cause.toString()).strip().splitlines()[0]


def _parquet_rows(spark: SparkSession, load: Load) -> DataFrame:
    """A Parquet input's rows in the stream's columns, each checked as DuckDB's table reader
    checks it: every column its table needs read, a double finite, a natural number (or a time)
    not negative."""
    from pyspark.sql.functions import lit

    frame = _parquet_frame(spark, load)
    table, wanted = load.format.loaded, parquet_columns(load)
    given = {c: cast_sql(c, t) for c, t in wanted.items()}
    given |= {c.name: f"try_cast({c.name} AS {SPARK_TYPES[c.type]})" for c in table.columns
              if c.optional and c.name in frame.columns}  # fmt: skip
    frame = frame.selectExpr(*padded(table, given, SPARK_TYPES))
    ok = [f"{c} IS NOT NULL" for c in wanted]
    ok += [f"NOT isnan({c}) AND abs({c}) < double('inf')" for c in table.finite(load.format.grades)]
    ok += [f"{c} >= 0" for c in (*table.natural(), *table.nonnegative())]
    return frame.selectExpr("*", f"coalesce({' AND '.join(ok)}, false) AS ok").select(
        lit(_kind(load)).alias("kind"), lit(load.name).alias("name"), *stream_columns(), "ok"
    )


def _kind(load: Load) -> str:
    return load.format.kind
