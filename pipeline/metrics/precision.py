"""Precision-like measures at a cutoff: P, R, relative P, R-precision, success, fallout, unjudged."""

from __future__ import annotations

from pydantic import Field

from ..api import Columns, LevelParams, Measure, RankedParams, double, hookimpl, ratio


class P(Measure[RankedParams]):
    """Precision at k: relevant in the top k divided by k, even when fewer were retrieved."""

    judged_rows_suffice = True

    name = "P"
    description = "precision at k: relevant documents in the top k / k"
    Params = RankedParams
    aliases = {"precision": {}}
    cutoff = "k"
    required = ("k",)

    def per_query(self, p: RankedParams, c: Columns) -> str:
        return f"{c.relevant_within(p)} / {int(p.k)}"


class R(Measure[RankedParams]):
    """Recall at k: relevant in the top k divided by the number of relevant documents."""

    judged_rows_suffice = True

    name = "R"
    description = "recall at k: relevant documents in the top k / relevant documents"
    Params = RankedParams
    aliases = {"Recall": {}}
    cutoff = "k"
    required = ("k",)

    def needs(self, p: RankedParams, c: Columns):
        return (c.num_rel(c.level(p)),)

    def per_query(self, p: RankedParams, c: Columns) -> str:
        return ratio(c.relevant_within(p), c.relevant_total(p))


class RelativeP(Measure[RankedParams]):
    """Relevant in the top k divided by min(k, R): precision relative to the best possible."""

    judged_rows_suffice = True

    name = "RelativeP"
    description = "relative precision at k: relevant in the top k / min(k, relevant)"
    Params = RankedParams
    cutoff = "k"
    required = ("k",)

    def needs(self, p: RankedParams, c: Columns):
        return (c.num_rel(c.level(p)),)

    def per_query(self, p: RankedParams, c: Columns) -> str:
        return ratio(c.relevant_within(p), f"least({int(p.k)}, {c.relevant_total(p)})")


class RprecParams(LevelParams):
    mult: float | None = Field(
        None, gt=0, description="evaluate at (long)(mult·R + 0.9) documents (trec_eval Rprec_mult)"
    )


class Rprec(Measure[RprecParams]):
    """Precision at rank R, where R is the number of relevant documents (or at mult·R)."""

    judged_rows_suffice = True

    name = "Rprec"
    description = "R-precision: relevant documents in the top R / R"
    Params = RprecParams
    aliases = {"R-Prec": {}, "RPrec": {}}

    def needs(self, p: RprecParams, c: Columns):
        return (c.num_rel(c.level(p)),)

    def per_query(self, p: RprecParams, c: Columns) -> str:
        level = c.level(p)
        depth = c.num_rel(level)
        if p.mult is not None:  # trec_eval kept 9.x's truncation here
            depth = f"floor({double(p.mult)} * {depth} + {double(0.9)})"
        hits = f"count(*) FILTER (WHERE {c.relevant(level)} AND rank <= {depth})"
        return ratio(hits, f"any_value({depth})")


class Success(Measure[RankedParams]):
    """1 if a relevant document is in the top k, else 0."""

    judged_rows_suffice = True

    name = "Success"
    description = "1 if any relevant document is in the top k"
    Params = RankedParams
    cutoff = "k"

    def per_query(self, p: RankedParams, c: Columns) -> str:
        return f"(CASE WHEN {c.relevant_within(p)} > 0 THEN 1 ELSE 0 END)"


class Fallout(Measure[RankedParams]):
    """Non-relevant documents in the top k / non-relevant documents in the collection.

    Every retrieved document that is not relevant counts as non-relevant (unjudged ones too); the
    collection's non-relevant documents are num_docs − R.
    """

    name = "Fallout"
    better = "lower"
    description = "fallout at k: non-relevant in the top k / (num_docs - relevant)"
    Params = RankedParams
    aliases = {"fallout": {}}
    cutoff = "k"
    required = ("k",)
    judged_rows_suffice = True

    def needs(self, p: RankedParams, c: Columns):
        return (c.num_ret(), c.num_rel(c.level(p)), c.num_docs())

    def per_query(self, p: RankedParams, c: Columns) -> str:
        nonrel = f"({c.retrieved_within(p)} - {c.relevant_within(p)})"
        return ratio(nonrel, f"any_value({self._nonrelevant(p, c)})")

    def missing(self, p: RankedParams, c: Columns) -> str:
        return ratio(c.retrieved(p.k), self._nonrelevant(p, c))

    @staticmethod
    def _nonrelevant(p: RankedParams, c: Columns) -> str:
        return f"({c.num_docs()} - {c.num_rel(c.level(p))})"


class Unjudged(Measure[RankedParams]):
    """Share of the top k that is unjudged (not in the qrels, or judged negative), over k."""

    name = "Unjudged"
    better = None  # how much of the ranking is unjudged: a caveat, not a quality
    description = "unjudged documents in the top k / k"
    Params = RankedParams
    cutoff = "k"
    required = ("k",)

    def per_query(self, p: RankedParams, c: Columns) -> str:
        return f"count(*) FILTER (WHERE relv < 0 AND {c.within(p.k)}) / {int(p.k)}"


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [P, R, RelativeP, Rprec, Success, Fallout, Unjudged]
