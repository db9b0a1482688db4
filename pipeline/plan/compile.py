"""Spec + registry -> SqlPlan (its records: `sql_plan.py`): the SQL that loads
the files and computes every measure. Pure, no I/O.

Each measure declares the derived columns it reads (`Measure.needs`); the compiler builds each once
and asks every measure for its SQL over columns bound to what it declared (`measure_sql.py`). The
plan is, for every run and measure at once: the tables around the ranking (`tables.py`: names,
facts from the qrels), the ranking itself (`ranking.py`): every run row (or only the judged ones,
when that suffices) ranked by the `ordering` setting, with every running count the measures need
from one window, aggregated per (run, query) into `wide`, one batch of runs at a time; then the
result tables (`per_query.py`). Measures that outputs need beside the spec's (precision-recall
curves, `output_tables.py`) are ranked in the same pass and get tables of their own. Each
fragment of SQL is built once, and each statement is held by one part of the plan.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

from pipeline.contract.python_measure import PythonMeasure
from pipeline.inputs.format import Load
from pipeline.inputs.formats import qrels_format, run_format
from pipeline.inputs.loaded_tables import input_tables
from pipeline.measures.resolve import columns_of
from pipeline.measures.resolved import ResolvedMeasure
from pipeline.plan.batches import batched
from pipeline.plan.exact_mean import averages_exactly
from pipeline.plan.fusion import Fusion, fusion_statement, kept_rows, with_fusions
from pipeline.plan.latency import latency_loads
from pipeline.plan.measure_sql import CompiledMeasures, compile_measures
from pipeline.plan.missing_rankings import MISSING_RANKING_ROWS
from pipeline.plan.output_tables import curve_names, output_table, output_tables
from pipeline.plan.overlays import overlay_statements
from pipeline.plan.per_query import per_query_options, result_tables
from pipeline.plan.ranking import given_sql, ordering, ranked_sql
from pipeline.plan.sql_plan import (
    Probe,
    PythonMetric,
    QrelsPart,
    Ranking,
    ResultsPart,
    RunsPart,
    SqlPlan,
)
from pipeline.plan.statistics import aggregated_statistics
from pipeline.plan.suite_tables import suite_tables
from pipeline.plan.tables import (
    name_tables,
    probes,
    renamed_runs,
    run_names,
    run_setup_tables,
    setup_tables,
    wide_sql,
)
from pipeline.spec import LoadedSpec, Settings
from pipeline.spec.inputs import run_inputs
from pipeline.spec.levels import level_of
from pipeline.sql import Statement

__all__ = ["compile_plan"]


def compile_plan(
    loaded: LoadedSpec,
    metrics: list[ResolvedMeasure],
    sizes: dict[Path, int] | None = None,
    curves: list[ResolvedMeasure] | None = None,
    diffs: dict[int, ResolvedMeasure] | None = None,
) -> SqlPlan:
    """The plan for a validated spec and its resolved metrics; `sizes` (bytes of each input file,
    when known) decide how runs are batched; `curves`: the measures of its precision-recall
    outputs (`output_tables.curve_measures`), computed after the metrics in the same pass;
    `diffs`: the metric of each difference output (`output_tables.check_diff_outputs`)."""
    settings, curves, sizes = loaded.spec.settings, curves or [], dict(sizes or {})
    everything = [*metrics, *curves]
    compiled = compile_measures(everything, settings)
    # When only judged documents' positions matter, only judged rows are ranked; a query with no
    # judged document retrieved then has its `missing` value (over the ranking's length). A
    # metric over the condensed ranking needs every answered query in `wide` (`empty_sql`).
    judged_rows = (
        not compiled.can_empty
        and compiled.condensed is None
        and not compiled.req.has("tie")  # a tie counts the unjudged rows in it too
        and all(m.measure.judged_only_ok(m.params) for m in everything)
    )
    missing_rankings = settings.missing_queries == "trec_eval_c" and settings.query_set == "qrels"
    full = _ranked(compiled, settings)  # every row ranked: what the probes read
    ranking, wide = _ranking(compiled, settings, judged_rows, full)
    apart = any(len(run.collections) > 1 for run in loaded.spec.runs.values())
    ranking = replace(ranking, apart=apart)
    exact = averages_exactly(everything)
    statistics = aggregated_statistics(metrics)
    options = per_query_options(
        compiled, settings, judged_rows, missing_rankings, exact, statistics
    )
    fusions = _fusions(loaded)
    return SqlPlan(
        memory_limit=settings.memory_limit,
        threads=settings.threads,
        qrels=QrelsPart(
            input_tables=tuple(input_tables(settings.grades)),
            loads=_qrels(loaded),
            names=(*name_tables(loaded, metrics), *curve_names(len(metrics), curves)),
            statements=[
                *overlay_statements(loaded.spec),
                *setup_tables(compiled.req, missing_rankings),
            ],
        ),
        runs=RunsPart(
            names=tuple(run_names(loaded)),
            tables=tuple(run_setup_tables(wide, missing_rankings)),
            batches=with_fusions(batched(_runs(loaded), sizes), fusions),
            sizes=sizes,
            per_batch=MISSING_RANKING_ROWS if missing_rankings else [],
            ranking=ranking,
            fusions=fusions,
            missing_rankings=missing_rankings,
            unmatched_runs_fail=settings.unmatched_runs == "error",
            latency=latency_loads(loaded),
        ),
        results=ResultsPart(
            metrics=metrics,
            curves=tuple(curves),
            python=_python(everything, settings),
            finish=[*result_tables(options, len(metrics)), *renamed_runs(loaded, bool(curves))],
            finish_reusing=tuple(result_tables(replace(options, cached=True), len(metrics))),
            outputs=(*output_tables(loaded, diffs or {}, metrics), *suite_tables(loaded.spec)),
            probes=tuple(
                Probe(m, s) for m, s in zip(everything, probes(compiled, full), strict=True)
            ),
        ),
    )


def _qrels(loaded: LoadedSpec) -> list[Load]:
    """The qrels files, one per collection (a collection not yet judged has runs only to pool;
    an overlay's qrels are built from its sets' once they are loaded, `overlays`)."""
    spec, settings = loaded.spec, loaded.spec.settings
    return [
        Load(c.qrels_file, name, qrels_format(c.format, settings.input, settings.grades))
        for name, c in spec.collections.items()
        if c.qrels_file is not None
    ]


def _runs(loaded: LoadedSpec) -> list[Load]:
    """The run files, in spec order (fused runs are computed from them)."""
    spec, settings = loaded.spec, loaded.spec.settings
    ranked = settings.ordering == "rank"
    runs = spec.file_runs()
    return [
        Load(f.path, f.loaded_as, run_format(settings.input, ranked, runs[f.run].format),
             f.collections)
        for f in run_inputs(runs)
    ]  # fmt: skip


def _ranking(
    compiled: CompiledMeasures, settings: Settings, judged_rows: bool, full: str
) -> tuple[Ranking, str]:
    """How each batch is ranked into `wide`, and `wide`'s SQL: over the judged rows alone when
    they suffice (then over every row, `full`, for a batch of mostly judged queries, and over
    rows ranked before they reach the engine, `given`, for the Python door's loop), else over
    every row."""
    req = compiled.req
    ranked = _ranked(compiled, settings, judged_rows=True) if judged_rows else full
    wide = wide_sql(compiled.measures, ranked, req)
    dense = wide_sql(compiled.measures, full, req) if judged_rows else None
    statement = Statement(f"INSERT INTO wide {wide}")
    if dense is None:
        return Ranking(statement, full=True), wide
    given = Statement(
        f"CREATE TABLE wide AS {wide_sql(compiled.measures, given_sql(req, settings), req)}"
    )
    dense_statement = Statement(f"INSERT INTO wide {dense}")
    return Ranking(statement, dense_statement, given=given, order=ordering(settings)), wide


def _ranked(compiled: CompiledMeasures, settings: Settings, judged_rows: bool = False) -> str:
    """The ranking's CTEs (`ranking.ranked_sql`): every row's, or only the judged rows' when
    they suffice; and the condensed ranking when a metric reads it, its rows carrying the
    columns of `facts` (the qrels' facts, and the subtopic judgments')."""
    facts = (*compiled.req.of_kind("fact"), *compiled.req.of_kind("subtopic_fact"))
    return ranked_sql(compiled.ranked, settings, judged_rows, compiled.condensed, facts)


def _fusions(loaded: LoadedSpec) -> tuple[Fusion, ...]:
    """Each fused run of the spec, with the SQL of its rows (and of their copies that its `run`
    outputs write)."""
    spec, keys = loaded.spec, ordering(loaded.spec.settings)
    found = []
    for name, inputs in spec.fused_inputs().items():
        run = spec.runs[name]
        build = partial(fusion_statement, name, inputs, run.method, run.normalization, run.k,
                        run.depth, keys, ranks=spec.settings.ordering == "rank")  # fmt: skip
        kept = [kept_rows(output_table(i, o), name) for i, o in enumerate(spec.outputs)
                if level_of(o.level).is_run_file and o.run == name]  # fmt: skip
        found.append(Fusion(name, tuple(r for r, _ in inputs), (build(), *kept), bool(kept),
                            build if run.tune else None))  # fmt: skip
    return tuple(found)


def _python(metrics: list[ResolvedMeasure], settings: Settings) -> tuple[PythonMetric, ...]:
    """Each metric computed in Python."""
    c = columns_of(settings)
    return tuple(
        PythonMetric(i, m, c.level(m.params))
        for i, m in enumerate(metrics)
        if isinstance(m.measure, PythonMeasure)
    )
