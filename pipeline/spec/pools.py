"""The `pools:` section of a spec: judgment pools built from runs, and their analysis.

Checked like every section (strict, unknown keys named); what needs the runs and collections is
checked in `pipeline.pools.plan`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from pipeline.spec.base import StrictModel, resolve_path
from pipeline.spec.levels import POOL_LEVELS, describe

__all__ = ["METHODS", "POOL_LEVELS", "Pool", "PoolOutput"]

#: how documents enter a pool: each run's top k, or the top n of a fusion, or n drawn at random
METHODS = ("depth", "rrf", "combsum", "uniform")


class PoolOutput(StrictModel):
    """One table of a pool written to a file; the format comes from the suffix."""

    path: Path = Field(
        description="where to write: .txt or .qrels (level pool: qid 0 docno -1), .csv, .tsv, "
        ".parquet, .jsonl, .duckdb, .md"
    )
    level: Literal[POOL_LEVELS] = Field(  # type: ignore[valid-type]
        "pool",
        description=describe(POOL_LEVELS),
    )

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, value: Any, info: ValidationInfo) -> Any:
        return resolve_path(Path(value), info) if isinstance(value, str) else value


class Pool(StrictModel):
    """A judgment pool over runs of one collection, and the outputs that describe it."""

    collection: str = Field(description="the collection whose runs are pooled")
    runs: Literal["all"] | list[str] = Field(
        "all", description="all (every run of the collection) or a list of run names"
    )
    method: dict[str, int] = Field(
        {"depth": 100},
        description="depth: k (each run's top k, TREC's pool); rrf: n or combsum: n (the top n "
        "of a fusion of the runs); uniform: n (drawn at random from every retrieved document)",
    )
    seed: int = Field(0, description="seed of the judging order (and of uniform's draw)")
    exclude: Path | None = Field(
        None, description="qrels of documents already judged (an earlier round): left out"
    )
    groups: str | None = Field(
        None,
        description="leave_one_out: a regular expression over run names; runs whose match (its "
        "first group, if it has one) is equal are left out together, as one team",
    )
    metrics: list[str] | None = Field(
        None, min_length=1, description="leave_one_out: metric labels (default: every metric)"
    )
    judged_at: int = Field(10, ge=1, description="leave_one_out: k of Judged@k, per run")
    outputs: list[PoolOutput] = Field([], description="the pool's tables")

    @field_validator("method")
    @classmethod
    def _one_method(cls, value: dict[str, int]) -> dict[str, int]:
        if len(value) != 1 or next(iter(value)) not in METHODS:
            raise PydanticCustomError(
                "pool_method",
                "give one method and its size, e.g. {example}; methods: {methods}",
                {"example": "{depth: 100}", "methods": ", ".join(METHODS)},
            )
        ((name, size),) = value.items()
        if size <= 0:
            what = "depth" if name == "depth" else "number of documents per query"
            raise PydanticCustomError(
                "pool_size", "{name}: the {what} must be at least 1, not {size}",
                {"name": name, "what": what, "size": size},
            )  # fmt: skip
        return value

    @field_validator("exclude", mode="before")
    @classmethod
    def _exclude(cls, value: Any, info: ValidationInfo) -> Any:
        return resolve_path(Path(value), info) if isinstance(value, str) else value

    @property
    def kind(self) -> str:
        """The method's name: depth, rrf, combsum or uniform."""
        return next(iter(self.method))

    @property
    def size(self) -> int:
        """The method's k or n."""
        return next(iter(self.method.values()))
