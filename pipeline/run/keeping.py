"""The history's part of an evaluation: which history it keeps (the spec's, or `--history`),
what that history gives back before evaluating (unchanged runs, the previous values the gates
compare with), and what it keeps beside the provenance."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.outputs.targets import Written
from pipeline.run.preflight import check_history_directory
from pipeline.run.provenance import spec_path
from pipeline.run.writes import check_writes
from pipeline.spec.history import History as SpecHistory

if TYPE_CHECKING:
    import duckdb

    from pipeline.history import Keeper
    from pipeline.plan.compile import SqlPlan
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
    the previous values the gates read); a pooled run, and a fused run a `run` output writes,
    is read whatever it holds."""
    from pipeline.history.cache import run_keys

    loaded = plan.loaded
    keys = run_keys(loaded, plan.sql, inputs, software)
    read = {run for pool in plan.pools for run in pool.runs}  # a pool needs their rows
    read |= {f.name for f in plan.sql.fusions if f.written}  # a `run` output needs its rows
    spec = spec_path(loaded.path)
    return plan.sql.reusing(frozenset(keeper.reuse(con, keys, spec, frozenset(read))))


def notes(plan: EvaluationPlan, con: duckdb.DuckDBPyConnection, checks: list) -> dict:
    """What the history keeps beside the provenance: the significance marks, when comparing
    (a dashboard shows them without the comparison table), and the checks' outcomes."""
    found = {}
    if plan.comparing is not None:
        from pipeline.compare.marks import significance

        found["significance"] = significance(con, plan.comparing).as_record()
    if checks:
        found["checks"] = [result.as_record() for result in checks]
    return found
