"""trec_eval's experimental gain measures: binG, G, ndcg_rel and Rndcg.

Each walks the ranking beside the ideal ranking (positive gains sorted by gain); `Columns.ideal_at_rank`
puts the ideal ranking's running values beside each row, so each stays one aggregate per query.
"""

from __future__ import annotations

from pydantic import Field

from ..api import Columns, Gain, LevelParams, Measure, MeasureParams, dcg, hookimpl


class GainOnlyParams(MeasureParams):
    gain: Gain = Field("linear", description="linear (the grade), exponential or {grade: gain}")


class RndcgParams(GainOnlyParams, LevelParams):
    """Gains, and the relevance level that decides whether a query has any relevant document."""


class BinG(Measure[LevelParams]):
    """Binary G: mean over relevant documents of 1/log2(2 + non-relevant documents above it)."""

    judged_rows_suffice = True

    name = "BinG"
    description = "binary G (trec_eval binG)"
    Params = LevelParams

    def needs(self, p: LevelParams, c: Columns):
        level = c.level(p)
        return (c.num_rel(level), c.relevant_so_far(level))

    def per_query(self, p: LevelParams, c: Columns) -> str:
        level = c.level(p)
        term = f"1.0 / log2(rank - {c.relevant_so_far(level)} + 2)"
        total = f"sum({term}) FILTER (WHERE {c.relevant(level)})"
        return f"coalesce({total} / {c.relevant_total(p)}, 0)"


class G(Measure[GainOnlyParams]):
    """G: each document's gain over log2(2 + ideal cost so far − gain so far), normalised by the
    sum of ideal gains. The ideal cost of a position is max(ideal gain, 1)."""

    name = "G"
    description = "G, a gain measure between AP and nDCG (trec_eval G)"
    Params = GainOnlyParams

    def needs(self, p: GainOnlyParams, c: Columns):
        return (c.ideal_at_rank(p.gain), c.ideal_totals(p.gain), c.gain_so_far(p.gain))

    def per_query(self, p: GainOnlyParams, c: Columns) -> str:
        ideal, totals = c.ideal_at_rank(p.gain), c.ideal_totals(p.gain)
        beyond = f"{totals.cost} + (rank - {totals.length})"  # 1 per rank past the ideal list
        cost = f"coalesce({ideal.cost}, {beyond})"
        g = c.gain(p.gain)
        term = f"{g} / log2(2 + {cost} - {c.gain_so_far(p.gain)})"
        total = f"coalesce(sum({term}) FILTER (WHERE {g} <> 0), 0)"
        ideal_gain = f"any_value({totals.gain})"
        return f"(CASE WHEN {ideal_gain} > 0 THEN {total} / {ideal_gain} ELSE 0 END)"


class nDCGRel(Measure[GainOnlyParams]):  # noqa: N801 -- the name users write
    """nDCG averaged at each retrieved document with positive gain; relevant documents not
    retrieved contribute the final nDCG (trec_eval ndcg_rel)."""

    name = "nDCGRel"
    description = "nDCG averaged over relevant documents (trec_eval ndcg_rel)"
    Params = GainOnlyParams

    def needs(self, p: GainOnlyParams, c: Columns):
        return (c.ideal_at_rank(p.gain), c.ideal_totals(p.gain), c.dcg_so_far(p.gain))

    def per_query(self, p: GainOnlyParams, c: Columns) -> str:
        ideal, totals = c.ideal_at_rank(p.gain), c.ideal_totals(p.gain)
        g, dcg_here = c.gain(p.gain), c.dcg_so_far(p.gain)
        length, full = f"any_value({totals.length})", f"any_value({totals.dcg})"
        at_relevant = f"coalesce(sum({dcg_here} / coalesce({ideal.idcg}, {totals.dcg})) FILTER (WHERE {g} > 0), 0)"
        unretrieved = f"({length} - count(*) FILTER (WHERE {g} > 0)) * {dcg(c, p.gain)} / {full}"
        total = f"({at_relevant} + {unretrieved})"
        return f"(CASE WHEN NOT isnan({total}) AND {total} > 0 THEN {total} / {length} ELSE 0 END)"


class RnDCG(Measure[RndcgParams]):
    """nDCG averaged at the ranks where the ideal gain changes level (trec_eval Rndcg)."""

    name = "RnDCG"
    description = "nDCG averaged at the R levels of the ideal ranking (trec_eval Rndcg)"
    Params = RndcgParams

    def needs(self, p: RndcgParams, c: Columns):
        gain = p.gain
        ideal = (c.ideal_at_rank(gain), c.ideal_totals(gain), c.dcg_so_far(gain))
        return (*ideal, c.num_rel(c.level(p)))

    def per_query(self, p: RndcgParams, c: Columns) -> str:
        ideal, totals = c.ideal_at_rank(p.gain), c.ideal_totals(p.gain)
        whole, full = dcg(c, p.gain), f"any_value({totals.dcg})"
        # A level change after rank r <= n records DCG(r)/IDCG(r); changes after the run's end
        # record DCG(n)/IDCG; a run longer than the ideal list records DCG(n)/IDCG(full) once more.
        inside = (
            f"coalesce(sum({c.dcg_so_far(p.gain)} / {ideal.idcg}) FILTER (WHERE {ideal.change}), 0)"
        )
        inside_n = f"count(*) FILTER (WHERE {ideal.change})"
        after = f"coalesce(arg_max_null({ideal.tail}, rank), 0) * {whole}"
        after_n = f"coalesce(arg_max_null({ideal.tail_count}, rank), 0)"
        longer = f"max(rank) > any_value({totals.length}) + 1"
        extra, extra_n = (
            f"CASE WHEN {longer} THEN {whole} / {full} ELSE 0 END",
            f"CASE WHEN {longer} THEN 1 ELSE 0 END",
        )
        value = f"({inside} + {after} + {extra}) / ({inside_n} + {after_n} + {extra_n})"
        return f"(CASE WHEN any_value({c.num_rel(c.level(p))}) = 0 THEN 0 ELSE {value} END)"


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [BinG, G, nDCGRel, RnDCG]
