"""The public plugin API: everything a metric or writer author imports, and nothing else.

What this module exports is irpipe's promise to plugin authors: it is documented in plugins/README.md
("The API reference"), with an example per hook, and names are only ever added. irpipe's own
measures and writers import from here too.

    from pipeline.api import Measure, RankedParams, hookimpl

    class Judged(Measure):
        name = "Judged"
        description = "share of the top k documents that are judged"
        Params = RankedParams
        cutoff = "k"

        def per_query(self, p, c):
            within = c.within(p.k)
            return f"count(*) FILTER (WHERE relv >= 0 AND {within}) / count(*) FILTER (WHERE {within})"

    @hookimpl
    def register_metrics():
        return [Judged]
"""

from __future__ import annotations

from pipeline.contract.columns import (
    Columns,
    Discount,
    Gain,
    IdealAtRank,
    IdealTotals,
    Need,
    Rounding,
    dcg,
    double,
    grade_literal,
    ratio,
)
from pipeline.contract.measure import LevelParams, Measure, MeasureParams, RankedParams
from pipeline.contract.python_measure import PythonMeasure, Query, RankedQueries
from pipeline.contract.writer import Writer
from pipeline.errors import PluginError
from pipeline.hookspecs import hookimpl
from pipeline.sql import quote_identifier

__all__ = [
    "Columns",
    "Discount",
    "Gain",
    "IdealAtRank",
    "IdealTotals",
    "LevelParams",
    "Measure",
    "MeasureParams",
    "Need",
    "PluginError",
    "PythonMeasure",
    "Query",
    "RankedParams",
    "RankedQueries",
    "Rounding",
    "Writer",
    "dcg",
    "double",
    "grade_literal",
    "hookimpl",
    "quote_identifier",
    "ratio",
]
