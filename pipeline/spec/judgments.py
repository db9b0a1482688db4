"""The `agreement:` and `correlation:` sections of a spec: which judgment sets are compared
label by label, and which orderings of the runs are compared.

Checked like every section (strict, unknown keys named); what needs the collections, the runs and
the metrics is checked in `pipeline.agreement.plan`, before any data is read.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from pipeline.spec.base import StrictModel

__all__ = ["Agreement", "Correlation"]


# The keys both kinds of entry take, declared once: how two orderings of the runs are compared
# (the depth weight of rank-biased overlap, and the bootstrap over queries giving intervals).
RboP = Annotated[
    float,
    Field(gt=0, lt=1, description="the persistence p of rank-biased overlap (rbo), in (0, 1)"),
]
Bootstrap = Annotated[
    Annotated[int, Field(ge=1)] | None,
    Field(
        description="samples of a bootstrap over queries that gives each correlation statistic "
        "a percentile interval (ci_low, ci_high); none: no interval",
    ),
]
Seed = Annotated[int, Field(description="the seed of the bootstrap's draws")]
Alpha = Annotated[float, Field(gt=0, lt=1, description="intervals are at 1 - alpha")]


class Agreement(StrictModel):
    """Two judgment sets (collections) compared on the (qid, docno) pairs both judge; and, for
    each metric of the spec, the orderings of the runs evaluated under both."""

    reference: str = Field(description="the reference judgment set: a collection's name")
    other: str = Field(description="the judgment set compared with it: a collection's name")
    thresholds: list[int | float] = Field(
        [],
        description="grades t at which the labels are also binarised (relevant: grade >= t): "
        "each statistic again, suffixed @t, with precision@t, recall@t and f1@t",
        json_schema_extra={"uniqueItems": True},
    )
    rbo_p: RboP = 0.9
    bootstrap: Bootstrap = None
    seed: Seed = 0
    alpha: Alpha = 0.05

    @field_validator("thresholds")
    @classmethod
    def _once(cls, value: list[int | float]) -> list[int | float]:
        if len(set(value)) < len(value):
            raise PydanticCustomError("invalid", "a threshold is listed twice; list each once")
        return value

    @field_validator("thresholds", mode="before")
    @classmethod
    def _numbers(cls, value: Any) -> Any:
        # strict mode reads True as a number of neither kind; say what a threshold is
        if isinstance(value, list) and any(isinstance(t, bool) for t in value):
            raise PydanticCustomError("invalid", "a threshold is a grade (a number)")
        return value


class Correlation(StrictModel):
    """Two metrics compared by how they order the runs of one judgment set."""

    reference: str = Field(description="the reference metric (its label in the tables)")
    other: str = Field(description="the metric compared with it (its label in the tables)")
    collection: str | None = Field(
        None, description="the judgment set (collection) the runs are evaluated under; "
        "none: the spec's only collection",
    )  # fmt: skip
    rbo_p: RboP = 0.9
    bootstrap: Bootstrap = None
    seed: Seed = 0
    alpha: Alpha = 0.05
