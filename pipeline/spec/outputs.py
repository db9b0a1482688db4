"""The spec's `outputs:`: each result table (or plot of one) to write, its level, and the keys a
level reads (recall levels of curves, the metric and baseline of a difference plot)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from pipeline.spec.base import StrictModel, resolve_path

__all__ = [
    "CURVE_LEVELS",
    "DIFF_LEVELS",
    "JUDGMENT_LEVELS",
    "Output",
]


#: the levels that take `recall_levels`, and those that need `metric` and `baseline`
CURVE_LEVELS = ("pr_curve", "pr_plot")

DIFF_LEVELS = ("diff_plot",)

#: the levels of the judgment sets' comparisons (`agreement:`, `correlation:`), each its table
JUDGMENT_LEVELS = ("agreement", "confusion", "correlation")


class Output(StrictModel):
    """A result table (or a plot of one) written to a file; its format comes from the suffix."""

    path: Path = Field(
        description="where to write: .csv, .tsv, .parquet, .jsonl, .duckdb, .md; .png, .svg "
        "(plots); .tex, .html (reports)"
    )
    level: Literal[
        "query",
        "aggregate",
        "pr_curve",
        "pr_plot",
        "diff_plot",
        "comparison",
        "report",
        "run",
        "agreement",
        "confusion",
        "correlation",
    ] = Field(
        "aggregate",
        description="query: one row per query; aggregate: one per run and metric; pr_curve: "
        "interpolated precision per run and recall level; pr_plot: those curves as a plot; "
        "diff_plot: per-query differences of `metric` against the `baseline` run, as a plot; "
        "comparison: one row per paired test (needs compare); report: the table for a paper "
        "(.md, .tex, .html): runs by metrics, best in bold, significance marks; run: the fused "
        "run `run` as a TREC run file (.trec, .txt, .run); agreement: the statistics of each "
        "agreement entry; confusion: its pairs by (reference grade, other grade); correlation: "
        "the statistics of two orderings of the runs",
    )
    recall_levels: Literal[11, 101] | None = Field(
        None,
        validate_default=True,
        description="pr_curve and pr_plot: 11 (0.0, 0.1, ..., 1.0, the default) or 101 "
        "(0.00, 0.01, ..., 1.00) recall levels",
    )
    metric: str | None = Field(
        None, validate_default=True, description="diff_plot: the metric (a label in the tables)"
    )
    baseline: str | None = Field(
        None, validate_default=True, description="diff_plot: the run the others are compared to"
    )
    run: str | None = Field(
        None, validate_default=True, description="run: the fused run written (its name)"
    )

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, value: Any, info: ValidationInfo) -> Any:
        return resolve_path(Path(value), info) if isinstance(value, str) else value

    @field_validator("recall_levels")
    @classmethod
    def _curve_only(cls, value: Any, info: ValidationInfo) -> Any:
        # `level` is validated first (fields go in order); absent if it was itself wrong
        level = info.data.get("level")
        if value is not None and level is not None and level not in CURVE_LEVELS:
            raise _level_error(info.field_name, level, CURVE_LEVELS)
        return value

    @field_validator("run")
    @classmethod
    def _run_only(cls, value: Any, info: ValidationInfo) -> Any:
        level = info.data.get("level")
        if level is None or (value is None) == (level != "run"):
            return value
        if value is None:
            raise PydanticCustomError(
                "missing_for_level", "level run needs run: the name of the fused run written"
            )
        raise _level_error(info.field_name, level, ("run",))

    @field_validator("metric", "baseline")
    @classmethod
    def _diff_only(cls, value: Any, info: ValidationInfo) -> Any:
        level = info.data.get("level")
        if level is None or (value is None) == (level not in DIFF_LEVELS):
            return value
        if value is None:
            raise PydanticCustomError(
                "missing_for_level",
                "level {level} needs {key}: the {what}",
                {"level": level, "key": info.field_name, "what": _DIFF_KEYS[info.field_name]},
            )
        raise _level_error(info.field_name, level, DIFF_LEVELS)


_DIFF_KEYS = {
    "metric": "metric whose per-query differences are drawn (a label in the tables)",
    "baseline": "run every other run of its collection is compared to",
}


def _level_error(key: str, level: str, levels: tuple[str, ...]) -> PydanticCustomError:
    """A key given for a level that does not read it."""
    return PydanticCustomError(
        "not_for_level",
        "{key} is for level {levels}, not {level}; remove it or change the level",
        {"key": key, "level": level, "levels": " or ".join(levels)},
    )
