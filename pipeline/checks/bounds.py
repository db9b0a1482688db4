"""Gates on the statistics of the judgment sets' comparisons: `{statistic: cohen_kappa,
reference: human, other: umbrela, min: 0.4}` fails the job when the statistic falls outside its
bounds.

`bound_rule` resolves a gate before any data is read, each error naming its key: the statistic
must be one the tables hold (a label statistic of an agreement entry, at one of its thresholds
when suffixed `@t`; or a statistic of two orderings, of an agreement entry's metric or of a
correlation entry), and the pair must be an entry's, as the entry names it (tau_ap and the
binary statistics are not symmetric). `bounded` then decides it from the tables `agreement` and
`correlation`: one result per row the gate selects (per metric the entry orders the runs by,
unless `metric:` picks one). An undefined statistic (one grade only, an ordering all tied) has
no value, and fails, as a metric's missing value does. Nothing here imports numpy or DuckDB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pipeline.agreement.names import (
    BINARY_STATISTICS,
    COUNT_STATISTICS,
    LABEL_STATISTICS,
    ORDERING_STATISTICS,
    threshold_name,
)
from pipeline.checks.outcome import SLACK, CheckResult, missing
from pipeline.errors import SpecError
from pipeline.spec.base import did_you_mean

if TYPE_CHECKING:
    import duckdb

    from pipeline.agreement.plan import AgreementPlan
    from pipeline.spec import LoadedSpec
    from pipeline.spec.checks import StatisticGate

__all__ = ["BoundRule", "bound_rule", "bounded"]

_LABELS = (*COUNT_STATISTICS, *LABEL_STATISTICS, *BINARY_STATISTICS)


@dataclass(frozen=True)
class BoundRule:
    """One gate on a statistic, resolved: the rows it reads (of `table`, by reference, other
    and statistic; `metric` and `collection` None: every row) and its bounds."""

    key: str
    where: str
    table: str  # agreement or correlation
    statistic: str
    reference: str
    other: str
    metric: str | None
    collection: str | None
    low: float | None
    high: float | None

    def text(self) -> str:
        """The gate in words (`irpipe compile`)."""
        which = "".join(f" {k} {v}" for k, v in (("by", self.metric), ("in", self.collection)) if v)
        subject = f"{self.statistic} of {self.other} against {self.reference}{which}"
        return f"{self.key}: {subject}, {_range(self.low, self.high)}"


def bound_rule(loaded: LoadedSpec, index: int, agreement: AgreementPlan | None) -> BoundRule:
    """Gate `index` (a StatisticGate), resolved against the agreement and correlation entries;
    a SpecError naming the key when its statistic or its pair is not one they give."""
    gate: StatisticGate = loaded.spec.gates[index]
    key = ("gates", index)
    base, at, _ = gate.statistic.partition("@")
    if base not in (*_LABELS, *ORDERING_STATISTICS):
        raise SpecError(_unknown_statistic(loaded.where(*key, "statistic"), gate.statistic))
    if base in ORDERING_STATISTICS and not at:
        return _ordering_rule(loaded, key, gate, agreement)
    return _label_rule(loaded, key, gate, agreement)


def _rule(loaded: LoadedSpec, key: tuple, gate: StatisticGate, table: str, **rows) -> BoundRule:
    return BoundRule(".".join(map(str, key)), loaded.where(*key), table, gate.statistic,
                     gate.reference, gate.other, rows.get("metric"), rows.get("collection"),
                     gate.min, gate.max)  # fmt: skip


def _unknown_statistic(where: str, name: str) -> str:
    known = [*_LABELS, *ORDERING_STATISTICS]
    return (
        f"{where}: unknown statistic '{name}'; {did_you_mean(name.partition('@')[0], known)}"
        f"the statistics: {', '.join(known)} (a label statistic, or precision, recall and f1, "
        "at a threshold t of its agreement entry: name@t)"
    )


# -- the label statistics of an agreement entry ------------------------------------------------


def _label_rule(loaded, key: tuple, gate: StatisticGate, agreement) -> BoundRule:
    entries = _agreements(loaded, key, gate, agreement, "compares the labels of an agreement entry")
    base, at, _ = gate.statistic.partition("@")
    for name in ("metric", "collection"):
        if getattr(gate, name) is not None:
            raise SpecError(
                f"{loaded.where(*key, name)}: {gate.statistic} compares the labels of two "
                f"judgment sets, not orderings of the runs; leave {name} out"
            )
    if at and base in COUNT_STATISTICS:
        raise SpecError(f"{loaded.where(*key, 'statistic')}: {base} counts pairs or queries; "
                        "it has no threshold: leave @... out")  # fmt: skip
    if not at and base in BINARY_STATISTICS:
        raise SpecError(f"{loaded.where(*key, 'statistic')}: {base} is of binarised labels: "
                        f"name a threshold of the entry, as {base}@1")  # fmt: skip
    if at:
        _check_threshold(loaded, key, gate, entries)
    return _rule(loaded, key, gate, "agreement")


def _check_threshold(loaded, key: tuple, gate: StatisticGate, entries: list) -> None:
    thresholds = {threshold_name(t): t for entry in entries for t in entry.thresholds}
    suffix = "@" + gate.statistic.partition("@")[2]
    if suffix not in thresholds:
        held = ", ".join(f"{t:g}" for t in thresholds.values()) or "none"
        raise SpecError(
            f"{loaded.where(*key, 'statistic')}: the agreement entry of '{gate.reference}' and "
            f"'{gate.other}' has no threshold {suffix[1:]} (its thresholds: {held}); add it to "
            f"{'.'.join(map(str, entries[0].key))}.thresholds"
        )


def _agreements(loaded, key: tuple, gate: StatisticGate, agreement, what: str) -> list:
    """The agreement entries of the gate's pair (several entries may compare one pair)."""
    agreements = agreement.agreements if agreement else ()
    found = [a for a in agreements if (a.reference, a.other) == (gate.reference, gate.other)]
    if found:
        return found
    reversed_ = [a for a in agreements if (a.reference, a.other) == (gate.other, gate.reference)]
    where = loaded.where(*key, "other")
    if reversed_:
        raise SpecError(
            f"{where}: {'.'.join(map(str, reversed_[0].key))} compares '{gate.reference}' and "
            f"'{gate.other}' the other way round (reference: {gate.other}); statistics are of "
            "the other set against the reference (tau_ap, precision and recall are not "
            "symmetric): swap reference and other in the gate, or add an agreement entry"
        )
    pairs = ", ".join(f"{a.reference} ~ {a.other}" for a in agreements) or "none"
    raise SpecError(
        f"{where}: {gate.statistic} {what}, and none compares '{gate.reference}' (reference) "
        f"with '{gate.other}' (other); the agreement entries: {pairs}; add agreement: "
        f"[{{reference: {gate.reference}, other: {gate.other}}}]"
    )


