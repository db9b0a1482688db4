"""What a report shows besides the numbers: each metric's best run, and significance marks.

A run's value carries † when its difference to the reference run is significant after
correction, by the first test of `compare.tests`; ‡ instead when it is significant but smaller
than `compare.min_difference` (real, but too small for a user to notice). The reference is
`compare.baseline`, or without one the first run of the collection (in the spec's order). Best
values follow the console summary's rule (`summary.best_runs`).

`report_table` writes this as the DuckDB table `report` (one row per collection, run and metric),
which the report writers lay out (`outputs/report.py`) and any table writer can write;
`significance` gives the console summary the same marks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pipeline.formatting import format_value

if TYPE_CHECKING:
    import duckdb

    from pipeline.compare import ComparePlan

__all__ = [
    "DAGGER",
    "DOUBLE_DAGGER",
    "Significance",
    "best_runs",
    "legend",
    "report_table",
    "significance",
]

DAGGER, DOUBLE_DAGGER = "†", "‡"
TEST_NAMES = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "sign": "sign test",
    "randomization": "paired randomization test",
    "bootstrap": "paired bootstrap test",
    "tukey_hsd": "Tukey's HSD over all runs of the collection (one-way, as ranx computes it)",
    "randomised_tukey_hsd": "randomised Tukey HSD over all runs of the collection (Carterette 2012)",
}
CORRECTION_NAMES = {
    "none": "uncorrected",
    "bonferroni": "Bonferroni-corrected",
    "holm": "Holm-corrected",
    "bh": "Benjamini-Hochberg-corrected (false discovery rate)",
}
COLUMNS = (
    ("collection", "VARCHAR"), ("run", "VARCHAR"), ("metric", "VARCHAR"), ("value", "DOUBLE"),
    ("n_queries", "BIGINT"), ("best", "BOOLEAN"), ("mark", "VARCHAR"), ("baseline", "VARCHAR"),
)  # fmt: skip


@dataclass(frozen=True)
class Significance:
    """Marks by (collection, run, metric), the run each collection's marks compare with, and the
    legend that says what a mark means."""

    marks: dict[tuple[str, str, str], str]
    references: dict[str, str]
    legend: tuple[str, ...]

    def as_record(self) -> dict:
        """As the history keeps it (JSON): each mark with its collection, run and metric."""
        marks = [
            {"collection": c, "run": r, "metric": m, "mark": mark}
            for (c, r, m), mark in sorted(self.marks.items())
        ]
        return {"marks": marks, "references": self.references, "legend": list(self.legend)}


def significance(con: duckdb.DuckDBPyConnection, plan: ComparePlan) -> Significance:
    """The marks of the `comparison` table's first test against each collection's reference."""
    references = {c: plan.references(runs)[0] for c, runs in plan.collections}
    rows = con.execute(
        "SELECT collection, run, baseline, metric, difference FROM comparison "
        "WHERE test = ? AND significant",
        [plan.tests[0]],
    ).fetchall()
    marks = {}
    for collection, run, baseline, metric, difference in rows:
        if baseline == references[collection]:
            small = plan.min_difference is not None and abs(difference) < plan.min_difference
            marks[collection, run, metric] = DOUBLE_DAGGER if small else DAGGER
    return Significance(marks, references, tuple(legend(plan.manifest(), references)))


def legend(compare: dict, references: dict[str, str]) -> list[str]:
    """What † and ‡ mean, from the compare settings of a manifest: test, correction, alpha."""
    test = compare["tests"][0]
    how = TEST_NAMES[test]
    if test in ("randomization", "bootstrap", "randomised_tukey_hsd"):
        samples = compare["samples"]
        drawn = "every sign flip" if samples == "exact" else f"{samples:,} samples"
        how += f", {drawn}, seed {compare['seed']}"
    corrected = (
        "which controls the family-wise error over all pairs"
        if test in ("tukey_hsd", "randomised_tukey_hsd")
        else f"{CORRECTION_NAMES[compare['correction']]} over the comparisons of each metric"
    )
    lines = [
        f"{DAGGER} significantly different from {_against(references)}: {how}, {corrected}, "
        f"alpha = {compare['alpha']}."
    ]
    if compare["min_difference"] is not None:
        lines.append(
            f"{DOUBLE_DAGGER} significant, but the difference is smaller than "
            f"min_difference = {compare['min_difference']}."
        )
    return lines


def _against(references: dict[str, str]) -> str:
    names = sorted(set(references.values()))
    if len(names) == 1:
        return names[0]
    each = "; ".join(f"{run} in {collection}" for collection, run in references.items())
    return f"the first run of each collection ({each})"


def report_table(
    con: duckdb.DuckDBPyConnection, metrics: list[Any], plan: ComparePlan | None
) -> None:
    """Create the `report` table from `aggregate` (and `comparison`, when the spec compares):
    collections in order of their first run, then runs and metrics in spec order."""
    rows = con.execute("SELECT run, collection, metric, value, n_queries FROM aggregate").fetchall()
    found = significance(con, plan) if plan is not None else Significance({}, {}, ())
    best = _best(rows, metrics)
    order = list(dict.fromkeys(row[1] for row in rows))
    cells = []
    for run, collection, metric, value, n in sorted(rows, key=lambda r: order.index(r[1])):
        mark = found.marks.get((collection, run, metric), "")
        reference = found.references.get(collection)
        cells.append((collection, run, metric, value, n, (collection, run, metric) in best, mark,
                      reference))  # fmt: skip
    con.execute(f"CREATE TABLE report ({', '.join(f'{n} {t}' for n, t in COLUMNS)})")
    values = ", ".join(f"unnest(${name})" for name, _ in COLUMNS)
    columns = {name: [row[i] for row in cells] for i, (name, _) in enumerate(COLUMNS)}
    con.execute(f"INSERT INTO report SELECT {values}", columns)


def _best(rows: list[tuple], metrics: list[Any]) -> set[tuple[str, str, str]]:
    """(collection, run, metric) of each best value."""
    values: dict[tuple[str, str], dict[str, Any]] = {}
    counts: dict[tuple[str, str], dict[str, Any]] = {}
    for run, collection, metric, value, n in rows:
        values.setdefault((collection, metric), {})[run] = value
        counts.setdefault((collection, metric), {})[run] = n
    better = {m.label: m.better for m in metrics}
    return {
        (collection, run, metric)
        for (collection, metric), scored in values.items()
        for run in best_runs(scored, counts[collection, metric], better[metric])
    }


def best_runs(scored: dict[str, Any], counts: dict[str, Any], better: str | None) -> list[str]:
    """Of runs' values of one metric in one collection (and the queries each averaged), the runs
    holding the best printed value; none when the metric marks none (see the module's docstring).
    The report's bold follows the same rule."""
    scored = {r: v for r, v in scored.items() if isinstance(v, int | float) and not math.isnan(v)}
    same_queries = len({counts[r] for r in scored}) == 1
    if better is None or len(scored) < 2 or not same_queries:
        return []
    top = (max if better == "higher" else min)(scored.values())
    winners = [r for r, v in scored.items() if format_value(v) == format_value(top)]
    return winners if len(winners) < len(scored) else []
