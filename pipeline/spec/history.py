"""The `history:` key of a spec: where evaluations are remembered (`pipeline.history`).

`history: results/history.duckdb` is the short form of `history: {path: ...}`; a relative path
is relative to the spec, like every path in it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator

from pipeline.spec.base import StrictModel, resolve_path, string_or_mapping


class History(StrictModel):
    """A DuckDB file appended to by every evaluation, and the cache of unchanged runs."""

    model_config = ConfigDict(
        **StrictModel.model_config,
        json_schema_extra=string_or_mapping("the history's DuckDB file (the short form)"),
    )

    path: Path = Field(description="the history's DuckDB file (created when missing)")
    dashboard: Path | None = Field(
        None,
        description="a directory where `irpipe run` writes the history's dashboard after each "
        "evaluation (as `irpipe dashboard HISTORY --out DIR`; needs irpipe[dashboard])",
    )
    lock_timeout: float = Field(
        60.0,
        gt=0,
        description="seconds to wait for another job writing the history, then fail (exit 6)",
    )

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, value: Any) -> Any:
        return {"path": value} if isinstance(value, str) else value

    @field_validator("path", "dashboard", mode="before")
    @classmethod
    def _path(cls, value: Any, info: ValidationInfo) -> Any:
        return resolve_path(Path(value), info) if isinstance(value, str) else value

    @field_validator("lock_timeout", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        # Strict mode refuses an int for a float; a whole number of seconds is what people write.
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value
