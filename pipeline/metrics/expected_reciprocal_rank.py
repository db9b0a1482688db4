"""Expected reciprocal rank (Chapelle, Metzler, Zhang and Grinspan, CIKM 2009).

A cascade user reads the ranking from the top and stops at rank i, satisfied, with probability
R(g_i) = (2^g_i - 1) / 2^max_grade, having read on past every earlier document:

    ERR@k = sum_{i <= min(k, n)} R(g_i) / i * prod_{j < i} (1 - R(g_j))

trec_eval has no ERR. `variant='standard'` is this definition under irpipe's settings (ordering,
`queries`, `missing_queries`); `variant='gdeval'` is gdeval.pl's (TREC Web track), which reports
only the queries whose qrels hold a grade above 0, those the run answers or, with its -c
(`queries: qrels`), all of them (`reported_queries`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..api import Columns, Measure, MeasureParams, Need, double, hookimpl
from .reported_queries import gdeval_empty, gdeval_missing, gdeval_needs, gdeval_reported


class ERRParams(MeasureParams):
    """A cutoff, the top of the grade scale R is taken over, and whose conventions apply."""

    k: int | None = Field(None, gt=0, description="cutoff: only the first k ranks count")
    max_grade: int = Field(
        4,
        gt=0,
        le=53,  # 2^g - 1 and 2^max_grade stay exact doubles, so every R is exact
        description="R(g) = (2^g - 1) / 2^max_grade; a higher grade counts as max_grade "
        "(gdeval.pl fixes it at 4)",
    )
    variant: Literal["standard", "gdeval"] = Field(
        "standard",
        description="standard: every query of the `queries` setting; gdeval: gdeval.pl's "
        "queries (those with a grade above 0; queries: qrels is gdeval.pl -c)",
    )


def satisfaction(grade: str, max_grade: int) -> str:
    """SQL R(grade): the chance that a document of this grade satisfies the user; 0 for grades
    <= 0, unjudged (-1) and negatively judged (-2) documents."""
    capped = f"least({grade}, {int(max_grade)})"
    return (
        f"(CASE WHEN {grade} > 0 THEN (pow(2, {capped}) - 1) / {double(2**max_grade)} ELSE 0 END)"
    )


def reach(max_grade: int) -> Need:
    """Window column: the chance that the cascade user reaches this row, prod (1 - R) over the
    rows above it.

    A running product is exp of a running sum of logarithms; R <= 1 - 2^-max_grade, so each
    ln(1 - R) exists. The `ranking` window ends at the current row: the row's own term is taken off.
    """
    log_read_on = f"ln(1 - {satisfaction('relv', max_grade)})"
    sql = f"exp(sum({log_read_on}) OVER ranking - {log_read_on})"
    return Need(f"err_reach_{int(max_grade)}", "window", sql)


class ERR(Measure[ERRParams]):
    """Expected reciprocal rank at cutoff k (the whole ranking without one)."""

    name = "ERR"
    description = "expected reciprocal rank: where a cascade user stops, weighted by 1/rank"
    Params = ERRParams
    cutoff = "k"
    # Unjudged, negatively judged and grade-0 rows have R = 0: they add nothing to the sum and
    # multiply the product by 1, so only judged rows and their ranks matter (0 if none).
    judged_rows_suffice = True

    def needs(self, p: ERRParams, c: Columns):
        return (reach(p.max_grade), *gdeval_needs(p, c))

    def per_query(self, p: ERRParams, c: Columns) -> str:
        term = f"{satisfaction(c.relv, p.max_grade)} * {reach(p.max_grade)} / {c.rank}"
        value = f"coalesce(sum({term}) FILTER (WHERE {c.within(p.k)}), {double(0)})"
        return gdeval_reported(p, c, value)

    def missing(self, p: ERRParams, c: Columns) -> str:
        return gdeval_missing(p, c)

    def empty(self, p: ERRParams, c: Columns) -> str:
        return gdeval_empty(p, c)


@hookimpl
def register_metrics() -> list[type[Measure]]:
    return [ERR]
