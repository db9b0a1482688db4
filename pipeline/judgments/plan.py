"""The `agreement:` and `correlation:` sections resolved against the spec, before any data is read.

An agreement entry names two judgment sets (collections with qrels); its labels are compared on
the pairs both judge, and, for each metric of the spec with a number per run, the orderings of
the runs evaluated under both sets (matched by run name) are compared. A correlation entry names
two metrics, whose orderings of one set's runs are compared. Each comparison of two orderings is
an `Ordering`: two `Side`s, a (collection, metric) each. Nothing here imports numpy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.compare.plan import check_extra
from pipeline.errors import SpecError
from pipeline.spec.base import did_you_mean
from pipeline.spec.outputs import JUDGMENT_LEVELS

if TYPE_CHECKING:
    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.spec import LoadedSpec

__all__ = [
    "MIN_RUNS",
    "AgreementPlan",
    "CorrelationPlan",
    "JudgmentsPlan",
    "Ordering",
    "Side",
    "collections_of",
    "judgments_plan",
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
class AgreementPlan:
    """One agreement entry: two judgment sets and the grades their labels are binarised at."""

    key: tuple[str | int, ...]  # the entry's key in the spec, for messages
    reference: str
    other: str
    thresholds: tuple[int | float, ...]


@dataclass(frozen=True)
class CorrelationPlan:
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
class JudgmentsPlan:
    """Every agreement entry, and every entry's orderings to correlate."""

    agreements: tuple[AgreementPlan, ...]
    correlations: tuple[CorrelationPlan, ...]

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


def collections_of(run) -> tuple[str, ...]:
    """The collections a run is evaluated under (a spec's run names one, or a list of them)."""
    named = run.collection
    return tuple(named) if isinstance(named, list | tuple) else (named,)


def judgments_plan(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool = True
) -> JudgmentsPlan | None:
    """The spec's agreement and correlation entries resolved, or None without any; SpecError
    naming the key when a collection, a metric or the runs do not fit. `data=False`: run
    patterns were not expanded (their runs are not counted)."""
    spec = loaded.spec
    _check_levels(loaded)
    if not spec.agreement and not spec.correlation:
        return None
    _check_engine(loaded)
    if data:
        check_extra(loaded.where(_first_key(spec)), "comparing judgments needs", ("numpy",))
    numbers = {m.label: m for m in metrics if m.averaged}
    agreements = tuple(_agreement(loaded, i) for i in range(len(spec.agreement)))
    correlations = [_agreement_orderings(loaded, a, numbers, data) for a in agreements]
    correlations += [_correlation(loaded, i, metrics, data) for i in range(len(spec.correlation))]
    return JudgmentsPlan(agreements, tuple(c for c in correlations if c.orderings))


def _first_key(spec) -> str:
    return "agreement" if spec.agreement else "correlation"


def _check_levels(loaded: LoadedSpec) -> None:
    """An output of a judgments level needs entries that make its table."""
    spec = loaded.spec
    made = {"agreement": spec.agreement, "confusion": spec.agreement,
            "correlation": spec.agreement or spec.correlation}  # fmt: skip
    for i, output in enumerate(spec.outputs):
        if output.level in JUDGMENT_LEVELS and not made[output.level]:
            entries = (
                "a correlation or an agreement" if output.level == "correlation" else "an agreement"
            )
            raise SpecError(
                f"{loaded.where('outputs', i, 'level')}: level {output.level} needs {entries} "
                "entry in the spec (agreement: [{reference: SET, other: SET}])"
            )


def _check_engine(loaded: LoadedSpec) -> None:
    if loaded.spec.settings.engine != "duckdb":
        raise SpecError(
            f"{loaded.where(_first_key(loaded.spec))}: judgment sets and orderings are compared "
            "by the duckdb engine (it holds the qrels' labels); evaluate this spec with "
            "settings.engine: duckdb"
        )


def _agreement(loaded: LoadedSpec, index: int) -> AgreementPlan:
    entry = loaded.spec.agreement[index]
    key = ("agreement", index)
    for role in ("reference", "other"):
        _check_judgment_set(loaded, (*key, role), getattr(entry, role))
    if entry.reference == entry.other:
        raise SpecError(
            f"{loaded.where(*key, 'other')}: '{entry.other}' is the reference itself; "
            "name another judgment set (a collection of the spec)"
        )
    return AgreementPlan(key, entry.reference, entry.other, tuple(entry.thresholds))


