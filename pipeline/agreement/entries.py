"""The `agreement:` and `correlation:` entries resolved against the spec and checked before any
data is read, each error naming its key: the judgment sets are collections with qrels, the
metrics are the spec's, and an ordering has at least `MIN_RUNS` runs. Nothing here imports
numpy: `irpipe validate` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.agreement.plan import (
    MIN_RUNS,
    AgreementEntry,
    AgreementPlan,
    CorrelationEntry,
    Ordering,
    Side,
)
from pipeline.compare.plan import check_extra
from pipeline.errors import SpecError
from pipeline.measures.resolved import metric_labelled
from pipeline.spec.base import did_you_mean

if TYPE_CHECKING:
    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.spec import Agreement, Correlation, LoadedSpec

__all__ = ["agreement_entry", "agreement_orderings", "correlation_entry", "agreement_plan"]


def agreement_plan(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool = True
) -> AgreementPlan | None:
    """The spec's agreement and correlation entries resolved, or None without any; SpecError
    naming the key when a collection, a metric or the runs do not fit. `data=False`: run
    patterns were not expanded (their runs are not counted)."""
    spec = loaded.spec
    if not spec.agreement and not spec.correlation:
        return None
    if data:
        check_extra(loaded.where(_first_key(spec)), "comparing judgments needs", ("numpy",))
    agreements = tuple(agreement_entry(loaded, i) for i in range(len(spec.agreement)))
    correlations = [agreement_orderings(loaded, a, metrics, data) for a in agreements]
    correlations += [correlation_entry(loaded, i, metrics, data)
                     for i in range(len(spec.correlation))]  # fmt: skip
    return AgreementPlan(agreements, tuple(c for c in correlations if c.orderings))


def _first_key(spec) -> str:
    return "agreement" if spec.agreement else "correlation"


def agreement_entry(loaded: LoadedSpec, index: int) -> AgreementEntry:
    """Agreement entry `index`: two distinct judgment sets of the spec."""
    entry = loaded.spec.agreement[index]
    key = ("agreement", index)
    for role in ("reference", "other"):
        _check_judgment_set(loaded, (*key, role), getattr(entry, role))
    if entry.reference == entry.other:
        raise SpecError(
            f"{loaded.where(*key, 'other')}: '{entry.other}' is the reference itself; "
            "name another judgment set (a collection of the spec)"
        )
    return AgreementEntry(key, entry.reference, entry.other, tuple(entry.thresholds))


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


def agreement_orderings(
    loaded: LoadedSpec, entry: AgreementEntry, metrics: list[ResolvedMeasure], data: bool
) -> CorrelationEntry:
    """The orderings of an agreement entry: per metric by which runs are better or worse (not a
    count, not a diagnostic), the runs under both sets; none when no run is evaluated under
    both (then only the labels are compared)."""
    shared = _runs_under(loaded, entry.reference) & _runs_under(loaded, entry.other)
    if shared:
        _check_runs(loaded, entry.key, shared, f"under both '{entry.reference}' and "
                    f"'{entry.other}'", data)  # fmt: skip
    ranked = [m for m in metrics if m.averaged and m.measure.better is not None] if shared else []
    orderings = tuple(
        Ordering(_side(entry.reference, m), _side(entry.other, m), None, m.label) for m in ranked
    )
    spec_entry = loaded.spec.agreement[entry.key[1]]
    return _correlation_plan(spec_entry, entry.key, orderings)


def correlation_entry(
    loaded: LoadedSpec, index: int, metrics: list[ResolvedMeasure], data: bool
) -> CorrelationEntry:
    """Correlation entry `index`: two metrics ordering the runs of one set."""
    entry, key = loaded.spec.correlation[index], ("correlation", index)
    collection = _correlated_collection(loaded, key, entry.collection)
    sides = [_metric(loaded, (*key, role), getattr(entry, role), metrics)
             for role in ("reference", "other")]  # fmt: skip
    if entry.reference == entry.other:
        raise SpecError(f"{loaded.where(*key, 'other')}: '{entry.other}' is the reference "
                        "itself; name another metric of the spec")  # fmt: skip
    _check_runs(loaded, key, _runs_under(loaded, collection), f"of '{collection}'", data)
    ordering = Ordering(_side(collection, sides[0]), _side(collection, sides[1]), collection, None)
    return _correlation_plan(entry, key, (ordering,))


def _correlation_plan(
    entry: Agreement | Correlation, key: tuple, orderings: tuple[Ordering, ...]
) -> CorrelationEntry:
    return CorrelationEntry(key, entry.reference, entry.other, orderings, entry.rbo_p,
                           entry.bootstrap, entry.seed, entry.alpha)  # fmt: skip


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
    found = metric_labelled(loaded.where(*key), label, metrics, "name it")
    if not found.averaged:
        why = "has no number per run (a text metric, or one not aggregated over queries)"
    elif found.measure.better is None:
        why = "orders no runs: they are not better or worse by it (a count or a diagnostic)"
    else:
        return found
    raise SpecError(f"{loaded.where(*key)}: '{label}' {why}; order the runs by a metric of "
                    "quality, such as AP")  # fmt: skip


def _side(collection: str, metric: ResolvedMeasure) -> Side:
    measure = metric.measure
    return Side(collection, metric.label, metric.aggregator, measure.better == "lower")


def _runs_under(loaded: LoadedSpec, collection: str) -> set[str]:
    return {name for name, run in loaded.spec.runs.items() if collection in run.collections}


def _check_runs(loaded: LoadedSpec, key: tuple, runs: set[str], which: str, data: bool) -> None:
    """At least MIN_RUNS runs to order (a pattern not expanded, `data=False`, is not counted)."""
    patterns = any(any(c in str(getattr(loaded.spec.runs[r], "path", "")) for c in "*?[")
                   for r in runs)  # fmt: skip
    if len(runs) < MIN_RUNS and not (patterns and not data):
        raise SpecError(
            f"{loaded.where(*key)}: {len(runs)} run(s) {which} ({', '.join(sorted(runs))}): "
            f"an ordering of fewer than {MIN_RUNS} runs has nothing to correlate; add runs"
        )
