"""The history of evaluations: one DuckDB file that remembers every evaluation of a spec, serves
unchanged runs' results back (the cache), and answers "what was it last time" (the gates).

`Keeper` is what an evaluation uses: `reuse` before evaluating (which runs' results the history
holds, copied into the evaluation's connection, and the previous values the gates compare with),
`record` after (append the evaluation, its checks' outcomes with it). See `schema` for the tables, `store` for locking and versions,
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
    #: (run, collection) -> result key
    keys: dict[tuple[str, str], str] = field(default_factory=dict)
    #: the (run, collection) pairs served from the history -> result key
    reused_pairs: dict[tuple[str, str], str] = field(default_factory=dict)
    evaluation: int | None = None  # the id it was recorded under

    @property
    def reused(self) -> dict[str, dict[str, str]]:
        """The runs served from the history: run -> {collection: result key}."""
        found: dict[str, dict[str, str]] = {}
        for (run, collection), key in self.reused_pairs.items():
            found.setdefault(run, {})[collection] = key
        return found

    def reuse(
        self,
        con: duckdb.DuckDBPyConnection,
        keys: dict[tuple[str, str], str],
        spec: str,
        read: frozenset[str] = frozenset(),
        previous: bool = True,
    ) -> set[str]:
        """The runs whose results the history holds (none with `refresh`) under every
        collection they are evaluated under (`keys`: (run, collection) -> key), their per-query
        rows copied into `cached_values` of `con`; a run the history holds under some of its
        collections only is evaluated again under all (its file is read anyway). Runs in `read`
        are read whatever the history holds (a pool needs their rows). With `previous` (a gate
        compares with the previous evaluation), the values of the latest earlier evaluation of
        `spec` (its absolute path) are left in `previous_aggregate` and `previous_per_query` of
        `con`: read here, before evaluating, so that the evaluation is then recorded in one
        transaction."""
        self.keys = keys
        with store.attached(con, self.path, self.lock_timeout, write=False) as ready:
            if previous:
                record.previous_tables(con, spec if ready else None)
            if ready and not self.refresh:
                wanted = {pair: key for pair, key in keys.items() if pair[0] not in read}
                found = cache.cached_keys(con, wanted)
                partly = {run for run, c in keys if (run, c) not in found}
                self.reused_pairs = {p: key for p, key in found.items() if p[0] not in partly}
                if self.reused_pairs:
                    cache.load_cached(con, self.reused_pairs)
        return set(self.reused)

    def record(
        self,
        con: duckdb.DuckDBPyConnection,
        provenance: dict,
        finished: str,
        notes: dict | None = None,
    ) -> int:
        """Append the evaluation, in one transaction; its id. `notes`: what the history keeps
        beside the provenance (the significance marks, the checks' outcomes), under their own
        keys."""
        self.path.parent.mkdir(parents=True, exist_ok=True)  # as outputs' directories are
        kept = {**provenance, **(notes or {})}
        with store.attached(con, self.path, self.lock_timeout, write=True):
            cached = set(self.reused_pairs)
            self.evaluation = record.append(con, kept, self.keys, cached, finished)
        return self.evaluation
