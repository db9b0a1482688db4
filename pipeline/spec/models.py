"""Pydantic models of the YAML spec. Strict: unknown keys and wrong types are errors."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

__all__ = [
    "did_you_mean",
    "Collection",
    "Compare",
    "CORRECTIONS",
    "MetricItem",
    "Output",
    "Run",
    "Settings",
    "Spec",
    "StrictModel",
    "TESTS",
]


class StrictModel(BaseModel):
    """Frozen, strict, and unknown keys are reported with the allowed ones."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and cls.model_config.get("extra") == "forbid":
            allowed = list(cls.model_fields)
            for key in data:
                if key not in allowed:
                    raise unknown_key_error(key, allowed)
        return data


def unknown_key_error(key: Any, allowed: list[str]) -> PydanticCustomError:
    """The error for a key the model does not know, with a "did you mean" and the allowed keys."""
    return PydanticCustomError(
        "unknown_key",
        "unknown key; {hint}allowed: {allowed}",
        {"key": key, "hint": did_you_mean(str(key), allowed), "allowed": ", ".join(allowed)},
    )


def _resolve(path: Path, info: ValidationInfo) -> Path:
    base = (info.context or {}).get("base_dir")
    return path if path.is_absolute() or base is None else Path(base) / path


class Collection(StrictModel):
    """A test collection: its qrels file and, optionally, its size (for fallout)."""

    qrels: Path = Field(description="TREC qrels file: qid iter docno rel (plain or .gz)")
    num_docs: int | None = Field(None, ge=0, description="documents in the collection")

    @field_validator("qrels", mode="before")
    @classmethod
    def _path(cls, value: Any, info: ValidationInfo) -> Any:
        return _resolve(Path(value), info) if isinstance(value, str) else value


class Run(StrictModel):
    """A run file evaluated against one collection."""

    path: Path = Field(description="TREC run file: qid Q0 docno rank score tag (plain or .gz)")
    collection: str = Field(description="name of a collection in `collections`")

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, value: Any, info: ValidationInfo) -> Any:
        return _resolve(Path(value), info) if isinstance(value, str) else value


_SIZE = re.compile(r"[0-9]+(\.[0-9]+)? ?([KMGT]i?B|B)")
_SIZE_SCHEMA = {"pattern": f"^(?:{_SIZE.pattern})$"}  # the same rule for editors


class Settings(StrictModel):
    """Evaluation semantics. Every value is recorded in every output."""

    relevance_level: int = Field(1, description="grade >= this is relevant (trec_eval -l)")
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
    memory_limit: str | None = Field(
        None,
        description="DuckDB's memory limit, e.g. 500MB or 2GiB; beyond it, work spills to "
        "temporary files (default: DuckDB's, 80% of RAM); numbers do not change",
        json_schema_extra=_SIZE_SCHEMA,
    )

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


def _string_or_mapping(schema: dict[str, Any]) -> None:
    """A metric entry is a string (`nDCG@10`) or a mapping: the JSON Schema says so too."""
    mapping = dict(schema)
    schema.clear()
    schema["title"], schema["description"] = mapping.pop("title"), mapping.pop("description")
    string = {"type": "string", "description": "a metric string, e.g. nDCG@10 or AP(rel=2)"}
    schema["anyOf"] = [string, mapping]


class MetricItem(BaseModel):
    """One metric entry: `metric` plus its parameters (checked later against the metric's model)."""

    model_config = ConfigDict(extra="allow", frozen=True, json_schema_extra=_string_or_mapping)

    metric: str = Field(description="metric name or ir_measures-style string, e.g. nDCG@10")
    label: str | None = Field(None, description="column name in the tables")

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        return {"metric": data} if isinstance(data, str) else data

    @property
    def params(self) -> dict[str, Any]:
        """The parameters given beside `metric` and `label`."""
        return dict(self.model_extra or {})


class Output(StrictModel):
    """A result table written to a file; its format comes from the suffix."""

    path: Path = Field(description="where to write: .csv, .tsv, .parquet, .jsonl, .duckdb, .md")
    level: Literal["query", "aggregate", "comparison", "report"] = Field(
        "aggregate",
        description="query: one row per query; aggregate: one per run and metric; "
        "comparison: one per paired test (needs compare); report: the table for a paper "
        "(.md, .tex, .html): runs by metrics, best in bold, significance marks",
    )

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, value: Any, info: ValidationInfo) -> Any:
        return _resolve(Path(value), info) if isinstance(value, str) else value


