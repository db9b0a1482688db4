"""The front door: evaluate a spec, stage by stage, from the plan its validation built.

`evaluate` validates (`pipeline.run.preflight`), then runs the stages `pipeline.run.stages`
lists for the plan, in order: connect, describe the inputs (provenance), take what the history
holds (unchanged runs, the previous values), tune fused runs, execute the SQL plan on the engine
the spec names (pooling in the same pass), finish the pools, compare, compare the judgment sets
and the orderings of the runs, check the expected values and gates, record all of it in the history in one transaction, write every output at once, and
draw the dashboard. Both doors (`irpipe run`, `pipeline.evaluate`) run exactly these.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.engines import engine_named, with_runtime
from pipeline.errors import IrpipeWarning
from pipeline.outputs import write_outputs
from pipeline.run.evaluation_plan import EvaluationPlan
from pipeline.run.keeping import keeper_of, notes, reusing
from pipeline.run.preflight import compile_spec, validate
from pipeline.run.provenance import Input, inputs_of, now, record, versions
from pipeline.run.stages import StageName, by_stage, stages
from pipeline.spec import LoadedSpec, load_spec
from pipeline.spec.levels import level_of
from pipeline.sql import quote_identifier

if TYPE_CHECKING:
    import duckdb

    from pipeline.checks import CheckResult
    from pipeline.compare.marks import Significance
    from pipeline.engines import Engine
    from pipeline.history import Keeper
    from pipeline.plan.sql_plan import SqlPlan
    from pipeline.run.tuning import TuningRecord

__all__ = ["Evaluation", "compile_spec", "evaluate", "validate"]


@dataclass
class Evaluation:
    """The result of evaluating a spec: its plan, the connection holding the result tables, what
    the history kept and reused, the evaluation's provenance, and its checks' outcomes."""

    plan: EvaluationPlan
    con: duckdb.DuckDBPyConnection
    sql: SqlPlan  # the SQL plan executed: the plan's, less the runs the history held
    keeper: Keeper | None = None  # the history it was recorded in, and which runs it reused
    recorded: dict | None = None  # its provenance, as every output's manifest holds it
    checks: list[CheckResult] = field(default_factory=list)  # expected values, then gates
    notices: list[str] = field(default_factory=list)  # the checks' warnings, not yet shown

    def warn(self) -> None:
        """Show the checks' warnings (a gate skipped), as warnings: after the results they
        are about."""
        for notice in self.notices:
            warnings.warn(IrpipeWarning(notice), stacklevel=2)

    @property
    def failed(self) -> bool:
        """Whether an expected value or a gate failed (`irpipe run` exits 5)."""
        return any(result.status == "failed" for result in self.checks)

    @property
    def loaded(self) -> LoadedSpec:
        """The spec evaluated."""
        return self.plan.loaded

    def aggregate(self) -> list[tuple]:
        """Rows (run, collection, metric, value, n_queries) in spec order."""
        return self.con.execute("SELECT * FROM aggregate").fetchall()

    def suite_means(self) -> list[tuple]:
        """Rows (run, suite, metric, macro, n_collections) of the suites' means, as `aggregate`'s
        (none without suites)."""
        if not self.loaded.spec.suites:
            return []
        sql = "SELECT run, suite, metric, macro, n_collections FROM suite"
        return self.con.execute(sql).fetchall()

    def significance(self) -> Significance | None:
        """The marks of the console summary (and its legend), or None without comparisons."""
        if self.plan.comparing is None:
            return None
        from pipeline.compare.marks import significance

        return significance(self.con, self.plan.comparing)

    def history_note(self) -> str | None:
        """What the history kept and reused, in one line; None without a history."""
        keeper = self.keeper
        if keeper is None:
            return None
        # runs, not (run, collection) pairs: a run is reused under all its collections or none
        runs, reused = len({r for r, _ in keeper.keys}), len(keeper.reused)
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

    def rows(self, table: str) -> list[tuple]:
        """Every row of a result table (`agreement`, `correlation`, ...), in its order."""
        return self.con.execute(f"SELECT * FROM {quote_identifier(table)}").fetchall()

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
    threads: int | None = None,
) -> Evaluation:
    """Validate, then run every stage of the evaluation (`pipeline.run.stages`): evaluate every
    run with every metric, decide the expected values and gates, record all of it in the
    history (the spec's, or `history`) in one transaction, write the spec's outputs and the
    history's dashboard. With a history, runs whose results it holds under the same key are
    not evaluated again, unless `refresh` (or on an engine that reuses no results);
    `remember=False` leaves the history alone (`irpipe pool` evaluates, but is not an
    evaluation to remember). `engine` and `threads` replace the spec's settings. A plan that
    `validate` built already is evaluated as it is (the Python door's `Evaluator` validates
    once and evaluates each run's table by its plan, on `runner`: an engine of its own, a
    session keeping the qrels' part between calls). The checks' warnings (a gate skipped) are
    held in `Evaluation.notices`, for the caller to show after its results."""
    started = now()
    plan = spec if isinstance(spec, EvaluationPlan) else validate(_loaded(spec, engine, threads))
    runner = runner or engine_named(plan.engine)
    keeper = (
        keeper_of(plan.loaded, history, refresh or not runner.reuses_results) if remember else None
    )
    state = _State(plan, runner, keeper, started)
    for stage in stages(plan, keeping=keeper is not None, writing=write):
        _STEPS[stage.name](state)
    return state.evaluation()


@dataclass
class _State:
    """What an evaluation's stages hand on to the next: the plan, the engine, the history, and
    what each stage made."""

    plan: EvaluationPlan
    runner: Engine
    keeper: Keeper | None
    started: str
    con: duckdb.DuckDBPyConnection | None = None
    inputs: list[Input] = field(default_factory=list)  # every input, described
    software: dict[str, Any] = field(default_factory=dict)  # the versions, for the provenance
    sql: SqlPlan | None = None  # the plan's SQL, less the runs the history held
    #: what was chosen for each tuned fused run, by run (`pipeline.run.tuning`)
    tuning: dict[str, TuningRecord] = field(default_factory=dict)
    checks: list[CheckResult] = field(default_factory=list)  # expected values, then gates
    notices: list[str] = field(default_factory=list)  # the checks' warnings, not yet shown
    recorded: dict[str, Any] | None = None  # the provenance, once recorded or written

    def evaluation(self) -> Evaluation:
        recorded = self.recorded or self._provenance()
        return Evaluation(self.plan, self.con, self.sql, self.keeper, recorded, self.checks,
                          self.notices)  # fmt: skip

    def _provenance(self) -> dict[str, Any]:
        """The evaluation's provenance, as every output's manifest holds it."""
        recorded = record(self.plan, self.inputs, self.started, self.software)
        if self.tuning:  # each tuned fused run's weights, fold by fold, and its held-out values
            recorded["tuning"] = self.tuning
        return recorded


def _connect(state: _State) -> None:
    state.con = state.runner.connect(state.plan.sql)
    state.sql = state.plan.sql


def _describe(state: _State) -> None:
    state.inputs = inputs_of(state.plan.loaded, state.runner.describe(state.plan.loaded))
    state.software = versions(state.plan.engine)


def _reuse(state: _State) -> None:
    state.sql = reusing(state.plan, state.con, state.keeper, state.inputs, state.software)


def _tune(state: _State) -> None:
    from pipeline.run.tuning import tuned  # numpy: only to tune

    state.sql, state.tuning = tuned(state.plan, state.sql, state.runner, state.con)


def _execute(state: _State) -> None:
    plan, sql = state.plan, state.sql
    if plan.pools:
        from pipeline.pools import with_pools

        sql = with_pools(sql, plan.loaded, list(plan.pools))
    if plan.reproduction is not None and plan.reproduction.ranked_runs:
        from pipeline.reproduction.rankings import with_rankings

        sql = with_rankings(sql, plan.loaded, plan.reproduction)
    state.runner.execute(sql, plan.loaded, state.con)


def _pool(state: _State) -> None:
    from pipeline.pools import finish_pools

    plan = state.plan
    finish_pools(state.con, plan.loaded, list(plan.pools), plan.metrics)


def _compare(state: _State) -> None:
    plan = state.plan
    if plan.comparing is not None:
        from pipeline.compare.table import compare_runs  # numpy and scipy: only to compare

        compare_runs(state.con, plan.comparing, plan.loaded.where("compare"))
    if plan.discriminating is not None:
        from pipeline.compare.discrimination import discrimination_tables

        where = plan.loaded.where("discrimination")
        discrimination_tables(state.con, plan.discriminating, where)


def _agree(state: _State) -> None:
    from pipeline.agreement.tables import compare_judgment_sets  # numpy: only to compare judgments

    counted = state.runner.counts_judgment_cells  # Spark counts where the labels are
    compare_judgment_sets(state.con, state.plan.agreement, state.plan.loaded.where, counted)


def _reproduce(state: _State) -> None:
    from pipeline.reproduction.tables import measure_reproductions  # numpy: only to measure

    measure_reproductions(state.con, state.plan.reproduction)


def _check(state: _State) -> None:
    """The expected values and gates; their warnings (a gate skipped) held for the caller."""
    from pipeline.checks import run_checks

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", IrpipeWarning)
        state.checks = run_checks(state.con, state.plan.loaded, state.plan.checks)
    state.notices = [str(w.message) for w in caught if issubclass(w.category, IrpipeWarning)]
    for other in (w for w in caught if not issubclass(w.category, IrpipeWarning)):
        warnings.warn_explicit(other.message, other.category, other.filename, other.lineno)


def _record(state: _State) -> None:
    keeper, recorded = state.keeper, state._provenance()
    recorded["history"] = str(keeper.path)
    kept = notes(state.plan, state.con, state.checks)
    recorded["evaluation_id"] = keeper.record(state.con, recorded, now(), kept)
    state.recorded = recorded


def _write(state: _State) -> None:
    """Every output of the plan, the spec's and its pools', all or none."""
    plan, con = state.plan, state.con
    state.recorded = state.recorded or state._provenance()
    if any(level_of(job.level).is_report for job in plan.outputs):
        from pipeline.compare.marks import report_table

        report_table(con, plan.metrics, plan.comparing, bool(plan.loaded.spec.suites))
    write_outputs(con, list(plan.outputs), state.recorded)


def _dashboard(state: _State) -> None:
    from pipeline.dashboard import write_dashboard  # vl-convert: only to draw
    from pipeline.measures.registry import get_registry

    keeper, loaded = state.keeper, state.plan.loaded
    where = loaded.where("history", "dashboard")
    site, registry = loaded.spec.history.dashboard, get_registry()
    write_dashboard(keeper.path, site, keeper.lock_timeout, where=where, registry=registry)


#: the function of each stage (`pipeline.run.stages` says which run, and in which order)
_STEPS = by_stage(
    {
        StageName.CONNECT: _connect,
        StageName.DESCRIBE: _describe,
        StageName.REUSE: _reuse,
        StageName.TUNE: _tune,
        StageName.EXECUTE: _execute,
        StageName.POOL: _pool,
        StageName.COMPARE: _compare,
        StageName.AGREE: _agree,
        StageName.REPRODUCE: _reproduce,
        StageName.CHECK: _check,
        StageName.RECORD: _record,
        StageName.WRITE: _write,
        StageName.DASHBOARD: _dashboard,
    }
)


def _loaded(spec: str | Path | LoadedSpec, engine: str | None, threads: int | None) -> LoadedSpec:
    """The spec, loaded unless it is, with the command line's engine and threads."""
    return with_runtime(spec if isinstance(spec, LoadedSpec) else load_spec(spec), engine, threads)
