"""One file an evaluation writes: the result table it holds, where, and at which level.

The spec's outputs and its pools' become jobs when the spec is validated
(`pipeline.run.preflight`, `pipeline.pools.pool_outputs`); `pipeline.outputs.write_outputs` writes
them. The record lives here, below both, because the layers let the pools and the writers import
the plan, and not the pools the writers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["OutputJob"]


@dataclass(frozen=True)
class OutputJob:
    """One file to write: the result table it holds, where, and at which level (the level picks
    the writer where a suffix has several, as `.md` does)."""

    table: str
    path: Path
    level: str
