"""Reading a case's outputs: the spec's output files, CSV rows, numbers, and the summary and
`irpipe trec-eval` tables checked against the spec."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from support import Case, require


def output(case: Case, spec: dict, level: str, suffix: str = ".csv") -> Path:
    """The spec's output of this level and suffix, in the case's configs/ copy."""
    paths = [
        o["path"] for o in spec["outputs"] if o.get("level") == level and o["path"].endswith(suffix)
    ]
    require(paths, f"the spec has no {level} output ending {suffix}")
    require((case.work / paths[0]).is_file(), f"{paths[0]} was not written")
    return case.work / paths[0]


def read_csv(path: Path) -> list[dict[str, str]]:
    """A CSV file's rows; it must have at least one."""
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    require(rows, f"{path.name} has no rows")
    return rows


def number(text: str, what: str, low: float = -math.inf, high: float = math.inf) -> float:
    """`text` as a finite number within [low, high]."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    require(
        math.isfinite(value) and low <= value <= high,
        f"{what}: {text!r} is not a number in [{low}, {high}]",
    )
    return value


def named_metrics(spec: dict) -> list[str]:
    """The metrics a spec names as plain strings (their labels in the outputs are the same)."""
    return [metric for metric in spec["metrics"] if isinstance(metric, str)]


def summary_by_run(rows: list[dict[str, str]]) -> dict[str, dict[str, dict[str, str]]]:
    """An aggregate table's rows as {run: {metric: row}}."""
    table: dict[str, dict[str, dict[str, str]]] = {}
    for row in rows:
        table.setdefault(row["run"], {})[row["metric"]] = row
    return table


def check_summary(rows: list[dict[str, str]], spec: dict, labels: list[str]) -> None:
    """Every run of the spec has a finite value over some queries for every metric: at least one
    for each of the spec's metrics, and every one of `labels`; all runs the same metrics."""
    table = summary_by_run(rows)
    require(
        set(table) == set(spec["runs"]),
        f"summary runs {sorted(table)}, spec runs {sorted(spec['runs'])}",
    )
    for run, metrics in table.items():
        require(
            len(metrics) >= len(spec["metrics"]),
            f"{run}: {len(metrics)} metrics for {len(spec['metrics'])} in the spec",
        )
        require(set(labels) <= set(metrics), f"{run}: lacks {sorted(set(labels) - set(metrics))}")
        require(
            metrics.keys() == next(iter(table.values())).keys(),
            f"{run}: not every run has the same metrics",
        )
        for metric, row in metrics.items():
            number(row["value"], f"{run} {metric}")
            number(row["n_queries"], f"{run} {metric} n_queries", low=1)


def trec_eval_values(stdout: str) -> dict[str, str]:
    """`irpipe trec-eval`'s summary lines (measure, all, value) as {measure: value}."""
    lines = [line.split() for line in stdout.splitlines() if line.strip()]
    require(
        lines and all(len(parts) == 3 and parts[1] == "all" for parts in lines),
        f"not trec_eval output:\n{stdout[:500]}",
    )
    return {measure: value for measure, _, value in lines}
