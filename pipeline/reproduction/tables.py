"""The table `reproduction`, made from the evaluation's tables: per entry and pair of runs, the
orderings of the documents compared per topic in SQL (`sql`: τ Union and RBO, over the rankings
kept as the runs were read), and the per-query values compared with numpy (`statistics`).

Rows, in order: per entry, per pair (the baseline's first): ktu per topic then its mean (qid
NULL), rbo the same (reproducibility only), rmse and nrmse per metric (reproducibility only), the
t-test's p_value per metric; then per advanced pair, er and delta_ri per metric. A value that is
not a number (an original improvement of 0, a t-test of one topic) is NULL.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pipeline.reproduction import sql, statistics
from pipeline.reproduction.plan import Pair, ReproductionEntry, ReproductionPlan

if TYPE_CHECKING:
    import duckdb

__all__ = ["measure_reproductions"]

#: (run -> values shaped (metrics, topics)) of one side, over one list of topics
Values = dict[str, np.ndarray]


def measure_reproductions(con: duckdb.DuckDBPyConnection, plan: ReproductionPlan) -> None:
    """Create the table `reproduction` of `plan`'s entries; the kept rankings are dropped."""
    con.execute(sql.REPRODUCTION_TABLE)
    rows = [row for entry in plan.entries for row in _entry_rows(con, entry, plan.metrics)]
    if rows:
        con.executemany(f"INSERT INTO reproduction VALUES ({', '.join('?' * len(rows[0]))})", rows)
    con.execute("DROP TABLE IF EXISTS reproduction_rows")


def _entry_rows(con, entry: ReproductionEntry, metrics: tuple[str, ...]) -> list[tuple]:
    originals = [p.original for p in entry.pairs]
    reproductions = [p.reproduced for p in entry.pairs]
    if entry.kind == "reproducibility":  # one collection: the values over the same topics
        both = _values(con, entry.collection, originals + reproductions, metrics)
        sides = (both, both)
    else:
        sides = (_values(con, entry.collection, originals, metrics),
                 _values(con, entry.reproduced_collection, reproductions, metrics))  # fmt: skip
    row = _row_maker(entry)
    found: list[tuple] = []
    for pair in entry.pairs:
        o, r = sides[0][pair.original], sides[1][pair.reproduced]
        if entry.kind == "reproducibility":
            found += _orderings(con, entry, pair, row)
            error, n = statistics.rmse(o, r)
            found += _per_metric(row, pair, "rmse", metrics, error, n, n)
            found += _per_metric(row, pair, "nrmse", metrics, statistics.nrmse(o, r), n, n)
            found += _per_metric(row, pair, "p_value", metrics, statistics.paired_p(o, r), n, n)
        else:
            p = statistics.unpaired_p(o, r)
            found += _per_metric(row, pair, "p_value", metrics, p, _count(o), _count(r))
    found += [r for pair in entry.pairs[1:] for r in _effects(row, entry, pair, sides, metrics)]
    return found


def _effects(row, entry: ReproductionEntry, pair: Pair, sides, metrics) -> list[tuple]:
    """ER and ΔRI of an advanced pair over the entry's baseline pair."""
    base = entry.baseline
    baseline = (sides[0][base.original], sides[1][base.reproduced])
    advanced = (sides[0][pair.original], sides[1][pair.reproduced])
    n = [statistics.improved_topics(b, a) for b, a in zip(baseline, advanced, strict=True)]
    er = statistics.effect_ratio(baseline, advanced)
    dri = statistics.delta_ri(baseline, advanced)
    return [*_per_metric(row, pair, "er", metrics, er, *n),
            *_per_metric(row, pair, "delta_ri", metrics, dri, *n)]  # fmt: skip


def _orderings(con, entry: ReproductionEntry, pair: Pair, row) -> list[tuple]:
    """ktu and rbo per topic both rank, then each one's mean over the topics with a value."""
    bound = {"original": pair.original, "reproduced": pair.reproduced, "depth": entry.depth}
    found = []
    for measure, statement, params in (("ktu", sql.ktu_sql(), bound),
                                       ("rbo", sql.rbo_sql(), {**bound, "p": entry.rbo_p})):  # fmt: skip
        topics = con.execute(statement, params).fetchall()
        found += [row(pair, measure, None, qid, value, 1, 1) for qid, value in topics]
        values = [v for _, v in topics if v is not None]
        mean = math.fsum(values) / len(values) if values else None
        found.append(row(pair, measure, None, None, mean, len(values), len(values)))
    return found


def _per_metric(row, pair: Pair, measure: str, metrics, values, n_original, n_reproduced):
    return [
        row(pair, measure, metric, None, float(v), int(a), int(b))
        for metric, v, a, b in zip(metrics, values, np.broadcast_to(n_original, len(metrics)),
                                   np.broadcast_to(n_reproduced, len(metrics)), strict=True)
    ]  # fmt: skip


def _row_maker(entry: ReproductionEntry):
    """A function making the table's rows of `entry`: NULL for a value that is not a number."""

    def row(pair: Pair, measure, metric, qid, value, n_original, n_reproduced) -> tuple:
        finite = value is not None and math.isfinite(value)
        return (entry.index, entry.kind, entry.baseline.original, pair.original, pair.reproduced,
                entry.collection, entry.reproduced_collection, measure, metric, qid,
                value if finite else None, n_original, n_reproduced)  # fmt: skip

    return row


def _values(con, collection: str, runs: list[str], metrics: tuple[str, ...]) -> Values:
    """Each run's per-query values under `collection`, shaped (metrics, topics) over the topics
    any of `runs` has, NaN where a run has none."""
    found = con.execute(sql.per_query_sql(),
                        {"collection": collection, "runs": runs, "metrics": list(metrics)}).fetchall()  # fmt: skip
    topics = {qid: i for i, qid in enumerate(sorted({qid for _, qid, _, _ in found}))}
    rows = {metric: i for i, metric in enumerate(metrics)}
    values = {run: np.full((len(metrics), len(topics)), np.nan) for run in runs}
    for run, qid, metric, value in found:
        values[run][rows[metric], topics[qid]] = value
    return values


def _count(values: np.ndarray) -> np.ndarray:
    return np.isfinite(values).sum(axis=1)
