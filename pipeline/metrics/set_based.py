"""Measures of the retrieved set (or of its first k documents): P, R, F, relative P, set AP, utility."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..hookspecs import hookimpl
from .base import Columns, Measure, RankedParams, double


def relevant_within(p: Any, c: Columns) -> str:
    """SQL count of relevant documents within the cutoff."""
    return f"count(*) FILTER (WHERE {c.relevant(c.level(p))} AND {c.within(p.k)})"


def retrieved_within(p: Any, c: Columns) -> str:
    """SQL count of retrieved documents within the cutoff, as a per-query aggregate."""
    return f"any_value({c.retrieved(p.k)})"


def ratio(numerator: str, denominator: str) -> str:
    """numerator / denominator, or 0 when the denominator is not positive (trec_eval's rule)."""
    return f"(CASE WHEN {denominator} > 0 THEN {numerator} / {denominator} ELSE 0 END)"


def num_rel(p: Any, c: Columns) -> str:
    """SQL number of relevant documents of the query, as a per-query aggregate."""
    return f"any_value({c.num_rel(c.level(p))})"


class SetP(Measure):
    """Precision of the retrieved set (of the first k documents if k is given)."""

    judged_rows_suffice = True

    name = "SetP"
    description = "set precision: relevant retrieved / retrieved"
    Params = RankedParams
    cutoff = "k"

    def per_query(self, p: Any, c: Columns) -> str:
        return ratio(relevant_within(p, c), retrieved_within(p, c))


class SetR(Measure):
    """Recall of the retrieved set (of the first k documents if k is given)."""

    judged_rows_suffice = True

    name = "SetR"
    description = "set recall: relevant retrieved / relevant"
    Params = RankedParams
    cutoff = "k"

    def per_query(self, p: Any, c: Columns) -> str:
        return ratio(relevant_within(p, c), num_rel(p, c))


class FParams(RankedParams):
    beta: float = Field(1.0, gt=0, description="weight of recall: F = (b²+1)PR / (b²P + R)")


class SetF(Measure):
    """F-measure of the retrieved set: (β²+1)·P·R / (β²·P + R), 0 when nothing relevant is found.

    trec_eval's `set_F.x` takes x = β² (so `set_F.0.25` is β = 0.5).
    """

    judged_rows_suffice = True

    name = "SetF"
    description = "set F-measure with weight beta on recall"
    Params = FParams
    aliases = {"F": {}}
    cutoff = "k"

    def per_query(self, p: Any, c: Columns) -> str:
        hits = relevant_within(p, c)
        precision = f"({hits} / {retrieved_within(p, c)})"
        recall = f"({hits} / {num_rel(p, c)})"
        b2 = double(p.beta * p.beta)
        f = f"({b2} + 1) * {precision} * {recall} / ({b2} * {precision} + {recall})"
        return f"(CASE WHEN {hits} > 0 THEN {f} ELSE 0 END)"


class SetRelativeP(Measure):
    """Relevant retrieved / min(retrieved, relevant): precision relative to the best possible."""

    judged_rows_suffice = True

    name = "SetRelativeP"
    description = "relative set precision: relevant retrieved / min(retrieved, relevant)"
    Params = RankedParams
    cutoff = "k"

    def per_query(self, p: Any, c: Columns) -> str:
        return ratio(relevant_within(p, c), f"least({retrieved_within(p, c)}, {num_rel(p, c)})")


class SetAP(Measure):
    """Unranked AP: (relevant retrieved)² / (retrieved × relevant) = set precision × set recall."""

    judged_rows_suffice = True

    name = "SetAP"
    description = "set AP: relevant retrieved² / (retrieved × relevant)"
    Params = RankedParams
    cutoff = "k"

    def per_query(self, p: Any, c: Columns) -> str:
        hits = f"CAST({relevant_within(p, c)} AS DOUBLE)"
        denominator = f"(CAST({retrieved_within(p, c)} AS DOUBLE) * {num_rel(p, c)})"
        return ratio(f"({hits} * {hits})", denominator)


class UtilityParams(RankedParams):
    a: float = Field(1.0, description="gain per relevant retrieved document")
    b: float = Field(-1.0, description="gain per non-relevant retrieved document")
    c: float = Field(0.0, description="gain per relevant document not retrieved")
    d: float = Field(
        0.0, description="gain per non-relevant document not retrieved (needs num_docs)"
    )


class Utility(Measure):
    """Linear utility a·RR + b·(n−RR) + c·(R−RR) + d·(N+RR−n−R); averaged over queries, as trec_eval."""

    judged_rows_suffice = True

    name = "Utility"
    description = "linear set utility with coefficients a, b, c, d"
    Params = UtilityParams
    cutoff = "k"

    def needed(self, p: Any) -> tuple[str, ...]:
        return ("num_docs",) if p.d != 0 else ()

    def per_query(self, p: Any, c: Columns) -> str:
        rr, n, r = relevant_within(p, c), retrieved_within(p, c), num_rel(p, c)
        size = f"any_value({c.num_docs()})" if p.d != 0 else "0"
        return (
            f"{double(p.a)} * {rr} + {double(p.b)} * ({n} - {rr}) + {double(p.c)} * ({r} - {rr})"
            f" + {double(p.d)} * ({size} + {rr} - {n} - {r})"
        )

    def missing(self, p: Any, c: Columns) -> str:
        # Nothing relevant retrieved: each retrieved document counts as non-relevant.
        size = c.num_docs() if p.d != 0 else "0"
        n, r = c.retrieved(p.k), c.num_rel(c.level(p))
        return f"{double(p.b)} * {n} + {double(p.c)} * {r} + {double(p.d)} * ({size} - {n} - {r})"


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [SetP, SetR, SetF, SetRelativeP, SetAP, Utility]
