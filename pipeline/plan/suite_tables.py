"""The `suite` table: per suite (`suites:`), run and metric, the mean of the collections' means
and the mean over every query of every collection. Pure, no I/O.

macro          the mean of the run's aggregate values over the suite's collections (BEIR's mean),
               summed in the suite's order of its collections
micro          the metric's own aggregator (mean, geometric mean, sum) over every query of every
               collection of the suite, as if they were one collection: the queries the
               aggregates averaged (the `queries` setting decides which), in the suite's order of
               collections, then query id
n_collections  the collections with a value of the metric
n_queries      the queries the micro mean averaged

Every run of a suite is evaluated under all its collections (`pipeline.spec.suites`), and every
collection has every metric of the spec, so a row is a mean over the same collections for every
run. A collection holding no run is no part of a row (a suite whose collections have no runs has
no rows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.plan.tables import values_table
from pipeline.sql import Statement

if TYPE_CHECKING:
    from pipeline.spec import Spec

__all__ = ["SUITE_TABLE", "suite_tables"]

SUITE_TABLE = "suite"

# The per-query table's aggregators (`per_query._AGGREGATED`), summed across collections in the
# suite's order, then query id.
_MICRO = """CASE m.aggregator
        WHEN 'sum' THEN sum(p.value ORDER BY s.position, p.qid)
        WHEN 'gmean' THEN exp(sum(ln(greatest(p.value, 1e-5)) ORDER BY s.position, p.qid)
            / count(p.value))
        ELSE sum(p.value ORDER BY s.position, p.qid) / count(p.value)
    END"""

_SUITE_SQL = f"""
CREATE TABLE {SUITE_TABLE} AS
WITH macro AS (
    SELECT s.suite, a.run, a.metric, sum(a.value ORDER BY s.position) / count(a.value) AS macro,
        count(a.value) AS n_collections
    FROM aggregate a JOIN suite_collections s USING (collection)
    GROUP BY s.suite, a.run, a.metric),
micro AS (
    SELECT s.suite, p.run, p.metric, {_MICRO} AS micro, count(p.value) AS n_queries
    FROM per_query p JOIN suite_collections s USING (collection) JOIN metrics m USING (metric)
    WHERE m.aggregator <> 'none'
    GROUP BY s.suite, p.run, p.metric, m.aggregator),
ordered AS (SELECT run, min(ordinal) AS ordinal FROM runs GROUP BY run)
SELECT suite, run, metric, macro, micro, n_collections, n_queries
FROM macro JOIN micro USING (suite, run, metric)
JOIN ordered USING (run) JOIN metrics m USING (metric)
JOIN (SELECT DISTINCT suite, suite_order FROM suite_collections) USING (suite)
ORDER BY suite_order, ordered.ordinal, m.ordinal"""


def suite_tables(spec: Spec) -> list[Statement]:
    """The suites' collections and the `suite` table (nothing without suites)."""
    if not spec.suites:
        return []
    rows = [
        (suite, i, position, collection)
        for i, (suite, members) in enumerate(spec.suites.items())
        for position, collection in enumerate(members)
    ]
    columns = "suite VARCHAR, suite_order INTEGER, position INTEGER, collection VARCHAR"
    return [*values_table("suite_collections", columns, rows), Statement(_SUITE_SQL)]
