"""What an output writer plugin subclasses: `Writer` writes one DuckDB table to a file of one format."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:  # DuckDB is imported where a table is written: validating a spec needs none
    import duckdb

__all__ = [
    "Writer",
]


class Writer(ABC):
    """Writes a DuckDB table to a file of one format."""

    suffixes: ClassVar[tuple[str, ...]]
    #: the output levels (the spec's `level`) this writer can write; a writer written for the
    #: per_query and aggregate tables is not handed a table of another shape. Writers of one
    #: suffix may share it between them by level (`.md`: a pivot, and at level report the report)
    levels: ClassVar[tuple[str, ...]] = ("query", "aggregate")

    @abstractmethod
    def write(self, con: duckdb.DuckDBPyConnection, table: str, path: Path, manifest: dict) -> None:
        """Write `table` (ordered as it should appear) to `path`."""

    def check_target(self, con: duckdb.DuckDBPyConnection, path: Path) -> None:
        """Raise OutputError if the existing file at `path` must not be replaced.

        Called for every output before anything is written; the default accepts any file.
        """
        return None  # most formats are plain files that nothing holds open

    def check_available(self) -> None:
        """Raise SpecError if something this writer needs is not installed (an optional extra).

        Called when a spec is validated, before any data is read; the default needs nothing.
        """
        return None
