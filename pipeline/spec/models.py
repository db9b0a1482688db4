"""Pydantic models of the YAML spec. Strict: unknown keys and wrong types are errors."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    field_validator,
    model_validator,
)

from pipeline import interrupts
from pipeline.spec import judgment_sets
from pipeline.spec.base import StrictModel, at_key, string_or_mapping
from pipeline.spec.checks import Expect, Gate, StatisticGate, gate_kind
from pipeline.spec.compare import Compare
from pipeline.spec.fusion import FusedRun, resolved_fusions
from pipeline.spec.history import History
from pipeline.spec.inputs import Collection, InputPath, Run, is_uri
from pipeline.spec.judgment_sets import Overlay
from pipeline.spec.judgments import Agreement, Correlation
from pipeline.spec.outputs import Output
from pipeline.spec.pools import Pool
from pipeline.spec.reproduction import Reproduction
from pipeline.spec.settings import Settings
from pipeline.spec.suites import Discrimination, check_per_collection, check_suites

__all__ = [
    "is_uri",
    "Agreement",
    "Collection",
    "Compare",
    "Correlation",
    "Discrimination",
    "Expect",
    "FusedRun",
    "Gate",
    "History",
    "StatisticGate",
    "MetricItem",
    "Overlay",
    "Reproduction",
    "SparkSection",
    "Run",
    "Settings",
    "Spec",
]


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


@interrupts.deferring  # pydantic-core calls it: a KeyboardInterrupt there was printed as ignored
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
    pools, judgment sets compared, and reproductions measured."""

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
    suites: dict[str, list[str]] = Field(
        {},
        description="suites of collections by name (BEIR's): per suite, run and metric the mean "
        "of the collections' means (macro), the mean over every query of every collection "
        "(micro) and n_collections; every run of a suite is evaluated under all its collections",
    )
    discrimination: Discrimination | None = Field(
        None,
        description="discriminative power: per collection, metric and test, the pairs of runs "
        "and the share a test finds significant (discrimination: {} for the defaults)",
    )
    reproduction: list[Reproduction] = Field(
        [], description="original runs and their reproductions: how far the reproduction "
        "reproduces them (repro_eval's measures)",
    )  # fmt: skip
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

    @field_validator("discrimination", mode="before")
    @classmethod
    def _bare_discrimination(cls, value: Any) -> Any:
        return {} if value is None else value

    @model_validator(mode="after")
    def _fusions(self) -> Spec:
        judgment_sets.overlay_order(self.collections)  # every overlay's sets known, no cycle
        self._fused_inputs = resolved_fusions(self.runs)
        check_per_collection(self)
        check_suites(self.suites, self.collections, self.runs)  # fused runs' collections known
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
