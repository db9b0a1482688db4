"""The `expect:` and `gates:` sections of a spec: values pinned with a tolerance, and regressions
that fail the job: a metric's drop (`Gate`), or a statistic of the judgment sets' comparisons
outside its bounds (`StatisticGate`).

Checked like every section (strict, unknown keys named with "did you mean"); what needs the runs,
the metrics and the compare section (an unknown run or metric, a metric with no direction, a
significance test the comparisons do not make) is checked in `pipeline.checks.plan`, before any
data is read.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from pipeline import interrupts
from pipeline.spec.base import StrictModel, unknown_key_error

__all__ = [
    "DEFAULT_TOLERANCE",
    "AgainstRun",
    "Expect",
    "Gate",
    "GATE_KINDS",
    "StatisticGate",
    "gate_kind",
]

#: Half a unit of the 4th decimal: expected values are copied from tables printed to 4 decimals
#: (trec_eval's %.4f, irpipe's summary, papers), so a value that prints the same passes.
DEFAULT_TOLERANCE = 0.00005

#: An expected value, a tolerance, a drop or a bound that is NaN or infinite (YAML's `.nan`,
#: `.inf`) would make its check pass or fail whatever the value: each is an error naming its key.
FINITE = ConfigDict(allow_inf_nan=False)


class Expect(StrictModel):
    """A pinned value (as Anserini's regressions keep them): the run's aggregate of the metric
    must be within `tolerance` of `value`."""

    model_config = FINITE

    run: str = Field(description="a run name (a run of a path pattern: <name>/<file's name>)")
    metric: str = Field(description="a metric as the tables name it (its label), e.g. nDCG@10")
    value: float = Field(description="the expected aggregate value")
    tolerance: float = Field(
        DEFAULT_TOLERANCE,
        ge=0,
        description="largest accepted difference (default 0.00005: half a unit of the 4th "
        "decimal, so a value that prints the same to 4 decimals passes)",
    )
    two_sided: bool = Field(
        False,
        description="false: a value better than expected passes (as Anserini); true: any "
        "difference beyond the tolerance fails (always so for a metric with no direction)",
    )
    collection: str | None = Field(
        None,
        description="the collection the value is under: required when the run is evaluated "
        "under several (a value belongs to one judgment set), else the run's",
    )


class AgainstRun(StrictModel):
    """Another run of the same evaluation as the reference of a gate."""

    run: str = Field(description="the reference run; the gated runs are its collection's")


class Gate(StrictModel):
    """A regression that fails the job: the metric must not drop by more than `max_drop` from
    the reference, the previous evaluation in the history or another run."""

    model_config = FINITE

    metric: str = Field(description="a metric as the tables name it (its label), e.g. nDCG@10")
    against: Literal["previous"] | AgainstRun = Field(
        description="previous: each run's value in the latest earlier evaluation in the "
        "history; {run: NAME}: that run's value in this evaluation"
    )
    max_drop: float = Field(
        0.0,
        ge=0,
        description="largest accepted drop, in the metric's units and direction (a rise for a "
        "metric where lower is better); default 0: any drop fails",
    )
    run: str | None = Field(
        None,
        description="the run to gate (default: every run; against a run, every other run of "
        "its collection)",
    )
    significant: bool = Field(
        False,
        description="fail only on a drop that is also significant, by the compare section's "
        "first test (and its correction over the gate's runs)",
    )
    collection: str | None = Field(
        None,
        description="gate the values under this collection only (default: under each "
        "collection a gated run is evaluated under, each checked apart)",
    )

    @field_validator("against", mode="before")
    @classmethod
    def _against(cls, value: Any) -> Any:
        # Checked here whole: pydantic would report each member of the union apart.
        if value == "previous" or isinstance(value, AgainstRun):
            return value
        if not isinstance(value, dict):
            _invalid(f"expected 'previous' or a mapping {{run: NAME}}, found {value!r}")
        for key in value:
            if key != "run":
                raise unknown_key_error(key, ["run"])
        if not isinstance(value.get("run"), str):
            _invalid(f"expected {{run: NAME}}, a run's name, found {value!r}")
        return AgainstRun(run=value["run"])


class StatisticGate(StrictModel):
    """A statistic of an agreement or a correlation entry that must stay within bounds (as
    Cohen's kappa of an LLM's labels against people's, or Kendall's tau of the orderings they
    give): outside, the job fails."""

    model_config = FINITE

    statistic: str = Field(
        description="a statistic as the tables agreement and correlation name it: cohen_kappa, "
        "cohen_kappa@2 (at a threshold of the entry), kendall_tau_b, tau_ap, ..."
    )
    reference: str = Field(
        description="the entry's reference: a judgment set (of an agreement entry) or a metric "
        "(of a correlation entry)"
    )
    other: str = Field(description="the entry's other judgment set, or other metric")
    metric: str | None = Field(
        None,
        description="a correlation statistic of an agreement entry: the metric whose two "
        "orderings of the runs are compared (default: each metric the entry orders them by)",
    )
    collection: str | None = Field(
        None,
        description="a correlation entry's collection, when entries compare the same two "
        "metrics under several (default: each)",
    )
    min: float | None = Field(None, description="the lowest accepted value")
    max: float | None = Field(None, description="the highest accepted value")

    @model_validator(mode="before")
    @classmethod
    def _named(cls, data: Any) -> Any:
        # A bound without a statistic is most likely meant for a metric: say what each gate is.
        if isinstance(data, dict) and "statistic" not in data:
            _invalid(
                "min and max bound a statistic of an agreement or correlation entry: name it "
                "(statistic: cohen_kappa, reference: SET, other: SET); a metric is gated by its "
                "drop (metric:, against:, max_drop:)"
            )
        return data

    @model_validator(mode="after")
    def _bounded(self) -> StatisticGate:
        if self.min is None and self.max is None:
            _invalid("give the accepted values' bound: min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            _invalid(f"min {self.min:g} is above max {self.max:g}: no value can pass")
        return self


#: the kinds of gate, as `gate_kind` tells them apart (a tag of the spec's models, not a key)
GATE_KINDS = ("metric_gate", "statistic_gate")


@interrupts.deferring  # pydantic-core calls it, as a discriminator
def gate_kind(value: Any) -> str:
    """A gate bounds a statistic when it says `statistic:` (or gives a bound: `min`, `max`);
    else it is a metric's drop."""
    keys = set(value) if isinstance(value, dict) else set()
    bound = isinstance(value, StatisticGate) or bool(keys & {"statistic", "min", "max"})
    return GATE_KINDS[1] if bound else GATE_KINDS[0]


def _invalid(message: str) -> None:
    raise PydanticCustomError("invalid", "{message}", {"message": message})