TESTS = ("t", "wilcoxon", "sign", "randomization", "bootstrap")
CORRECTIONS = ("none", "bonferroni", "holm", "bh")


def _one_of(kind: str, value: Any, allowed: tuple[str, ...]) -> None:
    """Refuse a name outside `allowed`, with a "did you mean" (pydantic's Literal error has none)."""
    if isinstance(value, str) and value not in allowed:
        raise PydanticCustomError(
            f"unknown_{kind}",
            "unknown {kind} '{value}'; {hint}known: {allowed}",
            {"kind": kind, "value": value, "hint": did_you_mean(value, list(allowed)),
             "allowed": ", ".join(allowed)},
        )  # fmt: skip


class Compare(StrictModel):
    """Paired significance tests between the runs of each collection, over per-query values."""

    baseline: str | None = Field(
        None, description="a run name: every other run of its collection is compared with it; "
        "omitted: every pair of runs of each collection (the earlier in the spec is the baseline)",
    )  # fmt: skip
    tests: list[Literal[TESTS]] = Field(  # type: ignore[valid-type]
        ["t", "randomization"],
        min_length=1,
        description="paired tests: t, wilcoxon, sign, randomization (sign flips), bootstrap",
        json_schema_extra={"uniqueItems": True},
    )
    correction: Literal[CORRECTIONS] = Field(  # type: ignore[valid-type]
        "holm",
        description="multiple-comparison correction over each family (the comparisons of one "
        "metric and one test): none, bonferroni, holm, bh (Benjamini-Hochberg)",
    )
    alpha: float = Field(0.05, gt=0, lt=1, description="significance level, in (0, 1)")
    samples: Annotated[int, Field(ge=1)] | Literal["exact"] = Field(
        100_000,
        description="samples of randomization and bootstrap; exact: every sign flip "
        "(randomization, at most 16 queries)",
    )
    seed: int = Field(0, description="seed of randomization and bootstrap, in every output")
    metrics: list[str] | None = Field(
        None,
        min_length=1,
        description="metric labels to compare (default: every metric with per-query numbers)",
    )
    min_difference: float | None = Field(
        None,
        ge=0,
        description="a smaller difference is not noticeable: marked apart if significant",
    )

    @field_validator("tests", mode="before")
    @classmethod
    def _tests(cls, value: Any) -> Any:
        if isinstance(value, list):
            for test in value:
                _one_of("test", test, TESTS)
            if len(set(map(str, value))) < len(value):
                raise _invalid("a test is listed twice; list each once")
        return value

    @field_validator("correction", mode="before")
    @classmethod
    def _correction(cls, value: Any) -> Any:
        _one_of("correction", value, CORRECTIONS)
        return value

    @field_validator("samples", mode="before")
    @classmethod
    def _samples(cls, value: Any) -> Any:
        # Checked here whole: pydantic would report each member of the union apart.
        number = isinstance(value, int) and not isinstance(value, bool)
        if value == "exact" or (number and value >= 1):
            return value
        raise _invalid(f"expected a number of samples (at least 1) or 'exact', found {value!r}")


def _invalid(message: str) -> PydanticCustomError:
    return PydanticCustomError("invalid", "{message}", {"message": message})


class Spec(StrictModel):
    """The whole spec: collections, runs, settings, metrics and outputs."""

    collections: dict[str, Collection] = Field(
        min_length=1, description="test collections by name: qrels and optional size"
    )
    runs: dict[str, Run] = Field(
        min_length=1,
        description="runs by name; a path may be a glob pattern: one run per file, <name>/<stem>",
    )
    settings: Settings = Field(Settings(), description="evaluation semantics (all optional)")
    metrics: list[MetricItem] = Field(
        min_length=1, description="metric strings, or mappings of `metric` and its parameters"
    )
    outputs: list[Output] = Field([], description="result tables; the suffix picks the format")
    compare: Compare | None = Field(
        None, description="paired significance tests between runs (compare: {} for the defaults)"
    )

    @field_validator("compare", mode="before")
    @classmethod
    def _bare_compare(cls, value: Any) -> Any:
        # A bare `compare:` line reads as null in YAML; it asks for comparisons with the defaults.
        return {} if value is None else value


def did_you_mean(word: str, options: list[str]) -> str:
    """A "did you mean 'x'? " hint, or an empty string when nothing is close."""
    close = difflib.get_close_matches(word, options, n=1)
    return f"did you mean '{close[0]}'? " if close else ""
