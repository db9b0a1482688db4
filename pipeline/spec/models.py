"""Pydantic models of the YAML spec. Strict: unknown keys and wrong types are errors."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PlainValidator,
    PrivateAttr,
    Tag,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from pipeline.spec import judgment_sets
from pipeline.spec.base import StrictModel, at_key, resolve_path, string_or_mapping
from pipeline.spec.checks import Expect, Gate, StatisticGate, gate_kind
from pipeline.spec.compare import Compare
from pipeline.spec.fusion import FusedRun, resolved_fusions
from pipeline.spec.history import History
from pipeline.spec.judgment_sets import CollectionNames, Overlay, collection_names
from pipeline.spec.judgments import Agreement, Correlation
from pipeline.spec.outputs import Output
from pipeline.spec.pools import Pool

__all__ = [
    "is_uri",
    "Agreement",
    "Collection",
    "Compare",
    "Correlation",
    "Expect",
    "FusedRun",
    "Gate",
    "History",
    "StatisticGate",
    "MetricItem",
    "Overlay",
    "SparkSection",
    "Run",
    "Settings",
    "Spec",
]


#: `scheme://...`: an input the Spark engine reads where it lives (hdfs://, s3a://, file://)
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://.+")


def is_uri(path: Path | str) -> bool:
    """Whether an input path is a URI (kept as text: `Path` would fold its `//`)."""
    return isinstance(path, str) and _URI.fullmatch(path) is not None


def _is_table(path: Path | str | None) -> bool:
    """Whether a qrels input is read as a table (Parquet, an ir_datasets id, a frame)."""
    text = str(path or "")
    return text.startswith(("irds:", "memory://")) or text.lower().endswith(".parquet")


def resolve_input(value: Any, info: ValidationInfo) -> Path | str:
    """An input path: a URI or an ir_datasets id (`irds:...`) stays text, any other string is
    a path relative to the spec."""
    if isinstance(value, Path):
        return value
    if not isinstance(value, str):
        raise PydanticCustomError("input_path", "expected a file path (a string)")
    kept = _URI.fullmatch(value) or value.startswith("irds:")
    return value if kept else resolve_path(Path(value), info)


#: A qrels or run path: a `Path`, a URI as given (read only by the Spark engine), or an
#: ir_datasets id (`irds:msmarco-passage/trec-dl-2019/judged`, read by the duckdb engine)
InputPath = Annotated[
    Path | str,
    PlainValidator(resolve_input),
    WithJsonSchema({"type": "string", "format": "path"}),
]


class Collection(StrictModel):
    """A test collection: its qrels (a file, or built from other collections' qrels) and,
    optionally, its size (for fallout)."""

    qrels: judgment_sets.qrels_source(InputPath) | None = Field(  # type: ignore[valid-type]
        None,
        description="TREC qrels file: qid iter docno rel (plain or .gz); with engine spark also "
        "a directory of part files, Parquet, or a URI (hdfs://, s3a://, file://); or {overlay: "
        "[NAME, ...]}, other collections' qrels overlaid (the first set's label where it has "
        "one); absent before judging: its runs can be pooled (`pools`), not evaluated",
    )
    format: Literal["trec", "beir", "subtopics"] | None = Field(
        None,
        description="how the qrels file is read: trec (qid iter docno rel), beir (BEIR's and "
        "MTEB's TSV: a header line query-id corpus-id score, then one judgment a line) or "
        "subtopics (ndeval's diversity qrels: qid subtopic docno grade; a table: a subtopic "
        "column); by default beir when the file's first line is a BEIR header, else trec",
    )
    num_docs: int | None = Field(None, ge=0, description="documents in the collection")

    @property
    def qrels_file(self) -> Path | str | None:
        """The qrels input read (a path, a URI, a table's name), or None: not yet judged, or
        an overlay of other collections' qrels."""
        return None if isinstance(self.qrels, Overlay) else self.qrels

    @property
    def overlay(self) -> tuple[str, ...]:
        """The collections an overlay is built from, first winning; () for qrels read."""
        return tuple(self.qrels.overlay) if isinstance(self.qrels, Overlay) else ()

    @model_validator(mode="after")
    def _text_format(self) -> Collection:
        judgment_sets.check_format(self.format, self.qrels)
        # A table's columns are named (qid, docno, rel): only a text file has a format.
        if self.format == "beir" and _is_table(self.qrels):
            raise PydanticCustomError(
                "qrels_format",
                "format: beir reads a text file; this qrels is a table (Parquet or ir_datasets), "
                "read by its columns qid, docno, rel: leave format out",
            )
        return self


class Run(StrictModel):
    """A run file evaluated against one collection, or under each of several."""

    path: InputPath = Field(
        description="TREC run file: qid Q0 docno rank score tag (plain or .gz); with engine "
        "spark also a directory of part files, Parquet, or a URI (hdfs://, s3a://, file://)"
    )
    collection: CollectionNames = Field(
        description="name of a collection in `collections`, or a list of them: the run is "
        "evaluated under each (its file read once)"
    )

    _names = field_validator("collection", mode="before")(judgment_sets.check_collection_names)

    @property
    def collections(self) -> tuple[str, ...]:
        """The collections the run is evaluated under, in the spec's order."""
        return collection_names(self.collection)


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


# A metric entry is a string (`nDCG@10`) or a mapping.
_string_or_mapping = string_or_mapping("a metric string, e.g. nDCG@10 or AP(rel=2)")


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


def _run_kind(value: Any) -> str:
    """A run is fused when it says `fuse:`; else it is read from its `path`."""
    fused = isinstance(value, FusedRun) or (isinstance(value, dict) and "fuse" in value)
    return "fused" if fused else "file"


# What `_evaluated` checks, for editors: without agreement entries, runs and metrics are required.
_EVALUATED_SCHEMA = {
    "if": {"not": {"required": ["agreement"], "properties": {"agreement": {"minItems": 1}}}},
    "then": {
        "required": ["runs", "metrics"],
        "properties": {"runs": {"minProperties": 1}, "metrics": {"minItems": 1}},
    },
}


class Spec(StrictModel):
    """The whole spec: collections, runs, settings, metrics, outputs, comparisons, checks,
    pools, and judgment sets compared."""

    model_config = ConfigDict(**StrictModel.model_config, json_schema_extra=_EVALUATED_SCHEMA)

    collections: dict[str, Collection] = Field(
        min_length=1, description="test collections by name: qrels and optional size"
    )
    runs: dict[
        str,
        Annotated[
            Annotated[Run, Tag("file")] | Annotated[FusedRun, Tag("fused")],
            Discriminator(_run_kind),
        ],
    ] = Field(
        {},
        description="runs by name: a file (a path may be a glob pattern: one run per file, "
        "<name>/<stem>), or a fusion of other runs (`fuse:`); at least one, unless the spec "
        "only compares judgment sets (agreement)",
    )
    settings: Settings = Field(Settings(), description="evaluation semantics (all optional)")
    metrics: list[MetricItem] = Field(
        [],
        description="metric strings, or mappings of `metric` and its parameters; at least one, "
        "unless the spec only compares judgment sets (agreement)",
    )
    outputs: list[Output] = Field([], description="result tables; the suffix picks the format")
    compare: Compare | None = Field(
        None, description="paired significance tests between runs (compare: {} for the defaults)"
    )
    expect: list[Expect] = Field(
        [], description="pinned values: run, metric, value and tolerance; outside it, exit 5"
    )
    gates: list[
        Annotated[
            Annotated[Gate, Tag("metric_gate")] | Annotated[StatisticGate, Tag("statistic_gate")],
            Discriminator(gate_kind),
        ]
    ] = Field(
        [], description="regressions that fail the job (exit 5): a metric's largest drop "
        "against the previous evaluation or another run, or a statistic of an agreement or "
        "correlation entry outside its bounds",
    )  # fmt: skip
    history: History | None = Field(
        None, description="a DuckDB file remembering every evaluation; unchanged runs are reused"
    )
    pools: dict[str, Pool] = Field(
        {}, description="judgment pools by name: documents to judge from the runs, and analysis"
    )
    spark: SparkSection | None = Field(
        None, description="where the spark engine runs: master URL and Spark configuration"
    )
    agreement: list[Agreement] = Field(
        [], description="judgment sets compared label by label, and by how they order the runs"
    )
    correlation: list[Correlation] = Field(
        [], description="two metrics compared by how they order the runs of a judgment set"
    )
    _fused_inputs: dict[str, list[tuple[str, float]]] = PrivateAttr(default_factory=dict)

    @field_validator("compare", mode="before")
    @classmethod
    def _bare_compare(cls, value: Any) -> Any:
        # A bare `compare:` line reads as null in YAML; it asks for comparisons with the defaults.
        return {} if value is None else value

    @model_validator(mode="after")
    def _evaluated(self) -> Spec:
        # Runs and metrics may be left out only where judgment sets alone are compared.
        for key in ("runs", "metrics"):
            if not getattr(self, key) and not self.agreement:
                raise at_key((key,), "give at least one; only a spec that compares judgment "
                                     "sets alone (agreement:) may leave it out")  # fmt: skip
        return self

    @model_validator(mode="after")
    def _fusions(self) -> Spec:
        judgment_sets.overlay_order(self.collections)  # every overlay's sets known, no cycle
        self._fused_inputs = resolved_fusions(self.runs)
        return self

    def overlays(self) -> list[str]:
        """The collections whose qrels are overlays, each after the sets it reads."""
        return judgment_sets.overlay_order(self.collections)

    def fused_inputs(self) -> dict[str, list[tuple[str, float]]]:
        """Each fused run's inputs: (run name, weight), in spec order."""
        return self._fused_inputs

    def file_runs(self) -> dict[str, Run]:
        """The runs read from files (or tables), by name: every run but the fused ones."""
        return {name: run for name, run in self.runs.items() if isinstance(run, Run)}


class SparkSection(StrictModel):
    """How `engine: spark` gets its SparkSession. Under spark-submit the active session is used
    as it is (its master and configuration come from spark-submit); otherwise one is built."""

    master: str | None = Field(
        None, description="Spark master URL, e.g. local[4], yarn, spark://host:7077, k8s://..."
    )
    app_name: str = Field("irpipe", description="the application's name in Spark's UI")
    conf: dict[str, str | int | float | bool] = Field(
        {}, description="Spark configuration, e.g. {spark.executor.memory: 8g}"
    )
    partitions: int | None = Field(
        None,
        ge=1,
        description="shards the queries are split into (default: one per 128 MB of input, at "
        "least Spark's default parallelism)",
    )
    per_query: InputPath | None = Field(
        None,
        description="a directory or URI where Spark writes the per-query table as Parquet, "
        "partitioned by collection and run; the driver then collects it only if the spec needs "
        "it there (query-level outputs, compare, history, expect, gates, a bootstrap of "
        "orderings)",
    )
