"""The spec's `outputs:`: each result table (or plot of one) to write, its level, and the keys a
level reads (recall levels of curves, the metric and baseline of a difference plot)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from pipeline.errors import SpecError
from pipeline.spec.base import StrictModel, resolve_path
from pipeline.spec.levels import (
    CURVE_LEVELS,
    DIFF_LEVELS,
    JUDGMENT_LEVELS,
    OUTPUT_LEVELS,
    PER_RUN_LEVELS,
    describe,
    level_of,
    levels_reading,
)

__all__ = [
    "CURVE_LEVELS",
    "DIFF_LEVELS",
    "JUDGMENT_LEVELS",
    "PER_RUN_LEVELS",
    "Output",
    "RunFile",
    "run_files",
]


class Output(StrictModel):
    """A result table (or a plot of one) written to a file; its format comes from the suffix."""

    path: Path = Field(
        description="where to write: .csv, .tsv, .parquet, .jsonl, .duckdb, .md; .png, .svg "
        "(plots); .tex, .html (reports)"
    )
    level: Literal[OUTPUT_LEVELS] = Field(  # type: ignore[valid-type]
        "aggregate",
        description=describe(OUTPUT_LEVELS),
    )
    recall_levels: Literal[11, 101] | None = Field(
        None,
        validate_default=True,
        description="pr_curve and pr_plot: 11 (0.0, 0.1, ..., 1.0, the default) or 101 "
        "(0.00, 0.01, ..., 1.00) recall levels",
    )
    metric: str | None = Field(
        None,
        validate_default=True,
        description="diff_plot: the metric (a label in the tables); tradeoff: the effectiveness "
        "metric",
    )
    baseline: str | None = Field(
        None, validate_default=True, description="diff_plot: the run the others are compared to"
    )
    run: str | None = Field(
        None, validate_default=True, description="run: the fused run written (its name)"
    )
    latency: str | None = Field(
        None,
        validate_default=True,
        description="tradeoff: the latency statistic drawn against `metric` (a Latency or QPS "
        "metric, by its label in the tables)",
    )

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, value: Any, info: ValidationInfo) -> Any:
        return resolve_path(Path(value), info) if isinstance(value, str) else value

    @field_validator("level")
    @classmethod
    def _per_run_path(cls, value: Any, info: ValidationInfo) -> Any:
        path = info.data.get("path")
        if level_of(value).is_per_run and path is not None and _RUN not in str(path):
            raise PydanticCustomError(
                "missing_for_level",
                "level {level} writes one file per run: its path must hold {run}, e.g. "
                "out/ir_metadata/{run}.yaml",
                {"level": value, "run": _RUN},
            )
        return value

    @field_validator("recall_levels")
    @classmethod
    def _curve_only(cls, value: Any, info: ValidationInfo) -> Any:
        # `level` is validated first (fields go in order); absent if it was itself wrong
        level = info.data.get("level")
        if value is not None and level is not None and not level_of(level).is_curve:
            raise _level_error(info.field_name, level)
        return value

    @field_validator("run")
    @classmethod
    def _run_only(cls, value: Any, info: ValidationInfo) -> Any:
        level = info.data.get("level")
        if level is None or (value is None) == (not level_of(level).is_run_file):
            return value
        if value is None:
            raise PydanticCustomError(
                "missing_for_level", "level run needs run: the name of the fused run written"
            )
        raise _level_error(info.field_name, level)

    @field_validator("metric", "baseline", "latency")
    @classmethod
    def _diff_only(cls, value: Any, info: ValidationInfo) -> Any:
        level = info.data.get("level")
        if level is None or (value is None) == (info.field_name not in level_of(level).keys):
            return value
        if value is None:
            raise PydanticCustomError(
                "missing_for_level",
                "level {level} needs {key}: the {what}",
                {"level": level, "key": info.field_name, "what": _DIFF_KEYS[info.field_name]},
            )
        raise _level_error(info.field_name, level)


_DIFF_KEYS = {
    "metric": "metric drawn (a label in the tables)",
    "baseline": "run every other run of its collection is compared to",
    "latency": "latency statistic drawn against the metric (a Latency or QPS metric's label)",
}


def _level_error(key: str, level: str) -> PydanticCustomError:
    """A key given for a level that does not read it."""
    return PydanticCustomError(
        "not_for_level",
        "{key} is for level {levels}, not {level}; remove it or change the level",
        {"key": key, "level": level, "levels": " or ".join(levels_reading(key))},
    )


_RUN, _COLLECTION = "{run}", "{collection}"


@dataclass(frozen=True)
class RunFile:
    """One file of a per-run output: the run and collection it describes, and its path."""

    collection: str
    run: str
    path: Path


def run_files(output: Output, runs: Mapping[str, Any], where: str) -> list[RunFile]:
    """The files a per-run output writes, in spec order: its path with `{run}` (and
    `{collection}`) filled in, for each run and collection it is evaluated under. SpecError
    (beginning with `where`) where a run's name would lead out of the path's directory, or two
    runs would write one file."""
    found: dict[Path, RunFile] = {}
    for run, entry in runs.items():
        for collection in entry.collections:
            file = RunFile(collection, run, _filled(output.path, run, collection, where))
            if file.path in found:
                raise SpecError(_clash(where, found[file.path], file))
            found[file.path] = file
    return list(found.values())


def _filled(pattern: Path, run: str, collection: str, where: str) -> Path:
    for name, value in (("run", run), ("collection", collection)):
        parts = value.replace("\\", "/").split("/")
        if value.startswith("/") or any(part in ("", ".", "..") for part in parts):
            raise SpecError(
                f"{where}: the {name} '{value}' cannot name a file ('{{{name}}}' in the path): "
                f"rename it, or name each file otherwise"
            )
    text = str(pattern).replace(_RUN, run).replace(_COLLECTION, collection)
    return Path(text)


def _clash(where: str, first: RunFile, second: RunFile) -> str:
    fix = (
        "add {collection} to the path"
        if first.run == second.run
        else "give the path a part that tells them apart"
    )
    return (
        f"{where}: run {first.run} under {first.collection} and run {second.run} under "
        f"{second.collection} would both write {first.path}; {fix}"
    )
