"""The SQL plan's records: `SqlPlan`, everything an engine needs to evaluate a spec, in three
parts that an engine runs in order (`QrelsPart`, `RunsPart`, `ResultsPart`), and what they hold
(`Ranking`, `PythonMetric`, `Probe`). `pipeline.plan.compile` builds them. Pure, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from pipeline.inputs.format import Load
from pipeline.inputs.loaded_tables import RUN_ROWS
from pipeline.measures.resolved import ResolvedMeasure
from pipeline.plan.batches import batched
from pipeline.plan.exact_mean import averages_exactly
from pipeline.plan.fusion import Fusion, with_fusions
from pipeline.plan.ranking import SortKey, mostly_judged
from pipeline.plan.slices import slice_bounds
from pipeline.plan.sql_text import plan_text
from pipeline.plan.statistics import aggregated_statistics
from pipeline.sql import Statement

__all__ = [
    "Probe",
    "PythonMetric",
    "QrelsPart",
    "Ranking",
    "ResultsPart",
    "RunsPart",
    "SqlPlan",
]


@dataclass(frozen=True)
class PythonMetric:
    """A metric computed in Python once every batch is ranked: its column of `wide` (`m` and
    its ordinal), the measure, and the relevance level it is computed at."""

    ordinal: int
    measure: ResolvedMeasure
    level: int | float


class Probe(NamedTuple):
    """A metric, and a statement that binds its SQL alone over empty tables: run when the plan's
    SQL does not bind, to say which metric's SQL is at fault. A pair too, (measure, statement),
    as the history's cache key reads it."""

    measure: ResolvedMeasure
    statement: Statement


@dataclass(frozen=True, kw_only=True)
class QrelsPart:
    """The qrels' part of a plan, made once before any run is read: the `input_tables` made (the
    qrels' grades typed by the `grades` setting), the qrels' files loaded (`loads`), then (with
    the runs' names and tables, `SqlPlan.setup`) the `names` and the qrels' tables
    (`statements`)."""

    input_tables: tuple[Statement, ...]  # the empty tables the inputs are loaded into
    loads: list[Load]  # the qrels' files, one per collection judged
    #: the names of the collections and the metrics (and the curves' metrics), as bound values
    names: tuple[Statement, ...]
    #: the overlays' qrels and the tables from the qrels (query facts, ideal rankings); a
    #: feature adds its own tables made before any run is read here (the pools')
    statements: list[Statement]


@dataclass(frozen=True, kw_only=True)
class RunsPart:
    """The runs' part of a plan, one batch of runs at a time: its loads, its fused runs
    (`fusing`), then `per_batch` and its `ranking` (rank it into `wide`, then drop its rows, so
    memory holds one batch). The table `runs` (`names`) and the empty tables the rankings fill
    (`tables`) are made before the first batch (`SqlPlan.setup`); a session that evaluates one
    run after another against the same qrels makes them anew for each, beside
    `loaded_tables.RUN_TABLES` (`pipeline.engines.duckdb.session`).

    `missing_rankings` states trec_eval -c's mode: each run gets a one-document ranking for
    every qrels query it lacks (`per_batch` adds those rows), so an engine that splits the work
    adds them per shard without reading the plan's SQL. Runs in `cached` are not loaded: their
    per-query values are read from the table `cached_values` (filled from the history before
    the plan runs) into the per-query tables (`SqlPlan.reusing`)."""

    names: tuple[Statement, ...]  # the table `runs`: each run's ordinal, name, collection
    tables: tuple[Statement, ...]  # the empty tables the rankings fill (`wide`, ...)
    batches: list[list[Load]]
    #: bytes of each input file, which decide how runs are batched (`reusing` batches again)
    sizes: dict[Path, int]
    per_batch: list[Statement]  # after a batch is loaded, before it is ranked (none by default)
    ranking: Ranking
    #: the fused runs, each computed in the batch that holds its inputs (`plan.fusion`)
    fusions: tuple[Fusion, ...]
    #: runs loaded only to be fused (the history holds their own values): dropped once fused
    fusion_only: frozenset[str] = frozenset()
    missing_rankings: bool  # trec_eval -c: a one-document ranking for each query a run lacks
    #: whether a run that retrieves no judged document is an input error (`unmatched_runs`)
    unmatched_runs_fail: bool = True
    cached: frozenset[str] = frozenset()  # runs whose per-query values come from the history
    #: the runs' latency inputs (`plan.latency`), each loaded with its run's batch
    latency: tuple[Load, ...] = ()

    def latency_of(self, batch: list[Load]) -> list[Load]:
        """The latency inputs of a batch's runs."""
        names = {load.name for load in batch}
        return [load for load in self.latency if load.name in names]

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
        """Every run file, batch by batch."""
        return [load for batch in self.batches for load in batch]