def _check_judgment_set(loaded: LoadedSpec, key: tuple, name: str) -> None:
    collections = loaded.spec.collections
    if name not in collections:
        known = list(collections)
        raise SpecError(
            f"{loaded.where(*key)}: unknown collection '{name}'; {did_you_mean(name, known)}"
            f"the judgment sets are the spec's collections: {', '.join(known)}"
        )
    if collections[name].qrels is None:
        raise SpecError(f"{loaded.where(*key)}: collection '{name}' has no qrels to compare")


def _agreement_orderings(
    loaded: LoadedSpec, entry: AgreementPlan, numbers: dict, data: bool
) -> CorrelationPlan:
    """The orderings of an agreement entry: per metric, the runs under both sets (none when no
    run is evaluated under both: then only the labels are compared)."""
    shared = _runs_under(loaded, entry.reference) & _runs_under(loaded, entry.other)
    if shared:
        _check_runs(loaded, entry.key, shared, f"under both '{entry.reference}' and "
                    f"'{entry.other}'", data)  # fmt: skip
    orderings = tuple(
        Ordering(_side(entry.reference, m), _side(entry.other, m), None, m.label)
        for m in numbers.values()
        if shared
    )
    return _correlation_plan(loaded, entry.key, entry.reference, entry.other, orderings)


def _correlation(
    loaded: LoadedSpec, index: int, metrics: list[ResolvedMeasure], data: bool
) -> CorrelationPlan:
    entry, key = loaded.spec.correlation[index], ("correlation", index)
    collection = _correlated_collection(loaded, key, entry.collection)
    sides = [_metric(loaded, (*key, role), getattr(entry, role), metrics)
             for role in ("reference", "other")]  # fmt: skip
    if entry.reference == entry.other:
        raise SpecError(f"{loaded.where(*key, 'other')}: '{entry.other}' is the reference "
                        "itself; name another metric of the spec")  # fmt: skip
    _check_runs(loaded, key, _runs_under(loaded, collection), f"of '{collection}'", data)
    ordering = Ordering(_side(collection, sides[0]), _side(collection, sides[1]), collection, None)
    return _correlation_plan(loaded, key, entry.reference, entry.other, (ordering,))


def _correlation_plan(loaded, key: tuple, reference: str, other: str, orderings: tuple):
    entry = loaded.spec.agreement[key[1]] if key[0] == "agreement" else loaded.spec.correlation[key[1]]  # fmt: skip
    return CorrelationPlan(key, reference, other, orderings, entry.rbo_p, entry.bootstrap,
                           entry.seed, entry.alpha)  # fmt: skip


def _correlated_collection(loaded: LoadedSpec, key: tuple, named: str | None) -> str:
    collections = list(loaded.spec.collections)
    if named is None:
        if len(collections) > 1:
            raise SpecError(
                f"{loaded.where(*key)}: the spec has several collections; say which set's runs "
                f"are ordered (collection: one of {', '.join(collections)})"
            )
        return collections[0]
    _check_judgment_set(loaded, (*key, "collection"), named)
    return named


def _metric(loaded, key: tuple, label: str, metrics: list[ResolvedMeasure]) -> ResolvedMeasure:
    found = next((m for m in metrics if m.label == label), None)
    if found is None:
        labels = [m.label for m in metrics]
        raise SpecError(
            f"{loaded.where(*key)}: '{label}' is not a metric of this spec; "
            f"{did_you_mean(label, labels)}name it as the tables do: {', '.join(labels)}"
        )
    if not found.averaged:
        raise SpecError(f"{loaded.where(*key)}: '{label}' has no number per run to order the "
                        "runs by (a text metric, or one not aggregated over queries)")  # fmt: skip
    return found


def _side(collection: str, metric: ResolvedMeasure) -> Side:
    measure = metric.measure
    return Side(collection, metric.label, measure.aggregator, measure.better == "lower")


def _runs_under(loaded: LoadedSpec, collection: str) -> set[str]:
    return {name for name, run in loaded.spec.runs.items() if collection in collections_of(run)}


def _check_runs(loaded: LoadedSpec, key: tuple, runs: set[str], which: str, data: bool) -> None:
    """At least MIN_RUNS runs to order (a pattern not expanded, `data=False`, is not counted)."""
    patterns = any(any(c in str(getattr(loaded.spec.runs[r], "path", "")) for c in "*?[")
                   for r in runs)  # fmt: skip
    if len(runs) < MIN_RUNS and not (patterns and not data):
        raise SpecError(
            f"{loaded.where(*key)}: {len(runs)} run(s) {which} ({', '.join(sorted(runs))}): "
            f"an ordering of fewer than {MIN_RUNS} runs has nothing to correlate; add runs"
        )
