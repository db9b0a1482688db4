"""The one place where a name becomes SQL text.

Names that come from a spec (runs, collections, labels, paths) are always bound parameters. Table and
column names are irpipe's own, but they too pass through `quote_identifier` wherever SQL is built
from them, so that no string ever reaches SQL text unquoted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Statement", "quote_identifier"]


@dataclass(frozen=True)
class Statement:
    """One SQL statement and its bound parameters (never spliced into its text): what every part
    of a plan holds and an engine runs."""

    sql: str
    params: list = field(default_factory=list)


def quote_identifier(name: str) -> str:
    """`name` as one double-quoted SQL identifier, embedded quotes doubled."""
    return '"' + name.replace('"', '""') + '"'
