"""What a report shows besides the numbers: each metric's best run, and significance marks.

A run's value carries ▲ when it is significantly better than a reference run after correction, by
the first test of `compare.tests`, and ▼ when it is significantly worse; △ and ▽ instead when the
difference is significant but smaller than `compare.min_difference` (real, but too small for a user
to notice). Better is the metric's direction: higher, or lower for a metric where lower is better;
a metric by which runs are neither better nor worse (a count: Citations, AnswerWords) gets no
mark, its comparisons being in the comparison table all the same. The references are the baselines of `compare.baseline` that
are runs of the collection, or without one the first run of the collection (in the spec's order).
With several baselines each has a letter (a, b, ... in the order listed) and a mark is followed by
its baseline's letter, once per baseline the run differs from: `▲a▼b`. Best values follow the
console summary's rule (`summary.best_runs`).

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
    "BETTER",
    "SMALL_BETTER",
    "SMALL_WORSE",
    "WORSE",
    "Significance",
    "best_runs",
    "legend",
    "report_table",
    "significance",
]

BETTER, WORSE = "▲", "▼"
SMALL_BETTER, SMALL_WORSE = "△", "▽"
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
#: how the report table's `baseline` column joins a collection's references
JOIN = ", "


@dataclass(frozen=True)
class Significance:
    """Marks by (collection, run, metric), the runs each collection's marks compare with, and
    the legend that says what a mark means."""

    marks: dict[tuple[str, str, str], str]
    references: dict[str, tuple[str, ...]]
    legend: tuple[str, ...]

    def as_record(self) -> dict:
        """As the history keeps it (JSON): each mark with its collection, run and metric."""
        marks = [
            {"collection": c, "run": r, "metric": m, "mark": mark}
            for (c, r, m), mark in sorted(self.marks.items())
        ]
        references = {c: JOIN.join(runs) for c, runs in self.references.items()}
        return {"marks": marks, "references": references, "legend": list(self.legend)}


def significance(con: duckdb.DuckDBPyConnection, plan: ComparePlan) -> Significance:
    """The marks of the `comparison` table's first test against each collection's references."""
    references = {c: plan.references(runs) for c, runs in (*plan.collections, *plan.suites)}
    letters = baseline_letters(plan.manifest())
    rows = con.execute(
        "SELECT collection, run, baseline, metric, difference FROM comparison "
        "WHERE test = ? AND significant",
        [plan.tests[0]],
    ).fetchall()
    found: dict[tuple[str, str, str], dict[str, str]] = {}
    directions = dict(plan.directions)
    for collection, run, baseline, metric, difference in rows:
        if metric in directions and directions[metric] is None:
            continue  # neither better nor worse: "better" would say what the metric does not
        for marked, against, sign in ((run, baseline, 1), (baseline, run, -1)):
            if against in references[collection]:
                symbol = _symbol(plan, metric, sign * difference) + letters.get(against, "")
                found.setdefault((collection, marked, metric), {})[against] = symbol
    marks = {
        (c, run, metric): "".join(by[base] for base in references[c] if base in by)
        for (c, run, metric), by in found.items()
    }
    return Significance(marks, references, tuple(legend(plan.manifest(), references)))


def _symbol(plan: ComparePlan, metric: str, difference: float) -> str:
    """▲ or ▼ for a difference of the marked run to its reference (△ or ▽ when small)."""
    lower = dict(plan.directions).get(metric) == "lower"
    better = (difference < 0) if lower else (difference > 0)
    small = plan.min_difference is not None and abs(difference) < plan.min_difference
    if small:
        return SMALL_BETTER if better else SMALL_WORSE
    return BETTER if better else WORSE


def baseline_letters(compare: dict) -> dict[str, str]:
    """Each baseline's letter (a, b, ... in the order listed) where there are several."""
    baselines = compare["baseline"]
    if not isinstance(baselines, list) or len(baselines) < 2:
        return {}
    return {name: _letter(i) for i, name in enumerate(baselines)}


def _letter(i: int) -> str:
    """a, b, ..., z, then aa, ab, ... (no spec lists 27 baselines, but none breaks on it)."""
    return _letter(i // 26 - 1) + chr(ord("a") + i % 26) if i >= 26 else chr(ord("a") + i)


def legend(compare: dict, references: dict[str, tuple[str, ...]]) -> list[str]:
    """What the marks mean, from the compare settings of a manifest: which way, against which
    run, by which test, correction and alpha."""
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
        f"{_which_way(compare, references)} (higher is better, unless lower is for the "
        f"metric): {how}, {corrected}, alpha = {compare['alpha']}."
    ]
    if compare["min_difference"] is not None:
        lines.append(
            f"{SMALL_BETTER} {SMALL_WORSE} significantly better or worse, but the difference is "
            f"smaller than min_difference = {compare['min_difference']}."
        )
    return lines


def _which_way(compare: dict, references: dict[str, tuple[str, ...]]) -> str:
    letters = baseline_letters(compare)
    if not letters:
        return (
            f"{BETTER} significantly better than {_against(references)}, {WORSE} significantly "
            "worse"
        )
    named = ", ".join(f"{letter} = {name}" for name, letter in letters.items())
    return (
        f"{BETTER}x significantly better than baseline x, {WORSE}x significantly worse, for the "
        f"baselines {named}"
    )


def _against(references: dict[str, tuple[str, ...]]) -> str:
    names = sorted({runs[0] for runs in references.values()})
    if len(names) == 1:
        return names[0]
    each = "; ".join(f"{runs[0]} in {collection}" for collection, runs in references.items())
    return f"the first run of each collection ({each})"


def report_table(
    con: duckdb.DuckDBPyConnection,
    metrics: list[Any],
    plan: ComparePlan | None,
    suites: bool = False,
) -> None:
    """Create the `report` table from `aggregate` (and `comparison`, when the spec compares):
    collections in order of their first run, then runs and metrics in spec order; with
    `suites`, each suite's means after them (its `n_queries`: the collections averaged)."""
    rows = con.execute("SELECT run, collection, metric, value, n_queries FROM aggregate").fetchall()
    if suites:
        sql = "SELECT run, suite, metric, macro, n_collections FROM suite"
        rows += con.execute(sql).fetchall()
    found = significance(con, plan) if plan is not None else Significance({}, {}, ())
    best = _best(rows, metrics)
    order = list(dict.fromkeys(row[1] for row in rows))
    cells = []
    for run, collection, metric, value, n in sorted(rows, key=lambda r: order.index(r[1])):
        mark = found.marks.get((collection, run, metric), "")
        reference = found.references.get(collection)
        cells.append((collection, run, metric, value, n, (collection, run, metric) in best, mark,
                      JOIN.join(reference) if reference else None))  # fmt: skip
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
