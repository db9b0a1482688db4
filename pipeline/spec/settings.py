"""The spec's `settings:` section: the evaluation's semantics, each a named setting with a
documented default, recorded in every output (`Settings.resolved`)."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from pipeline.spec.base import StrictModel, at_key

__all__ = ["RUNTIME_SETTINGS", "Settings"]

#: The settings that say where and with what an evaluation runs, never what a number is: recorded
#: in manifests and the history, but not in the bytes of a result (the same spec writes the same
#: table on DuckDB at 1 thread or 8, or on Spark).
RUNTIME_SETTINGS = frozenset({"engine", "threads", "memory_limit"})


def _number(value: Any) -> Any:
    """A relevance level is a finite number (a decimal one only under `grades: real`:
    `Settings`)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PydanticCustomError(
            "level", "Input should be a finite number (an integer; a decimal under grades: real)"
        )
    return value


_SIZE = re.compile(r"[0-9]+(\.[0-9]+)? ?([KMGT]i?B|B)")
_SIZE_SCHEMA = {"pattern": f"^(?:{_SIZE.pattern})$"}  # the same rule for editors


class Settings(StrictModel):
    """Evaluation semantics. Every value is recorded in every output."""

    relevance_level: Annotated[int | float, BeforeValidator(_number)] = Field(
        1, description="grade >= this is relevant (trec_eval -l); a decimal under grades: real"
    )
    ordering: Literal["trec_eval", "rank"] = Field(
        "trec_eval", description="trec_eval: score desc, docno desc; rank: the file's rank column"
    )
    queries: Literal["qrels", "intersection"] | None = Field(
        None,
        description="qrels: every qrels query (missing ones score 0); intersection: run and qrels",
    )
    missing_queries: Literal["value", "trec_eval_c"] = Field(
        "value",
        description="how a qrels query the run lacks is scored (queries: qrels): value: each "
        "metric's value for no ranking; trec_eval_c: as trec_eval -c, a one-document ranking "
        "outside the qrels, then metrics named num_ret, utility, rbp_resid or unj* reset to 0 "
        "and relstring to '', and the summary num_rel counts grades > 0 ignoring rel",
    )
    compatibility: Literal["trec_eval-10", "trec_eval-9"] = Field(
        "trec_eval-10", description="trec_eval-9: float32 scores, (long)(p*R+0.9) recall cutoffs"
    )
    max_docs: int | None = Field(
        None, ge=0, description="keep only the first max_docs of each ranking (trec_eval -M)"
    )
    judged_only: bool = Field(
        False, description="drop unjudged documents and re-rank the rest (trec_eval -J)"
    )
    input: Literal["strict", "lenient"] = Field(
        "strict",
        description="strict: reject scores and grades that are not plainly numbers; "
        "lenient: read them as trec_eval does (C atof/atol: '1,5' is 1)",
    )
    unmatched_runs: Literal["error", "allow"] = Field(
        "error",
        description="error: a run that retrieves no document the qrels judge, in any query it "
        "shares with them, is an input error (exit 3) showing its docnos beside the qrels' "
        "(docnos spelt otherwise, an index's internal ids, the wrong qrels); allow: evaluate it "
        "as it is, as trec_eval does (it scores as having retrieved nothing relevant)",
    )
    grades: Literal["integer", "real"] = Field(
        "integer",
        description="integer: a relevance grade is an integer, and a decimal one an error; "
        "real: grades are finite decimals (soft labels, an LLM's probability of relevance), read "
        "as scores are, and relevance levels and gain mappings may be decimals too",
    )
    memory_limit: str | None = Field(
        None,
        description="DuckDB's memory limit, e.g. 500MB or 2GiB; beyond it, work spills to "
        "temporary files (default: DuckDB's, 80% of RAM); numbers do not change",
        json_schema_extra=_SIZE_SCHEMA,
    )
    threads: int | None = Field(
        None,
        ge=1,
        description="the threads DuckDB works with (Spark's local cores, where the spark: "
        "section names no master); default: every core of the machine; numbers and bytes "
        "do not change with it",
    )
    engine: Literal["duckdb", "spark"] = Field(
        "duckdb",
        description="duckdb: evaluate on this machine; spark: on Apache Spark (the spark: "
        "section), with identical numbers; needs pip install 'irpipe[spark]'",
    )

    @model_validator(mode="after")
    def _integer_level(self) -> Settings:
        # The level compares with grades: a decimal one only where grades are decimals.
        if self.grades == "integer" and isinstance(self.relevance_level, float):
            raise at_key(
                ("settings", "relevance_level"),
                f"{self.relevance_level!r} is a decimal, and grades are integers: give an "
                "integer, or read decimal grades with settings: {grades: real}",
            )
        return self

    @field_validator("memory_limit")
    @classmethod
    def _size(cls, value: str | None) -> str | None:
        if value is not None and not _SIZE.fullmatch(value):
            raise ValueError(f"expected a size such as 500MB or 2GiB, found {value!r}")
        return value

    @property
    def query_set(self) -> str:
        """The effective query set: trec_eval 9.x skipped missing queries, 10.0 -c scores them 0."""
        if self.queries is not None:
            return self.queries
        return "intersection" if self.compatibility == "trec_eval-9" else "qrels"

    def resolved(self) -> dict[str, Any]:
        """Every setting with defaults filled in, as recorded in outputs."""
        return {**self.model_dump(), "queries": self.query_set}
