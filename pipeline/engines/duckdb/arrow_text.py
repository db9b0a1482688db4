"""pyarrow's reading of a whitespace text file, proven to split its lines as trec_eval does:
the file in pieces of about `PIECE` bytes cut after a line end, each split at one delimiter
(the first line's tab or space) into string columns by pyarrow's CSV reader (on its own
threads), and each proven before it is given out.

trec_eval splits a line at any run of C whitespace; one delimiter splits it the same way only
where no field holds another separator and none is empty. That is proven for each piece from
its bytes (`_clean`: no control character but line ends and a tab delimiter, which also keeps
out those the exact reading treats apart) and from what Arrow read (`_proven`: no empty field,
no comment). A file whose piece fails (`Unproven`), or whose head already shows it would
(`layout` is None), and a compressed file other than gzip, are read the exact way
(`text_lines`) by the caller. pyarrow is imported only when a file is read here: it is an
extra's, and costs 0.2 s to import.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pipeline.inputs.recognise import open_input

__all__ = ["PIECE", "Layout", "Unproven", "layout", "pieces"]

#: bytes a file's head may not hold, beside the other delimiter and a lone \r: C's other
#: whitespace (\v, \f) and the control characters the exact reading treats apart (NUL; 0x1C to
#: 0x1F, its own delimiters and null string)
_CONTROLS = (b"\x0b", b"\x0c", b"\x00", b"\x1c", b"\x1d", b"\x1e", b"\x1f")
#: what pyarrow reads at a time; a line longer than a block is refused by it, and so read the
#: exact way, which refuses lines past 2 MB
_BLOCK = 1 << 20
#: the head of a file looked at before reading it: most unprovable files show it there
_HEAD = 1 << 16
#: the text read and proven at a time (memory holds about one piece's strings beside the rows)
PIECE = 16 << 20
#: names DuckDB or pyarrow would decompress other than gzip: read the exact way
_COMPRESSED = (".zst", ".zstd", ".bz2", ".xz", ".lz4", ".br", ".zip", ".snappy", ".gzip")


class Unproven(Exception):
    """A piece of the file is not provably split as trec_eval splits it, or pyarrow cannot
    read it: the file is to be read the exact way."""


@dataclass(frozen=True)
class Layout:
    """How a file's lines are split: the delimiter, and how many fields each line has."""

    delimiter: str
    fields: int


def pieces(path: Path, shape: Layout) -> Iterator:
    """The file's lines as pyarrow tables of string columns f1 .. fN, piece by piece, each
    proven; raises `Unproven` at the first piece that is not (or that pyarrow refuses)."""
    try:
        for first, text in _texts(path, shape.delimiter.encode()):
            yield _parsed(text, shape, first)
    except (OSError, EOFError, ValueError) as exc:  # pyarrow's errors are these
        raise Unproven(str(exc)) from None


def _texts(path: Path, delimiter: bytes) -> Iterator[tuple[bool, memoryview]]:
    """The file's text (decompressed) in pieces of about `PIECE` bytes cut after a line end,
    each with whether it is the first, and each holding no byte a proven line cannot
    (`_clean`): views of one buffer, read into again for each piece (so that reading allocates
    once; a piece is parsed before the next is read). A line longer than a block is refused
    (ValueError)."""
    buffer = bytearray(PIECE + _BLOCK)
    view = memoryview(buffer)
    with open_input(path) as handle:
        kept, first = 0, True  # the bytes of an unfinished line, moved to the front
        while got := handle.readinto(view[kept : kept + PIECE]):
            end = kept + got
            cut = buffer.rfind(b"\n", 0, end) + 1
            if end - cut > _BLOCK:
                raise ValueError("a line longer than a block")
            if cut:
                yield first, _clean(buffer, cut, delimiter)
                first = False
            buffer[: end - cut] = view[cut:end]
            kept = end - cut
        if kept:
            yield first, _clean(buffer, kept, delimiter)


