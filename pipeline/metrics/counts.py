"""Counting measures: retrieved, relevant, relevant retrieved. Summed over queries, as trec_eval."""

from __future__ import annotations

from ..api import Columns, LevelParams, Measure, MeasureParams, RankedParams, hookimpl


class NumRet(Measure[RankedParams]):
    """Documents retrieved (trec_eval num_ret)."""

    name = "NumRet"
    better = None  # a count, not a quality
    description = "number of documents retrieved (up to k)"
    Params = RankedParams
    cutoff = "k"
    aggregator = "sum"
    judged_rows_suffice = True

    def needs(self, p: RankedParams, c: Columns):
        return (c.num_ret(),)

    def per_query(self, p: RankedParams, c: Columns) -> str:
        return f"any_value({c.retrieved(p.k)})"

    def missing(self, p: RankedParams, c: Columns) -> str:
        return c.retrieved(p.k)


class NumRel(Measure[LevelParams]):
    """Relevant documents in the qrels (trec_eval num_rel); a query the run lacks keeps its count."""

    judged_rows_suffice = True

    name = "NumRel"
    better = None  # a count, not a quality
    description = "number of judged relevant documents for the query"
    Params = LevelParams
    aggregator = "sum"

    def needs(self, p: LevelParams, c: Columns):
        return (c.num_rel(c.level(p)),)

    def per_query(self, p: LevelParams, c: Columns) -> str:
        return f"any_value({c.num_rel(c.level(p))})"

    def missing(self, p: LevelParams, c: Columns) -> str:
        return c.num_rel(c.level(p))


class NumRelRet(Measure[RankedParams]):
    """Relevant documents retrieved (trec_eval num_rel_ret)."""

    judged_rows_suffice = True

    name = "NumRelRet"
    better = None  # a count, not a quality
    description = "number of relevant documents retrieved (up to k)"
    Params = RankedParams
    cutoff = "k"
    aggregator = "sum"

    def per_query(self, p: RankedParams, c: Columns) -> str:
        return f"count(*) FILTER (WHERE {c.relevant(c.level(p))} AND {c.within(p.k)})"


class NumQ(Measure[MeasureParams]):
    """Queries evaluated (trec_eval num_q): 1 per query, summed."""

    judged_rows_suffice = True

    name = "NumQ"
    better = None  # a count, not a quality
    description = "number of queries evaluated"
    aggregator = "sum"

    def per_query(self, p: MeasureParams, c: Columns) -> str:
        return "1"

    def missing(self, p: MeasureParams, c: Columns) -> str:
        return "1"


class NumNonRelJudgedRet(Measure[RankedParams]):
    """Judged non-relevant documents retrieved (trec_eval num_nonrel_judged_ret)."""

    judged_rows_suffice = True

    name = "NumNonRelJudgedRet"
    better = None  # a count, not a quality
    description = "number of judged non-relevant documents retrieved (up to k)"
    Params = RankedParams
    cutoff = "k"
    aggregator = "sum"

    def per_query(self, p: RankedParams, c: Columns) -> str:
        judged_nonrel = f"relv >= 0 AND NOT {c.relevant(c.level(p))}"
        return f"count(*) FILTER (WHERE {judged_nonrel} AND {c.within(p.k)})"


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [NumQ, NumRet, NumRel, NumRelRet, NumNonRelJudgedRet]
