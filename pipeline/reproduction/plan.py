"""What the `reproduction:` section resolves to (`entries.reproduction_plan`): per entry, its
pairs of runs (an original and its reproduction, the baseline's first), the collections they are
evaluated under, whether it is a reproducibility or a replicability study, and how the rankings
are compared; and the metrics whose values are compared.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

__all__ = ["KINDS", "MEASURES", "Pair", "ReproductionEntry", "ReproductionPlan", "RBO_VARIANT"]

#: an entry's kind: its reproductions under the originals' collection, or under another
Kind = Literal["reproducibility", "replicability"]
KINDS: tuple[Kind, ...] = ("reproducibility", "replicability")

#: the measures of the table `reproduction`, in its order (`reproduction.names`' words):
#: per topic and averaged, then per metric, then per advanced run and metric
MEASURES = ("ktu", "rbo", "rmse", "nrmse", "p_value", "er", "delta_ri")

#: the rank-biased overlap computed, as every output's manifest names it
RBO_VARIANT = (
    "repro_eval 0.5.0's (Clarke et al.'s Compatibility code): sum over d = 1..depth of "
    "p^(d-1) |overlap of the top d| / d, divided by the sum of p^(d-1); a ranking shorter than "
    "d counts all its documents; not extrapolated"
)
KTU_VARIANT = (
    "repro_eval 0.5.0's: Kendall's tau between the documents at ranks 1..n of the two rankings, "
    "each document coded by its place in the sorted union of both (docno order); n the shorter "
    "ranking's length (repro_eval refuses rankings of unequal length)"
)


@dataclass(frozen=True)
class Pair:
    """An original run and its reproduction."""

    original: str
    reproduced: str


@dataclass(frozen=True)
class ReproductionEntry:
    """One entry of `reproduction:`: its pairs (the baseline's first), the originals' and the
    reproductions' collections, and the rankings' depth and RBO's persistence."""

    index: int  # its place in `reproduction:` (the table's `entry`)
    pairs: tuple[Pair, ...]
    collection: str
    reproduced_collection: str
    depth: int
    rbo_p: float

    @property
    def kind(self) -> Kind:
        """Reproducibility under the originals' collection; replicability under another."""
        return (
            "reproducibility" if self.collection == self.reproduced_collection else "replicability"
        )

    @property
    def baseline(self) -> Pair:
        return self.pairs[0]

    def manifest(self) -> dict:
        """The entry as outputs record it."""
        return {
            "entry": self.index,
            "kind": self.kind,
            "original": [p.original for p in self.pairs],
            "reproduced": [p.reproduced for p in self.pairs],
            "collection": self.collection,
            "reproduced_collection": self.reproduced_collection,
            "depth": self.depth,
            "rbo_p": self.rbo_p,
        }


@dataclass(frozen=True)
class ReproductionPlan:
    """Every entry, and the metrics (labels, spec order) whose values are compared."""

    entries: tuple[ReproductionEntry, ...]
    metrics: tuple[str, ...]

    @property
    def ranked_runs(self) -> dict[str, int]:
        """The runs whose rankings are compared (reproducibility entries'), each with the
        deepest rank read."""
        depths: dict[str, int] = {}
        for entry in self.entries:
            if entry.kind == "reproducibility":
                for pair in entry.pairs:
                    for run in (pair.original, pair.reproduced):
                        depths[run] = max(depths.get(run, 0), entry.depth)
        return depths

    def manifest(self) -> dict:
        """What the entries compare and how, as every output records it."""
        return {
            "entries": [entry.manifest() for entry in self.entries],
            "metrics": list(self.metrics),
            "ktu": KTU_VARIANT,
            "rbo": RBO_VARIANT,
            "p_value": "two-sided t-test: paired (scipy's ttest_rel) for reproducibility, "
            "unpaired with equal variances (ttest_ind) for replicability",
        }

    def text(self) -> list[str]:
        """One line per entry (`irpipe compile`)."""
        return [f"reproduction {json.dumps(e.manifest(), sort_keys=True)}" for e in self.entries]
