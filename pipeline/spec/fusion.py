"""A fused run in a spec: `runs: {hybrid: {fuse: [bm25, dense], method: rrf, k: 60}}` or
`{fuse: {bm25: 0.3, dense: 0.7}, method: wsum, norm: min-max, depth: 1000}`. It is evaluated,
compared and recorded like a run read from a file; its rows are computed from its inputs' rows
(`pipeline.plan.fusion`). `resolved_fusions` checks the inputs against the spec's runs.
"""

from __future__ import annotations

import math
from fnmatch import fnmatchcase
from typing import Any, Literal

from pydantic import Field, field_validator

from pipeline.spec.base import StrictModel, at_key
from pipeline.spec.judgment_sets import CollectionNames, check_collection_names, collection_names

__all__ = ["FUSION_METHODS", "NORMALIZATIONS", "FusedRun", "Tune", "resolved_fusions"]

#: each method, and whether its formula reads the inputs' scores (else their ranks)
FUSION_METHODS = {
    "rrf": False, "isr": False, "log_isr": False, "borda": False, "condorcet": False,
    "combsum": True, "combmnz": True, "combanz": True, "combmax": True, "combmin": True,
    "combmed": True, "wsum": True, "wmnz": True,
}  # fmt: skip
#: the methods that take a weight for each input
WEIGHTED = ("rrf", "wsum", "wmnz")
#: the options that only some methods read, and those methods (`depth` and `collection` are
#: read by every method; `tune` and weights by the WEIGHTED ones, checked with the inputs)
READ_BY = {
    "k": ("rrf",),
    "norm": tuple(method for method, scores in FUSION_METHODS.items() if scores),
}
NORMALIZATIONS = ("none", "min-max", "max", "sum", "z-score", "rank", "borda")


class Tune(StrictModel):
    """Weights chosen by cross-validation over the queries: each fold's queries are fused with
    the weights best on the other folds' queries, never with weights chosen on themselves."""

    metric: str = Field(description="the metric the weights are chosen by (a metric string)")
    grid: float = Field(
        0.1,
        gt=0,
        le=0.5,
        description="the weights' step: every weighting on this grid that sums to 1",
    )
    folds: int = Field(5, ge=2, description="folds of the queries")
    seed: int = Field(1, description="seed of the queries' shuffle into folds")

    @field_validator("grid")
    @classmethod
    def _divides_one(cls, value: float) -> float:
        if abs(round(1 / value) * value - 1) > 1e-9:
            raise ValueError(f"the weights sum to 1 in steps of grid: 1 / {value} is not whole")
        return value


class FusedRun(StrictModel):
    """A run fused from other runs of the spec (of one collection)."""

    fuse: list[str] | dict[str, float] = Field(
        min_length=1,
        description="the runs fused: names or glob patterns of the spec's runs, or a mapping of "
        "names to weights (rrf, wsum, wmnz)",
    )
    method: Literal[tuple(FUSION_METHODS)] = Field(  # type: ignore[valid-type]
        "rrf", description="how the inputs' documents are combined (configs/README.md: Fusing runs)"
    )
    norm: Literal[NORMALIZATIONS] | None = Field(  # type: ignore[valid-type]
        None,
        description="how each input's scores are normalized per query first (default: min-max "
        "for the score methods, none for the rank methods)",
    )
    k: int = Field(60, ge=0, description="rrf: the constant added to each rank")
    depth: int | None = Field(
        None, ge=1, description="only each input's first `depth` documents of a query are fused"
    )
    collection: CollectionNames | None = Field(
        None,
        description="the collection, or a list of them (default: its inputs', which must be "
        "evaluated under the same ones); each must be one every input is evaluated under",
    )
    tune: Tune | None = Field(
        None, description="choose the weights (rrf, wsum, wmnz) by cross-validation over queries"
    )

    _names = field_validator("collection", mode="before")(check_collection_names)

    @property
    def collections(self) -> tuple[str, ...]:
        """The collections the fused run is evaluated under (set from its inputs' when the spec
        gives none, by `resolved_fusions`)."""
        return collection_names(self.collection)

    @field_validator("fuse")
    @classmethod
    def _weights(cls, value: Any) -> Any:
        # not `w < 0` alone: NaN passes it, and would fuse every document to NaN
        if isinstance(value, dict) and not all(0 <= w < math.inf for w in value.values()):
            raise ValueError("weights must be finite numbers, 0 or more")
        return value

    @property
    def normalization(self) -> str:
        """The normalization applied: the one given, else the method's default."""
        if self.norm is not None:
            return self.norm
        return "min-max" if FUSION_METHODS[self.method] else "none"

    def definition(self, inputs: list[tuple[str, float]]) -> dict[str, Any]:
        """What the fused run is, as provenance and history keys record it."""
        found = {"method": self.method, "norm": self.normalization, "inputs": inputs}
        if self.method == "rrf":
            found["k"] = self.k
        if self.depth is not None:
            found["depth"] = self.depth
        if self.tune is not None:
            found["tune"] = self.tune.model_dump()
        return found


