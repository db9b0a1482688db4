"""The `compare:` section resolved against the spec and checked before any data is read.

Which runs meet which: with a `baseline`, every other run of the baseline's collection is compared
with it; with a list of baselines, with each of those that are runs of the collection, a pair of
two baselines once (the one listed first being the pair's baseline); without one, every pair of runs of each collection, the run earlier in the spec being the
pair's baseline. Comparisons stay within a collection: a run evaluated under several is compared
under each, with the runs of that collection (a baseline evaluated under several collections is
compared with each one's runs). Which metrics: those named (by their labels in the tables), or every metric with
per-query numbers. Nothing here imports numpy: `irpipe validate` stays fast.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from importlib.util import find_spec
from typing import TYPE_CHECKING

from pipeline.errors import IrpipeWarning, SpecError
from pipeline.measures.resolved import metric_labelled
from pipeline.spec.base import did_you_mean

if TYPE_CHECKING:
    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.spec import LoadedSpec

__all__ = [
    "ComparePlan",
    "all_pairs",
    "check_compare",
    "check_extra",
    "compare_plan",
    "compared_metrics",
]

#: fewer samples than this make a p-value too coarse to correct for many comparisons
FEW_SAMPLES = 1000
#: the tests that draw samples and cannot enumerate them, as a message names them
_DRAWN = {"bootstrap": "the bootstrap", "randomised_tukey_hsd": "randomised_tukey_hsd"}
EXACT_MAX_QUERIES = 16  # 2^16 sign flips: the exact test stays a fraction of a second


@dataclass(frozen=True)
class ComparePlan:
    """The resolved `compare:` section: settings, metrics (label -> aggregator) and, per
    collection, its runs in spec order."""

    baseline: str | tuple[str, ...] | None
    tests: tuple[str, ...]
    correction: str
    alpha: float
    samples: int | str
    seed: int
    min_difference: float | None
    metrics: tuple[tuple[str, str], ...]
    collections: tuple[tuple[str, tuple[str, ...]], ...]
    #: which way each compared metric improves (label -> higher, lower, or None: neither)
    directions: tuple[tuple[str, str | None], ...] = ()
    #: each compared suite and its runs: compared on their means per collection, paired by
    #: collection (`table.fetch_blocks`)
    suites: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def baselines(self) -> tuple[str, ...]:
        """The baselines as a list (one, several, or none)."""
        if self.baseline is None:
            return ()
        return (self.baseline,) if isinstance(self.baseline, str) else self.baseline

    def pairs(self, runs: tuple[str, ...]) -> list[tuple[str, str]]:
        """(run, baseline) of each comparison among a collection's runs, in table order: each
        baseline's in turn (a pair of two baselines under the one listed first), else every pair."""
        if self.baseline is None:
            return all_pairs(runs)
        mine = [base for base in self.baselines if base in runs]
        return [(run, base) for i, base in enumerate(mine) for run in runs
                if run != base and run not in mine[:i]]  # fmt: skip

    def references(self, runs: tuple[str, ...]) -> tuple[str, ...]:
        """The runs a report's marks compare with: the baselines among `runs` (in the listed
        order), else the collection's first run."""
        return tuple(base for base in self.baselines if base in runs) or runs[:1]

    def manifest(self) -> dict:
        """The settings as every output records them, with what a correction's family is."""
        baseline = self.baseline
        return {
            "baseline": list(baseline) if isinstance(baseline, tuple) else baseline,
            "tests": list(self.tests),
            "correction": self.correction,
            "family": _FAMILY_OF_SUITES if self.suites else _FAMILY,
            "alpha": self.alpha,
            "samples": self.samples,
            "seed": self.seed,
            "metrics": [label for label, _ in self.metrics],
            "min_difference": self.min_difference,
        }


_FAMILY = "every comparison of one metric and one test in the spec"
_FAMILY_OF_SUITES = (
    "every comparison of one metric and one test on the spec's collections; on each suite, "
    "every comparison of one metric and one test of its means"
)


def all_pairs(runs: tuple[str, ...]) -> list[tuple[str, str]]:
    """(run, baseline) of every pair of `runs`, once, the earlier run being the baseline."""
    return [(runs[j], runs[i]) for i in range(len(runs)) for j in range(i + 1, len(runs))]