@dataclass(frozen=True, kw_only=True)
class ResultsPart:
    """The results' part of a plan, once every batch is ranked: the `python` metrics, then
    `finish` (the per-query and aggregate tables) and `outputs` (the tables that outputs read
    beside those)."""

    metrics: list[ResolvedMeasure]
    #: measures computed for the outputs beside the spec's metrics (precision-recall levels);
    #: their values go to curve_per_query and curve_aggregate, never to per_query or aggregate
    curves: tuple[ResolvedMeasure, ...]
    python: tuple[PythonMetric, ...]  # metrics computed in Python once every batch is ranked
    finish: list[Statement]
    finish_reusing: tuple[Statement, ...]  # `finish` when some runs' values are `cached`
    outputs: tuple[Statement, ...]  # curve and difference tables, from the result tables
    #: per metric, its SQL alone over empty tables, to name the metric whose SQL does not bind
    probes: tuple[Probe, ...]

    @property
    def exact_mean(self) -> bool:
        """A metric averages by `exact_mean` (its SQL is then in the aggregate statements)."""
        return averages_exactly([*self.metrics, *self.curves])

    @property
    def statistics(self) -> tuple[str, ...]:
        """The statistics over queries that metrics aggregate by (Latency's median, percentiles,
        max, QPS: their SQL is then in the aggregate statement)."""
        return aggregated_statistics(self.metrics)


@dataclass(frozen=True, kw_only=True)
class SqlPlan:
    """Everything needed to evaluate a spec: the connection's settings, then three parts, which
    an engine runs in order: the qrels' part (`QrelsPart`, once), the runs' part (`RunsPart`,
    batch by batch) and the results' part (`ResultsPart`, once every batch is ranked)."""

    memory_limit: str | None  # DuckDB's memory_limit for the connection (`settings`)
    threads: int | None  # DuckDB's threads for the connection (`settings`; None: every core)
    qrels: QrelsPart
    runs: RunsPart
    results: ResultsPart

    @property
    def setup(self) -> list[Statement]:
        """Every statement made before the first batch is loaded, in order: the runs' names,
        the other names, the qrels' tables, and the empty tables the runs' rankings fill."""
        return [*self.runs.names, *self.qrels.names, *self.qrels.statements, *self.runs.tables]

    def reusing(self, cached: frozenset[str]) -> SqlPlan:
        """The plan without loading the `cached` runs, whose per-query values the history
        holds (but those a fused run that is not cached needs, loaded to be fused only): the
        other runs batched as before, and the result tables reading `cached_values`."""
        if not cached:
            return self
        runs = self.runs
        fusions = tuple(f for f in runs.fusions if f.name not in cached)
        needed = {name for f in fusions for name in f.inputs}
        kept = [load for load in runs.loads if load.name not in cached or load.name in needed]
        batches = with_fusions(batched(kept, runs.sizes), fusions)
        runs = replace(runs, batches=batches, cached=cached, fusions=fusions,
                       fusion_only=frozenset(needed & cached))  # fmt: skip
        results = replace(self.results, finish=list(self.results.finish_reusing))
        return replace(self, runs=runs, results=results)

    @property
    def loads(self) -> list[Load]:
        """Every input file: the qrels, then the runs in spec order, then their latencies."""
        return [*self.qrels.loads, *self.runs.loads, *self.runs.latency]

    def sql_text(self) -> str:
        """The whole plan as SQL text, parameters shown in comments (`irpipe compile`)."""
        return plan_text(self)


@dataclass(frozen=True)
class Ranking:
    """How a loaded batch is ranked into `wide`, then dropped: `statement`, or `dense` (the full
    plan) when the judged-rows plan is chosen but the batch's queries are mostly judged, where
    sorting every row once is cheaper than finding judged rows' ranks (`ranking.mostly_judged`).
    The full plan (`dense`, or `statement` when `full`) ranks a large batch in slices of whole
    queries (`slices.slice_bounds`), so that its sort holds one slice of rows at a time."""

    statement: Statement
    dense: Statement | None = None
    after: tuple[Statement, ...] = (Statement("DROP TABLE run_rows"), RUN_ROWS)
    full: bool = False  # `statement` is the full plan
    #: `wide` made from `ranking.RANKED_ROWS`, rows ranked before they reach the engine (the
    #: Python door's loop), where judged rows suffice (`ranking.given_sql`); None elsewhere
    given: Statement | None = None
    order: tuple[SortKey, ...] = ()  # the ordering's keys, by which `given`'s rows are ranked
    #: a run is evaluated under several collections: each batch is ranked one collection at a
    #: time (`collections`, `slices.ONE_COLLECTION`)
    apart: bool = False

    def collections(self, batch: list[Load]) -> list[str]:
        """The collections a batch is ranked under one at a time (in the spec's order of its
        runs' lists), or none: ranked once under all."""
        if not self.apart:
            return []
        return list(dict.fromkeys(c for load in batch for c in load.collections))

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
        the batch in (`slices.slice_bounds`)."""
        return Statement(slice_bounds(), [_names(batch)])


def _names(batch: list[Load]) -> list[str]:
    return [load.name for load in batch]
