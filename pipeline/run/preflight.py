"""Everything checked before any data is read, and the evaluation plan it builds.

`validate` is `irpipe validate` and the first step of every evaluation: keys, metrics and their
parameters, comparisons, checks, pools, input files and outputs, each error naming the file and
the key. What it resolves on the way is kept, once, in the `EvaluationPlan` it returns.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.errors import SpecError
from pipeline.measures.registry import Registry, get_registry
from pipeline.measures.resolve import check_needs, resolve_metric, resolve_metrics
from pipeline.measures.resolved import ResolvedMeasure
from pipeline.outputs import writer_for, writers_of
from pipeline.plan.compile import compile_plan
from pipeline.plan.output_tables import (
    check_diff_outputs,
    curve_measures,
    output_table,
    per_run_table,
)
from pipeline.run.evaluation_plan import EvaluationPlan, OutputJob
from pipeline.run.input_files import check_input_files, with_datasets, with_qrels_formats
from pipeline.run.latency_inputs import check_latency, with_latency_units
from pipeline.run.sections import (
    agreement_section,
    check_needed_sections,
    checks_plan,
    compare_section,
    discrimination_section,
    pool_jobs,
    pools_of,
    reproduction_section,
    tunings,
)
from pipeline.run.writes import check_writes
from pipeline.spec import LoadedSpec, load_spec
from pipeline.spec.levels import level_of
from pipeline.spec.outputs import run_files

__all__ = ["check_history_directory", "check_pool_inputs", "compile_spec", "validate"]


def validate(spec: str | Path | LoadedSpec, data: bool = True) -> EvaluationPlan:
    """Check everything that can be checked without reading data; return the evaluation's plan.

    With `data=False` no input file is touched, nor its directory listed: keys, metrics and their
    parameters, labels, collections and outputs are checked; a run whose path is a glob pattern
    stays one run named by its key (and runs are not batched by size).
    """
    if not isinstance(spec, LoadedSpec):
        spec = load_spec(spec, patterns="expand" if data else "keep")
    if spec.spec.settings.engine == "spark":
        # Evaluating needs pyspark; checking the spec alone, or compiling it, runs no Spark.
        if data:
            from pipeline.engines.spark.session import require_pyspark

            require_pyspark(spec.where("settings", "engine"))
        _no_fusion_on_spark(spec)
    registry = get_registry()
    metrics = resolve_metrics(spec, registry)
    check_latency(spec, metrics)
    tuned = _check_tuning(spec, registry, data)
    _check_judged(spec)
    check_needed_sections(spec)
    comparing = compare_section(spec, metrics, data)
    agreement = agreement_section(spec, metrics, data)
    discriminating = discrimination_section(spec, metrics, data)
    reproduction = reproduction_section(spec, metrics, data)
    checks = checks_plan(spec, metrics, comparing, data, agreement)
    spec = with_latency_units(with_qrels_formats(with_datasets(spec))) if data else spec
    sizes = check_input_files(spec) if data else {}
    _check_outputs(spec)
    if spec.spec.history is not None:
        check_history_directory(spec.spec.history.path, spec.where("history"))
        _check_dashboard(spec)
    diffs = check_diff_outputs(spec, metrics, registry)
    pools = pools_of(spec, metrics)
    sql = compile_plan(spec, metrics, sizes, curve_measures(spec, registry), diffs)
    return EvaluationPlan(spec, sql, comparing, checks, pools, _output_jobs(spec, pools),
                          spec.spec.history, tunings(spec, tuned, sizes), agreement,
                          discriminating, reproduction)  # fmt: skip


def check_pool_inputs(loaded: LoadedSpec) -> dict[Path, int]:
    """What building pools alone reads and writes (`irpipe pool`): every input file, every
    output; the sizes of the inputs."""
    sizes = check_input_files(loaded)
    _check_outputs(loaded)
    return sizes


def _check_judged(loaded: LoadedSpec) -> None:
    """Every collection with runs to evaluate has qrels (one without is only pooled)."""
    for name, collection in loaded.spec.collections.items():
        runs = [r for r, run in loaded.spec.runs.items() if name in run.collections]
        if collection.qrels is None and runs:
            raise SpecError(
                f"{loaded.where('collections', name)}: no qrels, but runs are evaluated against "
                f"it ({', '.join(runs[:3])}{', ...' if len(runs) > 3 else ''}); add qrels: PATH "
                "once judged (before judging, `irpipe pool SPEC` builds its pools)"
            )


def compile_spec(spec: str | Path) -> EvaluationPlan:
    """The plan of a spec whose input files need not exist (`irpipe compile`): run patterns are
    expanded where they match files, and stay one run named by their key where nothing matches."""
    return validate(load_spec(spec, patterns="expand_or_keep"), data=False)


def _check_outputs(loaded: LoadedSpec) -> None:
    """A writer for every output, the spec's and its pools' (`_check_writer`); then every path
    the evaluation writes kept apart from its inputs and from each other, and replacing only
    what irpipe wrote (`pipeline.run.writes`)."""
    for key, output in _outputs(loaded.spec):
        _check_writer(loaded, key, output)
    check_writes(loaded)


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


def _check_tuning(loaded: LoadedSpec, registry: Registry, data: bool) -> dict[str, ResolvedMeasure]:
    """Each tuned fused run's metric, resolved (by run name): one measure with one value per
    query, by which runs are better or worse (weights best by a count would mean nothing), that
    the run's collection has the fields of; and numpy, which chooses the weights, installed
    (for an evaluation: `data`)."""
    tunes = {name: run.tune for name, run in loaded.spec.runs.items() if getattr(run, "tune", None)}
    resolved = {
        name: _tune_metric(loaded, registry, name, tune.metric) for name, tune in tunes.items()
    }
    if data and tunes and not _installed("numpy"):
        raise SpecError(
            f"{loaded.where('runs', next(iter(tunes)), 'tune')}: tuning the weights needs "
            "numpy, which is not installed: pip install 'irpipe[arrays]'"
        )
    return resolved


def _tune_metric(loaded: LoadedSpec, registry: Registry, name: str, metric: str) -> ResolvedMeasure:
    """The metric tuned run `name`'s weights are chosen by, resolved and checked."""
    where = loaded.where("runs", name, "tune", "metric")
    try:
        found = resolve_metric(registry, metric)
    except SpecError as exc:
        raise SpecError(f"{where}: {exc}") from None
    if len(found) != 1 or found[0].measure.kind != "number":
        raise SpecError(f"{where}: {metric!r} is not one metric of numbers; give one")
    if found[0].better is None:
        raise SpecError(
            f"{where}: runs are not better or worse by {metric!r} (a count or a "
            "diagnostic); tune by a metric of quality, such as AP"
        )
    check_needs(loaded, found, set(loaded.spec.runs[name].collections))
    return found[0]