# -- the statistics of two orderings -----------------------------------------------------------


def _ordering_rule(loaded, key: tuple, gate: StatisticGate, agreement) -> BoundRule:
    correlations = agreement.correlations if agreement else ()
    pair = (gate.reference, gate.other)
    of_metrics = [c for c in correlations if (c.reference, c.other) == pair
                  and c.orderings[0].collection is not None]  # fmt: skip
    if of_metrics:
        return _metrics_rule(loaded, key, gate, of_metrics)
    what = "compares two orderings of the runs: of an agreement entry (two judgment sets, by a "
    what += "metric) or of a correlation entry (two metrics)"
    entries = _agreements(loaded, key, gate, agreement, what)
    if gate.collection is not None:
        raise SpecError(f"{loaded.where(*key, 'collection')}: an agreement entry orders the runs "
                        "of its two judgment sets; leave collection out (metric: picks one)")  # fmt: skip
    metrics = [o.metric for c in correlations if (c.reference, c.other) == pair
               for o in c.orderings]  # fmt: skip
    if not metrics:
        raise SpecError(
            f"{loaded.where(*key, 'statistic')}: {'.'.join(map(str, entries[0].key))} orders no "
            f"runs (none is evaluated under both '{gate.reference}' and '{gate.other}'): it has "
            "no correlation statistic to bound"
        )
    if gate.metric is not None and gate.metric not in metrics:
        raise SpecError(
            f"{loaded.where(*key, 'metric')}: the entry orders the runs by {', '.join(metrics)}, "
            f"not by '{gate.metric}'; {did_you_mean(gate.metric, metrics)}name one of them"
        )
    return _rule(loaded, key, gate, "correlation", metric=gate.metric)


