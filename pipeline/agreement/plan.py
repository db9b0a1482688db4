"""What the `agreement:` and `correlation:` sections resolve to (`entries.agreement_plan`).

An agreement entry names two judgment sets (collections with qrels); its labels are compared on
the pairs both judge, and, for each metric of the spec by which runs are better or worse, the
orderings of the runs evaluated under both sets (matched by run name) are compared. A
correlation entry names two metrics, whose orderings of one set's runs are compared. Each
comparison of two orderings is an `Ordering`: two `Side`s, a (collection, metric) each.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = [
    "MIN_RUNS",
    "AgreementEntry",
    "CorrelationEntry",
    "AgreementPlan",
    "Ordering",
    "Side",
]

MIN_RUNS = 3  # fewer runs have no ordering worth correlating (two runs: one pair)


@dataclass(frozen=True)
class Side:
    """One ordering of the runs: by `metric`'s value under `collection`; `lower`: a lower value
    is better (such values are negated, so that every statistic reads the best run first)."""

    collection: str
    metric: str
    aggregator: str
    lower: bool


@dataclass(frozen=True)
class Ordering:
    """Two orderings of the same runs compared: the reference's (the truth, for tau_ap) and the
    other's; `collection` and `metric` are the row's columns in the table `correlation` (the
    collection of two metrics compared, or the metric of two judgment sets compared)."""

    reference: Side
    other: Side
    collection: str | None
    metric: str | None


@dataclass(frozen=True)
class AgreementEntry:
    """One agreement entry: two judgment sets and the grades their labels are binarised at."""

    key: tuple[str | int, ...]  # the entry's key in the spec, for messages
    reference: str
    other: str
    thresholds: tuple[int | float, ...]


@dataclass(frozen=True)
class CorrelationEntry:
    """The orderings one entry compares (an agreement's, one per metric; a correlation's, one),
    how (rbo's persistence), and with how many bootstrap samples over queries (None: none)."""

    key: tuple[str | int, ...]
    reference: str
    other: str
    orderings: tuple[Ordering, ...]
    rbo_p: float
    bootstrap: int | None
    seed: int
    alpha: float

    def manifest(self) -> dict:
        """The entry as outputs record it: what it orders, and how."""
        return {
            "reference": self.reference,
            "other": self.other,
            "orderings": [
                o.metric
                if o.metric
                else f"{o.reference.metric} ~ {o.other.metric} in {o.collection}"
                for o in self.orderings
            ],
            "rbo_p": self.rbo_p,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "alpha": self.alpha,
        }


@dataclass(frozen=True)
class AgreementPlan:
    """Every agreement entry, and every entry's orderings to correlate."""

    agreements: tuple[AgreementEntry, ...]
    correlations: tuple[CorrelationEntry, ...]

    def manifest(self) -> dict:
        """What the entries compare and how, as every output records it."""
        return {
            "agreement": [
                {"reference": a.reference, "other": a.other, "thresholds": list(a.thresholds)}
                for a in self.agreements
            ],
            "correlation": [c.manifest() for c in self.correlations],
            "tau_ap": "the reference's order is the truth; ties: the mean over their orders",
            "rbo": "extrapolated; ties ordered by run name",
        }

    def text(self) -> list[str]:
        """One line per entry (`irpipe compile`)."""
        manifest = self.manifest()
        return [f"{kind} {json.dumps(entry, sort_keys=True)}"
                for kind in ("agreement", "correlation") for entry in manifest[kind]]  # fmt: skip