def _no_fusion_on_spark(loaded: LoadedSpec) -> None:
    """Fused runs are computed by the DuckDB engine's batches; Spark shards queries."""
    fused = list(loaded.spec.fused_inputs())
    if fused:
        raise SpecError(
            f"{loaded.where('runs', fused[0])}: fused runs are computed by the duckdb engine; "
            "evaluate this spec with settings.engine: duckdb (or write the fused run with a "
            "`level: run` output first, and evaluate that file on Spark)"
        )


def _check_dashboard(loaded: LoadedSpec) -> None:
    """A dashboard to write after the evaluation needs its extra: said before any data is read."""
    if loaded.spec.history.dashboard is not None and not _installed("vl_convert"):
        raise SpecError(
            f"{loaded.where('history', 'dashboard')}: writing the dashboard needs the dashboard "
            "extra: pip install 'irpipe[dashboard]'"
        )


def _output_jobs(loaded: LoadedSpec, pools: tuple) -> tuple[OutputJob, ...]:
    """Every file to write: the spec's outputs (a per-run output's file for each run), then its
    pools'."""
    jobs = []
    for i, output in enumerate(loaded.spec.outputs):
        if level_of(output.level).is_per_run:
            files = run_files(output, loaded.spec.runs, loaded.where("outputs", i, "path"))
            jobs += [
                OutputJob(per_run_table(i, j), f.path, output.level) for j, f in enumerate(files)
            ]
        else:
            jobs.append(OutputJob(_table(i, output), output.path, output.level))
    return (*jobs, *pool_jobs(pools))


#: the suffixes of the text outputs, which write the agreement's counts as integers
_TEXT_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson")


def _table(index: int, output) -> str:
    """The table output `index` writes (the agreement's text outputs: its view as text)."""
    record = level_of(output.level)
    if record.text_view and output.path.suffix.lower() in _TEXT_SUFFIXES:
        from pipeline.agreement.sql import AGREEMENT_TEXT

        return AGREEMENT_TEXT
    return output_table(index, output) or record.table


def _installed(module: str) -> bool:
    """Whether `module` can be imported, without importing it."""
    from importlib.util import find_spec

    try:
        return find_spec(module) is not None
    except ImportError:  # a finder that refuses it raises rather than answering None
        return False
