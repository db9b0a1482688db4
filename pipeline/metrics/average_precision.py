"""Average precision and its relatives: interpolated precision, 11-point AP, bpref."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..api import Columns, LevelParams, Measure, RankedParams, Rounding, double, hookimpl

ELEVEN_POINTS = tuple(i / 10 for i in range(11))


def _precision_here(c: Columns, level: int) -> str:
    return f"({c.relevant_so_far(level)} / rank)"


def precision_sum(c: Columns, level: int, k: int | None) -> str:
    """SQL sum of the precisions at the relevant ranks (within k): AP × R."""
    condition = f"{c.relevant(level)} AND {c.within(k)}"
    return f"coalesce(sum({_precision_here(c, level)}) FILTER (WHERE {condition}), 0)"


def interpolated_precision(c: Columns, level: int, recall: float, p: APParams | IPrecParams) -> str:
    """Max precision over ranks whose recall reaches `recall` (trec_eval iprec_at_recall).

    The ranks that reach a recall level are exactly those at or after the first that does, so the
    maximum needs no second pass over the ranking. 0 if the run never gets there.
    """
    k = getattr(p, "k", None)
    condition = f"{c.recall_reached(recall, level, p.rounding)} AND {c.within(k)}"
    return f"coalesce(max({_precision_here(c, level)}) FILTER (WHERE {condition}), 0)"


def empty_interpolated(c: Columns, level: int, recall: float, p: APParams | IPrecParams) -> str:
    """trec_eval on an empty ranking: 0/0 (NaN) where the recall level needs no relevant
    document, else 0."""
    count = c.recall_count(recall, c.num_rel(level), p.rounding)
    return f"CASE WHEN {count} = 0 THEN CAST('NaN' AS DOUBLE) ELSE 0 END"


_ROUNDING = Field(
    "trec_eval",
    description="recall level reached: trec_eval (lround(r*R); 9.x: (long)(r*R+0.9)) "
    "or ceil (the textbook recall >= r)",
)


class APParams(RankedParams):
    variant: Literal["standard", "capped", "interpolated_11pt"] = Field(
        "standard",
        description="standard: sum of P@i at relevant ranks / R; capped: / min(k, R); "
        "interpolated_11pt: mean interpolated precision at recall 0.0, 0.1, ..., 1.0",
    )
    rounding: Rounding = _ROUNDING
    recall_levels: list[float] | None = Field(
        None, description="recall levels averaged by interpolated_11pt (default 0.0, 0.1, ..., 1.0)"
    )


class AP(Measure[APParams]):
    """Average precision. With k only the first k ranks count (standard: still / R, trec_eval map_cut)."""

    judged_rows_suffice = True

    name = "AP"
    description = "average precision (variants: standard, capped, interpolated_11pt)"
    Params = APParams
    aliases = {"MAP": {}}
    cutoff = "k"

    def needs(self, p: APParams, c: Columns):
        level = c.level(p)
        return (c.num_rel(level), c.relevant_so_far(level))

    def per_query(self, p: APParams, c: Columns) -> str:
        level = c.level(p)
        if p.variant == "interpolated_11pt":
            levels = p.recall_levels or ELEVEN_POINTS
            # trec_eval adds the levels from the last to the first; so does this, to the last bit.
            points = " + ".join(interpolated_precision(c, level, r, p) for r in reversed(levels))
            return f"({points}) / {len(levels)}"
        denominator = c.relevant_total(p)
        if p.variant == "capped" and p.k is not None:
            denominator = f"least({denominator}, {int(p.k)})"
        total = precision_sum(c, level, p.k)
        return f"(CASE WHEN {denominator} > 0 THEN {total} / {denominator} ELSE 0 END)"

    def empty(self, p: APParams, c: Columns) -> str:
        if p.variant != "interpolated_11pt":
            return self.missing(p, c)
        levels = p.recall_levels or ELEVEN_POINTS
        points = " + ".join(empty_interpolated(c, c.level(p), r, p) for r in levels)
        return f"({points}) / {len(levels)}"


class IPrecParams(LevelParams):
    recall: float = Field(ge=0, le=1, description="recall level in [0, 1]")
    rounding: Rounding = _ROUNDING


class IPrec(Measure[IPrecParams]):
    """Interpolated precision at a recall level: the best precision at any rank reaching it."""

    judged_rows_suffice = True

    name = "IPrec"
    description = "interpolated precision at recall r (trec_eval iprec_at_recall)"
    Params = IPrecParams
    cutoff = "recall"
    required = ("recall",)

    def needs(self, p: IPrecParams, c: Columns):
        level = c.level(p)
        return (c.num_rel(level), c.relevant_so_far(level))

    def per_query(self, p: IPrecParams, c: Columns) -> str:
        return interpolated_precision(c, c.level(p), p.recall, p)

    def empty(self, p: IPrecParams, c: Columns) -> str:
        return empty_interpolated(c, c.level(p), p.recall, p)


class Bpref(Measure[RankedParams]):
    """Binary preference (trec_eval's post-2005 bpref): unjudged documents are skipped."""

    judged_rows_suffice = True

    name = "Bpref"
    description = "bpref: how often relevant documents precede judged non-relevant ones"
    Params = RankedParams
    aliases = {"BPref": {}}

    def needs(self, p: RankedParams, c: Columns):
        level = c.level(p)
        return (c.num_rel(level), c.num_nonrel(level), c.nonrelevant_so_far(level))

    def per_query(self, p: RankedParams, c: Columns) -> str:
        level = c.level(p)
        num_rel, num_nonrel = c.num_rel(level), c.num_nonrel(level)
        seen = c.nonrelevant_so_far(level)
        penalty = f"least({seen}, {num_rel}) / least({num_nonrel}, {num_rel})"
        term = f"CASE WHEN {seen} > 0 THEN 1 - {penalty} ELSE 1 END"
        total = f"sum({term}) FILTER (WHERE {c.relevant(level)} AND {c.within(p.k)})"
        denominator = f"any_value({num_rel})"
        return f"(CASE WHEN {denominator} > 0 THEN coalesce({total}, 0) / {denominator} ELSE 0 END)"


class GeometricAP(AP):
    """AP averaged by the geometric mean over queries (trec_eval gm_map; values floored at 1e-5)."""

    name = "gmAP"
    description = "average precision, geometric mean over queries"
    aliases = {"GMAP": {}}
    aggregator = "gmean"


class GeometricBpref(Bpref):
    """bpref averaged by the geometric mean over queries (trec_eval gm_bpref)."""

    name = "gmBpref"
    description = "bpref, geometric mean over queries"
    aliases = {}
    aggregator = "gmean"


INFAP_EPSILON = 1e-5


class InfAP(Measure[RankedParams]):
    """Inferred AP (Yilmaz and Aslam): documents not in the pool count as non-relevant, pooled
    but unjudged ones (negative judgments) are inferred from the judged ones above them."""

    judged_rows_suffice = True

    name = "infAP"
    description = "inferred average precision"
    Params = RankedParams
    aliases = {"InfAP": {}}

    def needs(self, p: RankedParams, c: Columns):
        level = c.level(p)
        return (
            c.num_rel(level),
            c.relevant_so_far(level),
            c.nonrelevant_so_far(level),
            c.grade_so_far(-2),
        )

    def per_query(self, p: RankedParams, c: Columns) -> str:
        level = c.level(p)
        k1 = f"({c.relevant_so_far(level)} - 1)"  # relevant above this one
        nonrel, unjudged = c.nonrelevant_so_far(level), c.grade_so_far(-2)
        j = "CAST(rank - 1 AS DOUBLE)"
        eps = double(INFAP_EPSILON)
        inferred = (
            f"1.0 / ({j} + 1.0) + ({j} / ({j} + 1.0)) * (({k1} + {nonrel} + {unjudged}) / {j})"
            f" * (({k1} + {eps}) / ({k1} + {nonrel} + 2 * {eps}))"
        )
        term = f"CASE WHEN rank = 1 THEN 1.0 ELSE {inferred} END"
        total = f"coalesce(sum({term}) FILTER (WHERE {c.relevant(level)} AND {c.within(p.k)}), 0)"
        return f"(CASE WHEN {c.relevant_total(p)} > 0 THEN {total} / {c.relevant_total(p)} ELSE {total} END)"


class YAAP(Measure[RankedParams]):
    """Robertson's Yet Another AP: ln((1 + S) / (1 + R − S)), S = the sum of precisions at relevant
    ranks (AP × R)."""

    judged_rows_suffice = True

    name = "YAAP"
    description = "yet another average precision (Robertson, ECIR 2012)"
    Params = RankedParams

    def needs(self, p: RankedParams, c: Columns):
        level = c.level(p)
        return (c.num_rel(level), c.relevant_so_far(level))

    def per_query(self, p: RankedParams, c: Columns) -> str:
        s = precision_sum(c, c.level(p), p.k)
        return f"ln((1.0 + {s}) / (1.0 + {c.relevant_total(p)} - {s}))"

    def missing(self, p: RankedParams, c: Columns) -> str:
        return f"ln(1.0 / (1.0 + {c.num_rel(c.level(p))}))"


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [AP, GeometricAP, IPrec, Bpref, GeometricBpref, InfAP, YAAP]
