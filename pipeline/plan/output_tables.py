"""Tables for the outputs that are neither per_query nor aggregate, and their checks. Pure, no I/O.

pr_curve, pr_curve_101   per run and recall level: interpolated precision averaged over the run's
    query set (`level: pr_curve` and `pr_plot`). The levels are IPrec measures compiled beside
    the spec's metrics (`curve_measures`): ranked in the same pass, filled and averaged by the
    same SQL (`per_query.result_tables`) into tables of their own, `curve_per_query` and
    `curve_aggregate`, so per_query and aggregate hold the spec's metrics only. Each value is
    therefore the aggregate of `IPrec@r`, which is trec_eval's `iprec_at_recall_r`.
ir_metadata_<i>_<j>   output i's file j (`level: ir_metadata`, one per run and collection): that
    run's aggregate rows, its metrics in the spec's order.
diff_plot_<i>   per run of the baseline's collection and query: output i's metric minus the
    baseline run's, and whether the query got better, worse or tied (`level: diff_plot`); a
    baseline evaluated under several collections is compared under each, with its runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pipeline.errors import SpecError
from pipeline.plan.tables import values_table
from pipeline.plan.tradeoff import check_tradeoff, tradeoff_sql, tradeoff_table
from pipeline.spec.base import did_you_mean
from pipeline.spec.levels import level_of
from pipeline.spec.outputs import CURVE_LEVELS, DIFF_LEVELS, PER_RUN_LEVELS, run_files
from pipeline.sql import Statement

if TYPE_CHECKING:
    from pipeline.measures.registry import Registry
    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.spec import LoadedSpec, Output, Spec

__all__ = [
    "RECALL_LEVELS",
    "check_diff_outputs",
    "curve_measures",
    "curve_names",
    "is_curve_table",
    "output_table",
    "output_tables",
    "per_run_table",
]

#: the recall levels of each `recall_levels` value; i/10 equals (10i)/100 to the bit, so the
#: 11 levels are among the 101 and one set of measures serves both
RECALL_LEVELS = {
    11: tuple(i / 10 for i in range(11)),
    101: tuple(j / 100 for j in range(101)),
}
_CURVE = "pr_curve"


def curve_table(levels: int) -> str:
    """The table of a curve at `levels` recall levels: `pr_curve`, or `pr_curve_101`."""
    return _CURVE if levels == 11 else f"{_CURVE}_{levels}"


def is_curve_table(table: str) -> bool:
    """Whether `table` is a precision-recall curve (the other plots' tables are differences)."""
    return table == _CURVE or table.startswith(f"{_CURVE}_")


def output_table(index: int, output: Output) -> str | None:
    """The table output `index` writes, for the levels made here; None for the others."""
    if output.level in CURVE_LEVELS:
        return curve_table(output.recall_levels or 11)
    if output.level in DIFF_LEVELS:
        return f"diff_plot_{index}"
    if level_of(output.level).is_tradeoff:
        return tradeoff_table(index)
    if level_of(output.level).is_run_file:
        return f"fused_run_{index}"
    return None


def per_run_table(index: int, file: int) -> str:
    """The table of file `file` of per-run output `index` (one run under one collection)."""
    return f"ir_metadata_{index}_{file}"


def _curve_sizes(spec: Spec) -> list[int]:
    """The numbers of recall levels the spec's curve outputs ask for, sorted."""
    return sorted({o.recall_levels or 11 for o in spec.outputs if o.level in CURVE_LEVELS})


def curve_measures(loaded: LoadedSpec, registry: Registry) -> list[ResolvedMeasure]:
    """IPrec at every recall level a curve output needs (none without such an output)."""
    sizes = _curve_sizes(loaded.spec)
    if not sizes:
        return []
    # resolved as a spec's `{metric: IPrec, recall: [...]}` is: the same measure, the same SQL
    return registry.resolve("IPrec", {"recall": list(RECALL_LEVELS[sizes[-1]])})


def curve_names(first: int, curves: list[ResolvedMeasure]) -> list[Statement]:
    """The curve measures' names table; their columns in `wide` follow the spec's metrics."""
    rows = [(first + i, m.label, m.aggregator, m.params.recall) for i, m in enumerate(curves)]
    if not rows:
        return []
    columns = "ordinal INTEGER, metric VARCHAR, aggregator VARCHAR, recall DOUBLE"
    return values_table("curve_metrics", columns, rows)


def output_tables(
    loaded: LoadedSpec,
    diffs: Mapping[int, ResolvedMeasure],
    metrics: list[ResolvedMeasure] | None = None,
) -> list[Statement]:
    """The curve, difference and trade-off tables the spec's outputs write, once
    curve_aggregate and per_query are made; `diffs`: the metric of each difference output, by
    the output's index (`check_diff_outputs`); `metrics`: the spec's, which a trade-off names."""
    spec = loaded.spec
    statements = [_curve_sql(size) for size in _curve_sizes(spec)]
    for i, output in enumerate(spec.outputs):
        if output.level in DIFF_LEVELS:
            statements.append(_diff_sql(i, output, diffs[i]))
        if level_of(output.level).is_tradeoff:
            statements.append(tradeoff_sql(i, *check_tradeoff(loaded, i, metrics or [])))
        if output.level in PER_RUN_LEVELS:
            files = run_files(output, spec.runs, loaded.where("outputs", i, "path"))
            statements += [_per_run_sql(per_run_table(i, j), f) for j, f in enumerate(files)]
    return statements


def _per_run_sql(table: str, file) -> Statement:
    # The aggregate's rows of one run under one collection, metrics in the spec's order.
    return Statement(
        f"""
CREATE TABLE {table} AS
SELECT a.collection, a.run, a.metric, a.value, a.n_queries
FROM aggregate a JOIN metrics m USING (metric)
WHERE a.collection = ? AND a.run = ?
ORDER BY m.ordinal""",
        [file.collection, file.run],
    )


def _curve_sql(size: int) -> Statement:
    # Runs in spec order, each with its levels in order: a plot reads the curve as it is.
    return Statement(
        f"""
CREATE TABLE {curve_table(size)} AS
SELECT a.collection, a.run, l.recall, a.value AS precision, a.n_queries
FROM curve_aggregate a JOIN curve_metrics l USING (metric) JOIN runs USING (run, collection)
WHERE list_contains(?, l.recall)
ORDER BY runs.ordinal, l.recall""",
        [list(RECALL_LEVELS[size])],
    )


def _diff_sql(index: int, output: Output, metric: ResolvedMeasure) -> Statement:
    """Per query both runs were averaged over (the `queries` setting decides which): the run's
    value minus the baseline's, sorted from the best gain to the worst loss, then by query."""
    higher = metric.better == "higher"
    return Statement(
        f"""
CREATE TABLE diff_plot_{index} AS
WITH pairs AS (
    SELECT runs.ordinal, p.collection, p.run, b.run AS baseline, p.metric, p.qid, p.value,
        b.value AS baseline_value, p.value - b.value AS difference
    FROM per_query p
    JOIN per_query b ON b.collection = p.collection AND b.qid = p.qid AND b.metric = p.metric
    JOIN runs ON runs.run = p.run AND runs.collection = p.collection
    WHERE b.run = ? AND p.metric = ? AND p.run <> b.run AND isfinite(p.value - b.value)
)
SELECT collection, run, baseline, metric, qid, value, baseline_value, difference,
    CASE WHEN difference = 0 THEN 'tied' WHEN (difference > 0) = ? THEN 'better' ELSE 'worse'
    END AS outcome
FROM pairs
ORDER BY ordinal, CASE WHEN ? THEN -difference ELSE difference END, qid""",
        [output.baseline, metric.label, higher, higher],
    )


def _find_metric(
    metrics: list[ResolvedMeasure], name: str | None, registry: Registry
) -> ResolvedMeasure | None:
    """The metric a diff_plot names: by its label in the tables, else by what the name means
    (`gm_map` is the spec's `gmAP`, `nDCG(k=10)` its `nDCG@10`)."""
    for m in metrics:
        if m.label == name:
            return m
    canonical = _canonical(name, registry)
    return next((m for m in metrics if m.canonical == canonical), None)


def _canonical(name: str | None, registry: Registry) -> str | None:
    """The canonical form of a metric string naming one metric, else None."""
    try:
        found = registry.resolve(name) if name else []
    except SpecError:
        return None
    return found[0].canonical if len(found) == 1 else None


def check_diff_outputs(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], registry: Registry
) -> dict[int, ResolvedMeasure]:
    """Every diff_plot names a metric with per-query values that says which way is better,
    and a run with another run of its collection to compare; every `run` output a fused run.
    The metric of each diff_plot, by the output's index (the name is resolved by `registry`
    where it is not a label: once, here, for `output_tables`)."""
    found: dict[int, ResolvedMeasure] = {}
    for i, output in enumerate(loaded.spec.outputs):
        if output.level in DIFF_LEVELS:
            found[i] = _check_metric(
                loaded, i, _find_metric(metrics, output.metric, registry), metrics
            )
            _check_baseline(loaded, i, output.baseline)
        if level_of(output.level).is_tradeoff:
            check_tradeoff(loaded, i, metrics)
        if level_of(output.level).is_run_file and output.run not in loaded.spec.fused_inputs():
            fused = list(loaded.spec.fused_inputs())
            raise SpecError(
                f"{loaded.where('outputs', i, 'run')}: '{output.run}' is not a fused run of this "
                f"spec (a file run is its own file); the fused runs: {_listed(fused)}"
            )
    return found