def compare_plan(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool = True
) -> ComparePlan | None:
    """The spec's `compare:` resolved, or None when it has none; SpecError naming the key when a
    run, a metric or a collection does not fit. `data=False`: run patterns were not expanded."""
    spec = loaded.spec
    section = spec.compare
    if section is None:
        return None
    _check_baseline(loaded, data)
    chosen = compared_metrics(loaded, metrics)
    drawn = [test for test in _DRAWN if test in section.tests]
    if section.samples == "exact" and drawn:
        raise SpecError(
            f"{loaded.where('compare', 'samples')}: exact enumerates the randomization test's "
            f"sign flips; {_DRAWN[drawn[0]]} needs a number of samples (e.g. 100000)"
        )
    baseline = section.baseline
    return ComparePlan(
        tuple(baseline) if isinstance(baseline, list) else baseline,
        tuple(section.tests),
        section.correction,
        section.alpha,
        section.samples,
        section.seed,
        section.min_difference,
        chosen,
        _collections(loaded, data),
        tuple((m.label, m.better) for m in metrics if m.label in dict(chosen)),
        _suites(loaded),
    )


def check_compare(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool
) -> ComparePlan | None:
    """The spec's `compare:` resolved (`compare_plan`), once everything about comparisons that
    can be checked before data is read is checked, with warnings for what is allowed but
    doubtful; with `data`, also that irpipe[compare] is installed."""
    plan = compare_plan(loaded, metrics, data)
    if plan is None:
        return None
    if data:
        check_extra(loaded.where("compare"))
    if isinstance(plan.samples, int) and plan.samples < FEW_SAMPLES:
        _warn(
            f"{loaded.where('compare', 'samples')}: {plan.samples} samples give p-values no "
            f"finer than 1/{plan.samples + 1}; use at least {FEW_SAMPLES} (100000 is usual)"
        )
    _warn_uncompared(loaded, plan)
    return plan


def check_extra(
    where: str, needing: str = "comparing runs needs", modules: tuple[str, ...] = ("numpy", "scipy")
) -> None:
    """`modules` are installed (irpipe[compare] has them); else a SpecError naming `where`."""
    missing = [name for name in modules if not _installed(name)]
    if missing:
        raise SpecError(
            f"{where}: {needing} {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed: pip install 'irpipe[compare]'"
        )


def _installed(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _baselines(loaded: LoadedSpec) -> list[tuple[str, tuple]]:
    """Each baseline of the spec with the key naming it (`baseline`, or `baseline.i`)."""
    baseline = loaded.spec.compare.baseline
    if baseline is None:
        return []
    if isinstance(baseline, str):
        return [(baseline, ("compare", "baseline"))]
    return [(name, ("compare", "baseline", i)) for i, name in enumerate(baseline)]


def _check_baseline(loaded: LoadedSpec, data: bool) -> None:
    runs = loaded.spec.runs
    for baseline, key in _baselines(loaded):
        if baseline in runs:
            continue
        # Without data a pattern is one run named by its key: its files' runs are `<key>/<name>`.
        if not data and any(baseline.startswith(f"{n}/") and _pattern(r) for n, r in runs.items()):
            continue
        raise SpecError(
            f"{loaded.where(*key)}: unknown run '{baseline}'; "
            f"{did_you_mean(baseline, list(runs))}runs: {', '.join(runs)}"
        )


def _pattern(run) -> bool:
    return any(c in str(getattr(run, "path", "")) for c in "*?[")


def compared_metrics(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure]
) -> tuple[tuple[str, str], ...]:
    """(label, aggregator) of each metric compared."""
    by_label = {m.label: m for m in metrics}
    named = loaded.spec.compare.metrics
    if named is None:
        chosen = [m for m in metrics if m.averaged]
        if not chosen:
            raise SpecError(
                f"{loaded.where('compare')}: no metric of the spec has per-query numbers to "
                "compare (text metrics and metrics without aggregation have none)"
            )
        return tuple((m.label, m.aggregator) for m in chosen)
    for i, label in enumerate(named):
        _check_metric(loaded, i, label, by_label, named[:i])
    return tuple((label, by_label[label].aggregator) for label in named)


