"""Spec + registry -> SqlPlan: the SQL that loads the files and computes every measure. Pure, no I/O.

Each measure declares the derived columns it reads (`Measure.needs`); the compiler builds each once
and asks every measure for its SQL over columns bound to what it declared. The plan is, for every
run and measure at once: the tables around the ranking (`tables.py`: facts from the qrels, then
per_query and aggregate), and the ranking itself (`ranking.py`): every run row (or only the judged
ones, when that suffices) ranked by the `ordering` setting, with every running count the measures
need from one window, aggregated per (run, query) into `wide`, one batch of runs at a time.
Measures that outputs need beside the spec's (precision-recall curves, `derived.py`) are ranked in
the same pass and get tables of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from pipeline.contract.python_measure import PythonMeasure
from pipeline.measures.registry import ResolvedMeasure
from pipeline.measures.resolve import columns_of
from pipeline.plan.batches import batched
from pipeline.plan.fusion import Fusion, fusion_statement, kept_rows, with_fusions
from pipeline.plan.inputs import (
    INPUT_TABLES,
    RUN_ROWS,
    Load,
    general_lines,
    insert_lines,
    qrels_format,
    run_format,
)
from pipeline.plan.measure_sql import CompiledMeasures, compile_measures
from pipeline.plan.missing_rankings import BOGUS_ROWS
from pipeline.plan.output_tables import curve_names, output_table, output_tables
from pipeline.plan.per_query import per_query_options, result_tables
from pipeline.plan.ranking import (
    PUT_BACK,
    SET_ASIDE,
    SLICE_ROWS,
    mostly_judged,
    ordering,
    ranked_sql,
    slice_bounds,
    slice_rows,
)
from pipeline.plan.statement import Statement
from pipeline.plan.table_inputs import TABLE_COLUMNS, insert_rows, is_table_input
from pipeline.plan.tables import (
    name_tables,
    probes,
    run_names,
    run_setup_tables,
    setup_tables,
    wide_sql,
)
from pipeline.spec import LoadedSpec, Settings

__all__ = [
    "SqlPlan",
    "Ranking",
    "compile_plan",
]


@dataclass(frozen=True)
class SqlPlan:
    """Everything needed to evaluate a spec, in order: the `qrels` loads and `statements` (tables
    of names, query facts); then, one batch of runs at a time, its loads, `per_batch` and its
    `ranking` (rank it into `wide`, then drop its rows, so memory holds one batch); then `finish`
    (per-query and aggregate tables) and `outputs` (the tables that outputs read beside those).
    Runs in `cached` are not loaded: their per-query values are read from the table
    `cached_values` (filled from the history before the plan runs) into the per-query tables
    (`reusing`). `missing_rankings` states trec_eval -c's mode: each run gets an empty ranking for
    every qrels query it lacks (`per_batch` adds those rows, which trec_eval calls bogus), so an
    engine that splits the work adds them per shard without reading the plan's SQL."""

    qrels: list[Load]
    batches: list[list[Load]]
    statements: list[Statement]
    per_batch: list[Statement]  # after a batch is loaded, before it is ranked (none by default)
    ranking: Ranking
    finish: list[Statement]
    metrics: list[ResolvedMeasure]
    memory_limit: str | None = None  # DuckDB's memory_limit for the connection (`settings`)
    #: (ordinal, measure, relevance level) of each metric computed in Python once every batch
    #: is ranked
    python: tuple[tuple[int, ResolvedMeasure, int], ...] = ()
    #: per metric, statements that bind its SQL alone over empty tables: run when the plan's SQL
    #: does not bind, to say which metric's SQL is at fault
    probes: tuple[tuple[ResolvedMeasure, Statement], ...] = ()
    #: measures computed for the outputs beside the spec's metrics (precision-recall levels);
    #: their values go to curve_per_query and curve_aggregate, never to per_query or aggregate
    curves: tuple[ResolvedMeasure, ...] = ()
    outputs: tuple[Statement, ...] = ()  # curve and difference tables, from the result tables
    cached: frozenset[str] = frozenset()  # runs whose per-query values come from the history
    missing_rankings: bool = False  # trec_eval -c: an empty ranking for each query a run lacks
    #: bytes of each input file, which decide how runs are batched (`reusing` batches again)
    sizes: dict[Path, int] = field(default_factory=dict)
    #: `finish` when some runs' values come from the history (`reusing`)
    finish_reusing: tuple[Statement, ...] = ()
    #: those of `statements` that depend on the runs: their names, and the empty tables their
    #: rankings fill. A session that evaluates one run after another against the same qrels makes
    #: these anew for each, beside `inputs.RUN_TABLES` (`pipeline.engines.duckdb.session`).
    run_tables: tuple[Statement, ...] = ()
    #: the fused runs, each computed in the batch that holds its inputs (`plan.fusion`)
    fusions: tuple[Fusion, ...] = ()
    #: runs loaded only to be fused (the history holds their own values): dropped once fused
    fusion_only: frozenset[str] = frozenset()

    def reusing(self, cached: frozenset[str]) -> SqlPlan:
        """The plan without loading the `cached` runs, whose per-query values the history
        holds (but those a fused run that is not cached needs, loaded to be fused only): the
        other runs batched as before, and the result tables reading `cached_values`."""
        if not cached:
            return self
        fusions = tuple(f for f in self.fusions if f.name not in cached)
        needed = {name for f in fusions for name in f.inputs}
        runs = [load for batch in self.batches for load in batch
                if load.name not in cached or load.name in needed]  # fmt: skip
        batches = with_fusions(batched(runs, self.sizes), fusions)
        return replace(self, batches=batches, finish=list(self.finish_reusing), cached=cached,
                       fusions=fusions, fusion_only=frozenset(needed & cached))  # fmt: skip

    def fusing(self, batch: list[Load]) -> list[Statement]:
        """Once a batch is loaded and checked: its fused runs' rows, then the removal of the
        runs loaded only to be fused."""
        names = {load.name for load in batch}
        found = [s for f in self.fusions if set(f.inputs) <= names for s in f.statements]
        only = sorted(names & self.fusion_only)
        if only:
            found.append(Statement("DELETE FROM run_rows WHERE list_contains(?, run)", [only]))
        return found

    @property
    def loads(self) -> list[Load]:
        """Every input file: the qrels, then the runs in spec order."""
        return [*self.qrels, *(load for batch in self.batches for load in batch)]

    def sql_text(self) -> str:
        """The whole plan as SQL text, parameters shown in comments (`irpipe compile`)."""
        parts = [_show(s) for s in INPUT_TABLES]
        parts += [_show_load([load]) for load in self.qrels]
        parts += [_show(s) for s in self.statements]
        for batch in self.batches:
            parts += [_show_load(batch), *(_show(s) for s in self.fusing(batch))]
            parts += [_show(s) for s in self.per_batch]
            parts += _show_ranking(self.ranking, batch)
        parts += [_show(s) for s in (*self.finish, *self.outputs)]
        return "\n\n".join(parts) + "\n"