def resolved_fusions(runs: dict[str, Any]) -> dict[str, list[tuple[str, float]]]:
    """Each fused run's inputs, (run name, weight) in spec order; `runs` gets each fused run
    with its collection set. A spec error names the key and the problem when an input is
    unknown, fused itself, of another collection, or weighted for a method that takes none."""
    files = {name: run for name, run in runs.items() if not isinstance(run, FusedRun)}
    found = {}
    for name, run in list(runs.items()):
        if isinstance(run, FusedRun):
            found[name] = _inputs(name, run, files, runs)
            collection = _collection(name, run, {i: files[i] for i, _ in found[name]})
            runs[name] = run.model_copy(update={"collection": collection})
    return found


def _options_read(name: str, run: FusedRun) -> None:
    """Every option given explicitly is read by the method (a default never counts): a `k`
    given to combsum would otherwise be ignored without a word."""
    for option, methods in READ_BY.items():
        if option in run.model_fields_set and run.method not in methods:
            raise at_key(
                ("runs", name, option),
                f"method {run.method} takes no {option}: only {', '.join(methods)} "
                f"read{'s' * (len(methods) == 1)} it; remove it, or change the method",
            )


def _inputs(name: str, run: FusedRun, files: dict, runs: dict) -> list[tuple[str, float]]:
    _options_read(name, run)
    given = run.fuse if isinstance(run.fuse, dict) else dict.fromkeys(run.fuse, 1.0)
    if run.tune is not None and (isinstance(run.fuse, dict) or run.method not in WEIGHTED):
        raise at_key(
            ("runs", name, "tune"),
            "tune chooses the weights of rrf, wsum or wmnz: give the runs as a list, and one "
            "of those methods",
        )
    if isinstance(run.fuse, dict) and run.method not in WEIGHTED:
        raise at_key(
            ("runs", name, "fuse"),
            f"method {run.method} takes no weights; give the runs as a list, or use "
            f"{', '.join(WEIGHTED)}",
        )
    inputs: dict[str, float] = {}
    for entry, weight in given.items():
        matched = [r for r in files if r == entry or fnmatchcase(r, entry)]
        if not matched:
            fused = " (a fused run: fuse its inputs instead)" if entry in runs else ""
            raise at_key(
                ("runs", name, "fuse"), f"no run {entry!r}{fused}; the runs: {', '.join(files)}"
            )
        inputs.update(dict.fromkeys((r for r in matched if r not in inputs), weight))
    if len(inputs) < 2:
        raise at_key(("runs", name, "fuse"), f"fusing needs two runs or more, found {list(inputs)}")
    return list(inputs.items())


def _collection(name: str, run: FusedRun, inputs: dict[str, Any]) -> str | list[str]:
    """The fused run's collections: those given, each one every input is evaluated under; else
    its inputs', which must be the same for every input. A tuned run has one (its weights are
    chosen by a metric under one judgment set)."""
    shared = set.intersection(*(set(i.collections) for i in inputs.values()))
    given = collection_names(run.collection)
    for collection in given:
        if collection not in shared:
            raise at_key(
                ("runs", name, "collection"),
                f"not every run it fuses is evaluated under collection '{collection}' (they "
                f"share: {', '.join(sorted(shared)) or 'none'}); a fused run is evaluated under "
                "collections of its inputs",
            )
    found = given or next(iter(inputs.values())).collections
    if not given and any(set(i.collections) != set(found) for i in inputs.values()):
        named = f", or name those it is evaluated under (they share {', '.join(sorted(shared))})"
        raise at_key(
            ("runs", name, "fuse"),
            f"its runs are of different collections ({_of_each(inputs)}); fuse runs of one "
            f"collection{named if shared else ''}",
        )
    if run.tune is not None and len(found) > 1:
        raise at_key(
            ("runs", name, "tune"),
            f"tune chooses the weights by a metric under one collection, and the run is "
            f"evaluated under {', '.join(found)}: name one (collection: {found[0]})",
        )
    return found[0] if len(found) == 1 else list(found)


def _of_each(inputs: dict[str, Any]) -> str:
    return "; ".join(f"{name}: {', '.join(i.collections)}" for name, i in inputs.items())