def _check_metric(loaded, i: int, label: str, by_label: dict, earlier: list[str]) -> None:
    where = loaded.where("compare", "metrics", i)
    metric_labelled(where, label, by_label.values(), "compare names metrics")
    if label in earlier:
        raise SpecError(f"{where}: '{label}' is listed twice; list each metric once")
    measure = by_label[label].measure
    if not by_label[label].averaged:
        why = "a text metric" if measure.kind == "text" else "it is not aggregated over queries"
        raise SpecError(f"{where}: '{label}' has no per-query numbers to compare ({why})")


def _collections(loaded: LoadedSpec, data: bool) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each compared collection and its runs (spec order): with a baseline, the baseline's
    collections; without, every collection with runs. A collection with one run is left out
    (`check_compare` warns); an error when no collection is left."""
    spec = loaded.spec
    runs = _runs_by_collection(loaded)
    home = _baseline_collections(loaded)
    if home is not None:
        runs = {c: names for c, names in runs.items() if c in home}
    compared = {
        c: names
        for c, names in runs.items()
        if len(names) > 1 or (not data and any(_pattern(spec.runs[n]) for n in names))
    }
    if not compared:
        collection, names = next(iter(runs.items()))
        raise SpecError(
            f"{loaded.where('compare')}: collection '{collection}' has one run "
            f"('{names[0]}'): there is nothing to compare it with; add a run or remove compare"
        )
    return tuple((c, tuple(names)) for c, names in compared.items())


def _suites(loaded: LoadedSpec) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each suite of two collections or more and its runs (those of its first collection: every
    run of a suite is under all its collections), when a pair of them is compared."""
    runs = _runs_by_collection(loaded)
    baselines = loaded.spec.compare.baseline
    found = []
    for suite, members in loaded.spec.suites.items():
        names = tuple(runs.get(members[0], ()))
        listed = [baselines] if isinstance(baselines, str) else baselines
        compared = listed is None or any(base in names for base in listed)
        if len(members) > 1 and len(names) > 1 and compared:
            found.append((suite, names))
    return tuple(found)


def _runs_by_collection(loaded: LoadedSpec) -> dict[str, list[str]]:
    """Each collection's runs, in spec order (a run evaluated under several is under each)."""
    runs: dict[str, list[str]] = {}
    for name, run in loaded.spec.runs.items():
        for collection in run.collections:
            runs.setdefault(collection, []).append(name)
    return runs


def _baseline_collections(loaded: LoadedSpec) -> tuple[str, ...] | None:
    """The baselines' collections (also when a baseline is a file of an unexpanded pattern)."""
    runs = loaded.spec.runs
    if loaded.spec.compare.baseline is None:
        return None
    found: dict[str, None] = {}
    for baseline, _ in _baselines(loaded):
        if baseline not in runs:
            baseline = next(n for n in runs if baseline.startswith(f"{n}/") and _pattern(runs[n]))
        found.update(dict.fromkeys(runs[baseline].collections))
    return tuple(found)


def _warn_uncompared(loaded: LoadedSpec, plan: ComparePlan) -> None:
    compared = {c for c, _ in plan.collections}
    home = _baseline_collections(loaded)
    for collection, names in _runs_by_collection(loaded).items():
        if collection in compared:
            continue
        if home is not None and collection not in home:
            shown = ", ".join(f"'{c}'" for c in home)
            which = (f"the baseline '{plan.baseline}' is a run" if isinstance(plan.baseline, str)
                     else f"the baselines ({', '.join(plan.baseline)}) are runs")  # fmt: skip
            _warn(
                f"{loaded.where('compare', 'baseline')}: the {len(names)} run(s) of collection "
                f"'{collection}' are not compared: {which} of collection {shown}"
            )
        else:
            _warn(
                f"{loaded.where('compare')}: collection '{collection}' has one run "
                f"('{names[0]}'), which is not compared under it: nothing to compare it with"
            )


def _warn(message: str) -> None:
    warnings.warn(IrpipeWarning(message), stacklevel=4)
