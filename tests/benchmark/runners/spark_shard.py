"""The Spark engine's work per partition, without Spark: what one task costs one core.

Usage: spark_shard.py SPEC. The spec's qrels and first run are read as a Spark task reads them
(`parse_lines`: text lines -> checked rows, DuckDB on one thread), then evaluated as one shard
(`evaluate_shard`: the plan's statements, one thread). Prints run lines, the seconds of each
step and each per million lines, and the bytes of the rows a shuffle would move.
"""

from __future__ import annotations

import sys
import time

import pyarrow as pa
import pyarrow.csv as pacsv

from pipeline import validate
from pipeline.engines.spark.inputs import file_key, parse_lines
from pipeline.engines.spark.shard import evaluate_shard


def _lines(path) -> pa.Table:
    """The file's lines and its name (`line`, `file`), as Spark's text source hands them over."""
    options = pacsv.ParseOptions(delimiter="\x1f", quote_char=False)
    read = pacsv.ReadOptions(column_names=["line"], block_size=64 << 20)
    lines = pacsv.read_csv(path, read_options=read, parse_options=options)
    return lines.append_column("file", pa.array([str(path)] * lines.num_rows))


def main(spec: str) -> None:
    plan = validate(spec).sql
    qrels, run = plan.qrels.loads[0], plan.runs.batches[0][0]
    lines = _lines(run.path)
    started = time.perf_counter()
    names = {file_key(str(load.path)): load.name for load in (qrels, run)}
    rows = [*parse_lines(lines.to_batches(), run.format, "run", names)]
    rows += parse_lines(_lines(qrels.path).to_batches(), qrels.format, "qrels", names)
    parsed = time.perf_counter() - started
    table = pa.Table.from_batches(rows)
    started = time.perf_counter()
    results = pa.Table.from_batches([*evaluate_shard(plan, table.to_batches())])
    evaluated = time.perf_counter() - started
    million = lines.num_rows / 1e6
    print(f"run lines {lines.num_rows}")
    print(f"parse s {parsed:.2f} per M lines {parsed / million:.3f}")
    print(f"shard s {evaluated:.2f} per M lines {evaluated / million:.3f}")
    print(f"shuffled bytes per line {table.nbytes / table.num_rows:.1f}")
    print(f"result rows {results.num_rows}")


if __name__ == "__main__":
    main(*sys.argv[1:])
