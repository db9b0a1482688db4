"""A large batch of text runs read by pyarrow and handed to DuckDB as `run_rows` itself, without
a copy: where pyarrow is installed, a batch of at least `WORTH` bytes of whitespace text runs
(`text_columns.read_by_columns`) whose every file is proven split as trec_eval splits it
(`arrow_text`) becomes one Arrow table, registered in DuckDB, and `run_rows` a view of it.

Its columns are `run_rows`' own: the run's name a dictionary, the qid and docno as pyarrow read
them, the rank, score and `ok` typed and checked by the format's own SQL (`text_columns`), which
DuckDB computes piece by piece into Arrow. Every statement that reads `run_rows` reads the view
as it would the table (the full plan's slices rename it as they rename the table), and the
batch's rows are dropped by `Rows.drop`. The executor does not read by Arrow a batch whose plan
changes `run_rows` (fused runs' inserts, trec_eval -c's, the deletion of runs loaded only to be
fused): a copy into a table for them held both at once (a 7M-line run under -c peaked 320 MB
higher, for no less CPU). A batch that is not proven is read the exact
way (`loading.insert_inputs`), with nothing of the Arrow reading left; so is every batch where
pyarrow is missing, and every batch below `WORTH`, where importing pyarrow (0.2 s) costs more
than the reading saves. Messages come from the exact reading of the file, as always.
"""

from __future__ import annotations

import array
import importlib.util
import itertools

import duckdb

from pipeline.engines.duckdb.arrow_text import Layout, Unproven, layout, pieces
from pipeline.engines.duckdb.steps import run_all
from pipeline.inputs.format import Load
from pipeline.inputs.loaded_tables import RUN_ROWS, RUNS
from pipeline.inputs.table_rows import is_table_input
from pipeline.inputs.text_columns import fields_kept, read_by_columns, typed_columns
from pipeline.plan.batches import text_size
from pipeline.sql import Statement

__all__ = ["WORTH", "Rows", "read_runs"]

#: a batch's text below which the exact reading is kept (measured: tests/benchmark/RESULTS.md,
#: issue 45's second attempt)
WORTH = 64 << 20
#: the names the batch's Arrow table, and a piece being typed, are registered under
_ROWS = "irpipe_arrow_rows"
_PIECE = "irpipe_arrow_piece"
# the batch's rows' table, as the inputs' contract names it
_VIEW = Statement(f"CREATE VIEW {RUNS.name} AS SELECT * FROM {_ROWS}")
_DROP_TABLE = Statement(f"DROP TABLE {RUNS.name}")
_DROP_VIEW = Statement(f"DROP VIEW {RUNS.name}")


class Rows:
    """`run_rows` as a view of a registered Arrow table, until `drop`."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def drop(self) -> None:
        """Drop the batch's rows, leaving `run_rows` an empty table for the next batch."""
        run_all(self.con, [_DROP_VIEW])
        self.con.unregister(_ROWS)
        _release_memory()
        run_all(self.con, [RUN_ROWS])


def read_runs(con: duckdb.DuckDBPyConnection, batch: list[Load]) -> Rows | None:
    """The batch read by pyarrow into `run_rows` (see the module), or None where it is not:
    nothing is then read, and `run_rows` is the empty table it was."""
    shapes = _shapes(batch)
    if shapes is None:
        return None
    try:
        table = _batch_table(con, batch, shapes)
    except Unproven:
        return None
    run_all(con, [_DROP_TABLE])
    con.register(_ROWS, table)
    run_all(con, [_VIEW])
    return Rows(con)


def _shapes(batch: list[Load]) -> list[Layout] | None:
    """Each file's layout, if the batch is to be read by pyarrow: its every input a text file
    of a format read by columns, large enough together, each file's head provable."""
    if not batch or not all(_by_columns(load) for load in batch):
        return None
    if sum(text_size(load, _size(load)) for load in batch) < WORTH:
        return None
    if not _has_pyarrow():
        return None
    shapes = [layout(load.path) for load in batch]
    return None if None in shapes else shapes


def _has_pyarrow() -> bool:
    return importlib.util.find_spec("pyarrow") is not None


def _size(load: Load) -> int:
    try:
        return load.path.stat().st_size
    except OSError:  # the exact reading names the problem
        return 0


def _by_columns(load: Load) -> bool:
    fmt = load.format
    return not is_table_input(load.path) and read_by_columns(fmt) and fmt.after is None


def _batch_table(con: duckdb.DuckDBPyConnection, batch: list[Load], shapes: list[Layout]):
    """The batch's rows as one Arrow table of `run_rows`' columns (raises `Unproven`)."""
    import pyarrow as pa

    names = _strings([load.name for load in batch])
    tables = [
        _typed_piece(con, load.format, shape, piece, index, names)
        for index, (load, shape) in enumerate(zip(batch, shapes, strict=True))
        for piece in pieces(load.path, shape)
    ]
    table = pa.concat_tables(tables)
    _release_memory()  # the pieces' other columns, for DuckDB's sorts
    return table


def _typed_piece(con, fmt, shape: Layout, piece, index: int, names):
    """A piece's rows in `run_rows`' columns: the fields kept as pyarrow read them, the others
    and `ok` computed by DuckDB over the registered piece, row for row."""
    import pyarrow as pa

    con.register(_PIECE, piece)
    try:
        sql = typed_columns(fmt, shape.fields, _PIECE)
        typed = con.sql(sql, params=[shape.delimiter]).to_arrow_table()
    finally:
        con.unregister(_PIECE)
    kept = fields_kept(fmt, shape.fields)
    # A byte per row for up to 127 runs (a batch of 7M lines holds one), two beyond.
    code, kind = ("b", pa.int8()) if len(names) < 128 else ("h", pa.int16())
    indices = array.array(code, [index]) * piece.num_rows
    column = pa.Array.from_buffers(kind, piece.num_rows, [None, pa.py_buffer(indices)])
    columns = {fmt.key: pa.DictionaryArray.from_arrays(column, names)}
    for column in fmt.loaded.columns:
        if column.name in kept:
            columns[column.name] = piece.column(kept[column.name])
        else:
            columns[column.name] = typed.column(column.name)
    columns["ok"] = typed.column("ok")
    return pa.table(columns)


def _strings(values: list[str]):
    """`values` as an Arrow array of strings, made from its buffers: pyarrow's conversion of
    Python objects imports pandas (0.5-0.9 s) where it is installed."""
    import pyarrow as pa

    data = [value.encode() for value in values]
    offsets = array.array("i", [0, *itertools.accumulate(len(value) for value in data)])
    return pa.StringArray.from_buffers(
        len(data), pa.py_buffer(offsets), pa.py_buffer(b"".join(data))
    )


def _release_memory() -> None:
    """Give back to the system what the Arrow table held: pyarrow's pool keeps freed memory
    for reuse unless told."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
