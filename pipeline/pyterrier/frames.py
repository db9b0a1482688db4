"""pt.Experiment's frames from irpipe's results: the means (one row a system, one column a
measure, as named in `eval_metrics`), each comparison's columns beside them, or the per-query
frame (name, qid, measure, value)."""

from __future__ import annotations

import builtins
import math
from collections.abc import Mapping
from typing import Any

from pipeline.notebook import Results

__all__ = ["_frame"]


def _frame(found: list[tuple[str | None, Results]], systems: dict, metrics: list[dict],
           perquery: Any, rounding: Any, highlight: str | None, alpha: float) -> Any:  # fmt: skip
    """The frame pt.Experiment returns for these results (`found`: each baseline's evaluation,
    or one without a baseline)."""
    labels = [m["label"] for m in metrics]
    if perquery is True:
        return _per_query(found[0][1], rounding)
    frame = _means(found[0][1], list(systems), labels, rounding)
    several = len(found) > 1
    for baseline, results in found:
        if baseline is not None:
            _compared(frame, results, baseline, labels, alpha, several)
    frame = _highlighted(frame, labels, highlight)
    return (frame, _per_query(found[0][1], rounding)) if perquery == "both" else frame


def _per_query(results: Results, rounding: Any) -> Any:
    table = results.per_query()[["run", "qid", "metric", "value"]]
    table = table.rename(columns={"run": "name", "metric": "measure"})
    table = table.sort_values(["name", "qid"], kind="stable").reset_index(drop=True)
    if isinstance(rounding, int):
        table["value"] = table["value"].round(rounding)
    return table


def _means(results: Results, names: list[str], labels: list[str], rounding: Any) -> Any:
    import pandas as pd

    table = results.aggregate()
    value = {(r.run, r.metric): r.value for r in table.itertuples()}
    columns = {"name": names}
    for label in labels:
        columns[label] = [_rounded(label, value[(n, label)], rounding) for n in names]
    return pd.DataFrame(columns)


def _rounded(label: str, value: float, rounding: Any) -> float:
    if isinstance(rounding, int):
        return builtins.round(value, rounding)
    if isinstance(rounding, Mapping) and label in rounding:
        return builtins.round(value, rounding[label])
    return value


def _compared(frame: Any, results: Results, baseline: str, labels: list[str], alpha: float,
              several: bool) -> None:  # fmt: skip
    """`<m> +`, `<m> -`, `<m> p-value` (and with a correction `<m> reject`, `<m> p-value
    corrected`) for each measure, the baseline's own row empty; named `... vs <baseline>` when
    there are several baselines."""
    rows = results.comparisons()
    rows = rows[rows["baseline"] == baseline]
    corrected = _correcting(results)
    suffix = f" vs {baseline}" if several else ""
    for label in labels:
        by_run = {r.run: r for r in rows[rows["metric"] == label].itertuples()}
        cells = [by_run.get(name) for name in frame["name"]]
        frame[f"{label} +{suffix}"] = [_cell(c, "wins") for c in cells]
        frame[f"{label} -{suffix}"] = [_cell(c, "losses") for c in cells]
        frame[f"{label} p-value{suffix}"] = [_cell(c, "p_value") for c in cells]
        if corrected:
            frame[f"{label} reject{suffix}"] = [
                c is not None and c.p_adjusted <= alpha for c in cells
            ]
            frame[f"{label} p-value corrected{suffix}"] = [_cell(c, "p_adjusted") for c in cells]


def _correcting(results: Results) -> bool:
    return results.evaluation.plan.comparing.correction != "none"


def _cell(row: Any, column: str) -> float:
    return math.nan if row is None else float(getattr(row, column))


def _highlighted(frame: Any, labels: list[str], highlight: str | None) -> Any:
    """The frame, or its Styler with each measure's best value in bold or green (as pt.Experiment
    marks it)."""
    if highlight is None:
        return frame
    style = {"bold": "font-weight: bold", "color": "background-color: lightgreen",
             "colour": "background-color: lightgreen"}.get(highlight)  # fmt: skip
    if style is None:
        from pipeline.errors import SpecError

        raise SpecError(f"highlight: {highlight!r}; give 'bold' or 'color'")
    best = lambda column: [style if v == column.max() else "" for v in column]  # noqa: E731
    return frame.style.apply(best, subset=labels)
