"""The statistics' names, as the `statistic` column of the tables `agreement` and `correlation`
holds them, without numpy: validation reads them (a gate on a statistic names one); and how the
tables that show them name grades.

An agreement entry's rows: the counts, the label statistics on the grades, and at each threshold
t the label statistics and the binary ones on the labels binarised at grade >= t, suffixed `@t`
(`threshold_name`). A correlation row: the statistics of two orderings of the runs.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "BINARY_STATISTICS",
    "by_threshold",
    "grade_name",
    "grades_in_order",
    "COUNT_STATISTICS",
    "LABEL_STATISTICS",
    "ORDERING_STATISTICS",
    "threshold_name",
]

#: how many pairs and queries the two sets judge (never at a threshold)
COUNT_STATISTICS = ("pairs_shared", "pairs_reference_only", "pairs_other_only", "queries_shared")
#: the statistics of two label sets, in the order of the table `agreement`
LABEL_STATISTICS = (
    "agreement",
    "cohen_kappa",
    "cohen_kappa_linear",
    "cohen_kappa_quadratic",
    "krippendorff_alpha_nominal",
    "krippendorff_alpha_ordinal",
    "krippendorff_alpha_interval",
)
#: the other set's relevant labels against the reference's (only at a threshold)
BINARY_STATISTICS = ("precision", "recall", "f1")
#: the statistics of two orderings, in the order of the table `correlation`
ORDERING_STATISTICS = ("kendall_tau_b", "tau_ap", "spearman", "pearson", "rbo", "max_rank_drop")


def threshold_name(threshold: float) -> str:
    """A threshold as statistics' names end: `@2`, `@0.5`."""
    return f"@{threshold:g}" if float(threshold).is_integer() else f"@{threshold!r}"


def by_threshold(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """Statistics' names apart, as a table lays them out: their bases (`cohen_kappa`) and the
    thresholds they are taken at (`2` of `cohen_kappa@2`), each once, in order."""
    names = list(names)
    bases = list(dict.fromkeys(name.partition("@")[0] for name in names))
    return bases, list(dict.fromkeys(name.partition("@")[2] for name in names if "@" in name))


def grades_in_order(found: Iterable) -> list:
    """The grades of a confusion table's cells, in order, no grade (None: a pair the set does
    not judge) last."""
    grades = set(found)
    return sorted(g for g in grades if g is not None) + ([None] if None in grades else [])


def grade_name(grade) -> str:
    """A grade as a table shows it: `2`, `0.5`, or `none`."""
    return "none" if grade is None else f"{grade:g}"
