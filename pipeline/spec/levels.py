"""Every output level, declared once: a frozen record per level, and the groups the code asks for.

A level is what an output (`outputs:`, or a pool's `outputs:`) writes: a table of results, a
plot of one, a report, a run file, or a file per run. Its record says what it is (the spec's
description of `level` is made of these), which table it writes (or that each output has a table
of its own), the columns of that table where they are fixed, the spec sections it needs, the keys
of an output it reads and the evaluation stage that fills its table.
Callers ask a record (`level_of(name).is_plot`) or a group below, never compare level names
(sqlmesh's `ModelKindName`, whose properties every caller asks).

The spec's `level` choices and their description, the writers' levels and the preflight's tables
are read from `LEVELS`, and the reference's levels table (`configs/REFERENCE.md`) is checked
against it (`tests/test_reference.py`, `tests/test_levels.py`): adding a level is a record here
(pipeline/README.md, "Adding to the house").

Imports: nothing of irpipe's; the spec, the outputs, the run and the commands read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "CURVE_LEVELS",
    "DIFF_LEVELS",
    "JUDGMENT_LEVELS",
    "LEVELS",
    "OUTPUT_LEVELS",
    "PER_RUN_LEVELS",
    "PLOT_LEVELS",
    "POOL_LEVELS",
    "REPORT_LEVELS",
    "RUN_FILE_LEVELS",
    "TABLE_LEVELS",
    "TRADEOFF_LEVELS",
    "Level",
    "describe",
    "level_of",
    "levels_reading",
]

#: what a level's file holds: a table of results (any table writer writes it), the report
#: (a table that the report writers also draw for a paper), a plot of a table, a TREC run file,
#: or one file per run (its path holds `{run}`)
Form = Literal["table", "report", "plot", "run file", "per-run file"]

#: the spec's sections of the judgment sets' comparisons
_JUDGMENT_SECTIONS = ("agreement", "correlation")


@dataclass(frozen=True)
class Level:
    """One output level: its name (the spec's `level`), what its file holds, and what it needs."""

    name: str
    form: Form
    #: what it is, in the spec's description of `level` (`describe`)
    says: str
    #: the table every output of the level writes; None where each output has a table of its own
    #: (named by `pipeline.plan.output_tables` and `pipeline.pools`)
    table: str | None = None
    #: its table's columns, in order, where they are fixed
    columns: tuple[str, ...] | None = None
    #: the spec sections of which it needs one (none: every spec can write it)
    needs: tuple[str, ...] = ()
    #: the keys of an output it reads besides `path` and `level`, each of them required except
    #: `recall_levels` (which has a default)
    keys: tuple[str, ...] = ()
    #: where it is declared: an entry of `outputs:`, or of a pool's `outputs:`
    declared_in: Literal["outputs", "pools"] = "outputs"
    #: the evaluation stage that fills its table (`pipeline.run.stages`)
    stage: str = "execute"
    #: its text outputs (.csv, .tsv, .jsonl) read a view of the table instead (the agreement's,
    #: `pipeline.agreement.sql.AGREEMENT_TEXT`, which writes its counts as integers)
    text_view: bool = False
    #: whether writing it reads the per-query table (on Spark, a spec none of whose outputs does
    #: keeps that table on the workers and aggregates there: `engines/spark/scale.py`)
    reads_per_query: bool = True
    #: whether writing it evaluates the runs again, each without the judgments only it
    #: contributed (a pool's leave-one-out analysis)
    evaluates_again: bool = False

    @property
    def is_table(self) -> bool:
        """Its data is a table of results, written by any table writer (.csv, .parquet, ...)."""
        return self.form in ("table", "report")

    @property
    def is_report(self) -> bool:
        return self.form == "report"

    @property
    def is_plot(self) -> bool:
        return self.form == "plot"

    @property
    def is_run_file(self) -> bool:
        return self.form == "run file"

    @property
    def is_per_run(self) -> bool:
        """One file per run (and collection): the output's path holds `{run}`."""
        return self.form == "per-run file"

    @property
    def is_curve(self) -> bool:
        """A precision-recall curve, or its plot: it reads `recall_levels`."""
        return "recall_levels" in self.keys

    @property
    def is_diff(self) -> bool:
        """Per-query differences against a baseline run: it reads `metric` and `baseline`."""
        return "baseline" in self.keys

    @property
    def is_tradeoff(self) -> bool:
        """Effectiveness against latency: it reads `metric` and `latency`."""
        return "latency" in self.keys

    @property
    def is_judgment(self) -> bool:
        """A comparison of judgment sets (or of orderings): it needs `agreement:` or
        `correlation:`."""
        return bool(self.needs) and set(self.needs) <= set(_JUDGMENT_SECTIONS)

    @property
    def is_pool(self) -> bool:
        return self.declared_in == "pools"


def _columns(names: str) -> tuple[str, ...]:
    return tuple(names.split())


_POOL = {"needs": ("pools",), "declared_in": "pools", "stage": "pool"}
_COMPARISON = """collection run baseline metric test n_queries mean baseline_mean difference ci_low
    ci_high p_value p_adjusted correction significant effect_size wins ties losses seed samples"""
_SUITE = "suite run metric macro micro n_collections n_queries"
_DISCRIMINATION = "collection metric test correction alpha runs pairs significant share"
_REPRODUCTION = """entry kind baseline original reproduced collection reproduced_collection measure
    metric qid value n_original n_reproduced"""
_LEAVE_ONE_OUT = """pool collection group run metric full reduced delta full_rank reduced_rank
    rank_change kendall_tau removed_judgments removed_relevant judged_full judged_reduced"""
_POOL_STATS = (
    "pool collection qid run documents judged relevant unique unique_judged unique_relevant"
)

#: every level, in the order the spec's schema lists the outputs' levels, then the pools'
# fmt: off
LEVELS: tuple[Level, ...] = (
    Level("query", "table", "one row per query",
          table="per_query", columns=_columns("run collection qid metric value text")),
    Level("aggregate", "table", "one per run and metric",
          table="aggregate", columns=_columns("run collection metric value n_queries"),
          reads_per_query=False),
    Level("pr_curve", "table", "interpolated precision per run and recall level",
          columns=_columns("collection run recall precision n_queries"), keys=("recall_levels",),
          reads_per_query=False),
    Level("pr_plot", "plot", "those curves as a plot", keys=("recall_levels",),
          reads_per_query=False),
    Level("diff_plot", "plot",
          "per-query differences of `metric` against the `baseline` run, as a plot",
          keys=("metric", "baseline")),
    Level("tradeoff", "plot",
          "effectiveness `metric` against the latency statistic `latency` (a Latency or QPS "
          "metric), a point per run, the Pareto front marked, as a plot",
          keys=("metric", "latency"), reads_per_query=False),
    Level("comparison", "table", "one row per paired test (needs compare)",
          table="comparison", columns=_columns(_COMPARISON), needs=("compare",), stage="compare"),
    Level("suite", "table",
          "per suite, run and metric: the mean of its collections' means (macro), the mean over "
          "every query of them (micro), n_collections (needs suites)",
          table="suite", columns=_columns(_SUITE), needs=("suites",)),
    Level("discrimination", "table",
          "discriminative power: per collection, metric and test, the pairs of runs, those "
          "found significant and their share (needs discrimination)",
          table="discrimination", columns=_columns(_DISCRIMINATION), needs=("discrimination",),
          stage="compare"),
    Level("asl_plot", "plot",
          "the achieved significance level curves: each pair's p-value, sorted (needs "
          "discrimination)",
          table="discrimination_pairs", needs=("discrimination",), stage="compare"),
    Level("report", "report",
          "the table for a paper (.md, .tex, .html): runs by metrics, best in bold, significance "
          "marks; with suites, BEIR's table per suite and metric",
          table="report", columns=_columns("collection run metric value n_queries best mark baseline"),
          stage="write"),
    Level("run", "run file", "the fused run `run` as a TREC run file (.trec, .txt, .run)",
          keys=("run",)),
    Level("agreement", "table", "the statistics of each agreement entry",
          table="agreement", columns=_columns("reference other collection statistic value"),
          needs=("agreement",), stage="agree", text_view=True),
    Level("confusion", "table", "its pairs by (reference grade, other grade)",
          table="confusion", columns=_columns("reference other reference_grade other_grade pairs"),
          needs=("agreement",), stage="agree"),
    Level("correlation", "table", "the statistics of two orderings of the runs",
          table="correlation",
          columns=_columns("reference other collection metric statistic value ci_low ci_high run"),
          needs=_JUDGMENT_SECTIONS, stage="agree"),
    Level("reproduction", "table",
          "repro_eval's measures of each reproduction entry: ktu and rbo per topic and their "
          "means, rmse, nrmse, the t-test's p_value, er and delta_ri per metric",
          table="reproduction", columns=_columns(_REPRODUCTION), needs=("reproduction",),
          stage="reproduce"),
    Level("ir_metadata", "per-run file",
          "one YAML file per run (.yaml, .yml; the path holds {run}, and {collection} where a run "
          "is evaluated under several): its ir_metadata block merged with what the evaluation "
          "knows"),
    Level("pool", "table", "the documents to judge, per query in random order",
          columns=_columns("pool collection qid docno position"), **_POOL),
    Level("contributions", "table", "which runs contributed each document, at which rank",
          columns=_columns("pool collection qid docno run rank"), **_POOL),
    Level("pool_stats", "table", "per query and per run, documents, judged, relevant and unique",
          columns=_columns(_POOL_STATS), **_POOL),
    Level("leave_one_out", "table",
          "each run (or group) evaluated without the judgments only it contributed (needs the "
          "collection's qrels)",
          columns=_columns(_LEAVE_ONE_OUT), evaluates_again=True, **_POOL),
)
# fmt: on

_BY_NAME = {record.name: record for record in LEVELS}


def level_of(name: str) -> Level:
    """The record of the level `name` (a KeyError for a name that is not a level: the spec's
    models accept only levels)."""
    return _BY_NAME[name]


def describe(names: tuple[str, ...]) -> str:
    """The spec's description of a `level` key whose choices are `names`: what each level is."""
    return "; ".join(f"{name}: {level_of(name).says}" for name in names)


def levels_reading(key: str) -> tuple[str, ...]:
    """The levels whose outputs read `key` (`recall_levels`, `metric`, `baseline`, `run`)."""
    return _names(lambda r: key in r.keys)


def _names(wanted) -> tuple[str, ...]:
    return tuple(record.name for record in LEVELS if wanted(record))


#: the levels of the spec's `outputs:`, and of a pool's `outputs:`
OUTPUT_LEVELS = _names(lambda r: not r.is_pool)
POOL_LEVELS = _names(lambda r: r.is_pool)
#: the levels that take `recall_levels`, and those that need `metric` and `baseline`
CURVE_LEVELS = _names(lambda r: r.is_curve)
DIFF_LEVELS = _names(lambda r: r.is_diff)
#: the levels that draw effectiveness against latency (`metric` and `latency`)
TRADEOFF_LEVELS = _names(lambda r: r.is_tradeoff)
#: the levels of the judgment sets' comparisons (`agreement:`, `correlation:`), each its table
JUDGMENT_LEVELS = _names(lambda r: r.is_judgment)
#: the levels written as one file per run (and collection): the path holds `{run}`
PER_RUN_LEVELS = _names(lambda r: r.is_per_run)
#: the levels whose data is a table of results (plots are levels too, but not tables)
TABLE_LEVELS = _names(lambda r: r.is_table)
#: the levels each kind of writer draws: plots, reports, TREC run files
PLOT_LEVELS = _names(lambda r: r.is_plot)
REPORT_LEVELS = _names(lambda r: r.is_report)
RUN_FILE_LEVELS = _names(lambda r: r.is_run_file)
