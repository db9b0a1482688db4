"""Runs an SQL plan on DuckDB: loads and checks the inputs (`loading`), runs the plan's parts in order
(the statements themselves in `steps`), reports each step's progress, and turns DuckDB's errors
into irpipe's (SQL a metric wrote that does not bind, running out of memory). It is one of the
modules that talk to DuckDB, beside the engine's `steps` and `session`, the history, the
DuckDB writer and the pools' own pass over the runs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb

from pipeline import interrupts
from pipeline.engines.duckdb.arrow_rows import Rows, read_runs
from pipeline.engines.duckdb.loading import (
    check_duplicates,
    check_judged,
    check_lines,
    check_matches,
    check_shared_queries,
    insert_inputs,
    load_files,
    load_latency,
    note_lenient,
)
from pipeline.engines.duckdb.read_errors import first_line
from pipeline.engines.duckdb.steps import compute, rank, run_all
from pipeline.errors import PluginError, SpecError
from pipeline.inputs import checks as check
from pipeline.inputs.format import Load
from pipeline.inputs.formats import after_loading
from pipeline.inputs.loaded_tables import RUN_TABLES
from pipeline.plan.batches import text_size
from pipeline.plan.sql_plan import SqlPlan
from pipeline.progress import Progress, Step, current

__all__ = ["connect", "connection", "execute", "execute_runs", "prepare"]


#: what a closed connection's interrupt() raises: a signal then has nothing to stop
_CLOSED = (duckdb.ConnectionException,)


def connect(plan: SqlPlan) -> duckdb.DuckDBPyConnection:
    """An in-memory connection configured for the plan."""
    return connection(plan.memory_limit, plan.threads)


def connection(memory_limit: str | None, threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with DuckDB's memory limit and threads (the `memory_limit` and
    `threads` settings; DuckDB's defaults where None), that a signal interrupts."""
    # Configuration given as values: never SQL text.
    config: dict = {"memory_limit": memory_limit} if memory_limit else {}
    if threads is not None:
        config["threads"] = threads
    return interrupts.watch(duckdb.connect(config=config), _CLOSED)


def execute(
    plan: SqlPlan,
    con: duckdb.DuckDBPyConnection | None = None,
    progress: Progress | None = None,
) -> duckdb.DuckDBPyConnection:
    """Load and check the files, compute every measure, and return the connection holding the
    tables `per_query` and `aggregate`. Each step is reported to `progress` (by default the one
    installed with `pipeline.progress.observing`, if any)."""
    con = con or connect(plan)
    return _running(con, plan, progress, lambda steps: _everything(con, plan, steps))


