"""The Arrow read step of the whitespace text formats on DuckDB: where pyarrow is installed, a
file whose separators are single tabs or single spaces is split by pyarrow's CSV reader (every
field a string, on its own threads), in pieces of `_PIECE` bytes, and each piece is handed to
DuckDB as an Arrow table (registered, not copied), which the format's SQL types and checks
(`inputs.text_columns`) as it inserts it.

trec_eval splits a line at any run of C whitespace; one delimiter splits it the same way only
where no field holds another separator and none is empty. That is proven for each piece from
what Arrow read, before DuckDB keeps a row of it (`_proven`); a file whose piece fails is taken
out again and read the exact way (`text_lines`), as is a file whose head already shows it, a
compressed file other than gzip, a batch of little text (`_WORTH`), and every file where
pyarrow is missing. A file with a bad line or a duplicate is numbered and reported by that
exact reading, so every message is the same either way.
"""

from __future__ import annotations

import gzip
import importlib.util
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipeline.engines.duckdb.steps import run_all
from pipeline.inputs.format import Load
from pipeline.inputs.text_columns import field_names, insert_columns, read_by_columns
from pipeline.plan.batches import GZIP_RATIO
from pipeline.sql import Statement, quote_identifier

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
#: the text read, proven and inserted at a time (memory holds about one piece and its table)
_PIECE = 8 << 20
#: a batch's proven text below which the exact reading is kept: importing pyarrow (0.15-0.2 s)
#: costs more than it saves on fewer lines
_WORTH = 8 << 20
#: the name the pending pieces are registered under for their statement
_VIEW = "irpipe_arrow_lines"
_UNORDERED = Statement("SET preserve_insertion_order = false")
_ORDERED = Statement("RESET preserve_insertion_order")
#: names DuckDB or pyarrow would decompress other than gzip: read the exact way
_COMPRESSED = (".zst", ".zstd", ".bz2", ".xz", ".lz4", ".br", ".zip", ".snappy", ".gzip")


@dataclass(frozen=True)
class _Layout:
    """How a file's lines are split: the delimiter, and how many fields each line has."""

    delimiter: str
    fields: int


def insert_by_columns(con: duckdb.DuckDBPyConnection, loads: list[Load]) -> list[Load]:
    """Insert the files of `loads` (one format) that Arrow reads exactly; return the others, in
    order, for the exact reading."""
    if not loads or not read_by_columns(loads[0].format) or not _has_pyarrow():
        return loads
    layouts = {load: _layout(load) for load in loads}
    proven = [load for load in loads if layouts[load] is not None]
    if sum(_text_size(load.path) for load in proven) < _WORTH:
        return loads
    pending = _Pending(con, proven, layouts)
    refused = {load for load in proven if not pending.read(load)}
    pending.insert()
    return [load for load in loads if layouts[load] is None or load in refused]


def _has_pyarrow() -> bool:
    return importlib.util.find_spec("pyarrow") is not None


def _text_size(path: Path) -> int:
    try:
        return path.stat().st_size * (GZIP_RATIO if path.name.endswith(".gz") else 1)
    except OSError:
        return 0


class _Pending:
    """The proven pieces of a batch's files not yet inserted: inserted together, one statement
    per field count, once they hold a piece's worth of text (and at the end), so that memory
    holds about one piece, and many small files cost one statement."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, loads: list[Load], layouts: dict[Load, _Layout]
    ) -> None:
        self.con, self.loads, self.layouts = con, loads, layouts
        self.tables: list[tuple[Load, object]] = []  # (file, Arrow table with its file_index)
        self.size = 0
        self.inserted: set[Load] = set()

    def read(self, load: Load) -> bool:
        """Read `load` piece by piece, each proven before it is kept; False (and nothing of it
        kept) if a piece fails."""
        import pyarrow as pa

        layout, index = self.layouts[load], self.loads.index(load)
        try:
            for first, piece in _pieces(load.path):
                table = _parsed(piece, layout, first)
                if table is None:
                    return self._drop(load)
                column = pa.repeat(pa.scalar(index, pa.int32()), table.num_rows)
                self.tables.append((load, table.append_column("file_index", column)))
                self.size += len(piece)
                if self.size >= _PIECE:
                    self.insert()
        except (OSError, EOFError, ValueError):  # pyarrow's errors are ValueError's and OSError's
            return self._drop(load)
        return True

    def _drop(self, load: Load) -> bool:
        """Forget what was read of `load`: its pending pieces, and its rows if any were
        inserted (its name is its own in the table). Returns False."""
        self.tables = [(other, table) for other, table in self.tables if other != load]
        if load in self.inserted:
            fmt = load.format
            sql = f"DELETE FROM {quote_identifier(fmt.table)} WHERE {quote_identifier(fmt.key)} = ?"
            run_all(self.con, [Statement(sql, [load.name])])
        return False

    def insert(self) -> None:
        """Insert the pending pieces, one statement per field count."""
        import pyarrow as pa

        counts = sorted({self.layouts[load].fields for load, _ in self.tables})
        for count in counts:
            tables = [t for load, t in self.tables if self.layouts[load].fields == count]
            self._insert(count, pa.concat_tables(tables))
        self.inserted.update(load for load, _ in self.tables)
        self.tables, self.size = [], 0

    def _insert(self, count: int, table) -> None:
        fmt = self.loads[0].format
        names = [load.name for load in self.loads]
        delimiters = [self.layouts[load].delimiter for load in self.loads]
        self.con.complete()  # a result left unread (a check's first row) would refuse it
        self.con.register(_VIEW, table)
        statement = insert_columns(fmt, count, _VIEW, names, delimiters)
        try:  # unordered, as table inputs are (`table_loads.insert_tables`): a third less CPU
            run_all(self.con, [_UNORDERED, statement])
        finally:
            run_all(self.con, [_ORDERED])
            self.con.unregister(_VIEW)


def _pieces(path: Path) -> Iterator[tuple[bool, memoryview]]:
    """The file's text (decompressed) in pieces of about `_PIECE` bytes cut after a line end,
    each with whether it is the first: views of one buffer, read into again for each piece (so
    that reading allocates once; a piece is parsed before the next is read). A line longer
    than a block is refused (ValueError)."""
    buffer = bytearray(_PIECE + _BLOCK)
    view = memoryview(buffer)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        kept, first = 0, True  # the bytes of an unfinished line, moved to the front
        while got := handle.readinto(view[kept : kept + _PIECE]):
            end = kept + got
            cut = buffer.rfind(b"\n", 0, end) + 1
            if end - cut > _BLOCK:
                raise ValueError("a line longer than a block")
            if cut:
                yield first, view[:cut]
                first = False
            buffer[: end - cut] = view[cut:end]
            kept = end - cut
        if kept:
            yield first, view[:kept]


def _parsed(piece: memoryview, layout: _Layout, first: bool):
    """The piece's lines split by pyarrow into string columns, or None where the split is not
    provably trec_eval's. pyarrow drops a byte-order mark at the start of what it reads, as the
    exact reading does only at the start of a file: a later piece starting with one is not
    proven."""
    import pyarrow as pa
    from pyarrow import csv

    if not first and piece[:3] == b"\xef\xbb\xbf":
        return None
    names = field_names(layout.fields)
    table = csv.read_csv(
        pa.py_buffer(piece),
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
    return table if all(_proven(batch, layout.delimiter) for batch in table.to_batches()) else None


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
