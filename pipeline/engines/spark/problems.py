"""What is wrong with an input, with line numbers: only once the shards' counts say something is.

Bad lines and duplicates are found by counting on the shards, where line numbers are unknown
(Spark splits files without counting lines). Once a file is known to be bad, its files are read
again, each numbered in order (`zipWithIndex`), and the first problems are reported in the DuckDB
engine's words (`pipeline.inputs.checks`): the file, the line, the problem and the line's text. A
Parquet input has rows, not lines: its bad rows are shown by their values.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.engines.spark.inputs import files_of, parquet_columns, uri_of
from pipeline.engines.spark.shard import SPARK_TYPES, typed
from pipeline.inputs import messages
from pipeline.inputs.row_stream import IDENTITY, STREAM_COLUMNS, padded, stream_columns
from pipeline.inputs.rules import REAL_GRADES_HINT
from pipeline.inputs.table_rows import cast_sql
from pipeline.inputs.text_lines import parsed_lines

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from pipeline.inputs.format import Format, Load

__all__ = ["Reporter"]

# A numbered line's columns: what names a line in reports (the stream's identity columns).
_IDS = [c for c in stream_columns() if c in IDENTITY]
_NUMBERED = (
    "line_no bigint, "
    + "".join(f"{c} {SPARK_TYPES[STREAM_COLUMNS[c]]}, " for c in _IDS)
    + "ok boolean, problem string"
)


class Reporter:
    """The messages about one bad input (`load`), as `pipeline.inputs.checks` words them."""

    def __init__(self, spark: SparkSession, load: Load, parquet: bool) -> None:
        self.spark, self.load, self.parquet = spark, load, parquet
        self.files = [uri for uri, *_ in files_of(spark, load.path)]

    def problems(self, bad: int) -> str:
        """The first bad lines (of the first file holding any), and how many there are."""
        if self.parquet:
            return self._bad_rows(bad)
        for uri in self.files:
            found = (
                self._numbered(uri).filter("NOT ok").orderBy("line_no").limit(messages.MAX_REPORTED)
            )
            rows = [(r.line_no, r.line, r.problem) for r in found.collect()]
            if rows:
                return messages.problems_message(self._at(uri), rows, bad)
        return f"{self.load.path}: {bad} bad lines"  # gone since they were counted

    def first_line(self, qid: str) -> tuple[Load, tuple[int, str] | None]:
        """The first line holding `qid` (of the first file holding one), as (line number,
        line), with the load named by that file; none for a Parquet input (rows, not lines)."""
        from pyspark.sql import functions as F

        if not self.parquet:
            for uri in self.files:
                found = self._numbered(uri).filter(F.col("ok") & (F.col("qid") == F.lit(qid)))
                rows = found.orderBy("line_no").limit(1).collect()
                if rows:
                    return self._at(uri), (rows[0].line_no, rows[0].line)
        return self.load, None

    def queries(self, count: int = 3) -> list[str]:
        """The first queries of a run (to show one that shares none with its qrels)."""
        from pipeline.engines.spark.inputs import input_rows

        files = {self.load: [(uri,) for uri in self.files]}
        rows = input_rows(self.spark, [self.load], files, {self.load} if self.parquet else set())
        first = rows.filter("ok").select("qid").distinct().orderBy("qid").limit(count)
        return [row.qid for row in first.collect()]

    def duplicates(self, total: int) -> str:
        """The first (qid, docno) pairs listed twice, each with the lines that repeat it."""
        if self.parquet:
            return self._duplicate_rows(total)
        from pyspark.sql import functions as F

        numbered = None
        for uri in self.files:
            part = self._numbered(uri).filter("ok").withColumn("file", F.lit(uri))
            numbered = part if numbered is None else numbered.unionByName(part)
        pairs = (
            numbered.groupBy("qid", "subtopic", "docno")
            .agg(F.sort_array(F.collect_list(F.struct("file", "line_no"))).alias("at"))
            .filter(F.size("at") > 1)
        )
        first = pairs.orderBy(F.col("at")[0]).limit(messages.MAX_REPORTED).collect()
        return self._duplicates_message(first, total)

    def _duplicates_message(self, pairs: list, total: int) -> str:
        files = {at.file for pair in pairs for at in pair.at}
        single = len(files) == 1
        rows = [
            (
                p.qid,
                p.docno,
                [a.line_no if single else f"{_local(a.file)}:{a.line_no}" for a in p.at],
                total,
                p.subtopic,
            )
            for p in pairs
        ]
        load = self._at(next(iter(files))) if single else self.load
        return messages.duplicates_message(load, rows)

    def _at(self, uri: str) -> Load:
        """The load named as the spec names it when it is one file, else by the part file."""
        if len(self.files) == 1:
            return self.load
        return replace(self.load, path=_local(uri))

    def _numbered(self, uri: str) -> DataFrame:
        """One file's lines, numbered in order and checked as the DuckDB engine checks them."""
        fmt = self.load.format
        lines = self.spark.sparkContext.textFile(uri).zipWithIndex()
        numbered = lines.map(lambda pair: (pair[0], pair[1] + 1))
        frame = self.spark.createDataFrame(numbered, "line string, line_no bigint")

        def explain(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            yield from _explain(batches, fmt)

        return frame.mapInArrow(explain, f"line string, {_NUMBERED}")

    def _bad_rows(self, bad: int) -> str:
        frame = self.spark.read.parquet(uri_of(self.load.path))
        wanted = parquet_columns(self.load)
        problems = [
            f"WHEN {cast_sql(c, t)} IS NULL THEN '{c} must be {_TYPES[t]}, found ' || coalesce(CAST({c} AS STRING), 'null'){_hint(c, t)}"
            for c, t in wanted.items()
        ]
        table = self.load.format.loaded
        problems += [
            f"WHEN isnan({c}) OR abs({c}) = double('inf') THEN '{table.said(c)} must be a finite number, found ' || {c}"
            for c in table.finite(self.load.format.grades)
        ]  # as the DuckDB engine's table reader
        problems += [
            f"WHEN {c} < 0 THEN '{table.said(c)} must be a non-negative integer, found ' || {c}"
            for c in table.natural()
        ]
        problems += [
            f"WHEN {c} < 0 THEN '{table.said(c)} must not be negative, found ' || {c}"
            for c in table.nonnegative()
        ]
        explained = frame.selectExpr("*", f"CASE {' '.join(problems)} END AS problem")
        found = explained.filter("problem IS NOT NULL").limit(messages.MAX_REPORTED).collect()
        lines = [f"{self.load.path}: a row {_row(r, wanted)}: {r.problem}" for r in found]
        more = bad - len(found)
        if more:
            lines.append(f"{self.load.path}: {more} more bad row{'s' * (more != 1)}")
        return "\n".join(lines)

    def _duplicate_rows(self, total: int) -> str:
        frame = self.spark.read.parquet(uri_of(self.load.path))
        pairs = frame.groupBy(*self.load.format.loaded.identity).count().filter("count > 1")
        found = pairs.orderBy("qid", "docno").limit(messages.MAX_REPORTED).collect()
        lines = [
            f"{self.load.path}: query {r.qid!r} has document {r.docno!r}"
            f"{_subtopic(r.asDict())} {r['count']} times"
            for r in found
        ]
        lines.append(
            f"{self.load.path}: {total} duplicate (qid, docno) pair{'s' * (total != 1)}; "
            "a document may appear once per query (trec_eval stops on duplicates too)"
        )
        return "\n".join(lines)


_TYPES = {"string": "text", "int": "an integer", "double": "a number"}


def _subtopic(row: dict) -> str:
    return f" for subtopic {row['subtopic']}" if "subtopic" in row else ""


def _hint(column: str, kind: str) -> str:
    """SQL appending the setting that reads a decimal grade to the message of one not read."""
    return f" || '{REAL_GRADES_HINT}'" if column == "rel" and kind == "int" else ""


def _row(row, wanted: dict) -> str:
    return ", ".join(f"{c} {row[c]!r}" for c in wanted)


def _local(uri: str) -> Path | str:
    """A file:// URI as the local path it is (as messages name local files); others as given."""
    return Path(uri.removeprefix("file:")) if uri.startswith("file:/") else uri


def _explain(batches: Iterator[pa.RecordBatch], fmt: Format) -> Iterator[pa.RecordBatch]:
    """Numbered lines (`line`, `line_no`) read and checked by `parsed_lines`, with each bad
    line's problem (on a worker)."""
    import duckdb

    con = duckdb.connect(config={"threads": 1})
    ids = ", ".join(
        e for c, e in zip(stream_columns(), padded(fmt.loaded), strict=True) if c in _IDS
    )
    sql = f"SELECT line, line_no, {ids}, ok, problem FROM ({parsed_lines('lines', fmt, 'line, line_no', explain=True)})"
    try:
        for batch in batches:
            con.register("lines", batch)
            yield from typed(con.sql(sql).to_arrow_reader(), f"line string, {_NUMBERED}")
            con.unregister("lines")
    finally:
        con.close()
