"""The front door: evaluate a spec, step by step, from the plan its validation built.

The steps, in order (`evaluate`): validate (`pipeline.run.preflight`), connect, describe the
inputs (provenance), open the history and take what it holds, execute the SQL plan on the
engine the spec names (pooling in the same pass), finish the pools, compare, record in the
history, and write every output at once. `irpipe run` then checks the expected values and gates.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.compare.marks import Significance, report_table, significance
from pipeline.engines import engine_named, with_engine
from pipeline.outputs import write_outputs
from pipeline.outputs.targets import Written
from pipeline.pools import finish_pools, with_pools
from pipeline.run.plan import EvaluationPlan
from pipeline.run.preflight import check_history_directory, compile_spec, validate
from pipeline.run.provenance import inputs_of, now, record, versions
from pipeline.run.writes import check_writes
from pipeline.spec import LoadedSpec, load_spec
from pipeline.spec.history import History as SpecHistory

if TYPE_CHECKING:
    import duckdb

    from pipeline.engines import Engine
    from pipeline.history import Keeper
    from pipeline.plan.compile import SqlPlan

__all__ = ["Evaluation", "compile_spec", "evaluate", "validate"]


@dataclass
class Evaluation:
    """The result of evaluating a spec: its plan, the connection holding the result tables, what
    the history kept and reused, and the evaluation's provenance."""

    plan: EvaluationPlan
    con: duckdb.DuckDBPyConnection
    sql: SqlPlan  # the SQL plan executed: the plan's, less the runs the history held
    keeper: Keeper | None = None  # the history it was recorded in, and which runs it reused
    recorded: dict | None = None  # its provenance, as every output's manifest holds it

    @property
    def loaded(self) -> LoadedSpec:
        """The spec evaluated."""
        return self.plan.loaded

    def aggregate(self) -> list[tuple]:
        """Rows (run, collection, metric, value, n_queries) in spec order."""
        return self.con.execute("SELECT * FROM aggregate").fetchall()

    def significance(self) -> Significance | None:
        """The marks of the console summary (and its legend), or None without comparisons."""
        if self.plan.comparing is None:
            return None
        return significance(self.con, self.plan.comparing)

    def history_note(self) -> str | None:
        """What the history kept and reused, in one line; None without a history."""
        keeper = self.keeper
        if keeper is None:
            return None
        runs, reused = len(keeper.keys), len(keeper.reused)
        if not engine_named(self.plan.engine).reuses_results:
            reuse = (
                f"all {runs} runs evaluated on {self.plan.engine.title()} (it reuses no results)"
            )
        elif keeper.refresh:
            reuse = f"--refresh: all {runs} runs evaluated"
        elif reused == 0:
            reuse = f"{runs} runs evaluated (no unchanged results to reuse)"
        elif reused == runs:
            reuse = f"all {runs} runs unchanged: results reused, nothing recomputed"
        else:
            reuse = f"{reused} of {runs} runs unchanged and reused; {runs - reused} evaluated"
        return f"History: evaluation {keeper.evaluation} recorded in {keeper.path}; {reuse}"

    def per_query(self) -> list[tuple]:
        """Rows (run, collection, qid, metric, value)."""
        return self.con.execute(
            "SELECT run, collection, qid, metric, value FROM per_query"
        ).fetchall()


def evaluate(
    spec: str | Path | LoadedSpec | EvaluationPlan,
    write: bool = True,
    history: str | Path | None = None,
    refresh: bool = False,
    remember: bool = True,
    engine: str | None = None,
    runner: Engine | None = None,
) -> Evaluation:
    """Validate, evaluate every run with every metric, record the evaluation in the history (the
    spec's, or `history`), and write the spec's outputs. With a history, runs whose results it
    holds under the same key are not evaluated again, unless `refresh` (or on an engine that
    reuses no results); `remember=False` leaves the history alone (`irpipe pool` evaluates,
    but is not an evaluation to remember). `engine` replaces the spec's `settings.engine`. A
    plan that `validate` built already is evaluated as it is (the Python door's `Evaluator`
    validates once and evaluates each run's table by its plan, on `runner`: an engine of its own,
    a session keeping the qrels' part between calls)."""
    started = now()
    plan = spec if isinstance(spec, EvaluationPlan) else validate(_loaded(spec, engine))
    loaded = plan.loaded  # with the tables it read (an ir_datasets id's)
    runner = runner or engine_named(plan.engine)
    keeper = _keeper(loaded, history, refresh or not runner.reuses_results) if remember else None
    con = runner.connect(plan.sql)
    inputs, software = inputs_of(loaded, runner.describe(loaded)), versions(plan.engine)
    sql = plan.sql if keeper is None else _reusing(plan, con, keeper, inputs, software)
    sql, tuning = _tuned(plan, sql)
    runner.execute(with_pools(sql, loaded, list(plan.pools)) if plan.pools else sql, loaded, con)
    _pools_and_comparisons(plan, con)
    recorded = record(plan, inputs, started, software)
    if tuning:  # each tuned fused run's weights, fold by fold, and its held-out values
        recorded["tuning"] = tuning
    if keeper is not None:
        recorded["history"] = str(keeper.path)
        recorded["evaluation_id"] = keeper.record(con, recorded, now(), _notes(plan, con))
    if write and plan.outputs:
        _write(plan, con, recorded)
    return Evaluation(plan, con, sql, keeper, recorded)