def _check_metric(
    loaded: LoadedSpec, index: int, found: ResolvedMeasure | None, metrics: list[ResolvedMeasure]
) -> ResolvedMeasure:
    """The metric a diff_plot draws (`found`), if it is one that can be drawn."""
    name = loaded.spec.outputs[index].metric
    where = loaded.where("outputs", index, "metric")
    if found is None:
        labels = [m.label for m in metrics]
        raise SpecError(
            f"{where}: '{name}' is not a metric of this spec; {did_you_mean(name, labels)}"
            f"the spec's metrics: {_listed(labels)}"
        )
    m = found.measure
    if m.kind != "number" or found.aggregator != "mean":
        what = "text" if m.kind != "number" else f"aggregated by {found.aggregator}, not a mean"
        raise SpecError(
            f"{where}: {found.label} is {what}: a diff_plot draws per-query differences of a "
            "metric averaged over queries (AP, nDCG@10, ...)"
        )
    if found.better is None:
        raise SpecError(
            f"{where}: {found.label} is a count or a diagnostic: neither a higher nor a lower "
            "value is better, so a query cannot get better or worse by it"
        )
    return found


def _check_baseline(loaded: LoadedSpec, index: int, baseline: str | None) -> None:
    runs = loaded.spec.runs
    where = loaded.where("outputs", index, "baseline")
    if baseline not in runs:
        if _in_kept_pattern(loaded.spec, baseline):
            return  # `validate --no-data`: the pattern's runs are not known yet
        raise SpecError(
            f"{where}: unknown run '{baseline}'; {did_you_mean(baseline, list(runs))}"
            f"the spec's runs: {_listed(list(runs))}"
        )
    collections = set(runs[baseline].collections)
    if not any(collections & set(r.collections) for n, r in runs.items() if n != baseline):
        named = ", ".join(f"'{c}'" for c in runs[baseline].collections)
        raise SpecError(
            f"{where}: '{baseline}' is the only run of collection {named}; a diff_plot "
            "compares the other runs of the baseline's collection with it"
        )


def _in_kept_pattern(spec: Spec, name: str) -> bool:
    """Whether `name` can be a run of a path pattern left unexpanded (no directory listed)."""
    return any(
        name.startswith(f"{key}/") and any(c in str(run.path) for c in "*?[")
        for key, run in spec.file_runs().items()
    )


def _listed(names: list[str], limit: int = 12) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")
