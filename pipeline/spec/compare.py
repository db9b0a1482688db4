"""The `compare:` section of a spec: which runs meet, by which paired tests, corrected how.

Checked like every section (strict, unknown keys named, with "did you mean" for test and
correction names); what needs the runs and metrics is checked in `pipeline.compare.plan`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from pipeline.spec.base import StrictModel, did_you_mean

__all__ = ["CORRECTIONS", "TESTS", "Compare", "checked_correction", "checked_tests"]

TESTS = ("t", "wilcoxon", "sign", "randomization", "bootstrap", "tukey_hsd", "randomised_tukey_hsd")
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

    baseline: str | list[str] | None = Field(
        None, description="a run name, or a list of them: every other run of its collection is "
        "compared with each (a pair of two baselines once, the one listed first its baseline); "
        "omitted: every pair of runs of each collection (the earlier in the spec is the baseline)",
    )  # fmt: skip
    tests: list[Literal[TESTS]] = Field(  # type: ignore[valid-type]
        ["t", "randomization"],
        min_length=1,
        description="tests: t, wilcoxon, sign, randomization (sign flips), bootstrap (paired, "
        "corrected by correction); tukey_hsd, randomised_tukey_hsd (all pairs of runs at once, "
        "the family-wise error controlled by the test)",
        json_schema_extra={"uniqueItems": True},
    )
    correction: Literal[CORRECTIONS] = Field(  # type: ignore[valid-type]
        "holm",
        description="multiple-comparison correction over each family (the comparisons of one "
        "metric and one test): none, bonferroni, holm, bh (Benjamini-Hochberg); the Tukey "
        "tests correct themselves",
    )
    alpha: float = Field(0.05, gt=0, lt=1, description="significance level, in (0, 1)")
    samples: Annotated[int, Field(ge=1)] | Literal["exact"] = Field(
        100_000,
        description="samples of randomization, bootstrap and randomised_tukey_hsd; exact: "
        "every sign flip (randomization, at most 16 queries)",
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

    @field_validator("baseline")
    @classmethod
    def _baselines(cls, value: Any) -> Any:
        if isinstance(value, list):
            if not value:
                raise _invalid("an empty list of baselines; name a run, or leave baseline out")
            if len(set(value)) < len(value):
                raise _invalid("a baseline is listed twice; list each once")
        return value

    @field_validator("tests", mode="before")
    @classmethod
    def _tests(cls, value: Any) -> Any:
        return checked_tests(value)

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


def checked_tests(value: Any) -> Any:
    """A list of tests (`compare.tests`, `discrimination.tests`): known names, each once."""
    if isinstance(value, list):
        for test in value:
            _one_of("test", test, TESTS)
        if len(set(map(str, value))) < len(value):
            raise _invalid("a test is listed twice; list each once")
    return value


def checked_correction(value: Any) -> Any:
    """A correction's name, known (None passes: a section's default)."""
    if value is not None:
        _one_of("correction", value, CORRECTIONS)
    return value


def _invalid(message: str) -> PydanticCustomError:
    return PydanticCustomError("invalid", "{message}", {"message": message})