def prepare(plan: SqlPlan, con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """The plan's qrels' part on `con`: its tables made, the qrels loaded and checked, the
    statements run (`SqlPlan.setup`: names, query facts; the runs' names and tables too, which
    `execute_runs` makes again)."""
    return _running(con, plan, None, lambda steps: _qrels(con, plan, steps))


def execute_runs(plan: SqlPlan, con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """The plan's runs' part on `con`, whose qrels' tables are the plan's (`prepare`, maybe on
    another cursor of the same database): the runs' tables (`RUN_TABLES`, the plan's runs' `names`
    and `tables`) made in `con`'s schema, then every batch of runs loaded, checked and
    ranked, and the result tables."""
    return _running(con, plan, None, lambda steps: _runs(con, plan, steps, fresh=True))


def _running(con, plan: SqlPlan, progress: Progress | None, part) -> duckdb.DuckDBPyConnection:
    """`part(steps)` on `con`, which a signal stops; out of memory as a SpecError saying what
    to set."""
    con = interrupts.watch(con, _CLOSED)  # a signal stops its query
    steps = _Steps(plan, progress or current())
    try:
        steps.start(con)
        part(steps)
    except duckdb.OutOfMemoryException as exc:
        raise SpecError(_out_of_memory(plan, str(exc))) from None
    finally:
        steps.progress.finished()
    return con


def _everything(con: duckdb.DuckDBPyConnection, plan: SqlPlan, steps: _Steps) -> None:
    _qrels(con, plan, steps)
    _runs(con, plan, steps)


def _qrels(con: duckdb.DuckDBPyConnection, plan: SqlPlan, steps: _Steps) -> None:
    run_all(con, plan.qrels.input_tables)
    for load in plan.qrels.loads:
        steps.report("loading", [load])
        load_files(con, [load])
    steps.report("preparing", plan.qrels.loads)
    with _blaming(con, plan):
        run_all(con, plan.setup)


def _runs(
    con: duckdb.DuckDBPyConnection, plan: SqlPlan, steps: _Steps, fresh: bool = False
) -> None:
    if fresh:
        with _blaming(con, plan):
            run_all(con, [*RUN_TABLES, *plan.runs.names, *plan.runs.tables])
    # Memory holds one batch of runs, not all of them. Each step is reported just before its
    # longest statement, whose progress a display polls.
    runs = plan.runs
    for i, batch in enumerate(runs.batches, 1):
        steps.report("loading", batch, i)
        rows = _load_batch(con, plan, batch)
        check_lines(con, batch)
        note_lenient(con, batch)
        steps.report("checking", batch, i)
        check_duplicates(con, batch)
        run_all(con, after_loading(batch))  # an answer's rows take their run's name
        run_all(con, runs.fusing(batch))  # fused runs, from the rows of their inputs
        run_all(con, [check.record_queries()])
        check_shared_queries(con, [load for load in batch if load.name not in runs.fusion_only])
        check_matches(con, runs, batch)
        check_judged(con, batch)
        load_latency(con, runs.latency_of(batch))
        steps.report("ranking", batch, i)
        rank(con, runs, batch, rows=rows)
    with _blaming(con, plan):
        compute(con, plan.results, lambda kind: steps.report("computing", kind=kind))
        run_all(con, plan.results.outputs)


def _load_batch(con: duckdb.DuckDBPyConnection, plan: SqlPlan, batch: list[Load]) -> Rows | None:
    """A batch of runs into `run_rows`: a large one by pyarrow (its `Rows`, a view), unless the
    spec bounds DuckDB's memory or threads, which pyarrow's rows and threads would escape, or
    the plan changes the batch's rows (fused runs, trec_eval -c's rankings), which a view
    cannot take; else by the exact reading."""
    bounded = plan.memory_limit is not None or plan.threads is not None
    changed = bool(plan.runs.per_batch or plan.runs.fusing(batch))
    rows = None if bounded or changed else read_runs(con, batch)
    if rows is None:
        insert_inputs(con, batch)
    return rows


class _Steps:
    """The executor's steps as told to a `Progress`, each with its share of the work: a file's
    bytes of text when it is loaded, and half a run's again when it is checked and when it is
    ranked (see `pipeline.progress`)."""

    SHARES = {"loading": 2, "checking": 1, "ranking": 1}  # in halves of the bytes

    def __init__(self, plan: SqlPlan, progress: Progress) -> None:
        self.progress = progress
        self.sizes = {load.path: text_size(load, _size(plan, load.path)) for load in plan.loads}
        self.batches = len(plan.runs.batches)
        self.total = sum(self._work("loading", [load]) for load in plan.qrels.loads)
        for batch in plan.runs.batches:
            self.total += sum(self._work(action, batch) for action in self.SHARES)

    def start(self, con: duckdb.DuckDBPyConnection) -> None:
        """DuckDB's progress bar never prints (a display is the caller's); its tracking, which
        `query_progress` reads, is on only when the observer polls it."""
        polls = self.progress.polls
        con.execute(f"SET enable_progress_bar = {'true' if polls else 'false'}")
        if polls:
            con.execute("SET enable_progress_bar_print = false")
        self.progress.started(self.total, lambda: _fraction(con))

    def report(
        self, action: str, loads: Sequence[Load] = (), batch: int = 0, kind: str = ""
    ) -> None:
        """Tell the observer that `action` begins on `loads`, the qrels or the runs of batch
        `batch` (from 1), or on `kind` ("metrics")."""
        kind = kind or ("run" if batch else "qrels")
        names = tuple(load.name for load in loads)
        batches = self.batches if batch else 0
        self.progress.step(Step(action, kind, names, batch, batches, self._work(action, loads)))

    def _work(self, action: str, loads: Sequence[Load]) -> int:
        return sum(self.sizes[load.path] for load in loads) * self.SHARES.get(action, 0) // 2


def _size(plan: SqlPlan, path: Path | str) -> int:
    """An input's bytes: as validated (a table's in memory), else the file's now."""
    if path in plan.runs.sizes:
        return plan.runs.sizes[path]
    try:
        return Path(path).stat().st_size
    except OSError:  # gone since it was validated: loading it says so
        return 0


def _fraction(con: duckdb.DuckDBPyConnection) -> float:
    """How far the connection's running statement has got, 0 to 1; 0 or negative when none
    runs, negative once the connection is closed."""
    try:
        return con.query_progress() / 100
    except duckdb.Error:  # closed (the evaluation ended or was interrupted)
        return -1.0


#: DuckDB's errors for SQL that cannot be compiled: a measure's SQL, when a plugin wrote it wrong
_UNBOUND = (duckdb.BinderException, duckdb.ParserException, duckdb.CatalogException)


@contextmanager
def _blaming(con: duckdb.DuckDBPyConnection, plan: SqlPlan) -> Iterator[None]:
    """SQL that does not bind, as a PluginError naming the metric (and who provides it) whose
    SQL alone does not bind; an internal error if every metric's does."""
    try:
        yield
    except _UNBOUND as exc:
        for probe in plan.results.probes:
            try:
                con.execute(probe.statement.sql, probe.statement.params)
            except _UNBOUND as own:
                m = probe.measure
                raise PluginError(
                    f"metric {m.label!r} ({type(m.measure).__name__}, from {m.provider}): its SQL "
                    f"does not compile: {first_line(str(own))}; fix the measure's per_query or "
                    "missing SQL, or the names it declares in needs()"
                ) from None
        raise exc


def _out_of_memory(plan: SqlPlan, message: str) -> str:
    """DuckDB spills sorts and joins to disk, but each of its threads needs some memory."""
    what = first_line(message)
    if plan.memory_limit:
        return (
            f"settings.memory_limit: {plan.memory_limit} is too little for DuckDB ({what}); "
            "raise it (beyond the limit DuckDB spills to disk, but it needs a few MB per thread)"
        )
    return (
        f"DuckDB ran out of memory ({what}); set settings.memory_limit below the memory free on "
        "this machine, so that DuckDB spills to disk instead"
    )
