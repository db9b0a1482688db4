"""The Arrow read step of the whitespace text formats on DuckDB: where pyarrow is installed, a
file whose separators are single tabs or single spaces is split by pyarrow's CSV reader (every
field a string, read in blocks beside DuckDB's own threads) and handed to DuckDB as an Arrow
stream, which the format's SQL types and checks (`inputs.text_columns`) as it inserts it.

trec_eval splits a line at any run of C whitespace; one delimiter splits it the same way only
where no field holds another separator and none is empty. That is proven for each file from
what Arrow read, block by block and before DuckDB keeps a row of it (`_proven`): a block that
fails stops the statement, which then inserts nothing, and the file is read the exact way
(`text_lines`), as is a file whose first lines already show it, a compressed file other than
gzip, and every file where pyarrow is missing. A file with a bad line or a duplicate is
numbered and reported by that exact reading, so every message is the same either way.
"""

from __future__ import annotations

import gzip
import importlib.util
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipeline import interrupts
from pipeline.engines.duckdb.steps import run_all
from pipeline.inputs.format import Format, Load
from pipeline.inputs.text_columns import field_names, insert_columns, read_by_columns

__all__ = ["insert_by_columns"]

#: the bytes no field of a proven line holds, beside the other delimiter: C's other whitespace
#: (\v, \f, \r and \n), and the control characters the exact reading treats apart (NUL; 0x1C to
#: 0x1F, its own delimiters and null string)
_CONTROLS = (b"\x0b", b"\x0c", b"\x00", b"\x1c", b"\x1d", b"\x1e", b"\x1f")
_NEVER = (*_CONTROLS, b"\r", b"\n")
#: what pyarrow reads at a time; a line longer than a block is refused by it, and so read the
#: exact way, which refuses lines past 2 MB
_BLOCK = 1 << 20
#: the head of a file looked at before reading it: most unprovable files show it there
_HEAD = 1 << 16
#: names DuckDB or pyarrow would decompress other than gzip: read the exact way
_COMPRESSED = (".zst", ".zstd", ".bz2", ".xz", ".lz4", ".br", ".zip", ".snappy", ".gzip")


@dataclass(frozen=True)
class _Layout:
    """How a file's lines are split: the delimiter, and how many fields each line has."""

    delimiter: str
    fields: int


def insert_by_columns(con: duckdb.DuckDBPyConnection, loads: list[Load]) -> list[Load]:
    """Insert the files of `loads` (one format) that Arrow reads exactly, in one statement per
    field count; return the others, in order, for the exact reading."""
    if not loads or not read_by_columns(loads[0].format) or not _has_pyarrow():
        return loads
    layouts = {load: _layout(load) for load in loads}
    exact = {load for load, layout in layouts.items() if layout is None}
    for count in sorted({layout.fields for layout in layouts.values() if layout}):
        same = {
            load: layout for load, layout in layouts.items() if layout and layout.fields == count
        }
        exact.update(_insert_proven(con, same))
    return [load for load in loads if load in exact]


def _has_pyarrow() -> bool:
    return importlib.util.find_spec("pyarrow") is not None


def _insert_proven(con: duckdb.DuckDBPyConnection, layouts: dict[Load, _Layout]) -> list[Load]:
    """Insert the files of `layouts` (one field count) in one statement; a file whose proof
    fails is set aside and the statement run again without it. Returns the files set aside."""
    refused: list[Load] = []
    while layouts:
        failed: list[Load] = []  # the file whose block failed its proof, told by the stream
        try:
            _insert(con, layouts, failed)
            return refused
        except duckdb.Error:
            if interrupts.received() is not None or not failed:
                raise
        refused.append(failed[0])
        layouts = {load: layout for load, layout in layouts.items() if load != failed[0]}
    return refused


def _insert(
    con: duckdb.DuckDBPyConnection, layouts: dict[Load, _Layout], failed: list[Load]
) -> None:
    """One statement inserting every file of `layouts`, read as one Arrow stream."""
    import pyarrow as pa

    loads = list(layouts)
    count = layouts[loads[0]].fields
    fields = [(name, pa.string()) for name in field_names(count)]
    schema = pa.schema([*fields, ("file_index", pa.int32())])
    batches = _batches(loads, layouts, schema, failed)
    name = "irpipe_arrow_lines"
    con.complete()  # a result left unread (a check's first row) would refuse the registration
    con.register(name, pa.RecordBatchReader.from_batches(schema, batches))
    try:
        fmt: Format = loads[0].format
        names = [load.name for load in loads]
        statement = insert_columns(
            fmt, count, name, names, [layouts[load].delimiter for load in loads]
        )
        run_all(con, [statement])
    finally:
        con.unregister(name)


