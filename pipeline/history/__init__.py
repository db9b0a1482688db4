"""The history of evaluations: one DuckDB file that remembers every evaluation of a spec, serves
unchanged runs' results back (the cache), and answers "what was it last time" (the gates).

`Keeper` is what an evaluation uses: `reuse` before evaluating (which runs' results the history
holds, copied into the evaluation's connection), `record` after (append the evaluation, and make
the previous values available). See `schema` for the tables, `store` for locking and versions,
`cache` for what a result key covers, `record` for the append.

Imports: duckdb, the digests, and the layers below (the plan, for what a key covers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.history import cache, record, store

if TYPE_CHECKING:
    import duckdb

__all__ = ["Keeper"]


@dataclass
class Keeper:
    """One evaluation's use of a history file. `refresh`: reuse nothing (still record)."""

    path: Path
    lock_timeout: float
    refresh: bool = False
    keys: dict[str, str] = field(default_factory=dict)  # run -> result key
    reused: dict[str, str] = field(default_factory=dict)  # runs served from the history
    evaluation: int | None = None  # the id it was recorded under

    def reuse(
        self,
        con: duckdb.DuckDBPyConnection,
        keys: dict[str, str],
        collections: dict,
        read: frozenset[str] = frozenset(),
    ) -> set[str]:
        """The runs whose results the history holds (none with `refresh`), their per-query rows
        copied into `cached_values` of `con`; `collections`: run -> collection. Runs in `read`
        are read whatever the history holds (a pool needs their rows)."""
        self.keys = keys
        if self.refresh:
            return set()
        with store.attached(con, self.path, self.lock_timeout, write=False) as ready:
            if ready:
                wanted = {run: key for run, key in keys.items() if run not in read}
                self.reused = cache.cached_keys(con, wanted)
                if self.reused:
                    cache.load_cached(con, self.reused, collections)
        return set(self.reused)

    def record(
        self,
        con: duckdb.DuckDBPyConnection,
        provenance: dict,
        finished: str,
        notes: dict | None = None,
    ) -> int:
        """Append the evaluation; its id. The previous values of the same spec are left in
        `previous_aggregate` and `previous_per_query` of `con`, for the gates. `notes`: what the
        history keeps beside the provenance (the significance marks), under their own keys."""
        self.path.parent.mkdir(parents=True, exist_ok=True)  # as outputs' directories are
        kept = {**provenance, **(notes or {})}
        with store.attached(con, self.path, self.lock_timeout, write=True):
            record.previous_tables(con, provenance["spec"])
            self.evaluation = record.append(con, kept, self.keys, set(self.reused), finished)
        return self.evaluation

    def note(self, con: duckdb.DuckDBPyConnection, notes: dict) -> None:
        """Add `notes` to the recorded evaluation's provenance, under their own keys: what is
        known only once it is recorded (the checks, whose gates read the previous values)."""
        with store.attached(con, self.path, self.lock_timeout, write=True):
            record.note(con, self.evaluation, notes)
