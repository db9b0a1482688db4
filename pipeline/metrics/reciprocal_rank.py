"""Measures of the first relevant document: reciprocal rank and search length."""

from __future__ import annotations

from ..api import Columns, Measure, RankedParams, hookimpl


def _first_relevant_rank(p: RankedParams, c: Columns) -> str:
    return f"min(rank) FILTER (WHERE {c.relevant(c.level(p))} AND {c.within(p.k)})"


class RR(Measure[RankedParams]):
    """Reciprocal rank of the first relevant document (0 if none is retrieved, or none in the top k)."""

    judged_rows_suffice = True

    name = "RR"
    description = "reciprocal rank of the first relevant document"
    Params = RankedParams
    aliases = {"MRR": {}}
    cutoff = "k"

    def per_query(self, p: RankedParams, c: Columns) -> str:
        return f"coalesce(1 / {_first_relevant_rank(p, c)}, 0)"


class SearchLength(Measure[RankedParams]):
    """Rank of the first relevant document.

    Undefined (NULL) for a query whose ranking has no relevant document (within k): such queries are
    left out of the mean, and n_queries says how many were averaged.
    """

    judged_rows_suffice = True

    name = "SearchLength"
    better = None  # each run averages only the queries where it found something
    description = "rank of the first relevant document (no value when there is none)"
    Params = RankedParams
    aliases = {"search_length": {}, "SL": {}}
    cutoff = "k"

    def per_query(self, p: RankedParams, c: Columns) -> str:
        return _first_relevant_rank(p, c)

    def missing(self, p: RankedParams, c: Columns) -> str:
        return "NULL"


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [RR, SearchLength]