def _tuned(plan: EvaluationPlan, sql: SqlPlan) -> tuple[SqlPlan, dict]:
    """The SQL plan with its tuned fused runs' weights chosen (`pipeline.run.tuning`)."""
    if not any(f.retuned is not None for f in sql.fusions):
        return sql, {}
    from pipeline.run.tuning import tuned  # numpy: only to tune

    return tuned(plan, sql)


def _notes(plan: EvaluationPlan, con: duckdb.DuckDBPyConnection) -> dict:
    """What the history keeps beside the provenance: the significance marks, when comparing
    (a dashboard shows them without the comparison table)."""
    if plan.comparing is None:
        return {}
    return {"significance": significance(con, plan.comparing).as_record()}


def _loaded(spec: str | Path | LoadedSpec, engine: str | None) -> LoadedSpec:
    """The spec, loaded unless it is, with the command line's engine."""
    return with_engine(spec if isinstance(spec, LoadedSpec) else load_spec(spec), engine)


def _pools_and_comparisons(plan: EvaluationPlan, con: duckdb.DuckDBPyConnection) -> None:
    """The steps after the engine's: the pools' tables, then the comparisons."""
    if plan.pools:
        finish_pools(con, plan.loaded, list(plan.pools), plan.metrics)
    if plan.comparing is not None:
        from pipeline.compare.table import compare_runs  # numpy and scipy: only to compare

        compare_runs(con, plan.comparing, plan.loaded.where("compare"))


def _keeper(loaded: LoadedSpec, history: str | Path | None, refresh: bool) -> Keeper | None:
    """The history to use: `history` (the command line's) over the spec's; None without one."""
    from pipeline.history import Keeper

    configured = loaded.spec.history
    where = loaded.where("history")
    if history is not None:  # the spec's lock_timeout still applies, or its default
        configured = SpecHistory(path=Path(history), **_timeout(configured))
        where = "--history"
        check_writes(loaded, history=Written(configured.path, "history", where, where))
    if configured is None:
        return None
    check_history_directory(configured.path, where)
    return Keeper(configured.path, configured.lock_timeout, refresh)


def _timeout(configured: SpecHistory | None) -> dict:
    return {} if configured is None else {"lock_timeout": configured.lock_timeout}


def _reusing(plan: EvaluationPlan, con, keeper: Keeper, inputs, software) -> SqlPlan:
    """The SQL plan without the runs whose results the history holds (copied into `con`); a
    pooled run, and a fused run a `run` output writes, is read whatever it holds."""
    from pipeline.history.cache import run_keys

    loaded = plan.loaded
    keys = run_keys(loaded, plan.sql, inputs, software)
    collections = {name: run.collection for name, run in loaded.spec.runs.items()}
    read = {run for pool in plan.pools for run in pool.runs}  # a pool needs their rows
    read |= {f.name for f in plan.sql.fusions if f.written}  # a `run` output needs its rows
    return plan.sql.reusing(frozenset(keeper.reuse(con, keys, collections, frozenset(read))))


def _write(plan: EvaluationPlan, con: duckdb.DuckDBPyConnection, recorded: dict) -> None:
    """Every output of the plan, the spec's and its pools', all or none."""
    if any(job.level == "report" for job in plan.outputs):
        report_table(con, plan.metrics, plan.comparing)
    write_outputs(con, list(plan.outputs), recorded)