@dataclass(frozen=True)
class Ranking:
    """How a loaded batch is ranked into `wide`, then dropped: `statement`, or `dense` (the full
    plan) when the judged-rows plan is chosen but the batch's queries are mostly judged, where
    sorting every row once is cheaper than finding judged rows' ranks (`ranking.mostly_judged`).
    The full plan (`dense`, or `statement` when `full`) ranks a large batch in slices of whole
    queries (`ranking.slice_bounds`), so that its sort holds one slice of rows at a time."""

    statement: Statement
    dense: Statement | None = None
    after: tuple[Statement, ...] = (Statement("DROP TABLE run_rows"), RUN_ROWS)
    full: bool = False  # `statement` is the full plan

    def test(self, batch: list[Load]) -> Statement | None:
        """SQL whose one value says whether the batch takes `dense`, or None if there is no
        choice."""
        return None if self.dense is None else Statement(mostly_judged(), [_names(batch)])

    def chosen(self, dense: bool) -> tuple[Statement, bool]:
        """The statement that ranks a batch (`dense` if the test said so), and whether it is the
        full plan, which ranks a large batch in slices."""
        return (self.dense, True) if dense and self.dense else (self.statement, self.full)

    @staticmethod
    def slices(batch: list[Load]) -> Statement:
        """SQL whose one value is the list of the first qids of the slices the full plan ranks
        the batch in (`ranking.slice_bounds`)."""
        return Statement(slice_bounds(), [_names(batch)])


def _names(batch: list[Load]) -> list[str]:
    return [load.name for load in batch]


def _show_ranking(ranking: Ranking, batch: list[Load]) -> list[str]:
    parts = [_show(ranking.statement)]
    test = ranking.test(batch)
    if test is not None:
        parts = [f"-- if this is false:\n{_show(test)}", *parts]
        parts.append(f"-- else, the batch's queries being mostly judged:\n{_show(ranking.dense)}")
    if ranking.full or ranking.dense is not None:
        parts.append(_show_slices(ranking, batch))
    return [*parts, *(_show(s) for s in ranking.after)]


def _show_slices(ranking: Ranking, batch: list[Load]) -> str:
    """How the full plan ranks a batch of more than SLICE_ROWS rows: in slices of queries."""
    first, last = (
        Statement(slice_rows(False), ["<first qid>", "<next slice's first qid>"]),
        Statement(slice_rows(True), ["<last slice's first qid>"]),
    )
    steps = [Statement(SET_ASIDE), first, last, Statement(PUT_BACK)]
    shown = "\n".join(_show(step) for step in [ranking.slices(batch), *steps])
    return (
        f"-- the full plan ranks a batch of more than {SLICE_ROWS} rows in slices of whole "
        "queries: the first qid of each slice, the rows set aside, then for each slice its rows "
        "as run_rows and the ranking above, then the rows put back:\n" + shown
    )


