"""Building pools on a DuckDB connection: in the evaluation's own pass over the runs, or in a pass
of their own (`irpipe pool`, where nothing is evaluated).

Either way each batch of runs is loaded and checked as the executor loads it, its pooled rows are
kept (`sql.pooled_rows`) and its rows dropped, so memory holds one batch; the pool tables are made
once every run is read.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.errors import InputDataError
from pipeline.inputs.format import Load
from pipeline.inputs.formats import qrels_format, run_format
from pipeline.inputs.loaded_tables import RUN_ROWS, input_tables
from pipeline.plan.batches import batched
from pipeline.plan.overlays import needed_collections, overlay_statements
from pipeline.plan.ranking import ordering
from pipeline.pools.plan import PoolPlan
from pipeline.pools.sql import pool_tables, pooled_rows, setup_tables
from pipeline.sql import Statement

if TYPE_CHECKING:
    import duckdb

    from pipeline.plan.sql_plan import SqlPlan
    from pipeline.spec import LoadedSpec

__all__ = ["finish_pools", "pool_pass", "with_pools"]


def _statements(loaded: LoadedSpec, plans: list[PoolPlan]) -> tuple[list, list]:
    """(made before any run is read, run after each batch is loaded)."""
    keys = ordering(loaded.spec.settings)
    return setup_tables(plans), [pooled_rows(p, keys) for p in plans]


def with_pools(plan: SqlPlan, loaded: LoadedSpec, plans: list[PoolPlan]) -> SqlPlan:
    """The evaluation's plan, also keeping each batch's pooled rows before its rows are dropped:
    one pass over the runs evaluates and pools them."""
    setup, per_batch = _statements(loaded, plans)
    qrels = replace(plan.qrels, statements=[*plan.qrels.statements, *setup])
    runs = replace(plan.runs, per_batch=[*plan.runs.per_batch, *per_batch])
    return replace(plan, qrels=qrels, runs=runs)


def pool_pass(loaded: LoadedSpec, plans: list[PoolPlan], sizes: dict[Path, int]):
    """A connection holding the pooled rows of every pooled run and the pools' qrels (where the
    collection has them), read batch by batch; nothing is evaluated. `loaded` knows its qrels'
    formats (the preflight's `with_qrels_formats`)."""
    from pipeline.engines.duckdb.executor import connection
    from pipeline.engines.duckdb.loading import load_files
    from pipeline.engines.duckdb.steps import run_all

    settings = loaded.spec.settings
    con = connection(settings.memory_limit, settings.threads)
    run_all(con, input_tables(settings.grades))
    pooled = list(dict.fromkeys(p.collection for p in plans))
    for name in needed_collections(loaded.spec, pooled):  # an overlay's sets, too
        collection = loaded.spec.collections[name]
        if collection.qrels_file is not None:
            fmt = qrels_format(collection.format, settings.input, settings.grades)
            load_files(con, [Load(collection.qrels_file, name, fmt)])
    run_all(con, overlay_statements(loaded.spec, pooled))
    setup, per_batch = _statements(loaded, plans)
    run_all(con, setup)
    ranked = settings.ordering == "rank"
    pooled = {name: loaded.spec.runs[name] for p in plans for name in p.runs}
    runs = [Load(r.path, name, run_format(settings.input, ranked, r.format), r.collections)
            for name, r in pooled.items()]  # fmt: skip
    for batch in batched(runs, sizes):
        load_files(con, batch)
        run_all(con, [*per_batch, Statement("DROP TABLE run_rows"), RUN_ROWS])
    return con


def finish_pools(
    con: duckdb.DuckDBPyConnection, loaded: LoadedSpec, plans: list[PoolPlan], metrics: list
) -> None:
    """Each pool's tables, once its runs are read (and evaluated, where it leaves runs out)."""
    from pipeline.engines.duckdb.steps import run_all
    from pipeline.pools.leave_out import leave_one_out

    level = loaded.spec.settings.relevance_level
    for plan in plans:
        _exclude(con, loaded, plan)
        run_all(con, pool_tables(plan, level))
        if plan.leaves_out:
            leave_one_out(con, loaded, plan, metrics)


def _exclude(con: duckdb.DuckDBPyConnection, loaded: LoadedSpec, plan: PoolPlan) -> None:
    """The pool's `exclude` qrels into `excluded`, loaded among the qrels under the name the
    plan gives them; they must share a query with its runs."""
    from pipeline.engines.duckdb.loading import load_files
    from pipeline.engines.duckdb.steps import run_all

    if plan.exclude is None:
        return
    name = plan.excluded_as
    settings = loaded.spec.settings
    fmt = qrels_format(loaded.formats.get(str(plan.exclude)), settings.input, settings.grades)
    load_files(con, [Load(plan.exclude, name, fmt)])
    run_all(con, [
        Statement("INSERT INTO excluded SELECT ?, qid, docno FROM qrels WHERE collection = ?",
                  [plan.index, name]),
        Statement("DELETE FROM qrels WHERE collection = ?", [name]),
    ])  # fmt: skip
    shared = con.execute(
        "SELECT count(*) FROM (SELECT DISTINCT qid FROM excluded WHERE pool = ?) "
        "SEMI JOIN (SELECT DISTINCT qid FROM pool_rows WHERE pool = ?) USING (qid)",
        [plan.index, plan.index],
    ).fetchone()[0]
    if not shared:
        raise InputDataError(
            f"{loaded.where('pools', plan.name, 'exclude')}: {plan.exclude} shares no query with "
            f"the runs of pool '{plan.name}': qrels of another collection? give the judgments "
            f"of collection '{plan.collection}'"
        )
