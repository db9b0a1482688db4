"""Engines execute an SQL plan (`pipeline.plan`) behind one small protocol, `Engine`: `duckdb`
(the default, embedded, `pipeline.engines.duckdb`) and `spark` (`pipeline.engines.spark`, an
optional extra). Each leaves the same result tables, with the same values, in a DuckDB connection
on this machine, which every later step reads. Nothing outside this package talks to a database
engine or a cluster to evaluate; an engine imports the plan, never the steps after it.

Imports: the plan, the foundation; duckdb, and pyspark for the Spark engine only.
"""

from __future__ import annotations

from dataclasses import replace
from importlib import import_module
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import duckdb

    from pipeline.plan.sql_plan import SqlPlan
    from pipeline.spec import LoadedSpec

__all__ = ["ENGINES", "Engine", "engine_named", "execute", "with_runtime"]

#: each engine by its name in `settings.engine`, and the module whose ENGINE it is (imported only
#: when a spec names it: pyspark is never imported for the DuckDB engine)
ENGINES = {"duckdb": "pipeline.engines.duckdb", "spark": "pipeline.engines.spark"}


class Engine(Protocol):
    """What an evaluation asks of an engine."""

    #: whether runs whose results the history holds are skipped (an engine that evaluates every
    #: run says False, and the history notes it)
    reuses_results: bool

    #: whether `execute` leaves the confusion cells of the spec's agreement entries in the
    #: table `judgment_cells` (`pipeline.plan.judgment_cells`): an engine whose connection does
    #: not hold the qrels' labels counts them where they are; otherwise they are counted from
    #: `qrels` after it
    counts_judgment_cells: bool

    def connect(self, plan: SqlPlan) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection that receives the result tables, configured for the plan."""
        ...

    def describe(self, loaded: LoadedSpec) -> Callable[[Path | str], tuple[int, str]] | None:
        """How to describe an input that is not one local file (a directory, a URI) for the
        provenance, as `(size, digest)`; None if the engine reads only local files."""
        ...

    def execute(
        self, plan: SqlPlan, loaded: LoadedSpec, con: duckdb.DuckDBPyConnection
    ) -> duckdb.DuckDBPyConnection:
        """Evaluate `plan`, leaving its result tables in `con`, and return `con`."""
        ...


def engine_named(name: str) -> Engine:
    """The engine `settings.engine` names (validated by the spec: one of `ENGINES`)."""
    return import_module(ENGINES[name]).ENGINE


def execute(
    plan: SqlPlan, loaded: LoadedSpec, con: duckdb.DuckDBPyConnection | None = None
) -> duckdb.DuckDBPyConnection:
    """Evaluate `plan` on the engine the spec's settings name; the connection holding the
    result tables (`con`, or a new one)."""
    engine = engine_named(loaded.spec.settings.engine)
    return engine.execute(plan, loaded, con or engine.connect(plan))


def with_runtime(loaded: LoadedSpec, engine: str | None, threads: int | None = None) -> LoadedSpec:
    """The spec with its `settings.engine` and `settings.threads` replaced by the command line's
    `engine` and `threads`, where given (neither changes a number)."""
    given = {"engine": engine, "threads": threads}
    update = {key: value for key, value in given.items() if value is not None}
    if not update:
        return loaded
    settings = loaded.spec.settings.model_copy(update=update)
    return replace(loaded, spec=loaded.spec.model_copy(update={"settings": settings}))
