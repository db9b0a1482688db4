"""The one reading of the inputs before they are loaded: a qrels file's first line, for the format
it shows where its collection names none (and a latency file's, for the unit its header names). The preflight calls it, with the data; compiling a plan
never does (`irpipe compile` shows such a file as TREC's unless its format is given)."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from pipeline.inputs.formats import recognised_name
from pipeline.inputs.table_rows import is_table_input
from pipeline.inputs.trec_qrels import NAME as TREC

__all__ = ["first_line", "open_input", "recognised"]


def recognised(path: Path | str) -> str:
    """The qrels format a local text file's first line (plain or .gz) shows (`recognised_name`).
    A URI, a table, or a file that cannot be read here is TREC's: reading it later says what is
    wrong."""
    first = first_line(path)
    return TREC if first is None else recognised_name(first)


def first_line(path: Path | str) -> str | None:
    """The first line of a local text file (plain or .gz; a latency file's header too); None
    for a URI, a table, or a file that cannot be read here."""
    if not isinstance(path, Path) or is_table_input(path):
        return None  # a URI or a table: no first line to read here
    try:
        return _first_line(path)
    except (OSError, EOFError, UnicodeDecodeError, zlib.error):
        return None


def _first_line(path: Path) -> str:
    """The first line of a plain or gzip-compressed text file (at most 4 kB of it)."""
    with open_input(path, "rt", encoding="utf-8", newline="") as handle:
        return handle.readline(4096)


def open_input(path: Path, mode: str = "rb", **options):
    """A local input file opened to read, decompressed where its name ends in .gz."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    return opener(path, mode, **options)
