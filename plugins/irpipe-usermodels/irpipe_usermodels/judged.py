"""Judged@k: the share of the first k retrieved documents that the qrels judge, as ir_measures
defines it (its `judged` provider): any qrels line counts, a negative grade included."""

from __future__ import annotations

from pydantic import Field

from pipeline.api import Columns, Measure, MeasureParams, Need, ratio


class JudgedParams(MeasureParams):
    """Only a cutoff: every grade counts as judged, so a relevance level means nothing here."""

    k: int | None = Field(None, gt=0, description="cutoff: only the first k ranks count")


class Judged(Measure[JudgedParams]):
    """(documents with a qrels line among the first min(k, n)) / min(k, n), n the ranking's length.

    A short ranking is not penalised (divided by n, not k); a query the run lacks scores 0.
    """

    name = "Judged"
    description = "share of the top k documents that have a qrels line (any grade)"
    Params = JudgedParams
    cutoff = "k"
    better = None  # how complete the judgments are, not how good the run is
    # Only judged rows are counted, and the denominator is the ranking's length.
    judged_rows_suffice = True

    def needs(self, p: JudgedParams, c: Columns) -> tuple[Need, ...]:
        return (c.num_ret(),)

    def per_query(self, p: JudgedParams, c: Columns) -> str:
        # relv is -1 for a document without a qrels line; -2 (a negative grade) is judged.
        judged = f"count(*) FILTER (WHERE {c.relv} <> -1 AND {c.within(p.k)})"
        return ratio(f"CAST({judged} AS DOUBLE)", c.retrieved_within(p))