def _show_load(loads: list[Load]) -> str:
    tables = [load for load in loads if is_table_input(load.path)]
    texts = [load for load in loads if not is_table_input(load.path)]
    shown = []
    if tables:  # every column shown; a run without a rank column reads NULL for it
        columns = [set(TABLE_COLUMNS[load.table]) for load in tables]
        shown.append(f"-- the table inputs:\n{_show(insert_rows(tables, columns))}")
    if texts:
        general = "-- for each file with lines the fast pass cannot split, as for the first:"
        shown.append(f"{_show(insert_lines(texts))}\n\n{general}\n{_show(general_lines(texts[0]))}")
    return "\n\n".join(shown)


def _show(statement: Statement) -> str:
    sql = "\n".join(line.rstrip() for line in statement.sql.strip("\n").splitlines())
    params = f"-- parameters: {statement.params!r}\n" if statement.params else ""
    return f"{params}{sql};"


def compile_plan(
    loaded: LoadedSpec,
    metrics: list[ResolvedMeasure],
    sizes: dict[Path, int] | None = None,
    curves: list[ResolvedMeasure] | None = None,
) -> SqlPlan:
    """The plan for a validated spec and its resolved metrics; `sizes` (bytes of each input file,
    when known) decide how runs are batched; `curves`: the measures of its precision-recall
    outputs (`output_tables.curve_measures`), computed after the metrics in the same pass."""
    spec, settings = loaded.spec, loaded.spec.settings
    curves = curves or []
    everything = [*metrics, *curves]
    qrels = [
        Load(c.qrels, name, qrels_format(settings.input))
        for name, c in spec.collections.items()
        if c.qrels is not None  # a collection not yet judged has runs only to pool
    ]
    runs_format = run_format(settings.input, settings.ordering == "rank")
    runs = [Load(r.path, n, runs_format, r.collection) for n, r in spec.file_runs().items()]
    fusions = _fusions(loaded)
    sql = compile_measures(everything, settings)
    # When only judged documents' positions matter, only judged rows are ranked; a query with no
    # judged document retrieved then has its `missing` value (over the ranking's length).
    judged_rows = not sql.can_empty and all(m.measure.judged_only_ok(m.params) for m in everything)
    bogus = settings.missing_queries == "trec_eval_c" and settings.query_set == "qrels"
    options = per_query_options(sql, settings, judged_rows, bogus)
    wide = wide_sql(sql.measures, ranked_sql(sql.req, settings, judged_rows), sql.req)
    return SqlPlan(
        qrels,
        with_fusions(batched(runs, sizes or {}), fusions),
        [
            *name_tables(loaded, metrics),
            *curve_names(len(metrics), curves),
            *setup_tables(sql.req, bogus),
            *run_setup_tables(wide, bogus),
        ],
        BOGUS_ROWS if bogus else [],
        _ranking(sql, settings, judged_rows),
        result_tables(options, len(metrics)),
        metrics,
        settings.memory_limit,
        _python(everything, settings),
        tuple(zip(everything, probes(sql, ranked_sql(sql.req, settings)), strict=True)),
        tuple(curves),
        tuple(output_tables(loaded, metrics)),
        missing_rankings=bogus,
        sizes=dict(sizes or {}),
        finish_reusing=tuple(result_tables(replace(options, cached=True), len(metrics))),
        run_tables=(*run_names(loaded), *run_setup_tables(wide, bogus)),
        fusions=fusions,
    )


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
                if o.level == "run" and o.run == name]  # fmt: skip
        found.append(Fusion(name, tuple(r for r, _ in inputs), (build(), *kept), bool(kept),
                            build if run.tune else None))  # fmt: skip
    return tuple(found)


def _python(metrics: list[ResolvedMeasure], settings: Settings) -> tuple:
    """(ordinal, measure, relevance level) of each metric computed in Python."""
    c = columns_of(settings)
    return tuple(
        (i, m, c.level(m.params))
        for i, m in enumerate(metrics)
        if isinstance(m.measure, PythonMeasure)
    )


def _ranking(sql: CompiledMeasures, settings: Settings, judged_rows: bool) -> Ranking:
    wide = wide_sql(sql.measures, ranked_sql(sql.req, settings, judged_rows), sql.req)
    dense = wide_sql(sql.measures, ranked_sql(sql.req, settings), sql.req) if judged_rows else None
    return Ranking(
        Statement(f"INSERT INTO wide {wide}"),
        Statement(f"INSERT INTO wide {dense}") if dense else None,
        full=not judged_rows,
    )
