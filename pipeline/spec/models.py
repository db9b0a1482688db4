"""Pydantic models of the YAML spec. Strict: unknown keys and wrong types are errors."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
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

from pipeline.inputs.formats import QRELS_FORMATS
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
from pipeline.spec.settings import Settings

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
    format: Literal[QRELS_FORMATS] | None = Field(  # type: ignore[valid-type]
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
    names: Literal["file", "ir_metadata"] = Field(
        "file",
        description="how a glob pattern in `path` names each file's run, <key>/<name>: file (the "
        "file's name without compression and run suffix; input.<tag> by its tag) or ir_metadata "
        "(the tag of the ir_metadata block in the file's opening # lines; a file without one is "
        "an input error)",
    )

    _names = field_validator("collection", mode="before")(judgment_sets.check_collection_names)

    @property
    def collections(self) -> tuple[str, ...]:
        """The collections the run is evaluated under, in the spec's order."""
        return collection_names(self.collection)


# A metric entry is a string (`nDCG@10`) or a mapping.
_string_or_mapping = string_or_mapping("a metric string, e.g. nDCG@10 or AP(rel=2)")


class MetricItem(BaseModel):
    """One metric entry: `metric` plus its parameters (checked later against the metric's model)."""

    model_config = ConfigDict(
        extra="allow", frozen=True, defer_build=True, json_schema_extra=_string_or_mapping
    )

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


def _settings_default(schema: dict[str, Any]) -> None:
    schema["default"] = Settings().model_dump(mode="json")


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
    # A factory, so that importing the models builds no validator (the schema still shows it).
    settings: Settings = Field(
        default_factory=Settings,
        description="evaluation semantics (all optional)",
        json_schema_extra=_settings_default,
    )
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

    def with_runs(self, runs: dict[str, Run | FusedRun], **update: Any) -> Spec:
        """A copy holding `runs` instead (and `update`'s other fields), its fused runs resolved
        again: a copy made by `model_copy` keeps the fused runs of the spec it copies."""
        copy = self.model_copy(update={"runs": runs, **update})
        copy._fused_inputs = resolved_fusions(copy.runs)
        return copy

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