def _clean(buffer: bytearray, end: int, delimiter: bytes) -> memoryview:
    """The first `end` bytes of `buffer`, if they hold no control character but line ends (a
    carriage return only before a line feed: pyarrow ends a line at one alone, where trec_eval
    reads whitespace) and the tab delimiter, nor a space where tabs delimit; else ValueError.
    One vectorized pass, and a few counts of single bytes."""
    import numpy as np

    text = np.frombuffer(buffer, np.uint8, end)
    returns = int(np.count_nonzero(text == 0x0D))
    if returns and returns != int(np.count_nonzero((text[:-1] == 0x0D) & (text[1:] == 0x0A))):
        raise ValueError("a carriage return not ending a line")
    allowed = np.count_nonzero(text == 0x0A) + returns
    if delimiter == b"\t":
        allowed += np.count_nonzero(text == 0x09)
    if np.count_nonzero(text < 0x20) != allowed:
        raise ValueError("a control character or the other delimiter")
    if delimiter == b"\t" and buffer.find(b" ", 0, end) >= 0:
        raise ValueError("a space where tabs delimit")
    return memoryview(buffer)[:end]


def _parsed(text: memoryview, shape: Layout, first: bool):
    """The piece's lines split by pyarrow into string columns, proven (else `Unproven`).
    pyarrow drops a byte-order mark at the start of what it reads, as the exact reading does
    only at the start of a file: a later piece starting with one is not proven."""
    import pyarrow as pa
    from pyarrow import csv

    if not first and text[:3] == b"\xef\xbb\xbf":
        raise Unproven("a byte-order mark inside the file")
    names = [f"f{i}" for i in range(1, shape.fields + 1)]
    table = csv.read_csv(
        pa.py_buffer(text),
        csv.ReadOptions(column_names=names, block_size=_BLOCK),
        csv.ParseOptions(
            delimiter=shape.delimiter, quote_char=False, double_quote=False,
            escape_char=False, newlines_in_values=False, ignore_empty_lines=True,
        ),
        csv.ConvertOptions(
            column_types={name: pa.string() for name in names}, strings_can_be_null=False,
            quoted_strings_can_be_null=False, check_utf8=True,
        ),
    )  # fmt: skip
    if not _proven(table):
        raise Unproven("a line not split at single delimiters")
    return table


def _proven(table) -> bool:
    """Whether the lines of `table`, whose text holds no other separator (`_clean`), are split
    as trec_eval splits them: no field is empty (two delimiters in a row, or one leading or
    trailing), and no line is a comment."""
    import pyarrow.compute as pc

    for column in table.columns:
        if len(column) and pc.min(pc.binary_length(column)).as_py() == 0:
            return False
    return not (table.num_rows and pc.any(pc.starts_with(table.column(0), "#")).as_py())


def layout(path: Path) -> Layout | None:
    """The delimiter and field count of the file's first line, unless its head already shows a
    line the reading cannot prove (then None: read the exact way). The pieces' own proof
    decides; this only spares reading a file that fails it at once."""
    name = path.name.lower()
    if name.endswith(_COMPRESSED) or (name.endswith(".gz") and not path.name.endswith(".gz")):
        return None
    try:
        head = _head(path)
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
    if _shows(head, first, delimiter):
        return None
    return Layout(delimiter.decode(), first.count(delimiter) + 1)


def _shows(head: bytes, first: bytes, delimiter: bytes) -> bool:
    """Whether the head's lines show one the reading cannot prove: another separator or
    control character, an empty field, a comment, or a field count other than the first's."""
    other = b" " if delimiter == b"\t" else b"\t"
    return (
        any(byte in head for byte in (other, b"\r", *_CONTROLS))
        or delimiter * 2 in head
        or b"\n" + delimiter in head
        or delimiter + b"\n" in head
        or head.startswith((b"#", delimiter))
        or b"\n#" in head
        or head.count(delimiter) != head.count(b"\n") * first.count(delimiter)
    )


def _head(path: Path) -> bytes:
    """The first bytes of the file (decompressed)."""
    with open_input(path) as handle:
        return handle.read(_HEAD)