def _metrics_rule(loaded, key: tuple, gate: StatisticGate, entries: list) -> BoundRule:
    """A gate on a correlation entry's orderings (two metrics, one collection each entry)."""
    if gate.metric is not None:
        raise SpecError(f"{loaded.where(*key, 'metric')}: '{gate.reference}' and '{gate.other}' "
                        "are the metrics the correlation entry compares; leave metric out")  # fmt: skip
    collections = [c.orderings[0].collection for c in entries]
    if gate.collection is not None and gate.collection not in collections:
        raise SpecError(
            f"{loaded.where(*key, 'collection')}: the correlation entries of '{gate.reference}' "
            f"and '{gate.other}' order the runs of {', '.join(collections)}, not of "
            f"'{gate.collection}'"
        )
    return _rule(loaded, key, gate, "correlation", collection=gate.collection)


# -- deciding ------------------------------------------------------------------------------------


def bounded(con: duckdb.DuckDBPyConnection, rule: BoundRule) -> list[CheckResult]:
    """The gate decided for each row it selects, in the table's order."""
    picked = " AND ".join(f"{c} = ${c}" for c in ("metric", "collection") if getattr(rule, c))
    rows = con.execute(
        f"SELECT collection, {'metric' if rule.table == 'correlation' else 'NULL'}, value "
        f"FROM {rule.table} WHERE reference = $reference AND other = $other "
        f"AND statistic = $statistic{' AND ' + picked if picked else ''}",
        {"reference": rule.reference, "other": rule.other, "statistic": rule.statistic,
         **{c: getattr(rule, c) for c in ("metric", "collection") if getattr(rule, c)}},
    ).fetchall()  # fmt: skip
    return [_result(rule, collection, metric, value) for collection, metric, value in rows]


def _result(rule: BoundRule, collection: str | None, metric: str | None, value) -> CheckResult:
    name = rule.statistic + (f" ({metric})" if metric else "")
    subject = f"{name} of {rule.other} against {rule.reference}"
    result = CheckResult(
        kind="bound", key=rule.key, run=f"{rule.reference}~{rule.other}",
        collection=collection or "", metric=name, against="bounds", reference=None, new=value,
        limit=math.nan, low=rule.low, high=rule.high,
    )  # fmt: skip
    allowed = _range(rule.low, rule.high)
    if missing(value):
        why = "undefined: one grade only, or an ordering all tied"
        return _decided(result, "failed", f"{subject} has no value ({why}); {allowed}")
    below = rule.low is not None and value < rule.low - SLACK
    above = rule.high is not None and value > rule.high + SLACK
    status = "failed" if below or above else "passed"
    return _decided(result, status, f"{subject} is {value:.6g}; {allowed}")


def _decided(result: CheckResult, status: str, message: str) -> CheckResult:
    return replace(result, status=status, message=message)


def _range(low: float | None, high: float | None) -> str:
    """`accepted: 0.4 to 1`, `accepted: at least 0.4`, `accepted: at most 2`."""
    if low is not None and high is not None:
        return f"accepted: {low:g} to {high:g}"
    return f"accepted: at least {low:g}" if low is not None else f"accepted: at most {high:g}"
