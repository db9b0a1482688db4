"""Average precision and its relatives: interpolated precision, 11-point AP, bpref."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..hookspecs import hookimpl
from .base import Columns, LevelParams, Measure, RankedParams, Rounding

ELEVEN_POINTS = tuple(i / 10 for i in range(11))


def _precision_here(c: Columns, level: int) -> str:
    return f"({c.relevant_so_far(level)} / rank)"


def interpolated_precision(c: Columns, level: int, recall: float, p: Any) -> str:
    """Max precision over ranks whose recall reaches `recall` (trec_eval iprec_at_recall).

    The ranks that reach a recall level are exactly those at or after the first that does, so the
    maximum needs no second pass over the ranking. 0 if the run never gets there.
    """
    k = getattr(p, "k", None)
    condition = f"{c.recall_reached(recall, level, p.rounding)} AND {c.within(k)}"
    return f"coalesce(max({_precision_here(c, level)}) FILTER (WHERE {condition}), 0)"


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


class AP(Measure):
    """Average precision. With k only the first k ranks count (standard: still / R, trec_eval map_cut)."""

    name = "AP"
    description = "average precision (variants: standard, capped, interpolated_11pt)"
    Params = APParams
    aliases = {
        "map": {},
        "MAP": {},
        "map_cut": {},
        "11pt_avg": {"variant": "interpolated_11pt"},
    }
    cutoff = "k"

    def per_query(self, p: Any, c: Columns) -> str:
        level = c.level(p)
        if p.variant == "interpolated_11pt":
            points = " + ".join(interpolated_precision(c, level, r, p) for r in ELEVEN_POINTS)
            return f"({points}) / 11"
        num_rel = f"any_value({c.num_rel(level)})"
        if p.variant == "capped" and p.k is not None:
            num_rel = f"least({num_rel}, {int(p.k)})"
        precisions = f"sum({_precision_here(c, level)}) FILTER (WHERE {c.relevant(level)} AND {c.within(p.k)})"
        return f"(CASE WHEN {num_rel} > 0 THEN coalesce({precisions}, 0) / {num_rel} ELSE 0 END)"


class IPrecParams(LevelParams):
    recall: float = Field(ge=0, le=1, description="recall level in [0, 1]")
    rounding: Rounding = _ROUNDING


class IPrec(Measure):
    """Interpolated precision at a recall level: the best precision at any rank reaching it."""

    name = "IPrec"
    description = "interpolated precision at recall r (trec_eval iprec_at_recall)"
    Params = IPrecParams
    aliases = {"iprec_at_recall": {}}
    cutoff = "recall"
    required = ("recall",)

    def per_query(self, p: Any, c: Columns) -> str:
        return interpolated_precision(c, c.level(p), p.recall, p)


class Bpref(Measure):
    """Binary preference (trec_eval's post-2005 bpref): unjudged documents are skipped."""

    name = "Bpref"
    description = "bpref: how often relevant documents precede judged non-relevant ones"
    Params = RankedParams
    aliases = {"bpref": {}, "BPref": {}}

    def per_query(self, p: Any, c: Columns) -> str:
        level = c.level(p)
        num_rel, num_nonrel = c.num_rel(level), c.num_nonrel(level)
        seen = c.nonrelevant_so_far(level)
        penalty = f"least({seen}, {num_rel}) / least({num_nonrel}, {num_rel})"
        term = f"CASE WHEN {seen} > 0 THEN 1 - {penalty} ELSE 1 END"
        total = f"sum({term}) FILTER (WHERE {c.relevant(level)} AND {c.within(p.k)})"
        denominator = f"any_value({num_rel})"
        return f"(CASE WHEN {denominator} > 0 THEN coalesce({total}, 0) / {denominator} ELSE 0 END)"


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [AP, IPrec, Bpref]
