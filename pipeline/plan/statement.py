"""The plan's data type: one SQL statement and the parameters bound to it (never spliced into its
text), as every part of the plan holds them and an engine runs them."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "Statement",
]


@dataclass(frozen=True)
class Statement:
    """One SQL statement and its bound parameters."""

    sql: str
    params: list = field(default_factory=list)
