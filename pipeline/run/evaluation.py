"""The library's front door: validate a spec, evaluate it, write its outputs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.checks import check_checks
from pipeline.compare import ComparePlan, check_compare, compare_plan
from pipeline.compare.marks import Significance, report_table, significance
from pipeline.errors import SpecError
from pipeline.measures.registry import get_registry
from pipeline.outputs import write_outputs, writer_for, writers_of
from pipeline.plan.compile import Plan, compile_plan, resolve_metrics
from pipeline.plan.output_tables import check_diff_outputs, curve_measures, output_table
from pipeline.pools import finish_pools, pool_outputs, pool_plans, with_pools
from pipeline.run.provenance import inputs_of, now, record, versions
from pipeline.spec import LoadedSpec, load_spec
from pipeline.spec.history import History as SpecHistory
from pipeline.spec.models import is_uri

if TYPE_CHECKING:
    import duckdb

    from pipeline.history import Keeper

__all__ = ["Evaluation", "compile_spec", "evaluate", "validate"]


@dataclass
class Evaluation:
    """The result of evaluating a spec: its plan and the connection holding the result tables."""

    loaded: LoadedSpec
    plan: Plan
    con: duckdb.DuckDBPyConnection
    comparing: ComparePlan | None = None
    keeper: Keeper | None = None  # the history it was recorded in, and which runs it reused
    recorded: dict | None = None  # its provenance, as every output's manifest holds it

    def aggregate(self) -> list[tuple]:
        """Rows (run, collection, metric, value, n_queries) in spec order."""
        return self.con.execute("SELECT * FROM aggregate").fetchall()

    def significance(self) -> Significance | None:
        """The marks of the console summary (and its legend), or None without comparisons."""
        if self.comparing is None:
            return None
        return significance(self.con, self.comparing)

    def history_note(self) -> str | None:
        """What the history kept and reused, in one line; None without a history."""
        keeper = self.keeper
        if keeper is None:
            return None
        runs, reused = len(keeper.keys), len(keeper.reused)
        if self.loaded.spec.settings.engine == "spark":
            reuse = f"all {runs} runs evaluated on Spark (it reuses no results)"
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


def validate(spec: str | Path | LoadedSpec, data: bool = True) -> Plan:
    """Check everything that can be checked without reading data; return the plan.

    With `data=False` no input file is touched, nor its directory listed: keys, metrics and their
    parameters, labels, collections and outputs are checked; a run whose path is a glob pattern
    stays one run named by its key (and runs are not batched by size).
    """
    if not isinstance(spec, LoadedSpec):
        spec = load_spec(spec, patterns="expand" if data else "keep")
    if spec.spec.settings.engine == "spark":
        from pipeline.engines.spark.session import require_pyspark

        require_pyspark(spec.where("settings", "engine"))
    metrics = resolve_metrics(spec, get_registry())
    _check_judged(spec)
    check_compare(spec, metrics, data)
    check_checks(spec, metrics, data)
    sizes = _check_input_files(spec) if data else {}
    _check_outputs(spec)
    if spec.spec.history is not None:
        check_history_directory(spec.spec.history.path, spec.where("history"))
    check_diff_outputs(spec, metrics)
    pool_plans(spec, metrics)
    return compile_plan(spec, metrics, sizes, curve_measures(spec, get_registry()))


def check_pool_inputs(loaded: LoadedSpec) -> dict[Path, int]:
    """What building pools alone reads and writes (`irpipe pool`): every input file, every
    output; the sizes of the inputs."""
    sizes = _check_input_files(loaded)
    _check_outputs(loaded)
    return sizes


def _check_judged(loaded: LoadedSpec) -> None:
    """Every collection with runs to evaluate has qrels (one without is only pooled)."""
    for name, collection in loaded.spec.collections.items():
        runs = [r for r, run in loaded.spec.runs.items() if run.collection == name]
        if collection.qrels is None and runs:
            raise SpecError(
                f"{loaded.where('collections', name)}: no qrels, but runs are evaluated against "
                f"it ({', '.join(runs[:3])}{', ...' if len(runs) > 3 else ''}); add qrels: PATH "
                "once judged (before judging, `irpipe pool SPEC` builds its pools)"
            )


def compile_spec(spec: str | Path) -> Plan:
    """The plan of a spec whose input files need not exist (`irpipe compile`): run patterns are
    expanded where they match files, and stay one run named by their key where nothing matches."""
    return validate(load_spec(spec, patterns="expand_or_keep"), data=False)


def _check_input_files(loaded: LoadedSpec) -> dict[Path, int]:
    """Every input is a regular file (with engine spark, also a directory of part files, or a
    URI, which Spark checks); the sizes in bytes of the files (the plan batches runs by size)."""
    spec = loaded.spec
    spark = spec.settings.engine == "spark"
    inputs = [(("collections", n, "qrels"), c.qrels) for n, c in spec.collections.items()]
    inputs += [(("pools", n, "exclude"), p.exclude) for n, p in spec.pools.items()]
    inputs = [(key, path) for key, path in inputs if path is not None]
    inputs += [(("runs", n, "path"), r.path) for n, r in spec.runs.items()]
    for key, path in inputs:
        if is_uri(path):
            if not spark:
                raise SpecError(
                    f"{loaded.where(*key)}: {path} is a URI, which only the Spark engine reads; "
                    "set settings.engine: spark (or --engine spark), or give a local path"
                )
        elif not (path.is_file() or (spark and path.is_dir())):
            problem = "does not exist" if not path.exists() else "is not a regular file"
            problem = "is a directory" if path.is_dir() else problem
            raise SpecError(f"{loaded.where(*key)}: {path} {problem}")
    return {path: path.stat().st_size for _, path in inputs if not is_uri(path) and path.is_file()}


def _check_outputs(loaded: LoadedSpec) -> None:
    """A writer for every output, the spec's and its pools' (`_check_writer`), no output written
    twice, and no output replacing an input."""
    spec = loaded.spec
    paths = [c.qrels for c in spec.collections.values() if c.qrels is not None]
    paths += [r.path for r in spec.runs.values()]
    paths += [p.exclude for p in spec.pools.values() if p.exclude is not None]
    inputs = {path.resolve() for path in paths if not is_uri(path)}
    seen: dict[Path, str] = {}
    for key, output in _outputs(spec):
        where = loaded.where(*key, "path")
        _check_writer(loaded, key, output)
        target = output.path.resolve()
        if target in inputs or target.with_name(target.name + ".manifest.json") in inputs:
            raise SpecError(
                f"{where}: {output.path} is an input of this spec; writing it would replace the data"
            )
        if target in seen:
            raise SpecError(f"{where}: {output.path} is also {seen[target]}; name each output once")
        seen[target] = ".".join(map(str, key))


def _outputs(spec) -> list[tuple[tuple, object]]:
    """(key, output) of every output: the spec's, then each pool's."""
    found: list[tuple[tuple, object]] = [(("outputs", i), o) for i, o in enumerate(spec.outputs)]
    for name, pool in spec.pools.items():
        found += [(("pools", name, "outputs", i), o) for i, o in enumerate(pool.outputs)]
    return found


def _check_writer(loaded: LoadedSpec, key: tuple, output) -> None:
    """A writer for the output's suffix that writes its level, with what it needs installed
    (a missing optional extra is found here, before any data is read)."""
    where = loaded.where(*key, "path")
    try:
        writer = writer_for(output.path, output.level)
    except SpecError as exc:
        raise SpecError(f"{where}: {exc}") from None
    if output.level not in writer.levels:
        suffix = output.path.suffix.lower()
        able = ", ".join(writers_of(output.level)) or "none installed"
        raise SpecError(
            f"{loaded.where(*key, 'level')}: a {suffix} output cannot be level "
            f"'{output.level}' ({suffix} writes: {', '.join(writer.levels)}); level "
            f"{output.level} is written to: {able}"
        )
    try:
        writer.check_available()
    except SpecError as exc:
        raise SpecError(f"{where}: {exc}") from None


def evaluate(
    spec: str | Path | LoadedSpec,
    write: bool = True,
    history: str | Path | None = None,
    refresh: bool = False,
    remember: bool = True,
    engine: str | None = None,
) -> Evaluation:
    """Validate, evaluate every run with every metric, record the evaluation in the history (the
    spec's, or `history`), and write the spec's outputs. With a history, runs whose results it
    holds under the same key are not evaluated again, unless `refresh` (or on Spark, which
    evaluates every run); `remember=False` leaves the history alone (`irpipe pool` evaluates,
    but is not an evaluation to remember). `engine` replaces the spec's `settings.engine`."""
    from pipeline.engines import execute, with_engine

    started = now()
    loaded = with_engine(spec if isinstance(spec, LoadedSpec) else load_spec(spec), engine)
    plan = validate(loaded)
    from pipeline.engines.duckdb.executor import (
        connect,  # DuckDB is imported only when data is evaluated
    )

    con = connect(plan)
    spark = loaded.spec.settings.engine == "spark"
    inputs, software = _inputs(loaded), versions(loaded.spec.settings.engine)
    keeper = _keeper(loaded, history, refresh or spark) if remember else None
    pools = pool_plans(loaded, plan.metrics)
    if keeper is not None:
        pooled = frozenset(run for pool in pools for run in pool.runs)
        plan = _reusing(loaded, plan, con, keeper, inputs, software, pooled)
    execute(with_pools(plan, loaded, pools) if pools else plan, loaded, con)
    if pools:
        finish_pools(con, loaded, pools, plan.metrics)
    comparing = compare_plan(loaded, plan.metrics)
    if comparing is not None:
        from pipeline.compare.table import (
            compare_runs,  # numpy and scipy: only for specs that compare
        )

        compare_runs(con, comparing, loaded.where("compare"))
    recorded = record(loaded, plan, inputs, started, software)
    if keeper is not None:
        recorded["history"] = str(keeper.path)
        recorded["evaluation_id"] = keeper.record(con, recorded, now())
    if write and (loaded.spec.outputs or pools):
        _write(loaded, plan, con, comparing, recorded, pool_outputs(pools))
    return Evaluation(loaded, plan, con, comparing, keeper, recorded)


def _inputs(loaded: LoadedSpec) -> list:
    """The inputs' provenance; on Spark, a directory or a URI is described by its listing."""
    if loaded.spec.settings.engine != "spark":
        return inputs_of(loaded)
    from pipeline.engines.spark import describe_input

    return inputs_of(loaded, describe_input(loaded))


def _keeper(loaded: LoadedSpec, history: str | Path | None, refresh: bool) -> Keeper | None:
    """The history to use: `history` (the command line's) over the spec's; None without one."""
    from pipeline.history import Keeper

    configured = loaded.spec.history
    where = loaded.where("history")
    if history is not None:  # the spec's lock_timeout still applies, or its default
        configured = SpecHistory(path=Path(history), **_timeout(configured))
        where = "--history"
    if configured is None:
        return None
    check_history_directory(configured.path, where)
    return Keeper(configured.path, configured.lock_timeout, refresh)


def check_history_directory(path: Path, where: str) -> None:
    """A history can be created at `path` (its directories are made, as outputs' are, unless a
    file is in the way); `where` names the key or flag that gave it."""
    for parent in path.resolve().parents:
        if parent.exists():
            if not parent.is_dir():
                raise SpecError(
                    f"{where}: {parent} is a file, not a directory, so the history {path} "
                    "cannot be made; give another path"
                )
            return


def _timeout(configured: SpecHistory | None) -> dict:
    return {} if configured is None else {"lock_timeout": configured.lock_timeout}


def _reusing(
    loaded: LoadedSpec, plan: Plan, con, keeper: Keeper, inputs, software, pooled: frozenset[str]
) -> Plan:
    """The plan without the runs whose results the history holds (copied into `con`); `pooled`
    runs are read whatever it holds (a pool needs their rows)."""
    from pipeline.history.cache import run_keys

    keys = run_keys(loaded, plan, inputs, software)
    collections = {name: run.collection for name, run in loaded.spec.runs.items()}
    reused = keeper.reuse(con, keys, collections, pooled)
    if not reused:
        return plan
    sizes = {Path(i.path): i.size for i in inputs}
    return compile_plan(loaded, plan.metrics, sizes, list(plan.curves), frozenset(reused))


def _write(loaded: LoadedSpec, plan: Plan, con, comparing, recorded: dict, pooled: list) -> None:
    """The spec's outputs and the `pooled` ones (`pool_outputs`), all or none."""
    if any(o.level == "report" for o in loaded.spec.outputs):
        report_table(con, plan.metrics, comparing)
    jobs = [(_table(i, o), o.path, o.level) for i, o in enumerate(loaded.spec.outputs)]
    write_outputs(con, [*jobs, *pooled], recorded)


_TABLES = {
    "query": "per_query",
    "aggregate": "aggregate",
    "comparison": "comparison",
    "report": "report",
}


def _table(index: int, output) -> str:
    """The table output `index` writes."""
    return output_table(index, output) or _TABLES[output.level]