def _batches(
    loads: list[Load], layouts: dict[Load, _Layout], schema, failed: list[Load]
) -> Iterator:
    """The record batches of every file in turn, each proven before it is handed on, with its
    file's index; a file that fails is named in `failed` and ends the stream with an error."""
    import pyarrow as pa

    for index, load in enumerate(loads):
        layout = layouts[load]
        try:
            for batch in _read(load.path, layout):
                if not _proven(batch, layout.delimiter):
                    raise ValueError("not a single-delimiter file")
                column = pa.repeat(pa.scalar(index, pa.int32()), batch.num_rows)
                yield pa.record_batch([*batch.columns, column], schema=schema)
        except Exception:
            failed.append(load)
            raise


def _read(path: Path, layout: _Layout) -> Iterator:
    """pyarrow's CSV reader over the file, every field a string, no quoting, blank lines
    dropped (as the exact reading skips them)."""
    import pyarrow as pa
    from pyarrow import csv

    names = field_names(layout.fields)
    compression = "gzip" if path.name.endswith(".gz") else None
    return csv.open_csv(
        pa.input_stream(str(path), compression=compression),
        csv.ReadOptions(column_names=names, block_size=_BLOCK),
        csv.ParseOptions(
            delimiter=layout.delimiter, quote_char=False, double_quote=False,
            escape_char=False, newlines_in_values=False, ignore_empty_lines=True,
        ),
        csv.ConvertOptions(
            column_types={name: pa.string() for name in names}, strings_can_be_null=False,
            quoted_strings_can_be_null=False, check_utf8=True,
        ),
    )  # fmt: skip


def _proven(batch, delimiter: str) -> bool:
    """Whether the lines of `batch` are split as trec_eval splits them: no field is empty
    (two delimiters in a row, or one leading or trailing), none holds the other delimiter, C's
    other whitespace or a control character the exact reading treats apart, and no line is a
    comment."""
    import pyarrow.compute as pc

    never = (b" " if delimiter == "\t" else b"\t", *_NEVER)
    for column in batch.columns:
        if len(column) and pc.min(pc.binary_length(column)).as_py() == 0:
            return False
        text = _text(column)
        if any(text.find(byte) >= 0 for byte in never):
            return False
    return not (batch.num_rows and pc.any(pc.starts_with(batch.column(0), "#")).as_py())


def _text(column) -> bytes:
    """The bytes of a string column's values, one after the other."""
    offsets, data = column.buffers()[1:3]
    if data is None:
        return b""
    bounds = memoryview(offsets).cast("i")
    start, end = bounds[column.offset], bounds[column.offset + len(column)]
    return data.to_pybytes()[start:end]


def _layout(load: Load) -> _Layout | None:
    """The delimiter and field count of the file's first line, unless its head already shows a
    line the reading cannot prove (then None: read the exact way). The stream's own proof
    decides; this only spares reading a file that fails it at once."""
    name = load.path.name.lower()
    if name.endswith(_COMPRESSED) or (name.endswith(".gz") and not load.path.name.endswith(".gz")):
        return None
    try:
        head = _head(load.path)
    except (OSError, EOFError):
        return None  # the exact reading names the problem
    # Whole lines, Windows line ends and a byte-order mark as both readers take them, blank
    # lines dropped (both skip them).
    if len(head) < _HEAD and not head.endswith(b"\n"):
        head += b"\n"  # the whole file, whose last line has no line end
    head = head[: head.rfind(b"\n") + 1].replace(b"\r\n", b"\n").removeprefix(b"\xef\xbb\xbf")
    head = re.sub(rb"\n\n+", b"\n", head).removeprefix(b"\n")
    if not head:
        return None
    first = head[: head.index(b"\n")]
    delimiter = b"\t" if b"\t" in first else b" "
    other = b" " if delimiter == b"\t" else b"\t"
    line_ends = head.count(b"\n")
    shows = (
        any(byte in head for byte in (other, b"\r", *_CONTROLS))
        or delimiter * 2 in head
        or b"\n" + delimiter in head
        or delimiter + b"\n" in head
        or head.startswith((b"#", delimiter))
        or b"\n#" in head
        or head.count(delimiter) != line_ends * first.count(delimiter)
    )
    return None if shows else _Layout(delimiter.decode(), first.count(delimiter) + 1)


def _head(path: Path) -> bytes:
    """The first bytes of the file (decompressed)."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        return handle.read(_HEAD)
