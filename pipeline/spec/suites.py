"""The spec's suites (`suites:`) and its discriminative power (`discrimination:`).

A suite is a named list of collections whose means a paper reports together (BEIR's 13 to 18
collections and their mean). Every run evaluated under one of a suite's collections is a run of
the suite, and must be evaluated under all of them: a mean over the collections a run happens to
have would put runs side by side that were measured on different collections, so a run lacking
one is refused, naming the run and the collection. A suite's metrics are the spec's: every
collection has every metric, so a suite row has one value per metric.

Discriminative power (Sakai 2006) counts, per collection, metric and test, the pairs of runs a
test finds significant after the correction; its `tests` are the comparison tests' names.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from pipeline.spec.base import StrictModel, at_key, did_you_mean
from pipeline.spec.compare import CORRECTIONS, TESTS, checked_correction, checked_tests

__all__ = ["Discrimination", "check_per_collection", "check_suites"]


class Discrimination(StrictModel):
    """Discriminative power: the share of a collection's pairs of runs a test finds significant."""

    tests: list[Literal[TESTS]] = Field(  # type: ignore[valid-type]
        ["randomization"],
        min_length=1,
        description="the tests whose significant pairs are counted (compare's test names)",
        json_schema_extra={"uniqueItems": True},
    )
    alpha: float = Field(0.05, gt=0, lt=1, description="significance level, in (0, 1)")
    correction: Literal[CORRECTIONS] | None = Field(  # type: ignore[valid-type]
        None,
        description="correction over each collection's pairs of one metric and one test (the "
        "Tukey tests correct themselves); default: the compare section's, else holm",
    )

    @field_validator("tests", mode="before")
    @classmethod
    def _tests(cls, value: Any) -> Any:
        return checked_tests(value)

    @field_validator("correction", mode="before")
    @classmethod
    def _correction(cls, value: Any) -> Any:
        return checked_correction(value)


def check_suites(suites: dict[str, list[str]], collections: dict, runs: dict) -> None:
    """Each suite names known collections, once each, under a name no collection has; every run
    of a suite is evaluated under all its collections (an error at the key otherwise)."""
    for name, members in suites.items():
        if name in collections:
            raise at_key(("suites", name), f"'{name}' names a collection too; give the suite "
                                           "another name (tables show both in one column)")  # fmt: skip
        if not members:
            raise at_key(("suites", name), "a suite lists at least one collection")
        for i, member in enumerate(members):
            if member not in collections:
                hint = did_you_mean(member, list(collections))
                raise at_key(("suites", name, i), f"unknown collection '{member}'; {hint}"
                                                  f"collections: {', '.join(collections)}")  # fmt: skip
            if member in members[:i]:
                raise at_key(("suites", name, i), f"'{member}' is listed twice; list it once")
        _check_runs(name, members, runs)


def _check_runs(name: str, members: list[str], runs: dict) -> None:
    for run_name, run in runs.items():
        under = set(run.collections)
        lacking = [c for c in members if c not in under]
        if under & set(members) and lacking:
            raise at_key(
                ("runs", run_name),
                f"run '{run_name}' is evaluated under collections of suite '{name}' but not "
                f"under '{lacking[0]}'; a suite's mean needs every run on all its collections "
                f"({', '.join(members)}): add it to the run's collections, or leave the run's "
                "collections out of the suite",
            )


def check_per_collection(spec: Any) -> None:
    """What a run with one file per collection cannot be part of yet: each file is evaluated as
    a run of its own and renamed once evaluated, so the Spark engine (which evaluates runs
    elsewhere), a history (whose results are kept by run), pools (which read a run's rows by
    name) and fusions (likewise) refuse it; and no other run may be named as its files are
    loaded (`inputs.file_name`)."""
    split = {n: r for n, r in spec.file_runs().items() if r.per_collection}
    if not split:
        return
    _check_names(spec, split)
    why = f"run '{next(iter(split))}' has one file per collection, which"
    if spec.settings.engine == "spark":
        raise at_key(("settings", "engine"), f"{why} the duckdb engine evaluates (not spark)")
    if spec.history is not None:
        raise at_key(("history",), f"{why} a history does not keep yet; leave history out, or "
                                   "give the run one file for its collections")  # fmt: skip
    _check_readers(spec, split)


def _check_names(spec: Any, split: dict) -> None:
    loaded = {f.loaded_as: f for n, r in split.items() for f in r.files(n)}
    for other in spec.runs:
        if other in loaded:
            file = loaded[other]
            raise at_key(("runs", other), f"run '{other}' has the name that run '{file.run}''s "
                                          f"file for collection '{file.collections[0]}' is "
                                          "evaluated under; rename it")  # fmt: skip


def _check_readers(spec: Any, split: dict) -> None:
    """No fused run nor pool reads a run with one file per collection."""
    for fused, inputs in spec.fused_inputs().items():
        inside = [r for r, _ in inputs if r in split]
        if inside:
            raise at_key(("runs", fused), f"run '{inside[0]}' has one file per collection, "
                                          "which a fused run does not read yet")  # fmt: skip
    for name, pool in spec.pools.items():
        named = [r for r, run in split.items() if pool.collection in run.collections]
        pooled = named if pool.runs == "all" else [r for r in pool.runs if r in split]
        if pooled:
            raise at_key(("pools", name), f"run '{pooled[0]}' has one file per collection, "
                                          "which pools do not read yet")  # fmt: skip
