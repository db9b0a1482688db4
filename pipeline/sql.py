"""The one place where a name becomes SQL text.

Names that come from a spec (runs, collections, labels, paths) are always bound parameters. Table and
column names are irpipe's own, but they too pass through `quote_identifier` wherever SQL is built
from them, so that no string ever reaches SQL text unquoted.
"""

from __future__ import annotations

__all__ = ["quote_identifier"]


def quote_identifier(name: str) -> str:
    """`name` as one double-quoted SQL identifier, embedded quotes doubled."""
    return '"' + name.replace('"', '""') + '"'
