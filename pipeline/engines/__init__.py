"""Engines execute a plan: `duckdb` (the default, embedded: `pipeline.engines.duckdb.executor`) and `spark`
(`pipeline.engines.spark`, an optional extra). Each leaves the same result tables, with the
same values, in a DuckDB connection on this machine, which every later step reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

    from pipeline.plan.compile import Plan
    from pipeline.spec import LoadedSpec

__all__ = ["ENGINES", "execute", "with_engine"]

ENGINES = ("duckdb", "spark")


def execute(
    plan: Plan, loaded: LoadedSpec, con: duckdb.DuckDBPyConnection | None = None
) -> duckdb.DuckDBPyConnection:
    """Evaluate `plan` on the engine the spec's settings name; the connection holding the
    result tables (`con`, or a new one)."""
    from pipeline.engines.duckdb.executor import connect
    from pipeline.engines.duckdb.executor import execute as on_duckdb

    if loaded.spec.settings.engine == "duckdb":
        return on_duckdb(plan, con)
    from pipeline.engines.spark import (
        execute as on_spark,  # pyspark only for a spec that asks for it
    )

    return on_spark(plan, loaded, con or connect(plan))


def with_engine(loaded: LoadedSpec, engine: str | None) -> LoadedSpec:
    """The spec with its `settings.engine` replaced by `engine` (the command line's), if given."""
    from dataclasses import replace

    if engine is None or engine == loaded.spec.settings.engine:
        return loaded
    settings = loaded.spec.settings.model_copy(update={"engine": engine})
    return replace(loaded, spec=loaded.spec.model_copy(update={"settings": settings}))
