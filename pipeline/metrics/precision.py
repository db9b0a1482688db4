"""Precision and recall at a cutoff, set-based P/R/F, R-precision, success and fallout."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..hookspecs import hookimpl
from .base import Columns, LevelParams, Measure, RankedParams, double


def _relevant_within(p: Any, c: Columns) -> str:
    return f"count(*) FILTER (WHERE {c.relevant(c.level(p))} AND {c.within(p.k)})"


def _ratio(numerator: str, denominator: str) -> str:
    """numerator / denominator, or 0 when the denominator is not positive (trec_eval's rule)."""
    return f"(CASE WHEN {denominator} > 0 THEN {numerator} / {denominator} ELSE 0 END)"


class P(Measure):
    """Precision at k: relevant in the top k divided by k, even when fewer were retrieved."""

    name = "P"
    description = "precision at k: relevant documents in the top k / k"
    Params = RankedParams
    aliases = {"precision": {}}
    cutoff = "k"
    required = ("k",)

    def per_query(self, p: Any, c: Columns) -> str:
        return f"{_relevant_within(p, c)} / {int(p.k)}"


class R(Measure):
    """Recall at k: relevant in the top k divided by the number of relevant documents."""

    name = "R"
    description = "recall at k: relevant documents in the top k / relevant documents"
    Params = RankedParams
    aliases = {"recall": {}, "Recall": {}}
    cutoff = "k"
    required = ("k",)

    def per_query(self, p: Any, c: Columns) -> str:
        return _ratio(_relevant_within(p, c), f"any_value({c.num_rel(c.level(p))})")


class SetP(Measure):
    """Precision of the retrieved set (of the first k documents if k is given)."""

    name = "SetP"
    description = "set precision: relevant retrieved / retrieved"
    Params = RankedParams
    aliases = {"set_P": {}}
    cutoff = "k"

    def per_query(self, p: Any, c: Columns) -> str:
        return _ratio(_relevant_within(p, c), f"count(*) FILTER (WHERE {c.within(p.k)})")


class SetR(Measure):
    """Recall of the retrieved set (of the first k documents if k is given)."""

    name = "SetR"
    description = "set recall: relevant retrieved / relevant"
    Params = RankedParams
    aliases = {"set_recall": {}}
    cutoff = "k"

    def per_query(self, p: Any, c: Columns) -> str:
        return _ratio(_relevant_within(p, c), f"any_value({c.num_rel(c.level(p))})")


class FParams(RankedParams):
    beta: float = Field(1.0, gt=0, description="weight of recall: F = (b²+1)PR / (b²P + R)")


class SetF(Measure):
    """F-measure of the retrieved set: (β²+1)·P·R / (β²·P + R), 0 when nothing relevant is found."""

    name = "SetF"
    description = "set F-measure with weight beta on recall"
    Params = FParams
    aliases = {"F": {}, "set_F": {}}
    cutoff = "k"

    def per_query(self, p: Any, c: Columns) -> str:
        hits = _relevant_within(p, c)
        precision = f"({hits} / count(*) FILTER (WHERE {c.within(p.k)}))"
        recall = f"({hits} / any_value({c.num_rel(c.level(p))}))"
        b2 = double(p.beta * p.beta)
        f = f"({b2} + 1) * {precision} * {recall} / ({b2} * {precision} + {recall})"
        return f"(CASE WHEN {hits} > 0 THEN {f} ELSE 0 END)"


class Rprec(Measure):
    """Precision at rank R, where R is the number of relevant documents."""

    name = "Rprec"
    description = "R-precision: relevant documents in the top R / R"
    Params = LevelParams
    aliases = {"R-Prec": {}, "RPrec": {}}

    def per_query(self, p: Any, c: Columns) -> str:
        level = c.level(p)
        num_rel = c.num_rel(level)
        hits = f"count(*) FILTER (WHERE {c.relevant(level)} AND rank <= {num_rel})"
        return _ratio(hits, f"any_value({num_rel})")


class Success(Measure):
    """1 if a relevant document is in the top k, else 0."""

    name = "Success"
    description = "1 if any relevant document is in the top k"
    Params = RankedParams
    aliases = {"success": {}}
    cutoff = "k"

    def per_query(self, p: Any, c: Columns) -> str:
        return f"(CASE WHEN {_relevant_within(p, c)} > 0 THEN 1 ELSE 0 END)"


class Fallout(Measure):
    """Non-relevant documents in the top k / non-relevant documents in the collection.

    Every retrieved document that is not relevant counts as non-relevant (unjudged ones too); the
    collection's non-relevant documents are num_docs − R.
    """

    name = "Fallout"
    description = "fallout at k: non-relevant in the top k / (num_docs - relevant)"
    Params = RankedParams
    aliases = {"fallout": {}}
    cutoff = "k"
    required = ("k",)
    needs = ("num_docs",)

    def per_query(self, p: Any, c: Columns) -> str:
        level = c.level(p)
        nonrel = f"count(*) FILTER (WHERE NOT {c.relevant(level)} AND {c.within(p.k)})"
        return _ratio(nonrel, f"any_value({c.num_docs()} - {c.num_rel(level)})")


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [P, R, SetP, SetR, SetF, Rprec, Success, Fallout]
