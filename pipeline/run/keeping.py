"""The history's part of an evaluation: which history it keeps (the spec's, or `--history`),
what that history gives back before evaluating (unchanged runs, the previous values the gates
compare with), and what it keeps beside the provenance."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.outputs.targets import Written
from pipeline.plan.overlays import needed_collections
from pipeline.run.preflight import check_history_directory
from pipeline.run.provenance import spec_path
from pipeline.run.writes import check_writes
from pipeline.spec.history import History as SpecHistory

if TYPE_CHECKING:
    import duckdb

    from pipeline.history import Keeper
    from pipeline.plan.sql_plan import SqlPlan
    from pipeline.run.evaluation_plan import EvaluationPlan
    from pipeline.spec import LoadedSpec

__all__ = ["keeper_of", "notes", "reusing"]


def keeper_of(loaded: LoadedSpec, history: str | Path | None, refresh: bool) -> Keeper | None:
    """The history to use: `history` (the command line's) over the spec's, checked as every
    path irpipe writes is; None without one."""
    configured = loaded.spec.history
    where = loaded.where("history")
    if history is not None:  # the spec's lock_timeout still applies, or its default
        configured = SpecHistory(path=Path(history), **_timeout(configured))
        where = "--history"
        check_writes(loaded, history=Written(configured.path, "history", where, where))
    if configured is None:
        return None
    check_history_directory(configured.path, where)
    from pipeline.history import Keeper  # DuckDB's history code: only with a history

    return Keeper(configured.path, configured.lock_timeout, refresh)


def _timeout(configured: SpecHistory | None) -> dict:
    return {} if configured is None else {"lock_timeout": configured.lock_timeout}


def reusing(plan: EvaluationPlan, con, keeper: Keeper, inputs, software) -> SqlPlan:
    """The SQL plan without the runs whose results the history holds (copied into `con`, with
    the previous values the gates read, when a gate reads them), and without the qrels that only
    those runs read; a pooled run, and a fused run a `run` output writes, is read whatever it
    holds."""
    from pipeline.history.cache import run_keys

    loaded = plan.loaded
    keys = run_keys(loaded, plan.sql, inputs, software)
    read = {run for pool in plan.pools for run in pool.runs}  # a pool needs their rows
    if plan.reproduction is not None:  # so do the rankings a reproduction compares
        read |= set(plan.reproduction.ranked_runs)
    read |= {f.name for f in plan.sql.runs.fusions if f.written}  # a `run` output needs its rows
    gates = plan.checks.gates if plan.checks is not None else ()
    spec, previous = spec_path(loaded.path), any(g.against is None for g in gates)
    cached = keeper.reuse(con, keys, spec, frozenset(read), previous)
    sql, unread = plan.sql.reusing(frozenset(cached)), _covered_qrels(plan, keeper)
    if not unread:
        return sql
    loads = [q for q in sql.qrels.loads if q.name not in unread]
    return replace(sql, qrels=replace(sql.qrels, loads=loads))


def _covered_qrels(plan: EvaluationPlan, keeper: Keeper) -> set[str]:
    """The collections whose qrels need not be read: those of the reused results, unless an
    evaluated run, a comparison of judgment sets, a tuning or trec_eval -c's aggregate (which
    counts their relevant lines) reads them. A result key holds the qrels' digest, the settings
    and the versions, and is recorded only after every input check passed: the same bytes pass
    them again. A collection that no run uses is read (and checked) as before."""
    if plan.agreement is not None or plan.tunings or plan.sql.runs.missing_rankings:
        return set()
    spec, reused = plan.loaded.spec, keeper.reused_pairs
    evaluated = {c for run, c in keeper.keys if (run, c) not in reused}
    covered = needed_collections(spec, [c for _, c in reused])  # with the sets overlays read
    return set(covered) - set(needed_collections(spec, list(evaluated)))


def notes(plan: EvaluationPlan, con: duckdb.DuckDBPyConnection, checks: list) -> dict:
    """What the history keeps beside the provenance: the significance marks, when comparing
    (a dashboard shows them without the comparison table), the suites' means and the
    discriminative power (likewise), and the checks' outcomes."""
    found = {}
    if plan.comparing is not None:
        from pipeline.compare.marks import significance

        found["significance"] = significance(con, plan.comparing).as_record()
    if plan.loaded.spec.suites:
        found["suite_means"] = _records(con, "suite")
    if plan.discriminating is not None:
        found["discriminative_power"] = _records(con, "discrimination")
    if checks:
        found["checks"] = [result.as_record() for result in checks]
    return found


def _records(con: duckdb.DuckDBPyConnection, table: str) -> list[dict]:
    """A result table's rows as records (JSON), in its order."""
    cursor = con.execute(f"SELECT * FROM {table}")
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
